"""``benchmarks/production_jobs.py``: its fixed interface and last line, on landscapes
written here where the right answer is known."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = re.compile(r"summary: correct (\d+)/(\d+); slower jobs ([0-9.]+)%; settled after "
                     r"([0-9.]+) jobs \(median\); regret (-?[0-9.]+)%")


def _write(path: Path, times: dict[str, list[float]]) -> Path:
    lines = ["cores,stripe_count,stripe_size,cb_nodes,cb_buffer_size,romio_cb_write,"
             "romio_cb_read,alignment,coll_metadata,write_time"]
    cells = {"default": ",,,,,,,", "fast": ",,,,,,1048576,", "slow": "128,16777216,,,,,1048576,"}
    for name, values in times.items():
        lines += [f"512,{cells[name]},{t}" for t in values]
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(data: Path, seeds: int, jobs: int, *more: str) -> list[str]:
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "production_jobs.py"),
                          "--data", str(data), "--seeds", str(seeds), "--jobs", str(jobs),
                          *more],
                         capture_output=True, text=True, check=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return out.stdout.splitlines()


def test_a_clear_gain_is_found_and_a_slow_configuration_tried_once(tmp_path: Path) -> None:
    data = _write(tmp_path / "land.csv", {"default": [10.0, 10.4, 9.7, 10.9],
                                          "fast": [6.0, 6.3, 5.8], "slow": [25.0, 27.0, 24.0]})
    # The production runs alone: every configuration in file order.
    lines = _run(data, 4, 30, "--tune-budget", "0")
    assert "file order, no tune's estimate" in lines[1]
    assert len([line for line in lines if line.startswith("seed ")]) == 4
    found = SUMMARY.fullmatch(lines[-1])
    assert found, lines[-1]
    correct, seeds, slower, settled, regret = found.groups()
    assert (correct, seeds) == ("4", "4")
    assert float(slower) == round(100 / 30, 1)  # the slow one tried once per seed
    assert float(settled) <= 15
    assert 0 < float(regret) < 40
    # From a tune's tuned file (the default): it offers the fast one, never the slow one.
    lines = _run(data, 4, 30)
    assert "as a tune of budget 12 hands them over" in lines[1]
    found = SUMMARY.fullmatch(lines[-1])
    assert found and found.group(1) == "4" and float(found.group(3)) == 0.0


def test_nothing_better_keeps_the_default(tmp_path: Path) -> None:
    data = _write(tmp_path / "flat.csv", {"default": [10.0, 10.4, 9.7],
                                          "fast": [11.5, 12.0, 11.8]})
    lines = _run(data, 3, 20)
    assert all("recommends default" in line for line in lines if line.startswith("seed "))
    found = SUMMARY.fullmatch(lines[-1])
    assert found and found.group(1) == "3"


def test_after_a_tune_the_jobs_draw_on_a_stream_of_their_own() -> None:
    from iotune.backends.replay import replay_index
    from tests.benchmarks.bench_modules import load_benchmark

    bench = load_benchmark("production_jobs")
    key = "ab" * 32
    for seed in range(5):
        jobs = [bench.job_draw(5, seed, key, rep) for rep in range(10)]
        assert sorted(jobs[:5]) == list(range(5)) and jobs[5:] == jobs[:5]  # each run once
    # Not the tune's permutation: which run a job gets says nothing of which the tune got.
    assert any([bench.job_draw(5, s, key, r) for r in range(5)]
               != [replay_index(5, s, key, r) for r in range(5)] for s in range(5))
