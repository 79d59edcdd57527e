"""Where a store path leads: the one journal file behind it, and whether it can be a store.

A store path names a ``.jsonl`` file or a directory holding :data:`STORE_FILE_NAME`. Two
paths to the same file are the same store, so a symbolic link at the end of the path is
followed (through a chain of links, to a target that may not exist yet) and the store's
lock, claims, cache and repaired copy are all named after the file it reaches: a lock
taken through one path keeps out a writer coming through another, and a repair rewrites
the shared file, never replacing the link with a private copy. Links among the directories
above need no following: the side files sit in the same real directory either way. (Hard
links cannot be told apart by name; two hard links to one journal are two stores.)

The checks here run before anything is opened, because opening a named pipe blocks until
a writer comes, and appending to a device loses the record:

- :func:`check_store_file`: the journal, if it exists, is a regular file, not a FIFO,
  socket, character or block device or directory, and the links to it end;
- :func:`check_store_home`: the directory a new journal goes in exists. iotune creates
  the journal (and a store directory's own directory) but never the directories above it,
  so a mistyped path is refused instead of growing a tree of new directories.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from iotune.errors import StoreError

STORE_FILE_NAME = "measurements.jsonl"

#: File types that are not regular files, by the ``stat`` test that finds them.
_SPECIAL_KINDS = ((stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISCHR, "character device"),
                  (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"),
                  (stat.S_ISDIR, "directory"))


def is_directory_store(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a store directory: an existing directory, or a path with no
    suffix that names nothing yet (created as a directory on the first write)."""
    p = Path(path)
    return p.is_dir() or (not p.suffix and not p.exists() and not p.is_symlink())


def resolve_store_path(path: str | os.PathLike[str]) -> Path:
    """The JSON-lines file behind a store path (a ``.jsonl`` file or a directory), a symbolic
    link at its end followed to the file it names. Never raises: a loop of links is left
    as given, for :func:`check_store_file` to name."""
    p = Path(path)
    return follow_link(p / STORE_FILE_NAME if is_directory_store(p) else p)


def follow_link(path: Path) -> Path:
    """``path`` itself, or the absolute path of the file it links to (through any chain of
    links) when it is a symbolic link, even one whose target does not exist yet."""
    if not path.is_symlink():
        return path
    try:
        return Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:
        return Path(os.path.realpath(path))  # a link to a journal not written yet
    except OSError:
        return path  # a loop of links


def named(given: str | os.PathLike[str], journal: Path) -> str:
    """How messages name a store: the path given, and the file it reaches when a link (or
    a store directory) leads elsewhere."""
    text = str(given)
    if Path(given) == journal or Path(given) / STORE_FILE_NAME == journal:
        return text
    return f"{text} (the file {journal})"


def check_store_file(given: str | os.PathLike[str], journal: Path) -> None:
    """StoreError unless ``journal`` (reached from ``given``) is absent or a regular file.

    Looks with ``stat`` only, so a named pipe is refused without blocking."""
    try:
        mode = os.stat(journal).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoreError(f"store {given}: its symbolic links form a loop; a store must "
                             "lead to a regular file") from None
        if exc.errno == errno.ENOTDIR:
            raise StoreError(f"store {named(given, journal)}: a part of the path above it is "
                             "not a directory") from None
        raise StoreError(f"store {named(given, journal)}: cannot look at it: "
                         f"{exc.strerror}") from None
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _SPECIAL_KINDS if test(mode)), "special file")
    raise StoreError(f"store {named(given, journal)}: is a {kind}, not a regular file; a "
                     f"store is a JSON-lines file or a directory holding {STORE_FILE_NAME}")


def check_store_home(given: str | os.PathLike[str], journal: Path) -> None:
    """StoreError unless the directory the store goes in exists: the journal's directory,
    or for a store directory not made yet, the directory that will hold it."""
    home = journal.parent
    if is_directory_store(given) and not Path(given).exists():
        home = home.parent
    if home.is_dir():
        return
    state = "is not a directory" if home.exists() else "does not exist"
    raise StoreError(f"store {named(given, journal)}: directory {home} {state}; iotune "
                     "creates a store's file but not the directories above it (create it "
                     "first)")
