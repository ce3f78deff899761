/*
 * check_schema.c -- the table of knobs (bench/harness/bench_knobs.h), the
 * schema of a commitlab-bench/1 line's config object, against the harness
 * and the library, linked in: every default is a value its own knob
 * accepts; what bench_config_json writes for an unchanged knob, for every
 * engine and workload, is the knob's default (or null, where the knob
 * does not apply); the defaults of commitlab's knobs are the library's
 * own (cl_options_init); each knob's field has the width its type reads
 * and writes; and the order of engines and policies.  The report reads
 * old lines by these defaults, so a default that changes -- in the library
 * or here -- fails here first.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_schema.h"
#include "commitlab.h"
#include "drivers/driver.h"
#include "testutil.h"

START_TEST(test_defaults_accepted)
{
    for (int k = 0; k < K_COUNT; k++) {
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
    for (int k = 0; k < K_COUNT; k++) {
        const struct bench_knob_def *d = bench_knob((enum bench_knob)k);
        size_t want;
        switch (d->type) {
        case KT_WORD: case KT_POLICY: case KT_PATH: want = sizeof(const char *); break;
        case KT_RATIO: case KT_SECS: case KT_NUM: want = sizeof(double); break;
        case KT_INDEX: case KT_ONOFF: case KT_TRUE: case KT_FALSE: case KT_SET: want = sizeof(int); break;
        case KT_COUNT: case KT_SEED: want = sizeof(uint64_t); break;
        default: want = d->size == sizeof(uint64_t) ? sizeof(uint64_t) : sizeof(uint32_t); break;
        }
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
            for (int k = 0; k < K_COUNT; k++) {
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
            ck_assert_int_eq(json_object_size(j), K_COUNT + 3);
            ck_assert(json_is_integer(json_object_get(j, "key_size")));
            ck_assert(json_is_boolean(json_object_get(j, "sync_durable")));
            ck_assert(json_is_boolean(json_object_get(j, "sync_latency_emulated")));
            json_decref(j);
        }
}
END_TEST

/* What the commitlab driver opens a default run with is what the library
 * would open with: the table's defaults of its knobs are the library's. */
START_TEST(test_library_defaults)
{
    struct bench_config c;
    struct cl_options lib, got;
    char why[256];
    bench_config_defaults(&c);
    cl_options_init(&lib);
    ck_assert_int_eq(bench_commitlab_options(&c, &got, why, sizeof why), 0);
    ck_assert_int_eq(got.sync, lib.sync);
    ck_assert_int_eq(got.method, lib.method);
    ck_assert_int_eq(got.elr, lib.elr);
    ck_assert_int_eq(got.segments, lib.segments);
    ck_assert_int_eq(got.segment_init, lib.segment_init);
    ck_assert_uint_eq(got.recycle_max, lib.recycle_max);
    ck_assert_uint_eq(got.prealloc, lib.prealloc);
    ck_assert_int_eq(got.cold_recycle, lib.cold_recycle);
    ck_assert_uint_eq(got.checkpoint_bytes, lib.checkpoint_bytes);
    ck_assert_uint_eq(got.interval_ms, lib.interval_ms);
    ck_assert_uint_eq(got.commit_delay_us, lib.commit_delay_us);
    ck_assert_uint_eq(got.commit_siblings, lib.commit_siblings);
    ck_assert_uint_eq(got.uring_depth, lib.uring_depth);
    ck_assert_uint_eq(got.max_batch, lib.max_batch);
    ck_assert_uint_eq(got.flusher_spin_us, lib.flusher_spin_us);
    ck_assert_uint_eq(got.sync_latency_us, lib.sync_latency_us);
    /* the driver leaves these to the library unless given: the JSON line
     * still says them */
    ck_assert_uint_eq(c.segment_size, lib.segment_size);
    ck_assert_uint_eq(c.cache_bytes, lib.cache_size);
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
    tcase_add_test(tc, test_defaults_accepted);
    tcase_add_test(tc, test_field_widths);
    tcase_add_test(tc, test_defaults_are_what_bench_writes);
    tcase_add_test(tc, test_library_defaults);
    tcase_add_test(tc, test_ranks);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
