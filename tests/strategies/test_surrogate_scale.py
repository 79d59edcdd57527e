"""A tune on a store with many runs of each configuration: the model search fits one row per
configuration (weighted by its runs), so its forecast and its cost do not grow with the
repeats; the training frame the search asks for after every batch stays the store's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import iotune.model
from iotune.backends.function import FunctionBackend
from iotune.settings.space import Limits, SearchSpace
from iotune.store import Store
from iotune.store.index import StoreIndex
from iotune.store.records import Measurement, frame_of
from iotune.strategies import make_strategy
from iotune.strategies.surrogate import bootstrap_forecast
from iotune.tune import MeasuringContext, MemorySink

NAMES = ["stripe_count", "stripe_size", "romio_cb_write"]
SPACE = SearchSpace.from_mapping({
    "stripe_count": [1, 2, 4, 8, 16, 32],
    "stripe_size": ["1MiB", "4MiB", "16MiB", "64MiB"],
    "romio_cb_write": ["enable", "disable"],
})


def true_time(settings, cores: int) -> float:
    size = settings["stripe_size"] / 2**20
    count = settings["stripe_count"]
    return (cores / 16) * (1 + 4 / count + 0.05 * count + 2 / size + 0.03 * size
                           + (0.5 if settings["romio_cb_write"] == "enable" else 0.0))


def repeated_frame(repeats: int = 8, sigma: float = 0.1, seed: int = 0) -> pd.DataFrame:
    """Every configuration at two scales, ``repeats`` noisy runs each, and default runs."""
    rng = np.random.default_rng(seed)
    rows = []
    for cores in (16, 64):
        for settings in SPACE.configurations(cores, Limits(4)):
            for _ in range(repeats):
                rows.append({**settings, "cores": cores, "campaign": "train",
                             "write_time": true_time(settings, cores)
                             * float(np.exp(sigma * rng.standard_normal()))})
        rows += [{"cores": cores, "campaign": "train", "write_time": 5.0 * cores / 16}] * 2
    return pd.DataFrame(rows)


def candidates(cores: int = 256) -> pd.DataFrame:
    frame = pd.DataFrame(SPACE.configurations(cores, Limits(4)))
    frame["cores"] = cores
    return frame


def forecast(frame: pd.DataFrame, members: int = 8, seed: int = 3):
    return bootstrap_forecast(frame, candidates(), NAMES, members=members, max_terms=5,
                              seed=seed)


def test_forecast_on_many_repeats_has_one_row_per_member_and_candidate() -> None:
    result = forecast(repeated_frame(), members=8)
    assert result is not None
    assert result.member_logs.shape == (8, len(candidates()))
    assert np.isfinite(result.member_logs).all()
    assert result.time.shape == (len(candidates()),)


def test_repeating_every_run_leaves_the_forecast_as_it_is() -> None:
    frame = repeated_frame(repeats=3)
    once = forecast(frame)
    thrice = forecast(pd.concat([frame, frame, frame], ignore_index=True))
    assert once is not None and thrice is not None
    np.testing.assert_allclose(thrice.member_logs, once.member_logs, rtol=1e-9, atol=1e-12)


def test_only_the_mean_of_a_configurations_runs_counts() -> None:
    """Three runs spread evenly around a time, for every configuration, are one run at it."""
    single = repeated_frame(repeats=1, sigma=0.1, seed=4)
    spread = pd.concat([single.assign(write_time=single.write_time * np.exp(shift))
                        for shift in (-0.01, 0.0, 0.01)], ignore_index=True)
    one, three = forecast(single), forecast(spread)
    assert one is not None and three is not None
    np.testing.assert_allclose(three.member_logs, one.member_logs, rtol=1e-9, atol=1e-12)


def test_members_are_fitted_on_one_row_per_configuration(monkeypatch) -> None:
    frame = repeated_frame(repeats=20)
    configurations = len(frame.dropna().drop_duplicates(subset=[*NAMES, "cores"]))
    fitted: list[tuple[int, float]] = []
    fit_model = iotune.model.fit_model

    def recording(df, *args, **kwargs):
        fitted.append((len(df), float(np.sum(kwargs["weights"]))))
        return fit_model(df, *args, **kwargs)

    monkeypatch.setattr(iotune.model, "fit_model", recording)
    assert forecast(frame, members=6) is not None
    assert len(fitted) == 6
    # A resample draws as many configurations as there are, with replacement: fewer
    # distinct rows, and the runs of those drawn (20 each, once per draw).
    assert all(rows <= configurations and runs == 20 * configurations for rows, runs in fitted)


def test_the_final_model_is_fitted_on_aggregated_rows(monkeypatch) -> None:
    training = repeated_frame(repeats=10)
    seen: list[int] = []
    fit_model = iotune.model.fit_model

    def recording(df, *args, **kwargs):
        seen.append(len(df))
        return fit_model(df, *args, **kwargs)

    monkeypatch.setattr(iotune.model, "fit_model", recording)
    context = MeasuringContext(backend=FunctionBackend(true_time), sink=MemorySink(training),
                               kernel="vpic", cores=256, params={},
                               candidates=SPACE.configurations(256, Limits(4)), budget=10)
    strategy = make_strategy("model", members=4)
    strategy.search(context)
    model = strategy.notes["model"]
    usable = training.dropna()
    assert model.stats.rows == len(usable) + sum(len(e.times) for e in
                                                 context.evaluations.values())
    assert max(seen) <= len(usable.drop_duplicates(subset=[*NAMES, "cores"])) + 10


def record(settings: dict, cores: int, time: float | None, *, backend: str = "sim",
           campaign: str = "tune", key: str = "k") -> dict:
    ok = time is not None
    return {"kernel": "vpic", "cores": cores, "settings": settings,
            "params": {"particles_per_rank": 1024, "fsync": False}, "config_key": key,
            "campaign": campaign, "backend": backend, "rep": 0, "host": "h",
            "provenance": "simulated", "system": "synthetic",
            "status": "ok" if ok else "failed", "error": None if ok else "boom",
            "result": ({"times_s": {"total": time}, "bytes_written": 2**26,
                        "bandwidth_mib_s": 64 / time} if ok else None)}


@pytest.mark.parametrize("appends", [
    [({}, 1.0)],  # the baseline: a default run, no settings at all
    [({"stripe_count": 4, "stripe_size": 2**20}, 2.0), ({}, 1.5)],
    [({"stripe_count": 4, "romio_cb_write": "enable"}, 2.5)],  # a text setting, new
    [({"stripe_count": 2.5}, 2.0)],  # a float where the store has ints
    [({"stripe_count": "many"}, 2.0)],  # text where the store has numbers
    [({"hint.x": True}, 2.0), (None, None)],  # a new boolean column; a failed run
])
def test_the_training_frame_after_appends_is_the_stores(tmp_path, appends) -> None:
    store = Store(tmp_path / "s.jsonl")
    for i, count in enumerate([1, 2, 4, 8, 16, 1, 2]):
        store.append(record({"stripe_count": count, "stripe_size": 2**20 * (1 + i % 3)},
                            16 * (1 + i % 2), 1.0 + i, campaign="train", key=f"t{i}"))
    store.append(record({"stripe_count": 8}, 16, 3.0, backend="mpi"))
    index = StoreIndex(store)
    first = index.training_frame("vpic", "sim")
    first["scratch"] = 1.0  # a caller's change stays in its own frame
    assert "scratch" not in index.training_frame("vpic", "sim").columns
    for settings, time in appends:
        index.append(record(settings or {}, 64, time))
        expected = frame_of([m for m in map(Measurement.from_record, store.records())
                             if (m.kernel, m.backend) == ("vpic", "sim")])
        pd.testing.assert_frame_equal(index.training_frame("vpic", "sim"), expected)
