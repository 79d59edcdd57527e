"""Results to stdout in the format the user asked for: table, json, yaml or csv.

Progress and logs go to stderr (see :func:`progress`), so stdout stays parseable.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click
import yaml

FORMATS = ("table", "json", "yaml", "csv")


def to_plain(value: Any) -> Any:
    """Numpy scalars and other oddities as plain Python values, for JSON and YAML."""
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    if hasattr(value, "__fspath__"):
        return str(value)
    return value


def render_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """A plain aligned text table; missing cells are blank."""
    if not rows:
        return "(no rows)"
    cols = list(columns or dict.fromkeys(k for row in rows for k in row))
    cells = [[format_cell(row.get(c), readable=False) for c in cols] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def render_pairs(pairs: Mapping[str, Any]) -> str:
    """``key: value`` lines aligned on the colon."""
    width = max((len(k) for k in pairs), default=0)
    return "\n".join(f"{k.ljust(width)}  {format_cell(v, readable=False)}"
                     for k, v in pairs.items())


def format_cell(value: Any, *, readable: bool = True) -> str:
    """A table cell as text: None blank, floats to 4 significant digits, mappings as
    ``k=v`` words, anything else as ``str``. ``readable`` shows booleans as yes/no and NaN
    blank (the terminal's tables); without it they stay as Python writes them (``True``,
    ``nan``), as the plain tables of :func:`render_table` and :func:`render_pairs` show them.
    """
    if value is None:
        return ""
    if readable and isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if readable and value != value:  # NaN
            return ""
        return f"{value:.4g}"
    if isinstance(value, Mapping):
        return " ".join(f"{k}={format_cell(v, readable=readable)}" for k, v in value.items())
    return str(value)


def dump(data: Any, fmt: str, rows: Sequence[Mapping[str, Any]] | None = None,
         text: str | None = None) -> str:
    """``data`` as json/yaml; ``rows`` as csv; ``text`` (or a table of rows) for ``table``."""
    if fmt == "json":
        return json.dumps(to_plain(data), indent=2, sort_keys=False)
    if fmt == "yaml":
        return yaml.safe_dump(to_plain(data), sort_keys=False).rstrip()
    if fmt == "csv":
        buffer = io.StringIO()
        table = [to_plain(r) for r in (rows or [])]
        fields = list(dict.fromkeys(k for r in table for k in r))
        writer = csv.DictWriter(buffer, fieldnames=fields)
        writer.writeheader()
        writer.writerows(table)
        return buffer.getvalue().rstrip()
    return text if text is not None else render_table(rows or [])


def emit(data: Any, fmt: str, rows: Sequence[Mapping[str, Any]] | None = None,
         text: str | None = None) -> None:
    click.echo(dump(data, fmt, rows, text))


def progress(message: str) -> None:
    """A progress line on stderr (never on stdout)."""
    click.echo(message, err=True)
    sys.stderr.flush()
