/*
 * reopen_self: a collective write, then rank 0 alone reopens the file for its size, as
 * IOR does after writing (MPI_COMM_SELF, no data moved).
 *
 *   reopen_self PATH MIB_PER_RANK
 *
 * Every rank writes MIB_PER_RANK MiB to its own region of PATH with MPI_File_write_at_all,
 * 256 KiB at a time, through MPI_INFO_NULL (the run's hints come from outside), and closes
 * it; then rank 0 opens PATH with MPI_COMM_SELF, reads its size with MPI_File_get_size
 * and closes it. Rank 0 prints one JSON line: the bytes written by all ranks and the size.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNK (256 * 1024)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long per_rank = argc > 2 ? atoll(argv[2]) * 1048576LL : 0;
    if (per_rank <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s PATH MIB_PER_RANK\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = malloc(CHUNK);
    for (int i = 0; i < CHUNK; i++)
        buf[i] = (char)(rank + i);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long long done = 0; done < per_rank; done += CHUNK)
        MPI_File_write_at_all(fh, (MPI_Offset)(rank * per_rank + done), buf, CHUNK, MPI_BYTE,
                              MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    if (rank == 0) {
        MPI_Offset bytes = 0;
        if (MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)
            != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_File_get_size(fh, &bytes);
        MPI_File_close(&fh);
        printf("{\"bytes\": %lld, \"size\": %lld}\n", per_rank * size, (long long)bytes);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
