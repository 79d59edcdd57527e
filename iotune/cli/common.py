"""Pieces shared by the commands: config lookup, ``--set`` parsing, output options."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click
import yaml

from iotune.config import Config, build_config, default_config_path, load_config
from iotune.errors import ConfigError
from iotune.execution.slurm import current_allocation
from iotune.execution.slurm import job_id as slurm_job_id
from iotune.kernel_specs import get_kernel
from iotune.settings.space import SearchSpace
from iotune.settings.units import format_bytes
from iotune.ui.output import FORMATS, progress

F = TypeVar("F", bound=Callable[..., Any])


def config_option(func: F) -> F:
    return click.option(
        "-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
        help="YAML config. Default: ./iotune.yaml, then $IOTUNE_CONFIG, then "
             "~/.config/iotune/config.yaml, else built-in local defaults.",
    )(func)


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
    func = click.option("--noise", type=click.FloatRange(min=0),
                        help="sim: noise level, 1 = the system's measured run-to-run "
                             "variability, 0 = deterministic (default: the config's "
                             "backend.noise, 1).")(func)
    func = click.option("--system", "sim_system",
                        help="sim: system preset (hopper, perlmutter) or a preset YAML file.")(func)
    return click.option("--backend", "backend_name", type=click.Choice(["mpi", "sim", "replay"]),
                        help="mpi: real runs; sim: the simulated Lustre system; replay: "
                             "recorded measurements. Default: the config's (mpi).")(func)


def with_backend(config: Config, backend: str | None, sim_system: str | None,
                 noise: float | None, replay_data: Path | None = None,
                 cores: int | None = None) -> Config:
    """``config`` with the backend options of the command line applied
    (:meth:`Config.with_overrides`), then completed by :func:`defaults_for_backend`
    (``cores``: the target scale, when the command has one).

    A config without a path (the built-in one of :func:`resolve_config`) counts as no
    config file; one loaded from a file is never replaced, at most its empty space filled.
    """
    config = config.with_overrides(backend=backend or None, sim_system=sim_system or None,
                                   noise=noise, replay_data=replay_data)
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
                        "time) or regex:PATTERN (the first group of PATTERN in the "
                        "program's output, in seconds).")(func)
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
    if metric is not None:
        raw["metric"] = metric
    params = spec.normalise_params(raw, "--command" if command is not None else "--metric")
    spec.check_settings(config.space.names, "space")
    return config.with_overrides(kernel=KernelConfig(spec.name, tuple(params.items())))


def with_kernel(config: Config, kernel: str | None) -> tuple[Config, int | None]:
    """``config`` for the kernel named by ``--kernel``: a kernel name (its default arguments
    unless it is the config's kernel) or a proxy file from ``iotune proxy``, whose arguments
    replace the config's and whose pinned settings replace those of the space.

    Warns (stderr) when the proxy is below its similarity threshold. Returns the config and
    the proxy's rank count (None when not a proxy).
    """
    from iotune.config import KernelConfig
    from iotune.darshan import is_proxy_path, read_proxy

    if kernel is None:
        return config, None
    if not is_proxy_path(kernel):
        return config.with_overrides(kernel=kernel), None
    proxy = read_proxy(kernel)
    if proxy.warning():
        progress(f"iotune: warning: {kernel}: {proxy.warning()}")
    pinned = dict(proxy.settings)
    values = [(n, (pinned.pop(n),) if n in pinned else vals) for n, vals in config.space.values]
    values += [(n, (v,)) for n, v in pinned.items()]
    replaced = config.with_overrides(kernel=KernelConfig(proxy.kernel, tuple(proxy.args.items())),
                                     space=SearchSpace(tuple(values)))
    return replaced, proxy.ranks


def resolve_config(config_path: Path | None, required: bool = False) -> Config:
    """Load ``-c`` or the default config; built-in local defaults when none exists.

    A config built from the defaults has ``path`` None (see :func:`builtin_config`).
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


def builtin_config(cwd: Path | None = None) -> Config:
    """The config used when there is none: the ``iotune init`` template for this machine.

    The template (:func:`iotune.templates.starter_config`) with scratch in the temporary
    directory, ``cores_per_node`` left to its default (the CPUs of this machine), and
    ``cb_config_list: "*:k"`` (k = ``aggregators_per_node``) so that ROMIO, which puts one
    aggregator per host unless told otherwise, honours the ``cb_nodes`` values of the space.
    The store is ``iotune-store.jsonl`` in ``cwd`` (default: the working directory).
    """
    from iotune.templates import starter_config

    raw = yaml.safe_load(starter_config())
    system = raw["system"]
    system["scratch"] = tempfile.gettempdir()
    system.pop("cores_per_node", None)
    per_node = system.get("aggregators_per_node")
    if per_node and "cb_config_list" not in raw["space"]:
        raw["space"] = {"cb_config_list": [f"*:{per_node}"], **raw["space"]}
    return build_config(raw, cwd or Path.cwd())


def defaults_for_backend(config: Config, explicit_config: bool,
                         cores: int | None = None) -> Config:
    """``config`` completed for its backend when the user did not say what to search.

    Only the ``sim`` backend has defaults of its own: the paper's VPIC-IO search on the
    simulated system (``backend.sim_system``, e.g. hopper) -- the grid of
    :func:`iotune.sim.space.paper_space` (Table 1 stripe counts up to the OST count, Table 1
    stripe sizes, aggregator counts from 1 to one per node).

    - No config file (``explicit_config`` False): the whole config is replaced by one for
      that system, as ``configs/hopper-vpic.yaml`` gives for hopper: ``cores_per_node`` and
      ``ost_count`` of the preset, one aggregator per node, the kernel's default arguments
      (VPIC-IO: 8 Mi particles = 256 MiB per rank) without fsync, three ``systematic``
      training scales (the smallest power of two of at least 5 nodes, x2, x4: 128, 256 and
      512 ranks on hopper), and the store ``iotune-store.jsonl`` in the working directory.
      The backend options are kept.
    - A config file whose space is empty: only the space is filled in, against that
      config's limits. A config file with a space is returned unchanged.

    The aggregator counts of the paper's grid depend on the scale, so the space is the one
    of ``cores`` when given (exactly ``paper_space(cores)`` there), else the union of the
    training scales' grids (each scale keeps the counts up to its node count).
    """
    if config.backend.name != "sim":
        return config
    if explicit_config and config.space.names:
        return config
    from iotune.sim import load_system

    sim = load_system(config.backend.sim_system)
    if explicit_config:
        scales = [cores] if cores else [s.cores for s in config.train.scales]
        limits = config.system.limits
        space = _paper_space(scales or _sim_train_scales(sim.cores_per_node),
                             limits.cores_per_node, limits.ost_count or sim.ost_count)
        progress(f"iotune: {config.path}: no space; searching the paper's space on "
                 f"{sim.name} ({', '.join(space)})")
        return config.with_overrides(space=SearchSpace.from_mapping(space))
    train = _sim_train_scales(sim.cores_per_node)
    raw = {
        "system": {"name": sim.name, "scratch": tempfile.gettempdir(),
                   "cores_per_node": sim.cores_per_node, "ost_count": sim.ost_count,
                   "aggregators_per_node": 1},
        # The kernel's default arguments, without fsync (as configs/hopper-vpic.yaml).
        "kernel": {"name": "vpic",
                   "args": {**get_kernel("vpic").normalise_params({}), "fsync": False}},
        "space": _paper_space([cores] if cores else train, sim.cores_per_node, sim.ost_count),
        "train": {"repetitions": 1,
                  "scales": [{"cores": c, "design": "systematic"} for c in train]},
    }
    built = build_config(raw, Path.cwd())
    per_rank = get_kernel(built.kernel.name).bytes_per_rank(built.kernel.args)
    progress(f"iotune: simulated {sim.name} without a config: the paper's VPIC-IO space "
             f"({sim.cores_per_node} cores/node, {sim.ost_count} OSTs, one aggregator per "
             f"node, {format_bytes(per_rank)} per rank), training at "
             f"{', '.join(map(str, train))} ranks")
    # What the command line set stays: the backend options and how to launch (--launcher,
    # srun inside Slurm).
    system = dataclasses.replace(built.system, launcher=config.system.launcher,
                                 launcher_template=config.system.launcher_template)
    return dataclasses.replace(built, system=system, backend=config.backend)


def _sim_train_scales(cores_per_node: int) -> list[int]:
    """Three training scales: the smallest power of two of at least 5 nodes, x2, x4."""
    first = 1 << (5 * cores_per_node - 1).bit_length()
    return [first, 2 * first, 4 * first]


def _paper_space(scales: Iterable[int], cores_per_node: int,
                 ost_count: int) -> dict[str, list[Any]]:
    """The values of each column of ``paper_space`` over ``scales`` (union), as a space."""
    from iotune.sim import paper_space

    grids = [paper_space(c, cores_per_node=cores_per_node, ost_count=ost_count) for c in scales]
    return {str(name): sorted({int(v) for grid in grids for v in grid[name].unique()})
            for name in grids[0].columns}


def parse_assignments(items: Iterable[str], option: str) -> dict[str, Any]:
    """``["a=1", "b=4MiB"]`` into ``{"a": 1, "b": "4MiB"}`` (values read as YAML scalars)."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"{option} {item!r}: expected NAME=VALUE")
        try:
            value = yaml.safe_load(raw) if raw.strip() else raw
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
