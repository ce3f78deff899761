/*
 * txn.c -- transactions and the commit protocol: the write set (a sorted
 * private buffer, read-your-writes), the writer lock (taken at a write
 * transaction's first read, or at commit), scans over a stable view, and
 * commit: append to the log under the writer lock (C1), apply to the tree
 * and release the lock before the sync with early lock release (C2), or
 * after it without (C3), acknowledge as the policy promises (C4), break
 * the handle on a failed write or sync (C5).  Synchronous (cl_commit) and
 * asynchronous (cl_commit_async) commits share one path.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "commitlab.h"
#include "store.h"
#include "engine_internal.h"
#include "vfs.h"
#include "vfs_latency.h"
#include "wal.h"

#include "db.h"

/* ---- transactions ------------------------------------------------------------ */

/* Serialisable write transactions, pessimistically (LMDB's way): a write
 * transaction takes the writer lock at its first read (cl_get, cl_scan,
 * cl_del) and keeps it until its commit appends it to the log (with early
 * lock release; until it is durable without), or until it is aborted.
 * Read-modify-write transactions thus run one at a time, in log order: no
 * lost update, no write skew.  A transaction that only writes takes the
 * lock at commit, as before, so blind writers pay nothing.
 *
 * The writer lock is not recursive: the database records which thread
 * holds it (writer_owner), and a second write transaction of the same
 * thread that needs it gets CL_EBUSY instead of waiting for itself.  The
 * record is per database, so a thread may hold the writer locks of any
 * number of databases at once. */

/* A per-thread identity, never 0: the address of a thread-local. */
static __thread char thread_tag;
static uintptr_t self_tag(void) { return (uintptr_t)&thread_tag; }

/* Only the owning thread stores its own tag (after locking) and clears it
 * (before unlocking), so no other thread can read its own tag here. */
int db_held_here(const struct cl_db *db)
{
    return __atomic_load_n(&db->writer_owner, __ATOMIC_RELAXED) == self_tag();
}

static int writer_acquire(struct cl_txn *t)
{
    if (t->locked)
        return 0;
    if (db_held_here(t->db))
        return CL_EBUSY;
    /* A callback runs on a thread that may hold what the writer lock's
     * holder waits for (the uring leader's io_mu, the flusher's sync), so
     * it never waits for the writer lock: a write transaction in a callback
     * may write its own set, and is refused at its first read or commit. */
    if (wal_in_callback(t->db->wal))
        return CL_EBUSY;
    pthread_mutex_lock(&t->db->writer);
    __atomic_store_n(&t->db->writer_owner, self_tag(), __ATOMIC_RELAXED);
    t->locked = 1;
    return 0;
}

static void writer_release(struct cl_txn *t)
{
    if (!t->locked)
        return;
    __atomic_store_n(&t->db->writer_owner, 0, __ATOMIC_RELAXED);
    t->locked = 0;
    pthread_mutex_unlock(&t->db->writer);
}

int cl_txn_begin(struct cl_db *db, unsigned flags, struct cl_txn **out)
{
    struct cl_txn *t;
    if (!db || !out || (flags & ~CL_TXN_RDONLY))
        return CL_EINVAL;
    if (db_forked(db))
        return CL_EFORK;
    if (!(flags & CL_TXN_RDONLY) && db_broken(db))
        return CL_EBROKEN;
    t = calloc(1, sizeof *t);
    if (!t)
        return CL_ENOMEM;
    t->db = db;
    t->flags = flags;
    if (!(flags & CL_TXN_RDONLY))
        wal_txn_active(db->wal, +1); /* for the group policy's commit_siblings */
    *out = t;
    return 0;
}

/* Index of key in the write set, or -(insertion point)-1. */
static long ws_find(const struct cl_txn *t, const void *key, size_t klen)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = store_key_cmp(t->ws[mid].key, t->ws[mid].klen, key, klen);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

static int ws_set(struct cl_txn *t, const void *key, size_t klen, const void *val, size_t vlen, int del)
{
    long i = ws_find(t, key, klen);
    uint8_t *v = NULL;
    if (!del) {
        v = malloc(vlen ? vlen : 1);
        if (!v)
            return CL_ENOMEM;
        if (vlen)
            memcpy(v, val, vlen);
    }
    if (i >= 0) {
        free(t->ws[i].val);
        t->ws[i].val = v;
        t->ws[i].vlen = (uint32_t)vlen;
        t->ws[i].del = del;
        return 0;
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 8;
        struct ws_entry *ws = realloc(t->ws, nc * sizeof *ws);
        if (!ws) {
            free(v);
            return CL_ENOMEM;
        }
        t->ws = ws;
        t->cap = nc;
    }
    uint8_t *k = malloc(klen);
    if (!k) {
        free(v);
        return CL_ENOMEM;
    }
    memcpy(k, key, klen);
    size_t at = (size_t)(-i - 1);
    memmove(&t->ws[at + 1], &t->ws[at], (t->n - at) * sizeof *t->ws);
    t->ws[at] = (struct ws_entry){.key = k, .klen = (uint32_t)klen, .val = v, .vlen = (uint32_t)vlen, .del = del};
    t->n++;
    return 0;
}

static int check_write(struct cl_txn *t, size_t klen)
{
    if (!t)
        return CL_EINVAL;
    if (db_forked(t->db))
        return CL_EFORK;
    if (t->flags & CL_TXN_RDONLY)
        return CL_EREADONLY;
    if (db_broken(t->db))
        return CL_EBROKEN;
    if (klen == 0)
        return CL_EINVAL;
    if (klen > CL_MAX_KEY)
        return CL_ETOOBIG;
    return 0;
}

int cl_put(struct cl_txn *t, const void *key, size_t klen, const void *val, size_t vlen)
{
    int rc = check_write(t, klen);
    if (rc)
        return rc;
    if (vlen > CL_MAX_VALUE)
        return CL_ETOOBIG;
    if (!key || (vlen && !val))
        return CL_EINVAL;
    return ws_set(t, key, klen, val, vlen, 0);
}

int cl_get(struct cl_txn *t, const void *key, size_t klen, void *buf, size_t cap, size_t *vlen)
{
    if (!t || !key || klen == 0)
        return CL_EINVAL;
    if (db_forked(t->db))
        return CL_EFORK;
    if (klen > CL_MAX_KEY)
        return CL_ETOOBIG;
    long i = ws_find(t, key, klen);
    if (i >= 0) {
        const struct ws_entry *e = &t->ws[i];
        if (e->del)
            return CL_ENOTFOUND;
        if (vlen)
            *vlen = e->vlen;
        if (buf && cap)
            memcpy(buf, e->val, e->vlen < cap ? e->vlen : cap);
        return 0;
    }
    if (!(t->flags & CL_TXN_RDONLY)) {
        int rc = writer_acquire(t); /* what it reads stays as read until it commits */
        if (rc)
            return rc;
    }
    size_t dummy;
    return store_get(t->db->store, key, klen, buf, cap, vlen ? vlen : &dummy);
}

int cl_del(struct cl_txn *t, const void *key, size_t klen)
{
    int rc = check_write(t, klen);
    size_t vl;
    if (rc)
        return rc;
    rc = cl_get(t, key, klen, NULL, 0, &vl);
    if (rc)
        return rc;
    return ws_set(t, key, klen, NULL, 0, 1);
}

/* The tree's part of a scan, copied out so the write set can be merged in
 * without holding the store's read lock across the caller's callback. */
struct scan_buf {
    struct ws_entry *e;
    size_t n, cap;
    int err;
};

static int scan_collect(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct scan_buf *sb = arg;
    if (sb->n == sb->cap) {
        size_t nc = sb->cap ? sb->cap * 2 : 64;
        struct ws_entry *e = realloc(sb->e, nc * sizeof *e);
        if (!e)
            goto nomem;
        sb->e = e;
        sb->cap = nc;
    }
    uint8_t *b = malloc(klen + vlen + 1);
    if (!b)
        goto nomem;
    memcpy(b, key, klen);
    if (vlen)
        memcpy(b + klen, val, vlen);
    sb->e[sb->n++] = (struct ws_entry){.key = b, .klen = (uint32_t)klen, .val = b + klen, .vlen = (uint32_t)vlen};
    return 0;
nomem:
    sb->err = CL_ENOMEM;
    return 1;
}

/* The transaction's own writes in [lo, hi), copied into sb (deletions
 * too, so that they shadow the tree). */
static int ws_copy_range(const struct cl_txn *t, const void *lo, size_t lolen, const void *hi, size_t hilen,
                         struct scan_buf *sb)
{
    size_t j = 0;
    if (lo) {
        long f = ws_find(t, lo, lolen);
        j = (size_t)(f >= 0 ? f : -f - 1);
    }
    for (; j < t->n && (!hi || store_key_cmp(t->ws[j].key, t->ws[j].klen, hi, hilen) < 0); j++) {
        const struct ws_entry *w = &t->ws[j];
        if (scan_collect(sb, w->key, w->klen, w->val, w->del ? 0 : w->vlen))
            return sb->err;
        sb->e[sb->n - 1].del = w->del;
    }
    return 0;
}

static void scan_buf_free(struct scan_buf *sb)
{
    for (size_t k = 0; k < sb->n; k++)
        free(sb->e[k].key);
    free(sb->e);
}

/* A scan visits a stable view: the tree's range and the transaction's own
 * writes as they were when it began, both copied first.  So a callback
 * that writes (cl_put, cl_del on the same transaction) has its write
 * applied once, to the write set, and never sees it in this scan: a
 * counter incremented by its own scan ends one higher, and inserting keys
 * inside the range does not make the scan run on. */
int cl_scan(struct cl_txn *t, const void *lo, size_t lolen, const void *hi, size_t hilen,
            cl_scan_fn fn, void *arg)
{
    struct scan_buf sb = {0}, wb = {0};
    size_t i = 0, j = 0;
    int rc;

    if (!t || !fn)
        return CL_EINVAL;
    if (db_forked(t->db))
        return CL_EFORK;
    if (!(t->flags & CL_TXN_RDONLY) && (rc = writer_acquire(t)) != 0)
        return rc;
    rc = store_scan(t->db->store, lo, lolen, hi, hilen, scan_collect, &sb);
    if (rc == 0 && sb.err)
        rc = sb.err;
    if (rc < 0)
        goto out;
    rc = ws_copy_range(t, lo, lolen, hi, hilen, &wb);
    if (rc < 0)
        goto out;
    rc = 0;
    /* Merge the tree's range with the write set's, the latter shadowing. */
    while (rc == 0) {
        const struct ws_entry *w = j < wb.n ? &wb.e[j] : NULL, *e = i < sb.n ? &sb.e[i] : NULL;
        if (!w && !e)
            break;
        int c = !w ? -1 : !e ? 1 : store_key_cmp(e->key, e->klen, w->key, w->klen);
        if (c < 0) {
            rc = fn(arg, e->key, e->klen, e->val, e->vlen);
            i++;
            continue;
        }
        if (c == 0)
            i++; /* the transaction's own write shadows the tree */
        j++;
        if (!w->del)
            rc = fn(arg, w->key, w->klen, w->val, w->vlen);
    }
out:
    scan_buf_free(&sb);
    scan_buf_free(&wb);
    return rc;
}

/* In a forked child only the memory: the handle is the parent's. */
static void txn_free(struct cl_txn *t)
{
    if (!db_forked(t->db)) {
        writer_release(t);
        if (!(t->flags & CL_TXN_RDONLY))
            wal_txn_active(t->db->wal, -1);
    }
    for (size_t i = 0; i < t->n; i++) {
        free(t->ws[i].key);
        free(t->ws[i].val);
    }
    free(t->ws);
    free(t);
}

void cl_abort(struct cl_txn *t)
{
    if (t)
        txn_free(t);
}

int cl_commit(struct cl_txn *t) { return cl_commit_timed(t, NULL); }

/* A timed asynchronous commit (cl_commit_async_timed): the caller's
 * callback, the phases measured before the hand-over to the log, and the
 * log's split of the wait after it, filled just before the callback is
 * called (wal_async_time).  Allocated only for a timed commit, so that an
 * untimed one pays nothing for it. */
struct timed_commit {
    cl_durable_timed_fn fn;
    void *arg;
    struct cl_commit_times tm;
    struct wal_commit_times wt;
    int wait_by_log;   /* the log times the wait (wt); else tm is whole already */
};

static void timed_commit_done(void *arg, int rc)
{
    struct timed_commit *x = arg;
    if (rc == 0 && x->wait_by_log) {
        x->tm.queue_ns = x->wt.queue_ns;
        x->tm.write_ns = x->wt.write_ns;
        x->tm.sync_ns = x->wt.sync_ns;
        x->tm.wakeup_ns = x->wt.wakeup_ns;
    }
    x->fn(x->arg, rc, rc ? NULL : &x->tm);
    free(x);
}

/* The commit protocol, C1-C5: synchronous (fn NULL: returns once durable
 * as the policy promises; *tm filled when tm is not NULL) or asynchronous
 * (returns once appended, applied and its callback registered; fn(arg, rc)
 * comes from the log).  An asynchronous commit is timed when tc is not
 * NULL (fn and arg are then timed_commit_done and tc, tm is &tc->tm):
 * every phase is written before the callback is registered, since it may
 * be called, and tc freed, at once. */
static int commit_txn(struct cl_txn *t, struct cl_commit_times *tm, cl_durable_fn fn, void *arg,
                      struct timed_commit *tc)
{
    struct cl_db *db;
    struct wal_op *wops = NULL;
    struct store_op *sops = NULL;
    struct wal_async_entry *cb = NULL;
    struct wal_commit_times wt = {0};
    struct wal_commit_times *wtp = tm ? &wt : NULL;
    uint64_t lsn = 0, t0, t1, t2, t3, switches0;
    uint64_t apply_ns = 0;
    int rc = 0, registered = 0;
    uint64_t due_seq = 0; /* elr off: this commit's callback, added due (wal_async_deliver_through) */

    if (tm)
        memset(tm, 0, sizeof *tm);

    if (!t)
        return CL_EINVAL;
    db = t->db;
    if (db_forked(db)) {
        txn_free(t); /* consumed, as every commit consumes it; nothing of the parent's is touched */
        return CL_EFORK;
    }
    if (t->n && wal_in_callback(db->wal)) {
        rc = CL_EBUSY; /* a callback of this database's commits would commit on it (reading is allowed) */
        goto out;
    }
    if (fn && !(cb = wal_async_entry_new(fn, arg))) {
        rc = CL_ENOMEM; /* before anything is appended: the commit is refused */
        goto out;
    }
    if ((t->flags & CL_TXN_RDONLY) || t->n == 0) {
        if (cb) { /* nothing to log: due with the commit before it, in order */
            wal_async_add(db->wal, cb, 0);
            cb = NULL;
            registered = 1;
        }
        goto out;
    }
    t0 = cl_now_ns();
    switches0 = wal_segment_switches(db->wal);
    wops = malloc(t->n * sizeof *wops);
    sops = malloc(t->n * sizeof *sops);
    if (!wops || !sops) {
        rc = CL_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct ws_entry *e = &t->ws[i];
        wops[i] = (struct wal_op){.del = e->del, .key = e->key, .klen = e->klen, .val = e->val, .vlen = e->vlen};
        sops[i] = (struct store_op){.del = e->del, .key = e->key, .klen = e->klen, .val = e->val, .vlen = e->vlen};
    }

    t1 = cl_now_ns();
    rc = writer_acquire(t); /* held since the first read, or taken now */
    if (rc)
        goto out;
    t2 = cl_now_ns();
    if (db_broken(db)) {
        writer_release(t);
        rc = CL_EBROKEN;
        goto out;
    }
    rc = wal_append_txn(db->wal, db->next_txn_id++, wops, t->n, &lsn); /* C1 */
    t3 = cl_now_ns();
    if (rc == CL_ETOOBIG) { /* the transaction is refused; the log is intact */
        writer_release(t);
        goto out;
    }
    if (rc == 0 && db->opt.elr) { /* C2 */
        rc = store_apply(db->store, sops, t->n, lsn);
        if (rc == 0 && cb) {
            if (tc) { /* the phases so far; the log times the wait from its hand-over */
                tc->tm.lock_ns = t2 - t1;
                tc->tm.append_ns = t3 - t2;
                tc->tm.apply_ns = cl_now_ns() - t3;
                tc->wait_by_log = 1;
                wal_async_time(cb, &tc->wt);
            }
            /* under the writer lock: callbacks in log order, each after its
             * transaction is visible */
            wal_async_add(db->wal, cb, lsn);
            cb = NULL;
            registered = 1;
        }
        writer_release(t);
        apply_ns = cl_now_ns() - t3;
        if (rc == 0 && registered)
            wal_commit_async(db->wal, lsn); /* a failure breaks the log; the callback says so */
        else if (rc == 0)
            rc = wal_commit_timed(db->wal, lsn, wtp);
    } else if (rc == 0 && cb) { /* C3, asynchronous: the lock is held until durable, as for cl_commit */
        int synced = wal_make_durable_timed(db->wal, lsn, tc ? &wt : NULL);
        uint64_t ta = tc ? cl_now_ns() : 0; /* an untimed one reads no clock */
        if (synced == 0)
            rc = store_apply(db->store, sops, t->n, lsn);
        if (rc == 0 && tc && synced == 0) /* as cl_commit_timed's C3: the wait, then apply */
            tc->tm = (struct cl_commit_times){.lock_ns = t2 - t1, .append_ns = t3 - t2,
                                              .apply_ns = cl_now_ns() - ta, .queue_ns = wt.queue_ns,
                                              .write_ns = wt.write_ns, .sync_ns = wt.sync_ns,
                                              .wakeup_ns = wt.wakeup_ns};
        if (rc == 0) {
            /* durable (the callback gets 0), or the log broke (it gets the error) */
            due_seq = wal_async_add(db->wal, cb, lsn);
            cb = NULL;
            registered = 1;
        }
        writer_release(t);
    } else if (rc == 0) { /* C3 */
        rc = wal_commit_timed(db->wal, lsn, wtp);
        uint64_t ta = cl_now_ns();
        if (rc == 0)
            rc = store_apply(db->store, sops, t->n, lsn);
        writer_release(t);
        apply_ns = cl_now_ns() - ta;
    } else {
        writer_release(t);
    }
    if (rc) {
        db_break(db, rc); /* C5 */
        goto out;
    }
    if (!registered)
        __atomic_add_fetch(&db->commits, 1, __ATOMIC_RELAXED); /* an asynchronous one counts when acknowledged */
    if (tm && !fn) /* an asynchronous commit's are written before it was registered */
        *tm = (struct cl_commit_times){.lock_ns = t2 - t1, .append_ns = t3 - t2, .apply_ns = apply_ns,
                                       .queue_ns = wt.queue_ns, .write_ns = wt.write_ns, .sync_ns = wt.sync_ns,
                                       .wakeup_ns = wt.wakeup_ns};
    if (wal_segment_switches(db->wal) != switches0)
        cl_atomic_max64(&db->max_switch_commit_ns, cl_now_ns() - t0);
    db_maybe_request_checkpoint(db, lsn);
out:
    wal_async_entry_free(cb); /* not registered: the commit was refused, fn is never called */
    free(wops);
    free(sops);
    txn_free(t);
    /* The callbacks due -- this commit's, under none or commit or elr off;
     * others' the log made durable meanwhile -- on this thread, with no
     * lock of the database held.  With elr off this commit's comes before
     * the return, also when another thread is calling callbacks now. */
    if (due_seq)
        wal_async_deliver_through(db->wal, due_seq);
    else
        wal_async_deliver(db->wal); /* inside one of its callbacks: returns at once */
    return rc;
}

int cl_commit_timed(struct cl_txn *t, struct cl_commit_times *tm) { return commit_txn(t, tm, NULL, NULL, NULL); }

int cl_commit_async(struct cl_txn *t, cl_durable_fn fn, void *arg)
{
    if (t && !fn) {
        txn_free(t); /* consumed, also on error */
        return CL_EINVAL;
    }
    return commit_txn(t, NULL, fn, arg, NULL);
}

int cl_commit_async_timed(struct cl_txn *t, cl_durable_timed_fn fn, void *arg)
{
    struct timed_commit *x;
    int rc;
    if (!t)
        return CL_EINVAL;
    if (!fn || !(x = calloc(1, sizeof *x))) {
        txn_free(t); /* consumed, also on error */
        return fn ? CL_ENOMEM : CL_EINVAL;
    }
    x->fn = fn;
    x->arg = arg;
    rc = commit_txn(t, &x->tm, timed_commit_done, x, x);
    if (rc)
        free(x); /* refused: the callback is never called */
    return rc;
}

int cl_sync_wait(struct cl_db *db)
{
    if (!db)
        return CL_EINVAL;
    if (db_forked(db))
        return CL_EFORK;
    return wal_sync_wait(db->wal); /* CL_EBUSY from one of its callbacks */
}

