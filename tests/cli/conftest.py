"""Fixtures of the CLI tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def bare(tmp_path, monkeypatch):
    """An empty working directory with no ./iotune.yaml, $IOTUNE_CONFIG or user config."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("IOTUNE_CONFIG", raising=False)
    return work
