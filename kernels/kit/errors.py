"""Exit codes and the one error type of the kernels."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1  # verification mismatch or an I/O failure during the run
EXIT_USAGE = 2  # bad command line or unusable scratch directory


class KernelError(Exception):
    """A failure every rank knows about, reported as one line on stderr.

    Raise it only at points that all ranks reach together (after a broadcast or a
    reduction), so that all ranks leave through the same path and nobody waits forever.
    """

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code
