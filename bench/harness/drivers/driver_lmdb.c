/*
 * driver_lmdb.c -- the benchmark driver for LMDB, the required reference,
 * through LMDB's own API.  Used as its users use it: one environment for
 * all clients, one write transaction per client transaction; LMDB's single
 * writer lock serialises them.  --sync commit is LMDB's default durable
 * commit (fdatasync of the data pages, then the meta page written through
 * an O_DSYNC descriptor: two durability points per commit); --sync none is
 * MDB_NOSYNC.  --lmdb-flags adds MDB_NOMETASYNC, MDB_WRITEMAP, MDB_MAPASYNC.
 * LMDB has no log, so the log knobs are n/a.
 *
 * Written against the engine plugin ABI (commitlab_engine.h) alone, as a
 * user's plugin is: the harness runs it through the same adapter.
 */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commitlab_engine.h"

struct lmdb_db {
    MDB_env *env;
    MDB_dbi dbi;
};

static const struct cl_engine_accept lmdb_accepts[] = {
    {"sync", "commit", "the default durable commit: fdatasync of the data pages, then the meta page written "
                       "through an O_DSYNC descriptor (two durability points)", NULL,
     CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER},
    /* MDB_NOSYNC still writes every commit into the file: the page cache
     * keeps it when only the process dies */
    {"sync", "none", "MDB_NOSYNC", NULL, CL_ENGINE_SURVIVES_KILL},
    {"sync", NULL, NULL, "LMDB has one writer that syncs inside mdb_txn_commit (durable = --sync commit, "
                         "MDB_NOSYNC = --sync none)"},
    {"sync-latency", NULL, "emulated: paid after its fdatasync and after its O_DSYNC meta write", NULL},
    /* LMDB's documentation: with either, "a system crash may undo the
     * last committed transaction" (ACI, not D) */
    {"lmdb-flags", "nometasync", "MDB_NOMETASYNC: the meta page is not synced at commit", NULL,
     CL_ENGINE_SURVIVES_KILL},
    {"lmdb-flags", "mapasync", "MDB_MAPASYNC (with writemap): the map flushed asynchronously", NULL,
     CL_ENGINE_SURVIVES_KILL},
    {"lmdb-flags", NULL, "MDB_NOMETASYNC, MDB_WRITEMAP, MDB_MAPASYNC", NULL},
    {NULL, NULL, NULL, NULL},
};

/* 1 when the comma set s has the word w. */
static int has_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = s; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, w, n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

static unsigned env_flags(const struct cl_engine_config *cfg)
{
    const char *set = cl_engine_str(cfg, "lmdb-flags");
    unsigned f = 0;
    if (cl_engine_is(cfg, "sync", "none"))
        f |= MDB_NOSYNC;
    if (has_word(set, "nometasync"))
        f |= MDB_NOMETASYNC;
    if (has_word(set, "writemap"))
        f |= MDB_WRITEMAP;
    if (has_word(set, "mapasync"))
        f |= MDB_MAPASYNC;
    return f;
}

static void lmdb_describe(const struct cl_engine_config *cfg, char *buf, size_t len)
{
    unsigned f = env_flags(cfg);
    if (!f) {
        snprintf(buf, len, "default flags (durable)");
        return;
    }
    snprintf(buf, len, "%s%s%s%s", f & MDB_NOSYNC ? "MDB_NOSYNC " : "", f & MDB_NOMETASYNC ? "MDB_NOMETASYNC " : "",
             f & MDB_WRITEMAP ? "MDB_WRITEMAP " : "", f & MDB_MAPASYNC ? "MDB_MAPASYNC " : "");
    size_t n = strlen(buf);
    if (n && buf[n - 1] == ' ')
        buf[n - 1] = 0;
}

static int lmdb_open(struct cl_engine_db *db)
{
    struct lmdb_db *l = calloc(1, sizeof *l);
    MDB_txn *txn;
    int rc;

    if (!l) {
        CL_ENGINE_ERRF(db->err, "out of memory");
        return CL_ENGINE_ERR;
    }
    mkdir(db->path, 0755);
    if ((rc = mdb_env_create(&l->env)))
        goto fail;
    /* Address space only: the file grows with the data (unless MDB_WRITEMAP,
     * where it is sparse). */
    if ((rc = mdb_env_set_mapsize(l->env, 16ull << 30)))
        goto fail;
    if ((rc = mdb_env_set_maxreaders(l->env, (unsigned)cl_engine_u64(db->cfg, "clients") + 16)))
        goto fail;
    if ((rc = mdb_env_open(l->env, db->path, env_flags(db->cfg), 0644)))
        goto fail;
    if ((rc = mdb_txn_begin(l->env, NULL, 0, &txn)))
        goto fail;
    if ((rc = mdb_dbi_open(txn, NULL, 0, &l->dbi))) {
        mdb_txn_abort(txn);
        goto fail;
    }
    if ((rc = mdb_txn_commit(txn)))
        goto fail;
    db->impl = l;
    return CL_ENGINE_OK;
fail:
    CL_ENGINE_ERRF(db->err, "mdb_env_open %.160s: %.80s", db->path, mdb_strerror(rc));
    if (l->env)
        mdb_env_close(l->env);
    free(l);
    return CL_ENGINE_ERR;
}

static void lmdb_close(struct cl_engine_db *db)
{
    struct lmdb_db *l = db->impl;
    if (!l)
        return;
    mdb_env_close(l->env);
    free(l);
    db->impl = NULL;
}

static int lmdb_conn_open(struct cl_engine_conn *c)
{
    c->impl = NULL; /* the current MDB_txn */
    return CL_ENGINE_OK;
}

static void lmdb_conn_close(struct cl_engine_conn *c)
{
    if (c->impl)
        mdb_txn_abort(c->impl);
    c->impl = NULL;
}

static int fail(struct cl_engine_conn *c, const char *what, int rc)
{
    CL_ENGINE_ERRF(c->err, "%s: %s", what, mdb_strerror(rc));
    return CL_ENGINE_ERR;
}

static int lmdb_begin(struct cl_engine_conn *c, int rdonly)
{
    struct lmdb_db *l = c->db->impl;
    MDB_txn *t;
    int rc = mdb_txn_begin(l->env, NULL, rdonly ? MDB_RDONLY : 0, &t);
    if (rc)
        return fail(c, "mdb_txn_begin", rc);
    c->impl = t;
    return CL_ENGINE_OK;
}

static int lmdb_put(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    struct lmdb_db *l = c->db->impl;
    MDB_val key = {kl, (void *)k}, val = {vl, (void *)v};
    int rc = mdb_put(c->impl, l->dbi, &key, &val, 0);
    return rc ? fail(c, "mdb_put", rc) : CL_ENGINE_OK;
}

static int lmdb_get(struct cl_engine_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    struct lmdb_db *l = c->db->impl;
    MDB_val key = {kl, (void *)k}, val;
    int rc = mdb_get(c->impl, l->dbi, &key, &val);
    if (rc == MDB_NOTFOUND)
        return CL_ENGINE_NOTFOUND;
    if (rc)
        return fail(c, "mdb_get", rc);
    memcpy(buf, val.mv_data, val.mv_size < cap ? val.mv_size : cap);
    *vl = val.mv_size;
    return CL_ENGINE_OK;
}

static int lmdb_commit(struct cl_engine_conn *c)
{
    int rc = mdb_txn_commit(c->impl);
    c->impl = NULL;
    return rc ? fail(c, "mdb_txn_commit", rc) : CL_ENGINE_OK;
}

static void lmdb_abort(struct cl_engine_conn *c)
{
    if (c->impl)
        mdb_txn_abort(c->impl);
    c->impl = NULL;
}

static int lmdb_del(struct cl_engine_conn *c, const void *k, size_t kl)
{
    struct lmdb_db *l = c->db->impl;
    MDB_val key = {kl, (void *)k};
    int rc = mdb_del(c->impl, l->dbi, &key, NULL);
    if (rc == MDB_NOTFOUND)
        return CL_ENGINE_NOTFOUND;
    return rc ? fail(c, "mdb_del", rc) : CL_ENGINE_OK;
}

static const char *lmdb_version(void)
{
    return mdb_version(NULL, NULL, NULL);
}

/* The reader table and the last transaction's id, mapped shared and
 * writable by every process of the environment, and reset by the first
 * one to open it (mdb_env_setup_locks). */
static const char *const lmdb_shared_memory[] = {"lock.mdb", NULL};

const struct cl_engine_plugin bench_plugin_lmdb = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "lmdb",
    .flags = CL_ENGINE_RMW, /* one writer at a time: write transactions are serial */
    .accepts = lmdb_accepts,
    .no_why = "LMDB has no log and a fixed sync method (fdatasync + O_DSYNC meta)",
    .notes = "one environment, one write transaction per client transaction (a single writer);\n"
             "no sync counters (null)",
    .describe = lmdb_describe,
    .open = lmdb_open,
    .close = lmdb_close,
    .conn_open = lmdb_conn_open,
    .conn_close = lmdb_conn_close,
    .begin = lmdb_begin,
    .put = lmdb_put,
    .get = lmdb_get,
    .del = lmdb_del,
    .commit = lmdb_commit,
    .abort = lmdb_abort,
    .version = lmdb_version,
    .shared_memory = lmdb_shared_memory,
};
