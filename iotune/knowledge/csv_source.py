"""A replay CSV landscape with its ``FILE.workload.yaml`` sidecar, read into a build.

The CSV is the replay backend's format (:mod:`iotune.backends.replay`): one row per run,
one column per setting named as iotune names it (``hint.<key>`` too), a ``cores`` column,
and the time. A row whose setting cells are all empty is the default configuration. The
time column is ``read_time`` for a sidecar's ``operation: read`` and ``io_time`` for
``both`` when the file has one, otherwise ``write_time`` (the production landscapes keep
read times there). Columns iotune's own exports add (identity and result columns) are
ignored; a ``status`` column leaves out rows that are not ``ok``; a ``provenance`` column
gives each row's provenance (else every row is ``measured``: the runs were measured on
the sidecar's system). Any other column is refused: a misspelt setting would merge the
configurations it tells apart.

The sidecar gives the system and the workload (:func:`iotune.knowledge.descriptor
.from_sidecar`); the ``cores`` column gives the ranks when the sidecar does not, and must
agree with it when it does. A CSV and its sidecar are one source, known by the sha256 of
both: a second build skips them unless either changed.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from iotune.errors import DataError
from iotune.knowledge.descriptor import from_sidecar
from iotune.knowledge.ingest import Loader
from iotune.knowledge.schema import PROVENANCES

#: What a CSV's runs measure, in ``workloads.measure``: the seconds its time column holds.
MEASURE = "recorded_seconds"
#: The scale column.
CORES = "cores"


def sidecar_of(csv: Path) -> Path:
    """``FILE.workload.yaml`` beside ``FILE.csv``."""
    return csv.with_name(csv.stem + ".workload.yaml")


def csv_digest(csv: Path, sidecar: Path) -> tuple[str, int]:
    """The sha256 of a CSV's bytes and its sidecar's, and the CSV's size."""
    from iotune.inputs import read_bytes

    digest = hashlib.sha256()
    data = read_bytes(csv, "replay CSV", DataError)
    digest.update(data)
    digest.update(b"\0")
    digest.update(read_bytes(sidecar, "workload sidecar", DataError))
    return digest.hexdigest(), len(data)


def read_csv_source(loader: Loader, csv: Path, *, label: str | None = None,
                    known: set[str]) -> int | None:
    """Add the runs of ``csv`` (with its sidecar) to ``loader``; the number of runs, or
    None when a source with the same content is in the base already (``known``: content
    hashes of the CSV sources in it, updated). DataError naming the file, the line and
    the rule for a bad sidecar, column, cell or time."""
    from iotune.inputs import read_csv
    from iotune.settings.values import SETTINGS, normalise_setting
    from iotune.store.records import IDENTITY_COLUMNS, RESULT_COLUMNS

    sidecar = sidecar_of(csv)
    if not sidecar.is_file():
        raise DataError(f"{csv}: no workload sidecar {sidecar.name} beside it; a replay CSV "
                        "needs one to say its system and workload (docs/knowledge.md)")
    content, size = csv_digest(csv, sidecar)
    if content in known:
        return None
    system, workload, _ = from_sidecar(sidecar)
    frame = read_csv(csv, "replay CSV")
    columns = [str(c) for c in frame.columns]
    time_column = _time_column(columns, workload.operation)
    if time_column is None:
        raise DataError(f"{csv}: no time column (write_time, or read_time for reads)")
    settings_columns = [c for c in columns if c in SETTINGS or c.startswith("hint.")]
    ignored = {*IDENTITY_COLUMNS, *RESULT_COLUMNS, "kernel", CORES}
    for column in columns:
        if (column not in settings_columns and column not in ignored
                and not column.startswith(("in_effect.", "effect."))):
            raise DataError(f"{csv}: column {column!r} is not a setting, {CORES} or a time "
                            "column (settings are named as iotune names them)")
    source = loader.begin("csv", content, size, label=label)
    runs: dict[tuple[int, str], tuple[list[int], list[float]]] = {}
    configs: dict[tuple[Any, ...], int] = {}
    for index, row in enumerate(frame.itertuples(index=False, name=None)):
        line = index + 2  # the header is line 1
        cells = dict(zip(columns, row, strict=True))
        if "status" in cells and not _missing(cells["status"]) and cells["status"] != "ok":
            continue
        time = _positive(cells[time_column])
        if time is None:
            raise DataError(f"{csv}: line {line}: {time_column} {cells[time_column]!r} is not "
                            "a positive number of seconds")
        provenance = "measured"
        if "provenance" in cells and not _missing(cells["provenance"]):
            provenance = str(cells["provenance"])
            if provenance not in PROVENANCES:
                raise DataError(f"{csv}: line {line}: provenance {provenance!r} is not one "
                                f"of {', '.join(PROVENANCES)}")
        ranks = workload.ranks
        if CORES in cells and not _missing(cells[CORES]):
            cores = _positive(cells[CORES])
            if cores is None or cores != int(cores):
                raise DataError(f"{csv}: line {line}: {CORES} {cells[CORES]!r} is not a "
                                "positive integer number of ranks")
            if ranks is not None and int(cores) != ranks:
                raise DataError(f"{csv}: line {line}: {CORES} {int(cores)} differs from the "
                                f"sidecar's ranks {ranks}")
            ranks = int(cores)
        values = tuple(cells[c] for c in settings_columns)
        config = configs.get(values)
        if config is None:
            settings = {c: normalise_setting(c, v, f"{csv.name}: column {c!r}, line {line}")
                        for c, v in zip(settings_columns, values, strict=True)
                        if not _missing(v)}
            config = configs[values] = loader.config_id(settings)
        key = (ranks or 0, provenance)
        ids, times = runs.setdefault(key, ([], []))
        ids.append(config)
        times.append(time)
    count = 0
    for (ranks, provenance), (ids, times) in runs.items():
        described = replace(workload, ranks=ranks or None)
        loader.add(source, provenance, loader.workload_id(system, described, MEASURE), ids,
                   times)
        count += len(times)
    loader.end(source)
    known.add(content)
    return count


def _time_column(columns: list[str], operation: str | None) -> str | None:
    preferred = {"read": "read_time", "both": "io_time"}.get(operation or "", "write_time")
    for column in (preferred, "write_time"):
        if column in columns:
            return column
    return None


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _positive(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None
