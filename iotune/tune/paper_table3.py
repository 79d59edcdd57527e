"""Behzad et al.'s method end to end on the simulator, at the scales of their Table 3.

What :func:`paper_method_rows` does, all with the ``sim`` backend (simulated, never
measured) and the preset's noise:

1. **train** VPIC-IO (256 MiB per rank) with the paper's Table 2 design: the systematic
   design with 216, 120, 72, 60 and 60 runs at 128, 256, 512, 1024 and 2048 cores (528
   runs, ``configs/hopper-paper.yaml``), over Table 1's stripe counts and sizes and the
   aggregator counts of :func:`iotune.sim.space.paper_space` at each scale;
2. **tune** at each scale of Table 3 with ``--strategy model --option method=paper``: fit
   six terms plus the ``1/s`` completion on the training runs, evaluate the top 20
   predicted, refit, the top 10 more, then race the leaders against the default (after and
   outside those 30);
3. score what it recommends by the simulator's noise-free model, beside the exhaustive
   optimum of the same space (:func:`iotune.sim.paper.model_point`): the bandwidth, its
   share of the optimum and its rank among every configuration of the space.

At 128 to 2048 cores the tuned scale is among the training scales, as in the paper (its
Table 3 rows at those scales come from the same campaign); 8192 cores is out of the
training range, the paper's headline. Everything goes into a temporary store, removed after.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iotune.backends.sim import SimBackend
from iotune.config import Config, build_config
from iotune.sim.paper import model_point, paper_rows
from iotune.sim.simulate import as_system, simulate_times
from iotune.sim.space import TABLE1_STRIPE_COUNTS, TABLE1_STRIPE_SIZES_MIB, aggregator_ladder
from iotune.sim.system import SimSystem
from iotune.sim.table3 import table3_main
from iotune.store import Store
from iotune.train.plan import plan_campaign
from iotune.train.run import run_campaign
from iotune.tune.run import tune

#: Table 2 of the paper: training scales (cores) and runs.
PAPER_TRAINING = ((128, 216), (256, 120), (512, 72), (1024, 60), (2048, 60))
#: VPIC-IO particles per rank of Table 3 (8 Mi particles of 32 bytes: 256 MiB).
PARTICLES_PER_RANK = 8 * 2**20
#: Seed of the training design (that of ``configs/hopper-paper.yaml``).
TRAIN_SEED = 14


def _nodes(cores: int, system: SimSystem) -> int:
    return -(-cores // system.cores_per_node)


def paper_config(system: SimSystem, root: Path, cb_nodes: list[int], noise: float,
                 seed: int) -> Config:
    """The paper's campaign as a config: Table 1's space with ``cb_nodes``, Table 2's
    training scales, the model strategy with ``method: paper``, the sim backend."""
    raw: dict[str, Any] = {
        "schema_version": 1,
        "system": {"name": system.name, "scratch": str(root), "cores_per_node":
                   system.cores_per_node, "ost_count": system.ost_count,
                   "aggregators_per_node": 1},
        "store": str(root / "store.jsonl"),
        "kernel": {"name": "vpic", "args": {"particles_per_rank": PARTICLES_PER_RANK,
                                            "timesteps": 1, "fsync": False}},
        "space": {"stripe_count": [c for c in TABLE1_STRIPE_COUNTS if c <= system.ost_count],
                  "stripe_size": [f"{m}MiB" for m in TABLE1_STRIPE_SIZES_MIB],
                  "cb_nodes": cb_nodes},
        "train": {"repetitions": 1, "seed": TRAIN_SEED,
                  "scales": [{"cores": c, "design": "systematic", "runs": r}
                             for c, r in PAPER_TRAINING]},
        "tune": {"strategy": "model", "seed": seed, "repetitions": 1,
                 "options": {"model": {"method": "paper"}}},
        "backend": {"name": "sim", "system": system.name, "noise": noise},
    }
    return build_config(raw, root)


def paper_method_rows(system: SimSystem, *, noise: float = 1.0, seed: int = 0,
                      progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """One row per Table 3 scale: what the paper's method recommends and how good it is
    (module doc). Columns ``cores``, ``method_stripe_count``, ``method_stripe_size_mib``,
    ``method_cb_nodes``, ``method_mib_s`` (noise-free bandwidth of the recommendation),
    ``method_measured_mib_s`` (its measured median), ``method_speedup`` (noise-free, over
    the default), ``method_of_optimum`` (share of the exhaustive optimum's bandwidth),
    ``method_rank`` (1 = the optimum) and ``method_runs`` (runs of the tune, baseline and
    race included); ``attrs['training_runs']`` is the campaign's size."""
    training_nodes = {n for c, _ in PAPER_TRAINING
                      for n in aggregator_ladder(_nodes(c, system))}
    rows = []
    with tempfile.TemporaryDirectory(prefix="iotune-table3-") as tmp:
        root = Path(tmp)
        config = paper_config(system, root, sorted(training_nodes), noise, seed)
        store = Store(config.store)
        backend = SimBackend(config, system=system.name, noise=noise, seed=seed)
        plans = plan_campaign(config, backend)
        if progress:
            progress(f"training: {sum(len(p.tasks) for p in plans)} simulated runs at "
                     f"{', '.join(str(c) for c, _ in PAPER_TRAINING)} cores")
        counts = run_campaign(plans, backend, store)
        for paper in paper_rows():
            ladder = aggregator_ladder(_nodes(paper.cores, system))
            scale_config = paper_config(system, root, ladder, noise, seed)
            if progress:
                progress(f"tuning at {paper.cores} cores by the paper's method")
            result = tune(scale_config, SimBackend(scale_config, system=system.name,
                                                   noise=noise, seed=seed + paper.cores),
                          store, kernel="vpic", cores=paper.cores)
            rows.append(_score(system, paper.cores, result))
    frame = pd.DataFrame(rows)
    frame.attrs["training_runs"] = counts["ran"] + counts["skipped"]
    return frame


def _score(system: SimSystem, cores: int, result: Any) -> dict[str, Any]:
    """The recommendation of ``result`` scored by the noise-free model at ``cores``."""
    point = model_point(system, cores)
    chosen = result.choice.recommended
    settings = {k: int(chosen.settings.get(k, 0)) for k in ("stripe_count", "stripe_size",
                                                             "cb_nodes")}
    if chosen is result.default:
        bandwidth = point.default_mib_s
    else:
        bandwidth = float(simulate_times(system, point.pattern, pd.DataFrame([settings]),
                                         noise=0.0).bandwidth_mib_s[0])
    space = simulate_times(system, point.pattern, point.space, noise=0.0).bandwidth_mib_s
    measured = float(np.median(chosen.times)) if chosen.times else float("nan")
    return {
        "cores": cores,
        "method_stripe_count": settings["stripe_count"],
        "method_stripe_size_mib": settings["stripe_size"] // 2**20,
        "method_cb_nodes": settings["cb_nodes"],
        "method_mib_s": bandwidth,
        "method_measured_mib_s": point.pattern.total_bytes / 2**20 / measured,
        "method_speedup": bandwidth / point.default_mib_s,
        "method_of_optimum": bandwidth / point.tuned_mib_s,
        "method_rank": int((space > bandwidth * (1 + 1e-12)).sum()) + 1,
        "method_runs": result.runs,
    }


def with_paper_method(frame: pd.DataFrame, system: SimSystem | str = "hopper", *,
                      noise: float = 1.0, seed: int = 0) -> pd.DataFrame:
    """``frame`` (a :func:`table3`) with the ``method_*`` columns of the paper's method run
    end to end on ``system`` (:func:`iotune.tune.paper_table3.paper_method_rows`)."""
    method = paper_method_rows(as_system(system), noise=noise, seed=seed)
    merged = frame.merge(method, on="cores", how="left")
    merged.attrs.update(frame.attrs)
    merged.attrs["method_training_runs"] = method.attrs["training_runs"]
    return merged


def main(argv: Sequence[str] | None = None) -> int:
    """Table 3 beside the simulator, with the paper's method run end to end
    (``--method none`` leaves it out); see :func:`iotune.sim.table3.table3_main`."""
    return table3_main(argv, with_paper_method)


if __name__ == "__main__":
    raise SystemExit(main())
