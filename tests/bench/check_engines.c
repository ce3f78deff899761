/*
 * check_engines.c -- what each engine's driver declares it can express
 * (struct bench_accept), against the harness that decides from it, linked
 * in: for every engine built, every sync policy, and every knob the
 * engine maps at each value other than its default, the run is either
 * accepted -- and then every knob it sets has a row with a mapping, and
 * --list-engines prints that row's line -- or n/a, with a reason that
 * names the flag and its value.  Nothing is run as something else:
 * RocksDB under --sync flusher, which ran as sync=true labelled
 * "flusher", is n/a.  The same holds for a plugin loaded from a shared
 * library (the example store, from CL_PLUGIN_DIR), and the adapter
 * refuses a table it cannot fully read, each in one line.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "drivers/driver.h"
#include "testutil.h"

static char *engines_text;
static const struct bench_driver *applog; /* the example plugin, loaded */

static void setup(void)
{
    const char *dir = getenv("CL_PLUGIN_DIR");
    char err[1024];
    ck_assert_msg(dir != NULL, "CL_PLUGIN_DIR is not set (the build's plugins directory)");
    applog = bench_plugin_load("bench", "plugin:applog", dir, err, sizeof err);
    ck_assert_msg(applog != NULL, "%s", err);
    size_t len;
    FILE *f = open_memstream(&engines_text, &len);
    ck_assert_ptr_nonnull(f);
    bench_list_engines(f);
    fclose(f);
}

static void teardown(void)
{
    free(engines_text);
    engines_text = NULL;
}

/* The values of knob k other than its default that a test gives it. */
static size_t other_values(enum bench_knob k, char vals[][64], size_t max)
{
    const struct bench_knob_def *d = bench_knob(k);
    size_t n = 0;
    const char *words = d->choices;
    if (d->type == KT_TRUE || d->type == KT_FALSE) { /* a flag: given, it says the other of its default */
        snprintf(vals[n++], 64, "%s", d->type == KT_TRUE ? "on" : "off");
        return n;
    }
    if (words) {
        for (const char *p = words; *p && n < max;) {
            size_t len = strcspn(p, ",");
            snprintf(vals[n], 64, "%.*s", (int)len, p);
            if (!d->dflt || strcmp(vals[n], d->dflt) != 0)
                n++;
            p += len + (p[len] == ',');
        }
        return n;
    }
    snprintf(vals[n], 64, "%llu", (unsigned long long)d->min);
    if (!d->dflt || bench_knob_check(k, d->dflt) || strcmp(vals[n], d->dflt) != 0)
        n++;
    snprintf(vals[n], 64, "%llu", (unsigned long long)d->max);
    n++;
    return n;
}

/* The line --list-engines prints for row a of engine e. */
static int listed(const struct bench_driver *e, const struct bench_accept *a)
{
    char head[64], want[128];
    snprintf(head, sizeof head, "\n%-10s %s", e->name, e->plugin_path ? "loaded" : "built");
    const char *sec = strstr(engines_text, head), *end;
    ck_assert_msg(sec != NULL, "%s is not listed as built", e->name);
    sec++;
    end = strstr(sec, "\n\n");
    snprintf(want, sizeof want, "\n  %s%s%s", bench_knob_flag(a->knob), a->value ? " " : "", a->value ? a->value : "");
    for (const char *p = strstr(sec, want); p && (!end || p < end); p = strstr(p + 1, want)) {
        const char *q = p + strlen(want);
        if (strncmp(q, " -> ", 4) == 0 || strncmp(q, " (other values) -> ", 19) == 0)
            return 1;
    }
    return 0;
}

/* cfg accepted by e: every knob it sets has a mapping that is listed. */
static void check_accepted(const struct bench_driver *e, const struct bench_config *cfg, const char *what)
{
    for (int k = 0; k < bench_knob_count(); k++) {
        if (!(bench_knob((enum bench_knob)k)->flags & KF_ENGINE) || (!cfg->given[k] && k != K_SYNC))
            continue;
        char v[64];
        bench_knob_format(cfg, (enum bench_knob)k, v, sizeof v);
        const struct bench_accept *a = bench_driver_accept(e, (enum bench_knob)k, v);
        ck_assert_msg(a && a->maps, "%s %s: accepted without a mapping for %s %s", e->name, what,
                      bench_knob_flag((enum bench_knob)k), v);
        ck_assert_msg(listed(e, a), "%s %s: --list-engines does not state the mapping of %s %s", e->name, what,
                      bench_knob_flag((enum bench_knob)k), v);
    }
}

START_TEST(test_accepted_or_na)
{
    char policies[16][64], vals[16][64];
    size_t np = other_values(K_SYNC, policies, 16);
    snprintf(policies[np++], 64, "commit"); /* the default, too */
    unsigned accepted = 0, na = 0;
    for (size_t e = 0; e <= bench_ndrivers; e++) {
        const struct bench_driver *d = e < bench_ndrivers ? bench_drivers[e] : applog;
        if (!d->built)
            continue;
        for (size_t p = 0; p < np; p++) {
            for (int k = -1; k < bench_knob_count(); k++) {
                if (k >= 0 && (k == K_SYNC || !(bench_knob((enum bench_knob)k)->flags & KF_ENGINE)))
                    continue;
                size_t nv = k < 0 ? 1 : other_values((enum bench_knob)k, vals, 16);
                for (size_t i = 0; i < nv; i++) {
                    struct bench_config c;
                    char why[256] = "", what[200];
                    bench_config_defaults(&c);
                    c.engine = d->name;
                    bench_knob_set(&c, K_SYNC, policies[p], 1);
                    snprintf(what, sizeof what, "--sync %s", policies[p]);
                    if (k >= 0) {
                        int flag = bench_knob((enum bench_knob)k)->type == KT_TRUE ||
                                   bench_knob((enum bench_knob)k)->type == KT_FALSE;
                        ck_assert_msg(flag || bench_knob_check((enum bench_knob)k, vals[i]) == 0, "%s %s",
                                      bench_knob_flag((enum bench_knob)k), vals[i]);
                        bench_knob_set(&c, (enum bench_knob)k, vals[i], 1);
                        snprintf(what, sizeof what, "--sync %s %s %s", policies[p], bench_knob_flag((enum bench_knob)k),
                                 vals[i]);
                    }
                    if (bench_engine_check(d, &c, why, sizeof why) == 0) {
                        check_accepted(d, &c, what);
                        accepted++;
                    } else {
                        ck_assert_msg(why[0] == '-' && !strchr(why, '\n'), "%s %s: n/a without a one-line reason "
                                      "naming the flag: '%s'", d->name, what, why);
                        na++;
                    }
                }
            }
        }
    }
    ck_assert_uint_gt(accepted, 0);
    ck_assert_uint_gt(na, 0);
}
END_TEST

/* The cases that ran as something else before the drivers declared. */
START_TEST(test_no_silent_substitute)
{
    const struct bench_driver *r = bench_driver_find("rocksdb");
    struct bench_config c;
    char why[256];
    bench_config_defaults(&c);
    c.engine = "rocksdb";
    bench_knob_set(&c, K_SYNC, "flusher", 1);
    if (r->built) {
        ck_assert_int_eq(bench_engine_check(r, &c, why, sizeof why), BENCH_NA);
        ck_assert_msg(strstr(why, "--sync flusher"), "%s", why);
    }
    /* a policy no engine but commitlab has: n/a everywhere else */
    for (size_t e = 0; e < bench_ndrivers; e++) {
        const struct bench_driver *d = bench_drivers[e];
        if (!d->built || d == &bench_driver_commitlab)
            continue;
        bench_config_defaults(&c);
        c.engine = d->name;
        bench_knob_set(&c, K_SYNC, "uring", 1);
        ck_assert_msg(bench_engine_check(d, &c, why, sizeof why) == BENCH_NA, "%s runs --sync uring", d->name);
        /* --pipeline 1, given, is one blocking commit at a time, which
         * every engine does: it runs (a sweep over --pipeline 1,64 runs
         * the peers at 1); another engine's own knob at its default too */
        bench_config_defaults(&c);
        c.engine = d->name;
        bench_knob_set(&c, K_PIPELINE, "1", 1);
        ck_assert_msg(bench_engine_check(d, &c, why, sizeof why) == 0, "%s: --pipeline 1: '%s'", d->name, why);
        /* beyond 1, only an engine that commits asynchronously (its table's
         * commit_async: PostgreSQL's pipeline mode) runs it */
        bench_knob_set(&c, K_PIPELINE, "64", 1);
        why[0] = 0;
        ck_assert_msg((d->sync_wait != NULL) == (strcmp(d->name, "postgres") == 0), "%s: pipelines? %d", d->name,
                      d->sync_wait != NULL);
        if (d->sync_wait)
            ck_assert_msg(bench_engine_check(d, &c, why, sizeof why) == 0, "%s: --pipeline 64: '%s'", d->name, why);
        else
            ck_assert_msg(bench_engine_check(d, &c, why, sizeof why) == BENCH_NA && strstr(why, "--pipeline 64"),
                          "%s: --pipeline 64: '%s'", d->name, why);
        if (strcmp(d->name, "rocksdb") != 0) {
            bench_config_defaults(&c);
            c.engine = d->name;
            bench_knob_set(&c, K_ROCKSDB_WRITE, "default", 1);
            ck_assert_msg(bench_engine_check(d, &c, why, sizeof why) == 0, "%s: --rocksdb-write default: '%s'",
                          d->name, why);
            bench_knob_set(&c, K_ROCKSDB_WRITE, "unordered", 1);
            ck_assert_msg(bench_engine_check(d, &c, why, sizeof why) == BENCH_NA, "%s runs --rocksdb-write "
                          "unordered", d->name);
        }
        /* but a knob given at its default is still the engine's to map
         * (PostgreSQL maps --segment-init, to wal_init_zero: --prealloc) */
        int maps_init = bench_driver_accept(d, K_SEGMENT_INIT, "zero") != NULL;
        bench_config_defaults(&c);
        c.engine = d->name;
        bench_knob_set(&c, maps_init ? K_PREALLOC : K_SEGMENT_INIT, maps_init ? "0" : "zero", 1);
        ck_assert_msg(bench_engine_check(d, &c, why, sizeof why) == BENCH_NA &&
                          strstr(why, maps_init ? "--prealloc 0" : "--segment-init zero"),
                      "%s: '%s'", d->name, why);
    }
}
END_TEST

/* The example plugin's table as the adapter read it, and its claims. */
START_TEST(test_plugin_loaded)
{
    ck_assert_str_eq(applog->name, "applog");
    ck_assert_ptr_eq(bench_driver_find("applog"), applog);
    ck_assert_int_eq(applog->isolate, 1);
    ck_assert_uint_eq(bench_engine_survives(applog, CL_SYNC_COMMIT),
                      CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER);
    ck_assert_uint_eq(bench_engine_survives(applog, CL_SYNC_NONE), CL_ENGINE_SURVIVES_KILL);
    ck_assert_uint_eq(bench_engine_survives(applog, CL_SYNC_GROUP), 0); /* not accepted */
    ck_assert_msg(strstr(engines_text, "\napplog     loaded (1.0)\n  plugin /"), "%s", engines_text);
    /* commitlab's own claims are the policies' */
    ck_assert_uint_eq(bench_engine_survives(&bench_driver_commitlab, CL_SYNC_NONE), CL_ENGINE_SURVIVES_KILL);
    ck_assert_uint_eq(bench_engine_survives(&bench_driver_commitlab, CL_SYNC_COMMIT),
                      CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER);
}
END_TEST

/* What the adapter refuses of a table, each in one line. */
START_TEST(test_adapt_refuses)
{
    static const struct cl_engine_accept ok_rows[] = {CL_ENGINE_MAPS("sync", "commit", "x", 0), CL_ENGINE_END};
    static const struct cl_engine_accept every_sync[] = {CL_ENGINE_MAPS("sync", NULL, "x", 0), CL_ENGINE_END};
    static const struct cl_engine_accept run_knob[] = {CL_ENGINE_MAPS("sync", "commit", "x", 0),
                                                       CL_ENGINE_MAPS("clients", NULL, "x", 0), CL_ENGINE_END};
    static const struct cl_engine_accept bad_value[] = {CL_ENGINE_MAPS("sync", "sometimes", "x", 0), CL_ENGINE_END};
    static const struct cl_engine_accept claim_elsewhere[] = {
        CL_ENGINE_MAPS("sync", "commit", "x", 0), CL_ENGINE_MAPS("sync-latency", NULL, "x", 1), CL_ENGINE_END};
    static const struct cl_engine_accept no_sync[] = {CL_ENGINE_MAPS("sync-latency", NULL, "x", 0), CL_ENGINE_END};
    struct cl_engine_plugin good = *applog->plugin, p;
    struct bench_driver d;
    char err[512];
    /* the table as it is, and with rows of its own, is read */
    ck_assert_msg(bench_plugin_adapt(&good, 1, &d, err, sizeof err) == 0, "%s", err);
    free((void *)d.accepts);
    p = good;
    p.accepts = ok_rows;
    ck_assert_msg(bench_plugin_adapt(&p, 1, &d, err, sizeof err) == 0, "%s", err);
    free((void *)d.accepts);
    struct {
        const char *what, *says;
    } cases[] = {
        {"version", "ABI version 2"}, {"size", "table is 8 bytes"}, {"name", "its name"},
        {"builtin", "built-in engine's"}, {"fn", "has no del"}, {"rows", "every --sync value"},
        {"runknob", "not a knob an engine maps"}, {"value", "does not accept"},
        {"claim", "only an accepting --sync row"}, {"nosync", "accepts no --sync value"},
        {"reserved", "reserved"}, {"flags", "flags 0x80"}, {"tail", "does not know"},
        {"shm", "shared_memory[1] is not the pattern of a file's name"},
    };
    static const char *const shm_path[] = {"*-shm", "sub/lock", NULL};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct {
            struct cl_engine_plugin t;
            char tail[16];
        } big;
        memset(&big, 0, sizeof big);
        p = good;
        const char *w = cases[i].what;
        const struct cl_engine_plugin *t = &p;
        if (!strcmp(w, "version")) p.abi_version = 2;
        else if (!strcmp(w, "size")) p.size = 8;
        else if (!strcmp(w, "name")) p.name = "Bad Name";
        else if (!strcmp(w, "builtin")) p.name = "lmdb";
        else if (!strcmp(w, "fn")) p.del = NULL;
        else if (!strcmp(w, "rows")) p.accepts = every_sync;
        else if (!strcmp(w, "runknob")) p.accepts = run_knob;
        else if (!strcmp(w, "value")) p.accepts = bad_value;
        else if (!strcmp(w, "claim")) p.accepts = claim_elsewhere;
        else if (!strcmp(w, "nosync")) p.accepts = no_sync;
        else if (!strcmp(w, "reserved")) p.reserved[3] = &p;
        else if (!strcmp(w, "flags")) p.flags = 0x80;
        else if (!strcmp(w, "shm")) p.shared_memory = shm_path;
        else if (!strcmp(w, "tail")) {
            big.t = good;
            big.t.size = sizeof big;
            big.tail[5] = 1;
            t = &big.t;
        }
        err[0] = 0;
        ck_assert_msg(bench_plugin_adapt(t, 1, &d, err, sizeof err) == -1, "%s: accepted", w);
        ck_assert_msg(strstr(err, cases[i].says) && !strchr(err, '\n'), "%s: '%s'", w, err);
    }
    /* the files of its shared memory, by their names */
    static const char *const shm[] = {"lock.mdb", "*-shm", NULL};
    p = good;
    p.shared_memory = shm;
    ck_assert_msg(bench_plugin_adapt(&p, 1, &d, err, sizeof err) == 0, "%s", err);
    free((void *)d.accepts);
    /* a larger table whose unknown tail is zero is read */
    struct {
        struct cl_engine_plugin t;
        char tail[16];
    } big;
    memset(&big, 0, sizeof big);
    big.t = good;
    big.t.size = sizeof big;
    big.t.name = "applog2";
    ck_assert_msg(bench_plugin_adapt(&big.t, 1, &d, err, sizeof err) == 0, "%s", err);
    free((void *)d.accepts);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench/engines");
    TCase *tc = tcase_create("engines");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_accepted_or_na);
    tcase_add_test(tc, test_no_silent_substitute);
    tcase_add_test(tc, test_plugin_loaded);
    tcase_add_test(tc, test_adapt_refuses);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
