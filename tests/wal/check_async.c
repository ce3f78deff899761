/*
 * check_async.c -- asynchronous commits in the log, and the flusher's
 * per-LSN wake-ups, on a file layer whose syncs wait at a gate the test
 * opens one sync at a time:
 *   - the flusher wakes only the sleepers a sync covered: those that
 *     arrived during the sync stay asleep until the next one;
 *   - group and uring: an asynchronous commit that arrives while a leader
 *     syncs a batch it missed is made durable with nobody else committing
 *     (the leader leads again for it), and its callback comes;
 *   - callbacks come once each, in LSN order, only once durable; a failed
 *     sync gives every callback of its batch the error and none 0.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "vfs_fault.h"
#include "vfs_latency.h"
#include "wal.h"
#include "wal_internal.h"
#include "wal_testlib.h"

#define SEG (1u << 20)

/* ---- a gate on the syncs ----------------------------------------------------
 * The POSIX layer whose fsync and fdatasync of log segments wait, while the
 * gate is shut, for a permit the test hands out; it counts the syncs that
 * reached the gate. */
static struct vfs_ops gate_ops;
static struct vfs gate_vfs;
static struct tl_gate gate = TL_GATE_INIT;

static void gate_pass(struct vfs_file *f)
{
    if (f->cls == VFS_CLASS_WAL)
        tl_gate_pass(&gate);
}

static int gate_fsync(struct vfs_file *f)
{
    gate_pass(f);
    return vfs_posix()->ops->fsync(f);
}

static int gate_fdatasync(struct vfs_file *f)
{
    gate_pass(f);
    return vfs_posix()->ops->fdatasync(f);
}

static struct vfs *gate_new(void)
{
    gate_ops = *vfs_posix()->ops;
    gate_ops.fsync = gate_fsync;
    gate_ops.fdatasync = gate_fdatasync;
    gate_ops.ring_open = NULL; /* rings come from a fault layer above, through these syncs */
    gate_vfs = (struct vfs){.ops = &gate_ops, .name = "gate"};
    tl_gate_reset(&gate, 1);
    return &gate_vfs;
}

static void gate_shut(void)
{
    tl_gate_reset(&gate, 0); /* the syncs of the open do not count */
}

static void gate_permit(int n, int open)
{
    tl_gate_permit(&gate, n, open);
}

/* Waits (at most 10 s) until at least n syncs reached the gate. */
static void gate_wait_entered(int n)
{
    int entered = tl_gate_wait_entered(&gate, n);
    ck_assert_msg(entered >= n, "only %d syncs reached the gate, %d expected", entered, n);
}


/* Polls (at most 10 s) until *flag is set. */
static int wait_flag(const int *flag)
{
    for (int i = 0; i < 10000 && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
        tl_sleep_ms(1);
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* ---- committers ---------------------------------------------------------- */

struct committer {
    pthread_t th;
    struct wal *w;
    const struct genp *g;
    uint64_t id, lsn;
    int rc, done; /* done: atomic */
};

static void *commit_one(void *arg)
{
    struct committer *c = arg;
    c->rc = tl_txn(c->w, c->g, c->id, 1, &c->lsn);
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void start(struct committer *c, struct wal *w, const struct genp *g, uint64_t id)
{
    *c = (struct committer){.w = w, .g = g, .id = id, .rc = -1};
    ck_assert_int_eq(pthread_create(&c->th, NULL, commit_one, c), 0);
}

static struct wal_stats stats(struct wal *w)
{
    struct wal_stats st;
    wal_get_stats(w, &st);
    return st;
}

/* Waits (at most 10 s) until n committers sleep in the flusher's queue. */
static void wait_sleepers(struct wal *w, uint64_t n)
{
    for (int i = 0; i < 10000 && stats(w).waiter_sleeps < n; i++)
        tl_sleep_ms(1);
    ck_assert_uint_ge(stats(w).waiter_sleeps, n);
}

/* The flusher's sync covers the first commit only; the two that arrived
 * during it sleep on, and are woken by the next sync, each once. */
START_TEST(test_flusher_wakes_only_covered)
{
    char *dir = tu_mkdtemp("async-wake");
    struct genp g = {tu_seed(11), 2, 16, 100};
    struct wal *w = tl_open(dir, gate_new(), SEG, CL_SYNC_FLUSHER, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 0,
                            NULL);
    struct committer c[3];

    gate_shut();
    start(&c[0], w, &g, 1);
    gate_wait_entered(1); /* the flusher syncs commit 1 and waits at the gate */
    wait_sleepers(w, 1);
    start(&c[1], w, &g, 2);
    start(&c[2], w, &g, 3);
    wait_sleepers(w, 3);
    ck_assert_uint_eq(stats(w).waiter_wakeups, 0);

    gate_permit(1, 0); /* the first sync completes: commit 1 only */
    ck_assert(wait_flag(&c[0].done));
    gate_wait_entered(2); /* the flusher syncs 2 and 3 and waits at the gate */
    tl_sleep_ms(20);
    struct wal_stats st = stats(w);
    ck_assert_int_eq(c[0].rc, 0);
    ck_assert_msg(!__atomic_load_n(&c[1].done, __ATOMIC_ACQUIRE) && !__atomic_load_n(&c[2].done, __ATOMIC_ACQUIRE),
                  "a committer the sync did not cover returned");
    ck_assert_msg(st.waiter_wakeups == 1, "the sync covering 1 of 3 sleepers woke %llu",
                  (unsigned long long)st.waiter_wakeups);
    ck_assert_uint_eq(st.partial_wakeups, 1);

    gate_permit(0, 1);
    for (int i = 0; i < 3; i++) {
        pthread_join(c[i].th, NULL);
        ck_assert_int_eq(c[i].rc, 0);
        ck_assert_uint_ge(wal_durable_lsn(w), c[i].lsn);
    }
    st = stats(w);
    ck_assert_uint_eq(st.waiter_sleeps, 3);
    ck_assert_uint_eq(st.waiter_wakeups, 3); /* each sleeper once */
    ck_assert_uint_eq(st.waiter_spurious, 0);
    wal_close(w);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Many committers on the flusher: every sleeper woken exactly once, and
 * only once covered. */
START_TEST(test_flusher_many_sleepers)
{
    char *dir = tu_mkdtemp("async-many");
    struct genp g = {tu_seed(12), 2, 16, 100};
    struct vfs *fv = vfs_fault_new(vfs_posix());
    struct wal *w = tl_open(dir, fv, SEG, CL_SYNC_FLUSHER, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 0, NULL);
    enum { N = 32, PER = 20 };
    struct committer c[N];
    for (int r = 0; r < PER; r++) {
        for (int i = 0; i < N; i++)
            start(&c[i], w, &g, 1 + (uint64_t)r * N + (uint64_t)i);
        for (int i = 0; i < N; i++) {
            pthread_join(c[i].th, NULL);
            ck_assert_int_eq(c[i].rc, 0);
        }
    }
    struct wal_stats st = stats(w);
    ck_assert_uint_eq(st.waiter_wakeups, st.waiter_sleeps);
    ck_assert_uint_eq(st.waiter_spurious, 0);
    fprintf(stderr, "flusher: %d commits, %llu syncs, %llu sleepers, %llu advances left later sleepers asleep\n",
            N * PER, (unsigned long long)st.syncs, (unsigned long long)st.waiter_sleeps,
            (unsigned long long)st.partial_wakeups);
    wal_close(w);
    vfs_destroy(fv);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ---- callbacks ---------------------------------------------------------- */

struct cb_log {
    struct wal *w;
    int n;                   /* callbacks so far */
    uint64_t lsn[256];       /* the LSN of each, in the order called */
    int rc[256];
    int early;               /* a callback got 0 before its LSN was durable */
};

struct cb_arg {
    struct cb_log *log;
    uint64_t lsn;
    int calls;               /* atomic */
    int done;                /* atomic */
};

static void on_durable(void *arg, int rc)
{
    struct cb_arg *a = arg;
    struct cb_log *l = a->log;
    if (rc == 0 && wal_durable_lsn(l->w) < a->lsn)
        l->early++;
    if (l->n < 256) {
        l->lsn[l->n] = a->lsn;
        l->rc[l->n] = rc;
    }
    l->n++;
    __atomic_add_fetch(&a->calls, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
}

/* The engine's writer lock: a callback is added in log order. */
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;

/* Appends txn id and commits it asynchronously with a as its callback. */
static void commit_async(struct wal *w, const struct genp *g, uint64_t id, struct cb_arg *a)
{
    struct gtx t;
    gt_make(g, id, &t);
    struct wal_async_entry *e = wal_async_entry_new(on_durable, a);
    ck_assert_ptr_nonnull(e);
    pthread_mutex_lock(&writer_lock);
    int rc = wal_append_txn(w, id, t.ops, t.n, &a->lsn);
    if (rc == 0)
        wal_async_add(w, e, a->lsn);
    pthread_mutex_unlock(&writer_lock);
    gt_free(&t);
    ck_assert_int_eq(rc, 0);
    wal_commit_async(w, a->lsn);
    wal_async_deliver(w);
}

/* A leader syncs commit 1; commit 2 arrives asynchronously during that
 * sync, finds the leader at work and returns at once.  Nobody commits
 * after it: the leader, stepping down with nobody queued, leads again for
 * it, and its callback comes. */
static void lone_async_behind_leader(enum cl_sync_policy p)
{
    char *dir = tu_mkdtemp("async-lone");
    struct genp g = {tu_seed(13), 2, 16, 100};
    struct vfs *gv = gate_new(), *fv = NULL, *v = gv;
    if (p == CL_SYNC_URING) {
        fv = vfs_fault_new(gv); /* its ring runs the chains through the gated syncs */
        v = fv;
    }
    struct wal *w = tl_open(dir, v, SEG, p, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 0, NULL);
    struct committer c;
    struct cb_log log = {.w = w};
    struct cb_arg a = {.log = &log};

    gate_shut();
    start(&c, w, &g, 1);
    gate_wait_entered(1); /* the leader is in its sync */
    commit_async(w, &g, 2, &a);
    ck_assert_int_eq(__atomic_load_n(&a.calls, __ATOMIC_ACQUIRE), 0); /* returned without leading */
    ck_assert(!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE));
    gate_permit(0, 1);
    ck_assert_msg(wait_flag(&a.done), "%s: the lone asynchronous commit never became durable",
                  cl_sync_policy_name(p));
    pthread_join(c.th, NULL);
    ck_assert_int_eq(c.rc, 0);
    ck_assert_int_eq(a.calls, 1);
    ck_assert_int_eq(log.rc[0], 0);
    ck_assert_int_eq(log.early, 0);
    ck_assert_uint_ge(wal_durable_lsn(w), a.lsn);
    ck_assert_uint_eq(stats(w).async_commits, 1);

    /* and alone, with no leader at all: it leads itself */
    struct cb_arg b = {.log = &log};
    commit_async(w, &g, 3, &b);
    ck_assert(wait_flag(&b.done));
    ck_assert_int_eq(log.rc[1], 0);
    wal_close(w);
    vfs_destroy(fv);
    tu_rmdir(dir);
    free(dir);
}

START_TEST(test_lone_async_group) { lone_async_behind_leader(CL_SYNC_GROUP); }
END_TEST

START_TEST(test_lone_async_uring)
{
    struct vfs_ring *r;
    if (vfs_ring_open(vfs_posix(), 2, &r) != 0) {
        fprintf(stderr, "io_uring is not available here: skipped\n");
        return;
    }
    vfs_ring_close(r);
    lone_async_behind_leader(CL_SYNC_URING);
}
END_TEST

/* Every policy: callbacks once each, in LSN order, each only once its LSN
 * is durable (written, under none); wal_sync_wait returns after all of
 * them; the counts include them. */
START_TEST(test_callbacks_in_order)
{
    for (int p = 0; p < CL_SYNC_NPOLICIES; p++) {
        char *dir = tu_mkdtemp("async-order");
        struct genp g = {tu_seed(14) + (uint64_t)p, 3, 16, 200};
        int rc;
        struct wal_config cfg = tl_config(dir, NULL, SEG, (enum cl_sync_policy)p, CL_METHOD_FDATASYNC,
                                          CL_SEGINIT_SPARSE, 0);
        cfg.opt.interval_ms = 5;
        struct wal *w = NULL;
        rc = wal_open(&cfg, 0, &w);
        if (rc == CL_ENOTSUP && p == CL_SYNC_URING) {
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        struct cb_log *log = calloc(1, sizeof *log);
        struct cb_arg *a = calloc(200, sizeof *a);
        log->w = w;
        for (uint64_t i = 0; i < 200; i++) {
            a[i].log = log;
            commit_async(w, &g, i + 1, &a[i]);
        }
        ck_assert_int_eq(wal_sync_wait(w), 0);
        ck_assert_int_eq(log->n, 200);
        if (!w->policy->ack_written)
            ck_assert_int_eq(log->early, 0);
        for (int i = 0; i < 200; i++) {
            ck_assert_int_eq(a[i].calls, 1);
            ck_assert_int_eq(log->rc[i], 0);
            ck_assert_uint_eq(log->lsn[i], a[i].lsn); /* in the order added: LSN order */
        }
        ck_assert_uint_eq(stats(w).async_commits, 200);
        ck_assert_uint_eq(stats(w).commits, 200);
        wal_close(w);
        free(a);
        free(log);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* A sync that fails in the middle: the callbacks of what it would have
 * made durable get the error, none 0; those durable before got 0; the
 * log refuses from then on, and what is read back after a power failure
 * holds every commit whose callback got 0. */
START_TEST(test_failed_sync_fails_its_batch)
{
    for (int it = 0; it < 6; it++) {
        char *dir = tu_mkdtemp("async-fail");
        struct genp g = {tu_seed(15) + (uint64_t)it, 3, 16, 200};
        struct vfs *fv = vfs_fault_new(vfs_posix());
        enum cl_sync_policy p = it % 3 == 0 ? CL_SYNC_GROUP : it % 3 == 1 ? CL_SYNC_FLUSHER : CL_SYNC_COMMIT;
        struct wal *w = tl_open(dir, fv, SEG, p, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 0, NULL);
        struct cb_log *log = calloc(1, sizeof *log);
        struct cb_arg *a = calloc(120, sizeof *a);
        log->w = w;
        if (it < 3)
            vfs_fault_fail_sync(fv, 3 + (uint64_t)it, -EIO);
        else
            vfs_fault_fail_write(fv, 3 + (uint64_t)it, -ENOSPC);
        int n = 0;
        for (; n < 120; n++) {
            struct gtx t;
            gt_make(&g, (uint64_t)n + 1, &t);
            int rc = wal_append_txn(w, (uint64_t)n + 1, t.ops, t.n, &a[n].lsn);
            gt_free(&t);
            if (rc) {
                ck_assert(wal_broken(w) != 0);
                break;
            }
            a[n].log = log;
            wal_async_add(w, wal_async_entry_new(on_durable, &a[n]), a[n].lsn);
            wal_commit_async(w, a[n].lsn);
            wal_async_deliver(w);
            if (n % 10 == 9 && wal_sync_wait(w) != 0) { /* a sync at least every 10: the failing one comes */
                n++;
                break;
            }
        }
        int rc = wal_sync_wait(w);
        int want = it < 3 ? -EIO : -ENOSPC;
        ck_assert_msg(rc == want, "%s, iteration %d: sync wait %d after %d commits", cl_sync_policy_name(p), it, rc, n);
        ck_assert_int_eq(wal_broken(w), want);
        ck_assert_int_eq(log->n, n); /* every registered callback called */
        int failed = 0, acked = 0;
        for (int i = 0; i < n; i++) {
            ck_assert_int_eq(a[i].calls, 1);
            ck_assert_uint_eq(log->lsn[i], a[i].lsn);
            if (log->rc[i] == 0) {
                ck_assert_msg(!failed, "%s: callback %d got 0 after one got the error", cl_sync_policy_name(p), i);
                ck_assert_uint_le(a[i].lsn, wal_durable_lsn(w));
                acked = i + 1;
            } else {
                ck_assert_int_eq(log->rc[i], want);
                ck_assert_uint_gt(a[i].lsn, wal_durable_lsn(w));
                failed++;
            }
        }
        ck_assert_int_ge(failed, 1);
        ck_assert_int_eq(log->early, 0);
        uint64_t lsn;
        ck_assert_int_eq(tl_txn(w, &g, 1000, 0, &lsn), CL_EBROKEN);
        wal_close(w);
        ck_assert_int_eq(vfs_fault_crash(fv, VFS_CRASH_DROP, (uint64_t)it), 0);
        vfs_destroy(fv);
        struct rb rb;
        tl_read(dir, NULL, SEG, 0, &g, &rb);
        ck_assert_msg(rb.err[0] == 0, "%s", rb.err);
        ck_assert_int_eq(rb.rc, 0);
        ck_assert_uint_ge(rb.ntxn, (size_t)acked);
        rb_free(&rb);
        free(a);
        free(log);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* ---- a steady stream of asynchronous commits under group ------------------ */

struct streamer {
    pthread_t th;
    struct wal *w;
    const struct genp *g;
    int id, n;
    struct cb_log log;          /* this thread's callbacks (called one at a time) */
    struct cb_arg *a;
    double longest;             /* the longest wal_commit_async, in seconds */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *stream(void *arg)
{
    struct streamer *st = arg;
    for (int i = 0; i < st->n; i++) {
        struct cb_arg *a = &st->a[i];
        a->log = &st->log;
        double t0 = now_s();
        commit_async(st->w, st->g, (uint64_t)st->id * 100000 + (uint64_t)i + 1, a);
        double took = now_s() - t0;
        if (took > st->longest)
            st->longest = took;
    }
    return NULL;
}

/* Four threads commit asynchronously without pause on a device whose
 * syncs take 1 ms (emulated): every callback comes, with 0, in each
 * thread's order, and no call leads for long. */
START_TEST(test_group_async_stream)
{
    char *dir = tu_mkdtemp("async-stream");
    struct genp g = {tu_seed(16), 2, 16, 100};
    struct vfs *slow = vfs_latency_new(vfs_posix(), 1000);
    struct wal *w = tl_open(dir, slow, SEG, CL_SYNC_GROUP, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 0, NULL);
    enum { T = 4, N = 250 };
    struct streamer st[T];
    double t0 = now_s(), longest = 0;
    for (int i = 0; i < T; i++) {
        st[i] = (struct streamer){.w = w, .g = &g, .id = i + 1, .n = N, .a = calloc(N, sizeof(struct cb_arg))};
        st[i].log.w = w;
        ck_assert_int_eq(pthread_create(&st[i].th, NULL, stream, &st[i]), 0);
    }
    for (int i = 0; i < T; i++)
        pthread_join(st[i].th, NULL);
    ck_assert_int_eq(wal_sync_wait(w), 0);
    double total = now_s() - t0;
    for (int i = 0; i < T; i++) {
        ck_assert_int_eq(st[i].log.early, 0);
        for (int k = 0; k < N; k++) {
            ck_assert_int_eq(st[i].a[k].calls, 1);
            if (k < 256) {
                ck_assert_int_eq(st[i].log.rc[k], 0);
                ck_assert_uint_eq(st[i].log.lsn[k], st[i].a[k].lsn); /* this thread's, in its order */
            }
        }
        longest = st[i].longest > longest ? st[i].longest : longest;
        free(st[i].a);
    }
    struct wal_stats ws = stats(w);
    fprintf(stderr, "group stream: %d commits in %.2f s, %llu syncs, %llu hand-overs, longest call %.1f ms\n", T * N,
            total, (unsigned long long)ws.syncs, (unsigned long long)ws.leader_handoffs, longest * 1e3);
    ck_assert_uint_eq(ws.async_commits, (uint64_t)T * N);
    wal_close(w);
    vfs_destroy(slow);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

struct async_one {
    pthread_t th;
    struct wal *w;
    const struct genp *g;
    uint64_t id;
    struct cb_arg *a;
    int done; /* atomic: wal_commit_async returned */
};

static void *async_one_main(void *arg)
{
    struct async_one *x = arg;
    commit_async(x->w, x->g, x->id, x->a);
    __atomic_store_n(&x->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int wait_flag_ms(const int *flag, unsigned ms)
{
    for (unsigned i = 0; i < ms && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
        tl_sleep_ms(1);
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* L5: commit 1 leads; commit k+1 arrives while its leader syncs batch k,
 * so the leader leads again for it, and again, with its own commit long
 * durable.  After a few batches for others the next asynchronous
 * committer no longer returns at once: it waits to take over, the leader
 * hands it the lead and returns. */
START_TEST(test_group_leader_hands_over)
{
    char *dir = tu_mkdtemp("async-handoff");
    struct genp g = {tu_seed(17), 2, 16, 100};
    struct wal *w = tl_open(dir, gate_new(), SEG, CL_SYNC_GROUP, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 0, NULL);
    enum { ROUNDS = 12 };
    struct async_one x[ROUNDS + 1];
    struct cb_log log = {.w = w};
    struct cb_arg a[ROUNDS + 1];
    int handed = 0;

    memset(a, 0, sizeof a);
    gate_shut();
    x[0] = (struct async_one){.w = w, .g = &g, .id = 1, .a = &a[0]};
    a[0].log = &log;
    ck_assert_int_eq(pthread_create(&x[0].th, NULL, async_one_main, &x[0]), 0);
    int k;
    for (k = 1; k <= ROUNDS; k++) {
        gate_wait_entered(k); /* the leader syncs batch k */
        x[k] = (struct async_one){.w = w, .g = &g, .id = 1 + (uint64_t)k, .a = &a[k]};
        a[k].log = &log;
        ck_assert_int_eq(pthread_create(&x[k].th, NULL, async_one_main, &x[k]), 0);
        if (!wait_flag_ms(&x[k].done, 200)) {
            handed = k; /* it waits to take over */
            break;
        }
        ck_assert(!__atomic_load_n(&x[0].done, __ATOMIC_ACQUIRE)); /* still leading */
        gate_permit(1, 0);
    }
    ck_assert_msg(handed, "the leader led %d batches for others and never asked to be taken over", ROUNDS);
    ck_assert_msg(handed <= 8, "handed over only at batch %d", handed);
    gate_permit(1, 0); /* the leader's last batch: it hands over and returns */
    ck_assert(wait_flag(&x[0].done));
    gate_wait_entered(handed + 1); /* the new leader syncs */
    ck_assert(!__atomic_load_n(&x[handed].done, __ATOMIC_ACQUIRE));
    gate_permit(0, 1);
    for (int i = 0; i <= handed; i++) {
        pthread_join(x[i].th, NULL);
        ck_assert_int_eq(a[i].calls, 1);
    }
    ck_assert_int_eq(log.n, handed + 1);
    for (int i = 0; i <= handed; i++) {
        ck_assert_int_eq(log.rc[i], 0);
        ck_assert_uint_eq(log.lsn[i], a[i].lsn);
    }
    ck_assert_int_eq(log.early, 0);
    ck_assert_uint_eq(stats(w).leader_handoffs, 1);
    wal_close(w);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wal_async");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_flusher_wakes_only_covered);
    tcase_add_test(tc, test_flusher_many_sleepers);
    tcase_add_test(tc, test_lone_async_group);
    tcase_add_test(tc, test_lone_async_uring);
    tcase_add_test(tc, test_callbacks_in_order);
    tcase_add_test(tc, test_failed_sync_fails_its_batch);
    tcase_add_test(tc, test_group_async_stream);
    tcase_add_test(tc, test_group_leader_hands_over);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
