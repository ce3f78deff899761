/*
 * stats.c -- what a handle reports of itself (cl_stats): its own commits
 * and checkpoints, its log's and its page store's counters.
 */
#include <string.h>

#include "commitlab.h"
#include "db.h"
#include "engine_internal.h"
#include "store.h"
#include "wal.h"

/* ---- stats --------------------------------------------------------------- */

void cl_stats_reset_max(struct cl_db *db)
{
    if (!db || db_forked(db))
        return;
    __atomic_store_n(&db->max_switch_commit_ns, 0, __ATOMIC_RELAXED);
    wal_reset_max(db->wal);
}

int cl_stats(struct cl_db *db, struct cl_stats *out) { return cl_stats_sized(db, out, CL_STATS_SIZE_V0); }

int cl_stats_sized(struct cl_db *db, struct cl_stats *caller, size_t size)
{
    struct wal_stats ws;
    struct store_stats ss;
    struct cl_stats all, *out = &all;

    if (!db || !caller)
        return CL_EINVAL;
    if (db_forked(db))
        return CL_EFORK;
    memset(out, 0, sizeof *out);
    wal_get_stats(db->wal, &ws);
    store_get_stats(db->store, &ss);
    out->commits = __atomic_load_n(&db->commits, __ATOMIC_RELAXED) + ws.async_commits;
    out->syncs = ws.syncs;
    out->wal_bytes = ws.bytes;
    out->wal_writes = ws.writes;
    /* this database's own counts: the file layer's are per process */
    out->data_writes = ss.page_writes + ss.meta_writes;
    out->data_bytes = out->data_writes * STORE_PAGE_SIZE;
    out->checkpoints = __atomic_load_n(&db->checkpoints, __ATOMIC_RELAXED);
    out->checkpoint_pause_us = __atomic_load_n(&db->pause_ns, __ATOMIC_RELAXED) / 1000;
    out->max_commits_per_sync = ws.max_commits_per_sync;
    memcpy(out->batch_hist, ws.batch_hist, sizeof out->batch_hist);
    out->commits_per_sync = ws.syncs ? (double)ws.commits / (double)ws.syncs : 0.0;
    out->durable_lsn = wal_durable_lsn(db->wal);
    out->end_lsn = wal_end_lsn(db->wal);
    out->pages = ss.pages;
    out->cache_hits = ss.hits;
    out->cache_misses = ss.misses;
    out->cache_evictions = ss.evictions;
    out->segment_switches = ws.segment_switches;
    out->segments_created = ws.segments_created;
    out->segments_recycled = ws.segments_recycled;
    out->segments_reused = ws.segments_reused;
    out->segments_removed = ws.segments_removed;
    out->segment_waits = ws.segment_waits;
    out->segment_wait_us = ws.segment_wait_ns / 1000;
    out->max_switch_commit_us = __atomic_load_n(&db->max_switch_commit_ns, __ATOMIC_RELAXED) / 1000;
    out->prealloc_error = ws.prealloc_error;
    out->broken = db_broken(db) != 0;
    out->segment_size = db->segment_size;
    memcpy(caller, &all, size < sizeof all ? size : sizeof all); /* a field beyond the caller's size: left alone */
    return 0;
}
