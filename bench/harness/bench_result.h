/*
 * bench_result.h -- what one run of the harness measured, as bench_run
 * fills it in: throughput, the latency histogram and its percentiles, the
 * engine's and the system's counters over the measured phase, a timeline
 * per second, and the environment it ran in.  A counter the engine or the
 * system cannot give is -1.  A run a signal stopped in its measured phase
 * has all of it, over the part it measured.
 */
#ifndef CL_BENCH_RESULT_H
#define CL_BENCH_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "bench_env.h"
#include "drivers/driver.h"
#include "histogram.h"

struct bench_second {
    double tps;
    double p99_us;
    int64_t segment_switches;     /* in this second (sampled about every 0.2 s); -1 n/a */
    int64_t checkpoints;
};

struct bench_result {
    enum bench_status status;     /* bench_schema.h */
    /* RUN_INTERRUPTED: the phase the signal stopped the run in -- in the
     * measured phase, what it measured until then is below, over the
     * seconds it measured -- the signal, and the seconds of warm-up done */
    enum bench_stop stopped_in;
    int stop_signal;
    double warmup_done_s;
    struct bench_env env;         /* of the run directory */
    char reason[BENCH_ERRLEN];    /* n/a reason or error */
    char settings[1024];          /* the engine's own settings (describe) */
    char time_utc[32];
    char run_dir[4096];
    uint64_t stored_segment_size; /* the store's own segment size, when it differs from the one asked */

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
    int64_t dev_read_bytes;       /* the device's sectors read * 512 */
    /* commits made durable together in the measured phase: [n] = syncs that
     * made n commits durable (drivers/driver.h); [1] < 0 when unknown */
    int64_t batch_hist[BENCH_BATCH_HIST];
    int64_t writes_by_self, writes_by_leader; /* RocksDB's write group, -1 unknown */
    int64_t log_writes;                       /* write calls to the log, -1 unknown */
    double cpu_us;                            /* user + system, whole process (and the engine's other processes) */
    /* context switches over the measured phase, as cpu_us: this process's
     * (getrusage RUSAGE_SELF, every thread) plus the engine's processes
     * outside it (bench_engine_stats.other_*); voluntary (the thread
     * waited: a sync, a lock, a sleep) and involuntary (preempted) */
    int64_t nvcsw, nivcsw;
    /* the store's own file calls over the measured phase, as the program's
     * definitions of them counted them (file_calls.h): syncs (fsync,
     * fdatasync, sync_file_range, msync(MS_SYNC), O_DSYNC/RWF_DSYNC
     * writes), writes and the bytes written; -1 when not counted (a store
     * that writes through io_uring, bench_db.io_uring) */
    int64_t file_syncs, file_writes, file_bytes;
    /* where a commit's time went (drivers that time commits): mean and
     * p99 per phase over the measured commits, µs; has_phases 0 otherwise */
    int has_phases;
    double phase_mean_us[BENCH_PHASES], phase_p99_us[BENCH_PHASES];

    struct bench_second *timeline;
    size_t nseconds;

    uint64_t aborts;              /* transactions the engine aborted (retried) in the phase */
    int verified;                 /* 1 ok, 0 not asked, -1 failed */
    uint64_t verified_keys;
};

/* Frees what a result owns (its timeline). */
void bench_result_free(struct bench_result *r);

#endif
