r"""Calibrate a simulated system on part of the paper's Table 3; report the rest out-of-sample.

Three constants of the Hopper preset are free (:data:`FREE_CONSTANTS`); every other
constant keeps its documented source (the paper, Lustre's defaults, or a physical model
value, see ``docs/sim.md``). The free ones are fitted by bounded least squares
(``scipy.optimize.least_squares``, trust-region reflective) on the logarithms of the
constants, minimising over the *training* scales only (:data:`TRAINING_CORES`)::

    r = [ ln(tuned_model(n) / tuned_paper(n)), ln(default_model(n) / default_paper(n)) ]
        for n in the training scales

where the model figures are those of :func:`iotune.sim.paper.model_point` (noise off). The
speedup is ``tuned / default``, so its log error is the difference of the two residuals. The
start is the geometric middle of each constant's physical range, so the fit depends on
nothing but the ranges, the training rows and the rest of the preset. The fitted values are
rounded to :data:`SIGNIFICANT_DIGITS` significant digits and stored in the preset, whose
``calibration`` block names the fitted constants and the training scales.

The other scales of Table 3 are held out: their figures are never passed to the fit, and
:func:`split_table` reports the error there as out-of-sample. In-sample agreement is fitted,
not reproduced, and is labelled so.

Run ``python -m iotune.sim.calibrate [--system hopper] [--write]``: fits, prints the fitted
values beside the preset's and the in-sample / out-of-sample table, and exits 1 when the
preset's values differ from the fit (``--write`` stores the fit in the preset file instead).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.optimize import least_squares

from iotune.errors import ConfigError, IotuneError
from iotune.execution.outputs import atomic_write
from iotune.inputs import MAX_YAML_BYTES, read_text
from iotune.sim.paper import PaperRow, model_point, paper_rows
from iotune.sim.simulate import BACKEND
from iotune.sim.system import SimSystem, load_system

FloatArray = npt.NDArray[np.float64]

#: The scales of Table 3 the fit sees; the other scales (1024, 8192) are out-of-sample.
TRAINING_CORES = (128, 512, 2048)
#: Significant digits of a fitted value stored in a preset.
SIGNIFICANT_DIGITS = 4
#: Relative difference between a preset's value and the rounded fit that still counts as
#: the same value (half a unit in the last stored digit, 5e-4, with room for round-off).
MATCH_TOLERANCE = 1e-3
#: The calibration target of :mod:`iotune.sim.system` that this module fits.
TARGET = "behzad14_table3"


@dataclass(frozen=True)
class FreeConstant:
    """A preset constant the calibration may fit, within its physical range."""

    key: str
    low: float
    high: float
    governs: str

    @property
    def start(self) -> float:
        """The geometric middle of the range: where the fit starts."""
        return math.sqrt(self.low * self.high)


#: The fitted constants, their physical ranges and what in Table 3 each mainly sets.
FREE_CONSTANTS = (
    FreeConstant("ost_bandwidth_mib_s", 100.0, 600.0,
                 "the default's bandwidth (2 stripes on 2 OSTs)"),
    FreeConstant("alltoall_per_rank_s", 1e-6, 2e-5,
                 "the default's decline with scale (one all-to-all per collective round)"),
    FreeConstant("fabric_bandwidth_mib_s", 200.0, 2000.0,
                 "the tuned bandwidth up to 2048 cores (the job's share of the torus)"),
)


@dataclass(frozen=True)
class Fit:
    """The result of :func:`fit`: rounded values, the exact optimum and how it was reached."""

    values: dict[str, float]
    exact: dict[str, float]
    training_cores: tuple[int, ...]
    cost: float
    evaluations: int
    status: int


def free_constants(keys: Iterable[str] | None = None) -> tuple[FreeConstant, ...]:
    """The :class:`FreeConstant` of each key (all of :data:`FREE_CONSTANTS` for ``None``)."""
    if keys is None:
        return FREE_CONSTANTS
    known = {c.key: c for c in FREE_CONSTANTS}
    out = []
    for key in keys:
        if key not in known:
            raise ConfigError(f"calibration.fitted: {key!r} has no physical range to fit "
                              f"within; fittable here: {', '.join(known)}")
        out.append(known[key])
    return tuple(out)


def training_rows(training_cores: Sequence[int],
                  rows: Sequence[PaperRow] | None = None) -> tuple[PaperRow, ...]:
    """The rows of ``rows`` (the paper's by default) at the training scales, in order."""
    table = tuple(rows) if rows is not None else paper_rows()
    by_cores = {row.cores: row for row in table}
    for cores in training_cores:
        if cores not in by_cores:
            raise ConfigError(f"training_cores: {cores} is not a scale of Table 3 "
                              f"({', '.join(str(c) for c in by_cores)})")
    if not training_cores:
        raise ConfigError("training_cores: empty; the fit needs at least one scale")
    return tuple(by_cores[c] for c in training_cores)


def with_values(system: SimSystem, values: Mapping[str, float]) -> SimSystem:
    """``system`` with the constants in ``values`` replaced."""
    changes: dict[str, Any] = {k: float(v) for k, v in values.items()}
    return dataclasses.replace(system, **changes)


def residuals(system: SimSystem, rows: Iterable[PaperRow]) -> FloatArray:
    """Log errors of the model's tuned and default bandwidth at each row's scale."""
    out: list[float] = []
    for row in rows:
        point = model_point(system, row.cores)
        out.append(math.log(point.tuned_mib_s / row.tuned_mib_s))
        out.append(math.log(point.default_mib_s / row.default_mib_s))
    return np.array(out)


def fit(base: SimSystem, training_cores: Sequence[int] = TRAINING_CORES,
        free: Sequence[FreeConstant] = FREE_CONSTANTS,
        rows: Sequence[PaperRow] | None = None) -> Fit:
    """Fit the ``free`` constants of ``base`` to the rows at ``training_cores`` only.

    Deterministic: it starts from each constant's :attr:`FreeConstant.start`, whatever
    ``base`` holds for the free constants. Rows at other scales are not looked at.
    """
    train = training_rows(training_cores, rows)
    if len(free) == 0:
        raise ConfigError("calibration.fitted: empty; nothing to fit")
    if 2 * len(train) < len(free):
        raise ConfigError(f"training_cores: {len(train)} scales give {2 * len(train)} "
                          f"figures, fewer than the {len(free)} constants to fit")
    keys = [c.key for c in free]
    low = np.log([c.low for c in free])
    high = np.log([c.high for c in free])
    start = np.log([c.start for c in free])

    def objective(theta: FloatArray) -> FloatArray:
        return residuals(with_values(base, dict(zip(keys, np.exp(theta), strict=True))), train)

    result = least_squares(objective, start, bounds=(low, high), method="trf")
    exact = {k: float(v) for k, v in zip(keys, np.exp(result.x), strict=True)}
    return Fit(
        values={k: round_significant(v, SIGNIFICANT_DIGITS) for k, v in exact.items()},
        exact=exact,
        training_cores=tuple(training_cores),
        cost=float(result.cost),
        evaluations=int(result.nfev),
        status=int(result.status),
    )


def round_significant(value: float, digits: int) -> float:
    """``value`` rounded to ``digits`` significant digits."""
    if value == 0:
        return 0.0
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def split_table(system: SimSystem, training_cores: Sequence[int],
                rows: Sequence[PaperRow] | None = None) -> pd.DataFrame:
    """Paper beside model (noise off) at every scale, labelled ``in-sample`` (a training
    scale: agreement there was fitted) or ``out-of-sample``, with relative errors."""
    table = tuple(rows) if rows is not None else paper_rows()
    records = []
    for row in table:
        point = model_point(system, row.cores)
        records.append({
            "cores": row.cores,
            "split": "in-sample" if row.cores in training_cores else "out-of-sample",
            "paper_tuned_mib_s": row.tuned_mib_s,
            "sim_tuned_mib_s": point.tuned_mib_s,
            "tuned_error": point.tuned_mib_s / row.tuned_mib_s - 1.0,
            "paper_default_mib_s": row.default_mib_s,
            "sim_default_mib_s": point.default_mib_s,
            "default_error": point.default_mib_s / row.default_mib_s - 1.0,
            "paper_speedup": row.speedup,
            "sim_speedup": point.speedup,
            "speedup_error": point.speedup / row.speedup - 1.0,
        })
    frame = pd.DataFrame(records)
    frame.attrs.update({"backend": BACKEND, "system": system.name})
    return frame


def preset_mismatches(system: SimSystem, result: Fit) -> dict[str, tuple[float, float]]:
    """Constants whose preset value differs from the rounded fit: key -> (preset, fit)."""
    out = {}
    for key, value in result.values.items():
        stored = float(getattr(system, key))
        if abs(stored - value) > MATCH_TOLERANCE * abs(value):
            out[key] = (stored, value)
    return out


def calibrate_preset(system: SimSystem) -> Fit:
    """Refit the constants the preset's ``calibration`` block names, on its training scales."""
    spec = system.calibration
    if spec is None or spec.target != TARGET:
        raise ConfigError(f"system.calibration: system '{system.name}' is not calibrated on "
                          f"{TARGET}; nothing to check")
    return fit(system, spec.training_cores, free_constants(spec.fitted))


def write_values(path: Path, values: Mapping[str, float]) -> None:
    """Replace ``key: value`` lines of the preset YAML at ``path``, keeping their comments."""
    text = read_text(path, "system file", ConfigError, MAX_YAML_BYTES)
    for key, value in values.items():
        pattern = re.compile(rf"^({re.escape(key)}:\s*)(\S+)(.*)$", re.MULTILINE)
        if not pattern.search(text):
            raise ConfigError(f"system.{key}: no top-level line to write in {path}")
        text = pattern.sub(functools.partial(_replaced, value=f"{value:g}"), text, count=1)
    atomic_write(path, text)  # a crash mid-write leaves the preset whole


def _replaced(match: re.Match[str], value: str) -> str:
    """The matched ``key: value  # comment`` line with ``value``, the comment kept in place."""
    rest = match.group(3)
    comment = rest.lstrip()
    if not comment:
        return f"{match.group(1)}{value}"
    width = len(match.group(2)) + len(rest) - len(comment)
    return f"{match.group(1)}{value.ljust(width - 1)} {comment}"


def preset_path(name_or_path: str) -> Path:
    """The YAML file of a shipped preset, or the path itself."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        return path
    return Path(str(resources.files("iotune.sim").joinpath("systems", f"{name_or_path}.yaml")))


def format_report(system: SimSystem, result: Fit, frame: pd.DataFrame) -> str:
    """Fitted values beside the preset's, and the in-sample / out-of-sample table."""
    lines = [
        f"Calibration of the SIMULATED system '{system.name}' on Table 3 of Behzad et al. "
        f"(HPDC'14), training scales {', '.join(str(c) for c in result.training_cores)} cores "
        f"(least squares on log bandwidth, {result.evaluations} evaluations, "
        f"cost {result.cost:.4g})",
        f"{'constant':<24} {'fit':>12} {'preset':>12}  range",
    ]
    for key, value in result.values.items():
        c = free_constants([key])[0]
        lines.append(f"{key:<24} {value:>12.4g} {float(getattr(system, key)):>12.4g}  "
                     f"{c.low:g}-{c.high:g}")
    lines.append("")
    lines.append(f"{'cores':>6} {'split':<13} | {'tuned MiB/s':>24} | {'default MiB/s':>22} | "
                 f"{'speedup':>20}")
    lines.append(f"{'':>6} {'':<13} | {'paper':>8} {'sim':>7} {'err':>7} | {'paper':>7} "
                 f"{'sim':>6} {'err':>7} | {'paper':>6} {'sim':>5} {'err':>7}")
    for r in frame.itertuples(index=False):
        lines.append(
            f"{r.cores:>6} {r.split:<13} | {r.paper_tuned_mib_s:>8.0f} {r.sim_tuned_mib_s:>7.0f} "
            f"{r.tuned_error:>+7.1%} | {r.paper_default_mib_s:>7.0f} {r.sim_default_mib_s:>6.0f} "
            f"{r.default_error:>+7.1%} | {r.paper_speedup:>6.2f} {r.sim_speedup:>5.2f} "
            f"{r.speedup_error:>+7.1%}"
        )
    for split in ("in-sample", "out-of-sample"):
        part = frame[frame["split"] == split]
        if len(part):
            worst = part[["tuned_error", "default_error", "speedup_error"]].abs().max().max()
            lines.append(f"largest |error| {split}: {worst:.1%}")
    lines.append("In-sample agreement is fitted, not reproduced; only out-of-sample rows test "
                 "the model.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Fit and report; 0 when the preset holds the fit (or ``--write`` stored it), 1 when
    it differs, 2 with a one-line error for bad input."""
    parser = argparse.ArgumentParser(prog="python -m iotune.sim.calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--system", default="hopper", help="preset name or YAML path")
    parser.add_argument("--write", action="store_true",
                        help="store the fitted values in the preset file")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")
    args = parser.parse_args(argv)
    try:
        system = load_system(args.system)
        result = calibrate_preset(system)
        if args.write:
            write_values(preset_path(args.system), result.values)
            system = load_system(args.system)
        frame = split_table(system, result.training_cores)
    except IotuneError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 1)
    if args.format == "table":
        print(format_report(system, result, frame))
    else:
        out = frame.assign(backend=BACKEND, system=system.name)
        print(out.to_csv(index=False) if args.format == "csv"
              else out.to_json(orient="records", indent=2), end="" if args.format == "csv"
              else "\n")
    mismatches = preset_mismatches(system, result)
    for key, (stored, fitted) in mismatches.items():
        print(f"error: system.{key}: preset holds {stored:g}, the fit gives {fitted:g}; "
              "run with --write to store the fit", file=sys.stderr)
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
