/*
 * columns_h5: a parallel HDF5 program writing its columns of a 2-D dataset, with the
 * MPI-IO hints a site once advised.
 *
 *   columns_h5 PATH ROWS
 *
 * Creates PATH through an MPI-IO file-access list whose MPI_Info carries the program's own
 * hints, romio_cb_write=disable and romio_ds_write=disable (advice once given against
 * lock contention), and writes the ROWS x ranks dataset "/data" of doubles (value = index)
 * collectively, rank r its column r: ROWS values 8 bytes apart in the file. Under its own
 * hints ROMIO writes that column one value per write call; with data sieving
 * (romio_ds_write=enable, which the preload library can inject over the program's hint)
 * it writes whole buffers. Rank 0 prints one JSON line: the bytes of the dataset and the
 * I/O time (create + write + close, slowest rank).
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || atoll(argv[2]) <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s PATH ROWS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hsize_t rows = (hsize_t)atoll(argv[2]);
    double *column = malloc(rows * sizeof(double));
    for (hsize_t i = 0; i < rows; i++)
        column[i] = (double)(i * (hsize_t)size + (hsize_t)rank);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "disable");
    MPI_Info_set(info, "romio_ds_write", "disable");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info);
    MPI_Info_free(&info);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    hsize_t dims[2] = {rows, (hsize_t)size}, start[2] = {0, (hsize_t)rank},
            count[2] = {rows, 1};
    hid_t fspace = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, "data", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    hid_t mspace = H5Screate_simple(2, count, NULL);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    if (H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, column) < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    H5Dclose(dset);
    H5Fclose(file);
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"bytes\": %llu, \"io_time_s\": %.9f}\n",
               (unsigned long long)(rows * (hsize_t)size * sizeof(double)), slowest);
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Pclose(fapl);
    free(column);
    MPI_Finalize();
    return 0;
}
