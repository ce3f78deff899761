/*
 * bench_repeat.c -- `commitlab bench --repeat N`: the summary after N
 * rounds of the same configurations (each round in its own shuffled
 * order, bench_sweep.c).  One run on a shared machine says little
 * (docs/lab/results.md shows runs of the same command 40% apart), so each
 * configuration gets its median over the rounds, with the range, and each
 * group of configurations that differ only in what was swept (the same
 * engine, workload and client count) gets its best member and the margin
 * over the next best, set against the spread: "which commit_delay is best
 * here" gets an answer -- a clear one only when every run of the best beat
 * every run of the next -- or "their ranges overlap".
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ut_stats.h"

struct summary {
    size_t ok;                    /* rounds that ran */
    double tps, tps_min, tps_max; /* median, range */
    double p99;                   /* median p99 latency, us */
    double cps;                   /* median commits per sync, or -1 */
};

static void summarise(const struct bench_result *res, size_t n, unsigned repeat, size_t i, struct summary *s)
{
    double tps[100], p99[100], cps[100];
    size_t ncps = 0;
    memset(s, 0, sizeof *s);
    for (unsigned r = 0; r < repeat; r++) {
        const struct bench_result *x = &res[r * n + i];
        if (x->status != RUN_OK)
            continue;
        tps[s->ok] = x->tps;
        p99[s->ok] = x->p99_us;
        s->ok++;
        if (x->syncs > 0) {
            double commits = x->engine_commits > 0 ? (double)x->engine_commits : (double)x->txns;
            cps[ncps++] = commits / (double)x->syncs;
        }
    }
    if (!s->ok)
        return;
    s->tps_min = s->tps_max = tps[0];
    for (size_t k = 1; k < s->ok; k++) {
        s->tps_min = tps[k] < s->tps_min ? tps[k] : s->tps_min;
        s->tps_max = tps[k] > s->tps_max ? tps[k] : s->tps_max;
    }
    s->tps = ut_median(tps, s->ok);
    s->p99 = ut_median(p99, s->ok);
    s->cps = ncps ? ut_median(cps, ncps) : -1;
}

/* Half the range, relative to the median: the noise of one configuration. */
static double spread(const struct summary *s) { return s->tps > 0 ? (s->tps_max - s->tps_min) / 2 / s->tps : 0; }

/* Configurations to compare: the same engine, workload and client count,
 * and the same offered load (under --rate more offered is more done, which
 * says nothing about which setting is better). */
static int same_group(const struct bench_config *a, const struct bench_config *b)
{
    return !strcmp(a->engine, b->engine) && !strcmp(a->workload, b->workload) && a->clients == b->clients &&
           a->rate == b->rate;
}

/* What tells the members of a group apart: the policy and the swept knobs. */
static void member_label(const struct bench_config *cfg, char *buf, size_t len)
{
    snprintf(buf, len, "--sync %s%s%s", bench_knob_word(cfg, K_SYNC), cfg->varying[0] ? " " : "", cfg->varying);
}

static void print_best(FILE *f, const struct bench_config *cfgs, size_t n, const struct summary *sm)
{
    int header = 0;
    char *done = calloc(n ? n : 1, 1);
    if (!done)
        return;
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        size_t best = SIZE_MAX, next = SIZE_MAX, members = 0;
        for (size_t j = i; j < n; j++) {
            if (!same_group(&cfgs[i], &cfgs[j]))
                continue;
            done[j] = 1;
            members++;
            if (!sm[j].ok)
                continue;
            if (best == SIZE_MAX || sm[j].tps > sm[best].tps) {
                next = best;
                best = j;
            } else if (next == SIZE_MAX || sm[j].tps > sm[next].tps) {
                next = j;
            }
        }
        if (members < 2 || best == SIZE_MAX || next == SIZE_MAX)
            continue;
        if (!header) {
            fprintf(f, "\nbest per engine, workload and client count (medians):\n");
            header = 1;
        }
        char a[200], b[200];
        member_label(&cfgs[best], a, sizeof a);
        member_label(&cfgs[next], b, sizeof b);
        double margin = sm[next].tps > 0 ? sm[best].tps / sm[next].tps - 1 : 0;
        double noise = spread(&sm[best]) > spread(&sm[next]) ? spread(&sm[best]) : spread(&sm[next]);
        /* clear only when every run of the best beat every run of the next */
        int clear = sm[best].tps_min > sm[next].tps_max;
        fprintf(f, "  %s %s, %u clients: %s at %.0f ops/sec, +%.1f%% over %s at %.0f; spread up to +-%.1f%%; %s\n",
                cfgs[best].engine, cfgs[best].workload, cfgs[best].clients, a, sm[best].tps, margin * 100, b,
                sm[next].tps, noise * 100,
                clear ? "every run of the first beat every run of the second"
                      : "their ranges overlap: no clear winner (more --repeat, or longer runs)");
    }
    free(done);
}

void bench_repeat_summary(FILE *f, FILE *jsonl, const struct bench_config *cfgs, size_t n, unsigned repeat,
                          const struct bench_result *res)
{
    struct summary *sm = calloc(n ? n : 1, sizeof *sm);
    if (!sm)
        return;
    fprintf(f, "\nsummary of %u rounds (median; min-max; spread = half the range over the median):\n", repeat);
    fprintf(f, "%-9s %-8s %7s %4s %13s %25s %7s %10s %12s  %s\n", "engine", "sync", "clients", "runs", "ops/sec",
            "min-max", "spread", "p99 us", "commits/sync", "varying");
    for (size_t i = 0; i < n; i++) {
        summarise(res, n, repeat, i, &sm[i]);
        const struct summary *s = &sm[i];
        if (!s->ok) {
            fprintf(f, "%-9s %-8s %7u %4s %13s  %s\n", cfgs[i].engine, bench_knob_word(&cfgs[i], K_SYNC),
                    cfgs[i].clients, "0", "-", cfgs[i].varying);
            continue;
        }
        char range[40], cps[24] = "-";
        snprintf(range, sizeof range, "%.0f-%.0f", s->tps_min, s->tps_max);
        if (s->cps >= 0)
            snprintf(cps, sizeof cps, "%.2f", s->cps);
        fprintf(f, "%-9s %-8s %7u %4zu %13.0f %25s %6.1f%% %10.0f %12s  %s\n", cfgs[i].engine,
                bench_knob_word(&cfgs[i], K_SYNC), cfgs[i].clients, s->ok, s->tps, range, spread(s) * 100, s->p99, cps,
                cfgs[i].varying);
        if (jsonl) {
            json_t *o = json_object();
            json_object_set_new(o, "schema", json_string("commitlab-bench-summary/1"));
            json_object_set_new(o, "engine", json_string(cfgs[i].engine));
            json_object_set_new(o, "workload", json_string(cfgs[i].workload));
            json_object_set_new(o, "config", bench_config_json(&cfgs[i]));
            json_object_set_new(o, "rounds", json_integer(repeat));
            json_object_set_new(o, "runs_ok", json_integer((json_int_t)s->ok));
            json_object_set_new(o, "tps_median", json_real(s->tps));
            json_object_set_new(o, "tps_min", json_real(s->tps_min));
            json_object_set_new(o, "tps_max", json_real(s->tps_max));
            json_object_set_new(o, "tps_spread", json_real(spread(s)));
            json_object_set_new(o, "p99_us_median", json_real(s->p99));
            json_object_set_new(o, "commits_per_sync_median", s->cps >= 0 ? json_real(s->cps) : json_null());
            bench_json_write(jsonl, o);
            json_decref(o);
        }
    }
    print_best(f, cfgs, n, sm);
    free(sm);
}
