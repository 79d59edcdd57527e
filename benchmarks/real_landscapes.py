"""Every strategy on real measured landscapes, through ``iotune tune --backend replay``'s code.

For every CSV in a folder (default ``../shared/data/landscapes`` beside the repository, or
``--data``), every strategy, every budget and every seed, this runs :func:`iotune.tune.tune`
exactly as ``iotune tune --backend replay --replay-data FILE --cores N --budget B
--strategy S --fresh`` does (a fresh store per tune, replayed draws seeded by the seed) at
the landscape's largest recorded scale, with no training data. It prints, per landscape,
strategy and budget, the median and the worst over the seeds of

- *found*: best true time / true time of the best configuration the search evaluated;
- *chosen*: best true time / true time of the configuration the tune reports as best found
  (after the race), whether or not it is recommended over the default;

where the true time of a configuration is the median of its recorded repeats, and the best
is over every recorded configuration. ``default`` counts the seeds in which the tune
recommended the default configuration (nothing beat it with confidence), ``runs`` the mean
number of replayed runs. A second table says, per landscape, what its run-to-run noise lets
any search tell apart (:func:`noise_limits`). All numbers are REPLAYED measurements.

    python benchmarks/real_landscapes.py                       # 20 seeds, budgets 10 20 30
    python benchmarks/real_landscapes.py --seeds 5 --budgets 15,30 --strategies model,random
    python benchmarks/real_landscapes.py --data my-landscapes/ --format csv
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "landscapes"
STRATEGIES = ("model", "random", "genetic", "tpe")
BUDGETS = (10, 20, 30)


@dataclass(frozen=True)
class Job:
    data: Path
    strategy: str
    budget: int
    seed: int
    options: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Outcome:
    job: Job
    found: float
    chosen: float
    recommended_default: bool
    runs: int


def run_one(job: Job) -> Outcome:
    """One ``tune --backend replay --fresh`` of ``job`` in a fresh store, judged by the truth."""
    from iotune.backends.replay import ReplayBackend
    from iotune.config import build_config
    from iotune.store import Store
    from iotune.tune import tune

    with tempfile.TemporaryDirectory(prefix="iotune-bench-") as tmp:
        config = build_config({
            "kernel": {"name": "vpic"},
            "backend": {"name": "replay", "replay_data": str(job.data)},
            "tune": {"seed": job.seed},
            "store": str(Path(tmp) / "store.jsonl"),
        }, Path(tmp))
        backend = ReplayBackend(config)
        cores = backend.scales()[-1]
        truth = {key: r.median for key, r in backend.table.items() if r.cores == cores}
        best = min(r.median for r in backend.recorded(cores) if r.settings)
        result = tune(config, backend, Store(config.store), kernel="vpic", cores=cores,
                      strategy=job.strategy, budget=job.budget, fresh=True,
                      strategy_options=dict(job.options))

    evaluated = [truth[e.key] for e in result.evaluations]
    reported = result.best
    chosen = best / truth[reported.key] if reported is not None else 0.0
    return Outcome(job, best / min(evaluated) if evaluated else 0.0, chosen,
                   result.choice.recommend_default, result.runs)


def summarise(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str, int], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.job.data.stem, o.job.strategy, o.job.budget), []).append(o)
    rows = []
    for (land, strategy, budget), items in sorted(groups.items()):
        found = [o.found for o in items]
        chosen = [o.chosen for o in items]
        rows.append({
            "landscape": land, "strategy": strategy, "budget": budget, "seeds": len(items),
            "found_median": round(statistics.median(found), 3), "found_worst": round(min(found), 3),
            "chosen_median": round(statistics.median(chosen), 3),
            "chosen_worst": round(min(chosen), 3),
            "default": sum(o.recommended_default for o in items),
            "runs": round(statistics.fmean(o.runs for o in items), 1),
        })
    return rows


def noise_limits(data: Path) -> dict[str, Any]:
    """What a landscape's run-to-run noise lets any search tell apart, at its largest scale:
    the pooled standard deviation of log times over configurations with repeats, how many
    configurations lie within 2% and 5% of the best true time, and the runs each of two
    configurations needs for a one-sided 90% test to tell a 5% difference (``2 (z s /
    log 1.05)^2``). A chosen ratio above ``1/1.05`` is out of reach of a race that cannot
    afford that many runs, whatever the search."""
    import math

    from iotune.backends.replay import ReplayBackend
    from iotune.config import build_config

    with tempfile.TemporaryDirectory(prefix="iotune-bench-") as tmp:
        backend = ReplayBackend(build_config({
            "kernel": {"name": "vpic"},
            "backend": {"name": "replay", "replay_data": str(data)},
            "store": str(Path(tmp) / "store.jsonl")}, Path(tmp)))
    groups = [r.times for r in backend.recorded(backend.scales()[-1]) if r.settings]
    squares, df = 0.0, 0
    for times in groups:
        logs = [math.log(t) for t in times]
        if len(logs) > 1:
            centre = statistics.fmean(logs)
            squares += sum((x - centre) ** 2 for x in logs)
            df += len(logs) - 1
    truth = sorted(statistics.median(times) for times in groups)
    sigma = math.sqrt(squares / df) if df else None
    z90 = 1.2816
    return {
        "landscape": data.stem, "configurations": len(truth),
        "log_sd": round(sigma, 3) if sigma is not None else "unknown",
        "within_2pct": sum(t <= truth[0] * 1.02 for t in truth),
        "within_5pct": sum(t <= truth[0] * 1.05 for t in truth),
        "runs_to_tell_5pct": (round(2 * (z90 * sigma / math.log(1.05)) ** 2)
                              if sigma is not None else "unknown"),
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    names = list(rows[0])
    widths = [max(len(n), *(len(str(r[n])) for r in rows)) for n in names]
    print("  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(r[n]).ljust(w) for n, w in zip(names, widths, strict=True)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="a folder of landscape CSVs, or one CSV (default: %(default)s)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--format", choices=("table", "csv"), default="table")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="an option of the model strategy, e.g. --option kappa=1.0")
    args = parser.parse_args(argv)
    model_options = tuple((name, yaml.safe_load(value)) for name, _, value in
                          (o.partition("=") for o in args.option))
    if not args.data.exists():
        print(f"real_landscapes: --data {args.data}: no such file or folder", file=sys.stderr)
        return 2
    files = sorted(args.data.glob("*.csv")) if args.data.is_dir() else [args.data]
    if not files:
        print(f"real_landscapes: no CSV in {args.data}", file=sys.stderr)
        return 2
    jobs = [Job(f.resolve(), s, int(b), seed, model_options if s == "model" else ())
            for f in files
            for s in args.strategies.split(",") for b in args.budgets.split(",")
            for seed in range(args.seeds)]
    print(f"real_landscapes: {len(jobs)} replayed tunes over {len(files)} landscape(s), "
          f"{args.jobs} at a time (REPLAYED measurements)", file=sys.stderr)
    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = []
        for i, outcome in enumerate(pool.map(run_one, jobs, chunksize=4), 1):
            outcomes.append(outcome)
            if i % 20 == 0 or i == len(jobs):
                print(f"  {i}/{len(jobs)} tunes, {time.monotonic() - started:.0f} s",
                      file=sys.stderr, flush=True)
    rows = summarise(outcomes)
    if args.format == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    else:
        print("REPLAYED: real measured landscapes; truth = median of recorded repeats")
        print_table(rows)
        print("\nWhat the noise lets any search tell apart (REPLAYED data):")
        print_table([noise_limits(f) for f in files])
    return 0


if __name__ == "__main__":
    sys.exit(main())
