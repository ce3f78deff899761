/*
 * policy_flusher.c -- a dedicated log flusher (MySQL 8.0's redo log
 * design: committers only append and wait; log_writer and log_flusher
 * threads write and fsync continuously; see
 * https://dev.mysql.com/blog-archive/mysql-8-0-new-lock-free-scalable-wal-design/).
 * One thread here both writes and syncs.
 *
 * A committer whose commit LSN is not durable raises the requested LSN,
 * wakes the flusher if it sleeps, and waits until durable_lsn passes its
 * LSN: spinning for spin_us first (a committer on another core sees the
 * durable LSN move without a sleep and a wake-up), then sleeping in an
 * LSN-ordered queue on its own wake word (waitq.c).  That is wait block;
 * wait spin spins on the durable LSN and never queues or sleeps; wait
 * adaptive spins wait_spin_us instead of spin_us, yields the processor a
 * few times, and then sleeps as block does.  The flusher,
 * while something is requested and not durable, writes everything
 * buffered and syncs once; it sleeps only when nothing is requested (after
 * spinning spin_us as well), so while commits keep coming it syncs back to
 * back, and a batch is whatever arrived during the previous sync.
 *
 * Per-LSN wake-ups: after a sync the flusher, having let go of io_mu, wakes
 * exactly the sleepers whose LSN the sync covered, in LSN order, and none
 * of those that arrived during it (they wait for the next one).  MySQL
 * 8.0 does the same with sharded events (log.flush_events, one chosen by
 * each committer's LSN), its log_flush_notifier signalling only those
 * that cover what became durable
 * (https://github.com/mysql/mysql-server/blob/8.0/storage/innobase/log/log0write.cc);
 * a broadcast on one condition variable woke every sleeper, and those not
 * covered went back to sleep after queueing on its mutex -- the log's own
 * mutex, which the appenders take.  A durable advance made by another
 * thread (a checkpoint's flush, a segment switch in an append) wakes the
 * covered sleepers too (the `advanced` hook).
 *
 * Asynchronous commits (wal.h): the committer raises the requested LSN and
 * returns; the flusher thread calls the callbacks after each sync.
 *
 * Durable on return: as commit -- this transaction and every one before it
 * in log order.  A failed write or sync breaks the log and the flusher
 * stops, waking every sleeper (and refusing new ones): every waiting and
 * later commit fails, none is acknowledged; every pending callback gets
 * the error.
 */
#include <stdlib.h>

#include "wal_internal.h"

struct flusher {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work;       /* something was requested, or stop */
    uint64_t requested;        /* atomic, raised under mu: highest LSN asked for */
    int sleeping;              /* mu: the flusher waits on work */
    int stop;                  /* mu */
    pthread_mutex_t wq_mu;     /* the sleepers' queue */
    struct wal_waitq q;        /* wq_mu: committers asleep, in LSN order */
    int exited;                /* atomic, set under wq_mu: the thread stopped; nobody would wake a
                                * new sleeper */
};

/* The flusher thread's own log: it wakes its sleepers after letting go of
 * io_mu, not from the hook. */
static __thread const struct wal *flusher_self;

/* Wakes the sleepers durable_lsn covers (every one once the log is broken
 * or the thread stopped). */
static void wake_covered(struct wal *w, struct flusher *f, int all)
{
    pthread_mutex_lock(&f->wq_mu);
    if (f->q.head) {
        uint64_t durable = wal_durable_lsn(w);
        int every = all || wal_broken(w) != 0;
        /* counted before the wake-ups, which a sleeper may outrun */
        if (!every && f->q.head->lsn <= durable && f->q.tail->lsn > durable)
            wal_add64(&w->st.partial_wakeups, 1); /* later sleepers left to the next sync */
        wal_waitq_wake(&f->q, durable, every, 0);
    }
    pthread_mutex_unlock(&f->wq_mu);
}

/* A durable advance or a break made by another thread (io_mu may be held). */
static void flusher_advanced(struct wal *w)
{
    struct flusher *f = w->policy_state;
    if (f && flusher_self != w)
        wake_covered(w, f, 0);
}

static int covered(struct wal *w, uint64_t lsn)
{
    return wal_durable_lsn(w) >= lsn || wal_broken(w);
}

/* covered, or the flusher stopped: nothing more will come (wait spin) */
static int covered_or_over(struct wal *w, uint64_t lsn)
{
    struct flusher *f = w->policy_state;
    return covered(w, lsn) || __atomic_load_n(&f->exited, __ATOMIC_ACQUIRE);
}

static int work_waiting(struct wal *w, uint64_t unused)
{
    struct flusher *f = w->policy_state;
    (void)unused;
    return wal_load64(&f->requested) > wal_durable_lsn(w) || __atomic_load_n(&f->stop, __ATOMIC_ACQUIRE);
}

static void *flusher_main(void *arg)
{
    struct wal *w = arg;
    struct flusher *f = w->policy_state;

    flusher_self = w;
    for (;;) {
        int stop;
        wal_spin_until(w, w->opt.flusher_spin_us, work_waiting, 0);
        pthread_mutex_lock(&f->mu);
        while (!f->stop && f->requested <= wal_durable_lsn(w)) {
            f->sleeping = 1;
            pthread_cond_wait(&f->work, &f->mu);
            f->sleeping = 0;
        }
        stop = f->stop && f->requested <= wal_durable_lsn(w);
        pthread_mutex_unlock(&f->mu);
        if (stop || wal_broken(w))
            break;
        pthread_mutex_lock(&w->io_mu);
        int rc = wal_write_locked(w, UINT64_MAX);
        if (rc == 0)
            rc = wal_sync_locked(w);
        pthread_mutex_unlock(&w->io_mu);
        wake_covered(w, f, 0);
        wal_async_deliver(w);
        if (rc)
            break; /* broken */
    }
    /* No sync will come from here: every sleeper wakes (and fails unless
     * covered), a later committer does not sleep, and the callbacks left
     * get the error (or, closing, come from wal_close). */
    pthread_mutex_lock(&f->wq_mu);
    __atomic_store_n(&f->exited, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&f->wq_mu);
    wake_covered(w, f, 1);
    wal_async_deliver(w);
    return NULL;
}

static int flusher_start(struct wal *w)
{
    struct flusher *f = calloc(1, sizeof *f);
    if (!f)
        return CL_ENOMEM;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->work, NULL);
    pthread_mutex_init(&f->wq_mu, NULL);
    w->policy_state = f;
    if (pthread_create(&f->thread, NULL, flusher_main, w) != 0) {
        pthread_cond_destroy(&f->work);
        pthread_mutex_destroy(&f->mu);
        pthread_mutex_destroy(&f->wq_mu);
        free(f);
        w->policy_state = NULL;
        return CL_ENOMEM;
    }
    return 0;
}

static void flusher_stop(struct wal *w)
{
    struct flusher *f = w->policy_state;
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    __atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
    pthread_cond_signal(&f->work);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    w->policy_state = NULL; /* the hook sees no flusher from here */
    pthread_cond_destroy(&f->work);
    pthread_mutex_destroy(&f->mu);
    pthread_mutex_destroy(&f->wq_mu);
    free(f);
}

/* 0 when lsn is durable, else the sticky error (CL_EBROKEN when the
 * flusher stopped without one: closing). */
static int outcome(struct wal *w, uint64_t lsn)
{
    int rc = wal_broken(w);
    return wal_durable_lsn(w) >= lsn ? 0 : rc ? rc : CL_EBROKEN;
}

/* Asks the flusher for lsn. */
static void request(struct flusher *f, uint64_t lsn)
{
    pthread_mutex_lock(&f->mu);
    if (f->requested < lsn)
        wal_store64(&f->requested, lsn);
    if (f->sleeping)
        pthread_cond_signal(&f->work);
    pthread_mutex_unlock(&f->mu);
}

static int flusher_commit(struct wal *w, uint64_t lsn)
{
    struct flusher *f = w->policy_state;
    struct wal_waiter me = {.lsn = lsn};
    int slept = 0;

    if (covered(w, lsn))
        return outcome(w, lsn);
    request(f, lsn);
    /* wait spin: on the durable LSN itself, never queued, never asleep;
     * block spins flusher_spin_us first, adaptive wait_spin_us and then
     * yields, before it sleeps */
    if (w->opt.wait == CL_WAIT_SPIN) {
        wal_spin_until(w, UINT32_MAX, covered_or_over, lsn);
        return outcome(w, lsn);
    }
    if (wal_spin_until(w, w->opt.wait == CL_WAIT_ADAPTIVE ? w->opt.wait_spin_us : w->opt.flusher_spin_us, covered,
                       lsn) ||
        (w->opt.wait == CL_WAIT_ADAPTIVE && wal_yield_until(w, covered, lsn)))
        return outcome(w, lsn);
    pthread_mutex_lock(&f->wq_mu);
    /* Checked under wq_mu: whoever makes lsn durable wakes the queue under
     * it afterwards, so a sleeper cannot miss its wake-up ((a) in waitq.c). */
    if (!covered(w, lsn) && !f->exited) {
        wal_waitq_add(&f->q, &me);
        me.wake = WAL_WAKE_NONE;
        slept = 1;
    }
    pthread_mutex_unlock(&f->wq_mu);
    if (slept) {
        wal_add64(&w->st.waiter_sleeps, 1);
        (void)wal_waiter_wait(w, &me, CL_WAIT_BLOCK, NULL);
        wal_add64(&w->st.waiter_wakeups, 1);
        if (!covered(w, lsn))
            wal_add64(&w->st.waiter_spurious, 1); /* woken, not covered: the flusher stopped */
    }
    return outcome(w, lsn);
}

/* An asynchronous commit: ask, and return; the flusher thread calls the
 * callback after the sync that covers it. */
static void flusher_commit_async(struct wal *w, uint64_t lsn)
{
    struct flusher *f = w->policy_state;
    if (!covered(w, lsn))
        request(f, lsn);
}

const struct wal_policy wal_policy_flusher = {
    .name = "flusher",
    .durable = 1,
    .start = flusher_start,
    .commit = flusher_commit,
    .stop = flusher_stop,
    .commit_async = flusher_commit_async,
    .advanced = flusher_advanced,
};
