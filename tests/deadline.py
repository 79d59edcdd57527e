"""A time limit for a test step that would hang if the code under test regressed (opening a
named pipe blocks until a writer comes): the step fails instead of stopping the run."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class TooSlow(AssertionError):
    """The step outran its time limit."""


@contextmanager
def within(seconds: float, what: str = "the step") -> Iterator[None]:
    """Run the block, failing it with :class:`TooSlow` once ``seconds`` have passed. The
    alarm signal interrupts a blocked ``open``; main thread only (as pytest runs tests)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise TooSlow(f"{what} took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < seconds, f"{what} took more than {seconds} s"
