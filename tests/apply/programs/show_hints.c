/*
 * show_hints.c - a plain MPI-IO program, unaware of iotune: each rank writes 1 MiB of
 * one shared file with MPI_File_write_at_all, opened with MPI_INFO_NULL. Rank 0 prints
 * the hints the file had (MPI_File_get_info), one "hint <key>=<value>" line each, and the
 * variables a job script may set for the MPI library, one "env <name>=<value>" line each.
 *
 *   mpiexec -n 2 ./show_hints PATH
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: %s PATH\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int bytes = 1 << 20;
    char *buf = malloc(bytes);
    memset(buf, 'a' + rank % 26, bytes);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_write_at_all(fh, (MPI_Offset)rank * bytes, buf, bytes, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    if (rank == 0) {
        MPI_Info info;
        int nkeys;
        MPI_File_get_info(fh, &info);
        MPI_Info_get_nkeys(info, &nkeys);
        for (int i = 0; i < nkeys; i++) {
            char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
            int flag;
            MPI_Info_get_nthkey(info, i, key);
            MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
            if (flag)
                printf("hint %s=%s\n", key, value);
        }
        MPI_Info_free(&info);
        for (char **e = environ; *e != NULL; e++)
            if (strncmp(*e, "MPICH_MPIIO_HINTS=", 18) == 0
                || strncmp(*e, "IOR_HINT__", 10) == 0 || strncmp(*e, "ROMIO_HINTS=", 12) == 0)
                printf("env %s\n", *e);
    }
    MPI_File_close(&fh);
    free(buf);
    MPI_Finalize();
    return 0;
}
