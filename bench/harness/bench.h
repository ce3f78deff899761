/*
 * bench.h -- the benchmark harness as the commands drive it (`commitlab
 * bench`, `tour`, `matrix` and `crash`): run one configuration, run a
 * sweep of them with its table and progress line, parse bench's command
 * line, and stop at a signal.
 *
 * Its parts, one contract each: bench_config.h (one run's configuration),
 * drivers/driver.h (what an engine driver implements), bench_workload.h
 * (the workloads), bench_result.h (what a run measured), bench_env.h (the
 * machine and filesystem it ran on), bench_output.h (table, CSV, JSON)
 * and sync_latency.h (the emulated slow device for the other engines).
 */
#ifndef CL_BENCH_H
#define CL_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_config.h"
#include "bench_output.h"
#include "bench_result.h"
#include "sync_latency.h"

/* ---- one run (bench_run.c) ------------------------------------------------- */

/* Runs one configuration: fresh directory, preload, warm-up, measure.
 * Never exits; n/a and errors are reported in r.  tick (may be NULL) is
 * called about five times a second while the run waits. */
void bench_run(const struct bench_config *cfg, struct bench_result *r, void (*tick)(void *), void *arg);

/* SIGINT/SIGTERM: bench_interrupt() (async-signal-safe) makes the current
 * run stop at once (reported as an error) and bench_sweep skip the rest. */
void bench_interrupt(void);
int bench_interrupted(void);

/* ---- sweeps (bench_sweep.c) ------------------------------------------------ */

struct bench_sweep_opts {
    FILE *jsonl;                  /* append JSON lines here, or NULL */
    unsigned repeat;              /* cfgs is this many rounds of the same list (1) */
    const size_t *config_index;   /* with repeat: cfgs[i] is configuration config_index[i] of a round */
    enum bench_format format;
    int quiet;                    /* no progress line */
};

/* Runs cfgs[0..n) in order, printing the table (or CSV) as each finishes
 * and the progress line on stderr when it is a terminal.  results (may be
 * NULL) receives each result; the caller frees them with
 * bench_result_free.  Returns the number of runs that failed (not n/a). */
unsigned bench_sweep(const struct bench_config *cfgs, size_t n, const struct bench_sweep_opts *o,
                     struct bench_result *results);
/* --repeat: cfgs[0..n) repeat times through bench_sweep, round by round,
 * each round in its own order shuffled from seed; then the summary
 * (bench_repeat_summary) unless interrupted.  *failed gets bench_sweep's
 * count.  0, or -ENOMEM before anything ran. */
int bench_sweep_rounds(const struct bench_config *cfgs, size_t n, unsigned repeat, uint64_t seed,
                       struct bench_sweep_opts *o, unsigned *failed);

/* The summary of --repeat (bench_repeat.c): cfgs[0..n) ran repeat times,
 * round by round, each round in its own shuffled order (so neither drift
 * over time nor a configuration's place in the round favours one of
 * them), the results in res[round * n + i].  Prints each configuration's
 * median with its range, then, for each engine, workload and client count
 * that ran more than one configuration, the best one and its margin over
 * the next best against the spread; appends one summary JSON line per
 * configuration to jsonl (may be NULL). */
void bench_repeat_summary(FILE *f, FILE *jsonl, const struct bench_config *cfgs, size_t n, unsigned repeat,
                          const struct bench_result *res);

/* ---- the command line (bench_config.c) ------------------------------------- */

/* The command line of bench (and of matrix, which takes bench's options):
 * bench_cli_parse exits 2 with a one-line message on a bad argument. */
struct knob_values {
    char **v;
    size_t n;
};
struct bench_cli {
    struct bench_config base;
    struct bench_config *cfgs;    /* the cross product of the comma lists */
    size_t n;
    struct bench_sweep_opts so;
    const char *out_path;
    int list_engines, help, dir_given;
    unsigned repeat;              /* --repeat: runs of each configuration (1) */
    struct knob_values vals[K_COUNT]; /* own the strings cfgs point to */
};
void bench_cli_parse(const char *cmd, int argc, char **argv, struct bench_cli *c);
void bench_cli_free(struct bench_cli *c);
/* bench's --help, from the table of knobs: every knob's line by section,
 * with its accepted values and its default, then the command's options. */
void bench_cli_usage(FILE *f);

#endif
