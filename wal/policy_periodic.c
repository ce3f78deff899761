/*
 * policy_periodic.c -- commit returns after write(2); a background thread
 * makes the log durable every interval_ms (Redis' appendfsync everysec,
 * InnoDB's innodb_flush_log_at_trx_commit=2).
 *
 * The loss window: a commit acknowledged at time t is durable by
 * t + interval_ms + (the duration of one sync), unless the log breaks.  A
 * power failure loses at most the commits of that window, and what survives
 * is always a prefix of the commit order (the log is written in order and
 * a sync covers everything written before it).
 *
 * A failed background write or sync breaks the log (sticky): every later
 * commit fails with the error, and nothing is retried.
 *
 * Asynchronous commits (wal.h): the committer writes, as a commit does;
 * the callback comes from the background thread after the sync that made
 * the commit durable -- within the same window -- or with the error if
 * that sync failed.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "wal_internal.h"

struct periodic_state {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
};

static void *periodic_main(void *arg)
{
    struct wal *w = arg;
    struct periodic_state *ps = w->policy_state;
    struct timespec next;

    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&ps->mu);
    while (!ps->stop) {
        next.tv_nsec += (long)(w->opt.interval_ms % 1000u) * 1000000L;
        next.tv_sec += w->opt.interval_ms / 1000u + next.tv_nsec / 1000000000L;
        next.tv_nsec %= 1000000000L;
        while (!ps->stop && pthread_cond_timedwait(&ps->cv, &ps->mu, &next) != ETIMEDOUT)
            ;
        if (ps->stop)
            break;
        pthread_mutex_unlock(&ps->mu);
        if (!wal_broken(w)) {
            pthread_mutex_lock(&w->io_mu);
            if (wal_write_locked(w, UINT64_MAX) == 0)
                wal_sync_locked(w); /* a failure breaks the log; committers see it */
            pthread_mutex_unlock(&w->io_mu);
        }
        /* the asynchronous commits this sync made durable (or failed), and
         * cl_sync_wait's waiters */
        wal_async_deliver(w);
        pthread_mutex_lock(&ps->mu);
        /* After a long sync, start the next interval now rather than catching up. */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
            next = now;
    }
    pthread_mutex_unlock(&ps->mu);
    return NULL;
}

static int periodic_start(struct wal *w)
{
    struct periodic_state *ps = calloc(1, sizeof *ps);
    if (!ps)
        return CL_ENOMEM;
    pthread_mutex_init(&ps->mu, NULL);
    cl_cond_init(&ps->cv);
    w->policy_state = ps;
    if (pthread_create(&ps->thread, NULL, periodic_main, w) != 0) {
        pthread_cond_destroy(&ps->cv);
        pthread_mutex_destroy(&ps->mu);
        free(ps);
        w->policy_state = NULL;
        return -EAGAIN;
    }
    return 0;
}

static void periodic_stop(struct wal *w)
{
    struct periodic_state *ps = w->policy_state;
    if (!ps)
        return;
    pthread_mutex_lock(&ps->mu);
    ps->stop = 1;
    pthread_cond_signal(&ps->cv);
    pthread_mutex_unlock(&ps->mu);
    pthread_join(ps->thread, NULL);
    pthread_cond_destroy(&ps->cv);
    pthread_mutex_destroy(&ps->mu);
    free(ps);
    w->policy_state = NULL;
}

/* Write only: durability comes from the background thread. */
static int periodic_commit(struct wal *w, uint64_t lsn)
{
    int rc;
    pthread_mutex_lock(&w->io_mu);
    rc = wal_write_locked(w, lsn);
    pthread_mutex_unlock(&w->io_mu);
    return rc;
}

const struct wal_policy wal_policy_periodic = {
    .name = "periodic",
    .durable = 0,
    .start = periodic_start,
    .commit = periodic_commit,
    .stop = periodic_stop,
};
