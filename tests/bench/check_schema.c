/*
 * check_schema.c -- the schema of a commitlab-bench/1 line
 * (bench/harness/bench_schema.h) against the harness that writes the
 * lines, linked in: for every engine and workload, what bench_config_json
 * writes for an unchanged knob is the schema's default (or null, for a
 * knob the engine or workload does not have); every knob of the command
 * line is in the schema; every default parses as JSON.  The report reads
 * old lines through the schema, so a default that changes must change
 * there too.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_schema.h"
#include "drivers/driver.h"
#include "testutil.h"

START_TEST(test_defaults_parse)
{
    for (size_t i = 0; i < bench_schema_nknobs; i++) {
        json_error_t e;
        json_t *d = json_loads(bench_schema_knobs[i].dflt, JSON_DECODE_ANY, &e);
        ck_assert_msg(d != NULL, "%s: default '%s' is not JSON: %s", bench_schema_knobs[i].key,
                      bench_schema_knobs[i].dflt, e.text);
        ck_assert_ptr_eq(bench_schema_knob(bench_schema_knobs[i].key), &bench_schema_knobs[i]);
        json_decref(d);
    }
    ck_assert_ptr_null(bench_schema_knob("no_such_member"));
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
            for (size_t i = 0; i < bench_schema_nknobs; i++) {
                const struct bench_schema_knob *k = &bench_schema_knobs[i];
                json_t *v = json_object_get(j, k->key);
                ck_assert_msg(v != NULL, "%s: no member %s in the config object", c.engine, k->key);
                if (json_is_null(v))
                    continue;
                json_t *d = json_loads(k->dflt, JSON_DECODE_ANY, NULL);
                char *got = json_dumps(v, JSON_ENCODE_ANY);
                ck_assert_msg(json_equal(v, d), "%s %s: %s is %s by default, the schema says %s", c.engine, c.workload,
                              k->key, got, k->dflt);
                free(got);
                json_decref(d);
            }
            json_decref(j);
        }
}
END_TEST

START_TEST(test_every_flag_in_the_schema)
{
    for (int k = 0; k < K_COUNT; k++) {
        const char *flag = bench_knob_flag((enum bench_knob)k);
        if (!strcmp(flag, "--engine") || !strcmp(flag, "--workload") || !strcmp(flag, "--sync") ||
            !strcmp(flag, "--clients"))
            continue; /* they name a series, not a knob of it */
        int found = 0;
        for (size_t i = 0; i < bench_schema_nknobs; i++)
            found |= strcmp(bench_schema_knobs[i].flag, flag) == 0;
        ck_assert_msg(found, "%s is not in the schema's knobs", flag);
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

int main(void)
{
    Suite *s = suite_create("bench/schema");
    TCase *tc = tcase_create("schema");
    tcase_add_test(tc, test_defaults_parse);
    tcase_add_test(tc, test_defaults_are_what_bench_writes);
    tcase_add_test(tc, test_every_flag_in_the_schema);
    tcase_add_test(tc, test_ranks);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
