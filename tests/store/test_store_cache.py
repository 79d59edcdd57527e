"""The store cache: what reads through it equals what parsing every line gives, however the
journal changed since the cache was written, and whatever is left in the cache directory."""

from __future__ import annotations

import itertools
import os
import shutil
import time

import pandas as pd
import pytest
from store_helpers import (
    fill,
    reference_frame,
    reference_measurements,
    segment_files,
    small_cache,
    varied_record,
)

from iotune.report.data import build_datasets, choose_kernel, read_records
from iotune.store import Store
from iotune.store import cache as store_cache
from iotune.store.index import StoreIndex, read_dataframe
from iotune.store.records import frame_of


@pytest.fixture(autouse=True)
def _small_segments(monkeypatch):
    small_cache(monkeypatch)


def assert_reads_like_the_journal(store: Store) -> None:
    """Every reader's answer through the cache equals the one from the parsed records."""
    for include_failed in (False, True):
        expected = reference_frame(store, include_failed)
        for use_cache in (True, False):
            got = read_dataframe(store.path, include_failed, use_cache=use_cache)
            pd.testing.assert_frame_equal(got, expected)
            assert list(got.columns) == list(expected.columns)
    reference = reference_measurements(store)
    index = StoreIndex(store)
    assert index.measurements == reference
    assert [m.record for m in index.measurements] == [m.record for m in reference]
    for kernel in ("vpic", "ior"):
        for backend in ("sim", "mpi", "replay"):
            chosen = [m for m in reference if (m.kernel, m.backend) == (kernel, backend)]
            pd.testing.assert_frame_equal(index.training_frame(kernel, backend),
                                          frame_of(chosen))
    groups = index.by_key(backend="sim", campaign="tune")
    expected_groups: dict[str, list] = {}
    for m in reference:
        if (m.backend, m.campaign) == ("sim", "tune"):
            expected_groups.setdefault(m.config_key, []).append(m)
    assert dict(groups) == expected_groups
    assert index.probes == [r for r in store.records()
                            if r.get("campaign") == "probe" or "kernel" not in r]


def test_reads_through_the_cache_equal_reads_of_every_line(tmp_path):
    store = fill(tmp_path / "s.jsonl", 300)
    assert_reads_like_the_journal(store)
    assert len(segment_files(store.path)) >= 3  # written, in several segments
    assert_reads_like_the_journal(store)  # and read back from them


def test_records_appended_after_the_cache_was_written_are_read(tmp_path):
    store = fill(tmp_path / "s.jsonl", 120)
    before = len(read_dataframe(store.path, include_failed=True))
    covered = max(int(name.split("-")[2].split(".")[0], 16)
                  for name in segment_files(store.path))
    assert covered == store.path.stat().st_size
    fill(tmp_path / "s.jsonl", 40, seed=2)
    assert len(read_dataframe(store.path, include_failed=True)) > before
    assert_reads_like_the_journal(store)


def test_a_truncated_journal_drops_what_the_cache_held_beyond_it(tmp_path):
    store = fill(tmp_path / "s.jsonl", 200)
    read_dataframe(store.path)
    lines = store.path.read_bytes().splitlines(keepends=True)
    with store.path.open("r+b") as handle:  # same file, cut to its first 50 records
        handle.truncate(sum(len(line) for line in lines[:50]))
    assert len(read_dataframe(store.path, include_failed=True)) == len(
        reference_frame(store, include_failed=True))
    fill(tmp_path / "s.jsonl", 200, seed=3)  # and grown again past the old segments
    assert_reads_like_the_journal(store)
    end = store.path.stat().st_size
    segments = segment_files(store.path)
    assert segments and all(int(name.split("-")[2].split(".")[0], 16) <= end
                            for name in segments)


def test_a_replaced_journal_is_read_afresh(tmp_path):
    store = fill(tmp_path / "s.jsonl", 150)
    read_dataframe(store.path)
    other = fill(tmp_path / "other.jsonl", 150, seed=9)
    os.replace(other.path, store.path)  # a new file (inode) under the same name
    assert_reads_like_the_journal(store)


def test_a_journal_rewritten_in_place_with_the_same_length_is_read_afresh(tmp_path):
    store = fill(tmp_path / "s.jsonl", 150)
    read_dataframe(store.path)
    data = store.path.read_bytes()
    changed = data.replace(b'"status": "ok"', b'"status": "OK"', 1)
    assert len(changed) == len(data) and changed != data
    with store.path.open("r+b") as handle:  # same inode, same size, first bytes differ
        handle.write(changed)
    assert_reads_like_the_journal(store)


def test_a_torn_last_line_is_left_out_until_sealed(tmp_path):
    store = fill(tmp_path / "s.jsonl", 100)
    with store.path.open("ab") as handle:
        handle.write(b'{"schema_version": 1, "kernel": "vpic", "status": "o')  # kill -9
    assert_reads_like_the_journal(store)
    covered = max(int(name.split("-")[2].split(".")[0], 16)
                  for name in segment_files(store.path))
    assert covered < store.path.stat().st_size  # the torn bytes are not cached
    fill(tmp_path / "s.jsonl", 10, seed=4)  # the next append seals the torn line
    assert_reads_like_the_journal(store)


def test_deleting_the_cache_costs_only_a_rebuild(tmp_path):
    store = fill(tmp_path / "s.jsonl", 150)
    first = read_dataframe(store.path, include_failed=True)
    shutil.rmtree(store_cache.cache_path(store.path))
    pd.testing.assert_frame_equal(read_dataframe(store.path, include_failed=True), first)
    assert segment_files(store.path)


def test_a_crashed_cache_writer_leaves_nothing_that_is_read(tmp_path):
    store = fill(tmp_path / "s.jsonl", 150)
    read_dataframe(store.path)
    directory = store_cache.cache_path(store.path)
    names = segment_files(store.path)
    stale = directory / ".tmp-4242-deadbeef.seg"  # a writer killed mid-write, long ago
    stale.write_bytes(b"IOTUNSEG" + b"\xff" * 100)
    old = time.time() - 2 * store_cache.STALE_TEMP_S
    os.utime(stale, (old, old))
    young = directory / ".tmp-4243-cafecafe.seg"  # a writer that may still be running
    young.write_bytes(b"partial")
    (directory / names[0]).write_bytes(b"IOTUNSEG\x05\x00")  # cut short after a rename
    (directory / names[1]).write_bytes(b"not a segment at all")
    assert_reads_like_the_journal(store)
    assert not stale.exists() and young.exists()
    for name in names[:2]:  # rewritten whole
        assert (directory / name).read_bytes().startswith(b"IOTUNSEG")
        assert (directory / name).stat().st_size > 100


def test_segments_written_a_little_at_a_time_are_merged(tmp_path, monkeypatch):
    monkeypatch.setattr(store_cache, "CHUNK_BYTES", 16384)
    store = Store(tmp_path / "s.jsonl")
    for i in range(60):  # a tune at a time: a record or two, then a read
        fill(store.path, 1 + i % 2, seed=100 + i)
        read_dataframe(store.path)
    names = segment_files(store.path)
    spans = sorted(tuple(int(x, 16) for x in n[3:-4].split("-")) for n in names)
    assert spans[0][0] == 0 and all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert spans[-1][1] == store.path.stat().st_size
    # 90 appends in 60 reads: without merging, 60 files; chunks of 16 KiB in a few each
    assert len(names) <= store.path.stat().st_size // 16384 + 6
    assert_reads_like_the_journal(store)


def test_the_index_reads_whole_records_only_when_asked(tmp_path, monkeypatch):
    store = fill(tmp_path / "s.jsonl", 100)
    read_dataframe(store.path)
    index = StoreIndex(store)
    chosen = index.select(kernel="vpic", campaign="train")
    assert chosen and all(m.raw is None for m in chosen)  # nothing read yet
    expected = [m.record for m in reference_measurements(store)
                if (m.kernel, m.campaign) == ("vpic", "train")]
    assert [m.record for m in chosen] == expected


def test_the_index_adds_its_own_appends_to_what_it_read(tmp_path):
    store = fill(tmp_path / "s.jsonl", 100)
    index = StoreIndex(store)
    groups = index.by_key(backend="sim", campaign="tune")
    record = {**varied_record(1, __import__("random").Random(5)), "campaign": "tune",
              "backend": "sim", "kernel": "vpic", "config_key": "new-key", "status": "ok",
              "error": None, "result": {"times_s": {"total": 2.0}, "bytes_written": 2**26}}
    index.append(record)
    assert "new-key" not in groups  # a grouping is as of when it was asked for
    assert [m.config_key for m in index.by_key(backend="sim", campaign="tune")["new-key"]] \
        == ["new-key"]
    pd.testing.assert_frame_equal(
        index.training_frame("vpic", "sim"),
        frame_of([m for m in reference_measurements(store)
                  if (m.kernel, m.backend) == ("vpic", "sim")]))


def test_the_report_reads_the_same_datasets_through_the_cache(tmp_path):
    store = fill(tmp_path / "s.jsonl", 300)
    cached = read_records(store.path)
    parsed = store.records()
    for kernel in ("vpic", "ior"):
        assert choose_kernel(cached, kernel=kernel, tuned_kernel=None, config_kernel=None,
                             store="s") == kernel
        through = build_datasets(cached, kernel, "s")
        direct = build_datasets(parsed, kernel, "s")
        assert [d.backend for d in through] == [d.backend for d in direct]
        for a, b in zip(through, direct, strict=True):
            assert a.provenance.pairs() | {"report date": ""} == \
                b.provenance.pairs() | {"report date": ""}
            pd.testing.assert_frame_equal(a.frame, b.frame)
            assert [(t.cores, t.runs, t.failed, t.default, [c.settings for c in t.configs])
                    for t in a.tunes] == \
                [(t.cores, t.runs, t.failed, t.default, [c.settings for c in t.configs])
                 for t in b.tunes]
            assert [(s.label, s.best) for s in a.sessions] == \
                [(s.label, s.best) for s in b.sessions]
