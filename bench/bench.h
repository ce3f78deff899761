/*
 * bench.h -- the benchmark harness behind `commitlab bench` and
 * `commitlab tour`: one run's configuration, the engine driver interface,
 * the workloads, the runner, and the outputs (table, JSON lines, CSV).
 *
 * Layering: the commitlab driver uses only engine/commitlab.h; the
 * reference drivers use only their stores' own public APIs.  Every
 * workload talks to an engine through struct bench_driver, so each runs
 * unchanged on each engine.
 */
#ifndef CL_BENCH_H
#define CL_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "histogram.h"

/* ---- one run's configuration ------------------------------------------- */

/* Knobs that may be given as comma lists; the cross product of every list
 * is the sweep.  Each is kept as the user's text and parsed per run. */
enum bench_knob {
    K_ENGINE, K_WORKLOAD, K_CLIENTS, K_SYNC, K_SYNC_METHOD, K_ELR, K_SEGMENTS, K_SEGMENT_INIT,
    K_SEGMENT_SIZE, K_PREALLOC, K_RECYCLE_MAX, K_CHECKPOINT, K_COMMIT_DELAY, K_COMMIT_SIBLINGS, K_INTERVAL, K_URING_DEPTH,
    K_SYNC_LATENCY, K_CACHE, K_VALUE_SIZE, K_KEYS, K_DIST, K_OPS_PER_TXN, K_READ_RATIO, K_SCALE,
    K_SQLITE_SYNC,
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
    uint64_t cache_bytes;
    unsigned lmdb_flags;          /* LMDB_F_* */
    const char *sqlite_sync;      /* full|normal|off, or NULL = from --sync */

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
/* For drivers: BENCH_NA naming the first of knobs[] the user gave
 * explicitly ("--sync-method: lmdb <why>"), else 0. */
int bench_reject_given(const struct bench_config *cfg, const enum bench_knob *knobs, size_t n,
                       const char *engine_why, char *why, size_t len);

/* Fills the defaults (one client, 10 s, kv, commitlab --sync commit). */
void bench_config_defaults(struct bench_config *c);
int bench_sync_is_durable(const char *sync);

/* ---- engines --------------------------------------------------------------- */

#define BENCH_OK 0
#define BENCH_NOTFOUND 1 /* get: no such key */
#define BENCH_NA 2       /* open: the engine cannot express this configuration */
#define BENCH_ERR (-1)   /* failure; the message is in ->err */
#define BENCH_RETRY 3    /* the engine aborted the transaction (a conflict, a lock
                          * timeout): nothing of it happened; the runner counts it
                          * and runs the transaction again */

#define BENCH_ERRLEN 256

struct bench_db {
    const struct bench_driver *drv;
    const struct bench_config *cfg;
    char path[4096];
    void *impl;
    char err[BENCH_ERRLEN];
};

struct bench_conn {
    struct bench_db *db;
    unsigned id;
    void *impl;
    char err[BENCH_ERRLEN];
};

/* Counters an engine can report; -1 where it cannot. */
struct bench_engine_stats {
    int64_t commits;
    int64_t syncs;
    int64_t wal_bytes;
    int64_t data_bytes;
    int64_t checkpoints;
    int64_t checkpoint_pause_us;
    /* WAL segments (commitlab) */
    int64_t segment_switches, segments_created, segments_recycled, segments_reused, segments_removed;
    int64_t segment_waits, segment_wait_us;
    int64_t max_switch_commit_us; /* a peak since the last reset_max, not a counter */
    int64_t prealloc_error;
};

struct bench_driver {
    const char *name;
    int built;                    /* compiled into this binary */
    const char *maps;             /* for --list-engines: how the knobs map */
    /* 0 when cfg is expressible; else BENCH_NA with the reason in why. */
    int (*check)(const struct bench_config *cfg, char *why, size_t len);
    /* The engine's own settings for cfg, for the table and the JSON. */
    void (*describe)(const struct bench_config *cfg, char *buf, size_t len);
    int (*open)(struct bench_db *db);          /* BENCH_OK, BENCH_NA or BENCH_ERR */
    void (*close)(struct bench_db *db);
    int (*conn_open)(struct bench_conn *c);
    void (*conn_close)(struct bench_conn *c);
    int (*begin)(struct bench_conn *c, int rdonly);
    int (*put)(struct bench_conn *c, const void *k, size_t kl, const void *v, size_t vl);
    int (*get)(struct bench_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl);
    int (*commit)(struct bench_conn *c);
    void (*abort)(struct bench_conn *c);
    void (*stats)(struct bench_db *db, struct bench_engine_stats *st);
    /* Starts the peak statistics afresh (at the start of the measured
     * phase); NULL when the engine has none. */
    void (*reset_max)(struct bench_db *db);
    /* Library version, or NULL. */
    const char *(*version)(void);
};

extern const struct bench_driver bench_driver_commitlab, bench_driver_lmdb, bench_driver_rocksdb,
    bench_driver_sqlite;
/* NULL when no engine has that name.  May return a driver whose built == 0. */
const struct bench_driver *bench_driver_find(const char *name);
extern const struct bench_driver *const bench_drivers[];
extern const size_t bench_ndrivers;
void bench_list_engines(FILE *f);

/* ---- workloads --------------------------------------------------------------- */

struct bench_worker; /* per-client state of the runner */

/* What the verification after a run knows about the run. */
struct bench_verify_in {
    const uint8_t *written;       /* kv: bitmap of the keys the run wrote */
    const uint64_t *committed;    /* per client: transactions committed in every phase */
    unsigned clients;
};

struct bench_workload {
    const char *name;
    /* Untimed: fills the store (one connection). */
    int (*preload)(struct bench_conn *c, const struct bench_config *cfg);
    /* One transaction, begin to commit.  ops gets the operations done. */
    int (*txn)(struct bench_conn *c, const struct bench_config *cfg, struct bench_worker *w, unsigned *ops);
    /* After a reopen: reads everything back; 0 or BENCH_ERR with c->err.
     * written is a bitmap of the keys written by the timed phase (kv). */
    int (*verify)(struct bench_conn *c, const struct bench_config *cfg, const struct bench_verify_in *in,
                  uint64_t *checked);
};

extern const struct bench_workload bench_workload_kv, bench_workload_tpcb;
const struct bench_workload *bench_workload_find(const char *name);
/* 1 when a reused store already holds the workload's preload. */
int bench_workload_loaded(struct bench_conn *c, const struct bench_config *cfg);

/* Per-client state the workloads use: PRNG, zipf generator, written-key
 * bitmap (shared, only with --verify), scratch buffers. */
struct bench_zipf {
    uint64_t n;
    double theta, alpha, zetan, eta, zeta2;
};

struct bench_worker {
    unsigned id;
    uint64_t rng;
    const struct bench_zipf *zipf;
    uint8_t *written;             /* shared bitmap or NULL */
    uint64_t seq;                 /* per-client sequence (tpcb history keys): commits so far */
    uint8_t buf[8192];
};

uint64_t bench_rand(uint64_t *s);
void bench_zipf_init(struct bench_zipf *z, uint64_t n, double theta);
uint64_t bench_zipf_next(const struct bench_zipf *z, uint64_t *rng);

/* ---- a run's results ------------------------------------------------------ */

enum bench_status { RUN_OK = 0, RUN_NA, RUN_ERROR };

struct bench_second {
    double tps;
    double p99_us;
    int64_t segment_switches;     /* in this second (sampled about every 0.2 s); -1 n/a */
    int64_t checkpoints;
};

struct bench_env {
    char kernel[128], os[64], machine[64], hostname[128];
    char cpu_model[128];
    int cores;
    char fs_type[64];             /* from /proc/self/mountinfo */
    uint64_t fs_magic;            /* statfs f_type */
    char fs_magic_name[32];
    char mount_point[1024], mount_source[256], mount_options[512], super_options[512];
    char device[64];              /* block device name for /sys/block, or "" */
    char dev_id[32];              /* major:minor of the directory */
    int volatile_fs;              /* tmpfs or ramfs */
};

struct bench_result {
    enum bench_status status;
    struct bench_env env;         /* of the run directory */
    char reason[BENCH_ERRLEN];    /* n/a reason or error */
    char settings[256];           /* the engine's own settings (describe) */
    char time_utc[32];
    char run_dir[4096];

    double seconds, preload_seconds;
    uint64_t txns, ops;
    double tps;
    struct hist lat;
    double p50_us, p90_us, p99_us, p999_us, max_us, mean_us, min_us;

    /* deltas over the measured phase; -1 = not available */
    int64_t syncs, wal_bytes, data_bytes, checkpoints, checkpoint_pause_us, engine_commits;
    int64_t segment_switches, segments_created, segments_recycled, segments_reused, segments_removed;
    int64_t segment_waits, segment_wait_us, max_switch_commit_us, prealloc_error;
    int64_t io_write_bytes, io_wchar, dev_write_bytes;
    double cpu_us;                /* user + system, whole process */

    struct bench_second *timeline;
    size_t nseconds;

    uint64_t aborts;              /* transactions the engine aborted (retried) in the phase */
    int verified;                 /* 1 ok, 0 not asked, -1 failed */
    uint64_t verified_keys;
};

/* Runs one configuration: fresh directory, preload, warm-up, measure.
 * Never exits; n/a and errors are reported in r.  tick (may be NULL) is
 * called about five times a second while the run waits. */
void bench_run(const struct bench_config *cfg, struct bench_result *r, void (*tick)(void *), void *arg);
/* Removes a directory tree (the run directories). */
void bench_rm_tree(const char *path);
void bench_result_free(struct bench_result *r);

/* ---- environment ------------------------------------------------------------ */

void bench_env_probe(const char *dir, struct bench_env *e);
/* /proc/self/io write_bytes and wchar; -1 when unreadable. */
void bench_proc_io(int64_t *write_bytes, int64_t *wchar);
/* Sectors written * 512 for the device, or -1. */
int64_t bench_device_written(const char *device);

/* ---- output -------------------------------------------------------------------- */

enum bench_format { FMT_TABLE = 0, FMT_CSV };

void bench_table_header(FILE *f);
/* "segments: N switches, ..." for commitlab runs ("" for other engines). */
void bench_segments_note(const struct bench_config *cfg, const struct bench_result *r, char *buf, size_t len);
/* 1 when a commitlab recycle run never wrote into a recycled segment. */
int bench_recycle_unexercised(const struct bench_config *cfg, const struct bench_result *r);
void bench_table_row(FILE *f, const struct bench_config *cfg, const struct bench_result *r);
void bench_csv_header(FILE *f);
void bench_csv_row(FILE *f, const struct bench_config *cfg, const struct bench_result *r);
/* Appends one JSON object (one line) to f; 0 or -1. */
int bench_json_append(FILE *f, const struct bench_config *cfg, const struct bench_result *r,
                      unsigned run_index, unsigned nruns);
/* The same, with one more member key = extra (a jansson json_t *, not
 * stolen) for callers that add context (matrix). */
struct json_t;
int bench_json_append_extra(FILE *f, const struct bench_config *cfg, const struct bench_result *r,
                            unsigned run_index, unsigned nruns, const char *key, struct json_t *extra);
/* Writes one JSON value as a line and flushes; 0 or -1. */
int bench_json_write(FILE *f, struct json_t *o);

/* ---- sweeps (bench.c) ------------------------------------------------------------ */

struct bench_sweep_opts {
    FILE *jsonl;                  /* append JSON lines here, or NULL */
    enum bench_format format;
    int quiet;                    /* no progress line */
};

/* Runs cfgs[0..n) in order, printing the table (or CSV) as each finishes
 * and the progress line on stderr when it is a terminal.  results (may be
 * NULL) receives each result; the caller frees them with
 * bench_result_free.  Returns the number of runs that failed (not n/a). */
unsigned bench_sweep(const struct bench_config *cfgs, size_t n, const struct bench_sweep_opts *o,
                     struct bench_result *results);
/* The command line of bench (and of matrix, which takes bench's options):
 * bench_cli_parse exits 2 with a one-line message on a bad argument. */
struct knob_values {
    char **v;
    size_t n;
};
struct bench_cli {
    struct bench_config base;
    struct bench_config *cfgs;    /* the cross product of the comma lists */
    size_t n;
    struct bench_sweep_opts so;
    const char *out_path;
    int list_engines, help, dir_given;
    struct knob_values vals[K_COUNT]; /* own the strings cfgs point to */
};
void bench_cli_parse(const char *cmd, int argc, char **argv, struct bench_cli *c);
void bench_cli_free(struct bench_cli *c);

/* SIGINT/SIGTERM: bench_interrupt() (async-signal-safe) makes the current
 * run stop at once (reported as an error) and bench_sweep skip the rest. */
void bench_interrupt(void);
int bench_interrupted(void);

/* Warns on stderr when dir is on tmpfs or ramfs. */
void bench_warn_volatile(const char *dir);
/* A short human label of a run ("lmdb --sync commit --clients 16"). */
void bench_label(const struct bench_config *cfg, char *buf, size_t len);

#endif
