/*
 * ut_progress.h -- the one progress line of the commands that run one
 * thing after another (bench's sweep, tour, matrix, crash): drawn on
 * stderr, over itself, only when stderr is a terminal and the command was
 * not asked to be quiet, so that stdout and captured output stay clean.
 *
 *   [run 3 of 12] commitlab --sync group --clients 16  elapsed 0:31  ETA 1:34
 *
 * The estimate of one item's time starts as the caller's guess and is,
 * after each item, the mean time of the items so far.
 */
#ifndef CL_UT_PROGRESS_H
#define CL_UT_PROGRESS_H

#include <stddef.h>

struct ut_progress {
    int on;                       /* drawn at all */
    size_t done, total;           /* items finished (the current one is done + 1), of total */
    double start, item_start;     /* ut_now() at the first item, and at the current one */
    double est;                   /* seconds one item takes, estimated */
};

/* Sets p up for total items of about est seconds each; on when stderr is
 * a terminal and quiet is 0. */
void ut_progress_init(struct ut_progress *p, int quiet, size_t total, double est);
/* The next item begins. */
void ut_progress_begin(struct ut_progress *p);
/* "[<what> i of n] <label>  elapsed m:ss  ETA m:ss" (what: "run", or
 * "ext4: run"); the label is cut at 60 characters. */
void ut_progress_show(const struct ut_progress *p, const char *what, const char *label);
/* Any other line in the same place. */
void ut_progress_printf(const struct ut_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The item ended: the line is cleared, done counts it, and the estimate
 * becomes the mean time of an item so far. */
void ut_progress_end(struct ut_progress *p);
/* Clears the line (before other output on stderr). */
void ut_progress_clear(const struct ut_progress *p);

#endif
