/*
 * tour.c -- `commitlab tour`, the default job: in under three minutes, a
 * real comparison of commit paths on the filesystem of the current
 * directory, through the same harness as `commitlab bench`.
 *
 * Rows: commitlab with every durable sync policy (a policy the library
 * does not build yet is one n/a row) and with none; LMDB durable and
 * MDB_NOSYNC; RocksDB sync=true; SQLite synchronous=FULL when built.  Each
 * at 1, 16 and 64 clients; then commitlab group commit at 16 clients with
 * 1 MiB segments and a checkpoint every 4 MiB, fresh versus recycled
 * segments.  Every row: kv workload (16-byte keys, 100-byte values,
 * 100,000 keys, one put per transaction), 3 s measured after 0.5 s of
 * warm-up, in a directory beside the current one (same filesystem), which
 * is removed afterwards.  The JSON lines go to tour.jsonl.  Then a few
 * sentences say what the table shows, with its numbers.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "bench_env.h"
#include "cli.h"
#include "drivers/driver.h"

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
        if (!strcmp(s[i].engine, engine) && !strcmp(s[i].sync, sync) && s[i].lmdb_flags == flags && !s[i].segments)
            for (size_t c = 0; c < NCLIENTS; c++)
                if (tour_clients[c] == clients && s[i].rows[c].ran && s[i].rows[c].res.status == RUN_OK)
                    return &s[i].rows[c];
    return NULL;
}

static double tps(const struct tour_row *r)
{
    return r ? r->res.tps : 0;
}

int cmd_tour(int argc, char **argv)
{
    double secs = 3.0;
    char dirbuf[4200];
    const char *dir = NULL, *out = "tour.jsonl";
    int quiet = 0;

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: commitlab tour [--seconds S] [--dir D] [--out FILE] [--quiet]\n\n"
                   "The default job: commitlab's sync policies, LMDB, RocksDB and SQLite side by side\n"
                   "at 1, 16 and 64 clients (one put per transaction), then fresh against recycled\n"
                   "WAL segments, on the filesystem of the current directory; a table, a few\n"
                   "sentences on what it shows, and JSON lines.\n\n"
                   "  --seconds S   measured seconds per row (default 3)\n"
                   "  --dir D       where the runs go (default: commitlab-tour.d beside the current\n"
                   "                directory, removed afterwards)\n"
                   "  --out FILE    the JSON lines (default tour.jsonl, replaced)\n"
                   "  --quiet       no progress line\n");
            return 0;
        }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            char *end;
            secs = strtod(argv[++i], &end);
            if (*end || !(secs > 0 && secs <= 600))
                cli_usage_error("tour", "--seconds: '%s' is not accepted; expected seconds in (0, 600]", argv[i]);
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else {
            cli_usage_error("tour", "unknown argument '%s' (accepted: --seconds S, --dir D, --out FILE, --quiet)",
                            argv[i]);
        }
    }
    if (!dir) {
        tour_dir(dirbuf, sizeof dirbuf);
        dir = dirbuf;
    }

    struct tour_series series[] = {
        {"commitlab", "commit", 0, {{{0}}}}, {"commitlab", "group", 0, {{{0}}}}, {"commitlab", "uring", 0, {{{0}}}},
        {"commitlab", "none", 0, {{{0}}}},   {"lmdb", "commit", 0, {{{0}}}},     {"lmdb", "none", 0, {{{0}}}},
        {"rocksdb", "commit", 0, {{{0}}}},   {"sqlite", "commit", 0, {{{0}}}},
        {"commitlab", "group", 0, {{{0}}}, "fresh"}, {"commitlab", "group", 0, {{{0}}}, "recycle"},
    };
    size_t nseries = sizeof series / sizeof *series;

    FILE *jf = fopen(out, "w");
    if (!jf) {
        fprintf(stderr, "commitlab tour: %s: %s\n", out, strerror(errno));
        return 1;
    }
    printf("commitlab tour: one put per transaction (16-byte keys, 100-byte values, 100,000 keys),\n"
           "%.0f s measured per row after 0.5 s warm-up, clients are threads; in %s\n", secs, dir);
    bench_warn_volatile(dir);
    {
        struct bench_env e;
        bench_env_probe(dir, &e);
        printf("filesystem: %s on %s (%s), kernel %s, %d cores\n\n", e.fs_type,
               e.mount_source[0] ? e.mount_source : "?", e.mount_options, e.kernel, e.cores);
    }
    bench_table_header(stdout);
    fflush(stdout);

    unsigned total = 0, done = 0;
    for (size_t s = 0; s < nseries; s++)
        total += series[s].segments ? 1 : NCLIENTS;
    double t_start = bench_now();
    int tty = !quiet && isatty(STDERR_FILENO);
    unsigned failed = 0;

    for (size_t s = 0; s < nseries; s++) {
        struct tour_series *se = &series[s];
        const struct bench_driver *d = bench_driver_find(se->engine);
        if (!d || !d->built) {
            printf("%-9s %-8s %7s %13s  (not built: install its -dev package and rebuild)\n", se->engine, se->sync,
                   "-", "n/a");
            done += NCLIENTS;
            continue;
        }
        if (se->segments && !strcmp(se->segments, "fresh"))
            printf("-- the same log with 1 MiB segments and a checkpoint every 4 MiB: fresh versus recycled "
                   "segments --\n");
        for (size_t c = 0; c < NCLIENTS; c++) {
            struct tour_row *row = &se->rows[c];
            if (se->segments && tour_clients[c] != SEG_CLIENTS)
                continue;
            bench_config_defaults(&row->cfg);
            row->cfg.engine = se->engine;
            row->cfg.sync = se->sync;
            row->cfg.clients = tour_clients[c];
            row->cfg.duration = secs;
            row->cfg.warmup = 0.5;
            row->cfg.dir = dir;
            if (se->segments) {
                row->cfg.segments = se->segments;
                row->cfg.segment_size = SEG_SIZE;
                row->cfg.checkpoint_bytes = SEG_CHECKPOINT;
                row->cfg.given[K_SEGMENTS] = row->cfg.given[K_SEGMENT_SIZE] = row->cfg.given[K_CHECKPOINT] = 1;
                snprintf(row->cfg.varying, sizeof row->cfg.varying, "segments=%s", se->segments);
            }
            if (tty) {
                char label[200];
                bench_label(&row->cfg, label, sizeof label);
                double el = bench_now() - t_start;
                fprintf(stderr, "\r\033[K[run %u of %u] %s  elapsed %.0f s", done + 1, total, label, el);
                fflush(stderr);
            }
            bench_run(&row->cfg, &row->res, NULL, NULL);
            row->ran = 1;
            done++;
            if (tty)
                fprintf(stderr, "\r\033[K");
            bench_table_row(stdout, &row->cfg, &row->res);
            fflush(stdout);
            if (bench_json_append(jf, &row->cfg, &row->res, done, total))
                failed++;
            if (row->res.status == RUN_ERROR)
                failed++;
            /* A configuration the engine cannot do is n/a at any client count:
             * one row says so. */
            if (row->res.status == RUN_NA) {
                done += (unsigned)(NCLIENTS - c - 1);
                break;
            }
        }
    }
    fclose(jf);
    rmdir(dir);

    /* What the table shows, in words, with its numbers. */
    const struct tour_row *c1 = row_of(series, nseries, "commitlab", "commit", 0, 1);
    const struct tour_row *c64 = row_of(series, nseries, "commitlab", "commit", 0, 64);
    const struct tour_row *n1 = row_of(series, nseries, "commitlab", "none", 0, 1);
    const struct tour_row *l1 = row_of(series, nseries, "lmdb", "commit", 0, 1);
    const struct tour_row *l64 = row_of(series, nseries, "lmdb", "commit", 0, 64);
    const struct tour_row *ln1 = row_of(series, nseries, "lmdb", "none", 0, 1);
    const struct tour_row *r1 = row_of(series, nseries, "rocksdb", "commit", 0, 1);
    const struct tour_row *r64 = row_of(series, nseries, "rocksdb", "commit", 0, 64);
    printf("\nWhat this shows (%.0f s in all; JSON lines in %s):\n", bench_now() - t_start, out);
    if (c1 && l1)
        printf("- One client, durable: commitlab --sync commit (one fdatasync per commit) runs at %.2fx LMDB,\n"
               "  which makes two durability points per commit (data pages, then the meta page).\n",
               tps(c1) / tps(l1));
    if (c1 && n1)
        printf("- Not syncing at all is %.0fx faster than syncing every commit (%.0f vs %.0f tps): that gap\n"
               "  is what group commit tries to close without giving up durability.\n",
               tps(n1) / tps(c1), tps(n1), tps(c1));
    if (l1 && l64)
        printf("- LMDB durable %s %.0f tps at 1 client to %.0f at 64: one writer at a time,\n"
               "  each commit paying its own syncs, so more clients only queue.\n",
               tps(l64) / tps(l1) < 1.5 ? "stays flat, from" : "goes from", tps(l1), tps(l64));
    if (c64 && l64) {
        double cps = c64->res.syncs > 0 ? (double)c64->res.txns / (double)c64->res.syncs : 0;
        printf("- At 64 clients commitlab --sync commit reaches %.0f tps = %.1fx LMDB; %.1f commits share each\n"
               "  sync, because a committer queued behind a sync finds its record already durable.\n",
               tps(c64), tps(c64) / tps(l64), cps);
    }
    for (size_t s = 0; s < nseries; s++) {
        const char *p = series[s].sync;
        if (strcmp(series[s].engine, "commitlab") || (strcmp(p, "group") && strcmp(p, "uring")) ||
            series[s].segments)
            continue;
        const struct tour_row *g64 = row_of(series, nseries, "commitlab", p, 0, 64);
        if (g64 && l64)
            printf("- %s commit at 64 clients: %.0f tps = %.1fx LMDB durable.\n",
                   strcmp(p, "group") == 0 ? "Group" : "io_uring", tps(g64), tps(g64) / tps(l64));
        else if (series[s].rows[0].ran && series[s].rows[0].res.status == RUN_NA)
            printf("- --sync %s is n/a: %s.\n", p, series[s].rows[0].res.reason);
    }
    if (r1 && r64)
        printf("- RocksDB sync=true goes from %.0f tps at 1 client to %.0f at 64 (%.1fx): its write thread\n"
               "  batches concurrent writers behind one WAL sync.\n", tps(r1), tps(r64), tps(r64) / tps(r1));
    if (n1 && ln1)
        printf("- Without syncs the stores run at memory speed: commitlab %.0f tps, LMDB MDB_NOSYNC %.0f tps;\n"
               "  a power failure can lose whatever the OS had not yet written back.\n", tps(n1), tps(ln1));
    const struct tour_row *sf = NULL, *sr = NULL;
    for (size_t s = 0; s < nseries; s++)
        for (size_t c = 0; c < NCLIENTS; c++) {
            const struct tour_row *row = &series[s].rows[c];
            if (!series[s].segments || !row->ran || row->res.status != RUN_OK)
                continue;
            if (!strcmp(series[s].segments, "fresh"))
                sf = row;
            else
                sr = row;
        }
    if (sf && sr)
        printf("- WAL segments, group commit at %u clients: recycled %.0f tps vs fresh %.0f (%+.0f%%); the fresh\n"
               "  log waited %.1f ms in all for %lld new segments, the recycled one %.1f ms while reusing %lld\n"
               "  (one short run: `commitlab matrix` repeats it on ext4, XFS and btrfs, docs/recycling.md).\n",
               SEG_CLIENTS, tps(sr), tps(sf), (tps(sr) / tps(sf) - 1) * 100, (double)sf->res.segment_wait_us / 1e3,
               (long long)sf->res.segments_created, (double)sr->res.segment_wait_us / 1e3,
               (long long)sr->res.segments_reused);

    for (size_t s = 0; s < nseries; s++)
        for (size_t c = 0; c < NCLIENTS; c++)
            if (series[s].rows[c].ran)
                bench_result_free(&series[s].rows[c].res);
    return failed ? 1 : 0;
}
