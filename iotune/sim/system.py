"""Simulated Lustre systems: YAML presets validated once into frozen dataclasses.

A preset is a YAML mapping of the constants the physics model in :mod:`iotune.sim.lustre`
uses. Presets ship in ``iotune/sim/systems/<name>.yaml``; :func:`load_system` takes a preset
name or a path to a YAML file of the same shape. Every problem is a
:class:`~iotune.errors.ConfigError` whose message starts with the key path and states the
rule, e.g. ``system.ost_count: 0 is not a positive integer``.

Keys (all required unless a default is given; bandwidths in MiB/s, times in seconds, sizes in
bytes or strings such as ``"1MiB"``):

``name``, ``description``
    Identification; ``name`` is what every simulated result carries.
``cores_per_node``
    Cores (MPI ranks) per compute node; the default node count is ``ceil(ranks / cores_per_node)``.
``injection_bandwidth_mib_s``  (``B_inj``)
    Network bandwidth into one node, used by the collective-buffering shuffle.
``client_bandwidth_mib_s``  (``B_cl``)
    Bandwidth one node's Lustre client sustains writing to the servers (at most ``B_inj``).
``fabric_bandwidth_mib_s``  (``B_fab``) and ``fabric_exponent``  (``gamma``)
    The bandwidth a job of ``N`` nodes can push out of its part of the network towards the
    storage, ``B_fab N^gamma``. On a 3D torus (Cray Gemini) traffic leaves a job's region
    through its surface, which grows as ``N^(2/3)``; on a network with full global
    bandwidth ``gamma = 1`` (and ``B_fab`` the per-node share).
``aggregator_contention``  (``epsilon``)
    Extra cost, as a fraction, of each additional aggregator on one node: they share the
    node's memory bandwidth, network link and Lustre client (``1 + epsilon (k - 1)``).
``ost_count``  (``n_ost``)
    Object storage targets of the file system; larger stripe counts are clamped to it.
``ost_bandwidth_mib_s``  (``B_ost``)
    Streaming write bandwidth of one OST for large, uncontended RPCs.
``peak_bandwidth_mib_s``  (``B_pk``)
    Aggregate bandwidth of the whole file system (servers and their network).
``rpc_size``  (``r_max``)
    Largest bulk RPC the client sends (Lustre's ``max_pages_per_rpc``; 1 MiB by default).
``rpc_overhead_s``  (``t_rpc``)
    Fixed cost of one RPC at an OST, on top of its transfer time.
``lock_overhead_s``  (``t_lock``)
    Cost of one extent-lock conflict (callback, flush, cancel, re-enqueue).
``open_base_s``  (``t_open``) and ``open_per_stripe_s``  (``t_stripe``)
    File create/open cost, and the extra cost of each stripe object (allocation, layout).
``mds_parallel_creates``  (``m``)
    Creates the metadata server completes concurrently (file-per-process patterns).
``write_call_overhead_s``  (``t_call``)
    Client-side cost of one ``write`` call of an independent writer.
``mpi_latency_s``  (``alpha``) and ``alltoall_per_rank_s``  (``beta``)
    Latency of one step of a collective, and the per-peer cost of the all-to-all of sizes
    that every two-phase round performs.
``ost_jitter``  (``sigma_ost``)
    Coefficient of variation of OST service time; a synchronous step waits for the slowest
    of ``u`` OSTs, ``E[max] ~ 1 + sigma_ost * sqrt(2 ln u)``.
``defaults``
    What a run gets when it sets nothing: ``stripe_count``, ``stripe_size``,
    ``cb_buffer_size``, ``cb_nodes`` (``stripe_count`` = one aggregator per stripe, Cray
    MPI-IO's rule on Lustre; ``nodes`` = one per node, ROMIO's generic rule; or an integer),
    ``romio_cb_write`` and ``romio_ds_write`` (``enable``/``disable``/``automatic``).
``noise``
    The variability of measurements (see :mod:`iotune.sim.noise`): ``idle_sigma`` (sigma of
    the log-normal factor in the idle state), ``p_busy`` (probability that a measurement
    meets a busy file system), ``busy_mean`` and ``busy_sigma`` (mean and sigma of the
    log-normal factor that multiplies the time in the busy state).
``calibration``  (optional)
    Which constants were fitted to published figures, and on what (see
    :mod:`iotune.sim.calibrate`): ``target`` (the data set; ``behzad14_table3`` is Table 3 of
    Behzad et al., HPDC'14), ``training_cores`` (the scales of that table used for fitting;
    the others are out-of-sample) and ``fitted`` (the names of the fitted constants). A
    preset without it was fitted to nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from iotune.errors import ConfigError
from iotune.inputs import MAX_YAML_BYTES, YamlLimitError, read_text, safe_load
from iotune.settings.bounds import MAX_CORES, MAX_INTEGER, MAX_NOISE_SIGMA, MAX_OSTS
from iotune.settings.catalogue import SETTINGS, ByteSize, SettingValueError
from iotune.settings.numbers import check_number
from iotune.settings.values import normalise_value

CB_NODES_RULES = ("stripe_count", "nodes")
#: Data sets a preset can be calibrated on (``calibration.target``).
CALIBRATION_TARGETS = ("behzad14_table3",)
_PRESET_DIR = "systems"


@dataclass(frozen=True)
class SimDefaults:
    """What a run gets for a setting it leaves unset."""

    stripe_count: int
    stripe_size: int
    cb_buffer_size: int
    cb_nodes: str | int
    romio_cb_write: str
    romio_ds_write: str

    def cb_nodes_for(self, stripe_count: int, nodes: int) -> int:
        """The default aggregator count for a file of ``stripe_count`` stripes on ``nodes``."""
        if self.cb_nodes == "stripe_count":
            return stripe_count
        if self.cb_nodes == "nodes":
            return nodes
        return int(self.cb_nodes)


@dataclass(frozen=True)
class NoiseSpec:
    """Measurement variability at noise level 1 (two-state log-normal mixture)."""

    idle_sigma: float
    p_busy: float
    busy_mean: float
    busy_sigma: float


@dataclass(frozen=True)
class SimCalibration:
    """Which constants of a preset were fitted, to which data set, on which scales."""

    target: str
    training_cores: tuple[int, ...]
    fitted: tuple[str, ...]


@dataclass(frozen=True)
class SimSystem:
    """A validated simulated Lustre system (see the module docstring for each constant)."""

    name: str
    description: str
    cores_per_node: int
    injection_bandwidth_mib_s: float
    client_bandwidth_mib_s: float
    fabric_bandwidth_mib_s: float
    fabric_exponent: float
    aggregator_contention: float
    ost_count: int
    ost_bandwidth_mib_s: float
    peak_bandwidth_mib_s: float
    rpc_size: int
    rpc_overhead_s: float
    lock_overhead_s: float
    open_base_s: float
    open_per_stripe_s: float
    mds_parallel_creates: int
    write_call_overhead_s: float
    mpi_latency_s: float
    alltoall_per_rank_s: float
    ost_jitter: float
    defaults: SimDefaults
    noise: NoiseSpec
    calibration: SimCalibration | None = None

    def nodes_for(self, ranks: int) -> int:
        """Default node count of a run with ``ranks`` ranks: ``ceil(ranks / cores_per_node)``."""
        return -(-ranks // self.cores_per_node)


_POSITIVE_INT = ("cores_per_node", "ost_count", "mds_parallel_creates")
#: The limits of the integer constants that have one of their own (others: MAX_INTEGER).
_INT_LIMITS = {"cores_per_node": MAX_CORES, "ost_count": MAX_OSTS}
_POSITIVE_FLOAT = (
    "injection_bandwidth_mib_s",
    "client_bandwidth_mib_s",
    "fabric_bandwidth_mib_s",
    "fabric_exponent",
    "ost_bandwidth_mib_s",
    "peak_bandwidth_mib_s",
)
_NON_NEGATIVE_FLOAT = (
    "aggregator_contention",
    "rpc_overhead_s",
    "lock_overhead_s",
    "open_base_s",
    "open_per_stripe_s",
    "write_call_overhead_s",
    "mpi_latency_s",
    "alltoall_per_rank_s",
    "ost_jitter",
)
_TOP_KEYS = frozenset(
    ("name", "description", "rpc_size", "defaults", "noise", "calibration",
     *_POSITIVE_INT, *_POSITIVE_FLOAT, *_NON_NEGATIVE_FLOAT)
)
#: Defaults that are catalogue settings, checked with the catalogue's rules.
_DEFAULT_SETTINGS = ("stripe_count", "stripe_size", "cb_buffer_size", "romio_cb_write",
                     "romio_ds_write")
_DEFAULT_KEYS = frozenset((*_DEFAULT_SETTINGS, "cb_nodes"))
_NOISE_KEYS = frozenset(("idle_sigma", "p_busy", "busy_mean", "busy_sigma"))
_CALIBRATION_KEYS = frozenset(("target", "training_cores", "fitted"))
#: Constants a calibration may fit: the real-valued physical ones.
FITTABLE = (*_POSITIVE_FLOAT, *_NON_NEGATIVE_FLOAT)


def list_systems() -> list[str]:
    """Names of the shipped presets, sorted."""
    root = resources.files("iotune.sim").joinpath(_PRESET_DIR)
    return sorted(p.name[: -len(".yaml")] for p in root.iterdir() if p.name.endswith(".yaml"))


def load_system(name_or_path: str | Path) -> SimSystem:
    """The preset called ``name_or_path``, or the YAML file at that path, validated.

    A value naming an existing file (or ending in ``.yaml``/``.yml``) is read as a path;
    otherwise it must be a shipped preset (:func:`list_systems`). Raises ConfigError.
    """
    text = str(name_or_path)
    path = Path(text)
    if path.suffix in (".yaml", ".yml") or (path.exists() and not path.is_dir()):
        if not path.exists():
            raise ConfigError(f"system: no such file: {text}")
        try:
            raw = read_text(path, "system file", ConfigError, MAX_YAML_BYTES)
        except ConfigError as exc:  # a directory, a special file, too big, not UTF-8
            raise ConfigError(f"system: {exc}") from None
    else:
        known = list_systems()
        if text not in known:
            raise ConfigError(
                f"system: unknown system '{text}'; known systems: {', '.join(known)} "
                "(or give a path to a YAML file)"
            )
        preset = resources.files("iotune.sim").joinpath(_PRESET_DIR, f"{text}.yaml")
        raw = preset.read_text("utf-8")
    try:
        data = safe_load(raw)
    except YamlLimitError as exc:
        raise ConfigError(f"system: {text}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"system: {text} is not valid YAML: {exc}") from None
    return system_from_mapping(data)


def system_from_mapping(data: Any, where: str = "system") -> SimSystem:
    """Validate a parsed preset (a mapping) into a :class:`SimSystem`; raises ConfigError."""
    top = _mapping(data, where)
    _no_unknown(top, _TOP_KEYS, where)
    values: dict[str, Any] = {}
    for key in ("name", "description"):
        value = _require(top, key, where)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}.{key}: {value!r} is not a non-empty string")
        values[key] = value.strip()
    for key in _POSITIVE_INT:
        values[key] = _positive_int(_require(top, key, where), f"{where}.{key}",
                                    _INT_LIMITS.get(key, MAX_INTEGER))
    for key in _POSITIVE_FLOAT:
        values[key] = _number(_require(top, key, where), f"{where}.{key}", positive=True)
    for key in _NON_NEGATIVE_FLOAT:
        values[key] = _number(_require(top, key, where), f"{where}.{key}", positive=False)
    values["rpc_size"] = normalise_value(ByteSize(), _require(top, "rpc_size", where),
                                         f"{where}.rpc_size")
    if values["client_bandwidth_mib_s"] > values["injection_bandwidth_mib_s"]:
        raise ConfigError(
            f"{where}.client_bandwidth_mib_s: {values['client_bandwidth_mib_s']:g} exceeds "
            f"injection_bandwidth_mib_s ({values['injection_bandwidth_mib_s']:g}); a node's "
            "Lustre client cannot write faster than its network link"
        )
    if values["fabric_exponent"] > 1:
        raise ConfigError(
            f"{where}.fabric_exponent: {values['fabric_exponent']:g} exceeds 1; a job's network "
            "bandwidth cannot grow faster than its node count"
        )
    values["defaults"] = _defaults(_require(top, "defaults", where), f"{where}.defaults",
                                   values["ost_count"])
    values["noise"] = _noise(_require(top, "noise", where), f"{where}.noise")
    if top.get("calibration") is not None:
        values["calibration"] = _calibration(top["calibration"], f"{where}.calibration")
    return SimSystem(**values)


def _defaults(data: Any, where: str, ost_count: int) -> SimDefaults:
    block = _mapping(data, where)
    _no_unknown(block, _DEFAULT_KEYS, where)
    values = {key: _setting(block, key, where) for key in _DEFAULT_SETTINGS}
    if values["stripe_count"] > ost_count:
        raise ConfigError(
            f"{where}.stripe_count: {values['stripe_count']} exceeds ost_count ({ost_count})"
        )
    cb_nodes_raw = _require(block, "cb_nodes", where)
    is_rule = isinstance(cb_nodes_raw, str) and cb_nodes_raw in CB_NODES_RULES
    is_count = type(cb_nodes_raw) is int and cb_nodes_raw > 0
    if not (is_rule or is_count):
        raise ConfigError(
            f"{where}.cb_nodes: {cb_nodes_raw!r} is not one of {', '.join(CB_NODES_RULES)} "
            "or a positive integer"
        )
    return SimDefaults(cb_nodes=cb_nodes_raw, **values)


def _setting(block: Mapping[str, Any], key: str, where: str) -> Any:
    """The value of catalogue setting ``key``, checked with the catalogue's rule."""
    try:
        return SETTINGS[key].parse(_require(block, key, where))
    except SettingValueError as exc:
        raise ConfigError(f"{where}.{key}: {exc}") from None


def _noise(data: Any, where: str) -> NoiseSpec:
    block = _mapping(data, where)
    _no_unknown(block, _NOISE_KEYS, where)
    idle_sigma = _number(_require(block, "idle_sigma", where), f"{where}.idle_sigma", False,
                         MAX_NOISE_SIGMA)
    p_busy = _number(_require(block, "p_busy", where), f"{where}.p_busy", False)
    if p_busy > 1:
        raise ConfigError(f"{where}.p_busy: {p_busy} is not a probability in [0, 1]")
    busy_mean = _number(_require(block, "busy_mean", where), f"{where}.busy_mean", True)
    if busy_mean < 1:
        raise ConfigError(
            f"{where}.busy_mean: {busy_mean} is below 1; a busy file system cannot be faster"
        )
    busy_sigma = _number(_require(block, "busy_sigma", where), f"{where}.busy_sigma", False,
                         MAX_NOISE_SIGMA)
    return NoiseSpec(idle_sigma, p_busy, busy_mean, busy_sigma)


def _calibration(data: Any, where: str) -> SimCalibration:
    block = _mapping(data, where)
    _no_unknown(block, _CALIBRATION_KEYS, where)
    target = _require(block, "target", where)
    if target not in CALIBRATION_TARGETS:
        raise ConfigError(f"{where}.target: {target!r} is not one of "
                          f"{', '.join(CALIBRATION_TARGETS)}")
    cores = _require(block, "training_cores", where)
    if not isinstance(cores, list) or not cores:
        raise ConfigError(f"{where}.training_cores: {cores!r} is not a non-empty list")
    training = tuple(_positive_int(c, f"{where}.training_cores", MAX_CORES) for c in cores)
    if len(set(training)) != len(training):
        raise ConfigError(f"{where}.training_cores: {cores!r} repeats a scale")
    fitted = _require(block, "fitted", where)
    if not isinstance(fitted, list) or not fitted:
        raise ConfigError(f"{where}.fitted: {fitted!r} is not a non-empty list")
    for key in fitted:
        if key not in FITTABLE:
            raise ConfigError(f"{where}.fitted: {key!r} is not a fittable constant; "
                              f"fittable: {', '.join(FITTABLE)}")
    return SimCalibration(str(target), training, tuple(fitted))


def _mapping(data: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected a mapping, got {type(data).__name__}")
    for key in data:
        if not isinstance(key, str):
            raise ConfigError(f"{where}: key {key!r} is not a string")
    return data


def _no_unknown(block: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    for key in block:
        if key not in allowed:
            raise ConfigError(
                f"{where}.{key}: unknown key; known keys: {', '.join(sorted(allowed))}"
            )


def _require(block: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in block or block[key] is None:
        raise ConfigError(f"{where}.{key}: missing (required)")
    return block[key]


def _positive_int(value: Any, where: str, limit: int = MAX_INTEGER) -> int:
    """A positive integer at most ``limit`` (a constant of :mod:`iotune.settings.bounds`)."""
    check_number(value, where, 1, whole=True, limit=limit)
    assert isinstance(value, int)
    return value


def _number(value: Any, where: str, positive: bool, limit: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: {value!r} is not a finite number")
    if positive and value <= 0:
        raise ConfigError(f"{where}: {value!r} is not a positive number")
    if not positive and value < 0:
        raise ConfigError(f"{where}: {value!r} is negative; it must be >= 0")
    return check_number(value, where, limit=limit)


