"""Exclusive access to a store across processes and hosts, without trusting ``fcntl`` locks.

POSIX record locks (``fcntl``/``lockf``) are what a single machine offers, but on a shared
file system they may do nothing across nodes: Lustre mounted with ``localflock`` grants them
per node, and NFS needs a working ``lockd`` (without one, ``lockf`` fails or hangs). So the
store's lock is a *lock file* created with ``O_CREAT | O_EXCL``, which is atomic on local
file systems, on Lustre and on NFS v3 and later (the method of Optuna's journal file
storage for NFS). Holding it, a writer opens the journal afresh, so NFS's close-to-open
consistency shows it the journal's true end, appends, ``fsync``s, closes, and only then
removes the lock file.

The lock file holds its owner (host, pid, a random token, when taken). A lock file whose
owner is gone is broken:

- at once when the owner ran on this host and its process no longer exists;
- otherwise when the lock file is older than ``stale_after_s`` (default
  :data:`STALE_AFTER_S`). Holding the lock takes milliseconds (one append, or one claim
  decision), so a lock that old belongs to a process killed while holding it. This relies
  on the nodes' clocks agreeing within that time (NTP keeps them within milliseconds).

Breaking renames the lock file to a unique name (only one breaker can win the rename) and
removes it. A ``fcntl`` lock is taken as well where it works, as a second guard; set
``IOTUNE_STORE_FCNTL=off`` on a file system where ``lockf`` hangs.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import stat
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from iotune.errors import StoreError

#: Seconds after which another host's lock file is taken for abandoned (see module doc).
STALE_AFTER_S = 60.0
#: Seconds a writer waits for the lock before giving up with an error naming the holder.
WAIT_S = 300.0
#: Longest pause between two attempts; attempts start 1 ms apart and double.
MAX_PAUSE_S = 0.1
FCNTL_ENV = "IOTUNE_STORE_FCNTL"
#: Most bytes read from a lock file: its owner is one short JSON object (about 120 bytes),
#: so anything longer is not a lock file iotune wrote and is not worth reading whole.
OWNER_BYTES = 4096


def beside(journal: str | os.PathLike[str], suffix: str) -> Path:
    """A file beside a journal, named after it with ``suffix`` added (``store.jsonl.lock``):
    the store's lock, claims and cache."""
    path = Path(journal)
    return path.with_name(path.name + suffix)


def lock_path(journal: Path) -> Path:
    """The lock file of a journal."""
    return beside(journal, ".lock")


def fcntl_enabled() -> bool:
    """False when ``IOTUNE_STORE_FCNTL=off`` says this file system's ``lockf`` is unusable."""
    return os.environ.get(FCNTL_ENV, "on").strip().lower() not in ("off", "0", "no")


def host_name() -> str:
    """This host's short name (as Slurm names nodes)."""
    return socket.gethostname().split(".")[0]


class JournalLock:
    """The lock file of one journal; re-entrant within one object.

    ``with lock.held(): ...`` runs the block while this process holds the lock. Raises
    StoreError when the lock cannot be taken within ``wait_s`` seconds or its directory
    cannot be written.
    """

    def __init__(self, journal: Path, *, stale_after_s: float = STALE_AFTER_S,
                 wait_s: float = WAIT_S) -> None:
        self.path = lock_path(journal)
        self.stale_after_s, self.wait_s = stale_after_s, wait_s
        self._depth = 0
        self._token = ""
        self._threads = threading.RLock()  # threads of this process take turns

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._threads:
            if self._depth == 0:
                self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()

    def _acquire(self) -> None:
        token = uuid.uuid4().hex
        owner = json.dumps({"host": host_name(), "pid": os.getpid(), "token": token,
                            "since": time.time()}).encode()
        deadline, pause = time.monotonic() + self.wait_s, 0.001
        while True:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                if self._break_if_abandoned():
                    continue
                if time.monotonic() > deadline:
                    raise StoreError(self._timeout_message()) from None
                time.sleep(pause)
                pause = min(MAX_PAUSE_S, pause * 2)
                continue
            except OSError as exc:
                raise StoreError(f"store lock {self.path}: cannot create: "
                                 f"{exc.strerror}") from None
            try:
                os.write(fd, owner)
            finally:
                os.close(fd)
            self._token = token
            return

    def _release(self) -> None:
        try:
            if _owner(self.path).get("token") == self._token:
                self.path.unlink()
        except OSError:
            pass  # broken by another process after STALE_AFTER_S; nothing left to remove

    def _break_if_abandoned(self) -> bool:
        """Remove the lock file when its owner is gone; True when this call removed it."""
        owner = _owner(self.path)  # before the age: a lock taken since then looks young
        try:
            age = time.time() - self.path.stat().st_mtime
        except FileNotFoundError:
            return True  # released meanwhile: try again at once
        pid = owner.get("pid")
        local_and_dead = (owner.get("host") == host_name() and isinstance(pid, int)
                          and not process_exists(pid))
        if not local_and_dead and age <= self.stale_after_s:
            return False
        aside = self.path.with_name(f"{self.path.name}.broken.{uuid.uuid4().hex}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return True  # another process broke or released it first
        if _owner(aside).get("token") != owner.get("token"):
            # A fresh lock was taken between the look and the rename: put it back.
            with suppress(FileExistsError):
                os.link(aside, self.path)
        aside.unlink(missing_ok=True)
        return True

    def _timeout_message(self) -> str:
        owner = _owner(self.path)
        holder = (f"held by pid {owner.get('pid')} on {owner.get('host')}" if owner
                  else "held")
        return (f"store lock {self.path}: {holder} for more than {self.wait_s:.0f} s; if no "
                f"iotune process uses this store, remove the lock file")


@contextmanager
def fcntl_locked(fd: int) -> Iterator[None]:
    """Hold a ``lockf`` lock on ``fd`` for the block, where the file system supports one.

    Best effort: a file system without working POSIX locks (``ENOLCK``, ``EOPNOTSUPP``) or
    ``IOTUNE_STORE_FCNTL=off`` leaves the lock file as the only guard.
    """
    if fcntl_enabled():
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX)
        except OSError as exc:
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise
    yield  # closing the descriptor releases the lock


def _owner(path: Path) -> dict[str, object]:
    """The owner a lock file names; empty when it names none. Opened without blocking and
    read only when it is a regular file: a named pipe in its place must not hang a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return {}
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        with os.fdopen(os.dup(fd), "rb") as handle:
            value = json.loads(handle.read(OWNER_BYTES) or b"{}")
    except (OSError, ValueError):
        return {}
    finally:
        os.close(fd)
    return value if isinstance(value, dict) else {}


def process_exists(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
