/*
 * check_async.c -- cl_commit_async and cl_sync_wait under every policy:
 *   - pipelined clients (several commits in flight each): every callback
 *     called exactly once, with 0, in commit order (each transaction
 *     increments a counter it read, so its value is its place in the
 *     commit order), all of them by cl_sync_wait; the counts include them;
 *     everything there after reopening;
 *   - under none the callback comes within cl_commit_async; under commit
 *     and with elr off too; under periodic only after a sync;
 *   - cl_close with callbacks outstanding calls them all, with 0, and
 *     they survive;
 *   - a lone asynchronous commit under group (and uring) completes with
 *     nobody else committing, also when it arrived during a leader's sync;
 *   - EIO or ENOSPC in the middle of a batch: every callback of the
 *     failed batch gets the error, none 0 after it; later commits are
 *     refused; a power failure then keeps every commit acknowledged with 0
 *     -- with fsync-style syncs and with the write itself the sync
 *     (rwf-dsync, uring_sync = rwf-dsync);
 *   - cl_commit_async_timed: every callback with its phases, within the
 *     time from the call to the callback, the covering sync in them;
 *   - inside a callback, committing, sync-waiting, checkpointing and
 *     closing the same database return CL_EBUSY;
 *   - under every policy, elr on and off, small and large values, with
 *     clients committing beside it: a callback that tries every call
 *     reads and commits read-only transactions, and its write
 *     transaction gets CL_EBUSY at once at its first read or commit --
 *     never a hang (an alarm fails the test, naming the configuration).
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
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

#define MAXC 8
#define MAXN 400

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- pipelined clients ------------------------------------------------------ */

struct run;

struct rec {                   /* one transaction */
    struct run *run;
    int client;
    uint64_t n, ord;           /* its number in the client's order; its place in the commit order */
    int calls, rc;             /* written by its callback */
};

struct client {
    struct run *run;
    int id;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int outstanding;           /* mu */
    int submitted;             /* commits cl_commit_async took */
    int refused;               /* the first refusal, or 0 */
    uint64_t acked;            /* the highest n whose callback got 0 (atomic) */
};

struct run {
    struct cl_db *db;
    int nclients, per, depth;  /* depth: commits in flight per client */
    int rmw;                   /* each transaction reads and increments "ctr" */
    struct client c[MAXC];
    struct rec recs[MAXC][MAXN];
    /* what the callbacks saw, in the order they were called (they run one at a time) */
    uint64_t last_ord;
    int ncalls, out_of_order, zero_after_error, errors;
    int first_error;
};

static void on_durable(void *arg, int rc)
{
    struct rec *r = arg;
    struct run *run = r->run;
    struct client *c = &run->c[r->client];
    r->calls++;
    r->rc = rc;
    __atomic_add_fetch(&run->ncalls, 1, __ATOMIC_RELEASE); /* read while callbacks may run */
    if (rc == 0) {
        if (run->errors)
            run->zero_after_error++;
        if (run->rmw && r->ord != run->last_ord + 1)
            run->out_of_order++;
        run->last_ord = r->ord;
        if (r->n < __atomic_load_n(&c->acked, __ATOMIC_RELAXED))
            run->out_of_order++; /* a client's commits are in log order */
        __atomic_store_n(&c->acked, r->n, __ATOMIC_RELEASE);
    } else {
        if (!run->errors)
            run->first_error = rc;
        run->errors++;
    }
    pthread_mutex_lock(&c->mu);
    c->outstanding--;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* One transaction of client c: a-<c> = b-<c> = n, and with rmw ctr = ctr + 1. */
static int submit(struct client *c, uint64_t n)
{
    struct run *run = c->run;
    struct rec *r = &run->recs[c->id][n - 1];
    struct cl_txn *t;
    char ka[16], kb[16];
    int rc;
    *r = (struct rec){.run = run, .client = c->id, .n = n};
    snprintf(ka, sizeof ka, "a-%02d", c->id);
    snprintf(kb, sizeof kb, "b-%02d", c->id);
    if ((rc = cl_txn_begin(run->db, 0, &t)) != 0)
        return rc;
    if (run->rmw) {
        uint64_t ctr = 0;
        size_t vl = 0;
        rc = cl_get(t, "ctr", 3, &ctr, sizeof ctr, &vl); /* takes the writer lock: commit order */
        if (rc && rc != CL_ENOTFOUND) {
            cl_abort(t);
            return rc;
        }
        r->ord = ctr + 1;
        if ((rc = cl_put(t, "ctr", 3, &r->ord, sizeof r->ord)) != 0) {
            cl_abort(t);
            return rc;
        }
    }
    if ((rc = cl_put(t, ka, strlen(ka), &n, sizeof n)) != 0 || (rc = cl_put(t, kb, strlen(kb), &n, sizeof n)) != 0) {
        cl_abort(t);
        return rc;
    }
    pthread_mutex_lock(&c->mu);
    c->outstanding++;
    pthread_mutex_unlock(&c->mu);
    rc = cl_commit_async(t, on_durable, r);
    if (rc) {
        pthread_mutex_lock(&c->mu);
        c->outstanding--;
        pthread_mutex_unlock(&c->mu);
    }
    return rc;
}

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct run *run = c->run;
    for (uint64_t n = 1; n <= (uint64_t)run->per; n++) {
        pthread_mutex_lock(&c->mu);
        while (c->outstanding >= run->depth)
            pthread_cond_wait(&c->cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
        int rc = submit(c, n);
        if (rc) {
            c->refused = rc;
            break;
        }
        c->submitted = (int)n;
    }
    return NULL;
}

static void run_clients(struct run *run)
{
    for (int i = 0; i < run->nclients; i++) {
        struct client *c = &run->c[i];
        c->run = run;
        c->id = i;
        pthread_mutex_init(&c->mu, NULL);
        pthread_cond_init(&c->cv, NULL);
        ck_assert_int_eq(pthread_create(&c->th, NULL, client_main, c), 0);
    }
    for (int i = 0; i < run->nclients; i++)
        pthread_join(run->c[i].th, NULL);
}

static void free_clients(struct run *run)
{
    for (int i = 0; i < run->nclients; i++) {
        pthread_cond_destroy(&run->c[i].cv);
        pthread_mutex_destroy(&run->c[i].mu);
    }
}

/* Each database the suite opens takes the next of mutex and slots
 * (log_insert), or $CL_LOG_INSERT's. */
static uint64_t opened;

static void opts(struct cl_options *o, enum cl_sync_policy p)
{
    cl_options_init(o);
    o->sync = p;
    o->log_insert = (enum cl_log_insert)tu_log_insert(opened++);
    o->segment_size = 256 * 1024;
    o->cache_size = 64 * 4096;
    o->checkpoint_bytes = 128 * 1024; /* the checkpoint thread runs (and calls callbacks) too */
    o->interval_ms = 5;
}

/* The recovered a-<c>/b-<c> of every client: equal, at least what its
 * callbacks acknowledged, at most what it submitted; ctr as expected. */
static void check_reopen(const char *dir, const struct cl_options *base, struct run *run, uint64_t want_ctr,
                         const char *what)
{
    struct cl_options o = *base;
    struct cl_db *db;
    struct cl_txn *r;
    o.create = 0;
    o.sync_latency_us = 0;
    int rc = cl_open(dir, &o, &db, NULL);
    ck_assert_msg(rc == 0, "%s: reopen: %s", what, cl_strerror(rc));
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &r), 0);
    for (int i = 0; i < run->nclients; i++) {
        char ka[16], kb[16];
        uint64_t a = 0, b = 0;
        size_t vl;
        snprintf(ka, sizeof ka, "a-%02d", i);
        snprintf(kb, sizeof kb, "b-%02d", i);
        int ra = cl_get(r, ka, strlen(ka), &a, sizeof a, &vl), rb = cl_get(r, kb, strlen(kb), &b, sizeof b, &vl);
        ck_assert_msg(ra == rb && a == b, "%s: client %d: half a transaction (%" PRIu64 " vs %" PRIu64 ")", what, i,
                      a, b);
        ck_assert_msg(a >= run->c[i].acked, "%s: client %d: acknowledged %" PRIu64 " lost (recovered %" PRIu64 ")",
                      what, i, run->c[i].acked, a);
        ck_assert_msg(a <= (uint64_t)run->c[i].submitted, "%s: client %d: %" PRIu64 " never committed", what, i, a);
    }
    if (want_ctr) {
        uint64_t ctr = 0;
        size_t vl;
        ck_assert_int_eq(cl_get(r, "ctr", 3, &ctr, sizeof ctr, &vl), 0);
        ck_assert_uint_eq(ctr, want_ctr);
    }
    cl_abort(r);
    ck_assert_int_eq(cl_close(db), 0);
}

static int uring_refused(int rc, enum cl_sync_policy p)
{
    if (rc == CL_ENOTSUP && p == CL_SYNC_URING) {
        fprintf(stderr, "io_uring is not available here: uring skipped\n");
        return 1;
    }
    return 0;
}

/* Every policy, 4 clients with 8 commits in flight each. */
START_TEST(test_every_policy)
{
    for (int p = 0; p < CL_SYNC_NPOLICIES; p++) {
        char *dir = tu_mkdtemp("async");
        struct run *run = calloc(1, sizeof *run);
        struct cl_options o;
        struct cl_stats st;
        const char *name = cl_sync_policy_name((enum cl_sync_policy)p);
        opts(&o, (enum cl_sync_policy)p);
        *run = (struct run){.nclients = 4, .per = 150, .depth = 8, .rmw = 1};
        int rc = cl_open(dir, &o, &run->db, NULL);
        if (uring_refused(rc, (enum cl_sync_policy)p)) {
            free(run);
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        run_clients(run);
        ck_assert_int_eq(cl_sync_wait(run->db), 0);
        int total = run->nclients * run->per;
        ck_assert_msg(run->ncalls == total, "%s: %d callbacks for %d commits by cl_sync_wait", name, run->ncalls,
                      total);
        for (int i = 0; i < run->nclients; i++) {
            ck_assert_int_eq(run->c[i].refused, 0);
            ck_assert_uint_eq(run->c[i].acked, (uint64_t)run->per);
            for (int n = 0; n < run->per; n++)
                ck_assert_msg(run->recs[i][n].calls == 1 && run->recs[i][n].rc == 0,
                              "%s: client %d commit %d: %d calls, rc %d", name, i, n + 1, run->recs[i][n].calls,
                              run->recs[i][n].rc);
        }
        ck_assert_msg(run->out_of_order == 0, "%s: %d callbacks out of commit order", name, run->out_of_order);
        ck_assert_uint_eq(run->last_ord, (uint64_t)total);
        ck_assert_int_eq(cl_stats(run->db, &st), 0);
        ck_assert_uint_eq(st.commits, (uint64_t)total);
        ck_assert_int_eq(st.broken, 0);
        if (cl_sync_policy_is_durable((enum cl_sync_policy)p) == 1 || p == CL_SYNC_PERIODIC) {
            /* every commit was made durable in exactly one batch */
            uint64_t covered = 0;
            for (uint64_t k = 1; k < CL_BATCH_HIST - 1; k++)
                covered += k * st.batch_hist[k];
            ck_assert_msg(covered == st.commits, "%s: batches cover %" PRIu64 " of %" PRIu64 " commits", name,
                          covered, st.commits);
            ck_assert(st.commits_per_sync > 0);
            ck_assert_uint_ge(st.durable_lsn, st.end_lsn);
        }
        fprintf(stderr, "async %s: %d commits, %" PRIu64 " syncs, max %" PRIu64 " commits per sync\n", name, total,
                st.syncs, st.max_commits_per_sync);
        ck_assert_int_eq(cl_close(run->db), 0);
        check_reopen(dir, &o, run, (uint64_t)total, name);
        free_clients(run);
        free(run);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* ---- where and when the callback comes ------------------------------------- */

struct one {
    int calls, rc;           /* atomic */
    struct cl_db *db;
    uint64_t durable_then;   /* cl_stats' durable LSN when it was called */
};

static void on_one(void *arg, int rc)
{
    struct one *x = arg;
    struct cl_stats st;
    cl_stats(x->db, &st);
    x->durable_then = st.durable_lsn;
    __atomic_store_n(&x->rc, rc, __ATOMIC_RELAXED);
    __atomic_add_fetch(&x->calls, 1, __ATOMIC_RELEASE);
}

static int commit_one(struct cl_db *db, const char *k, uint64_t v, struct one *x)
{
    struct cl_txn *t;
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    ck_assert_int_eq(cl_put(t, k, strlen(k), &v, sizeof v), 0);
    x->db = db;
    return cl_commit_async(t, on_one, x);
}

static int wait_called(struct one *x)
{
    for (int i = 0; i < 10000 && !__atomic_load_n(&x->calls, __ATOMIC_ACQUIRE); i++)
        sleep_ms(1);
    return __atomic_load_n(&x->calls, __ATOMIC_ACQUIRE);
}

/* With early lock release off, the callback has come when cl_commit_async
 * returns, also when another thread is calling callbacks at that moment
 * (the flusher, a leader, a committer whose own callback is slow) and
 * takes this one: the committer waits for it rather than returning at
 * once.  Here the other thread is inside a callback that sleeps. */
struct slow_cb {
    struct cl_db *db;
    int inside, release; /* atomic */
};

static void on_slow(void *arg, int rc)
{
    struct slow_cb *s = arg;
    (void)rc;
    __atomic_store_n(&s->inside, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&s->release, __ATOMIC_ACQUIRE))
        sleep_ms(1);
    sleep_ms(50); /* still calling callbacks when the release comes */
}

static void *slow_committer(void *arg)
{
    struct slow_cb *s = arg;
    struct cl_txn *t;
    uint64_t v = 1;
    if (cl_txn_begin(s->db, 0, &t) == 0 && cl_put(t, "slow", 4, &v, sizeof v) == 0)
        (void)cl_commit_async(t, on_slow, s);
    return NULL;
}

START_TEST(test_elr_off_callback_before_return)
{
    static const enum cl_sync_policy ps[] = {CL_SYNC_COMMIT, CL_SYNC_GROUP, CL_SYNC_FLUSHER, CL_SYNC_URING};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        char *dir = tu_mkdtemp("async-elr-off");
        struct cl_options o;
        struct cl_db *db;
        opts(&o, ps[i]);
        o.elr = 0;
        o.checkpoint_bytes = 0; /* no checkpoint thread calling callbacks */
        int rc = cl_open(dir, &o, &db, NULL);
        if (uring_refused(rc, ps[i])) {
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        struct slow_cb s = {.db = db};
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, slow_committer, &s), 0);
        for (int w = 0; w < 10000 && !__atomic_load_n(&s.inside, __ATOMIC_ACQUIRE); w++)
            sleep_ms(1);
        ck_assert_msg(__atomic_load_n(&s.inside, __ATOMIC_ACQUIRE), "the slow callback never came");
        struct one x = {0};
        __atomic_store_n(&s.release, 1, __ATOMIC_RELEASE);
        ck_assert_int_eq(commit_one(db, "k", 1, &x), 0);
        int calls = __atomic_load_n(&x.calls, __ATOMIC_ACQUIRE);
        ck_assert_int_eq(pthread_join(th, NULL), 0);
        ck_assert_msg(calls == 1,
                      "%s elr=off: %d calls when cl_commit_async returned, with another thread "
                      "calling callbacks",
                      cl_sync_policy_name(ps[i]), calls);
        ck_assert_int_eq(cl_close(db), 0);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* none: at the write, within cl_commit_async; commit, and elr off: after
 * the commit's own sync, also within it; periodic: only after a periodic
 * sync, never before its LSN is durable; a read-only transaction's
 * callback comes too. */
START_TEST(test_when_the_callback_comes)
{
    static const struct {
        enum cl_sync_policy p;
        int elr;
    } within[] = {{CL_SYNC_NONE, 1}, {CL_SYNC_COMMIT, 1}, {CL_SYNC_GROUP, 0}, {CL_SYNC_FLUSHER, 0},
                  {CL_SYNC_URING, 0}, {CL_SYNC_GROUP, 1}};
    for (size_t i = 0; i < sizeof within / sizeof *within; i++) {
        char *dir = tu_mkdtemp("async-when");
        struct cl_options o;
        struct cl_db *db;
        struct cl_stats st;
        opts(&o, within[i].p);
        o.elr = within[i].elr;
        int rc = cl_open(dir, &o, &db, NULL);
        if (uring_refused(rc, within[i].p)) {
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        for (uint64_t n = 1; n <= 20; n++) {
            struct one x = {0};
            ck_assert_int_eq(commit_one(db, "k", n, &x), 0);
            /* one thread alone: it wrote (none), synced (commit, elr off)
             * or led (group) -- and called its callback */
            int calls = __atomic_load_n(&x.calls, __ATOMIC_ACQUIRE);
            ck_assert_msg(calls == 1 && x.rc == 0, "%s elr=%d: %d calls, rc %d on return",
                          cl_sync_policy_name(within[i].p), within[i].elr, calls, x.rc);
            cl_stats(db, &st);
            if (within[i].p != CL_SYNC_NONE)
                ck_assert_uint_ge(x.durable_then, st.end_lsn);
        }
        struct cl_txn *t;
        struct one ro = {0};
        ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &t), 0);
        ro.db = db;
        ck_assert_int_eq(cl_commit_async(t, on_one, &ro), 0);
        ck_assert_int_eq(cl_sync_wait(db), 0);
        ck_assert_int_eq(ro.calls, 1);
        cl_stats(db, &st);
        ck_assert_uint_eq(st.commits, 20);
        ck_assert_int_eq(cl_close(db), 0);
        tu_rmdir(dir);
        free(dir);
    }

    /* periodic: after the write, at the next periodic sync */
    char *dir = tu_mkdtemp("async-when");
    struct cl_options o;
    struct cl_db *db;
    struct cl_stats st;
    opts(&o, CL_SYNC_PERIODIC);
    o.interval_ms = 100;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    int later = 0;
    for (uint64_t n = 1; n <= 10; n++) {
        struct one x = {0};
        ck_assert_int_eq(commit_one(db, "k", n, &x), 0);
        cl_stats(db, &st);
        later += __atomic_load_n(&x.calls, __ATOMIC_ACQUIRE) == 0;
        ck_assert(wait_called(&x));
        ck_assert_int_eq(x.rc, 0);
        ck_assert_uint_ge(x.durable_then, st.end_lsn); /* durable when called */
    }
    ck_assert_msg(later > 0, "periodic: every callback came within cl_commit_async");
    /* cl_sync_wait makes a synchronous commit durable too, without an
     * asynchronous one (it waits for the periodic sync) */
    struct cl_txn *t;
    uint64_t v = 99;
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    ck_assert_int_eq(cl_put(t, "s", 1, &v, sizeof v), 0);
    ck_assert_int_eq(cl_commit(t), 0);
    ck_assert_int_eq(cl_sync_wait(db), 0);
    cl_stats(db, &st);
    ck_assert_uint_ge(st.durable_lsn, st.end_lsn);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* cl_close with callbacks outstanding: a slow device (20 ms syncs,
 * emulated) under the flusher, and periodic syncing every 10 s: close
 * returns only after every callback, each with 0, and all is there. */
START_TEST(test_close_with_callbacks_outstanding)
{
    static const enum cl_sync_policy pols[] = {CL_SYNC_FLUSHER, CL_SYNC_PERIODIC, CL_SYNC_URING};
    for (size_t i = 0; i < sizeof pols / sizeof *pols; i++) {
        char *dir = tu_mkdtemp("async-close");
        struct run *run = calloc(1, sizeof *run);
        struct cl_options o;
        opts(&o, pols[i]);
        o.sync_latency_us = 20000;
        o.interval_ms = 10000;
        o.checkpoint_bytes = 0;
        *run = (struct run){.nclients = 2, .per = 60, .depth = 60};
        int rc = cl_open(dir, &o, &run->db, NULL);
        if (uring_refused(rc, pols[i])) {
            free(run);
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        run_clients(run);
        int outstanding = 120 - __atomic_load_n(&run->ncalls, __ATOMIC_ACQUIRE);
        ck_assert_int_eq(cl_close(run->db), 0);
        ck_assert_msg(run->ncalls == 120, "%s: %d of 120 callbacks when cl_close returned",
                      cl_sync_policy_name(pols[i]), run->ncalls);
        ck_assert_int_eq(run->errors, 0);
        fprintf(stderr, "async close %s: %d callbacks outstanding at cl_close\n", cl_sync_policy_name(pols[i]),
                outstanding);
        if (pols[i] != CL_SYNC_URING) /* uring's committer may lead its own tenure */
            ck_assert_msg(outstanding > 0, "%s: nothing was outstanding at close", cl_sync_policy_name(pols[i]));
        check_reopen(dir, &o, run, 0, "close with callbacks outstanding");
        free_clients(run);
        free(run);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* ---- a lone asynchronous commit ------------------------------------------- */

struct slow_commit {
    struct cl_db *db;
    int done; /* atomic */
};

static void *slow_sync_commit(void *arg)
{
    struct slow_commit *s = arg;
    struct cl_txn *t;
    uint64_t v = 1;
    ck_assert_int_eq(cl_txn_begin(s->db, 0, &t), 0);
    ck_assert_int_eq(cl_put(t, "leader", 6, &v, sizeof v), 0);
    ck_assert_int_eq(cl_commit(t), 0);
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* group and uring: one asynchronous commit and no other committer
 * completes (it leads); one that arrives during a leader's 200 ms sync
 * (emulated) of a batch it missed returns at once and completes with
 * nobody committing after it (the leader leads again for it). */
START_TEST(test_lone_async_commit)
{
    static const enum cl_sync_policy pols[] = {CL_SYNC_GROUP, CL_SYNC_URING};
    for (size_t i = 0; i < sizeof pols / sizeof *pols; i++) {
        const char *name = cl_sync_policy_name(pols[i]);
        char *dir = tu_mkdtemp("async-lone");
        struct cl_options o;
        struct cl_db *db;
        opts(&o, pols[i]);
        o.checkpoint_bytes = 0;
        o.sync_latency_us = 200000;
        int rc = cl_open(dir, &o, &db, NULL);
        if (uring_refused(rc, pols[i])) {
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        struct one alone = {0};
        ck_assert_int_eq(commit_one(db, "alone", 1, &alone), 0);
        ck_assert_msg(wait_called(&alone) && alone.rc == 0, "%s: a lone asynchronous commit never completed", name);

        int behind = 0;
        for (int attempt = 0; attempt < 5 && !behind; attempt++) {
            struct slow_commit s = {.db = db};
            struct one x = {0};
            pthread_t th;
            ck_assert_int_eq(pthread_create(&th, NULL, slow_sync_commit, &s), 0);
            sleep_ms(50); /* the leader is in its sync */
            double t0 = now_s();
            ck_assert_int_eq(commit_one(db, "behind", (uint64_t)attempt, &x), 0);
            double took = now_s() - t0;
            behind = !__atomic_load_n(&s.done, __ATOMIC_ACQUIRE) && took < 0.1; /* returned without leading */
            /* nobody commits from here on */
            ck_assert_msg(wait_called(&x) && x.rc == 0, "%s: the asynchronous commit behind a leader never completed",
                          name);
            pthread_join(th, NULL);
        }
        if (!behind)
            fprintf(stderr, "%s: the commit never arrived during the leader's sync (a loaded machine)\n", name);
        ck_assert_int_eq(cl_close(db), 0);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* ---- timed asynchronous commits ------------------------------------------------ */

struct timed_rec {
    uint64_t submitted_ns, called_ns;
    int calls, rc, had_times;
    struct cl_commit_times tm;
};

struct timed_run {
    struct cl_db *db;
    struct timed_rec rec[2][40];
    int outstanding[2]; /* atomic */
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_timed(void *arg, int rc, const struct cl_commit_times *tm)
{
    struct timed_rec *r = arg;
    r->called_ns = mono_ns();
    r->rc = rc;
    r->had_times = tm != NULL;
    if (tm)
        r->tm = *tm;
    __atomic_add_fetch(&r->calls, 1, __ATOMIC_RELEASE); /* its client waits for it */
}

static uint64_t phases_sum(const struct cl_commit_times *tm)
{
    return tm->lock_ns + tm->append_ns + tm->apply_ns + tm->queue_ns + tm->write_ns + tm->sync_ns + tm->wakeup_ns;
}

struct timed_client {
    struct timed_run *run;
    int id;
};

static void *timed_client_main(void *arg)
{
    struct timed_client *tc = arg;
    struct timed_run *run = tc->run;
    for (int n = 0; n < 40; n++) {
        struct timed_rec *r = &run->rec[tc->id][n];
        struct cl_txn *t;
        uint64_t v = (uint64_t)n;
        char k[16];
        while (n >= 8 && !__atomic_load_n(&run->rec[tc->id][n - 8].calls, __ATOMIC_ACQUIRE))
            sleep_ms(1); /* 8 in flight */
        snprintf(k, sizeof k, "t-%d", tc->id);
        ck_assert_int_eq(cl_txn_begin(run->db, 0, &t), 0);
        ck_assert_int_eq(cl_put(t, k, strlen(k), &v, sizeof v), 0);
        r->submitted_ns = mono_ns();
        ck_assert_int_eq(cl_commit_async_timed(t, on_timed, r), 0);
    }
    return NULL;
}

/* cl_commit_async_timed under every policy, 2 clients with 8 commits in
 * flight each on a 2 ms sync (emulated): every callback gets its phases
 * with its 0, and they add up to no more than the time from the call to
 * the callback; a durable policy's and periodic's phases hold the sync
 * that covered the commit (periodic's, unlike cl_commit_timed's, which
 * returns at the write), none's are all write.  With early lock release
 * off, the commit's own sync is in them too; a read-only transaction's
 * phases are zeros; a timed commit refused inside a callback is never
 * called back. */
START_TEST(test_timed_async)
{
    for (int p = 0; p < CL_SYNC_NPOLICIES; p++) {
        const char *name = cl_sync_policy_name((enum cl_sync_policy)p);
        char *dir = tu_mkdtemp("async-timed");
        struct timed_run *run = calloc(1, sizeof *run);
        struct cl_options o;
        opts(&o, (enum cl_sync_policy)p);
        o.sync_latency_us = 2000;
        o.checkpoint_bytes = 0;
        int rc = cl_open(dir, &o, &run->db, NULL);
        if (uring_refused(rc, (enum cl_sync_policy)p)) {
            free(run);
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        pthread_t th[2];
        struct timed_client tc[2];
        for (int i = 0; i < 2; i++) {
            tc[i] = (struct timed_client){run, i};
            ck_assert_int_eq(pthread_create(&th[i], NULL, timed_client_main, &tc[i]), 0);
        }
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        ck_assert_int_eq(cl_sync_wait(run->db), 0);
        uint64_t max_sync = 0;
        for (int i = 0; i < 2; i++)
            for (int n = 0; n < 40; n++) {
                const struct timed_rec *r = &run->rec[i][n];
                ck_assert_msg(r->calls == 1 && r->rc == 0 && r->had_times, "%s: commit %d.%d: %d calls, rc %d%s",
                              name, i, n, r->calls, r->rc, r->had_times ? "" : ", no times");
                uint64_t took = r->called_ns - r->submitted_ns, sum = phases_sum(&r->tm);
                ck_assert_msg(sum <= took, "%s: commit %d.%d: phases %" PRIu64 " ns in %" PRIu64 " ns", name, i, n,
                              sum, took);
                if (p == CL_SYNC_NONE)
                    ck_assert_msg(r->tm.queue_ns + r->tm.sync_ns + r->tm.wakeup_ns == 0,
                                  "none: answered at the write, yet queue %" PRIu64 " sync %" PRIu64
                                  " wakeup %" PRIu64 " ns",
                                  r->tm.queue_ns, r->tm.sync_ns, r->tm.wakeup_ns);
                if (r->tm.sync_ns > max_sync)
                    max_sync = r->tm.sync_ns;
            }
        if (p != CL_SYNC_NONE)
            ck_assert_msg(max_sync >= 2000000, "%s: the longest sync in a commit's phases is %" PRIu64
                          " ns on a 2 ms sync", name, max_sync);
        ck_assert_int_eq(cl_close(run->db), 0);
        free(run);
        tu_rmdir(dir);
        free(dir);
    }

    /* elr off: the commit waits for its own sync in the call; read only: zeros */
    char *dir = tu_mkdtemp("async-timed");
    struct cl_options o;
    struct cl_db *db;
    struct cl_txn *t;
    struct timed_rec r = {0}, ro = {0};
    uint64_t v = 1;
    opts(&o, CL_SYNC_GROUP);
    o.elr = 0;
    o.sync_latency_us = 2000;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    ck_assert_int_eq(cl_put(t, "k", 1, &v, sizeof v), 0);
    r.submitted_ns = mono_ns();
    ck_assert_int_eq(cl_commit_async_timed(t, on_timed, &r), 0);
    int calls = __atomic_load_n(&r.calls, __ATOMIC_ACQUIRE);
    ck_assert_msg(calls == 1 && r.rc == 0 && r.had_times, "elr off: %d calls, rc %d", calls, r.rc);
    ck_assert_msg(r.tm.sync_ns >= 2000000, "elr off: sync %" PRIu64 " ns on a 2 ms sync", r.tm.sync_ns);
    ck_assert_uint_le(phases_sum(&r.tm), r.called_ns - r.submitted_ns);
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &t), 0);
    ro.tm.sync_ns = 1;
    ck_assert_int_eq(cl_commit_async_timed(t, on_timed, &ro), 0);
    ck_assert_int_eq(cl_sync_wait(db), 0);
    ck_assert_msg(ro.calls == 1 && ro.rc == 0 && ro.had_times && phases_sum(&ro.tm) == 0,
                  "read only: %d calls, rc %d, phases %" PRIu64 " ns", ro.calls, ro.rc, phases_sum(&ro.tm));
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    ck_assert_int_eq(cl_commit_async_timed(t, NULL, NULL), CL_EINVAL); /* consumed all the same */
    ck_assert_int_eq(cl_commit_async_timed(NULL, on_timed, &r), CL_EINVAL);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ---- failures --------------------------------------------------------------- */

/* EIO on a sync or ENOSPC on a write in the middle of the run, with 4
 * pipelined clients: every callback is called exactly once; once one got
 * the error none gets 0; the first error is the injected one; later
 * commits are refused; a power failure right after keeps every commit
 * acknowledged with 0.  Under the rwf-dsync method and uring_sync =
 * rwf-dsync the write that carries RWF_DSYNC is the sync (the fault layer
 * counts it as one, and fails it having written its bytes, which the
 * crash then drops): its EIO fails its whole batch as a failed fsync
 * does. */
START_TEST(test_failure_mid_batch)
{
    static const struct {
        enum cl_sync_policy p;
        enum cl_sync_method m;
        enum cl_uring_sync us;
    } pols[] = {
        {CL_SYNC_GROUP, CL_METHOD_FDATASYNC, CL_URING_SYNC_FSYNC},
        {CL_SYNC_FLUSHER, CL_METHOD_FDATASYNC, CL_URING_SYNC_FSYNC},
        {CL_SYNC_URING, CL_METHOD_FDATASYNC, CL_URING_SYNC_FSYNC},
        {CL_SYNC_COMMIT, CL_METHOD_FDATASYNC, CL_URING_SYNC_FSYNC},
        {CL_SYNC_PERIODIC, CL_METHOD_FDATASYNC, CL_URING_SYNC_FSYNC},
        {CL_SYNC_GROUP, CL_METHOD_RWF_DSYNC, CL_URING_SYNC_FSYNC},
        {CL_SYNC_FLUSHER, CL_METHOD_RWF_DSYNC, CL_URING_SYNC_FSYNC},
        {CL_SYNC_URING, CL_METHOD_FDATASYNC, CL_URING_SYNC_RWF_DSYNC},
    };
    const uint64_t npols = sizeof pols / sizeof *pols;
    uint64_t base = tu_seed(3000);
    for (uint64_t it = 0; it < 2 * npols; it++) {
        enum cl_sync_policy p = pols[it % npols].p;
        int per_write = pols[it % npols].m == CL_METHOD_RWF_DSYNC || pols[it % npols].us == CL_URING_SYNC_RWF_DSYNC;
        int enospc = (int)(it / npols);
        int want = enospc ? -ENOSPC : -EIO;
        char what[96];
        char *dir = tu_mkdtemp("async-fail");
        struct vfs *fault = vfs_fault_new(vfs_posix());
        struct run *run = calloc(1, sizeof *run);
        struct cl_options o;
        snprintf(what, sizeof what, "%s%s%s, %s", cl_sync_policy_name(p),
                 pols[it % npols].m == CL_METHOD_RWF_DSYNC ? " method=rwf-dsync" : "",
                 pols[it % npols].us == CL_URING_SYNC_RWF_DSYNC ? " uring_sync=rwf-dsync" : "",
                 enospc ? "ENOSPC" : "EIO");
        opts(&o, p);
        o.method = pols[it % npols].m;
        o.uring_sync = pols[it % npols].us;
        o.checkpoint_bytes = 0;
        o.segment_init = CL_SEGINIT_SPARSE;
        vfs_fault_ring_seed(fault, base + it);
        *run = (struct run){.nclients = 4, .per = MAXN, .depth = 6};
        int rc = cl_open_vfs(dir, &o, fault, &run->db, NULL);
        if (uring_refused(rc, p)) {
            vfs_destroy(fault);
            free(run);
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        if (enospc)
            vfs_fault_fail_write(fault, 8 + it, -ENOSPC);
        else
            vfs_fault_fail_sync(fault, 8 + it, -EIO);
        run_clients(run); /* until refused */
        rc = cl_sync_wait(run->db);
        ck_assert_msg(rc == want, "%s: cl_sync_wait %s", what, cl_strerror(rc));
        int submitted = 0;
        for (int i = 0; i < run->nclients; i++) {
            ck_assert_msg(run->c[i].refused == CL_EBROKEN || run->c[i].refused == want, "%s: client %d refused with %s",
                          what, i, cl_strerror(run->c[i].refused));
            submitted += run->c[i].submitted;
            for (int n = 0; n < run->c[i].submitted; n++)
                ck_assert_msg(run->recs[i][n].calls == 1, "%s: client %d commit %d: %d calls", what, i, n + 1,
                              run->recs[i][n].calls);
        }
        ck_assert_int_eq(run->ncalls, submitted);
        ck_assert_msg(run->errors > 0 && run->first_error == want, "%s: %d errors, the first %s", what, run->errors,
                      cl_strerror(run->first_error));
        ck_assert_msg(run->zero_after_error == 0, "%s: %d callbacks got 0 after one got the error", what,
                      run->zero_after_error);
        /* sticky: later commits are refused */
        struct cl_txn *t;
        ck_assert_int_eq(cl_txn_begin(run->db, 0, &t), CL_EBROKEN);
        struct cl_stats st;
        cl_stats(run->db, &st);
        ck_assert_int_eq(st.broken, 1);
        if (per_write && !enospc) /* no segment was made after the open: every sync was a record's write */
            ck_assert_msg(st.segment_switches == 0 && st.syncs > 0, "%s: %" PRIu64 " switches, %" PRIu64 " syncs",
                          what, st.segment_switches, st.syncs);
        ck_assert_int_eq(cl_checkpoint(run->db), CL_EBROKEN);
        /* the failed batch's writes are lost for good (fsyncgate): crash now */
        ck_assert_int_eq(vfs_fault_crash(fault, VFS_CRASH_DROP, base + it), 0);
        ck_assert_int_eq(cl_close(run->db), CL_EBROKEN);
        vfs_destroy(fault);
        check_reopen(dir, &o, run, 0, what);
        free_clients(run);
        free(run);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* ---- what a callback may not do ---------------------------------------------- */

struct nested {
    struct cl_db *db;
    int commit_rc, async_rc, timed_rc, wait_rc, ckpt_rc, close_rc, read_rc, calls, inner_calls;
};

static void on_nested_inner(void *arg, int rc)
{
    struct nested *x = arg;
    (void)rc;
    x->inner_calls++; /* a refused commit's callback: must never come */
}

static void on_nested_inner_timed(void *arg, int rc, const struct cl_commit_times *tm)
{
    (void)tm;
    on_nested_inner(arg, rc);
}

/* Runs on whatever thread calls the callbacks: records, asserts nothing. */
static void on_nested(void *arg, int rc)
{
    struct nested *x = arg;
    struct cl_txn *t;
    uint64_t v = 7;
    size_t vl;
    (void)rc;
    x->calls++;
    x->commit_rc = x->async_rc = x->timed_rc = x->read_rc = -1;
    if (cl_txn_begin(x->db, 0, &t) == 0 && cl_put(t, "n", 1, &v, sizeof v) == 0)
        x->commit_rc = cl_commit(t);
    if (cl_txn_begin(x->db, 0, &t) == 0 && cl_put(t, "n", 1, &v, sizeof v) == 0)
        x->async_rc = cl_commit_async(t, on_nested_inner, x);
    if (cl_txn_begin(x->db, 0, &t) == 0 && cl_put(t, "n", 1, &v, sizeof v) == 0)
        x->timed_rc = cl_commit_async_timed(t, on_nested_inner_timed, x);
    x->wait_rc = cl_sync_wait(x->db);
    x->ckpt_rc = cl_checkpoint(x->db);
    x->close_rc = cl_close(x->db);
    if (cl_txn_begin(x->db, CL_TXN_RDONLY, &t) == 0) { /* reading is allowed */
        x->read_rc = cl_get(t, "k", 1, &v, sizeof v, &vl);
        cl_abort(t);
    }
}

START_TEST(test_callback_may_not_reenter)
{
    static const enum cl_sync_policy pols[] = {CL_SYNC_NONE, CL_SYNC_GROUP, CL_SYNC_FLUSHER};
    for (size_t i = 0; i < sizeof pols / sizeof *pols; i++) {
        char *dir = tu_mkdtemp("async-nest");
        struct cl_options o;
        struct nested x = {0};
        struct cl_txn *t;
        uint64_t v = 1;
        opts(&o, pols[i]);
        ck_assert_int_eq(cl_open(dir, &o, &x.db, NULL), 0);
        ck_assert_int_eq(cl_txn_begin(x.db, 0, &t), 0);
        ck_assert_int_eq(cl_put(t, "k", 1, &v, sizeof v), 0);
        ck_assert_int_eq(cl_commit_async(t, on_nested, &x), 0);
        ck_assert_int_eq(cl_sync_wait(x.db), 0);
        ck_assert_int_eq(x.calls, 1);
        ck_assert_int_eq(x.commit_rc, CL_EBUSY);
        ck_assert_int_eq(x.async_rc, CL_EBUSY);
        ck_assert_int_eq(x.timed_rc, CL_EBUSY);
        ck_assert_int_eq(x.wait_rc, CL_EBUSY);
        ck_assert_int_eq(x.ckpt_rc, CL_EBUSY);
        ck_assert_int_eq(x.close_rc, CL_EBUSY);
        ck_assert_int_eq(x.read_rc, 0);
        ck_assert_int_eq(cl_close(x.db), 0);
        ck_assert_int_eq(x.inner_calls, 0);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* ---- every call from inside a callback, under load ------------------------------- */

/* One configuration's probe.  Callbacks of a database run one at a time,
 * so the fields need no lock; the main thread reads them after
 * cl_sync_wait, which returns after every callback has. */
struct probe {
    struct cl_db *db;
    size_t vsize;
    int probes, inner_due, inner_calls, refused_calls;
    char bad[256]; /* the first unexpected result */
};

static void probe_expect(struct probe *p, const char *call, int got, int want)
{
    if (got != want && !p->bad[0])
        snprintf(p->bad, sizeof p->bad, "%s returned %d (%s), want %d (%s)", call, got, cl_strerror(got), want,
                 cl_strerror(want));
}

static void on_probe_inner(void *arg, int rc)
{
    struct probe *p = arg;
    probe_expect(p, "the read-only asynchronous commit's callback", rc, 0);
    p->inner_calls++;
}

static void on_probe_refused(void *arg, int rc)
{
    struct probe *p = arg;
    (void)rc;
    p->refused_calls++; /* a refused commit's callback: must never come */
}

static void on_probe_refused_timed(void *arg, int rc, const struct cl_commit_times *tm)
{
    (void)tm;
    on_probe_refused(arg, rc);
}

static int probe_count(void *arg, const void *k, size_t kl, const void *v, size_t vl)
{
    (void)k, (void)kl, (void)v, (void)vl;
    ++*(int *)arg;
    return 0;
}

/* Tries every call on the database from inside one of its callbacks. */
static void probe_calls(struct probe *p)
{
    uint8_t buf[CL_MAX_VALUE] = {0};
    struct cl_txn *t;
    struct cl_stats st;
    size_t vl;
    int n = 0;
    p->probes++;
    /* reading: allowed */
    probe_expect(p, "cl_txn_begin(CL_TXN_RDONLY)", cl_txn_begin(p->db, CL_TXN_RDONLY, &t), 0);
    if (!p->bad[0]) {
        probe_expect(p, "cl_get (read-only)", cl_get(t, "base", 4, buf, sizeof buf, &vl), 0);
        probe_expect(p, "cl_scan (read-only)", cl_scan(t, NULL, 0, NULL, 0, probe_count, &n), 0);
        probe_expect(p, "cl_commit (read-only)", cl_commit(t), 0);
    }
    if (cl_txn_begin(p->db, CL_TXN_RDONLY, &t) == 0) {
        int rc = cl_commit_async(t, on_probe_inner, p);
        probe_expect(p, "cl_commit_async (read-only)", rc, 0);
        if (rc == 0)
            p->inner_due++;
    }
    probe_expect(p, "cl_stats", cl_stats(p->db, &st), 0);
    /* a write transaction: begins, writes its own set, refused at once where
     * it would wait for the writer lock or the log */
    probe_expect(p, "cl_txn_begin(write)", cl_txn_begin(p->db, 0, &t), 0);
    if (!p->bad[0]) {
        probe_expect(p, "cl_put", cl_put(t, "cb", 2, buf, p->vsize), 0);
        probe_expect(p, "cl_get of its own write", cl_get(t, "cb", 2, buf, sizeof buf, &vl), 0);
        probe_expect(p, "cl_get (write)", cl_get(t, "base", 4, buf, sizeof buf, &vl), CL_EBUSY);
        probe_expect(p, "cl_del (write)", cl_del(t, "base", 4), CL_EBUSY);
        probe_expect(p, "cl_scan (write)", cl_scan(t, NULL, 0, NULL, 0, probe_count, &n), CL_EBUSY);
        probe_expect(p, "cl_commit (write)", cl_commit(t), CL_EBUSY);
    }
    if (cl_txn_begin(p->db, 0, &t) == 0 && cl_put(t, "cb", 2, buf, p->vsize) == 0)
        probe_expect(p, "cl_commit_async (write)", cl_commit_async(t, on_probe_refused, p), CL_EBUSY);
    if (cl_txn_begin(p->db, 0, &t) == 0 && cl_put(t, "cb", 2, buf, p->vsize) == 0)
        probe_expect(p, "cl_commit_async_timed (write)", cl_commit_async_timed(t, on_probe_refused_timed, p),
                     CL_EBUSY);
    if (cl_txn_begin(p->db, 0, &t) == 0) {
        probe_expect(p, "cl_put then cl_abort", cl_put(t, "cb", 2, buf, p->vsize), 0);
        cl_abort(t);
    }
    if (cl_txn_begin(p->db, 0, &t) == 0)
        probe_expect(p, "cl_commit of an empty write transaction", cl_commit(t), 0);
    probe_expect(p, "cl_sync_wait", cl_sync_wait(p->db), CL_EBUSY);
    probe_expect(p, "cl_checkpoint", cl_checkpoint(p->db), CL_EBUSY);
    probe_expect(p, "cl_close", cl_close(p->db), CL_EBUSY);
}

static void on_probe(void *arg, int rc)
{
    struct probe *p = arg;
    probe_expect(p, "the commit's callback", rc, 0);
    probe_calls(p);
}

struct probe_client {
    struct probe *p;
    int id, commits, refused;
    int failed; /* callbacks with an error (atomic) */
};

static void on_client_done(void *arg, int rc)
{
    struct probe_client *c = arg;
    if (rc)
        __atomic_add_fetch(&c->failed, 1, __ATOMIC_RELAXED);
}

/* Commits beside the probing callbacks: asynchronous and synchronous,
 * read-modify-write and blind, so that the writer lock, the log buffer and
 * the sync are all busy while callbacks run. */
static void *probe_client_main(void *arg)
{
    struct probe_client *c = arg;
    uint8_t val[CL_MAX_VALUE] = {0}; /* each client its own: cl_get writes it */
    for (int i = 0; i < c->commits; i++) {
        struct cl_txn *t;
        char key[32];
        size_t vl;
        int kl = snprintf(key, sizeof key, "c%d-%d", c->id, i % 16), rc;
        if (cl_txn_begin(c->p->db, 0, &t) != 0) {
            c->refused++;
            continue;
        }
        if (i % 3 == 1) /* a read first: the writer lock from here */
            (void)cl_get(t, "base", 4, val, sizeof val, &vl);
        rc = cl_put(t, key, (size_t)kl, val, c->p->vsize);
        if (rc == 0)
            rc = i % 4 == 0   ? cl_commit_async(t, on_probe, c->p)
                 : i % 4 == 2 ? cl_commit(t)
                              : cl_commit_async(t, on_client_done, c);
        else
            cl_abort(t);
        if (rc)
            c->refused++;
    }
    return NULL;
}

static char probe_config[128];

static void on_probe_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "hang: a callback that tries every call did not finish: ";
    ssize_t w = write(2, msg, sizeof msg - 1);
    w = write(2, probe_config, strlen(probe_config));
    w = write(2, "\n", 1);
    (void)w;
    _exit(3);
}

START_TEST(test_callback_tries_every_call)
{
    static const size_t vsizes[] = {16, 4000};
    signal(SIGALRM, on_probe_alarm);
    for (int pol = 0; pol < CL_SYNC_NPOLICIES; pol++)
        for (int elr = 1; elr >= 0; elr--)
            for (size_t vi = 0; vi < sizeof vsizes / sizeof *vsizes; vi++) {
                char *dir = tu_mkdtemp("async-probe");
                struct cl_options o;
                struct probe p = {.vsize = vsizes[vi]};
                struct probe_client cs[4];
                pthread_t th[4];
                struct cl_txn *t;
                uint8_t v[8] = {1};
                snprintf(probe_config, sizeof probe_config, "sync %s, elr %s, %zu-byte values",
                         cl_sync_policy_name((enum cl_sync_policy)pol), elr ? "on" : "off", p.vsize);
                opts(&o, (enum cl_sync_policy)pol);
                o.elr = elr;
                o.segment_size = 64 * 1024; /* the log buffer fills and segments switch under load */
                int rc = cl_open(dir, &o, &p.db, NULL);
                if (uring_refused(rc, (enum cl_sync_policy)pol)) {
                    tu_rmdir(dir);
                    free(dir);
                    continue;
                }
                ck_assert_msg(rc == 0, "%s: cl_open: %s", probe_config, cl_strerror(rc));
                ck_assert_int_eq(cl_txn_begin(p.db, 0, &t), 0);
                ck_assert_int_eq(cl_put(t, "base", 4, v, sizeof v), 0);
                ck_assert_int_eq(cl_commit(t), 0);
                alarm(60);
                for (int i = 0; i < 4; i++) {
                    cs[i] = (struct probe_client){.p = &p, .id = i, .commits = 48};
                    ck_assert_int_eq(pthread_create(&th[i], NULL, probe_client_main, &cs[i]), 0);
                }
                for (int i = 0; i < 4; i++)
                    pthread_join(th[i], NULL);
                ck_assert_msg(cl_sync_wait(p.db) == 0, "%s: cl_sync_wait", probe_config);
                /* the read-only commits the last callbacks made during that
                 * wait came after its call: one more wait covers them */
                ck_assert_msg(cl_sync_wait(p.db) == 0, "%s: cl_sync_wait", probe_config);
                alarm(0);
                ck_assert_msg(!p.bad[0], "%s: inside a callback: %s", probe_config, p.bad);
                ck_assert_msg(p.probes == 4 * 12, "%s: %d callbacks probed, want 48", probe_config, p.probes);
                ck_assert_msg(p.inner_calls == p.inner_due, "%s: %d of %d read-only asynchronous commits called back",
                              probe_config, p.inner_calls, p.inner_due);
                ck_assert_msg(p.refused_calls == 0, "%s: a refused commit was called back", probe_config);
                for (int i = 0; i < 4; i++)
                    ck_assert_msg(cs[i].refused == 0 && cs[i].failed == 0, "%s: client %d: %d commits refused, %d failed",
                                  probe_config, i, cs[i].refused, cs[i].failed);
                ck_assert_int_eq(cl_close(p.db), 0);
                tu_rmdir(dir);
                free(dir);
            }
    signal(SIGALRM, SIG_DFL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("async");
    TCase *tc = tcase_create("commit");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_every_policy);
    tcase_add_test(tc, test_when_the_callback_comes);
    tcase_add_test(tc, test_elr_off_callback_before_return);
    tcase_add_test(tc, test_close_with_callbacks_outstanding);
    tcase_add_test(tc, test_lone_async_commit);
    tcase_add_test(tc, test_timed_async);
    tcase_add_test(tc, test_failure_mid_batch);
    tcase_add_test(tc, test_callback_may_not_reenter);
    tcase_add_test(tc, test_callback_tries_every_call);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
