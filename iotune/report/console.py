"""The report's key tables in the terminal: provenance, Table 3, top configurations, terms,
and the facts of each paper part."""

from __future__ import annotations

from typing import IO

from iotune.report.build import Report
from iotune.report.tables import Table, display_rows
from iotune.ui.terminal import print_pairs, print_table

#: Rows of a top-configurations table printed in the terminal (the page has them all).
TERMINAL_TOP = 10


def print_report(report: Report, *, no_color: bool = False, stream: IO[str] | None = None,
                 ) -> None:
    """Print each dataset's provenance and its terminal tables (see ``Table.terminal``),
    then each paper part's facts and what its sections miss."""
    for part in report.parts:
        prov = part.dataset.provenance
        print_pairs(prov.pairs(), title=f"{prov.title_word} data: {prov.kernel} on "
                    f"{prov.system}", no_color=no_color, stream=stream)
        _blank(stream)
        for section in part.sections:
            for item in section.items:
                if isinstance(item, Table) and item.terminal:
                    rows = list(display_rows(item))
                    if item.stem.startswith("top"):
                        rows = rows[:TERMINAL_TOP] + [r for r in rows[TERMINAL_TOP:]
                                                      if r.get("rank") == "default"]
                    print_table(rows, title=item.title, no_color=no_color, stream=stream)
                    if item.note and item.stem.startswith("model-terms"):
                        print_pairs({"formula": item.note}, no_color=no_color, stream=stream)
                    _blank(stream)
            for note in section.missing:
                print_pairs({"missing": note}, no_color=no_color, stream=stream)
    for paper in report.papers:
        print_pairs(paper.facts, title=paper.title, no_color=no_color, stream=stream)
        _blank(stream)
        for section in paper.sections:
            for note in section.missing:
                print_pairs({"missing": note}, no_color=no_color, stream=stream)


def _blank(stream: IO[str] | None) -> None:
    import sys

    (stream or sys.stdout).write("\n")
