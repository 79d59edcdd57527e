"""The one rule of a number: real, of its kind, in its range, below its limit."""

from __future__ import annotations

import math
import re

import pytest

from iotune.errors import ConfigError
from iotune.settings.bounds import MAX_INTEGER, MAX_SECONDS
from iotune.settings.numbers import check_number, number_problem, number_rule
from iotune.settings.units import parse_duration
from iotune.strategies import make_strategy


@pytest.mark.parametrize(("bounds", "rule"), [
    ({"minimum": 1, "whole": True}, "a positive integer"),
    ({"minimum": 0, "min_open": True}, "a positive number"),
    ({"minimum": 2, "whole": True}, "an integer >= 2"),
    ({"minimum": 0, "maximum": 1, "max_open": True}, "a number in [0, 1)"),
    ({"minimum": 0, "maximum": 1, "min_open": True}, "a number in (0, 1]"),
    ({"maximum": 10}, "a number <= 10"),
    ({}, "a number"),
])
def test_the_rule_in_words(bounds: dict, rule: str) -> None:
    assert number_rule(**bounds) == rule


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_the_infinities_are_refused_whatever_the_range(value: float) -> None:
    assert number_problem(value) == (f"{value!r} is not a finite number (nan, inf and -inf "
                                     "are refused)")
    assert number_problem(value, 0, whole=True) is not None


@pytest.mark.parametrize(("value", "bounds", "problem"), [
    (True, {"minimum": 1, "whole": True}, "True is not a positive integer"),
    ("3", {}, "'3' is not a number"),
    (2.0, {"minimum": 1, "whole": True}, "2.0 is not a positive integer"),
    (0, {"minimum": 0, "min_open": True}, "0 is not a positive number"),
    (1.0, {"minimum": 0, "maximum": 1, "max_open": True}, "1 is not a number in [0, 1)"),
    (1e20, {"minimum": 0, "limit": MAX_SECONDS, "unit": "s"},
     "1e+20 is above the limit of 31536000 s (docs/campaigns.md, Limits)"),
    (MAX_INTEGER + 1, {"minimum": 0, "whole": True, "limit": MAX_INTEGER},
     "9007199254740993 is above the limit of 9007199254740992 (docs/campaigns.md, Limits)"),
])
def test_each_broken_rule_is_named(value: object, bounds: dict, problem: str) -> None:
    assert number_problem(value, **bounds) == problem


def test_a_number_within_its_rule_passes_and_is_a_float() -> None:
    assert number_problem(31536000, 0, min_open=True, limit=MAX_SECONDS) is None
    assert check_number(3, "k", 0) == 3.0 and isinstance(check_number(3, "k", 0), float)
    with pytest.raises(ConfigError, match=r"^backend\.noise: inf is not a finite number"):
        check_number(math.inf, "backend.noise", 0, limit=10)


@pytest.mark.parametrize(("value", "message"), [
    (math.nan, "nan is not a finite number"),
    (-math.inf, "-inf is not a finite number"),
    (0, "0 is not a positive duration"),
    (1e20, "1e+20 is above the limit of 31536000 s"),
    ("366d", "'366d' is above the limit of 31536000 s"),
    ("9" * 400, "is above the limit of 31536000 s"),
])
def test_a_duration_is_finite_positive_and_at_most_a_year(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_duration(value)
    assert parse_duration("365d") == MAX_SECONDS


def test_an_integer_strategy_option_without_a_maximum_stops_at_2_to_the_53() -> None:
    make_strategy("random", seed=MAX_INTEGER)
    with pytest.raises(ConfigError, match=r"^--option seed: 9007199254740993 is above the "
                                          r"limit of 9007199254740992"):
        make_strategy("random", seed=MAX_INTEGER + 1)
    with pytest.raises(ConfigError, match=r"^--option members: 1001 is not an integer in "
                                          r"\[1, 1000\]"):
        make_strategy("portfolio", members=1001)
