"""Unit tests of the kernels' shared code and data patterns (no MPI started)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

# conftest puts kernels/ on sys.path, as it is when a kernel runs as a script
import ior
import numpy as np
import pytest
import vpicio
from kernel_helpers import KERNELS
from kit import arguments, harness, mpiio, rundir
from kit.errors import KernelError

from iotune.settings.catalogue import ENABLE_WORDS, SETTINGS


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("4096", 4096),
        ("1K", 1024),
        ("1k", 1024),
        ("2KiB", 2048),
        ("3M", 3 * 2**20),
        ("3MiB", 3 * 2**20),
        ("1G", 2**30),
        (" 1 GiB ", 2**30),
        ("1.5MiB", 3 * 2**19),
        ("1MB", 10**6),
    ],
)
def test_byte_sizes_read_as_in_a_config(text: str, value: int) -> None:
    assert arguments.byte_size(0)(text) == value


@pytest.mark.parametrize("text", ["", "-1", "M", "1 K B", "12X"])
def test_byte_sizes_reject_the_rest(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not a byte size"):
        arguments.byte_size(0)(text)


def test_byte_size_minimum_and_stripe_size_rule() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="0 is not a positive byte size"):
        arguments.byte_size(1)("0")
    stripe_size = arguments.kind_type(SETTINGS["stripe_size"].type)
    assert stripe_size("1M") == 2**20
    with pytest.raises(argparse.ArgumentTypeError, match="multiple of 64 KiB"):
        stripe_size("96000")


def test_yes_no_and_enable_words() -> None:
    assert arguments.yes_no("YES") is True and arguments.yes_no("no") is False
    assert arguments.choice_word(ENABLE_WORDS)("Automatic") == "automatic"
    with pytest.raises(argparse.ArgumentTypeError, match="not one of enable, disable"):
        arguments.choice_word(ENABLE_WORDS)("enabled")


def test_key_value_keeps_equals_signs_in_the_value() -> None:
    assert mpiio.key_value("cb_config_list=*:2") == ("cb_config_list", "*:2")
    assert mpiio.key_value("a=b=c") == ("a", "b=c")
    with pytest.raises(argparse.ArgumentTypeError, match="empty value"):
        mpiio.key_value("cb_nodes=")


def test_hints_file_format(tmp_path: Path) -> None:
    path = tmp_path / "hints"
    path.write_text("# comment\n\ncb_nodes 4\ncb_config_list  *:2 \n")
    assert mpiio.hints_file(str(path)) == (
        str(path),
        {"cb_nodes": "4", "cb_config_list": "*:2"},
    )
    with pytest.raises(argparse.ArgumentTypeError, match="cannot read"):
        mpiio.hints_file(str(tmp_path / "missing"))


def parse_vpic(*args: str) -> argparse.Namespace:
    return vpicio.build_parser().parse_args(["--scratch", "/nowhere", *args])


def test_settings_list_only_what_was_given() -> None:
    args = parse_vpic("--cb-nodes", "4", "--stripe-size", "4M", "--fsync", "yes")
    assert harness.requested_settings(args) == {
        "stripe_size": 4 * 2**20,
        "cb_nodes": 4,
        "fsync": "yes",
    }
    assert harness.requested_settings(parse_vpic()) == {}


def test_requested_hints_precedence_and_conflict(tmp_path: Path) -> None:
    hints = tmp_path / "hints"
    hints.write_text("cb_nodes 8\nromio_cb_read enable\n")
    args = parse_vpic("--hints-file", str(hints), "--hint", "romio_cb_read=disable",
                      "--cb-nodes", "2", "--stripe-count", "4")  # fmt: skip
    assert mpiio.requested_hints(args) == {
        "cb_nodes": "2",
        "romio_cb_read": "disable",
        "striping_factor": "4",
    }
    clash = parse_vpic("--hint", "striping_unit=65536", "--stripe-size", "128K")
    with pytest.raises(KernelError, match="contradicts --stripe-size 131072"):
        mpiio.requested_hints(clash)


def test_every_setting_has_a_flag_named_after_it() -> None:
    for parser in (vpicio.build_parser(), ior.build_parser()):
        flags = {opt for action in parser._actions for opt in action.option_strings}
        for name in (*SETTINGS, "hint", "hints_file", "fsync"):
            assert "--" + name.replace("_", "-") in flags


MOUNTS = """\
rootfs / rootfs rw 0 0
/dev/vda / ext4 rw 0 0
10.0.0.1@tcp:/scratch /lus lustre rw 0 0
tmpfs /lus/tmp tmpfs rw 0 0
/dev/vdb /mnt/with\\040space xfs rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "fstype", "mount"),
    [
        ("/home/user", "ext4", "/"),
        ("/lus/project/run", "lustre", "/lus"),
        ("/lus", "lustre", "/lus"),
        ("/lustre-not/x", "ext4", "/"),
        ("/lus/tmp/x", "tmpfs", "/lus/tmp"),
        ("/mnt/with space/d", "xfs", "/mnt/with space"),
    ],
)
def test_detect_filesystem_by_longest_mount_prefix(
    tmp_path: Path, path: str, fstype: str, mount: str
) -> None:
    table = tmp_path / "mounts"
    table.write_text(MOUNTS)
    assert rundir.detect_filesystem(path, str(table)) == {"type": fstype, "mount": mount}


def test_striping_is_not_pretended_off_lustre(tmp_path: Path) -> None:
    fs = {"type": "ext4", "mount": "/"}
    assert rundir.apply_striping(tmp_path, fs, {"stripe_count": 4, "stripe_size": 2**20}) == {
        "applicable": False,
        "reason": "ext4 is not Lustre",
    }


def test_remove_run_dir_removes_only_its_own_directory(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    other = scratch / "iotune-ior-x"
    other.mkdir()
    stranger = scratch / "data"
    stranger.mkdir()
    link = scratch / "iotune-vpic-link"
    link.symlink_to(stranger)
    rundir.remove_run_dir(other, str(scratch), "vpic")  # another kernel's prefix
    rundir.remove_run_dir(stranger, str(scratch), "vpic")  # not a run directory
    rundir.remove_run_dir(link, str(scratch), "vpic")  # a link
    rundir.remove_run_dir(tmp_path / "iotune-vpic-y", str(scratch), "vpic")  # elsewhere
    assert other.is_dir() and stranger.is_dir() and link.is_symlink()
    mine = rundir.create_run_dir(str(scratch), "vpic", "abc")
    (mine / "f").write_text("x")
    assert mine == scratch.resolve() / "iotune-vpic-abc"
    rundir.remove_run_dir(mine, str(scratch), "vpic")
    assert not mine.exists() and other.is_dir() and stranger.is_dir()


def test_scratch_rule_is_the_drivers(tmp_path: Path) -> None:
    with pytest.raises(KernelError, match=r"^--scratch: .*missing does not exist \(the"):
        rundir.usable_scratch(str(tmp_path / "missing"))
    (tmp_path / "file").write_text("")
    with pytest.raises(KernelError, match="is not a directory"):
        rundir.usable_scratch(str(tmp_path / "file"))
    assert rundir.usable_scratch(str(tmp_path)) == tmp_path.resolve()


def test_vpic_values_are_exact_float32() -> None:
    start, count = 2**20 - 3, 8  # crosses the 2**20 wrap of m
    for name, dtype in vpicio.DATASETS:
        values = vpicio.particle_values(name, start, count, timestep=5)
        assert values.dtype == dtype
        g = np.arange(start, start + count)
        if name == "id_1":
            expected = g + 5
        else:
            scale, offset, step = vpicio._FLOAT_FORMULA[name]
            expected = scale * (g % 2**20) + offset + step * 5
        assert np.array_equal(values.astype(np.float64), expected.astype(np.float64))


def test_ior_offsets_follow_ior() -> None:
    shared = ior.Pattern(rank=1, ranks=3, block_size=8, transfer_size=4, segments=2,
                         file_per_process=False)  # fmt: skip
    assert list(shared.offsets()) == [8, 12, 32, 36]
    assert shared.file_length == 48 and shared.tag == 0
    own = ior.Pattern(rank=1, ranks=3, block_size=8, transfer_size=4, segments=2,
                      file_per_process=True)  # fmt: skip
    assert list(own.offsets()) == [0, 4, 8, 12]
    assert own.file_length == 16 and own.tag == 2
    assert own.file_name("hdf5") == "ior.00000001.h5"


def spec_file(length: int, tag: int, transfer: int) -> bytes:
    """The ior data of a file of ``length`` bytes, straight from the module doc's words."""
    out = bytearray()
    for start in range(0, length, transfer):
        words = [(start + (tag << 48)) % 2**64]
        words += [8 * k + ((tag % 2**16) << 48) for k in range(1, (transfer + 7) // 8)]
        out += b"".join(word.to_bytes(8, "little") for word in words)[:transfer]
    return bytes(out[:length])


def test_ior_pattern_is_byte_exact_for_an_odd_transfer_size() -> None:
    # 13-byte transfers, tag 3: the transfer at 39 is its header word 39 + (3 << 48), then
    # the first 5 bytes of the ramp word 8 + (3 << 48).
    expected = bytes.fromhex("2700000000000300" "0800000000")
    assert ior.pattern_bytes(39, 13, 3, 13).tobytes() == expected
    assert spec_file(52, 3, 13)[39:] == expected
    assert ior.Filler(13, tag=3).fill(39).tobytes() == expected


@pytest.mark.parametrize(("transfer", "tag"), [
    (64, 3), (13, 3), (5, 2), (1, 1), (4096, 0), (24, 2**16 + 1),
])  # fmt: skip
def test_ior_pattern_filler_and_sampled_bytes_agree_with_the_definition(
    transfer: int, tag: int
) -> None:
    length = 8 * transfer
    spec = spec_file(length, tag, transfer)
    assert ior.pattern_bytes(0, length, tag, transfer).tobytes() == spec
    # a range that starts and ends inside transfers
    assert ior.pattern_bytes(3, 2 * transfer, tag, transfer).tobytes() == spec[3 : 3 + 2 * transfer]
    near_edges = {0, 1, 7, 8, 9, transfer - 1, transfer, transfer + 8, length - 1}
    offsets = np.array(sorted(near_edges & set(range(length))), np.int64)
    picked = ior.pattern_bytes_at(offsets, tag, transfer)
    assert picked.tobytes() == bytes(spec[i] for i in offsets)
    filler = ior.Filler(transfer, tag)
    for start in range(0, length, transfer):
        buffer = filler.fill(start)
        assert buffer is filler.buffer  # refilled in place, never copied
        assert buffer.tobytes() == spec[start : start + transfer]


def test_ior_transfers_differ_by_offset_and_tag() -> None:
    # What the read-back relies on: a transfer at the wrong offset differs in its header
    # word (bytes 0-7), a transfer of another rank's own file in every word's tag byte.
    at_0, at_64 = ior.pattern_bytes(0, 64, 1, 64), ior.pattern_bytes(64, 64, 1, 64)
    assert np.flatnonzero(at_0 != at_64).tolist() == [0]  # 0x00 against 0x40
    other_rank = ior.pattern_bytes(0, 64, 2, 64)
    assert np.flatnonzero(at_0 != other_rank).tolist() == list(range(6, 64, 8))


def test_importing_the_kernels_starts_no_mpi() -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import vpicio, ior; "
        "bad = [m for m in ('mpi4py', 'h5py') if m in sys.modules]; print(bad); "
        "sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(KERNELS)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


FAKE_LFS = """#!/bin/sh
echo "$@" >> "{log}"
if [ "$1" = getstripe ]; then echo "stripe_count:  4 stripe_size:   1048576"; fi
exit {code}
"""


def fake_lfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> Path:
    """Put an ``lfs`` on PATH that logs its arguments and exits with ``code``."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "lfs.log"
    script = bindir / "lfs"
    script.write_text(FAKE_LFS.format(log=log, code=code))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    return log


def test_striping_on_lustre_runs_lfs_setstripe_on_the_run_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = fake_lfs(tmp_path, monkeypatch, 0)
    run_dir = tmp_path / "iotune-vpic-1"
    run_dir.mkdir()
    record = rundir.apply_striping(run_dir, {"type": "lustre", "mount": "/lus"},
                                  {"stripe_count": 4, "stripe_size": 2**20})
    assert log.read_text().splitlines() == [
        f"setstripe -c 4 -S 1048576 {run_dir}",
        f"getstripe -d {run_dir}",
    ]
    assert record == {
        "applicable": True,
        "requested": {"stripe_count": 4, "stripe_size": 1048576},
        "command": f"lfs setstripe -c 4 -S 1048576 {run_dir}",
        "layout": "stripe_count:  4 stripe_size:   1048576",
    }


def test_failing_lfs_is_an_error_not_a_silent_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_lfs(tmp_path, monkeypatch, 3)
    with pytest.raises(KernelError, match=r"lfs setstripe -c 2 .* exit code 3"):
        rundir.apply_striping(tmp_path, {"type": "lustre", "mount": "/"}, {"stripe_count": 2})


def test_the_kit_finds_the_catalogue_without_iotune_installed() -> None:
    # -S: no site-packages, as under an interpreter that has mpi4py but not iotune.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from kit import arguments; "
        "print(arguments.count(1)('3'))"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code, str(KERNELS)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3"
