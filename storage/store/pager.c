/*
 * pager.c -- the pages of the page file and the cache that holds them:
 * page reads (checked) and writes (checksummed), the bounded page cache,
 * and the store's sticky failure state.  Free space is pager_free.c, the
 * meta pages and checkpoints pager_meta.c, open/close/verify/stats
 * pager_open.c; the tree is btree.c.  What they share, with the numbered
 * invariants and the locks: pager_internal.h.
 *
 * Cache: nframes = max(16, cache_size / 4096) frames, a chained hash
 * pgno -> frame, clock eviction, pin counts.  Evicting a dirty frame writes
 * it (safe by PG1).  A frame being loaded has io = LOAD and other
 * fetchers wait for it; a frame being written has io = WRITE and may still
 * be read.  frame_write is the one place a frame is written to the file,
 * for eviction and for checkpoints alike.
 *
 * Keeps PG3 (pins and io states keep eviction and checkpoint writes
 * away from a frame the writer is changing in place) and PG4 (every
 * page read is checked before anyone sees it).  It writes only dirty
 * frames; PG1 holds because no page of the durable snapshot is ever
 * dirtied (PG2 and PG3).
 *
 * Who calls: btree.c -- the writer (pg_overwrite, pg_make_writable) and
 * every reader (pg_fetch, pg_unpin); pager_free.c (pg_cache_drop);
 * pager_meta.c from store_checkpoint_finish (pg_write_frozen); pager_open.c
 * at open (pg_cache_init).
 */
#include "pager_internal.h"

#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "invariant.h"

#define MIN_FRAMES 16u

/* ---- sticky failure state ------------------------------------------------ */

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

/* ---- page I/O ------------------------------------------------------------ */

/* Fills in a page image's checksum (every page, meta pages too). */
void pg_seal(uint8_t *p)
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
    pg_seal(tmp);
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

/* At open, before any other thread sees s: max(MIN_FRAMES, cache_size /
 * PG_SIZE) frames, at most 2^24, and a hash of at least twice as many
 * buckets (a power of two). */
int pg_cache_init(struct store *s, uint64_t cache_size)
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
 * and io = WRITE makes pg_make_writable wait (PG3).  On failure
 * the frame stays dirty and the store is broken. */
static int frame_write(struct store *s, struct frame *f)
{
    uint64_t pgno = f->pgno;
    int rc;

    CL_INVARIANT("PG3", f->valid && f->dirty && f->io == FRAME_IO_NONE);
    /* PG1 by PG5: the durable snapshot's pages have epoch <= its generation */
    CL_INVARIANT("PG1", f->epoch > s->durable.generation && pgno >= 2);
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

/* Writes every dirty frame of epoch <= frozen, waiting for any eviction
 * write already under way, so that the caller's sync covers it too.
 * Takes mu. */
int pg_write_frozen(struct store *s, uint64_t frozen)
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
