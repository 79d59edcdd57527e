from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from model_data import eq5_frame, grid_frame

from iotune.model import Model, fit_model

PAPER_2048 = {"c": (16, 32, 256), "s": (1, 4, 16, 64), "a": (16, 32, 48, 64, 80),
              "f": (256, 512, 1024, 2048)}


def signs(model: Model, param: str, level: dict[str, str] | None = None) -> set[int]:
    """Exponent signs of ``param`` over the terms active in ``level`` (all terms if None)."""
    j = model.params.index(param)
    return {int(np.sign(t.exponents[j])) for t in model.terms if t.exponents[j] != 0
            and (t.indicator is None or level is None or level.get(t.indicator[0])
                 == t.indicator[1])}


def test_paper_case_selection_is_monotone_in_s_and_completion_adds_cs_over_a() -> None:
    # Eq. 5 over the paper's 2048-core stripe and aggregator values: the seven selected
    # terms all have s^-1 (1/s and a/s), like the paper's six-term basis was monotone in s.
    df = eq5_frame(**PAPER_2048)
    off = fit_model(df, list("csaf"), "write_time", actionable=list("csa"),
                    monotone_completion=False)
    assert len(off.terms) == 7
    assert signs(off, "s") == {-1}
    notes = {n.parameter: n for n in off.completion}
    assert notes["s"].status == "monotone (completion off)" and notes["s"].term is None

    on = fit_model(df, list("csaf"), "write_time", actionable=list("csa"))
    assert on.terms[:7] == off.terms
    assert len(on.terms) == 8
    added = on.steps[-1]
    assert added.by_completion and not any(s.by_completion for s in on.steps[:7])
    assert added.term.exponents == (1, 1, -1, 0)  # cs/a, the term eq. 5 needs
    assert signs(on, "s") == {-1, 1}
    notes = {n.parameter: n for n in on.completion}
    assert notes["s"].status == "completed" and notes["s"].term == added.term
    assert {notes["c"].status, notes["a"].status} == {"not monotone"}
    assert on.training_error is not None and off.training_error is not None
    assert on.training_error < 1e-20 < off.training_error


def test_completion_picks_the_best_opposite_exponent_term_by_eq4() -> None:
    df = eq5_frame(**PAPER_2048)
    on = fit_model(df, list("csaf"), "write_time", actionable=["s"])
    off = fit_model(df, list("csaf"), "write_time", monotone_completion=False)
    y = df.write_time.to_numpy()
    best = None
    for c_exp in (-1, 0, 1):
        for a_exp in (-1, 0, 1):
            for f_exp in (-1, 0, 1):
                term = (c_exp, 1, a_exp, f_exp)
                design = np.column_stack([
                    np.prod(df[list("csaf")].to_numpy() ** np.array(t, dtype=float), axis=1)
                    for t in [*(t.exponents for t in off.terms), term]])
                coef = np.linalg.lstsq(design, y, rcond=None)[0]
                error = float(np.sum(((design @ coef - y) / y) ** 2))
                if best is None or error < best[0]:
                    best = (error, term)
    assert best is not None
    assert on.terms[-1].exponents == best[1]


def test_only_actionable_parameters_are_completed() -> None:
    df = eq5_frame(**PAPER_2048)
    model = fit_model(df, list("csaf"), "write_time", actionable=["c", "a"])
    assert len(model.terms) == 7
    assert [n.parameter for n in model.completion] == ["c", "a"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_after_completion_no_actionable_parameter_is_monotone_only(seed: int) -> None:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(1, 50, size=(80, 3)), columns=["x", "z", "v"])
    df["t"] = 1 + df.x / df.z + 0.1 * df.v * rng.lognormal(0, 0.1, 80)
    model = fit_model(df, ["x", "z", "v"], "t", max_terms=3)
    assert any(step.by_completion for step in model.steps)
    for note in model.completion:
        allowed = {0: {"absent"}, 1: {"monotone, no candidate left"},
                   2: {"not monotone", "completed"}}[len(signs(model, note.parameter))]
        assert note.status in allowed, note


def test_completion_is_checked_per_level_of_a_categorical_column() -> None:
    # Only the 'disable' level depends on a (through a/s): the model is monotone in a there.
    df = grid_frame("sa", [[1, 2, 4, 8, 16, 32, 64], [4, 8, 16, 32, 64]])
    df = pd.concat([df.assign(cb=level) for level in ("enable", "disable")], ignore_index=True)
    base = 5 + 40 / df.s + 0.3 * df.s
    df["t"] = np.where(df.cb == "enable", base, 0.5 * base + 2 * df.a / df.s)
    off = fit_model(df, ["s", "a"], "t", categorical=["cb"], max_terms=6,
                    monotone_completion=False)
    on = fit_model(df, ["s", "a"], "t", categorical=["cb"], max_terms=6)
    assert signs(off, "a", {"cb": "disable"}) == {1}
    assert len(on.terms) > len(off.terms)
    for level in ("enable", "disable"):
        assert len(signs(on, "a", {"cb": level})) in (0, 2)
    statuses = {(n.parameter, n.where["cb"]): n.status for n in on.completion}
    assert statuses[("a", "disable")] == "completed"


def test_an_exact_fit_is_not_completed() -> None:
    # Eq. 5 is exact after seven terms and monotone (increasing) in f: the data say so,
    # and a term with 1/f could only get a coefficient of rounding noise.
    model = fit_model(eq5_frame(), list("csaf"), "write_time")
    assert len(model.terms) == 7 and not any(s.by_completion for s in model.steps)
    notes = {n.parameter: n.status for n in model.completion}
    assert notes == {"c": "not monotone", "s": "not monotone", "a": "not monotone",
                     "f": "monotone (fit already exact)"}
