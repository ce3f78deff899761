/*
 * check_wait.c -- how a committer waits for another thread's sync
 * (cl_options.wait: block, spin, adaptive; waitq.c), under group, uring
 * and flusher:
 *   - no committer returns before its commit is durable: on a file layer
 *     that remembers what each completed sync covered and holds every sync
 *     at a gate the test opens one sync at a time, each committer checks,
 *     the moment wal_commit returns, that a completed sync covered its
 *     commit LSN; and a sync that covered only the first commit lets only
 *     that one return (under uring that one is the leader, which stays
 *     until its tenure's chains are done);
 *   - 64 committers finish in bounded time (an alarm), every commit
 *     acknowledged and durable: no wake-up is lost.
 */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "vfs_fault.h"
#include "wal.h"
#include "wal_internal.h"
#include "wal_testlib.h"

#define SEG (1u << 20)

static const enum cl_wait waits[] = {CL_WAIT_BLOCK, CL_WAIT_SPIN, CL_WAIT_ADAPTIVE};
static const char *const wait_names[] = {"block", "spin", "adaptive"};
static const enum cl_sync_policy policies[] = {CL_SYNC_GROUP, CL_SYNC_FLUSHER, CL_SYNC_URING};

/* ---- a file layer that knows what is durable, with a gate on its syncs ----
 * written_hi: the end of the highest byte written so far; durable_hi: the
 * highest written_hi a sync saw on entry and then completed.  The log
 * here has one segment, so a commit LSN is durable once its offset in the
 * segment is at most durable_hi. */
static struct vfs_ops track_ops;
static struct vfs track_vfs;
static uint64_t written_hi, durable_hi; /* atomic */
static struct tl_gate gate = TL_GATE_INIT;

static void raise_to(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        ;
}

static int track_pwrite(struct vfs_file *f, const void *buf, size_t len, uint64_t off)
{
    int rc = vfs_posix()->ops->pwrite(f, buf, len, off);
    if (rc == 0)
        raise_to(&written_hi, off + len);
    return rc;
}

static int track_sync(struct vfs_file *f, int (*base)(struct vfs_file *))
{
    uint64_t hi = __atomic_load_n(&written_hi, __ATOMIC_ACQUIRE);
    tl_gate_pass(&gate);
    int rc = base(f);
    if (rc == 0)
        raise_to(&durable_hi, hi);
    return rc;
}

static int track_fsync(struct vfs_file *f)
{
    return track_sync(f, vfs_posix()->ops->fsync);
}
static int track_fdatasync(struct vfs_file *f)
{
    return track_sync(f, vfs_posix()->ops->fdatasync);
}

static struct vfs *track_new(void)
{
    track_ops = *vfs_posix()->ops;
    track_ops.pwrite = track_pwrite;
    track_ops.fsync = track_fsync;
    track_ops.fdatasync = track_fdatasync;
    track_ops.ring_open = NULL; /* rings come from a fault layer above, through these calls */
    track_vfs = (struct vfs){.ops = &track_ops, .name = "track"};
    written_hi = durable_hi = 0;
    tl_gate_reset(&gate, 1);
    return &track_vfs;
}

/* ---- committers ------------------------------------------------------------ */

struct committer {
    pthread_t th;
    struct wal *w;
    const struct genp *g;
    uint64_t id, lsn, txns;
    int rc, done; /* done: atomic */
    int early;    /* returned 0 before a completed sync covered its commit */
    int tracked;  /* check against the file layer's durable_hi */
};

static void *commit_loop(void *arg)
{
    struct committer *c = arg;
    for (uint64_t i = 0; i < c->txns && c->rc == 0; i++) {
        c->rc = tl_txn(c->w, c->g, c->id + i, 1, &c->lsn);
        if (c->rc == 0 && c->tracked && c->lsn % SEG > __atomic_load_n(&durable_hi, __ATOMIC_ACQUIRE))
            c->early++;
        if (c->rc == 0 && wal_durable_lsn(c->w) < c->lsn)
            c->early++;
    }
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void start(struct committer *c, struct wal *w, const struct genp *g, uint64_t id, uint64_t txns, int tracked)
{
    *c = (struct committer){.w = w, .g = g, .id = id, .txns = txns, .tracked = tracked};
    ck_assert_int_eq(pthread_create(&c->th, NULL, commit_loop, c), 0);
}

static int uring_here(void)
{
    struct vfs_ring *r;
    if (vfs_ring_open(vfs_posix(), 2, &r) != 0)
        return 0;
    vfs_ring_close(r);
    return 1;
}

/* Committer 1's sync is held at the gate while five more queue behind it;
 * the syncs are let through one at a time.  Nobody returns before a
 * completed sync covered its commit, and the first sync, which covered
 * commit 1 alone, lets only committer 1 return. */
/* Each log the suite opens takes the next of log_insert mutex and slots
 * (or $CL_LOG_INSERT's): with slots, the 64 committers below append
 * through slots that several of them join. */
static uint64_t opened;

static void none_woken_early(enum cl_sync_policy p, enum cl_wait how)
{
    enum { N = 6 };
    char *dir = tu_mkdtemp("wait-early");
    struct genp g = {tu_seed(21), 2, 16, 100};
    struct vfs *tv = track_new(), *fv = NULL, *v = tv;
    if (p == CL_SYNC_URING) {
        fv = vfs_fault_new(tv); /* its ring runs the chains through the tracked, gated calls */
        v = fv;
    }
    struct wal_config cfg = tl_config(dir, v, SEG, p, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0);
    cfg.opt.wait = how;
    cfg.opt.wait_spin_us = 50;
    cfg.opt.log_insert = (enum cl_log_insert)tu_log_insert(opened++);
    struct wal *w = NULL;
    ck_assert_int_eq(wal_open(&cfg, 0, &w), 0);
    struct committer c[N];
    const char *what = cl_sync_policy_name(p);

    tl_gate_reset(&gate, 0);
    start(&c[0], w, &g, 1, 1, 1);
    ck_assert_msg(tl_gate_wait_entered(&gate, 1) >= 1, "%s wait %s: the first sync never came", what, wait_names[how]);
    for (int i = 1; i < N; i++)
        start(&c[i], w, &g, 1 + (uint64_t)i, 1, 1);
    tl_sleep_ms(30); /* they append, queue and wait (spinning, yielding or asleep) */
    for (int i = 1; i < N; i++)
        ck_assert_msg(!__atomic_load_n(&c[i].done, __ATOMIC_ACQUIRE),
                      "%s wait %s: committer %d returned while every sync was held", what, wait_names[how], i);

    tl_gate_permit(&gate, 1, 0); /* the first sync completes: it covered commit 1 only */
    /* (uring's leader, committer 0, stays until its tenure's chains are
     * done: the next chain is held at the gate) */
    for (int i = 0; i < 10000 && p != CL_SYNC_URING && !__atomic_load_n(&c[0].done, __ATOMIC_ACQUIRE); i++)
        tl_sleep_ms(1);
    ck_assert_msg(p == CL_SYNC_URING || __atomic_load_n(&c[0].done, __ATOMIC_ACQUIRE),
                  "%s wait %s: committer 0 never returned", what, wait_names[how]);
    tl_sleep_ms(30);
    for (int i = 1; i < N; i++)
        if (__atomic_load_n(&c[i].done, __ATOMIC_ACQUIRE))
            ck_assert_msg(c[i].lsn % SEG <= __atomic_load_n(&durable_hi, __ATOMIC_ACQUIRE),
                          "%s wait %s: committer %d returned, its commit not covered by the one sync let through", what,
                          wait_names[how], i);

    for (int k = 0; k < N + 2; k++) { /* the rest, one sync at a time */
        tl_gate_permit(&gate, 1, 0);
        tl_sleep_ms(5);
    }
    tl_gate_permit(&gate, 0, 1);
    for (int i = 0; i < N; i++) {
        pthread_join(c[i].th, NULL);
        ck_assert_msg(c[i].rc == 0, "%s wait %s: committer %d: %s", what, wait_names[how], i, cl_strerror(c[i].rc));
        ck_assert_msg(c[i].early == 0, "%s wait %s: committer %d returned before its commit was durable", what,
                      wait_names[how], i);
    }
    wal_close(w);
    vfs_destroy(fv);
    tu_rmdir(dir);
    free(dir);
}

START_TEST(test_none_woken_early)
{
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
        if (policies[p] == CL_SYNC_URING && !uring_here()) {
            fprintf(stderr, "io_uring is not available here: uring skipped\n");
            continue;
        }
        for (size_t m = 0; m < sizeof waits / sizeof *waits; m++)
            none_woken_early(policies[p], waits[m]);
    }
}
END_TEST

/* 64 committers, each mode, each policy: all finish within the alarm, every
 * commit acknowledged and durable when acknowledged.  A lost wake-up would
 * leave a committer asleep for ever: the alarm ends the test. */
static void sixty_four(enum cl_sync_policy p, enum cl_wait how, uint64_t per)
{
    enum { N = 64 };
    char *dir = tu_mkdtemp("wait-64");
    struct genp g = {tu_seed(22), 2, 16, 100};
    struct wal_config cfg = tl_config(dir, NULL, 64u << 20, p, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0);
    cfg.opt.wait = how;
    cfg.opt.wait_spin_us = 50;
    cfg.opt.log_insert = (enum cl_log_insert)tu_log_insert(opened++);
    struct wal *w = NULL;
    ck_assert_int_eq(wal_open(&cfg, 0, &w), 0);
    struct committer *c = calloc(N, sizeof *c);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < N; i++)
        start(&c[i], w, &g, 1 + (uint64_t)i * per, per, 0);
    for (int i = 0; i < N; i++) {
        pthread_join(c[i].th, NULL);
        ck_assert_msg(c[i].rc == 0, "%s wait %s: committer %d: %s", cl_sync_policy_name(p), wait_names[how], i,
                      cl_strerror(c[i].rc));
        ck_assert_msg(c[i].early == 0, "%s wait %s: committer %d acknowledged before durable", cl_sync_policy_name(p),
                      wait_names[how], i);
    }
    struct wal_stats st;
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.commits, N * per);
    wal_close(w);
    free(c);
    tu_rmdir(dir);
    free(dir);
}

START_TEST(test_64_clients_every_mode)
{
    /* bounded: a lost wake-up hangs, and SIGALRM ends the test (as a failure) */
    alarm(240);
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
        if (policies[p] == CL_SYNC_URING && !uring_here()) {
            fprintf(stderr, "io_uring is not available here: uring skipped\n");
            continue;
        }
        for (size_t m = 0; m < sizeof waits / sizeof *waits; m++) {
            uint64_t t0 = cl_now_ns();
            sixty_four(policies[p], waits[m], 10);
            fprintf(stderr, "%s wait %s: 64 clients x 10 commits in %.2f s\n", cl_sync_policy_name(policies[p]),
                    wait_names[waits[m]], (double)(cl_now_ns() - t0) / 1e9);
        }
    }
    alarm(0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wait");
    TCase *tc = tcase_create("wait");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_none_woken_early);
    tcase_add_test(tc, test_64_clients_every_mode);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
