/*
 * ut_clock.h -- the one clock every command times with: CLOCK_MONOTONIC,
 * in nanoseconds and in seconds.
 */
#ifndef CL_UT_CLOCK_H
#define CL_UT_CLOCK_H

#include <stdint.h>

uint64_t ut_now_ns(void);

/* The same clock in seconds. */
static inline double ut_now(void)
{
    return (double)ut_now_ns() / 1e9;
}

#endif
