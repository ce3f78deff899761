/*
 * pager_internal.h -- what storage/pager.c (page file, cache, free space,
 * meta pages, checkpoints) and storage/btree.c (the tree) share.  Not part
 * of the store contract (store.h).
 *
 * Locks, in the order they nest:
 *   ckpt_mu     one checkpoint_finish or verify at a time; ckpt_in_flight
 *   tree_lock   rwlock: store_apply/checkpoint_begin write, get/scan read;
 *               guards root, cur_epoch (also written under mu), cur_lsn
 *   mu          the cache (hash, frame states), free lists, npages,
 *               the durable meta, counters
 */
#ifndef CL_PAGER_INTERNAL_H
#define CL_PAGER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "page_format.h"
#include "store.h"

enum frame_io { FRAME_IO_NONE = 0, FRAME_IO_LOAD, FRAME_IO_WRITE };

/* One cache slot.  Every field but buf is guarded by store.mu.  buf is
 * written only by the thread that loads the frame (io == LOAD), by the
 * writer under mu (pg_overwrite), or by the writer without mu in a frame of
 * the current epoch that it holds pinned after pg_make_writable (no eviction
 * or checkpoint write of it can run then); it is read by pinners and page
 * writers. */
struct frame {
    uint8_t *buf;
    uint64_t pgno;
    uint64_t epoch;     /* of the page it holds */
    int32_t pins;
    int32_t next;       /* hash chain, -1 ends */
    uint8_t valid;      /* holds a page and is in the hash */
    uint8_t dirty;      /* differs from the file */
    uint8_t ref;        /* clock bit */
    uint8_t io;         /* enum frame_io */
};

struct pgvec {
    uint64_t *v;
    size_t n, cap;
};

struct store {
    struct vfs *vfs;
    struct vfs_file *data;      /* page writes and reads (VFS_CLASS_DATA) */
    struct vfs_file *metaf;     /* meta page writes (VFS_CLASS_META); NULL readonly */
    char *dir;
    int readonly;
    int corrupt;                /* the open walk found a bad page: writes refused */

    pthread_rwlock_t tree_lock;
    uint64_t root;
    uint64_t cur_epoch;
    uint64_t cur_lsn;
    _Atomic uint64_t nentries;
    _Atomic uint32_t depth;

    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct frame *frames;
    uint8_t *bufs;
    uint32_t nframes, hand;
    int32_t *buckets;
    uint32_t bucket_mask;
    int nwait;
    uint64_t npages;
    struct pgvec reusable;       /* free now */
    struct pgvec pending_cur;    /* freed in the current epoch */
    struct pgvec pending_frozen; /* freed in the epoch a checkpoint is writing */
    uint64_t ndirty, hits, misses, evictions;
    struct store_meta durable;

    pthread_mutex_t ckpt_mu;
    pthread_cond_t ckpt_cond;
    int ckpt_in_flight;

    _Atomic uint64_t page_reads, page_writes, meta_writes;
    _Atomic int broken;          /* first sticky error, 0 while healthy */
    _Atomic int torn;            /* a store_apply failed part way: the tree holds part of a batch */
    _Atomic uint64_t bad_page;
};

/* pager.c */
int pg_fetch(struct store *s, uint64_t pgno, struct frame **out);   /* pinned, verified */
void pg_unpin(struct store *s, struct frame *f);
int pg_overwrite(struct store *s, uint64_t pgno, const uint8_t *img); /* writer: whole page, dirty */
/* writer: as pg_overwrite, and the frame comes back pinned for more changes */
int pg_overwrite_pinned(struct store *s, uint64_t pgno, const uint8_t *img, struct frame **out);
/* writer: a pinned current-epoch frame may now be changed in place (dirty, LSN stamped) */
void pg_make_writable(struct store *s, struct frame *f);
uint64_t pg_alloc(struct store *s);                                  /* writer: a free page number */
void pg_free(struct store *s, uint64_t pgno, uint64_t epoch);        /* writer */
void pg_cache_drop(struct store *s, uint64_t pgno);                  /* mu held */
int pg_free_unreached(struct store *s, const uint8_t *seen, uint64_t npages); /* open */
void pg_pending_freeze(struct store *s);                             /* mu held */
void pg_pending_release(struct store *s);                            /* mu held */
int pg_read_disk(struct store *s, uint64_t pgno, uint8_t *buf);      /* bypasses the cache */
void pg_set_bad(struct store *s, uint64_t pgno);
void pg_break(struct store *s, int err);
int pg_check_writable(struct store *s); /* 0, or why the store refuses changes */

/* btree.c: walks the tree from root reading pages from disk, checking
 * every page; marks each reached page in seen (one bit per page < npages). */
struct walk_result {
    uint64_t pages, entries;
    uint32_t depth;
};
int btree_walk(struct store *s, uint64_t root, uint64_t npages, uint64_t max_epoch, uint8_t *seen,
               struct walk_result *out);

#endif /* CL_PAGER_INTERNAL_H */
