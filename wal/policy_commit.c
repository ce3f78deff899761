/*
 * policy_commit.c -- the commit sync policy: each committer writes and
 * syncs for itself, one at a time (contract next to wal_policy_commit in
 * wal.h).  The write takes everything buffered, so a committer queued
 * behind a sync often finds its record already durable and returns
 * without a sync of its own.
 */
#include "wal_internal.h"

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
    .commit = commit_commit,
};
