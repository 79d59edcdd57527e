"""``iotune report`` on a simulated campaign: files, image sizes, HTML, tables, provenance."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml
from PIL import Image
from report_helpers import run_ok

from iotune import __version__
from iotune.model.trust import NO_PREDICTION, TRUSTED_CV_ERROR
from iotune.report.figures import DPI, WIDTH_IN
from iotune.store import Store
from iotune.strategies.racing import MIN_RANK_RUNS

FIGURES = ["topk-vpic-sim-512", "search-vpic-sim", "model-fit-vpic-sim", "model-steps-vpic-sim",
           "effects-vpic-sim"]
TABLES = ["provenance-vpic-sim", "speedup-vpic-sim", "topk-vpic-sim-512",
          "search-summary-vpic-sim", "search-vpic-sim", "model-terms-vpic-sim",
          "model-steps-vpic-sim", "effects-vpic-sim"]


@pytest.fixture(scope="module")
def report(sim_campaign: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("sim-report")
    result = run_ok(["report", "-c", str(sim_campaign / "iotune.yaml"), "--tuned",
                     str(sim_campaign / "tuned.yaml"), "-o", str(out), "--no-color"])
    manifest = json.loads((out / "manifest.json").read_text())
    return out, result, manifest


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_figure_is_an_image_of_the_recorded_size(report):
    out, _, manifest = report
    assert [Path(f["file"]).stem for f in manifest["figures"]] == FIGURES
    for figure in manifest["figures"]:
        with Image.open(out / figure["file"]) as image:
            assert image.format == "PNG"
            assert image.size == (figure["width_px"], figure["height_px"])
            assert image.size[0] == round(WIDTH_IN * DPI)
            assert image.size[1] >= 2.5 * DPI


def test_titles_carry_the_word_simulated(report):
    _, _, manifest = report
    figures, tables = manifest["figures"], manifest["tables"]
    assert figures and all(f["title"].startswith("Simulated: ") for f in figures)
    assert tables and all(t["title"].startswith(("Simulated: ", "Provenance (simulated)"))
                          for t in tables)


def test_html_is_self_contained_and_names_every_figure_and_table(report):
    out, _, manifest = report
    html = (out / "index.html").read_text()
    for figure in manifest["figures"]:
        assert figure["file"] in html and figure["title"] in html
    assert [t["file"] for t in manifest["tables"]] == [f"{t}.csv" for t in TABLES]
    for table in manifest["tables"]:
        assert (out / table["file"]).is_file()
        assert f'href="{table["file"]}"' in html
    assert html.count('src="data:image/png;base64,') == len(manifest["figures"])
    assert not re.search(r'(src|href)="(https?:|//)', html)
    assert "<script" not in html
    for word in ("SIMULATED", "hopper", "vpic", f"iotune {__version__}", "report date"):
        assert word in html


def test_speedup_table_says_what_was_recommended_and_the_best_found(report, sim_campaign):
    out, result, _ = report
    tuned = yaml.safe_load((sim_campaign / "tuned.yaml").read_text())
    (row,) = read_csv(out / "speedup-vpic-sim.csv")
    assert row["cores"] == "512" and row["kernel"] == "vpic" and row["unit"] == "MiB/s"
    assert float(row["file_size_gib"]) == pytest.approx(512 * 8 * 2**20 * 32 / 2**30)
    # the tuned file of this scale says what was recommended, and why
    assert row["recommendation"] == tuned["recommendation"] and row["why"] == tuned["reason"]
    assert row["decided_by"] == "the tuned file"
    # the default's row holds every run of it both tunes made (one record a run), and each
    # tune ran it as often as the rank test needs to compare it with the leader
    runs = [r for r in Store(sim_campaign / "store.jsonl").records()
            if r["campaign"] == "tune" and r["cores"] == 512 and not r["settings"]
            and r["status"] == "ok"]
    per_tune = Counter(r["tune_id"] for r in runs)
    assert len(per_tune) == 2 and min(per_tune.values()) >= MIN_RANK_RUNS
    assert int(row["default_reps"]) == len(runs)
    # every figure lies inside its own interval: one estimate per figure
    for side in ("best_found", "default"):
        assert float(row[f"{side}_low"]) <= float(row[side]) <= float(row[f"{side}_high"])
    assert float(row["best_found"]) >= float(row["default"])  # the best found is the best
    if row["speedup"]:
        low, mid, high = (float(row[k]) for k in ("speedup_low", "speedup", "speedup_high"))
        assert low <= mid <= high and low < high
    assert "recommended  best found (MiB/s)" in result.stdout


def test_top_configurations_have_predictions_and_the_default(report):
    out, _, _ = report
    rows = read_csv(out / "topk-vpic-sim-512.csv")
    assert rows[-1]["rank"] == "default" and rows[-1]["predicted_s"] == ""
    searched = rows[:-1]
    assert 1 <= len(searched) <= 20
    assert [r["rank"] for r in searched] == [str(i) for i in range(1, len(searched) + 1)]
    times = [float(r["measured_s"]) for r in searched]
    assert times == sorted(times)  # by the race's estimate, each inside its interval
    for row, time in zip(searched, times, strict=True):
        low, high = (float(v) for v in row["interval_s"].split("-"))
        assert low <= time <= high
    # a prediction is a positive time, or the mark that the model cannot make one
    assert all(r["predicted_s"] == NO_PREDICTION or float(r["predicted_s"]) > 0
               for r in searched)
    assert {"stripe_count", "stripe_size", "cb_nodes"} <= set(rows[0])


def test_search_progress_per_strategy(report):
    out, _, _ = report
    summary = read_csv(out / "search-summary-vpic-sim.csv")
    assert [(r["cores"], r["search"]) for r in summary] == [("512", "portfolio"), ("512", "random")]
    runs = read_csv(out / "search-vpic-sim.csv")
    for search in ("portfolio", "random"):
        best = [float(r["best_so_far_mib_s"]) for r in runs
                if r["search"] == search and r["best_so_far_mib_s"]]
        assert best and best == sorted(best)  # best so far never falls
        assert best[-1] == pytest.approx(float(next(
            r["best_mib_s"] for r in summary if r["search"] == search)), rel=1e-3)


def test_model_tables(report):
    out, result, _ = report
    terms = read_csv(out / "model-terms-vpic-sim.csv")
    steps = read_csv(out / "model-steps-vpic-sim.csv")
    assert len(terms) >= 1 and len(steps) == len(terms)
    errors = [float(s["rms_relative_error"]) for s in steps if s["added_by"] == "selection"]
    assert errors == sorted(errors, reverse=True)  # greedy selection only lowers the error
    effects = read_csv(out / "effects-vpic-sim.csv")
    assert {e["setting"] for e in effects} <= {"stripe_count", "stripe_size", "cb_nodes"}
    assert sum(e["tuned"] == "True" for e in effects) == len({e["setting"] for e in effects})
    assert "m = " in result.output


def test_the_report_loads_no_mpi_or_h5py(sim_campaign, tmp_path):
    # In a fresh interpreter: other tests of this session import h5py to check files.
    code = (
        "import sys\n"
        "from iotune.cli.main import cli\n"
        f"cli(['report', '-c', {str(sim_campaign / 'iotune.yaml')!r}, '-o', "
        f"{str(tmp_path / 'r')!r}, '--no-color'], standalone_mode=False)\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mpi4py', 'h5py')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout


def test_terminal_output_is_plain_text(report):
    _, result, _ = report
    out = result.stdout
    assert "Simulated: what was recommended at each scale, and the best found" in out
    assert "Simulated: searches compared" in out
    assert "backend         sim (simulated)" in out
    assert not set("┃━╭│") & set(out)
    assert "wrote" in result.stderr and "index.html" in result.stderr


def test_train_only_store_in_svg(sim_campaign, tmp_path):
    """Without tune records the report has the model only, and says what is missing."""
    store = tmp_path / "train.jsonl"
    lines = (sim_campaign / "store.jsonl").read_text().splitlines(keepends=True)
    store.write_text("".join(line for line in lines if '"campaign": "train"' in line))
    out = tmp_path / "report"
    result = run_ok(["report", "--store", str(store), "-o", str(out), "--format", "svg"])
    manifest = json.loads((out / "manifest.json").read_text())
    files = [f["file"] for f in manifest["figures"]]
    assert files == ["model-fit-vpic-sim.svg", "model-steps-vpic-sim.svg",
                     "effects-vpic-sim.svg"]
    for name in files:
        assert (out / name).read_text().lstrip().startswith("<?xml")
    html = (out / "index.html").read_text()
    assert html.count('src="data:image/svg+xml;base64,') == 3
    assert "No tune records" in html
    assert "No tune records" in result.stdout


def test_predictions_carry_the_models_cross_validated_error(report):
    out, _, _ = report
    html = (out / "index.html").read_text()
    label = re.search(r"model CV error (\d+\.\d\d)", html)
    assert label is not None  # beside the top configurations' predictions and the formula
    assert html.count(label.group(0)) >= 2
    if float(label.group(1)) > TRUSTED_CV_ERROR:
        assert "not to be trusted" in html


def test_untrusted_model_gets_one_warning_line(monkeypatch, sim_campaign, tmp_path):
    import iotune.report.modelfit as modelfit

    monkeypatch.setattr(modelfit.ModelView, "cv_error", property(lambda self: 8.74))
    from iotune.config import load_config
    from iotune.report.build import build_report

    config = load_config(sim_campaign / "iotune.yaml")
    report = build_report(sim_campaign / "store.jsonl", tmp_path / "out", config=config)
    lines = [m for part in report.parts for s in part.sections for m in s.missing
             if "not to be trusted" in m]
    assert lines and all("8.74" in m for m in lines)
