"""``iotune job``: choices recorded before a job runs, one finish per job, jobs at once,
killed jobs, Slurm ids, and the one-line errors of bad input."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest

from iotune.production.jobs import (
    DEFAULT,
    Campaign,
    Job,
    config_name,
    finish_job,
    job_id_from_env,
    read_campaign,
    regret_paid,
    start_job,
    tuned_candidates,
)
from iotune.production.rule import Prior, Run
from iotune.store import Store
from iotune.tuned import check_tuned
from tests.cli_result import error_line, invoke

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def tuned(tmp_path: Path) -> Path:
    path = tmp_path / "tuned.yaml"
    path.write_text("settings:\n  cb_buffer_size: 4MiB\n  romio_cb_write: disable\n")
    return path


def _records(store: Path) -> list[dict]:
    return Store(store).records()


def test_start_prints_the_jobs_lines_and_records_the_choice_first(tmp_path: Path,
                                                                 tuned: Path) -> None:
    store = tmp_path / "prod.jsonl"
    for i in range(3):
        out = invoke("job", "start", "--store", str(store), "--tag", "app", "--job-id",
                     f"j{i}", "--candidate", str(tuned), "--format", "romio")
        assert out.exit_code == 0, out.output
        assert "default (baseline" in out.output
        assert f"export IOTUNE_JOB_ID=j{i}" in out.output
        assert invoke("job", "finish", "--store", str(store), "--tag", "app", "--job-id",
                      f"j{i}", "--seconds", "10").exit_code == 0
    out = invoke("job", "start", "--store", str(store), "--tag", "app", "--job-id", "j3",
                 "--candidate", str(tuned), "--format", "romio")
    assert "challenger" in out.output
    assert "cb_buffer_size 4194304" in out.output and "romio_cb_write disable" in out.output
    last = _records(store)[-1]
    assert (last["event"], last["job_id"], last["role"]) == ("start", "j3", "challenger")
    assert last["settings"] == {"cb_buffer_size": 4194304, "romio_cb_write": "disable"}
    assert last["provenance"] == "production"


def test_a_much_slower_candidate_is_not_chosen_again_and_status_says_so(
        tmp_path: Path, tuned: Path) -> None:
    store = Store(tmp_path / "prod.jsonl")
    candidate = [{"romio_cb_write": "disable"}]
    chosen = []
    for i in range(12):
        choice, settings = start_job(store, "app", f"j{i}", candidate)
        chosen.append(choice.config)
        finish_job(store, "app", f"j{i}", 30.0 if settings else 10.0 + 0.2 * (i % 3))
    assert chosen.count(config_name(candidate[0])) == 1
    out = invoke("job", "status", "--store", str(store.path), "--tag", "app")
    assert "12 jobs" in out.output and "held back" in out.output
    assert "nothing better than the default; the default stays" in out.output
    doc = json.loads(invoke("job", "status", "--store", str(store.path), "--tag", "app",
                            "--format", "json").output)
    assert doc["recommendation"] == DEFAULT and doc["settled"] is True
    assert doc["regret_s"] == pytest.approx(30.0 - 10.2, abs=0.2)


def test_a_clear_gain_becomes_the_recommendation(tmp_path: Path) -> None:
    store = Store(tmp_path / "prod.jsonl")
    candidate = [{"cb_nodes": 2}]
    for i in range(14):
        _, settings = start_job(store, "app", f"j{i}", candidate)
        finish_job(store, "app", f"j{i}", (5.0 if settings else 10.0) * (1 + 0.02 * (i % 3)))
    doc = json.loads(invoke("job", "status", "--store", str(store.path), "--tag", "app",
                            "--format", "json").output)
    assert doc["recommended_settings"] == {"cb_nodes": 2}
    assert doc["gain"] == pytest.approx(2.0, rel=0.1)
    assert doc["provenance"] == "14 production jobs"


def _start(args: tuple[str, int]) -> str:
    store, i = args
    choice, _ = start_job(Store(store), "app", f"j{i}", [{"cb_nodes": 2}, {"cb_nodes": 4}])
    return choice.config


def test_jobs_starting_at_once_each_get_one_record_and_one_first_trial(
        tmp_path: Path) -> None:
    store = tmp_path / "prod.jsonl"
    for i in range(3):
        start_job(Store(store), "app", f"b{i}", [])
        finish_job(Store(store), "app", f"b{i}", 10.0)
    with ProcessPoolExecutor(4) as pool:
        picks = list(pool.map(_start, [(str(store), i) for i in range(8)]))
    starts = [r for r in _records(store) if r["event"] == "start"]
    assert len(starts) == 11 and len({r["job_id"] for r in starts}) == 11
    # each candidate's first trial goes to one job; the others wait for its result
    assert picks.count(config_name({"cb_nodes": 2})) == 1
    assert picks.count(config_name({"cb_nodes": 4})) == 1


def test_a_job_killed_mid_write_leaves_no_damaged_record(tmp_path: Path) -> None:
    store = Store(tmp_path / "prod.jsonl")
    start_job(store, "app", "j0", [])
    finish_job(store, "app", "j0", 10.0)
    start_job(store, "app", "j1", [])
    with open(store.path, "ab") as journal:  # what kill -9 in the middle of a write leaves
        journal.write(b'{"kind": "production_job", "event": "fin')
    campaign = read_campaign(store, "app")
    assert [r.seconds for r in campaign.runs] == [10.0, None]
    assert campaign.runs[1].pending  # j1 started, never finished: running, not a time
    finish_job(store, "app", "j1", 11.0)  # the next append seals the torn line
    assert [r.seconds for r in read_campaign(store, "app").runs] == [10.0, 11.0]


def test_a_job_killed_with_sigkill_before_finishing_is_marked_running(tmp_path: Path) -> None:
    store = tmp_path / "prod.jsonl"
    script = (f"eval \"$({sys.executable} -m iotune job start --store {store} --tag app "
              "--job-id k1)\"; sleep 30")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(["bash", "-c", script], env=env, start_new_session=True)
    for _ in range(200):
        if store.exists() and Store(store).records():
            break
        proc.poll()
        subprocess.run(["sleep", "0.05"], check=True)
    os.killpg(proc.pid, 9)
    proc.wait()
    runs = read_campaign(Store(store), "app").runs
    assert len(runs) == 1 and runs[0].pending and runs[0].seconds is None
    out = invoke("job", "status", "--store", str(store), "--tag", "app")
    assert "1 running" in out.output


def test_the_slurm_job_id_and_array_task_name_the_job() -> None:
    assert job_id_from_env({"SLURM_JOB_ID": "81"}) == "81"
    assert job_id_from_env({"SLURM_JOB_ID": "82", "SLURM_ARRAY_JOB_ID": "80",
                            "SLURM_ARRAY_TASK_ID": "2"}) == "80_2"
    assert job_id_from_env({}) is None


@pytest.mark.parametrize(("args", "message"), [
    (["start", "--tag", "a b", "--job-id", "1"], "--tag: 'a b' is not 1-128 letters"),
    (["start", "--tag", "app"], "--job-id: not given and not in a Slurm job"),
    (["finish", "--tag", "app", "--job-id", "9", "--seconds", "1"],
     "--job-id: 9 was not started in campaign app"),
    (["finish", "--tag", "app", "--job-id", "1", "--seconds", "-2"],
     "Invalid value for '--seconds': -2.0 is not in the range 0<x<=31536000"),
    (["finish", "--tag", "app", "--job-id", "1", "--seconds", "nan"],
     "Invalid value for '--seconds': 'nan' is not a finite number"),
    (["finish", "--tag", "app", "--job-id", "1"], "--seconds: give the I/O seconds or"),
    (["start", "--tag", "app", "--job-id", "1"], "--job-id: 1 was already started"),
    (["status", "--tag", "other"], "--tag: no production job of campaign other"),
])
def test_bad_input_is_one_line_naming_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              args: list[str], message: str) -> None:
    for name in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"):
        monkeypatch.delenv(name, raising=False)
    store = tmp_path / "prod.jsonl"
    start_job(Store(store), "app", "1", [])
    before = store.read_bytes()
    result = invoke("job", args[0], "--store", str(store), *args[1:])
    assert result.exit_code != 0
    assert error_line(result).startswith(message)
    assert store.read_bytes() == before


def test_a_candidate_with_per_file_settings_alone_is_not_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tuned on the checkpoint only: the other files keep the default, yet the candidate is
    # a configuration of its own, and its job gets the checkpoint's section.
    ckpt = tmp_path / "ckpt.yaml"
    ckpt.write_text("settings: {}\nfiles:\n  '*/ckpt_*': {cb_buffer_size: 2MiB}\n")
    library = tmp_path / "libiotune_preload.so"
    library.write_text("")  # the lines only check that it exists
    monkeypatch.setenv("IOTUNE_PRELOAD_LIB", str(library))
    store = tmp_path / "prod.jsonl"
    outputs = []
    for i in range(4):
        out = invoke("job", "start", "--store", str(store), "--tag", "app", "--job-id",
                     f"j{i}", "--candidate", str(ckpt))
        assert out.exit_code == 0, out.output
        outputs.append(out.output)
        assert invoke("job", "finish", "--store", str(store), "--tag", "app", "--job-id",
                      f"j{i}", "--seconds", "10").exit_code == 0
    assert "challenger" in outputs[3]
    assert "'file:*/ckpt_*' hint:cb_buffer_size=2097152 >" in outputs[3]
    started = [r for r in _records(store) if r["event"] == "start"]
    # recorded as an ordered list of [glob, settings] (the journal sorts a mapping's keys)
    assert started[3]["settings"] == {"files": [["*/ckpt_*", {"cb_buffer_size": 2097152}]]}
    assert started[3]["config"] != DEFAULT


def test_a_tune_that_kept_the_default_hands_its_best_found_and_runner_up_over(
        tmp_path: Path) -> None:  # and its estimate of the best found, as a prior
    # The tune found 1.8x but could not confirm it: the production jobs are where it gets
    # confirmed, so its best found gets the first trial and its runner-up the second.
    kept = tmp_path / "kept.yaml"
    kept.write_text(
        "recommendation: default\nsettings: {}\n"
        "best_found: {settings: {cb_buffer_size: 4MiB}, seconds: 1.0}\n"
        "best_found_speedup: {estimate: 1.8, interval: [0.9, 3.1]}\n"
        "runner_up: {settings: {romio_cb_write: disable}, seconds: 1.2}\n")
    nothing = tmp_path / "nothing.yaml"
    nothing.write_text("recommendation: default\nsettings: {}\n")
    store = tmp_path / "prod.jsonl"
    trials = []
    for i in range(5):
        out = invoke("job", "start", "--store", str(store), "--tag", "app", "--job-id",
                     f"j{i}", "--candidate", str(kept), "--candidate", str(nothing),
                     "--format", "romio")
        assert out.exit_code == 0, out.output
        assert "nothing.yaml: no configuration to try" in out.stderr
        trials.append(_records(store)[-1])
        assert invoke("job", "finish", "--store", str(store), "--tag", "app", "--job-id",
                      f"j{i}", "--seconds", "10").exit_code == 0
    assert [t["role"] for t in trials] == ["baseline"] * 3 + ["challenger"] * 2
    assert trials[3]["settings"] == {"cb_buffer_size": 4194304}
    assert trials[4]["settings"] == {"romio_cb_write": "disable"}
    best, runner_up = config_name({"cb_buffer_size": 4194304}), config_name(
        {"romio_cb_write": "disable"})
    assert trials[4]["candidates"] == [best, runner_up]
    assert set(trials[4]["priors"]) == {best}  # the runner-up has no estimate in the file
    assert trials[4]["priors"][best]["log_ratio"] == pytest.approx(-math.log(1.8), abs=1e-6)
    campaign = read_campaign(Store(store), "app")
    assert set(campaign.priors) == {best}
    shown = invoke("job", "status", "--store", str(store), "--tag", "app")
    assert f"{best}: the tune's estimate, 1.80x (log sd 0.42)" in shown.output
    rows = json.loads(invoke("job", "status", "--store", str(store), "--tag", "app",
                             "--format", "json").output)["configurations"]
    assert {r["config"]: r["tune_estimate"] for r in rows}[best] == {"speedup": 1.8,
                                                                     "log_sd": 0.4214}
    assert campaign.priors[best].sd == pytest.approx(math.log(1.8 / 0.9) / 1.6448536, abs=1e-6)


def test_a_tuned_file_offers_each_configuration_once_its_best_found_with_the_estimate(
        monkeypatch):
    import iotune.tuned

    doc = check_tuned({"settings": {"cb_nodes": 2},
                       "best_found": {"settings": {"cb_nodes": 4}},
                       "best_found_speedup": {"estimate": 1.5, "interval": [1.2, 1.9]},
                       "runner_up": {"settings": {"cb_nodes": 2}}})
    checked = []
    alternative = iotune.tuned.measured_alternative
    monkeypatch.setattr(iotune.tuned, "measured_alternative",
                        lambda d, key: checked.append(key) or alternative(d, key))
    assert tuned_candidates(doc) == [({"cb_nodes": 2}, None),
                                     ({"cb_nodes": 4}, Prior.from_speedup(1.5, 1.2, 1.9))]
    assert checked == ["best_found", "runner_up"]  # each alternative checked once


def _campaign_of(finished: list[tuple[str, str, float | None]]) -> Campaign:
    """A campaign whose jobs finished in the order given: (config, role, seconds or None
    for a failed job)."""
    started = datetime(2026, 1, 1, tzinfo=UTC)
    jobs = [Job(f"j{i}", config, role, "ok" if seconds else "failed", seconds, started,
                3600.0, "--time-limit", i)
            for i, (config, role, seconds) in enumerate(finished)]
    return Campaign("app", [Run(j.config, j.role, j.seconds) for j in jobs],
                    [j.job_id for j in jobs], {}, {j.job_id for j in jobs}, [], jobs=jobs)


def test_regret_only_grows_each_job_priced_against_the_defaults_median_when_it_ended() -> None:
    order = [("c1", "challenger", 12.0),  # before any default: priced at the first one's
             (DEFAULT, "baseline", 10.0), (DEFAULT, "baseline", 11.0),
             (DEFAULT, "baseline", 12.0),
             ("c1", "challenger", 5.0),  # faster than the default: adds 0, not -6
             ("c1", "challenger", 11.5),  # 0.5 above the default's median of 11
             ("c1", "challenger", None),  # failed: no time, adds nothing
             (DEFAULT, "default", 20.0), (DEFAULT, "default", 20.0)]
    paid = [regret_paid(_campaign_of(order[:n])) for n in range(len(order) + 1)]
    assert paid == pytest.approx([0, 0, 2.0, 2.0, 2.0, 2.0, 2.5, 2.5, 2.5, 2.5])
    # Against the default's median at the end (12 s) the same jobs would have "saved"
    # 7.5 s: the slow default runs at the end must not undo what exploring cost.
    assert sum(t - 12.0 for c, r, t in order if r == "challenger" and t) == -7.5


def test_status_counts_failed_and_lost_jobs_and_names_each_configuration(
        tmp_path: Path, tuned: Path) -> None:
    store = tmp_path / "prod.jsonl"
    for i in range(5):  # a failed baseline job, three good ones, the candidate's trial
        out = invoke("job", "start", "--store", str(store), "--tag", "app", "--job-id",
                     f"j{i}", "--candidate", str(tuned))
        assert out.exit_code == 0, out.output
        assert ("challenger" in out.stdout) == (i == 4)
        finished = (["--failed"] if i == 1 else ["--seconds", "8" if i == 4 else "10"])
        assert invoke("job", "finish", "--store", str(store), "--tag", "app", "--job-id",
                      f"j{i}", *finished).exit_code == 0
    doc = json.loads(invoke("job", "status", "--store", str(store), "--tag", "app",
                            "--format", "json").stdout)
    assert (doc["jobs"], doc["ok"], doc["failed"], doc["running"], doc["lost"]) == (5, 4, 1,
                                                                                 0, 0)
    rows = {r["config"]: r for r in doc["configurations"]}
    assert sum(r["runs"] + r["running"] + r["failed"] + r["lost"] for r in rows.values()) == 5
    assert rows[DEFAULT]["failed"] == 1 and rows[DEFAULT]["median_s"] == pytest.approx(10.0)
    name = config_name({"cb_buffer_size": 4194304, "romio_cb_write": "disable"})
    assert rows[name]["candidate"] == f"{tuned} (recommended)"
    assert rows[name]["median_vs_default"]["estimate"] == pytest.approx(0.8)
    assert "mean" not in json.dumps(doc)
    table = invoke("job", "status", "--store", str(store), "--tag", "app").stdout
    assert "campaign app: 5 jobs: 4 ok, 1 failed, 0 running, 0 lost" in table
    assert " median s " in table and "mean" not in table
    assert (f"{name} from {tuned} (recommended): cb_buffer_size=4MiB romio_cb_write=disable"
            in table)
