"""The kernel spec: everything iotune knows about one kernel, behind one interface.

A kernel spec owns what would otherwise be a switch on the kernel's name somewhere else:

* **always**: its arguments (``params``), where its program is, the bytes each rank
  writes (:meth:`KernelSpec.bytes_per_rank`, for estimates and reports), and what a run's
  figure is (:meth:`KernelSpec.metric`: the target's time, unless the kernel measures
  something of its own);
* **optional features**, each a group of methods (:data:`FEATURE_METHODS`) that a kernel
  either implements all of or none of:

  - :attr:`Feature.SIMULATION`: the access pattern the ``sim`` backend models
    (:meth:`~KernelSpec.pattern_defaults`, :meth:`~KernelSpec.sim_pattern`); the
    simulated patterns (:class:`iotune.workload.pattern.Pattern`) come from here, through
    :meth:`~KernelSpec.pattern`;
  - :attr:`Feature.DARSHAN`: the counters a Darshan-instrumented run records and the
    variants ``iotune match`` compares (:meth:`~KernelSpec.darshan_file`,
    :meth:`~KernelSpec.match_variants`);
  - :attr:`Feature.PROXY`: what ``iotune proxy`` searches (:meth:`~KernelSpec.proxy_genes`,
    :meth:`~KernelSpec.proxy_seed`, :meth:`~KernelSpec.proxy_args`); it needs DARSHAN,
    which scores the candidates.

A kernel that leaves a feature out (a user's command has no Darshan signature) inherits
methods that raise :class:`KernelFeatureError`, a one-line
:class:`~iotune.errors.ConfigError` naming the kernel, the feature and the kernels that
have it. Callers that offer a choice of kernels list :func:`iotune.kernel_specs.kernels_with`.

The specs import the simulator and the Darshan model lazily, inside the feature methods:
:mod:`iotune.config` imports this package, and must stay free of numpy and pandas.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.errors import ConfigError
from iotune.kernel_args import ACCESS_PARAM, KernelParam
from iotune.kernel_specs.registry import KERNELS, kernels_with
from iotune.settings.bounds import MAX_BYTES_PER_RANK
from iotune.settings.metrics import Metric
from iotune.settings.units import format_bytes
from iotune.settings.values import normalise_value
from iotune.store.targets import target_metric
from iotune.workload.pattern import Pattern

if TYPE_CHECKING:
    from iotune.execution.application import Application
    from iotune.workload.counters import FileCounters
    from iotune.workload.genes import Gene, LogHints, Variant
    from iotune.workload.pattern import PatternDefaults


class Feature(Enum):
    """An optional part of a kernel spec; the value names what a kernel with it has."""

    SIMULATION = "simulated access pattern"
    DARSHAN = "Darshan signature"
    PROXY = "proxy search space"


#: The methods of each feature: a kernel spec overrides all of them or none.
FEATURE_METHODS: dict[Feature, tuple[str, ...]] = {
    Feature.SIMULATION: ("pattern_defaults", "sim_pattern"),
    Feature.DARSHAN: ("darshan_file", "match_variants"),
    Feature.PROXY: ("proxy_genes", "proxy_seed", "proxy_args"),
}


class KernelFeatureError(ConfigError):
    """A kernel was asked for a feature it does not have (see :class:`Feature`)."""


@dataclass(frozen=True)
class KernelSpec(ABC):
    """What the driver knows about a kernel program (see the module docstring).

    ``collective_default`` is whether the program issues collective writes when the
    ``collective`` setting is not given; the simulator and the Darshan model both use it.
    ``reads_ior_hint_variables`` is whether the program takes MPI-IO hints from IOR's
    ``IOR_HINT__MPI__<hint>`` variables (IOR does), which ``apply`` then prints for it.
    """

    name: str
    script: str
    help: str
    params: tuple[KernelParam, ...] = field(default_factory=tuple)
    collective_default: bool = False
    reads_ior_hint_variables: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for feature, methods in FEATURE_METHODS.items():
            missing = [m for m in methods if getattr(cls, m) is getattr(KernelSpec, m)]
            if missing and len(missing) < len(methods):
                raise TypeError(f"{cls.__name__} implements {feature.name} partly; "
                                f"it also needs {', '.join(missing)}")

    # -- arguments -------------------------------------------------------------------------

    def param(self, name: str) -> KernelParam | None:
        """The argument called ``name``, or None when the kernel has none."""
        return next((p for p in self.params if p.name == name), None)

    def arg(self, params: Mapping[str, Any], name: str) -> Any:
        """``params[name]``, or that argument's default when ``params`` leaves it out."""
        if name in params:
            return params[name]
        spec = self.param(name)
        if spec is None:
            raise KeyError(f"kernel '{self.name}' has no argument '{name}'")
        return spec.default

    @property
    def has_reads(self) -> bool:
        """Whether the program takes ``access`` (can time a read phase)."""
        return self.param("access") is not None

    def access(self, params: Mapping[str, Any]) -> str:
        """What a run with ``params`` times: ``write``, ``read`` or ``both`` (``write`` when
        ``access`` is not given, or for a kernel without a read phase)."""
        value = params.get("access") if self.has_reads else None
        return str(value if value is not None else ACCESS_PARAM.implied)

    def path(self) -> Path:
        """The kernel program's file, from the installed package or the source tree."""
        return Path(str(resources.files("iotune_kernels").joinpath(self.script)))

    def normalise_params(self, params: Mapping[str, Any], where: str = "kernel.args") -> dict:
        """Validated canonical values of ``params`` with defaults filled in."""
        out: dict[str, Any] = {}
        for name, value in params.items():
            spec = self.param(name)
            if spec is None:
                known = ", ".join(p.name for p in self.params)
                raise ConfigError(
                    f"{where}.{name}: unknown argument of kernel '{self.name}'; known: {known}"
                )
            out[name] = normalise_value(spec.type, value, f"{where}.{name}")
        for spec in self.params:
            if spec.default is not None:
                out.setdefault(spec.name, spec.default)
        return out

    def check_size(self, params: Mapping[str, Any], where: str = "kernel.args") -> None:
        """ConfigError when a run with ``params`` (canonical) would write more than
        :data:`MAX_BYTES_PER_RANK` per rank. For what a user asks to run; a proxy search
        explores larger candidates on paper only."""
        if self.knows_bytes and self.bytes_per_rank(params) > MAX_BYTES_PER_RANK:
            raise ConfigError(f"{where}: each rank would write "
                              f"{self.bytes_per_rank(params) / 2**30:,.0f} GiB, above the "
                              f"limit of {format_bytes(MAX_BYTES_PER_RANK)} per rank "
                              "(docs/campaigns.md, Limits)")

    @abstractmethod
    def bytes_per_rank(self, params: Mapping[str, Any]) -> int:
        """Bytes each rank writes with these params (absent ones take their defaults);
        KernelFeatureError for a kernel that cannot know (see :attr:`knows_bytes`)."""

    @property
    def knows_bytes(self) -> bool:
        """Whether :meth:`bytes_per_rank` can answer (a user's program cannot)."""
        return True

    def workload(self, params: Mapping[str, Any], ranks: int | None) -> dict[str, Any]:
        """What runs with ``params`` at ``ranks`` ranks (None: unknown) do, as fields of a
        knowledge base's workload descriptor (:class:`iotune.knowledge.descriptor.
        WorkloadDescriptor`: layer, files, datasets, bytes per rank per dataset, pattern,
        collective, request bytes) beyond the operation and bytes per rank every spec
        knows; {} for a kernel that cannot say (a user's program: its preload report
        may)."""
        return {}

    def application(self, params: Mapping[str, Any]) -> Application | None:
        """The user's program these params describe, for a kernel that runs one (see
        :mod:`iotune.execution.application`); None for iotune's own kernel programs."""
        return None

    def loads_preload(self, params: Mapping[str, Any]) -> bool:
        """Whether runs with ``params`` load the preload library (a user's program may pass
        its own ``MPI_Info``, which only the library reaches), so that ``apply`` gives it
        the library too; iotune's kernels take their settings on the command line."""
        return False

    def own_metric(self, params: Mapping[str, Any]) -> Metric | None:
        """The figure a run with ``params`` (canonical) measures when the kernel has one of
        its own (a user's program: its wall time, I/O time or a number from its output);
        None when its runs are timed by the tune's target (iotune's kernels)."""
        return None

    def metric(self, params: Mapping[str, Any], target: str = "write") -> Metric:
        """What a run with ``params`` measuring ``target`` is called, and its unit: the
        kernel's :meth:`own_metric`, else the target's time."""
        return self.own_metric(params) or target_metric(target)

    def check_settings(self, names: Iterable[str],  # noqa: B027 (optional hook)
                       where: str = "space") -> None:
        """ConfigError for a setting this kernel cannot take (by default it takes all)."""

    # -- optional features -----------------------------------------------------------------

    def supports(self, feature: Feature) -> bool:
        """Whether this kernel implements ``feature``'s methods."""
        return all(getattr(type(self), m) is not getattr(KernelSpec, m)
                   for m in FEATURE_METHODS[feature])

    def unsupported(self, feature: Feature) -> KernelFeatureError:
        """The error for asking this kernel for ``feature``, naming the kernels that have it."""
        have = kernels_with(feature)
        who = (f"only {', '.join(have)} {'has' if len(have) == 1 else 'have'} one" if have
               else "no kernel has one")
        return KernelFeatureError(f"kernel '{self.name}' has no {feature.value} ({who})")

    def pattern_defaults(self) -> PatternDefaults:
        """SIMULATION: the values a :class:`~iotune.sim.Pattern` of this kernel takes for
        the fields its caller leaves unset, and the fields it may not set."""
        raise self.unsupported(Feature.SIMULATION)

    def sim_pattern(self, ranks: int, params: Mapping[str, Any],
                    nodes: int | None = None) -> Pattern:
        """SIMULATION: what ``ranks`` ranks of this kernel with ``params`` write."""
        raise self.unsupported(Feature.SIMULATION)

    def pattern(self, ranks: int, bytes_per_rank: int, *, nodes: int | None = None,
                transfer_size: int | None = None, file_per_process: bool = False,
                api: str | None = None, collective: bool | None = None,
                variables: int | None = None) -> Pattern:
        """SIMULATION: a pattern of this kernel with the fields given; those left ``None``
        take :meth:`pattern_defaults`. ConfigError for a field the kernel has no choice over
        (naming the kernels that have), or that the pattern's rules refuse."""
        defaults = self.pattern_defaults()
        given = {"transfer_size": transfer_size, "file_per_process": file_per_process}
        for key in defaults.fixed:
            if given[key] not in (None, False):
                raise ConfigError(f"pattern.{key}: {_only_kernels_choosing(key)}")
        return Pattern(
            kernel=self.name, ranks=ranks, bytes_per_rank=bytes_per_rank, nodes=nodes,
            transfer_size=defaults.transfer_size if transfer_size is None else transfer_size,
            file_per_process=file_per_process, api=defaults.api if api is None else api,
            collective=defaults.collective if collective is None else collective,
            variables=defaults.variables if variables is None else variables)

    def darshan_file(self, args: Mapping[str, Any], ranks: int,
                     collective: bool) -> FileCounters:
        """DARSHAN: the counters of the file (or, one file per rank, of each file) a run
        with the normalised ``args`` on ``ranks`` ranks writes."""
        raise self.unsupported(Feature.DARSHAN)

    def match_variants(self, size: int, requests_per_rank: int, access: str,
                       syncs: bool) -> list[Variant]:
        """DARSHAN: this kernel's variants for ``iotune match``, sized like an application
        whose typical request is ``size`` bytes, ``requests_per_rank`` per rank, that
        writes, reads or does both (``access``: write, read or both) and syncs when
        ``syncs``."""
        raise self.unsupported(Feature.DARSHAN)

    def proxy_genes(self, hints: LogHints) -> list[Gene]:
        """PROXY: the searchable arguments, value lists widened by the log's ``hints``."""
        raise self.unsupported(Feature.PROXY)

    def proxy_seed(self, size: int, hints: LogHints) -> dict[str, Any]:
        """PROXY: gene values of a genome seeded from the log's request ``size``."""
        raise self.unsupported(Feature.PROXY)

    def proxy_args(self, values: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
        """PROXY: the kernel arguments and ``collective`` setting that gene ``values`` mean."""
        raise self.unsupported(Feature.PROXY)


#: What each field a kernel may fix would give it, for the error naming who takes it.
_FIELD_CHOICES = {
    "transfer_size": ("takes a transfer size", "take a transfer size"),
    "file_per_process": ("writes one file per process", "write one file per process"),
}


def _only_kernels_choosing(key: str) -> str:
    """``only the ior kernel takes a transfer size``: the kernels that may set ``key``."""
    free = [k for k in kernels_with(Feature.SIMULATION)
            if key not in KERNELS[k].pattern_defaults().fixed]
    singular, plural = _FIELD_CHOICES[key]
    if len(free) == 1:
        return f"only the {free[0]} kernel {singular}"
    return f"only the kernels {', '.join(free)} {plural}"
