r"""Measurement variability: a seeded two-state (idle/busy) log-normal mixture.

Production Lustre file systems are shared, and the time of the same write varies. Field
data show two performance states, *idle* and *busy*, and the time of a write is well fitted
by a mixture of two log-normal distributions (Wan et al., "I/O Performance Characterization
and Prediction through Machine Learning on HPC Systems": modes of 1 GB writes at about
1.85 s and 2.7 s on Titan, 3.2 s and 4.0 s on Cori). The model here multiplies the
deterministic time ``T0`` of :mod:`iotune.sim.lustre` by a factor drawn per measurement::

    state  = busy with probability p_busy, else idle
    idle:  F = exp(sigma_i Z - sigma_i^2 / 2)                   (mean 1)
    busy:  F = exp(ln m_b - sigma_b^2 / 2 + sigma_b Z)          (mean m_b > 1)
    T      = T0 F,   Z ~ N(0, 1)

The constants (``idle_sigma``, ``p_busy``, ``busy_mean``, ``busy_sigma``) come from the
system preset's ``noise`` block. The noise level ``nu >= 0`` scales the dispersion:
``sigma_i -> nu sigma_i``, ``sigma_b -> nu sigma_b``, ``m_b -> m_b^nu``; ``p_busy`` stays.
``nu = 1`` is the preset's variability; ``nu = 0`` turns noise off (``F = 1``, state
``none``, and no random numbers are drawn).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from iotune.errors import ConfigError
from iotune.settings.bounds import MAX_NOISE
from iotune.settings.numbers import LIMITS_DOC
from iotune.sim.system import NoiseSpec

STATE_NAMES = np.array(["none", "idle", "busy"])
NONE, IDLE, BUSY = 0, 1, 2


def check_noise_level(noise: float) -> float:
    """``noise`` as a float, or ConfigError when it is not a finite number in [0,
    :data:`~iotune.settings.bounds.MAX_NOISE`]."""
    if isinstance(noise, bool) or not isinstance(noise, int | float) or not math.isfinite(noise):
        raise ConfigError(f"noise: {noise!r} is not a finite number")
    if noise < 0:
        raise ConfigError(f"noise: {noise!r} is negative; the noise level must be >= 0")
    if noise > MAX_NOISE:
        raise ConfigError(f"noise: {noise:g} is above the limit of {MAX_NOISE} ({LIMITS_DOC})")
    return float(noise)


def draw_factors(
    spec: NoiseSpec,
    shape: tuple[int, ...],
    noise: float,
    rng: np.random.Generator | None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int8]]:
    """Multiplicative factors and state codes (``NONE``/``IDLE``/``BUSY``) of ``shape``.

    Draws, in this order, uniform numbers for the states and standard normals for the
    factors, so a seeded ``rng`` reproduces the same values. ``rng=None`` uses a fresh,
    unseeded generator.
    """
    level = check_noise_level(noise)
    if level == 0:
        return np.ones(shape), np.full(shape, NONE, dtype=np.int8)
    generator = rng if rng is not None else np.random.default_rng()
    busy = generator.random(shape) < spec.p_busy
    z = generator.standard_normal(shape)
    sigma_idle = level * spec.idle_sigma
    sigma_busy = level * spec.busy_sigma
    log_mean_busy = level * math.log(spec.busy_mean)
    log_idle = sigma_idle * z - 0.5 * sigma_idle**2
    log_busy = log_mean_busy - 0.5 * sigma_busy**2 + sigma_busy * z
    factors = np.exp(np.where(busy, log_busy, log_idle))
    states = np.where(busy, BUSY, IDLE).astype(np.int8)
    return factors, states
