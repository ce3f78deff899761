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
