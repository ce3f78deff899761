/*
 * report.h -- `commitlab report`: the JSON lines of bench, tour, matrix and
 * crash made into one self-contained HTML page (inline SVG charts, no
 * script, nothing fetched) or into markdown with one SVG file per chart.
 *
 * The parts: report_load.c reads the lines and builds the model below
 * (runs grouped into series, repeats into points, crash rows into
 * combinations); report_svg.c draws the charts; report_out.c writes the
 * tables and the sections of both formats; report.c is the command line
 * and the document around them.  report_write() is also what `commitlab
 * tour` calls at its end.
 */
#ifndef CL_BENCH_REPORT_H
#define CL_BENCH_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "bench_schema.h"

enum report_format { REPORT_HTML = 0, REPORT_MD };

struct report_opts {
    const char *const *inputs;    /* JSON lines files */
    size_t ninputs;
    const char *out;              /* NULL: report.html or report.md */
    enum report_format format;
    const char *title;            /* NULL: "commitlab report" */
    int quiet;                    /* no "wrote ..." line on stdout */
};

/* Reads the inputs and writes the report.  Returns 0; 1 when no line was
 * usable or the output could not be written; 2 when an input cannot be
 * opened.  Every problem is one line on stderr; skipped lines are named
 * FILE:LINE there and listed in the report. */
int report_write(const struct report_opts *o);

/* `commitlab report FILE.jsonl... [-o FILE] [--format html|md] [--title T]`:
 * exits 2 naming a bad argument, else report_write's status. */
int cmd_report(int argc, char **argv);

/* ---- the model (report_load.c) --------------------------------------------- */

/* A line that is not in the report, or a run that did not measure. */
struct rp_note {
    char *where;                  /* "FILE:LINE" */
    char *why;
};

/* One commitlab-bench/1 line with status interrupted: a run a signal
 * stopped, with what it measured until then (metrics null when it had
 * not begun to measure).  Kept apart from the runs that measured to
 * their end: never in a series, a point, a median or a chart. */
struct rp_stopped {
    char *where;                  /* "FILE:LINE" */
    json_t *line;                 /* owned reference */
};

/* One commitlab-bench/1 line with status ok. */
struct rp_run {
    json_t *line;                 /* owned reference */
    json_t *config, *metrics, *env; /* borrowed from line */
    size_t series;
    int clients;
    double tps;
};

/* The runs of one series at one client count: the repeats. */
/* The latency percentiles a run reports, for the percentile curve. */
#define RP_NPCT 5

/* The longest input line read (1 MiB); a longer one is named and skipped. */
#define RP_MAX_LINE (1 << 20)
#define RP_STR_(x) #x
#define RP_STR(x) RP_STR_(x)
extern const char *const rp_pct_keys[RP_NPCT]; /* "p50" ... "max" in metrics.latency_us */

struct rp_point {
    int clients;
    size_t *runs, nruns;          /* indexes into report.runs */
    double tps_med, tps_min, tps_max;
    double lat[4];                /* medians of p50, p99, p99.9, max, µs */
    double pct[RP_NPCT];          /* medians of p50, p90, p99, p99.9, max, µs (rp_pct_keys) */
    size_t rep;                   /* the run nearest the median tps */
};

/* A host and filesystem the runs were on. */
struct rp_env {
    char *key;
    json_t *env;                  /* borrowed from its first run */
    json_t *matrix;               /* that run's "matrix" object, or NULL */
    char *fs;                     /* matrix.fs, else env.fs_type */
    char *label;                  /* as short as still tells the envs apart */
};

/* A configuration: engine, workload, sync and the knobs that vary. */
struct rp_config {
    char *key;
    char *label;
    json_t *config;               /* borrowed from its first run */
    json_t *line;                 /* that run's whole line */
};

/* One configuration on one env. */
struct rp_series {
    size_t cfg, env;
    char *label;                  /* the config's, plus the env's when several */
    struct rp_point *pts;         /* by client count */
    size_t npts;
};

/* A crash combination: its rows added up. */
struct rp_crash {
    char *key;
    json_t *row;                  /* the first row (owned reference) */
    long long crashes, mid_run, lost, worst, unacked, atomic, foreign, phantoms, recov;
    int failed, na, durable;      /* durable: the policy promises durability (sync_durable) */
    int held;                     /* the engine claims its commits survive this kind of crash, with
                                   * the row's knobs: a loss then FAILS (survives_claimed) */
    int interrupted;              /* one row a signal stopped: its crashes so far, never added to another's */
    char *first_failure;          /* the first failed row's, or NULL */
};

struct report {
    const char *title;
    const char *const *files;
    size_t nfiles;
    size_t lines, nsummaries;
    struct rp_note *skipped, *notok;
    size_t nskipped, nnotok;
    struct rp_run *runs;
    size_t nruns;
    struct rp_stopped *stopped;   /* interrupted bench runs */
    size_t nstopped;
    struct rp_env *envs;
    size_t nenvs;
    struct rp_config *cfgs;
    size_t ncfgs;
    struct rp_series *series;
    size_t nseries;
    struct rp_crash *crashes;
    size_t ncrashes;
    json_t **verdicts;            /* commitlab-matrix-verdict/1 lines, owned */
    size_t nverdicts;
    char *time_first, *time_last;
};

/* Reads every input into r.  Returns 0, or 2 when a file cannot be
 * opened (named on stderr). */
int rp_load(struct report *r, const char *const *files, size_t n);
/* Groups the runs into configurations, envs, series and points. */
int rp_build(struct report *r);
void rp_free(struct report *r);

/* ---- helpers shared by the writers ------------------------------------------ */

/* Member of an object, or NULL (any of them may be NULL). */
json_t *rp_get(json_t *o, const char *key);
/* A number member, or NAN. */
double rp_num(json_t *o, const char *key);
/* A string member, or def. */
const char *rp_str(json_t *o, const char *key, const char *def);
char *rp_strdup(const char *s);
char *rp_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *rp_xrealloc(void *p, size_t n);

/* Writes s escaped for HTML and XML: & < > " ' as entities, and the
 * control characters XML forbids as U+FFFD. */
void rp_esc(FILE *f, const char *s);
/* "12.3k", "4.5M", "830": short numbers for ticks and labels. */
void rp_fmt_short(char *buf, size_t len, double v);
/* "12,345" (integers), "12.3" below 100, "0.123" below 1. */
void rp_fmt_num(char *buf, size_t len, double v);

/* "segment-size=256k": a config knob as labels show it (the flag's name). */
void rp_knob_label(const char *key, json_t *v, char *buf, size_t len);
/* The command line that runs a series again (a string to free): bench
 * with the series' own directory and client counts, or the matrix command
 * of its configuration, which covers every filesystem at once. */
char *rp_series_command(const struct report *r, size_t s);
int rp_series_is_matrix(const struct report *r, size_t s);

/* A chart: draws into f (a whole <svg> element) and returns 0, or returns
 * 1 without drawing when its data is absent, with *why saying so. */
enum rp_chart { RP_CHART_TPS, RP_CHART_P99, RP_CHART_PCT, RP_CHART_PHASES, RP_CHART_BATCHES, RP_CHART_TIMELINE,
                RP_CHART_DURABILITY, RP_NCHARTS };
struct rp_chart_info {
    const char *id;               /* "chart-tps" */
    const char *file_suffix;      /* "tps": report-tps.svg */
    const char *heading;
};
extern const struct rp_chart_info rp_charts[RP_NCHARTS];
/* Whether chart c has data; *why says why not. */
int rp_chart_present(const struct report *r, enum rp_chart c, const char **why);
/* The one-line caption (a string to free). */
char *rp_chart_caption(const struct report *r, enum rp_chart c);
/* Draws chart c, present, as one <svg> element; standalone adds the XML
 * declaration for a file of its own. */
void rp_chart_svg(FILE *f, const struct report *r, enum rp_chart c, int standalone);

/* A crash combination's verdict, as the durability table words it, and
 * its class there: "good", "warn" (lost, as a policy without durability
 * may), "bad" (FAILED) or "na" (report_out.c). */
const char *rp_crash_verdict(const struct rp_crash *c, const char **cls);

/* The phases of metrics.commit_phases_us, in commit order, are
 * bench_phase_names (bench_schema.h). */
/* Median over the point's runs of one phase's mean, µs (NAN when none). */
double rp_phase_mean(const struct report *r, const struct rp_point *p, int phase);
/* The point of a series at its largest client count, or at a given one
 * (NULL when it has none). */
const struct rp_point *rp_last_point(const struct rp_series *s);
const struct rp_point *rp_point_at(const struct rp_series *s, int clients);

#endif
