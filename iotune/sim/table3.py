"""Table 3 of Behzad et al. (HPDC'14) beside the simulated Hopper, in-sample and out-of-sample.

For VPIC-IO (8 Mi particles of 32 bytes per core, 256 MiB) at 128, 512, 1024, 2048 and 8192
cores, the *default* configuration is the system default (Hopper: stripe count 2, stripe
size 1 MiB, one aggregator per stripe) and the *tuned* one the best configuration of
:func:`iotune.sim.space.paper_space` at that scale by the noise-free model
(:func:`iotune.sim.paper.model_point`).

Three constants of the ``hopper`` preset were fitted to this table at the scales its
``calibration`` block names (128, 512, 2048 cores; :mod:`iotune.sim.calibrate`). Rows at
those scales are labelled ``in-sample``: their agreement is fitted, not reproduced. Rows at
the other scales are ``out-of-sample``. A preset not calibrated on the table labels every
row ``not fitted``.

With noise on (the default, level 1), each of the two configurations is measured
``repetitions`` times with the preset's noise, seeded by ``(seed, cores)``, and the table
gives the range (min-max) of the measured bandwidths and of the per-repetition speedup
beside the noise-free model value. Bandwidths are MiB/s (the paper's MB/s are the same
binary units).

**The paper's method.** The rows above compare the paper's tuned figures with the
simulator's *exhaustive* optimum, which is not what the paper's method would find. With
``--method paper`` (the default of :func:`main`) the method also runs end to end on the
simulator (:mod:`iotune.tune.paper_table3`: Table 2's 528 training runs, then at each
scale the top 20 predicted, refit, the top 10, the race), and a second table gives what it
recommends (its noise-free bandwidth, share of the optimum and rank in the space) beside
the optimum and the paper's figures. ``--method none`` skips it (it takes a few seconds).

Run ``python -m iotune.sim.table3 [--system hopper] [--noise 1] [--repetitions 5]
[--seed 0] [--method paper|none] [--format table|csv|json]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from iotune.errors import ConfigError, IotuneError
from iotune.sim.paper import PAPER_TABLE3, model_point, paper_rows
from iotune.sim.simulate import BACKEND, as_system, simulate_times
from iotune.sim.system import SimSystem

__all__ = ["PAPER_TABLE3", "REPETITIONS", "format_method", "format_table", "main", "split_of",
           "table3", "table3_main"]

#: Measurements of each configuration per scale when noise is on.
REPETITIONS = 10
#: Label of a scale the preset's constants were fitted on, of one they were not, and of
#: every scale when the preset was not fitted to Table 3.
IN_SAMPLE, OUT_OF_SAMPLE, NOT_FITTED = "in-sample", "out-of-sample", "not fitted"
_TARGET = "behzad14_table3"


def split_of(system: SimSystem, cores: int) -> str:
    """``in-sample``, ``out-of-sample`` or ``not fitted`` for Table 3 at ``cores``."""
    spec = system.calibration
    if spec is None or spec.target != _TARGET:
        return NOT_FITTED
    return IN_SAMPLE if cores in spec.training_cores else OUT_OF_SAMPLE


def table3(system: SimSystem | str = "hopper", *, noise: float = 1.0,
           repetitions: int = REPETITIONS, seed: int = 0) -> pd.DataFrame:
    """One row per scale: the paper's figures, the model's, and the range over noisy
    repetitions (``*_min``/``*_max``; equal to the model value when ``noise`` is 0)."""
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions <= 0:
        raise ConfigError(f"repetitions: {repetitions!r} is not a positive integer")
    spec = as_system(system)
    rows = []
    for paper in paper_rows():
        point = model_point(spec, paper.cores)
        best = point.best_config
        rng = np.random.default_rng([seed, paper.cores])
        tuned = simulate_times(spec, point.pattern,
                               {k: np.full(repetitions, v) for k, v in best.items()},
                               noise=noise, rng=rng).bandwidth_mib_s
        default = simulate_times(spec, point.pattern, {"stripe_count": np.zeros(repetitions,
                                                                                 dtype=int)},
                                 noise=noise, rng=rng).bandwidth_mib_s
        speedup = tuned / default
        rows.append(
            {
                "cores": paper.cores,
                "split": split_of(spec, paper.cores),
                "nodes": point.pattern.nodes_on(spec.cores_per_node),
                "file_gib": point.pattern.total_bytes / 2**30,
                "paper_file_gb": paper.file_gb,
                "space_size": len(point.space),
                "paper_tuned_mib_s": paper.tuned_mib_s,
                "sim_tuned_mib_s": point.tuned_mib_s,
                "sim_tuned_min": float(tuned.min()),
                "sim_tuned_max": float(tuned.max()),
                "paper_default_mib_s": paper.default_mib_s,
                "sim_default_mib_s": point.default_mib_s,
                "sim_default_min": float(default.min()),
                "sim_default_max": float(default.max()),
                "paper_speedup": paper.speedup,
                "sim_speedup": point.speedup,
                "sim_speedup_min": float(speedup.min()),
                "sim_speedup_max": float(speedup.max()),
                "best_stripe_count": best["stripe_count"],
                "best_stripe_size_mib": best["stripe_size"] // 2**20,
                "best_cb_nodes": best["cb_nodes"],
            }
        )
    frame = pd.DataFrame(rows)
    frame.attrs.update({"backend": BACKEND, "system": spec.name, "noise": float(noise),
                        "repetitions": repetitions, "seed": seed,
                        "training_cores": spec.calibration.training_cores
                        if spec.calibration is not None else ()})
    return frame


def format_method(frame: pd.DataFrame) -> str:
    """The paper's method beside the simulator's optimum and the paper, as aligned text."""
    lines = [
        f"The paper's method run end to end on the SIMULATED system (trained on "
        f"{frame.attrs.get('method_training_runs', '?')} runs at 128-2048 cores, Table 2; "
        "six terms plus 1/s; top 20 predicted, refit, top 10; then the race)",
        "found = what the method recommends, by the noise-free model; share and rank among "
        "every configuration of the space (rank 1 = the simulator's optimum)",
        f"{'cores':>6} | {'paper tuned':>11} {'sim optimum':>11} {'found':>8} {'share':>6} "
        f"{'rank':>5} | {'paper x':>7} {'optimum x':>9} {'found x':>7} | found (count, size, "
        "aggregators)  runs",
    ]
    for r in frame.itertuples(index=False):
        lines.append(
            f"{r.cores:>6} | {r.paper_tuned_mib_s:>11.0f} {r.sim_tuned_mib_s:>11.0f} "
            f"{r.method_mib_s:>8.0f} {r.method_of_optimum:>6.1%} {r.method_rank:>5} | "
            f"{r.paper_speedup:>7.2f} {r.sim_speedup:>9.2f} {r.method_speedup:>7.2f} | "
            f"{r.method_stripe_count}, {r.method_stripe_size_mib} MiB, {r.method_cb_nodes}"
            f"  {r.method_runs}")
    return "\n".join(lines)


def _range(low: float, high: float, digits: int) -> str:
    return f"{low:.{digits}f}-{high:.{digits}f}"


def format_table(frame: pd.DataFrame) -> str:
    """The table as aligned text, labelled simulated, with the calibration split."""
    noise = float(frame.attrs.get("noise", 0.0))
    training = frame.attrs.get("training_cores", ())
    noisy = noise > 0
    lines = [
        f"VPIC-IO, Table 3 of Behzad et al. (HPDC'14) beside the SIMULATED system "
        f"'{frame.attrs.get('system', '?')}' (backend: sim, noise {noise:g}"
        + (f", {frame.attrs.get('repetitions')} repetitions, seed {frame.attrs.get('seed')})"
           if noisy else ", deterministic)"),
        (f"Calibrated on this table at {', '.join(str(c) for c in training)} cores: those rows "
         "are in-sample (fitted, not reproduced); the other rows are out-of-sample."
         if training else "This system was not fitted to this table."),
        "model = noise-free model value" + ("; range = min-max over the noisy repetitions"
                                            if noisy else ""),
    ]
    width = {"tuned": 11, "default": 7, "speedup": 11} if noisy else {}
    head = f"{'cores':>6} {'split':<13} |"
    sub = f"{'':>6} {'':<13} |"
    for name in ("tuned MiB/s", "default MiB/s", "speedup"):
        key = name.split()[0]
        cols = f"{'paper':>8} {'model':>8}" + (f" {'range':>{width[key]}}" if noisy else "")
        head += f" {name:^{len(cols)}} |"
        sub += f" {cols} |"
    lines += [head + " best (count, size, aggregators)", sub]
    for r in frame.itertuples(index=False):
        line = f"{r.cores:>6} {r.split:<13} |"
        for kind, digits in (("tuned", 0), ("default", 0), ("speedup", 2)):
            paper = getattr(r, f"paper_{kind}_mib_s" if kind != "speedup" else "paper_speedup")
            model = getattr(r, f"sim_{kind}_mib_s" if kind != "speedup" else "sim_speedup")
            line += f" {paper:>8.{digits}f} {model:>8.{digits}f}"
            if noisy:
                span = _range(getattr(r, f"sim_{kind}_min"), getattr(r, f"sim_{kind}_max"),
                              digits)
                line += f" {span:>{width[kind]}}"
            line += " |"
        lines.append(f"{line} {r.best_stripe_count}, {r.best_stripe_size_mib} MiB, "
                     f"{r.best_cb_nodes}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; exit status 0, or 2 with a one-line error for bad input. The paper's
    method beside it: ``python -m iotune.tune.paper_table3`` (it runs a tune, a layer above
    the simulator)."""
    return table3_main(argv, None)


def table3_main(argv: Sequence[str] | None,
                method: Callable[..., pd.DataFrame] | None) -> int:
    """The table's command line; with ``method`` (:func:`iotune.tune.paper_table3.
    with_paper_method`) also ``--method paper|none``, the paper's method run end to end."""
    parser = argparse.ArgumentParser(prog="python -m iotune.sim.table3", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--system", default="hopper", help="preset name or YAML path")
    parser.add_argument("--noise", type=float, default=1.0,
                        help="noise level (1 = the preset's variability, 0 = deterministic)")
    parser.add_argument("--repetitions", type=int, default=REPETITIONS,
                        help="noisy measurements of each configuration per scale")
    parser.add_argument("--seed", type=int, default=0, help="seed of the noise")
    if method is not None:
        parser.add_argument("--method", choices=("paper", "none"), default="paper",
                            help="also run the paper's method end to end on the simulator")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")
    args = parser.parse_args(argv)
    with_method = method is not None and args.method == "paper"
    try:
        frame = table3(args.system, noise=args.noise, repetitions=args.repetitions,
                       seed=args.seed)
        if with_method:
            assert method is not None
            frame = method(frame, args.system, noise=args.noise, seed=args.seed)
    except IotuneError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 1)
    labelled = frame.assign(backend=BACKEND, system=frame.attrs["system"],
                            noise=frame.attrs["noise"])
    if args.format == "table":
        print(format_table(frame))
        if with_method:
            print()
            print(format_method(frame))
    elif args.format == "csv":
        print(labelled.to_csv(index=False), end="")
    else:
        print(labelled.to_json(orient="records", indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
