"""A settled campaign: its recommendation written as a tuned file that ``iotune apply``
reads (provenance ``N production jobs``), nothing written before it settles, the default
kept and said; production jobs labelled as such in ``results`` and refused by ``report``;
the lines ``job start`` prints run the launch with the settings, and the default's too."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import yaml

from iotune.production.jobs import config_name, finish_job, start_job
from iotune.store import Store
from tests.cli_result import invoke

GAIN = {"cb_nodes": 2}
SLOW = {"romio_cb_write": "disable"}


def _jobs(store: Store, candidate: dict, count: int, fast: float, tuned: Path | None = None,
          start: int = 0) -> list[str]:
    """``count`` jobs: the candidate's I/O takes ``fast`` x the default's 10 s (2% spread);
    with ``tuned``, each finish goes through the CLI with --tuned. Their roles."""
    roles = []
    for i in range(start, start + count):
        choice, settings = start_job(store, "app", f"j{i}", [candidate])
        roles.append(choice.role)
        seconds = (fast if settings else 1.0) * 10.0 * (1 + 0.02 * (i % 3))
        if tuned is None:
            finish_job(store, "app", f"j{i}", seconds)
            continue
        out = invoke("job", "finish", "--store", str(store.path), "--tag", "app", "--job-id",
                     f"j{i}", "--seconds", str(seconds), "--tuned", str(tuned))
        assert out.exit_code == 0, out.output
    return roles


def test_a_settled_gain_is_written_to_the_tuned_file_the_job_line_reads(tmp_path: Path):
    store, tuned = Store(tmp_path / "prod.jsonl"), tmp_path / "tuned.yaml"
    roles = _jobs(store, GAIN, 5, 0.5, tuned)
    assert not tuned.exists()  # not settled yet: nothing is written
    roles += _jobs(store, GAIN, 9, 0.5, tuned, start=5)
    first = roles.index("best")
    assert roles[first:] == ["best"] * (14 - first)  # exploration stopped
    doc = yaml.safe_load(tuned.read_text())
    assert doc["provenance"] == "14 production jobs" and doc["recommendation"] == "tuned"
    assert doc["settings"] == GAIN and doc["speedup"] > 1.8
    assert "beats the default with probability >= 99% over 14 production jobs" in doc["reason"]
    applied = invoke("apply", str(tuned), "--format", "romio")
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.startswith("# iotune tuned settings for command (14 production jobs)")
    assert "'cb_nodes 2'" in applied.stdout
    # The 20th job is the drift check: it re-runs the default; the file keeps the gain.
    roles = _jobs(store, GAIN, 6, 0.5, tuned, start=14)
    assert roles[5] == "drift" and yaml.safe_load(tuned.read_text())["settings"] == GAIN
    status = invoke("job", "status", "--store", str(store.path), "--tag", "app")
    assert "exploration stopped, every 20th job re-runs the default as a drift check" \
        in status.output


def test_nothing_better_writes_the_default_and_says_so(tmp_path: Path):
    store, tuned = Store(tmp_path / "prod.jsonl"), tmp_path / "tuned.yaml"
    _jobs(store, SLOW, 12, 3.0)
    out = invoke("job", "status", "--store", str(store.path), "--tag", "app", "--tuned",
                 str(tuned))
    assert out.exit_code == 0, out.output
    assert "settled: nothing better than the default; the default stays (12 production jobs" \
        in out.stdout
    assert f"iotune: wrote {tuned}: nothing better, the default stays (12 production jobs)" \
        in out.stderr
    doc = yaml.safe_load(tuned.read_text())
    assert (doc["recommendation"], doc["settings"]) == ("default", {})
    applied = invoke("apply", str(tuned))
    assert "the default configuration is recommended (campaign app: no candidate is " \
           "plausibly better than the default after 12 production jobs)" in applied.stderr


def test_status_with_tuned_shows_the_state_it_wrote_from(tmp_path: Path):
    """``--tuned`` changes only the line on stderr: the table is the campaign's, read once
    under the lock the file is written with; a journal that is not there is refused before
    anything is created."""
    store, tuned = Store(tmp_path / "prod.jsonl"), tmp_path / "tuned.yaml"
    _jobs(store, GAIN, 14, 0.5)
    args = ("job", "status", "--store", str(store.path), "--tag", "app")
    plain, written = invoke(*args), invoke(*args, "--tuned", str(tuned))
    assert written.exit_code == 0, written.output
    assert written.stdout == plain.stdout
    assert written.stderr.startswith(f"iotune: wrote {tuned}: ") and tuned.exists()
    missing = tmp_path / "none" / "prod.jsonl"
    out = invoke("job", "status", "--store", str(missing), "--tag", "app", "--tuned",
                 str(tuned))
    assert out.exit_code != 0 and "no production job of campaign app" in out.output
    assert not missing.parent.exists()


def test_a_file_that_is_not_a_tuned_file_is_refused_before_the_job_is_recorded(tmp_path):
    store = Store(tmp_path / "prod.jsonl")
    start_job(store, "app", "j0", [GAIN])
    notes = tmp_path / "notes.yaml"
    notes.write_text("a: 1\n")
    before = store.path.read_bytes()
    out = invoke("job", "finish", "--store", str(store.path), "--tag", "app", "--job-id",
                 "j0", "--seconds", "3", "--tuned", str(notes))
    assert out.exit_code == 2 and "holds YAML, not a tuned configuration" in out.output
    assert store.path.read_bytes() == before and notes.read_text() == "a: 1\n"


def test_results_label_production_jobs_and_report_refuses_them(tmp_path: Path):
    store = Store(tmp_path / "prod.jsonl")
    _jobs(store, GAIN, 4, 0.5)
    start_job(store, "app", "j9", [GAIN])  # still running
    out = invoke("results", "--store", str(store.path), "--format", "json")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    assert [r["job_id"] for r in rows] == ["j0", "j1", "j2", "j3"]
    assert {(r["backend"], r["provenance"], r["source"]) for r in rows} == {
        ("production", "production", "production jobs of campaign app")}
    assert [r["role"] for r in rows] == ["baseline"] * 3 + ["challenger"]
    assert rows[3]["config"] == config_name(GAIN) and rows[3]["cb_nodes"] == 2
    assert rows[3]["io_seconds"] == 5.0 and "cb_nodes" not in rows[0]
    assert "is a production journal: 4 production job(s)" in out.stderr
    every = json.loads(invoke("results", "--store", str(store.path), "--failed",
                              "--format", "json").stdout)
    assert every[-1]["status"] == "running" and "io_seconds" not in every[-1]
    table = invoke("results", "--store", str(store.path))
    assert table.stdout.splitlines()[0].split()[:6] == ["recorded_at", "campaign", "job_id",
                                                        "role", "config", "backend"]
    report = invoke("report", "--store", str(store.path), "-o", str(tmp_path / "rep"))
    assert report.exit_code == 0, report.output
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "MEASURED in production: 5 job(s) of the application itself (app)" in page
    assert "Production jobs of campaign app" in page and "challenger" in page
    status_rows = (tmp_path / "rep" / "production-status-app.csv").read_text().splitlines()
    assert status_rows[0] == ("config,candidate,settings,runs,running,failed,lost,median_s,"
                              "median_vs_default,low,high,p_more_than_10pct_slower,state")
    assert any(row.startswith("default,-,no setting (the default),3,0,0,0,")
               for row in status_rows[1:])
    # the running job counts beside the finished one: the rows add up to the 5 jobs
    assert any(row.startswith(f"{config_name(GAIN)},-,cb_nodes=2,1,1,0,0,")
               for row in status_rows[1:])
    manifest = json.loads((tmp_path / "rep" / "manifest.json").read_text())
    assert manifest["papers"] == [{"part": "production", "title": "Production jobs",
                                   "provenance": "measured"}]
    # One figure per campaign: its jobs in order, labelled as measured in production.
    [figure] = manifest["figures"]
    assert figure["file"] == "production-jobs-app.png" and figure["provenance"] == "measured"
    assert figure["title"] == "Measured: campaign app, 5 production jobs (not settled, the " \
                              "default stays)"
    assert (tmp_path / "rep" / figure["file"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert figure["file"] in page


def test_the_lines_job_start_prints_give_the_settings_to_the_launch_alone(tmp_path: Path):
    store, candidate = tmp_path / "prod.jsonl", tmp_path / "cand.yaml"
    candidate.write_text("settings: {cb_nodes: 2}\n")
    # 3 baseline jobs, then a challenger whose hints file carries its job id (jobs that
    # share a directory never rewrite each other's settings)
    hints = str(tmp_path / "iotune-romio-hints-j3")
    for i, expected in enumerate(["unset"] * 3 + [hints]):
        out = invoke("job", "start", "--store", str(store), "--tag", "app", "--job-id",
                     f"j{i}", "--candidate", str(candidate), "--format", "romio")
        assert out.exit_code == 0, out.output
        script = ("set -euo pipefail\neval \"$1\"\n"
                  "iotune_run sh -c 'echo ${ROMIO_HINTS:-unset}'\n"
                  "echo \"after ${ROMIO_HINTS:-unset}\"\n")
        ran = subprocess.run(["bash", "-c", script, "job", out.stdout], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.split() == [expected, "after", "unset"]
        assert invoke("job", "finish", "--store", str(store), "--tag", "app", "--job-id",
                      f"j{i}", "--seconds", "10").exit_code == 0


def test_a_settled_per_file_configuration_is_written_with_its_files(tmp_path: Path):
    # The campaign tuned the checkpoint alone (configuration() of a tuned file with files:).
    store, tuned = Store(tmp_path / "prod.jsonl"), tmp_path / "tuned.yaml"
    ckpt = {"files": {"*/ckpt_*": {"cb_nodes": 2}}}
    _jobs(store, ckpt, 14, 0.5, tuned)
    doc = yaml.safe_load(tuned.read_text())
    assert doc["recommendation"] == "tuned"
    assert doc["settings"] == {}
    assert doc["files"] == [{"pattern": "*/ckpt_*", "settings": {"cb_nodes": 2}}]
    applied = invoke("apply", str(tuned), "--format", "romio")
    assert applied.exit_code == 0, applied.output
    assert "per-file settings (files:) are applied by the preload library alone" \
        in applied.stdout


CKPT_FIRST = {"files": {"*/ckpt_*": {"romio_cb_write": "disable"}, "*": {"cb_nodes": 2}}}
CKPT_LAST = {"files": {"*": {"cb_nodes": 2}, "*/ckpt_*": {"romio_cb_write": "disable"}}}


def _old_hash(config: dict) -> str:
    """A name as iotune hashed it before the order of per-file patterns was kept."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return "c" + hashlib.sha256(text.encode()).hexdigest()[:8]


def test_a_name_depends_on_the_order_of_the_patterns_and_no_other_name_changes():
    assert config_name(CKPT_FIRST) != config_name(CKPT_LAST)
    for config in (GAIN, {"files": {"*/ckpt_*": {"cb_nodes": 2}}},
                   {**SLOW, "files": {"*.h5": {}}}):
        assert config_name(config) == _old_hash(config)


def test_the_start_record_keeps_the_order_and_the_settled_file_too(tmp_path: Path):
    store, tuned = Store(tmp_path / "prod.jsonl"), tmp_path / "tuned.yaml"
    _jobs(store, CKPT_FIRST, 14, 0.5, tuned)
    starts = [json.loads(line) for line in store.path.read_text().splitlines()
              if '"event": "start"' in line]
    tried = [r["settings"] for r in starts if r["config"] != "default"]
    assert tried and all(s == {"files": [["*/ckpt_*", {"romio_cb_write": "disable"}],
                                         ["*", {"cb_nodes": 2}]]} for s in tried)
    doc = yaml.safe_load(tuned.read_text())
    assert doc["files"] == [{"pattern": "*/ckpt_*", "settings": {"romio_cb_write": "disable"}},
                            {"pattern": "*", "settings": {"cb_nodes": 2}}]


def _old_campaign(store: Store, files: dict, count: int) -> None:
    """``count`` jobs recorded as iotune recorded them before the pattern order was kept:
    ``files`` a mapping (the journal sorts it), the name hashed without the order; the
    candidate's jobs twice as fast."""
    name = _old_hash({"files": files})
    for i in range(count):
        config, settings = (name, {"files": files}) if i % 2 else ("default", {})
        store.append({"kind": "production_job", "event": "start", "tag": "app",
                      "job_id": f"j{i}", "config": config, "settings": settings,
                      "role": "explore", "reason": "old", "candidates": [name]})
        store.append({"kind": "production_job", "event": "finish", "tag": "app",
                      "job_id": f"j{i}", "status": "ok",
                      "io_seconds": (5.0 if i % 2 else 10.0) * (1 + 0.02 * (i % 3))})


def test_an_old_record_whose_pattern_order_is_lost_is_never_written_as_settled(tmp_path):
    store, tuned = Store(tmp_path / "prod.jsonl"), tmp_path / "tuned.yaml"
    _old_campaign(store, CKPT_LAST["files"], 30)
    out = invoke("job", "status", "--store", str(store.path), "--tag", "app", "--tuned",
                 str(tuned))
    assert out.exit_code == 0, out.output
    name = _old_hash({"files": CKPT_LAST["files"]})
    assert (f"iotune: {tuned} unchanged: campaign app settled on {name}, whose per-file "
            "patterns an older iotune recorded in alphabetical order (the order, which "
            "decides a file's settings, is lost); write the tuned file from that "
            "candidate's file") in out.output
    assert not tuned.exists()


def test_an_old_record_with_one_pattern_settles_under_its_old_name(tmp_path):
    store, tuned = Store(tmp_path / "prod.jsonl"), tmp_path / "tuned.yaml"
    one = {"*/ckpt_*": {"cb_nodes": 2}}
    _old_campaign(store, one, 30)
    out = invoke("job", "status", "--store", str(store.path), "--tag", "app", "--tuned",
                 str(tuned))
    assert out.exit_code == 0, out.output
    assert config_name({"files": one}) in out.output
    assert yaml.safe_load(tuned.read_text())["files"] == [
        {"pattern": "*/ckpt_*", "settings": {"cb_nodes": 2}}]
