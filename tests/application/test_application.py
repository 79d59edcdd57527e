"""A user's unmodified program as a command kernel: settings injected, metric read, failures
recorded (the preload library's own tests are in test_preload.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from iotune.errors import ConfigError
from iotune.execution.application import (
    Application,
    check_injectable,
    parse_application,
    preload_settings_text,
    romio_hints_text,
    run_application,
)
from iotune.execution.launchers import LaunchRequest, make_launcher
from iotune.settings.values import normalise_settings

HERE = Path(__file__).resolve().parent
PROGRAM = f"{sys.executable} {HERE / 'hints_app.py'} {{scratch}}/data.bin 1"
SETTINGS = normalise_settings({"cb_buffer_size": "4MiB", "romio_cb_write": "disable",
                               "alignment": "1MiB"})


def run(app: Application, tmp_path: Path, settings=SETTINGS, **kwargs):
    launcher = make_launcher("mpiexec")
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    options = {"timeout_s": 120.0, "env": dict(os.environ), "preload_library": None, **kwargs}
    outcome = run_application(
        app, settings=settings, cores=2, nodes=1, scratch=scratch,
        launch=lambda argv: launcher.argv(LaunchRequest(2, tuple(argv), 1)), **options)
    assert not any(scratch.iterdir())  # the run directory is gone
    return outcome


def test_injection_files_carry_every_setting_of_their_layer():
    assert romio_hints_text(SETTINGS) == "cb_buffer_size 4194304\nromio_cb_write disable\n"
    text = preload_settings_text(SETTINGS)
    assert "hint:cb_buffer_size=4194304" in text and "hdf5:alignment=1048576" in text


@pytest.mark.mpi
def test_an_mpi4py_program_is_tuned_through_romio_hints_alone(tmp_path):
    app = parse_application({"command": PROGRAM, "metric": {"regex": r"write time: ([0-9.]+)"},
                             "preload": "no"})
    outcome = run(app, tmp_path)
    assert outcome.status == "ok", (outcome.error, outcome.stderr_tail)
    printed = outcome.result["stdout_tail"]
    assert "hint cb_buffer_size=4194304" in printed  # the file the program opened had them
    assert "hint romio_cb_write=disable" in printed
    assert outcome.result["measure"] == "regex"
    assert 0 < outcome.result["times_s"]["total"] < outcome.result["wall_s"]
    assert outcome.result["hints_requested"] == {"cb_buffer_size": "4194304",
                                                 "romio_cb_write": "disable"}
    default = run(app, tmp_path, settings={})
    assert "hint cb_buffer_size=4194304" not in default.result["stdout_tail"]


@pytest.mark.mpi
def test_the_wall_time_is_the_default_metric(tmp_path):
    outcome = run(parse_application({"command": PROGRAM, "preload": "no"}), tmp_path)
    assert outcome.status == "ok" and outcome.result["measure"] == "wall"
    assert outcome.result["times_s"]["total"] == pytest.approx(outcome.result["wall_s"], abs=1e-5)
    assert outcome.result["wall_s"] > 0


@pytest.mark.mpi
@pytest.mark.parametrize("command, metric, why", [
    (f"{sys.executable} -c 'import sys; sys.exit(\"cannot read input.deck\")'", "wall",
     "exit code 1: cannot read input.deck"),
    (PROGRAM, {"regex": r"bandwidth: ([0-9.]+)"}, "metric: no match of"),
])
def test_failures_are_records_with_the_reason(tmp_path, command, metric, why):
    outcome = run(parse_application({"command": command, "metric": metric, "preload": "no"}),
                  tmp_path)
    assert outcome.status == "failed" and why in (outcome.error or "")
    assert outcome.result is None


@pytest.mark.mpi
def test_a_run_past_its_time_limit_is_a_failed_record(tmp_path):
    app = parse_application({"command": f"{sys.executable} -c 'import time; time.sleep(30)'",
                             "preload": "no"})
    outcome = run(app, tmp_path, timeout_s=1.0)
    assert outcome.status == "failed" and "timed out after 1 s" in (outcome.error or "")


@pytest.mark.parametrize("raw, message", [
    ({}, "kernel.command: must be the program's command line"),
    ({"command": "./app {ranks}"}, "kernel.command: 'ranks'; placeholders are"),
    ({"command": "./app", "output_dir": "/abs"}, "'/abs' must be a relative path"),
    ({"command": "./app", "metric": "speed"}, "kernel.metric: 'speed' is not one of"),
    ({"command": "./app", "metric": {"regex": "time: [0-9.]+"}}, "needs a group"),
    ({"command": "./app", "metric": "io_time", "preload": "no"}, "io_time is measured by"),
    ({"command": "./app", "colour": "red"}, "kernel.colour: unknown key"),
])
def test_bad_command_kernels_are_named(raw, message):
    with pytest.raises(ConfigError) as info:
        parse_application(raw)
    assert message in str(info.value)


def test_settings_the_program_decides_cannot_be_injected():
    with pytest.raises(ConfigError, match=r"space\.collective: a command kernel cannot"):
        check_injectable({"collective": True})
