"""Search spaces: the values each setting may take, and the rules a configuration must obey.

A configuration is a dict of canonical setting values. The rules that depend on the scale
(``cb_nodes`` at most the ranks and at most ``aggregators_per_node`` per node; stripe count at
most the OST count when known) are checked here, for spaces and for single runs alike.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iotune.errors import ConfigError
from iotune.settings.bounds import MAX_SPACE
from iotune.settings.values import normalise_setting


@dataclass(frozen=True)
class Limits:
    """Facts about the system that bound valid configurations."""

    cores_per_node: int
    ost_count: int | None = None
    aggregators_per_node: int | None = None

    def nodes_for(self, cores: int) -> int:
        return -(-cores // self.cores_per_node)


def check_configuration(settings: Mapping[str, Any], cores: int, limits: Limits,
                        where: str = "") -> None:
    """Raise ConfigError naming the setting when ``settings`` break a rule at ``cores`` ranks."""
    prefix = f"{where}." if where else ""
    count = settings.get("stripe_count")
    if count is not None and limits.ost_count is not None and count > limits.ost_count:
        raise ConfigError(
            f"{prefix}stripe_count: {count} exceeds the system's OST count ({limits.ost_count})"
        )
    aggregators = settings.get("cb_nodes")
    if aggregators is not None:
        if aggregators > cores:
            raise ConfigError(
                f"{prefix}cb_nodes: {aggregators} aggregators exceed the {cores} ranks of the run"
            )
        if limits.aggregators_per_node is not None:
            allowed = limits.nodes_for(cores) * limits.aggregators_per_node
            if aggregators > allowed:
                raise ConfigError(
                    f"{prefix}cb_nodes: {aggregators} aggregators exceed {allowed} "
                    f"({limits.nodes_for(cores)} nodes x {limits.aggregators_per_node} per node)"
                )


def is_valid(settings: Mapping[str, Any], cores: int, limits: Limits) -> bool:
    try:
        check_configuration(settings, cores, limits)
    except ConfigError:
        return False
    return True


@dataclass(frozen=True)
class SearchSpace:
    """The allowed values of each tuned setting, in the order written in the config."""

    values: tuple[tuple[str, tuple[Any, ...]], ...]

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], where: str = "space") -> SearchSpace:
        """Validate ``{setting: [values...]}``; a scalar counts as a one-value list."""
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where}: must be a mapping of setting -> list of values")
        out = []
        for name, values in raw.items():
            items = values if isinstance(values, list) else [values]
            if not items:
                raise ConfigError(f"{where}.{name}: the list of values is empty")
            canon = tuple(
                normalise_setting(str(name), v, f"{where}.{name}") for v in items
            )
            if len(set(canon)) != len(canon):
                raise ConfigError(f"{where}.{name}: values repeat: {items}")
            out.append((str(name), canon))
        size = math.prod(len(values) for _, values in out)
        if size > MAX_SPACE:
            raise ConfigError(f"{where}: {size:,} configurations (the product of the numbers "
                              f"of values) is above the limit of {MAX_SPACE:,} "
                              "(docs/campaigns.md, Limits); fewer values per setting")
        return cls(tuple(out))

    @property
    def size(self) -> int:
        """Configurations of the full factorial, before the rules of a scale remove any."""
        return math.prod(len(values) for _, values in self.values)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.values]

    def as_dict(self) -> dict[str, tuple[Any, ...]]:
        return dict(self.values)

    def configurations(self, cores: int, limits: Limits) -> list[dict[str, Any]]:
        """Every valid combination at ``cores`` ranks (full factorial minus rule breakers)."""
        names = self.names
        combos = itertools.product(*(vals for _, vals in self.values))
        configs = [dict(zip(names, combo, strict=True)) for combo in combos]
        return [c for c in configs if is_valid(c, cores, limits)]

    def check_against(self, limits: Limits, where: str = "space") -> None:
        """ConfigError for a value that breaks a rule at every scale (stripe count > OSTs).

        Rules that depend on the scale (aggregators per rank or node) are applied when the
        configurations of one scale are enumerated, not here.
        """
        for name, vals in self.values:
            for value in vals:
                check_configuration({name: value}, 2**40, Limits(1, limits.ost_count), where)
