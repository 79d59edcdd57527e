"""How often *any* search could confirm a gain over the default, at a noise and a budget.

The race recommends a change only when its speedup over the default is above 1x with 95%
confidence (one-sided; ``iotune/strategies/racing.py``). On a noisy system that rule, not
the search, decides how often a tune can recommend anything. This benchmark measures it
with a simple policy that puts every run where the decision is made:

1. **search** ``k`` configurations drawn at random, one run each, and take the fastest single
   draw as the leader (the default's first run, the baseline, is free as in ``tune``);
2. **confirm**: spend the rest of the budget, ``B - k`` runs, on the leader and the default
   in turns; recommend the leader when the one-sided 95% t lower bound of
   ``mean log default - mean log leader`` (pooled spread of the two, ``nd + nb - 2`` degrees
   of freedom) is above 0.

Per noise factor and ``k`` it prints, among trials whose search drew a configuration at
least 10% faster than the default by true time (the ``missed`` promise of
``real_landscapes.py``), the share that recommended a change (``recommended``; the promise
asks 0.8) and the share whose recommendation is over 2% slower than the default
(``slower``), and an *oracle* line: the best configuration known without search, every run
but the baseline confirming it. A race that must also search can hardly do better than the
oracle.

The policy is a bound the product does not reach: the tune searches with its own strategy,
keeps a noise-sized reserve for the race and decides by ranks
(``iotune/strategies/rank_test.py``). So per noise factor a ``tune`` line (``--tune-seeds``
seeds; 0: none) runs the real tune (default strategy, a fresh store each) on the same
stretched runs through the replay backend, the default given as many SIMULATED runs as the
most repeated configuration has (drawn as above, centred on its recorded time), and counts
the same shares; its ``confirm`` column is the median number of the race's runs.

The landscape's runs are REPLAYED from its CSV (one with repeats, ``ior_64ranks`` by
default), stretched to ``factor`` times their log spread around each configuration's median
as ``real_landscapes.py``'s noise variants are. The default, recorded once there, varies
here like a configuration does: its runs are SIMULATED as its recorded time times a
log-normal factor with the landscape's pooled log spread. The output says so.

Usage::

    python benchmarks/confirmation_power.py
    python benchmarks/confirmation_power.py --data runs.csv --budget 60 --factors 1,2
    python benchmarks/confirmation_power.py --tune-seeds 0    # the bound only
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import t as student_t

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from landscapes_lib import (  # noqa: E402
    FASTER,
    SLOWER,
    TIME_COLUMN,
    open_backend,
    replay_config,
    stretch,
    true_times,
    write_noise_variant,
)
from quick_mode import add_quick, apply_quick  # noqa: E402

#: Outside the repository: the docs say to pass ``--data`` (a CSV).
DATA_OPTION = ("--data", "csv")
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "landscapes" / "ior_64ranks.csv"
#: The line a run ends with (``--quick`` included; the real tune's row, or the bound's
#: oracle row with --tune-seeds 0); tests/benchmarks checks it.
SUMMARY = r"\d+x\s+[0-9.]+\s+(tune|oracle)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+$"
#: One-sided level of the race's test (its two-sided 90% interval's lower end).
LEVEL = 0.95


@dataclass(frozen=True)
class Landscape:
    """Log times of a landscape's configurations at one scale, and its default's."""

    runs: list[np.ndarray]  # log times of each configuration's recorded runs
    truth: np.ndarray  # each configuration's median log time
    default: float  # the default's log time (the median of its recorded runs)


def load(path: Path, factor: float) -> Landscape:
    """The largest scale of ``path`` as the replay backend reads it, every configuration's
    runs stretched ``factor`` times; the configuration with no setting is the default."""
    backend = open_backend(path)
    recorded = backend.recorded(max(backend.scales()))
    defaults = [r for r in recorded if not r.settings]
    if not defaults:
        raise SystemExit(f"{path.name}: no default row (every setting empty)")
    runs = [np.log(stretch(np.asarray(r.times, dtype=float), factor))
            for r in recorded if r.settings]
    if min(len(r) for r in runs) < 2:
        raise SystemExit(f"{path.name}: every configuration needs repeats to show its spread")
    default = np.log(stretch(np.asarray(defaults[0].times, dtype=float), factor))
    return Landscape(runs, np.array([np.median(r) for r in runs]), float(np.median(default)))


def pooled_spread(landscape: Landscape) -> float:
    """The standard deviation of log times around each configuration's mean, pooled."""
    squares = sum(float(((r - r.mean()) ** 2).sum()) for r in landscape.runs)
    return float(np.sqrt(squares / sum(len(r) - 1 for r in landscape.runs)))


def confirmed(default_logs: np.ndarray, leader_logs: np.ndarray) -> bool:
    """The race's test on two arms: the one-sided ``LEVEL`` lower bound of the log speedup
    of the leader over the default, with their pooled spread, is above 0."""
    nd, nb = len(default_logs), len(leader_logs)
    df = nd + nb - 2
    if df < 1:
        return False
    squares = ((default_logs - default_logs.mean()) ** 2).sum() + (
        (leader_logs - leader_logs.mean()) ** 2).sum()
    spread = np.sqrt(squares / df)
    low = (default_logs.mean() - leader_logs.mean()
           - student_t.ppf(LEVEL, df) * spread * np.sqrt(1 / nd + 1 / nb))
    return bool(low > 0)


def trial(landscape: Landscape, spread: float, searched: int | None, budget: int,
          rng: np.random.Generator) -> tuple[bool, bool, bool]:
    """One tune of the policy: (drew a 10% gain, recommended a change, the change is over 2%
    slower than the default). ``searched`` None: the oracle (the best configuration, no
    search)."""
    gain = np.log(FASTER)
    if searched is None:
        leader = int(np.argmin(landscape.truth))
        had = True
        leader_runs = [rng.choice(landscape.runs[leader])]
        left = budget - 1
    else:
        picks = rng.choice(len(landscape.runs), size=searched, replace=False)
        draws = [rng.choice(landscape.runs[i]) for i in picks]
        leader = int(picks[int(np.argmin(draws))])
        had = bool((landscape.truth[picks] <= landscape.default - gain).any())
        leader_runs = [draws[int(np.argmin(draws))]]
        left = budget - searched
    more_default = left // 2
    leader_runs += list(rng.choice(landscape.runs[leader], size=left - more_default))
    default_runs = landscape.default + rng.normal(0.0, spread, 1 + more_default)
    recommended = confirmed(default_runs, np.asarray(leader_runs))
    slower = recommended and landscape.truth[leader] > landscape.default + np.log(SLOWER)
    return had, recommended, bool(slower)


def write_tuned_landscape(source: Path, factor: float, spread: float, dest: Path,
                          rng: np.random.Generator) -> None:
    """``source`` stretched ``factor`` times (:func:`landscapes_lib.write_noise_variant`),
    its default's row at the largest scale replaced by as many runs as the most repeated
    configuration there has: its recorded time times log-normal factors of log spread
    ``spread``, scaled so that their median is the recorded time (the truth is unchanged)."""
    import pandas as pd

    write_noise_variant(source, factor, dest)
    frame = pd.read_csv(dest)
    settings = [c for c in frame.columns if c not in (TIME_COLUMN, "cores")]
    at_target = frame["cores"] == frame["cores"].max()
    is_default = at_target & frame[settings].isna().all(axis=1)
    recorded = float(frame.loc[is_default, TIME_COLUMN].median())
    repeats = int(frame[at_target].groupby(settings, dropna=False).size().max())
    runs = recorded * np.exp(rng.normal(0.0, spread, repeats))
    defaults = pd.concat([frame[is_default].iloc[:1]] * repeats, ignore_index=True)
    defaults[TIME_COLUMN] = runs * (recorded / float(np.median(runs)))
    pd.concat([frame[~is_default], defaults], ignore_index=True).to_csv(
        dest, index=False, float_format="%.17g")


def tune_trials(data: Path, budget: int, seeds: int) -> tuple[list[tuple[bool, bool, bool]],
                                                               list[int]]:
    """The real tune (the default strategy, a fresh store each) on ``data``'s largest scale,
    once per seed: per seed the outcome as :func:`trial` gives it (judged by the truth, each
    configuration's median time) and the race's runs."""
    from iotune.backends.replay import ReplayBackend
    from iotune.store import Store
    from iotune.tune import tune

    outcomes, race_runs = [], []
    for seed in range(seeds):
        with tempfile.TemporaryDirectory(prefix="iotune-bench-") as tmp:
            config = replay_config(data, Path(tmp), seed)
            backend = ReplayBackend(config)
            cores = max(backend.scales())
            result = tune(config, backend, Store(config.store), kernel=config.kernel.name,
                          cores=cores, budget=budget, fresh=True)
        truth = true_times(backend, cores)
        default = truth[result.default.key]
        had = any(truth[e.key] <= default / FASTER for e in result.evaluations)
        recommended = not result.recommend_default
        slower = recommended and truth[result.recommended.key] > default * SLOWER
        outcomes.append((had, recommended, slower))
        race_runs.append(result.choice.race_runs)
    return outcomes, race_runs


def _row(factor: float, spread: float, label: str, confirm: float,
         outcomes: list[tuple[bool, bool, bool]]) -> str | None:
    """One printed line over the trials that drew a 10% gain (None: no such trial)."""
    counted = [o for o in outcomes if o[0]]
    if not counted:
        return None
    share = sum(o[1] for o in counted) / len(counted)
    slower = sum(o[2] for o in counted) / len(counted)
    return (f"{factor:>4g}x  {spread:6.3f}  {label:>8}  {confirm:>7g}  {share:11.2f}  "
            f"{slower:6.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="a landscape CSV with repeats (default: ior_64ranks.csv)")
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--factors", default="1,2,4", help="log-spread factors")
    parser.add_argument("--searches", default="1,2,4,8,12,16,20",
                        help="configurations searched before confirming")
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tune-seeds", type=int, default=20,
                        help="real tunes per noise factor (0: the bound only)")
    add_quick(parser, "budget 12, noise factor 1, 4 configurations searched, 100 trials, "
                      "1 tune")
    args = apply_quick(parser, parser.parse_args(argv), budget=12, factors="1", searches="4",
                       trials=100, tune_seeds=1)
    searches = [int(k) for k in args.searches.split(",")]
    if args.tune_seeds < 0:
        parser.error("--tune-seeds: must be 0 or more")
    if any(k < 1 or k >= args.budget for k in searches):
        parser.error(f"--searches: each must be between 1 and the budget less one "
                     f"({args.budget - 1})")
    rng = np.random.default_rng(args.seed)
    print(f"confirmation_power: {args.data.name}, budget {args.budget}, {args.trials} trials "
          f"(REPLAYED runs, stretched; the default's runs SIMULATED)")
    print(f"{'noise':>5}  {'log_sd':>6}  {'searched':>8}  {'confirm':>7}  "
          f"{'recommended':>11}  {'slower':>6}")
    with tempfile.TemporaryDirectory(prefix="iotune-power-") as tmp:
        for factor in (float(f) for f in args.factors.split(",")):
            landscape = load(args.data, factor)
            spread = pooled_spread(landscape)
            for searched in [*searches, None]:
                outcomes = [trial(landscape, spread, searched, args.budget, rng)
                            for _ in range(args.trials)]
                confirm = args.budget - (1 if searched is None else searched)
                line = _row(factor, spread, "oracle" if searched is None else str(searched),
                            confirm, outcomes)
                if line:
                    print(line)
            if args.tune_seeds:
                data = Path(tmp) / f"{args.data.stem}_{factor:g}x.csv"
                write_tuned_landscape(args.data, factor, spread, data, rng)
                outcomes, race = tune_trials(data, args.budget, args.tune_seeds)
                line = _row(factor, spread, "tune", float(np.median(race)), outcomes)
                if line:
                    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
