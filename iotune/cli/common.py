"""Pieces shared by the commands: option decorators and the parsing of their values
(config lookup, ``--set``, ``--backend``, ``--kernel``, ``--command``). What a config
becomes when the user leaves parts of it open is the config layer's
(:mod:`iotune.defaults`)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click
import yaml

from iotune.backends import backend_class, known_backends
from iotune.cli.numbers import FiniteFloat
from iotune.cli.store_files import store_files
from iotune.config import BackendConfig, Config, default_config_path, load_config
from iotune.defaults import builtin_config, defaults_for_backend, with_proxy
from iotune.errors import ConfigError
from iotune.execution.outputs import InUse
from iotune.execution.slurm import current_allocation
from iotune.execution.slurm import job_id as slurm_job_id
from iotune.inputs import safe_load
from iotune.printable import Plain, SlurmName, SlurmTime, Word, one_line, printed
from iotune.settings.bounds import MAX_NOISE
from iotune.store.targets import TARGET_TABLE, TARGETS
from iotune.ui.output import FORMATS, progress

F = TypeVar("F", bound=Callable[..., Any])


def config_option(func: F) -> F:
    return click.option(
        "-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
        help="YAML config. Default: ./iotune.yaml, then $IOTUNE_CONFIG, then "
             "~/.config/iotune/config.yaml, else built-in local defaults.",
    )(func)


def target_option(help_text: str | None = None) -> Callable[[F], F]:
    """``--target``: the time to minimise and model, one of the targets
    (:mod:`iotune.store.targets`); ``help_text`` replaces the usual help."""
    accesses = ", ".join(t.needs_access for t in TARGET_TABLE.values())

    def wrap(func: F) -> F:
        return click.option(
            "--target", type=click.Choice(list(TARGETS)),
            help=help_text or f"The time to minimise and model: {', '.join(TARGETS)} (the "
                              f"kernel runs with access {accesses}); the tuned file says "
                              "what the time measures. Default: the config's tune.target "
                              f"({TARGETS[0]}).",
        )(func)

    return wrap


def format_option(default: str = "table", choices: Iterable[str] = FORMATS) -> Callable[[F], F]:
    def wrap(func: F) -> F:
        return click.option(
            "--format", "fmt", type=click.Choice(list(choices)), default=default,
            show_default=True, help="Output format on stdout.",
        )(func)

    return wrap


def backend_options(func: F) -> F:
    """``--backend``, ``--system`` and ``--noise``: which backend measures, and how."""
    func = click.option("--replay-data", type=click.Path(dir_okay=False, path_type=Path),
                        help="replay: an iotune store or CSV of recorded measurements.")(func)
    func = click.option("--noise", type=FiniteFloat(0, MAX_NOISE, limit=True),
                        help="sim: noise level, 1 = the system's measured run-to-run "
                             "variability, 0 = deterministic (default: the config's "
                             "backend.noise, 1).")(func)
    func = click.option("--system", "sim_system",
                        help="sim: system preset (hopper, perlmutter) or a preset YAML file.")(func)
    models = "; ".join(f"{name}: {backend_class(name).models}" for name in known_backends())
    return click.option("--backend", "backend_name", type=click.Choice(known_backends()),
                        help=f"{models}. Default: the config's ({BackendConfig.name}).")(func)


def with_backend(config: Config, backend: str | None, sim_system: str | None,
                 noise: float | None, replay_data: Path | None = None,
                 cores: int | None = None) -> Config:
    """``config`` with the backend options of the command line applied
    (:meth:`Config.with_overrides`), then completed by
    :func:`~iotune.defaults.defaults_for_backend` (``cores``: the target scale, when the
    command has one).

    The backend named (``--backend``, else the config's ``backend.name``) must be one
    registered (:func:`iotune.backends.backend_class`); ConfigError naming the option or
    the key otherwise. A config without a path (the built-in one of
    :func:`resolve_config`) counts as no config file; one loaded from a file is never
    replaced, at most its empty space filled.
    """
    config = config.with_overrides(backend=backend or None, sim_system=sim_system or None,
                                   noise=noise, replay_data=replay_data)
    name = config.backend.name
    backend_class(name, "--backend" if backend else "backend.name")
    for option, given, needs in (("--replay-data", replay_data, "replay"),
                                 ("--system", sim_system, "sim"), ("--noise", noise, "sim")):
        if given is not None and name != needs:
            raise ConfigError(f"{option}: only for the {needs} backend, but the backend is "
                              f"{name} (add --backend {needs}, or drop {option})")
    return defaults_for_backend(config, explicit_config=config.path is not None, cores=cores)


def remove_orphaned_runs(backend: Any) -> None:
    """Before real runs: remove run directories under scratch left by killed runs, and say
    how much that freed (see :mod:`iotune.execution.rundirs`)."""
    clean = getattr(backend, "remove_orphans", None)
    if clean is None:
        return
    done = clean()
    if done.removed:
        progress(f"iotune: removed {len(done.removed)} orphaned run director"
                 f"{'y' if len(done.removed) == 1 else 'ies'} ({done.bytes / 2**20:.1f} MiB) "
                 f"under {done.removed[0].parent}, left by runs whose iotune is gone")


def command_options(func: F) -> F:
    """``--command`` and ``--metric``: tune a user's own program instead of a kernel."""
    func = click.option("--metric", help="For a command kernel (--command, or one in the "
                        "config): wall (default), io_time (the preload library's write "
                        "time), regex:PATTERN (the first group of PATTERN in the "
                        "program's output, in seconds) or a mapping in YAML flow style: "
                        "'{regex: PATTERN, label: NAME, unit: s or MiB/s, match: last or "
                        "first}'.")(func)
    return click.option("--command", "app_command", metavar="'PROGRAM ARGS'",
                        help="A user's MPI program to run unmodified, e.g. "
                             "--command './sim -o {scratch}/ckpt.h5'; {cores}, {nodes} and "
                             "{scratch} (its fresh output directory) are replaced. See "
                             "docs/applications.md.")(func)


def with_command(config: Config, command: str | None, metric: str | None) -> Config:
    """``config`` for the program given by ``--command`` and measured by ``--metric`` (the
    config's own command kernel, its other keys kept, when it has one); unchanged when
    neither is given. ``--metric`` alone changes the metric of the config's command kernel,
    and is a ConfigError for any other kernel."""
    from iotune.config import KernelConfig
    from iotune.kernel_specs import get_kernel

    if command is None and metric is None:
        return config
    spec = get_kernel("command")
    own = config.kernel.name == spec.name
    if command is None and not own:
        raise ConfigError(f"--metric: only for a command kernel (--command, or kernel: "
                          f"{{name: command}} in the config); this config's kernel is "
                          f"{config.kernel.name}")
    base = config.kernel.args if own else {}
    raw = {k: v for k, v in base.items() if v != ""}
    if command is not None:
        raw["command"] = command
    if metric is not None:  # a new metric, with its own label, unit and match
        raw = {k: v for k, v in raw.items() if not k.startswith("metric_")}
        raw["metric"] = metric
    params = spec.normalise_params(raw, "--command" if command is not None else "--metric")
    spec.check_settings(config.space.names, "space")
    return config.with_overrides(kernel=KernelConfig(spec.name, tuple(params.items())))


def with_kernel(config: Config, kernel: str | None) -> tuple[Config, int | None]:
    """``config`` for the kernel named by ``--kernel``: a kernel name (its default arguments
    unless it is the config's kernel) or a proxy file from ``iotune proxy``, whose arguments
    replace the config's and whose pinned settings replace those of the space
    (:func:`iotune.defaults.with_proxy`).

    Warns (stderr) when the proxy is below its similarity threshold. Returns the config and
    the proxy's rank count (None when not a proxy).
    """
    from iotune.darshan import is_proxy_path, read_proxy

    if kernel is None:
        return config, None
    if not is_proxy_path(kernel):
        return config.with_overrides(kernel=kernel), None
    proxy = read_proxy(kernel)
    if proxy.warning():
        progress(f"iotune: warning: {kernel}: {proxy.warning()}")
    return with_proxy(config, proxy), proxy.ranks


def resolve_config(config_path: Path | None, required: bool = False) -> Config:
    """Load ``-c`` or the default config; built-in local defaults when none exists.

    A config built from the defaults has ``path`` None (see
    :func:`iotune.defaults.builtin_config`).
    """
    path = config_path or default_config_path()
    if path is not None:
        return load_config(path)
    if required:
        raise ConfigError("config: none found; pass -c CONFIG or run 'iotune init' to write "
                          "./iotune.yaml")
    progress("iotune: no config found (./iotune.yaml, $IOTUNE_CONFIG); using built-in local "
             f"defaults (scratch {tempfile.gettempdir()})")
    return builtin_config()


def in_use(config: Config | None, store: Path | None = None,
           inputs: dict[str, Path | None] | None = None) -> InUse:
    """What a command reads, which none of its outputs may replace: the store (``store``,
    else the config's) with its side files, the config file (the config's, else the one
    :func:`~iotune.config.default_config_path` finds), the replay data, and ``inputs``."""
    named = dict(inputs or {})
    config_file = config.path if config is not None else None
    if named.get("the config in use") is None:  # a -c not loaded yet may name it
        named["the config in use"] = config_file or default_config_path()
    if config is not None:
        named.setdefault("the replay data", config.backend.replay_data)
    return InUse.of([*store_files(store or (config.store if config is not None else None)),
                     *named.items()])


def job_script_options(func: F) -> F:
    """``--partition``, ``--account`` and ``--time``: ``#SBATCH`` values of the job script
    that ``--emit-sbatch`` writes (checked by :func:`check_job_script_options`)."""
    for option in reversed([
            click.option("--partition", help="Slurm partition for --emit-sbatch."),
            click.option("--account", help="Slurm account for --emit-sbatch."),
            click.option("--time", "time_limit", metavar="TIME",
                         help="Time limit for --emit-sbatch, in Slurm's format (MINUTES, "
                              "HOURS:MINUTES:SECONDS, DAYS-HOURS...; default: an estimate "
                              "from the store's recorded runs).")]):
        func = option(func)
    return func


def check_job_script_options(sbatch_path: Path | None, **values: str | None) -> None:
    """Each job-script option given (``partition``, ``account``, ``time_limit``) by its
    rule (:mod:`iotune.printable`), before anything is read or written; ConfigError
    naming the option when it breaks the rule, or when it is given without
    ``--emit-sbatch`` (it goes nowhere else). The script's path itself is printed in the
    ``sbatch`` line to run, so it may hold no control character."""
    if sbatch_path is not None:
        one_line(str(sbatch_path), "--emit-sbatch")
    kinds = {"partition": SlurmName, "account": SlurmName, "time_limit": SlurmTime}
    for name, value in values.items():
        if value is None:
            continue
        flag = "--time" if name == "time_limit" else f"--{name}"
        kinds[name](value, flag).text()
        if sbatch_path is None:
            raise ConfigError(f"{flag} is a value of the job script: give --emit-sbatch PATH "
                              "too")


def submit_line(sbatch_path: Path) -> str:
    """The line saying the job script is written, with the command that submits it."""
    return printed("iotune: wrote {path}; submit it with: sbatch {word}",
                   path=Plain(sbatch_path, "--emit-sbatch"),
                   word=Word(str(sbatch_path), "--emit-sbatch"))


def force_option(func: F) -> F:
    """``--force``: replace an output file of another kind (never the store or config)."""
    return click.option("--force", is_flag=True,
                        help="Replace an existing output of another kind (a CSV, a script, "
                             "a YAML file...); the store, its side files and the config in "
                             "use are never replaced.")(func)


def parse_assignments(items: Iterable[str], option: str) -> dict[str, Any]:
    """``["a=1", "b=4MiB"]`` into ``{"a": 1, "b": "4MiB"}`` (values read as YAML scalars)."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"{option} {item!r}: expected NAME=VALUE")
        try:
            value = safe_load(raw) if raw.strip() else raw
        except yaml.YAMLError:
            value = raw
        out[name.strip()] = raw if isinstance(value, dict | list) or value is None else value
    return out


def with_slurm_launcher(config: Config, launcher: str | None) -> Config:
    """Inside a Slurm allocation runs go through srun unless a launcher was named."""
    chosen = launcher or ("srun" if current_allocation() and config.system.launcher == "mpiexec"
                          else None)
    if chosen is None:
        return config
    if chosen == "srun" and not launcher:
        progress("iotune: inside a Slurm allocation: launching with srun")
    return config.with_overrides(launcher=chosen)


def requeue_hint() -> str:
    """`` or requeue the job: scontrol requeue JOB`` inside a Slurm job, else nothing."""
    job = slurm_job_id()
    return f" or requeue the job: scontrol requeue {job}" if job else ""


def duration_text(seconds: float | None) -> str:
    """``1h05m`` or ``4m09s``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def bandwidth_text(mib_s: float | None) -> str:
    """``123.4 MiB/s, `` or nothing when the bytes are unknown (a user's program)."""
    return f"{mib_s:.1f} MiB/s, " if mib_s is not None else ""
