/*
 * report_load.c -- the report's model: reads JSON lines, keeps what each
 * schema says, and groups bench runs so that a chart can draw a series.
 *
 * A series is one configuration on one env (host + filesystem + mount):
 * the configuration is the engine, workload and sync policy plus every
 * config knob whose value differs between the runs of the input, so a
 * sweep of --commit-delay gives one series per delay while knobs nobody
 * changed stay out of the labels.  Client count, seed and run directory
 * never split a series: the first is the x axis, the others do not change
 * what is measured.  Runs of one series at one client count are repeats,
 * summarised as median, min and max.
 *
 * A line of a run or a crash combination that a signal stopped (status
 * "interrupted") is kept in a place of its own -- r->stopped, or a crash
 * combination of its own marked interrupted -- so that what it measured
 * until then is shown, labelled, and never counted among the runs that
 * measured to their end.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_config.h"
#include "bench_schema.h"
#include "report.h"
#include "ut_stats.h"

/* ---- small helpers ------------------------------------------------------------ */

void *rp_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "commitlab report: out of memory\n");
        exit(1);
    }
    return q;
}

char *rp_strdup(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *d = rp_xrealloc(NULL, n);
    memcpy(d, s ? s : "", n);
    return d;
}

char *rp_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = rp_xrealloc(NULL, (size_t)(n < 0 ? 0 : n) + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    va_end(ap);
    return s;
}

json_t *rp_get(json_t *o, const char *key)
{
    return json_is_object(o) ? json_object_get(o, key) : NULL;
}

double rp_num(json_t *o, const char *key)
{
    json_t *v = rp_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *rp_str(json_t *o, const char *key, const char *def)
{
    json_t *v = rp_get(o, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

/* A string from the input as stderr may show it: no terminal controls. */
static void print_clean(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static void push_note(struct rp_note **v, size_t *n, const char *file, size_t line, char *why)
{
    *v = rp_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[*n].where = rp_printf("%s:%zu", file, line);
    (*v)[*n].why = why;
    (*n)++;
}

/* A line the report leaves out: named on stderr and in the Input section. */
static void skip(struct report *r, const char *file, size_t line, char *why)
{
    fprintf(stderr, "%s:%zu: ", file, line);
    print_clean(stderr, why);
    fprintf(stderr, ", skipped\n");
    push_note(&r->skipped, &r->nskipped, file, line, why);
}

/* ---- one line per schema --------------------------------------------------------- */

static void keep_time(struct report *r, const char *t)
{
    if (!t)
        return;
    if (!r->time_first || strcmp(t, r->time_first) < 0) {
        free(r->time_first);
        r->time_first = rp_strdup(t);
    }
    if (!r->time_last || strcmp(t, r->time_last) > 0) {
        free(r->time_last);
        r->time_last = rp_strdup(t);
    }
}

/* What is missing from an ok bench line for it to be drawn, or NULL. */
static const char *bench_line_problem(json_t *j)
{
    json_t *c = rp_get(j, "config"), *m = rp_get(j, "metrics");
    if (!json_is_object(c))
        return "no config object";
    if (!json_is_object(m))
        return "no metrics object";
    if (!json_is_object(rp_get(j, "env")))
        return "no env object";
    if (!rp_str(c, "engine", NULL) || !rp_str(c, "workload", NULL) || !rp_str(c, "sync", NULL))
        return "config without engine, workload or sync";
    if (!json_is_integer(rp_get(c, "clients")) || json_integer_value(rp_get(c, "clients")) < 1)
        return "config.clients is not a positive integer";
    if (json_integer_value(rp_get(c, "clients")) > BENCH_SCHEMA_MAX_CLIENTS)
        return "config.clients above " RP_STR(BENCH_SCHEMA_MAX_CLIENTS) ", more than bench runs";
    double tps = rp_num(m, "tps");
    if (!isfinite(tps) || tps < 0)
        return "metrics.tps is not a number";
    if (tps > BENCH_SCHEMA_MAX_TPS)
        return "metrics.tps above 1e9, not a measurement";
    return NULL;
}

/* The first figure of metrics (recursively) that is negative, not finite
 * or implausibly large, written into why; 0 when there is none. */
static int implausible_figure(json_t *v, char *path, size_t cap, size_t len, char *why, size_t wlen)
{
    if (json_is_number(v)) {
        double d = json_number_value(v);
        if (!isfinite(d) || d < 0 || d > BENCH_SCHEMA_MAX_FIGURE) {
            snprintf(why, wlen, "%s is %g, %s", path, d,
                     !isfinite(d) ? "not finite" : d < 0 ? "negative" : "above 1e15");
            return 1;
        }
        return 0;
    }
    if (json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e) {
            snprintf(path + len, cap - len, ".%s", k);
            if (implausible_figure(e, path, cap, strlen(path), why, wlen))
                return 1;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            snprintf(path + len, cap - len, "[%zu]", i);
            if (implausible_figure(e, path, cap, strlen(path), why, wlen))
                return 1;
        }
    }
    path[len] = 0;
    return 0;
}

/* ---- whole counts ---------------------------------------------------------------- */

/* 1 when v is absent, null, or a whole number of 0 or more (3, 3.0, 1e3):
 * what a count must be; 0.5 transactions or 2.5 crashes are no count. */
static int whole_count(json_t *v)
{
    if (!v || json_is_null(v))
        return 1;
    if (json_is_integer(v))
        return json_integer_value(v) >= 0 && json_integer_value(v) <= (json_int_t)BENCH_SCHEMA_MAX_FIGURE;
    double d = json_is_real(v) ? json_real_value(v) : NAN;
    return isfinite(d) && d >= 0 && d <= BENCH_SCHEMA_MAX_FIGURE && floor(d) == d;
}

/* The member of v at path ("metrics.txns"; "a[]" every element of array
 * a, "*" every member of an object) that is no whole count: its path,
 * with the indexes and names of what was walked, and its value in why;
 * 0 when every one is whole (or absent). */
static int not_whole(json_t *v, const char *path, char *walked, size_t cap, size_t len, char *why, size_t wlen)
{
    if (!*path) {
        if (whole_count(v))
            return 0;
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        snprintf(why, wlen, "%s is %.60s, not a whole count", walked, s ? s : "?");
        free(s);
        return 1;
    }
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    const char *rest = dot ? dot + 1 : "";
    int each = n >= 2 && path[n - 2] == '[' && path[n - 1] == ']';
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)(each ? n - 2 : n), path);
    if (strcmp(key, "*") == 0) {
        const char *k;
        json_t *e;
        json_object_foreach(json_is_object(v) ? v : NULL, k, e) {
            snprintf(walked + len, cap - len, ".%s", k);
            if (not_whole(e, rest, walked, cap, strlen(walked), why, wlen))
                return 1;
        }
        walked[len] = 0;
        return 0;
    }
    json_t *m = rp_get(v, key);
    snprintf(walked + len, cap - len, "%s%s", len ? "." : "", key);
    size_t at = strlen(walked);
    if (!each)
        return not_whole(m, rest, walked, cap, at, why, wlen);
    size_t i;
    json_t *e;
    json_array_foreach(json_is_array(m) ? m : NULL, i, e) {
        snprintf(walked + at, cap - at, "[%zu]", i);
        if (not_whole(e, rest, walked, cap, strlen(walked), why, wlen))
            return 1;
    }
    walked[len] = 0;
    return 0;
}

/* The counts of a commitlab-bench/1 line (docs/bench.md section 5) that
 * the report reads, each a whole number: a line with 10.5 transactions
 * or 2.5 cores is skipped, naming the field. */
/* clang-format off */
static const char *const bench_counts[] = {
    "config.clients", "metrics.txns", "metrics.ops", "metrics.syncs", "metrics.engine_commits",
    "metrics.log_bytes", "metrics.data_bytes", "metrics.checkpoints", "metrics.checkpoint_pause_us",
    "metrics.aborts", "metrics.verified_keys", "metrics.file_syncs", "metrics.file_writes",
    "metrics.file_write_bytes", "metrics.commits_per_sync_dist.syncs",
    "metrics.commits_per_sync_dist.p50", "metrics.commits_per_sync_dist.p99", "metrics.commits_per_sync_dist.max",
    "metrics.commits_per_sync_dist.hist.*", "metrics.write_group.by_self", "metrics.write_group.by_leader",
    "metrics.segments.switches", "metrics.segments.created", "metrics.segments.recycled",
    "metrics.segments.reused", "metrics.segments.removed", "metrics.segments.waits", "metrics.segments.wait_us",
    "metrics.segments.max_commit_at_switch_us", "metrics.timeline[].t", "metrics.timeline[].segment_switches",
    "metrics.timeline[].checkpoints", "env.cores", "repeat.round", "repeat.rounds", "matrix.repeats",
};
/* clang-format on */

/* The counts of a commitlab-crash/1 line (docs/crash.md section 5): its
 * totals and the integers of its combination. */
static const char *const crash_counts[] = {
    "crashes", "crashes_mid_run", "acked_lost", "acked_lost_worst_crash", "unacked_survived",
    "atomicity_violations", "foreign_values", "phantoms", "recovery_failures", "clients", "prealloc",
    "txns_per_client", "pipeline",
};

/* The first of counts[0..n) in j that is no whole count, into why. */
static int count_problem(json_t *j, const char *const *counts, size_t n, char *why, size_t wlen)
{
    char walked[256];
    for (size_t i = 0; i < n; i++) {
        walked[0] = 0;
        if (not_whole(j, counts[i], walked, sizeof walked, 0, why, wlen))
            return 1;
    }
    return 0;
}

/* An interrupted run: its config as an ok line's, its metrics (null
 * before its measured phase began) plausible. */
static void load_stopped(struct report *r, const char *file, size_t line, json_t *j)
{
    json_t *c = rp_get(j, "config"), *m = rp_get(j, "metrics");
    const char *why = NULL;
    if (!json_is_object(c) || !rp_str(c, "engine", NULL) || !rp_str(c, "sync", NULL))
        why = "config without engine or sync";
    else if (!json_is_integer(rp_get(c, "clients")) || json_integer_value(rp_get(c, "clients")) < 1 ||
             json_integer_value(rp_get(c, "clients")) > BENCH_SCHEMA_MAX_CLIENTS)
        why = "config.clients out of range";
    else if (m && !json_is_object(m))
        why = "metrics not an object";
    if (why) {
        skip(r, file, line, rp_printf("interrupted commitlab-bench/1 line with %s", why));
        return;
    }
    char path[256] = "metrics", fig[320];
    double tps = rp_num(m, "tps");
    if (implausible_figure(m, path, sizeof path, strlen(path), fig, sizeof fig) ||
        (isfinite(tps) && tps > BENCH_SCHEMA_MAX_TPS)) {
        skip(r, file, line, rp_printf("interrupted commitlab-bench/1 line with %s",
                                      isfinite(tps) && tps > BENCH_SCHEMA_MAX_TPS ? "metrics.tps above 1e9" : fig));
        return;
    }
    r->stopped = rp_xrealloc(r->stopped, (r->nstopped + 1) * sizeof *r->stopped);
    r->stopped[r->nstopped].where = rp_printf("%s:%zu", file, line);
    r->stopped[r->nstopped].line = json_incref(j);
    r->nstopped++;
}

static void load_bench(struct report *r, const char *file, size_t line, json_t *j)
{
    const char *status = rp_str(j, "status", NULL);
    json_t *c = rp_get(j, "config");
    if (!status) {
        skip(r, file, line, rp_strdup("commitlab-bench/1 line without a status"));
        return;
    }
    keep_time(r, rp_str(j, "time", NULL));
    if (bench_status_parse(status) == RUN_INTERRUPTED) {
        load_stopped(r, file, line, j);
        return;
    }
    if (strcmp(status, "ok") != 0) {
        push_note(&r->notok, &r->nnotok, file, line,
                  rp_printf("%s --sync %s, %lld client%s: %s (%s)", rp_str(j, "engine", "?"), rp_str(c, "sync", "?"),
                            (long long)json_integer_value(rp_get(c, "clients")),
                            json_integer_value(rp_get(c, "clients")) == 1 ? "" : "s", status,
                            rp_str(j, "reason", "no reason given")));
        return;
    }
    const char *why = bench_line_problem(j);
    if (why) {
        skip(r, file, line, rp_printf("commitlab-bench/1 line with %s", why));
        return;
    }
    char path[256] = "metrics", fig[320];
    if (implausible_figure(rp_get(j, "metrics"), path, sizeof path, strlen(path), fig, sizeof fig) ||
        count_problem(j, bench_counts, sizeof bench_counts / sizeof *bench_counts, fig, sizeof fig)) {
        skip(r, file, line, rp_printf("commitlab-bench/1 line with %s", fig));
        return;
    }
    r->runs = rp_xrealloc(r->runs, (r->nruns + 1) * sizeof *r->runs);
    struct rp_run *run = &r->runs[r->nruns++];
    run->line = json_incref(j);
    run->config = rp_get(j, "config");
    run->metrics = rp_get(j, "metrics");
    run->env = rp_get(j, "env");
    run->clients = (int)json_integer_value(rp_get(run->config, "clients"));
    run->tps = rp_num(run->metrics, "tps");
    run->series = 0;
}

/* The fields that make a crash row's combination (docs/crash.md): the
 * campaign's own, the plugin's file, and the whole "config" object, so
 * that rows that ran under different knobs (--lmdb-flags, --sqlite-sync,
 * --pipeline, ...) are never merged.  A line without a config (an older
 * one) keys as null: it never merges with one that has it. */
static const char *const crash_key_fields[] = {
    "mode", "engine", "workload", "sync", "sync_method", "segments", "segment_init", "prealloc",
    "elr", "model", "clients", "txns_per_client", "lying_device", "plugin", "config",
};

static char *crash_key(json_t *j)
{
    json_t *k = json_object();
    for (size_t i = 0; i < sizeof crash_key_fields / sizeof *crash_key_fields; i++) {
        json_t *v = rp_get(j, crash_key_fields[i]);
        json_object_set(k, crash_key_fields[i], v ? v : json_null());
    }
    char *s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(k);
    char *d = rp_strdup(s);
    free(s);
    return d;
}

static long long count(json_t *j, const char *key)
{
    double v = rp_num(j, key);
    return isfinite(v) && v > 0 ? (long long)v : 0;
}

static void add_crash_row(struct rp_crash *c, json_t *j)
{
    const char *status = rp_str(j, "status", "");
    c->crashes += count(j, "crashes");
    c->mid_run += count(j, "crashes_mid_run");
    c->lost += count(j, "acked_lost");
    if (count(j, "acked_lost_worst_crash") > c->worst)
        c->worst = count(j, "acked_lost_worst_crash");
    c->unacked += count(j, "unacked_survived");
    c->atomic += count(j, "atomicity_violations");
    c->foreign += count(j, "foreign_values");
    c->phantoms += count(j, "phantoms");
    c->recov += count(j, "recovery_failures");
    c->na = c->na && strcmp(status, "n/a") == 0;
    int failed = strcmp(status, "failed") == 0 ||
                 (strcmp(status, "interrupted") == 0 && json_is_true(rp_get(rp_get(j, "interrupted"), "failed")));
    if (failed && !c->failed) {
        c->failed = 1;
        const char *ff = rp_str(j, "first_failure", NULL);
        c->first_failure = ff ? rp_strdup(ff) : NULL;
    }
}

static void load_crash(struct report *r, const char *file, size_t line, json_t *j)
{
    const char *status = rp_str(j, "status", NULL);
    if (!status || !rp_str(j, "sync", NULL)) {
        skip(r, file, line, rp_strdup("commitlab-crash/1 line without status or sync"));
        return;
    }
    if (strcmp(status, "n/a") != 0 && !json_is_number(rp_get(j, "crashes"))) {
        skip(r, file, line, rp_strdup("commitlab-crash/1 line without a number of crashes"));
        return;
    }
    char why[200];
    if (count_problem(j, crash_counts, sizeof crash_counts / sizeof *crash_counts, why, sizeof why)) {
        skip(r, file, line, rp_printf("commitlab-crash/1 line whose %s", why));
        return;
    }
    char *key = crash_key(j);
    int interrupted = strcmp(status, "interrupted") == 0;
    if (interrupted) { /* a row of its own: its crashes are not the combination's whole */
        char *k = rp_printf("%s interrupted at %s:%zu", key, file, line);
        free(key);
        key = k;
    }
    size_t i;
    for (i = 0; i < r->ncrashes && strcmp(r->crashes[i].key, key) != 0; i++)
        ;
    if (i == r->ncrashes) {
        r->crashes = rp_xrealloc(r->crashes, (r->ncrashes + 1) * sizeof *r->crashes);
        struct rp_crash *c = &r->crashes[r->ncrashes++];
        memset(c, 0, sizeof *c);
        c->key = key;
        c->row = json_incref(j);
        c->na = 1;
        /* held to what the engine claims its commits survive under the
         * row's knobs, for the row's kind of crash; an older line without
         * the claim, to its policy's durability */
        json_t *claim = rp_get(rp_get(j, "survives_claimed"), strcmp(rp_str(j, "mode", "sim"), "kill") ? "power"
                                                                                                         : "kill");
        c->durable = json_is_true(rp_get(j, "sync_durable"));
        c->held = claim ? json_is_true(claim) : c->durable;
        c->interrupted = interrupted;
    } else {
        free(key);
    }
    keep_time(r, rp_str(j, "time", NULL));
    add_crash_row(&r->crashes[i], j);
}

static void load_object(struct report *r, const char *file, size_t line, json_t *j)
{
    const char *schema = rp_str(j, "schema", NULL);
    if (!schema) {
        skip(r, file, line, rp_strdup("no \"schema\" member"));
    } else if (strcmp(schema, "commitlab-bench/1") == 0) {
        load_bench(r, file, line, j);
    } else if (strcmp(schema, "commitlab-crash/1") == 0) {
        load_crash(r, file, line, j);
    } else if (strcmp(schema, "commitlab-bench-summary/1") == 0) {
        r->nsummaries++; /* the medians are computed again from the runs */
    } else if (strcmp(schema, "commitlab-matrix-layer/1") == 0) {
        r->nsummaries++; /* the loop layer's cost per configuration: computed again from the runs */
    } else if (strcmp(schema, "commitlab-matrix-verdict/1") == 0) {
        r->verdicts = rp_xrealloc(r->verdicts, (r->nverdicts + 1) * sizeof *r->verdicts);
        r->verdicts[r->nverdicts++] = json_incref(j);
    } else {
        skip(r, file, line, rp_printf("unknown schema \"%.80s\"", schema));
    }
}

static void load_line(struct report *r, const char *file, size_t line, char *text, size_t n)
{
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ' || text[n - 1] == '\t'))
        text[--n] = 0;
    if (strspn(text, " \t") == n)
        return; /* a blank line says nothing */
    r->lines++;
    json_error_t err;
    json_t *j = json_loadb(text, n, 0, &err); /* a NUL inside is an error, not the line's end */
    if (!j) {
        skip(r, file, line, rp_printf("not JSON (%s at column %d)", err.text, err.column));
        return;
    }
    if (!json_is_object(j))
        skip(r, file, line, rp_strdup("not a JSON object"));
    else
        load_object(r, file, line, j);
    json_decref(j);
}

int rp_load(struct report *r, const char *const *files, size_t n)
{
    r->files = files;
    r->nfiles = n;
    char *buf = malloc(RP_MAX_LINE + 1);
    if (!buf) {
        fprintf(stderr, "commitlab report: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        FILE *f = fopen(files[i], "re");
        struct stat st;
        if (!f) {
            fprintf(stderr, "commitlab report: %s: cannot open: %s\n", files[i], strerror(errno));
            free(buf);
            return 2;
        }
        if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
            fprintf(stderr, "commitlab report: %s: is %s, not a file of JSON lines\n", files[i],
                    S_ISDIR(st.st_mode) ? "a directory" : S_ISCHR(st.st_mode) ? "a character device" : "not a regular file");
            fclose(f);
            free(buf);
            return 2;
        }
        /* Lines of at most RP_MAX_LINE bytes: a longer one is named and
         * skipped, read through without being kept, so no input can make
         * the report hold more than one line's worth. */
        size_t line = 0;
        for (;;) {
            size_t len = 0;
            int c = 0, toolong = 0;
            while ((c = getc_unlocked(f)) != EOF) {
                if (len < RP_MAX_LINE)
                    buf[len++] = (char)c;
                else
                    toolong = 1;
                if (c == '\n')
                    break;
            }
            if (len == 0 && c == EOF)
                break;
            line++;
            if (toolong) {
                r->lines++;
                skip(r, files[i], line, rp_printf("longer than %d bytes", RP_MAX_LINE));
            } else {
                buf[len] = 0;
                load_line(r, files[i], line, buf, len);
            }
            if (c == EOF)
                break;
        }
        int err = ferror(f);
        fclose(f);
        if (err) {
            fprintf(stderr, "commitlab report: %s: read error\n", files[i]);
            free(buf);
            return 2;
        }
    }
    free(buf);
    return 0;
}

/* ---- grouping ----------------------------------------------------------------------- */

/* Config members that never split a series: the x axis, what only names
 * where a run went, and fields derived from others. */
static int knob_ignored(const char *key)
{
    static const char *const ignored[] = {"engine", "workload", "sync", "clients", "seed", "dir", "key_size",
                                          "sync_durable", "sync_latency_emulated"};
    for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++)
        if (strcmp(key, ignored[i]) == 0)
            return 1;
    return 0;
}

static json_t *member_or_null(json_t *o, const char *key)
{
    json_t *v = rp_get(o, key);
    return v ? v : json_null();
}

/* 1 when runs disagree on config.key. */
static int knob_varies(const struct report *r, const char *key)
{
    json_t *first = member_or_null(r->runs[0].config, key);
    for (size_t i = 1; i < r->nruns; i++)
        if (!json_equal(first, member_or_null(r->runs[i].config, key)))
            return 1;
    return 0;
}

struct knobs {
    char **keys;                  /* the config members the runs disagree on */
    size_t n;
};

static int has_key(const struct knobs *k, const char *key)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->keys[i], key) == 0)
            return 1;
    return 0;
}

static void find_knobs(const struct report *r, struct knobs *k)
{
    memset(k, 0, sizeof *k);
    for (size_t i = 0; i < r->nruns; i++) {
        const char *key;
        json_t *v;
        json_object_foreach(r->runs[i].config, key, v) {
            if (knob_ignored(key) || has_key(k, key) || !knob_varies(r, key))
                continue;
            k->keys = rp_xrealloc(k->keys, (k->n + 1) * sizeof *k->keys);
            k->keys[k->n] = rp_strdup(key);
            k->n++;
        }
    }
}

static void free_knobs(struct knobs *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->keys[i]);
    free(k->keys);
}

static char *config_key(const struct knobs *k, json_t *c)
{
    char *key = rp_printf("%s|%s|%s", rp_str(c, "engine", ""), rp_str(c, "workload", ""), rp_str(c, "sync", ""));
    for (size_t i = 0; i < k->n; i++) {
        char *v = json_dumps(member_or_null(c, k->keys[i]), JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
        char *next = rp_printf("%s|%s=%s", key, k->keys[i], v ? v : "?");
        free(v);
        free(key);
        key = next;
    }
    return key;
}

/* The filesystem a run was on: matrix.fs tells btrfs from btrfs-nodatacow. */
static const char *run_fs(const struct rp_run *run)
{
    const char *fs = rp_str(rp_get(run->line, "matrix"), "fs", NULL);
    return fs ? fs : rp_str(run->env, "fs_type", "?");
}

static char *env_key(const struct rp_run *run)
{
    return rp_printf("%s|%s|%s", rp_str(run->env, "hostname", "?"), run_fs(run),
                     rp_str(run->env, "mount_point", "?"));
}

static size_t find_or_add_config(struct report *r, char *key, const struct rp_run *run)
{
    for (size_t i = 0; i < r->ncfgs; i++)
        if (strcmp(r->cfgs[i].key, key) == 0) {
            free(key);
            return i;
        }
    r->cfgs = rp_xrealloc(r->cfgs, (r->ncfgs + 1) * sizeof *r->cfgs);
    struct rp_config *c = &r->cfgs[r->ncfgs];
    c->key = key;
    c->label = NULL;
    c->config = run->config;
    c->line = run->line;
    return r->ncfgs++;
}

static size_t find_or_add_env(struct report *r, char *key, const struct rp_run *run)
{
    for (size_t i = 0; i < r->nenvs; i++)
        if (strcmp(r->envs[i].key, key) == 0) {
            free(key);
            return i;
        }
    r->envs = rp_xrealloc(r->envs, (r->nenvs + 1) * sizeof *r->envs);
    struct rp_env *e = &r->envs[r->nenvs];
    e->key = key;
    e->env = run->env;
    e->matrix = rp_get(run->line, "matrix");
    e->fs = rp_strdup(run_fs(run));
    e->label = NULL;
    return r->nenvs++;
}

/* ---- labels --------------------------------------------------------------------------- */

/* 1 when config c sets knob key to something other than what the knob
 * holds when its flag is not given (the schema's default). */
static int off_default(json_t *c, const char *key)
{
    json_t *v = rp_get(c, key);
    if (!v || json_is_null(v))
        return 0;
    json_t *d = bench_knob_default_json(bench_knob_by_key(key));
    int off = !d || !json_equal(v, d);
    json_decref(d);
    return off;
}

/* A configuration's label stands alone: its engine and policy, then every
 * knob that varies in the report and that it sets away from the knob's
 * default ("commitlab commit emulated 8 ms", "lmdb commit" beside it
 * running without emulation), so a label never relies on the others to
 * say what it ran.  full: name every varying knob it sets, default or
 * not (for two configurations the short labels would not tell apart). */
/* How long and how a run was run, rather than what it ran: labels leave
 * these out (series still split on them). */
static int knob_run_length(const char *key)
{
    static const char *const keys[] = {"duration_s", "warmup_s", "txns", "verify", "reuse", "preload"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(key, keys[i]) == 0)
            return 1;
    return 0;
}

static char *config_label(const struct knobs *k, json_t *c, int workloads_vary, int full)
{
    char *label = rp_printf("%s %s%s%s", rp_str(c, "engine", "?"), rp_str(c, "sync", "?"), workloads_vary ? " " : "",
                            workloads_vary ? rp_str(c, "workload", "?") : "");
    for (size_t i = 0; i < k->n; i++) {
        json_t *v = rp_get(c, k->keys[i]);
        if (!v || json_is_null(v) || !(full || (off_default(c, k->keys[i]) && !knob_run_length(k->keys[i]))))
            continue;
        char kv[200];
        rp_knob_label(k->keys[i], v, kv, sizeof kv);
        char *next = rp_printf("%s %s", label, kv);
        free(label);
        label = next;
    }
    return label;
}

static int hosts_vary(const struct report *r)
{
    for (size_t i = 1; i < r->nenvs; i++)
        if (strcmp(rp_str(r->envs[i].env, "hostname", "?"), rp_str(r->envs[0].env, "hostname", "?")) != 0)
            return 1;
    return 0;
}

static char *env_label_at(const struct rp_env *e, int level)
{
    const char *host = rp_str(e->env, "hostname", "?"), *mnt = rp_str(e->env, "mount_point", "?");
    if (level == 0)
        return rp_strdup(e->fs);
    if (level == 1)
        return rp_printf("%s on %s", e->fs, host);
    return rp_printf("%s at %s on %s", e->fs, mnt, host);
}

/* The shortest labels that still tell every env apart: the filesystem,
 * then its host, then its mount point. */
static void label_envs(struct report *r)
{
    for (int level = hosts_vary(r) ? 1 : 0; level <= 2; level++) {
        int unique = 1;
        for (size_t i = 0; i < r->nenvs; i++) {
            free(r->envs[i].label);
            r->envs[i].label = env_label_at(&r->envs[i], level);
            for (size_t k = 0; k < i; k++)
                unique &= strcmp(r->envs[i].label, r->envs[k].label) != 0;
        }
        if (unique)
            return;
    }
}

/* ---- order -------------------------------------------------------------------------------- */

static const struct report *sort_ctx;

/* Engines in the drivers' order, then policies in the library's, from
 * none to the most elaborate: the order a reader compares them in
 * (bench_schema.h). */
static int cmp_config(const void *a, const void *b)
{
    const struct rp_config *x = &sort_ctx->cfgs[*(const size_t *)a], *y = &sort_ctx->cfgs[*(const size_t *)b];
    int d = bench_schema_engine_rank(rp_str(x->config, "engine", "")) -
            bench_schema_engine_rank(rp_str(y->config, "engine", ""));
    if (!d)
        d = bench_schema_sync_rank(rp_str(x->config, "sync", "")) - bench_schema_sync_rank(rp_str(y->config, "sync", ""));
    return d ? d : strcmp(x->label, y->label);
}

static int cmp_env(const void *a, const void *b)
{
    return strcmp(sort_ctx->envs[*(const size_t *)a].label, sort_ctx->envs[*(const size_t *)b].label);
}

/* Reorders v (n elements of size sz) by the permutation sorting idx with
 * cmp, and rewrites old indexes through map (map[old] = new). */
static void permute(void *v, size_t n, size_t sz, int (*cmp)(const void *, const void *), size_t *map)
{
    size_t *idx = rp_xrealloc(NULL, n * sizeof *idx);
    char *copy = rp_xrealloc(NULL, n * sz);
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort(idx, n, sizeof *idx, cmp);
    memcpy(copy, v, n * sz);
    for (size_t i = 0; i < n; i++) {
        memcpy((char *)v + i * sz, copy + idx[i] * sz, sz);
        map[idx[i]] = i;
    }
    free(copy);
    free(idx);
}

/* ---- series and points ------------------------------------------------------------------ */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

const char *const rp_pct_keys[RP_NPCT] = {"p50", "p90", "p99", "p999", "max"};

static void point_stats(struct report *r, struct rp_point *p)
{
    static const char *const lat[4] = {"p50", "p99", "p999", "max"};
    double *v = rp_xrealloc(NULL, p->nruns * sizeof *v);
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < p->nruns; i++)
            v[i] = rp_num(rp_get(r->runs[p->runs[i]].metrics, "latency_us"), lat[k]);
        p->lat[k] = ut_median(v, p->nruns);
    }
    for (int k = 0; k < RP_NPCT; k++) {
        for (size_t i = 0; i < p->nruns; i++)
            v[i] = rp_num(rp_get(r->runs[p->runs[i]].metrics, "latency_us"), rp_pct_keys[k]);
        p->pct[k] = ut_median(v, p->nruns);
    }
    for (size_t i = 0; i < p->nruns; i++)
        v[i] = r->runs[p->runs[i]].tps;
    p->tps_med = ut_median(v, p->nruns); /* sorts v: its ends are min and max */
    p->tps_min = v[0];
    p->tps_max = v[p->nruns - 1];
    p->rep = p->runs[0];
    for (size_t i = 1; i < p->nruns; i++)
        if (fabs(r->runs[p->runs[i]].tps - p->tps_med) < fabs(r->runs[p->rep].tps - p->tps_med))
            p->rep = p->runs[i];
    free(v);
}

/* The client counts a series ran at, ascending, each with its runs. */
static void build_points(struct report *r, size_t s)
{
    struct rp_series *se = &r->series[s];
    int *clients = rp_xrealloc(NULL, r->nruns * sizeof *clients);
    size_t nc = 0;
    for (size_t i = 0; i < r->nruns; i++)
        if (r->runs[i].series == s)
            clients[nc++] = r->runs[i].clients;
    qsort(clients, nc, sizeof *clients, cmp_int);
    for (size_t i = 0; i < nc; i++) {
        if (se->npts && se->pts[se->npts - 1].clients == clients[i])
            continue;
        se->pts = rp_xrealloc(se->pts, (se->npts + 1) * sizeof *se->pts);
        struct rp_point *p = &se->pts[se->npts++];
        memset(p, 0, sizeof *p);
        p->clients = clients[i];
        for (size_t k = 0; k < r->nruns; k++)
            if (r->runs[k].series == s && r->runs[k].clients == p->clients) {
                p->runs = rp_xrealloc(p->runs, (p->nruns + 1) * sizeof *p->runs);
                p->runs[p->nruns++] = k;
            }
        point_stats(r, p);
    }
    free(clients);
}

/* One series per (configuration, env) pair that ran, in configuration
 * order, then env order. */
static void build_series(struct report *r, const size_t *run_cfg, const size_t *run_env)
{
    for (size_t c = 0; c < r->ncfgs; c++)
        for (size_t e = 0; e < r->nenvs; e++) {
            size_t s = r->nseries;
            for (size_t i = 0; i < r->nruns; i++) {
                if (run_cfg[i] != c || run_env[i] != e)
                    continue;
                if (s == r->nseries) {
                    r->series = rp_xrealloc(r->series, (r->nseries + 1) * sizeof *r->series);
                    memset(&r->series[s], 0, sizeof *r->series);
                    r->series[s].cfg = c;
                    r->series[s].env = e;
                    r->series[s].label = r->nenvs > 1 ? rp_printf("%s, %s", r->cfgs[c].label, r->envs[e].label)
                                                      : rp_strdup(r->cfgs[c].label);
                    r->nseries++;
                }
                r->runs[i].series = s;
            }
        }
    /* points only once every run knows its series */
    for (size_t s = 0; s < r->nseries; s++)
        build_points(r, s);
}

static int workloads_vary(const struct report *r)
{
    for (size_t i = 1; i < r->nruns; i++)
        if (strcmp(rp_str(r->runs[i].config, "workload", ""), rp_str(r->runs[0].config, "workload", "")) != 0)
            return 1;
    return 0;
}

int rp_build(struct report *r)
{
    if (!r->nruns)
        return 0;
    struct knobs k;
    size_t *run_cfg = rp_xrealloc(NULL, r->nruns * sizeof *run_cfg);
    size_t *run_env = rp_xrealloc(NULL, r->nruns * sizeof *run_env);
    find_knobs(r, &k);
    for (size_t i = 0; i < r->nruns; i++) {
        run_cfg[i] = find_or_add_config(r, config_key(&k, r->runs[i].config), &r->runs[i]);
        run_env[i] = find_or_add_env(r, env_key(&r->runs[i]), &r->runs[i]);
    }
    int wv = workloads_vary(r);
    for (size_t c = 0; c < r->ncfgs; c++)
        r->cfgs[c].label = config_label(&k, r->cfgs[c].config, wv, 0);
    for (size_t c = 0; c < r->ncfgs; c++) /* two alike: both in full */
        for (size_t d = c + 1; d < r->ncfgs; d++)
            if (strcmp(r->cfgs[c].label, r->cfgs[d].label) == 0) {
                free(r->cfgs[c].label);
                free(r->cfgs[d].label);
                r->cfgs[c].label = config_label(&k, r->cfgs[c].config, wv, 1);
                r->cfgs[d].label = config_label(&k, r->cfgs[d].config, wv, 1);
            }
    label_envs(r);
    free_knobs(&k);

    size_t *cmap = rp_xrealloc(NULL, r->ncfgs * sizeof *cmap), *emap = rp_xrealloc(NULL, r->nenvs * sizeof *emap);
    sort_ctx = r;
    permute(r->cfgs, r->ncfgs, sizeof *r->cfgs, cmp_config, cmap);
    permute(r->envs, r->nenvs, sizeof *r->envs, cmp_env, emap);
    for (size_t i = 0; i < r->nruns; i++) {
        run_cfg[i] = cmap[run_cfg[i]];
        run_env[i] = emap[run_env[i]];
    }
    build_series(r, run_cfg, run_env);
    free(cmap);
    free(emap);
    free(run_cfg);
    free(run_env);
    return 0;
}

const struct rp_point *rp_last_point(const struct rp_series *s)
{
    return s->npts ? &s->pts[s->npts - 1] : NULL;
}

const struct rp_point *rp_point_at(const struct rp_series *s, int clients)
{
    for (size_t i = 0; i < s->npts; i++)
        if (s->pts[i].clients == clients)
            return &s->pts[i];
    return NULL;
}

/* ---- freeing ------------------------------------------------------------------------------- */

static void free_notes(struct rp_note *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].where);
        free(v[i].why);
    }
    free(v);
}

void rp_free(struct report *r)
{
    free_notes(r->skipped, r->nskipped);
    free_notes(r->notok, r->nnotok);
    for (size_t i = 0; i < r->nruns; i++)
        json_decref(r->runs[i].line);
    free(r->runs);
    for (size_t i = 0; i < r->nstopped; i++) {
        free(r->stopped[i].where);
        json_decref(r->stopped[i].line);
    }
    free(r->stopped);
    for (size_t i = 0; i < r->nenvs; i++) {
        free(r->envs[i].key);
        free(r->envs[i].fs);
        free(r->envs[i].label);
    }
    free(r->envs);
    for (size_t i = 0; i < r->ncfgs; i++) {
        free(r->cfgs[i].key);
        free(r->cfgs[i].label);
    }
    free(r->cfgs);
    for (size_t i = 0; i < r->nseries; i++) {
        for (size_t p = 0; p < r->series[i].npts; p++)
            free(r->series[i].pts[p].runs);
        free(r->series[i].pts);
        free(r->series[i].label);
    }
    free(r->series);
    for (size_t i = 0; i < r->ncrashes; i++) {
        free(r->crashes[i].key);
        free(r->crashes[i].first_failure);
        json_decref(r->crashes[i].row);
    }
    free(r->crashes);
    for (size_t i = 0; i < r->nverdicts; i++)
        json_decref(r->verdicts[i]);
    free(r->verdicts);
    free(r->time_first);
    free(r->time_last);
    memset(r, 0, sizeof *r);
}
