"""``design: recorded``: train measures the replay backend's recorded configurations."""

import itertools

import pytest
import yaml
from cli_result import error_line, invoke

from iotune.config import load_config
from iotune.errors import ConfigError
from iotune.settings.space import Limits, SearchSpace
from iotune.store import Store
from iotune.train import plan_campaign
from iotune.train.designs import design_configurations, recorded_subset

#: Two scales; 16 cores has 5 recorded non-default configurations (one recorded twice)
#: and the default row; 64 cores has one configuration and the default.
LANDSCAPE = """\
cores,stripe_count,stripe_size,romio_cb_write,write_time
16,1,1048576,enable,3.0
16,1,1048576,enable,3.2
16,4,1048576,disable,2.0
16,4,4194304,enable,1.5
16,8,4194304,disable,1.1
16,8,1048576,enable,1.8
16,,,,2.5
64,4,1048576,enable,4.0
64,,,,5.0
"""
RECORDED_16 = [
    {"stripe_count": 1, "stripe_size": 1048576, "romio_cb_write": "enable"},
    {"stripe_count": 4, "stripe_size": 1048576, "romio_cb_write": "disable"},
    {"stripe_count": 4, "stripe_size": 4194304, "romio_cb_write": "enable"},
    {"stripe_count": 8, "stripe_size": 4194304, "romio_cb_write": "disable"},
    {"stripe_count": 8, "stripe_size": 1048576, "romio_cb_write": "enable"},
]


@pytest.fixture
def replay_config(tmp_path, monkeypatch):
    """Write land.csv and a replay config (no space) with the given train section."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IOTUNE_CONFIG", raising=False)
    (tmp_path / "land.csv").write_text(LANDSCAPE)

    def write(train: dict, name: str = "iotune.yaml", store: str = "store.jsonl"):
        path = tmp_path / name
        path.write_text(yaml.safe_dump({
            "backend": {"name": "replay", "replay_data": "land.csv"},
            "store": store,
            "train": train,
        }))
        return path

    return write


def frozen(settings):
    return tuple(sorted(settings.items()))


def test_train_measures_every_recorded_configuration_at_its_scale_once(replay_config,
                                                                        tmp_path):
    config = replay_config({"repetitions": 2, "scales": [{"cores": 16, "design": "recorded"}]})
    result = invoke("train", "-c", str(config), "--no-color")
    assert result.exit_code == 0, result.output
    records = Store(tmp_path / "store.jsonl").records()
    assert len(records) == len(RECORDED_16) * 2
    assert {r["cores"] for r in records} == {16}  # nothing at 64 cores
    assert all(r["status"] == "ok" and r["campaign"] == "train" for r in records)
    assert all(r["backend"] == "replay" and r["provenance"] == "replayed" for r in records)
    assert all(r["result"]["replayed"] for r in records)
    assert {frozen(r["settings"]) for r in records} == {frozen(c) for c in RECORDED_16}
    reps = {}
    for r in records:
        reps.setdefault(frozen(r["settings"]), set()).add(r["rep"])
    assert all(seen == {0, 1} for seen in reps.values())

    again = invoke("train", "-c", str(config), "--no-color")
    assert again.exit_code == 0, again.output
    assert "0 run(s), 10 already in the store" in again.output
    assert len(Store(tmp_path / "store.jsonl").records()) == 10


def test_runs_takes_a_seeded_subset_of_distinct_recorded_configurations(replay_config,
                                                                        tmp_path):
    scales = [{"cores": 16, "design": "recorded", "runs": 2}]
    chosen = []
    for name in ("a", "b"):
        config = replay_config({"seed": 5, "scales": scales}, f"{name}.yaml", f"{name}.jsonl")
        result = invoke("train", "-c", str(config), "--no-color")
        assert result.exit_code == 0, result.output
        records = Store(tmp_path / f"{name}.jsonl").records()
        assert len(records) == 2
        chosen.append([frozen(r["settings"]) for r in records])
    assert chosen[0] == chosen[1]  # same seed, same subset
    assert len(set(chosen[0])) == 2
    assert set(chosen[0]) <= {frozen(c) for c in RECORDED_16}


def test_dry_run_shows_the_recorded_design_run_count(replay_config, tmp_path):
    config = replay_config({"repetitions": 3, "scales": [{"cores": 16, "design": "recorded"},
                                                         {"cores": 64, "design": "recorded"}]})
    result = invoke("train", "-c", str(config), "--dry-run")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[2].split() == ["16", "recorded", "5", "3", "15", "0"]
    assert lines[3].split() == ["64", "recorded", "1", "3", "3", "0"]
    assert "18 runs" in result.output
    assert not (tmp_path / "store.jsonl").exists()


@pytest.mark.parametrize("backend", ["sim", "mpi"])
def test_recorded_design_needs_a_backend_with_recordings(replay_config, backend):
    config = replay_config({"scales": [{"cores": 64}, {"cores": 16, "design": "recorded"}]})
    for extra in ([], ["--dry-run"]):
        result = invoke("train", "-c", str(config), "--backend", backend, *extra)
        assert result.exit_code == 2
        assert error_line(result) == (
            f"train.scales[1].design: 'recorded' needs --backend replay (the {backend} "
            "backend has no recorded configurations)")


def test_a_scale_without_recordings_names_its_cores_and_the_file(replay_config, tmp_path):
    config = replay_config({"scales": [{"cores": 16, "design": "recorded"},
                                       {"cores": 32, "design": "recorded"}]})
    result = invoke("train", "-c", str(config), "--dry-run")
    assert result.exit_code == 2
    assert error_line(result) == (
        f"train.scales[1].cores: no configuration recorded at 32 cores in "
        f"{tmp_path / 'land.csv'}; record some or drop this scale")


def test_plan_takes_the_candidates_of_a_given_backend(replay_config):
    class Recorded:
        name = "fake"

        def candidates(self, cores):
            return [{"stripe_count": 2}, {"stripe_count": 1}] if cores == 16 else None

    config = load_config(replay_config({"scales": [{"cores": 16, "design": "recorded"}]}))
    plans = plan_campaign(config, Recorded())  # type: ignore[arg-type]
    assert [dict(t.request.settings) for t in plans[0].tasks] == [{"stripe_count": 1},
                                                                   {"stripe_count": 2}]


def test_recorded_subset_is_a_latin_hypercube_on_a_complete_grid():
    grid = [{"stripe_count": c, "stripe_size": s}
            for c, s in itertools.product(range(1, 11), range(1, 11))]
    a = recorded_subset(grid, 5, seed=1)
    assert a == recorded_subset(list(reversed(grid)), 5, seed=1)  # seeded, order-free
    assert len({frozen(c) for c in a}) == 5
    # 5 points over 10 values per setting: one pick in every band of two values
    assert sorted((c["stripe_count"] - 1) // 2 for c in a) == [0, 1, 2, 3, 4]
    assert sorted((c["stripe_size"] - 1) // 2 for c in a) == [0, 1, 2, 3, 4]
    assert any(recorded_subset(grid, 5, seed=s) != a for s in range(2, 6))


def test_recorded_subset_keeps_all_when_runs_cover_them_and_handles_unset_settings():
    recorded = [{"stripe_count": 4}, {"stripe_count": 1, "romio_cb_write": "enable"},
                {"stripe_count": 4}]
    assert recorded_subset(recorded, None, 0) == [{"romio_cb_write": "enable", "stripe_count": 1},
                                                  {"stripe_count": 4}]
    assert recorded_subset(recorded, 9, 0) == recorded_subset(recorded, None, 0)
    assert len(recorded_subset(recorded, 1, 0)) == 1


def test_recorded_design_ignores_an_empty_space_but_needs_recordings():
    empty, limits = SearchSpace(()), Limits(cores_per_node=4)
    configs = design_configurations("recorded", empty, 16, limits, recorded=[{"stripe_count": 2}])
    assert configs == [{"stripe_count": 2}]
    with pytest.raises(ConfigError, match="'recorded' design needs a backend with recorded"):
        design_configurations("recorded", empty, 16, limits)
