/*
 * iotune_preload.c - inject parallel I/O settings into an unmodified MPI program and
 * measure its I/O, open by open.  Loaded with LD_PRELOAD; see docs/applications.md.
 *
 *   IOTUNE_SETTINGS     file of settings, one per line:
 *                         file:<glob>                    starts a section: the lines after
 *                                                        it apply only to files it matches
 *                         hint:<name>=<value>            MPI-IO hint (MPI_Info key)
 *                         hdf5:alignment=<bytes>
 *                         hdf5:alignment_threshold=<bytes>
 *                         hdf5:meta_block_size=<bytes>
 *                         hdf5:sieve_buf_size=<bytes>
 *                         hdf5:coll_metadata=yes|no
 *                       blank lines and lines starting with '#' are ignored. Lines before
 *                       any section apply to files no section matches. At MPI_File_open,
 *                       H5Fcreate and H5Fopen the first section whose glob matches the path
 *                       (fnmatch(3) without flags, so * crosses '/') as the program passed
 *                       it, or its absolute form, gives the file's settings; a section
 *                       never adds to the lines before it.
 *                       Unset: nothing is applied, writes are still measured.
 *   IOTUNE_PRELOAD_OUT  JSON report written by world rank 0 in MPI_Finalize: every open
 *                       of a file (all ranks of a collective open merged) with the hints
 *                       read back right after it, the bytes and time written and read
 *                       through it, its open-to-close time and who wrote.
 *                       Unset: no open is recorded, nothing is written and MPI_Finalize
 *                       does no extra work.
 *
 * Intercepted: MPI_File_open, MPI_File_close and the MPI_File_*write* and *read* calls
 * through the PMPI profiling interface; the POSIX writes made inside MPI-IO writes;
 * H5Fcreate and H5Fopen by symbol interposition (the real ones, and the H5P functions
 * used, are looked up with dlsym in the program's own HDF5); MPI_Finalize to gather the
 * opens and write the report. Warnings are printed only by a process that opened a file
 * through MPI-IO (see flush_warnings).
 *
 * Build (HDF5's wrapper for its include path; no HDF5 function is linked, see the H5Fcreate
 * section, so --as-needed leaves HDF5 out of the library's dependencies):
 *   h5pcc -shlib -Wl,--as-needed -shared -fPIC -O2 -Wall -o libiotune_preload.so \
 *         iotune_preload.c -ldl
 *
 * Threads: settings are loaded once (pthread_once), the counters are updated atomically
 * and the list of opens is guarded by a mutex, which is ample for MPI_THREAD_SINGLE and
 * MPI_THREAD_FUNNELED programs (and does no harm under MPI_THREAD_MULTIPLE).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
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
#define MAX_SECTIONS 32   /* file:<glob> sections, plus the lines before any */
#define MAX_FILES 256     /* distinct (path, opened_by) pairs in the report */
#define MAX_OPENS 1024    /* opens each rank keeps for the report */
#define MAX_REPORT_OPENS 4096 /* opens listed in the report, over all files */
#define MAX_WARNINGS 32   /* warnings kept for the report (all are printed) */
/* 1: files with the hints of the last open. 2: every open with its bytes, times and
 * writers; a file's hints are those of its open that moved the most data. 3: each open
 * names the settings section applied to it, and the sections are listed. */
#define REPORT_VERSION 3

struct kv {
    char *key;
    char *value;
};

/* ------------------------------------------------------------------------------------ */
/* Settings                                                                             */
/* ------------------------------------------------------------------------------------ */

/* The settings for the files one section applies to. */
struct section {
    char *pattern;                  /* the file:<glob>; NULL for the lines before any */
    struct kv hints[MAX_HINTS];     /* MPI-IO hints: key without the "hint:" prefix */
    int nhints;
    struct kv applied[MAX_SETTINGS]; /* every valid setting, key as written in the file */
    int napplied;
    int any_hdf5;                    /* at least one hdf5:* setting */
    int has_alignment, has_threshold, has_meta_block, has_sieve, has_coll;
    hsize_t alignment, threshold, meta_block;
    size_t sieve;
    int coll;
};

static struct {
    struct section sec[MAX_SECTIONS]; /* sec[0]: the lines before any section */
    int nsec;
    int any_hdf5, any_hints;          /* over all sections */
    const char *out; /* IOTUNE_PRELOAD_OUT, NULL when unset or empty */
} S = {.nsec = 1};

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

/* Set once this process has opened a file through MPI-IO (MPI_File_open directly or
 * through HDF5's MPI-IO driver): only then are warnings printed. A serial program that
 * inherits LD_PRELOAD (h5dump, a shell tool) opens none and so prints nothing, although
 * its HDF5 may lack what the settings need; the warnings still go into the report. */
static int opened_mpi_io;
static int nprinted; /* warnings[0..nprinted) are on stderr already */
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

/* Print the kept warnings not printed yet, on world rank 0 only (so an N-rank run prints
 * each once), once the process has opened a file through MPI-IO. */
static void flush_warnings(void)
{
    pthread_mutex_lock(&warn_lock);
    if (opened_mpi_io && world_rank() == 0)
        for (; nprinted < nwarnings; nprinted++)
            fprintf(stderr, PREFIX "%s\n", warnings[nprinted]);
    pthread_mutex_unlock(&warn_lock);
}

/* Keep a warning for the report and print it (see flush_warnings). Past MAX_WARNINGS a
 * warning is printed if printing is on and otherwise lost. */
static void warn(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&warn_lock);
    int kept = nwarnings < MAX_WARNINGS;
    if (kept)
        warnings[nwarnings++] = strdup(buf);
    pthread_mutex_unlock(&warn_lock);
    if (kept)
        flush_warnings();
    else if (opened_mpi_io && world_rank() == 0)
        fprintf(stderr, PREFIX "%s\n", buf);
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
static void parse_setting(struct section *sec, char *key, char *value, const char *path,
                          int lineno)
{
    unsigned long long n = 0;

    if (strncmp(key, "hint:", 5) == 0) {
        const char *name = key + 5;
        size_t klen = strlen(name), vlen = strlen(value);
        if (klen == 0 || klen >= MPI_MAX_INFO_KEY || vlen == 0 || vlen >= MPI_MAX_INFO_VAL) {
            warn("%s:%d: invalid MPI-IO hint '%s=%s' ignored", path, lineno, key, value);
            return;
        }
        if (kv_put(sec->hints, &sec->nhints, MAX_HINTS, name, value) != 0) {
            warn("%s:%d: more than %d hints, '%s' ignored", path, lineno, MAX_HINTS, key);
            return;
        }
    } else if (strcmp(key, "hdf5:coll_metadata") == 0) {
        if (strcmp(value, "yes") == 0)
            sec->coll = 1;
        else if (strcmp(value, "no") == 0)
            sec->coll = 0;
        else {
            warn("%s:%d: %s must be yes or no, not '%s'; ignored", path, lineno, key, value);
            return;
        }
        sec->has_coll = 1;
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
            sec->has_alignment = 1;
            sec->alignment = (hsize_t)n;
        } else if (strcmp(key, "hdf5:alignment_threshold") == 0) {
            sec->has_threshold = 1;
            sec->threshold = (hsize_t)n;
        } else if (strcmp(key, "hdf5:meta_block_size") == 0) {
            sec->has_meta_block = 1;
            sec->meta_block = (hsize_t)n;
        } else {
            sec->has_sieve = 1;
            sec->sieve = (size_t)n;
        }
    } else {
        report_unknown(key, path, lineno);
        return;
    }
    if (strncmp(key, "hdf5:", 5) == 0)
        sec->any_hdf5 = S.any_hdf5 = 1;
    else
        S.any_hints = 1;
    if (kv_put(sec->applied, &sec->napplied, MAX_SETTINGS, key, value) != 0)
        warn("%s:%d: too many settings to report, '%s' not listed", path, lineno, key);
}

/* The section a file:<glob> line starts (the one already started by the same glob, so its
 * lines add up); NULL, with a warning, for an empty glob or one too many. */
static struct section *start_section(const char *glob, const char *path, int lineno)
{
    if (*glob == '\0') {
        warn("%s:%d: file: needs a glob; the section's lines are ignored", path, lineno);
        return NULL;
    }
    for (int i = 1; i < S.nsec; i++)
        if (strcmp(S.sec[i].pattern, glob) == 0)
            return &S.sec[i];
    if (S.nsec == MAX_SECTIONS) {
        warn("%s:%d: more than %d file: sections, '%s' and its lines ignored", path, lineno,
             MAX_SECTIONS - 1, glob);
        return NULL;
    }
    S.sec[S.nsec].pattern = strdup(glob);
    return &S.sec[S.nsec++];
}

/* The section for a file opened as path: the first whose glob matches path or, for a
 * relative path, its absolute form (the working directory joined, not resolved: the file
 * may not exist yet); the lines before any section (sec[0]) when none does. */
static struct section *section_for(const char *path)
{
    if (S.nsec == 1 || path == NULL)
        return &S.sec[0];
    char absolute[PATH_MAX + 1];
    int has_absolute = 0;
    if (path[0] != '/' && getcwd(absolute, sizeof absolute) != NULL) {
        size_t len = strlen(absolute);
        has_absolute = snprintf(absolute + len, sizeof absolute - len, "/%s", path)
                       < (int)(sizeof absolute - len);
    }
    for (int i = 1; i < S.nsec; i++)
        if (fnmatch(S.sec[i].pattern, path, 0) == 0
            || (has_absolute && fnmatch(S.sec[i].pattern, absolute, 0) == 0))
            return &S.sec[i];
    return &S.sec[0];
}

static void load_settings(void)
{
    const char *out = getenv("IOTUNE_PRELOAD_OUT");
    S.out = out != NULL && *out != '\0' ? out : NULL;
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
    struct section *sec = &S.sec[0]; /* NULL: in a section that was refused */
    while (getline(&line, &cap, f) != -1) {
        lineno++;
        char *text = trim(line);
        if (*text == '\0' || *text == '#')
            continue;
        if (strncmp(text, "file:", 5) == 0) {
            sec = start_section(trim(text + 5), path, lineno);
            continue;
        }
        if (sec == NULL)
            continue;
        char *eq = strchr(text, '=');
        if (eq == NULL) {
            warn("%s:%d: expected key=value, got '%s'; ignored", path, lineno, text);
            continue;
        }
        *eq = '\0';
        parse_setting(sec, trim(text), trim(eq + 1), path, lineno);
    }
    free(line);
    fclose(f);
}

static void ensure_settings(void)
{
    pthread_once(&settings_once, load_settings);
}

/* ------------------------------------------------------------------------------------ */
/* Opens: one record per MPI_File_open (directly or through HDF5) on this rank          */
/* ------------------------------------------------------------------------------------ */

/* What one rank saw of one open, from the open to the close. Ranks of one collective open
 * are matched at MPI_Finalize by (path, opened_by, leader, comm_size, seq): every member
 * of the communicator sees the same opens of a path on it, in the same order. */
struct open_rec {
    char *path;
    const char *opened_by; /* a string literal */
    int leader;            /* world rank of the communicator's rank 0 (-1: not in world) */
    int comm_size;
    int seq;               /* earlier opens here with the same path, opener, leader, size */
    int amode;
    int section;           /* index in S.sec of the settings applied (0: no section) */
    int is_leader;         /* only the leader keeps the hints: every member has the same */
    struct kv *hints;      /* read back with MPI_File_get_info right after the open */
    int nhints;
    MPI_File fh;           /* MPI_FILE_NULL once closed, or for a file HDF5 opened without
                            * MPI-IO */
    int closed;
    double t_open, t_close; /* MPI_Wtime before the open and after the close */
    /* Updated atomically by the I/O calls; *_ns in nanoseconds. */
    uint64_t bytes_written, bytes_read, coll_bytes_written, fs_bytes, coll_fs_bytes;
    uint64_t write_ns, read_ns, write_calls, read_calls;
};

static struct open_rec *opens[MAX_OPENS];
static int nopens;
static unsigned long long opens_dropped; /* opens past MAX_OPENS on this rank */
static pthread_mutex_t opens_lock = PTHREAD_MUTEX_INITIALIZER;

/* Opens are recorded only for a report: with IOTUNE_PRELOAD_OUT set, in an MPI process. */
static int tracking(void)
{
    return S.out != NULL && world_rank() >= 0;
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

/* World rank of comm's rank 0 (-1 when it is not in MPI_COMM_WORLD); *is_leader whether
 * this process is comm's rank 0. Local calls only: no communication. */
static int leader_of(MPI_Comm comm, int *is_leader)
{
    int rank = 0, zero = 0, leader = MPI_UNDEFINED;
    MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    PMPI_Comm_rank(comm, &rank);
    *is_leader = rank == 0;
    if (PMPI_Comm_group(comm, &group) == MPI_SUCCESS
        && PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS)
        PMPI_Group_translate_ranks(group, 1, &zero, world, &leader);
    if (group != MPI_GROUP_NULL)
        PMPI_Group_free(&group);
    if (world != MPI_GROUP_NULL)
        PMPI_Group_free(&world);
    return leader == MPI_UNDEFINED ? -1 : leader;
}

/* A new record for an open of path by opened_by on comm (MPI_COMM_NULL: a file HDF5
 * opened without MPI-IO, seen by this rank alone), with fh's hints read back when fh is
 * not MPI_FILE_NULL; NULL past MAX_OPENS. */
static struct open_rec *record_open(const char *path, const char *opened_by, MPI_Comm comm,
                                    int amode, MPI_File fh, double t_open,
                                    const struct section *sec)
{
    struct open_rec *rec = calloc(1, sizeof *rec);
    if (rec == NULL)
        return NULL;
    rec->path = strdup(path);
    rec->opened_by = opened_by;
    rec->amode = amode;
    rec->section = (int)(sec - S.sec);
    rec->fh = fh;
    rec->t_open = t_open;
    if (comm == MPI_COMM_NULL) {
        rec->leader = world_rank();
        rec->comm_size = 1;
        rec->is_leader = 1;
        rec->closed = 1;
        rec->t_close = t_open;
    } else {
        PMPI_Comm_size(comm, &rec->comm_size);
        rec->leader = leader_of(comm, &rec->is_leader);
    }
    if (rec->is_leader && fh != MPI_FILE_NULL) {
        MPI_Info used = MPI_INFO_NULL;
        if (PMPI_File_get_info(fh, &used) == MPI_SUCCESS) {
            rec->hints = info_pairs(used, &rec->nhints);
            PMPI_Info_free(&used);
        }
    }
    pthread_mutex_lock(&opens_lock);
    if (nopens >= MAX_OPENS) {
        opens_dropped++;
        pthread_mutex_unlock(&opens_lock);
        free(rec->path);
        for (int i = 0; i < rec->nhints; i++) {
            free(rec->hints[i].key);
            free(rec->hints[i].value);
        }
        free(rec->hints);
        free(rec);
        return NULL;
    }
    for (int i = 0; i < nopens; i++)
        if (opens[i]->leader == rec->leader && opens[i]->comm_size == rec->comm_size
            && strcmp(opens[i]->opened_by, opened_by) == 0 && strcmp(opens[i]->path, path) == 0)
            rec->seq++;
    opens[nopens++] = rec;
    pthread_mutex_unlock(&opens_lock);
    return rec;
}

/* The open record of a live file handle, NULL when it has none (not tracked, dropped). */
static struct open_rec *open_of(MPI_File fh)
{
    struct open_rec *found = NULL;
    if (fh == MPI_FILE_NULL)
        return NULL;
    pthread_mutex_lock(&opens_lock);
    for (int i = nopens - 1; i >= 0; i--) {
        if (opens[i]->fh == fh) {
            found = opens[i];
            break;
        }
    }
    pthread_mutex_unlock(&opens_lock);
    return found;
}

/* H5Fcreate/H5Fopen calls seen, to tell when hdf5:* settings had nothing to act on. */
static uint64_t h5_calls;

/* Set while an H5Fcreate/H5Fopen wrapper runs, so that the MPI_File_open HDF5's MPI-IO
 * driver makes inside it is recorded under the HDF5 call (per thread). */
static __thread const char *h5_opener;
static __thread int h5_mpi_open_seen;

/* ------------------------------------------------------------------------------------ */
/* MPI_File_open and MPI_File_close                                                     */
/* ------------------------------------------------------------------------------------ */

/* Returns a new info: a copy of base (or an empty one for MPI_INFO_NULL) with the hints
 * of sec set over it, so the run's values win; MPI_INFO_NULL if that fails. */
static MPI_Info merged_info(MPI_Info base, const struct section *sec)
{
    MPI_Info merged = MPI_INFO_NULL;
    int rc = base == MPI_INFO_NULL ? PMPI_Info_create(&merged) : PMPI_Info_dup(base, &merged);
    if (rc != MPI_SUCCESS)
        return MPI_INFO_NULL;
    for (int i = 0; i < sec->nhints; i++)
        PMPI_Info_set(merged, sec->hints[i].key, sec->hints[i].value);
    return merged;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    ensure_settings();
    double t_open = PMPI_Wtime();
    const struct section *sec = section_for(filename);
    MPI_Info merged = sec->nhints > 0 ? merged_info(info, sec) : MPI_INFO_NULL;
    int rc = PMPI_File_open(comm, filename, amode, merged != MPI_INFO_NULL ? merged : info, fh);
    if (merged != MPI_INFO_NULL)
        PMPI_Info_free(&merged);
    if (rc == MPI_SUCCESS) {
        if (h5_opener != NULL)
            h5_mpi_open_seen = 1;
        if (!opened_mpi_io) {
            opened_mpi_io = 1;
            flush_warnings();
        }
        if (tracking())
            record_open(filename, h5_opener != NULL ? h5_opener : "MPI_File_open", comm, amode,
                        *fh, t_open, sec);
    }
    return rc;
}

int MPI_File_close(MPI_File *fh)
{
    struct open_rec *rec = fh != NULL ? open_of(*fh) : NULL;
    int rc = PMPI_File_close(fh);
    if (rec != NULL) {
        pthread_mutex_lock(&opens_lock);
        rec->t_close = PMPI_Wtime();
        rec->closed = 1;
        rec->fh = MPI_FILE_NULL; /* the handle value may be reused by a later open */
        pthread_mutex_unlock(&opens_lock);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* Read and write calls: time in the call and bytes requested                           */
/* ------------------------------------------------------------------------------------ */

/* This process's totals over all files. Nanoseconds, so that sums are updated
 * atomically like the byte counts. */
static uint64_t write_ns, write_bytes, write_calls, read_ns, read_bytes, read_calls;

/* Add VALUE to the counter at POINTER, atomically. */
#define ADD(POINTER, VALUE) __atomic_fetch_add((POINTER), (uint64_t)(VALUE), __ATOMIC_RELAXED)

/* Account one call (call = 0: the *_end half of a split collective, time only) to the
 * totals and to rec (NULL: untracked file). */
static void account(struct open_rec *rec, int writing, int coll, double t0, double t1,
                    MPI_Count count, MPI_Datatype type, int rc, int call)
{
    uint64_t ns = t1 > t0 ? (uint64_t)((t1 - t0) * 1e9) : 0;
    ADD(writing ? &write_ns : &read_ns, ns);
    if (rec != NULL)
        ADD(writing ? &rec->write_ns : &rec->read_ns, ns);
    if (rc != MPI_SUCCESS || !call)
        return;
    MPI_Count size = 0;
    uint64_t bytes = 0;
    if (count > 0 && PMPI_Type_size_x(type, &size) == MPI_SUCCESS && size > 0)
        bytes = (uint64_t)count * (uint64_t)size;
    ADD(writing ? &write_bytes : &read_bytes, bytes);
    ADD(writing ? &write_calls : &read_calls, 1);
    if (rec != NULL) {
        ADD(writing ? &rec->bytes_written : &rec->bytes_read, bytes);
        ADD(writing ? &rec->write_calls : &rec->read_calls, 1);
        if (writing && coll)
            ADD(&rec->coll_bytes_written, bytes);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Who writes to the file system                                                        */
/* ------------------------------------------------------------------------------------ */

/* The POSIX writes this rank makes inside MPI-IO write calls: whether a rank writes to the
 * file system at all shows whether collective buffering (romio_cb_write, cb_nodes) took
 * effect, where MPI_File_get_info cannot tell (Open MPI returns the hints given); inside
 * collective writes, the ranks that write are the aggregators, a second witness of
 * cb_nodes beside the hints read back. */
static __thread int in_mpi_write, in_coll_write;
static __thread struct open_rec *writing_to;
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
        ADD(&posix_bytes, done);
        ADD(&posix_calls, 1);
        struct open_rec *rec = writing_to;
        if (rec != NULL) {
            ADD(&rec->fs_bytes, done);
            if (in_coll_write)
                ADD(&rec->coll_fs_bytes, done);
        }
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

/* One MPI-IO call on FH: WRITING 1 for a write, 0 for a read; COLL 1 for a collective
 * call; CALL 0 for the *_end half of a split collective (its bytes were counted at
 * *_begin, only its time is added). */
#define TIMED(FH, WRITING, COLL, CALL, COUNT, TYPE, PCALL)                                  \
    do {                                                                                    \
        struct open_rec *rec_ = S.out != NULL ? open_of(FH) : NULL;                         \
        double t0_ = PMPI_Wtime();                                                          \
        if (WRITING) {                                                                      \
            in_mpi_write++;                                                                 \
            in_coll_write = (COLL);                                                         \
            writing_to = rec_;                                                              \
        }                                                                                   \
        int rc_ = PCALL;                                                                    \
        if (WRITING) {                                                                      \
            in_mpi_write--;                                                                 \
            in_coll_write = 0;                                                              \
            writing_to = NULL;                                                              \
        }                                                                                   \
        account(rec_, WRITING, COLL, t0_, PMPI_Wtime(), COUNT, TYPE, rc_, CALL);            \
        return rc_;                                                                         \
    } while (0)

#define TIMED_WRITE(FH, COLL, COUNT, TYPE, PCALL) TIMED(FH, 1, COLL, 1, COUNT, TYPE, PCALL)
#define TIMED_READ(FH, COLL, COUNT, TYPE, PCALL) TIMED(FH, 0, COLL, 1, COUNT, TYPE, PCALL)
#define TIMED_WRITE_END(FH, PCALL) TIMED(FH, 1, 1, 0, 0, MPI_DATATYPE_NULL, PCALL)
#define TIMED_READ_END(FH, PCALL) TIMED(FH, 0, 1, 0, 0, MPI_DATATYPE_NULL, PCALL)

/* Writes. */

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                   MPI_Status *st)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_write(fh, buf, count, type, st));
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                       MPI_Status *st)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_write_all(fh, buf, count, type, st));
}

int MPI_File_write_at(MPI_File fh, MPI_Offset off, const void *buf, int count,
                      MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_write_at(fh, off, buf, count, type, st));
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count,
                          MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_write_at_all(fh, off, buf, count, type, st));
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                          MPI_Status *st)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_write_shared(fh, buf, count, type, st));
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                           MPI_Status *st)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_write_ordered(fh, buf, count, type, st));
}

/* Non-blocking: the bytes are counted when posted and only the time of the posting
 * call is measured (the completion in MPI_Wait/MPI_Test is not seen). */

int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                    MPI_Request *rq)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_iwrite(fh, buf, count, type, rq));
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset off, const void *buf, int count,
                       MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_iwrite_at(fh, off, buf, count, type, rq));
}

int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                           MPI_Request *rq)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_iwrite_shared(fh, buf, count, type, rq));
}

#if MPI_VERSION > 3 || (MPI_VERSION == 3 && MPI_SUBVERSION >= 1)

int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                        MPI_Request *rq)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_iwrite_all(fh, buf, count, type, rq));
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count,
                           MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_iwrite_at_all(fh, off, buf, count, type, rq));
}

#endif

/* Split collectives: bytes at *_begin, time of both halves. */

int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_write_all_begin(fh, buf, count, type));
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *st)
{
    TIMED_WRITE_END(fh, PMPI_File_write_all_end(fh, buf, st));
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset off, const void *buf, int count,
                                MPI_Datatype type)
{
    TIMED_WRITE(fh, 1, count, type,
                PMPI_File_write_at_all_begin(fh, off, buf, count, type));
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *st)
{
    TIMED_WRITE_END(fh, PMPI_File_write_at_all_end(fh, buf, st));
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_write_ordered_begin(fh, buf, count, type));
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *st)
{
    TIMED_WRITE_END(fh, PMPI_File_write_ordered_end(fh, buf, st));
}

#if MPI_VERSION >= 4
/* MPI-4 large-count variants (mpi4py >= 4 calls these when the library has them). */

int MPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                     MPI_Status *st)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_write_c(fh, buf, count, type, st));
}

int MPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                         MPI_Status *st)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_write_all_c(fh, buf, count, type, st));
}

int MPI_File_write_at_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_write_at_c(fh, off, buf, count, type, st));
}

int MPI_File_write_at_all_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count,
                            MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(fh, 1, count, type,
                PMPI_File_write_at_all_c(fh, off, buf, count, type, st));
}

int MPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count,
                            MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_write_shared_c(fh, buf, count, type, st));
}

int MPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count,
                             MPI_Datatype type, MPI_Status *st)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_write_ordered_c(fh, buf, count, type, st));
}

int MPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                      MPI_Request *rq)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_iwrite_c(fh, buf, count, type, rq));
}

int MPI_File_iwrite_at_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count,
                         MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_iwrite_at_c(fh, off, buf, count, type, rq));
}

int MPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count,
                             MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(fh, 0, count, type, PMPI_File_iwrite_shared_c(fh, buf, count, type, rq));
}

int MPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                          MPI_Request *rq)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_iwrite_all_c(fh, buf, count, type, rq));
}

int MPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count,
                             MPI_Datatype type, MPI_Request *rq)
{
    TIMED_WRITE(fh, 1, count, type,
                PMPI_File_iwrite_at_all_c(fh, off, buf, count, type, rq));
}

int MPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                               MPI_Datatype type)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_write_all_begin_c(fh, buf, count, type));
}

int MPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset off, const void *buf,
                                  MPI_Count count, MPI_Datatype type)
{
    TIMED_WRITE(fh, 1, count, type,
                PMPI_File_write_at_all_begin_c(fh, off, buf, count, type));
}

int MPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                   MPI_Datatype type)
{
    TIMED_WRITE(fh, 1, count, type, PMPI_File_write_ordered_begin_c(fh, buf, count, type));
}

#endif

/* Reads. */

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *st)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_read(fh, buf, count, type, st));
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *st)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_all(fh, buf, count, type, st));
}

int MPI_File_read_at(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype type,
                     MPI_Status *st)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_read_at(fh, off, buf, count, type, st));
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset off, void *buf, int count,
                         MPI_Datatype type, MPI_Status *st)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_at_all(fh, off, buf, count, type, st));
}

int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype type,
                         MPI_Status *st)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_read_shared(fh, buf, count, type, st));
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype type,
                          MPI_Status *st)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_ordered(fh, buf, count, type, st));
}

/* Non-blocking: the bytes are counted when posted and only the time of the posting
 * call is measured (the completion in MPI_Wait/MPI_Test is not seen). */

int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *rq)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_iread(fh, buf, count, type, rq));
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype type,
                      MPI_Request *rq)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_iread_at(fh, off, buf, count, type, rq));
}

int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype type,
                          MPI_Request *rq)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_iread_shared(fh, buf, count, type, rq));
}

#if MPI_VERSION > 3 || (MPI_VERSION == 3 && MPI_SUBVERSION >= 1)

int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype type,
                       MPI_Request *rq)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_iread_all(fh, buf, count, type, rq));
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset off, void *buf, int count,
                          MPI_Datatype type, MPI_Request *rq)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_iread_at_all(fh, off, buf, count, type, rq));
}

#endif

/* Split collectives: bytes at *_begin, time of both halves. */

int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype type)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_all_begin(fh, buf, count, type));
}

int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *st)
{
    TIMED_READ_END(fh, PMPI_File_read_all_end(fh, buf, st));
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset off, void *buf, int count,
                               MPI_Datatype type)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_at_all_begin(fh, off, buf, count, type));
}

int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *st)
{
    TIMED_READ_END(fh, PMPI_File_read_at_all_end(fh, buf, st));
}

int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype type)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_ordered_begin(fh, buf, count, type));
}

int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *st)
{
    TIMED_READ_END(fh, PMPI_File_read_ordered_end(fh, buf, st));
}

#if MPI_VERSION >= 4
/* MPI-4 large-count variants (mpi4py >= 4 calls these when the library has them). */

int MPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type,
                    MPI_Status *st)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_read_c(fh, buf, count, type, st));
}

int MPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type,
                        MPI_Status *st)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_all_c(fh, buf, count, type, st));
}

int MPI_File_read_at_c(MPI_File fh, MPI_Offset off, void *buf, MPI_Count count,
                       MPI_Datatype type, MPI_Status *st)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_read_at_c(fh, off, buf, count, type, st));
}

int MPI_File_read_at_all_c(MPI_File fh, MPI_Offset off, void *buf, MPI_Count count,
                           MPI_Datatype type, MPI_Status *st)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_at_all_c(fh, off, buf, count, type, st));
}

int MPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type,
                           MPI_Status *st)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_read_shared_c(fh, buf, count, type, st));
}

int MPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type,
                            MPI_Status *st)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_ordered_c(fh, buf, count, type, st));
}

int MPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type,
                     MPI_Request *rq)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_iread_c(fh, buf, count, type, rq));
}

int MPI_File_iread_at_c(MPI_File fh, MPI_Offset off, void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Request *rq)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_iread_at_c(fh, off, buf, count, type, rq));
}

int MPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type,
                            MPI_Request *rq)
{
    TIMED_READ(fh, 0, count, type, PMPI_File_iread_shared_c(fh, buf, count, type, rq));
}

int MPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type,
                         MPI_Request *rq)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_iread_all_c(fh, buf, count, type, rq));
}

int MPI_File_iread_at_all_c(MPI_File fh, MPI_Offset off, void *buf, MPI_Count count,
                            MPI_Datatype type, MPI_Request *rq)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_iread_at_all_c(fh, off, buf, count, type, rq));
}

int MPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_all_begin_c(fh, buf, count, type));
}

int MPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset off, void *buf, MPI_Count count,
                                 MPI_Datatype type)
{
    TIMED_READ(fh, 1, count, type,
               PMPI_File_read_at_all_begin_c(fh, off, buf, count, type));
}

int MPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count,
                                  MPI_Datatype type)
{
    TIMED_READ(fh, 1, count, type, PMPI_File_read_ordered_begin_c(fh, buf, count, type));
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
        if (missing_ != NULL && (S.any_hdf5 || S.any_hints))
            warn("HDF5 settings not applied: %s not found (an HDF5 without parallel "
                 "support?)", missing_);
    }
    pthread_mutex_unlock(&h5_lock);
    return h5_ready;
}

/* Set the MPI-IO hints of sec on an fapl that uses the MPI-IO driver; 0 on success. */
static int set_fapl_hints(hid_t fapl, const struct section *sec)
{
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    if (H5.get_fapl_mpio(fapl, &comm, &info) < 0)
        return -1;
    /* H5Pget_fapl_mpio hands out duplicates; H5Pset_fapl_mpio duplicates again. */
    MPI_Info merged = merged_info(info, sec);
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

/* A copy of fapl with the settings of sec (the file's section), or H5I_INVALID_HID to use fapl as it is (no
 * settings, HDF5's functions not found, or fapl is not a file-access list: the real call
 * then reports the user's error as it would without us). HDF5's error printing is off
 * while we work, so a failure here prints nothing; a setting that cannot be applied
 * becomes a warning. */
static hid_t tuned_fapl(hid_t fapl, const void *real, const struct section *sec)
{
    hid_t out = H5I_INVALID_HID;
    if (!sec->any_hdf5 && sec->nhints == 0)
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
        if (sec->has_alignment || sec->has_threshold) {
            hsize_t threshold = 1, alignment = 1;
            H5.get_alignment(out, &threshold, &alignment);
            if (sec->has_threshold)
                threshold = sec->threshold;
            if (sec->has_alignment)
                alignment = sec->alignment;
            if (H5.set_alignment(out, threshold, alignment) < 0)
                warn("H5Pset_alignment(%llu, %llu) failed", (unsigned long long)threshold,
                     (unsigned long long)alignment);
        }
        if (sec->has_meta_block && H5.set_meta_block_size(out, sec->meta_block) < 0)
            warn("H5Pset_meta_block_size(%llu) failed", (unsigned long long)sec->meta_block);
        if (sec->has_sieve && H5.set_sieve_buf_size(out, sec->sieve) < 0)
            warn("H5Pset_sieve_buf_size(%zu) failed", sec->sieve);
        /* Collective metadata and MPI-IO hints only mean something with the MPI-IO
         * driver; other drivers (sec2, core...) are left alone. */
        if (uses_mpio(out)) {
            if (sec->has_coll
                && (H5.set_all_coll_metadata_ops(out, sec->coll ? 1 : 0) < 0
                    || H5.set_coll_metadata_write(out, sec->coll ? 1 : 0) < 0))
                warn("setting collective metadata to %s failed", sec->coll ? "yes" : "no");
            if (sec->nhints > 0 && set_fapl_hints(out, sec) != 0)
                warn("merging MPI-IO hints into the file-access list failed");
        }
    }
    if (silenced)
        H5.set_auto(H5E_DEFAULT, saved_func, saved_data);
    return out;
}

/* Read the HDF5 settings back from the open file fid, once per process (the first file
 * opened with hdf5:* settings); errors leave a value unread. */
static void read_hdf5_back(hid_t fid, const struct section *sec)
{
    if (!sec->any_hdf5 || h5_ready != 1 || fid < 0)
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
        const struct section *sec_ = section_for(NAME);                                 \
        hid_t mine_ = tuned_fapl(FAPL, REAL, sec_);                                     \
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
        read_hdf5_back(fid_, sec_);                                                     \
        if (fid_ >= 0 && !seen_ && NAME != NULL && tracking())                              \
            record_open(NAME, OPENER, MPI_COMM_NULL, 0, MPI_FILE_NULL, PMPI_Wtime(),    \
                        sec_);                                                          \
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
/* MPI_Finalize: the opens of all ranks gathered on rank 0 and merged                    */
/* ------------------------------------------------------------------------------------ */

/* Each rank packs its opens into bytes (native layout: every rank runs the same build on
 * the same kind of machine); world rank 0 gathers them and merges the ranks of each open. */
struct buf {
    char *data;
    size_t len, cap;
    int failed;
};

static void put(struct buf *b, const void *p, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *data = realloc(b->data, cap);
        if (data == NULL) {
            b->failed = 1;
            return;
        }
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void put_u64(struct buf *b, uint64_t v) { put(b, &v, sizeof v); }
static void put_i64(struct buf *b, int64_t v) { put(b, &v, sizeof v); }
static void put_f64(struct buf *b, double v) { put(b, &v, sizeof v); }

/* Length, then the bytes with their NUL, so the gathered buffer can be read in place. */
static void put_str(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    put_u64(b, (uint64_t)n);
    put(b, s, n + 1);
}

struct reader {
    const char *p, *end;
    int failed;
};

static const char *take(struct reader *r, size_t n)
{
    if (r->failed || (size_t)(r->end - r->p) < n) {
        r->failed = 1;
        return NULL;
    }
    const char *at = r->p;
    r->p += n;
    return at;
}

#define GETTER(NAME, TYPE)                                                                  \
    static TYPE NAME(struct reader *r)                                                      \
    {                                                                                       \
        TYPE v = 0;                                                                         \
        const char *at = take(r, sizeof v);                                                 \
        if (at != NULL)                                                                     \
            memcpy(&v, at, sizeof v);                                                       \
        return v;                                                                           \
    }
GETTER(get_u64, uint64_t)
GETTER(get_i64, int64_t)
GETTER(get_f64, double)

static const char *get_str(struct reader *r)
{
    uint64_t n = get_u64(r);
    const char *s = n < (uint64_t)(r->end - r->p) ? take(r, (size_t)n + 1) : NULL;
    if (s == NULL || s[n] != '\0') {
        r->failed = 1;
        return NULL;
    }
    return s;
}

/* One open as one rank saw it; "now" closes an open the program never closed. */
static void pack_open(struct buf *b, const struct open_rec *o, double now)
{
    put_str(b, o->path);
    put_str(b, o->opened_by);
    put_i64(b, o->leader);
    put_i64(b, o->comm_size);
    put_i64(b, o->seq);
    put_i64(b, o->amode);
    put_i64(b, o->section);
    put_i64(b, o->closed);
    put_f64(b, (o->closed ? o->t_close : now) - o->t_open);
    put_f64(b, (double)__atomic_load_n(&o->write_ns, __ATOMIC_RELAXED) * 1e-9);
    put_f64(b, (double)__atomic_load_n(&o->read_ns, __ATOMIC_RELAXED) * 1e-9);
    put_u64(b, __atomic_load_n(&o->bytes_written, __ATOMIC_RELAXED));
    put_u64(b, __atomic_load_n(&o->bytes_read, __ATOMIC_RELAXED));
    put_u64(b, __atomic_load_n(&o->coll_bytes_written, __ATOMIC_RELAXED));
    put_u64(b, __atomic_load_n(&o->fs_bytes, __ATOMIC_RELAXED));
    put_u64(b, __atomic_load_n(&o->coll_fs_bytes, __ATOMIC_RELAXED));
    put_u64(b, __atomic_load_n(&o->write_calls, __ATOMIC_RELAXED));
    put_u64(b, __atomic_load_n(&o->read_calls, __ATOMIC_RELAXED));
    put_i64(b, o->is_leader ? o->nhints : -1); /* -1: the leader's record has the hints */
    for (int i = 0; o->is_leader && i < o->nhints; i++) {
        put_str(b, o->hints[i].key);
        put_str(b, o->hints[i].value);
    }
}

/* One open of the report: the ranks of a collective open merged. Times are the slowest
 * rank's, bytes and calls summed, ranks_* count the ranks that did the thing. */
struct merged {
    const char *path, *opened_by;
    int64_t leader, comm_size, seq, amode, section;
    int ranks, closed_ranks;
    double open_s, write_s, read_s;
    uint64_t bytes_written, bytes_read, write_calls, read_calls;
    int ranks_writing, ranks_writing_to_files, ranks_coll, ranks_coll_fs;
    int64_t nhints;        /* -1 until the leader's record is seen */
    const char *hints_at;  /* the leader's packed hints, in the gathered buffer */
    int file;              /* index among the report's files, -1 when not listed */
    int next;              /* next in the hash bucket, -1 at the end */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}

static uint64_t key_hash(const char *path, const char *by, int64_t leader, int64_t size,
                         int64_t seq)
{
    uint64_t h = fnv(14695981039346656037ULL, path, strlen(path) + 1);
    h = fnv(h, by, strlen(by) + 1);
    h = fnv(h, &leader, sizeof leader);
    h = fnv(h, &size, sizeof size);
    return fnv(h, &seq, sizeof seq);
}

/* Merge the packed opens of all ranks (all[0..total)); returns the opens in the order
 * first seen (rank 0's first, in its order of opening) and sets *n; NULL on failure. */
static struct merged *merge_opens(const char *all, size_t total, int *n)
{
    *n = 0;
    /* Count the records first, to size the table: every record has at least this much. */
    size_t least = 2 * 8 + 2 + 6 * 8 + 3 * 8 + 7 * 8 + 8;
    size_t cap = total / least + 1, buckets = 16;
    while (buckets < 2 * cap)
        buckets *= 2;
    struct merged *out = calloc(cap, sizeof *out);
    int *heads = malloc(buckets * sizeof *heads);
    if (out == NULL || heads == NULL) {
        free(out);
        free(heads);
        return NULL;
    }
    for (size_t i = 0; i < buckets; i++)
        heads[i] = -1;
    struct reader r = {all, all + total, 0};
    while (r.p < r.end && !r.failed) {
        const char *path = get_str(&r), *by = get_str(&r);
        int64_t leader = get_i64(&r), size = get_i64(&r), seq = get_i64(&r);
        int64_t amode = get_i64(&r), section = get_i64(&r), closed = get_i64(&r);
        double open_s = get_f64(&r), write_s = get_f64(&r), read_s = get_f64(&r);
        uint64_t bw = get_u64(&r), br = get_u64(&r), cbw = get_u64(&r);
        uint64_t fsb = get_u64(&r), cfsb = get_u64(&r), wc = get_u64(&r), rc = get_u64(&r);
        int64_t nhints = get_i64(&r);
        const char *hints_at = r.p;
        for (int64_t i = 0; i < 2 * nhints && !r.failed; i++)
            get_str(&r);
        if (r.failed || (size_t)*n >= cap)
            break;
        uint64_t h = key_hash(path, by, leader, size, seq) & (buckets - 1);
        int at = heads[h];
        while (at >= 0 && !(out[at].leader == leader && out[at].comm_size == size
                            && out[at].seq == seq && strcmp(out[at].path, path) == 0
                            && strcmp(out[at].opened_by, by) == 0))
            at = out[at].next;
        if (at < 0) {
            at = (*n)++;
            out[at] = (struct merged){.path = path, .opened_by = by, .leader = leader,
                                      .comm_size = size, .seq = seq, .amode = amode,
                                      .section = section,
                                      .nhints = -1, .file = -1, .next = heads[h]};
            heads[h] = at;
        }
        struct merged *m = &out[at];
        m->ranks++;
        m->closed_ranks += closed != 0;
        m->open_s = open_s > m->open_s ? open_s : m->open_s;
        m->write_s = write_s > m->write_s ? write_s : m->write_s;
        m->read_s = read_s > m->read_s ? read_s : m->read_s;
        m->bytes_written += bw;
        m->bytes_read += br;
        m->write_calls += wc;
        m->read_calls += rc;
        m->ranks_writing += bw > 0;
        m->ranks_writing_to_files += fsb > 0;
        m->ranks_coll += cbw > 0;
        m->ranks_coll_fs += cfsb > 0;
        if (nhints >= 0) {
            m->nhints = nhints;
            m->hints_at = hints_at;
        }
    }
    free(heads);
    return out;
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

/* The hints an open's leader packed (null when its record is missing). */
static void json_packed_hints(FILE *f, const struct merged *m, const char *end)
{
    if (m->nhints < 0) {
        fputs("null", f);
        return;
    }
    struct reader r = {m->hints_at, end, 0};
    fputc('{', f);
    for (int64_t i = 0; i < m->nhints; i++) {
        const char *key = get_str(&r), *value = get_str(&r);
        if (r.failed)
            break;
        if (i)
            fputs(", ", f);
        json_string(f, key);
        fputs(": ", f);
        json_string(f, value);
    }
    fputc('}', f);
}

/* The glob of the section S.sec[i], null for the lines before any section. */
static void json_section(FILE *f, int64_t i)
{
    if (i > 0 && i < S.nsec)
        json_string(f, S.sec[i].pattern);
    else
        fputs("null", f);
}

/* Whether open a moved more data than b: more bytes, then a larger communicator. */
static int moved_more(const struct merged *a, const struct merged *b)
{
    uint64_t x = a->bytes_written + a->bytes_read, y = b->bytes_written + b->bytes_read;
    return x != y ? x > y : a->comm_size > b->comm_size;
}

/* A file of the report: its opens with the same path and opener. */
struct file_group {
    const char *path, *opened_by;
    int data; /* its open that moved the most data (moved_more), whose hints it shows */
    uint64_t bytes_written, bytes_read;
    double open_s; /* its opens' open-to-close times (slowest rank each), added */
};

/* What the report says beyond the opens, reduced over the ranks. */
struct totals {
    int ranks;
    double write_s, read_s;                /* slowest rank's time in the calls */
    unsigned long long sums[5];            /* write bytes, calls; read bytes, calls; POSIX */
    int writers[2];                        /* ranks writing through MPI-IO, to files then */
    unsigned long long opens_omitted;
};

static void write_files(FILE *f, struct merged *m, int n, const char *end,
                        unsigned long long *omitted)
{
    static struct file_group groups[MAX_FILES];
    int ngroups = 0, listed = 0;
    unsigned long long files_omitted = 0;
    for (int i = 0; i < n; i++) {
        int g = 0;
        while (g < ngroups && !(strcmp(groups[g].path, m[i].path) == 0
                                && strcmp(groups[g].opened_by, m[i].opened_by) == 0))
            g++;
        if (g == ngroups) {
            if (ngroups == MAX_FILES) {
                files_omitted++;
                (*omitted)++;
                continue;
            }
            groups[ngroups++] = (struct file_group){m[i].path, m[i].opened_by, i, 0, 0, 0};
        }
        m[i].file = g;
        groups[g].bytes_written += m[i].bytes_written;
        groups[g].bytes_read += m[i].bytes_read;
        groups[g].open_s += m[i].open_s;
        if (moved_more(&m[i], &m[groups[g].data]))
            groups[g].data = i;
    }
    fputs(" \"files\": [", f);
    for (int g = 0; g < ngroups; g++) {
        fputs(g ? ",\n   " : "\n   ", f);
        fputs("{\"path\": ", f);
        json_string(f, groups[g].path);
        fputs(", \"opened_by\": ", f);
        json_string(f, groups[g].opened_by);
        fputs(", \"hints_in_effect\": ", f);
        if (m[groups[g].data].nhints < 0)
            fputs("{}", f);
        else
            json_packed_hints(f, &m[groups[g].data], end);
        fprintf(f, ",\n    \"bytes_written\": %llu, \"bytes_read\": %llu, \"open_s\": %.9g, "
                   "\"opens\": [",
                (unsigned long long)groups[g].bytes_written,
                (unsigned long long)groups[g].bytes_read, groups[g].open_s);
        const char *sep = "";
        for (int i = 0; i < n; i++) {
            if (m[i].file != g)
                continue;
            if (listed == MAX_REPORT_OPENS) {
                (*omitted)++;
                continue;
            }
            listed++;
            const struct merged *o = &m[i];
            fprintf(f, "%s\n     {\"comm_size\": %lld, \"amode\": %lld, \"ranks\": %d, "
                       "\"closed\": %s, \"open_to_close_s\": %.9g, \"write_s\": %.9g, "
                       "\"read_s\": %.9g, \"bytes_written\": %llu, \"bytes_read\": %llu, "
                       "\"write_calls\": %llu, \"read_calls\": %llu, \"ranks_writing\": %d, "
                       "\"ranks_writing_to_files\": %d, \"ranks_writing_collectively\": %d, "
                       "\"ranks_writing_to_files_collectively\": %d, \"section\": ",
                    sep, (long long)o->comm_size, (long long)o->amode, o->ranks,
                    o->closed_ranks == o->ranks ? "true" : "false", o->open_s, o->write_s,
                    o->read_s, (unsigned long long)o->bytes_written,
                    (unsigned long long)o->bytes_read, (unsigned long long)o->write_calls,
                    (unsigned long long)o->read_calls, o->ranks_writing,
                    o->ranks_writing_to_files, o->ranks_coll, o->ranks_coll_fs);
            json_section(f, o->section);
            fputs(", \"hints_in_effect\": ", f);
            json_packed_hints(f, o, end);
            fputc('}', f);
            sep = ",";
        }
        fputs("]}", f);
    }
    fprintf(f, "],\n \"files_omitted\": %llu,\n", files_omitted);
}

static void write_report(const char *path, const struct totals *t, struct merged *m, int n,
                         const char *end)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        fprintf(stderr, PREFIX "IOTUNE_PRELOAD_OUT path too long; no report written\n");
        return;
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        fprintf(stderr, PREFIX "cannot write %s: %s\n", tmp, strerror(errno));
        return;
    }
    fprintf(f, "{\"preload\": \"iotune\", \"version\": %d, \"ranks\": %d,\n", REPORT_VERSION,
            t->ranks);
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
    json_object(f, S.sec[0].applied, S.sec[0].napplied);
    fputs(",\n \"sections\": [", f);
    for (int i = 1; i < S.nsec; i++) {
        fputs(i > 1 ? ",\n   {\"file\": " : "\n   {\"file\": ", f);
        json_string(f, S.sec[i].pattern);
        fputs(", \"settings_applied\": ", f);
        json_object(f, S.sec[i].applied, S.sec[i].napplied);
        fputc('}', f);
    }
    fputs("],\n", f);
    unsigned long long omitted = t->opens_omitted;
    write_files(f, m, n, end, &omitted);
    fprintf(f, " \"opens_omitted\": %llu,\n", omitted);
    fprintf(f, " \"file_system_writes\": {\"ranks_writing_mpi_io\": %d, "
               "\"ranks_writing_to_files\": %d, \"bytes\": %llu},\n",
            t->writers[0], t->writers[1], t->sums[4]);
    /* Rank 0's read-back (every rank opens the same file with the same settings). */
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
    fprintf(f, "],\n \"write_time_s\": %.9g, \"bytes_written\": %llu, \"write_calls\": %llu,\n"
               " \"read_time_s\": %.9g, \"bytes_read\": %llu, \"read_calls\": %llu}\n",
            t->write_s, t->sums[0], t->sums[1], t->read_s, t->sums[2], t->sums[3]);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, PREFIX "cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
    }
}

/* One rank's part of the report: its totals, then up to REPORT_CHUNK bytes of its packed
 * opens, sent to world rank 0 as one message (every rank runs the same build). */
#define REPORT_CHUNK (1 << 20)
#define REPORT_TAG 32766      /* below 32767, the smallest MPI_TAG_UB MPI allows */
#define REPORT_MAGIC 0x696f74756e65ULL /* "iotune": a stray message is not taken for ours */
struct rank_totals {
    unsigned long long magic;
    double write_s, read_s;
    unsigned long long sums[5];      /* as in struct totals */
    unsigned long long kept, dropped; /* opens packed, and opens the report cannot show */
};

/* Send every rank's part to world rank 0, which merges them and writes the report. Every
 * rank calls it. Point to point rather than collectives: the other ranks send and go on
 * into MPI_Finalize without waiting for rank 0 (small messages are sent eagerly), which
 * matters where ranks share busy cores. MPI_Finalize requires the program's own messages
 * to be complete, so REPORT_TAG on MPI_COMM_WORLD meets none of them. */
static void report(void)
{
    struct totals t = {0};
    int me = world_rank();
    PMPI_Comm_size(MPI_COMM_WORLD, &t.ranks);

    struct rank_totals mine = {
        REPORT_MAGIC,
        (double)__atomic_load_n(&write_ns, __ATOMIC_RELAXED) * 1e-9,
        (double)__atomic_load_n(&read_ns, __ATOMIC_RELAXED) * 1e-9,
        {__atomic_load_n(&write_bytes, __ATOMIC_RELAXED),
         __atomic_load_n(&write_calls, __ATOMIC_RELAXED),
         __atomic_load_n(&read_bytes, __ATOMIC_RELAXED),
         __atomic_load_n(&read_calls, __ATOMIC_RELAXED),
         __atomic_load_n(&posix_bytes, __ATOMIC_RELAXED)},
        0, 0};
    struct buf b = {0};
    put(&b, &mine, sizeof mine);
    double now = PMPI_Wtime();
    pthread_mutex_lock(&opens_lock);
    mine.dropped = opens_dropped;
    for (int i = 0; i < nopens; i++) {
        size_t before = b.len;
        pack_open(&b, opens[i], now);
        if (b.failed || b.len - sizeof mine > REPORT_CHUNK) {
            b.len = before; /* this open and the rest do not fit */
            b.failed = 0;
            mine.dropped += (unsigned long long)(nopens - i);
            break;
        }
        mine.kept++;
    }
    pthread_mutex_unlock(&opens_lock);
    if (b.data == NULL || b.len < sizeof mine) {
        free(b.data);
        b = (struct buf){(char *)&mine, sizeof mine, sizeof mine, 0}; /* totals only */
        mine.dropped += mine.kept;
        mine.kept = 0;
    } else {
        memcpy(b.data, &mine, sizeof mine);
    }

    if (me != 0) {
        PMPI_Send(b.data, (int)b.len, MPI_BYTE, 0, REPORT_TAG, MPI_COMM_WORLD);
        if (b.data != (char *)&mine)
            free(b.data);
        return;
    }
    /* Rank 0: its own part, then each rank's; the opens are appended into one buffer. */
    static char spare[sizeof(struct rank_totals) + REPORT_CHUNK];
    char *part = malloc(sizeof spare);
    if (part == NULL)
        part = spare; /* a message must be received whatever the memory left */
    struct buf all = {0};
    unsigned long long dropped = 0, kept = 0;
    for (int r = 0; r < t.ranks; r++) {
        int count = 0;
        if (r == 0) {
            memcpy(part, b.data, b.len);
            count = (int)b.len;
        } else {
            MPI_Status st;
            PMPI_Recv(part, (int)sizeof spare, MPI_BYTE, r, REPORT_TAG, MPI_COMM_WORLD, &st);
            PMPI_Get_count(&st, MPI_BYTE, &count);
        }
        struct rank_totals theirs;
        if (count < (int)sizeof theirs)
            continue;
        memcpy(&theirs, part, sizeof theirs);
        if (theirs.magic != REPORT_MAGIC)
            continue;
        t.write_s = theirs.write_s > t.write_s ? theirs.write_s : t.write_s;
        t.read_s = theirs.read_s > t.read_s ? theirs.read_s : t.read_s;
        for (int k = 0; k < 5; k++)
            t.sums[k] += theirs.sums[k];
        t.writers[0] += theirs.sums[0] > 0;
        t.writers[1] += theirs.sums[4] > 0;
        dropped += theirs.dropped;
        size_t before = all.len;
        put(&all, part + sizeof theirs, (size_t)count - sizeof theirs);
        if (all.failed) {
            all.len = before;
            all.failed = 0;
            dropped += theirs.kept;
        } else {
            kept += theirs.kept;
        }
    }
    if (part != spare)
        free(part);
    if (b.data != (char *)&mine)
        free(b.data);
    int n = 0;
    struct merged *m = all.len > 0 ? merge_opens(all.data, all.len, &n) : NULL;
    t.opens_omitted = dropped + (m == NULL ? kept : 0);
    write_report(S.out, &t, m, n, all.data != NULL ? all.data + all.len : NULL);
    free(m);
    free(all.data);
}

int MPI_Finalize(void)
{
    ensure_settings(); /* settings_applied is reported even if nothing was opened */
    /* A program that links HDF5 statically calls its own H5Fcreate, which no preloaded
     * library can replace: say so rather than let the settings look applied. */
    if (S.any_hdf5 && __atomic_load_n(&h5_calls, __ATOMIC_RELAXED) == 0 && world_rank() == 0)
        warn("hdf5:* settings had no effect: no H5Fcreate/H5Fopen call was intercepted "
             "(the program does not use HDF5, or links it statically)");
    if (S.out != NULL && world_rank() >= 0)
        report();
    return PMPI_Finalize();
}
