"""``benchmarks/production_noise.py`` on two small production-like files written here: a
clear gain it must take, a flat file where it must keep the default, and its oracle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tests.benchmarks.bench_modules import load_benchmark

bench = load_benchmark("production_noise")


def _file(path: Path, gain: float) -> None:
    """512 ranks, the default and two configurations, six runs each, one run in six 2.5x
    slower (the production tail); the better configuration ``gain`` times faster."""
    rng = np.random.default_rng(2)
    rows = []
    for settings, centre in (({}, 100.0), ({"alignment": 1048576}, 100.0 / gain),
                             ({"alignment": 1048576, "stripe_count": 128,
                               "stripe_size": 16777216}, 104.0)):
        times = centre * np.exp(rng.normal(0, 0.05, 6))
        times[int(rng.integers(6))] *= 2.5
        rows += [{"cores": 512, **settings, "write_time": float(t)} for t in times]
    pd.DataFrame(rows).to_csv(path, index=False)


def test_it_takes_a_clear_gain_keeps_the_default_on_a_flat_file_and_says_so(tmp_path,
                                                                           capsys):
    _file(tmp_path / "gain.csv", 4.0)
    _file(tmp_path / "flat.csv", 1.0)
    assert bench.main(["--data-dir", str(tmp_path), "--budgets", "12", "--seeds", "3",
                       "--oracle-trials", "200"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()
            if line.strip().startswith(("gain", "flat"))}
    # file, slower, missed, kept, gain, oracle
    assert rows["gain"][1] == "0" and rows["gain"][2] == "0/3" and float(rows["gain"][5]) > 0.9
    assert float(rows["gain"][4]) > 3  # the 4x gain, despite the one slow run in six
    assert rows["flat"][3] == "3"  # the default kept in every seed
    assert "PASS  budget 12: slower <= 1% of all seeds" in out
    assert "REPLAYED" in out


def test_the_oracle_draws_as_the_replay_backend_does():
    rng = np.random.default_rng(0)
    draws = bench.replay_draws([1.0, 2.0, 3.0], 6, rng)
    assert sorted(draws[:3]) == [1.0, 2.0, 3.0] and sorted(draws[3:]) == [1.0, 2.0, 3.0]
    assert bench.welch_confirms(np.array([10.0, 11.0, 10.5]), np.array([5.0, 5.2, 5.1]))
    assert not bench.welch_confirms(np.array([5.0, 5.2, 5.1]), np.array([10.0, 11.0, 10.5]))
