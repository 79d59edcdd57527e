"""State-aware tune on the simulated system with idle/busy noise: tags, repeats, ranking."""


import pytest

from iotune.backends import make_backend
from iotune.cli.common import with_backend
from iotune.config import load_config
from iotune.store import Store
from iotune.tune import tune


@pytest.fixture
def noisy_hopper(hopper_config):
    return with_backend(load_config(hopper_config), "sim", None, 1.0)


def _probe_history(store_path, rounds=60):
    """What a background `iotune probe` leaves in the store (simulated on hopper)."""
    from click.testing import CliRunner

    from iotune.cli.main import cli

    out = CliRunner().invoke(cli, ["probe", "--simulate", "hopper", "--targets", "4", "--rounds",
                                   str(rounds), "--interval", "1", "--seed", "3", "--store",
                                   str(store_path)])
    assert out.exit_code == 0, out.output


def test_busy_runs_are_tagged_repeated_and_left_out_of_ranking(noisy_hopper):
    _probe_history(noisy_hopper.store)
    store = Store(noisy_hopper.store)
    backend = make_backend(noisy_hopper)
    result = tune(noisy_hopper, backend, store, kernel="vpic", cores=512,
                  strategy="random", budget=40, state_aware=True)
    records = [r for r in store.records() if r["campaign"] == "tune"]
    assert records[0]["probe"]["state"] != "unknown"  # the probe history gave a model at once
    tagged = [r["probe"]["state"] for r in records]
    assert set(tagged) <= {"idle", "busy", "unknown"}
    assert "busy" in tagged and "idle" in tagged
    # tags agree with the simulator's true state for most runs once a model exists
    known = [(r["probe"]["state"], r["state"]) for r in records if r["probe"]["state"] != "unknown"]
    agreement = sum(tag == truth for tag, truth in known) / len(known)
    assert agreement > 0.8
    # every busy-tagged run that could be repeated was followed by another run of its config
    by_key: dict[str, list[str]] = {}
    for r in records:
        by_key.setdefault(r["config_key"], []).append(r["probe"]["state"])
    assert any(len(states) > 1 for states in by_key.values())
    best = result.best
    assert best is not None and best.statistic is not None
    calm = [t for t, s in zip(best.times, best.states, strict=True) if s != "busy"]
    if len(calm) >= 2:
        assert best.statistic == pytest.approx(sorted(calm)[len(calm) // 2]
                                               if len(calm) % 2 else
                                               sum(sorted(calm)[len(calm) // 2 - 1:
                                                                len(calm) // 2 + 1]) / 2)


def test_naive_tune_records_no_probes(noisy_hopper):
    store = Store(noisy_hopper.store)
    tune(noisy_hopper, make_backend(noisy_hopper), store, kernel="vpic", cores=512,
         strategy="random", budget=5)
    records = store.records()
    assert records and all("probe" not in r for r in records)
