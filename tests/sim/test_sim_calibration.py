"""The simulated Hopper reproduces the paper's Table 3 within 30% (noise off)."""

from __future__ import annotations

import pandas as pd
import pytest

from iotune.sim.space import paper_space
from iotune.sim.table3 import PAPER_TABLE3, format_table, main, table3

TOLERANCE = 0.30


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return table3("hopper")


def test_every_scale_of_table3_is_reproduced(table: pd.DataFrame) -> None:
    assert list(table["cores"]) == [row[0] for row in PAPER_TABLE3]


@pytest.mark.parametrize("kind", ["tuned", "default"])
def test_bandwidth_within_30_percent_of_the_paper(table: pd.DataFrame, kind: str) -> None:
    ratio = table[f"sim_{kind}_mib_s"] / table[f"paper_{kind}_mib_s"]
    off = table.loc[(ratio - 1).abs() > TOLERANCE, ["cores", f"sim_{kind}_mib_s",
                                                      f"paper_{kind}_mib_s"]]
    assert off.empty, f"{kind} bandwidth off by more than 30%:\n{off}"


def test_speedup_grows_with_scale(table: pd.DataFrame) -> None:
    speedups = list(table["sim_speedup"])
    assert speedups == sorted(speedups), speedups
    assert speedups[-1] > 40


def test_file_sizes_are_the_papers(table: pd.DataFrame) -> None:
    assert list(table["file_gib"]) == [row[1] for row in PAPER_TABLE3]


@pytest.mark.parametrize(("cores", "size"), [(128, 360), (512, 540), (1024, 630),
                                             (2048, 720), (8192, 900)])
def test_paper_space_sizes(cores: int, size: int) -> None:
    space = paper_space(cores)
    assert len(space) == size
    assert list(space.columns) == ["stripe_count", "stripe_size", "cb_nodes"]
    assert space["cb_nodes"].max() == -(-cores // 24)
    assert space["stripe_count"].max() == 156
    assert space["stripe_size"].min() == 2**20 and space["stripe_size"].max() == 128 * 2**20


def test_paper_space_drops_stripe_counts_above_the_ost_count() -> None:
    assert paper_space(512, ost_count=100)["stripe_count"].max() == 96


def test_table_says_simulated(table: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> None:
    text = format_table(table)
    assert "SIMULATED" in text and "hopper" in text
    assert main(["--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("backend,system")
    assert ",sim,hopper" in out.splitlines()[1]


def test_table_main_reports_unknown_system(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--system", "nosuch"]) == 2
    assert "system: unknown system 'nosuch'" in capsys.readouterr().err
