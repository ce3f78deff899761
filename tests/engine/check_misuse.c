/* check_misuse.c -- what a careless or adversarial caller of the public API must not be able to break: a scan whose callback writes, write transactions on many databases in one thread, and every option at both edges of its range. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commitlab.h"
#include "engine_internal.h"
#include "testutil.h"

static struct cl_db *open_small(const char *dir)
{
    struct cl_options o;
    struct cl_db *db;
    cl_options_init(&o);
    o.segment_size = 64 * 1024;
    o.cache_size = 64 * 4096;
    o.sync = CL_SYNC_NONE;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    return db;
}

static void put_str(struct cl_txn *t, const char *k, const char *v)
{
    ck_assert_int_eq(cl_put(t, k, strlen(k), v, strlen(v)), 0);
}

static int get_int(struct cl_db *db, const char *k)
{
    struct cl_txn *t;
    char buf[32] = {0};
    size_t vl;
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &t), 0);
    ck_assert_int_eq(cl_get(t, k, strlen(k), buf, sizeof buf - 1, &vl), 0);
    cl_abort(t);
    return atoi(buf);
}

struct bump {
    struct cl_txn *t;
    int calls;
    int inserted;
};

/* Increments the value of every key it visits. */
static int bump_cb(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct bump *b = arg;
    char v[32];
    snprintf(v, sizeof v, "%.*s", (int)vlen, (const char *)val);
    snprintf(v, sizeof v, "%d", atoi(v) + 1);
    b->calls++;
    return cl_put(b->t, key, klen, v, strlen(v));
}

/* A counter incremented by its own scan is incremented once: a=b=c=0
 * committed, then a scan that puts value+1 for each key visits each key
 * once and leaves 1 (it used to visit a=0, a=1, ... and leave 2). */
START_TEST(test_scan_write_applied_once)
{
    char *dir = tu_mkdtemp("misuse-scan");
    struct cl_db *db = open_small(dir);
    struct cl_txn *t;
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    put_str(t, "a", "0");
    put_str(t, "b", "0");
    put_str(t, "c", "0");
    ck_assert_int_eq(cl_commit(t), 0);

    struct bump b = {0};
    ck_assert_int_eq(cl_txn_begin(db, 0, &b.t), 0);
    ck_assert_int_eq(cl_scan(b.t, NULL, 0, NULL, 0, bump_cb, &b), 0);
    ck_assert_int_eq(b.calls, 3);
    ck_assert_int_eq(cl_commit(b.t), 0);
    ck_assert_int_eq(get_int(db, "a"), 1);
    ck_assert_int_eq(get_int(db, "b"), 1);
    ck_assert_int_eq(get_int(db, "c"), 1);

    /* 25 committed keys and 25 of the transaction's own: 50 callbacks,
     * every value one higher. */
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    for (int i = 0; i < 25; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%02d", 2 * i);
        put_str(t, k, "10");
    }
    ck_assert_int_eq(cl_commit(t), 0);
    memset(&b, 0, sizeof b);
    ck_assert_int_eq(cl_txn_begin(db, 0, &b.t), 0);
    for (int i = 0; i < 25; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%02d", 2 * i + 1);
        put_str(b.t, k, "20");
    }
    ck_assert_int_eq(cl_scan(b.t, "k", 1, "l", 1, bump_cb, &b), 0);
    ck_assert_int_eq(b.calls, 50);
    ck_assert_int_eq(cl_commit(b.t), 0);
    for (int i = 0; i < 50; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%02d", i);
        ck_assert_int_eq(get_int(db, k), i % 2 ? 21 : 11);
    }
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Inserts a key just after every key it visits, inside the range. */
static int insert_cb(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct bump *b = arg;
    char k[CL_MAX_KEY + 1];
    (void)val;
    (void)vlen;
    b->calls++;
    if (b->calls > 1000)
        return 1; /* would run on and on */
    if (klen + 1 > CL_MAX_KEY)
        return 2;
    memcpy(k, key, klen);
    k[klen] = 'x';
    b->inserted++;
    return cl_put(b->t, k, klen + 1, "v", 1);
}

static int count_cb(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    (void)key;
    (void)klen;
    (void)val;
    (void)vlen;
    ++*(int *)arg;
    return 0;
}

/* A callback that inserts keys inside the range does not make the scan
 * run on: it visits what was there when it began, and the inserted keys
 * are all committed. */
START_TEST(test_scan_insert_in_range_ends)
{
    char *dir = tu_mkdtemp("misuse-insert");
    struct cl_db *db = open_small(dir);
    struct cl_txn *t;
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    put_str(t, "m1", "v");
    put_str(t, "m2", "v");
    ck_assert_int_eq(cl_commit(t), 0);
    struct bump b = {0};
    ck_assert_int_eq(cl_txn_begin(db, 0, &b.t), 0);
    put_str(b.t, "m3", "v"); /* one of its own */
    ck_assert_int_eq(cl_scan(b.t, "m", 1, "n", 1, insert_cb, &b), 0);
    ck_assert_int_eq(b.calls, 3);
    ck_assert_int_eq(cl_commit(b.t), 0);
    /* a later scan sees the three keys and the three inserted */
    int count = 0;
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &t), 0);
    ck_assert_int_eq(cl_scan(t, "m", 1, "n", 1, count_cb, &count), 0);
    cl_abort(t);
    ck_assert_int_eq(count, 6);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Deletes every key it visits. */
static int delete_cb(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct bump *b = arg;
    (void)val;
    (void)vlen;
    b->calls++;
    return cl_del(b->t, key, klen);
}

START_TEST(test_scan_delete_in_callback)
{
    char *dir = tu_mkdtemp("misuse-del");
    struct cl_db *db = open_small(dir);
    struct cl_txn *t;
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    for (int i = 0; i < 10; i++) {
        char k[16];
        snprintf(k, sizeof k, "d%d", i);
        put_str(t, k, "v");
    }
    ck_assert_int_eq(cl_commit(t), 0);
    struct bump b = {0};
    ck_assert_int_eq(cl_txn_begin(db, 0, &b.t), 0);
    ck_assert_int_eq(cl_scan(b.t, NULL, 0, NULL, 0, delete_cb, &b), 0);
    ck_assert_int_eq(b.calls, 10);
    ck_assert_int_eq(cl_commit(b.t), 0);
    memset(&b, 0, sizeof b);
    ck_assert_int_eq(cl_txn_begin(db, 0, &b.t), 0);
    ck_assert_int_eq(cl_scan(b.t, NULL, 0, NULL, 0, delete_cb, &b), 0);
    ck_assert_int_eq(b.calls, 0);
    cl_abort(b.t);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* One thread with write transactions that have read (and so hold the
 * writer lock) on 64 databases at once: no false CL_EBUSY on any, and a
 * second such transaction on one of them is still refused. */
START_TEST(test_many_databases_one_thread)
{
#if defined(__SANITIZE_THREAD__)
    enum { N = 48 }; /* ThreadSanitizer tracks at most 64 mutexes held by one thread */
#else
    enum { N = 64 };
#endif
    char *dirs[N];
    struct cl_db *dbs[N];
    struct cl_txn *ts[N];
    for (int i = 0; i < N; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "misuse-many%d", i);
        dirs[i] = tu_mkdtemp(tag);
        dbs[i] = open_small(dirs[i]);
        ck_assert_int_eq(cl_txn_begin(dbs[i], 0, &ts[i]), 0);
        size_t vl;
        ck_assert_int_eq(cl_get(ts[i], "x", 1, NULL, 0, &vl), CL_ENOTFOUND); /* takes the writer lock */
        put_str(ts[i], "x", "1");
    }
    struct cl_txn *again;
    size_t vl;
    ck_assert_int_eq(cl_txn_begin(dbs[N - 1], 0, &again), 0);
    ck_assert_int_eq(cl_get(again, "x", 1, NULL, 0, &vl), CL_EBUSY);
    cl_abort(again);
    for (int i = 0; i < N; i++)
        ck_assert_msg(cl_commit(ts[i]) == 0, "database %d", i);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(get_int(dbs[i], "x"), 1);
        ck_assert_int_eq(cl_close(dbs[i]), 0);
        tu_rmdir(dirs[i]);
        free(dirs[i]);
    }
}
END_TEST

/* Every option, at both edges of the range commitlab.h states: the edge
 * itself is accepted, one step beyond is CL_EINVAL with a detail naming
 * the option (through cl_open, which refuses before touching the
 * directory). */
struct edge {
    const char *name;
    size_t off, size;
    uint64_t lo, hi; /* hi UINT64_MAX: no upper edge */
};
#define E(f, lo, hi) {#f, offsetof(struct cl_options, f), sizeof(((struct cl_options *)0)->f), lo, hi}

static void set_opt(struct cl_options *o, const struct edge *e, uint64_t v)
{
    if (e->size == 8) {
        memcpy((char *)o + e->off, &v, 8);
    } else {
        uint32_t w = (uint32_t)v;
        memcpy((char *)o + e->off, &w, 4);
    }
}

START_TEST(test_option_edges)
{
    static const struct edge edges[] = {
        E(sync, 0, CL_SYNC_NPOLICIES - 1),
        E(method, 0, CL_METHOD_RWF_DSYNC),
        E(elr, 0, 1),
        E(segments, 0, 1),
        E(segment_init, 0, 2),
        E(recycle_max, 1, 64),
        E(prealloc, 0, 64),
        E(segment_size, 64 * 1024, 1ull << 30),
        E(cache_size, 64 * 1024, 64ull << 30),
        E(checkpoint_bytes, 0, 1ull << 40),
        E(interval_ms, 1, 60000),
        E(commit_delay_us, 0, 100000),
        E(commit_siblings, 0, 1000),
        E(uring_depth, 1, CL_MAX_URING_DEPTH),
        E(max_batch, 0, 1u << 20),
        E(flusher_spin_us, 0, 100000),
        E(sync_latency_us, 0, 10000000),
        E(create, 0, 1),
        E(cold_recycle, 0, 1),
        E(uring_sync, 0, CL_URING_SYNC_RWF_DSYNC),
        E(no_final_checkpoint, 0, 1),
        E(wait, 0, CL_WAIT_ADAPTIVE),
        E(wait_spin_us, 0, 100000),
        E(log_insert, 0, CL_LOG_INSERT_SLOTS),
    };
    char *dir = tu_mkdtemp("misuse-opts");
    char *db_dir;
    ck_assert_int_ne(asprintf(&db_dir, "%s/db", dir), -1);
    /* The table in options.c covers each field of struct cl_options once. */
    size_t n, bytes = 0;
    const struct cl_option_desc *d = cl_option_table(&n);
    ck_assert_uint_eq(n, sizeof edges / sizeof *edges);
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(d[i].info.name, edges[i].name);
        ck_assert_uint_eq(d[i].info.min, edges[i].lo);
        ck_assert_uint_eq(d[i].info.max, edges[i].hi);
        bytes += d[i].size;
    }
    ck_assert_uint_le(bytes, sizeof(struct cl_options));
    /* ... and the public API hands out those rows, each whole: a default in
     * its range, a policy that exists, an enum's names one per value (the
     * _name functions' spelling), one line of help */
    ck_assert_int_eq(cl_option_count(), (int)n);
    ck_assert_ptr_null(cl_option_info(-1));
    ck_assert_ptr_null(cl_option_info((int)n));
    for (size_t i = 0; i < n; i++) {
        const struct cl_option_info *f = cl_option_info((int)i);
        ck_assert_ptr_eq(f, &d[i].info);
        ck_assert_msg(f->dflt >= f->min && f->dflt <= f->max, "%s: default out of its range", f->name);
        ck_assert_msg(f->policy == CL_OPTION_ALL_POLICIES || (f->policy >= 0 && f->policy < CL_SYNC_NPOLICIES),
                      "%s: policy %d", f->name, f->policy);
        ck_assert_msg(f->help && f->help[0] && !strchr(f->help, '\n'), "%s: not one line of help", f->name);
        ck_assert_msg(f->unit && f->unit[0], "%s: no unit", f->name);
        ck_assert_msg((f->type == CL_OPTION_ENUM) == (f->names != NULL), "%s: names for an enum only", f->name);
        if (f->type == CL_OPTION_FLAG)
            ck_assert_msg(f->min == 0 && f->max == 1, "%s: a flag is 0 or 1", f->name);
        if (f->type == CL_OPTION_ENUM) {
            uint64_t v = 0;
            while (f->names[v])
                v++;
            ck_assert_msg(f->min == 0 && v == f->max + 1, "%s: %" PRIu64 " names for %" PRIu64 " values", f->name, v,
                          f->max + 1);
        }
    }
    const struct cl_option_info *sync = cl_option_info(0), *method = cl_option_info(1);
    ck_assert_str_eq(sync->name, "sync");
    ck_assert_str_eq(method->name, "method");
    for (int p = 0; p < CL_SYNC_NPOLICIES; p++)
        ck_assert_str_eq(sync->names[p], cl_sync_policy_name((enum cl_sync_policy)p));
    for (int m = 0; m <= CL_METHOD_RWF_DSYNC; m++)
        ck_assert_str_eq(method->names[m], cl_sync_method_name((enum cl_sync_method)m));
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
        const struct edge *e = &edges[i];
        struct cl_options o;
        struct cl_db *db = NULL;
        uint64_t beyond[2];
        int nb = 0;
        if (e->lo > 0)
            beyond[nb++] = e->lo - 1;
        if (e->hi != UINT64_MAX)
            beyond[nb++] = e->hi + 1;
        if (e->size == 4 && e->lo == 0)
            beyond[nb++] = UINT32_MAX; /* -1 in an int or enum */
        for (int k = 0; k < nb && k < 2; k++) {
            cl_options_init(&o);
            set_opt(&o, e, beyond[k]);
            int rc = cl_open(db_dir, &o, &db, NULL);
            ck_assert_msg(rc == CL_EINVAL, "%s = %" PRIu64 ": cl_open returned %d", e->name, beyond[k], rc);
            ck_assert_ptr_null(db);
            char want[64];
            snprintf(want, sizeof want, "option %s = ", e->name);
            ck_assert_msg(strstr(cl_error_detail(), want) != NULL, "%s: detail '%s'", e->name, cl_error_detail());
        }
        uint64_t ok[2] = {e->lo, e->hi == UINT64_MAX ? e->lo : e->hi};
        for (int k = 0; k < 2; k++) {
            cl_options_init(&o);
            set_opt(&o, e, ok[k]);
            ck_assert_msg(cl_options_check(&o) == 0, "%s = %" PRIu64 " refused: %s", e->name, ok[k],
                          cl_error_detail());
        }
    }
    /* the refusals made nothing */
    ck_assert_int_eq(access(db_dir, F_OK), -1);
    /* and cheap edges open for real: uring_depth 1, interval 1 ms */
    struct cl_options o;
    struct cl_db *db;
    cl_options_init(&o);
    o.segment_size = 64 * 1024;
    o.uring_depth = 1;
    o.interval_ms = 1;
    o.max_batch = 1;
    ck_assert_int_eq(cl_open(db_dir, &o, &db, NULL), 0);
    ck_assert_int_eq(cl_close(db), 0);
    free(db_dir);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A caller built against a newer header passes a larger struct: bytes
 * this library does not know must be zero (then they are ignored), or the
 * open is refused as an option this library lacks; outputs fill only what
 * it knows.  A caller with a smaller struct gets defaults beyond it. */
/* cl_option_set: every row by its name, at both ends of its range, and
 * refused one beyond, by an unknown name and beyond the caller's size. */
START_TEST(test_option_set)
{
    struct cl_options o, d;
    cl_options_init(&d);
    for (int i = 0; i < cl_option_count(); i++) {
        const struct cl_option_info *f = cl_option_info(i);
        o = d;
        ck_assert_int_eq(cl_option_set(&o, sizeof o, f->name, f->max), 0);
        ck_assert_int_eq(cl_option_set(&o, sizeof o, f->name, f->min), 0);
        if (f->max != UINT64_MAX) {
            ck_assert_int_eq(cl_option_set(&o, sizeof o, f->name, f->max + 1), CL_EINVAL);
            ck_assert_msg(strstr(cl_error_detail(), f->name), "%s: detail '%s'", f->name, cl_error_detail());
        }
    }
    o = d;
    ck_assert_int_eq(cl_option_set(&o, sizeof o, "commit_delay_us", 250), 0);
    ck_assert_uint_eq(o.commit_delay_us, 250);
    ck_assert_int_eq(cl_option_set(&o, sizeof o, "wait", CL_WAIT_ADAPTIVE), 0);
    ck_assert_int_eq(o.wait, CL_WAIT_ADAPTIVE);
    ck_assert_int_eq(cl_option_set(&o, sizeof o, "segment_size", 1ull << 20), 0);
    ck_assert_uint_eq(o.segment_size, 1ull << 20);
    ck_assert_int_eq(cl_option_set(&o, sizeof o, "sync", CL_SYNC_NPOLICIES), CL_EINVAL);
    ck_assert_int_eq(o.sync, d.sync); /* a refused value leaves the field alone */
    ck_assert_int_eq(cl_option_set(&o, sizeof o, "no_such_option", 1), CL_EINVAL);
    ck_assert_ptr_nonnull(strstr(cl_error_detail(), "no_such_option"));
    ck_assert_int_eq(cl_option_set(&o, sizeof o, NULL, 1), CL_EINVAL);
    ck_assert_int_eq(cl_option_set(&o, offsetof(struct cl_options, wait), "wait", CL_WAIT_SPIN), CL_ENOTSUP);
    ck_assert_int_eq(o.wait, CL_WAIT_ADAPTIVE);
}
END_TEST

START_TEST(test_sized_structs)
{
    char *dir = tu_mkdtemp("misuse-sized");
    struct {
        struct cl_options o;
        uint64_t newer[4];
    } big;
    struct cl_db *db = NULL;
    cl_options_init_sized(&big.o, sizeof big);
    ck_assert_uint_eq(big.newer[0] | big.newer[1] | big.newer[2] | big.newer[3], 0);
    ck_assert_uint_eq(big.o.uring_depth, 4);
    big.o.segment_size = 64 * 1024;
    big.newer[2] = 7;
    ck_assert_int_eq(cl_open_sized(dir, &big.o, sizeof big, &db, NULL, 0), CL_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(cl_error_detail(), "struct cl_options"));
    big.newer[2] = 0;
    ck_assert_int_eq(cl_open_sized(dir, &big.o, sizeof big, &db, NULL, 0), 0);
    struct {
        struct cl_stats s;
        uint64_t newer[4];
    } st;
    memset(&st, 0xee, sizeof st);
    ck_assert_int_eq(cl_stats_sized(db, &st.s, sizeof st), 0);
    ck_assert_uint_eq(st.newer[0], 0xeeeeeeeeeeeeeeeeull); /* left alone */
    ck_assert_int_eq(cl_close(db), 0);
    /* a smaller struct: the first two fields only; the rest default */
    struct cl_options small;
    memset(&small, 0xff, sizeof small);
    small.sync = CL_SYNC_NONE;
    small.method = CL_METHOD_FSYNC;
    ck_assert_int_eq(cl_open_sized(dir, &small, offsetof(struct cl_options, elr), &db, NULL, 0), 0);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A segment size inside its range but not a whole number of 4 KiB
 * headers is refused too, naming the option and the rule; a multiple is
 * accepted. */
START_TEST(test_segment_size_multiple)
{
    struct cl_options o;
    cl_options_init(&o);
    o.segment_size = 64 * 1024 + 512;
    ck_assert_int_eq(cl_options_check(&o), CL_EINVAL);
    ck_assert_msg(strstr(cl_error_detail(), "option segment_size = 66048 is not a multiple of 4096") != NULL,
                  "detail '%s'", cl_error_detail());
    o.segment_size = 64 * 1024 + 4096;
    ck_assert_int_eq(cl_options_check(&o), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("misuse");
    TCase *tc = tcase_create("misuse");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_scan_write_applied_once);
    tcase_add_test(tc, test_scan_insert_in_range_ends);
    tcase_add_test(tc, test_scan_delete_in_callback);
    tcase_add_test(tc, test_many_databases_one_thread);
    tcase_add_test(tc, test_option_edges);
    tcase_add_test(tc, test_option_set);
    tcase_add_test(tc, test_sized_structs);
    tcase_add_test(tc, test_segment_size_multiple);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
