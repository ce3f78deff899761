/*
 * bench_cmd.c -- `commitlab bench`: its --help, and the command itself:
 * the options parsed and expanded into the cross product of runs
 * (harness/bench_config.c), run one after another (harness/bench_sweep.c)
 * with a table (or CSV) on stdout, JSON lines appended to --out, and a
 * progress line on stderr.  The runner is harness/bench_run.c; the
 * engines are harness/drivers/driver_*.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_dirs.h"
#include "bench_env.h"
#include "cli.h"
#include "drivers/driver.h"
#include "ut_scratch.h"

static void usage(FILE *f)
{
    char sync_list[256];
    size_t j = 0;
    for (const char *p = bench_sync_choices(); *p && j + 3 < sizeof sync_list; p++) {
        sync_list[j++] = *p;
        if (*p == ',')
            sync_list[j++] = ' ';
    }
    sync_list[j] = 0;
    fprintf(f,
            "usage: commitlab bench [options]     (comma lists run the cross product)\n"
            "\n"
            "  --engine LIST        commitlab, lmdb, rocksdb, sqlite (default commitlab);\n"
            "                       --list-engines says which are built and how knobs map\n"
            "  --workload LIST      kv (default) or tpcb (pgbench's TPC-B-like transaction)\n"
            "  --clients LIST       client threads (default 1), e.g. 1,16,64\n"
            "  --duration S         measured seconds (default 10), or\n"
            "  --txns N             measure N transactions\n"
            "  --warmup S           unmeasured seconds first (default 1)\n"
            "  --rate LIST          open loop: transactions per second offered across the clients,\n"
            "                       Poisson arrivals; latency from each scheduled start (default:\n"
            "                       closed loop, each client back to back)\n"
            "  --repeat N           run the whole list N times, round by round, each round in a\n"
            "                       shuffled order (default 1); then\n"
            "                       each configuration's median (min-max) and, per client count,\n"
            "                       the best configuration and its margin over the next best\n"
            "  --dir D              parent of the run directories (default ./commitlab-bench.d);\n"
            "                       each run uses a fresh D/ENGINE.db, removed afterwards\n"
            "  --reuse              keep D/ENGINE.db between runs; skip a preload it already has\n"
            "  --no-preload         start from an empty store (kv)\n"
            "  --verify             after the run, reopen the store and read every key back\n"
            "  --seed N             PRNG seed (default 1)\n"
            "kv workload:\n"
            "  --value-size LIST    bytes (default 100; keys are 16 bytes)\n"
            "  --keys LIST          key space (default 100000)\n"
            "  --dist LIST          uniform (default) or zipf; --zipf-theta X (default 0.99)\n"
            "  --ops-per-txn LIST   operations per transaction (default 1)\n"
            "  --read-ratio LIST    fraction of operations that are reads (default 0)\n"
            "tpcb workload:\n"
            "  --scale LIST         branches, as pgbench -s (default 1)\n"
            "commit path (commitlab maps all; other engines what they can, else n/a):\n"
            "  --sync LIST          %s (default commit)\n"
            "  --sync-method LIST   fdatasync (default), fsync, dsync, direct\n"
            "  --elr LIST           on (default), off\n"
            "  --segments LIST      fresh (default), recycle (rename retired segments for reuse)\n"
            "  --recycle-max LIST   recycle: future segments kept at most (default 4)\n"
            "  --segment-init LIST  zero (default), sparse, fallocate (fresh segments)\n"
            "  --segment-size LIST  default 16M\n"
            "  --prealloc LIST      segments a background thread keeps ready ahead (default 0)\n"
            "  --checkpoint-bytes LIST  log bytes between checkpoints (default 64M; 0 = at close)\n"
            "  --commit-delay LIST  us;  --commit-siblings LIST;  --interval LIST  ms (periodic)\n"
            "  --uring-depth LIST;  --sync-latency LIST  us (emulated);  --cache LIST  e.g. 64M\n"
            "  --max-batch LIST     group: log bytes one leader writes at most (default 0 = the buffer)\n"
            "  --flusher-spin LIST  flusher: us to spin before sleeping (default 0)\n"
            "  --lmdb-flags SET     nometasync,writemap,mapasync (one set, not a list)\n"
            "  --sqlite-sync LIST   full, normal, off (default: from --sync)\n"
            "  --rocksdb-write LIST default (WriteOptions.sync per --sync), pipelined\n"
            "                       (enable_pipelined_write), unordered (unordered_write; kv only),\n"
            "                       manual-flush (manual_wal_flush, FlushWAL(sync) per durable commit)\n"
            "output:\n"
            "  --out FILE.jsonl     append one JSON object per run (docs/bench.md)\n"
            "  --format table|csv   stdout format (default table)\n"
            "  --quiet              no progress line on stderr\n",
            sync_list);
}

/* The run directory of each engine in the sweep (D/ENGINE.db), checked
 * before the first run. */
static int bench_check_run_dirs(struct bench_dirs *d, const struct bench_cli *c)
{
    const char **paths = calloc(c->n ? c->n : 1, sizeof *paths);
    size_t np = 0;
    int rc = 0;
    if (!paths)
        return 1;
    for (size_t i = 0; i < c->n; i++) {
        char *p = NULL;
        if (asprintf(&p, "%s/%s.db", c->cfgs[i].dir, c->cfgs[i].engine) < 0) {
            rc = 1;
            break;
        }
        size_t k;
        for (k = 0; k < np && strcmp(paths[k], p) != 0; k++)
            ;
        if (k < np)
            free(p);
        else
            paths[np++] = p;
    }
    if (!rc)
        rc = bench_dirs_check(d, paths, np, c->base.reuse);
    for (size_t k = 0; k < np; k++)
        free((char *)paths[k]);
    free(paths);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    struct bench_cli c;

    bench_cli_parse("bench", argc, argv, &c);
    c.repeat = c.repeat ? c.repeat : 1;
    if (c.help) {
        usage(stdout);
        bench_cli_free(&c);
        return 0;
    }
    if (c.list_engines) {
        bench_list_engines(stdout);
        bench_cli_free(&c);
        return 0;
    }
    /* Before any work: --out writable, --dir claimed, and nothing of the
     * user's where a run directory would go. */
    int rc, out_created = 0;
    if (c.out_path && (rc = ut_output_check(c.out_path)) != 0) {
        fprintf(stderr, "commitlab bench: --out %s: %s\n", c.out_path, strerror(-rc));
        bench_cli_free(&c);
        return 2;
    }
    struct bench_dirs dirs;
    if ((rc = bench_dirs_claim(&dirs, "bench", "--dir", c.base.dir)) != 0 || (rc = bench_check_run_dirs(&dirs, &c)) != 0) {
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return rc;
    }
    if (c.out_path && !(c.so.jsonl = ut_output_open(c.out_path, &out_created))) {
        fprintf(stderr, "commitlab bench: --out %s: %s\n", c.out_path, strerror(errno));
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return 1;
    }
    bench_signals_install();
    bench_warn_volatile(c.base.dir);
    unsigned failed;
    if (c.repeat > 1) {
        if (bench_sweep_rounds(c.cfgs, c.n, c.repeat, c.base.seed, &c.so, &failed)) {
            fprintf(stderr, "commitlab bench: out of memory\n");
            bench_cli_free(&c);
            return 1;
        }
    } else {
        failed = bench_sweep(c.cfgs, c.n, &c.so, NULL);
    }
    if (c.so.jsonl && (rc = ut_output_close(c.so.jsonl, c.out_path, out_created)) != 0) {
        fprintf(stderr, "commitlab bench: --out %s: %s\n", c.out_path, strerror(-rc));
        failed++;
    }
    bench_dirs_release(&dirs); /* D itself only when this run made it and left it empty */
    int sig = bench_signal_caught();
    bench_cli_free(&c);
    return sig ? 128 + sig : bench_interrupted() ? 130 : failed ? 1 : 0;
}
