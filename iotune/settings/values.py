"""Settings as the driver sees them: catalogue values checked under a key path.

The rules of every setting live in :mod:`iotune.settings.catalogue`; this module puts the key path
in front of a broken rule (``space.cb_nodes: 0 is not a positive integer``) and raises
:class:`~iotune.errors.ConfigError`, so the rest of iotune sees canonical values only
(``"4MiB"`` becomes ``4194304``). Every kernel takes each setting as
``--<name-with-dashes> VALUE``; ``hint.<key>`` passes any other MPI-IO hint as
``--hint key=value``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from iotune.errors import ConfigError
from iotune.settings.catalogue import (
    HINT_PREFIX,
    SETTINGS,
    Kind,
    Setting,
    SettingValueError,
    known_setting_names,
    mpiio_hints,
    parse_bool,
    parse_setting,
    setting_argv,
)

__all__ = [
    "HINT_PREFIX",
    "SETTINGS",
    "Setting",
    "check_requirements",
    "config_key",
    "describe_value",
    "known_setting_names",
    "mpiio_hints",
    "normalise_setting",
    "normalise_settings",
    "normalise_value",
    "parse_bool",
    "setting_argv",
]


@contextmanager
def _under(where: str) -> Iterator[None]:
    """Turn a broken rule (SettingValueError) into ConfigError ``<where>: <rule>``."""
    try:
        yield
    except SettingValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def normalise_setting(name: str, value: Any, where: str = "") -> Any:
    """Validate ``value`` for setting ``name`` and return its canonical form.

    Raises ConfigError naming ``where`` (a key path such as ``space.cb_nodes``, defaults to
    the setting name) and the rule that was broken.
    """
    with _under(where or name):
        return parse_setting(name, value)


def normalise_value(kind: Kind, value: Any, where: str) -> Any:
    """``value`` checked by a catalogue ``kind`` (``ByteSize()`` for any positive byte
    size); ConfigError naming ``where`` and the rule otherwise."""
    with _under(where):
        return kind.parse(value)


def check_requirements(names: list[str] | tuple[str, ...], where: str = "") -> None:
    """ConfigError when a setting is given without the one it needs (``alignment_threshold``
    without ``alignment``); key paths are ``<where>.<name>``."""
    prefix = f"{where}." if where else ""
    for name in names:
        setting = SETTINGS.get(name)
        if setting is not None and setting.requires and setting.requires not in names:
            raise ConfigError(f"{prefix}{name}: needs {setting.requires} "
                              f"({setting.requires_why})")


def normalise_settings(settings: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """Normalise every setting of one configuration; key paths are ``<where>.<name>``."""
    prefix = f"{where}." if where else ""
    out = {name: normalise_setting(name, value, prefix + name) for name, value in settings.items()}
    check_requirements(list(out), where)
    return out


def describe_value(name: str, value: Any) -> str:
    """A value as a person reads it: byte sizes in binary units, booleans as yes/no."""
    setting = SETTINGS.get(name)
    if setting is not None and setting.kind == "bytes" and isinstance(value, int):
        return setting.describe(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def describe_settings(settings: Mapping[str, Any]) -> str:
    """A configuration as a person reads it: ``name=value`` each (:func:`describe_value`),
    ``defaults`` when it sets nothing."""
    return " ".join(f"{k}={describe_value(k, v)}" for k, v in settings.items()) or "defaults"


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
