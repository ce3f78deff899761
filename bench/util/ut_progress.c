/*
 * ut_progress.c -- the progress line (ut_progress.h), for the sweeps of
 * bench and matrix, the tour's runs and crash's combinations.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "ut_clock.h"
#include "ut_progress.h"

void ut_progress_init(struct ut_progress *p, int quiet, size_t total, double est)
{
    p->on = !quiet && isatty(STDERR_FILENO);
    p->done = 0;
    p->total = total;
    p->start = p->item_start = ut_now();
    p->est = est;
}

void ut_progress_begin(struct ut_progress *p)
{
    p->item_start = ut_now();
}

static void fmt_time(char *buf, size_t len, double s)
{
    if (s < 0)
        s = 0;
    unsigned t = (unsigned)(s + 0.5);
    snprintf(buf, len, "%u:%02u", t / 60, t % 60);
}

void ut_progress_show(const struct ut_progress *p, const char *what, const char *label)
{
    if (!p->on)
        return;
    double now = ut_now();
    double left_this = p->est - (now - p->item_start);
    if (left_this < 0)
        left_this = 0;
    size_t after = p->total > p->done + 1 ? p->total - p->done - 1 : 0;
    char e1[16], e2[16];
    fmt_time(e1, sizeof e1, now - p->start);
    fmt_time(e2, sizeof e2, left_this + p->est * (double)after);
    fprintf(stderr, "\r\033[K[%s %zu of %zu] %.60s  elapsed %s  ETA %s", what, p->done + 1, p->total, label, e1, e2);
    fflush(stderr);
}

void ut_progress_printf(const struct ut_progress *p, const char *fmt, ...)
{
    va_list ap;
    if (!p->on)
        return;
    fputs("\r\033[K", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

void ut_progress_end(struct ut_progress *p)
{
    ut_progress_clear(p);
    p->done++;
    p->est = (ut_now() - p->start) / (double)p->done;
}

void ut_progress_clear(const struct ut_progress *p)
{
    if (p->on)
        fputs("\r\033[K", stderr);
}
