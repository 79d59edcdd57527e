"""A job script submitted to the test's real Slurm and followed until it ends."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

#: The states in which a job has ended.
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")


def run_to_end(script: Path, env: dict[str, str], seconds: float = 300) -> tuple[str, str]:
    """Submit ``script`` with sbatch; its job id and the state it ended in ("" when it had
    not ended within ``seconds``)."""
    submitted = subprocess.run(["sbatch", "--parsable", str(script)], env=env,
                               capture_output=True, text=True, check=True)
    job = submitted.stdout.strip().split(";")[0]
    state = ""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        out = subprocess.run(["scontrol", "show", "job", job], env=env, capture_output=True,
                             text=True)
        state = next((w.split("=", 1)[1] for w in out.stdout.split()
                      if w.startswith("JobState=")), "")
        if state in ENDED:
            return job, state
        time.sleep(1)
    return job, ""
