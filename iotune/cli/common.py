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
from iotune.output import FORMATS, progress

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
                        help="sim: noise level (0 = deterministic; default: the config's).")(func)
    func = click.option("--system", "sim_system",
                        help="sim: system preset (hopper, perlmutter) or a preset YAML file.")(func)
    return click.option("--backend", "backend_name", type=click.Choice(["mpi", "sim", "replay"]),
                        help="mpi: real runs; sim: the simulated Lustre system; replay: "
                             "recorded measurements. Default: the config's (mpi).")(func)


def with_backend(config: Config, backend: str | None, sim_system: str | None,
                 noise: float | None, replay_data: Path | None = None) -> Config:
    """``config`` with the backend options of the command line applied."""
    changes: dict[str, Any] = {}
    if backend:
        changes["name"] = backend
    if sim_system:
        changes["sim_system"] = sim_system
    if noise is not None:
        changes["noise"] = noise
    if replay_data is not None:
        changes["replay_data"] = replay_data.resolve()
    if not changes:
        return config
    return dataclasses.replace(config, backend=dataclasses.replace(config.backend, **changes))


def with_kernel(config: Config, kernel: str | None) -> tuple[Config, int | None]:
    """``config`` for the kernel named by ``--kernel``: a kernel name (its default arguments
    unless it is the config's kernel) or a proxy file from ``iotune proxy``, whose arguments
    replace the config's and whose pinned settings replace those of the space.

    Returns the config and the proxy's rank count (None when not a proxy).
    """
    from iotune.config import KernelConfig
    from iotune.darshan import is_proxy_path, read_proxy
    from iotune.kernels import get_kernel
    from iotune.space import SearchSpace

    if kernel is None:
        return config, None
    if is_proxy_path(kernel):
        proxy = read_proxy(kernel)
        pinned = dict(proxy.settings)
        values = [(n, (pinned.pop(n),) if n in pinned else vals) for n, vals in config.space.values]
        values += [(n, (v,)) for n, v in pinned.items()]
        replaced = dataclasses.replace(
            config, kernel=KernelConfig(proxy.kernel, tuple(proxy.args.items())),
            space=SearchSpace(tuple(values)))
        return replaced, proxy.ranks
    spec = get_kernel(kernel, "--kernel")
    if spec.name == config.kernel.name:
        return config, None
    defaults = KernelConfig(spec.name, tuple(spec.normalise_params({}).items()))
    return dataclasses.replace(config, kernel=defaults), None


def resolve_config(config_path: Path | None, required: bool = False) -> Config:
    """Load ``-c`` or the default config; built-in local defaults when none exists."""
    path = config_path or default_config_path()
    if path is not None:
        return load_config(path)
    if required:
        raise ConfigError("config: none found; pass -c CONFIG or run 'iotune init' to write "
                          "./iotune.yaml")
    progress("iotune: no config found (./iotune.yaml, $IOTUNE_CONFIG); using built-in local "
             f"defaults (scratch {tempfile.gettempdir()})")
    return build_config({"system": {"scratch": tempfile.gettempdir()}}, Path.cwd())


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
