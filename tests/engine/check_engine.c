/*
 * check_engine.c -- the public API: transactions, read-your-writes, scans,
 * recovery after reopen, sticky failure after EIO on a sync, ENOSPC, and
 * error names.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commitlab.h"
#include "engine_internal.h"
#include "testutil.h"
#include "vfs.h"
#include "vfs_fault.h"

static void small_opts(struct cl_options *o)
{
    cl_options_init(o);
    o->segment_size = 64 * 1024;
    o->cache_size = 64 * 4096;
}

static int put1(struct cl_db *db, const char *k, const char *v)
{
    struct cl_txn *t;
    int rc = cl_txn_begin(db, 0, &t);
    if (rc)
        return rc;
    rc = cl_put(t, k, strlen(k), v, strlen(v));
    if (rc) {
        cl_abort(t);
        return rc;
    }
    return cl_commit(t);
}

static int get1(struct cl_db *db, const char *k, char *buf, size_t cap)
{
    struct cl_txn *t;
    size_t vl = 0;
    int rc = cl_txn_begin(db, CL_TXN_RDONLY, &t);
    if (rc)
        return rc;
    rc = cl_get(t, k, strlen(k), buf, cap - 1, &vl);
    cl_abort(t);
    if (rc == 0)
        buf[vl < cap - 1 ? vl : cap - 1] = 0;
    return rc;
}

START_TEST(test_basic_and_reopen)
{
    char *dir = tu_mkdtemp("engine");
    struct cl_options o;
    struct cl_db *db;
    struct cl_recovery_info info;
    char buf[64];

    small_opts(&o);
    ck_assert_int_eq(cl_open(dir, &o, &db, &info), 0);
    ck_assert_int_eq(info.created, 1);
    ck_assert_int_eq(put1(db, "alpha", "1"), 0);
    ck_assert_int_eq(put1(db, "beta", "2"), 0);
    ck_assert_int_eq(get1(db, "alpha", buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "1");
    ck_assert_int_eq(get1(db, "gamma", buf, sizeof buf), CL_ENOTFOUND);
    struct cl_stats st;
    ck_assert_int_eq(cl_stats(db, &st), 0);
    ck_assert_uint_eq(st.commits, 2);
    ck_assert_uint_ge(st.syncs, 2);
    ck_assert_int_eq(cl_close(db), 0);

    o.create = 0;
    ck_assert_int_eq(cl_open(dir, &o, &db, &info), 0);
    ck_assert_int_eq(info.created, 0);
    ck_assert_int_eq(get1(db, "beta", buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "2");
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

struct collect {
    char keys[16][16];
    int n;
};

static int collect_fn(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct collect *c = arg;
    (void)val;
    (void)vlen;
    ck_assert_int_lt(c->n, 16);
    memcpy(c->keys[c->n], key, klen);
    c->keys[c->n][klen] = 0;
    c->n++;
    return 0;
}

START_TEST(test_read_your_writes_and_scan)
{
    char *dir = tu_mkdtemp("engine");
    struct cl_options o;
    struct cl_db *db;
    struct cl_txn *t;
    char buf[16];
    size_t vl;

    small_opts(&o);
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(put1(db, "b", "tree-b"), 0);
    ck_assert_int_eq(put1(db, "d", "tree-d"), 0);
    ck_assert_int_eq(put1(db, "f", "tree-f"), 0);

    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    ck_assert_int_eq(cl_put(t, "c", 1, "txn-c", 5), 0);
    ck_assert_int_eq(cl_put(t, "d", 1, "txn-d", 5), 0);
    ck_assert_int_eq(cl_del(t, "f", 1), 0);
    ck_assert_int_eq(cl_del(t, "zz", 2), CL_ENOTFOUND);
    ck_assert_int_eq(cl_get(t, "d", 1, buf, sizeof buf, &vl), 0);
    ck_assert_int_eq((int)vl, 5);
    ck_assert_int_eq(memcmp(buf, "txn-d", 5), 0);
    ck_assert_int_eq(cl_get(t, "f", 1, buf, sizeof buf, &vl), CL_ENOTFOUND);

    struct collect c = {0};
    ck_assert_int_eq(cl_scan(t, "a", 1, "e", 1, collect_fn, &c), 0);
    ck_assert_int_eq(c.n, 3);
    ck_assert_str_eq(c.keys[0], "b");
    ck_assert_str_eq(c.keys[1], "c");
    ck_assert_str_eq(c.keys[2], "d");

    /* Others do not see uncommitted writes. */
    ck_assert_int_eq(get1(db, "c", buf, sizeof buf), CL_ENOTFOUND);
    ck_assert_int_eq(cl_commit(t), 0);
    ck_assert_int_eq(get1(db, "c", buf, sizeof buf), 0);
    ck_assert_int_eq(get1(db, "f", buf, sizeof buf), CL_ENOTFOUND);

    c.n = 0;
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &t), 0);
    ck_assert_int_eq(cl_put(t, "x", 1, "y", 1), CL_EREADONLY);
    ck_assert_int_eq(cl_scan(t, NULL, 0, NULL, 0, collect_fn, &c), 0);
    ck_assert_int_eq(c.n, 3); /* b c d */
    cl_abort(t);

    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    char big[CL_MAX_VALUE + 1] = {0};
    char bigkey[CL_MAX_KEY + 1];
    memset(bigkey, 'k', sizeof bigkey);
    ck_assert_int_eq(cl_put(t, "v", 1, big, sizeof big), CL_ETOOBIG);
    ck_assert_int_eq(cl_put(t, bigkey, sizeof bigkey, "v", 1), CL_ETOOBIG);
    ck_assert_int_eq(cl_put(t, "v", 1, big, CL_MAX_VALUE), 0);
    ck_assert_int_eq(cl_put(t, bigkey, CL_MAX_KEY, "v", 1), 0);
    ck_assert_int_eq(cl_commit(t), 0);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Replays a database of many transactions with checkpoints in between, far
 * larger than the cache, after an unclean stop. */
START_TEST(test_recovery_replays_after_checkpoint)
{
    char *dir = tu_mkdtemp("engine");
    struct cl_options o;
    struct cl_db *db;
    struct cl_recovery_info info;
    struct vfs *fault = vfs_fault_new(vfs_posix());
    char k[32], v[128], buf[128];

    small_opts(&o);
    o.sync = CL_SYNC_COMMIT;
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &db, NULL), 0);
    for (int i = 0; i < 2000; i++) {
        snprintf(k, sizeof k, "k%06d", i);
        snprintf(v, sizeof v, "value-%d-%0100d", i, i);
        ck_assert_int_eq(put1(db, k, v), 0);
        if (i == 700)
            ck_assert_int_eq(cl_checkpoint(db), 0);
    }
    /* A power failure: everything synced survives, nothing else. */
    ck_assert_int_eq(vfs_fault_crash(fault, VFS_CRASH_DROP, 7), 0);
    ck_assert_int_eq(cl_close(db), -EIO); /* its checkpoint met the dead file layer */
    vfs_destroy(fault);

    ck_assert_int_eq(cl_open(dir, &o, &db, &info), 0);
    ck_assert_uint_eq(info.txns_replayed, 2000 - 701);
    for (int i = 0; i < 2000; i++) {
        snprintf(k, sizeof k, "k%06d", i);
        snprintf(v, sizeof v, "value-%d-%0100d", i, i);
        ck_assert_int_eq(get1(db, k, buf, sizeof buf), 0);
        ck_assert_str_eq(buf, v);
    }
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* EIO on a log sync: that commit is not acknowledged, the handle is broken
 * for every later write, and reopening recovers everything acknowledged. */
START_TEST(test_eio_on_sync_is_sticky)
{
    char *dir = tu_mkdtemp("engine");
    struct cl_options o;
    struct cl_db *db;
    struct vfs *fault = vfs_fault_new(vfs_posix());
    struct cl_txn *t;
    char buf[64];

    small_opts(&o);
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &db, NULL), 0);
    ck_assert_int_eq(put1(db, "a", "1"), 0);
    ck_assert_int_eq(put1(db, "b", "2"), 0);
    vfs_fault_fail_sync(fault, 1, -EIO);
    ck_assert_int_eq(put1(db, "c", "3"), -EIO);
    ck_assert_int_eq(put1(db, "d", "4"), CL_EBROKEN);
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), CL_EBROKEN);
    ck_assert_int_eq(cl_checkpoint(db), CL_EBROKEN);
    struct cl_stats st;
    cl_stats(db, &st);
    ck_assert_int_eq(st.broken, 1);
    ck_assert_uint_eq(st.commits, 2);
    /* Reads still work. */
    ck_assert_int_eq(get1(db, "a", buf, sizeof buf), 0);
    /* The failed sync's data must not be trusted: crash now. */
    ck_assert_int_eq(vfs_fault_crash(fault, VFS_CRASH_DROP, 1), 0);
    ck_assert_int_eq(cl_close(db), CL_EBROKEN);
    vfs_destroy(fault);

    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(get1(db, "a", buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "1");
    ck_assert_int_eq(get1(db, "b", buf, sizeof buf), 0);
    ck_assert_int_eq(get1(db, "c", buf, sizeof buf), CL_ENOTFOUND);
    ck_assert_int_eq(get1(db, "d", buf, sizeof buf), CL_ENOTFOUND);
    ck_assert_int_eq(put1(db, "e", "5"), 0);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ENOSPC on a log write: a clear error, nothing acknowledged lost. */
START_TEST(test_enospc_on_write)
{
    char *dir = tu_mkdtemp("engine");
    struct cl_options o;
    struct cl_db *db;
    struct vfs *fault = vfs_fault_new(vfs_posix());
    char buf[64];

    small_opts(&o);
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &db, NULL), 0);
    ck_assert_int_eq(put1(db, "a", "1"), 0);
    vfs_fault_fail_write(fault, 1, -ENOSPC);
    int rc = put1(db, "b", "2");
    ck_assert_int_eq(rc, -ENOSPC);
    ck_assert_str_eq(cl_strerror(rc), strerror(ENOSPC));
    ck_assert_int_eq(put1(db, "c", "3"), CL_EBROKEN);
    ck_assert_int_eq(cl_close(db), CL_EBROKEN);
    vfs_destroy(fault);

    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(get1(db, "a", buf, sizeof buf), 0);
    ck_assert_int_eq(get1(db, "b", buf, sizeof buf), CL_ENOTFOUND);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_options_and_errors)
{
    char *dir = tu_mkdtemp("engine");
    struct cl_options o;
    struct cl_db *db;
    enum cl_sync_policy p;
    enum cl_sync_method m;

    for (int e = CL_ERR_FIRST; e >= CL_ERR_LAST; e--)
        ck_assert_msg(strcmp(cl_strerror(e), "unknown error") != 0, "code %d has no name", e);
    ck_assert_str_eq(cl_strerror(-EIO), strerror(EIO));
    ck_assert_int_eq(cl_sync_policy_parse("commit", &p), 0);
    ck_assert_int_eq(p, CL_SYNC_COMMIT);
    ck_assert_int_eq(cl_sync_policy_parse("bogus", &p), CL_EINVAL);
    ck_assert_int_eq(cl_sync_method_parse("dsync", &m), 0);
    ck_assert_str_eq(cl_sync_method_name(m), "dsync");

    small_opts(&o);
    o.segment_size = 1000;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), CL_EINVAL);
    small_opts(&o);
    o.create = 0;
    ck_assert_int_lt(cl_open(dir, &o, &db, NULL), 0); /* nothing there */
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Two databases in one process: each one's cl_stats counts its own page
 * writes (the file layer's counters are per process and mixed them). */
/* A file layer over the POSIX one whose RWF_DSYNC writes fail as on a
 * kernel that does not know the flag. */
static struct vfs_ops refusing_ops;
static struct vfs refusing_vfs;

static int refusing_pwrite(struct vfs_file *f, const void *buf, size_t len, uint64_t off)
{
    if (f->flags & VFS_O_WRITE_DSYNC)
        return -EOPNOTSUPP;
    return vfs_posix()->ops->pwrite(f, buf, len, off);
}

/* rwf-dsync: a kernel that refuses RWF_DSYNC makes cl_open return
 * CL_ENOTSUP, and cl_error_detail() says what and why; where it is
 * taken, commits go through and survive; uring_sync=rwf-dsync with a
 * method that links no sync is refused with the option named. */
START_TEST(test_rwf_dsync_open)
{
    char *dir = tu_mkdtemp("eng-rwf");
    struct cl_options o;
    struct cl_db *db = NULL;
    refusing_ops = *vfs_posix()->ops;
    refusing_ops.pwrite = refusing_pwrite;
    refusing_vfs = (struct vfs){.ops = &refusing_ops, .name = "refusing"};
    cl_options_init(&o);
    o.method = CL_METHOD_RWF_DSYNC;
    ck_assert_int_eq(cl_open_vfs(dir, &o, &refusing_vfs, &db, NULL), CL_ENOTSUP);
    ck_assert_ptr_null(db);
    ck_assert_msg(strstr(cl_error_detail(), "RWF_DSYNC") != NULL, "detail: '%s'", cl_error_detail());
    o.method = CL_METHOD_FDATASYNC;
    ck_assert_int_eq(cl_open_vfs(dir, &o, &refusing_vfs, &db, NULL), 0); /* the other methods do not need it */
    ck_assert_int_eq(cl_close(db), 0);

    o.method = CL_METHOD_RWF_DSYNC;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(put1(db, "k", "v"), 0);
    ck_assert_int_eq(cl_close(db), 0);
    char buf[8];
    ck_assert_int_eq(cl_open(dir, NULL, &db, NULL), 0);
    ck_assert_int_eq(get1(db, "k", buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "v");
    ck_assert_int_eq(cl_close(db), 0);

    o.sync = CL_SYNC_URING;
    o.uring_sync = CL_URING_SYNC_RWF_DSYNC;
    o.method = CL_METHOD_DSYNC;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), CL_EINVAL);
    ck_assert_msg(strstr(cl_error_detail(), "uring_sync") != NULL, "detail: '%s'", cl_error_detail());
    tu_rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_stats_per_database)
{
    char *da = tu_mkdtemp("eng-a"), *db_dir = tu_mkdtemp("eng-b");
    struct cl_db *a, *b;
    struct cl_stats sb0, sb1, sa;
    char k[32], v[128];
    ck_assert_int_eq(cl_open(da, NULL, &a, NULL), 0);
    ck_assert_int_eq(cl_open(db_dir, NULL, &b, NULL), 0);
    ck_assert_int_eq(cl_stats(b, &sb0), 0);
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof k, "k%06d", i);
        snprintf(v, sizeof v, "value-%d-%0100d", i, i);
        ck_assert_int_eq(put1(a, k, v), 0);
    }
    ck_assert_int_eq(cl_checkpoint(a), 0);
    ck_assert_int_eq(cl_stats(a, &sa), 0);
    ck_assert_int_eq(cl_stats(b, &sb1), 0);
    ck_assert_uint_gt(sa.data_writes, 2);
    ck_assert_uint_eq(sa.data_bytes, sa.data_writes * 4096);
    ck_assert_uint_eq(sb1.data_writes, sb0.data_writes); /* b did nothing */
    ck_assert_uint_eq(sb1.data_bytes, sb0.data_bytes);
    ck_assert_int_eq(cl_close(a), 0);
    ck_assert_int_eq(cl_close(b), 0);
    tu_rmdir(da);
    tu_rmdir(db_dir);
    free(da);
    free(db_dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("api");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_basic_and_reopen);
    tcase_add_test(tc, test_read_your_writes_and_scan);
    tcase_add_test(tc, test_recovery_replays_after_checkpoint);
    tcase_add_test(tc, test_eio_on_sync_is_sticky);
    tcase_add_test(tc, test_enospc_on_write);
    tcase_add_test(tc, test_options_and_errors);
    tcase_add_test(tc, test_stats_per_database);
    tcase_add_test(tc, test_rwf_dsync_open);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
