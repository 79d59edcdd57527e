"""The seed papers' figures in ``iotune report``, from small simulated probes, a tiny DXT
trace, pydarshan's sample logs and a proxy file; each figure found by its caption."""

from __future__ import annotations

import csv
import json
import re
import statistics
import tomllib
from pathlib import Path

import pandas as pd
import pytest
import yaml
from report_helpers import invoke, run_ok

from iotune.darshan.characterize import CHARACTERIZATION_SCHEMA_VERSION
from iotune.darshan.logfile import DXT_COLUMNS
from iotune.darshan.trace import write_text_trace
from iotune.store import Store
from iotune.variability.classification import ClassifyOptions, classify_states
from iotune.variability.samples import probe_samples, store_records

MiB = 2**20
REPO = Path(__file__).resolve().parents[2]
FOLDS = 3


def sample_log(name: str) -> Path:
    """A log shipped with pydarshan (found through its package, never a fixed path)."""
    from darshan.examples import example_logs

    path = Path(example_logs.__file__).parent / name
    assert path.is_file(), f"pydarshan no longer ships {name}"
    return path


def caption(html: str, title: str, label: str) -> re.Match[str]:
    """The figure whose caption starts with ``title`` and carries the label ``label``."""
    found = re.search(rf"<b>Figure \d+: {re.escape(title)}</b> <span class=\"label "
                      rf"[a-z]+\">{re.escape(label)}</span> \(<code>([^<]+)</code>\)", html)
    assert found, f"no figure captioned {title!r} labelled {label!r}"
    return found


@pytest.fixture(scope="module")
def probe_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A report of a store of simulated probes only (80 rounds of 2 targets)."""
    root = tmp_path_factory.mktemp("probes")
    store = root / "probes.jsonl"
    run_ok(["probe", "--simulate", "hopper", "--rounds", "80", "--targets", "2", "--seed", "1",
            "--store", str(store)])
    result = run_ok(["report", "--store", str(store), "-o", str(root / "out"), "--folds",
                     str(FOLDS)])
    return root / "out", store, result.stderr


def test_a_store_of_probes_only_gives_the_state_figures(probe_report):
    out, _, stderr = probe_report
    html = (out / "index.html").read_text()
    titles = {
        "Simulated: probe latency histogram with the two fitted log-normal components":
            "simulated",
        "Simulated: state prediction accuracy per classifier": "simulated",
        "Simulated: ROC curves of the state classifiers": "simulated",
        "Simulated: aggregate throughput with and without prediction-guided placement":
            "simulated",
    }
    for title, label in titles.items():
        file = caption(html, title, label).group(1)
        assert (out / file).stat().st_size > 10_000
    assert "These probe latencies are SIMULATED" in html
    assert "MEASURED" not in html
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kernel"] is None and manifest["datasets"] == []
    assert {f["provenance"] for f in manifest["figures"]} == {"simulated"}
    assert "classifier OST0000 svm" in stderr  # a progress line per classifier and target


def test_fold_accuracies_are_those_classify_reports(probe_report):
    """The boxplots' folds are the k-fold of 'iotune classify': same means per target."""
    out, store, _ = probe_report
    with (out / "states-folds-sim.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    samples = probe_samples(store_records(Store(store)))
    expected = classify_states(samples, ClassifyOptions(folds=FOLDS, validation="kfold"))
    for row in expected.rows():
        folds = [float(r["accuracy"]) for r in rows
                 if r["target"] == row["target"] and r["classifier"] == row["classifier"]]
        assert len(folds) == FOLDS
        assert statistics.fmean(folds) == pytest.approx(row["accuracy"])


def test_placement_replay_table_follows_equation_one(probe_report):
    out, _, _ = probe_report
    frame = pd.read_csv(out / "states-placement-sim.csv")
    assert len(frame) == 3 * 16  # the last 20% of 80 rounds, by each of three forecasts
    assert set(frame["forecast"]) == {"persistence", "svm", "hindsight"}
    mixed = frame[(frame["predicted_idle"] > 0) & (frame["predicted_busy"] > 0)]
    assert not mixed.empty and (mixed["alpha"] > 0.5).all()  # idle targets take more
    one_state = frame[(frame["predicted_idle"] == 0) | (frame["predicted_busy"] == 0)]
    assert list(one_state["gain"]) == pytest.approx([1.0] * len(one_state))
    assert list(frame["gain"]) == pytest.approx(list(frame["placed_mib_s"]
                                                     / frame["even_mib_s"]))


def _trace_and_characterization(root: Path) -> tuple[Path, Path]:
    """Two phases (write then read back 4 MiB per rank, 1 MiB requests, shared file, two
    ranks) and a characterisation measuring writes at 100 MiB/s and reads at 400 MiB/s."""
    rows = []
    for op, start in (("write", 1.0), ("read", 3.0)):
        for rank in range(2):
            for i in range(4):
                t = start + 0.1 * i
                rows.append(("DXT_POSIX", 7, rank, op, (rank * 4 + i) * MiB, MiB, t, t + 0.1))
    trace = root / "app.txt"
    write_text_trace(trace, pd.DataFrame(rows, columns=list(DXT_COLUMNS)), {7: "out.dat"})
    chars = root / "chars.yaml"
    chars.write_text(yaml.safe_dump({
        "schema_version": CHARACTERIZATION_SCHEMA_VERSION,
        "patterns": [
            {"key": f"{op} {MiB} shared", "op": op, "request_size": MiB, "shared": True,
             "bandwidth_bytes_s": bandwidth * MiB}
            for op, bandwidth in (("write", 100), ("read", 400))]}))
    return trace, chars


def _proxy(root: Path) -> Path:
    path = root / "proxy.yaml"
    path.write_text(yaml.safe_dump({
        "schema_version": 1, "kernel": "ior", "ranks": 2,
        "args": {"api": "posix", "transfer_size": MiB, "block_size": 4 * MiB,
                 "segments": 1}}))
    return path


@pytest.fixture(scope="module")
def log_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report without a store: a trace with its characterisation, three logs, a proxy."""
    root = tmp_path_factory.mktemp("logs")
    trace, chars = _trace_and_characterization(root)
    args = ["report", "-o", str(root / "out"), "--trace", str(trace), "--characterization",
            str(chars), "--proxy", str(_proxy(root))]
    for name in ("ior_hdf5_example.darshan", "example.darshan", "example.darshan"):
        args += ["--darshan", str(sample_log(name))]
    run_ok(args)
    return root / "out"


def test_phase_timeline_estimates_weight_over_bandwidth(log_report):
    out = log_report
    html = (out / "index.html").read_text()
    file = caption(html, "Measured: I/O phase timeline, estimated against measured time",
                   "measured").group(1)
    assert (out / file).is_file()
    phases = pd.read_csv(out / "phases-estimate.csv")
    assert list(phases["op"]) == ["write", "read"]
    assert list(phases["weight_bytes"]) == [8 * MiB, 8 * MiB]
    assert list(phases["estimated_s"]) == pytest.approx([8 / 100, 8 / 400])
    assert list(phases["measured_s"]) == pytest.approx([0.4, 0.4])


def test_similarity_heatmap_across_the_logs_and_the_proxy(log_report):
    out = log_report
    html = (out / "index.html").read_text()
    file = caption(html, "Measured and simulated: cosine similarity of the I/O signatures",
                   "measured + simulated").group(1)
    assert (out / file).is_file()
    matrix = pd.read_csv(out / "similarity-matrix.csv", index_col="signature")
    assert list(matrix.index) == ["ior_hdf5_example.darshan", "example.darshan",
                                  "example.darshan (2)", "proxy.yaml (simulated signature)"]
    assert (matrix.to_numpy() == matrix.to_numpy().T).all()
    assert matrix.loc["example.darshan", "example.darshan (2)"] == pytest.approx(1.0)
    assert 0 <= matrix.loc["example.darshan", "ior_hdf5_example.darshan"] < 0.99
    assert "the proxy&#39;s is SIMULATED" in html


@pytest.mark.parametrize(("args", "message"), [
    (["--trace", "t.txt"], "--trace: the phase timeline needs --characterization FILE"),
    (["--characterization", "c.yaml"], "--characterization: only used with --trace"),
    (["--darshan", "a.darshan"], "--darshan: 1 signature is too few for a similarity heatmap"),
    (["--proxy", "p.yaml"], "--proxy: the proxy joins the similarity heatmap of --darshan"),
])
def test_bad_paper_options_are_one_line(args, message):
    result = invoke(["report", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("iotune: error:")]
    assert len(lines) == 1 and message in lines[0]
    assert "Traceback" not in result.output


def test_a_file_that_is_not_a_darshan_log(tmp_path):
    (tmp_path / "a.darshan").write_text("not a log\n")
    result = invoke(["report", "--darshan", str(tmp_path / "a.darshan"), "--darshan",
                     str(sample_log("example.darshan"))])
    assert result.exit_code == 3, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("iotune: error:")]
    assert len(lines) == 1 and "a.darshan" in lines[0]


def test_the_templates_engine_is_a_dependency():
    # That the templates reach the wheel is tests/packaging/test_installed_package.py's.
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "jinja2>=3.1" in config["project"]["dependencies"]


def test_the_report_scores_classifiers_on_the_busiest_targets_only():
    import pandas as pd

    from iotune.report.states import busiest_targets
    from iotune.variability.samples import Samples

    counts = {f"OST{i:04x}": 10 + i for i in range(10)}  # OST0009 has the most samples
    counts["OST0000"] = counts["OST0001"] = 40  # a tie, broken by name
    frame = pd.DataFrame([{"target": t, "latency": 0.001} for t, n in counts.items()
                          for _ in range(n)])
    samples = Samples("probes", frame, "latency", "s", "probes", "sim")
    kept, probed = busiest_targets(samples, limit=3)
    assert probed == 10
    assert sorted(set(kept.frame["target"])) == ["OST0000", "OST0001", "OST0009"]
    assert len(kept.frame) == 40 + 40 + 19
    same, probed = busiest_targets(samples, limit=10)
    assert same is samples and probed == 10
