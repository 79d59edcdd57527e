"""How fast the simulated Lustre system evaluates configurations (a script, not a test).

Builds 10^5 random configurations (stripe count, stripe size, aggregators, buffer size,
``romio_cb_write`` as strings) as a pandas DataFrame and times ``simulate_times`` on them,
validation and noise included, for VPIC-IO at 8192 cores on the ``hopper`` preset. Target:
10^5 configurations in under 1 s. Prints the best of ``--repeat`` runs.

    python benchmarks/sim_speed.py [--configs 100000] [--repeat 5] [--system hopper]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from quick_mode import add_quick, apply_quick

from iotune.kernel_specs.vpic import vpic_pattern
from iotune.settings.units import MIB
from iotune.sim import simulate_times

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"sim_speed: \d+ configurations on .* configurations/s; target < 1 s for 100000"


def random_configs(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` configurations spread over the ranges a tuner explores."""
    return pd.DataFrame({
        "stripe_count": rng.integers(1, 157, n),
        "stripe_size": rng.choice([1, 2, 4, 8, 16, 32, 64, 96, 128], n) * MIB,
        "cb_nodes": rng.integers(1, 343, n),
        "cb_buffer_size": rng.choice([1, 4, 16, 64], n) * MIB,
        "romio_cb_write": rng.choice(["enable", "disable", "automatic"], n),
    })


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--system", default="hopper")
    add_quick(parser, "10^4 configurations, one run")
    args = apply_quick(parser, parser.parse_args(argv), configs=10_000, repeat=1)
    rng = np.random.default_rng(0)
    configs = random_configs(args.configs, rng)
    pattern = vpic_pattern(8192)
    simulate_times(args.system, pattern, configs.head(10), rng=rng)  # warm up imports
    best = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = simulate_times(args.system, pattern, configs, noise=1.0, rng=rng)
        best = min(best, time.perf_counter() - start)
    assert result.time_s.shape == (args.configs,)
    print(f"sim_speed: {args.configs} configurations on '{args.system}' (VPIC-IO, 8192 ranks, "
          f"noise on) in {best:.3f} s (best of {args.repeat}): "
          f"{args.configs / best:,.0f} configurations/s; target < 1 s for 100000: "
          f"{'met' if best * 100_000 / args.configs < 1.0 else 'MISSED'}")


if __name__ == "__main__":
    main()
