"""A store read through its cache: :class:`StoreIndex` for ``tune`` and ``train``, and the
flat frame of a store (:func:`read_dataframe`, :func:`write_csv`).

Both read through the store's cache (:mod:`iotune.store.cache`): only the partitions asked
for (kernel, backend, campaign) are loaded, and a measurement's ``record`` is read from the
journal when first used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.errors import StoreError
from iotune.store.cache import Part, Snapshot, open_snapshot
from iotune.store.journal import Store
from iotune.store.records import Measurement
from iotune.store.segments import OTHER, MemorySegment, build_segment
from iotune.store.views import (
    KeyedMeasurements,
    all_rows,
    measurements_of,
    ok_rows,
    records_at,
    rows_frame,
    write_rows_csv,
)

if TYPE_CHECKING:
    import pandas as pd


def read_dataframe(path: str | os.PathLike[str], include_failed: bool = False, *,
                   kernel: str | None = None, use_cache: bool = True) -> pd.DataFrame:
    """The store at ``path`` as a DataFrame, one row per (successful) measurement (only of
    ``kernel`` if given), in store order: the frame :func:`records_to_dataframe` makes of
    the store's records, read through the cache unless ``use_cache`` is False.

    Raises StoreError when there is no store at ``path``.
    """
    store = Store(path)
    if not store.exists():
        raise StoreError(f"store {store.path}: no such file")
    snapshot = open_snapshot(store.path, use_cache=use_cache)
    return rows_frame(snapshot.parts(kernel=kernel), all_rows if include_failed else ok_rows)


def write_csv(path: str | os.PathLike[str], out: str | os.PathLike[str],
              include_failed: bool = False, *, kernel: str | None = None,
              keep: Callable[[pd.DataFrame], pd.DataFrame] | None = None) -> int:
    """Write the rows :func:`read_dataframe` would give (those ``keep`` leaves of each
    chunk) to the CSV file ``out``, in chunks, so memory stays flat however large the
    store; returns the number of rows. Raises StoreError when there is no store at ``path``.
    """
    store = Store(path)
    if not store.exists():
        raise StoreError(f"store {store.path}: no such file")
    snapshot = open_snapshot(store.path)
    return write_rows_csv(snapshot.parts(kernel=kernel), Path(out),
                          all_rows if include_failed else ok_rows, keep=keep)


class StoreIndex:
    """Every measurement of one store as it was when the index was made, kept current as
    this process appends (records other processes append later are not seen).

    Answers by kernel, backend and campaign, reading only those partitions of the store's
    cache; storage-probe rounds (``campaign: probe``, see :mod:`iotune.variability.probe`)
    and other records without a kernel are kept apart in :attr:`probes`.
    """

    def __init__(self, store: Store, *, use_cache: bool = True) -> None:
        self.store = store
        self.snapshot: Snapshot = open_snapshot(store.path, use_cache=use_cache)
        self.appended: list[Measurement] = []
        self._all: list[Measurement] | None = None
        self._probes: list[dict[str, Any]] | None = None
        self._tail: MemorySegment | None = None
        self._snapshot_frames: dict[tuple[str, str], pd.DataFrame] = {}

    @property
    def measurements(self) -> list[Measurement]:
        """Every measurement, in store order."""
        if self._all is None:
            self._all = self.select()
        return [*self._all, *self.appended]

    @property
    def probes(self) -> list[dict[str, Any]]:
        """Every record that is not a measurement (probe rounds), in store order."""
        if self._probes is None:
            self._probes = records_at(self.snapshot.journal, self.snapshot.parts(OTHER))
        return self._probes

    def append(self, record: dict[str, Any]) -> Measurement:
        """Store ``record`` durably and index it; the measurement as written."""
        if record.get("campaign") == "probe" or "kernel" not in record:
            raise ValueError("only measurements are appended through the index")
        measurement = Measurement.from_record(self.store.append(record))
        self.appended.append(measurement)
        self._tail = None
        return measurement

    def __iter__(self) -> Iterator[Measurement]:
        return iter(self.measurements)

    def _parts(self, *, kernel: str | None = None, backend: str | None = None,
               campaign: str | None = None) -> list[Part]:
        return self.snapshot.parts(kernel=kernel, backend=backend, campaign=campaign)

    def _appended(self, *, kernel: str | None = None, backend: str | None = None,
                  campaign: str | None = None) -> list[Measurement]:
        return [m for m in self.appended
                if (kernel is None or m.kernel == kernel)
                and (backend is None or m.backend == backend)
                and (campaign is None or m.campaign == campaign)]

    def select(self, *, kernel: str | None = None, backend: str | None = None,
               campaign: str | None = None) -> list[Measurement]:
        """Measurements matching every given field, in store order."""
        if self._all is not None and kernel is None and backend is None and campaign is None:
            return self.measurements
        filters = {"kernel": kernel, "backend": backend, "campaign": campaign}
        return [*measurements_of(self.snapshot.journal, self._parts(**filters)),
                *self._appended(**filters)]

    def by_key(self, *, backend: str, campaign: str) -> Mapping[str, list[Measurement]]:
        """Measurements of ``backend`` in ``campaign`` grouped by configuration key, as they
        are now (later appends are not added); a group is read when first asked for."""
        return KeyedMeasurements(self.snapshot.journal,
                                 self._parts(backend=backend, campaign=campaign),
                                 self._appended(backend=backend, campaign=campaign))

    def training_frame(self, kernel: str, backend: str) -> pd.DataFrame:
        """Successful measurements of ``kernel`` by ``backend`` (every campaign), flat: the
        frame :func:`frame_of` makes of them.

        A search asks for it after every batch, and only its own appends change between
        asks: the snapshot's rows are built into a frame once, and each ask joins the
        appended rows to it (:func:`_join_frames`), rebuilding the whole only when a
        column's type cannot be told from the two parts'.
        """
        parts = self._parts(kernel=kernel, backend=backend)
        base = self._snapshot_frames.get((kernel, backend))
        if base is None:
            base = self._snapshot_frames[(kernel, backend)] = rows_frame(parts)
        tail_parts = []
        if self.appended:
            tail = self._tail_segment()
            tail_parts = [Part(tail, i, info) for i, info in enumerate(tail.partitions)
                          if info.key[1:3] == (kernel, backend)]
        if not tail_parts:
            return base.copy(deep=False)  # copy-on-write: the caller may change its frame
        joined = _join_frames(base, rows_frame(tail_parts))
        return rows_frame(parts + tail_parts) if joined is None else joined

    def _tail_segment(self) -> MemorySegment:
        """The measurements this index appended, as a segment after the snapshot's."""
        if self._tail is None:
            data = b"".join(json.dumps(m.record, sort_keys=True, default=str).encode() + b"\n"
                            for m in self.appended)
            self._tail = build_segment(data, self.snapshot.end, self.snapshot.records)
        return self._tail


def _join_frames(head: pd.DataFrame, tail: pd.DataFrame) -> pd.DataFrame | None:
    """The frame :func:`~iotune.store.views.rows_frame` makes of two runs of rows, ``head``
    before ``tail``, given the frame it makes of each; None when that cannot be told from
    them.

    Columns come in order of first appearance (``head``'s, then those new in ``tail``). A
    column's type is inferred from all its values, so it is known from the parts' only when
    both have the same type (a mix of text and missing values stays text, of objects
    objects, of ints ints), or both are numbers, or one part lacks the column and the other
    has numbers (floats then, with NaN). Otherwise (text beside a part without the column,
    say) the caller rebuilds the whole.
    """
    import pandas as pd

    if head.empty or tail.empty:
        return (tail if head.empty else head).copy(deep=False)
    numbers = ("int64", "float64")
    for column in dict.fromkeys([*head.columns, *tail.columns]):
        kinds = [str(part[column].dtype) if column in part.columns else None
                 for part in (head, tail)]
        if kinds[0] == kinds[1]:
            continue
        if all(kind is None or kind in numbers for kind in kinds):
            continue
        return None
    columns = [*head.columns, *(c for c in tail.columns if c not in head.columns)]
    joined = pd.concat([head, tail], ignore_index=True)
    return joined[columns] if list(joined.columns) != columns else joined


