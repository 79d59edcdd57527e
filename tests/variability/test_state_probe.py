"""Probes write real files under a scratch directory, record whole rounds, stop on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iotune.errors import ConfigError, DataError
from iotune.store import Store
from iotune.variability import ProbeSettings, probe_once, run_probe
from iotune.variability.probe import (
    close_targets,
    create_targets,
    lustre_osts,
    parse_lfs_df,
    parse_osts,
)

DATA = Path(__file__).parent / "data"
CLI = """
import sys
from iotune.cli.main import IotuneGroup
from iotune.cli.variability_commands import COMMANDS
IotuneGroup(name="iotune", commands={str(c.name): c for c in COMMANDS})(sys.argv[1:])
"""


def test_probe_once_times_a_real_write_and_leaves_nothing(tmp_path: Path) -> None:
    seconds = probe_once(tmp_path, 64 * 1024)
    assert 0 < seconds < 10
    assert list(tmp_path.iterdir()) == []


def test_probe_once_rejects_a_missing_directory_and_bad_size(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^scratch: .*missing is not a directory"):
        probe_once(tmp_path / "missing")
    with pytest.raises(ConfigError, match=r"^size: 0 is not a positive number of bytes"):
        probe_once(tmp_path, 0)


def test_probe_once_write_failure_is_a_data_error(tmp_path: Path, monkeypatch) -> None:
    from iotune.variability import probe as probe_module

    def full(fd: int, data: bytes) -> float:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(probe_module, "_timed_write", full)
    with pytest.raises(DataError, match=r"^probe: writing 4096 bytes to .* failed: No space"):
        probe_once(tmp_path, 4096)
    assert list(tmp_path.iterdir()) == []


def test_rounds_are_recorded_and_probe_files_removed(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.jsonl")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    summary = run_probe(scratch, store, ProbeSettings(interval_s=0.01, rounds=3, size=4096,
                                                      queue="none"), fs_type="ext4")
    assert (summary.recorded, summary.dropped, summary.stopped_by) == (3, 0, "rounds")
    records = store.records()
    assert [r["round"] for r in records] == [0, 1, 2]
    for record in records:
        assert record["campaign"] == "probe" and record["provenance"] == "measured"
        (target,) = record["targets"]
        assert target["target"] == "scratch" and target["latency_s"] > 0
        assert "queue" not in record
    assert list(scratch.iterdir()) == []


def test_queue_snapshots_from_squeue_and_a_failing_squeue_does_not_stop(tmp_path: Path,
                                                                       fake_program) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    good = fake_program("squeue", f"cat {DATA / 'squeue_site_example.txt'}")
    store = Store(tmp_path / "a.jsonl")
    settings = ProbeSettings(interval_s=0.01, rounds=3, size=4096, queue="squeue",
                             queue_interval_s=3600)
    summary = run_probe(scratch, store, settings, squeue=good)
    queues = [r.get("queue") for r in store.records()]
    assert queues[0] is not None and queues[0]["running_jobs"] == 8
    assert summary.queue_snapshots == 1
    assert queues[1:] == [None, None]  # the next snapshot is due in an hour

    bad = fake_program("bad-squeue", "echo 'no controller' >&2; exit 1")
    messages: list[str] = []
    store = Store(tmp_path / "b.jsonl")
    settings = ProbeSettings(interval_s=0.01, rounds=2, size=4096, queue="auto",
                             queue_interval_s=0.01)
    summary = run_probe(scratch, store, settings, squeue=bad, progress=messages.append)
    assert summary.recorded == 2 and len(summary.warnings) == 1
    assert any("warning: queue:" in m and "no controller" in m for m in messages)


def test_sigterm_stops_cleanly_with_whole_records(tmp_path: Path, subprocess_env) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    store = tmp_path / "store.jsonl"
    command = [sys.executable, "-c", CLI, "probe", "--store", str(store), "--scratch",
               str(scratch), "--interval", "0.05s", "--duration", "none", "--size", "64KiB",
               "--queue", "none", "--format", "json"]
    proc = subprocess.Popen(command, env=subprocess_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (not store.exists()
                                               or store.read_text().count("\n") < 3):
            time.sleep(0.05)
        assert store.exists(), "the probe wrote no record within 20 s"
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        assert time.monotonic() - sent < 3
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["stopped_by"] == "SIGTERM" and summary["rounds_dropped"] in (0, 1)
    text = store.read_text()
    assert text.endswith("\n")
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) == summary["rounds_recorded"] >= 3
    assert [r["round"] for r in records] == list(range(len(records)))
    assert all(len(r["targets"]) == 1 and r["targets"][0]["latency_s"] > 0 for r in records)
    assert list(scratch.iterdir()) == []


def test_lustre_targets_are_placed_one_per_ost(tmp_path: Path, fake_program) -> None:
    log = tmp_path / "lfs.log"
    lfs = fake_program("lfs", f'echo "$@" >> {log}; touch "$6"')
    directory = tmp_path / "probe"
    directory.mkdir()
    targets = create_targets(directory, [0, 3, 17], lfs)
    assert [t.name for t in targets] == ["OST0000", "OST0003", "OST0011"]
    calls = log.read_text().splitlines()
    assert calls == [f"setstripe -i {ost} -c 1 {directory / name}"
                     for ost, name in ((0, "OST0000"), (3, "OST0003"), (17, "OST0011"))]
    close_targets(targets)
    assert list(directory.iterdir()) == []


def test_refused_ost_closes_what_was_opened(tmp_path: Path, fake_program) -> None:
    lfs = fake_program("lfs",
                      'if [ "$3" = 9 ]; then echo "lfs setstripe: invalid OST index" >&2; '
                      'exit 22; fi; touch "$6"')
    directory = tmp_path / "probe"
    directory.mkdir()
    with pytest.raises(ConfigError, match=r"^--osts: 'lfs setstripe -i 9 -c 1' failed: lfs "):
        create_targets(directory, [1, 9], lfs)
    assert list(directory.iterdir()) == []


def test_lfs_df_and_ost_lists(tmp_path: Path, fake_program) -> None:
    assert parse_lfs_df((DATA / "lfs_df_example.txt").read_text()) == [0, 1, 3, 4]
    assert parse_osts("0-3,7, 5") == [0, 1, 2, 3, 5, 7]
    with pytest.raises(ConfigError, match=r"^--osts: 'x' is not an OST index"):
        parse_osts("1,x")
    missing = str(tmp_path / "no-lfs")
    assert lustre_osts(tmp_path, 4, lfs=missing) == [0, 1, 2, 3]
    with pytest.raises(ConfigError, match=r"^system.ost_count: not set and .*no-lfs not found"):
        lustre_osts(tmp_path, None, lfs=missing)
    lfs = fake_program("lfs", f"cat {DATA / 'lfs_df_example.txt'}")
    assert lustre_osts(tmp_path, 156, lfs=lfs) == [0, 1, 3, 4]


def test_signal_in_the_middle_of_a_round_drops_that_round_whole(tmp_path: Path, monkeypatch,
                                                                fake_program) -> None:
    from iotune.variability import probe as probe_module

    lfs = fake_program("lfs", 'touch "$6"')
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    real_write = probe_module._timed_write
    writes = []

    def write_then_signal(fd: int, data: bytes) -> float:
        writes.append(fd)
        if len(writes) == 5:  # the second target of the second round
            os.kill(os.getpid(), signal.SIGTERM)
        return real_write(fd, data)

    monkeypatch.setattr(probe_module, "_timed_write", write_then_signal)
    store = Store(tmp_path / "s.jsonl")
    summary = run_probe(scratch, store, ProbeSettings(interval_s=0.01, size=4096, queue="none"),
                        osts=[0, 1, 2], fs_type="lustre", lfs=lfs)
    assert (summary.recorded, summary.dropped, summary.stopped_by) == (1, 1, "SIGTERM")
    assert len(writes) == 5
    (record,) = store.records()
    assert [t["target"] for t in record["targets"]] == ["OST0000", "OST0001", "OST0002"]
    assert list(scratch.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_large_writes_every_few_rounds_sizes_in_turn(tmp_path: Path, monkeypatch,
                                                     fake_program) -> None:
    """Wan et al.'s ground truth: a large write per target after the small ones, every
    --large-every rounds, sizes in turn, each file truncated back after it."""
    from iotune.variability import probe as probe_module

    lfs = fake_program("lfs", 'touch "$6"')
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    sizes: list[tuple[int, int]] = []
    real_write = probe_module._timed_write

    def write(fd: int, data: bytes) -> float:
        seconds = real_write(fd, data)
        sizes.append((len(data), os.fstat(fd).st_size))
        return seconds

    monkeypatch.setattr(probe_module, "_timed_write", write)
    settings = ProbeSettings(interval_s=0.01, rounds=5, size=4096, queue="none",
                             large_sizes=(2**20, 2**21), large_every=2)
    store = Store(tmp_path / "s.jsonl")
    summary = run_probe(scratch, store, settings, osts=[0, 1], fs_type="lustre", lfs=lfs)
    assert summary.recorded == 5
    records = store.records()
    assert [r.get("large_size_bytes") for r in records] == [2**20, None, 2**21, None, 2**20]
    for record in records:
        for target in record["targets"]:
            assert target["latency_s"] > 0
            assert ("large_s" in target) == ("large_size_bytes" in record)
            if "large_s" in target:
                assert target["large_s"] > 0
    # each large write filled its file; the next small write found it truncated
    assert [n for n, _ in sizes].count(4096) == 10 and len(sizes) == 16
    after_large = [sizes[i + 1] for i, (n, _) in enumerate(sizes[:-1]) if n > 4096
                   and sizes[i + 1][0] == 4096]
    assert after_large and all(size == 4096 for _, size in after_large)
    assert list(scratch.iterdir()) == []
    with pytest.raises(ConfigError, match=r"^--large: 0 is not a positive number of bytes"):
        ProbeSettings(large_sizes=(0,))
    with pytest.raises(ConfigError, match=r"^--large-every: 0 is not a positive integer"):
        ProbeSettings(large_sizes=(2**20,), large_every=0)
