"""The application's side of a comparison: one signature class of its log, and what to
leave out of it.

``iotune match`` and ``iotune proxy`` compare kernels with one signature class of the
application's files (by default the one that moved the most bytes). Features the log's
Darshan version cannot observe (:func:`~iotune.darshan.signature.unobservable`) and those
the user leaves out are masked, so they count in no similarity.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iotune.darshan.classes import (
    DEFAULT_THRESHOLD,
    SignatureClass,
    equivalence_classes,
    pick_class,
)
from iotune.darshan.logfile import DarshanLog
from iotune.darshan.records import read_counters
from iotune.darshan.signature import feature_mask, unobservable
from iotune.errors import ConfigError


@dataclass(frozen=True)
class SignatureTarget:
    """The chosen class of ``log``, the feature ``mask`` (0 for a left-out feature) and
    the names of the ``ignored`` features (the unobservable ones first)."""

    log: DarshanLog
    chosen: SignatureClass
    mask: np.ndarray
    ignored: list[str]


def signature_target(path: str | os.PathLike[str], threshold: float = DEFAULT_THRESHOLD,
                     class_index: int | None = None,
                     ignored: Sequence[str] = ()) -> SignatureTarget:
    """Read the log at ``path`` and choose the class ``class_index`` of its files grouped
    at cosine similarity ``threshold`` (None: the class that moved the most bytes).

    DataError when the log cannot be read, has no POSIX, MPI-IO or HDF5 records, or has no
    such class; ConfigError (naming ``--ignore-feature``) for an unknown feature name.
    """
    log, files = read_counters(path, "a signature")
    chosen = pick_class(equivalence_classes(files, threshold), class_index, str(path))
    names = list(dict.fromkeys([*unobservable(log.lib_version), *ignored]))
    try:
        mask = feature_mask(names)
    except ValueError as exc:
        raise ConfigError(f"--ignore-feature: {exc}") from None
    return SignatureTarget(log, chosen, mask, names)
