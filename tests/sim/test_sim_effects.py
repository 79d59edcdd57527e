"""Each qualitative effect the model must show, on the simulated Hopper (noise off)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from iotune.kernel_specs.ior import ior_pattern
from iotune.kernel_specs.vpic import vpic_pattern
from iotune.sim import Pattern, model_breakdown, simulate_times

MIB = 2**20


def bandwidth(pattern: Pattern, configs: dict[str, Any], system: str = "hopper") -> np.ndarray:
    return simulate_times(system, pattern, configs, noise=0.0).bandwidth_mib_s


def test_more_stripes_are_faster_until_saturation() -> None:
    counts = [1, 2, 4, 8, 16, 32, 64, 96, 128, 156]
    bw = bandwidth(vpic_pattern(512), {"stripe_count": counts, "cb_nodes": 22,
                                       "stripe_size": 4 * MIB})
    assert np.all(np.diff(bw[:5]) > 0)  # 1 -> 16 stripes: each step faster
    assert bw[4] > 8 * bw[0]
    assert bw[-1] < 1.15 * bw[6]  # 64 -> 156 stripes: saturated


def test_starving_stripes_at_scale() -> None:
    bw = bandwidth(vpic_pattern(8192), {"stripe_count": [2, 16, 156], "cb_nodes": 342,
                                        "stripe_size": 16 * MIB})
    assert bw[0] < bw[1] < bw[2]
    assert bw[2] > 20 * bw[0]


def test_tiny_stripes_are_slower() -> None:
    sizes = [64 * 1024, 256 * 1024, MIB, 4 * MIB]
    bw = bandwidth(vpic_pattern(2048), {"stripe_size": sizes, "stripe_count": 128,
                                        "cb_nodes": 64})
    assert bw[0] < bw[1] < bw[2] <= bw[3]
    assert bw[0] < 0.7 * bw[2]


def test_one_aggregator_is_much_slower_than_one_per_node_at_scale() -> None:
    nodes = 342
    bw = bandwidth(vpic_pattern(8192), {"cb_nodes": [1, nodes, 4 * nodes],
                                        "stripe_count": 156, "stripe_size": 16 * MIB})
    assert bw[1] > 10 * bw[0]
    assert bw[2] < 1.1 * bw[1]  # more than one per node buys little


def test_aggregators_misaligned_with_stripes_contend_for_locks() -> None:
    pattern = vpic_pattern(2048)
    configs = {"cb_nodes": [64, 86], "stripe_count": 128, "stripe_size": MIB}
    detail = model_breakdown("hopper", pattern, configs)
    assert list(detail.writers_per_object) == [1.0, 43.0]
    bw = bandwidth(pattern, configs)
    assert bw[1] < bw[0]


def test_independent_writers_sharing_objects_contend_for_locks() -> None:
    shared = ior_pattern(1024, 2**30, transfer_size=MIB)
    per_process = ior_pattern(1024, 2**30, transfer_size=MIB, file_per_process=True)
    configs = {"stripe_count": 4}
    many = model_breakdown("hopper", shared, configs)
    alone = model_breakdown("hopper", per_process, configs)
    assert float(many.writers_per_object) == 1024 and float(alone.writers_per_object) == 1
    assert float(many.ost_efficiency) < 0.2 < 0.8 < float(alone.ost_efficiency)
    vpic = [model_breakdown("hopper", vpic_pattern(cores), {"romio_cb_write": "disable"})
            for cores in (128, 8192)]
    assert float(vpic[1].writers_per_object) > float(vpic[0].writers_per_object)
    assert float(vpic[1].ost_efficiency) < float(vpic[0].ost_efficiency)


def test_wider_striping_costs_at_open() -> None:
    detail = model_breakdown("hopper", vpic_pattern(512), {"stripe_count": [1, 16, 156]})
    assert detail.open_s[0] < detail.open_s[1] < detail.open_s[2]
    result = simulate_times("hopper", vpic_pattern(512), {"stripe_count": [1, 156]}, noise=0)
    assert result.open_s[1] > result.open_s[0]


def test_default_is_much_worse_than_the_best_at_8192_cores() -> None:
    from iotune.sim.space import paper_space

    pattern = vpic_pattern(8192)
    best = simulate_times("hopper", pattern, paper_space(8192), noise=0.0).bandwidth_mib_s.max()
    default = simulate_times("hopper", pattern, None, noise=0.0).bandwidth_mib_s
    assert best > 20 * float(default)


def test_automatic_follows_romio_and_writes_independently_here() -> None:
    detail = model_breakdown("hopper", vpic_pattern(512),
                             {"romio_cb_write": ["enable", "automatic", "disable"]})
    assert list(detail.two_phase) == [True, False, False]


def test_posix_and_file_per_process_never_buffer_collectively() -> None:
    configs = {"romio_cb_write": "enable", "collective": True}
    for pattern in (ior_pattern(64, 64 * MIB, transfer_size=MIB),
                    ior_pattern(64, 64 * MIB, api="mpiio", file_per_process=True)):
        assert not model_breakdown("hopper", pattern, configs).two_phase


def test_bigger_collective_buffer_means_fewer_rounds() -> None:
    bw = bandwidth(vpic_pattern(8192), {"cb_buffer_size": [MIB, 16 * MIB], "cb_nodes": 342,
                                        "stripe_count": 156})
    assert bw[0] < bw[1]


@pytest.mark.parametrize("system", ["hopper", "perlmutter"])
def test_times_are_positive_and_finite_over_a_wide_grid(system: str) -> None:
    counts = np.array([1, 2, 7, 64, 156, 400])[:, None, None]
    sizes = np.array([64 * 1024, MIB, 3 * MIB, 256 * MIB])[None, :, None]
    aggs = np.array([1, 3, 43, 1000, 100000])[None, None, :]
    for pattern in (vpic_pattern(1000), ior_pattern(100, 8 * MIB, transfer_size=4096),
                    ior_pattern(4096, MIB, file_per_process=True, transfer_size=MIB)):
        r = simulate_times(system, pattern, {"stripe_count": counts, "stripe_size": sizes,
                                             "cb_nodes": aggs}, noise=0.0)
        assert r.time_s.shape == (6, 4, 5)
        assert np.all(np.isfinite(r.time_s)) and np.all(r.time_s > 0)
