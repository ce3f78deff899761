/*
 * bench_knobs.h -- every knob of a benchmark run, one row each: the one
 * table the harness is built from, after fio's options.c (one table of
 * name, type, offset, default and help:
 * https://github.com/axboe/fio/blob/master/options.c).
 *
 * From these rows come the enum of knobs (K_SEGMENT_SIZE) and the fields
 * of struct bench_config (bench_config.h); the option parser, the checks
 * of every value and their one-line errors, the defaults, the --help
 * lines, and the order of the cross product (bench_config.c); the
 * "config" object of a JSON line and the CSV's knob columns
 * (bench_config.c, bench_output.c); and the report's labels and the
 * defaults it reads old lines by.  Adding a knob is a row here, plus the
 * mapping in each driver that can express it (drivers/driver.h); an
 * engine whose driver does not declare a knob runs n/a when it is given.
 *
 * Two kinds of row, in the order of the JSON line's config members:
 *
 *   X(ID, field, C type, type, flag, JSON key, default, choices, min, max,
 *     flags, owner, sweep, group, help)
 *       a knob of the harness's own (the run, the workloads, one engine's
 *       own settings): every column here;
 *
 *   L(ID, field, C type, type, flag, JSON key, option, flags, owner, sweep)
 *       an option of libcommitlab, a field of struct cl_options: the
 *       library describes it (engine/options.c, read through cl_option_info
 *       in commitlab.h), and the flag takes its default, its range, an
 *       enum's words and its help line from there -- the help prefixed with
 *       the policy that reads it ("group: ...") -- when the table is first
 *       read, so the flag accepts exactly what cl_open would.  Its --help
 *       section is the commit path's.
 *
 *   type     how the flag's value is read (enum bench_knob_type)
 *   default  as the flag would take it ("16M"); NULL: none (0, NULL)
 *   choices  the accepted words (KT_WORD, KT_INDEX, KT_ONOFF, KT_SET)
 *   min, max the accepted range of numbers (KF_OPEN_MIN/MAX: exclusive)
 *   option   the field of struct cl_options it sets ("cache_size" for --cache)
 *   flags    KF_* (bench_config.h)
 *   owner    the engine whose knob it is: the JSON member is null for
 *            another engine unless the knob was given; NULL: every engine's
 *   sweep    the knob's place in the cross product of comma lists, the
 *            outermost first (clients last, so that a table reads as "this
 *            engine and policy at 1, 16, 64 clients"); 0: not a list
 *   group    the --help section
 *
 * check_schema holds the L rows and the library's table to each other:
 * every option but create (which a run sets itself) is a flag, with the
 * library's default and range.
 */
#ifndef CL_BENCH_KNOBS_H
#define CL_BENCH_KNOBS_H

/* clang-format off */
#define BENCH_KNOBS(X, L)                                                                                           \
    /* ---- what runs, how long, where ---- */                                                                  \
    X(ENGINE, engine, const char *, KT_WORD, "--engine", "engine", "commitlab",                                  \
      "commitlab,lmdb,rocksdb,sqlite,raw", 0, 0, KF_LIST | KF_LABEL | KF_SERIES | KF_CSV, NULL, 2, KG_RUN,         \
      "what runs (--list-engines: which are built, and how each maps the knobs)")                             \
    X(WORKLOAD, workload, const char *, KT_WORD, "--workload", "workload", "kv", "kv,tpcb", 0, 0,                \
      KF_LIST | KF_SERIES | KF_CSV, NULL, 1, KG_RUN, "the transaction (tpcb: pgbench's TPC-B-like one)")             \
    X(CLIENTS, clients, unsigned, KT_UINT, "--clients", "clients", "1", NULL, 1, 1024,                           \
      KF_LIST | KF_LABEL | KF_SERIES | KF_CSV, NULL, 29, KG_RUN, "client threads, e.g. 1,16,64")                  \
    X(DURATION, duration, double, KT_SECS, "--duration", "duration_s", "10", NULL, 0, 86400,                     \
      KF_OPEN_MIN | KF_NULL_WITH_TXNS | KF_CLEARS_TXNS, NULL, 0, KG_RUN, "measured seconds")                      \
    X(TXNS, txns, uint64_t, KT_COUNT, "--txns", "txns", NULL, NULL, 1, 0, KF_NULL_ZERO, NULL, 0, KG_RUN,         \
      "measure N transactions instead of a duration")                                                            \
    X(WARMUP, warmup, double, KT_SECS, "--warmup", "warmup_s", "1", NULL, 0, 3600, 0, NULL, 0, KG_RUN,           \
      "unmeasured seconds first")                                                                                \
    X(DIR, dir, const char *, KT_PATH, "--dir", "dir", "commitlab-bench.d", NULL, 0, 0, 0, NULL, 0, KG_RUN,     \
      "parent of the run directories; each run uses a fresh D/ENGINE.db, removed afterwards")                    \
    X(REUSE, reuse, int, KT_TRUE, "--reuse", "reuse", NULL, NULL, 0, 0, 0, NULL, 0, KG_RUN,                      \
      "keep D/ENGINE.db between runs; skip a preload it already has")                                            \
    X(PRELOAD, preload, int, KT_FALSE, "--no-preload", "preload", "on", NULL, 0, 0, 0, NULL, 0, KG_RUN,          \
      "start from an empty store (kv)")                                                                          \
    X(VERIFY, verify, int, KT_TRUE, "--verify", "verify", NULL, NULL, 0, 0, 0, NULL, 0, KG_RUN,                  \
      "after the run, reopen the store and read every key back")                                                 \
    X(SEED, seed, uint64_t, KT_SEED, "--seed", "seed", "1", NULL, 0, 0, 0, NULL, 0, KG_RUN, "PRNG seed")         \
    /* ---- the kv workload ---- */                                                                             \
    X(VALUE_SIZE, value_size, uint32_t, KT_UINT, "--value-size", "value_size", "100", NULL, 8, 4096,             \
      KF_LIST | KF_KV, NULL, 20, KG_KV, "value bytes (keys are 16 bytes)")                                       \
    X(KEYS, keys, uint64_t, KT_UINT, "--keys", "keys", "100000", NULL, 1, 1000000000, KF_LIST | KF_KV, NULL,     \
      21, KG_KV, "the key space")                                                                                \
    X(DIST, zipf, int, KT_INDEX, "--dist", "dist", "uniform", "uniform,zipf", 0, 0, KF_LIST | KF_KV, NULL, 22,  \
      KG_KV, "how keys are drawn")                                                                               \
    X(ZIPF_THETA, zipf_theta, double, KT_NUM, "--zipf-theta", "zipf_theta", "0.99", NULL, 0, 1,                 \
      KF_OPEN_MIN | KF_OPEN_MAX | KF_KV | KF_IF_ZIPF, NULL, 0, KG_KV, "--dist zipf: the skew")                    \
    X(OPS_PER_TXN, ops_per_txn, uint32_t, KT_UINT, "--ops-per-txn", "ops_per_txn", "1", NULL, 1, 100000,         \
      KF_LIST | KF_KV, NULL, 23, KG_KV, "operations per transaction")                                            \
    X(READ_RATIO, read_ratio, double, KT_RATIO, "--read-ratio", "read_ratio", "0", NULL, 0, 1, KF_LIST | KF_KV,  \
      NULL, 24, KG_KV, "the fraction of operations that are reads")                                              \
    /* ---- the tpcb workload ---- */                                                                           \
    X(SCALE, scale, uint32_t, KT_UINT, "--scale", "scale", "1", NULL, 1, 10000, KF_LIST | KF_TPCB, NULL, 25,     \
      KG_TPCB, "branches, as pgbench -s")                                                                        \
    /* ---- the arrival process ---- */                                                                         \
    X(RATE, rate, uint32_t, KT_UINT, "--rate", "rate_tps", "0", NULL, 0, 10000000, KF_LIST | KF_NULL_ZERO, NULL, \
      28, KG_RUN, "open loop: transactions per second offered across the clients, Poisson arrivals, latency "     \
      "from each scheduled start (0: closed loop, each client back to back)")                                    \
    /* ---- the commit path: commitlab's, mapped by the other engines where they can ---- */                    \
    L(SYNC, sync, const char *, KT_POLICY, "--sync", "sync", "sync",                                            \
      KF_LIST | KF_LABEL | KF_SERIES | KF_CSV | KF_ENGINE, NULL, 3)                                              \
    L(SYNC_METHOD, sync_method, const char *, KT_WORD, "--sync-method", "sync_method", "method",                 \
      KF_LIST | KF_CSV | KF_ENGINE, "commitlab", 4)                                                              \
    L(ELR, elr, int, KT_ONOFF, "--elr", "elr", "elr", KF_LIST | KF_ENGINE, "commitlab", 5)                       \
    L(SEGMENTS, segments, const char *, KT_WORD, "--segments", "segments", "segments", KF_LIST | KF_ENGINE,      \
      "commitlab", 6)                                                                                            \
    L(SEGMENT_INIT, segment_init, const char *, KT_WORD, "--segment-init", "segment_init", "segment_init",       \
      KF_LIST | KF_ENGINE, "commitlab", 7)                                                                       \
    L(SEGMENT_SIZE, segment_size, uint64_t, KT_SIZE, "--segment-size", "segment_size", "segment_size",          \
      KF_LIST | KF_ENGINE, "commitlab", 8)                                                                       \
    L(PREALLOC, prealloc, uint32_t, KT_UINT, "--prealloc", "prealloc", "prealloc", KF_LIST | KF_ENGINE,          \
      "commitlab", 9)                                                                                            \
    L(RECYCLE_MAX, recycle_max, uint32_t, KT_UINT, "--recycle-max", "recycle_max", "recycle_max",                \
      KF_LIST | KF_ENGINE, "commitlab", 10)                                                                      \
    L(COLD_RECYCLE, cold_recycle, int, KT_TRUE, "--cold-recycle", "cold_recycle", "cold_recycle", KF_ENGINE,     \
      "commitlab", 0)                                                                                            \
    L(CHECKPOINT, checkpoint_bytes, uint64_t, KT_SIZE, "--checkpoint-bytes", "checkpoint_bytes",                 \
      "checkpoint_bytes", KF_LIST | KF_ENGINE, "commitlab", 11)                                                  \
    L(NO_FINAL_CHECKPOINT, no_final_checkpoint, int, KT_TRUE, "--no-final-checkpoint", "no_final_checkpoint",    \
      "no_final_checkpoint", KF_ENGINE, "commitlab", 0)                                                          \
    L(COMMIT_DELAY, commit_delay_us, uint32_t, KT_UINT, "--commit-delay", "commit_delay_us", "commit_delay_us",  \
      KF_LIST | KF_ENGINE, "commitlab", 12)                                                                      \
    L(COMMIT_SIBLINGS, commit_siblings, uint32_t, KT_UINT, "--commit-siblings", "commit_siblings",               \
      "commit_siblings", KF_LIST | KF_ENGINE, "commitlab", 13)                                                   \
    L(INTERVAL, interval_ms, uint32_t, KT_UINT, "--interval", "interval_ms", "interval_ms", KF_LIST | KF_ENGINE, \
      "commitlab", 14)                                                                                           \
    L(URING_DEPTH, uring_depth, uint32_t, KT_UINT, "--uring-depth", "uring_depth", "uring_depth",                \
      KF_LIST | KF_ENGINE, "commitlab", 15)                                                                      \
    L(URING_SYNC, uring_sync, const char *, KT_WORD, "--uring-sync", "uring_sync", "uring_sync",                 \
      KF_LIST | KF_ENGINE, "commitlab", 21)                                                                      \
    X(PIPELINE, pipeline, uint32_t, KT_UINT, "--pipeline", "pipeline", "1", NULL, 1, 4096,                       \
      KF_LIST | KF_ENGINE | KF_DEFAULT_ANY,                                                                    \
      "commitlab", 22, KG_COMMIT,                                                                                  \
      "transactions each client keeps awaiting durability (cl_commit_async); 1: one blocking commit at a time")    \
    L(MAX_BATCH, max_batch, uint64_t, KT_SIZE, "--max-batch", "max_batch", "max_batch", KF_LIST | KF_ENGINE,     \
      "commitlab", 16)                                                                                           \
    L(FLUSHER_SPIN, flusher_spin_us, uint32_t, KT_UINT, "--flusher-spin", "flusher_spin_us", "flusher_spin_us",  \
      KF_LIST | KF_ENGINE, "commitlab", 17)                                                                      \
    L(SYNC_LATENCY, sync_latency_us, uint32_t, KT_UINT, "--sync-latency", "sync_latency_us", "sync_latency_us",  \
      KF_LIST | KF_ENGINE, "commitlab", 18)                                                                      \
    L(CACHE, cache_bytes, uint64_t, KT_SIZE, "--cache", "cache_bytes", "cache_size", KF_LIST | KF_ENGINE,        \
      "commitlab", 19)                                                                                           \
    /* ---- one engine's own ---- */                                                                            \
    X(LMDB_FLAGS, lmdb_flags, unsigned, KT_SET, "--lmdb-flags", "lmdb_flags", NULL,                              \
      "nometasync,writemap,mapasync", 0, 0, KF_ENGINE, "lmdb", 0, KG_ENGINE,                                     \
      "LMDB's environment flags (one set, not a list)")                                                          \
    X(SQLITE_SYNC, sqlite_sync, const char *, KT_WORD, "--sqlite-sync", "sqlite_sync", NULL, "full,normal,off",  \
      0, 0, KF_LIST | KF_ENGINE, "sqlite", 26, KG_ENGINE, "SQLite's synchronous (default: from --sync)")             \
    X(ROCKSDB_WRITE, rocksdb_write, const char *, KT_WORD, "--rocksdb-write", "rocksdb_write", "default",        \
      "default,pipelined,unordered,manual-flush", 0, 0, KF_LIST | KF_ENGINE, "rocksdb", 27, KG_ENGINE,           \
      "RocksDB's write path: WriteOptions.sync per --sync, enable_pipelined_write, unordered_write "            \
      "(kv only), or manual_wal_flush with FlushWAL(sync) per durable commit")
/* clang-format on */

#endif
