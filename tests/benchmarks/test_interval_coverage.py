"""``benchmarks/interval_coverage.py`` through the real tune on small simulated landscapes:
the intervals it prints hold the truth at about their level and none is a point."""

from __future__ import annotations

import re

from tests.benchmarks.bench_modules import load_benchmark

bench = load_benchmark("interval_coverage")


def test_heavy_noise_rows_cover_and_none_is_a_point(capsys):
    # log sd 1.0, a flat landscape (the case that printed whole tables of points) and a
    # spread one, budget 12, three tunes each
    assert bench.main(["--noise", "1.0", "--landscapes", "1", "--budgets", "12",
                       "--seeds", "3"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    found = re.fullmatch(bench.SUMMARY.strip("^$"), out[-1])
    assert found, out[-1]
    rows_covered, rows, gains_covered, gains, zero = map(int, re.findall(r"\d+", out[-1]))
    assert rows >= 12 and rows_covered / rows >= 0.8
    assert zero == 0
    assert gains_covered <= gains
    assert any(line.startswith("simulated, log sd 1") for line in out)


def test_a_check_covers_only_inside_its_bounds():
    inside = bench.Check("g", "rows", 1.0, 2.0, 1.5)
    outside = bench.Check("g", "rows", 1.0, 2.0, 2.5)
    unbounded = bench.Check("g", "rows", None, None, 1.5)
    point = bench.Check("g", "rows", 0.35631, 0.35634, 1.0)  # prints 0.3563-0.3563
    assert inside.covers and not outside.covers and not unbounded.covers
    assert point.zero_width and not inside.zero_width and not unbounded.zero_width
    assert bench.summary([inside, outside, unbounded, point]) == \
        "summary: rows 1/3; speedups 0/0; zero-width 1"


def test_simulated_landscapes_have_the_truth_they_promise(tmp_path):
    import pandas as pd

    flat = pd.read_csv(bench.write_simulated(tmp_path, 0.5, True, 3))
    spread = pd.read_csv(bench.write_simulated(tmp_path, 0.5, False, 3))
    assert len(flat) == 10 * bench.SIM_REPEATS == len(spread)
    for frame in (flat, spread):
        logs = frame.groupby(["stripe_count", "romio_cb_write"], dropna=False)["write_time"]
        assert logs.count().eq(bench.SIM_REPEATS).all()
    # a flat landscape's configurations differ only by noise: their log medians lie
    # within a few standard errors of the default's
    medians = flat.groupby(["stripe_count", "romio_cb_write"], dropna=False)[
        "write_time"].median()
    import numpy as np

    assert np.ptp(np.log(medians.to_numpy())) < 6 * 0.5 * 1.25 / np.sqrt(bench.SIM_REPEATS)
