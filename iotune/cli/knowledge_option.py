"""Which knowledge base a tune reads, and what it asks of it (docs/knowledge.md).

The knowledge base is ``--knowledge KB``, else the config's ``tune.knowledge``, else the
environment's ``IOTUNE_KNOWLEDGE`` (a site-wide default); the word ``none`` at any of the
three switches it off whatever the ones below say. The tune asks it about its system and
workload: for a replay of a CSV with a ``FILE.workload.yaml`` beside it, those of the
sidecar; otherwise the config's system name (its file system unknown) and the kernel's
workload at the tune's scale.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from iotune.config import KNOWLEDGE_OFF, Config
from iotune.errors import ConfigError

if TYPE_CHECKING:
    from iotune.knowledge.descriptor import SystemKey, WorkloadDescriptor
    from iotune.knowledge.priors import Priors

#: The environment variable naming a site-wide knowledge base.
ENV = "IOTUNE_KNOWLEDGE"
#: The suffix of a replay CSV's workload sidecar (``FILE.csv`` -> ``FILE.workload.yaml``).
SIDECAR_SUFFIX = ".workload.yaml"


def chosen_knowledge(flag: str | None, config: Config,
                     env: Mapping[str, str] | None = None) -> tuple[Path, str] | None:
    """The knowledge base to read and where it was named (``--knowledge``,
    ``tune.knowledge`` or ``IOTUNE_KNOWLEDGE``), or None: none named, or switched off with
    ``none``. The flag beats the config, which beats the environment. ConfigError (one
    line, naming where) for an empty value or a path that is not a file."""
    env = os.environ if env is None else env
    for value, where in ((flag, "--knowledge"), (config.tune.knowledge, "tune.knowledge"),
                         (env.get(ENV), ENV)):
        if value is None:
            continue
        if value == KNOWLEDGE_OFF:
            return None
        if not value.strip():
            raise ConfigError(f"{where}: empty; give a knowledge base's file (iotune "
                              f"knowledge build) or '{KNOWLEDGE_OFF}'")
        path = Path(value).expanduser()
        if not path.is_file():
            what = "is not a file" if path.exists() else "no such file"
            raise ConfigError(f"{where}: {value}: {what}; give a knowledge base built by "
                              f"'iotune knowledge build', or '{KNOWLEDGE_OFF}' to tune "
                              "without one")
        return path, where
    return None


def sidecar_of(config: Config) -> Path | None:
    """The workload sidecar beside the replayed CSV, when the tune replays one that has it."""
    data = config.backend.replay_data
    if config.backend.name != "replay" or data is None:
        return None
    sidecar = data.with_name(data.name.removesuffix(".csv") + SIDECAR_SUFFIX)
    return sidecar if sidecar.is_file() else None


def tune_question(config: Config, cores: int) -> tuple[SystemKey, WorkloadDescriptor]:
    """The system and workload a tune asks the knowledge base about (see the module)."""
    from iotune.knowledge.descriptor import SystemKey, from_sidecar, of_kernel

    sidecar = sidecar_of(config)
    if sidecar is not None:
        system, workload, _ = from_sidecar(sidecar)
        return system, workload
    per_node = max(1, min(cores, config.system.cores_per_node))
    return (SystemKey(config.system.name),
            of_kernel(config.kernel.name, config.kernel.args, cores, per_node))


def tune_priors(flag: str | None, config: Config, cores: int,
                env: Mapping[str, str] | None = None) -> Priors | None:
    """What the chosen knowledge base (:func:`chosen_knowledge`) knows for this tune, or
    None when none is chosen."""
    chosen = chosen_knowledge(flag, config, env)
    if chosen is None:
        return None
    from iotune.knowledge.query import priors_for

    path, _ = chosen
    system, workload = tune_question(config, cores)
    return priors_for(path, system, workload)
