/*
 * h5_write: an ordinary parallel HDF5 program using the MPI-IO driver.
 *
 *   h5_write PATH DOUBLES_PER_RANK
 *
 * Creates PATH with H5Fcreate through an MPI-IO file-access list carrying its own
 * MPI_Info (cb_buffer_size=1048576), writes the 1-D dataset "/data" of
 * ranks x DOUBLES_PER_RANK doubles (value = index) collectively, each rank its slab,
 * closes it, then reopens it with H5Fopen and checks its slab. Rank 0 prints "ok".
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static hid_t mpio_fapl(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info);
    MPI_Info_free(&info);
    return fapl;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || atoll(argv[2]) <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s PATH DOUBLES_PER_RANK\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hsize_t n = (hsize_t)atoll(argv[2]);
    hsize_t total = n * (hsize_t)size, start = n * (hsize_t)rank;
    double *buf = malloc(n * sizeof(double));
    for (hsize_t i = 0; i < n; i++)
        buf[i] = (double)(start + i);

    hid_t fapl = mpio_fapl();
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    hid_t fspace = H5Screate_simple(1, &total, NULL);
    hid_t dset = H5Dcreate2(file, "data", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    hid_t mspace = H5Screate_simple(1, &n, NULL);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &n, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    if (H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf) < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    H5Dclose(dset);
    H5Fclose(file);

    for (hsize_t i = 0; i < n; i++)
        buf[i] = -1.0;
    file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    if (file < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    dset = H5Dopen2(file, "data", H5P_DEFAULT);
    if (H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf) < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int bad = 0, anybad = 0;
    for (hsize_t i = 0; i < n; i++)
        bad |= buf[i] != (double)(start + i);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    H5Dclose(dset);
    H5Fclose(file);
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Pclose(fapl);
    if (rank == 0)
        printf(anybad ? "read back wrong values\n" : "ok\n");
    free(buf);
    MPI_Finalize();
    return anybad;
}
