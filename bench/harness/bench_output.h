/*
 * bench_output.h -- a run's configuration and result written out
 * (bench_output.c): the human table, CSV, and JSON lines, whose fields
 * docs/bench.md documents; and the short label progress lines use.
 */
#ifndef CL_BENCH_OUTPUT_H
#define CL_BENCH_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "bench_config.h"
#include "bench_result.h"

enum bench_format { FMT_TABLE = 0, FMT_CSV };

void bench_table_header(FILE *f);
/* "segments: N switches, ..." for commitlab runs ("" for other engines). */
void bench_segments_note(const struct bench_config *cfg, const struct bench_result *r, char *buf, size_t len);
/* 1 when a commitlab recycle run never wrote into a recycled segment. */
int bench_recycle_unexercised(const struct bench_config *cfg, const struct bench_result *r);

/* The batch-size distribution of a run (bench_result.batch_hist): the
 * syncs counted, and the smallest batch size with at least q of the syncs
 * at or below it (q = 1: the largest).  0 syncs when the engine does not
 * say. */
uint64_t bench_batch_syncs(const struct bench_result *r);
int64_t bench_batch_quantile(const struct bench_result *r, double q);
/* The store's file calls per commit (bench_result.file_*), each -1 when
 * unknown: over the engine's commits when it counts them, else the
 * transactions -- the denominator of syncs_per_commit, so the two compare;
 * commits_per_sync is -1 when there was no sync. */
struct bench_file_figures {
    double syncs_per_commit, commits_per_sync, writes_per_commit, bytes_per_commit;
};
void bench_file_figures(const struct bench_result *r, struct bench_file_figures *ff);
void bench_table_row(FILE *f, const struct bench_config *cfg, const struct bench_result *r);
void bench_csv_header(FILE *f);
void bench_csv_row(FILE *f, const struct bench_config *cfg, const struct bench_result *r);
/* Appends one JSON object (one line) to f; 0 or -1. */
int bench_json_append(FILE *f, const struct bench_config *cfg, const struct bench_result *r,
                      unsigned run_index, unsigned nruns);
/* The same, with one more member key = extra (a jansson json_t *, not
 * stolen) for callers that add context (matrix). */
struct json_t;
int bench_json_append_extra(FILE *f, const struct bench_config *cfg, const struct bench_result *r,
                            unsigned run_index, unsigned nruns, const char *key, struct json_t *extra);
/* Writes one JSON value as a line and flushes; 0 or -1. */
int bench_json_write(FILE *f, struct json_t *o);
/* The "env" object of a JSON line (docs/bench.md): the host, the
 * filesystem and device under the run's directory, the engine's and
 * commitlab's versions and the source commit. */
struct bench_env;
struct json_t *bench_env_json(const struct bench_env *e, const struct bench_config *cfg);

/* A run stopped by a signal (bench_schema.h, RUN_INTERRUPTED): whether
 * it has figures (it measured to its end, or had begun its measured
 * phase), and how far it got -- "after 2.1 s of 10 s", "after 1200 of
 * 5000 transactions (0.4 s)", "in its warm-up (...), before anything was
 * measured" -- as its row, its line's reason and the command's last line
 * say it.  bench_signal_name(SIGINT) is "SIGINT". */
int bench_measured(const struct bench_result *r);
void bench_stop_progress(const struct bench_config *cfg, const struct bench_result *r, char *buf, size_t len);
const char *bench_signal_name(int sig);

/* A short human label of a run ("lmdb --sync commit --clients 16"). */
void bench_label(const struct bench_config *cfg, char *buf, size_t len);

#endif
