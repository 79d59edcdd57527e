"""IOR and h5bench, real programs iotune's authors did not write, tuned at 2 ranks as
command kernels (their own time printout as the metric, the settings injected through the
preload library), with a tiny budget."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.store import Store
from tests.cli_result import assert_decided_or_spent
from tests.programs.vendored import (
    H5BENCH_METRIC,
    IOR_METRIC,
    IOR_MPIIO,
    VENDOR,
    ior_hints,
)

pytestmark = pytest.mark.mpi

BUDGET = 4


def _tune(config: Path, tmp_path: Path) -> tuple[str, list[dict], dict]:
    """``iotune tune`` at 2 ranks over every configuration of a space of two: its stdout,
    the store's records, the tuned document."""
    tuned = tmp_path / "tuned.yaml"
    result = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "2", "--budget",
                                      str(BUDGET), "--strategy", "exhaustive", "-o", str(tuned),
                                      "--no-color"])
    assert result.exit_code == 0, result.output
    records = Store(tmp_path / "store.jsonl").records()
    assert records and all(r["status"] == "ok" for r in records), records[0].get("error")
    document = yaml.safe_load(tuned.read_text())
    assert document["kernel"] == "command"
    assert_decided_or_spent(document, BUDGET, result.output)
    return result.stdout, records, document


def test_tune_ior_and_say_which_aggregator_count_it_did_not_get(program, program_config,
                                                                tmp_path):
    # One node, one aggregator per node (cb_config_list *:1): ROMIO uses one aggregator
    # whatever cb_nodes asks, and IOR's own printout says so.
    ior = program("ior")
    config = program_config(f"{ior} {IOR_MPIIO} -o {{scratch}}/ior.dat --mpiio.showHints",
                            IOR_METRIC, {"cb_buffer_size": ["4MiB"], "cb_nodes": [1, 2],
                                         "cb_config_list": ["*:1"]})
    stdout, records, _ = _tune(config, tmp_path)
    for record in records:
        run = record["result"]
        # IOR's own figure, read from its summary: the last write row's Mean(s)
        rows = re.findall(r"(?m)^write(?:\s+\S+){8}\s+([0-9.]+)", run["stdout_tail"])
        assert run["measure"] == "regex" and run["times_s"]["total"] == float(rows[-1])
        assert 0 < run["times_s"]["total"] <= run["wall_s"]
        shown = ior_hints(run["stdout_tail"])
        effects = run.get("settings_effect") or {}
        assert shown["cb_nodes"] == "1"
        if "cb_buffer_size" in record["settings"]:
            assert shown["cb_buffer_size"] == run["hints_requested"]["cb_buffer_size"]
            assert effects["cb_buffer_size"]["status"] == "in_effect"
        if record["settings"].get("cb_nodes") == 2:
            assert effects["cb_nodes"] == {**effects["cb_nodes"], "status": "differs",
                                           "in_effect": "1"}
    asked = sum(r["settings"].get("cb_nodes") == 2 for r in records)
    assert asked, "the tune never ran cb_nodes=2"
    # The screen says it, for every run that asked, with the reason.
    block = stdout.split("Settings not in effect or unverified in the tune's runs", 1)
    assert len(block) == 2, stdout
    (line,) = [x for x in block[1].splitlines() if x.strip().startswith("cb_nodes=2:")]
    assert f"cb_nodes=2: in effect 1 in {asked} of {asked} runs that asked it; " in line, line
    assert "cb_config_list" in line  # the likely reason
    assert "cb_buffer_size" not in block[1]  # what took effect is not listed


def small_vpic_config(path: Path, particles: int = 65536) -> Path:
    """The vendored h5bench VPIC-IO write configuration with ``particles`` per rank."""
    text = (VENDOR / "h5bench-vpic-write.cfg").read_text()
    text = re.sub(r"(?m)^NUM_PARTICLES=.*$", f"NUM_PARTICLES={particles // 1024} K", text)
    text = re.sub(r"(?m)^DIM_1=.*$", f"DIM_1={particles}", text)
    path.write_text(text)
    return path


def test_tune_h5bench_write_with_hdf5_alignment_in_effect(program, program_config, tmp_path):
    h5bench = program("h5bench_write")
    cfg = small_vpic_config(tmp_path / "vpic.cfg")
    config = program_config(f"{h5bench} {cfg} {{scratch}}/vpic.h5", H5BENCH_METRIC,
                            {"alignment": ["64KiB", "1MiB"], "romio_cb_write": ["disable"]})
    stdout, records, _ = _tune(config, tmp_path)
    for record in records:
        run = record["result"]
        printed = re.findall(r"Observed completion time: ([0-9.]+) s", run["stdout_tail"])
        assert run["times_s"]["total"] == float(printed[-1]) > 0
        assert run["bytes_written"] >= 2 * 65536 * 32  # 8 four-byte fields per particle
        if "alignment" in record["settings"]:  # h5bench's shared HDF5 took it
            assert run["hdf5_settings_in_effect"]["alignment"] == record["settings"]["alignment"]
            assert run["settings_effect"]["alignment"]["status"] == "in_effect"
    assert "Settings not in effect or unverified" not in stdout
