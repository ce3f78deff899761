/*
 * check_inspect.c -- cl_inspect (behind `commitlab inspect --verify`): clean
 * after a clean close, clean after a simulated crash and reopen, and a
 * flipped byte in a data page or in a durable log record is found and
 * named; a close without its checkpoint (no_final_checkpoint) leaves the
 * log for inspect to read and the next open to recover.
 */
#include <check.h>
#include <fcntl.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commitlab.h"
#include "engine_internal.h"
#include "testutil.h"
#include "vfs.h"
#include "vfs_fault.h"

static void fill(struct cl_db *db, int from, int to)
{
    char k[32], v[200];
    for (int i = from; i < to; i++) {
        struct cl_txn *t;
        snprintf(k, sizeof k, "key%06d", i);
        memset(v, 'a' + i % 26, sizeof v);
        ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
        ck_assert_int_eq(cl_put(t, k, strlen(k), v, sizeof v), 0);
        ck_assert_int_eq(cl_commit(t), 0);
    }
}

static void opts(struct cl_options *o)
{
    cl_options_init(o);
    o->segment_size = 64 * 1024;
    o->cache_size = 32 * 4096;
    o->checkpoint_bytes = 0;
}

START_TEST(test_clean_close_verifies)
{
    char *dir = tu_mkdtemp("inspect");
    struct cl_options o;
    struct cl_db *db;
    struct cl_inspect in;

    opts(&o);
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    fill(db, 0, 500);
    ck_assert_int_eq(cl_close(db), 0);
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), 0);
    ck_assert_int_eq(in.corrupt, CL_CORRUPT_NONE);
    ck_assert_uint_eq(in.nentries, 500);
    ck_assert_uint_gt(in.pages_checked, 10);
    ck_assert_uint_eq(in.commit_records, 0); /* a clean close leaves no log after the checkpoint */

    /* One flipped byte inside the root page is found and named. */
    char path[4096];
    snprintf(path, sizeof path, "%s/data.clp", dir);
    ck_assert_int_eq(tu_flip_byte(path, in.root * in.page_size + 100), 0);
    uint64_t root = in.root;
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), CL_ECORRUPT);
    ck_assert_int_eq(in.corrupt, CL_CORRUPT_PAGE);
    ck_assert_uint_eq(in.bad_page, root);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_crash_then_reopen_verifies)
{
    char *dir = tu_mkdtemp("inspect");
    struct cl_options o;
    struct cl_db *db;
    struct cl_inspect in;
    struct vfs *fault = vfs_fault_new(vfs_posix());

    opts(&o);
    ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &db, NULL), 0);
    fill(db, 0, 300);
    ck_assert_int_eq(cl_checkpoint(db), 0);
    fill(db, 300, 400);
    ck_assert_int_eq(vfs_fault_crash(fault, VFS_CRASH_TORN, 3), 0);
    cl_close(db);
    vfs_destroy(fault);

    /* Before reopening: the log after the checkpoint holds the 100 commits. */
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), 0);
    ck_assert_uint_eq(in.commit_records, 100);
    ck_assert_uint_eq(in.put_records, 100);

    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(cl_close(db), 0);
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), 0);
    ck_assert_uint_eq(in.nentries, 400);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* n commits in a fresh database in dir, left in its log: the power fails
 * (nothing unsynced is lost: every commit was synced) before the close
 * could checkpoint them. */
static void db_with_log(const char *dir, int n)
{
    struct cl_options o;
    struct cl_db *db;
    struct vfs *fault = vfs_fault_new(vfs_posix());
    opts(&o);
    ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &db, NULL), 0);
    fill(db, 0, n);
    ck_assert_int_eq(vfs_fault_crash(fault, VFS_CRASH_DROP, 1), 0);
    cl_close(db);
    vfs_destroy(fault);
}

struct seglist {
    uint64_t segno[16];
    int n;
    uint64_t records, commits, last_next_lsn, bad_order;
};

static void on_segment(void *arg, const struct cl_inspect_segment *seg)
{
    struct seglist *l = arg;
    ck_assert(seg->header_ok);
    if (l->n < 16)
        l->segno[l->n++] = seg->segno;
}

/* Records come in LSN order, each ending where the next begins. */
static void on_record(void *arg, const struct cl_inspect_record *rec)
{
    struct seglist *l = arg;
    ck_assert(!rec->malformed);
    if (l->records && rec->lsn != l->last_next_lsn)
        l->bad_order++;
    l->records++;
    l->commits += rec->type == CL_RECORD_COMMIT;
    if (rec->type == CL_RECORD_PUT)
        ck_assert_uint_eq(rec->value_len, 200);
    l->last_next_lsn = rec->next_lsn;
}

/* A flipped byte in an early, durable log record followed by later records
 * is corruption, reported with its LSN, not a silently shorter log. */
START_TEST(test_corrupt_log_record_named)
{
    char *dir = tu_mkdtemp("inspect");
    struct cl_options o;
    struct cl_db *db;
    struct cl_inspect in;
    struct seglist segs = {0};

    opts(&o);
    db_with_log(dir, 50);

    struct cl_inspect_visitor visit = {.segment = on_segment, .record = on_record, .arg = &segs};
    ck_assert_int_eq(cl_inspect(dir, 0, &in, &visit), 0);
    ck_assert_int_eq(segs.n, 1);
    ck_assert_uint_eq(in.commit_records, 50);
    ck_assert_uint_eq(segs.commits, 50);
    ck_assert_uint_eq(segs.records, 100); /* a put and a commit each */
    ck_assert_uint_eq(segs.bad_order, 0);
    ck_assert_uint_eq(segs.last_next_lsn, in.end_lsn);
    ck_assert_msg(strstr(in.end_why, "zeros at LSN"), "end_why: %s", in.end_why);
    /* The first record of the log starts at the checkpoint LSN. */
    char path[4096];
    snprintf(path, sizeof path, "%s/wal-%016" PRIx64 ".log", dir, segs.segno[0]);
    uint64_t off = in.checkpoint_lsn % in.wal_segment_size;
    ck_assert_int_eq(tu_flip_byte(path, off + 44), 0);
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), CL_ECORRUPT);
    ck_assert_int_eq(in.corrupt, CL_CORRUPT_LOG);
    ck_assert_uint_eq(in.bad_lsn, in.checkpoint_lsn);
    /* The explanation names the failed check and the record that proves
     * the damaged one had been durable. */
    ck_assert_msg(strstr(in.end_why, "CORRUPT at LSN") && strstr(in.end_why, "checksum does not match") &&
                      strstr(in.end_why, "sync_lsn"),
                  "end_why: %s", in.end_why);
    /* Opening refuses too, rather than dropping acknowledged commits. */
    struct cl_recovery_info info;
    ck_assert_int_eq(cl_open(dir, &o, &db, &info), CL_ECORRUPT);
    ck_assert_uint_eq(info.corrupt_lsn, in.checkpoint_lsn);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A record begun at the end of the log and never finished is a torn tail:
 * inspect says so, names the check it fails, and the database opens with
 * every commit before it. */
START_TEST(test_torn_tail_explained)
{
    char *dir = tu_mkdtemp("inspect");
    struct cl_options o;
    struct cl_db *db;
    struct cl_inspect in;
    struct seglist segs = {0};
    struct cl_inspect_visitor visit = {.segment = on_segment, .arg = &segs};

    opts(&o);
    db_with_log(dir, 20);
    ck_assert_int_eq(cl_inspect(dir, 0, &in, &visit), 0);
    ck_assert_int_eq(in.torn_tail, 0);
    uint64_t end = in.end_lsn;

    /* A header that says "a PUT of 100 bytes begins here" and a checksum
     * that cannot match: what a write cut short leaves. */
    uint8_t hdr[40] = {0xde, 0xad, 0xbe, 0xef, 100};
    uint64_t segno = end / in.wal_segment_size;
    for (int i = 0; i < 8; i++)
        hdr[8 + i] = (uint8_t)(end >> (8 * i));
    for (int i = 0; i < 4; i++)
        hdr[32 + i] = (uint8_t)(segno >> (8 * i)); /* the incarnation: this segment */
    hdr[36] = 1;                                   /* a PUT */
    char path[4096];
    snprintf(path, sizeof path, "%s/wal-%016" PRIx64 ".log", dir, segs.segno[segs.n - 1]);
    int fd = open(path, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, hdr, sizeof hdr, (off_t)(end % in.wal_segment_size)), (ssize_t)sizeof hdr);
    close(fd);

    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), 0);
    ck_assert_int_eq(in.torn_tail, 1);
    ck_assert_uint_eq(in.end_lsn, end);
    char want[64];
    snprintf(want, sizeof want, "torn tail at LSN %" PRIu64, end);
    ck_assert_msg(strstr(in.end_why, want) && strstr(in.end_why, "checksum does not match"), "end_why: %s",
                  in.end_why);
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(cl_close(db), 0);
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), 0);
    ck_assert_uint_eq(in.nentries, 20);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

static void count_ok(void *arg, int rc)
{
    ck_assert_int_eq(rc, 0);
    ++*(int *)arg;
}

/* no_final_checkpoint: cl_close leaves the log after the last checkpoint
 * as it is -- written and synced, even under the none policy, whose
 * commits are only buffered -- so inspect lists its records; the next
 * open recovers them as after a crash, and a close without the option
 * checkpoints them away. */
START_TEST(test_close_without_checkpoint_keeps_log)
{
    const enum cl_sync_policy pols[] = {CL_SYNC_COMMIT, CL_SYNC_NONE};
    for (size_t p = 0; p < sizeof pols / sizeof *pols; p++) {
        char *dir = tu_mkdtemp("inspect");
        struct cl_options o;
        struct cl_db *db;
        struct cl_inspect in;
        struct cl_recovery_info info;
        struct seglist l = {0};
        struct cl_inspect_visitor visit = {.record = on_record, .arg = &l};
        int acked = 0;

        opts(&o);
        o.sync = pols[p];
        o.no_final_checkpoint = 1;
        ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
        fill(db, 0, 100);
        struct cl_txn *t; /* one more, acknowledged by its callback */
        char v[200];
        memset(v, 'z', sizeof v);
        ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
        ck_assert_int_eq(cl_put(t, "async", 5, v, sizeof v), 0);
        ck_assert_int_eq(cl_commit_async(t, count_ok, &acked), 0);
        ck_assert_int_eq(cl_close(db), 0);
        ck_assert_int_eq(acked, 1);

        ck_assert_int_eq(cl_inspect(dir, 1, &in, &visit), 0);
        ck_assert_uint_eq(in.nentries, 0); /* the checkpoint of the open that created it */
        ck_assert_uint_eq(in.commit_records, 101);
        ck_assert_uint_eq(l.commits, 101);
        ck_assert_uint_eq(l.bad_order, 0);
        ck_assert(!in.torn_tail);

        cl_options_init(&o); /* the default: cl_close checkpoints */
        o.segment_size = 64 * 1024;
        ck_assert_int_eq(cl_open(dir, &o, &db, &info), 0);
        ck_assert_uint_eq(info.txns_replayed, 101);
        ck_assert_uint_eq(info.txns_discarded, 0);
        ck_assert_int_eq(cl_close(db), 0);
        ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), 0);
        ck_assert_uint_eq(in.nentries, 101);
        ck_assert_uint_eq(in.commit_records, 0);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("inspect");
    TCase *tc = tcase_create("verify");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_clean_close_verifies);
    tcase_add_test(tc, test_crash_then_reopen_verifies);
    tcase_add_test(tc, test_corrupt_log_record_named);
    tcase_add_test(tc, test_torn_tail_explained);
    tcase_add_test(tc, test_close_without_checkpoint_keeps_log);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
