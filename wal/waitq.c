/*
 * waitq.c -- the queue of committers waiting for durability, shared by the
 * policies that have a leader (group, uring).  Each waiter sleeps on its
 * own condition variable and mutex, so a leader wakes exactly the waiters
 * its sync covered (no broadcast, no thundering herd), plus the first one
 * it did not cover, which leads next; a covered waiter returns without
 * retaking the leader state's mutex.  The queue functions are called with
 * that mutex held; wal_leader_commit() is the whole protocol.
 *
 * Invariants of wal_leader_commit (CL_INVARIANT checks L1 and L3):
 *   L1  at most one leader at a time (active, under mu);
 *   L2  a waiter sleeps only while a leader is active or the head of the
 *       queue has been signalled to lead; every leader on finishing
 *       examines the whole queue, and a committer that leaves while no
 *       leader is active signals the head (it may itself have been the one
 *       signalled to lead, and left because a checkpoint's flush made its
 *       LSN durable), so no waiter is forgotten;
 *   L3  a committer returns 0 only when durable_lsn >= its LSN; when the
 *       log breaks, every waiter is woken and fails.
 */
#include "invariant.h"
#include "wal_internal.h"

/* Committers arrive in about LSN order, so the place of a new waiter is
 * found from the tail: walking from the head through every sleeper's stack
 * frame was 4% of the CPU of 64 clients. */
void wal_waitq_add(struct wal_waitq *q, struct wal_waiter *me)
{
    struct wal_waiter *after = q->tail;
    while (after && after->lsn > me->lsn)
        after = after->prev;
    me->prev = after;
    me->next = after ? after->next : q->head;
    if (me->next)
        me->next->prev = me;
    else
        q->tail = me;
    if (after)
        after->next = me;
    else
        q->head = me;
    me->queued = 1;
}

void wal_waitq_remove(struct wal_waitq *q, struct wal_waiter *me)
{
    if (!me->queued)
        return;
    if (me->prev)
        me->prev->next = me->next;
    else
        q->head = me->next;
    if (me->next)
        me->next->prev = me->prev;
    else
        q->tail = me->prev;
    me->next = me->prev = NULL;
    me->queued = 0;
}

static void wake(struct wal_waiter *x, enum wal_wake how)
{
    pthread_mutex_lock(&x->mu);
    x->wake = how;
    pthread_cond_signal(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

void wal_waitq_wake(struct wal_waitq *q, uint64_t durable, int broken, int next_leader)
{
    while (q->head && (broken || q->head->lsn <= durable)) {
        struct wal_waiter *x = q->head;
        wal_waitq_remove(q, x);
        wake(x, WAL_WAKE_DONE);
    }
    if (next_leader && q->head)
        wake(q->head, WAL_WAKE_RECHECK); /* stays queued until it takes the lead */
}

void wal_waitq_handoff(struct wal_waitq *q, int leader_active)
{
    if (!leader_active && q->head)
        wake(q->head, WAL_WAKE_RECHECK);
}

int wal_leader_commit(struct wal *w, struct wal_leader *l, uint64_t lsn,
                      int (*lead)(struct wal *w, uint64_t lsn),
                      void (*joined)(struct wal *w, uint64_t lsn))
{
    struct wal_waiter me = {.lsn = lsn};
    int rc = 0, sync_init = 0, done = 0;

    if (wal_durable_lsn(w) >= lsn)
        return 0;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        if ((rc = wal_broken(w)) != 0 || wal_durable_lsn(w) >= lsn)
            break;
        if (!l->active) {
            if (me.queued)
                wal_waitq_remove(&l->q, &me);
            l->active = 1;
            pthread_mutex_unlock(&l->mu);
            rc = lead(w, lsn);
            pthread_mutex_lock(&l->mu);
            CL_INVARIANT("L1", l->active == 1); /* no one else led meanwhile */
            l->active = 0;
            wal_waitq_wake(&l->q, wal_durable_lsn(w), wal_broken(w) != 0, 1);
            if (rc)
                break;
            continue;
        }
        if (!sync_init) {
            pthread_mutex_init(&me.mu, NULL);
            pthread_cond_init(&me.cv, NULL);
            sync_init = 1;
        }
        if (!me.queued) {
            wal_waitq_add(&l->q, &me);
            if (joined)
                joined(w, lsn);
        }
        /* Sleep on our own mutex: a leader that covered us dequeues us
         * and says so (DONE), and we return without retaking l->mu -- 32
         * waiters woken at once used to queue up for it.  No one touches
         * me.wake while we hold l->mu. */
        me.wake = WAL_WAKE_NONE;
        pthread_mutex_unlock(&l->mu);
        pthread_mutex_lock(&me.mu);
        while (me.wake == WAL_WAKE_NONE)
            pthread_cond_wait(&me.cv, &me.mu);
        done = me.wake == WAL_WAKE_DONE;
        pthread_mutex_unlock(&me.mu);
        if (done)
            break;
        pthread_mutex_lock(&l->mu);
    }
    if (done) {
        /* dequeued by the leader that woke us, which then woke the next
         * leader: nothing to hand over */
        rc = wal_durable_lsn(w) >= lsn ? 0 : wal_broken(w);
    } else {
        if (me.queued)
            wal_waitq_remove(&l->q, &me);
        wal_waitq_handoff(&l->q, l->active);
        pthread_mutex_unlock(&l->mu);
    }
    if (sync_init) {
        pthread_cond_destroy(&me.cv);
        pthread_mutex_destroy(&me.mu);
    }
    CL_INVARIANT("L3", rc != 0 || wal_durable_lsn(w) >= lsn);
    return rc;
}
