"""Terminal output: rich tables and progress bars, or plain text when not on a terminal.

Tables go to stdout, progress to stderr (so stdout stays parseable). Rich styling is used
only when the stream is a terminal, ``NO_COLOR`` is not set and the caller did not ask for
plain output (``--no-color``); otherwise tables are the aligned text of
:func:`iotune.ui.output.render_table` and progress is one line per step.

Progress for a command::

    with make_progress(len(tasks), "train", enabled=True) as bar:
        for task in tasks:
            ...
            bar.advance(f"{task.cores} ranks: 812 MiB/s")
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import IO, Any

from iotune.ui.output import format_cell, render_table


def is_rich(stream: IO[str] | None = None, no_color: bool = False) -> bool:
    """Whether output to ``stream`` (default stdout) should be styled by rich.

    False with ``no_color``, when ``NO_COLOR`` is set (https://no-color.org), when ``TERM``
    is ``dumb`` or when the stream is not a terminal.
    """
    if no_color or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    target = stream if stream is not None else sys.stdout
    try:
        return bool(target.isatty())
    except (AttributeError, ValueError):  # closed or fake streams
        return False


def print_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
                title: str | None = None, *, no_color: bool = False,
                stream: IO[str] | None = None) -> None:
    """Print ``rows`` (dicts) as a table with ``columns`` (default: every key, first seen first).

    Rich box table on a terminal; otherwise the title on its own line and a plain aligned
    table, so redirected output is stable text. An empty ``rows`` prints ``(no rows)``.
    """
    out = stream if stream is not None else sys.stdout
    cols = list(columns or dict.fromkeys(k for row in rows for k in row))
    if not is_rich(out, no_color):
        text = render_table([{c: format_cell(r.get(c)) for c in cols} for r in rows], cols)
        out.write((f"{title}\n" if title else "") + text + "\n")
        out.flush()
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left", header_style="bold")
    for column in cols:
        numeric = all(isinstance(r.get(column), int | float) or r.get(column) is None
                      for r in rows)
        table.add_column(column, justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(format_cell(row.get(c)) for c in cols))
    Console(file=out).print(table)


def print_pairs(pairs: Mapping[str, Any], title: str | None = None, *, no_color: bool = False,
                stream: IO[str] | None = None) -> None:
    """Print ``key: value`` lines (a two-column table without a header on a terminal)."""
    out = stream if stream is not None else sys.stdout
    if not is_rich(out, no_color):
        width = max((len(k) for k in pairs), default=0)
        lines = [f"{k.ljust(width)}  {format_cell(v)}" for k, v in pairs.items()]
        out.write((f"{title}\n" if title else "") + "\n".join(lines) + "\n")
        out.flush()
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    for key, value in pairs.items():
        table.add_row(key, format_cell(value))
    Console(file=out).print(table)


class Progress:
    """A progress bar over ``total`` steps (None: unknown), used as a context manager.

    :meth:`advance` moves one step on and shows ``text`` (the latest step's outcome);
    :meth:`log` prints a line above the bar without moving it. Plain mode writes
    ``description [i/total] text`` lines; a disabled progress writes nothing.
    """

    def __init__(self, total: int | None, description: str, *, enabled: bool = True,
                 rich_output: bool = False, stream: IO[str] | None = None) -> None:
        self.total = total
        self.description = description
        self.enabled = enabled
        self.completed = 0
        self._stream = stream if stream is not None else sys.stderr
        self._rich = enabled and rich_output
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if self._rich:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[text]}"),
                console=Console(file=self._stream), transient=False)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total, text="")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
            self._bar = None

    def advance(self, text: str = "", steps: int = 1) -> None:
        """Count ``steps`` more steps done and show ``text`` beside the bar."""
        self.completed += steps
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, advance=steps, text=text)
            return
        of = f"/{self.total}" if self.total is not None else ""
        width = len(str(self.total)) if self.total is not None else 1
        line = f"{self.description} [{self.completed:>{width}}{of}]"
        self._write(f"{line} {text}".rstrip())

    def move_to(self, completed: int) -> None:
        """Set the steps done to ``completed`` (steps others did count too), printing
        nothing."""
        self.completed = completed
        if self._bar is not None:
            self._bar.update(self._task, completed=completed)

    def log(self, text: str) -> None:
        """A line of its own (above the bar on a terminal)."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            self._write(text)

    def _write(self, line: str) -> None:
        self._stream.write(line + "\n")
        self._stream.flush()


def make_progress(total: int | None, description: str, enabled: bool = True, *,
                  no_color: bool = False, stream: IO[str] | None = None) -> Progress:
    """A :class:`Progress` on ``stream`` (default stderr): a rich bar on a terminal, plain
    lines otherwise or with ``no_color``, nothing when not ``enabled``."""
    out = stream if stream is not None else sys.stderr
    return Progress(total, description, enabled=enabled, rich_output=is_rich(out, no_color),
                    stream=out)
