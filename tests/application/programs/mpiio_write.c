/*
 * mpiio_write: an ordinary MPI-IO program that sets its own hints.
 *
 *   mpiio_write PATH MIB_PER_RANK [CHUNK_KIB]
 *
 * Every rank writes MIB_PER_RANK MiB of doubles (value = global index of the double) to
 * its own contiguous region of PATH with MPI_File_write_at_all, CHUNK_KIB (default 256)
 * at a time, through an MPI_Info of its own (cb_buffer_size=1048576,
 * romio_cb_write=enable). Rank 0 prints one JSON line: the bytes written by all ranks and
 * the I/O time (open + writes + close, slowest rank).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s PATH MIB_PER_RANK [CHUNK_KIB]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long long per_rank = atoll(argv[2]) * 1048576LL;
    long long chunk = (argc > 3 ? atoll(argv[3]) : 256) * 1024LL;
    if (per_rank <= 0 || chunk <= 0 || per_rank % chunk != 0) {
        if (rank == 0)
            fprintf(stderr, "MIB_PER_RANK must be a positive multiple of CHUNK_KIB\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = (int)(chunk / (long long)sizeof(double));
    double *buf = malloc((size_t)chunk);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "romio_cb_write", "enable");

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh)
        != MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Info_free(&info);
    for (long long done = 0; done < per_rank; done += chunk) {
        long long first = (rank * per_rank + done) / (long long)sizeof(double);
        for (int i = 0; i < n; i++)
            buf[i] = (double)(first + i);
        MPI_File_write_at_all(fh, (MPI_Offset)(rank * per_rank + done), buf, n, MPI_DOUBLE,
                              MPI_STATUS_IGNORE);
    }
    MPI_File_close(&fh);
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"bytes\": %lld, \"io_time_s\": %.9f}\n", per_rank * size, slowest);
    free(buf);
    MPI_Finalize();
    return 0;
}
