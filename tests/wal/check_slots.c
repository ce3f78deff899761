/* check_slots.c -- log_insert slots: many threads appending at once (mixed sizes, small segments, a small ring,
 * transactions too large for a slot) under each durable policy, every acknowledged transaction read back after close in
 * LSN order with its payload; slots filled past their member and byte bounds while their leader waits. */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "testutil.h"
#include "vfs.h"
#include "wal.h"
#include "wal_internal.h"
#include "wal_testlib.h"

#define SEG WAL_MIN_SEGMENT
#define RING (16u * 1024u) /* a slot holds 8 KiB: some transactions are appended alone, a few grow the ring */
#define THREADS 8
#define PER 150
#define ID(t, i) ((uint64_t)(t)*1000000u + (uint64_t)(i) + 1)

static const enum cl_sync_policy policies[] = {CL_SYNC_COMMIT, CL_SYNC_GROUP, CL_SYNC_FLUSHER, CL_SYNC_URING};

struct appender {
    struct wal *w;
    const struct genp *g;
    int t, per, commit;
    uint64_t lsn[PER]; /* commit LSN of each transaction, 0 when not appended */
    int acked[PER];
    int rc;
};

static void *append_loop(void *arg)
{
    struct appender *a = arg;
    for (int i = 0; i < a->per; i++) {
        int rc = tl_txn(a->w, a->g, ID(a->t, i), a->commit, &a->lsn[i]);
        if (rc) {
            a->rc = rc;
            break;
        }
        a->acked[i] = a->commit;
    }
    return NULL;
}

static int uring_here(void)
{
    struct vfs_ring *r;
    if (vfs_ring_open(vfs_posix(), 2, &r) != 0)
        return 0;
    vfs_ring_close(r);
    return 1;
}

static struct wal *open_slots(const char *dir, enum cl_sync_policy p, size_t ring)
{
    struct wal_config c = tl_config(dir, NULL, SEG, p, CL_METHOD_FDATASYNC, CL_SEGINIT_ZERO, ring);
    struct wal *w = NULL;
    c.opt.log_insert = CL_LOG_INSERT_SLOTS;
    int rc = wal_open(&c, 0, &w);
    ck_assert_msg(rc == 0, "wal_open: %s", cl_strerror(rc));
    return w;
}

/* Reads the log back: every transaction whole, in the order of the commit
 * LSNs the appenders got, each commit LSN where its COMMIT record ends;
 * every acknowledged one present.  Returns the transactions read. */
static size_t check_log(const char *dir, const struct genp *g, struct appender *ap, int nap, const char *what)
{
    struct rb rb;
    size_t seen = 0;
    uint64_t prev = 0;
    int *found[THREADS * 16] = {0};

    tl_read(dir, NULL, SEG, 0, g, &rb);
    ck_assert_msg(rb.err[0] == 0, "%s: %s", what, rb.err);
    ck_assert_msg(rb.rc == 0, "%s: reader %s", what, cl_strerror(rb.rc));
    for (int t = 0; t < nap; t++)
        found[t] = calloc((size_t)ap[t].per, sizeof(int));
    for (size_t r = 0, k = 0; r < rb.nrec; r++) {
        if (rb.recs[r].type != WAL_REC_COMMIT)
            continue;
        uint64_t id = rb.txn_ids[k++], end = rb.recs[r].lsn + wal_align_up(WAL_REC_HEADER + WAL_COMMIT_LEN);
        int t = (int)((id - 1) / 1000000u), i = (int)((id - 1) % 1000000u);
        ck_assert_msg(t < nap && i < ap[t].per, "%s: txn %" PRIu64 " never appended", what, id);
        ck_assert_msg(!found[t][i], "%s: txn %" PRIu64 " twice", what, id);
        found[t][i] = 1;
        ck_assert_msg(ap[t].lsn[i] == end, "%s: txn %" PRIu64 " ends at %" PRIu64 ", its append said %" PRIu64, what,
                      id, end, ap[t].lsn[i]);
        ck_assert_msg(end > prev, "%s: txn %" PRIu64 " out of LSN order", what, id);
        prev = end;
        seen++;
    }
    ck_assert_uint_eq(seen, rb.ntxn);
    for (int t = 0; t < nap; t++) {
        for (int i = 0; i < ap[t].per; i++)
            ck_assert_msg(!ap[t].acked[i] || found[t][i], "%s: acknowledged txn %" PRIu64 " lost", what, ID(t, i));
        free(found[t]);
    }
    rb_free(&rb);
    return seen;
}

/* THREADS appenders at once, each committing every transaction; the log is
 * closed with nothing flushed, so what is read back is what the policy
 * made durable. */
static void hammer(enum cl_sync_policy p, uint64_t seed)
{
    char *dir = tu_mkdtemp("slots-hammer");
    struct genp g = {.seed = seed, .maxops = 8, .maxk = 48, .maxv = 3000};
    struct appender *ap = calloc(THREADS, sizeof *ap);
    pthread_t th[THREADS];
    struct wal *w = open_slots(dir, p, RING);
    char what[96];

    for (int t = 0; t < THREADS; t++) {
        ap[t] = (struct appender){.w = w, .g = &g, .t = t, .per = PER, .commit = 1};
        ck_assert_int_eq(pthread_create(&th[t], NULL, append_loop, &ap[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        ck_assert_msg(ap[t].rc == 0, "%s: appender %d: %s", cl_sync_policy_name(p), t, cl_strerror(ap[t].rc));
    }
    struct wal_stats st;
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.appends, THREADS * PER);
    ck_assert_uint_eq(st.commits, THREADS * PER);
    ck_assert_msg(st.segment_switches >= 10, "only %" PRIu64 " segment switches", st.segment_switches);
    fprintf(stderr, "%s: %d appends, %" PRIu64 " slots, %" PRIu64 " joined another's, %" PRIu64 " switches\n",
            cl_sync_policy_name(p), THREADS * PER, st.slots, st.slot_joins, st.segment_switches);
    wal_close(w); /* nothing flushed: only what the policy acknowledged as durable */
    snprintf(what, sizeof what, "%s seed %" PRIu64, cl_sync_policy_name(p), seed);
    ck_assert_uint_eq(check_log(dir, &g, ap, THREADS, what), THREADS * PER);
    free(ap);
    tu_rmdir(dir);
    free(dir);
}

START_TEST(test_hammer_every_durable_policy)
{
    alarm(120);
    uint64_t seed = tu_seed((uint64_t)time(NULL));
    fprintf(stderr, "seed %" PRIu64 " (CL_SEED=%" PRIu64 " replays it)\n", seed, seed);
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        if (policies[i] == CL_SYNC_URING && !uring_here()) {
            fprintf(stderr, "io_uring is not available here: uring skipped\n");
            continue;
        }
        hammer(policies[i], seed + i);
    }
    alarm(0);
}
END_TEST

/* n appenders of one transaction each join while the test holds append_mu,
 * so the first slot's leader cannot close it: the slot fills to its bound
 * (WAL_SLOT_MEMBERS, or its bytes with big values) and the rest wait for
 * the next.  Then all are let go, committed and read back. */
static void fill_slot(int n, uint32_t maxv, uint64_t want_slots_min, uint64_t seed)
{
    char *dir = tu_mkdtemp("slots-fill");
    struct genp g = {.seed = seed, .maxops = 1, .maxk = 8, .maxv = maxv};
    struct appender *ap = calloc((size_t)n, sizeof *ap);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    struct wal *w = open_slots(dir, CL_SYNC_GROUP, 0);
    struct wal_stats st;
    char what[96];

    pthread_mutex_lock(&w->append_mu);
    for (int t = 0; t < n; t++) {
        ap[t] = (struct appender){.w = w, .g = &g, .t = t, .per = 1, .commit = 1};
        ck_assert_int_eq(pthread_create(&th[t], NULL, append_loop, &ap[t]), 0);
    }
    /* every member that fits has joined; those that do not are waiting */
    uint64_t t0 = cl_now_ns(), last = UINT64_MAX;
    int stable = 0;
    while (stable < 10 && cl_now_ns() - t0 < 5000000000ull) {
        usleep(10000);
        wal_get_stats(w, &st);
        stable = st.slot_joins == last ? stable + 1 : 0;
        last = st.slot_joins;
    }
    ck_assert_uint_eq(st.slots, 0); /* the leader waits for append_mu */
    uint64_t joined = st.slot_joins;
    pthread_mutex_unlock(&w->append_mu);
    for (int t = 0; t < n; t++) {
        pthread_join(th[t], NULL);
        ck_assert_msg(ap[t].rc == 0, "appender %d: %s", t, cl_strerror(ap[t].rc));
    }
    wal_get_stats(w, &st);
    fprintf(stderr,
            "%d appenders, values to %u bytes: %" PRIu64 " joined the first slot's leader, %" PRIu64 " slots in all\n",
            n, maxv, joined, st.slots);
    ck_assert_uint_eq(st.appends, (uint64_t)n);
    ck_assert_msg(joined >= 1 && joined + 1 <= WAL_SLOT_MEMBERS, "%" PRIu64 " joined one slot", joined);
    ck_assert_msg(st.slots >= want_slots_min, "%" PRIu64 " slots", st.slots);
    wal_close(w);
    snprintf(what, sizeof what, "fill %d seed %" PRIu64, n, seed);
    ck_assert_uint_eq(check_log(dir, &g, ap, n, what), (uint64_t)n);
    free(th);
    free(ap);
    tu_rmdir(dir);
    free(dir);
}

START_TEST(test_slot_bounds)
{
    alarm(60);
    uint64_t seed = tu_seed((uint64_t)time(NULL));
    fprintf(stderr, "seed %" PRIu64 "\n", seed);
    /* 16 small transactions: one slot holds them all, the leader and 15 */
    fill_slot(16, 16, 1, seed);
    /* more than a slot's members: the 65th and later wait for a second slot */
    fill_slot(WAL_SLOT_MEMBERS + 16, 16, 2, seed + 1);
    /* values of up to 8 KiB against a slot of 60 KiB (a 64 KiB segment's
     * room): the bytes bound */
    fill_slot(40, 8 * 1024, 3, seed + 2);
    alarm(0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("slots");
    TCase *tc = tcase_create("slots");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_hammer_every_durable_policy);
    tcase_add_test(tc, test_slot_bounds);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
