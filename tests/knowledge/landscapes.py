"""Small replay-CSV landscapes with their sidecars, for the knowledge base's tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: The settings columns the landscapes here write.
COLUMNS = ("stripe_count", "alignment", "cb_nodes")


def write_landscape(folder: Path, name: str, times: Mapping[str, Sequence[float]], *,
                    system: str = "cori", file_system: str = "lustre",
                    operation: str = "write", ranks: int = 512,
                    bytes_per_rank: int = 16 * 2**20, layer: str = "hdf5",
                    extra: str = "") -> Path:
    """``folder/name.csv`` and its sidecar: ``times`` maps a configuration (``default`` or
    ``setting=value``, settings among :data:`COLUMNS`, joined by ``,``) to its runs."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["cores," + ",".join(COLUMNS) + ",write_time"]
    for config, runs in times.items():
        settings: dict[str, Any] = dict(
            part.split("=") for part in config.split(",") if config != "default")
        cells = ",".join(str(settings.get(c, "")) for c in COLUMNS)
        lines += [f"{ranks},{cells},{t}" for t in runs]
    csv = folder / f"{name}.csv"
    csv.write_text("\n".join(lines) + "\n")
    (folder / f"{name}.workload.yaml").write_text(
        f"system: {system}\nfile_system: {file_system}\nmpi: Cray MPICH\nlayer: {layer}\n"
        f"operation: {operation}\nranks: {ranks}\nfiles: 1\nbytes_per_rank: {bytes_per_rank}\n"
        f"source: a test\n{extra}")
    return csv
