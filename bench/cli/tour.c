/*
 * tour.c -- `commitlab tour`, the default job: in under three minutes, a
 * real comparison of commit paths on the filesystem of the current
 * directory, through the same harness as `commitlab bench`.
 *
 * Rows: commitlab with the durable sync policies commit, group and uring
 * (flusher is left to `commitlab bench`; a policy the library does not
 * build is one n/a row) and with none; LMDB durable and
 * MDB_NOSYNC; RocksDB sync=true; SQLite synchronous=FULL and PostgreSQL
 * synchronous_commit=on when built.  Each at 1, 16 and 64 clients; then commitlab group commit at 16 clients with
 * 1 MiB segments and a checkpoint every 4 MiB, fresh versus recycled
 * segments.  Every row: kv workload (16-byte keys, 100-byte values,
 * 100,000 keys, one put per transaction), 3 s measured after 0.5 s of
 * warm-up, in a directory beside the current one (same filesystem), which
 * is removed afterwards.  PostgreSQL's three rows share one cluster (its
 * private server started and stopped for each row, as bench --reuse
 * does), so that its 100,000 keys are loaded once: a load through SQL
 * takes seconds that every other engine spends in milliseconds.  The JSON lines go to tour.jsonl.  Then a few
 * sentences say what the table shows, with its numbers, and report.html
 * beside the JSON lines draws them (`commitlab report`, called in-process);
 * its path is the last line, so `make demo` ends by naming it.
 *
 * Stopped by a signal, the tour keeps the rows it ran (the one in
 * progress marked interrupted, with what it measured) in the table and
 * tour.jsonl, and says on stderr where it stopped; it draws no findings
 * and no report from a part of the table.
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "bench_dirs.h"
#include "bench_env.h"
#include "cli.h"
#include "drivers/driver.h"
#include "report.h"
#include "ut_args.h"
#include "ut_clock.h"
#include "ut_progress.h"
#include "ut_scratch.h"

static const unsigned tour_clients[] = {1, 16, 64};
#define NCLIENTS (sizeof tour_clients / sizeof *tour_clients)

struct tour_row {
    struct bench_config cfg;
    struct bench_result res;
    int ran;
};

struct tour_series {
    const char *engine, *sync;
    unsigned lmdb_flags;
    struct tour_row rows[NCLIENTS];
    /* The segment pair: only at SEG_CLIENTS clients, with small segments
     * and frequent checkpoints so that segments are retired and reused. */
    const char *segments;
    int done;                     /* one row said why the rest cannot run */
    /* Flush pipelining: each client keeps this many commits awaiting
     * durability (cl_commit_async), only at SEG_CLIENTS clients; 0: none */
    unsigned pipeline;
};

#define SEG_CLIENTS 16u
#define SEG_SIZE (1u << 20)
#define SEG_CHECKPOINT (4u << 20)

/* The directory beside the current one, when the parent is on the same
 * filesystem and writable; else one inside the current directory. */
static void tour_dir(char *buf, size_t len)
{
    char cwd[4096], parent[4096];
    struct stat a, b;
    if (getcwd(cwd, sizeof cwd) && stat(".", &a) == 0) {
        snprintf(parent, sizeof parent, "%s", cwd);
        const char *up = dirname(parent);
        if (strcmp(up, cwd) != 0 && stat(up, &b) == 0 && a.st_dev == b.st_dev && access(up, W_OK) == 0) {
            snprintf(buf, len, "%.4000s/commitlab-tour.d", up);
            return;
        }
    }
    snprintf(buf, len, "commitlab-tour.d");
}

static const struct tour_row *row_of(const struct tour_series *s, size_t n, const char *engine, const char *sync,
                                     unsigned flags, unsigned clients)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s[i].engine, engine) && !strcmp(s[i].sync, sync) && s[i].lmdb_flags == flags && !s[i].segments &&
            !s[i].pipeline)
            for (size_t c = 0; c < NCLIENTS; c++)
                if (tour_clients[c] == clients && s[i].rows[c].ran && s[i].rows[c].res.status == RUN_OK)
                    return &s[i].rows[c];
    return NULL;
}

static double tps(const struct tour_row *r)
{
    return r ? r->res.tps : 0;
}

/* ---- the command line ----------------------------------------------------------- */

struct tour_opts {
    double secs;                  /* measured seconds per row */
    const char *dir, *out;
    int quiet;
    char dirbuf[4200];
};

static void tour_usage(void)
{
    printf("usage: commitlab tour [--seconds S] [--dir D] [--out FILE] [--quiet]\n\n"
           "The default job: commitlab's sync policies, LMDB, RocksDB, SQLite and PostgreSQL\n"
           "side by side"
           "at 1, 16 and 64 clients (one put per transaction), then fresh against recycled\n"
           "WAL segments, on the filesystem of the current directory; a table, a few\n"
           "sentences on what it shows, JSON lines, and report.html beside them (charts).\n\n"
           "  --seconds S   measured seconds per row (default 3)\n"
           "  --dir D       where the runs go (default: commitlab-tour.d beside the current\n"
           "                directory, removed afterwards)\n"
           "  --out FILE    the JSON lines (default tour.jsonl, replaced); report.html goes\n"
           "                in the same directory\n"
           "  --quiet       no progress line\n");
}

static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

/* Exits 2 naming a bad argument. */
static void parse_tour_args(int argc, char **argv, struct tour_opts *o)
{
    o->secs = 3.0;
    o->dir = NULL;
    o->out = "tour.jsonl";
    o->quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            char *end;
            o->secs = strtod(argv[++i], &end);
            if (*end || !(o->secs > 0 && o->secs <= 600))
                ut_usage_error("tour", "--seconds: '%s' is not accepted; expected seconds in (0, 600]", argv[i]);
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            o->dir = argv[++i];
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            o->out = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            o->quiet = 1;
        } else {
            ut_usage_error("tour", "unknown argument '%s' (accepted: --seconds S, --dir D, --out FILE, --quiet)",
                            argv[i]);
        }
    }
    if (!o->dir) {
        tour_dir(o->dirbuf, sizeof o->dirbuf);
        o->dir = o->dirbuf;
    }
}

/* ---- the runs -------------------------------------------------------------------- */

/* The tour as a sweep: its rows in order, each a series at a client
 * count; where it is goes to the progress line, the JSON's run numbers
 * and the exit status. */
struct tour_item {
    struct tour_series *se;
    size_t c;                     /* into tour_clients */
};

struct tour {
    struct tour_item *items;
    const struct tour_opts *o;
    FILE *jf;
    unsigned failed;
};

/* The configuration of one row: the tour's workload and timing, the
 * series' engine and policy, and for the segment pair small segments and
 * frequent checkpoints. */
static void row_config(struct bench_config *cfg, const struct tour_series *se, unsigned clients,
                       const struct tour_opts *o)
{
    bench_config_defaults(cfg);
    cfg->engine = se->engine;
    bench_knob_set(cfg, K_SYNC, se->sync, 0); /* the word read into the policy, by the table */
    cfg->clients = clients;
    cfg->duration = o->secs;
    cfg->warmup = 0.5;
    cfg->dir = o->dir;
    if (!strcmp(se->engine, "postgres"))
        cfg->reuse = 1; /* one cluster for the series (tour_reused) */
    if (se->segments) {
        bench_knob_set(cfg, K_SEGMENTS, se->segments, 1);
        cfg->segment_size = SEG_SIZE;
        cfg->checkpoint_bytes = SEG_CHECKPOINT;
        cfg->given[K_SEGMENTS] = cfg->given[K_SEGMENT_SIZE] = cfg->given[K_CHECKPOINT] = 1;
        snprintf(cfg->varying, sizeof cfg->varying, "segments=%s", se->segments);
    }
    if (se->pipeline) {
        cfg->pipeline = se->pipeline;
        cfg->given[K_PIPELINE] = 1;
        snprintf(cfg->varying, sizeof cfg->varying, "pipeline=%u", se->pipeline);
    }
}

static void row_label(struct bench_sweep *s, size_t i, char *buf, size_t len)
{
    const struct tour *t = s->ctx;
    struct bench_config cfg;
    row_config(&cfg, t->items[i].se, tour_clients[t->items[i].c], t->o);
    bench_label(&cfg, buf, len);
}

/* The run directory a series reuses across its rows (PostgreSQL's), made
 * marked as the tour's before its first row and removed, its server
 * stopped, at the end -- a killed tour's leftover the next one removes
 * (bench_dirs_check). */
static int tour_reused(const struct tour_series *se, const struct tour_opts *o, char *path, size_t len)
{
    if (strcmp(se->engine, "postgres") != 0)
        return 0;
    snprintf(path, len, "%.4000s/%s.db", o->dir, se->engine);
    return 1;
}

static void tour_remove_reused(const struct tour_series *series, size_t n, const struct tour_opts *o)
{
    char path[4200];
    for (size_t s = 0; s < n; s++)
        if (tour_reused(&series[s], o, path, sizeof path) && ut_scratch_ours(path)) {
            bench_postgres_reap(path);
            int rc = ut_scratch_remove(path);
            if (rc)
                fprintf(stderr, "commitlab tour: %s: %s\n", path, strerror(-rc));
        }
}

/* One row of a series, printed and appended to the JSON lines as it
 * finishes.  A series whose engine is not built, or that the engine
 * cannot run at all, gets one row that says so, and its other rows pass. */
static int run_row(struct bench_sweep *s, size_t i, unsigned round)
{
    struct tour *t = s->ctx;
    struct tour_series *se = t->items[i].se;
    struct tour_row *row = &se->rows[t->items[i].c];
    (void)round;
    if (se->done)
        return 0;
    const struct bench_driver *d = bench_driver_find(se->engine);
    if (!d || !d->built) {
        ut_progress_clear(s->progress);
        printf("%-9s %-8s %7s %13s  (not built: install its -dev package and rebuild)\n", se->engine, se->sync, "-",
               "n/a");
        se->done = 1;
        return 0;
    }
    char reused[4200];
    if (tour_reused(se, t->o, reused, sizeof reused) && !ut_scratch_ours(reused)) {
        /* the series' first row: its server's checks, and its directory */
        struct bench_config cfg;
        row_config(&cfg, se, tour_clients[t->items[i].c], t->o);
        ut_progress_clear(s->progress);
        int rc = bench_postgres_preflight("tour", &cfg, 1);
        if (rc == 0 && (rc = ut_scratch_make(reused, "tour")) != 0)
            fprintf(stderr, "commitlab tour: %s: %s\n", reused, strerror(-rc));
        if (rc) {
            printf("%-9s %-8s %7s %13s  (see the line above)\n", se->engine, se->sync, "-", "n/a");
            se->done = 1;
            return 0;
        }
    }
    if (se->pipeline) {
        ut_progress_clear(s->progress);
        printf("-- flush pipelining: each client keeps up to %u commits awaiting durability --\n", se->pipeline);
    }
    if (se->segments && !strcmp(se->segments, "fresh")) {
        ut_progress_clear(s->progress);
        printf("-- the same log with 1 MiB segments and a checkpoint every 4 MiB: fresh versus recycled "
               "segments --\n");
    }
    row_config(&row->cfg, se, tour_clients[t->items[i].c], t->o);
    bench_run(&row->cfg, &row->res, bench_sweep_tick, s);
    row->ran = 1;
    ut_progress_clear(s->progress);
    if (row->res.status == RUN_INTERRUPTED) { /* its row and line say so, with what it measured */
        char label[256], how[200];
        bench_label(&row->cfg, label, sizeof label);
        bench_stop_progress(&row->cfg, &row->res, how, sizeof how);
        bench_stop_note("during run %zu of %zu (%s) %s", s->pos + 1, s->total, label, how);
    }
    bench_table_row(stdout, &row->cfg, &row->res);
    fflush(stdout);
    if (bench_json_append(t->jf, &row->cfg, &row->res, (unsigned)s->pos + 1, (unsigned)s->total))
        t->failed++;
    if (row->res.status == RUN_ERROR)
        t->failed++;
    /* A configuration the engine cannot do is n/a at any client count:
     * one row says so. */
    if (row->res.status == RUN_NA)
        se->done = 1;
    return 0;
}

/* The title, the filesystem and the table's header. */
static void print_preamble(const struct tour_opts *o)
{
    struct bench_env e;

    printf("commitlab tour: one put per transaction (16-byte keys, 100-byte values, 100,000 keys),\n"
           "%.0f s measured per row after 0.5 s warm-up, clients are threads; in %s\n", o->secs, o->dir);
    bench_warn_volatile(o->dir);
    bench_env_probe(o->dir, &e);
    printf("filesystem: %s on %s (%s), kernel %s, %d cores\n\n", e.fs_type,
           e.mount_source[0] ? e.mount_source : "?", e.mount_options, e.kernel, e.cores);
    bench_table_header(stdout);
    fflush(stdout);
}

/* ---- what the table shows ------------------------------------------------------- */

/* The fresh and the recycled row of the segment pair, where both ran. */
static void segment_pair(const struct tour_series *series, size_t n, const struct tour_row **fresh,
                         const struct tour_row **recycled)
{
    *fresh = *recycled = NULL;
    for (size_t s = 0; s < n; s++)
        for (size_t c = 0; c < NCLIENTS; c++) {
            const struct tour_row *row = &series[s].rows[c];
            if (!series[s].segments || !row->ran || row->res.status != RUN_OK)
                continue;
            if (!strcmp(series[s].segments, "fresh"))
                *fresh = row;
            else
                *recycled = row;
        }
}

/* Group and io_uring commit at 64 clients against LMDB, or why a policy is n/a. */
/* Commits per sync in a row, from its counters; 0 when the engine does
 * not count its syncs (or made none). */
static double per_sync(const struct tour_row *r)
{
    return r && r->res.syncs > 0 ? (double)r->res.txns / (double)r->res.syncs : 0;
}

/* Syncs per commit of a row; 0 when not counted. */
static double syncs_each(const struct tour_row *r)
{
    return r && r->res.syncs > 0 && r->res.txns > 0 ? (double)r->res.syncs / (double)r->res.txns : 0;
}

/* Why commits at many clients ran as they did, from their commits per
 * sync: sharing, or one sync each. */
static void why_batches(double cps)
{
    cps = round(cps * 10) / 10; /* decided on the figure as printed: 1.49 reads 1.5, and shares */
    if (cps >= 1.5)
        printf("\n  %.1f commits shared each sync: committers that arrived during a sync were made durable\n"
               "  together by the next one", cps);
    else if (cps > 0)
        printf("\n  %.1f commits per sync: each commit was made durable by a sync of its own, so more\n"
               "  clients only queued for their turn", cps);
    else
        printf("\n  (the engine does not count its syncs)");
}

static void print_group_findings(const struct tour_series *series, size_t n, const struct tour_row *l64)
{
    for (size_t s = 0; s < n; s++) {
        const char *p = series[s].sync;
        if (strcmp(series[s].engine, "commitlab") || (strcmp(p, "group") && strcmp(p, "uring")) ||
            series[s].segments || series[s].pipeline)
            continue;
        const struct tour_row *g64 = row_of(series, n, "commitlab", p, 0, 64);
        if (g64 && l64) {
            printf("- %s commit at 64 clients: %.0f tps = %.1fx LMDB durable;", strcmp(p, "group") == 0 ? "Group" : "io_uring",
                   tps(g64), tps(g64) / tps(l64));
            why_batches(per_sync(g64));
            printf(".\n");
        } else if (series[s].rows[0].ran && series[s].rows[0].res.status == RUN_NA) {
            printf("- --sync %s is n/a: %s.\n", p, series[s].rows[0].res.reason);
        }
    }
}

/* What the table shows, in words, with its numbers; a sentence only where
 * its rows ran, and every explanation one the measured figures beside it
 * bear out (commits per sync, syncs per commit, the ratios themselves),
 * never a fixed reason. */
static void print_findings(const struct tour_series *series, size_t n, double elapsed, const char *out)
{
    const struct tour_row *c1 = row_of(series, n, "commitlab", "commit", 0, 1);
    const struct tour_row *c64 = row_of(series, n, "commitlab", "commit", 0, 64);
    const struct tour_row *n1 = row_of(series, n, "commitlab", "none", 0, 1);
    const struct tour_row *l1 = row_of(series, n, "lmdb", "commit", 0, 1);
    const struct tour_row *l64 = row_of(series, n, "lmdb", "commit", 0, 64);
    const struct tour_row *ln1 = row_of(series, n, "lmdb", "none", 0, 1);
    const struct tour_row *r1 = row_of(series, n, "rocksdb", "commit", 0, 1);
    const struct tour_row *r64 = row_of(series, n, "rocksdb", "commit", 0, 64);
    const struct tour_row *sf, *sr;

    printf("\nWhat this shows (%.0f s in all; JSON lines in %s):\n", elapsed, out);
    if (c1 && l1) {
        double ratio = tps(c1) / tps(l1), cl = syncs_each(c1), lm = syncs_each(l1);
        printf("- One client, durable: commitlab --sync commit runs at %.2fx LMDB", ratio);
        if (cl > 0 && lm > 0)
            printf(" (%.1f against %.1f durability points per commit%s)", cl, lm,
                   lm > cl * 1.5 && ratio > 1.2   ? ": fewer syncs, faster"
                   : lm > cl * 1.5 && ratio < 0.8 ? ": fewer syncs, and yet slower here"
                                                  : "");
        printf(".\n");
    }
    if (c1 && n1) {
        double x = tps(n1) / tps(c1);
        if (x >= 3)
            printf("- Not syncing at all is %.0fx faster than syncing every commit (%.0f vs %.0f tps): that gap\n"
                   "  is what group commit tries to close without giving up durability.\n",
                   x, tps(n1), tps(c1));
        else
            printf("- Not syncing at all is only %.1fx faster than syncing every commit (%.0f vs %.0f tps): a sync\n"
                   "  costs little here, as on tmpfs or a device that does not really sync (commitlab probe says\n"
                   "  which).\n",
                   x, tps(n1), tps(c1));
    }
    if (l1 && l64)
        printf("- LMDB durable %s %.0f tps at 1 client to %.0f at 64%s\n",
               tps(l64) / tps(l1) < 1.5 && tps(l64) / tps(l1) > 0.67 ? "stays flat, from" : "goes from", tps(l1),
               tps(l64),
               tps(l64) / tps(l1) < 1.5 ? ":\n  one writer at a time, each commit paying its own syncs, so more clients only queue."
                                        : ".");
    if (c64 && l64) {
        printf("- At 64 clients commitlab --sync commit reaches %.0f tps = %.1fx LMDB;", tps(c64), tps(c64) / tps(l64));
        why_batches(per_sync(c64));
        printf(".\n");
    }
    print_group_findings(series, n, l64);
    if (r1 && r64) {
        double x = tps(r64) / tps(r1);
        printf("- RocksDB sync=true goes from %.0f tps at 1 client to %.0f at 64 (%.1fx)%s\n", tps(r1), tps(r64), x,
               r64->res.writes_by_leader > 0 && x >= 1.5
                   ? ": its write thread batches concurrent writers behind one WAL sync (a leader wrote for others)."
               : x >= 1.5 ? "."
               : x >= 0.8 ? ": about flat."
                          : ": fewer at 64 than at 1.");
    }
    const struct tour_row *p1 = row_of(series, n, "postgres", "commit", 0, 1);
    const struct tour_row *p64 = row_of(series, n, "postgres", "commit", 0, 64);
    if (p1 && p64) {
        printf("- PostgreSQL synchronous_commit=on goes from %.0f tps at 1 client to %.0f at 64 (%.1fx LMDB\n"
               "  durable there); its CPU per commit, %.0f us at 64, counts the server's processes;",
               tps(p1), tps(p64), l64 ? tps(p64) / tps(l64) : 0,
               p64->res.txns ? p64->res.cpu_us / (double)p64->res.txns : 0);
        why_batches(per_sync(p64));
        printf(" (pg_stat_wal's syncs).\n");
    }
    if (n1 && ln1)
        printf("- Without syncs: commitlab %.0f tps, LMDB MDB_NOSYNC %.0f tps; a power failure can lose whatever\n"
               "  the OS had not yet written back.\n", tps(n1), tps(ln1));
    const struct tour_row *pl = NULL, *g16 = row_of(series, n, "commitlab", "group", 0, SEG_CLIENTS);
    unsigned depth = 0;
    for (size_t s = 0; s < n; s++)
        for (size_t c = 0; c < NCLIENTS && series[s].pipeline; c++)
            if (series[s].rows[c].ran && series[s].rows[c].res.status == RUN_OK) {
                pl = &series[s].rows[c];
                depth = series[s].pipeline;
            }
    if (pl && g16) {
        double x = tps(pl) / tps(g16);
        printf("- Flush pipelining: group commit with each of %u clients keeping up to %u commits awaiting\n"
               "  durability (cl_commit_async) runs at %.0f tps against %.0f blocking, %.1fx%s;",
               SEG_CLIENTS, depth, tps(pl), tps(g16), x,
               x >= 1.5 ? ": no thread waits out a sync, so the next batch fills while one is written"
               : x > 0.8 ? ": about the same here"
                         : ": slower here");
        why_batches(per_sync(pl));
        printf(".\n");
    }
    segment_pair(series, n, &sf, &sr);
    if (sf && sr) {
        double d = (tps(sr) / tps(sf) - 1) * 100;
        printf("- WAL segments, group commit at %u clients: recycled %.0f tps vs fresh %.0f\n  (%+.0f%%%s);"
               " "
               "the fresh log waited %.1f ms in all for %lld new segments, the recycled one %.1f ms\n"
               "  while reusing %lld (one short run: `commitlab matrix` repeats it on ext4, XFS and btrfs, "
               "docs/lab/recycling.md).\n",
               SEG_CLIENTS, tps(sr), tps(sf), d, d > -5 && d < 5 ? ", within a single run's noise" : "",
               (double)sf->res.segment_wait_us / 1e3, (long long)sf->res.segments_created,
               (double)sr->res.segment_wait_us / 1e3, (long long)sr->res.segments_reused);
    }
}

/* report.html in the directory of the JSON lines, drawn from them; its
 * path is the tour's last line. */
static int tour_report(const char *jsonl)
{
    char path[4200];
    const char *slash = strrchr(jsonl, '/');
    if (slash)
        snprintf(path, sizeof path, "%.*s/report.html", (int)(slash - jsonl) > 4000 ? 4000 : (int)(slash - jsonl),
                 jsonl);
    else
        snprintf(path, sizeof path, "report.html");
    const char *inputs[1] = {jsonl};
    struct report_opts ro = {inputs, 1, path, REPORT_HTML, "commitlab tour", 0};
    fflush(stdout);
    return report_write(&ro);
}

/* The results of the rows that ran, freed. */
static void free_rows(struct tour_series *series, size_t n)
{
    for (size_t s = 0; s < n; s++)
        for (size_t c = 0; c < NCLIENTS; c++)
            if (series[s].rows[c].ran)
                bench_result_free(&series[s].rows[c].res);
}

int cmd_tour(int argc, char **argv)
{
    struct tour_opts o;
    struct tour_series series[] = {
        {"commitlab", "commit", 0, {{{0}}}},
        {"commitlab", "group", 0, {{{0}}}},
        {"commitlab", "uring", 0, {{{0}}}},
        {"commitlab", "none", 0, {{{0}}}},
        {"lmdb", "commit", 0, {{{0}}}},
        {"lmdb", "none", 0, {{{0}}}},
        {"rocksdb", "commit", 0, {{{0}}}},
        {"sqlite", "commit", 0, {{{0}}}},
        {"postgres", "commit", 0, {{{0}}}},
        {"commitlab", "group", 0, {{{0}}}, NULL, 0, 64},
        {"commitlab", "group", 0, {{{0}}}, "fresh"},
        {"commitlab", "group", 0, {{{0}}}, "recycle"},
    };
    size_t nseries = sizeof series / sizeof *series;

    if (wants_help(argc, argv)) {
        tour_usage();
        return 0;
    }
    parse_tour_args(argc, argv, &o);
    /* Its directory claimed for the whole tour, and nothing of the user's
     * where a run directory would go. */
    struct bench_dirs dirs;
    const char *runs[sizeof series / sizeof *series];
    char paths[sizeof series / sizeof *series][4200];
    size_t nruns = 0;
    for (size_t s = 0; s < nseries; s++) {
        size_t k;
        snprintf(paths[nruns], sizeof paths[nruns], "%.4000s/%s.db", o.dir, series[s].engine);
        for (k = 0; k < nruns && strcmp(runs[k], paths[nruns]) != 0; k++)
            ;
        if (k == nruns) {
            runs[nruns] = paths[nruns];
            nruns++;
        }
    }
    int rc = bench_dirs_claim(&dirs, "tour", "--dir", o.dir);
    if (rc == 0)
        rc = bench_dirs_check(&dirs, runs, nruns, 0);
    if (rc) {
        bench_dirs_release(&dirs);
        return rc;
    }
    FILE *jf = fopen(o.out, "w");
    if (!jf) {
        fprintf(stderr, "commitlab tour: %s: %s\n", o.out, strerror(errno));
        bench_dirs_release(&dirs);
        return 1;
    }
    bench_stop_on_signals();
    print_preamble(&o);

    /* the rows: each series at every client count, the segment pair at one */
    struct tour_item items[sizeof series / sizeof *series * NCLIENTS];
    size_t nitems = 0;
    for (size_t s = 0; s < nseries; s++)
        for (size_t c = 0; c < NCLIENTS; c++)
            if ((!series[s].segments && !series[s].pipeline) || tour_clients[c] == SEG_CLIENTS)
                items[nitems++] = (struct tour_item){&series[s], c};
    struct tour t = {items, &o, jf, 0};
    struct ut_progress up;
    ut_progress_init(&up, o.quiet, nitems, 0.5 + o.secs + 0.5);
    struct bench_sweep sw = {.n = nitems, .run = run_row, .ctx = &t, .progress = &up, .label = row_label};
    bench_sweep_run(&sw);
    fclose(jf);
    tour_remove_reused(series, nseries, &o);
    bench_dirs_release(&dirs); /* --dir itself only when the tour made it and left it empty */
    if (bench_stop_signal()) { /* the rows so far are in the table and the JSON lines: no findings, no report */
        ut_progress_clear(&up);
        bench_stop_report("tour", "its run directories are removed");
        free_rows(series, nseries);
        return 128 + bench_stop_signal();
    }

    print_findings(series, nseries, ut_now() - up.start, o.out);
    free_rows(series, nseries);
    rc = tour_report(o.out) ? 1 : 0;
    return t.failed ? 1 : rc;
}
