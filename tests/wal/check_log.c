/* check_log.c -- the log writer: round trips across segments, each sync method, statistics, retiring segments, limits, sticky failure, crashes under the fault layer, and the invariant checks. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crc32c.h"
#include "testutil.h"
#include "vfs_fault.h"
#include "wal.h"
#include "wal_internal.h"
#include "wal_testlib.h"

#define SEG WAL_MIN_SEGMENT

/* Writes count txns (ids first_id..), optionally committing each, flushes,
 * and reads them all back. */
static void roundtrip(const char *tag, uint64_t seed, enum cl_sync_policy pol, enum cl_sync_method m,
                      enum cl_segment_init init, size_t bufsz, size_t count, const struct genp *g)
{
    char *dir = tu_mkdtemp(tag);
    struct rb rb;
    int rc;
    struct wal *w = tl_open(dir, NULL, SEG, pol, m, init, bufsz, 0, &rc);
    if (rc == CL_ENOTSUP && m == CL_METHOD_DIRECT) {
        fprintf(stderr, "%s: O_DIRECT not supported on this filesystem, skipped\n", tag);
        tu_rmdir(dir);
        free(dir);
        return;
    }
    ck_assert_msg(rc == 0, "seed %llu: wal_open %d", (unsigned long long)seed, rc);
    for (uint64_t id = 1; id <= count; id++) {
        rc = tl_txn(w, g, id, pol == CL_SYNC_COMMIT || id % 7 == 0, NULL);
        ck_assert_msg(rc == 0, "seed %llu txn %llu: %d", (unsigned long long)seed, (unsigned long long)id, rc);
    }
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    uint64_t end = wal_end_lsn(w);
    ck_assert_uint_eq(wal_durable_lsn(w), end);
    struct wal_stats st;
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.appends, count);
    ck_assert_msg(st.segments_created >= 3, "seed %llu: only %llu segments", (unsigned long long)seed,
                  (unsigned long long)st.segments_created);
    if (m == CL_METHOD_DSYNC || m == CL_METHOD_DIRECT || m == CL_METHOD_RWF_DSYNC)
        ck_assert_uint_eq(st.syncs, st.writes); /* every write is a sync */
    wal_close(w);

    tl_read(dir, NULL, SEG, 0, g, &rb);
    ck_assert_msg(rb.err[0] == 0, "seed %llu %s: %s", (unsigned long long)seed, tag, rb.err);
    ck_assert_msg(rb.rc == 0, "seed %llu %s: reader %d", (unsigned long long)seed, tag, rb.rc);
    ck_assert_uint_eq(rb.ntxn, count);
    for (size_t i = 0; i < count; i++)
        ck_assert_uint_eq(rb.txn_ids[i], i + 1);
    ck_assert_uint_eq(rb.partial, 0);
    ck_assert_uint_eq(rb.end_lsn, end);
    ck_assert_int_eq(rb.torn, 0);
    rb_free(&rb);
    tu_rmdir(dir);
    free(dir);
}

START_TEST(test_roundtrip)
{
    uint64_t seed = tu_seed(1);
    static const size_t bufs[] = { 0, 8192, 20000 };
    for (int init = CL_SEGINIT_ZERO; init <= CL_SEGINIT_FALLOCATE; init++) {
        for (int b = 0; b < 3; b++) {
            struct genp g = { seed + (uint64_t)(init * 3 + b), 6, 64, 3000 };
            roundtrip("wal-rt", g.seed, CL_SYNC_NONE, CL_METHOD_FDATASYNC, (enum cl_segment_init)init,
                      bufs[b], 600, &g);
        }
    }
}
END_TEST

START_TEST(test_methods)
{
    uint64_t seed = tu_seed(2);
    for (int m = CL_METHOD_FDATASYNC; m <= CL_METHOD_RWF_DSYNC; m++) {
        struct genp g = { seed + (uint64_t)m, 4, 48, 2000 };
        char tag[32];
        snprintf(tag, sizeof tag, "wal-%s", cl_sync_method_name((enum cl_sync_method)m));
        roundtrip(tag, g.seed, CL_SYNC_COMMIT, (enum cl_sync_method)m, CL_SEGINIT_ZERO, 16384, 150, &g);
    }
}
END_TEST

START_TEST(test_stats_commit)
{
    uint64_t seed = tu_seed(3);
    struct genp g = { seed, 3, 16, 64 };
    struct wal_stats st;
    char *dir = tu_mkdtemp("wal-stats");
    struct wal *w = tl_open(dir, NULL, 1u << 20, CL_SYNC_COMMIT, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 5, NULL);
    uint64_t start = wal_segment_start_lsn(5, 1u << 20), lsn = 0;
    ck_assert_uint_eq(wal_end_lsn(w), start);
    ck_assert_uint_eq(wal_durable_lsn(w), start);
    for (uint64_t id = 1; id <= 100; id++) {
        ck_assert_int_eq(tl_txn(w, &g, id, 1, &lsn), 0);
        ck_assert_uint_eq(wal_durable_lsn(w), lsn);
        ck_assert_int_eq(wal_commit(w, lsn), 0); /* already durable: no sync */
    }
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.appends, 100);
    ck_assert_uint_eq(st.commits, 200);
    ck_assert_uint_eq(st.syncs, 100);
    ck_assert_uint_eq(st.writes, 100);
    ck_assert_uint_eq(st.max_commits_per_sync, 1);
    ck_assert_uint_eq(st.segments_created, 1);
    ck_assert_uint_eq(st.bytes, lsn - start);
    ck_assert_uint_gt(st.sync_ns, 0);
    ck_assert_uint_gt(st.wait_ns, 0);
    ck_assert_int_eq(wal_broken(w), 0);
    wal_close(w);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_stats_none)
{
    struct genp g = { tu_seed(4), 3, 16, 64 };
    struct wal_stats st;
    char *dir = tu_mkdtemp("wal-none");
    struct wal *w = tl_open(dir, NULL, 1u << 20, CL_SYNC_NONE, CL_METHOD_FDATASYNC, CL_SEGINIT_ZERO, 0, 0, NULL);
    uint64_t start = wal_segment_start_lsn(0, 1u << 20), lsn = 0, l5 = 0;
    for (uint64_t id = 1; id <= 10; id++) {
        ck_assert_int_eq(tl_txn(w, &g, id, 1, &lsn), 0);
        if (id == 5)
            l5 = lsn;
    }
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.syncs, 0);
    ck_assert_uint_eq(st.commits, 10);
    ck_assert_uint_eq(wal_durable_lsn(w), start);
    /* A flush with sync up to an LSN makes at least that much durable. */
    ck_assert_int_eq(wal_flush(w, l5, 1), 0);
    ck_assert_uint_ge(wal_durable_lsn(w), l5);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    ck_assert_uint_eq(wal_durable_lsn(w), lsn);
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.syncs, 1);
    ck_assert_uint_eq(st.max_commits_per_sync, 10);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0); /* nothing new: no sync */
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.syncs, 1);
    wal_close(w);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_policy_table)
{
    ck_assert_ptr_eq(wal_policy_for(CL_SYNC_NONE), &wal_policy_none);
    ck_assert_ptr_eq(wal_policy_for(CL_SYNC_COMMIT), &wal_policy_commit);
    ck_assert_ptr_eq(wal_policy_for(CL_SYNC_PERIODIC), &wal_policy_periodic);
    ck_assert_ptr_eq(wal_policy_for(CL_SYNC_GROUP), &wal_policy_group);
    ck_assert_int_eq(wal_policy_group.durable, 1);
    ck_assert_int_eq(wal_policy_periodic.durable, 0);
    ck_assert_ptr_eq(wal_policy_for(CL_SYNC_URING), &wal_policy_uring);
    ck_assert_int_eq(wal_policy_commit.durable, 1);
    ck_assert_int_eq(wal_policy_none.durable, 0);
    /* the registry is the one source: every policy's name parses back to
     * it, and the public durability flag is its table's */
    for (int i = 0; i < CL_SYNC_NPOLICIES; i++) {
        const struct wal_policy *p = wal_policy_for((enum cl_sync_policy)i);
        enum cl_sync_policy back;
        ck_assert_ptr_nonnull(p);
        ck_assert_ptr_nonnull(p->commit);
        ck_assert_str_eq(cl_sync_policy_name((enum cl_sync_policy)i), p->name);
        ck_assert_int_eq(cl_sync_policy_parse(p->name, &back), 0);
        ck_assert_int_eq(back, i);
        ck_assert_int_eq(cl_sync_policy_is_durable((enum cl_sync_policy)i), p->durable);
    }
    ck_assert_ptr_null(wal_policy_for(CL_SYNC_NPOLICIES));
    ck_assert_int_eq(cl_sync_policy_is_durable(CL_SYNC_NPOLICIES), -1);
    ck_assert_str_eq(cl_sync_policy_name(CL_SYNC_NPOLICIES), "?");
    char *dir = tu_mkdtemp("wal-pol");
    int rc;
    struct wal *w = tl_open(dir, NULL, SEG + 100, CL_SYNC_NONE, CL_METHOD_FDATASYNC, CL_SEGINIT_ZERO, 0, 0, &rc);
    ck_assert_int_eq(rc, CL_EINVAL);
    ck_assert_ptr_null(w);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_segments_and_retire)
{
    struct genp g = { tu_seed(5), 4, 32, 1500 };
    char *dir = tu_mkdtemp("wal-retire");
    char name[32];
    uint64_t segno = 0, *segs = NULL;
    size_t n = 0;
    struct wal_segment_header h;

    wal_segment_name(name, sizeof name, 0x1aull);
    ck_assert_str_eq(name, "wal-000000000000001a.log");
    ck_assert_int_eq(wal_segment_parse_name(name, &segno), 1);
    ck_assert_uint_eq(segno, 0x1a);
    ck_assert_int_eq(wal_segment_parse_name("wal-000000000000001A.log", &segno), 0);
    ck_assert_int_eq(wal_segment_parse_name("wal-1a.log", &segno), 0);
    ck_assert_int_eq(wal_segment_parse_name("wal-000000000000001a.log.tmp", &segno), 0);
    ck_assert_int_eq(wal_segment_parse_name("data.clp", &segno), 0);

    struct wal *w = tl_open(dir, NULL, SEG, CL_SYNC_NONE, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 2, NULL);
    uint64_t id = 1;
    while (wal_lsn_segno(wal_end_lsn(w), SEG) < 7)
        ck_assert_int_eq(tl_txn(w, &g, id++, 1, NULL), 0);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    /* a stray file the listing must ignore */
    char *stray;
    ck_assert_int_ge(asprintf(&stray, "%s/notes.txt", dir), 0);
    ck_assert_int_eq(tu_write_file(stray, (const uint8_t *)"x", 1), 0);
    free(stray);

    ck_assert_int_eq(wal_list_segments(vfs_posix(), dir, &segs, &n), 0);
    ck_assert_uint_eq(n, 6);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(segs[i], 2 + i);
    free(segs);
    ck_assert_int_eq(wal_read_segment_header(vfs_posix(), dir, 4, &h), 0);
    ck_assert_uint_eq(h.segno, 4);
    ck_assert_uint_eq(h.segment_size, SEG);
    ck_assert_uint_eq(h.db_id, 0x1234);
    ck_assert_uint_eq(h.version, WAL_VERSION);

    ck_assert_int_eq(wal_retire_below(w, 5), 0);
    ck_assert_int_eq(wal_list_segments(vfs_posix(), dir, &segs, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(segs[0], 5);
    free(segs);
    /* the log still reads from the retained part (mid-transaction, so
     * only the records are counted here) */
    struct rb rb;
    tl_read(dir, NULL, SEG, wal_segment_start_lsn(5, SEG), &g, &rb);
    ck_assert_int_eq(rb.rc, 0);
    ck_assert_uint_gt(rb.nrec, 10);
    ck_assert_uint_eq(rb.end_lsn, wal_end_lsn(w));
    rb_free(&rb);
    wal_close(w);

    /* a damaged header: corruption; a foreign file: format */
    char *p = tl_segpath(dir, 6);
    ck_assert_int_eq(tu_flip_byte(p, 20), 0);
    ck_assert_int_eq(wal_read_segment_header(vfs_posix(), dir, 6, &h), CL_ECORRUPT);
    ck_assert_int_eq(tu_flip_byte(p, 2), 0);
    ck_assert_int_eq(wal_read_segment_header(vfs_posix(), dir, 6, &h), CL_EFORMAT);
    free(p);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* The commit policy writes only up to the committing transaction: a record
 * appended behind it is not written by its sync, so it does not ride on
 * it.  The group policy with max_batch writes at most that many bytes past
 * what is written, and never short of the leader's own commit; without
 * it, everything buffered. */
static uint64_t durable_after_first_of_three(enum cl_sync_policy p, uint64_t max_batch, uint64_t *lsns)
{
    struct genp g = { tu_seed(77), 2, 16, 64 };
    char *dir = tu_mkdtemp("wal-upto");
    struct wal_config c = tl_config(dir, NULL, 1u << 20, p, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0);
    struct wal *w = NULL;
    c.opt.max_batch = max_batch;
    ck_assert_int_eq(wal_open(&c, 0, &w), 0);
    for (uint64_t id = 1; id <= 3; id++)
        ck_assert_int_eq(tl_txn(w, &g, id, 0, &lsns[id - 1]), 0);
    ck_assert_int_eq(wal_commit(w, lsns[0]), 0);
    uint64_t d = wal_durable_lsn(w);
    ck_assert_int_eq(wal_commit(w, lsns[2]), 0); /* the rest, as one more batch */
    ck_assert_uint_eq(wal_durable_lsn(w), lsns[2]);
    wal_close(w);
    tu_rmdir(dir);
    free(dir);
    return d;
}

START_TEST(test_write_only_own_batch)
{
    uint64_t l[3];
    ck_assert_uint_eq(durable_after_first_of_three(CL_SYNC_COMMIT, 0, l), l[0]);
    ck_assert_uint_eq(durable_after_first_of_three(CL_SYNC_GROUP, 0, l), l[2]);
    ck_assert_uint_eq(durable_after_first_of_three(CL_SYNC_GROUP, 1, l), l[0]);
    /* room for the first two transactions, not the third */
    uint64_t start = wal_segment_start_lsn(0, 1u << 20);
    ck_assert_uint_eq(durable_after_first_of_three(CL_SYNC_GROUP, l[1] - start, l), l[1]);
    ck_assert_uint_eq(durable_after_first_of_three(CL_SYNC_GROUP, l[2] - start - 1, l), l[1]);
}
END_TEST

START_TEST(test_limits)
{
    char *dir = tu_mkdtemp("wal-limits");
    uint64_t seg = 2u << 20, lsn;
    struct wal *w = tl_open(dir, NULL, seg, CL_SYNC_COMMIT, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 65536, 0, NULL);
    uint8_t *big = malloc(seg);
    for (uint64_t i = 0; i < seg; i++)
        big[i] = (uint8_t)(i * 7);
    /* the largest record a segment takes: header block and a SWITCH aside */
    uint32_t maxv = (uint32_t)(seg - WAL_SEG_HEADER - WAL_REC_HEADER - WAL_REC_HEADER - WAL_PUT_HDR - 1);
    struct wal_op op = { 0, "k", 1, big, maxv + 1 };
    ck_assert_int_eq(wal_append_txn(w, 1, &op, 1, &lsn), CL_ETOOBIG);
    struct wal_op longkey = { 1, big, 70000, NULL, 0 };
    ck_assert_int_eq(wal_append_txn(w, 1, &longkey, 1, &lsn), CL_ETOOBIG);
    ck_assert_int_eq(wal_broken(w), 0);
    /* fits, and is far larger than the 64 KiB buffer; lands in segment 1 */
    struct wal_op small = { 0, "a", 1, "b", 1 };
    ck_assert_int_eq(wal_append_txn(w, 1, &small, 1, &lsn), 0);
    op.vlen = maxv;
    ck_assert_int_eq(wal_append_txn(w, 2, &op, 1, &lsn), 0);
    ck_assert_int_eq(wal_commit(w, lsn), 0);
    ck_assert_uint_eq(wal_lsn_segno(lsn, seg), 2); /* the COMMIT did not fit after it */
    wal_close(w);

    struct wal_reader *r;
    struct wal_record rec;
    const void *k, *v;
    uint32_t kl, vl;
    ck_assert_int_eq(wal_reader_open(vfs_posix(), dir, seg, 0x1234, 0, &r), 0);
    ck_assert_int_eq(wal_reader_next(r, &rec), 1);
    ck_assert_int_eq(rec.type, WAL_REC_PUT);
    ck_assert_int_eq(wal_reader_next(r, &rec), 1);
    ck_assert_int_eq(rec.type, WAL_REC_COMMIT);
    ck_assert_int_eq(wal_reader_next(r, &rec), 1);
    ck_assert_int_eq(rec.type, WAL_REC_PUT);
    ck_assert_uint_eq(rec.lsn, wal_segment_start_lsn(1, seg));
    ck_assert_int_eq(wal_decode_put(&rec, &k, &kl, &v, &vl), 0);
    ck_assert_uint_eq(vl, maxv);
    ck_assert_int_eq(memcmp(v, big, maxv), 0);
    ck_assert_int_eq(wal_reader_next(r, &rec), 1);
    ck_assert_int_eq(rec.type, WAL_REC_COMMIT);
    ck_assert_int_eq(rec.txn_id, 2);
    ck_assert_int_eq(wal_reader_next(r, &rec), 0);
    ck_assert_uint_eq(wal_reader_end_lsn(r), lsn);
    wal_reader_close(r);
    free(big);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_sticky_failure)
{
    uint64_t seed = tu_seed(6);
    struct genp g = { seed, 3, 16, 200 };
    /* fdatasync, then rwf-dsync, whose write is its sync: an injected sync
     * error fails the write itself */
    for (int which = 0; which < 4; which++) {
        char *dir = tu_mkdtemp("wal-sticky");
        struct vfs *fv = vfs_fault_new(vfs_posix());
        enum cl_sync_method m = which < 2 ? CL_METHOD_FDATASYNC : CL_METHOD_RWF_DSYNC;
        struct wal *w = tl_open(dir, fv, SEG, CL_SYNC_COMMIT, m, CL_SEGINIT_ZERO, 0, 0, NULL);
        uint64_t lsn, good = 0;
        for (uint64_t id = 1; id <= 5; id++) {
            ck_assert_int_eq(tl_txn(w, &g, id, 1, &lsn), 0);
            good = lsn;
        }
        if (which % 2 == 0)
            vfs_fault_fail_sync(fv, 1, -EIO);
        else
            vfs_fault_fail_write(fv, 1, -ENOSPC);
        int rc = tl_txn(w, &g, 6, 1, &lsn);
        ck_assert_int_eq(rc, which % 2 == 0 ? -EIO : -ENOSPC);
        ck_assert_int_eq(wal_broken(w), rc);
        ck_assert_uint_eq(wal_durable_lsn(w), good); /* never past a failed sync */
        /* every later call says so, and nothing is retried */
        ck_assert_int_eq(wal_commit(w, lsn), CL_EBROKEN);
        ck_assert_int_eq(tl_txn(w, &g, 7, 0, &lsn), CL_EBROKEN);
        ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), CL_EBROKEN);
        struct wal_stats st;
        wal_get_stats(w, &st);
        ck_assert_uint_eq(st.commits, 5);
        wal_close(w);
        vfs_destroy(fv);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* Crashes at a random operation under each crash model: every acknowledged
 * transaction reads back, nothing is reported corrupt. */
START_TEST(test_crash_recovers_acknowledged)
{
    uint64_t seed = tu_seed(7), iters = tu_iterations(24);
    for (uint64_t it = 0; it < iters; it++) {
        uint64_t s = seed + it, rs = s;
        enum vfs_crash_model model = (enum vfs_crash_model)(it % 3);
        static const enum cl_sync_method ms[] = {CL_METHOD_FDATASYNC, CL_METHOD_FSYNC, CL_METHOD_DSYNC,
                                                 CL_METHOD_RWF_DSYNC};
        enum cl_sync_method m = ms[tu_range(&rs, 4)];
        struct genp g = { s, 4, 40, 1500 };
        char *dir = tu_mkdtemp("wal-crash");
        struct vfs *fv = vfs_fault_new(vfs_posix());
        /* every fourth run under policy none: nothing is promised, but the
         * log must still read back without corruption */
        enum cl_sync_policy pol = it % 4 == 3 ? CL_SYNC_NONE : CL_SYNC_COMMIT;
        struct wal *w = tl_open(dir, fv, SEG, pol, m, CL_SEGINIT_ZERO, 16384, 0, NULL);
        uint64_t acked = 0, id;
        vfs_fault_crash_at(fv, 1 + tu_range(&rs, 400), model, s);
        for (id = 1; id <= 200; id++) {
            if (tl_txn(w, &g, id, 1, NULL) != 0)
                break;
            if (pol == CL_SYNC_COMMIT)
                acked = id;
        }
        wal_close(w);
        vfs_destroy(fv);
        struct rb rb;
        tl_read(dir, NULL, SEG, 0, &g, &rb);
        ck_assert_msg(rb.err[0] == 0, "seed %llu: %s", (unsigned long long)s, rb.err);
        ck_assert_msg(rb.rc == 0, "seed %llu (%s, %s): reader %d at %llu", (unsigned long long)s,
                      vfs_crash_model_name(model), cl_sync_method_name(m), rb.rc, (unsigned long long)rb.bad_lsn);
        ck_assert_msg(rb.ntxn >= acked, "seed %llu (%s, %s): %zu txns read, %llu acknowledged",
                      (unsigned long long)s, vfs_crash_model_name(model), cl_sync_method_name(m), rb.ntxn,
                      (unsigned long long)acked);
        for (size_t i = 0; i < rb.ntxn; i++)
            ck_assert_uint_eq(rb.txn_ids[i], i + 1);
        rb_free(&rb);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* A file layer over the POSIX one whose writes with RWF_DSYNC fail as a
 * kernel that does not know the flag fails them. */
static struct vfs_ops refusing_ops;
static struct vfs refusing_vfs;

static int refusing_pwrite(struct vfs_file *f, const void *buf, size_t len, uint64_t off)
{
    if (f->flags & VFS_O_WRITE_DSYNC)
        return -EOPNOTSUPP;
    return vfs_posix()->ops->pwrite(f, buf, len, off);
}

/* rwf-dsync: where the kernel refuses RWF_DSYNC, wal_open says so at once
 * (CL_ENOTSUP, with the reason), rather than break the log at the first
 * commit; uring_sync=rwf-dsync writes the log as the method does, and
 * makes no sense with the methods that link no sync. */
START_TEST(test_rwf_dsync_probe)
{
    char *dir = tu_mkdtemp("wal-rwf");
    char why[128] = "stale";
    struct wal *w = NULL;
    refusing_ops = *vfs_posix()->ops;
    refusing_ops.pwrite = refusing_pwrite;
    refusing_vfs = (struct vfs){.ops = &refusing_ops, .name = "refusing"};
    struct wal_config c = tl_config(dir, &refusing_vfs, SEG, CL_SYNC_COMMIT, CL_METHOD_RWF_DSYNC, CL_SEGINIT_SPARSE, 0);
    c.why = why;
    c.why_len = sizeof why;
    ck_assert_int_eq(wal_open(&c, 0, &w), CL_ENOTSUP);
    ck_assert_ptr_null(w);
    ck_assert_msg(strstr(why, "rwf-dsync") && strstr(why, "RWF_DSYNC"), "reason: '%s'", why);
    /* the same layer takes the other methods */
    c.opt.method = CL_METHOD_FDATASYNC;
    ck_assert_int_eq(wal_open(&c, 1, &w), 0);
    ck_assert_str_eq(why, "");
    wal_close(w);
    /* the real kernel takes it: every write is a sync */
    struct genp g = { tu_seed(8), 2, 16, 300 };
    c = tl_config(dir, NULL, SEG, CL_SYNC_COMMIT, CL_METHOD_RWF_DSYNC, CL_SEGINIT_SPARSE, 0);
    ck_assert_int_eq(wal_open(&c, 2, &w), 0);
    ck_assert_int_eq(tl_txn(w, &g, 1, 1, NULL), 0);
    struct wal_stats st;
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.syncs, st.writes);
    struct vfs_counters vc;
    vfs_counters_get(vfs_posix(), VFS_CLASS_WAL, &vc);
    ck_assert_uint_gt(vc.dsync_writes, 0);
    wal_close(w);
    c.opt.sync = CL_SYNC_URING;
    c.opt.uring_sync = CL_URING_SYNC_RWF_DSYNC;
    for (int m = CL_METHOD_DSYNC; m <= CL_METHOD_DIRECT; m++) {
        c.opt.method = (enum cl_sync_method)m;
        ck_assert_int_eq(wal_open(&c, 3, &w), CL_EINVAL);
    }
    ck_assert_str_eq(cl_sync_method_name(CL_METHOD_RWF_DSYNC), "rwf-dsync");
    enum cl_sync_method back;
    ck_assert_int_eq(cl_sync_method_parse("rwf-dsync", &back), 0);
    ck_assert_int_eq(back, CL_METHOD_RWF_DSYNC);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

#ifdef CL_INVARIANTS
/* The invariant checks are on in this build and sit where the durable LSN
 * moves: publishing a durable LSN past the written one (W1) aborts at once
 * instead of acknowledging bytes that were never written.  The violation
 * runs in a child process, whose death by SIGABRT is the pass. */
START_TEST(test_invariant_w1_aborts)
{
    char *dir = tu_mkdtemp("wal-inv");
    int status;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct wal *w = tl_open(dir, NULL, SEG, CL_SYNC_NONE, CL_METHOD_FDATASYNC, CL_SEGINIT_ZERO, 0, 0, NULL);
        pthread_mutex_lock(&w->io_mu);
        wal_mark_durable_locked(w, w->written_lsn + WAL_ALIGN, 1);
        _exit(0); /* not reached when the check is on */
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
                  "a durable LSN past the written one was published (status %#x)", status);
    tu_rmdir(dir);
    free(dir);
}
END_TEST
#endif

/* The segment header decoder accepts what the encoder writes and refuses
 * a header, checksum intact, that names a size no log can have (too small
 * for a segment, or not a whole number of header blocks). */
START_TEST(test_segment_header_sizes)
{
    uint8_t hdr[WAL_SEG_HEADER] = {0};
    struct wal_segment_header h;
    wal_segment_header_encode(hdr, 42, 7, 64 * 1024);
    ck_assert_int_eq(wal_segment_header_decode(hdr, sizeof hdr, &h), 0);
    ck_assert_uint_eq(h.db_id, 42);
    ck_assert_uint_eq(h.segno, 7);
    ck_assert_uint_eq(h.segment_size, 64 * 1024);
    uint64_t bad[] = {0, 4096, WAL_MIN_SEGMENT - WAL_SEG_HEADER, WAL_MIN_SEGMENT + 8};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        wal_segment_header_encode(hdr, 42, 7, bad[i]);
        ck_assert_msg(wal_segment_header_decode(hdr, sizeof hdr, &h) == CL_EFORMAT, "size %llu accepted",
                      (unsigned long long)bad[i]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wal_log");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_segment_header_sizes);
    tcase_add_test(tc, test_methods);
    tcase_add_test(tc, test_stats_commit);
    tcase_add_test(tc, test_stats_none);
    tcase_add_test(tc, test_policy_table);
    tcase_add_test(tc, test_segments_and_retire);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_write_only_own_batch);
    tcase_add_test(tc, test_sticky_failure);
    tcase_add_test(tc, test_crash_recovers_acknowledged);
    tcase_add_test(tc, test_rwf_dsync_probe);
#ifdef CL_INVARIANTS
    tcase_add_test(tc, test_invariant_w1_aborts);
#endif
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
