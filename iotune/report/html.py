"""The report as one self-contained HTML page: images embedded as base64, CSS inline.

The page needs no network and no other file to display; the CSV links are relative, to
the files written beside it. Every figure and table is numbered and named (its file name
appears in its caption), and each dataset starts with its provenance.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from iotune import __version__
from iotune.report.tables import Table, display_rows
from iotune.settings import describe_value
from iotune.store import now_iso
from iotune.terminal import format_cell

if TYPE_CHECKING:
    from iotune.report.build import Report, ReportFigure

MIME = {"png": "image/png", "svg": "image/svg+xml"}

CSS = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 1.5em auto;
       max-width: 1250px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.35em; border-bottom: 2px solid #1f5fa8; padding-bottom: 0.2em;
     margin-top: 1.8em; }
h3 { font-size: 1.1em; margin-top: 1.4em; }
.banner { padding: 0.5em 0.8em; border-radius: 4px; font-weight: bold; margin: 0.6em 0; }
.measured { background: #e3effa; } .simulated, .replayed { background: #fdecd0; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto;
  border: 1px solid #ddd; }
figcaption { max-width: 900px; }
figcaption, .caption { font-size: 0.9em; color: #444; margin: 0.3em 0; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.4em 0 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left;
         vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f3f7; }
.note { font-size: 0.9em; color: #333; }
.missing { font-weight: bold; color: #8a4b00; }
.toc { font-size: 0.95em; }
code { font-size: 0.95em; }
@media print { h2 { page-break-before: always; } figure, table { page-break-inside: avoid; }
               body { max-width: none; } }
"""


def render_html(report: Report) -> str:
    """The whole page of ``report`` (figures are read from ``report.outdir``)."""
    counter = {"figure": 0, "table": 0}
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>iotune report: {escape(report.kernel)}</title>",
        f"<style>{CSS}</style>", "</head>", "<body>",
        f"<h1>iotune report: {escape(report.kernel)}</h1>",
        f'<p class="note">Store <code>{escape(report.store)}</code>; iotune '
        f"{escape(__version__)}; generated {escape(now_iso())}.</p>",
    ]
    if report.tuned:
        parts.append(_tuned_block(report.tuned))
    parts.append(_contents(report))
    for index, part in enumerate(report.parts, start=1):
        prov = part.dataset.provenance
        parts.append(f'<h2 id="data-{index}">{escape(prov.title_word)} data: '
                     f"{escape(prov.kernel)} on {escape(prov.system)}</h2>")
        parts.append(f'<p class="banner {escape(prov.provenance)}">These numbers are '
                     f"{escape(prov.provenance.upper())} ({escape(prov.backend)} backend, "
                     f"{prov.runs} runs).</p>")
        for section in part.sections:
            parts.append(f"<h3>{escape(section.title)}</h3>")
            parts += [f'<p class="missing">{escape(n)}</p>' for n in section.missing]
            parts += [f'<p class="note">{escape(n)}</p>' for n in section.notes]
            for item in section.items:
                if isinstance(item, Table):
                    counter["table"] += 1
                    parts.append(_table_html(item, counter["table"]))
                else:
                    counter["figure"] += 1
                    parts.append(_figure_html(report, item, counter["figure"]))
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _contents(report: Report) -> str:
    items = []
    for index, part in enumerate(report.parts, start=1):
        prov = part.dataset.provenance
        sections = ", ".join(escape(s.title) for s in part.sections)
        items.append(f'<li><a href="#data-{index}">{escape(prov.title_word)} data</a> '
                     f"({escape(prov.backend)}, {escape(prov.system)}, {prov.runs} runs): "
                     f"{sections}</li>")
    return f'<ul class="toc">{"".join(items)}</ul>'


def _tuned_block(tuned: Mapping[str, Any]) -> str:
    measured = tuned.get("measured") or {}
    default = tuned.get("default") or {}
    search = tuned.get("search") or {}
    pairs = {
        "tuned file": tuned.get("path"),
        "kernel, scale": f"{tuned.get('kernel')} at {tuned.get('cores')} ranks",
        "backend": f"{tuned.get('backend')} ({tuned.get('provenance')})",
        "settings": " ".join(f"{k}={describe_value(k, v)}"
                             for k, v in (tuned.get("settings") or {}).items()) or "defaults",
        "tuned bandwidth": _mibs(measured.get("bandwidth_mib_s")),
        "default bandwidth": _mibs(default.get("bandwidth_mib_s")),
        "speedup": f"{tuned['speedup']}x" if tuned.get("speedup") else "",
        "strategy": f"{search.get('strategy', '')} ({search.get('runs', '?')} runs, "
                    f"{search.get('configurations', '?')} configurations)",
    }
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(format_cell(v))}</td></tr>"
                   for k, v in pairs.items())
    return f"<h2>Tuned configuration</h2><table>{rows}</table>"


def _mibs(value: Any) -> str:
    return f"{value:.4g} MiB/s" if isinstance(value, int | float) else ""


def _figure_html(report: Report, figure: ReportFigure, number: int) -> str:
    data = (report.outdir / figure.file).read_bytes()
    encoded = base64.b64encode(data).decode("ascii")
    mime = MIME[report.fmt]
    return (f'<figure id="{escape(figure.stem)}">'
            f'<img alt="{escape(figure.title)}" src="data:{mime};base64,{encoded}" '
            f'width="{figure.width_px * 3 // 4}" height="{figure.height_px * 3 // 4}">'
            f"<figcaption><b>Figure {number}: {escape(figure.title)}</b> "
            f"(<code>{escape(figure.file)}</code>). {escape(figure.caption)}</figcaption>"
            "</figure>")


def _table_html(table: Table, number: int) -> str:
    if not table.on_page:
        return (f'<p class="caption" id="{escape(table.stem)}-table"><b>Table {number}: '
                f"{escape(table.title)}</b>: {len(table.rows)} rows in the CSV file "
                f'<a href="{escape(table.csv_name)}"><code>{escape(table.csv_name)}</code></a>'
                " (not shown on the page).</p>")
    rows = list(display_rows(table))
    columns = list(dict.fromkeys(k for r in rows for k in r)) if rows else table.columns
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join(_row_html(r, columns) for r in rows) or (
        f'<tr><td colspan="{len(columns)}">(no rows)</td></tr>')
    note = f' <span class="note">{escape(table.note)}</span>' if table.note else ""
    return (f'<p class="caption" id="{escape(table.stem)}-table"><b>Table {number}: '
            f"{escape(table.title)}</b> (CSV: <a href=\"{escape(table.csv_name)}\">"
            f"<code>{escape(table.csv_name)}</code></a>).{note}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def _row_html(row: Mapping[str, Any], columns: Sequence[str]) -> str:
    cells = []
    for column in columns:
        value = row.get(column)
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        css = ' class="num"' if numeric else ""
        cells.append(f"<td{css}>{escape(format_cell(value))}</td>")
    return f"<tr>{''.join(cells)}</tr>"
