"""The race-rule oracle of ``benchmarks/landscapes_lib.py`` and the floor
``benchmarks/knowledge.py`` prints from it, on small landscapes written here."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.benchmarks.bench_modules import load_benchmark

lib = load_benchmark("landscapes_lib")
bench = load_benchmark("knowledge")

ALIGNED = {"alignment": 1048576}
STRIPED = {"alignment": 1048576, "stripe_count": 128, "stripe_size": 16777216}


def _landscape(folder: Path, name: str, runs: dict[str, tuple[dict, list[float]]]) -> object:
    rows = [{"cores": 512, **settings, "write_time": t}
            for settings, times in runs.values() for t in times]
    path = folder / f"{name}.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return lib.describe(path)


def test_three_runs_each_confirm_only_a_gain_whose_runs_all_beat_the_defaults(tmp_path):
    # The aligned configuration is the best by median (2.4x) but one of its three runs is
    # slower than every run of the default: at budget 6 (three runs each) the rank test
    # never confirms it. The striped one (1.5x) is slower by median and never overlaps.
    land = _landscape(tmp_path, "overlap", {
        "default": ({}, [10.0, 10.5, 9.5]),
        "aligned": (ALIGNED, [4.0, 4.2, 11.0]),
        "striped": (STRIPED, [6.6, 6.8, 6.7]),
    })
    oracle = lib.race_oracle(land, 6, 5)
    assert oracle.gain and oracle.seeds == 5
    assert oracle.best == 0  # the best by median is never confirmed
    assert oracle.most == 5 and oracle.any == 5  # the striped one always is


def test_a_file_without_a_gain_has_no_chance_and_a_clear_gain_is_always_confirmed(tmp_path):
    flat = _landscape(tmp_path, "flat", {
        "default": ({}, [10.0, 10.2, 9.9]),
        "aligned": (ALIGNED, [9.8, 10.1, 10.0]),
    })
    assert not lib.race_oracle(flat, 6, 3).gain
    clear = _landscape(tmp_path, "clear", {
        "default": ({}, [10.0, 11.0, 12.0, 10.5]),
        "aligned": (ALIGNED, [5.0, 5.2, 5.1, 5.3]),
    })
    assert lib.race_oracle(clear, 6, 4) == lib.RaceOracle(True, 4, 4, 4, 4)


def test_the_floor_line_says_when_the_target_is_below_it():
    found = {"a": lib.RaceOracle(True, 0, 10, 10, 10),  # only a clairvoyant pick confirms
             "b": lib.RaceOracle(True, 5, 5, 5, 10),
             "c": lib.RaceOracle(False, 0, 0, 0, 10)}  # no chance: not counted
    lines = bench.oracle_lines(found, 6, (1, 20), "cold B12")
    assert lines[0] == "oracle B6 (race rule, best known) missed 15/20 (75%)"
    assert lines[1] == "oracle B6 (race rule, most confirmable known) missed 5/20 (25%)"
    assert lines[2] == "oracle B6 (race rule, any) missed 5/20 (25%)"
    assert "misses 25.0% of chances or more; cold B12 misses 5.0%" in lines[3]
    assert lines[3].endswith("not reachable at this budget")
    assert bench.oracle_lines(found, 6, (6, 20), "cold B12")[3].endswith(
        "the target is above the floor")
