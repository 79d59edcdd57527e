"""A campaign stopped by a signal loses nothing and records nothing false.

Real ``iotune train`` processes run a user's program (``slow_app.py``) through mpiexec;
the tests signal the driver or the program at a known point (the program notes its pid when
it starts) and check the store, the exit status, the message and the processes left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from slow_program import write_slow_config

from iotune.config import load_config
from iotune.execution.interrupt import REQUEUE_EXIT, ended_by_signal
from iotune.store import Store
from iotune.store.lock import process_exists
from iotune.train import plan_campaign

REPETITIONS = 3  # x 2 configurations = 6 planned runs


def write_config(tmp_path: Path, seconds: float) -> Path:
    return write_slow_config(tmp_path, seconds, REPETITIONS)


def start_train(config: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "iotune", "train", "-c", str(config),
                             "--no-color", *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=config.parent)


def train(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iotune", "train", "-c", str(config),
                           "--no-color", *extra], capture_output=True, text=True,
                          cwd=config.parent, timeout=300)


def started_programs(tmp_path: Path) -> list[int]:
    return sorted(int(p.name) for p in (tmp_path / "pids").iterdir() if p.name.isdigit())


def wait_for_program(tmp_path: Path, count: int, proc: subprocess.Popen[str]) -> int:
    """The pid of the ``count``-th program run, once it has started."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pids = [int(p.name) for p in sorted((tmp_path / "pids").iterdir(),
                                            key=lambda p: p.stat().st_mtime_ns)
                if p.name.isdigit()]
        if len(pids) >= count:
            return pids[count - 1]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    pytest.fail(f"run {count} never started")


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not process_exists(pid):
            return True
        time.sleep(0.05)
    return False


def planned(config: Path) -> set[tuple[str, int]]:
    return {t.ident for p in plan_campaign(load_config(config)) for t in p.tasks}


def test_a_run_ended_by_an_outside_signal_is_not_a_failure():
    assert ended_by_signal(-signal.SIGKILL) == signal.SIGKILL
    assert ended_by_signal(-signal.SIGTERM) == signal.SIGTERM
    assert ended_by_signal(128 + signal.SIGTERM) == signal.SIGTERM
    assert ended_by_signal(9, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
                              "=   KILLED BY SIGNAL: 9 (Killed)") == signal.SIGKILL
    assert ended_by_signal(137, "srun: error: host: task 0: Killed") == signal.SIGKILL
    assert ended_by_signal(9) == signal.SIGKILL  # mpiexec (Hydra): a rank's signal as status
    # the program's own crash, or its own exit status, stays a failure of the configuration
    assert ended_by_signal(-signal.SIGSEGV) is None
    assert ended_by_signal(139, "KILLED BY SIGNAL: 11 (Segmentation fault)") is None
    assert ended_by_signal(1, "error: cannot open file") is None
    assert ended_by_signal(3) is None


@pytest.mark.mpi
def test_sigterm_stops_train_at_once_records_nothing_false_and_a_rerun_completes(tmp_path):
    config = write_config(tmp_path, seconds=30)  # a run that would outlast the test
    proc = start_train(config)
    in_flight = wait_for_program(tmp_path, 1, proc)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)

    assert proc.returncode == REQUEUE_EXIT, stderr
    message = stderr.strip().splitlines()[-1]
    assert message.startswith("iotune: train stopped by SIGTERM: 0 run(s) recorded this time, "
                              "6 to go, the run in flight discarded; resume with the same "
                              "command"), stderr
    assert "Traceback" not in stderr
    assert gone_within(in_flight, 10), "the run in flight was left running"
    assert not Store(tmp_path / "store.jsonl").exists() or \
        Store(tmp_path / "store.jsonl").records() == []
    assert list((tmp_path / "scratch").iterdir()) == []  # its run directory removed

    config = write_config(tmp_path, seconds=0.1)  # the same campaign, quicker runs
    resumed = train(config)
    assert resumed.returncode == 0, resumed.stderr
    records = Store(tmp_path / "store.jsonl").records()
    assert [(r["config_key"], r["rep"]) for r in records].__len__() == len(planned(config))
    assert {(r["config_key"], r["rep"]) for r in records} == planned(config)
    assert records and all(r["status"] == "ok" for r in records)


@pytest.mark.mpi
def test_a_run_killed_from_outside_is_recorded_interrupted_and_measured_again(tmp_path):
    config = write_config(tmp_path, seconds=3)
    proc = start_train(config)
    victim = wait_for_program(tmp_path, 1, proc)
    os.kill(victim, signal.SIGKILL)  # e.g. an operator's kill; the driver itself goes on
    write_config(tmp_path, seconds=0.1)  # the runs still to come are quick
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "killed from outside iotune and are measured again" in stderr

    records = Store(tmp_path / "store.jsonl").records()
    interrupted = [r for r in records if r["status"] == "interrupted"]
    assert len(interrupted) == 1 and "ended by SIGKILL" in interrupted[0]["error"]
    assert sum(r["status"] == "ok" for r in records) == len(planned(config)) - 1
    assert not [r for r in records if r["status"] == "failed"]

    resumed = train(config)
    assert resumed.returncode == 0, resumed.stderr
    records = Store(tmp_path / "store.jsonl").records()
    assert {(r["config_key"], r["rep"]) for r in records if r["status"] == "ok"} \
        == planned(config)
    assert len(records) == len(planned(config)) + 1  # the interrupted record stays, as history


@pytest.mark.mpi
def test_a_killed_driver_takes_its_run_with_it(tmp_path):
    config = write_config(tmp_path, seconds=30)
    proc = start_train(config)
    in_flight = wait_for_program(tmp_path, 1, proc)
    proc.kill()
    proc.communicate(timeout=60)
    assert gone_within(in_flight, 20), "the run outlived its driver"


@pytest.mark.mpi
def test_failed_runs_are_answers_until_retry_failed(tmp_path):
    config = write_config(tmp_path, seconds=0.05)
    (tmp_path / "pids" / "fail").write_text("")
    first = train(config)
    assert first.returncode == 0, first.stderr
    assert "measure them again with --retry-failed" in first.stderr
    store = Store(tmp_path / "store.jsonl")
    assert [r["status"] for r in store.records()] == ["failed"] * len(planned(config))

    (tmp_path / "pids" / "fail").unlink()
    again = train(config)
    assert "0 run(s), 6 already in the store" in again.stderr
    retried = train(config, "--retry-failed")
    assert retried.returncode == 0, retried.stderr
    records = store.records()
    assert {(r["config_key"], r["rep"]) for r in records if r["status"] == "ok"} \
        == planned(config)
    assert len(records) == 2 * len(planned(config))


def start_tune(config: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "iotune", "tune", "-c", str(config),
                             "--cores", "1", "--strategy", "exhaustive", "--no-color", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=config.parent)


@pytest.mark.mpi
def test_sigterm_stops_tune_and_a_rerun_reuses_what_it_measured(tmp_path):
    config = write_config(tmp_path, seconds=0.05)
    proc = start_tune(config)
    wait_for_program(tmp_path, 2, proc)  # the default is measured; the second run is under way
    (tmp_path / "pids" / "seconds").write_text("30")
    in_flight = wait_for_program(tmp_path, 3, proc)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == REQUEUE_EXIT, stderr
    assert "iotune: tune stopped by SIGTERM" in stderr and "rerun the same command" in stderr
    assert gone_within(in_flight, 10)
    before = Store(tmp_path / "store.jsonl").records()
    assert len(before) == 2 and all(r["status"] == "ok" for r in before)

    (tmp_path / "pids" / "seconds").write_text("0.05")
    rerun = start_tune(config)
    stdout, stderr = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, stderr
    assert ", 2 reused," in stdout  # the two runs of the stopped search count
    after = Store(tmp_path / "store.jsonl").records()
    assert after[:2] == before
    assert all(r["status"] == "ok" for r in after)


@pytest.mark.mpi
def test_tune_reuses_a_recorded_failure_unless_retry_failed(tmp_path):
    config = write_config(tmp_path, seconds=0.05)
    (tmp_path / "pids" / "fail").write_text("")
    first = start_tune(config)
    _, stderr = first.communicate(timeout=120)
    failed = Store(tmp_path / "store.jsonl").records()
    assert failed and all(r["status"] == "failed" for r in failed)
    # every configuration failed: an error, not a tuned file recommending something
    assert first.returncode == 3, stderr
    assert "configurations run at 1 rank failed (first error: " in stderr
    assert "no tuned file written" in stderr and "Traceback" not in stderr

    (tmp_path / "pids" / "fail").unlink()
    reused = start_tune(config)
    reused.communicate(timeout=120)
    assert len(Store(tmp_path / "store.jsonl").records()) == len(failed)  # nothing new run

    retried = start_tune(config, "--retry-failed")
    _, stderr = retried.communicate(timeout=120)
    assert retried.returncode == 0, stderr
    records = Store(tmp_path / "store.jsonl").records()[len(failed):]
    assert records and all(r["status"] == "ok" for r in records)
    assert {r["config_key"] for r in records} == {r["config_key"] for r in failed}
