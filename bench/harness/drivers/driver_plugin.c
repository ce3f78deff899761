/*
 * driver_plugin.c -- the one adapter from the engine plugin ABI
 * (include/commitlab_engine.h) to the harness's driver table
 * (driver.h), and the loader of plugins from shared libraries.
 *
 * bench_plugin_adapt checks a table -- its ABI version and size, every
 * member it must have, every row of what it accepts against the table of
 * knobs -- and fills a struct bench_driver whose functions call through
 * it.  The built-in peers (LMDB, RocksDB, SQLite, raw) are such tables
 * and are adapted here at start-up, so the path a user's plugin runs
 * through is the one every peer's run takes.
 *
 * bench_plugin_load finds a plugin's file (a path, or a name in
 * --plugin-dir), reads its table first in a child process -- a library
 * that crashes in its constructors or its entry point kills that child,
 * not the command -- and only then loads it into this process.  A plugin
 * is never unloaded: its table and its strings are the driver's.
 *
 * A plugin's own output never reaches the result table: while it loads
 * (in the child and here) and while its open runs (in whatever process
 * opens it) fd 1 is pointed at stderr, and its stdio buffer is flushed
 * there before fd 1 is given back.  A plugin that ends the process while
 * it loads is named, with its status: in the child by the status the
 * child ended with; here, where its constructors run a second time, by a
 * guard that exit() and quick_exit() call (on_exit, at_quick_exit), which
 * says so in one line and ends the command with status 2 before anything
 * has run.  What no guard sees is a plugin that ends this process by
 * _exit(), a raw exit system call or a signal while it loads here, having
 * loaded cleanly in the child: the command then ends as the plugin made
 * it end.  An exit in the open before the first run is caught in that
 * open's child (bench_plugin_try_open).
 *
 * What a plugin is given: a cl_engine_config with every knob of the run
 * by its flag's name and its value as the flag takes it, and, per open
 * store and per connection, a struct of this side's memory whose err
 * the plugin writes; the adapter copies that message (one line) into the
 * harness's, and maps its codes (an unknown one is an error naming it).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "driver.h"
#include "ut_args.h"
#include "ut_file.h"
#include "ut_scratch.h"

#define PLUGIN_MAX_ROWS 512
#define PLUGIN_NAME_MAX 32
#define PLUGIN_VALUE_LEN 160

/* ---- the configuration, as a plugin reads it ------------------------------------ */

struct plug_cfg {
    struct cl_engine_config pub;
    struct cl_engine_knob knobs[K_COUNT];
    char names[K_COUNT][40];
    char values[K_COUNT][PLUGIN_VALUE_LEN];
};

static void make_cfg(const struct bench_config *cfg, struct plug_cfg *pc)
{
    memset(pc, 0, sizeof *pc);
    pc->pub.size = sizeof pc->pub;
    pc->pub.nknobs = (uint32_t)bench_knob_count();
    pc->pub.knobs = pc->knobs;
    pc->pub.sync_durable = cl_sync_policy_is_durable(cfg->sync) == 1;
    for (int k = 0; k < bench_knob_count(); k++) {
        snprintf(pc->names[k], sizeof pc->names[k], "%s", bench_knob_flag((enum bench_knob)k) + 2);
        bench_knob_format(cfg, (enum bench_knob)k, pc->values[k], sizeof pc->values[k]);
        pc->knobs[k] = (struct cl_engine_knob){pc->names[k], pc->values[k], cfg->given[k]};
    }
}

/* ---- the plugin's stdout ------------------------------------------------------------ */

/* Points fd 1 at stderr while a plugin's code runs (its constructors, its
 * entry point, its open), so nothing it prints lands in the result table,
 * which is written to stdout: what stdio holds of ours is flushed first.
 * Returns the saved descriptor for stdout_back, or -1 (nothing moved). */
static int stdout_aside(void)
{
    fflush(stdout);
    int saved = dup(1);
    if (saved >= 0 && dup2(2, 1) < 0) {
        close(saved);
        saved = -1;
    }
    return saved;
}

/* What the plugin left in stdio's buffer goes to stderr too; then fd 1 is
 * stdout again. */
static void stdout_back(int saved)
{
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, 1);
        close(saved);
    }
}

/* ---- the driver's functions: through the table ------------------------------------ */

struct plug_db {
    struct cl_engine_db pub;
    struct plug_cfg cfg;
};

/* Line breaks in s as spaces: every message is one line. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

/* A plugin's message into dst: one line, never empty. */
static void copy_err(char *dst, const char *src, const char *what)
{
    size_t n = strnlen(src, CL_ENGINE_ERRLEN - 1);
    if (!n) {
        snprintf(dst, BENCH_ERRLEN, "%s failed without a message", what);
        return;
    }
    memmove(dst, src, n);
    dst[n] = 0;
    one_line(dst);
}

/* A plugin's code as the harness's; an unknown one is an error. */
static int map_code(int rc, char *err, const char *what)
{
    switch (rc) {
    case CL_ENGINE_OK: case CL_ENGINE_NOTFOUND: case CL_ENGINE_NA: case CL_ENGINE_RETRY: case CL_ENGINE_ERR:
        return rc;
    default:
        snprintf(err, BENCH_ERRLEN, "%s returned %d, not a code of the engine ABI", what, rc);
        return BENCH_ERR;
    }
}

static int pl_open(struct bench_db *db)
{
    const struct cl_engine_plugin *p = db->drv->plugin;
    struct plug_db *pd = calloc(1, sizeof *pd);
    if (!pd) {
        snprintf(db->err, sizeof db->err, "out of memory");
        return BENCH_ERR;
    }
    make_cfg(db->cfg, &pd->cfg);
    pd->pub.size = sizeof pd->pub;
    pd->pub.cfg = &pd->cfg.pub;
    pd->pub.path = db->path;
    int saved = db->drv->plugin_path ? stdout_aside() : -1; /* a loaded plugin's, not a built-in peer's */
    int rc = p->open(&pd->pub);
    if (db->drv->plugin_path)
        stdout_back(saved);
    rc = map_code(rc, db->err, "open");
    if (rc == BENCH_OK) {
        db->impl = pd;
        return BENCH_OK;
    }
    if (rc != BENCH_NA && rc != BENCH_ERR) /* NOTFOUND or RETRY from open: a failure */
        rc = BENCH_ERR;
    if (!db->err[0])
        copy_err(db->err, pd->pub.err, "open");
    free(pd);
    return rc;
}

static void pl_close(struct bench_db *db)
{
    struct plug_db *pd = db->impl;
    if (!pd)
        return;
    db->drv->plugin->close(&pd->pub);
    free(pd);
    db->impl = NULL;
}

/* A connection: the plugin's view of it first (c->impl points at pub),
 * then what the adapter keeps of its transaction. */
struct plug_conn {
    struct cl_engine_conn pub;
    int rdonly; /* the transaction was begun read-only: it ends with commit */
};

static int pl_conn_open(struct bench_conn *c)
{
    struct plug_db *pd = c->db->impl;
    struct plug_conn *pcn = calloc(1, sizeof *pcn);
    struct cl_engine_conn *pc = pcn ? &pcn->pub : NULL;
    if (!pc) {
        snprintf(c->err, sizeof c->err, "out of memory");
        return BENCH_ERR;
    }
    pc->size = sizeof *pc;
    pc->id = c->id;
    pc->db = &pd->pub;
    int rc = map_code(c->db->drv->plugin->conn_open(pc), c->err, "conn_open");
    if (rc == BENCH_OK) {
        c->impl = pc;
        return BENCH_OK;
    }
    copy_err(c->err, pc->err, "conn_open");
    free(pcn);
    return BENCH_ERR;
}

static void pl_conn_close(struct bench_conn *c)
{
    struct cl_engine_conn *pc = c->impl;
    if (!pc)
        return;
    c->db->drv->plugin->conn_close(pc);
    free((struct plug_conn *)pc);
    c->impl = NULL;
}

/* After a call on a connection: the code, and the message of a failure. */
static int conn_rc(struct bench_conn *c, struct cl_engine_conn *pc, int rc, const char *what)
{
    rc = map_code(rc, c->err, what);
    if (rc == BENCH_ERR && c->err[0] == 0)
        copy_err(c->err, pc->err, what);
    else if (rc == BENCH_RETRY || rc == BENCH_NA)
        copy_err(c->err, pc->err, what);
    if (rc == BENCH_NA) /* only open may say n/a */
        rc = BENCH_ERR;
    return rc;
}

static int pl_begin(struct bench_conn *c, int rdonly)
{
    struct cl_engine_conn *pc = c->impl;
    c->err[0] = pc->err[0] = 0;
    ((struct plug_conn *)pc)->rdonly = rdonly;
    return conn_rc(c, pc, c->db->drv->plugin->begin(pc, rdonly), "begin");
}

static int pl_put(struct bench_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    struct cl_engine_conn *pc = c->impl;
    c->err[0] = pc->err[0] = 0;
    int rc = conn_rc(c, pc, c->db->drv->plugin->put(pc, k, kl, v, vl), "put");
    return rc == BENCH_NOTFOUND ? BENCH_OK : rc;
}

static int pl_get(struct bench_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    struct cl_engine_conn *pc = c->impl;
    c->err[0] = pc->err[0] = 0;
    *vl = 0;
    return conn_rc(c, pc, c->db->drv->plugin->get(pc, k, kl, buf, cap, vl), "get");
}

static int pl_del(struct bench_conn *c, const void *k, size_t kl)
{
    struct cl_engine_conn *pc = c->impl;
    c->err[0] = pc->err[0] = 0;
    return conn_rc(c, pc, c->db->drv->plugin->del(pc, k, kl), "del");
}

/* A transaction handed over by commit_async, at its end: the ticket's
 * acknowledgement, with the plugin's message and code as the harness's
 * (RETRY too is a failure here: the transaction cannot be run again in
 * its place, its successors having been handed over behind it). */
static void pl_done(void *arg, int rc, const char *err)
{
    struct bench_ticket *t = arg;
    char msg[BENCH_ERRLEN + 120];
    if (rc == CL_ENGINE_OK) {
        t->err = NULL;
        t->done(t, 0);
        return;
    }
    char one[BENCH_ERRLEN];
    copy_err(one, err ? err : "", "commit_async");
    snprintf(msg, sizeof msg, "%s%s",
             rc == CL_ENGINE_RETRY ? "a pipelined transaction aborted by the store, which "
                                     "cannot be run again in its place: "
                                   : "",
             one);
    t->err = msg;
    t->done(t, rc == CL_ENGINE_ERR || rc == CL_ENGINE_RETRY ? rc : CL_ENGINE_ERR);
}

static int pl_commit(struct bench_conn *c)
{
    struct cl_engine_conn *pc = c->impl;
    const struct cl_engine_plugin *p = c->db->drv->plugin;
    c->err[0] = pc->err[0] = 0;
    if (c->ticket && p->commit_async && !((struct plug_conn *)pc)->rdonly) {
        int rc = conn_rc(c, pc, p->commit_async(pc, pl_done, c->ticket), "commit_async");
        if (rc == BENCH_OK)
            c->ticket = NULL; /* handed over: pl_done acknowledges it */
        return rc == BENCH_NOTFOUND ? BENCH_ERR : rc;
    }
    int rc = conn_rc(c, pc, p->commit(pc), "commit");
    return rc == BENCH_NOTFOUND ? BENCH_ERR : rc;
}

static int pl_sync_wait(struct bench_conn *c)
{
    struct cl_engine_conn *pc = c->impl;
    c->err[0] = pc->err[0] = 0;
    return conn_rc(c, pc, c->db->drv->plugin->sync_wait(pc, 0), "sync_wait") ? BENCH_ERR : BENCH_OK;
}

static int pl_ack_wait(struct bench_conn *c, unsigned most)
{
    struct cl_engine_conn *pc = c->impl;
    c->err[0] = pc->err[0] = 0;
    return conn_rc(c, pc, c->db->drv->plugin->sync_wait(pc, most), "sync_wait") ? BENCH_ERR : BENCH_OK;
}

static void pl_abort(struct bench_conn *c)
{
    struct cl_engine_conn *pc = c->impl;
    c->db->drv->plugin->abort(pc);
}

static void pl_stats(struct bench_db *db, struct bench_engine_stats *st)
{
    struct plug_db *pd = db->impl;
    const struct cl_engine_plugin *p = db->drv->plugin;
    memset(st, 0xff, sizeof *st);
    if (!p->stats || !pd)
        return;
    struct cl_engine_stats s;
    memset(&s, 0xff, sizeof s);
    s.size = sizeof s;
    s.reserved0 = 0;
    p->stats(&pd->pub, &s);
    st->commits = s.commits;
    st->syncs = s.syncs;
    st->wal_bytes = s.log_bytes;
    st->data_bytes = s.data_bytes;
    st->checkpoints = s.checkpoints;
    st->checkpoint_pause_us = s.checkpoint_pause_us;
    st->writes_by_self = s.writes_by_self;
    st->writes_by_leader = s.writes_by_leader;
    st->log_writes = s.log_writes;
    st->other_user_us = s.other_user_us;
    st->other_sys_us = s.other_sys_us;
    st->other_nvcsw = s.other_nvcsw;
    st->other_nivcsw = s.other_nivcsw;
    st->segments_recycled = s.segments_recycled;
    st->segments_removed = s.segments_removed;
}

static int pl_check(const struct bench_driver *d, const struct bench_config *cfg, char *why, size_t len)
{
    const struct cl_engine_plugin *p = d->plugin;
    if (strcmp(cfg->workload, "tpcb") == 0 && !(p->flags & CL_ENGINE_RMW)) {
        snprintf(why, len, "--workload tpcb: %s declares no read-modify-write transactions (CL_ENGINE_RMW), which "
                           "tpcb needs", d->name);
        return BENCH_NA;
    }
    if (!p->check)
        return 0;
    struct plug_cfg *pc = malloc(sizeof *pc);
    char w[BENCH_ERRLEN] = "";
    if (!pc) {
        snprintf(why, len, "out of memory");
        return BENCH_NA;
    }
    make_cfg(cfg, pc);
    int rc = p->check(&pc->pub, w, sizeof w);
    free(pc);
    if (rc == 0)
        return 0;
    w[sizeof w - 1] = 0;
    one_line(w);
    snprintf(why, len, "%s", w[0] ? w : "its check refused this configuration without a reason");
    return BENCH_NA;
}

static void pl_describe(const struct bench_driver *d, const struct bench_config *cfg, char *buf, size_t len)
{
    const struct cl_engine_plugin *p = d->plugin;
    buf[0] = 0;
    if (p->describe) {
        struct plug_cfg *pc = malloc(sizeof *pc);
        if (pc) {
            make_cfg(cfg, pc);
            p->describe(&pc->pub, buf, len);
            buf[len - 1] = 0;
            free(pc);
        }
    }
    one_line(buf);
    if (!buf[0] && d->plugin_path) { /* a plugin that describes nothing: which file ran */
        const char *base = strrchr(d->plugin_path, '/');
        snprintf(buf, len, "plugin %s", base ? base + 1 : d->plugin_path);
    }
}

static const char *pl_version(const struct bench_driver *d)
{
    return d->plugin->version ? d->plugin->version() : NULL;
}

/* ---- checking a table --------------------------------------------------------------- */

static int name_ok(const char *s)
{
    size_t n = strnlen(s, PLUGIN_NAME_MAX + 1);
    if (n == 0 || n > PLUGIN_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
            return 0;
    return 1;
}

static int all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

/* The rows of p as the harness's, checked; NULL with err. */
static struct bench_accept *adapt_rows(const struct cl_engine_plugin *p, char *err, size_t len)
{
    size_t n = 0;
    int syncs = 0, pipes = 0, pipe_maps = 0;
    if (!p->accepts) {
        snprintf(err, len, "accepts is NULL: it says nothing of --sync, so no run could use it");
        return NULL;
    }
    while (n < PLUGIN_MAX_ROWS && p->accepts[n].knob)
        n++;
    if (n == PLUGIN_MAX_ROWS) {
        snprintf(err, len, "accepts has no end row (knob NULL) within %d rows", PLUGIN_MAX_ROWS);
        return NULL;
    }
    struct bench_accept *rows = calloc(n + 2, sizeof *rows); /* and, maybe, --pipeline's */
    if (!rows) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const struct cl_engine_accept *a = &p->accepts[i];
        char flag[64];
        snprintf(flag, sizeof flag, "--%.50s", a->knob);
        enum bench_knob k = bench_knob_by_flag(flag);
        const char *bad = NULL;
        if (k == K_COUNT)
            bad = "is not a knob of this commitlab";
        else if (!(bench_knob(k)->flags & KF_ENGINE))
            bad = "is not a knob an engine maps (the harness runs it)";
        else if (a->value && bench_knob_check(k, a->value) != 0)
            bad = "names a value the knob does not accept";
        else if (!a->maps && !a->why)
            bad = "neither maps it nor says why not";
        else if (a->survives & ~(CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER))
            bad = "claims survival bits this commitlab does not know";
        else if (a->survives && (!a->maps || (k != K_SYNC && !a->value)))
            bad = "claims what commits survive, which only an accepting --sync row, or an accepting row for one "
                  "value of another knob (a cap), may";
        else if (k == K_SYNC && a->maps && !a->value)
            bad = "accepts every --sync value: name each policy, with what its commits survive";
        else if (a->reserved)
            bad = "has a reserved member that is not zero";
        if (bad) {
            snprintf(err, len, "its row %zu (%s%s%.60s) %s", i + 1, flag, a->value ? " " : "", a->value ? a->value : "",
                     bad);
            free(rows);
            return NULL;
        }
        syncs += k == K_SYNC && a->maps;
        pipes += k == K_PIPELINE;
        pipe_maps += k == K_PIPELINE && a->maps;
        rows[i] = (struct bench_accept){k, a->value, a->maps, a->why, a->survives};
    }
    if (!syncs) {
        snprintf(err, len, "accepts no --sync value, so no run could use it");
        free(rows);
        return NULL;
    }
    if (pipe_maps && !p->commit_async) {
        snprintf(err, len, "accepts --pipeline but has no commit_async and sync_wait to pipeline with");
        free(rows);
        return NULL;
    }
    if (!pipes && !p->commit_async) /* a table without them (one built before them): said so, by name */
        rows[n++] = (struct bench_accept){K_PIPELINE, NULL, NULL,
                                          "its engine table has no commit_async: one blocking commit at a time", 0};
    rows[n].knob = K_COUNT;
    return rows;
}

int bench_plugin_adapt(const struct cl_engine_plugin *p, int loaded, struct bench_driver *d, char *err, size_t len)
{
    if (!p) {
        snprintf(err, len, "its entry point returned NULL, not a table");
        return -1;
    }
    if (p->abi_version != CL_ENGINE_ABI_VERSION) {
        snprintf(err, len, "engine ABI version %u; this commitlab reads version %u (rebuild it against this "
                           "commitlab's commitlab_engine.h)", p->abi_version, CL_ENGINE_ABI_VERSION);
        return -1;
    }
    if (p->size < sizeof *p) {
        snprintf(err, len, "its table is %u bytes; ABI version %u's is %zu (built against another "
                           "commitlab_engine.h?)", p->size, CL_ENGINE_ABI_VERSION, sizeof *p);
        return -1;
    }
    if (p->size > sizeof *p && (p->size > 65536 || !all_zero((const char *)p + sizeof *p, p->size - sizeof *p))) {
        snprintf(err, len, "its table is %u bytes, with members beyond the %zu of ABI version %u that this "
                           "commitlab does not know", p->size, sizeof *p, CL_ENGINE_ABI_VERSION);
        return -1;
    }
    if (!all_zero(p->reserved, sizeof p->reserved)) {
        snprintf(err, len, "its table's reserved members are not NULL");
        return -1;
    }
    for (size_t i = 0; p->shared_memory && p->shared_memory[i]; i++)
        if (!p->shared_memory[i][0] || strchr(p->shared_memory[i], '/')) {
            snprintf(err, len, "its shared_memory[%zu] is not the pattern of a file's name", i);
            return -1;
        }
    if (!p->name || !name_ok(p->name)) {
        snprintf(err, len, "its name must be 1 to %d of a-z, 0-9, '_' and '-'", PLUGIN_NAME_MAX);
        return -1;
    }
    if (loaded) {
        for (size_t i = 0; i < bench_ndrivers; i++)
            if (strcmp(bench_drivers[i]->name, p->name) == 0) {
                snprintf(err, len, "its name '%s' is a built-in engine's", p->name);
                return -1;
            }
        if (strcmp(p->name, "plugin") == 0) {
            snprintf(err, len, "its name may not be 'plugin'");
            return -1;
        }
    }
    if (p->flags & ~(uint64_t)(CL_ENGINE_RMW | CL_ENGINE_KEEPS_NO_DATA)) {
        snprintf(err, len, "flags 0x%llx this commitlab does not know", (unsigned long long)p->flags);
        return -1;
    }
    static const char *const fn_names[] = {"open", "close", "conn_open", "conn_close", "begin",
                                           "put",  "get",   "del",       "commit",     "abort"};
    const void *fns[] = {(const void *)p->open,   (const void *)p->close,  (const void *)p->conn_open,
                         (const void *)p->conn_close, (const void *)p->begin, (const void *)p->put,
                         (const void *)p->get,    (const void *)p->del,    (const void *)p->commit,
                         (const void *)p->abort};
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
        if (!fns[i]) {
            snprintf(err, len, "its table has no %s", fn_names[i]);
            return -1;
        }
    if (!p->commit_async != !p->sync_wait) {
        snprintf(err, len, "its table has %s without %s: pipelining needs both",
                 p->commit_async ? "commit_async" : "sync_wait", p->commit_async ? "sync_wait" : "commit_async");
        return -1;
    }
    struct bench_accept *rows = adapt_rows(p, err, len);
    if (!rows)
        return -1;
    *d = (struct bench_driver){
        .name = p->name,
        .built = 1,
        .accepts = rows,
        .no_why = p->no_why,
        .notes = p->notes,
        .keeps_no_data = (p->flags & CL_ENGINE_KEEPS_NO_DATA) != 0,
        .check = pl_check,
        .describe = pl_describe,
        .open = pl_open,
        .close = pl_close,
        .conn_open = pl_conn_open,
        .conn_close = pl_conn_close,
        .begin = pl_begin,
        .put = pl_put,
        .get = pl_get,
        .del = pl_del,
        .commit = pl_commit,
        .abort = pl_abort,
        .stats = pl_stats,
        .sync_wait = p->commit_async ? pl_sync_wait : NULL,
        .ack_wait = p->commit_async ? pl_ack_wait : NULL,
        .version = pl_version,
        .plugin = p,
    };
    return 0;
}

unsigned bench_engine_survives(const struct bench_driver *d, enum cl_sync_policy sync)
{
    if (!d->plugin)
        return CL_ENGINE_SURVIVES_KILL | (cl_sync_policy_is_durable(sync) == 1 ? CL_ENGINE_SURVIVES_POWER : 0);
    const struct bench_knob_def *k = bench_knob(K_SYNC); /* a plugin's rows name the policy by its word */
    if ((unsigned)sync < k->lib->min || (unsigned)sync > k->lib->max)
        return 0;
    const struct bench_accept *a = bench_driver_accept(d, K_SYNC, k->lib->names[sync]);
    return a && a->maps ? a->survives : 0;
}

/* 1 when the comma set set has the word w. */
static int set_has(const char *set, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = set; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, w, n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

unsigned bench_engine_claims(const struct bench_driver *d, const struct bench_config *cfg)
{
    unsigned s = bench_engine_survives(d, cfg->sync);
    for (const struct bench_accept *a = d->accepts; a && a->knob != K_COUNT; a++) {
        char v[200];
        if (a->knob == K_SYNC || !a->value || !a->survives || !cfg->given[a->knob])
            continue;
        bench_knob_format(cfg, a->knob, v, sizeof v);
        if (bench_knob(a->knob)->type == KT_SET ? set_has(v, a->value) : strcmp(v, a->value) == 0)
            s &= a->survives;
    }
    return s;
}

/* ---- loading ------------------------------------------------------------------------- */

static const struct bench_driver **loaded;
static size_t nloaded;


size_t bench_plugins_loaded(const struct bench_driver *const **out)
{
    *out = loaded;
    return nloaded;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* The file spec names: a path (it has a '/' or ends in .so), or NAME as
 * DIR/NAME.so, then DIR/commitlab-NAME.so (a name that cannot clash with
 * the store's own library, libNAME.so), then DIR/libNAME.so. */
static int resolve(const char *spec, const char *dir, char *path, size_t plen, char *err, size_t len)
{
    const char *name = spec + 7;
    char cand[PATH_MAX + 16];
    struct stat st;
    if (!*name) {
        snprintf(err, len, "--engine plugin: needs the path of a .so, or a name with --plugin-dir");
        return -1;
    }
    if (strchr(name, '/') || ends_with(name, ".so")) {
        snprintf(cand, sizeof cand, "%s%s", strchr(name, '/') ? "" : "./", name);
    } else {
        if (!dir) {
            snprintf(err, len, "--engine %.200s: a name needs --plugin-dir DIR (or give the path of the .so)", spec);
            return -1;
        }
        static const char *const forms[] = {"%.2000s/%.200s.so", "%.2000s/commitlab-%.200s.so", "%.2000s/lib%.200s.so"};
        size_t f = 0;
        for (; f < sizeof forms / sizeof *forms; f++) {
            snprintf(cand, sizeof cand, forms[f], dir, name);
            if (stat(cand, &st) == 0)
                break;
        }
        if (f == sizeof forms / sizeof *forms) {
            snprintf(err, len, "--engine %.200s: none of %.200s/%.60s.so, commitlab-%.60s.so or lib%.60s.so exists",
                     spec, dir, name, name, name);
            return -1;
        }
    }
    if (stat(cand, &st) != 0) {
        snprintf(err, len, "--engine %.200s: %.300s: %s", spec, cand, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, len, "--engine %.200s: %.300s is not a file", spec, cand);
        return -1;
    }
    if (!realpath(cand, path) || strlen(path) >= plen) {
        snprintf(err, len, "--engine %.200s: %.300s: %s", spec, cand, strerror(errno));
        return -1;
    }
    return 0;
}

/* The guard of a load into this process (bench_plugin_load): while it is
 * armed, an exit() or quick_exit() -- the plugin's, from a constructor or
 * its entry point -- ends the command here with one line and status 2,
 * not with the plugin's status and nothing said.  Registered once, with
 * the first load; inherited by every child, where it is never armed. */
static struct {
    volatile int armed;
    const char *cmd, *spec, *path;
} load_guard;

static void guard_says(const char *what)
{
    fflush(stdout); /* the plugin's own words, to stderr (stdout_aside) */
    fprintf(stderr, "commitlab %s: --engine %.200s: %.300s: it %s during its load into commitlab (its load in a "
                    "child process had passed), so nothing was run\n", load_guard.cmd, load_guard.spec,
            load_guard.path, what);
}

static void guard_exit(int status, void *arg)
{
    (void)arg;
    if (!load_guard.armed)
        return;
    char what[64];
    snprintf(what, sizeof what, "exited (status %d)", status);
    guard_says(what);
    _exit(UT_EXIT_USAGE);
}

static void guard_quick_exit(void)
{
    if (!load_guard.armed)
        return;
    guard_says("called quick_exit()");
    _exit(UT_EXIT_USAGE);
}

static void guard_arm(const char *cmd, const char *spec, const char *path)
{
    static int registered;
    if (!registered) {
        on_exit(guard_exit, NULL);
        at_quick_exit(guard_quick_exit);
        registered = 1;
    }
    load_guard.cmd = cmd;
    load_guard.spec = spec;
    load_guard.path = path;
    load_guard.armed = 1;
}

/* Opens path and adapts its table: 0, or -1 with the reason (no prefix).
 * The plugin's constructors and its entry point print to stderr. */
static int open_table(const char *path, struct bench_driver *d, void **handle, char *err, size_t len)
{
    int saved = stdout_aside();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const struct cl_engine_plugin *table = NULL;
    void *sym = NULL;
    if (h) {
        dlerror();
        sym = dlsym(h, CL_ENGINE_ENTRY_POINT);
        if (sym) {
            cl_engine_plugin_fn *fn;
            memcpy(&fn, &sym, sizeof fn); /* a data pointer to a function pointer, as dlsym's users do */
            table = fn();
        }
    }
    stdout_back(saved);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, len, "not a shared library this process can load (%.300s)", e ? e : "dlopen failed");
        return -1;
    }
    if (!sym) {
        snprintf(err, len, "no entry point %s(): not a commitlab engine plugin", CL_ENGINE_ENTRY_POINT);
        dlclose(h);
        return -1;
    }
    if (bench_plugin_adapt(table, 1, d, err, len)) {
        dlclose(h);
        return -1;
    }
    *handle = h;
    return 0;
}

/* Reads path's table in a child: 0, or -1 with the reason. */
static int probe(const char *path, char *err, size_t len)
{
    int fds[2];
    if (pipe(fds)) {
        snprintf(err, len, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, len, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        char msg[BENCH_ERRLEN + 200] = "";
        struct bench_driver d;
        void *h;
        close(fds[0]);
        if (open_table(path, &d, &h, msg, sizeof msg) == 0)
            msg[0] = 0;
        ssize_t w = write(fds[1], msg, strlen(msg) + 1);
        _exit(w > 0 ? 0 : 1);
    }
    close(fds[1]);
    char msg[BENCH_ERRLEN + 200];
    size_t got = ut_read_full(fds[0], msg, sizeof msg - 1);
    msg[got] = 0;
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(st)) {
        snprintf(err, len, "loading it and reading its table killed the process with signal %d (%s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
        return -1;
    }
    if (got == 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, len, "it exited (status %d) during its load, before its table was read",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return -1;
    }
    if (msg[0]) {
        snprintf(err, len, "%s", msg);
        return -1;
    }
    return 0;
}

/* What the child of bench_plugin_try_open sends back. */
struct try_open_result {
    int rc;
    char err[BENCH_ERRLEN];
};

int bench_plugin_try_open(const struct bench_driver *d, const struct bench_config *cfg, const char *path,
                          const char *owner, char *err, size_t len)
{
    int mrc = ut_scratch_make(path, owner);
    if (mrc) {
        snprintf(err, len, "%.300s: %s", path,
                 mrc == -EEXIST ? "exists and was not made for this open: nothing was removed" : strerror(-mrc));
        return -1;
    }
    int fds[2];
    if (pipe(fds)) {
        snprintf(err, len, "pipe: %s", strerror(errno));
        ut_scratch_remove(path);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    int fork_errno = errno;
    if (pid == 0) {
        struct try_open_result r;
        struct bench_db db = {.drv = d, .cfg = cfg};
        close(fds[0]);
        memset(&r, 0, sizeof r);
        snprintf(db.path, sizeof db.path, "%s", path);
        r.rc = d->open(&db);
        if (r.rc != BENCH_OK)
            memcpy(r.err, db.err, sizeof r.err);
        /* the result once open has returned, then a byte once close has:
         * the parent tells an exit in either from a clean end */
        int ok = write(fds[1], &r, sizeof r) == (ssize_t)sizeof r;
        if (r.rc == BENCH_OK)
            d->close(&db);
        ok = ok && write(fds[1], "c", 1) == 1;
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    struct try_open_result r;
    char closed = 0;
    size_t got = pid > 0 ? ut_read_full(fds[0], &r, sizeof r) : 0;
    int whole = got == sizeof r && ut_read_full(fds[0], &closed, 1) == 1;
    close(fds[0]);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    ut_scratch_remove(path);
    if (pid < 0) {
        snprintf(err, len, "fork: %s", strerror(fork_errno));
        return -1;
    }
    if (WIFSIGNALED(st)) {
        snprintf(err, len, "opening a fresh store killed its process with signal %d (%s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
        return -1;
    }
    if (!whole || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, len, "it exited (status %d) during its %s of a fresh store", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                 got != sizeof r ? "open" : "close");
        return -1;
    }
    if (r.rc == BENCH_OK || r.rc == BENCH_NA) /* n/a: that run says so */
        return 0;
    r.err[sizeof r.err - 1] = 0;
    snprintf(err, len, "%s", r.err);
    return -1;
}

const struct bench_driver *bench_plugin_load(const char *cmd, const char *spec, const char *dir, char *err,
                                             size_t len)
{
    char path[PATH_MAX], why[BENCH_ERRLEN + 200];
    if (!bench_engine_is_plugin(spec)) {
        snprintf(err, len, "--engine %.200s: not a plugin (plugin:PATH.so or plugin:NAME)", spec);
        return NULL;
    }
    if (resolve(spec, dir, path, sizeof path, err, len))
        return NULL;
    for (size_t i = 0; i < nloaded; i++)
        if (strcmp(loaded[i]->plugin_path, path) == 0)
            return loaded[i];
    struct bench_driver *d = calloc(1, sizeof *d);
    char *p = strdup(path);
    const struct bench_driver **nl = realloc(loaded, (nloaded + 1) * sizeof *nl);
    void *h = NULL;
    if (!d || !p || !nl) {
        free(d);
        free(p);
        snprintf(err, len, "out of memory");
        return NULL;
    }
    loaded = nl;
    int bad = probe(path, why, sizeof why);
    if (!bad) {
        guard_arm(cmd, spec, path);
        bad = open_table(path, d, &h, why, sizeof why);
        load_guard.armed = 0;
    }
    if (bad) {
        snprintf(err, len, "--engine %.200s: %.300s: %s", spec, path, why);
        free(d);
        free(p);
        return NULL;
    }
    for (size_t i = 0; i < nloaded; i++)
        if (strcmp(loaded[i]->name, d->name) == 0) {
            snprintf(err, len, "--engine %.200s: its engine name '%s' is that of %.300s, loaded already", spec, d->name,
                     loaded[i]->plugin_path);
            free((void *)d->accepts);
            free(d);
            free(p);
            return NULL; /* the library stays loaded: its constructors ran */
        }
    d->plugin_path = p;
    d->isolate = 1;
    loaded[nloaded++] = d;
    return d;
}

void bench_plugin_load_dir(const char *cmd, const char *dir, FILE *warn)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        fprintf(warn, "--plugin-dir %s: %s\n", dir, strerror(errno));
        return;
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        if (!ends_with(e->d_name, ".so"))
            continue;
        char **nn = realloc(names, (n + 1) * sizeof *nn);
        if (!nn)
            break;
        names = nn;
        if (asprintf(&names[n], "plugin:%s/%s", dir, e->d_name) < 0)
            break;
        n++;
    }
    closedir(dp);
    /* in the order of their names, so that the list is the same each time */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        char err[BENCH_ERRLEN + 600];
        if (!bench_plugin_load(cmd, names[i], dir, err, sizeof err))
            fprintf(warn, "%s\n", err);
        free(names[i]);
    }
    free(names);
}

void bench_cli_load_plugins(const char *cmd, struct bench_cli *c)
{
    struct knob_values *ev = &c->vals[K_ENGINE];
    for (size_t j = 0; j < ev->n; j++) {
        char err[BENCH_ERRLEN + 800];
        if (!bench_engine_is_plugin(ev->v[j]))
            continue;
        const struct bench_driver *d = bench_plugin_load(cmd, ev->v[j], c->plugin_dir, err, sizeof err);
        if (!d)
            ut_usage_error(cmd, "%s", err);
        for (size_t e = 0; e < j; e++)
            if (strcmp(ev->v[e], d->name) == 0)
                ut_usage_error(cmd, "--engine: '%s' names one engine twice ('%s' is the plugin %s, named before)",
                               c->given_as[K_ENGINE] ? c->given_as[K_ENGINE] : "", ev->v[j], d->name);
        char *name = strdup(d->name);
        if (!name)
            ut_usage_error(cmd, "out of memory");
        /* the runs point at the list's strings (bench_cli_parse) */
        for (size_t i = 0; i < c->n; i++)
            if (c->cfgs[i].engine == ev->v[j])
                c->cfgs[i].engine = name;
        if (c->base.engine == ev->v[j])
            c->base.engine = name;
        free(ev->v[j]);
        ev->v[j] = name;
    }
}

int bench_plugin_untried(const struct bench_plugin_trial *t, const struct bench_driver *d)
{
    if (!d || !d->isolate)
        return 0;
    for (size_t k = 0; k < t->n; k++)
        if (t->tried[k] == d)
            return 0;
    return 1;
}

int bench_plugin_try_first(struct bench_plugin_trial *t, const struct bench_driver *d,
                           const struct bench_config *cfg, const char *path, const char *cmd)
{
    char why[BENCH_ERRLEN + 400];
    if (t->n < sizeof t->tried / sizeof *t->tried)
        t->tried[t->n++] = d; /* more plugins than that are each tried at every configuration: never skipped */
    if (bench_plugin_try_open(d, cfg, path, cmd, why, sizeof why) == 0)
        return 0;
    fprintf(stderr, "commitlab %s: --engine plugin:%s: the plugin %s could not open a fresh store, so nothing was "
                    "run: %s\n", cmd, d->plugin_path, d->name, why);
    return 2;
}
