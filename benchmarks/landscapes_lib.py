"""Landscapes, their budgets, noise variants and one judged tune, for ``real_landscapes.py``.

A *landscape* is a CSV the replay backend reads (one row per recorded run, one column per
setting, ``cores``, ``write_time``; the row with every setting empty is the default). This
module decides how a landscape is judged (:func:`describe`: target scale, training scales,
budget), writes its production-noise variants (:func:`write_noise_variant`) and runs one
train-then-tune exactly as a user would, judged by the truth (:func:`judged_tune`). It
imports iotune lazily, so a worker process pays for it once.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from iotune.backends.replay import ReplayBackend
    from iotune.config import Config
    from iotune.tune.result import TuneResult

#: Budgets the development data's README names, by file stem (noise variants take their
#: base landscape's). Any other landscape gets :func:`budget_rule`'s.
NAMED_BUDGETS: dict[str, int] = {
    "s3d_16ranks": 30,
    "ior_64ranks": 30,
    "s3d_400cube_16to64": 8,
    "btio300_2to16": 5,
}
#: The paper's budget (``top_k + refit_rounds x top_k_refit``), for same-scale landscapes and
#: as the cap of cross-scale ones.
SAME_SCALE_BUDGET = 30
#: Share of the target scale's configurations a cross-scale tune may run (8 of 19 and 5 of
#: 13 on the README's cross-scale landscapes): well under half, so the search must choose.
CROSS_SCALE_SHARE = 0.4
#: Smallest budget the rule gives: two configurations and one race run.
MIN_BUDGET = 3
#: Noise variants are made of landscapes whose every configuration has this many repeats
#: at the target scale: fewer repeats say too little about the spread to stretch it.
NOISE_MIN_REPEATS = 5
#: The replay backend's default column names, which the landscapes use.
TIME_COLUMN = "write_time"
CORES_COLUMN = "cores"
#: A configuration is "within 5%" of the best when its true time is at most this times the
#: best true time.
WITHIN = 1.05
#: A recommended change is "slower" when its true time exceeds the default's by this factor.
SLOWER = 1.02
#: A configuration is a real gain when the default's true time is at least this times its own.
FASTER = 1.1
#: The time a replayed tune minimises (the tune's default target): a replayed run's one time.
TIME_TARGET = "write"


class LandscapeError(ValueError):
    """A CSV the benchmark cannot judge (one line saying why)."""


@dataclass(frozen=True)
class Landscape:
    """How one landscape is judged.

    ``target`` is the largest recorded scale (the tune's), ``train_scales`` every smaller one
    (empty: a same-scale landscape, no training), ``repeats`` the fewest recorded runs of a
    non-default configuration at ``target``. A noise variant has ``noise`` (the factor its
    log spread was stretched by) and ``base`` (the stem of the landscape it was made from);
    a recorded landscape has ``noise`` None and ``base == name``.
    """

    name: str
    path: Path
    budget: int
    target: int
    train_scales: tuple[int, ...]
    configurations: int
    repeats: int
    base: str
    noise: float | None = None

    @property
    def is_variant(self) -> bool:
        return self.noise is not None


def replay_config(data: Path, workdir: Path, seed: int = 0,
                  train_scales: Sequence[int] = ()) -> Config:
    """The config of ``iotune train``/``tune --backend replay --replay-data data`` with its
    store in ``workdir``: kernel vpic (the replay answers whatever the kernel), ``tune.seed``
    ``seed`` (which also seeds the replayed draws), and one ``design: recorded`` training
    scale per entry of ``train_scales``."""
    from iotune.config import build_config

    raw: dict[str, Any] = {
        "kernel": {"name": "vpic"},
        "backend": {"name": "replay", "replay_data": str(data)},
        "tune": {"seed": seed},
        "store": str(workdir / "store.jsonl"),
    }
    if train_scales:
        raw["train"] = {"scales": [{"cores": c, "design": "recorded"} for c in train_scales]}
    return build_config(raw, workdir)


def open_backend(data: Path) -> ReplayBackend:
    """The replay backend over ``data`` (seed 0)."""
    from iotune.backends.replay import ReplayBackend

    with tempfile.TemporaryDirectory(prefix="iotune-bench-") as tmp:
        return ReplayBackend(replay_config(data.resolve(), Path(tmp)))


def budget_rule(stem: str, scales: Sequence[int], configurations: int) -> int:
    """The budget a landscape is judged at: :data:`NAMED_BUDGETS` for a named stem; else
    :data:`SAME_SCALE_BUDGET` (30) for one scale, and for several scales ``min(30, max(3,
    round(0.4 x configurations)))`` with ``configurations`` those at the target scale
    (halves round up). The rule gives the named cross-scale budgets too (19 -> 8, 13 -> 5)."""
    if stem in NAMED_BUDGETS:
        return NAMED_BUDGETS[stem]
    if len(scales) < 2:
        return SAME_SCALE_BUDGET
    share = math.floor(CROSS_SCALE_SHARE * configurations + 0.5)
    return min(SAME_SCALE_BUDGET, max(MIN_BUDGET, share))


def describe(path: Path, *, name: str | None = None, base: str | None = None,
             noise: float | None = None) -> Landscape:
    """How ``path`` is judged (see :class:`Landscape`); ``name`` defaults to the file stem,
    ``base`` (whose budget it takes) to ``name``. Raises :class:`LandscapeError` when the
    target scale has no default row (the tune's baseline) or no other configuration."""
    name = name or path.stem
    base = base or name
    backend = open_backend(path)
    scales = backend.scales()
    target = scales[-1]
    recorded = backend.recorded(target)
    others = [r for r in recorded if r.settings]
    if not others:
        raise LandscapeError(f"{path.name}: no configuration recorded at {target} cores")
    if len(others) == len(recorded):
        raise LandscapeError(f"{path.name}: no default row (every setting empty) at {target} "
                             "cores, which the tune needs as its baseline")
    return Landscape(name=name, path=path.resolve(),
                     budget=budget_rule(base, scales, len(others)), target=target,
                     train_scales=tuple(scales[:-1]), configurations=len(others),
                     repeats=min(len(r.times) for r in others), base=base, noise=noise)


def stretch(times: np.ndarray, factor: float) -> np.ndarray:
    """``times`` of one configuration with ``factor`` times their log spread around their
    median ``m``: ``log t' = log m + factor (log t - log m)``, then all scaled by the one
    factor that makes their median exactly ``m`` again (with an even count the median is the
    mean of the middle two, which the stretch moves slightly; a common factor leaves the log
    spread as stretched). Fewer than two times are returned unchanged."""
    times = np.asarray(times, dtype=float)
    if len(times) < 2:
        return times.copy()
    centre = float(np.median(times))
    out = np.exp(math.log(centre) + factor * (np.log(times) - math.log(centre)))
    return out * (centre / float(np.median(out)))


def write_noise_variant(source: Path, factor: float, dest: Path) -> None:
    """Write ``source`` to ``dest`` with every configuration's runs :func:`stretch`-ed by
    ``factor`` (a configuration: the same ``cores`` and settings; rows without a positive
    time are copied as they are). Each configuration's median, the truth, is unchanged."""
    import pandas as pd

    frame = pd.read_csv(source)
    keys = [c for c in frame.columns if c != TIME_COLUMN]
    times = pd.to_numeric(frame[TIME_COLUMN], errors="coerce")
    usable = times.notna() & (times > 0)
    groups: dict[tuple[Any, ...], list[int]] = {}
    rows = frame[keys].itertuples(index=False, name=None)
    for position, (row, ok) in enumerate(zip(rows, usable, strict=True)):
        if ok:
            ident = tuple(None if pd.isna(v) else v for v in row)
            groups.setdefault(ident, []).append(position)
    column = times.to_numpy(dtype=float).copy()
    for positions in groups.values():
        column[positions] = stretch(column[positions], factor)
    frame[TIME_COLUMN] = column
    frame.to_csv(dest, index=False, float_format="%.17g")


def noise_variants(landscape: Landscape, factors: Iterable[float],
                   folder: Path) -> list[Landscape]:
    """``landscape``'s noise variants, one per factor, written into ``folder`` and named
    ``<name>_noise<factor>x``; none unless every configuration at its target scale has at
    least :data:`NOISE_MIN_REPEATS` repeats."""
    if landscape.repeats < NOISE_MIN_REPEATS:
        return []
    made = []
    for factor in factors:
        name = f"{landscape.name}_noise{factor:g}x"
        dest = folder / f"{name}.csv"
        write_noise_variant(landscape.path, factor, dest)
        made.append(describe(dest, name=name, base=landscape.base, noise=factor))
    return made


def true_times(backend: ReplayBackend, cores: int) -> dict[str, float]:
    """The truth at ``cores``: each recorded configuration's median time, by its key."""
    return {key: r.median for key, r in backend.table.items() if r.cores == cores}


@dataclass(frozen=True)
class Job:
    """One tune to run: a landscape, a strategy with its ``options``, a budget, a seed, and
    the knowledge base's ``priors`` for it (:class:`iotune.knowledge.priors.Priors`; None:
    a tune without a knowledge base)."""

    landscape: Landscape
    strategy: str
    budget: int
    seed: int
    options: tuple[tuple[str, Any], ...] = ()
    priors: Any = None


@dataclass(frozen=True)
class Outcome:
    """One judged tune, by true times (medians of the recorded repeats at the target scale).

    ``best`` is the best true time of a non-default configuration, ``default`` the
    default's, ``evaluated`` those of the configurations the search evaluated in evaluation
    order, ``recommended`` that of the configuration the tune recommends (the default's when
    it recommends the default); ``runs`` counts replayed runs at the target scale (the
    baseline and the race included), ``trained`` the training runs before the tune.
    """

    landscape: str
    strategy: str
    budget: int
    seed: int
    best: float
    default: float
    evaluated: tuple[float, ...]
    recommended: float
    recommend_default: bool
    runs: int
    trained: int

    @property
    def found(self) -> float:
        """Best true time over the true time of the best configuration evaluated (0: none)."""
        return self.best / min(self.evaluated) if self.evaluated else 0.0

    @property
    def chosen(self) -> float:
        """Best true time over the true time of the recommended configuration."""
        return self.best / self.recommended

    @property
    def runs_to_within(self) -> float:
        """Configurations evaluated (the first counts as 1) until one within
        :data:`WITHIN` of the best; ``inf`` if none was."""
        for i, t in enumerate(self.evaluated, 1):
            if t <= WITHIN * self.best:
                return float(i)
        return math.inf

    @property
    def slower(self) -> bool:
        """A change is recommended whose true time is over :data:`SLOWER` x the default's."""
        return not self.recommend_default and self.recommended > SLOWER * self.default

    @property
    def had_gain(self) -> bool:
        """A configuration :data:`FASTER` (10%) faster than the default was evaluated."""
        return any(t * FASTER <= self.default for t in self.evaluated)

    @property
    def missed(self) -> bool:
        """A 10% gain was evaluated and the tune still recommended the default."""
        return self.had_gain and self.recommend_default


def missed_of(outcomes: Iterable[Outcome]) -> tuple[int, int]:
    """(tunes that kept the default although a 10% gain was evaluated, tunes that
    evaluated one) among ``outcomes``: the missed chances and the chances."""
    chances = [o for o in outcomes if o.had_gain]
    return sum(o.recommend_default for o in chances), len(chances)


def slower_of(outcomes: Iterable[Outcome]) -> int:
    """Tunes among ``outcomes`` that recommended a change slower than the default."""
    return sum(o.slower for o in outcomes)


def replayed_tune(job: Job, workdir: Path) -> tuple[TuneResult, ReplayBackend, int]:
    """Run ``job`` as a user would, with its store in ``workdir`` (which should be empty):
    on a cross-scale landscape ``iotune train`` over every recorded configuration at each
    training scale first, then ``iotune tune --backend replay --fresh --strategy S --budget
    B`` at the target scale (``fresh`` only stops reuse of earlier *tune* runs; the training
    runs stay in the store for the model). No progress callbacks. Returns the tune's
    result, the replay backend (whose table holds the truth) and the training runs."""
    from iotune.backends.replay import ReplayBackend
    from iotune.store import Store
    from iotune.train import plan_campaign, run_campaign
    from iotune.tune import tune

    land = job.landscape
    config = replay_config(land.path, workdir, job.seed, land.train_scales)
    backend = ReplayBackend(config)
    trained = 0
    if land.train_scales:
        counts = run_campaign(plan_campaign(config, backend), backend, Store(config.store))
        trained = counts["ran"]
    result = tune(config, backend, Store(config.store), kernel=config.kernel.name,
                  cores=land.target, strategy=job.strategy, budget=job.budget, fresh=True,
                  strategy_options=dict(job.options), priors=job.priors)
    return result, backend, trained


def judged_tune(job: Job, workdir: Path) -> Outcome:
    """:func:`replayed_tune`, judged by the truth."""
    land = job.landscape
    result, backend, trained = replayed_tune(job, workdir)
    truth = true_times(backend, land.target)
    default_key = result.default.key
    best = min(r.median for r in backend.recorded(land.target) if r.settings)
    return Outcome(
        landscape=land.name, strategy=job.strategy, budget=job.budget, seed=job.seed,
        best=best, default=truth[default_key],
        evaluated=tuple(truth[e.key] for e in result.evaluations),
        recommended=truth[result.choice.recommended.key],
        recommend_default=result.choice.recommended.key == default_key,
        runs=result.runs, trained=trained,
    )


def run_one(job: Job) -> Outcome:
    """:func:`judged_tune` in a fresh temporary store (for a process pool)."""
    with tempfile.TemporaryDirectory(prefix="iotune-bench-") as tmp:
        return judged_tune(job, Path(tmp))


def raced_alone(backend: ReplayBackend, cores: int, settings: dict[str, Any], seed: int,
                budget: int) -> bool:
    """Whether the race (:func:`iotune.strategies.racing.race`, its own rule at its own
    ``CONFIDENCE``) recommends ``settings`` over the default when a tune at ``cores`` spends
    its baseline and its whole ``budget`` on those two alone, drawing as the replay backend
    draws for ``seed``: repetition ``rep`` of a configuration is
    :func:`~iotune.backends.replay.replay_index` of its key, the very draws a tune with that
    seed sees for them. Each is measured once (the default's first run being the baseline,
    outside the budget as in a tune), then the race spends the rest until decided: at
    budget 6, three runs each, and a seventh only where those three do not decide (it
    cannot then confirm: at 3 and 4 runs the rank test needs every run of one faster than
    every run of the other, as at 3 and 3).

    This is what an oracle that knows the configuration can do at that budget when a
    change must still be confirmed by the race's rule on this workload's runs."""
    import copy

    from iotune.backends.base import RunRequest
    from iotune.store.records import Measurement
    from iotune.strategies.base import Evaluation
    from iotune.strategies.racing import race

    seeded = copy.copy(backend)
    seeded.seed = seed  # what replay_config(..., seed) gives, without reading the CSV again

    def evaluation(wanted: dict[str, Any], order: int) -> Evaluation:
        request = RunRequest(seeded.kernel, cores, wanted, seeded.params)
        return Evaluation(dict(wanted), request.key, order=order)

    def again(e: Evaluation) -> bool:
        request = RunRequest(seeded.kernel, cores, e.settings, seeded.params)
        measurement = Measurement.from_record(seeded.measure(request, len(e.measurements)))
        e.measurements.append(measurement)
        e.times.append(measurement.time_for(TIME_TARGET))
        return True

    default, chosen = evaluation({}, 0), evaluation(settings, 1)
    again(default)
    again(chosen)
    choice = race(default, lambda: [chosen], again, max(0, budget - 1))
    return not choice.recommend_default


@dataclass(frozen=True)
class RaceOracle:
    """:func:`raced_alone` over seeds for one landscape. ``gain``: its best configuration
    (by median) is :data:`FASTER` than the default (the file has chances). Of ``seeds``
    seeds, ``best`` confirm the best configuration by median; ``most`` confirm the
    configuration at least 10% faster that is confirmed in the most seeds; ``any`` confirm
    at least one configuration at least 10% faster (a clairvoyant choice per seed: no tune
    that must confirm by the race's rule at that budget confirms in more seeds)."""

    gain: bool
    best: int
    most: int
    any: int
    seeds: int


def race_oracle(landscape: Landscape, budget: int, seeds: int) -> RaceOracle:
    """:class:`RaceOracle` of ``landscape`` at ``budget`` over seeds ``0 .. seeds - 1``."""
    backend = open_backend(landscape.path)
    recorded = backend.recorded(landscape.target)
    default = next(r for r in recorded if not r.settings)
    gains = sorted((r for r in recorded if r.settings and r.median * FASTER <= default.median),
                   key=lambda r: r.median)
    if not gains:
        return RaceOracle(False, 0, 0, 0, seeds)
    confirmed = np.array([[raced_alone(backend, landscape.target, r.settings, s, budget)
                           for s in range(seeds)] for r in gains], dtype=bool)
    return RaceOracle(True, int(confirmed[0].sum()), int(confirmed.sum(axis=1).max()),
                      int(confirmed.any(axis=0).sum()), seeds)
