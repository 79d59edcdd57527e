"""The model file: human-readable YAML that loads back into an identical model.

Coefficients are written with ``repr`` precision (PyYAML writes floats with ``repr``), so
a loaded model has the same float64 coefficients and predicts bit for bit the same.
Exponent vectors and level lists are written on one line each, like the paper's notation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from iotune.errors import DataError
from iotune.execution.files import file_sha256
from iotune.execution.outputs import NOTHING_IN_USE, InUse, write_output
from iotune.inputs import load_yaml
from iotune.model.categorical import CategoricalSpec
from iotune.model.model import Completion, FitSettings, FitStats, Model, Step
from iotune.model.terms import Term

#: The version of the file format: a file of a newer version is refused, not misread.
SCHEMA_VERSION = 1
KIND = "iotune-model"


class _FlowList(list[Any]):
    """A list written inline: ``[0, 0, -1, 1]``."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(
    _FlowList, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))


def _flow_short_lists(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _flow_short_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        if all(isinstance(v, str | int | float) for v in value):
            return _FlowList(value)
        return [_flow_short_lists(v) for v in value]
    return value


def dump_yaml(data: Mapping[str, Any]) -> str:
    """YAML text of a model dict, keys in their given order, short lists inline."""
    return yaml.dump(_flow_short_lists(data), Dumper=_Dumper, sort_keys=False,
                     allow_unicode=True, width=100)


def source_info(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{"path": ..., "sha256": ...}`` of the training data.

    For an iotune store directory the digest is that of its ``measurements.jsonl``.
    """
    file = Path(path)
    if file.is_dir():
        file = file / "measurements.jsonl"
    return {"path": os.fspath(path), "sha256": file_sha256(file)}


def model_to_dict(model: Model, source: str | os.PathLike[str] | None = None,
                  ) -> dict[str, Any]:
    """Plain data (JSON/YAML-ready) with everything needed to predict and to audit.

    ``source`` (the training data path) adds its path and sha256, overriding any
    source the model already records. :func:`model_from_dict` reads it back.
    """
    src = source_info(source) if source is not None else model.source
    terms = []
    for k, (term, coef) in enumerate(zip(model.terms, model.coefficients, strict=True)):
        entry: dict[str, Any] = {"term": term.name(model.params),
                                 "exponents": list(term.exponents)}
        if term.indicator is not None:
            entry["indicator"] = {term.indicator[0]: term.indicator[1]}
        entry["coefficient"] = float(coef)
        if k < len(model.steps):
            step = model.steps[k]
            entry["added_by"] = "completion" if step.by_completion else "selection"
            entry["relative_error_after"] = float(step.relative_error)
            if step.cv_error is not None:
                entry["cv_error_after"] = float(step.cv_error)
        terms.append(entry)
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "target": model.target,
        "formula": model.formula(),
        "parameters": list(model.params),
        "actionable": list(model.actionable),
        "categorical": {s.column: list(s.levels) for s in model.categorical},
        "unset": {column: stand_in for column, stand_in in model.unset},
        "terms": terms,
        "completion": [_completion_dict(c, model.params, bool(model.categorical))
                       for c in model.completion],
    }
    if model.stats is not None:
        st = model.stats
        out["fit"] = {
            "rows": st.rows,
            "configurations": st.configurations,
            "relative_error": st.relative_error,
            "rms_relative_error": st.rms_relative_error,
            "cv_relative_error": st.cv_error,
            "cv_rms_relative_error": st.cv_rms_relative_error,
            "cv_folds": st.cv_folds,
            "stop_reason": st.stop_reason,
        }
    if model.settings is not None:
        out["settings"] = {
            "max_terms": model.settings.max_terms,
            "stop": model.settings.stop,
            "min_gain": model.settings.min_gain,
            "cv_folds": model.settings.cv_folds,
            "seed": model.settings.seed,
            "monotone_completion": model.settings.monotone_completion,
        }
    out["source"] = src
    return out


def _completion_dict(note: Completion, params: Sequence[str], with_where: bool,
                     ) -> dict[str, Any]:
    entry: dict[str, Any] = {"parameter": note.parameter, "status": note.status}
    if note.term is not None:
        entry["term"] = note.term.name(params)
        entry["exponents"] = list(note.term.exponents)
        if note.term.indicator is not None:
            entry["indicator"] = {note.term.indicator[0]: note.term.indicator[1]}
    if with_where:
        entry["where"] = dict(note.where)
    return entry


def save_model(model: Model, path: str | os.PathLike[str],
               source: str | os.PathLike[str] | None = None, *,
               in_use: InUse = NOTHING_IN_USE, force: bool = False) -> None:
    """Write ``model`` to ``path`` (YAML), recording ``source``'s path and sha256 if given,
    by the rules of :func:`iotune.execution.outputs.write_output` (option ``-o``)."""
    write_output(path, dump_yaml(model_to_dict(model, source=source)), "model", option="-o",
                 in_use=in_use, force=force)


def load_model(path: str | os.PathLike[str]) -> Model:
    """Read a model file written by :func:`save_model`; DataError if it is not one."""
    data = load_yaml(path, "model file", DataError)
    try:
        return model_from_dict(data)
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from exc


def _need(data: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``data[key]`` if present and of ``kind`` (bool never passes for a number)."""
    if not isinstance(data, Mapping) or key not in data:
        raise DataError(f"{where}{key}: missing")
    value = data[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise DataError(f"{where}{key}: expected {names}, got {value!r}")
    return value


def _optional_float(data: Mapping[str, Any], key: str, where: str) -> float | None:
    return None if data.get(key) is None else float(_need(data, key, (int, float), where))


def _term(entry: Mapping[str, Any], n: int, where: str) -> Term:
    exponents = _need(entry, "exponents", list, where)
    if len(exponents) != n or any(e not in (-1, 0, 1) or isinstance(e, bool)
                                  for e in exponents):
        raise DataError(f"{where}exponents: expected one of -1, 0, 1 per parameter ({n} in "
                        f"all), got {exponents!r}")
    indicator = entry.get("indicator")
    if indicator is None:
        return Term(tuple(int(e) for e in exponents))
    if not isinstance(indicator, Mapping) or len(indicator) != 1:
        raise DataError(f"{where}indicator: expected {{column: level}}, got {indicator!r}")
    ((column, level),) = indicator.items()
    return Term(tuple(int(e) for e in exponents), (str(column), str(level)))


def model_from_dict(data: Any) -> Model:
    """A :class:`Model` from the plain data of :func:`model_to_dict`; DataError naming the
    first bad key."""
    if not isinstance(data, Mapping):
        raise DataError("not an iotune model file (expected a YAML mapping with "
                        "schema_version, parameters and terms)")
    version = _need(data, "schema_version", int, "")
    if version > SCHEMA_VERSION:
        raise DataError(f"schema_version {version} is newer than this iotune reads "
                        f"({SCHEMA_VERSION}); upgrade iotune")
    if data.get("kind", KIND) != KIND:
        raise DataError(f"kind: expected {KIND!r}, got {data.get('kind')!r}")
    params = tuple(str(p) for p in _need(data, "parameters", list, ""))
    specs = []
    categorical = data.get("categorical") or {}
    if not isinstance(categorical, Mapping):
        raise DataError(f"categorical: expected {{column: [levels]}}, got {categorical!r}")
    for column in categorical:
        levels = _need(categorical, column, list, "categorical.")
        specs.append(CategoricalSpec(str(column), tuple(str(v) for v in levels)))
    known = {(s.column, level) for s in specs for level in s.levels}
    terms: list[Term] = []
    coefficients: list[float] = []
    steps: list[Step] = []
    for k, entry in enumerate(_need(data, "terms", list, "")):
        where = f"terms[{k}]."
        term = _term(entry, len(params), where)
        if term.indicator is not None and term.indicator not in known:
            raise DataError(f"{where}indicator: {term.indicator[0]}={term.indicator[1]} is "
                            "not a level of a categorical column")
        terms.append(term)
        coefficients.append(float(_need(entry, "coefficient", (int, float), where)))
        if "relative_error_after" in entry:
            cv = entry.get("cv_error_after")
            steps.append(Step(term, float(entry["relative_error_after"]),
                              entry.get("added_by") == "completion",
                              None if cv is None else float(cv)))
    completion = []
    for k, entry in enumerate(data.get("completion") or []):
        where = f"completion[{k}]."
        added = _term(entry, len(params), where) if "exponents" in entry else None
        completion.append(Completion(str(_need(entry, "parameter", str, where)),
                                     str(_need(entry, "status", str, where)), added,
                                     {str(c): str(v) for c, v in
                                      (entry.get("where") or {}).items()}))
    stats = None
    fit = data.get("fit")
    if fit is not None:
        cv_folds = fit.get("cv_folds") if isinstance(fit, Mapping) else None
        stats = FitStats(_need(fit, "rows", (int, float), "fit."),
                         _need(fit, "configurations", int, "fit."),
                         float(_need(fit, "relative_error", (int, float), "fit.")),
                         _optional_float(fit, "cv_relative_error", "fit."),
                         None if cv_folds is None else _need(fit, "cv_folds", int, "fit."),
                         str(fit.get("stop_reason", "")))
    settings = None
    st = data.get("settings")
    if st is not None:
        settings = FitSettings(_need(st, "max_terms", int, "settings."),
                               _need(st, "stop", str, "settings."),
                               float(_need(st, "min_gain", (int, float), "settings.")),
                               _need(st, "cv_folds", int, "settings."),
                               _need(st, "seed", int, "settings."),
                               _need(st, "monotone_completion", bool, "settings."))
    source = data.get("source")
    unset = data.get("unset") or {}
    if not isinstance(unset, Mapping) or not all(
            v is None or isinstance(v, int | float) for v in unset.values()):
        raise DataError(f"unset: expected {{column: stand-in number or null}}, got {unset!r}")
    return Model(
        params=params,
        target=str(_need(data, "target", str, "")),
        terms=tuple(terms),
        coefficients=tuple(coefficients),
        categorical=tuple(specs),
        actionable=tuple(str(a) for a in data.get("actionable") or ()),
        steps=tuple(steps),
        completion=tuple(completion),
        stats=stats,
        settings=settings,
        source=dict(source) if isinstance(source, Mapping) else None,
        unset=tuple((str(c), None if v is None else float(v)) for c, v in unset.items()),
    )
