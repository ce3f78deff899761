/*
 * report.c -- `commitlab report FILE.jsonl...`: the JSON lines of bench,
 * tour, matrix and crash as one document a reader can keep -- an HTML page
 * that needs nothing else (inline SVG, inline CSS, no script, nothing
 * fetched, printable), or markdown with one SVG file per chart for docs/.
 *
 * Each section appears only when its data is in the input, and the
 * document says which ones are absent and why, so a missing chart reads
 * as "not measured", never as "nothing happened".  The model is built in
 * report_load.c, the charts drawn in report_svg.c, the tables written in
 * report_out.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_out.h"
#include "ut_args.h"
#include "ut_scratch.h"

/* ---- sections ---------------------------------------------------------------------------- */

enum sec { S_TPS, S_LAT, S_PHASES, S_BATCHES, S_TIMELINE, S_MATRIX, S_DURABILITY, S_ENV, S_INPUT, NSEC };

static const struct {
    const char *id, *title;
} secs[NSEC] = {
    [S_TPS] = {"sec-tps", "Throughput"},
    [S_LAT] = {"sec-latency", "Latency"},
    [S_PHASES] = {"sec-phases", "Where a commit's time goes"},
    [S_BATCHES] = {"sec-batches", "Commits per sync"},
    [S_TIMELINE] = {"sec-timeline", "Second by second"},
    [S_MATRIX] = {"sec-matrix", "Filesystem matrix"},
    [S_DURABILITY] = {"sec-durability", "Durability under crashes"},
    [S_ENV] = {"sec-env", "Environment and commands"},
    [S_INPUT] = {"sec-input", "Input"},
};

static int sec_present(const struct report *r, enum sec s, const char **why)
{
    switch (s) {
    case S_TPS: return rp_chart_present(r, RP_CHART_TPS, why);
    case S_LAT: return rp_chart_present(r, RP_CHART_P99, why);
    case S_PHASES: return rp_chart_present(r, RP_CHART_PHASES, why) || rp_costs_present(r);
    case S_BATCHES: return rp_chart_present(r, RP_CHART_BATCHES, why);
    case S_TIMELINE: return rp_chart_present(r, RP_CHART_TIMELINE, why);
    case S_MATRIX: return rp_matrix_present(r, why);
    case S_DURABILITY:
        return rp_chart_present(r, RP_CHART_DURABILITY, why);
    case S_ENV:
        *why = "no bench run or crash combination to describe";
        return r->nruns || r->ncrashes;
    case S_INPUT: return 1;
    case NSEC: break;
    }
    return 0;
}

/* Where the markdown's SVG files go: beside it, named after it. */
struct out_ctx {
    const char *stem;             /* the output path without ".md" */
    int failed;
};

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A chart inline in a <figure>, or as its own file beside the markdown. */
static void chart_block(const struct ro *o, const struct report *r, enum rp_chart c, struct out_ctx *ctx)
{
    char *cap = rp_chart_caption(r, c);
    if (!o->md) {
        fputs("<figure>\n", o->f);
        rp_chart_svg(o->f, r, c, 0);
        fputs("<figcaption>", o->f);
        rp_esc(o->f, cap);
        fputs("</figcaption>\n</figure>\n", o->f);
        free(cap);
        return;
    }
    char *path = rp_printf("%s-%s.svg", ctx->stem, rp_charts[c].file_suffix);
    FILE *f = fopen(path, "w");
    if (f) {
        rp_chart_svg(f, r, c, 1);
        if (fclose(f))
            f = NULL;
    }
    if (!f) {
        fprintf(stderr, "commitlab report: %s: cannot write: %s\n", path, strerror(errno));
        ctx->failed = 1;
    }
    fputs("![", o->f);
    ro_text(o, cap);
    fprintf(o->f, "](<%s>)\n\n*", base_name(path));
    ro_text(o, cap);
    fputs("*\n\n", o->f);
    free(path);
    free(cap);
}

static void sec_tps(const struct ro *o, const struct report *r, struct out_ctx *ctx)
{
    chart_block(o, r, RP_CHART_TPS, ctx);
    ro_para(o, "Transactions per second of each configuration at each client count; with repeats, the median "
               "with the min and max and the number of runs.");
    ro_table_tps(o, r);
    if (r->nstopped) {
        ro_para_begin(o);
        ro_textf(o, "%zu interrupted run%s %s in no figure here: %s, in Interrupted runs (Input).", r->nstopped,
                 r->nstopped == 1 ? "" : "s", r->nstopped == 1 ? "is" : "are",
                 r->nstopped == 1 ? "it is shown apart" : "they are shown apart");
        ro_para_end(o);
    }
}

static void sec_latency(const struct ro *o, const struct report *r, struct out_ctx *ctx)
{
    chart_block(o, r, RP_CHART_P99, ctx);
    if (rp_chart_present(r, RP_CHART_PCT, &(const char *){NULL}))
        chart_block(o, r, RP_CHART_PCT, ctx);
    ro_para(o, "Transaction latency percentiles, begin to commit return, in microseconds; with repeats, the "
               "median of each percentile over the runs.");
    ro_table_latency(o, r);
}

static void sec_phases(const struct ro *o, const struct report *r, struct out_ctx *ctx)
{
    if (rp_chart_present(r, RP_CHART_PHASES, &(const char *){NULL})) {
        chart_block(o, r, RP_CHART_PHASES, ctx);
        ro_para(o, "lock: waiting for the writer lock; append: into the log buffer; apply: to the tree; queue: "
                   "waiting before the I/O that made the commit durable; write and sync: that I/O, as far as the "
                   "commit waited for it; wakeup: from durable to the committer running again. Mean microseconds "
                   "per commit (the median over repeats), at each configuration's largest client count.");
        ro_table_phases(o, r);
    }
    if (rp_costs_present(r)) {
        ro_heading(o, 3, "What each commit cost", NULL);
        ro_para(o, "Per transaction over the measured phase, the median over repeats, for every engine: CPU "
                   "(user + system, every thread, and a server engine's own processes); context switches, "
                   "voluntary (a thread blocked: a sync, a lock, a sleep) and involuntary (preempted); and the "
                   "store's own file calls as commitlab's interposed calls counted them -- syncs (fsync, "
                   "fdatasync, sync_file_range, msync, O_DSYNC writes), writes and bytes written, per commit -- "
                   "beside the syncs the engine counts itself where it does. A store's writes through io_uring "
                   "or a shared mapping pass no such call: see bench.md.");
        ro_table_costs(o, r);
    }
}

static void sec_batches(const struct ro *o, const struct report *r, struct out_ctx *ctx)
{
    chart_block(o, r, RP_CHART_BATCHES, ctx);
    ro_para(o, "A batch is the commits one sync (or O_DSYNC write, or io_uring chain) made durable at once; "
               "each panel sums the syncs of the repeats at the configuration's largest client count.");
}

static void sec_timeline(const struct ro *o, const struct report *r, struct out_ctx *ctx)
{
    chart_block(o, r, RP_CHART_TIMELINE, ctx);
    ro_para(o, "Each point is one second of the measured phase; counters are sampled every 0.2 s, so a mark "
               "may fall in the neighbouring second.");
}

static void sec_matrix(const struct ro *o, const struct report *r)
{
    ro_para(o, "Median transactions per second of each configuration on each filesystem, and its share of the "
               "row's best: green is the best, red is none of it.");
    ro_table_matrix(o, r);
    ro_verdicts(o, r);
}

static void sec_durability(const struct ro *o, const struct report *r, struct out_ctx *ctx)
{
    chart_block(o, r, RP_CHART_DURABILITY, ctx);
    ro_para(o, "Each row adds up a combination's crashes. Green: a policy that promises durability lost no "
               "acknowledged commit. Amber: a policy that does not promise it lost some, as promised. Red, "
               "FAILED: an acknowledged commit lost where the policy promises none is, or a partly visible "
               "transaction, a value no commit wrote, a phantom or a failed recovery.");
    for (size_t i = 0; i < r->ncrashes; i++)
        if (r->crashes[i].interrupted) {
            ro_para(o, "A row marked interrupted is one combination a signal stopped: the crashes it ran before "
                       "it, in a row of its own, never added to the combination's other rows.");
            break;
        }
    ro_table_durability(o, r);
    ro_heading(o, 3, "Commands", NULL);
    ro_crash_commands(o, r);
}

static void sec_env(const struct ro *o, const struct report *r)
{
    if (r->ncrashes) {
        ro_heading(o, 3, "Crash campaigns", NULL);
        if (!ro_crash_environment(o, r))
            ro_para(o, "These crash lines record no environment (they are older than the env member); their "
                       "commands are in the durability section.");
    }
    if (!r->nruns)
        return;
    ro_environment(o, r);
    ro_heading(o, 3, "Commands", NULL);
    ro_para(o, "Each configuration's runs again: every knob that differs from commitlab bench's defaults, "
               "from the JSON lines' config.");
    ro_commands(o, r);
}

static void write_section(const struct ro *o, const struct report *r, enum sec s, struct out_ctx *ctx)
{
    if (!o->md)
        fprintf(o->f, "<section id=\"%s\">\n", secs[s].id);
    ro_heading(o, 2, secs[s].title, NULL);
    switch (s) {
    case S_TPS: sec_tps(o, r, ctx); break;
    case S_LAT: sec_latency(o, r, ctx); break;
    case S_PHASES: sec_phases(o, r, ctx); break;
    case S_BATCHES: sec_batches(o, r, ctx); break;
    case S_TIMELINE: sec_timeline(o, r, ctx); break;
    case S_MATRIX: sec_matrix(o, r); break;
    case S_DURABILITY: sec_durability(o, r, ctx); break;
    case S_ENV: sec_env(o, r); break;
    case S_INPUT: ro_input(o, r); break;
    case NSEC: break;
    }
    if (!o->md)
        fputs("</section>\n", o->f);
}

/* ---- the document ------------------------------------------------------------------------ */

static const char css[] =
    "body{font:14px/1.45 sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222;background:#fff}\n"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}\n"
    "h3{margin-top:1.4em}.meta{color:#555}\n"
    "figure{margin:1em 0}figure svg{max-width:100%;height:auto}\n"
    "figcaption{font-size:.9em;color:#444;margin-top:.3em}\n"
    ".wrap{overflow-x:auto}table{border-collapse:collapse;font-size:.85em;margin:.8em 0}\n"
    "th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}\n"
    "th{background:#f3f3f3}td.num{text-align:right;white-space:nowrap}\n"
    "td.good{background:#d7f0d2}td.warn{background:#fbe5b6}td.bad{background:#f6c9c6;font-weight:bold}\n"
    "td.na{color:#777}\n"
    "pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3em 0 1em}\n"
    ".absent{color:#555}\n"
    "@media print{\n"
    "  body{max-width:none;margin:0;padding:0;font-size:10pt}\n"
    "  *{-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
    "  h2{break-after:avoid}figure,table,pre{break-inside:avoid}\n"
    "  .wrap{overflow:visible}nav a{color:inherit;text-decoration:none}\n"
    "}\n";

static size_t count_hosts(const struct report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nenvs; i++) {
        size_t k = 0;
        while (k < i && strcmp(rp_str(r->envs[k].env, "hostname", "?"), rp_str(r->envs[i].env, "hostname", "?")))
            k++;
        n += k == i;
    }
    return n;
}

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

/* The crashes of every crash row, added up. */
static long long count_crashes(const struct report *r)
{
    long long n = 0;
    for (size_t i = 0; i < r->ncrashes; i++)
        n += r->crashes[i].crashes;
    return n;
}

static void summary_line(const struct ro *o, const struct report *r)
{
    size_t hosts = count_hosts(r);
    long long crashes = count_crashes(r);
    ro_para_begin(o);
    if (!o->md)
        fputs("<span class=\"meta\">", o->f);
    if (r->nruns)
        ro_textf(o, "%zu measured run%s of %zu configuration%s on %zu filesystem%s of %zu host%s.", r->nruns,
                 plural(r->nruns), r->ncfgs, plural(r->ncfgs), r->nenvs, plural(r->nenvs), hosts, plural(hosts));
    if (r->ncrashes)
        ro_textf(o, "%s%zu crash combination%s, %lld crash%s in all.", r->nruns ? " " : "", r->ncrashes,
                 plural(r->ncrashes), crashes, crashes == 1 ? "" : "es");
    if (!r->nruns && !r->ncrashes)
        ro_textf(o, "Nothing measured.");
    if (r->nstopped)
        ro_textf(o, " %zu interrupted run%s, shown apart (Input).", r->nstopped, plural(r->nstopped));
    if (r->time_first)
        ro_textf(o, " Runs from %s to %s.", r->time_first, r->time_last);
    if (!o->md)
        fputs("</span>", o->f);
    ro_para_end(o);
}

/* The sections present, as links, and the absent ones with the reason. */
static void contents(const struct ro *o, const struct report *r)
{
    const char *why;
    if (!o->md) {
        fputs("<nav>\n<ul>\n", o->f);
        for (int s = 0; s < NSEC; s++)
            if (sec_present(r, (enum sec)s, &why)) {
                fprintf(o->f, "<li><a href=\"#%s\">", secs[s].id);
                rp_esc(o->f, secs[s].title);
                fputs("</a></li>\n", o->f);
            }
        fputs("</ul>\n", o->f);
    }
    int absent = 0;
    for (int s = 0; s < NSEC; s++)
        absent += !sec_present(r, (enum sec)s, &why);
    if (absent) {
        if (!o->md)
            fputs("<div class=\"absent\" id=\"absent\">", o->f);
        ro_para(o, "Not in this report:");
        ro_list_begin(o);
        for (int s = 0; s < NSEC; s++)
            if (!sec_present(r, (enum sec)s, &why)) {
                ro_item_begin(o);
                ro_textf(o, "%s: %s.", secs[s].title, why);
                ro_item_end(o);
            }
        ro_list_end(o);
        if (!o->md)
            fputs("</div>\n", o->f);
    }
    if (!o->md)
        fputs("</nav>\n", o->f);
}

static void write_document(const struct ro *o, const struct report *r, struct out_ctx *ctx)
{
    const char *why;
    if (!o->md) {
        fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
              o->f);
        rp_esc(o->f, r->title);
        fprintf(o->f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n", css);
    }
    ro_heading(o, 1, r->title, NULL);
    summary_line(o, r);
    if (!o->md)
        fputs("</header>\n", o->f);
    contents(o, r);
    for (int s = 0; s < NSEC; s++)
        if (sec_present(r, (enum sec)s, &why))
            write_section(o, r, (enum sec)s, ctx);
    if (!o->md)
        fputs("</body>\n</html>\n", o->f);
}

static int write_file(const struct report *r, const char *path, int md)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "commitlab report: %s: cannot write: %s\n", path, strerror(errno));
        return 1;
    }
    size_t n = strlen(path);
    char *stem = rp_strdup(path);
    if (n > 3 && strcmp(path + n - 3, ".md") == 0)
        stem[n - 3] = 0;
    struct out_ctx ctx = {stem, 0};
    struct ro o = {f, md};
    write_document(&o, r, &ctx);
    free(stem);
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "commitlab report: %s: write failed: %s\n", path, strerror(errno));
        return 1;
    }
    return ctx.failed;
}

int report_write(const struct report_opts *o)
{
    struct report r = {0};
    const char *path = o->out ? o->out : o->format == REPORT_MD ? "report.md" : "report.html";
    r.title = o->title ? o->title : "commitlab report";
    int rc = rp_load(&r, o->inputs, o->ninputs);
    if (!rc && !(r.nruns + r.nnotok + r.nstopped + r.nsummaries + r.ncrashes + r.nverdicts)) {
        fprintf(stderr, "commitlab report: no usable line in the input (%zu read, %zu skipped)\n", r.lines,
                r.nskipped);
        rc = 1;
    }
    if (!rc)
        rc = rp_build(&r);
    if (!rc)
        rc = write_file(&r, path, o->format == REPORT_MD);
    if (!rc && !o->quiet)
        printf("report: %s\n", path);
    rp_free(&r);
    return rc;
}

/* ---- the command line ----------------------------------------------------------------------- */

static void report_usage(FILE *f)
{
    fprintf(f, "usage: commitlab report FILE.jsonl... [-o FILE] [--format html|md] [--title T]\n\n"
               "The JSON lines of commitlab bench, tour, matrix and crash as one report: throughput and\n"
               "p99 latency against clients, where a commit's time goes, commits per sync, second by\n"
               "second timelines, the filesystem matrix, commits lost under crashes (chart and\n"
               "table), the environment and the commands (docs/report.md).  Sections without data\n"
               "say so.\n\n"
               "  -o, --out FILE   where to write (default report.html, or report.md)\n"
               "  --format html    one self-contained page: inline SVG, no script, nothing fetched,\n"
               "                   printable (default)\n"
               "  --format md      markdown tables, each chart an SVG file beside it (FILE-tps.svg, ...)\n"
               "  --title T        the heading (default \"commitlab report\")\n\n"
               "A line that is not JSON, or has an unknown schema, is named as FILE:LINE on stderr,\n"
               "skipped and listed in the report.  Exit 0; 1 when no line is usable or the output\n"
               "cannot be written; 2 on bad arguments or a missing file.\n");
}

static const char *need_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        ut_usage_error("report", "%s needs a value", argv[*i]);
    return argv[++*i];
}

int cmd_report(int argc, char **argv)
{
    struct report_opts o = {0};
    const char **files = calloc((size_t)argc, sizeof *files);
    if (!files)
        return 1;
    o.inputs = files;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            report_usage(stdout);
            free(files);
            return 0;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) {
            o.out = need_value(argc, argv, &i);
        } else if (strcmp(a, "--title") == 0) {
            o.title = need_value(argc, argv, &i);
        } else if (strcmp(a, "--format") == 0) {
            const char *v = need_value(argc, argv, &i);
            if (strcmp(v, "html") && strcmp(v, "md"))
                ut_usage_error("report", "--format: '%s' is not accepted; expected html or md", v);
            o.format = strcmp(v, "md") == 0 ? REPORT_MD : REPORT_HTML;
        } else if (a[0] == '-' && a[1]) {
            ut_usage_error("report", "unknown option '%s' (accepted: -o FILE, --format html|md, --title T)", a);
        } else {
            files[o.ninputs++] = a;
        }
    }
    if (!o.ninputs)
        ut_usage_error("report", "expected at least one FILE.jsonl (see commitlab report --help)");
    const char *target = o.out ? o.out : o.format == REPORT_MD ? "report.md" : "report.html";
    int orc = ut_output_check(target); /* before the inputs are read */
    if (orc)
        ut_usage_error("report", "-o %s: %s", target, strerror(-orc));
    int rc = report_write(&o);
    free(files);
    return rc;
}
