"""How fast a hostile input file is refused (a benchmark script, not a timed test).

Runs ``iotune`` as a user would (a new process each time, so start-up is included) on
files that, unbounded, would hang it or run it out of memory: a tuned file of 100 MiB, a
named pipe, anchors that expand to 10^9 values, and YAML nested 100,000 and 50,000 deep,
given to ``apply``, ``job start --candidate`` and ``results -c``. The first row times
``iotune --version`` alone, the start-up every row includes. Target: each refused in one
line, with a non-zero exit, within 2 s.

    python benchmarks/input_limits.py
    python benchmarks/input_limits.py --quick     # two cases; the time is shown, not judged
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from refusals import chosen_cases, judged_row, print_header, timed_refusal, verdict

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"target: refused in one line within 2 s: (met|not judged|\d+ case)"
#: Cases a --quick run tries.
QUICK_CASES = 2

HEAD = "kernel: vpic\ncores: 4\nsettings: {cb_nodes: 2}\n"
LAUGHS = "measured:\n  l0: &l0 [" + ", ".join(["lol"] * 10) + "]\n" + "".join(
    f"  l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]\n" for n in range(1, 9))
CANDIDATE = ["job", "start", "--tag", "x", "--job-id", "1", "--candidate"]

#: name: (file name, what to write there: text, or None for a named pipe, command)
CASES: dict[str, tuple[str, str | None, list[str]]] = {
    "apply: named pipe": ("pipe.yaml", None, ["apply"]),
    "apply: billion laughs under measured:": ("laughs.yaml", HEAD + LAUGHS, ["apply"]),
    "apply: 100 MiB tuned file": ("big.yaml", "", ["apply"]),
    "job start --candidate: 100 MiB": ("big.yaml", "", CANDIDATE),
    "results -c: 100 MiB": ("big.yaml", "", ["results", "-c"]),
    "apply: [ x 100000": ("flow.yaml", HEAD + "best_found: " + "[" * 100_000 + "\n",
                          ["apply"]),
    "job start --candidate: {a: x 50000": ("map.yaml", HEAD + "best_found: " + "{a: " * 50_000
                                           + "\n", CANDIDATE),
    "results -c: named pipe": ("pipe.yaml", None, ["results", "-c"]),
}


def _write(path: Path, text: str | None) -> None:
    if path.exists():
        return
    if text is None:
        os.mkfifo(path)
    elif text == "":  # the 100 MiB file: a reason of 100 MiB after a good head
        with path.open("w") as out:
            out.write(HEAD + "reason: ")
            for _ in range(100):
                out.write("x" * 2**20)
            out.write("\n")
    else:
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    cases, quick = chosen_cases(__doc__, CASES, QUICK_CASES, argv)
    failed = 0
    print_header()
    with tempfile.TemporaryDirectory() as work:
        seconds, _, _ = timed_refusal(["--version"], work)
        print(f"{'(start-up: iotune --version)':40s} {seconds:8.2f}")
        for name, (file, text, command) in cases:
            _write(Path(work, file), text)
            seconds, code, errors = timed_refusal([*command, file], work)
            failed += not judged_row(name, seconds, code, errors, quick)
    return verdict(failed, quick)


if __name__ == "__main__":
    sys.exit(main())
