"""A small, unmodified mpi4py program, as a user might have: it writes a shared file with
MPI-IO (no hints of its own), prints the hints in effect and its write time."""

import sys
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
path, mib = sys.argv[1], int(sys.argv[2])
block = np.full(mib * 2**20, comm.rank % 251, dtype=np.uint8)
fh = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_WRONLY)
info = fh.Get_info()
hints = {info.Get_nthkey(i): info.Get(info.Get_nthkey(i)) for i in range(info.Get_nkeys())}
comm.Barrier()
start = time.perf_counter()
fh.Write_at_all(comm.rank * block.nbytes, block)
fh.Sync()
elapsed = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
fh.Close()
if comm.rank == 0:
    for key in ("cb_buffer_size", "romio_cb_write", "cb_nodes"):
        print(f"hint {key}={hints.get(key)}")
    print(f"write time: {elapsed:.6f} s")
