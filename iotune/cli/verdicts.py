"""What ``run`` and ``tune`` print about the settings that did not, or may not, take effect.

The verdicts themselves (:mod:`iotune.settings.in_effect`) are in every measured record;
this module turns them into lines a person reads on the screen, each with what can be
done about it. Every setting a measured run asked for whose status is ``absent``,
``not_applicable``, ``differs`` or ``unverified`` is shown; simulated and replayed runs
read nothing back (their records say so), so they have no verdicts to show.

An HDF5 setting that a user's program could not receive because the program links HDF5
statically (:mod:`iotune.execution.linkage`) is named as such, with the fix: link HDF5
shared, so the preload library's ``H5Fcreate``/``H5Fopen`` are the ones called.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from iotune.execution.linkage import static_hdf5_program
from iotune.settings.catalogue import SETTINGS
from iotune.settings.in_effect import (
    ABSENT,
    DIFFERS,
    NOT_APPLICABLE,
    UNVERIFIED,
    SettingEffect,
    effects_of,
    likely_reason,
)
from iotune.settings.values import describe_value

#: The statuses shown: everything but ``in_effect``.
SHOWN = (ABSENT, NOT_APPLICABLE, DIFFERS, UNVERIFIED)
#: What a program linking HDF5 statically should do instead.
LINK_SHARED = ("link HDF5 shared (e.g. configure IOR with CC=mpicc and -L to the shared "
               "parallel HDF5, not CC=h5pcc)")


def _layer(name: str) -> str:
    setting = SETTINGS.get(name)
    return "mpiio" if setting is None else str(setting.layer)


def unverified_reason(effect: SettingEffect, record: Mapping[str, Any]) -> str:
    """Why nothing was read back for ``effect`` (an ``unverified`` one) in ``record``, in
    words a user can act on."""
    if effect.detail:
        return effect.detail
    result = record.get("result") or {}
    report = result.get("preload")
    is_program = "preloaded" in result  # a user's program (the command kernel)
    layer = _layer(effect.setting)
    if is_program and not result.get("preloaded"):
        return ("the program ran without the preload library, which alone applies and reads "
                "back settings inside it (kernel preload: auto builds it with "
                "'python -m iotune.preload')")
    if is_program and not isinstance(report, Mapping):
        return ("the preload library wrote no report (does the program call MPI_Finalize?)")
    if layer == "hdf5":
        static = static_hdf5_program(record.get("command") or [])
        if static:
            return (f"{static} links HDF5 statically, which the preload library cannot reach; "
                    f"{LINK_SHARED}")
        if is_program:
            return ("the preload library saw no H5Fcreate/H5Fopen: the program does not use "
                    f"HDF5, or links it statically (then {LINK_SHARED})")
        return "the run did not read the HDF5 file-access settings back"
    if layer == "lustre":
        return "the striping could not be read back (lfs getstripe)"
    if not result.get("hints_in_effect"):
        return "no file's MPI-IO hints were read back (the program opened none through MPI-IO)"
    return "nothing was read back for it"


def _value_text(name: str, text: str | None) -> str:
    """A value read back (text) as ``describe_value`` shows the setting's values."""
    if text is None:
        return "none"
    setting = SETTINGS.get(name)
    if setting is not None and setting.kind == "bytes" and text.strip().isdigit():
        return describe_value(name, int(text))
    return text


def effect_parts(effect: SettingEffect, value: Any, record: Mapping[str, Any]
                 ) -> tuple[str, str]:
    """One verdict as what happened (``cb_nodes=2: in effect 1``, ``alignment=1MiB:
    unverified``) and why ("" when not known)."""
    name = effect.setting
    shown = {ABSENT: "not in effect", NOT_APPLICABLE: "not applicable",
             DIFFERS: f"in effect {_value_text(name, effect.in_effect)}",
             UNVERIFIED: "unverified"}.get(effect.status, effect.status)
    why = (unverified_reason(effect, record) if effect.status == UNVERIFIED
           else likely_reason(effect, record.get("result")))
    return f"{name}={describe_value(name, value)}: {shown}", why


def effect_text(effect: SettingEffect, value: Any, record: Mapping[str, Any]) -> str:
    """One verdict as a line: ``cb_nodes=2: in effect 1; why``."""
    what, why = effect_parts(effect, value, record)
    return f"{what}; {why}" if why else what


def _measured(record: Mapping[str, Any]) -> bool:
    return record.get("status") == "ok" and record.get("provenance") == "measured"


def run_verdicts(record: Mapping[str, Any]) -> dict[str, str]:
    """The pairs ``run`` prints for one record: ``not in effect: NAME`` (absent, not
    applicable or another value) and ``unverified: NAME``, each with its line."""
    if not _measured(record):
        return {}
    settings = record.get("settings") or {}
    out = {}
    for name, effect in effects_of(settings, record.get("result")).items():
        if effect.status in SHOWN:
            label = "unverified" if effect.status == UNVERIFIED else "not in effect"
            out[f"{label}: {name}"] = effect_text(effect, settings[name], record)
    return out


def hdf5_in_effect(result: Mapping[str, Any]) -> dict[str, str]:
    """The HDF5 file-access settings a run read back, as ``describe_value`` shows them."""
    found = result.get("hdf5_settings_in_effect") or {}
    return {str(k): describe_value(str(k), v) for k, v in found.items()}


def tune_verdicts(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per setting value and verdict over a tune's measured runs, e.g.
    ``cb_nodes=2: in effect 1 in 16 of 16 runs that asked it; why``; none when every
    setting took effect."""
    asked: Counter[str] = Counter()
    seen: Counter[tuple[str, str, str]] = Counter()
    for record in records:
        if not _measured(record):
            continue
        settings = record.get("settings") or {}
        for name, effect in effects_of(settings, record.get("result")).items():
            asked[f"{name}={describe_value(name, settings[name])}"] += 1
            if effect.status in SHOWN:
                what, why = effect_parts(effect, settings[name], record)
                seen[(what, why, f"{name}={describe_value(name, settings[name])}")] += 1
    return sorted(f"{what} in {count} of {asked[value]} runs that asked it"
                  + (f"; {why}" if why else "")
                  for (what, why, value), count in seen.items())
