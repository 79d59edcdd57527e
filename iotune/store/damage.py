"""Damaged and duplicate lines of a JSON-lines journal: what they are and who hears of them.

A line of a journal (the store's, or its claims') is *damaged* when it is not JSON (cut
short, garbled, NUL bytes, garbage appended), or is JSON but not a record (not an object,
or an object without ``schema_version``), or is a store record whose fields cannot be read
as a measurement. A store record is a *duplicate* when an earlier line holds a record with
the same ``id``; the first one counts, every reader skips the others. A last line without
a newline is *incomplete*: a writer killed mid-line (or one writing right now); the next
append seals it, and it becomes a damaged line.

Readers skip such lines and say so: they collect the line numbers in a :class:`Damage` and
pass it to :func:`notice`, which hands it to every listener registered with
:func:`on_damage` (the command line registers one that prints one warning per journal and
command). ``iotune store check`` (:mod:`iotune.store.check`) lists them and moves them
aside.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Kinds of skipped lines, as a segment of the cache records them.
DAMAGED, DUPLICATE = "damaged", "duplicate"
#: Line numbers shown in a warning before "and N more".
SHOWN_LINES = 10


def parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """The record of one journal line (without its newline) and "", or None and why the
    line is not a record."""
    if b"\0" in raw:
        return None, "NUL bytes in the line"
    try:
        value = json.loads(raw)
    except ValueError:  # UnicodeDecodeError among them
        return None, "not JSON (cut short, garbled or garbage)"
    except RecursionError:
        return None, "JSON nested too deeply to read"
    if not isinstance(value, dict):
        return None, f"JSON {type(value).__name__}, not a record"
    if "schema_version" not in value:
        return None, "a JSON object without schema_version, not a record"
    return value, ""


def id_digest(record: dict[str, Any]) -> bytes | None:
    """16 bytes standing for the record's ``id`` (None when it has none), to find
    duplicates without keeping every id's text."""
    ident = record.get("id")
    if ident is None:
        return None
    return hashlib.blake2b(str(ident).encode(), digest_size=16).digest()


@dataclass(frozen=True)
class Damage:
    """The lines of one journal a reader skipped: ``damaged`` and ``duplicates`` (line
    numbers, from 1), and ``incomplete``, the number of an unfinished last line (or None).
    """

    damaged: tuple[int, ...] = ()
    duplicates: tuple[int, ...] = ()
    incomplete: int | None = None

    def __bool__(self) -> bool:
        return bool(self.damaged or self.duplicates or self.incomplete is not None)

    @classmethod
    def of(cls, lines: Sequence[tuple[int, str]], incomplete: int | None = None) -> Damage:
        """From ``(line, kind)`` pairs, kinds :data:`DAMAGED` or :data:`DUPLICATE`."""
        return cls(tuple(n for n, kind in lines if kind == DAMAGED),
                   tuple(n for n, kind in lines if kind == DUPLICATE), incomplete)

    def summary(self) -> str:
        """``2 damaged lines skipped (lines 17, 230); 1 duplicate record ignored (line
        6001)``; empty when nothing was skipped."""
        parts = []
        if self.damaged:
            parts.append(f"{_count(len(self.damaged), 'damaged line')} skipped "
                         f"({line_list(self.damaged)})")
        if self.duplicates:
            parts.append(f"{_count(len(self.duplicates), 'duplicate record')} ignored "
                         f"({line_list(self.duplicates)})")
        if self.incomplete is not None:
            parts.append(f"an incomplete last line not read (line {self.incomplete})")
        return "; ".join(parts)


def line_list(lines: Sequence[int]) -> str:
    """``line 6`` or ``lines 17, 230`` (the first :data:`SHOWN_LINES`, then how many more)."""
    shown = ", ".join(str(n) for n in lines[:SHOWN_LINES])
    more = f" and {len(lines) - SHOWN_LINES} more" if len(lines) > SHOWN_LINES else ""
    return f"line{'s' if len(lines) > 1 else ''} {shown}{more}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


Listener = Callable[[Path, str, Damage], None]
_listeners: list[Listener] = []


def on_damage(listener: Listener) -> Listener:
    """Register ``listener(journal, label, damage)``, called by :func:`notice`; returns it
    (usable as a decorator)."""
    _listeners.append(listener)
    return listener


def notice(journal: Path, label: str, damage: Damage) -> None:
    """Tell every listener that a reader of ``journal`` (a ``store`` or ``claims`` file, as
    ``label`` says) skipped the lines of ``damage``; nothing when it skipped none."""
    if damage:
        for listener in list(_listeners):
            listener(journal, label, damage)
