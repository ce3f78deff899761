/*
 * driver_wiredtiger.c -- the benchmark driver for WiredTiger, MongoDB's
 * storage engine (optional peer, built when libwiredtiger-dev is present),
 * through its C API (https://source.wiredtiger.com/3.2.1/).
 *
 * One connection (wiredtiger_open) for all clients, one WT_SESSION per
 * client, and one table per table of the workloads: a key's first byte is
 * the prefix the workloads name their tables by (k: kv; a, t, b, h:
 * tpcb's accounts, tellers, branches and history), and any other key goes
 * to table:other.  Keys and values are raw bytes (key_format=u,
 * value_format=u); a put is WT_CURSOR::insert with overwrite (an upsert).
 * A client transaction is begin_transaction(isolation=snapshot) ...
 * commit_transaction: under snapshot isolation a write to a row another
 * transaction changed since this one's snapshot fails with WT_ROLLBACK,
 * so tpcb's read-modify-write transactions lose no update; a WT_ROLLBACK
 * is CL_ENGINE_RETRY, and the runner runs the transaction again.
 *
 * The commit path is WiredTiger's log: each commit's record is copied into
 * a slot of the in-memory log buffer that concurrent commits join; the
 * slot is closed and written as one write, and a sync covers every slot
 * written before it (group commit, always on, no setting of its own:
 * https://source.wiredtiger.com/3.2.1/tune_durability.html).  A commit
 * that waits for its write closes its slot, so how many records a slot
 * holds depends on how many joined before that; the counters below show
 * it.  How the knobs map is wt_accepts (--list-engines prints it):
 *   --sync commit, group  transaction_sync=(enabled=true,method=fsync):
 *                         the commit returns once its slot is written and
 *                         synced (WiredTiger's file sync is fdatasync on
 *                         Linux); with --sync-method dsync, method=dsync
 *                         (the log opened O_DSYNC).
 *   --sync none           transaction_sync=(enabled=true,method=none): the
 *                         commit returns once its slot is written to the
 *                         file, never synced by a commit.  Not
 *                         transaction_sync=(enabled=false): with it a
 *                         commit may return while its record is still in
 *                         WiredTiger's buffer, lost with the process.
 *   --sync periodic       method=none as for none, and a thread calling
 *                         WT_SESSION::log_flush(sync=on) every --interval
 *                         ms (WiredTiger 3.2 has no periodic log sync of
 *                         its own; MongoDB's journal flusher does the same).
 *   --sync uring, flusher n/a.
 *   --cache = cache_size, --segment-size = log=(file_max), --checkpoint-bytes
 *   = checkpoint=(log_size), each n/a outside WiredTiger's range;
 *   --segments fresh is WiredTiger's only way (a new file, the old ones
 *   removed: log=(archive)), recycle is n/a.  The log does not
 *   pre-allocate files (log=(prealloc=false), --prealloc 0, commitlab's
 *   default): a file is made when the log switches to it.  WiredTiger's
 *   default has its log server create and rename files in the background
 *   from the moment the connection opens, which is also when crash --mode
 *   cut starts its journal: a file made in between is one the cut cannot
 *   account for, and the campaign fails on it.
 * Counters come from statistics=(fast): log sync operations (with
 * method=dsync, which syncs nothing, the slots written: each an O_DSYNC
 * write), log bytes written, slot closures (one write each: a write
 * group) and log write operations (the records that joined them),
 * checkpoints, bytes written from the cache.  Commits are counted here:
 * the write transactions committed (WiredTiger's own count has the
 * read-only ones and its internal ones too).
 *
 * Written against the engine plugin ABI (commitlab_engine.h) alone.
 */
#include "commitlab_engine.h"

#ifdef CL_HAVE_WIREDTIGER
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <wiredtiger.h>

/* The workloads' tables, by the first byte of their keys. */
enum { T_KV, T_ACCOUNTS, T_TELLERS, T_BRANCHES, T_HISTORY, T_OTHER, NTABLES };
static const char *const table_uri[NTABLES] = {
    [T_KV] = "table:kv",           [T_ACCOUNTS] = "table:accounts",
    [T_TELLERS] = "table:tellers", [T_BRANCHES] = "table:branches",
    [T_HISTORY] = "table:history", [T_OTHER] = "table:other",
};

static int table_of(const void *k, size_t kl)
{
    switch (kl ? *(const char *)k : 0) {
    case 'k': return T_KV;
    case 'a': return T_ACCOUNTS;
    case 't': return T_TELLERS;
    case 'b': return T_BRANCHES;
    case 'h': return T_HISTORY;
    default: return T_OTHER;
    }
}

/* WiredTiger's ranges (wiredtiger_open's configuration). */
#define WT_CACHE_MIN (1ull << 20)
#define WT_CACHE_MAX (10ull << 40)
#define WT_FILE_MAX_MIN (100ull << 10)
#define WT_FILE_MAX_MAX (2ull << 30)
#define WT_LOG_SIZE_MAX (2ull << 30)

struct wdb {
    WT_CONNECTION *conn;
    pthread_t syncer;
    int syncer_running;
    atomic_int stop;
    unsigned interval_ms;
    atomic_llong commits; /* write transactions committed */
    int dsync;            /* a durable --sync with --sync-method dsync */
};

struct wconn {
    WT_SESSION *s;
    WT_CURSOR *cur[NTABLES]; /* opened at first use */
    int in_txn;
    int rdonly;
};

/* A periodic sync is a commit written at once (method=none) and synced by the thread. */
static const struct cl_engine_accept wt_accepts[] = {
    CL_ENGINE_MAPS("sync", "none",
                   "transaction_sync=(enabled=true,method=none): each commit's log slot written to the file, "
                   "never synced by a commit",
                   CL_ENGINE_SURVIVES_KILL),
    CL_ENGINE_MAPS("sync", "periodic",
                   "transaction_sync=(enabled=true,method=none), and a thread calling "
                   "WT_SESSION::log_flush(sync=on) every --interval ms",
                   CL_ENGINE_SURVIVES_KILL),
    CL_ENGINE_MAPS("sync", "commit",
                   "log=(enabled),transaction_sync=(enabled=true,method=fsync): the commit returns once its log "
                   "slot is written and synced",
                   CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER),
    CL_ENGINE_MAPS("sync", "group",
                   "transaction_sync=(enabled=true,method=fsync), as commit: WiredTiger groups by itself, with no "
                   "setting -- the records that join a log slot before it closes are one write, and a sync covers "
                   "every slot written before it",
                   CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER),
    CL_ENGINE_NOT("sync", "uring", "WiredTiger does not write its log through io_uring"),
    CL_ENGINE_NOT("sync", "flusher",
                  "WiredTiger has no dedicated log flusher that commits wait for: a slot's "
                  "last writer syncs it (--sync group)"),
    CL_ENGINE_NOT("sync", NULL, "no WiredTiger transaction_sync setting is this policy"),
    CL_ENGINE_MAPS("sync-method", "fdatasync",
                   "transaction_sync=(method=fsync): WiredTiger's file sync, fdatasync "
                   "on Linux",
                   0),
    CL_ENGINE_MAPS("sync-method", "dsync", "transaction_sync=(method=dsync): the log file opened O_DSYNC", 0),
    CL_ENGINE_NOT("sync-method", "fsync",
                  "WiredTiger 3.2 syncs a file with fdatasync where the system has it; no "
                  "setting makes it call fsync"),
    CL_ENGINE_NOT("sync-method", NULL,
                  "WiredTiger syncs its log with fdatasync (method=fsync) or O_DSYNC "
                  "(method=dsync) only"),
    CL_ENGINE_MAPS("segments", "fresh",
                   "log=(archive=true): each log file new, the ones a checkpoint no longer "
                   "needs removed (WiredTiger's only way)",
                   0),
    CL_ENGINE_NOT("segments", "recycle",
                  "WiredTiger 3.2 never reuses a log file: it removes old ones "
                  "(log=(archive)) and pre-allocates new ones (log=(prealloc))"),
    CL_ENGINE_MAPS("prealloc", "0",
                   "log=(prealloc=false): a log file is made when the log switches to it, as "
                   "commitlab's segments are at --prealloc 0",
                   0),
    CL_ENGINE_NOT("prealloc", NULL,
                  "WiredTiger's log=(prealloc=true) keeps as many log files ready ahead as it "
                  "decides itself (it adds one each time a switch finds none ready); N is not "
                  "expressible"),
    CL_ENGINE_MAPS("segment-size", NULL, "log=(file_max=N), 100KB to 2GB", 0),
    CL_ENGINE_MAPS("checkpoint-bytes", NULL,
                   "checkpoint=(log_size=N), at most 2GB (WiredTiger waits for at "
                   "least one log file's worth)",
                   0),
    CL_ENGINE_MAPS("interval", NULL, "--sync periodic: the period of the log_flush(sync=on) thread", 0),
    CL_ENGINE_MAPS("cache", NULL, "cache_size=N, 1MB to 10TB", 0),
    CL_ENGINE_MAPS("sync-latency", NULL, "emulated: paid after each of its fdatasync calls and O_DSYNC writes", 0),
    CL_ENGINE_END,
};

/* What the rows cannot say: a size outside WiredTiger's range, said
 * before the run rather than as wiredtiger_open's error. */
static int wt_check(const struct cl_engine_config *cfg, char *why, size_t len)
{
    uint64_t v;
    if (cl_engine_given(cfg, "cache") && ((v = cl_engine_u64(cfg, "cache")) < WT_CACHE_MIN || v > WT_CACHE_MAX)) {
        snprintf(why, len, "--cache %s: WiredTiger's cache_size is 1MB to 10TB", cl_engine_str(cfg, "cache"));
        return CL_ENGINE_NA;
    }
    if (cl_engine_given(cfg, "segment-size") &&
        ((v = cl_engine_u64(cfg, "segment-size")) < WT_FILE_MAX_MIN || v > WT_FILE_MAX_MAX)) {
        snprintf(why, len, "--segment-size %s: WiredTiger's log=(file_max) is 100KB to 2GB",
                 cl_engine_str(cfg, "segment-size"));
        return CL_ENGINE_NA;
    }
    if (cl_engine_given(cfg, "checkpoint-bytes") && cl_engine_u64(cfg, "checkpoint-bytes") > WT_LOG_SIZE_MAX) {
        snprintf(why, len, "--checkpoint-bytes %s: WiredTiger's checkpoint=(log_size) is at most 2GB",
                 cl_engine_str(cfg, "checkpoint-bytes"));
        return CL_ENGINE_NA;
    }
    return 0;
}

/* The configuration wiredtiger_open gets for cfg, but for create and
 * session_max (the same for every run). */
static void wt_config(const struct cl_engine_config *cfg, char *buf, size_t len)
{
    int n = snprintf(buf, len, "log=(enabled=true,archive=true,prealloc=false");
    if (n > 0 && (size_t)n < len && cl_engine_given(cfg, "segment-size"))
        n += snprintf(buf + n, len - (size_t)n, ",file_max=%llu",
                      (unsigned long long)cl_engine_u64(cfg, "segment-size"));
    if (n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "),transaction_sync=(enabled=true,method=%s)",
                      !cfg->sync_durable                          ? "none"
                      : cl_engine_is(cfg, "sync-method", "dsync") ? "dsync"
                                                                  : "fsync");
    if (n > 0 && (size_t)n < len && cl_engine_given(cfg, "cache"))
        n += snprintf(buf + n, len - (size_t)n, ",cache_size=%llu", (unsigned long long)cl_engine_u64(cfg, "cache"));
    if (n > 0 && (size_t)n < len && cl_engine_given(cfg, "checkpoint-bytes"))
        n += snprintf(buf + n, len - (size_t)n, ",checkpoint=(log_size=%llu)",
                      (unsigned long long)cl_engine_u64(cfg, "checkpoint-bytes"));
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ",statistics=(fast)");
}

static void wt_describe(const struct cl_engine_config *cfg, char *buf, size_t len)
{
    wt_config(cfg, buf, len);
    size_t n = strlen(buf);
    if (n < len && cl_engine_is(cfg, "sync", "periodic"))
        snprintf(buf + n, len - n, " +log_flush(sync=on) every %llu ms",
                 (unsigned long long)cl_engine_u64(cfg, "interval"));
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* --sync periodic: what the commits wrote (method=none) synced every interval. */
static void *syncer_main(void *arg)
{
    struct wdb *w = arg;
    WT_SESSION *s;
    int rc = w->conn->open_session(w->conn, NULL, NULL, &s);
    if (rc) {
        fprintf(stderr, "wiredtiger open_session: %s\n", wiredtiger_strerror(rc));
        return NULL;
    }
    while (!atomic_load(&w->stop)) {
        sleep_ms(w->interval_ms);
        if ((rc = s->log_flush(s, "sync=on")) != 0)
            fprintf(stderr, "wiredtiger log_flush: %s\n", wiredtiger_strerror(rc));
    }
    s->close(s, NULL);
    return NULL;
}

static int wt_open(struct cl_engine_db *db)
{
    const struct cl_engine_config *cfg = db->cfg;
    struct wdb *w = calloc(1, sizeof *w);
    char conf[1024], full[1200];
    WT_SESSION *s = NULL;
    int rc;

    if (!w) {
        CL_ENGINE_ERRF(db->err, "out of memory");
        return CL_ENGINE_ERR;
    }
    mkdir(db->path, 0755);
    wt_config(cfg, conf, sizeof conf);
    /* a session per client, the syncer's, the statistics', and
     * WiredTiger's own (the log's three, eviction, checkpoints) */
    snprintf(full, sizeof full, "create,session_max=%llu,%s", (unsigned long long)cl_engine_u64(cfg, "clients") + 64,
             conf);
    if ((rc = wiredtiger_open(db->path, NULL, full, &w->conn)) != 0) {
        CL_ENGINE_ERRF(db->err, "wiredtiger_open %.120s: %.100s", db->path, wiredtiger_strerror(rc));
        free(w);
        return CL_ENGINE_ERR;
    }
    if ((rc = w->conn->open_session(w->conn, NULL, NULL, &s)) != 0)
        goto fail;
    for (int t = 0; t < NTABLES; t++)
        if ((rc = s->create(s, table_uri[t], "key_format=u,value_format=u")) != 0)
            goto fail;
    s->close(s, NULL);
    s = NULL;
    if (cl_engine_is(cfg, "sync", "periodic")) {
        w->interval_ms = (unsigned)cl_engine_u64(cfg, "interval");
        w->interval_ms = w->interval_ms ? w->interval_ms : 1;
        if (pthread_create(&w->syncer, NULL, syncer_main, w) == 0)
            w->syncer_running = 1;
    }
    w->dsync = cfg->sync_durable && cl_engine_is(cfg, "sync-method", "dsync");
    db->impl = w;
    return CL_ENGINE_OK;
fail:
    CL_ENGINE_ERRF(db->err, "wiredtiger %.120s: %.120s", db->path, wiredtiger_strerror(rc));
    w->conn->close(w->conn, NULL);
    free(w);
    return CL_ENGINE_ERR;
}

static void wt_close(struct cl_engine_db *db)
{
    struct wdb *w = db->impl;
    if (!w)
        return;
    if (w->syncer_running) {
        atomic_store(&w->stop, 1);
        pthread_join(w->syncer, NULL);
    }
    w->conn->close(w->conn, NULL); /* closes what sessions are left; a checkpoint */
    free(w);
    db->impl = NULL;
}

static int wt_conn_open(struct cl_engine_conn *c)
{
    struct wdb *w = c->db->impl;
    struct wconn *wc = calloc(1, sizeof *wc);
    int rc;
    if (!wc)
        return CL_ENGINE_ERR;
    if ((rc = w->conn->open_session(w->conn, NULL, NULL, &wc->s)) != 0) {
        CL_ENGINE_ERRF(c->err, "wiredtiger open_session: %s", wiredtiger_strerror(rc));
        free(wc);
        return CL_ENGINE_ERR;
    }
    c->impl = wc;
    return CL_ENGINE_OK;
}

static void wt_conn_close(struct cl_engine_conn *c)
{
    struct wconn *wc = c->impl;
    if (!wc)
        return;
    wc->s->close(wc->s, NULL); /* rolls back a transaction left open, closes the cursors */
    free(wc);
    c->impl = NULL;
}

/* A WiredTiger error: WT_ROLLBACK (a write conflict, or the cache asking
 * the oldest transaction to go) aborts the transaction and it is run
 * again; anything else is a failure. */
static int wt_err(struct cl_engine_conn *c, const char *what, int rc)
{
    CL_ENGINE_ERRF(c->err, "wiredtiger %s: %s", what, wiredtiger_strerror(rc));
    return rc == WT_ROLLBACK ? CL_ENGINE_RETRY : CL_ENGINE_ERR;
}

static int cursor_of(struct cl_engine_conn *c, const void *k, size_t kl, WT_CURSOR **out)
{
    struct wconn *wc = c->impl;
    int t = table_of(k, kl), rc;
    if (!wc->cur[t] && (rc = wc->s->open_cursor(wc->s, table_uri[t], NULL, "overwrite=true", &wc->cur[t])) != 0)
        return wt_err(c, "open_cursor", rc);
    *out = wc->cur[t];
    return CL_ENGINE_OK;
}

static int wt_begin(struct cl_engine_conn *c, int rdonly)
{
    struct wconn *wc = c->impl;
    int rc = wc->s->begin_transaction(wc->s, "isolation=snapshot");
    if (rc)
        return wt_err(c, "begin_transaction", rc);
    wc->in_txn = 1;
    wc->rdonly = rdonly;
    return CL_ENGINE_OK;
}

static int wt_put(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    WT_CURSOR *cur;
    WT_ITEM key = {.data = k, .size = kl}, val = {.data = v, .size = vl};
    int rc = cursor_of(c, k, kl, &cur);
    if (rc)
        return rc;
    cur->set_key(cur, &key);
    cur->set_value(cur, &val);
    rc = cur->insert(cur);
    return rc ? wt_err(c, "insert", rc) : CL_ENGINE_OK;
}

static int wt_get(struct cl_engine_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    WT_CURSOR *cur;
    WT_ITEM key = {.data = k, .size = kl}, val;
    int rc = cursor_of(c, k, kl, &cur);
    if (rc)
        return rc;
    cur->set_key(cur, &key);
    if ((rc = cur->search(cur)) == WT_NOTFOUND)
        return CL_ENGINE_NOTFOUND;
    if (rc == 0 && (rc = cur->get_value(cur, &val)) == 0) {
        memcpy(buf, val.data, val.size < cap ? val.size : cap);
        *vl = val.size;
    }
    cur->reset(cur); /* lets go of the page */
    return rc ? wt_err(c, "search", rc) : CL_ENGINE_OK;
}

static int wt_del(struct cl_engine_conn *c, const void *k, size_t kl)
{
    WT_CURSOR *cur;
    WT_ITEM key = {.data = k, .size = kl};
    int rc = cursor_of(c, k, kl, &cur);
    if (rc)
        return rc;
    cur->set_key(cur, &key);
    /* with overwrite, remove of a missing key succeeds: look first */
    if ((rc = cur->search(cur)) == WT_NOTFOUND)
        return CL_ENGINE_NOTFOUND;
    if (rc == 0)
        rc = cur->remove(cur);
    cur->reset(cur);
    return rc ? wt_err(c, "remove", rc) : CL_ENGINE_OK;
}

static int wt_commit(struct cl_engine_conn *c)
{
    struct wconn *wc = c->impl;
    struct wdb *w = c->db->impl;
    int rc = wc->s->commit_transaction(wc->s, NULL); /* a failed commit is rolled back */
    wc->in_txn = 0;
    if (rc)
        return wt_err(c, "commit_transaction", rc);
    if (!wc->rdonly)
        atomic_fetch_add(&w->commits, 1);
    return CL_ENGINE_OK;
}

static void wt_abort(struct cl_engine_conn *c)
{
    struct wconn *wc = c->impl;
    if (wc->in_txn)
        wc->s->rollback_transaction(wc->s, NULL);
    wc->in_txn = 0;
}

/* One connection statistic, or -1. */
static int64_t stat_of(WT_CURSOR *st, int key)
{
    const char *desc, *pvalue;
    int64_t v;
    st->set_key(st, key);
    if (st->search(st) != 0 || st->get_value(st, &desc, &pvalue, &v) != 0)
        return -1;
    return v;
}

static void wt_stats(struct cl_engine_db *db, struct cl_engine_stats *st)
{
    struct wdb *w = db->impl;
    WT_SESSION *s;
    WT_CURSOR *c;
    st->commits = atomic_load(&w->commits);
    if (w->conn->open_session(w->conn, NULL, NULL, &s) != 0)
        return;
    if (s->open_cursor(s, "statistics:", NULL, NULL, &c) == 0) {
        int64_t closes = stat_of(c, WT_STAT_CONN_LOG_SLOT_CLOSES), writes = stat_of(c, WT_STAT_CONN_LOG_WRITES);
        /* method=dsync makes each slot's write the durability point and
         * counts no sync operation: the slots written are its syncs */
        st->syncs = w->dsync ? closes : stat_of(c, WT_STAT_CONN_LOG_SYNC);
        st->log_bytes = stat_of(c, WT_STAT_CONN_LOG_BYTES_WRITTEN);
        st->data_bytes = stat_of(c, WT_STAT_CONN_CACHE_BYTES_WRITE);
        st->checkpoints = stat_of(c, WT_STAT_CONN_TXN_CHECKPOINT);
        /* a closed slot is one write of the records that joined it: the
         * write group; its records are the log write operations */
        if (closes >= 0 && writes >= 0) {
            st->writes_by_self = closes;
            st->writes_by_leader = writes > closes ? writes - closes : 0;
        }
        c->close(c);
    }
    s->close(s, NULL);
}

static const char *wt_version(void)
{
    static char v[32];
    int major, minor, patch;
    wiredtiger_version(&major, &minor, &patch);
    snprintf(v, sizeof v, "%d.%d.%d", major, minor, patch);
    return v;
}

const struct cl_engine_plugin bench_plugin_wiredtiger = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "wiredtiger",
    .flags = CL_ENGINE_RMW, /* snapshot isolation: a write-write conflict is WT_ROLLBACK, retried */
    .accepts = wt_accepts,
    .no_why = "no WiredTiger setting maps to it",
    .notes = "one connection, a WT_SESSION per client, a table per workload table (by the key's first byte);\n"
             "transactions at isolation=snapshot, WT_ROLLBACK retried;\n"
             "counters from statistics=(fast): log syncs and bytes, slot closures as write groups",
    .check = wt_check,
    .describe = wt_describe,
    .open = wt_open,
    .close = wt_close,
    .conn_open = wt_conn_open,
    .conn_close = wt_conn_close,
    .begin = wt_begin,
    .put = wt_put,
    .get = wt_get,
    .del = wt_del,
    .commit = wt_commit,
    .abort = wt_abort,
    .stats = wt_stats,
    .version = wt_version,
};

#else /* !CL_HAVE_WIREDTIGER */

const struct cl_engine_plugin bench_plugin_wiredtiger = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "wiredtiger",
    .notes = "not built: install libwiredtiger-dev and rebuild",
};

#endif
