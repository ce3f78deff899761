/*
 * btree.c -- the copy-on-write B+tree of the page store: store_get,
 * store_scan, store_apply, and the checking walk behind store_open and
 * store_verify.  Pages come from the pager (pager_internal.h: pager.c's
 * cache and page I/O, pager_free.c's allocation); their bytes are
 * page_format.h.
 *
 * Writes (store_apply, under the tree lock's write side), two paths:
 *   - In place (fast_apply), whenever the leaf needs no split, merge or
 *     compaction: the descent binary-searches each pinned page's slots,
 *     remembering the path; then, if some page of the path belongs to an
 *     older epoch, path_touch copies the path top down (a page copy is one
 *     memcpy into a new frame; the parent, already current, is repointed in
 *     place); then the leaf's cell is written into the gap or over the old
 *     cell and the slot array moved by one slot (page_format.h).  The
 *     frames changed are pinned and made writable by pg_make_writable,
 *     which keeps eviction off them; checkpoint_finish writes only frozen
 *     frames, which the writer never changes.  At most two pins at a time.
 *     Whether the fast path applies is decided before anything changes.
 *   - General (tree_modify), for the rest: a node is copied out of its
 *     frame into a private struct node, changed there, and written back
 *     whole (pg_overwrite, packed), so the writer holds no pin across a
 *     descent and a 16-frame cache always suffices.
 *   - Copy-on-write: a node written back goes to its own page when that
 *     page belongs to the current epoch, else to a newly allocated page,
 *     and the old one is freed (pager_free.c decides when it is
 *     reusable).  The new location travels up to the parent (struct up),
 *     which is therefore rewritten too: a change copies its path to the
 *     root once per epoch.
 *   - Splits pick the cut that minimises the larger half; both halves then
 *     fit, because a leaf cell is at most 1546 bytes and a branch cell 524.
 *   - A non-root node left under NODE_MIN_FILL (a quarter) is merged with a
 *     sibling when both fit in one page, else the two share their cells
 *     evenly.  A root branch left with one child, or an empty root leaf,
 *     collapses.
 *   - Values above PG_INLINE_MAX go to overflow pages, written before the
 *     leaf and freed when their key is replaced or deleted.
 *
 * Reads (store_get/store_scan, read side) search the pinned pages in the
 * cache directly and hold at most one pin at a time (a scan lets go of its
 * leaf while it reads an overflow value, then pins the leaf again: under
 * the read lock it cannot change), so no number of reader threads can
 * exhaust the cache.  A scan's callback runs with the leaf pinned.
 */
#include <stdlib.h>
#include <string.h>

#include "pager_internal.h"

#define MAX_CELLS 1024  /* > 2 * (NODE_CAP / 11) + 1: two merged leaves */
#define MAX_DEPTH 32

struct cell {
    const uint8_t *key;
    const uint8_t *val;   /* leaf, inline value */
    uint64_t ptr;         /* branch: child; leaf: first overflow page */
    uint32_t vlen;
    uint16_t klen;
    uint16_t flags;
};

/* A node copied out of its page.  Cell pointers refer to page[] or to
 * other live buffers. */
struct node {
    uint64_t pgno, epoch;
    int leaf;
    uint32_t n;
    uint64_t child0;
    struct cell c[MAX_CELLS];
    uint8_t page[PG_SIZE];
};

/* What a rewritten child tells its parent. */
struct up {
    int changed;        /* the child was rewritten, now at pgno */
    uint64_t pgno;
    int split;          /* ... and split: keys >= sep live in right */
    uint64_t right;
    int underflow;      /* ... and is under NODE_MIN_FILL */
    uint16_t seplen;
    uint8_t sep[CL_MAX_KEY];
};

static size_t cell_size(int leaf, const struct cell *c)
{
    if (!leaf)
        return BRANCH_CELL_HDR + c->klen;
    return LEAF_CELL_HDR + c->klen + ((c->flags & LEAF_F_OVFL) ? 8 : c->vlen);
}

static size_t cells_used(int leaf, const struct cell *c, uint32_t n)
{
    size_t used = 0;
    for (uint32_t i = 0; i < n; i++)
        used += 2 + cell_size(leaf, &c[i]);
    return used;
}

/* ---- raw page access (readers) ------------------------------------------ */

static const uint8_t *raw_key(const uint8_t *p, int leaf, unsigned i, uint16_t *klen)
{
    const uint8_t *c = p + pg_slot(p, i);
    *klen = get_le16(c);
    return c + (leaf ? LEAF_CELL_HDR : BRANCH_CELL_HDR);
}

/* The first cell whose key is > key (branch: the child to descend to). */
static unsigned raw_upper(const uint8_t *p, int leaf, const void *key, size_t klen)
{
    unsigned lo = 0, hi = pg_nkeys(p);
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        uint16_t kl;
        const uint8_t *k = raw_key(p, leaf, mid, &kl);
        if (store_key_cmp(k, kl, key, klen) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first cell whose key is >= key; *eq when it is equal. */
static unsigned raw_lower(const uint8_t *p, int leaf, const void *key, size_t klen, int *eq)
{
    unsigned lo = 0, hi = pg_nkeys(p);
    *eq = 0;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        uint16_t kl;
        const uint8_t *k = raw_key(p, leaf, mid, &kl);
        int c = store_key_cmp(k, kl, key, klen);
        if (c < 0) {
            lo = mid + 1;
        } else {
            if (c == 0)
                *eq = 1;
            hi = mid;
        }
    }
    return lo;
}

static uint64_t raw_child(const uint8_t *p, unsigned i)
{
    if (i == 0)
        return get_le64(p + NODE_OFF_LINK);
    return get_le64(p + pg_slot(p, i - 1) + 2);
}

/* ---- overflow values ------------------------------------------------------ */

static int ovfl_write(struct store *s, const uint8_t *val, uint32_t vlen, uint64_t *first)
{
    uint8_t img[PG_SIZE];
    uint32_t npg = (vlen + OVFL_CAP - 1) / OVFL_CAP;
    uint64_t next = 0;

    for (uint32_t k = npg; k-- > 0;) { /* last page first, so each knows its next */
        uint32_t off = k * OVFL_CAP, len = vlen - off < OVFL_CAP ? vlen - off : OVFL_CAP;
        uint64_t pgno = pg_alloc(s);
        int rc;
        memset(img, 0, PG_SIZE);
        put_le16(img + PG_OFF_TYPE, PG_OVERFLOW);
        put_le64(img + OVFL_OFF_NEXT, next);
        put_le32(img + OVFL_OFF_LEN, len);
        memcpy(img + OVFL_OFF_DATA, val + off, len);
        rc = pg_overwrite(s, pgno, img);
        if (rc)
            return rc;
        next = pgno;
    }
    *first = next;
    return 0;
}

/* Copies up to cap bytes of a vlen-byte overflow value into dst. */
static int ovfl_read(struct store *s, uint64_t pgno, uint32_t vlen, uint8_t *dst, size_t cap)
{
    uint32_t done = 0;

    while (done < vlen) {
        struct frame *f;
        int rc = pg_fetch(s, pgno, &f);
        if (rc)
            return rc;
        uint32_t len = get_le32(f->buf + OVFL_OFF_LEN);
        uint64_t next = get_le64(f->buf + OVFL_OFF_NEXT);
        if (pg_type(f->buf) != PG_OVERFLOW || len == 0 || len > OVFL_CAP || len > vlen - done ||
            (next == 0 && done + len != vlen)) {
            pg_unpin(s, f);
            pg_set_bad(s, pgno);
            return CL_ECORRUPT;
        }
        if (done < cap) {
            size_t n = cap - done < len ? cap - done : len;
            memcpy(dst + done, f->buf + OVFL_OFF_DATA, n);
        }
        pg_unpin(s, f);
        done += len;
        pgno = next;
    }
    return 0;
}

static int ovfl_free(struct store *s, uint64_t pgno)
{
    for (int k = 0; pgno; k++) {
        struct frame *f;
        int rc = pg_fetch(s, pgno, &f);
        if (rc)
            return rc;
        uint64_t next = get_le64(f->buf + OVFL_OFF_NEXT), epoch = pg_epoch(f->buf);
        int bad = pg_type(f->buf) != PG_OVERFLOW || k > (int)(CL_MAX_VALUE / OVFL_CAP);
        pg_unpin(s, f);
        if (bad) {
            pg_set_bad(s, pgno);
            return CL_ECORRUPT;
        }
        pg_free(s, pgno, epoch);
        pgno = next;
    }
    return 0;
}

/* ---- nodes (writer) ------------------------------------------------------------- */

static int node_decode(struct node *nd)
{
    const uint8_t *p = nd->page;
    uint16_t t = pg_type(p);

    if (t != PG_BRANCH && t != PG_LEAF)
        return CL_ECORRUPT;
    nd->leaf = t == PG_LEAF;
    nd->n = pg_nkeys(p);
    nd->epoch = pg_epoch(p);
    nd->child0 = get_le64(p + NODE_OFF_LINK);
    if (nd->n > MAX_CELLS || NODE_OFF_SLOTS + 2 * nd->n > PG_SIZE)
        return CL_ECORRUPT;
    for (uint32_t i = 0; i < nd->n; i++) {
        struct cell *c = &nd->c[i];
        size_t off = pg_slot(p, i), hdr = nd->leaf ? LEAF_CELL_HDR : BRANCH_CELL_HDR;
        if (off + hdr > PG_SIZE)
            return CL_ECORRUPT;
        memset(c, 0, sizeof *c);
        c->klen = get_le16(p + off);
        c->key = p + off + hdr;
        if (nd->leaf) {
            c->flags = get_le16(p + off + 2);
            c->vlen = get_le32(p + off + 4);
            if (c->flags & LEAF_F_OVFL) {
                if (off + hdr + c->klen + 8 > PG_SIZE)
                    return CL_ECORRUPT;
                c->ptr = get_le64(c->key + c->klen);
            } else {
                c->val = c->key + c->klen;
            }
        } else {
            c->ptr = get_le64(p + off + 2);
        }
        if (off + cell_size(nd->leaf, c) > PG_SIZE)
            return CL_ECORRUPT;
    }
    return 0;
}

static int node_load(struct store *s, uint64_t pgno, struct node *nd)
{
    struct frame *f;
    int rc = pg_fetch(s, pgno, &f);

    if (rc)
        return rc;
    memcpy(nd->page, f->buf, PG_SIZE);
    pg_unpin(s, f);
    nd->pgno = pgno;
    rc = node_decode(nd);
    if (rc)
        pg_set_bad(s, pgno);
    return rc;
}

static void node_encode(uint8_t *img, int leaf, uint64_t child0, const struct cell *c, uint32_t n)
{
    size_t off = PG_SIZE;

    memset(img, 0, PG_SIZE);
    put_le16(img + PG_OFF_TYPE, leaf ? PG_LEAF : PG_BRANCH);
    put_le16(img + PG_OFF_NKEYS, (uint16_t)n);
    put_le64(img + NODE_OFF_LINK, leaf ? 0 : child0);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *q;
        off -= cell_size(leaf, &c[i]);
        put_le16(img + NODE_OFF_SLOTS + 2 * i, (uint16_t)off);
        q = img + off;
        put_le16(q, c[i].klen);
        if (leaf) {
            put_le16(q + 2, c[i].flags);
            put_le32(q + 4, c[i].vlen);
            memcpy(q + LEAF_CELL_HDR, c[i].key, c[i].klen);
            q += LEAF_CELL_HDR + c[i].klen;
            if (c[i].flags & LEAF_F_OVFL)
                put_le64(q, c[i].ptr);
            else if (c[i].vlen)
                memcpy(q, c[i].val, c[i].vlen);
        } else {
            put_le64(q + 2, c[i].ptr);
            memcpy(q + BRANCH_CELL_HDR, c[i].key, c[i].klen);
        }
    }
}

/* Writes a node back: in place when old_pgno is of the current epoch, else
 * to a new page (old_pgno 0: a new node), freeing the old one. */
static int node_write(struct store *s, int leaf, uint64_t child0, const struct cell *c, uint32_t n,
                      uint64_t old_pgno, uint64_t old_epoch, uint64_t *pgno)
{
    uint8_t img[PG_SIZE];

    node_encode(img, leaf, child0, c, n);
    if (old_pgno && old_epoch == s->cur_epoch) {
        *pgno = old_pgno;
    } else {
        *pgno = pg_alloc(s);
        if (old_pgno)
            pg_free(s, old_pgno, old_epoch);
    }
    return pg_overwrite(s, *pgno, img);
}

/* Where to cut n cells into two nodes -- leaf: [0,k) [k,n); branch: [0,k),
 * cell k moves up, [k+1,n) -- so that the larger half is smallest. */
static int split_point(int leaf, const struct cell *c, uint32_t n, uint32_t *out)
{
    size_t total = cells_used(leaf, c, n), left = 0, best = (size_t)-1;
    uint32_t last = leaf ? n - 1 : n - 2;

    if (n < 3)
        return CL_ECORRUPT;
    for (uint32_t k = 1; k <= last; k++) {
        left += 2 + cell_size(leaf, &c[k - 1]);
        size_t right = total - left - (leaf ? 0 : 2 + cell_size(leaf, &c[k]));
        size_t big = left > right ? left : right;
        if (big < best) {
            best = big;
            *out = k;
        }
    }
    return best <= NODE_CAP ? 0 : CL_ECORRUPT;
}

static uint32_t node_lower(const struct node *nd, const uint8_t *key, size_t klen, int *eq)
{
    uint32_t lo = 0, hi = nd->n;
    *eq = 0;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int c = store_key_cmp(nd->c[mid].key, nd->c[mid].klen, key, klen);
        if (c < 0) {
            lo = mid + 1;
        } else {
            if (c == 0)
                *eq = 1;
            hi = mid;
        }
    }
    return lo;
}

static uint32_t node_upper(const struct node *nd, const uint8_t *key, size_t klen)
{
    uint32_t lo = 0, hi = nd->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (store_key_cmp(nd->c[mid].key, nd->c[mid].klen, key, klen) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t node_child(const struct node *nd, uint32_t i)
{
    return i ? nd->c[i - 1].ptr : nd->child0;
}

static void node_set_child(struct node *nd, uint32_t i, uint64_t pgno)
{
    if (i)
        nd->c[i - 1].ptr = pgno;
    else
        nd->child0 = pgno;
}

static void cells_insert(struct node *nd, uint32_t i, const struct cell *c)
{
    memmove(&nd->c[i + 1], &nd->c[i], (nd->n - i) * sizeof *c);
    nd->c[i] = *c;
    nd->n++;
}

static void cells_remove(struct node *nd, uint32_t i)
{
    memmove(&nd->c[i], &nd->c[i + 1], (nd->n - i - 1) * sizeof nd->c[0]);
    nd->n--;
}

/* Writes a changed node back, splitting it when it overflows. */
static int node_store(struct store *s, struct node *nd, struct up *up)
{
    size_t used = cells_used(nd->leaf, nd->c, nd->n);
    uint32_t k;
    int rc;

    up->changed = 1;
    up->split = 0;
    up->underflow = 0;
    if (used <= NODE_CAP) {
        up->underflow = used < NODE_MIN_FILL;
        return node_write(s, nd->leaf, nd->child0, nd->c, nd->n, nd->pgno, nd->epoch, &up->pgno);
    }
    rc = split_point(nd->leaf, nd->c, nd->n, &k);
    if (rc)
        return rc;
    up->split = 1;
    up->seplen = nd->c[k].klen;
    memcpy(up->sep, nd->c[k].key, nd->c[k].klen);
    rc = node_write(s, nd->leaf, nd->child0, nd->c, k, nd->pgno, nd->epoch, &up->pgno);
    if (rc)
        return rc;
    if (nd->leaf)
        return node_write(s, 1, 0, nd->c + k, nd->n - k, 0, 0, &up->right);
    return node_write(s, 0, nd->c[k].ptr, nd->c + k + 1, nd->n - k - 1, 0, 0, &up->right);
}

/* Child i of p is under-full: merge it with a sibling or share cells with
 * it.  *lp and *rp receive the siblings' copies, which p's cells may now
 * point into: the caller frees them after writing p. */
static int rebalance(struct store *s, struct node *p, uint32_t i, struct node **lp, struct node **rp)
{
    uint32_t j = i > 0 ? i - 1 : 0, n = 0, k;
    struct node *l = malloc(sizeof *l), *r = malloc(sizeof *r);
    struct cell *m = malloc(MAX_CELLS * sizeof *m);
    uint64_t newl, newr;
    int rc;

    *lp = l;
    *rp = r;
    if (!l || !r || !m) {
        rc = CL_ENOMEM;
        goto out;
    }
    rc = node_load(s, node_child(p, j), l);
    if (rc == 0)
        rc = node_load(s, node_child(p, j + 1), r);
    if (rc)
        goto out;
    if (l->leaf != r->leaf || l->n + r->n + 1 > MAX_CELLS) {
        pg_set_bad(s, p->pgno);
        rc = CL_ECORRUPT;
        goto out;
    }
    memcpy(m, l->c, l->n * sizeof *m);
    n = l->n;
    if (!l->leaf) /* the separator comes down over r's first child */
        m[n++] = (struct cell){.key = p->c[j].key, .klen = p->c[j].klen, .ptr = r->child0};
    memcpy(m + n, r->c, r->n * sizeof *m);
    n += r->n;

    if (cells_used(l->leaf, m, n) <= NODE_CAP) { /* merge into l */
        rc = node_write(s, l->leaf, l->child0, m, n, l->pgno, l->epoch, &newl);
        if (rc)
            goto out;
        pg_free(s, r->pgno, r->epoch);
        cells_remove(p, j);
        node_set_child(p, j, newl);
        goto out;
    }
    rc = split_point(l->leaf, m, n, &k);
    if (rc == 0)
        rc = node_write(s, l->leaf, l->child0, m, k, l->pgno, l->epoch, &newl);
    if (rc == 0) {
        if (l->leaf)
            rc = node_write(s, 1, 0, m + k, n - k, r->pgno, r->epoch, &newr);
        else
            rc = node_write(s, 0, m[k].ptr, m + k + 1, n - k - 1, r->pgno, r->epoch, &newr);
    }
    if (rc)
        goto out;
    p->c[j].key = m[k].key;
    p->c[j].klen = m[k].klen;
    p->c[j].ptr = newr;
    node_set_child(p, j, newl);
out:
    free(m);
    return rc;
}

struct wop {
    const uint8_t *key;
    uint16_t klen;
    int del;
    struct cell cell;   /* put: the leaf cell (inline value or overflow pages) */
};

static int tree_modify(struct store *s, uint64_t pgno, const struct wop *op, int level, struct up *up)
{
    struct node *nd = malloc(sizeof *nd), *l = NULL, *r = NULL;
    struct up cu;
    uint32_t i;
    int rc, eq;

    up->changed = 0;
    if (!nd)
        return CL_ENOMEM;
    if (level >= MAX_DEPTH) {
        pg_set_bad(s, pgno);
        rc = CL_ECORRUPT;
        goto out;
    }
    rc = node_load(s, pgno, nd);
    if (rc)
        goto out;
    if (nd->leaf) {
        i = node_lower(nd, op->key, op->klen, &eq);
        if (op->del && !eq)
            goto out; /* absent: nothing changes */
        if (eq && (nd->c[i].flags & LEAF_F_OVFL)) {
            rc = ovfl_free(s, nd->c[i].ptr);
            if (rc)
                goto out;
        }
        if (op->del) {
            cells_remove(nd, i);
            atomic_fetch_sub(&s->nentries, 1);
        } else if (eq) {
            nd->c[i] = op->cell;
        } else {
            cells_insert(nd, i, &op->cell);
            atomic_fetch_add(&s->nentries, 1);
        }
        rc = node_store(s, nd, up);
        goto out;
    }
    i = node_upper(nd, op->key, op->klen);
    rc = tree_modify(s, node_child(nd, i), op, level + 1, &cu);
    if (rc || !cu.changed)
        goto out;
    node_set_child(nd, i, cu.pgno);
    if (cu.split) {
        struct cell c = {.key = cu.sep, .klen = cu.seplen, .ptr = cu.right};
        cells_insert(nd, i, &c);
    } else if (cu.underflow && nd->n > 0) {
        rc = rebalance(s, nd, i, &l, &r);
        if (rc)
            goto out;
    }
    rc = node_store(s, nd, up);
out:
    free(nd);
    free(l);
    free(r);
    return rc;
}

/* A root branch with one child or an empty root leaf goes away. */
static int root_collapse(struct store *s)
{
    while (s->root) {
        struct frame *f;
        int rc = pg_fetch(s, s->root, &f);
        if (rc)
            return rc;
        uint16_t t = pg_type(f->buf), n = pg_nkeys(f->buf);
        uint64_t epoch = pg_epoch(f->buf), child0 = get_le64(f->buf + NODE_OFF_LINK);
        pg_unpin(s, f);
        if (n > 0)
            break;
        pg_free(s, s->root, epoch);
        if (t == PG_LEAF) {
            s->root = 0;
            atomic_store(&s->depth, 0);
        } else {
            s->root = child0;
            atomic_fetch_sub(&s->depth, 1);
        }
    }
    return 0;
}

/* ---- in-place changes (writer fast path) ------------------------------------------ */

/* Bytes of the cell at off of a node page; 0 when it does not lie within the page. */
static size_t raw_cell_size(const uint8_t *p, int leaf, size_t off)
{
    size_t hdr = leaf ? LEAF_CELL_HDR : BRANCH_CELL_HDR, sz;

    if (off < NODE_OFF_SLOTS || off + hdr > PG_SIZE)
        return 0;
    sz = hdr + get_le16(p + off);
    if (leaf)
        sz += (get_le16(p + off + 2) & LEAF_F_OVFL) ? 8 : get_le32(p + off + 4);
    return off + sz <= PG_SIZE ? sz : 0;
}

/* The lowest cell offset: the free gap is [slots end, this). */
static size_t raw_cell_lo(const uint8_t *p, unsigned n)
{
    size_t lo = PG_SIZE;
    for (unsigned i = 0; i < n; i++) {
        size_t off = pg_slot(p, i);
        if (off < lo)
            lo = off;
    }
    return lo;
}

/* A node's used space (slots and cells, not holes); SIZE_MAX when a cell is out of bounds. */
static size_t raw_used(const uint8_t *p, int leaf, unsigned n)
{
    size_t used = 0;
    for (unsigned i = 0; i < n; i++) {
        size_t sz = raw_cell_size(p, leaf, pg_slot(p, i));
        if (sz == 0)
            return SIZE_MAX;
        used += 2 + sz;
    }
    return used;
}

static void raw_set_child(uint8_t *p, unsigned i, uint64_t pgno)
{
    if (i == 0)
        put_le64(p + NODE_OFF_LINK, pgno);
    else
        put_le64(p + pg_slot(p, i - 1) + 2, pgno);
}

static void leaf_cell_put(uint8_t *q, const struct cell *c)
{
    put_le16(q, c->klen);
    put_le16(q + 2, c->flags);
    put_le32(q + 4, c->vlen);
    memcpy(q + LEAF_CELL_HDR, c->key, c->klen);
    q += LEAF_CELL_HDR + c->klen;
    if (c->flags & LEAF_F_OVFL)
        put_le64(q, c->ptr);
    else if (c->vlen)
        memcpy(q, c->val, c->vlen);
}

/* The pages from the root down to a leaf, and the child taken at each branch. */
struct path {
    int depth;                  /* branch levels; pgno[depth] is the leaf */
    uint64_t pgno[MAX_DEPTH];
    uint64_t epoch[MAX_DEPTH];
    unsigned idx[MAX_DEPTH];
};

/* Makes every page of the path belong to the current epoch, top down: a
 * page of an older epoch is copied whole into a new page (one memcpy) and
 * its parent -- already current -- is pointed at the copy in place.
 * Returns the leaf's frame pinned and writable. */
static int path_touch(struct store *s, struct path *pa, struct frame **out)
{
    struct frame *parent = NULL, *f = NULL;
    int k = 0, rc = 0;

    while (k < pa->depth && pa->epoch[k] == s->cur_epoch)
        k++;
    if (k > 0) {
        rc = pg_fetch(s, pa->pgno[k - 1], &parent);
        if (rc)
            return rc;
        pg_make_writable(s, parent);
    }
    for (int lvl = k; lvl <= pa->depth; lvl++) {
        rc = pg_fetch(s, pa->pgno[lvl], &f);
        if (rc)
            break;
        if (pa->epoch[lvl] != s->cur_epoch) {
            uint64_t old = pa->pgno[lvl], np = pg_alloc(s);
            struct frame *nf = NULL;
            rc = pg_overwrite_pinned(s, np, f->buf, &nf);
            pg_unpin(s, f);
            f = NULL;
            if (rc)
                break;
            pg_free(s, old, pa->epoch[lvl]);
            f = nf;
            pa->pgno[lvl] = np;
            pa->epoch[lvl] = s->cur_epoch;
            if (parent)
                raw_set_child(parent->buf, pa->idx[lvl - 1], np);
            else
                s->root = np;
        } else {
            pg_make_writable(s, f);
        }
        if (parent)
            pg_unpin(s, parent);
        parent = f;
        f = NULL;
    }
    if (rc) {
        if (parent)
            pg_unpin(s, parent);
        return rc;
    }
    *out = parent;
    return 0;
}

/* Applies op by changing its leaf in place when no split, merge or
 * compaction is needed: a binary search of each page's slots on the way
 * down, then one cell written and at most one memmove of the slot array.
 * Returns 1, having changed nothing, when the general path must do it
 * (including any page that does not look right: it reports the damage). */
static int fast_apply(struct store *s, const struct wop *op)
{
    struct path pa;
    struct frame *f = NULL;
    uint64_t pgno = s->root, old_ovfl = 0;
    size_t slots_end, lo, sz = 0, old_sz = 0, old_off = 0, at = 0;
    unsigned n, i;
    int level, rc, eq, all_cur = 1;
    uint8_t *p;

    for (level = 0;; level++) {
        if (level >= MAX_DEPTH)
            return 1;
        rc = pg_fetch(s, pgno, &f);
        if (rc)
            return rc;
        p = f->buf;
        n = pg_nkeys(p);
        pa.pgno[level] = pgno;
        pa.epoch[level] = pg_epoch(p);
        all_cur &= pa.epoch[level] == s->cur_epoch;
        if (pg_type(p) == PG_LEAF)
            break;
        if (pg_type(p) != PG_BRANCH || NODE_OFF_SLOTS + 2 * (size_t)n > PG_SIZE)
            goto fallback;
        i = raw_upper(p, 0, op->key, op->klen);
        if (i > 0 && raw_cell_size(p, 0, pg_slot(p, i - 1)) == 0)
            goto fallback;
        pa.idx[level] = i;
        pgno = raw_child(p, i);
        pg_unpin(s, f);
    }
    pa.depth = level;

    slots_end = NODE_OFF_SLOTS + 2 * (size_t)n;
    if (slots_end > PG_SIZE)
        goto fallback;
    lo = raw_cell_lo(p, n);
    if (lo < slots_end)
        goto fallback;
    i = raw_lower(p, 1, op->key, op->klen, &eq);
    if (op->del && !eq) {
        pg_unpin(s, f);
        return 0; /* absent: nothing changes */
    }
    if (eq) {
        old_off = pg_slot(p, i);
        old_sz = raw_cell_size(p, 1, old_off);
        if (old_sz == 0)
            goto fallback;
        if (get_le16(p + old_off + 2) & LEAF_F_OVFL)
            old_ovfl = get_le64(p + old_off + LEAF_CELL_HDR + op->klen);
    }
    if (!op->del)
        sz = cell_size(1, &op->cell);
    if (op->del || sz < old_sz) { /* shrinking: a non-root leaf must stay at least NODE_MIN_FILL */
        size_t used = raw_used(p, 1, n), after;
        if (used == SIZE_MAX)
            goto fallback;
        after = used - old_sz + sz - (op->del ? 2 : 0);
        if (pa.depth > 0 ? after < NODE_MIN_FILL : n == 1 && op->del)
            goto fallback;
    }
    if (op->del)
        at = 0;
    else if (eq && sz <= old_sz)
        at = old_off;                   /* over the old cell */
    else if (sz + (eq ? 0 : 2) <= lo - slots_end)
        at = lo - sz;                   /* from the gap */
    else
        goto fallback;                  /* split, or compaction */

    /* From here on the change happens. */
    if (old_ovfl) {
        rc = ovfl_free(s, old_ovfl);
        if (rc) {
            pg_unpin(s, f);
            return rc;
        }
    }
    if (all_cur) {
        pg_make_writable(s, f);
    } else {
        pg_unpin(s, f);
        rc = path_touch(s, &pa, &f);
        if (rc)
            return rc;
    }
    p = f->buf; /* same bytes as before, possibly in a new page */
    if (op->del) {
        memmove(p + NODE_OFF_SLOTS + 2 * i, p + NODE_OFF_SLOTS + 2 * (i + 1), 2 * (size_t)(n - i - 1));
        put_le16(p + PG_OFF_NKEYS, (uint16_t)(n - 1));
        atomic_fetch_sub(&s->nentries, 1);
    } else {
        leaf_cell_put(p + at, &op->cell);
        if (!eq) {
            memmove(p + NODE_OFF_SLOTS + 2 * (i + 1), p + NODE_OFF_SLOTS + 2 * i, 2 * (size_t)(n - i));
            put_le16(p + PG_OFF_NKEYS, (uint16_t)(n + 1));
            atomic_fetch_add(&s->nentries, 1);
        }
        put_le16(p + NODE_OFF_SLOTS + 2 * i, (uint16_t)at);
    }
    pg_unpin(s, f);
    return 0;

fallback:
    pg_unpin(s, f);
    return 1;
}

static int apply_one(struct store *s, const struct store_op *o)
{
    struct wop op = {.key = o->key, .klen = (uint16_t)o->klen, .del = o->del};
    struct up up;
    uint64_t pgno;
    int rc;

    if (!o->del) {
        op.cell.key = o->key;
        op.cell.klen = (uint16_t)o->klen;
        op.cell.vlen = o->vlen;
        if (o->vlen > PG_INLINE_MAX) {
            op.cell.flags = LEAF_F_OVFL;
            rc = ovfl_write(s, o->val, o->vlen, &op.cell.ptr);
            if (rc)
                return rc;
        } else {
            op.cell.val = o->val;
        }
    }
    if (s->root == 0) {
        if (o->del)
            return 0;
        rc = node_write(s, 1, 0, &op.cell, 1, 0, 0, &pgno);
        if (rc)
            return rc;
        s->root = pgno;
        atomic_store(&s->depth, 1);
        atomic_fetch_add(&s->nentries, 1);
        return 0;
    }
    rc = fast_apply(s, &op);
    if (rc <= 0)
        return rc;
    rc = tree_modify(s, s->root, &op, 0, &up);
    if (rc || !up.changed)
        return rc;
    s->root = up.pgno;
    if (up.split) { /* the tree grows a level */
        struct cell c = {.key = up.sep, .klen = up.seplen, .ptr = up.right};
        rc = node_write(s, 0, s->root, &c, 1, 0, 0, &pgno);
        if (rc)
            return rc;
        s->root = pgno;
        atomic_fetch_add(&s->depth, 1);
        return 0;
    }
    return up.underflow ? root_collapse(s) : 0;
}

int store_apply(struct store *s, const struct store_op *ops, size_t n, uint64_t lsn)
{
    int rc = 0;

    if (!s || (n && !ops))
        return CL_EINVAL;
    rc = pg_check_writable(s);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) { /* all or nothing: check before changing */
        if (ops[i].klen > CL_MAX_KEY || (!ops[i].del && ops[i].vlen > CL_MAX_VALUE))
            return CL_ETOOBIG;
        if (!ops[i].key || ops[i].klen == 0 || (!ops[i].del && ops[i].vlen && !ops[i].val))
            return CL_EINVAL;
    }
    pthread_rwlock_wrlock(&s->tree_lock);
    s->cur_lsn = lsn;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = apply_one(s, &ops[i]);
    if (rc) {
        pg_break(s, rc);
        atomic_store(&s->torn, 1); /* readers must not see part of the batch */
    }
    pthread_rwlock_unlock(&s->tree_lock);
    return rc;
}

/* ---- reads --------------------------------------------------------------------- */

int store_get(struct store *s, const void *key, size_t klen, void *buf, size_t cap, size_t *vlen)
{
    uint64_t pgno;
    int rc = CL_ENOTFOUND, eq;

    if (!s || !key || klen == 0 || (cap && !buf))
        return CL_EINVAL;
    if (klen > CL_MAX_KEY)
        return CL_ETOOBIG;
    pthread_rwlock_rdlock(&s->tree_lock);
    if (atomic_load(&s->torn)) {
        pthread_rwlock_unlock(&s->tree_lock);
        return CL_EBROKEN;
    }
    pgno = s->root;
    for (int level = 0; pgno; level++) {
        struct frame *f;
        if (level >= MAX_DEPTH) {
            pg_set_bad(s, pgno);
            rc = CL_ECORRUPT;
            break;
        }
        rc = pg_fetch(s, pgno, &f);
        if (rc)
            break;
        const uint8_t *p = f->buf;
        uint16_t t = pg_type(p);
        if (t == PG_BRANCH) {
            uint64_t child = raw_child(p, raw_upper(p, 0, key, klen));
            pg_unpin(s, f);
            pgno = child;
            rc = CL_ENOTFOUND;
            continue;
        }
        if (t != PG_LEAF) {
            pg_unpin(s, f);
            pg_set_bad(s, pgno);
            rc = CL_ECORRUPT;
            break;
        }
        unsigned i = raw_lower(p, 1, key, klen, &eq);
        if (!eq) {
            pg_unpin(s, f);
            rc = CL_ENOTFOUND;
            break;
        }
        const uint8_t *c = p + pg_slot(p, i);
        uint16_t flags = get_le16(c + 2);
        uint32_t vl = get_le32(c + 4);
        const uint8_t *v = c + LEAF_CELL_HDR + get_le16(c);
        if (flags & LEAF_F_OVFL) {
            uint64_t first = get_le64(v);
            pg_unpin(s, f);
            rc = ovfl_read(s, first, vl, buf, cap);
        } else {
            if (cap && vl)
                memcpy(buf, v, cap < vl ? cap : vl);
            pg_unpin(s, f);
            rc = 0;
        }
        if (rc == 0 && vlen)
            *vlen = vl;
        break;
    }
    pthread_rwlock_unlock(&s->tree_lock);
    return rc;
}

struct scan_level {
    uint64_t pgno;
    unsigned idx, n;
};

int store_scan(struct store *s, const void *lo, size_t lolen, const void *hi, size_t hilen,
               store_scan_fn fn, void *arg)
{
    struct scan_level st[MAX_DEPTH];
    struct frame *lf = NULL; /* the leaf being scanned, pinned */
    uint8_t *vbuf = NULL, kbuf[CL_MAX_KEY];
    uint64_t pgno;
    int sp = 0, first = 1, rc = 0, eq;

    pthread_rwlock_rdlock(&s->tree_lock);
    if (atomic_load(&s->torn)) {
        pthread_rwlock_unlock(&s->tree_lock);
        return CL_EBROKEN;
    }
    pgno = s->root;
    while (pgno) {
        /* down to a leaf, remembering the path */
        for (;;) {
            struct frame *f;
            if (sp >= MAX_DEPTH) {
                pg_set_bad(s, pgno);
                rc = CL_ECORRUPT;
                goto out;
            }
            rc = pg_fetch(s, pgno, &f);
            if (rc)
                goto out;
            uint16_t t = pg_type(f->buf);
            if (t == PG_LEAF) {
                lf = f;
                break;
            }
            if (t != PG_BRANCH) {
                pg_unpin(s, f);
                pg_set_bad(s, pgno);
                rc = CL_ECORRUPT;
                goto out;
            }
            unsigned i = first && lo ? raw_upper(f->buf, 0, lo, lolen) : 0;
            st[sp++] = (struct scan_level){.pgno = pgno, .idx = i, .n = pg_nkeys(f->buf)};
            pgno = raw_child(f->buf, i);
            pg_unpin(s, f);
        }
        const uint8_t *leaf = lf->buf;
        unsigned n = pg_nkeys(leaf), i = first && lo ? raw_lower(leaf, 1, lo, lolen, &eq) : 0;
        first = 0;
        for (; i < n; i++) {
            const uint8_t *c = leaf + pg_slot(leaf, i), *k = c + LEAF_CELL_HDR, *v;
            uint16_t kl = get_le16(c), flags = get_le16(c + 2);
            uint32_t vl = get_le32(c + 4);
            if (hi && store_key_cmp(k, kl, hi, hilen) >= 0)
                goto out;
            v = k + kl;
            if (!(flags & LEAF_F_OVFL)) {
                rc = fn(arg, k, kl, v, vl);
                if (rc)
                    goto out;
                continue;
            }
            /* An overflow value: hold no leaf pin while reading its pages.
             * The leaf cannot change meanwhile (read lock), only be evicted. */
            if (vl > CL_MAX_VALUE || kl > CL_MAX_KEY) {
                pg_set_bad(s, pgno);
                rc = CL_ECORRUPT;
                goto out;
            }
            if (!vbuf && !(vbuf = malloc(CL_MAX_VALUE))) {
                rc = CL_ENOMEM;
                goto out;
            }
            uint64_t first_ovfl = get_le64(v);
            memcpy(kbuf, k, kl);
            pg_unpin(s, lf);
            lf = NULL;
            rc = ovfl_read(s, first_ovfl, vl, vbuf, CL_MAX_VALUE);
            if (rc == 0)
                rc = fn(arg, kbuf, kl, vbuf, vl);
            if (rc == 0)
                rc = pg_fetch(s, pgno, &lf);
            if (rc)
                goto out;
            leaf = lf->buf;
        }
        pg_unpin(s, lf);
        lf = NULL;
        /* up to the next unvisited child */
        while (sp > 0 && st[sp - 1].idx >= st[sp - 1].n)
            sp--;
        if (sp == 0)
            break;
        struct frame *f;
        rc = pg_fetch(s, st[sp - 1].pgno, &f);
        if (rc)
            goto out;
        pgno = raw_child(f->buf, ++st[sp - 1].idx);
        pg_unpin(s, f);
    }
out:
    if (lf)
        pg_unpin(s, lf);
    pthread_rwlock_unlock(&s->tree_lock);
    free(vbuf);
    return rc;
}

/* ---- the checking walk (open, verify) --------------------------------------------- */

struct walker {
    struct store *s;
    uint64_t npages, max_epoch;
    uint8_t *seen;
    struct walk_result *res;
    int leaf_level;
};

static int walk_bad(struct walker *w, uint64_t pgno)
{
    pg_set_bad(w->s, pgno);
    return CL_ECORRUPT;
}

/* pgno is referenced from page from: it must be a tree page not seen yet. */
static int walk_claim(struct walker *w, uint64_t pgno, uint64_t from)
{
    if (pgno < META_PAGES || pgno >= w->npages || (w->seen[pgno / 8] & (1u << (pgno % 8))))
        return walk_bad(w, from);
    w->seen[pgno / 8] |= (uint8_t)(1u << (pgno % 8));
    w->res->pages++;
    return 0;
}

static int walk_ovfl(struct walker *w, uint64_t pgno, uint32_t vlen, uint64_t from)
{
    uint8_t buf[PG_SIZE];
    uint32_t total = 0;
    int rc;

    while (pgno) {
        rc = walk_claim(w, pgno, from);
        if (rc == 0)
            rc = pg_read_disk(w->s, pgno, buf);
        if (rc)
            return rc;
        uint32_t len = get_le32(buf + OVFL_OFF_LEN);
        if (pg_type(buf) != PG_OVERFLOW || pg_epoch(buf) > w->max_epoch || len == 0 ||
            len > OVFL_CAP || len > vlen - total)
            return walk_bad(w, pgno);
        total += len;
        from = pgno;
        pgno = get_le64(buf + OVFL_OFF_NEXT);
    }
    return total == vlen ? 0 : walk_bad(w, from);
}

static int walk_node(struct walker *w, uint64_t pgno, uint64_t from, int level, const uint8_t *lo,
                     size_t lolen, const uint8_t *hi, size_t hilen)
{
    uint8_t *p = NULL;
    const uint8_t *prev = NULL;
    uint16_t prevlen = 0;
    size_t used = 0;
    int rc, leaf;
    unsigned n;

    if (level >= MAX_DEPTH)
        return walk_bad(w, from);
    rc = walk_claim(w, pgno, from);
    if (rc)
        return rc;
    p = malloc(PG_SIZE);
    if (!p)
        return CL_ENOMEM;
    rc = pg_read_disk(w->s, pgno, p);
    if (rc)
        goto out;
    rc = CL_ECORRUPT;
    leaf = pg_type(p) == PG_LEAF;
    n = pg_nkeys(p);
    if ((!leaf && pg_type(p) != PG_BRANCH) || pg_epoch(p) > w->max_epoch ||
        NODE_OFF_SLOTS + 2 * n > PG_SIZE)
        goto bad;
    if (leaf ? (w->leaf_level >= 0 && w->leaf_level != level)
             : (w->leaf_level >= 0 && w->leaf_level <= level))
        goto bad; /* leaves at different depths */
    if (leaf)
        w->leaf_level = level;
    for (unsigned i = 0; i < n; i++) {
        size_t off = pg_slot(p, i), hdr = leaf ? LEAF_CELL_HDR : BRANCH_CELL_HDR, sz;
        if (off < NODE_OFF_SLOTS + 2 * n || off + hdr > PG_SIZE)
            goto bad;
        uint16_t kl = get_le16(p + off), flags = leaf ? get_le16(p + off + 2) : 0;
        uint32_t vl = leaf ? get_le32(p + off + 4) : 0;
        const uint8_t *k = p + off + hdr;
        if (kl == 0 || kl > CL_MAX_KEY || vl > CL_MAX_VALUE || (flags & ~LEAF_F_OVFL))
            goto bad;
        if ((flags & LEAF_F_OVFL) ? vl <= PG_INLINE_MAX : vl > PG_INLINE_MAX)
            goto bad;
        sz = hdr + kl + (leaf ? ((flags & LEAF_F_OVFL) ? 8 : vl) : 0);
        used += 2 + sz;
        if (off + sz > PG_SIZE || used > NODE_CAP)
            goto bad;
        if ((prev && store_key_cmp(prev, prevlen, k, kl) >= 0) || (lo && store_key_cmp(k, kl, lo, lolen) < 0) ||
            (hi && store_key_cmp(k, kl, hi, hilen) >= 0))
            goto bad; /* out of order, or outside the parent's separators */
        prev = k;
        prevlen = kl;
        if (leaf) {
            w->res->entries++;
            if (flags & LEAF_F_OVFL) {
                rc = walk_ovfl(w, get_le64(k + kl), vl, pgno);
                if (rc)
                    goto out;
                rc = CL_ECORRUPT;
            }
        }
    }
    if (!leaf) {
        for (unsigned i = 0; i <= n; i++) {
            uint16_t kl0 = 0, kl1 = 0;
            const uint8_t *clo = i ? raw_key(p, 0, i - 1, &kl0) : lo;
            const uint8_t *chi = i < n ? raw_key(p, 0, i, &kl1) : hi;
            rc = walk_node(w, raw_child(p, i), pgno, level + 1, clo, i ? kl0 : lolen, chi,
                           i < n ? kl1 : hilen);
            if (rc)
                goto out;
        }
    }
    rc = 0;
    goto out;
bad:
    rc = walk_bad(w, pgno);
out:
    free(p);
    return rc;
}

int btree_walk(struct store *s, uint64_t root, uint64_t npages, uint64_t max_epoch, uint8_t *seen,
               struct walk_result *out)
{
    struct walker w = {.s = s, .npages = npages, .max_epoch = max_epoch, .seen = seen, .res = out,
                       .leaf_level = -1};
    int rc;

    memset(out, 0, sizeof *out);
    if (root == 0)
        return 0;
    rc = walk_node(&w, root, max_epoch % META_PAGES, 0, NULL, 0, NULL, 0);
    out->depth = w.leaf_level < 0 ? 0 : (uint32_t)w.leaf_level + 1;
    return rc;
}
