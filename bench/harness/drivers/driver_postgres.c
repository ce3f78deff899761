/*
 * driver_postgres.c -- the benchmark driver for PostgreSQL (optional peer,
 * built when pkg-config finds libpq; the server's own binaries are found
 * at run time): a private server per run, driven through libpq.
 *
 * The server.  pg_server.c owns it: the binaries, the template cluster
 * (initdb once per command and segment size, copied for each run), the
 * start with pg_ctl, the stop on every exit path, and the leftover of a
 * killed command.  This file maps the knobs to settings, holds the
 * connections, and reads the counters.
 *
 * The store.  One table kv(k bytea PRIMARY KEY, v bytea); a put is
 * INSERT ... ON CONFLICT (k) DO UPDATE SET v = excluded.v, a get a
 * SELECT, a delete a DELETE, each a statement prepared once per
 * connection, its parameters and results binary; one libpq connection
 * per client; a get in a transaction that writes is SELECT ... FOR
 * UPDATE, so a read-modify-write (tpcb) loses no update, and a deadlock or
 * serialisation failure is CL_ENGINE_RETRY.  A transaction is BEGIN ... COMMIT, except that BEGIN is
 * sent with the transaction's second statement: a transaction of one
 * put is that one statement in autocommit, one round trip, as pgbench
 * runs a one-statement script.
 *
 * The knobs (the accept rows below; docs/bench.md has the table): --sync
 * commit, group, periodic and none are synchronous_commit, commit_delay
 * and commit_siblings, wal_writer_delay, and fsync; --sync-method the
 * wal_sync_method; --segments, --segment-init, --segment-size,
 * --checkpoint-bytes and --cache wal_recycle, wal_init_zero, initdb
 * --wal-segsize, max_wal_size and shared_buffers; --pg-set NAME=VALUE
 * anything else the server accepts, except what would make it listen on
 * the network or write outside its directory.  The settings are written
 * at the end of the cluster's postgresql.conf; what the server runs with
 * is read back with SHOW for the run's record.
 *
 * The counters: pg_stat_wal's wal_bytes, wal_write and wal_sync (a
 * write of an open_datasync or open_sync log is its sync), read at both
 * ends of the measured phase after each idle client's backend has flushed
 * its pending statistics (pg_stat_force_next_flush, PostgreSQL 15); and
 * the CPU time of the postmaster and its children from /proc, added to
 * commitlab's own.
 */
#include <time.h>

#include "commitlab_engine.h"
#include "pg_server.h"

#ifdef CL_HAVE_LIBPQ
#include <arpa/inet.h>
#include <errno.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTEA_OID 17

static const struct cl_engine_accept pg_accepts[] = {
    CL_ENGINE_MAPS("sync", "commit", "synchronous_commit=on, commit_delay=0: WAL flushed at every commit",
                   CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER),
    CL_ENGINE_MAPS("sync", "group",
                   "synchronous_commit=on, commit_delay=--commit-delay, commit_siblings=--commit-siblings",
                   CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER),
    CL_ENGINE_MAPS("sync", "periodic", "synchronous_commit=off, wal_writer_delay=--interval (the WAL writer flushes)",
                   0),
    CL_ENGINE_MAPS("sync", "none", "fsync=off (each commit still written to the WAL file)", CL_ENGINE_SURVIVES_KILL),
    CL_ENGINE_NOT("sync", NULL, "PostgreSQL's commit maps to commit, group, periodic and none only"),
    CL_ENGINE_MAPS("sync-method", "fdatasync", "wal_sync_method=fdatasync", 0),
    CL_ENGINE_MAPS("sync-method", "fsync", "wal_sync_method=fsync", 0),
    CL_ENGINE_MAPS("sync-method", "dsync", "wal_sync_method=open_datasync", 0),
    CL_ENGINE_NOT("sync-method", NULL,
                  "wal_sync_method has fdatasync, fsync, open_datasync (dsync) and open_sync (--pg-set)"),
    CL_ENGINE_MAPS("segments", "recycle", "wal_recycle=on", 0),
    CL_ENGINE_MAPS("segments", "fresh", "wal_recycle=off", 0),
    CL_ENGINE_NOT("segments", NULL, "wal_recycle is on or off"),
    CL_ENGINE_MAPS("segment-init", "zero", "wal_init_zero=on", 0),
    CL_ENGINE_MAPS("segment-init", "sparse", "wal_init_zero=off", 0),
    CL_ENGINE_NOT("segment-init", NULL, "wal_init_zero is on (zero) or off (sparse)"),
    CL_ENGINE_MAPS("segment-size", NULL, "initdb --wal-segsize (whole MiB, a power of two, 1M to 1G)", 0),
    CL_ENGINE_MAPS("checkpoint-bytes", NULL, "max_wal_size (whole MB, at least two segments)", 0),
    CL_ENGINE_MAPS("commit-delay", NULL, "commit_delay (with --sync group)", 0),
    CL_ENGINE_MAPS("commit-siblings", NULL, "commit_siblings (with --sync group)", 0),
    CL_ENGINE_MAPS("interval", NULL, "wal_writer_delay (with --sync periodic; at most 10000 ms)", 0),
    CL_ENGINE_MAPS("cache", NULL, "shared_buffers (at least 128k)", 0),
    CL_ENGINE_NOT("sync-latency", NULL, "the server syncs in its own processes, which the harness does not interpose"),
    CL_ENGINE_END,
};

/* ---- the settings of a configuration ------------------------------------------------ */

/* The settings cfg asks for, "name=value" each, one a line, commitlab's
 * mapping first and then --pg-set's in order (a later one wins, as in
 * postgresql.conf).  0, or CL_ENGINE_NA with why. */
static int settings_for(const struct cl_engine_config *cfg, char *out, size_t len, char *why, size_t wlen)
{
    size_t o = 0;
#define SET(...) (o += (size_t)snprintf(out + o, o < len ? len - o : 0, __VA_ARGS__))
    out[0] = 0;
    if (cl_engine_is(cfg, "sync", "none")) {
        SET("fsync=off\n");
    } else if (cl_engine_is(cfg, "sync", "periodic")) {
        uint64_t ms = cl_engine_u64(cfg, "interval");
        if (ms < 1 || ms > 10000) {
            snprintf(why, wlen, "--interval %llu: wal_writer_delay is 1 to 10000 ms", (unsigned long long)ms);
            return CL_ENGINE_NA;
        }
        SET("synchronous_commit=off\nwal_writer_delay=%llu\n", (unsigned long long)ms);
    } else if (cl_engine_is(cfg, "sync", "group")) {
        SET("synchronous_commit=on\ncommit_delay=%llu\ncommit_siblings=%llu\n",
            (unsigned long long)cl_engine_u64(cfg, "commit-delay"),
            (unsigned long long)cl_engine_u64(cfg, "commit-siblings"));
    } else {
        SET("synchronous_commit=on\ncommit_delay=0\n");
    }
    if (cl_engine_given(cfg, "sync-method")) {
        const char *m = cl_engine_str(cfg, "sync-method");
        SET("wal_sync_method=%s\n", strcmp(m, "dsync") == 0 ? "open_datasync" : m);
    }
    if (cl_engine_given(cfg, "segments"))
        SET("wal_recycle=%s\n", cl_engine_is(cfg, "segments", "recycle") ? "on" : "off");
    if (cl_engine_given(cfg, "segment-init"))
        SET("wal_init_zero=%s\n", cl_engine_is(cfg, "segment-init", "zero") ? "on" : "off");
    uint64_t seg = pg_segment_size(cfg);
    if (cl_engine_given(cfg, "segment-size") && pg_segment_mb(seg) == 0) {
        snprintf(why, wlen, "--segment-size %s: initdb --wal-segsize takes whole MiB, a power of two from 1M to 1G",
                 cl_engine_str(cfg, "segment-size"));
        return CL_ENGINE_NA;
    }
    if (cl_engine_given(cfg, "checkpoint-bytes")) {
        uint64_t mb = cl_engine_u64(cfg, "checkpoint-bytes") >> 20;
        if (mb < 2 * (seg >> 20)) {
            snprintf(why, wlen, "--checkpoint-bytes %s: max_wal_size is at least two WAL segments (%lluM)",
                     cl_engine_str(cfg, "checkpoint-bytes"), (unsigned long long)(2 * (seg >> 20)));
            return CL_ENGINE_NA;
        }
        SET("max_wal_size=%lluMB\n", (unsigned long long)mb);
    }
    if (cl_engine_given(cfg, "cache")) {
        uint64_t kb = cl_engine_u64(cfg, "cache") >> 10;
        if (kb < 128) {
            snprintf(why, wlen, "--cache %s: shared_buffers is at least 128k", cl_engine_str(cfg, "cache"));
            return CL_ENGINE_NA;
        }
        SET("shared_buffers=%llukB\n", (unsigned long long)kb);
    }
    const char *p = cl_engine_str(cfg, "pg-set");
    while (*p) {
        size_t n = strcspn(p, ";");
        SET("%.*s\n", (int)n, p);
        p += n + (p[n] == ';');
    }
#undef SET
    if (o >= len) {
        snprintf(why, wlen, "the settings are longer than %zu bytes", len);
        return CL_ENGINE_NA;
    }
    return 0;
}

static int pg_check(const struct cl_engine_config *cfg, char *why, size_t len)
{
    char s[PG_SETTINGS_MAX];
    return settings_for(cfg, s, sizeof s, why, len);
}

/* ---- the store ---------------------------------------------------------------------- */

struct pconn {
    PGconn *pc;
    pthread_mutex_t mu; /* held from begin to commit or abort: stats may use an idle connection */
    int begun;          /* BEGIN sent */
    int rdonly;
    /* a put not yet sent: the transaction's first statement, sent alone
     * (autocommit) at commit, or after BEGIN when another follows */
    int deferred;
    unsigned char *dk, *dv;
    size_t dkl, dvl, dkcap, dvcap;
    struct pconn *next; /* the store's list of connections */
};

struct pdb {
    struct pg_server srv;
    PGconn *admin;      /* for SHOW and the counters */
    pthread_mutex_t mu; /* admin, and the list of connections */
    struct pconn *conns;
    int force_flush; /* pg_stat_force_next_flush exists (PostgreSQL 15) */
    /* the server's processes' usage as last reported: counts that only
     * grow, though a backend's context switches go with it when it ends */
    struct pg_usage usage;
    /* the segments the checkpoints recycled and removed, summed from the
     * server's log up to log_off: each reading parses only the lines the
     * server wrote since the last (checkpoint_segments) */
    long log_off;
    int64_t ckpt_removed, ckpt_recycled;
};

/* The one store open in this process, for describe (which has only the
 * configuration): its settings as read back. */
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static char open_settings[1024];

static const char *const kv_sql[] = {
    "CREATE TABLE IF NOT EXISTS kv (k bytea PRIMARY KEY, v bytea)",
};

static const char *const prepared[][2] = {
    {"put", "INSERT INTO kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v"},
    {"get", "SELECT v FROM kv WHERE k = $1"},
    /* a read in a transaction that writes locks its row: a read-modify-write
     * loses no update (tpcb), as RocksDB's GetForUpdate */
    {"get_for_update", "SELECT v FROM kv WHERE k = $1 FOR UPDATE"},
    {"del", "DELETE FROM kv WHERE k = $1"},
};

/* The message of a failed result, on one line. */
static void result_err(char *err, const char *what, PGresult *r, PGconn *pc)
{
    const char *m = r ? PQresultErrorMessage(r) : PQerrorMessage(pc);
    char one[200];
    snprintf(one, sizeof one, "%s", m && *m ? m : "failed");
    one[strcspn(one, "\n")] = 0;
    CL_ENGINE_ERRF(err, "%s: %s", what, one);
}

/* 0 when the command ran; else CL_ENGINE_RETRY for a serialisation
 * failure or a deadlock (nothing of the transaction happened), or
 * CL_ENGINE_ERR with err. */
static int exec_ok(PGconn *pc, PGresult *r, const char *what, char *err)
{
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return 0;
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (state && (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0))
        return CL_ENGINE_RETRY;
    result_err(err, what, r, pc);
    return CL_ENGINE_ERR;
}

static int simple(PGconn *pc, const char *sql, char *err)
{
    PGresult *r = PQexec(pc, sql);
    int rc = exec_ok(pc, r, sql, err);
    PQclear(r);
    return rc;
}

/* The server's notices (CREATE TABLE IF NOT EXISTS on a reused store)
 * are not the run's output. */
static void no_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static PGconn *connect_to(struct pdb *d, char *err)
{
    char port[16];
    snprintf(port, sizeof port, "%d", d->srv.port);
    const char *keys[] = {"host", "port", "user", "dbname", "application_name", NULL};
    const char *vals[] = {d->srv.sockdir, port, PG_SUPERUSER, "postgres", "commitlab", NULL};
    PGconn *pc = PQconnectdbParams(keys, vals, 0);
    if (!pc || PQstatus(pc) != CONNECTION_OK) {
        result_err(err, "connect", NULL, pc);
        PQfinish(pc);
        return NULL;
    }
    PQsetNoticeProcessor(pc, no_notice, NULL);
    return pc;
}

/* Read back for every run, whatever it sets: the commit path's settings. */
#define PG_RECORDED                                                                                                    \
    "synchronous_commit=\nfsync=\ncommit_delay=\ncommit_siblings=\nwal_sync_method=\nwal_writer_delay=\n"              \
    "wal_recycle=\nwal_init_zero=\nmax_wal_size=\nshared_buffers=\nwal_buffers=\nwal_segment_size=\n"                  \
    "full_page_writes=\nwal_level=\ncheckpoint_timeout=\nlog_checkpoints=\n"

/* The settings the server runs with, read back (current_setting, as
 * SHOW): the commit path's (PG_RECORDED), then each other name the
 * configuration sets, each once. */
static void read_back(struct pdb *d, const char *settings, char *out, size_t len)
{
    char names[PG_SETTINGS_MAX + 512], seen[PG_SETTINGS_MAX + 512] = "\n";
    size_t o = 0;
    snprintf(names, sizeof names, "%s%s", PG_RECORDED, settings);
    out[0] = 0;
    for (char *p = names; *p;) {
        size_t n = strcspn(p, "\n"), e = strcspn(p, "=");
        char name[128], key[132];
        snprintf(name, sizeof name, "%.*s", (int)(e < n ? e : n), p);
        p += n + (p[n] == '\n');
        for (char *c = name; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        snprintf(key, sizeof key, "\n%s\n", name);
        if (!name[0] || strstr(seen, key))
            continue;
        strncat(seen, key + 1, sizeof seen - strlen(seen) - 1);
        const char *param[1] = {name};
        PGresult *r = PQexecParams(d->admin, "SELECT current_setting($1)", 1, NULL, param, NULL, NULL, 0);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && o < len)
            o += (size_t)snprintf(out + o, len - o, "%s%s=%s", o ? " " : "", name, PQgetvalue(r, 0, 0));
        PQclear(r);
    }
}

static int pg_open_db(struct cl_engine_db *db)
{
    struct pdb *d = calloc(1, sizeof *d);
    char settings[PG_SETTINGS_MAX];
    if (!d) {
        CL_ENGINE_ERRF(db->err, "out of memory");
        return CL_ENGINE_ERR;
    }
    pthread_mutex_init(&d->mu, NULL);
    if (settings_for(db->cfg, settings, sizeof settings, db->err, sizeof db->err)) {
        free(d);
        return CL_ENGINE_NA;
    }
    if (pg_server_start(&d->srv, db->cfg, db->path, settings, db->err, sizeof db->err))
        goto fail;
    if (!(d->admin = connect_to(d, db->err)))
        goto fail;
    for (size_t i = 0; i < sizeof kv_sql / sizeof *kv_sql; i++)
        if (simple(d->admin, kv_sql[i], db->err))
            goto fail;
    d->force_flush = PQserverVersion(d->admin) >= 150000;
    pthread_mutex_lock(&open_mu);
    read_back(d, settings, open_settings, sizeof open_settings);
    pthread_mutex_unlock(&open_mu);
    db->impl = d;
    return CL_ENGINE_OK;
fail:
    PQfinish(d->admin);
    pg_server_stop(&d->srv);
    free(d);
    return CL_ENGINE_ERR;
}

static void pg_close_db(struct cl_engine_db *db)
{
    struct pdb *d = db->impl;
    if (!d)
        return;
    PQfinish(d->admin);
    pg_server_stop(&d->srv);
    pthread_mutex_lock(&open_mu);
    open_settings[0] = 0;
    pthread_mutex_unlock(&open_mu);
    pthread_mutex_destroy(&d->mu);
    free(d);
    db->impl = NULL;
}

static int pg_conn_open(struct cl_engine_conn *c)
{
    struct pdb *d = c->db->impl;
    struct pconn *pc = calloc(1, sizeof *pc);
    if (!pc) {
        CL_ENGINE_ERRF(c->err, "out of memory");
        return CL_ENGINE_ERR;
    }
    pthread_mutex_init(&pc->mu, NULL);
    if (!(pc->pc = connect_to(d, c->err)))
        goto fail;
    for (size_t i = 0; i < sizeof prepared / sizeof *prepared; i++) {
        PGresult *r = PQprepare(pc->pc, prepared[i][0], prepared[i][1], 0, NULL);
        int rc = exec_ok(pc->pc, r, prepared[i][1], c->err);
        PQclear(r);
        if (rc)
            goto fail;
    }
    pthread_mutex_lock(&d->mu);
    pc->next = d->conns;
    d->conns = pc;
    pthread_mutex_unlock(&d->mu);
    c->impl = pc;
    return CL_ENGINE_OK;
fail:
    PQfinish(pc->pc);
    pthread_mutex_destroy(&pc->mu);
    free(pc);
    return CL_ENGINE_ERR;
}

static void pg_conn_close(struct cl_engine_conn *c)
{
    struct pdb *d = c->db->impl;
    struct pconn *pc = c->impl;
    if (!pc)
        return;
    pthread_mutex_lock(&d->mu);
    for (struct pconn **p = &d->conns; *p; p = &(*p)->next)
        if (*p == pc) {
            *p = pc->next;
            break;
        }
    pthread_mutex_unlock(&d->mu);
    PQfinish(pc->pc);
    pthread_mutex_destroy(&pc->mu);
    free(pc->dk);
    free(pc->dv);
    free(pc);
    c->impl = NULL;
}

/* Runs a prepared statement with binary parameters. */
static PGresult *run(struct pconn *pc, const char *name, int n, const void *a, size_t al, const void *b, size_t bl)
{
    const char *vals[2] = {a, b};
    int lens[2] = {(int)al, (int)bl}, fmts[2] = {1, 1};
    return PQexecPrepared(pc->pc, name, n, vals, lens, fmts, 1);
}

static int send_put(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    struct pconn *pc = c->impl;
    PGresult *r = run(pc, "put", 2, k, kl, v, vl);
    int rc = exec_ok(pc->pc, r, "INSERT ... ON CONFLICT", c->err);
    PQclear(r);
    return rc;
}

/* Before a statement that is not the transaction's first: BEGIN, then
 * the put deferred. */
static int open_txn(struct cl_engine_conn *c)
{
    struct pconn *pc = c->impl;
    int rc;
    if (pc->begun)
        return 0;
    if ((rc = simple(pc->pc, pc->rdonly ? "BEGIN READ ONLY" : "BEGIN", c->err)) != 0)
        return rc;
    pc->begun = 1;
    if (pc->deferred) {
        pc->deferred = 0;
        return send_put(c, pc->dk, pc->dkl, pc->dv, pc->dvl);
    }
    return 0;
}

static int pg_begin(struct cl_engine_conn *c, int rdonly)
{
    struct pconn *pc = c->impl;
    pthread_mutex_lock(&pc->mu);
    pc->begun = pc->deferred = 0;
    pc->rdonly = rdonly;
    return CL_ENGINE_OK;
}

static int keep(unsigned char **buf, size_t *cap, const void *p, size_t n)
{
    if (n > *cap) {
        unsigned char *b = realloc(*buf, n);
        if (!b)
            return -1;
        *buf = b;
        *cap = n;
    }
    memcpy(*buf, p, n);
    return 0;
}

static int pg_put(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    struct pconn *pc = c->impl;
    if (!pc->begun && !pc->deferred) { /* the first statement: kept until we know whether it is the only one */
        if (keep(&pc->dk, &pc->dkcap, k, kl) || keep(&pc->dv, &pc->dvcap, v, vl)) {
            CL_ENGINE_ERRF(c->err, "out of memory");
            return CL_ENGINE_ERR;
        }
        pc->dkl = kl;
        pc->dvl = vl;
        pc->deferred = 1;
        return CL_ENGINE_OK;
    }
    int rc = open_txn(c);
    return rc ? rc : send_put(c, k, kl, v, vl);
}

static int pg_get(struct cl_engine_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    struct pconn *pc = c->impl;
    int rc = open_txn(c);
    if (rc)
        return rc;
    PGresult *r = run(pc, pc->rdonly ? "get" : "get_for_update", 1, k, kl, NULL, 0);
    if ((rc = exec_ok(pc->pc, r, "SELECT", c->err)) == 0) {
        if (PQntuples(r) == 0) {
            rc = CL_ENGINE_NOTFOUND;
        } else {
            size_t n = (size_t)PQgetlength(r, 0, 0);
            memcpy(buf, PQgetvalue(r, 0, 0), n < cap ? n : cap);
            *vl = n;
        }
    }
    PQclear(r);
    return rc;
}

static int pg_del(struct cl_engine_conn *c, const void *k, size_t kl)
{
    struct pconn *pc = c->impl;
    int rc = open_txn(c);
    if (rc)
        return rc;
    PGresult *r = run(pc, "del", 1, k, kl, NULL, 0);
    if ((rc = exec_ok(pc->pc, r, "DELETE", c->err)) == 0 && strcmp(PQcmdTuples(r), "0") == 0)
        rc = CL_ENGINE_NOTFOUND;
    PQclear(r);
    return rc;
}

static int pg_commit(struct cl_engine_conn *c)
{
    struct pconn *pc = c->impl;
    int rc = 0;
    if (pc->deferred && !pc->begun) { /* one put: one statement, its own transaction */
        pc->deferred = 0;
        rc = send_put(c, pc->dk, pc->dkl, pc->dv, pc->dvl);
    } else if (pc->begun) {
        rc = simple(pc->pc, "COMMIT", c->err);
        if (rc && PQtransactionStatus(pc->pc) != PQTRANS_IDLE)
            simple(pc->pc, "ROLLBACK", c->err);
    }
    pc->begun = 0;
    pthread_mutex_unlock(&pc->mu);
    return rc;
}

static void pg_abort(struct cl_engine_conn *c)
{
    struct pconn *pc = c->impl;
    char err[CL_ENGINE_ERRLEN];
    if (PQtransactionStatus(pc->pc) != PQTRANS_IDLE)
        simple(pc->pc, "ROLLBACK", err);
    pc->begun = pc->deferred = 0;
    pthread_mutex_unlock(&pc->mu);
}

/* Each idle client's backend flushes its pending statistics (they are
 * otherwise flushed at most once a second, and later when idle):
 * pg_stat_force_next_flush, then the statement's end. */
static void flush_backends(struct pdb *d)
{
    char err[CL_ENGINE_ERRLEN];
    for (struct pconn *pc = d->conns; pc; pc = pc->next) {
        if (pthread_mutex_trylock(&pc->mu) != 0)
            continue; /* in a transaction: its figures at the next reading */
        simple(pc->pc, "SELECT pg_stat_force_next_flush()", err);
        pthread_mutex_unlock(&pc->mu);
    }
    simple(d->admin, "SELECT pg_stat_force_next_flush()", err);
}

/* The WAL segments the server's checkpoints have recycled and removed so
 * far, summed over its log's "checkpoint complete: ... N WAL file(s)
 * added, M removed, K recycled" lines (log_checkpoints, on in every
 * cluster commitlab starts).  A segment a backend creates when it needs
 * one is in no line, so "added" is not a count of new segments and is
 * not reported.  The log is read from where the last reading stopped
 * (it is read once a second in the measured phase, and grows by a line
 * per checkpoint); a line the server has not finished is read next time.
 * d->mu held.  0, or -1 when the log cannot be read. */
static int checkpoint_segments(struct pdb *d)
{
    char log[sizeof d->srv.data + 32];
    snprintf(log, sizeof log, "%s/commitlab-server.log", d->srv.data);
    FILE *f = fopen(log, "r");
    if (!f)
        return -1;
    if (fseek(f, d->log_off, SEEK_SET)) {
        fclose(f);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long long a, m, k;
    while ((n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n') {
        d->log_off += (long)n;
        const char *p = strstr(line, "checkpoint complete:");
        if (!p || !(p = strstr(p, "; ")))
            continue;
        if (sscanf(p, "; %lld WAL file(s) added, %lld removed, %lld recycled", &a, &m, &k) == 3) {
            d->ckpt_removed += m;
            d->ckpt_recycled += k;
        }
    }
    free(line);
    fclose(f);
    return 0;
}

static void pg_stats(struct cl_engine_db *db, struct cl_engine_stats *st)
{
    struct pdb *d = db->impl;
    pthread_mutex_lock(&d->mu);
    if (d->force_flush)
        flush_backends(d);
    PGresult *r =
        PQexec(d->admin, "SELECT w.wal_bytes, w.wal_write, w.wal_sync, b.checkpoints_timed + b.checkpoints_req, "
                         "current_setting('wal_sync_method') IN ('open_sync', 'open_datasync') "
                         "AND current_setting('fsync')::bool "
                         "FROM pg_stat_wal w, pg_stat_bgwriter b");
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        int64_t writes = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
        st->log_bytes = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        if (CL_ENGINE_STATS_HAS(st, log_writes))
            st->log_writes = writes;
        /* a write of an O_SYNC or O_DSYNC log is its sync */
        st->syncs = PQgetvalue(r, 0, 4)[0] == 't' ? writes : strtoll(PQgetvalue(r, 0, 2), NULL, 10);
        st->checkpoints = strtoll(PQgetvalue(r, 0, 3), NULL, 10);
    }
    PQclear(r);
    if (CL_ENGINE_STATS_HAS(st, segments_removed) && checkpoint_segments(d) == 0) {
        st->segments_recycled = d->ckpt_recycled;
        st->segments_removed = d->ckpt_removed;
    }
    pthread_mutex_unlock(&d->mu);
    struct pg_usage u;
    if (CL_ENGINE_STATS_HAS(st, other_nivcsw) && pg_server_usage(&d->srv, &u) == 0) {
        pthread_mutex_lock(&d->mu);
        struct pg_usage *k = &d->usage;
        k->user_us = u.user_us > k->user_us ? u.user_us : k->user_us;
        k->sys_us = u.sys_us > k->sys_us ? u.sys_us : k->sys_us;
        k->nvcsw = u.nvcsw > k->nvcsw ? u.nvcsw : k->nvcsw;
        k->nivcsw = u.nivcsw > k->nivcsw ? u.nivcsw : k->nivcsw;
        st->other_user_us = k->user_us;
        st->other_sys_us = k->sys_us;
        st->other_nvcsw = k->nvcsw;
        st->other_nivcsw = k->nivcsw;
        pthread_mutex_unlock(&d->mu);
    }
}

static void pg_describe(const struct cl_engine_config *cfg, char *buf, size_t len)
{
    char s[PG_SETTINGS_MAX], why[200];
    pthread_mutex_lock(&open_mu);
    if (open_settings[0]) { /* open: what the server runs with */
        snprintf(buf, len, "%s", open_settings);
        pthread_mutex_unlock(&open_mu);
        return;
    }
    pthread_mutex_unlock(&open_mu);
    if (settings_for(cfg, s, sizeof s, why, sizeof why)) {
        snprintf(buf, len, "%s", why);
        return;
    }
    for (char *p = s; *p; p++)
        if (*p == '\n')
            *p = p[1] ? ' ' : 0;
    snprintf(buf, len, "%s", s);
}

static const char *pg_version(void)
{
    static char v[600];
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, pg_server_version_init);
    int n = PQlibVersion();
    snprintf(v, sizeof v, "%s, libpq %d.%d", pg_server_version(), n / 10000, n % 10000);
    return v;
}

const struct cl_engine_plugin bench_plugin_postgres = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "postgres",
    .flags = CL_ENGINE_RMW, /* reads in a write transaction are SELECT ... FOR UPDATE */
    .accepts = pg_accepts,
    .no_why = "no PostgreSQL setting maps to it",
    .notes = "a private server per run (initdb once per command, copied for each run), on a Unix socket in\n"
             "the run's directory, stopped at the run's end; one libpq connection per client; --pg-set for\n"
             "any other setting; counters from pg_stat_wal, CPU of the server's processes included",
    .check = pg_check,
    .describe = pg_describe,
    .open = pg_open_db,
    .close = pg_close_db,
    .conn_open = pg_conn_open,
    .conn_close = pg_conn_close,
    .begin = pg_begin,
    .put = pg_put,
    .get = pg_get,
    .del = pg_del,
    .commit = pg_commit,
    .abort = pg_abort,
    .stats = pg_stats,
    .version = pg_version,
};

#else /* !CL_HAVE_LIBPQ */

const struct cl_engine_plugin bench_plugin_postgres = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "postgres",
    .notes = "not built: libpq was not found; apt-get install postgresql libpq-dev, and rebuild",
};

#endif
