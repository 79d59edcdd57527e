"""Search for the kernel configuration whose signature is most similar to a target.

A configuration is a *genome*: one gene per kernel argument (plus the ``collective``
setting), each gene an index into that argument's list of allowed values. The lists are a
power-of-two grid widened with values read off the application's counters (its common
request sizes, its requests per rank), which, as the paper notes, prunes the search
towards the application without forbidding anything else. Each kernel's genes, the
genomes seeded from a log and what a genome means come from its spec
(:meth:`~iotune.kernel_specs.spec.KernelSpec.proxy_genes`, ``proxy_seed``, ``proxy_args``).

The search is the paper's genetic algorithm (iotune's one,
:func:`iotune.strategies.evolution.evolve`), made cheaper and sharper:

1. the initial population mixes random genomes with genomes seeded from the log values;
2. each generation keeps the best ``elite`` genomes, and fills the rest by tournament
   selection (``tournament`` contestants), two-point crossover and per-gene mutation
   (ordered genes mostly step to a neighbouring value, others jump to a random one);
3. every genome is evaluated once (memoised), and the search stops early at similarity 1
   or after ``patience`` generations without improvement;
4. the best genome is then polished by coordinate ascent: each gene in turn is set to each
   of its values while that improves the similarity.

Fitness is the pairwise-normalised cosine similarity of the candidate's analytic
signature to the target (:mod:`iotune.darshan.analytic`, :mod:`iotune.darshan.similarity`).
Everything is deterministic for a given ``seed``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from iotune.darshan.analytic import Candidate, kernel_file
from iotune.darshan.signature import signature
from iotune.darshan.similarity import pairwise_similarity
from iotune.kernel_specs import Feature, KernelSpec, get_kernel, kernels_with
from iotune.strategies.evolution import GeneticOptions, evolve
from iotune.workload.counters import FileCounters
from iotune.workload.genes import Gene, LogHints

#: The kernels ``iotune proxy`` searches by default: those with proxy genes.
SEARCH_KERNELS = kernels_with(Feature.PROXY)


@dataclass(frozen=True)
class SearchOptions:
    """Knobs of the genetic search (defaults suit the analytic signatures)."""

    population: int = 48
    generations: int = 40
    tournament: int = 3
    crossover: float = 0.9
    mutation: float = 0.2
    elite: int = 2
    patience: int = 12
    seed: int = 0
    max_bytes_per_rank: int | None = None

    def genetic(self) -> GeneticOptions:
        """These knobs for :func:`~iotune.strategies.evolution.evolve`: two-point crossover, ordered
        genes stepping to a neighbouring value 70% of the time they mutate, and a stop
        at similarity 1."""
        return GeneticOptions(population=self.population, generations=self.generations,
                              tournament=self.tournament, crossover=self.crossover,
                              two_point=True, mutation=self.mutation, step=0.7,
                              elite=self.elite, patience=self.patience, goal=1.0)


@dataclass
class SearchResult:
    """The best configuration of one kernel and how the search got there."""

    kernel: str
    candidate: Candidate
    similarity: float
    genetic_similarity: float
    evaluations: int
    generations: int
    history: list[float] = field(default_factory=list)


def genes_for(kernel: str, hints: LogHints) -> list[Gene]:
    """The genes of ``kernel``, with value lists widened by ``hints``."""
    return get_kernel(kernel).proxy_genes(hints)


def decode(kernel: str, genes: Sequence[Gene], genome: Sequence[int], ranks: int) -> Candidate:
    """The candidate a genome stands for."""
    values = {g.name: g.values[i] for g, i in zip(genes, genome, strict=True)}
    args, collective = get_kernel(kernel).proxy_args(values)
    return Candidate(kernel, args, collective, ranks)


def rank_bytes(candidate: Candidate) -> int:
    """Bytes each rank of the candidate writes."""
    return get_kernel(candidate.kernel).bytes_per_rank(candidate.args)


class _Evaluator:
    """Memoised fitness of genomes of one kernel against the target vector."""

    def __init__(self, kernel: str, genes: list[Gene], target: np.ndarray, mask: np.ndarray,
                 ranks: int, max_bytes: int | None) -> None:
        self.kernel, self.genes, self.ranks, self.max_bytes = kernel, genes, ranks, max_bytes
        self.target = target * mask
        self.mask = mask
        self.cache: dict[tuple[int, ...], float] = {}

    def __call__(self, genome: tuple[int, ...]) -> float:
        known = self.cache.get(genome)
        if known is not None:
            return known
        candidate = decode(self.kernel, self.genes, genome, self.ranks)
        if self.max_bytes is not None and rank_bytes(candidate) > self.max_bytes:
            fitness = -1.0
        else:
            vector = signature(kernel_file(candidate)) * self.mask
            fitness = pairwise_similarity(self.target, vector)
        self.cache[genome] = fitness
        return fitness


def _seeds(spec: KernelSpec, genes: list[Gene], hints: LogHints) -> list[tuple[int, ...]]:
    """Genomes built from the log's values, one per common request size."""
    seeds = []
    for size in hints.sizes:
        seeded = spec.proxy_seed(size, hints)
        genome = []
        for gene in genes:
            value = seeded.get(gene.name)
            if value in gene.values:
                genome.append(gene.values.index(value))
            else:
                genome.append(len(gene.values) // 2 if gene.ordered else 0)
        seeds.append(tuple(genome))
    return seeds


def genetic_search(kernel: str, target_file: FileCounters, target: np.ndarray,
                   mask: np.ndarray, options: SearchOptions,
                   progress: Callable[[str], None] | None = None) -> SearchResult:
    """Search ``kernel``'s arguments for the signature most similar to ``target``."""
    spec = get_kernel(kernel)
    hints = LogHints.from_file(target_file)
    genes = spec.proxy_genes(hints)
    evaluate = _Evaluator(kernel, genes, target, mask, hints.ranks, options.max_bytes_per_rank)
    rng = np.random.default_rng([options.seed, zlib.crc32(kernel.encode())])
    population = _seeds(spec, genes, hints)[: options.population // 2]
    while len(population) < options.population:
        population.append(tuple(int(rng.integers(len(g.values))) for g in genes))

    def report(generation: int, best: float) -> None:
        if progress is not None and generation % 10 == 0:
            progress(f"iotune: {kernel}: generation {generation}, best similarity "
                     f"{best:.4f} ({len(evaluate.cache)} configurations)")

    evolution = evolve([len(g.values) for g in genes], population,
                       lambda genomes: [evaluate(g) for g in genomes],
                       options.genetic(), rng, ordered=[g.ordered for g in genes],
                       observe=report)
    assert evolution is not None  # the fitness never stops the search
    best = _polish(evolution.best, genes, evaluate)
    return SearchResult(kernel=kernel, candidate=decode(kernel, genes, best, hints.ranks),
                        similarity=evaluate(best), genetic_similarity=evolution.fitness,
                        evaluations=len(evaluate.cache), generations=evolution.generations,
                        history=evolution.history)


def _polish(genome: tuple[int, ...], genes: list[Gene], evaluate: _Evaluator,
            rounds: int = 20) -> tuple[int, ...]:
    """Coordinate ascent: try every value of every gene while anything improves; when no
    single gene does, step two ordered genes at once by one value each (twice the
    transfers and half the segments moves the same bytes in another pattern, which no
    single-gene change reaches without first getting worse)."""
    best, score = genome, evaluate(genome)
    ordered = [i for i, gene in enumerate(genes) if gene.ordered]
    pairs = [((i, di), (j, dj)) for n, i in enumerate(ordered) for j in ordered[n + 1:]
             for di in (-1, 1) for dj in (-1, 1)]
    for _ in range(rounds):
        improved = False
        for i, gene in enumerate(genes):
            for value in range(len(gene.values)):
                trial = (*best[:i], value, *best[i + 1:])
                if evaluate(trial) > score + 1e-12:
                    best, score, improved = trial, evaluate(trial), True
        if not improved:
            for steps in pairs:
                trial = _stepped(best, genes, steps)
                if evaluate(trial) > score + 1e-12:
                    best, score, improved = trial, evaluate(trial), True
                    break
        if not improved:
            break
    return best


def _stepped(genome: tuple[int, ...], genes: list[Gene],
             steps: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """``genome`` with gene ``i`` moved by ``step`` values for each ``(i, step)``."""
    out = list(genome)
    for i, step in steps:
        out[i] = min(len(genes[i].values) - 1, max(0, out[i] + step))
    return tuple(out)


def search_kernels(target_file: FileCounters, target: np.ndarray, mask: np.ndarray,
                   kernels: Sequence[str], options: SearchOptions,
                   progress: Callable[[str], None] | None = None) -> list[SearchResult]:
    """:func:`genetic_search` for each kernel; the results best first."""
    results = [genetic_search(k, target_file, target, mask, options, progress)
               for k in kernels]
    results.sort(key=lambda r: -r.similarity)
    return results
