/*
 * check_concurrency.c -- the durable policies with many committers: power
 * failures while threads commit, an I/O error in the middle of a batch,
 * 64 clients (run it under ThreadSanitizer; their batch sizes add up to
 * the commits), periodic's loss window, what
 * a reader sees with early lock release off, and the emulated slow device.
 *
 * Each transaction of thread t writes a-t = i and b-t = i together, so a
 * partly visible transaction shows as a-t != b-t.  A failing case prints
 * its seed (CL_SEED replays the schedule of crashes, not the threads').
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commitlab.h"
#include "engine_internal.h"
#include "testutil.h"
#include "vfs.h"
#include "vfs_fault.h"

#define MAXT 64

static const char *const wait_names[] = {"block", "spin", "adaptive"};

struct shared {
    struct cl_db *db;
    int nthreads;
    int txns;                 /* per thread; 0 = until a commit fails */
    uint64_t acked[MAXT];     /* last acknowledged i per thread (atomic) */
    uint64_t attempted[MAXT]; /* last attempted i per thread (atomic) */
    int first_error[MAXT];
};

struct targ {
    struct shared *sh;
    int t;
};

static int commit_pair(struct cl_db *db, int t, uint64_t i)
{
    char ka[16], kb[16];
    struct cl_txn *x;
    int rc;
    snprintf(ka, sizeof ka, "a-%02d", t);
    snprintf(kb, sizeof kb, "b-%02d", t);
    if ((rc = cl_txn_begin(db, 0, &x)) != 0)
        return rc;
    if ((rc = cl_put(x, ka, strlen(ka), &i, sizeof i)) != 0 || (rc = cl_put(x, kb, strlen(kb), &i, sizeof i)) != 0) {
        cl_abort(x);
        return rc;
    }
    return cl_commit(x);
}

static void *committer(void *arg)
{
    struct targ *a = arg;
    struct shared *sh = a->sh;
    for (uint64_t i = 1; sh->txns == 0 || i <= (uint64_t)sh->txns; i++) {
        __atomic_store_n(&sh->attempted[a->t], i, __ATOMIC_RELEASE);
        int rc = commit_pair(sh->db, a->t, i);
        if (rc) {
            sh->first_error[a->t] = rc;
            break;
        }
        __atomic_store_n(&sh->acked[a->t], i, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void run_threads(struct shared *sh, pthread_t *th, struct targ *ta)
{
    for (int t = 0; t < sh->nthreads; t++) {
        ta[t] = (struct targ){sh, t};
        ck_assert_int_eq(pthread_create(&th[t], NULL, committer, &ta[t]), 0);
    }
}

static void join_threads(struct shared *sh, pthread_t *th)
{
    for (int t = 0; t < sh->nthreads; t++)
        pthread_join(th[t], NULL);
}

/* Reopens dir and checks every thread's pair: equal, and at least acked. */
static void check_recovered(const char *dir, const struct cl_options *base, const struct shared *sh,
                            uint64_t seed, const char *what)
{
    struct cl_options o = *base;
    struct cl_db *db;
    struct cl_txn *r;
    o.create = 0;
    o.sync_latency_us = 0;
    int rc = cl_open(dir, &o, &db, NULL);
    ck_assert_msg(rc == 0, "seed %" PRIu64 " %s: reopen: %s", seed, what, cl_strerror(rc));
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &r), 0);
    for (int t = 0; t < sh->nthreads; t++) {
        char ka[16], kb[16];
        uint64_t a = 0, b = 0;
        size_t la = 0, lb = 0;
        snprintf(ka, sizeof ka, "a-%02d", t);
        snprintf(kb, sizeof kb, "b-%02d", t);
        int ra = cl_get(r, ka, strlen(ka), &a, sizeof a, &la);
        int rb = cl_get(r, kb, strlen(kb), &b, sizeof b, &lb);
        ck_assert_msg(ra == rb, "seed %" PRIu64 " %s: thread %d: half a transaction visible", seed, what, t);
        ck_assert_msg(a == b, "seed %" PRIu64 " %s: thread %d: a=%" PRIu64 " b=%" PRIu64 " (torn transaction)",
                      seed, what, t, a, b);
        ck_assert_msg(a >= sh->acked[t],
                      "seed %" PRIu64 " %s: thread %d: acknowledged txn %" PRIu64 " lost (recovered %" PRIu64 ")",
                      seed, what, t, sh->acked[t], a);
        ck_assert_msg(a <= sh->attempted[t], "seed %" PRIu64 " %s: thread %d: txn %" PRIu64 " never attempted",
                      seed, what, t, a);
    }
    cl_abort(r);
    ck_assert_int_eq(cl_close(db), 0);
}

static void base_opts(struct cl_options *o, enum cl_sync_policy p, enum cl_sync_method m)
{
    cl_options_init(o);
    o->sync = p;
    o->method = m;
    o->segment_size = 64 * 1024;
    o->cache_size = 64 * 4096;
    o->checkpoint_bytes = 32 * 1024; /* background checkpoints run during the crash window too */
}

static void sleep_us(uint64_t us)
{
    struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Power failures while 8 threads commit, for each durable policy, crash
 * model and way of waiting (cl_options.wait). */
START_TEST(test_crash_while_threads_commit)
{
    static const enum cl_sync_policy pols[] = {CL_SYNC_GROUP, CL_SYNC_COMMIT, CL_SYNC_GROUP, CL_SYNC_URING,
                                               CL_SYNC_FLUSHER};
    static const enum cl_sync_method meths[] = {CL_METHOD_FDATASYNC, CL_METHOD_FDATASYNC, CL_METHOD_DSYNC,
                                                CL_METHOD_FDATASYNC, CL_METHOD_FSYNC};
    uint64_t base = tu_seed(500);
    uint64_t iters = tu_iterations(120);
    for (uint64_t it = 0; it < iters; it++) {
        uint64_t seed = base + it, rs = seed;
        int cfg = (int)(seed % 5);
        enum vfs_crash_model model = (enum vfs_crash_model)((seed / 5) % 3);
        enum cl_wait wait = (enum cl_wait)((seed / 15) % 3); /* block, spin, adaptive in turn */
        char *dir = tu_mkdtemp("conc");
        struct vfs *fault = vfs_fault_new(vfs_posix());
        struct cl_options o;
        struct shared sh = {.nthreads = 8};
        pthread_t th[MAXT];
        struct targ ta[MAXT];
        char what[96];

        snprintf(what, sizeof what, "(%s/%s wait %s log_insert %s, model %s)", cl_sync_policy_name(pols[cfg]),
                 cl_sync_method_name(meths[cfg]), wait_names[wait], tu_log_insert(seed / 45) ? "slots" : "mutex",
                 vfs_crash_model_name(model));
        base_opts(&o, pols[cfg], meths[cfg]);
        o.wait = wait;
        o.log_insert = (enum cl_log_insert)tu_log_insert(seed / 45); /* mutex, slots in turn */
        int rc = cl_open_vfs(dir, &o, fault, &sh.db, NULL);
        if (rc == CL_ENOTSUP && pols[cfg] == CL_SYNC_URING) { /* no io_uring here */
            vfs_destroy(fault);
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_msg(rc == 0, "seed %" PRIu64 " %s: open: %s", seed, what, cl_strerror(rc));
        run_threads(&sh, th, ta);
        sleep_us(2000 + tu_range(&rs, 30000));
        ck_assert_int_eq(vfs_fault_crash(fault, model, seed), 0);
        join_threads(&sh, th);
        cl_close(sh.db);
        vfs_destroy(fault);
        check_recovered(dir, &o, &sh, seed, what);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* EIO on the sync of a group batch (or the flusher's sync): nobody in the
 * batch is acknowledged, the handle breaks, and after a power failure
 * everything acknowledged before is there. */
START_TEST(test_eio_in_group_batch)
{
    uint64_t base = tu_seed(900);
    for (uint64_t it = 0; it < 6; it++) {
        uint64_t seed = base + it;
        char *dir = tu_mkdtemp("conc");
        struct vfs *fault = vfs_fault_new(vfs_posix());
        struct cl_options o;
        struct shared sh = {.nthreads = 16};
        pthread_t th[MAXT];
        struct targ ta[MAXT];

        base_opts(&o, it % 3 == 2 ? CL_SYNC_FLUSHER : CL_SYNC_GROUP, it % 2 ? CL_METHOD_FSYNC : CL_METHOD_FDATASYNC);
        o.checkpoint_bytes = 0;
        ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &sh.db, NULL), 0);
        vfs_fault_fail_sync(fault, 20 + it * 7, -EIO);
        run_threads(&sh, th, ta); /* until a commit fails */
        join_threads(&sh, th);
        int eio = 0;
        for (int t = 0; t < sh.nthreads; t++) {
            ck_assert_msg(sh.first_error[t] == -EIO || sh.first_error[t] == CL_EBROKEN,
                          "seed %" PRIu64 ": thread %d ended with %s", seed, t, cl_strerror(sh.first_error[t]));
            eio += sh.first_error[t] == -EIO;
        }
        ck_assert_int_ge(eio, 1);
        struct cl_stats st;
        cl_stats(sh.db, &st);
        ck_assert_int_eq(st.broken, 1);
        /* The failed sync's writes are lost for good (fsyncgate): crash now. */
        ck_assert_int_eq(vfs_fault_crash(fault, VFS_CRASH_DROP, seed), 0);
        ck_assert_int_eq(cl_close(sh.db), CL_EBROKEN);
        vfs_destroy(fault);
        check_recovered(dir, &o, &sh, seed, o.sync == CL_SYNC_GROUP ? "(group, EIO mid-batch)"
                                                                    : "(flusher, EIO mid-batch)");
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* The batch sizes of cl_stats: commits they made durable, how many there
 * were, and the largest (entries 1 .. CL_BATCH_HIST - 2; the last counts
 * batches above that). */
static void batch_sizes(const struct cl_stats *st, uint64_t *covered, uint64_t *nbatches, uint64_t *largest)
{
    *covered = *nbatches = *largest = 0;
    for (uint64_t n = 1; n < CL_BATCH_HIST - 1; n++) {
        *covered += n * st->batch_hist[n];
        *nbatches += st->batch_hist[n];
        *largest = st->batch_hist[n] ? n : *largest;
    }
}

/* 64 clients on the group policy: every commit lands, and batches form. */
START_TEST(test_64_clients_group)
{
    char *dir = tu_mkdtemp("conc");
    struct cl_options o;
    struct shared sh = {.nthreads = 64, .txns = 60};
    pthread_t th[MAXT];
    struct targ ta[MAXT];
    struct cl_stats st;

    base_opts(&o, CL_SYNC_GROUP, CL_METHOD_FDATASYNC);
    o.checkpoint_bytes = 256 * 1024;
    ck_assert_int_eq(cl_open(dir, &o, &sh.db, NULL), 0);
    run_threads(&sh, th, ta);
    join_threads(&sh, th);
    for (int t = 0; t < sh.nthreads; t++)
        ck_assert_uint_eq(sh.acked[t], 60);
    cl_stats(sh.db, &st);
    ck_assert_uint_eq(st.commits, 64 * 60);
    ck_assert_msg(st.max_commits_per_sync > 1, "64 clients never shared a sync (max %" PRIu64 ")",
                  st.max_commits_per_sync);
    ck_assert_msg(st.syncs < st.commits, "group commit made %" PRIu64 " syncs for %" PRIu64 " commits",
                  st.syncs, st.commits);
    /* The batch sizes: every acknowledged commit made durable in exactly
     * one batch, and the largest batch is the peak cl_stats reports. */
    uint64_t covered, nbatches, largest;
    ck_assert_uint_eq(st.batch_hist[0], 0);
    batch_sizes(&st, &covered, &nbatches, &largest);
    ck_assert_uint_eq(st.batch_hist[CL_BATCH_HIST - 1], 0); /* 64 clients: no batch above 256 */
    ck_assert_uint_eq(covered, st.commits);
    ck_assert_uint_eq(largest, st.max_commits_per_sync);
    ck_assert_int_eq(cl_close(sh.db), 0);
    check_recovered(dir, &o, &sh, 0, "(64 clients)");
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* 16 clients on a device whose syncs take 2 ms (emulated), so that every
 * committer finds a sync in progress.  Returns the batch sizes: the
 * number of batches and the largest; checks that every commit landed in
 * exactly one batch. */
static void batches(enum cl_sync_policy p, uint64_t max_batch, uint32_t spin_us, uint64_t *nbatches,
                    uint64_t *largest)
{
    char *dir = tu_mkdtemp("conc");
    struct cl_options o;
    struct shared sh = {.nthreads = 16, .txns = 25};
    pthread_t th[MAXT];
    struct targ ta[MAXT];
    struct cl_stats st;

    base_opts(&o, p, CL_METHOD_FDATASYNC);
    o.segment_size = 1u << 20;
    o.checkpoint_bytes = 0;
    o.sync_latency_us = 2000;
    o.max_batch = max_batch;
    o.flusher_spin_us = spin_us;
    ck_assert_int_eq(cl_open(dir, &o, &sh.db, NULL), 0);
    run_threads(&sh, th, ta);
    join_threads(&sh, th);
    for (int t = 0; t < sh.nthreads; t++)
        ck_assert_uint_eq(sh.acked[t], 25);
    cl_stats(sh.db, &st);
    uint64_t covered;
    batch_sizes(&st, &covered, nbatches, largest);
    ck_assert_uint_eq(st.batch_hist[CL_BATCH_HIST - 1], 0);
    ck_assert_uint_eq(covered, st.commits);
    ck_assert_int_eq(cl_close(sh.db), 0);
    check_recovered(dir, &o, &sh, 0, cl_sync_policy_name(p));
    tu_rmdir(dir);
    free(dir);
}

/* commit: one sync per commit even when 16 committers queue behind a slow
 * sync (it used to write whatever was buffered, so its sync covered the
 * commits queued behind it).  group: batches hold several clients, but
 * with max_batch of one byte a batch is one transaction (the least a batch
 * holds), the leader leading again until its own commit is durable.
 * flusher: batches form without a leader, spinning or sleeping. */
START_TEST(test_batches_by_design)
{
    uint64_t nb, big, nb_all, big_all;
    batches(CL_SYNC_COMMIT, 0, 0, &nb, &big);
    ck_assert_msg(big == 1 && nb == 16 * 25, "commit: %" PRIu64 " batches, largest %" PRIu64, nb, big);
    batches(CL_SYNC_GROUP, 0, 0, &nb_all, &big_all);
    batches(CL_SYNC_GROUP, 1, 0, &nb, &big);
    ck_assert_msg(nb_all * 3 < 16 * 25, "group: %" PRIu64 " batches for %d commits", nb_all, 16 * 25);
    ck_assert_msg(big == 1 && nb == 16 * 25, "group max_batch=1: %" PRIu64 " batches, largest %" PRIu64, nb, big);
    for (uint32_t spin = 0; spin <= 50; spin += 50) {
        batches(CL_SYNC_FLUSHER, 0, spin, &nb, &big);
        ck_assert_msg(nb * 3 < 16 * 25 && big > 1, "flusher spin %u: %" PRIu64 " batches, largest %" PRIu64,
                      spin, nb, big);
    }
}
END_TEST

/* Where a commit's time went (cl_commit_timed): on a device whose syncs
 * take 3 ms (emulated), a lone committer's time is its sync; with 8
 * committers on group commit, the phases of every commit add up to no more
 * than the time spent in cl_commit, and each commit waited for a sync. */
static double now_s(void);

struct timed_arg {
    struct cl_db *db;
    int t, n;
    uint64_t over;      /* commits whose phases add up to more than cl_commit took */
    uint64_t no_sync;   /* commits with no sync time */
    uint64_t queued_ns; /* total queue time */
};

static void *timed_committer(void *arg)
{
    struct timed_arg *a = arg;
    for (uint64_t i = 1; i <= (uint64_t)a->n; i++) {
        struct cl_txn *x;
        struct cl_commit_times tm;
        char k[16];
        snprintf(k, sizeof k, "t-%02d", a->t);
        ck_assert_int_eq(cl_txn_begin(a->db, 0, &x), 0);
        ck_assert_int_eq(cl_put(x, k, strlen(k), &i, sizeof i), 0);
        double t0 = now_s();
        ck_assert_int_eq(cl_commit_timed(x, &tm), 0);
        uint64_t took = (uint64_t)((now_s() - t0) * 1e9);
        uint64_t sum = tm.lock_ns + tm.append_ns + tm.apply_ns + tm.queue_ns + tm.write_ns + tm.sync_ns + tm.wakeup_ns;
        a->over += sum > took;
        a->no_sync += tm.sync_ns == 0;
        a->queued_ns += tm.queue_ns;
    }
    return NULL;
}

START_TEST(test_commit_times)
{
    char *dir = tu_mkdtemp("conc");
    struct cl_options o;
    struct cl_db *db;
    struct cl_txn *x;
    struct cl_commit_times tm;
    uint64_t v = 1;

    base_opts(&o, CL_SYNC_COMMIT, CL_METHOD_FDATASYNC);
    o.sync_latency_us = 3000;
    o.checkpoint_bytes = 0;
    o.segment_size = 1u << 20;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(cl_txn_begin(db, 0, &x), 0);
    ck_assert_int_eq(cl_put(x, "k", 1, &v, sizeof v), 0);
    ck_assert_int_eq(cl_commit_timed(x, &tm), 0);
    ck_assert_msg(tm.sync_ns >= 3000000, "sync %" PRIu64 " ns on a 3 ms sync", tm.sync_ns);
    ck_assert_msg(tm.queue_ns < tm.sync_ns / 10 && tm.wakeup_ns < tm.sync_ns / 10,
                  "alone: queue %" PRIu64 " wakeup %" PRIu64 " ns", tm.queue_ns, tm.wakeup_ns);
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &x), 0);
    ck_assert_int_eq(cl_commit_timed(x, &tm), 0);
    ck_assert_uint_eq(tm.sync_ns + tm.queue_ns + tm.append_ns, 0); /* nothing to commit */
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);

    dir = tu_mkdtemp("conc");
    o.sync = CL_SYNC_GROUP;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    pthread_t th[8];
    struct timed_arg ta[8];
    uint64_t over = 0, no_sync = 0, queued = 0;
    for (int t = 0; t < 8; t++) {
        ta[t] = (struct timed_arg){.db = db, .t = t, .n = 30};
        ck_assert_int_eq(pthread_create(&th[t], NULL, timed_committer, &ta[t]), 0);
    }
    for (int t = 0; t < 8; t++) {
        pthread_join(th[t], NULL);
        over += ta[t].over;
        no_sync += ta[t].no_sync;
        queued += ta[t].queued_ns;
    }
    ck_assert_msg(over == 0, "%" PRIu64 " commits whose phases exceed their time", over);
    ck_assert_msg(no_sync < 8 * 30 / 10, "%" PRIu64 " of 240 commits waited for no sync", no_sync);
    ck_assert_msg(queued > 0, "8 committers on a 3 ms sync never queued");
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Reads every thread's a-key in one read-only transaction. */
static void read_all(struct cl_db *db, int n, uint64_t *out)
{
    struct cl_txn *r;
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &r), 0);
    for (int t = 0; t < n; t++) {
        char k[16];
        size_t l = 0;
        snprintf(k, sizeof k, "a-%02d", t);
        out[t] = 0;
        int rc = cl_get(r, k, strlen(k), &out[t], sizeof out[t], &l);
        ck_assert(rc == 0 || rc == CL_ENOTFOUND);
    }
    cl_abort(r);
}

/* One round of "what a reader saw survives a power failure": 8 committers
 * on group commit; a reader reads every thread's a-key, and the power
 * fails at once (drop: nothing unsynced survives).  Returns how many of
 * the values the reader saw are gone after recovery. */
static int reader_round(int elr, uint64_t seed)
{
    char *dir = tu_mkdtemp("conc");
    struct vfs *fault = vfs_fault_new(vfs_posix());
    struct cl_options o;
    struct shared sh = {.nthreads = 8, .txns = 0};
    pthread_t th[MAXT];
    struct targ ta[MAXT];
    uint64_t seen[MAXT], after[MAXT];
    uint64_t rs = seed;
    struct cl_db *db;
    int lost = 0;

    base_opts(&o, CL_SYNC_GROUP, CL_METHOD_FDATASYNC);
    o.elr = elr;
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &sh.db, NULL), 0);
    run_threads(&sh, th, ta);
    sleep_us(5000 + tu_range(&rs, 20000));
    read_all(sh.db, sh.nthreads, seen);
    ck_assert_int_eq(vfs_fault_crash(fault, VFS_CRASH_DROP, seed), 0);
    join_threads(&sh, th);
    cl_close(sh.db);
    vfs_destroy(fault);
    check_recovered(dir, &o, &sh, seed, elr ? "(elr on)" : "(elr off)");
    o.create = 0;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    read_all(db, sh.nthreads, after);
    ck_assert_int_eq(cl_close(db), 0);
    for (int t = 0; t < sh.nthreads; t++)
        lost += after[t] < seen[t];
    tu_rmdir(dir);
    free(dir);
    return lost;
}

/* elr off: a reader never sees a commit before it is durable (the writer
 * lock is held through the sync), so whatever a read returned survives a
 * power failure that comes right after the read.  With elr on the same
 * read may return commits the power failure then takes away (a reader
 * may see a commit that is not yet durable): that some are lost there
 * shows the check can fail.  Also: elr off forbids batching. */
START_TEST(test_elr_off_reads_only_durable)
{
    uint64_t base = tu_seed(90000);
    int rounds = (int)tu_iterations(20), lost_off = 0, lost_on = 0;
    for (int i = 0; i < rounds; i++) {
        int l = reader_round(0, base + (uint64_t)i);
        ck_assert_msg(l == 0, "seed %" PRIu64 ": elr off: %d values a reader saw were lost in a power failure",
                      base + (uint64_t)i, l);
        lost_off += l;
        lost_on += reader_round(1, base + (uint64_t)i);
    }
    printf("elr: values a reader saw, then lost in a power failure right after: elr off %d, elr on %d "
           "(%d rounds of 8 threads)\n", lost_off, lost_on, rounds);
    /* The check can see a loss: with elr on, 8 committers always have
     * commits applied and not yet synced (about a third of the values read
     * here are lost). */
    ck_assert_msg(lost_on > 0, "elr on: no value a reader saw was ever lost: the check cannot see a loss");

    char *dir = tu_mkdtemp("conc");
    struct cl_options o;
    struct shared sh = {.nthreads = 16, .txns = 40};
    pthread_t th[MAXT];
    struct targ ta[MAXT];
    struct cl_stats st;
    base_opts(&o, CL_SYNC_GROUP, CL_METHOD_FDATASYNC);
    o.elr = 0;
    ck_assert_int_eq(cl_open(dir, &o, &sh.db, NULL), 0);
    run_threads(&sh, th, ta);
    join_threads(&sh, th);
    cl_stats(sh.db, &st);
    ck_assert_uint_eq(st.commits, 16 * 40);
    /* Holding the writer lock through the sync forbids batching. */
    ck_assert_uint_eq(st.max_commits_per_sync, 1);
    ck_assert_int_eq(cl_close(sh.db), 0);
    check_recovered(dir, &o, &sh, 0, "(elr off)");
    tu_rmdir(dir);
    free(dir);
}
END_TEST

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* periodic: a commit returns before it is durable, and the background
 * thread makes it durable within its window: interval_ms plus one sync
 * (plus scheduling slack on a loaded machine, scaled like the suite's
 * timeouts).  Each commit's lag from acknowledged to durable is measured
 * by polling the durable LSN. */
START_TEST(test_periodic_window)
{
    char *dir = tu_mkdtemp("conc");
    struct cl_options o;
    struct cl_db *db;
    struct cl_stats st;
    const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
    double slack = 0.25 * (mult && atoi(mult) > 0 ? atoi(mult) : 1), worst = 0;
    uint64_t rs = tu_seed(95000);
    int not_durable_on_return = 0;

    base_opts(&o, CL_SYNC_PERIODIC, CL_METHOD_FDATASYNC);
    o.interval_ms = 50;
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    for (uint64_t i = 1; i <= 200; i++)
        ck_assert_int_eq(commit_pair(db, 0, i), 0);
    cl_stats(db, &st);
    ck_assert_uint_lt(st.syncs, 200); /* far fewer syncs than commits */

    for (uint64_t i = 201; i <= 220; i++) {
        sleep_us(tu_range(&rs, 60000)); /* land anywhere in the interval */
        ck_assert_int_eq(commit_pair(db, 0, i), 0);
        double t0 = now_s();
        cl_stats(db, &st);
        uint64_t mine = st.end_lsn; /* one thread: the log ends with this commit */
        not_durable_on_return += st.durable_lsn < mine;
        while (st.durable_lsn < mine && now_s() - t0 < 5.0) {
            sleep_us(500);
            cl_stats(db, &st);
        }
        ck_assert_msg(st.durable_lsn >= mine, "commit %" PRIu64 " not durable 5 s after it returned", i);
        double lag = now_s() - t0;
        worst = lag > worst ? lag : worst;
    }
    ck_assert_msg(worst <= o.interval_ms / 1000.0 + slack,
                  "a commit became durable %.3f s after it returned; the window is %u ms + one sync", worst,
                  o.interval_ms);
    ck_assert_msg(not_durable_on_return > 0, "every commit was durable when it returned: not periodic");
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* The emulated slow device: each commit under `commit` pays the latency. */
START_TEST(test_sync_latency_emulated)
{
    char *dir = tu_mkdtemp("conc");
    struct cl_options o;
    struct cl_db *db;

    base_opts(&o, CL_SYNC_COMMIT, CL_METHOD_FDATASYNC);
    o.sync_latency_us = 5000;
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    double t0 = now_s();
    for (uint64_t i = 1; i <= 20; i++)
        ck_assert_int_eq(commit_pair(db, 0, i), 0);
    double dt = now_s() - t0;
    ck_assert_msg(dt >= 20 * 0.005, "20 commits took %.3f s with 5 ms emulated syncs", dt);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("concurrency");
    TCase *tc = tcase_create("policies");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_crash_while_threads_commit);
    tcase_add_test(tc, test_eio_in_group_batch);
    tcase_add_test(tc, test_64_clients_group);
    tcase_add_test(tc, test_batches_by_design);
    tcase_add_test(tc, test_commit_times);
    tcase_add_test(tc, test_elr_off_reads_only_durable);
    tcase_add_test(tc, test_periodic_window);
    tcase_add_test(tc, test_sync_latency_emulated);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
