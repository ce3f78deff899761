/*
 * driver_rocksdb.c -- the benchmark driver for RocksDB (optional peer,
 * built when librocksdb-dev is present), through RocksDB's C API.
 *
 * kv: a client transaction is a WriteBatchWithIndex (reads see the batch's
 * own writes) written with one DB::Write; RocksDB's WriteThread batches
 * concurrent writers behind a leader (group commit is how RocksDB always
 * commits).  tpcb reads before it writes, so it runs on a TransactionDB
 * (pessimistic: GetForUpdate locks each row it reads until commit), which
 * serialises conflicting transactions as the other engines do; a lock
 * timeout or a busy commit aborts the transaction and the runner retries
 * it.  How the knobs map is rocks_accepts (--list-engines prints it):
 * --sync commit/group = WriteOptions.sync=true; --sync none = sync=false
 * (the WAL is written, never synced by the write); --sync periodic =
 * sync=false plus a thread calling FlushWAL(sync=true) every --interval
 * ms; --sync uring and flusher are n/a (RocksDB has neither).
 * --sync-method fsync = use_fsync; --segments recycle =
 * recycle_log_file_num=--recycle-max (default 4); --cache = block cache
 * capacity.
 * Counters come from RocksDB's statistics: WAL syncs and bytes, flush and
 * compaction bytes, memtable flushes (as "checkpoints") and write-stall
 * time (as their pauses).
 *
 * --rocksdb-write picks RocksDB's write path, so that the commit-path
 * designs meet RocksDB at its best and not only at its defaults:
 *   default       one write queue: the group's leader writes the WAL and
 *                 then the memtable for the whole group (sync per --sync).
 *   pipelined     enable_pipelined_write: the WAL and the memtable have
 *                 separate queues, so the next group writes the WAL while
 *                 this one fills the memtable
 *                 (https://github.com/facebook/rocksdb/wiki/Pipelined-Write).
 *   unordered     unordered_write: writers fill the memtable concurrently,
 *                 and a snapshot no longer waits for earlier writes to land
 *                 (https://github.com/facebook/rocksdb/wiki/Unordered-Write).
 *                 It needs allow_concurrent_memtable_write (RocksDB's
 *                 default, left alone here); RocksDB refuses it with
 *                 enable_pipelined_write (one mode at a time here) and on a
 *                 TransactionDB under its default WRITE_COMMITTED policy
 *                 ("WRITE_COMMITTED is incompatible with unordered_writes"),
 *                 the only policy the C API opens, so tpcb is n/a.  kv takes
 *                 no snapshots, so the relaxed snapshots cost it nothing.
 *   manual-flush  manual_wal_flush: a write leaves its WAL record in
 *                 RocksDB's buffer, and the application decides when the
 *                 buffer goes to the file
 *                 (https://github.com/facebook/rocksdb/wiki/WAL-Performance).
 *                 Each commit writes with sync=false; for --sync commit or
 *                 group the committing client then calls FlushWAL(sync=true)
 *                 itself -- the explicit sync, counted by RocksDB's
 *                 rocksdb.wal.synced like a synced write.  The commit is
 *                 visible to other clients between its write and its
 *                 FlushWAL, as with early lock release.  For --sync
 *                 periodic the syncer thread's FlushWAL(sync=true) covers it.
 *                 For --sync none nothing flushes: the WAL reaches the file
 *                 only when RocksDB's buffer fills
 *                 (writable_file_max_buffer_size, 1 MiB by default) or the
 *                 memtable is switched, so --sync none here loses the last
 *                 commits even when only the process dies, where the other
 *                 write paths' --sync none loses them only with the machine.
 *                 That is what manual_wal_flush trades for its speed, and
 *                 what an application gets that never calls FlushWAL.
 * Two write queues (two_write_queues) are not reachable through RocksDB
 * 7.8's C API, which has no setter for them, so they are not offered.
 *
 * Written against the engine plugin ABI (commitlab_engine.h) alone.
 */
#include "commitlab_engine.h"

#ifdef CL_HAVE_ROCKSDB
#include <pthread.h>
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --rocksdb-write */
enum rocks_write { RW_DEFAULT, RW_PIPELINED, RW_UNORDERED, RW_MANUAL_FLUSH };

struct rdb {
    rocksdb_t *db;                 /* kv */
    rocksdb_transactiondb_t *tdb;  /* tpcb */
    rocksdb_transactiondb_options_t *tdbo;
    rocksdb_transaction_options_t *to;
    rocksdb_options_t *opt;
    rocksdb_writeoptions_t *wo;
    rocksdb_readoptions_t *ro;
    rocksdb_cache_t *cache;
    rocksdb_block_based_table_options_t *bbto;
    pthread_t syncer;
    int syncer_running;
    volatile int stop;
    unsigned interval_ms;
    int flush_per_commit;          /* manual-flush, durable: FlushWAL(sync) after each commit */
};

/* A client's connection: a batch (kv) or a transaction (tpcb). */
struct rconn {
    rocksdb_writebatch_wi_t *wb;
    rocksdb_transaction_t *txn;
    int rdonly;
};

static int txn_mode(const struct cl_engine_config *cfg) { return cl_engine_is(cfg, "workload", "tpcb"); }

static enum rocks_write write_mode(const struct cl_engine_config *cfg)
{
    const char *w = cl_engine_str(cfg, "rocksdb-write");
    return strcmp(w, "pipelined") == 0      ? RW_PIPELINED
           : strcmp(w, "unordered") == 0    ? RW_UNORDERED
           : strcmp(w, "manual-flush") == 0 ? RW_MANUAL_FLUSH
                                            : RW_DEFAULT;
}

/* What a commit survives is said of the default write path; with
 * --rocksdb-write manual-flush and --sync none, it is kept in RocksDB's
 * buffer and a kill loses it too (the header above). */
static const struct cl_engine_accept rocks_accepts[] = {
    {"sync", "none", "WriteOptions.sync=false (the WAL is written, never synced by the write)", NULL,
     CL_ENGINE_SURVIVES_KILL},
    {"sync", "periodic", "WriteOptions.sync=false, and a thread calling FlushWAL(sync=true) every --interval ms",
     NULL, CL_ENGINE_SURVIVES_KILL},
    {"sync", "commit", "WriteOptions.sync=true", NULL, CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER},
    {"sync", "group", "WriteOptions.sync=true: RocksDB always group-commits, its write thread's leader writes "
                      "and syncs the WAL for the writers queued behind it", NULL,
     CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER},
    {"sync", "uring", NULL, "RocksDB does not write its WAL through io_uring"},
    {"sync", "flusher", NULL, "RocksDB has no dedicated WAL flusher thread: the leader of a write group syncs "
                              "for it (--sync group)"},
    {"sync", NULL, NULL, "no RocksDB write option is this policy"},
    {"sync-method", "fdatasync", "fdatasync (RocksDB's default)", NULL},
    {"sync-method", "fsync", "use_fsync=1", NULL},
    {"sync-method", NULL, NULL, "RocksDB syncs its WAL with fdatasync or fsync (use_fsync) only"},
    {"segments", "fresh", "recycle_log_file_num=0 (RocksDB's default)", NULL},
    {"segments", "recycle", "recycle_log_file_num=--recycle-max", NULL},
    {"recycle-max", NULL, "recycle_log_file_num, with --segments recycle", NULL},
    {"checkpoint-bytes", NULL, "write_buffer_size (a memtable flush starts a new WAL file)", NULL},
    {"interval", NULL, "--sync periodic: the period of the FlushWAL thread", NULL},
    {"cache", NULL, "the block cache's capacity", NULL},
    {"sync-latency", NULL, "emulated: paid after each of its fsync and fdatasync calls", NULL},
    {"rocksdb-write", "default", "one write queue: the group's leader writes the WAL, then the memtable, for the "
                                 "group (WriteOptions.sync per --sync)", NULL},
    {"rocksdb-write", "pipelined", "enable_pipelined_write=1", NULL},
    {"rocksdb-write", "unordered", "unordered_write=1 (kv only: RocksDB refuses it on a WRITE_COMMITTED "
                                   "TransactionDB, so tpcb is n/a)", NULL},
    {"rocksdb-write", "manual-flush", "manual_wal_flush=1: each commit writes with sync=false, then "
                                      "FlushWAL(sync=true) for a durable --sync (none: never flushed; periodic: "
                                      "the thread)", NULL},
    {NULL, NULL, NULL, NULL},
};

/* What the rows cannot say: a combination RocksDB would refuse at open,
 * said before the run rather than as its error. */
static int rocks_check(const struct cl_engine_config *cfg, char *why, size_t len)
{
    if (write_mode(cfg) == RW_UNORDERED && txn_mode(cfg)) {
        snprintf(why, len, "--rocksdb-write unordered with --workload tpcb: RocksDB refuses unordered_write on a "
                           "WRITE_COMMITTED TransactionDB, the only write policy its C API opens");
        return CL_ENGINE_NA;
    }
    return 0;
}

static void rocks_describe(const struct cl_engine_config *cfg, char *buf, size_t len)
{
    static const char *const write_option[] = {
        [RW_DEFAULT] = "", [RW_PIPELINED] = " enable_pipelined_write=1", [RW_UNORDERED] = " unordered_write=1",
        [RW_MANUAL_FLUSH] = " manual_wal_flush=1"};
    enum rocks_write w = write_mode(cfg);
    int periodic = cl_engine_is(cfg, "sync", "periodic");
    int durable = cfg->sync_durable;
    int n = snprintf(buf, len, "sync=%s%s%s", durable && w != RW_MANUAL_FLUSH ? "true" : "false", write_option[w],
                     periodic                              ? " +FlushWAL(sync) every interval"
                     : w == RW_MANUAL_FLUSH && durable     ? " +FlushWAL(sync) after each commit"
                     : w == RW_MANUAL_FLUSH                ? " (never FlushWAL: the WAL waits in RocksDB's buffer)"
                                                           : "");
    if (n > 0 && (size_t)n < len && cl_engine_is(cfg, "sync-method", "fsync"))
        n += snprintf(buf + n, len - (size_t)n, " use_fsync=1");
    if (n > 0 && (size_t)n < len && cl_engine_is(cfg, "segments", "recycle"))
        n += snprintf(buf + n, len - (size_t)n, " recycle_log_file_num=%u",
                      (unsigned)cl_engine_u64(cfg, "recycle-max"));
    if (n > 0 && (size_t)n < len && cl_engine_given(cfg, "checkpoint-bytes"))
        n += snprintf(buf + n, len - (size_t)n, " write_buffer_size=%llu",
                      (unsigned long long)cl_engine_u64(cfg, "checkpoint-bytes"));
    if (n > 0 && (size_t)n < len && txn_mode(cfg))
        snprintf(buf + n, len - (size_t)n, " TransactionDB(GetForUpdate)");
}

static void *syncer_main(void *arg)
{
    struct rdb *r = arg;
    while (!r->stop) {
        struct timespec ts = {r->interval_ms / 1000, (long)(r->interval_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        char *err = NULL;
        if (r->tdb)
            rocksdb_transactiondb_flush_wal(r->tdb, 1, &err);
        else
            rocksdb_flush_wal(r->db, 1, &err);
        if (err) {
            fprintf(stderr, "rocksdb FlushWAL: %s\n", err);
            rocksdb_free(err);
        }
    }
    return NULL;
}

static void rocks_free(struct rdb *r)
{
    if (r->syncer_running) {
        r->stop = 1;
        pthread_join(r->syncer, NULL);
    }
    if (r->db)
        rocksdb_close(r->db);
    if (r->tdb)
        rocksdb_transactiondb_close(r->tdb);
    if (r->tdbo)
        rocksdb_transactiondb_options_destroy(r->tdbo);
    if (r->to)
        rocksdb_transaction_options_destroy(r->to);
    if (r->wo)
        rocksdb_writeoptions_destroy(r->wo);
    if (r->ro)
        rocksdb_readoptions_destroy(r->ro);
    if (r->opt)
        rocksdb_options_destroy(r->opt);
    if (r->bbto)
        rocksdb_block_based_options_destroy(r->bbto);
    if (r->cache)
        rocksdb_cache_destroy(r->cache);
    free(r);
}

static int rocks_open(struct cl_engine_db *db)
{
    const struct cl_engine_config *cfg = db->cfg;
    struct rdb *r = calloc(1, sizeof *r);
    char *err = NULL;

    if (!r) {
        CL_ENGINE_ERRF(db->err, "out of memory");
        return CL_ENGINE_ERR;
    }
    r->opt = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(r->opt, 1);
    rocksdb_options_increase_parallelism(r->opt, (int)sysconf(_SC_NPROCESSORS_ONLN));
    rocksdb_options_enable_statistics(r->opt);
    if (cl_engine_is(cfg, "sync-method", "fsync"))
        rocksdb_options_set_use_fsync(r->opt, 1);
    if (cl_engine_is(cfg, "segments", "recycle"))
        rocksdb_options_set_recycle_log_file_num(r->opt, (size_t)cl_engine_u64(cfg, "recycle-max"));
    /* A memtable flush is RocksDB's checkpoint: it starts a new WAL file
     * and lets the old one go (deleted, or recycled). */
    if (cl_engine_given(cfg, "checkpoint-bytes")) {
        uint64_t wb = cl_engine_u64(cfg, "checkpoint-bytes");
        rocksdb_options_set_write_buffer_size(r->opt, (size_t)(wb ? wb : 64u << 20));
    }
    if (cl_engine_given(cfg, "cache")) {
        r->cache = rocksdb_cache_create_lru((size_t)cl_engine_u64(cfg, "cache"));
        r->bbto = rocksdb_block_based_options_create();
        rocksdb_block_based_options_set_block_cache(r->bbto, r->cache);
        rocksdb_options_set_block_based_table_factory(r->opt, r->bbto);
    }
    switch (write_mode(cfg)) {
    case RW_DEFAULT:
        break;
    case RW_PIPELINED:
        rocksdb_options_set_enable_pipelined_write(r->opt, 1);
        break;
    case RW_UNORDERED:
        rocksdb_options_set_unordered_write(r->opt, 1);
        break;
    case RW_MANUAL_FLUSH:
        rocksdb_options_set_manual_wal_flush(r->opt, 1);
        r->flush_per_commit = cfg->sync_durable;
        break;
    }
    r->wo = rocksdb_writeoptions_create();
    /* manual-flush syncs with its own FlushWAL after the write instead */
    rocksdb_writeoptions_set_sync(r->wo, cfg->sync_durable && !r->flush_per_commit ? 1 : 0);
    r->ro = rocksdb_readoptions_create();
    if (txn_mode(cfg)) {
        r->tdbo = rocksdb_transactiondb_options_create();
        r->to = rocksdb_transaction_options_create();
        r->tdb = rocksdb_transactiondb_open(r->opt, r->tdbo, db->path, &err);
    } else {
        r->db = rocksdb_open(r->opt, db->path, &err);
    }
    if (err) {
        CL_ENGINE_ERRF(db->err, "rocksdb_open %.120s: %.120s", db->path, err);
        rocksdb_free(err);
        r->db = NULL;
        r->tdb = NULL;
        rocks_free(r);
        return CL_ENGINE_ERR;
    }
    if (cl_engine_is(cfg, "sync", "periodic")) {
        r->interval_ms = (unsigned)cl_engine_u64(cfg, "interval");
        r->interval_ms = r->interval_ms ? r->interval_ms : 1;
        if (pthread_create(&r->syncer, NULL, syncer_main, r) == 0)
            r->syncer_running = 1;
    }
    db->impl = r;
    return CL_ENGINE_OK;
}

static void rocks_close(struct cl_engine_db *db)
{
    if (db->impl)
        rocks_free(db->impl);
    db->impl = NULL;
}

static int rocks_conn_open(struct cl_engine_conn *c)
{
    struct rconn *rc = calloc(1, sizeof *rc);
    if (!rc)
        return CL_ENGINE_ERR;
    if (!txn_mode(c->db->cfg) && !(rc->wb = rocksdb_writebatch_wi_create(0, 1))) {
        free(rc);
        return CL_ENGINE_ERR;
    }
    c->impl = rc;
    return CL_ENGINE_OK;
}

static void rocks_conn_close(struct cl_engine_conn *c)
{
    struct rconn *rc = c->impl;
    if (!rc)
        return;
    if (rc->wb)
        rocksdb_writebatch_wi_destroy(rc->wb);
    if (rc->txn)
        rocksdb_transaction_destroy(rc->txn);
    free(rc);
    c->impl = NULL;
}

static int rocks_begin(struct cl_engine_conn *c, int rdonly)
{
    struct rconn *rc = c->impl;
    struct rdb *r = c->db->impl;
    rc->rdonly = rdonly;
    if (rc->wb) {
        rocksdb_writebatch_wi_clear(rc->wb);
        return CL_ENGINE_OK;
    }
    if (rdonly)
        return CL_ENGINE_OK; /* reads go to the TransactionDB directly */
    rc->txn = rocksdb_transaction_begin(r->tdb, r->wo, r->to, rc->txn);
    return rc->txn ? CL_ENGINE_OK : CL_ENGINE_ERR;
}

/* A RocksDB error: a lock timeout, a deadlock or a busy commit aborts the
 * transaction (CL_ENGINE_RETRY); anything else is a failure. */
static int rocks_err(struct cl_engine_conn *c, const char *what, char *err)
{
    int retry = strstr(err, "Busy") || strstr(err, "TimedOut") || strstr(err, "Timeout") ||
                strstr(err, "Deadlock") || strstr(err, "TryAgain");
    CL_ENGINE_ERRF(c->err, "rocksdb %s: %s", what, err);
    rocksdb_free(err);
    if (retry) {
        struct rconn *rc = c->impl;
        if (rc->txn) {
            char *e2 = NULL;
            rocksdb_transaction_rollback(rc->txn, &e2);
            rocksdb_free(e2);
        }
        return CL_ENGINE_RETRY;
    }
    return CL_ENGINE_ERR;
}

static int rocks_put(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    struct rconn *rc = c->impl;
    char *err = NULL;
    if (rc->wb) {
        rocksdb_writebatch_wi_put(rc->wb, k, kl, v, vl);
        return CL_ENGINE_OK;
    }
    rocksdb_transaction_put(rc->txn, k, kl, v, vl, &err);
    return err ? rocks_err(c, "put", err) : CL_ENGINE_OK;
}

static int rocks_get(struct cl_engine_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    struct rconn *rc = c->impl;
    struct rdb *r = c->db->impl;
    char *err = NULL;
    size_t len = 0;
    char *v;
    if (rc->wb)
        v = rocksdb_writebatch_wi_get_from_batch_and_db(rc->wb, r->db, r->ro, k, kl, &len, &err);
    else if (rc->rdonly)
        v = rocksdb_transactiondb_get(r->tdb, r->ro, k, kl, &len, &err);
    else /* locks the row until commit: what it read stays as read */
        v = rocksdb_transaction_get_for_update(rc->txn, r->ro, k, kl, &len, 1, &err);
    if (err)
        return rocks_err(c, "get", err);
    if (!v)
        return CL_ENGINE_NOTFOUND;
    memcpy(buf, v, len < cap ? len : cap);
    *vl = len;
    rocksdb_free(v);
    return CL_ENGINE_OK;
}

/* manual-flush: the written commit's WAL record goes from RocksDB's buffer
 * to the file and is synced before the commit returns.  A failure here is
 * not a conflict: the transaction is in, only not durable. */
static int flush_wal_sync(struct cl_engine_conn *c)
{
    struct rdb *r = c->db->impl;
    char *err = NULL;
    if (r->tdb)
        rocksdb_transactiondb_flush_wal(r->tdb, 1, &err);
    else
        rocksdb_flush_wal(r->db, 1, &err);
    if (!err)
        return CL_ENGINE_OK;
    CL_ENGINE_ERRF(c->err, "rocksdb FlushWAL: %s", err);
    rocksdb_free(err);
    return CL_ENGINE_ERR;
}

static int rocks_commit(struct cl_engine_conn *c)
{
    struct rconn *rc = c->impl;
    struct rdb *r = c->db->impl;
    char *err = NULL;
    if (rc->wb) {
        if (rocksdb_writebatch_wi_count(rc->wb) == 0)
            return CL_ENGINE_OK;
        rocksdb_write_writebatch_wi(r->db, r->wo, rc->wb, &err);
        rocksdb_writebatch_wi_clear(rc->wb);
    } else {
        if (rc->rdonly)
            return CL_ENGINE_OK;
        rocksdb_transaction_commit(rc->txn, &err);
    }
    if (err)
        return rocks_err(c, rc->wb ? "write" : "commit", err);
    return r->flush_per_commit ? flush_wal_sync(c) : CL_ENGINE_OK;
}

static int rocks_del(struct cl_engine_conn *c, const void *k, size_t kl)
{
    struct rconn *rc = c->impl;
    char *err = NULL;
    if (rc->wb) {
        rocksdb_writebatch_wi_delete(rc->wb, k, kl);
        return CL_ENGINE_OK;
    }
    rocksdb_transaction_delete(rc->txn, k, kl, &err);
    return err ? rocks_err(c, "delete", err) : CL_ENGINE_OK;
}

static void rocks_abort(struct cl_engine_conn *c)
{
    struct rconn *rc = c->impl;
    if (rc->wb) {
        rocksdb_writebatch_wi_clear(rc->wb);
    } else if (rc->txn && !rc->rdonly) {
        char *err = NULL;
        rocksdb_transaction_rollback(rc->txn, &err);
        rocksdb_free(err);
    }
}

/* "rocksdb.wal.synced COUNT : 12" or, for a histogram,
 * "rocksdb.db.flush.micros P50 : ... COUNT : 3 SUM : 1234". */
static int64_t stat_field(const char *s, const char *name, const char *field)
{
    size_t nl = strlen(name);
    for (const char *p = s; (p = strstr(p, name)) != NULL; p += nl) {
        if ((p != s && p[-1] != '\n') || p[nl] != ' ')
            continue;
        const char *eol = strchr(p, '\n');
        const char *f = strstr(p + nl, field);
        if (!f || (eol && f > eol))
            return -1;
        return strtoll(f + strlen(field), NULL, 10);
    }
    return -1;
}

static void rocks_stats(struct cl_engine_db *db, struct cl_engine_stats *st)
{
    struct rdb *r = db->impl;
    char *s = rocksdb_options_statistics_get_string(r->opt);
    if (!s)
        return;
    st->syncs = stat_field(s, "rocksdb.wal.synced", "COUNT : ");
    st->log_bytes = stat_field(s, "rocksdb.wal.bytes", "COUNT : ");
    int64_t fb = stat_field(s, "rocksdb.flush.write.bytes", "COUNT : ");
    int64_t cb = stat_field(s, "rocksdb.compact.write.bytes", "COUNT : ");
    if (fb >= 0 && cb >= 0)
        st->data_bytes = fb + cb;
    st->checkpoints = stat_field(s, "rocksdb.db.flush.micros", "COUNT : ");
    st->checkpoint_pause_us = stat_field(s, "rocksdb.stall.micros", "COUNT : ");
    st->writes_by_self = stat_field(s, "rocksdb.write.self", "COUNT : ");
    st->writes_by_leader = stat_field(s, "rocksdb.write.other", "COUNT : ");
    rocksdb_free(s);
}

static const char *rocks_version(void)
{
#ifdef CL_ROCKSDB_VERSION
    return CL_ROCKSDB_VERSION;
#else
    return NULL;
#endif
}

const struct cl_engine_plugin bench_plugin_rocksdb = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "rocksdb",
    .flags = CL_ENGINE_RMW, /* tpcb on a TransactionDB, GetForUpdate */
    .accepts = rocks_accepts,
    .no_why = "no RocksDB option maps to it",
    .notes = "tpcb runs on a TransactionDB (GetForUpdate), aborted transactions retried;\n"
             "two write queues: not reachable through RocksDB 7.8's C API (no two_write_queues setter);\n"
             "counters from RocksDB statistics (WAL syncs and bytes, flushes, write stalls)",
    .check = rocks_check,
    .describe = rocks_describe,
    .open = rocks_open,
    .close = rocks_close,
    .conn_open = rocks_conn_open,
    .conn_close = rocks_conn_close,
    .begin = rocks_begin,
    .put = rocks_put,
    .get = rocks_get,
    .del = rocks_del,
    .commit = rocks_commit,
    .abort = rocks_abort,
    .stats = rocks_stats,
    .version = rocks_version,
};

#else /* !CL_HAVE_ROCKSDB */

const struct cl_engine_plugin bench_plugin_rocksdb = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "rocksdb",
    .notes = "not built: install librocksdb-dev and rebuild",
};

#endif
