r"""The analytic model: time to write a VPIC-IO or IOR pattern to a Lustre file system.

Every quantity is computed on numpy arrays, so one call evaluates any number of
configurations (see :mod:`iotune.sim.configs` for broadcasting). Notation: ``P`` ranks on
``N`` nodes; ``K`` write calls per rank, each of ``b`` contiguous bytes per rank, so a call
moves ``D = P b`` bytes; stripe count ``c`` (clamped to ``n_ost``), stripe size ``s``,
aggregators ``a``, collective buffer ``cb``; the system constants of
:mod:`iotune.sim.system` (bandwidths in bytes/s). Total time::

    T = T_open + T_write

Open (create the file and one object per stripe; ``F`` files, 1 or ``P``)::

    T_open = (t_open + c t_stripe) (1 + (F - 1) / m) + alpha ceil(log2 P)

Per-OST efficiency. An OST receives contiguous chunks of ``chi`` bytes, in RPCs of
``r = min(r_max, chi)`` bytes, from ``w`` clients writing the same object. Each RPC costs
``t_rpc`` on top of its transfer; a change of writer costs a lock conflict ``t_lock`` that
grows with the number of contenders queued on the object::

    phi(w) = (1 - 1/w) log2(1 + w)
    eta    = (1/B_ost) / (1/B_ost + t_rpc / r + t_lock phi(w) / chi)

A synchronous step waits for the slowest of the ``u`` OSTs it uses; with service-time
coefficient of variation ``sigma_ost`` the expected maximum is about::

    S(u) = 1 + sigma_ost sqrt(2 ln u)

A step's limits combine as a smooth maximum of times (``p = SATURATION_P``), so the slowest
limit governs and near a crossover both cost a little::

    pmax(t_1, ..., t_n) = (t_1^p + ... + t_n^p)^(1/p)

The job's network: its traffic to storage leaves through ``B_job = B_fab N^gamma``.

Two-phase collective write (ROMIO collective buffering). It is used when the application
writes collectively through MPI-IO to a shared file and ``romio_cb_write`` is ``enable``, or
``automatic`` and the ranks' accesses interleave (ROMIO's test; the modelled patterns do not
interleave, so ``automatic`` writes independently). ``a = min(cb_nodes, P, k_max N)``
aggregators sit on ``min(a, N)`` nodes, ``k = a / min(a, N)`` per node, sharing it at a
cost ``kappa = 1 + epsilon (k - 1)``. Lustre's ADIO driver deals stripes to aggregators
round-robin (stripe ``j`` to aggregator ``j mod a``), so ``w = a / gcd(a, c)`` aggregators
write each object: one when ``a`` divides ``c``, more when aggregators and stripes are not
aligned. Each of the ``K`` calls proceeds in rounds::

    R   = ceil(D / (a cb))                    rounds
    x   = D / (a R)                           bytes per aggregator per round
    u   = min(c, a max(1, x / s))             OSTs written in a round
    chi = min(s, x)
    t_shuffle = kappa k x (1 - 1/N) / B_inj   ranks send their data to the aggregators
    t_io = pmax(kappa k x / B_cl,             the aggregators' nodes' Lustre clients
                a x / B_job,                  the job's network
                a x / (u B_ost eta),          the OSTs in use
                a x / B_pk) S(u)              the whole file system
    t_sync = alpha ceil(log2 P) + beta P      per-round all-to-all of sizes
    T_write = K ((R + 1) t_sync + R (t_shuffle + t_io))

So few aggregators bound the parallelism (``t_client ~ 1/a``); more than one per node adds
nothing to the node's bandwidth and costs ``kappa``; few stripes starve the servers
(``t_server ~ 1/c``); small stripes shrink ``chi`` and ``r`` and pay ``t_rpc``;
misaligned aggregators pay lock conflicts; every round pays ``t_sync``, growing with ``P``.

Independent writes (no collective buffering; a shared file or one file per process). Each
rank writes ``X`` contiguous extents of ``E`` bytes (VPIC: one per variable; IOR: its
block; the client cache merges a rank's consecutive calls into full RPCs), ``D_E = P E``::

    shared file:       chi = min(s, E), w = clip(P min(c, ceil(E / s)) / c, 1, P),
                       u = min(c, ceil(D_E / s))
    file per process:  chi = min(s, E), w = 1, u = n_ost (1 - (1 - c / n_ost)^P)
    t_io = pmax(D_E / (N B_cl), D_E / B_job, D_E / (u B_ost eta), D_E / B_pk) S(u)
    T_write = X t_io + K (t_call + [t_sync if the calls are collective])

Many ranks writing into one object's stripes (large ``w``) pay a lock conflict on nearly
every chunk. ``romio_ds_write`` and the HDF5 settings have no effect: every write is
contiguous, and ROMIO sieves only non-contiguous independent writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from iotune.settings.units import MIB
from iotune.sim.configs import AUTOMATIC, ENABLE, ConfigArrays
from iotune.sim.system import SimSystem
from iotune.workload.pattern import Pattern

FloatArray = npt.NDArray[np.float64]
#: Exponent of the smooth maximum that combines the client, server and peak limits.
SATURATION_P = 4.0


@dataclass(frozen=True)
class Breakdown:
    """Deterministic model times (seconds) and the quantities behind them, per configuration."""

    open_s: FloatArray
    write_s: FloatArray
    time_s: FloatArray
    two_phase: npt.NDArray[np.bool_]
    aggregators: FloatArray
    active_osts: FloatArray
    writers_per_object: FloatArray
    ost_efficiency: FloatArray


@dataclass(frozen=True)
class _Scale:
    """Quantities of one run that do not depend on the configuration."""

    ranks: float
    nodes: float
    b_inj: float
    b_cl: float
    b_fab: float
    b_pk: float
    b_ost: float
    t_sync: float


def model_times(system: SimSystem, pattern: Pattern, cfg: ConfigArrays) -> Breakdown:
    """Evaluate the model for every configuration in ``cfg`` (noise-free)."""
    ranks = float(pattern.ranks)
    nodes = float(pattern.nodes_on(system.cores_per_node))
    steps = float(np.ceil(np.log2(ranks))) if ranks > 1 else 0.0
    scale = _Scale(
        ranks=ranks,
        nodes=nodes,
        b_inj=system.injection_bandwidth_mib_s * MIB,
        b_cl=min(system.client_bandwidth_mib_s, system.injection_bandwidth_mib_s) * MIB,
        b_fab=system.fabric_bandwidth_mib_s * MIB * nodes**system.fabric_exponent,
        b_pk=system.peak_bandwidth_mib_s * MIB,
        b_ost=system.ost_bandwidth_mib_s * MIB,
        t_sync=system.mpi_latency_s * steps + system.alltoall_per_rank_s * ranks,
    )
    two_phase = (
        cfg.collective
        & pattern.uses_mpiio
        & (not pattern.file_per_process)
        & ((cfg.cb_write == ENABLE) | ((cfg.cb_write == AUTOMATIC) & pattern.interleaved))
    )
    tp = _two_phase(system, pattern, cfg, scale)
    ind = _independent(system, pattern, cfg, scale)
    files = ranks if pattern.file_per_process else 1.0
    c = cfg.stripe_count.astype(np.float64)
    open_s = (system.open_base_s + c * system.open_per_stripe_s) \
        * (1.0 + (files - 1.0) / system.mds_parallel_creates) + system.mpi_latency_s * steps
    write_s = np.where(two_phase, tp.write_s, ind.write_s)
    return Breakdown(
        open_s=open_s,
        write_s=write_s,
        time_s=open_s + write_s,
        two_phase=two_phase,
        aggregators=np.where(two_phase, tp.aggregators, np.nan),
        active_osts=np.where(two_phase, tp.osts, ind.osts),
        writers_per_object=np.where(two_phase, tp.writers, ind.writers),
        ost_efficiency=np.where(two_phase, tp.eta, ind.eta),
    )


@dataclass(frozen=True)
class _Path:
    """Write time of one I/O path and what it depends on."""

    write_s: FloatArray
    aggregators: FloatArray
    osts: FloatArray
    writers: FloatArray
    eta: FloatArray


def _two_phase(system: SimSystem, pattern: Pattern, cfg: ConfigArrays, sc: _Scale) -> _Path:
    """ROMIO collective buffering with stripe-aligned, round-robin file domains."""
    c = cfg.stripe_count.astype(np.float64)
    s = cfg.stripe_size
    data = sc.ranks * float(pattern.bytes_per_call)
    cap = np.floor(cfg.per_node_cap * sc.nodes)
    a = np.maximum(1.0, np.minimum(np.minimum(cfg.cb_nodes.astype(np.float64), sc.ranks), cap))
    k = a / np.minimum(a, sc.nodes)
    crowd = 1.0 + system.aggregator_contention * (k - 1.0)
    rounds = np.ceil(data / (a * cfg.cb_buffer_size))
    x = data / (a * rounds)
    osts = np.minimum(c, a * np.maximum(1.0, x / s))
    writers = a / np.gcd(a.astype(np.int64), cfg.stripe_count).astype(np.float64)
    eta = ost_efficiency(system, np.minimum(s, x), writers)
    t_shuffle = crowd * k * x * (1.0 - 1.0 / sc.nodes) / sc.b_inj
    t_io = pmax(
        crowd * k * x / sc.b_cl,
        a * x / sc.b_fab,
        a * x / (osts * sc.b_ost * eta),
        a * x / sc.b_pk,
    ) * straggle(system, osts)
    per_call = (rounds + 1.0) * sc.t_sync + rounds * (t_shuffle + t_io)
    return _Path(pattern.calls * per_call, a, osts, writers, eta)


def _independent(system: SimSystem, pattern: Pattern, cfg: ConfigArrays, sc: _Scale) -> _Path:
    """Every rank writes its own contiguous extents (shared file or file per process)."""
    c = cfg.stripe_count.astype(np.float64)
    s = cfg.stripe_size
    extent = float(pattern.extent_bytes)
    data = sc.ranks * extent
    if pattern.file_per_process:
        writers = np.ones_like(c)
        osts = system.ost_count * (1.0 - (1.0 - c / system.ost_count) ** sc.ranks)
    else:
        objects = np.minimum(c, np.ceil(extent / s))
        writers = np.clip(sc.ranks * objects / c, 1.0, sc.ranks)
        osts = np.minimum(c, np.ceil(data / s))
    eta = ost_efficiency(system, np.minimum(s, extent), writers)
    t_io = pmax(
        np.full_like(c, data / (sc.nodes * sc.b_cl)),
        np.full_like(c, data / sc.b_fab),
        data / (osts * sc.b_ost * eta),
        np.full_like(c, data / sc.b_pk),
    ) * straggle(system, osts)
    sync = np.where(cfg.collective & pattern.uses_mpiio, sc.t_sync, 0.0)
    write_s = pattern.extents * t_io + pattern.calls * (sync + system.write_call_overhead_s)
    return _Path(write_s, np.full_like(c, np.nan), osts, writers, eta)


def ost_efficiency(system: SimSystem, chunk: FloatArray, writers: FloatArray) -> FloatArray:
    """Fraction ``eta`` of an OST's streaming bandwidth left after RPC and lock costs."""
    per_byte = 1.0 / (system.ost_bandwidth_mib_s * MIB)
    rpc = np.minimum(float(system.rpc_size), chunk)
    contention = (1.0 - 1.0 / writers) * np.log2(1.0 + writers)
    cost = per_byte + system.rpc_overhead_s / rpc + system.lock_overhead_s * contention / chunk
    return per_byte / cost


def straggle(system: SimSystem, osts: FloatArray) -> FloatArray:
    """Expected slowest-of-``u`` factor ``1 + sigma_ost sqrt(2 ln u)`` (1 for one OST)."""
    return 1.0 + system.ost_jitter * np.sqrt(2.0 * np.log(np.maximum(osts, 1.0)))


def pmax(*times: FloatArray) -> FloatArray:
    """Smooth maximum ``(sum t_i^p)^(1/p)`` with ``p = SATURATION_P``."""
    scale = np.maximum.reduce([np.asarray(t, dtype=np.float64) for t in times])
    scale = np.where(scale > 0, scale, 1.0)
    total = sum((t / scale) ** SATURATION_P for t in times)
    return np.asarray(scale * total ** (1.0 / SATURATION_P), dtype=np.float64)
