"""Helpers for the Darshan tests: pydarshan's sample logs, read once per session."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from iotune.darshan.classes import SignatureClass, equivalence_classes
from iotune.darshan.logfile import DarshanLog, read_log
from iotune.darshan.records import file_counters
from iotune.workload.counters import FileCounters

IOR_HDF5 = "ior_hdf5_example.darshan"
VPIC = "example.darshan"
IOR_FPP = "sample-badost.darshan"
DXT = "dxt.darshan"
MACSIO = "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan"
NO_POSIX = "noposix.darshan"


def sample_log(name: str) -> Path:
    """A log shipped with pydarshan (found through its package, never a fixed path)."""
    from darshan.examples import example_logs

    path = Path(example_logs.__file__).parent / name
    assert path.is_file(), f"pydarshan no longer ships {name}"
    return path


@cache
def cached_log(name: str) -> DarshanLog:
    """:func:`read_log` of a sample log, read once per test session."""
    return read_log(sample_log(name))


@cache
def cached_files(name: str) -> list[FileCounters]:
    """:func:`file_counters` of a sample log, computed once per test session."""
    return file_counters(cached_log(name))


@cache
def cached_classes(name: str) -> list[SignatureClass]:
    """The equivalence classes (default threshold) of a sample log, computed once."""
    return equivalence_classes(cached_files(name))
