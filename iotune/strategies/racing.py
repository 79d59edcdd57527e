"""Noise-aware choice of the best configuration: a race among the leaders and the default.

A search ranks configurations by one or two runs each; on a shared file system a single run
can be twice as fast as the same configuration's typical run, so the luckiest draw is not
the best configuration. After the search, the leaders race:

- **Estimate.** A configuration's typical time is the geometric mean of its successful runs
  (the median of a log-normal, the usual model of I/O time variability). Its doubt is the
  *pooled* spread of log times: the standard deviation of each configuration's runs around
  its own mean, pooled over every configuration measured more than once whose runs can
  differ (not the replays of a configuration recorded once; noise on one
  system at one scale is multiplicative and similar across settings, and pooling lets a
  configuration with a single run have an interval too). The interval of a configuration
  with ``n`` runs is ``mean ± t(df) x s / sqrt(n)`` in log space, at ``CONFIDENCE`` (90%,
  two-sided), with ``df`` the pooled degrees of freedom. With no configuration repeated yet
  the spread is unknown and every interval is unbounded.
- **Ranking.** Configurations are ranked by a *shrunken* estimate, not by the geometric
  mean itself: with one or two runs each, the lowest geometric mean among dozens of
  configurations is mostly the luckiest draw (the winner's curse). The shrunken estimate is
  the empirical-Bayes posterior mean of a configuration's log time: the configurations' true
  log times are taken as spread around their common mean ``mu`` with a between-configuration
  variance ``tau^2`` (estimated from the spread of the configurations' means, less the part
  the run-to-run noise explains), and a configuration with ``n`` runs of mean ``m`` is
  estimated at ``mu + w (m - mu)``, ``w = tau^2 / (tau^2 + s^2 / n)``. One lucky run moves
  the estimate less than three runs that agree; nothing is tuned: ``mu``, ``tau`` and ``s``
  come from the measurements. A table's central value and its order are this one
  estimate, and its first row is the best found.
- **Interval.** What a printed interval states is the configuration's *typical time*, the
  median of its run-time distribution (in a replay, the median of its recorded runs), at
  ``CONFIDENCE``: the t interval of its own runs with the pooled noise, widened to hold
  the shrunken estimate and the median of its runs (:func:`typical_interval`). The
  posterior's own interval is not used: it treats ``mu`` and ``tau`` as known, and when
  ``tau`` comes out 0 it shrinks every interval to a point at the common mean. The best
  found's interval leaves out the run that selected it (:func:`best_found_interval`), and
  the speedup printed beside it is an estimate of the ratio of typical times
  (:func:`speedup_interval`, widened the same way), not the test below that decides
  (:func:`shown_estimates` is what every printer reads).
- **Contenders.** The default configuration and the ``RACE_SIZE`` (3) leaders by rank,
  and the configurations a knowledge base named for this workload (``favoured``; the
  tune measures them first), whatever their rank.
- **Rule.** A contender is *out* when another contender :func:`beats` it. While runs are
  left and more than one contender is in, or the one left has fewer than ``MIN_RUNS`` (3)
  runs, run once more the leader or the default (the fewer-run one) while either has fewer
  than ``MIN_RUNS``, else the contender that is in with the fewest runs. Each such run
  costs one unit of the budget. The race gets every run the search left.
- **Test.** Two configurations whose runs can vary are compared by ranks
  (:mod:`iotune.strategies.rank_test`: Hodges-Lehmann speedup, Moses interval), so one slow
  outlier cannot veto a consistent gain; replays of a configuration recorded once fall back
  to the pooled log-normal interval.
- **Choice.** The best-ranked contender still in. ``tuned`` when its estimated speedup is at
  least ``MIN_GAIN`` and the lower end of its ``CONFIDENCE`` interval is above 1;
  ``default`` when nothing is faster, the default beats it, it promises less than
  ``MIN_GAIN`` or its runs cannot vary; else ``undecided`` with the runs estimated to
  decide (:func:`runs_to_decide`).

The race's reserve before the search follows the noise (:func:`race_reserve`); a tune's
:class:`Budget` holds that split and the noise it assumed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from iotune.strategies.rank_test import log_shift

if TYPE_CHECKING:
    from iotune.settings.metrics import Metric
    from iotune.strategies.base import Evaluation

CONFIDENCE = 0.90
RACE_SIZE = 3
RACE_SHARE = 0.2
MIN_RUNS = 3


@dataclass(frozen=True)
class Noise:
    """Pooled standard deviation of log times (None: no configuration repeated yet)."""

    sigma: float | None
    df: int

    @property
    def quantile(self) -> float:
        """Two-sided ``CONFIDENCE`` quantile of Student's t with ``df`` degrees of freedom."""
        from scipy.stats import t

        return float(t.ppf(0.5 + CONFIDENCE / 2, self.df)) if self.df > 0 else math.inf


def pooled_noise(evaluations: Iterable[Evaluation]) -> Noise:
    """The spread of log times pooled over every configuration with two runs or more whose
    runs can differ. Replays of a configuration recorded once cannot (each answers the one
    recorded time): counted, they would pull the pooled spread, and every interval, towards
    zero, so they are left out."""
    squares, df = 0.0, 0
    for evaluation in evaluations:
        logs = _logs(evaluation)
        if len(logs) > 1 and all(m.shows_spread for m in evaluation.measurements):
            squares += float(((logs - logs.mean()) ** 2).sum())
            df += len(logs) - 1
    return Noise(math.sqrt(squares / df) if df else None, df)


#: The gain the race keeps enough runs to confirm, at the noise known before the search:
#: at the development landscape's recorded noise (log spread 0.25, ``ior_64ranks``) it
#: gives the six runs of a fifth of 30 that ``benchmarks/confirmation_power.py`` measured
#: to be enough there, and at twice that noise the fifteen runs (half of 30) that the
#: same benchmark showed confirming more than searching more.
REFERENCE_GAIN = 1.5


@dataclass(frozen=True)
class Budget:
    """A tune's budget in runs: configurations evaluated plus the race's extra runs.

    ``total`` is the whole budget (None: the search runs until it stops), ``reserve`` the
    runs kept for the race, ``spent`` the runs the tune spent, search and race; ``noise``
    the log spread the split assumed (None: unknown) and ``noise_source`` where it came
    from. Made by :meth:`split`; :attr:`search` is what the search may spend,
    :meth:`after_search` what the whole tune may spend once the search is done (all of
    the total: what the search leaves, the race may use).
    """

    total: int | None
    reserve: int
    spent: int = 0
    noise: float | None = None
    noise_source: str = "unknown"

    @classmethod
    def split(cls, total: int | None, noise: Noise | None = None,
              source: str = "unknown") -> Budget:
        """``total`` with the race's reserve kept (:func:`race_reserve`)."""
        sigma = None if noise is None else noise.sigma
        return cls(total, race_reserve(total, sigma), noise=sigma,
                   noise_source=source if sigma is not None else "unknown")

    @property
    def search(self) -> int | None:
        """What the search may spend: the total less the reserve, at least one run; None
        (until it stops) without a total."""
        return None if self.total is None else max(1, self.total - self.reserve)

    def after_search(self, searched: int) -> int:
        """The runs the whole tune may spend once the search spent ``searched``: the total
        (or ``searched``, when the search went over it), else ``searched`` plus the
        reserve."""
        return searched + self.reserve if self.total is None else max(self.total, searched)

    def spending(self, spent: int) -> Budget:
        """This budget with ``spent`` runs spent."""
        return dataclasses.replace(self, spent=spent)


def race_reserve(total: int | None, sigma: float | None) -> int:
    """Runs kept for the race out of ``total`` at log spread ``sigma``.

    With the noise known: twice the runs of each of two configurations that confirming a
    ``REFERENCE_GAIN`` speedup takes (:func:`runs_to_confirm`), at most half the total (the
    search must still find something to confirm); unknown: ``RACE_SHARE`` of the total,
    rounded. Without a total, twice ``RACE_SIZE``.

    A knowledge base's known configurations do not change it: letting them take the
    search's place at small budgets (the race keeping the rest) was measured to miss more
    (``benchmarks/knowledge.py``: where the known configuration is not this workload's
    best, the one that is goes unmeasured)."""
    if total is None:
        return 2 * RACE_SIZE
    each = None if sigma is None else runs_to_confirm(REFERENCE_GAIN, Noise(sigma, 1))
    if each is None:
        return round(RACE_SHARE * total)
    return min(2 * each, total // 2)


@dataclass(frozen=True)
class Estimate:
    """A configuration's typical time (s) and its ``CONFIDENCE`` interval (None: unbounded)."""

    time_s: float
    low_s: float | None
    high_s: float | None
    runs: int

    def shown_interval(self, metric: Metric) -> tuple[float, float] | None:
        """The interval in ``metric``'s unit, low end first; None when unbounded."""
        if self.low_s is None or self.high_s is None:
            return None
        return metric.shown_interval(self.low_s, self.high_s)


def estimate(evaluation: Evaluation, noise: Noise) -> Estimate | None:
    """Geometric mean of ``evaluation``'s runs with its interval; None without a success."""
    logs = _logs(evaluation)
    if not len(logs):
        return None
    centre = float(logs.mean())
    if noise.sigma is None:
        return Estimate(math.exp(centre), None, None, len(logs))
    half = noise.quantile * noise.sigma / math.sqrt(len(logs))
    return Estimate(math.exp(centre), math.exp(centre - half), math.exp(centre + half),
                    len(logs))


@dataclass(frozen=True)
class Speedup:
    """Default time over best time: estimate and ``CONFIDENCE`` interval (None: unbounded)."""

    value: float
    low: float | None
    high: float | None

    @property
    def confident(self) -> bool:
        """True when the speedup is above 1 with confidence (the interval's low end)."""
        return self.low is not None and self.low > 1.0


def _log_ratio(d: np.ndarray, b: np.ndarray, noise: Noise) -> Speedup | None:
    """exp of the difference of the mean log times ``d`` (the default's) and ``b``, with
    the pooled log-normal interval ``± t(df) x s x sqrt(1/n_d + 1/n_b)`` (unbounded with
    the noise unknown); None if either side has no run."""
    if not len(d) or not len(b):
        return None
    centre = float(d.mean() - b.mean())
    if noise.sigma is None:
        return Speedup(math.exp(centre), None, None)
    half = noise.quantile * noise.sigma * math.sqrt(1 / len(d) + 1 / len(b))
    return Speedup(math.exp(centre), math.exp(centre - half), math.exp(centre + half))


def pooled_speedup(default: Evaluation, best: Evaluation, noise: Noise) -> Speedup | None:
    """The speedup of ``best`` over ``default`` with its interval from the pooled log-normal
    spread (for runs that cannot show their own spread); None if either failed."""
    d, b = _logs(default), _logs(best)
    return _log_ratio(d, b, noise)


@dataclass
class Choice:
    """The outcome of the race: what is recommended, and how sure that is."""

    best: Evaluation | None
    runner_up: Evaluation | None
    default: Evaluation
    noise: Noise
    speedup: Speedup | None
    recommend_default: bool
    tied_with_runner_up: bool
    race_runs: int
    reason: str
    #: :data:`TUNED`, :data:`DEFAULT` or :data:`UNDECIDED` (empty: from ``recommend_default``).
    outcome: str = ""
    #: For an undecided choice: more runs estimated to decide (:func:`runs_to_decide`).
    runs_to_decide: int | None = None

    def __post_init__(self) -> None:
        if not self.outcome:
            self.outcome = DEFAULT if self.recommend_default else TUNED

    @property
    def recommended(self) -> Evaluation:
        """The configuration to use: the best, or the default when it is not beaten."""
        return self.default if self.recommend_default or self.best is None else self.best


def _seconds(evaluation: Evaluation) -> np.ndarray:
    """The times (s) of ``evaluation``'s successful runs, in run order."""
    return np.asarray([t for t in evaluation.times if t > 0], dtype=float)


def _logs(evaluation: Evaluation) -> np.ndarray:
    return np.log(_seconds(evaluation))


#: Smallest between-configuration variance of log times: when the configurations' means
#: spread no more than the noise explains, every estimate shrinks almost to the common mean
#: (a positive floor keeps the weights defined and the ranking by evidence).
MIN_BETWEEN_VARIANCE = 1e-12


def shrunken_estimates(evaluations: Sequence[Evaluation],
                       noise: Noise) -> list[Estimate | None]:
    """Each configuration's shrunken estimate (see the module docstring) with a
    ``CONFIDENCE`` interval of its typical time; None for a configuration without a
    successful run.

    The estimate of a configuration with ``n`` runs of log mean ``m`` is the empirical-Bayes
    posterior mean ``mu + w (m - mu)``; a ranking by it is the race's (:func:`ranked`). Its
    interval is :func:`typical_interval`: the configuration's own runs' interval with the
    pooled noise, stretched to hold the shrunken estimate. With the noise unknown (nothing
    repeated) the plain geometric mean with an unbounded interval; with fewer than three
    measured configurations (nothing to shrink towards) the geometric mean with its own
    interval (:func:`typical_interval` centred there).
    """
    logs = [_logs(e) for e in evaluations]
    measured = [x for x in logs if len(x)]
    if noise.sigma is None or len(measured) < 3:
        return [typical_interval(e, noise) for e in evaluations]
    sigma = noise.sigma
    means = np.array([x.mean() for x in measured])
    noise_share = float(np.mean([sigma**2 / len(x) for x in measured]))
    between = max(float(means.var(ddof=1)) - noise_share, MIN_BETWEEN_VARIANCE)
    mu = float(means.mean())
    out: list[Estimate | None] = []
    for evaluation, x in zip(evaluations, logs, strict=True):
        if not len(x):
            out.append(None)
            continue
        weight = between / (between + sigma**2 / len(x))
        centre = mu + weight * (float(x.mean()) - mu)
        out.append(typical_interval(evaluation, noise, math.exp(centre)))
    return out


def typical_interval(evaluation: Evaluation, noise: Noise,
                     centre_s: float | None = None) -> Estimate | None:
    """``evaluation``'s typical time (the median of its run-time distribution) at
    ``centre_s`` (default: the geometric mean of its runs) with a ``CONFIDENCE`` interval of
    it; None without a successful run.

    The interval is the t interval of the configuration's own runs around their log mean
    with the pooled noise, ``m ± t(df) x s / sqrt(n)`` (:func:`estimate`; a single run has
    one too, from the pooled noise), widened just enough to hold ``centre_s`` and the
    median of the runs (:func:`_holding`). So a shrunken estimate may sit anywhere between
    the configuration's own mean and the common mean it is pulled toward, and its interval
    keeps the uncertainty of both: it never collapses to the common mean when the
    between-configuration spread comes out 0, and it is never narrower than what the
    configuration's own runs say. The same interval serves the best found, whose own mean
    is biased low by its selection (the winner's curse): the shrunken estimate it must hold
    lies above that lucky mean, and while budget is left the race runs it again, up to
    ``MIN_RUNS`` runs, runs that were not selected (``benchmarks/interval_coverage.py``
    counts the best found's intervals apart)."""
    own = estimate(evaluation, noise)
    if own is None:
        return None
    centre = own.time_s if centre_s is None else centre_s
    if own.low_s is None or own.high_s is None:
        return Estimate(centre, None, None, own.runs)
    low, high = _holding(own.low_s, own.high_s, _seconds(evaluation), centre)
    return Estimate(centre, low, high, own.runs)


def _holding(low_s: float, high_s: float, times_s: np.ndarray,
             centre_s: float) -> tuple[float, float]:
    """The interval ``low_s``-``high_s`` widened just enough to hold the estimate
    ``centre_s`` and the median of ``times_s``.

    The interval states the *median* of the run-time distribution, while its t interval is
    centred on the mean of the log times: the two agree when the noise is symmetric in log
    space, but a handful of runs with one far out (a run in three hit by a busy file
    system, common in production) puts the mean of the logs well away from the median, by
    more than a t interval from the pooled noise of the quieter configurations allows.
    Holding the runs' own median keeps the statement about the median true there, and
    costs nothing where the runs are symmetric (their median then lies inside the t
    interval). The median is taken of the times themselves, not through their logs, so an
    interval that reaches a run's time holds that time exactly."""
    median = float(np.median(times_s)) if len(times_s) else centre_s
    return min(low_s, centre_s, median), max(high_s, centre_s, median)


def selection_free_logs(evaluation: Evaluation) -> np.ndarray:
    """The log times of ``evaluation``'s successful runs after its first, when it has any;
    else all of them.

    The best found became a leader by its first run, the one drawn in the search: among a
    dozen configurations run once, the lowest draw is partly luck (the winner's curse), so
    that run is biased low by its very selection. Its later runs were made because it led,
    not chosen for being low, so their mean is the best found's typical time without that
    bias (:func:`best_found_interval`, :func:`speedup_interval`)."""
    return np.log(_selection_free_seconds(evaluation))


def _selection_free_seconds(evaluation: Evaluation) -> np.ndarray:
    """The times (s) :func:`selection_free_logs` takes the logs of."""
    times = _seconds(evaluation)
    return times[1:] if len(times) > 1 else times


def _t_interval(logs: np.ndarray, noise: Noise) -> tuple[float, float] | None:
    """``mean ± t(df) x s / sqrt(n)`` of ``logs`` with the pooled noise; None unknown."""
    if noise.sigma is None or not len(logs):
        return None
    centre = float(logs.mean())
    half = noise.quantile * noise.sigma / math.sqrt(len(logs))
    return centre - half, centre + half


def best_found_interval(evaluation: Evaluation, noise: Noise,
                        centre_s: float) -> Estimate | None:
    """The best found's typical time at ``centre_s`` (its shrunken estimate: the centre the
    race ranks it by) with a ``CONFIDENCE`` interval that allows for its selection: the t
    interval of its runs after the first (:func:`selection_free_logs`) with the pooled
    noise, widened just enough to hold ``centre_s`` and the median of those runs
    (:func:`_holding`). A best found run only once keeps the
    interval of :func:`typical_interval` (nothing else was measured of it). None without a
    successful run."""
    logs = selection_free_logs(evaluation)
    if not len(logs):
        return None
    if len(logs) == len(_logs(evaluation)):
        return typical_interval(evaluation, noise, centre_s)
    bounds = _t_interval(logs, noise)
    if bounds is None:
        return Estimate(centre_s, None, None, len(_logs(evaluation)))
    low, high = _holding(math.exp(bounds[0]), math.exp(bounds[1]),
                         _selection_free_seconds(evaluation), centre_s)
    return Estimate(centre_s, low, high, len(_logs(evaluation)))


def shown_estimates(evaluations: Sequence[Evaluation], noise: Noise,
                    default: Evaluation | None = None) -> list[Estimate | None]:
    """What is printed for each configuration: :func:`shrunken_estimates`, with the best
    found's (the first by the ranking, when it is not ``default``) interval from
    :func:`best_found_interval`. Centres, and so the ranking, are unchanged."""
    found = shrunken_estimates(evaluations, noise)
    measured = [(f.time_s, e.order, i) for i, (e, f)
                in enumerate(zip(evaluations, found, strict=True)) if f is not None]
    if measured:
        centre, _, first = min(measured)
        if evaluations[first] is not default:
            found[first] = best_found_interval(evaluations[first], noise, centre)
    return found


def speedup_interval(default: Evaluation, best: Evaluation, noise: Noise,
                     pool: Sequence[Evaluation] = ()) -> Speedup | None:
    """The ratio of the default's typical time to ``best``'s, estimated, with a
    ``CONFIDENCE`` interval: what ``tune`` prints and the tuned file writes as the best
    found's speedup. None if either has no successful run.

    It is the ratio of the two configurations' geometric means, the best found's over its
    runs after its first (:func:`selection_free_logs`: the selecting run is biased low),
    with the t interval of a difference of means under the pooled noise, ``(m_d - m_b) ±
    t(df) x s x sqrt(1/n_d + 1/n_b)`` in log space; unbounded with the noise unknown.

    The interval is widened, as a row's is (:func:`typical_interval`), to hold the ratio of
    the two runs' medians and, given the ``pool`` of configurations the race chose among
    (both included), the ratio of their shrunken estimates (:func:`shrunken_estimates`,
    the two rows' printed centres). The latter is what carries the winner's curse past the
    selecting run: the race stops running the best found once it leads by enough, so its
    later runs and the default's are themselves a little lucky, most of all when every
    configuration is as fast as the default (heavy-tailed noise showed it:
    ``benchmarks/interval_coverage.py --tails heavy``); the shrunken ratio, pulled toward
    what the other configurations say, bounds that optimism.

    It is an *estimate*, and not the decision: the race decides by its rank test
    (:func:`speedup`, :func:`beats`), whose Moses interval takes only a few exact levels
    with a handful of runs a side (the nearest at or above 90% can be 98%) and counts the
    selecting run. So the two can disagree near 1x; what is recommended is the test's."""
    d = _logs(default)
    b = _logs(best) if best is default else selection_free_logs(best)
    found = _log_ratio(d, b, noise)
    if found is None or found.low is None or found.high is None:
        return found
    b_s = _seconds(best) if best is default else _selection_free_seconds(best)
    held = [float(np.median(_seconds(default))) / float(np.median(b_s))]
    shrunk = _shrunken_ratio(default, best, noise, pool)
    if shrunk is not None:
        held.append(shrunk)
    return Speedup(found.value, min(found.low, *held), max(found.high, *held))


def _shrunken_ratio(default: Evaluation, best: Evaluation, noise: Noise,
                    pool: Sequence[Evaluation]) -> float | None:
    """The ratio of ``default``'s shrunken estimate to ``best``'s over ``pool``; None
    when either is not in it or has no successful run."""
    keys = [e.key for e in pool]
    if default.key not in keys or best.key not in keys:
        return None
    found = shrunken_estimates(pool, noise)
    d, b = found[keys.index(default.key)], found[keys.index(best.key)]
    if d is None or b is None:
        return None
    return d.time_s / b.time_s


def shrunken_centres(evaluations: Sequence[Evaluation], noise: Noise) -> list[float]:
    """The log of each configuration's :func:`shrunken_estimates` (``inf`` for a
    configuration without a successful run)."""
    return [math.inf if e is None else math.log(e.time_s)
            for e in shrunken_estimates(evaluations, noise)]


def ranked_estimates(evaluations: Sequence[Evaluation], noise: Noise,
                     default: Evaluation | None = None) -> list[tuple[Evaluation, Estimate]]:
    """The configurations of ``evaluations`` with a successful run, each with its
    :func:`shown_estimates` one (over all of ``evaluations``; ``default`` is the default
    configuration, whose interval is never selection-adjusted), best first by it (ties:
    evaluation order): the one ranking the race, the results table and the report share."""
    found = shown_estimates(evaluations, noise, default)
    pairs = [(e, f) for e, f in zip(evaluations, found, strict=True) if f is not None]
    return sorted(pairs, key=lambda pair: (pair[1].time_s, pair[0].order))


def ranked(evaluations: Iterable[Evaluation], noise: Noise | None = None) -> list[Evaluation]:
    """Measured configurations, best first by :func:`ranked_estimates`. ``noise`` defaults
    to the spread pooled over the measured ones."""
    pool = [e for e in evaluations if len(_logs(e))]
    return [e for e, _ in ranked_estimates(pool, pooled_noise(pool) if noise is None else noise)]


def leaders(evaluations: Iterable[Evaluation], count: int = RACE_SIZE,
            noise: Noise | None = None) -> list[Evaluation]:
    """The ``count`` best configurations by :func:`ranked`, best first."""
    return ranked(evaluations, noise)[:count]


def shows_spread(evaluation: Evaluation) -> bool:
    """Whether ``evaluation``'s runs can differ from one another (not replays of a
    configuration recorded once)."""
    return all(m.shows_spread for m in evaluation.measurements)


def speedup(default: Evaluation, best: Evaluation, noise: Noise) -> Speedup | None:
    """The speedup of ``best`` over ``default`` with its ``CONFIDENCE`` interval; None if
    either failed.

    When both configurations' runs can vary, it is the rank-based one of
    :mod:`iotune.strategies.rank_test` (Hodges-Lehmann estimate, Moses interval: one
    outlier moves it by one rank, not by its size). Otherwise (replays of a configuration
    recorded once) the runs of that configuration say nothing about the spread and the
    interval is the pooled log-normal one of :func:`pooled_speedup`."""
    if not shows_spread(default) or not shows_spread(best):
        return pooled_speedup(default, best, noise)
    shift = log_shift(default.times, best.times, (1 - CONFIDENCE) / 2)
    if shift is None:
        return None
    return Speedup(math.exp(shift.estimate),
                   None if shift.low is None else math.exp(shift.low),
                   None if shift.high is None else math.exp(shift.high))


def beats(fast: Evaluation, slow: Evaluation, noise: Noise) -> bool:
    """Whether ``fast`` is faster than ``slow`` with confidence: the lower end of its
    :func:`speedup` interval over ``slow`` is above 1 (a one-sided test at 95%)."""
    gain = speedup(slow, fast, noise)
    return gain is not None and gain.confident


def still_in(contenders: Sequence[Evaluation], noise: Noise) -> list[Evaluation]:
    """Contenders that no other contender :func:`beats` (and that have a successful run)."""
    measured = [e for e in contenders if len(_logs(e))]
    return [e for e in measured
            if not any(beats(other, e, noise) for other in measured if other is not e)]


def race(default: Evaluation, evaluations: Callable[[], list[Evaluation]],
         remeasure: Callable[[Evaluation], bool], runs: int | None,
         favoured: Collection[str] = ()) -> Choice:
    """Race the default and the leaders of ``evaluations()`` until decided or out of runs.

    Decided: one contender is left (every other one is beaten) and it has ``MIN_RUNS``
    runs. ``runs`` is what the race may spend (None: ``2 x RACE_SIZE``, for a tune without
    a total budget); ``remeasure(e)`` runs ``e`` once more (adding to its times or failures)
    and returns False when it could not (budget spent). ``favoured`` are the keys of
    configurations that race whatever their rank (those a knowledge base named): they join
    the ``RACE_SIZE`` leaders as contenders, and like any contender they are out once
    beaten; the choice among contenders is the rule's alone. Returns the :class:`Choice`.
    """
    limit = 2 * RACE_SIZE if runs is None else runs
    spent = 0
    while spent < limit:
        pool = evaluations()
        noise = pooled_noise([default, *pool])
        order = ranked([default, *pool], noise)
        contenders = [default, *[e for e in order if e is not default][:RACE_SIZE]]
        contenders += [e for e in order if e.key in favoured
                       and not any(e is c for c in contenders)]
        alive = still_in(contenders, noise)
        if not alive:
            break
        rank = {id(e): i for i, e in enumerate(order)}
        leader = min(alive, key=lambda e: rank.get(id(e), len(order)))
        if len(alive) == 1 and len(leader.times) >= MIN_RUNS:
            break
        pick = _next_run(leader, default, alive, rank)
        if not remeasure(pick):
            break
        spent += 1
    return _choose(default, evaluations(), spent)


def _next_run(leader: Evaluation, default: Evaluation, alive: Sequence[Evaluation],
              positions: dict[int, int]) -> Evaluation:
    """The contender to run next: the one of the leader and the default (the pair the
    decision is about) with fewer runs while either has fewer than ``MIN_RUNS``; then the
    contender that is in with the fewest runs (ties: the better rank, ``positions`` by
    ``id``)."""

    def rank(e: Evaluation) -> int:
        return positions.get(id(e), len(positions))

    pair = [e for e in (leader, default) if any(e is a for a in alive)]
    if any(len(e.times) < MIN_RUNS for e in pair):
        return min(pair, key=lambda e: (len(e.times), rank(e)))
    return min(alive, key=lambda e: (len(e.times), rank(e)))


#: Asymptotic efficiency of the rank test against Student's t on normal data (3 / pi): it
#: needs about 5% more runs where t would be right, and far fewer under heavy tails.
RANK_EFFICIENCY = 3 / math.pi
#: Fewest runs of each of two configurations for the rank test to confirm anything at 95%
#: one-sided (1 / C(6, 3) = 0.05).
MIN_RANK_RUNS = 3


def runs_to_confirm(gain: float, noise: Noise) -> int | None:
    """Runs of each of two configurations needed before a measured speedup of ``gain``
    would be above 1x with ``CONFIDENCE`` at this noise: ``2 (z s / log gain)^2`` with the
    normal quantile ``z`` (the t quantile's limit), over the rank test's efficiency
    ``3 / pi``, and at least ``MIN_RANK_RUNS``; None when ``gain`` is not above 1 or the
    noise is unknown."""
    from scipy.stats import norm

    if noise.sigma is None or gain <= 1.0:
        return None
    z = float(norm.ppf(0.5 + CONFIDENCE / 2))
    return max(MIN_RANK_RUNS,
               math.ceil(2 * (z * noise.sigma / math.log(gain)) ** 2 / RANK_EFFICIENCY))


def runs_to_decide(default: Evaluation, best: Evaluation, gain: Speedup,
                   noise: Noise) -> int | None:
    """More runs (of ``best`` and the default together) before a measured speedup ``gain``
    would be confirmed: each needs :func:`runs_to_confirm` runs at this noise (or
    ``MIN_RANK_RUNS`` with the noise unknown) and, when its interval already reaches below
    1, as many as narrow that interval until its low end passes 1 (a width shrinks as one
    over the square root of the runs, so the runs grow with the square of the ratio of the
    half-width now to the half-width that would exclude 1); less the runs each has, at
    least 1. None when ``gain`` is not above 1."""
    if gain.value <= 1.0:
        return None
    each = runs_to_confirm(gain.value, noise) or MIN_RANK_RUNS
    if gain.low is not None and 0.0 < gain.low < 1.0:
        have = min(len(default.times), len(best.times))
        ratio = math.log(gain.value / gain.low) / math.log(gain.value)
        each = max(each, math.ceil(have * ratio**2))
    return max(1, max(0, each - len(default.times)) + max(0, each - len(best.times)))


def _runs_to_confirm_text(gain: Speedup, noise: Noise) -> str:
    runs = runs_to_confirm(gain.value, noise)
    if runs is None:
        return ""
    return (f"; at this noise (log spread {noise.sigma:.2f}) confirming {gain.value:.2f}x "
            f"takes about {runs} runs of it and of the default")


#: Smallest estimated speedup worth a change to a job script: below it the default is
#: kept even when the gain is confirmed (a 10% gain is the one a user would not want to be
#: told to leave; smaller ones are within a shared system's drift from day to day, and a
#: change that promises little and breaks it costs more than it saves).
MIN_GAIN = 1.1


def typical_speedup(default: Evaluation, best: Evaluation) -> float | None:
    """The ratio of the default's median run to ``best``'s: the gain of a typical job. None
    unless both configurations' runs can vary (:func:`shows_spread`).

    The rank estimate of :func:`speedup` is the median of all pairwise ratios; when the
    default's runs are skewed (one slow run in three) it credits the change with part of
    the default's tail, which a typical job does not see. A change must promise
    ``MIN_GAIN`` by both."""
    if not (shows_spread(default) and shows_spread(best)):
        return None
    slow, fast = _logs(default), _logs(best)
    if not (len(slow) and len(fast)):
        return None
    return math.exp(float(np.median(slow)) - float(np.median(fast)))


#: What a :class:`Choice` recommends: a change (confirmed faster than the default), the
#: default (nothing faster, or the default shown faster), or neither yet (the best found
#: looks faster but is not confirmed: the default's settings stay until more runs decide).
TUNED, DEFAULT, UNDECIDED = "tuned", "default", "undecided"


def _choose(default: Evaluation, pool: list[Evaluation], spent: int) -> Choice:
    noise = pooled_noise([default, *pool])
    top = leaders([default, *pool], count=2, noise=noise)
    best = top[0] if top else None
    runner_up = top[1] if len(top) > 1 else None
    tied = False
    if best is not None and runner_up is not None:
        tied = len(still_in([best, runner_up], noise)) == 2
    if best is None:
        return Choice(None, None, default, noise, None, True, False, spent,
                      "every configuration failed")
    if best is default:
        return Choice(default, runner_up, default, noise, speedup(default, default, noise),
                      True, tied, spent, "no configuration measured faster than the default")
    gain = speedup(default, best, noise)
    if gain is None:
        return Choice(best, runner_up, default, noise, None, False, tied, spent,
                      "the default failed, so the best measured configuration is recommended")
    if gain.value < MIN_GAIN:
        return Choice(best, runner_up, default, noise, gain, True, tied, spent,
                      f"the best found is {gain.value:.2f}x the default's speed, less than "
                      f"the {MIN_GAIN:g}x a change must promise")
    typical = typical_speedup(default, best)
    if typical is not None and typical < MIN_GAIN:
        return Choice(best, runner_up, default, noise, gain, True, tied, spent,
                      f"the best found's median run is {typical:.2f}x the default's, less "
                      f"than the {MIN_GAIN:g}x a change must promise (the race's test puts it "
                      f"at {gain.value:.2f}x, owing the rest to the default's slow runs)")
    if gain.confident:
        return Choice(best, runner_up, default, noise, gain, False, tied, spent,
                      f"faster than the default with {CONFIDENCE:.0%} confidence")
    if beats(default, best, noise):
        return Choice(best, runner_up, default, noise, gain, True, tied, spent,
                      f"the default is faster than the best found with {CONFIDENCE:.0%} "
                      "confidence")
    if not (shows_spread(default) and shows_spread(best)):
        # Replays of a configuration recorded once: more runs of it repeat one time, so
        # no number of runs decides; the default stays.
        why = ("the spread of the runs is unknown (no configuration was measured twice, or "
               "only replays of configurations recorded once)" if noise.sigma is None else
               f"the race's test puts it at {gain.value:.2f}x with an interval reaching "
               f"{gain.low:.2f}x, not above 1x" + _runs_to_confirm_text(gain, noise))
        return Choice(best, runner_up, default, noise, gain, True, tied, spent,
                      f"the best found does not beat the default with {CONFIDENCE:.0%} "
                      f"confidence: {why}")
    more = runs_to_decide(default, best, gain, noise)
    # The race's rank test decides, and its figures can differ from the printed estimate
    # of the speedup (speedup_interval): the reason names the test so the two never read
    # as one number said twice.
    why = ("too few runs of it and of the default for the race's test" if gain.low is None
           else f"the race's rank test puts it at {gain.value:.2f}x with an interval "
                f"reaching {gain.low:.2f}x, not above 1x")
    return Choice(best, runner_up, default, noise, gain, True, tied, spent,
                  "the best found is not yet confirmed faster than the "
                  f"default with {CONFIDENCE:.0%} confidence: {why}"
                  + (f"; about {more} more runs of it and of the default would decide"
                     if more is not None else ""), outcome=UNDECIDED,
                  runs_to_decide=more)
