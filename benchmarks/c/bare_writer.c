/*
 * bare_writer: the C reference for the IOR-style kernel (kernels/ior.py).
 *
 * Same access pattern, same data and the same timed region as the kernel, with nothing
 * else: each rank writes SEGMENTS blocks of BLOCK bytes in write calls of TRANSFER bytes,
 * to one shared file or one file per rank, through POSIX, MPI-IO or HDF5.
 *
 *   shared file:       offset = (segment * ranks + rank) * block + i * transfer
 *   file per process:  offset = segment * block + i * transfer, in the rank's own file
 *
 * Data, byte for byte the kernel's: a transfer of T bytes at byte offset s is the first T
 * bytes of the little-endian 64-bit words W0, W1, ... with W0 = s + (tag << 48) (mod 2^64,
 * the header word, set per transfer) and Wk = 8k + ((tag mod 2^16) << 48) for k >= 1 (the
 * ramp, built once); tag 0 for the shared file and rank + 1 for a rank's own file.
 *
 * Timed region (as in the kernel): all ranks meet at a barrier; each rank then times
 *   open   -- open/create the file (HDF5: file, then the one uint8 dataset "data"),
 *   write  -- the write calls only (setting each transfer's header word is not timed),
 *   close  -- fsync when --fsync yes (MPI_File_sync / H5Fflush), then close;
 * total = open + write + close per rank. Rank 0 prints one JSON line with the maximum
 * over ranks of each and bandwidth = all bytes / max total (MiB/s). The files are
 * removed afterwards unless --keep.
 *
 * Build: mpicc -O2 bare_writer.c -o bare_writer            (posix, mpiio)
 *        h5pcc -shlib -O2 -DWITH_HDF5 bare_writer.c -o bare_writer_hdf5   (+ hdf5)
 * Run:   mpiexec -n 2 ./bare_writer --api mpiio --dir DIR --block-size 67108864
 *        [--transfer-size 1048576] [--segments 1] [--file-per-process yes|no]
 *        [--collective yes|no] [--fsync yes|no] [--hint KEY=VALUE]... [--keep]
 *        [--init-only]   (MPI_Init and MPI_Finalize only: the launcher's start-up cost)
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef WITH_HDF5
#include <hdf5.h>
#endif

#define MAX_HINTS 64

struct options {
    const char *api;
    const char *dir;
    long long block_size;
    long long transfer_size;
    long long segments;
    int file_per_process;
    int collective;
    int fsync;
    int keep;
    int init_only;
    int nhints;
    char *hint_keys[MAX_HINTS];
    char *hint_values[MAX_HINTS];
};

static int rank, ranks;

static void fail(const char *fmt, const char *what) {
    if (rank == 0) {
        fprintf(stderr, "bare_writer: error: ");
        fprintf(stderr, fmt, what);
        fputc('\n', stderr);
    }
    MPI_Finalize();
    exit(2);
}

static void die(const char *call, const char *path) {
    fprintf(stderr, "bare_writer: rank %d: %s failed on %s: %s\n", rank, call, path,
            strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int yes_no(const char *flag, const char *value) {
    if (strcmp(value, "yes") == 0) return 1;
    if (strcmp(value, "no") == 0) return 0;
    fail("%s takes yes or no", flag);
    return 0;
}

static long long positive(const char *flag, const char *value) {
    char *end;
    long long n = strtoll(value, &end, 10);
    if (*value == '\0' || *end != '\0' || n < 1) fail("%s takes a positive integer", flag);
    return n;
}

static void parse(int argc, char **argv, struct options *o) {
    memset(o, 0, sizeof *o);
    o->api = "mpiio";
    o->transfer_size = 1 << 20;
    o->block_size = 16 << 20;
    o->segments = 1;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--keep") == 0) { o->keep = 1; continue; }
        if (strcmp(flag, "--init-only") == 0) { o->init_only = 1; continue; }
        if (i + 1 >= argc) fail("%s needs a value", flag);
        const char *value = argv[++i];
        if (strcmp(flag, "--api") == 0) o->api = value;
        else if (strcmp(flag, "--dir") == 0) o->dir = value;
        else if (strcmp(flag, "--block-size") == 0) o->block_size = positive(flag, value);
        else if (strcmp(flag, "--transfer-size") == 0) o->transfer_size = positive(flag, value);
        else if (strcmp(flag, "--segments") == 0) o->segments = positive(flag, value);
        else if (strcmp(flag, "--file-per-process") == 0) o->file_per_process = yes_no(flag, value);
        else if (strcmp(flag, "--collective") == 0) o->collective = yes_no(flag, value);
        else if (strcmp(flag, "--fsync") == 0) o->fsync = yes_no(flag, value);
        else if (strcmp(flag, "--hint") == 0) {
            char *eq = strchr(value, '=');
            if (eq == NULL || eq == value || eq[1] == '\0') fail("--hint %s is not KEY=VALUE", value);
            if (o->nhints == MAX_HINTS) fail("more than %s --hint flags", "64");
            o->hint_keys[o->nhints] = strndup(value, (size_t)(eq - value));
            o->hint_values[o->nhints] = strdup(eq + 1);
            o->nhints++;
        } else fail("unknown flag %s", flag);
    }
    if (o->init_only) return;
    if (strcmp(o->api, "posix") && strcmp(o->api, "mpiio") && strcmp(o->api, "hdf5"))
        fail("--api %s: expected posix, mpiio or hdf5", o->api);
#ifndef WITH_HDF5
    if (strcmp(o->api, "hdf5") == 0) fail("--api %s needs the build with -DWITH_HDF5 (h5pcc)", o->api);
#endif
    if (o->dir == NULL) fail("%s is required", "--dir");
    if (o->block_size % o->transfer_size) fail("%s must divide --block-size", "--transfer-size");
}

/* Store `value` little-endian in the 8 bytes at `p`, whatever the host's byte order. */
static void put_le64(unsigned char *p, uint64_t value) {
    for (int b = 0; b < 8; b++) p[b] = (unsigned char)(value >> (8 * b));
}

/* The ramp words W1, W2, ... of a transfer buffer of `words` words (see the header). */
static void fill_ramp(unsigned char *buf, long long words, uint64_t tag) {
    uint64_t high = tag << 48;
    for (long long k = 1; k < words; k++) put_le64(buf + 8 * k, 8 * (uint64_t)k + high);
}

/* The header word W0 of the transfer at `offset` (the buffer has room for a whole word). */
static void fill_header(unsigned char *buf, long long offset, uint64_t tag) {
    put_le64(buf, (uint64_t)offset + (tag << 48));
}

struct writer {
    int api;  /* 0 posix, 1 mpiio, 2 hdf5 */
    int fd;
    MPI_File fh;
#ifdef WITH_HDF5
    hid_t fapl, file, dcpl, space, dset, selection, dxpl, memory;
#endif
};

static void open_writer(struct writer *w, const struct options *o, const char *path,
                        MPI_Comm comm, MPI_Info info, long long file_length) {
    if (strcmp(o->api, "posix") == 0) {
        w->api = 0;
        w->fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (w->fd < 0) die("open", path);
    } else if (strcmp(o->api, "mpiio") == 0) {
        w->api = 1;
        if (MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &w->fh) != MPI_SUCCESS)
            die("MPI_File_open", path);
    } else {
#ifdef WITH_HDF5
        w->api = 2;
        hsize_t length = (hsize_t)file_length, size = (hsize_t)o->transfer_size;
        w->fapl = H5Pcreate(H5P_FILE_ACCESS);
        H5Pset_fapl_mpio(w->fapl, comm, info);
        w->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, w->fapl);
        if (w->file < 0) die("H5Fcreate", path);
        w->dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_fill_time(w->dcpl, H5D_FILL_TIME_NEVER);
        w->space = H5Screate_simple(1, &length, NULL);
        w->dset = H5Dcreate2(w->file, "data", H5T_STD_U8LE, w->space, H5P_DEFAULT, w->dcpl,
                             H5P_DEFAULT);
        if (w->dset < 0) die("H5Dcreate2", path);
        w->selection = H5Screate_simple(1, &length, NULL);
        w->dxpl = H5Pcreate(H5P_DATASET_XFER);
        H5Pset_dxpl_mpio(w->dxpl, o->collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
        w->memory = H5Screate_simple(1, &size, NULL);
#else
        (void)file_length;
#endif
    }
}

static void write_at(struct writer *w, const struct options *o, long long offset,
                     const unsigned char *buf, const char *path) {
    long long size = o->transfer_size;
    if (w->api == 0) {
        long long done = 0;
        while (done < size) {
            ssize_t n = pwrite(w->fd, buf + done, (size_t)(size - done), (off_t)(offset + done));
            if (n < 0) die("pwrite", path);
            done += n;
        }
    } else if (w->api == 1) {
        MPI_Status status;
        int rc = o->collective
            ? MPI_File_write_at_all(w->fh, offset, buf, (int)size, MPI_BYTE, &status)
            : MPI_File_write_at(w->fh, offset, buf, (int)size, MPI_BYTE, &status);
        if (rc != MPI_SUCCESS) die("MPI_File_write_at", path);
    } else {
#ifdef WITH_HDF5
        hsize_t start = (hsize_t)offset, count = (hsize_t)size;
        H5Sselect_hyperslab(w->selection, H5S_SELECT_SET, &start, NULL, &count, NULL);
        if (H5Dwrite(w->dset, H5T_NATIVE_UINT8, w->memory, w->selection, w->dxpl, buf) < 0)
            die("H5Dwrite", path);
#endif
    }
}

static void close_writer(struct writer *w, const struct options *o, const char *path) {
    if (w->api == 0) {
        if (o->fsync && fsync(w->fd) != 0) die("fsync", path);
        if (close(w->fd) != 0) die("close", path);
    } else if (w->api == 1) {
        if (o->fsync && MPI_File_sync(w->fh) != MPI_SUCCESS) die("MPI_File_sync", path);
        if (MPI_File_close(&w->fh) != MPI_SUCCESS) die("MPI_File_close", path);
    } else {
#ifdef WITH_HDF5
        if (o->fsync && H5Fflush(w->file, H5F_SCOPE_LOCAL) < 0) die("H5Fflush", path);
        H5Dclose(w->dset);
        if (H5Fclose(w->file) < 0) die("H5Fclose", path);
#endif
    }
}

/* Untimed clean-up of what open_writer made besides the file itself. */
static void release_writer(struct writer *w) {
#ifdef WITH_HDF5
    if (w->api == 2) {
        H5Sclose(w->memory);
        H5Pclose(w->dxpl);
        H5Sclose(w->selection);
        H5Sclose(w->space);
        H5Pclose(w->dcpl);
        H5Pclose(w->fapl);
    }
#else
    (void)w;
#endif
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    struct options o;
    parse(argc, argv, &o);
    if (o.init_only) {
        MPI_Finalize();
        return 0;
    }

    int fpp = o.file_per_process;
    MPI_Comm comm = fpp ? MPI_COMM_SELF : MPI_COMM_WORLD;
    int slot = fpp ? 0 : rank, nslots = fpp ? 1 : ranks;
    uint64_t tag = fpp ? (uint64_t)rank + 1 : 0;
    long long file_length = o.segments * nslots * o.block_size;
    const char *suffix = strcmp(o.api, "hdf5") == 0 ? "h5" : "dat";
    char path[4096];
    if (fpp) snprintf(path, sizeof path, "%s/ior.%08d.%s", o.dir, rank, suffix);
    else snprintf(path, sizeof path, "%s/ior.%s", o.dir, suffix);

    MPI_Info info = MPI_INFO_NULL;
    if (o.nhints > 0) {
        MPI_Info_create(&info);
        for (int i = 0; i < o.nhints; i++) MPI_Info_set(info, o.hint_keys[i], o.hint_values[i]);
    }
    unsigned char *buf = NULL;
    long long words = (o.transfer_size + 7) / 8;  /* whole words: the header always fits */
    if (posix_memalign((void **)&buf, 4096, (size_t)(8 * words)) != 0) die("posix_memalign", path);
    fill_ramp(buf, words, tag);

#ifdef WITH_HDF5
    /* Start the library before the timed region, as importing h5py does for the kernel. */
    if (strcmp(o.api, "hdf5") == 0 && H5open() < 0) die("H5open", path);
#endif
    struct writer w;
    memset(&w, 0, sizeof w);
    double t, phase[3] = {0, 0, 0};  /* open, write, close */
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    open_writer(&w, &o, path, comm, info, file_length);
    phase[0] = MPI_Wtime() - t;
    long long per_block = o.block_size / o.transfer_size;
    for (long long segment = 0; segment < o.segments; segment++) {
        long long base = (segment * nslots + slot) * o.block_size;
        for (long long i = 0; i < per_block; i++) {
            long long offset = base + i * o.transfer_size;
            fill_header(buf, offset, tag);
            t = MPI_Wtime();
            write_at(&w, &o, offset, buf, path);
            phase[1] += MPI_Wtime() - t;
        }
    }
    t = MPI_Wtime();
    close_writer(&w, &o, path);
    phase[2] = MPI_Wtime() - t;
    release_writer(&w);

    double mine[4] = {phase[0], phase[1], phase[2], phase[0] + phase[1] + phase[2]}, most[4];
    MPI_Allreduce(mine, most, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long long bytes = o.segments * o.block_size * (long long)ranks;
    MPI_Barrier(MPI_COMM_WORLD);
    if (!o.keep && (fpp || rank == 0)) unlink(path);
    if (rank == 0) {
        double bandwidth = most[3] > 0 ? (double)bytes / most[3] / (1 << 20) : 0.0;
        printf("{\"program\": \"bare_writer\", \"api\": \"%s\", \"ranks\": %d, "
               "\"bytes_written\": %lld, \"collective\": %s, \"fsync\": %s, "
               "\"file_per_process\": %s, \"times_s\": {\"open\": %.9f, \"write\": %.9f, "
               "\"close\": %.9f, \"total\": %.9f}, \"bandwidth_mib_s\": %.6f}\n",
               o.api, ranks, bytes, o.collective ? "true" : "false", o.fsync ? "true" : "false",
               fpp ? "true" : "false", most[0], most[1], most[2], most[3], bandwidth);
        fflush(stdout);
    }
    free(buf);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
