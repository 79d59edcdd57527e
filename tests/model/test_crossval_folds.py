"""Cross-validation folds over configurations (scikit-learn's GroupKFold)."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.model.crossval import assign_folds, configuration_ids, cv_relative_error


def test_replicates_share_a_fold_and_folds_are_balanced_by_rows() -> None:
    replicates = np.array([1, 4, 2, 2, 3, 1, 1, 2, 5, 3, 2, 2])
    ids = np.repeat(np.arange(replicates.size), replicates)
    folds = assign_folds(ids, 3, seed=7)
    assert folds is not None and sorted(set(folds)) == [0, 1, 2]
    for config in range(replicates.size):
        assert len(set(folds[ids == config])) == 1
    sizes = np.bincount(folds)
    assert sizes.max() - sizes.min() <= replicates.max()


def test_folds_follow_the_seed() -> None:
    ids = np.repeat(np.arange(30), 2)
    first = assign_folds(ids, 5, seed=1)
    assert first is not None
    assert np.array_equal(first, assign_folds(ids, 5, seed=1))
    assert not np.array_equal(first, assign_folds(ids, 5, seed=2))


@pytest.mark.parametrize(("configs", "folds", "expected"), [(1, 5, None), (3, 5, 3), (9, 4, 4)])
def test_fold_count_is_capped_by_the_configurations(configs, folds, expected) -> None:
    result = assign_folds(np.arange(configs), folds, seed=0)
    assert (None if result is None else int(result.max()) + 1) == expected


def test_configuration_ids_are_equal_exactly_for_equal_rows() -> None:
    ids = configuration_ids([np.array([1, 1, 2, 2, 1]), np.array(["a", "b", "a", "a", "a"])])
    assert ids[0] == ids[4] and ids[2] == ids[3]
    assert len({ids[0], ids[1], ids[2]}) == 3


def test_cv_error_predicts_each_fold_from_the_others() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(1, 4, 24)
    design = np.column_stack([np.ones_like(x), x])
    y = 2.0 + 3.0 * x
    folds = assign_folds(np.arange(24), 4, seed=0)
    assert folds is not None
    assert cv_relative_error(design, y, folds) == pytest.approx(0.0, abs=1e-20)
    noisy = y * (1 + rng.normal(0, 0.05, 24))
    expected = 0.0
    for fold in range(4):
        held = folds == fold
        coef = np.polyfit(x[~held], noisy[~held], 1)
        expected += float(np.sum(((np.polyval(coef, x[held]) - noisy[held]) / noisy[held]) ** 2))
    assert cv_relative_error(design, noisy, folds) == pytest.approx(expected, rel=1e-9)
