/*
 * bench_config.c -- the knobs of a run and the command line that sets
 * them: the table of knobs (flag, kind, accepted values), the defaults,
 * the check of every value (one line naming the flag and what it accepts,
 * exit 2, all before the first run starts), and the expansion of comma
 * lists into the cross product of runs.  bench_cli_parse is what `commitlab
 * bench` and `commitlab matrix` parse their options with; the drivers,
 * the output and the crash campaign read the knobs' flags and defaults.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "commitlab.h"
#include "drivers/driver.h"
#include "ut_args.h"

/* ---- knobs ------------------------------------------------------------------- */

enum kind { KIND_ENUM, KIND_UINT, KIND_SIZE, KIND_RATIO };

struct knob_def {
    const char *flag;
    enum kind kind;
    const char *choices; /* KIND_ENUM: comma-separated */
    uint64_t min, max;   /* KIND_UINT, KIND_SIZE */
};

static const struct knob_def knobs[K_COUNT] = {
    [K_ENGINE] = {"--engine", KIND_ENUM, "commitlab,lmdb,rocksdb,sqlite,raw", 0, 0},
    [K_WORKLOAD] = {"--workload", KIND_ENUM, "kv,tpcb", 0, 0},
    [K_CLIENTS] = {"--clients", KIND_UINT, NULL, 1, 1024},
    [K_SYNC] = {"--sync", KIND_ENUM, NULL, 0, 0}, /* the library's policies: bench_sync_choices() */
    [K_SYNC_METHOD] = {"--sync-method", KIND_ENUM, "fdatasync,fsync,dsync,direct", 0, 0},
    [K_ELR] = {"--elr", KIND_ENUM, "on,off", 0, 0},
    [K_SEGMENTS] = {"--segments", KIND_ENUM, "fresh,recycle", 0, 0},
    [K_SEGMENT_INIT] = {"--segment-init", KIND_ENUM, "sparse,fallocate,zero", 0, 0},
    [K_SEGMENT_SIZE] = {"--segment-size", KIND_SIZE, NULL, 64 << 10, 1ull << 34},
    [K_PREALLOC] = {"--prealloc", KIND_UINT, NULL, 0, 64},
    [K_RECYCLE_MAX] = {"--recycle-max", KIND_UINT, NULL, 1, 64},
    [K_CHECKPOINT] = {"--checkpoint-bytes", KIND_SIZE, NULL, 0, 1ull << 40},
    [K_COMMIT_DELAY] = {"--commit-delay", KIND_UINT, NULL, 0, 1000000},
    [K_COMMIT_SIBLINGS] = {"--commit-siblings", KIND_UINT, NULL, 0, 1024},
    [K_INTERVAL] = {"--interval", KIND_UINT, NULL, 1, 3600000},
    [K_URING_DEPTH] = {"--uring-depth", KIND_UINT, NULL, 1, CL_MAX_URING_DEPTH},
    [K_SYNC_LATENCY] = {"--sync-latency", KIND_UINT, NULL, 0, 10000000},
    [K_CACHE] = {"--cache", KIND_SIZE, NULL, 1 << 20, 1ull << 40},
    [K_VALUE_SIZE] = {"--value-size", KIND_UINT, NULL, 8, 4096},
    [K_KEYS] = {"--keys", KIND_UINT, NULL, 1, 1000000000},
    [K_DIST] = {"--dist", KIND_ENUM, "uniform,zipf", 0, 0},
    [K_OPS_PER_TXN] = {"--ops-per-txn", KIND_UINT, NULL, 1, 100000},
    [K_READ_RATIO] = {"--read-ratio", KIND_RATIO, NULL, 0, 0},
    [K_SCALE] = {"--scale", KIND_UINT, NULL, 1, 10000},
    [K_SQLITE_SYNC] = {"--sqlite-sync", KIND_ENUM, "full,normal,off", 0, 0},
    [K_RATE] = {"--rate", KIND_UINT, NULL, 0, 10000000},
    [K_MAX_BATCH] = {"--max-batch", KIND_SIZE, NULL, 0, 1ull << 30},
    [K_FLUSHER_SPIN] = {"--flusher-spin", KIND_UINT, NULL, 0, 1000000},
    [K_ROCKSDB_WRITE] = {"--rocksdb-write", KIND_ENUM, "default,pipelined,unordered,manual-flush", 0, 0},
};

const char *bench_knob_flag(enum bench_knob k)
{
    return (unsigned)k < K_COUNT ? knobs[k].flag : "?";
}

int bench_sync_is_durable(const char *sync)
{
    enum cl_sync_policy p;
    return cl_sync_policy_parse(sync, &p) == 0 && cl_sync_policy_is_durable(p) == 1;
}

void bench_config_defaults(struct bench_config *c)
{
    struct cl_options o;
    cl_options_init(&o);
    memset(c, 0, sizeof *c);
    c->engine = "commitlab";
    c->workload = "kv";
    c->clients = 1;
    c->duration = 10;
    c->warmup = 1;
    c->dir = "commitlab-bench.d";
    c->preload = 1;
    c->seed = 1;
    c->value_size = 100;
    c->keys = 100000;
    c->zipf_theta = 0.99;
    c->ops_per_txn = 1;
    c->scale = 1;
    c->sync = "commit";
    c->sync_method = cl_sync_method_name(o.method);
    c->elr = o.elr;
    c->segments = "fresh";
    c->segment_init = "zero";
    c->segment_size = o.segment_size;
    c->prealloc = o.prealloc;
    c->recycle_max = o.recycle_max;
    c->checkpoint_bytes = o.checkpoint_bytes;
    c->commit_delay_us = o.commit_delay_us;
    c->commit_siblings = o.commit_siblings;
    c->interval_ms = o.interval_ms;
    c->uring_depth = o.uring_depth;
    c->max_batch = o.max_batch;
    c->flusher_spin_us = o.flusher_spin_us;
    c->sync_latency_us = o.sync_latency_us;
    c->cache_bytes = o.cache_size;
    c->rocksdb_write = "default";
}

/* The library's policies in its order, all or only the durable ones:
 * "none,periodic,commit,...", made once. */
static const char *sync_list(int durable_only)
{
    static char bufs[2][256];
    char *buf = bufs[durable_only != 0];
    if (!buf[0]) {
        size_t j = 0;
        for (int i = 0; i < CL_SYNC_NPOLICIES && j < sizeof bufs[0]; i++)
            if (!durable_only || cl_sync_policy_is_durable((enum cl_sync_policy)i) == 1)
                j += (size_t)snprintf(buf + j, sizeof bufs[0] - j, "%s%s", j ? "," : "",
                                      cl_sync_policy_name((enum cl_sync_policy)i));
    }
    return buf;
}

const char *bench_sync_choices(void) { return sync_list(0); }
const char *bench_sync_durable_choices(void) { return sync_list(1); }

static const char *choices_of(const struct knob_def *k)
{
    return k == &knobs[K_SYNC] ? bench_sync_choices() : k->choices;
}

static int in_choices(const char *choices, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = choices; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

static void accepted(const struct knob_def *k, char *buf, size_t len)
{
    switch (k->kind) {
    case KIND_ENUM: {
        size_t j = 0;
        for (const char *p = choices_of(k); *p && j + 3 < len; p++) {
            if (*p == ',') {
                buf[j++] = ',';
                buf[j++] = ' ';
            } else {
                buf[j++] = *p;
            }
        }
        buf[j] = 0;
        snprintf(buf + j, len - j, " (comma lists allowed)");
        break;
    }
    case KIND_UINT:
        snprintf(buf, len, "an integer in [%llu, %llu] (comma lists allowed)", (unsigned long long)k->min,
                 (unsigned long long)k->max);
        break;
    case KIND_SIZE:
        snprintf(buf, len, "a size with optional k/M/G in [%llu, %llu] bytes (comma lists allowed)",
                 (unsigned long long)k->min, (unsigned long long)k->max);
        break;
    case KIND_RATIO:
        snprintf(buf, len, "a fraction in [0, 1] (comma lists allowed)");
        break;
    }
}

/* Checks one value of a knob; exits 2 naming the flag when it is bad. */
static void validate(const char *cmd, enum bench_knob kk, const char *v)
{
    const struct knob_def *k = &knobs[kk];
    char acc[256];
    uint64_t u;
    char *end;
    int ok = 0;

    switch (k->kind) {
    case KIND_ENUM:
        ok = in_choices(choices_of(k), v);
        break;
    case KIND_UINT:
        errno = 0;
        u = strtoull(v, &end, 10);
        ok = *v >= '0' && *v <= '9' && !*end && !errno && u >= k->min && u <= k->max;
        break;
    case KIND_SIZE:
        ok = *v >= '0' && *v <= '9' && ut_parse_size(v, &u) == 0 && u >= k->min && u <= k->max;
        break;
    case KIND_RATIO: {
        double d = strtod(v, &end);
        ok = *v && !*end && d >= 0 && d <= 1;
        break;
    }
    }
    if (!ok) {
        accepted(k, acc, sizeof acc);
        ut_usage_error(cmd, "%s: '%s' is not accepted; expected %s", k->flag, v, acc);
    }
}

/* ---- the cross product ----------------------------------------------------------- */

static void split_list(const char *cmd, enum bench_knob k, const char *arg, struct knob_values *kv)
{
    char *copy = strdup(arg), *save = NULL;
    if (!copy)
        ut_usage_error(cmd, "out of memory");
    if (!*arg)
        ut_usage_error(cmd, "%s: empty value", knobs[k].flag);
    for (size_t i = 0; i < kv->n; i++)
        free(kv->v[i]);
    kv->n = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        validate(cmd, k, t);
        char **nv = realloc(kv->v, (kv->n + 1) * sizeof *nv);
        if (!nv || !(nv[kv->n] = strdup(t)))
            ut_usage_error(cmd, "out of memory");
        kv->v = nv;
        kv->n++;
    }
    if (kv->n == 0 || arg[strlen(arg) - 1] == ',' || arg[0] == ',' || strstr(arg, ",,"))
        ut_usage_error(cmd, "%s: '%s' has an empty item in its list", knobs[k].flag, arg);
    free(copy);
}

/* Applies one knob value (already validated) to c. */
static void apply(struct bench_config *c, enum bench_knob k, const char *v)
{
    uint64_t u = 0;
    if (knobs[k].kind == KIND_UINT)
        u = strtoull(v, NULL, 10);
    else if (knobs[k].kind == KIND_SIZE)
        ut_parse_size(v, &u);
    c->given[k] = 1;
    switch (k) {
    case K_ENGINE: c->engine = v; break;
    case K_WORKLOAD: c->workload = v; break;
    case K_CLIENTS: c->clients = (unsigned)u; break;
    case K_SYNC: c->sync = v; break;
    case K_SYNC_METHOD: c->sync_method = v; break;
    case K_ELR: c->elr = strcmp(v, "on") == 0; break;
    case K_SEGMENTS: c->segments = v; break;
    case K_SEGMENT_INIT: c->segment_init = v; break;
    case K_SEGMENT_SIZE: c->segment_size = u; break;
    case K_PREALLOC: c->prealloc = (uint32_t)u; break;
    case K_RECYCLE_MAX: c->recycle_max = (uint32_t)u; break;
    case K_CHECKPOINT: c->checkpoint_bytes = u; break;
    case K_COMMIT_DELAY: c->commit_delay_us = (uint32_t)u; break;
    case K_COMMIT_SIBLINGS: c->commit_siblings = (uint32_t)u; break;
    case K_INTERVAL: c->interval_ms = (uint32_t)u; break;
    case K_URING_DEPTH: c->uring_depth = (uint32_t)u; break;
    case K_SYNC_LATENCY: c->sync_latency_us = (uint32_t)u; break;
    case K_CACHE: c->cache_bytes = u; break;
    case K_VALUE_SIZE: c->value_size = (uint32_t)u; break;
    case K_KEYS: c->keys = u; break;
    case K_DIST: c->zipf = strcmp(v, "zipf") == 0; break;
    case K_OPS_PER_TXN: c->ops_per_txn = (uint32_t)u; break;
    case K_READ_RATIO: c->read_ratio = strtod(v, NULL); break;
    case K_SCALE: c->scale = (uint32_t)u; break;
    case K_SQLITE_SYNC: c->sqlite_sync = v; break;
    case K_RATE: c->rate = (uint32_t)u; break;
    case K_MAX_BATCH: c->max_batch = u; break;
    case K_FLUSHER_SPIN: c->flusher_spin_us = (uint32_t)u; break;
    case K_ROCKSDB_WRITE: c->rocksdb_write = v; break;
    case K_COUNT: break;
    }
}

/* Outermost first; clients vary fastest so that a table reads as
 * "this engine and policy at 1, 16, 64 clients". */
static const enum bench_knob sweep_order[] = {
    K_WORKLOAD, K_ENGINE, K_SYNC, K_SYNC_METHOD, K_ELR, K_SEGMENTS, K_SEGMENT_INIT, K_SEGMENT_SIZE,
    K_PREALLOC, K_RECYCLE_MAX, K_CHECKPOINT, K_COMMIT_DELAY, K_COMMIT_SIBLINGS, K_INTERVAL, K_URING_DEPTH, K_MAX_BATCH,
    K_FLUSHER_SPIN, K_SYNC_LATENCY, K_CACHE, K_VALUE_SIZE, K_KEYS, K_DIST, K_OPS_PER_TXN, K_READ_RATIO, K_SCALE,
    K_SQLITE_SYNC, K_ROCKSDB_WRITE, K_RATE, K_CLIENTS,
};

static struct bench_config *expand(const char *cmd, const struct bench_config *base, struct knob_values *vals,
                                   size_t *nout)
{
    size_t total = 1, nk = sizeof sweep_order / sizeof *sweep_order;
    for (size_t i = 0; i < nk; i++)
        if (vals[sweep_order[i]].n)
            total *= vals[sweep_order[i]].n;
    if (total > 100000)
        ut_usage_error(cmd, "the comma lists expand to %zu runs (at most 100000)", total);
    struct bench_config *out = calloc(total, sizeof *out);
    size_t idx[K_COUNT] = {0};
    if (!out)
        ut_usage_error(cmd, "out of memory");
    for (size_t r = 0; r < total; r++) {
        struct bench_config *c = &out[r];
        *c = *base;
        size_t vl = 0;
        c->varying[0] = 0;
        for (size_t i = 0; i < nk; i++) {
            enum bench_knob k = sweep_order[i];
            if (!vals[k].n)
                continue;
            apply(c, k, vals[k].v[idx[k]]);
            if (vals[k].n > 1 && k != K_ENGINE && k != K_SYNC && k != K_CLIENTS && vl < sizeof c->varying)
                vl += (size_t)snprintf(c->varying + vl, sizeof c->varying - vl, "%s%s=%s", vl ? " " : "",
                                       knobs[k].flag + 2, vals[k].v[idx[k]]);
        }
        /* advance the odometer: the last knob in sweep_order fastest */
        for (size_t i = nk; i-- > 0;) {
            enum bench_knob k = sweep_order[i];
            if (!vals[k].n)
                continue;
            if (++idx[k] < vals[k].n)
                break;
            idx[k] = 0;
        }
    }
    *nout = total;
    return out;
}

/* ---- the command line ----------------------------------------------------------- */

static const char *need_arg(const char *cmd, int argc, char **argv, int *i, const char *flag,
                            const char **inline_val)
{
    if (*inline_val) {
        const char *v = *inline_val;
        *inline_val = NULL;
        return v;
    }
    if (*i + 1 >= argc)
        ut_usage_error(cmd, "%s needs a value (see commitlab %s --help)", flag, cmd);
    return argv[++*i];
}

void bench_cli_free(struct bench_cli *c)
{
    for (int k = 0; k < K_COUNT; k++) {
        for (size_t j = 0; j < c->vals[k].n; j++)
            free(c->vals[k].v[j]);
        free(c->vals[k].v);
    }
    free(c->cfgs);
    memset(c, 0, sizeof *c);
}

/* "--flag=value": the flag copied into flagbuf and *inl the value; any
 * other argument is returned as it is. */
static const char *split_inline_value(const char *arg, char *flagbuf, size_t len, const char **inl)
{
    const char *eq = strchr(arg, '=');
    if (strncmp(arg, "--", 2) != 0 || !eq || (size_t)(eq - arg) >= len)
        return arg;
    memcpy(flagbuf, arg, (size_t)(eq - arg));
    flagbuf[eq - arg] = 0;
    *inl = eq + 1;
    return flagbuf;
}

/* The knob whose flag this is, or K_COUNT. */
static int knob_of_flag(const char *flag)
{
    int k;
    for (k = 0; k < K_COUNT; k++)
        if (strcmp(flag, knobs[k].flag) == 0)
            break;
    return k;
}

/* --lmdb-flags: one set, not a list. */
static void parse_lmdb_flags(const char *cmd, const char *v, struct bench_config *base)
{
    char *copy = strdup(v), *save = NULL;
    base->lmdb_flags = 0;
    base->lmdb_flags_given = 1;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "nometasync") == 0)
            base->lmdb_flags |= LMDB_F_NOMETASYNC;
        else if (strcmp(t, "writemap") == 0)
            base->lmdb_flags |= LMDB_F_WRITEMAP;
        else if (strcmp(t, "mapasync") == 0)
            base->lmdb_flags |= LMDB_F_MAPASYNC;
        else
            ut_usage_error(cmd, "--lmdb-flags: '%s' is not accepted; expected a set of "
                                 "nometasync, writemap, mapasync", t);
    }
    free(copy);
}

/* The options of a run that are not comma lists (one value for every
 * run); 1 when arg is one of them. */
static int parse_run_option(const char *cmd, int argc, char **argv, int *i, const char *arg, const char **inl,
                            struct bench_cli *c)
{
    struct bench_config *base = &c->base;
    char *end;

    if (strcmp(arg, "--duration") == 0) {
        const char *v = need_arg(cmd, argc, argv, i, arg, inl);
        base->duration = strtod(v, &end);
        if (*end || !*v || !(base->duration > 0 && base->duration <= 86400))
            ut_usage_error(cmd, "--duration: '%s' is not accepted; expected seconds in (0, 86400]", v);
        base->txns = 0;
    } else if (strcmp(arg, "--txns") == 0) {
        const char *v = need_arg(cmd, argc, argv, i, arg, inl);
        errno = 0;
        base->txns = strtoull(v, &end, 10);
        if (*end || !*v || *v == '-' || errno || base->txns == 0)
            ut_usage_error(cmd, "--txns: '%s' is not accepted; expected a positive integer", v);
    } else if (strcmp(arg, "--repeat") == 0) {
        const char *v = need_arg(cmd, argc, argv, i, arg, inl);
        unsigned long r = strtoul(v, &end, 10);
        if (*end || !*v || r < 1 || r > 100)
            ut_usage_error(cmd, "--repeat: '%s' is not accepted; expected an integer in [1, 100]", v);
        c->repeat = (unsigned)r;
    } else if (strcmp(arg, "--warmup") == 0) {
        const char *v = need_arg(cmd, argc, argv, i, arg, inl);
        base->warmup = strtod(v, &end);
        if (*end || !*v || !(base->warmup >= 0 && base->warmup <= 3600))
            ut_usage_error(cmd, "--warmup: '%s' is not accepted; expected seconds in [0, 3600]", v);
    } else if (strcmp(arg, "--dir") == 0) {
        base->dir = need_arg(cmd, argc, argv, i, arg, inl);
        c->dir_given = 1;
        if (!*base->dir)
            ut_usage_error(cmd, "--dir: expected a directory path");
    } else if (strcmp(arg, "--seed") == 0) {
        const char *v = need_arg(cmd, argc, argv, i, arg, inl);
        base->seed = strtoull(v, &end, 10);
        if (*end || !*v || *v == '-')
            ut_usage_error(cmd, "--seed: '%s' is not accepted; expected a non-negative integer", v);
    } else if (strcmp(arg, "--zipf-theta") == 0) {
        const char *v = need_arg(cmd, argc, argv, i, arg, inl);
        base->zipf_theta = strtod(v, &end);
        if (*end || !*v || !(base->zipf_theta > 0 && base->zipf_theta < 1))
            ut_usage_error(cmd, "--zipf-theta: '%s' is not accepted; expected a number in (0, 1)", v);
    } else if (strcmp(arg, "--lmdb-flags") == 0) {
        parse_lmdb_flags(cmd, need_arg(cmd, argc, argv, i, arg, inl), base);
    } else if (strcmp(arg, "--reuse") == 0 && !*inl) {
        base->reuse = 1;
    } else if (strcmp(arg, "--no-preload") == 0 && !*inl) {
        base->preload = 0;
    } else if (strcmp(arg, "--verify") == 0 && !*inl) {
        base->verify = 1;
    } else {
        return 0;
    }
    return 1;
}

/* Where the results go, and what the command does; 1 when arg is one of
 * these options. */
static int parse_output_option(const char *cmd, int argc, char **argv, int *i, const char *arg, const char **inl,
                               struct bench_cli *c)
{
    if (strcmp(arg, "--out") == 0) {
        c->out_path = need_arg(cmd, argc, argv, i, arg, inl);
    } else if (strcmp(arg, "--format") == 0) {
        const char *v = need_arg(cmd, argc, argv, i, arg, inl);
        if (strcmp(v, "table") == 0)
            c->so.format = FMT_TABLE;
        else if (strcmp(v, "csv") == 0)
            c->so.format = FMT_CSV;
        else
            ut_usage_error(cmd, "--format: '%s' is not accepted; expected table or csv", v);
    } else if (strcmp(arg, "--quiet") == 0 && !*inl) {
        c->so.quiet = 1;
    } else if (strcmp(arg, "--list-engines") == 0 && !*inl) {
        c->list_engines = 1;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        c->help = 1;
    } else {
        return 0;
    }
    return 1;
}

void bench_cli_parse(const char *cmd, int argc, char **argv, struct bench_cli *c)
{
    memset(c, 0, sizeof *c);
    bench_config_defaults(&c->base);
    for (int i = 1; i < argc; i++) {
        char flagbuf[64];
        const char *inl = NULL;
        const char *arg = split_inline_value(argv[i], flagbuf, sizeof flagbuf, &inl);
        int k = knob_of_flag(arg);
        if (k < K_COUNT)
            split_list(cmd, (enum bench_knob)k, need_arg(cmd, argc, argv, &i, arg, &inl), &c->vals[k]);
        else if (!parse_run_option(cmd, argc, argv, &i, arg, &inl, c) &&
                 !parse_output_option(cmd, argc, argv, &i, arg, &inl, c))
            ut_usage_error(cmd, "unknown option '%s' (see commitlab %s --help)", argv[i], cmd);
    }
    if (!c->base.preload && c->vals[K_WORKLOAD].n) {
        for (size_t j = 0; j < c->vals[K_WORKLOAD].n; j++)
            if (strcmp(c->vals[K_WORKLOAD].v[j], "tpcb") == 0)
                ut_usage_error(cmd, "--no-preload: the tpcb workload needs its tables preloaded");
    }
    c->cfgs = expand(cmd, &c->base, c->vals, &c->n);
}
