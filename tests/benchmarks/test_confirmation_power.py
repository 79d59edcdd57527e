"""``benchmarks/confirmation_power.py`` on a synthetic landscape written here: its test
is the race's, and noise lowers how often a gain can be confirmed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.benchmarks.bench_modules import load_benchmark

power = load_benchmark("confirmation_power")


def _landscape(path: Path) -> Path:
    """20 configurations, 6 repeats each at 8 ranks (log spread about 0.2); the default,
    recorded once, 1.5 s, is slower than every configuration but the two slowest."""
    rng = np.random.default_rng(1)
    rows = [{"cores": 8, "stripe_count": None, "write_time": 1.5}]
    for i in range(20):
        median = 0.6 + 0.05 * i
        rows += [{"cores": 8, "stripe_count": i + 1, "write_time": median * f}
                 for f in np.exp(rng.normal(0.0, 0.2, 6))]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_the_two_arm_test_needs_a_gain_beyond_the_noise():
    rng = np.random.default_rng(0)
    slow = 1.0 + rng.normal(0.0, 0.1, 8)
    assert power.confirmed(slow, slow - 0.5)  # 0.5 apart with spread 0.1: confirmed
    assert not power.confirmed(slow, slow.copy())  # no difference: never
    assert not power.confirmed(slow[:1], slow[:1] - 0.5)  # no degrees of freedom


def test_noise_lowers_the_share_confirmed(tmp_path, capsys):
    data = _landscape(tmp_path / "land.csv")
    assert power.main(["--data", str(data), "--budget", "12", "--factors", "1,4",
                       "--searches", "4", "--trials", "150", "--tune-seeds", "3"]) == 0
    out = capsys.readouterr().out
    assert "REPLAYED" in out and "SIMULATED" in out
    rows = [line.split() for line in out.splitlines()[2:]]
    share = {(r[0], r[2]): float(r[4]) for r in rows}
    assert set(share) == {(f, k) for f in ("1x", "4x") for k in ("4", "oracle", "tune")}
    # the real tune beside the bound: it races, and it never recommends one of the two
    # configurations slower than the default (they promise no 1.1x)
    tune_rows = [r for r in rows if r[2] == "tune"]
    assert all(float(r[5]) == 0.0 and 0.0 <= float(r[4]) <= 1.0 and float(r[3]) >= 1
               for r in tune_rows)
    assert share[("1x", "oracle")] > 0.9
    assert share[("4x", "4")] < share[("1x", "4")]
    assert share[("4x", "oracle")] < share[("1x", "oracle")]


def test_a_search_as_long_as_the_budget_is_refused(tmp_path):
    data = _landscape(tmp_path / "land.csv")
    with pytest.raises(SystemExit):
        power.main(["--data", str(data), "--budget", "10", "--searches", "10"])
    with pytest.raises(SystemExit):
        power.main(["--data", str(data), "--budget", "10", "--searches", "4",
                    "--tune-seeds", "-1"])
