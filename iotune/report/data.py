"""What a report is about, read from a store: the scope, the tunes, the searches, provenance.

A report covers one kernel. Its measurements are split by backend and source (measured,
simulated and replayed numbers are never mixed in one figure, nor runs of two systems, two
MPI libraries or two recorded data sets: see :mod:`iotune.store.source`); each share is a
:class:`Dataset`. Within a dataset, the ``tune`` records of one scale (ranks and kernel
arguments) form a :class:`ScaleTune`: the default configuration (empty settings), and
every other configuration with its repetitions, ranked by median write time.

Search sessions: the records of a tune are in file order (the store appends). A record's
``tune_id`` or ``strategy`` field, when the store has one, says which search it belongs
to; without them a new session starts at each first repetition of the default
configuration (every ``iotune tune`` measures the default first unless it reuses an
earlier measurement of it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, overload

import numpy as np
import pandas as pd

from iotune import __version__
from iotune.backends import known_backends, provenance_of
from iotune.errors import DataError, StoreError
from iotune.settings.units import MIB
from iotune.settings.values import HINT_PREFIX, SETTINGS, config_key, describe_value
from iotune.store import Store, now_iso
from iotune.store.cache import Part, Snapshot, open_snapshot
from iotune.store.columns import Piece
from iotune.store.records import EFFECT_PREFIX, IN_EFFECT_PREFIX, Measurement, PhaseTimes
from iotune.store.segments import MEASUREMENT, OTHER
from iotune.store.source import source_of
from iotune.store.views import all_rows, light_records, records_at, rows_frame, timed_ok_rows

#: Short names for configuration labels; c, s and a are the paper's.
SHORT_NAMES = {
    "stripe_count": "c", "stripe_size": "s", "cb_nodes": "a", "cb_buffer_size": "cb_buf",
    "romio_cb_write": "cb_write", "romio_ds_write": "ds_write", "cb_config_list": "cb_list",
    "alignment": "align", "alignment_threshold": "align_min", "sieve_buf_size": "sieve",
    "meta_block_size": "meta_block", "coll_metadata": "coll_meta", "collective": "coll",
}
#: The campaign of ``iotune probe`` rounds: state probes, not measurements of a kernel.
PROBE_CAMPAIGN = "probe"


def short_name(setting: str) -> str:
    """The short name of a setting in labels (``c`` for ``stripe_count``)."""
    if setting.startswith(HINT_PREFIX):
        return setting[len(HINT_PREFIX):]
    return SHORT_NAMES.get(setting, setting)


def setting_order(name: str) -> tuple[int, str]:
    """Sort key of settings: the catalogue's order (striping, then MPI-IO, then HDF5)."""
    names = list(SETTINGS)
    return (names.index(name) if name in SETTINGS else len(names), name)


def settings_label(settings: Mapping[str, Any], shown: Sequence[str] | None = None) -> str:
    """``c=156 s=8MiB a=80``: the settings (only ``shown`` ones, if given) in catalogue
    order, or ``default`` for none."""
    names = sorted((n for n in settings if shown is None or n in shown), key=setting_order)
    if not settings:
        return "default"
    return " ".join(f"{short_name(n)}={describe_value(n, settings[n])}" for n in names) or "-"


def is_setting_column(name: str) -> bool:
    return name in SETTINGS or name.startswith(HINT_PREFIX)


#: The columns of a flat row (:meth:`Measurement.row`) a report reads besides the settings
#: and what each run read back (see :func:`is_report_column`).
REPORT_COLUMNS = frozenset(("campaign", "cores", "write_time"))


def is_report_column(name: str) -> bool:
    """Whether a report reads the flat-row column ``name``: the campaign, the ranks, the
    write time, every setting, and the hints in effect and whether each setting took
    effect. A dataset's frame holds only these, so it stays small however many runs."""
    return (name in REPORT_COLUMNS or is_setting_column(name)
            or name.startswith((IN_EFFECT_PREFIX, EFFECT_PREFIX)))


@dataclass(frozen=True)
class Provenance:
    """Where the numbers of one dataset come from, shown on every page and figure."""

    kernel: str
    backend: str
    systems: tuple[str, ...]
    runs: int
    failed: int
    campaigns: tuple[tuple[str, int], ...]
    first_recorded: str | None
    last_recorded: str | None
    store: str
    #: The source of every run (:mod:`iotune.store.source`); one dataset holds one.
    source: str = ""
    #: 1, 2, ... when the backend's runs come from several sources (one dataset each, in
    #: that order), else 0.
    variant: int = 0
    iotune_version: str = __version__
    generated_at: str = field(default_factory=now_iso)

    @property
    def provenance(self) -> str:
        """The backend's provenance word: ``measured``, ``simulated`` or ``replayed``
        (:func:`iotune.backends.provenance_of`)."""
        return provenance_of(self.backend)

    @property
    def title_word(self) -> str:
        """``Measured``, ``Simulated`` or ``Replayed``: the first word of figure titles,
        numbered when the backend has several sources (``Replayed (source 2)``)."""
        word = self.provenance.capitalize()
        return f"{word} (source {self.variant})" if self.variant else word

    @property
    def system(self) -> str:
        return ", ".join(self.systems) or "unknown system"

    @property
    def tag(self) -> str:
        """``<kernel>-<backend>``, and ``-<variant>`` when the backend has several sources:
        the part of file names that tells datasets apart."""
        variant = f"-{self.variant}" if self.variant else ""
        return f"{self.kernel}-{self.backend}{variant}"

    def line(self) -> str:
        """One line for figure footers."""
        return (f"{self.provenance} ({self.source or self.backend + ' backend'}) on "
                f"{self.system} | kernel {self.kernel} | {self.runs} runs | iotune "
                f"{self.iotune_version} | {self.generated_at[:10]}")

    def pairs(self) -> dict[str, Any]:
        """The provenance as labelled fields, for tables."""
        campaigns = ", ".join(f"{n} {c}" for c, n in self.campaigns)
        dates = (f"{self.first_recorded} to {self.last_recorded}"
                 if self.first_recorded else "")
        return {
            "backend": f"{self.backend} ({self.provenance})",
            "source": self.source,
            "system": self.system,
            "kernel": self.kernel,
            "runs": f"{self.runs} successful ({campaigns}); {self.failed} failed",
            "recorded": dates,
            "store": self.store,
            "iotune version": self.iotune_version,
            "report date": self.generated_at,
        }


@dataclass
class ConfigResult:
    """Every successful measurement of one configuration at one scale."""

    settings: dict[str, Any]
    times: list[float]
    bytes_written: int
    first: int
    predicted: float | None = None

    @property
    def is_default(self) -> bool:
        return not self.settings

    @property
    def median(self) -> float:
        return float(statistics.median(self.times))

    @property
    def bandwidth(self) -> float:
        """MiB/s at the median time."""
        return self.bytes_written / MIB / self.median

    @property
    def bandwidth_range(self) -> tuple[float, float]:
        """(lowest, highest) MiB/s over the repetitions."""
        return (self.bytes_written / MIB / max(self.times),
                self.bytes_written / MIB / min(self.times))


@dataclass
class ScaleTune:
    """The tune records of one scale: the default and the configurations searched."""

    cores: int
    nodes: int | None
    params: dict[str, Any]
    default: ConfigResult | None
    configs: list[ConfigResult]
    runs: int
    failed: int

    @property
    def best(self) -> ConfigResult | None:
        """The searched configuration with the lowest median time (as ``iotune tune``)."""
        return self.configs[0] if self.configs else None

    @property
    def speedup(self) -> float | None:
        if self.best is None or self.default is None:
            return None
        return self.default.median / self.best.median

    @property
    def speedup_range(self) -> tuple[float, float] | None:
        """(lowest, highest) speedup over any pair of repetitions."""
        if self.best is None or self.default is None:
            return None
        return (min(self.default.times) / max(self.best.times),
                max(self.default.times) / min(self.best.times))

    @property
    def bytes_written(self) -> int:
        source = self.best or self.default
        return source.bytes_written if source else 0

    @property
    def file_size_gib(self) -> float:
        return self.bytes_written / 2**30

    @property
    def label(self) -> str:
        return f"{self.cores} ranks"


@dataclass
class SearchSession:
    """One search at one scale: best-so-far bandwidth after each run, in run order.

    ``best`` is None until a searched (non-default) configuration has succeeded; the best
    is by median time over the repetitions so far, as ``iotune tune`` picks it.
    """

    cores: int
    label: str
    best: list[float | None]
    default_bandwidth: float | None


@dataclass
class Dataset:
    """One backend's share of the kernel's measurements.

    ``frame`` has a row per successful run with a positive write time, in store order,
    holding the columns a report reads (:func:`is_report_column`) of the run's flat row.
    """

    provenance: Provenance
    frame: pd.DataFrame
    tunes: list[ScaleTune]
    sessions: list[SearchSession]

    @property
    def backend(self) -> str:
        return self.provenance.backend

    def without_rows(self) -> Dataset:
        """This dataset's provenance alone (no runs, tunes or searches): what is kept of a
        dataset once its part of the report is written."""
        return dataclasses.replace(self, frame=self.frame.iloc[0:0], tunes=[], sessions=[])

    @property
    def train_frame(self) -> pd.DataFrame:
        return self.frame[self.frame["campaign"] == "train"]

    def setting_columns(self) -> list[str]:
        return [c for c in self.frame.columns if is_setting_column(str(c))]


class StoreRecords(Sequence[Mapping[str, Any]]):
    """The records of a store as a report reads them: through the store's cache
    (:mod:`iotune.store.cache`), so counting kernels and building one kernel's datasets
    read only the columns they need; indexing or iterating reads whole records from the
    journal."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._records: list[dict[str, Any]] | None = None

    def __len__(self) -> int:
        return self.snapshot.records

    def _all(self) -> list[dict[str, Any]]:
        if self._records is None:
            self._records = records_at(self.snapshot.journal, self.snapshot.parts(None))
        return self._records

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | Sequence[Mapping[str, Any]]:
        return self._all()[index]

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self._all())

    def kernel_counts(self) -> dict[str, int]:
        """Records per kernel (``None`` for records without one), from partition sizes;
        probe rounds are not measurements and do not count."""
        counts: dict[str, int] = {}
        for part in self.snapshot.parts(None):
            if part.info.kind in (MEASUREMENT, OTHER) and part.info.key[3] != PROBE_CAMPAIGN:
                counts[part.info.key[1]] = counts.get(part.info.key[1], 0) + part.info.rows
        return counts

    def probe_round_count(self) -> int:
        """How many probe rounds (campaign ``probe``) the store holds, from partition
        sizes (nothing is read)."""
        return sum(part.info.rows
                   for part in self.snapshot.parts(OTHER, campaign=PROBE_CAMPAIGN))

    def probe_rounds(self) -> list[dict[str, Any]]:
        """The whole records of the probe rounds (campaign ``probe``), in store order."""
        parts = self.snapshot.parts(OTHER, campaign=PROBE_CAMPAIGN)
        return records_at(self.snapshot.journal, parts) if parts else []


def read_records(store_path: str | os.PathLike[str]) -> StoreRecords:
    """Every record of the store in file order (read through its cache).

    StoreError when there is no store there; DataError when it holds no iotune record.
    """
    store = Store(store_path)
    if not store.exists():
        raise StoreError(f"store {store.path}: no such file; pass --store PATH or -c CONFIG "
                         "(run 'iotune train' or 'iotune tune' to make one)")
    records = StoreRecords(open_snapshot(store.path))
    if not len(records):
        raise DataError(f"store {store.path}: no iotune measurements in it (empty, or not an "
                        "iotune store); run 'iotune train' or 'iotune tune' first")
    return records


def kernel_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Measurements per kernel among ``records`` (probe rounds do not count)."""
    return _kernel_counts(records)


def _kernel_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    if isinstance(records, StoreRecords):
        return records.kernel_counts()
    counts: dict[str, int] = {}
    for record in records:
        if record.get("campaign") == PROBE_CAMPAIGN:
            continue
        name = str(record.get("kernel"))
        counts[name] = counts.get(name, 0) + 1
    return counts


def choose_kernel(records: Iterable[Mapping[str, Any]], *, kernel: str | None,
                  tuned_kernel: str | None, config_kernel: str | None, store: str) -> str:
    """The kernel to report on: ``--kernel``, else the tuned file's, else the config's
    (when the store has it), else the store's only kernel. DataError otherwise."""
    counts = _kernel_counts(records)
    known = ", ".join(sorted(counts))
    for wanted, where in ((kernel, "--kernel"), (tuned_kernel, "the tuned file's kernel")):
        if wanted:
            if wanted not in counts:
                raise DataError(f"store {store}: no measurements of kernel '{wanted}' "
                                f"({where}); kernels there: {known}")
            return wanted
    if config_kernel and config_kernel in counts:
        return config_kernel
    if len(counts) == 1:
        return next(iter(counts))
    raise DataError(f"store {store}: measurements of several kernels ({known}); choose one "
                    "with --kernel")


def build_datasets(records: Sequence[Mapping[str, Any]], kernel: str, store: str,
                   first_backend: str | None = None,
                   first_source: str | None = None) -> list[Dataset]:
    """The datasets of ``kernel``, one per backend and source with a successful
    measurement.

    ``first_backend`` (e.g. the tuned file's) comes first, and within it ``first_source``;
    then mpi, sim, replay, each backend's sources in the order of their first run.
    DataError when the kernel has no successful measurement at all.
    """
    if isinstance(records, StoreRecords):
        return _cached_datasets(records.snapshot, kernel, store, first_backend, first_source)
    mine = [(i, r) for i, r in enumerate(records) if r.get("kernel") == kernel]
    backends = sorted({str(r.get("backend")) for _, r in mine},
                      key=lambda b: (b != first_backend, _backend_rank(b), b))
    datasets = []
    for backend in backends:
        chosen = [(i, r) for i, r in mine if r.get("backend") == backend]
        ok = [(i, r) for i, r in chosen if r.get("status") == "ok" and _has_time(r)]
        sources = _source_order([source_of(r) for _, r in ok], first_source)
        for variant, source in _variants(sources):
            datasets.append(_dataset(
                backend, kernel, [(i, r) for i, r in chosen if source_of(r) == source],
                [(i, r) for i, r in ok if source_of(r) == source], store, source, variant))
    if not datasets:
        failed = len(mine)
        raise DataError(f"store {store}: none of the {failed} measurement(s) of kernel "
                        f"'{kernel}' succeeded; see 'iotune results --failed'")
    return datasets


def _source_order(sources: Iterable[str], first: str | None) -> list[str]:
    """The distinct ``sources`` in order of first appearance, ``first`` ahead."""
    distinct = list(dict.fromkeys(sources))
    return sorted(distinct, key=lambda source: source != first)


def _variants(sources: list[str]) -> list[tuple[int, str]]:
    """``(variant, source)``: variant 0 for a lone source, else 1, 2, ..."""
    if len(sources) == 1:
        return [(0, sources[0])]
    return list(enumerate(sources, 1))


def _cached_datasets(snapshot: Snapshot, kernel: str, store: str,
                     first_backend: str | None, first_source: str | None) -> list[Dataset]:
    """:func:`build_datasets` from the cache's partitions of ``kernel``, one backend and
    source at a time, reading only the columns a dataset shows; the columns read are
    released after each dataset, so what stays in memory is the datasets themselves."""
    mine = snapshot.parts(MEASUREMENT, kernel=kernel)
    backends = sorted({part.info.key[2] for part in mine},
                      key=lambda b: (b != first_backend, _backend_rank(b), b))
    datasets = []
    for backend in backends:
        parts = [part for part in mine if part.info.key[2] == backend]
        sources = _source_order(
            (str(source) for part in parts
             for source in _distinct(part.piece("source").take(timed_ok_rows(part)))),
            first_source)
        snapshot.release()
        for variant, source in _variants(sources):
            same = partial(_of_source, source)
            ok = [(part, same(part, timed_ok_rows(part))) for part in parts]
            runs = sum(len(rows) for _, rows in ok)
            recorded = sum(len(same(part, all_rows(part))) for part in parts)
            provenance = _cached_provenance(kernel, backend, ok, store,
                                            failed=recorded - runs, source=source,
                                            variant=variant)
            timed = {id(part): rows for part, rows in ok}
            frame = rows_frame(parts, partial(_rows_of, timed), wanted=is_report_column,
                               release=True)
            tune_records = light_records(
                [part for part in parts if part.info.key[3] == "tune"],
                partial(_source_rows, source))
            datasets.append(Dataset(provenance, frame, scale_tunes(tune_records),
                                    search_sessions(tune_records)))
            del tune_records
            snapshot.release()
    if not datasets:
        raise DataError(f"store {store}: none of the {sum(p.info.rows for p in mine)} "
                        f"measurement(s) of kernel '{kernel}' succeeded; see 'iotune results "
                        "--failed'")
    return datasets


def _source_rows(source: str, part: Part) -> np.ndarray:
    """Every row of ``part`` whose measurement's source is ``source``."""
    return _of_source(source, part, all_rows(part))


def _of_source(source: str, part: Part, rows: np.ndarray) -> np.ndarray:
    """Those of ``rows`` of ``part`` whose measurement's source is ``source``."""
    piece = part.piece("source").take(rows)
    if piece.codes is not None and piece.uniques is not None:
        codes = [i for i, value in enumerate(piece.uniques) if str(value) == source]
        return rows[np.isin(piece.codes, codes)]
    values = piece.values()
    return rows[np.fromiter((str(v) == source for v in values), dtype=bool, count=len(rows))]


def _rows_of(rows: Mapping[int, np.ndarray], part: Part) -> np.ndarray:
    """The rows ``rows`` holds for ``part`` (by its id)."""
    return rows[id(part)]


def _cached_provenance(kernel: str, backend: str, ok: list[tuple[Part, np.ndarray]],
                       store: str, failed: int, source: str, variant: int) -> Provenance:
    """The :class:`Provenance` of the rows ``ok`` of each part (the dataset's runs), read
    a part at a time from its distinct values; each part's segment is released after."""
    campaigns: dict[str, int] = {}
    systems: set[str] = set()
    stamps: set[str] = set()
    for part, rows in ok:
        if not len(rows):
            continue
        for name in part.piece("campaign").take(rows).values():
            campaigns[str(name)] = campaigns.get(str(name), 0) + 1
        systems.update(str(v) for v in _distinct(part.piece("system").take(rows)) if v)
        stamps.update(str(v) for v in _distinct(part.piece("recorded_at").take(rows)) if v)
        part.segment.release()
    return Provenance(
        kernel=kernel, backend=backend, systems=tuple(sorted(systems)),
        runs=sum(len(rows) for _, rows in ok), failed=failed,
        campaigns=tuple(sorted(campaigns.items())),
        first_recorded=min(stamps) if stamps else None,
        last_recorded=max(stamps) if stamps else None, store=store, source=source,
        variant=variant)


def _distinct(piece: Piece) -> list[Any]:
    """The distinct values of ``piece`` (None for null or absent), each once."""
    if piece.codes is None or piece.uniques is None:
        return list(set(piece.values()))
    codes = np.unique(piece.codes)
    return [piece.uniques[c] if c >= 0 else None for c in codes.tolist()]


def _backend_rank(backend: str) -> int:
    """Where ``backend``'s datasets come in a report: in the order backends are offered
    (:func:`iotune.backends.known_backends`), those of other names last."""
    order = known_backends()
    return order.index(backend) if backend in order else len(order)


def _has_time(record: Mapping[str, Any]) -> bool:
    total = PhaseTimes.of_record(record).total
    return total is not None and total > 0


def _total(record: Mapping[str, Any]) -> float:
    """The write's time of a record that :func:`_has_time`."""
    return float(PhaseTimes.of_record(record).total or 0.0)


def _dataset(backend: str, kernel: str, chosen: list[tuple[int, Mapping[str, Any]]],
             ok: list[tuple[int, Mapping[str, Any]]], store: str, source: str,
             variant: int) -> Dataset:
    frame = pd.DataFrame([Measurement.from_record(record).row() for _, record in ok])
    frame = frame[[c for c in frame.columns if is_report_column(str(c))]]
    campaigns: dict[str, int] = {}
    for _, record in ok:
        name = str(record.get("campaign"))
        campaigns[name] = campaigns.get(name, 0) + 1
    stamps = sorted(str(r["recorded_at"]) for _, r in ok if r.get("recorded_at"))
    provenance = Provenance(
        kernel=kernel, backend=backend,
        systems=tuple(sorted({str(r.get("system")) for _, r in ok if r.get("system")})),
        runs=len(ok), failed=len(chosen) - len(ok),
        campaigns=tuple(sorted(campaigns.items())),
        first_recorded=stamps[0] if stamps else None,
        last_recorded=stamps[-1] if stamps else None, store=store, source=source,
        variant=variant)
    tune_records = [(i, r) for i, r in chosen if r.get("campaign") == "tune"]
    return Dataset(provenance, frame, scale_tunes(tune_records), search_sessions(tune_records))


def configuration_key(record: Mapping[str, Any]) -> str:
    """The configuration a record measured: its ``config_key`` (see
    :func:`iotune.settings.values.config_key`), computed for records written without one."""
    return str(record.get("config_key") or config_key(
        str(record.get("kernel", "")), int(record.get("cores") or 0),
        record.get("settings") or {}, record.get("params") or {}))


def _scale_key(record: Mapping[str, Any]) -> tuple[int, str]:
    params = json.dumps(record.get("params") or {}, sort_keys=True, default=str)
    return int(record.get("cores") or 0), params


def scale_tunes(records: Sequence[tuple[int, Mapping[str, Any]]]) -> list[ScaleTune]:
    """The tune records (``(file position, record)``) grouped by scale, sorted by cores."""
    groups: dict[tuple[int, str], list[tuple[int, Mapping[str, Any]]]] = {}
    for item in records:
        groups.setdefault(_scale_key(item[1]), []).append(item)
    tunes = []
    for (cores, params), items in sorted(groups.items()):
        configs: dict[str, ConfigResult] = {}
        failed = 0
        nodes = None
        for order, record in items:
            nodes = record.get("nodes") or nodes
            if record.get("status") != "ok" or not _has_time(record):
                failed += 1
                continue
            settings = dict(record.get("settings") or {})
            key = configuration_key(record)
            result = record["result"]
            entry = configs.setdefault(
                key, ConfigResult(settings, [], int(result.get("bytes_written") or 0), order))
            entry.times.append(_total(record))
        default_key = next((k for k, c in configs.items() if not c.settings), None)
        default = configs.pop(default_key) if default_key is not None else None
        ranked = sorted(configs.values(), key=lambda c: (c.median, c.first))
        tunes.append(ScaleTune(cores, nodes, json.loads(params), default, ranked,
                               runs=len(items), failed=failed))
    return tunes


def search_sessions(records: Sequence[tuple[int, Mapping[str, Any]]]) -> list[SearchSession]:
    """Best-so-far bandwidth after each run of each search (see the module docstring)."""
    sessions: list[tuple[int, str, list[Mapping[str, Any]]]] = []
    current: dict[tuple[int, str], list[Mapping[str, Any]]] = {}
    tagged: dict[tuple[int, str, str], list[Mapping[str, Any]]] = {}
    for _, record in sorted(records, key=lambda item: item[0]):
        scale = _scale_key(record)
        tag = record.get("tune_id") or record.get("strategy")
        if tag:
            label = str(record.get("strategy") or f"search {tag}")
            tagged.setdefault((*scale, str(tag)), []).append(record)
            if len(tagged[(*scale, str(tag))]) == 1:
                sessions.append((scale[0], label, tagged[(*scale, str(tag))]))
            continue
        starts = not record.get("settings") and int(record.get("rep") or 0) == 0
        if starts or scale not in current:
            current[scale] = []
            sessions.append((scale[0], "", current[scale]))
        current[scale].append(record)
    out = []
    numbers: dict[int, int] = {}
    seen: dict[tuple[int, str], int] = {}
    for cores, label, items in sessions:
        numbers[cores] = numbers.get(cores, 0) + 1
        name = label or f"search {numbers[cores]}"
        seen[(cores, name)] = seen.get((cores, name), 0) + 1
        if seen[(cores, name)] > 1:
            name = f"{name} ({seen[(cores, name)]})"
        out.append(_session(cores, name, items))
    return sorted(out, key=lambda session: session.cores)


def _session(cores: int, label: str, records: Sequence[Mapping[str, Any]]) -> SearchSession:
    """Best-so-far after each run. A configuration counts once its repetitions are done
    (as many as the most measured configuration of the search has, or the next run is of
    another configuration), at its median time, as ``iotune tune`` ranks them; so the
    curve never falls."""
    counts: dict[str, int] = {}
    for record in records:
        if record.get("settings"):
            key = configuration_key(record)
            counts[key] = counts.get(key, 0) + 1
    repetitions = max(counts.values(), default=1)
    best: list[float | None] = []
    default_times: list[float] = []
    default_size = 0
    current: float | None = None
    pending: list[float] = []
    pending_runs = 0
    pending_key: str | None = None
    pending_size = 0

    def settle() -> None:
        nonlocal current, pending, pending_runs
        if pending:
            bandwidth = pending_size / MIB / statistics.median(pending)
            current = bandwidth if current is None else max(current, bandwidth)
        pending, pending_runs = [], 0

    for record in records:
        settings = record.get("settings") or {}
        key = configuration_key(record)
        if key != pending_key:
            settle()
            pending_key = key
        ok = record.get("status") == "ok" and _has_time(record)
        if ok and not settings:
            default_times.append(_total(record))
            default_size = int(record["result"].get("bytes_written") or 0)
        elif settings:
            pending_runs += 1
            if ok:
                pending.append(_total(record))
                pending_size = int(record["result"].get("bytes_written") or 0)
            if pending_runs >= repetitions:
                settle()
                pending_key = None
        best.append(current)
    settle()
    if best:
        best[-1] = current
    default_bw = (default_size / MIB / statistics.median(default_times)
                  if default_times else None)
    return SearchSession(cores, label, best, default_bw)
