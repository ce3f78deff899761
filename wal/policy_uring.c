/*
 * policy_uring.c -- the uring sync policy: io_uring linked write->sync
 * chains, several in flight, acknowledged strictly in log order (contract
 * next to wal_policy_uring in wal.h; the rings are storage/vfs/vfs.h's
 * "asynchronous chains").
 *
 * A committer whose commit LSN is not durable either finds a leader and
 * waits on its own wake word (queued in LSN order; how it waits is the
 * wait option: waitq.c), or becomes
 * the leader.  The leader, holding io_mu for its whole tenure:
 *   - takes the bytes buffered so far as a batch, copies them into a chain
 *     buffer of its own (the log buffer may be reused as soon as
 *     written_lsn passes them) and submits [write -> fsync|fdatasync]
 *     ([write] alone under dsync/direct, whose descriptor is O_DSYNC, and
 *     under rwf-dsync or uring_sync=rwf-dsync, whose write carries
 *     RWF_DSYNC in the SQE's rw_flags);
 *   - while that chain is in flight, takes the next batch once it carries
 *     as many commits as the last chain did (an arriving committer wakes
 *     the leader out of its wait in the ring; a completion does too), up to
 *     uring_depth chains at once: flush pipelining without splitting the
 *     batches where the device runs the syncs one after another;
 *   - reaps completions in whatever order they come, and advances
 *     durable_lsn over the contiguous prefix of finished chains only, waking
 *     exactly the waiters it covered;
 *   - stops taking batches once its own commit is durable and it has led
 *     2 * uring_depth batches (a bounded tenure), drains the chains still in
 *     flight, and hands over to the first waiter it did not cover.
 *
 * Invariants (CL_INVARIANT checks U1 and U3):
 *   U1  chains sit in a FIFO in LSN order; a chain's bytes end where the
 *       next one's start.  durable_lsn moves to a chain's end only when it
 *       and every chain before it finished with every op succeeding, so a
 *       commit is never acknowledged before the sync covering it completed
 *       (and every earlier byte is durable too: each chain's sync comes after
 *       its own write, and the earlier chains' syncs came before).
 *   U2  a short write, or a link cancelled after it, acknowledges nothing:
 *       the remainder is resubmitted with a fresh sync after it, in the
 *       same FIFO place (under O_DIRECT from the start of the block the
 *       short write ended in, so the write stays aligned).  A ring that is
 *       momentarily full is waited for, not taken for a failure.  Any other error breaks the log (never retried);
 *       the leader drains what is in flight and every waiter fails.
 *   U3  chains are in flight only while the leader holds io_mu, so every
 *       other io_mu user (wal_flush, make_room, the writer's segment switch)
 *       sees the writer's usual state: written bytes are either durable or
 *       covered by a later sync it makes itself.
 *   U4  a batch never crosses a SWITCH record: the leader drains every
 *       chain, then lets wal_write_locked/wal_sync_locked cross (creating
 *       the next segment durably, syncing the old one before writing the
 *       new one), so the writer's segment invariants hold unchanged.
 *   U5  O_DIRECT rewrites the partial last block; a chain that starts in
 *       the block the previous chain ended in waits for that chain to
 *       finish, so two writes of one block are never in flight together.
 *
 * Asynchronous commits (wal.h): the leader takes them into its chains as
 * it takes every commit appended, calls their callbacks when it would wait
 * in the ring for a completion (the device is busy then) and after its
 * tenure, and leads again for one its tenure left behind (L4 in waitq.c).
 *
 * Stats: syncs counts completed sync ops (every O_DSYNC or RWF_DSYNC write
 * under dsync/direct/rwf-dsync); sync_ns the time during which at least one chain was in
 * flight; max_commits_per_sync the transactions one durable advance
 * covered.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "invariant.h"
#include "wal_internal.h"

#define URING_MAX_DEPTH   CL_MAX_URING_DEPTH
#define URING_MAX_RETRIES 64    /* short writes in a row on one chain before giving up */
#define URING_BUSY_MS     5000  /* how long a submission may find the ring busy */

/* take_batch results besides 0 (nothing to take) and 1 (submitted) */
#define TB_CROSS 2              /* the next bytes cross into a new segment */
#define TB_WAIT  3              /* wait for a completion: the batch is not full yet, or (O_DIRECT) the
                                 * block's previous writer is in flight */

struct uchain {
    int busy;                   /* submitted, not reaped */
    int done;                   /* finished, every op succeeded; waits for its FIFO turn */
    int retries;
    uint64_t start, end;        /* LSNs of its first byte and just past its last */
    uint64_t txns;              /* complete transactions below end */
    uint64_t submitted_ns;      /* when it was (last) submitted */
    uint8_t *buf;               /* VFS_DIRECT_ALIGN aligned */
    size_t cap, len, written;   /* buffer size; bytes to write; bytes written so far */
    uint64_t off;               /* file offset of buf[0] */
    struct vfs_file *f;
    struct vfs_io ios[2];
    int nios;
};

struct uring_state {
    /* io_mu: the leader's */
    struct vfs_ring *ring;
    unsigned depth;
    struct uchain *chains;      /* depth slots, a circular FIFO in LSN order */
    unsigned fifo_head, fifo_len, inflight;
    int tail_slot;              /* O_DIRECT: the chain that wrote the partial last block, or -1 */
    uint64_t last_txns;         /* complete transactions the last chain submitted carried */
    uint64_t busy_since;

    /* leadership and waiters (ldr.mu also guards leader_sleeping) */
    struct wal_leader ldr;
    int leader_sleeping;        /* waits in the ring and could take another batch */
};

/* ---- waiters (us->ldr.mu) ----------------------------------------------------- */

/* Wakes the waiters durable_lsn covers (all of them once broken); with
 * next_leader, also the first one not covered, to lead next. */
static void wake_covered(struct wal *w, struct uring_state *us, int next_leader)
{
    uint64_t durable = wal_durable_lsn(w);
    int broken = wal_broken(w) != 0;
    pthread_mutex_lock(&us->ldr.mu);
    wal_waitq_wake(&us->ldr.q, durable, broken, next_leader);
    pthread_mutex_unlock(&us->ldr.mu);
}

/* ---- chains (io_mu) ------------------------------------------------------- */

static int submit_chain(struct wal *w, struct uring_state *us, unsigned slot)
{
    struct uchain *c = &us->chains[slot];
    int k = 0, rc;
    /* O_DIRECT writes whole aligned blocks: after a short write the rest
     * starts again at the block the short write ended in (its bytes are
     * written again, unchanged). */
    if (w->open_flags & VFS_O_DIRECT)
        c->written &= ~(size_t)(VFS_DIRECT_ALIGN - 1);
    if (c->written < c->len) {
        c->ios[k++] = (struct vfs_io){ .op = VFS_IO_WRITE, .f = c->f, .buf = c->buf + c->written,
                                       .len = c->len - c->written, .off = c->off + c->written };
    }
    if (!w->write_is_sync) {
        c->ios[k++] = (struct vfs_io){ .op = w->method == CL_METHOD_FSYNC ? VFS_IO_FSYNC : VFS_IO_FDATASYNC,
                                       .f = c->f };
    }
    c->nios = k;
    /* -EBUSY/-EAGAIN: the ring is momentarily full (requests the kernel
     * has not taken yet); they drain on their own, so wait a little and
     * try again -- for up to URING_BUSY_MS, then give up. */
    for (unsigned waited = 0;; waited++) {
        rc = vfs_ring_submit(us->ring, c->ios, k, slot);
        if ((rc != -EBUSY && rc != -EAGAIN) || waited >= URING_BUSY_MS * 10)
            break;
        struct timespec ts = {0, 100000}; /* 100 us */
        nanosleep(&ts, NULL);
    }
    if (rc)
        return wal_set_broken(w, rc);
    c->busy = 1;
    c->submitted_ns = cl_now_ns();
    if (us->inflight++ == 0)
        us->busy_since = cl_now_ns();
    return 0;
}

/* Publishes the contiguous prefix of finished chains (U1). */
static void advance(struct wal *w, struct uring_state *us)
{
    struct uchain *last = NULL;
    while (us->fifo_len && us->chains[us->fifo_head].done) {
        struct uchain *c = &us->chains[us->fifo_head];
        CL_INVARIANT("U1", c->written == c->len && (!last || c->start == last->end));
        last = c;
        last->done = 0;
        us->fifo_head = (us->fifo_head + 1) % us->depth;
        us->fifo_len--;
    }
    if (!last)
        return;
    /* the chain's linked write and sync, one I/O, for the commit-time split */
    w->io_write_ns = 0;
    w->io_sync_ns = cl_now_ns() - last->submitted_ns;
    wal_mark_durable_locked(w, last->end, last->txns);
    wake_covered(w, us, 0);
}

/* Reaps one finished chain: 1 reaped, 0 nothing (or woken), or an error
 * (the log is broken then). */
static int reap_one(struct wal *w, struct uring_state *us, int wait)
{
    uint64_t tag;
    struct vfs_io *ios;
    int rc = vfs_ring_reap(us->ring, wait, &tag, &ios);
    if (rc <= 0)
        return rc ? wal_set_broken(w, rc) : 0;
    CL_INVARIANT("U1", tag < us->depth && us->chains[tag].busy); /* a chain of ours, in flight */
    if (tag >= us->depth || !us->chains[tag].busy)
        return wal_set_broken(w, CL_EINTERNAL);
    struct uchain *c = &us->chains[tag];
    int k = 0, err = 0, redo = 0;
    c->busy = 0;
    if (--us->inflight == 0)
        wal_add64(&w->st.sync_ns, cl_now_ns() - us->busy_since);
    if (c->written < c->len) {
        int res = ios[k++].result;
        if (res == -ECANCELED)
            redo = 1; /* U2: the whole write again, with a fresh sync */
        else if (res == 0)
            err = -EIO; /* no progress and no error: do not spin */
        else if (res < 0)
            err = res;
        else if ((size_t)res < c->len - c->written)
            redo = 1; /* U2: short: the remainder, with a fresh sync */
        if (res > 0) {
            c->written += (size_t)res;
            wal_add64(&w->st.writes, 1);
            wal_add64(&w->st.bytes, (uint64_t)res);
            if (w->write_is_sync)
                wal_add64(&w->st.syncs, 1);
        }
    }
    if (k < c->nios && !err) {
        int res = ios[k].result;
        if (res == -ECANCELED)
            redo = 1;
        else if (res < 0)
            err = res; /* never retried: the pages may be lost (fsyncgate) */
        else
            wal_add64(&w->st.syncs, 1);
    }
    if (err)
        return wal_set_broken(w, err);
    if (redo) {
        if (++c->retries > URING_MAX_RETRIES)
            return wal_set_broken(w, -EIO);
        rc = submit_chain(w, us, (unsigned)tag);
        return rc ? rc : 1;
    }
    c->done = 1;
    advance(w, us);
    return 1;
}

/* Waits for every chain in flight.  After an error only the waiting
 * matters (the kernel may still read the chain buffers). */
static int drain(struct wal *w, struct uring_state *us)
{
    while (us->inflight) {
        if (wal_broken(w)) {
            uint64_t tag;
            struct vfs_io *ios;
            int rc = vfs_ring_reap(us->ring, 1, &tag, &ios);
            if (rc < 0)
                return rc; /* the ring itself failed: nothing more to learn */
            if (rc == 1 && tag < us->depth && us->chains[tag].busy) {
                us->chains[tag].busy = 0;
                us->inflight--;
            }
            continue;
        }
        int rc = reap_one(w, us, 1);
        if (rc < 0 && !wal_broken(w))
            return rc;
    }
    if (wal_broken(w)) {
        for (unsigned i = 0; i < us->depth; i++)
            us->chains[i].done = 0;
        us->fifo_len = 0;
        return wal_broken(w);
    }
    return 0;
}

static int chain_reserve(struct uchain *c, size_t need)
{
    void *p;
    if (c->cap >= need)
        return 0;
    need = (need + 65535) & ~(size_t)65535;
    if (posix_memalign(&p, VFS_DIRECT_ALIGN, need))
        return CL_ENOMEM;
    free(c->buf);
    c->buf = p;
    c->cap = need;
    return 0;
}

/* Takes the bytes buffered past written_lsn as one chain and submits it.
 * Returns 1 (submitted), 0 (nothing to take), TB_CROSS, TB_WAIT, or an
 * error (the log is broken then). */
static int take_batch(struct wal *w, struct uring_state *us)
{
    uint64_t target, txns, sw = 0, a = w->written_lsn, stop;
    int direct = (w->open_flags & VFS_O_DIRECT) != 0, rc;
    unsigned slot;
    struct uchain *c;

    pthread_mutex_lock(&w->mu);
    target = wal_ready_lsn_locked(w);
    txns = w->txns_appended;
    if (w->swq_len)
        sw = w->swq[w->swq_head];
    pthread_mutex_unlock(&w->mu);
    if (a >= target)
        return 0;
    /* A full batch or none: while chains are in flight, the next one goes
     * only once it carries as many commits as the last one did.  Taking
     * whatever had arrived split the batches where the device runs syncs
     * one after another (ext4's journal): a median of 11-14 commits per
     * chain against group commit's 32-38 at 64 clients.  Where syncs do
     * overlap, a chain still goes as soon as it is as full as the last. */
    if (us->fifo_len && txns - w->written_txns < us->last_txns)
        return TB_WAIT;
    if (sw && sw <= target)
        return TB_CROSS;
    if (direct && (a % VFS_DIRECT_ALIGN) && us->tail_slot >= 0 && us->chains[us->tail_slot].busy)
        return TB_WAIT;
    rc = wal_create_segments_locked(w, target);
    if (rc)
        return rc;
    rc = wal_open_segment_locked(w, wal_lsn_segno(a, w->seg_size));
    if (rc)
        return wal_set_broken(w, rc);

    slot = (us->fifo_head + us->fifo_len) % us->depth;
    c = &us->chains[slot];
    if (direct) {
        uint64_t blk = a & ~(uint64_t)(VFS_DIRECT_ALIGN - 1);
        stop = blk + WAL_STAGE_SIZE < target ? blk + WAL_STAGE_SIZE : target;
        rc = chain_reserve(c, (size_t)(stop - blk) + VFS_DIRECT_ALIGN);
        if (rc)
            return wal_set_broken(w, rc);
        c->len = wal_stage_direct(w, c->buf, a, stop);
        if (!c->len)
            return wal_set_broken(w, CL_EINTERNAL);
        c->off = wal_lsn_offset(blk, w->seg_size);
        us->tail_slot = stop % VFS_DIRECT_ALIGN ? (int)slot : -1;
    } else {
        stop = a + WAL_STAGE_SIZE < target ? a + WAL_STAGE_SIZE : target;
        rc = chain_reserve(c, (size_t)(stop - a));
        if (rc)
            return wal_set_broken(w, rc);
        wal_ring_get(w, c->buf, a, (size_t)(stop - a));
        c->len = (size_t)(stop - a);
        c->off = wal_lsn_offset(a, w->seg_size);
    }
    c->f = w->cur.f;
    c->written = 0;
    c->retries = 0;
    c->done = 0;
    c->start = a;
    c->end = stop;
    c->txns = stop == target ? txns : w->written_txns;
    us->last_txns = c->txns - w->written_txns;
    w->written_txns = c->txns;
    pthread_mutex_lock(&w->mu);
    CL_INVARIANT("W1", stop > w->written_lsn && stop <= w->end_lsn);
    wal_store64(&w->written_lsn, stop); /* the bytes are copied: the ring may reuse them */
    pthread_mutex_unlock(&w->mu);
    us->fifo_len++;
    rc = submit_chain(w, us, slot);
    return rc ? rc : 1;
}

/* The leader's tenure (io_mu held): returns once lsn is durable and no
 * chain is in flight, or with the error that broke the log. */
static int lead(struct wal *w, struct uring_state *us, uint64_t lsn)
{
    unsigned tenure = 0, cap = 2 * us->depth;
    int rc = 0, blocked;

    for (;;) {
        if ((rc = wal_broken(w)) != 0)
            break;
        blocked = 0;
        while (us->fifo_len < us->depth && (wal_durable_lsn(w) < lsn || tenure < cap)) {
            int r = take_batch(w, us);
            if (r < 0) {
                rc = r;
                goto out;
            }
            if (r == 0 || r == TB_WAIT) {
                blocked = r == TB_WAIT;
                break;
            }
            if (r == TB_CROSS) { /* U4 */
                rc = drain(w, us);
                if (rc == 0)
                    rc = wal_write_locked(w, UINT64_MAX);
                if (rc == 0)
                    rc = wal_sync_locked(w);
                if (rc)
                    goto out;
                wake_covered(w, us, 0);
            }
            tenure++;
        }
        if (us->fifo_len == 0) {
            if (wal_durable_lsn(w) >= lsn)
                break;
            /* Bytes written (by make_room or wal_flush) but not synced, and
             * nothing new: one plain sync covers them. */
            rc = wal_sync_locked(w);
            if (rc)
                goto out;
            wake_covered(w, us, 0);
            if (wal_durable_lsn(w) >= lsn)
                break;
            CL_INVARIANT("U1", wal_durable_lsn(w) >= lsn); /* lsn was appended, and all is synced */
            rc = wal_set_broken(w, CL_EINTERNAL);
            goto out;
        }
        rc = reap_one(w, us, 0);
        if (rc < 0)
            goto out;
        if (rc > 0)
            continue;
        /* Nothing finished: sleep in the ring.  If another batch could be
         * taken, an arriving committer wakes us (after its append). */
        int can_take = !blocked && us->fifo_len < us->depth && (wal_durable_lsn(w) < lsn || tenure < cap);
        pthread_mutex_lock(&us->ldr.mu);
        if (can_take) {
            pthread_mutex_lock(&w->mu);
            int more = wal_ready_lsn_locked(w) > w->written_lsn;
            pthread_mutex_unlock(&w->mu);
            if (more) {
                pthread_mutex_unlock(&us->ldr.mu);
                continue;
            }
        }
        us->leader_sleeping = can_take;
        pthread_mutex_unlock(&us->ldr.mu);
        /* While the device works: the callbacks of the chains finished so
         * far (under io_mu, which the tenure holds anyway). */
        wal_async_deliver(w);
        rc = reap_one(w, us, 1);
        pthread_mutex_lock(&us->ldr.mu);
        us->leader_sleeping = 0;
        pthread_mutex_unlock(&us->ldr.mu);
        if (rc < 0)
            goto out;
    }
out:
    if (rc) {
        wal_set_broken(w, rc);
        drain(w, us);
    }
    return rc;
}

/* ---- the policy table ----------------------------------------------------- */

static void uring_free(struct uring_state *us)
{
    if (!us)
        return;
    vfs_ring_close(us->ring);
    for (unsigned i = 0; us->chains && i < us->depth; i++)
        free(us->chains[i].buf);
    free(us->chains);
    pthread_mutex_destroy(&us->ldr.mu);
    free(us);
}

static int uring_start(struct wal *w)
{
    struct uring_state *us = calloc(1, sizeof *us);
    int rc;
    if (!us)
        return CL_ENOMEM;
    pthread_mutex_init(&us->ldr.mu, NULL);
    us->depth = w->opt.uring_depth;
    if (us->depth > URING_MAX_DEPTH) {
        uring_free(us);
        return CL_EINVAL; /* never a silent clamp: the caller asked for this depth */
    }
    us->tail_slot = -1;
    us->chains = calloc(us->depth, sizeof *us->chains);
    if (!us->chains) {
        uring_free(us);
        return CL_ENOMEM;
    }
    rc = vfs_ring_open(w->vfs, us->depth, &us->ring);
    if (rc) {
        uring_free(us);
        /* No io_uring here (ENOSYS: kernel; EPERM: disabled) or a file
         * layer without rings: a clear error, never a silent fallback. */
        if (rc == -ENOSYS || rc == -EPERM || rc == -EOPNOTSUPP) {
            wal_say_why(w, "uring: io_uring is not available here: %s", strerror(-rc));
            return CL_ENOTSUP;
        }
        return rc;
    }
    w->policy_state = us;
    return 0;
}

static void uring_stop(struct wal *w)
{
    struct uring_state *us = w->policy_state;
    uring_free(us); /* no chain is in flight outside a tenure (U3) */
    w->policy_state = NULL;
}

/* The leader's tenure, under io_mu (see lead()), until target is durable
 * (its own commit, or the last asynchronous one waiting). */
static int uring_lead(struct wal *w, uint64_t target)
{
    int rc;
    pthread_mutex_lock(&w->io_mu);
    rc = lead(w, w->policy_state, target);
    CL_INVARIANT("U3", ((struct uring_state *)w->policy_state)->inflight == 0);
    pthread_mutex_unlock(&w->io_mu);
    return rc;
}

/* ldr.mu held: a committer joined the queue; if the leader is asleep in
 * the ring and this commit's bytes have not gone out, wake it to take them. */
static void uring_joined(struct wal *w, uint64_t lsn)
{
    struct uring_state *us = w->policy_state;
    if (us->leader_sleeping && lsn > wal_load64(&w->written_lsn)) {
        us->leader_sleeping = 0;
        vfs_ring_wake(us->ring);
    }
}

static int uring_commit(struct wal *w, uint64_t lsn)
{
    struct uring_state *us = w->policy_state;
    return wal_leader_commit(w, &us->ldr, lsn, uring_lead, uring_joined, 0);
}

/* An asynchronous commit: with a leader at work it wakes it if it sleeps
 * in the ring with room for another chain, and returns; the leader takes
 * it into a chain, or leads again for it before stepping down (L4 in
 * waitq.c).  With no leader it leads a tenure itself. */
static void uring_commit_async(struct wal *w, uint64_t lsn)
{
    struct uring_state *us = w->policy_state;
    (void)wal_leader_commit(w, &us->ldr, lsn, uring_lead, uring_joined, 1);
}

const struct wal_policy wal_policy_uring = {
    .name = "uring",
    .durable = 1,
    .start = uring_start,
    .commit = uring_commit,
    .stop = uring_stop,
    .commit_async = uring_commit_async,
};
