/*
 * policy_none.c -- the none sync policy: hand the bytes to the OS page
 * cache and return (contract next to wal_policy_none in wal.h).  An
 * asynchronous commit is written the same way, and is due once written
 * (ack_written): its callback comes within cl_commit_async, from the
 * committer itself, or right after from a thread calling callbacks then.
 */
#include "wal_internal.h"

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
    .commit = none_commit,
    .ack_written = 1,
};
