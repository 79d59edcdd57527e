"""The production-jobs decision: which configuration the next job runs, at bounded risk.

Pure (no I/O, no store): given what earlier jobs ran and measured (:class:`Run`), the
default's name and the candidates ranked best first by a tune or the model, :func:`choose`
returns the configuration of the next job and :func:`assess` what is known so far. The jobs
(``iotune job start``) and ``benchmarks/production_jobs.py`` call the same two functions.

Noise model (log seconds): a job's log time is its configuration's location ``mu_c`` plus
noise of one common scale ``sigma``. ``sigma`` is pooled over every configuration's repeats
with a weak prior (:data:`PRIOR_SIGMA` worth :data:`PRIOR_DF` runs), so a difference of two
means has a Student-t posterior with ``PRIOR_DF + sum(n_c - 1)`` degrees of freedom. With
few runs that t is very heavy-tailed (2 degrees of freedom: a 5% tail 2.9 sigma out, not
1.6), which is what production runs need: one in six is 2-3x slower than its siblings. Such
a run also inflates the pooled ``sigma`` for everyone, which only makes the rule more careful,
and a configuration's location is the median of its runs (:func:`_location`), which one slow
run does not move.

The rule, in order:

1. the first :data:`BASELINE_RUNS` jobs run the default (its time is the yardstick);
2. **risk bound**: once a configuration has one finished run, a job runs it again only while
   the posterior probability that it is more than :data:`SLOWER` (10%) slower than the
   default is at most :data:`RISK` (5%); the probability is recomputed as runs arrive, so a
   configuration held back early can be let in when the default's spread is better known;
   a tune's estimate of the candidate (:class:`Prior`), when its tuned file gives one, is
   weighed with its runs (:func:`_p_slower_with`);
3. **first trials** go only to the :data:`TOP_TRIALS` best-ranked candidates, one job at a
   time per configuration (a second first trial waits for the first's result; a job that
   never finished stops counting as running once it is lost, see
   :mod:`iotune.production.time_limit`, and the trial may be given again);
4. **exploration cap**: at most :data:`EXPLORE_SHARE` of all jobs so far ran a challenger;
5. **settling**: when every admissible candidate has :data:`SETTLE_RUNS` runs and the fastest
   beats the default with probability :data:`CONFIDENCE`, or (the race's rule, by ranks)
   it and the default have :data:`RACE_RUNS` runs each, its median run is faster than the
   default's and the rank test confirms it faster at :data:`RACE_CONFIDENCE`
   (:func:`race_confirms`), and no held-back candidate is plausibly (probability
   :data:`RISK`) :data:`WORTH` faster than it (its runs and the default's may yet let that
   candidate in), it is the recommendation and jobs
   exploit it, every :data:`DRIFT_EVERY`-th running the default again as a drift check;
   when no candidate, admissible or held back, shows a plausible gain of :data:`WORTH`
   (5%; probability :data:`RISK`), the default stays: "nothing better", and every
   :data:`DRIFT_EVERY`-th job runs the most promising candidate still within the risk
   bound, if any, as its drift check;
6. **staying settled**: the jobs' roles are the state (no other file): while no challenger
   ran after the last job that ran the recommendation, it stays settled as long as a settled
   change still beats the default with probability :data:`KEEP`, or, when the default was
   settled on, no candidate beats it with :data:`CONFIDENCE`. A drift check that breaks
   this reopens exploration under the same rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: A configuration is "slower" when its time exceeds the default's by this factor.
SLOWER = 1.10
#: The largest probability of being SLOWER a job may run a known configuration at.
RISK = 0.05
#: Default runs before any trial: two give a spread, a third keeps one slow run of six from
#: being the whole yardstick.
BASELINE_RUNS = 3
#: First trials go only to this many best-ranked candidates: a tune's race keeps about this
#: many leaders, and each untried configuration is a job run blind.
TOP_TRIALS = 3
#: Share of jobs that may run a challenger before settling: equal numbers of runs are the
#: most efficient way to compare two configurations, and half bounds the regret at half the
#: jobs' worth of any loss.
EXPLORE_SHARE = 0.5
#: One-sided probability a configuration must beat the default with to settle. It is looked
#: at after every job (up to ~40 looks), which makes a 95% rule settle on a non-gain several
#: times in 20; 99% keeps that rare.
CONFIDENCE = 0.99
#: Runs of each admissible candidate before settling: fewer cannot tell two good ones apart
#: (a 3-run mean has about 0.6 sigma of error).
SETTLE_RUNS = 3
#: After settling on a change, every DRIFT_EVERY-th job runs the default again (5% of jobs).
DRIFT_EVERY = 20
#: A settled change stays settled while it beats the default with this probability: lower
#: than CONFIDENCE so one slow drift check does not undo a settled gain, high enough that a
#: gain that has gone is noticed.
KEEP = 0.90
#: A gain smaller than this is not worth more exploring (a tune's "within 5%" of the best).
WORTH = 1.05
#: The race's rule (:mod:`iotune.strategies.racing`): a configuration is confirmed faster
#: than the default when the lower end of the rank test's one-sided interval of its speedup
#: (Hodges-Lehmann, Moses) at this level is above 1x. Ranks, unlike the t model, let one
#: run several times slower or faster than its siblings move the verdict by one rank, so a
#: consistent gain is confirmed where the default's own log spread is 0.5 or more.
RACE_CONFIDENCE = 0.95
#: Runs of the leader and of the default each before the race's rule may settle: a rank
#: test is looked at after every job, and from ten runs each on the verdict of one job
#: changes the count of pairs by at most a tenth, so repeated looks add little to the 5%
#: of one look; with fewer the first looks are nearly independent draws.
RACE_RUNS = 10
#: Prior on the noise scale (log sd): the middle of the 0.02-1.0 seen on production
#: systems, worth PRIOR_DF runs, so a few runs of data overrule it.
PRIOR_SIGMA = 0.25
PRIOR_DF = 2


def prior_level() -> float:
    """The two-sided level of the speedup interval a tuned file states
    (``best_found_speedup``: the estimate of the ratio of typical times,
    ``iotune.strategies.racing.speedup_interval``, at
    :data:`iotune.strategies.racing.CONFIDENCE`)."""
    # Imported here, as the rank test in race_confirms: the strategies package loads every
    # strategy (and pandas), which importing this rule need not pay for.
    from iotune.strategies.racing import CONFIDENCE as TUNE_CONFIDENCE

    return TUNE_CONFIDENCE


ROLES = ("baseline", "challenger", "best", "default", "drift")


@dataclass(frozen=True)
class Run:
    """One job: the configuration it ran, its role (:data:`ROLES`) and its I/O seconds
    (None: still running, failed or killed: it counts as a job but not as a measurement);
    ``pending`` marks a choice whose job has not finished and may still be running (a job
    past its time limit is lost: neither pending nor a time)."""

    config: str
    role: str
    seconds: float | None = None
    pending: bool = False


@dataclass(frozen=True)
class Estimate:
    """What the finished runs say of one configuration (log seconds inside)."""

    config: str
    runs: int
    pending: int
    median_log: float | None  # the median of the log times (see _location)
    #: posterior probability of being more than SLOWER slower than the default (None: no run)
    p_slower: float | None = None
    #: posterior probability of being faster than the default
    p_faster: float | None = None
    #: posterior probability of being more than WORTH faster than the default
    p_worth: float | None = None
    #: 90% interval of the time relative to the default (time_c / time_default)
    ratio: tuple[float, float, float] | None = None

    @property
    def seconds(self) -> float | None:
        """Median of the finished runs' seconds (for an even number of runs, the geometric
        mean of the middle two): the configuration's typical time, not its mean."""
        return None if self.median_log is None else math.exp(self.median_log)


@dataclass(frozen=True)
class Assessment:
    """The state :func:`choose` decides from, and ``iotune job status`` shows."""

    default: str
    estimates: dict[str, Estimate]
    admissible: list[str]  # candidates a job may run now (risk bound and first-trial rules)
    held_back: list[str]  # known candidates the risk bound keeps out
    #: top-ranked candidates with no finished run whose first trial is running: each waits
    #: for that job's result (or for it to be finished as failed or lost)
    running_trials: list[str]
    settled: str | None  # the recommendation once settled (the default: nothing better)
    leader: str | None  # the fastest admissible candidate with runs, settled or not
    needed: str  # what is still needed to settle, in words
    jobs: int
    explored: int  # jobs that ran a challenger
    sigma: float
    df: int
    #: The one-sided probability the settled change beats the default with: CONFIDENCE by
    #: the t model, RACE_CONFIDENCE when the race's rank test settled it.
    confidence: float = CONFIDENCE

    @property
    def recommendation(self) -> str:
        """The configuration a user should run now: the settled one, else the default."""
        return self.settled or self.default

    def place(self, name: str) -> str:
        """Where configuration ``name`` stands, as ``job status`` and the report say it:
        ``default``, ``admissible``, ``held back`` (by the risk bound), ``first trial
        running`` or ``not a candidate`` (none of these: no longer offered, or ranked below
        the first trials)."""
        if name == self.default:
            return "default"
        if name in self.admissible:
            return "admissible"
        if name in self.running_trials:
            return "first trial running"
        return "held back" if name in self.held_back else "not a candidate"


@dataclass(frozen=True)
class Choice:
    """The next job's configuration, its role and why."""

    config: str
    role: str
    reason: str


@dataclass(frozen=True)
class Prior:
    """A tune's estimate of a candidate before any production job: its log time relative
    to the default (``log(time_c / time_default)``) with a normal spread ``sd`` (log)."""

    log_ratio: float
    sd: float

    @classmethod
    def from_speedup(cls, estimate: float, low: float, high: float) -> Prior | None:
        """The prior of a tune's speedup ``estimate`` with its :func:`prior_level` interval
        ``low``-``high`` (None when they do not make one: non-positive or out of order).
        The spread is the interval's wider side: a rank interval of a few runs is lopsided,
        and the narrow side would overstate what the tune knows."""
        if not (0 < low <= estimate <= high) or not all(map(math.isfinite, (low, high))):
            return None
        z = _normal_ppf(0.5 + prior_level() / 2)
        sd = max(math.log(estimate / low), math.log(high / estimate)) / z
        return cls(-math.log(estimate), sd) if sd > 0 else None


def _normal_ppf(q: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(q))


# Student's t from scipy.special, the functions scipy.stats.t computes with: the same
# values, without importing scipy.stats (over a second of every ``iotune job start``).
def _t_sf(x: float, df: float) -> float:
    from scipy.special import stdtr

    return float(stdtr(df, -x))


def _t_ppf(q: float, df: float) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def _location(values: Sequence[float]) -> float | None:
    """A configuration's typical log time: the median of its runs. Production noise is
    heavy-tailed (one run in six 2-3x slow), and a mean follows such a run where the
    median, by which the benchmarks judge, does not."""
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _spread(n: int) -> float:
    """Variance of the median of ``n`` runs in units of ``sigma**2 / n``: pi/2 for large
    ``n`` (normal noise), 1 for one or two runs, where the median is the mean."""
    return 1.0 if n <= 2 else math.pi / 2


def _noise(logs: dict[str, list[float]]) -> tuple[float, int]:
    """Pooled log-time spread with its prior, and the degrees of freedom."""
    squares = PRIOR_DF * PRIOR_SIGMA ** 2
    df = PRIOR_DF
    for values in logs.values():
        if len(values) > 1:
            mean = sum(values) / len(values)
            squares += sum((v - mean) ** 2 for v in values)
            df += len(values) - 1
    return math.sqrt(squares / df), df


def assess(runs: Sequence[Run], default: str, candidates: Sequence[str],
           priors: Mapping[str, Prior] | None = None) -> Assessment:
    """What ``runs`` (every job so far, oldest first) say about the default and the
    ``candidates`` (ranked best first; the default among them is ignored). Finished runs
    with seconds are measurements; pending ones only count as jobs and block a second first
    trial of their configuration. ``priors``: a tune's estimate of some candidates, which
    the risk bound weighs with their runs (:func:`_p_slower_with`); settling rests on the
    production runs alone."""
    ranked = [c for c in dict.fromkeys(candidates) if c != default]
    logs: dict[str, list[float]] = {c: [] for c in [default, *ranked]}
    pending: dict[str, int] = dict.fromkeys(logs, 0)
    for run in runs:
        logs.setdefault(run.config, [])
        pending.setdefault(run.config, 0)
        if run.pending:
            pending[run.config] += 1
        elif run.seconds is not None and run.seconds > 0:
            logs[run.config].append(math.log(run.seconds))
    sigma, df = _noise(logs)
    base = logs[default]
    base_mean = _location(base)
    estimates: dict[str, Estimate] = {}
    for config, values in logs.items():
        mean = _location(values)
        if config == default or mean is None or base_mean is None:
            estimates[config] = Estimate(config, len(values), pending[config], mean)
            continue
        diff = mean - base_mean
        se = sigma * math.sqrt(_spread(len(values)) / len(values)
                               + _spread(len(base)) / len(base))
        half = _t_ppf(0.95, df) * se
        prior = (priors or {}).get(config)
        estimates[config] = Estimate(
            config, len(values), pending[config], mean,
            p_slower=(_t_sf((math.log(SLOWER) - diff) / se, df) if prior is None
                      else _p_slower_with(prior, diff, se, df)),
            p_faster=_t_sf(diff / se, df),
            p_worth=_t_sf((diff + math.log(WORTH)) / se, df),
            ratio=(math.exp(diff - half), math.exp(diff), math.exp(diff + half)))
    admissible: list[str] = []
    held_back: list[str] = []
    running_trials: list[str] = []
    for rank, config in enumerate(ranked):
        est = estimates[config]
        if est.runs == 0:
            if rank >= TOP_TRIALS:
                continue
            if est.pending:
                running_trials.append(config)
                continue
            admissible.append(config)
        elif est.p_slower is not None and est.p_slower <= RISK:
            admissible.append(config)
        else:
            held_back.append(config)
    tried = [c for c in admissible if estimates[c].runs]
    leader = min(tried, key=lambda c: estimates[c].median_log or 0.0) if tried else None
    jobs = len(runs)
    explored = sum(1 for r in runs if r.role == "challenger")
    confirmed = leader is not None and race_confirms(logs[leader], base)
    rivals = [] if leader is None else [
        c for c in held_back
        if _p_worth_over(logs[c], logs[leader], sigma, df) >= RISK]
    settled, needed = _stay(runs, estimates, admissible, default, confirmed)
    if settled is None:
        settled, needed = _settle(estimates, admissible, held_back, ranked, default,
                                  leader, len(base), confirmed, rivals)
    by_ranks = (settled not in (None, default)
                and (estimates[settled].p_faster or 0.0) < CONFIDENCE)
    return Assessment(default, estimates, admissible, held_back, running_trials, settled,
                      leader, needed, jobs, explored, sigma, df,
                      RACE_CONFIDENCE if by_ranks else CONFIDENCE)


def _p_slower_with(prior: Prior, diff: float, se: float, df: int) -> float:
    """Posterior probability of being more than :data:`SLOWER` slower than the default
    when the tune's ``prior`` and the production runs (log difference ``diff`` from the
    default with standard error ``se``) are weighed together, each as a normal by its
    precision: a tune's 1.7x held with a 90% interval of 0.7-1.9x keeps one production run
    that came out as slow as the default from settling the question alone."""
    w_runs, w_prior = se ** -2, prior.sd ** -2
    mean = (diff * w_runs + prior.log_ratio * w_prior) / (w_runs + w_prior)
    return _t_sf((math.log(SLOWER) - mean) * math.sqrt(w_runs + w_prior), df)


def _p_worth_over(logs: Sequence[float], leader: Sequence[float], sigma: float,
                  df: int) -> float:
    """Posterior probability that a configuration with log times ``logs`` is more than
    :data:`WORTH` faster than the leader (log times ``leader``), by the module's t model."""
    mine, theirs = _location(logs), _location(leader)
    if mine is None or theirs is None:
        return 0.0
    se = sigma * math.sqrt(_spread(len(logs)) / len(logs) + _spread(len(leader)) / len(leader))
    return _t_sf((mine - theirs + math.log(WORTH)) / se, df)


def race_confirms(logs: Sequence[float], base: Sequence[float]) -> bool:
    """Whether a configuration with log times ``logs`` is confirmed faster than the
    default (log times ``base``) by the race's rule: :data:`RACE_RUNS` runs of each or more,
    its median below the default's, and the rank test's one-sided :data:`RACE_CONFIDENCE`
    lower bound of the log speedup above 0."""
    from iotune.strategies.rank_test import log_shift

    if min(len(logs), len(base)) < RACE_RUNS:
        return False
    mine, theirs = _location(logs), _location(base)
    if mine is None or theirs is None or mine >= theirs:
        return False
    shift = log_shift([math.exp(v) for v in base], [math.exp(v) for v in logs],
                      1 - RACE_CONFIDENCE)
    return shift is not None and shift.low is not None and shift.low > 0


def _stay(runs: Sequence[Run], estimates: dict[str, Estimate], admissible: list[str],
          default: str, confirmed: bool) -> tuple[str | None, str]:
    """The recommendation settled on earlier if it still holds (None: not settled before,
    or a drift check broke it); ``confirmed``: the leader is confirmed by the race's rule."""
    sticky = None
    for run in reversed(runs):
        if run.role == "challenger":
            break
        if run.role == "best":
            sticky = run.config
            break
    if sticky is None:
        return None, ""
    if sticky != default:
        if (estimates[sticky].p_faster or 0.0) >= KEEP:
            return sticky, "nothing: settled"
        return None, ""
    if confirmed or any((estimates[c].p_faster or 0.0) >= CONFIDENCE for c in admissible):
        return None, ""
    return default, "nothing: settled (no candidate is plausibly better than the default)"


def _settle(estimates: dict[str, Estimate], admissible: list[str], held_back: list[str],
            ranked: list[str], default: str, leader: str | None,
            baseline: int, confirmed: bool, rivals: list[str]) -> tuple[str | None, str]:
    """The settled recommendation (None: not yet) and what is still needed, in words;
    ``rivals``: held-back candidates plausibly :data:`WORTH` faster than the leader."""
    if baseline < BASELINE_RUNS:
        return None, f"{BASELINE_RUNS - baseline} more run(s) of the default"
    untried = [c for c in ranked[:TOP_TRIALS] if estimates[c].runs == 0]
    if untried:
        running = [c for c in untried if estimates[c].pending]
        waiting = [c for c in untried if not estimates[c].pending]
        return None, "; ".join(
            [*([f"a first trial of {', '.join(waiting)}"] if waiting else []),
             *([f"the result of the running first trial of {', '.join(running)}"]
               if running else [])])
    short = [c for c in admissible if estimates[c].runs < SETTLE_RUNS]
    if short:
        return None, ", ".join(f"{SETTLE_RUNS - estimates[c].runs} more run(s) of {c}"
                               for c in short)
    if leader is not None:
        p_faster = estimates[leader].p_faster or 0.0
        if (p_faster >= CONFIDENCE or confirmed) and rivals:
            # One run of a rival under heavy noise kept it out; the leader's and the
            # default's runs pin the noise down and may let it in: settling on the leader
            # now would never try it again.
            return None, (f"the runs to show whether {', '.join(rivals)}, plausibly "
                          f"{WORTH - 1:.0%} faster than {leader}, may run again within "
                          "the risk bound")
        if p_faster >= CONFIDENCE or confirmed:
            return leader, "nothing: settled"
    # A candidate held back only because one run says little under this noise may be let
    # in as the default's runs pin the noise down: it blocks settling while it may be worth it.
    worth = [c for c in [*admissible, *held_back] if (estimates[c].p_worth or 0.0) >= RISK]
    if not worth:
        return default, "nothing: settled (no candidate is plausibly better than the default)"
    if leader is None:
        return None, (f"the default's runs to show whether {', '.join(worth)} may run again "
                      "within the risk bound")
    return None, (f"{leader} to beat the default with probability {CONFIDENCE:.0%} (now "
                  f"{share_short_of(estimates[leader].p_faster or 0.0, CONFIDENCE)}), or "
                  f"every candidate to show no plausible gain of {WORTH - 1:.0%}")


def share_short_of(value: float, bound: float) -> str:
    """``value`` (a probability below ``bound``) as a percentage with the fewest decimals
    (up to three) that show it below ``bound`` shown as a whole percentage: ``98.6%``
    against ``99%``, not ``99%``; ``< 99%`` when three decimals still round up to it."""
    shown = f"{bound:.0%}"
    for decimals in range(4):
        text = f"{value:.{decimals}%}"
        if float(text.rstrip("%")) < float(shown.rstrip("%")):
            return text
    return f"< {shown}"


def choose(runs: Sequence[Run], default: str, candidates: Sequence[str],
           priors: Mapping[str, Prior] | None = None) -> Choice:
    """The configuration the next job runs (see the module's rule; ``priors`` as for
    :func:`assess`)."""
    state = assess(runs, default, candidates, priors)
    base = state.estimates[default]
    if base.runs + base.pending < BASELINE_RUNS:
        return Choice(default, "baseline", "the default's runs are the yardstick")
    drift_due = (state.jobs + 1) % DRIFT_EVERY == 0
    if state.settled == default:
        tried = [c for c in state.admissible if state.estimates[c].runs]
        if drift_due and tried:
            pick = min(tried, key=lambda c: state.estimates[c].median_log or 0.0)
            return Choice(pick, "drift", f"drift check (every {DRIFT_EVERY}th job)")
        return Choice(default, "best", "settled: nothing better than the default")
    if state.settled is not None:
        if drift_due:
            return Choice(default, "drift", f"drift check (every {DRIFT_EVERY}th job)")
        return Choice(state.settled, "best", "settled: beats the default")
    if state.explored + 1 > EXPLORE_SHARE * (state.jobs + 1):
        return Choice(default, "default", f"exploration cap ({EXPLORE_SHARE:.0%} of jobs)")
    if not state.admissible:
        if state.running_trials:
            return Choice(default, "default",
                          f"waiting for the result of the running first trial of "
                          f"{', '.join(state.running_trials)}")
        return Choice(default, "default", "no candidate within the risk bound")
    untried = [c for c in state.admissible if state.estimates[c].runs == 0]
    if untried:
        return Choice(untried[0], "challenger", "first trial of a top-ranked candidate")
    short = [c for c in state.admissible
             if state.estimates[c].runs + state.estimates[c].pending < SETTLE_RUNS]
    if short:
        return Choice(short[0], "challenger", f"{SETTLE_RUNS} runs before settling")

    def optimistic(config: str) -> float:
        est = state.estimates[config]
        assert est.median_log is not None
        return est.median_log - state.sigma / math.sqrt(est.runs + est.pending)

    pick = min(state.admissible, key=optimistic)
    return Choice(pick, "challenger", "most promising admissible candidate")
