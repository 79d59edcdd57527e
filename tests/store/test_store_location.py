"""A store is the one file its path leads to: a symbolic link reaches the shared journal for
appends, locks and repairs; named pipes and devices are refused before anything is opened;
a store's directory is never created for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iotune.errors import StoreError
from iotune.store import Store
from iotune.store.check import repair_store
from iotune.store.lock import JournalLock, lock_path
from tests.cli_result import error_line, invoke
from tests.deadline import within

#: What a second process prints when it cannot take the lock of the journal it is given.
_TRY_LOCK = """
import sys
from pathlib import Path
from iotune.errors import StoreError
from iotune.store import Store
from iotune.store.lock import JournalLock
try:
    with JournalLock(Store(sys.argv[1]).path, wait_s=0.5).held():
        print("taken")
except StoreError as exc:
    print("refused:", exc)
"""


@pytest.fixture()
def shared(tmp_path: Path) -> Path:
    """A shared store of one record, and ``me/store.jsonl`` linking to it (relatively)."""
    target = tmp_path / "shared" / "store.jsonl"
    target.parent.mkdir()
    Store(target).append({"n": 0})
    (tmp_path / "me").mkdir()
    (tmp_path / "me" / "store.jsonl").symlink_to(Path("..") / "shared" / "store.jsonl")
    return target


def test_a_record_appended_through_a_link_reaches_the_target(shared: Path, tmp_path: Path):
    link = tmp_path / "me" / "store.jsonl"
    store = Store(link)
    assert store.path == shared.resolve()
    store.append({"n": 1})
    assert [r["n"] for r in Store(shared).records()] == [0, 1]
    assert link.is_symlink() and link.resolve() == shared.resolve()
    assert sorted(p.name for p in (tmp_path / "me").iterdir()) == ["store.jsonl"]


def test_a_link_to_a_journal_not_written_yet_creates_the_target(tmp_path: Path):
    (tmp_path / "link.jsonl").symlink_to("later.jsonl")
    Store(tmp_path / "link.jsonl").append({"n": 1})
    assert (tmp_path / "link.jsonl").is_symlink()
    assert [json.loads(line)["n"] for line in (tmp_path / "later.jsonl").read_text().splitlines()
            ] == [1]


def test_a_repair_through_a_link_fixes_the_target_and_keeps_the_link(shared: Path,
                                                                      tmp_path: Path):
    with shared.open("ab") as journal:
        journal.write(b"not a record\n")
    Store(shared).append({"n": 2})
    link = tmp_path / "me" / "store.jsonl"
    checks, moved = repair_store(Store(link))
    assert [b.number for b in checks[0].bad] == [2]
    assert link.is_symlink() and link.resolve() == shared.resolve()
    assert [r["n"] for r in Store(shared).records()] == [0, 2]
    assert b"not a record" not in shared.read_bytes()
    assert moved[0].side_file.parent == shared.parent.resolve()
    assert sorted(p.name for p in (tmp_path / "me").iterdir()) == ["store.jsonl"]


def test_store_check_repair_through_a_link_keeps_the_link(shared: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch):
    with shared.open("ab") as journal:
        journal.write(b"{\"torn\": \n")
    monkeypatch.chdir(tmp_path)
    result = invoke("store", "check", "--store", "me/store.jsonl", "--repair")
    assert result.exit_code == 0, result.output
    assert Path("me/store.jsonl").is_symlink()
    assert shared.read_bytes().count(b"\n") == 1 and b"torn" not in shared.read_bytes()


def test_a_lock_taken_through_one_path_keeps_out_another_process(shared: Path,
                                                                 tmp_path: Path):
    link = tmp_path / "me" / "store.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def other_process(path: Path) -> str:
        return subprocess.run([sys.executable, "-c", _TRY_LOCK, str(path)], env=env,
                              capture_output=True, text=True, timeout=60, check=True).stdout

    with Store(link).lock.held():
        assert lock_path(shared).exists()
        assert not lock_path(link).exists() or lock_path(link).resolve() == lock_path(shared)
        answer = other_process(shared)
        assert answer.startswith("refused:") and "held by pid" in answer, answer
    assert other_process(shared).strip() == "taken"
    with Store(shared).lock.held():
        assert other_process(link).startswith("refused:")


def test_a_lock_through_a_linked_directory_is_the_same_lock(shared: Path, tmp_path: Path):
    (tmp_path / "alias").symlink_to("shared")
    other = JournalLock(Store(shared).path, wait_s=0.2)
    with Store(tmp_path / "alias" / "store.jsonl").lock.held(), \
            pytest.raises(StoreError, match="held by pid"), other.held():
        pass


@pytest.mark.parametrize("command", [
    ("job", "start", "--tag", "x", "--job-id", "1"),
    ("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "3"),
    ("store", "check", "--repair"),
    ("store", "check"),
    ("results",),
])
def test_a_named_pipe_is_refused_within_two_seconds_and_leaves_no_lock(
        command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    os.mkfifo("pipe.jsonl")
    with within(2.0, f"iotune {' '.join(command)} --store pipe.jsonl"):
        result = invoke(*command, "--store", "pipe.jsonl")
    assert result.exit_code != 0
    assert error_line(result) == ("store pipe.jsonl: is a named pipe (FIFO), not a regular "
                                  "file; a store is a JSON-lines file or a directory holding "
                                  "measurements.jsonl")
    assert sorted(os.listdir(tmp_path)) == ["pipe.jsonl"]


def test_a_link_to_a_named_pipe_and_a_device_are_refused(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link.jsonl").symlink_to("pipe")
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"link.jsonl \(the file .*pipe\): is a named pipe"):
        Store(tmp_path / "link.jsonl")
    with pytest.raises(StoreError, match="/dev/null: is a character device"):
        Store("/dev/null")
    assert time.monotonic() - started < 2.0


def test_a_named_pipe_as_claims_file_is_refused(tmp_path: Path):
    from iotune.store.claims import ClaimBook, claims_path

    store = Store(tmp_path / "s.jsonl")
    os.mkfifo(claims_path(store.path))
    with within(2.0, "reading the claims"), pytest.raises(StoreError, match="named pipe"):
        ClaimBook(store, "c").refresh()


def test_a_named_pipe_in_place_of_the_lock_file_does_not_hang_a_writer(tmp_path: Path):
    journal = tmp_path / "s.jsonl"
    os.mkfifo(lock_path(journal))
    lock = JournalLock(journal, wait_s=0.2)
    with within(2.0, "waiting for the lock"), pytest.raises(StoreError, match="held"), \
            lock.held():
        pass


def test_a_loop_of_links_is_refused(tmp_path: Path):
    (tmp_path / "a.jsonl").symlink_to("b.jsonl")
    (tmp_path / "b.jsonl").symlink_to("a.jsonl")
    with pytest.raises(StoreError, match=r"a\.jsonl: its symbolic links form a loop"):
        Store(tmp_path / "a.jsonl")


def test_a_store_in_a_missing_directory_is_refused_and_nothing_is_created(tmp_path: Path):
    store = Store(tmp_path / "nodir" / "p.jsonl")
    with pytest.raises(StoreError, match=r"nodir does not exist; iotune creates a store's file "
                                         r"but not the directories above it"):
        store.append({"n": 1})
    with pytest.raises(StoreError, match="nodir does not exist"):
        store.check_writable()
    assert list(tmp_path.iterdir()) == []


def test_a_link_into_a_missing_directory_is_refused(tmp_path: Path):
    (tmp_path / "link.jsonl").symlink_to("nodir/p.jsonl")
    with pytest.raises(StoreError, match=r"link.jsonl \(the file .*p.jsonl\): directory "
                                         r".*nodir does not exist"):
        Store(tmp_path / "link.jsonl").check_writable()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl"]


def test_a_new_store_directory_is_made_but_not_the_ones_above_it(tmp_path: Path):
    Store(tmp_path / "newstore").append({"n": 1})
    assert (tmp_path / "newstore" / "measurements.jsonl").is_file()
    with pytest.raises(StoreError, match="does not exist"):
        Store(tmp_path / "nodir" / "newstore").append({"n": 1})
    assert not (tmp_path / "nodir").exists()


def test_a_socket_and_a_directory_in_place_of_the_journal_are_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import socket

    monkeypatch.chdir(tmp_path)  # a short relative name: socket paths are limited in length
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("sock.jsonl")
        with pytest.raises(StoreError, match=r"sock\.jsonl: is a socket, not a regular file"):
            Store("sock.jsonl")
    (tmp_path / "d" / "measurements.jsonl").mkdir(parents=True)
    with pytest.raises(StoreError, match=r"is a directory, not a regular file"):
        Store(tmp_path / "d")


def test_a_production_journal_started_through_a_link_is_finished_through_the_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    Path("shared").mkdir()
    Path("me").mkdir()
    Path("me/p.jsonl").symlink_to("../shared/p.jsonl")
    started = invoke("job", "start", "--tag", "x", "--job-id", "1", "--store", "me/p.jsonl")
    assert started.exit_code == 0, started.output
    finished = invoke("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "3",
                      "--store", "shared/p.jsonl")
    assert finished.exit_code == 0, finished.output
    events = [r["event"] for r in Store("shared/p.jsonl").records()]
    assert events == ["start", "finish"]
    assert Path("me/p.jsonl").is_symlink()
    assert sorted(os.listdir("me")) == ["p.jsonl"]
