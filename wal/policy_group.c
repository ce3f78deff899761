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
 *   - otherwise enqueues itself, in LSN order, and sleeps on its own
 *     condition variable.
 * When the leader's sync returns it wakes exactly the waiters whose LSN it
 * made durable, and the first waiter it did not cover, which becomes the
 * next leader.  No broadcast: a batch of N wakes N threads, not all of
 * them (no thundering herd).
 *
 * Invariants:
 *   G1  at most one leader at a time (leader_active, under gs->mu);
 *   G2  a waiter sleeps only while a leader is active or the head of the
 *       queue has been signalled to lead; every leader on finishing
 *       examines the whole queue, and a thread that leaves while no leader
 *       is active signals the head, so no waiter is forgotten;
 *   G3  a waiter is acknowledged only when durable_lsn >= its LSN; when
 *       the log breaks, every waiter is woken and fails.
 * A batch is bounded by the log buffer (wal_config.buffer_size).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "wal_internal.h"

struct group_state {
    pthread_mutex_t mu;
    int leader_active;
    struct wal_waitq q;
};

static int group_start(struct wal *w)
{
    struct group_state *gs = calloc(1, sizeof *gs);
    if (!gs)
        return CL_ENOMEM;
    pthread_mutex_init(&gs->mu, NULL);
    w->policy_state = gs;
    return 0;
}

static void group_stop(struct wal *w)
{
    struct group_state *gs = w->policy_state;
    if (!gs)
        return;
    pthread_mutex_destroy(&gs->mu);
    free(gs);
    w->policy_state = NULL;
}

static void sleep_us(uint32_t us)
{
    struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

static int group_commit(struct wal *w, uint64_t lsn)
{
    struct group_state *gs = w->policy_state;
    struct wal_waiter me = {.lsn = lsn};
    int rc = 0, cv_init = 0;

    if (wal_durable_lsn(w) >= lsn)
        return 0;
    pthread_mutex_lock(&gs->mu);
    for (;;) {
        if ((rc = wal_broken(w)) != 0 || wal_durable_lsn(w) >= lsn)
            break;
        if (!gs->leader_active) {
            if (me.queued)
                wal_waitq_remove(&gs->q, &me);
            gs->leader_active = 1;
            pthread_mutex_unlock(&gs->mu);

            /* Only the leader waits for company, and only if there is some. */
            if (w->commit_delay_us &&
                __atomic_load_n(&w->active_txns, __ATOMIC_RELAXED) > (int64_t)w->commit_siblings)
                sleep_us(w->commit_delay_us);
            pthread_mutex_lock(&w->io_mu);
            rc = wal_write_locked(w, UINT64_MAX);
            if (rc == 0)
                rc = wal_sync_locked(w);
            pthread_mutex_unlock(&w->io_mu);

            pthread_mutex_lock(&gs->mu);
            gs->leader_active = 0;
            wal_waitq_wake(&gs->q, wal_durable_lsn(w), wal_broken(w) != 0, 1);
            if (rc)
                break;
            continue;
        }
        if (!cv_init) {
            pthread_cond_init(&me.cv, NULL);
            cv_init = 1;
        }
        if (!me.queued)
            wal_waitq_add(&gs->q, &me);
        pthread_cond_wait(&me.cv, &gs->mu);
    }
    if (me.queued)
        wal_waitq_remove(&gs->q, &me);
    /* G2: this thread may have been signalled to lead and leave without
     * leading (its LSN was made durable by a checkpoint's flush, say). */
    wal_waitq_handoff(&gs->q, gs->leader_active);
    pthread_mutex_unlock(&gs->mu);
    if (cv_init)
        pthread_cond_destroy(&me.cv);
    return rc;
}

const struct wal_policy wal_policy_group = {
    .name = "group",
    .durable = 1,
    .start = group_start,
    .commit = group_commit,
    .stop = group_stop,
};
