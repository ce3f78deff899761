/*
 * driver_sqlite.c -- the benchmark driver for SQLite (optional peer, built
 * when libsqlite3-dev is present), through SQLite's C API.
 *
 * One table kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID in WAL mode; one
 * connection per client thread.  A write transaction is BEGIN IMMEDIATE
 * ... COMMIT, so writers queue for the write lock at BEGIN instead of
 * deadlocking at their first write; the busy handler yields, then sleeps
 * 50 us .. 1 ms, for up to 30 s (SQLite's default handler sleeps whole
 * milliseconds, which would measure the handler, not the store).
 * --sync commit = synchronous=FULL (the WAL is synced at every commit);
 * --sync none = synchronous=OFF; --sqlite-sync normal (with --sync none)
 * = synchronous=NORMAL (synced only at checkpoints: not durable).
 * Checkpoints are SQLite's own automatic ones (every 1000 WAL pages), run
 * from a WAL hook so that the harness can count them and time the pause
 * of the commit that runs them.
 *
 * Written against the engine plugin ABI (commitlab_engine.h) alone, and
 * timed on the command's one clock (ut_clock.h).
 */
#include <time.h>

#include "commitlab_engine.h"
#include "ut_clock.h"

#ifdef CL_HAVE_SQLITE
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SQLITE_AUTOCHECKPOINT_PAGES 1000

struct sdb {
    char file[4200];
    const char *synchronous;
    int64_t checkpoints, pause_us; /* atomics */
};

struct sconn {
    sqlite3 *h;
    sqlite3_stmt *begin_w, *begin_r, *commit, *rollback, *put, *get, *del;
    struct sdb *s;
};

static const struct cl_engine_accept sqlite_accepts[] = {
    {"sync", "commit", "synchronous=FULL: the WAL synced at every commit", NULL,
     CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER},
    /* OFF and NORMAL still write each commit to the WAL file */
    {"sync", "none", "synchronous=OFF (NORMAL with --sqlite-sync normal: synced only at checkpoints)", NULL,
     CL_ENGINE_SURVIVES_KILL},
    {"sync", NULL, NULL, "SQLite has one writer that syncs in COMMIT (synchronous=FULL = --sync commit, OFF/NORMAL = "
                         "--sync none)"},
    {"sqlite-sync", "full", "synchronous=FULL (with a durable --sync)", NULL},
    {"sqlite-sync", "normal", "synchronous=NORMAL (with --sync none: not durable)", NULL},
    {"sqlite-sync", "off", "synchronous=OFF (with --sync none)", NULL},
    {"cache", NULL, "cache_size, per connection", NULL},
    {"sync-latency", NULL, "emulated: paid after each of its fsync and fdatasync calls", NULL},
    {NULL, NULL, NULL, NULL},
};

static const char *synchronous_for(const struct cl_engine_config *cfg)
{
    const char *s = cl_engine_str(cfg, "sqlite-sync");
    if (*s)
        return s;
    return cl_engine_is(cfg, "sync", "none") ? "off" : "full";
}

/* What the rows cannot say: --sqlite-sync must promise what --sync does. */
static int sqlite_check(const struct cl_engine_config *cfg, char *why, size_t len)
{
    const char *s = cl_engine_str(cfg, "sqlite-sync");
    if (*s) {
        int durable = strcmp(s, "full") == 0;
        if (durable != cfg->sync_durable) {
            snprintf(why, len, "--sqlite-sync %s with --sync %s: synchronous=%s is %sdurable", s,
                     cl_engine_str(cfg, "sync"), s, durable ? "" : "not ");
            return CL_ENGINE_NA;
        }
    }
    return 0;
}

static void sqlite_describe(const struct cl_engine_config *cfg, char *buf, size_t len)
{
    char s[8];
    const char *sy = synchronous_for(cfg);
    size_t i;
    for (i = 0; sy[i] && i < sizeof s - 1; i++)
        s[i] = (char)(sy[i] - 'a' + 'A');
    s[i] = 0;
    snprintf(buf, len, "journal_mode=WAL synchronous=%s", s);
}

static int busy_handler(void *arg, int n)
{
    (void)arg;
    if (n < 16) {
        sched_yield();
        return 1;
    }
    long us = 50L * (n - 15);
    if (us > 1000)
        us = 1000;
    if ((long)n * 1000 > 30L * 1000 * 1000) /* over ~30 s of sleeping: give up */
        return 0;
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
    return 1;
}

static int wal_hook(void *arg, sqlite3 *h, const char *dbname, int pages)
{
    struct sdb *s = arg;
    if (pages < SQLITE_AUTOCHECKPOINT_PAGES)
        return SQLITE_OK;
    double t0 = ut_now();
    sqlite3_wal_checkpoint_v2(h, dbname, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    __atomic_fetch_add(&s->checkpoints, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&s->pause_us, (int64_t)((ut_now() - t0) * 1e6), __ATOMIC_RELAXED);
    return SQLITE_OK;
}

static int exec(sqlite3 *h, const char *sql, char *err, size_t len)
{
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, len, "%s: %s", sql, msg ? msg : sqlite3_errmsg(h));
        sqlite3_free(msg);
        return CL_ENGINE_ERR;
    }
    return CL_ENGINE_OK;
}

static int sqlite_open_db(struct cl_engine_db *db)
{
    struct sdb *s = calloc(1, sizeof *s);
    sqlite3 *h = NULL;
    if (!s) {
        CL_ENGINE_ERRF(db->err, "out of memory");
        return CL_ENGINE_ERR;
    }
    mkdir(db->path, 0755);
    snprintf(s->file, sizeof s->file, "%s/bench.sqlite", db->path);
    s->synchronous = synchronous_for(db->cfg);
    if (sqlite3_open_v2(s->file, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        CL_ENGINE_ERRF(db->err, "sqlite3_open %.160s: %.80s", s->file, h ? sqlite3_errmsg(h) : "out of memory");
        goto fail;
    }
    if (exec(h, "PRAGMA journal_mode=WAL", db->err, sizeof db->err) ||
        exec(h, "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID", db->err,
             sizeof db->err))
        goto fail;
    sqlite3_close(h);
    db->impl = s;
    return CL_ENGINE_OK;
fail:
    sqlite3_close(h);
    free(s);
    return CL_ENGINE_ERR;
}

static void sqlite_close_db(struct cl_engine_db *db)
{
    free(db->impl);
    db->impl = NULL;
}

static void conn_free(struct sconn *sc)
{
    sqlite3_stmt *st[] = {sc->begin_w, sc->begin_r, sc->commit, sc->rollback, sc->put, sc->get, sc->del};
    for (size_t i = 0; i < sizeof st / sizeof *st; i++)
        sqlite3_finalize(st[i]);
    sqlite3_close(sc->h);
    free(sc);
}

static int sqlite_conn_open(struct cl_engine_conn *c)
{
    struct sdb *s = c->db->impl;
    struct sconn *sc = calloc(1, sizeof *sc);
    char sql[64];
    if (!sc) {
        CL_ENGINE_ERRF(c->err, "out of memory");
        return CL_ENGINE_ERR;
    }
    sc->s = s;
    if (sqlite3_open_v2(s->file, &sc->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        CL_ENGINE_ERRF(c->err, "sqlite3_open %.160s: %.80s", s->file, sc->h ? sqlite3_errmsg(sc->h) : "?");
        goto fail;
    }
    sqlite3_busy_handler(sc->h, busy_handler, NULL);
    snprintf(sql, sizeof sql, "PRAGMA synchronous=%s", s->synchronous);
    if (exec(sc->h, sql, c->err, sizeof c->err))
        goto fail;
    if (cl_engine_given(c->db->cfg, "cache")) {
        snprintf(sql, sizeof sql, "PRAGMA cache_size=-%llu",
                 (unsigned long long)(cl_engine_u64(c->db->cfg, "cache") >> 10));
        if (exec(sc->h, sql, c->err, sizeof c->err))
            goto fail;
    }
    sqlite3_wal_hook(sc->h, wal_hook, s);
    static const char *const text[] = {"BEGIN IMMEDIATE", "BEGIN", "COMMIT", "ROLLBACK",
                                       "INSERT OR REPLACE INTO kv(k, v) VALUES (?1, ?2)",
                                       "SELECT v FROM kv WHERE k = ?1", "DELETE FROM kv WHERE k = ?1"};
    sqlite3_stmt **dst[] = {&sc->begin_w, &sc->begin_r, &sc->commit, &sc->rollback, &sc->put, &sc->get, &sc->del};
    for (size_t i = 0; i < sizeof text / sizeof *text; i++)
        if (sqlite3_prepare_v2(sc->h, text[i], -1, dst[i], NULL) != SQLITE_OK) {
            CL_ENGINE_ERRF(c->err, "prepare '%s': %s", text[i], sqlite3_errmsg(sc->h));
            goto fail;
        }
    c->impl = sc;
    return CL_ENGINE_OK;
fail:
    conn_free(sc);
    return CL_ENGINE_ERR;
}

static void sqlite_conn_close(struct cl_engine_conn *c)
{
    if (c->impl)
        conn_free(c->impl);
    c->impl = NULL;
}

static int step_done(struct cl_engine_conn *c, sqlite3_stmt *st, const char *what)
{
    struct sconn *sc = c->impl;
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        CL_ENGINE_ERRF(c->err, "%s: %s", what, sqlite3_errmsg(sc->h));
        return CL_ENGINE_ERR;
    }
    return CL_ENGINE_OK;
}

static int sqlite_begin(struct cl_engine_conn *c, int rdonly)
{
    struct sconn *sc = c->impl;
    return step_done(c, rdonly ? sc->begin_r : sc->begin_w, rdonly ? "BEGIN" : "BEGIN IMMEDIATE");
}

static int sqlite_put(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    struct sconn *sc = c->impl;
    sqlite3_bind_blob(sc->put, 1, k, (int)kl, SQLITE_STATIC);
    sqlite3_bind_blob(sc->put, 2, v, (int)vl, SQLITE_STATIC);
    return step_done(c, sc->put, "INSERT");
}

static int sqlite_get(struct cl_engine_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    struct sconn *sc = c->impl;
    sqlite3_bind_blob(sc->get, 1, k, (int)kl, SQLITE_STATIC);
    int rc = sqlite3_step(sc->get);
    if (rc == SQLITE_ROW) {
        const void *v = sqlite3_column_blob(sc->get, 0);
        size_t n = (size_t)sqlite3_column_bytes(sc->get, 0);
        memcpy(buf, v, n < cap ? n : cap);
        *vl = n;
        sqlite3_reset(sc->get);
        return CL_ENGINE_OK;
    }
    sqlite3_reset(sc->get);
    if (rc == SQLITE_DONE)
        return CL_ENGINE_NOTFOUND;
    CL_ENGINE_ERRF(c->err, "SELECT: %s", sqlite3_errmsg(sc->h));
    return CL_ENGINE_ERR;
}

static int sqlite_del(struct cl_engine_conn *c, const void *k, size_t kl)
{
    struct sconn *sc = c->impl;
    sqlite3_bind_blob(sc->del, 1, k, (int)kl, SQLITE_STATIC);
    int rc = step_done(c, sc->del, "DELETE");
    if (rc == CL_ENGINE_OK && sqlite3_changes(sc->h) == 0)
        return CL_ENGINE_NOTFOUND;
    return rc;
}

static int sqlite_commit(struct cl_engine_conn *c)
{
    struct sconn *sc = c->impl;
    int rc = step_done(c, sc->commit, "COMMIT");
    if (rc && !sqlite3_get_autocommit(sc->h))
        step_done(c, sc->rollback, "ROLLBACK");
    return rc;
}

static void sqlite_abort(struct cl_engine_conn *c)
{
    struct sconn *sc = c->impl;
    if (!sqlite3_get_autocommit(sc->h))
        step_done(c, sc->rollback, "ROLLBACK");
}

static void sqlite_stats(struct cl_engine_db *db, struct cl_engine_stats *st)
{
    struct sdb *s = db->impl;
    st->checkpoints = __atomic_load_n(&s->checkpoints, __ATOMIC_RELAXED);
    st->checkpoint_pause_us = __atomic_load_n(&s->pause_us, __ATOMIC_RELAXED);
}

static const char *sqlite_version(void)
{
    return sqlite3_libversion();
}

/* WAL mode's wal-index, mapped shared and writable by every connection,
 * and rebuilt from the WAL by the first one to open the database
 * (https://www.sqlite.org/walformat.html#the_wal_index_or_shm_file). */
static const char *const sqlite_shared_memory[] = {"*-shm", NULL};

const struct cl_engine_plugin bench_plugin_sqlite = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "sqlite",
    .flags = CL_ENGINE_RMW, /* BEGIN IMMEDIATE: one writer at a time */
    .accepts = sqlite_accepts,
    .no_why = "no SQLite setting maps to it",
    .notes = "WAL mode, one connection per client, BEGIN IMMEDIATE with a busy handler;\n"
             "counts its automatic checkpoints and their pauses; no sync counters (null)",
    .check = sqlite_check,
    .describe = sqlite_describe,
    .open = sqlite_open_db,
    .close = sqlite_close_db,
    .conn_open = sqlite_conn_open,
    .conn_close = sqlite_conn_close,
    .begin = sqlite_begin,
    .put = sqlite_put,
    .get = sqlite_get,
    .del = sqlite_del,
    .commit = sqlite_commit,
    .abort = sqlite_abort,
    .stats = sqlite_stats,
    .version = sqlite_version,
    .shared_memory = sqlite_shared_memory,
};

#else /* !CL_HAVE_SQLITE */

const struct cl_engine_plugin bench_plugin_sqlite = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "sqlite",
    .notes = "not built: install libsqlite3-dev and rebuild",
};

#endif
