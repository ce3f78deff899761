/*
 * ut_clock.h -- the one clock every command times with: the library's
 * (util/clock.h, CLOCK_MONOTONIC), in nanoseconds and in seconds,
 * and the waits and sleeps that take deadlines on it.
 */
#ifndef CL_UT_CLOCK_H
#define CL_UT_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

uint64_t ut_now_ns(void);

/* The same clock in seconds. */
static inline double ut_now(void)
{
    return (double)ut_now_ns() / 1e9;
}

/* Sleeps until ut_now_ns() reaches t (at once when it has). */
void ut_sleep_until_ns(uint64_t t);

/* A condition variable whose timed waits take deadlines on this clock,
 * and the deadline s seconds from now for pthread_cond_timedwait on it. */
void ut_cond_init(pthread_cond_t *cv);
struct timespec ut_deadline(double s);

#endif
