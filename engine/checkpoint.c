/*
 * checkpoint.c -- checkpoints: the log made durable up to L, the tree's
 * snapshot at L written and its meta page switched (storage/store/store.h), and
 * the segments below L's retired; one at a time, from cl_checkpoint, from
 * cl_open and cl_close, and from the background thread a commit wakes
 * every checkpoint_bytes of log.  A failure breaks the handle (C5).
 * db_sync_log is a close's alternative to the last checkpoint (the option
 * no_final_checkpoint): the log made durable to its end and left there.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "commitlab.h"
#include "store.h"
#include "engine_internal.h"
#include "vfs.h"
#include "vfs_latency.h"
#include "wal.h"

#include "db.h"

/* ---- checkpoints ------------------------------------------------------- */

int db_checkpoint(struct cl_db *db)
{
    struct store_ckpt *ck = NULL;
    uint64_t lsn = 0, t0;
    int rc;

    pthread_mutex_lock(&db->ckpt_run);
    pthread_mutex_lock(&db->writer);
    t0 = cl_now_ns();
    rc = db_broken(db) ? CL_EBROKEN : 0;
    if (rc == 0) {
        lsn = wal_end_lsn(db->wal);
        rc = store_checkpoint_begin(db->store, lsn, wal_lsn_segno(lsn, db->segment_size), &ck);
    }
    __atomic_add_fetch(&db->pause_ns, cl_now_ns() - t0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&db->writer);
    if (rc)
        goto out;

    /* The log up to L is made durable before the snapshot that covers it. */
    rc = wal_flush(db->wal, lsn, 1);
    if (rc) {
        store_checkpoint_abandon(db->store, ck); /* nothing written; the handle breaks below */
        ck = NULL;
        goto out;
    }
    rc = store_checkpoint_finish(db->store, ck);
    ck = NULL;
    if (rc)
        goto out;
    __atomic_store_n(&db->last_ckpt_lsn, lsn, __ATOMIC_RELEASE);
    __atomic_add_fetch(&db->checkpoints, 1, __ATOMIC_RELAXED);
    rc = wal_retire_below(db->wal, wal_lsn_segno(lsn, db->segment_size));
out:
    if (rc)
        db_break(db, rc);
    pthread_mutex_unlock(&db->ckpt_run);
    return rc;
}

/* What a checkpoint does first, alone: the log up to its end durable.
 * The records after the last checkpoint stay in the log, for the next
 * open to recover. */
int db_sync_log(struct cl_db *db)
{
    uint64_t lsn;
    int rc;

    pthread_mutex_lock(&db->ckpt_run);
    pthread_mutex_lock(&db->writer);
    lsn = wal_end_lsn(db->wal);
    pthread_mutex_unlock(&db->writer);
    rc = db_broken(db) ? CL_EBROKEN : wal_flush(db->wal, lsn, 1);
    if (rc)
        db_break(db, rc);
    pthread_mutex_unlock(&db->ckpt_run);
    return rc;
}

static void *ckpt_main(void *arg)
{
    struct cl_db *db = arg;
    pthread_mutex_lock(&db->ckpt_mu);
    for (;;) {
        while (!db->ckpt_requested && !db->ckpt_stop)
            pthread_cond_wait(&db->ckpt_cv, &db->ckpt_mu);
        if (db->ckpt_stop)
            break;
        pthread_mutex_unlock(&db->ckpt_mu);
        if (!db_broken(db))
            db_checkpoint(db);
        pthread_mutex_lock(&db->ckpt_mu);
        db->ckpt_requested = 0;
    }
    pthread_mutex_unlock(&db->ckpt_mu);
    return NULL;
}

void db_maybe_request_checkpoint(struct cl_db *db, uint64_t lsn)
{
    uint64_t last = __atomic_load_n(&db->last_ckpt_lsn, __ATOMIC_ACQUIRE);
    if (!db->opt.checkpoint_bytes || !db->ckpt_thread_started || lsn - last < db->opt.checkpoint_bytes)
        return;
    pthread_mutex_lock(&db->ckpt_mu);
    if (!db->ckpt_requested) {
        db->ckpt_requested = 1;
        pthread_cond_signal(&db->ckpt_cv);
    }
    pthread_mutex_unlock(&db->ckpt_mu);
}

int cl_checkpoint(struct cl_db *db)
{
    if (!db)
        return CL_EINVAL;
    if (db_forked(db))
        return CL_EFORK;
    if (wal_in_callback(db->wal))
        return CL_EBUSY; /* a callback of this database's commits */
    if (db_broken(db))
        return CL_EBROKEN;
    if (db_held_here(db))
        return CL_EBUSY; /* this thread's open write transaction holds the writer lock */
    return db_checkpoint(db);
}

void db_ckpt_stop(struct cl_db *db)
{
    if (!db->ckpt_thread_started)
        return;
    pthread_mutex_lock(&db->ckpt_mu);
    db->ckpt_stop = 1;
    pthread_cond_signal(&db->ckpt_cv);
    pthread_mutex_unlock(&db->ckpt_mu);
    pthread_join(db->ckpt_thread, NULL);
    db->ckpt_thread_started = 0;
}


int db_ckpt_start(struct cl_db *db)
{
    int rc = pthread_create(&db->ckpt_thread, NULL, ckpt_main, db);
    if (rc)
        return -rc; /* no background checkpoints would mean an ever-growing log */
    db->ckpt_thread_started = 1;
    return 0;
}
