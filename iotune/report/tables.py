"""The report's tables as rows (lists of dicts), and their CSV export.

Every table is a :class:`Table`: a file stem, a title, columns and rows. The same rows are
printed in the terminal, rendered in the HTML page and written as ``<stem>.csv``.
Numbers stay numbers in the rows (CSV keeps full precision); rounding is for display.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from iotune.report.data import Dataset, ScaleTune, SearchSession, settings_label
from iotune.report.modelfit import ModelView, step_errors, term_rows
from iotune.settings.catalogue import HINT_PREFIX, SETTINGS
from iotune.settings.in_effect import ABSENT, DIFFERS, IN_EFFECT, NOT_APPLICABLE, UNVERIFIED
from iotune.settings.values import describe_value
from iotune.store.records import EFFECT_PREFIX, IN_EFFECT_PREFIX


@dataclass
class Table:
    """One table of the report; ``stem`` names its CSV file (``<stem>.csv``)."""

    stem: str
    title: str
    columns: list[str]
    rows: Sequence[Mapping[str, Any]]
    note: str = ""
    terminal: bool = True
    on_page: bool = True

    @property
    def csv_name(self) -> str:
        return f"{self.stem}.csv"

    def write_csv(self, directory: Path) -> Path:
        """Write ``<stem>.csv`` in ``directory``; returns its path."""
        path = directory / self.csv_name
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.columns, extrasaction="ignore")
            writer.writeheader()
            for row in self.rows:
                writer.writerow({c: _csv_value(row.get(c)) for c in self.columns})
        return path


def _csv_value(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return ""
    return "" if value is None else value


def _round(value: float | None, digits: int = 4) -> float | None:
    if value is None or value != value:
        return None
    return float(f"{value:.{digits}g}")


def provenance_table(dataset: Dataset, stem: str) -> Table:
    pairs = dataset.provenance.pairs()
    return Table(stem, f"Provenance ({dataset.provenance.provenance})", ["field", "value"],
                 [{"field": k, "value": v} for k, v in pairs.items()], terminal=False)


def speedup_table(dataset: Dataset, stem: str) -> Table:
    """The paper's Table 3: per scale, file size, tuned and default bandwidth, speedup.

    Bandwidths are at the median time over the repetitions; the ranges are the lowest and
    highest over the repetitions (speedup range: over every pair of repetitions).
    """
    rows = []
    for tune in dataset.tunes:
        rows.append(_speedup_row(tune, dataset.provenance.kernel))
    columns = ["cores", "kernel", "file_size_gib", "tuned_mib_s", "tuned_min_mib_s",
               "tuned_max_mib_s", "tuned_reps", "default_mib_s", "default_min_mib_s",
               "default_max_mib_s", "default_reps", "speedup", "speedup_min", "speedup_max",
               "configurations", "runs", "tuned_settings"]
    word = dataset.provenance.title_word
    return Table(stem, f"{word}: speedups of the tuned over the default configuration "
                 "(Table 3)", columns, rows,
                 note="Bandwidth at the median write time of each configuration; min/max over "
                      "its repetitions. Tuned: the searched configuration with the lowest "
                      "median time; default: the runs with no settings.")


def _speedup_row(tune: ScaleTune, kernel: str) -> dict[str, Any]:
    best, default = tune.best, tune.default
    row: dict[str, Any] = {"cores": tune.cores, "kernel": kernel,
                           "file_size_gib": _round(tune.file_size_gib),
                           "configurations": len(tune.configs), "runs": tune.runs}
    if best is not None:
        low, high = best.bandwidth_range
        row.update(tuned_mib_s=_round(best.bandwidth), tuned_min_mib_s=_round(low),
                   tuned_max_mib_s=_round(high), tuned_reps=len(best.times),
                   tuned_settings=settings_label(best.settings))
    if default is not None:
        low, high = default.bandwidth_range
        row.update(default_mib_s=_round(default.bandwidth), default_min_mib_s=_round(low),
                   default_max_mib_s=_round(high), default_reps=len(default.times))
    if tune.speedup is not None and tune.speedup_range is not None:
        row.update(speedup=_round(tune.speedup), speedup_min=_round(tune.speedup_range[0]),
                   speedup_max=_round(tune.speedup_range[1]))
    return row


def speedup_display_rows(table: Table) -> list[dict[str, Any]]:
    """Table 3 condensed for the terminal and the page: ranges as ``low-high`` text."""
    out = []
    for row in table.rows:
        out.append({
            "cores": row["cores"],
            "file size (GiB)": row.get("file_size_gib"),
            "tuned MiB/s": row.get("tuned_mib_s"),
            "tuned range": _range(row.get("tuned_min_mib_s"), row.get("tuned_max_mib_s")),
            "default MiB/s": row.get("default_mib_s"),
            "default range": _range(row.get("default_min_mib_s"), row.get("default_max_mib_s")),
            "speedup": _times(row.get("speedup")),
            "speedup range": _range(row.get("speedup_min"), row.get("speedup_max"), "x"),
            "reps (tuned/default)": f"{row.get('tuned_reps') or 0}/{row.get('default_reps') or 0}",
            "tuned settings": row.get("tuned_settings", ""),
        })
    return out


def _range(low: float | None, high: float | None, unit: str = "") -> str:
    if low is None or high is None:
        return ""
    return f"{low:.4g}-{high:.4g}{unit}"


def _times(value: float | None) -> str:
    return "" if value is None else f"{value:.3g}x"


def topk_table(dataset: Dataset, tune: ScaleTune, top: int, stem: str,
               model_error: str | None = None) -> Table:
    """The top configurations of one scale (and the default), measured and predicted;
    ``model_error`` (e.g. ``model CV error 0.31``) goes in the note beside predicted_s."""
    rows = []
    entries = tune.configs[:top] + ([tune.default] if tune.default else [])
    for rank, config in enumerate(entries, start=1):
        row: dict[str, Any] = {
            "rank": "default" if config.is_default else rank,
            "settings": settings_label(config.settings),
            "measured_s": _round(config.median), "min_s": _round(min(config.times)),
            "max_s": _round(max(config.times)), "reps": len(config.times),
            "predicted_s": _round(config.predicted),
            "bandwidth_mib_s": _round(config.bandwidth),
        }
        for name, value in config.settings.items():
            row[name] = describe_value(name, value)
        rows.append(row)
    setting_names = list(dict.fromkeys(n for c in entries for n in c.settings))
    columns = ["rank", "settings", "measured_s", "min_s", "max_s", "reps", "predicted_s",
               "bandwidth_mib_s", *setting_names]
    word = dataset.provenance.title_word
    return Table(stem, f"{word}: top {min(top, len(tune.configs))} configurations of "
                 f"{dataset.provenance.kernel} at {tune.cores} ranks", columns, rows,
                 note="measured_s: median write time (open to close) over the repetitions; "
                      "predicted_s: the refitted model's prediction"
                      + (f" ({model_error})." if model_error else "."))


def terms_table(dataset: Dataset, view: ModelView, stem: str) -> Table:
    rows = term_rows(view.model) if view.model is not None else []
    return Table(stem, f"{dataset.provenance.title_word}: model terms and coefficients",
                 ["term", "coefficient", "added_by", "rms_relative_error_after"], rows,
                 note=view.model.formula() if view.model is not None else (view.note or ""))


def steps_table(dataset: Dataset, view: ModelView, stem: str) -> Table:
    rows = step_errors(view.model) if view.model is not None else []
    return Table(stem, f"{dataset.provenance.title_word}: error after each selection step",
                 ["step", "term", "added_by", "rms_relative_error", "cv_rms_relative_error"],
                 rows, terminal=False)


class SearchRows(Sequence[Mapping[str, Any]]):
    """The rows of :func:`search_table`, made as they are read: a store of a year's tunes
    has hundreds of thousands (one per run of every search), written to CSV only."""

    def __init__(self, sessions: Sequence[SearchSession]) -> None:
        self.sessions = sessions
        self._count = sum(len(s.best) for s in sessions)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        for session in self.sessions:
            for run, best in enumerate(session.best, start=1):
                yield {"cores": session.cores, "search": session.label, "run": run,
                       "best_so_far_mib_s": _round(best, 6),
                       "default_mib_s": _round(session.default_bandwidth, 6)}

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> Any:
        return list(self)[index]


def search_table(dataset: Dataset, sessions: Sequence[SearchSession], stem: str) -> Table:
    """Best-so-far bandwidth after every run of every search (long format)."""
    return Table(stem, f"{dataset.provenance.title_word}: best-so-far bandwidth per run",
                 ["cores", "search", "run", "best_so_far_mib_s", "default_mib_s"],
                 SearchRows(sessions), terminal=False, on_page=False)


def search_summary_table(dataset: Dataset, sessions: Sequence[SearchSession],
                         stem: str) -> Table:
    """One row per search: runs, the best bandwidth found and the run that found it."""
    rows = []
    for session in sessions:
        found = [b for b in session.best if b is not None]
        final = found[-1] if found else None
        first = (next(i for i, b in enumerate(session.best, start=1) if b == final)
                 if final is not None else None)
        speedup = (final / session.default_bandwidth
                   if final is not None and session.default_bandwidth else None)
        rows.append({"cores": session.cores, "search": session.label,
                     "runs": len(session.best), "best_mib_s": _round(final),
                     "best_found_at_run": first,
                     "default_mib_s": _round(session.default_bandwidth),
                     "speedup": _round(speedup, 3)})
    return Table(stem, f"{dataset.provenance.title_word}: searches compared",
                 ["cores", "search", "runs", "best_mib_s", "best_found_at_run",
                  "default_mib_s", "speedup"], rows,
                 note="best_mib_s: bandwidth of the best configuration the search measured "
                      "(median over its repetitions); runs include the default's.")


def effects_table(dataset: Dataset, effects: Sequence[Any], stem: str) -> Table:
    rows = []
    for effect in effects:
        for value, predicted in zip(effect.values, effect.predicted, strict=True):
            rows.append({"setting": effect.setting, "value": describe_value(effect.setting,
                                                                           value),
                         "predicted_s": _round(predicted),
                         "tuned": value == effect.anchor_value})
    return Table(stem, f"{dataset.provenance.title_word}: predicted write time along each "
                 "setting", ["setting", "value", "predicted_s", "tuned"], rows, terminal=False)


def in_effect_table(dataset: Dataset, stem: str) -> Table | None:
    """Per setting and requested value, how many measured runs had it in effect, with
    another value (and which), not at all, or could not tell; None when no run says."""
    frame = dataset.frame
    columns = [c for c in frame.columns if str(c).startswith(EFFECT_PREFIX)]
    rows = []
    for column in columns:
        name = str(column)[len(EFFECT_PREFIX):]
        if name not in frame.columns:
            continue
        hint = name[len(HINT_PREFIX):] if name.startswith(HINT_PREFIX) else (
            SETTINGS[name].hint if name in SETTINGS else None)
        seen = frame[frame[column].notna()]
        for value, group in seen.groupby(name, sort=True, dropna=True):
            statuses = group[column].value_counts()
            shown = ""
            if hint and f"{IN_EFFECT_PREFIX}{hint}" in group.columns:
                differing = group[group[column] == DIFFERS][f"{IN_EFFECT_PREFIX}{hint}"]
                shown = ", ".join(f"{v} ({n})" for v, n in differing.value_counts().items())
            if isinstance(value, float) and value.is_integer():  # a column with gaps
                value = int(value)
            rows.append({"setting": name, "requested": describe_value(name, value),
                         "runs": len(group),
                         "in_effect": int(statuses.get(IN_EFFECT, 0)),
                         "other_value": int(statuses.get(DIFFERS, 0)),
                         "values_in_effect": shown,
                         "ignored": int(statuses.get(ABSENT, 0)
                                        + statuses.get(NOT_APPLICABLE, 0)),
                         "unverified": int(statuses.get(UNVERIFIED, 0))})
    if not rows:
        return None
    return Table(stem, f"{dataset.provenance.title_word}: settings requested and in effect",
                 ["setting", "requested", "runs", "in_effect", "other_value",
                  "values_in_effect", "ignored", "unverified"], rows,
                 note="in_effect: runs whose file (MPI_File_get_info, lfs getstripe, the HDF5 "
                      "file-access list) showed the requested value; other_value: it showed "
                      "another (values_in_effect: which, and in how many runs); ignored: the "
                      "MPI library dropped the hint or the setting cannot act here (striping "
                      "off Lustre); unverified: nothing was read back.")


def display_rows(table: Table) -> Sequence[Mapping[str, Any]]:
    """The rows of ``table`` as shown in the terminal and on the page."""
    if table.stem.startswith("speedup"):
        return speedup_display_rows(table)
    if table.stem.startswith("top"):
        keep = ["rank", "settings", "measured_s", "min_s", "max_s", "reps", "predicted_s",
                "bandwidth_mib_s"]
        return [{k: r.get(k) for k in keep} for r in table.rows]
    return table.rows
