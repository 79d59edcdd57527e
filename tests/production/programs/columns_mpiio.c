/*
 * columns_mpiio: an MPI-IO program writing its column of a row-major table.
 *
 *   columns_mpiio PATH ROWS
 *
 * The file is a ROWS x ranks table of doubles stored row by row; rank r owns column r, so
 * its ROWS values lie 8 bytes apart every (ranks x 8) bytes, the access of a program that
 * decomposes an array by columns. Each rank sets a vector file view and writes its column
 * with one independent MPI_File_write, through MPI_INFO_NULL (no hint of its own). ROMIO
 * writes such a strided access by data sieving unless romio_ds_write=disable, which makes
 * it one write call per value. Rank 0 prints one JSON line: the bytes written by all ranks
 * and the I/O time (open + write + close, slowest rank).
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
    if (argc < 3 || atoi(argv[2]) <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s PATH ROWS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rows = atoi(argv[2]);
    double *column = malloc((size_t)rows * sizeof(double));
    for (int i = 0; i < rows; i++)
        column[i] = (double)i * size + rank;  /* value = index in the file */
    MPI_Datatype strided;
    MPI_Type_vector(rows, 1, size, MPI_DOUBLE, &strided);
    MPI_Type_commit(&strided);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_view(fh, (MPI_Offset)rank * (MPI_Offset)sizeof(double), MPI_DOUBLE, strided,
                      "native", MPI_INFO_NULL);
    if (MPI_File_write(fh, column, rows, MPI_DOUBLE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_File_close(&fh);
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"bytes\": %lld, \"io_time_s\": %.9f}\n",
               (long long)rows * size * (long long)sizeof(double), slowest);
    MPI_Type_free(&strided);
    free(column);
    MPI_Finalize();
    return 0;
}
