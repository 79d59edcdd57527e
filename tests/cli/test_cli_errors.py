"""Bad input through the CLI: one line naming the key and the rule, non-zero exit, no traceback."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from cli_result import error_line, invoke
from click.testing import CliRunner

from iotune.cli.main import cli


def test_unknown_setting(write_config):
    result = invoke("run", "-c", str(write_config()), "--cores", "2", "--set", "colour=red")
    assert result.exit_code == 2
    assert error_line(result).startswith("--set.colour: unknown setting 'colour'; known settings:")


def test_wrong_type(write_config):
    result = invoke("run", "-c", str(write_config()), "--cores", "2", "--set", "cb_nodes=two")
    assert result.exit_code == 2
    assert error_line(result) == "--set.cb_nodes: 'two' is not a positive integer"


def test_stripe_count_above_osts(write_config):
    config = write_config({"system": {"ost_count": 4}})
    result = invoke("run", "-c", str(config), "--cores", "2", "--set", "stripe_count=8")
    assert result.exit_code == 2
    assert error_line(result) == "--set.stripe_count: 8 exceeds the system's OST count (4)"


def test_aggregators_above_ranks(write_config):
    result = invoke("run", "-c", str(write_config()), "--cores", "2", "--set", "cb_nodes=4")
    assert result.exit_code == 2
    assert error_line(result) == "--set.cb_nodes: 4 aggregators exceed the 2 ranks of the run"


def test_missing_scratch(write_config, tmp_path):
    config = write_config({"system": {"scratch": str(tmp_path / "nowhere")}})
    result = invoke("run", "-c", str(config), "--cores", "2", "--no-store")
    assert result.exit_code == 2
    assert error_line(result) == (f"system.scratch: {tmp_path / 'nowhere'} does not exist "
                                  "(the scratch directory must be an existing, writable "
                                  "directory)")


def test_unwritable_scratch(write_config, tmp_path):
    # Root ignores permissions, so as root the check runs as 'nobody' in a forked child,
    # with the config and scratch under a world-readable directory.
    base = tmp_path
    if os.geteuid() == 0:
        base = Path(tempfile.mkdtemp(prefix="iotune-test-"))
        base.chmod(0o755)
    try:
        locked = base / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        config = base / "iotune.yaml"
        config.write_text(write_config({"system": {"scratch": str(locked)}}).read_text())
        config.chmod(0o644)
        args = ["run", "-c", str(config), "--cores", "2", "--no-store"]
        if os.geteuid() != 0:
            result = invoke(*args)
            code, line = result.exit_code, error_line(result)
        else:
            code, line = _as_nobody(args)
    finally:
        if base != tmp_path:
            shutil.rmtree(base)
    assert code == 2
    assert line.startswith(f"system.scratch: {locked} is not writable by this user")


def _as_nobody(args):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read)
        try:
            os.setgid(65534)
            os.setuid(65534)
            result = CliRunner().invoke(cli, args)
            lines = [x for x in result.output.splitlines() if x.startswith("iotune: error:")]
            message = f"{result.exit_code}\n{lines[0][len('iotune: error: '):] if lines else ''}"
            os.write(write, message.encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        text = handle.read()
    os.waitpid(pid, 0)
    code, _, line = text.partition("\n")
    return int(code), line


def test_malformed_yaml_line_number(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("system:\n  name: x\n  scratch: [oops\nspace: {}\n")
    result = invoke("run", "-c", str(path), "--cores", "2")
    assert result.exit_code == 2
    assert error_line(result).startswith(f"{path}: malformed YAML at line 4")


def test_unknown_kernel(write_config):
    result = invoke("run", "-c", str(write_config()), "--kernel", "flash", "--cores", "2")
    assert result.exit_code == 2
    assert error_line(result) == ("--kernel: unknown kernel 'flash'; known kernels: ior, "
                                  "vpic (your own program: kernel: {command: ...} or --command)")


def test_unknown_launcher(write_config):
    result = invoke("run", "-c", str(write_config({"system": {"launcher": "qsub"}})),
                    "--cores", "2")
    assert result.exit_code == 2
    assert error_line(result) == ("system.launcher: unknown launcher 'qsub'; known launchers: "
                                  "mpiexec, srun, template")


def test_debug_shows_traceback(write_config):
    result = CliRunner().invoke(cli, ["--debug", "run", "-c", str(write_config()), "--cores", "2",
                                      "--set", "cb_nodes=two"])
    assert result.exit_code != 0
    assert result.exception is not None and "is not a positive integer" in str(result.exception)


@pytest.mark.parametrize("launcher", ["mpiexec", "srun"])
def test_dry_run_prints_the_exact_command(write_config, launcher):
    config = write_config({"system": {"launcher": launcher}})
    result = invoke("run", "-c", str(config), "--cores", "2", "--set", "cb_nodes=2",
                    "--set", "romio_cb_write=disable", "--dry-run")
    assert result.exit_code == 0
    line = result.output.strip()
    assert line.startswith(f"{launcher} -n 2 ")
    assert "vpicio.py --particles-per-rank 4096 --timesteps 1 --fsync yes --scratch " in line
    assert line.endswith("--cb-nodes 2 --romio-cb-write disable")
