/*
 * async.c -- asynchronous commits: the callbacks waiting for their commit
 * LSN to become durable, and their delivery (contract in wal.h,
 * "asynchronous commits"; the asynchronous commit of Aether, Johnson et
 * al., "Aether: A Scalable Approach to Logging", VLDB 2010,
 * https://infoscience.epfl.ch/record/149436).
 *
 * The callbacks wait in a FIFO of entries {lsn, fn, arg}, added in LSN
 * order: the engine adds an entry under its writer lock, right after it
 * appended the transaction and applied it to the tree, so that a callback
 * never runs before its transaction is visible.  Whoever makes the log
 * durable further -- a group or uring leader, the flusher or periodic
 * thread, a committer under none or commit, a checkpoint's flush -- calls
 * wal_async_deliver() afterwards, once it has let go of the log's locks
 * (the uring leader keeps io_mu).  One thread at a time, the deliverer,
 * takes the entries that are due off the head and calls them, in order,
 * without the queue's lock; another thread that finds a deliverer at work
 * leaves its callbacks to it.
 *
 * A timed entry (wal_async_time; cl_commit_async_timed) notes when it was
 * added, and the deliverer splits its wait by the record of durable
 * advances (wal_find_batch, once per advance) just before calling it; an untimed one
 * costs neither a clock reading nor the look-up.
 *
 * Invariants (CL_INVARIANT checks A1 and A2):
 *   A1  entries are in LSN order: each one's LSN is at or above the one
 *       before (an entry with no log position takes its predecessor's);
 *   A2  an entry gets 0 only when its LSN is at or below the ready LSN
 *       (durable_lsn; written_lsn under none), and is called exactly once:
 *       taken off the queue under mu by the one deliverer;
 *   A3  an entry above the ready LSN gets the log's sticky error once the
 *       log is broken.  The broken flag is read before the ready LSN, and
 *       the ready LSN does not move past a failed sync (W5), so no entry of
 *       a failed batch gets 0;
 *   A4  no due entry is left while nobody delivers: the deliverer looks at
 *       the head again under mu before it stops, and every thread that
 *       makes entries due (or breaks the log) calls wal_async_deliver()
 *       afterwards, taking mu after the LSN moved.
 */
#include <stdlib.h>

#include "invariant.h"
#include "wal_internal.h"

/* Which thread is inside one of a log's callbacks: the deliverer's tag,
 * the address of a thread-local (never 0), set while it calls one.  Only
 * that thread stores its own tag, so no other thread can read its own
 * there; a callback of one log may commit on another, whose own deliverer
 * it then is, to any depth. */
static __thread char thread_tag;
static uintptr_t self_tag(void) { return (uintptr_t)&thread_tag; }
/* How deep this thread is in callbacks of any log: a thread inside one
 * never waits for another log's deliverer (wal_async_deliver_through),
 * who may be inside a callback waiting for this one. */
static __thread unsigned callback_depth;

int wal_in_callback(const struct wal *w)
{
    return __atomic_load_n(&w->async.deliverer, __ATOMIC_RELAXED) == self_tag();
}

void wal_async_init(struct wal *w)
{
    struct wal_async *a = &w->async;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    a->head = a->tail = NULL;
    a->head_lsn = UINT64_MAX;
}

void wal_async_destroy(struct wal *w)
{
    struct wal_async *a = &w->async;
    while (a->head) { /* wal_async_finish called them all; a failed open has none */
        struct wal_async_entry *e = a->head;
        a->head = e->next;
        free(e);
    }
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
}

struct wal_async_entry *wal_async_entry_new(wal_durable_fn fn, void *arg)
{
    struct wal_async_entry *e = calloc(1, sizeof *e);
    if (e) {
        e->fn = fn;
        e->arg = arg;
    }
    return e;
}

void wal_async_entry_free(struct wal_async_entry *e) { free(e); }

void wal_async_time(struct wal_async_entry *e, struct wal_commit_times *out) { e->times = out; }

/* The LSN up to which a commit is acknowledged: durable, or written under
 * a policy that acknowledges the write (none). */
static uint64_t ready_lsn(struct wal *w)
{
    return w->policy->ack_written ? wal_load64(&w->written_lsn) : wal_durable_lsn(w);
}

uint64_t wal_async_add(struct wal *w, struct wal_async_entry *e, uint64_t commit_lsn)
{
    struct wal_async *a = &w->async;
    if (e->times)
        e->t0 = cl_now_ns(); /* the commit is the log's from here */
    pthread_mutex_lock(&a->mu);
    CL_INVARIANT("A1", commit_lsn == 0 || commit_lsn >= a->tail_lsn);
    e->logged = commit_lsn != 0;
    if (commit_lsn < a->tail_lsn)
        commit_lsn = a->tail_lsn; /* no log position: due with the entry before it */
    e->lsn = commit_lsn;
    e->next = NULL;
    if (a->tail) {
        a->tail->next = e;
    } else {
        a->head = e;
        wal_store64(&a->head_lsn, commit_lsn);
    }
    a->tail = e;
    a->tail_lsn = commit_lsn;
    uint64_t seq = ++a->added;
    pthread_mutex_unlock(&a->mu);
    return seq;
}

/* Calls one callback, with the thread marked as inside w's callbacks. */
static void call(struct wal *w, struct wal_async_entry *e, int rc)
{
    __atomic_store_n(&w->async.deliverer, self_tag(), __ATOMIC_RELAXED);
    callback_depth++;
    e->fn(e->arg, rc);
    callback_depth--;
    __atomic_store_n(&w->async.deliverer, 0, __ATOMIC_RELAXED);
}

/* Delivers what is due: with final (the log closing), everything, the
 * callbacks not durable with the sticky error or CL_EBROKEN; a final
 * delivery first waits for a deliverer at work.  Otherwise returns at once
 * when another thread delivers. */
static void deliver(struct wal *w, int final)
{
    struct wal_async *a = &w->async;

    pthread_mutex_lock(&a->mu);
    if (a->delivering && !final) {
        pthread_mutex_unlock(&a->mu);
        return; /* it calls ours too (A4) */
    }
    if (a->delivering) {
        __atomic_add_fetch(&a->waiters, 1, __ATOMIC_RELAXED);
        while (a->delivering)
            pthread_cond_wait(&a->cv, &a->mu);
        __atomic_sub_fetch(&a->waiters, 1, __ATOMIC_RELAXED);
    }
    a->delivering = 1;
    /* The advance that covered the last timed callback: the callbacks come
     * in LSN order, so it covers the next ones too until one lies beyond
     * it (found once per advance, not once per callback under the log's
     * mutex). */
    struct wal_batch cover;
    int have_cover = 0;
    while (a->head) {
        struct wal_async_entry *e = a->head;
        int broken = wal_broken(w), rc; /* A3: broken first, then the ready LSN */
        if (e->lsn <= ready_lsn(w))
            rc = 0;
        else if (broken)
            rc = broken;
        else if (final)
            rc = CL_EBROKEN; /* closed before it was made durable */
        else
            break;
        a->head = e->next;
        if (!a->head)
            a->tail = NULL;
        wal_store64(&a->head_lsn, a->head ? a->head->lsn : UINT64_MAX);
        pthread_mutex_unlock(&a->mu);
        CL_INVARIANT("A2", rc != 0 || e->lsn <= ready_lsn(w));
        if (rc == 0 && e->logged) { /* counted before the callback, which may read the statistics */
            wal_add64(&w->st.commits, 1);
            wal_add64(&w->st.async_commits, 1);
        }
        if (rc == 0 && e->times) { /* its wait, from the record of the advance that covered it */
            if (!w->policy->ack_written && (!have_cover || e->lsn > cover.lsn))
                have_cover = wal_find_batch(w, e->lsn, &cover);
            wal_split_by_batch(have_cover ? &cover : NULL, e->t0, cl_now_ns(), w->policy->ack_written, e->times);
        }
        call(w, e, rc);
        free(e);
        pthread_mutex_lock(&a->mu);
        a->done++;
        if (rc && !a->fail_seq) {
            a->fail_seq = a->done;
            a->fail_rc = rc;
        }
        if (__atomic_load_n(&a->waiters, __ATOMIC_RELAXED))
            pthread_cond_broadcast(&a->cv);
    }
    a->delivering = 0;
    if (__atomic_load_n(&a->waiters, __ATOMIC_RELAXED))
        pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

void wal_async_deliver(struct wal *w)
{
    struct wal_async *a = &w->async;
    uint64_t h = wal_load64(&a->head_lsn);
    if (h != UINT64_MAX && (wal_broken(w) || h <= ready_lsn(w))) {
        deliver(w, 0);
    } else if (__atomic_load_n(&a->waiters, __ATOMIC_RELAXED)) {
        /* nothing due, but cl_sync_wait may wait for the LSN (periodic) */
        pthread_mutex_lock(&a->mu);
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
    }
}

void wal_async_deliver_through(struct wal *w, uint64_t seq)
{
    struct wal_async *a = &w->async;
    wal_async_deliver(w);
    if (callback_depth)
        return; /* inside a callback (of this log or another): never wait for a deliverer */
    pthread_mutex_lock(&a->mu);
    __atomic_add_fetch(&a->waiters, 1, __ATOMIC_RELAXED);
    /* done counts returned callbacks in order (one deliverer), and the
     * deliverer broadcasts after each while someone waits */
    while (a->done < seq) {
        if (!a->delivering) {
            pthread_mutex_unlock(&a->mu);
            deliver(w, 0); /* the one delivering stopped before ours: due, it is ours to call */
            pthread_mutex_lock(&a->mu);
            if (a->done < seq && !a->delivering)
                break; /* not due after all (cannot happen: added due); never wait for nobody */
            continue;
        }
        pthread_cond_wait(&a->cv, &a->mu);
    }
    __atomic_sub_fetch(&a->waiters, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&a->mu);
}

void wal_async_finish(struct wal *w) { deliver(w, 1); }

int wal_make_durable_timed(struct wal *w, uint64_t lsn, struct wal_commit_times *out)
{
    uint64_t t0 = out ? cl_now_ns() : 0;
    int rc = wal_broken(w);
    if (rc == 0)
        rc = w->policy->commit(w, lsn);
    if (rc == 0 && out)
        wal_split_commit_time(w, lsn, t0, cl_now_ns(), !w->policy->durable, out);
    return rc;
}

int wal_make_durable(struct wal *w, uint64_t lsn) { return wal_make_durable_timed(w, lsn, NULL); }

void wal_commit_async(struct wal *w, uint64_t commit_lsn)
{
    if (wal_broken(w))
        return; /* the callback gets the error */
    if (w->policy->commit_async)
        w->policy->commit_async(w, commit_lsn);
    else
        (void)w->policy->commit(w, commit_lsn); /* an error broke the log: the callback reports it */
}

int wal_sync_wait(struct wal *w)
{
    struct wal_async *a = &w->async;
    uint64_t target, lsn;
    int rc = 0;

    if (wal_in_callback(w))
        return CL_EBUSY; /* it would wait for itself */
    pthread_mutex_lock(&a->mu);
    target = a->added;
    lsn = a->tail_lsn;
    pthread_mutex_unlock(&a->mu);
    if (!w->policy->durable) {
        /* a commit acknowledged before it is durable (periodic) is made
         * durable too; under none, written is all there is */
        pthread_mutex_lock(&w->mu);
        if (w->last_commit_lsn > lsn)
            lsn = w->last_commit_lsn;
        pthread_mutex_unlock(&w->mu);
    }
    /* Drive the log there as a commit would: durable policies make it
     * durable; none and periodic write it, and periodic's thread syncs it
     * within interval_ms and delivers. */
    if (lsn > ready_lsn(w) && !wal_broken(w))
        (void)wal_make_durable(w, lsn); /* an error: the callbacks report it */
    wal_async_deliver(w);

    pthread_mutex_lock(&a->mu);
    __atomic_add_fetch(&a->waiters, 1, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t h = wal_load64(&a->head_lsn);
        int broken = wal_broken(w);
        if (a->done >= target && (broken || ready_lsn(w) >= lsn))
            break;
        if (!a->delivering && h != UINT64_MAX && (broken || h <= ready_lsn(w))) {
            pthread_mutex_unlock(&a->mu);
            deliver(w, 0);
            pthread_mutex_lock(&a->mu);
            continue;
        }
        pthread_cond_wait(&a->cv, &a->mu);
    }
    __atomic_sub_fetch(&a->waiters, 1, __ATOMIC_RELAXED);
    if (a->fail_seq && a->fail_seq <= target)
        rc = a->fail_rc;
    else if (ready_lsn(w) < lsn)
        rc = wal_broken(w);
    pthread_mutex_unlock(&a->mu);
    return rc;
}
