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

A missing column, ``NaN`` or ``None`` means the system default. Every value obeys the rule
of its setting in :mod:`iotune.settings.catalogue` (the rule the config and the kernels apply), plus
the two Lustre spellings of ``stripe_count`` above and the ``"*:k"`` form of
``cb_config_list``, the only placement the model knows. The HDF5 settings of the catalogue
(``alignment``, ``alignment_threshold``, ``sieve_buf_size``, ``meta_block_size``,
``coll_metadata``) are checked and have no effect in the model (the modelled patterns write
few large contiguous datasets, where they change little); any other column is a
:class:`~iotune.errors.ConfigError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from iotune.errors import ConfigError
from iotune.settings.catalogue import SETTINGS, SettingValueError, settings_in_layer
from iotune.sim.system import SimSystem
from iotune.workload.pattern import Pattern

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd

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
IGNORED_HDF5_COLUMNS = tuple(sorted(s.name for s in settings_in_layer("hdf5")))
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
    """Validate ``configs`` and fill in ``system``'s defaults; raises ConfigError.

    Every value is checked with the rule of its setting in :mod:`iotune.settings.catalogue`, so a
    value the config or a kernel rejects is rejected here with the same words
    (``configs.stripe_size (row 3): 100000 is not a multiple of 64 KiB ...``).
    """
    columns = _columns(configs)
    for name in columns:
        if name not in MODELLED_COLUMNS and name not in IGNORED_HDF5_COLUMNS:
            raise ConfigError(
                f"configs.{name}: not modelled by the simulated backend; modelled columns: "
                f"{', '.join(MODELLED_COLUMNS)}; accepted without effect: "
                f"{', '.join(IGNORED_HDF5_COLUMNS)}"
            )
    for name in IGNORED_HDF5_COLUMNS:
        _column(columns, name, (), np.nan, _catalogue_number)
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

    count = _column(cols, "stripe_count", shape, float(d.stripe_count), _stripe_count)
    count = np.where(count == 0, d.stripe_count, count)
    count = np.where(count == -1, system.ost_count, count)
    stripe_count = np.clip(count, 1, system.ost_count).astype(np.int64)

    stripe_size = _column(cols, "stripe_size", shape, float(d.stripe_size), _catalogue_number)
    cb_buffer = _column(cols, "cb_buffer_size", shape, float(d.cb_buffer_size),
                        _catalogue_number)

    cb_raw = _column(cols, "cb_nodes", shape, np.nan, _catalogue_number)
    if d.cb_nodes == "stripe_count":
        rule = stripe_count.astype(np.float64)
    elif d.cb_nodes == "nodes":
        rule = np.full(shape, float(nodes))
    else:
        rule = np.full(shape, float(d.cb_nodes))
    cb_nodes = np.where(np.isnan(cb_raw), rule, cb_raw).astype(np.int64)

    cb_write = _column(cols, "romio_cb_write", shape, _WORD_CODE[d.romio_cb_write], _word_code)
    ds_write = _column(cols, "romio_ds_write", shape, _WORD_CODE[d.romio_ds_write], _word_code)
    collective = _bools(cols, shape, pattern.is_collective)
    cap = _column(cols, "cb_config_list", shape, np.inf, _per_node_limit)
    return ConfigArrays(
        shape=shape,
        stripe_count=np.broadcast_to(stripe_count, shape),
        stripe_size=np.broadcast_to(stripe_size, shape),
        cb_nodes=np.broadcast_to(cb_nodes, shape),
        cb_buffer_size=np.broadcast_to(cb_buffer, shape),
        cb_write=cb_write.astype(np.int8),
        ds_write=ds_write.astype(np.int8),
        collective=collective,
        per_node_cap=cap,
    )


def _columns(configs: pd.DataFrame | Mapping[str, Any] | None) -> dict[str, Any]:
    import pandas as pd

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


#: Converts one value of a column (plain Python, never missing) to its float code;
#: raises SettingValueError with the rule.
Convert = Callable[[str, Any], float]


def _catalogue_number(name: str, item: Any) -> float:
    return float(SETTINGS[name].parse(item))


def _stripe_count(name: str, item: Any) -> float:
    """Lustre's ``-1`` (every OST) and ``0`` (the default) on top of the catalogue's rule."""
    if item in (-1, 0) and not isinstance(item, bool):
        return float(item)
    return _catalogue_number(name, item)


def _word_code(name: str, item: Any) -> float:
    return float(_WORD_CODE[SETTINGS[name].parse(item)])


def _per_node_limit(name: str, item: Any) -> float:
    """The ``k`` of ``"*:k"`` (``inf`` for ``"*:*"``); other forms are not modelled."""
    text = SETTINGS[name].parse(item)
    host, _, per = text.partition(":")
    if host != "*" or not (per == "*" or (per.isdigit() and int(per) > 0)):
        raise SettingValueError(
            f"{item!r} is not of the form '*:k' (k a positive integer or '*'); the model "
            "does not place aggregators on named hosts")
    return np.inf if per == "*" else float(per)


def _bools(cols: Mapping[str, Any], shape: tuple[int, ...], default: bool) -> BoolArray:
    raw = cols.get("collective")
    if raw is not None and raw.dtype.kind == "b":
        return raw.astype(np.bool_)
    codes = _column(cols, "collective", shape, float(default),
                    lambda name, item: float(SETTINGS[name].parse(item)))
    return codes.astype(np.bool_)


def _column(cols: Mapping[str, Any], name: str, shape: tuple[int, ...], missing: float,
            convert: Convert) -> FloatArray:
    """Column ``name`` converted value by value, ``missing`` where it is absent, None or NaN.

    ``convert`` runs once per distinct value (found with ``pandas.factorize``, so a column
    of 10^5 repeated values costs milliseconds); a broken rule is a ConfigError naming the
    column and the first row that holds the value.
    """
    import pandas as pd

    if name not in cols:
        return np.full(shape, missing)
    raw = cols[name]
    flat = raw.ravel()
    if raw.dtype.kind not in "iuf":
        flat = pd.Series(flat, dtype=object)
    codes, uniques = pd.factorize(flat, use_na_sentinel=True)
    table = []
    for code, item in enumerate(uniques):
        try:
            table.append(convert(name, _plain(item)))
        except SettingValueError as exc:
            raise ConfigError(f"configs.{name}{_first_row(codes, code, raw.shape)}: {exc}") \
                from None
    return np.array([*table, missing], dtype=np.float64)[codes].reshape(raw.shape)


def _plain(item: Any) -> Any:
    """A numpy scalar as a Python one, integral floats as ints (as YAML would give them)."""
    if isinstance(item, np.generic):
        item = item.item()
    if isinstance(item, float) and item.is_integer():
        return int(item)
    return item


def _first_row(codes: npt.NDArray[np.intp], code: int, shape: tuple[int, ...]) -> str:
    if not shape:
        return ""
    index = np.unravel_index(int(np.argmax(codes == code)), shape)
    at = tuple(int(i) for i in index)
    return f" (row {at[0]})" if len(at) == 1 else f" (at {at})"
