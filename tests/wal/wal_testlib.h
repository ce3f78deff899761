/*
 * wal_testlib.h -- helpers shared by the log suites: transactions whose
 * contents are a function of (seed, txn id), so any record read back can be
 * checked on its own, and a read-back that checks every record.
 */
#ifndef CL_WAL_TESTLIB_H
#define CL_WAL_TESTLIB_H

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "wal.h"

#define GT_MAXOPS 8

struct genp {
    uint64_t seed;
    unsigned maxops;          /* 1..GT_MAXOPS */
    uint32_t maxk, maxv;      /* key 1..maxk bytes, value 0..maxv bytes */
};

struct gtx {
    uint64_t id;
    size_t n;
    struct wal_op ops[GT_MAXOPS];
    uint8_t *mem;
};

/* Fills t with transaction id's operations (t->mem is malloc'd). */
static inline void gt_make(const struct genp *g, uint64_t id, struct gtx *t)
{
    uint64_t s = g->seed ^ (id * 0xD1B54A32D192ED03ull), total = 0;
    uint8_t *p;
    t->id = id;
    t->n = 1 + (size_t)tu_range(&s, g->maxops);
    for (size_t i = 0; i < t->n; i++) {
        struct wal_op *op = &t->ops[i];
        op->del = tu_range(&s, 5) == 0;
        op->klen = 1 + (uint32_t)tu_range(&s, g->maxk);
        op->vlen = op->del ? 0 : (uint32_t)tu_range(&s, (uint64_t)g->maxv + 1);
        total += op->klen + op->vlen;
    }
    t->mem = p = malloc(total + 1);
    for (size_t i = 0; i < t->n; i++) {
        struct wal_op *op = &t->ops[i];
        op->key = p;
        for (uint32_t j = 0; j < op->klen; j++)
            *p++ = (uint8_t)tu_rand(&s);
        op->val = p;
        for (uint32_t j = 0; j < op->vlen; j++)
            *p++ = (uint8_t)tu_rand(&s);
    }
}

static inline void gt_free(struct gtx *t) { free(t->mem); t->mem = NULL; }

/* The log configuration the suites open with (db_id 0x1234; v NULL: POSIX). */
static inline struct wal_config tl_config(const char *dir, struct vfs *v, uint64_t seg, enum cl_sync_policy p,
                                          enum cl_sync_method m, enum cl_segment_init init, size_t bufsz)
{
    struct wal_config c = { 0 };
    c.vfs = v ? v : vfs_posix();
    c.dir = dir;
    c.db_id = 0x1234;
    c.segment_size = seg;
    c.buffer_size = bufsz;
    cl_options_init(&c.opt); /* the library's defaults, as cl_open would pass them */
    c.opt.sync = p;
    c.opt.method = m;
    c.opt.segment_init = init;
    return c;
}

static inline struct wal *tl_open(const char *dir, struct vfs *v, uint64_t seg, enum cl_sync_policy p,
                                  enum cl_sync_method m, enum cl_segment_init init, size_t bufsz,
                                  uint64_t start_segno, int *rcp)
{
    struct wal_config c = tl_config(dir, v, seg, p, m, init, bufsz);
    struct wal *w = NULL;
    int rc = wal_open(&c, start_segno, &w);
    if (rcp)
        *rcp = rc;
    else
        ck_assert_msg(rc == 0, "wal_open: %d", rc);
    return w;
}

/* Appends txn id (and commits it when commit); returns the commit LSN. */
static inline int tl_txn(struct wal *w, const struct genp *g, uint64_t id, int commit, uint64_t *lsn)
{
    struct gtx t;
    uint64_t l = 0;
    gt_make(g, id, &t);
    int rc = wal_append_txn(w, id, t.ops, t.n, &l);
    gt_free(&t);
    if (rc == 0 && commit)
        rc = wal_commit(w, l);
    if (lsn)
        *lsn = l;
    return rc;
}

/* What a read-back found. */
struct rb_rec {
    uint64_t lsn, sync_lsn, txn_id;
    uint32_t len;
    int type;
};
struct rb {
    int rc;                   /* last wal_reader_next result (0, CL_ECORRUPT, ...) */
    size_t nrec;              /* records returned */
    struct rb_rec *recs;
    size_t ntxn;              /* complete transactions */
    uint64_t *txn_ids;        /* in log order */
    size_t partial;           /* records of an unfinished transaction at the end */
    uint64_t end_lsn, bad_lsn;
    int torn;
    char err[160];            /* first mismatch, or "" */
};

static inline void rb_free(struct rb *r) { free(r->recs); free(r->txn_ids); memset(r, 0, sizeof *r); }

static inline int tl_eq(const void *a, uint32_t alen, const void *b, uint32_t blen)
{
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* Reads the whole log and checks every record against the generator. */
static inline void tl_read(const char *dir, struct vfs *v, uint64_t seg, uint64_t start_lsn,
                           const struct genp *g, struct rb *out)
{
    struct wal_reader *r;
    struct wal_record rec;
    struct gtx t = { 0 };
    int active = 0, rc;
    size_t j = 0, cap = 0, tcap = 0;

    memset(out, 0, sizeof *out);
    rc = wal_reader_open(v ? v : vfs_posix(), dir, seg, 0x1234, start_lsn, &r);
    ck_assert_int_eq(rc, 0);
    while ((rc = wal_reader_next(r, &rec)) == 1) {
        if (out->nrec == cap) {
            cap = cap ? cap * 2 : 256;
            out->recs = realloc(out->recs, cap * sizeof *out->recs);
        }
        out->recs[out->nrec++] = (struct rb_rec){ rec.lsn, rec.sync_lsn, rec.txn_id, rec.len, rec.type };
        if (out->err[0])
            continue;
        if (!active) {
            gt_make(g, rec.txn_id, &t);
            active = 1;
            j = 0;
        } else if (rec.txn_id != t.id) {
            snprintf(out->err, sizeof out->err, "lsn %llu: txn %llu inside txn %llu",
                     (unsigned long long)rec.lsn, (unsigned long long)rec.txn_id,
                     (unsigned long long)t.id);
            continue;
        }
        if (rec.type == WAL_REC_COMMIT) {
            uint32_t nops = 0;
            if (wal_decode_commit(&rec, &nops) || nops != t.n || j != t.n) {
                snprintf(out->err, sizeof out->err, "lsn %llu: bad commit of txn %llu",
                         (unsigned long long)rec.lsn, (unsigned long long)t.id);
                continue;
            }
            if (out->ntxn == tcap) {
                tcap = tcap ? tcap * 2 : 256;
                out->txn_ids = realloc(out->txn_ids, tcap * sizeof *out->txn_ids);
            }
            out->txn_ids[out->ntxn++] = t.id;
            gt_free(&t);
            active = 0;
            continue;
        }
        const struct wal_op *op = j < t.n ? &t.ops[j] : NULL;
        const void *k = NULL, *val = NULL;
        uint32_t kl = 0, vl = 0;
        int ok = op != NULL;
        if (ok && rec.type == WAL_REC_PUT)
            ok = !op->del && wal_decode_put(&rec, &k, &kl, &val, &vl) == 0 &&
                 tl_eq(k, kl, op->key, op->klen) && tl_eq(val, vl, op->val, op->vlen);
        else if (ok && rec.type == WAL_REC_DEL)
            ok = op->del && wal_decode_del(&rec, &k, &kl) == 0 && tl_eq(k, kl, op->key, op->klen);
        else
            ok = 0;
        if (!ok)
            snprintf(out->err, sizeof out->err, "lsn %llu: op %zu of txn %llu differs",
                     (unsigned long long)rec.lsn, j, (unsigned long long)t.id);
        j++;
    }
    if (active) {
        out->partial = j;
        gt_free(&t);
    }
    out->rc = rc;
    out->end_lsn = wal_reader_end_lsn(r);
    out->torn = wal_reader_torn(r);
    out->bad_lsn = wal_reader_bad_lsn(r);
    wal_reader_close(r);
}

static inline char *tl_segpath(const char *dir, uint64_t segno)
{
    char name[32], *p;
    wal_segment_name(name, sizeof name, segno);
    if (asprintf(&p, "%s/%s", dir, name) < 0)
        abort();
    return p;
}

/* ---- a gate on syncs ----------------------------------------------------------
 * A test's file layer calls tl_gate_pass in its syncs: while the gate is
 * shut each sync waits there for a permit the test hands out; the gate
 * counts the syncs that reached it. */
struct tl_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open, permits, entered;
};
#define TL_GATE_INIT                                                                                                   \
    {                                                                                                                  \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1, 0, 0                                                   \
    }

static inline void tl_gate_pass(struct tl_gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->entered++;
    pthread_cond_broadcast(&g->cv);
    while (!g->open && g->permits == 0)
        pthread_cond_wait(&g->cv, &g->mu);
    if (!g->open)
        g->permits--;
    pthread_mutex_unlock(&g->mu);
}

/* Opens or shuts it, with no permits and no sync counted. */
static inline void tl_gate_reset(struct tl_gate *g, int open)
{
    pthread_mutex_lock(&g->mu);
    g->open = open;
    g->permits = g->entered = 0;
    pthread_mutex_unlock(&g->mu);
}

/* Hands out n permits, and opens (open 1) or keeps it shut. */
static inline void tl_gate_permit(struct tl_gate *g, int n, int open)
{
    pthread_mutex_lock(&g->mu);
    g->permits += n;
    g->open = open;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Waits (at most 10 s) until at least n syncs reached it: how many had. */
static inline int tl_gate_wait_entered(struct tl_gate *g, int n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    pthread_mutex_lock(&g->mu);
    while (g->entered < n && pthread_cond_timedwait(&g->cv, &g->mu, &ts) == 0)
        ;
    int entered = g->entered;
    pthread_mutex_unlock(&g->mu);
    return entered;
}

static inline void tl_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif /* CL_WAL_TESTLIB_H */
