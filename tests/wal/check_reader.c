/* check_reader.c -- the log reader's end-of-log decisions (LevelDB log_test style): truncated tails, bad CRC, bad length, stale records in a reused segment, durable corruption, unsynced holes; and a multi-threaded append+commit run. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endian.h"
#include "testutil.h"
#include "wal.h"
#include "wal_testlib.h"

#define SEG WAL_MIN_SEGMENT

struct logfix {
    char *dir;
    struct genp g;
    size_t ntxn;
    struct rb rb;            /* the intact log, read back */
    uint8_t *orig;           /* segment 0 as written */
    size_t orig_len;
};

/* Writes ntxn txns with the given policy (commit: each synced; none: a sync
 * after txn sync_after only, 0 = never) and reads the intact log back. */
static void fix_make(struct logfix *f, const char *tag, uint64_t seed, enum cl_sync_policy pol,
                     size_t ntxn, uint64_t sync_after, uint32_t maxv)
{
    memset(f, 0, sizeof *f);
    f->dir = tu_mkdtemp(tag);
    f->g = (struct genp){ seed, 4, 24, maxv };
    f->ntxn = ntxn;
    struct wal *w = tl_open(f->dir, NULL, SEG, pol, CL_METHOD_FDATASYNC, CL_SEGINIT_ZERO, 0, 0, NULL);
    for (uint64_t id = 1; id <= ntxn; id++) {
        ck_assert_int_eq(tl_txn(w, &f->g, id, 1, NULL), 0);
        if (id == sync_after)
            ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
    }
    ck_assert_int_eq(wal_flush(w, UINT64_MAX, 0), 0);
    wal_close(w);
    tl_read(f->dir, NULL, SEG, 0, &f->g, &f->rb);
    ck_assert_msg(f->rb.err[0] == 0 && f->rb.rc == 0 && f->rb.ntxn == ntxn, "seed %llu: intact log: %s %d",
                  (unsigned long long)seed, f->rb.err, f->rb.rc);
    char *p = tl_segpath(f->dir, 0);
    ck_assert_int_eq(tu_read_file(p, &f->orig, &f->orig_len), 0);
    free(p);
}

static void fix_restore(struct logfix *f, const uint8_t *bytes)
{
    char *p = tl_segpath(f->dir, 0);
    ck_assert_int_eq(tu_write_file(p, bytes, f->orig_len), 0);
    free(p);
}

static void fix_free(struct logfix *f)
{
    rb_free(&f->rb);
    free(f->orig);
    tu_rmdir(f->dir);
    free(f->dir);
}

/* Index of the first record of txn id in f->rb. */
static size_t first_rec_of(const struct logfix *f, uint64_t id)
{
    for (size_t i = 0; i < f->rb.nrec; i++)
        if (f->rb.recs[i].txn_id == id)
            return i;
    ck_abort_msg("txn %llu not found", (unsigned long long)id);
    return 0;
}

/* The log cut at every byte offset of its last transaction (everything from
 * there zeroed, as a crash that lost the unsynced tail leaves it): the
 * earlier transactions all come back, the cut one never, never corruption. */
START_TEST(test_truncated_tail_every_offset)
{
    uint64_t seed = tu_seed(11), iters = tu_iterations(3);
    for (uint64_t it = 0; it < iters; it++) {
        struct logfix f;
        uint64_t s = seed + it;
        fix_make(&f, "rd-trunc", s, it % 2 ? CL_SYNC_NONE : CL_SYNC_COMMIT, 12, 0, 400);
        size_t first = first_rec_of(&f, f.ntxn);
        const struct rb_rec *last = &f.rb.recs[f.rb.nrec - 1];
        uint64_t from = f.rb.recs[first].lsn, to = last->lsn + WAL_REC_HEADER + last->len;
        uint8_t *buf = malloc(f.orig_len);
        for (uint64_t k = from; k < to; k++) {
            memcpy(buf, f.orig, f.orig_len);
            memset(buf + k, 0, f.orig_len - k);
            fix_restore(&f, buf);
            struct rb rb;
            tl_read(f.dir, NULL, SEG, 0, &f.g, &rb);
            ck_assert_msg(rb.err[0] == 0, "seed %llu cut %llu: %s", (unsigned long long)s,
                          (unsigned long long)k, rb.err);
            ck_assert_msg(rb.rc == 0, "seed %llu cut %llu: reader %d", (unsigned long long)s,
                          (unsigned long long)k, rb.rc);
            /* The record the cut fell in survives only when the bytes cut
             * were zeros already; the log ends at the first damaged one. */
            size_t i = first;
            while (i + 1 < f.rb.nrec && f.rb.recs[i + 1].lsn <= k)
                i++;
            const struct rb_rec *r = &f.rb.recs[i];
            uint64_t rec_end = r->lsn + WAL_REC_HEADER + r->len;
            int damaged = 0, torn = 0;
            for (uint64_t j = k; j < rec_end; j++)
                damaged |= f.orig[j] != 0;
            for (uint64_t j = r->lsn; j < k && j < r->lsn + WAL_REC_HEADER; j++)
                torn |= f.orig[j] != 0;
            size_t nrec = damaged ? i : i + 1;
            uint64_t end = damaged ? r->lsn : i + 1 < f.rb.nrec ? f.rb.recs[i + 1].lsn : wal_align_up(rec_end);
            ck_assert_msg(rb.nrec == nrec && rb.end_lsn == end, "seed %llu cut %llu: %zu records ending at %llu, expected %zu at %llu",
                          (unsigned long long)s, (unsigned long long)k, rb.nrec,
                          (unsigned long long)rb.end_lsn, nrec, (unsigned long long)end);
            ck_assert_uint_eq(rb.ntxn, nrec == f.rb.nrec ? f.ntxn : f.ntxn - 1);
            ck_assert_int_eq(rb.torn, damaged ? torn : 0);
            rb_free(&rb);
        }
        free(buf);
        fix_free(&f);
    }
}
END_TEST

/* A bad CRC in the last record: the log ends before it, torn. */
START_TEST(test_bad_crc_last)
{
    uint64_t seed = tu_seed(12);
    struct logfix f;
    fix_make(&f, "rd-crc", seed, CL_SYNC_COMMIT, 10, 0, 300);
    const struct rb_rec *last = &f.rb.recs[f.rb.nrec - 1];
    for (uint32_t at = 0; at < WAL_REC_HEADER + last->len; at++) {
        uint8_t *buf = malloc(f.orig_len);
        memcpy(buf, f.orig, f.orig_len);
        buf[last->lsn + at] ^= 0x40;
        fix_restore(&f, buf);
        free(buf);
        struct rb rb;
        tl_read(f.dir, NULL, SEG, 0, &f.g, &rb);
        ck_assert_msg(rb.rc == 0, "seed %llu byte %u: reader %d", (unsigned long long)seed, at, rb.rc);
        ck_assert_int_eq(rb.torn, 1);
        ck_assert_uint_eq(rb.end_lsn, last->lsn);
        ck_assert_uint_eq(rb.nrec, f.rb.nrec - 1);
        ck_assert_uint_eq(rb.ntxn, f.ntxn - 1);
        rb_free(&rb);
    }
    fix_free(&f);
}
END_TEST

/* Bad lengths in the last record: past the segment, or merely wrong. */
START_TEST(test_bad_length_last)
{
    uint64_t seed = tu_seed(13);
    static const uint32_t lens[] = { 0xffffffffu, SEG, 0, 3, 5, 8 };
    struct logfix f;
    fix_make(&f, "rd-len", seed, CL_SYNC_COMMIT, 10, 0, 300);
    const struct rb_rec *last = &f.rb.recs[f.rb.nrec - 1];
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint8_t *buf = malloc(f.orig_len);
        memcpy(buf, f.orig, f.orig_len);
        put_le32(buf + last->lsn + 4, lens[i]);
        fix_restore(&f, buf);
        free(buf);
        struct rb rb;
        tl_read(f.dir, NULL, SEG, 0, &f.g, &rb);
        ck_assert_msg(rb.rc == 0, "seed %llu len %u: reader %d", (unsigned long long)seed, lens[i], rb.rc);
        ck_assert_int_eq(rb.torn, 1);
        ck_assert_uint_eq(rb.end_lsn, last->lsn);
        ck_assert_uint_eq(rb.ntxn, f.ntxn - 1);
        rb_free(&rb);
    }
    fix_free(&f);
}
END_TEST

/* A file reused as a later segment still holds its old records past the
 * new ones: their LSNs name the old position, so they are not returned and
 * do not count as durable corruption. */
START_TEST(test_stale_records_in_reused_segment)
{
    uint64_t seed = tu_seed(14);
    struct logfix old, cur;
    fix_make(&old, "rd-stale-old", seed, CL_SYNC_COMMIT, 60, 0, 600);
    ck_assert_uint_gt(old.rb.nrec, 20);
    /* the new log: segment 3 in another directory, a few transactions */
    memset(&cur, 0, sizeof cur);
    cur.dir = tu_mkdtemp("rd-stale-new");
    cur.g = (struct genp){ seed + 1000, 3, 24, 200 };
    struct wal *w = tl_open(cur.dir, NULL, SEG, CL_SYNC_COMMIT, CL_METHOD_FDATASYNC, CL_SEGINIT_ZERO, 0, 3, NULL);
    for (uint64_t id = 1; id <= 4; id++)
        ck_assert_int_eq(tl_txn(w, &cur.g, 100 + id, 1, NULL), 0);
    uint64_t end = wal_end_lsn(w);
    wal_close(w);
    /* what recycling leaves: the old file's bytes beyond the new records */
    char *p = tl_segpath(cur.dir, 3);
    uint8_t *buf;
    size_t len;
    ck_assert_int_eq(tu_read_file(p, &buf, &len), 0);
    ck_assert_uint_eq(len, SEG);
    uint64_t off = wal_lsn_offset(end, SEG);
    memcpy(buf + off, old.orig + off, SEG - off);
    ck_assert_int_eq(tu_write_file(p, buf, len), 0);
    free(buf);
    free(p);

    struct rb rb;
    tl_read(cur.dir, NULL, SEG, wal_segment_start_lsn(3, SEG), &cur.g, &rb);
    ck_assert_msg(rb.err[0] == 0, "seed %llu: %s", (unsigned long long)seed, rb.err);
    ck_assert_int_eq(rb.rc, 0);
    ck_assert_uint_eq(rb.ntxn, 4);
    ck_assert_uint_eq(rb.end_lsn, end);
    for (size_t i = 0; i < rb.nrec; i++)
        ck_assert_uint_gt(rb.recs[i].txn_id, 100);
    rb_free(&rb);
    fix_free(&old);
    tu_rmdir(cur.dir);
    free(cur.dir);
}
END_TEST

/* Damage to a record that had been synced, with valid records after it:
 * corruption, at the damaged record's LSN, whichever byte is hit. */
START_TEST(test_corruption_in_the_middle)
{
    uint64_t seed = tu_seed(15), iters = tu_iterations(40);
    struct logfix f;
    fix_make(&f, "rd-mid", seed, CL_SYNC_COMMIT, 80, 0, 1200);
    ck_assert_uint_ge(f.rb.recs[f.rb.nrec - 1].lsn, SEG); /* spans segments */
    char *p0 = tl_segpath(f.dir, 0);
    for (uint64_t it = 0; it < iters; it++) {
        uint64_t s = seed * 1000 + it;
        /* a record of segment 0 in a transaction before the last one */
        size_t n0 = 0;
        while (n0 < f.rb.nrec && f.rb.recs[n0].lsn < SEG)
            n0++;
        size_t i = (size_t)tu_range(&s, n0);
        if (f.rb.recs[i].txn_id >= f.ntxn)
            continue;
        const struct rb_rec *r = &f.rb.recs[i];
        uint64_t at = r->lsn + tu_range(&s, WAL_REC_HEADER + r->len);
        ck_assert_int_eq(tu_flip_byte(p0, at), 0);
        struct rb rb;
        tl_read(f.dir, NULL, SEG, 0, &f.g, &rb);
        ck_assert_msg(rb.rc == CL_ECORRUPT, "seed %llu: flip at %llu (record %llu): reader %d",
                      (unsigned long long)s, (unsigned long long)at, (unsigned long long)r->lsn, rb.rc);
        ck_assert_uint_eq(rb.bad_lsn, r->lsn);
        ck_assert_uint_eq(rb.nrec, i); /* everything before it, nothing after */
        rb_free(&rb);
        ck_assert_int_eq(tu_flip_byte(p0, at), 0);
    }
    free(p0);
    /* the SWITCH record itself */
    size_t n0 = 0;
    while (f.rb.recs[n0].lsn < SEG)
        n0++;
    const struct rb_rec *lastin0 = &f.rb.recs[n0 - 1];
    uint64_t sw = wal_align_up(lastin0->lsn + WAL_REC_HEADER + lastin0->len);
    uint8_t *buf = malloc(f.orig_len);
    memcpy(buf, f.orig, f.orig_len);
    ck_assert_uint_eq(get_le64(buf + sw + 8), sw);
    ck_assert_int_eq(buf[sw + 36], WAL_REC_SWITCH);
    buf[sw + 36] = 9;
    fix_restore(&f, buf);
    free(buf);
    struct rb rb;
    tl_read(f.dir, NULL, SEG, 0, &f.g, &rb);
    ck_assert_int_eq(rb.rc, CL_ECORRUPT);
    ck_assert_uint_eq(rb.bad_lsn, sw);
    rb_free(&rb);
    fix_free(&f);
}
END_TEST

/* Holes of zeros: in the unsynced tail (later records' sync_lsn is below the
 * hole) the log ends there; below a sync point it is corruption. */
START_TEST(test_hole_unsynced_vs_synced)
{
    uint64_t seed = tu_seed(16);
    struct logfix f;
    fix_make(&f, "rd-hole", seed, CL_SYNC_NONE, 30, 10, 300);
    size_t after = first_rec_of(&f, 20), before = first_rec_of(&f, 5);
    const struct rb_rec *h = &f.rb.recs[after];
    ck_assert_uint_lt(f.rb.recs[f.rb.nrec - 1].sync_lsn, h->lsn);

    uint8_t *buf = malloc(f.orig_len);
    memcpy(buf, f.orig, f.orig_len);
    memset(buf + h->lsn, 0, wal_align_up(WAL_REC_HEADER + h->len));
    fix_restore(&f, buf);
    struct rb rb;
    tl_read(f.dir, NULL, SEG, 0, &f.g, &rb);
    ck_assert_int_eq(rb.rc, 0);
    ck_assert_int_eq(rb.torn, 0);
    ck_assert_uint_eq(rb.end_lsn, h->lsn);
    ck_assert_uint_eq(rb.ntxn, 19);
    ck_assert_uint_eq(rb.nrec, after);
    rb_free(&rb);

    const struct rb_rec *b = &f.rb.recs[before];
    memcpy(buf, f.orig, f.orig_len);
    memset(buf + b->lsn, 0, wal_align_up(WAL_REC_HEADER + b->len));
    fix_restore(&f, buf);
    tl_read(f.dir, NULL, SEG, 0, &f.g, &rb);
    ck_assert_int_eq(rb.rc, CL_ECORRUPT);
    ck_assert_uint_eq(rb.bad_lsn, b->lsn);
    rb_free(&rb);
    free(buf);
    fix_free(&f);
}
END_TEST

START_TEST(test_empty_and_missing)
{
    char *dir = tu_mkdtemp("rd-empty");
    struct wal_reader *r;
    struct wal_record rec;
    uint64_t start = wal_segment_start_lsn(7, SEG);
    ck_assert_int_eq(wal_reader_open(vfs_posix(), dir, SEG, 0x1234, start, &r), 0);
    ck_assert_int_eq(wal_reader_next(r, &rec), 0);
    ck_assert_uint_eq(wal_reader_end_lsn(r), start);
    ck_assert_int_eq(wal_reader_torn(r), 0);
    ck_assert_int_eq(wal_reader_next(r, &rec), 0);
    wal_reader_close(r);
    /* a fresh segment with no records */
    struct wal *w = tl_open(dir, NULL, SEG, CL_SYNC_COMMIT, CL_METHOD_FDATASYNC, CL_SEGINIT_ZERO, 0, 7, NULL);
    wal_close(w);
    ck_assert_int_eq(wal_reader_open(vfs_posix(), dir, SEG, 0x1234, 7 * (uint64_t)SEG, &r), 0);
    ck_assert_int_eq(wal_reader_next(r, &rec), 0);
    ck_assert_uint_eq(wal_reader_end_lsn(r), start);
    ck_assert_int_eq(wal_reader_torn(r), 0);
    wal_reader_close(r);
    /* reading from a segment that is missing while a later one (7) exists:
     * a hole in the log, not an empty log */
    ck_assert_int_eq(wal_reader_open(vfs_posix(), dir, 2 * SEG, 0x1234, wal_segment_start_lsn(3, 2 * SEG), &r), 0);
    ck_assert_int_eq(wal_reader_next(r, &rec), CL_ECORRUPT);
    ck_assert_int_eq(wal_reader_missing(r), 1);
    ck_assert_uint_eq(wal_reader_bad_lsn(r), wal_segment_start_lsn(3, 2 * SEG));
    wal_reader_close(r);
    tu_rmdir(dir);
    free(dir);

    /* decoders check lengths */
    uint8_t pl[16] = { 0 };
    struct wal_record bad = { WAL_REC_PUT, 0, 0, 0, 0, pl, 5 };
    const void *k, *v;
    uint32_t kl, vl, n;
    ck_assert_int_eq(wal_decode_put(&bad, &k, &kl, &v, &vl), CL_ECORRUPT);
    put_le16(pl, 4);
    put_le32(pl + 2, 3);
    bad.len = 6 + 4 + 2;
    ck_assert_int_eq(wal_decode_put(&bad, &k, &kl, &v, &vl), CL_ECORRUPT);
    bad.len = 6 + 4 + 3;
    ck_assert_int_eq(wal_decode_put(&bad, &k, &kl, &v, &vl), 0);
    ck_assert_uint_eq(kl, 4);
    ck_assert_uint_eq(vl, 3);
    ck_assert_int_eq(wal_decode_del(&bad, &k, &kl), CL_ECORRUPT); /* wrong type */
    bad.type = WAL_REC_DEL;
    bad.len = 2 + 4;
    ck_assert_int_eq(wal_decode_del(&bad, &k, &kl), 0);
    bad.len = 2 + 5;
    ck_assert_int_eq(wal_decode_del(&bad, &k, &kl), CL_ECORRUPT);
    bad.type = WAL_REC_COMMIT;
    bad.len = 3;
    ck_assert_int_eq(wal_decode_commit(&bad, &n), CL_ECORRUPT);
    bad.len = 4;
    ck_assert_int_eq(wal_decode_commit(&bad, &n), 0);
}
END_TEST

/* ---- many threads --------------------------------------------------------- */

#define MT_THREADS 8
#define MT_TXNS 60

struct mt_arg {
    struct wal *w;
    pthread_mutex_t *writer_lock;
    const struct genp *g;
    int t;
    int rc;
};

static void *mt_run(void *p)
{
    struct mt_arg *a = p;
    for (uint64_t i = 0; i < MT_TXNS && a->rc == 0; i++) {
        struct gtx t;
        uint64_t id = (uint64_t)a->t * 1000000 + i + 1, lsn;
        gt_make(a->g, id, &t);
        pthread_mutex_lock(a->writer_lock); /* as the engine serialises appends */
        a->rc = wal_append_txn(a->w, id, t.ops, t.n, &lsn);
        pthread_mutex_unlock(a->writer_lock);
        gt_free(&t);
        if (a->rc == 0)
            a->rc = wal_commit(a->w, lsn);
        if (a->rc == 0 && wal_durable_lsn(a->w) < lsn)
            a->rc = -1;
        if (i % 16 == 0)
            (void)wal_end_lsn(a->w);
    }
    return NULL;
}

START_TEST(test_threads_commit)
{
    uint64_t seed = tu_seed(17);
    struct genp g = { seed, 3, 32, 800 };
    char *dir = tu_mkdtemp("rd-mt");
    struct wal *w = tl_open(dir, NULL, SEG, CL_SYNC_COMMIT, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 16384, 0, NULL);
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_t th[MT_THREADS];
    struct mt_arg args[MT_THREADS];
    for (int i = 0; i < MT_THREADS; i++) {
        args[i] = (struct mt_arg){ w, &lock, &g, i, 0 };
        ck_assert_int_eq(pthread_create(&th[i], NULL, mt_run, &args[i]), 0);
    }
    struct wal_stats st;
    for (int i = 0; i < 20; i++)
        wal_get_stats(w, &st); /* concurrent readers of the counters */
    for (int i = 0; i < MT_THREADS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(args[i].rc == 0, "seed %llu thread %d: %d", (unsigned long long)seed, i, args[i].rc);
    }
    wal_get_stats(w, &st);
    ck_assert_uint_eq(st.commits, MT_THREADS * MT_TXNS);
    ck_assert_uint_le(st.syncs, st.commits + st.segments_created);
    ck_assert_uint_ge(st.max_commits_per_sync, 1);
    wal_close(w);

    struct rb rb;
    uint64_t next[MT_THREADS] = { 0 };
    tl_read(dir, NULL, SEG, 0, &g, &rb);
    ck_assert_msg(rb.err[0] == 0, "seed %llu: %s", (unsigned long long)seed, rb.err);
    ck_assert_int_eq(rb.rc, 0);
    ck_assert_uint_eq(rb.ntxn, MT_THREADS * MT_TXNS);
    for (size_t i = 0; i < rb.ntxn; i++) {
        uint64_t t = rb.txn_ids[i] / 1000000, k = rb.txn_ids[i] % 1000000;
        ck_assert_uint_lt(t, MT_THREADS);
        ck_assert_uint_eq(k, ++next[t]); /* each thread's txns in its order */
    }
    rb_free(&rb);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wal_reader");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_truncated_tail_every_offset);
    tcase_add_test(tc, test_bad_crc_last);
    tcase_add_test(tc, test_bad_length_last);
    tcase_add_test(tc, test_stale_records_in_reused_segment);
    tcase_add_test(tc, test_corruption_in_the_middle);
    tcase_add_test(tc, test_hole_unsynced_vs_synced);
    tcase_add_test(tc, test_empty_and_missing);
    tcase_add_test(tc, test_threads_commit);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
