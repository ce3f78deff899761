/*
 * probe_exp.c -- experiments from public mailing-list threads (ZODB syncs per
 * transaction, PostgreSQL's wal_recycle, XFS's small appends), as probe sections.
 *
 *  zodb      The ZODB FileStorage thread: a transaction appends a record to
 *            the data file and makes 0, 1 or 2 fsyncs (the data file, then
 *            an index record rewritten in place in a second file); txn/s.
 *  segments  The PostgreSQL wal_recycle thread: 8kB appends, each followed
 *            by fdatasync, into a sparse, a fallocated, a zero-filled and a
 *            recycled (previously written, renamed) 16 MiB segment, and what
 *            preparing each kind of segment costs.
 *  appends   The XFS delaylog thread: many small messages, each appended to
 *            the file of its key with open(O_APPEND)/write/close, from four
 *            threads partitioned by key & 3, never synced; messages/s over
 *            the four, and usecs per message per thread (4 / throughput).
 *  overwrite ScyllaDB's commitlog on XFS (O_DSYNC segments, zero-filled
 *            first: https://github.com/scylladb/scylladb/issues/3929): an
 *            O_DSYNC overwrite of a
 *            preallocated, already written file changes no metadata, so
 *            the filesystem can skip its journal (one FUA write where the
 *            device takes them); against fdatasync after appends, which
 *            must commit the file's new size each time.
 *
 * Each runs in the probe's private directory and removes what it made.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"
#include "ut_clock.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ---- ZODB: syncs per transaction -------------------------------------------- */

#define ZODB_RECORD 256               /* a small transaction: header + one object */
#define ZODB_INDEX 16                 /* "last committed transaction at offset X" */
#define ZODB_ROTATE (64 * 1024 * 1024) /* start a new data file past this size */

static void zodb_row(struct probe_ctx *c, int syncs)
{
    static const char *const labels[] = {"0 fsyncs per transaction", "1 fsync per transaction",
                                         "2 fsyncs per transaction"};
    char data[4200], index[4200];
    struct probe_lat lat = {0};
    struct probe_row *r = probe_row_new(c, SEC_ZODB, labels[syncs], "transaction");
    uint64_t ops, size = 0;
    int err = 0;
    const char *what = "";

    probe_join(data, sizeof data, c->work, "zodb.fs");
    probe_join(index, sizeof index, c->work, "zodb.fs.index");
    int dfd = open(data, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
    int ifd = open(index, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (dfd < 0 || ifd < 0)
        probe_die(c, "could not create the data files");
    /* both files exist durably before the clock starts */
    if (pwrite(ifd, c->buf, ZODB_INDEX, 0) != ZODB_INDEX || fsync(ifd) || fsync(dfd) || fsync_dir(c->work))
        probe_die(c, "could not prepare the data files");

    probe_timer_start(probe_beyond_secs(c));
    double t0 = ut_now();
    for (ops = 0; !atomic_load_explicit(&probe_alarm, memory_order_relaxed); ops++) {
        double ts = ut_now();
        if (size >= ZODB_ROTATE) {
            /* keep the file bounded: a fresh one, as after a pack */
            close(dfd);
            dfd = open(data, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
            if (dfd < 0) {
                err = errno, what = "open data file";
                break;
            }
            size = 0;
        }
        if (write_all(dfd, c->buf + (ops % 4096) * 64, ZODB_RECORD) != 0) {
            err = errno, what = "write data record";
            break;
        }
        size += ZODB_RECORD;
        if (syncs >= 1 && fsync(dfd) != 0) {
            err = errno, what = "fsync data file";
            break;
        }
        if (syncs >= 2) {
            if (pwrite(ifd, &size, sizeof size, 0) != (ssize_t)sizeof size) {
                err = errno ? errno : EIO, what = "write index record";
                break;
            }
            if (fsync(ifd) != 0) {
                err = errno, what = "fsync index file";
                break;
            }
        }
        lat_add(&lat, (ut_now() - ts) * 1e6);
    }
    double el = ut_now() - t0;
    probe_timer_stop();
    if (dfd >= 0)
        close(dfd);
    close(ifd);
    unlink(data);
    unlink(index);
    if (err)
        probe_row_na(c, r, ROW_FAILED, "%s: %s", what, strerror(err));
    else
        probe_row_ok(c, r, ops, el, &lat);
    lat_free(&lat);
}

void probe_zodb(struct probe_ctx *c)
{
    fprintf(c->out, "\nSyncs per transaction (the ZODB FileStorage experiment):\n");
    fprintf(c->out, "(a transaction appends a %d-byte record to the data file, then fsyncs it\n"
                    "0, 1 or 2 times: the data file, then a %d-byte index record rewritten in\n"
                    "place; one op = one transaction)\n",
            ZODB_RECORD, ZODB_INDEX);
    for (int s = 0; s <= 2; s++)
        zodb_row(c, s);
}

/* ---- WAL segment preparation ----------------------------------------------- */

#define SEG_SIZE (16 * 1024 * 1024) /* PostgreSQL's default wal_segment_size */
#define SEG_POOL 4

enum seg_kind { SEG_SPARSE, SEG_FALLOC, SEG_ZERO, SEG_RECYCLED };

struct seg_run {
    struct probe_ctx *c;
    enum seg_kind kind;
    unsigned next_id;
    char pool[SEG_POOL][4200]; /* retired segments, oldest first */
    int npool;
    const char *zeros;
    struct probe_lat prep;
    double prep_secs;
    int err;
    char what[64];
};

static int seg_fail(struct seg_run *s, const char *what)
{
    s->err = errno ? errno : EIO;
    snprintf(s->what, sizeof s->what, "%s", what);
    return -1;
}

/*
 * Make a new segment durable, as PostgreSQL's XLogFileInit does: create it
 * (or, recycled, rename a retired one to the new name), fill or reserve it,
 * fsync the file and the directory.  Returns the open fd or -1.
 */
static int seg_prepare(struct seg_run *s, char *path, size_t n)
{
    struct probe_ctx *c = s->c;
    int fd = -1;
    char name[32];

    snprintf(name, sizeof name, "seg.%06u", s->next_id++);
    probe_join(path, n, c->work, name);
    errno = 0;
    double t0 = ut_now();
    if (s->kind == SEG_RECYCLED) {
        if (s->npool == 0)
            return seg_fail(s, "no retired segment to recycle");
        if (rename(s->pool[0], path) != 0)
            return seg_fail(s, "rename");
        memmove(s->pool[0], s->pool[1], sizeof s->pool[0] * (size_t)(SEG_POOL - 1));
        s->npool--;
        fd = open(path, O_RDWR, 0);
    } else {
        fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0)
        return seg_fail(s, "open segment");
    switch (s->kind) {
    case SEG_SPARSE:
        if (ftruncate(fd, SEG_SIZE) != 0)
            goto fail_trunc;
        break;
    case SEG_FALLOC:
        if (fallocate(fd, 0, 0, SEG_SIZE) != 0) {
            seg_fail(s, "fallocate");
            close(fd);
            unlink(path);
            return -1;
        }
        break;
    case SEG_ZERO:
        for (off_t off = 0; off < SEG_SIZE; off += 1024 * 1024)
            if (write_all(fd, s->zeros, 1024 * 1024) != 0) {
                seg_fail(s, "write zeros");
                close(fd);
                return -1;
            }
        break;
    case SEG_RECYCLED:
        break;
    }
    if (fsync(fd) != 0 || fsync_dir(c->work) != 0) {
        seg_fail(s, "fsync");
        close(fd);
        return -1;
    }
    double us = (ut_now() - t0) * 1e6;
    lat_add(&s->prep, us);
    s->prep_secs += us / 1e6;
    return fd;
fail_trunc:
    seg_fail(s, "ftruncate");
    close(fd);
    return -1;
}

/* A segment the log has moved past: deleted, or kept for recycling. */
static void seg_retire(struct seg_run *s, int fd, const char *path)
{
    close(fd);
    if (s->kind == SEG_RECYCLED && s->npool < SEG_POOL)
        snprintf(s->pool[s->npool++], sizeof s->pool[0], "%s", path);
    else
        unlink(path);
}

static void seg_kind_run(struct probe_ctx *c, enum seg_kind kind, const char *zeros)
{
    static const char *const names[] = {"sparse", "fallocated", "zero-filled", "recycled"};
    struct seg_run s;
    struct probe_lat lat = {0};
    char path[4200], label[48];
    uint64_t ops = 0;
    double secs = probe_beyond_secs(c), append_secs = 0;
    off_t off = 0;

    memset(&s, 0, sizeof s);
    s.c = c;
    s.kind = kind;
    s.zeros = zeros;
    probe_progress(c, "segments: %s", names[kind]);

    if (kind == SEG_RECYCLED) {
        /* two segments from an earlier life: fully written, synced, and
         * evicted from the page cache, as an old segment would be */
        for (int i = 0; i < 2; i++) {
            snprintf(label, sizeof label, "old.%d", i);
            probe_join(s.pool[i], sizeof s.pool[i], c->work, label);
            int fd = open(s.pool[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
            if (fd < 0 || write_all(fd, c->buf, SEG_SIZE) != 0 || fsync(fd) != 0)
                probe_die(c, "could not write a segment to recycle");
            posix_fadvise(fd, 0, SEG_SIZE, POSIX_FADV_DONTNEED);
            close(fd);
            s.npool++;
        }
        fsync_dir(c->work);
    }

    int fd = seg_prepare(&s, path, sizeof path);
    while (fd >= 0 && append_secs < secs && !atomic_load(&probe_interrupted)) {
        double ts = ut_now();
        ssize_t n = pwrite(fd, c->buf + off, PROBE_BLCKSZ, off);
        if (n != PROBE_BLCKSZ) {
            if (n >= 0)
                errno = EIO;
            seg_fail(&s, "write");
            break;
        }
        if (fdatasync(fd) != 0) {
            seg_fail(&s, "fdatasync");
            break;
        }
        double us = (ut_now() - ts) * 1e6;
        lat_add(&lat, us);
        append_secs += us / 1e6;
        ops++;
        off += PROBE_BLCKSZ;
        if (off == SEG_SIZE) {
            seg_retire(&s, fd, path);
            fd = seg_prepare(&s, path, sizeof path);
            off = 0;
        }
    }
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    for (int i = 0; i < s.npool; i++)
        unlink(s.pool[i]);

    snprintf(label, sizeof label, "%s: prepare", names[kind]);
    struct probe_row *r = probe_row_new(c, SEC_SEGMENTS, label, "segment prepared");
    int unsupported = s.err == EOPNOTSUPP || s.err == ENOSYS;
    if (s.prep.n == 0 && s.err)
        probe_row_na(c, r, unsupported ? ROW_NA_FS : ROW_FAILED, "%s: %s", s.what, strerror(s.err));
    else
        probe_row_ok(c, r, s.prep.n, s.prep_secs, &s.prep);

    snprintf(label, sizeof label, "%s: append+fdatasync", names[kind]);
    r = probe_row_new(c, SEC_SEGMENTS, label, "8kB append+fdatasync");
    if (s.err)
        probe_row_na(c, r, unsupported ? ROW_NA_FS : ROW_FAILED, "%s: %s", s.what, strerror(s.err));
    else
        probe_row_ok(c, r, ops, append_secs, &lat);
    lat_free(&lat);
    lat_free(&s.prep);
}

void probe_segments(struct probe_ctx *c)
{
    char *zeros = calloc(1, 1024 * 1024);
    if (!zeros)
        probe_die(c, "out of memory");
    fprintf(c->out, "\nWAL segment preparation (the wal_recycle experiment), %dMB segments:\n",
            SEG_SIZE / (1024 * 1024));
    fprintf(c->out, "(prepare: create and ftruncate (sparse), fallocate, write zeros, or rename a\n"
                    "retired segment (recycled), then fsync file and directory; one op = one\n"
                    "segment.  append: %dkB write + fdatasync at the end of the log, preparing\n"
                    "the next segment not included)\n",
            PROBE_BLCKSZ / 1024);
    for (int k = SEG_SPARSE; k <= SEG_RECYCLED; k++)
        seg_kind_run(c, (enum seg_kind)k, zeros);
    free(zeros);
}

/* ---- many small appends ------------------------------------------------------ */

#define APPEND_THREADS 4
#define MSG_MIN 10
#define MSG_MAX 1000

struct append_worker {
    pthread_t th;
    struct probe_ctx *c;
    const char *dir;
    unsigned tid;
    int phase; /* 1: each key once, creating its file; 2: random keys until the alarm */
    uint64_t rng;
    uint64_t msgs;
    int err;
};

/* Appends one message to key's file and counts it in w->msgs; or sets
 * w->err and returns -1. */
static int append_one(struct append_worker *w, unsigned key)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/k%07u", w->dir, key);
    size_t len = MSG_MIN + (size_t)(rng_next(&w->rng) % (MSG_MAX - MSG_MIN + 1));
    size_t at = (size_t)(rng_next(&w->rng) % (PROBE_FILE_SIZE - MSG_MAX));
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) {
        w->err = errno;
        return -1;
    }
    ssize_t n = write(fd, w->c->buf + at, len);
    int e = errno;
    close(fd);
    if (n != (ssize_t)len) {
        w->err = n < 0 ? e : EIO;
        return -1;
    }
    w->msgs++;
    return 0;
}

static void *append_main(void *arg)
{
    struct append_worker *w = arg;
    unsigned files = w->c->files;
    if (w->phase == 1) {
        for (unsigned key = w->tid; key < files && !atomic_load(&probe_interrupted); key += APPEND_THREADS)
            if (append_one(w, key) != 0)
                break;
        return NULL;
    }
    unsigned nkeys = files > w->tid ? (files - w->tid + APPEND_THREADS - 1) / APPEND_THREADS : 0;
    if (nkeys == 0)
        return NULL;
    while (!atomic_load_explicit(&probe_alarm, memory_order_relaxed)) {
        unsigned key = w->tid + APPEND_THREADS * (unsigned)(rng_next(&w->rng) % nkeys);
        if (append_one(w, key) != 0)
            break;
    }
    return NULL;
}

static void append_phase(struct probe_ctx *c, const char *dir, int phase, const char *label)
{
    struct append_worker w[APPEND_THREADS];
    struct probe_row *r = probe_row_new(c, SEC_APPENDS, label, "message");
    probe_row_concurrent(r, APPEND_THREADS, "thread");
    uint64_t msgs = 0;
    int err = 0;

    memset(w, 0, sizeof w);
    if (phase == 2)
        probe_timer_start(probe_beyond_secs(c));
    double t0 = ut_now();
    for (unsigned i = 0; i < APPEND_THREADS; i++) {
        w[i].c = c;
        w[i].dir = dir;
        w[i].tid = i;
        w[i].phase = phase;
        w[i].rng = 0x9e3779b97f4a7c15ull * (i + 1) + (uint64_t)phase;
        if (pthread_create(&w[i].th, NULL, append_main, &w[i]) != 0)
            probe_die(c, "could not start a thread");
    }
    for (unsigned i = 0; i < APPEND_THREADS; i++) {
        pthread_join(w[i].th, NULL);
        msgs += w[i].msgs;
        if (w[i].err && !err)
            err = w[i].err;
    }
    double el = ut_now() - t0;
    probe_timer_stop();
    if (err)
        probe_row_na(c, r, ROW_FAILED, "open/write: %s", strerror(err));
    else
        probe_row_ok(c, r, msgs, el, NULL);
}

void probe_appends(struct probe_ctx *c)
{
    char dir[4200], path[4300];

    fprintf(c->out, "\nMany small appends (the XFS delaylog experiment), %u files in one directory:\n", c->files);
    fprintf(c->out, "(%d threads, thread t owning the keys with key & 3 == t; per message of\n"
                    "%d to %d bytes: open(O_APPEND), write, close; never synced; one op = one\n"
                    "message; ops/sec counts the messages of all %d threads, and usecs/op/thread\n"
                    "is %d / (ops/sec), the mean time of one message in one thread)\n",
            APPEND_THREADS, MSG_MIN, MSG_MAX, APPEND_THREADS, APPEND_THREADS);
    probe_join(dir, sizeof dir, c->work, "files");
    if (mkdir(dir, 0700) != 0)
        probe_die(c, "could not create the files directory");
    probe_progress(c, "appends: creating %u files", c->files);
    append_phase(c, dir, 1, "create file + first append");
    append_phase(c, dir, 2, "append to existing file");
    probe_progress(c, "appends: removing %u files", c->files);
    for (unsigned k = 0; k < c->files; k++) {
        snprintf(path, sizeof path, "%s/k%07u", dir, k);
        unlink(path);
    }
    rmdir(dir);
}

/* ---- durable writes: appends against overwrites of a written file ------------ */

#define OW_FILE (16 * 1024 * 1024)

/* One row: 8kB writes, each made durable, appended to a file that grows
 * (from empty) or overwriting a file written and synced in full first
 * (so every block is allocated and written: no metadata changes); made
 * durable by fdatasync after each write, or by O_DSYNC on the descriptor.
 * The time is the writes' and syncs' only: wrapping around (a new file,
 * or back to offset 0) is not counted. */
static void ow_row(struct probe_ctx *c, const char *label, int append, int dsync)
{
    char path[4200];
    struct probe_lat lat = {0};
    struct probe_row *r = probe_row_new(c, SEC_OVERWRITE, label, dsync ? "8kB O_DSYNC write" : "8kB write+fdatasync");
    uint64_t ops = 0;
    double secs = 0, limit = probe_beyond_secs(c);
    int err = 0;
    const char *what = "";

    probe_join(path, sizeof path, c->work, "overwrite.dat");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (!append && write_all(fd, c->buf, OW_FILE) != 0) || fsync(fd) != 0 || fsync_dir(c->work) != 0)
        probe_die(c, "could not prepare the file for the overwrite experiment");
    close(fd);
    fd = open(path, O_WRONLY | (dsync ? O_DSYNC : 0));
    if (fd < 0)
        probe_die(c, "could not open the file for the overwrite experiment");
    off_t off = 0;
    while (secs < limit && !atomic_load(&probe_interrupted)) {
        double ts = ut_now();
        if (pwrite(fd, c->buf + off, PROBE_BLCKSZ, off) != PROBE_BLCKSZ) {
            err = errno ? errno : EIO, what = "write";
            break;
        }
        if (!dsync && fdatasync(fd) != 0) {
            err = errno, what = "fdatasync";
            break;
        }
        double us = (ut_now() - ts) * 1e6;
        lat_add(&lat, us);
        secs += us / 1e6;
        ops++;
        off += PROBE_BLCKSZ;
        if (off == OW_FILE) {
            off = 0;
            if (append && (ftruncate(fd, 0) != 0 || fsync(fd) != 0)) {
                err = errno, what = "ftruncate";
                break;
            }
        }
    }
    close(fd);
    unlink(path);
    if (err)
        probe_row_na(c, r, ROW_FAILED, "%s: %s", what, strerror(err));
    else
        probe_row_ok(c, r, ops, secs, &lat);
    lat_free(&lat);
}

void probe_overwrite(struct probe_ctx *c)
{
    fprintf(c->out, "\nDurable 8kB writes: appends against overwrites of a written file:\n");
    fprintf(c->out, "(append: at the end of a file that grows, so each sync commits its new size;\n"
                    "overwrite: in place in a %dMB file written and synced first, so no metadata\n"
                    "changes -- ScyllaDB's O_DSYNC-overwrite observation; one op = one durable write)\n",
            OW_FILE / (1024 * 1024));
    ow_row(c, "append, fdatasync", 1, 0);
    ow_row(c, "append, O_DSYNC", 1, 1);
    ow_row(c, "overwrite, fdatasync", 0, 0);
    ow_row(c, "overwrite, O_DSYNC", 0, 1);
}
