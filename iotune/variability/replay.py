r"""Prediction-guided placement replayed over recorded probe rounds: does it pay here?

Equation (3) of :mod:`iotune.variability.placement` is what placement gains when the
predicted states are right and every target takes its state's *mean* time. Wan et al.
check it with a trace-driven simulation (their Figure 12); this module does the same on the
store's probe rounds, so that a gain the tool's own data contradicts is never printed alone.

**States.** Every probe latency gets the MAP state of one mixture fitted to *all* targets'
latencies (pooled, as :func:`~iotune.variability.analysis.latest_probe_states` does): for
placement a target that is slower than the others is slower, whatever its own history, so
it should be called busy. ``T_idle`` and ``T_busy`` are that mixture's component means.

**Forecasts.** A round ``r`` is replayed with the states predicted, for each target, from
what was known after round ``r - 1`` of the same probe session (:data:`FORECASTS`):

``persistence``
    the target's state in round ``r - 1`` ("the same as last round"; needs no training);
``<classifier>``
    the paper's method: one classifier per target (:func:`~iotune.variability.classify.
    make_classifier`, any of :data:`~iotune.variability.classify.CLASSIFIERS`) trained on
    the features of ``iotune classify`` (latency, 10-minute window, queue) to predict the
    target's state one round later, on the rounds before the split only;
``hindsight``
    round ``r``'s own states, known to no real scheduler: the most any forecast can gain on
    these latencies.

Only the rounds after a time-ordered split (:func:`~iotune.variability.validation.
time_split`, the earliest ``train_fraction`` of the rounds train the classifier) are
replayed, the same rounds for every forecast, so their gains compare. Always guessing the
more frequent state ("all idle") is even placement, gain 1: the bar a forecast must beat.

**A round.** The recorded latencies are the time each target takes per probe-sized unit of
data, and write time is proportional to the data written (the paper's assumption): ``n``
units written evenly end after the slowest target's latency; placed by equation (1) from the
predicted counts, an idle target writes ``alpha n / n_idle`` units and a busy one
``(1 - alpha) n / n_busy``, and the write ends when the slowest target does.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iotune.errors import ConfigError, DataError
from iotune.variability.classify import (
    CLASSIFIERS,
    LATENCY_FEATURES,
    add_window_features,
    future_labels,
    make_classifier,
)
from iotune.variability.placement import placement
from iotune.variability.queue import FEATURES as QUEUE_FEATURES
from iotune.variability.samples import Samples
from iotune.variability.state import fit_state_model
from iotune.variability.validation import TRAIN_FRACTION, time_split

PERSISTENCE = "persistence"
HINDSIGHT = "hindsight"
#: Forecasts a replay can use besides a classifier's name.
FORECASTS = (PERSISTENCE, HINDSIGHT)
#: Default classifier of the replay: the fastest to train per target on a few hundred rounds,
#: and as good as the others on probe data (``docs/variability.md``).
DEFAULT_CLASSIFIER = "svm"
#: Mean gain a forecast must reach for placement to be said to pay: 1% faster on average.
MIN_GAIN = 1.01
#: A forecast is "no better than guessing" unless its accuracy beats always guessing the
#: more frequent state by at least this much.
GUESSING_MARGIN = 0.01
#: Below this chance that a busy target is still busy one round later, the state does not
#: persist long enough for a forecast from the last round to steer data away from it.
MIN_BUSY_PERSISTENCE = 0.5
#: Fewest replayed rounds for a verdict.
MIN_REPLAY_ROUNDS = 10


@dataclass(frozen=True)
class PlacementRound:
    """One replayed round: predicted state counts, ``alpha`` and both throughputs."""

    time: float
    n_idle: int
    n_busy: int
    alpha: float
    even_bytes_s: float
    placed_bytes_s: float

    @property
    def gain(self) -> float:
        """Placed over even throughput."""
        return self.placed_bytes_s / self.even_bytes_s

    def row(self) -> dict[str, Any]:
        return {"time": self.time, "predicted_idle": self.n_idle,
                "predicted_busy": self.n_busy, "alpha": self.alpha,
                "even_mib_s": self.even_bytes_s / 2**20,
                "placed_mib_s": self.placed_bytes_s / 2**20, "gain": self.gain}


@dataclass(frozen=True)
class ForecastReplay:
    """The replay of one forecast: its rounds and how often it named the state met."""

    forecast: str
    rounds: list[PlacementRound]
    accuracy: float

    @property
    def mean_gain(self) -> float:
        return statistics.fmean(r.gain for r in self.rounds) if self.rounds else math.nan

    @property
    def faster(self) -> int:
        return sum(r.gain > 1 for r in self.rounds)

    @property
    def slower(self) -> int:
        return sum(r.gain < 1 for r in self.rounds)

    def as_dict(self) -> dict[str, Any]:
        return {"forecast": self.forecast, "mean_gain": self.mean_gain,
                "rounds": len(self.rounds), "faster": self.faster, "slower": self.slower,
                "accuracy": self.accuracy}


@dataclass(frozen=True)
class PlacementReplay:
    """Every forecast's replay over the same test rounds, and what explains the gains.

    ``guessing`` is the accuracy of always guessing the training part's more frequent
    state; ``busy_persistence`` the share of busy target-rounds followed by a busy one
    (over all rounds). ``notes`` are the reasons of :meth:`verdict`.
    """

    description: str
    targets: int
    train_rounds: int
    t_idle: float
    t_busy: float
    classifier: str
    forecasts: list[ForecastReplay]
    guessing: float
    busy_persistence: float
    notes: list[str] = field(default_factory=list)

    def forecast(self, name: str) -> ForecastReplay:
        return next(f for f in self.forecasts if f.forecast == name)

    @property
    def pays(self) -> bool:
        """True when a forecast a scheduler could use gains :data:`MIN_GAIN` on average."""
        return self.best.mean_gain >= MIN_GAIN

    @property
    def best(self) -> ForecastReplay:
        """The usable (not hindsight) forecast with the highest mean gain."""
        return max((f for f in self.forecasts if f.forecast != HINDSIGHT),
                   key=lambda f: f.mean_gain)

    def verdict(self) -> str:
        """One sentence: does prediction-guided placement pay on these rounds, and why not."""
        best = self.best
        if self.pays:
            return (f"pays: {best.forecast} gains {best.mean_gain:.3f}x on the replayed "
                    "rounds")
        return (f"does not pay on these probes (best {best.forecast}, "
                f"{best.mean_gain:.3f}x): " + "; ".join(self.why_not()))

    def why_not(self) -> list[str]:
        """The reasons a forecast does not pay, from the replay's own figures."""
        reasons = []
        clf = self.forecast(self.classifier)
        if clf.accuracy < self.guessing + GUESSING_MARGIN:
            reasons.append(f"the {self.classifier} classifier is no better than guessing "
                           f"(it names the state met in {clf.accuracy:.1%} of target-rounds; "
                           f"always 'idle' does in {self.guessing:.1%})")
        if self.busy_persistence < MIN_BUSY_PERSISTENCE:
            reasons.append(f"low state persistence (a busy target is busy again one round "
                           f"later in {self.busy_persistence:.1%} of cases)")
        hindsight = self.forecast(HINDSIGHT)
        if hindsight.mean_gain <= 1:
            reasons.append(f"even the round's own states (hindsight) lose, "
                           f"{hindsight.mean_gain:.3f}x: within a state latencies spread as "
                           "much as the states differ, and the slowest target sets the time")
        else:
            reasons.append(f"the forecasts miss too often (knowing each round's states would "
                           f"gain {hindsight.mean_gain:.3f}x, so the loss is the forecast's)")
        return reasons

    def document(self) -> dict[str, Any]:
        return {"replayed_on": self.description, "targets": self.targets,
                "train_rounds": self.train_rounds,
                "test_rounds": len(self.forecasts[0].rounds), "t_idle": self.t_idle,
                "t_busy": self.t_busy, "classifier": self.classifier,
                "guessing_accuracy": self.guessing,
                "busy_persistence": self.busy_persistence,
                "forecasts": [f.as_dict() for f in self.forecasts], "pays": self.pays,
                "verdict": self.verdict()}


def replay_placement(samples: Samples, *, classifier: str = DEFAULT_CLASSIFIER,
                     train_fraction: float = TRAIN_FRACTION, window_s: float = 600.0,
                     use_queue: bool = True, seed: int = 0) -> PlacementReplay:
    """Replay placement over the probe ``samples`` with persistence, ``classifier`` and
    hindsight forecasts (module doc). ConfigError for an unknown classifier or a
    ``train_fraction`` outside (0, 1); DataError with fewer than
    :data:`MIN_REPLAY_ROUNDS` test rounds or too few samples for a mixture."""
    if classifier not in CLASSIFIERS:
        raise ConfigError(f"--classifier: {classifier!r} is not one of {', '.join(CLASSIFIERS)}")
    if not 0 < train_fraction < 1:
        raise ConfigError(f"--train-fraction: {train_fraction!r} is not a number between 0 "
                          "and 1 (exclusive)")
    if samples.source != "probe":
        raise DataError("placement replay: it needs probe rounds (targets), not runs")
    frame = samples.frame
    model = fit_state_model(samples.values)
    frame = frame.assign(state=model.labels(samples.values), target=frame["target"].astype(str))
    frame = add_window_features(frame, window_s).reset_index(drop=True)
    frame["next_state"] = future_labels(frame, list(frame["state"]), 1)
    train, _ = time_split(frame["time"].to_numpy(dtype=float), train_fraction)
    is_train = np.zeros(len(frame), dtype=bool)
    is_train[train] = True
    frame["train"] = is_train
    frame["predicted"] = _classifier_forecast(frame, classifier, use_queue, seed)

    mixture = model.mixture
    names = (PERSISTENCE, classifier, HINDSIGHT)
    rounds: dict[str, list[PlacementRound]] = {n: [] for n in names}
    right = dict.fromkeys(names, 0)
    met = 0
    train_rounds = 0
    unit = samples.size_bytes or 1
    for _, session in frame.groupby("probe_id", sort=False):
        previous = None
        for _, rows in session.groupby("round", sort=True):
            if bool(rows["train"].any()):
                train_rounds += 1
            elif previous is not None:
                before = previous.set_index("target")
                now = rows.set_index("target")
                known = [t for t in now.index if t in before.index]
                if known:
                    forecasts = {PERSISTENCE: before.loc[known, "state"],
                                 classifier: before.loc[known, "predicted"],
                                 HINDSIGHT: now.loc[known, "state"]}
                    latency = now.loc[known, "latency"]
                    met += len(known)
                    for name, predicted in forecasts.items():
                        right[name] += int((predicted.to_numpy()
                                            == now.loc[known, "state"].to_numpy()).sum())
                        rounds[name].append(_replay_round(
                            float(rows["time"].iloc[0]), list(predicted), list(latency),
                            mixture.idle.mean, mixture.busy.mean, unit))
            previous = rows
    if len(rounds[PERSISTENCE]) < MIN_REPLAY_ROUNDS:
        raise DataError(f"placement replay: {len(rounds[PERSISTENCE])} probe rounds after the "
                        f"first {train_fraction:.0%} (at least {MIN_REPLAY_ROUNDS} needed)")
    train_states = frame.loc[frame["train"], "state"]
    idle_share = float((train_states == "idle").mean()) if len(train_states) else 1.0
    majority = "idle" if idle_share >= 0.5 else "busy"
    tested = frame[~frame["train"]]
    guessing = float((tested["state"] == majority).mean())
    busy = frame[(frame["state"] == "busy") & frame["next_state"].notna()]
    persistence = float((busy["next_state"] == "busy").mean()) if len(busy) else 0.0
    return PlacementReplay(
        description=(f"{samples.description}, {frame['target'].nunique()} targets"),
        targets=int(frame["target"].nunique()), train_rounds=train_rounds,
        t_idle=mixture.idle.mean, t_busy=mixture.busy.mean, classifier=classifier,
        forecasts=[ForecastReplay(n, rounds[n], right[n] / met) for n in names],
        guessing=guessing, busy_persistence=persistence)


def _classifier_forecast(frame: Any, classifier: str, use_queue: bool, seed: int) -> list[str]:
    """Per row, the target's state one round later as predicted by a classifier trained on
    that target's training rows. A target whose training rows hold one state, and a row
    whose features are missing (before the first queue snapshot), get the persistence
    forecast (the row's own state)."""
    columns = list(LATENCY_FEATURES)
    if use_queue:
        columns += [c for c in QUEUE_FEATURES if c in frame.columns]
    predicted = list(frame["state"])
    for _, rows in frame.groupby("target", sort=False):
        x = rows[columns].apply(lambda c: c.astype(float))
        complete = x.notna().all(axis=1)
        fit = rows["train"] & rows["next_state"].notna() & complete
        y = (rows.loc[fit, "next_state"] == "busy").to_numpy(dtype=int)
        if len(set(y.tolist())) < 2:
            continue
        model = make_classifier(classifier, seed).fit(x[fit].to_numpy(), y)
        use = complete
        if use.any():
            guess = model.predict(x[use].to_numpy())
            for index, value in zip(rows.index[use.to_numpy()], guess, strict=True):
                predicted[index] = "busy" if value else "idle"
    return predicted


def _replay_round(time: float, predicted: Sequence[str], latency: Sequence[float],
                  t_idle: float, t_busy: float, unit_bytes: int) -> PlacementRound:
    """One round placed by the ``predicted`` states and timed with the recorded latencies
    (both in the same target order)."""
    n = len(latency)
    n_idle = sum(p == "idle" for p in predicted)
    advice = placement(n_idle, n - n_idle, t_idle, t_busy)
    even = max(latency)
    placed = max(t * (advice.alpha * n / n_idle if p == "idle"
                      else (1 - advice.alpha) * n / (n - n_idle))
                 for p, t in zip(predicted, latency, strict=True))
    total = n * unit_bytes
    return PlacementRound(time, n_idle, n - n_idle, advice.alpha, total / even, total / placed)

