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
 * The rows are in the order of the JSON line's config members.  Columns:
 *
 *   X(ID, field, C type, type, flag, JSON key, default, choices, min, max,
 *     flags, owner, sweep, group, help)
 *
 *   type     how the flag's value is read (enum bench_knob_type)
 *   default  as the flag would take it ("16M"); NULL: none (0, NULL)
 *   choices  the accepted words (KT_WORD, KT_INDEX, KT_ONOFF, KT_SET)
 *   min, max the accepted range of numbers (KF_OPEN_MIN/MAX: exclusive); for
 *            a number that is an option of libcommitlab (and --sync-latency),
 *            the library's own range replaces them when the table is first
 *            read (engine/options.c), so a flag refuses what cl_open would
 *   flags    KF_* (bench_config.h)
 *   owner    the engine whose knob it is: the JSON member is null for
 *            another engine unless the knob was given; NULL: every engine's
 *   sweep    the knob's place in the cross product of comma lists, the
 *            outermost first (clients last, so that a table reads as "this
 *            engine and policy at 1, 16, 64 clients"); 0: not a list
 *   group    the --help section
 *
 * The defaults of commitlab's own knobs are the library's (cl_options_init);
 * check_schema holds them to it.
 */
#ifndef CL_BENCH_KNOBS_H
#define CL_BENCH_KNOBS_H

/* clang-format off */
#define BENCH_KNOBS(X)                                                                                            \
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
    X(SYNC, sync, const char *, KT_POLICY, "--sync", "sync", "commit", NULL, 0, 0,                               \
      KF_LIST | KF_LABEL | KF_SERIES | KF_CSV | KF_ENGINE, NULL, 3, KG_COMMIT,                                    \
      "when and by whom the log is made durable (the library's policies)")                                        \
    X(SYNC_METHOD, sync_method, const char *, KT_WORD, "--sync-method", "sync_method", "fdatasync",              \
      "fdatasync,fsync,dsync,direct,rwf-dsync", 0, 0, KF_LIST | KF_CSV | KF_ENGINE, "commitlab", 4, KG_COMMIT,    \
      "the call that makes bytes durable (rwf-dsync: pwritev2 with RWF_DSYNC, each write durable)")              \
    X(ELR, elr, int, KT_ONOFF, "--elr", "elr", "on", "on,off", 0, 0, KF_LIST | KF_ENGINE, "commitlab", 5,        \
      KG_COMMIT, "early lock release: the writer lock is released before the commit is durable")                 \
    X(SEGMENTS, segments, const char *, KT_WORD, "--segments", "segments", "fresh", "fresh,recycle", 0, 0,       \
      KF_LIST | KF_ENGINE, "commitlab", 6, KG_COMMIT, "new log segments, or retired ones renamed for reuse")      \
    X(SEGMENT_INIT, segment_init, const char *, KT_WORD, "--segment-init", "segment_init", "zero",               \
      "sparse,fallocate,zero", 0, 0, KF_LIST | KF_ENGINE, "commitlab", 7, KG_COMMIT,                             \
      "how a fresh segment is made")                                                                             \
    X(SEGMENT_SIZE, segment_size, uint64_t, KT_SIZE, "--segment-size", "segment_size", "16M", NULL, 64 << 10,    \
      1ull << 34, KF_LIST | KF_ENGINE, "commitlab", 8, KG_COMMIT, "bytes of one log segment")                     \
    X(PREALLOC, prealloc, uint32_t, KT_UINT, "--prealloc", "prealloc", "0", NULL, 0, 64, KF_LIST | KF_ENGINE,    \
      "commitlab", 9, KG_COMMIT, "segments a background thread keeps ready ahead")                               \
    X(RECYCLE_MAX, recycle_max, uint32_t, KT_UINT, "--recycle-max", "recycle_max", "4", NULL, 1, 64,             \
      KF_LIST | KF_ENGINE, "commitlab", 10, KG_COMMIT, "--segments recycle: retired segments kept at most")       \
    X(COLD_RECYCLE, cold_recycle, int, KT_TRUE, "--cold-recycle", "cold_recycle", NULL, NULL, 0, 0, KF_ENGINE,   \
      "commitlab", 0, KG_COMMIT, "--segments recycle: a retired segment leaves the page cache before its reuse, "  \
      "so a write of less than a page into it reads from the device first")                                      \
    X(CHECKPOINT, checkpoint_bytes, uint64_t, KT_SIZE, "--checkpoint-bytes", "checkpoint_bytes", "64M", NULL, 0, \
      1ull << 40, KF_LIST | KF_ENGINE, "commitlab", 11, KG_COMMIT, "log bytes between checkpoints (0: at close)") \
    X(COMMIT_DELAY, commit_delay_us, uint32_t, KT_UINT, "--commit-delay", "commit_delay_us", "0", NULL, 0,       \
      1000000, KF_LIST | KF_ENGINE, "commitlab", 12, KG_COMMIT,                                                  \
      "group: us a leader waits for followers (PostgreSQL's commit_delay)")                                      \
    X(COMMIT_SIBLINGS, commit_siblings, uint32_t, KT_UINT, "--commit-siblings", "commit_siblings", "5", NULL, 0, \
      1024, KF_LIST | KF_ENGINE, "commitlab", 13, KG_COMMIT,                                                     \
      "group: transactions in flight before a leader waits (commit_siblings)")                                   \
    X(INTERVAL, interval_ms, uint32_t, KT_UINT, "--interval", "interval_ms", "200", NULL, 1, 3600000,            \
      KF_LIST | KF_ENGINE, "commitlab", 14, KG_COMMIT, "periodic: ms between syncs")                             \
    X(URING_DEPTH, uring_depth, uint32_t, KT_UINT, "--uring-depth", "uring_depth", "4", NULL, 1,                 \
      CL_MAX_URING_DEPTH, KF_LIST | KF_ENGINE, "commitlab", 15, KG_COMMIT, "uring: chains in flight")           \
    X(URING_SYNC, uring_sync, const char *, KT_WORD, "--uring-sync", "uring_sync", "fsync", "fsync,rwf-dsync",   \
      0, 0, KF_LIST | KF_ENGINE, "commitlab", 21, KG_COMMIT,                                                      \
      "uring: a linked fsync after each chain's write, or writes that carry RWF_DSYNC themselves")                \
    X(PIPELINE, pipeline, uint32_t, KT_UINT, "--pipeline", "pipeline", "1", NULL, 1, 4096, KF_LIST | KF_ENGINE,   \
      "commitlab", 22, KG_COMMIT,                                                                                  \
      "transactions each client keeps awaiting durability (cl_commit_async); 1: one blocking commit at a time")    \
    X(MAX_BATCH, max_batch, uint64_t, KT_SIZE, "--max-batch", "max_batch", "0", NULL, 0, 1ull << 30,             \
      KF_LIST | KF_ENGINE, "commitlab", 16, KG_COMMIT, "group: log bytes one leader writes at most (0: the buffer)") \
    X(FLUSHER_SPIN, flusher_spin_us, uint32_t, KT_UINT, "--flusher-spin", "flusher_spin_us", "0", NULL, 0,       \
      1000000, KF_LIST | KF_ENGINE, "commitlab", 17, KG_COMMIT, "flusher: us to spin before sleeping")            \
    X(SYNC_LATENCY, sync_latency_us, uint32_t, KT_UINT, "--sync-latency", "sync_latency_us", "0", NULL, 0,       \
      10000000, KF_LIST | KF_ENGINE, "commitlab", 18, KG_COMMIT,                                                 \
      "us added after every sync: an emulated slow device, paid by every engine")                                \
    X(CACHE, cache_bytes, uint64_t, KT_SIZE, "--cache", "cache_bytes", "64M", NULL, 1 << 20, 1ull << 40,          \
      KF_LIST | KF_ENGINE, "commitlab", 19, KG_COMMIT, "page cache bytes")                                        \
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
