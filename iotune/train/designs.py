"""Training designs: which configurations of the search space to measure at one scale.

- ``full``: every valid configuration (full factorial).
- ``lhs``: a Latin hypercube over the *indices* of each setting's allowed values
  (``scipy.stats.qmc.LatinHypercube``, seeded), so every value band of every setting is
  covered with few runs; duplicates and invalid configurations are replaced by further draws.
- ``systematic``: the paper's rule: a few values of each setting spread over its whole
  range (the smallest, the largest and evenly spaced ones between them by position in the
  sorted list), full factorial over those; fewer values at larger scales (the number of
  values per setting falls from 6 at the smallest training scale by one per larger scale,
  down to 2). With ``runs``, the fewest values per setting (from that level up) whose valid
  full factorial has at least ``runs`` configurations, thinned evenly to ``runs``: so a
  config can name Table 2 of Behzad et al. (216, 120, 72, 60, 60 runs from 128 to 2048
  cores) whatever the scale's limits leave valid.
- ``recorded``: the configurations a backend has recorded at the scale (the ``replay``
  backend's non-default ones), all of them or ``runs`` of them spread the ``lhs`` way: a
  seeded Latin hypercube over each setting's recorded values, each point taking the nearest
  recorded configuration not yet taken. The config's space is not consulted.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from iotune.errors import ConfigError
from iotune.settings.space import Limits, SearchSpace, is_valid

Configuration = dict[str, Any]


def full_factorial(space: SearchSpace, cores: int, limits: Limits) -> list[Configuration]:
    """Every valid configuration of ``space`` at ``cores`` ranks."""
    return space.configurations(cores, limits)


def latin_hypercube(space: SearchSpace, cores: int, limits: Limits, runs: int,
                    seed: int) -> list[Configuration]:
    """``runs`` distinct valid configurations spread by a Latin hypercube (all if fewer exist)."""
    from scipy.stats import qmc

    valid = space.configurations(cores, limits)
    if len(valid) <= runs:
        return valid
    names = space.names
    values = [vals for _, vals in space.values]
    sampler = qmc.LatinHypercube(d=len(names), seed=seed)
    chosen: list[Configuration] = []
    seen: set[tuple[Any, ...]] = set()
    for _ in range(50):  # redraws replace duplicates and invalid points
        for point in sampler.random(runs):
            combo = tuple(vals[min(int(u * len(vals)), len(vals) - 1)]
                          for u, vals in zip(point, values, strict=True))
            config = dict(zip(names, combo, strict=True))
            if combo in seen or not is_valid(config, cores, limits):
                continue
            seen.add(combo)
            chosen.append(config)
            if len(chosen) == runs:
                return chosen
    return chosen


def spread(values: Sequence[Any], k: int) -> list[Any]:
    """``k`` entries of ``values`` (ascending order) spread from the first to the last."""
    ordered = sorted(values, key=_sort_key)
    if k >= len(ordered):
        return list(ordered)
    if k == 1:
        return [ordered[len(ordered) // 2]]
    positions = np.linspace(0, len(ordered) - 1, k).round().astype(int)
    return [ordered[i] for i in dict.fromkeys(positions.tolist())]


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))


def systematic(space: SearchSpace, cores: int, limits: Limits,
               values_per_setting: int) -> list[Configuration]:
    """Full factorial over ``values_per_setting`` spread values of each setting, valid only.

    When aggregators above the scale's limit are dropped, the largest allowed value is
    substituted so the range at this scale stays covered.
    """
    names = space.names
    picks = []
    for name, vals in space.values:
        allowed = [v for v in vals if is_valid({name: v}, cores, limits)]
        picks.append(spread(allowed or list(vals), values_per_setting))
    configs = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*picks)]
    return [c for c in configs if is_valid(c, cores, limits)]


def systematic_level(scale_rank: int) -> int:
    """Values per setting for the ``scale_rank``-th smallest training scale (0-based)."""
    return max(2, 6 - scale_rank)


_UNSET = object()  # a setting a recorded configuration leaves at its default


def recorded_subset(recorded: Sequence[Configuration], runs: int | None,
                    seed: int) -> list[Configuration]:
    """The distinct ``recorded`` configurations in a stable order, or ``runs`` of them.

    The subset is space-filling and seeded like ``lhs``: each setting's recorded values
    (unset, i.e. the default, counts as one more value, before the others) are bands of
    [0, 1] in sorted order, and each configuration is the point at its bands' centres; a
    Latin hypercube of ``runs`` points (``seed``) is drawn and each point, in turn, takes the
    nearest configuration not yet taken (Euclidean; ties go to the first in sorted order).
    """
    unique = {tuple(sorted(c.items())): dict(c) for c in recorded}
    ordered = sorted(unique.values(), key=_configuration_sort_key)
    if runs is None or runs >= len(ordered):
        return ordered
    from scipy.stats import qmc

    names = sorted({name for c in ordered for name in c})
    points = np.empty((len(ordered), len(names)))
    for j, name in enumerate(names):
        levels: list[Any] = sorted({c[name] for c in ordered if name in c}, key=_sort_key)
        if any(name not in c for c in ordered):
            levels.insert(0, _UNSET)
        band = {value: i for i, value in enumerate(levels)}
        for i, c in enumerate(ordered):
            points[i, j] = (band[c.get(name, _UNSET)] + 0.5) / len(levels)
    taken = np.zeros(len(ordered), dtype=bool)
    for target in qmc.LatinHypercube(d=len(names), seed=seed).random(runs):
        distance = np.where(taken, np.inf, ((points - target) ** 2).sum(axis=1))
        taken[int(np.argmin(distance))] = True
    return [c for c, keep in zip(ordered, taken, strict=True) if keep]


def _configuration_sort_key(config: Configuration) -> tuple[tuple[str, tuple[int, Any]], ...]:
    return tuple((name, _sort_key(value)) for name, value in sorted(config.items()))


def design_configurations(design: str, space: SearchSpace, cores: int, limits: Limits, *,
                          runs: int | None = None, seed: int = 0, scale_rank: int = 0,
                          recorded: Sequence[Configuration] | None = None,
                          ) -> list[Configuration]:
    """The configurations of one training scale for a design named in the config.

    ``recorded`` (the backend's recorded configurations at ``cores``) is what the
    ``recorded`` design draws from; the other designs draw from ``space``.
    """
    if design == "recorded":
        if recorded is None:
            raise ConfigError("train.scales: the 'recorded' design needs a backend with "
                              "recorded configurations (--backend replay)")
        return recorded_subset(recorded, runs, seed)
    if not space.names:
        raise ConfigError("space: empty; name at least one setting and its values to train on")
    if design == "full":
        return full_factorial(space, cores, limits)
    if design == "lhs":
        if runs is None:
            raise ConfigError("train.scales: a Latin hypercube design needs its number of runs")
        return latin_hypercube(space, cores, limits, runs, seed)
    if design == "systematic":
        level = systematic_level(scale_rank)
        configs = systematic(space, cores, limits, level)
        widest = max(len(values) for _, values in space.values)
        while runs is not None and len(configs) < runs and level < widest:
            level += 1
            configs = systematic(space, cores, limits, level)
        if runs is None or runs >= len(configs):
            return configs
        keep = np.linspace(0, len(configs) - 1, runs).round().astype(int)
        return [configs[i] for i in dict.fromkeys(keep.tolist())]
    raise ConfigError(f"train.scales: unknown design '{design}'; "
                      "known: full, lhs, systematic, recorded")
