"""Reading the files a user names (configs, tuned files, proxies, CSVs) as untrusted input.

Every failure is an :class:`~iotune.errors.IotuneError` whose one line names the file and
the rule it broke: missing, a directory, unreadable, not UTF-8 text, not YAML, not a
table. Nothing here raises ``UnicodeDecodeError``, ``IsADirectoryError`` or a pandas
parser error to the caller. The error class is the caller's (a config is a
``ConfigError``, measurements a ``DataError``), so exit codes stay those of the kind of
file.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from iotune.errors import ConfigError, DataError, IotuneError

if TYPE_CHECKING:
    import pandas as pd


def read_text(path: str | os.PathLike[str], what: str,
              error: type[IotuneError] = ConfigError) -> str:
    """The text of ``path``, a ``what`` (``config file``, ``tuned file``...), as UTF-8.

    ``error`` (a subclass of IotuneError) when it is missing, a directory, unreadable or
    not UTF-8; the message names the path, and for bad bytes the first one's offset.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise error(f"{p}: {what} not found") from None
    except IsADirectoryError:
        raise error(f"{p}: is a directory, not a {what}") from None
    except OSError as exc:
        raise error(f"{p}: cannot read {what}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{p}: {what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                    f"offset {exc.start})") from None


def load_yaml(path: str | os.PathLike[str], what: str,
              error: type[IotuneError] = ConfigError) -> Any:
    """The YAML document of ``path`` (see :func:`read_text`); ``error`` naming the line and
    column when it is not valid YAML."""
    text = read_text(path, what, error)
    return parse_yaml(text, str(path), error)


def parse_yaml(text: str, name: str, error: type[IotuneError] = ConfigError) -> Any:
    """The YAML document of ``text`` read from ``name``; ``error`` naming the line and
    column when it is malformed."""
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        raise error(f"{name}: malformed YAML at {where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise error(f"{name}: malformed YAML: {str(exc).splitlines()[0]}") from None


def read_csv(path: str | os.PathLike[str], what: str = "CSV file") -> pd.DataFrame:
    """A CSV table with a header line; DataError when the file is missing, empty, not
    UTF-8 or not parseable as CSV (the message names the file and the rule)."""
    import pandas as pd

    p = Path(path)
    text = read_text(p, what, DataError)  # missing, directory, encoding: one line each
    try:
        frame = pd.read_csv(io.StringIO(text))
    except pd.errors.EmptyDataError:
        raise DataError(f"{p}: {what} is empty (a header line naming the columns is "
                        "needed)") from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise DataError(f"{p}: {what} is not valid CSV: "
                        f"{str(exc).strip().splitlines()[-1]}") from None
    return frame
