"""``results --export x.csv`` writes the store chunk by chunk and gives the whole frame."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from store_helpers import fill, small_cache

from iotune.store.cache import open_snapshot
from iotune.store.index import read_dataframe, write_csv
from iotune.store.views import (
    all_rows,
    light_records,
    ok_rows,
    row_columns,
    rows_frame,
    write_rows_csv,
)


def reread(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame as it comes back from CSV, so both sides compare in CSV's terms."""
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


@pytest.mark.parametrize("rows", [ok_rows, all_rows])
@pytest.mark.parametrize("chunk", [7, 50, 10_000])
def test_chunked_csv_equals_the_whole_frame(tmp_path, monkeypatch, rows, chunk):
    small_cache(monkeypatch)
    store = fill(tmp_path / "s.jsonl", 400, seed=5)
    parts = open_snapshot(store.path).parts()
    whole = rows_frame(parts, rows)
    assert row_columns(parts, rows) == list(whole.columns)

    out = tmp_path / "out.csv"
    assert write_rows_csv(parts, out, rows, chunk_records=chunk) == len(whole)
    pd.testing.assert_frame_equal(pd.read_csv(out), reread(whole))


def test_a_chunk_filter_keeps_what_it_keeps_and_the_header_survives_empty_chunks(tmp_path):
    store = fill(tmp_path / "s.jsonl", 300, seed=2)
    out = tmp_path / "eight.csv"
    written = write_csv(store.path, out, kernel="vpic", keep=lambda f: f[f["cores"] == 8])
    expected = read_dataframe(store.path, kernel="vpic")
    expected = expected[expected["cores"] == 8].reset_index(drop=True)
    assert written == len(expected) > 0
    pd.testing.assert_frame_equal(pd.read_csv(out), reread(expected))

    nothing = tmp_path / "none.csv"
    assert write_csv(store.path, nothing, keep=lambda f: f[f["cores"] == 3]) == 0
    assert pd.read_csv(nothing).empty and "config_key" in nothing.read_text()


def test_frames_read_with_segments_released_equal_those_read_at_once(tmp_path, monkeypatch):
    small_cache(monkeypatch)
    store = fill(tmp_path / "s.jsonl", 400, seed=7)
    snapshot = open_snapshot(store.path)
    assert len(snapshot.segments) > 3 and all(s.stored for s in snapshot.segments)
    parts = snapshot.parts()
    whole = rows_frame(parts, all_rows, order_column=True)
    pd.testing.assert_frame_equal(rows_frame(parts, all_rows, order_column=True, release=True),
                                  whole)

    def wanted(name: str) -> bool:
        return name in ("cores", "write_time") or name.startswith(("in_effect.", "stripe"))

    some = rows_frame(parts, all_rows, wanted=wanted, release=True)
    pd.testing.assert_frame_equal(some, whole[[c for c in whole.columns if wanted(c)]])


def test_an_export_releases_what_it_has_written(tmp_path, monkeypatch):
    small_cache(monkeypatch)
    store = fill(tmp_path / "s.jsonl", 300, seed=3)
    snapshot = open_snapshot(store.path)
    released: list[int] = []
    for segment in snapshot.segments:
        monkeypatch.setattr(segment, "release",
                            lambda segment=segment: released.append(segment.first_seq))
    parts = snapshot.parts()
    write_rows_csv(parts, tmp_path / "out.csv", all_rows, chunk_records=20)
    assert set(released) == {part.segment.first_seq for part in parts}


def test_light_records_read_as_the_records_they_stand_for(tmp_path, monkeypatch):
    small_cache(monkeypatch)
    store = fill(tmp_path / "s.jsonl", 200, seed=4)
    parts = open_snapshot(store.path).parts(campaign="tune")
    records = [r for r in store.iter_records()
               if r.get("campaign") == "tune" and "kernel" in r]
    light = light_records(parts)
    assert len(light) == len(records) > 0
    for (_, got), record in zip(light, records, strict=True):
        for name in ("kernel", "cores", "config_key", "status", "settings", "params",
                     "tune_id", "strategy", "rep", "nodes"):
            assert got.get(name) == record.get(name)
        for name in ("settings", "params", "tune_id", "strategy"):  # kept only when present
            assert (name in got) == (name in record)
        result = record.get("result") or {}
        assert got["result"]["times_s"]["total"] == (result.get("times_s") or {}).get("total")
        assert got["result"]["bytes_written"] == result.get("bytes_written")
