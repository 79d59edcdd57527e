"""How fast the model fits and predicts (a benchmark script, not a timed test).

Fits ``max_terms`` terms by greedy selection over ``3^n`` candidates for n = 4, 6, 8
parameters (81, 729, 6561 candidates) on 500 and 10,000 rows, then predicts 10^6
configurations with the largest model. Targets: n = 8, 10,000 rows, 10 terms under 2 s;
10^6 predictions under 1 s.

    python benchmarks/fit_speed.py [--repeat 3] [--max-terms 10]

The per-step work is one matrix product over the candidate matrix (memory bound). On a
small machine shared with other jobs, multi-threaded BLAS can be slower than one thread
(threads wait for each other); compare with OPENBLAS_NUM_THREADS=1.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd
from quick_mode import add_quick, apply_quick

from iotune.model import Model, fit_model

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"predict \d+ configurations with \d+ terms over \d+ parameters: [0-9.]+ s"


def synthetic(n_params: int, rows: int, rng: np.random.Generator) -> pd.DataFrame:
    """Positive parameters over two decades and a noisy sparse target (5 terms)."""
    names = [f"x{i}" for i in range(n_params)]
    df = pd.DataFrame(np.exp(rng.uniform(0, np.log(100), size=(rows, n_params))), columns=names)
    x = df.to_numpy()
    y = 5 + 30 / x[:, 0] + 0.2 * x[:, 1] * x[:, 2] / x[:, 0] + 3 * x[:, 1] / x[:, 2] \
        + 0.01 * x[:, -1]
    df["y"] = y * rng.lognormal(0, 0.05, rows)
    return df


def best_time(func: object, repeat: int) -> tuple[float, object]:
    assert callable(func)
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="Best of this many runs.")
    parser.add_argument("--max-terms", type=int, default=10)
    parser.add_argument("--predict-rows", type=int, default=1_000_000)
    add_quick(parser, "4 parameters, 500 rows, one run, 10^4 predictions")
    args = apply_quick(parser, parser.parse_args(argv), repeat=1, predict_rows=10_000)
    sizes = [(4, 500)] if args.quick else [(n, rows) for n in (4, 6, 8)
                                           for rows in (500, 10_000)]
    rng = np.random.default_rng(0)
    threads = {k: v for k, v in os.environ.items() if k.endswith("_NUM_THREADS")}
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}, "
          f"thread settings {threads or 'BLAS default'}, best of {args.repeat}")
    print(f"{'params':>6} {'candidates':>10} {'rows':>6} {'terms':>5} {'fit_s':>8} {'rms_rel':>8}")
    model: Model | None = None
    for n_params, rows in sizes:
        df = synthetic(n_params, rows, rng)
        params = [c for c in df.columns if c != "y"]
        seconds, fitted = best_time(
            lambda df=df, params=params: fit_model(
                df, params, "y", max_terms=args.max_terms, monotone_completion=False),
            args.repeat)
        assert isinstance(fitted, Model) and fitted.stats is not None
        model = fitted
        print(f"{n_params:>6} {3**n_params:>10} {rows:>6} {len(fitted.terms):>5} "
              f"{seconds:>8.3f} {fitted.stats.rms_relative_error:>8.4f}")
    assert model is not None
    configs = synthetic(len(model.params), args.predict_rows, rng)
    seconds, predicted = best_time(lambda: model.predict(configs), args.repeat)
    assert isinstance(predicted, np.ndarray) and predicted.shape == (args.predict_rows,)
    print(f"predict {args.predict_rows} configurations with {len(model.terms)} terms over "
          f"{len(model.params)} parameters: {seconds:.3f} s")


if __name__ == "__main__":
    main()
