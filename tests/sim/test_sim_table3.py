"""Table 3 beside the simulated Hopper: labelled splits, noisy seeded ranges, noise 0 exact."""

from __future__ import annotations

import pandas as pd
import pytest

from iotune.errors import ConfigError
from iotune.sim import load_system
from iotune.sim.paper import model_point
from iotune.sim.space import paper_space
from iotune.sim.table3 import (
    PAPER_TABLE3,
    REPETITIONS,
    format_method,
    format_table,
    main,
    table3,
)
from iotune.tune.paper_table3 import main as main_with_method
from iotune.tune.paper_table3 import with_paper_method

KINDS = ("tuned", "default", "speedup")


@pytest.fixture(scope="module")
def noisy() -> pd.DataFrame:
    return table3("hopper")


@pytest.fixture(scope="module")
def exact() -> pd.DataFrame:
    return table3("hopper", noise=0)


def test_every_scale_of_table3_with_the_papers_file_sizes(noisy: pd.DataFrame) -> None:
    assert list(noisy["cores"]) == [row[0] for row in PAPER_TABLE3]
    assert list(noisy["file_gib"]) == [row[1] for row in PAPER_TABLE3]


def test_rows_say_whether_they_were_fitted(noisy: pd.DataFrame) -> None:
    assert list(noisy["split"]) == ["in-sample", "in-sample", "out-of-sample", "in-sample",
                                    "out-of-sample"]
    other = table3("perlmutter", noise=0)
    assert set(other["split"]) == {"not fitted"}


def test_noise_is_on_by_default_and_ranges_are_not_points(noisy: pd.DataFrame) -> None:
    assert noisy.attrs["noise"] == 1.0 and noisy.attrs["repetitions"] == REPETITIONS
    for kind in KINDS:
        assert (noisy[f"sim_{kind}_min"] < noisy[f"sim_{kind}_max"]).all(), kind


def test_model_columns_are_the_noise_free_model(noisy: pd.DataFrame,
                                                exact: pd.DataFrame) -> None:
    hopper = load_system("hopper")
    for row in noisy.itertuples(index=False):
        point = model_point(hopper, row.cores)
        assert row.sim_tuned_mib_s == point.tuned_mib_s
        assert row.sim_default_mib_s == point.default_mib_s
    cols = ["sim_tuned_mib_s", "sim_default_mib_s", "sim_speedup"]
    pd.testing.assert_frame_equal(noisy[cols], exact[cols])


def test_noise_zero_is_deterministic(exact: pd.DataFrame) -> None:
    for kind in KINDS:
        model = exact["sim_speedup" if kind == "speedup" else f"sim_{kind}_mib_s"]
        assert (exact[f"sim_{kind}_min"] == model).all()
        assert (exact[f"sim_{kind}_max"] == model).all()
    pd.testing.assert_frame_equal(exact, table3("hopper", noise=0, seed=99))


def test_noisy_ranges_are_seeded(noisy: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(noisy, table3("hopper", seed=0))
    other = table3("hopper", seed=1)
    assert not other["sim_tuned_min"].equals(noisy["sim_tuned_min"])


def test_table_text_labels_simulation_and_split(noisy: pd.DataFrame,
                                                exact: pd.DataFrame) -> None:
    text = format_table(noisy)
    assert "SIMULATED" in text and "hopper" in text and "noise 1" in text
    assert "fitted, not reproduced" in text and "out-of-sample" in text
    first = next(line for line in text.splitlines() if line.lstrip().startswith("128 "))
    low, high = noisy.loc[0, "sim_tuned_min"], noisy.loc[0, "sim_tuned_max"]
    assert f"{low:.0f}-{high:.0f}" in first
    assert "deterministic" in format_table(exact) and "range" not in format_table(exact)


def test_main_csv_is_labelled(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--format", "csv", "--noise", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("backend,system,noise")
    assert lines[1].startswith("128,in-sample,") and lines[1].endswith(",sim,hopper,0.0")


def test_main_reports_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main_with_method(["--system", "nosuch"]) == 2
    assert "system: unknown system 'nosuch'" in capsys.readouterr().err
    assert main(["--noise", "-1"]) == 2
    assert "error: noise: -1.0 is negative" in capsys.readouterr().err
    assert main(["--repetitions", "0"]) == 2
    assert "error: repetitions: 0 is not a positive integer" in capsys.readouterr().err


def test_bad_repetitions() -> None:
    with pytest.raises(ConfigError, match=r"^repetitions: True is not a positive integer"):
        table3("hopper", repetitions=True)


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


def test_the_papers_method_runs_end_to_end_beside_the_optimum() -> None:
    """Table 2's 528 training runs, then top 20, refit, top 10 and the race at each scale:
    what it recommends is scored by the noise-free model against the exhaustive optimum."""
    rows = with_paper_method(table3("hopper", repetitions=2), "hopper")
    assert rows.attrs["method_training_runs"] == 528
    assert list(rows["cores"]) == [row[0] for row in PAPER_TABLE3]
    assert (rows["method_runs"] == 1 + 30 + 7).all()  # baseline, the paper's 30, the race
    assert (rows["method_of_optimum"] <= 1).all() and (rows["method_rank"] >= 1).all()
    optimum = rows["method_rank"] == 1
    assert (rows.loc[optimum, "method_of_optimum"] == pytest.approx(1.0)).all()
    # the method finds a configuration far better than the default, short of the optimum
    assert (rows["method_of_optimum"] > 0.8).all()
    assert (rows["method_speedup"] > 3).all()
    assert (rows["method_speedup"] <= rows["sim_speedup"] + 1e-9).all()
    hopper = load_system("hopper")
    for row in rows.itertuples(index=False):
        point = model_point(hopper, row.cores)
        assert row.method_mib_s == pytest.approx(row.method_of_optimum * point.tuned_mib_s)
        assert row.method_speedup == pytest.approx(row.method_mib_s / point.default_mib_s)
    text = format_method(rows)
    assert "end to end on the SIMULATED system (trained on 528 runs" in text
    line = next(t for t in text.splitlines() if t.lstrip().startswith("8192 "))
    assert f"{rows.iloc[-1]['method_mib_s']:.0f}" in line
