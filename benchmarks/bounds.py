"""How fast a value above a limit is refused (a benchmark script, not a timed test).

Runs ``iotune`` as a user would (a new process each time, so start-up is included) on
inputs that, unbounded, would grow without end: a training plan of 10^18 repetitions, a
space of 10^8 configurations, 10^40 particles per rank, 10^20 ranks, a tune budget of
10^11, a timeout or a noise level that is not a number, 10^20 seconds of I/O, 10^20
simulated targets and a simulated probe of 300 days. Target: each refused in one line,
with a non-zero exit, within 2 s.

    python benchmarks/bounds.py
    python benchmarks/bounds.py --quick     # two cases; the time is shown, not judged
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from refusals import chosen_cases, judged_row, print_header, timed_refusal, verdict

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"target: refused in one line within 2 s: (met|not judged|\d+ case)"
#: Cases a --quick run tries.
QUICK_CASES = 2

SPACE_1E8 = "{" + ", ".join(f"{name}: [{', '.join(str(65536 * i) for i in range(1, 101))}]"
                            for name in ("stripe_size", "cb_buffer_size", "alignment",
                                         "sieve_buf_size")) + "}"

CASES = {
    "train.repetitions 10^18 (--dry-run)": (
        "space: {cb_nodes: [1, 2]}\ntrain: {repetitions: 1000000000000000000, "
        "scales: [{cores: 2}]}\n", ["train", "-c", "c.yaml", "--dry-run"]),
    "space of 10^8 configurations": (
        f"space: {SPACE_1E8}\ntrain: {{scales: [{{cores: 2}}]}}\n",
        ["train", "-c", "c.yaml", "--dry-run"]),
    "particles_per_rank 10^40": (
        "kernel: {name: vpic, args: {particles_per_rank: 1" + "0" * 40 + "}}\n",
        ["status", "-c", "c.yaml"]),
    "--cores 10^20": ("", ["tune", "--backend", "sim", "--system", "hopper", "--cores",
                           "1" + "0" * 20]),
    "--budget 10^11": ("", ["tune", "--backend", "sim", "--system", "hopper", "--cores",
                            "512", "--budget", "1" + "0" * 11]),
    "system.timeout .nan (--dry-run)": (
        "system: {timeout: .nan}\nspace: {cb_nodes: [1, 2]}\ntrain: {scales: [{cores: 2}]}\n",
        ["train", "-c", "c.yaml", "--dry-run"]),
    "train --noise nan": ("backend: {name: sim}\nspace: {cb_nodes: [1, 2]}\n"
                          "train: {scales: [{cores: 2}]}\n",
                          ["train", "-c", "c.yaml", "--noise", "nan"]),
    "job finish --seconds 1e20": ("", ["job", "finish", "--tag", "x", "--job-id", "1",
                                       "--seconds", "1e20"]),
    "probe --simulate --targets 10^20": ("", ["probe", "--simulate", "hopper", "--targets",
                                              "1" + "0" * 20]),
    "probe --simulate 300 days every 1 s": ("", ["probe", "--simulate", "hopper", "--interval",
                                                 "1s", "--duration", "300d"]),
}


def main(argv: list[str] | None = None) -> int:
    cases, quick = chosen_cases(__doc__, CASES, QUICK_CASES, argv)
    failed = 0
    print_header()
    with tempfile.TemporaryDirectory() as work:
        for name, (config, command) in cases:
            Path(work, "c.yaml").write_text(config)
            seconds, code, errors = timed_refusal(command, work)
            failed += not judged_row(name, seconds, code, errors, quick)
    return verdict(failed, quick)


if __name__ == "__main__":
    sys.exit(main())
