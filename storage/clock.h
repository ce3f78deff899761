/*
 * clock.h -- the library's one clock: CLOCK_MONOTONIC in nanoseconds, for
 * every duration it measures (sync times, waits, commit latencies) and
 * every deadline it computes.
 */
#ifndef CL_CLOCK_H
#define CL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t cl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* CL_CLOCK_H */
