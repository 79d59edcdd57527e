"""The genetic algorithm iotune uses wherever it evolves configurations.

Both the ``genetic`` search strategy (:mod:`iotune.strategies.genetic`) and the proxy
search (:mod:`iotune.darshan.search`) run :func:`evolve`; they differ only in their
:class:`GeneticOptions`, their fitness and how they repair a child.

A *genome* is a tuple of indices, one per gene, into that gene's list of allowed values;
the caller only says how many values each gene has (``sizes``) and which genes are
*ordered* (neighbouring indices are similar values, like a power-of-two size grid).
Fitness is maximised. One generation:

1. the ``elite`` fittest genomes go on unchanged;
2. the rest are children: two parents, each the fittest of ``tournament`` genomes drawn at
   random, are crossed with probability ``crossover`` (uniform: each gene from either
   parent; or two-point: a middle run of genes swapped), giving two children, of which
   the first ``offspring`` (1 or 2) are kept;
3. each gene of a child mutates with probability ``mutation``: an ordered gene steps by
   -2, -1, +1 or +2 with probability ``step`` (clipped to its range), any other mutation
   jumps to a random value;
4. ``repair`` (when given) replaces a child that breaks the caller's rules.

The search ends after ``generations`` generations, when the best fitness reaches
``goal``, after ``patience`` generations without improvement, or when the fitness
function returns fewer values than genomes (a budget ran out). The fitness function gets
the whole population each generation: callers memoise, so a genome met again costs
nothing. Everything is deterministic for a given random generator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

Genome = tuple[int, ...]
#: Fitness of a population, in order; fewer values than genomes means "stop here".
Fitness = Callable[[list[Genome]], Sequence[float]]
#: Replace a child that breaks the caller's rules (or return it unchanged).
Repair = Callable[[Genome, np.random.Generator], Genome]
#: Told ``(generation, best fitness)`` after each generation.
Observer = Callable[[int, float], None]

#: An improvement smaller than this is no improvement (fitness values are similarities
#: or negated times, far coarser than this).
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class GeneticOptions:
    """The knobs of :func:`evolve` (see the module doc for what each one does)."""

    population: int
    generations: int
    tournament: int = 2
    crossover: float = 0.8
    two_point: bool = False
    offspring: int = 2
    mutation: float = 0.15
    step: float = 0.0
    elite: int = 1
    patience: int | None = None
    goal: float | None = None

    def __post_init__(self) -> None:
        if self.population < 1 or self.generations < 0 or self.tournament < 1:
            raise ValueError("population >= 1, generations >= 0 and tournament >= 1 must "
                             f"hold, but got {self.population}, {self.generations}, "
                             f"{self.tournament}")
        if self.offspring not in (1, 2):
            raise ValueError(f"offspring must be 1 or 2, but got {self.offspring}")
        if not 0 <= self.elite <= self.population:
            raise ValueError(f"0 <= elite <= population must hold, but got {self.elite}")


@dataclass
class Evolution:
    """The fittest genome met, its fitness, the generations bred and the best fitness
    after the initial population and after each generation."""

    best: Genome
    fitness: float
    generations: int
    history: list[float] = field(default_factory=list)


def evolve(sizes: Sequence[int], initial: Sequence[Genome], fitness: Fitness,
           options: GeneticOptions, rng: np.random.Generator,
           ordered: Sequence[bool] | None = None, repair: Repair | None = None,
           observe: Observer | None = None) -> Evolution | None:
    """Evolve ``initial`` (the first population) under ``fitness``; None when not even the
    first population could be evaluated. ``sizes[i]`` is the number of values of gene
    ``i``; ``ordered`` (default: none) marks the genes that mutate by steps."""
    steps = list(ordered) if ordered is not None else [False] * len(sizes)
    population = [tuple(int(i) for i in g) for g in initial]
    scores = list(fitness(population))
    if not population or len(scores) < len(population):
        return None
    lead = max(range(len(population)), key=lambda i: scores[i])
    best, best_score = population[lead], float(scores[lead])
    history = [best_score]
    stale = bred = 0
    for generation in range(1, options.generations + 1):
        if options.goal is not None and best_score >= options.goal - _TOLERANCE:
            break
        population = _breed(population, scores, sizes, steps, options, rng, repair)
        scores = list(fitness(population))
        if len(scores) < len(population):
            break
        bred = generation
        lead = max(range(len(population)), key=lambda i: scores[i])
        if scores[lead] > best_score + _TOLERANCE:
            best, best_score, stale = population[lead], float(scores[lead]), 0
        else:
            stale += 1
        history.append(best_score)
        if observe is not None:
            observe(generation, best_score)
        if options.patience is not None and stale >= options.patience:
            break
    return Evolution(best, best_score, bred, history)


def _breed(population: list[Genome], scores: list[float], sizes: Sequence[int],
           ordered: list[bool], options: GeneticOptions, rng: np.random.Generator,
           repair: Repair | None) -> list[Genome]:
    size = len(population)
    ranked = sorted(range(size), key=lambda i: -scores[i])
    children = [population[i] for i in ranked[: options.elite]]
    while len(children) < size:
        a = _tournament(population, scores, options.tournament, rng)
        b = _tournament(population, scores, options.tournament, rng)
        if rng.random() < options.crossover:
            a, b = _two_point(a, b, rng) if options.two_point else _uniform(a, b, rng)
        for child in (a, b)[: options.offspring]:
            child = _mutate(child, sizes, ordered, options, rng)
            children.append(repair(child, rng) if repair is not None else child)
    return children[:size]


def _tournament(population: list[Genome], scores: list[float], contestants: int,
                rng: np.random.Generator) -> Genome:
    drawn = rng.integers(len(population), size=contestants)
    return population[max(drawn, key=lambda i: scores[i])]


def _uniform(a: Genome, b: Genome, rng: np.random.Generator) -> tuple[Genome, Genome]:
    take = rng.random(len(a)) < 0.5
    return (tuple(x if t else y for x, y, t in zip(a, b, take, strict=True)),
            tuple(y if t else x for x, y, t in zip(a, b, take, strict=True)))


def _two_point(a: Genome, b: Genome, rng: np.random.Generator) -> tuple[Genome, Genome]:
    i, j = sorted(int(k) for k in rng.choice(len(a) + 1, size=2, replace=False))
    return a[:i] + b[i:j] + a[j:], b[:i] + a[i:j] + b[j:]


def _mutate(genome: Genome, sizes: Sequence[int], ordered: list[bool],
            options: GeneticOptions, rng: np.random.Generator) -> Genome:
    out = list(genome)
    for i, size in enumerate(sizes):
        if rng.random() >= options.mutation:
            continue
        if ordered[i] and rng.random() < options.step:
            out[i] = min(size - 1, max(0, out[i] + int(rng.choice((-2, -1, 1, 2)))))
        else:
            out[i] = int(rng.integers(size))
    return tuple(out)
