/*
 * bench_sweep.c -- the one sweep runner of bench, tour, matrix and crash:
 * items one after another, rounds of them -- each round in its own
 * shuffled order when asked (--repeat) -- the progress line on stderr,
 * and the stop at SIGINT, SIGTERM and SIGHUP with the hook where a
 * command cleans up.  Also the cross product of comma lists (the
 * odometer bench's knobs and crash's combinations are numbered by), and
 * bench's own sweep: the table (or CSV) row of each run as it finishes,
 * its JSON line, and after --repeat the summary (bench_repeat.c).  A run
 * a signal stopped gets its row and line too, marked interrupted (its
 * figures are over the time it measured), and the command's last line
 * says where the signal came (bench_stop_note).
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_workload.h"
#include "ut_progress.h"

/* ---- the cross product ----------------------------------------------------------- */

void bench_cross_pick(const size_t *counts, size_t n, size_t idx, size_t *pick)
{
    for (size_t k = n; k-- > 0;) {
        size_t c = counts[k] ? counts[k] : 1;
        pick[k] = idx % c;
        idx /= c;
    }
}

/* ---- stopping at a signal ---------------------------------------------------------- */

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
    bench_interrupt(); /* async-signal-safe: a flag the run and the sweep poll */
}

void bench_stop_on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int bench_stop_signal(void) { return (int)stop_signal; }

/* What the signal stopped, for the command's last line: set once, by the
 * first part of the command that knew (the item in progress), in the
 * main flow -- never in the handler. */
static char stop_note[1024];

void bench_stop_note(const char *fmt, ...)
{
    va_list ap;
    if (stop_note[0])
        return;
    va_start(ap, fmt);
    vsnprintf(stop_note, sizeof stop_note, fmt, ap);
    va_end(ap);
}

void bench_stop_report(const char *cmd, const char *tail)
{
    int sig = bench_stop_signal();
    fprintf(stderr, "commitlab %s: interrupted%s%s%s%s%s%s\n", cmd, sig ? " by " : "", sig ? bench_signal_name(sig) : "",
            stop_note[0] ? " " : "", stop_note, tail ? "; " : "", tail ? tail : "");
}

/* ---- the runner -------------------------------------------------------------------- */

static struct ut_progress *progress_of(struct bench_sweep *s) { return s->progress ? s->progress : &s->own; }

void bench_sweep_tick(void *arg)
{
    struct bench_sweep *s = arg;
    struct ut_progress *p = progress_of(s);
    char label[256];
    if (!p->on || !s->label)
        return;
    s->label(s, s->item, label, sizeof label);
    ut_progress_show(p, s->what ? s->what : "run", label);
}

int bench_sweep_run(struct bench_sweep *s)
{
    size_t *order = malloc((s->n ? s->n : 1) * sizeof *order);
    unsigned rounds = s->rounds ? s->rounds : 1;
    uint64_t rng = s->seed;
    int rc = 0;

    if (!order)
        return -ENOMEM;
    s->total = s->n * rounds;
    s->pos = 0;
    if (!s->progress)
        ut_progress_init(&s->own, s->quiet, s->total, s->est);
    for (unsigned r = 0; r < rounds && !bench_interrupted() && rc >= 0; r++) {
        /* Each round in its own order (a Fisher-Yates shuffle from the
         * seed and the round): a fixed order lets drift within a round
         * favour the items that run last. */
        for (size_t i = 0; i < s->n; i++)
            order[i] = i;
        for (size_t i = s->n; s->shuffle && i > 1; i--) {
            size_t j = (size_t)(bench_rand(&rng) % i), t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        s->round = r;
        for (size_t j = 0; j < s->n && !bench_interrupted(); j++, s->pos++) {
            s->item = order[j];
            ut_progress_begin(progress_of(s));
            bench_sweep_tick(s);
            int x = s->run(s, order[j], r);
            ut_progress_end(progress_of(s));
            if (x < 0) {
                rc = x;
                break;
            }
        }
    }
    free(order);
    if (bench_interrupted()) {
        /* between two items (the item in progress says more, and first) */
        bench_stop_note("with %zu of %zu done", s->pos, s->total);
        if (s->on_stop)
            s->on_stop(s, bench_stop_signal());
        return -EINTR;
    }
    return rc;
}

/* ---- bench's sweep ------------------------------------------------------------------ */

struct bench_ctx {
    const struct bench_config *cfgs;
    const struct bench_sweep_opts *o;
    struct bench_result *r, *res; /* the run's, and every round's (--repeat) */
    unsigned failed;
};

static void bench_item_label(struct bench_sweep *s, size_t i, char *buf, size_t len)
{
    const struct bench_ctx *x = s->ctx;
    bench_label(&x->cfgs[i], buf, len);
}

static int bench_item(struct bench_sweep *s, size_t i, unsigned round)
{
    struct bench_ctx *x = s->ctx;
    const struct bench_sweep_opts *o = x->o;
    const struct bench_config *cfg = &x->cfgs[i];
    struct bench_result *r = x->r;

    bench_run(cfg, r, bench_sweep_tick, s);
    ut_progress_clear(progress_of(s));
    if (r->status == RUN_INTERRUPTED) { /* its row and line say so, with what it measured */
        char label[256], how[200];
        bench_label(cfg, label, sizeof label);
        bench_stop_progress(cfg, r, how, sizeof how);
        bench_stop_note("during run %zu of %zu (%s) %s", s->pos + 1, s->total, label, how);
    }
    if (r->status == RUN_ERROR)
        x->failed++;
    if (o->format == FMT_CSV)
        bench_csv_row(stdout, cfg, r);
    else
        bench_table_row(stdout, cfg, r);
    fflush(stdout);
    int jrc = 0;
    if (o->jsonl && s->rounds > 1) {
        /* which round of --repeat this run is, and of which configuration */
        json_t *rep = json_pack("{s:I, s:I, s:I}", "round", (json_int_t)round + 1, "rounds", (json_int_t)s->rounds,
                                "config_index", (json_int_t)i + 1);
        jrc = bench_json_append_extra(o->jsonl, cfg, r, (unsigned)s->pos + 1, (unsigned)s->total, "repeat", rep);
        json_decref(rep);
    } else if (o->jsonl) {
        jrc = bench_json_append(o->jsonl, cfg, r, (unsigned)s->pos + 1, (unsigned)s->total);
    }
    if (jrc) {
        fprintf(stderr, "commitlab bench: writing the JSON line failed: %s\n", strerror(errno));
        x->failed++;
    }
    if (x->res)
        x->res[(size_t)round * s->n + i] = *r; /* by round, then configuration */
    else
        bench_result_free(r);
    return 0;
}

int bench_sweep(const struct bench_config *cfgs, size_t n, const struct bench_sweep_opts *o)
{
    unsigned repeat = o->repeat ? o->repeat : 1;
    struct bench_ctx x = {cfgs, o, malloc(sizeof *x.r), NULL, 0};
    if (repeat > 1)
        x.res = calloc(n * repeat, sizeof *x.res);
    if (!x.r || (repeat > 1 && !x.res)) {
        free(x.r);
        free(x.res);
        return -ENOMEM;
    }
    struct bench_sweep s = {
        .n = n,
        .rounds = repeat,
        .shuffle = repeat > 1,
        .seed = n ? cfgs[0].seed : 0,
        .run = bench_item,
        .ctx = &x,
        .what = "run",
        .label = bench_item_label,
        .quiet = o->quiet,
        /* the first estimate of a run's time: its warm-up and measured phase */
        .est = n ? cfgs[0].warmup + (cfgs[0].txns ? 1 : cfgs[0].duration) + 0.5 : 0,
    };
    if (o->format == FMT_CSV)
        bench_csv_header(stdout);
    else
        bench_table_header(stdout);
    fflush(stdout);
    int rc = bench_sweep_run(&s);
    if (rc == -ENOMEM) {
        free(x.r);
        free(x.res);
        return rc;
    }
    if (x.res) {
        if (rc == 0)
            bench_repeat_summary(stdout, o->jsonl, cfgs, n, repeat, x.res);
        for (size_t i = 0; i < n * repeat; i++)
            bench_result_free(&x.res[i]);
        free(x.res);
    }
    free(x.r);
    return (int)x.failed;
}
