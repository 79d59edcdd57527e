"""A tune given a knowledge base's priors: known configurations measured first and raced,
the known noise in the budget's split, and the decision still on this workload's runs;
empty priors leave the tune as it is without them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from iotune.backends.replay import ReplayBackend
from iotune.config import build_config
from iotune.knowledge.priors import KnownCandidate, KnownNoise, Priors
from iotune.store import Store
from iotune.strategies.racing import race_reserve
from iotune.tune import tune
from iotune.tuned import check_tuned

FAST = {"stripe_count": 4}
SLOW = {"stripe_count": 2}


def _landscape(path: Path, times: dict[str, float], sigma: float = 0.05,
               repeats: int = 6) -> Path:
    """The default and three stripe counts, ``repeats`` runs each around ``times``
    (keyed by stripe count, ``""`` for the default)."""
    rng = np.random.default_rng(7)
    rows = []
    for count, centre in times.items():
        settings = {"stripe_count": int(count)} if count else {}
        rows += [{"cores": 4, **settings, "write_time": centre * float(np.exp(x))}
                 for x in rng.normal(0, sigma, repeats)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _tune(tmp_path: Path, data: Path, budget: int, priors: Priors | None, seed: int = 0,
          name: str = "s"):
    config = build_config({"kernel": {"name": "vpic"}, "tune": {"seed": seed},
                           "backend": {"name": "replay", "replay_data": str(data)},
                           "store": str(tmp_path / f"{name}.jsonl")}, tmp_path)
    return tune(config, ReplayBackend(config), Store(config.store), kernel="vpic", cores=4,
                budget=budget, fresh=True, priors=priors)


def _priors(*settings: dict, noise: KnownNoise | None = None) -> Priors:
    return Priors("site.kb@1", "local", 5, noise,
                  tuple(KnownCandidate(s, 4, 5, 2.0) for s in settings))


def test_a_known_configuration_is_measured_right_after_the_default_and_confirmed(tmp_path):
    data = _landscape(tmp_path / "l.csv", {"": 10.0, "1": 9.8, "2": 10.2, "4": 5.0})
    result = _tune(tmp_path, data, 8, _priors(FAST))
    first = min(result.evaluations, key=lambda e: e.order)
    assert first.settings == FAST
    assert result.recommendation == "tuned"
    assert result.choice.recommended.settings == FAST
    assert len(result.choice.recommended.times) >= 3 and len(result.default.times) >= 3


def test_a_known_configuration_that_is_slower_here_is_not_recommended(tmp_path):
    data = _landscape(tmp_path / "l.csv", {"": 10.0, "1": 10.1, "2": 10.3, "4": 15.0})
    for seed in range(3):
        result = _tune(tmp_path, data, 12, _priors(FAST), seed=seed, name=f"s{seed}")
        first = min(result.evaluations, key=lambda e: e.order)
        assert first.settings == FAST  # raced first ...
        assert result.choice.recommended.settings != FAST  # ... and beaten by the runs


def test_the_known_noise_sizes_the_split_but_not_the_decision(tmp_path):
    data = _landscape(tmp_path / "l.csv", {"": 10.0, "1": 9.9, "2": 10.1, "4": 10.05},
                      sigma=0.01)
    cold = _tune(tmp_path, data, 30, None, name="cold")
    noisy = _priors(noise=KnownNoise(0.6, 500, 520, "local"))
    warm = _tune(tmp_path, data, 30, noisy, name="warm")
    assert cold.budget.reserve == race_reserve(30, cold.budget.noise)
    assert "knowledge base" in warm.budget.noise_source
    assert warm.budget.noise is not None and cold.budget.noise is not None
    assert warm.budget.noise > 0.3 > cold.budget.noise  # pooled: 8 df of 0.6, 1 of ~0.01
    assert warm.budget.reserve > cold.budget.reserve
    # the race's own noise is the runs' pooled spread, the prior's nowhere in it
    assert warm.choice.noise.sigma is not None and warm.choice.noise.sigma < 0.1


def test_empty_priors_tune_exactly_as_without_a_knowledge_base(tmp_path):
    data = _landscape(tmp_path / "l.csv", {"": 10.0, "1": 8.0, "2": 10.2, "4": 6.0},
                      sigma=0.2)
    for seed in range(2):
        cold = _tune(tmp_path, data, 8, None, seed=seed, name=f"c{seed}")
        empty = _tune(tmp_path, data, 8, Priors("site.kb@1", "local", 0), seed=seed,
                      name=f"e{seed}")
        assert [(e.settings, e.times) for e in empty.evaluations] == \
            [(e.settings, e.times) for e in cold.evaluations]
        assert empty.default.times == cold.default.times
        assert (empty.recommendation, empty.choice.recommended.settings, empty.runs) == \
            (cold.recommendation, cold.choice.recommended.settings, cold.runs)
        assert empty.budget == cold.budget
        assert "knowledge" not in cold.to_tuned()
        assert empty.to_tuned()["knowledge"]["similar_workloads"] == 0


def test_the_tuned_file_records_what_the_knowledge_base_contributed(tmp_path):
    data = _landscape(tmp_path / "l.csv", {"": 10.0, "1": 9.8, "2": 10.2, "4": 5.0})
    outside = {"stripe_count": 64}
    priors = _priors(FAST, outside, noise=KnownNoise(0.2, 40, 50, "local"))
    doc = _tune(tmp_path, data, 12, priors).to_tuned()
    known = doc["knowledge"]
    assert known["base"] == "site.kb@1" and known["noise"]["sigma"] == 0.2
    assert known["raced_first"] == [FAST] and known["not_in_space"] == 1
    assert known["noise_pooled_into_split"] is True
    reread = yaml.safe_load(yaml.safe_dump(doc, sort_keys=False))
    assert check_tuned(reread)["knowledge"]["raced_first"] == [FAST]  # still reads
