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
 * runs a one-statement script.  With --pipeline N > 1 a connection is in
 * libpq's pipeline mode instead, up to N transactions in flight, each its
 * statements and a sync point (an implicit transaction, committed there),
 * acknowledged when the sync point's result arrives; its results are read
 * by the client's own thread (the section "pipeline mode" below).
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
#include <poll.h>
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
    CL_ENGINE_MAPS("pipeline", NULL,
                   "libpq pipeline mode: up to N transactions in flight per connection, acknowledged when the "
                   "COMMIT's result arrives (each transaction its statements and a sync point: an implicit "
                   "transaction, committed at the sync point, whose result is the commit's; 1: one at a time)",
                   0),
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
    if (cl_engine_u64(cfg, "pipeline") > 1 && cl_engine_is(cfg, "workload", "tpcb")) {
        snprintf(why, len,
                 "--pipeline %s with --workload tpcb: each balance it writes is the one its read just "
                 "returned plus a delta, so a statement cannot be sent before the read before it returns, behind "
                 "every transaction in flight: one transaction at a time, not a pipeline",
                 cl_engine_str(cfg, "pipeline"));
        return CL_ENGINE_NA;
    }
    return settings_for(cfg, s, sizeof s, why, len);
}

/* ---- the store ---------------------------------------------------------------------- */

/* A transaction of a pipelined connection whose sync point's result has
 * not been read yet (pipeline mode, below). */
struct ptxn {
    unsigned stmts;          /* its statements whose results are still to read */
    int sent;                /* a statement of it was sent */
    int synced;              /* its sync point sent: it ends there */
    int blocking;            /* ended by commit or abort, which wait for it (else by commit_async) */
    cl_engine_done_fn *done; /* its acknowledgement (NULL: none) */
    void *arg;
    int rc; /* its first failure: CL_ENGINE_RETRY or CL_ENGINE_ERR, with err */
    char err[CL_ENGINE_ERRLEN];
};

/* The statement whose result the caller waits for in pipeline mode (a
 * get's value, a delete's count): the last one sent. */
struct pwant {
    int del;
    void *buf;
    size_t cap, *vl;
    int rc, got;
};

struct pconn {
    PGconn *pc;
    pthread_mutex_t mu; /* held from begin to commit or abort, and in sync_wait: stats may use an idle connection */
    int begun;          /* BEGIN sent */
    int rdonly;
    /* a put not yet sent: the transaction's first statement, sent alone
     * (autocommit) at commit, or after BEGIN when another follows */
    int deferred;
    unsigned char *dk, *dv;
    size_t dkl, dvl, dkcap, dvcap;
    /* --pipeline N > 1: libpq's pipeline mode, the connection nonblocking.
     * q: the transactions whose results are still to come, oldest first,
     * the open one (not yet synced) last; handed: how many of them
     * commit_async handed over.  need_null: a statement's result was read,
     * the NULL that ends its results not yet.  broken: the connection
     * failed, every later call says so with err. */
    int piped;
    struct ptxn *q;
    size_t qcap, qhead, qn, handed;
    int need_null;
    struct pwant *want;
    int blk_rc; /* the last blocking transaction's end, with blk_err */
    char blk_err[CL_ENGINE_ERRLEN];
    int broken;
    char broken_err[CL_ENGINE_ERRLEN];
    struct pconn *next; /* the store's list of connections */
};

static void p_break(struct pconn *pc, const char *what);

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
    if (cl_engine_u64(c->db->cfg, "pipeline") > 1) {
        if (PQsetnonblocking(pc->pc, 1) || !PQenterPipelineMode(pc->pc)) {
            result_err(c->err, "pipeline mode", NULL, pc->pc);
            goto fail;
        }
        pc->piped = 1;
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
    if (pc->qn) { /* none should be left (commitlab waits for them first): failed, not forgotten */
        if (!pc->broken)
            p_break(pc, "closed");
    }
    PQfinish(pc->pc);
    pthread_mutex_destroy(&pc->mu);
    free(pc->q);
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

/* ---- pipeline mode (--pipeline N > 1) ------------------------------------------------
 *
 * A pipelined connection is in libpq's pipeline mode
 * (https://www.postgresql.org/docs/15/libpq-pipeline-mode.html) for its
 * life, and nonblocking, so that neither side stalls the other on a full
 * socket.  A transaction is its statements, each sent as it comes
 * (PQsendQueryPrepared), then a sync point (PQpipelineSync).  Without a
 * BEGIN the statements up to a sync point are one implicit transaction,
 * which the server commits when it reaches the sync point and before it
 * answers it: the sync point's result (PGRES_PIPELINE_SYNC) is the
 * commit's, and comes once the commit is as durable as
 * synchronous_commit makes it.  So a pipelined transaction of one put is
 * what the blocking path sends for it (one statement, its own
 * transaction) and a longer one has no BEGIN and COMMIT to add: the
 * pipelined and the blocking runs differ in the pipelining alone.  A
 * failed statement aborts the rest up to the sync point (each then
 * PGRES_PIPELINE_ABORTED), and nothing of the transaction happened; an
 * abort sends ROLLBACK before the sync point (in an implicit transaction
 * it rolls back what was sent).
 *
 * The client's own thread reads the results, in the order they come:
 * what has come at each commit_async, and, waiting for them, in
 * sync_wait (the harness calls it when its ring of N tickets is full, and
 * at the measured phase's ends) and for a get or a delete, whose result
 * the caller needs at once and which comes behind every result before it
 * (a flush request makes the server send it before the next sync point).
 * A transaction is acknowledged -- its done called -- when its sync
 * point's result is read.  A serialisation failure or a deadlock in a
 * transaction already handed over fails it on its acknowledgement with
 * CL_ENGINE_RETRY; one known before it is handed over (a get saw it) is
 * returned by commit_async, and commitlab runs that transaction again. */

static struct ptxn *q_at(struct pconn *pc, size_t i)
{
    return &pc->q[(pc->qhead + i) % pc->qcap];
}

/* The open transaction (the last, not yet synced), or NULL. */
static struct ptxn *q_open(struct pconn *pc)
{
    struct ptxn *t = pc->qn ? q_at(pc, pc->qn - 1) : NULL;
    return t && !t->synced ? t : NULL;
}

static int q_push(struct pconn *pc)
{
    if (pc->qn == pc->qcap) {
        size_t cap = pc->qcap ? 2 * pc->qcap : 16;
        struct ptxn *q = malloc(cap * sizeof *q);
        if (!q)
            return -1;
        for (size_t i = 0; i < pc->qn; i++)
            q[i] = *q_at(pc, i);
        free(pc->q);
        pc->q = q;
        pc->qcap = cap;
        pc->qhead = 0;
    }
    memset(q_at(pc, pc->qn++), 0, sizeof *pc->q);
    return 0;
}

/* The oldest transaction read to its end: acknowledged (done), or its end
 * kept for the commit or abort that waits for it. */
static void q_pop(struct pconn *pc)
{
    struct ptxn t = *q_at(pc, 0);
    pc->qhead = (pc->qhead + 1) % pc->qcap;
    pc->qn--;
    if (t.done) {
        pc->handed--;
        t.done(t.arg, t.rc, t.rc ? t.err : NULL);
    } else if (t.blocking) {
        pc->blk_rc = t.rc;
        memcpy(pc->blk_err, t.err, sizeof pc->blk_err);
    }
}

/* The connection failed (what: where it was seen): every transaction
 * still awaiting its results fails, and every later call says so. */
static void p_break(struct pconn *pc, const char *what)
{
    if (!pc->broken) {
        char one[200];
        const char *m = PQerrorMessage(pc->pc);
        snprintf(one, sizeof one, "%s", m && *m ? m : "the connection failed");
        one[strcspn(one, "\n")] = 0;
        CL_ENGINE_ERRF(pc->broken_err, "pipeline: %s: %s", what, one);
        pc->broken = 1;
    }
    for (size_t i = 0; i < pc->qn; i++) {
        struct ptxn *t = q_at(pc, i);
        t->rc = CL_ENGINE_ERR;
        memcpy(t->err, pc->broken_err, sizeof t->err);
    }
    while (pc->qn)
        q_pop(pc);
    if (pc->want) {
        pc->want->rc = CL_ENGINE_ERR;
        pc->want->got = 1;
    }
}

/* A statement of t failed (r): its first failure is the transaction's. */
static void t_fail(struct pconn *pc, struct ptxn *t, PGresult *r)
{
    if (t->rc)
        return;
    ExecStatusType st = PQresultStatus(r);
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    t->rc = state && (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) ? CL_ENGINE_RETRY : CL_ENGINE_ERR;
    if (st == PGRES_PIPELINE_ABORTED)
        CL_ENGINE_ERRF(t->err, "pipeline: a statement was aborted with its transaction");
    else
        result_err(t->err, "pipeline", r, pc->pc);
}

/* The result the caller waits for (pc->want), from r. */
static void p_wanted(struct pconn *pc, struct ptxn *t, PGresult *r)
{
    struct pwant *w = pc->want;
    w->got = 1;
    if (t->rc) {
        w->rc = t->rc;
    } else if (w->del) {
        w->rc = strcmp(PQcmdTuples(r), "0") == 0 ? CL_ENGINE_NOTFOUND : CL_ENGINE_OK;
    } else if (PQntuples(r) == 0) {
        w->rc = CL_ENGINE_NOTFOUND;
    } else {
        size_t n = (size_t)PQgetlength(r, 0, 0);
        memcpy(w->buf, PQgetvalue(r, 0, 0), n < w->cap ? n : w->cap);
        *w->vl = n;
        w->rc = CL_ENGINE_OK;
    }
}

/* Takes every result that has come, in order, without waiting: each
 * statement's (then the NULL that ends it), each sync point's, which
 * ends its transaction.  0, or -1 when the connection failed. */
static int p_take(struct pconn *pc)
{
    while (pc->qn) {
        struct ptxn *t = q_at(pc, 0);
        if (!pc->need_null && !t->synced && !t->stmts)
            return 0; /* the open transaction: nothing of it is due */
        if (PQisBusy(pc->pc)) {
            if (PQstatus(pc->pc) != CONNECTION_BAD)
                return 0;
            p_break(pc, "read");
            return -1;
        }
        PGresult *r = PQgetResult(pc->pc);
        if (pc->need_null) {
            pc->need_null = 0;
            if (!r)
                continue;
            PQclear(r);
            p_break(pc, "a statement with more than one result");
            return -1;
        }
        ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
        if (t->stmts) {
            if (!r) {
                p_break(pc, "a statement's result missing");
                return -1;
            }
            if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
                t_fail(pc, t, r);
            if (--t->stmts == 0 && !t->synced && pc->want)
                p_wanted(pc, t, r); /* the last statement sent: a get's, a delete's */
            PQclear(r);
            pc->need_null = 1;
            continue;
        }
        PQclear(r);
        if (st != PGRES_PIPELINE_SYNC) {
            p_break(pc, "a sync point's result missing");
            return -1;
        }
        q_pop(pc);
    }
    return 0;
}

/* Sends what libpq holds for the server, and reads what has come; with
 * wait, first waits until there is something to read (or, while output
 * remains, room to send it).  0, or -1 when the connection failed. */
static int p_io(struct pconn *pc, int wait)
{
    int f = PQflush(pc->pc);
    if (f < 0) {
        p_break(pc, "send");
        return -1;
    }
    if (wait) {
        struct pollfd pfd = {PQsocket(pc->pc), (short)(POLLIN | (f ? POLLOUT : 0)), 0};
        while (poll(&pfd, 1, -1) < 0)
            if (errno != EINTR) {
                p_break(pc, "poll");
                return -1;
            }
    }
    if (!PQconsumeInput(pc->pc)) {
        p_break(pc, "read");
        return -1;
    }
    return 0;
}

enum p_until { UNTIL_WANT, UNTIL_EMPTY, UNTIL_HANDED };

/* Reads results, waiting for them, until: the wanted one came
 * (UNTIL_WANT), every one did (UNTIL_EMPTY), or at most most of the
 * transactions handed over await theirs (UNTIL_HANDED).  0, or -1 when
 * the connection failed (every transaction then failed with it). */
static int p_wait(struct pconn *pc, enum p_until until, size_t most)
{
    for (;;) {
        if (p_take(pc))
            return -1;
        if (until == UNTIL_WANT ? pc->want->got : until == UNTIL_EMPTY ? pc->qn == 0 : pc->handed <= most)
            return 0;
        if (p_io(pc, 1))
            return -1;
    }
}

/* The connection's failure, in err. */
static int p_broken(struct pconn *pc, char *err)
{
    memcpy(err, pc->broken_err, CL_ENGINE_ERRLEN);
    return CL_ENGINE_ERR;
}

/* Sends a prepared statement of the open transaction. */
static int p_send(struct pconn *pc, const char *name, int n, const void *a, size_t al, const void *b, size_t bl,
                  char *err)
{
    const char *vals[2] = {a, b};
    int lens[2] = {(int)al, (int)bl}, fmts[2] = {1, 1};
    if (pc->broken)
        return p_broken(pc, err);
    if (!PQsendQueryPrepared(pc->pc, name, n, vals, lens, fmts, 1)) {
        p_break(pc, "send");
        return p_broken(pc, err);
    }
    q_open(pc)->stmts++;
    q_open(pc)->sent = 1;
    return 0;
}

/* A get or a delete: sent, then its result read behind every other. */
static int p_ask(struct cl_engine_conn *c, const char *name, const void *k, size_t kl, struct pwant *w)
{
    struct pconn *pc = c->impl;
    int rc = p_send(pc, name, 1, k, kl, NULL, 0, c->err);
    if (rc)
        return rc;
    if (!PQsendFlushRequest(pc->pc)) {
        p_break(pc, "send");
        return p_broken(pc, c->err);
    }
    pc->want = w;
    rc = p_wait(pc, UNTIL_WANT, 0);
    pc->want = NULL;
    if (rc)
        return p_broken(pc, c->err);
    if (w->rc == CL_ENGINE_ERR || w->rc == CL_ENGINE_RETRY)
        memcpy(c->err, q_open(pc) ? q_open(pc)->err : pc->broken_err, CL_ENGINE_ERRLEN);
    return w->rc;
}

/* Ends the open transaction at a sync point: done (commit_async), or
 * blocking (commit, abort). */
static int p_sync(struct pconn *pc, int blocking, cl_engine_done_fn *done, void *arg)
{
    struct ptxn *t = q_open(pc);
    if (!PQpipelineSync(pc->pc)) {
        p_break(pc, "send");
        return -1;
    }
    t->synced = 1;
    t->blocking = blocking;
    t->done = done;
    t->arg = arg;
    pc->handed += done != NULL;
    return 0;
}

static int pg_commit_async(struct cl_engine_conn *c, cl_engine_done_fn *done, void *arg)
{
    struct pconn *pc = c->impl;
    struct ptxn *t = q_open(pc);
    int rc = CL_ENGINE_OK;
    if (pc->broken) {
        rc = p_broken(pc, c->err);
    } else if (t->rc) { /* failed already (a get saw it): ended here, not handed over */
        rc = t->rc;
        memcpy(c->err, t->err, CL_ENGINE_ERRLEN);
        if (p_sync(pc, 0, NULL, NULL) == 0)
            (void)(p_io(pc, 0) || p_take(pc));
    } else if (p_sync(pc, 0, done, arg)) {
        rc = p_broken(pc, c->err); /* (p_break failed it before it was handed over: not acknowledged) */
    } else {
        (void)(p_io(pc, 0) || p_take(pc)); /* what has come: acknowledged now; a failure fails the rest */
    }
    pthread_mutex_unlock(&pc->mu);
    return rc;
}

static int pg_sync_wait(struct cl_engine_conn *c, uint32_t most)
{
    struct pconn *pc = c->impl;
    pthread_mutex_lock(&pc->mu);
    int rc = pc->broken || p_wait(pc, UNTIL_HANDED, most) ? p_broken(pc, c->err) : CL_ENGINE_OK;
    pthread_mutex_unlock(&pc->mu);
    return rc;
}

/* commit, and abort, of a pipelined connection: the open transaction
 * ended at a sync point (abort: after a ROLLBACK), and waited for. */
static int p_end(struct cl_engine_conn *c, int rollback)
{
    struct pconn *pc = c->impl;
    struct ptxn *t = q_open(pc);
    if (pc->broken)
        return p_broken(pc, c->err);
    if (rollback && t->sent) {
        if (!PQsendQueryParams(pc->pc, "ROLLBACK", 0, NULL, NULL, NULL, NULL, 0)) {
            p_break(pc, "send");
            return p_broken(pc, c->err);
        }
        t->stmts++;
    }
    if (p_sync(pc, 1, NULL, NULL) || p_wait(pc, UNTIL_EMPTY, 0))
        return p_broken(pc, c->err);
    if (pc->blk_rc)
        memcpy(c->err, pc->blk_err, CL_ENGINE_ERRLEN);
    return pc->blk_rc;
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
    if (pc->piped && (pc->broken || q_push(pc))) { /* pipelined: the open transaction */
        int rc = pc->broken ? p_broken(pc, c->err) : CL_ENGINE_ERR;
        if (!pc->broken)
            CL_ENGINE_ERRF(c->err, "out of memory");
        pthread_mutex_unlock(&pc->mu);
        return rc;
    }
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
    if (pc->piped)
        return p_send(pc, "put", 2, k, kl, v, vl, c->err);
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
    if (pc->piped) {
        struct pwant w = {.buf = buf, .cap = cap, .vl = vl};
        return p_ask(c, pc->rdonly ? "get" : "get_for_update", k, kl, &w);
    }
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
    if (pc->piped) {
        struct pwant w = {.del = 1};
        return p_ask(c, "del", k, kl, &w);
    }
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
    if (pc->piped) {
        rc = p_end(c, 0);
        pthread_mutex_unlock(&pc->mu);
        return rc;
    }
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
    if (pc->piped)
        (void)p_end(c, 1); /* c->err keeps the failure that made the caller abort */
    else if (PQtransactionStatus(pc->pc) != PQTRANS_IDLE)
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
        if (!pc->piped) {
            simple(pc->pc, "SELECT pg_stat_force_next_flush()", err);
        } else if (!pc->qn && !pc->broken && PQexitPipelineMode(pc->pc)) { /* pipelined, all read */
            simple(pc->pc, "SELECT pg_stat_force_next_flush()", err);
            if (!PQenterPipelineMode(pc->pc))
                p_break(pc, "pipeline mode");
        }
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

/* The server's settings, then how the client sends (pipeline mode). */
static void pg_describe(const struct cl_engine_config *cfg, char *buf, size_t len)
{
    char s[PG_SETTINGS_MAX], why[200];
    pthread_mutex_lock(&open_mu);
    if (open_settings[0]) { /* open: what the server runs with */
        snprintf(buf, len, "%s", open_settings);
        pthread_mutex_unlock(&open_mu);
    } else {
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
    size_t n = strlen(buf);
    if (cl_engine_u64(cfg, "pipeline") > 1 && n < len)
        snprintf(buf + n, len - n, " pipeline=%s(PQenterPipelineMode)", cl_engine_str(cfg, "pipeline"));
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
             "any other setting; counters from pg_stat_wal, CPU of the server's processes included;\n"
             "--pipeline: the client's thread reads the results, at each commit and when N are in flight; a\n"
             "transaction failing after it was handed over (a deadlock, a serialisation failure) fails the run",
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
    .commit_async = pg_commit_async,
    .sync_wait = pg_sync_wait,
};

#else /* !CL_HAVE_LIBPQ */

const struct cl_engine_plugin bench_plugin_postgres = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "postgres",
    .notes = "not built: libpq was not found; apt-get install postgresql libpq-dev, and rebuild",
};

#endif
