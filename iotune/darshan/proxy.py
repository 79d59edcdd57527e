"""The proxy file: the kernel configuration that stands in for an application.

``iotune proxy`` finds it (:func:`find_proxy`) and writes it; ``iotune tune --kernel
proxy.yaml`` reads it with :func:`load_proxy`. Layout (``schema_version`` 1)::

    schema_version: 1
    kernel: ior                  # ior | vpic
    args: {api: hdf5, block_size: 1048576, ...}   # iotune's kernel argument names
    settings: {collective: true} # settings the proxy fixes (omitted when none)
    ranks: 4                     # the application's rank count
    similarity: 0.9995           # pairwise-normalised cosine similarity reached
    min_similarity: 0.95         # below this the proxy is poor (iotune proxy warned)
    unmatched:                   # the features that explain most of the gap, worst first
    - {feature: rw_switches, log: 0.07, proxy: 0.0, gap_share: 0.4}
    normalisation: pairwise
    source_log: app.darshan
    source_sha256: 3f1c...
    signature_class: 0
    ignored_features: []

Every problem raises :class:`~iotune.errors.ConfigError` naming the key and the rule.
:data:`MIN_SIMILARITY`, :data:`UNMATCHED_SHOWN` and :data:`MIN_GAP_SHARE` are explained
in docs/darshan.md ("How good a proxy is").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from iotune.errors import ConfigError, DataError
from iotune.execution.outputs import NOTHING_IN_USE, InUse, write_output
from iotune.inputs import load_yaml
from iotune.kernel_specs import Feature, get_kernel, kernels_with
from iotune.settings.bounds import MAX_CORES
from iotune.settings.numbers import number_problem
from iotune.settings.units import format_bytes

if TYPE_CHECKING:
    from iotune.darshan.analytic import Candidate
    from iotune.darshan.search import SearchOptions, SearchResult
    from iotune.darshan.target import SignatureTarget

PROXY_SCHEMA_VERSION = 1
#: Below this similarity a proxy is poor: ``iotune proxy`` warns, and so do the commands
#: that use the proxy. One wholly unmatched feature out of ten gives sqrt(9/10) = 0.949.
MIN_SIMILARITY = 0.95
#: How many of the least matched features the warning names and the proxy file records.
UNMATCHED_SHOWN = 3
#: A feature explaining less than this share of the mismatch is not named: it is noise.
MIN_GAP_SHARE = 0.01


@dataclass(frozen=True)
class Mismatch:
    """One signature feature the proxy does not match: the application's value (``log``),
    the proxy's, and the share of the dissimilarity it explains
    (:func:`~iotune.darshan.similarity.pairwise_gaps`)."""

    feature: str
    log: float
    proxy: float
    gap_share: float

    def as_dict(self) -> dict[str, Any]:
        return {"feature": self.feature, "log": round(self.log, 6),
                "proxy": round(self.proxy, 6), "gap_share": round(self.gap_share, 4)}

    def text(self) -> str:
        return (f"{self.feature} (log {self.log:.4g}, proxy {self.proxy:.4g}, "
                f"{self.gap_share:.0%} of the gap)")


def mismatches(log_vector: np.ndarray, proxy_vector: np.ndarray, mask: np.ndarray,
               top: int = UNMATCHED_SHOWN) -> list[Mismatch]:
    """The ``top`` features (masked ones left out) that explain most of the dissimilarity
    of the two signatures, worst first; features that explain less than
    :data:`MIN_GAP_SHARE` of it are not listed.

    Pairwise normalisation makes every feature that only one side has explain the same
    share; among those, the larger raw difference (capped at 1, the range of a share)
    comes first, so a bin with half the requests is named before one with a few.
    """
    from iotune.darshan.signature import FEATURE_NAMES
    from iotune.darshan.similarity import pairwise_gaps

    shares = pairwise_gaps(log_vector * mask, proxy_vector * mask)
    diff = np.minimum(np.abs(log_vector - proxy_vector), 1.0)
    order = sorted(range(len(shares)),
                   key=lambda i: (-round(float(shares[i]), 9), -float(diff[i]), i))
    return [Mismatch(FEATURE_NAMES[i], float(log_vector[i]), float(proxy_vector[i]),
                     float(shares[i])) for i in order[:top] if shares[i] >= MIN_GAP_SHARE]


def quality_warning(similarity: float, min_similarity: float,
                    unmatched: Sequence[Mismatch]) -> str | None:
    """The one-line warning for a proxy below ``min_similarity`` (None when it is not)."""
    if similarity >= min_similarity:
        return None
    named = "; ".join(m.text() for m in unmatched) or "no single feature"
    return (f"proxy similarity {similarity:.4f} is below {min_similarity:g}, so the proxy "
            f"may not behave like the application; least matched: {named}")


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
    min_similarity: float | None = None
    unmatched: tuple[Mismatch, ...] = ()

    def warning(self) -> str | None:
        """:func:`quality_warning` for this file (None when it records no threshold)."""
        if self.similarity is None or self.min_similarity is None:
            return None
        return quality_warning(self.similarity, self.min_similarity, self.unmatched)


def proxy_document(kernel: str, args: Mapping[str, Any], settings: Mapping[str, Any],
                   ranks: int, similarity: float, source_log: str, source_sha256: str,
                   signature_class: int, ignored: list[str],
                   min_similarity: float = MIN_SIMILARITY,
                   unmatched: Sequence[Mismatch] = ()) -> dict[str, Any]:
    """The mapping written to a proxy file (keys in the documented order)."""
    doc: dict[str, Any] = {
        "schema_version": PROXY_SCHEMA_VERSION,
        "kernel": kernel,
        "args": dict(args),
    }
    if settings:
        doc["settings"] = dict(settings)
    doc.update(ranks=int(ranks), similarity=round(float(similarity), 6),
               min_similarity=float(min_similarity),
               unmatched=[m.as_dict() for m in unmatched], normalisation="pairwise",
               source_log=source_log, source_sha256=source_sha256,
               signature_class=signature_class, ignored_features=list(ignored))
    return doc


@dataclass(frozen=True)
class ProxySearch:
    """The proxy found for an application: its file's ``document``, the search's
    ``results`` for each kernel, best first, and the features it matches least."""

    document: dict[str, Any]
    results: list[SearchResult]
    unmatched: list[Mismatch] = field(default_factory=list)

    @property
    def warning(self) -> str | None:
        """:func:`quality_warning` for the proxy found."""
        return quality_warning(self.results[0].similarity, self.document["min_similarity"],
                               self.unmatched)

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
               progress: Callable[[str], None] | None = None,
               min_similarity: float = MIN_SIMILARITY) -> ProxySearch:
    """Search ``kernels`` for the configuration most like ``target``'s chosen class
    (:func:`~iotune.darshan.search.search_kernels`) and make its proxy document, which
    records ``min_similarity`` and the features the proxy matches least.

    DataError when ``options.max_bytes_per_rank`` leaves no configuration to choose.
    """
    from iotune.darshan.analytic import kernel_file
    from iotune.darshan.search import search_kernels
    from iotune.darshan.signature import signature

    chosen = target.chosen
    results = search_kernels(chosen.representative, chosen.vector, target.mask, kernels,
                             options, progress)
    best = results[0]
    if best.similarity < 0:
        cap = options.max_bytes_per_rank
        raise DataError(f"--max-bytes-per-rank {format_bytes(cap or 0)}: no kernel "
                        "configuration writes that little per rank")
    candidate = best.candidate
    unmatched = mismatches(chosen.vector, signature(kernel_file(candidate)), target.mask)
    document = proxy_document(candidate.kernel, candidate.args, candidate.settings(),
                              candidate.ranks, best.similarity, str(target.log.path),
                              target.log.sha256, chosen.index, target.ignored,
                              min_similarity, unmatched)
    return ProxySearch(document, results, unmatched)


def write_proxy(path: Path, document: Mapping[str, Any], *, in_use: InUse = NOTHING_IN_USE,
                force: bool = False) -> None:
    """Write ``document`` as YAML to ``path``, by the rules of
    :func:`iotune.execution.outputs.write_output` (atomically, option ``-o``)."""
    header = "# iotune proxy: a kernel configuration that mimics the application's I/O\n"
    write_output(path, header + yaml.safe_dump(dict(document), sort_keys=False), "proxy",
                 option="-o", in_use=in_use, force=force)


def read_proxy(path: str | os.PathLike[str]) -> Proxy:
    """Read and validate a proxy file."""
    where = str(path)
    raw = load_yaml(path, "proxy file")
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
    problem = None if ranks is None else number_problem(ranks, 1, whole=True, limit=MAX_CORES)
    if problem is not None:
        raise ConfigError(f"{where}: ranks {problem}")
    return Proxy(kernel=kernel, args=params, settings=dict(settings), ranks=ranks,
                 similarity=_fraction(raw, "similarity", where),
                 source_log=raw.get("source_log"), source_sha256=raw.get("source_sha256"),
                 min_similarity=_fraction(raw, "min_similarity", where),
                 unmatched=_unmatched(raw.get("unmatched"), where))


def _fraction(raw: Mapping[str, Any], key: str, where: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
        raise ConfigError(f"{where}: {key} {value!r} is not a number from -1 to 1")
    return float(value)


def _unmatched(raw: Any, where: str) -> tuple[Mismatch, ...]:
    if raw is None:
        return ()
    rule = "must be a list of {feature, log, proxy, gap_share} mappings"
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: unmatched {rule}")
    out = []
    for i, item in enumerate(raw):
        try:
            out.append(Mismatch(str(item["feature"]), float(item["log"]),
                                float(item["proxy"]), float(item["gap_share"])))
        except (TypeError, KeyError, ValueError):
            raise ConfigError(f"{where}: unmatched[{i}] {rule}") from None
    return tuple(out)


def load_proxy(path: str | os.PathLike[str]) -> tuple[str, dict[str, Any]]:
    """``(kernel_name, params)`` of a proxy file, for ``iotune tune --kernel proxy.yaml``."""
    proxy = read_proxy(path)
    return proxy.kernel, proxy.args


def is_proxy_path(value: str) -> bool:
    """True when a ``--kernel`` value names a proxy file (``*.yaml``, ``*.yml`` or a file)."""
    return value.endswith((".yaml", ".yml")) or Path(value).is_file()


def kernel_of(value: str) -> str:
    """The kernel a ``--kernel`` value names: a proxy file's kernel (the name its runs are
    stored under), else ``value`` itself. ConfigError for a bad proxy file."""
    return read_proxy(value).kernel if is_proxy_path(value) else value
