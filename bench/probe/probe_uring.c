/*
 * probe_uring.c -- io_uring linked write->fsync and write->fdatasync
 * chains, one or eight in flight (the shape of the `uring` sync policy).
 *
 * A chain is an 8kB IORING_OP_WRITE linked (IOSQE_IO_LINK) to an
 * IORING_OP_FSYNC, with IORING_FSYNC_DATASYNC for the fdatasync rows.
 * Chains write successive 8kB blocks of the prepared 16 MiB file (wrapping
 * round), so, as in pg_test_fsync, nothing is allocated and only the data
 * and the file's timestamps need to reach the device.  Completions arrive in
 * any order; a chain is done when its sync completes, and a new one takes
 * its place until the time is up.  A short write would cancel the linked
 * sync (-ECANCELED): the probe reports it instead of resubmitting.  The
 * rows with several chains in flight are concurrent: ops/sec is the
 * pipeline's throughput, and the time per op is per chain (chains /
 * throughput, "usecs/op/chain"), what one chain takes on average.  If
 * io_uring_queue_init() fails (ENOSYS: kernel without io_uring; EPERM:
 * disabled by sysctl or seccomp) the rows say n/a and why.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"
#include "ut_clock.h"

#define MAX_CHAINS 8

struct chain {
    double t0;
    int active;
};

/* Queues one chain: an 8 kB write at off linked to an fsync/fdatasync.
 * The user data says which slot and which half (write 2*slot, sync
 * 2*slot+1). */
static void queue_chain(struct io_uring *ring, int fd, const void *buf, uint64_t off, int datasync,
                        unsigned slot, struct chain *ch)
{
    struct io_uring_sqe *w = io_uring_get_sqe(ring), *s = io_uring_get_sqe(ring);
    io_uring_prep_write(w, fd, buf, PROBE_BLCKSZ, off);
    w->flags |= IOSQE_IO_LINK;
    io_uring_sqe_set_data64(w, slot * 2);
    io_uring_prep_fsync(s, fd, datasync ? IORING_FSYNC_DATASYNC : 0);
    io_uring_sqe_set_data64(s, slot * 2 + 1);
    ch->t0 = ut_now();
    ch->active = 1;
}

static void uring_row(struct probe_ctx *c, int datasync, unsigned depth)
{
    char label[40];
    struct io_uring ring;
    struct chain chains[MAX_CHAINS];
    struct probe_lat lat = {0};
    uint64_t seq = 0, ops = 0;
    unsigned inflight = 0;
    int err = 0, short_write = 0;
    const uint64_t nblocks = PROBE_FILE_SIZE / PROBE_BLCKSZ;

    snprintf(label, sizeof label, "write->%s, %u in flight", datasync ? "fdatasync" : "fsync", depth);
    struct probe_row *r = probe_row_new(c, SEC_URING, label, datasync ? "linked write+fdatasync" : "linked write+fsync");
    probe_row_concurrent(r, depth, "chain");

    int rc = io_uring_queue_init(2 * MAX_CHAINS, &ring, 0);
    if (rc < 0) {
        probe_row_na(c, r, ROW_NA, "io_uring_queue_init: %s", strerror(-rc));
        return;
    }
    int fd = open(c->path, O_RDWR, 0);
    if (fd < 0)
        probe_die(c, "could not open output file");

    memset(chains, 0, sizeof chains);
    probe_timer_start(probe_beyond_secs(c));
    double t0 = ut_now();
    for (unsigned slot = 0; slot < depth; slot++) {
        queue_chain(&ring, fd, c->buf, (seq++ % nblocks) * PROBE_BLCKSZ, datasync, slot, &chains[slot]);
        inflight++;
    }
    rc = io_uring_submit(&ring);
    if (rc < 0) {
        err = -rc;
        inflight = 0;
    }
    while (inflight > 0) {
        struct io_uring_cqe *cqe;
        rc = io_uring_wait_cqe(&ring, &cqe);
        if (rc == -EINTR)
            continue;
        if (rc < 0) {
            err = -rc;
            break;
        }
        unsigned slot = (unsigned)(io_uring_cqe_get_data64(cqe) / 2);
        int is_sync = (int)(io_uring_cqe_get_data64(cqe) & 1);
        int res = cqe->res;
        io_uring_cqe_seen(&ring, cqe);
        if (!is_sync) {
            if (res < 0)
                err = err ? err : -res;
            else if (res != PROBE_BLCKSZ)
                short_write = 1; /* the linked sync comes back -ECANCELED */
            continue;
        }
        inflight--;
        chains[slot].active = 0;
        if (res < 0) {
            if (res != -ECANCELED || !(err || short_write))
                err = err ? err : -res;
            continue;
        }
        ops++;
        lat_add(&lat, (ut_now() - chains[slot].t0) * 1e6);
        if (atomic_load_explicit(&probe_alarm, memory_order_relaxed) || err || short_write)
            continue;
        queue_chain(&ring, fd, c->buf, (seq++ % nblocks) * PROBE_BLCKSZ, datasync, slot, &chains[slot]);
        inflight++;
        rc = io_uring_submit(&ring);
        if (rc < 0) {
            err = -rc;
            break; /* nothing more will complete for certain */
        }
    }
    double el = ut_now() - t0;
    probe_timer_stop();
    io_uring_queue_exit(&ring);
    close(fd);
    if (err)
        probe_row_na(c, r, ROW_FAILED, "io_uring: %s", strerror(err));
    else if (short_write)
        probe_row_na(c, r, ROW_FAILED, "io_uring: short write cancelled the linked sync");
    else
        probe_row_ok(c, r, ops, el, &lat);
    lat_free(&lat);
}

void probe_uring(struct probe_ctx *c)
{
    fprintf(c->out, "\nio_uring linked write->sync chains, one %dkB write each:\n", PROBE_BLCKSZ / 1024);
    fprintf(c->out, "(one op = one chain completed; ops/sec counts the chains of all in flight, and\n"
                    "with %d in flight usecs/op/chain is %d / (ops/sec), the mean time of one chain;\n"
                    "p50, p99 and max: usecs per chain from submission to sync completion; not in\n"
                    "pg_test_fsync)\n",
            MAX_CHAINS, MAX_CHAINS);
    uring_row(c, 0, 1);
    uring_row(c, 0, MAX_CHAINS);
    uring_row(c, 1, 1);
    uring_row(c, 1, MAX_CHAINS);
}
