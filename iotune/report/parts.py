"""The pieces a report is made of: figures, sections and parts, and how they are written.

A report is a list of parts. A part is one source of numbers with one provenance (a
backend's measurements of the tuned kernel, the storage-state probes, the Darshan logs);
its sections hold figures and tables in display order. :func:`write_figure` saves a
matplotlib figure under the report's directory and returns its :class:`ReportFigure`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.report import figures as figs
from iotune.report.tables import Table


@dataclass
class ReportFigure:
    """One figure file of the report.

    ``title`` is the figure's first title line (it starts with the provenance word);
    ``provenance`` (``measured``, ``simulated``, ``replayed``, or two of them joined by
    ``+``) is shown beside the caption when set.
    """

    stem: str
    title: str
    caption: str
    file: str
    width_px: int
    height_px: int
    provenance: str | None = None


@dataclass
class Section:
    """One heading of the page with its figures, tables and notes, in display order.

    ``missing`` says what the data lacks for this section (shown on the page and printed
    in the terminal); ``notes`` are shown on the page only.
    """

    title: str
    items: list[ReportFigure | Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


@dataclass
class Part:
    """A part of the page that is not a backend's tune data: one paper's figures.

    ``provenance`` is the word of the banner's style (``measured``, ``simulated`` or
    ``replayed``); ``banner`` says in a sentence what the numbers are; ``facts`` are
    printed in the terminal.
    """

    key: str
    title: str
    provenance: str
    banner: str
    sections: list[Section]
    facts: dict[str, Any] = field(default_factory=dict)


def write_figure(out: Path, fmt: str, stem: str, figure: Any, caption: str,
                 provenance: str | None = None) -> ReportFigure:
    """Save ``figure`` as ``out/<stem>.<fmt>`` and describe it (title from its suptitle)."""
    name = f"{stem}.{fmt}"
    figs.save(figure, out / name, fmt)
    width, height = figs.pixel_size(figure)
    return ReportFigure(stem, figure.get_suptitle().split("\n")[0], caption, name, width,
                        height, provenance)


def write_table(out: Path, table: Table) -> Table:
    """Write ``table``'s CSV into ``out`` and return it."""
    table.write_csv(out)
    return table
