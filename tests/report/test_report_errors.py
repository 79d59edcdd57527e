"""``iotune report`` on a store it cannot report on: one line saying what is missing."""

from __future__ import annotations

import json
from pathlib import Path

from report_helpers import invoke


def error_of(args: list[str], exit_code: int) -> str:
    result = invoke(args)
    assert result.exit_code == exit_code, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("iotune: error:")]
    assert len(lines) == 1, result.stderr
    assert not (Path("iotune-report") / "index.html").exists()
    return lines[0][len("iotune: error: "):]


def record(kernel: str = "vpic", status: str = "ok") -> str:
    result = ({"times_s": {"total": 1.5}, "bandwidth_mib_s": 10.0, "bytes_written": 15 * 2**20}
              if status == "ok" else None)
    return json.dumps({"schema_version": 1, "campaign": "train", "kernel": kernel, "cores": 2,
                       "settings": {"cb_nodes": 1}, "params": {}, "backend": "mpi",
                       "provenance": "measured", "system": "box", "status": status,
                       "error": None if status == "ok" else "mpiexec failed",
                       "result": result, "recorded_at": "2026-01-01T00:00:00+00:00"}) + "\n"


def test_no_store(tmp_path):
    message = error_of(["report", "--store", str(tmp_path / "nowhere.jsonl")], 4)
    assert message.startswith(f"store {tmp_path / 'nowhere.jsonl'}: no such file")


def test_default_store_missing():
    message = error_of(["report"], 4)
    assert "iotune-store.jsonl: no such file" in message


def test_empty_store(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    message = error_of(["report", "--store", str(tmp_path / "empty.jsonl")], 3)
    assert message.endswith("no iotune measurements in it (empty, or not an iotune store); "
                            "run 'iotune train' or 'iotune tune' first")


def test_foreign_store(tmp_path):
    (tmp_path / "data.csv").write_text("cores,write_time\n2,1.5\n4,0.9\n")
    message = error_of(["report", "--store", str(tmp_path / "data.csv")], 4)
    assert "not an iotune store" in message  # as every command says (iotune.store.cache)
    (tmp_path / "empty.jsonl").write_text("")
    message = error_of(["report", "--store", str(tmp_path / "empty.jsonl")], 3)
    assert "no iotune measurements in it" in message


def test_other_kernel(tmp_path):
    (tmp_path / "s.jsonl").write_text(record("ior"))
    message = error_of(["report", "--store", str(tmp_path / "s.jsonl"), "--kernel", "vpic"], 3)
    assert message.endswith("no measurements of kernel 'vpic' (--kernel); kernels there: ior")


def test_several_kernels_need_a_choice(tmp_path):
    (tmp_path / "s.jsonl").write_text(record("ior") + record("vpic"))
    message = error_of(["report", "--store", str(tmp_path / "s.jsonl")], 3)
    assert message.endswith("measurements of several kernels (ior, vpic); choose one with "
                            "--kernel")


def test_only_failed_runs(tmp_path):
    (tmp_path / "s.jsonl").write_text(record(status="failed") * 2)
    message = error_of(["report", "--store", str(tmp_path / "s.jsonl")], 3)
    assert "none of the 2 measurement(s) of kernel 'vpic' succeeded" in message


def test_not_a_tuned_file(tmp_path):
    (tmp_path / "s.jsonl").write_text(record())
    (tmp_path / "t.yaml").write_text("hello: world\n")
    message = error_of(["report", "--store", str(tmp_path / "s.jsonl"), "--tuned",
                        str(tmp_path / "t.yaml")], 2)
    assert "not a tuned configuration" in message


def test_too_little_data_for_a_model_still_reports(tmp_path):
    """Two runs cannot support a model: the page says so instead of failing."""
    (tmp_path / "s.jsonl").write_text(record() + record().replace('"cb_nodes": 1',
                                                                  '"cb_nodes": 2'))
    result = invoke(["report", "--store", str(tmp_path / "s.jsonl"), "-o", "out"])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "out" / "index.html").read_text()
    assert "no model: only 2 usable training measurement(s)" in html
    assert "No tune records" in html
