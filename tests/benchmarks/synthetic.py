"""A small synthetic landscape in the layout of the real ones, for the benchmarks' tests."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

#: 12 configurations at 2 and 4 ranks; the fastest at 4 ranks is stripe_count 8 with
#: romio_cb_write disable. 3 repeats at 2 ranks, 6 at 4 (so noise variants are made).
COUNTS = (1, 2, 4, 8)
MODES = ("enable", "disable", "automatic")
REPEATS = {2: 3, 4: 6}


def write_landscape(folder: Path) -> Path:
    """A small landscape CSV in ``folder``: 12 configurations at 2 and 4 ranks (3 and 6
    repeats) and the default at each scale, as the real landscapes' files are laid out."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    rows = []
    for cores, repeats in REPEATS.items():
        times = []
        for count in COUNTS:
            for i, mode in enumerate(MODES):
                true = 8.0 / cores / (1 + math.log2(count)) * (1.0, 0.8, 1.3)[i]
                for _ in range(repeats):
                    t = true * math.exp(rng.normal(0, 0.15))
                    times.append(t)
                    rows.append({"cores": cores, "stripe_count": count,
                                 "romio_cb_write": mode, "write_time": t})
        rows.append({"cores": cores, "stripe_count": None, "romio_cb_write": None,
                     "write_time": float(np.median(times))})
    path = folder / "synth.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path
