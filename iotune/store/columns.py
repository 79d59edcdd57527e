"""Columns of the store cache: JSON values kept as NumPy arrays, read back as pandas would.

A column of one partition of one cache segment is a :class:`Piece`, kept in one of two ways:

``num``
    every value is a number (int or float, not bool) or null, and at least one is a number:
    an int64 or float64 array, with a null mask (0 a number, 1 JSON null, 2 key absent) when
    some are null.
``dict``
    any JSON values: the distinct values (as one JSON text on disk) and int32 codes into
    them, -1 where the key is absent.

No pickle: a piece is arrays of plain dtypes and JSON, so a cache file planted by someone
else can give wrong numbers at worst, never run code.

:func:`combine` joins the pieces of one column over several partitions into what
``pandas.DataFrame`` infers from the same Python values (int64 when every value is an
int, float64 with NaN when numbers and nulls mix, otherwise the Python values themselves),
so a frame read through the cache equals one built from the parsed records.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Marks a key a record does not have (as opposed to a JSON null).
ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()

NUMBER, NULL, MISSING = 0, 1, 2
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass
class Piece:
    """``n`` values of one column: ``numbers`` (+ ``nulls``) or ``codes`` into ``uniques``."""

    n: int
    numbers: np.ndarray | None = None
    nulls: np.ndarray | None = None
    codes: np.ndarray | None = None
    uniques: list[Any] | None = None

    @property
    def kind(self) -> str:
        return "num" if self.numbers is not None else "dict"

    @classmethod
    def absent(cls, n: int) -> Piece:
        """A column a partition does not have: every value absent."""
        return cls(n, codes=np.full(n, -1, dtype=np.int32), uniques=[])

    def take(self, rows: np.ndarray) -> Piece:
        """The values at positions ``rows``."""
        if self.numbers is not None:
            nulls = None if self.nulls is None else self.nulls[rows]
            if nulls is not None and not (nulls != NUMBER).any():
                nulls = None
            return Piece(len(rows), numbers=self.numbers[rows], nulls=nulls)
        assert self.codes is not None
        return Piece(len(rows), codes=self.codes[rows], uniques=self.uniques)

    def objects(self, absent: Any = math.nan) -> np.ndarray:
        """The values as an object array (``absent`` where the key is absent)."""
        if self.numbers is not None:
            out = self.numbers.astype(object)
            if self.nulls is not None:
                out[self.nulls == NULL] = None
                out[self.nulls == MISSING] = absent
            return out
        assert self.codes is not None and self.uniques is not None
        table = np.empty(len(self.uniques) + 1, dtype=object)
        table[:-1] = self.uniques
        table[-1] = absent
        return table[self.codes]

    def values(self) -> list[Any]:
        """The values as Python objects, None where null or absent (``record.get``)."""
        return self.objects(absent=None).tolist()

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays that store this piece (suffix -> array)."""
        if self.numbers is not None:
            out = {"n": self.numbers}
            if self.nulls is not None:
                out["m"] = self.nulls
            return out
        assert self.codes is not None and self.uniques is not None
        text = json.dumps(self.uniques, separators=(",", ":"), allow_nan=True)
        return {"k": self.codes, "u": np.frombuffer(text.encode(), dtype=np.uint8)}

    @classmethod
    def from_arrays(cls, n: int, arrays: dict[str, np.ndarray]) -> Piece:
        if "n" in arrays:
            return cls(n, numbers=arrays["n"], nulls=arrays.get("m"))
        return cls(n, codes=arrays["k"], uniques=json.loads(arrays["u"].tobytes()))


_NUMBERS = (int, float)
#: Types whose values are their own dictionary keys (with the type: 1, 1.0 and True differ).
_SCALARS = frozenset((str, int, float, bool, type(None)))


def encode(values: Sequence[Any]) -> Piece:
    """One column of values (:data:`ABSENT` where a record lacks the key) as a piece."""
    n = len(values)
    types = set(map(type, values))
    if (int in types or float in types) and types <= {int, float, type(None), type(ABSENT)}:
        numbers = [v for v in values if type(v) in _NUMBERS]
        integral = float not in types
        if not integral or (min(numbers) >= INT64_MIN and max(numbers) <= INT64_MAX):
            dtype = np.int64 if integral else np.float64
            nulls = None
            if len(numbers) < n:
                nulls = np.array([NUMBER if type(v) in _NUMBERS else NULL if v is None
                                  else MISSING for v in values], dtype=np.int8)
                filled: Sequence[Any] = [v if type(v) in _NUMBERS else 0 for v in values]
            else:
                filled = values
            return Piece(n, numbers=np.array(filled, dtype=dtype), nulls=nulls)
    uniques: list[Any] = []
    index: dict[Any, int] = {}
    codes = []
    for value in values:
        if value is ABSENT:
            codes.append(-1)
            continue
        kind = type(value)
        key = (kind, value) if kind in _SCALARS else json.dumps(value, default=str)
        code = index.get(key)
        if code is None:
            code = index[key] = len(uniques)
            uniques.append(value)
        codes.append(code)
    return Piece(n, codes=np.array(codes, dtype=np.int32), uniques=uniques)


def combine(pieces: Sequence[Piece]) -> np.ndarray | list[Any]:
    """The column made of ``pieces`` in order, as ``pd.DataFrame`` would infer it from the
    Python values: int64 if all are ints, float64 (NaN for null or absent) if numbers mix
    with nulls or floats, else the Python values (NaN where absent) for pandas to infer."""
    numeric = [p for p in pieces if p.numbers is not None]
    if numeric and all(p.numbers is not None or p.uniques == [] for p in pieces):
        if len(numeric) == len(pieces) and all(
                p.numbers is not None and p.numbers.dtype == np.int64
                and (p.nulls is None or not (p.nulls != NUMBER).any()) for p in pieces):
            return np.concatenate([p.numbers for p in numeric if p.numbers is not None])
        parts = []
        for p in pieces:
            if p.numbers is None:  # a partition without the column
                parts.append(np.full(p.n, np.nan))
                continue
            array = p.numbers.astype(np.float64)
            if p.nulls is not None:
                array[p.nulls != NUMBER] = np.nan
            parts.append(array)
        return np.concatenate(parts)
    if not pieces:
        return []
    return np.concatenate([p.objects() for p in pieces]).tolist()
