"""Whether the MPI-IO hints a run asked for are the ones its file had.

A run reads the hints in effect back from its file (``MPI_File_get_info``, kept in
``result.hints_in_effect``). A requested hint took effect when the file reports the same
value: equal as text (ignoring case and surrounding blanks) or as integers (ROMIO reports
byte sizes in bytes, as iotune sends them). A hint the file does not report at all is
*absent*: the MPI library or file system ignored it, or the name is unknown to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.catalogue import mpiio_hints


def same_hint_value(requested: str, in_effect: str) -> bool:
    """Whether a hint read back as ``in_effect`` is the ``requested`` value."""
    a, b = str(requested).strip(), str(in_effect).strip()
    if a.lower() == b.lower():
        return True
    try:
        return int(a) == int(b)
    except ValueError:
        return False


def hints_not_in_effect(settings: Mapping[str, Any], in_effect: Mapping[str, str]
                        ) -> dict[str, tuple[str, str | None]]:
    """The requested hints of canonical ``settings`` that ``in_effect`` does not show:
    hint name -> (requested value, value in effect or None when absent). Empty when
    ``in_effect`` is empty (the run read nothing back, e.g. a simulated run)."""
    if not in_effect:
        return {}
    missing: dict[str, tuple[str, str | None]] = {}
    for hint, wanted in mpiio_hints(settings).items():
        got = in_effect.get(hint)
        if got is None or not same_hint_value(wanted, got):
            missing[hint] = (wanted, got)
    return missing


def describe_not_in_effect(missing: Mapping[str, tuple[str, str | None]]) -> str:
    """One line for a table cell: ``cb_nodes=4 (in effect: 1), striping_factor=4 (absent)``."""
    return ", ".join(f"{hint}={wanted} ({'absent' if got is None else 'in effect: ' + got})"
                     for hint, (wanted, got) in missing.items())
