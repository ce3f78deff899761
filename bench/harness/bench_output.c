/*
 * bench_output.c -- a run's results as a human table (stdout), CSV, and
 * JSON lines (jansson).  docs/bench.md documents every JSON and CSV field;
 * a field this file adds must be added there too.
 *
 * A run a signal stopped (RUN_INTERRUPTED) is written as a run of its
 * own kind, never as one that measured to its end: its row says
 * "INTERRUPTED" and how far it got, its JSON line and CSV row have the
 * status "interrupted", and its figures -- when it had begun to measure --
 * are over the seconds it measured.
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_output.h"
#include "drivers/driver.h"
#include "ut_build.h"

void bench_label(const struct bench_config *cfg, char *buf, size_t len)
{
    snprintf(buf, len, "%s --sync %s --clients %u%s%s", cfg->engine, bench_knob_word(cfg, K_SYNC), cfg->clients,
             cfg->varying[0] ? " " : "", cfg->varying);
}

const char *bench_signal_name(int sig)
{
    static __thread char other[24];
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    }
    snprintf(other, sizeof other, "signal %d", sig);
    return other;
}

int bench_measured(const struct bench_result *r)
{
    return r->status == RUN_OK || (r->status == RUN_INTERRUPTED && r->stopped_in == BENCH_STOP_MEASURE);
}

void bench_stop_progress(const struct bench_config *cfg, const struct bench_result *r, char *buf, size_t len)
{
    switch (r->stopped_in) {
    case BENCH_STOP_MEASURE:
        if (cfg->txns)
            snprintf(buf, len, "after %llu of %llu transactions (%.1f s)", (unsigned long long)r->txns,
                     (unsigned long long)cfg->txns, r->seconds);
        else
            snprintf(buf, len, "after %.1f s of %g s", r->seconds, cfg->duration);
        return;
    case BENCH_STOP_WARMUP:
        snprintf(buf, len, "in its warm-up (%.1f s of %g s), before anything was measured", r->warmup_done_s,
                 cfg->warmup);
        return;
    default:
        snprintf(buf, len, "while opening and preloading its store, before anything was measured");
        return;
    }
}

/* "interrupted by SIGINT after 2.1 s of 10 s": an interrupted run's
 * reason, led by word. */
static void stop_reason(const struct bench_config *cfg, const struct bench_result *r, const char *word, char *buf,
                        size_t len)
{
    char how[200];
    bench_stop_progress(cfg, r, how, sizeof how);
    if (r->stop_signal)
        snprintf(buf, len, "%s by %s %s", word, bench_signal_name(r->stop_signal), how);
    else
        snprintf(buf, len, "%s %s", word, how);
}

/* The reason a line gives: null when ok. */
static const char *reason_of(const struct bench_config *cfg, const struct bench_result *r, char *buf, size_t len)
{
    if (r->status == RUN_OK)
        return NULL;
    if (r->status != RUN_INTERRUPTED)
        return r->reason;
    stop_reason(cfg, r, "interrupted", buf, len);
    return buf;
}

static double per(int64_t v, uint64_t n)
{
    return v < 0 || n == 0 ? -1 : (double)v / (double)n;
}

void bench_file_figures(const struct bench_result *r, struct bench_file_figures *ff)
{
    double commits = r->engine_commits > 0 ? (double)r->engine_commits : (double)r->txns;
    ff->syncs_per_commit = r->file_syncs >= 0 && commits > 0 ? (double)r->file_syncs / commits : -1;
    ff->commits_per_sync = r->file_syncs > 0 ? commits / (double)r->file_syncs : -1;
    ff->writes_per_commit = r->file_writes >= 0 && commits > 0 ? (double)r->file_writes / commits : -1;
    ff->bytes_per_commit = r->file_bytes >= 0 && commits > 0 ? (double)r->file_bytes / commits : -1;
}

static void cell_num(char *buf, size_t len, double v, const char *fmt)
{
    if (v < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v);
}

void bench_table_header(FILE *f)
{
    fprintf(f, "%-9s %-8s %7s %13s %9s %8s %8s %9s %8s %12s %10s %10s %10s %8s %8s %14s %17s %15s %10s  %s\n", "engine",
            "sync", "clients", "ops/sec", "usecs/op", "p50 us", "p99 us", "p99.9 us", "max ms", "commits/sync",
            "log B/txn", "dev B/txn", "cpu us/txn", "vcs/txn", "ics/txn", "file syncs/txn", "file commits/sync",
            "file writes/txn", "file B/txn", "settings");
}

int bench_recycle_unexercised(const struct bench_config *cfg, const struct bench_result *r)
{
    return r->status == RUN_OK && strcmp(cfg->engine, "commitlab") == 0 && cfg->segments == CL_SEGMENTS_RECYCLE &&
           r->segments_reused == 0;
}

void bench_segments_note(const struct bench_config *cfg, const struct bench_result *r, char *buf, size_t len)
{
    buf[0] = 0;
    if (r->segment_switches < 0)
        return;
    int n = snprintf(buf, len, "segments: %lld switches, %lld new, %lld recycled, %lld reused, %lld removed; "
                               "%lld waits %.1f ms; max commit at a switch %.2f ms",
                     (long long)r->segment_switches, (long long)r->segments_created,
                     (long long)r->segments_recycled, (long long)r->segments_reused,
                     (long long)r->segments_removed, (long long)r->segment_waits,
                     (double)r->segment_wait_us / 1e3, (double)r->max_switch_commit_us / 1e3);
    if (n > 0 && (size_t)n < len && r->prealloc_error > 0)
        n += snprintf(buf + n, len - (size_t)n, "; prealloc thread stopped: error %lld",
                      (long long)r->prealloc_error);
    if (n > 0 && (size_t)n < len && bench_recycle_unexercised(cfg, r))
        snprintf(buf + n, len - (size_t)n, "; NOTE: recycling not exercised (no recycled segment was "
                                           "reused; run longer or checkpoint more often)");
}

uint64_t bench_batch_syncs(const struct bench_result *r)
{
    uint64_t n = 0;
    if (r->batch_hist[1] < 0)
        return 0;
    for (size_t i = 1; i < BENCH_BATCH_HIST; i++)
        n += (uint64_t)r->batch_hist[i];
    return n;
}

int64_t bench_batch_quantile(const struct bench_result *r, double q)
{
    uint64_t total = bench_batch_syncs(r), seen = 0;
    if (!total)
        return 0;
    uint64_t want = (uint64_t)(q * (double)total + 0.999999);
    if (want < 1)
        want = 1;
    for (size_t i = 1; i < BENCH_BATCH_HIST; i++) {
        seen += (uint64_t)r->batch_hist[i];
        if (seen >= want)
            return (int64_t)i;
    }
    return BENCH_BATCH_HIST - 1;
}

/* "p50/p99/max 30/33/41", the last as "257+" when in the overflow entry. */
static void batch_note(const struct bench_result *r, char *buf, size_t len)
{
    int64_t v[3] = {bench_batch_quantile(r, 0.5), bench_batch_quantile(r, 0.99), bench_batch_quantile(r, 1.0)};
    char s[3][16];
    for (int i = 0; i < 3; i++)
        snprintf(s[i], sizeof s[i], v[i] == BENCH_BATCH_HIST - 1 ? "%lld+" : "%lld", (long long)v[i]);
    snprintf(buf, len, "commits per sync p50/p99/max %s/%s/%s", s[0], s[1], s[2]);
}

/* 1 when the space- or semicolon-separated words of text include w. */
static int has_word(const char *text, const char *w)
{
    size_t n = strlen(w);
    for (const char *q = text; (q = strstr(q, w)) != NULL; q++)
        if ((q == text || q[-1] == ' ' || q[-1] == ';') && (q[n] == 0 || q[n] == ' ' || q[n] == ';'))
            return 1;
    return 0;
}

/* The words of varying ("elr=on value-size=100") that settings does not
 * already say (an engine's description names elr=on), in out. */
static void varying_beyond(const char *settings, const char *varying, char *out, size_t len)
{
    char copy[sizeof ((struct bench_config *)0)->varying], *save = NULL;
    size_t o = 0;
    out[0] = 0;
    snprintf(copy, sizeof copy, "%s", varying);
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
        if (!has_word(settings, w) && o < len)
            o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " " : "", w);
}

void bench_table_row(FILE *f, const struct bench_config *cfg, const struct bench_result *r)
{
    char extra[4096], seg[400] = "", varying[sizeof cfg->varying];
    char ver[64] = "";
    if (r->verified > 0)
        snprintf(ver, sizeof ver, "; read back %llu keys: ok", (unsigned long long)r->verified_keys);
    if (r->segment_switches > 0 || cfg->segments == CL_SEGMENTS_RECYCLE || cfg->prealloc)
        bench_segments_note(cfg, r, seg, sizeof seg);
    if (r->aborts) {
        size_t n = strlen(seg);
        double rate = (double)r->aborts / (double)(r->aborts + r->txns);
        snprintf(seg + n, sizeof seg - n, "%saborted and retried: %llu (%.1f%% of attempts)%s", n ? "; " : "",
                 (unsigned long long)r->aborts, rate * 100,
                 rate > 0.5 ? "; NOTE: most transactions aborted" : "");
    }
    char batch[96] = "", open_loop[96] = "", phases[200] = "";
    if (bench_batch_syncs(r))
        batch_note(r, batch, sizeof batch);
    if (r->has_phases) {
        size_t n = (size_t)snprintf(phases, sizeof phases, "; commit us mean(p99):");
        for (int p = 0; p < BENCH_PHASES && n < sizeof phases; p++)
            n += (size_t)snprintf(phases + n, sizeof phases - n, " %s %.0f(%.0f)", bench_phase_names[p],
                                  r->phase_mean_us[p], r->phase_p99_us[p]);
    }
    if (cfg->rate)
        snprintf(open_loop, sizeof open_loop, "; open loop: %u tps offered, latency from scheduled starts",
                 cfg->rate);
    if (r->writes_by_self > 0 && r->writes_by_leader >= 0 && !batch[0])
        snprintf(batch, sizeof batch, "write groups: %lld led, %lld written by a leader (%.1f per group)",
                 (long long)r->writes_by_self, (long long)r->writes_by_leader,
                 (double)(r->writes_by_self + r->writes_by_leader) / (double)r->writes_by_self);
    varying_beyond(r->settings, cfg->varying, varying, sizeof varying);
    char stopped[300] = "";
    if (r->status == RUN_INTERRUPTED) /* first, so that no reader takes the row for a whole run */
        stop_reason(cfg, r, "INTERRUPTED", stopped, sizeof stopped);
    snprintf(extra, sizeof extra, "%s%s%s%s%s%s%s%s%s%s%s%s", stopped, stopped[0] ? "; " : "", r->settings,
             varying[0] ? "; " : "", varying, open_loop, ver, batch[0] ? "; " : "", batch, phases,
             seg[0] ? "; " : "", seg);
    if (!bench_measured(r)) {
        char why[300];
        fprintf(f, "%-9s %-8s %7u %13s  (%s)%s%s\n", cfg->engine, bench_knob_word(cfg, K_SYNC), cfg->clients,
                bench_status_names[r->status], reason_of(cfg, r, why, sizeof why), cfg->varying[0] ? "; " : "",
                cfg->varying);
        return;
    }
    char cps[32], walb[32], devb[32], vcs[32], ics[32], fspc[32], fcps[32], fwpc[32], fbpc[32];
    double commits = r->engine_commits > 0 ? (double)r->engine_commits : (double)r->txns;
    struct bench_file_figures ff;
    bench_file_figures(r, &ff);
    cell_num(cps, sizeof cps, r->syncs > 0 ? commits / (double)r->syncs : -1, "%.2f");
    cell_num(walb, sizeof walb, per(r->wal_bytes, r->txns), "%.0f");
    cell_num(devb, sizeof devb, per(r->dev_write_bytes, r->txns), "%.0f");
    cell_num(vcs, sizeof vcs, per(r->nvcsw, r->txns), "%.2f");
    cell_num(ics, sizeof ics, per(r->nivcsw, r->txns), "%.2f");
    cell_num(fspc, sizeof fspc, ff.syncs_per_commit, "%.2f");
    cell_num(fcps, sizeof fcps, ff.commits_per_sync, "%.2f");
    cell_num(fwpc, sizeof fwpc, ff.writes_per_commit, "%.2f");
    cell_num(fbpc, sizeof fbpc, ff.bytes_per_commit, "%.0f");
    fprintf(
        f, "%-9s %-8s %7u %13.3f %9.0f %8.0f %8.0f %9.0f %8.2f %12s %10s %10s %10.1f %8s %8s %14s %17s %15s %10s  %s\n",
        cfg->engine, bench_knob_word(cfg, K_SYNC), cfg->clients, r->tps, r->mean_us, r->p50_us, r->p99_us, r->p999_us,
        r->max_us / 1e3, cps, walb, devb, r->txns ? r->cpu_us / (double)r->txns : 0, vcs, ics, fspc, fcps, fwpc, fbpc,
        extra);
}

/* ---- JSON -------------------------------------------------------------------- */

static json_t *jint(int64_t v)
{
    return v < 0 ? json_null() : json_integer(v);
}

static json_t *jreal(double v)
{
    return v < 0 ? json_null() : json_real(v);
}

static json_t *jstr(const char *s)
{
    return s && s[0] ? json_string(s) : json_null();
}

static json_t *metrics_json(const struct bench_result *r)
{
    json_t *m = json_object();
    uint64_t n = r->txns;
    int ok = bench_measured(r); /* whole, or until a signal */
    json_object_set_new(m, "txns", ok ? json_integer((json_int_t)n) : json_null());
    json_object_set_new(m, "ops", ok ? json_integer((json_int_t)r->ops) : json_null());
    json_object_set_new(m, "seconds", ok ? json_real(r->seconds) : json_null());
    json_object_set_new(m, "tps", ok ? json_real(r->tps) : json_null());
    json_t *lat = json_object();
    json_object_set_new(lat, "min", ok ? json_real(r->min_us) : json_null());
    json_object_set_new(lat, "mean", ok ? json_real(r->mean_us) : json_null());
    json_object_set_new(lat, "p50", ok ? json_real(r->p50_us) : json_null());
    json_object_set_new(lat, "p90", ok ? json_real(r->p90_us) : json_null());
    json_object_set_new(lat, "p99", ok ? json_real(r->p99_us) : json_null());
    json_object_set_new(lat, "p999", ok ? json_real(r->p999_us) : json_null());
    json_object_set_new(lat, "max", ok ? json_real(r->max_us) : json_null());
    json_object_set_new(m, "latency_us", lat);
    double commits = r->engine_commits > 0 ? (double)r->engine_commits : (double)n;
    json_object_set_new(m, "syncs", ok ? jint(r->syncs) : json_null());
    json_object_set_new(m, "syncs_per_commit", ok && r->syncs >= 0 && commits > 0 ? json_real((double)r->syncs / commits) : json_null());
    json_object_set_new(m, "commits_per_sync", ok && r->syncs > 0 ? json_real(commits / (double)r->syncs) : json_null());
    json_object_set_new(m, "engine_commits", ok ? jint(r->engine_commits) : json_null());
    uint64_t bsyncs = ok ? bench_batch_syncs(r) : 0;
    if (bsyncs) {
        /* commits made durable together: the distribution, not only the mean */
        json_t *b = json_object(), *h = json_object();
        json_object_set_new(b, "syncs", json_integer((json_int_t)bsyncs));
        json_object_set_new(b, "p50", json_integer(bench_batch_quantile(r, 0.5)));
        json_object_set_new(b, "p99", json_integer(bench_batch_quantile(r, 0.99)));
        json_object_set_new(b, "max", json_integer(bench_batch_quantile(r, 1.0)));
        json_object_set_new(b, "max_is_lower_bound", json_boolean(r->batch_hist[BENCH_BATCH_HIST - 1] > 0));
        for (size_t i = 1; i < BENCH_BATCH_HIST; i++)
            if (r->batch_hist[i] > 0) {
                char k[16];
                snprintf(k, sizeof k, i == BENCH_BATCH_HIST - 1 ? "%zu+" : "%zu", i);
                json_object_set_new(h, k, json_integer((json_int_t)r->batch_hist[i]));
            }
        json_object_set_new(b, "hist", h);
        json_object_set_new(m, "commits_per_sync_dist", b);
    } else {
        json_object_set_new(m, "commits_per_sync_dist", json_null());
    }
    if (ok && r->has_phases) {
        /* where a commit's time went, per phase: mean and p99, µs */
        json_t *ph = json_object();
        for (int p = 0; p < BENCH_PHASES; p++) {
            json_t *x = json_object();
            json_object_set_new(x, "mean", json_real(r->phase_mean_us[p]));
            json_object_set_new(x, "p99", json_real(r->phase_p99_us[p]));
            json_object_set_new(ph, bench_phase_names[p], x);
        }
        json_object_set_new(m, "commit_phases_us", ph);
    } else {
        json_object_set_new(m, "commit_phases_us", json_null());
    }
    if (ok && r->writes_by_self >= 0 && r->writes_by_leader >= 0) {
        /* RocksDB's write group: who wrote each write batch */
        json_t *g = json_object();
        json_object_set_new(g, "by_self", json_integer(r->writes_by_self));
        json_object_set_new(g, "by_leader", json_integer(r->writes_by_leader));
        int64_t all = r->writes_by_self + r->writes_by_leader;
        json_object_set_new(g, "group_mean", r->writes_by_self > 0 ? json_real((double)all / (double)r->writes_by_self)
                                                                    : json_null());
        json_object_set_new(m, "write_group", g);
    } else {
        json_object_set_new(m, "write_group", json_null());
    }
    json_object_set_new(m, "log_bytes", ok ? jint(r->wal_bytes) : json_null());
    json_object_set_new(m, "log_bytes_per_commit", ok ? jreal(per(r->wal_bytes, n)) : json_null());
    json_object_set_new(m, "log_writes", ok ? jint(r->log_writes) : json_null());
    json_object_set_new(m, "log_writes_per_commit", ok ? jreal(per(r->log_writes, n)) : json_null());
    json_object_set_new(m, "data_bytes", ok ? jint(r->data_bytes) : json_null());
    json_object_set_new(m, "data_bytes_per_commit", ok ? jreal(per(r->data_bytes, n)) : json_null());
    json_object_set_new(m, "io_write_bytes_per_commit", ok ? jreal(per(r->io_write_bytes, n)) : json_null());
    json_object_set_new(m, "io_wchar_per_commit", ok ? jreal(per(r->io_wchar, n)) : json_null());
    json_object_set_new(m, "device_bytes_per_commit", ok ? jreal(per(r->dev_write_bytes, n)) : json_null());
    json_object_set_new(m, "device_read_bytes_per_commit", ok ? jreal(per(r->dev_read_bytes, n)) : json_null());
    json_object_set_new(m, "cpu_us_per_txn", ok && n ? json_real(r->cpu_us / (double)n) : json_null());
    json_object_set_new(m, "vcsw_per_txn", ok ? jreal(per(r->nvcsw, n)) : json_null());
    json_object_set_new(m, "ivcsw_per_txn", ok ? jreal(per(r->nivcsw, n)) : json_null());
    struct bench_file_figures ff;
    bench_file_figures(r, &ff);
    json_object_set_new(m, "file_syncs", ok ? jint(r->file_syncs) : json_null());
    json_object_set_new(m, "file_writes", ok ? jint(r->file_writes) : json_null());
    json_object_set_new(m, "file_write_bytes", ok ? jint(r->file_bytes) : json_null());
    json_object_set_new(m, "file_syncs_per_commit", ok ? jreal(ff.syncs_per_commit) : json_null());
    json_object_set_new(m, "file_commits_per_sync", ok ? jreal(ff.commits_per_sync) : json_null());
    json_object_set_new(m, "file_writes_per_commit", ok ? jreal(ff.writes_per_commit) : json_null());
    json_object_set_new(m, "file_write_bytes_per_commit", ok ? jreal(ff.bytes_per_commit) : json_null());
    json_object_set_new(m, "checkpoints", ok ? jint(r->checkpoints) : json_null());
    json_object_set_new(m, "checkpoint_pause_us", ok ? jint(r->checkpoint_pause_us) : json_null());
    json_object_set_new(m, "preload_s", ok ? json_real(r->preload_seconds) : json_null());
    json_object_set_new(m, "aborts", ok ? json_integer((json_int_t)r->aborts) : json_null());
    json_object_set_new(m, "abort_rate", ok && r->aborts + n ? json_real((double)r->aborts / (double)(r->aborts + n))
                                                             : json_null());
    json_t *seg = json_object();
    json_object_set_new(seg, "switches", ok ? jint(r->segment_switches) : json_null());
    json_object_set_new(seg, "created", ok ? jint(r->segments_created) : json_null());
    json_object_set_new(seg, "recycled", ok ? jint(r->segments_recycled) : json_null());
    json_object_set_new(seg, "reused", ok ? jint(r->segments_reused) : json_null());
    json_object_set_new(seg, "removed", ok ? jint(r->segments_removed) : json_null());
    json_object_set_new(seg, "waits", ok ? jint(r->segment_waits) : json_null());
    json_object_set_new(seg, "wait_us", ok ? jint(r->segment_wait_us) : json_null());
    json_object_set_new(seg, "max_commit_at_switch_us", ok ? jint(r->max_switch_commit_us) : json_null());
    json_object_set_new(seg, "prealloc_error", ok && r->prealloc_error >= 0 ? json_integer(r->prealloc_error)
                                                                            : json_null());
    json_object_set_new(m, "segments", seg);
    json_t *tl = json_array();
    for (size_t i = 0; ok && i < r->nseconds; i++) {
        json_t *s = json_object();
        json_object_set_new(s, "t", json_integer((json_int_t)i + 1));
        json_object_set_new(s, "tps", json_real(r->timeline[i].tps));
        json_object_set_new(s, "p99_us", json_real(r->timeline[i].p99_us));
        json_object_set_new(s, "segment_switches", jint(r->timeline[i].segment_switches));
        json_object_set_new(s, "checkpoints", jint(r->timeline[i].checkpoints));
        json_array_append_new(tl, s);
    }
    json_object_set_new(m, "timeline", tl);
    json_object_set_new(m, "verified", r->verified == 0 ? json_null() : json_boolean(r->verified > 0));
    json_object_set_new(m, "verified_keys", r->verified > 0 ? json_integer((json_int_t)r->verified_keys) : json_null());
    return m;
}

json_t *bench_env_json(const struct bench_env *e, const struct bench_config *cfg)
{
    json_t *j = json_object();
    const struct bench_driver *d = bench_driver_find(cfg->engine);
    json_object_set_new(j, "kernel", jstr(e->kernel));
    json_object_set_new(j, "os", jstr(e->os));
    json_object_set_new(j, "machine", jstr(e->machine));
    json_object_set_new(j, "hostname", jstr(e->hostname));
    json_object_set_new(j, "cpu_model", jstr(e->cpu_model));
    json_object_set_new(j, "cores", json_integer(e->cores));
    json_object_set_new(j, "fs_type", jstr(e->fs_type));
    json_object_set_new(j, "fs_magic", jstr(e->fs_magic_name));
    json_object_set_new(j, "mount_point", jstr(e->mount_point));
    json_object_set_new(j, "mount_source", jstr(e->mount_source));
    json_object_set_new(j, "mount_options", jstr(e->mount_options));
    json_object_set_new(j, "super_options", jstr(e->super_options));
    json_object_set_new(j, "device", jstr(e->device));
    json_object_set_new(j, "dev_id", jstr(e->dev_id));
    json_object_set_new(j, "volatile_fs", json_boolean(e->volatile_fs));
    json_object_set_new(j, "fs_journal", e->fs_journal < 0 ? json_null() : json_boolean(e->fs_journal));
    json_object_set_new(j, "engine_version", d && d->built && d->version ? jstr(d->version(d)) : json_null());
    json_object_set_new(j, "engine_plugin", d && d->plugin_path ? json_string(d->plugin_path) : json_null());
    json_object_set_new(j, "commitlab_version", json_string(bench_driver_commitlab.version(&bench_driver_commitlab)));
    json_object_set_new(j, "commitlab_commit", json_string(ut_source_commit()));
    return j;
}

int bench_json_append(FILE *f, const struct bench_config *cfg, const struct bench_result *r,
                      unsigned run_index, unsigned nruns)
{
    return bench_json_append_extra(f, cfg, r, run_index, nruns, NULL, NULL);
}

int bench_json_write(FILE *f, json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    if (!s)
        return -1;
    int rc = fprintf(f, "%s\n", s) < 0 ? -1 : 0;
    free(s);
    if (fflush(f))
        rc = -1;
    return rc;
}

int bench_json_append_extra(FILE *f, const struct bench_config *cfg, const struct bench_result *r,
                            unsigned run_index, unsigned nruns, const char *key, json_t *extra)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string(BENCH_SCHEMA));
    json_object_set_new(o, "time", json_string(r->time_utc));
    json_object_set_new(o, "run", json_integer(run_index));
    json_object_set_new(o, "runs", json_integer(nruns));
    json_object_set_new(o, "engine", json_string(cfg->engine));
    json_object_set_new(o, "workload", json_string(cfg->workload));
    char why[300];
    const char *reason = reason_of(cfg, r, why, sizeof why);
    json_object_set_new(o, "status", json_string(bench_status_names[r->status]));
    json_object_set_new(o, "reason", reason ? json_string(reason) : json_null());
    if (r->status == RUN_INTERRUPTED)
        json_object_set_new(o, "interrupted",
                            json_pack("{s:o, s:s}", "signal",
                                      r->stop_signal ? json_string(bench_signal_name(r->stop_signal)) : json_null(),
                                      "during", bench_stop_names[r->stopped_in]));
    else
        json_object_set_new(o, "interrupted", json_null());
    json_object_set_new(o, "engine_settings", jstr(r->settings));
    json_t *config = bench_config_json(cfg);
    if (r->stored_segment_size) /* --reuse: the store's own, which is what ran */
        json_object_set_new(config, "segment_size", json_integer((json_int_t)r->stored_segment_size));
    json_object_set_new(o, "config", config);
    json_object_set_new(o, "metrics", metrics_json(r));
    json_object_set_new(o, "env", bench_env_json(&r->env, cfg));
    if (key && extra)
        json_object_set(o, key, extra);
    int rc = bench_json_write(f, o);
    json_decref(o);
    return rc;
}

/* ---- CSV --------------------------------------------------------------------- */

static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v, const char *fmt)
{
    fputc(',', f);
    if (v >= 0)
        fprintf(f, fmt, v);
}

void bench_csv_header(FILE *f)
{
    fprintf(f, "time");
    for (int k = 0; k < bench_knob_count(); k++) /* the knobs the table marks as CSV columns */
        if (bench_knob((enum bench_knob)k)->flags & KF_CSV)
            fprintf(f, ",%s", bench_knob((enum bench_knob)k)->key);
    fprintf(f, ",status,reason,engine_settings,varying,"
               "txns,seconds,tps,lat_mean_us,lat_p50_us,lat_p90_us,lat_p99_us,lat_p999_us,lat_max_us,"
               "syncs_per_commit,commits_per_sync,log_bytes_per_commit,data_bytes_per_commit,"
               "io_write_bytes_per_commit,device_bytes_per_commit,cpu_us_per_txn,checkpoints,checkpoint_pause_us,"
               "segment_switches,segments_created,segments_recycled,segments_reused,segments_removed,"
               "segment_waits,segment_wait_us,max_commit_at_switch_us,vcsw_per_txn,ivcsw_per_txn,"
               "file_syncs_per_commit,file_commits_per_sync,file_writes_per_commit,file_write_bytes_per_commit\n");
}

void bench_csv_row(FILE *f, const struct bench_config *cfg, const struct bench_result *r)
{
    int ok = bench_measured(r);
    char why[300];
    const char *reason = reason_of(cfg, r, why, sizeof why);
    uint64_t n = r->txns;
    double commits = r->engine_commits > 0 ? (double)r->engine_commits : (double)n;
    fprintf(f, "%s", r->time_utc);
    for (int k = 0; k < bench_knob_count(); k++)
        if (bench_knob((enum bench_knob)k)->flags & KF_CSV) {
            char v[256];
            bench_knob_format(cfg, (enum bench_knob)k, v, sizeof v);
            fprintf(f, ",%s", v);
        }
    fprintf(f, ",%s,", bench_status_names[r->status]);
    csv_str(f, reason ? reason : "");
    fputc(',', f);
    csv_str(f, r->settings);
    fputc(',', f);
    csv_str(f, cfg->varying);
    if (!ok) {
        fprintf(f, ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,\n");
        return;
    }
    fprintf(f, ",%llu", (unsigned long long)n);
    csv_num(f, r->seconds, "%.3f");
    csv_num(f, r->tps, "%.3f");
    csv_num(f, r->mean_us, "%.1f");
    csv_num(f, r->p50_us, "%.1f");
    csv_num(f, r->p90_us, "%.1f");
    csv_num(f, r->p99_us, "%.1f");
    csv_num(f, r->p999_us, "%.1f");
    csv_num(f, r->max_us, "%.1f");
    csv_num(f, r->syncs >= 0 && commits > 0 ? (double)r->syncs / commits : -1, "%.4f");
    csv_num(f, r->syncs > 0 ? commits / (double)r->syncs : -1, "%.3f");
    csv_num(f, per(r->wal_bytes, n), "%.1f");
    csv_num(f, per(r->data_bytes, n), "%.1f");
    csv_num(f, per(r->io_write_bytes, n), "%.1f");
    csv_num(f, per(r->dev_write_bytes, n), "%.1f");
    csv_num(f, n ? r->cpu_us / (double)n : -1, "%.2f");
    csv_num(f, (double)r->checkpoints, "%.0f");
    csv_num(f, (double)r->checkpoint_pause_us, "%.0f");
    csv_num(f, (double)r->segment_switches, "%.0f");
    csv_num(f, (double)r->segments_created, "%.0f");
    csv_num(f, (double)r->segments_recycled, "%.0f");
    csv_num(f, (double)r->segments_reused, "%.0f");
    csv_num(f, (double)r->segments_removed, "%.0f");
    csv_num(f, (double)r->segment_waits, "%.0f");
    csv_num(f, (double)r->segment_wait_us, "%.0f");
    csv_num(f, (double)r->max_switch_commit_us, "%.0f");
    csv_num(f, per(r->nvcsw, n), "%.3f");
    csv_num(f, per(r->nivcsw, n), "%.3f");
    struct bench_file_figures ff;
    bench_file_figures(r, &ff);
    csv_num(f, ff.syncs_per_commit, "%.4f");
    csv_num(f, ff.commits_per_sync, "%.3f");
    csv_num(f, ff.writes_per_commit, "%.3f");
    csv_num(f, ff.bytes_per_commit, "%.1f");
    fputc('\n', f);
}
