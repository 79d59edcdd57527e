"""Reproduce Table 3 of Behzad et al. (HPDC'14) on the simulated Hopper, beside the paper's.

For VPIC-IO (8 Mi particles of 32 bytes per core, 256 MiB) at 128, 512, 1024, 2048 and 8192
cores, the *default* configuration is the system default (Hopper: stripe count 2, stripe
size 1 MiB, one aggregator per stripe) and the *tuned* one the best configuration of
:func:`iotune.sim.space.paper_space` at that scale, both evaluated by the noise-free model.
The paper's figures are printed for comparison only; nothing here is fitted to them.
Bandwidths are MiB/s (the paper writes MB/s for the same binary units: its 32 GB file at 128
cores is 128 x 256 MiB).

Run ``python -m iotune.sim.table3 [--system hopper] [--format table|csv|json]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
import pandas as pd

from iotune.errors import IotuneError
from iotune.sim.pattern import Pattern
from iotune.sim.simulate import as_system, simulate_times
from iotune.sim.space import paper_space

#: The paper's Table 3: cores, file size (GB), tuned MB/s, default MB/s, speedup.
PAPER_TABLE3: tuple[tuple[int, int, float, float, float], ...] = (
    (128, 32, 2074.65, 471.75, 4.40),
    (512, 128, 5185.4, 408.6, 12.69),
    (1024, 256, 6181.75, 336.6, 18.37),
    (2048, 512, 11422.28, 412.19, 27.71),
    (8192, 2048, 18857.3, 345.27, 54.62),
)


def table3(system: str = "hopper") -> pd.DataFrame:
    """One row per scale: the paper's and the model's tuned and default bandwidths."""
    spec = as_system(system)
    rows = []
    for cores, file_gb, paper_tuned, paper_default, paper_speedup in PAPER_TABLE3:
        pattern = Pattern.vpic(cores)
        space = paper_space(cores, cores_per_node=spec.cores_per_node, ost_count=spec.ost_count)
        tuned = simulate_times(spec, pattern, space, noise=0.0)
        best = int(np.argmax(tuned.bandwidth_mib_s))
        default = simulate_times(spec, pattern, None, noise=0.0)
        ours_tuned = float(tuned.bandwidth_mib_s[best])
        ours_default = float(default.bandwidth_mib_s)
        rows.append(
            {
                "cores": cores,
                "nodes": pattern.nodes_on(spec.cores_per_node),
                "file_gib": pattern.total_bytes / 2**30,
                "paper_file_gb": file_gb,
                "space_size": len(space),
                "paper_tuned_mib_s": paper_tuned,
                "sim_tuned_mib_s": ours_tuned,
                "paper_default_mib_s": paper_default,
                "sim_default_mib_s": ours_default,
                "paper_speedup": paper_speedup,
                "sim_speedup": ours_tuned / ours_default,
                "best_stripe_count": int(space["stripe_count"].iloc[best]),
                "best_stripe_size_mib": int(space["stripe_size"].iloc[best]) // 2**20,
                "best_cb_nodes": int(space["cb_nodes"].iloc[best]),
            }
        )
    frame = pd.DataFrame(rows)
    frame.attrs.update({"backend": "sim", "system": spec.name})
    return frame


def format_table(frame: pd.DataFrame) -> str:
    """The table as aligned text, labelled simulated."""
    header = (
        f"{'cores':>6} {'file':>7} | {'tuned MiB/s':>21} | {'default MiB/s':>17} | "
        f"{'speedup':>13} | best (count, size, aggregators)"
    )
    sub = (
        f"{'':>6} {'GiB':>7} | {'paper':>10} {'sim':>10} | {'paper':>8} {'sim':>8} | "
        f"{'paper':>6} {'sim':>6} |"
    )
    lines = [
        f"VPIC-IO, Table 3 of Behzad et al. (HPDC'14) beside the SIMULATED system "
        f"'{frame.attrs.get('system', '?')}' (backend: sim, noise off)",
        header,
        sub,
    ]
    for r in frame.itertuples(index=False):
        lines.append(
            f"{r.cores:>6} {r.file_gib:>7.0f} | {r.paper_tuned_mib_s:>10.1f} "
            f"{r.sim_tuned_mib_s:>10.1f} | {r.paper_default_mib_s:>8.1f} "
            f"{r.sim_default_mib_s:>8.1f} | {r.paper_speedup:>6.2f} {r.sim_speedup:>6.2f} | "
            f"{r.best_stripe_count}, {r.best_stripe_size_mib} MiB, {r.best_cb_nodes}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; exit status 0, or 2 with a one-line error for a bad system."""
    parser = argparse.ArgumentParser(prog="python -m iotune.sim.table3", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--system", default="hopper", help="preset name or YAML path")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")
    args = parser.parse_args(argv)
    try:
        frame = table3(args.system)
    except IotuneError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 1)
    if args.format == "table":
        print(format_table(frame))
    elif args.format == "csv":
        print(frame.assign(backend="sim", system=frame.attrs["system"]).to_csv(index=False),
              end="")
    else:
        print(frame.assign(backend="sim", system=frame.attrs["system"]).to_json(
            orient="records", indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
