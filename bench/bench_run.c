/*
 * bench_run.c -- runs one configuration of the benchmark.
 *
 * Sequence: n/a check; fresh run directory (unless --reuse); open; an
 * untimed preload on one connection; one thread per client, running
 * transactions back to back; --warmup seconds unmeasured; then the
 * measured phase, --duration seconds or until --txns transactions have
 * been claimed; close (and, with --verify, reopen and read every key back).
 *
 * Measurement rules:
 *   - a transaction counts when it completes inside the measured phase
 *     (duration mode), or when it claimed one of the --txns slots;
 *   - its latency is begin to commit return, including waits for locks;
 *   - counters (engine, /proc/self/io, /sys/block/DEV/stat, getrusage)
 *     are sampled at the phase's two ends and reported as differences, so
 *     the preload, warm-up and close are not in them.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_env.h"
#include "bench_workload.h"
#include "cli.h"

enum { PH_WARMUP = 0, PH_MEASURE = 1, PH_STOP = 2 };

static volatile sig_atomic_t interrupted;

void bench_interrupt(void) { interrupted = 1; }
int bench_interrupted(void) { return interrupted != 0; }

struct run_shared {
    const struct bench_config *cfg;
    const struct bench_workload *wl;
    struct bench_db *db;
    int phase;                    /* atomic */
    uint64_t claimed;             /* atomic, --txns mode */
    uint64_t t0_ns;               /* start of the measured phase */
    struct hist **timeline;       /* one per second, allocated on first use */
    size_t tcap;
    pthread_mutex_t mu;
    int failed;
    char err[BENCH_ERRLEN];
    const struct bench_zipf *zipf;
    uint8_t *written;
    /* engine counters sampled at each second boundary of the measured
     * phase (by the main thread), for the timeline's marks */
    struct bench_engine_stats *marks;
    size_t nmarks;
};

struct client {
    struct run_shared *sh;
    struct bench_conn conn;
    struct bench_worker w;
    struct hist lat;
    uint64_t txns, ops, aborts;
    uint64_t committed;           /* in every phase (tpcb's verification counts history rows) */
    uint64_t last_end_ns;
    pthread_t th;
};

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}

void bench_rm_tree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

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

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct run_shared *sh = c->sh;
    const struct bench_config *cfg = sh->cfg;

    for (;;) {
        int ph = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
        int claimed = 0;
        if (ph == PH_STOP)
            break;
        if (ph == PH_MEASURE && cfg->txns) {
            if (__atomic_fetch_add(&sh->claimed, 1, __ATOMIC_RELAXED) >= cfg->txns)
                break;
            claimed = 1;
        }
        unsigned ops = 0;
        uint64_t t = bench_now_ns();
        int rc;
        /* an aborted transaction runs again; its latency runs from the first try */
        while ((rc = sh->wl->txn(&c->conn, cfg, &c->w, &ops)) == BENCH_RETRY) {
            if (__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PH_MEASURE)
                c->aborts++;
            if (__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PH_STOP)
                break;
        }
        uint64_t e = bench_now_ns();
        if (rc == BENCH_RETRY)
            break;
        if (rc) {
            set_failed(sh, c->conn.err[0] ? c->conn.err : "transaction failed");
            break;
        }
        c->committed++;
        if (cfg->txns ? claimed : __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) == PH_MEASURE) {
            hist_record(&c->lat, e - t);
            c->txns++;
            c->ops += ops;
            c->last_end_ns = e;
            timeline_record(sh, e, e - t);
        }
    }
    return NULL;
}

struct snapshot {
    struct bench_engine_stats es;
    int64_t io_write, io_wchar, dev;
    double cpu_s;
};

static void take_snapshot(struct bench_db *db, const char *device, struct snapshot *s)
{
    struct rusage ru;
    db->drv->stats(db, &s->es);
    bench_proc_io(&s->io_write, &s->io_wchar);
    s->dev = bench_device_written(device);
    getrusage(RUSAGE_SELF, &ru);
    s->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               (double)ru.ru_stime.tv_usec / 1e6;
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
    size_t s = (size_t)((bench_now_ns() - sh->t0_ns) / 1000000000ull);
    while (sh->nmarks <= s && sh->nmarks < sh->tcap + 1)
        sh->db->drv->stats(sh->db, &sh->marks[sh->nmarks++]);
}

/* Sleeps up to secs, in slices, calling tick; returns early on stop. */
static void wait_phase(struct run_shared *sh, double secs, void (*tick)(void *), void *arg)
{
    double end = bench_now() + secs;
    for (;;) {
        double left = end - bench_now();
        if (interrupted)
            set_failed(sh, "interrupted");
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

void bench_run(const struct bench_config *cfg, struct bench_result *r, void (*tick)(void *), void *arg)
{
    const struct bench_driver *drv = bench_driver_find(cfg->engine);
    const struct bench_workload *wl = bench_workload_find(cfg->workload);
    struct bench_db db;
    struct run_shared sh;
    struct client *cl = NULL;
    struct bench_zipf zipf;
    struct snapshot s0, s1;
    unsigned started = 0, opened = 0;
    int db_open = 0;
    time_t now = time(NULL);
    struct tm tm;

    memset(r, 0, sizeof *r);
    hist_init(&r->lat);
    r->syncs = r->wal_bytes = r->data_bytes = r->checkpoints = r->checkpoint_pause_us = -1;
    r->engine_commits = r->io_write_bytes = r->io_wchar = r->dev_write_bytes = -1;
    r->segment_switches = r->segments_created = r->segments_recycled = r->segments_removed = -1;
    r->segments_reused = -1;
    r->segment_waits = r->segment_wait_us = r->max_switch_commit_us = r->prealloc_error = -1;
    gmtime_r(&now, &tm);
    strftime(r->time_utc, sizeof r->time_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.mu, NULL);

    mkdir(cfg->dir, 0755);
    bench_env_probe(cfg->dir, &r->env);
    if (!drv || !drv->built) {
        r->status = RUN_NA;
        snprintf(r->reason, sizeof r->reason, "engine %s is not built into this binary", cfg->engine);
        goto out;
    }
    drv->describe(cfg, r->settings, sizeof r->settings);
    if (drv->check(cfg, r->reason, sizeof r->reason)) {
        r->status = RUN_NA;
        goto out;
    }

    memset(&db, 0, sizeof db);
    db.drv = drv;
    db.cfg = cfg;
    snprintf(db.path, sizeof db.path, "%s/%s.db", cfg->dir, cfg->engine);
    snprintf(r->run_dir, sizeof r->run_dir, "%s", db.path);
    if (!cfg->reuse)
        bench_rm_tree(db.path);
    if (mkdir(db.path, 0755) && errno != EEXIST) {
        r->status = RUN_ERROR;
        snprintf(r->reason, sizeof r->reason, "mkdir %.160s: %.60s", db.path, strerror(errno));
        goto out;
    }

    int rc = drv->open(&db);
    if (rc) {
        r->status = rc == BENCH_NA ? RUN_NA : RUN_ERROR;
        snprintf(r->reason, sizeof r->reason, "%s", db.err);
        goto out;
    }
    db_open = 1;

    sh.cfg = cfg;
    sh.wl = wl;
    sh.db = &db;
    if (cfg->zipf && strcmp(cfg->workload, "kv") == 0) {
        bench_zipf_init(&zipf, cfg->keys, cfg->zipf_theta);
        sh.zipf = &zipf;
    }
    if (cfg->verify && strcmp(cfg->workload, "kv") == 0)
        sh.written = calloc(cfg->keys / 8 + 1, 1);

    cl = calloc(cfg->clients, sizeof *cl);
    if (!cl) {
        r->status = RUN_ERROR;
        snprintf(r->reason, sizeof r->reason, "out of memory");
        goto out;
    }
    for (unsigned i = 0; i < cfg->clients; i++, opened++) {
        struct client *c = &cl[i];
        c->sh = &sh;
        c->conn.db = &db;
        c->conn.id = i;
        c->w.id = i;
        c->w.rng = cfg->seed * 0x100000001b3ull + i + 1;
        c->w.zipf = sh.zipf;
        c->w.written = sh.written;
        hist_init(&c->lat);
        if (drv->conn_open(&c->conn)) {
            r->status = RUN_ERROR;
            snprintf(r->reason, sizeof r->reason, "client %u: %.200s", i, c->conn.err);
            goto out;
        }
    }

    /* preload (untimed) */
    double tp = bench_now();
    if (cfg->preload && !(cfg->reuse && bench_workload_loaded(&cl[0].conn, cfg))) {
        if (wl->preload(&cl[0].conn, cfg)) {
            r->status = RUN_ERROR;
            snprintf(r->reason, sizeof r->reason, "preload: %.200s", cl[0].conn.err);
            goto out;
        }
    }
    r->preload_seconds = bench_now() - tp;

    sh.tcap = cfg->txns ? 3600 : (size_t)cfg->duration + 2;
    sh.timeline = calloc(sh.tcap, sizeof *sh.timeline);
    sh.marks = calloc(sh.tcap + 1, sizeof *sh.marks);
    if (!sh.timeline || !sh.marks) {
        r->status = RUN_ERROR;
        snprintf(r->reason, sizeof r->reason, "out of memory");
        goto out;
    }

    for (; started < cfg->clients; started++)
        if (pthread_create(&cl[started].th, NULL, client_main, &cl[started])) {
            set_failed(&sh, "cannot start a client thread");
            break;
        }
    wait_phase(&sh, cfg->warmup, tick, arg);

    if (drv->reset_max)
        drv->reset_max(&db);
    take_snapshot(&db, r->env.device, &s0);
    sh.t0_ns = bench_now_ns();
    sh.marks[0] = s0.es;
    sh.nmarks = 1;
    __atomic_store_n(&sh.phase, PH_MEASURE, __ATOMIC_RELEASE);
    uint64_t t1_ns;
    if (cfg->txns) {
        while (__atomic_load_n(&sh.claimed, __ATOMIC_RELAXED) < cfg->txns &&
               __atomic_load_n(&sh.phase, __ATOMIC_ACQUIRE) != PH_STOP)
        {
            wait_phase(&sh, 0.05, NULL, NULL);
            if (tick)
                tick(arg);
        }
        for (unsigned i = 0; i < started; i++)
            pthread_join(cl[i].th, NULL);
        started = 0;
        t1_ns = sh.t0_ns;
        for (unsigned i = 0; i < cfg->clients; i++)
            if (cl[i].last_end_ns > t1_ns)
                t1_ns = cl[i].last_end_ns;
        take_snapshot(&db, r->env.device, &s1);
    } else {
        wait_phase(&sh, cfg->duration, tick, arg);
        t1_ns = bench_now_ns();
        __atomic_store_n(&sh.phase, PH_STOP, __ATOMIC_RELEASE);
        take_snapshot(&db, r->env.device, &s1);
    }
    __atomic_store_n(&sh.phase, PH_STOP, __ATOMIC_RELEASE);
    for (unsigned i = 0; i < started; i++)
        pthread_join(cl[i].th, NULL);
    started = 0;
    if (sh.failed) {
        r->status = RUN_ERROR;
        snprintf(r->reason, sizeof r->reason, "%s", sh.err);
        goto out;
    }

    /* results */
    r->seconds = (double)(t1_ns - sh.t0_ns) / 1e9;
    for (unsigned i = 0; i < cfg->clients; i++) {
        hist_merge(&r->lat, &cl[i].lat);
        r->txns += cl[i].txns;
        r->ops += cl[i].ops;
        r->aborts += cl[i].aborts;
    }
    r->tps = r->seconds > 0 ? (double)r->txns / r->seconds : 0;
    finish_latency(r);
    r->syncs = delta(s0.es.syncs, s1.es.syncs);
    r->engine_commits = delta(s0.es.commits, s1.es.commits);
    r->wal_bytes = delta(s0.es.wal_bytes, s1.es.wal_bytes);
    r->data_bytes = delta(s0.es.data_bytes, s1.es.data_bytes);
    r->checkpoints = delta(s0.es.checkpoints, s1.es.checkpoints);
    r->checkpoint_pause_us = delta(s0.es.checkpoint_pause_us, s1.es.checkpoint_pause_us);
    r->io_write_bytes = delta(s0.io_write, s1.io_write);
    r->io_wchar = delta(s0.io_wchar, s1.io_wchar);
    r->dev_write_bytes = delta(s0.dev, s1.dev);
    r->cpu_us = (s1.cpu_s - s0.cpu_s) * 1e6;
    r->segment_switches = delta(s0.es.segment_switches, s1.es.segment_switches);
    r->segments_created = delta(s0.es.segments_created, s1.es.segments_created);
    r->segments_recycled = delta(s0.es.segments_recycled, s1.es.segments_recycled);
    r->segments_reused = delta(s0.es.segments_reused, s1.es.segments_reused);
    r->segments_removed = delta(s0.es.segments_removed, s1.es.segments_removed);
    r->segment_waits = delta(s0.es.segment_waits, s1.es.segment_waits);
    r->segment_wait_us = delta(s0.es.segment_wait_us, s1.es.segment_wait_us);
    r->max_switch_commit_us = s1.es.max_switch_commit_us;
    r->prealloc_error = s1.es.prealloc_error;

    /* whole seconds, and a last partial one only if it is at least half a
     * second (a sliver would give a meaningless rate) */
    size_t nsec = (size_t)r->seconds + (r->seconds - (double)(size_t)r->seconds >= 0.5);
    if (nsec > sh.tcap)
        nsec = sh.tcap;
    r->timeline = calloc(nsec ? nsec : 1, sizeof *r->timeline);
    if (r->timeline) {
        r->nseconds = nsec;
        for (size_t s = 0; s < nsec; s++) {
            struct hist *h = sh.timeline[s];
            double width = (double)(s + 1) <= r->seconds ? 1.0 : r->seconds - (double)s;
            r->timeline[s].tps = h && width > 0 ? (double)h->count / width : 0;
            r->timeline[s].p99_us = h ? hist_percentile(h, 99) / 1e3 : 0;
            /* marks[s + 1] may be missing for the last second: use s1 */
            const struct bench_engine_stats *a = &sh.marks[s < sh.nmarks ? s : sh.nmarks - 1];
            const struct bench_engine_stats *b = s + 1 < sh.nmarks ? &sh.marks[s + 1] : &s1.es;
            r->timeline[s].segment_switches = delta(a->segment_switches, b->segment_switches);
            r->timeline[s].checkpoints = delta(a->checkpoints, b->checkpoints);
        }
    }

    /* close, then (with --verify) reopen and read everything back */
    for (unsigned i = 0; i < opened; i++)
        drv->conn_close(&cl[i].conn);
    opened = 0;
    drv->close(&db);
    db_open = 0;
    if (cfg->verify) {
        struct bench_conn vc;
        memset(&vc, 0, sizeof vc);
        vc.db = &db;
        if ((rc = drv->open(&db)) != BENCH_OK) {
            r->verified = -1;
            snprintf(r->reason, sizeof r->reason, "verify: reopen: %.200s", db.err);
        } else {
            db_open = 1;
            if (drv->conn_open(&vc)) {
                r->verified = -1;
                snprintf(r->reason, sizeof r->reason, "verify: %.200s", vc.err);
            } else {
                uint64_t *committed = calloc(cfg->clients, sizeof *committed);
                for (unsigned i = 0; committed && i < cfg->clients; i++)
                    committed[i] = cl[i].committed;
                struct bench_verify_in vin = {sh.written, committed, cfg->clients};
                rc = wl->verify(&vc, cfg, &vin, &r->verified_keys);
                free(committed);
                if (rc) {
                    r->verified = -1;
                    snprintf(r->reason, sizeof r->reason, "%s", vc.err);
                } else {
                    r->verified = 1;
                }
                drv->conn_close(&vc);
            }
        }
        if (r->verified < 0)
            r->status = RUN_ERROR;
    }

out:
    if (started) {
        __atomic_store_n(&sh.phase, PH_STOP, __ATOMIC_RELEASE);
        for (unsigned i = 0; i < started; i++)
            pthread_join(cl[i].th, NULL);
    }
    for (unsigned i = 0; i < opened; i++)
        drv->conn_close(&cl[i].conn);
    if (db_open)
        drv->close(&db);
    if (r->run_dir[0] && !cfg->reuse)
        bench_rm_tree(r->run_dir);
    if (sh.timeline) {
        for (size_t s = 0; s < sh.tcap; s++)
            free(sh.timeline[s]);
        free(sh.timeline);
    }
    free(sh.written);
    free(sh.marks);
    free(cl);
    pthread_mutex_destroy(&sh.mu);
}
