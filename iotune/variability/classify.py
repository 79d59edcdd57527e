"""State classifiers: predict idle or busy from latency and job-queue features.

Wan et al. (section IV) label each sample by the two-state mixture and train scikit-learn
classifiers on features of the current latency, a 10-minute window of latencies and the job
queue (Table II); they report k-fold cross-validated accuracy and ROC AUC. Here:

Samples and features (:func:`probe_frame`, :func:`add_window_features`)
    * ``source="probe"``: one sample per target per probe round. Features: ``latency``,
      ``window_mean`` and ``window_std`` of that target's latencies in the ``window`` seconds
      up to and including the sample, and the queue features of the latest snapshot at or
      before it (:data:`iotune.variability.queue.FEATURES`). The label is the mixture state
      of the same target's probe ``horizon`` rounds *later* (default 1: "which state will
      the next I/O meet?"; 0 labels the sample itself, which its own latency gives away).
    * ``source="runs"``: one sample per measurement that carries a probe (``record["probe"]``,
      written by a state-aware tune). Features as above from the probe latencies; the label is
      the mixture state of the measurement's time relative to its configuration
      (:func:`iotune.variability.runs.relative_run_times`).

Classifiers (:data:`CLASSIFIERS`), the six of the paper (section IV.B): ``svm`` (RBF
kernel, on standardised features), ``rf`` (random forest of 50 trees), ``gb`` (gradient
boosting, scikit-learn defaults), ``cart`` (one decision tree, CART, at most 4 levels deep:
deeper trees memorised the noise of a few hundred probes and fell to within 5 points of
guessing), ``nb`` (Gaussian naive Bayes) and ``mlp`` (a multi-layer perceptron, one hidden
layer of 32 units, on standardised features). How they are scored (shuffled k-fold and
time-ordered) is :mod:`iotune.variability.validation`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.errors import ConfigError, DataError
from iotune.variability.queue import FEATURES as QUEUE_FEATURES

if TYPE_CHECKING:
    import pandas as pd

    from iotune.variability.state import StateModel

CLASSIFIERS = ("svm", "rf", "gb", "cart", "nb", "mlp")
CLASSIFIER_NAMES = {"svm": "support vector machine (RBF)", "rf": "random forest (50 trees)",
                    "gb": "gradient boosting", "cart": "decision tree (CART)",
                    "nb": "Gaussian naive Bayes", "mlp": "neural network (MLP, 32 units)"}
LATENCY_FEATURES = ("latency", "window_mean", "window_std")


def choose_backend(records: Sequence[dict[str, Any]], backend: str | None, what: str) -> str:
    """The one backend of ``records`` to analyse: ``backend`` if given (and present), else
    the only one there is; DataError when there are none or several."""
    found = sorted({str(r.get("backend")) for r in records})
    if backend is not None:
        if backend not in found:
            raise DataError(f"--backend: no {what} of backend {backend!r} in the store "
                            f"(found: {', '.join(found) or 'none'})")
        return backend
    if not found:
        raise DataError(f"no {what} in the store")
    if len(found) > 1:
        raise DataError(f"{what} of several backends in the store ({', '.join(found)}); "
                        "choose one with --backend")
    return found[0]


def probe_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The probe rounds among ``records``."""
    return [r for r in records if r.get("campaign") == "probe" and r.get("kind") == "latency"]


def probe_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per (round, target) with a latency, sorted by time.

    Columns: ``time`` (Unix seconds), ``probe_id``, ``round``, ``target``, ``latency``,
    ``true_state`` (simulated records only, else None), ``size_bytes`` and the queue features
    carried forward from the latest snapshot (NaN before the first one; absent without any);
    when any round has large writes, ``large_s`` and ``large_size`` (NaN on other rows).
    """
    import pandas as pd

    rows = []
    for record in records:
        queue = record.get("queue") or {}
        for target in record.get("targets") or ():
            if target.get("latency_s") is None:
                continue
            row = {"time": float(target.get("at", record.get("time", 0.0))),
                   "probe_id": record.get("probe_id"), "round": record.get("round"),
                   "target": target.get("target"), "latency": float(target["latency_s"]),
                   "true_state": target.get("state"), "size_bytes": record.get("size_bytes")}
            row.update({name: queue.get(name) for name in QUEUE_FEATURES if queue})
            if target.get("large_s") is not None:
                row.update(large_s=float(target["large_s"]),
                           large_size=record.get("large_size_bytes"))
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame = frame.sort_values(["time", "target"], kind="stable").reset_index(drop=True)
    queue_columns = [c for c in QUEUE_FEATURES if c in frame.columns]
    if queue_columns:
        frame[queue_columns] = frame[queue_columns].ffill()
    return frame


def add_window_features(frame: pd.DataFrame, window_s: float,
                        by: Sequence[str] = ("probe_id", "target")) -> pd.DataFrame:
    """``frame`` with ``window_mean`` and ``window_std`` of ``latency`` over the ``window_s``
    seconds up to and including each row, per group ``by`` (std 0 for a single sample)."""
    import pandas as pd

    if not (math.isfinite(window_s) and window_s > 0):
        raise ConfigError(f"--window: {window_s!r} is not a positive duration")
    out = frame.copy()
    keys = [k for k in by if k in out.columns]
    out["_at"] = pd.to_datetime(out["time"], unit="s")
    means = []
    stds = []
    groups = out.groupby(keys, sort=False, dropna=False) if keys else [((), out)]
    for _, group in groups:
        rolled = group.sort_values("_at").rolling(f"{window_s}s", on="_at")["latency"]
        means.append(rolled.mean())
        stds.append(rolled.std(ddof=0))
    out["window_mean"] = pd.concat(means)
    out["window_std"] = pd.concat(stds).fillna(0.0)
    return out.drop(columns="_at")


def future_labels(frame: pd.DataFrame, labels: Sequence[str | None], horizon: int,
                  by: Sequence[str] = ("probe_id", "target")) -> pd.Series:
    """The label of the row ``horizon`` samples later in the same group (NaN past the end)."""
    import pandas as pd

    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 0:
        raise ConfigError(f"--horizon: {horizon!r} is not an integer >= 0")
    series = pd.Series(list(labels), index=frame.index, dtype=object)
    keys = [k for k in by if k in frame.columns]
    if not keys or horizon == 0:
        return series.shift(-horizon)
    ordered = frame.sort_values("time", kind="stable")
    shifted = series.loc[ordered.index].groupby(
        [ordered[k] for k in keys], sort=False, dropna=False).shift(-horizon)
    return shifted.reindex(frame.index)


@dataclass(frozen=True)
class LabelledSamples:
    """A feature matrix with idle (0) / busy (1) labels and each sample's time (Unix
    seconds, for the time-ordered validation), ready for scoring."""

    features: pd.DataFrame
    labels: np.ndarray[Any, np.dtype[np.int_]]
    times: np.ndarray[Any, np.dtype[np.float64]]

    @property
    def busy_share(self) -> float:
        return float(self.labels.mean()) if self.labels.size else math.nan


def labelled_samples(frame: pd.DataFrame, labels: Sequence[str | None], *, horizon: int = 1,
                     use_queue: bool = True) -> LabelledSamples:
    """Features of ``frame`` (with window features) and the labels ``horizon`` samples on.

    Rows without a future label (or whose label is None), without a latency or before the
    first queue snapshot are dropped; the queue features are used when ``use_queue`` and
    the frame has them.
    """
    target = future_labels(frame, labels, horizon)
    columns = list(LATENCY_FEATURES)
    if use_queue:
        columns += [c for c in QUEUE_FEATURES if c in frame.columns]
    data = frame[columns].apply(lambda c: c.astype(float))
    keep = target.notna() & data.notna().all(axis=1)
    y = (target[keep] == "busy").to_numpy(dtype=int)
    times = frame.loc[keep, "time"].to_numpy(dtype=float)
    return LabelledSamples(data[keep].reset_index(drop=True), y, times)


def make_classifier(name: str, seed: int = 0) -> Any:
    """The scikit-learn estimator called ``name`` (one of :data:`CLASSIFIERS`)."""
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    if name == "svm":
        return make_pipeline(StandardScaler(), SVC(kernel="rbf", random_state=seed))
    if name == "rf":
        return RandomForestClassifier(n_estimators=50, random_state=seed, n_jobs=1)
    if name == "gb":
        return GradientBoostingClassifier(random_state=seed)
    if name == "cart":
        return DecisionTreeClassifier(max_depth=4, random_state=seed)
    if name == "nb":
        return GaussianNB()
    if name == "mlp":
        # Early stopping on a held-out tenth ends training before it fits the noise, and
        # before the iteration limit, so it never warns that it did not converge.
        return make_pipeline(StandardScaler(), MLPClassifier(
            hidden_layer_sizes=(32,), early_stopping=True, max_iter=500, random_state=seed))
    raise ConfigError(f"--classifier: {name!r} is not one of {', '.join(CLASSIFIERS)}")


def majority_accuracy(samples: LabelledSamples) -> float:
    """Accuracy of always guessing the more frequent state (the bar to beat)."""
    share = samples.busy_share
    return max(share, 1 - share)


def label_latencies(model: StateModel, values: Sequence[float], method: str,
                    seed: int) -> list[str]:
    """Mixture labels of ``values`` (``map`` or ``sample`` with a seeded generator)."""
    return list(model.labels(values, method, np.random.default_rng(seed)))
