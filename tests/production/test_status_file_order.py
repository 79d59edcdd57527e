"""``job status --format json`` gives each configuration's per-file settings in the
candidate's order, as [glob, settings] pairs: JSON's sorted keys must not reorder them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_result import invoke


def test_status_json_keeps_the_candidates_pattern_order(tmp_path: Path) -> None:
    store, tuned = tmp_path / "prod.jsonl", tmp_path / "tuned.yaml"
    # "*/ckpt_*.dat" before "*": alphabetical order would put "*" first
    tuned.write_text("settings:\n  cb_buffer_size: 4MiB\nfiles:\n"
                     "  '*/ckpt_*.dat': {romio_cb_write: disable}\n"
                     "  '*': {cb_buffer_size: 1MiB}\n")
    for i in range(4):
        started = invoke("job", "start", "--store", str(store), "--tag", "app", "--job-id",
                         f"j{i}", "--time-limit", "1:00:00", "--candidate", str(tuned))
        assert started.exit_code == 0, started.output
        finished = invoke("job", "finish", "--store", str(store), "--tag", "app", "--job-id",
                          f"j{i}", "--seconds", str(10.0 - i))
        assert finished.exit_code == 0, finished.output
    shown = invoke("job", "status", "--store", str(store), "--tag", "app", "--format", "json")
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.stdout)["configurations"]
    with_files = [row["settings"] for row in rows if "files" in row["settings"]]
    assert with_files, rows
    for settings in with_files:
        assert [glob for glob, _ in settings["files"]] == ["*/ckpt_*.dat", "*"]
        assert settings["files"][0][1] == {"romio_cb_write": "disable"}
