"""Latency probes: small synchronous writes that tell an idle file system from a busy one.

Wan et al. (section III.A) write 1 MB to every Lustre object storage server every 30 s and
time each write; 1 MB is one bulk RPC, so the latency follows the state of the path to that
server. Here one *round* writes ``size`` bytes (``pwrite`` at offset 0, then ``fsync``) to
each *target* and times write plus fsync:

* on Lustre one file per OST in a fresh directory under scratch, each placed on its OST with
  ``lfs setstripe -i <ost> -c 1`` (the OSTs from ``lfs df``, else the config's ``ost_count``);
* elsewhere one file in a fresh directory under scratch (target ``scratch``).

A round is appended to the store as one record (``campaign: probe``), so a round is recorded
whole or not at all; every few minutes the round also carries job-queue features
(:mod:`iotune.variability.queue`). The probe runs until its duration or round count is
reached, or until SIGTERM or SIGINT: the write in flight completes, a round whose targets
were all written is recorded, an unfinished one is dropped, the probe files and directory
are removed, and :func:`run_probe` returns normally (exit status 0 from the command).

Record of one round::

    {"campaign": "probe", "kind": "latency", "probe_id": "…", "round": 7,
     "backend": "probe", "provenance": "measured", "system": "…", "host": "…",
     "fs_type": "lustre", "size_bytes": 1048576, "interval_s": 30.0,
     "time": 1717171717.25, "started_at": "2024-…",
     "targets": [{"target": "OST0003", "ost": 3, "at": 1717171717.25, "latency_s": 0.0042}],
     "queue": {"running_jobs": 812, …}}          # only on rounds that queried the queue

A target whose write failed has ``latency_s: null`` and ``error``.

**Ground truth: large writes.** Wan et al. check what the small probe predicts against
large writes (64 MB, 256 MB and 1 GB) whose state is what an application meets. With
``large_sizes`` every ``large_every``-th round (the first included) also writes, right after
its small probes, one large write to each target, the sizes taken in turn from round to
round, timed the same way (``pwrite`` + ``fsync``) and truncated away after (untimed). The
round then carries ``large_size_bytes`` and each target ``large_s`` (seconds; null with
``large_error`` when it failed). ``iotune classify`` predicts the state of these writes
when a store has them (:mod:`iotune.variability.classification`).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

import numpy as np

from iotune.errors import ConfigError, DataError, LaunchError
from iotune.execution import slurm
from iotune.store import Store, now_iso
from iotune.variability.queue import snapshot_queue

PROBE_SIZE = 2**20
QUEUE_MODES = ("auto", "squeue", "none")
_OST_RE = re.compile(r"\[OST:(\d+)\]")

ProgressFn = Callable[[str], None]


@functools.lru_cache(maxsize=4)
def _payload(size: int) -> bytes:
    """``size`` incompressible bytes (seeded), the same for every probe of that size."""
    return np.random.default_rng(size).bytes(size)


def check_probe_size(size: int) -> int:
    """``size`` when it is a positive number of bytes; ConfigError otherwise."""
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ConfigError(f"size: {size!r} is not a positive number of bytes")
    return size


def _timed_write(fd: int, data: bytes) -> float:
    """Seconds to ``pwrite`` all of ``data`` at offset 0 of ``fd`` and ``fsync`` it."""
    view = memoryview(data)
    started = time.perf_counter()
    offset = 0
    while offset < len(view):
        offset += os.pwrite(fd, view[offset:], offset)
    os.fsync(fd)
    return time.perf_counter() - started


def probe_once(scratch: Path, size: int = PROBE_SIZE) -> float:
    """Seconds of one synchronous write of ``size`` bytes (``pwrite`` + ``fsync``) to a new
    file in the directory ``scratch``; the file is created before timing and removed after.

    Raises ConfigError when ``scratch`` is not a directory or ``size`` not positive, and
    DataError when the write fails (e.g. the file system is full).
    """
    directory = Path(scratch)
    data = _payload(check_probe_size(size))
    if not directory.is_dir():
        raise ConfigError(f"scratch: {directory} is not a directory")
    try:
        fd, name = tempfile.mkstemp(prefix=".iotune-probe-", dir=directory)
    except OSError as exc:
        raise DataError(f"probe: cannot create a file in {directory}: {exc.strerror}") from None
    try:
        return _timed_write(fd, data)
    except OSError as exc:
        raise DataError(f"probe: writing {size} bytes to {directory} failed: "
                        f"{exc.strerror}") from None
    finally:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def parse_lfs_df(text: str) -> list[int]:
    """OST indices in ``lfs df`` output (the ``[OST:n]`` tags), sorted, without repeats."""
    return sorted({int(m.group(1)) for m in _OST_RE.finditer(text)})


def lustre_osts(scratch: Path, ost_count: int | None, lfs: str = "lfs") -> list[int]:
    """OST indices of the Lustre file system holding ``scratch``: from ``lfs df``, else
    ``0 .. ost_count - 1``. Raises ConfigError when neither gives any."""
    reason = f"{lfs} not found"
    if shutil.which(lfs):
        out = subprocess.run([lfs, "df", str(scratch)], capture_output=True, text=True,
                             timeout=60, check=False)
        indices = parse_lfs_df(out.stdout) if out.returncode == 0 else []
        if indices:
            return indices
        reason = f"'{lfs} df' listed no OST (status {out.returncode})"
    if ost_count:
        return list(range(ost_count))
    raise ConfigError(f"system.ost_count: not set and {reason}; set system.ost_count or "
                      "pass --osts")


def parse_osts(text: str) -> list[int]:
    """``"0-3,7"`` into ``[0, 1, 2, 3, 7]``; raises ConfigError naming the bad part."""
    indices: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise ConfigError(f"--osts: {part!r} is not an OST index or a range like 0-7")
        first, last = int(low), int(high) if dash else int(low)
        if last < first:
            raise ConfigError(f"--osts: {part!r} is an empty range")
        indices.update(range(first, last + 1))
    return sorted(indices)


@dataclass
class ProbeTarget:
    """One probed file: ``ost`` is its OST index on Lustre, None elsewhere."""

    name: str
    path: Path
    ost: int | None
    fd: int = -1


def create_targets(directory: Path, osts: Sequence[int] | None,
                   lfs: str = "lfs") -> list[ProbeTarget]:
    """Create and open the probe files in ``directory`` (which must exist).

    With ``osts`` one file per OST, each made by ``lfs setstripe -i <ost> -c 1``; with
    None one plain file. Files opened so far are closed again when one fails
    (LaunchError without ``lfs``, ConfigError when ``lfs setstripe`` refuses an OST).
    """
    specs: list[tuple[str, int | None]] = (
        [("scratch", None)] if osts is None else [(f"OST{ost:04x}", ost) for ost in osts])
    targets: list[ProbeTarget] = []
    try:
        for name, ost in specs:
            path = directory / name
            if ost is not None:
                _setstripe(lfs, ost, path)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            targets.append(ProbeTarget(name, path, ost, fd))
    except BaseException:
        close_targets(targets)
        raise
    return targets


def _setstripe(lfs: str, ost: int, path: Path) -> None:
    try:
        out = subprocess.run([lfs, "setstripe", "-i", str(ost), "-c", "1", str(path)],
                             capture_output=True, text=True, timeout=60, check=False)
    except FileNotFoundError:
        raise LaunchError(f"lfs: {lfs} not found; Lustre probes need the lfs tool") from None
    if out.returncode != 0:
        reason = (out.stderr.strip().splitlines() or ["no message"])[-1]
        raise ConfigError(f"--osts: 'lfs setstripe -i {ost} -c 1' failed: {reason}")


def close_targets(targets: Sequence[ProbeTarget]) -> None:
    """Close and remove the probe files (missing ones are fine)."""
    for target in targets:
        if target.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(target.fd)
            target.fd = -1
        with contextlib.suppress(FileNotFoundError):
            target.path.unlink()


class StopSignals:
    """Context manager: SIGTERM and SIGINT set :attr:`signal` and wake :meth:`wait` at once.

    The handlers only set a flag (through ``signal.set_wakeup_fd`` a self-pipe wakes the
    ``select`` in :meth:`wait`), so a signal never interrupts a write or a store append half
    way. Outside the main thread no handler is installed and only :meth:`stop` stops.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.signal: int | None = None
        self._stopped = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._previous: dict[int, Any] = {}
        self._previous_fd: int | None = None

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        self._stopped = True
        with contextlib.suppress(OSError):
            os.write(self._write, b"\0")

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signal = signum
        self._stopped = True

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` or until stopped; True when stopped."""
        if not self._stopped and seconds > 0:
            select.select([self._read], [], [], seconds)
        with contextlib.suppress(OSError):
            while os.read(self._read, 512):
                pass
        return self._stopped

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            self._previous_fd = signal.set_wakeup_fd(self._write)
            for signum in self.SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        if self._previous_fd is not None:
            signal.set_wakeup_fd(self._previous_fd)
        os.close(self._read)
        os.close(self._write)


@dataclass(frozen=True)
class ProbeSettings:
    """How to probe: every ``interval_s`` seconds for ``duration_s`` (None: until a signal)
    or ``rounds`` rounds, ``size`` bytes per target; the queue every ``queue_interval_s``
    (``queue``: ``auto`` = when ``squeue`` is on the PATH, ``squeue``, ``none``); large
    writes of ``large_sizes`` (in turn) every ``large_every`` rounds (none when empty)."""

    def large_size(self, round_index: int) -> int | None:
        """The large write of round ``round_index`` (0-based), or None for none."""
        if not self.large_sizes or round_index % self.large_every:
            return None
        return self.large_sizes[(round_index // self.large_every) % len(self.large_sizes)]

    interval_s: float = 30.0
    duration_s: float | None = 3600.0
    size: int = PROBE_SIZE
    rounds: int | None = None
    queue: str = "auto"
    queue_interval_s: float = 300.0
    large_sizes: tuple[int, ...] = ()
    large_every: int = 10

    def __post_init__(self) -> None:
        check_probe_size(self.size)
        for large in self.large_sizes:
            if isinstance(large, bool) or not isinstance(large, int) or large <= 0:
                raise ConfigError(f"--large: {large!r} is not a positive number of bytes")
        if (isinstance(self.large_every, bool) or not isinstance(self.large_every, int)
                or self.large_every < 1):
            raise ConfigError(f"--large-every: {self.large_every!r} is not a positive integer")
        for name in ("interval_s", "queue_interval_s"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigError(f"--{name[:-2].replace('_', '-')}: {value!r} is not a "
                                  "positive duration")
        if self.duration_s is not None and not self.duration_s > 0:
            raise ConfigError(f"--duration: {self.duration_s!r} is not a positive duration")
        if self.rounds is not None and self.rounds < 1:
            raise ConfigError(f"--rounds: {self.rounds!r} is not a positive integer")
        if self.queue not in QUEUE_MODES:
            raise ConfigError(f"--queue: {self.queue!r} is not one of {', '.join(QUEUE_MODES)}")


@dataclass
class ProbeSummary:
    """What a probe session did: rounds recorded and dropped, why it stopped."""

    probe_id: str
    directory: Path
    targets: list[str]
    recorded: int = 0
    dropped: int = 0
    queue_snapshots: int = 0
    stopped_by: str = "duration"
    warnings: list[str] = field(default_factory=list)
    fs_type: str = "unknown"

    def as_dict(self) -> dict[str, Any]:
        """The summary ``iotune probe`` prints (target names counted, not listed)."""
        return {"probe_id": self.probe_id, "stopped_by": self.stopped_by,
                "rounds_recorded": self.recorded, "rounds_dropped": self.dropped,
                "targets": len(self.targets), "queue_snapshots": self.queue_snapshots,
                "fs_type": self.fs_type}


def probe_directory(directory: Path, store: Store, settings: ProbeSettings, *,
                    osts: str | None = None, ost_count: int | None = None,
                    system: str = "local", lfs: str = "lfs",
                    progress: ProgressFn | None = None) -> ProbeSummary:
    """Probe the file system holding ``directory`` with :func:`run_probe`.

    On Lustre the targets are the OSTs ``osts`` names (``"0-7,12"``), by default every OST
    ``lfs df`` lists, else ``0 .. ost_count - 1``; elsewhere one file. Raises ConfigError
    when ``directory`` is not a directory, or ``osts`` is given off Lustre (OSTs cannot be
    chosen there).
    """
    from iotune.execution.fsinfo import filesystem_of, is_lustre

    if not Path(directory).is_dir():
        raise ConfigError(f"system.scratch: {directory} is not a directory")
    fs_type, _ = filesystem_of(directory)
    chosen: list[int] | None = None
    if is_lustre(fs_type):
        chosen = parse_osts(osts) if osts else lustre_osts(directory, ost_count, lfs)
    elif osts:
        raise ConfigError(f"--osts: {directory} is on {fs_type}, not Lustre; OSTs cannot be "
                          "chosen there")
    return run_probe(directory, store, settings, osts=chosen, fs_type=fs_type, system=system,
                     lfs=lfs, progress=progress)


def run_probe(scratch: Path, store: Store, settings: ProbeSettings, *,
              osts: Sequence[int] | None = None, fs_type: str = "unknown",
              system: str = "local", lfs: str = "lfs", squeue: str = "squeue",
              progress: ProgressFn | None = None) -> ProbeSummary:
    """Probe until the duration, round count or a signal; see the module docstring.

    ``osts`` None probes one file in scratch; a list probes those OSTs (Lustre). The probe
    directory ``scratch/iotune-probe-<host>-<pid>-<id>`` and its files are removed on the
    way out, whatever stops the probe. Raises ConfigError when scratch is not a directory,
    StoreError when the store cannot be written.
    """
    scratch = Path(scratch)
    if not scratch.is_dir():
        raise ConfigError(f"system.scratch: {scratch} is not a directory")
    probe_id = uuid.uuid4().hex[:12]
    host = socket.gethostname()
    directory = scratch / f"iotune-probe-{host.split('.')[0]}-{os.getpid()}-{probe_id[:6]}"
    directory.mkdir()
    summary = ProbeSummary(probe_id, directory, [], fs_type=fs_type)
    use_queue = settings.queue == "squeue" or (settings.queue == "auto"
                                               and slurm.squeue_available(squeue))
    base = {"campaign": "probe", "kind": "latency", "probe_id": probe_id, "backend": "probe",
            "provenance": "measured", "system": system, "host": host, "fs_type": fs_type,
            "size_bytes": settings.size, "interval_s": settings.interval_s,
            "slurm_job_id": slurm.job_id()}
    data = _payload(settings.size)
    targets: list[ProbeTarget] = []
    try:
        with StopSignals() as stop:
            targets = create_targets(directory, osts, lfs)
            summary.targets = [t.name for t in targets]
            if progress:
                every = f"every {settings.interval_s:g} s"
                until = (f"for {settings.duration_s:g} s" if settings.duration_s else
                         "until SIGTERM")
                progress(f"iotune: probing {len(targets)} target(s) under {scratch} "
                         f"({fs_type}) with {settings.size} bytes {every} {until}; queue "
                         f"{'on' if use_queue else 'off'}; store {store.path}")
            started = time.monotonic()
            deadline = started + settings.duration_s if settings.duration_s else math.inf
            next_queue = started
            round_index = 0
            while not stop.stopped:
                if settings.rounds is not None and round_index >= settings.rounds:
                    summary.stopped_by = "rounds"
                    break
                round_start = time.monotonic()
                if round_start >= deadline:
                    break
                record: dict[str, Any] = {**base, "round": round_index, "time": time.time(),
                                          "started_at": now_iso()}
                if use_queue and round_start >= next_queue:
                    next_queue = round_start + settings.queue_interval_s
                    try:
                        record["queue"] = snapshot_queue(squeue)
                        summary.queue_snapshots += 1
                    except DataError as exc:
                        if str(exc) not in summary.warnings:
                            summary.warnings.append(str(exc))
                            if progress:
                                progress(f"iotune: warning: {exc}; the probe goes on")
                        if settings.queue == "auto":
                            use_queue = False
                results = _probe_round(targets, data, stop)
                large = settings.large_size(round_index)
                if large is not None and len(results) == len(targets):
                    record["large_size_bytes"] = large
                    _large_writes(targets, results, _payload(large), stop)
                unfinished = large is not None and any(
                    "large_s" not in r and "large_error" not in r for r in results)
                if len(results) < len(targets) or unfinished:
                    summary.dropped += 1
                    break
                record["targets"] = results
                store.append(record)
                summary.recorded += 1
                round_index += 1
                stop.wait(min(round_start + settings.interval_s, deadline) - time.monotonic())
            if stop.signal is not None:
                summary.stopped_by = signal.Signals(stop.signal).name
    finally:
        close_targets(targets)
        with contextlib.suppress(OSError):
            directory.rmdir()
    return summary


def _large_writes(targets: Sequence[ProbeTarget], results: list[dict[str, Any]],
                  data: bytes, stop: StopSignals) -> None:
    """One timed large write per target into its entry of ``results`` (``large_s``, or
    ``large_error``), each file truncated back to empty after it; stops once ``stop`` is
    set (entries without a large write are left as they are)."""
    for target, entry in zip(targets, results, strict=True):
        if stop.stopped:
            return
        try:
            entry["large_s"] = _timed_write(target.fd, data)
        except OSError as exc:
            entry["large_s"] = None
            entry["large_error"] = exc.strerror or str(exc)
        with contextlib.suppress(OSError):
            os.ftruncate(target.fd, 0)


def _probe_round(targets: Sequence[ProbeTarget], data: bytes,
                 stop: StopSignals) -> list[dict[str, Any]]:
    """One timed write per target; stops early (a partial list) once ``stop`` is set."""
    results = []
    for target in targets:
        if stop.stopped:
            break
        entry: dict[str, Any] = {"target": target.name, "ost": target.ost, "at": time.time()}
        try:
            entry["latency_s"] = _timed_write(target.fd, data)
        except OSError as exc:
            entry["latency_s"] = None
            entry["error"] = exc.strerror or str(exc)
        results.append(entry)
    return results
