/*
 * waitq.c -- the queue of committers waiting for durability, shared by the
 * policies that have a leader (group, uring) and by the flusher's
 * committers.  Each waiter sleeps on its own condition variable and mutex,
 * so whoever made the log durable wakes exactly the waiters its sync
 * covered (no broadcast, no thundering herd) -- as MySQL 8.0 signals only
 * the flush events covering what became durable (log0write.cc) -- plus, under a
 * leader, the first one it did not cover, which leads next; a covered
 * waiter returns without retaking the queue's mutex.  The queue functions
 * are called with that mutex held; wal_leader_commit() is the whole
 * leader/follower protocol.
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
 *       log breaks, every waiter is woken and fails;
 *   L4  while an asynchronous commit's LSN (async_lsn) is above durable_lsn
 *       and the log is not broken, a leader is active, or the head of the
 *       queue has been signalled to lead, or a thread in wal_leader_commit
 *       is about to look again: a leader stepping down with nobody queued,
 *       and a signalled head leaving with nobody behind it, lead for it
 *       themselves (orphaned()), and an asynchronous committer that finds
 *       no leader leads.  So an asynchronous commit is never left waiting
 *       for a committer that may not come;
 *   L5  a leader leads at most LEAD_FOR_OTHERS + 1 batches for others'
 *       asynchronous commits once its own is durable, as long as they keep
 *       coming: past that (handoff) the next asynchronous committer queues
 *       instead of returning, and the leader, stepping down, hands it the
 *       lead (it is not orphaned then) and returns.
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

unsigned wal_waitq_wake(struct wal_waitq *q, uint64_t durable, int broken, int next_leader)
{
    unsigned n = 0;
    while (q->head && (broken || q->head->lsn <= durable)) {
        struct wal_waiter *x = q->head;
        wal_waitq_remove(q, x);
        wake(x, WAL_WAKE_DONE);
        n++;
    }
    if (next_leader && q->head)
        wake(q->head, WAL_WAKE_RECHECK); /* stays queued until it takes the lead */
    return n;
}

void wal_waitq_handoff(struct wal_waitq *q, int leader_active)
{
    if (!leader_active && q->head)
        wake(q->head, WAL_WAKE_RECHECK);
}

/* l->mu held: an asynchronous commit waits for durability and nobody is
 * there to lead for it -- no leader, and no waiter queued but me (L4). */
static int orphaned(struct wal *w, const struct wal_leader *l, const struct wal_waiter *me)
{
    return !l->active && l->async_lsn > wal_durable_lsn(w) && (!l->q.head || l->q.head == me);
}

/* Batches a leader leads for others' asynchronous commits, its own being
 * durable, before it asks the next asynchronous committer to take over:
 * under a steady stream of them it would otherwise lead for ever, its own
 * caller held up while everyone else goes on. */
#define LEAD_FOR_OTHERS 4

int wal_leader_commit(struct wal *w, struct wal_leader *l, uint64_t lsn,
                      int (*lead)(struct wal *w, uint64_t target),
                      void (*joined)(struct wal *w, uint64_t lsn), int async)
{
    struct wal_waiter me = {.lsn = lsn};
    int rc = 0, sync_init = 0, done = 0;
    unsigned for_others = 0;

    if (!async && wal_durable_lsn(w) >= lsn)
        return 0;
    pthread_mutex_lock(&l->mu);
    if (async && l->async_lsn < lsn)
        l->async_lsn = lsn;
    for (;;) {
        if ((rc = wal_broken(w)) != 0 || (wal_durable_lsn(w) >= lsn && !orphaned(w, l, &me)))
            break;
        if (!l->active) {
            uint64_t target = lsn > l->async_lsn ? lsn : l->async_lsn;
            if (me.queued)
                wal_waitq_remove(&l->q, &me);
            l->active = 1;
            if (wal_durable_lsn(w) >= lsn && ++for_others > LEAD_FOR_OTHERS)
                l->handoff = 1; /* L5: the next asynchronous committer queues to lead */
            pthread_mutex_unlock(&l->mu);
            rc = lead(w, target);
            pthread_mutex_lock(&l->mu);
            CL_INVARIANT("L1", l->active == 1); /* no one else led meanwhile */
            l->active = 0;
            l->handoff = 0;
            if (l->q.head && for_others > LEAD_FOR_OTHERS)
                wal_add64(&w->st.leader_handoffs, 1);
            wal_waitq_wake(&l->q, wal_durable_lsn(w), wal_broken(w) != 0, 1);
            /* the callbacks of what it made durable, while the next leader leads */
            pthread_mutex_unlock(&l->mu);
            wal_async_deliver(w);
            pthread_mutex_lock(&l->mu);
            if (rc)
                break;
            continue;
        }
        if (async && !l->handoff) { /* the active leader, or the next, leads for it (L4) */
            if (joined)
                joined(w, lsn);
            break;
        }
        /* (an asynchronous committer the leader asked to take over queues,
         * and leads next unless the batch in progress covers it: L5) */
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
    CL_INVARIANT("L3", rc != 0 || async || wal_durable_lsn(w) >= lsn);
    return rc;
}
