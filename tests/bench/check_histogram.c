/*
 * check_histogram.c -- the benchmark's latency histogram: every bucket is
 * at most 1/128 of its value wide, and percentiles of known samples match
 * the exact nearest-rank percentiles within 1%, from 1 us to 60 s.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "histogram.h"
#include "testutil.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of a sorted sample. */
static double exact(const uint64_t *sorted, size_t n, double p)
{
    size_t rank = (size_t)ceil(p / 100.0 * (double)n - 1e-9);
    if (rank < 1)
        rank = 1;
    return (double)sorted[rank - 1];
}

static const double percentiles[] = {1, 10, 50, 90, 99, 99.9, 99.99, 100};

static void check_sample(uint64_t *v, size_t n, const char *what, uint64_t seed)
{
    struct hist *h = malloc(sizeof *h);
    ck_assert_ptr_nonnull(h);
    hist_init(h);
    for (size_t i = 0; i < n; i++)
        hist_record(h, v[i]);
    qsort(v, n, sizeof *v, cmp_u64);
    ck_assert_uint_eq(h->count, n);
    for (size_t i = 0; i < sizeof percentiles / sizeof *percentiles; i++) {
        double want = exact(v, n, percentiles[i]), got = hist_percentile(h, percentiles[i]);
        double err = fabs(got - want) / want;
        ck_assert_msg(err <= 0.01, "%s (seed %llu): p%g = %.0f ns, exact %.0f ns, error %.3f%%", what,
                      (unsigned long long)seed, percentiles[i], got, want, err * 100);
    }
    free(h);
}

START_TEST(test_bucket_width)
{
    /* from 1 us to 60 s every bucket's width is at most 1/128 of its low end */
    for (unsigned b = hist_bucket_of(1000); b <= hist_bucket_of(60000000000ull); b++) {
        uint64_t lo = hist_bucket_low(b), hi = hist_bucket_high(b);
        ck_assert_uint_le(lo, hi);
        ck_assert_msg((double)(hi - lo + 1) / (double)lo <= 1.0 / 128 + 1e-12, "bucket %u [%llu, %llu]", b,
                      (unsigned long long)lo, (unsigned long long)hi);
        ck_assert_uint_eq(hist_bucket_of(lo), b);
        ck_assert_uint_eq(hist_bucket_of(hi), b);
        ck_assert_uint_eq(hist_bucket_low(b + 1), hi + 1);
    }
    ck_assert_uint_eq(hist_bucket_of(UINT64_MAX), HIST_BUCKETS - 1);
}
END_TEST

START_TEST(test_log_uniform_sample)
{
    /* log-uniform over 1 us .. 60 s: every decade of the range is hit */
    uint64_t seed = tu_seed(42);
    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof *v), s = seed;
    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < n; i++) {
        double u = (double)(tu_rand(&s) >> 11) / 9007199254740992.0;
        v[i] = (uint64_t)(1000.0 * pow(60e6, u));
    }
    check_sample(v, n, "log-uniform 1us..60s", seed);
    free(v);
}
END_TEST

START_TEST(test_commit_like_sample)
{
    /* a realistic commit-latency shape: a tight mode with a long tail */
    uint64_t seed = tu_seed(7);
    size_t n = 100000;
    uint64_t *v = malloc(n * sizeof *v), s = seed;
    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_rand(&s);
        v[i] = 80000 + tu_range(&s, 40000);                /* 80..120 us */
        if (r % 100 == 0)
            v[i] = 1000000 + tu_range(&s, 50000000);       /* 1% at 1..51 ms */
        if (r % 10000 == 1)
            v[i] = 2000000000ull + tu_range(&s, 5000000000ull); /* rare seconds */
    }
    check_sample(v, n, "commit-like", seed);
    free(v);
}
END_TEST

START_TEST(test_small_and_constant)
{
    uint64_t one[] = {12345};
    check_sample(one, 1, "one value", 0);
    uint64_t same[1000];
    for (size_t i = 0; i < 1000; i++)
        same[i] = 59999999999ull; /* just under 60 s */
    check_sample(same, 1000, "constant 60 s", 0);
    uint64_t few[] = {1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000};
    check_sample(few, 10, "ten values", 0);
}
END_TEST

START_TEST(test_merge_and_atomic)
{
    struct hist *a = malloc(sizeof *a), *b = malloc(sizeof *b), *c = malloc(sizeof *c);
    ck_assert(a && b && c);
    hist_init(a);
    hist_init(b);
    hist_init(c);
    for (uint64_t i = 1; i <= 5000; i++) {
        hist_record(i % 2 ? a : b, i * 1000);
        hist_record_atomic(c, i * 1000);
    }
    hist_merge(a, b);
    ck_assert_uint_eq(a->count, 5000);
    ck_assert_uint_eq(a->min_ns, 1000);
    ck_assert_uint_eq(a->max_ns, 5000000);
    ck_assert_uint_eq(a->count, c->count);
    ck_assert_uint_eq(a->sum_ns, c->sum_ns);
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        ck_assert_uint_eq(a->buckets[i], c->buckets[i]);
    ck_assert(fabs(hist_percentile(a, 50) - 2500000) / 2500000 <= 0.01);
    ck_assert(hist_percentile(a, 100) == 5000000);
    hist_init(b);
    ck_assert(hist_percentile(b, 99) == 0);
    free(a);
    free(b);
    free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench/histogram");
    TCase *tc = tcase_create("histogram");
    tcase_add_test(tc, test_bucket_width);
    tcase_add_test(tc, test_log_uniform_sample);
    tcase_add_test(tc, test_commit_like_sample);
    tcase_add_test(tc, test_small_and_constant);
    tcase_add_test(tc, test_merge_and_atomic);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
