/*
 * check_segments.c -- where the log's segments come from: recycling
 * (renamed in place, durably, within a bounded pool, their old records
 * never read back), the prealloc thread (start, stop, failure), and what
 * the statistics say about both.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "vfs_fault.h"
#include "wal_testlib.h"

#define SEG (64u * 1024u)

static struct wal *open_log_ex(const char *dir, struct vfs *v, enum cl_segment_policy segs, uint32_t recycle_max,
                               uint32_t prealloc, uint64_t start, int cold)
{
    struct wal_config c = {0};
    struct wal *w = NULL;
    c.vfs = v ? v : vfs_posix();
    c.dir = dir;
    c.db_id = 0x1234;
    c.segment_size = SEG;
    cl_options_init(&c.opt);
    c.opt.sync = CL_SYNC_COMMIT;
    c.opt.method = CL_METHOD_FDATASYNC;
    c.opt.segment_init = CL_SEGINIT_ZERO;
    c.opt.segments = segs;
    if (recycle_max)
        c.opt.recycle_max = recycle_max;
    c.opt.prealloc = prealloc;
    c.opt.cold_recycle = cold;
    int rc = wal_open(&c, start, &w);
    ck_assert_msg(rc == 0, "wal_open: %s", cl_strerror(rc));
    return w;
}

static struct wal *open_log(const char *dir, struct vfs *v, enum cl_segment_policy segs, uint32_t recycle_max,
                            uint32_t prealloc, uint64_t start)
{
    return open_log_ex(dir, v, segs, recycle_max, prealloc, start, 0);
}

static const struct genp G = {.seed = 77, .maxops = 4, .maxk = 32, .maxv = 900};

/* Commits transactions from *id on until the writer is in segment target. */
static void fill_to(struct wal *w, uint64_t *id, uint64_t target)
{
    while (wal_lsn_segno(wal_end_lsn(w), SEG) < target) {
        ck_assert_int_eq(tl_txn(w, &G, (*id)++, 1, NULL), 0);
    }
}

static uint64_t ino_of(const char *dir, uint64_t segno, uint64_t *size)
{
    struct stat st;
    char *p = tl_segpath(dir, segno);
    int rc = stat(p, &st);
    free(p);
    if (rc)
        return 0;
    if (size)
        *size = (uint64_t)st.st_size;
    return (uint64_t)st.st_ino;
}

static size_t count_segments(const char *dir, uint64_t above)
{
    uint64_t *s = NULL;
    size_t n = 0, k = 0;
    ck_assert_int_eq(wal_list_segments(vfs_posix(), dir, &s, &n), 0);
    for (size_t i = 0; i < n; i++)
        k += s[i] > above;
    free(s);
    return k;
}

/* A retired segment becomes a future one: the same file (inode), the same
 * size, a header naming its new number; what is over the pool's limit is
 * deleted. */
START_TEST(test_recycle_renames_in_place)
{
    char *dir = tu_mkdtemp("seg");
    uint64_t id = 1, ino[8], size = 0;
    struct wal *w = open_log(dir, NULL, CL_SEGMENTS_RECYCLE, 2, 0, 1);
    struct wal_stats st;

    fill_to(w, &id, 5); /* segments 1..4 full, the writer in 5 */
    for (uint64_t s = 1; s <= 4; s++)
        ck_assert((ino[s] = ino_of(dir, s, NULL)) != 0);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    ck_assert_int_eq(wal_retire_below(w, 5), 0);
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.segments_recycled, 2); /* the pool holds at most 2 */
    ck_assert_uint_eq(st.segments_removed, 2);
    for (uint64_t s = 1; s <= 4; s++)
        ck_assert_uint_eq(ino_of(dir, s, NULL), 0);
    /* The oldest retired files became segments 6 and 7, same inode, same size. */
    ck_assert_uint_eq(ino_of(dir, 6, &size), ino[1]);
    ck_assert_uint_eq(size, SEG);
    ck_assert_uint_eq(ino_of(dir, 7, &size), ino[2]);
    ck_assert_uint_eq(size, SEG);
    struct wal_segment_header h;
    ck_assert_int_eq(wal_read_segment_header(vfs_posix(), dir, 6, &h), 0);
    ck_assert_uint_eq(h.segno, 6);
    ck_assert_uint_eq(count_segments(dir, 5), 2);

    /* The writer goes on into them without creating files. */
    uint64_t created = st.segments_created;
    fill_to(w, &id, 8);
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.segments_reused, 2);
    ck_assert_uint_eq(st.segments_created, created + 1); /* segment 8: the pool was empty */
    ck_assert_uint_eq(st.segment_switches, 7);
    ck_assert_uint_eq(ino_of(dir, 6, &size), ino[1]);
    ck_assert_uint_eq(size, SEG); /* written in place, never extended */
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    wal_close(w);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* The records of a recycled file's earlier life are never read back, and
 * the log's end on them is not called torn. */
START_TEST(test_recycle_stale_records_rejected)
{
    char *dir = tu_mkdtemp("seg");
    uint64_t id = 1;
    struct wal *w = open_log(dir, NULL, CL_SEGMENTS_RECYCLE, 4, 0, 1);
    struct rb rb;

    fill_to(w, &id, 4);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    ck_assert_int_eq(wal_retire_below(w, 4), 0); /* 1..3 become 5..7, full of old records */
    ck_assert_uint_eq(count_segments(dir, 4), 3);
    uint64_t mid = wal_lsn_segno(wal_end_lsn(w), SEG);
    fill_to(w, &id, 5);
    /* a few transactions into segment 5, far short of its old contents */
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(tl_txn(w, &G, id++, 1, NULL), 0);
    uint64_t end = wal_end_lsn(w);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    wal_close(w);

    tl_read(dir, NULL, SEG, wal_segment_start_lsn(mid, SEG), &G, &rb);
    ck_assert_msg(!rb.err[0], "%s", rb.err);
    ck_assert_int_eq(rb.rc, 0);
    ck_assert_uint_eq(rb.end_lsn, end);
    ck_assert_int_eq(rb.torn, 0);
    ck_assert_uint_eq(rb.partial, 0);
    ck_assert_uint_eq(rb.txn_ids[rb.ntxn - 1], id - 1);
    for (size_t i = 0; i < rb.nrec; i++)
        ck_assert_uint_lt(rb.recs[i].lsn, end);
    rb_free(&rb);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* The rename is durable when retiring returns: a power failure right
 * after it (dropping every unsynced directory change) keeps the new name. */
START_TEST(test_recycle_rename_durable)
{
    char *dir = tu_mkdtemp("seg");
    struct vfs *fault = vfs_fault_new(vfs_posix());
    uint64_t id = 1;
    struct wal *w = open_log(dir, fault, CL_SEGMENTS_RECYCLE, 4, 0, 1);

    fill_to(w, &id, 3);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    ck_assert_int_eq(wal_retire_below(w, 3), 0);
    ck_assert_int_eq(vfs_fault_crash(fault, VFS_CRASH_DROP, 1), 0);
    wal_close(w);
    vfs_destroy(fault);
    ck_assert_uint_eq(ino_of(dir, 1, NULL), 0);
    ck_assert_uint_eq(ino_of(dir, 2, NULL), 0);
    ck_assert(ino_of(dir, 4, NULL) != 0);
    ck_assert(ino_of(dir, 5, NULL) != 0);
    struct wal_segment_header h;
    ck_assert_int_eq(wal_read_segment_header(vfs_posix(), dir, 5, &h), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A file a crash cut short while it was being created is not recycled
 * (using it would extend it): it is deleted. */
START_TEST(test_recycle_skips_short_file)
{
    char *dir = tu_mkdtemp("seg");
    uint64_t id = 1;
    struct wal *w = open_log(dir, NULL, CL_SEGMENTS_RECYCLE, 4, 0, 3);
    char *p = tl_segpath(dir, 1);
    ck_assert_int_eq(tu_write_file(p, (const uint8_t *)"short", 5), 0);
    free(p);
    fill_to(w, &id, 4);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    ck_assert_int_eq(wal_retire_below(w, 4), 0); /* 1 (short) and 3 (whole) */
    struct wal_stats st;
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.segments_recycled, 1);
    ck_assert_uint_eq(st.segments_removed, 1);
    wal_close(w);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Waits until n segment files have been made (ready: created, synced). */
static void wait_for_created(struct wal *w, uint64_t n)
{
    struct wal_stats st;
    for (int i = 0; i < 500; i++) {
        wal_get_stats(w, &st);
        if (st.segments_created >= n)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    ck_abort_msg("the prealloc thread made %" PRIu64 " segments, not %" PRIu64, st.segments_created, n);
}

/* The prealloc thread keeps N segments ready; the writer then switches
 * without waiting; closing stops the thread. */
START_TEST(test_prealloc_keeps_segments_ready)
{
    char *dir = tu_mkdtemp("seg");
    uint64_t id = 1;
    struct wal *w = open_log(dir, NULL, CL_SEGMENTS_FRESH, 0, 3, 1);
    struct wal_stats st;

    wait_for_created(w, 1 + 3); /* 2, 3, 4 */
    ck_assert_uint_eq(count_segments(dir, 1), 3);
    for (uint64_t s = 2; s <= 6; s++) {
        fill_to(w, &id, s);
        wait_for_created(w, 1 + 3 + (s - 1));
        ck_assert_uint_eq(count_segments(dir, s), 3);
    }
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.segment_switches, 5);
    ck_assert_uint_eq(st.segment_waits, 0);
    ck_assert_uint_eq(st.segments_created, 1 + 5 + 3);
    ck_assert_int_eq(st.prealloc_error, 0);
    wal_close(w);

    /* stopped while it may be preparing: no hang, nothing leaks */
    char *dir2 = tu_mkdtemp("seg");
    for (int i = 0; i < 5; i++) {
        w = open_log(dir2, NULL, CL_SEGMENTS_FRESH, 0, 8, 100 + 20 * (uint64_t)i);
        wal_close(w);
    }
    tu_rmdir(dir2);
    free(dir2);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A file layer that fails creating one chosen segment file once. */
struct failing_vfs {
    struct vfs v;
    struct vfs *base;
    char path[512];
    int failed;
};

static int failing_open(struct vfs *v, const char *path, unsigned flags, enum vfs_class cls, struct vfs_file **out)
{
    struct failing_vfs *f = (struct failing_vfs *)v;
    if ((flags & VFS_O_CREATE) && strcmp(path, f->path) == 0 && !__atomic_exchange_n(&f->failed, 1, __ATOMIC_ACQ_REL))
        return -ENOSPC;
    return f->base->ops->open(f->base, path, flags, cls, out);
}

/* Waits until at least n segment files exist above segno (the pool). */
static void wait_for_pool(const char *dir, uint64_t segno, size_t n)
{
    for (int i = 0; i < 500; i++) {
        if (count_segments(dir, segno) >= n)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    ck_abort_msg("%zu segments above %" PRIu64 ", not %zu", count_segments(dir, segno), segno, n);
}

/* Recycling with the prealloc thread: the thread recycles what the
 * checkpoint retired before it creates anything fresh, so after the first
 * checkpoint at least 90% of the switches go into a recycled file (the
 * thread's eager fresh files used to take about half of them). */
START_TEST(test_prealloc_recycles_first)
{
    char *dir = tu_mkdtemp("seg");
    uint64_t id = 1;
    struct wal *w = open_log(dir, NULL, CL_SEGMENTS_RECYCLE, 4, 2, 1);
    struct wal_stats st0, st;
    wait_for_pool(dir, 1, 2);
    uint64_t s = 1;
    for (; s < 5; s++) {
        fill_to(w, &id, s + 1);
        wait_for_pool(dir, s + 1, 2);
    }
    /* a checkpoint every 4 segments retires the 4 below the writer */
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    ck_assert_int_eq(wal_retire_below(w, s), 0);
    wal_get_stats(w, &st0);
    for (int cycle = 0; cycle < 10; cycle++) {
        for (int k = 0; k < 4; k++, s++) {
            fill_to(w, &id, s + 1);
            wait_for_pool(dir, s + 1, 2);
        }
        ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
        ck_assert_int_eq(wal_retire_below(w, s), 0);
    }
    wal_get_stats(w, &st);
    uint64_t switches = st.segment_switches - st0.segment_switches;
    uint64_t reused = st.segments_reused - st0.segments_reused;
    ck_assert_uint_eq(switches, 40);
    ck_assert_msg(reused * 10 >= switches * 9, "%" PRIu64 " of %" PRIu64 " switches used a recycled segment",
                  reused, switches);
    ck_assert_int_eq(st.prealloc_error, 0);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    wal_close(w);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* When the prealloc thread fails it stops and says why; the writer then
 * prepares the segment itself and nothing is lost. */
START_TEST(test_prealloc_failure_is_reported)
{
    char *dir = tu_mkdtemp("seg");
    static struct vfs_ops ops;
    struct failing_vfs fv;
    uint64_t id = 1;

    ops = *vfs_posix()->ops;
    ops.open = failing_open;
    ops.destroy = NULL;
    memset(&fv, 0, sizeof fv);
    fv.v.ops = &ops;
    fv.v.name = "failing";
    fv.base = vfs_posix();
    char *p = tl_segpath(dir, 4);
    snprintf(fv.path, sizeof fv.path, "%s", p);
    free(p);

    struct wal *w = open_log(dir, &fv.v, CL_SEGMENTS_FRESH, 0, 2, 1);
    wait_for_created(w, 1 + 2); /* 2 and 3 ready; the thread waits */
    fill_to(w, &id, 2);         /* the writer takes 2: the thread tries 4, and fails */
    for (int i = 0; i < 200; i++) {
        struct wal_stats st;
        wal_get_stats(w, &st);
        if (st.prealloc_error)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fill_to(w, &id, 6);
    struct wal_stats st;
    wal_get_stats(w, &st);
    ck_assert_int_eq(st.prealloc_error, -ENOSPC);
    ck_assert_uint_ge(st.segment_waits, 2); /* 4 and 5, prepared by the writer */
    ck_assert_int_eq(wal_broken(w), 0);
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    wal_close(w);
    struct rb rb;
    tl_read(dir, NULL, SEG, wal_segment_start_lsn(1, SEG), &G, &rb);
    ck_assert_msg(!rb.err[0], "%s", rb.err);
    ck_assert_uint_eq(rb.ntxn, id - 1);
    rb_free(&rb);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A backend that counts the page-cache drops it is asked for. */
struct dropping_vfs {
    struct vfs v;
    struct vfs *base;
    int drops;
};
static struct dropping_vfs *dropping;

static int dropping_drop(struct vfs_file *f)
{
    __atomic_add_fetch(&dropping->drops, 1, __ATOMIC_RELAXED);
    return vfs_posix()->ops->drop_cache(f);
}

/* The pages of segment segno in the page cache (mincore), of its total. */
static size_t resident_pages(const char *dir, uint64_t segno, size_t *total)
{
    char *p = tl_segpath(dir, segno);
    int fd = open(p, O_RDONLY);
    free(p);
    ck_assert_int_ge(fd, 0);
    long pg = sysconf(_SC_PAGESIZE);
    size_t n = (SEG + (size_t)pg - 1) / (size_t)pg, k = 0;
    unsigned char vec[SEG / 512];
    void *m = mmap(NULL, SEG, PROT_READ, MAP_SHARED, fd, 0);
    ck_assert(m != MAP_FAILED);
    ck_assert_int_eq(mincore(m, SEG, vec), 0);
    for (size_t i = 0; i < n; i++)
        k += vec[i] & 1;
    munmap(m, SEG);
    close(fd);
    *total = n;
    return k;
}

/* cold_recycle: a retired segment leaves the page cache when it is
 * recycled -- one drop per recycled file, none otherwise, and (where the
 * page cache is not the file itself, as on tmpfs) none of its pages
 * resident afterwards, while a warm recycle keeps them. */
START_TEST(test_cold_recycle_drops_pages)
{
    static struct vfs_ops ops;
    static struct dropping_vfs dv;
    struct statfs sf;

    ops = *vfs_posix()->ops;
    ops.drop_cache = dropping_drop;
    ops.destroy = NULL;
    memset(&dv, 0, sizeof dv);
    dv.v.ops = &ops;
    dv.v.name = "dropping";
    dv.base = vfs_posix();
    dropping = &dv;
    for (int cold = 0; cold <= 1; cold++) {
        char *dir = tu_mkdtemp("seg");
        uint64_t id = 1;
        struct wal_stats st;
        struct wal *w = open_log_ex(dir, &dv.v, CL_SEGMENTS_RECYCLE, 2, 0, 1, cold);
        dv.drops = 0;
        fill_to(w, &id, 5);
        ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
        ck_assert_int_eq(wal_retire_below(w, 5), 0);
        wal_get_stats(w, &st);
        ck_assert_uint_eq(st.segments_recycled, 2);
        ck_assert_int_eq(dv.drops, cold ? 2 : 0);
        size_t total, res = resident_pages(dir, 6, &total);
        int in_memory = statfs(dir, &sf) == 0 && (sf.f_type == 0x01021994 || sf.f_type == 0x858458f6);
        if (cold && !in_memory)
            ck_assert_msg(res == 0, "cold: %zu of %zu pages of the recycled segment are cached", res, total);
        else if (!in_memory)
            ck_assert_msg(res > total / 2, "warm: %zu of %zu pages of the recycled segment are cached", res, total);
        /* and the log reads back whole across the reused files */
        fill_to(w, &id, 8);
        wal_get_stats(w, &st);
        ck_assert_uint_eq(st.segments_reused, 2);
        ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
        wal_close(w);
        tu_rmdir(dir);
        free(dir);
    }
    dropping = NULL;
}
END_TEST

/* Without the prealloc thread or a recycled segment, the writer prepares
 * each segment while the commits wait, and the statistics say so. */
START_TEST(test_fresh_switch_waits_counted)
{
    char *dir = tu_mkdtemp("seg");
    uint64_t id = 1;
    struct wal *w = open_log(dir, NULL, CL_SEGMENTS_FRESH, 0, 0, 1);
    fill_to(w, &id, 4);
    struct wal_stats st;
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.segment_switches, 3);
    ck_assert_uint_eq(st.segment_waits, 3);
    ck_assert_uint_gt(st.segment_wait_ns, 0);
    ck_assert_uint_eq(st.segments_created, 4);
    ck_assert_uint_eq(count_segments(dir, 4), 0);
    wal_close(w);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("segments");
    TCase *tc = tcase_create("segments");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_recycle_renames_in_place);
    tcase_add_test(tc, test_recycle_stale_records_rejected);
    tcase_add_test(tc, test_recycle_rename_durable);
    tcase_add_test(tc, test_recycle_skips_short_file);
    tcase_add_test(tc, test_prealloc_keeps_segments_ready);
    tcase_add_test(tc, test_prealloc_failure_is_reported);
    tcase_add_test(tc, test_prealloc_recycles_first);
    tcase_add_test(tc, test_fresh_switch_waits_counted);
    tcase_add_test(tc, test_cold_recycle_drops_pages);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
