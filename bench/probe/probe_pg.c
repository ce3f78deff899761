/*
 * probe_pg.c -- the five tests of PostgreSQL's pg_test_fsync, and the
 * latency distribution that it does not print.
 *
 * Faithful to pg_test_fsync (PostgreSQL 9.5 and later) in what is printed
 * (headings, labels, order, "%13.3f ops/sec  %6.0f usecs/op", "n/a" when
 * the platform lacks a method, "n/a*" when the filesystem refuses O_DIRECT)
 * and in what is done: every test reuses the one 16 MiB file written and
 * fsynced beforehand; op k of a test rewrites the same blocks (pwrite at
 * offset writes * 8kB), so nothing grows and a sync never has to allocate;
 * open_datasync and open_sync open with O_DIRECT; each test runs until
 * the alarm of --seconds fires and reports ops / elapsed.
 *
 * Differences, all small: a failing fdatasync() is reported (pg_test_fsync
 * ignores its result); a write refused with EINVAL under O_DIRECT prints
 * "n/a*" instead of aborting the whole run; the alarm is setitimer() so
 * that --seconds may be a fraction.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"
#include "ut_clock.h"

enum sync_op { SYNC_NONE, SYNC_FDATASYNC, SYNC_FSYNC };

/*
 * The inner loop of every pg_test_fsync test: until the alarm, do
 * writes_per_op pwrites of wsize bytes at offsets 0, wsize, ... and then
 * the sync.  With lat, each op is also timed on its own.  Returns 0, or
 * an errno value (a short write counts as EIO).
 */
static int timed_loop(struct probe_ctx *c, int fd, int writes_per_op, size_t wsize, enum sync_op s, double secs,
                      struct probe_lat *lat, uint64_t *ops_out, double *secs_out)
{
    uint64_t ops;
    int err = 0;
    double t0, t1, ts = 0;

    probe_timer_start(secs);
    t0 = ut_now();
    for (ops = 0; !atomic_load_explicit(&probe_alarm, memory_order_relaxed); ops++) {
        if (lat)
            ts = ut_now();
        for (int w = 0; w < writes_per_op; w++) {
            ssize_t n = pwrite(fd, c->buf, wsize, (off_t)w * (off_t)wsize);
            if (n != (ssize_t)wsize) {
                err = n < 0 ? errno : EIO;
                goto out;
            }
        }
        if ((s == SYNC_FDATASYNC && fdatasync(fd) != 0) || (s == SYNC_FSYNC && fsync(fd) != 0)) {
            err = errno;
            goto out;
        }
        if (lat)
            lat_add(lat, (ut_now() - ts) * 1e6);
    }
out:
    t1 = ut_now();
    probe_timer_stop();
    *ops_out = ops;
    *secs_out = t1 - t0;
    return err;
}

/* One row: open the file as the method wants, run the loop, print. */
static struct probe_row *method_row(struct probe_ctx *c, enum probe_section sec, const char *label, const char *op,
                                    int flags, int direct, int writes_per_op, size_t wsize, enum sync_op s,
                                    double secs, int want_latency, int *fs_warning)
{
    struct probe_row *r = probe_row_new(c, sec, label, op);
    struct probe_lat lat = {0};
    uint64_t ops;
    double el;
    int fd = direct ? probe_open_direct(c->path, O_RDWR | flags) : open(c->path, O_RDWR | flags, 0);

    if (fd < 0) {
        if (!direct)
            probe_die(c, "could not open output file");
        probe_row_na(c, r, ROW_NA_FS, "open with O_DIRECT: %s", strerror(errno));
        if (fs_warning)
            *fs_warning = 1;
        return r;
    }
    int err = timed_loop(c, fd, writes_per_op, wsize, s, secs, want_latency ? &lat : NULL, &ops, &el);
    close(fd);
    if (err == EINVAL && direct) {
        /* pg_test_fsync dies here ("write failed"); the block size of the
         * device is larger than this write, as on some XFS setups */
        probe_row_na(c, r, ROW_NA_FS, "%zu-byte write with O_DIRECT: %s", wsize, strerror(err));
        if (fs_warning)
            *fs_warning = 1;
    } else if (err) {
        probe_row_na(c, r, ROW_FAILED, "%s: %s", s == SYNC_NONE ? "write" : op, strerror(err));
    } else {
        probe_row_ok(c, r, ops, el, want_latency ? &lat : NULL);
    }
    lat_free(&lat);
    return r;
}

/* The row's mean usecs per op (over its rounds so far), or -1. */
static double usecs_per_op(const struct probe_row *r)
{
    return r->status == ROW_OK && r->ops ? r->usecs_per_op : -1;
}

/* pg_test_fsync's test_sync(). */
void probe_sync(struct probe_ctx *c, int writes_per_op)
{
    enum probe_section sec = writes_per_op == 1 ? SEC_SYNC1 : SEC_SYNC2;
    int fs_warning = 0;
    struct probe_row *r;

    if (writes_per_op == 1)
        fprintf(c->out, "\nCompare file sync methods using one %dkB write:\n", PROBE_BLCKSZ / 1024);
    else
        fprintf(c->out, "\nCompare file sync methods using two %dkB writes:\n", PROBE_BLCKSZ / 1024);
    fprintf(c->out, "(in wal_sync_method preference order, except fdatasync is Linux's default)\n");

    r = method_row(c, sec, "open_datasync", "O_DSYNC write", O_DSYNC, 1, writes_per_op, PROBE_BLCKSZ, SYNC_NONE,
                   c->secs, 0, &fs_warning);
    if (r->status == ROW_OK)
        c->odirect_ok = 1;
    r = method_row(c, sec, "fdatasync", "write+fdatasync", 0, 0, writes_per_op, PROBE_BLCKSZ, SYNC_FDATASYNC,
                   c->secs, 0, NULL);
    if (writes_per_op == 1)
        c->fdatasync_us = usecs_per_op(r);
    method_row(c, sec, "fsync", "write+fsync", 0, 0, writes_per_op, PROBE_BLCKSZ, SYNC_FSYNC, c->secs, 0, NULL);

    /* F_FULLFSYNC (macOS) or _commit (Windows); Linux has neither */
    r = probe_row_new(c, sec, "fsync_writethrough", "write+F_FULLFSYNC");
    probe_row_na(c, r, ROW_NA, "no fsync_writethrough (F_FULLFSYNC) on Linux");

    r = method_row(c, sec, "open_sync", "O_SYNC write", O_SYNC, 1, writes_per_op, PROBE_BLCKSZ, SYNC_NONE, c->secs,
                   0, &fs_warning);
    if (r->status == ROW_OK)
        c->odirect_ok = 1;

    if (fs_warning)
        fprintf(c->out, "* This file system and its mount options do not support direct\n"
                        "  I/O, e.g. ext4 in journaled mode.\n");
    fflush(c->out);
}

/* pg_test_fsync's test_open_syncs() and test_open_sync(). */
void probe_open_syncs(struct probe_ctx *c)
{
    static const struct {
        const char *label;
        int kb;
    } sizes[] = {
        {" 1 * 16kB open_sync write", 16}, {" 2 *  8kB open_sync writes", 8}, {" 4 *  4kB open_sync writes", 4},
        {" 8 *  2kB open_sync writes", 2}, {"16 *  1kB open_sync writes", 1},
    };
    fprintf(c->out, "\nCompare open_sync with different write sizes:\n");
    fprintf(c->out, "(This is designed to compare the cost of writing 16kB in different write\n"
                    "open_sync sizes.)\n");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        method_row(c, SEC_OPENSYNC, sizes[i].label, "16kB in O_SYNC writes", O_SYNC, 1, 16 / sizes[i].kb,
                   (size_t)sizes[i].kb * 1024, SYNC_NONE, c->secs, 0, NULL);
}

/*
 * One row of test_file_descriptor_sync(): until the alarm, open the file,
 * write 8kB, close, open it again and close.  The fsync is on the first
 * descriptor, after the write, or, with sync_on_reopen, on the second:
 * one process fsyncing another's write.
 */
static void fd_sync_row(struct probe_ctx *c, const char *label, const char *op, int sync_on_reopen)
{
    struct probe_row *r = probe_row_new(c, SEC_FDSYNC, label, op);
    uint64_t ops;
    int fd, err = 0;

    probe_timer_start(c->secs);
    double t0 = ut_now();
    for (ops = 0; !atomic_load_explicit(&probe_alarm, memory_order_relaxed); ops++) {
        if ((fd = open(c->path, O_RDWR, 0)) == -1)
            probe_die(c, "could not open output file");
        ssize_t n = write(fd, c->buf, PROBE_BLCKSZ);
        if (n != PROBE_BLCKSZ || (!sync_on_reopen && fsync(fd) != 0)) {
            err = n >= 0 && n != PROBE_BLCKSZ ? EIO : errno;
            close(fd);
            break;
        }
        close(fd);
        if ((fd = open(c->path, O_RDWR, 0)) == -1)
            probe_die(c, "could not open output file");
        if (sync_on_reopen && fsync(fd) != 0) {
            err = errno;
            close(fd);
            break;
        }
        close(fd);
    }
    double el = ut_now() - t0;
    probe_timer_stop();
    if (err)
        probe_row_na(c, r, ROW_FAILED, "write/fsync: %s", strerror(err));
    else
        probe_row_ok(c, r, ops, el, NULL);
}

/* pg_test_fsync's test_file_descriptor_sync(). */
void probe_fd_sync(struct probe_ctx *c)
{
    fprintf(c->out, "\nTest if fsync on non-write file descriptor is honored:\n");
    fprintf(c->out, "(If the times are similar, fsync() can sync data written on a different\n"
                    "descriptor.)\n");

    /* write, fsync and close; then open and close again, to be
     * consistent with the next test */
    fd_sync_row(c, "write, fsync, close", "open+write+fsync+close+open+close", 0);
    /* open, write, close, open again and fsync: processes fsyncing each
     * other's writes */
    fd_sync_row(c, "write, close, fsync", "open+write+close+open+fsync+close", 1);
}

/* pg_test_fsync's test_non_sync(). */
void probe_non_sync(struct probe_ctx *c)
{
    fprintf(c->out, "\nNon-sync'ed %dkB writes:\n", PROBE_BLCKSZ / 1024);
    struct probe_row *r =
        method_row(c, SEC_NOSYNC, "write", "write", 0, 0, 1, PROBE_BLCKSZ, SYNC_NONE, c->secs, 0, NULL);
    c->write_us = usecs_per_op(r);
}

/*
 * Beyond pg_test_fsync: the same one-8kB-write loops, each op timed on its
 * own, so that a mean hiding a few very slow syncs (a journal commit, a
 * device cache flush, writeback of someone else's data) can be seen.
 */
void probe_latency(struct probe_ctx *c)
{
    double secs = probe_beyond_secs(c);
    struct probe_row *r;

    fprintf(c->out, "\nLatency of one %dkB write per sync method:\n", PROBE_BLCKSZ / 1024);
    fprintf(c->out, "(mean as above, then median, 99th percentile and maximum usecs of single ops;\n"
                    "not in pg_test_fsync)\n");
    r = method_row(c, SEC_LATENCY, "open_datasync", "O_DSYNC write", O_DSYNC, 1, 1, PROBE_BLCKSZ, SYNC_NONE, secs,
                   1, NULL);
    if (r->status == ROW_OK)
        c->odirect_ok = 1;
    r = method_row(c, SEC_LATENCY, "fdatasync", "write+fdatasync", 0, 0, 1, PROBE_BLCKSZ, SYNC_FDATASYNC, secs, 1,
                   NULL);
    if (c->fdatasync_us < 0)
        c->fdatasync_us = usecs_per_op(r);
    method_row(c, SEC_LATENCY, "fsync", "write+fsync", 0, 0, 1, PROBE_BLCKSZ, SYNC_FSYNC, secs, 1, NULL);
    r = method_row(c, SEC_LATENCY, "open_sync", "O_SYNC write", O_SYNC, 1, 1, PROBE_BLCKSZ, SYNC_NONE, secs, 1,
                   NULL);
    if (r->status == ROW_OK)
        c->odirect_ok = 1;
    r = method_row(c, SEC_LATENCY, "write (no sync)", "write", 0, 0, 1, PROBE_BLCKSZ, SYNC_NONE, secs, 1, NULL);
    if (c->write_us < 0)
        c->write_us = usecs_per_op(r);
}

/* For the verdict when the sections above did not run: mean usecs of one
 * 8kB pwrite (+ fdatasync when datasync), or -1. */
double probe_measure_us(struct probe_ctx *c, int datasync, double secs)
{
    uint64_t ops;
    double el;
    int fd = open(c->path, O_RDWR, 0);
    if (fd < 0)
        return -1;
    int err = timed_loop(c, fd, 1, PROBE_BLCKSZ, datasync ? SYNC_FDATASYNC : SYNC_NONE, secs, NULL, &ops, &el);
    close(fd);
    return err || ops == 0 ? -1 : el / (double)ops * 1e6;
}
