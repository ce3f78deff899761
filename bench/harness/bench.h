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
#include "ut_progress.h"

/* ---- one run (bench_run.c) ------------------------------------------------- */

/* Runs one configuration: fresh directory, preload, warm-up, measure.
 * Never exits; n/a and errors are reported in r.  tick (may be NULL) is
 * called about five times a second while the run waits. */
void bench_run(const struct bench_config *cfg, struct bench_result *r, void (*tick)(void *), void *arg);

/* bench_interrupt() (async-signal-safe; the signal handler of
 * bench_stop_on_signals calls it) makes the current run stop at once --
 * reported as RUN_INTERRUPTED, with what it measured until then when its
 * measured phase had begun -- and the sweep runner skip the rest. */
void bench_interrupt(void);
int bench_interrupted(void);

/* ---- the sweep runner (bench_sweep.c) --------------------------------------- */

/* One sweep, the runner of bench, tour, matrix and crash: n items a
 * round, rounds of them, each round in its own order shuffled from seed
 * when shuffle is set (bench and matrix --repeat); the progress line; and
 * the stop at a signal.  The caller fills what runs and the progress
 * line's words; bench_sweep_run fills the rest as it goes. */
struct bench_sweep {
    size_t n;                     /* items in a round */
    unsigned rounds;              /* 0 or 1: one round */
    int shuffle;
    uint64_t seed;
    /* Runs item i in the given round: 0 when it ran (or had nothing to
     * do), < 0 to stop the sweep. */
    int (*run)(struct bench_sweep *s, size_t i, unsigned round);
    void *ctx;                    /* the caller's */

    /* the progress line */
    struct ut_progress *progress; /* one shared by several sweeps (matrix: all its filesystems), or NULL */
    const char *what;             /* "run": "[run 3 of 12] ..."; "ext4: run" */
    /* The label of item i; NULL when run draws its own line (crash). */
    void (*label)(struct bench_sweep *s, size_t i, char *buf, size_t len);
    int quiet;                    /* no progress line (own progress only) */
    double est;                   /* seconds one item takes, a first guess (own progress only) */

    /* Stopping.  Once bench_stop_on_signals() has installed the handler,
     * SIGINT, SIGTERM and SIGHUP stop the current run at once (it is
     * reported as interrupted, with what it measured), the sweep skips
     * the rest, and on_stop is
     * called with the signal -- after the loop, in the caller's thread,
     * not in the handler: the place for what a command must undo before
     * it exits.  NULL: nothing to undo -- the commands today undo their
     * work once bench_sweep_run returns -EINTR (matrix unmounts and
     * detaches, bench and crash remove the run directories they made). */
    void (*on_stop)(struct bench_sweep *s, int sig);

    /* while it runs */
    size_t item;                  /* the item running */
    size_t pos, total;            /* its place in the sweep, from 0, of n * rounds: a JSON line's run - 1 */
    unsigned round;
    struct ut_progress own;       /* when progress is NULL */
};

/* Runs the sweep.  0; -EINTR when a signal stopped it (after on_stop);
 * run's negative return; or -ENOMEM before anything ran. */
int bench_sweep_run(struct bench_sweep *s);
/* Redraws the progress line for the item running: a bench_run tick, whose
 * argument is the sweep. */
void bench_sweep_tick(void *sweep);
/* Installs the one handler for SIGINT, SIGTERM and SIGHUP: it records the
 * signal and calls bench_interrupt().  bench_stop_signal() is that signal,
 * or 0. */
void bench_stop_on_signals(void);
int bench_stop_signal(void);
/* The command's last line when a signal stopped it, one line on stderr:
 * "commitlab CMD: interrupted by SIGINT " and what bench_stop_note said
 * it was doing and how far it got ("during run 3 of 8 (commitlab --sync
 * group --clients 16) after 2.1 s of 10 s"), then "; " and tail (NULL:
 * none).  The note is printf-like and kept once: the item in progress
 * sets it as it stops; the runner, after the loop, says how many items
 * were done when no item did.  Both run in the main flow, never in the
 * handler. */
void bench_stop_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bench_stop_report(const char *cmd, const char *tail);

/* The cross product of lists of counts[0..n) values: combination idx as
 * one pick per list, the last list varying fastest (an odometer). */
void bench_cross_pick(const size_t *counts, size_t n, size_t idx, size_t *pick);

/* ---- bench's sweep (bench_sweep.c) -------------------------------------------- */

struct bench_sweep_opts {
    FILE *jsonl;                  /* append JSON lines here, or NULL */
    unsigned repeat;              /* rounds of the list (0 or 1: one) */
    enum bench_format format;
    int quiet;                    /* no progress line */
};

/* Runs cfgs[0..n) through the runner: the table (or CSV) header, a row as
 * each finishes, its JSON line; with repeat > 1 the rounds each in its own
 * order shuffled from the runs' --seed, the JSON lines saying which round
 * and configuration, then the summary (bench_repeat_summary) unless
 * interrupted.  Returns the number of runs that failed (not n/a), or
 * -ENOMEM before any ran. */
int bench_sweep(const struct bench_config *cfgs, size_t n, const struct bench_sweep_opts *o);

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

/* ---- the command line (knobs/bench_config.c) ------------------------------- */

/* The command line of bench (and of matrix, which takes bench's options):
 * bench_cli_parse exits 2 with a one-line message on a bad argument --
 * among them a flag given twice, and a list that names one value twice
 * (--clients 1,1; --segment-size 1k,1024).  It loads nothing: the
 * command then loads --engine plugin:... (bench_cli_load_plugins,
 * drivers/driver.h), which refuses two paths of one plugin.
 * argv[1..ndefault] are options put before the user's (matrix's
 * --preset), which the user's may give again. */
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
    const char *plugin_dir;       /* --plugin-dir: where --engine plugin:NAME looks */
    int list_engines, help, dir_given;
    unsigned repeat;              /* --repeat: runs of each configuration (1) */
    struct knob_values vals[K_COUNT]; /* own the strings cfgs point to */
    /* the value each flag was given by the user (not by a preset), so
     * that a second use is refused (ut_once) */
    const char *given_as[K_COUNT];
    char *joined[K_COUNT]; /* a repeated flag's values joined by ';' (given_as, base) */
    const char *repeat_as, *out_as, *format_as, *plugin_dir_as;
    int ndefault;                 /* argv[1..ndefault]: a preset's options */
};
void bench_cli_parse(const char *cmd, int argc, char **argv, int ndefault, struct bench_cli *c);
/* One warning line on f for each knob given in cfgs[0..n-1] that only one
 * sync policy reads (the library's cl_option_info policy) but that runs
 * with another policy were given ("--commit-delay is read by --sync group
 * only; the runs with --sync commit ignore it"). */
void bench_warn_unread(const char *cmd, const struct bench_config *cfgs, size_t n, FILE *f);
void bench_cli_free(struct bench_cli *c);

/* The same parser for a command that takes some of bench's knobs among
 * options of its own (crash), so that a knob reads, checks and refuses
 * its values the same way, with the same one-line error, in every
 * command.  bench_cli_init fills c's base with the defaults and no list.
 * bench_cli_parse_knob: when argv[*i] is the flag of a knob of take[0..n)
 * (also as --flag=value), parses it as bench does -- a comma list into
 * c->vals[k], each item checked; one value checked and set on c->base,
 * marked given -- advances *i past its value and returns the knob; exits
 * 2 with bench's one-line message on a bad value (a flag given twice,
 * a list naming one value twice, as bench refuses them).  A knob taken with
 * .one takes one value though bench takes a list (its message then says
 * "one of" the words, without the lists); an integer knob taken with .max
 * accepts at most that (a command's narrower limit, named in the same
 * message).  K_COUNT when argv[*i] is none of them. */
struct bench_knob_take {
    enum bench_knob knob;
    int one;
    uint64_t max;                 /* KT_UINT: at most this; 0: the knob's own range */
};
void bench_cli_init(struct bench_cli *c);
enum bench_knob bench_cli_parse_knob(const char *cmd, int argc, char **argv, int *i,
                                     const struct bench_knob_take *take, size_t n, struct bench_cli *c);
/* bench's --help, from the table of knobs: every knob's line by section,
 * with its accepted values and its default, then the command's options. */
void bench_cli_usage(FILE *f);

#endif
