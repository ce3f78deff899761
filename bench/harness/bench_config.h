/*
 * bench_config.h -- one run of the benchmark harness as the command line
 * describes it.  The knobs may be given as comma lists; `commitlab bench`
 * runs the cross product of every list, one struct bench_config per run.
 * Every part of the harness reads a configuration; none changes it once
 * the run has started.
 */
#ifndef CL_BENCH_CONFIG_H
#define CL_BENCH_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* Knobs that may be given as comma lists; the cross product of every list
 * is the sweep.  Each is kept as the user's text and parsed per run. */
enum bench_knob {
    K_ENGINE, K_WORKLOAD, K_CLIENTS, K_SYNC, K_SYNC_METHOD, K_ELR, K_SEGMENTS, K_SEGMENT_INIT,
    K_SEGMENT_SIZE, K_PREALLOC, K_RECYCLE_MAX, K_CHECKPOINT, K_COMMIT_DELAY, K_COMMIT_SIBLINGS, K_INTERVAL, K_URING_DEPTH,
    K_SYNC_LATENCY, K_CACHE, K_VALUE_SIZE, K_KEYS, K_DIST, K_OPS_PER_TXN, K_READ_RATIO, K_SCALE,
    K_SQLITE_SYNC, K_RATE, K_MAX_BATCH, K_FLUSHER_SPIN, K_ROCKSDB_WRITE,
    K_COUNT
};

#define LMDB_F_NOMETASYNC 1u
#define LMDB_F_WRITEMAP 2u
#define LMDB_F_MAPASYNC 4u

struct bench_config {
    /* what and where */
    const char *engine;           /* commitlab | lmdb | rocksdb | sqlite */
    const char *workload;         /* kv | tpcb */
    unsigned clients;             /* threads */
    double duration;              /* seconds measured (when txns == 0) */
    uint64_t txns;                /* transactions measured, or 0 for duration */
    double warmup;                /* seconds run before measuring */
    const char *dir;              /* parent directory of the run directories */
    int reuse;                    /* keep and reuse the run directory */
    int preload;                  /* load every key before the timed phase */
    int verify;                   /* after the run, reopen and read every key back */
    uint64_t seed;

    /* kv */
    uint32_t value_size;
    uint64_t keys;
    int zipf;                     /* 0 uniform, 1 zipf */
    double zipf_theta;
    uint32_t ops_per_txn;
    double read_ratio;
    /* tpcb */
    uint32_t scale;
    /* open loop: transactions per second across all clients, arriving as a
     * Poisson process; each latency runs from its scheduled start (no
     * coordinated omission).  0: closed loop, back to back. */
    uint32_t rate;

    /* commit path (commitlab's knobs; others map what they can) */
    const char *sync;             /* none|periodic|commit|group|uring */
    const char *sync_method;      /* fdatasync|fsync|dsync|direct */
    int elr;
    const char *segments;         /* fresh|recycle */
    const char *segment_init;     /* zero|sparse|fallocate */
    uint64_t segment_size;
    uint32_t prealloc;
    uint32_t recycle_max;         /* recycle: future segments kept at most */
    uint64_t checkpoint_bytes;    /* log bytes between checkpoints */
    uint32_t commit_delay_us, commit_siblings, interval_ms, uring_depth, sync_latency_us;
    uint64_t max_batch;           /* group: bytes one write may take, 0 = the log buffer */
    uint32_t flusher_spin_us;     /* flusher: spin before sleeping */
    uint64_t cache_bytes;
    unsigned lmdb_flags;          /* LMDB_F_* */
    const char *sqlite_sync;      /* full|normal|off, or NULL = from --sync */
    const char *rocksdb_write;    /* default|pipelined|unordered|manual-flush:
                                   * RocksDB's write path (NULL = default) */

    /* which knobs the user gave explicitly (an engine that cannot express
     * an explicit knob prints n/a rather than ignoring it) */
    unsigned char given[K_COUNT];
    int lmdb_flags_given;
    /* the knobs other than engine, sync and clients that vary in this
     * sweep, with their values ("value-size=100"), for the table */
    char varying[160];
};

/* The flag of a knob ("--sync-method"). */
const char *bench_knob_flag(enum bench_knob k);

/* Fills the defaults (one client, 10 s, kv, commitlab --sync commit). */
void bench_config_defaults(struct bench_config *c);
/* 1 when the library's sync policy of that name makes a commit durable. */
int bench_sync_is_durable(const char *sync);
/* "none,periodic,commit,...": every sync policy the library has, in its
 * order (a policy added to the library is accepted unchanged); and only
 * those that make a commit durable ("commit,group,..."). */
const char *bench_sync_choices(void);
const char *bench_sync_durable_choices(void);

#endif
