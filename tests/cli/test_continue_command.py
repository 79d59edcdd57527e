"""The "to continue" command of an undecided tune goes through the one printer: every
value one safe shell word, a value that cannot be one line refused in one line."""

from __future__ import annotations

import shlex

import pytest

from iotune.cli.tune_commands import continue_command, tune_command
from iotune.errors import ConfigError


def _context(args: list[str]):
    return tune_command.make_context("tune", args)


def test_a_path_with_a_space_or_a_dollar_is_one_word_and_budget_and_fresh_are_replaced():
    ctx = _context(["--kernel", "ior", "--cores", "4", "-o", "my dir/$HOME t.yaml",
                    "--budget", "12", "--fresh"])
    line = continue_command(ctx, 31)
    words = shlex.split(line)
    assert words[:2] == ["iotune", "tune"]
    assert "my dir/$HOME t.yaml" in words  # one literal word, not expanded
    assert "--fresh" not in words
    assert words[-2:] == ["--budget", "31"] and words.count("--budget") == 1


def test_a_value_that_is_not_one_line_is_refused_in_one_line():
    ctx = _context(["--kernel", "ior", "--cores", "4", "-o", "a\nb.yaml"])
    with pytest.raises(ConfigError) as found:
        continue_command(ctx, 20)
    assert "\n" not in str(found.value)
