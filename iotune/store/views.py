"""What readers get from a store snapshot: measurements, flat frames, light records.

Everything here reads the columns of the partitions it is given (see
:mod:`iotune.store.cache`), never the whole store:

- :func:`rows_frame` is the frame :func:`iotune.store.records.frame_of` makes of the same
  measurements (same columns in the same order, same values and dtypes), in store order;
- :func:`measurements_of` and :class:`KeyedMeasurements` give
  :class:`~iotune.store.records.Measurement` values whose ``record`` is read from the journal
  on first use;
- :func:`light_records` gives, for the report, the fields of records it reads by name.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.store.cache import Part
from iotune.store.columns import ABSENT, NULL, NUMBER, Piece, combine, encode
from iotune.store.records import (
    EFFECT_PREFIX,
    IDENTITY_COLUMNS,
    IN_EFFECT_PREFIX,
    Measurement,
    PhaseTimes,
)
from iotune.store.segments import Segment

if TYPE_CHECKING:
    import pandas as pd

#: The columns :meth:`Measurement.row` adds after settings and params, from cached fields.
RESULT_COLUMNS = {"write_time": "@total", "open_time": "@open", "write_phase_time": "@write",
                  "close_time": "@close", "bandwidth_mib_s": "@bandwidth",
                  "bytes_written": "@bytes", "file_size_gib": "@bytes",
                  "read_time": "@read_total", "read_open_time": "@read_open",
                  "read_phase_time": "@read", "read_close_time": "@read_close",
                  "read_bandwidth_mib_s": "@read_bandwidth", "bytes_read": "@bytes_read",
                  "io_time": "@total"}
GIB = 2**30
_IDENTITY = frozenset(IDENTITY_COLUMNS)

RowFilter = Callable[[Part], np.ndarray]


def all_rows(part: Part) -> np.ndarray:
    return np.arange(part.info.rows)


def ok_rows(part: Part) -> np.ndarray:
    """Rows whose status is ``ok`` (what :func:`~iotune.store.records.frame_of` keeps)."""
    return np.flatnonzero(equals(part.piece("status"), "ok"))


def timed_ok_rows(part: Part) -> np.ndarray:
    """Rows whose status is ``ok`` and whose total time is positive (what a report plots)."""
    total = part.piece("@total")
    times = (np.zeros(part.info.rows) if total.numbers is None
             else np.where(total.nulls == NUMBER, total.numbers, 0.0)
             if total.nulls is not None else total.numbers)
    return np.flatnonzero(equals(part.piece("status"), "ok") & (times > 0))


def equals(piece: Piece, value: Any) -> np.ndarray:
    """A mask of the values of ``piece`` equal to ``value`` (a string)."""
    if piece.codes is None or piece.uniques is None:
        return np.zeros(piece.n, dtype=bool)
    codes = [i for i, u in enumerate(piece.uniques) if isinstance(u, str) and u == value]
    return np.isin(piece.codes, codes)


def _selection(parts: Sequence[Part], rows: RowFilter) -> tuple[list[tuple[Part, np.ndarray]],
                                                               np.ndarray]:
    """The chosen rows of each part and the order that puts them in store order."""
    chosen = [(part, picked) for part in parts if len(picked := rows(part))]
    if not chosen:
        return [], np.zeros(0, dtype=np.int64)
    seqs = np.concatenate([_seq(part)[picked] for part, picked in chosen])
    return chosen, np.argsort(seqs, kind="stable")


def _seq(part: Part) -> np.ndarray:
    numbers = part.piece("@seq").numbers
    assert numbers is not None
    return numbers


def _column(pieces: list[Piece], order: np.ndarray) -> np.ndarray | list[Any]:
    values = combine(pieces)
    if isinstance(values, np.ndarray):
        return values[order]
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array[order].tolist()


def rows_frame(parts: Sequence[Part], rows: RowFilter = ok_rows, order_column: bool = False,
               *, wanted: Callable[[str], bool] | None = None, release: bool = False
               ) -> pd.DataFrame:
    """The flat rows (:meth:`Measurement.row`) of the chosen rows of ``parts``, in store
    order; with ``order_column``, an ``order`` column last (the record's position).

    With ``wanted``, only the columns it says yes to (in the same order, with the same
    values): the others are neither built nor read from the cache. With ``release``, each
    segment's columns are released once its parts are read
    (:meth:`~iotune.store.segments.Segment.release`): for a reader that reads them once,
    so what it holds at a time is one segment's columns and the rows taken.
    """
    import pandas as pd

    chosen, order = _selection(parts, rows)
    if not chosen:
        return pd.DataFrame([])
    last = {id(part.segment): i for i, (part, _) in enumerate(chosen)}
    expanded: list[dict[str, Piece]] = []
    taken: list[dict[str, Piece]] = []  # with release: each part's columns, read at once
    firsts: list[tuple[int, list[str], list[str]]] = []
    for i, (part, picked) in enumerate(chosen):
        keyed, seen = _expand(part.piece("@settings").take(picked),
                              part.piece("@params").take(picked), _late(part, picked),
                              _seq(part)[picked])
        expanded.append(keyed)
        firsts.extend(seen)
        if release:
            names = [*IDENTITY_COLUMNS, *RESULT_COLUMNS, *keyed,
                     *(["order"] if order_column else [])]
            taken.append({name: _row_piece(name, part, picked, keyed) for name in names
                          if wanted is None or wanted(name)})
            if last[id(part.segment)] == i:
                part.segment.release()
    ordered = _first_seen(firsts, list(RESULT_COLUMNS), ["order"] if order_column else [])

    def piece(name: str, i: int) -> Piece:
        part, picked = chosen[i]
        if not release:
            return _row_piece(name, part, picked, expanded[i])
        found = taken[i].get(name)
        return found if found is not None else Piece.absent(len(picked))

    data: dict[str, Any] = {}
    for name in ordered:
        if wanted is None or wanted(name):
            data[name] = _column([piece(name, i) for i in range(len(chosen))], order)
    return pd.DataFrame(data)


def _row_piece(name: str, part: Part, picked: np.ndarray, keyed: Mapping[str, Piece]) -> Piece:
    """Column ``name`` of a flat row at the rows ``picked`` of ``part``, whose settings,
    params and late columns :func:`_expand` gave as ``keyed``."""
    if name == "io_time":
        return _sum(part.piece("@total").take(picked), part.piece("@read_total").take(picked))
    if name in RESULT_COLUMNS:
        return _result(name, part.piece(RESULT_COLUMNS[name]).take(picked))
    if name == "order":
        return Piece(len(picked), numbers=_seq(part)[picked])
    identity = part.piece(name).take(picked) if name in _IDENTITY else None
    return _override(keyed.get(name), identity, len(picked))


def row_columns(parts: Sequence[Part], rows: RowFilter = ok_rows,
                order_column: bool = False) -> list[str]:
    """The columns :func:`rows_frame` gives for the same arguments, in the same order,
    without building any column.

    Reads the parts a segment at a time, in store order, and releases each segment's
    columns after it (:meth:`~iotune.store.segments.Segment.release`), so memory does not
    grow with the store.
    """
    order = _ColumnOrder(list(RESULT_COLUMNS), ["order"] if order_column else [])
    for segment, mine in _by_segment(parts):
        firsts: list[tuple[int, list[str], list[str]]] = []
        for part in mine:
            picked = rows(part)
            if len(picked):
                firsts.extend(_expand(part.piece("@settings").take(picked),
                                      part.piece("@params").take(picked), _late(part, picked),
                                      _seq(part)[picked])[1])
        order.add(firsts)
        segment.release()
    return order.columns


def write_rows_csv(parts: Sequence[Part], path: Path, rows: RowFilter = ok_rows, *,
                   keep: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
                   chunk_records: int = 20_000) -> int:
    """Write the rows :func:`rows_frame` would give to the CSV file ``path``, a chunk at a
    time, so memory does not grow with the store; ``keep`` filters each chunk's frame.
    Returns the number of rows written.

    A chunk is a run of whole segments holding at least ``chunk_records`` records (or the
    last ones); its segments are released once it is written, so what is in memory at
    once is about one chunk's rows and columns. The columns are those of the whole
    selection (:func:`row_columns`); a chunk lacking some writes them empty, as the whole
    frame would.
    """
    picked = {id(part): rows(part) for part in parts}  # each part's selection, once
    chosen = partial(_rows_of, picked)
    columns = row_columns(parts, chosen)
    written = 0
    with path.open("w", newline="") as out:
        for chunk in _chunks(_by_segment(parts), chunk_records):
            frame = rows_frame([part for _, mine in chunk for part in mine], chosen)
            for segment, _ in chunk:
                segment.release()
            if keep is not None and not frame.empty:
                frame = keep(frame)
            if frame.empty:
                continue
            frame.reindex(columns=columns).to_csv(out, index=False, header=written == 0)
            written += len(frame)
        if written == 0 and columns:
            out.write(",".join(columns) + "\n")
    return written


def _rows_of(picked: Mapping[int, np.ndarray], part: Part) -> np.ndarray:
    """The rows ``picked`` holds for ``part`` (by its id)."""
    return picked[id(part)]


SegmentParts = tuple[Segment, list[Part]]


def _chunks(segments: Sequence[SegmentParts], records: int) -> Iterator[list[SegmentParts]]:
    """Runs of consecutive ``segments`` holding at least ``records`` records each (the
    last run may hold fewer)."""
    run: list[SegmentParts] = []
    count = 0
    for group in segments:
        run.append(group)
        count += group[0].records
        if count >= records:
            yield run
            run, count = [], 0
    if run:
        yield run


def _by_segment(parts: Sequence[Part]) -> list[SegmentParts]:
    """``parts`` grouped by their segment, segments in store order, parts as given."""
    groups: dict[int, SegmentParts] = {}
    for part in parts:
        groups.setdefault(id(part.segment), (part.segment, []))[1].append(part)
    return sorted(groups.values(), key=lambda group: group[0].first_seq)


class _ColumnOrder:
    """Columns in order of first appearance, as ``pd.DataFrame`` orders a list of rows:
    the first row's keys (identity, settings and params, ``trailing``, hints, ``last``),
    then each key new in a later row at the end.

    Fed the distinct key combinations of a run of rows at a time (:func:`_expand`'s
    ``(first position, keys, late keys)``), runs in store order: each run's positions all
    come after the previous run's.
    """

    def __init__(self, trailing: list[str], last: list[str]) -> None:
        self.trailing, self.last = trailing, last
        self.names: dict[str, None] = {}

    def add(self, firsts: Iterable[tuple[int, list[str], list[str]]]) -> None:
        for _, keys, late in sorted(firsts, key=lambda item: item[0]):
            if not self.names:  # the first row
                self.names.update(dict.fromkeys(IDENTITY_COLUMNS))
                self.names.update((k, None) for k in keys)
                self.names.update(dict.fromkeys(self.trailing))
                self.names.update((k, None) for k in late)
                self.names.update(dict.fromkeys(self.last))
            else:
                self.names.update((k, None) for k in (*keys, *late) if k not in self.names)

    @property
    def columns(self) -> list[str]:
        return list(self.names)


def _first_seen(firsts: list[tuple[int, list[str], list[str]]], trailing: list[str],
                last: list[str]) -> list[str]:
    """Columns in order of first appearance of the combinations ``firsts`` (see
    :class:`_ColumnOrder`)."""
    order = _ColumnOrder(trailing, last)
    order.add(firsts)
    return order.columns


#: Dict columns a row has after its result columns, and the prefix of their keys.
LATE_COLUMNS = (("@in_effect", IN_EFFECT_PREFIX), ("@effects", EFFECT_PREFIX))


def _late(part: Part, picked: np.ndarray) -> list[Piece]:
    return [part.piece(name).take(picked) for name, _ in LATE_COLUMNS]


def _expand(settings: Piece, params: Piece, late: Sequence[Piece], seqs: np.ndarray
            ) -> tuple[dict[str, Piece], list[tuple[int, list[str], list[str]]]]:
    """Settings, params and the :data:`LATE_COLUMNS` as one piece per row column (params
    over settings, as a row has them; late keys with their prefix), and, per distinct
    combination, its first position, its setting and param names in row order and its
    late columns (which a row has after the result columns)."""
    codes = [_codes(settings), _codes(params), *(_codes(piece) for piece in late)]
    values = [settings.uniques or [], params.uniques or [],
              *(piece.uniques or [] for piece in late)]
    # One dense index per distinct combination, a column at a time: a dense index below
    # the row count times a code below 2**31 stays within int64.
    combined = np.zeros(len(seqs), dtype=np.int64)
    for column, known in zip(codes, values, strict=True):
        combined = combined * (len(known) + 1) + column + 1
        _, combined = np.unique(combined, return_inverse=True)
        combined = combined.reshape(-1).astype(np.int64)
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    seen = []
    mappings: dict[str, list[int]] = {}
    uniques: dict[str, list[Any]] = {}
    for i, at in enumerate(first.tolist()):
        dicts = []
        for column, options in zip(codes, values, strict=True):
            code = int(column[at])
            value = options[code] if 0 <= code < len(options) else {}
            dicts.append(value if isinstance(value, dict) else {})
        s, p = dicts[0], dicts[1]
        keys = [k for k in s if k not in _IDENTITY]
        keys += [k for k in p if k not in s and k not in _IDENTITY]
        later = {prefix + k: v for (_, prefix), d in zip(LATE_COLUMNS, dicts[2:], strict=True)
                 for k, v in d.items()}
        seen.append((int(seqs[at]), keys, list(later)))
        for name, value in {**s, **p, **later}.items():
            mapping = mappings.get(name)
            if mapping is None:
                mapping = mappings[name] = [-1] * len(first)
                uniques[name] = []
            mapping[i] = len(uniques[name])
            uniques[name].append(value)
    rows = inverse.reshape(-1)
    keyed = {name: Piece(len(rows), codes=np.array(mapping, dtype=np.int32)[rows],
                         uniques=uniques[name]) for name, mapping in mappings.items()}
    return keyed, seen


def _codes(piece: Piece) -> np.ndarray:
    """Codes of a dict piece (-1 where absent, treated as an empty mapping)."""
    if piece.codes is None:
        return np.full(piece.n, -1, dtype=np.int32)
    return piece.codes


def _override(setting: Piece | None, identity: Piece | None, n: int) -> Piece:
    """The column of a row key: a setting or param where the row has one, else the record's
    identity field (when the name is one), else absent."""
    if setting is None:
        return identity if identity is not None else Piece.absent(n)
    if identity is None:
        return setting
    assert setting.codes is not None
    values = np.where(setting.codes >= 0, setting.objects(absent=None),
                      identity.objects(absent=None)).tolist()
    return encode(values)


def _result(name: str, piece: Piece) -> Piece:
    """A result column of :meth:`Measurement.row` from the cached field it comes from."""
    if name != "file_size_gib":
        return piece
    if piece.numbers is None:
        return Piece(piece.n, codes=np.zeros(piece.n, dtype=np.int32), uniques=[None])
    valid = piece.numbers != 0
    if piece.nulls is not None:
        valid &= piece.nulls == NUMBER
    if not valid.any():
        return Piece(piece.n, codes=np.zeros(piece.n, dtype=np.int32), uniques=[None])
    nulls = None if valid.all() else np.where(valid, NUMBER, NULL).astype(np.int8)
    return Piece(piece.n, numbers=piece.numbers / GIB, nulls=nulls)


def _sum(first: Piece, second: Piece) -> Piece:
    """``first + second`` where both are numbers, else null (``io_time``)."""
    valid = np.zeros(first.n, dtype=bool)
    if first.numbers is not None and second.numbers is not None:
        valid = np.ones(first.n, dtype=bool)
        for piece in (first, second):
            if piece.nulls is not None:
                valid &= piece.nulls == NUMBER
    if not valid.any():
        return Piece(first.n, codes=np.zeros(first.n, dtype=np.int32), uniques=[None])
    assert first.numbers is not None and second.numbers is not None
    total = first.numbers.astype(np.float64) + second.numbers.astype(np.float64)
    nulls = None if valid.all() else np.where(valid, NUMBER, NULL).astype(np.int8)
    return Piece(first.n, numbers=total, nulls=nulls)


def measurements_of(journal: Path, parts: Sequence[Part], rows: RowFilter = all_rows
                    ) -> list[Measurement]:
    """The measurements of the chosen rows of ``parts``, in store order.

    Settings and params dicts are shared between measurements of the same configuration
    (read them, do not change them); ``record`` is read from the journal when first used.
    """
    out: list[tuple[int, Measurement]] = []
    for part, picked in _selection(parts, rows)[0]:
        out.extend(_build(journal, part, picked))
    out.sort(key=lambda item: item[0])
    return [m for _, m in out]


FIELDS = ("cores", "config_key", "rep", "status", "error", "@settings", "@params", "@total",
          "@open", "@write", "@close", "@bandwidth", "@bytes", "@schema", "@state",
          "@offset", "@length", "@seq", "@read_total", "@read_open", "@read", "@read_close",
          "@read_bandwidth", "@bytes_read", "@in_effect", "@effects", "source")


def _build(journal: Path, part: Part, picked: np.ndarray) -> Iterator[tuple[int, Measurement]]:
    _kind, kernel, backend, campaign = part.info.key
    columns = [part.piece(name).take(picked).objects(absent=ABSENT).tolist() for name in FIELDS]
    for (cores, key, rep, status, error, settings, params, total, open_, write, close, bw,
         written, schema, state, offset, length, seq, read_total, read_open, read, read_close,
         read_bw, read_bytes, in_effect, effects, source) in zip(*columns, strict=True):
        yield seq, Measurement(
            kernel=kernel, cores=int(_value(cores) or 0), backend=backend,
            status="" if status is ABSENT else str(status),
            settings=settings if isinstance(settings, dict) else {},
            params=params if isinstance(params, dict) else {},
            config_key=str(_value(key) or ""), campaign=campaign, rep=int(_value(rep) or 0),
            times=PhaseTimes(_value(total), _value(open_), _value(write), _value(close),
                             _value(read_total), _value(read_open), _value(read),
                             _value(read_close)),
            bandwidth_mib_s=_value(bw), bytes_written=_value(written), error=_value(error),
            bytes_read=_value(read_bytes), read_bandwidth_mib_s=_value(read_bw),
            state=_value(state), schema_version=int(schema),
            hints_in_effect=in_effect if isinstance(in_effect, dict) else {},
            effects=effects if isinstance(effects, dict) else {},
            source=str(_value(source) or ""),
            load=partial(read_record, journal, offset, length))


def _value(value: Any) -> Any:
    return None if value is ABSENT else value


def read_record(journal: Path, offset: int, length: int) -> dict[str, Any]:
    """The record on the journal line at ``offset`` ({} if it is no longer there)."""
    try:
        with journal.open("rb") as handle:
            handle.seek(offset)
            record = json.loads(handle.read(length))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


class KeyedMeasurements(Mapping[str, list[Measurement]]):
    """Measurements of ``parts`` (and ``extra``) grouped by configuration key, each group in
    store order; a group is read when asked for."""

    def __init__(self, journal: Path, parts: Sequence[Part], extra: Sequence[Measurement] = ()
                 ) -> None:
        self.journal, self.parts, self.extra = journal, list(parts), list(extra)
        self._codes: list[dict[str, list[int]]] | None = None

    def _index(self) -> list[dict[str, list[int]]]:
        if self._codes is None:
            self._codes = []
            for part in self.parts:
                piece = part.piece("config_key")
                codes: dict[str, list[int]] = {}
                for i, value in enumerate(piece.uniques or []):
                    codes.setdefault(str(value or ""), []).append(i)
                self._codes.append(codes)
        return self._codes

    def __getitem__(self, key: str) -> list[Measurement]:
        found: list[tuple[int, Measurement]] = []
        for part, codes in zip(self.parts, self._index(), strict=True):
            wanted = codes.get(key)
            if wanted:
                piece = part.piece("config_key")
                assert piece.codes is not None
                found.extend(_build(self.journal, part,
                                    np.flatnonzero(np.isin(piece.codes, wanted))))
        found.sort(key=lambda item: item[0])
        out = [m for _, m in found] + [m for m in self.extra if m.config_key == key]
        if not out:
            raise KeyError(key)
        return out

    def __iter__(self) -> Iterator[str]:
        keys: dict[str, None] = {}
        for part in self.parts:
            for value in part.piece("config_key").values():
                keys[str(value or "")] = None
        keys.update((m.config_key, None) for m in self.extra)
        return iter(keys)

    def __len__(self) -> int:
        return sum(1 for _ in self)


#: The record fields :func:`light_records` gives (``@`` names are the cache's).
LIGHT_FIELDS = ("kernel", "cores", "nodes", "config_key", "rep", "status", "@settings",
                "@params", "@tune_id", "@strategy")
_LIGHT_NAMES = tuple(name.lstrip("@") for name in LIGHT_FIELDS)
_LIGHT_INDEX = {name: i for i, name in enumerate(_LIGHT_NAMES)}


class LightRecord(Mapping[str, Any]):
    """The fields of one record :func:`light_records` gives, as a read-only mapping: the
    names of :data:`LIGHT_FIELDS` the record has, and ``result``, a new
    ``{"times_s": {"total": ...}, "bytes_written": ...}`` each time it is asked for.

    Kept as one tuple, so many of them cost little: settings and params are shared with
    the cache's distinct values (read them, do not change them).
    """

    __slots__ = ("_values",)

    def __init__(self, values: tuple[Any, ...]) -> None:
        self._values = values  # the LIGHT_FIELDS (ABSENT where missing), total, bytes

    def __getitem__(self, name: str) -> Any:
        if name == "result":
            return {"times_s": {"total": self._values[-2]}, "bytes_written": self._values[-1]}
        value = self._values[_LIGHT_INDEX[name]]
        if value is ABSENT:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        yield from (name for name, value in zip(_LIGHT_NAMES, self._values, strict=False)
                    if value is not ABSENT)
        yield "result"

    def __len__(self) -> int:
        return sum(1 for _ in self)


def light_records(parts: Sequence[Part], rows: RowFilter = all_rows
                  ) -> list[tuple[int, LightRecord]]:
    """``(position, record)`` of the chosen rows, in store order, each record holding only
    the fields a report groups tune runs by (:class:`LightRecord`: kernel, cores, nodes,
    configuration key, repetition, status, settings, params, ``tune_id``, ``strategy``)
    and ``result`` with the total time and the bytes written; absent fields stay absent."""
    out: list[tuple[int, LightRecord]] = []
    names = (*LIGHT_FIELDS, "@total", "@bytes")
    for part, picked in _selection(parts, rows)[0]:
        columns = [part.piece(name).take(picked).objects(absent=ABSENT).tolist()
                   for name in names]
        seqs = _seq(part)[picked].tolist()
        out.extend(zip(seqs, map(LightRecord, zip(*columns, strict=True)), strict=True))
    out.sort(key=lambda item: item[0])
    return out


def records_at(journal: Path, parts: Sequence[Part]) -> list[dict[str, Any]]:
    """The whole records of every row of ``parts``, read from the journal, in store order."""
    rows: list[tuple[int, int, int]] = []
    for part in parts:
        columns = [part.piece(name).values() for name in ("@seq", "@offset", "@length")]
        rows.extend(zip(*columns, strict=True))
    if not rows:
        return []
    rows.sort()
    out = []
    with journal.open("rb") as handle:
        for _, offset, length in rows:
            handle.seek(offset)
            try:
                record = json.loads(handle.read(length))
            except ValueError:
                continue
            if isinstance(record, dict):
                out.append(record)
    return out
