from __future__ import annotations

import numpy as np
import pandas as pd
from model_data import EQ5_COEFFICIENTS, EQ5_EXPONENTS, eq5_frame, grid_frame

from iotune.model import fit_model
from iotune.model.crossval import assign_folds, configuration_ids
from iotune.model.selection import GreedySelector
from iotune.model.terms import candidate_matrix


def brute_force_errors(matrix: np.ndarray, y: np.ndarray, selected: list[int]) -> np.ndarray:
    """Eq. 4 for every candidate added to ``selected``, each by its own lstsq (eq. 2)."""
    errors = np.full(matrix.shape[1], np.inf)
    for c in range(matrix.shape[1]):
        if c in selected:
            continue
        design = matrix[:, [*selected, c]]
        coef = np.linalg.lstsq(design, y, rcond=None)[0]
        errors[c] = np.sum(((design @ coef - y) / y) ** 2)
    return errors


def test_vectorised_scores_equal_one_least_squares_fit_per_candidate() -> None:
    rng = np.random.default_rng(7)
    values = rng.uniform(1.0, 20.0, size=(60, 3))
    mask = (rng.random(60) < 0.4).astype(float)
    y = 4 + values[:, 0] / values[:, 1] + 0.3 * values[:, 2] * (1 + mask) \
        + rng.normal(0, 0.2, 60)
    raw = candidate_matrix(values, [mask])
    selector = GreedySelector(raw.copy(order="F"), y)
    for _ in range(5):
        scores = selector.scores()
        brute = brute_force_errors(raw, y, selector.selected)
        np.testing.assert_allclose(scores, brute, rtol=1e-9)
        best = int(np.argmin(scores))
        assert best == int(np.argmin(brute))
        assert np.isclose(selector.add(best), brute[best], rtol=1e-9)


def test_candidates_in_the_span_of_the_basis_are_never_chosen() -> None:
    # Two values per parameter: 1/x lies in span{1, x}, and four distinct configurations
    # span at most four dimensions, so selection runs out of candidates after four terms.
    df = grid_frame("xz", [[1, 2], [3, 5]])
    df = pd.concat([df, df], ignore_index=True)
    df["y"] = 1 + df.x + 2 * df.z + 0.5 * df.x * df.z + np.linspace(0, 0.01, len(df))
    model = fit_model(df, ["x", "z"], "y", max_terms=8, monotone_completion=False)
    assert len(model.terms) == 4
    assert model.stats is not None
    assert model.stats.stop_reason == "candidates exhausted"
    assert model.stats.configurations == 4
    assert np.all(np.isfinite(model.coefficients))


def test_sparse_model_is_fitted_exactly_and_its_optimum_is_in_the_predicted_top_20() -> None:
    # A known sparse model over a grid; its minimum is interior in c and in s.
    grid = grid_frame("csa", [[1, 2, 4, 8, 16, 32, 64], [1, 2, 4, 8, 16, 32, 64],
                              [4, 8, 16, 32]])
    grid["t"] = 2 + 60 / grid.c + 0.8 * grid.c * grid.s / grid.a + 30 * grid.a / (grid.c * grid.s)
    train = grid.sample(frac=0.4, random_state=1)
    model = fit_model(train, ["c", "s", "a"], "t", max_terms=6)
    assert model.training_error is not None and model.training_error < 1e-20
    predicted = model.predict(grid)
    np.testing.assert_allclose(predicted, grid.t, rtol=1e-9)
    top20 = np.argsort(predicted)[:20]
    assert int(np.argmin(grid.t.to_numpy())) in top20


def test_eq5_is_recovered_from_noise_free_data() -> None:
    # The paper's eq. 5 as a generator on a grid at the larger scales (file sizes 256 GB to
    # 2 TB). Greedy selection by eq. 4 then finds exactly its seven terms.
    df = eq5_frame()
    model = fit_model(df, ["c", "s", "a", "f"], "write_time", max_terms=7,
                      actionable=["c", "s", "a"])
    found = dict(zip((t.exponents for t in model.terms), model.coefficients, strict=True))
    assert set(found) == set(EQ5_EXPONENTS)
    for exponents, coefficient in zip(EQ5_EXPONENTS, EQ5_COEFFICIENTS, strict=True):
        assert np.isclose(found[exponents], coefficient, rtol=1e-8), exponents
    assert model.steps and all(not step.by_completion for step in model.steps)
    assert model.formula() == ("m = -20.65 + 0.11 f + 4.5 a/s + 4.17 f/a + 27.13 a/c "
                               "+ 0.01 cf/a + 0.0038 cs/a")


def test_replicates_are_rows_and_stay_together_in_cross_validation() -> None:
    rng = np.random.default_rng(11)
    grid = grid_frame("sa", [[1, 2, 4, 8, 16], [2, 4, 8, 16]])
    df = pd.concat([grid] * 3, ignore_index=True)
    df["t"] = (5 + 20 / df.s + 0.5 * df.s * df.a) * rng.lognormal(0, 0.02, len(df))
    model = fit_model(df, ["s", "a"], "t", max_terms=3)
    assert model.stats is not None
    assert (model.stats.rows, model.stats.configurations) == (60, 20)
    assert model.stats.rms_relative_error < 0.05
    ids = configuration_ids([df.s.to_numpy(), df.a.to_numpy()])
    folds = assign_folds(ids, 5, seed=0)
    assert folds is not None
    for config in range(20):
        assert len(set(folds[ids == config])) == 1
    assert sorted(np.bincount(folds)) == [12] * 5
