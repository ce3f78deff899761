/*
 * bench_config.c -- the knobs of a run, from the one table of
 * bench_knobs.h: reading, checking and writing each value by its type,
 * the defaults, the "config" object of a JSON line, the --help lines, and
 * the command line -- every value checked before the first run starts,
 * a bad one a single line naming the flag and what it accepts (exit 2),
 * and the comma lists expanded into their cross product in the table's
 * sweep order.  bench_cli_parse is what `commitlab bench` and `commitlab
 * matrix` parse their options with, and bench_cli_parse_knob what `commitlab
 * crash` parses the knobs it shares with them with; the drivers, the
 * output, the report and the crash campaign read the knobs through
 * bench_knob().  The knobs that are options of libcommitlab take their
 * defaults, ranges, words and help from the library (from_library).
 * Parsing only parses: the knobs sit below the drivers and call nothing
 * of them (the table of peers hands --engine its words as the program
 * starts; the commands load plugins after the command line is read).
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "commitlab.h"
#include "ut_args.h"
#include "ut_text.h"

/* ---- the table ------------------------------------------------------------------- */

#define BENCH_KNOB_ROW_(id, field, ctype, ...)                                                                     \
    [K_##id] = {.off = offsetof(struct bench_config, field), .size = sizeof(((struct bench_config *)0)->field),     \
                __VA_ARGS__},
static struct bench_knob_def knobs[K_COUNT] = {BENCH_KNOBS(BENCH_KNOB_ROW_)};
#undef BENCH_KNOB_ROW_

/* The cross product's order of the knobs that take a list, the outermost
 * first: a table reads as "this workload and engine, this policy, ..., at
 * 1, 16, 64 clients", so clients come last.  Each list knob is here once
 * (check_schema). */
static const enum bench_knob sweep_list[] = {
    K_WORKLOAD,     K_ENGINE,      K_SYNC,          K_SYNC_METHOD, K_ELR,          K_SEGMENTS,        K_SEGMENT_INIT,
    K_SEGMENT_SIZE, K_PREALLOC,    K_RECYCLE_MAX,   K_CHECKPOINT,  K_COMMIT_DELAY, K_COMMIT_SIBLINGS, K_INTERVAL,
    K_URING_DEPTH,  K_MAX_BATCH,   K_FLUSHER_SPIN,  K_WAIT,        K_WAIT_SPIN,    K_SYNC_LATENCY,    K_CACHE,
    K_VALUE_SIZE,   K_KEYS,        K_URING_SYNC,    K_DIST,        K_PIPELINE,     K_OPS_PER_TXN,     K_READ_RATIO,
    K_SCALE,        K_SQLITE_SYNC, K_ROCKSDB_WRITE, K_RATE,        K_CLIENTS,
};
/* The spare rows that an option took go after the library's rows, before
 * the knobs of the workload (from_library). */
#define SWEEP_SPARES_AFTER K_CACHE

static enum bench_knob sweep_live[sizeof sweep_list / sizeof *sweep_list + K_COUNT];
static size_t nsweep_live;
static int nknobs = K_COUNT;

static struct bench_knob_def *table(void);

const enum bench_knob *bench_sweep_list(size_t *n)
{
    table();
    *n = nsweep_live;
    return sweep_live;
}

int bench_knob_count(void)
{
    table();
    return nknobs;
}

static void format_value(const struct bench_knob_def *d, uint64_t u, char *buf, size_t len);

/* The options of libcommitlab that a run sets itself, and no flag. */
static const char *const not_knobs[] = {
    "create", /* every run creates its database; the crash campaign's recovery opens with 0 */
};

/* Each option of the library that no row names, in the table's order,
 * takes the next spare row: its flag is its name with '-' for '_', its
 * JSON member its name, a list the commitlab engine maps (through
 * cl_option_set, as every option).  An option beyond the spare rows (a
 * newer libcommitlab than this table) has no flag.  Returns how many
 * rows were taken. */
static int take_spares(void)
{
    static char flags[K_COUNT - K_LIB_SPARE_0][72];
    int used = 0;
    for (int i = 0; i < cl_option_count() && K_LIB_SPARE_0 + used < K_COUNT; i++) {
        const struct cl_option_info *o = cl_option_info(i);
        int named = 0;
        for (size_t j = 0; j < sizeof not_knobs / sizeof *not_knobs; j++)
            named |= strcmp(o->name, not_knobs[j]) == 0;
        for (int k = 0; k < K_LIB_SPARE_0 && !named; k++)
            named = knobs[k].option && strcmp(knobs[k].option, o->name) == 0;
        if (named)
            continue;
        struct bench_knob_def *d = &knobs[K_LIB_SPARE_0 + used];
        char *f = flags[used++];
        snprintf(f, sizeof flags[0], "--%s", o->name);
        for (char *c = f; *c; c++)
            if (*c == '_')
                *c = '-';
        d->flag = f;
        d->key = o->name;
        d->option = o->name;
        d->type = o->type == CL_OPTION_ENUM       ? KT_ENUM
                  : o->type == CL_OPTION_FLAG     ? KT_ONOFF
                  : strcmp(o->unit, "bytes") == 0 ? KT_SIZE
                                                  : KT_UINT;
        d->flags = KF_SPARE | KF_LIST | KF_ENGINE;
        d->owner = "commitlab";
    }
    return used;
}

/* Each row's place in the sweep (sweep_list); and the rows with .option,
 * from the library's table (cl_option_info): the default as
 * the flag would take it, the range, an enum's words and the help line,
 * prefixed with the policy that reads the option.  A row naming an option
 * this libcommitlab does not have is a bug of this table, caught before
 * anything runs. */
static void from_library(void)
{
    static char dflts[K_COUNT][32], words[K_COUNT][256], helps[K_COUNT][320];
    int spares = take_spares();
    nknobs = K_LIB_SPARE_0 + spares;
    for (size_t i = 0; i < sizeof sweep_list / sizeof *sweep_list; i++) {
        sweep_live[nsweep_live++] = sweep_list[i];
        for (int j = 0; sweep_list[i] == SWEEP_SPARES_AFTER && j < spares; j++)
            sweep_live[nsweep_live++] = (enum bench_knob)(K_LIB_SPARE_0 + j);
    }
    for (size_t i = 0; i < nsweep_live; i++)
        knobs[sweep_live[i]].sweep = (unsigned)i + 1;
    for (int k = 0; k < nknobs; k++) {
        struct bench_knob_def *d = &knobs[k];
        const struct cl_option_info *o = NULL;
        if (!d->option)
            continue;
        for (int i = 0; i < cl_option_count() && !o; i++)
            if (strcmp(cl_option_info(i)->name, d->option) == 0)
                o = cl_option_info(i);
        if (!o) {
            fprintf(stderr, "commitlab: the knob %s names %s, which is no option of this libcommitlab\n", d->flag,
                    d->option);
            abort();
        }
        if ((d->type == KT_ENUM) != (o->type == CL_OPTION_ENUM)) {
            fprintf(stderr, "commitlab: the knob %s reads the option %s as another type\n", d->flag, d->option);
            abort();
        }
        d->lib = o;
        d->min = (double)o->min;
        d->max = (double)o->max;
        if (o->policy == CL_OPTION_ALL_POLICIES)
            snprintf(helps[k], sizeof helps[k], "%s", o->help);
        else
            snprintf(helps[k], sizeof helps[k], "%s: %s", cl_sync_policy_name((enum cl_sync_policy)o->policy),
                     o->help);
        d->help = helps[k];
        if (o->names) { /* an enum: its words, in its order */
            size_t j = 0;
            for (uint64_t v = o->min; v <= o->max && o->names[v] && j < sizeof words[k]; v++)
                j += (size_t)snprintf(words[k] + j, sizeof words[k] - j, "%s%s", j ? "," : "", o->names[v]);
            d->choices = words[k];
            d->dflt = o->names[o->dflt];
        } else if (d->type == KT_ONOFF) {
            d->choices = "on,off";
            d->dflt = o->dflt ? "on" : "off";
        } else if (d->type == KT_TRUE || d->type == KT_FALSE) {
            d->dflt = o->dflt ? "on" : "off";
        } else {
            format_value(d, o->dflt, dflts[k], sizeof dflts[k]);
            d->dflt = dflts[k];
        }
    }
}

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

/* The table, with the library's rows in it. */
static struct bench_knob_def *table(void)
{
    pthread_once(&lib_once, from_library);
    return knobs;
}

const struct bench_knob_def *bench_knob(enum bench_knob k)
{
    return (unsigned)k < K_COUNT ? &table()[k] : NULL;
}

const char *bench_knob_flag(enum bench_knob k)
{
    return (unsigned)k < K_COUNT ? table()[k].flag : "?";
}

enum bench_knob bench_knob_by_flag(const char *flag)
{
    for (int k = 0; k < bench_knob_count(); k++)
        if (strcmp(flag, table()[k].flag) == 0)
            return (enum bench_knob)k;
    return K_COUNT;
}

enum bench_knob bench_knob_by_key(const char *key)
{
    for (int k = 0; k < bench_knob_count(); k++)
        if (strcmp(key, table()[k].key) == 0)
            return (enum bench_knob)k;
    return K_COUNT;
}

/* ---- the library's policies ------------------------------------------------------ */

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

/* ---- a knob's field ---------------------------------------------------------------- */

static void *field_of(struct bench_config *c, enum bench_knob k) { return (char *)c + table()[k].off; }
static const void *cfield_of(const struct bench_config *c, enum bench_knob k)
{
    return (const char *)c + table()[k].off;
}

/* Integers are 4 or 8 bytes wide (unsigned, uint32_t, int, uint64_t). */
static uint64_t get_int(const struct bench_config *c, enum bench_knob k)
{
    if (table()[k].size == sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, cfield_of(c, k), sizeof v);
        return v;
    }
    uint32_t v;
    memcpy(&v, cfield_of(c, k), sizeof v);
    return v;
}

static void set_int(struct bench_config *c, enum bench_knob k, uint64_t v)
{
    if (table()[k].size == sizeof(uint64_t)) {
        memcpy(field_of(c, k), &v, sizeof v);
    } else {
        uint32_t w = (uint32_t)v;
        memcpy(field_of(c, k), &w, sizeof w);
    }
}

static const char *get_str(const struct bench_config *c, enum bench_knob k)
{
    const char *s;
    memcpy(&s, cfield_of(c, k), sizeof s);
    return s;
}

static double get_real(const struct bench_config *c, enum bench_knob k)
{
    double d;
    memcpy(&d, cfield_of(c, k), sizeof d);
    return d;
}

uint64_t bench_knob_int(const struct bench_config *c, enum bench_knob k)
{
    return get_int(c, k);
}

const char *bench_knob_word(const struct bench_config *c, enum bench_knob k)
{
    const struct bench_knob_def *d = &table()[k];
    if (d->type == KT_ENUM) {
        uint64_t v = get_int(c, k);
        return v >= d->lib->min && v <= d->lib->max ? d->lib->names[v] : "?";
    }
    if (d->type == KT_WORD || d->type == KT_PATH) {
        const char *s = get_str(c, k);
        return s ? s : "";
    }
    return "";
}

static int is_word(enum bench_knob_type t)
{
    return t == KT_WORD || t == KT_ENUM || t == KT_INDEX || t == KT_ONOFF;
}

/* ---- words ------------------------------------------------------------------------- */

/* --engine's words: the table of peers names them (drivers/driver.c, as
 * the program starts), so that the knobs below the drivers never call up
 * into them. */
void bench_knob_engines(const char *words)
{
    knobs[K_ENGINE].choices = words;
}

int bench_engine_is_plugin(const char *engine)
{
    return strncmp(engine, "plugin:", 7) == 0;
}

static const char *choices_of(enum bench_knob k)
{
    return table()[k].choices;
}

/* The index of v among the comma-separated words, or -1. */
static int word_index(const char *words, const char *v)
{
    size_t n = strlen(v);
    int i = 0;
    for (const char *p = words; p && *p; i++) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return i;
        if (!e)
            break;
        p = e + 1;
    }
    return -1;
}

/* Word i of words into buf ("" when there is none). */
static void word_at(const char *words, int i, char *buf, size_t len)
{
    const char *p = words;
    for (; p && i > 0; i--) {
        p = strchr(p, ',');
        if (p)
            p++;
    }
    size_t n = p ? strcspn(p, ",") : 0;
    snprintf(buf, len, "%.*s", (int)n, p ? p : "");
}

/* "a, b, c": the words as a sentence lists them. */
static void words_spaced(const char *words, char *buf, size_t len)
{
    size_t j = 0;
    for (const char *p = words; *p && j + 3 < len; p++) {
        buf[j++] = *p;
        if (*p == ',')
            buf[j++] = ' ';
    }
    buf[j] = 0;
}

/* ---- checking, setting and writing one value --------------------------------------- */

static const char *arg_name(const struct bench_knob_def *d)
{
    if (d->flags & KF_LIST)
        return " LIST";
    switch (d->type) {
    case KT_SECS: return " S";
    case KT_NUM: return " X";
    case KT_COUNT: case KT_SEED: case KT_UINT: return " N";
    case KT_SIZE: return " SIZE";
    case KT_PATH: return d->flags & KF_REPEAT ? " NAME=VALUE" : " D";
    case KT_SET: return " SET";
    case KT_TRUE: case KT_FALSE: return "";
    default: return " WORD";
    }
}

void bench_knob_accepted(enum bench_knob k, char *buf, size_t len)
{
    const struct bench_knob_def *d = &table()[k];
    char w[256];
    int n = 0;
    switch (d->type) {
    case KT_WORD:
    case KT_ENUM:
    case KT_INDEX:
    case KT_ONOFF:
        words_spaced(choices_of(k), w, sizeof w);
        n = snprintf(buf, len, "%s%s", w, k == K_ENGINE ? ", plugin:PATH.so, plugin:NAME (with --plugin-dir)" : "");
        break;
    case KT_UINT:
        n = snprintf(buf, len, "an integer in [%llu, %llu]", (unsigned long long)d->min, (unsigned long long)d->max);
        break;
    case KT_SIZE:
        n = snprintf(buf, len, "a size with optional k/M/G in [%llu, %llu] bytes", (unsigned long long)d->min,
                     (unsigned long long)d->max);
        break;
    case KT_RATIO: n = snprintf(buf, len, "a fraction in [0, 1]"); break;
    case KT_SECS: case KT_NUM:
        n = snprintf(buf, len, "%s in %c%g, %g%c", d->type == KT_SECS ? "seconds" : "a number",
                     d->flags & KF_OPEN_MIN ? '(' : '[', d->min, d->max, d->flags & KF_OPEN_MAX ? ')' : ']');
        break;
    case KT_COUNT: n = snprintf(buf, len, "a positive integer"); break;
    case KT_SEED: n = snprintf(buf, len, "a non-negative integer"); break;
    case KT_PATH: n = snprintf(buf, len, "a directory path"); break;
    case KT_SET:
        words_spaced(d->choices, w, sizeof w);
        n = snprintf(buf, len, "a set of %s", w);
        break;
    case KT_TRUE: case KT_FALSE: n = snprintf(buf, len, "no value"); break;
    }
    if (n > 0 && (size_t)n < len && (d->flags & KF_LIST))
        snprintf(buf + n, len - (size_t)n, " (comma lists allowed)");
}

/* Digits only, at most 64 bits. */
static int parse_digits(const char *v, uint64_t *out)
{
    char *end;
    if (*v < '0' || *v > '9')
        return -EINVAL;
    errno = 0;
    unsigned long long u = strtoull(v, &end, 10);
    if (*end || errno)
        return -EINVAL;
    *out = u;
    return 0;
}

static int in_range(const struct bench_knob_def *d, double x)
{
    return (d->flags & KF_OPEN_MIN ? x > d->min : x >= d->min) && (d->flags & KF_OPEN_MAX ? x < d->max : x <= d->max);
}

int bench_knob_check(enum bench_knob k, const char *v)
{
    const struct bench_knob_def *d = &table()[k];
    uint64_t u;
    char *end;
    int ok = 0;
    switch (d->type) {
    case KT_WORD:
    case KT_ENUM:
    case KT_INDEX:
    case KT_ONOFF:
        ok = word_index(choices_of(k), v) >= 0;
        if (k == K_ENGINE && bench_engine_is_plugin(v)) /* loaded once the command line is read */
            ok = v[7] != 0;
        break;
    case KT_UINT: ok = parse_digits(v, &u) == 0 && u >= d->min && u <= d->max; break;
    case KT_SIZE: ok = ut_parse_size(v, &u) == 0 && u >= d->min && u <= d->max; break;
    case KT_RATIO: case KT_SECS: case KT_NUM: {
        double x = strtod(v, &end);
        ok = *v && !*end && in_range(d, x);
        break;
    }
    case KT_COUNT: ok = parse_digits(v, &u) == 0 && u >= 1; break;
    case KT_SEED: ok = parse_digits(v, &u) == 0; break;
    case KT_PATH: ok = *v != 0; break;
    case KT_SET: {
        char **w, why[200];
        size_t n;
        if (ut_split_list(v, &w, &n, why, sizeof why))
            break;
        ok = 1;
        for (size_t i = 0; ok && i < n; i++)
            ok = word_index(d->choices, w[i]) >= 0;
        ut_list_free(w, n);
        break;
    }
    case KT_TRUE: case KT_FALSE: ok = 0; break;
    }
    return ok ? 0 : -EINVAL;
}

void bench_knob_set(struct bench_config *c, enum bench_knob k, const char *v, int given)
{
    const struct bench_knob_def *d = &table()[k];
    uint64_t u = 0;
    switch (d->type) {
    case KT_WORD:
    case KT_PATH: memcpy(field_of(c, k), &v, sizeof v); break;
    case KT_INDEX: set_int(c, k, (uint64_t)word_index(d->choices, v)); break;
    case KT_ENUM: set_int(c, k, d->lib->min + (uint64_t)word_index(d->choices, v)); break;
    case KT_ONOFF: set_int(c, k, strcmp(v, "on") == 0); break;
    case KT_UINT: case KT_COUNT: case KT_SEED:
        parse_digits(v, &u);
        set_int(c, k, u);
        break;
    case KT_SIZE:
        ut_parse_size(v, &u);
        set_int(c, k, u);
        break;
    case KT_RATIO: case KT_SECS: case KT_NUM: {
        double x = strtod(v, NULL);
        memcpy(field_of(c, k), &x, sizeof x);
        break;
    }
    case KT_TRUE: case KT_FALSE: /* v is "on" or "off", as a default says it */
        set_int(c, k, strcmp(v, "on") == 0);
        break;
    case KT_SET: {
        char **w, why[200];
        size_t n;
        if (ut_split_list(v, &w, &n, why, sizeof why) == 0) {
            for (size_t i = 0; i < n; i++)
                u |= 1ull << word_index(d->choices, w[i]);
            ut_list_free(w, n);
        }
        set_int(c, k, u);
        break;
    }
    }
    if ((d->flags & KF_CLEARS_TXNS) && given)
        c->txns = 0;
    if (given)
        c->given[k] = 1;
}

/* An integer as the flag of d would take it: a size as "16M", "256k". */
static void format_value(const struct bench_knob_def *d, uint64_t u, char *buf, size_t len)
{
    if (d->type != KT_SIZE || !u)
        snprintf(buf, len, "%llu", (unsigned long long)u);
    else if (u % (1ull << 30) == 0)
        snprintf(buf, len, "%lluG", (unsigned long long)(u >> 30));
    else if (u % (1ull << 20) == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(u >> 20));
    else if (u % 1024 == 0)
        snprintf(buf, len, "%lluk", (unsigned long long)(u >> 10));
    else
        snprintf(buf, len, "%llu", (unsigned long long)u);
}

void bench_knob_copy(struct bench_config *dst, const struct bench_config *src, enum bench_knob k)
{
    memcpy(field_of(dst, k), cfield_of(src, k), table()[k].size);
    dst->given[k] = 1;
}

void bench_knob_format(const struct bench_config *c, enum bench_knob k, char *buf, size_t len)
{
    const struct bench_knob_def *d = &table()[k];
    uint64_t u;
    buf[0] = 0;
    switch (d->type) {
    case KT_WORD:
    case KT_ENUM:
    case KT_PATH: snprintf(buf, len, "%s", bench_knob_word(c, k)); break;
    case KT_INDEX: word_at(d->choices, (int)get_int(c, k), buf, len); break;
    case KT_ONOFF: case KT_TRUE: case KT_FALSE: snprintf(buf, len, "%s", get_int(c, k) ? "on" : "off"); break;
    case KT_UINT: case KT_COUNT: case KT_SEED: case KT_SIZE: format_value(d, get_int(c, k), buf, len); break;
    case KT_RATIO: case KT_SECS: case KT_NUM: snprintf(buf, len, "%g", get_real(c, k)); break;
    case KT_SET: {
        size_t j = 0;
        u = get_int(c, k);
        for (int i = 0; i < 32 && j < len; i++)
            if (u & (1ull << i)) {
                char w[64];
                word_at(d->choices, i, w, sizeof w);
                j += (size_t)snprintf(buf + j, len - j, "%s%s", j ? "," : "", w);
            }
        break;
    }
    }
}

const struct bench_knob_value bench_crash_defaults[] = {
    {K_RECYCLE_MAX, "2"},
    {K_SEGMENT_SIZE, "64K"}, /* several switches per crash */
    {K_CACHE, "128K"},       /* evictions during commits */
    {K_CHECKPOINT, "128K"},  /* background checkpoints, crashed too */
    {K_INTERVAL, "2"},
};
const size_t bench_crash_ndefaults = sizeof bench_crash_defaults / sizeof *bench_crash_defaults;

void bench_config_defaults(struct bench_config *c)
{
    memset(c, 0, sizeof *c);
    for (int k = 0; k < bench_knob_count(); k++)
        if (table()[k].dflt)
            bench_knob_set(c, (enum bench_knob)k, table()[k].dflt, 0);
}

/* ---- JSON -------------------------------------------------------------------------- */

/* Knob k of c as a JSON value, whatever the engine and workload. */
static json_t *knob_json(const struct bench_config *c, enum bench_knob k)
{
    const struct bench_knob_def *d = &table()[k];
    char w[64];
    switch (d->type) {
    case KT_WORD:
    case KT_PATH: {
        const char *s = get_str(c, k);
        return s ? json_string(s) : json_null();
    }
    case KT_ENUM: return json_string(bench_knob_word(c, k));
    case KT_INDEX:
        word_at(d->choices, (int)get_int(c, k), w, sizeof w);
        return json_string(w);
    case KT_ONOFF: case KT_TRUE: case KT_FALSE: return json_boolean(get_int(c, k));
    case KT_UINT: case KT_SIZE: case KT_COUNT: case KT_SEED: return json_integer((json_int_t)get_int(c, k));
    case KT_RATIO: case KT_SECS: case KT_NUM: return json_real(get_real(c, k));
    case KT_SET: {
        json_t *a = json_array();
        uint64_t u = get_int(c, k);
        for (int i = 0; i < 32; i++)
            if (u & (1ull << i)) {
                word_at(d->choices, i, w, sizeof w);
                json_array_append_new(a, json_string(w));
            }
        return a;
    }
    }
    return json_null();
}

/* Whether knob k applies to c's engine and workload, and has a value. */
static int knob_in_json(const struct bench_config *c, enum bench_knob k)
{
    const struct bench_knob_def *d = &table()[k];
    if (d->owner && strcmp(c->engine, d->owner) != 0 && !c->given[k])
        return 0;
    if (((d->flags & KF_KV) && strcmp(c->workload, "kv") != 0) ||
        ((d->flags & KF_TPCB) && strcmp(c->workload, "tpcb") != 0))
        return 0;
    if ((d->flags & KF_NULL_ZERO) && get_int(c, k) == 0)
        return 0;
    if ((d->flags & KF_NULL_WITH_TXNS) && c->txns)
        return 0;
    return !(d->flags & KF_IF_ZIPF) || c->zipf;
}

json_t *bench_config_json(const struct bench_config *cfg)
{
    json_t *o = json_object();
    for (int i = 0; i < bench_knob_count(); i++) {
        enum bench_knob k = (enum bench_knob)i;
        json_object_set_new(o, table()[k].key, knob_in_json(cfg, k) ? knob_json(cfg, k) : json_null());
        /* the members derived from a knob follow it */
        if (k == K_VALUE_SIZE)
            json_object_set_new(o, "key_size", json_integer(16));
        else if (k == K_SYNC)
            json_object_set_new(o, "sync_durable", json_boolean(cl_sync_policy_is_durable(cfg->sync) == 1));
        else if (k == K_CACHE)
            json_object_set_new(o, "sync_latency_emulated", json_boolean(cfg->sync_latency_us > 0));
    }
    return o;
}

json_t *bench_knob_default_json(enum bench_knob k)
{
    struct bench_config d;
    bench_config_defaults(&d);
    return knob_json(&d, k);
}

/* ---- --help -------------------------------------------------------------------------- */

#define HELP_COL 23
#define HELP_WIDTH 100

/* "  --flag ARG           text", the text wrapped at HELP_WIDTH. */
static void help_line(FILE *f, const char *left, const char *text)
{
    int col = fprintf(f, "  %s", left);
    if (col + 1 > HELP_COL) {
        fputc('\n', f);
        col = 0;
    }
    fprintf(f, "%*s", HELP_COL - col, "");
    ut_wrap(f, HELP_COL, HELP_COL, HELP_WIDTH, text);
}

static const char *const group_heading[KG_COUNT] = {
    [KG_RUN] = NULL,
    [KG_KV] = "kv workload:",
    [KG_TPCB] = "tpcb workload:",
    [KG_COMMIT] = "commit path (commitlab maps every knob; other engines what they can, else n/a):",
    [KG_ENGINE] = "one engine's own:",
};

/* The options of the command rather than of a run. */
static const struct {
    const char *left, *help;
} cli_opts[] = {
    {"--repeat N", "run the whole list N times, round by round, each round in a shuffled order; then each "
                   "configuration's median (min-max) and, per client count, the best configuration and its margin "
                   "over the next best (default 1)"},
    {"--out FILE.jsonl", "append one JSON object per run (docs/bench.md)"},
    {"--format table|csv", "stdout format (default table)"},
    {"--quiet", "no progress line on stderr"},
    {"--list-engines", "the engines built into this binary, and how each maps the knobs; with --engine "
                       "plugin:... or --plugin-dir, the plugins too"},
    {"--plugin-dir DIR",
     "where --engine plugin:NAME finds DIR/NAME.so, else DIR/commitlab-NAME.so, else DIR/libNAME.so "
     "(docs/plugins.md); --engine plugin:PATH.so names the file itself"},
};

void bench_cli_usage(FILE *f)
{
    fprintf(f, "usage: commitlab bench [options]     (comma lists run the cross product)\n"
               "  LIST: values separated by ','; " UT_LIST_RULE " (--engine 'plugin:my\\,store.so')\n");
    for (int g = 0; g < KG_COUNT; g++) {
        fprintf(f, "%s\n", group_heading[g] ? group_heading[g] : "");
        for (int k = 0; k < bench_knob_count(); k++) {
            const struct bench_knob_def *d = &table()[k];
            char left[64], text[1024], w[256];
            if (d->group != (enum bench_knob_group)g)
                continue;
            snprintf(left, sizeof left, "%s%s", d->flag, arg_name(d));
            int n = snprintf(text, sizeof text, "%s", d->help);
            if ((is_word(d->type) || d->type == KT_SET) && n > 0 && (size_t)n < sizeof text) {
                /* the words, the default marked as the old --help did */
                const char *words = choices_of((enum bench_knob)k);
                n += snprintf(text + n, sizeof text - (size_t)n, ":");
                for (int i = 0; n > 0 && (size_t)n < sizeof text; i++) {
                    word_at(words, i, w, sizeof w);
                    if (!w[0])
                        break;
                    n += snprintf(text + n, sizeof text - (size_t)n, "%s %s%s", i ? "," : "", w,
                                  d->dflt && strcmp(w, d->dflt) == 0 ? " (default)" : "");
                }
            } else if (d->dflt && d->type != KT_TRUE && d->type != KT_FALSE && n > 0 && (size_t)n < sizeof text) {
                snprintf(text + n, sizeof text - (size_t)n, " (default %s)", d->dflt);
            }
            help_line(f, left, text);
        }
    }
    fprintf(f, "runs and output:\n");
    for (size_t i = 0; i < sizeof cli_opts / sizeof *cli_opts; i++)
        help_line(f, cli_opts[i].left, cli_opts[i].help);
}

/* ---- the command line -------------------------------------------------------------- */

/* Checks one value of a knob; exits 2 naming the flag when it is bad.
 * how (NULL for bench): another command's way of taking the knob -- one
 * value of a list knob (crash's --pipeline), what it accepts then said
 * without the lists and a word as "one of" the words; or a narrower
 * upper bound of an integer (crash's --clients). */
static void validate(const char *cmd, enum bench_knob k, const char *v, const struct bench_knob_take *how)
{
    char acc[300];
    uint64_t u;
    int one = how && how->one && (table()[k].flags & KF_LIST);
    uint64_t max = how && table()[k].type == KT_UINT ? how->max : 0;
    if (bench_knob_check(k, v) == 0 && (!max || (parse_digits(v, &u) == 0 && u <= max)))
        return;
    bench_knob_accepted(k, acc, sizeof acc);
    if (max) /* the command's narrower range */
        snprintf(acc, sizeof acc, "an integer in [%llu, %llu]%s", (unsigned long long)table()[k].min,
                 (unsigned long long)max, table()[k].flags & KF_LIST ? " (comma lists allowed)" : "");
    char *lists = one ? strstr(acc, " (comma lists allowed)") : NULL;
    if (lists)
        *lists = 0;
    ut_usage_error(cmd, "%s: '%s' is not accepted; expected %s%s", table()[k].flag, v,
                   one && is_word(table()[k].type) ? "one of " : "", acc);
}

/* Whether a and b, both accepted by knob k, are one value: numbers by
 * what they mean (1k and 1024 are one size, 01 and 1 one count, 0.5 and
 * .5 one fraction), words as they are written. */
static int same_value(enum bench_knob k, const char *a, const char *b)
{
    uint64_t x, y;
    switch (table()[k].type) {
    case KT_UINT: case KT_COUNT: case KT_SEED:
        return parse_digits(a, &x) == 0 && parse_digits(b, &y) == 0 && x == y;
    case KT_SIZE: return ut_parse_size(a, &x) == 0 && ut_parse_size(b, &y) == 0 && x == y;
    case KT_RATIO: case KT_SECS: case KT_NUM: return strtod(a, NULL) == strtod(b, NULL);
    default: return strcmp(a, b) == 0;
    }
}

/* A list that names one value twice runs nothing twice: it is refused. */
static void refuse_twice(const char *cmd, const char *flag, const char *arg, const char *a, const char *b)
{
    ut_usage_error(cmd, "%s: '%s' names one value twice ('%s' and '%s'); give each value once", flag, arg, a, b);
}

/* A comma list by the one rule of lists (ut_split_list: "\," is a comma
 * in an item, "\\" a backslash), each item checked, no value twice. */
static void split_list(const char *cmd, enum bench_knob k, const char *arg, struct knob_values *kv,
                       const struct bench_knob_take *how)
{
    char **items, why[300];
    size_t n;
    if (!*arg)
        ut_usage_error(cmd, "%s: empty value", table()[k].flag);
    if (ut_split_list(arg, &items, &n, why, sizeof why))
        ut_usage_error(cmd, "%s: '%s' %s", table()[k].flag, arg, why);
    for (size_t i = 0; i < n; i++) {
        validate(cmd, k, items[i], how);
        for (size_t j = 0; j < i; j++)
            if (same_value(k, items[j], items[i]))
                refuse_twice(cmd, table()[k].flag, arg, items[j], items[i]);
    }
    for (size_t i = 0; i < kv->n; i++)
        free(kv->v[i]);
    free(kv->v);
    kv->v = items;
    kv->n = n;
}

/* The list knobs in the table's sweep order, the outermost first. */
static size_t sweep_order(enum bench_knob *order)
{
    size_t n = 0;
    for (unsigned rank = 1; rank <= (unsigned)bench_knob_count(); rank++)
        for (int k = 0; k < bench_knob_count(); k++)
            if (table()[k].sweep == rank)
                order[n++] = (enum bench_knob)k;
    return n;
}

static struct bench_config *expand(const char *cmd, const struct bench_config *base, struct knob_values *vals,
                                   size_t *nout)
{
    enum bench_knob order[K_COUNT];
    size_t total = 1, nk = sweep_order(order);
    for (size_t i = 0; i < nk; i++)
        if (vals[order[i]].n)
            total *= vals[order[i]].n;
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
            enum bench_knob k = order[i];
            if (!vals[k].n)
                continue;
            bench_knob_set(c, k, vals[k].v[idx[k]], 1);
            if (vals[k].n > 1 && !(table()[k].flags & KF_LABEL) && vl < sizeof c->varying)
                vl += (size_t)snprintf(c->varying + vl, sizeof c->varying - vl, "%s%s=%s", vl ? " " : "",
                                       table()[k].flag + 2, vals[k].v[idx[k]]);
        }
        /* advance the odometer: the last knob in the sweep order fastest */
        for (size_t i = nk; i-- > 0;) {
            enum bench_knob k = order[i];
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
        free(c->joined[k]);
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

/* The words of a set (--lmdb-flags writemap,writemap): none twice. */
static void set_once(const char *cmd, enum bench_knob k, const char *v)
{
    char **w, why[300];
    size_t n;
    if (ut_split_list(v, &w, &n, why, sizeof why))
        return; /* validate said what is wrong */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(w[i], w[j]) == 0)
                refuse_twice(cmd, table()[k].flag, v, w[j], w[i]);
    ut_list_free(w, n);
}

/* Knob k's flag: a comma list kept as text for the cross product, or one
 * value (how->one: even of a list knob) set on the base of every run;
 * how: another command's way of taking it, or NULL for bench's.  A flag
 * with a value that the user gives twice is refused (a preset's, which
 * comes first, is replaced).  0 when arg is not a use of the flag after
 * all (--reuse=x). */
static int parse_knob(const char *cmd, int argc, char **argv, int *i, enum bench_knob k, const char *arg,
                      const char **inl, struct bench_cli *c, const struct bench_knob_take *how)
{
    const struct bench_knob_def *d = &table()[k];
    if (d->type == KT_TRUE || d->type == KT_FALSE) {
        if (*inl)
            return 0; /* --reuse=x: not an option of ours */
        bench_knob_set(&c->base, k, d->type == KT_TRUE ? "on" : "off", 1);
        return 1;
    }
    int user = *i > c->ndefault;
    const char *v = need_arg(cmd, argc, argv, i, arg, inl);
    int list = (d->flags & KF_LIST) && !(how && how->one);
    if (d->flags & KF_REPEAT) { /* every use kept, in order (a preset's replaced) */
        if (strchr(v, ';'))
            ut_usage_error(cmd, "%s: '%s' holds a ';', which separates the values given; give one per %s", d->flag, v,
                           d->flag);
        validate(cmd, k, v, how);
        if (user && c->given_as[k]) { /* joined: owned by c, in place of the join before it */
            char *joined = NULL;
            if (asprintf(&joined, "%s;%s", c->given_as[k], v) < 0)
                ut_usage_error(cmd, "out of memory");
            free(c->joined[k]);
            v = c->joined[k] = joined;
        }
        if (user)
            c->given_as[k] = v;
        bench_knob_set(&c->base, k, v, 1);
        return 1;
    }
    if (user)
        ut_once(cmd, d->flag, &c->given_as[k], v, list);
    if (list) {
        split_list(cmd, k, v, &c->vals[k], how);
    } else {
        validate(cmd, k, v, how);
        if (d->type == KT_SET)
            set_once(cmd, k, v);
        bench_knob_set(&c->base, k, v, 1);
    }
    return 1;
}

void bench_cli_init(struct bench_cli *c)
{
    memset(c, 0, sizeof *c);
    bench_config_defaults(&c->base);
}

enum bench_knob bench_cli_parse_knob(const char *cmd, int argc, char **argv, int *i,
                                     const struct bench_knob_take *take, size_t n, struct bench_cli *c)
{
    char flagbuf[64];
    const char *inl = NULL;
    const char *arg = split_inline_value(argv[*i], flagbuf, sizeof flagbuf, &inl);
    enum bench_knob k = bench_knob_by_flag(arg);
    for (size_t j = 0; k != K_COUNT && j < n; j++)
        if (take[j].knob == k)
            return parse_knob(cmd, argc, argv, i, k, arg, &inl, c, &take[j]) ? k : K_COUNT;
    return K_COUNT;
}

/* The options of the command: how often, where the results go, and what
 * it does; 1 when arg is one of them. */
static int parse_command_option(const char *cmd, int argc, char **argv, int *i, const char *arg, const char **inl,
                                struct bench_cli *c)
{
    char *end;
    if (strcmp(arg, "--repeat") == 0) {
        const char *v = need_arg(cmd, argc, argv, i, arg, inl);
        ut_once(cmd, arg, &c->repeat_as, v, 0);
        unsigned long r = strtoul(v, &end, 10);
        if (*end || !*v || r < 1 || r > 100)
            ut_usage_error(cmd, "--repeat: '%s' is not accepted; expected an integer in [1, 100]", v);
        c->repeat = (unsigned)r;
    } else if (strcmp(arg, "--out") == 0) {
        c->out_path = need_arg(cmd, argc, argv, i, arg, inl);
        ut_once(cmd, arg, &c->out_as, c->out_path, 0);
    } else if (strcmp(arg, "--format") == 0) {
        const char *v = need_arg(cmd, argc, argv, i, arg, inl);
        ut_once(cmd, arg, &c->format_as, v, 0);
        if (strcmp(v, "table") == 0)
            c->so.format = FMT_TABLE;
        else if (strcmp(v, "csv") == 0)
            c->so.format = FMT_CSV;
        else
            ut_usage_error(cmd, "--format: '%s' is not accepted; expected table or csv", v);
    } else if (strcmp(arg, "--quiet") == 0 && !*inl) {
        c->so.quiet = 1;
    } else if (strcmp(arg, "--plugin-dir") == 0) {
        c->plugin_dir = need_arg(cmd, argc, argv, i, arg, inl);
        ut_once(cmd, arg, &c->plugin_dir_as, c->plugin_dir, 0);
        if (!*c->plugin_dir)
            ut_usage_error(cmd, "--plugin-dir: empty value");
    } else if (strcmp(arg, "--list-engines") == 0 && !*inl) {
        c->list_engines = 1;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        c->help = 1;
    } else {
        return 0;
    }
    return 1;
}

void bench_warn_unread(const char *cmd, const struct bench_config *cfgs, size_t n, FILE *f)
{
    for (int k = 0; k < bench_knob_count(); k++) {
        const struct bench_knob_def *d = &table()[k];
        if (!d->lib || d->lib->policy == CL_OPTION_ALL_POLICIES)
            continue;
        const char *reader = cl_sync_policy_name((enum cl_sync_policy)d->lib->policy);
        char ignored[256] = "";
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
            const char *s = bench_knob_word(&cfgs[i], K_SYNC);
            char item[80];
            if (!cfgs[i].given[k] || !s || strcmp(s, reader) == 0)
                continue;
            snprintf(item, sizeof item, ",%s,", s);
            char seen[sizeof ignored + 2];
            snprintf(seen, sizeof seen, ",%s,", ignored);
            if (strstr(seen, item) || o >= sizeof ignored)
                continue;
            o += (size_t)snprintf(ignored + o, sizeof ignored - o, "%s%s", o ? "," : "", s);
        }
        if (o)
            fprintf(f, "commitlab %s: warning: %s is read by --sync %s only; the runs with --sync %s ignore it\n", cmd,
                    d->flag, reader, ignored);
    }
}

void bench_cli_parse(const char *cmd, int argc, char **argv, int ndefault, struct bench_cli *c)
{
    bench_cli_init(c);
    c->ndefault = ndefault;
    for (int i = 1; i < argc; i++) {
        char flagbuf[64];
        const char *inl = NULL;
        const char *arg = split_inline_value(argv[i], flagbuf, sizeof flagbuf, &inl);
        enum bench_knob k = bench_knob_by_flag(arg);
        if (!(k != K_COUNT && parse_knob(cmd, argc, argv, &i, k, arg, &inl, c, NULL)) &&
            !parse_command_option(cmd, argc, argv, &i, arg, &inl, c))
            ut_usage_error(cmd, "unknown option '%s' (see commitlab %s --help)", argv[i], cmd);
    }
    c->dir_given = c->base.given[K_DIR];
    if (!c->base.preload && c->vals[K_WORKLOAD].n) {
        for (size_t j = 0; j < c->vals[K_WORKLOAD].n; j++)
            if (strcmp(c->vals[K_WORKLOAD].v[j], "tpcb") == 0)
                ut_usage_error(cmd, "--no-preload: the tpcb workload needs its tables preloaded");
    }
    c->cfgs = expand(cmd, &c->base, c->vals, &c->n);
}
