r"""A two-component log-normal mixture, fitted by scikit-learn's ``GaussianMixture``.

Write and probe times on a shared file system are bimodal: an *idle* and a *busy* state,
each log-normal (Wan et al., section IV.B). With ``x = ln t`` the mixture is a mixture of
two normals::

    f(t) = sum_k w_k / (t sigma_k sqrt(2 pi)) exp(-(ln t - mu_k)^2 / (2 sigma_k^2)),  k = idle, busy

fitted by expectation maximisation (``sklearn.mixture.GaussianMixture``) on the
*standardised* log-times ``z = (x - mean x) / sd x``, so that every guard below is relative
to the spread of the data, whatever its unit:

* ``reg_covar`` :data:`REG_COVAR` is added to each variance of ``z`` at every EM step, so no
  component can shrink onto one value (where the likelihood is infinite) while EM runs;
* several starts: ``n_init`` :data:`N_INIT` k-means++ initialisations (seeded) and one start
  from each split of the sorted data at :data:`QUANTILE_STARTS`; each is its own fit, so a
  start that ends degenerate is rejected alone instead of winning on likelihood;
* a fit is *degenerate*, and rejected, when a component's weight is below
  :data:`MIN_WEIGHT` or its sigma below :data:`MIN_RELATIVE_SIGMA` times the spread of
  ``x``. Of the fits that are not, the most likely wins; when every start is degenerate the
  data show no second state and the fit is one log-normal (two identical components,
  ``bimodal`` False).

The component with the smaller median ``e^mu`` is *idle* (at equal medians, the narrower
one), the other *busy*: busy is always the slower state. Each component reports its weight
``w``, median ``e^mu``, mean ``e^(mu + sigma^2/2)`` and ``sigma`` (of ``ln t``). Whether the
data support two states at all is judged by BIC (``BIC = p ln n - 2 ln L``, ``p = 5`` for
the mixture, ``2`` for one log-normal): the mixture is called *bimodal* when it lowers BIC by
more than :data:`BIC_MARGIN` (10, "very strong" evidence in Kass and Raftery's scale).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from iotune.errors import DataError

FloatArray = npt.NDArray[np.float64]

#: Fewest samples a mixture is fitted to (five parameters; fewer give meaningless states).
MIN_SAMPLES = 20
#: Added to each variance of the standardised log-times during EM: keeps every sigma at
#: least 1% of the data's spread while EM runs, so the likelihood stays finite.
REG_COVAR = 1e-4
#: Seeded k-means++ initialisations of the one fit that starts from k-means.
N_INIT = 5
#: Quantiles of the sorted data at which the other starts split it into idle and busy.
QUANTILE_STARTS = (0.3, 0.5, 0.7, 0.85)
#: Smallest weight of a component: a "state" met by fewer than 2% of the samples is an
#: outlier or two, not a state of the file system.
MIN_WEIGHT = 0.02
#: Smallest sigma of a component, relative to the standard deviation of ``ln t`` over all
#: samples: narrower components are points the fit locked onto (repeated values, ties),
#: not states whose times vary.
MIN_RELATIVE_SIGMA = 0.02
#: Smallest sigma (of ``ln t``) for data without any spread (all times equal).
MIN_ABSOLUTE_SIGMA = 1e-6
#: BIC improvement over one log-normal needed to call the data bimodal.
BIC_MARGIN = 10.0
_LOG_2PI = math.log(2 * math.pi)


@dataclass(frozen=True)
class Component:
    """One log-normal component: ``ln t ~ N(mu, sigma^2)`` with mixing weight ``weight``."""

    name: str
    weight: float
    mu: float
    sigma: float

    @property
    def median(self) -> float:
        """``e^mu``: the median time of this state."""
        return math.exp(self.mu)

    @property
    def mean(self) -> float:
        """``e^(mu + sigma^2 / 2)``: the mean time of this state (the paper's ``T``)."""
        return math.exp(self.mu + 0.5 * self.sigma**2)

    def log_density(self, x: FloatArray) -> FloatArray:
        """``ln(w N(x; mu, sigma))`` for log-times ``x``."""
        z = (x - self.mu) / self.sigma
        return math.log(self.weight) - math.log(self.sigma) - 0.5 * _LOG_2PI - 0.5 * z * z

    def as_dict(self) -> dict[str, Any]:
        return {"component": self.name, "weight": self.weight, "median": self.median,
                "mean": self.mean, "sigma": self.sigma, "mu": self.mu}


@dataclass(frozen=True)
class MixtureFit:
    """A fitted two-state mixture with its diagnostics.

    ``log_likelihood`` is of the times ``t`` (not of ``ln t``); ``bic_one`` is the BIC of a
    single log-normal fitted to the same data; ``iterations`` and ``converged`` describe the
    winning EM start.
    """

    idle: Component
    busy: Component
    n: int
    log_likelihood: float
    bic: float
    bic_one: float
    iterations: int
    converged: bool

    @property
    def bimodal(self) -> bool:
        """Whether two states fit better than one by more than :data:`BIC_MARGIN`."""
        return self.bic + BIC_MARGIN < self.bic_one

    @property
    def components(self) -> tuple[Component, Component]:
        return (self.idle, self.busy)

    def posterior_busy(self, times: FloatArray | Sequence[float] | float) -> FloatArray:
        """``P(busy | t) = w_b f_b(t) / (w_i f_i(t) + w_b f_b(t))`` for each time (an array).

        This is the exact posterior: where the busy component is wider, far tails on *both*
        sides lean busy.
        """
        x = np.log(_positive(np.atleast_1d(np.asarray(times, dtype=np.float64)), "time"))
        log_idle = self.idle.log_density(x)
        log_busy = self.busy.log_density(x)
        return np.asarray(np.exp(log_busy - np.logaddexp(log_idle, log_busy)), dtype=np.float64)

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "idle": self.idle.as_dict(), "busy": self.busy.as_dict(),
                "log_likelihood": self.log_likelihood, "bic": self.bic, "bic_one": self.bic_one,
                "bimodal": self.bimodal, "iterations": self.iterations,
                "converged": self.converged}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MixtureFit:
        """Inverse of :meth:`as_dict` (component ``median``/``mean`` are derived, ignored)."""
        try:
            parts = [Component(name, float(data[name]["weight"]), float(data[name]["mu"]),
                               float(data[name]["sigma"])) for name in ("idle", "busy")]
            return cls(parts[0], parts[1], int(data["n"]), float(data["log_likelihood"]),
                       float(data["bic"]), float(data["bic_one"]), int(data["iterations"]),
                       bool(data["converged"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"state model: malformed mixture ({exc!r})") from None


def fit_mixture(times: Sequence[float] | FloatArray, *, min_samples: int = MIN_SAMPLES,
                max_iter: int = 1000, tol: float = 1e-6, seed: int = 0) -> MixtureFit:
    """Fit the two-component log-normal mixture to positive ``times``.

    ``max_iter`` and ``tol`` are GaussianMixture's (EM stops when the mean log-likelihood per
    sample gains less than ``tol``); ``seed`` seeds the k-means++ starts, so a fit is
    reproducible. Raises DataError when there are fewer than ``min_samples`` times or any is
    not a positive finite number. Data with (almost) no spread, or on which every start
    ends degenerate (see the module docstring), fit as two identical components: ``bimodal``
    is then False.
    """
    t = _positive(np.asarray(times, dtype=np.float64).ravel(), "time")
    n = t.size
    if n < min_samples:
        raise DataError(f"mixture: {n} samples are too few; a two-state fit needs at least "
                        f"{min_samples}")
    x = np.log(t)
    centre, spread = float(x.mean()), float(x.std())
    sum_x = float(x.sum())
    if spread <= MIN_ABSOLUTE_SIGMA:
        return _one_state(x, centre, MIN_ABSOLUTE_SIGMA, sum_x)
    z = ((x - centre) / spread).reshape(-1, 1)
    best: tuple[float, Any] | None = None
    for mixture in _starts(z, max_iter, tol, seed):
        mixture.fit(z)
        weights = mixture.weights_.ravel()
        sigmas = np.sqrt(mixture.covariances_.ravel())
        if weights.min() < MIN_WEIGHT or sigmas.min() < MIN_RELATIVE_SIGMA:
            continue
        score = float(mixture.score(z))
        if best is None or score > best[0]:
            best = (score, mixture)
    one = _one_state(x, centre, spread, sum_x)
    if best is None:
        return one
    score, mixture = best
    parts = sorted((Component("", float(w), centre + spread * float(m),
                              spread * math.sqrt(float(c)))
                    for w, m, c in zip(mixture.weights_.ravel(), mixture.means_.ravel(),
                                       mixture.covariances_.ravel(), strict=True)),
                   key=lambda c: (c.mu, c.sigma))
    loglik = n * score - n * math.log(spread) - sum_x
    return MixtureFit(
        Component("idle", parts[0].weight, parts[0].mu, parts[0].sigma),
        Component("busy", parts[1].weight, parts[1].mu, parts[1].sigma),
        n, loglik, 5 * math.log(n) - 2 * loglik, one.bic_one, int(mixture.n_iter_),
        bool(mixture.converged_),
    )


def _starts(z: FloatArray, max_iter: int, tol: float, seed: int) -> list[Any]:
    """Unfitted GaussianMixtures: k-means++ (``n_init`` :data:`N_INIT`) and one per
    quantile split of ``z``."""
    from sklearn.mixture import GaussianMixture

    common = {"n_components": 2, "covariance_type": "full", "reg_covar": REG_COVAR,
              "max_iter": max_iter, "tol": tol, "random_state": seed}
    starts = [GaussianMixture(n_init=N_INIT, init_params="k-means++", **common)]
    ordered = np.sort(z.ravel())
    n = ordered.size
    for q in QUANTILE_STARTS:
        cut = min(max(int(q * n), 2), n - 2)
        lower, upper = ordered[:cut], ordered[cut:]
        starts.append(GaussianMixture(
            weights_init=[cut / n, 1 - cut / n],
            means_init=[[lower.mean()], [upper.mean()]],
            precisions_init=[[[1 / (lower.var() + REG_COVAR)]],
                             [[1 / (upper.var() + REG_COVAR)]]], **common))
    return starts


def _one_state(x: FloatArray, mu: float, sigma: float, sum_x: float) -> MixtureFit:
    """One log-normal as two identical components (``bimodal`` False)."""
    n = x.size
    loglik = float(np.sum(-math.log(sigma) - 0.5 * _LOG_2PI
                          - 0.5 * ((x - mu) / sigma) ** 2)) - sum_x
    idle = Component("idle", 0.5, mu, sigma)
    busy = Component("busy", 0.5, mu, sigma)
    return MixtureFit(idle, busy, n, loglik, 5 * math.log(n) - 2 * loglik,
                      2 * math.log(n) - 2 * loglik, 0, True)


def _positive(values: FloatArray, what: str) -> FloatArray:
    bad = ~np.isfinite(values) | (values <= 0)
    if bad.any():
        raise DataError(f"mixture: {what} {float(values[bad][0])!r} is not a positive finite "
                        "number")
    return values
