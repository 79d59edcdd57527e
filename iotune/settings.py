"""The catalogue of tunable I/O settings: their names, types, layers and how they are applied.

A *setting* is one tunable knob by its iotune name (``stripe_count``, ``cb_nodes``, ...).
Every kernel takes each setting as ``--<name-with-dashes> VALUE``; ``hint.<key>`` passes
any other MPI-IO hint as ``--hint key=value``. Values are validated and normalised here
once (``"4MiB"`` becomes ``4194304``), so the rest of iotune sees canonical values only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iotune.errors import ConfigError
from iotune.units import format_bytes, positive_bytes

ENABLE_WORDS = ("enable", "disable", "automatic")


@dataclass(frozen=True)
class Setting:
    """One tunable knob.

    ``kind`` is one of ``count`` (positive integer), ``bytes`` (positive byte size),
    ``choice`` (one of ``choices``), ``bool`` or ``text``. ``hint`` is the MPI-IO hint it
    becomes, if any; ``numeric`` settings enter the performance model as numbers.
    """

    name: str
    layer: str
    kind: str
    help: str
    hint: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def numeric(self) -> bool:
        return self.kind in ("count", "bytes")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("stripe_count", "lustre", "count", "Lustre stripe count (OSTs per file)",
                hint="striping_factor"),
        Setting("stripe_size", "lustre", "bytes", "Lustre stripe size", hint="striping_unit"),
        Setting("cb_nodes", "mpiio", "count", "collective-buffering aggregators",
                hint="cb_nodes"),
        Setting("cb_buffer_size", "mpiio", "bytes", "collective buffer size per aggregator",
                hint="cb_buffer_size"),
        Setting("romio_cb_write", "mpiio", "choice", "collective buffering for writes",
                hint="romio_cb_write", choices=ENABLE_WORDS),
        Setting("romio_ds_write", "mpiio", "choice", "data sieving for writes",
                hint="romio_ds_write", choices=ENABLE_WORDS),
        Setting("cb_config_list", "mpiio", "text", "aggregator placement, e.g. '*:1'",
                hint="cb_config_list"),
        Setting("alignment", "hdf5", "bytes", "HDF5 object alignment (H5Pset_alignment)"),
        Setting("alignment_threshold", "hdf5", "bytes",
                "objects at least this large are aligned"),
        Setting("sieve_buf_size", "hdf5", "bytes", "HDF5 sieve buffer size"),
        Setting("meta_block_size", "hdf5", "bytes", "HDF5 metadata block size"),
        Setting("coll_metadata", "hdf5", "bool", "collective HDF5 metadata operations"),
        Setting("collective", "hdf5", "bool", "collective (not independent) data writes"),
    )
}

HINT_PREFIX = "hint."


def known_setting_names() -> list[str]:
    """Every valid setting name, for messages; ``hint.<key>`` is valid too."""
    return [*SETTINGS, HINT_PREFIX + "<key>"]


def normalise_setting(name: str, value: Any, where: str = "") -> Any:
    """Validate ``value`` for setting ``name`` and return its canonical form.

    Raises ConfigError naming ``where`` (a key path such as ``space.cb_nodes``, defaults to
    the setting name) and the rule that was broken.
    """
    where = where or name
    if name.startswith(HINT_PREFIX):
        if not name[len(HINT_PREFIX):] or " " in name:
            raise ConfigError(f"{where}: '{name}' is not a valid hint name ('hint.<key>')")
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)
    setting = SETTINGS.get(name)
    if setting is None:
        raise ConfigError(
            f"{where}: unknown setting '{name}'; known settings: {', '.join(known_setting_names())}"
        )
    return _normalise_value(setting, value, where)


def _normalise_value(setting: Setting, value: Any, where: str) -> Any:
    if setting.kind == "count":
        number = _as_int(value)
        if number is None or number <= 0:
            raise ConfigError(f"{where}: {value!r} is not a positive integer")
        return number
    if setting.kind == "bytes":
        return positive_bytes(value, where)
    if setting.kind == "choice":
        if not isinstance(value, str) or value.lower() not in setting.choices:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(setting.choices)}")
        return value.lower()
    if setting.kind == "bool":
        parsed = parse_bool(value)
        if parsed is None:
            raise ConfigError(f"{where}: {value!r} is not a boolean (true/false, yes/no)")
        return parsed
    if not isinstance(value, str | int) or isinstance(value, bool) or str(value) == "":
        raise ConfigError(f"{where}: {value!r} is not a non-empty string")
    return str(value)


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def parse_bool(value: Any) -> bool | None:
    """``True``/``False`` for the usual spellings (yes/no, true/false, on/off, 1/0), else None."""
    if isinstance(value, bool):
        return value
    words = {"yes": True, "true": True, "on": True, "1": True,
             "no": False, "false": False, "off": False, "0": False}
    if isinstance(value, int | str):
        return words.get(str(value).strip().lower())
    return None


def normalise_settings(settings: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """Normalise every setting of a mapping; key paths are ``<where>.<name>``."""
    prefix = f"{where}." if where else ""
    return {name: normalise_setting(name, value, prefix + name) for name, value in settings.items()}


def setting_argv(settings: Mapping[str, Any]) -> list[str]:
    """The kernel command-line arguments that apply ``settings`` (canonical values)."""
    argv: list[str] = []
    for name, value in settings.items():
        if name.startswith(HINT_PREFIX):
            argv += ["--hint", f"{name[len(HINT_PREFIX):]}={value}"]
        elif isinstance(value, bool):
            argv += [SETTINGS[name].flag, "yes" if value else "no"]
        else:
            argv += [SETTINGS[name].flag, str(value)]
    return argv


def mpiio_hints(settings: Mapping[str, Any]) -> dict[str, str]:
    """The MPI-IO hints (ROMIO names, string values) that ``settings`` stand for."""
    hints: dict[str, str] = {}
    for name, value in settings.items():
        if name.startswith(HINT_PREFIX):
            hints[name[len(HINT_PREFIX):]] = str(value)
        elif SETTINGS[name].hint:
            hints[str(SETTINGS[name].hint)] = str(value)
    return hints


def describe_value(name: str, value: Any) -> str:
    """A value as a person reads it: byte sizes in binary units, booleans as yes/no."""
    setting = SETTINGS.get(name)
    if setting is not None and setting.kind == "bytes" and isinstance(value, int):
        return format_bytes(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def config_key(kernel: str, cores: int, settings: Mapping[str, Any],
               params: Mapping[str, Any]) -> str:
    """A stable 16-hex-digit key of one configuration at one scale.

    Equal for equal canonical values whatever the order of keys; used to find repetitions of
    a configuration in the store and to skip finished work on resume.
    """
    canonical = json.dumps(
        {"kernel": kernel, "cores": int(cores), "settings": dict(settings), "params": dict(params)},
        sort_keys=True, separators=(",", ":"), default=str,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
