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

from iotune.kernel_specs import metric_of
from iotune.model.trust import NO_PREDICTION, possible
from iotune.report.data import Dataset, ScaleTune, SearchSession, settings_label
from iotune.report.decision import ScaleDecision
from iotune.report.modelfit import ModelView, step_errors, term_rows
from iotune.settings.catalogue import HINT_PREFIX, SETTINGS
from iotune.settings.in_effect import ABSENT, DIFFERS, IN_EFFECT, NOT_APPLICABLE, UNVERIFIED
from iotune.settings.units import MIB
from iotune.settings.values import describe_value
from iotune.store.records import EFFECT_PREFIX, IN_EFFECT_PREFIX
from iotune.strategies.racing import CONFIDENCE


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


def speedup_table(dataset: Dataset, stem: str,
                  decisions: Sequence[ScaleDecision]) -> Table:
    """The paper's Table 3 as a tune decides it: per scale, what was recommended (tuned,
    default or undecided) and why, the best found and the default with their estimates
    and intervals, and the best found's speedup over the default with its interval.

    Figures are the race's estimates (:mod:`iotune.report.decision`), in MiB/s when the
    kernel's bytes are known, else in the runs' metric's unit
    (unit in ``unit``). ``decisions`` are the tunes', in the order of ``dataset.tunes``.
    """
    rows = []
    for tune, decision in zip(dataset.tunes, decisions, strict=True):
        rows.append(_speedup_row(tune, dataset.provenance.kernel, decision))
    columns = ["cores", "kernel", "file_size_gib", "recommendation", "unit",
               "best_found", "best_found_low", "best_found_high", "best_found_reps",
               "default", "default_low", "default_high", "default_reps", "speedup",
               "speedup_low", "speedup_high", "configurations", "runs",
               "best_found_settings", "why", "decided_by"]
    word = dataset.provenance.title_word
    return Table(stem, f"{word}: what was recommended at each scale, and the best found "
                 "against the default (Table 3)", columns, rows,
                 note=f"recommendation: tuned (the best found is confirmed faster), default "
                      "(kept: why says why) or undecided (more runs would decide), as "
                      "'iotune tune' decides from these runs, or as the tuned file says "
                      "(decided_by). Figures: each configuration's estimate from its runs, "
                      f"as the race ranks them, with its {CONFIDENCE:.0%} interval (MiB/s at "
                      "the estimated time when the bytes are known, else the runs' metric); "
                      "speedup: the best found's over the default's, an estimate of the ratio of "
                      "their typical times with its interval.")


def _speedup_row(tune: ScaleTune, kernel: str, decision: ScaleDecision) -> dict[str, Any]:
    best, default = decision.best, tune.default
    row: dict[str, Any] = {"cores": tune.cores, "kernel": kernel,
                           "file_size_gib": _round(tune.file_size_gib),
                           "recommendation": decision.recommendation, "why": decision.reason,
                           "decided_by": decision.source,
                           "configurations": len(tune.configs), "runs": tune.runs}
    shown = _shown_in(tune, kernel)
    row["unit"] = shown[0]
    for side, config in (("best_found", best), ("default", default)):
        found = None if config is None else decision.estimate(config)
        if config is None or found is None:
            continue
        low, high = ((None, None) if found.low_s is None or found.high_s is None
                     else sorted((shown[1](config, found.low_s), shown[1](config, found.high_s))))
        row.update({side: _round(shown[1](config, found.time_s)), f"{side}_low": _round(low),
                    f"{side}_high": _round(high), f"{side}_reps": len(config.times)})
    if best is not None:
        row["best_found_settings"] = settings_label(best.settings)
    gain = decision.speedup
    if gain is not None and best is not None and not best.is_default:
        row.update(speedup=_round(gain.value), speedup_low=_round(gain.low),
                   speedup_high=_round(gain.high))
    return row


def _shown_in(tune: ScaleTune, kernel: str) -> tuple[str, Any]:
    """The unit a scale's figures are shown in, and how a configuration's time becomes
    it: MiB/s from the bytes when they are known, else the runs' metric."""
    if tune.bytes_written and metric_of(kernel, tune.params).unit == "s":
        return "MiB/s", lambda config, time: config.bytes_written / MIB / time
    metric = metric_of(kernel, tune.params)
    return metric.unit, lambda config, time: metric.shown(time)


def speedup_display_rows(table: Table) -> list[dict[str, Any]]:
    """Table 3 condensed for the terminal and the page: ranges as ``low-high`` text."""
    out = []
    for row in table.rows:
        unit = row.get("unit") or ""
        out.append({
            "cores": row["cores"],
            "recommended": row.get("recommendation"),
            f"best found ({unit})": row.get("best_found"),
            "its interval": _range(row.get("best_found_low"), row.get("best_found_high")),
            f"default ({unit})": row.get("default"),
            "default interval": _range(row.get("default_low"), row.get("default_high")),
            "speedup": _times(row.get("speedup")),
            "speedup interval": _range(row.get("speedup_low"), row.get("speedup_high"), "x"),
            "runs (best/default)": (f"{row.get('best_found_reps') or 0}/"
                                    f"{row.get('default_reps') or 0}"),
            "best found settings": row.get("best_found_settings", ""),
            "why": row.get("why", ""),
        })
    return out


def _range(low: float | None, high: float | None, unit: str = "") -> str:
    if low is None or high is None:
        return ""
    return f"{low:.4g}-{high:.4g}{unit}"


def _times(value: float | None) -> str:
    return "" if value is None else f"{value:.3g}x"


def topk_table(dataset: Dataset, tune: ScaleTune, top: int, stem: str,
               model_error: str | None = None,
               decision: ScaleDecision | None = None) -> Table:
    """The top configurations of one scale (and the default), best first by the race's
    estimate (``decision``'s), each with its interval and the model's prediction;
    ``model_error`` (e.g. ``model CV error 0.31``) goes in the note beside predicted_s. A
    prediction of zero or less, which no run can take, is shown as ``—``."""
    rows = []
    order = ([c for c, _ in decision.ranked if not c.is_default] if decision is not None
             else tune.configs)
    entries = order[:top] + ([tune.default] if tune.default else [])
    metric = metric_of(dataset.provenance.kernel, tune.params)
    k = "s" if metric.unit == "s" else metric.unit.lower().replace("/", "_")
    impossible = False
    for rank, config in enumerate(entries, start=1):
        found = decision.estimate(config) if decision is not None else None
        time = found.time_s if found is not None else config.median
        predicted: Any = (None if config.predicted is None
                          else _round(metric.shown(config.predicted))
                          if possible(config.predicted) else NO_PREDICTION)
        impossible = impossible or predicted == NO_PREDICTION
        interval = None if found is None else found.shown_interval(metric)
        low, high = metric.shown_interval(min(config.times), max(config.times))
        row: dict[str, Any] = {
            "rank": "default" if config.is_default else rank,
            "settings": settings_label(config.settings),
            f"measured_{k}": _round(metric.shown(time)),
            f"interval_{k}": "" if interval is None else f"{interval[0]:.4g}-{interval[1]:.4g}",
            f"min_{k}": _round(low), f"max_{k}": _round(high), "reps": len(config.times),
            f"predicted_{k}": predicted,
            "bandwidth_mib_s": _round(config.bytes_written / MIB / time
                                      if config.bytes_written and k == "s" else None),
        }
        for name, value in config.settings.items():
            row[name] = describe_value(name, value)
        rows.append(row)
    setting_names = list(dict.fromkeys(n for c in entries for n in c.settings))
    columns = ["rank", "settings", *(f"{c}_{k}" for c in ("measured", "interval", "min",
                                                          "max")),
               "reps", f"predicted_{k}", "bandwidth_mib_s", *setting_names]
    word = dataset.provenance.title_word
    return Table(stem, f"{word}: top {min(top, len(tune.configs))} configurations of "
                 f"{dataset.provenance.kernel} at {tune.cores} ranks", columns, rows,
                 note=f"measured_{k}: each configuration's estimated {metric.label} "
                      f"({metric.unit}) from its runs, as the race ranks them, best first, "
                      f"with its {CONFIDENCE:.0%} interval (interval_{k}); min_{k} and "
                      f"max_{k} over its runs; predicted_{k}: the refitted model's prediction"
                      + (f" ({model_error})" if model_error else "")
                      + (f"; {NO_PREDICTION}: the model predicted zero or less, which no run "
                         "can take" if impossible else "") + ".")


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
    if table.stem.startswith("top"):  # the figures, not a column per setting
        keep = table.columns[:table.columns.index("bandwidth_mib_s") + 1]
        return [{k: r.get(k) for k in keep} for r in table.rows]
    return table.rows
