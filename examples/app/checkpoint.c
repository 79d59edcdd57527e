/* A small stand-in for a user's simulation code: every rank writes its slab of one 1-D
 * dataset per variable into a shared HDF5 checkpoint, through the MPI-IO driver, with the
 * MPI_Info its authors chose. iotune tunes it without changing a line.
 *
 *   usage: checkpoint OUTPUT.h5 MIB_PER_RANK [VARIABLES]
 *
 * Prints "checkpoint write: <seconds> s" (slowest rank, open to close) on rank 0.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: %s OUTPUT.h5 MIB_PER_RANK [VARIABLES]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *path = argv[1];
    hsize_t mib = (hsize_t)atoll(argv[2]);
    int variables = argc > 3 ? atoi(argv[3]) : 4;
    hsize_t count = mib * 1024 * 1024 / sizeof(double) / (hsize_t)variables;
    double *data = malloc(count * sizeof(double));
    for (hsize_t i = 0; i < count; i++) data[i] = (double)rank + (double)i * 1e-6;

    /* The application's own hints: what its authors once found good on their machine. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "romio_cb_write", "enable");

    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t total = count * (hsize_t)size, offset = count * (hsize_t)rank;
    hid_t filespace = H5Screate_simple(1, &total, NULL);
    hid_t memspace = H5Screate_simple(1, &count, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    for (int v = 0; v < variables; v++) {
        char name[32];
        snprintf(name, sizeof name, "var%d", v);
        hid_t dset = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, filespace, H5P_DEFAULT,
                                H5P_DEFAULT, H5P_DEFAULT);
        H5Sselect_hyperslab(filespace, H5S_SELECT_SET, &offset, NULL, &count, NULL);
        H5Dwrite(dset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, data);
        H5Dclose(dset);
    }
    H5Pclose(dxpl);
    H5Sclose(memspace);
    H5Sclose(filespace);
    H5Fclose(file);
    H5Pclose(fapl);
    double elapsed = MPI_Wtime() - start, slowest;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("checkpoint write: %.6f s\n", slowest);
    MPI_Info_free(&info);
    free(data);
    MPI_Finalize();
    return 0;
}
