/*
 * policy_commit.c -- the commit sync policy, the classic baseline (LMDB,
 * SQLite, ZODB): every commit writes its own transaction and issues its own
 * sync, one committer at a time, and is acknowledged after that sync
 * (contract next to wal_policy_commit in wal.h).  Nobody rides on another's
 * sync: one sync per commit.
 *
 * The log is sequential, so a committer's write carries every record before
 * its own.  For each sync to cover exactly one transaction, committers take
 * turns in log order: a committer first waits until the transaction before
 * it is durable, then writes up to its own commit LSN (never a record
 * buffered behind it) and syncs.  A committer waits for its predecessor
 * only while that one has arrived here, or for at most PRED_WAIT_NS for it
 * to arrive: a transaction appended but never committed (a failed
 * transaction, a caller of the log that appends ahead) must not stall the
 * log, so after that its successor goes first, and the late predecessor
 * finds itself durable and returns without a sync of its own.  That is the
 * only case in which a commit rides on another's sync; the distribution of
 * commits per sync shows how often it happened.
 *
 * Asynchronous commits (wal.h) are no different: the committer writes and
 * syncs its own transaction in its turn, then calls the callbacks due --
 * its own, and any before it still waiting -- in log order.  So
 * cl_commit_async returns after its sync here: the policy's point is that
 * each commit's sync is issued by its committer; a thread that wants
 * commits in flight uses the flusher (or uring/group with others
 * committing).
 */
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "wal_internal.h"

#define PRED_WAIT_NS (10u * 1000u * 1000u)

/* A committer waiting for its turn, on its own condition variable (with
 * w->mu): a sync wakes the one committer it lets go, not all of them. */
struct turn_waiter {
    uint64_t prev;                     /* the predecessor's commit LSN */
    pthread_cond_t cv;
    struct turn_waiter *next;
};

struct commit_turns {
    uint64_t arrived[WAL_COMMIT_RING]; /* w->mu: commit LSN of transaction k at k % size, once its
                                        * committer is here */
    struct turn_waiter *waiters;       /* w->mu */
    int nwaiters;                      /* atomic, changed under w->mu */
};

static int commit_start(struct wal *w)
{
    struct commit_turns *t = calloc(1, sizeof *t);
    if (!t)
        return CL_ENOMEM;
    w->policy_state = t;
    return 0;
}

static void commit_stop(struct wal *w)
{
    free(w->policy_state);
    w->policy_state = NULL;
}

/* mu held: the number of the transaction committing at lsn, or 0 when the
 * ring does not remember it (too old, or not a commit LSN). */
static uint64_t ordinal_of(const struct wal *w, uint64_t lsn)
{
    uint64_t k;
    return wal_txns_upto_locked(w, lsn, &k) && k > 0 && wal_commit_lsn_of(w, k) == lsn ? k : 0;
}

/* mu held: wakes the waiters whose predecessor is durable (all of them when
 * the log is broken), and the one whose predecessor committing at arrived
 * has just arrived (arrived: 0 for none). */
static void wake_turns(struct wal *w, struct commit_turns *t, uint64_t arrived)
{
    uint64_t durable = wal_load64(&w->durable_lsn);
    int broken = wal_broken(w) != 0;
    for (struct turn_waiter *x = t->waiters; x; x = x->next)
        if (x->prev <= durable || broken || x->prev == arrived)
            pthread_cond_signal(&x->cv);
}

/* Waits, with w->mu held, until the transaction before lsn's is durable, or
 * it has not arrived within PRED_WAIT_NS, or the log is broken. */
static void wait_turn(struct wal *w, struct commit_turns *t, uint64_t lsn)
{
    uint64_t k = ordinal_of(w, lsn), prev, deadline = 0;
    if (k == 0)
        return;
    t->arrived[(k - 1) % WAL_COMMIT_RING] = lsn;
    if (t->nwaiters)
        wake_turns(w, t, lsn);
    if (k < 2 || w->txns_appended - (k - 1) >= WAL_COMMIT_RING)
        return;
    prev = wal_commit_lsn_of(w, k - 1);
    if (wal_load64(&w->durable_lsn) >= prev)
        return;
    struct turn_waiter me = {.prev = prev, .next = t->waiters};
    cl_cond_init(&me.cv);
    t->waiters = &me;
    __atomic_add_fetch(&t->nwaiters, 1, __ATOMIC_RELAXED);
    while (wal_load64(&w->durable_lsn) < prev && !wal_broken(w)) {
        if (t->arrived[(k - 2) % WAL_COMMIT_RING] == prev) {
            pthread_cond_wait(&me.cv, &w->mu);
            continue;
        }
        uint64_t now = cl_now_ns();
        if (!deadline)
            deadline = now + PRED_WAIT_NS;
        if (now >= deadline)
            break;
        struct timespec ts = cl_timespec(deadline);
        pthread_cond_timedwait(&me.cv, &w->mu, &ts);
    }
    struct turn_waiter **pp = &t->waiters;
    while (*pp != &me)
        pp = &(*pp)->next;
    *pp = me.next;
    __atomic_sub_fetch(&t->nwaiters, 1, __ATOMIC_RELAXED);
    pthread_cond_destroy(&me.cv);
}

/* A commit leaving, synced or not: its successor may go. */
static void leave(struct wal *w, struct commit_turns *t)
{
    if (!__atomic_load_n(&t->nwaiters, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&w->mu);
    wake_turns(w, t, 0);
    pthread_mutex_unlock(&w->mu);
}

static int commit_commit(struct wal *w, uint64_t commit_lsn)
{
    struct commit_turns *t = w->policy_state;
    int rc = 0;
    if (wal_durable_lsn(w) < commit_lsn) {
        pthread_mutex_lock(&w->mu);
        wait_turn(w, t, commit_lsn);
        pthread_mutex_unlock(&w->mu);
        pthread_mutex_lock(&w->io_mu);
        if (w->durable_lsn < commit_lsn) {
            rc = wal_write_upto_locked(w, commit_lsn, commit_lsn);
            if (rc == 0)
                rc = wal_sync_locked(w);
        }
        pthread_mutex_unlock(&w->io_mu);
    }
    leave(w, t);
    return rc;
}

const struct wal_policy wal_policy_commit = {
    .name = "commit",
    .durable = 1,
    .start = commit_start,
    .commit = commit_commit,
    .stop = commit_stop,
};
