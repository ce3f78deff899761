/*
 * waitq.c -- the queue of committers waiting for durability, shared by the
 * policies that have a leader (group, uring).  Each waiter sleeps on its
 * own condition variable, so a leader wakes exactly the waiters its sync
 * covered (no broadcast, no thundering herd), plus the first one it did
 * not cover, which leads next.  The caller holds the policy's mutex (the
 * one the waiters sleep with) around every call.
 */
#include "wal_internal.h"

void wal_waitq_add(struct wal_waitq *q, struct wal_waiter *me)
{
    struct wal_waiter **pp = &q->head;
    while (*pp && (*pp)->lsn <= me->lsn)
        pp = &(*pp)->next;
    me->next = *pp;
    *pp = me;
    me->queued = 1;
}

void wal_waitq_remove(struct wal_waitq *q, struct wal_waiter *me)
{
    for (struct wal_waiter **pp = &q->head; *pp; pp = &(*pp)->next)
        if (*pp == me) {
            *pp = me->next;
            break;
        }
    me->queued = 0;
}

void wal_waitq_wake(struct wal_waitq *q, uint64_t durable, int broken, int next_leader)
{
    while (q->head && (broken || q->head->lsn <= durable)) {
        struct wal_waiter *x = q->head;
        q->head = x->next;
        x->queued = 0;
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
