/*
 * bench_schema.h -- what a commitlab-bench/1 JSON line says, as code
 * (docs/bench.md documents every field): the members of its "config"
 * object that a flag of `commitlab bench` sets, each with its flag, the
 * name labels use, how a command line writes its value, and the value the
 * member has when the flag was not given; the phases of
 * metrics.commit_phases_us; and the order in which a reader compares
 * engines and sync policies.
 *
 * The writer of the lines (bench_output.c) and their reader (the report)
 * both take it from here, so a reader of old lines goes by what the
 * schema says, not by the defaults of the binary that reads them.
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

/* How a member's value is written on a command line. */
enum bench_schema_kind {
    BS_NUM,                       /* a number as it is */
    BS_SIZE,                      /* bytes, with k/M/G when whole */
    BS_STR,                       /* a string as it is */
    BS_IF_TRUE,                   /* a flag without a value, given when true (--reuse) */
    BS_IF_FALSE,                  /* a flag without a value, given when false (--no-preload) */
    BS_ONOFF,                     /* a boolean as on/off */
    BS_LIST,                      /* an array of strings as a comma list */
};

struct bench_schema_knob {
    const char *key;              /* the member of "config": "segment_size" */
    const char *flag;             /* the flag that sets it: "--segment-size" */
    const char *name;             /* as labels show it: "segment-size" */
    enum bench_schema_kind kind;
    const char *dflt;             /* the member when the flag is not given, as JSON text */
};

/* Every member a flag sets but --engine, --workload, --sync and
 * --clients, which name a series rather than a knob of it. */
extern const struct bench_schema_knob bench_schema_knobs[];
extern const size_t bench_schema_nknobs;
/* The knob of a config member, or NULL. */
const struct bench_schema_knob *bench_schema_knob(const char *key);

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
