/*
 * driver_commitlab.c -- the benchmark driver for commitlab's own engine,
 * through its public API (include/commitlab.h) only.  Every knob that is
 * an option of the library sets the field of its name (cl_option_set,
 * bench_commitlab_options; --list-engines prints each mapping); a policy or option the library does not build, or that
 * this kernel refuses (io_uring, RWF_DSYNC, O_DIRECT), makes cl_open
 * return CL_ENOTSUP, which the run reports as n/a with the library's own
 * reason (cl_error_detail).  Any other failure of cl_open is the run's
 * error, with that reason too: the option out of range, the file refused,
 * the process holding the database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commitlab.h"
#include "driver.h"

/* Every knob that is an option of the library (.option, bench_knobs.h)
 * set by its name, as the library's table says (cl_option_set): no knob
 * has a line of its own here, and the values were read from their words
 * once, when the command line was. */
int bench_commitlab_options(const struct bench_config *cfg, struct cl_options *o, char *why, size_t len)
{
    cl_options_init(o);
    for (int i = 0; i < bench_knob_count(); i++) {
        enum bench_knob k = (enum bench_knob)i;
        const struct bench_knob_def *d = bench_knob(k);
        if (!d->lib)
            continue;
        int rc = cl_option_set(o, sizeof *o, d->lib->name, bench_knob_int(cfg, k));
        if (rc) {
            snprintf(why, len, "%s: %s", d->flag, cl_error_detail());
            return BENCH_ERR;
        }
    }
    return 0;
}

/* What commitlab does with a knob beyond setting the option of its name:
 * every option of the library is mapped by its name (maps_options:
 * "--elr -> cl_options.elr"), these rows say more, and --pipeline is no
 * option. */
static const struct bench_accept cl_accepts[] = {
    {K_SYNC, NULL, "cl_options.sync (a policy this libcommitlab does not build is n/a: cl_open says CL_ENOTSUP)", NULL},
    {K_NO_FINAL_CHECKPOINT, NULL,
     "cl_options.no_final_checkpoint (cl_close syncs the log and leaves it for the next "
     "open to recover)",
     NULL},
    {K_PIPELINE, NULL, "cl_commit_async_timed, at most N awaiting durability per client (1: cl_commit)", NULL},
    {K_SYNC_LATENCY, NULL, "cl_options.sync_latency_us (the library's latency layer, its io_uring syncs included)",
     NULL},
    {K_COUNT, NULL, NULL, NULL},
};

static void cl_describe(const struct bench_driver *d, const struct bench_config *cfg, char *buf, size_t len)
{
    (void)d;
    int n = snprintf(buf, len, "sync=%s method=%s elr=%s segments=%s", bench_knob_word(cfg, K_SYNC),
                     bench_knob_word(cfg, K_SYNC_METHOD), cfg->elr ? "on" : "off", bench_knob_word(cfg, K_SEGMENTS));
    if (n > 0 && (size_t)n < len && cfg->segments == CL_SEGMENTS_RECYCLE)
        n += snprintf(buf + n, len - (size_t)n, "(max %u%s)", cfg->recycle_max, cfg->cold_recycle ? ", cold" : "");
    if (n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " init=%s", bench_knob_word(cfg, K_SEGMENT_INIT));
    if (n > 0 && (size_t)n < len && cfg->prealloc)
        n += snprintf(buf + n, len - (size_t)n, " prealloc=%u", cfg->prealloc);
    if (n > 0 && (size_t)n < len && cfg->max_batch)
        n += snprintf(buf + n, len - (size_t)n, " max_batch=%llu", (unsigned long long)cfg->max_batch);
    if (n > 0 && (size_t)n < len && cfg->uring_sync != CL_URING_SYNC_FSYNC && cfg->sync == CL_SYNC_URING)
        n += snprintf(buf + n, len - (size_t)n, " uring_sync=%s", bench_knob_word(cfg, K_URING_SYNC));
    if (n > 0 && (size_t)n < len && cfg->pipeline > 1)
        n += snprintf(buf + n, len - (size_t)n, " pipeline=%u(cl_commit_async)", cfg->pipeline);
    if (n > 0 && (size_t)n < len && cfg->flusher_spin_us)
        n += snprintf(buf + n, len - (size_t)n, " spin=%uus", cfg->flusher_spin_us);
    if (n > 0 && (size_t)n < len && cfg->wait != CL_WAIT_BLOCK)
        n += snprintf(buf + n, len - (size_t)n, " wait=%s", bench_knob_word(cfg, K_WAIT));
    if (n > 0 && (size_t)n < len && cfg->wait == CL_WAIT_ADAPTIVE)
        n += snprintf(buf + n, len - (size_t)n, "(%uus)", cfg->wait_spin_us);
    if (n > 0 && (size_t)n < len && cfg->sync_latency_us)
        n += snprintf(buf + n, len - (size_t)n, " sync_latency=%uus(emulated)", cfg->sync_latency_us);
    if (n > 0 && (size_t)n < len && cfg->no_final_checkpoint)
        snprintf(buf + n, len - (size_t)n, " no_final_checkpoint");
}

static int cl_drv_open(struct bench_db *db)
{
    struct cl_options o;
    struct cl_db *h;
    int rc = bench_commitlab_options(db->cfg, &o, db->err, sizeof db->err);
    if (rc)
        return rc;
    struct cl_recovery_info info;
    rc = cl_open(db->path, &o, &h, &info);
    /* What the library says it refused (the option and its range, the
     * file, the process holding the database, what the kernel refused),
     * or "" when it has nothing to add to the code. */
    const char *detail = cl_error_detail();
    if (rc == CL_ENOTSUP) {
        /* Name what was asked, so the n/a row says which knob. */
        char asked[160] = "";
        size_t n = 0;
        if (o.sync != CL_SYNC_NONE && o.sync != CL_SYNC_COMMIT)
            n += (size_t)snprintf(asked + n, sizeof asked - n, " --sync %s", bench_knob_word(db->cfg, K_SYNC));
        if ((o.method == CL_METHOD_DIRECT || o.method == CL_METHOD_RWF_DSYNC) && n < sizeof asked)
            n += (size_t)snprintf(asked + n, sizeof asked - n, " --sync-method %s",
                                  bench_knob_word(db->cfg, K_SYNC_METHOD));
        if (o.sync == CL_SYNC_URING && o.uring_sync != CL_URING_SYNC_FSYNC && n < sizeof asked)
            n += (size_t)snprintf(asked + n, sizeof asked - n, " --uring-sync %s",
                                  bench_knob_word(db->cfg, K_URING_SYNC));
        if (o.sync_latency_us && n < sizeof asked)
            snprintf(asked + n, sizeof asked - n, " --sync-latency %u", o.sync_latency_us);
        if (detail[0]) /* the library's reason: the kernel refused a flag, io_uring is refused, ... */
            snprintf(db->err, sizeof db->err, "%.150s (cl_open: CL_ENOTSUP for%.70s)", detail,
                     asked[0] ? asked : " these options");
        else
            snprintf(db->err, sizeof db->err, "not built in this libcommitlab (cl_open: CL_ENOTSUP for%s)",
                     asked[0] ? asked : " these options");
        return BENCH_NA;
    }
    if (rc && detail[0]) {
        snprintf(db->err, sizeof db->err, "cl_open: %.190s (%.50s)", detail, cl_strerror(rc));
        return BENCH_ERR;
    }
    if (rc) {
        snprintf(db->err, sizeof db->err, "cl_open %.100s: %.60s%s%.80s", db->path, info.bad_file,
                 info.bad_file[0] ? ": " : "", cl_strerror(rc));
        return BENCH_ERR;
    }
    struct cl_stats st;
    if (!info.created && cl_stats(h, &st) == 0 && st.segment_size != o.segment_size)
        db->stored_segment_size = st.segment_size; /* --reuse of a database made with another size */
    db->io_uring = o.sync == CL_SYNC_URING;        /* its log's writes and syncs are ring submissions */
    db->impl = h;
    return BENCH_OK;
}

static void cl_drv_close(struct bench_db *db)
{
    if (db->impl)
        cl_close(db->impl);
    db->impl = NULL;
}

static int cl_conn_open(struct bench_conn *c)
{
    c->impl = NULL; /* the current transaction */
    return BENCH_OK;
}

static void cl_conn_close(struct bench_conn *c)
{
    if (c->impl)
        cl_abort(c->impl);
    c->impl = NULL;
}

static int fail(struct bench_conn *c, const char *what, int rc)
{
    snprintf(c->err, sizeof c->err, "%s: %s", what, cl_strerror(rc));
    return BENCH_ERR;
}

static int cl_begin(struct bench_conn *c, int rdonly)
{
    struct cl_txn *t;
    int rc = cl_txn_begin(c->db->impl, rdonly ? CL_TXN_RDONLY : 0, &t);
    if (rc)
        return fail(c, "cl_txn_begin", rc);
    c->impl = t;
    return BENCH_OK;
}

static int cl_drv_put(struct bench_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    int rc = cl_put(c->impl, k, kl, v, vl);
    return rc ? fail(c, "cl_put", rc) : BENCH_OK;
}

static int cl_drv_get(struct bench_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    int rc = cl_get(c->impl, k, kl, buf, cap, vl);
    if (rc == CL_ENOTFOUND)
        return BENCH_NOTFOUND;
    return rc ? fail(c, "cl_get", rc) : BENCH_OK;
}

static int cl_drv_del(struct bench_conn *c, const void *k, size_t kl)
{
    int rc = cl_del(c->impl, k, kl);
    if (rc == CL_ENOTFOUND)
        return BENCH_NOTFOUND;
    return rc ? fail(c, "cl_del", rc) : BENCH_OK;
}

static void phases(uint64_t *ns, const struct cl_commit_times *tm)
{
    ns[BENCH_PH_LOCK] = tm->lock_ns;
    ns[BENCH_PH_APPEND] = tm->append_ns;
    ns[BENCH_PH_APPLY] = tm->apply_ns;
    ns[BENCH_PH_QUEUE] = tm->queue_ns;
    ns[BENCH_PH_WRITE] = tm->write_ns;
    ns[BENCH_PH_SYNC] = tm->sync_ns;
    ns[BENCH_PH_WAKEUP] = tm->wakeup_ns;
}

/* A pipelined commit acknowledged, with its phases (tm NULL when rc is
 * not 0). */
static void on_durable(void *ticket, int rc, const struct cl_commit_times *tm)
{
    struct bench_ticket *t = ticket;
    if (tm) {
        phases(t->phase_ns, tm);
        t->timed = 1;
    }
    t->done(t, rc);
}

static int cl_drv_commit(struct bench_conn *c)
{
    struct cl_commit_times tm;
    if (c->ticket) { /* --pipeline: in the log now, acknowledged (and timed) by the callback */
        c->ticket->timed = 0;
        int rc = cl_commit_async_timed(c->impl, on_durable, c->ticket);
        c->impl = NULL;
        if (rc == 0)
            c->ticket = NULL; /* the callback's now */
        return rc ? fail(c, "cl_commit_async_timed", rc) : BENCH_OK;
    }
    int rc = cl_commit_timed(c->impl, &tm);
    c->impl = NULL;
    phases(c->phase_ns, &tm);
    return rc ? fail(c, "cl_commit", rc) : BENCH_OK;
}

static void cl_drv_abort(struct bench_conn *c)
{
    if (c->impl)
        cl_abort(c->impl);
    c->impl = NULL;
}

static void cl_drv_stats(struct bench_db *db, struct bench_engine_stats *st)
{
    struct cl_stats s;
    if (cl_stats(db->impl, &s)) {
        memset(st, 0xff, sizeof *st); /* all -1 */
        return;
    }
    st->commits = (int64_t)s.commits;
    st->syncs = (int64_t)s.syncs;
    st->wal_bytes = (int64_t)s.wal_bytes;
    st->data_bytes = (int64_t)s.data_bytes;
    st->checkpoints = (int64_t)s.checkpoints;
    st->checkpoint_pause_us = (int64_t)s.checkpoint_pause_us;
    st->segment_switches = (int64_t)s.segment_switches;
    st->segments_created = (int64_t)s.segments_created;
    st->segments_recycled = (int64_t)s.segments_recycled;
    st->segments_reused = (int64_t)s.segments_reused;
    st->segments_removed = (int64_t)s.segments_removed;
    st->segment_waits = (int64_t)s.segment_waits;
    st->segment_wait_us = (int64_t)s.segment_wait_us;
    st->max_switch_commit_us = (int64_t)s.max_switch_commit_us;
    st->prealloc_error = s.prealloc_error;
    _Static_assert(BENCH_BATCH_HIST == CL_BATCH_HIST, "one histogram layout");
    for (size_t i = 0; i < BENCH_BATCH_HIST; i++)
        st->batch_hist[i] = (int64_t)s.batch_hist[i];
    st->writes_by_self = st->writes_by_leader = -1; /* no write group: committers append themselves */
    /* in this process: getrusage sees all of it */
    st->other_user_us = st->other_sys_us = st->other_nvcsw = st->other_nivcsw = -1;
}

static void cl_drv_reset_max(struct bench_db *db) { cl_stats_reset_max(db->impl); }

static int cl_drv_sync_wait(struct bench_conn *c)
{
    int rc = cl_sync_wait(c->db->impl);
    if (rc)
        snprintf(c->err, sizeof c->err, "cl_sync_wait: %s", cl_strerror(rc));
    return rc ? BENCH_ERR : BENCH_OK;
}

static const char *cl_version(const struct bench_driver *d)
{
    (void)d;
    static char v[16];
    snprintf(v, sizeof v, "%d.%d", CL_VERSION_MAJOR, CL_VERSION_MINOR);
    return v;
}

const struct bench_driver bench_driver_commitlab = {
    .name = "commitlab",
    .built = 1,
    .own_sync_latency = 1,
    .times_commits = 1,
    .accepts = cl_accepts,
    .maps_options = 1, /* an option without a row here is cl_options.NAME too */
    .no_why = "applies to another engine",
    .notes = "commits timed by phase (cl_commit_timed; pipelined: cl_commit_async_timed); counters from cl_stats",
    .describe = cl_describe,
    .open = cl_drv_open,
    .close = cl_drv_close,
    .conn_open = cl_conn_open,
    .conn_close = cl_conn_close,
    .begin = cl_begin,
    .put = cl_drv_put,
    .get = cl_drv_get,
    .del = cl_drv_del,
    .commit = cl_drv_commit,
    .abort = cl_drv_abort,
    .stats = cl_drv_stats,
    .reset_max = cl_drv_reset_max,
    .sync_wait = cl_drv_sync_wait,
    .version = cl_version,
};
