"""Writing the files and directories a user names on the command line, without losing data.

Every command that writes a path the user gave (``tune -o``, ``train --emit-sbatch``,
``results --export``, ``init -o``, ``fit -o``, ``predict -o``, ``proxy -o``,
``characterize -o``, ``report -o``) goes through this module:

- :func:`check_output_file` before anything is run or stored, and :func:`write_output` to
  write: it refuses, with a ConfigError naming the option, the path and the rule,

  - what the command reads (:class:`InUse`): the store in use and its side files (the
    journal, its lock file, claims file and ``.cache`` directory), the config in use and
    the command's other inputs, whatever ``--force`` says;
  - a directory, a missing parent directory, anything but a regular file;
  - an existing file of another kind than the one written (:func:`file_kind` sniffs the
    first bytes: a store journal, a config, a tuned file, a job script, CSV...) unless
    ``force``; a file of the same kind (a new tuned file over an old one) is replaced;

  and writes to a temporary name in the same directory, fsyncs, then renames, so the old
  file stays whole until the new one is complete.
- :func:`check_output_dir` for a directory of several files (``report -o``): it refuses
  the same inputs, system directories (:func:`check_not_system_directory`, also the rule
  for ``system.scratch``), and a non-empty directory that is not an earlier output of the
  same command (it holds the command's marker file) unless ``force``.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import yaml

from iotune.errors import ConfigError
from iotune.inputs import safe_load

T = TypeVar("T")

#: What each kind of file is called in messages. A writer names the kind it writes.
KINDS: dict[str, str] = {
    "store": "an iotune store journal",
    "jsonl": "JSON lines",
    "json": "JSON",
    "config": "an iotune config",
    "tuned": "a tuned configuration",
    "model": "an iotune model",
    "proxy": "an iotune proxy file",
    "characterization": "an iotune characterisation",
    "script": "a script",
    "csv": "CSV",
    "parquet": "Parquet",
    "html": "HTML",
    "yaml": "YAML",
    "binary": "binary data",
    "text": "text",
}

#: Top-level keys of an iotune config (see :func:`iotune.config.build_config`).
CONFIG_KEYS = frozenset(("schema_version", "system", "kernel", "space", "train", "tune",
                         "backend", "store"))
#: Bytes read to tell a file's kind; a YAML file is parsed whole only up to YAML_LIMIT.
HEAD_BYTES, YAML_LIMIT = 65536, 1 << 20

#: Directories that are never scratch or an output directory themselves: the file-system
#: root, system trees and the parents of home directories. A subdirectory of them is fine.
SYSTEM_DIRECTORIES = ("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32",
                      "/lib64", "/libx32", "/media", "/mnt", "/opt", "/proc", "/root", "/run",
                      "/sbin", "/srv", "/sys", "/usr", "/usr/bin", "/usr/lib", "/usr/local",
                      "/usr/sbin", "/usr/share", "/var", "/var/cache", "/var/lib", "/var/log",
                      "/var/spool")
SYSTEM_RULE = ("not /, a home directory itself or a system directory (/usr, /etc, /var...): "
               "use a directory of its own below them")


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def _home_directories() -> set[str]:
    homes = {_real("/root")}
    for candidate in (os.environ.get("HOME"), os.path.expanduser("~")):
        if candidate and candidate != "/":
            homes.add(_real(candidate))
    return homes


def system_directory(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it is a system directory (its real path is one of
    :data:`SYSTEM_DIRECTORIES`, a home directory itself: ``$HOME``, ``/root`` or any
    ``/home/<user>``), else None."""
    real = _real(path)
    if real in {_real(d) for d in SYSTEM_DIRECTORIES} | {d for d in SYSTEM_DIRECTORIES}:
        return "the file-system root" if real == "/" else "a system directory"
    if real in _home_directories() or os.path.dirname(real) == _real("/home"):
        return "a home directory"
    return None


def check_not_system_directory(path: str | os.PathLike[str], where: str) -> None:
    """ConfigError ``<where>: <path> is <what>; <rule>`` when ``path`` is a system directory
    (:func:`system_directory`). The temporary directory itself is allowed: scratch holds
    only fresh ``iotune-*`` run directories, and the built-in config puts scratch there."""
    what = system_directory(path)
    if what is not None:
        raise ConfigError(f"{where}: {path} is {what}; {SYSTEM_RULE}")


@dataclass(frozen=True)
class InUse:
    """The paths a command reads, each with what it is: an output never replaces them.

    Paths are compared by their real path (symbolic links followed); anything inside an
    entry whose description ends in "directory" (the store's cache) counts as that entry.
    The store's side files are named by the store layer; the CLI gathers them
    (:func:`iotune.cli.common.in_use`).
    """

    entries: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, entries: Iterable[tuple[str, str | os.PathLike[str] | None]]) -> InUse:
        """From ``(what, path)`` pairs (``("the replay data", path)``); None paths are
        skipped."""
        return cls(tuple((_real(path), what) for what, path in entries if path is not None))

    def what(self, path: str | os.PathLike[str]) -> str | None:
        """What ``path`` is among these, else None."""
        real = _real(path)
        for entry, what in self.entries:
            inside = what.endswith("directory") and real.startswith(entry.rstrip("/") + "/")
            if real == entry or inside:
                return what
        return None


NOTHING_IN_USE = InUse()


def file_kind(path: str | os.PathLike[str]) -> str | None:
    """The kind (a key of :data:`KINDS`) of the regular file at ``path`` from its first
    bytes; None when it is empty or only whitespace (nothing to lose). Cheap: it reads
    :data:`HEAD_BYTES`, and parses YAML only for files up to :data:`YAML_LIMIT`."""
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
        whole = len(head) < HEAD_BYTES or not handle.read(1)
    if not head.strip():
        return None
    if head.startswith(b"PAR1"):
        return "parquet"
    if b"\0" in head:
        return "binary"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if whole or exc.start < len(head) - 4:  # not a character cut at the head's end
            return "binary"
        text = head[:exc.start].decode("utf-8")
    stripped = text.lstrip()
    if stripped.startswith("#!"):
        return "script"
    if stripped[:15].lower().startswith(("<!doctype html", "<html")):
        return "html"
    if stripped.startswith(("{", "[")):
        return _json_kind(stripped, whole)
    if whole or os.path.getsize(path) <= YAML_LIMIT:
        kind = _yaml_kind(path)
        if kind is not None:
            return kind
    first = stripped.splitlines()[0]
    return "csv" if "," in first and "\n" in stripped else "text"


def _json_kind(text: str, whole: bool) -> str:
    first = text.splitlines()[0]
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):
        return "json"
    if isinstance(record, dict) and ("\n" in text.strip() or not whole or
                                     "schema_version" in record):
        return "store" if "schema_version" in record else "jsonl"
    return "json"


def _yaml_kind(path: str | os.PathLike[str]) -> str | None:
    """The kind of an iotune YAML document, ``yaml`` for another mapping, else None."""
    try:
        document = safe_load(Path(path).read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, OSError):
        return None
    if not isinstance(document, dict):
        return None
    keys = set(map(str, document))
    if document.get("kind") == "iotune-model":
        return "model"
    if {"similarity", "args", "kernel"} <= keys:
        return "proxy"
    if {"patterns", "source_log"} <= keys:
        return "characterization"
    if {"kernel", "settings"} <= keys:
        return "tuned"
    if keys and keys <= CONFIG_KEYS:
        return "config"
    return "yaml"


def _check_nameable(out: Path, option: str, what: str) -> None:
    """ConfigError ``<option> <path>: cannot be a <what> here (<reason>)`` when the file
    system cannot look ``out`` up at all: a name too long, a loop of links, a part that is
    not a directory. A path that does not exist yet is fine."""
    try:
        out.lstat()
    except FileNotFoundError:
        return
    except OSError as exc:
        shown = f"{str(out)[:60]}..." if len(str(out)) > 60 else str(out)
        raise ConfigError(f"{option} {shown}: cannot be a {what} here "
                          f"({exc.strerror or exc}); choose another path") from None


def check_output_file(path: str | os.PathLike[str], kind: str, *, option: str,
                      in_use: InUse = NOTHING_IN_USE, force: bool = False) -> Path:
    """``path`` as a Path when a file of ``kind`` may be written there; ConfigError
    ``<option> <path>: <rule>`` otherwise (see the module doc). Call it before anything
    is run or stored; :func:`write_output` calls it again."""
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}")
    out = Path(path)
    where = f"{option} {out}"
    _check_nameable(out, option, "file")
    what = in_use.what(out)
    if what is not None:
        raise ConfigError(f"{where}: is {what}; an output never replaces it: choose another "
                          "path")
    if out.is_dir():
        raise ConfigError(f"{where}: is a directory; give the path of a file")
    parent = out.parent
    if not parent.is_dir():
        rule = "does not exist" if not parent.exists() else "is not a directory"
        raise ConfigError(f"{where}: the directory {parent} {rule}; create it first")
    if out.exists() or out.is_symlink():
        if not out.is_file():
            raise ConfigError(f"{where}: is not a regular file; an output replaces only a "
                              "file")
        try:
            found = file_kind(out)
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read what it holds ({exc.strerror}); an "
                              "output replaces only a file it can tell the kind of") from None
        if found is not None and found != kind and not force:
            raise ConfigError(f"{where}: holds {KINDS[found]}, not {KINDS[kind]}; pass "
                              "--force to replace it, or choose another path")
    return out


def write_output(path: str | os.PathLike[str], content: str | bytes | Callable[[Path], T],
                 kind: str, *, option: str, in_use: InUse = NOTHING_IN_USE,
                 force: bool = False, mode: int | None = None) -> T | None:
    """Check ``path`` (:func:`check_output_file`), then write ``content`` to it atomically
    (:func:`atomic_write`); returns what a callable ``content`` returned, else None."""
    out = check_output_file(path, kind, option=option, in_use=in_use, force=force)
    try:
        return atomic_write(out, content, mode=mode)
    except OSError as exc:
        raise ConfigError(f"{option} {out}: cannot write: {exc.strerror or exc}") from None


def atomic_write(path: str | os.PathLike[str], content: str | bytes | Callable[[Path], T],
                 mode: int | None = None) -> T | None:
    """Write ``content`` (text as UTF-8, bytes, or a callable that writes the file at the
    temporary path it is given) to a new file beside ``path``, fsync it, give it ``mode``
    (default: as the umask makes new files), and rename it over ``path``; the temporary
    file is removed on any failure, so ``path`` is either the old file or the whole new
    one. Raises OSError. Returns what a callable returned, else None."""
    out = Path(path)
    temporary = out.with_name(f".{out.stem}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
                              f"{out.suffix}")
    result: T | None = None
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as handle:
            if isinstance(content, str):
                handle.write(content.encode("utf-8"))
            elif isinstance(content, bytes):
                handle.write(content)
        if callable(content):
            result = content(temporary)
        with open(temporary, "rb+") as handle:
            os.fsync(handle.fileno())
        if mode is not None:
            temporary.chmod(mode)
        os.replace(temporary, out)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    fsync_directory(out.parent)
    return result


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable where the file system allows it."""
    fsync_path(directory)


def fsync_path(path: Path) -> None:
    """fsync a file (its data) or a directory (a rename in it), best effort: a path that
    cannot be opened, or a file system that refuses, leaves things as they are."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the rename stands
    finally:
        os.close(fd)


def check_output_dir(path: str | os.PathLike[str], *, option: str, marker: str,
                     in_use: InUse = NOTHING_IN_USE, force: bool = False) -> Path:
    """``path`` as a Path when a command may write its files into that directory;
    ConfigError ``<option> <path>: <rule>`` when it is an input in use, a file, a system
    directory or the temporary directory itself, or (unless ``force``) a non-empty
    directory without ``marker``, the file an earlier output of the same command leaves
    (a report's ``manifest.json``). The directory is not created here."""
    out = Path(path)
    where = f"{option} {out}"
    _check_nameable(out, option, "directory")
    what = in_use.what(out)
    if what is not None:
        raise ConfigError(f"{where}: is {what}; an output never writes into it: choose "
                          "another directory")
    system = system_directory(out)
    if system is not None:
        raise ConfigError(f"{where}: is {system}; {SYSTEM_RULE}")
    if _real(out) == _real(tempfile.gettempdir()):
        raise ConfigError(f"{where}: is the temporary directory itself; use a directory "
                          "of its own below it")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{where}: is a file, not a directory; give a directory")
    if out.is_dir() and not force and not (out / marker).is_file():
        try:
            empty = next(out.iterdir(), None) is None
        except OSError as exc:
            raise ConfigError(f"{where}: cannot be listed ({exc.strerror})") from None
        if not empty:
            raise ConfigError(f"{where}: holds files and is not an earlier output of this "
                              f"command (no {marker}); pass --force to write into it, or "
                              "choose a new or empty directory")
    return out
