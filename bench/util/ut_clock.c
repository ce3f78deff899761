/*
 * ut_clock.c -- the clock of the harness, the drivers and every command
 * (ut_clock.h): the library's own reading (cl_now_ns), so a duration the
 * command measures and one the library reports (cl_commit_timed, the
 * statistics) are on one clock.  Wall-clock time stamps (a result's UTC
 * time) are not this clock's business.
 */
#include "ut_clock.h"

#include "clock.h" /* util/, the whole project's: header-only */

uint64_t ut_now_ns(void) { return cl_now_ns(); }

void ut_sleep_until_ns(uint64_t t)
{
    struct timespec ts = cl_timespec(t);
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

void ut_cond_init(pthread_cond_t *cv) { cl_cond_init(cv); }

struct timespec ut_deadline(double s)
{
    return cl_timespec(cl_now_ns() + (s > 0 ? (uint64_t)(s * 1e9) : 0));
}
