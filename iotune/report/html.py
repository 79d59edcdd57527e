"""The report as one self-contained HTML page, rendered by Jinja2 with autoescaping.

The template (``templates/report.html.j2``) and its style sheet (``templates/report.css``)
ship with the package. This module only turns a :class:`~iotune.report.build.Report` into
plain values for the template: text, numbers and the figures as base64. The page needs no
network and no other file to display; the CSV links are relative, to the files written
beside it. Every figure and table is numbered and named (its file name appears in its
caption), each part starts with its provenance, and each figure's caption carries its
provenance label.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from iotune import __version__
from iotune.report.tables import Table, display_rows
from iotune.settings.values import describe_settings
from iotune.store import now_iso
from iotune.ui.terminal import format_cell

if TYPE_CHECKING:
    from iotune.report.build import Report
    from iotune.report.parts import ReportFigure, Section

MIME = {"png": "image/png", "svg": "image/svg+xml"}
TEMPLATE = "report.html.j2"


@cache
def environment() -> Environment:
    """The Jinja2 environment of the report templates (autoescape on, undefined is an
    error so a misspelt field cannot vanish silently)."""
    return Environment(loader=PackageLoader("iotune.report", "templates"), autoescape=True,
                       undefined=StrictUndefined, keep_trailing_newline=True)


def render_html(report: Report) -> str:
    """The whole page of ``report`` (figures are read from ``report.outdir``)."""
    counter = {"figure": 0, "table": 0}
    parts: list[dict[str, Any]] = []
    for index, part in enumerate(report.parts, start=1):
        prov = part.dataset.provenance
        parts.append({
            "id": f"data-{index}", "toc": f"{prov.title_word} data",
            "toc_detail": f" ({prov.backend}, {prov.system}, {prov.runs} runs)",
            "heading": f"{prov.title_word} data: {prov.kernel} on {prov.system}",
            "css": prov.provenance,
            "banner": f"These numbers are {prov.provenance.upper()} "
                      f"({prov.source or prov.backend + ' backend'}, {prov.runs} runs).",
            "sections": [_section(report, s, counter) for s in part.sections]})
    for paper in report.papers:
        parts.append({"id": paper.key, "toc": paper.title, "toc_detail": "",
                      "heading": paper.title, "css": paper.provenance,
                      "banner": paper.banner,
                      "sections": [_section(report, s, counter) for s in paper.sections]})
    title = f"iotune report: {report.kernel}" if report.kernel else "iotune report"
    context = {"title": title, "store": report.store, "version": __version__,
               "generated": now_iso(),
               "tuned": _tuned_rows(report.tuned) if report.tuned else None, "parts": parts}
    return environment().get_template(TEMPLATE).render(context)


def _section(report: Report, section: Section, counter: dict[str, int]) -> dict[str, Any]:
    items = []
    for item in section.items:
        if isinstance(item, Table):
            counter["table"] += 1
            items.append(_table(item, counter["table"]))
        else:
            counter["figure"] += 1
            items.append(_figure(report, item, counter["figure"]))
    return {"title": section.title, "missing": section.missing, "notes": section.notes,
            "entries": items}


def _figure(report: Report, figure: ReportFigure, number: int) -> dict[str, Any]:
    data = (report.outdir / figure.file).read_bytes()
    label = figure.provenance or ""
    return {"kind": "figure", "stem": figure.stem, "title": figure.title, "number": number,
            "file": figure.file, "caption": figure.caption, "mime": MIME[report.fmt],
            "data": base64.b64encode(data).decode("ascii"),
            "width": figure.width_px * 3 // 4, "height": figure.height_px * 3 // 4,
            "provenance": label.replace("+", " + "), "css": label.split("+")[-1]}


def _table(table: Table, number: int) -> dict[str, Any]:
    base = {"kind": "table", "stem": table.stem, "title": table.title, "number": number,
            "csv": table.csv_name, "note": table.note, "on_page": table.on_page,
            "count": len(table.rows)}
    if not table.on_page:
        return {**base, "columns": [], "rows": []}
    rows = list(display_rows(table))
    columns = list(dict.fromkeys(k for r in rows for k in r)) if rows else table.columns
    return {**base, "columns": columns, "rows": [_cells(r, columns) for r in rows]}


def _cells(row: Mapping[str, Any], columns: Sequence[str]) -> list[tuple[str, bool]]:
    """Each cell's text and whether it is a number (right-aligned)."""
    out = []
    for column in columns:
        value = row.get(column)
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        out.append((format_cell(value), numeric))
    return out


def _tuned_rows(tuned: Mapping[str, Any]) -> list[tuple[str, str]]:
    measured = tuned.get("measured") or {}
    default = tuned.get("default") or {}
    search = tuned.get("search") or {}
    pairs = {
        "tuned file": tuned.get("path"),
        "kernel, scale": f"{tuned.get('kernel')} at {tuned.get('cores')} ranks",
        "backend": f"{tuned.get('backend')} ({tuned.get('provenance')})",
        "recommendation": tuned.get("recommendation", ""),
        "why": tuned.get("reason") or "",
        "settings": describe_settings(tuned.get("settings") or {}),
        "per-file settings": "; ".join(
            f"{glob}: {describe_settings(settings or {})}"
            for glob, settings in (tuned.get("files") or {}).items()),
        "metric": _metric_text(tuned.get("metric")),
        "recommended bandwidth": _mibs(measured.get("bandwidth_mib_s")),
        "default bandwidth": _mibs(default.get("bandwidth_mib_s")),
        "speedup": f"{tuned['speedup']}x" if tuned.get("speedup") else "",
        "best found": _best_found_text(tuned),
        "strategy": f"{search.get('strategy', '')} ({search.get('runs', '?')} runs, "
                    f"{search.get('configurations', '?')} configurations)",
    }
    return [(k, format_cell(v)) for k, v in pairs.items()]


def _metric_text(metric: Any) -> str:
    """``label (unit, lower is better)`` of a tuned file's metric; empty without one."""
    if not isinstance(metric, Mapping):
        return ""
    return f"{metric.get('label')} ({metric.get('unit')}, {metric.get('better')} is better)"


def _best_found_text(tuned: Mapping[str, Any]) -> str:
    """When the best found is not what was recommended: its settings and speedup interval
    (why it was not recommended is the reason above)."""
    best = tuned.get("best_found") or {}
    gain = tuned.get("best_found_speedup") or {}
    if tuned.get("recommendation") == "tuned" or not best.get("settings"):
        return ""
    interval = gain.get("interval")
    return (" ".join(f"{k}={v}" for k, v in best["settings"].items())
            + (f": {gain['estimate']}x the default's speed" if gain.get("estimate") else "")
            + (f" ({interval[0]}-{interval[1]}x)" if interval else "")
            + ", not recommended")


def _mibs(value: Any) -> str:
    return f"{value:.4g} MiB/s" if isinstance(value, int | float) else ""
