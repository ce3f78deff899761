/* check_uring.c -- the uring sync policy: round trips under each method, many committers, acknowledgement never ahead of the sync that covers it (out-of-order completions), short writes resubmitted, EIO mid-batch, and seeded crashes.  Exits 77 where io_uring is unavailable. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endian.h"
#include "testutil.h"
#include "vfs_fault.h"
#include "wal.h"
#include "wal_testlib.h"

#define SEG WAL_MIN_SEGMENT
#define BIGSEG (8u << 20) /* one segment: no switch */
#define SPY_SPAN (8u << 20) /* the spy follows the log's first 8 MiB of LSNs */
#define COMMIT_REC 48u    /* wal_align_up(WAL_REC_HEADER + WAL_COMMIT_LEN) */

/* The sync methods as these tests take them, and one more: fdatasync with
 * uring_sync=rwf-dsync (the chain's write carries RWF_DSYNC in place of a
 * linked sync). */
#define M_URING_RWF ((enum cl_sync_method)(CL_METHOD_RWF_DSYNC + 1))

static const char *mname(enum cl_sync_method m)
{
    return m == M_URING_RWF ? "uring_sync=rwf-dsync" : cl_sync_method_name(m);
}

static struct wal *u_open(const char *dir, struct vfs *v, uint64_t seg, enum cl_sync_method m,
                          enum cl_segment_init init, size_t bufsz, uint32_t depth, int *rcp)
{
    struct wal_config c = tl_config(dir, v, seg, CL_SYNC_URING, m == M_URING_RWF ? CL_METHOD_FDATASYNC : m, init,
                                    bufsz);
    struct wal *w = NULL;
    c.opt.uring_depth = depth;
    if (m == M_URING_RWF)
        c.opt.uring_sync = CL_URING_SYNC_RWF_DSYNC;
    *rcp = wal_open(&c, 0, &w);
    return w;
}

/* ---- a spy file layer -------------------------------------------------------
 * Wraps another layer and keeps two images of the log's first SPY_SPAN
 * bytes of LSNs, across segment files: every byte handed to a write, and
 * the bytes made durable -- a write whose completion was reported and then
 * a sync of that file whose completion was reported (or an O_DSYNC write
 * reported complete).  A commit whose bytes are not in the durable image
 * when it is acknowledged was acknowledged too early. */

struct spy_pend {
    int64_t base;       /* the file's first LSN */
    uint64_t off;
    size_t len;
    uint8_t *data;
};

struct spy_slot {
    int used;
    uint64_t tag, seq;
    struct vfs_io *ios;
    int n;
    struct vfs_io low[VFS_RING_MAX_LINKS];
};

struct spy {
    struct vfs base;
    struct vfs *lower;
    pthread_mutex_t mu;
    uint64_t seg_size;
    uint8_t *written, *durable;   /* indexed by LSN */
    struct spy_pend *pend;
    size_t npend, cap;
    struct wal *w;                /* atomic: checked at every ring call once set */
    uint64_t checks, violations, out_of_order, short_writes, chains;
    uint64_t overlapped;          /* reaps while another chain was in flight */
    char why[200];
};

struct spy_file {
    struct vfs_file base;
    struct vfs_file *lower;
    int64_t lsn0;       /* LSN of the segment's byte 0, or -1: not a segment the spy follows */
};

struct spy_ring {
    struct vfs_ring base;
    struct vfs_ring *lower;
    struct spy_slot *slots;
    uint64_t seq;
};

static struct spy *SP(struct vfs *v) { return (struct spy *)v; }
static struct vfs_file *LF(struct vfs_file *f) { return ((struct spy_file *)f)->lower; }

static void spy_violation(struct spy *s, const char *fmt, unsigned long long a, unsigned long long b)
{
    if (s->violations++ == 0)
        snprintf(s->why, sizeof s->why, fmt, a, b);
}

/* s->mu held: the bytes [first record, lsn) must be durable as written. */
static void spy_check_locked(struct spy *s, uint64_t lsn, int is_commit)
{
    uint64_t first = wal_segment_start_lsn(0, s->seg_size);
    if (lsn <= first)
        return;
    s->checks++;
    if (lsn > SPY_SPAN) {
        spy_violation(s, "lsn %llu beyond what the spy follows (%llu)", (unsigned long long)lsn, SPY_SPAN);
        return;
    }
    if (memcmp(s->durable + first, s->written + first, (size_t)(lsn - first)) != 0) {
        uint64_t i = first;
        while (s->durable[i] == s->written[i])
            i++;
        spy_violation(s, "lsn %llu acknowledged, byte %llu not durable", (unsigned long long)lsn,
                      (unsigned long long)i);
        return;
    }
    if (is_commit) {
        const uint8_t *h = s->durable + lsn - COMMIT_REC;
        if (get_le64(h + 8) != lsn - COMMIT_REC || h[36] != WAL_REC_COMMIT)
            spy_violation(s, "lsn %llu acknowledged, its COMMIT record not durable (%llu)",
                          (unsigned long long)lsn, (unsigned long long)get_le64(h + 8));
    }
}

static void spy_check(struct spy *s, uint64_t lsn, int is_commit)
{
    pthread_mutex_lock(&s->mu);
    spy_check_locked(s, lsn, is_commit);
    pthread_mutex_unlock(&s->mu);
}

/* s->mu held */
static void spy_durable_lsn_check(struct spy *s)
{
    struct wal *w = __atomic_load_n(&s->w, __ATOMIC_ACQUIRE);
    if (w)
        spy_check_locked(s, wal_durable_lsn(w), 0);
}

static void spy_wrote(struct spy *s, struct vfs_file *f, const void *buf, size_t len, uint64_t off)
{
    struct spy_file *sf = (struct spy_file *)f;
    if (sf->lsn0 < 0 || len == 0 || (uint64_t)sf->lsn0 + off + len > SPY_SPAN)
        return;
    if (vfs_write_is_sync(f)) { /* O_DSYNC or RWF_DSYNC */
        memcpy(s->durable + sf->lsn0 + off, buf, len);
        return;
    }
    if (s->npend == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->pend = realloc(s->pend, s->cap * sizeof *s->pend);
    }
    struct spy_pend *p = &s->pend[s->npend++];
    p->base = sf->lsn0;
    p->off = off;
    p->len = len;
    p->data = malloc(len);
    memcpy(p->data, buf, len);
}

/* A sync of f: its own pending writes become durable (or, when it failed,
 * are lost for good: fsyncgate); other files' stay pending. */
static void spy_synced(struct spy *s, struct vfs_file *f, int ok)
{
    int64_t base = ((struct spy_file *)f)->lsn0;
    size_t o = 0;
    if (base < 0)
        return;
    for (size_t i = 0; i < s->npend; i++) {
        struct spy_pend *p = &s->pend[i];
        if (p->base != base) {
            s->pend[o++] = *p;
            continue;
        }
        if (ok)
            memcpy(s->durable + p->base + p->off, p->data, p->len);
        free(p->data);
    }
    s->npend = o;
}

static int sp_open(struct vfs *v, const char *path, unsigned flags, enum vfs_class cls, struct vfs_file **out)
{
    struct spy_file *sf = calloc(1, sizeof *sf);
    char name[32];
    int rc = vfs_open(SP(v)->lower, path, flags, cls, &sf->lower);
    if (rc) {
        free(sf);
        return rc;
    }
    const char *slash = strrchr(path, '/');
    uint64_t segno;
    (void)name;
    sf->lsn0 = -1;
    if (wal_segment_parse_name(slash ? slash + 1 : path, &segno) && (segno + 1) * SP(v)->seg_size <= SPY_SPAN)
        sf->lsn0 = (int64_t)(segno * SP(v)->seg_size);
    sf->base.vfs = v;
    sf->base.cls = cls;
    sf->base.flags = flags;
    *out = &sf->base;
    return 0;
}

static int sp_close(struct vfs_file *f)
{
    int rc = vfs_close(LF(f));
    free(f);
    return rc;
}

static int sp_pread(struct vfs_file *f, void *buf, size_t len, uint64_t off, size_t *n)
{ return vfs_pread(LF(f), buf, len, off, n); }

static int sp_pwrite(struct vfs_file *f, const void *buf, size_t len, uint64_t off)
{
    struct spy *s = SP(f->vfs);
    int rc = vfs_pwrite(LF(f), buf, len, off);
    pthread_mutex_lock(&s->mu);
    int64_t base = ((struct spy_file *)f)->lsn0;
    if (base >= 0 && (uint64_t)base + off + len <= SPY_SPAN)
        memcpy(s->written + base + off, buf, len);
    if (rc == 0)
        spy_wrote(s, f, buf, len, off);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int sp_sync(struct vfs_file *f, int data)
{
    struct spy *s = SP(f->vfs);
    int rc = data ? vfs_fdatasync(LF(f)) : vfs_fsync(LF(f));
    pthread_mutex_lock(&s->mu);
    spy_synced(s, f, rc == 0);
    pthread_mutex_unlock(&s->mu);
    return rc;
}
static int sp_fsync(struct vfs_file *f) { return sp_sync(f, 0); }
static int sp_fdatasync(struct vfs_file *f) { return sp_sync(f, 1); }
static int sp_fallocate(struct vfs_file *f, uint64_t off, uint64_t len) { return vfs_fallocate(LF(f), off, len); }
static int sp_truncate(struct vfs_file *f, uint64_t size) { return vfs_truncate(LF(f), size); }
static int sp_size(struct vfs_file *f, uint64_t *size) { return vfs_size(LF(f), size); }
static int sp_rename(struct vfs *v, const char *a, const char *b) { return vfs_rename(SP(v)->lower, a, b); }
static int sp_unlink(struct vfs *v, const char *p) { return vfs_unlink(SP(v)->lower, p); }
static int sp_mkdir(struct vfs *v, const char *p) { return vfs_mkdir(SP(v)->lower, p); }
static int sp_sync_dir(struct vfs *v, const char *d) { return vfs_sync_dir(SP(v)->lower, d); }
static int sp_list(struct vfs *v, const char *d, vfs_list_fn fn, void *arg) { return vfs_list(SP(v)->lower, d, fn, arg); }
static int sp_exists(struct vfs *v, const char *p) { return vfs_exists(SP(v)->lower, p); }
static void sp_destroy(struct vfs *v)
{
    struct spy *s = SP(v);
    for (size_t i = 0; i < s->npend; i++)
        free(s->pend[i].data);
    free(s->pend);
    free(s->written);
    free(s->durable);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static int sr_open(struct vfs *v, unsigned depth, struct vfs_ring **out)
{
    struct spy_ring *r = calloc(1, sizeof *r);
    int rc = vfs_ring_open(SP(v)->lower, depth, &r->lower);
    if (rc) {
        free(r);
        return rc;
    }
    r->slots = calloc(depth, sizeof *r->slots);
    r->base.vfs = v;
    r->base.depth = depth;
    *out = &r->base;
    return 0;
}

static int sr_submit(struct vfs_ring *rr, struct vfs_io *ios, int n, uint64_t tag)
{
    struct spy_ring *r = (struct spy_ring *)rr;
    struct spy *s = SP(rr->vfs);
    unsigned k;
    int rc;
    for (k = 0; k < rr->depth && r->slots[k].used; k++)
        ;
    if (k == rr->depth)
        return -EBUSY;
    struct spy_slot *sl = &r->slots[k];
    pthread_mutex_lock(&s->mu);
    spy_durable_lsn_check(s);
    for (int i = 0; i < n; i++) {
        sl->low[i] = ios[i];
        sl->low[i].f = LF(ios[i].f);
        int64_t base = ((struct spy_file *)ios[i].f)->lsn0;
        if (ios[i].op == VFS_IO_WRITE && base >= 0 && (uint64_t)base + ios[i].off + ios[i].len <= SPY_SPAN)
            memcpy(s->written + base + ios[i].off, ios[i].buf, ios[i].len);
    }
    pthread_mutex_unlock(&s->mu);
    sl->used = 1;
    sl->tag = tag;
    sl->seq = r->seq++;
    sl->ios = ios;
    sl->n = n;
    rc = vfs_ring_submit(r->lower, sl->low, n, k);
    if (rc)
        sl->used = 0;
    return rc;
}

static int sr_reap(struct vfs_ring *rr, int wait, uint64_t *tag, struct vfs_io **ios)
{
    struct spy_ring *r = (struct spy_ring *)rr;
    struct spy *s = SP(rr->vfs);
    uint64_t ltag;
    struct vfs_io *lios;
    pthread_mutex_lock(&s->mu);
    spy_durable_lsn_check(s);
    pthread_mutex_unlock(&s->mu);
    int rc = vfs_ring_reap(r->lower, wait, &ltag, &lios);
    if (rc != 1)
        return rc;
    struct spy_slot *sl = &r->slots[ltag];
    pthread_mutex_lock(&s->mu);
    s->chains++;
    for (unsigned k = 0; k < rr->depth; k++)
        if (r->slots[k].used && &r->slots[k] != sl) {
            s->overlapped++;
            break;
        }
    for (unsigned k = 0; k < rr->depth; k++)
        if (r->slots[k].used && r->slots[k].seq < sl->seq) {
            s->out_of_order++;
            break;
        }
    for (int i = 0; i < sl->n; i++) {
        struct vfs_io *io = &sl->ios[i];
        io->result = sl->low[i].result;
        if (io->op == VFS_IO_WRITE) {
            if (io->result > 0)
                spy_wrote(s, io->f, io->buf, (size_t)io->result, io->off);
            if (io->result >= 0 && (size_t)io->result < io->len)
                s->short_writes++;
        } else if (io->result != -ECANCELED) {
            spy_synced(s, io->f, io->result == 0);
        }
    }
    pthread_mutex_unlock(&s->mu);
    sl->used = 0;
    *tag = sl->tag;
    *ios = sl->ios;
    return 1;
}

static int sr_wake(struct vfs_ring *rr) { return vfs_ring_wake(((struct spy_ring *)rr)->lower); }

static void sr_close(struct vfs_ring *rr)
{
    struct spy_ring *r = (struct spy_ring *)rr;
    vfs_ring_close(r->lower);
    free(r->slots);
    free(r);
}

static const struct vfs_ops spy_ops = {
    .open = sp_open, .close = sp_close, .pread = sp_pread, .pwrite = sp_pwrite,
    .fsync = sp_fsync, .fdatasync = sp_fdatasync, .fallocate = sp_fallocate,
    .truncate = sp_truncate, .size = sp_size, .rename = sp_rename, .unlink = sp_unlink,
    .mkdir = sp_mkdir, .sync_dir = sp_sync_dir, .list = sp_list, .exists = sp_exists,
    .destroy = sp_destroy,
    .ring_open = sr_open, .ring_submit = sr_submit, .ring_reap = sr_reap,
    .ring_wake = sr_wake, .ring_close = sr_close,
};

/* The same layer without rings, as a backend that has none. */
static const struct vfs_ops spy_ops_noring = {
    .open = sp_open, .close = sp_close, .pread = sp_pread, .pwrite = sp_pwrite,
    .fsync = sp_fsync, .fdatasync = sp_fdatasync, .fallocate = sp_fallocate,
    .truncate = sp_truncate, .size = sp_size, .rename = sp_rename, .unlink = sp_unlink,
    .mkdir = sp_mkdir, .sync_dir = sp_sync_dir, .list = sp_list, .exists = sp_exists,
    .destroy = sp_destroy,
};

static struct spy *spy_new_seg(struct vfs *lower, int rings, uint64_t seg_size)
{
    struct spy *s = calloc(1, sizeof *s);
    s->base.ops = rings ? &spy_ops : &spy_ops_noring;
    s->base.name = "spy";
    s->lower = lower;
    s->seg_size = seg_size;
    s->written = calloc(1, SPY_SPAN);
    s->durable = calloc(1, SPY_SPAN);
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

static struct spy *spy_new(struct vfs *lower, int rings) { return spy_new_seg(lower, rings, BIGSEG); }

/* ---- committers ------------------------------------------------------------ */

struct committer {
    pthread_t th;
    struct wal *w;
    struct spy *spy;
    const struct genp *g;
    uint64_t first_id, n;
    int *rc;           /* per txn */
    uint64_t *lsn;     /* per txn */
    uint64_t early;    /* acknowledged but wal_durable_lsn() below the lsn */
};

static void *commit_loop(void *arg)
{
    struct committer *c = arg;
    for (uint64_t i = 0; i < c->n; i++) {
        uint64_t lsn = 0;
        int rc = tl_txn(c->w, c->g, c->first_id + i, 1, &lsn);
        c->rc[i] = rc;
        c->lsn[i] = lsn;
        if (rc == 0 && wal_durable_lsn(c->w) < lsn)
            c->early++;
        if (rc == 0 && c->spy)
            spy_check(c->spy, lsn, 1);
        if (rc)
            break;
    }
    return NULL;
}

/* Runs nthreads committers of per txns each (ids 1..); returns how many
 * were acknowledged; acked[id] = 1 for those. */
static uint64_t run_committers(struct wal *w, struct spy *spy, const struct genp *g, int nthreads,
                               uint64_t per, uint8_t *acked)
{
    struct committer *cs = calloc((size_t)nthreads, sizeof *cs);
    uint64_t n = 0;
    for (int t = 0; t < nthreads; t++) {
        cs[t] = (struct committer){ .w = w, .spy = spy, .g = g, .first_id = 1 + (uint64_t)t * per, .n = per };
        cs[t].rc = calloc(per, sizeof *cs[t].rc);
        cs[t].lsn = calloc(per, sizeof *cs[t].lsn);
        for (uint64_t i = 0; i < per; i++)
            cs[t].rc[i] = -1;
        ck_assert_int_eq(pthread_create(&cs[t].th, NULL, commit_loop, &cs[t]), 0);
    }
    for (int t = 0; t < nthreads; t++) {
        pthread_join(cs[t].th, NULL);
        ck_assert_uint_eq(cs[t].early, 0);
        for (uint64_t i = 0; i < per; i++) {
            if (cs[t].rc[i] == 0) {
                n++;
                if (acked)
                    acked[cs[t].first_id + i] = 1;
            }
        }
        free(cs[t].rc);
        free(cs[t].lsn);
    }
    free(cs);
    return n;
}

/* Every acknowledged id is in the read-back, each id at most once. */
static void check_acked_present(const struct rb *rb, const uint8_t *acked, uint64_t maxid, uint64_t seed,
                                const char *what)
{
    uint8_t *seen = calloc(maxid + 1, 1);
    for (size_t i = 0; i < rb->ntxn; i++) {
        uint64_t id = rb->txn_ids[i];
        ck_assert_msg(id >= 1 && id <= maxid && !seen[id], "seed %llu %s: txn %llu read twice or unknown",
                      (unsigned long long)seed, what, (unsigned long long)id);
        seen[id] = 1;
    }
    for (uint64_t id = 1; id <= maxid; id++)
        ck_assert_msg(!acked[id] || seen[id], "seed %llu %s: acknowledged txn %llu lost",
                      (unsigned long long)seed, what, (unsigned long long)id);
    free(seen);
}

/* ---- tests ------------------------------------------------------------------ */

START_TEST(test_policy_table)
{
    ck_assert_ptr_eq(wal_policy_for(CL_SYNC_URING), &wal_policy_uring);
    ck_assert_int_eq(wal_policy_uring.durable, 1);
    ck_assert_str_eq(wal_policy_uring.name, "uring");
    /* a file layer without rings: a clear error, no fallback */
    char *dir = tu_mkdtemp("uring-nosup");
    struct spy *s = spy_new(vfs_posix(), 0);
    int rc;
    struct wal *w = u_open(dir, &s->base, SEG, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 4, &rc);
    ck_assert_int_eq(rc, CL_ENOTSUP);
    ck_assert_ptr_null(w);
    vfs_destroy(&s->base);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Every method, real io_uring: commits across several segments, each
 * acknowledged durable, then read back in order. */
START_TEST(test_roundtrip_methods)
{
    uint64_t seed = tu_seed(41);
    for (int m = 0; m <= (int)M_URING_RWF; m++) {
        struct genp g = { seed + (uint64_t)m, 4, 40, 900 };
        char *dir = tu_mkdtemp("uring-rt");
        int rc;
        struct wal *w = u_open(dir, NULL, SEG, (enum cl_sync_method)m, CL_SEGINIT_ZERO, 16384, 4, &rc);
        if (rc == CL_ENOTSUP && m == CL_METHOD_DIRECT) {
            fprintf(stderr, "uring round trip: O_DIRECT not supported here, skipped\n");
            tu_rmdir(dir);
            free(dir);
            continue;
        }
        ck_assert_msg(rc == 0, "%s: wal_open %d", mname((enum cl_sync_method)m), rc);
        uint64_t count = 240, lsn;
        for (uint64_t id = 1; id <= count; id++) {
            rc = tl_txn(w, &g, id, 1, &lsn);
            ck_assert_msg(rc == 0, "seed %llu %s txn %llu: %d", (unsigned long long)seed,
                          mname((enum cl_sync_method)m), (unsigned long long)id, rc);
            ck_assert_uint_ge(wal_durable_lsn(w), lsn);
        }
        ck_assert_uint_eq(wal_durable_lsn(w), wal_end_lsn(w));
        struct wal_stats st;
        wal_get_stats(w, &st);
        ck_assert_uint_eq(st.commits, count);
        ck_assert_uint_ge(st.segments_created, 3);
        ck_assert_uint_gt(st.syncs, 0);
        ck_assert_uint_gt(st.sync_ns, 0);
        ck_assert_uint_le(st.syncs, count + 2 * st.segments_created + st.writes);
        ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), 0);
        wal_close(w);

        struct rb rb;
        tl_read(dir, NULL, SEG, 0, &g, &rb);
        ck_assert_msg(rb.err[0] == 0, "%s: %s", mname((enum cl_sync_method)m), rb.err);
        ck_assert_int_eq(rb.rc, 0);
        ck_assert_uint_eq(rb.ntxn, count);
        for (size_t i = 0; i < count; i++)
            ck_assert_uint_eq(rb.txn_ids[i], i + 1);
        rb_free(&rb);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* Many committers on real io_uring and on the fault layer's shuffled
 * completions: every commit acknowledged durable, all read back. */
START_TEST(test_many_committers)
{
    uint64_t seed = tu_seed(42);
    for (int fault = 0; fault < 2; fault++) {
        struct genp g = { seed, 2, 16, 120 };
        char *dir = tu_mkdtemp("uring-mt");
        struct vfs *fv = fault ? vfs_fault_new(vfs_posix()) : NULL;
        int nthreads = 64, rc; /* 64 clients, also under TSan */
        uint64_t per = 40;
        if (fv)
            vfs_fault_ring_seed(fv, seed);
        struct wal *w = u_open(dir, fv, SEG, CL_METHOD_FDATASYNC, CL_SEGINIT_SPARSE, 0, 8, &rc);
        ck_assert_int_eq(rc, 0);
        uint64_t n = run_committers(w, NULL, &g, nthreads, per, NULL);
        ck_assert_uint_eq(n, (uint64_t)nthreads * per);
        ck_assert_int_eq(wal_broken(w), 0);
        ck_assert_uint_eq(wal_durable_lsn(w), wal_end_lsn(w));
        struct wal_stats st;
        wal_get_stats(w, &st);
        ck_assert_uint_eq(st.commits, n);
        ck_assert_uint_ge(st.max_commits_per_sync, 1);
        fprintf(stderr, "uring %s: %d threads, %llu commits, %llu syncs, max %llu commits per sync\n",
                fault ? "fault" : "posix", nthreads, (unsigned long long)n, (unsigned long long)st.syncs,
                (unsigned long long)st.max_commits_per_sync);
        wal_close(w);
        vfs_destroy(fv);
        struct rb rb;
        uint8_t *acked = calloc(n + 1, 1);
        memset(acked + 1, 1, n);
        tl_read(dir, NULL, SEG, 0, &g, &rb);
        ck_assert_msg(rb.err[0] == 0, "%s", rb.err);
        ck_assert_int_eq(rb.rc, 0);
        ck_assert_uint_eq(rb.ntxn, n);
        check_acked_present(&rb, acked, n, seed, "many committers");
        free(acked);
        rb_free(&rb);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* No commit is acknowledged before the completion of the sync that covers
 * it: the spy checks each acknowledged commit (and wal_durable_lsn at every
 * ring call) against the writes and syncs whose completion it has seen
 * reported -- with the fault layer reporting chains out of order (and
 * running some after later ones) -- in one big segment, and across many
 * small ones. */
START_TEST(test_ack_after_covering_sync)
{
    uint64_t seed = tu_seed(43);
    static const enum cl_sync_method methods[] = { CL_METHOD_FDATASYNC, CL_METHOD_FSYNC, CL_METHOD_DSYNC,
                                                   CL_METHOD_RWF_DSYNC, M_URING_RWF };
    for (int small = 0; small < 2; small++)
    for (int fault = 1; fault >= 0; fault--) {
        for (unsigned mi = 0; mi < sizeof methods / sizeof methods[0]; mi++) {
            uint64_t seg = small ? 64 * 1024 : BIGSEG;
            struct genp g = { seed + mi, 2, 16, small ? 600 : 200 };
            char *dir = tu_mkdtemp("uring-order");
            struct vfs *fv = fault ? vfs_fault_new(vfs_posix()) : vfs_posix();
            if (fault)
                vfs_fault_ring_seed(fv, seed + mi);
            struct spy *s = spy_new_seg(fv, 1, seg);
            int rc;
            struct wal *w = u_open(dir, &s->base, seg, methods[mi], CL_SEGINIT_SPARSE, 0, 8, &rc);
            ck_assert_int_eq(rc, 0);
            __atomic_store_n(&s->w, w, __ATOMIC_RELEASE);
            uint64_t n = run_committers(w, s, &g, 8, 120, NULL);
            ck_assert_uint_eq(n, 8 * 120);
            __atomic_store_n(&s->w, NULL, __ATOMIC_RELEASE);
            pthread_mutex_lock(&s->mu);
            ck_assert_msg(s->violations == 0, "seed %llu %s %s: %llu violations, first: %s",
                          (unsigned long long)seed, fault ? "fault" : "posix", mname(methods[mi]),
                          (unsigned long long)s->violations, s->why);
            ck_assert_uint_ge(s->checks, n);
            /* the point of the shuffle: it did happen, whenever chains
             * were in flight together often enough (a loaded machine may
             * leave the leader with one at a time) */
            if (fault && s->overlapped >= 50)
                ck_assert_msg(s->out_of_order > 0, "%s: no chain was reported out of order (%llu chains, %llu "
                              "overlapping)", mname(methods[mi]), (unsigned long long)s->chains,
                              (unsigned long long)s->overlapped);
            if (small) { /* the point of small segments: the log crossed several */
                struct wal_stats st;
                wal_get_stats(w, &st);
                ck_assert_uint_ge(st.segment_switches, 2);
            }
            fprintf(stderr, "uring ordering %s %s %s: %llu chains, %llu reported out of order, %llu checks\n",
                    small ? "64K segments" : "one segment", fault ? "fault" : "posix", mname(methods[mi]),
                    (unsigned long long)s->chains, (unsigned long long)s->out_of_order,
                    (unsigned long long)s->checks);
            pthread_mutex_unlock(&s->mu);
            wal_close(w);
            vfs_destroy(&s->base);
            if (fault)
                vfs_destroy(fv);
            tu_rmdir(dir);
            free(dir);
        }
    }
}
END_TEST

/* A short write acknowledges nothing: the remainder goes again with a
 * fresh sync, nothing is lost, the log reads back whole. */
START_TEST(test_short_write_resubmitted)
{
    uint64_t seed = tu_seed(44);
    static const enum cl_sync_method methods[] = { CL_METHOD_FDATASYNC, CL_METHOD_FSYNC, CL_METHOD_DSYNC,
                                                   CL_METHOD_DIRECT, M_URING_RWF };
    for (unsigned mi = 0; mi < sizeof methods / sizeof methods[0]; mi++) {
        for (int threads = 1; threads <= 4; threads += 3) {
            struct genp g = { seed + mi, 3, 24, 700 };
            char *dir = tu_mkdtemp("uring-short");
            struct vfs *fv = vfs_fault_new(vfs_posix());
            vfs_fault_ring_seed(fv, seed);
            struct spy *s = spy_new(fv, 1);
            int rc;
            struct wal *w = u_open(dir, &s->base, BIGSEG, methods[mi], CL_SEGINIT_SPARSE, 0, 4, &rc);
            if (rc == CL_ENOTSUP && methods[mi] == CL_METHOD_DIRECT) {
                /* short O_DIRECT writes (which must be realigned): not testable here */
                fprintf(stderr, "uring short write: O_DIRECT not supported here, skipped\n");
                vfs_destroy(&s->base);
                vfs_destroy(fv);
                tu_rmdir(dir);
                free(dir);
                continue;
            }
            ck_assert_int_eq(rc, 0);
            __atomic_store_n(&s->w, w, __ATOMIC_RELEASE);
            uint64_t total = 0;
            for (int round = 0; round < 5; round++) {
                vfs_fault_short_write(fv, 1 + (uint64_t)round * 3);
                uint64_t per = 40;
                struct committer *cs = calloc((size_t)threads, sizeof *cs);
                for (int t = 0; t < threads; t++) {
                    cs[t] = (struct committer){ .w = w, .spy = s, .g = &g,
                                                .first_id = 1 + total + (uint64_t)t * per, .n = per };
                    cs[t].rc = calloc(per, sizeof *cs[t].rc);
                    cs[t].lsn = calloc(per, sizeof *cs[t].lsn);
                    ck_assert_int_eq(pthread_create(&cs[t].th, NULL, commit_loop, &cs[t]), 0);
                }
                for (int t = 0; t < threads; t++) {
                    pthread_join(cs[t].th, NULL);
                    for (uint64_t i = 0; i < per; i++)
                        ck_assert_msg(cs[t].rc[i] == 0, "seed %llu %s: txn %llu: %d", (unsigned long long)seed,
                                      mname(methods[mi]), (unsigned long long)(cs[t].first_id + i),
                                      cs[t].rc[i]);
                    ck_assert_uint_eq(cs[t].early, 0);
                    free(cs[t].rc);
                    free(cs[t].lsn);
                }
                free(cs);
                total += per * (uint64_t)threads;
            }
            __atomic_store_n(&s->w, NULL, __ATOMIC_RELEASE);
            ck_assert_int_eq(wal_broken(w), 0);
            ck_assert_uint_ge(s->short_writes, 5);
            ck_assert_msg(s->violations == 0, "%s: %s", mname(methods[mi]), s->why);
            wal_close(w);
            /* what survives a power failure now: everything acknowledged */
            ck_assert_int_eq(vfs_fault_crash(fv, VFS_CRASH_DROP, seed), 0);
            vfs_destroy(&s->base);
            vfs_destroy(fv);
            struct rb rb;
            tl_read(dir, NULL, BIGSEG, 0, &g, &rb);
            ck_assert_msg(rb.err[0] == 0, "%s: %s", mname(methods[mi]), rb.err);
            ck_assert_int_eq(rb.rc, 0);
            ck_assert_uint_eq(rb.ntxn, total);
            uint8_t *acked = calloc(total + 1, 1);
            memset(acked + 1, 1, total);
            check_acked_present(&rb, acked, total, seed, "short write");
            free(acked);
            rb_free(&rb);
            tu_rmdir(dir);
            free(dir);
        }
    }
}
END_TEST

/* EIO on a sync in the middle of a batch: no member acknowledged, the log
 * broken for good, and a reopen (after a power failure) finds every
 * acknowledged commit. */
START_TEST(test_eio_mid_batch)
{
    uint64_t seed = tu_seed(45);
    for (int it = 0; it < 6; it++) {
        uint64_t s = seed + (uint64_t)it;
        enum cl_sync_method m = it == 5 ? M_URING_RWF : it % 3 == 2 ? CL_METHOD_DSYNC : (enum cl_sync_method)(it % 2);
        struct genp g = { s, 2, 16, 150 };
        char *dir = tu_mkdtemp("uring-eio");
        struct vfs *fv = vfs_fault_new(vfs_posix());
        vfs_fault_ring_seed(fv, s);
        struct spy *sp = spy_new(fv, 1);
        int rc, nthreads = 6;
        uint64_t per = 60, maxid = (uint64_t)nthreads * per;
        struct wal *w = u_open(dir, &sp->base, BIGSEG, m, CL_SEGINIT_SPARSE, 0, 4, &rc);
        ck_assert_int_eq(rc, 0);
        __atomic_store_n(&sp->w, w, __ATOMIC_RELEASE);
        /* 360 commits of 6 threads take at least 60 syncs (a batch holds
         * at most one commit per thread): the failing one is always reached */
        vfs_fault_fail_sync(fv, 10 + (uint64_t)it * 8, -EIO);
        uint8_t *acked = calloc(maxid + 1, 1);
        uint64_t n = run_committers(w, sp, &g, nthreads, per, acked);
        __atomic_store_n(&sp->w, NULL, __ATOMIC_RELEASE);
        ck_assert_msg(n < maxid, "seed %llu: the failing sync was never reached", (unsigned long long)s);
        ck_assert_int_eq(wal_broken(w), -EIO);
        ck_assert_msg(sp->violations == 0, "seed %llu %s: %s", (unsigned long long)s, mname(m), sp->why);
        struct wal_stats st;
        wal_get_stats(w, &st);
        ck_assert_uint_eq(st.commits, n);
        /* sticky: every later call says so */
        uint64_t lsn;
        ck_assert_int_eq(wal_commit(w, wal_end_lsn(w)), CL_EBROKEN);
        ck_assert_int_eq(tl_txn(w, &g, maxid + 1, 0, &lsn), CL_EBROKEN);
        ck_assert_int_eq(wal_flush(w, UINT64_MAX, 1), CL_EBROKEN);
        wal_close(w);
        ck_assert_int_eq(vfs_fault_crash(fv, (enum vfs_crash_model)(it % 3), s), 0);
        vfs_destroy(&sp->base);
        vfs_destroy(fv);
        struct rb rb;
        tl_read(dir, NULL, BIGSEG, 0, &g, &rb);
        ck_assert_msg(rb.err[0] == 0, "seed %llu: %s", (unsigned long long)s, rb.err);
        ck_assert_msg(rb.rc == 0, "seed %llu: reader %d", (unsigned long long)s, rb.rc);
        check_acked_present(&rb, acked, maxid, s, "eio");
        free(acked);
        rb_free(&rb);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

/* Seeded crashes at a random operation (drop, torn, reorder), every
 * method, small segments (switches), one or several committers: every
 * acknowledged commit reads back, nothing is reported corrupt. */
START_TEST(test_crash_loop)
{
    uint64_t seed = tu_seed(46), iters = tu_iterations(300), crashed = 0, acks = 0, maxacks = 0;
    int direct_ok = 1;
    for (uint64_t it = 0; it < iters; it++) {
        uint64_t s = seed + it, rs = s * 0x9E3779B97F4A7C15ull;
        enum vfs_crash_model model = (enum vfs_crash_model)(it % 3);
        static const enum cl_sync_method ms[] = { CL_METHOD_FDATASYNC, CL_METHOD_FSYNC, CL_METHOD_DSYNC,
                                                  CL_METHOD_RWF_DSYNC, M_URING_RWF, CL_METHOD_DIRECT };
        enum cl_sync_method m = ms[tu_range(&rs, direct_ok ? 6 : 5)];
        int nthreads = it % 4 == 3 ? 4 : 1;
        uint64_t per = nthreads == 1 ? 120 : 40, maxid = per * (uint64_t)nthreads;
        struct genp g = { s, 4, 40, 1200 };
        char *dir = tu_mkdtemp("uring-crash");
        struct vfs *fv = vfs_fault_new(vfs_posix());
        vfs_fault_ring_seed(fv, s);
        int rc;
        struct wal *w = u_open(dir, fv, SEG, m, CL_SEGINIT_ZERO, 16384, 1 + (uint32_t)tu_range(&rs, 8), &rc);
        if (rc == CL_ENOTSUP && m == CL_METHOD_DIRECT) {
            direct_ok = 0; /* no O_DIRECT here: the other methods only */
            vfs_destroy(fv);
            tu_rmdir(dir);
            free(dir);
            it--;
            continue;
        }
        ck_assert_msg(rc == 0, "seed %llu: wal_open %d", (unsigned long long)s, rc);
        if (tu_range(&rs, 4) == 0)
            vfs_fault_short_write(fv, 1 + tu_range(&rs, 20));
        vfs_fault_crash_at(fv, 1 + tu_range(&rs, 300), model, s);
        uint8_t *acked = calloc(maxid + 1, 1);
        uint64_t n = run_committers(w, NULL, &g, nthreads, per, acked);
        crashed += vfs_fault_crashed(fv) != 0;
        acks += n;
        maxacks += maxid;
        wal_close(w);
        vfs_destroy(fv);
        struct rb rb;
        tl_read(dir, NULL, SEG, 0, &g, &rb);
        ck_assert_msg(rb.err[0] == 0, "seed %llu (%s, %s): %s", (unsigned long long)s,
                      vfs_crash_model_name(model), mname(m), rb.err);
        ck_assert_msg(rb.rc == 0, "seed %llu (%s, %s): reader %d at %llu", (unsigned long long)s,
                      vfs_crash_model_name(model), mname(m), rb.rc, (unsigned long long)rb.bad_lsn);
        check_acked_present(&rb, acked, maxid, s, vfs_crash_model_name(model));
        if (nthreads == 1) /* one committer: the log is exactly a prefix */
            for (size_t i = 0; i < rb.ntxn; i++)
                ck_assert_msg(rb.txn_ids[i] == i + 1, "seed %llu: txn %llu at %zu", (unsigned long long)s,
                              (unsigned long long)rb.txn_ids[i], i);
        free(acked);
        rb_free(&rb);
        tu_rmdir(dir);
        free(dir);
    }
    fprintf(stderr, "uring crash loop: %llu runs from seed %llu, %llu crashed mid-run, %llu of %llu commits acknowledged%s\n",
            (unsigned long long)iters, (unsigned long long)seed, (unsigned long long)crashed,
            (unsigned long long)acks, (unsigned long long)maxacks, direct_ok ? "" : " (no O_DIRECT here)");
    ck_assert_uint_gt(crashed, iters / 2); /* the crashes land inside the runs */
}
END_TEST

static int uring_available(void)
{
    struct vfs_ring *r;
    int rc = vfs_ring_open(vfs_posix(), 2, &r);
    if (rc == 0)
        vfs_ring_close(r);
    return rc;
}

int main(void)
{
    int rc = uring_available();
    if (rc) {
        fprintf(stderr, "io_uring is not available here (%s): skipped\n", strerror(-rc));
        return 77;
    }
    Suite *s = suite_create("wal_uring");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_policy_table);
    tcase_add_test(tc, test_roundtrip_methods);
    tcase_add_test(tc, test_many_committers);
    tcase_add_test(tc, test_ack_after_covering_sync);
    tcase_add_test(tc, test_short_write_resubmitted);
    tcase_add_test(tc, test_eio_mid_batch);
    tcase_add_test(tc, test_crash_loop);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
