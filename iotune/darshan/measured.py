"""The signature of what a proxy really did: its kernel run for real, its requests traced.

The proxy search scores kernel configurations by their *analytic* signatures
(:mod:`iotune.darshan.analytic`). To check that the kernel really behaves so, the chosen
proxy is run (through the configured launcher, at a few ranks) with every process under
``strace``, which records each ``pwrite``/``pread``/``write``/``read`` with its file, size
and offset, each ``lseek`` and each ``fsync``: the system calls Darshan's POSIX module
wraps. Those of the files in the kernel's output directory become POSIX counters by
Darshan's rules (size bins; sequential when past the last byte the process accessed for
that operation, consecutive when right after it; read/write switches; the most common
request size) and so a signature computed from what the run did.

strace sees only the POSIX layer, so the measured similarity compares the features that
layer defines (:data:`POSIX_FEATURES`); the predicted similarity beside it is the analytic
signature's over the same features at the same rank count. No Darshan runtime is needed
(none is installed here); strace is, and its absence is a ConfigError naming it.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.darshan.signature import FEATURE_NAMES, signature
from iotune.darshan.similarity import pairwise_similarity
from iotune.errors import ConfigError, DataError
from iotune.workload.counters import FileCounters, size_bin

if TYPE_CHECKING:
    from iotune.config import Config
    from iotune.darshan.analytic import Candidate
    from iotune.execution.launchers import LaunchRequest

#: The features the POSIX layer defines: the ones a traced run's signature can show.
_POSIX_PREFIXES = ("posix_", "consecutive_", "sequential_", "log2_", "write_share",
                   "read_share")
POSIX_FEATURES: tuple[str, ...] = (
    *(name for name in FEATURE_NAMES
      if name.startswith(_POSIX_PREFIXES) and name != "log2_datasets"),
    "shared_file", "rw_switches", "common_access_share", "sync")
#: System calls traced (the POSIX calls Darshan wraps that move data, move the offset or
#: sync, and openat, which starts a file's offset at 0).
TRACED_CALLS = ("openat", "pwrite64", "pread64", "write", "read", "lseek", "fsync",
                "fdatasync")
#: Ranks of the proxy's run unless ``--run-ranks`` says otherwise (a small real run).
DEFAULT_RUN_RANKS = 2
#: Files of the run directory that are iotune's own bookkeeping, not the kernel's I/O.
BOOKKEEPING = ".iotune"

_FD = r"(\d+)<([^>]*)>"
_PCALL = re.compile(rf"^(pwrite64|pread64)\({_FD}, .*, (\d+), (\d+)\) = (\d+)")
_CALL = re.compile(rf"^(write|read)\({_FD}, .*, (\d+)\) = (\d+)")
_SEEK = re.compile(rf"^lseek\({_FD}, -?\d+, SEEK_\w+\) = (\d+)")
_OPEN = re.compile(r"^openat\(.*\) = (\d+)<([^>]*)>")
_SYNC = re.compile(rf"^f(?:data)?sync\({_FD}\) = 0")


@dataclass(frozen=True)
class Request:
    """One traced request of process ``pid``."""

    pid: int
    path: str
    op: str  # "write" or "read"
    offset: int
    length: int


def parse_strace(text: str, pid: int, under: str) -> tuple[list[Request], Counter[str]]:
    """The requests and syncs (per path) of one process's ``strace -y`` output, for files
    whose path starts with ``under``. ``write``/``read`` take the offset the process's
    ``openat``, ``lseek`` and earlier requests left on the descriptor."""
    requests: list[Request] = []
    syncs: Counter[str] = Counter()
    position: dict[int, int] = {}
    for line in text.splitlines():
        if (m := _OPEN.match(line)) is not None:
            position[int(m.group(1))] = 0
        elif (m := _PCALL.match(line)) is not None:
            if m.group(3).startswith(under) and int(m.group(6)) > 0:
                op = "write" if m.group(1) == "pwrite64" else "read"
                requests.append(Request(pid, m.group(3), op, int(m.group(5)), int(m.group(6))))
        elif (m := _CALL.match(line)) is not None:
            fd, done = int(m.group(2)), int(m.group(5))
            start = position.get(fd, 0)
            position[fd] = start + done
            if m.group(3).startswith(under) and done > 0:
                requests.append(Request(pid, m.group(3), m.group(1), start, done))
        elif (m := _SEEK.match(line)) is not None:
            position[int(m.group(1))] = int(m.group(3))
        elif (m := _SYNC.match(line)) is not None and m.group(2).startswith(under):
            syncs[m.group(2)] += 1
    return requests, syncs


def posix_counters(requests: Sequence[Request], syncs: Counter[str],
                   nprocs: int) -> list[FileCounters]:
    """One :class:`FileCounters` (POSIX counters only) per file, by Darshan's rules."""
    by_file: dict[str, list[Request]] = defaultdict(list)
    for request in requests:
        by_file[request.path].append(request)
    files = []
    for path, mine in by_file.items():
        c: dict[str, float] = defaultdict(float)
        sizes: Counter[int] = Counter()
        last: dict[tuple[int, str], int] = {}
        previous_op: dict[int, str] = {}
        for r in mine:
            kind = "WRITE" if r.op == "write" else "READ"
            done = "WRITTEN" if r.op == "write" else "READ"
            c[f"POSIX_{kind}S"] += 1
            c[f"POSIX_BYTES_{done}"] += r.length
            c[f"POSIX_SIZE_{kind}_{size_bin(r.length)}"] += 1
            end = last.get((r.pid, r.op), 0)
            if r.offset == end + 1:
                c[f"POSIX_CONSEC_{kind}S"] += 1
            if r.offset > end:
                c[f"POSIX_SEQ_{kind}S"] += 1
            last[(r.pid, r.op)] = r.offset + r.length - 1
            if previous_op.get(r.pid, r.op) != r.op:
                c["POSIX_RW_SWITCHES"] += 1
            previous_op[r.pid] = r.op
            sizes[r.length] += 1
        size, count = max(sizes.items(), key=lambda kv: (kv[1], kv[0]))
        c["POSIX_ACCESS1_ACCESS"], c["POSIX_ACCESS1_COUNT"] = float(size), float(count)
        c["POSIX_FSYNCS"] = float(syncs.get(path, 0))
        ranks = len({r.pid for r in mine})
        files.append(FileCounters(name=path, ranks=ranks, nprocs=nprocs, posix=dict(c)))
    return sorted(files, key=lambda f: (-f.bytes, f.name))


def read_traces(directory: Path, under: str) -> tuple[list[Request], Counter[str]]:
    """The requests and syncs in every ``strace -ff`` file (``t.PID``) of ``directory``."""
    requests: list[Request] = []
    syncs: Counter[str] = Counter()
    for path in sorted(directory.glob("t.*")):
        pid = int(path.suffix.lstrip("."))
        found, synced = parse_strace(path.read_text(errors="replace"), pid, under)
        requests += [r for r in found if not Path(r.path).name.startswith(BOOKKEEPING)]
        syncs.update(synced)
    return requests, syncs


class TracingLauncher:
    """A launcher whose command runs ``base``'s under ``strace -f -ff -y``, one output file
    per process in ``directory``."""

    def __init__(self, base: Any, directory: Path, strace: str) -> None:
        self.base = base
        self.directory = directory
        self.strace = strace

    def argv(self, request: LaunchRequest) -> list[str]:
        return [self.strace, "-f", "-ff", "-y", "-qq", "-s", "0", "-e",
                f"trace={','.join(TRACED_CALLS)}", "-o", str(self.directory / "t"), "--",
                *self.base.argv(request)]


@dataclass(frozen=True)
class ProxyRun:
    """A proxy run for real: its record and the POSIX counters of its files."""

    record: dict[str, Any]
    files: list[FileCounters]
    ranks: int


def find_strace() -> str:
    """The strace program (ConfigError when absent: it is what measures the run)."""
    found = shutil.which("strace")
    if found is None:
        raise ConfigError("--run: strace not found on PATH; measuring what the proxy does "
                          "traces its system calls (install strace, e.g. apt-get install "
                          "strace)")
    return found


def run_proxy(candidate: Candidate, config: Config, ranks: int) -> ProxyRun:
    """Run ``candidate`` for real at ``ranks`` ranks under strace; DataError when the run
    fails or touches no file."""
    from iotune.backends.base import RunRequest
    from iotune.backends.mpi import MpiBackend
    from iotune.execution.launchers import make_launcher

    strace = find_strace()
    system = config.system
    with tempfile.TemporaryDirectory(prefix="iotune-proxy-trace-") as tmp:
        launcher = TracingLauncher(make_launcher(system.launcher, system.launcher_template),
                                   Path(tmp), strace)
        backend = MpiBackend(config, launcher=launcher)  # type: ignore[arg-type]
        request = RunRequest(candidate.kernel, ranks, candidate.settings(),
                             dict(candidate.args))
        record = backend.measure(request)
        if record.get("status") != "ok" or not record.get("result"):
            raise DataError(f"--run: the proxy's run failed: {record.get('error')}")
        under = str(record["result"].get("output_dir") or system.scratch)
        requests, syncs = read_traces(Path(tmp), under)
    if not requests:
        raise DataError(f"--run: the proxy's run made no traced request under {under}")
    return ProxyRun(record, posix_counters(requests, syncs, ranks), ranks)


def posix_mask() -> np.ndarray:
    """1 for :data:`POSIX_FEATURES`, 0 for the others."""
    return np.array([1.0 if name in POSIX_FEATURES else 0.0 for name in FEATURE_NAMES])


def compare(application: np.ndarray, mask: np.ndarray, candidate: Candidate,
            run: ProxyRun) -> dict[str, Any]:
    """The application's similarity to the proxy as predicted (analytic signature at the
    run's ranks) and as measured (the run's largest file), over the POSIX features left
    by ``mask``; and the measured proxy's similarity to the predicted one."""
    from dataclasses import replace

    from iotune.darshan.analytic import kernel_file

    both = mask * posix_mask()
    predicted = signature(kernel_file(replace(candidate, ranks=run.ranks))) * both
    measured = signature(run.files[0]) * both
    app = application * both
    return {"ranks": run.ranks, "features": [n for n, m in zip(FEATURE_NAMES, both,
                                                              strict=True) if m],
            "predicted_similarity": round(pairwise_similarity(app, predicted), 6),
            "measured_similarity": round(pairwise_similarity(app, measured), 6),
            "model_similarity": round(pairwise_similarity(predicted, measured), 6),
            "measured_file": run.files[0].name, "files": len(run.files),
            "measured_counters": {k: v for k, v in sorted(run.files[0].posix.items()) if v}}

