"""A stand-in for a user's program whose runs take a while: notes its pid, sleeps, reports.

Usage: slow_app.py OUTPUT PID_DIR. Writes its pid to PID_DIR/<pid>, sleeps as many seconds
as PID_DIR/seconds says, writes a few bytes to OUTPUT and prints ``write time: <s>``; exits
without writing when PID_DIR/fail exists (a configuration that fails). The duration is in a
file, not an argument, so that a test can change it without changing the command, which is
part of every configuration's identity.
"""

import os
import sys
import time
from pathlib import Path

output, pid_dir = Path(sys.argv[1]), Path(sys.argv[2])
seconds = float((pid_dir / "seconds").read_text())
(pid_dir / str(os.getpid())).write_text("")
if (pid_dir / "fail").exists():
    sys.exit("slow_app: failing on purpose")
started = time.monotonic()
time.sleep(seconds)
output.write_bytes(b"x" * 4096)
print(f"write time: {time.monotonic() - started:.3f}")
