import pytest

from iotune.errors import ConfigError
from iotune.settings.space import Limits, SearchSpace
from iotune.train.designs import design_configurations, latin_hypercube, spread, systematic

SPACE = SearchSpace.from_mapping({
    "stripe_count": [1, 2, 4, 8, 16, 32, 64, 96, 128, 156],
    "stripe_size": ["1MiB", "2MiB", "4MiB", "8MiB", "16MiB", "32MiB", "64MiB", "128MiB"],
    "cb_nodes": [1, 2, 4, 8, 16, 32, 64],
})
LIMITS = Limits(cores_per_node=24, ost_count=156, aggregators_per_node=1)


def test_full_factorial_drops_rule_breakers():
    configs = design_configurations("full", SPACE, 128, LIMITS)
    # 128 cores = 6 nodes, one aggregator per node: cb_nodes 1, 2, 4 only
    assert {c["cb_nodes"] for c in configs} == {1, 2, 4}
    assert len(configs) == 10 * 8 * 3


def test_lhs_is_seeded_distinct_valid_and_covers_ranges():
    a = latin_hypercube(SPACE, 2048, LIMITS, runs=30, seed=3)
    b = latin_hypercube(SPACE, 2048, LIMITS, runs=30, seed=3)
    c = latin_hypercube(SPACE, 2048, LIMITS, runs=30, seed=4)
    assert a == b != c
    assert len(a) == 30
    assert len({tuple(sorted(x.items())) for x in a}) == 30
    counts = {x["stripe_count"] for x in a}
    assert min(counts) <= 2 and max(counts) >= 96  # both ends of the range are sampled


def test_lhs_returns_all_when_space_is_small():
    small = SearchSpace.from_mapping({"cb_nodes": [1, 2]})
    assert len(latin_hypercube(small, 4, Limits(4), runs=10, seed=0)) == 2


def test_spread_keeps_both_ends():
    assert spread([1, 2, 4, 8, 16, 32, 64], 3) == [1, 8, 64]
    assert spread(["enable", "disable"], 5) == ["disable", "enable"]


def test_systematic_has_fewer_runs_at_larger_scales():
    sizes = [len(design_configurations("systematic", SPACE, cores, LIMITS, scale_rank=rank))
             for rank, cores in enumerate([128, 256, 512, 1024, 2048])]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    first = systematic(SPACE, 128, LIMITS, 6)
    assert {c["stripe_count"] for c in first} >= {1, 156}


def test_empty_space_is_an_error():
    with pytest.raises(ConfigError, match="space: empty"):
        design_configurations("full", SearchSpace(()), 4, LIMITS)


def test_systematic_with_runs_gives_the_papers_table2():
    """Runs above a level's factorial widen the value sets, then thin evenly to the runs."""
    table2 = [(128, 216), (256, 120), (512, 72), (1024, 60), (2048, 60)]
    for rank, (cores, runs) in enumerate(table2):
        configs = design_configurations("systematic", SPACE, cores, LIMITS, runs=runs,
                                        scale_rank=rank)
        assert len(configs) == runs, cores
        assert len({tuple(sorted(c.items())) for c in configs}) == runs
        counts = {c["stripe_count"] for c in configs}
        assert {1, 156} <= counts  # the whole range is still covered
    # without runs: the level's own factorial (2 values each at the fifth scale)
    assert len(design_configurations("systematic", SPACE, 2048, LIMITS, scale_rank=4)) == 8


def test_the_paper_config_plans_table2():
    from pathlib import Path

    from iotune.config import load_config
    from iotune.train.plan import plan_campaign

    path = Path(__file__).resolve().parents[2] / "configs" / "hopper-paper.yaml"
    plans = plan_campaign(load_config(path))
    assert [(p.scale.cores, len(p.tasks)) for p in plans] == [(128, 216), (256, 120), (512, 72),
                                                         (1024, 60), (2048, 60)]
