"""The kernel specs: each kernel's bytes, simulated pattern and Darshan signature agree,
and a kernel without a feature fails with one clear line wherever the feature is asked for."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import iotune
from iotune.backends.sim import sim_pattern
from iotune.darshan.analytic import Candidate, kernel_file
from iotune.darshan.search import decode, genes_for, rank_bytes
from iotune.errors import ConfigError
from iotune.kernel_specs import (
    KERNELS,
    Feature,
    KernelFeatureError,
    KernelSpec,
    get_kernel,
    kernels_with,
    metric_of,
    own_metric_of,
)
from iotune.kernel_specs.vpic import vpic_pattern
from iotune.settings.metrics import Metric
from iotune.sim import Pattern
from iotune.workload.counters import FileCounters
from iotune.workload.genes import LogHints

KiB, MiB = 2**10, 2**20
IOR_ARGS = [
    {"api": "posix", "block_size": 4 * MiB, "transfer_size": MiB, "segments": 3},
    {"api": "mpiio", "block_size": MiB, "transfer_size": 64 * KiB, "segments": 1,
     "file_per_process": True},
    {"api": "hdf5", "block_size": 2 * MiB, "transfer_size": 256 * KiB, "segments": 2,
     "verify": True},
]
VPIC_ARGS = [{"particles_per_rank": 4096}, {"particles_per_rank": 2**20, "fsync": False}]


def _data_writes(fc: FileCounters, api: str) -> tuple[float, float]:
    """(bytes, requests) of data one rank wrote: HDF5 adds metadata to the POSIX counters,
    its H5D counters have none."""
    if api == "hdf5":
        moved, requests = fc.h5d["H5D_BYTES_WRITTEN"], fc.h5d["H5D_WRITES"]
    else:
        moved, requests = fc.posix["POSIX_BYTES_WRITTEN"], fc.posix["POSIX_WRITES"]
    return moved / fc.ranks, requests / fc.ranks


def _signed(kernel: str, args: Mapping[str, Any], ranks: int) -> FileCounters:
    """The signature of ``kernel`` with its default ``collective`` setting."""
    return kernel_file(Candidate(kernel, args, get_kernel(kernel).collective_default, ranks))


def _ior_layout(params: dict[str, Any], pattern: Pattern, fc: FileCounters, ranks: int,
                per_rank: int) -> None:
    # One request per transfer, of the transfer size, in the signature as in the pattern.
    assert pattern.calls == per_rank // params["transfer_size"]
    assert pattern.bytes_per_call == params["transfer_size"]
    assert (pattern.api, pattern.file_per_process) == (params["api"],
                                                       params["file_per_process"])
    assert fc.ranks == (1 if params["file_per_process"] else ranks) and fc.nprocs == ranks
    assert bool(fc.mpiio) == pattern.uses_mpiio and bool(fc.h5d) == (pattern.api == "hdf5")
    assert bool(fc.posix.get("POSIX_READS")) == params["verify"]


def _vpic_layout(params: dict[str, Any], pattern: Pattern, fc: FileCounters, ranks: int,
                 per_rank: int) -> None:
    # One slab per dataset and rank: 8 collective writes of 4 bytes per particle.
    assert pattern.calls == 8
    assert pattern.bytes_per_call == per_rank // 8 and fc.datasets == 8
    assert (pattern.api, pattern.collective) == ("hdf5", True)
    assert fc.mpiio["MPIIO_COLL_WRITES"] == 8 * ranks


#: Per kernel: its bytes per rank from its parameters, and the checks of its own layout.
LAYOUTS = {
    "ior": (lambda params: params["block_size"] * params["segments"], _ior_layout),
    "vpic": (lambda params: 32 * params["particles_per_rank"], _vpic_layout),
}
SPEC_CASES = [
    *(pytest.param("ior", args, ranks, id=f"ior-{args['api']}-{ranks}")
      for args in IOR_ARGS for ranks in (1, 8)),
    *(pytest.param("vpic", args, ranks, id=f"vpic-{args['particles_per_rank']}-{ranks}")
      for args in VPIC_ARGS for ranks in (1, 16)),
]


@pytest.mark.parametrize(("kernel", "args", "ranks"), SPEC_CASES)
def test_bytes_pattern_and_signature_agree(kernel: str, args: dict[str, Any], ranks: int) -> None:
    spec = get_kernel(kernel)
    params = spec.normalise_params(args)
    pattern = spec.sim_pattern(ranks, params)
    fc = _signed(kernel, args, ranks)
    bytes_per_rank, check_layout = LAYOUTS[kernel]
    per_rank = bytes_per_rank(params)
    assert spec.bytes_per_rank(params) == pattern.bytes_per_rank == per_rank
    # The data writes in the signature are the pattern's calls (HDF5 counted at its H5D layer).
    assert _data_writes(fc, pattern.api) == (per_rank, pattern.calls)
    check_layout(params, pattern, fc, ranks, per_rank)


def test_vpic_timesteps_multiply_the_bytes_everywhere() -> None:
    spec = get_kernel("vpic")
    one, three = ({"particles_per_rank": 1024, "timesteps": t} for t in (1, 3))
    assert spec.bytes_per_rank(three) == 3 * spec.bytes_per_rank(one) == 3 * 32 * 1024
    assert spec.sim_pattern(4, three).bytes_per_rank == spec.bytes_per_rank(three)
    assert _data_writes(_signed("vpic", three, 4), "hdf5") == (3 * 32 * 1024, 3 * 8)


@pytest.mark.parametrize("kernel", ["ior", "vpic"])
def test_collective_default_is_one_value_for_sim_and_darshan(kernel: str) -> None:
    spec = get_kernel(kernel)
    default = spec.collective_default
    assert spec.pattern_defaults().collective == default
    assert spec.pattern(4, MiB).collective == default
    args = {"api": "mpiio"} if kernel == "ior" else {}
    assert Candidate(kernel, args, default, 4).settings() == {}
    assert Candidate(kernel, args, not default, 4).settings() == {"collective": not default}


def test_backend_pattern_is_the_spec_pattern_on_whole_nodes() -> None:
    params = get_kernel("ior").normalise_params(IOR_ARGS[0])
    assert sim_pattern("ior", 48, params, 24) == get_kernel("ior").sim_pattern(48, params, 2)
    assert vpic_pattern(64, 1024) == get_kernel("vpic").sim_pattern(
        64, {"particles_per_rank": 1024})


@pytest.mark.parametrize("kernel", ["ior", "vpic"])
def test_match_variants_are_sized_like_the_application(kernel: str) -> None:
    spec = get_kernel(kernel)
    variants = spec.match_variants(64 * KiB, 8, access="both", syncs=False)
    assert len({v.name for v in variants}) == len(variants) > 1
    for variant in variants:
        args = spec.normalise_params(variant.args)
        fc = spec.darshan_file(args, 4, variant.collective)
        assert fc.posix["POSIX_ACCESS1_ACCESS"] == 64 * KiB
        assert fc.posix["POSIX_READS"] > 0 and not fc.posix.get("POSIX_FSYNCS")


@pytest.mark.parametrize("kernel", ["ior", "vpic"])
def test_a_seeded_genome_decodes_to_the_seeded_request_size(kernel: str) -> None:
    spec = get_kernel(kernel)
    hints = LogHints(sizes=(4096,), requests_per_rank=8, ranks=4)
    genes = spec.proxy_genes(hints)
    seeded = spec.proxy_seed(4096, hints)
    genome = [g.values.index(seeded[g.name]) if g.name in seeded else 0 for g in genes]
    candidate = decode(kernel, genes, genome, hints.ranks)
    args = spec.normalise_params(candidate.args)
    assert rank_bytes(candidate) == spec.bytes_per_rank(args)
    fc = kernel_file(candidate)
    assert fc.posix["POSIX_ACCESS1_ACCESS"] == 4096


def test_unknown_kernel_is_the_same_one_line_error() -> None:
    with pytest.raises(ConfigError) as info:
        get_kernel("hacc", "kernel.name")
    assert str(info.value) == ("kernel.name: unknown kernel 'hacc'; known kernels: ior, vpic "
                               "(your own program: kernel: {command: ...} or --command)")


def test_every_bundled_kernel_has_every_feature() -> None:
    for feature in Feature:
        assert kernels_with(feature) == ("ior", "vpic")


class CommandKernel(KernelSpec):
    """A user's program: it knows its bytes, nothing iotune can simulate or sign."""

    def bytes_per_rank(self, params: Mapping[str, Any]) -> int:
        return 4096


@pytest.fixture
def command_kernel(monkeypatch: pytest.MonkeyPatch) -> KernelSpec:
    spec = CommandKernel("mycmd", "mycmd.sh", "a user's command")
    monkeypatch.setitem(KERNELS, "mycmd", spec)
    return spec


def test_a_kernel_without_features_says_so_in_one_line(command_kernel: KernelSpec) -> None:
    assert not any(command_kernel.supports(f) for f in Feature)
    assert "mycmd" not in kernels_with(Feature.SIMULATION)
    with pytest.raises(KernelFeatureError) as info:
        sim_pattern("mycmd", 4, {}, 2)
    assert str(info.value) == ("kernel 'mycmd' has no simulated access pattern "
                               "(only ior, vpic have one)")
    with pytest.raises(KernelFeatureError, match=r"^kernel 'mycmd' has no Darshan signature"):
        kernel_file(Candidate("mycmd", {}, False, 4))
    with pytest.raises(KernelFeatureError, match=r"^kernel 'mycmd' has no proxy search space"):
        genes_for("mycmd", LogHints((4096,), 1, 4))
    with pytest.raises(KernelFeatureError, match=r"^kernel 'mycmd' has no simulated access"):
        command_kernel.pattern(4, MiB)
    assert command_kernel.bytes_per_rank({}) == 4096


def test_a_feature_is_implemented_whole_or_not_at_all() -> None:
    with pytest.raises(TypeError, match="implements SIMULATION partly; it also needs "
                                        "pattern_defaults"):
        class HalfSimulated(KernelSpec):
            def bytes_per_rank(self, params: Mapping[str, Any]) -> int:
                return 1

            def sim_pattern(self, ranks: int, params: Mapping[str, Any],
                            nodes: int | None = None) -> Pattern:
                return vpic_pattern(ranks)


def test_the_spec_owns_its_metric(command_kernel: KernelSpec) -> None:
    """A kernel's runs are timed by the target unless its spec says what they measure; a
    record of a kernel this installation does not know is timed by its target too."""
    assert metric_of("vpic", {}, "read") == Metric(
        "read-back open to close (max over ranks); the file was written untimed before")
    assert get_kernel("ior").own_metric({}) is None
    assert metric_of("mycmd", {}, "write") == Metric("write open to close (max over ranks)")
    bandwidth = {"command": "ior -w", "metric": "regex:Max Write: ([0-9.]+)",
                 "metric_label": "IOR Max Write", "metric_unit": "MiB/s"}
    assert metric_of("command", bandwidth, "write") == Metric("IOR Max Write", "MiB/s")
    assert own_metric_of("command", {"command": "prog", "metric": "io_time"}) == Metric(
        "the slowest rank's time in MPI-IO write calls (preload library)")
    assert own_metric_of("retired-kernel", bandwidth) is None


class OwnMetricKernel(CommandKernel):
    def own_metric(self, params: Mapping[str, Any]) -> Metric | None:
        return Metric("frames written", "MiB/s")


def test_a_new_kernel_brings_its_metric_without_a_switch_elsewhere(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KERNELS, "frames", OwnMetricKernel("frames", "f.sh", "frames"))
    assert metric_of("frames", {}, "total") == Metric("frames written", "MiB/s")


def test_no_module_outside_the_specs_switches_on_a_kernel_name() -> None:
    """The kernel specs own what differs between kernels: no ``kernel == "..."`` (nor
    ``doc.get("kernel") == "..."``) elsewhere."""
    root = Path(iotune.__file__).parent
    found = [f"{path.relative_to(root)}:{n}" for path in root.rglob("*.py")
             if "kernel_specs" not in path.parts
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"""kernel["')\]]*\s*[!=]=\s*["']""", line)]
    assert found == []
