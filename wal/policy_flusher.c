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
 * durable LSN move without a sleep and a wake-up), then sleeping on
 * durable_cond.  The flusher, while something is requested and not
 * durable, writes everything buffered and syncs once; it sleeps only when
 * nothing is requested (after spinning spin_us as well), so while commits
 * keep coming it syncs back to back, and a batch is whatever arrived
 * during the previous sync.
 *
 * The wake-up is a broadcast on durable_cond: every sleeping committer
 * wakes and those not yet covered sleep again.  MySQL shards its waiters
 * over many events by LSN to avoid that; with one sync covering everything
 * buffered, nearly every sleeper is covered.
 *
 * Durable on return: as commit -- this transaction and every one before it
 * in log order.  A failed write or sync breaks the log (wal_set_broken
 * wakes every waiter) and the flusher stops: every waiting and later
 * commit fails, none is acknowledged.
 */
#include <stdlib.h>

#include "clock.h"
#include "wal_internal.h"

struct flusher {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work;       /* something was requested, or stop */
    uint64_t requested;        /* atomic, raised under mu: highest LSN asked for */
    int sleeping;              /* mu: the flusher waits on work */
    int stop;                  /* mu */
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Spins up to us microseconds until done(w, arg); returns whether it is. */
static int spin_until(struct wal *w, uint32_t us, int (*done)(struct wal *, uint64_t), uint64_t arg)
{
    if (!us)
        return done(w, arg);
    uint64_t until = cl_now_ns() + (uint64_t)us * 1000u;
    for (unsigned i = 0;; i++) {
        if (done(w, arg))
            return 1;
        if ((i & 63) == 63 && cl_now_ns() >= until)
            return 0;
        cpu_relax();
    }
}

static int covered(struct wal *w, uint64_t lsn) { return wal_durable_lsn(w) >= lsn || wal_broken(w); }

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

    for (;;) {
        int stop;
        spin_until(w, w->spin_us, work_waiting, 0);
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
        if (rc)
            break; /* broken: wal_set_broken woke the waiters */
    }
    return NULL;
}

static int flusher_start(struct wal *w)
{
    struct flusher *f = calloc(1, sizeof *f);
    if (!f)
        return CL_ENOMEM;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->work, NULL);
    w->policy_state = f;
    if (pthread_create(&f->thread, NULL, flusher_main, w) != 0) {
        pthread_cond_destroy(&f->work);
        pthread_mutex_destroy(&f->mu);
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
    pthread_cond_destroy(&f->work);
    pthread_mutex_destroy(&f->mu);
    free(f);
    w->policy_state = NULL;
}

static int flusher_commit(struct wal *w, uint64_t lsn)
{
    struct flusher *f = w->policy_state;

    if (covered(w, lsn))
        return wal_durable_lsn(w) >= lsn ? 0 : wal_broken(w);
    pthread_mutex_lock(&f->mu);
    if (f->requested < lsn)
        wal_store64(&f->requested, lsn);
    if (f->sleeping)
        pthread_cond_signal(&f->work);
    pthread_mutex_unlock(&f->mu);

    if (!spin_until(w, w->spin_us, covered, lsn)) {
        pthread_mutex_lock(&w->mu);
        while (!covered(w, lsn))
            pthread_cond_wait(&w->durable_cond, &w->mu);
        pthread_mutex_unlock(&w->mu);
    }
    return wal_durable_lsn(w) >= lsn ? 0 : wal_broken(w);
}

const struct wal_policy wal_policy_flusher = {
    .name = "flusher",
    .durable = 1,
    .start = flusher_start,
    .commit = flusher_commit,
    .stop = flusher_stop,
};
