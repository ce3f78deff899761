/*
 * histogram.h -- a log-linear latency histogram for the benchmark.
 *
 * Values are nanoseconds.  Below 128 ns every value has its own bucket;
 * above, each power of two [2^m, 2^(m+1)) is split into 128 equal buckets,
 * so a bucket is at most 1/128 of its lower bound wide.  A percentile is
 * reported as the bucket's midpoint, which is within 0.4% of any value in
 * the bucket (the contract is 1%, from 1 us to 60 s).  Values above
 * HIST_MAX_NS (about 68.7 s) are clamped into the last bucket, but the
 * exact maximum is kept separately.
 *
 * Counts are plain integers for a histogram owned by one thread, and
 * hist_record_atomic() updates a shared one (the per-second timeline).
 */
#ifndef CL_BENCH_HISTOGRAM_H
#define CL_BENCH_HISTOGRAM_H

#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)              /* buckets per power of two */
#define HIST_MAX_BIT 36                             /* 2^36 ns = 68.7 s */
#define HIST_BUCKETS (HIST_SUB + (HIST_MAX_BIT - HIST_SUB_BITS + 1) * HIST_SUB)
#define HIST_MAX_NS ((1ull << (HIST_MAX_BIT + 1)) - 1)

struct hist {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t min_ns, max_ns;
    uint64_t buckets[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_record(struct hist *h, uint64_t ns);
/* Thread-safe recording into a histogram shared by several threads. */
void hist_record_atomic(struct hist *h, uint64_t ns);
/* dst += src. */
void hist_merge(struct hist *dst, const struct hist *src);
/* The p-th percentile (0 < p <= 100) in nanoseconds: the value of rank
 * ceil(p/100 * count) (the nearest-rank definition), within 0.4%.  p = 100
 * returns the exact maximum.  0 when the histogram is empty. */
double hist_percentile(const struct hist *h, double p);
double hist_mean(const struct hist *h);

/* Bucket arithmetic, exposed for the tests. */
unsigned hist_bucket_of(uint64_t ns);
uint64_t hist_bucket_low(unsigned b);
uint64_t hist_bucket_high(unsigned b); /* inclusive */

#endif
