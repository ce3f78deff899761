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
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_env.h"
#include "cli.h"
#include "drivers/driver.h"

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
    if (c.out_path) {
        c.so.jsonl = fopen(c.out_path, "a");
        if (!c.so.jsonl) {
            fprintf(stderr, "commitlab bench: --out %s: %s\n", c.out_path, strerror(errno));
            bench_cli_free(&c);
            return 1;
        }
    }
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
    if (c.so.jsonl && fclose(c.so.jsonl)) {
        fprintf(stderr, "commitlab bench: --out %s: %s\n", c.out_path, strerror(errno));
        failed++;
    }
    /* remove the parent directory if the runs left it empty */
    if (!c.base.reuse)
        rmdir(c.base.dir);
    int interrupted = bench_interrupted();
    bench_cli_free(&c);
    return interrupted ? 130 : failed ? 1 : 0;
}
