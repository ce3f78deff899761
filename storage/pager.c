/*
 * pager.c -- the page file under the B+tree: the bounded page cache, free
 * space, the two meta pages, checkpoints, open/close/verify/stats.  The
 * tree itself is storage/btree.c; the bytes of a page are page_format.h.
 *
 * Invariants:
 *   1. A page of the durable snapshot (reachable from the durable meta) is
 *      never written.  Only pages allocated since the last checkpoint --
 *      pages in no durable snapshot -- are written, by eviction or by
 *      store_checkpoint_finish.
 *   2. A page freed while its epoch is the current one (it belongs to no
 *      snapshot) is reusable at once.  A page of an older epoch may belong
 *      to the durable or the frozen snapshot: it waits in pending_cur; at
 *      checkpoint_begin pending_cur becomes pending_frozen, which turns
 *      reusable only once that checkpoint's meta is durable.
 *   3. The writer changes page contents only of current-epoch pages
 *      (pg_overwrite, or in place in a frame it holds pinned after
 *      pg_make_writable); frozen pages are copied by btree.c.  So
 *      checkpoint_finish may write frozen frames while store_apply runs: it
 *      pins the frame and sets io = WRITE under mu, which keeps it from
 *      being evicted or reused.  An eviction write never overlaps an
 *      in-place change: eviction skips pinned frames, and
 *      pg_make_writable waits for a write begun before the pin.
 *   4. Every page read from the file is checked (crc, own pgno, type)
 *      before anyone sees it; a bad one is CL_ECORRUPT with bad_page set.
 *   5. Epoch bookkeeping: after open cur_epoch = generation + 1; begin
 *      freezes cur_epoch, which becomes the new meta's generation.  Hence
 *      every page of the snapshot of generation g has epoch <= g.
 *
 * Cache: nframes = max(16, cache_size / 4096) frames, a chained hash
 * pgno -> frame, clock eviction, pin counts.  Evicting a dirty frame writes
 * it (safe by invariant 1).  A frame being loaded has io = LOAD and other
 * fetchers wait for it; a frame being written has io = WRITE and may still
 * be read.
 *
 * Who calls: store.h's users.  store_apply and checkpoint_begin come from
 * the engine's single writer; get/scan from any thread; checkpoint_finish
 * from a checkpointing thread beside them.
 */
#include "pager_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

#define MIN_FRAMES 16u

/* ---- small helpers ------------------------------------------------------ */

void pg_set_bad(struct store *s, uint64_t pgno)
{
    atomic_store(&s->bad_page, pgno);
}

void pg_break(struct store *s, int err)
{
    int expect = 0;
    if (err == 0)
        err = CL_EBROKEN;
    atomic_compare_exchange_strong(&s->broken, &expect, err);
}

/* 0 when the store may be changed; else why not: opened readonly, broken
 * by an earlier failure (sticky), or found corrupt by the open walk (a
 * write could reuse a live page). */
int pg_check_writable(struct store *s)
{
    if (s->readonly)
        return CL_EREADONLY;
    if (atomic_load(&s->broken))
        return CL_EBROKEN;
    if (s->corrupt)
        return CL_ECORRUPT;
    return 0;
}

static int pgvec_push(struct pgvec *v, uint64_t x)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 64;
        uint64_t *nv = realloc(v->v, nc * sizeof *nv);
        if (!nv)
            return CL_ENOMEM;
        v->v = nv;
        v->cap = nc;
    }
    v->v[v->n++] = x;
    return 0;
}

static void pgvec_move(struct pgvec *to, struct pgvec *from)
{
    for (size_t i = 0; i < from->n; i++)
        if (pgvec_push(to, from->v[i]))
            break; /* out of memory: the rest leak until the next open */
    from->n = 0;
}

static void page_seal(uint8_t *p)
{
    put_le32(p + PG_OFF_CRC, crc32c(p + 4, PG_SIZE - 4));
}

/* Checks a page image read from position pgno. */
static int page_check(const uint8_t *p, uint64_t pgno)
{
    uint16_t t = pg_type(p);
    if (get_le32(p + PG_OFF_CRC) != crc32c(p + 4, PG_SIZE - 4))
        return CL_ECORRUPT;
    if (get_le64(p + PG_OFF_PGNO) != pgno || t < PG_META || t > PG_OVERFLOW)
        return CL_ECORRUPT;
    return 0;
}

/* Writes a copy of a frame's page with its checksum.  Called without mu;
 * the frame is pinned with io = WRITE, so its bytes do not change. */
static int page_write(struct store *s, uint64_t pgno, const uint8_t *buf)
{
    uint8_t tmp[PG_SIZE];
    int rc;

    memcpy(tmp, buf, PG_SIZE);
    page_seal(tmp);
    rc = vfs_pwrite(s->data, tmp, PG_SIZE, pgno * PG_SIZE);
    atomic_fetch_add(&s->page_writes, 1);
    if (rc)
        pg_break(s, rc);
    return rc;
}

/* Reads and checks one page from the file, bypassing the cache. */
int pg_read_disk(struct store *s, uint64_t pgno, uint8_t *buf)
{
    size_t n = 0;
    int rc = vfs_pread(s->data, buf, PG_SIZE, pgno * PG_SIZE, &n);

    atomic_fetch_add(&s->page_reads, 1);
    if (rc) {
        pg_break(s, rc);
        return rc;
    }
    if (n != PG_SIZE || page_check(buf, pgno)) {
        pg_set_bad(s, pgno);
        return CL_ECORRUPT;
    }
    return 0;
}

/* ---- the cache (all with mu held unless said otherwise) ------------------ */

static uint32_t hash_of(struct store *s, uint64_t pgno)
{
    return (uint32_t)((pgno * 0x9E3779B97F4A7C15ull) >> 32) & s->bucket_mask;
}

static int32_t hash_find(struct store *s, uint64_t pgno)
{
    for (int32_t i = s->buckets[hash_of(s, pgno)]; i >= 0; i = s->frames[i].next)
        if (s->frames[i].pgno == pgno)
            return i;
    return -1;
}

static void hash_insert(struct store *s, int32_t i)
{
    uint32_t h = hash_of(s, s->frames[i].pgno);
    s->frames[i].next = s->buckets[h];
    s->buckets[h] = i;
    s->frames[i].valid = 1;
}

static void hash_remove(struct store *s, int32_t i)
{
    int32_t *pp = &s->buckets[hash_of(s, s->frames[i].pgno)];
    while (*pp != i)
        pp = &s->frames[*pp].next;
    *pp = s->frames[i].next;
    s->frames[i].next = -1;
    s->frames[i].valid = 0;
}

static void cache_wait(struct store *s)
{
    s->nwait++;
    pthread_cond_wait(&s->cond, &s->mu);
    s->nwait--;
}

static void cache_wake(struct store *s)
{
    if (s->nwait)
        pthread_cond_broadcast(&s->cond);
}

/* Writes a dirty frame's page to the file and marks it clean; the one
 * write-out for eviction and for checkpoints.  Called with mu held on a
 * valid, dirty frame with no I/O under way; mu is released during the
 * write, while an extra pin keeps the frame from being evicted or reused
 * and io = WRITE makes pg_make_writable wait (invariant 3).  On failure
 * the frame stays dirty and the store is broken. */
static int frame_write(struct store *s, struct frame *f)
{
    uint64_t pgno = f->pgno;
    int rc;

    f->io = FRAME_IO_WRITE;
    f->pins++;
    pthread_mutex_unlock(&s->mu);
    rc = page_write(s, pgno, f->buf);
    pthread_mutex_lock(&s->mu);
    f->io = FRAME_IO_NONE;
    f->pins--;
    cache_wake(s);
    if (rc)
        return rc;
    f->dirty = 0;
    s->ndirty--;
    return 0;
}

/* Finds a frame to reuse: an empty one, or the clock's victim (written
 * first when dirty, mu released meanwhile).  Returns it pinned, out of the
 * hash.  Waits when every frame is pinned. */
static int frame_grab(struct store *s, int32_t *out)
{
    for (;;) {
        for (uint32_t scanned = 0; scanned < 2 * s->nframes; scanned++) {
            int32_t i = (int32_t)s->hand;
            struct frame *f = &s->frames[i];
            s->hand = (s->hand + 1) % s->nframes;
            if (f->pins || f->io)
                continue;
            if (f->valid && f->ref) {
                f->ref = 0;
                continue;
            }
            if (f->valid && f->dirty) {
                int rc = frame_write(s, f);
                if (rc)
                    return rc;
                if (f->pins || f->ref)
                    continue;
            }
            if (f->valid) {
                hash_remove(s, i);
                s->evictions++;
            }
            f->pins = 1;
            f->ref = 0;
            *out = i;
            return 0;
        }
        cache_wait(s);
    }
}

int pg_fetch(struct store *s, uint64_t pgno, struct frame **out)
{
    struct frame *f;
    int32_t i;
    int rc;

    pthread_mutex_lock(&s->mu);
    for (;;) {
        i = hash_find(s, pgno);
        if (i >= 0) {
            f = &s->frames[i];
            if (f->io == FRAME_IO_LOAD) {
                cache_wait(s);
                continue;
            }
            f->pins++;
            f->ref = 1;
            s->hits++;
            pthread_mutex_unlock(&s->mu);
            *out = f;
            return 0;
        }
        rc = frame_grab(s, &i);
        if (rc)
            goto out;
        if (hash_find(s, pgno) >= 0) { /* loaded by another thread meanwhile */
            s->frames[i].pins = 0;
            continue;
        }
        break;
    }
    f = &s->frames[i];
    f->pgno = pgno;
    f->dirty = 0;
    f->io = FRAME_IO_LOAD;
    hash_insert(s, i);
    s->misses++;
    pthread_mutex_unlock(&s->mu);

    rc = pg_read_disk(s, pgno, f->buf);

    pthread_mutex_lock(&s->mu);
    f->io = FRAME_IO_NONE;
    cache_wake(s);
    if (rc) {
        hash_remove(s, i);
        f->pins = 0;
        goto out;
    }
    f->epoch = pg_epoch(f->buf);
    f->ref = 1;
    *out = f;
out:
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void pg_unpin(struct store *s, struct frame *f)
{
    pthread_mutex_lock(&s->mu);
    if (--f->pins == 0)
        cache_wake(s);
    pthread_mutex_unlock(&s->mu);
}

/* Writer only: the page becomes img (header pgno, lsn and epoch filled in),
 * dirty, without reading the old contents.  img may be another frame's
 * buffer (a copy-on-write), which the caller keeps pinned.  With pinned,
 * the frame is returned pinned and the caller may go on changing it. */
static int overwrite(struct store *s, uint64_t pgno, const uint8_t *img, struct frame **pinned)
{
    struct frame *f;
    int32_t i;
    int rc = 0;

    pthread_mutex_lock(&s->mu);
    for (;;) {
        i = hash_find(s, pgno);
        if (i >= 0) {
            if (s->frames[i].io || s->frames[i].pins) {
                cache_wait(s);
                continue;
            }
            break;
        }
        rc = frame_grab(s, &i);
        if (rc)
            goto out;
        if (hash_find(s, pgno) >= 0) {
            s->frames[i].pins = 0;
            continue;
        }
        s->frames[i].pgno = pgno;
        s->frames[i].dirty = 0;
        s->frames[i].pins = 0;
        hash_insert(s, i);
        break;
    }
    f = &s->frames[i];
    memcpy(f->buf, img, PG_SIZE);
    put_le64(f->buf + PG_OFF_PGNO, pgno);
    put_le64(f->buf + PG_OFF_LSN, s->cur_lsn);
    put_le64(f->buf + PG_OFF_EPOCH, s->cur_epoch);
    f->epoch = s->cur_epoch;
    f->ref = 1;
    if (!f->dirty) {
        f->dirty = 1;
        s->ndirty++;
    }
    if (pinned) {
        f->pins++;
        *pinned = f;
    }
out:
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pg_overwrite(struct store *s, uint64_t pgno, const uint8_t *img)
{
    return overwrite(s, pgno, img, NULL);
}

int pg_overwrite_pinned(struct store *s, uint64_t pgno, const uint8_t *img, struct frame **out)
{
    return overwrite(s, pgno, img, out);
}

/* Writer only, f pinned by the caller and holding a page of the current
 * epoch.  Waits out a write of the frame already under way (an eviction
 * begun before the pin); no new one can start while the pin is held, and
 * checkpoint_finish writes only frozen frames.  So the caller may change
 * f->buf until it unpins.  The page is marked dirty and stamped with the
 * commit LSN. */
void pg_make_writable(struct store *s, struct frame *f)
{
    pthread_mutex_lock(&s->mu);
    while (f->io)
        cache_wait(s);
    put_le64(f->buf + PG_OFF_LSN, s->cur_lsn);
    f->ref = 1;
    if (!f->dirty) {
        f->dirty = 1;
        s->ndirty++;
    }
    pthread_mutex_unlock(&s->mu);
}

/* mu held.  Forgets pgno's cached frame, dirty or not, unless it is
 * pinned; waits out I/O on it first.  For a freed page whose contents no
 * snapshot needs. */
void pg_cache_drop(struct store *s, uint64_t pgno)
{
    int32_t i;

    while ((i = hash_find(s, pgno)) >= 0 && s->frames[i].io)
        cache_wait(s);
    if (i >= 0 && s->frames[i].pins == 0) {
        if (s->frames[i].dirty) {
            s->frames[i].dirty = 0;
            s->ndirty--;
        }
        hash_remove(s, i);
    }
}

uint64_t pg_alloc(struct store *s)
{
    uint64_t pgno;

    pthread_mutex_lock(&s->mu);
    if (s->reusable.n)
        pgno = s->reusable.v[--s->reusable.n];
    else
        pgno = s->npages++;
    pthread_mutex_unlock(&s->mu);
    return pgno;
}

void pg_free(struct store *s, uint64_t pgno, uint64_t epoch)
{
    pthread_mutex_lock(&s->mu);
    if (epoch == s->cur_epoch) {
        /* In no snapshot: forget its frame, reuse it at once. */
        pg_cache_drop(s, pgno);
        pgvec_push(&s->reusable, pgno);
    } else {
        pgvec_push(&s->pending_cur, pgno);
    }
    pthread_mutex_unlock(&s->mu);
}

/* Open: every page past the meta pages that the walk of the durable tree
 * did not reach (no bit in seen) is reusable. */
int pg_free_unreached(struct store *s, const uint8_t *seen, uint64_t npages)
{
    for (uint64_t p = npages; p-- > META_PAGES;)
        if (!(seen[p / 8] & (1u << (p % 8))) && pgvec_push(&s->reusable, p))
            return CL_ENOMEM;
    return 0;
}

/* mu held, at checkpoint_begin: the pages freed so far wait for this
 * checkpoint's meta to be durable (invariant 2). */
void pg_pending_freeze(struct store *s)
{
    pgvec_move(&s->pending_frozen, &s->pending_cur);
}

/* mu held, once the checkpoint's meta is durable: the pages that waited
 * for it are in no snapshot any more and become reusable. */
void pg_pending_release(struct store *s)
{
    pgvec_move(&s->reusable, &s->pending_frozen);
}

/* ---- meta pages ----------------------------------------------------------- */

static void meta_encode(uint8_t *p, uint64_t slot, const struct store_meta *m)
{
    memset(p, 0, PG_SIZE);
    put_le16(p + PG_OFF_TYPE, PG_META);
    put_le64(p + PG_OFF_PGNO, slot);
    put_le64(p + PG_OFF_LSN, m->checkpoint_lsn);
    put_le64(p + PG_OFF_EPOCH, m->generation);
    memcpy(p + META_OFF_MAGIC, STORE_MAGIC, 8);
    put_le32(p + META_OFF_VERSION, m->version);
    put_le32(p + META_OFF_PAGE_SIZE, m->page_size);
    put_le64(p + META_OFF_DB_ID, m->db_id);
    put_le64(p + META_OFF_GENERATION, m->generation);
    put_le64(p + META_OFF_ROOT, m->root);
    put_le64(p + META_OFF_NPAGES, m->npages);
    put_le64(p + META_OFF_NENTRIES, m->nentries);
    put_le64(p + META_OFF_CKPT_LSN, m->checkpoint_lsn);
    put_le64(p + META_OFF_WAL_SEGSZ, m->wal_segment_size);
    put_le64(p + META_OFF_WAL_SEGNO, m->wal_segno);
    page_seal(p);
}

/* 0, CL_ECORRUPT (torn or damaged) or CL_EFORMAT (not ours / other version). */
static int meta_decode(const uint8_t *p, uint64_t slot, struct store_meta *m)
{
    int crc_ok = get_le32(p + PG_OFF_CRC) == crc32c(p + 4, PG_SIZE - 4);

    if (memcmp(p + META_OFF_MAGIC, STORE_MAGIC, 8) != 0)
        return crc_ok ? CL_EFORMAT : CL_ECORRUPT;
    if (!crc_ok || pg_type(p) != PG_META || get_le64(p + PG_OFF_PGNO) != slot)
        return CL_ECORRUPT;
    m->version = get_le32(p + META_OFF_VERSION);
    m->page_size = get_le32(p + META_OFF_PAGE_SIZE);
    if (m->version != STORE_VERSION || m->page_size != PG_SIZE)
        return CL_EFORMAT;
    m->db_id = get_le64(p + META_OFF_DB_ID);
    m->generation = get_le64(p + META_OFF_GENERATION);
    m->root = get_le64(p + META_OFF_ROOT);
    m->npages = get_le64(p + META_OFF_NPAGES);
    m->nentries = get_le64(p + META_OFF_NENTRIES);
    m->checkpoint_lsn = get_le64(p + META_OFF_CKPT_LSN);
    m->wal_segment_size = get_le64(p + META_OFF_WAL_SEGSZ);
    m->wal_segno = get_le64(p + META_OFF_WAL_SEGNO);
    if (m->npages < META_PAGES || m->root == 1 || (m->root && m->root >= m->npages))
        return CL_ECORRUPT;
    return 0;
}

static int meta_read(struct store *s, uint64_t slot, struct store_meta *m)
{
    uint8_t buf[PG_SIZE];
    size_t n = 0;
    int rc = vfs_pread(s->data, buf, PG_SIZE, slot * PG_SIZE, &n);

    if (rc)
        return rc;
    if (n < PG_SIZE)
        memset(buf + n, 0, PG_SIZE - n);
    return meta_decode(buf, slot, m);
}

/* Picks the current meta: the valid one with the higher generation. */
static int meta_choose(struct store *s, struct store_meta *out)
{
    struct store_meta m[META_PAGES];
    int rc[META_PAGES];

    for (int i = 0; i < META_PAGES; i++) {
        rc[i] = meta_read(s, (uint64_t)i, &m[i]);
        if (rc[i] && rc[i] != CL_ECORRUPT && rc[i] != CL_EFORMAT)
            return rc[i];
    }
    if (rc[0] && rc[1]) {
        pg_set_bad(s, 0);
        return rc[0] == CL_EFORMAT || rc[1] == CL_EFORMAT ? CL_EFORMAT : CL_ECORRUPT;
    }
    if (rc[0] == 0 && rc[1] == 0)
        *out = m[1].generation > m[0].generation ? m[1] : m[0];
    else
        *out = rc[0] == 0 ? m[0] : m[1];
    return 0;
}

static int meta_write(struct vfs_file *f, const struct store_meta *m)
{
    uint8_t buf[PG_SIZE];
    uint64_t slot = m->generation % META_PAGES;

    meta_encode(buf, slot, m);
    return vfs_pwrite(f, buf, PG_SIZE, slot * PG_SIZE);
}

/* ---- open / close ------------------------------------------------------------ */

static int create_file(const struct store_config *cfg, const char *path)
{
    struct vfs_file *f = NULL;
    struct store_meta m = {
        .version = STORE_VERSION, .page_size = PG_SIZE, .db_id = cfg->db_id,
        .npages = META_PAGES, .wal_segment_size = cfg->wal_segment_size,
    };
    uint8_t buf[PG_SIZE];
    int rc = vfs_open(cfg->vfs, path, VFS_O_CREATE | VFS_O_TRUNC, VFS_CLASS_META, &f);

    if (rc)
        return rc;
    for (uint64_t slot = 0; slot < META_PAGES && rc == 0; slot++) {
        meta_encode(buf, slot, &m);
        rc = vfs_pwrite(f, buf, PG_SIZE, slot * PG_SIZE);
    }
    if (rc == 0)
        rc = vfs_fdatasync(f);
    vfs_close(f);
    if (rc == 0)
        rc = vfs_sync_dir(cfg->vfs, cfg->dir);
    return rc;
}

static void free_store(struct store *s)
{
    if (!s)
        return;
    if (s->data)
        vfs_close(s->data);
    if (s->metaf)
        vfs_close(s->metaf);
    pthread_rwlock_destroy(&s->tree_lock);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->ckpt_mu);
    pthread_cond_destroy(&s->ckpt_cond);
    free(s->frames);
    free(s->bufs);
    free(s->buckets);
    free(s->reusable.v);
    free(s->pending_cur.v);
    free(s->pending_frozen.v);
    free(s->dir);
    free(s);
}

static int cache_init(struct store *s, uint64_t cache_size)
{
    uint64_t n = cache_size / PG_SIZE;
    uint32_t nb = 1;

    if (n < MIN_FRAMES)
        n = MIN_FRAMES;
    if (n > (1u << 24))
        n = 1u << 24;
    s->nframes = (uint32_t)n;
    while (nb < 2 * s->nframes)
        nb <<= 1;
    s->bucket_mask = nb - 1;
    s->frames = calloc(n, sizeof *s->frames);
    s->bufs = aligned_alloc(PG_SIZE, n * PG_SIZE);
    s->buckets = malloc(nb * sizeof *s->buckets);
    if (!s->frames || !s->bufs || !s->buckets)
        return CL_ENOMEM;
    for (uint32_t i = 0; i < nb; i++)
        s->buckets[i] = -1;
    for (uint32_t i = 0; i < s->nframes; i++) {
        s->frames[i].buf = s->bufs + (size_t)i * PG_SIZE;
        s->frames[i].next = -1;
    }
    return 0;
}

/* A store with its locks made and nothing opened yet. */
static struct store *store_new(const struct store_config *cfg)
{
    struct store *s = calloc(1, sizeof *s);
    pthread_rwlockattr_t ra;

    if (!s)
        return NULL;
    s->vfs = cfg->vfs ? cfg->vfs : vfs_posix();
    s->readonly = cfg->readonly;
    /* Writer preference: a stream of readers must not starve store_apply. */
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&s->tree_lock, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cond, NULL);
    pthread_mutex_init(&s->ckpt_mu, NULL);
    pthread_cond_init(&s->ckpt_cond, NULL);
    return s;
}

/* Makes sure the page file at path holds its meta pages: creates it when
 * it is absent and cfg asks for creation, or when a creation that died
 * before writing the metas left it empty.  -ENOENT when absent and not to
 * be created. */
static int find_or_create_file(struct store *s, const struct store_config *cfg, const char *path,
                               int *created)
{
    uint64_t size = 0;
    int rc, exists = vfs_exists(s->vfs, path);

    if (exists < 0)
        return exists;
    if (exists && !cfg->readonly && cfg->create) {
        struct vfs_file *f = NULL;
        rc = vfs_open(s->vfs, path, VFS_O_RDONLY, VFS_CLASS_DATA, &f);
        if (rc == 0) {
            rc = vfs_size(f, &size);
            vfs_close(f);
        }
        if (rc)
            return rc;
        if (size == 0)
            exists = 0;
    }
    if (exists)
        return 0;
    if (!cfg->create || cfg->readonly)
        return -ENOENT;
    struct store_config c = *cfg;
    c.vfs = s->vfs;
    rc = create_file(&c, path);
    if (rc)
        return rc;
    if (created)
        *created = 1;
    return 0;
}

/* Opens the page file twice: data for pages and, unless readonly, metaf for
 * the meta pages (each its own VFS class). */
static int open_files(struct store *s, const char *path)
{
    int rc = vfs_open(s->vfs, path, s->readonly ? VFS_O_RDONLY : 0, VFS_CLASS_DATA, &s->data);

    if (rc == 0 && !s->readonly)
        rc = vfs_open(s->vfs, path, 0, VFS_CLASS_META, &s->metaf);
    return rc;
}

/* Walks the durable tree from m's root, checking every page it reaches;
 * every page it does not reach is free.  A bad tree is not an error here:
 * the store opens for reads and refuses writes (s->corrupt), since a write
 * could reuse a live page. */
static int walk_durable_tree(struct store *s, const struct store_meta *m)
{
    struct walk_result wr = {0};
    uint8_t *seen = calloc((size_t)(m->npages + 7) / 8, 1);
    int rc;

    if (!seen)
        return CL_ENOMEM;
    rc = btree_walk(s, m->root, m->npages, m->generation, seen, &wr);
    if (rc == CL_ECORRUPT) {
        s->corrupt = 1;
    } else if (rc) {
        goto out;
    } else if (wr.entries != m->nentries) {
        s->corrupt = 1;
        pg_set_bad(s, m->generation % META_PAGES);
    }
    atomic_store(&s->depth, wr.depth);
    rc = pg_free_unreached(s, seen, m->npages);
out:
    free(seen);
    return rc;
}

int store_open(const struct store_config *cfg, struct store **out, int *created)
{
    struct store *s = NULL;
    struct store_meta m;
    char *path = NULL;
    int rc;

    if (created)
        *created = 0;
    if (!cfg || !cfg->dir || !out)
        return CL_EINVAL;
    *out = NULL;
    s = store_new(cfg);
    if (!s)
        return CL_ENOMEM;
    s->dir = strdup(cfg->dir);
    if (!s->dir || asprintf(&path, "%s/%s", cfg->dir, STORE_FILE) < 0) {
        path = NULL;
        rc = CL_ENOMEM;
        goto fail;
    }
    rc = find_or_create_file(s, cfg, path, created);
    if (rc)
        goto fail;
    rc = open_files(s, path);
    if (rc)
        goto fail;
    rc = meta_choose(s, &m);
    if (rc)
        goto fail;
    rc = cache_init(s, cfg->cache_size);
    if (rc)
        goto fail;
    s->durable = m;
    s->root = m.root;
    s->npages = m.npages;
    s->cur_epoch = m.generation + 1; /* invariant 5 */
    atomic_store(&s->nentries, m.nentries);
    rc = walk_durable_tree(s, &m);
    if (rc)
        goto fail;
    free(path);
    atomic_store(&s->broken, 0);
    *out = s;
    return 0;

fail:
    free(path);
    free_store(s);
    return rc;
}

void store_close(struct store *s)
{
    free_store(s);
}

void store_get_meta(struct store *s, struct store_meta *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->durable;
    pthread_mutex_unlock(&s->mu);
}

/* ---- checkpoints -------------------------------------------------------------- */

struct store_ckpt {
    struct store_meta meta;  /* what the new meta page will say */
    uint64_t frozen;         /* the epoch it freezes */
};

int store_checkpoint_begin(struct store *s, uint64_t lsn, uint64_t wal_segno, struct store_ckpt **out)
{
    struct store_ckpt *c;
    int rc;

    if (!s || !out)
        return CL_EINVAL;
    *out = NULL;
    rc = pg_check_writable(s);
    if (rc)
        return rc;
    c = calloc(1, sizeof *c);
    if (!c)
        return CL_ENOMEM;

    pthread_mutex_lock(&s->ckpt_mu);
    while (s->ckpt_in_flight) /* one checkpoint at a time */
        pthread_cond_wait(&s->ckpt_cond, &s->ckpt_mu);
    s->ckpt_in_flight = 1;
    pthread_mutex_unlock(&s->ckpt_mu);

    pthread_rwlock_wrlock(&s->tree_lock);
    pthread_mutex_lock(&s->mu);
    c->meta = s->durable;
    c->meta.generation++;
    c->meta.root = s->root;
    c->meta.npages = s->npages;
    c->meta.nentries = atomic_load(&s->nentries);
    c->meta.checkpoint_lsn = lsn;
    c->meta.wal_segno = wal_segno;
    c->frozen = s->cur_epoch;
    s->cur_epoch++;
    pg_pending_freeze(s);
    pthread_mutex_unlock(&s->mu);
    pthread_rwlock_unlock(&s->tree_lock);
    *out = c;
    return 0;
}

static void ckpt_done(struct store *s, struct store_ckpt *c)
{
    free(c);
    pthread_mutex_lock(&s->ckpt_mu);
    s->ckpt_in_flight = 0;
    pthread_cond_broadcast(&s->ckpt_cond);
    pthread_mutex_unlock(&s->ckpt_mu);
}

void store_checkpoint_abandon(struct store *s, struct store_ckpt *c)
{
    /* The frozen pages stay dirty and pending_frozen stays pending: the
     * next checkpoint covers them. */
    if (c)
        ckpt_done(s, c);
}

/* Writes every dirty frame of epoch <= frozen, waiting for any eviction
 * write already under way so that the sync below covers it. */
static int write_frozen(struct store *s, uint64_t frozen)
{
    int rc = 0;

    pthread_mutex_lock(&s->mu);
    for (uint32_t i = 0; i < s->nframes && rc == 0; i++) {
        struct frame *f = &s->frames[i];
        while (f->valid && f->dirty && f->epoch <= frozen) {
            if (f->io) {
                cache_wait(s);
                continue;
            }
            rc = frame_write(s, f);
            if (rc)
                break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int store_checkpoint_finish(struct store *s, struct store_ckpt *c)
{
    int rc;

    if (!s || !c)
        return CL_EINVAL;
    pthread_mutex_lock(&s->ckpt_mu);
    rc = atomic_load(&s->broken) ? CL_EBROKEN : 0;
    if (rc == 0)
        rc = write_frozen(s, c->frozen);
    if (rc == 0)
        rc = vfs_fdatasync(s->data);
    if (rc == 0) {
        rc = meta_write(s->metaf, &c->meta);
        atomic_fetch_add(&s->meta_writes, 1);
    }
    if (rc == 0)
        rc = vfs_fdatasync(s->metaf);
    if (rc == 0) {
        pthread_mutex_lock(&s->mu);
        s->durable = c->meta;
        pg_pending_release(s);
        pthread_mutex_unlock(&s->mu);
    } else {
        pg_break(s, rc);
    }
    pthread_mutex_unlock(&s->ckpt_mu);
    ckpt_done(s, c);
    return rc;
}

/* ---- verify, stats ---------------------------------------------------------------- */

int store_verify(struct store *s, uint64_t *pages_checked)
{
    struct store_meta cur, m;
    struct walk_result wr = {0};
    uint8_t *seen = NULL;
    uint64_t checked = 0, slot;
    int rc;

    pthread_mutex_lock(&s->ckpt_mu); /* the durable snapshot holds still */
    pthread_mutex_lock(&s->mu);
    cur = s->durable;
    pthread_mutex_unlock(&s->mu);

    /* The current meta must be intact; the other may be torn (legitimately). */
    slot = cur.generation % META_PAGES;
    for (uint64_t i = 0; i < META_PAGES; i++) {
        rc = meta_read(s, i, &m);
        checked++;
        if (i != slot)
            continue;
        if (rc == 0 && (m.generation != cur.generation || m.root != cur.root))
            rc = CL_ECORRUPT;
        if (rc == CL_ECORRUPT || rc == CL_EFORMAT) {
            pg_set_bad(s, i);
            rc = CL_ECORRUPT;
        }
        if (rc)
            goto out;
    }
    seen = calloc((size_t)(cur.npages + 7) / 8, 1);
    if (!seen) {
        rc = CL_ENOMEM;
        goto out;
    }
    rc = btree_walk(s, cur.root, cur.npages, cur.generation, seen, &wr);
    checked += wr.pages;
    if (rc == 0 && wr.entries != cur.nentries) {
        pg_set_bad(s, slot);
        rc = CL_ECORRUPT;
    }
out:
    pthread_mutex_unlock(&s->ckpt_mu);
    free(seen);
    if (pages_checked)
        *pages_checked = checked;
    return rc;
}

uint64_t store_bad_page(struct store *s)
{
    return atomic_load(&s->bad_page);
}

int store_broken(struct store *s)
{
    return atomic_load(&s->broken);
}

void store_get_stats(struct store *s, struct store_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->mu);
    out->pages = s->npages;
    out->free_pages = s->reusable.n + s->pending_cur.n + s->pending_frozen.n;
    out->dirty_pages = s->ndirty;
    out->cache_pages = s->nframes;
    out->hits = s->hits;
    out->misses = s->misses;
    out->evictions = s->evictions;
    pthread_mutex_unlock(&s->mu);
    out->page_writes = atomic_load(&s->page_writes);
    out->meta_writes = atomic_load(&s->meta_writes);
    out->page_reads = atomic_load(&s->page_reads);
    out->nentries = atomic_load(&s->nentries);
    out->depth = atomic_load(&s->depth);
}
