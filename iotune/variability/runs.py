r"""Measured times relative to their configuration's idle level, estimated without them.

Different configurations take different times, so their states can share one mixture only
once each time is divided by a *centre* of its configuration. Dividing by the
configuration's own median puts the middle measurement of every configuration at exactly
1.0 (a third of the values with three repeats): a point mass that a mixture locks onto. So
the centre of measurement ``i`` is computed **from the other measurements of its
configuration only**, in log space (``x = ln t``), as the configuration's *idle level*:

1. start: ``c_i`` = the mean of the lower half (``ceil((m - 1) / 2)`` values) of the other
   ``m - 1`` measurements of the configuration. Busy is the slower state and the rarer one
   (``p_busy < 1/2``), so the lower half of the others is mostly idle: with three repeats
   this is the faster of the other two, with ten the mean of the fastest five of nine;
2. fit the two-state mixture (:func:`~iotune.variability.mixture.fit_mixture`) to the
   relative times ``e^(x_i - c_i)`` and take each one's ``P(busy)`` ``p_j``;
3. refine once, again from the others only: ``c_i = sum_(j != i) w_j l_j / sum_(j != i)
   w_j`` with ``l_j = x_j - p_j (mu_busy - mu_idle)`` (measurement ``j`` with its expected
   busy excess taken off) and precision ``w_j = (1 - p_j) / sigma_idle^2 + p_j /
   sigma_busy^2`` (a measurement that is surely idle counts most, since idle times vary
   least). Step 3 is skipped when the mixture of step 2 is not bimodal or there are fewer
   samples than a mixture needs.

An idle measurement's relative time is then about 1 and a busy one's about the busy
factor, whatever the other measurements' states, and no value is shared by construction.
One refinement, not a loop to a fixed point: repeating steps 2-3 is not an EM of any
likelihood, need not converge, and on simulated runs did not label better than one round.
With three repeats a centre rests on two measurements, so relative times are noisier than
the states themselves; ``docs/variability.md`` gives the agreement with a known truth.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from iotune.store.records import PhaseTimes
from iotune.variability.mixture import MIN_SAMPLES, fit_mixture
from iotune.variability.queue import FEATURES as QUEUE_FEATURES

if TYPE_CHECKING:
    import pandas as pd

FloatArray = npt.NDArray[np.float64]
RUN_CAMPAIGNS = ("train", "tune", "run")
#: Measurements a configuration needs before its times count: each centre then rests on at
#: least two other measurements.
MIN_RUNS_PER_CONFIG = 3

def relative_run_times(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Successful measurements as times relative to their configuration's idle level.

    ``relative = t / e^(c_i)`` with the leave-one-out centre ``c_i`` of the module
    docstring; configurations with fewer than :data:`MIN_RUNS_PER_CONFIG` measurements are
    left out. Columns: ``time`` (Unix seconds of ``started_at``), ``config_key``,
    ``write_time``, ``relative``, ``latency`` (the probe before it, NaN without),
    ``true_state`` (the simulator's state, if any) and the queue features recorded with it;
    sorted by time.
    """
    import pandas as pd

    rows = []
    for record in records:
        if record.get("campaign") not in RUN_CAMPAIGNS or record.get("status") != "ok":
            continue
        total = PhaseTimes.of_record(record).total
        if total is None:
            continue
        probe = record.get("probe") or {}
        queue = record.get("queue") or {}
        row = {"time": _unix(record.get("started_at") or record.get("recorded_at")),
               "config_key": record.get("config_key"), "write_time": total,
               "latency": probe.get("latency_s"), "true_state": record.get("state")}
        row.update({name: queue.get(name) for name in QUEUE_FEATURES if queue})
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    counts = frame.groupby("config_key")["write_time"].transform("size")
    frame = frame[counts >= MIN_RUNS_PER_CONFIG].reset_index(drop=True)
    if frame.empty:
        return frame
    x = np.log(frame["write_time"].to_numpy(dtype=float))
    groups = frame.groupby("config_key", sort=False).ngroup().to_numpy()
    frame["relative"] = np.exp(x - leave_one_out_centres(x, groups))
    frame["latency"] = pd.to_numeric(frame["latency"], errors="coerce")
    return frame.sort_values("time", kind="stable").reset_index(drop=True)


def leave_one_out_centres(x: FloatArray, groups: npt.NDArray[np.integer[Any]]) -> FloatArray:
    """The idle-level centre of each log time ``x_i`` from the others of its group.

    ``groups`` numbers the configurations; every group needs at least two members. Steps
    as in the module docstring.
    """
    x = np.asarray(x, dtype=np.float64)
    centres = _lower_half_means(x, groups)
    if x.size < MIN_SAMPLES:
        return centres
    relative = np.exp(x - centres)
    fit = fit_mixture(relative)
    if not fit.bimodal:
        return centres
    busy = fit.posterior_busy(relative)
    level = x - busy * (fit.busy.mu - fit.idle.mu)
    weight = (1 - busy) / fit.idle.sigma**2 + busy / fit.busy.sigma**2
    total_weight = np.bincount(groups, weight)[groups] - weight
    total_level = np.bincount(groups, weight * level)[groups] - weight * level
    return np.asarray(total_level / total_weight, dtype=np.float64)


def _lower_half_means(x: FloatArray, groups: npt.NDArray[np.integer[Any]]) -> FloatArray:
    """For each ``x_i``, the mean of the lower half of the other members of its group."""
    out = np.empty_like(x)
    for group in np.unique(groups):
        members = np.flatnonzero(groups == group)
        values = x[members]
        for position, index in enumerate(members):
            others = np.sort(np.delete(values, position))
            out[index] = float(others[: (others.size + 1) // 2].mean())
    return out


def _unix(stamp: Any) -> float:
    if isinstance(stamp, int | float):
        return float(stamp)
    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except ValueError:
        return math.nan
