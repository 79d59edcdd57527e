"""The YAML configuration, validated once at load into frozen dataclasses.

Every error names the key path and the rule (``space.stripe_count: 0 is not a positive
integer``); malformed YAML names the file, line and column. Relative paths in a config are
relative to the config file's directory, so a config in git next to a job script works from
any working directory.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.errors import ConfigError
from iotune.execution.launchers import make_launcher
from iotune.execution.outputs import check_not_system_directory
from iotune.inputs import MAX_YAML_BYTES, parse_yaml, read_text
from iotune.kernel_specs import get_kernel
from iotune.settings.bounds import (
    MAX_CORES,
    MAX_INTEGER,
    MAX_NOISE,
    MAX_OSTS,
    MAX_PLAN_RUNS,
    MAX_REPETITIONS,
)
from iotune.settings.numbers import check_number
from iotune.settings.space import Limits, SearchSpace
from iotune.settings.units import parse_duration
from iotune.settings.values import check_requirements
from iotune.store.targets import TARGETS
from iotune.strategies.base import STATISTICS

CONFIG_SCHEMA_VERSION = 1
DESIGNS = ("full", "lhs", "systematic", "recorded")
#: ``backend.replay_pick``: how a replay answers a configuration recorded several times.
REPLAY_PICKS = ("draw", "median")
#: ``system.mpi_io``: the MPI-IO layer Open MPI uses for the runs. ``default`` leaves the
#: choice to Open MPI (its own OMPIO, which ignores ROMIO's hints); ``romio`` excludes OMPIO
#: (``OMPI_MCA_io=^ompio``), which leaves ROMIO whatever its component is called in this
#: release. MPICH and Cray MPICH always use ROMIO and ignore the variable.
MPI_IO_LAYERS = {"default": {}, "romio": {"OMPI_MCA_io": "^ompio"}}


@dataclass(frozen=True)
class SystemConfig:
    """Where and how kernels run."""

    name: str = "local"
    scratch: Path = Path("scratch")
    launcher: str = "mpiexec"
    launcher_template: str | None = None
    cores_per_node: int = 1
    ost_count: int | None = None
    aggregators_per_node: int | None = None
    timeout_s: float = 600.0
    python: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    mpi_io: str = "default"

    @property
    def limits(self) -> Limits:
        return Limits(self.cores_per_node, self.ost_count, self.aggregators_per_node)

    def run_environment(self) -> dict[str, str]:
        """The variables every run gets besides the caller's: ``env``, and the MPI-IO
        layer's selection (:data:`MPI_IO_LAYERS`), which ``env`` may override."""
        return {**MPI_IO_LAYERS[self.mpi_io], **dict(self.env)}


@dataclass(frozen=True)
class KernelConfig:
    """The kernel to tune and its fixed arguments (canonical, defaults filled in)."""

    name: str = "vpic"
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.params)


@dataclass(frozen=True)
class ScaleConfig:
    """One training scale: ranks, how to choose its configurations, argument overrides."""

    cores: int
    design: str = "full"
    runs: int | None = None
    params: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class TrainConfig:
    scales: tuple[ScaleConfig, ...] = ()
    repetitions: int = 1
    seed: int = 0


@dataclass(frozen=True)
class TuneConfig:
    """``tune:``. Strategy options live with the strategies (their defaults included);
    ``options`` holds only what the config sets, per strategy (``tune.options.<strategy>``;
    ``tune.top_k``, ``top_k_refit``, ``refit_rounds`` and ``max_terms`` are shorthand for
    the model strategy's). ``target`` is the time minimised: the write's, the read's or
    both (see :mod:`iotune.tune.target`)."""

    repetitions: int = 1
    statistic: str = "median"
    strategy: str = "portfolio"
    budget: int | None = None
    seed: int = 0
    state_aware: bool = False
    busy_repeats: int = 2
    min_idle: int = 2
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    target: str = TARGETS[0]
    #: ``tune.knowledge``: a knowledge base's path (absolute, against the config's folder),
    #: :data:`KNOWLEDGE_OFF` to use none whatever ``IOTUNE_KNOWLEDGE`` says, or None (not
    #: set: the environment's, if any; see :mod:`iotune.cli.knowledge_option`).
    knowledge: str | None = None

    def options_for(self, strategy: str) -> dict[str, Any]:
        """The options the config sets for ``strategy`` (none: the strategy's defaults)."""
        return dict(self.options.get(strategy, {}))


@dataclass(frozen=True)
class BackendConfig:
    """Which backend measures: ``mpi`` (real runs), ``sim`` or ``replay``. The name is
    checked against the backends registered (:func:`iotune.backends.backend_class`) where
    a backend is chosen or made, not here: the config is read below the backends."""

    name: str = "mpi"
    sim_system: str = "hopper"
    noise: float = 1.0
    replay_data: Path | None = None
    replay_time_column: str = "write_time"
    replay_cores_column: str = "cores"
    replay_pick: str = "draw"
    #: Columns of a replay CSV that are neither settings nor times, to skip (a CSV column
    #: iotune does not know is an error otherwise: a misspelt setting would be dropped).
    replay_ignore_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    """A whole validated configuration."""

    path: Path | None
    system: SystemConfig = field(default_factory=SystemConfig)
    kernel: KernelConfig = field(default_factory=KernelConfig)
    space: SearchSpace = field(default_factory=lambda: SearchSpace(()))
    train: TrainConfig = field(default_factory=TrainConfig)
    tune: TuneConfig = field(default_factory=TuneConfig)
    backend: BackendConfig = field(default_factory=BackendConfig)
    store: Path = Path("iotune-store.jsonl")

    def with_overrides(
        self,
        *,
        backend: str | None = None,
        sim_system: str | None = None,
        noise: float | None = None,
        replay_data: Path | None = None,
        launcher: str | None = None,
        kernel: str | KernelConfig | None = None,
        space: SearchSpace | None = None,
        scratch: Path | None = None,
        store: Path | None = None,
    ) -> Config:
        """This config with the command line's values in place of its own.

        ``None`` keeps the config's value. Each value is checked as its key in the YAML is,
        and a bad one is a ConfigError naming the option (``--noise``, ``--kernel``) or, for
        a launcher that needs the config's template, that key (a backend name is checked
        where the backend is chosen, see :class:`BackendConfig`).
        ``kernel`` is a kernel name (with its default arguments, unless it is this config's
        kernel already) or a whole :class:`KernelConfig` (a proxy's). Paths are made
        absolute against the working directory, as a path on a command line is.
        """
        changes: dict[str, Any] = {}
        backend_changes: dict[str, Any] = {}
        if backend is not None:
            backend_changes["name"] = backend
        if sim_system is not None:
            backend_changes["sim_system"] = sim_system
        if noise is not None:
            backend_changes["noise"] = check_number(noise, "--noise", 0, limit=MAX_NOISE)
        if replay_data is not None:
            backend_changes["replay_data"] = replay_data.resolve()
        if backend_changes:
            changes["backend"] = dataclasses.replace(self.backend, **backend_changes)
        system_changes: dict[str, Any] = {}
        if launcher is not None:
            make_launcher(launcher, self.system.launcher_template)  # checks a template is set
            system_changes["launcher"] = launcher
        if scratch is not None:
            system_changes["scratch"] = scratch.resolve()
        if system_changes:
            changes["system"] = dataclasses.replace(self.system, **system_changes)
        if isinstance(kernel, str):
            spec = get_kernel(kernel, "--kernel")
            if spec.name != self.kernel.name:
                changes["kernel"] = KernelConfig(spec.name,
                                                 tuple(spec.normalise_params({}).items()))
        elif kernel is not None:
            changes["kernel"] = kernel
        if space is not None:
            changes["space"] = space
        if store is not None:
            changes["store"] = store.resolve()
        return dataclasses.replace(self, **changes) if changes else self


#: The default of a :class:`_Section` read: the section's dataclass field.
_FROM_DEFAULTS: Any = object()


class _Section:
    """Typed reads from one mapping of the YAML with key-path messages and unknown-key checks.

    A key that is absent or null takes its default from ``defaults`` (the section's
    dataclass built with no arguments: its fields' defaults are the one definition), read
    from the field named ``field`` (the key itself when not given), or from an explicit
    ``default``."""

    def __init__(self, raw: Any, where: str, known: tuple[str, ...],
                 defaults: object | None = None) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where}: must be a mapping (key: value lines)")
        unknown = [k for k in raw if k not in known]
        if unknown:
            raise ConfigError(
                f"{where}.{unknown[0]}: unknown key; known keys: {', '.join(known)}"
                if where else f"{unknown[0]}: unknown key; known keys: {', '.join(known)}"
            )
        self.raw = raw
        self.where = where
        self.defaults = defaults

    def path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def _given(self, key: str, field: str | None, default: Any) -> Any:
        """The value of ``key``, or the default (see the class docstring) when absent."""
        value = self.raw.get(key)
        if value is not None:
            return value
        return default if default is not _FROM_DEFAULTS else getattr(self.defaults,
                                                                       field or key)

    def optional_int(self, key: str, minimum: int = 1, field: str | None = None,
                     default: Any = _FROM_DEFAULTS, maximum: int = MAX_INTEGER) -> int | None:
        """An integer in [``minimum``, ``maximum``], or the default, which may be None."""
        value = self._given(key, field, default)
        if value is None:
            return None
        check_number(value, self.path(key), minimum, whole=True, limit=maximum)
        assert isinstance(value, int)
        return value

    def int(self, key: str, minimum: int = 1, field: str | None = None,
            default: Any = _FROM_DEFAULTS, maximum: int = MAX_INTEGER) -> int:
        """An integer in [``minimum``, ``maximum``], or the default (an integer)."""
        value = self.optional_int(key, minimum, field, default, maximum)
        assert value is not None, f"{self.path(key)} has no default"
        return value

    def number(self, key: str, minimum: float, limit: float, field: str | None = None) -> float:
        """A finite number in [``minimum``, ``limit``] (``limit``: a documented bound of
        :mod:`iotune.settings.bounds`), or the default."""
        return check_number(self._given(key, field, _FROM_DEFAULTS), self.path(key), minimum,
                            limit=limit)

    def optional_text(self, key: str, choices: tuple[str, ...] = (), field: str | None = None,
                      default: Any = _FROM_DEFAULTS) -> str | None:
        """A non-empty string (one of ``choices`` when given), or the default, which may be
        None."""
        value = self._given(key, field, default)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{self.path(key)}: {value!r} is not a non-empty string")
        if choices and value not in choices:
            raise ConfigError(f"{self.path(key)}: {value!r} is not one of {', '.join(choices)}")
        return value

    def text(self, key: str, choices: tuple[str, ...] = (), field: str | None = None,
             default: Any = _FROM_DEFAULTS) -> str:
        """A non-empty string (one of ``choices`` when given), or the default (a string)."""
        value = self.optional_text(key, choices, field, default)
        assert value is not None, f"{self.path(key)} has no default"
        return value


    def texts(self, key: str) -> tuple[str, ...]:
        """A list of non-empty strings (empty when the key is absent)."""
        value = self.raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{self.path(key)}: {value!r} is not a list of names")
        return tuple(value)


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read and validate the YAML config at ``path``; raises ConfigError on any problem."""
    p = Path(path)
    return parse_config(read_text(p, "config file", limit=MAX_YAML_BYTES), source=p)


def parse_config(text: str, source: Path | None = None) -> Config:
    """Validate YAML ``text``; relative paths resolve against ``source``'s directory."""
    raw = parse_yaml(text, str(source) if source else "<config>")
    if raw is None:
        raw = {}
    base = source.resolve().parent if source else Path.cwd()
    return build_config(raw, base, source)


def build_config(raw: Any, base: Path, source: Path | None = None) -> Config:
    """Validate an already-parsed mapping into a Config."""
    top = _Section(raw, "", ("schema_version", "system", "kernel", "space", "train", "tune",
                             "backend", "store"), Config(path=None))
    version = top.int("schema_version", default=CONFIG_SCHEMA_VERSION)
    if version != CONFIG_SCHEMA_VERSION:
        raise ConfigError(f"schema_version: {version} is not supported (this iotune reads "
                          f"{CONFIG_SCHEMA_VERSION})")
    system = _system(top.raw.get("system"), base)
    kernel = _kernel(top.raw.get("kernel"))
    space = SearchSpace.from_mapping(top.raw.get("space") or {}, "space")
    check_requirements(space.names, "space")
    get_kernel(kernel.name).check_settings(space.names, "space")
    train = _train(top.raw.get("train"), kernel.name)
    space.check_against(system.limits)
    store = Path(top.text("store", default=str(Config(path=None).store)))
    return Config(
        path=source, system=system, kernel=kernel, space=space, train=train,
        tune=_tune(top.raw.get("tune"), base), backend=_backend(top.raw.get("backend"), base),
        store=store if store.is_absolute() else base / store,
    )


def _system(raw: Any, base: Path) -> SystemConfig:
    s = _Section(raw, "system", ("name", "scratch", "launcher", "launcher_template",
                                 "cores_per_node", "ost_count", "aggregators_per_node",
                                 "timeout", "python", "env", "mpi_io"), SystemConfig())
    launcher = s.text("launcher")
    template = s.optional_text("launcher_template")
    make_launcher(launcher, template, "system.launcher")  # validates name and template
    scratch = Path(os.path.expandvars(s.text("scratch", default=str(SystemConfig().scratch))
                                      )).expanduser()
    scratch = scratch if scratch.is_absolute() else base / scratch
    check_not_system_directory(scratch, "system.scratch")
    try:
        timeout = parse_duration(s.raw.get("timeout", SystemConfig().timeout_s))
    except ValueError as exc:
        raise ConfigError(f"system.timeout: {exc}") from None
    env = s.raw.get("env") or {}
    if not isinstance(env, Mapping):
        raise ConfigError("system.env: must be a mapping of VARIABLE: value")
    mpi_io = s.text("mpi_io")
    if mpi_io not in MPI_IO_LAYERS:
        raise ConfigError(f"system.mpi_io: {mpi_io!r} is not one of "
                          f"{', '.join(MPI_IO_LAYERS)} (romio makes Open MPI use ROMIO, "
                          "which takes the MPI-IO hints)")
    return SystemConfig(
        name=s.text("name"),
        scratch=scratch,
        launcher=launcher,
        launcher_template=template,
        # this machine's cores, not the dataclass's 1: a config without it runs locally
        cores_per_node=s.int("cores_per_node", default=os.cpu_count() or 1, maximum=MAX_CORES),
        ost_count=s.optional_int("ost_count", maximum=MAX_OSTS),
        aggregators_per_node=s.optional_int("aggregators_per_node", maximum=MAX_CORES),
        timeout_s=timeout,
        python=s.optional_text("python"),
        env=tuple((str(k), str(v)) for k, v in env.items()),
        mpi_io=mpi_io,
    )


def _kernel(raw: Any) -> KernelConfig:
    """``kernel: {name, args}`` for iotune's kernels, or ``kernel: {command: ...}`` for a
    user's program (see :mod:`iotune.execution.application`)."""
    if isinstance(raw, Mapping) and "command" in raw:
        spec = get_kernel("command")
        return KernelConfig(spec.name, tuple(spec.normalise_params(raw, "kernel").items()))
    k = _Section(raw, "kernel", ("name", "args"), KernelConfig())
    spec = get_kernel(k.text("name"), "kernel.name")
    args = k.raw.get("args") or {}
    if not isinstance(args, Mapping):
        raise ConfigError("kernel.args: must be a mapping of argument: value")
    params = spec.normalise_params(args, "kernel.args")
    spec.check_size(params, "kernel.args")
    return KernelConfig(spec.name, tuple(params.items()))


def _train(raw: Any, kernel: str) -> TrainConfig:
    t = _Section(raw, "train", ("scales", "repetitions", "seed"), TrainConfig())
    scales_raw = t.raw.get("scales") or []
    if not isinstance(scales_raw, list):
        raise ConfigError("train.scales: must be a list of {cores: N, design: ...} entries")
    spec = get_kernel(kernel)
    scales = []
    for i, item in enumerate(scales_raw):
        where = f"train.scales[{i}]"
        if isinstance(item, int) and not isinstance(item, bool):
            item = {"cores": item}
        s = _Section(item, where, ("cores", "design", "runs", "kernel_args"),
                     ScaleConfig(cores=0))
        cores = s.optional_int("cores", default=None, maximum=MAX_CORES)
        if cores is None:
            raise ConfigError(f"{where}.cores: missing; each scale needs its number of ranks")
        design = s.text("design", DESIGNS)
        runs = s.optional_int("runs", maximum=MAX_PLAN_RUNS)
        if design == "lhs" and runs is None:
            raise ConfigError(f"{where}.runs: a Latin hypercube design needs its number of runs")
        overrides = s.raw.get("kernel_args") or {}
        if not isinstance(overrides, Mapping):
            raise ConfigError(f"{where}.kernel_args: must be a mapping of argument: value")
        params = {
            name: value
            for name, value in spec.normalise_params(overrides, f"{where}.kernel_args").items()
            if name in overrides
        }
        scales.append(ScaleConfig(cores, design, runs, tuple(params.items())))
    return TrainConfig(
        scales=tuple(scales),
        repetitions=t.int("repetitions", maximum=MAX_REPETITIONS),
        seed=t.int("seed", minimum=0),
    )


#: The word that switches a knowledge base off in ``tune.knowledge``, ``--knowledge`` and
#: ``IOTUNE_KNOWLEDGE`` (a file called ``none`` is given as ``./none``).
KNOWLEDGE_OFF = "none"

#: ``tune.<key>`` shorthand for ``tune.options.model.<key>`` (the paper's knobs).
MODEL_SHORTHAND = {"top_k": 1, "top_k_refit": 1, "refit_rounds": 0, "max_terms": 1}


def _tune(raw: Any, base: Path) -> TuneConfig:
    t = _Section(raw, "tune", (*MODEL_SHORTHAND, "repetitions", "statistic", "strategy",
                               "budget", "seed", "state_aware", "busy_repeats", "min_idle",
                               "options", "target", "knowledge"), TuneConfig())
    state_aware = t.raw.get("state_aware", False)
    if not isinstance(state_aware, bool):
        raise ConfigError(f"tune.state_aware: {state_aware!r} is not true or false")
    options = _strategy_options(t.raw.get("options") or {})
    shorthand = {key: t.optional_int(key, minimum=minimum, default=None)
                 for key, minimum in MODEL_SHORTHAND.items() if key in t.raw}
    if shorthand:
        options["model"] = {**shorthand, **options.get("model", {})}
    return TuneConfig(
        repetitions=t.int("repetitions", maximum=MAX_REPETITIONS),
        statistic=t.text("statistic", tuple(STATISTICS)),
        strategy=t.text("strategy"),
        budget=t.optional_int("budget", maximum=MAX_PLAN_RUNS),
        seed=t.int("seed", minimum=0),
        state_aware=state_aware,
        busy_repeats=t.int("busy_repeats", minimum=0, maximum=MAX_REPETITIONS),
        min_idle=t.int("min_idle", maximum=MAX_REPETITIONS),
        options=options,
        target=t.text("target", TARGETS),
        knowledge=_knowledge(t.optional_text("knowledge"), base),
    )


def _knowledge(value: str | None, base: Path) -> str | None:
    """``tune.knowledge``: :data:`KNOWLEDGE_OFF`, or a path made absolute against the
    config's folder (whether it is a knowledge base is checked when a tune opens it)."""
    if value is None or value == KNOWLEDGE_OFF:
        return value
    path = Path(os.path.expandvars(value)).expanduser()
    return str(path if path.is_absolute() else base / path)


def _strategy_options(raw: Any) -> dict[str, dict[str, Any]]:
    """``tune.options``: a mapping of strategy name to a mapping of its options, each
    checked against the strategy's own list."""
    from iotune.strategies import known_strategies, make_strategy

    if not isinstance(raw, Mapping):
        raise ConfigError("tune.options: must be a mapping of strategy: {option: value}")
    out: dict[str, dict[str, Any]] = {}
    for name, values in raw.items():
        if name not in known_strategies():
            raise ConfigError(f"tune.options.{name}: unknown strategy; known strategies: "
                              f"{', '.join(known_strategies())}")
        if not isinstance(values, Mapping):
            raise ConfigError(f"tune.options.{name}: must be a mapping of option: value")
        try:
            make_strategy(str(name), **values)
        except ConfigError as exc:
            raise ConfigError(f"tune.options.{name}: {exc}") from None
        out[str(name)] = dict(values)
    return out


def _backend(raw: Any, base: Path) -> BackendConfig:
    if isinstance(raw, str):
        raw = {"name": raw}
    b = _Section(raw, "backend", ("name", "system", "noise", "replay_data", "replay_time_column",
                                  "replay_cores_column", "replay_pick",
                                  "replay_ignore_columns"), BackendConfig())
    data = b.optional_text("replay_data", default=None)
    data_path = Path(data) if data else None
    if data_path is not None and not data_path.is_absolute():
        data_path = base / data_path
    return BackendConfig(
        name=b.text("name"),
        sim_system=b.text("system", field="sim_system"),
        noise=b.number("noise", 0, MAX_NOISE),
        replay_data=data_path,
        replay_time_column=b.text("replay_time_column"),
        replay_cores_column=b.text("replay_cores_column"),
        replay_pick=b.text("replay_pick", REPLAY_PICKS),
        replay_ignore_columns=b.texts("replay_ignore_columns"),
    )


def default_config_path(cwd: Path | None = None) -> Path | None:
    """Where a config is looked for without ``-c``: ``./iotune.yaml``, ``$IOTUNE_CONFIG``,
    then ``$XDG_CONFIG_HOME/iotune/config.yaml`` (``~/.config/iotune/config.yaml``)."""
    local = (cwd or Path.cwd()) / "iotune.yaml"
    if local.is_file():
        return local
    if local.exists():
        raise ConfigError(f"{local}: is not a regular file; the config without -c is "
                          "./iotune.yaml (move it away or pass -c FILE)")
    env = os.environ.get("IOTUNE_CONFIG")
    if env:
        return Path(env)
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    user = xdg / "iotune" / "config.yaml"
    return user if user.is_file() else None
