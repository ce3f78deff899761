/*
 * bench_knobs.h -- every knob of a benchmark run, one row each: the one
 * table the harness is built from, after fio's options.c (one table of
 * name, type, offset, default and help, each row a set of designated
 * initializers: https://github.com/axboe/fio/blob/master/options.c).
 *
 * From these rows come the enum of knobs (K_SEGMENT_SIZE) and the fields
 * of struct bench_config (bench_config.h); the option parser, the checks
 * of every value and their one-line errors, the defaults, the --help
 * lines (bench_config.c); the "config" object of a JSON line and the
 * CSV's knob columns (bench_config.c, bench_output.c); and the report's
 * labels and the defaults it reads old lines by.  Adding a knob is a row
 * here, plus its place in the sweep's order if it takes a list
 * (bench_config.c, sweep_order), plus the mapping in each driver that can
 * express it (drivers/driver.h); an engine whose driver does not declare
 * a knob runs n/a when it is given.  An option of libcommitlab needs no
 * row: one that no row names takes a spare row (the last rows, KF_SPARE),
 * its flag its name with '-' for '_' and its JSON member its name, and
 * the commitlab driver maps every option by its name (docs/design.md,
 * "Adding a knob").
 *
 * A row is KNOB(ID, field, C type, .member = value, ...): the enum's name,
 * the field of struct bench_config and its type, then the members of
 * struct bench_knob_def (bench_config.h) that the row sets -- the others
 * are 0 or NULL:
 *   .type     how the flag's value is read (enum bench_knob_type)
 *   .flag     the flag ("--segment-size")
 *   .key      the JSON config member ("segment_size")
 *   .dflt     as the flag would take it ("16M"); none: 0, NULL
 *   .choices  the accepted words (KT_WORD, KT_INDEX, KT_ONOFF, KT_SET)
 *   .min, .max  the accepted range of numbers (KF_OPEN_MIN/MAX: exclusive)
 *   .flags    KF_* (bench_config.h)
 *   .owner    the engine whose knob it is: the JSON member is null for
 *             another engine unless the knob was given; none: every
 *             engine's
 *   .group    the --help section
 *   .help     the --help line
 *   .option   the field of struct cl_options it sets ("cache_size" for
 *             --cache): an option of libcommitlab.  The library describes
 *             it (engine/options.c, read through cl_option_info in
 *             commitlab.h), and the flag takes its default, its range, an
 *             enum's words and its help line from there -- the help
 *             prefixed with the policy that reads it ("group: ...") --
 *             when the table is first read, so the flag accepts exactly
 *             what cl_open would.  Such a row sets none of those itself.
 *             An enum option's row is KT_ENUM and its field the enum
 *             (enum cl_sync_policy sync): the word is read into the value
 *             once, by the library's names, and the commitlab driver sets
 *             every such field by its name (cl_option_set), with no code
 *             of its own per option.
 *
 * check_schema holds the rows and the library's table to each other:
 * every option but create (which a run sets itself) is a flag, with the
 * library's default and range; and every knob that takes a list has one
 * place in the sweep's order.
 */
#ifndef CL_BENCH_KNOBS_H
#define CL_BENCH_KNOBS_H

/* clang-format off */
#define BENCH_KNOBS(KNOB)                                                                                             \
    /* ---- what runs, how long, where ---- */                                                                       \
    KNOB(ENGINE, engine, const char *,                                                                               \
         .type = KT_WORD, .flag = "--engine", .key = "engine", .dflt = "commitlab",                                  \
         /* .choices: the built-in engines, from the one table of peers (drivers/driver.c) */                        \
         .flags = KF_LIST | KF_LABEL | KF_SERIES | KF_CSV, .group = KG_RUN,                                          \
         .help = "what runs (--list-engines: which are built, and how each maps the knobs)")                         \
    KNOB(WORKLOAD, workload, const char *,                                                                           \
         .type = KT_WORD, .flag = "--workload", .key = "workload", .dflt = "kv", .choices = "kv,tpcb",               \
         .flags = KF_LIST | KF_SERIES | KF_CSV, .group = KG_RUN,                                                     \
         .help = "the transaction (tpcb: pgbench's TPC-B-like one)")                                                 \
    KNOB(CLIENTS, clients, unsigned,                                                                                 \
         .type = KT_UINT, .flag = "--clients", .key = "clients", .dflt = "1", .min = 1, .max = 1024,                 \
         .flags = KF_LIST | KF_LABEL | KF_SERIES | KF_CSV, .group = KG_RUN,                                          \
         .help = "client threads, e.g. 1,16,64")                                                                     \
    KNOB(DURATION, duration, double,                                                                                 \
         .type = KT_SECS, .flag = "--duration", .key = "duration_s", .dflt = "10", .max = 86400,                     \
         .flags = KF_OPEN_MIN | KF_NULL_WITH_TXNS | KF_CLEARS_TXNS, .group = KG_RUN,                                 \
         .help = "measured seconds")                                                                                 \
    KNOB(TXNS, txns, uint64_t,                                                                                       \
         .type = KT_COUNT, .flag = "--txns", .key = "txns", .min = 1, .flags = KF_NULL_ZERO, .group = KG_RUN,        \
         .help = "measure N transactions instead of a duration")                                                     \
    KNOB(WARMUP, warmup, double,                                                                                     \
         .type = KT_SECS, .flag = "--warmup", .key = "warmup_s", .dflt = "1", .max = 3600, .group = KG_RUN,          \
         .help = "unmeasured seconds first")                                                                         \
    KNOB(DIR, dir, const char *,                                                                                     \
         .type = KT_PATH, .flag = "--dir", .key = "dir", .dflt = "commitlab-bench.d", .group = KG_RUN,               \
         .help = "parent of the run directories; each run uses a fresh D/ENGINE.db, removed afterwards")             \
    KNOB(REUSE, reuse, int,                                                                                          \
         .type = KT_TRUE, .flag = "--reuse", .key = "reuse", .group = KG_RUN,                                        \
         .help = "keep D/ENGINE.db between runs; skip a preload it already has")                                     \
    KNOB(PRELOAD, preload, int,                                                                                      \
         .type = KT_FALSE, .flag = "--no-preload", .key = "preload", .dflt = "on", .group = KG_RUN,                  \
         .help = "start from an empty store (kv)")                                                                   \
    KNOB(VERIFY, verify, int,                                                                                        \
         .type = KT_TRUE, .flag = "--verify", .key = "verify", .group = KG_RUN,                                      \
         .help = "after the run, reopen the store and read every key back")                                          \
    KNOB(SEED, seed, uint64_t,                                                                                       \
         .type = KT_SEED, .flag = "--seed", .key = "seed", .dflt = "1", .group = KG_RUN,                             \
         .help = "PRNG seed")                                                                                        \
    /* ---- the kv workload ---- */                                                                                  \
    KNOB(VALUE_SIZE, value_size, uint32_t,                                                                           \
         .type = KT_UINT, .flag = "--value-size", .key = "value_size", .dflt = "100", .min = 8, .max = 4096,         \
         .flags = KF_LIST | KF_KV, .group = KG_KV,                                                                   \
         .help = "value bytes (keys are 16 bytes)")                                                                  \
    KNOB(KEYS, keys, uint64_t,                                                                                       \
         .type = KT_UINT, .flag = "--keys", .key = "keys", .dflt = "100000", .min = 1, .max = 1000000000,            \
         .flags = KF_LIST | KF_KV, .group = KG_KV,                                                                   \
         .help = "the key space")                                                                                    \
    KNOB(DIST, zipf, int,                                                                                            \
         .type = KT_INDEX, .flag = "--dist", .key = "dist", .dflt = "uniform", .choices = "uniform,zipf",            \
         .flags = KF_LIST | KF_KV, .group = KG_KV,                                                                   \
         .help = "how keys are drawn")                                                                               \
    KNOB(ZIPF_THETA, zipf_theta, double,                                                                             \
         .type = KT_NUM, .flag = "--zipf-theta", .key = "zipf_theta", .dflt = "0.99", .max = 1,                      \
         .flags = KF_OPEN_MIN | KF_OPEN_MAX | KF_KV | KF_IF_ZIPF, .group = KG_KV,                                    \
         .help = "--dist zipf: the skew")                                                                            \
    KNOB(OPS_PER_TXN, ops_per_txn, uint32_t,                                                                         \
         .type = KT_UINT, .flag = "--ops-per-txn", .key = "ops_per_txn", .dflt = "1", .min = 1, .max = 100000,       \
         .flags = KF_LIST | KF_KV, .group = KG_KV,                                                                   \
         .help = "operations per transaction")                                                                       \
    KNOB(READ_RATIO, read_ratio, double,                                                                             \
         .type = KT_RATIO, .flag = "--read-ratio", .key = "read_ratio", .dflt = "0", .max = 1,                       \
         .flags = KF_LIST | KF_KV, .group = KG_KV,                                                                   \
         .help = "the fraction of operations that are reads")                                                        \
    /* ---- the tpcb workload ---- */                                                                                \
    KNOB(SCALE, scale, uint32_t,                                                                                     \
         .type = KT_UINT, .flag = "--scale", .key = "scale", .dflt = "1", .min = 1, .max = 10000,                    \
         .flags = KF_LIST | KF_TPCB, .group = KG_TPCB,                                                               \
         .help = "branches, as pgbench -s")                                                                          \
    /* ---- the arrival process ---- */                                                                              \
    KNOB(RATE, rate, uint32_t,                                                                                       \
         .type = KT_UINT, .flag = "--rate", .key = "rate_tps", .dflt = "0", .max = 10000000,                         \
         .flags = KF_LIST | KF_NULL_ZERO, .group = KG_RUN,                                                           \
         .help = "open loop: transactions per second offered across the clients, Poisson arrivals, latency from "    \
                 "each scheduled start (0: closed loop, each client back to back)")                                  \
    /* ---- the commit path: commitlab's, mapped by the other engines where they can ---- */                         \
    KNOB(SYNC, sync, enum cl_sync_policy,                                                                            \
         .type = KT_ENUM, .flag = "--sync", .key = "sync", .option = "sync",                                         \
         .flags = KF_LIST | KF_LABEL | KF_SERIES | KF_CSV | KF_ENGINE, .group = KG_COMMIT)                           \
    KNOB(SYNC_METHOD, sync_method, enum cl_sync_method,                                                              \
         .type = KT_ENUM, .flag = "--sync-method", .key = "sync_method", .option = "method",                         \
         .flags = KF_LIST | KF_CSV | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                            \
    KNOB(ELR, elr, int,                                                                                              \
         .type = KT_ONOFF, .flag = "--elr", .key = "elr", .option = "elr", .flags = KF_LIST | KF_ENGINE,             \
         .owner = "commitlab", .group = KG_COMMIT)                                                                   \
    KNOB(SEGMENTS, segments, enum cl_segment_policy,                                                                 \
         .type = KT_ENUM, .flag = "--segments", .key = "segments", .option = "segments",                             \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(SEGMENT_INIT, segment_init, enum cl_segment_init,                                                           \
         .type = KT_ENUM, .flag = "--segment-init", .key = "segment_init", .option = "segment_init",                 \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(SEGMENT_SIZE, segment_size, uint64_t,                                                                       \
         .type = KT_SIZE, .flag = "--segment-size", .key = "segment_size", .option = "segment_size",                 \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(PREALLOC, prealloc, uint32_t,                                                                               \
         .type = KT_UINT, .flag = "--prealloc", .key = "prealloc", .option = "prealloc",                             \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(RECYCLE_MAX, recycle_max, uint32_t,                                                                         \
         .type = KT_UINT, .flag = "--recycle-max", .key = "recycle_max", .option = "recycle_max",                    \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(COLD_RECYCLE, cold_recycle, int,                                                                            \
         .type = KT_TRUE, .flag = "--cold-recycle", .key = "cold_recycle", .option = "cold_recycle",                 \
         .flags = KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                               \
    KNOB(CHECKPOINT, checkpoint_bytes, uint64_t,                                                                     \
         .type = KT_SIZE, .flag = "--checkpoint-bytes", .key = "checkpoint_bytes", .option = "checkpoint_bytes",     \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(NO_FINAL_CHECKPOINT, no_final_checkpoint, int,                                                              \
         .type = KT_TRUE, .flag = "--no-final-checkpoint", .key = "no_final_checkpoint",                             \
         .option = "no_final_checkpoint", .flags = KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)              \
    KNOB(COMMIT_DELAY, commit_delay_us, uint32_t,                                                                    \
         .type = KT_UINT, .flag = "--commit-delay", .key = "commit_delay_us", .option = "commit_delay_us",           \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(COMMIT_SIBLINGS, commit_siblings, uint32_t,                                                                 \
         .type = KT_UINT, .flag = "--commit-siblings", .key = "commit_siblings", .option = "commit_siblings",        \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(INTERVAL, interval_ms, uint32_t,                                                                            \
         .type = KT_UINT, .flag = "--interval", .key = "interval_ms", .option = "interval_ms",                       \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(URING_DEPTH, uring_depth, uint32_t,                                                                         \
         .type = KT_UINT, .flag = "--uring-depth", .key = "uring_depth", .option = "uring_depth",                    \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(URING_SYNC, uring_sync, enum cl_uring_sync,                                                                 \
         .type = KT_ENUM, .flag = "--uring-sync", .key = "uring_sync", .option = "uring_sync",                       \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(PIPELINE, pipeline, uint32_t,                                                                               \
         .type = KT_UINT, .flag = "--pipeline", .key = "pipeline", .dflt = "1", .min = 1, .max = 4096,               \
         .flags = KF_LIST | KF_ENGINE | KF_DEFAULT_ANY, .owner = "commitlab", .group = KG_COMMIT,                    \
         .help = "transactions each client keeps awaiting durability (cl_commit_async; postgres: libpq pipeline "    \
                 "mode); 1: one blocking commit at a time")                                                          \
    KNOB(MAX_BATCH, max_batch, uint64_t,                                                                             \
         .type = KT_SIZE, .flag = "--max-batch", .key = "max_batch", .option = "max_batch",                          \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(FLUSHER_SPIN, flusher_spin_us, uint32_t,                                                                    \
         .type = KT_UINT, .flag = "--flusher-spin", .key = "flusher_spin_us", .option = "flusher_spin_us",           \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(WAIT, wait, enum cl_wait,                                                                                   \
         .type = KT_ENUM, .flag = "--wait", .key = "wait", .option = "wait",                                         \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(WAIT_SPIN, wait_spin_us, uint32_t,                                                                          \
         .type = KT_UINT, .flag = "--wait-spin", .key = "wait_spin_us", .option = "wait_spin_us",                    \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(SYNC_LATENCY, sync_latency_us, uint32_t,                                                                    \
         .type = KT_UINT, .flag = "--sync-latency", .key = "sync_latency_us", .option = "sync_latency_us",           \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    KNOB(CACHE, cache_bytes, uint64_t,                                                                               \
         .type = KT_SIZE, .flag = "--cache", .key = "cache_bytes", .option = "cache_size",                           \
         .flags = KF_LIST | KF_ENGINE, .owner = "commitlab", .group = KG_COMMIT)                                     \
    /* ---- one engine's own ---- */                                                                                 \
    KNOB(LMDB_FLAGS, lmdb_flags, unsigned,                                                                           \
         .type = KT_SET, .flag = "--lmdb-flags", .key = "lmdb_flags", .choices = "nometasync,writemap,mapasync",     \
         .flags = KF_ENGINE, .owner = "lmdb", .group = KG_ENGINE,                                                    \
         .help = "LMDB's environment flags (one set, not a list)")                                                   \
    KNOB(SQLITE_SYNC, sqlite_sync, const char *,                                                                     \
         .type = KT_WORD, .flag = "--sqlite-sync", .key = "sqlite_sync", .choices = "full,normal,off",               \
         .flags = KF_LIST | KF_ENGINE, .owner = "sqlite", .group = KG_ENGINE,                                        \
         .help = "SQLite's synchronous (default: from --sync)")                                                      \
    KNOB(ROCKSDB_WRITE, rocksdb_write, const char *,                                                                 \
         .type = KT_WORD, .flag = "--rocksdb-write", .key = "rocksdb_write", .dflt = "default",                      \
         .choices = "default,pipelined,unordered,manual-flush", .flags = KF_LIST | KF_ENGINE, .owner = "rocksdb",    \
         .group = KG_ENGINE,                                                                                         \
         .help = "RocksDB's write path: WriteOptions.sync per --sync, enable_pipelined_write, unordered_write (kv "  \
                 "only), or manual_wal_flush with FlushWAL(sync) per durable commit")                                \
    KNOB(PG_SET, pg_set, const char *,                                                                               \
         .type = KT_PATH, .flag = "--pg-set", .key = "pg_set", .flags = KF_REPEAT, .owner = "postgres",              \
         .group = KG_ENGINE,                                                                                         \
         .help = "a PostgreSQL setting of the private server (repeatable; kept as one value, the settings "          \
                 "joined by ';')")                                                                                   \
    KNOB(PG_BINDIR, pg_bindir, const char *,                                                                         \
         .type = KT_PATH, .flag = "--pg-bindir", .key = "pg_bindir", .owner = "postgres", .group = KG_ENGINE,        \
         .help = "where PostgreSQL's postgres, initdb and pg_ctl are (default: pg_config --bindir, then "            \
                 "/usr/lib/postgresql/*/bin)")                                                                       \
    KNOB(PG_USER, pg_user, const char *,                                                                             \
         .type = KT_PATH, .flag = "--pg-user", .key = "pg_user", .owner = "postgres", .group = KG_ENGINE,            \
         .help = "as root: the account the private server runs as (default postgres)")                               \
    /* ---- kept spare: an option of libcommitlab's table that no row above names takes one ---- */                  \
    KNOB(LIB_SPARE_0, lib_spare_0, uint64_t, .flags = KF_SPARE, .group = KG_COMMIT)                                  \
    KNOB(LIB_SPARE_1, lib_spare_1, uint64_t, .flags = KF_SPARE, .group = KG_COMMIT)                                  \
    KNOB(LIB_SPARE_2, lib_spare_2, uint64_t, .flags = KF_SPARE, .group = KG_COMMIT)                                  \
    KNOB(LIB_SPARE_3, lib_spare_3, uint64_t, .flags = KF_SPARE, .group = KG_COMMIT)                                  \
    KNOB(LIB_SPARE_4, lib_spare_4, uint64_t, .flags = KF_SPARE, .group = KG_COMMIT)                                  \
    KNOB(LIB_SPARE_5, lib_spare_5, uint64_t, .flags = KF_SPARE, .group = KG_COMMIT)                                  \
    KNOB(LIB_SPARE_6, lib_spare_6, uint64_t, .flags = KF_SPARE, .group = KG_COMMIT)                                  \
    KNOB(LIB_SPARE_7, lib_spare_7, uint64_t, .flags = KF_SPARE, .group = KG_COMMIT)
/* clang-format on */

#endif
