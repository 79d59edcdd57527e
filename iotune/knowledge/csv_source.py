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
from typing import TYPE_CHECKING, Any

from iotune.errors import DataError
from iotune.knowledge.descriptor import from_sidecar
from iotune.knowledge.ingest import Loader
from iotune.knowledge.schema import PROVENANCES

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

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
    from iotune.settings.values import SETTINGS
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
    frame = _usable_rows(frame, csv)
    times = _times(frame, time_column, csv)
    provenances = _provenances(frame, csv)
    ranks = _ranks(frame, csv, workload.ranks)
    config_ids = _config_ids(loader, frame, settings_columns, csv)
    count = 0
    for scale in sorted(set(ranks.tolist())):
        for provenance in sorted(set(provenances.tolist())):
            rows = (ranks == scale) & (provenances == provenance)
            if not rows.any():
                continue
            described = replace(workload, ranks=int(scale) or None)
            loader.add(source, str(provenance),
                       loader.workload_id(system, described, MEASURE),
                       config_ids[rows], times[rows])
            count += int(rows.sum())
    loader.end(source)
    known.add(content)
    return count


def _usable_rows(frame: pd.DataFrame, csv: Path) -> pd.DataFrame:
    """The rows of runs that finished (a ``status`` column other than ``ok`` leaves a row
    out), with each row's line number in the file as the index."""
    frame = frame.set_axis(range(2, len(frame) + 2))  # the header is line 1
    if "status" in frame.columns:
        status = frame["status"]
        frame = frame[status.isna() | (status == "ok")]
    return frame


def _first_bad(frame: pd.DataFrame, bad: np.ndarray) -> tuple[int, Any]:
    """The file line and the position of the first row ``bad`` marks."""
    import numpy as np

    index = int(np.flatnonzero(bad)[0])
    return int(frame.index[index]), index


def _times(frame: pd.DataFrame, column: str, csv: Path) -> np.ndarray:
    import numpy as np
    import pandas as pd

    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        line, index = _first_bad(frame, bad)
        raise DataError(f"{csv}: line {line}: {column} {frame[column].iloc[index]!r} is not a "
                        "positive number of seconds")
    return values


def _provenances(frame: pd.DataFrame, csv: Path) -> np.ndarray:
    import numpy as np

    if "provenance" not in frame.columns:
        return np.full(len(frame), "measured", dtype=object)
    values = frame["provenance"].fillna("measured").astype(str).to_numpy(dtype=object)
    bad = ~np.isin(values, PROVENANCES)
    if bad.any():
        line, index = _first_bad(frame, bad)
        raise DataError(f"{csv}: line {line}: provenance {values[index]!r} is not one of "
                        f"{', '.join(PROVENANCES)}")
    return values


def _ranks(frame: pd.DataFrame, csv: Path, given: int | None) -> np.ndarray:
    """Each row's ranks: the ``cores`` cell, else the sidecar's (0: unknown)."""
    import numpy as np
    import pandas as pd

    if CORES not in frame.columns:
        return np.full(len(frame), given or 0, dtype=np.int64)
    raw = frame[CORES]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    missing = raw.isna().to_numpy()
    bad = ~missing & ~(np.isfinite(values) & (values > 0) & (values == np.round(values)))
    if bad.any():
        line, index = _first_bad(frame, bad)
        raise DataError(f"{csv}: line {line}: {CORES} {raw.iloc[index]!r} is not a positive "
                        "integer number of ranks")
    values = np.where(missing, given or 0, values).astype(np.int64)
    if given is not None:
        differ = values != given
        if differ.any():
            line, index = _first_bad(frame, differ)
            raise DataError(f"{csv}: line {line}: {CORES} {int(values[index])} differs from "
                            f"the sidecar's ranks {given}")
    return values


def _config_ids(loader: Loader, frame: pd.DataFrame, columns: list[str], csv: Path
                ) -> np.ndarray:
    """Each row's configuration id: the distinct rows of settings cells are normalised
    once each (:func:`iotune.settings.values.normalise_setting`; ConfigError naming the
    column and line of a bad cell); empty cells are settings left unset."""
    import numpy as np

    from iotune.settings.values import normalise_setting

    if not columns:
        return np.full(len(frame), loader.config_id({}), dtype=np.int32)
    import pandas as pd

    cells = frame[columns]
    # Rows with equal cells hash equal (empty cells too); 64-bit hashes of a file's few
    # configurations do not collide in practice, and a hash per row is vectorised where
    # a group-by over columns of mixed types is not.
    hashes = pd.util.hash_pandas_object(cells, index=False).to_numpy()
    _, first, groups = np.unique(hashes, return_index=True, return_inverse=True)
    ids = np.empty(len(first), dtype=np.int32)
    for group, (index, row) in enumerate(zip(first, cells.iloc[first].to_dict("records"),
                                             strict=True)):
        line = int(frame.index[index])
        settings = {str(c): normalise_setting(str(c), v, f"{csv.name}: column {c!r}, "
                                                         f"line {line}")
                    for c, v in row.items() if not _missing(v)}
        ids[group] = loader.config_id(settings)
    return ids[groups]


def _time_column(columns: list[str], operation: str | None) -> str | None:
    preferred = {"read": "read_time", "both": "io_time"}.get(operation or "", "write_time")
    for column in (preferred, "write_time"):
        if column in columns:
            return column
    return None


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))

