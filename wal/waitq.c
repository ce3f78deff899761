/*
 * waitq.c -- the queue of committers waiting for durability, shared by the
 * policies that have a leader (group, uring).  Each waiter sleeps on its
 * own condition variable, so a leader wakes exactly the waiters its sync
 * covered (no broadcast, no thundering herd), plus the first one it did
 * not cover, which leads next.  The queue functions are called with the
 * leader state's mutex held; wal_leader_commit() is the whole protocol.
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

void wal_waitq_wake(struct wal_waitq *q, uint64_t durable, int broken, int next_leader)
{
    while (q->head && (broken || q->head->lsn <= durable)) {
        struct wal_waiter *x = q->head;
        wal_waitq_remove(q, x);
        pthread_cond_signal(&x->cv);
    }
    if (next_leader && q->head)
        pthread_cond_signal(&q->head->cv); /* stays queued until it takes the lead */
}

void wal_waitq_handoff(struct wal_waitq *q, int leader_active)
{
    if (!leader_active && q->head)
        pthread_cond_signal(&q->head->cv);
}

int wal_leader_commit(struct wal *w, struct wal_leader *l, uint64_t lsn,
                      int (*lead)(struct wal *w, uint64_t lsn),
                      void (*joined)(struct wal *w, uint64_t lsn))
{
    struct wal_waiter me = {.lsn = lsn};
    int rc = 0, cv_init = 0;

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
        if (!cv_init) {
            pthread_cond_init(&me.cv, NULL);
            cv_init = 1;
        }
        if (!me.queued) {
            wal_waitq_add(&l->q, &me);
            if (joined)
                joined(w, lsn);
        }
        pthread_cond_wait(&me.cv, &l->mu);
    }
    if (me.queued)
        wal_waitq_remove(&l->q, &me);
    wal_waitq_handoff(&l->q, l->active);
    pthread_mutex_unlock(&l->mu);
    if (cv_init)
        pthread_cond_destroy(&me.cv);
    CL_INVARIANT("L3", rc != 0 || wal_durable_lsn(w) >= lsn);
    return rc;
}
