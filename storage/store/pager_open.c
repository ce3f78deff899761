/*
 * pager_open.c -- a store's life: store_open, store_close, store_verify
 * and the counters (store_get_stats, store_broken, store_bad_page).
 *
 * store_open: find or create the page file, open its two handles (data
 * and meta, each its own VFS class), choose the current meta, size the
 * cache, then walk the durable tree: it checks every page it reaches, and
 * every page it does not reach is free.
 *
 * Keeps PG5 of pager_internal.h at open (cur_epoch = generation +
 * 1), and starts PG2 from a clean slate: after open every free
 * page is reusable and nothing is pending.
 *
 * Who calls: the engine -- store_open and store_close from cl_open,
 * cl_close and cl_inspect, store_get_stats from cl_stats, store_verify and
 * store_bad_page from cl_inspect.
 */
#include "pager_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- open / close -------------------------------------------------------- */

/* Closes and frees what store_new and store_open made; s may be NULL or
 * half built. */
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
    rc = pg_create_file(&c, path);
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

/* The pages a walk of the durable tree can reach: those below the meta's
 * npages that the file holds.  A page at or past the file's end was never
 * written, so no valid page is there and none of the tree can be: such
 * pages are free (extending the file reuses them), whatever npages says.
 * This also keeps a damaged meta page that kept its checksum (npages
 * 2^60, say) from sizing the walk's bitmap and the free list. */
static int walk_limit(struct store *s, uint64_t npages, uint64_t *limit)
{
    uint64_t size = 0;
    int rc = vfs_size(s->data, &size);
    if (rc)
        return rc;
    uint64_t in_file = size / PG_SIZE + (size % PG_SIZE != 0);
    if (in_file < META_PAGES)
        in_file = META_PAGES;
    *limit = npages < in_file ? npages : in_file;
    return 0;
}

/* Walks the durable tree from m's root, checking every page it reaches;
 * every page it does not reach is free.  A bad tree is not an error here:
 * the store opens for reads and refuses writes (s->corrupt), since a write
 * could reuse a live page. */
static int walk_durable_tree(struct store *s, const struct store_meta *m)
{
    struct walk_result wr = {0};
    uint64_t npages;
    int rc = walk_limit(s, m->npages, &npages);

    if (rc)
        return rc;
    s->npages = npages;
    uint8_t *seen = calloc((size_t)(npages + 7) / 8, 1);
    if (!seen)
        return CL_ENOMEM;
    rc = btree_walk(s, m->root, npages, m->generation, seen, &wr);
    if (rc == CL_ECORRUPT) {
        s->corrupt = 1;
    } else if (rc) {
        goto out;
    } else if (wr.entries != m->nentries) {
        s->corrupt = 1;
        pg_set_bad(s, m->generation % META_PAGES);
    }
    atomic_store(&s->depth, wr.depth);
    rc = pg_free_unreached(s, seen, npages);
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
    rc = pg_meta_choose(s, &m);
    if (rc)
        goto fail;
    rc = pg_cache_init(s, cfg->cache_size);
    if (rc)
        goto fail;
    s->durable = m;
    s->root = m.root;
    s->npages = m.npages;
    s->cur_epoch = m.generation + 1; /* PG5 */
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

/* ---- verify, stats ------------------------------------------------------- */

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
        rc = pg_meta_read(s, i, &m);
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
    uint64_t npages;
    rc = walk_limit(s, cur.npages, &npages);
    if (rc)
        goto out;
    seen = calloc((size_t)(npages + 7) / 8, 1);
    if (!seen) {
        rc = CL_ENOMEM;
        goto out;
    }
    rc = btree_walk(s, cur.root, npages, cur.generation, seen, &wr);
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
