"""``python -m iotune.preload [--force]``: build the preload library and print its path.

Exits 0 after printing the path (fast when the library is already built), 2 with one line
on stderr when it cannot be built.
"""

from __future__ import annotations

import argparse
import sys

from iotune.errors import ConfigError
from iotune.preload import build_library


def main(argv: list[str] | None = None) -> int:
    """Build (unless current) and print the library path; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m iotune.preload",
                                     description="Build the iotune preload library.")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    args = parser.parse_args(argv)
    try:
        path = build_library(force=args.force)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
