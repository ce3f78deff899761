/*
 * waitq.c -- the queue of committers waiting for durability, shared by the
 * policies that have a leader (group, uring) and by the flusher's
 * committers, and how a committer waits (wal_waiter_wait).  Each waiter
 * is a record on its own stack with its own wake word, so whoever made the
 * log durable wakes exactly the waiters its sync covered (no broadcast, no
 * thundering herd) -- as MySQL 8.0 signals only the flush events covering
 * what became durable (log0write.cc) -- plus, under a leader, the first
 * one it did not cover, which leads next; a covered
 * waiter returns without retaking the queue's mutex.  The queue functions
 * are called with that mutex held; wal_leader_commit() is the whole
 * leader/follower protocol.
 *
 * How a waiter waits is the wait option (enum cl_wait): block sleeps on
 * its word as a futex at once; spin polls the word with a pause
 * instruction and never sleeps; adaptive polls it wait_spin_us, then
 * yields the processor up to WAL_WAIT_YIELDS times, then sleeps.  A
 * spinning follower polls its own word, not the durable LSN: it may be
 * asked to lead (RECHECK), which the durable LSN cannot say, and it may not
 * leave while the leader can still reach it through the queue; its word is
 * set as soon as the leader has seen the durable LSN cover it, and no other
 * waiter's polling shares its cache line.
 *
 * No lost wake-up, in two steps:
 *   (a) publishing the durable LSN vs joining the queue.  The syncer
 *       stores durable_lsn (release) and only then takes the queue's
 *       mutex to walk the queue; a waiter checks durable_lsn and joins the
 *       queue under that same mutex.  So either the waiter's check comes
 *       after the syncer's store (it sees itself covered and does not
 *       join) or its joining comes before the syncer's walk (the walk
 *       finds it).  Under a leader the same holds of "a leader is active":
 *       a follower joins only under l->mu while one is, and the leader
 *       walks the queue under l->mu as it steps down (L2).
 *   (b) being woken vs going to sleep.  Both are read-modify-writes of the
 *       one word: the waker exchanges it to DONE or RECHECK, the waiter
 *       compares-and-swaps it from NONE to SLEEPING before futex_wait(word,
 *       SLEEPING).  They are ordered on that word: if the waker's came
 *       first the waiter's CAS fails and it returns what it read; if the
 *       waiter's came first the waker reads SLEEPING and calls futex_wake,
 *       and futex_wait compares the word with SLEEPING atomically with its
 *       enqueueing in the kernel, so it either sees the new value and
 *       returns at once or is asleep before futex_wake looks for it.
 * The waker touches the waiter's record for the last time in that
 * exchange: the waiter may return and its stack frame be reused right
 * after.  futex_wake is then called on an address alone (a private futex
 * is a key, not an access to memory); what sleeps there later at worst
 * wakes spuriously and checks its word again.
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
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomic.h"
#include "clock.h"
#include "invariant.h"
#include "wal_internal.h"

int wal_spin_until(struct wal *w, uint32_t us, int (*done)(struct wal *, uint64_t), uint64_t arg)
{
    if (!us)
        return done(w, arg);
    uint64_t until = us == UINT32_MAX ? UINT64_MAX : cl_now_ns() + (uint64_t)us * 1000u;
    for (unsigned i = 0;; i++) {
        if (done(w, arg))
            return 1;
        if ((i & 63) == 63 && until != UINT64_MAX && cl_now_ns() >= until)
            return 0;
        cl_cpu_relax();
    }
}

int wal_yield_until(struct wal *w, int (*done)(struct wal *, uint64_t), uint64_t arg)
{
    for (unsigned i = 0; i < WAL_WAIT_YIELDS; i++) {
        if (done(w, arg))
            return 1;
        sched_yield();
    }
    return done(w, arg);
}

static void futex_wait(uint32_t *word, uint32_t val)
{
    /* EAGAIN (the word moved), EINTR and spurious returns: the caller
     * looks at the word again */
    (void)syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(uint32_t *word)
{
    (void)syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static uint32_t wake_word(const struct wal_waiter *me)
{
    return __atomic_load_n(&me->wake, __ATOMIC_ACQUIRE);
}

static int woken(struct wal *w, uint64_t me)
{
    uint32_t v = wake_word((const struct wal_waiter *)(uintptr_t)me);
    (void)w;
    return v != WAL_WAKE_NONE && v != WAL_WAKE_SLEEPING;
}

enum wal_wake wal_waiter_wait(struct wal *w, struct wal_waiter *me, enum cl_wait how, int *slept)
{
    uint64_t arg = (uint64_t)(uintptr_t)me;
    if (slept)
        *slept = 0;
    if (how == CL_WAIT_SPIN) {
        wal_spin_until(w, UINT32_MAX, woken, arg);
        return (enum wal_wake)wake_word(me);
    }
    if (how == CL_WAIT_ADAPTIVE &&
        (wal_spin_until(w, w->opt.wait_spin_us, woken, arg) || wal_yield_until(w, woken, arg)))
        return (enum wal_wake)wake_word(me);
    for (;;) {
        uint32_t v = WAL_WAKE_NONE;
        /* (b) above: mark myself asleep, unless a waker came first */
        if (!__atomic_compare_exchange_n(&me->wake, &v, WAL_WAKE_SLEEPING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
            v != WAL_WAKE_SLEEPING)
            return (enum wal_wake)v;
        if (slept)
            *slept = 1;
        futex_wait(&me->wake, WAL_WAKE_SLEEPING);
    }
}

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

/* The last touch of x (see "No lost wake-up" above): x may be gone once
 * the exchange is done. */
static void wake(struct wal_waiter *x, enum wal_wake how)
{
    if (__atomic_exchange_n(&x->wake, (uint32_t)how, __ATOMIC_ACQ_REL) == WAL_WAKE_SLEEPING)
        futex_wake(&x->wake);
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
    int rc = 0, done = 0;
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
        if (!me.queued) {
            wal_waitq_add(&l->q, &me);
            if (joined)
                joined(w, lsn);
        }
        /* Wait on our own word: a leader that covered us dequeues us and
         * says so (DONE), and we return without retaking l->mu -- 32
         * waiters woken at once used to queue up for it.  No one wakes us
         * while we hold l->mu, so the word can be reset here. */
        __atomic_store_n(&me.wake, WAL_WAKE_NONE, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&l->mu);
        done = wal_waiter_wait(w, &me, w->opt.wait, NULL) == WAL_WAKE_DONE;
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
    CL_INVARIANT("L3", rc != 0 || async || wal_durable_lsn(w) >= lsn);
    return rc;
}
