"""Whether the settings a run asked for took effect, read from what the run recorded.

A measured run records what it could read back:

- ``result.hints_in_effect``: the MPI-IO hints of its file (``MPI_File_get_info``), from the
  kernels or, for a user's program, the preload library: those of the open that moved the
  data (the most bytes, then the largest communicator), described by ``result.data_open``
  with how many ranks wrote through it (None: no open moved data, so nothing read back
  shows the hints the I/O had);
- the striping: ``result.filesystem.striping`` (kernels) or ``result.striping`` (a user's
  program): not applicable off Lustre, else the ``lfs getstripe -d`` layout when it was read;
- ``result.hdf5_settings_in_effect``: the HDF5 file-access settings of the open file;
- under Open MPI, whose ``MPI_File_get_info`` returns the hints given rather than those
  used: the MPI-IO layer asked for (``mpi_io``) and, from the preload library, how many
  ranks wrote to the file system during the MPI-IO writes, which shows whether collective
  buffering (``romio_cb_write``, ``cb_nodes``) took effect.

:func:`setting_effects` turns that into one :class:`SettingEffect` per requested setting.
A value matches when equal as text (ignoring case and blanks) or as an integer (ROMIO
reports sizes in bytes, as iotune sends them). The statuses:

``in_effect``
    read back with the requested value;
``differs``
    read back with another value (the library clamped or replaced it);
``absent``
    the file does not report the hint: the MPI library ignored it (Open MPI's OMPIO ignores
    ROMIO's hints) or does not know the name;
``not_applicable``
    the setting cannot act here (striping off Lustre);
``unverified``
    nothing was read back for it (simulated and replayed runs, a program run without the
    preload library), no open moved data, the opens that moved the most data read back
    different values, or the witnesses disagree: for ``cb_nodes`` with
    ``romio_cb_write=enable`` the ranks that wrote to the file inside the collective writes
    (the aggregators) are a second witness beside the value read back, and a count other
    than that value (at most the communicator's size) leaves it unverified rather than
    wrongly ``differs``.

``absent`` and ``not_applicable`` mean the setting changes nothing on this system: a tune
stops varying it and never recommends it (:mod:`iotune.tune`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iotune.settings.catalogue import HINT_PREFIX, SETTINGS, mpiio_hints

IN_EFFECT, DIFFERS, ABSENT, NOT_APPLICABLE, UNVERIFIED = (
    "in_effect", "differs", "absent", "not_applicable", "unverified")
#: Statuses that show a setting changes nothing on the system the run was on.
IGNORED = frozenset({ABSENT, NOT_APPLICABLE})
#: Where a Lustre setting is found in ``lfs getstripe -d`` output.
LAYOUT_FIELDS = {"stripe_count": "stripe_count", "stripe_size": "stripe_size"}
#: HDF5 settings as the kernels read them back (``coll_metadata`` is two properties).
HDF5_READ_BACK = {"coll_metadata": ("coll_metadata_ops", "coll_metadata_write")}


@dataclass(frozen=True)
class SettingEffect:
    """What became of one requested setting: ``status`` (module docstring), the
    ``requested`` and ``in_effect`` values as text, and ``detail`` (why, when known)."""

    setting: str
    status: str
    requested: str
    in_effect: str | None = None
    detail: str = ""

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "requested": self.requested,
                               "in_effect": self.in_effect}
        if self.detail:
            out["detail"] = self.detail
        return out

    @classmethod
    def from_json(cls, setting: str, value: Mapping[str, Any]) -> SettingEffect:
        return cls(setting, str(value.get("status", UNVERIFIED)),
                   str(value.get("requested", "")),
                   None if value.get("in_effect") is None else str(value["in_effect"]),
                   str(value.get("detail") or ""))


def same_hint_value(requested: str, in_effect: str) -> bool:
    """Whether a value read back as ``in_effect`` is the ``requested`` one."""
    a, b = str(requested).strip(), str(in_effect).strip()
    if a.lower() == b.lower():
        return True
    try:
        return int(a) == int(b)
    except ValueError:
        return False


def compare_hints(requested: Mapping[str, str], in_effect: Mapping[str, str]
                  ) -> dict[str, tuple[str, str | None]]:
    """The ``requested`` hints that ``in_effect`` does not show: hint name -> (requested
    value, value in effect or None when absent)."""
    missing: dict[str, tuple[str, str | None]] = {}
    for hint, wanted in requested.items():
        got = in_effect.get(hint)
        if got is None or not same_hint_value(wanted, got):
            missing[hint] = (wanted, got)
    return missing


def hints_not_in_effect(settings: Mapping[str, Any], in_effect: Mapping[str, str]
                        ) -> dict[str, tuple[str, str | None]]:
    """:func:`compare_hints` for the hints of canonical ``settings``; empty when
    ``in_effect`` is empty (the run read nothing back, e.g. a simulated run)."""
    if not in_effect:
        return {}
    return compare_hints(mpiio_hints(settings), in_effect)


def describe_not_in_effect(missing: Mapping[str, tuple[str, str | None]]) -> str:
    """One line for a table cell: ``cb_nodes=4 (in effect: 1), striping_factor=4 (absent)``."""
    return ", ".join(f"{hint}={wanted} ({'absent' if got is None else 'in effect: ' + got})"
                     for hint, (wanted, got) in missing.items())


def row_not_in_effect(settings: Mapping[str, Any], statuses: Mapping[str, str],
                      hints: Mapping[str, str]) -> str:
    """One table cell for a stored run: its settings that did not take effect, as
    ``name=requested (absent | not applicable | in effect: value)``. ``statuses`` are the
    ones the run recorded (``effect.<setting>`` columns), which also cover what hints read
    back cannot show (Open MPI echoes them); a run that recorded none is judged from
    ``hints`` alone."""
    if not statuses:
        return describe_not_in_effect(hints_not_in_effect(settings, hints))
    derived = setting_effects(settings, {"hints_in_effect": hints})
    parts = []
    for name, status in statuses.items():
        if status not in (ABSENT, NOT_APPLICABLE, DIFFERS) or name not in derived:
            continue
        effect = derived[name]
        shown = {ABSENT: "absent", NOT_APPLICABLE: "not applicable"}.get(status) or (
            f"in effect: {effect.in_effect}" if effect.status == DIFFERS else "another value")
        parts.append(f"{name}={effect.requested} ({shown})")
    return ", ".join(parts)


def setting_effects(settings: Mapping[str, Any], result: Mapping[str, Any] | None
                    ) -> dict[str, SettingEffect]:
    """One :class:`SettingEffect` per setting of canonical ``settings``, from a run's
    ``result`` (module docstring); every one ``unverified`` when ``result`` is None."""
    result = result or {}
    hints = {str(k): str(v) for k, v in (result.get("hints_in_effect") or {}).items()}
    echo = open_mpi_layer(result)
    moved = _data_open(result)
    if moved is None:  # no open moved data: its hints say nothing of the I/O
        hints = {}
    disputed = (moved.get("hints_disputed") or ()) if isinstance(moved, Mapping) else ()
    striping = _striping(result)
    hdf5 = result.get("hdf5_settings_in_effect") or {}
    effects = {}
    for name, value in settings.items():
        setting = SETTINGS.get(name)
        text = str(value) if setting is None else setting.to_argument(value)
        if setting is None or setting.layer == "mpiio":
            hint = name[len(HINT_PREFIX):] if setting is None else str(setting.hint)
            if moved is None or hint in disputed:
                effects[name] = SettingEffect(name, UNVERIFIED, text, detail=(
                    NO_DATA_OPEN if moved is None else DISPUTED))
            elif echo:
                effects[name] = _open_mpi_effect(name, text, echo, settings, _writes(result))
            else:
                effects[name] = _aggregator_witness(_hint_effect(name, hint, text, hints),
                                                    hint, hints, moved)
        elif setting.layer == "lustre":
            effects[name] = _lustre_effect(name, text, striping, {} if echo else hints)
        elif setting.layer == "hdf5":
            effects[name] = _hdf5_effect(name, text, hdf5)
        elif name == "collective" and "collective" in result:
            effects[name] = _compare(name, text, setting.to_argument(result["collective"]))
        else:
            effects[name] = SettingEffect(name, UNVERIFIED, text)
    return effects


#: What Open MPI's layers do with ROMIO's hints (measured: docs/mpi-libraries.md).
OMPIO_IGNORES = ("Open MPI's own MPI-IO layer (OMPIO) does not use ROMIO's hints; "
                 "system.mpi_io: romio selects ROMIO")
NO_DATA_OPEN = ("no file opened through MPI-IO moved data, so no open shows the hints the "
                "I/O had")
DISPUTED = "the opens that moved the most data read back different values"
ROMIO_UNREAD = ("Open MPI's MPI_File_get_info returns the hints given, not those used, "
                "and who wrote to the file system does not tell for this one")


def open_mpi_layer(result: Mapping[str, Any]) -> str | None:
    """``ompio`` or ``romio`` for a run under Open MPI (whose ``MPI_File_get_info`` echoes
    the hints given, so they are no evidence), else None. ROMIO when ``OMPI_MCA_io``
    (``result.mpi_io``, or the preload library's) names it or excludes OMPIO."""
    found = result.get("preload")
    preload: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    library = str(result.get("mpi_library") or preload.get("mpi_library") or "")
    if "open mpi" not in library.lower():
        return None
    layer = str(result.get("mpi_io") or preload.get("mpi_io") or "")
    if "romio" in layer or (layer.startswith("^") and "ompio" in layer):
        return "romio"
    return "ompio"


def _open_mpi_effect(name: str, requested: str, layer: str, settings: Mapping[str, Any],
                     writes: Mapping[str, Any]) -> SettingEffect:
    if layer != "romio":
        return SettingEffect(name, ABSENT, requested, detail=OMPIO_IGNORES)
    judged = _judged_by_writers(name, requested, settings, writes)
    return judged or SettingEffect(name, UNVERIFIED, requested, detail=ROMIO_UNREAD)


def _data_open(result: Mapping[str, Any]) -> Mapping[str, Any] | bool | None:
    """``result.data_open`` (:mod:`iotune.preload.report`): a mapping, None when no open
    moved data, False when the run did not record opens (a kernel, an older report)."""
    if "data_open" not in result:
        return False
    found = result["data_open"]
    return found if isinstance(found, Mapping) else None


def _aggregators_wrote(cb_nodes: int, ranks: int, writers: int) -> bool:
    """Whether ``writers`` ranks writing to the file is what ``cb_nodes`` aggregators give
    among ``ranks`` with ``romio_cb_write=enable``: only the aggregators write, and there
    are min(cb_nodes, ranks) of them."""
    return writers == min(cb_nodes, ranks)


def _aggregator_witness(effect: SettingEffect, hint: str, hints: Mapping[str, str],
                        moved: Mapping[str, Any] | bool) -> SettingEffect:
    """``effect`` of the ``cb_nodes`` hint read back, checked against the second witness
    where it applies: with ``romio_cb_write=enable`` in effect, only the aggregators write
    to the file inside collective writes, so the ranks that did are min(cb_nodes, ranks).
    Agreement keeps ``effect`` (saying what was seen); disagreement makes it unverified."""
    if (hint != "cb_nodes" or effect.status not in (IN_EFFECT, DIFFERS)
            or not isinstance(moved, Mapping)
            or str(hints.get("romio_cb_write", "")).lower() != "enable"):
        return effect
    ranks, collective = moved.get("comm_size"), moved.get("ranks_writing_collectively")
    writers = moved.get("ranks_writing_to_files_collectively")
    if not (isinstance(ranks, int) and isinstance(collective, int)
            and isinstance(writers, int)) or ranks < 2 or collective < 1 or writers < 1:
        return effect
    try:
        cb_nodes = int(str(effect.in_effect))
    except ValueError:
        return effect
    seen = f"{writers} of {ranks} ranks wrote to the file inside collective writes"
    if _aggregators_wrote(cb_nodes, ranks, writers):
        return SettingEffect(effect.setting, effect.status, effect.requested,
                             effect.in_effect, f"{effect.detail}; {seen}".lstrip("; "))
    return SettingEffect(effect.setting, UNVERIFIED, effect.requested, None,
                         f"read back {effect.in_effect}, but {seen}: the witnesses disagree")


def _writes(result: Mapping[str, Any]) -> Mapping[str, Any]:
    """Who wrote to the file system during MPI-IO writes (the preload library's count):
    through the open that moved the data when the run recorded opens, else overall."""
    moved = _data_open(result)
    if isinstance(moved, Mapping):
        return {"ranks_writing_mpi_io": moved.get("ranks_writing"),
                "ranks_writing_to_files": moved.get("ranks_writing_to_files")}
    preload = result.get("preload")
    found = preload.get("file_system_writes") if isinstance(preload, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _judged_by_writers(name: str, requested: str, settings: Mapping[str, Any],
                       writes: Mapping[str, Any]) -> SettingEffect | None:
    """``romio_cb_write`` and ``cb_nodes`` judged by how many ranks wrote to the file
    system during the MPI-IO writes (collective buffering leaves it to the aggregators),
    where the hints cannot be read back; None when that cannot tell.

    - ``romio_cb_write=disable``: every rank that wrote through MPI-IO writes itself;
    - ``romio_cb_write=enable``: fewer ranks write, unless ``cb_nodes`` allows them all;
    - ``cb_nodes=k`` with ``romio_cb_write=enable``: exactly min(k, ranks) ranks write.
    """
    data, writers = writes.get("ranks_writing_mpi_io"), writes.get("ranks_writing_to_files")
    if not isinstance(data, int) or not isinstance(writers, int) or data < 2 or writers < 1:
        return None
    seen = f"{writers} of {data} ranks wrote to the file system"
    cb_nodes = settings.get("cb_nodes")
    enabled = str(settings.get("romio_cb_write", "")).lower() == "enable"
    if name == "romio_cb_write" and requested.lower() == "disable":
        ok = writers == data
    elif name == "romio_cb_write" and enabled:
        if isinstance(cb_nodes, int) and cb_nodes >= data:
            return None
        ok = writers < data
    elif name == "cb_nodes" and enabled and isinstance(cb_nodes, int):
        status = IN_EFFECT if _aggregators_wrote(cb_nodes, data, writers) else DIFFERS
        return SettingEffect(name, status, requested, str(writers), seen)
    else:
        return None
    return SettingEffect(name, IN_EFFECT if ok else DIFFERS, requested,
                         requested if ok else seen, seen)


def _compare(name: str, requested: str, got: str | None, detail: str = "") -> SettingEffect:
    if got is None:
        return SettingEffect(name, ABSENT, requested, None, detail)
    status = IN_EFFECT if same_hint_value(requested, got) else DIFFERS
    return SettingEffect(name, status, requested, got, detail if status != IN_EFFECT else "")


def _hint_effect(name: str, hint: str, requested: str, hints: Mapping[str, str]
                 ) -> SettingEffect:
    if not hints:
        return SettingEffect(name, UNVERIFIED, requested)
    return _compare(name, requested, hints.get(hint), f"MPI-IO hint {hint}")


def _striping(result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    filesystem = result.get("filesystem")
    if isinstance(filesystem, Mapping) and isinstance(filesystem.get("striping"), Mapping):
        return filesystem["striping"]
    striping = result.get("striping")
    return striping if isinstance(striping, Mapping) else None


def _lustre_effect(name: str, requested: str, striping: Mapping[str, Any] | None,
                   hints: Mapping[str, str]) -> SettingEffect:
    if striping is not None and striping.get("applicable") is False:
        return SettingEffect(name, NOT_APPLICABLE, requested,
                             detail=str(striping.get("reason") or "not a Lustre file system"))
    layout = str((striping or {}).get("layout") or "")
    found = re.search(rf"{LAYOUT_FIELDS[name]}:\s*(-?\d+)", layout)
    if found:
        return _compare(name, requested, found.group(1), "lfs getstripe")
    hint = SETTINGS[name].hint
    if hints and hint and hint in hints:
        return _compare(name, requested, hints[hint], f"MPI-IO hint {hint}")
    return SettingEffect(name, UNVERIFIED, requested)


def _hdf5_effect(name: str, requested: str, hdf5: Mapping[str, Any]) -> SettingEffect:
    keys = HDF5_READ_BACK.get(name, (name,))
    values = [hdf5.get(key) for key in keys]
    if any(v is None for v in values):
        return SettingEffect(name, UNVERIFIED, requested)
    texts = {SETTINGS[name].to_argument(v) for v in values}
    got = texts.pop() if len(texts) == 1 else ",".join(str(v) for v in values)
    return _compare(name, requested, got, "HDF5 file-access property list")


def effects_of(settings: Mapping[str, Any], result: Mapping[str, Any] | None
               ) -> dict[str, SettingEffect]:
    """The effects a record's result holds (``result.settings_effect``), else derived from
    what it read back (:func:`setting_effects`)."""
    stored = (result or {}).get("settings_effect")
    if isinstance(stored, Mapping) and all(isinstance(stored.get(n), Mapping)
                                           for n in settings):
        return {name: SettingEffect.from_json(name, stored[name]) for name in settings}
    return setting_effects(settings, result)


def likely_reason(effect: SettingEffect, result: Mapping[str, Any] | None) -> str:
    """Why ``effect`` did not take effect, in words a user can act on."""
    result = result or {}
    hints = result.get("hints_in_effect") or {}
    if effect.status == NOT_APPLICABLE:
        return f"{effect.detail}: it has no effect here" if effect.detail else "no effect here"
    if effect.detail in (OMPIO_IGNORES, ROMIO_UNREAD):
        return effect.detail
    if effect.status == ABSENT:
        if effect.setting.startswith(HINT_PREFIX):
            return ("the MPI library does not report this hint: unknown to it (a misspelt "
                    "name?) or ignored by its file-system driver")
        driver = hints.get("romio_filesystem_type")
        return ("the MPI library ignored it" + (f" (its file-system driver: {driver})"
                                               if driver else ""))
    if effect.status == DIFFERS:
        return (f"the library used {effect.in_effect} instead (it clamps or replaces some "
                "values, e.g. cb_nodes above what cb_config_list allows)")
    return ""

