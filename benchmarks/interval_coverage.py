"""How often the intervals a tune prints contain the truth (REPLAYED and SIMULATED data).

Every interval ``iotune tune`` prints or writes is a statement about a configuration's
*typical time*, the median of its run-time distribution, or about the ratio of two typical
times, at the stated level (90%). This benchmark checks the statement where the truth is
known: it replays landscapes through the real tune (``iotune tune --backend replay --fresh
--budget B``, the default strategy, a fresh store per tune: ``landscapes_lib.replayed_tune``)
and counts, per kind of interval, how often it contains the truth:

- ``rows``: every row of the tune table (each measured configuration, the default and the
  best found included): its :attr:`TuneResult.estimates` interval;
- ``default``, ``best``: the default's and the best found's rows alone;
- ``speedup``: the best found's speedup over the default as printed and written
  (``TuneResult.shown_speedup``, the tuned file's ``best_found_speedup``: an estimate, not
  the race's rank test that decides), whose truth is the default's typical time over the
  best found's (counted when they differ and the race had a speedup to test).

The truth of a replayed configuration is the median of its recorded runs (the replay draws
from them). Three sources:

- ``simulated``: landscapes generated here (SIMULATED, then replayed): 9 configurations
  and the default, each with ``SIM_REPEATS`` recorded runs whose log times are the
  configuration's log median plus normal noise of sd ``--noise`` (0.05 to 1.0), or
  Student-t noise with 3 degrees of freedom scaled to that sd (``--tails heavy``);
  *flat* landscapes (every configuration as fast as the default) and *spread* ones (log
  medians normal with sd ``SIM_SPREAD`` around the default's), ``--landscapes`` of each
  per noise level, generated from ``--sim-seed``;
- ``production``: the production study's files (``--production``, ``--files`` to choose
  them by a glob), REPLAYED, grouped by each file's pooled log spread;
- ``shared``: the shared real landscapes (``--shared``) at their own budgets, REPLAYED.
  Those recorded once per configuration replay one time per configuration: nothing shows
  a spread, every interval is unbounded and none is counted.

An unbounded interval (no configuration repeated yet, or too few runs for the rank
interval of a speedup) is counted apart, not as covering. A zero-width interval is one
that prints as a point: its ends agree to the table's 4 significant digits.

    python benchmarks/interval_coverage.py --production ../shared/data/production --files 'cori_*'
    python benchmarks/interval_coverage.py --production ../shared/data/production \
        --files 'summit_*' --sim-seed 7 --tails heavy --kinds flat --noise 1.0

The last line is ``summary: rows C1/N1; speedups C2/N2; zero-width Z``.
"""

from __future__ import annotations

import argparse
import fnmatch
import math
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from landscapes_lib import (  # noqa: E402
    Job,
    Landscape,
    LandscapeError,
    describe,
    replayed_tune,
    true_times,
)
from quick_mode import add_quick, apply_quick  # noqa: E402

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"^summary: rows \d+/\d+; speedups \d+/\d+; zero-width \d+$"
#: The noise levels simulated (log sd of one run around its configuration's median): from
#: a quiet dedicated system to the heaviest production noise measured (log sd about 1.0).
NOISE_LEVELS = (0.05, 0.1, 0.25, 0.5, 1.0)
#: Recorded runs per simulated configuration: more than a tune draws of any configuration
#: at these budgets, so the replay draws without repeating and the median is a typical time.
SIM_REPEATS = 15
#: Log sd of the simulated configurations' medians around the default's in a *spread*
#: landscape: gains and losses up to about 2x, as the production files show.
SIM_SPREAD = 0.4
#: The simulated landscapes' default median (s); only a scale.
SIM_DEFAULT_S = 10.0
#: The simulated settings: 3 stripe counts x 3 collective-buffering modes.
SIM_COUNTS = (1, 4, 16)
SIM_MODES = ("enable", "disable", "automatic")
SIM_CORES = 64
#: Budgets of the simulated and production tunes: the production benchmark's 12 (a tune
#: that must choose with little) and 20 (the race gets several runs of each contender).
BUDGETS = (12, 20)
#: Production files are grouped by their pooled log spread at these upper edges.
PRODUCTION_BANDS = (0.1, 0.25, 0.5, math.inf)
#: Significant digits of the tune table's figures: an interval whose ends agree to them
#: prints as a point (``0.3563-0.3563``) and counts as zero-width.
SHOWN_DIGITS = 4
#: Tunes between two progress lines on stderr.
PROGRESS_EVERY = 10
#: Kinds of interval, in the order printed.
KINDS = ("rows", "default", "best", "speedup")
#: The kinds the unbounded and zero-width counts and the summary add up (each default and
#: best found is also a row).
COUNTED = ("rows", "speedup")


T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Check:
    """One interval against its truth: ``low``/``high`` None when unbounded."""

    group: str
    kind: str
    low: float | None
    high: float | None
    truth: float

    @property
    def bounded(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def covers(self) -> bool:
        return self.bounded and self.low <= self.truth <= self.high  # type: ignore[operator]

    @property
    def zero_width(self) -> bool:
        """Whether the interval prints as a point: its ends agree to the
        :data:`SHOWN_DIGITS` significant digits the tune table shows."""
        return self.bounded and f"{self.low:.{SHOWN_DIGITS}g}" == f"{self.high:.{SHOWN_DIGITS}g}"


def write_simulated(folder: Path, noise: float, flat: bool, seed: int,
                    tails: str = "normal") -> Path:
    """A SIMULATED landscape CSV in ``folder`` (see the module docstring); returns its path."""
    import pandas as pd

    rng = np.random.default_rng(seed)

    def runs(median_log: float) -> np.ndarray:
        if tails == "heavy":  # Student's t with 3 df has variance 3: scaled to sd ``noise``
            draws = rng.standard_t(3, SIM_REPEATS) * noise / math.sqrt(3)
        else:
            draws = rng.normal(0.0, noise, SIM_REPEATS)
        return SIM_DEFAULT_S * np.exp(median_log + draws)

    rows = [{"cores": SIM_CORES, "stripe_count": None, "romio_cb_write": None,
             "write_time": t} for t in runs(0.0)]
    for count in SIM_COUNTS:
        for mode in SIM_MODES:
            centre = 0.0 if flat else float(rng.normal(0.0, SIM_SPREAD))
            rows += [{"cores": SIM_CORES, "stripe_count": count, "romio_cb_write": mode,
                      "write_time": t} for t in runs(centre)]
    kind = "flat" if flat else "spread"
    path = folder / f"sim_{kind}_{noise:g}_{tails}_{seed}.csv"
    pd.DataFrame(rows).to_csv(path, index=False, float_format="%.17g")
    return path


def pooled_log_sd(landscape: Landscape) -> float | None:
    """The landscape's recorded spread at its target scale: the log sd of each
    configuration's runs around their mean, pooled over those recorded more than once."""
    from landscapes_lib import open_backend

    squares, df = 0.0, 0
    for record in open_backend(landscape.path).recorded(landscape.target):
        logs = np.log([t for t in record.times if t > 0])
        if len(logs) > 1:
            squares += float(((logs - logs.mean()) ** 2).sum())
            df += len(logs) - 1
    return math.sqrt(squares / df) if df else None


def production_group(landscape: Landscape) -> str:
    """``production, log sd <= X`` by the file's pooled spread (:data:`PRODUCTION_BANDS`)."""
    spread = pooled_log_sd(landscape)
    if spread is None:
        return "production, no repeats"
    edge = next(e for e in PRODUCTION_BANDS if spread <= e)
    return ("production, log sd > 0.5" if math.isinf(edge)
            else f"production, log sd <= {edge:g}")


def checks_of(job: Job, group: str) -> list[Check]:
    """Run ``job`` through the real tune and check each interval it prints against the
    truth (the median of the recorded runs)."""
    with tempfile.TemporaryDirectory(prefix="iotune-bench-") as tmp:
        result, backend, _ = replayed_tune(job, Path(tmp))
    truth = true_times(backend, job.landscape.target)
    out: list[Check] = []
    choice = result.choice
    for evaluation in [result.default, *result.evaluations]:
        found = result.estimates.get(evaluation.key)
        if found is None or evaluation.key not in truth:
            continue
        kinds = ["rows"]
        if evaluation is result.default:
            kinds.append("default")
        if choice.best is not None and evaluation is choice.best:
            kinds.append("best")
        out += [Check(group, kind, found.low_s, found.high_s, truth[evaluation.key])
                for kind in kinds]
    best, gain = choice.best, result.shown_speedup
    if best is not None and gain is not None and choice.speedup is not None:
        out.append(Check(group, "speedup", gain.low, gain.high,
                         truth[result.default.key] / truth[best.key]))
    return out


def _checks(item: tuple[Job, str]) -> list[Check]:
    return checks_of(*item)


def plan(args: argparse.Namespace, folder: Path) -> list[tuple[Job, str]]:
    """Every tune to run, with the group its intervals are counted in."""
    from iotune.config import TuneConfig

    strategy = TuneConfig().strategy
    work: list[tuple[Job, str]] = []
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    for level, noise in enumerate(_floats(args.noise)):
        for kind in kinds:
            for index in range(args.landscapes):
                seed = args.sim_seed * 1000 + level * 100 + index * 2 + (kind == "flat")
                path = write_simulated(folder, noise, kind == "flat", seed, args.tails)
                land = describe(path)
                group = f"simulated, log sd {noise:g}" + (
                    ", heavy tails" if args.tails == "heavy" else "")
                work += [(Job(land, strategy, budget, s), group)
                         for budget in _ints(args.budgets) for s in range(args.seeds)]
    if args.production:
        for path in sorted(Path(args.production).glob("*.csv")):
            if not fnmatch.fnmatch(path.name, args.files):
                continue
            try:
                land = describe(path)
            except LandscapeError as why:
                print(f"interval_coverage: skipped {why}", file=sys.stderr)
                continue
            group = production_group(land)
            work += [(Job(land, strategy, budget, s), group)
                     for budget in _ints(args.budgets) for s in range(args.seeds)]
    if args.shared:
        for path in sorted(Path(args.shared).glob("*.csv")):
            try:
                land = describe(path)
            except LandscapeError as why:
                print(f"interval_coverage: skipped {why}", file=sys.stderr)
                continue
            work += [(Job(land, strategy, land.budget, s), f"shared {land.name}")
                     for s in range(args.seeds)]
    return work


def table(checks: Sequence[Check], groups: Sequence[str]) -> list[str]:
    """One line per group: per kind, covered / bounded (share), and the unbounded and
    zero-width intervals among the rows and speedups; then the totals."""
    by: dict[tuple[str, str], list[Check]] = defaultdict(list)
    for check in checks:
        by[(check.group, check.kind)].append(check)
        by[("all", check.kind)].append(check)
    width = max(len(g) for g in [*groups, "all"])
    lines = [f"{'group':<{width}}  " + "  ".join(f"{k:^17}" for k in KINDS)
             + "  unbounded  zero-width"]
    for group in [*groups, "all"]:
        cells, unbounded, zero = [], 0, 0
        for kind in KINDS:
            mine = by.get((group, kind), [])
            bounded = [c for c in mine if c.bounded]
            covered = sum(c.covers for c in bounded)
            share = f"{covered / len(bounded):.0%}" if bounded else "-"
            cells.append(f"{covered:>6}/{len(bounded):<5} {share:>4}")
            if kind in COUNTED:  # the default's and best's rows are among the rows
                unbounded += len(mine) - len(bounded)
                zero += sum(c.zero_width for c in mine)
        lines.append(f"{group:<{width}}  " + "  ".join(cells)
                     + f"  {unbounded:>9}  {zero:>10}")
    return lines


def summary(checks: Sequence[Check]) -> str:
    """The last line: rows and speedups covered over bounded, and zero-width intervals."""
    rows = [c for c in checks if c.kind == "rows" and c.bounded]
    gains = [c for c in checks if c.kind == "speedup" and c.bounded]
    zero = sum(c.zero_width for c in checks if c.kind in COUNTED)
    return (f"summary: rows {sum(c.covers for c in rows)}/{len(rows)}; "
            f"speedups {sum(c.covers for c in gains)}/{len(gains)}; zero-width {zero}")


class _Serial:
    """A stand-in for a process pool that maps in this process (``--jobs 1``)."""

    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    @staticmethod
    def map(function: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        return map(function, items)


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v.strip()]


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--production", default=None,
                        help="folder of production CSVs to replay (e.g. "
                             "../shared/data/production; default: none)")
    parser.add_argument("--files", default="*.csv",
                        help="glob choosing the production files (default *.csv)")
    parser.add_argument("--shared", default=None,
                        help="folder of the shared landscapes to replay (e.g. "
                             "../shared/data/landscapes; default: none)")
    parser.add_argument("--noise", default=",".join(f"{v:g}" for v in NOISE_LEVELS),
                        help="simulated noise levels, log sd (comma-separated; '' for none)")
    parser.add_argument("--kinds", default="flat,spread",
                        help="simulated landscapes: flat, spread or both")
    parser.add_argument("--tails", choices=("normal", "heavy"), default="normal",
                        help="simulated noise: normal, or Student-t with 3 df")
    parser.add_argument("--landscapes", type=int, default=2,
                        help="simulated landscapes of each kind per noise level")
    parser.add_argument("--sim-seed", type=int, default=0,
                        help="seed of the simulated landscapes (another seed: other ones)")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--seeds", type=int, default=4, help="tunes per landscape and budget")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    add_quick(parser, "one simulated landscape of each kind at log sd 0.25, budget 12, "
                      "2 seeds, production and shared data not replayed")
    args = apply_quick(parser, parser.parse_args(argv), noise="0.25", landscapes=1,
                       budgets="12", seeds=2, production=None, shared=None)
    with tempfile.TemporaryDirectory(prefix="iotune-coverage-") as tmp:
        work = plan(args, Path(tmp))
        print(f"interval_coverage: {len(work)} tunes, {args.jobs} at a time", file=sys.stderr)
        found: list[list[Check]] = []
        with ProcessPoolExecutor(max_workers=args.jobs) if args.jobs > 1 else _Serial() as pool:
            for done, checks in enumerate(pool.map(_checks, work), start=1):
                found.append(checks)
                if done % PROGRESS_EVERY == 0:
                    print(f"  {done}/{len(work)} tunes", file=sys.stderr)
    checks = [c for mine in found for c in mine]
    groups = list(dict.fromkeys(group for _, group in work))
    print(f"interval coverage: {len(work)} tunes (SIMULATED landscapes replayed, REPLAYED "
          "production and shared data); covered/bounded per kind of 90% interval")
    for line in table(checks, groups):
        print(line)
    print(summary(checks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
