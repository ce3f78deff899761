/*
 * policy_group.c -- leader/follower group commit (PostgreSQL's XLogFlush
 * and RocksDB's WriteThread, simplified to what the log needs).
 *
 * A committer whose commit LSN is not durable:
 *   - if no flush is in progress, becomes the leader: optionally sleeps
 *     commit_delay us (only if at least commit_siblings other write
 *     transactions are active, PostgreSQL's rule, so that a lone committer
 *     never waits for company that will not come), then under io_mu writes
 *     everything in the log buffer and syncs once;
 *   - otherwise enqueues itself, in LSN order, and waits on its own wake
 *     word (sleeping, spinning or both: the wait option, waitq.c).
 * When the leader's sync returns it wakes exactly the waiters whose LSN it
 * made durable, and the first waiter it did not cover, which becomes the
 * next leader.  No broadcast: a batch of N wakes N threads, not all of
 * them (no thundering herd).
 *
 * The protocol and its invariants are wal_leader_commit's (waitq.c),
 * shared with the uring policy; this file is what the leader does.  A
 * batch is bounded by the log buffer (wal_config.buffer_size) and, with
 * max_batch, to the whole transactions that fit in that many bytes (at
 * least one): a leader whose own commit lies beyond wakes the committers
 * it covered and leads the next batch.
 *
 * Asynchronous commits (wal.h): the leader calls the callbacks of each
 * batch after stepping down, while the next leader syncs; a lone
 * asynchronous commit is led by its own committer or, when it arrived
 * during a batch it missed, by that batch's leader (L4 in waitq.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "wal_internal.h"

static int group_start(struct wal *w)
{
    struct wal_leader *l = calloc(1, sizeof *l);
    if (!l)
        return CL_ENOMEM;
    pthread_mutex_init(&l->mu, NULL);
    w->policy_state = l;
    return 0;
}

static void group_stop(struct wal *w)
{
    struct wal_leader *l = w->policy_state;
    if (!l)
        return;
    pthread_mutex_destroy(&l->mu);
    free(l);
    w->policy_state = NULL;
}

static void sleep_us(uint32_t us)
{
    struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* The leader: wait for company if there is some, then write everything
 * buffered (at most max_batch bytes of it) and sync once. */
static int group_lead(struct wal *w, uint64_t target)
{
    int rc;
    if (w->opt.commit_delay_us && __atomic_load_n(&w->active_txns, __ATOMIC_RELAXED) > (int64_t)w->opt.commit_siblings)
        sleep_us(w->opt.commit_delay_us);
    pthread_mutex_lock(&w->io_mu);
    (void)target; /* a whole batch covers it; a bounded one may not: lead again */
    if (w->opt.max_batch)
        rc = wal_write_upto_locked(w, 0, w->written_lsn + w->opt.max_batch);
    else
        rc = wal_write_locked(w, UINT64_MAX);
    if (rc == 0)
        rc = wal_sync_locked(w);
    pthread_mutex_unlock(&w->io_mu);
    return rc;
}

static int group_commit(struct wal *w, uint64_t lsn)
{
    return wal_leader_commit(w, w->policy_state, lsn, group_lead, NULL, 0);
}

/* An asynchronous commit: with a leader at work it returns at once (that
 * leader leads again for it before stepping down, unless a waiter is
 * there to lead next: L4); with none it leads one batch itself. */
static void group_commit_async(struct wal *w, uint64_t lsn)
{
    (void)wal_leader_commit(w, w->policy_state, lsn, group_lead, NULL, 1);
}

const struct wal_policy wal_policy_group = {
    .name = "group",
    .durable = 1,
    .start = group_start,
    .commit = group_commit,
    .stop = group_stop,
    .commit_async = group_commit_async,
};
