/*
 * ut_stats.h -- the statistics the commands summarise samples with: one
 * comparison for qsort, one median, one nearest-rank percentile.
 * (Latencies recorded by the million go to the histogram, histogram.h.)
 */
#ifndef CL_UT_STATS_H
#define CL_UT_STATS_H

#include <stddef.h>

/* qsort's comparison of two doubles, ascending. */
int ut_cmp_double(const void *a, const void *b);

/* The median of v[0..n), NANs left out: the numbers are moved to the
 * front of v and sorted there; NAN when there is none. */
double ut_median(double *v, size_t n);

/* The p-th percentile (0 < p <= 100) of sorted v[0..n), n >= 1: the value
 * of rank ceil(p/100 * n), the nearest-rank definition. */
double ut_percentile_sorted(const double *v, size_t n, double p);

#endif
