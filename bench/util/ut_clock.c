/*
 * ut_clock.c -- CLOCK_MONOTONIC for the harness, the drivers and every
 * command (ut_clock.h).  Wall-clock time stamps (a result's UTC time) are
 * not this clock's business.
 */
#include <time.h>

#include "ut_clock.h"

uint64_t ut_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
