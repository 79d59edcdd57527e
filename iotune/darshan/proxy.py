"""The proxy file: the kernel configuration that stands in for an application.

``iotune proxy`` finds it (:func:`find_proxy`) and writes it; ``iotune tune --kernel
proxy.yaml`` reads it with :func:`load_proxy`. Layout (``schema_version`` 1)::

    schema_version: 1
    kernel: ior                  # ior | vpic
    args: {api: hdf5, block_size: 1048576, ...}   # iotune's kernel argument names
    settings: {collective: true} # settings the proxy fixes (omitted when none)
    ranks: 4                     # the application's rank count
    similarity: 0.9995           # pairwise-normalised cosine similarity reached
    normalisation: pairwise
    source_log: app.darshan
    source_sha256: 3f1c...
    signature_class: 0
    ignored_features: []

Every problem raises :class:`~iotune.errors.ConfigError` naming the key and the rule.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from iotune.errors import ConfigError, DataError
from iotune.kernels import Feature, get_kernel, kernels_with
from iotune.units import format_bytes

if TYPE_CHECKING:
    from iotune.darshan.analytic import Candidate
    from iotune.darshan.search import SearchOptions, SearchResult
    from iotune.darshan.target import SignatureTarget

PROXY_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Proxy:
    """A loaded proxy file (``args`` validated and normalised, defaults filled in)."""

    kernel: str
    args: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)
    ranks: int | None = None
    similarity: float | None = None
    source_log: str | None = None
    source_sha256: str | None = None


def proxy_document(kernel: str, args: Mapping[str, Any], settings: Mapping[str, Any],
                   ranks: int, similarity: float, source_log: str, source_sha256: str,
                   signature_class: int, ignored: list[str]) -> dict[str, Any]:
    """The mapping written to a proxy file (keys in the documented order)."""
    doc: dict[str, Any] = {
        "schema_version": PROXY_SCHEMA_VERSION,
        "kernel": kernel,
        "args": dict(args),
    }
    if settings:
        doc["settings"] = dict(settings)
    doc.update(ranks=int(ranks), similarity=round(float(similarity), 6),
               normalisation="pairwise", source_log=source_log, source_sha256=source_sha256,
               signature_class=signature_class, ignored_features=list(ignored))
    return doc


@dataclass(frozen=True)
class ProxySearch:
    """The proxy found for an application: its file's ``document`` and the search's
    ``results`` for each kernel, best first."""

    document: dict[str, Any]
    results: list[SearchResult]

    @property
    def candidate(self) -> Candidate:
        """The configuration the proxy file holds (the best result's)."""
        return self.results[0].candidate

    def search_rows(self) -> list[dict[str, Any]]:
        """One row per kernel searched: its best similarity and what the search cost."""
        return [{"kernel": r.kernel, "similarity": round(r.similarity, 6),
                 "genetic_similarity": round(r.genetic_similarity, 6),
                 "evaluations": r.evaluations, "generations": r.generations,
                 "args": dict(r.candidate.args), "collective": r.candidate.collective}
                for r in self.results]


def find_proxy(target: SignatureTarget, kernels: Sequence[str], options: SearchOptions,
               progress: Callable[[str], None] | None = None) -> ProxySearch:
    """Search ``kernels`` for the configuration most like ``target``'s chosen class
    (:func:`~iotune.darshan.search.search_kernels`) and make its proxy document.

    DataError when ``options.max_bytes_per_rank`` leaves no configuration to choose.
    """
    from iotune.darshan.search import search_kernels

    chosen = target.chosen
    results = search_kernels(chosen.representative, chosen.vector, target.mask, kernels,
                             options, progress)
    best = results[0]
    if best.similarity < 0:
        cap = options.max_bytes_per_rank
        raise DataError(f"--max-bytes-per-rank {format_bytes(cap or 0)}: no kernel "
                        "configuration writes that little per rank")
    candidate = best.candidate
    document = proxy_document(candidate.kernel, candidate.args, candidate.settings(),
                              candidate.ranks, best.similarity, str(target.log.path),
                              target.log.sha256, chosen.index, target.ignored)
    return ProxySearch(document, results)


def write_proxy(path: Path, document: Mapping[str, Any]) -> None:
    """Write ``document`` as YAML to ``path`` (atomically: a temporary file, then rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    header = "# iotune proxy: a kernel configuration that mimics the application's I/O\n"
    tmp.write_text(header + yaml.safe_dump(dict(document), sort_keys=False))
    os.replace(tmp, path)


def read_proxy(path: str | os.PathLike[str]) -> Proxy:
    """Read and validate a proxy file."""
    where = str(path)
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such proxy file") from None
    except IsADirectoryError:
        raise ConfigError(f"{where}: is a directory, not a proxy file") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping with kernel and args")
    version = raw.get("schema_version")
    if version != PROXY_SCHEMA_VERSION:
        raise ConfigError(f"{where}: schema_version {version!r} is not supported "
                          f"(expected {PROXY_SCHEMA_VERSION})")
    kernel = raw.get("kernel")
    searchable = kernels_with(Feature.PROXY)
    if kernel not in searchable:
        raise ConfigError(f"{where}: kernel {kernel!r} is not a proxy kernel "
                          f"(expected one of {', '.join(searchable)})")
    args = raw.get("args")
    if not isinstance(args, dict):
        raise ConfigError(f"{where}: args must be a mapping of kernel arguments")
    params = get_kernel(kernel).normalise_params(args, where=f"{where}: args")
    settings = raw.get("settings") or {}
    if not isinstance(settings, dict):
        raise ConfigError(f"{where}: settings must be a mapping")
    ranks = raw.get("ranks")
    if ranks is not None and (isinstance(ranks, bool) or not isinstance(ranks, int)
                              or ranks <= 0):
        raise ConfigError(f"{where}: ranks {ranks!r} is not a positive integer")
    similarity = raw.get("similarity")
    return Proxy(kernel=kernel, args=params, settings=dict(settings), ranks=ranks,
                 similarity=float(similarity) if similarity is not None else None,
                 source_log=raw.get("source_log"), source_sha256=raw.get("source_sha256"))


def load_proxy(path: str | os.PathLike[str]) -> tuple[str, dict[str, Any]]:
    """``(kernel_name, params)`` of a proxy file, for ``iotune tune --kernel proxy.yaml``."""
    proxy = read_proxy(path)
    return proxy.kernel, proxy.args


def is_proxy_path(value: str) -> bool:
    """True when a ``--kernel`` value names a proxy file (``*.yaml``, ``*.yml`` or a file)."""
    return value.endswith((".yaml", ".yml")) or Path(value).is_file()
