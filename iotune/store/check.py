"""Checking a store line by line, and repairing it by moving the bad lines aside.

:func:`check_store` reads the store's journal and its claims journal (see
:mod:`iotune.store.claims`) from the first byte, without the cache, and lists every line
a reader skips (:mod:`iotune.store.damage`): damaged lines, duplicate records (a record
whose ``id`` an earlier line holds; claims events have no id and are never duplicates) and
an incomplete last line.

:func:`repair_store` does the same under the store's lock, so no writer appends meanwhile,
and then, for each journal with bad lines:

1. writes the bad lines to a new side file beside the journal,
   ``<journal>.rejected-<UTC time>.jsonl``, one JSON object per line: ``line`` (its number
   in the journal), ``reason`` and ``text`` (the line's bytes, those that are not UTF-8 as
   ``\\udcXX`` escapes, so ``text.encode("utf-8", "surrogateescape")`` gives them back
   exactly), and syncs it to disk;
2. writes the other lines, in order and unchanged, to a temporary file beside the journal,
   syncs it and renames it over the journal.

A journal reached through a symbolic link (the store's, or a claims file that is one) is
rewritten where the link leads: the link stays, and every path to the store sees the repair.
Nothing is deleted: every byte of the journal is in one of the two files. The cache sees a
new journal (another inode) and is rebuilt by the next reader; :func:`repair_store`
rebuilds it at once. Readers that hold a byte offset into the old journal (a running
``train``) would be misled, so a repair is for a store no iotune process is writing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from iotune.errors import StoreError
from iotune.execution.outputs import fsync_directory
from iotune.store.cache import open_snapshot
from iotune.store.claims import claims_path
from iotune.store.damage import DAMAGED, DUPLICATE, Damage, id_digest, parse_line
from iotune.store.journal import Store, check_journal_head
from iotune.store.location import check_store_file, follow_link
from iotune.store.lock import beside

INCOMPLETE = "incomplete"


@dataclass(frozen=True)
class BadLine:
    """One line a reader skips: its number (from 1), kind (damaged, duplicate,
    incomplete), why, and its bytes without the newline."""

    number: int
    kind: str
    reason: str
    raw: bytes


@dataclass
class JournalCheck:
    """The check of one journal: ``label`` (store or claims), its complete lines and
    records, and its bad lines in order."""

    journal: Path
    label: str
    lines: int = 0
    records: int = 0
    bad: list[BadLine] = field(default_factory=list)

    @property
    def damage(self) -> Damage:
        incomplete = [b.number for b in self.bad if b.kind == INCOMPLETE]
        return Damage(tuple(b.number for b in self.bad if b.kind == DAMAGED),
                      tuple(b.number for b in self.bad if b.kind == DUPLICATE),
                      incomplete[0] if incomplete else None)

    def summary(self) -> str:
        """``store s.jsonl: 6001 lines, 6000 records; 1 duplicate record ignored (line
        6001)``, or ``...: clean``."""
        head = f"{self.label} {self.journal}: {self.lines} lines, {self.records} records"
        return f"{head}; {self.damage.summary()}" if self.bad else f"{head}; clean"

    def to_json(self) -> dict[str, object]:
        return {"journal": str(self.journal), "kind": self.label, "lines": self.lines,
                "records": self.records,
                "bad_lines": [{"line": b.number, "kind": b.kind, "reason": b.reason}
                              for b in self.bad]}


def check_journal(journal: Path, label: str = "store", *, duplicates: bool = True
                  ) -> JournalCheck:
    """Every line of ``journal`` (absent: no lines), the bad ones listed; with
    ``duplicates``, records whose id an earlier line holds are bad too."""
    report = JournalCheck(journal, label)
    first_of: dict[bytes, int] = {}
    for raw in _lines(journal):
        report.lines += 1
        number = report.lines
        if not raw.endswith(b"\n"):
            report.lines -= 1
            report.bad.append(BadLine(number, INCOMPLETE, "incomplete last line (no "
                                      "newline: a writer killed mid-line)", raw))
            break
        record, reason = parse_line(raw[:-1])
        if record is None:
            report.bad.append(BadLine(number, DAMAGED, reason, raw[:-1]))
            continue
        digest = id_digest(record) if duplicates else None
        if digest is not None:
            first = first_of.setdefault(digest, number)
            if first != number:
                report.bad.append(BadLine(number, DUPLICATE, f"duplicate of the record on "
                                          f"line {first} (id {record.get('id')})", raw[:-1]))
                continue
        report.records += 1
    return report


def _lines(journal: Path) -> Iterator[bytes]:
    try:
        handle = journal.open("rb")
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"store {journal}: cannot read: {exc.strerror}") from None
    with handle:
        yield from handle


def check_store(store: Store) -> list[JournalCheck]:
    """The checks of the store's journal and, when it has one, its claims journal.
    StoreError when the journal is not a store at all (a binary file, say)."""
    check_journal_head(store.path)
    checks = [check_journal(store.path)]
    claims = claims_path(store.path)
    check_store_file(claims, claims)
    if claims.exists():
        checks.append(check_journal(claims, "claims", duplicates=False))
    return checks


@dataclass(frozen=True)
class Moved:
    """What a repair moved: the journal, the side file, and the lines moved."""

    journal: Path
    side_file: Path
    lines: list[BadLine]


def repair_store(store: Store) -> tuple[list[JournalCheck], list[Moved]]:
    """Check the store under its lock and move every bad line of its journals to a side
    file (see the module docstring); the checks as found and what was moved."""
    with store.exclusive():
        checks = check_store(store)
        moved = [_move_aside(check) for check in checks if check.bad]
    if any(m.journal == store.path for m in moved):
        open_snapshot(store.path)  # rebuild the cache of the rewritten journal
    return checks, moved


def _move_aside(check: JournalCheck) -> Moved:
    journal = follow_link(check.journal)  # the file itself, never the link to it
    bad = {b.number: b for b in check.bad}
    side = _side_file(journal)
    try:
        with side.open("x", encoding="utf-8") as out:
            for line in check.bad:
                text = line.raw.decode("utf-8", "surrogateescape")
                out.write(json.dumps({"line": line.number, "reason": line.reason,
                                      "text": text}) + "\n")
            out.flush()
            os.fsync(out.fileno())
        _rewrite(journal, bad)
    except OSError as exc:
        raise StoreError(f"store {journal}: cannot repair: {exc.strerror}; the journal is "
                         f"unchanged") from None
    return Moved(journal, side, check.bad)


def _rewrite(journal: Path, bad: set[int] | dict[int, BadLine]) -> None:
    """Replace ``journal`` by its lines whose numbers are not in ``bad``, atomically."""
    temporary = beside(journal, f".repair-{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as good:
            for number, raw in enumerate(_lines(journal), start=1):
                if number not in bad:
                    good.write(raw)
            good.flush()
            os.fsync(good.fileno())
        os.chmod(temporary, journal.stat().st_mode & 0o7777)
        os.replace(temporary, journal)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    fsync_directory(journal.parent)


def _side_file(journal: Path) -> Path:
    """A name for a new side file beside ``journal``, not taken yet."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    side = beside(journal, f".rejected-{stamp}.jsonl")
    n = 1
    while side.exists():
        n += 1
        side = beside(journal, f".rejected-{stamp}-{n}.jsonl")
    return side
