r"""A two-component log-normal mixture fitted by expectation maximisation (EM).

Write and probe times on a shared file system are bimodal: an *idle* and a *busy* state,
each log-normal (Wan et al., section IV.B). With ``x = ln t`` the mixture is a mixture of
two normals::

    f(t) = sum_k w_k / (t sigma_k sqrt(2 pi)) exp(-(ln t - mu_k)^2 / (2 sigma_k^2)),  k = idle, busy

EM on ``x`` (Dempster, Laird and Rubin; Gupta and Chen, the paper's [12]):

* E-step: responsibilities ``r_ik = w_k N(x_i; mu_k, sigma_k) / sum_j w_j N(x_i; mu_j, sigma_j)``;
* M-step: ``N_k = sum_i r_ik``, ``w_k = N_k / n``, ``mu_k = sum_i r_ik x_i / N_k``,
  ``sigma_k^2 = sum_i r_ik (x_i - mu_k)^2 / N_k`` (floored, see :data:`SIGMA_FLOOR`);

until the log-likelihood gains less than ``tol`` (relative). Several starts (splits of the
sorted data at the 30th, 50th, 70th and 85th percentiles) guard against local optima; the
fit with the highest likelihood wins. The component with the smaller log-median ``mu`` is
*idle*, the other *busy*.

Each component reports its weight ``w``, median ``e^mu``, mean ``e^(mu + sigma^2/2)`` and
``sigma`` (of ``ln t``). Whether the data support two states at all is judged by BIC
(``BIC = p ln n - 2 ln L``, ``p = 5`` for the mixture, ``2`` for one log-normal): the mixture
is called *bimodal* when it lowers BIC by more than :data:`BIC_MARGIN` (10, "very strong"
evidence in Kass and Raftery's scale).
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
#: Smallest sigma of a component, relative to the spread of ``ln t`` (absolute 1e-6 at least),
#: so a component cannot collapse onto one value and make the likelihood infinite.
SIGMA_FLOOR = 1e-3
#: BIC improvement over one log-normal needed to call the data bimodal.
BIC_MARGIN = 10.0
_LOG_2PI = math.log(2 * math.pi)
_STARTS = (0.3, 0.5, 0.7, 0.85)


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
                max_iter: int = 1000, tol: float = 1e-10) -> MixtureFit:
    """Fit the two-component log-normal mixture to positive ``times`` by EM.

    Raises DataError when there are fewer than ``min_samples`` times or any is not a positive
    finite number. Data with (almost) no spread fit as two identical components: ``bimodal``
    is then False.
    """
    t = _positive(np.asarray(times, dtype=np.float64).ravel(), "time")
    n = t.size
    if n < min_samples:
        raise DataError(f"mixture: {n} samples are too few; a two-state fit needs at least "
                        f"{min_samples}")
    x = np.log(t)
    spread = float(x.std())
    floor = max(1e-6, SIGMA_FLOOR * spread)
    sum_log_t = float(x.sum())
    one_sigma = max(spread, floor)
    loglik_one_x = float(np.sum(-math.log(one_sigma) - 0.5 * _LOG_2PI
                                - 0.5 * ((x - x.mean()) / one_sigma) ** 2))
    bic_one = 2 * math.log(n) - 2 * (loglik_one_x - sum_log_t)
    if spread <= floor:
        idle = Component("idle", 0.5, float(x.mean()), floor)
        busy = Component("busy", 0.5, float(x.mean()), floor)
        loglik = loglik_one_x - sum_log_t
        return MixtureFit(idle, busy, n, loglik, 5 * math.log(n) - 2 * loglik, bic_one, 0, True)
    best: tuple[float, FloatArray, int, bool] | None = None
    xs = np.sort(x)
    for q in _STARTS:
        cut = min(max(int(q * n), 2), n - 2)
        lower, upper = xs[:cut], xs[cut:]
        params = np.array([cut / n, lower.mean(), max(lower.std(), floor),
                           upper.mean(), max(upper.std(), floor)])
        loglik_x, params, iterations, converged = _em(x, params, floor, max_iter, tol)
        if best is None or loglik_x > best[0]:
            best = (loglik_x, params, iterations, converged)
    assert best is not None
    loglik_x, (w0, mu0, s0, mu1, s1), iterations, converged = best
    a = Component("", float(w0), float(mu0), float(s0))
    b = Component("", float(1 - w0), float(mu1), float(s1))
    low, high = (a, b) if a.mu <= b.mu else (b, a)
    loglik = loglik_x - sum_log_t
    return MixtureFit(
        Component("idle", low.weight, low.mu, low.sigma),
        Component("busy", high.weight, high.mu, high.sigma),
        n, loglik, 5 * math.log(n) - 2 * loglik, bic_one, iterations, converged,
    )


def _em(x: FloatArray, params: FloatArray, floor: float, max_iter: int,
        tol: float) -> tuple[float, FloatArray, int, bool]:
    """EM from ``params = [w0, mu0, sigma0, mu1, sigma1]``; returns the log-likelihood of
    ``x``, the parameters, the iterations and whether it converged."""
    w0, mu0, s0, mu1, s1 = (float(v) for v in params)
    previous = -math.inf
    current = np.asarray(params, dtype=np.float64)
    for iteration in range(1, max_iter + 1):
        w0 = min(max(w0, 1e-12), 1 - 1e-12)
        l0 = math.log(w0) - math.log(s0) - 0.5 * ((x - mu0) / s0) ** 2
        l1 = math.log(1 - w0) - math.log(s1) - 0.5 * ((x - mu1) / s1) ** 2
        total = np.logaddexp(l0, l1)
        loglik = float(total.sum()) - 0.5 * _LOG_2PI * x.size
        current = np.array([w0, mu0, s0, mu1, s1])
        if loglik - previous <= tol * abs(loglik):
            return loglik, current, iteration, True
        previous = loglik
        r0 = np.exp(l0 - total)
        r1 = 1.0 - r0
        n0, n1 = float(r0.sum()), float(r1.sum())
        if n0 < 1e-9 or n1 < 1e-9:  # a component emptied: one state explains everything
            return loglik, current, iteration, True
        w0 = n0 / x.size
        mu0 = float(r0 @ x) / n0
        mu1 = float(r1 @ x) / n1
        s0 = max(math.sqrt(float(r0 @ (x - mu0) ** 2) / n0), floor)
        s1 = max(math.sqrt(float(r1 @ (x - mu1) ** 2) / n1), floor)
    return previous, current, max_iter, False  # the last parameters whose likelihood is known


def _positive(values: FloatArray, what: str) -> FloatArray:
    bad = ~np.isfinite(values) | (values <= 0)
    if bad.any():
        raise DataError(f"mixture: {what} {float(values[bad][0])!r} is not a positive finite "
                        "number")
    return values
