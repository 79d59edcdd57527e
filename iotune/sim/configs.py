"""Turn a table of configurations into validated numpy arrays, defaults filled in.

Configurations come as a pandas DataFrame (one row each) or a mapping of column name to a
scalar or array; mapping values are broadcast against each other with numpy's rules, so
``{"stripe_count": c[:, None], "cb_nodes": a[None, :]}`` evaluates a whole grid. Columns:

=================  ===========================================================================
``stripe_count``   positive integer; ``-1`` = every OST; ``0`` = the default; clamped to the
                   OST count, as Lustre does
``stripe_size``    bytes, a positive multiple of 64 KiB (strings such as ``"4MiB"`` accepted)
``cb_nodes``       positive integer; more than the ranks counts as one per rank
``cb_buffer_size`` bytes, positive
``romio_cb_write`` ``enable`` / ``disable`` / ``automatic``
``romio_ds_write`` ``enable`` / ``disable`` / ``automatic`` (no effect: every modelled write
                   is contiguous, and ROMIO sieves only non-contiguous independent writes)
``cb_config_list`` ``"*:k"``: at most ``k`` aggregators per node (``"*:*"``: no limit)
``collective``     bool: the application issues collective calls (default: the pattern's)
=================  ===========================================================================

A missing column, ``NaN`` or ``None`` means the system default. The HDF5 settings of the
settings catalogue (``alignment``, ``alignment_threshold``, ``sieve_buf_size``,
``meta_block_size``, ``coll_metadata``) are accepted and have no effect in the model (the
modelled patterns write few large contiguous datasets, where they change little); any other
column is a :class:`~iotune.errors.ConfigError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from iotune.errors import ConfigError
from iotune.settings import SETTINGS, parse_bool
from iotune.sim.pattern import Pattern
from iotune.sim.system import ENABLE_WORDS, SimSystem
from iotune.units import parse_bytes

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

MODELLED_COLUMNS = (
    "stripe_count",
    "stripe_size",
    "cb_nodes",
    "cb_buffer_size",
    "romio_cb_write",
    "romio_ds_write",
    "cb_config_list",
    "collective",
)
#: Settings accepted in a configuration that the model deliberately ignores.
IGNORED_HDF5_COLUMNS = tuple(
    sorted(name for name, s in SETTINGS.items() if s.layer == "hdf5" and name != "collective")
)
#: Codes of ``romio_cb_write`` / ``romio_ds_write`` in :class:`ConfigArrays`.
DISABLE, ENABLE, AUTOMATIC = 0, 1, 2
_WORD_CODE = {"disable": DISABLE, "enable": ENABLE, "automatic": AUTOMATIC}


@dataclass(frozen=True)
class ConfigArrays:
    """Validated configurations, every array of the common broadcast ``shape``.

    Defaults are filled in; ``stripe_count`` is clamped to ``[1, ost_count]``;
    ``cb_nodes`` is the requested (or default) count before clamping to ranks;
    ``cb_write`` holds the codes ``DISABLE``/``ENABLE``/``AUTOMATIC``;
    ``per_node_cap`` is the ``cb_config_list`` limit (``inf`` when there is none).
    """

    shape: tuple[int, ...]
    stripe_count: IntArray
    stripe_size: FloatArray
    cb_nodes: IntArray
    cb_buffer_size: FloatArray
    cb_write: npt.NDArray[np.int8]
    ds_write: npt.NDArray[np.int8]
    collective: BoolArray
    per_node_cap: FloatArray


def resolve_configs(
    system: SimSystem,
    pattern: Pattern,
    configs: pd.DataFrame | Mapping[str, Any] | None,
) -> ConfigArrays:
    """Validate ``configs`` and fill in ``system``'s defaults; raises ConfigError."""
    columns = _columns(configs)
    for name in columns:
        if name not in MODELLED_COLUMNS and name not in IGNORED_HDF5_COLUMNS:
            raise ConfigError(
                f"configs.{name}: not modelled by the simulated backend; modelled columns: "
                f"{', '.join(MODELLED_COLUMNS)}; accepted without effect: "
                f"{', '.join(IGNORED_HDF5_COLUMNS)}"
            )
    used = {k: v for k, v in columns.items() if k in MODELLED_COLUMNS}
    try:
        arrays = np.broadcast_arrays(*used.values()) if used else []
    except ValueError:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in used.items())
        raise ConfigError(f"configs: columns do not broadcast to one shape: {shapes}") from None
    cols = dict(zip(used, arrays, strict=True))
    shape: tuple[int, ...] = arrays[0].shape if arrays else ()
    d = system.defaults
    nodes = pattern.nodes_on(system.cores_per_node)

    count = _numeric(cols, "stripe_count", shape, float(d.stripe_count), byte_size=False)
    bad = ~((count == -1) | ((count >= 0) & (count == np.floor(count))))
    _fail_if(bad, count, "stripe_count", "is not a positive integer (or -1 for all OSTs)")
    count = np.where(count == 0, d.stripe_count, count)
    count = np.where(count == -1, system.ost_count, count)
    stripe_count = np.clip(count, 1, system.ost_count).astype(np.int64)

    stripe_size = _numeric(cols, "stripe_size", shape, float(d.stripe_size), byte_size=True)
    _fail_if((stripe_size <= 0) | (stripe_size % 65536 != 0), stripe_size, "stripe_size",
             "is not a positive multiple of 64 KiB (Lustre's rule)")

    cb_buffer = _numeric(cols, "cb_buffer_size", shape, float(d.cb_buffer_size), byte_size=True)
    _fail_if((cb_buffer <= 0) | (cb_buffer != np.floor(cb_buffer)), cb_buffer,
             "cb_buffer_size", "is not a positive whole number of bytes")

    cb_raw = _numeric(cols, "cb_nodes", shape, np.nan, byte_size=False)
    present = ~np.isnan(cb_raw)
    _fail_if(present & ((cb_raw <= 0) | (cb_raw != np.floor(cb_raw))), cb_raw, "cb_nodes",
             "is not a positive integer")
    if d.cb_nodes == "stripe_count":
        rule = stripe_count.astype(np.float64)
    elif d.cb_nodes == "nodes":
        rule = np.full(shape, float(nodes))
    else:
        rule = np.full(shape, float(d.cb_nodes))
    cb_nodes = np.where(present, cb_raw, rule).astype(np.int64)

    cb_write = _words(cols, "romio_cb_write", shape, d.romio_cb_write)
    ds_write = _words(cols, "romio_ds_write", shape, d.romio_ds_write)
    collective = _bools(cols, "collective", shape, pattern.is_collective)
    cap = _cb_config_list(cols, shape)
    return ConfigArrays(
        shape=shape,
        stripe_count=np.broadcast_to(stripe_count, shape),
        stripe_size=np.broadcast_to(stripe_size, shape),
        cb_nodes=np.broadcast_to(cb_nodes, shape),
        cb_buffer_size=np.broadcast_to(cb_buffer, shape),
        cb_write=cb_write,
        ds_write=ds_write,
        collective=collective,
        per_node_cap=cap,
    )


def _columns(configs: pd.DataFrame | Mapping[str, Any] | None) -> dict[str, Any]:
    if configs is None:
        return {}
    if isinstance(configs, pd.DataFrame):
        return {str(k): configs[k].to_numpy() for k in configs.columns}
    if isinstance(configs, Mapping):
        return {str(k): np.asarray(v) for k, v in configs.items()}
    raise ConfigError(
        f"configs: expected a pandas DataFrame or a mapping of columns, got "
        f"{type(configs).__name__}"
    )


def _numeric(cols: Mapping[str, Any], name: str, shape: tuple[int, ...], default: float,
             *, byte_size: bool) -> FloatArray:
    """Column ``name`` as float64 of ``shape`` with missing values replaced by ``default``."""
    if name not in cols:
        return np.full(shape, default)
    raw = cols[name]
    if raw.dtype.kind in "biuf":
        if raw.dtype.kind == "b":
            _fail_first(name, raw.flat[0] if raw.size else raw, "is not a number")
        values = raw.astype(np.float64)
    else:
        values = _per_unique(raw, lambda item: _scalar(item, name, byte_size), np.nan)
    _fail_if(np.isinf(values), values, name, "is not finite")
    return np.where(np.isnan(values), default, values)


def _scalar(item: Any, name: str, byte_size: bool) -> float:
    if item is None or (isinstance(item, float) and np.isnan(item)):
        return np.nan
    if isinstance(item, bool | np.bool_):
        _fail_first(name, item, "is not a number")
    if isinstance(item, int | float | np.integer | np.floating):
        return float(item)
    if isinstance(item, str) and byte_size:
        try:
            return float(parse_bytes(item))
        except ValueError as exc:
            raise ConfigError(f"configs.{name}: {exc}") from None
    if isinstance(item, str):
        try:
            return float(item)
        except ValueError:
            pass
    _fail_first(name, item, "is not a number")
    return np.nan  # pragma: no cover - _fail_first raises


def _words(cols: Mapping[str, Any], name: str, shape: tuple[int, ...],
           default: str) -> npt.NDArray[np.int8]:
    if name not in cols:
        return np.full(shape, _WORD_CODE[default], dtype=np.int8)
    def code(item: Any) -> float:
        if isinstance(item, str) and item.lower() in _WORD_CODE:
            return float(_WORD_CODE[item.lower()])
        raise ConfigError(f"configs.{name}: {item!r} is not one of {', '.join(ENABLE_WORDS)}")

    codes = _per_unique(cols[name], code, float(_WORD_CODE[default]))
    return codes.astype(np.int8)


def _bools(cols: Mapping[str, Any], name: str, shape: tuple[int, ...], default: bool) -> BoolArray:
    if name not in cols:
        return np.full(shape, default, dtype=np.bool_)
    raw = cols[name]
    if raw.dtype.kind == "b":
        return raw.astype(np.bool_)

    def parse(item: Any) -> float:
        parsed = parse_bool(item.item() if isinstance(item, np.generic) else item)
        if parsed is None:
            raise ConfigError(f"configs.{name}: {item!r} is not a boolean (true/false, yes/no)")
        return float(parsed)

    return _per_unique(raw, parse, float(default)).astype(np.bool_)


def _cb_config_list(cols: Mapping[str, Any], shape: tuple[int, ...]) -> FloatArray:
    if "cb_config_list" not in cols:
        return np.full(shape, np.inf)

    def limit(item: Any) -> float:
        host, _, per = str(item).strip().partition(":")
        if host != "*" or not (per == "*" or (per.isdigit() and int(per) > 0)):
            raise ConfigError(
                f"configs.cb_config_list: {item!r} is not of the form '*:k' (k a positive "
                "integer or '*'); the model does not place aggregators on named hosts"
            )
        return np.inf if per == "*" else float(per)

    return _per_unique(cols["cb_config_list"], limit, np.inf)


def _per_unique(raw: npt.NDArray[Any], convert: Callable[[Any], float],
                missing: float) -> FloatArray:
    """Apply ``convert`` once per distinct value of ``raw``; ``None``/``NaN`` become ``missing``.

    ``convert`` raises ConfigError for a bad value. Distinct values are found with
    ``pandas.factorize``, so a column of 10^5 repeated strings costs a few milliseconds.
    """
    codes, uniques = pd.factorize(pd.Series(raw.ravel(), dtype=object), use_na_sentinel=True)
    table = np.array([convert(item) for item in uniques] + [missing], dtype=np.float64)
    return table[codes].reshape(raw.shape)


def _fail_if(bad: npt.NDArray[np.bool_], values: FloatArray, name: str, rule: str) -> None:
    if np.any(bad):
        index = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
        value = float(values[index])
        at = tuple(int(i) for i in index)
        where = f" (row {at[0]})" if len(at) == 1 else (f" (at {at})" if at else "")
        shown: float | int = int(value) if np.isfinite(value) and value.is_integer() else value
        raise ConfigError(f"configs.{name}: {shown!r}{where} {rule}")


def _fail_first(name: str, item: Any, rule: str) -> None:
    raise ConfigError(f"configs.{name}: {item!r} {rule}")
