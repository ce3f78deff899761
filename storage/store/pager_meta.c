/*
 * pager_meta.c -- the two meta pages and the checkpoints that write them.
 * Layout: page_format.h (META_OFF_*).  The current meta is the valid one
 * with the higher generation; generation g goes to slot g % META_PAGES, so
 * a checkpoint overwrites the older meta, never the current one.
 *
 * A checkpoint: store_checkpoint_begin (under the tree lock) freezes the
 * current epoch and fills in the next meta; store_checkpoint_finish then
 * writes every dirty frame of the frozen epoch, syncs the page file,
 * writes the meta, syncs again, and only then releases the pages freed
 * before begin.  A failure there breaks the store (sticky); an abandoned
 * checkpoint leaves its pages for the next one.  One checkpoint at a time
 * (ckpt_mu, ckpt_in_flight).
 *
 * Keeps PG5 of pager_internal.h (begin freezes cur_epoch, which
 * becomes the new meta's generation), and the order that PG1 and PG2
 * need: the meta is written only after the frozen pages are durable, and
 * the frozen free pages turn reusable only after the meta is.
 *
 * Who calls: the engine -- checkpoint_begin from its single writer,
 * checkpoint_finish or _abandon from a checkpointing thread beside the
 * writer and the readers; pager_open.c at open (pg_create_file,
 * pg_meta_choose) and in store_verify (pg_meta_read).
 */
#include "pager_internal.h"

#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

/* ---- meta pages ---------------------------------------------------------- */

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
    pg_seal(p);
}

/* 0, CL_ECORRUPT (torn or damaged) or CL_EFORMAT (not ours / other version). */
int pg_meta_decode(const uint8_t *p, uint64_t slot, struct store_meta *m)
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

/* Reads and decodes the meta page in slot; a short read counts as zeros. */
int pg_meta_read(struct store *s, uint64_t slot, struct store_meta *m)
{
    uint8_t buf[PG_SIZE];
    size_t n = 0;
    int rc = vfs_pread(s->data, buf, PG_SIZE, slot * PG_SIZE, &n);

    if (rc)
        return rc;
    if (n < PG_SIZE)
        memset(buf + n, 0, PG_SIZE - n);
    return pg_meta_decode(buf, slot, m);
}

/* 1 when meta page slot begins with STORE_MAGIC where a meta page has it. */
static int has_magic(struct store *s, uint64_t slot)
{
    uint8_t magic[8];
    size_t n = 0;
    return vfs_pread(s->data, magic, sizeof magic, slot * PG_SIZE + META_OFF_MAGIC, &n) == 0 &&
           n == sizeof magic && memcmp(magic, STORE_MAGIC, sizeof magic) == 0;
}

/* Picks the current meta: the valid one with the higher generation. */
int pg_meta_choose(struct store *s, struct store_meta *out)
{
    struct store_meta m[META_PAGES];
    int rc[META_PAGES];

    for (int i = 0; i < META_PAGES; i++) {
        rc[i] = pg_meta_read(s, (uint64_t)i, &m[i]);
        if (rc[i] && rc[i] != CL_ECORRUPT && rc[i] != CL_EFORMAT)
            return rc[i];
    }
    if (rc[0] && rc[1]) {
        pg_set_bad(s, 0);
        /* Only one meta page is ever being written, so a crash can damage
         * one, never both: with neither carrying the magic the file is not
         * a commitlab page file at all. */
        if (!has_magic(s, 0) && !has_magic(s, 1))
            return CL_EFORMAT;
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

/* A new page file at path: both meta pages (generation 0, empty tree),
 * synced, and the directory synced so that the file's name is durable. */
int pg_create_file(const struct store_config *cfg, const char *path)
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

void store_get_meta(struct store *s, struct store_meta *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->durable;
    pthread_mutex_unlock(&s->mu);
}

/* ---- checkpoints --------------------------------------------------------- */

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

int store_checkpoint_finish(struct store *s, struct store_ckpt *c)
{
    int rc;

    if (!s || !c)
        return CL_EINVAL;
    pthread_mutex_lock(&s->ckpt_mu);
    rc = atomic_load(&s->broken) ? CL_EBROKEN : 0;
    if (rc == 0)
        rc = pg_write_frozen(s, c->frozen);
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
