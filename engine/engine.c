/*
 * engine.c -- the transaction and commit protocol, checkpoints, and
 * recovery orchestration.  It owns the writer lock and the sticky "broken"
 * state; the log (wal/) and the page store (storage/store.h) do the I/O.
 *
 * The commit protocol's invariants, C1-C6, are listed once, in
 * docs/design.md section 3 (serial log order, early lock release, elr off,
 * acknowledgement, sticky failure, segments durable before use); the code
 * names them where it keeps them, and CL_INVARIANT (storage/invariant.h)
 * checks C4 at every acknowledgement (wal_commit).
 *
 * Recovery (cl_open): read the durable meta, redo every transaction whose
 * COMMIT record is in the valid log after the checkpoint LSN, then start
 * the log in a new segment numbered above every existing one and
 * checkpoint, so that nothing left beyond the end of the old log (torn or
 * orphaned records) can ever be read as part of the new one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "commitlab.h"
#include "dirlock.h"
#include "store.h"
#include "engine_internal.h"
#include "vfs.h"
#include "vfs_latency.h"
#include "wal.h"

struct ws_entry {
    uint8_t *key;
    uint8_t *val;
    uint32_t klen, vlen;
    int del;
};

struct cl_txn {
    struct cl_db *db;
    unsigned flags;
    int locked;          /* holds the writer lock (a write transaction that has read) */
    struct ws_entry *ws; /* sorted by key */
    size_t n, cap;
};

struct cl_db {
    char *dir;
    struct dir_lock *lock;       /* exclusive, from before anything is read until freed */
    struct cl_options opt;
    struct vfs *vfs;
    struct vfs *latency_vfs;     /* the emulated slow device wrapper, when asked for */
    struct store *store;
    struct wal *wal;
    uint64_t segment_size;

    pthread_mutex_t writer;      /* the writer lock */
    uintptr_t writer_owner;      /* the holding thread's tag, 0 when free (atomic) */
    int broken;                  /* sticky: the first failure (atomic) */
    uint64_t next_txn_id;        /* under writer */

    pthread_mutex_t ckpt_run;    /* one checkpoint at a time */
    pthread_mutex_t ckpt_mu;     /* guards the fields below */
    pthread_cond_t ckpt_cv;
    pthread_t ckpt_thread;
    int ckpt_thread_started, ckpt_requested, ckpt_stop;
    uint64_t last_ckpt_lsn;      /* atomic */

    uint64_t commits, checkpoints, pause_ns; /* atomic */
    uint64_t max_switch_commit_ns;          /* atomic */
};

static void atomic_max(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* The first failure, the handle's or its log's: a write or sync that
 * failed under an asynchronous commit breaks the log with nobody in
 * cl_commit to see it. */
static int db_broken(struct cl_db *db)
{
    int b = __atomic_load_n(&db->broken, __ATOMIC_ACQUIRE);
    return b || !db->wal ? b : wal_broken(db->wal);
}

/* Records the first failure; the handle stays broken until reopened. */
static void db_break(struct cl_db *db, int err)
{
    int expected = 0;
    if (err == 0)
        err = CL_EBROKEN;
    __atomic_compare_exchange_n(&db->broken, &expected, err, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* ---- checkpoints ------------------------------------------------------- */

static int db_checkpoint(struct cl_db *db)
{
    struct store_ckpt *ck = NULL;
    uint64_t lsn = 0, t0;
    int rc;

    pthread_mutex_lock(&db->ckpt_run);
    pthread_mutex_lock(&db->writer);
    t0 = cl_now_ns();
    rc = db_broken(db) ? CL_EBROKEN : 0;
    if (rc == 0) {
        lsn = wal_end_lsn(db->wal);
        rc = store_checkpoint_begin(db->store, lsn, wal_lsn_segno(lsn, db->segment_size), &ck);
    }
    __atomic_add_fetch(&db->pause_ns, cl_now_ns() - t0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&db->writer);
    if (rc)
        goto out;

    /* The log up to L is made durable before the snapshot that covers it. */
    rc = wal_flush(db->wal, lsn, 1);
    if (rc) {
        store_checkpoint_abandon(db->store, ck); /* nothing written; the handle breaks below */
        ck = NULL;
        goto out;
    }
    rc = store_checkpoint_finish(db->store, ck);
    ck = NULL;
    if (rc)
        goto out;
    __atomic_store_n(&db->last_ckpt_lsn, lsn, __ATOMIC_RELEASE);
    __atomic_add_fetch(&db->checkpoints, 1, __ATOMIC_RELAXED);
    rc = wal_retire_below(db->wal, wal_lsn_segno(lsn, db->segment_size));
out:
    if (rc)
        db_break(db, rc);
    pthread_mutex_unlock(&db->ckpt_run);
    return rc;
}

static void *ckpt_main(void *arg)
{
    struct cl_db *db = arg;
    pthread_mutex_lock(&db->ckpt_mu);
    for (;;) {
        while (!db->ckpt_requested && !db->ckpt_stop)
            pthread_cond_wait(&db->ckpt_cv, &db->ckpt_mu);
        if (db->ckpt_stop)
            break;
        pthread_mutex_unlock(&db->ckpt_mu);
        if (!db_broken(db))
            db_checkpoint(db);
        pthread_mutex_lock(&db->ckpt_mu);
        db->ckpt_requested = 0;
    }
    pthread_mutex_unlock(&db->ckpt_mu);
    return NULL;
}

static void maybe_request_checkpoint(struct cl_db *db, uint64_t lsn)
{
    uint64_t last = __atomic_load_n(&db->last_ckpt_lsn, __ATOMIC_ACQUIRE);
    if (!db->opt.checkpoint_bytes || !db->ckpt_thread_started || lsn - last < db->opt.checkpoint_bytes)
        return;
    pthread_mutex_lock(&db->ckpt_mu);
    if (!db->ckpt_requested) {
        db->ckpt_requested = 1;
        pthread_cond_signal(&db->ckpt_cv);
    }
    pthread_mutex_unlock(&db->ckpt_mu);
}

static int held_here(const struct cl_db *db);

int cl_checkpoint(struct cl_db *db)
{
    if (!db)
        return CL_EINVAL;
    if (wal_in_callback(db->wal))
        return CL_EBUSY; /* a callback of this database's commits */
    if (db_broken(db))
        return CL_EBROKEN;
    if (held_here(db))
        return CL_EBUSY; /* this thread's open write transaction holds the writer lock */
    return db_checkpoint(db);
}

/* ---- recovery ------------------------------------------------------------ */

/* The operations of the transaction being read back, with owned copies. */
struct redo {
    struct store_op *ops;
    uint8_t **bufs;
    size_t n, cap;
    uint64_t txn_id;
};

static void redo_clear(struct redo *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->bufs[i]);
    r->n = 0;
}

static int redo_add(struct redo *r, int del, const void *k, uint32_t kl, const void *v, uint32_t vl)
{
    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 64;
        struct store_op *ops = realloc(r->ops, nc * sizeof *ops);
        if (!ops)
            return CL_ENOMEM;
        r->ops = ops;
        uint8_t **bufs = realloc(r->bufs, nc * sizeof *bufs);
        if (!bufs)
            return CL_ENOMEM;
        r->bufs = bufs;
        r->cap = nc;
    }
    uint8_t *b = malloc((size_t)kl + vl + 1);
    if (!b)
        return CL_ENOMEM;
    memcpy(b, k, kl);
    if (vl)
        memcpy(b + kl, v, vl);
    r->bufs[r->n] = b;
    r->ops[r->n] = (struct store_op){.del = del, .key = b, .klen = kl, .val = b + kl, .vlen = vl};
    r->n++;
    return 0;
}

static int recover(struct cl_db *db, const struct store_meta *meta, struct cl_recovery_info *info)
{
    struct wal_reader *rd = NULL;
    struct wal_record rec;
    struct redo redo = {0};
    uint64_t max_txn = 0;
    int rc;

    rc = wal_reader_open(db->vfs, db->dir, db->segment_size, meta->db_id, meta->checkpoint_lsn, &rd);
    if (rc)
        return rc;
    wal_reader_require_start(rd, 1); /* the checkpoint's segment was durable before the checkpoint */
    while ((rc = wal_reader_next(rd, &rec)) == 1) {
        const void *k, *v;
        uint32_t kl, vl, nops;
        info->records_read++;
        if (redo.n && rec.txn_id != redo.txn_id) {
            /* A transaction without its COMMIT, followed by another: cannot
             * happen with one writer; treat the first as incomplete. */
            info->txns_discarded++;
            redo_clear(&redo);
        }
        redo.txn_id = rec.txn_id;
        if (rec.txn_id > max_txn)
            max_txn = rec.txn_id;
        switch (rec.type) {
        case WAL_REC_PUT:
            rc = wal_decode_put(&rec, &k, &kl, &v, &vl);
            if (rc == 0)
                rc = redo_add(&redo, 0, k, kl, v, vl);
            break;
        case WAL_REC_DEL:
            rc = wal_decode_del(&rec, &k, &kl);
            if (rc == 0)
                rc = redo_add(&redo, 1, k, kl, NULL, 0);
            break;
        case WAL_REC_COMMIT:
            rc = wal_decode_commit(&rec, &nops);
            if (rc == 0 && nops != redo.n)
                rc = CL_ECORRUPT;
            if (rc == 0)
                rc = store_apply(db->store, redo.ops, redo.n, rec.next_lsn);
            if (rc == 0)
                info->txns_replayed++;
            redo_clear(&redo);
            break;
        default:
            rc = CL_ECORRUPT;
        }
        if (rc)
            goto out;
    }
    if (rc < 0) {
        if (rc == CL_ECORRUPT) {
            info->corrupt_lsn = wal_reader_bad_lsn(rd);
            info->missing_segment = wal_reader_missing(rd);
        }
        if (rc == CL_ECORRUPT || rc == CL_EFORMAT || rc == CL_EFILETYPE)
            wal_segment_name(info->bad_file, sizeof info->bad_file,
                             wal_lsn_segno(wal_reader_bad_lsn(rd), db->segment_size));
        goto out;
    }
    if (redo.n)
        info->txns_discarded++;
    info->end_lsn = wal_reader_end_lsn(rd);
    info->torn_tail = wal_reader_torn(rd);
    rc = 0;
out:
    redo_clear(&redo);
    free(redo.ops);
    free(redo.bufs);
    wal_reader_close(rd);
    db->next_txn_id = max_txn + 1;
    return rc;
}

/* ---- open and close ------------------------------------------------------ */

/* The directory holding dir ("." when dir has no '/'). */
static char *parent_of(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    while (n > 0 && dir[n - 1] != '/')
        n--;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return n == 0 ? strdup(".") : strndup(dir, n);
}

static int sync_parent(struct vfs *v, const char *dir)
{
    char *p = parent_of(dir);
    if (!p)
        return CL_ENOMEM;
    int rc = vfs_sync_dir(v, p);
    free(p);
    return rc;
}

struct sync_walk {
    struct vfs *v;
    const char *dir;
    struct cl_recovery_info *info;
    int rc;
};

static int sync_one(void *arg, const char *name)
{
    struct sync_walk *sw = arg;
    uint64_t segno;
    int wal = wal_segment_parse_name(name, &segno);
    if (!wal && strcmp(name, STORE_FILE) != 0)
        return 0;
    char *path;
    if (asprintf(&path, "%s/%s", sw->dir, name) < 0) {
        sw->rc = CL_ENOMEM;
        return 1;
    }
    struct vfs_file *f;
    int rc = vfs_open(sw->v, path, VFS_O_RDONLY, wal ? VFS_CLASS_WAL : VFS_CLASS_DATA, &f);
    free(path);
    if (rc == 0) {
        rc = vfs_fsync(f);
        int crc = vfs_close(f);
        rc = rc ? rc : crc;
    }
    if (rc == -ENOENT)
        rc = 0;
    if (rc == CL_EFILETYPE)
        snprintf(sw->info->bad_file, sizeof sw->info->bad_file, "%s", name);
    sw->rc = rc;
    return rc != 0;
}

/* Before recovery trusts what an existing directory holds, makes it
 * durable: the page file, every log segment, the directory and its entry
 * in the parent.  A process that crashed may have left writes in the page
 * cache that the next open would read and build on (freeing pages of the
 * previous checkpoint, say) while a power failure could still take them
 * away; PostgreSQL fsyncs the data directory at the start of crash
 * recovery for the same reason. */
static int sync_existing(struct vfs *v, const char *dir, struct cl_recovery_info *info)
{
    struct sync_walk sw = {v, dir, info, 0};
    int rc = vfs_list(v, dir, sync_one, &sw);
    if (sw.rc)
        rc = sw.rc; /* the walk stopped on it (vfs_list returns the 1 that stopped it) */
    if (rc == 0)
        rc = vfs_sync_dir(v, dir);
    if (rc == 0)
        rc = sync_parent(v, dir);
    return rc;
}

static void stop_ckpt_thread(struct cl_db *db)
{
    if (!db->ckpt_thread_started)
        return;
    pthread_mutex_lock(&db->ckpt_mu);
    db->ckpt_stop = 1;
    pthread_cond_signal(&db->ckpt_cv);
    pthread_mutex_unlock(&db->ckpt_mu);
    pthread_join(db->ckpt_thread, NULL);
    db->ckpt_thread_started = 0;
}

static void db_free(struct cl_db *db)
{
    stop_ckpt_thread(db);
    if (db->wal)
        wal_close(db->wal);
    if (db->store)
        store_close(db->store);
    pthread_mutex_destroy(&db->writer);
    pthread_mutex_destroy(&db->ckpt_run);
    pthread_mutex_destroy(&db->ckpt_mu);
    pthread_cond_destroy(&db->ckpt_cv);
    vfs_destroy(db->latency_vfs);
    dir_unlock(db->lock); /* last: every file of the directory is closed */
    free(db->dir);
    free(db);
}

/* Before the page file is opened or created, given the nsegs log segments
 * in the directory: a segment means a database was here, and the page file was made whole
 * (both meta pages, synced) before any segment was.  So a page file that
 * is missing, or shorter than its two meta pages, beside a log has lost
 * its tail or been removed: refused, naming it, since creating a page file
 * over it would discard the log with every commit in it.  (A page file
 * that reads as created -- checkpoint LSN 0, both meta pages there -- is
 * the open that created it crashing before its first checkpoint: nothing
 * was ever committed, and its segment is no part of any log.) */
static int check_page_file_beside_log(struct cl_db *db, const char *dir, size_t nsegs,
                                      struct cl_recovery_info *info)
{
    uint64_t size = 0;
    struct vfs_file *f = NULL;
    char *path = NULL;
    int rc;
    if (nsegs == 0)
        return 0;
    if (asprintf(&path, "%s/%s", dir, STORE_FILE) < 0)
        return CL_ENOMEM;
    rc = vfs_open(db->vfs, path, VFS_O_RDONLY, VFS_CLASS_DATA, &f);
    if (rc == 0) {
        rc = vfs_size(f, &size);
        vfs_close(f);
    } else if (rc == -ENOENT) {
        rc = 0; /* size 0: missing */
    }
    free(path);
    if (rc == 0 && size < 2 * (uint64_t)STORE_PAGE_SIZE) {
        snprintf(info->bad_file, sizeof info->bad_file, "%s", STORE_FILE);
        rc = CL_ECORRUPT;
    }
    return rc;
}

static uint64_t random_id(void)
{
    uint64_t id = 0;
    if (getrandom(&id, sizeof id, 0) != sizeof id)
        id = cl_now_ns() ^ ((uint64_t)getpid() << 32);
    return id ? id : 1;
}

int cl_open_sized(const char *dir, const struct cl_options *opts, size_t opts_size, struct cl_db **out,
                  struct cl_recovery_info *info, size_t info_size)
{
    struct cl_options o;
    struct cl_recovery_info ri;
    cl_detail_clear();
    int rc = cl_options_import(opts, opts_size, &o);
    if (rc)
        return rc;
    rc = cl_open_vfs(dir, &o, NULL, out, &ri);
    if (info)
        memcpy(info, &ri, info_size < sizeof ri ? info_size : sizeof ri);
    return rc;
}

int cl_open(const char *dir, const struct cl_options *opts, struct cl_db **out,
            struct cl_recovery_info *info)
{
    return cl_open_sized(dir, opts, CL_OPTIONS_SIZE_V0, out, info, CL_RECOVERY_INFO_SIZE_V0);
}

int cl_open_vfs(const char *dir, const struct cl_options *opts, struct vfs *vfs, struct cl_db **out,
                struct cl_recovery_info *info)
{
    struct cl_recovery_info scratch;
    struct store_meta meta;
    struct cl_db *db;
    uint64_t *segs = NULL, new_segno;
    size_t nsegs = 0;
    int rc, created = 0;

    cl_detail_clear();
    if (!dir || !out)
        return CL_EINVAL;
    *out = NULL;
    if (!info)
        info = &scratch;
    memset(info, 0, sizeof *info);

    db = calloc(1, sizeof *db);
    if (!db)
        return CL_ENOMEM;
    if (opts)
        db->opt = *opts;
    else
        cl_options_init(&db->opt);
    pthread_mutex_init(&db->writer, NULL);
    pthread_mutex_init(&db->ckpt_run, NULL);
    pthread_mutex_init(&db->ckpt_mu, NULL);
    pthread_cond_init(&db->ckpt_cv, NULL);
    rc = cl_options_check(&db->opt);
    if (rc)
        goto fail;
    db->dir = strdup(dir);
    if (!db->dir) {
        rc = CL_ENOMEM;
        goto fail;
    }
    db->vfs = vfs ? vfs : vfs_posix();
    if (db->opt.sync_latency_us) {
        db->latency_vfs = vfs_latency_new(db->vfs, db->opt.sync_latency_us);
        if (!db->latency_vfs) {
            rc = CL_ENOMEM;
            goto fail;
        }
        db->vfs = db->latency_vfs;
    }

    int made_dir = 0;
    if (db->opt.create) {
        rc = vfs_mkdir(db->vfs, dir);
        if (rc && rc != -EEXIST)
            goto fail;
        made_dir = rc == 0;
    }
    /* One process per database: nothing in the directory is read, written,
     * synced or deleted before the lock is held. */
    pid_t holder = 0;
    rc = dir_lock(dir, 0, &db->lock, &holder);
    if (rc == -EWOULDBLOCK) {
        rc = CL_EBUSY;
        if (holder)
            cl_detail_set("database %s is in use (process %ld)", dir, (long)holder);
        else
            cl_detail_set("database %s is in use", dir);
        goto fail;
    }
    if (rc)
        goto fail;
    /* A new directory is durable only once its parent is synced; an
     * existing one is made durable, with what it holds, before it is read. */
    rc = made_dir ? sync_parent(db->vfs, dir) : sync_existing(db->vfs, dir, info);
    if (rc)
        goto fail;
    /* The log segments, listed once: they decide whether a missing or short
     * page file is damage, and the new log starts above them (recovery only
     * reads them). */
    rc = wal_list_segments(db->vfs, dir, &segs, &nsegs);
    if (rc == -ENOENT)
        rc = 0; /* no directory: store_open says so */
    if (rc)
        goto fail;
    rc = check_page_file_beside_log(db, dir, nsegs, info);
    if (rc)
        goto fail;
    struct store_config sc = {
        .vfs = db->vfs, .dir = dir, .cache_size = db->opt.cache_size, .create = db->opt.create,
        .db_id = random_id(), .wal_segment_size = db->opt.segment_size,
    };
    rc = store_open(&sc, &db->store, &created);
    if (rc == CL_EFORMAT || rc == CL_ECORRUPT || rc == CL_EFILETYPE)
        snprintf(info->bad_file, sizeof info->bad_file, "%s", STORE_FILE);
    if (rc)
        goto fail;
    store_get_meta(db->store, &meta);
    db->segment_size = meta.wal_segment_size; /* fixed when the database was created */
    info->created = created;
    info->checkpoint_lsn = meta.checkpoint_lsn;
    info->end_lsn = meta.checkpoint_lsn;
    db->next_txn_id = 1;
    /* A checkpoint LSN of 0 is the page file as created: the open that
     * created it never reached its first checkpoint, so nothing was ever
     * committed (cl_open checkpoints before it returns), and the log
     * segment that open may have made is no part of any log. */
    if (!created && meta.checkpoint_lsn != 0) {
        rc = recover(db, &meta, info);
        if (rc)
            goto fail;
    }

    /* The new log starts in a segment above every existing one. */
    new_segno = meta.wal_segno;
    if (nsegs && segs[nsegs - 1] > new_segno)
        new_segno = segs[nsegs - 1];
    new_segno++;
    free(segs);
    segs = NULL;
    char why[160];
    struct wal_config wc = {
        .vfs = db->vfs, .dir = dir, .db_id = meta.db_id, .segment_size = db->segment_size,
        .policy = db->opt.sync, .method = db->opt.method, .segment_init = db->opt.segment_init,
        .segments = db->opt.segments, .recycle_max = db->opt.recycle_max, .prealloc = db->opt.prealloc,
        .interval_ms = db->opt.interval_ms, .commit_delay_us = db->opt.commit_delay_us,
        .commit_siblings = db->opt.commit_siblings, .uring_depth = db->opt.uring_depth,
        .max_batch = db->opt.max_batch, .flusher_spin_us = db->opt.flusher_spin_us,
        .uring_sync = db->opt.uring_sync, .why = why, .why_len = sizeof why,
        .cold_recycle = db->opt.cold_recycle,
    };
    rc = wal_open(&wc, new_segno, &db->wal);
    if (rc == CL_ENOTSUP && why[0])
        cl_detail_set("%s", why); /* what was refused here: io_uring, O_DIRECT, RWF_DSYNC */
    if (rc)
        goto fail;
    rc = db_checkpoint(db); /* the recovered state, durable, before any new commit */
    if (rc)
        goto fail;

    rc = pthread_create(&db->ckpt_thread, NULL, ckpt_main, db);
    if (rc) {
        rc = -rc; /* no background checkpoints would mean an ever-growing log */
        goto fail;
    }
    db->ckpt_thread_started = 1;
    *out = db;
    return 0;
fail:
    if (info->bad_file[0] && !cl_error_detail()[0])
        cl_detail_set("%s/%s: %s", dir, info->bad_file, cl_strerror(rc));
    free(segs);
    db_free(db);
    return rc;
}

int cl_close(struct cl_db *db)
{
    int rc;
    if (!db)
        return CL_EINVAL;
    if (wal_in_callback(db->wal))
        return CL_EBUSY; /* a callback of this database's commits: not closed */
    stop_ckpt_thread(db);
    rc = db_broken(db) ? CL_EBROKEN : db_checkpoint(db); /* -EIO, -ENOSPC, ... as they happened */
    /* The checkpoint made every asynchronous commit durable; wal_close
     * (in db_free) calls the callbacks still waiting, after any that
     * another thread is calling, before anything is freed. */
    db_free(db);
    return rc;
}

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
static int held_here(const struct cl_db *db)
{
    return __atomic_load_n(&db->writer_owner, __ATOMIC_RELAXED) == self_tag();
}

static int writer_acquire(struct cl_txn *t)
{
    if (t->locked)
        return 0;
    if (held_here(t->db))
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

static void txn_free(struct cl_txn *t)
{
    writer_release(t);
    if (!(t->flags & CL_TXN_RDONLY))
        wal_txn_active(t->db->wal, -1);
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

/* The commit protocol, C1-C5: synchronous (fn NULL: returns once durable
 * as the policy promises) or asynchronous (returns once appended, applied
 * and its callback registered; fn(arg, rc) comes from the log). */
static int commit_txn(struct cl_txn *t, struct cl_commit_times *tm, cl_durable_fn fn, void *arg)
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

    if (tm)
        memset(tm, 0, sizeof *tm);

    if (!t)
        return CL_EINVAL;
    db = t->db;
    if (wal_in_callback(db->wal)) {
        rc = CL_EBUSY; /* a callback of this database's commits would commit on it */
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
        int synced = wal_make_durable(db->wal, lsn);
        if (synced == 0)
            rc = store_apply(db->store, sops, t->n, lsn);
        if (rc == 0) {
            /* durable (the callback gets 0), or the log broke (it gets the error) */
            wal_async_add(db->wal, cb, lsn);
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
    if (tm)
        *tm = (struct cl_commit_times){.lock_ns = t2 - t1, .append_ns = t3 - t2, .apply_ns = apply_ns,
                                       .queue_ns = wt.queue_ns, .write_ns = wt.write_ns, .sync_ns = wt.sync_ns,
                                       .wakeup_ns = wt.wakeup_ns};
    if (wal_segment_switches(db->wal) != switches0)
        atomic_max(&db->max_switch_commit_ns, cl_now_ns() - t0);
    maybe_request_checkpoint(db, lsn);
out:
    wal_async_entry_free(cb); /* not registered: the commit was refused, fn is never called */
    free(wops);
    free(sops);
    txn_free(t);
    /* The callbacks due -- this commit's, under none or commit or elr off;
     * others' the log made durable meanwhile -- on this thread, with no
     * lock of the database held. */
    wal_async_deliver(db->wal); /* inside one of its callbacks: returns at once */
    return rc;
}

int cl_commit_timed(struct cl_txn *t, struct cl_commit_times *tm) { return commit_txn(t, tm, NULL, NULL); }

int cl_commit_async(struct cl_txn *t, cl_durable_fn fn, void *arg)
{
    if (t && !fn) {
        txn_free(t); /* consumed, also on error */
        return CL_EINVAL;
    }
    return commit_txn(t, NULL, fn, arg);
}

int cl_sync_wait(struct cl_db *db)
{
    if (!db)
        return CL_EINVAL;
    return wal_sync_wait(db->wal); /* CL_EBUSY from one of its callbacks */
}

/* ---- stats --------------------------------------------------------------- */

void cl_stats_reset_max(struct cl_db *db)
{
    if (!db)
        return;
    __atomic_store_n(&db->max_switch_commit_ns, 0, __ATOMIC_RELAXED);
    wal_reset_max(db->wal);
}

int cl_stats(struct cl_db *db, struct cl_stats *out) { return cl_stats_sized(db, out, CL_STATS_SIZE_V0); }

int cl_stats_sized(struct cl_db *db, struct cl_stats *caller, size_t size)
{
    struct wal_stats ws;
    struct store_stats ss;
    struct cl_stats all, *out = &all;

    if (!db || !caller)
        return CL_EINVAL;
    memset(out, 0, sizeof *out);
    wal_get_stats(db->wal, &ws);
    store_get_stats(db->store, &ss);
    out->commits = __atomic_load_n(&db->commits, __ATOMIC_RELAXED) + ws.async_commits;
    out->syncs = ws.syncs;
    out->wal_bytes = ws.bytes;
    out->wal_writes = ws.writes;
    /* this database's own counts: the file layer's are per process */
    out->data_writes = ss.page_writes + ss.meta_writes;
    out->data_bytes = out->data_writes * STORE_PAGE_SIZE;
    out->checkpoints = __atomic_load_n(&db->checkpoints, __ATOMIC_RELAXED);
    out->checkpoint_pause_us = __atomic_load_n(&db->pause_ns, __ATOMIC_RELAXED) / 1000;
    out->max_commits_per_sync = ws.max_commits_per_sync;
    memcpy(out->batch_hist, ws.batch_hist, sizeof out->batch_hist);
    out->commits_per_sync = ws.syncs ? (double)ws.commits / (double)ws.syncs : 0.0;
    out->durable_lsn = wal_durable_lsn(db->wal);
    out->end_lsn = wal_end_lsn(db->wal);
    out->pages = ss.pages;
    out->cache_hits = ss.hits;
    out->cache_misses = ss.misses;
    out->cache_evictions = ss.evictions;
    out->segment_switches = ws.segment_switches;
    out->segments_created = ws.segments_created;
    out->segments_recycled = ws.segments_recycled;
    out->segments_reused = ws.segments_reused;
    out->segments_removed = ws.segments_removed;
    out->segment_waits = ws.segment_waits;
    out->segment_wait_us = ws.segment_wait_ns / 1000;
    out->max_switch_commit_us = __atomic_load_n(&db->max_switch_commit_ns, __ATOMIC_RELAXED) / 1000;
    out->prealloc_error = ws.prealloc_error;
    out->broken = db_broken(db) != 0;
    out->segment_size = db->segment_size;
    memcpy(caller, &all, size < sizeof all ? size : sizeof all); /* a field beyond the caller's size: left alone */
    return 0;
}
