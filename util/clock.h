/*
 * clock.h -- the library's one clock: CLOCK_MONOTONIC in nanoseconds, for
 * every duration it measures (sync times, waits, commit latencies) and
 * every deadline it computes.
 */
#ifndef CL_CLOCK_H
#define CL_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t cl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A time on this clock as the absolute timespec of a timed wait. */
static inline struct timespec cl_timespec(uint64_t ns)
{
    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
}

/* A condition variable whose timed waits take deadlines on this clock. */
static inline void cl_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

#endif /* CL_CLOCK_H */
