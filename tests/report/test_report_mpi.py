"""``iotune report`` on a small real store: VPIC-IO through mpiexec at 2 ranks."""

from __future__ import annotations

import json

import pytest
from PIL import Image
from report_helpers import run_ok

pytestmark = pytest.mark.mpi

def test_report_of_a_real_campaign(write_config, tiny_campaign, tmp_path):
    config = write_config(tiny_campaign)
    run_ok(["train", "-c", str(config)])
    # Budget 10: the search still measures all 4 configurations and the race still runs
    # (6 runs); the default budget of 30 added 20 more real race runs, which change none of
    # the figures, tables or lines checked here.
    run_ok(["tune", "-c", str(config), "--cores", "2", "--budget", "10", "-o",
            str(tmp_path / "tuned.yaml")])
    out = tmp_path / "report"
    result = run_ok(["report", "-c", str(config), "--tuned", str(tmp_path / "tuned.yaml"),
                     "-o", str(out)])
    manifest = json.loads((out / "manifest.json").read_text())
    names = [f["file"] for f in manifest["figures"]]
    assert names == ["topk-vpic-mpi-2.png", "search-vpic-mpi.png", "model-fit-vpic-mpi.png",
                     "model-steps-vpic-mpi.png", "effects-vpic-mpi.png"]
    for figure in manifest["figures"]:
        assert figure["title"].startswith("Measured: ")
        with Image.open(out / figure["file"]) as image:
            assert image.size == (figure["width_px"], figure["height_px"]) and image.size[0] == 1200
    html = (out / "index.html").read_text()
    assert all(f["file"] in html for f in manifest["figures"])
    assert manifest["tables"] and all(t["file"] in html for t in manifest["tables"])
    assert "MEASURED" in html and "testbox" in html and "SIMULATED" not in html
    assert "Measured: what was recommended at each scale, and the best found" in result.stdout
    speedup = (out / "speedup-vpic-mpi.csv").read_text().splitlines()
    assert len(speedup) == 2 and speedup[1].startswith("2,vpic,")
