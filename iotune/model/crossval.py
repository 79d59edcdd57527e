"""k-fold cross-validated relative error of a fixed basis.

Folds are drawn over *configurations*, not rows: the replicated measurements of one
configuration always fall in the same fold, otherwise a held-out row would be predicted
by a model that saw its twin and the error would look better than it is. The folds are
scikit-learn's :class:`~sklearn.model_selection.GroupKFold` with the configuration as the
group, shuffled with the caller's seed.
"""

from __future__ import annotations

import numpy as np


def configuration_ids(columns: list[np.ndarray]) -> np.ndarray:
    """One integer per row, equal for rows with equal values in every column."""
    if not columns:
        return np.zeros(0, dtype=np.int64)
    codes = [np.unique(col, return_inverse=True)[1].reshape(-1) for col in columns]
    _, ids = np.unique(np.column_stack(codes), axis=0, return_inverse=True)
    return np.asarray(ids).reshape(-1)


def assign_folds(config_ids: np.ndarray, folds: int, seed: int) -> np.ndarray | None:
    """Fold number per row: configurations shuffled with ``seed`` and grouped into folds
    of about equal row counts, every row of a configuration in the same fold.

    Uses ``min(folds, configurations)`` folds, numbered from 0, none of them empty;
    ``None`` when there are fewer than two configurations, so no cross-validation is
    possible.
    """
    from sklearn.model_selection import GroupKFold

    count = int(config_ids.max()) + 1 if config_ids.size else 0
    k = min(folds, count)
    if k < 2:
        return None
    splitter = GroupKFold(n_splits=k, shuffle=True, random_state=seed)
    fold_of_row = np.empty(config_ids.size, dtype=np.int64)
    rows = np.zeros((config_ids.size, 1))
    for fold, (_, test) in enumerate(splitter.split(rows, groups=config_ids)):
        fold_of_row[test] = fold
    return fold_of_row


def cv_relative_error(design: np.ndarray, y: np.ndarray, folds: np.ndarray,
                      weights: np.ndarray | None = None) -> float:
    """Sum over rows of ((m(x_j) - y_j)/y_j)^2, each row predicted by the OLS fit (eq. 2)
    of ``design`` on the other folds. Comparable with the training relative error.

    With ``weights`` (positive, one per row) the fits are weighted least squares and the
    sum is ``sum_j weights_j ((m(x_j) - y_j)/y_j)^2``: a row of weight ``k`` counts as
    ``k`` copies of it (which the folds keep together, being one configuration).
    """
    if weights is None:
        total = 0.0
        for fold in range(int(folds.max()) + 1):
            test = folds == fold
            coef = np.linalg.lstsq(design[~test], y[~test], rcond=None)[0]
            rel = (design[test] @ coef - y[test]) / y[test]
            total += float(rel @ rel)
        return total
    root = np.sqrt(weights)
    weighted, target = design * root[:, None], y * root
    total = 0.0
    for fold in range(int(folds.max()) + 1):
        test = folds == fold
        coef = np.linalg.lstsq(weighted[~test], target[~test], rcond=None)[0]
        rel = (design[test] @ coef - y[test]) / y[test]
        total += float(rel @ (weights[test] * rel))
    return total
