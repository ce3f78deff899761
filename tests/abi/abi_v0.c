/* abi_v0.c -- a program built against libcommitlab 0.1's header (its structs copied below, not included) opens, commits, reads its statistics and closes with today's shared library, which never writes past the 0.1 sizes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- libcommitlab 0.1's declarations, as a program built then has them ---- */
struct cl_options {
    int sync, method, elr, segments, segment_init;
    uint32_t recycle_max, prealloc;
    uint64_t segment_size, cache_size, checkpoint_bytes;
    uint32_t interval_ms, commit_delay_us, commit_siblings, uring_depth;
    uint64_t max_batch;
    uint32_t flusher_spin_us, sync_latency_us;
    int create;
};
struct cl_recovery_info {
    int created;
    uint64_t checkpoint_lsn, end_lsn, txns_replayed, txns_discarded, records_read;
    int torn_tail;
    uint64_t corrupt_lsn;
    int missing_segment;
    char bad_file[64];
};
struct cl_stats {
    uint64_t commits, syncs, wal_bytes, wal_writes, data_writes, data_bytes, checkpoints, checkpoint_pause_us;
    uint64_t max_commits_per_sync;
    double commits_per_sync;
    uint64_t durable_lsn, end_lsn, pages, cache_hits, cache_misses, cache_evictions;
    uint64_t segment_switches, segments_created, segments_recycled, segments_reused, segments_removed;
    uint64_t segment_waits, segment_wait_us, max_switch_commit_us;
    int prealloc_error, broken;
    uint64_t batch_hist[258];
};
struct cl_db;
struct cl_txn;
void cl_options_init(struct cl_options *o);
int cl_open(const char *dir, const struct cl_options *opts, struct cl_db **out, struct cl_recovery_info *info);
int cl_close(struct cl_db *db);
int cl_txn_begin(struct cl_db *db, unsigned flags, struct cl_txn **out);
int cl_put(struct cl_txn *t, const void *key, size_t klen, const void *val, size_t vlen);
int cl_get(struct cl_txn *t, const void *key, size_t klen, void *buf, size_t cap, size_t *vlen);
int cl_commit(struct cl_txn *t);
void cl_abort(struct cl_txn *t);
int cl_stats(struct cl_db *db, struct cl_stats *out);
const char *cl_strerror(int err);
/* ---- end of 0.1's declarations ---------------------------------------------- */

#define CANARY 0xa5

/* Each struct sits in a buffer with canary bytes after it. */
struct guarded_options { struct cl_options o; unsigned char tail[256]; };
struct guarded_info { struct cl_recovery_info i; unsigned char tail[256]; };
struct guarded_stats { struct cl_stats s; unsigned char tail[4096]; };

static int intact(const unsigned char *tail, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (tail[i] != CANARY) {
            fprintf(stderr, "FAIL: the library wrote byte %zu past a 0.1 struct %s\n", i, what);
            return 0;
        }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: abi_v0 DIR\n");
        return 2;
    }
    static struct guarded_options go;
    static struct guarded_info gi;
    static struct guarded_stats gs;
    struct cl_db *db;
    struct cl_txn *t;
    int rc;

    memset(&go, CANARY, sizeof go);
    memset(&gi, CANARY, sizeof gi);
    memset(&gs, CANARY, sizeof gs);
    cl_options_init(&go.o);
    if (!intact(go.tail, sizeof go.tail, "cl_options (cl_options_init)"))
        return 1;
    if (go.o.sync != 2 || go.o.uring_depth != 4 || go.o.segment_size != 16u << 20 || go.o.create != 1) {
        fprintf(stderr, "FAIL: cl_options_init's defaults moved: sync %d, uring_depth %u\n", go.o.sync,
                go.o.uring_depth);
        return 1;
    }
    go.o.segment_size = 64 * 1024;
    go.o.cache_size = 1u << 20;
    if ((rc = cl_open(argv[1], &go.o, &db, &gi.i)) != 0) {
        fprintf(stderr, "FAIL: cl_open: %s\n", cl_strerror(rc));
        return 1;
    }
    if (!intact(gi.tail, sizeof gi.tail, "cl_recovery_info (cl_open)") || gi.i.created != 1)
        return 1;
    for (int i = 0; i < 20; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        if (cl_txn_begin(db, 0, &t) || cl_put(t, k, strlen(k), "v", 1) || cl_commit(t)) {
            fprintf(stderr, "FAIL: commit %d\n", i);
            return 1;
        }
    }
    if ((rc = cl_stats(db, &gs.s)) != 0 || !intact(gs.tail, sizeof gs.tail, "cl_stats (cl_stats)"))
        return 1;
    if (gs.s.commits != 20 || gs.s.syncs < 20) {
        fprintf(stderr, "FAIL: cl_stats reads %llu commits, %llu syncs\n", (unsigned long long)gs.s.commits,
                (unsigned long long)gs.s.syncs);
        return 1;
    }
    if ((rc = cl_close(db)) != 0) {
        fprintf(stderr, "FAIL: cl_close: %s\n", cl_strerror(rc));
        return 1;
    }
    /* reopened, everything is there */
    if ((rc = cl_open(argv[1], &go.o, &db, &gi.i)) != 0 || gi.i.created != 0) {
        fprintf(stderr, "FAIL: reopen: %s\n", cl_strerror(rc));
        return 1;
    }
    size_t vl;
    if (cl_txn_begin(db, 1, &t) || cl_get(t, "k19", 3, NULL, 0, &vl) || vl != 1) {
        fprintf(stderr, "FAIL: k19 not found after reopening\n");
        return 1;
    }
    cl_abort(t);
    cl_close(db);
    printf("abi_v0: a 0.1 program ran on this library: ok\n");
    return 0;
}
