/*
 * bench_run.c -- runs one configuration of the benchmark.
 *
 * Sequence: n/a check; fresh run directory (unless --reuse); open; an
 * untimed preload on one connection; one thread per client, running
 * transactions back to back; --warmup seconds unmeasured; then the
 * measured phase, --duration seconds or until --txns transactions have
 * been claimed; close (and, with --verify, reopen and read every key back).
 *
 * A signal (bench_interrupt) stops the run where it is: in its measured
 * phase, the phase ends there as it would at its end -- no transaction
 * begins, those begun complete and count, the counters are sampled -- and
 * the run is RUN_INTERRUPTED with what it measured over the seconds it
 * measured (no --verify: the store is closed, not read back); before it,
 * RUN_INTERRUPTED with nothing measured.  Either way everything is
 * stopped, closed and removed as at the end of any run.
 *
 * Measurement rules:
 *   - a transaction counts when it completes inside the measured phase
 *     (duration mode), or when it claimed one of the --txns slots;
 *   - its latency is begin to commit return, including waits for locks;
 *     with --rate (open loop) it is from the transaction's scheduled
 *     start, so time spent behind schedule counts (no coordinated
 *     omission, as pgbench -R measures);
 *   - counters (engine, /proc/self/io, /sys/block/DEV/stat, getrusage's
 *     CPU time and context switches, plus a server engine's own
 *     processes' as its driver reports them, and the syncs, writes and
 *     bytes of the store's own file calls, file_calls.h, watched from
 *     before the store opens) are sampled at the phase's two ends and
 *     reported as differences, so the preload, warm-up and close are not
 *     in them;
 *   - both ends are quiet: before the first sample every client finishes
 *     its warm-up transaction and waits (PH_QUIESCE), and the phase's
 *     transactions are those that begin inside it, each counted when it
 *     completes, with the last sample taken once they all have (the end is
 *     the last completion).  So the engine's counters cover exactly the
 *     measured transactions, and per-commit figures (syncs, log bytes per
 *     commit) are exact rather than off by the commits in flight at the
 *     edges.
 *
 * A plugin loaded from a shared library (drivers/driver.h, isolate) runs
 * all of this in a child process that sends its result back on a pipe:
 * a plugin that crashes fails its own run, named with its signal, and
 * the sweep goes on.  The counters of /proc/self/io and getrusage are
 * then the child's, which is the run's alone.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "commitlab.h"
#include "bench_env.h"
#include "bench_workload.h"
#include "file_calls.h"
#include "ut_clock.h"
#include "ut_file.h"
#include "ut_scratch.h"

enum { PH_WARMUP = 0, PH_MEASURE = 1, PH_STOP = 2, PH_QUIESCE = 3 };

static volatile sig_atomic_t interrupted;

void bench_interrupt(void) { interrupted = 1; }
int bench_interrupted(void) { return interrupted != 0; }

struct run_shared {
    const struct bench_config *cfg;
    const struct bench_workload *wl;
    struct bench_db *db;
    int phase;                    /* atomic */
    unsigned resting;             /* atomic: clients waiting at PH_QUIESCE, or gone */
    uint64_t claimed;             /* atomic, --txns mode */
    uint64_t t0_ns;               /* start of the measured phase */
    struct hist **timeline;       /* one per second, allocated on first use */
    size_t tcap;
    pthread_mutex_t mu;
    int failed;
    int stopped;                  /* a signal ended the phase (wait_phase) */
    char err[BENCH_ERRLEN];
    const struct bench_zipf *zipf;
    uint8_t *written;
    /* engine counters sampled at each second boundary of the measured
     * phase (by the main thread), for the timeline's marks */
    struct bench_engine_stats *marks;
    size_t nmarks;
};

/* --pipeline: one transaction handed to the engine and not yet
 * acknowledged; a client's tickets are a ring of --pipeline of them, and
 * come back in the order they went (the engine acknowledges in log
 * order). */
struct pipe_ticket {
    struct bench_ticket base;     /* first: the driver's view of it */
    struct client *c;
    uint64_t t;                   /* its start (or scheduled start): latency runs from here */
    int measured;                 /* begun inside the measured phase */
};

struct client {
    struct run_shared *sh;
    struct bench_conn conn;
    struct bench_worker w;
    struct hist lat;
    struct hist *phase;           /* [BENCH_PHASES] when the driver times commits, else NULL */
    uint64_t txns, ops, aborts;
    uint64_t committed;           /* in every phase (tpcb's verification counts history rows) */
    uint64_t last_end_ns;
    pthread_t th;
    /* --pipeline N > 1: the tickets, and how many went and came back; the
     * acknowledgement accounting (lat, txns, last_end_ns) is under pmu,
     * since acknowledgements arrive on the engine's threads */
    struct pipe_ticket *ring;
    uint64_t issued, acked;
    pthread_mutex_t pmu;
    pthread_cond_t pcv;
    int pwaiting;
};

static void timeline_record(struct run_shared *sh, uint64_t end_ns, uint64_t lat_ns)
{
    uint64_t s = (end_ns - sh->t0_ns) / 1000000000ull;
    if (s >= sh->tcap)
        return;
    struct hist *h = __atomic_load_n(&sh->timeline[s], __ATOMIC_ACQUIRE);
    if (!h) {
        struct hist *n = malloc(sizeof *n);
        if (!n)
            return;
        hist_init(n);
        struct hist *expected = NULL;
        if (__atomic_compare_exchange_n(&sh->timeline[s], &expected, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            h = n;
        } else {
            free(n);
            h = expected;
        }
    }
    hist_record_atomic(h, lat_ns);
}

static void set_failed(struct run_shared *sh, const char *msg)
{
    pthread_mutex_lock(&sh->mu);
    if (!sh->failed) {
        sh->failed = 1;
        snprintf(sh->err, sizeof sh->err, "%s", msg);
    }
    pthread_mutex_unlock(&sh->mu);
    __atomic_store_n(&sh->phase, PH_STOP, __ATOMIC_RELEASE);
}

/* --rate: the next arrival of this client's Poisson process (each client
 * carries rate/clients), and a wait for it that still notices the end of
 * the run.  Returns the scheduled start; 0 when the run stopped. */
static uint64_t next_arrival(struct client *c, const struct bench_config *cfg, uint64_t *next, uint64_t *rng)
{
    double mean_ns = 1e9 * (double)cfg->clients / (double)cfg->rate;
    double u = ((double)(bench_rand(rng) >> 11) + 1.0) / 9007199254740992.0; /* (0, 1] */
    if (!*next)
        *next = ut_now_ns();
    *next += (uint64_t)(-log(u) * mean_ns);
    for (;;) {
        uint64_t now = ut_now_ns();
        if (now >= *next)
            return *next;
        if (__atomic_load_n(&c->sh->phase, __ATOMIC_ACQUIRE) == PH_STOP)
            return 0;
        ut_sleep_until_ns(*next - now > 100000000u ? now + 100000000u : *next); /* look up every 0.1 s */
    }
}

/* A pipelined transaction acknowledged: durable (rc 0) or failed.  Called
 * by the engine's acknowledging thread, or by the client itself for one it
 * never handed over (read only, or refused). */
static void pipe_complete(struct pipe_ticket *tk, int rc, const char *err)
{
    struct client *c = tk->c;
    uint64_t e = ut_now_ns();
    if (rc)
        set_failed(c->sh, err ? err : "an asynchronous commit failed");
    pthread_mutex_lock(&c->pmu);
    if (!rc && tk->measured) {
        hist_record(&c->lat, e - tk->t);
        if (c->phase && tk->base.timed) /* its phases, up to the acknowledgement */
            for (int p = 0; p < BENCH_PHASES; p++)
                hist_record(&c->phase[p], tk->base.phase_ns[p]);
        c->txns++;
        c->last_end_ns = e;
        timeline_record(c->sh, e, e - tk->t);
    }
    c->acked++;
    if (c->pwaiting)
        pthread_cond_signal(&c->pcv);
    pthread_mutex_unlock(&c->pmu);
}

static void pipe_done(struct bench_ticket *t, int rc)
{
    char err[BENCH_ERRLEN + 96];
    if (t->err)
        snprintf(err, sizeof err, "an asynchronous commit failed: %s", t->err);
    else
        snprintf(err, sizeof err, "an asynchronous commit was not made durable: %s", cl_strerror(rc));
    pipe_complete((struct pipe_ticket *)t, rc, rc ? err : NULL);
}

/* Waits until fewer than `room` of this client's transactions await
 * acknowledgement (0: until none does, driving the engine to make them
 * durable first).  An engine whose acknowledgements this thread must read
 * (ack_wait) reads them now; else they come on the engine's threads. */
static void pipe_wait(struct client *c, uint64_t room)
{
    const struct bench_driver *d = c->sh->db->drv;
    pthread_mutex_lock(&c->pmu);
    uint64_t pending = c->issued - c->acked;
    pthread_mutex_unlock(&c->pmu);
    if (room && pending > room - 1 && d->ack_wait && d->ack_wait(&c->conn, (unsigned)(room - 1)))
        set_failed(c->sh, c->conn.err);
    if (!room && pending && d->sync_wait && d->sync_wait(&c->conn))
        set_failed(c->sh, c->conn.err);
    pthread_mutex_lock(&c->pmu);
    while (c->issued - c->acked > (room ? room - 1 : 0)) {
        c->pwaiting = 1;
        pthread_cond_wait(&c->pcv, &c->pmu);
    }
    c->pwaiting = 0;
    pthread_mutex_unlock(&c->pmu);
}

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct run_shared *sh = c->sh;
    const struct bench_config *cfg = sh->cfg;
    uint64_t next = 0, rng = cfg->seed * 0x100000001B3ull ^ ((uint64_t)c->conn.id << 32);

    for (;;) {
        int ph = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
        int claimed = 0;
        if (ph == PH_STOP)
            break;
        if (ph == PH_QUIESCE) { /* between the warm-up and the phase: at rest, no transaction open */
            if (c->ring)
                pipe_wait(c, 0); /* nor one awaiting its acknowledgement */
            __atomic_add_fetch(&sh->resting, 1, __ATOMIC_ACQ_REL);
            while (__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PH_QUIESCE) {
                struct timespec ts = {0, 50 * 1000};
                nanosleep(&ts, NULL);
            }
            __atomic_sub_fetch(&sh->resting, 1, __ATOMIC_ACQ_REL);
            next = 0; /* an open loop's arrivals start again with the phase */
            continue;
        }
        if (ph == PH_MEASURE && cfg->txns) {
            if (__atomic_fetch_add(&sh->claimed, 1, __ATOMIC_RELAXED) >= cfg->txns)
                break;
            claimed = 1;
        }
        unsigned ops = 0;
        if (c->ring)
            pipe_wait(c, cfg->pipeline); /* room for one more awaiting durability */
        uint64_t t = cfg->rate ? next_arrival(c, cfg, &next, &rng) : ut_now_ns();
        if (!t)
            break;
        struct pipe_ticket *tk = NULL;
        if (c->ring) { /* reserved now, so its acknowledgement can never come before it is counted */
            tk = &c->ring[c->issued % cfg->pipeline];
            *tk = (struct pipe_ticket){{pipe_done}, c, t, cfg->txns ? claimed : ph == PH_MEASURE};
            pthread_mutex_lock(&c->pmu);
            c->issued++;
            pthread_mutex_unlock(&c->pmu);
            c->conn.ticket = &tk->base;
        }
        int rc;
        /* an aborted transaction runs again; its latency runs from the first try */
        while ((rc = sh->wl->txn(&c->conn, cfg, &c->w, &ops)) == BENCH_RETRY) {
            if (__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PH_MEASURE)
                c->aborts++;
            if (__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PH_STOP)
                break;
        }
        uint64_t e = ut_now_ns();
        if (tk && c->conn.ticket) { /* never handed over: read only, or refused */
            c->conn.ticket = NULL;
            pipe_complete(tk, rc == BENCH_OK ? 0 : -1, NULL);
        }
        if (rc == BENCH_RETRY)
            break;
        if (rc) {
            set_failed(sh, c->conn.err[0] ? c->conn.err : "transaction failed");
            break;
        }
        c->committed++;
        if (tk) { /* counted when acknowledged (pipe_complete) */
            if (tk->measured)
                c->ops += ops;
            continue;
        }
        if (cfg->txns ? claimed : ph == PH_MEASURE) { /* begun inside the phase */
            hist_record(&c->lat, e - t);
            if (c->phase && ops) /* a transaction that wrote: its commit was timed */
                for (int p = 0; p < BENCH_PHASES; p++)
                    hist_record(&c->phase[p], c->conn.phase_ns[p]);
            c->txns++;
            c->ops += ops;
            c->last_end_ns = e;
            timeline_record(sh, e, e - t);
        }
    }
    if (c->ring)
        pipe_wait(c, 0); /* every commit of the phase acknowledged before the last sample */
    __atomic_add_fetch(&sh->resting, 1, __ATOMIC_ACQ_REL); /* gone: never in the way of a quiet point */
    return NULL;
}

struct snapshot {
    struct bench_engine_stats es;
    int64_t io_write, io_wchar, dev, dev_read;
    double cpu_s;
    int64_t nvcsw, nivcsw;          /* context switches: this process's and the engine's other processes' */
    struct bench_file_counts files; /* the store's file calls (file_calls.h) */
};

static void take_snapshot(struct bench_db *db, const char *device, struct snapshot *s)
{
    struct rusage ru;
    db->drv->stats(db, &s->es);
    bench_proc_io(&s->io_write, &s->io_wchar);
    s->dev = bench_device_written(device);
    s->dev_read = bench_device_read(device);
    bench_file_calls_sample(&s->files);
    getrusage(RUSAGE_SELF, &ru);
    s->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               (double)ru.ru_stime.tv_usec / 1e6;
    s->nvcsw = ru.ru_nvcsw;
    s->nivcsw = ru.ru_nivcsw;
    /* a server engine's processes, outside this one (driver.h) */
    const struct bench_engine_stats *o = &s->es;
    if (o->other_user_us > 0)
        s->cpu_s += (double)o->other_user_us / 1e6;
    if (o->other_sys_us > 0)
        s->cpu_s += (double)o->other_sys_us / 1e6;
    if (o->other_nvcsw > 0)
        s->nvcsw += o->other_nvcsw;
    if (o->other_nivcsw > 0)
        s->nivcsw += o->other_nivcsw;
}

static int64_t delta(int64_t a, int64_t b)
{
    return a < 0 || b < 0 ? -1 : b - a;
}

/* In the measured phase: samples the engine's counters once each second
 * boundary has passed (marks[s] = counters at about second s). */
static void sample_marks(struct run_shared *sh)
{
    if (!sh->marks || __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) != PH_MEASURE)
        return;
    size_t s = (size_t)((ut_now_ns() - sh->t0_ns) / 1000000000ull);
    while (sh->nmarks <= s && sh->nmarks < sh->tcap + 1)
        sh->db->drv->stats(sh->db, &sh->marks[sh->nmarks++]);
}

/* A signal came: the clients stop as at the end of the phase, which the
 * run reports as interrupted (not failed). */
static void stop_at_signal(struct run_shared *sh)
{
    sh->stopped = 1;
    __atomic_store_n(&sh->phase, PH_STOP, __ATOMIC_RELEASE);
}

/* Sleeps up to secs, in slices, calling tick; returns early on stop. */
static void wait_phase(struct run_shared *sh, double secs, void (*tick)(void *), void *arg)
{
    double end = ut_now() + secs;
    for (;;) {
        double left = end - ut_now();
        if (interrupted)
            stop_at_signal(sh);
        if (left <= 0 || __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PH_STOP)
            return;
        double slice = left < 0.2 ? left : 0.2;
        struct timespec ts = {(time_t)slice, (long)((slice - (double)(time_t)slice) * 1e9)};
        nanosleep(&ts, NULL);
        sample_marks(sh);
        if (tick)
            tick(arg);
    }
}

static void finish_latency(struct bench_result *r)
{
    r->p50_us = hist_percentile(&r->lat, 50) / 1e3;
    r->p90_us = hist_percentile(&r->lat, 90) / 1e3;
    r->p99_us = hist_percentile(&r->lat, 99) / 1e3;
    r->p999_us = hist_percentile(&r->lat, 99.9) / 1e3;
    r->max_us = (double)r->lat.max_ns / 1e3;
    r->min_us = r->lat.count ? (double)r->lat.min_ns / 1e3 : 0;
    r->mean_us = hist_mean(&r->lat) / 1e3;
}

void bench_result_free(struct bench_result *r)
{
    free(r->timeline);
    r->timeline = NULL;
}

/* ---- the steps of one run ---------------------------------------------------- */

/* Everything one bench_run holds, for its steps and for the cleanup. */
struct run {
    const struct bench_config *cfg;
    struct bench_result *r;
    void (*tick)(void *);
    void *arg;
    const struct bench_driver *drv;
    const struct bench_workload *wl;
    struct bench_db db;
    int db_open;
    int made_dir;                 /* the run directory is this run's (a marked scratch directory) */
    struct run_shared sh;
    struct bench_zipf zipf;
    struct client *cl;
    unsigned opened;              /* client connections open */
    unsigned started;             /* client threads running */
    struct snapshot s0, s1;       /* counters at the two ends of the measured phase */
    uint64_t t1_ns;               /* end of the measured phase */
};

/* Ends the run as status (RUN_NA or RUN_ERROR) with the reason; returns -1. */
static int run_fail(struct run *rn, enum bench_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int run_fail(struct run *rn, enum bench_status status, const char *fmt, ...)
{
    va_list ap;
    rn->r->status = status;
    va_start(ap, fmt);
    vsnprintf(rn->r->reason, sizeof rn->r->reason, fmt, ap);
    va_end(ap);
    return -1;
}

/* A signal stopped the run: in the given phase; returns -1.  Before the
 * measured phase nothing was measured; in it, the run goes on to collect
 * what it measured (run_measure). */
static int run_stopped(struct run *rn, enum bench_stop where)
{
    rn->r->status = RUN_INTERRUPTED;
    rn->r->stopped_in = where;
    snprintf(rn->r->reason, sizeof rn->r->reason, "interrupted in the %s", bench_stop_names[where]);
    return -1;
}

/* An empty result: every counter unknown (-1), the start time stamped. */
static void result_init(struct bench_result *r)
{
    time_t now = time(NULL);
    struct tm tm;

    memset(r, 0, sizeof *r);
    hist_init(&r->lat);
    r->syncs = r->wal_bytes = r->data_bytes = r->checkpoints = r->checkpoint_pause_us = -1;
    r->engine_commits = r->io_write_bytes = r->io_wchar = r->dev_write_bytes = r->dev_read_bytes = -1;
    r->log_writes = -1;
    r->segment_switches = r->segments_created = r->segments_recycled = r->segments_removed = -1;
    r->segments_reused = -1;
    r->segment_waits = r->segment_wait_us = r->max_switch_commit_us = r->prealloc_error = -1;
    r->nvcsw = r->nivcsw = -1;
    r->file_syncs = r->file_writes = r->file_bytes = -1;
    gmtime_r(&now, &tm);
    strftime(r->time_utc, sizeof r->time_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void run_begin(struct run *rn, const struct bench_config *cfg, struct bench_result *r, void (*tick)(void *),
                      void *arg)
{
    memset(rn, 0, sizeof *rn);
    rn->cfg = cfg;
    rn->r = r;
    rn->tick = tick;
    rn->arg = arg;
    rn->drv = bench_driver_find(cfg->engine);
    rn->wl = bench_workload_find(cfg->workload);
    result_init(r);
    pthread_mutex_init(&rn->sh.mu, NULL);
    mkdir(cfg->dir, 0755);
    bench_env_probe(cfg->dir, &r->env);
    if (!r->env.device[0] && cfg->count_device)
        snprintf(r->env.device, sizeof r->env.device, "%s", cfg->count_device);
}

/* n/a when the engine is not built in or cannot express the configuration. */
static int run_check_engine(struct run *rn)
{
    if (!rn->drv || !rn->drv->built)
        return run_fail(rn, RUN_NA, "engine %s is not built into this binary", rn->cfg->engine);
    rn->drv->describe(rn->drv, rn->cfg, rn->r->settings, sizeof rn->r->settings);
    if (bench_engine_check(rn->drv, rn->cfg, rn->r->reason, sizeof rn->r->reason)) {
        rn->r->status = RUN_NA;
        return -1;
    }
    if (rn->cfg->sync_latency_us && !rn->drv->own_sync_latency) {
        /* the same emulated device for this engine, at each of its
         * durability points, until run_end */
        size_t n = strlen(rn->r->settings);
        snprintf(rn->r->settings + n, sizeof rn->r->settings - n, " sync_latency=%uus(emulated, at its syncs)",
                 rn->cfg->sync_latency_us);
        bench_sync_latency_set(rn->cfg->sync_latency_us);
    }
    return 0;
}

/* The run directory (fresh unless --reuse), and the store open in it. */
static int run_open_store(struct run *rn)
{
    const struct bench_config *cfg = rn->cfg;
    struct bench_db *db = &rn->db;

    db->drv = rn->drv;
    db->cfg = cfg;
    snprintf(db->path, sizeof db->path, "%s/%s.db", cfg->dir, cfg->engine);
    snprintf(rn->r->run_dir, sizeof rn->r->run_dir, "%s", db->path);
    if (!cfg->reuse) {
        /* fresh and marked, never over anything already there (ut_scratch.h) */
        int mrc = ut_scratch_make(db->path, "bench");
        if (mrc == -EEXIST)
            return run_fail(rn, RUN_ERROR, "%.160s exists and was not made for this run: nothing was removed",
                            db->path);
        if (mrc)
            return run_fail(rn, RUN_ERROR, "mkdir %.160s: %.60s", db->path, strerror(-mrc));
        rn->made_dir = 1;
    } else if (mkdir(db->path, 0755) && errno != EEXIST) {
        return run_fail(rn, RUN_ERROR, "mkdir %.160s: %.60s", db->path, strerror(errno));
    }
    /* the store's file calls are counted from its first open on, so the
     * descriptors it keeps open are known when the phase begins */
    int wrc = bench_file_calls_watch(db->path);
    if (wrc)
        return run_fail(rn, RUN_ERROR, "%.160s: %.60s", db->path, strerror(-wrc));
    int rc = rn->drv->open(db);
    if (rc)
        return run_fail(rn, rc == BENCH_NA ? RUN_NA : RUN_ERROR, "%s", db->err);
    rn->db_open = 1;
    /* once more, open: a server's settings are those it reads back */
    rn->drv->describe(rn->drv, cfg, rn->r->settings, sizeof rn->r->settings);
    if (rn->cfg->sync_latency_us && !rn->drv->own_sync_latency) {
        size_t n = strlen(rn->r->settings);
        snprintf(rn->r->settings + n, sizeof rn->r->settings - n, " sync_latency=%uus(emulated, at its syncs)",
                 rn->cfg->sync_latency_us);
    }
    if (db->stored_segment_size) { /* what ran, not what was asked */
        rn->r->stored_segment_size = db->stored_segment_size;
        size_t n = strlen(rn->r->settings);
        snprintf(rn->r->settings + n, sizeof rn->r->settings - n, " segment_size=%llu(stored, not as asked)",
                 (unsigned long long)db->stored_segment_size);
    }
    return 0;
}

/* What the clients share (zipf generator, written-key bitmap), and one
 * connection per client. */
static int run_connect_clients(struct run *rn)
{
    const struct bench_config *cfg = rn->cfg;
    struct run_shared *sh = &rn->sh;

    sh->cfg = cfg;
    sh->wl = rn->wl;
    sh->db = &rn->db;
    if (cfg->zipf && strcmp(cfg->workload, "kv") == 0) {
        bench_zipf_init(&rn->zipf, cfg->keys, cfg->zipf_theta);
        sh->zipf = &rn->zipf;
    }
    if (cfg->verify && strcmp(cfg->workload, "kv") == 0)
        sh->written = calloc(cfg->keys / 8 + 1, 1);

    rn->cl = calloc(cfg->clients, sizeof *rn->cl);
    if (!rn->cl)
        return run_fail(rn, RUN_ERROR, "out of memory");
    for (unsigned i = 0; i < cfg->clients; i++, rn->opened++) {
        struct client *c = &rn->cl[i];
        c->sh = sh;
        c->conn.db = &rn->db;
        c->conn.id = i;
        c->w.id = i;
        c->w.rng = cfg->seed * 0x100000001b3ull + i + 1;
        c->w.zipf = sh->zipf;
        c->w.written = sh->written;
        hist_init(&c->lat);
        if (cfg->pipeline > 1) { /* a commit's phases then come with its acknowledgement */
            c->ring = calloc(cfg->pipeline, sizeof *c->ring);
            if (!c->ring)
                return run_fail(rn, RUN_ERROR, "client %u: out of memory", i);
            pthread_mutex_init(&c->pmu, NULL);
            pthread_cond_init(&c->pcv, NULL);
        }
        if (rn->drv->times_commits) {
            c->phase = malloc(BENCH_PHASES * sizeof *c->phase);
            if (!c->phase)
                return run_fail(rn, RUN_ERROR, "client %u: out of memory", i);
            for (int p = 0; p < BENCH_PHASES; p++)
                hist_init(&c->phase[p]);
        }
        if (rn->drv->conn_open(&c->conn))
            return run_fail(rn, RUN_ERROR, "client %u: %.200s", i, c->conn.err);
    }
    return 0;
}

/* The untimed preload on the first connection, unless a reused store
 * already holds it. */
static int run_preload(struct run *rn)
{
    const struct bench_config *cfg = rn->cfg;
    struct bench_conn *conn = &rn->cl[0].conn;

    double tp = ut_now();
    if (cfg->preload && !(cfg->reuse && bench_workload_loaded(conn, cfg)) && rn->wl->preload(conn, cfg))
        return run_fail(rn, RUN_ERROR, "preload: %.200s", conn->err);
    rn->r->preload_seconds = ut_now() - tp;
    return 0;
}

/* Waits for the client threads to end on their own. */
static void join_clients(struct run *rn)
{
    for (unsigned i = 0; i < rn->started; i++)
        pthread_join(rn->cl[i].th, NULL);
    rn->started = 0;
}

/* Tells the client threads to stop, and waits for them. */
static void stop_clients(struct run *rn)
{
    __atomic_store_n(&rn->sh.phase, PH_STOP, __ATOMIC_RELEASE);
    join_clients(rn);
}

static void close_clients(struct run *rn)
{
    for (unsigned i = 0; i < rn->opened; i++)
        rn->drv->conn_close(&rn->cl[i].conn);
    rn->opened = 0;
}

/* --txns: until every slot is claimed; the clients end by themselves, and
 * the phase ends with the last transaction to complete. */
static void measure_txns(struct run *rn)
{
    struct run_shared *sh = &rn->sh;

    while (__atomic_load_n(&sh->claimed, __ATOMIC_RELAXED) < rn->cfg->txns &&
           __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) != PH_STOP)
    {
        wait_phase(sh, 0.05, NULL, NULL);
        if (rn->tick)
            rn->tick(rn->arg);
    }
    join_clients(rn);
    rn->t1_ns = sh->t0_ns;
    for (unsigned i = 0; i < rn->cfg->clients; i++)
        if (rn->cl[i].last_end_ns > rn->t1_ns)
            rn->t1_ns = rn->cl[i].last_end_ns;
    take_snapshot(&rn->db, rn->r->env.device, &rn->s1);
    if (rn->cfg->window)
        rn->cfg->window(rn->cfg->window_arg, 1);
}

/* --duration: no transaction begins once the time is up; the phase ends
 * with the last of its transactions to complete. */
static void measure_duration(struct run *rn)
{
    wait_phase(&rn->sh, rn->cfg->duration, rn->tick, rn->arg);
    __atomic_store_n(&rn->sh.phase, PH_STOP, __ATOMIC_RELEASE);
    join_clients(rn);
    rn->t1_ns = rn->sh.t0_ns;
    for (unsigned i = 0; i < rn->cfg->clients; i++)
        if (rn->cl[i].last_end_ns > rn->t1_ns)
            rn->t1_ns = rn->cl[i].last_end_ns;
    take_snapshot(&rn->db, rn->r->env.device, &rn->s1);
    if (rn->cfg->window)
        rn->cfg->window(rn->cfg->window_arg, 1);
}

/* After the warm-up: every client finishes the transaction it is in and
 * rests, so the first sample sees no commit in flight.  0, or -1 when a
 * client never came to rest (a stop, or an engine that hangs). */
static int quiesce(struct run *rn)
{
    struct run_shared *sh = &rn->sh;
    __atomic_store_n(&sh->phase, PH_QUIESCE, __ATOMIC_RELEASE);
    double give_up = ut_now() + 60;
    while (__atomic_load_n(&sh->resting, __ATOMIC_ACQUIRE) < rn->started) {
        if (__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PH_STOP)
            return -1; /* a client failed (set_failed stops the run) */
        if (interrupted) {
            stop_at_signal(sh);
            return -1;
        }
        if (ut_now() > give_up) {
            set_failed(sh, "the clients did not come to rest within 60 s after the warm-up");
            return -1;
        }
        struct timespec ts = {0, 100 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Starts the client threads, lets them warm up, then measures, sampling
 * the counters at the phase's two ends; stops the clients. */
static int run_measure(struct run *rn)
{
    const struct bench_config *cfg = rn->cfg;
    struct run_shared *sh = &rn->sh;

    sh->tcap = cfg->txns ? 3600 : (size_t)cfg->duration + 2;
    sh->timeline = calloc(sh->tcap, sizeof *sh->timeline);
    sh->marks = calloc(sh->tcap + 1, sizeof *sh->marks);
    if (!sh->timeline || !sh->marks)
        return run_fail(rn, RUN_ERROR, "out of memory");

    for (; rn->started < cfg->clients; rn->started++)
        if (pthread_create(&rn->cl[rn->started].th, NULL, client_main, &rn->cl[rn->started])) {
            set_failed(sh, "cannot start a client thread");
            break;
        }
    double tw = ut_now();
    wait_phase(sh, cfg->warmup, rn->tick, rn->arg);
    rn->r->warmup_done_s = ut_now() - tw;
    if (sh->stopped || quiesce(rn)) {
        stop_clients(rn);
        if (sh->stopped && !sh->failed)
            return run_stopped(rn, BENCH_STOP_WARMUP);
        return run_fail(rn, RUN_ERROR, "%s", sh->failed ? sh->err : "stopped");
    }

    if (rn->drv->reset_max)
        rn->drv->reset_max(&rn->db);
    take_snapshot(&rn->db, rn->r->env.device, &rn->s0);
    if (rn->cfg->window)
        rn->cfg->window(rn->cfg->window_arg, 0);
    sh->t0_ns = ut_now_ns();
    sh->marks[0] = rn->s0.es;
    sh->nmarks = 1;
    __atomic_store_n(&sh->phase, PH_MEASURE, __ATOMIC_RELEASE);
    if (cfg->txns)
        measure_txns(rn);
    else
        measure_duration(rn);
    stop_clients(rn);
    if (sh->failed)
        return run_fail(rn, RUN_ERROR, "%s", sh->err);
    if (sh->stopped)
        run_stopped(rn, BENCH_STOP_MEASURE); /* what it measured until then is collected as at the end */
    return 0;
}

/* The counters over the measured phase: the difference of its two ends
 * (-1 where either is unknown), except the peaks, which are as at its end. */
static void counter_deltas(struct bench_result *r, const struct snapshot *s0, const struct snapshot *s1, int io_uring)
{
#define ENGINE_DELTA(field) r->field = delta(s0->es.field, s1->es.field)
    ENGINE_DELTA(syncs);
    ENGINE_DELTA(wal_bytes);
    ENGINE_DELTA(data_bytes);
    ENGINE_DELTA(checkpoints);
    ENGINE_DELTA(checkpoint_pause_us);
    ENGINE_DELTA(segment_switches);
    ENGINE_DELTA(segments_created);
    ENGINE_DELTA(segments_recycled);
    ENGINE_DELTA(segments_reused);
    ENGINE_DELTA(segments_removed);
    ENGINE_DELTA(segment_waits);
    ENGINE_DELTA(segment_wait_us);
    ENGINE_DELTA(writes_by_self);
    ENGINE_DELTA(writes_by_leader);
    ENGINE_DELTA(log_writes);
#undef ENGINE_DELTA
    r->engine_commits = delta(s0->es.commits, s1->es.commits);
    for (size_t i = 0; i < BENCH_BATCH_HIST; i++)
        r->batch_hist[i] = delta(s0->es.batch_hist[i], s1->es.batch_hist[i]);
    r->max_switch_commit_us = s1->es.max_switch_commit_us;
    r->prealloc_error = s1->es.prealloc_error;
    r->io_write_bytes = delta(s0->io_write, s1->io_write);
    r->io_wchar = delta(s0->io_wchar, s1->io_wchar);
    r->dev_write_bytes = delta(s0->dev, s1->dev);
    r->dev_read_bytes = delta(s0->dev_read, s1->dev_read);
    r->cpu_us = (s1->cpu_s - s0->cpu_s) * 1e6;
    r->nvcsw = s1->nvcsw - s0->nvcsw;
    r->nivcsw = s1->nivcsw - s0->nivcsw;
    /* a store whose I/O is in processes of its own (a server) makes its
     * calls where these definitions are not: null, not 0 */
    if (!io_uring && s1->es.other_user_us < 0) {
        r->file_syncs = (int64_t)(s1->files.syncs - s0->files.syncs);
        r->file_writes = (int64_t)(s1->files.writes - s0->files.writes);
        r->file_bytes = (int64_t)(s1->files.bytes - s0->files.bytes);
    }
}

/* One entry per second: whole seconds, and a last partial one only if it
 * is at least half a second (a sliver would give a meaningless rate). */
static void fill_timeline(struct run *rn)
{
    struct bench_result *r = rn->r;
    const struct run_shared *sh = &rn->sh;

    size_t nsec = (size_t)r->seconds + (r->seconds - (double)(size_t)r->seconds >= 0.5);
    if (nsec > sh->tcap)
        nsec = sh->tcap;
    r->timeline = calloc(nsec ? nsec : 1, sizeof *r->timeline);
    if (!r->timeline)
        return;
    r->nseconds = nsec;
    for (size_t s = 0; s < nsec; s++) {
        struct hist *h = sh->timeline[s];
        double width = (double)(s + 1) <= r->seconds ? 1.0 : r->seconds - (double)s;
        r->timeline[s].tps = h && width > 0 ? (double)h->count / width : 0;
        r->timeline[s].p99_us = h ? hist_percentile(h, 99) / 1e3 : 0;
        /* marks[s + 1] may be missing for the last second: use s1 */
        const struct bench_engine_stats *a = &sh->marks[s < sh->nmarks ? s : sh->nmarks - 1];
        const struct bench_engine_stats *b = s + 1 < sh->nmarks ? &sh->marks[s + 1] : &rn->s1.es;
        r->timeline[s].segment_switches = delta(a->segment_switches, b->segment_switches);
        r->timeline[s].checkpoints = delta(a->checkpoints, b->checkpoints);
    }
}

/* The clients' counts and latencies summed, the counters' differences,
 * the timeline. */
static void run_collect_results(struct run *rn)
{
    struct bench_result *r = rn->r;

    r->seconds = (double)(rn->t1_ns - rn->sh.t0_ns) / 1e9;
    for (unsigned i = 0; i < rn->cfg->clients; i++) {
        hist_merge(&r->lat, &rn->cl[i].lat);
        r->txns += rn->cl[i].txns;
        r->ops += rn->cl[i].ops;
        r->aborts += rn->cl[i].aborts;
    }
    r->tps = r->seconds > 0 ? (double)r->txns / r->seconds : 0;
    finish_latency(r);
    if (rn->drv->times_commits) {
        struct hist *h = malloc(sizeof *h);
        for (int p = 0; h && p < BENCH_PHASES; p++) {
            hist_init(h);
            for (unsigned i = 0; i < rn->cfg->clients; i++)
                if (rn->cl[i].phase)
                    hist_merge(h, &rn->cl[i].phase[p]);
            r->phase_mean_us[p] = hist_mean(h) / 1e3;
            r->phase_p99_us[p] = hist_percentile(h, 99) / 1e3;
            r->has_phases = h->count > 0;
        }
        free(h);
    }
    counter_deltas(r, &rn->s0, &rn->s1, rn->db.io_uring);
    fill_timeline(rn);
}

/* --verify: reopens the store and has the workload read everything back. */
static void run_verify(struct run *rn)
{
    const struct bench_config *cfg = rn->cfg;
    struct bench_result *r = rn->r;
    struct bench_conn vc;

    memset(&vc, 0, sizeof vc);
    vc.db = &rn->db;
    if (rn->drv->open(&rn->db) != BENCH_OK) {
        r->verified = -1;
        run_fail(rn, RUN_ERROR, "verify: reopen: %.200s", rn->db.err);
        return;
    }
    rn->db_open = 1;
    if (rn->drv->conn_open(&vc)) {
        r->verified = -1;
        run_fail(rn, RUN_ERROR, "verify: %.200s", vc.err);
        return;
    }
    uint64_t *committed = calloc(cfg->clients, sizeof *committed);
    for (unsigned i = 0; committed && i < cfg->clients; i++)
        committed[i] = rn->cl[i].committed;
    struct bench_verify_in vin = {rn->sh.written, committed, cfg->clients};
    int rc = rn->wl->verify(&vc, cfg, &vin, &r->verified_keys);
    free(committed);
    if (rc) {
        r->verified = -1;
        run_fail(rn, RUN_ERROR, "%s", vc.err);
    } else {
        r->verified = 1;
    }
    rn->drv->conn_close(&vc);
}

/* Closes the connections and the store; then, with --verify, reopens it. */
static void run_close_and_verify(struct run *rn)
{
    close_clients(rn);
    rn->drv->close(&rn->db);
    rn->db_open = 0;
    if (rn->cfg->verify && rn->r->status == RUN_OK) /* an interrupted run is not read back */
        run_verify(rn);
}

/* Wherever the run stopped: clients stopped, connections and store
 * closed, the run directory removed (unless --reuse), memory freed. */
static void run_end(struct run *rn)
{
    if (rn->started)
        stop_clients(rn);
    close_clients(rn);
    if (rn->db_open)
        rn->drv->close(&rn->db);
    bench_sync_latency_set(0);
    bench_file_calls_unwatch();
    if (rn->made_dir)
        ut_scratch_remove(rn->r->run_dir); /* only what this run made */
    if (rn->sh.timeline) {
        for (size_t s = 0; s < rn->sh.tcap; s++)
            free(rn->sh.timeline[s]);
        free(rn->sh.timeline);
    }
    free(rn->sh.written);
    free(rn->sh.marks);
    for (unsigned i = 0; rn->cl && i < rn->cfg->clients; i++) {
        free(rn->cl[i].phase);
        if (rn->cl[i].ring) {
            free(rn->cl[i].ring);
            pthread_mutex_destroy(&rn->cl[i].pmu);
            pthread_cond_destroy(&rn->cl[i].pcv);
        }
    }
    free(rn->cl);
    pthread_mutex_destroy(&rn->sh.mu);
}

static void run_here(const struct bench_config *cfg, struct bench_result *r, void (*tick)(void *), void *arg)
{
    struct run rn;

    run_begin(&rn, cfg, r, tick, arg);
    if (run_check_engine(&rn) == 0 && run_open_store(&rn) == 0 && run_connect_clients(&rn) == 0 &&
        run_preload(&rn) == 0 && (!interrupted || run_stopped(&rn, BENCH_STOP_SETUP) == 0) &&
        run_measure(&rn) == 0) {
        run_collect_results(&rn);
        run_close_and_verify(&rn);
    }
    run_end(&rn);
}

/* ---- a plugin's run in a child process ---------------------------------------- */

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Reads len bytes; a signal that stops the sweep (bench_interrupt) is
 * passed on to the child once, which then ends its run as interrupted. */
static size_t read_all(int fd, void *buf, size_t len, pid_t child, int *passed)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n < 0 && errno == EINTR) {
            if (interrupted && !*passed) {
                kill(child, SIGTERM);
                *passed = 1;
            }
            continue;
        }
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

static void run_isolated(const struct bench_config *cfg, const struct bench_driver *d, struct bench_result *r,
                         void (*tick)(void *), void *arg)
{
    int fds[2], passed = 0;
    if (pipe(fds)) {
        result_init(r);
        r->status = RUN_ERROR;
        snprintf(r->reason, sizeof r->reason, "pipe: %s", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        run_here(cfg, r, tick, arg);
        int rc = write_all(fds[1], r, sizeof *r) ||
                 (r->nseconds && write_all(fds[1], r->timeline, r->nseconds * sizeof *r->timeline));
        _exit(rc ? 1 : 0);
    }
    close(fds[1]);
    size_t got = pid > 0 ? read_all(fds[0], r, sizeof *r, pid, &passed) : 0;
    int whole = got == sizeof *r;
    if (whole) {
        r->timeline = NULL;
        if (r->nseconds) {
            r->timeline = calloc(r->nseconds, sizeof *r->timeline);
            whole = r->timeline && read_all(fds[0], r->timeline, r->nseconds * sizeof *r->timeline, pid, &passed) ==
                                       r->nseconds * sizeof *r->timeline;
        }
    }
    close(fds[0]);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (whole && WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return;
    if (whole)
        bench_result_free(r);
    result_init(r);
    r->status = RUN_ERROR;
    if (pid < 0)
        snprintf(r->reason, sizeof r->reason, "fork: %s", strerror(errno));
    else if (WIFSIGNALED(st))
        snprintf(r->reason, sizeof r->reason, "the plugin %s died of signal %d (%s) during the run, in its own process "
                 "(nothing of the run is reported)", d->name, WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(r->reason, sizeof r->reason, "the plugin %s's run ended its process (exit %d) without a result",
                 d->name, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    /* the run directory the child made, which it could not remove */
    snprintf(r->run_dir, sizeof r->run_dir, "%.3900s/%.150s.db", cfg->dir, cfg->engine);
    if (!cfg->reuse)
        ut_scratch_remove(r->run_dir);
}

void bench_run(const struct bench_config *cfg, struct bench_result *r, void (*tick)(void *), void *arg)
{
    const struct bench_driver *d = bench_driver_find(cfg->engine);
    if (d && d->isolate)
        run_isolated(cfg, d, r, tick, arg);
    else
        run_here(cfg, r, tick, arg);
    if (r->status == RUN_INTERRUPTED) /* this process's signal (an isolated child's is the one passed on) */
        r->stop_signal = bench_stop_signal();
}
