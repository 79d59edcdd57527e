"""docs/strategies.md documents every strategy's options with the defaults the code has.

A user sets ``tune.options`` from that page; a default that drifted there (the code changed,
the table did not) would have them reason from a setting the tune does not use.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from iotune.strategies import known_strategies
from iotune.strategies.base import strategy_class

DOCS = Path(__file__).resolve().parents[2] / "docs" / "strategies.md"
HEADING = re.compile(r"^### `([a-z_]+)`")
ROW = re.compile(r"^\| `([a-z_]+)` \| ([^|]+) \|")


@functools.cache
def documented_options() -> dict[str, dict[str, str]]:
    """Per strategy section (``### `name` ...``), its option table: name -> default text."""
    tables: dict[str, dict[str, str]] = {}
    section = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            match = HEADING.match(line)
            section = match.group(1) if match else None
            if section is not None:
                tables.setdefault(section, {})
        elif section is not None and (row := ROW.match(line)):
            tables[section][row.group(1)] = row.group(2).strip()
    return tables


@pytest.mark.parametrize("name", known_strategies())
def test_every_option_is_documented_with_its_default(name: str) -> None:
    tables = documented_options()
    assert name in tables, f"docs/strategies.md has no section ### `{name}`"
    options = strategy_class(name).options
    # The portfolio's proposer table shares its section: its second column is prose, where
    # an option row's is one word.
    documented = {k: v for k, v in tables[name].items() if " " not in v}
    assert {o.name: str(o.default) for o in options} == documented
