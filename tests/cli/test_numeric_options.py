"""Every numeric flag of every command is bounded and real, and is refused before the
command starts.

The audit walks the command tree, so a flag added later with a bare ``type=int`` or
``type=float`` (or click's own ranges, which let ``nan`` through and need no upper bound)
fails here. Each float flag is then given ``nan``, ``inf`` and ``-inf``, and each integer
flag the integer just past its bound, in an empty directory: one error line naming the flag
and the rule, a non-zero exit, and the directory still empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click
import pytest

from iotune.cli.main import all_commands
from iotune.cli.numbers import BoundedInt, FiniteFloat
from tests.cli_result import error_line, invoke


def _commands(commands: Mapping[str, click.Command], path: tuple[str, ...] = ()
              ) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(commands.items()):
        if isinstance(command, click.Group):
            found += _commands(command.commands, (*path, name))
        else:
            found.append(((*path, name), command))
    return found


def _numeric_options() -> list[tuple[tuple[str, ...], click.Option]]:
    return [(path, param) for path, command in _commands(all_commands()) for param in command.params
            if isinstance(param, click.Option) and not param.is_flag
            and isinstance(param.type, click.types._NumberParamTypeBase)]


NUMERIC = _numeric_options()
FLOATS = [(path, option) for path, option in NUMERIC if isinstance(option.type, FiniteFloat)]
INTS = [(path, option) for path, option in NUMERIC if isinstance(option.type, BoundedInt)]


def _id(path: tuple[str, ...], option: click.Option) -> str:
    return " ".join((*path, option.opts[-1]))


def test_every_numeric_option_has_a_shared_bounded_type() -> None:
    assert len(NUMERIC) >= 40
    loose = [_id(path, option) for path, option in NUMERIC
             if not isinstance(option.type, BoundedInt | FiniteFloat)
             or option.type.max is None]
    assert loose == []
    assert len(FLOATS) >= 15 and len(INTS) >= 25


#: Each float flag with each value that is not a finite number. A flag whose value is
#: optional (``status --watch``) takes no value starting with ``-``: click reads ``-inf``
#: as an unknown option ``-i``, itself refused in one line before the command starts.
UNREAL = [(path, option, value) for path, option in FLOATS for value in ("nan", "inf", "-inf")
          if not (value.startswith("-") and option._flag_needs_value)]


@pytest.mark.parametrize(("path", "option", "value"), UNREAL,
                         ids=[f"{_id(p, o)}={v}" for p, o, v in UNREAL])
def test_every_float_option_refuses_what_is_not_a_finite_number(
        path: tuple[str, ...], option: click.Option, value: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke(*path, f"{option.opts[-1]}={value}")
    assert result.exit_code == 2, result.output
    line = error_line(result)
    assert f"'{option.opts[-1]}'" in line and "is not a finite number" in line, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("path", "option"), INTS, ids=[_id(*i) for i in INTS])
def test_every_integer_option_refuses_the_integer_past_its_bound(
        path: tuple[str, ...], option: click.Option, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(option.type, BoundedInt) and option.type.max is not None
    monkeypatch.chdir(tmp_path)
    result = invoke(*path, option.opts[-1], str(option.type.max + 1))
    assert result.exit_code == 2, result.output
    line = error_line(result)
    assert f"'{option.opts[-1]}'" in line and f"{option.type.max + 1}" in line, line
    assert "above the limit" in line or "not in the range" in line, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("path", "option"), FLOATS, ids=[_id(*f) for f in FLOATS])
def test_every_float_option_refuses_the_number_past_its_bound(
        path: tuple[str, ...], option: click.Option, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(option.type, FiniteFloat) and option.type.max is not None
    monkeypatch.chdir(tmp_path)
    result = invoke(*path, option.opts[-1], repr(float(option.type.max) * 2 + 1))
    assert result.exit_code == 2, result.output
    line = error_line(result)
    assert f"'{option.opts[-1]}'" in line, line
    assert "above the limit" in line or "not in the range" in line, line
    assert list(tmp_path.iterdir()) == []


def test_a_flag_with_an_optional_number_keeps_its_default_value() -> None:
    status = all_commands()["status"]
    assert status.make_context("status", ["--watch"]).params["watch"] == 10.0
    assert status.make_context("status", ["--watch", "30"]).params["watch"] == 30.0
    assert status.make_context("status", []).params["watch"] is None
