/*
 * check_util.c -- bench/util, linked alone: the size parser takes what the
 * flags document and refuses, rather than wraps, a size beyond 64 bits;
 * the median leaves NANs out; the nearest-rank percentile; a directory
 * tree is removed whole.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "ut_args.h"
#include "ut_file.h"
#include "ut_stats.h"

START_TEST(test_size_accepted)
{
    static const struct {
        const char *s;
        uint64_t v;
    } ok[] = {
        {"0", 0},
        {"4096", 4096},
        {"64k", 64ull << 10},
        {"64K", 64ull << 10},
        {"16M", 16ull << 20},
        {"16m", 16ull << 20},
        {"1G", 1ull << 30},
        {"17179869183G", 17179869183ull << 30},      /* the largest whole number of GiB */
        {"18446744073709551615", UINT64_MAX},        /* the largest number of bytes */
        {"17592186044415M", 17592186044415ull << 20},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        uint64_t v = 1;
        int rc = ut_parse_size(ok[i].s, &v);
        ck_assert_msg(rc == 0, "%s: %d", ok[i].s, rc);
        ck_assert_msg(v == ok[i].v, "%s: %llu, want %llu", ok[i].s, (unsigned long long)v,
                      (unsigned long long)ok[i].v);
    }
}
END_TEST

START_TEST(test_size_refused)
{
    static const struct {
        const char *s;
        int rc;
    } bad[] = {
        {"17179869185G", -ERANGE},          /* 2^64 + 1 GiB: wrapped to 1 GiB before */
        {"17179869184G", -ERANGE},          /* exactly 2^64 bytes: wrapped to 0 before */
        {"17592186044416M", -ERANGE},
        {"18014398509481984k", -ERANGE},
        {"18446744073709551616", -ERANGE},  /* one byte more than 64 bits hold */
        {"99999999999999999999999G", -ERANGE},
        {"", -EINVAL},
        {"G", -EINVAL},
        {"-1", -EINVAL},                    /* strtoull would wrap it */
        {" 16M", -EINVAL},
        {"+16M", -EINVAL},
        {"16MB", -EINVAL},
        {"12q", -EINVAL},
        {"1.5G", -EINVAL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v = 12345;
        int rc = ut_parse_size(bad[i].s, &v);
        ck_assert_msg(rc == bad[i].rc, "'%s': %d, want %d", bad[i].s, rc, bad[i].rc);
        ck_assert_msg(v == 12345, "'%s': the output was written on failure", bad[i].s);
    }
}
END_TEST

START_TEST(test_median)
{
    double odd[] = {5, 1, 3};
    ck_assert(ut_median(odd, 3) == 3);
    double even[] = {4, 1, 3, 2};
    ck_assert(ut_median(even, 4) == 2.5);
    double with_nan[] = {NAN, 10, NAN, 2, 6};
    ck_assert(ut_median(with_nan, 5) == 6);
    ck_assert(with_nan[0] == 2 && with_nan[1] == 6 && with_nan[2] == 10); /* the numbers, sorted, in front */
    double none[] = {NAN, NAN};
    ck_assert(isnan(ut_median(none, 2)));
    ck_assert(isnan(ut_median(none, 0)));
}
END_TEST

START_TEST(test_percentile)
{
    double v[100];
    for (int i = 0; i < 100; i++)
        v[i] = i + 1;
    ck_assert(ut_percentile_sorted(v, 100, 50) == 50);
    ck_assert(ut_percentile_sorted(v, 100, 99) == 99);
    ck_assert(ut_percentile_sorted(v, 100, 99.5) == 100);
    ck_assert(ut_percentile_sorted(v, 100, 100) == 100);
    ck_assert(ut_percentile_sorted(v, 100, 0.001) == 1);
    ck_assert(ut_percentile_sorted(v, 1, 99) == 1);
}
END_TEST

START_TEST(test_rm_tree)
{
    char *dir = tu_mkdtemp("bench-util");
    char p[4096];
    snprintf(p, sizeof p, "%s/a", dir);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/a/b", dir);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/a/b/f", dir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("x", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/a/g", dir);
    char src[4096];
    snprintf(src, sizeof src, "%s/a/b/f", dir);
    ck_assert_int_eq(ut_copy_file(src, p), 0);
    ck_assert_int_eq(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/a", dir);
    ck_assert_int_eq(ut_rm_tree(p), 0);
    ck_assert_int_eq(access(p, F_OK), -1);
    ck_assert_int_eq(ut_rm_tree(p), 0); /* already gone: nothing failed */
    ck_assert_int_eq(ut_copy_file(src, p), -ENOENT);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench/util");
    TCase *tc = tcase_create("util");
    tcase_add_test(tc, test_size_accepted);
    tcase_add_test(tc, test_size_refused);
    tcase_add_test(tc, test_median);
    tcase_add_test(tc, test_percentile);
    tcase_add_test(tc, test_rm_tree);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
