/*
 * files_write: an MPI-IO program that writes several files with the same pattern, as an
 * application writes a checkpoint, a plot file and a log.
 *
 *   files_write MIB_PER_RANK PATH...
 *
 * For each path in turn, every rank writes MIB_PER_RANK MiB of doubles to its own
 * contiguous region with one MPI_File_write_at_all, through MPI_INFO_NULL (no hints of its
 * own), and closes the file. Rank 0 prints one JSON line: the bytes written per file by
 * all ranks.
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
    long long per_rank = argc >= 3 ? atoll(argv[1]) * 1048576LL : 0;
    if (per_rank <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s MIB_PER_RANK PATH...\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = (int)(per_rank / (long long)sizeof(double));
    double *buf = malloc((size_t)per_rank);
    for (int i = 0; i < n; i++)
        buf[i] = (double)(rank * (long long)n + i);
    for (int k = 2; k < argc; k++) {
        MPI_File fh;
        if (MPI_File_open(MPI_COMM_WORLD, argv[k], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                          MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
            fprintf(stderr, "cannot open %s\n", argv[k]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_File_write_at_all(fh, (MPI_Offset)(rank * per_rank), buf, n, MPI_DOUBLE,
                              MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
    }
    if (rank == 0)
        printf("{\"bytes_per_file\": %lld}\n", per_rank * size);
    free(buf);
    MPI_Finalize();
    return 0;
}
