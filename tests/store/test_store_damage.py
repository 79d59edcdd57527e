"""Damaged store lines and duplicate records: every reader skips the same lines and says
which, once per command; ``iotune store check`` lists them and ``--repair`` moves them
aside without losing a byte."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_result import error_line, invoke
from store_helpers import fill, small_cache

from iotune.errors import StoreError
from iotune.store import Store
from iotune.store import cache as store_cache
from iotune.store.cache import open_snapshot
from iotune.store.claims import claims_path
from iotune.store.damage import Damage, notice, on_damage

RECORDS = 20


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _truncated_then_appended(path: Path) -> tuple[list[int], list[int]]:
    """Line 8 cut short (a writer killed mid-line), then one more record appended."""
    lines = _lines(path)
    path.write_bytes(b"".join(lines[:7]) + lines[7][:40])
    Store(path).append({"kernel": "vpic", "cores": 4, "status": "ok", "backend": "sim"})
    return [8], []


def _garbage_appended(path: Path) -> tuple[list[int], list[int]]:
    with path.open("ab") as out:
        out.write(b"this is not json\n\xff\xfe binary \x01\n")
    return [RECORDS + 1, RECORDS + 2], []


def _nuls_appended(path: Path) -> tuple[list[int], list[int]]:
    with path.open("ab") as out:
        out.write(b"\0" * 300 + b"\n")
    return [RECORDS + 1], []


def _overwritten_in_place(path: Path) -> tuple[list[int], list[int]]:
    lines = _lines(path)
    lines[4] = b"#" * (len(lines[4]) - 1) + b"\n"  # same length: the cache must notice too
    path.write_bytes(b"".join(lines))
    return [5], []


def _json_not_a_record(path: Path) -> tuple[list[int], list[int]]:
    lines = _lines(path)
    lines[2:2] = [b"[1, 2]\n", b'{"kernel": "vpic"}\n', b"42\n", b"[" * 100_000 + b"\n"]
    path.write_bytes(b"".join(lines))
    return [3, 4, 5, 6], []


def _duplicated_line(path: Path) -> tuple[list[int], list[int]]:
    lines = _lines(path)
    path.write_bytes(b"".join([*lines, lines[5]]))
    return [], [RECORDS + 1]


DAMAGE: dict[str, Callable[[Path], tuple[list[int], list[int]]]] = {
    "truncated": _truncated_then_appended, "garbage": _garbage_appended,
    "nuls": _nuls_appended, "overwritten": _overwritten_in_place,
    "not_a_record": _json_not_a_record, "duplicated": _duplicated_line,
}


def _warnings(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("iotune: warning:")]


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_each_kind_of_damage_is_skipped_and_named_once_by_line(tmp_path, kind):
    path = tmp_path / "s.jsonl"
    fill(path, RECORDS)
    damaged, duplicates = DAMAGE[kind](path)
    good = Store(path).records()
    out = tmp_path / "rows.csv"
    shown = invoke("results", "--store", str(path), "--failed", "--export", str(out))
    assert shown.exit_code == 0, shown.output
    warnings = _warnings(shown.output)
    assert len(warnings) == 1, shown.output
    expected = Damage(tuple(damaged), tuple(duplicates)).summary()
    assert warnings[0] == (f"iotune: warning: store {path}: {expected}; run 'iotune store "
                           f"check' for details")
    ids = [row["id"] for row in csv.DictReader(out.open())]
    assert sorted(ids) == sorted(
        r["id"] for r in good if "kernel" in r and r.get("campaign") != "probe")
    assert len(set(ids)) == len(ids)


def test_the_warning_texts_name_kinds_counts_and_lines():
    assert Damage((17, 230), (6001,)).summary() == (
        "2 damaged lines skipped (lines 17, 230); 1 duplicate record ignored (line 6001)")
    assert Damage((), (), 9).summary() == "an incomplete last line not read (line 9)"
    many = Damage(tuple(range(1, 14))).summary()
    assert many == "13 damaged lines skipped (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 3 more)"
    assert not Damage()


def test_a_cached_read_reports_the_damage_without_parsing_again(tmp_path, monkeypatch):
    small_cache(monkeypatch)
    path = tmp_path / "s.jsonl"
    fill(path, 60)
    lines = _lines(path)
    # garbage in the first segment; a duplicate of line 2 far later, in another segment
    path.write_bytes(b"".join([*lines[:3], b"garbage\n", *lines[3:], lines[1]]))
    first = open_snapshot(path)
    assert len(first.segments) > 2 and all(s.stored for s in first.segments)
    assert first.damage == Damage((4,), (62,))

    def no_parsing(*args, **kwargs):
        raise AssertionError("the journal was parsed again")

    monkeypatch.setattr(store_cache, "build_segment", no_parsing)
    again = open_snapshot(path)
    assert again.damage == first.damage and again.records == 60


def test_a_duplicate_of_a_cached_record_is_found_by_a_later_read(tmp_path, monkeypatch):
    small_cache(monkeypatch)
    path = tmp_path / "s.jsonl"
    store = fill(path, 60)
    assert open_snapshot(path).damage == Damage()  # cached, clean
    with path.open("ab") as out:
        out.write(_lines(path)[0])
    store.append({"kernel": "vpic", "cores": 4, "status": "ok", "backend": "sim"})
    snapshot = open_snapshot(path)
    assert snapshot.damage == Damage((), (61,)) and snapshot.records == 61


def test_the_reader_of_every_line_skips_the_same_lines(tmp_path):
    path = tmp_path / "s.jsonl"
    fill(path, RECORDS)
    _garbage_appended(path)
    _duplicated_line(path)
    heard: list[Damage] = []
    listener = on_damage(lambda journal, label, damage: heard.append(damage))
    try:
        records = Store(path).records()
    finally:
        from iotune.store import damage as damage_module
        damage_module._listeners.remove(listener)
    assert len(records) == RECORDS == len({r["id"] for r in records})
    assert heard == [Damage((RECORDS + 1, RECORDS + 2), (RECORDS + 3,))]


def test_results_status_and_train_agree_on_a_duplicated_record(write_config, tmp_path):
    config = write_config({"backend": {"name": "sim", "noise": 0},
                           "train": {"scales": [{"cores": 4, "design": "systematic"}]}})
    trained = invoke("train", "-c", str(config))
    assert trained.exit_code == 0, trained.output
    store = tmp_path / "store.jsonl"
    lines = _lines(store)
    store.write_bytes(b"".join([*lines, lines[0]]))  # the first run recorded twice
    status = invoke("status", "-c", str(config), "--format", "json")
    assert status.exit_code == 0, status.output
    done = sum(scale["done"] + scale["failed"] for scale in json.loads(
        status.output[status.output.index("{"):])["scales"])
    results = invoke("results", "-c", str(config), "--failed", "--format", "json")
    rows = json.loads(results.output[results.output.index("["):])
    assert done == len(rows) == len(lines)
    again = invoke("train", "-c", str(config))  # nothing left: the duplicate counts once
    assert again.exit_code == 0, again.output
    assert len(_lines(store)) == len(lines) + 1
    for shown in (status, results, again):
        assert _warnings(shown.output) == [
            f"iotune: warning: store {store}: 1 duplicate record ignored (line "
            f"{len(lines) + 1}); run 'iotune store check' for details"], shown.output


def test_a_command_warns_once_per_journal(tmp_path):
    path = tmp_path / "s.jsonl"
    fill(path, 5)
    _garbage_appended(path)
    shown = invoke("results", "--store", str(path))
    assert len(_warnings(shown.output)) == 1
    # a second command warns again: once per command, not once per process
    assert len(_warnings(invoke("results", "--store", str(path)).output)) == 1


def test_garbage_in_the_claims_file_is_reported(write_config, tmp_path):
    config = write_config({"backend": {"name": "sim", "noise": 0},
                           "train": {"scales": [{"cores": 4, "design": "systematic"}]}})
    assert invoke("train", "-c", str(config)).exit_code == 0
    claims = claims_path(tmp_path / "store.jsonl")
    count = len(_lines(claims))
    with claims.open("ab") as out:
        out.write(b'{"event": "claim", "wor\n\0\0\0\n')
        out.write(json.dumps({"schema_version": 1, "campaign": "train", "event": "start",
                              "id": "w", "pid": "abc"}).encode() + b"\n")
    status = invoke("status", "-c", str(config))
    assert status.exit_code == 0, status.output
    assert _warnings(status.output) == [
        f"iotune: warning: claims {claims}: 3 damaged lines skipped (lines {count + 1}, "
        f"{count + 2}, {count + 3}); run 'iotune store check' for details"]


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)),
                                     b"kernel,cores,time\nvpic,4,1.5\n",
                                     b'{\n  "pretty": "json"\n}\n', b"\0" * 4096])
def test_a_file_that_is_not_a_journal_is_an_error_for_every_command(tmp_path, content):
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    for args in (["results", "--store", str(path)], ["store", "check", "--store", str(path)],
                 ["store", "check", "--store", str(path), "--repair"]):
        shown = invoke(*args)
        assert shown.exit_code == 4, shown.output
        assert error_line(shown).startswith(f"store {path}: not an iotune store"), shown.output
    with pytest.raises(StoreError, match="not an iotune store"):
        Store(path).append({"kernel": "vpic"})
    assert path.read_bytes() == content  # nothing appended, nothing repaired


def test_an_empty_or_absent_store_is_still_no_measurements(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for path in (empty, tmp_path / "absent.jsonl"):
        checked = invoke("store", "check", "--store", str(path))
        assert checked.exit_code == 0, checked.output
        assert f"store {path}: 0 lines, 0 records; clean" in checked.output
    shown = invoke("results", "--store", str(empty))
    assert shown.exit_code == 0 and "no measurements" in shown.output


def test_store_check_of_a_clean_store_exits_0(tmp_path):
    path = tmp_path / "s.jsonl"
    fill(path, RECORDS)
    checked = invoke("store", "check", "--store", str(path))
    assert checked.exit_code == 0, checked.output
    assert checked.output.strip() == f"store {path}: {RECORDS} lines, {RECORDS} records; clean"


def _every_kind_of_damage(path: Path) -> list[int]:
    """Damage of each kind; the numbers of the bad lines, in the final journal."""
    fill(path, RECORDS)
    lines = _lines(path)
    lines[4] = b"#" * (len(lines[4]) - 1) + b"\n"
    lines[9:9] = [b"\0\0\0\n", b"[1]\n"]
    lines.append(lines[2])
    lines.append(b"garbage\n")
    path.write_bytes(b"".join(lines) + b'{"schema_version": 1, "id": "to')  # a torn end
    return [5, 10, 11, RECORDS + 3, RECORDS + 4, RECORDS + 5]


def test_store_check_lists_the_bad_lines_and_exits_non_zero(tmp_path):
    path = tmp_path / "s.jsonl"
    bad = _every_kind_of_damage(path)
    before = path.read_bytes()
    checked = invoke("store", "check", "--store", str(path), "--format", "json")
    assert checked.exit_code == 1, checked.output
    report = json.loads(checked.output[checked.output.index("{"):checked.output.rindex("}") + 1])
    (store,) = report["checks"]
    assert [b["line"] for b in store["bad_lines"]] == bad
    assert [b["kind"] for b in store["bad_lines"]] == [
        "damaged", "damaged", "damaged", "duplicate", "damaged", "incomplete"]
    assert "line 3" in store["bad_lines"][3]["reason"]  # the duplicate names its original
    assert (store["lines"], store["records"]) == (RECORDS + 4, RECORDS - 1)  # line 5 lost
    table = invoke("store", "check", "--store", str(path))
    assert table.exit_code == 1
    assert f"store {path}: line 11: JSON list, not a record" in table.output
    assert path.read_bytes() == before  # a check changes nothing


def test_repair_moves_exactly_the_bad_lines_aside_and_keeps_every_record(tmp_path):
    path = tmp_path / "s.jsonl"
    bad = _every_kind_of_damage(path)
    original = path.read_bytes().splitlines(keepends=True)
    records_before = Store(path).records()
    open_snapshot(path)  # a cache of the damaged journal, which the repair must not trust
    claims = claims_path(path)
    claims.write_bytes(b'{"schema_version": 1, "event": "start", "campaign": "train"}\n'
                       b"garbage\n")

    repaired = invoke("store", "check", "--store", str(path), "--repair")
    assert repaired.exit_code == 0, repaired.output
    (side,) = tmp_path.glob("s.jsonl.rejected-*.jsonl")
    assert f"of {path} to {side}" in repaired.output
    moved = [json.loads(line) for line in side.read_text().splitlines()]
    assert [m["line"] for m in moved] == bad
    for m in moved:  # the exact bytes of each line, without its newline
        assert m["text"].encode("utf-8", "surrogateescape") == original[m["line"] - 1].rstrip(
            b"\n")
    assert path.read_bytes() == b"".join(line for n, line in enumerate(original, start=1)
                                         if n not in bad)
    assert Store(path).records() == records_before
    assert open_snapshot(path).records == RECORDS - 1 and open_snapshot(path).damage == Damage()
    (claims_side,) = tmp_path.glob("s.jsonl.claims.rejected-*.jsonl")
    assert [json.loads(line)["line"] for line in claims_side.read_text().splitlines()] == [2]
    assert claims.read_bytes().count(b"\n") == 1

    clean = invoke("store", "check", "--store", str(path))
    assert clean.exit_code == 0 and "clean" in clean.output
    shown = invoke("results", "--store", str(path))
    assert not _warnings(shown.output)


def test_library_readers_warn_no_one_without_a_listener(tmp_path):
    path = tmp_path / "s.jsonl"
    fill(path, 3)
    notice(path, "store", Damage())  # nothing skipped: no listener is called
    _garbage_appended(path)
    assert open_snapshot(path).damage == Damage((4, 5))
