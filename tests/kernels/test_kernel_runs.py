"""Real MPI runs of the kernels (2 and 4 ranks, small files in tmp_path)."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest
from kernel_helpers import KERNELS, Run, mpiexec, run_program

from iotune.execution.rundirs import MARKER

pytestmark = pytest.mark.mpi

REQUIRED_KEYS = {
    "schema_version",
    "kernel",
    "ranks",
    "nodes",
    "bytes_written",
    "times_s",
    "bandwidth_mib_s",
    "settings",
    "params",
    "hints_requested",
    "hints_in_effect",
    "hints_source",
    "filesystem",
    "fsync",
    "collective",
    "verify",
    "mpi_library",
    "host",
    "output_dir",
}
VPIC_DATASETS = {
    "x": "float32",
    "y": "float32",
    "z": "float32",
    "id_1": "int32",
    "id_2": "float32",
    "px": "float32",
    "py": "float32",
    "pz": "float32",
}
# value = scale * (g mod 2**20) + offset + step * t, as documented in kernels/vpicio.py
VPIC_FORMULA = {
    "x": (0.5, 0.0, 1.0),
    "y": (0.25, 0.0, 2.0),
    "z": (0.125, 0.0, 3.0),
    "id_2": (1.0, 0.0, 0.5),
    "px": (-0.5, 0.0, -1.0),
    "py": (0.5, 0.25, 1.0),
    "pz": (1.0, 0.0, 4.0),
}
HINT_FLAGS = [
    "--cb-nodes", "2", "--cb-config-list", "*:*",
    "--romio-cb-write", "disable", "--cb-buffer-size", "1M",
]  # fmt: skip
HINTS_EXPECTED = {
    "cb_nodes": "2",
    "cb_config_list": "*:*",
    "romio_cb_write": "disable",
    "cb_buffer_size": "1048576",
}


def expected_vpic(name: str, total: int, timestep: int) -> np.ndarray:
    """The documented values of one dataset, computed independently in float64."""
    g = np.arange(total, dtype=np.int64)
    if name == "id_1":
        return (g + timestep) % (1 << 31)
    scale, offset, step = VPIC_FORMULA[name]
    return scale * (g % (1 << 20)) + offset + step * timestep


def only_run_dir(scratch: Path) -> Path:
    entries = [p for p in scratch.iterdir() if p.name.startswith("iotune-")]
    assert len(entries) == 1, entries
    return entries[0]


def assert_striping_recorded(result: dict) -> None:
    fs = result["filesystem"]
    assert fs["type"] and fs["mount"]
    if fs["type"] != "lustre":
        assert fs["striping"] == {"applicable": False, "reason": f"{fs['type']} is not Lustre"}


@pytest.mark.parametrize("ranks", [2, 4])
def test_vpic_file_layout_values_and_hints(kernel, scratch: Path, ranks: int) -> None:
    particles, timesteps = 3001, 2
    run = kernel(
        "vpicio", ranks, "--scratch", str(scratch), "--keep",
        "--particles-per-rank", str(particles), "--timesteps", str(timesteps), *HINT_FLAGS,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = run.result()
    assert result.keys() >= REQUIRED_KEYS
    assert result["schema_version"] == 1 and result["kernel"] == "vpic"
    assert result["ranks"] == ranks and result["nodes"] >= 1
    assert result["bytes_written"] == 32 * particles * ranks * timesteps
    times = result["times_s"]
    assert set(times) == {"open", "write", "close", "total"}
    assert times["total"] >= max(times["open"], times["write"], times["close"]) > 0
    assert result["bandwidth_mib_s"] == pytest.approx(
        result["bytes_written"] / times["total"] / 2**20
    )
    assert result["params"]["particles_per_rank"] == particles
    assert result["params"]["timesteps"] == timesteps
    assert result["settings"] == {
        "cb_nodes": 2, "cb_buffer_size": 1048576,
        "romio_cb_write": "disable", "cb_config_list": "*:*",
    }  # fmt: skip
    assert result["hints_requested"] == HINTS_EXPECTED
    in_effect = result["hints_in_effect"]
    assert {key: in_effect.get(key) for key in HINTS_EXPECTED} == HINTS_EXPECTED
    assert "romio_filesystem_type" in in_effect  # read back from MPI-IO, not echoed
    assert "H5Fget_vfd_handle" in result["hints_source"]
    assert result["hints_not_in_effect"] == {}
    # fsync and collective not given: the kernel's defaults, which the driver passes too
    assert result["collective"] is True and result["fsync"] is True
    assert result["verify"] is None
    assert result["mpi_library"].startswith("MPICH")
    assert result["hdf5_version"].count(".") == 2
    assert_striping_recorded(result)

    run_dir = only_run_dir(scratch)
    assert result["output_dir"] == str(run_dir)
    path = run_dir / "vpic.h5"
    total = particles * ranks
    with h5py.File(path, "r") as f:
        assert sorted(f.keys()) == [f"Timestep_{t}" for t in range(timesteps)]
        for t in range(timesteps):
            group = f[f"Timestep_{t}"]
            assert {name: str(group[name].dtype) for name in group} == VPIC_DATASETS
            for name in VPIC_DATASETS:
                data = group[name][...]
                assert data.shape == (total,)
                np.testing.assert_array_equal(data, expected_vpic(name, total, t))

    listing = subprocess.run(
        ["h5ls", "-r", str(path)], capture_output=True, text=True, check=True
    ).stdout
    for t in range(timesteps):
        for name in VPIC_DATASETS:
            assert f"/Timestep_{t}/{name}" in listing
    assert listing.count("Dataset {") == 8 * timesteps


def test_vpic_verify_and_cleanup_leave_siblings_alone(kernel, scratch: Path) -> None:
    sibling = scratch / "keep-me.txt"
    sibling.write_text("precious")
    run = kernel(
        "vpicio", 2, "--scratch", str(scratch), "--particles-per-rank", "2000",
        "--timesteps", "2", "--verify", "--fsync", "yes", "--collective", "no",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = run.result()
    assert result["verify"] == {"ok": True, "checked_values": 8 * 2000 * 2 * 2,
                                "mismatched_values": 0, "first_mismatch": None}  # fmt: skip
    assert result["fsync"] is True and result["collective"] is False
    assert result["kept"] is False
    assert not Path(result["output_dir"]).exists()
    assert sorted(p.name for p in scratch.iterdir()) == ["keep-me.txt"]
    assert sibling.read_text() == "precious"


VPIC_HDF5_RUN = (
    "vpicio", ["--particles-per-rank", "1000", "--alignment", "65536",
               "--alignment-threshold", "1", "--sieve-buf-size", "256K", "--meta-block-size", "8K",
               "--coll-metadata", "yes", "--verify"],
    {"alignment": 65536, "alignment_threshold": 1, "sieve_buf_size": 262144,
     "meta_block_size": 8192, "coll_metadata_ops": True, "coll_metadata_write": True},
    "vpic.h5", [f"Timestep_0/{name}" for name in VPIC_DATASETS], 65536, True,
)  # fmt: skip
IOR_HDF5_RUN = (
    "ior", ["--api", "hdf5", "--block-size", "64K", "--transfer-size", "64K",
            "--alignment", "1M", "--meta-block-size", "4K"],
    {"alignment": 1048576, "alignment_threshold": 1, "meta_block_size": 4096},
    "ior.h5", ["data"], 1048576, None,
)  # fmt: skip


@pytest.mark.parametrize(
    ("name", "args", "in_effect", "file", "datasets", "alignment", "verified"),
    [pytest.param(*VPIC_HDF5_RUN, id="vpic"), pytest.param(*IOR_HDF5_RUN, id="ior")],
)
def test_hdf5_settings_take_effect(
    kernel, scratch: Path, name: str, args: list[str], in_effect: dict, file: str,
    datasets: list[str], alignment: int, verified: bool | None,
) -> None:  # fmt: skip
    run = kernel(name, 2, "--scratch", str(scratch), "--keep", *args)
    assert run.returncode == 0, run.stderr
    result = run.result()
    assert (result["verify"] or {}).get("ok") is verified  # None: not asked to verify
    assert result["hdf5_settings_in_effect"] == in_effect
    with h5py.File(only_run_dir(scratch) / file, "r") as f:
        offsets = [f[dataset].id.get_offset() for dataset in datasets]
    assert all(offset is not None and offset % alignment == 0 for offset in offsets), offsets
    assert len(set(offsets)) == len(offsets)


def test_hints_file_and_extra_hint_reach_the_file(kernel, scratch: Path, tmp_path: Path) -> None:
    hints = tmp_path / "romio-hints"
    hints.write_text("# ROMIO hints\ncb_buffer_size 2097152\nromio_ds_write disable\n")
    run = kernel(
        "ior", 2, "--scratch", str(scratch), "--api", "mpiio", "--block-size", "64K",
        "--transfer-size", "16K", "--hints-file", str(hints), "--hint", "ind_wr_buffer_size=262144",
        "--romio-ds-write", "enable",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = run.result()
    expected = {
        "cb_buffer_size": "2097152",
        "romio_ds_write": "enable",  # the dedicated flag wins over the hints file
        "ind_wr_buffer_size": "262144",
    }
    assert result["hints_requested"] == expected
    assert {k: result["hints_in_effect"].get(k) for k in expected} == expected
    assert result["settings"]["hints_file"] == str(hints)
    assert result["settings"]["hint"] == {"ind_wr_buffer_size": "262144"}


def test_striping_on_a_non_lustre_scratch_is_not_applicable(kernel, scratch: Path) -> None:
    run = kernel(
        "ior", 2, "--scratch", str(scratch), "--api", "posix", "--block-size", "64K",
        "--transfer-size", "64K", "--stripe-count", "4", "--stripe-size", "1M",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = run.result()
    if result["filesystem"]["type"] == "lustre":
        pytest.fail("this test needs a scratch directory that is not on Lustre")
    assert_striping_recorded(result)
    assert result["settings"] == {"stripe_count": 4, "stripe_size": 1048576}
    assert result["hints_requested"] == {"striping_factor": "4", "striping_unit": "1048576"}
    assert result["hints_in_effect"] == {}
    assert result["hints_source"].startswith("not applicable")


@pytest.mark.parametrize(
    ("api", "file_per_process", "collective"),
    [
        ("posix", "no", "no"),
        ("posix", "yes", "yes"),
        ("mpiio", "no", "yes"),
        ("mpiio", "yes", "no"),
        ("hdf5", "no", "yes"),
        ("hdf5", "yes", "no"),
    ],
)
def test_ior_apis_verify(
    kernel, scratch: Path, api: str, file_per_process: str, collective: str
) -> None:
    ranks, block, transfer, segments = 2, 96 * 1024, 24 * 1024, 3
    run = kernel(
        "ior", ranks, "--scratch", str(scratch), "--keep", "--api", api,
        "--file-per-process", file_per_process, "--collective", collective,
        "--block-size", "96K", "--transfer-size", "24K", "--segments", str(segments),
        "--fsync", "yes", "--verify", "--cb-buffer-size", "1M",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = run.result()
    assert result.keys() >= REQUIRED_KEYS
    size = ranks * segments * block
    assert result["bytes_written"] == size
    assert result["verify"] == {
        "ok": True,
        "checked_values": size,
        "mismatched_values": 0,
        "first_mismatch": None,
    }
    assert result["params"] == {
        "api": api, "block_size": block, "transfer_size": transfer, "segments": segments,
        "file_per_process": file_per_process == "yes",
        "files": ranks if file_per_process == "yes" else 1, "access": "write",
    }  # fmt: skip
    assert result["collective"] is (collective == "yes")
    if api == "posix":
        assert result["hints_in_effect"] == {}
    else:
        assert result["hints_in_effect"]["cb_buffer_size"] == "1048576"
    if api == "hdf5":
        assert result["hdf5_version"].count(".") == 2
        assert "H5Fget_vfd_handle" in result["hints_source"]
    else:
        assert "hdf5_version" not in result
    run_dir = only_run_dir(scratch)
    assert json.loads((run_dir / MARKER).read_text())["pid"] > 0  # whose run it is
    files = sorted(p.name for p in run_dir.iterdir() if p.name != MARKER)
    suffix = "h5" if api == "hdf5" else "dat"
    if file_per_process == "yes":
        assert files == [f"ior.{r:08d}.{suffix}" for r in range(ranks)]
    else:
        assert files == [f"ior.{suffix}"]
    if api != "hdf5":
        data = (only_run_dir(scratch) / files[0]).read_bytes()
        length = segments * block * (1 if file_per_process == "yes" else ranks)
        tag = 1 if file_per_process == "yes" else 0
        # per transfer: its offset in the header word, then the ramp 8k (k >= 1), plus the tag
        words = np.tile(np.arange(transfer // 8, dtype="<u8") * 8, (length // transfer, 1))
        words[:, 0] = np.arange(0, length, transfer)
        assert data == (words + np.uint64(tag << 48)).tobytes()


VERIFY_CORRUPT_VPIC = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import h5py
    from mpi4py import MPI
    sys.path.insert(0, sys.argv[1])
    import vpicio
    from kit import hdf5, mpiio
    comm = MPI.COMM_WORLD
    path = Path(sys.argv[2])
    layout = vpicio.compute_layout(comm, 500)
    steps = [vpicio.make_step_data(layout, t) for t in range(2)]
    if comm.rank == 1:
        steps[1]["py"][7] += 1.0
    vpicio.write_particles(comm, path, mpiio.make_info({}), hdf5.Hdf5Options(),
                           steps, layout, collective=True, fsync=False)
    report = vpicio.verify_particles(comm, path, layout, 2)
    if comm.rank == 0:
        print(json.dumps(report))
    """
)


VERIFY_CORRUPT_IOR = textwrap.dedent(
    """
    import json, os, sys, types
    from pathlib import Path
    from mpi4py import MPI
    sys.path.insert(0, sys.argv[1])
    import ior
    comm = MPI.COMM_WORLD
    path = Path(sys.argv[2])
    pattern = ior.Pattern(rank=comm.rank, ranks=comm.size, block_size=4096,
                          transfer_size=1024, segments=2, file_per_process=False)
    if comm.rank == 0:
        with open(path, "wb") as out:
            for rank in range(comm.size):
                other = ior.Pattern(rank, comm.size, 4096, 1024, 2, False)
                for offset in other.offsets():
                    out.seek(offset)
                    out.write(ior.pattern_bytes(offset, 1024, 0, 1024).tobytes())
            out.seek(3 * 4096 + 1000)
            out.write(b"\\xff")
    comm.Barrier()
    ctx = types.SimpleNamespace(args=types.SimpleNamespace(api="posix"), comm=comm)
    report = ior.verify_pattern(ctx, pattern, path, comm)
    if comm.rank == 0:
        print(json.dumps(report))
    """
)


VPIC_EXPECTED = 0.5 * (500 + 7) + 0.25 + 1
IOR_OFFSET = 3 * 4096 + 1000  # segment 1, rank 1: byte 1000 of the transfer at 3 * 4096


@pytest.mark.parametrize(("script", "file", "checked", "first_mismatch"), [
    pytest.param(VERIFY_CORRUPT_VPIC, "v.h5", 8 * 500 * 2 * 2, {
        "dataset": "Timestep_1/py", "index": 507, "expected": VPIC_EXPECTED,
        "found": VPIC_EXPECTED + 1,
    }, id="vpic"),
    pytest.param(VERIFY_CORRUPT_IOR, "f", 2 * 2 * 4096, {
        "offset": IOR_OFFSET, "expected": 1000 % 256,  # byte 0 of the ramp word 8 * 125
        "found": 255, "file": "f", "rank": 1,
    }, id="ior"),
])  # fmt: skip
def test_verify_reports_the_first_mismatch(
    tmp_path: Path, script: str, file: str, checked: int, first_mismatch: dict
) -> None:
    run: Run = run_program(mpiexec(2, "-c", script, str(KERNELS), str(tmp_path / file)))
    assert run.returncode == 0, run.stderr
    report = run.result()
    assert report["ok"] is False and report["checked_values"] == checked
    assert report["mismatched_values"] == 1
    assert report["first_mismatch"] == first_mismatch


def test_help_prints_once_and_teaches_units(kernel) -> None:
    run = kernel("vpicio", 2, "--help")
    assert run.returncode == 0
    assert run.stdout.count("usage: vpicio.py") == 1
    for text in ("--cb-nodes", "--stripe-size", "--coll-metadata", "KiB = 1024", "MiB/s"):
        assert text in run.stdout
