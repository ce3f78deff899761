/*
 * pager_internal.h -- what the page store's files share.  Not part of the
 * store contract (store.h).
 *   pager.c         page I/O and the page cache; sticky failure state
 *   pager_free.c    free space: reusable and pending page numbers
 *   pager_meta.c    the two meta pages; checkpoint begin/finish
 *   pager_open.c    store_open/close, store_verify, stats
 *   btree.c         the copy-on-write B+tree on top of them
 *
 * Invariants PG1-PG5 (each file's design comment names those it keeps;
 * CL_INVARIANT checks PG1 and PG3 at every page write-out):
 *   PG1 A page of the durable snapshot (reachable from the durable meta) is
 *      never written.  Only pages allocated since the last checkpoint --
 *      pages in no durable snapshot -- are written, by eviction or by
 *      store_checkpoint_finish.
 *   PG2 A page freed while its epoch is the current one (it belongs to no
 *      snapshot) is reusable at once.  A page of an older epoch may belong
 *      to the durable or the frozen snapshot: it waits in pending_cur; at
 *      checkpoint_begin pending_cur becomes pending_frozen, which turns
 *      reusable only once that checkpoint's meta is durable.
 *   PG3 The writer changes page contents only of current-epoch pages
 *      (pg_overwrite, or in place in a frame it holds pinned after
 *      pg_make_writable); frozen pages are copied by btree.c.  So
 *      checkpoint_finish may write frozen frames while store_apply runs: it
 *      pins the frame and sets io = WRITE under mu, which keeps it from
 *      being evicted or reused.  An eviction write never overlaps an
 *      in-place change: eviction skips pinned frames, and
 *      pg_make_writable waits for a write begun before the pin.
 *   PG4 Every page read from the file is checked (crc, own pgno, type)
 *      before anyone sees it; a bad one is CL_ECORRUPT with bad_page set.
 *   PG5 Epoch bookkeeping: after open cur_epoch = generation + 1; begin
 *      freezes cur_epoch, which becomes the new meta's generation.  Hence
 *      every page of the snapshot of generation g has epoch <= g.
 *
 * Who calls: store.h's users.  store_apply and checkpoint_begin come from
 * the engine's single writer; get/scan from any thread; checkpoint_finish
 * from a checkpointing thread beside them.
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

/* pager.c: sticky failure state */
void pg_set_bad(struct store *s, uint64_t pgno);
void pg_break(struct store *s, int err);
int pg_check_writable(struct store *s); /* 0, or why the store refuses changes */

/* pager.c: page I/O */
void pg_seal(uint8_t *p);                                            /* sets the page crc */
int pg_read_disk(struct store *s, uint64_t pgno, uint8_t *buf);      /* bypasses the cache */

/* pager.c: the cache */
int pg_cache_init(struct store *s, uint64_t cache_size);             /* open */
int pg_fetch(struct store *s, uint64_t pgno, struct frame **out);   /* pinned, verified */
void pg_unpin(struct store *s, struct frame *f);
int pg_overwrite(struct store *s, uint64_t pgno, const uint8_t *img); /* writer: whole page, dirty */
/* writer: as pg_overwrite, and the frame comes back pinned for more changes */
int pg_overwrite_pinned(struct store *s, uint64_t pgno, const uint8_t *img, struct frame **out);
/* writer: a pinned current-epoch frame may now be changed in place (dirty, LSN stamped) */
void pg_make_writable(struct store *s, struct frame *f);
void pg_cache_drop(struct store *s, uint64_t pgno);                  /* mu held */
int pg_write_frozen(struct store *s, uint64_t frozen);               /* checkpoint_finish */

/* pager_free.c */
uint64_t pg_alloc(struct store *s);                                  /* writer: a free page number */
void pg_free(struct store *s, uint64_t pgno, uint64_t epoch);        /* writer */
int pg_free_unreached(struct store *s, const uint8_t *seen, uint64_t npages); /* open */
void pg_pending_freeze(struct store *s);                             /* mu held */
void pg_pending_release(struct store *s);                            /* mu held */

/* pager_meta.c */
int pg_create_file(const struct store_config *cfg, const char *path); /* both metas, synced */
int pg_meta_read(struct store *s, uint64_t slot, struct store_meta *m);
/* Decodes the PG_SIZE bytes of meta page slot p: 0, CL_ECORRUPT (torn or
 * damaged) or CL_EFORMAT (not a commitlab page file, or another version). */
int pg_meta_decode(const uint8_t *p, uint64_t slot, struct store_meta *m);
int pg_meta_choose(struct store *s, struct store_meta *out);         /* the current meta */

/* btree.c: walks the tree from root reading pages from disk, checking
 * every page; marks each reached page in seen (one bit per page < npages). */
struct walk_result {
    uint64_t pages, entries;
    uint32_t depth;
};
int btree_walk(struct store *s, uint64_t root, uint64_t npages, uint64_t max_epoch, uint8_t *seen,
               struct walk_result *out);

#endif /* CL_PAGER_INTERNAL_H */
