"""Production jobs beside a dedicated tune: on each landscape of a production-noise folder,
the job-by-job rule (``iotune job start``) against ``iotune tune`` at two budgets (REPLAYED).

Usage::

    python benchmarks/production_vs_dedicated.py --data-dir DIR [--files GLOB] \
        [--seeds 20] [--jobs 40] [--budgets 12,30] [--workers 2]

``--data-dir`` is a folder of landscapes in the format of ``benchmarks/production_jobs.py``
(one row per recorded run, the row with every setting empty the default, the largest scale
used). For every file and seed:

- **production**: a dedicated tune of budget 12 hands its tuned file over
  (:func:`production_jobs.handover`, as ``iotune job start --candidate`` takes it), then
  ``--jobs`` production jobs replayed through the rule (:func:`production_jobs.campaign`,
  the code ``iotune job start`` runs), its final recommendation (the default when nothing
  settled);
- **dedicated B**: ``iotune tune --backend replay --fresh --budget B`` with the default
  strategy in a fresh store (:func:`production_noise.run`), for each budget of ``--budgets``.

One row per file, each column per method, judged by the truth (the median of a
configuration's recorded runs):

- ``correct``: seeds whose recommendation has a true time within 5% of the best
  configuration's (the default included), as ``C/N``;
- ``slower``: the share of jobs that ran a configuration more than 10% slower than the
  default. For production, the jobs of the campaign (exploring included); for a dedicated
  tune, the ``--jobs`` production jobs that would then run its recommendation, so the
  share of seeds recommending such a configuration (the tune's own runs are not production
  jobs);
- ``gain``: the median over seeds of the default's true time over the recommendation's.

A last row gives the same over all files (correct summed, slower pooled, gain the median
over every seed of every file). Every time is REPLAYED from recorded production runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from landscapes_lib import open_backend  # noqa: E402
from production_jobs import TUNE_BUDGET, WITHIN, campaign, handover, names  # noqa: E402
from production_noise import landscapes, run  # noqa: E402
from quick_mode import add_quick, apply_quick  # noqa: E402

from iotune.production.rule import SLOWER  # noqa: E402

#: The dedicated tunes' oracle is not shown here; production_noise.run computes it anyway,
#: so it gets few trials (it costs time, not the figures shown).
ORACLE_TRIALS = 50


@dataclass(frozen=True)
class Column:
    """One method on one file: ``correct`` of ``seeds``, the share of ``slower`` jobs and
    each seed's gain (default's true time over the recommendation's)."""

    correct: int
    seeds: int
    slower: float
    gains: tuple[float, ...]

    @property
    def gain(self) -> float:
        return statistics.median(self.gains)

    def text(self) -> str:
        return f"{f'{self.correct}/{self.seeds}':>6} {100 * self.slower:5.1f}% {self.gain:6.2f}"


#: The option naming this script's data (outside the repository); the docs must pass it.
DATA_OPTION = ("--data-dir", "dir")
#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"all files +\d+/\d+"

def production_column(path: Path, seeds: int, jobs: int) -> Column:
    """The production-jobs replay of ``path`` over ``seeds`` campaigns of ``jobs`` jobs, each
    starting from a dedicated tune of :data:`production_jobs.TUNE_BUDGET` runs."""
    backend = open_backend(path)
    configs, keys = names(backend.table, max(backend.scales()))
    truth = {name: r.median for name, r in configs.items()}
    done = [campaign(configs, keys, seed, jobs,
                     handover(path, configs, seed, TUNE_BUDGET))
            for seed in range(seeds)]
    return Column(sum(c.correct for c in done), seeds,
                  sum(c.slower_jobs for c in done) / (seeds * jobs),
                  tuple(truth["default"] / truth[c.recommended] for c in done))


def dedicated_column(row: object) -> Column:
    """A :class:`production_noise.Row` (one file, one budget) as a column."""
    outcomes = row.outcomes  # type: ignore[attr-defined]
    best = [min(o.best, o.default) for o in outcomes]
    return Column(sum(o.recommended <= WITHIN * b for o, b in zip(outcomes, best, strict=True)),
                  len(outcomes),
                  sum(o.recommended > SLOWER * o.default for o in outcomes) / len(outcomes),
                  tuple(o.default / o.recommended for o in outcomes))


def pooled(columns: Sequence[Column]) -> Column:
    """Every file's column as one: correct summed, slower weighted by seeds, all gains."""
    seeds = sum(c.seeds for c in columns)
    return Column(sum(c.correct for c in columns), seeds,
                  sum(c.slower * c.seeds for c in columns) / seeds,
                  tuple(g for c in columns for g in c.gains))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="folder of landscapes")
    parser.add_argument("--files", default="*.csv", help="which files (glob, default *.csv)")
    parser.add_argument("--seeds", type=int, default=20, help="seeds per method (default 20)")
    parser.add_argument("--jobs", type=int, default=40,
                        help="production jobs per campaign (default 40)")
    parser.add_argument("--budgets", default="12,30", help="dedicated tune budgets")
    parser.add_argument("--workers", type=int, default=1, help="processes for the tunes")
    add_quick(parser, "1 seed, 10 jobs, budget 12")
    args = apply_quick(parser, parser.parse_args(argv), seeds=1, jobs=10, budgets="12")
    try:
        budgets = [int(b) for b in args.budgets.split(",")]
    except ValueError:
        parser.error(f"--budgets: {args.budgets!r} is not a comma-separated list of integers")
    if args.seeds < 1 or args.jobs < 1 or args.workers < 1 or min(budgets) < 1:
        parser.error("--seeds, --jobs, --workers and --budgets must be positive integers")
    if not args.data_dir.is_dir():
        parser.error(f"--data-dir: {args.data_dir} is not a directory")
    lands = [land for land in landscapes(args.data_dir) if land.path.match(args.files)]
    if not lands:
        parser.error(f"--data-dir: no judgeable CSV matching {args.files} in {args.data_dir}")
    rows = run(lands, budgets, args.seeds, args.workers, ORACLE_TRIALS)
    methods = ["production", *(f"dedicated {b}" for b in budgets)]
    print(f"# {len(lands)} files, {args.seeds} seeds; production: a tune of budget "
          f"{TUNE_BUDGET} hands its tuned file to {args.jobs} jobs per campaign; dedicated: "
          "iotune tune at each budget (REPLAYED)")
    print(f"# each method: correct (within {WITHIN - 1:.0%} of the best), slower (jobs that "
          f"ran a configuration {SLOWER - 1:.0%} slower than the default), gain (median)")
    width = max(30, *(len(land.name) for land in lands))
    print(f"{'file':<{width}} " + " | ".join(f"{m:^20}" for m in methods))
    table: dict[str, list[Column]] = {m: [] for m in methods}
    for land in lands:
        cells = [production_column(land.path, args.seeds, args.jobs)]
        cells += [dedicated_column(next(r for r in rows if r.name == land.name
                                        and r.budget == b)) for b in budgets]
        for method, cell in zip(methods, cells, strict=True):
            table[method].append(cell)
        print(f"{land.name:<{width}} " + " | ".join(c.text() for c in cells), flush=True)
    print(f"{'all files':<{width}} " + " | ".join(pooled(table[m]).text() for m in methods))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
