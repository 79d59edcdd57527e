from __future__ import annotations

import numpy as np
import pytest

from iotune.model.terms import Term, candidate_matrix, evaluate_term, exponent_grid


@pytest.mark.parametrize("n", [1, 2, 4])
def test_grid_has_every_exponent_vector_once_with_the_intercept_in_the_middle(n: int) -> None:
    grid = exponent_grid(n)
    assert grid.shape == (3**n, n)
    assert len({tuple(row) for row in grid}) == 3**n
    assert set(np.unique(grid)) == {-1, 0, 1}
    assert not grid[(3**n - 1) // 2].any()


def test_candidate_columns_are_the_terms_they_stand_for() -> None:
    rng = np.random.default_rng(3)
    values = rng.uniform(0.5, 4.0, size=(30, 3))
    mask = (rng.random(30) < 0.5).astype(float)
    matrix = candidate_matrix(values, [mask])
    grid = exponent_grid(3)
    assert matrix.shape == (30, 2 * 27)
    for c, row in enumerate(grid):
        exponents = tuple(int(e) for e in row)
        expected = np.prod(values ** np.array(exponents, dtype=float), axis=1)
        np.testing.assert_allclose(matrix[:, c], expected, rtol=1e-13)
        np.testing.assert_allclose(matrix[:, 27 + c], expected * mask, rtol=1e-13)
        np.testing.assert_allclose(evaluate_term(Term(exponents), values, None), expected,
                                   rtol=1e-13)


@pytest.mark.parametrize(("exponents", "name"), [
    ((0, 0, 0, 0), "1"),
    ((0, 0, 0, 1), "f"),
    ((0, 0, -1, 1), "f/a"),
    ((1, 1, -1, 0), "cs/a"),
    ((1, 0, -1, 1), "cf/a"),
    ((-1, 0, -1, 0), "1/(ca)"),
    ((0, -1, 0, 0), "1/s"),
])
def test_names_follow_the_paper_notation(exponents: tuple[int, ...], name: str) -> None:
    assert Term(exponents).name(["c", "s", "a", "f"]) == name


def test_long_names_are_joined_with_a_star_and_indicators_print_first() -> None:
    params = ["stripe_count", "stripe_size", "aggregators"]
    assert Term((1, 1, -1)).name(params) == "stripe_count*stripe_size/aggregators"
    assert Term((0, -1, -1)).name(params) == "1/(stripe_size*aggregators)"
    assert Term((0, 0, 0), ("cb", "disable")).name(params) == "[cb=disable]"
    term = Term((0, -1, 1), ("cb", "disable"))
    assert term.name(params) == "[cb=disable] aggregators/stripe_size"
