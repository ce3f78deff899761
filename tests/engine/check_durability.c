/*
 * check_durability.c -- the engine's durability bugs, each pinned by a test
 * that fails without its fix:
 *   - a commit that fails while being applied to the tree is not partly
 *     visible to readers of the broken handle;
 *   - the database directory cl_open creates is durable (its parent is
 *     synced) before anything in it is acknowledged;
 *   - a missing checkpoint segment with later segments present is
 *     corruption naming it, not an empty log;
 *   - what an earlier process left in the page cache is made durable before
 *     recovery builds on it (a process crash, then a power failure);
 *   - cl_close reports the final checkpoint's own error; an io_uring depth
 *     over the limit is refused, not clamped.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commitlab.h"
#include "engine_internal.h"
#include "testutil.h"
#include "vfs.h"
#include "vfs_fault.h"

static void key_of(int i, char *k) { snprintf(k, 16, "key-%05d", i); }

static int put_commit(struct cl_db *db, int from, int n, size_t vlen, uint8_t fill)
{
    struct cl_txn *t;
    uint8_t v[4096];
    char k[16];
    int rc = cl_txn_begin(db, 0, &t);
    if (rc)
        return rc;
    memset(v, fill, sizeof v);
    for (int i = from; i < from + n; i++) {
        key_of(i, k);
        if ((rc = cl_put(t, k, strlen(k), v, vlen)) != 0) { /* a broken handle refuses */
            cl_abort(t);
            return rc;
        }
    }
    return cl_commit(t);
}

/* 0 found, CL_ENOTFOUND, or an error. */
static int get(struct cl_db *db, int i)
{
    struct cl_txn *t;
    char k[16];
    size_t vl;
    uint8_t v[4096];
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &t), 0);
    key_of(i, k);
    int rc = cl_get(t, k, strlen(k), v, sizeof v, &vl);
    cl_abort(t);
    return rc;
}

/* A transaction whose application to the tree fails part way (a page
 * eviction's write failing with ENOSPC in a 16-page cache) must not be
 * visible in part: reads of the broken handle see none of it. */
START_TEST(test_failed_commit_not_partly_visible)
{
    char *dir = tu_mkdtemp("dur");
    struct vfs *fault = vfs_fault_new(vfs_posix());
    struct cl_options o;
    struct cl_db *db;

    cl_options_init(&o);
    o.cache_size = 16 * 4096;
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &db, NULL), 0);
    ck_assert_int_eq(put_commit(db, 0, 10, 100, 1), 0); /* committed before */
    vfs_fault_fail_write(fault, 1, -ENOSPC);            /* the first data page written */
    int rc = put_commit(db, 1000, 400, 1000, 2);
    ck_assert_int_eq(rc, -ENOSPC);
    int visible = 0;
    for (int i = 1000; i < 1400; i++) {
        rc = get(db, i);
        ck_assert_msg(rc == CL_ENOTFOUND || rc == CL_EBROKEN, "key %d: %s", i, cl_strerror(rc));
        visible += rc == 0;
    }
    ck_assert_int_eq(visible, 0);
    rc = get(db, 3);
    ck_assert_msg(rc == 0 || rc == CL_EBROKEN, "a committed key: %s", cl_strerror(rc));
    ck_assert_int_eq(cl_close(db), CL_EBROKEN);
    vfs_destroy(fault);

    /* reopened: the committed keys are there, the failed transaction is not */
    ck_assert_int_eq(cl_open(dir, NULL, &db, NULL), 0);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(get(db, i), 0);
    for (int i = 1000; i < 1400; i++)
        ck_assert_int_eq(get(db, i), CL_ENOTFOUND);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* cl_open creating the directory makes its entry durable: a power failure
 * right after an acknowledged commit keeps the directory and the commit. */
START_TEST(test_new_directory_durable)
{
    char *parent = tu_mkdtemp("dur"), *dir;
    ck_assert_int_ge(asprintf(&dir, "%s/db", parent), 0);
    for (int model = 0; model < 3; model++) {
        struct vfs *fault = vfs_fault_new(vfs_posix());
        struct cl_options o;
        struct cl_db *db;
        cl_options_init(&o);
        ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &db, NULL), 0);
        ck_assert_int_eq(put_commit(db, 0, 1, 10, 7), 0); /* acknowledged: durable */
        ck_assert_int_eq(vfs_fault_crash(fault, (enum vfs_crash_model)model, 42), 0);
        cl_close(db);
        vfs_destroy(fault);
        struct cl_recovery_info info;
        o.create = 0;
        ck_assert_msg(cl_open(dir, &o, &db, &info) == 0, "model %d: the directory is gone", model);
        ck_assert_int_eq(get(db, 0), 0);
        ck_assert_int_eq(cl_close(db), 0);
        tu_rmdir(dir);
    }
    free(dir);
    tu_rmdir(parent);
    free(parent);
}
END_TEST

/* The segment holding the checkpoint LSN is missing while later segments
 * exist: recovery must refuse (CL_ECORRUPT, naming it) rather than read an
 * empty log and drop every later commit. */
START_TEST(test_missing_checkpoint_segment)
{
    char *dir = tu_mkdtemp("dur");
    struct vfs *proc = vfs_fault_new(vfs_posix());
    struct cl_options o;
    struct cl_db *db;
    struct cl_inspect in;

    cl_options_init(&o);
    o.segment_size = 64 * 1024;
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open_vfs(dir, &o, proc, &db, NULL), 0);
    for (int i = 0; i < 60; i++) /* several segments past the checkpoint */
        ck_assert_int_eq(put_commit(db, i * 4, 4, 1000, (uint8_t)i), 0);
    vfs_fault_kill(proc); /* the process dies: no close-time checkpoint */
    cl_close(db);
    vfs_destroy(proc);

    ck_assert_int_eq(cl_inspect(dir, 0, &in, NULL), 0);
    uint64_t segno = in.checkpoint_lsn / in.wal_segment_size;
    char name[64], *path;
    snprintf(name, sizeof name, "wal-%016llx.log", (unsigned long long)segno);
    ck_assert_int_ge(asprintf(&path, "%s/%s", dir, name), 0);
    ck_assert_int_eq(vfs_unlink(vfs_posix(), path), 0);
    free(path);

    struct cl_recovery_info info;
    o.create = 0;
    int rc = cl_open(dir, &o, &db, &info);
    ck_assert_msg(rc == CL_ECORRUPT, "reopen: %s", cl_strerror(rc));
    ck_assert_int_eq(info.missing_segment, 1);
    ck_assert_uint_eq(info.corrupt_lsn / in.wal_segment_size, segno);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

struct writer_arg {
    struct cl_db *db;
    int stop; /* atomic */
};

/* Commits round 3 over and over until stopped or refused. */
static void *round3(void *arg)
{
    struct writer_arg *wa = arg;
    for (int i = 0; !__atomic_load_n(&wa->stop, __ATOMIC_ACQUIRE); i = (i + 1) % 6)
        if (put_commit(wa->db, i * 40, 40, 300, 3))
            break;
    return NULL;
}

/* A process dies between a checkpoint's meta-page write and its sync (the
 * meta page is in the page cache only) while other commits went on after
 * the checkpoint's LSN; the next process opens on the same machine,
 * replays them, and the power fails.  Unless the open first made what it
 * read durable, it trusted the cached meta page, took pages of the
 * previous checkpoint for free and overwrote them (replay evicting dirty
 * pages) before its first sync; a power failure that kept those overwrites
 * but not the new meta page left the old one pointing at overwritten
 * pages.  The none policy: the only syncs are the checkpoint's own (log,
 * data, meta), so the third sync is the meta page's. */
START_TEST(test_process_crash_then_power_failure)
{
    uint64_t base = tu_seed(9000), iters = tu_iterations(150);
    for (uint64_t it = 0; it < iters; it++) {
        uint64_t seed = base + it, rs = seed;
        char *dir = tu_mkdtemp("dur");
        struct vfs *machine = vfs_fault_new(vfs_posix());
        struct vfs *proc = vfs_fault_new(machine);
        struct cl_options o;
        struct cl_db *db;
        pthread_t th;

        cl_options_init(&o);
        o.sync = CL_SYNC_NONE;
        o.cache_size = 16 * 4096;
        o.checkpoint_bytes = 0;
        ck_assert_int_eq(cl_open_vfs(dir, &o, proc, &db, NULL), 0);
        for (int i = 0; i < 6; i++) /* checkpoint g-1 holds these */
            ck_assert_int_eq(put_commit(db, i * 40, 40, 300, 1), 0);
        ck_assert_int_eq(cl_checkpoint(db), 0);
        for (int i = 0; i < 6; i++) /* the same keys again: their pages are copied */
            ck_assert_int_eq(put_commit(db, i * 40, 40, 300, 2), 0);
        struct writer_arg wa = {db, 0};
        ck_assert_int_eq(pthread_create(&th, NULL, round3, &wa), 0);
        vfs_fault_fail_sync(proc, 3, -EIO); /* the meta page's sync never happens */
        cl_checkpoint(db);
        __atomic_store_n(&wa.stop, 1, __ATOMIC_RELEASE);
        pthread_join(th, NULL);
        vfs_fault_kill(proc);
        cl_close(db);
        vfs_destroy(proc);

        /* the next process, on the same machine, until the power fails */
        vfs_fault_crash_at(machine, 1 + tu_range(&rs, 300), 1 + (enum vfs_crash_model)(seed % 2), seed);
        o.create = 0;
        if (cl_open_vfs(dir, &o, machine, &db, NULL) == 0)
            cl_close(db);
        if (!vfs_fault_crashed(machine))
            ck_assert_int_eq(vfs_fault_crash(machine, VFS_CRASH_TORN, seed), 0);
        vfs_destroy(machine);

        o.sync = CL_SYNC_COMMIT;
        int rc = cl_open(dir, &o, &db, NULL);
        ck_assert_msg(rc == 0, "seed %" PRIu64 ": open after the power failure: %s", seed, cl_strerror(rc));
        for (int k = 0; k < 240; k++) {
            struct cl_txn *t;
            char key[16];
            uint8_t v[300];
            size_t vl;
            ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &t), 0);
            key_of(k, key);
            rc = cl_get(t, key, strlen(key), v, sizeof v, &vl);
            cl_abort(t);
            /* round 1 was checkpointed: every key is there, from some round */
            ck_assert_msg(rc == 0 && vl == 300 && v[0] >= 1 && v[0] <= 3 && v[299] == v[0],
                          "seed %" PRIu64 ": key %d: %s", seed, k, cl_strerror(rc));
        }
        ck_assert_int_eq(cl_close(db), 0);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* A power failure at any point of the open that creates a database (and
 * of the open after it): the directory opens again, as a database or as
 * nothing at all, never as "corrupt".  The first open makes the page file,
 * then a log segment, then its first checkpoint; a crash between the
 * second and the third leaves a segment above a page file that names no
 * log position yet. */
START_TEST(test_crash_while_creating)
{
    char *parent = tu_mkdtemp("dur"), *dir;
    ck_assert_int_ge(asprintf(&dir, "%s/db", parent), 0);
    for (uint64_t n = 1; n <= 80; n++) {
        struct vfs *fault = vfs_fault_new(vfs_posix());
        struct cl_options o;
        struct cl_db *db;
        cl_options_init(&o);
        vfs_fault_crash_at(fault, n, (enum vfs_crash_model)(n % 3), n);
        if (cl_open_vfs(dir, &o, fault, &db, NULL) == 0) {
            if (!vfs_fault_crashed(fault))
                ck_assert_int_eq(vfs_fault_crash(fault, (enum vfs_crash_model)(n % 3), n), 0);
            cl_close(db);
        }
        vfs_destroy(fault);
        int rc = cl_open(dir, &o, &db, NULL);
        ck_assert_msg(rc == 0, "crash at op %" PRIu64 " of the first open: reopen: %s", n, cl_strerror(rc));
        ck_assert_int_eq(put_commit(db, 0, 1, 10, 1), 0);
        ck_assert_int_eq(cl_close(db), 0);
        tu_rmdir(dir);
    }
    free(dir);
    tu_rmdir(parent);
    free(parent);
}
END_TEST

/* cl_close reports what its final checkpoint met, not a blanket
 * CL_EBROKEN; an io_uring depth over CL_MAX_URING_DEPTH is refused. */
START_TEST(test_errors_reported_as_they_happened)
{
    char *dir = tu_mkdtemp("dur");
    struct vfs *fault = vfs_fault_new(vfs_posix());
    struct cl_options o;
    struct cl_db *db;

    cl_options_init(&o);
    o.checkpoint_bytes = 0;
    ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &db, NULL), 0);
    ck_assert_int_eq(put_commit(db, 0, 50, 500, 3), 0);
    vfs_fault_fail_write(fault, 1, -ENOSPC); /* the close-time checkpoint's first page */
    ck_assert_int_eq(cl_close(db), -ENOSPC);
    vfs_destroy(fault);

    cl_options_init(&o);
    o.sync = CL_SYNC_URING;
    o.uring_depth = CL_MAX_URING_DEPTH + 1;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), CL_EINVAL);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("durability");
    TCase *tc = tcase_create("bugs");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_failed_commit_not_partly_visible);
    tcase_add_test(tc, test_new_directory_durable);
    tcase_add_test(tc, test_crash_while_creating);
    tcase_add_test(tc, test_missing_checkpoint_segment);
    tcase_add_test(tc, test_process_crash_then_power_failure);
    tcase_add_test(tc, test_errors_reported_as_they_happened);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
