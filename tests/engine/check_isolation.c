/*
 * check_isolation.c -- write transactions are serialisable:
 *   - 8 threads each add 1 to one counter 1000 times, each time in a write
 *     transaction that reads it with cl_get and writes it back: the counter
 *     ends at exactly 8000, under every sync policy, early lock release on
 *     and off (run it under ThreadSanitizer too);
 *   - write skew: two kinds of transaction each read both of two accounts
 *     and withdraw from one only if the sum stays positive; the sum never
 *     goes below zero;
 *   - a second write transaction of a thread that holds the writer lock
 *     gets CL_EBUSY instead of waiting for itself; cl_checkpoint too;
 *   - read-only transactions do not wait for a writer that holds the lock.
 */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commitlab.h"
#include "testutil.h"

#define THREADS 8
#define INCREMENTS 1000

struct ctx {
    struct cl_db *db;
    int errors;
};

static int64_t get_i64(struct cl_txn *t, const char *k)
{
    int64_t v = 0;
    size_t vl = 0;
    int rc = cl_get(t, k, strlen(k), &v, sizeof v, &vl);
    ck_assert_msg(rc == 0 || rc == CL_ENOTFOUND, "get %s: %s", k, cl_strerror(rc));
    return rc ? 0 : v;
}

static void *incrementer(void *arg)
{
    struct ctx *c = arg;
    for (int i = 0; i < INCREMENTS; i++) {
        struct cl_txn *t;
        if (cl_txn_begin(c->db, 0, &t)) {
            __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
            break;
        }
        int64_t v = get_i64(t, "counter") + 1;
        if (cl_put(t, "counter", 7, &v, sizeof v) || cl_commit(t)) {
            __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    return NULL;
}

START_TEST(test_counter_no_lost_update)
{
    static const enum cl_sync_policy pols[] = {CL_SYNC_NONE, CL_SYNC_PERIODIC, CL_SYNC_COMMIT, CL_SYNC_GROUP,
                                               CL_SYNC_URING};
    for (unsigned p = 0; p < sizeof pols / sizeof *pols; p++) {
        for (int elr = 1; elr >= 0; elr--) {
            char *dir = tu_mkdtemp("iso");
            struct cl_options o;
            struct ctx c = {0};
            pthread_t th[THREADS];
            cl_options_init(&o);
            o.sync = pols[p];
            o.elr = elr;
            o.interval_ms = 5;
            int rc = cl_open(dir, &o, &c.db, NULL);
            if (rc == CL_ENOTSUP && pols[p] == CL_SYNC_URING) {
                fprintf(stderr, "isolation: io_uring refused here: the uring policy skipped\n");
                tu_rmdir(dir);
                free(dir);
                continue;
            }
            ck_assert_int_eq(rc, 0);
            for (int i = 0; i < THREADS; i++)
                ck_assert_int_eq(pthread_create(&th[i], NULL, incrementer, &c), 0);
            for (int i = 0; i < THREADS; i++)
                pthread_join(th[i], NULL);
            ck_assert_int_eq(c.errors, 0);
            struct cl_txn *r;
            ck_assert_int_eq(cl_txn_begin(c.db, CL_TXN_RDONLY, &r), 0);
            int64_t v = get_i64(r, "counter");
            cl_abort(r);
            ck_assert_msg(v == THREADS * INCREMENTS, "%s elr=%d: counter %" PRId64 ", not %d",
                          cl_sync_policy_name(pols[p]), elr, v, THREADS * INCREMENTS);
            ck_assert_int_eq(cl_close(c.db), 0);
            tu_rmdir(dir);
            free(dir);
        }
    }
}
END_TEST

/* Two accounts x and y start at 100 each; the invariant is x + y >= 0.
 * Half the threads withdraw 150 from x, half from y, each only after
 * reading both and finding x + y >= 150.  Under snapshot isolation two
 * such withdrawals can both commit (write skew); serialised, at most one
 * of them can. */
struct wctx {
    struct ctx *c;
    int idx;
};

static void *withdrawer(void *arg)
{
    struct wctx *w = arg;
    struct ctx *c = w->c;
    const char *from = w->idx % 2 ? "x" : "y";
    for (int i = 0; i < 200; i++) {
        struct cl_txn *t;
        ck_assert_int_eq(cl_txn_begin(c->db, 0, &t), 0);
        int64_t x = get_i64(t, "x"), y = get_i64(t, "y");
        if (x + y >= 150) {
            int64_t nv = (from[0] == 'x' ? x : y) - 150;
            ck_assert_int_eq(cl_put(t, from, 1, &nv, sizeof nv), 0);
        }
        ck_assert_int_eq(cl_commit(t), 0);
        /* someone deposits again now and then, so withdrawals go on */
        if (i % 3 == 0) {
            ck_assert_int_eq(cl_txn_begin(c->db, 0, &t), 0);
            int64_t v = get_i64(t, from) + 150;
            ck_assert_int_eq(cl_put(t, from, 1, &v, sizeof v), 0);
            ck_assert_int_eq(cl_commit(t), 0);
        }
        /* two reads of a read-only transaction are not a snapshot: the
         * invariant is checked under the writer lock */
        ck_assert_int_eq(cl_txn_begin(c->db, 0, &t), 0);
        x = get_i64(t, "x");
        y = get_i64(t, "y");
        cl_abort(t);
        if (x + y < 0)
            __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

START_TEST(test_no_write_skew)
{
    char *dir = tu_mkdtemp("iso");
    struct cl_options o;
    struct ctx c = {0};
    pthread_t th[THREADS];
    cl_options_init(&o);
    o.sync = CL_SYNC_GROUP;
    ck_assert_int_eq(cl_open(dir, &o, &c.db, NULL), 0);
    struct cl_txn *t;
    int64_t hundred = 100;
    ck_assert_int_eq(cl_txn_begin(c.db, 0, &t), 0);
    ck_assert_int_eq(cl_put(t, "x", 1, &hundred, sizeof hundred), 0);
    ck_assert_int_eq(cl_put(t, "y", 1, &hundred, sizeof hundred), 0);
    ck_assert_int_eq(cl_commit(t), 0);
    struct wctx w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct wctx){&c, i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, withdrawer, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    ck_assert_msg(c.errors == 0, "x + y went below zero %d times", c.errors);
    ck_assert_int_eq(cl_close(c.db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

struct reader_arg {
    struct cl_db *db;
    int done;
};

static void *reader(void *arg)
{
    struct reader_arg *ra = arg;
    struct cl_txn *r;
    ck_assert_int_eq(cl_txn_begin(ra->db, CL_TXN_RDONLY, &r), 0);
    int64_t v = get_i64(r, "k");
    cl_abort(r);
    ck_assert_int_eq(v, 1); /* the committed value, not the open transaction's */
    __atomic_store_n(&ra->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

START_TEST(test_lock_rules)
{
    char *dir = tu_mkdtemp("iso");
    struct cl_db *db;
    struct cl_txn *a, *b;
    int64_t one = 1, two = 2, v;
    size_t vl;
    ck_assert_int_eq(cl_open(dir, NULL, &db, NULL), 0);
    ck_assert_int_eq(cl_txn_begin(db, 0, &a), 0);
    ck_assert_int_eq(cl_put(a, "k", 1, &one, sizeof one), 0);
    ck_assert_int_eq(cl_commit(a), 0);

    /* a holds the writer lock from its first read */
    ck_assert_int_eq(cl_txn_begin(db, 0, &a), 0);
    ck_assert_int_eq(cl_get(a, "k", 1, &v, sizeof v, &vl), 0);
    ck_assert_int_eq(cl_put(a, "k", 1, &two, sizeof two), 0);
    /* the same thread's second write transaction must not wait for itself */
    ck_assert_int_eq(cl_txn_begin(db, 0, &b), 0);
    ck_assert_int_eq(cl_get(b, "k", 1, &v, sizeof v, &vl), CL_EBUSY);
    ck_assert_int_eq(cl_put(b, "z", 1, &one, sizeof one), 0);
    ck_assert_int_eq(cl_commit(b), CL_EBUSY);
    ck_assert_int_eq(cl_checkpoint(db), CL_EBUSY);
    /* readers in other threads go on */
    struct reader_arg ra = {db, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, reader, &ra), 0);
    for (int i = 0; i < 2000 && !__atomic_load_n(&ra.done, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    ck_assert_msg(__atomic_load_n(&ra.done, __ATOMIC_ACQUIRE), "a reader waited for the writer lock");
    pthread_join(th, NULL);
    ck_assert_int_eq(cl_commit(a), 0);
    /* released: the thread may write again, and checkpoint */
    ck_assert_int_eq(cl_txn_begin(db, 0, &b), 0);
    ck_assert_int_eq(cl_get(b, "k", 1, &v, sizeof v, &vl), 0);
    ck_assert_int_eq(v, 2);
    cl_abort(b); /* an abort releases it too */
    ck_assert_int_eq(cl_checkpoint(db), 0);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("isolation");
    TCase *tc = tcase_create("serialisable");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_counter_no_lost_update);
    tcase_add_test(tc, test_no_write_skew);
    tcase_add_test(tc, test_lock_rules);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
