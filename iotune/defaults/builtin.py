"""The config commands use when there is none: the ``iotune init`` template for this machine."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml

from iotune.config import Config, build_config


def builtin_config(cwd: Path | None = None) -> Config:
    """The config used when there is none: the ``iotune init`` template for this machine.

    The template (:func:`iotune.templates.starter_config`) with scratch in the temporary
    directory, ``cores_per_node`` left to its default (the CPUs of this machine), and
    ``cb_config_list: "*:k"`` (k = ``aggregators_per_node``) so that ROMIO, which puts one
    aggregator per host unless told otherwise, honours the ``cb_nodes`` values of the space.
    The store is ``iotune-store.jsonl`` in ``cwd`` (default: the working directory).
    The config has ``path`` None: it was read from no file.
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
