"""Reading the files a user names (configs, tuned files, proxies, CSVs) as untrusted input.

Every failure is an :class:`~iotune.errors.IotuneError` whose one line names the file and
the rule it broke: missing, a directory, not a regular file (a named pipe, a device, a
socket), over its size limit, unreadable, not UTF-8 text, not YAML, YAML past its nesting
or alias limits, not a table. Nothing here raises ``UnicodeDecodeError``,
``IsADirectoryError``, ``RecursionError`` or a pandas parser error to the caller, and
nothing blocks: a special file is refused before it is opened for reading, an over-size
file before a byte of it is read. The error class is the caller's (a config is a
``ConfigError``, measurements a ``DataError``), so exit codes stay those of the kind of
file.

The limits are here, each with its reason; docs/campaigns.md ("Limits", "Files iotune
reads") lists them for users.
"""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from iotune.errors import ConfigError, DataError, IotuneError

if TYPE_CHECKING:
    import pandas as pd

#: Bytes of a YAML file iotune reads (a config, a tuned file, a model, a proxy, a system
#: file): 4 MiB. The largest iotune writes (a model file with its terms) is tens of KiB and
#: a hand-written config a few KiB; a file past this is refused from its size alone, before
#: it is read, so a 100 MiB file costs nothing.
MAX_YAML_BYTES = 4 * 2**20

#: Nesting levels of a YAML document: 64. iotune's documents nest a handful of levels
#: (a tuned file's ``files.<glob>.<setting>`` is four); the recursive reader needs about two
#: Python frames a level, so 64 stays far below the interpreter's recursion limit (1000)
#: and a deeper document is refused instead of ending in a ``RecursionError``.
MAX_YAML_DEPTH = 64

#: Values (scalars, lists and mappings) a YAML document may stand for, an alias counted
#: with every value of what it repeats: 100,000. iotune's own documents hold a few
#: thousand at most (a characterisation of many phases the most). Anchors that multiply
#: ("billion laughs") reach the bound after a few lines and are refused before anything is
#: built; plain values reach it only written out one by one, which takes a few seconds to
#: read for 100,000 (PyYAML's pure-Python reader), so the bound also caps that work.
MAX_YAML_VALUES = 100_000

#: Bytes of any other file iotune reads whole (a CSV of measurements, a preload report):
#: 512 MiB. A training plan holds at most a million runs (``MAX_PLAN_RUNS``), a few hundred
#: bytes each as a CSV row; a larger file would not fit in memory once parsed.
MAX_INPUT_BYTES = 512 * 2**20


class YamlLimitError(yaml.YAMLError):
    """A YAML document past :data:`MAX_YAML_DEPTH` or :data:`MAX_YAML_VALUES`; its text
    names the key path, the line and the limit (a ``yaml.YAMLError``, so callers that
    treat any unreadable YAML alike keep doing so)."""


def _size_text(size: int) -> str:
    """``4 MiB``, ``512 MiB``: a limit in binary units (the limits are whole MiB)."""
    return f"{size // 2**20} MiB" if size % 2**20 == 0 else f"{size} bytes"


_SPECIAL = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def special_kind(mode: int) -> str | None:
    """What a file of ``mode`` (``st_mode``) is when it is not a regular file or a
    directory (``a named pipe (FIFO)``...), else None."""
    for test, what in _SPECIAL:
        if test(mode):
            return what
    return None


def check_regular(path: str | os.PathLike[str], what: str,
                  error: type[IotuneError] = DataError) -> None:
    """``error`` when ``path`` exists and is a named pipe, a device or a socket: reading
    one would block or never end. Missing files and directories are left to the caller's
    own message."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    kind = special_kind(mode)
    if kind is not None:
        raise error(_not_regular(path, kind, what))


def _not_regular(path: str | os.PathLike[str], kind: str | None, what: str) -> str:
    """The message for ``path``, of ``kind`` (None: some other kind), given as a ``what``."""
    found = f"is {kind}, not a regular file" if kind else "is not a regular file"
    return f"{path}: {found}; a {what} must be a regular file"


def regular_file(path: str | os.PathLike[str], what: str,
                 error: type[IotuneError] = ConfigError) -> Path:
    """``path`` as a Path when it is a regular file (by ``stat``, before anything opens
    it); ``error`` naming it and the ``what`` when it is missing, unreadable, a directory
    or a special file."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise error(f"{p}: {what} not found") from None
    except OSError as exc:
        raise error(f"{p}: cannot read {what}: {exc.strerror}") from None
    if stat.S_ISDIR(mode):
        raise error(f"{p}: is a directory, not a {what}")
    if not stat.S_ISREG(mode):
        raise error(_not_regular(p, special_kind(mode), what))
    return p


def read_bytes(path: str | os.PathLike[str], what: str,
               error: type[IotuneError] = ConfigError, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, a ``what``; ``error`` when it is missing, a
    directory, a special file (refused before it is opened for reading, so a named pipe
    never blocks), larger than ``limit`` bytes (refused before it is read) or unreadable."""
    p = regular_file(path, what, error)
    try:
        # O_NONBLOCK: should the path become a named pipe after the check above, opening
        # it still returns at once, and the fstat below refuses it.
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise error(f"{p}: {what} not found") from None
    except OSError as exc:
        raise error(f"{p}: cannot read {what}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise error(_not_regular(p, special_kind(status.st_mode), what))
        if status.st_size > limit:
            raise error(f"{p}: {what} is {status.st_size} bytes, over the limit of "
                        f"{_size_text(limit)} for a {what}")
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise error(f"{p}: cannot read {what}: {exc.strerror}") from None
    if len(data) > limit:  # grew since the fstat
        raise error(f"{p}: {what} is over the limit of {_size_text(limit)} for a {what}")
    return data


def read_text(path: str | os.PathLike[str], what: str,
              error: type[IotuneError] = ConfigError, limit: int = MAX_INPUT_BYTES) -> str:
    """The text of ``path``, a ``what`` (``config file``, ``tuned file``...), as UTF-8.

    ``error`` (a subclass of IotuneError) when it is missing, a directory, a special file,
    over ``limit`` bytes, unreadable or not UTF-8 (see :func:`read_bytes`); the message
    names the path, and for bad bytes the first one's offset.
    """
    data = read_bytes(path, what, error, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{Path(path)}: {what} is not UTF-8 text (byte 0x{data[exc.start]:02x} "
                    f"at offset {exc.start})") from None


def load_yaml(path: str | os.PathLike[str], what: str,
              error: type[IotuneError] = ConfigError) -> Any:
    """The YAML document of ``path`` (see :func:`read_text`, at most
    :data:`MAX_YAML_BYTES`); ``error`` naming the line and column when it is not valid
    YAML, or the key path and the limit when it nests or expands past them."""
    text = read_text(path, what, error, MAX_YAML_BYTES)
    return parse_yaml(text, str(path), error)


def parse_yaml(text: str, name: str, error: type[IotuneError] = ConfigError) -> Any:
    """The YAML document of ``text`` read from ``name`` (see :func:`safe_load`); ``error``
    naming the line and column when it is malformed, the key path and the limit when it
    nests or expands past them."""
    try:
        return safe_load(text)
    except YamlLimitError as exc:
        raise error(f"{name}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        raise error(f"{name}: malformed YAML at {where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise error(f"{name}: malformed YAML: {str(exc).splitlines()[0]}") from None


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)`` within the limits: :class:`YamlLimitError` when the
    document nests deeper than :data:`MAX_YAML_DEPTH`, stands for more than
    :data:`MAX_YAML_VALUES` values (aliases counted with what they repeat) or holds an
    alias inside its own anchor (a structure that contains itself). Other malformed YAML
    raises what ``yaml.safe_load`` raises. The limits are checked as the document is read,
    so a refusal comes before the document is built."""
    loader = _LimitedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


class _LimitedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` counting, as it composes nodes, their nesting depth and the
    values they stand for. A node's count is its own value plus its children's; an alias
    counts what its anchor counted, so repeated anchors are counted as repeated."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._path: list[str] = []   # key path of the node being composed, for messages
        self._values = 0             # values composed so far, aliases expanded
        self._counted: dict[int, int] = {}  # id(anchored node): the values it stands for

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._path.append(_path_part(index))
        try:
            return self._compose_counted(parent, index)
        finally:
            self._path.pop()

    def _compose_counted(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            node = super().compose_node(parent, index)
            if id(node) not in self._counted:
                raise YamlLimitError(f"{self._where(event.start_mark)}: alias "
                                     f"*{event.anchor} inside its own anchor (a structure "
                                     "that contains itself); iotune reads only tree-shaped "
                                     "YAML")
            self._count(self._counted[id(node)], event)
            return node
        if len(self._path) > MAX_YAML_DEPTH:
            self._too_deep(event.start_mark)
        before = self._values
        self._count(1, event)  # before its children: a refusal comes at the first excess
        node = super().compose_node(parent, index)
        if event.anchor is not None:
            self._counted[id(node)] = self._values - before
        return node

    # The scanner reads ahead of the composer (up to 1024 characters for a possible
    # mapping key) and checks every open flow level for each token; refusing the depth
    # as it is scanned keeps a line of 100,000 '[' as quick to refuse as one of 65.
    def fetch_flow_collection_start(self, TokenClass: type[yaml.Token]) -> None:
        if self.flow_level >= MAX_YAML_DEPTH:
            self._too_deep(self.get_mark())
        super().fetch_flow_collection_start(TokenClass)

    def add_indent(self, column: int) -> bool:
        added: bool = super().add_indent(column)
        if len(self.indents) > MAX_YAML_DEPTH:
            self._too_deep(self.get_mark())
        return added

    def _too_deep(self, mark: Any) -> None:
        raise YamlLimitError(f"{self._where(mark)}: nested deeper than {MAX_YAML_DEPTH} "
                             "levels, the limit of a YAML file iotune reads")

    def _count(self, values: int, event: yaml.Event) -> None:
        self._values += values
        if self._values > MAX_YAML_VALUES:
            raise YamlLimitError(f"{self._where(event.start_mark)}: the document stands for "
                                 f"more than {MAX_YAML_VALUES} values (aliases counted "
                                 "with what they repeat), the limit of a YAML file iotune "
                                 "reads")

    def _where(self, mark: Any) -> str:
        """``measured.a.b (line 3)``: the key path composed so far (its first levels when
        it is long) and the line of ``mark``."""
        parts = [p for p in self._path if p]
        path = ".".join(parts[:4]).replace(".[", "[") or "the document"
        if len(parts) > 4:
            path += f" ({len(parts) - 4} levels below)"
        return f"{path} (line {mark.line + 1})" if mark is not None else path


def _path_part(index: Any) -> str:
    """The key path part of a node composed at ``index``: its key's text for a mapping
    value, ``[i]`` for a list item, nothing for a mapping key or the document."""
    if isinstance(index, yaml.ScalarNode):
        return str(index.value)
    if isinstance(index, int) and not isinstance(index, bool):
        return f"[{index}]"
    return ""


def parse_json(text: str, name: str, error: type[IotuneError] = DataError) -> Any:
    """The JSON value of ``text`` read from ``name``; ``error`` naming ``name`` when it is
    not JSON or nests deeper than the decoder recurses (a ``RecursionError`` never
    escapes)."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise error(f"{name}: not JSON ({exc})") from None
    except RecursionError:
        raise error(f"{name}: JSON nested too deeply to read") from None


def read_csv(path: str | os.PathLike[str], what: str = "CSV file") -> pd.DataFrame:
    """A CSV table with a header line; DataError when the file is missing, empty, not
    UTF-8 or not parseable as CSV (the message names the file and the rule)."""
    import pandas as pd

    p = Path(path)
    text = read_text(p, what, DataError)  # missing, special, too big, encoding: one line
    try:
        frame = pd.read_csv(io.StringIO(text))
    except pd.errors.EmptyDataError:
        raise DataError(f"{p}: {what} is empty (a header line naming the columns is "
                        "needed)") from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise DataError(f"{p}: {what} is not valid CSV: "
                        f"{str(exc).strip().splitlines()[-1]}") from None
    return frame
