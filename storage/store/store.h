/*
 * store.h -- the page store: a page file of fixed-size checksummed pages,
 * a bounded page cache, a copy-on-write B+tree, and crash-safe checkpoints
 * by shadow paging with two alternating meta pages (LMDB-like).
 *
 * Page file "data.clp":
 *   page 0 and page 1 are meta pages; the valid one with the highest
 *   generation is current.  Every other page is a B+tree branch or leaf
 *   page, an overflow page (a large value), or free.
 *
 * Shadow paging with epochs:
 *   - The durable snapshot is what the current meta page names.  Its pages
 *     are never overwritten.
 *   - Every page carries the epoch in which it was written.  A writer may
 *     modify a page in place only if it belongs to the current epoch;
 *     otherwise it copies it to a newly allocated page (copy-on-write) and
 *     updates the parent, up to the root.
 *   - store_checkpoint_begin() ends the epoch: the tree as of that moment is
 *     frozen (writers copy from then on) and becomes the checkpoint's
 *     snapshot.  store_checkpoint_finish() writes its dirty pages, syncs the
 *     page file, writes the other meta page (root, checkpoint LSN,
 *     generation+1), syncs again.  Only then do pages freed during the epoch
 *     become reusable.
 *   - A dirty page may be evicted (written) at any time: its location is in
 *     no durable snapshot.
 * Free space is not stored: opening walks the tree from the durable root
 * and every page not reached is free.
 *
 * Concurrency: one writer (the engine's writer lock) calls store_apply and
 * store_checkpoint_begin; any number of threads call store_get/store_scan;
 * store_checkpoint_finish runs beside both.  A batch applied with
 * store_apply becomes visible to readers all at once.
 *
 * Errors: a failed page write, read or sync makes the store broken
 * (sticky); CL_ECORRUPT names a page whose checksum or structure is bad
 * (store_bad_page()).  When store_apply fails part way through a batch the
 * tree may hold part of it: from then on store_get and store_scan return
 * CL_EBROKEN, so no reader ever sees part of a batch (reopen to recover).
 */
#ifndef CL_STORE_H
#define CL_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../include/commitlab.h" /* CL_E* codes */
#include "vfs.h"

#define STORE_FILE "data.clp"
#define STORE_PAGE_SIZE 4096u
#define STORE_MAGIC "CLDATA01"
#define STORE_VERSION 1u

/* What the current meta page says. */
struct store_meta {
    uint32_t version, page_size;
    uint64_t db_id;
    uint64_t generation;        /* checkpoints so far; the higher meta wins */
    uint64_t root;              /* B+tree root page, 0 when empty */
    uint64_t npages;            /* pages in the file (high-water mark) */
    uint64_t nentries;          /* keys in the tree */
    uint64_t checkpoint_lsn;    /* the snapshot holds every transaction committed below this LSN */
    uint64_t wal_segment_size;  /* fixed at creation */
    uint64_t wal_segno;         /* the segment the log continues in after this checkpoint */
};

struct store_config {
    struct vfs *vfs;
    const char *dir;
    uint64_t cache_size;        /* bytes; at least 16 pages are kept */
    int create;                 /* create data.clp when absent */
    int readonly;               /* never write (inspect) */
    uint64_t db_id;             /* for a new file */
    uint64_t wal_segment_size;  /* for a new file */
};

struct store;

/* Opens (or creates, writing both meta pages durably) the page file.
 * *created is set to 1 when a new file was made. */
int store_open(const struct store_config *cfg, struct store **out, int *created);
void store_get_meta(struct store *s, struct store_meta *out); /* the durable meta */

/* Reads: value copied into buf (up to cap), *vlen = full length.
 * CL_ENOTFOUND when absent. */
int store_get(struct store *s, const void *key, size_t klen, void *buf, size_t cap, size_t *vlen);

/* The order of keys in the store, which scans follow: memcmp order, the
 * shorter first on a common prefix.  The engine merges a transaction's
 * write set into scans with the same function. */
static inline int store_key_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

/* Calls fn for keys in [lo, hi) in order (NULL bound = unbounded).  Holds
 * the read lock during the scan: fn must not call back into the store. */
typedef int (*store_scan_fn)(void *arg, const void *key, size_t klen, const void *val, size_t vlen);
int store_scan(struct store *s, const void *lo, size_t lolen, const void *hi, size_t hilen,
               store_scan_fn fn, void *arg);

struct store_op {
    int del;            /* 1: delete (absent key is not an error); 0: put */
    const void *key;
    uint32_t klen;
    const void *val;
    uint32_t vlen;
};

/* Applies ops in order, atomically with respect to readers; lsn is the
 * commit LSN, recorded as the touched pages' LSN.  Writer only. */
int store_apply(struct store *s, const struct store_op *ops, size_t n, uint64_t lsn);

/* Checkpoints.  begin (writer only, short): freezes the current tree as the
 * snapshot of everything committed below lsn; wal_segno is recorded in the
 * meta for recovery.  finish (any thread, one checkpoint at a time): writes
 * the snapshot durably.  Between them the writer may go on applying. */
struct store_ckpt;
int store_checkpoint_begin(struct store *s, uint64_t lsn, uint64_t wal_segno, struct store_ckpt **out);
int store_checkpoint_finish(struct store *s, struct store_ckpt *c); /* frees c */
/* Frees c without writing anything (the engine could not make the log
 * durable up to the checkpoint LSN, and is breaking the handle). */
void store_checkpoint_abandon(struct store *s, struct store_ckpt *c);

/* Checks the checksum and structure of every page reachable from the durable
 * root (and both meta pages).  CL_ECORRUPT with store_bad_page() set. */
int store_verify(struct store *s, uint64_t *pages_checked);
uint64_t store_bad_page(struct store *s);

struct store_stats {
    uint64_t pages;             /* npages in use (high-water) */
    uint64_t free_pages;
    uint64_t dirty_pages;
    uint64_t cache_pages;       /* pages the cache may hold */
    uint64_t hits, misses, evictions;
    uint64_t page_writes, page_reads; /* B+tree and overflow pages, this store's */
    uint64_t meta_writes;             /* meta pages written by checkpoints */
    uint64_t nentries;
    uint32_t depth;
};
void store_get_stats(struct store *s, struct store_stats *out);
int store_broken(struct store *s);

/* Frees.  Writes nothing: checkpoint first for a clean close. */
void store_close(struct store *s);

#endif /* CL_STORE_H */
