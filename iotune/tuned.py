"""The tuned file: the YAML ``iotune tune -o`` writes, read back with every field checked.

:func:`read_tuned_file` is the one reader (``apply`` and ``report --tuned`` use it). A field
it does not know, a value of the wrong type or out of its rule is a ConfigError naming the
field's key path and the rule, as for a config (``cores: 0 is not a positive integer``);
a file that is not UTF-8 names the file and the byte. Only ``settings`` is required (a
hand-written file may hold nothing else); the others are checked when present. The rules,
field by field, are in docs/applications.md ("The tuned file").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

from iotune.errors import ConfigError
from iotune.inputs import load_yaml
from iotune.printable import one_line
from iotune.settings.bounds import MAX_CORES
from iotune.settings.catalogue import SAFE_KEY
from iotune.settings.values import normalise_settings

#: The version of the tuned document :meth:`iotune.tune.result.TuneResult.to_tuned` writes;
#: a file of another version is refused.
TUNED_SCHEMA_VERSION = 1
#: What ``recommendation`` may say.
RECOMMENDATIONS = ("tuned", "default", "undecided")
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")

Check = Callable[[Any, str], None]


def read_tuned_file(path: Path) -> dict[str, Any]:
    """The tuned file at ``path`` with every field checked and ``settings`` in canonical
    form (``"4MiB"`` becomes ``4194304``). ConfigError naming the file (missing, unreadable,
    not UTF-8, not YAML, not a tuned file) or the field and its rule."""
    doc = load_yaml(path, "tuned file")
    if not isinstance(doc, Mapping) or "settings" not in doc:
        raise ConfigError(f"{path}: not a tuned configuration (no 'settings' key); "
                          "produce one with 'iotune tune -o tuned.yaml'")
    return check_tuned(doc)


def check_tuned(doc: Mapping[Any, Any]) -> dict[str, Any]:
    """``doc`` (a tuned document) with every field checked, settings canonical."""
    fields = _fields()
    for key in doc:
        if key not in fields:
            raise ConfigError(f"{_key_text(key)}: unknown key of a tuned file; known: "
                              f"{', '.join(fields)}")
    out = dict(doc)
    for key, value in doc.items():
        fields[key](value, key)
    out["settings"] = _checked_settings(doc["settings"], "settings")
    if doc.get("files") is not None:
        out["files"] = check_files(doc["files"])
    _check_together(out)
    return out


#: The keys of one entry of ``files:`` in its list form (:func:`files_document`).
FILE_ENTRY_KEYS = ("pattern", "settings")


def check_files(files: Any) -> dict[str, dict[str, Any]]:
    """``files:`` checked, each pattern's settings canonical, as a mapping of glob to
    settings in the file's order (the first pattern a file's path matches gives its
    settings, see docs/applications.md). The file holds either a list of
    ``{pattern: GLOB, settings: {...}}`` entries (what iotune writes: no tool that sorts a
    mapping's keys can reorder a list) or a mapping of glob to settings in the order
    written. A glob is non-empty one-line text without leading or trailing blanks (the
    preload settings file trims them), given once; its settings are checked as the
    top-level ``settings`` are, under the key path ``files.<glob>``."""
    if isinstance(files, Mapping):
        entries = list(files.items())
    elif isinstance(files, list):
        entries = [_file_entry(entry, f"files[{i}]") for i, entry in enumerate(files)]
    else:
        raise ConfigError(f"files: {files!r} is not a list of {{pattern: GLOB, settings: "
                          "{...}}} entries (nor a mapping of file glob: settings)")
    out: dict[str, dict[str, Any]] = {}
    for glob, settings in entries:
        if not isinstance(glob, str) or not glob:
            raise ConfigError(f"files: key {glob!r} is not a file glob (non-empty text)")
        one_line(glob, "files")
        if glob != glob.strip():
            raise ConfigError(f"files: {glob!r} has leading or trailing blanks; a file glob "
                              "starts and ends with a visible character")
        if glob in out:
            raise ConfigError(f"files: {glob!r} is given twice; a file's settings are the "
                              "first matching pattern's, so a later one would never apply")
        out[glob] = _checked_settings(settings, f"files.{glob}")
    return out


def _file_entry(entry: Any, where: str) -> tuple[Any, Any]:
    """(glob, settings) of one entry of the list form of ``files:``; ConfigError naming
    ``where`` (``files[2]``) for an entry that is not ``{pattern: GLOB, settings: {...}}``."""
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: {entry!r} is not a mapping {{pattern: GLOB, settings: "
                          "{...}}")
    unknown = [k for k in entry if k not in FILE_ENTRY_KEYS]
    if unknown:
        raise ConfigError(f"{where}.{_key_text(unknown[0])}: unknown key of a files: entry; "
                          f"known: {', '.join(FILE_ENTRY_KEYS)}")
    if "pattern" not in entry:
        raise ConfigError(f"{where}: no 'pattern' (the file glob the entry's settings are for)")
    return entry["pattern"], entry.get("settings")


def files_document(files: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``files`` (glob -> settings, in order) as a tuned file holds them: a list of
    ``{pattern, settings}`` entries, so the order survives any tool that sorts keys."""
    return [{"pattern": glob, "settings": dict(own)} for glob, own in files.items()]


def writable_tuned(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A checked tuned document as it is written: ``files`` in the list form
    (:func:`files_document`), the rest as it is."""
    out = dict(doc)
    if out.get("files"):
        out["files"] = files_document(out["files"])
    return out


def _checked_settings(value: Any, where: str) -> dict[str, Any]:
    """``value`` (settings of a tuned file under the key path ``where``) checked and
    canonical: None or a mapping of one-line setting names to values, by the catalogue
    (:func:`~iotune.settings.values.normalise_settings`); None is no settings."""
    if value is not None and not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {value!r} is not a mapping of setting: value")
    for name in value or {}:
        if not isinstance(name, str):
            raise ConfigError(f"{where}: key {name!r} is not a setting's name")
        one_line(name, where)
    return normalise_settings(value or {}, where)


#: The key of a configuration (:func:`configuration`) holding its per-file settings.
FILES_KEY = "files"


def configuration(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A checked tuned document's configuration as one mapping, what a production campaign
    records and names: its ``settings``, plus :data:`FILES_KEY` with its ``files:`` (glob
    -> settings, in order) when it has any (two tuned files that differ only per file,
    even only in the order of their patterns, are different configurations; compare them
    with :func:`same_configuration`). :func:`split_configuration` undoes it."""
    out = dict(doc["settings"])
    if doc.get("files"):
        out[FILES_KEY] = {glob: dict(s) for glob, s in doc["files"].items()}
    return out


def serial_configuration(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` (a :func:`configuration`) as it is recorded and hashed: its per-file
    settings a list of ``[glob, settings]`` pairs in order. A record is written with its
    keys sorted (:mod:`iotune.store.journal`), which would put a mapping's globs in
    alphabetical order; a list keeps the order, on which a file's settings depend."""
    settings, files = split_configuration(config)
    if files:
        settings[FILES_KEY] = [[glob, dict(own)] for glob, own in files.items()]
    return settings


def recorded_configuration(recorded: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """A configuration read back from its record (:func:`serial_configuration`), and
    whether the order of its per-file patterns is known. A record written before the
    order was kept holds them as a mapping, which the journal's sorted keys put in
    alphabetical order: with two patterns or more their order is lost (False); one
    pattern, or none, has no order to lose. Entries that are not a glob and its settings
    are left out."""
    settings = {k: v for k, v in recorded.items() if k != FILES_KEY}
    files = recorded.get(FILES_KEY)
    if not files:
        return settings, True
    pairs: list[tuple[Any, Any]]
    if isinstance(files, Mapping):
        pairs, ordered = list(files.items()), len(files) <= 1
    else:
        pairs = [(p[0], p[1]) for p in files if isinstance(p, list | tuple) and len(p) == 2]
        ordered = True
    # A pair whose settings are not a mapping (a hand-edited journal) is left out.
    settings[FILES_KEY] = {str(glob): dict(own or {}) for glob, own in pairs
                           if own is None or isinstance(own, Mapping)}
    return settings, ordered


def same_configuration(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two configurations are one: the same settings and the same per-file
    patterns in the same order (mappings compare equal whatever their order)."""
    return serial_configuration(a) == serial_configuration(b)


#: The fields of a tuned file that describe a measured configuration other than the
#: recommended one, best first: what a production campaign may still try.
MEASURED_ALTERNATIVES = ("best_found", "runner_up")


def measured_alternative(doc: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The canonical settings of ``doc[key]`` (one of :data:`MEASURED_ALTERNATIVES`),
    checked as ``settings`` are under the key path ``<key>.settings``; empty when absent."""
    described = doc.get(key)
    if not isinstance(described, Mapping) or not described.get("settings"):
        return {}
    return _checked_settings(described["settings"], f"{key}.settings")


def measured_alternatives(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """:func:`measured_alternative` of each of :data:`MEASURED_ALTERNATIVES`, by key, in
    that order (best first)."""
    return {key: measured_alternative(doc, key) for key in MEASURED_ALTERNATIVES}


def trial_configurations(doc: Mapping[str, Any],
                         alternatives: Mapping[str, Mapping[str, Any]]
                         ) -> list[dict[str, Any]]:
    """The configurations a production campaign may try from a checked tuned document,
    best first, none the default: the recommended one (its :func:`configuration`) when it
    changes anything, then ``alternatives`` (:func:`measured_alternatives` of ``doc``: the
    settings of ``best_found`` and ``runner_up``), each once. A tune that kept the default
    because it could not confirm its best found so hands that configuration over: the
    production jobs are where such a gain gets confirmed."""
    out: list[dict[str, Any]] = []
    recommended = configuration(doc)
    if recommended:
        out.append(recommended)
    for canonical in alternatives.values():
        if canonical and not any(same_configuration(canonical, c) for c in out):
            out.append(dict(canonical))
    return out


def split_configuration(config: Mapping[str, Any]) -> tuple[dict[str, Any],
                                                           dict[str, dict[str, Any]]]:
    """The ``settings`` and ``files`` (glob -> settings, in order) of a
    :func:`configuration`."""
    settings = {k: v for k, v in config.items() if k != FILES_KEY}
    return settings, {glob: dict(own) for glob, own in (config.get(FILES_KEY) or {}).items()}


def _fields() -> dict[str, Check]:
    """Every field :meth:`~iotune.tune.result.TuneResult.to_tuned` writes, with its check."""
    from iotune.backends import backend_class, known_backends
    from iotune.store.targets import TARGET_TABLE

    provenances = tuple(dict.fromkeys(backend_class(b).provenance for b in known_backends()))
    return {
        "schema_version": _schema_version,
        "iotune_version": _version,
        "created_at": _timestamp,
        "kernel": _kernel,
        "kernel_args": _mapping,  # against the kernel's arguments in _check_together
        "target": _choice(tuple(TARGET_TABLE)),
        "target_time": _text,  # a target's time or the metric's label: _check_together
        "metric": _optional(_metric),
        "cores": _scale,
        "nodes": _optional(_scale),
        "system": _text,
        "backend": _choice(tuple(known_backends())),
        "provenance": _provenance(provenances),
        "recommendation": _choice(RECOMMENDATIONS),
        "reason": _optional(_text),
        "settings": lambda value, where: None,  # in check_tuned, by the catalogue
        "files": lambda value, where: None,  # in check_tuned, by check_files
        "mpiio_hints": _optional(_hints),
        "measured": _optional(_mapping),
        "predicted_time_s": _optional(_number),
        "default": _optional(_mapping),
        "speedup": _optional(_number),
        "confidence": _optional(_fraction),
        "best_found": _optional(_mapping),
        "best_found_speedup": _optional(_mapping),
        "runner_up": _optional(_mapping),
        "tied_with_runner_up": _optional(_bool),
        "noise": _optional(_mapping),
        "search": _optional(_search),
        "not_in_effect": _optional(_mapping),
        "unverified": _optional(_mapping),
        "model": _optional(_model),
        "undecided": _optional(_mapping),
        "knowledge": _optional(_mapping),  # what a knowledge base contributed; never read
    }


def _check_together(doc: Mapping[str, Any]) -> None:
    """The rules between fields: provenance is the backend's, nodes at most cores, the
    kernel's arguments are its own."""
    from iotune.backends import backend_class
    from iotune.kernel_specs import get_kernel

    if "backend" in doc and "provenance" in doc:
        expected = backend_class(doc["backend"]).provenance
        if doc["provenance"] != expected:
            raise ConfigError(f"provenance: {doc['provenance']!r} is not backend "
                              f"{doc['backend']!r}'s provenance ({expected})")
    if isinstance(doc.get("nodes"), int) and isinstance(doc.get("cores"), int) \
            and doc["nodes"] > doc["cores"]:
        raise ConfigError(f"nodes: {doc['nodes']} is more than cores ({doc['cores']})")
    if doc.get("kernel_args") and "kernel" in doc:
        get_kernel(doc["kernel"]).normalise_params(doc["kernel_args"], "kernel_args")
    if "target_time" in doc:
        from iotune.store.targets import TARGET_TABLE

        times = [t.time for t in TARGET_TABLE.values()]
        label = (doc.get("metric") or {}).get("label")
        if doc["target_time"] not in times and doc["target_time"] != label:
            raise ConfigError(f"target_time: {doc['target_time']!r} is not one of "
                              f"{', '.join(times)}, nor the metric's label")


def _optional(check: Check) -> Check:
    def optional(value: Any, where: str) -> None:
        if value is not None:
            check(value, where)
    return optional


def _choice(choices: tuple[str, ...]) -> Check:
    def choice(value: Any, where: str) -> None:
        if not isinstance(value, str) or value not in choices:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(choices)}")
    return choice


#: The provenance of a recommendation settled over production jobs
#: (:mod:`iotune.production.settle`): ``N production jobs``.
PRODUCTION_PROVENANCE = re.compile(r"[1-9][0-9]{0,9} production jobs")


def _provenance(choices: tuple[str, ...]) -> Check:
    """A backend's provenance, or ``N production jobs``."""
    def provenance(value: Any, where: str) -> None:
        if isinstance(value, str) and PRODUCTION_PROVENANCE.fullmatch(value):
            return
        if not isinstance(value, str) or value not in choices:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(choices)} or "
                              "'N production jobs'")
    return provenance


def _schema_version(value: Any, where: str) -> None:
    if isinstance(value, bool) or value != TUNED_SCHEMA_VERSION:
        raise ConfigError(f"{where}: {value!r} is not {TUNED_SCHEMA_VERSION}, the version of "
                          "tuned file this iotune reads")


def _version(value: Any, where: str) -> None:
    if not isinstance(value, str) or not _VERSION.fullmatch(value):
        raise ConfigError(f"{where}: {value!r} is not a version (letters, digits and . + _ -)")


def _timestamp(value: Any, where: str) -> None:
    if isinstance(value, datetime | date):  # YAML reads an unquoted timestamp as one
        return
    try:
        datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: {value!r} is not an ISO 8601 time") from None


def _kernel(value: Any, where: str) -> None:
    from iotune.kernel_specs import KERNELS

    if not isinstance(value, str) or value not in KERNELS:
        raise ConfigError(f"{where}: {value!r} is not a kernel iotune knows; known: "
                          f"{', '.join(sorted(KERNELS))}")


def _scale(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CORES:
        raise ConfigError(f"{where}: {value!r} is not a positive integer of at most "
                          f"{MAX_CORES}")


def _text(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: {value!r} is not text")
    one_line(value, where)


def _number(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: {value!r} is not a finite number")


def _fraction(value: Any, where: str) -> None:
    _number(value, where)
    if not 0 < value < 1:
        raise ConfigError(f"{where}: {value!r} is not between 0 and 1")


def _bool(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: {value!r} is not true or false")


def _mapping(value: Any, where: str) -> None:
    """A mapping with text keys whose values are plain YAML data (text, numbers, booleans,
    null, lists and such mappings): no timestamps, binary or sets."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {value!r} is not a mapping")
    for key, item in value.items():
        if not isinstance(key, str):
            raise ConfigError(f"{where}: key {key!r} is not text")
        _plain(item, f"{where}.{key}")


def _plain(value: Any, where: str) -> None:
    if isinstance(value, Mapping):
        _mapping(value, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _plain(item, f"{where}[{i}]")
    elif not isinstance(value, str | int | float | bool | type(None)):
        raise ConfigError(f"{where}: {value!r} is not plain YAML data (text, a number, "
                          "true/false, null, a list or a mapping)")


def _hints(value: Any, where: str) -> None:
    """MPI-IO hints: hint name to text."""
    _mapping(value, where)
    for key, item in value.items():
        if not SAFE_KEY.fullmatch(key) or not isinstance(item, str):
            raise ConfigError(f"{where}.{_key_text(key)}: {item!r} is not a hint (a name of "
                              "letters, digits and _ with a text value)")


def _metric(value: Any, where: str) -> None:
    """What the figures measure: ``label`` (one line), ``unit`` (``s`` or ``MiB/s``) and
    ``better`` (``lower`` for seconds, ``higher`` for a bandwidth)."""
    from iotune.settings.metrics import UNITS

    _mapping(value, where)
    unknown = sorted(set(value) - {"label", "unit", "better"})
    if unknown:
        raise ConfigError(f"{where}.{_key_text(unknown[0])}: unknown key of a metric; known: "
                          "label, unit, better")
    _text(value.get("label"), f"{where}.label")
    unit = value.get("unit")
    if unit not in UNITS:
        raise ConfigError(f"{where}.unit: {unit!r} is not one of {', '.join(UNITS)}")
    if value.get("better") != UNITS[unit]:
        raise ConfigError(f"{where}.better: {value.get('better')!r} is not {UNITS[unit]!r}, "
                          f"the direction of unit {unit}")


def _search(value: Any, where: str) -> None:
    """How the search went: the strategy's name and the runs' source are one-line text."""
    _mapping(value, where)
    for key in ("strategy", "source"):
        if value.get(key) is not None:
            _text(value[key], f"{where}.{key}")


def _model(value: Any, where: str) -> None:
    """The model's summary: its formula is one line of text."""
    _mapping(value, where)
    if value.get("formula") is not None:
        _text(value["formula"], f"{where}.formula")


def _key_text(key: Any) -> str:
    """A key as it may be shown in a one-line message."""
    text = str(key)
    return repr(text) if not text.isprintable() else text
