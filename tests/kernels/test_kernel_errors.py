"""Bad inputs end a kernel with exit code 2 and one line naming the flag and the rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_helpers import Run

pytestmark = pytest.mark.mpi


def one_error_line(run: Run) -> str:
    """The single stderr line of a failed run (asserting there is one, and no traceback)."""
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    return lines[0]


def test_missing_scratch_directory(kernel, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    line = one_error_line(kernel("vpicio", 2, "--scratch", str(missing)))
    assert str(missing) in line and "does not exist" in line
    assert "must be an existing, writable directory" in line
    assert not missing.exists()


def test_scratch_under_a_regular_file(kernel, tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    target = afile / "sub"
    line = one_error_line(kernel("ior", 2, "--scratch", str(target)))
    assert str(target) in line and "must be an existing, writable directory" in line
    assert afile.read_text() == "not a directory"


def test_scratch_that_is_a_file(kernel, tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    line = one_error_line(kernel("vpicio", 2, "--scratch", str(afile)))
    assert "is not a directory" in line


def test_existing_run_id_is_refused(kernel, scratch: Path) -> None:
    (scratch / "iotune-vpic-fixed").mkdir()
    (scratch / "iotune-vpic-fixed" / "old.h5").write_text("old")
    line = one_error_line(kernel("vpicio", 2, "--scratch", str(scratch), "--run-id", "fixed"))
    assert "already exists" in line and "--run-id" in line
    assert (scratch / "iotune-vpic-fixed" / "old.h5").read_text() == "old"


@pytest.mark.parametrize(
    ("args", "flag", "rule"),
    [
        (["--romio-cb-write", "maybe"], "--romio-cb-write", "not one of enable, disable"),
        (["--romio-ds-write", "on"], "--romio-ds-write", "not one of enable, disable"),
        (["--cb-nodes", "-2"], "--cb-nodes", "-2 is not a positive integer"),
        (["--stripe-count", "0"], "--stripe-count", "0 is not a positive integer"),
        (["--stripe-size", "100000"], "--stripe-size", "multiple of 64 KiB"),
        (["--cb-buffer-size", "12X"], "--cb-buffer-size", "is not a byte size"),
        (["--hint", "cb_nodes"], "--hint", "is not KEY=VALUE"),
        (["--hint", "=4"], "--hint", "hint key is empty"),
        (["--hint", "a=$(b)"], "--hint", "has characters a setting cannot carry"),
        (["--collective", "sometimes"], "--collective", "is not a boolean"),
        (["--particles-per-rank", "-5"], "--particles-per-rank", "not a positive integer"),
        (["--run-id", "../up"], "--run-id", "letters, digits"),
    ],
)
def test_bad_values_name_the_flag_and_rule(
    kernel, scratch: Path, args: list[str], flag: str, rule: str
) -> None:
    line = one_error_line(kernel("vpicio", 0, "--scratch", str(scratch), *args))
    assert flag in line and rule in line
    assert list(scratch.iterdir()) == []


def test_bad_value_is_reported_once_under_mpiexec(kernel, scratch: Path) -> None:
    line = one_error_line(kernel("vpicio", 4, "--scratch", str(scratch), "--cb-nodes", "-1"))
    assert "--cb-nodes" in line


def test_transfer_size_must_divide_block_size(kernel, scratch: Path) -> None:
    line = one_error_line(
        kernel("ior", 2, "--scratch", str(scratch), "--block-size", "1M", "--transfer-size", "96K")
    )
    assert "--transfer-size 98304 does not divide --block-size 1048576" in line


def test_hdf5_setting_with_a_non_hdf5_api(kernel, scratch: Path) -> None:
    line = one_error_line(
        kernel("ior", 0, "--scratch", str(scratch), "--api", "mpiio", "--alignment", "1M")
    )
    assert "--alignment applies only to --api hdf5" in line


def test_hint_contradicting_a_flag(kernel, scratch: Path) -> None:
    run = kernel("ior", 2, "--scratch", str(scratch), "--hint", "cb_nodes=4", "--cb-nodes", "2")
    line = one_error_line(run)
    assert "--hint cb_nodes=4 contradicts --cb-nodes 2" in line
    assert list(scratch.iterdir()) == []


def test_malformed_hints_file(kernel, scratch: Path, tmp_path: Path) -> None:
    hints = tmp_path / "hints"
    hints.write_text("cb_nodes 2\njustakey\n")
    line = one_error_line(kernel("ior", 0, "--scratch", str(scratch), "--hints-file", str(hints)))
    assert "--hints-file" in line and f"{hints}:2" in line and "is not 'key value'" in line


def test_alignment_threshold_needs_alignment(kernel, scratch: Path) -> None:
    run = kernel("vpicio", 0, "--scratch", str(scratch), "--alignment-threshold", "1")
    line = one_error_line(run)
    assert "--alignment-threshold needs --alignment" in line
    assert list(scratch.iterdir()) == []
