/*
 * ut_stats.c -- median and percentile of a sample (ut_stats.h), for the
 * --repeat summaries of bench and matrix, the report's points and the
 * probe's latency rows.
 */
#include <math.h>
#include <stdlib.h>

#include "ut_stats.h"

int ut_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ut_median(double *v, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[m++] = v[i];
    if (!m)
        return NAN;
    qsort(v, m, sizeof *v, ut_cmp_double);
    return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

double ut_percentile_sorted(const double *v, size_t n, double p)
{
    double x = p / 100.0 * (double)n; /* rank, rounded up */
    size_t k = (size_t)x;
    if ((double)k < x)
        k++;
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}
