/*
 * check_schema.c -- the table of knobs (bench/knobs/bench_knobs.h), the
 * schema of a commitlab-bench/1 line's config object, against the harness
 * and the library, linked in: every default is a value its own knob
 * accepts; what bench_config_json writes for an unchanged knob, for every
 * engine and workload, is the knob's default (or null, where the knob
 * does not apply); the defaults of commitlab's knobs are the library's
 * own (cl_options_init, option by option of its table); every option of
 * the library is a flag with its default, range, words and help, and
 * every flag that sets an option is the library's row of it; each knob's
 * field has the width its type reads and writes; the order of engines
 * and policies; and a line's statuses, an interrupted run's line among
 * them (its figures when it had begun to measure).  The report reads
 * old lines by these defaults, so a default that changes -- in the library
 * or here -- fails here first.
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_schema.h"
#include "commitlab.h"
#include "drivers/driver.h"
#include "engine_internal.h"
#include "testutil.h"

START_TEST(test_defaults_accepted)
{
    for (int k = 0; k < bench_knob_count(); k++) {
        const struct bench_knob_def *d = bench_knob((enum bench_knob)k);
        ck_assert_int_eq(bench_knob_by_flag(d->flag), k);
        ck_assert_int_eq(bench_knob_by_key(d->key), k);
        if (!d->dflt || d->type == KT_TRUE || d->type == KT_FALSE)
            continue;
        ck_assert_msg(bench_knob_check((enum bench_knob)k, d->dflt) == 0, "%s: its default '%s' is refused", d->flag,
                      d->dflt);
    }
    ck_assert_int_eq(bench_knob_by_key("no_such_member"), K_COUNT);
}
END_TEST

START_TEST(test_field_widths)
{
    for (int k = 0; k < bench_knob_count(); k++) {
        const struct bench_knob_def *d = bench_knob((enum bench_knob)k);
        size_t want;
        switch (d->type) {
        case KT_WORD:
        case KT_PATH: want = sizeof(const char *); break;
        case KT_RATIO: case KT_SECS: case KT_NUM: want = sizeof(double); break;
        case KT_INDEX:
        case KT_ENUM:
        case KT_ONOFF:
        case KT_TRUE:
        case KT_FALSE:
        case KT_SET: want = sizeof(int); break;
        case KT_COUNT: case KT_SEED: want = sizeof(uint64_t); break;
        default: want = d->size == sizeof(uint64_t) ? sizeof(uint64_t) : sizeof(uint32_t); break;
        }
        if (d->flags & KF_SPARE) /* a spare row holds whatever option takes it */
            want = sizeof(uint64_t);
        ck_assert_msg(d->size == want, "%s: a field of %zu bytes for its type", d->flag, d->size);
        ck_assert_msg(!(d->flags & KF_LIST) == !d->sweep, "%s: a list has a place in the sweep, and only a list",
                      d->flag);
    }
}
END_TEST

START_TEST(test_defaults_are_what_bench_writes)
{
    static const char *const workloads[] = {"kv", "tpcb"};
    for (size_t e = 0; e < bench_ndrivers; e++)
        for (size_t w = 0; w < 2; w++) {
            struct bench_config c;
            bench_config_defaults(&c);
            c.engine = bench_drivers[e]->name;
            c.workload = workloads[w];
            json_t *j = bench_config_json(&c);
            for (int k = 0; k < bench_knob_count(); k++) {
                const struct bench_knob_def *d = bench_knob((enum bench_knob)k);
                json_t *v = json_object_get(j, d->key);
                ck_assert_msg(v != NULL, "%s: no member %s in the config object", c.engine, d->key);
                if (json_is_null(v) || k == K_ENGINE || k == K_WORKLOAD)
                    continue;
                json_t *def = bench_knob_default_json((enum bench_knob)k);
                char *got = json_dumps(v, JSON_ENCODE_ANY), *want = json_dumps(def, JSON_ENCODE_ANY);
                ck_assert_msg(json_equal(v, def), "%s %s: %s is %s by default, the table says %s", c.engine,
                              c.workload, d->key, got, want);
                free(got);
                free(want);
                json_decref(def);
            }
            /* the members that are not knobs */
            ck_assert_int_eq(json_object_size(j), (size_t)bench_knob_count() + 3);
            ck_assert(json_is_integer(json_object_get(j, "key_size")));
            ck_assert(json_is_boolean(json_object_get(j, "sync_durable")));
            ck_assert(json_is_boolean(json_object_get(j, "sync_latency_emulated")));
            json_decref(j);
        }
}
END_TEST

/* A field of struct cl_options, where the library's table says it lives. */
static uint64_t option_field(const struct cl_options *o, const struct cl_option_desc *d)
{
    if (d->size == sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, (const char *)o + d->offset, sizeof v);
        return v;
    }
    uint32_t v;
    memcpy(&v, (const char *)o + d->offset, sizeof v);
    return v;
}

/* What the commitlab driver opens a default run with is what the library
 * would open with, option by option of the library's table. */
START_TEST(test_library_defaults)
{
    struct bench_config c;
    struct cl_options lib, got;
    char why[256];
    size_t n;
    const struct cl_option_desc *t = cl_option_table(&n);
    bench_config_defaults(&c);
    cl_options_init(&lib);
    ck_assert_int_eq(bench_commitlab_options(&c, &got, why, sizeof why), 0);
    ck_assert_uint_gt(n, 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(option_field(&got, &t[i]) == option_field(&lib, &t[i]),
                      "%s: a default run opens with %llu, the library's default is %llu", t[i].info.name,
                      (unsigned long long)option_field(&got, &t[i]), (unsigned long long)option_field(&lib, &t[i]));
}
END_TEST

/* An option the library has and bench has no flag for, and why. */
static const char *const not_flags[] = {
    "create", /* every run creates its database; the crash campaign's recovery opens with 0 */
};

static int is_not_flag(const char *name)
{
    for (size_t i = 0; i < sizeof not_flags / sizeof *not_flags; i++)
        if (strcmp(name, not_flags[i]) == 0)
            return 1;
    return 0;
}

static int accepted(enum bench_knob k, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return bench_knob_check(k, buf) == 0;
}

/* Every option of libcommitlab (cl_option_info) is a flag of bench with
 * the library's default, range, words and help -- and the other way round:
 * every flag that sets a cl_options field is one of those, described by
 * the library, not by a row of its own. */
START_TEST(test_library_options_are_flags)
{
    ck_assert_int_gt(cl_option_count(), 0);
    for (int i = 0; i < cl_option_count(); i++) {
        const struct cl_option_info *o = cl_option_info(i);
        int k;
        for (k = 0; k < bench_knob_count(); k++)
            if (bench_knob((enum bench_knob)k)->option && strcmp(bench_knob((enum bench_knob)k)->option, o->name) == 0)
                break;
        if (is_not_flag(o->name)) {
            ck_assert_msg(k == bench_knob_count(), "%s: a flag after all; take it off not_flags", o->name);
            continue;
        }
        ck_assert_msg(k < bench_knob_count(), "option %s of the library is no flag of commitlab bench", o->name);
        const struct bench_knob_def *d = bench_knob((enum bench_knob)k);
        ck_assert_ptr_eq(d->lib, o);
        ck_assert_int_eq(d->group, KG_COMMIT);
        /* the help line: the library's, after the policy that reads it */
        const char *h = strstr(d->help, o->help);
        ck_assert_msg(h && strlen(h) == strlen(o->help), "%s: help '%s' is not the library's", d->flag, d->help);
        if (o->policy != CL_OPTION_ALL_POLICIES)
            ck_assert_msg(strncmp(d->help, cl_sync_policy_name((enum cl_sync_policy)o->policy),
                                  strlen(cl_sync_policy_name((enum cl_sync_policy)o->policy))) == 0,
                          "%s: help '%s' does not name its policy", d->flag, d->help);
        /* the default: what a run holds when the flag is not given */
        json_t *def = bench_knob_default_json((enum bench_knob)k);
        switch (o->type) {
        case CL_OPTION_NUMBER:
            ck_assert_msg(d->type == KT_UINT || d->type == KT_SIZE, "%s: a number read as type %d", d->flag, d->type);
            ck_assert_msg(json_is_integer(def) && (uint64_t)json_integer_value(def) == o->dflt,
                          "%s: default %lld, the library's %llu", d->flag, (long long)json_integer_value(def),
                          (unsigned long long)o->dflt);
            /* the range, at both edges and one beyond */
            ck_assert_msg(d->min == (double)o->min && d->max == (double)o->max,
                          "%s: range [%g, %g], the library's [%llu, %llu]", d->flag, d->min, d->max,
                          (unsigned long long)o->min, (unsigned long long)o->max);
            ck_assert_msg(accepted((enum bench_knob)k, o->min) && accepted((enum bench_knob)k, o->max),
                          "%s: an edge of the library's range refused", d->flag);
            ck_assert_msg(!accepted((enum bench_knob)k, o->max + 1), "%s: accepts %llu", d->flag,
                          (unsigned long long)o->max + 1);
            if (o->min > 0)
                ck_assert_msg(!accepted((enum bench_knob)k, o->min - 1), "%s: accepts %llu", d->flag,
                              (unsigned long long)o->min - 1);
            break;
        case CL_OPTION_FLAG:
            ck_assert_msg(d->type == KT_ONOFF || d->type == KT_TRUE, "%s: a flag read as type %d", d->flag, d->type);
            ck_assert_msg(json_is_boolean(def) && json_is_true(def) == (o->dflt != 0), "%s: default not the library's",
                          d->flag);
            break;
        case CL_OPTION_ENUM: {
            ck_assert_msg(d->type == KT_ENUM, "%s: an enum read as type %d", d->flag, d->type);
            ck_assert_msg(json_is_string(def) && strcmp(json_string_value(def), o->names[o->dflt]) == 0,
                          "%s: default not the library's %s", d->flag, o->names[o->dflt]);
            /* its words: the enum's names, every one, in order */
            char words[256] = "";
            size_t j = 0;
            for (uint64_t v = o->min; v <= o->max; v++) {
                j += (size_t)snprintf(words + j, sizeof words - j, "%s%s", j ? "," : "", o->names[v]);
                ck_assert_msg(bench_knob_check((enum bench_knob)k, o->names[v]) == 0, "%s: refuses %s", d->flag,
                              o->names[v]);
            }
            ck_assert_str_eq(d->choices, words);
            ck_assert_int_ne(bench_knob_check((enum bench_knob)k, "no-such-word"), 0);
            break;
        }
        }
        json_decref(def);
    }
    /* the other way round: a flag that names an option names one the
     * library has; and every cl_options field the commitlab driver maps
     * a knob to is such a flag's */
    for (int k = 0; k < bench_knob_count(); k++) {
        const struct bench_knob_def *d = bench_knob((enum bench_knob)k);
        if (d->option)
            ck_assert_msg(d->lib && strcmp(d->lib->name, d->option) == 0, "%s: names option %s, which the library "
                          "does not have", d->flag, d->option);
        else
            ck_assert_msg(!d->lib, "%s: library row without an option", d->flag);
    }
    /* every option's flag maps to the option's field on commitlab, by a
     * row of its driver or by the option's name (maps_options) */
    size_t mapped = 0;
    for (int k = 0; k < bench_knob_count(); k++) {
        const struct bench_knob_def *d = bench_knob((enum bench_knob)k);
        if (!d->lib)
            continue;
        const struct bench_accept *a = bench_driver_accept(&bench_driver_commitlab, (enum bench_knob)k, d->dflt);
        char want[80];
        snprintf(want, sizeof want, "cl_options.%s", d->lib->name);
        ck_assert_msg(a && a->maps && strncmp(a->maps, want, strlen(want)) == 0 &&
                          strchr(" ,;()", a->maps[strlen(want)]),
                      "%s: commitlab maps it to %s", d->flag, a && a->maps ? a->maps : "nothing");
        mapped++;
    }
    ck_assert_uint_eq(mapped, (size_t)cl_option_count() - sizeof not_flags / sizeof *not_flags);
    for (const struct bench_accept *a = bench_driver_commitlab.accepts; a->knob != K_COUNT; a++) {
        const char *f = a->maps ? strstr(a->maps, "cl_options.") : NULL;
        if (!f)
            continue;
        f += strlen("cl_options.");
        size_t len = strcspn(f, " ,;()");
        const struct bench_knob_def *d = bench_knob(a->knob);
        ck_assert_msg(d->option && strlen(d->option) == len && strncmp(d->option, f, len) == 0,
                      "%s maps to %s but is not the library's row of it", d->flag, a->maps);
    }
}
END_TEST

/* Every knob that takes a list has one place in the sweep's order, and
 * no other knob has one: no two knobs share a rank. */
START_TEST(test_sweep_order)
{
    size_t n;
    const enum bench_knob *order = bench_sweep_list(&n);
    unsigned seen[K_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_lt(order[i], K_COUNT);
        seen[order[i]]++;
        ck_assert_uint_eq(bench_knob(order[i])->sweep, (unsigned)i + 1);
    }
    for (int k = 0; k < bench_knob_count(); k++) {
        const struct bench_knob_def *d = bench_knob((enum bench_knob)k);
        ck_assert_msg(seen[k] == ((d->flags & KF_LIST) ? 1u : 0u), "%s takes %s and is %u times in the sweep's order",
                      d->flag, (d->flags & KF_LIST) ? "a list" : "no list", seen[k]);
    }
}
END_TEST

START_TEST(test_ranks)
{
    ck_assert_int_lt(bench_schema_engine_rank("commitlab"), bench_schema_engine_rank("lmdb"));
    ck_assert_int_lt(bench_schema_engine_rank("sqlite"), bench_schema_engine_rank("no-such-engine"));
    ck_assert_int_lt(bench_schema_sync_rank("none"), bench_schema_sync_rank("commit"));
    ck_assert_int_lt(bench_schema_sync_rank("commit"), bench_schema_sync_rank("group"));
    ck_assert_int_lt(bench_schema_sync_rank("flusher"), bench_schema_sync_rank("sometimes"));
    ck_assert_str_eq(bench_phase_names[BENCH_PH_LOCK], "lock");
    ck_assert_str_eq(bench_phase_names[BENCH_PHASES - 1], "wakeup");
}
END_TEST

/* The line bench writes for r, parsed. */
static json_t *line_of(const struct bench_config *cfg, const struct bench_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(bench_json_append(f, cfg, r, 2, 3), 0);
    fclose(f);
    json_error_t err;
    json_t *j = json_loads(buf, 0, &err);
    ck_assert_msg(j != NULL, "not JSON: %s", err.text);
    ck_assert_int_eq((int)(strchr(buf, '\n') - buf), (int)len - 1); /* one line */
    free(buf);
    return j;
}

START_TEST(test_statuses)
{
    for (int i = 0; i < BENCH_STATUSES; i++)
        ck_assert_int_eq(bench_status_parse(bench_status_names[i]), i);
    ck_assert_int_eq(bench_status_parse("interrupted"), RUN_INTERRUPTED);
    ck_assert_int_eq(bench_status_parse("stopped"), -1);
    ck_assert_int_eq(bench_status_parse(NULL), -1);

    struct bench_config cfg;
    struct bench_result r;
    bench_config_defaults(&cfg);
    cfg.duration = 10;
    memset(&r, 0, sizeof r);
    r.syncs = r.wal_bytes = r.engine_commits = -1;
    r.status = RUN_INTERRUPTED;
    r.stopped_in = BENCH_STOP_MEASURE;
    r.stop_signal = SIGINT;
    r.txns = 2100;
    r.seconds = 2.1;
    r.tps = 1000;
    r.p99_us = 1500;
    /* stopped in the measured phase: what it measured, marked */
    json_t *j = line_of(&cfg, &r);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "interrupted");
    ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "interrupted by SIGINT after 2.1 s of 10 s");
    json_t *in = json_object_get(j, "interrupted"), *m = json_object_get(j, "metrics");
    ck_assert_str_eq(json_string_value(json_object_get(in, "signal")), "SIGINT");
    ck_assert_str_eq(json_string_value(json_object_get(in, "during")), "measured phase");
    ck_assert_int_eq(json_integer_value(json_object_get(m, "txns")), 2100);
    ck_assert_double_eq(json_real_value(json_object_get(m, "tps")), 1000);
    ck_assert_double_eq(json_real_value(json_object_get(json_object_get(m, "latency_us"), "p99")), 1500);
    ck_assert(json_is_null(json_object_get(m, "verified")));
    json_decref(j);
    /* stopped in the warm-up: nothing measured */
    r.stopped_in = BENCH_STOP_WARMUP;
    r.warmup_done_s = 0.5;
    j = line_of(&cfg, &r);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "interrupted"), "during")), "warm-up");
    ck_assert(json_is_null(json_object_get(json_object_get(j, "metrics"), "txns")));
    ck_assert(json_is_null(json_object_get(json_object_get(j, "metrics"), "tps")));
    json_decref(j);
    /* a whole run: ok, and nothing interrupted */
    r.status = RUN_OK;
    j = line_of(&cfg, &r);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
    ck_assert(json_is_null(json_object_get(j, "interrupted")));
    ck_assert(json_is_null(json_object_get(j, "reason")));
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench/schema");
    TCase *tc = tcase_create("schema");
    tcase_add_test(tc, test_defaults_accepted);
    tcase_add_test(tc, test_field_widths);
    tcase_add_test(tc, test_defaults_are_what_bench_writes);
    tcase_add_test(tc, test_library_defaults);
    tcase_add_test(tc, test_library_options_are_flags);
    tcase_add_test(tc, test_sweep_order);
    tcase_add_test(tc, test_ranks);
    tcase_add_test(tc, test_statuses);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
