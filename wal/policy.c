/*
 * policy.c -- the sync policies that are built: none and commit.
 *
 * Each policy is a struct wal_policy table (its promise is documented next
 * to the table in wal.h).  wal_commit() calls policy->commit with the
 * transaction's commit LSN; the policy writes and syncs through
 * wal_write_locked/wal_sync_locked under io_mu, which keep the LSNs, the
 * statistics and the sticky broken state.
 *
 * A policy with a thread or a queue (periodic, group, uring) keeps its
 * state in w->policy_state, starts its thread in start() and joins it in
 * stop(), and makes its committers wait on w->durable_cond (with w->mu) for
 * wal_durable_lsn() >= commit_lsn or wal_broken() != 0.
 */
#include "wal_internal.h"

static int noop_start(struct wal *w)
{
    (void)w;
    return 0;
}

static void noop_stop(struct wal *w) { (void)w; }

/* none: hand the bytes to the OS page cache and return. */
static int none_commit(struct wal *w, uint64_t commit_lsn)
{
    int rc;
    pthread_mutex_lock(&w->io_mu);
    rc = wal_write_locked(w, commit_lsn);
    pthread_mutex_unlock(&w->io_mu);
    return rc;
}

const struct wal_policy wal_policy_none = {
    .name = "none",
    .durable = 0,
    .start = noop_start,
    .commit = none_commit,
    .stop = noop_stop,
};

/* commit: each committer writes and syncs for itself, one at a time.  The
 * write takes everything buffered, so a committer queued behind a sync often
 * finds its record already durable and returns without a sync of its own. */
static int commit_commit(struct wal *w, uint64_t commit_lsn)
{
    int rc = 0;
    if (wal_durable_lsn(w) >= commit_lsn)
        return 0;
    pthread_mutex_lock(&w->io_mu);
    if (w->durable_lsn < commit_lsn) {
        rc = wal_write_locked(w, commit_lsn);
        if (rc == 0)
            rc = wal_sync_locked(w);
    }
    pthread_mutex_unlock(&w->io_mu);
    return rc;
}

const struct wal_policy wal_policy_commit = {
    .name = "commit",
    .durable = 1,
    .start = noop_start,
    .commit = commit_commit,
    .stop = noop_stop,
};

const struct wal_policy *wal_policy_for(enum cl_sync_policy p)
{
    switch (p) {
    case CL_SYNC_NONE:
        return &wal_policy_none;
    case CL_SYNC_COMMIT:
        return &wal_policy_commit;
    case CL_SYNC_GROUP:
        return &wal_policy_group;
    case CL_SYNC_PERIODIC:
        return &wal_policy_periodic;
    case CL_SYNC_URING:
        return &wal_policy_uring;

    default:
        return NULL; /* periodic, group, uring: not built yet */
    }
}
