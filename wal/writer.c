/*
 * writer.c -- the log buffer and the path from it to the segment files.
 *
 * Owns struct wal (wal_internal.h): appending records to the ring buffer,
 * writing buffered bytes to segments, syncing, the sticky broken state and
 * the statistics.  The engine calls wal_append_txn under its writer lock
 * and wal_commit after releasing it; the policy tables (policy.c) call
 * wal_write_locked and wal_sync_locked under io_mu.  With log_insert slots
 * an append goes through log_slot.c instead, which reserves its range here
 * (wal_reserve_locked) and copies its records outside mu
 * (wal_put_record); the writer then writes only up to wal_ready_lsn_locked,
 * below the first range still being copied.
 *
 * Invariants (CL_INVARIANT checks W1 wherever an LSN moves):
 *   W1 durable_lsn <= written_lsn <= ready <= end_lsn, and each only
 *      grows (ready: wal_ready_lsn_locked, the end of the bytes copied).
 *   W2 A record is appended whole at an 8-byte aligned LSN and leaves room
 *      for a SWITCH record before its segment's end; when it would not,
 *      a SWITCH record is appended and the record starts the next segment.
 *   W3 Segment s+1 is ready durably (wal_pool_take: recycled, prepared
 *      ahead, or created on the spot) before any byte at or past a SWITCH
 *      record of segment s is written; segment s is synced
 *      before any byte of segment s+1 is written (as PostgreSQL syncs a
 *      finished segment whatever the commit setting), so everything below
 *      a segment's first record is durable once the writer is in it.
 *   W4 A record's sync_lsn is durable_lsn when it was appended: everything
 *      below sync_lsn was durable before any byte of the record was written.
 *      The reader relies on this to tell a torn tail from corruption.
 *   W5 After a failed write or sync, broken is set and nothing more is
 *      written or synced; durable_lsn never moves past a failed sync.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic.h"
#include "crc32c.h"
#include "endian.h"
#include "invariant.h"
#include "wal_internal.h"

/* ---- small helpers -------------------------------------------------------- */

int wal_set_broken(struct wal *w, int err)
{
    int zero = 0;
    if (err == 0)
        err = CL_EBROKEN;
    __atomic_compare_exchange_n(&w->broken, &zero, err, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (w->policy && w->policy->advanced)
        w->policy->advanced(w); /* its waiters must see it */
    return err;
}

int wal_broken(struct wal *w) { return __atomic_load_n(&w->broken, __ATOMIC_ACQUIRE); }
uint64_t wal_durable_lsn(struct wal *w) { return wal_load64(&w->durable_lsn); }
uint64_t wal_segment_switches(struct wal *w) { return wal_load64(&w->st.segment_switches); }

uint64_t wal_end_lsn(struct wal *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t v = w->end_lsn;
    pthread_mutex_unlock(&w->mu);
    return v;
}

void wal_record_header_encode(uint8_t *h, uint32_t len, uint64_t lsn, uint64_t txn_id,
                              uint64_t sync_lsn, uint32_t incarnation, enum wal_rec_type type)
{
    put_le32(h, 0); /* crc, filled by the caller once the payload is known */
    put_le32(h + 4, len);
    put_le64(h + 8, lsn);
    put_le64(h + 16, txn_id);
    put_le64(h + 24, sync_lsn);
    put_le32(h + 32, incarnation);
    h[36] = (uint8_t)type;
    h[37] = 0;
    put_le16(h + 38, 0);
}

/* ---- the ring ------------------------------------------------------------- */

/* Copies len bytes (zeros when src is NULL) to the ring at lsn. */
static void ring_put(struct wal *w, uint64_t lsn, const void *src, size_t len)
{
    const uint8_t *s = src;
    while (len) {
        uint64_t i = lsn % w->buf_cap;
        size_t n = w->buf_cap - i < len ? (size_t)(w->buf_cap - i) : len;
        if (s) {
            memcpy(w->buf + i, s, n);
            s += n;
        } else {
            memset(w->buf + i, 0, n);
        }
        lsn += n;
        len -= n;
    }
}

static void ring_get(const struct wal *w, uint8_t *dst, uint64_t lsn, size_t len)
{
    while (len) {
        uint64_t i = lsn % w->buf_cap;
        size_t n = w->buf_cap - i < len ? (size_t)(w->buf_cap - i) : len;
        memcpy(dst, w->buf + i, n);
        dst += n;
        lsn += n;
        len -= n;
    }
}

void wal_ring_get(const struct wal *w, uint8_t *dst, uint64_t lsn, size_t len)
{
    ring_get(w, dst, lsn, len);
}

/* ---- writing and syncing (io_mu held) ------------------------------------- */

static int open_segment(struct wal *w, uint64_t segno)
{
    char *path;
    int rc;
    if (w->cur.f && w->cur.segno == segno)
        return 0;
    if (w->cur.f) {
        vfs_close(w->cur.f);
        w->cur.f = NULL;
    }
    rc = wal_segment_path(w, segno, &path);
    if (rc)
        return rc;
    rc = vfs_open(w->vfs, path, w->open_flags, VFS_CLASS_WAL, &w->cur.f);
    free(path);
    if (rc == -EINVAL && (w->open_flags & VFS_O_DIRECT))
        rc = CL_ENOTSUP; /* the filesystem does not do O_DIRECT (tmpfs) */
    if (rc) {
        w->cur.f = NULL;
        return rc;
    }
    w->cur.segno = segno;
    w->tail_block_lsn = UINT64_MAX;
    return 0;
}

int wal_open_segment_locked(struct wal *w, uint64_t segno) { return open_segment(w, segno); }

static int timed_pwrite(struct wal *w, const void *buf, size_t len, uint64_t off)
{
    uint64_t t0 = cl_now_ns();
    int rc = vfs_pwrite(w->cur.f, buf, len, off);
    if (rc)
        return rc;
    uint64_t dt = cl_now_ns() - t0;
    w->io_write_ns += dt;
    wal_add64(&w->st.writes, 1);
    wal_add64(&w->st.bytes, len);
    if (w->write_is_sync) { /* an O_DSYNC or RWF_DSYNC write is the sync */
        wal_add64(&w->st.syncs, 1);
        wal_add64(&w->st.sync_ns, dt);
    }
    return 0;
}

size_t wal_stage_direct(struct wal *w, uint8_t *dst, uint64_t a, uint64_t stop)
{
    uint64_t blk = a & ~(uint64_t)(VFS_DIRECT_ALIGN - 1);
    size_t pre = (size_t)(a - blk), len = (size_t)(stop - blk);
    size_t padded = (len + VFS_DIRECT_ALIGN - 1) & ~(size_t)(VFS_DIRECT_ALIGN - 1);
    if (pre) {
        CL_INVARIANT("W1", w->tail_block_lsn == blk); /* the tail block is the one written_lsn is in */
        if (w->tail_block_lsn != blk)
            return 0;
        memcpy(dst, w->tail_block, pre);
    }
    ring_get(w, dst + pre, a, (size_t)(stop - a));
    memset(dst + len, 0, padded - len);
    if (stop % VFS_DIRECT_ALIGN) {
        w->tail_block_lsn = stop & ~(uint64_t)(VFS_DIRECT_ALIGN - 1);
        memcpy(w->tail_block, dst + (w->tail_block_lsn - blk), (size_t)(stop - w->tail_block_lsn));
    }
    return padded;
}

/* Writes the buffered bytes [a, e) of the current segment. */
static int write_range(struct wal *w, uint64_t a, uint64_t e)
{
    int rc;
    if (!(w->open_flags & VFS_O_DIRECT)) {
        while (a < e) {
            uint64_t i = a % w->buf_cap;
            uint64_t n = w->buf_cap - i < e - a ? w->buf_cap - i : e - a;
            rc = timed_pwrite(w, w->buf + i, (size_t)n, wal_lsn_offset(a, w->seg_size));
            if (rc)
                return rc;
            a += n;
        }
        return 0;
    }
    /* O_DIRECT: whole aligned blocks.  Segment boundaries are block
     * aligned, so LSN alignment is file-offset alignment.  The first block
     * is rebuilt from the saved tail; the last is padded with zeros and
     * rewritten by the next write. */
    while (a < e) {
        uint64_t blk = a & ~(uint64_t)(VFS_DIRECT_ALIGN - 1);
        uint64_t stop = blk + WAL_STAGE_SIZE < e ? blk + WAL_STAGE_SIZE : e;
        size_t padded = wal_stage_direct(w, w->stage, a, stop);
        if (!padded)
            return CL_EINTERNAL;
        rc = timed_pwrite(w, w->stage, padded, wal_lsn_offset(blk, w->seg_size));
        if (rc)
            return rc;
        a = stop;
    }
    return 0;
}

static int timed_sync(struct wal *w, struct vfs_file *f)
{
    uint64_t t0 = cl_now_ns();
    int rc = w->method == CL_METHOD_FSYNC ? vfs_fsync(f) : vfs_fdatasync(f);
    uint64_t dt = cl_now_ns() - t0;
    w->io_sync_ns += dt;
    wal_add64(&w->st.sync_ns, dt);
    if (rc == 0)
        wal_add64(&w->st.syncs, 1);
    return rc;
}

void wal_mark_durable_locked(struct wal *w, uint64_t lsn, uint64_t txns)
{
    uint64_t n = txns - w->durable_txns;
    w->durable_txns = txns;
    cl_atomic_max64(&w->st.max_commits_per_sync, n);
    if (n)
        wal_add64(&w->st.batch_hist[n < CL_BATCH_HIST - 1 ? n : CL_BATCH_HIST - 1], 1);
    /* W1: written_lsn is stable under io_mu, which the caller holds */
    CL_INVARIANT("W1", lsn >= wal_load64(&w->durable_lsn) && lsn <= w->written_lsn);
    pthread_mutex_lock(&w->mu);
    wal_store64(&w->durable_lsn, lsn);
    wal_note_batch_locked(w, lsn);
    pthread_mutex_unlock(&w->mu);
    if (w->policy->advanced)
        w->policy->advanced(w);
}

void wal_note_batch_locked(struct wal *w, uint64_t lsn)
{
    struct wal_batch *b = &w->batches[w->nbatches++ % WAL_BATCH_RING];
    *b = (struct wal_batch){.lsn = lsn, .at_ns = cl_now_ns(), .write_ns = w->io_write_ns, .sync_ns = w->io_sync_ns};
    w->io_write_ns = w->io_sync_ns = 0;
}

/* Everything written is durable now: advance durable_lsn, count the
 * transactions this made durable, wake waiters. */
static void mark_durable(struct wal *w) { wal_mark_durable_locked(w, w->written_lsn, w->written_txns); }

int wal_create_segments_locked(struct wal *w, uint64_t target)
{
    while (w->created_segno < wal_lsn_segno(target - 1, w->seg_size)) {
        int rc = wal_pool_take(w, w->created_segno + 1);
        if (rc)
            return wal_set_broken(w, rc);
        w->created_segno++;
    }
    return 0;
}

int wal_txns_upto_locked(const struct wal *w, uint64_t lsn, uint64_t *txns)
{
    uint64_t n = w->txns_appended, k;
    for (k = n; k > 0 && n - k < WAL_COMMIT_RING; k--)
        if (wal_commit_lsn_of(w, k) <= lsn) {
            *txns = k;
            return 1;
        }
    *txns = 0;
    return k == 0; /* 1: none at or below lsn; 0: the ring no longer remembers */
}

static int write_to(struct wal *w, uint64_t target, uint64_t txns);

int wal_write_locked(struct wal *w, uint64_t lsn)
{
    uint64_t target, txns;

    if (wal_broken(w))
        return CL_EBROKEN;
    if (w->written_lsn >= lsn)
        return 0;
    pthread_mutex_lock(&w->mu);
    target = wal_ready_lsn_locked(w);
    txns = w->txns_appended;
    pthread_mutex_unlock(&w->mu);
    return write_to(w, target, txns);
}

int wal_write_upto_locked(struct wal *w, uint64_t lsn, uint64_t limit)
{
    uint64_t target = 0, txns = 0, k, bound = limit > lsn ? limit : lsn, a = w->written_lsn;
    int ok = 0;

    if (wal_broken(w))
        return CL_EBROKEN;
    if (lsn && a >= lsn)
        return 0;
    pthread_mutex_lock(&w->mu);
    if (bound < w->last_commit_lsn) {
        if (wal_txns_upto_locked(w, bound, &k) && k > 0 && wal_commit_lsn_of(w, k) > a) {
            ok = 1; /* the last transaction that fits */
            txns = k;
        } else if (wal_txns_upto_locked(w, a, &k) && k < w->txns_appended) {
            ok = 1; /* not one whole transaction fits: the first one */
            txns = k + 1;
        }
        if (ok)
            target = wal_commit_lsn_of(w, txns);
        ok = ok && target >= lsn;
    }
    if (!ok) {
        target = wal_ready_lsn_locked(w);
        txns = w->txns_appended;
    }
    pthread_mutex_unlock(&w->mu);
    return write_to(w, target, txns);
}

/* io_mu held: writes [written_lsn, target), target being end_lsn or a
 * transaction's end, txns the complete transactions below it. */
static int write_to(struct wal *w, uint64_t target, uint64_t txns)
{
    uint64_t a = w->written_lsn;
    int rc;

    if (a >= target)
        return 0;

    /* W3, first half: every segment this write reaches exists. */
    rc = wal_create_segments_locked(w, target);
    if (rc)
        return rc;

    while (a < target) {
        uint64_t segno = wal_lsn_segno(a, w->seg_size), stop = target, sw = 0;
        pthread_mutex_lock(&w->mu);
        if (w->swq_len)
            sw = w->swq[w->swq_head];
        pthread_mutex_unlock(&w->mu);
        if (sw && sw <= target)
            stop = sw; /* this segment's data ends with its SWITCH record */
        rc = open_segment(w, segno);
        if (rc == 0)
            rc = write_range(w, a, stop);
        if (rc)
            return wal_set_broken(w, rc);
        a = stop;
        if (stop == sw) {
            /* W3, second half: leave the segment synced. */
            if (!w->write_is_sync) {
                rc = timed_sync(w, w->cur.f);
                if (rc)
                    return wal_set_broken(w, rc);
            }
            vfs_close(w->cur.f);
            w->cur.f = NULL;
            wal_add64(&w->st.segment_switches, 1);
            a = wal_segment_start_lsn(segno + 1, w->seg_size);
            pthread_mutex_lock(&w->mu);
            w->swq_head = (w->swq_head + 1) % WAL_SWITCH_QUEUE;
            w->swq_len--;
            CL_INVARIANT("W1", a >= w->written_lsn && a <= w->end_lsn);
            wal_store64(&w->written_lsn, a);
            wal_store64(&w->durable_lsn, a);
            wal_note_batch_locked(w, a);
            pthread_mutex_unlock(&w->mu);
            if (w->policy->advanced)
                w->policy->advanced(w);
        } else {
            pthread_mutex_lock(&w->mu);
            CL_INVARIANT("W1", a >= w->written_lsn && a <= w->end_lsn);
            wal_store64(&w->written_lsn, a);
            pthread_mutex_unlock(&w->mu);
        }
    }
    w->written_txns = txns;
    if (w->write_is_sync)
        mark_durable(w);
    return 0;
}

int wal_sync_locked(struct wal *w)
{
    int rc;
    if (wal_broken(w))
        return CL_EBROKEN;
    if (w->write_is_sync || w->durable_lsn >= w->written_lsn || !w->cur.f)
        return 0;
    rc = timed_sync(w, w->cur.f);
    if (rc)
        return wal_set_broken(w, rc); /* never retried: the pages may be lost */
    mark_durable(w);
    return 0;
}

/* ---- appending -------------------------------------------------------------- */

/* Writes out everything buffered (append_mu held, mu not held). */
static int flush_buffered(struct wal *w)
{
    pthread_mutex_lock(&w->io_mu);
    int rc = wal_write_locked(w, UINT64_MAX);
    pthread_mutex_unlock(&w->io_mu);
    return rc;
}

/* mu held (and append_mu): makes room in the ring for need bytes at
 * end_lsn, and for a switch-queue entry when want_swq.  May drop mu.
 * Under log_insert slots the bytes of earlier slots may still be being
 * copied: the writer cannot pass them yet, so this waits (yielding) for
 * their members, which hold no lock while they copy. */
static int make_room(struct wal *w, uint64_t need, int want_swq)
{
    while (w->end_lsn + need - w->written_lsn > w->buf_cap ||
           (want_swq && w->swq_len == WAL_SWITCH_QUEUE)) {
        int rc;
        uint64_t before = w->written_lsn;
        pthread_mutex_unlock(&w->mu);
        if (need > w->buf_cap) {
            /* A record larger than the ring: empty the ring and grow it. */
            pthread_mutex_lock(&w->io_mu);
            rc = wal_write_locked(w, UINT64_MAX);
            pthread_mutex_lock(&w->mu);
            if (rc == 0 && w->written_lsn != w->end_lsn) {
                pthread_mutex_unlock(&w->io_mu);
                pthread_mutex_unlock(&w->mu);
                sched_yield(); /* a slot still being copied: the ring is not empty yet */
                pthread_mutex_lock(&w->mu);
                continue;
            }
            if (rc == 0) {
                uint64_t cap = (need * 2 + 4095) & ~(uint64_t)4095;
                uint8_t *nb = malloc((size_t)cap);
                if (!nb) {
                    rc = CL_ENOMEM;
                } else {
                    free(w->buf);
                    w->buf = nb;
                    w->buf_cap = cap;
                }
            }
            pthread_mutex_unlock(&w->io_mu);
        } else {
            rc = flush_buffered(w);
            pthread_mutex_lock(&w->mu);
            if (rc == 0 && w->written_lsn == before && w->end_lsn + need - w->written_lsn > w->buf_cap) {
                pthread_mutex_unlock(&w->mu);
                sched_yield(); /* nothing written: earlier slots still being copied */
                pthread_mutex_lock(&w->mu);
            }
        }
        if (rc)
            return rc;
    }
    return 0;
}

void wal_put_record(struct wal *w, uint64_t lsn, enum wal_rec_type type, uint64_t txn_id, const struct wal_part *parts,
                    int nparts, uint32_t plen)
{
    uint8_t h[WAL_REC_HEADER];
    uint64_t asz = wal_align_up(WAL_REC_HEADER + (uint64_t)plen), at = lsn + WAL_REC_HEADER;
    uint64_t segno = wal_lsn_segno(lsn, w->seg_size);
    wal_record_header_encode(h, plen, lsn, txn_id, wal_load64(&w->durable_lsn), (uint32_t)segno, type);
    uint32_t crc = crc32c_extend(0, h + 4, WAL_REC_HEADER - 4);
    for (int i = 0; i < nparts; i++) {
        crc = crc32c_extend(crc, parts[i].p, parts[i].n);
        ring_put(w, at, parts[i].p, parts[i].n);
        at += parts[i].n;
    }
    put_le32(h, crc);
    ring_put(w, lsn, h, WAL_REC_HEADER);
    ring_put(w, at, NULL, (size_t)(lsn + asz - at));
}

int wal_reserve_locked(struct wal *w, uint64_t asz, uint64_t *at)
{
    uint64_t pos = w->end_lsn;
    int rc;

    if (wal_lsn_offset(pos, w->seg_size) + asz + WAL_REC_HEADER > w->seg_size) {
        rc = make_room(w, WAL_REC_HEADER, 1);
        if (rc)
            return rc;
        wal_put_record(w, pos, WAL_REC_SWITCH, 0, NULL, 0, 0);
        w->swq[(w->swq_head + w->swq_len) % WAL_SWITCH_QUEUE] = pos + WAL_REC_HEADER;
        w->swq_len++;
        w->end_lsn = wal_segment_start_lsn(wal_lsn_segno(pos, w->seg_size) + 1, w->seg_size);
    }
    rc = make_room(w, asz, 0);
    if (rc == 0)
        *at = w->end_lsn;
    return rc;
}

/* append_mu held: appends one record, preceded by a SWITCH when it does not
 * fit in the current segment. */
static int append_record(struct wal *w, enum wal_rec_type type, uint64_t txn_id, const struct wal_part *parts,
                         int nparts, uint32_t plen, int is_commit)
{
    uint64_t asz = wal_align_up(WAL_REC_HEADER + (uint64_t)plen), pos;
    int rc;

    pthread_mutex_lock(&w->mu);
    rc = wal_reserve_locked(w, asz, &pos);
    if (rc)
        goto out;
    wal_put_record(w, pos, type, txn_id, parts, nparts, plen);
    w->end_lsn = pos + asz;
    CL_INVARIANT("W1", w->written_lsn <= pos && wal_load64(&w->durable_lsn) <= w->written_lsn);
    if (is_commit) {
        w->commit_ring[w->txns_appended % WAL_COMMIT_RING] = w->end_lsn;
        w->txns_appended++;
        w->last_commit_lsn = w->end_lsn;
    }
out:
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int wal_append_txn(struct wal *w, uint64_t txn_id, const struct wal_op *ops, size_t n,
                   uint64_t *commit_lsn)
{
    /* The largest record a segment holds: after the header block, leaving
     * room for the SWITCH record. */
    uint64_t max_rec = w->seg_size - WAL_SEG_HEADER - WAL_REC_HEADER;
    uint8_t hdr[WAL_PUT_HDR], cbuf[WAL_COMMIT_LEN];
    int rc = 0;

    if (wal_broken(w))
        return CL_EBROKEN;
    if (n > UINT32_MAX)
        return CL_ETOOBIG;
    for (size_t i = 0; i < n; i++) {
        uint64_t plen = ops[i].del ? WAL_DEL_HDR + (uint64_t)ops[i].klen
                                   : WAL_PUT_HDR + (uint64_t)ops[i].klen + ops[i].vlen;
        if (ops[i].klen > UINT16_MAX || wal_align_up(WAL_REC_HEADER + plen) > max_rec)
            return CL_ETOOBIG;
    }
    if (w->slots) {
        rc = wal_slot_append(w, txn_id, ops, n, commit_lsn);
        if (rc && rc != CL_ETOOBIG && !wal_broken(w))
            wal_set_broken(w, rc);
        if (rc != CL_ETOOBIG)
            return rc;
        rc = 0; /* larger than a slot holds: appended alone, below */
    }

    pthread_mutex_lock(&w->append_mu);
    if (w->slots)
        wal_slots_drain(w); /* the slots positioned before it are counted first */
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct wal_op *op = &ops[i];
        struct wal_part parts[3];
        put_le16(hdr, (uint16_t)op->klen);
        parts[1].p = op->key;
        parts[1].n = op->klen;
        if (op->del) {
            parts[0].p = hdr;
            parts[0].n = WAL_DEL_HDR;
            rc = append_record(w, WAL_REC_DEL, txn_id, parts, 2, WAL_DEL_HDR + op->klen, 0);
        } else {
            put_le32(hdr + 2, op->vlen);
            parts[0].p = hdr;
            parts[0].n = WAL_PUT_HDR;
            parts[2].p = op->val;
            parts[2].n = op->vlen;
            rc = append_record(w, WAL_REC_PUT, txn_id, parts, 3,
                               WAL_PUT_HDR + op->klen + op->vlen, 0);
        }
    }
    if (rc == 0) {
        struct wal_part p = {cbuf, WAL_COMMIT_LEN};
        put_le32(cbuf, (uint32_t)n);
        rc = append_record(w, WAL_REC_COMMIT, txn_id, &p, 1, WAL_COMMIT_LEN, 1);
    }
    if (rc == 0) {
        pthread_mutex_lock(&w->mu);
        *commit_lsn = w->end_lsn;
        pthread_mutex_unlock(&w->mu);
        wal_add64(&w->st.appends, 1);
    }
    pthread_mutex_unlock(&w->append_mu);
    /* A transaction cut short would leave its records without a COMMIT
     * ahead of later transactions: no more appends after that. */
    if (rc && !wal_broken(w))
        wal_set_broken(w, rc);
    return rc;
}

/* ---- the API around the policy --------------------------------------------- */

/* Splits a commit's time [t0, t1) by the first durable advance that
 * covered lsn: its I/O, as far as it fell after t0, then the wake-up; the
 * rest is queueing.  at_write: the commit was answered at its write(2)
 * (a synchronous commit under none or periodic, an asynchronous one under
 * none), which is then all of it. */
int wal_find_batch(struct wal *w, uint64_t lsn, struct wal_batch *b)
{
    int found = 0;
    pthread_mutex_lock(&w->mu);
    for (uint64_t k = w->nbatches; k > 0 && w->nbatches - k < WAL_BATCH_RING; k--) {
        const struct wal_batch *x = &w->batches[(k - 1) % WAL_BATCH_RING];
        if (x->lsn < lsn)
            break;
        *b = *x;
        found = 1;
    }
    pthread_mutex_unlock(&w->mu);
    return found;
}

void wal_split_commit_time(struct wal *w, uint64_t lsn, uint64_t t0, uint64_t t1, int at_write,
                           struct wal_commit_times *out)
{
    struct wal_batch b = {0};
    int found = at_write ? 0 : wal_find_batch(w, lsn, &b);
    wal_split_by_batch(found ? &b : NULL, t0, t1, at_write, out);
}

void wal_split_by_batch(const struct wal_batch *bp, uint64_t t0, uint64_t t1, int at_write,
                        struct wal_commit_times *out)
{
    uint64_t total = t1 - t0;

    memset(out, 0, sizeof *out);
    if (at_write) {
        out->write_ns = total;
        return;
    }
    struct wal_batch b = bp ? *bp : (struct wal_batch){0};
    if (!bp || b.at_ns <= t0 || b.at_ns > t1) { /* durable before it asked, or not remembered */
        out->queue_ns = total;
        return;
    }
    uint64_t before = b.at_ns - t0; /* the time from asking to durable */
    out->sync_ns = b.sync_ns < before ? b.sync_ns : before;
    before -= out->sync_ns;
    out->write_ns = b.write_ns < before ? b.write_ns : before;
    out->queue_ns = before - out->write_ns;
    out->wakeup_ns = t1 - b.at_ns;
}

int wal_commit_timed(struct wal *w, uint64_t commit_lsn, struct wal_commit_times *out)
{
    uint64_t t0 = cl_now_ns();
    int rc = wal_broken(w) ? CL_EBROKEN : w->policy->commit(w, commit_lsn);
    uint64_t t1 = cl_now_ns();
    /* C4 (docs/design.md): a durable policy acknowledges only what is durable */
    CL_INVARIANT("C4", rc != 0 || !w->policy->durable || wal_durable_lsn(w) >= commit_lsn);
    if (rc == 0)
        wal_add64(&w->st.commits, 1);
    wal_add64(&w->st.wait_ns, t1 - t0);
    if (rc == 0 && out)
        wal_split_commit_time(w, commit_lsn, t0, t1, !w->policy->durable, out);
    return rc;
}

int wal_commit(struct wal *w, uint64_t commit_lsn) { return wal_commit_timed(w, commit_lsn, NULL); }

int wal_flush(struct wal *w, uint64_t lsn, int sync)
{
    int rc;
    if (wal_broken(w))
        return CL_EBROKEN;
    pthread_mutex_lock(&w->io_mu);
    rc = wal_write_locked(w, lsn);
    if (rc == 0 && sync && w->durable_lsn < (lsn < w->written_lsn ? lsn : w->written_lsn))
        rc = wal_sync_locked(w);
    pthread_mutex_unlock(&w->io_mu);
    wal_async_deliver(w); /* the sync may have made asynchronous commits durable, or broken the log */
    return rc;
}

void wal_get_stats(struct wal *w, struct wal_stats *out)
{
    out->appends = wal_load64(&w->st.appends);
    out->commits = wal_load64(&w->st.commits);
    out->syncs = wal_load64(&w->st.syncs);
    out->writes = wal_load64(&w->st.writes);
    out->bytes = wal_load64(&w->st.bytes);
    out->max_commits_per_sync = wal_load64(&w->st.max_commits_per_sync);
    for (size_t i = 0; i < CL_BATCH_HIST; i++)
        out->batch_hist[i] = wal_load64(&w->st.batch_hist[i]);
    out->sync_ns = wal_load64(&w->st.sync_ns);
    out->wait_ns = wal_load64(&w->st.wait_ns);
    out->segments_created = wal_load64(&w->st.segments_created);
    out->segments_recycled = wal_load64(&w->st.segments_recycled);
    out->segments_reused = wal_load64(&w->st.segments_reused);
    out->segments_removed = wal_load64(&w->st.segments_removed);
    out->segment_switches = wal_load64(&w->st.segment_switches);
    out->segment_waits = wal_load64(&w->st.segment_waits);
    out->segment_wait_ns = wal_load64(&w->st.segment_wait_ns);
    out->prealloc_error = __atomic_load_n(&w->st.prealloc_error, __ATOMIC_ACQUIRE);
    out->async_commits = wal_load64(&w->st.async_commits);
    out->waiter_sleeps = wal_load64(&w->st.waiter_sleeps);
    out->waiter_wakeups = wal_load64(&w->st.waiter_wakeups);
    out->waiter_spurious = wal_load64(&w->st.waiter_spurious);
    out->partial_wakeups = wal_load64(&w->st.partial_wakeups);
    out->leader_handoffs = wal_load64(&w->st.leader_handoffs);
    out->slots = wal_load64(&w->st.slots);
    out->slot_joins = wal_load64(&w->st.slot_joins);
}

void wal_reset_max(struct wal *w) { wal_store64(&w->st.max_commits_per_sync, 0); }

int wal_retire_below(struct wal *w, uint64_t segno)
{
    uint64_t *segs = NULL;
    size_t n = 0, removed = 0;
    int rc = wal_list_segments(w->vfs, w->dir, &segs, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && segs[i] < segno && rc == 0; i++) {
        int gone = 0;
        rc = wal_pool_retire(w, segs[i], &gone);
        removed += (size_t)gone;
    }
    free(segs);
    if (rc == 0 && removed)
        rc = vfs_sync_dir(w->vfs, w->dir);
    return rc;
}

/* ---- open and close ---------------------------------------------------------- */

static void wal_free(struct wal *w)
{
    wal_pool_stop(w);
    wal_pool_destroy(w);
    if (w->cur.f)
        vfs_close(w->cur.f);
    wal_async_destroy(w);
    pthread_mutex_destroy(&w->mu);
    pthread_mutex_destroy(&w->io_mu);
    pthread_mutex_destroy(&w->append_mu);
    free(w->slots);
    free(w->stage);
    free(w->tail_block);
    free(w->buf);
    free(w->dir);
    free(w);
}

void wal_txn_active(struct wal *w, int delta)
{
    __atomic_add_fetch(&w->active_txns, delta, __ATOMIC_RELAXED);
}

void wal_say_why(struct wal *w, const char *fmt, ...)
{
    va_list ap;
    if (!w->why_len || w->why[0])
        return; /* not asked, or the first reason said */
    va_start(ap, fmt);
    vsnprintf(w->why, w->why_len, fmt, ap);
    va_end(ap);
}

/* The rwf-dsync method, once at open: the kernel takes pwritev2 with
 * RWF_DSYNC on this segment, or the open fails with CL_ENOTSUP.  The probe
 * writes the segment header's first bytes again, unchanged (they are
 * durable already), so it changes nothing on disk. */
static int probe_write_dsync(struct wal *w)
{
    uint8_t b[8];
    size_t got = 0;
    int rc = vfs_pread(w->cur.f, b, sizeof b, 0, &got);
    if (rc == 0 && got != sizeof b)
        rc = -EIO;
    if (rc == 0)
        rc = vfs_pwrite(w->cur.f, b, sizeof b, 0);
    if (rc == -EOPNOTSUPP || rc == -EINVAL || rc == -ENOSYS) {
        wal_say_why(w, "rwf-dsync: the kernel refuses pwritev2(RWF_DSYNC): %s", strerror(-rc));
        rc = CL_ENOTSUP;
    }
    return rc;
}

int wal_open(const struct wal_config *cfg, uint64_t start_segno, struct wal **out)
{
    struct wal *w;
    int rc;

    *out = NULL;
    /* The options were checked by cl_open (cl_options_check); what is the
     * log's own is checked here. */
    if (!cfg->dir || cfg->segment_size < WAL_MIN_SEGMENT || cfg->segment_size % WAL_SEG_HEADER)
        return CL_EINVAL;
    const struct wal_policy *pol = wal_policy_for(cfg->opt.sync);
    if (!pol)
        return CL_ENOTSUP;
    w = calloc(1, sizeof *w);
    if (!w)
        return CL_ENOMEM;
    pthread_mutex_init(&w->append_mu, NULL);
    pthread_mutex_init(&w->io_mu, NULL);
    pthread_mutex_init(&w->mu, NULL);
    wal_async_init(w);
    w->opt = cfg->opt;
    wal_pool_init(w, start_segno + 1);
    w->vfs = cfg->vfs ? cfg->vfs : vfs_posix();
    w->dir = strdup(cfg->dir);
    w->db_id = cfg->db_id;
    w->seg_size = cfg->segment_size;
    w->method = cfg->opt.method;
    w->why = cfg->why;
    w->why_len = cfg->why ? cfg->why_len : 0;
    if (w->why_len)
        w->why[0] = 0;
    if (cfg->opt.sync == CL_SYNC_URING && cfg->opt.uring_sync == CL_URING_SYNC_RWF_DSYNC) {
        /* RWF_DSYNC writes in place of the linked sync: the log is written
         * as the rwf-dsync method writes it, ring writes included */
        if (cfg->opt.method == CL_METHOD_DSYNC || cfg->opt.method == CL_METHOD_DIRECT) {
            rc = CL_EINVAL; /* no linked sync to replace */
            goto fail;
        }
        w->method = CL_METHOD_RWF_DSYNC;
    }
    w->policy = pol;
    w->buf_cap = cfg->buffer_size ? cfg->buffer_size : WAL_DEFAULT_BUFFER;
    if (w->buf_cap < 2 * VFS_DIRECT_ALIGN)
        w->buf_cap = 2 * VFS_DIRECT_ALIGN;
    w->buf = malloc((size_t)w->buf_cap);
    if (!w->dir || !w->buf) {
        rc = CL_ENOMEM;
        goto fail;
    }
    if (w->method == CL_METHOD_DSYNC)
        w->open_flags = VFS_O_DSYNC;
    if (w->method == CL_METHOD_RWF_DSYNC)
        w->open_flags = VFS_O_WRITE_DSYNC;
    if (w->method == CL_METHOD_DIRECT) {
        void *p1, *p2;
        w->open_flags = VFS_O_DSYNC | VFS_O_DIRECT;
        if (posix_memalign(&p1, VFS_DIRECT_ALIGN, WAL_STAGE_SIZE)) {
            rc = CL_ENOMEM;
            goto fail;
        }
        w->stage = p1;
        if (posix_memalign(&p2, VFS_DIRECT_ALIGN, VFS_DIRECT_ALIGN)) {
            rc = CL_ENOMEM;
            goto fail;
        }
        w->tail_block = p2;
    }
    w->write_is_sync = w->open_flags != 0;
    w->tail_block_lsn = UINT64_MAX;
    if (cfg->opt.log_insert == CL_LOG_INSERT_SLOTS && (rc = wal_slots_init(w)) != 0)
        goto fail;

    /* The log starts at the first record of a fresh segment; everything
     * below it belongs to earlier logs and counts as durable. */
    w->end_lsn = w->last_commit_lsn = wal_segment_start_lsn(start_segno, w->seg_size);
    w->written_lsn = w->durable_lsn = w->end_lsn;
    rc = wal_segment_create(w, start_segno);
    if (rc)
        goto fail;
    w->created_segno = start_segno;
    w->st.segments_created = 1;
    rc = open_segment(w, start_segno);
    if (rc == CL_ENOTSUP)
        wal_say_why(w, "direct: the filesystem refuses O_DIRECT");
    if (rc == 0 && (w->open_flags & VFS_O_WRITE_DSYNC))
        rc = probe_write_dsync(w);
    if (rc)
        goto fail;
    if (pol->start && (rc = pol->start(w)) != 0)
        goto fail;
    if ((rc = wal_pool_start(w)) != 0) {
        if (pol->stop)
            pol->stop(w);
        goto fail;
    }
    w->why = NULL; /* the caller's, for wal_open only */
    w->why_len = 0;
    *out = w;
    return 0;
fail:
    wal_free(w);
    return rc;
}

void wal_close(struct wal *w)
{
    if (!w)
        return;
    wal_pool_stop(w);
    if (w->policy->stop)
        w->policy->stop(w);
    wal_async_finish(w); /* every callback called: the durable ones with 0 */
    wal_free(w);
}
