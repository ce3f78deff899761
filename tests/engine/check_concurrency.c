/*
 * check_concurrency.c -- the durable policies with many committers: power
 * failures while threads commit, an I/O error in the middle of a batch,
 * 64 clients (run it under ThreadSanitizer), periodic's loss window, early
 * lock release off, and the emulated slow device.
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

/* Power failures while 8 threads commit, for each durable policy and
 * crash model. */
START_TEST(test_crash_while_threads_commit)
{
    static const enum cl_sync_policy pols[] = {CL_SYNC_GROUP, CL_SYNC_COMMIT, CL_SYNC_GROUP, CL_SYNC_URING};
    static const enum cl_sync_method meths[] = {CL_METHOD_FDATASYNC, CL_METHOD_FDATASYNC, CL_METHOD_DSYNC,
                                                CL_METHOD_FDATASYNC};
    uint64_t base = tu_seed(500);
    uint64_t iters = tu_iterations(120);
    for (uint64_t it = 0; it < iters; it++) {
        uint64_t seed = base + it, rs = seed;
        int cfg = (int)(seed % 4);
        enum vfs_crash_model model = (enum vfs_crash_model)((seed / 4) % 3);
        char *dir = tu_mkdtemp("conc");
        struct vfs *fault = vfs_fault_new(vfs_posix());
        struct cl_options o;
        struct shared sh = {.nthreads = 8};
        pthread_t th[MAXT];
        struct targ ta[MAXT];
        char what[64];

        snprintf(what, sizeof what, "(%s/%s, model %s)", cl_sync_policy_name(pols[cfg]),
                 cl_sync_method_name(meths[cfg]), vfs_crash_model_name(model));
        base_opts(&o, pols[cfg], meths[cfg]);
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

/* EIO on the sync of a group batch: nobody in the batch is acknowledged,
 * the handle breaks, and after a power failure everything acknowledged
 * before is there. */
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

        base_opts(&o, CL_SYNC_GROUP, it % 2 ? CL_METHOD_FSYNC : CL_METHOD_FDATASYNC);
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
        check_recovered(dir, &o, &sh, seed, "(group, EIO mid-batch)");
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

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
    ck_assert_int_eq(cl_close(sh.db), 0);
    check_recovered(dir, &o, &sh, 0, "(64 clients)");
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* elr off with group commit and 16 clients: correct, and readers never see
 * a commit before it is durable (checked by the durable LSN at read time
 * being at least the LSN the write produced is not observable here; we
 * check correctness and that batching still happens). */
START_TEST(test_elr_off_group)
{
    char *dir = tu_mkdtemp("conc");
    struct cl_options o;
    struct shared sh = {.nthreads = 16, .txns = 40};
    pthread_t th[MAXT];
    struct targ ta[MAXT];

    base_opts(&o, CL_SYNC_GROUP, CL_METHOD_FDATASYNC);
    o.elr = 0;
    ck_assert_int_eq(cl_open(dir, &o, &sh.db, NULL), 0);
    run_threads(&sh, th, ta);
    join_threads(&sh, th);
    struct cl_stats st;
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

/* periodic: commits return before they are durable, and the background
 * thread makes them durable within the interval. */
START_TEST(test_periodic_window)
{
    char *dir = tu_mkdtemp("conc");
    struct cl_options o;
    struct cl_db *db;
    struct cl_stats st;

    base_opts(&o, CL_SYNC_PERIODIC, CL_METHOD_FDATASYNC);
    o.interval_ms = 50;
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    for (uint64_t i = 1; i <= 200; i++)
        ck_assert_int_eq(commit_pair(db, 0, i), 0);
    cl_stats(db, &st);
    ck_assert_uint_lt(st.syncs, 200); /* far fewer syncs than commits */
    /* Within a few intervals everything acknowledged is durable. */
    int durable = 0;
    for (int tries = 0; tries < 100 && !durable; tries++) {
        sleep_us(20000);
        cl_stats(db, &st);
        durable = st.durable_lsn >= st.end_lsn;
    }
    ck_assert_msg(durable, "durable LSN %" PRIu64 " behind end %" PRIu64 " after 2 s", st.durable_lsn, st.end_lsn);
    ck_assert_int_eq(cl_close(db), 0);
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
    tcase_add_test(tc, test_elr_off_group);
    tcase_add_test(tc, test_periodic_window);
    tcase_add_test(tc, test_sync_latency_emulated);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
