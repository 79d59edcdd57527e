"""Search strategies side by side at equal budgets (a benchmark script, not a test).

Compares ``model`` (prune, explore, refit: Behzad et al., HPDC'14), ``genetic``, ``random``,
``exhaustive`` and ``tpe`` (Optuna's TPE sampler) on two kinds of landscape:

(a) SIMULATED: VPIC-IO (configs/hopper-vpic.yaml: 256 MiB per rank) on the ``hopper`` preset
    of the simulated Lustre system at 512, 2048 and 8192 cores, over the paper's spaces
    (``iotune.sim.paper_space``: 540, 720 and 900 configurations). Measurements carry the
    preset's noise (level 1, seeded per seed), but a search is judged by the *noise-free*
    model bandwidth of the configuration it returns (its best measured one) against the best
    noise-free bandwidth in the space. The model is trained as in the paper on smaller
    scales only: the systematic design at 128 and 256 cores (and 512 and 1024 for the
    8192-core target), simulated with noise once per seed; those runs are reported
    separately as training runs.
(b) REPLAYED: a landscape recorded from real local runs of the vpic kernel (MPI-IO hints of
    configs/local.yaml at 2 and 4 ranks, a few repetitions each), answered by the replay
    backend (a seeded draw among the recorded repeats). The target is the largest recorded
    scale, the model trains on the others; the truth of a configuration is the median of
    its recorded repeats. Record it with ``--record-local`` (a few minutes; needs MPI and
    the kernels) into ``benchmarks/data/local-vpic.csv`` or ``--replay-data``.

For every budget (configurations evaluated at the target scale; cached re-evaluations are
free) and strategy it prints, over the seeds, the median and worst ratio of found bandwidth
to the landscape's best, the runs at the target scale, the training runs and the total.
The model strategy runs the paper's method (``method=paper``) and explores
``top_k = min(20, 2 budget / 3)`` configurations after the
first fit and the rest after one refit (20 + 10 at budget 30, as in the paper).

It also runs the paper's GA (population 40, 15 generations, no budget) and reports how many
target-scale runs it needs until its best configuration is as good as the model-guided
search's median at 30 runs, then prints a one-line verdict per landscape on the paper's
claim (model-guided within a few percent, here 5%, of the best with about 30 runs where a
GA needs hundreds, here at least 100).

    python benchmarks/strategies.py                      # everything (a few minutes)
    python benchmarks/strategies.py --quick              # 3 seeds, 512 cores
    python benchmarks/strategies.py --record-local       # record (b) first, then run
    python benchmarks/strategies.py --seeds 5 --budgets 10,30 --scales 2048 --format csv
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from quick_mode import add_quick, apply_quick

import iotune.strategies.tpe  # noqa: F401  (registers "tpe")
from iotune.backends import Backend, RunRequest
from iotune.backends.replay import ReplayBackend
from iotune.backends.sim import SimBackend, sim_pattern
from iotune.config import Config, build_config, load_config
from iotune.kernel_specs import get_kernel
from iotune.settings.space import SearchSpace
from iotune.settings.values import HINT_PREFIX, SETTINGS, config_key, describe_value
from iotune.sim import model_breakdown, paper_space
from iotune.strategies import known_strategies, make_strategy
from iotune.strategies.base import Configuration
from iotune.train.designs import design_configurations
from iotune.tune import MeasuringContext, MemorySink

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
HOPPER_CONFIG = REPO / "configs" / "hopper-vpic.yaml"
LOCAL_CONFIG = REPO / "configs" / "local.yaml"
DEFAULT_REPLAY = HERE / "data" / "local-vpic.csv"
STRATEGIES = ("model", "genetic", "random", "exhaustive", "tpe")
SCALES = (512, 2048, 8192)
BUDGETS = (10, 20, 30, 60)
#: Configurations per scale --quick --record-local records (once each, at 2 and 4 ranks).
QUICK_RECORDED = 3
#: The line a run ends with (``--quick`` included; with --format csv the verdicts go to
#: stderr); tests/benchmarks checks it.
SUMMARY = r"verdict .*: (model-guided with \d+ runs|not checked)"
# Training scales of the model for each simulated target (none at the target itself).
TRAINING = {512: (128, 256), 2048: (128, 256), 8192: (128, 256, 512, 1024)}
NOISE = 1.0  # the preset's calibrated variability
PAPER_GA = {"population": 40, "generations": 15}
PAPER_GA_LABEL = "genetic (paper: 40 x 15)"
LONG_BUDGET = 200
WITHIN = 0.95  # "within a few percent": at least 95% of the best bandwidth
HUNDREDS = 100  # "a GA needs hundreds" of runs
TOLERANCE = 0.005  # "as good as" the model-guided search: within half a percentage point
CLAIM_BUDGET = 30


def note(message: str) -> None:
    """Progress and remarks go to stderr, so stdout holds only the results."""
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- landscapes


@dataclass
class Landscape:
    """One target scale under one seed: what a strategy may evaluate and the truth about it.

    ``measure(request)`` returns the record of one repetition; it is cached, so every
    strategy sees the same measurement of a configuration under this seed. ``truth`` maps
    each candidate's key to its true time (noise-free model time, or median of recorded
    repeats); ``training`` is the model's training data; ``bytes_written`` by one run at the
    target scale turns times into bandwidths.
    """

    label: str
    provenance: str
    kernel: str
    cores: int
    params: dict[str, Any]
    space: SearchSpace
    candidates: list[Configuration]
    backend: Backend
    truth: dict[str, float]
    training: pd.DataFrame
    bytes_written: int
    check: Callable[[dict[str, Any], float], None] | None = None
    cache: dict[str, dict[str, Any]] = field(default_factory=dict)

    def key(self, settings: Mapping[str, Any]) -> str:
        return config_key(self.kernel, self.cores, settings, self.params)

    def measure(self, request: RunRequest) -> dict[str, Any]:
        """The record of one run of ``request`` (the same record every time it is asked)."""
        key = request.key
        if key not in self.cache:
            record = self.backend.measure(request, 0)
            self.cache[key] = record
            if self.check is not None:
                self.check(record, self.truth[key])
        return dict(self.cache[key])

    @property
    def best_time(self) -> float:
        return min(self.truth.values())

    def ratio(self, key: str) -> float:
        """True bandwidth of ``key`` over the best true bandwidth (same bytes: time ratio)."""
        return self.best_time / self.truth[key]


class LandscapeBackend(Backend):
    """A backend that answers from a :class:`Landscape` (its cached records); made by
    :func:`landscape_backend`, which gives it the facts of the backend that recorded them."""

    def __init__(self, landscape: Landscape) -> None:
        self.landscape = landscape

    def measure(self, request: RunRequest, rep: int = 0) -> dict[str, Any]:
        return self.landscape.measure(request)


def landscape_backend(landscape: Landscape) -> Backend:
    """A :class:`LandscapeBackend` over ``landscape`` that states the facts of the backend
    that recorded it (its class attributes: name, provenance, ...), so a tune over it
    treats it as that backend (training rows are those of the same backend)."""
    recorded = type(landscape.backend)
    facts = {name: getattr(recorded, name) for name, kind in Backend.__annotations__.items()
             if str(kind).startswith("ClassVar")}
    made = type(f"Landscape{recorded.__name__}", (LandscapeBackend,), facts)
    return made(landscape)


#: The strategies that fit on the landscape's training data (the others ignore it).
TRAINED = ("model", "portfolio")


def landscape_context(landscape: Landscape, budget: int | None) -> MeasuringContext:
    """The search context of ``tune`` over a landscape: one repetition per configuration
    (as in the paper's tuning runs), statistic median, measurements kept in memory beside
    the landscape's training data."""
    return MeasuringContext(backend=landscape_backend(landscape),
                            sink=MemorySink(landscape.training), kernel=landscape.kernel,
                            cores=landscape.cores, params=landscape.params,
                            candidates=landscape.candidates, budget=budget)


def hopper_config() -> Config:
    """configs/hopper-vpic.yaml with the sim backend (its scratch is never used)."""
    raw = yaml.safe_load(HOPPER_CONFIG.read_text())
    raw["system"]["scratch"] = "."
    raw["backend"] = {"name": "sim", "system": raw["backend"].get("system", "hopper"),
                      "noise": NOISE}
    return build_config(raw, HOPPER_CONFIG.parent, HOPPER_CONFIG)


class SimLandscapes:
    """The simulated landscapes of (a), built once per (target scale, seed)."""

    def __init__(self) -> None:
        self.config = hopper_config()
        self.kernel = self.config.kernel.name
        self.params = self.config.kernel.args
        self.training: dict[tuple[tuple[int, ...], int], pd.DataFrame] = {}
        self.truths: dict[int, tuple[list[Configuration], dict[str, float]]] = {}

    def _truth(self, cores: int) -> tuple[list[Configuration], dict[str, float]]:
        if cores not in self.truths:
            space = paper_space(cores, cores_per_node=self.config.system.cores_per_node,
                                ost_count=self.config.system.ost_count or 156)
            candidates = [{str(k): int(v) for k, v in row.items()}
                          for row in space.to_dict("records")]
            backend = SimBackend(self.config, noise=0.0)
            pattern = sim_pattern(self.kernel, cores, self.params,
                                  backend.system.cores_per_node)
            times = np.asarray(model_breakdown(backend.system, pattern, space).time_s)
            truth = {config_key(self.kernel, cores, c, self.params): float(t)
                     for c, t in zip(candidates, times.ravel(), strict=True)}
            self.truths[cores] = (candidates, truth)
        return self.truths[cores]

    def _training(self, scales: tuple[int, ...], backend: SimBackend) -> pd.DataFrame:
        key = (scales, backend.seed)
        if key not in self.training:
            rows = []
            limits = self.config.system.limits
            for rank, cores in enumerate(scales):
                configs = design_configurations("systematic", self.config.space, cores, limits,
                                                scale_rank=rank)
                requests = [RunRequest(self.kernel, cores, c, self.params) for c in configs]
                for config, record in zip(configs, backend.measure_many(requests),
                                          strict=True):
                    rows.append(dict(config, cores=cores,
                                     write_time=record["result"]["times_s"]["total"]))
            self.training[key] = pd.DataFrame(rows)
        return self.training[key]

    def landscape(self, cores: int, seed: int) -> Landscape:
        candidates, truth = self._truth(cores)
        backend = SimBackend(self.config, noise=NOISE, seed=seed)
        scales = TRAINING.get(cores) or tuple(c for c in (128, 256, 512, 1024) if c < cores)

        def check(record: dict[str, Any], true_time: float) -> None:
            modelled = record["result"]["model_time_s"]
            if not math.isclose(modelled, true_time, rel_tol=1e-9):
                raise AssertionError(f"sim: noise-free time {modelled} != truth {true_time}")

        return Landscape(
            label=f"sim/hopper VPIC-IO at {cores} cores", provenance="SIMULATED",
            kernel=self.kernel, cores=cores, params=self.params, space=self.config.space,
            candidates=candidates, backend=backend, truth=truth,
            training=self._training(scales, backend), check=check,
            bytes_written=get_kernel(self.kernel).bytes_per_rank(self.params) * cores,
        )


class ReplayLandscapes:
    """The replayed landscape of (b): recorded local runs, target = the largest scale."""

    def __init__(self, path: Path) -> None:
        self.path = path
        frame = pd.read_csv(path)
        frame = frame[frame["write_time"].notna() & (frame["write_time"] > 0)]
        self.kernel = str(frame["kernel"].iloc[0])
        self.cores = int(frame["cores"].max())
        local = load_config(LOCAL_CONFIG)
        self.params = local.kernel.args
        self.settings = [str(c) for c in frame.columns
                         if c in SETTINGS or str(c).startswith(HINT_PREFIX)]
        values = {c: sorted(frame[c].dropna().unique().tolist(), key=str)
                  for c in self.settings}
        self.space = SearchSpace.from_mapping(values)
        training = frame[frame["cores"] < self.cores]
        self.training = training[[*self.settings, "cores", "write_time"]].reset_index(drop=True)
        target = frame[frame["cores"] == self.cores]
        self.bytes_written = (int(target["bytes_written"].max()) if "bytes_written" in frame
                              else get_kernel(self.kernel).bytes_per_rank(self.params)
                              * self.cores)
        self.median = self._backend(0, "median")
        self.candidates = self.median.candidates(self.cores)
        self.truth = {}
        for settings in self.candidates:
            record = self.median.measure(RunRequest(self.kernel, self.cores, settings,
                                                    self.params))
            self.truth[record["config_key"]] = float(record["result"]["times_s"]["total"])

    def _backend(self, seed: int, pick: str) -> ReplayBackend:
        raw = {
            "system": {"name": "local", "scratch": ".", "cores_per_node": 4},
            "kernel": {"name": self.kernel, "args": self.params},
            "backend": {"name": "replay", "replay_data": str(self.path), "replay_pick": pick},
            "tune": {"seed": seed},
        }
        return ReplayBackend(build_config(raw, self.path.parent))

    def landscape(self, seed: int) -> Landscape:
        return Landscape(
            label=f"replay of {self.path.name}: VPIC-IO at {self.cores} ranks",
            provenance="REPLAYED", kernel=self.kernel, cores=self.cores, params=self.params,
            space=self.space, candidates=self.candidates, backend=self._backend(seed, "draw"),
            truth=self.truth, training=self.training, bytes_written=self.bytes_written,
        )


# --------------------------------------------------------------------------- searches


def strategy_options(name: str, budget: int, seed: int) -> dict[str, Any]:
    """Each strategy's options at ``budget``; the model runs the paper's method here
    (``method=paper``), splitting the budget 2:1 as the paper's 20 + 10."""
    if name == "model":
        top_k = max(1, min(20, budget * 2 // 3))
        return {"method": "paper", "top_k": top_k, "top_k_refit": max(1, budget - top_k),
                "refit_rounds": 1, "seed": seed}
    if name == "exhaustive":
        return {}
    return {"seed": seed}


@dataclass(frozen=True)
class Outcome:
    """One search: true ratio and bandwidth of what it returned, and the runs it took."""

    ratio: float
    target_runs: int
    training_runs: int
    bandwidth_mib_s: float


def run_search(landscape: Landscape, name: str, budget: int | None,
               options: dict[str, Any]) -> tuple[Outcome, MeasuringContext]:
    """One search; the outcome is judged by the truth of its best measured configuration."""
    context = landscape_context(landscape, budget)
    make_strategy(name, **options).search(context)
    best = context.best()
    ratio = landscape.ratio(best.key) if best is not None else 0.0
    bandwidth = (landscape.bytes_written / 2**20 / landscape.truth[best.key]
                 if best is not None else 0.0)
    training = len(landscape.training) if name in TRAINED else 0
    return Outcome(ratio, len(context.evaluations), training, bandwidth), context


def incumbent_ratios(landscape: Landscape, context: MeasuringContext) -> list[float]:
    """After each evaluation (in order): the true ratio of the best measured so far."""
    ratios, best = [], math.inf
    current = 0.0
    for evaluation in sorted(context.evaluations.values(), key=lambda e: e.order):
        if evaluation.statistic is not None and evaluation.statistic < best:
            best = evaluation.statistic
            current = landscape.ratio(evaluation.key)
        ratios.append(current)
    return ratios


@dataclass
class Row:
    """One strategy at one budget on one landscape family, over the seeds."""

    landscape: str
    provenance: str
    cores: int
    budget: int
    strategy: str
    outcomes: list[Outcome]

    def figures(self) -> dict[str, Any]:
        """Median and worst (lowest) ratio over the seeds; runs and bandwidth as medians."""
        ratios = [o.ratio for o in self.outcomes]
        return {
            "provenance": self.provenance, "landscape": self.landscape, "cores": self.cores,
            "budget": self.budget, "strategy": self.strategy, "seeds": len(self.outcomes),
            "median_ratio": float(np.median(ratios)), "worst_ratio": float(min(ratios)),
            "median_bandwidth_mib_s": float(np.median([o.bandwidth_mib_s
                                                       for o in self.outcomes])),
            "target_runs": float(np.median([o.target_runs for o in self.outcomes])),
            "training_runs": float(np.median([o.training_runs for o in self.outcomes])),
            "total_runs": float(np.median([o.target_runs + o.training_runs
                                           for o in self.outcomes])),
        }


@dataclass
class Study:
    """All results on one landscape family (one target scale over the seeds)."""

    label: str
    provenance: str
    cores: int
    space_size: int
    best_bandwidth: float
    best_settings: Configuration
    training_runs: int
    rows: list[Row]
    long_runs: dict[str, list[list[float]]]

    def row(self, strategy: str, budget: int) -> Row | None:
        return next((r for r in self.rows if r.strategy == strategy and r.budget == budget),
                    None)


def long_searches(long_budget: int, strategies: Sequence[str]
                  ) -> dict[str, tuple[str, int | None, dict[str, Any]]]:
    """The long runs behind "runs to do as well": label -> (strategy, budget, options).

    The paper's GA always; ``tpe`` and ``random`` when they are among ``strategies``.
    """
    longs: dict[str, tuple[str, int | None, dict[str, Any]]] = {
        PAPER_GA_LABEL: ("genetic", None, dict(PAPER_GA)),
    }
    for name in ("tpe", "random"):
        if name in strategies:
            longs[name] = (name, long_budget, {})
    return longs


def compare(landscapes: Callable[[int], Landscape], seeds: Sequence[int],
            budgets: Sequence[int], strategies: Sequence[str], long_budget: int) -> Study:
    """Every strategy at every budget on the landscape of every seed, and the long runs
    (none when ``long_budget`` is 0)."""
    outcomes: dict[tuple[int, str], list[Outcome]] = {}
    curves: dict[str, list[list[float]]] = {}
    longs = long_searches(long_budget, strategies) if long_budget else {}
    first: Landscape | None = None
    for seed in seeds:
        started = time.monotonic()
        landscape = landscapes(seed)
        first = first or landscape
        for budget in budgets:
            for name in strategies:
                outcome, _ = run_search(landscape, name, budget,
                                        strategy_options(name, budget, seed))
                outcomes.setdefault((budget, name), []).append(outcome)
        for label, (name, limit, options) in longs.items():
            _, context = run_search(landscape, name, limit, {**options, "seed": seed})
            curves.setdefault(label, []).append(incumbent_ratios(landscape, context))
        note(f"  {landscape.label}, seed {seed}: {time.monotonic() - started:.1f} s")
    assert first is not None
    best_key = min(first.truth, key=lambda k: first.truth[k])
    best_settings = next(c for c in first.candidates if first.key(c) == best_key)
    rows = [Row(first.label, first.provenance, first.cores, b, n, outcomes[(b, n)])
            for b in budgets for n in strategies]
    return Study(first.label, first.provenance, first.cores, len(first.candidates),
                 first.bytes_written / 2**20 / first.best_time, best_settings,
                 len(first.training), rows, curves)


def runs_to_reach(curve: list[float], target: float) -> int | None:
    """Evaluations until the incumbent's ratio is at least ``target`` (None: never)."""
    return next((i + 1 for i, r in enumerate(curve) if r >= target - 1e-12), None)


@dataclass(frozen=True)
class Match:
    """How long one long search takes to do as well as the model-guided search."""

    median_runs: float  # median over seeds; inf when most seeds never get there
    reached: int
    seeds: int
    longest: int
    final_median: float

    def runs_text(self) -> str:
        return (f"{self.median_runs:.0f}" if math.isfinite(self.median_runs)
                else f">{self.longest}")


def claim_target(study: Study, budgets: Sequence[int]) -> tuple[int, Row] | None:
    """The budget nearest the paper's 30 and the model-guided row there, if it was run."""
    budget = min(budgets, key=lambda b: (abs(b - CLAIM_BUDGET), b))
    row = study.row("model", budget)
    return None if row is None else (budget, row)


def matches(study: Study, target: float) -> dict[str, Match]:
    """Runs each long search needs to reach ``target`` (a ratio), over the seeds."""
    out = {}
    for label, curves in study.long_runs.items():
        needed = [runs_to_reach(c, target) for c in curves]
        out[label] = Match(
            median_runs=float(np.median([n if n is not None else math.inf for n in needed])),
            reached=sum(n is not None for n in needed), seeds=len(curves),
            longest=max(len(c) for c in curves),
            final_median=float(np.median([c[-1] for c in curves])),
        )
    return out


def verdict(study: Study, budgets: Sequence[int]) -> str:
    """The paper's claim checked on this landscape, from the figures just measured."""
    claim = claim_target(study, budgets)
    if claim is None:
        return f"verdict {study.label}: not checked (the model strategy was not run)"
    budget, row = claim
    figures = row.figures()
    median, worst = figures["median_ratio"], figures["worst_ratio"]
    within = median >= WITHIN
    text = (f"verdict {study.label} ({study.provenance}): model-guided with {budget} runs "
            f"(+{figures['training_runs']:.0f} training runs) reaches a median {median:.1%} "
            f"of the best bandwidth (worst {worst:.1%}), {'within' if within else 'NOT within'}"
            f" {1 - WITHIN:.0%}")
    ga = matches(study, median - TOLERANCE).get(PAPER_GA_LABEL)
    if ga is None:
        return text + "; the paper's GA was not run"
    runs = (f"a median of {ga.median_runs:.0f} runs" if math.isfinite(ga.median_runs)
            else f"more than its {ga.longest} runs in most seeds")
    holds = within and ga.median_runs >= HUNDREDS
    if budget >= study.space_size:
        text += (f" (the space has only {study.space_size} configurations: every search "
                 f"evaluates all of them at {budget} runs)")
    return (f"{text}; the paper's GA needs {runs} to do as well (within {TOLERANCE:.1%}) -> "
            f"the paper's claim {'HOLDS' if holds else 'DOES NOT HOLD'} here (model median >= "
            f"{WITHIN:.0%} at {budget} runs and GA >= {HUNDREDS} runs)")


# --------------------------------------------------------------------------- output


def shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (shorter messages)."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def settings_text(settings: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={describe_value(k, v)}" for k, v in settings.items())


def print_table(study: Study, seeds: int, budgets: Sequence[int], noise_text: str) -> None:
    kind = study.provenance
    print()
    print(f"== {kind}: {study.label} ({kind.lower()} numbers, not measurements on this "
          f"machine)" if kind == "SIMULATED" else f"== {kind}: {study.label} (real local "
          "runs, answered from the recording)")
    print(f"   {study.space_size} candidate configurations; {noise_text}; {seeds} seeds; "
          f"model trained on {study.training_runs} runs at smaller scales")
    print(f"   best true bandwidth {study.best_bandwidth:,.0f} MiB/s "
          f"({settings_text(study.best_settings)})")
    print("   ratio = true bandwidth of the configuration a strategy returns / best true "
          "bandwidth; runs are medians over seeds")
    header = (f"   {'budget':>6}  {'strategy':<10} {'median':>7} {'worst':>7} {'MiB/s':>8} "
              f"{'target runs':>11} {'training':>8} {'total runs':>10}")
    print(header)
    for row in study.rows:
        f = row.figures()
        capped = "*" if row.budget >= study.space_size else " "
        print(f"   {row.budget:>5}{capped}  {row.strategy:<10} {f['median_ratio']:>7.3f} "
              f"{f['worst_ratio']:>7.3f} {f['median_bandwidth_mib_s']:>8,.0f} "
              f"{f['target_runs']:>11.0f} {f['training_runs']:>8.0f} {f['total_runs']:>10.0f}")
    if any(r.budget >= study.space_size for r in study.rows):
        print(f"   * budget >= the {study.space_size} configurations of the space")
    claim = claim_target(study, budgets)
    if claim is not None and study.long_runs:
        budget, row = claim
        target = row.figures()["median_ratio"] - TOLERANCE
        to_model, to_within = matches(study, target), matches(study, WITHIN)
        print(f"   long runs: the smallest budget at which each would have returned a "
              f"configuration with ratio >= {WITHIN:.2f}, and >= {target:.3f} (model-guided's "
              f"median at {budget} runs less {TOLERANCE:.3f}); medians over seeds, '>N': not "
              "reached in most seeds")
        print(f"     {'search':<26} {'to ' + format(WITHIN, '.2f'):>8} {'to model':>9} "
              f"{'reached':>8} {'runs':>5} {'final median':>12}")
        for label, match in to_model.items():
            print(f"     {label:<26} {to_within[label].runs_text():>8} "
                  f"{match.runs_text():>9} {match.reached:>4}/{match.seeds:<3} "
                  f"{match.longest:>5} {match.final_median:>12.3f}")


def write_csv(studies: Sequence[Study], header: bool = True) -> None:
    rows = [r.figures() for s in studies for r in s.rows]
    if not rows:
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), lineterminator="\n")
    if header:
        writer.writeheader()
    for row in rows:
        writer.writerow({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()})


# --------------------------------------------------------------------------- recording


def record_local(path: Path, repetitions: int, scales: Sequence[int],
                 limit: int | None = None) -> None:
    """Run the vpic kernel for real over configs/local.yaml's space into a CSV at ``path``.

    Every valid configuration at each scale (the first ``limit`` with a limit),
    ``repetitions`` times, repetition-major (all
    configurations once, then again) so drifts in machine load spread over all of them.
    Failed runs are rows without a time (the replay backend skips them). Written to a
    temporary file and renamed, so an interrupted recording leaves no partial landscape.
    """
    from iotune.backends.mpi import MpiBackend

    config = load_config(LOCAL_CONFIG)
    backend = MpiBackend(config)
    kernel, params, space = config.kernel.name, config.kernel.args, config.space
    tasks = [(cores, c, rep) for rep in range(repetitions) for cores in scales
             for c in space.configurations(cores, config.system.limits)[:limit]]
    note(f"recording {len(tasks)} real runs of {kernel} at {', '.join(map(str, scales))} "
         f"ranks into {shown(path)} ...")
    rows = []
    started = time.monotonic()
    for i, (cores, settings, rep) in enumerate(tasks, start=1):
        record = backend.measure(RunRequest(kernel, cores, settings, params), rep)
        ok = record["status"] == "ok"
        result = record.get("result") or {}
        rows.append({"kernel": kernel, "cores": cores, "rep": rep, **settings,
                     "write_time": result["times_s"]["total"] if ok else None,
                     "bandwidth_mib_s": result.get("bandwidth_mib_s") if ok else None,
                     "bytes_written": result.get("bytes_written") if ok else None,
                     "status": record["status"]})
        if i % 10 == 0 or i == len(tasks):
            elapsed = time.monotonic() - started
            note(f"  {i}/{len(tasks)} runs, {elapsed:.0f} s, about "
                 f"{elapsed / i * (len(tasks) - i):.0f} s to go")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".csv.partial")
    pd.DataFrame(rows).to_csv(partial, index=False)
    os.replace(partial, path)
    failed = sum(r["status"] != "ok" for r in rows)
    note(f"recorded {len(rows)} runs ({failed} failed) in {time.monotonic() - started:.0f} s")


# --------------------------------------------------------------------------- main


def int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers"
                                         ) from None
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give positive integers")
    return values


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_quick(parser, f"2 seeds, the first scale, budget 30, model, genetic and random, no "
                      f"long runs; --record-local records {QUICK_RECORDED} configurations "
                      "once at 2 and 4 ranks into a temporary file (the recorded landscape "
                      "is kept)")
    parser.add_argument("--seeds", type=int, default=None, help="seeds 0..N-1 (default 20)")
    parser.add_argument("--budgets", type=int_list, default=list(BUDGETS),
                        help="comma-separated budgets (default 10,20,30,60)")
    parser.add_argument("--scales", type=int_list, default=list(SCALES),
                        help="simulated target scales (default 512,2048,8192)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES),
                        help="comma-separated strategies (default all five)")
    parser.add_argument("--format", choices=("table", "csv"), default="table")
    parser.add_argument("--no-sim", action="store_true", help="skip the simulated part (a)")
    parser.add_argument("--long-budget", type=int, default=LONG_BUDGET,
                        help="budget of the long tpe and random runs behind 'runs to do as "
                             "well' (default 200; 0 skips all long runs, the paper's GA too)")
    parser.add_argument("--replay-data", type=Path, default=DEFAULT_REPLAY,
                        help="recorded landscape CSV for (b) (default "
                             "benchmarks/data/local-vpic.csv)")
    parser.add_argument("--record-local", action="store_true",
                        help="record the landscape of (b) first with real runs (minutes)")
    parser.add_argument("--record-repetitions", type=int, default=3,
                        help="repetitions per configuration when recording (default 3)")
    args = apply_quick(parser, parser.parse_args(argv), seeds=2, budgets=[30], long_budget=0,
                       if_default={"strategies": "model,genetic,random"})
    seeds = list(range(args.seeds if args.seeds is not None else 20))
    scales = args.scales[:1] if args.quick else args.scales
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = sorted(set(strategies) - set(known_strategies()))
    if unknown or not strategies:
        parser.error(f"--strategies: unknown {', '.join(unknown) or '(none given)'}; known: "
                     f"{', '.join(known_strategies())}")
    budgets = sorted(set(args.budgets))

    scratch = Path(tempfile.mkdtemp(prefix="iotune-strategies-"))
    if args.record_local and args.quick:
        args.replay_data = scratch / "quick-local-vpic.csv"
        record_local(args.replay_data, 1, (2, 4), limit=QUICK_RECORDED)
    elif args.record_local:
        record_local(args.replay_data, args.record_repetitions, (2, 4))

    studies: list[Study] = []
    notes: list[str] = []
    started = time.monotonic()
    noise = {"SIMULATED": f"noise level {NOISE:g} of the preset, seeded per seed; truth = "
                          "noise-free model time",
             "REPLAYED": "each measurement a seeded draw among the recorded repeats; truth = "
                         "median of the repeats"}

    def show(study: Study) -> None:
        """Print a study as soon as it is done, so a later failure loses nothing."""
        if args.format == "csv":
            write_csv([study], header=not studies)
        else:
            if not studies:
                print(f"Search strategies at equal budgets ({len(seeds)} seeds; budget = "
                      "configurations evaluated at the target scale)")
            print_table(study, len(seeds), budgets, noise[study.provenance])
        sys.stdout.flush()
        studies.append(study)

    if not args.no_sim:
        sims = SimLandscapes()
        for cores in scales:
            note(f"(a) SIMULATED hopper, VPIC-IO at {cores} cores")
            show(compare(partial(sims.landscape, cores), seeds, budgets, strategies,
                         args.long_budget))
    path = args.replay_data
    if path.exists():
        note(f"(b) REPLAYED {shown(path)}")
        replay = ReplayLandscapes(path)
        show(compare(replay.landscape, seeds, budgets, strategies, args.long_budget))
    else:
        where = "" if args.replay_data == DEFAULT_REPLAY else f" --replay-data {shown(path)}"
        notes.append(f"(b) skipped: no recorded landscape at {shown(path)}; record one with "
                     f"'python benchmarks/strategies.py --record-local{where}' (real MPI runs, "
                     "a few minutes)")

    shutil.rmtree(scratch, ignore_errors=True)
    if args.format == "csv":
        for line in notes + [verdict(s, budgets) for s in studies]:
            note(line)
        return 0
    print()
    for line in notes:
        print(line)
    for study in studies:
        print(verdict(study, budgets))
    print(f"(benchmark time {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
