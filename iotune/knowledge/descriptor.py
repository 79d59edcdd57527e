"""The workload descriptor: what a workload is, the same whatever produced its runs.

A descriptor says what the I/O does, not how it was tuned: the operation, how many bytes
each rank moves, the ranks and ranks per node, files and datasets per job, the access
pattern and the I/O layer. Fields a source does not know are None; similarity
(:mod:`iotune.knowledge.similarity`) compares only what both sides know. The keys are
documented in ``docs/knowledge.md`` so that anyone can write one.

Where a descriptor comes from:

- :func:`from_sidecar`: a ``FILE.workload.yaml`` beside a replay CSV (or a production
  journal), its keys :data:`SIDECAR_KEYS`;
- :func:`of_kernel`: a built-in kernel's arguments (``vpic``, ``ior``), or for the
  ``command`` kernel the preload library's report of one run, when one is given;
- :func:`of_signature`: the Darshan signature ``iotune profile`` computes of a file.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from iotune.errors import DataError

#: The keys of a ``FILE.workload.yaml`` sidecar (the production data's README) read into a
#: descriptor or a system; no other key is read.
SIDECAR_KEYS = ("system", "file_system", "mpi", "layer", "operation", "ranks", "ranks_per_node",
                "files", "datasets", "bytes_per_rank_per_dataset", "bytes_per_rank", "source")

#: What a run times: the write, the read, or both (a write then its read, timed together).
OPERATIONS = ("write", "read", "both")
#: The interface the application's I/O goes through.
LAYERS = ("posix", "mpiio", "hdf5")
#: How one rank's bytes lie in the file: one run, or runs with other ranks' data between.
PATTERNS = ("contiguous", "strided")
#: Longest text a sidecar's text key may hold (a name, not a document).
MAX_TEXT = 200

#: The descriptor's integer fields (positive integers, where known).
_COUNTS = ("ranks", "ranks_per_node", "files", "datasets", "bytes_per_rank",
           "bytes_per_rank_per_dataset", "request_bytes")


@dataclass(frozen=True)
class SystemKey:
    """Where the runs were measured: ``name`` (``cori``), ``file_system`` (``lustre``),
    ``mpi`` (library, with its version where known) and the I/O ``layer`` is the
    workload's. Tunes use knowledge only of the same ``name`` and ``file_system``; a base
    keeps both in lower case and a query compares them so."""

    name: str
    file_system: str | None = None
    mpi: str | None = None

    def text(self) -> str:
        return self.name + (f"/{self.file_system}" if self.file_system else "")


@dataclass(frozen=True)
class WorkloadDescriptor:
    """What one workload does. ``operation``: ``write``, ``read`` or ``both``; ``layer``:
    ``posix``, ``mpiio`` or ``hdf5``; ``pattern``: ``contiguous`` or ``strided``;
    ``collective``: whether the ranks use collective I/O; ``request_bytes``: a typical
    request's size. ValueError when a known field breaks its rule (a constructor is
    code's; data goes through :func:`from_sidecar`, which says which key)."""

    operation: str | None = None
    layer: str | None = None
    ranks: int | None = None
    ranks_per_node: int | None = None
    files: int | None = None
    datasets: int | None = None
    bytes_per_rank: int | None = None
    bytes_per_rank_per_dataset: int | None = None
    pattern: str | None = None
    collective: bool | None = None
    request_bytes: int | None = None

    def __post_init__(self) -> None:
        for name, allowed in (("operation", OPERATIONS), ("layer", LAYERS),
                              ("pattern", PATTERNS)):
            value = getattr(self, name)
            if value is not None and value not in allowed:
                raise ValueError(f"{name}: {value!r} is not one of {', '.join(allowed)}")
        for name in _COUNTS:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value <= 0):
                raise ValueError(f"{name}: {value!r} is not a positive integer")

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def text(self) -> str:
        """``write hdf5 512 ranks 16.5 MiB/rank`` (what is known)."""
        parts = [p for p in (self.operation, self.layer) if p]
        if self.ranks:
            parts.append(f"{self.ranks} ranks")
        if self.bytes_per_rank:
            parts.append(f"{self.bytes_per_rank / 2**20:.3g} MiB/rank")
        return " ".join(parts) or "(nothing known)"


# -- sidecars ------------------------------------------------------------------------------

def from_sidecar(path: str | os.PathLike[str]
                 ) -> tuple[SystemKey, WorkloadDescriptor, str | None]:
    """The system, workload and ``source`` text of the sidecar ``path``.

    Reads the file through iotune's safe YAML loader (size and nesting limits) and exactly
    the keys of :data:`SIDECAR_KEYS`; a key may be left out (unknown), except ``system``.
    DataError, one line naming the file, the key and the rule, when the file is not a
    mapping, holds another key (a misspelt key would otherwise be lost), or a value is of
    the wrong kind: text keys hold text, counts positive integers, ``operation`` and
    ``layer`` one of their words (:data:`OPERATIONS`, :data:`LAYERS`).
    """
    from iotune.inputs import load_yaml

    name = os.fspath(path)
    doc = load_yaml(path, "workload sidecar", DataError)
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise DataError(f"{name}: a workload sidecar is a mapping of keys "
                        f"({', '.join(SIDECAR_KEYS)}), not a {type(doc).__name__}")
    for key in doc:
        if key not in SIDECAR_KEYS:
            close = difflib.get_close_matches(str(key), SIDECAR_KEYS, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise DataError(f"{name}: {key!r} is not a workload sidecar key (known: "
                            f"{', '.join(SIDECAR_KEYS)}){hint}")
    text = {key: _text(doc, key, name) for key in
            ("system", "file_system", "mpi", "layer", "operation", "source")}
    if text["system"] is None:
        raise DataError(f"{name}: system: missing; a sidecar names the system its runs were "
                        "measured on")
    for key, allowed in (("operation", OPERATIONS), ("layer", LAYERS)):
        value = text[key]
        if value is not None:
            value = text[key] = value.lower()
            if value not in allowed:
                raise DataError(f"{name}: {key}: {value!r} is not one of {', '.join(allowed)}")
    system = SystemKey(str(text["system"]).lower(), _lower(text["file_system"]), text["mpi"])
    workload = WorkloadDescriptor(
        operation=text["operation"], layer=text["layer"], ranks=_count(doc, "ranks", name),
        ranks_per_node=_count(doc, "ranks_per_node", name), files=_count(doc, "files", name),
        datasets=_count(doc, "datasets", name),
        bytes_per_rank=_count(doc, "bytes_per_rank", name),
        bytes_per_rank_per_dataset=_count(doc, "bytes_per_rank_per_dataset", name))
    return system, workload, text["source"]


def _text(doc: Mapping[str, Any], key: str, name: str) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{name}: {key}: {value!r} is not a non-empty text")
    if len(value) > MAX_TEXT or "\n" in value.strip():
        raise DataError(f"{name}: {key}: is not one line of at most {MAX_TEXT} characters")
    return value.strip()


def _count(doc: Mapping[str, Any], key: str, name: str) -> int | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise DataError(f"{name}: {key}: {value!r} is not a positive integer")
    return value


def _lower(value: str | None) -> str | None:
    return value.lower() if value is not None else None


# -- kernels -------------------------------------------------------------------------------

def of_kernel(kernel: str, params: Mapping[str, Any], cores: int, ranks_per_node: int | None,
              *, report: Mapping[str, Any] | None = None) -> WorkloadDescriptor:
    """The descriptor of runs of a built-in ``kernel`` with arguments ``params`` (absent
    ones take their defaults) at ``cores`` ranks, ``ranks_per_node`` of them per node.

    - ``vpic``, ``ior`` (a spec that knows its bytes): what its spec's
      :meth:`~iotune.kernel_specs.spec.KernelSpec.workload` says (``vpic``: HDF5, one
      shared file, 8 datasets per timestep, contiguous slabs written collectively;
      ``ior``: its ``api`` layer, one file or one per rank, strided or contiguous,
      requests of ``transfer_size``);
    - ``command`` (a user's program): the ranks only, unless ``report`` (the preload
      library's report of one of its runs, ``result.preload`` of a record) says which
      open moved the data: then its layer (``MPI_File_open``: mpiio, ``H5F*``: hdf5), the
      operation (what it wrote and read), the bytes per rank and whether ranks wrote
      collectively.

    The operation of the built-in kernels is their ``access`` argument (``write`` when not
    given). ConfigError for an unknown kernel (:func:`iotune.kernel_specs.get_kernel`).
    """
    from iotune.kernel_specs import get_kernel

    spec = get_kernel(kernel)
    ranks = int(cores) if cores and cores > 0 else None
    per_node = int(ranks_per_node) if ranks_per_node and ranks_per_node > 0 else None
    if not spec.knows_bytes:
        found = of_report(report) if report is not None else WorkloadDescriptor()
        return _with(found, ranks=found.ranks or ranks, ranks_per_node=per_node)
    operation = spec.access(params)
    per_rank = int(spec.bytes_per_rank(params))
    return WorkloadDescriptor(operation=operation, ranks=ranks, ranks_per_node=per_node,
                              bytes_per_rank=per_rank or None,
                              **spec.workload(params, ranks))


#: The layer of the opener the preload report names (``opened_by``).
_LAYER_OF_OPENER = {"MPI_File_open": "mpiio", "H5Fcreate": "hdf5", "H5Fopen": "hdf5"}


def of_report(report: Mapping[str, Any]) -> WorkloadDescriptor:
    """What the preload library's report says of the open that moved the data
    (:func:`iotune.preload.report.data_opens`): its layer, operation, ranks (the opening
    communicator), bytes per rank and whether the ranks wrote collectively. An empty
    descriptor for a report without per-open records (version 1) or without data."""
    from iotune.preload.report import data_opens, has_opens

    if not isinstance(report, Mapping) or not has_opens(report):
        return WorkloadDescriptor()
    found = data_opens(report)
    if not found:
        return WorkloadDescriptor()
    first = found[0]
    written = sum(o.bytes_written for o in found)
    read = sum(o.bytes_read for o in found)
    operation = "both" if written and read else "write" if written else "read"
    ranks = first.comm_size if first.comm_size > 0 else None
    collective = first.writers.get("ranks_writing_collectively")
    per_rank = (written + read) // len(found) // ranks if ranks else None
    return WorkloadDescriptor(
        operation=operation, layer=_LAYER_OF_OPENER.get(first.opened_by), ranks=ranks,
        files=len({o.path for o in found}), bytes_per_rank=per_rank or None,
        collective=(collective > 0) if isinstance(collective, int) and written else None)


#: Share of a signature's bytes above which a file counts as written only (or read only).
ONE_WAY_SHARE = 0.99
#: Share of consecutive requests above which a rank's accesses count as contiguous.
CONTIGUOUS_SHARE = 0.9


def of_signature(signature: Mapping[str, float], ranks: int | None = None
                 ) -> WorkloadDescriptor:
    """The descriptor of a file's Darshan signature (:mod:`iotune.darshan.signature`,
    feature name -> value, as ``describe`` gives it with ``top`` None): the operation from
    the shares of bytes written and read (:data:`ONE_WAY_SHARE`), the layer from the HDF5
    and MPI-IO flags, bytes per rank, request size and datasets from their log2 features,
    collective when most MPI-IO writes were, contiguous when at least
    :data:`CONTIGUOUS_SHARE` of the requests were consecutive. ``ranks`` is the job's."""
    def feature(name: str) -> float:
        value = float(signature.get(name, 0.0))
        return value if math.isfinite(value) else 0.0

    def unlog(name: str) -> int | None:
        value = round(2 ** feature(name) - 1)
        return value if value > 0 else None

    writes, reads = feature("write_share"), feature("read_share")
    operation = ("write" if writes >= ONE_WAY_SHARE else "read" if reads >= ONE_WAY_SHARE
                 else "both" if writes + reads > 0 else None)
    layer = "hdf5" if feature("hdf5") else "mpiio" if feature("mpiio") else "posix"
    size = "log2_read_size" if operation == "read" else "log2_write_size"
    consecutive = feature("consecutive_reads" if operation == "read" else "consecutive_writes")
    return WorkloadDescriptor(
        operation=operation, layer=layer, ranks=ranks if ranks and ranks > 0 else None,
        files=1 if feature("shared_file") else None,
        datasets=unlog("log2_datasets") if layer == "hdf5" else None,
        bytes_per_rank=unlog("log2_rank_bytes"),
        pattern="contiguous" if consecutive >= CONTIGUOUS_SHARE else "strided",
        collective=(feature("collective_writes") > 0.5) if layer != "posix" else None,
        request_bytes=unlog(size))


def _with(found: WorkloadDescriptor, **changes: Any) -> WorkloadDescriptor:
    from dataclasses import replace

    return replace(found, **changes)
