"""``benchmarks/production_ceiling.py``: the seeds a rule within the risk bound can get
right, on files written here where the first runs decide it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.benchmarks.bench_modules import load_benchmark

bench = load_benchmark("production_ceiling")
HEADER = ("cores,stripe_count,stripe_size,cb_nodes,cb_buffer_size,romio_cb_write,"
          "romio_cb_read,alignment,coll_metadata,write_time")
DEFAULT = [10.0, 10.4, 9.7]


def _write(path: Path, changed: list[float]) -> Path:
    rows = [f"512,,,,,,,,,{t}" for t in DEFAULT]
    rows += [f"512,,,,,,,1048576,,{t}" for t in changed]
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def test_the_default_runs_say_how_likely_a_first_run_is_from_a_slower_configuration():
    assert bench.p_slower_by_default_runs(5.0, DEFAULT) == 0.0
    assert bench.p_slower_by_default_runs(30.0, DEFAULT) == 1.0
    # At 1.1x the default's fastest run, that run alone is as fast: one in three.
    assert bench.p_slower_by_default_runs(1.1 * 9.7, DEFAULT) == 1 / 3


def test_a_best_whose_slow_run_comes_first_is_out_of_reach_in_those_seeds(tmp_path, capsys):
    _write(tmp_path / "outlier.csv", [5.0, 5.2, 30.0])  # 2x, one run 6x its siblings
    _write(tmp_path / "clean.csv", [5.0, 5.2, 5.1])
    _write(tmp_path / "flat.csv", [10.5, 10.6, 10.2])  # nothing better: the default is right
    _write(tmp_path / "middle.csv", [8.6, 8.7, 8.8])  # 1.17x: the bar does not judge it
    assert bench.main(["--data-dir", str(tmp_path), "--seeds", "20", "--jobs", "40"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "REPLAYED" in lines[0]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:-1]}
    # Only a file below the bar gets a row: here the outlier one, capped by its first runs.
    assert set(rows) == {"outlier"}
    gain, ceiling, rule = rows["outlier"]
    assert gain == f"{10.0 / 5.2:.2f}x"  # the medians
    within, seeds = map(int, ceiling.split("/"))
    correct = int(rule.split("/")[0])
    assert seeds == 20 and 0 < within < 18
    assert correct <= within  # the rule cannot beat what its first runs allow
    assert re.fullmatch(bench.SUMMARY, lines[-1])
    assert lines[-1].startswith("summary: 3 judged files; below the bar 1 by the first runs")
