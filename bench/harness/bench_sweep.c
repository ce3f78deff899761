/*
 * bench_sweep.c -- a list of runs one after another: the table (or CSV)
 * row of each as it finishes, its JSON line, the progress line on stderr;
 * and --repeat, the same list round by round, each round in its own
 * shuffled order, then the summary (bench_repeat.c).  `commitlab bench`
 * runs its cross product through here.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_workload.h"
#include "ut_progress.h"

/* The sweep's progress line, and the run it is about. */
struct sweep_progress {
    struct ut_progress up;
    const struct bench_config *cfg;
};

static void progress_tick(void *arg)
{
    struct sweep_progress *p = arg;
    char label[256];
    if (!p->up.on)
        return;
    bench_label(p->cfg, label, sizeof label);
    ut_progress_show(&p->up, "run", label);
}

unsigned bench_sweep(const struct bench_config *cfgs, size_t n, const struct bench_sweep_opts *o,
                     struct bench_result *results)
{
    struct sweep_progress p;
    unsigned failed = 0;
    struct bench_result *r = malloc(sizeof *r);

    if (!r)
        return (unsigned)n;
    /* the first estimate of a run's time: its warm-up and measured phase */
    ut_progress_init(&p.up, o->quiet, n, n ? cfgs[0].warmup + (cfgs[0].txns ? 1 : cfgs[0].duration) + 0.5 : 0);
    if (o->format == FMT_CSV)
        bench_csv_header(stdout);
    else
        bench_table_header(stdout);
    fflush(stdout);
    for (size_t i = 0; i < n && !bench_interrupted(); i++) {
        p.cfg = &cfgs[i];
        ut_progress_begin(&p.up);
        progress_tick(&p);
        bench_run(&cfgs[i], r, progress_tick, &p);
        ut_progress_end(&p.up);
        if (bench_interrupted()) { /* abandoned: no row, no JSON line, for a run cut short */
            bench_result_free(r);
            break;
        }
        if (r->status == RUN_ERROR)
            failed++;
        if (o->format == FMT_CSV)
            bench_csv_row(stdout, &cfgs[i], r);
        else
            bench_table_row(stdout, &cfgs[i], r);
        fflush(stdout);
        int jrc = 0;
        if (o->jsonl && o->repeat > 1) {
            /* which round of --repeat this run is, and of which configuration */
            size_t per = n / o->repeat;
            size_t ci = o->config_index ? o->config_index[i] : i % per;
            json_t *rep = json_pack("{s:I, s:I, s:I}", "round", (json_int_t)(i / per + 1), "rounds",
                                    (json_int_t)o->repeat, "config_index", (json_int_t)(ci + 1));
            jrc = bench_json_append_extra(o->jsonl, &cfgs[i], r, (unsigned)i + 1, (unsigned)n, "repeat", rep);
            json_decref(rep);
        } else if (o->jsonl) {
            jrc = bench_json_append(o->jsonl, &cfgs[i], r, (unsigned)i + 1, (unsigned)n);
        }
        if (jrc) {
            fprintf(stderr, "commitlab bench: writing the JSON line failed: %s\n", strerror(errno));
            failed++;
        }
        if (results)
            results[i] = *r;
        else
            bench_result_free(r);
    }
    free(r);
    return failed;
}

int bench_sweep_rounds(const struct bench_config *cfgs, size_t n, unsigned repeat, uint64_t seed,
                       struct bench_sweep_opts *o, unsigned *failed)
{
    /* Round by round, each round in its own order (a Fisher-Yates shuffle
     * from the seed and the round): a fixed order lets drift within a
     * round favour the configurations that run last. */
    size_t total = n * repeat;
    struct bench_config *all = calloc(total, sizeof *all);
    struct bench_result *ran = calloc(total, sizeof *ran), *res = calloc(total, sizeof *res);
    size_t *idx = malloc(total * sizeof *idx);
    if (!all || !ran || !res || !idx) {
        free(all);
        free(ran);
        free(res);
        free(idx);
        return -ENOMEM;
    }
    uint64_t rng = seed;
    for (size_t r = 0; r < repeat; r++) {
        size_t *order = idx + r * n;
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        for (size_t i = n; i > 1; i--) {
            size_t j = (size_t)(bench_rand(&rng) % i), t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        for (size_t i = 0; i < n; i++)
            all[r * n + i] = cfgs[order[i]];
    }
    o->repeat = repeat;
    o->config_index = idx;
    *failed = bench_sweep(all, total, o, ran);
    for (size_t i = 0; i < total; i++) /* by round, then configuration */
        res[(i / n) * n + idx[i]] = ran[i];
    if (!bench_interrupted())
        bench_repeat_summary(stdout, o->jsonl, cfgs, n, repeat, res);
    for (size_t i = 0; i < total; i++)
        bench_result_free(&res[i]);
    o->config_index = NULL;
    free(res);
    free(ran);
    free(idx);
    free(all);
    return 0;
}
