/*
 * open.c -- opening, recovering and closing a database (cl_open,
 * cl_close): the directory's lock taken before anything is read, what an
 * existing directory holds made durable before it is trusted, the page
 * file's meta read, every transaction whose COMMIT record is in the valid
 * log after the checkpoint LSN redone, then the log started in a new
 * segment numbered above every existing one and a checkpoint taken, so
 * that nothing left beyond the end of the old log (torn or orphaned
 * records) can ever be read as part of the new one.
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

#include "db.h"

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

#define UNSHARE_SUFFIX ".unshare" /* a private copy being made of a hard-linked file */

struct sync_walk {
    struct vfs *v;
    const char *dir;
    struct cl_recovery_info *info;
    char **shared;       /* files with other hard links: copied before anything is written */
    size_t nshared, capshared;
    int rc;
};

static int note_shared(struct sync_walk *sw, const char *name)
{
    if (sw->nshared == sw->capshared) {
        size_t nc = sw->capshared ? 2 * sw->capshared : 8;
        char **p = realloc(sw->shared, nc * sizeof *p);
        if (!p)
            return CL_ENOMEM;
        sw->shared = p;
        sw->capshared = nc;
    }
    if (!(sw->shared[sw->nshared] = strdup(name)))
        return CL_ENOMEM;
    sw->nshared++;
    return 0;
}

/* 1 when name is the private copy of a database file being made
 * ("data.clp.unshare", "wal-<segno>.log.unshare"): nothing else is
 * ever removed. */
static int is_unshare_copy(const char *name)
{
    char base[64];
    size_t n = strlen(name), m = strlen(UNSHARE_SUFFIX);
    uint64_t segno;
    if (n <= m || n - m >= sizeof base || strcmp(name + n - m, UNSHARE_SUFFIX) != 0)
        return 0;
    memcpy(base, name, n - m);
    base[n - m] = 0;
    return strcmp(base, STORE_FILE) == 0 || wal_segment_parse_name(base, &segno);
}

static int sync_one(void *arg, const char *name)
{
    struct sync_walk *sw = arg;
    uint64_t segno, links = 1;
    int wal = wal_segment_parse_name(name, &segno);
    int copy = is_unshare_copy(name);
    if (!wal && !copy && strcmp(name, STORE_FILE) != 0)
        return 0;
    char *path;
    if (asprintf(&path, "%s/%s", sw->dir, name) < 0) {
        sw->rc = CL_ENOMEM;
        return 1;
    }
    struct vfs_file *f;
    int rc;
    if (copy) { /* an open that stopped while copying: its original is still in place */
        rc = vfs_unlink(sw->v, path);
        free(path);
        sw->rc = rc == -ENOENT ? 0 : rc;
        return sw->rc != 0;
    }
    rc = vfs_open(sw->v, path, VFS_O_RDONLY, wal ? VFS_CLASS_WAL : VFS_CLASS_DATA, &f);
    free(path);
    if (rc == 0) {
        rc = vfs_fsync(f);
        if (rc == 0)
            rc = vfs_links(f, &links);
        int crc = vfs_close(f);
        rc = rc ? rc : crc;
    }
    if (rc == 0 && links > 1)
        rc = note_shared(sw, name);
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
static int sync_existing(struct sync_walk *sw)
{
    int rc = vfs_list(sw->v, sw->dir, sync_one, sw);
    if (sw->rc)
        rc = sw->rc; /* the walk stopped on it (vfs_list returns the 1 that stopped it) */
    if (rc == 0)
        rc = vfs_sync_dir(sw->v, sw->dir);
    if (rc == 0)
        rc = sync_parent(sw->v, sw->dir);
    return rc;
}

/* ---- hard-linked copies ------------------------------------------------------ */

/* Copies dir/name to dir/name.unshare and syncs the copy; *copy gets the
 * copy's path. */
static int copy_file(struct vfs *v, const char *dir, const char *name, char **copy)
{
    struct vfs_file *in = NULL, *out = NULL;
    char *from = NULL;
    uint8_t *buf = NULL;
    uint64_t off = 0;
    size_t n;
    int rc;

    *copy = NULL;
    if (asprintf(&from, "%s/%s", dir, name) < 0) {
        from = NULL;
        rc = CL_ENOMEM;
        goto out;
    }
    if (asprintf(copy, "%s/%s" UNSHARE_SUFFIX, dir, name) < 0) {
        *copy = NULL;
        rc = CL_ENOMEM;
        goto out;
    }
    buf = malloc(1u << 20);
    if (!buf) {
        rc = CL_ENOMEM;
        goto out;
    }
    rc = vfs_open(v, from, VFS_O_RDONLY, VFS_CLASS_OTHER, &in);
    if (rc == 0)
        rc = vfs_open(v, *copy, VFS_O_CREATE | VFS_O_TRUNC, VFS_CLASS_OTHER, &out);
    while (rc == 0 && (rc = vfs_pread(in, buf, 1u << 20, off, &n)) == 0 && n > 0) {
        rc = vfs_pwrite(out, buf, n, off);
        off += n;
    }
    if (rc == 0)
        rc = vfs_fsync(out);
out:
    if (in)
        vfs_close(in);
    if (out) {
        int crc = vfs_close(out);
        rc = rc ? rc : crc;
    }
    free(buf);
    free(from);
    return rc;
}

/* Replaces each of the files the walk found with other hard links by a
 * private copy: copied and synced beside it, then renamed over its name,
 * and the directory synced once at the end.  The other names keep the
 * original inode, which this handle never writes again; an open that
 * stops half way leaves every name with the same bytes (a copy not yet
 * renamed is removed by the next open).  Run under the page file's lock,
 * so nobody that reaches the original through another name has it open;
 * the page file's lock moves to its copy before the copy takes its name. */
static int unshare_files(struct cl_db *db, const char *dir, struct sync_walk *sw)
{
    int rc = 0;
    for (size_t i = 0; i < sw->nshared && rc == 0; i++) {
        const char *name = sw->shared[i];
        char *copy = NULL, *path = NULL;
        struct dir_lock *copy_lock = NULL;
        int data = strcmp(name, STORE_FILE) == 0;
        rc = copy_file(db->vfs, dir, name, &copy);
        if (rc == 0 && asprintf(&path, "%s/%s", dir, name) < 0) {
            path = NULL;
            rc = CL_ENOMEM;
        }
        if (rc == 0 && data)
            rc = dir_lock(copy, DIR_LOCK_FILE | DIR_LOCK_PROCESS, &copy_lock, NULL);
        if (rc == 0)
            rc = vfs_rename(db->vfs, copy, path);
        if (rc == 0 && data) {
            dir_unlock(db->data_lock);
            db->data_lock = copy_lock;
            copy_lock = NULL;
        }
        if (rc == 0)
            sw->info->files_unshared++;
        else if (copy)
            vfs_unlink(db->vfs, copy);
        dir_unlock(copy_lock);
        free(copy);
        free(path);
    }
    if (rc == 0 && sw->nshared)
        rc = vfs_sync_dir(db->vfs, dir);
    if (rc)
        cl_detail_set("database %s: making private copies of its hard-linked files: %s", dir, cl_strerror(rc));
    return rc;
}

/* ---- the locks ---------------------------------------------------------------- */

/* Takes the directory's lock and, when the page file exists, the page
 * file's (exclusive, or shared for a reader); CL_EBUSY naming the holder
 * when either is held elsewhere.  A page file that does not exist yet is
 * locked once it is made (db_lock_page_file). */
int db_lock(const char *dir, int shared, struct dir_lock **dir_l, struct dir_lock **data_l)
{
    unsigned how = DIR_LOCK_PROCESS | (shared ? DIR_LOCK_SHARED : 0);
    pid_t holder = 0;
    int rc;

    *dir_l = *data_l = NULL;
    rc = dir_lock(dir, how, dir_l, &holder);
    if (rc == 0) {
        rc = db_lock_page_file(dir, shared, data_l);
        if (rc == -ENOENT)
            rc = 0;
        else if (rc == CL_EFILETYPE)
            rc = 0; /* not a regular file: the open that reads it refuses it, naming it */
        if (rc) {
            dir_unlock(*dir_l);
            *dir_l = NULL;
        }
        return rc;
    }
    if (rc == -EWOULDBLOCK) {
        if (holder)
            cl_detail_set("database %s is in use (process %ld)", dir, (long)holder);
        else
            cl_detail_set("database %s is in use", dir);
        return CL_EBUSY;
    }
    return rc;
}

int db_lock_page_file(const char *dir, int shared, struct dir_lock **out)
{
    unsigned how = DIR_LOCK_FILE | DIR_LOCK_PROCESS | (shared ? DIR_LOCK_SHARED : 0);
    pid_t holder = 0;
    char *path;
    int rc;
    if (asprintf(&path, "%s/%s", dir, STORE_FILE) < 0)
        return CL_ENOMEM;
    rc = dir_lock(path, how, out, &holder);
    free(path);
    if (rc == -EWOULDBLOCK) {
        /* the same page file through another directory: a hard-linked copy,
         * or this one by another path */
        if (holder)
            cl_detail_set("database %s is in use: its %s is open through another path (process %ld)", dir,
                          STORE_FILE, (long)holder);
        else
            cl_detail_set("database %s is in use: its %s is open through another path", dir, STORE_FILE);
        rc = CL_EBUSY;
    }
    return rc;
}

/* ---- fork ------------------------------------------------------------------------ */

unsigned db_fork_count;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static int fork_once_rc;

static void fork_child(void) { __atomic_add_fetch(&db_fork_count, 1, __ATOMIC_RELAXED); }
static void fork_register(void) { fork_once_rc = pthread_atfork(NULL, NULL, fork_child); }

static void db_free(struct cl_db *db)
{
    db_ckpt_stop(db);
    if (db->wal)
        wal_close(db->wal);
    if (db->store)
        store_close(db->store);
    pthread_mutex_destroy(&db->writer);
    pthread_mutex_destroy(&db->ckpt_run);
    pthread_mutex_destroy(&db->ckpt_mu);
    pthread_cond_destroy(&db->ckpt_cv);
    vfs_destroy(db->latency_vfs);
    dir_unlock(db->data_lock);
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
     * synced or deleted before the locks are held. */
    pthread_once(&fork_once, fork_register);
    if (fork_once_rc) {
        rc = -fork_once_rc;
        goto fail;
    }
    db->fork_gen = __atomic_load_n(&db_fork_count, __ATOMIC_RELAXED);
    rc = db_lock(dir, 0, &db->lock, &db->data_lock);
    if (rc)
        goto fail;
    /* A new directory is durable only once its parent is synced; an
     * existing one is made durable, with what it holds, before it is read,
     * and a file of it that another directory shares through a hard link
     * is made this directory's own before anything writes it. */
    if (made_dir) {
        rc = sync_parent(db->vfs, dir);
    } else {
        struct sync_walk sw = {.v = db->vfs, .dir = dir, .info = info};
        rc = sync_existing(&sw);
        if (rc == 0)
            rc = unshare_files(db, dir, &sw);
        for (size_t i = 0; i < sw.nshared; i++)
            free(sw.shared[i]);
        free(sw.shared);
    }
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
    if (!db->data_lock) { /* made just now, under the directory's lock */
        rc = db_lock_page_file(dir, 0, &db->data_lock);
        if (rc)
            goto fail;
    }
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
        .vfs = db->vfs,
        .dir = dir,
        .db_id = meta.db_id,
        .segment_size = db->segment_size,
        .why = why,
        .why_len = sizeof why,
        .opt = db->opt,
    };

    rc = wal_open(&wc, new_segno, &db->wal);
    if (rc == CL_ENOTSUP && why[0])
        cl_detail_set("%s", why); /* what was refused here: io_uring, O_DIRECT, RWF_DSYNC */
    if (rc)
        goto fail;
    rc = db_checkpoint(db); /* the recovered state, durable, before any new commit */
    if (rc)
        goto fail;

    rc = db_ckpt_start(db);
    if (rc)
        goto fail;
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
    if (db_forked(db))
        return CL_EFORK; /* the parent's: none of its threads are here to stop */
    if (wal_in_callback(db->wal))
        return CL_EBUSY; /* a callback of this database's commits: not closed */
    db_ckpt_stop(db);
    if (db_broken(db))
        rc = CL_EBROKEN;
    else if (db->opt.no_final_checkpoint)
        rc = db_sync_log(db); /* the log left as it is, whole and durable, for the next open to recover */
    else
        rc = db_checkpoint(db); /* -EIO, -ENOSPC, ... as they happened */
    /* The checkpoint (or the log's sync) made every asynchronous commit
     * durable; wal_close (in db_free) calls the callbacks still waiting,
     * after any that another thread is calling, before anything is freed. */
    db_free(db);
    return rc;
}

