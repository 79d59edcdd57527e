"""Search strategies on real measured landscapes, judged as issue 20 asks (REPLAYED data).

For every CSV in a folder (default ``../shared/data/landscapes`` beside the repository, or
``--data``), every strategy and every seed, this runs what a user would run with the replay
backend (:func:`landscapes_lib.judged_tune`), in a fresh store per tune:

- **same-scale landscapes** (one ``cores`` value): ``iotune tune --backend replay
  --replay-data FILE --cores N --strategy S --budget B --fresh``, no training;
- **cross-scale landscapes** (several ``cores`` values): ``iotune train`` first, with
  ``train: {scales: [{cores: N, design: recorded}, ...]}`` at every scale but the largest
  (every recorded configuration there, one replayed run each), then the same tune at the
  largest scale. ``--fresh`` stops reuse of earlier *tune* runs only; the model strategies
  use the training runs.

**Budgets** (``--budgets`` overrides them for every landscape): the one the data's README
names, by file stem (:data:`landscapes_lib.NAMED_BUDGETS`: 30 for ``s3d_16ranks`` and
``ior_64ranks``, 8 for ``s3d_400cube_16to64``, 5 for ``btio300_2to16``); for any other
landscape, 30 (the paper's budget) at one scale, and at several ``min(30, max(3, round(0.4
x the configurations at the target scale)))``: a search that may run most of a small space
is not being judged, and 40% is the README's 8 of 19 and 5 of 13
(:func:`landscapes_lib.budget_rule`).

**Production-noise variants** (``--noise-variants 2,4``, the default; ``none`` skips them):
of every landscape whose configurations all have at least 5 repeats at the target scale
(``ior_64ranks``: 10 each), written to a temporary folder as ``<name>_noise2x`` and
``_noise4x``: each configuration's runs with 2 and 4 times their log spread around their
median, ``log t' = log med + k (log t - log med)``, so the truth is unchanged
(:func:`landscapes_lib.stretch`). Their budget and training are their base landscape's.

**Figures**, per landscape and strategy over the seeds, by *true* times (the median of a
configuration's recorded repeats at the target scale; the best is over every recorded
non-default configuration there):

- ``found`` = best / true time of the best configuration the search evaluated, and
  ``chosen`` = best / true time of the *recommended* configuration (the default's when the
  tune recommends the default): median and 10th percentile (``numpy.percentile(x, 10)``,
  its default linear interpolation);
- ``within5``: share of seeds that evaluated a configuration within 5% of the best (true
  time <= 1.05 x best); ``to5``: median over seeds of the configurations evaluated, in
  evaluation order with the first counting 1, until that happened (a seed that never got
  there counts as infinite; ``>B`` when the median is not reached within the budget B);
- ``slower``: share of seeds whose recommended *change* is over 2% slower than the
  default by true time; ``missed``: among the seeds that evaluated a configuration at least
  10% faster than the default (true time <= default / 1.1), the share that recommended the
  default (shown with how many of how many);
- ``runs``: mean replayed runs at the target scale (baseline and race included);
  ``train``: mean training runs.

**Verdicts** check issue 20's "Done when" for the default strategy (``iotune.config``'s
:class:`~iotune.config.TuneConfig` default) at each landscape's budget: on every recorded
landscape (noise variants excluded) its found median >= the best other strategy's - 0.01,
its found 10th percentile >= the best other's - 0.03, its found median > random's; on at
least 3 of 4 recorded landscapes it gets within 5% in at most half the runs random needs;
on every landscape with repeats (and its noise variants) ``slower`` <= 1/20 and ``missed``
<= 0.2. A last table says what each landscape's noise lets any search tell apart
(:func:`noise_limits`). Every number is a REPLAYED measurement.

    python benchmarks/real_landscapes.py                        # everything, 20 seeds
    python benchmarks/real_landscapes.py --seeds 5 --strategies model,random
    python benchmarks/real_landscapes.py --data my-landscapes/ --budgets 15,30 --format csv
    python benchmarks/real_landscapes.py --option model.kappa=1.0 --option initial=0.4
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from landscapes_lib import (
    NOISE_MIN_REPEATS,
    Job,
    Landscape,
    LandscapeError,
    Outcome,
    describe,
    noise_variants,
    open_backend,
    run_one,
)
from quick_mode import add_quick, apply_quick

HERE = Path(__file__).resolve().parent
#: Outside the repository: the docs say to pass ``--data`` (a folder of CSVs).
DATA_OPTION = ("--data", "dir")
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "landscapes"
#: The line a run ends with (``--quick`` included; with --format csv on stderr);
#: tests/benchmarks checks it.
SUMMARY = r"\d+ of \d+ checks pass|real_landscapes: \d+ tunes in \d+ s"
NOISE_FACTORS = (2.0, 4.0)
SEEDS = 20
#: Verdict margins of issue 20: the default strategy's found median may trail the best other
#: strategy's by this much, its found 10th percentile by :data:`P10_MARGIN`.
MEDIAN_MARGIN = 0.01
P10_MARGIN = 0.03
#: Share of recorded landscapes on which the default must reach 5% in half random's runs.
SPEED_SHARE = 0.75
#: Most ``slower`` and ``missed`` shares allowed on landscapes with repeats.
MAX_SLOWER = 1 / 20
MAX_MISSED = 0.2


def default_strategy() -> str:
    """The strategy ``iotune tune`` uses without ``--strategy``: the TuneConfig default."""
    from iotune.config import TuneConfig

    return TuneConfig().strategy


def default_strategies() -> list[str]:
    """Every registered strategy but ``exhaustive`` (which only sees a corner of the space)."""
    return [s for s in known_strategies() if s != "exhaustive"]


def known_strategies() -> list[str]:
    """The registered strategies (``portfolio`` once it exists)."""
    from iotune.strategies import known_strategies as known

    return known()


def parse_options(given: Iterable[str], default: str) -> dict[str, dict[str, Any]]:
    """``STRATEGY.NAME=VALUE`` (or ``NAME=VALUE`` for the ``default`` strategy) as
    ``{strategy: {name: value}}``, values parsed as YAML. Raises ValueError on a malformed
    item, an unknown strategy or an option the strategy does not have."""
    from iotune.errors import ConfigError
    from iotune.strategies import make_strategy

    options: dict[str, dict[str, Any]] = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--option {item}: expected [STRATEGY.]NAME=VALUE")
        strategy, dot, option = name.rpartition(".")
        options.setdefault(strategy if dot else default, {})[option] = yaml.safe_load(value)
    for strategy, values in options.items():
        try:
            make_strategy(strategy, **values)
        except ConfigError as error:
            raise ValueError(f"--option: {error}") from None
    return options


def landscapes_of(files: Sequence[Path], factors: Sequence[float], folder: Path,
                  note: Callable[[str], None]) -> list[Landscape]:
    """Every judgeable landscape of ``files`` followed by its noise variants (written into
    ``folder``); a file that cannot be judged is skipped with a ``note``."""
    out: list[Landscape] = []
    for path in files:
        try:
            land = describe(path)
        except LandscapeError as error:
            note(f"real_landscapes: skipped {error}")
            continue
        out += [land, *noise_variants(land, factors, folder)]
    return out


def make_jobs(landscapes: Sequence[Landscape], strategies: Sequence[str],
              budgets: Sequence[int] | None, seeds: int,
              options: Mapping[str, Mapping[str, Any]]) -> list[Job]:
    """Every (landscape, strategy, budget, seed): each landscape's own budget unless
    ``budgets`` are given; the expensive model-fitting strategies first, so that two
    workers finish together."""
    jobs = [Job(land, s, b, seed, tuple(sorted(options.get(s, {}).items())))
            for land in landscapes for s in strategies
            for b in (budgets or [land.budget]) for seed in range(seeds)]
    cheap = ("random", "genetic", "exhaustive")
    return sorted(jobs, key=lambda j: j.strategy in cheap)


def run_jobs(jobs: Sequence[Job], workers: int,
             note: Callable[[str], None]) -> list[Outcome]:
    """:func:`landscapes_lib.run_one` of every job, ``workers`` at a time (in this process
    when 1), with a progress ``note`` about every 30 s and at the end."""
    started = last = time.monotonic()
    outcomes: list[Outcome] = []

    def done(outcome: Outcome) -> None:
        nonlocal last
        outcomes.append(outcome)
        now = time.monotonic()
        if now - last >= 30 or len(outcomes) == len(jobs):
            rate = (now - started) / len(outcomes)
            note(f"  {len(outcomes)}/{len(jobs)} tunes, {now - started:.0f} s, about "
                 f"{rate * (len(jobs) - len(outcomes)):.0f} s to go")
            last = now

    if workers <= 1:
        for job in jobs:
            done(run_one(job))
        return outcomes
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for future in as_completed([pool.submit(run_one, job) for job in jobs]):
            done(future.result())
    return outcomes


@dataclass(frozen=True)
class Summary:
    """One landscape, strategy and budget over its seeds (see the module docstring)."""

    landscape: str
    strategy: str
    budget: int
    seeds: int
    found_median: float
    found_p10: float
    chosen_median: float
    chosen_p10: float
    found_worst: float
    chosen_worst: float
    within: float
    to_within: float
    slower: float
    missed: int
    chances: int
    runs: float
    trained: float

    @property
    def missed_share(self) -> float | None:
        """Share of the seeds with a 10% gain that recommended the default (None: no such
        seed)."""
        return self.missed / self.chances if self.chances else None

    def row(self) -> dict[str, Any]:
        """The printed row: ratios to 3 decimals, shares to 2."""
        share = self.missed_share
        return {
            "landscape": self.landscape, "strategy": self.strategy, "budget": self.budget,
            "seeds": self.seeds,
            "found_med": f"{self.found_median:.3f}", "found_p10": f"{self.found_p10:.3f}",
            "found_min": f"{self.found_worst:.3f}",
            "chosen_med": f"{self.chosen_median:.3f}", "chosen_p10": f"{self.chosen_p10:.3f}",
            "chosen_min": f"{self.chosen_worst:.3f}",
            "within5": f"{self.within:.2f}", "to5": runs_text(self.to_within, self.budget),
            "slower": f"{self.slower:.2f}",
            "missed": "-" if share is None else f"{share:.2f} ({self.missed}/{self.chances})",
            "runs": f"{self.runs:.1f}", "train": f"{self.trained:.0f}",
        }


def runs_text(runs: float, budget: int) -> str:
    """A median of runs: ``>B`` when infinite, else as an integer when it is one."""
    if math.isinf(runs):
        return f">{budget}"
    return str(int(runs)) if runs == int(runs) else f"{runs:.1f}"


def summarise(outcomes: Iterable[Outcome]) -> list[Summary]:
    """One :class:`Summary` per (landscape, strategy, budget), sorted by them."""
    groups: dict[tuple[str, str, int], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.landscape, o.strategy, o.budget), []).append(o)
    out = []
    for (land, strategy, budget), items in sorted(groups.items()):
        found = [o.found for o in items]
        chosen = [o.chosen for o in items]
        gains = [o for o in items if o.had_gain]
        out.append(Summary(
            landscape=land, strategy=strategy, budget=budget, seeds=len(items),
            found_median=float(np.median(found)), found_p10=float(np.percentile(found, 10)),
            chosen_median=float(np.median(chosen)),
            chosen_p10=float(np.percentile(chosen, 10)),
            found_worst=min(found), chosen_worst=min(chosen),
            within=statistics.fmean(not math.isinf(o.runs_to_within) for o in items),
            to_within=float(np.median([o.runs_to_within for o in items])),
            slower=statistics.fmean(o.slower for o in items),
            missed=sum(o.missed for o in gains), chances=len(gains),
            runs=statistics.fmean(o.runs for o in items),
            trained=statistics.fmean(o.trained for o in items),
        ))
    return out


@dataclass(frozen=True)
class Verdict:
    """One checked criterion: passed (None: could not be checked) and its figures."""

    passed: bool | None
    text: str

    def line(self) -> str:
        word = {True: "PASS", False: "FAIL", None: "SKIP"}[self.passed]
        return f"{word}  {self.text}"


def judged_rows(summaries: Sequence[Summary],
                landscapes: Sequence[Landscape]) -> dict[str, dict[str, Summary]]:
    """Per landscape, its summaries by strategy at the budget it is judged at: its own
    when that was run, else the largest run."""
    out: dict[str, dict[str, Summary]] = {}
    for land in landscapes:
        mine = [s for s in summaries if s.landscape == land.name]
        if not mine:
            continue
        run = {s.budget for s in mine}
        budget = land.budget if land.budget in run else max(run)
        out[land.name] = {s.strategy: s for s in mine if s.budget == budget}
    return out


def verdicts(summaries: Sequence[Summary], landscapes: Sequence[Landscape],
             default: str) -> list[Verdict]:
    """Issue 20's "Done when" criteria for the ``default`` strategy (module docstring)."""
    rows = judged_rows(summaries, landscapes)
    recorded = [land for land in landscapes if not land.is_variant and land.name in rows]
    out: list[Verdict] = []
    for land in recorded:
        out += _quality_verdicts(land.name, rows[land.name], default)
    out.append(_speed_verdict([(land.name, rows[land.name]) for land in recorded], default))
    repeated = {land.base for land in landscapes if land.is_variant} | {
        land.name for land in recorded if land.repeats >= NOISE_MIN_REPEATS}
    for land in landscapes:
        if land.base in repeated and land.name in rows:
            out.append(_promise_verdict(land.name, rows[land.name], default))
    return out


def _quality_verdicts(name: str, by: Mapping[str, Summary], default: str) -> list[Verdict]:
    """Found median and 10th percentile against the best other strategy, median against
    random's, on one landscape."""
    mine = by.get(default)
    if mine is None:
        return [Verdict(None, f"{name}: the default strategy '{default}' was not run")]
    at = f"{name} (budget {mine.budget})"
    others = [s for s in by.values() if s.strategy != default]
    out = []
    if others:
        top = max(others, key=lambda s: s.found_median)
        out.append(Verdict(
            mine.found_median >= top.found_median - MEDIAN_MARGIN,
            f"{at}: found median {default} {mine.found_median:.3f} >= best other "
            f"({top.strategy} {top.found_median:.3f}) - {MEDIAN_MARGIN}"))
        top = max(others, key=lambda s: s.found_p10)
        out.append(Verdict(
            mine.found_p10 >= top.found_p10 - P10_MARGIN,
            f"{at}: found p10 {default} {mine.found_p10:.3f} >= best other "
            f"({top.strategy} {top.found_p10:.3f}) - {P10_MARGIN}"))
    random = by.get("random")
    if random is not None and default != "random":
        out.append(Verdict(
            mine.found_median > random.found_median,
            f"{at}: found median {default} {mine.found_median:.3f} > random "
            f"{random.found_median:.3f}"))
    return out


def _speed_verdict(rows: Sequence[tuple[str, Mapping[str, Summary]]],
                   default: str) -> Verdict:
    """Within 5% of the best in at most half random's median runs, on at least
    :data:`SPEED_SHARE` of the recorded landscapes."""
    parts, wins, judged = [], 0, 0
    for name, by in rows:
        mine, random = by.get(default), by.get("random")
        if mine is None or random is None or default == "random":
            continue
        judged += 1
        won = (not math.isinf(mine.to_within)
               and (math.isinf(random.to_within) or mine.to_within <= random.to_within / 2))
        wins += won
        parts.append(f"{name} {runs_text(mine.to_within, mine.budget)} vs "
                     f"{runs_text(random.to_within, random.budget)}{'' if won else ' (no)'}")
    if not judged:
        return Verdict(None, f"runs to 5%: needs both '{default}' and random")
    needed = math.ceil(SPEED_SHARE * judged)
    return Verdict(wins >= needed,
                   f"within 5% in <= half random's median runs on {wins} of {judged} "
                   f"landscapes (need {needed}): {'; '.join(parts)}")


def _promise_verdict(name: str, by: Mapping[str, Summary], default: str) -> Verdict:
    """``slower`` <= 1/20 and ``missed`` <= 0.2 for the default strategy on one landscape."""
    mine = by.get(default)
    if mine is None:
        return Verdict(None, f"{name}: the default strategy '{default}' was not run")
    share = mine.missed_share
    ok = mine.slower <= MAX_SLOWER and (share is None or share <= MAX_MISSED)
    missed = ("no seed evaluated a 10% gain" if share is None else
              f"{share:.2f} ({mine.missed}/{mine.chances}) <= {MAX_MISSED}")
    return Verdict(ok, f"{name} (budget {mine.budget}): {default} slower {mine.slower:.2f} "
                       f"<= {MAX_SLOWER:.2f}; missed {missed}")


def noise_limits(land: Landscape) -> dict[str, Any]:
    """What a landscape's run-to-run noise lets any search tell apart, at its target scale:
    the pooled standard deviation of log times over configurations with repeats, how many
    configurations lie within 2% and 5% of the best true time, and the runs each of two
    configurations needs for a one-sided 90% test to tell a 5% difference (``2 (z s /
    log 1.05)^2``). A chosen ratio above ``1/1.05`` is out of reach of a race that cannot
    afford that many runs, whatever the search."""
    backend = open_backend(land.path)
    groups = [r.times for r in backend.recorded(land.target) if r.settings]
    squares, df = 0.0, 0
    for times in groups:
        logs = np.log(times)
        if len(logs) > 1:
            squares += float(((logs - logs.mean()) ** 2).sum())
            df += len(logs) - 1
    truth = sorted(float(np.median(times)) for times in groups)
    sigma = math.sqrt(squares / df) if df else None
    z90 = 1.2816
    return {
        "landscape": land.name, "configurations": len(truth),
        "log_sd": f"{sigma:.3f}" if sigma is not None else "unknown",
        "within_2pct": sum(t <= truth[0] * 1.02 for t in truth),
        "within_5pct": sum(t <= truth[0] * 1.05 for t in truth),
        "runs_to_tell_5pct": (round(2 * (z90 * sigma / math.log(1.05)) ** 2)
                              if sigma is not None else "unknown"),
    }


def print_table(rows: Sequence[Mapping[str, Any]]) -> None:
    """``rows`` as left-aligned columns under their names."""
    if not rows:
        return
    names = list(rows[0])
    widths = [max(len(n), *(len(str(r[n])) for r in rows)) for n in names]
    print("  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)).rstrip())
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(r[n]).ljust(w) for n, w in zip(names, widths, strict=True)).rstrip())


def print_landscapes(landscapes: Sequence[Landscape]) -> None:
    """One line per landscape: target, training scales, budget, configurations, repeats."""
    for land in landscapes:
        train = ("no training" if not land.train_scales else
                 "trained at " + ", ".join(map(str, land.train_scales)))
        noise = f", {land.noise:g}x the log spread of {land.base}" if land.noise else ""
        print(f"  {land.name}: {land.configurations} configurations at {land.target} cores "
              f"({land.repeats}+ repeats each), budget {land.budget}, {train}{noise}")


def _factors(text: str) -> tuple[float, ...]:
    if text.strip().lower() in ("", "none"):
        return ()
    return tuple(float(x) for x in text.split(","))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="a folder of landscape CSVs, or one CSV (default: %(default)s)")
    parser.add_argument("--strategies",
                        help="comma-separated (default: every registered one but exhaustive)")
    parser.add_argument("--budgets", help="comma-separated budgets for every landscape "
                        "(default: each landscape's own)")
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--noise-variants", default="2,4", metavar="K,K|none",
                        help="log-spread factors of the noise variants (default 2,4)")
    parser.add_argument("--format", choices=("table", "csv"), default="table")
    parser.add_argument("--option", action="append", default=[],
                        metavar="[STRATEGY.]NAME=VALUE",
                        help="a strategy option (without STRATEGY: the default strategy's)")
    add_quick(parser, "one seed, budget 6, the default strategy and random, no noise "
                      "variant")
    return apply_quick(parser, parser.parse_args(argv), seeds=1, budgets="6",
                       noise_variants="none",
                       if_default={"strategies": f"{default_strategy()},random"})


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def note(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    default = default_strategy()
    try:
        options = parse_options(args.option, default)
        factors = _factors(args.noise_variants)
        budgets = [int(b) for b in args.budgets.split(",")] if args.budgets else None
    except ValueError as error:
        note(f"real_landscapes: {error}")
        return 2
    strategies = args.strategies.split(",") if args.strategies else default_strategies()
    unknown = sorted(set(strategies) - set(known_strategies()))
    if unknown or args.seeds < 1:
        note(f"real_landscapes: unknown strategies {', '.join(unknown)} (known: "
             f"{', '.join(known_strategies())})" if unknown else "real_landscapes: --seeds: "
             "at least 1")
        return 2
    if not args.data.exists():
        note(f"real_landscapes: --data {args.data}: no such file or folder")
        return 2
    files = sorted(args.data.glob("*.csv")) if args.data.is_dir() else [args.data]
    with tempfile.TemporaryDirectory(prefix="iotune-noise-") as folder:
        landscapes = landscapes_of(files, factors, Path(folder), note)
        if not landscapes:
            note(f"real_landscapes: no landscape to judge in {args.data}")
            return 2
        jobs = make_jobs(landscapes, strategies, budgets, args.seeds, options)
        note(f"real_landscapes: {len(jobs)} replayed tunes ({', '.join(strategies)}) over "
             f"{len(landscapes)} landscapes, {args.jobs} at a time (REPLAYED measurements)")
        started = time.monotonic()
        summaries = summarise(run_jobs(jobs, args.jobs, note))
        note(f"real_landscapes: {len(jobs)} tunes in {time.monotonic() - started:.0f} s")
        checks = verdicts(summaries, landscapes, default)
        if args.format == "csv":
            writer = csv.DictWriter(sys.stdout, fieldnames=["data", *summaries[0].row()])
            writer.writeheader()
            writer.writerows({"data": "REPLAYED", **s.row()} for s in summaries)
            for check in checks:
                note(check.line())
            return 0
        print(f"REPLAYED: real measured landscapes, {args.seeds} seeds; truth = median of a "
              "configuration's recorded repeats; p10 = numpy.percentile(x, 10), linear")
        print_landscapes(landscapes)
        print()
        print_table([s.row() for s in summaries])
        print(f"\nVerdicts for the default strategy '{default}' (REPLAYED, issue 20):")
        for check in checks:
            print(check.line())
        print(f"{sum(c.passed is True for c in checks)} of {len(checks)} checks pass, "
              f"{sum(c.passed is False for c in checks)} fail, "
              f"{sum(c.passed is None for c in checks)} skipped")
        print("\nWhat the noise lets any search tell apart (REPLAYED data):")
        print_table([noise_limits(land) for land in landscapes])
    return 0


if __name__ == "__main__":
    sys.exit(main())
