"""``benchmarks/production_vs_dedicated.py`` on two small production-like files: one row
per file with each method's correct rate, slower share and median gain, and an overall row."""

from __future__ import annotations

import re

from tests.benchmarks.bench_modules import load_benchmark
from tests.benchmarks.test_production_noise import _file

bench = load_benchmark("production_vs_dedicated")
CELL = r"\s*(\d+)/(\d+)\s+([0-9.]+)%\s+([0-9.]+)\s*"


def test_one_row_per_file_with_each_methods_figures(tmp_path, capsys):
    _file(tmp_path / "gain.csv", 4.0)
    _file(tmp_path / "flat.csv", 1.0)
    assert bench.main(["--data-dir", str(tmp_path), "--seeds", "3", "--jobs", "30",
                       "--budgets", "12"]) == 0
    out = capsys.readouterr().out
    assert "REPLAYED" in out.splitlines()[0]
    rows = {}
    for line in out.splitlines()[3:]:
        name, cells = line[:30].strip(), line[30:].split("|")
        rows[name] = [re.fullmatch(CELL, cell).groups() for cell in cells]
    assert set(rows) == {"flat", "gain", "all files"}
    production, dedicated = rows["gain"]
    assert dedicated[:2] == ("3", "3")
    # Production, from the tune's tuned file (its order, its estimate of the best found):
    # every seed ends on the 4x configuration. From the production runs alone one did not:
    # both first trials drew their slow run (one in six) and the risk bound held them back.
    assert production[:2] == ("3", "3")
    assert float(production[3]) > 3 and float(dedicated[3]) > 3  # the 4x gain, both ways
    assert float(dedicated[2]) == 0.0
    # Flat: the default is as good as anything, and it is kept.
    assert all(float(cell[3]) == 1.0 for cell in rows["flat"])
    assert rows["all files"][0][:2] == ("6", "6") and rows["all files"][1][:2] == ("6", "6")


def test_a_column_pools_files_by_seeds():
    a = bench.Column(2, 4, 0.5, (1.0, 2.0, 3.0, 4.0))
    b = bench.Column(1, 2, 0.0, (5.0, 6.0))
    both = bench.pooled([a, b])
    assert (both.correct, both.seeds) == (3, 6)
    assert abs(both.slower - 2 / 6) < 1e-12 and both.gain == 3.5
