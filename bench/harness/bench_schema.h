/*
 * bench_schema.h -- what a commitlab-bench/1 JSON line says, beyond its
 * config object (docs/bench.md documents every field): the phases of
 * metrics.commit_phases_us, and the order in which a reader compares
 * engines and sync policies.  The config object's members, their flags
 * and the values they hold when not given are the table of knobs
 * (bench_knobs.h), which the report reads old lines by: a line means what
 * its schema says, not what the binary reading it would do.
 */
#ifndef CL_BENCH_SCHEMA_H
#define CL_BENCH_SCHEMA_H

#include <stddef.h>

#define BENCH_SCHEMA "commitlab-bench/1"

/* A line's "status": the run measured to its end (ok), cannot run here
 * (n/a), failed (error), or was stopped by a signal (interrupted).  An
 * interrupted line's metrics are what the run measured until the signal,
 * over the time it measured, when its measured phase had begun (else
 * null, as a failed line's), and its member "interrupted" says which
 * signal and in which phase.  "interrupted" came to commitlab-bench/1
 * later, without a new version: a reader that knows only the first three
 * takes it for a run that did not measure, which misleads nobody; one
 * that knows it never counts it among the runs that measured to the end.
 * The names are bench_status_names, in this order. */
enum bench_status { RUN_OK = 0, RUN_NA, RUN_ERROR, RUN_INTERRUPTED, BENCH_STATUSES };
extern const char *const bench_status_names[BENCH_STATUSES];

/* Where a signal stopped a run (member interrupted.during): before its
 * warm-up (opening, preloading), in the warm-up, or in the measured
 * phase -- the only one with figures. */
enum bench_stop { BENCH_STOP_SETUP = 0, BENCH_STOP_WARMUP, BENCH_STOP_MEASURE, BENCH_STOPS };
extern const char *const bench_stop_names[BENCH_STOPS];

/* The status of a name, or -1. */
int bench_status_parse(const char *name);

/* Plausible values of a line: config.clients is 1..BENCH_SCHEMA_MAX_CLIENTS
 * (what `commitlab bench --clients` accepts); metrics.tps at most
 * BENCH_SCHEMA_MAX_TPS; every figure of metrics finite, not negative and
 * at most BENCH_SCHEMA_MAX_FIGURE.  A reader skips a line outside them. */
#define BENCH_SCHEMA_MAX_CLIENTS 1024
#define BENCH_SCHEMA_MAX_TPS 1e9
#define BENCH_SCHEMA_MAX_FIGURE 1e15

/* The phases of a commit an engine can time (commitlab's cl_commit_times),
 * in commit order: waiting for the writer lock, appending, applying,
 * queueing for the I/O, its write, its sync, the wake-up.  The names are
 * the members of metrics.commit_phases_us. */
enum { BENCH_PH_LOCK, BENCH_PH_APPEND, BENCH_PH_APPLY, BENCH_PH_QUEUE, BENCH_PH_WRITE, BENCH_PH_SYNC,
       BENCH_PH_WAKEUP, BENCH_PHASES };
extern const char *const bench_phase_names[BENCH_PHASES];

/* The place of an engine among the drivers (commitlab, lmdb, rocksdb,
 * sqlite, raw), and of a sync policy among the library's (none to
 * flusher); an unknown name comes after every known one. */
int bench_schema_engine_rank(const char *engine);
int bench_schema_sync_rank(const char *sync);

#endif
