/*
 * histogram.c -- the log-linear latency histogram (see histogram.h for the
 * bucket layout and its error bound): the runner records every
 * transaction's latency into one per client and the per-second timeline
 * into shared ones.
 */
#include "histogram.h"

#include <math.h>
#include <string.h>

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof *h);
    h->min_ns = UINT64_MAX;
}

unsigned hist_bucket_of(uint64_t ns)
{
    if (ns > HIST_MAX_NS)
        ns = HIST_MAX_NS;
    if (ns < HIST_SUB)
        return (unsigned)ns;
    unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
    unsigned shift = msb - HIST_SUB_BITS;
    return HIST_SUB + shift * HIST_SUB + (unsigned)((ns >> shift) - HIST_SUB);
}

uint64_t hist_bucket_low(unsigned b)
{
    if (b < HIST_SUB)
        return b;
    unsigned shift = (b - HIST_SUB) / HIST_SUB;
    uint64_t sub = (b - HIST_SUB) % HIST_SUB;
    return (HIST_SUB + sub) << shift;
}

uint64_t hist_bucket_high(unsigned b)
{
    if (b < HIST_SUB)
        return b;
    unsigned shift = (b - HIST_SUB) / HIST_SUB;
    return hist_bucket_low(b) + (1ull << shift) - 1;
}

void hist_record(struct hist *h, uint64_t ns)
{
    h->buckets[hist_bucket_of(ns)]++;
    h->count++;
    h->sum_ns += ns;
    if (ns < h->min_ns)
        h->min_ns = ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

/* *p = v if v is beyond it (above it when up, else below), atomically. */
static void atomic_extend(uint64_t *p, uint64_t v, int up)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while ((up ? v > cur : v < cur) && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void hist_record_atomic(struct hist *h, uint64_t ns)
{
    __atomic_fetch_add(&h->buckets[hist_bucket_of(ns)], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&h->count, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&h->sum_ns, ns, __ATOMIC_RELAXED);
    atomic_extend(&h->max_ns, ns, 1);
    atomic_extend(&h->min_ns, ns, 0);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    if (src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}

double hist_percentile(const struct hist *h, double p)
{
    if (h->count == 0)
        return 0;
    if (p >= 100)
        return (double)h->max_ns;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count - 1e-9);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        seen += h->buckets[b];
        if (seen >= rank) {
            double lo = (double)hist_bucket_low(b), hi = (double)hist_bucket_high(b);
            double mid = b < HIST_SUB ? lo : (lo + hi) / 2;
            /* The exact extremes are known: never report outside them. */
            if (mid > (double)h->max_ns)
                mid = (double)h->max_ns;
            if (mid < (double)h->min_ns)
                mid = (double)h->min_ns;
            return mid;
        }
    }
    return (double)h->max_ns;
}

double hist_mean(const struct hist *h)
{
    return h->count ? (double)h->sum_ns / (double)h->count : 0;
}
