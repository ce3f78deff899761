/*
 * driver.c -- the drivers built into this binary (a driver whose store's
 * -dev package was missing is listed with built == 0): commitlab's own,
 * and the peers' plugin tables, adapted at start-up by the adapter every
 * loaded plugin goes through (driver_plugin.c); and what every run
 * asks of them before it starts: that the engine declares each knob the
 * run sets (struct bench_accept), else the run is n/a with the reason;
 * and --list-engines, which prints those declarations.  bench_run and the
 * crash campaign call bench_engine_check.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "ut_text.h"

#define LIST_WIDTH 100

/* The peers: one table, in the order of tables and reports, after
 * commitlab's own.  From it come the driver list, the words --engine
 * accepts (bench_engine_words) and --list-engines.  A peer is a table of
 * the plugin ABI (driver_lmdb.c and the rest) that the adapter turns into
 * a driver at start-up. */
static const struct cl_engine_plugin *const peer_tables[] = {
    &bench_plugin_lmdb,       &bench_plugin_rocksdb, &bench_plugin_sqlite,
    &bench_plugin_wiredtiger, &bench_plugin_raw,     &bench_plugin_postgres,
};
#define NPEERS (sizeof peer_tables / sizeof *peer_tables)
static struct bench_driver peers[NPEERS];

const struct bench_driver *bench_drivers[1 + NPEERS];
const size_t bench_ndrivers = 1 + NPEERS;

/* Before main: each peer's table through the adapter.  A table the adapter
 * refuses is a bug of this build, said at once; one without open is a peer
 * this binary was built without. */
__attribute__((constructor)) static void adapt_peers(void)
{
    bench_drivers[0] = &bench_driver_commitlab;
    bench_knob_engines(bench_engine_words());
    for (size_t i = 0; i < NPEERS; i++) {
        const struct cl_engine_plugin *p = peer_tables[i];
        char err[512];
        bench_drivers[1 + i] = &peers[i];
        if (!p->open) {
            peers[i] = (struct bench_driver){.name = p->name, .notes = p->notes};
            continue;
        }
        if (bench_plugin_adapt(p, 0, &peers[i], err, sizeof err)) {
            fprintf(stderr, "commitlab: the built-in engine %s: %s\n", p->name, err);
            abort();
        }
    }
}

const char *bench_engine_words(void)
{
    static char words[256];
    if (!words[0]) {
        size_t o = (size_t)snprintf(words, sizeof words, "%s", bench_driver_commitlab.name);
        for (size_t i = 0; i < NPEERS && o < sizeof words; i++)
            o += (size_t)snprintf(words + o, sizeof words - o, ",%s", peer_tables[i]->name);
    }
    return words;
}

const struct bench_driver *bench_driver_find(const char *name)
{
    const struct bench_driver *const *pl;
    size_t n = bench_plugins_loaded(&pl);
    for (size_t i = 0; i < bench_ndrivers; i++)
        if (strcmp(bench_drivers[i]->name, name) == 0)
            return bench_drivers[i];
    for (size_t i = 0; i < n; i++)
        if (strcmp(pl[i]->name, name) == 0)
            return pl[i];
    return NULL;
}

/* The rows of a driver that maps every option of libcommitlab
 * (maps_options) for the knobs its accepts has no row of. */
static struct bench_accept option_rows[K_COUNT];
static char option_maps[K_COUNT][80];
static pthread_once_t option_rows_once = PTHREAD_ONCE_INIT;

static void option_rows_init(void)
{
    for (int k = 0; k < bench_knob_count(); k++) {
        const struct bench_knob_def *kd = bench_knob((enum bench_knob)k);
        if (!kd->lib)
            continue;
        snprintf(option_maps[k], sizeof option_maps[k], "cl_options.%s", kd->lib->name);
        option_rows[k] = (struct bench_accept){.knob = (enum bench_knob)k, .maps = option_maps[k]};
    }
}

static const struct bench_accept *option_row(const struct bench_driver *d, enum bench_knob k)
{
    if (!d->maps_options || (unsigned)k >= K_COUNT || !bench_knob(k)->lib)
        return NULL;
    pthread_once(&option_rows_once, option_rows_init);
    return &option_rows[k];
}

/* Whether d's accepts has a row of its own for knob k. */
static int has_own_row(const struct bench_driver *d, enum bench_knob k)
{
    for (const struct bench_accept *a = d->accepts; a && a->knob != K_COUNT; a++)
        if (a->knob == k)
            return 1;
    return 0;
}

const struct bench_accept *bench_driver_accept(const struct bench_driver *d, enum bench_knob k, const char *v)
{
    const struct bench_accept *any = NULL;
    for (const struct bench_accept *a = d->accepts; a && a->knob != K_COUNT; a++) {
        if (a->knob != k)
            continue;
        if (a->value && strcmp(a->value, v) == 0)
            return a;
        if (!a->value && !any)
            any = a;
    }
    return any || has_own_row(d, k) ? any : option_row(d, k);
}

/* Why knob k, without a row of d, is n/a. */
static void no_row_why(const struct bench_driver *d, enum bench_knob k, char *buf, size_t len)
{
    const char *owner = bench_knob(k)->owner;
    if (owner && strcmp(owner, "commitlab") != 0 && strcmp(owner, d->name) != 0)
        snprintf(buf, len, "applies to %s only", owner);
    else
        snprintf(buf, len, "%s", d->no_why ? d->no_why : "this engine does not map it");
}

static struct bench_config defaults;
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;
static void defaults_init(void) { bench_config_defaults(&defaults); }

/* A knob given at its default that asks nothing of d: one whose default
 * every engine does (KF_DEFAULT_ANY), or another engine's own knob.  The
 * run is the one without the flag, so a sweep that lists such a knob's
 * values runs every engine once, at the default, instead of n/a. */
static int moot_default(const struct bench_driver *d, enum bench_knob k, const char *v)
{
    const struct bench_knob_def *kd = bench_knob(k);
    int other_owner = kd->owner && strcmp(kd->owner, "commitlab") != 0 && strcmp(kd->owner, d->name) != 0;
    if (k == K_SYNC || !(kd->flags & KF_DEFAULT_ANY || other_owner))
        return 0;
    char dv[160];
    pthread_once(&defaults_once, defaults_init);
    bench_knob_format(&defaults, k, dv, sizeof dv);
    return strcmp(v, dv) == 0;
}

int bench_engine_check(const struct bench_driver *d, const struct bench_config *cfg, char *why, size_t len)
{
    for (int i = 0; i < bench_knob_count(); i++) {
        enum bench_knob k = (enum bench_knob)i;
        if (!(bench_knob(k)->flags & KF_ENGINE) || (!cfg->given[k] && k != K_SYNC))
            continue; /* not the engine's, or left alone; every run has a --sync */
        char v[160], r[200];
        bench_knob_format(cfg, k, v, sizeof v);
        if (moot_default(d, k, v))
            continue;
        const struct bench_accept *a = bench_driver_accept(d, k, v);
        if (a && a->maps)
            continue;
        if (a)
            snprintf(r, sizeof r, "%s", a->why ? a->why : "not accepted");
        else
            no_row_why(d, k, r, sizeof r);
        snprintf(why, len, "%s%s%s: %s", bench_knob_flag(k), v[0] ? " " : "", v, r);
        return BENCH_NA;
    }
    return d->check ? d->check(d, cfg, why, len) : 0;
}

/* Whether d has any row for knob k, its own or an option's. */
static int has_row(const struct bench_driver *d, enum bench_knob k)
{
    return has_own_row(d, k) || option_row(d, k);
}

/* "--sync commit", "--sync-latency", "--sync (other values)". */
static void row_name(const struct bench_driver *d, const struct bench_accept *a, char *buf, size_t len)
{
    int specific = 0;
    for (const struct bench_accept *b = d->accepts; !a->value && b->knob != K_COUNT; b++)
        specific |= b->knob == a->knob && b->value;
    snprintf(buf, len, "%s%s%s", bench_knob_flag(a->knob), a->value ? " " : specific ? " (other values)" : "",
             a->value ? a->value : "");
}

/* One engine's section of --list-engines. */
static void list_engine(FILE *f, const struct bench_driver *d)
{
    {
        const char *v = d->built && d->version ? d->version(d) : NULL;
        fprintf(f, "%-10s %s%s%s%s\n", d->name, d->plugin_path ? "loaded" : d->built ? "built" : "not built",
                v ? " (" : "", v ? v : "", v ? ")" : "");
        if (d->plugin_path)
            fprintf(f, "  plugin %s\n", d->plugin_path);
        if (d->plugin && d->plugin->flags & CL_ENGINE_RMW)
            fprintf(f, "  --workload tpcb -> read-modify-write transactions (CL_ENGINE_RMW)\n");
        else if (d->plugin && !(d->plugin->flags & CL_ENGINE_KEEPS_NO_DATA))
            fprintf(f, "  --workload tpcb: n/a (no read-modify-write transactions declared)\n");
        if (d->built) {
            char name[64];
            for (const struct bench_accept *a = d->accepts; a && a->knob != K_COUNT; a++) {
                char line[600];
                row_name(d, a, name, sizeof name);
                if (a->maps && d->plugin && a->knob == K_SYNC)
                    snprintf(line, sizeof line, "%s -> %s [an acknowledged commit survives: %s]", name, a->maps,
                             a->survives == (CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER) ? "a kill, a power cut"
                             : a->survives & CL_ENGINE_SURVIVES_KILL                              ? "a kill"
                             : a->survives & CL_ENGINE_SURVIVES_POWER                             ? "a power cut"
                                                                                                  : "nothing claimed");
                else if (a->maps)
                    snprintf(line, sizeof line, "%s -> %s", name, a->maps);
                else
                    snprintf(line, sizeof line, "%s: n/a (%s)", name, a->why);
                fputs("  ", f);
                ut_wrap(f, 2, 6, LIST_WIDTH, line);
            }
            /* the options it maps by their names, without a row of its own */
            for (int k = 0; k < bench_knob_count(); k++) {
                const struct bench_accept *a =
                    has_own_row(d, (enum bench_knob)k) ? NULL : option_row(d, (enum bench_knob)k);
                char line[300];
                if (!a)
                    continue;
                snprintf(line, sizeof line, "%s -> %s", bench_knob_flag(a->knob), a->maps);
                fputs("  ", f);
                ut_wrap(f, 2, 6, LIST_WIDTH, line);
            }
            /* the engine's knobs without a row, by their reason */
            int done[K_COUNT] = {0};
            for (int k = 0; k < bench_knob_count(); k++) {
                char why[200], other[200];
                if (done[k] || !(bench_knob((enum bench_knob)k)->flags & KF_ENGINE) || has_row(d, (enum bench_knob)k))
                    continue;
                char line[600];
                size_t n = 0;
                no_row_why(d, (enum bench_knob)k, why, sizeof why);
                n += (size_t)snprintf(line + n, sizeof line - n, "%s", bench_knob_flag((enum bench_knob)k));
                for (int j = k + 1; j < bench_knob_count(); j++) {
                    if (done[j] || !(bench_knob((enum bench_knob)j)->flags & KF_ENGINE) ||
                        has_row(d, (enum bench_knob)j))
                        continue;
                    no_row_why(d, (enum bench_knob)j, other, sizeof other);
                    if (strcmp(why, other) == 0 && n < sizeof line) {
                        n += (size_t)snprintf(line + n, sizeof line - n, ", %s", bench_knob_flag((enum bench_knob)j));
                        done[j] = 1;
                    }
                }
                if (n < sizeof line)
                    snprintf(line + n, sizeof line - n, ": n/a (%s)", why);
                fputs("  ", f);
                ut_wrap(f, 2, 6, LIST_WIDTH, line);
            }
        }
        for (const char *p = d->notes; p && *p;) { /* one note a line */
            size_t n = strcspn(p, "\n");
            fprintf(f, "  %.*s\n", (int)n, p);
            p += n + (p[n] == '\n');
        }
        fputc('\n', f);
    }
}

void bench_list_engines(FILE *f)
{
    const struct bench_driver *const *pl;
    size_t n = bench_plugins_loaded(&pl);
    fprintf(f, "engines in this build of commitlab bench:\n\n");
    for (size_t i = 0; i < bench_ndrivers; i++)
        list_engine(f, bench_drivers[i]);
    if (n)
        fprintf(f, "plugins loaded (--engine plugin:..., --plugin-dir):\n\n");
    for (size_t i = 0; i < n; i++)
        list_engine(f, pl[i]);
    fprintf(f, "A knob given at its default that every engine does (--pipeline 1: one blocking commit at a\n"
               "time), or another engine's own knob at its default, asks nothing of an engine: its runs are\n"
               "the ones without the flag.\n");
}
