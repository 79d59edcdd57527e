"""``iotune report``: figures, tables and an HTML page from a store and a tuned YAML.

Modules: :mod:`~iotune.report.data` (what the store holds: datasets, tunes, searches,
provenance), :mod:`~iotune.report.modelfit` (the refitted model and its predictions),
:mod:`~iotune.report.tables`, :mod:`~iotune.report.figures`, :mod:`~iotune.report.html`,
:mod:`~iotune.report.build` (puts them together) and :mod:`~iotune.report.console`.
"""

from __future__ import annotations

from iotune.report.build import FORMATS, Report, build_report, manifest
from iotune.report.console import print_report

__all__ = ["FORMATS", "Report", "build_report", "manifest", "print_report"]
