"""A small MPI program that reports a bandwidth as IOR does (``Max Write: X MiB/sec``),
for tests of a bandwidth metric. It writes 64 KiB a rank to a file with MPI-IO (no hints
of its own: iotune hands them over through ``ROMIO_HINTS``) and its figure follows the
``romio_cb_write`` the file has in effect: disable about 2000 MiB/s, enable about 600, anything else
(ROMIO's automatic) about 800, each run within 3% of it. A first ``Max Write`` line, of a
warm-up, reports 1 MiB/s, so a metric that counts the first match sees the warm-up and
one that counts the last sees the run."""

import random
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
block = bytearray(64 * 1024)
fh = MPI.File.Open(comm, sys.argv[1], MPI.MODE_CREATE | MPI.MODE_WRONLY)
info = fh.Get_info()
hints = {info.Get_nthkey(i): info.Get(info.Get_nthkey(i)) for i in range(info.Get_nkeys())}
fh.Write_at_all(comm.rank * len(block), block)  # the open moves data: its hints count
fh.Close()
base = {"disable": 2000.0, "enable": 600.0}.get(hints.get("romio_cb_write", ""), 800.0)
figure = base * random.uniform(0.97, 1.03)
if comm.rank == 0:
    print("warm-up")
    print("Max Write: 1.00 MiB/sec (1.05 MB/sec)")
    print("Summary of all tests:")
    print(f"Max Write: {figure:.2f} MiB/sec ({figure * 1.048576:.2f} MB/sec)")
