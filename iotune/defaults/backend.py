"""A backend's own defaults: the paper's VPIC-IO search on a simulated system."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from iotune.backends import backend_class
from iotune.config import Config, build_config
from iotune.kernel_specs import get_kernel
from iotune.settings.space import SearchSpace
from iotune.settings.units import format_bytes
from iotune.ui.output import progress


def defaults_for_backend(config: Config, explicit_config: bool,
                         cores: int | None = None) -> Config:
    """``config`` completed for its backend when the user did not say what to search.

    Only a backend that runs on a simulated system preset has defaults of its own
    (:attr:`iotune.backends.Backend.simulates`: ``sim``): the paper's VPIC-IO search on the
    simulated system (``backend.sim_system``, e.g. hopper) -- the grid of
    :func:`iotune.sim.space.paper_space` (Table 1 stripe counts up to the OST count, Table 1
    stripe sizes, aggregator counts from 1 to one per node). Any other config is returned
    unchanged; a backend name no backend is registered under is a ConfigError.

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
    if not backend_class(config.backend.name).simulates:
        return config
    if explicit_config and config.space.names:
        return config
    from iotune.sim import load_system

    sim = load_system(config.backend.sim_system)
    if explicit_config:
        scales = [cores] if cores else [s.cores for s in config.train.scales]
        limits = config.system.limits
        space = paper_space_values(scales or sim_train_scales(sim.cores_per_node),
                                   limits.cores_per_node, limits.ost_count or sim.ost_count)
        progress(f"iotune: {config.path}: no space; searching the paper's space on "
                 f"{sim.name} ({', '.join(space)})")
        return config.with_overrides(space=SearchSpace.from_mapping(space))
    train = sim_train_scales(sim.cores_per_node)
    raw = {
        "system": {"name": sim.name, "scratch": tempfile.gettempdir(),
                   "cores_per_node": sim.cores_per_node, "ost_count": sim.ost_count,
                   "aggregators_per_node": 1},
        # The kernel's default arguments, without fsync (as configs/hopper-vpic.yaml).
        "kernel": {"name": "vpic",
                   "args": {**get_kernel("vpic").normalise_params({}), "fsync": False}},
        "space": paper_space_values([cores] if cores else train, sim.cores_per_node,
                                    sim.ost_count),
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


def sim_train_scales(cores_per_node: int) -> list[int]:
    """Three training scales: the smallest power of two of at least 5 nodes, x2, x4."""
    first = 1 << (5 * cores_per_node - 1).bit_length()
    return [first, 2 * first, 4 * first]


def paper_space_values(scales: Iterable[int], cores_per_node: int,
                       ost_count: int) -> dict[str, list[Any]]:
    """The values of each column of :func:`iotune.sim.paper_space` over ``scales`` (their
    union), as a space mapping of setting name to sorted values."""
    from iotune.sim import paper_space

    grids = [paper_space(c, cores_per_node=cores_per_node, ost_count=ost_count) for c in scales]
    return {str(name): sorted({int(v) for grid in grids for v in grid[name].unique()})
            for name in grids[0].columns}
