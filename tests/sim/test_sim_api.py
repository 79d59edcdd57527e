"""The public API: labelled results, frames, speed, and no MPI in the driver."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd

from iotune.kernel_specs.vpic import vpic_pattern
from iotune.sim import load_system, paper_space, simulate_times


def test_result_is_labelled_simulated() -> None:
    r = simulate_times("perlmutter", vpic_pattern(256), {"stripe_count": [1, 8]}, noise=0.5,
                       rng=np.random.default_rng(0))
    assert r.backend == "sim" and r.system == "perlmutter" and r.noise == 0.5
    frame = r.to_frame()
    assert list(frame["backend"]) == ["sim", "sim"]
    assert list(frame["system"]) == ["perlmutter", "perlmutter"]
    assert np.allclose(frame["bandwidth_mib_s"] * frame["time_s"] * 2**20, r.total_bytes)


def test_system_object_or_path_accepted() -> None:
    hopper = load_system("hopper")
    a = simulate_times(hopper, vpic_pattern(128), None, noise=0)
    b = simulate_times("hopper", vpic_pattern(128), None, noise=0)
    assert a.time_s == b.time_s


def test_dataframe_in_row_order() -> None:
    space = paper_space(512)
    r = simulate_times("hopper", vpic_pattern(512), space, noise=0)
    one = simulate_times("hopper", vpic_pattern(512), space.iloc[[17]].reset_index(drop=True),
                         noise=0)
    assert r.time_s.shape == (len(space),)
    assert r.time_s[17] == one.time_s[0]


def test_hundred_thousand_configurations_evaluate_together() -> None:
    rng = np.random.default_rng(0)
    n = 100_000
    configs = pd.DataFrame({
        "stripe_count": rng.integers(1, 157, n),
        "stripe_size": rng.integers(1, 129, n) * 2**20,
        "cb_nodes": rng.integers(1, 343, n),
        "romio_cb_write": rng.choice(["enable", "disable", "automatic"], n),
    })
    r = simulate_times("hopper", vpic_pattern(8192), configs, rng=rng)
    assert r.time_s.shape == (n,) and np.all(np.isfinite(r.time_s))


def test_importing_the_simulator_loads_no_mpi() -> None:
    code = ("import sys, iotune.sim, iotune.sim.table3; "
            "bad = [m for m in ('mpi4py', 'h5py') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
