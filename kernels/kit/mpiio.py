"""The MPI-IO layer: hints from the command line into ``MPI.Info``, and back from the file.

Flags: the catalogue's ``mpiio`` settings (``--cb-nodes`` ...), ``--hint KEY=VALUE`` for
any other hint and ``--hints-file``. Hints come from, in increasing precedence: the hints
file, ``--hint``, the dedicated flags of the ``lustre`` and ``mpiio`` settings; a ``--hint``
that contradicts a dedicated flag is an error. What the open file reports
(``MPI_File_get_info``) is read back and compared with what was asked.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iotune.settings.catalogue import SETTINGS, SettingValueError, mpiio_hints, parse_hint
from iotune.settings.in_effect import compare_hints

from .arguments import add_layer, given_settings
from .errors import KernelError
from .mpi import mpi


def key_value(text: str) -> tuple[str, str]:
    """argparse ``type=`` for ``KEY=VALUE`` (an MPI-IO hint); both parts non-empty."""
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    try:
        return parse_hint(key.strip(), value)
    except SettingValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def hints_file(text: str) -> tuple[str, dict[str, str]]:
    """argparse ``type=`` reading a ROMIO hints file: ``key value`` per line.

    Blank lines and lines starting with ``#`` are skipped. Returns (path, hints).
    """
    try:
        lines = Path(text).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {text!r}: {exc.strerror}") from None
    hints: dict[str, str] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) != 2:
            raise argparse.ArgumentTypeError(
                f"{text}:{number}: {line!r} is not 'key value' (ROMIO hints file format)"
            )
        try:
            key, value = parse_hint(parts[0], parts[1])
        except SettingValueError as exc:
            raise argparse.ArgumentTypeError(f"{text}:{number}: {exc}") from None
        hints[key] = value
    return text, hints


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The MPI-IO hint flags."""
    romio = parser.add_argument_group("MPI-IO (ROMIO) hints")
    add_layer(romio, "mpiio")
    romio.add_argument(
        "--hint",
        type=key_value,
        action="append",
        metavar="KEY=VALUE",
        help="any other MPI-IO hint; repeatable",
    )
    romio.add_argument(
        "--hints-file",
        type=hints_file,
        metavar="FILE",
        help="ROMIO hints file: one 'key value' per line, # starts a comment",
    )


def requested_hints(args: argparse.Namespace) -> dict[str, str]:
    """MPI-IO hints from the hints file, ``--hint`` and the dedicated flags, merged.

    Precedence (lowest first): hints file, ``--hint``, dedicated flags. Raises
    ``KernelError`` when a ``--hint`` contradicts a dedicated flag.
    """
    hints: dict[str, str] = {}
    if args.hints_file is not None:
        hints.update(args.hints_file[1])
    extra = dict(args.hint or [])
    hints.update(extra)
    for name, value in given_settings(args).items():
        setting = SETTINGS[name]
        if setting.hint is None:
            continue
        text = mpiio_hints({name: value})[setting.hint]
        if setting.hint in extra and extra[setting.hint] != text:
            raise KernelError(
                f"--hint {setting.hint}={extra[setting.hint]} contradicts {setting.flag} "
                f"{text}; give the value once"
            )
        hints[setting.hint] = text
    return hints


def make_info(hints: Mapping[str, str]) -> Any:
    """An ``MPI.Info`` holding ``hints`` (``MPI.INFO_NULL`` when empty)."""
    MPI = mpi()
    if not hints:
        return MPI.INFO_NULL
    info = MPI.Info.Create()
    for key, value in hints.items():
        info.Set(key, value)
    return info


def info_to_dict(info: Any) -> dict[str, str]:
    """All key/value pairs of an ``MPI.Info`` as a dict (empty for ``INFO_NULL``)."""
    MPI = mpi()
    if info == MPI.INFO_NULL:
        return {}
    keys = [info.Get_nthkey(i) for i in range(info.Get_nkeys())]
    return {key: str(info.Get(key)) for key in keys}


def file_hints(mpi_file: Any) -> dict[str, str]:
    """The hints in effect on an open ``MPI.File`` (``MPI_File_get_info``)."""
    info = mpi_file.Get_info()
    try:
        return info_to_dict(info)
    finally:
        info.Free()


def hints_not_in_effect(requested: Mapping[str, str], in_effect: Mapping[str, str]) -> dict:
    """Requested hints that the open file does not report with the requested value (as
    :func:`iotune.settings.in_effect.compare_hints` judges it)."""
    return {key: {"requested": wanted, "in_effect": got}
            for key, (wanted, got) in compare_hints(requested, in_effect).items()}
