/*
 * check_engines.c -- what each engine's driver declares it can express
 * (struct bench_accept), against the harness that decides from it, linked
 * in: for every engine built, every sync policy, and every knob the
 * engine maps at each value other than its default, the run is either
 * accepted -- and then every knob it sets has a row with a mapping, and
 * --list-engines prints that row's line -- or n/a, with a reason that
 * names the flag and its value.  Nothing is run as something else:
 * RocksDB under --sync flusher, which ran as sync=true labelled
 * "flusher", is n/a.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "drivers/driver.h"
#include "testutil.h"

static char *engines_text;

static void setup(void)
{
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
    const char *words = d->type == KT_POLICY ? bench_sync_choices() : d->choices;
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
    snprintf(head, sizeof head, "\n%-10s built", e->name);
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
    for (int k = 0; k < K_COUNT; k++) {
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
    for (size_t e = 0; e < bench_ndrivers; e++) {
        const struct bench_driver *d = bench_drivers[e];
        if (!d->built)
            continue;
        for (size_t p = 0; p < np; p++) {
            for (int k = -1; k < K_COUNT; k++) {
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
        /* and a knob given at its default is still the engine's to map */
        bench_config_defaults(&c);
        c.engine = d->name;
        bench_knob_set(&c, K_SEGMENT_INIT, "zero", 1);
        ck_assert_msg(bench_engine_check(d, &c, why, sizeof why) == BENCH_NA && strstr(why, "--segment-init zero"),
                      "%s: '%s'", d->name, why);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench/engines");
    TCase *tc = tcase_create("engines");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_accepted_or_na);
    tcase_add_test(tc, test_no_silent_substitute);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
