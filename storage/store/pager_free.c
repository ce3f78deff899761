/*
 * pager_free.c -- free space: which page numbers may be written again.
 * Free space is not stored in the file; store_open rebuilds it from the
 * walk of the durable tree (pg_free_unreached).  Three lists, under mu:
 *   reusable        free now; pg_alloc takes from here, else grows the file
 *   pending_cur     freed in the current epoch but written in an older one,
 *                   so a snapshot may still hold them
 *   pending_frozen  those freed before the checkpoint in flight began;
 *                   they wait for its meta page to be durable
 *
 * Keeps PG2 of pager_internal.h (when a freed page is reusable),
 * on which PG1 rests: a page handed out is in no durable snapshot.
 * The epoch a page was written in decides its list (pg_free).
 *
 * Who calls: btree.c's writer (pg_alloc, pg_free); pager_meta.c's
 * checkpoint begin and finish (pg_pending_freeze, pg_pending_release);
 * pager_open.c at open (pg_free_unreached).
 */
#include "pager_internal.h"

#include <stdlib.h>

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

/* Writer: a page number to write a new page at: a reusable one, else the
 * next past the end of the file. */
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

/* Writer: pgno, written in epoch, has left the tree. */
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
 * checkpoint's meta to be durable (PG2). */
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
