"""``iotune status`` and the worker options of ``iotune train``: what a user reads while a
campaign runs, and one clear line for bad input."""

from __future__ import annotations

import json

from click.testing import CliRunner

from iotune.backends import make_backend
from iotune.cli.main import cli
from iotune.config import load_config
from iotune.store import Store
from iotune.store.claims import ClaimBook, Worker
from iotune.train import plan_campaign


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_status_shows_done_measuring_and_left_runs_and_the_workers(hopper_config):
    plans = plan_campaign(load_config(hopper_config))
    first = plans[0].tasks
    store = Store(load_config(hopper_config).store)
    source = make_backend(load_config(hopper_config)).source()
    for i, task in enumerate(first[:4]):
        store.append({"campaign": "train", "kernel": "vpic", "backend": "mpi",
                      "provenance": "measured", "cores": task.request.cores,
                      "config_key": task.request.key, "rep": task.rep,
                      "status": "failed" if i == 2 else "ok", "elapsed_s": 60.0,
                      "source": source if i < 3 else "mpi on another system"})
    worker = Worker("far", "othernode", 7, job="99_1")
    book = ClaimBook(store, "train", source=source)
    book.start(worker)
    assert book.claim_next(worker, [t.ident for t in first]) == first[3].ident

    shown = invoke("status", "-c", str(hopper_config), "--format", "json")
    assert shown.exit_code == 0, shown.output
    status = json.loads(shown.output)
    assert status["format"] == 1 and not status["complete"]
    scale = status["scales"][0]
    assert (scale["done"], scale["failed"], scale["claimed"]) == (2, 1, 1)
    assert scale["left"] == scale["runs"] - 4
    assert scale["seconds_per_run"] == 60.0
    assert scale["core_hours"] == 3 * 60 * plans[0].scale.cores / 3600
    assert status["provenance"] == ["measured"]
    assert status["source"] == source and status["other_source_runs"] == 1
    assert [(w["job"], w["state"]) for w in status["workers"]] == [("99_1", "running")]
    assert status["workers"][0]["measuring"]["config_key"] == first[3].request.key
    assert status["live_workers"] == 1 and status["eta_s"] is None  # larger scales: untimed

    table = invoke("status", "-c", str(hopper_config))
    assert table.exit_code == 0
    assert "(measured runs)" in table.output and "othernode" in table.output
    assert "not counted: 1 run(s)" in table.output
    assert "3/272 runs answered, 1 being measured, 268 left" in table.output


def test_status_reads_a_finished_sim_campaign_complete(hopper_config):
    trained = invoke("train", "-c", str(hopper_config), "--backend", "sim", "--no-color")
    assert trained.exit_code == 0, trained.output
    shown = invoke("status", "-c", str(hopper_config), "--backend", "sim", "--watch", "1")
    assert shown.exit_code == 0  # --watch ends once the campaign is complete
    assert "(simulated runs)" in shown.output
    assert "complete: 272 run(s) done, 0 failed" in shown.output
    assert shown.output.count("as of") == 1
    noisier = invoke("status", "-c", str(hopper_config), "--backend", "sim", "--noise", "2",
                     "--format", "json")
    other = json.loads(noisier.output)  # another source: none of those runs count
    assert other["done"] == 0 and other["other_source_runs"] == 272


def test_bad_worker_options_get_one_clear_line(hopper_config):
    no_script = invoke("train", "-c", str(hopper_config), "--array", "4")
    assert no_script.exit_code == 2 and "give --emit-sbatch PATH too" in no_script.output
    bad_lease = invoke("train", "-c", str(hopper_config), "--lease", "soon")
    assert bad_lease.exit_code == 2 and "--lease" in bad_lease.output
    assert "Traceback" not in bad_lease.output
    short = invoke("train", "-c", str(hopper_config), "--lease", "1s")
    assert short.exit_code == 2 and "shorter than 4 s" in short.output
    watch = invoke("status", "-c", str(hopper_config), "--watch", "0")
    assert watch.exit_code == 2 and "--watch" in watch.output
