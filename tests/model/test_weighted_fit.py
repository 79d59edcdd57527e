"""Weighted fits on aggregated rows: one row per configuration, weighted by its runs, is the
fit on the raw repeated rows; no weights is the unweighted fit; aggregation keeps unset
settings as a level of their own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from model_data import eq5_frame

from iotune.errors import DataError
from iotune.model import fit_model, load_model, model_to_dict, save_model
from iotune.model.from_measurements import WEIGHT, aggregate_runs, fit_for_settings, model_view

PARAMS = ["c", "s", "a", "f"]


def smooth_frame() -> pd.DataFrame:
    """A noise-free landscape no sum of candidate terms fits exactly (square roots and a
    logarithm), so selection runs its full course on non-zero errors."""
    df = eq5_frame()
    df["write_time"] = (5 + np.sqrt(df.c * df.f) / df.a + 3 * np.log(df.s + 1)
                        + 40 * df.a / df.c / np.sqrt(df.s))
    return df


def repeated(df: pd.DataFrame, seed: int = 0, most: int = 6) -> tuple[pd.DataFrame, np.ndarray]:
    """Each row repeated 1 to ``most`` times (shuffled), and the repeat counts."""
    counts = np.random.default_rng(seed).integers(1, most + 1, size=len(df))
    raw = df.loc[df.index.repeat(counts)].sample(frac=1.0, random_state=seed)
    return raw.reset_index(drop=True), counts


def same_fit(weighted, raw, on: pd.DataFrame | None = None) -> None:
    """The same terms and coefficients; with ``on``, the same predictions on it instead
    (a categorical level's indicator and its complement are an exact tie for eq. 4, so
    rounding may pick either; the model is the same)."""
    if on is None:
        assert weighted.terms == raw.terms
        assert np.allclose(weighted.coefficients, raw.coefficients, rtol=1e-7, atol=1e-12)
    else:
        assert len(weighted.terms) == len(raw.terms)
        assert np.allclose(weighted.predict(on), raw.predict(on), rtol=1e-7)
    assert weighted.stats.rows == raw.stats.rows
    assert weighted.stats.configurations == raw.stats.configurations
    assert weighted.stats.relative_error == pytest.approx(raw.stats.relative_error, rel=1e-7,
                                                          abs=1e-18)
    assert weighted.stats.stop_reason.split(":")[0] == raw.stats.stop_reason.split(":")[0]
    assert [c.status for c in weighted.completion] == [c.status for c in raw.completion]


@pytest.mark.parametrize("frame", [smooth_frame, eq5_frame], ids=["smooth", "eq5"])
@pytest.mark.parametrize("stop", ["terms", "threshold", "cv"])
def test_weighted_aggregated_fit_is_the_fit_on_repeated_rows(frame, stop) -> None:
    raw, counts = repeated(frame())
    raw_model = fit_model(raw, PARAMS, "write_time", max_terms=6, stop=stop, seed=3,
                          actionable=["c", "s", "a"])
    rows = aggregate_runs(raw, PARAMS)
    assert len(rows) == len(counts) and sorted(rows[WEIGHT]) == sorted(counts)
    model = fit_model(rows, PARAMS, "write_time", max_terms=6, stop=stop, seed=3,
                      actionable=["c", "s", "a"], weights=rows[WEIGHT])
    same_fit(model, raw_model)
    if raw_model.cv_error is not None:
        # Folds are drawn over configurations, so both fits hold out the same ones.
        assert model.stats.cv_folds == raw_model.stats.cv_folds
        assert model.cv_error == pytest.approx(raw_model.cv_error, rel=1e-6, abs=1e-18)


def test_weights_of_one_change_nothing() -> None:
    df = smooth_frame()
    plain = fit_model(df, PARAMS, "write_time", max_terms=5, stop="cv")
    ones = fit_model(df, PARAMS, "write_time", max_terms=5, stop="cv", weights=np.ones(len(df)))
    default = fit_model(df, PARAMS, "write_time", max_terms=5, stop="cv", weights=None)
    assert model_to_dict(ones) == model_to_dict(plain) == model_to_dict(default)
    assert isinstance(ones.stats.rows, int)


def test_fractional_weights_save_and_load(tmp_path) -> None:
    df = smooth_frame()
    weights = np.linspace(0.5, 2.0, len(df))
    model = fit_model(df, PARAMS, "write_time", max_terms=4, weights=weights)
    assert model.stats.rows == pytest.approx(weights.sum())
    save_model(model, tmp_path / "m.yaml")
    loaded = load_model(tmp_path / "m.yaml")
    assert loaded.stats == model.stats
    assert np.array_equal(loaded.predict(df), model.predict(df))


@pytest.mark.parametrize("bad, message", [
    (None, "2 given for 256 rows"),
    (0.0, "value 0 at row 5 is not a positive number"),
    (np.nan, "value nan at row 5 is not a positive number"),
    (-1.5, "value -1.5 at row 5 is not a positive number"),
])
def test_bad_weights_are_named(bad, message) -> None:
    df = smooth_frame()
    weights = np.ones(2) if bad is None else np.ones(len(df))
    if bad is not None:
        weights[5] = bad
    with pytest.raises(DataError, match=message):
        fit_model(df, PARAMS, "write_time", max_terms=3, weights=weights)


def test_aggregate_runs_keeps_unset_settings_as_their_own_level() -> None:
    frame = pd.DataFrame({
        "stripe_count": [4.0, 4.0, np.nan, np.nan, 4.0, 8.0],
        "romio_cb_write": ["enable", "enable", "enable", None, None, "enable"],
        "cores": [16, 16, 16, 16, 16, 32],
        "write_time": [1.0, 4.0, 3.0, 5.0, 7.0, 9.0],
        "bandwidth_mib_s": [1.0] * 6,
    })
    out = aggregate_runs(frame, ["stripe_count", "romio_cb_write", "cores"])
    assert list(out.columns) == ["stripe_count", "romio_cb_write", "cores", "write_time", WEIGHT]
    assert len(out) == 5
    first = out.iloc[0]
    assert (first.stripe_count, first.romio_cb_write, first[WEIGHT]) == (4.0, "enable", 2)
    assert first.write_time == pytest.approx(2.0)  # the geometric mean of 1 and 4
    unset = out[out.stripe_count.isna()]
    assert sorted(unset.write_time) == pytest.approx([3.0, 5.0])
    assert unset.romio_cb_write.isna().sum() == 1
    assert out[WEIGHT].sum() == len(frame)


def test_aggregating_aggregated_rows_changes_nothing() -> None:
    raw, _ = repeated(smooth_frame())
    once = aggregate_runs(raw, PARAMS)
    twice = aggregate_runs(once, PARAMS, weights=WEIGHT)
    pd.testing.assert_frame_equal(once, twice, rtol=1e-12)
    halves = pd.concat([aggregate_runs(part, PARAMS)
                        for part in (raw.iloc[: len(raw) // 2], raw.iloc[len(raw) // 2:])])
    merged = aggregate_runs(halves, PARAMS, weights=WEIGHT)
    pd.testing.assert_frame_equal(merged.sort_values(PARAMS).reset_index(drop=True),
                                  once.sort_values(PARAMS).reset_index(drop=True), rtol=1e-12)


def settings_frame(repeats: int) -> pd.DataFrame:
    """A noise-free store-like frame: numeric settings, a choice, two scales, repeats."""
    rows = []
    for cores in (16, 64):
        for count in (1, 2, 4, 8, 16, 32):
            for size in (1, 4, 16, 64):
                for cb in ("enable", "disable"):
                    time = (cores / 16) * (1 + 4 / count + 0.05 * count + 2 / size
                                           + 0.03 * size + (0.5 if cb == "enable" else 0.0))
                    rows += [{"cores": cores, "stripe_count": count,
                              "stripe_size": size * 2**20, "romio_cb_write": cb,
                              "write_time": time}] * (1 + (count + size) % repeats)
    rows += [{"cores": 16, "write_time": 9.0}] * 3  # default runs: no settings
    return pd.DataFrame(rows)


def test_fit_for_settings_on_aggregated_rows_is_the_raw_fit() -> None:
    frame = settings_frame(repeats=5)
    names = ["stripe_count", "stripe_size", "romio_cb_write"]
    raw = fit_for_settings(frame, names, 6, seed=2)
    aggregated = fit_for_settings(frame, names, 6, seed=2, aggregate=True)
    same_fit(aggregated, raw, on=frame.dropna())
    assert aggregated.stats.rows == len(frame) - 3  # the measurements, default runs left out
    assert aggregated.cv_error == pytest.approx(raw.cv_error, rel=1e-6)


def test_fit_for_settings_takes_a_weight_column() -> None:
    frame = settings_frame(repeats=4)
    names = ["stripe_count", "stripe_size", "romio_cb_write"]
    rows = aggregate_runs(frame.dropna(), ["stripe_count", "stripe_size", "romio_cb_write",
                                           "cores"])
    weighted = fit_for_settings(rows, names, 6, seed=2, weights=WEIGHT)
    again = fit_for_settings(rows, names, 6, seed=2, weights=WEIGHT, aggregate=True)
    same_fit(weighted, fit_for_settings(frame, names, 6, seed=2), on=rows)
    same_fit(again, weighted, on=rows)


def test_the_model_view_keeps_the_settings_the_scale_and_the_target_time_only():
    wide = pd.DataFrame({"stripe_count": [1, 2], "cores": [4, 4], "read_time": [0.5, 0.4],
                         "write_time": [1.0, 2.0], "hostname": ["a", "b"], "run_id": [1, 2]})
    assert list(model_view(wide, ["stripe_count", "cb_nodes"]).columns) == [
        "stripe_count", "cores", "write_time"]
    assert list(model_view(wide, ["stripe_count"], "read").columns) == [
        "stripe_count", "cores", "read_time"]
