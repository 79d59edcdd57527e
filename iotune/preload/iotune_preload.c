/*
 * iotune_preload.c - inject parallel I/O settings into an unmodified MPI program and
 * measure its writes.  Loaded with LD_PRELOAD; see docs/applications.md.
 *
 *   IOTUNE_SETTINGS     file of settings, one per line:
 *                         hint:<name>=<value>            MPI-IO hint (MPI_Info key)
 *                         hdf5:alignment=<bytes>
 *                         hdf5:alignment_threshold=<bytes>
 *                         hdf5:meta_block_size=<bytes>
 *                         hdf5:sieve_buf_size=<bytes>
 *                         hdf5:coll_metadata=yes|no
 *                       blank lines and lines starting with '#' are ignored.
 *                       Unset: nothing is applied, writes are still measured.
 *   IOTUNE_PRELOAD_OUT  JSON report written by world rank 0 in MPI_Finalize.
 *                       Unset: nothing is written and MPI_Finalize does no extra work.
 *
 * Intercepted: MPI_File_open and the MPI_File_*write* calls through the PMPI profiling
 * interface; H5Fcreate and H5Fopen by symbol interposition (the real ones, and the H5P
 * functions used, are looked up with dlsym in the program's own HDF5); MPI_Finalize to reduce the counters and write the report.
 *
 * Build (HDF5's wrapper for its include path; no HDF5 function is linked, see the H5Fcreate
 * section, so --as-needed leaves HDF5 out of the library's dependencies):
 *   h5pcc -shlib -Wl,--as-needed -shared -fPIC -O2 -Wall -o libiotune_preload.so \
 *         iotune_preload.c -ldl
 *
 * Threads: settings are loaded once (pthread_once), the counters are updated atomically
 * and the file list is guarded by a mutex, which is ample for MPI_THREAD_SINGLE and
 * MPI_THREAD_FUNNELED programs (and does no harm under MPI_THREAD_MULTIPLE).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <mpi.h>
#include <hdf5.h>

#define PREFIX "iotune preload: "
#define MAX_HINTS 128     /* hint:<name> lines kept from the settings file */
#define MAX_SETTINGS 160  /* all valid settings (hints and hdf5:*) */
#define MAX_FILES 256     /* distinct (path, opened_by) pairs in the report */
#define MAX_WARNINGS 32   /* warnings kept for the report (all are printed) */
#define REPORT_VERSION 1

struct kv {
    char *key;
    char *value;
};

/* ------------------------------------------------------------------------------------ */
/* Settings                                                                             */
/* ------------------------------------------------------------------------------------ */

static struct {
    struct kv hints[MAX_HINTS];     /* MPI-IO hints: key without the "hint:" prefix */
    int nhints;
    struct kv applied[MAX_SETTINGS]; /* every valid setting, key as written in the file */
    int napplied;
    int any_hdf5;                    /* at least one hdf5:* setting */
    int has_alignment, has_threshold, has_meta_block, has_sieve, has_coll;
    hsize_t alignment, threshold, meta_block;
    size_t sieve;
    int coll;
} S;

static pthread_once_t settings_once = PTHREAD_ONCE_INIT;

static char *warnings[MAX_WARNINGS];
static int nwarnings;
static char *unknown_reported[MAX_WARNINGS]; /* unknown keys already reported */
static int nunknown_reported;

/* World rank of this process, or -1 when MPI is not (or no longer) initialized. */
static int world_rank(void)
{
    static int rank = -2;
    if (rank == -2) {
        int initialized = 0, finalized = 0;
        PMPI_Initialized(&initialized);
        PMPI_Finalized(&finalized);
        if (!initialized || finalized)
            return -1;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    return rank;
}

/* Print a warning on stderr (rank 0 only, so an N-rank run prints it once; every rank
 * when MPI is not initialized) and keep it for the report. */
static void warn(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (world_rank() <= 0)
        fprintf(stderr, PREFIX "%s\n", buf);
    if (nwarnings < MAX_WARNINGS)
        warnings[nwarnings++] = strdup(buf);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    char *end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
        *--end = '\0';
    return s;
}

/* A non-negative decimal integer that fits unsigned long long; 0 on success. */
static int parse_size(const char *text, unsigned long long *out)
{
    if (*text < '0' || *text > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* Add or replace key in a kv array; 0 on success, -1 when full. */
static int kv_put(struct kv *arr, int *n, int cap, const char *key, const char *value)
{
    for (int i = 0; i < *n; i++) {
        if (strcmp(arr[i].key, key) == 0) {
            free(arr[i].value);
            arr[i].value = strdup(value);
            return 0;
        }
    }
    if (*n >= cap)
        return -1;
    arr[*n].key = strdup(key);
    arr[*n].value = strdup(value);
    (*n)++;
    return 0;
}

static void report_unknown(const char *key, const char *path, int lineno)
{
    for (int i = 0; i < nunknown_reported; i++)
        if (strcmp(unknown_reported[i], key) == 0)
            return;
    if (nunknown_reported < MAX_WARNINGS)
        unknown_reported[nunknown_reported++] = strdup(key);
    warn("%s:%d: unknown setting '%s' ignored", path, lineno, key);
}

/* One "key=value" line; returns nothing, invalid lines become warnings. */
static void parse_setting(char *key, char *value, const char *path, int lineno)
{
    unsigned long long n = 0;

    if (strncmp(key, "hint:", 5) == 0) {
        const char *name = key + 5;
        size_t klen = strlen(name), vlen = strlen(value);
        if (klen == 0 || klen >= MPI_MAX_INFO_KEY || vlen == 0 || vlen >= MPI_MAX_INFO_VAL) {
            warn("%s:%d: invalid MPI-IO hint '%s=%s' ignored", path, lineno, key, value);
            return;
        }
        if (kv_put(S.hints, &S.nhints, MAX_HINTS, name, value) != 0) {
            warn("%s:%d: more than %d hints, '%s' ignored", path, lineno, MAX_HINTS, key);
            return;
        }
    } else if (strcmp(key, "hdf5:coll_metadata") == 0) {
        if (strcmp(value, "yes") == 0)
            S.coll = 1;
        else if (strcmp(value, "no") == 0)
            S.coll = 0;
        else {
            warn("%s:%d: %s must be yes or no, not '%s'; ignored", path, lineno, key, value);
            return;
        }
        S.has_coll = 1;
    } else if (strcmp(key, "hdf5:alignment") == 0 || strcmp(key, "hdf5:alignment_threshold") == 0
               || strcmp(key, "hdf5:meta_block_size") == 0
               || strcmp(key, "hdf5:sieve_buf_size") == 0) {
        int is_alignment = strcmp(key, "hdf5:alignment") == 0;
        if (parse_size(value, &n) != 0 || (is_alignment && n == 0)) {
            warn("%s:%d: %s must be a %s number of bytes, not '%s'; ignored", path, lineno, key,
                 is_alignment ? "positive" : "non-negative", value);
            return;
        }
        if (is_alignment) {
            S.has_alignment = 1;
            S.alignment = (hsize_t)n;
        } else if (strcmp(key, "hdf5:alignment_threshold") == 0) {
            S.has_threshold = 1;
            S.threshold = (hsize_t)n;
        } else if (strcmp(key, "hdf5:meta_block_size") == 0) {
            S.has_meta_block = 1;
            S.meta_block = (hsize_t)n;
        } else {
            S.has_sieve = 1;
            S.sieve = (size_t)n;
        }
    } else {
        report_unknown(key, path, lineno);
        return;
    }
    if (strncmp(key, "hdf5:", 5) == 0)
        S.any_hdf5 = 1;
    if (kv_put(S.applied, &S.napplied, MAX_SETTINGS, key, value) != 0)
        warn("%s:%d: too many settings to report, '%s' not listed", path, lineno, key);
}

static void load_settings(void)
{
    const char *path = getenv("IOTUNE_SETTINGS");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        warn("cannot read IOTUNE_SETTINGS file %s: %s; no settings applied", path,
             strerror(errno));
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0;
    while (getline(&line, &cap, f) != -1) {
        lineno++;
        char *text = trim(line);
        if (*text == '\0' || *text == '#')
            continue;
        char *eq = strchr(text, '=');
        if (eq == NULL) {
            warn("%s:%d: expected key=value, got '%s'; ignored", path, lineno, text);
            continue;
        }
        *eq = '\0';
        parse_setting(trim(text), trim(eq + 1), path, lineno);
    }
    free(line);
    fclose(f);
}

static void ensure_settings(void)
{
    pthread_once(&settings_once, load_settings);
}

/* ------------------------------------------------------------------------------------ */
/* Files opened and the hints in effect for them                                        */
/* ------------------------------------------------------------------------------------ */

struct file_rec {
    char *path;
    const char *opened_by; /* a string literal */
    struct kv *hints;
    int nhints;
};

static struct file_rec files[MAX_FILES];
static int nfiles;
static unsigned long long files_omitted;
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;

/* Only world rank 0 writes the report, so only it keeps the list. */
static int keeping_files(void)
{
    const char *out = getenv("IOTUNE_PRELOAD_OUT");
    return out != NULL && *out != '\0' && world_rank() == 0;
}

/* Copy the (key, value) pairs of info; *n = 0 for MPI_INFO_NULL. */
static struct kv *info_pairs(MPI_Info info, int *n)
{
    *n = 0;
    int nkeys = 0;
    if (info == MPI_INFO_NULL || PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS || nkeys <= 0)
        return NULL;
    struct kv *pairs = calloc((size_t)nkeys, sizeof *pairs);
    if (pairs == NULL)
        return NULL;
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS)
            continue;
#if MPI_VERSION >= 4
        int buflen = (int)sizeof value;
        if (PMPI_Info_get_string(info, key, &buflen, value, &flag) != MPI_SUCCESS || !flag)
            continue;
#else
        if (PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag) != MPI_SUCCESS || !flag)
            continue;
#endif
        pairs[*n].key = strdup(key);
        pairs[*n].value = strdup(value);
        (*n)++;
    }
    return pairs;
}

static void free_pairs(struct kv *pairs, int n)
{
    for (int i = 0; i < n; i++) {
        free(pairs[i].key);
        free(pairs[i].value);
    }
    free(pairs);
}

/* Remember that path was opened by opened_by with the hints of info (MPI_INFO_NULL: none).
 * A second open of the same path by the same call replaces the hints. */
static void record_file(const char *path, const char *opened_by, MPI_Info info)
{
    int n = 0;
    struct kv *pairs = info_pairs(info, &n);
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < nfiles; i++) {
        if (strcmp(files[i].opened_by, opened_by) == 0 && strcmp(files[i].path, path) == 0) {
            free_pairs(files[i].hints, files[i].nhints);
            files[i].hints = pairs;
            files[i].nhints = n;
            pthread_mutex_unlock(&files_lock);
            return;
        }
    }
    if (nfiles < MAX_FILES) {
        files[nfiles].path = strdup(path);
        files[nfiles].opened_by = opened_by;
        files[nfiles].hints = pairs;
        files[nfiles].nhints = n;
        nfiles++;
        pairs = NULL;
    } else {
        files_omitted++;
    }
    pthread_mutex_unlock(&files_lock);
    free_pairs(pairs, pairs ? n : 0);
}

/* H5Fcreate/H5Fopen calls seen, to tell when hdf5:* settings had nothing to act on. */
static uint64_t h5_calls;

/* Set while an H5Fcreate/H5Fopen wrapper runs, so that the MPI_File_open HDF5's MPI-IO
 * driver makes inside it is recorded under the HDF5 call (per thread). */
static __thread const char *h5_opener;
static __thread int h5_mpi_open_seen;

/* ------------------------------------------------------------------------------------ */
/* MPI_File_open                                                                        */
/* ------------------------------------------------------------------------------------ */

/* Returns a new info: a copy of base (or an empty one for MPI_INFO_NULL) with the run's
 * hints set over it, so the run's values win; MPI_INFO_NULL if that fails. */
static MPI_Info merged_info(MPI_Info base)
{
    MPI_Info merged = MPI_INFO_NULL;
    int rc = base == MPI_INFO_NULL ? PMPI_Info_create(&merged) : PMPI_Info_dup(base, &merged);
    if (rc != MPI_SUCCESS)
        return MPI_INFO_NULL;
    for (int i = 0; i < S.nhints; i++)
        PMPI_Info_set(merged, S.hints[i].key, S.hints[i].value);
    return merged;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    ensure_settings();
    MPI_Info merged = S.nhints > 0 ? merged_info(info) : MPI_INFO_NULL;
    int rc = PMPI_File_open(comm, filename, amode, merged != MPI_INFO_NULL ? merged : info, fh);
    if (merged != MPI_INFO_NULL)
        PMPI_Info_free(&merged);
    if (rc == MPI_SUCCESS) {
        if (h5_opener != NULL)
            h5_mpi_open_seen = 1;
        if (keeping_files()) {
            MPI_Info used = MPI_INFO_NULL;
            if (PMPI_File_get_info(*fh, &used) == MPI_SUCCESS) {
                record_file(filename, h5_opener != NULL ? h5_opener : "MPI_File_open", used);
                PMPI_Info_free(&used);
            }
        }
    }
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* Write calls: time in the call and bytes requested                                    */
/* ------------------------------------------------------------------------------------ */

/* Nanoseconds, so that the sum can be updated atomically like the byte count. */
static uint64_t write_ns, write_bytes, write_calls;

static void account(double t0, double t1, MPI_Count count, MPI_Datatype type, int rc, int call)
{
    uint64_t ns = t1 > t0 ? (uint64_t)((t1 - t0) * 1e9) : 0;
    __atomic_fetch_add(&write_ns, ns, __ATOMIC_RELAXED);
    if (rc != MPI_SUCCESS || !call)
        return;
    MPI_Count size = 0;
    if (count > 0 && PMPI_Type_size_x(type, &size) == MPI_SUCCESS && size > 0)
        __atomic_fetch_add(&write_bytes, (uint64_t)count * (uint64_t)size, __ATOMIC_RELAXED);
    __atomic_fetch_add(&write_calls, 1, __ATOMIC_RELAXED);
}

/* A write call: time the PMPI call, count its bytes. */
/* ------------------------------------------------------------------------------------ */
/* Who writes to the file system                                                        */
/* ------------------------------------------------------------------------------------ */

/* The POSIX writes this rank makes inside MPI-IO write calls: whether a rank writes to the
 * file system at all shows whether collective buffering (romio_cb_write, cb_nodes) took
 * effect, where MPI_File_get_info cannot tell (Open MPI returns the hints given). */
static __thread int in_mpi_write;
static uint64_t posix_bytes, posix_calls;

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);

static void *next_posix(const char *name)
{
    void *sym = dlsym(RTLD_NEXT, name);
    if (sym == NULL) {
        fprintf(stderr, PREFIX "cannot find the real %s\n", name);
        abort();
    }
    return sym;
}

static ssize_t counted(ssize_t done)
{
    if (in_mpi_write > 0 && done > 0) {
        __atomic_fetch_add(&posix_bytes, (uint64_t)done, __ATOMIC_RELAXED);
        __atomic_fetch_add(&posix_calls, 1, __ATOMIC_RELAXED);
    }
    return done;
}

#define POSIX_WRAPPER(TYPE, NAME, PARAMS, ARGS)                                             \
    ssize_t NAME PARAMS                                                                     \
    {                                                                                       \
        static TYPE real;                                                                   \
        if (real == NULL) {                                                                 \
            void *sym = next_posix(#NAME);                                                  \
            memcpy(&real, &sym, sizeof real);                                               \
        }                                                                                   \
        return counted(real ARGS);                                                          \
    }

POSIX_WRAPPER(pwrite_fn, pwrite, (int fd, const void *buf, size_t n, off_t off),
              (fd, buf, n, off))
POSIX_WRAPPER(pwrite_fn, pwrite64, (int fd, const void *buf, size_t n, off_t off),
              (fd, buf, n, off))
POSIX_WRAPPER(pwritev_fn, pwritev, (int fd, const struct iovec *iov, int n, off_t off),
              (fd, iov, n, off))
POSIX_WRAPPER(pwritev_fn, pwritev64, (int fd, const struct iovec *iov, int n, off_t off),
              (fd, iov, n, off))
POSIX_WRAPPER(write_fn, write, (int fd, const void *buf, size_t n), (fd, buf, n))

#define TIMED_WRITE(COUNT, TYPE, PCALL)                 \
    do {                                                \
        double t0_ = PMPI_Wtime();                      \
        in_mpi_write++;                                 \
        int rc_ = PCALL;                                \
        in_mpi_write--;                                 \
        account(t0_, PMPI_Wtime(), COUNT, TYPE, rc_, 1); \
        return rc_;                                     \
    } while (0)

/* The *_end half of a split collective: time only (bytes were counted at *_begin). */
#define TIMED_END(PCALL)                                             \
    do {                                                             \
        double t0_ = PMPI_Wtime();                                   \
        in_mpi_write++;                                              \
        int rc_ = PCALL;                                             \
        in_mpi_write--;                                              \
        account(t0_, PMPI_Wtime(), 0, MPI_DATATYPE_NULL, rc_, 0);    \
        return rc_;                                                  \
    } while (0)

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write(fh, buf, count, type, st));
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                       MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_all(fh, buf, count, type, st));
}

int MPI_File_write_at(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
                      MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_at(fh, off, buf, count, type, st));
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count,
                          MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_at_all(fh, off, buf, count, type, st));
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                          MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_shared(fh, buf, count, type, st));
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                           MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_ordered(fh, buf, count, type, st));
}

/* Non-blocking writes: the bytes are counted when posted and only the time of the
 * posting call is measured (the completion in MPI_Wait/MPI_Test is not seen). */
int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite(fh, buf, count, type, rq));
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset off, const void *buf, int count,
                       MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite_at(fh, off, buf, count, type, rq));
}

int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                           MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite_shared(fh, buf, count, type, rq));
}

#if MPI_VERSION > 3 || (MPI_VERSION == 3 && MPI_SUBVERSION >= 1)
int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                        MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite_all(fh, buf, count, type, rq));
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count,
                           MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite_at_all(fh, off, buf, count, type, rq));
}
#endif

/* Split collectives: bytes at *_begin, time of both halves. */
int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type)
{
    TIMED_WRITE(count, type, PMPI_File_write_all_begin(fh, buf, count, type));
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *st)
{
    TIMED_END(PMPI_File_write_all_end(fh, buf, st));
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset off, const void *buf, int count,
                                MPI_Datatype type)
{
    TIMED_WRITE(count, type, PMPI_File_write_at_all_begin(fh, off, buf, count, type));
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *st)
{
    TIMED_END(PMPI_File_write_at_all_end(fh, buf, st));
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type)
{
    TIMED_WRITE(count, type, PMPI_File_write_ordered_begin(fh, buf, count, type));
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *st)
{
    TIMED_END(PMPI_File_write_ordered_end(fh, buf, st));
}

#if MPI_VERSION >= 4
/* MPI-4 large-count variants (mpi4py >= 4 calls these when the library has them). */
int MPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                     MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_c(fh, buf, count, type, st));
}

int MPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                         MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_all_c(fh, buf, count, type, st));
}

int MPI_File_write_at_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_at_c(fh, off, buf, count, type, st));
}

int MPI_File_write_at_all_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count,
                            MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_at_all_c(fh, off, buf, count, type, st));
}

int MPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                            MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_shared_c(fh, buf, count, type, st));
}

int MPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                             MPI_Status *st)
{
    TIMED_WRITE(count, type, PMPI_File_write_ordered_c(fh, buf, count, type, st));
}

int MPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                      MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite_c(fh, buf, count, type, rq));
}

int MPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                          MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite_all_c(fh, buf, count, type, rq));
}

int MPI_File_iwrite_at_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count,
                         MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite_at_c(fh, off, buf, count, type, rq));
}

int MPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count,
                             MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite_at_all_c(fh, off, buf, count, type, rq));
}

int MPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                             MPI_Request *rq)
{
    TIMED_WRITE(count, type, PMPI_File_iwrite_shared_c(fh, buf, count, type, rq));
}

int MPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                               MPI_Datatype type)
{
    TIMED_WRITE(count, type, PMPI_File_write_all_begin_c(fh, buf, count, type));
}

int MPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset off, const void *buf,
                                  MPI_Count count, MPI_Datatype type)
{
    TIMED_WRITE(count, type, PMPI_File_write_at_all_begin_c(fh, off, buf, count, type));
}

int MPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                   MPI_Datatype type)
{
    TIMED_WRITE(count, type, PMPI_File_write_ordered_begin_c(fh, buf, count, type));
}
#endif

/* ------------------------------------------------------------------------------------ */
/* H5Fcreate / H5Fopen                                                                  */
/* ------------------------------------------------------------------------------------ */

/* No HDF5 function is linked: a program that does not use HDF5 must not pay for loading
 * it (and the dozens of libraries it needs). Every HDF5 function used here is looked up
 * when the program first calls H5Fcreate or H5Fopen, in the library that holds the real
 * one, so the H5P calls act on the program's own HDF5 instance. hdf5.h is included for
 * its types only. */

typedef hid_t (*h5fcreate_fn)(const char *, unsigned, hid_t, hid_t);
typedef hid_t (*h5fopen_fn)(const char *, unsigned, hid_t);

static struct {
    herr_t (*open)(void);
    hid_t *fapl_class;
    hid_t (*pcreate)(hid_t);
    hid_t (*pcopy)(hid_t);
    htri_t (*pisa_class)(hid_t, hid_t);
    herr_t (*pclose)(hid_t);
    herr_t (*get_alignment)(hid_t, hsize_t *, hsize_t *);
    herr_t (*set_alignment)(hid_t, hsize_t, hsize_t);
    herr_t (*set_meta_block_size)(hid_t, hsize_t);
    herr_t (*set_sieve_buf_size)(hid_t, size_t);
    herr_t (*set_all_coll_metadata_ops)(hid_t, hbool_t);
    herr_t (*set_coll_metadata_write)(hid_t, hbool_t);
    herr_t (*get_fapl_mpio)(hid_t, MPI_Comm *, MPI_Info *);
    herr_t (*set_fapl_mpio)(hid_t, MPI_Comm, MPI_Info);
    herr_t (*get_auto)(hid_t, H5E_auto2_t *, void **);
    herr_t (*set_auto)(hid_t, H5E_auto2_t, void *);
    hid_t (*get_access_plist)(hid_t);
    herr_t (*get_meta_block_size)(hid_t, hsize_t *);
    herr_t (*get_sieve_buf_size)(hid_t, size_t *);
    herr_t (*get_all_coll_metadata_ops)(hid_t, hbool_t *);
    herr_t (*get_coll_metadata_write)(hid_t, hbool_t *);
} H5;

/* The HDF5 settings of the first file opened through H5Fcreate/H5Fopen with hdf5:*
 * settings, read back from the open file's access property list (H5Fget_access_plist):
 * what the report gives as hdf5_settings_in_effect. */
static struct {
    int seen;
    hsize_t alignment, threshold, meta_block;
    size_t sieve;
    hbool_t coll_ops, coll_write;
    int has_alignment, has_meta_block, has_sieve, has_coll;
} h5_in_effect;
static pthread_mutex_t h5_in_effect_lock = PTHREAD_MUTEX_INITIALIZER;
/* 1 when every function in H5 was found, -1 when not (the settings are then skipped
 * with a warning), 0 before the first lookup. */
static int h5_ready;
static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

/* The object (library or program) that contains address, opened without loading
 * anything; NULL if there is none. */
static void *object_of(const void *address)
{
    Dl_info where;
    if (address == NULL || dladdr(address, &where) == 0 || where.dli_fname == NULL)
        return NULL;
    return dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
}

/* The real H5Fcreate/H5Fopen. First the next definition in the global scope (a program
 * linked with HDF5); then, for HDF5 loaded privately (RTLD_LOCAL, as Python loads h5py),
 * the definition seen from the calling object's own dependencies. Aborts when neither
 * exists, since the call cannot be completed. */
static void *real_symbol(const char *name, const void *self, const void *caller)
{
    void *sym = dlsym(RTLD_NEXT, name);
    if (sym == NULL || sym == self) {
        void *handle = object_of(caller);
        sym = handle ? dlsym(handle, name) : NULL;
        if (handle)
            dlclose(handle);
    }
    if (sym == NULL || sym == self) {
        fprintf(stderr, PREFIX "cannot find the real %s\n", name);
        abort();
    }
    return sym;
}

/* dlsym returns an object pointer; copying it avoids the object-to-function cast. */
#define LOOKUP(HANDLE, FIELD, NAME)                                                         \
    do {                                                                                    \
        void *sym_ = dlsym(HANDLE, NAME);                                                   \
        if (sym_ == NULL)                                                                   \
            missing_ = NAME;                                                                \
        memcpy(&H5.FIELD, &sym_, sizeof sym_);                                              \
    } while (0)

/* Fill H5 from the library that holds real (the real H5Fcreate or H5Fopen). */
static int resolve_hdf5(const void *real)
{
    pthread_mutex_lock(&h5_lock);
    if (h5_ready == 0) {
        const char *missing_ = NULL;
        void *lib = object_of(real);
        if (lib == NULL) {
            missing_ = "the library holding H5Fcreate";
        } else {
            LOOKUP(lib, open, "H5open");
            /* A program linked with HDF5 may hold its own copy of this variable (a copy
             * relocation), which HDF5 then uses instead of the one in the library: the
             * global scope finds that copy; HDF5 loaded privately has none. */
            H5.fapl_class = dlsym(RTLD_DEFAULT, "H5P_CLS_FILE_ACCESS_ID_g");
            if (H5.fapl_class == NULL)
                LOOKUP(lib, fapl_class, "H5P_CLS_FILE_ACCESS_ID_g");
            LOOKUP(lib, pcreate, "H5Pcreate");
            LOOKUP(lib, pcopy, "H5Pcopy");
            LOOKUP(lib, pisa_class, "H5Pisa_class");
            LOOKUP(lib, pclose, "H5Pclose");
            LOOKUP(lib, get_alignment, "H5Pget_alignment");
            LOOKUP(lib, set_alignment, "H5Pset_alignment");
            LOOKUP(lib, set_meta_block_size, "H5Pset_meta_block_size");
            LOOKUP(lib, set_sieve_buf_size, "H5Pset_sieve_buf_size");
            LOOKUP(lib, set_all_coll_metadata_ops, "H5Pset_all_coll_metadata_ops");
            LOOKUP(lib, set_coll_metadata_write, "H5Pset_coll_metadata_write");
            LOOKUP(lib, get_fapl_mpio, "H5Pget_fapl_mpio");
            LOOKUP(lib, set_fapl_mpio, "H5Pset_fapl_mpio");
            LOOKUP(lib, get_auto, "H5Eget_auto2");
            LOOKUP(lib, set_auto, "H5Eset_auto2");
            LOOKUP(lib, get_access_plist, "H5Fget_access_plist");
            LOOKUP(lib, get_meta_block_size, "H5Pget_meta_block_size");
            LOOKUP(lib, get_sieve_buf_size, "H5Pget_sieve_buf_size");
            LOOKUP(lib, get_all_coll_metadata_ops, "H5Pget_all_coll_metadata_ops");
            LOOKUP(lib, get_coll_metadata_write, "H5Pget_coll_metadata_write");
            dlclose(lib); /* still loaded: the program uses it */
        }
        h5_ready = missing_ == NULL ? 1 : -1;
        if (missing_ != NULL && (S.any_hdf5 || S.nhints > 0))
            warn("HDF5 settings not applied: %s not found (an HDF5 without parallel "
                 "support?)", missing_);
    }
    pthread_mutex_unlock(&h5_lock);
    return h5_ready;
}

/* Set the MPI-IO hints on an fapl that uses the MPI-IO driver; 0 on success. */
static int set_fapl_hints(hid_t fapl)
{
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    if (H5.get_fapl_mpio(fapl, &comm, &info) < 0)
        return -1;
    /* H5Pget_fapl_mpio hands out duplicates; H5Pset_fapl_mpio duplicates again. */
    MPI_Info merged = merged_info(info);
    int rc = merged != MPI_INFO_NULL && H5.set_fapl_mpio(fapl, comm, merged) >= 0 ? 0 : -1;
    if (merged != MPI_INFO_NULL)
        PMPI_Info_free(&merged);
    if (info != MPI_INFO_NULL)
        PMPI_Info_free(&info);
    if (comm != MPI_COMM_NULL)
        PMPI_Comm_free(&comm);
    return rc;
}

/* Whether fapl uses the MPI-IO driver (the only one H5Pget_fapl_mpio accepts). */
static int uses_mpio(hid_t fapl)
{
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    if (H5.get_fapl_mpio(fapl, &comm, &info) < 0)
        return 0;
    if (info != MPI_INFO_NULL)
        PMPI_Info_free(&info);
    if (comm != MPI_COMM_NULL)
        PMPI_Comm_free(&comm);
    return 1;
}

/* A copy of fapl with the run's settings, or H5I_INVALID_HID to use fapl as it is (no
 * settings, HDF5's functions not found, or fapl is not a file-access list: the real call
 * then reports the user's error as it would without us). HDF5's error printing is off
 * while we work, so a failure here prints nothing; a setting that cannot be applied
 * becomes a warning. */
static hid_t tuned_fapl(hid_t fapl, const void *real)
{
    hid_t out = H5I_INVALID_HID;
    if (!S.any_hdf5 && S.nhints == 0)
        return out;
    if (resolve_hdf5(real) != 1 || H5.open() < 0)
        return out;
    hid_t fapl_class = *H5.fapl_class; /* valid once H5open has run */
    H5E_auto2_t saved_func = NULL;
    void *saved_data = NULL;
    /* A program that chose the old error API makes get_auto fail: leave its printing on. */
    int silenced = H5.get_auto(H5E_DEFAULT, &saved_func, &saved_data) >= 0
                   && H5.set_auto(H5E_DEFAULT, NULL, NULL) >= 0;
    out = fapl == H5P_DEFAULT ? H5.pcreate(fapl_class) : H5.pcopy(fapl);
    if (out >= 0 && H5.pisa_class(out, fapl_class) <= 0) {
        H5.pclose(out);
        out = H5I_INVALID_HID;
    }
    if (out >= 0) {
        if (S.has_alignment || S.has_threshold) {
            hsize_t threshold = 1, alignment = 1;
            H5.get_alignment(out, &threshold, &alignment);
            if (S.has_threshold)
                threshold = S.threshold;
            if (S.has_alignment)
                alignment = S.alignment;
            if (H5.set_alignment(out, threshold, alignment) < 0)
                warn("H5Pset_alignment(%llu, %llu) failed", (unsigned long long)threshold,
                     (unsigned long long)alignment);
        }
        if (S.has_meta_block && H5.set_meta_block_size(out, S.meta_block) < 0)
            warn("H5Pset_meta_block_size(%llu) failed", (unsigned long long)S.meta_block);
        if (S.has_sieve && H5.set_sieve_buf_size(out, S.sieve) < 0)
            warn("H5Pset_sieve_buf_size(%zu) failed", S.sieve);
        /* Collective metadata and MPI-IO hints only mean something with the MPI-IO
         * driver; other drivers (sec2, core...) are left alone. */
        if (uses_mpio(out)) {
            if (S.has_coll
                && (H5.set_all_coll_metadata_ops(out, S.coll ? 1 : 0) < 0
                    || H5.set_coll_metadata_write(out, S.coll ? 1 : 0) < 0))
                warn("setting collective metadata to %s failed", S.coll ? "yes" : "no");
            if (S.nhints > 0 && set_fapl_hints(out) != 0)
                warn("merging MPI-IO hints into the file-access list failed");
        }
    }
    if (silenced)
        H5.set_auto(H5E_DEFAULT, saved_func, saved_data);
    return out;
}

/* Read the HDF5 settings back from the open file fid, once per process (the first file
 * opened with hdf5:* settings); errors leave a value unread. */
static void read_hdf5_back(hid_t fid)
{
    if (!S.any_hdf5 || h5_ready != 1 || fid < 0)
        return;
    pthread_mutex_lock(&h5_in_effect_lock);
    if (!h5_in_effect.seen) {
        H5E_auto2_t saved_func = NULL;
        void *saved_data = NULL;
        int silenced = H5.get_auto(H5E_DEFAULT, &saved_func, &saved_data) >= 0
                       && H5.set_auto(H5E_DEFAULT, NULL, NULL) >= 0;
        hid_t fapl = H5.get_access_plist(fid);
        if (fapl >= 0) {
            h5_in_effect.seen = 1;
            h5_in_effect.has_alignment = H5.get_alignment(fapl, &h5_in_effect.threshold,
                                                          &h5_in_effect.alignment) >= 0;
            h5_in_effect.has_meta_block =
                H5.get_meta_block_size(fapl, &h5_in_effect.meta_block) >= 0;
            h5_in_effect.has_sieve = H5.get_sieve_buf_size(fapl, &h5_in_effect.sieve) >= 0;
            h5_in_effect.has_coll =
                H5.get_all_coll_metadata_ops(fapl, &h5_in_effect.coll_ops) >= 0
                && H5.get_coll_metadata_write(fapl, &h5_in_effect.coll_write) >= 0;
            H5.pclose(fapl);
        }
        if (silenced)
            H5.set_auto(H5E_DEFAULT, saved_func, saved_data);
    }
    pthread_mutex_unlock(&h5_in_effect_lock);
}

/* Run the real call with the tuned fapl and note the file. If HDF5 did not go through
 * MPI_File_open (another driver), the file is recorded here without hints. */
#define WITH_TUNED_FAPL(OPENER, NAME, FAPL, REAL, CALL_WITH)                                \
    do {                                                                                    \
        ensure_settings();                                                                  \
        __atomic_fetch_add(&h5_calls, 1, __ATOMIC_RELAXED);                                 \
        hid_t mine_ = tuned_fapl(FAPL, REAL);                                               \
        const char *saved_opener_ = h5_opener;                                              \
        int saved_seen_ = h5_mpi_open_seen;                                                 \
        h5_opener = OPENER;                                                                 \
        h5_mpi_open_seen = 0;                                                               \
        hid_t fid_ = CALL_WITH(mine_ >= 0 ? mine_ : (FAPL));                                \
        int seen_ = h5_mpi_open_seen;                                                       \
        h5_opener = saved_opener_;                                                          \
        h5_mpi_open_seen = saved_seen_;                                                     \
        if (mine_ >= 0)                                                                     \
            H5.pclose(mine_);                                                               \
        read_hdf5_back(fid_);                                                               \
        if (fid_ >= 0 && !seen_ && NAME != NULL && keeping_files())                         \
            record_file(NAME, OPENER, MPI_INFO_NULL);                                       \
        return fid_;                                                                        \
    } while (0)

hid_t H5Fcreate(const char *filename, unsigned flags, hid_t fcpl_id, hid_t fapl_id)
{
    static h5fcreate_fn real;
    if (real == NULL) {
        void *sym = real_symbol("H5Fcreate", (const void *)&H5Fcreate,
                                __builtin_return_address(0));
        memcpy(&real, &sym, sizeof real);
    }
    const void *where = NULL;
    memcpy(&where, &real, sizeof where);
#define CALL_CREATE(F) real(filename, flags, fcpl_id, F)
    WITH_TUNED_FAPL("H5Fcreate", filename, fapl_id, where, CALL_CREATE);
#undef CALL_CREATE
}

hid_t H5Fopen(const char *filename, unsigned flags, hid_t fapl_id)
{
    static h5fopen_fn real;
    if (real == NULL) {
        void *sym = real_symbol("H5Fopen", (const void *)&H5Fopen,
                                __builtin_return_address(0));
        memcpy(&real, &sym, sizeof real);
    }
    const void *where = NULL;
    memcpy(&where, &real, sizeof where);
#define CALL_OPEN(F) real(filename, flags, F)
    WITH_TUNED_FAPL("H5Fopen", filename, fapl_id, where, CALL_OPEN);
#undef CALL_OPEN
}

/* ------------------------------------------------------------------------------------ */
/* MPI_Finalize: the report                                                             */
/* ------------------------------------------------------------------------------------ */

/* A JSON string: quotes, backslashes and control characters escaped; bytes that are not
 * valid UTF-8 become U+FFFD so the report always parses. */
static void json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            p++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\r': fputs("\\r", f); break;
            case '\t': fputs("\\t", f); break;
            default: fprintf(f, "\\u%04x", c);
            }
            p++;
        } else if (c < 0x80) {
            fputc(c, f);
            p++;
        } else {
            /* Length of a well-formed UTF-8 sequence starting here, 0 if ill-formed. */
            int len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                    : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
            for (int i = 1; i < len; i++)
                if ((p[i] & 0xc0) != 0x80)
                    len = 0;
            if (len == 0) {
                fputs("\\ufffd", f);
                p++;
            } else {
                fwrite(p, 1, (size_t)len, f);
                p += len;
            }
        }
    }
    fputc('"', f);
}

static void json_object(FILE *f, const struct kv *pairs, int n)
{
    fputc('{', f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        json_string(f, pairs[i].key);
        fputs(": ", f);
        json_string(f, pairs[i].value);
    }
    fputc('}', f);
}

/* Rank 0's totals of who wrote, for the report (see "Who writes to the file system"). */
static struct {
    int data_ranks, writers;
    unsigned long long bytes;
} posix_report;

static void write_report(const char *path, int ranks, double time_s, uint64_t bytes,
                         uint64_t calls)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        warn("IOTUNE_PRELOAD_OUT path too long; no report written");
        return;
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        fprintf(stderr, PREFIX "cannot write %s: %s\n", tmp, strerror(errno));
        return;
    }
    fprintf(f, "{\"preload\": \"iotune\", \"version\": %d, \"ranks\": %d,\n", REPORT_VERSION,
            ranks);
    /* Which MPI and, for Open MPI, which MPI-IO layer was asked for: Open MPI's
     * MPI_File_get_info returns the hints given, so iotune judges them by these. */
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    if (PMPI_Get_library_version(library, &length) != MPI_SUCCESS)
        length = 0;
    library[length < (int)sizeof library ? length : (int)sizeof library - 1] = '\0';
    library[strcspn(library, "\r\n")] = '\0';
    fputs(" \"mpi_library\": ", f);
    json_string(f, library);
    fputs(",\n \"mpi_io\": ", f);
    const char *io = getenv("OMPI_MCA_io");
    if (io != NULL)
        json_string(f, io);
    else
        fputs("null", f);
    fputs(",\n", f);
    fputs(" \"settings_applied\": ", f);
    json_object(f, S.applied, S.napplied);
    fputs(",\n \"files\": [", f);
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < nfiles; i++) {
        fputs(i ? ",\n   " : "\n   ", f);
        fputs("{\"path\": ", f);
        json_string(f, files[i].path);
        fputs(", \"opened_by\": ", f);
        json_string(f, files[i].opened_by);
        fputs(", \"hints_in_effect\": ", f);
        json_object(f, files[i].hints, files[i].nhints);
        fputc('}', f);
    }
    fprintf(f, "],\n \"files_omitted\": %llu,\n", files_omitted);
    pthread_mutex_unlock(&files_lock);
    /* Rank 0's read-back (every rank opens the same file with the same settings). */
    fprintf(f, " \"file_system_writes\": {\"ranks_writing_mpi_io\": %d, "
               "\"ranks_writing_to_files\": %d, \"bytes\": %llu},\n",
            posix_report.data_ranks, posix_report.writers, posix_report.bytes);
    fputs(" \"hdf5_settings_in_effect\": {", f);
    if (h5_in_effect.seen) {
        const char *sep = "";
        if (h5_in_effect.has_alignment) {
            fprintf(f, "\"alignment\": %llu, \"alignment_threshold\": %llu",
                    (unsigned long long)h5_in_effect.alignment,
                    (unsigned long long)h5_in_effect.threshold);
            sep = ", ";
        }
        if (h5_in_effect.has_meta_block) {
            fprintf(f, "%s\"meta_block_size\": %llu", sep,
                    (unsigned long long)h5_in_effect.meta_block);
            sep = ", ";
        }
        if (h5_in_effect.has_sieve) {
            fprintf(f, "%s\"sieve_buf_size\": %llu", sep,
                    (unsigned long long)h5_in_effect.sieve);
            sep = ", ";
        }
        if (h5_in_effect.has_coll)
            fprintf(f, "%s\"coll_metadata_ops\": %s, \"coll_metadata_write\": %s", sep,
                    h5_in_effect.coll_ops ? "true" : "false",
                    h5_in_effect.coll_write ? "true" : "false");
    }
    fputs("},\n", f);
    fputs(" \"warnings\": [", f);
    for (int i = 0; i < nwarnings; i++) {
        if (i)
            fputs(", ", f);
        json_string(f, warnings[i]);
    }
    fprintf(f, "],\n \"write_time_s\": %.9g, \"bytes_written\": %llu, \"write_calls\": %llu}\n",
            time_s, (unsigned long long)bytes, (unsigned long long)calls);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, PREFIX "cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
    }
}

int MPI_Finalize(void)
{
    const char *out = getenv("IOTUNE_PRELOAD_OUT");
    ensure_settings(); /* settings_applied is reported even if nothing was opened */
    /* A program that links HDF5 statically calls its own H5Fcreate, which no preloaded
     * library can replace: say so rather than let the settings look applied. */
    if (S.any_hdf5 && __atomic_load_n(&h5_calls, __ATOMIC_RELAXED) == 0 && world_rank() == 0)
        warn("hdf5:* settings had no effect: no H5Fcreate/H5Fopen call was intercepted "
             "(the program does not use HDF5, or links it statically)");
    if (out != NULL && *out != '\0' && world_rank() >= 0) {
        /* Each rank's own totals; the report has the slowest rank's time and the sums. */
        double mine_s = (double)__atomic_load_n(&write_ns, __ATOMIC_RELAXED) * 1e-9, max_s = 0;
        unsigned long long mine[2] = {__atomic_load_n(&write_bytes, __ATOMIC_RELAXED),
                                      __atomic_load_n(&write_calls, __ATOMIC_RELAXED)};
        unsigned long long sums[2] = {0, 0};
        /* Ranks that wrote through MPI-IO, and ranks that wrote to the file system then. */
        int writing[2] = {mine[0] > 0, __atomic_load_n(&posix_bytes, __ATOMIC_RELAXED) > 0};
        int writers[2] = {0, 0};
        unsigned long long posix_mine = __atomic_load_n(&posix_bytes, __ATOMIC_RELAXED);
        unsigned long long posix_sum = 0;
        int ranks = 0;
        PMPI_Comm_size(MPI_COMM_WORLD, &ranks);
        PMPI_Reduce(&mine_s, &max_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        PMPI_Reduce(mine, sums, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        PMPI_Reduce(writing, writers, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        PMPI_Reduce(&posix_mine, &posix_sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                    MPI_COMM_WORLD);
        if (world_rank() == 0) {
            posix_report.data_ranks = writers[0];
            posix_report.writers = writers[1];
            posix_report.bytes = posix_sum;
            write_report(out, ranks, max_s, sums[0], sums[1]);
        }
    }
    return PMPI_Finalize();
}
