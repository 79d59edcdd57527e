"""``iotune.ui.terminal``: rich on a terminal, plain text otherwise, progress lines."""

from __future__ import annotations

import io

import pytest

from iotune.ui.terminal import is_rich, make_progress, print_pairs, print_table

ROWS = [{"cores": 512, "speedup": 11.2834, "settings": "c=64 s=4MiB a=16"},
        {"cores": 2048, "speedup": None, "settings": "default"}]


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def colour_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")


def test_plain_table_when_not_a_terminal():
    out = io.StringIO()
    print_table(ROWS, title="Speedups", stream=out)
    assert out.getvalue().splitlines() == [
        "Speedups",
        "cores  speedup  settings",
        "-----  -------  ----------------",
        "512    11.28    c=64 s=4MiB a=16",
        "2048            default",
    ]


def test_rich_table_on_a_terminal_and_plain_with_no_color(monkeypatch):
    out = Tty()
    print_table(ROWS, ["cores", "settings"], title="Speedups", stream=out)
    text = out.getvalue()
    assert "Speedups" in text and "c=64 s=4MiB a=16" in text and "┃" in text
    assert "speedup" not in text
    plain = Tty()
    print_table(ROWS, title="Speedups", no_color=True, stream=plain)
    assert "┃" not in plain.getvalue() and "-----" in plain.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    assert not is_rich(Tty())


def test_pairs():
    out = io.StringIO()
    print_pairs({"backend": "sim (simulated)", "runs": 12}, stream=out)
    assert out.getvalue() == "backend  sim (simulated)\nruns     12\n"


def test_plain_progress_lines():
    out = io.StringIO()
    with make_progress(3, "train", stream=out) as bar:
        bar.advance("128 ranks: 812.5 MiB/s")
        bar.log("a note")
        bar.advance()
    assert out.getvalue().splitlines() == ["train [1/3] 128 ranks: 812.5 MiB/s", "a note",
                                           "train [2/3]"]
    assert bar.completed == 2


def test_disabled_progress_is_silent():
    out = Tty()
    with make_progress(2, "tune", enabled=False, stream=out) as bar:
        bar.advance("x")
        bar.log("y")
    assert out.getvalue() == "" and bar.completed == 1


def test_rich_progress_on_a_terminal():
    out = Tty()
    with make_progress(2, "tune", stream=out) as bar:
        bar.advance("run 1: 900 MiB/s")
        bar.advance("run 2: 950 MiB/s")
    text = out.getvalue()
    assert "tune" in text and "2/2" in text
