r"""Simulated probes: latencies of small synchronous writes consistent with a known state.

The simulated Lustre system (:mod:`iotune.sim.noise`) draws each measurement's state, idle
or busy, and multiplies its noise-free time by a log-normal factor of that state. A probe
taken right before such a measurement meets the same state, so its latency here is drawn
from the *same* family, given the state::

    idle:  L = L0 exp(sigma_i Z - sigma_i^2 / 2)                  (mean L0)
    busy:  L = L0 exp(ln m_b - sigma_b^2 / 2 + sigma_b Z)         (mean m_b L0)
    none:  L = L0                                                   (noise off)

with ``Z ~ N(0, 1)`` drawn afresh (the probe and the measurement share the state, not the
draw), the preset's ``idle_sigma``, ``busy_mean``, ``busy_sigma`` scaled by the noise level
``nu`` as in :mod:`iotune.sim.noise` (``sigma -> nu sigma``, ``m_b -> m_b^nu``), and
``L0 = t_rpc + size / B_ost`` the noise-free latency of one write of ``size`` bytes to one
OST (:func:`probe_base_latency`). So the latencies of many probes form the two-state
log-normal mixture whose parameters are known: idle median ``L0 e^(-sigma_i^2/2)``, busy
median ``L0 m_b e^(-sigma_b^2/2)``, weights ``1 - p_busy`` and ``p_busy``.

A simulated large write (``--large``) meets the state of its target in the round it
follows, and is drawn from the same family with ``L0`` of its own size.

:func:`simulate_probe_trace` builds whole probe sessions (the records ``iotune probe``
writes) with a file-system state that persists over time (a two-state Markov chain) and
synthetic job-queue features that lead the state. The queue model is invented for tests
and demonstrations, not calibrated on any system.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from iotune.errors import ConfigError
from iotune.settings.bounds import MAX_PROBE_ROUNDS, MAX_SIMULATED_PROBES
from iotune.settings.numbers import LIMITS_DOC
from iotune.sim.noise import check_noise_level
from iotune.sim.simulate import BACKEND
from iotune.sim.system import NoiseSpec
from iotune.store import Store
from iotune.variability.probe import PROBE_SIZE, ProbeSettings, check_probe_size

if TYPE_CHECKING:
    from iotune.sim.system import SimSystem

FloatArray = npt.NDArray[np.float64]
STATES = ("none", "idle", "busy")


def probe_base_latency(system: SimSystem | None = None, size: int = PROBE_SIZE) -> float:
    """``L0 = t_rpc + size / B_ost``: the noise-free latency of one ``size``-byte probe.

    With ``system=None`` the constants of the ``hopper`` preset.
    """
    from iotune.sim.system import load_system

    check_probe_size(size)
    spec = system if system is not None else load_system("hopper")
    return spec.rpc_overhead_s + size / (spec.ost_bandwidth_mib_s * 2**20)


def simulated_probe_latencies(noise_spec: NoiseSpec, states: Sequence[str] | npt.ArrayLike,
                              rng: np.random.Generator, size: int = PROBE_SIZE, *,
                              noise: float = 1.0, base_s: float | None = None) -> FloatArray:
    """Probe latencies (seconds), one per state in ``states`` (``idle``/``busy``/``none``).

    ``base_s`` is ``L0`` (default :func:`probe_base_latency` of ``size`` with Hopper's
    constants); ``noise`` is the simulator's noise level. Draws one standard normal per
    state from ``rng`` (also for ``none``, so a seeded sequence does not depend on the
    states). Raises ConfigError for an unknown state, a bad size or noise level.
    """
    level = check_noise_level(noise)
    base = probe_base_latency(None, size) if base_s is None else float(base_s)
    if not (math.isfinite(base) and base > 0):
        raise ConfigError(f"base_s: {base_s!r} is not a positive number of seconds")
    labels = np.asarray(states, dtype=str).ravel()
    unknown = sorted(set(labels.tolist()) - set(STATES))
    if unknown:
        raise ConfigError(f"state: {unknown[0]!r} is not one of {', '.join(STATES)}")
    z = rng.standard_normal(labels.size)
    sigma_idle = level * noise_spec.idle_sigma
    sigma_busy = level * noise_spec.busy_sigma
    log_idle = sigma_idle * z - 0.5 * sigma_idle**2
    log_busy = level * math.log(noise_spec.busy_mean) - 0.5 * sigma_busy**2 + sigma_busy * z
    log_factor = np.where(labels == "busy", log_busy, np.where(labels == "idle", log_idle, 0.0))
    return np.asarray(base * np.exp(log_factor), dtype=np.float64)


def simulated_probe_latency(noise_spec: NoiseSpec, state: str, rng: np.random.Generator,
                            size: int = PROBE_SIZE, *, noise: float = 1.0,
                            base_s: float | None = None) -> float:
    """One probe latency (seconds) in ``state``; see :func:`simulated_probe_latencies`."""
    return float(simulated_probe_latencies(noise_spec, [state], rng, size, noise=noise,
                                           base_s=base_s)[0])


def expected_components(noise_spec: NoiseSpec, size: int = PROBE_SIZE, *, noise: float = 1.0,
                        base_s: float | None = None) -> dict[str, dict[str, float]]:
    """The true mixture of simulated probe latencies: weight, median and sigma per state."""
    level = check_noise_level(noise)
    base = probe_base_latency(None, size) if base_s is None else float(base_s)
    sigma_idle = level * noise_spec.idle_sigma
    sigma_busy = level * noise_spec.busy_sigma
    return {
        "idle": {"weight": 1 - noise_spec.p_busy, "median": base * math.exp(-sigma_idle**2 / 2),
                 "sigma": sigma_idle},
        "busy": {"weight": noise_spec.p_busy,
                 "median": base * noise_spec.busy_mean**level * math.exp(-sigma_busy**2 / 2),
                 "sigma": sigma_busy},
    }


def markov_states(n: int, p_busy: float, persistence: float,
                  rng: np.random.Generator) -> npt.NDArray[np.str_]:
    """``n`` states of a two-state Markov chain with stationary busy share ``p_busy``.

    ``persistence`` ``rho`` in [0, 1) is the lag-one autocorrelation of the busy indicator:
    ``P(idle -> busy) = p_busy (1 - rho)``, ``P(busy -> idle) = (1 - p_busy)(1 - rho)``;
    ``rho = 0`` gives independent states as in :mod:`iotune.sim.noise`.
    """
    if not 0 <= persistence < 1:
        raise ConfigError(f"persistence: {persistence!r} is not in [0, 1)")
    if not 0 <= p_busy <= 1:
        raise ConfigError(f"p_busy: {p_busy!r} is not a probability in [0, 1]")
    to_busy = p_busy * (1 - persistence)
    to_idle = (1 - p_busy) * (1 - persistence)
    u = rng.random(n)
    busy = np.empty(n, dtype=bool)
    current = bool(rng.random() < p_busy)
    for i in range(n):
        current = (u[i] >= to_idle) if current else (u[i] < to_busy)
        busy[i] = current
    return np.where(busy, "busy", "idle")


def simulate_probe_trace(system: SimSystem, rounds: int, rng: np.random.Generator, *,
                         targets: int = 4, size: int = PROBE_SIZE, noise: float = 1.0,
                         interval_s: float = 30.0, start: float = 0.0,
                         persistence: float = 0.9, follow: float = 0.9,
                         queue: bool = True, large_sizes: Sequence[int] = (),
                         large_every: int = 10) -> list[dict[str, Any]]:
    """Simulated probe-round records (the shape ``iotune probe`` writes), with true states.

    A file-system-wide state follows :func:`markov_states`; each of ``targets`` OSTs is in
    that state with probability ``follow`` and in the other one otherwise; each target's
    latency is drawn by :func:`simulated_probe_latencies`. With ``queue`` every round carries
    queue features whose rates rise with the *next* round's file-system state (busy periods
    are announced by large jobs starting), so they carry some predictive signal. Records are
    marked ``backend: sim``, ``provenance: simulated`` and keep each target's true ``state``.
    With ``large_sizes``, every ``large_every``-th round also has a large write per target
    (sizes in turn, as :meth:`ProbeSettings.large_size` picks them) in that target's state.
    """
    sizing = ProbeSettings(size=size, large_sizes=tuple(large_sizes), large_every=large_every)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ConfigError(f"rounds: {rounds!r} is not a positive integer")
    if isinstance(targets, bool) or not isinstance(targets, int) or targets < 1:
        raise ConfigError(f"targets: {targets!r} is not a positive integer")
    global_states = markov_states(rounds + 1, system.noise.p_busy, persistence, rng)
    flip = rng.random((rounds, targets)) >= follow
    busy = (global_states[:rounds, None] == "busy") ^ flip
    states = np.where(busy, "busy", "idle")
    base = probe_base_latency(system, size)
    latencies = simulated_probe_latencies(system.noise, states.ravel(), rng, size, noise=noise,
                                          base_s=base).reshape(rounds, targets)
    probe_id = uuid.UUID(bytes=rng.bytes(16)).hex[:12]
    records = []
    for i in range(rounds):
        at = start + i * interval_s
        record: dict[str, Any] = {
            "campaign": "probe", "kind": "latency", "probe_id": probe_id, "round": i,
            "backend": BACKEND, "provenance": "simulated", "system": system.name,
            "fs_type": "lustre (simulated)", "size_bytes": size, "time": at,
            "targets": [{"target": f"OST{j:04x}", "ost": j, "at": at,
                         "latency_s": float(latencies[i, j]), "state": str(states[i, j])}
                        for j in range(targets)],
        }
        if queue:
            record["queue"] = _simulated_queue(global_states[i + 1] == "busy", rng)
        large = sizing.large_size(i)
        if large is not None:
            record["large_size_bytes"] = large
            times = simulated_probe_latencies(system.noise, states[i], rng, large,
                                              noise=noise,
                                              base_s=probe_base_latency(system, large))
            for entry, seconds in zip(record["targets"], times, strict=True):
                entry["large_s"] = float(seconds)
        records.append(record)
    return records


def simulated_round_count(settings: ProbeSettings, targets: int = 1) -> int:
    """Rounds a simulated probe with ``settings`` writes: ``settings.rounds``, else one per
    interval of its duration (at least one).

    ConfigError for a probe without an end, for more rounds than
    :data:`~iotune.settings.bounds.MAX_PROBE_ROUNDS`, and for more latencies (rounds x
    ``targets``) than :data:`~iotune.settings.bounds.MAX_SIMULATED_PROBES`: each is drawn
    and stored at once, so the check comes before anything is drawn or written.
    """
    if settings.rounds is not None:
        rounds = settings.rounds
    elif settings.duration_s is not None:
        rounds = max(1, int(settings.duration_s // settings.interval_s))
    else:
        raise ConfigError("--duration: 'none' needs --rounds with --simulate")
    if rounds > MAX_PROBE_ROUNDS:
        where = "--rounds" if settings.rounds is not None else "--duration/--interval"
        raise ConfigError(f"{where}: {rounds:,} simulated rounds is above the limit of "
                          f"{MAX_PROBE_ROUNDS:,} ({LIMITS_DOC})")
    if rounds * targets > MAX_SIMULATED_PROBES:
        raise ConfigError(f"--targets: {targets} targets x {rounds} rounds is "
                          f"{rounds * targets:,} simulated latencies, above the limit of "
                          f"{MAX_SIMULATED_PROBES:,} ({LIMITS_DOC})")
    return rounds


def record_simulated_probe(system: SimSystem, store: Store, settings: ProbeSettings, *,
                           targets: int = 4, noise: float = 1.0, seed: int = 0,
                           end: float | None = None) -> list[dict[str, Any]]:
    """Append to ``store`` the rounds of a simulated probe session and return them.

    :func:`simulated_round_count` rounds of :func:`simulate_probe_trace` (seeded by
    ``seed``, queue features unless ``settings.queue`` is ``none``), one every
    ``settings.interval_s`` seconds up to ``end`` (Unix seconds, default now).
    """
    rounds = simulated_round_count(settings, targets)
    start = (time.time() if end is None else end) - rounds * settings.interval_s
    records = simulate_probe_trace(system, rounds, np.random.default_rng(seed), targets=targets,
                                   size=settings.size, noise=noise,
                                   interval_s=settings.interval_s, start=start,
                                   queue=settings.queue != "none",
                                   large_sizes=settings.large_sizes,
                                   large_every=settings.large_every)
    for record in records:
        store.append(record)
    return records


def _simulated_queue(busy_next: bool, rng: np.random.Generator) -> dict[str, Any]:
    """Synthetic queue features: more large and new jobs ahead of a busy period."""
    tiny = int(rng.poisson(30))
    small = int(rng.poisson(10))
    medium = int(rng.poisson(12 if busy_next else 10))
    large = int(rng.poisson(4 if busy_next else 1.5))
    xl = int(rng.poisson(0.8 if busy_next else 0.2))
    jobs = tiny + small + medium + large + xl
    new = int(rng.binomial(jobs, 0.45 if busy_next else 0.3))
    old = int(rng.binomial(jobs - new, 0.4))
    nodes = tiny + small * 8 + medium * 40 + large * 400 + xl * 2000
    return {"running_jobs": jobs, "running_nodes": nodes, "jobs_xs": tiny, "jobs_s": small,
            "jobs_m": medium, "jobs_l": large, "jobs_xl": xl, "jobs_new": new,
            "jobs_middle": jobs - new - old, "jobs_old": old,
            "mem_requested_gib": float(nodes * 64)}

