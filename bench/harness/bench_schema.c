/*
 * bench_schema.c -- the knobs of a commitlab-bench/1 line's "config"
 * object, its commit phases, and the order of engines and policies
 * (bench_schema.h).  The defaults here are what the line holds for a knob
 * that was not given; check_schema holds them to what bench_config_json
 * writes for bench_config_defaults, so the two cannot drift apart.
 */
#include <string.h>

#include "bench_schema.h"
#include "commitlab.h"
#include "drivers/driver.h"

const struct bench_schema_knob bench_schema_knobs[] = {
    {"duration_s", "--duration", "duration", BS_NUM, "10.0"},
    {"txns", "--txns", "txns", BS_NUM, "null"},
    {"warmup_s", "--warmup", "warmup", BS_NUM, "1.0"},
    {"dir", "--dir", "dir", BS_STR, "\"commitlab-bench.d\""},
    {"reuse", "--reuse", "reuse", BS_IF_TRUE, "false"},
    {"preload", "--no-preload", "preload", BS_IF_FALSE, "true"},
    {"verify", "--verify", "verify", BS_IF_TRUE, "false"},
    {"seed", "--seed", "seed", BS_NUM, "1"},
    {"value_size", "--value-size", "value-size", BS_NUM, "100"},
    {"keys", "--keys", "keys", BS_NUM, "100000"},
    {"dist", "--dist", "dist", BS_STR, "\"uniform\""},
    {"zipf_theta", "--zipf-theta", "zipf-theta", BS_NUM, "null"},  /* present only with --dist zipf */
    {"ops_per_txn", "--ops-per-txn", "ops-per-txn", BS_NUM, "1"},
    {"read_ratio", "--read-ratio", "read-ratio", BS_NUM, "0.0"},
    {"scale", "--scale", "scale", BS_NUM, "1"},
    {"rate_tps", "--rate", "rate", BS_NUM, "null"},
    {"sync_method", "--sync-method", "sync-method", BS_STR, "\"fdatasync\""},
    {"elr", "--elr", "elr", BS_ONOFF, "true"},
    {"segments", "--segments", "segments", BS_STR, "\"fresh\""},
    {"segment_init", "--segment-init", "segment-init", BS_STR, "\"zero\""},
    {"segment_size", "--segment-size", "segment-size", BS_SIZE, "16777216"},
    {"prealloc", "--prealloc", "prealloc", BS_NUM, "0"},
    {"recycle_max", "--recycle-max", "recycle-max", BS_NUM, "4"},
    {"checkpoint_bytes", "--checkpoint-bytes", "checkpoint-bytes", BS_SIZE, "67108864"},
    {"commit_delay_us", "--commit-delay", "commit-delay", BS_NUM, "0"},
    {"commit_siblings", "--commit-siblings", "commit-siblings", BS_NUM, "5"},
    {"interval_ms", "--interval", "interval", BS_NUM, "200"},
    {"uring_depth", "--uring-depth", "uring-depth", BS_NUM, "4"},
    {"max_batch", "--max-batch", "max-batch", BS_SIZE, "0"},
    {"flusher_spin_us", "--flusher-spin", "flusher-spin", BS_NUM, "0"},
    {"sync_latency_us", "--sync-latency", "sync-latency", BS_NUM, "0"},
    {"cache_bytes", "--cache", "cache", BS_SIZE, "67108864"},
    {"lmdb_flags", "--lmdb-flags", "lmdb-flags", BS_LIST, "[]"},
    {"sqlite_sync", "--sqlite-sync", "sqlite-sync", BS_STR, "null"},
    {"rocksdb_write", "--rocksdb-write", "rocksdb-write", BS_STR, "\"default\""},
};
const size_t bench_schema_nknobs = sizeof bench_schema_knobs / sizeof *bench_schema_knobs;

const struct bench_schema_knob *bench_schema_knob(const char *key)
{
    for (size_t i = 0; i < bench_schema_nknobs; i++)
        if (strcmp(bench_schema_knobs[i].key, key) == 0)
            return &bench_schema_knobs[i];
    return NULL;
}

const char *const bench_phase_names[BENCH_PHASES] = {"lock", "append", "apply", "queue", "write", "sync", "wakeup"};

int bench_schema_engine_rank(const char *engine)
{
    size_t i;
    for (i = 0; i < bench_ndrivers; i++)
        if (strcmp(bench_drivers[i]->name, engine) == 0)
            break;
    return (int)i;
}

int bench_schema_sync_rank(const char *sync)
{
    enum cl_sync_policy p;
    return cl_sync_policy_parse(sync, &p) == 0 ? (int)p : CL_SYNC_NPOLICIES;
}
