"""How many seeds any rule within the risk bound can get right: the production-jobs
correctness bar against what one replayed first run allows (REPLAYED).

Usage::

    python benchmarks/production_ceiling.py --data-dir DIR [--files GLOB] [--seeds 20] \
        [--jobs 40]

``--data-dir`` is a folder of landscapes in the format of ``benchmarks/production_jobs.py``.
The issue's risk rule says that once one run of a configuration is known, no job runs it
again while it is more than 5% likely to be more than 10% slower than the default. To
recommend a change a rule must run it more than once (one run confirms nothing under this
noise), so a seed is **out of reach** when the first run the replay draws for every
configuration within 5% of the best (``production_jobs.WITHIN``) leaves it more than 5%
likely to be 10% slower, and the default itself is not within 5% of the best.

The probability is the one the production runs themselves give, with nothing assumed of
the noise: if the configuration were exactly 10% slower than the default and its runs
varied as the default's recorded runs do, a run at or below its first run ``x`` would come
whenever the default ran at or below ``x / 1.1``. With a flat prior on the configuration's
time that is also the posterior probability of it being 10% slower, and it is at least one
recorded run in six (17%, more than 5%) exactly when ``x >= 1.1 * min(default runs)``: the
first run is no faster than 10% above the default's fastest recorded run. No rule that gives
a configuration credit only for its production runs can run it again then, whatever it
does before (the replay's draws of a configuration are fixed by the seed).

For each file the bar judges (the best configuration's median at most 0.8 of the default's,
or none at or below 0.9 of it), one row: the ceiling (seeds within reach) beside the rule's
correct seeds over ``--jobs`` jobs from the production runs alone
(:func:`production_jobs.campaign` with no tune handed over, ``production_jobs.py
--tune-budget 0``). A tune's estimate is knowledge from outside the production runs: it
is what lets a rule past this ceiling (``production_jobs.py`` by default). Last a line
``summary: J judged files; below the bar C by the first runs alone; the rule at its ceiling
on A of them; B below the bar within reach``, where the bar is 90% of the seeds.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from landscapes_lib import open_backend  # noqa: E402
from production_jobs import WITHIN, campaign, names  # noqa: E402
from quick_mode import add_quick, apply_quick  # noqa: E402

from iotune.backends.replay import Recorded, replay_index  # noqa: E402
from iotune.production.rule import RISK, SLOWER  # noqa: E402

#: The option naming this script's data (outside the repository); the docs must pass it.
DATA_OPTION = ("--data-dir", "dir")
#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = (r"summary: \d+ judged files; below the bar \d+ by the first runs alone; the rule "
           r"at its ceiling on \d+ of them; \d+ below the bar within reach")
#: The bar judges files whose best is at least this much faster than the default...
CLEAR_GAIN = 0.8
#: ... or where nothing is this much faster (the bar's "nothing 10% faster").
NO_GAIN = 0.9
#: Share of seeds the bar asks to be correct.
BAR = 0.9


@dataclass(frozen=True)
class FileCeiling:
    """One judged file: its gain, the seeds within reach and the rule's correct seeds."""

    name: str
    gain: float
    reachable: int
    correct: int
    seeds: int

    @property
    def capped(self) -> bool:
        """The first runs alone keep the file below the bar."""
        return self.reachable < BAR * self.seeds


def p_slower_by_default_runs(first: float, default_runs: list[float]) -> float:
    """The share of the default's runs at or below ``first / SLOWER``: how likely a
    configuration exactly :data:`SLOWER` times the default's time, varying as the default
    does, runs as fast as ``first`` (and, with a flat prior, how likely it is that slow)."""
    return sum(t <= first / SLOWER for t in default_runs) / len(default_runs)


def reachable(configs: dict[str, Recorded], keys: dict[str, str], seed: int) -> bool:
    """Whether a rule within the risk bound can end seed ``seed`` correct: the default is
    within :data:`WITHIN` of the best, or some configuration that is has a first draw the
    default's runs leave at most :data:`RISK` likely to be :data:`SLOWER` slower."""
    truth = {name: r.median for name, r in configs.items()}
    best = min(truth.values())
    if truth["default"] <= WITHIN * best:
        return True
    default_runs = list(configs["default"].times)
    for name, recorded in configs.items():
        if name == "default" or truth[name] > WITHIN * best:
            continue
        times = recorded.times
        first = times[replay_index(len(times), seed, keys[name], 0)]
        if p_slower_by_default_runs(first, default_runs) <= RISK:
            return True
    return False


def file_ceiling(path: Path, seeds: int, jobs: int) -> FileCeiling | None:
    """The ceiling and the rule's correct seeds on ``path`` (None: not judged by the bar)."""
    backend = open_backend(path)
    configs, keys = names(backend.table, max(backend.scales()))
    if "default" not in configs:
        return None
    truth = {name: r.median for name, r in configs.items()}
    best = min(truth.values())
    if not (best <= CLEAR_GAIN * truth["default"] or best > NO_GAIN * truth["default"]):
        return None
    within = sum(reachable(configs, keys, seed) for seed in range(seeds))
    correct = sum(campaign(configs, keys, seed, jobs).correct for seed in range(seeds))
    return FileCeiling(path.stem, truth["default"] / best, within, correct, seeds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="folder of landscapes")
    parser.add_argument("--files", default="*.csv", help="which files (glob, default *.csv)")
    parser.add_argument("--seeds", type=int, default=20, help="seeds per file (default 20)")
    parser.add_argument("--jobs", type=int, default=40, help="jobs per campaign (default 40)")
    add_quick(parser, "2 seeds of 10 jobs")
    args = apply_quick(parser, parser.parse_args(argv), seeds=2, jobs=10)
    if args.seeds < 1 or args.jobs < 1:
        parser.error("--seeds and --jobs must be positive integers")
    if not args.data_dir.is_dir():
        parser.error(f"--data-dir: {args.data_dir} is not a directory")
    paths = sorted(p for p in args.data_dir.glob("*.csv") if p.match(args.files))
    if not paths:
        parser.error(f"--data-dir: no CSV matching {args.files} in {args.data_dir}")
    bar = math.ceil(BAR * args.seeds)
    print(f"# REPLAYED; bar {bar}/{args.seeds}; ceiling: seeds whose first runs leave a "
          f"configuration within {WITHIN - 1:.0%} of the best at most {RISK:.0%} likely to "
          f"be {SLOWER - 1:.0%} slower than the default; rule: {args.jobs} jobs")
    print(f"{'file':<32} {'gain':>6} {'ceiling':>8} {'rule':>6}")
    judged = [c for c in (file_ceiling(p, args.seeds, args.jobs) for p in paths) if c]
    for c in judged:
        if c.capped or c.correct < bar:
            print(f"{c.name:<32} {c.gain:5.2f}x {f'{c.reachable}/{c.seeds}':>8} "
                  f"{f'{c.correct}/{c.seeds}':>6}", flush=True)
    capped = [c for c in judged if c.capped]
    at_ceiling = sum(c.correct >= c.reachable for c in capped)
    short = sum(not c.capped and c.correct < bar for c in judged)
    print(f"summary: {len(judged)} judged files; below the bar {len(capped)} by the first "
          f"runs alone; the rule at its ceiling on {at_ceiling} of them; {short} below the "
          "bar within reach")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
