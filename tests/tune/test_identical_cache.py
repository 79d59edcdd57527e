"""Merging configurations that ran identically keeps each signature until its
configuration runs again (the race merges after every run)."""

from __future__ import annotations

from iotune.strategies.base import Evaluation
from iotune.tune.identical import SignatureCache, merge_identical
from iotune.tune.merged import Merged


def _pair() -> tuple[Evaluation, Evaluation]:
    return (Evaluation({"cb_nodes": 1}, "a", times=[1.0], order=0),
            Evaluation({"cb_nodes": 2}, "b", times=[2.0], order=1))


def test_a_cached_signature_is_used_until_its_configuration_runs_again():
    a, b = _pair()
    cache: SignatureCache = {}
    assert merge_identical([a, b], {}, True, "median", cache) == [a, b]
    assert set(cache) == {("a", 0, 1), ("b", 0, 1)}
    cache[("b", 0, 1)] = cache[("a", 0, 1)]  # as if b had run as a
    merged = merge_identical([a, b], {}, True, "median", cache)
    assert len(merged) == 1 and isinstance(merged[0], Merged)
    b.times.append(2.5)  # b ran again: its signature is worked out anew
    assert merge_identical([a, b], {}, True, "median", cache) == [a, b]


def test_nothing_read_back_merges_nothing():
    a, b = _pair()
    assert merge_identical([b, a], {}, False, "median", {}) == [b, a]
