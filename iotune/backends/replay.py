"""The ``replay`` backend: answers from recorded measurements, for tests and benchmarks.

The data is an iotune store or a CSV with one column per setting (named as iotune names
them), a scale column (``cores``) and a time column (``write_time``; both names can be
mapped in the config's ``backend`` section). A row whose setting cells are all empty is the
default configuration. The searchable space becomes the set of recorded configurations at
the asked scale; asking for one that was not recorded is an error, not a guess. Repeats are
answered by seeded draws among the recorded repeats, without replacement until each was
used (``replay_pick: draw``, :func:`replay_index`), or by their median (``median``).
Records say ``backend: replay`` and carry the data file's sha256.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.base import Backend, RunRequest, register_backend
from iotune.config import Config
from iotune.errors import ConfigError, DataError
from iotune.execution.files import file_sha256
from iotune.inputs import check_regular, read_csv
from iotune.kernel_specs import get_kernel
from iotune.settings.values import SETTINGS, config_key, describe_value, normalise_setting
from iotune.store import now_iso
from iotune.store.index import read_dataframe
from iotune.store.records import (
    EFFECT_PREFIX,
    IDENTITY_COLUMNS,
    IN_EFFECT_PREFIX,
    RESULT_COLUMNS,
)
from iotune.store.source import describe_source
from iotune.store.targets import TARGET_TABLE
from iotune.ui.output import progress


@dataclass(frozen=True)
class Recorded:
    """One recorded configuration: its ranks, settings (empty: the default) and times."""

    cores: int
    settings: dict[str, Any]
    times: list[float]

    @property
    def median(self) -> float:
        """The configuration's true time, as the benchmarks judge it."""
        return float(np.median(self.times))


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _positive_number(value: Any) -> float | None:
    """``value`` as a finite number > 0, else None (missing, NaN, text, <= 0)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def _positive_integer(value: Any) -> int | None:
    """``value`` as an integer > 0 (``4`` and ``4.0`` alike), else None."""
    number = _positive_number(value)
    return int(number) if number is not None and number == int(number) else None


@register_backend
class ReplayBackend(Backend):
    """Recorded times keyed by configuration (:func:`iotune.settings.values.config_key`)."""

    name = "replay"
    provenance = "replayed"
    label = "REPLAYED"
    models = "recorded measurements"

    def __init__(self, config: Config) -> None:

        backend = config.backend
        if backend.replay_data is None:
            raise ConfigError("backend.replay_data: the replay backend needs recorded data "
                              "(an iotune store or a CSV); pass --replay-data FILE")
        path = backend.replay_data
        if not path.exists():
            raise ConfigError(f"backend.replay_data: {path} does not exist")
        check_regular(path, "replay file", ConfigError)
        self.path = path
        self.sha256 = file_sha256(path)
        self.pick = backend.replay_pick
        self.seed = config.tune.seed
        self.system = f"replay of {path.name}"
        is_csv = path.suffix == ".csv"
        frame = read_csv(path, "replay CSV") if is_csv else read_dataframe(path)
        if "kernel" in frame.columns:
            frame = frame[frame["kernel"] == config.kernel.name]
        time_col, cores_col = backend.replay_time_column, backend.replay_cores_column
        for column, key in ((time_col, "replay_time_column"), (cores_col, "replay_cores_column")):
            if column not in frame.columns:
                raise DataError(f"backend.{key}: column '{column}' is not in {path} (columns: "
                                f"{', '.join(map(str, frame.columns))})")
        if is_csv:
            params = [p.name for p in get_kernel(config.kernel.name).params]
            check_columns(frame.columns, path, time_col, cores_col,
                          [*backend.replay_ignore_columns, *params])
        self.setting_columns = [c for c in frame.columns
                                if c in SETTINGS or str(c).startswith("hint.")]
        # Keyed like every configuration in iotune (config_key), as runs of the config's
        # kernel with its arguments.
        self.kernel, self.params = config.kernel.name, dict(config.kernel.args)
        self.table: dict[str, Recorded] = {}
        failed = 0
        for index, row in zip(frame.index, frame.to_dict("records"), strict=True):
            line = int(index) + 2  # the header is line 1
            where = f"backend.replay_data: {path.name}: line {line}"
            if row.get("status", "ok") != "ok":
                failed += 1  # a failed run (an export's or a store's) has no time to replay
                continue
            time = _positive_number(row[time_col])
            if time is None:
                if is_csv:  # a store's failed runs have no time; a CSV row must have one
                    raise DataError(f"{where}: {time_col} {row[time_col]!r} is not a "
                                    "positive number of seconds (fill it or remove the row)")
                continue
            settings = {c: normalise_setting(c, row[c], f"{path.name}: column {c!r}, "
                                                        f"line {line}")
                        for c in self.setting_columns if not _is_missing(row[c])}
            cores = _positive_integer(row[cores_col])
            if cores is None:
                raise DataError(f"{where}: {cores_col} {row[cores_col]!r} is not a positive "
                                "integer number of ranks")
            key = config_key(self.kernel, cores, settings, self.params)
            self.table.setdefault(key, Recorded(cores, settings, [])).times.append(time)
        if not self.table:
            raise DataError(f"backend.replay_data: {path} holds no usable measurement")
        if failed and is_csv:
            progress(f"iotune: replay: {path.name}: {failed} failed run(s) (status not ok) "
                     "left out")

    def source(self) -> str:
        return describe_source(self.name, self.system, data_sha256=self.sha256)

    def recorded(self, cores: int) -> list[Recorded]:
        """Every configuration recorded at ``cores`` ranks (the default's too), in file
        order."""
        return [r for r in self.table.values() if r.cores == cores]

    def scales(self) -> list[int]:
        """The recorded numbers of ranks, ascending."""
        return sorted({r.cores for r in self.table.values()})

    def candidates(self, cores: int) -> list[dict[str, Any]]:
        """The recorded non-default configurations at ``cores`` ranks (settings by name)."""
        return [dict(sorted(r.settings.items())) for r in self.recorded(cores) if r.settings]

    def describe(self, request: RunRequest) -> str:
        return (f"replay ({self.path.name}): {request.kernel} at {request.cores} ranks "
                f"{dict(request.settings)} (REPLAYED, nothing runs)")

    def measure(self, request: RunRequest, rep: int = 0) -> dict[str, Any]:
        # The recording knows settings and ranks only: whatever kernel arguments are asked
        # for, the answer is the recorded run of these settings at these ranks.
        found = self.table.get(config_key(self.kernel, request.cores, request.settings,
                                          self.params))
        if found is None:
            shown = " ".join(f"{k}={describe_value(k, v)}" for k, v in request.settings.items())
            raise DataError(f"replay: {shown or 'the default configuration'} at "
                            f"{request.cores} cores was not recorded in {self.path.name}")
        times = found.times
        if self.pick == "median":
            time = float(np.median(times))
        else:
            time = float(times[replay_index(len(times), self.seed, request.key, rep)])
        spec = get_kernel(request.kernel)
        written = (spec.bytes_per_rank(request.params) * request.cores if spec.knows_bytes
                   else None)
        record = self.base_record(request, rep, self.system)
        record.update(
            fs_type="replayed", finished_at=now_iso(), status="ok", error=None,
            result={
                "replayed": True, "source": str(self.path), "source_sha256": self.sha256,
                "recorded_repeats": len(times), "pick": self.pick,
                "bytes_written": written,
                "times_s": {"open": None, "write": None, "close": None, "total": time},
                "bandwidth_mib_s": written / 2**20 / time if written else None,
            },
        )
        return record


#: Columns a replay CSV may hold besides settings, the scale and the time: the targets'
#: times and what iotune's own exports (``results --export``) add beside them.
KNOWN_EXTRA_COLUMNS = ("kernel", *(target.column for target in TARGET_TABLE.values()),
                       *IDENTITY_COLUMNS, *RESULT_COLUMNS)
#: Prefixes of an export's columns of what took effect (``in_effect.cb_nodes``).
KNOWN_EXTRA_PREFIXES = (IN_EFFECT_PREFIX, EFFECT_PREFIX)


def check_columns(columns: Iterable[Any], path: Path, time_column: str, cores_column: str,
                  ignored: Iterable[str]) -> None:
    """DataError naming the first column of a replay CSV that is neither a setting
    (``hint.<key>`` included), the scale or time column, a known time column nor declared
    ignorable, with the closest setting name: such a column would otherwise be dropped and
    the configurations it tells apart merged into one."""
    allowed = {time_column, cores_column, *KNOWN_EXTRA_COLUMNS, *ignored}
    for column in map(str, columns):
        if (column in SETTINGS or column.startswith(("hint.", *KNOWN_EXTRA_PREFIXES))
                or column in allowed):
            continue
        close = difflib.get_close_matches(column, list(SETTINGS), n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise DataError(f"backend.replay_data: {path.name}: column {column!r} is not a "
                        f"setting, the cores column ({cores_column!r}) or a time column; "
                        f"{hint}to skip it, list it in backend.replay_ignore_columns")


def replay_index(recorded: int, seed: int, key: str, rep: int) -> int:
    """Which of a configuration's ``recorded`` repeats answers repetition ``rep``: the
    ``rep``-th of a permutation seeded by ``seed`` and the configuration's key, starting over
    after the last. So repetitions take different recorded runs while any are left, as runs
    of a real system never repeat a time to the last digit (drawn with replacement, three
    repetitions of a configuration recorded three times would all be the same run one time
    in nine, and the race would read that as no noise at all)."""
    order = np.random.default_rng([seed, int(key, 16) % 2**63]).permutation(recorded)
    return int(order[rep % recorded])
