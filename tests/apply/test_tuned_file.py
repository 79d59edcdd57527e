"""Every field of a tuned file is checked when it is loaded: one line naming the field and
the rule, for ``apply`` and ``report --tuned`` alike; what ``iotune tune -o`` writes loads."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from iotune.errors import ConfigError
from iotune.settings.bounds import MAX_CORES
from iotune.tuned import (
    check_files,
    check_tuned,
    files_document,
    measured_alternative,
    read_tuned_file,
)
from tests.apply.test_tuned_fuzz import TUNED
from tests.cli_result import error_line, invoke


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "tuned.yaml"
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return path


def _changed(**fields: Any) -> dict[str, Any]:
    doc = copy.deepcopy(TUNED)
    doc.update(fields)
    return doc


#: (document or YAML text, the start of the error line, a part of its rule).
BAD: list[tuple[Any, str, str]] = [
    ('kernel: "x\\ntouch pwned\\n#"\ncores: 4\nsettings: {cb_nodes: 2}\n', "kernel: ",
     "is not a kernel iotune knows; known: command, ior, vpic"),
    (_changed(kernel="vpic2"), "kernel: 'vpic2'", "is not a kernel iotune knows"),
    (_changed(kernel=["vpic"]), "kernel: ['vpic']", "is not a kernel iotune knows"),
    (_changed(cores=0), "cores: 0", f"is not a positive integer of at most {MAX_CORES}"),
    (_changed(cores=-4), "cores: -4", "is not a positive integer"),
    (_changed(cores="4"), "cores: '4'", "is not a positive integer"),
    (_changed(cores=True), "cores: True", "is not a positive integer"),
    (_changed(cores=4.5), "cores: 4.5", "is not a positive integer"),
    (_changed(cores=10**20), f"cores: {10**20}", f"of at most {MAX_CORES}"),
    (_changed(cores=MAX_CORES + 1), f"cores: {MAX_CORES + 1}", "of at most"),
    (_changed(nodes=0), "nodes: 0", "is not a positive integer"),
    (_changed(nodes=8), "nodes: 8", "is more than cores (4)"),
    (_changed(provenance="guessed"), "provenance: 'guessed'",
     "is not one of measured, simulated, replayed"),
    (_changed(provenance="simulated"), "provenance: 'simulated'",
     "is not backend 'mpi''s provenance (measured)"),
    (_changed(backend="ssh"), "backend: 'ssh'", "is not one of mpi, sim, replay"),
    (_changed(recommendation="maybe"), "recommendation: 'maybe'",
     "is not one of tuned, default"),
    (_changed(reason=["why"]), "reason: ['why']", "is not text"),
    (_changed(reason="a\nb"), "reason: 'a\\nb'", "has a control character"),
    (_changed(reason="a\x1b[2Jb"), "reason: ", "has a control character ('\\x1b')"),
    (_changed(reason="a\u202eb"), "reason: ", "has a control character ('\\u202e')"),
    (_changed(system="a\rb"), "system: ", "has a control character ('\\r')"),
    (_changed(system=3), "system: 3", "is not text"),
    (_changed(settings=[1, 2]), "settings: [1, 2]", "is not a mapping of setting: value"),
    (_changed(settings="cb_nodes=2"), "settings: 'cb_nodes=2'", "is not a mapping"),
    (_changed(settings={"stripe_count": 0}), "settings.stripe_count: 0",
     "is not a positive integer"),
    (_changed(settings={"stripes": 2}), "settings.stripes", "unknown setting"),
    (_changed(schema_version=2), "schema_version: 2", "is not 1, the version of tuned file"),
    (_changed(iotune_version="1 2"), "iotune_version: '1 2'", "is not a version"),
    (_changed(created_at="yesterday"), "created_at: 'yesterday'", "is not an ISO 8601 time"),
    (_changed(target="both"), "target: 'both'", "is not one of write, read, total"),
    (_changed(target_time="fast"), "target_time: 'fast'", "is not one of"),
    (_changed(kernel_args=[1]), "kernel_args: [1]", "is not a mapping"),
    (_changed(kernel_args={"particles": 1}), "kernel_args.particles",
     "unknown argument of kernel 'vpic'"),
    (_changed(mpiio_hints={"cb nodes": "2"}), "mpiio_hints.cb nodes", "is not a hint"),
    (_changed(mpiio_hints={"cb_nodes": 2}), "mpiio_hints.cb_nodes: 2", "is not a hint"),
    (_changed(measured="1 s"), "measured: '1 s'", "is not a mapping"),
    (_changed(measured={1: 2}), "measured: key 1", "is not text"),
    (_changed(predicted_time_s="0.9"), "predicted_time_s: '0.9'", "is not a finite number"),
    (_changed(speedup=float("nan")), "speedup: nan", "is not a finite number"),
    (_changed(confidence=1.5), "confidence: 1.5", "is not between 0 and 1"),
    (_changed(tied_with_runner_up="no"), "tied_with_runner_up: 'no'", "is not true or false"),
    (_changed(search={"strategy": "a\nb"}), "search.strategy: ", "has a control character"),
    (_changed(model={"formula": "1\x00"}), "model.formula: ", "has a control character"),
    (_changed(surprise=1), "surprise: unknown key of a tuned file", "known: schema_version"),
    ("settings: {}\nmeasured: {when: 2025-01-01}\n", "measured.when: ",
     "is not plain YAML data"),
    ("settings: {}\nmeasured: {blob: !!binary aGk=}\n", "measured.blob: ",
     "is not plain YAML data"),
]


@pytest.mark.parametrize(("doc", "start", "rule"), BAD,
                         ids=[f"{i}-{start.split(':')[0]}" for i, (_, start, _) in
                              enumerate(BAD)])
@pytest.mark.parametrize("command", ["apply", "report"])
def test_a_bad_field_is_refused_in_one_line(tmp_path, doc, start, rule, command):
    path = _write(tmp_path, doc)
    args = (["apply", str(path)] if command == "apply" else
            ["report", "--tuned", str(path), "--store", str(tmp_path / "none.jsonl"),
             "-o", str(tmp_path / "report")])
    result = invoke(*args)
    assert result.exit_code == 2
    line = error_line(result)
    assert line.startswith(start) and rule in line, line
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize("where", ["head", "kernel", "settings"])
def test_a_byte_that_is_not_utf8_is_refused_naming_the_file(tmp_path, where):
    text = {"head": b"\xff\nsettings: {}\n", "kernel": b"kernel: vp\xe9c\nsettings: {}\n",
            "settings": b"settings: {cb_config_list: '*:\xc3'}\n"}[where]
    path = tmp_path / "tuned.yaml"
    path.write_bytes(text)
    result = invoke("apply", str(path))
    assert result.exit_code == 2
    line = error_line(result)
    assert line.startswith(f"{path}: tuned file is not UTF-8 text (byte 0x") and "at offset" in line


def test_a_directory_is_not_a_tuned_file(tmp_path):
    result = invoke("apply", str(tmp_path))
    assert result.exit_code != 0 and "Traceback" not in result.output


def test_what_tune_writes_loads_back_whole(tmp_path, monkeypatch):
    """A tuned file written by ``iotune tune -o`` (simulated, so it runs in seconds) loads
    with every field, and ``apply`` prints its header from the checked fields."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "tuned.yaml"
    result = invoke("tune", "--backend", "sim", "--kernel", "vpic", "--cores", "64",
                    "--budget", "8", "-o", str(out))
    assert result.exit_code == 0, result.output
    written = yaml.safe_load(out.read_text())
    loaded = read_tuned_file(out)
    assert set(loaded) == set(written)
    assert {k: v for k, v in loaded.items() if k != "settings"} == \
        {k: v for k, v in written.items() if k != "settings"}
    shown = invoke("apply", str(out), "--format", "cray")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[0] == "# iotune tuned settings for vpic at 64 cores " \
                                          "(simulated)" or not loaded["settings"]


def test_a_minimal_hand_written_file_loads(tmp_path):
    path = _write(tmp_path, "settings: {cb_nodes: 2}\n")
    result = invoke("apply", str(path), "--format", "cray")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "# iotune tuned settings"
    assert "iotune_run() { MPICH_MPIIO_HINTS='*:cb_nodes=2' \"$@\"; }" in result.stdout


@pytest.mark.parametrize("bad", [[1, 2], {1: 2}, {"cb nodes": 2}, {"cb_nodes": "abc"}])
def test_every_settings_field_is_checked_by_one_rule(bad):
    """``settings``, a ``files:`` pattern's settings and a measured alternative's are
    refused alike, each naming its own key path."""
    wheres = {"settings": lambda: check_tuned({"settings": bad}),
              "files.*.h5": lambda: check_files({"*.h5": bad}),
              "best_found.settings": lambda: measured_alternative(
                  {"best_found": {"settings": bad}}, "best_found")}
    messages = []
    for where, check in wheres.items():
        with pytest.raises(ConfigError) as caught:
            check()
        assert str(caught.value).startswith(where), caught.value
        messages.append(str(caught.value).removeprefix(where))
    assert len(set(messages)) == 1, messages


def test_files_as_a_list_and_as_a_mapping_read_alike_in_their_order():
    listed = check_files([{"pattern": "*/ckpt_*", "settings": {"cb_nodes": 2}},
                          {"pattern": "*", "settings": {"cb_buffer_size": "1MiB"}},
                          {"pattern": "*.log"}])
    mapped = check_files({"*/ckpt_*": {"cb_nodes": 2}, "*": {"cb_buffer_size": "1MiB"},
                          "*.log": None})
    assert list(listed.items()) == list(mapped.items()) == [
        ("*/ckpt_*", {"cb_nodes": 2}), ("*", {"cb_buffer_size": 1048576}), ("*.log", {})]
    assert files_document(listed) == [
        {"pattern": "*/ckpt_*", "settings": {"cb_nodes": 2}},
        {"pattern": "*", "settings": {"cb_buffer_size": 1048576}},
        {"pattern": "*.log", "settings": {}}]
