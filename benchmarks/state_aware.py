"""State-aware versus naive tuning under idle/busy noise on the simulated system (a script).

A small exhaustive search: a handful of configurations of ``paper_space`` (VPIC-IO at
``--cores`` ranks on ``--system``), whose noise-free model times are ``--ratios`` times the
best one's (the best included, so the truth is known), each measured ``--reps`` times with
the preset's idle/busy noise. Per seed:

* **naive**: rank by the median of the ``--reps`` measurements;
* **state-aware**: before each measurement a simulated 1 MiB probe in the same state
  (:func:`iotune.variability.simulated_probe_latency`) is tagged idle/busy by a
  :class:`~iotune.variability.StateTracker` (warmed up with ``--warmup`` probe latencies, as
  from a background ``iotune probe``: 200 is about one round over Hopper's 156 OSTs and a
  bit; refitted online); a measurement tagged busy is repeated up to
  ``--max-repeats`` times; configurations are ranked on the median of their idle-tagged
  measurements when they have at least ``--min-idle``, else of all;
* **naive, same measurements**: the median of every measurement the state-aware search took,
  tags ignored (does the gain come from measuring more, or from the states?);
* **oracle**: as state-aware but with the simulator's true states (the ceiling).

Each strategy sees the same draws (common random numbers). Prints how often each picks the
true best configuration, its mean regret (true time of the pick over the best's, minus 1)
and the measurements it took per configuration.

    python benchmarks/state_aware.py [--seeds 200] [--reps 3] [--max-repeats 2] [--min-idle 2]

With ``--reps 1`` use ``--min-idle 1`` (a configuration rarely has two idle measurements).
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from quick_mode import add_quick, apply_quick

from iotune.kernel_specs.vpic import vpic_pattern
from iotune.sim import Pattern, load_system, model_breakdown, paper_space, simulate_times
from iotune.sim.system import SimSystem
from iotune.variability import (
    StatePolicy,
    StateTracker,
    probe_base_latency,
    ranking_times,
    should_repeat,
    simulated_probe_latencies,
    simulated_probe_latency,
)

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"probe tags agreeing with the true state: [0-9.]+%; elapsed"

STRATEGIES = ("naive", "naive, same measurements", "state-aware", "oracle (true states)")


def pick_configurations(system: SimSystem, cores: int,
                        ratios: list[float]) -> tuple[pd.DataFrame, np.ndarray]:
    """Configurations of ``paper_space(cores)`` nearest to each ratio of the best model time
    (distinct, the best first) and their noise-free times."""
    space = paper_space(cores, cores_per_node=system.cores_per_node, ost_count=system.ost_count)
    times = np.asarray(model_breakdown(system, vpic_pattern(cores), space).time_s)
    best = float(times.min())
    chosen: list[int] = []
    for ratio in ratios:
        order = np.argsort(np.abs(times / best - ratio))
        chosen.append(int(next(i for i in order if int(i) not in chosen)))
    return space.iloc[chosen].reset_index(drop=True), times[chosen]


@dataclass
class Measurements:
    """Every measurement of one configuration in one seed, with tags and true states."""

    times: list[float] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    truth: list[str] = field(default_factory=list)
    first_of_rep: list[bool] = field(default_factory=list)


def run_seed(seed: int, system: SimSystem, configs: pd.DataFrame, pattern: Pattern,
             args: argparse.Namespace) -> list[Measurements]:
    """One search: every configuration, ``reps`` repetitions, busy ones repeated."""
    rng = np.random.default_rng(seed)
    policy = StatePolicy(max_repeats=args.max_repeats, min_idle=args.min_idle)
    base = probe_base_latency(system, policy.probe_size)
    warm_states = np.where(rng.random(args.warmup) < system.noise.p_busy, "busy", "idle")
    warm = simulated_probe_latencies(system.noise, warm_states, rng, policy.probe_size,
                                     noise=args.noise, base_s=base)
    tracker = StateTracker(policy, latencies=list(warm))
    out = [Measurements() for _ in range(len(configs))]
    for i in range(len(configs)):
        row = configs.iloc[[i]]
        for _ in range(args.reps):
            repeats = 0
            while True:
                sim = simulate_times(system, pattern, row, noise=args.noise, rng=rng)
                state = str(sim.state[0])
                latency = simulated_probe_latency(system.noise, state, rng, policy.probe_size,
                                                  noise=args.noise, base_s=base)
                tag = tracker.observe(latency)
                out[i].times.append(float(sim.time_s[0]))
                out[i].tags.append(tag.state)
                out[i].truth.append(state)
                out[i].first_of_rep.append(repeats == 0)
                if not should_repeat(tag, repeats, policy):
                    break
                repeats += 1
    return out


def picks(measured: list[Measurements], min_idle: int) -> dict[str, int]:
    """The index of the configuration each strategy picks."""
    def best(values: list[float]) -> int:
        return int(np.argmin(values))

    naive = [statistics.median([t for t, f in zip(m.times, m.first_of_rep, strict=True) if f])
             for m in measured]
    everything = [statistics.median(m.times) for m in measured]
    aware = [statistics.median(ranking_times(m.times, m.tags, min_idle)) for m in measured]
    oracle = [statistics.median(ranking_times(m.times, m.truth, min_idle)) for m in measured]
    return dict(zip(STRATEGIES, map(best, (naive, everything, aware, oracle)), strict=True))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--max-repeats", type=int, default=2)
    parser.add_argument("--min-idle", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=200,
                        help="probe latencies known before the search")
    parser.add_argument("--cores", type=int, default=512)
    parser.add_argument("--system", default="hopper")
    parser.add_argument("--noise", type=float, default=1.0)
    parser.add_argument("--ratios", default="1,1.04,1.08,1.12,1.2,1.3,1.5",
                        help="model times of the configurations, relative to the best")
    add_quick(parser, "5 seeds, 20 warm-up probes")
    args = apply_quick(parser, parser.parse_args(argv), seeds=5, warmup=20)
    started = time.monotonic()
    system = load_system(args.system)
    pattern = vpic_pattern(args.cores)
    ratios = [float(r) for r in args.ratios.split(",")]
    configs, truth = pick_configurations(system, args.cores, ratios)
    true_best = int(np.argmin(truth))
    noise = system.noise
    print(f"{system.name}, VPIC-IO at {args.cores} ranks, noise {args.noise:g} (p_busy "
          f"{noise.p_busy:g}, busy mean {noise.busy_mean:g}x, idle sigma {noise.idle_sigma:g}, "
          f"busy sigma {noise.busy_sigma:g}); {args.seeds} seeds, {args.reps} reps, "
          f"up to {args.max_repeats} repeats of a busy measurement, rank on idle with >= "
          f"{args.min_idle}, {args.warmup} warm-up probes")
    print("configurations (noise-free time / best):")
    for i, row in configs.iterrows():
        print(f"  stripe_count {row['stripe_count']:>3}  stripe_size "
              f"{row['stripe_size'] // 2**20:>3} MiB  cb_nodes {row['cb_nodes']:>2}  "
              f"{truth[int(str(i))]:8.3f} s  {truth[int(str(i))] / truth.min():.3f}")
    hits = dict.fromkeys(STRATEGIES, 0)
    regret: dict[str, list[float]] = {name: [] for name in STRATEGIES}
    counts: list[int] = []
    agree: list[bool] = []
    for seed in range(args.seeds):
        measured = run_seed(seed, system, configs, pattern, args)
        for name, index in picks(measured, args.min_idle).items():
            hits[name] += index == true_best
            regret[name].append(truth[index] / truth[true_best] - 1)
        counts += [len(m.times) for m in measured]
        agree += [t == s for m in measured for t, s in zip(m.tags, m.truth, strict=True)]
    extra = statistics.fmean(counts)
    print(f"\n{'strategy':<26} {'picks true best':>16} {'mean regret':>12} "
          f"{'measurements/config':>20}")
    for name in STRATEGIES:
        per_config = float(args.reps) if name == "naive" else extra
        print(f"{name:<26} {hits[name] / args.seeds:>15.1%} {statistics.fmean(regret[name]):>11.2%}"
              f" {per_config:>20.2f}")
    print(f"\nprobe tags agreeing with the true state: {statistics.fmean(agree):.1%}; "
          f"elapsed {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
