/*
 * segpool.c -- where the writer's next segment comes from: segments made
 * ready ahead of it (recycled by a checkpoint, or prepared by the prealloc
 * thread), or one it prepares itself when none is ready.
 *
 * The pool is a window of reserved segment numbers [taken, next) above the
 * segment the writer is in.  A preparer (the writer, the prealloc thread or
 * the checkpoint recycling a retired file) reserves the number `next`,
 * prepares the file without the pool lock, then marks it ready; the writer
 * takes numbers in order from `taken`.  Numbers are reserved in increasing
 * order, so a ready segment is always the one its name says, and no file
 * above the writer is ever prepared twice.
 *
 * Invariants (pool.mu):
 *   P1  taken <= next, and next - taken <= WAL_POOL_MAX + 1.
 *   P2  every segno in [taken, next) has a slot: PREPARING (a preparer is
 *       working on it), READY or RECYCLED (file, header and directory entry
 *       durable; RECYCLED when it is a retired segment's file) or FAILED
 *       (its preparer gave up; the writer prepares it afresh).
 *   P3  the writer uses a segment only once it is READY or prepared by the
 *       writer itself; a SWITCH record into it is written only after that
 *       (writer.c, W3), so recovery never enters a segment whose
 *       preparation a crash interrupted.
 *   P4  spare[0..nspare) are distinct retired segment numbers, all below
 *       the checkpoint's segment, whose files still exist under those
 *       names; nspare <= recycle_max.
 *
 * Recycling with the prealloc thread: the thread refills the pool the
 * moment the writer takes a segment, while a checkpoint retires segments
 * in bursts.  If retiring recycled only into the pool's free room, the
 * thread's fresh files would take most of it (with prealloc 2 and
 * recycle, about half the switches used a recycled file).  So with both,
 * a retired segment is kept as a spare (P4) and the thread recycles a
 * spare whenever it has one, creating a fresh file only when it has none.
 * A spare left by a crash or a close is just a segment below the
 * checkpoint: the next checkpoint retires it again.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "wal_internal.h"

static uint8_t *slot_of(struct wal_segpool *p, uint64_t segno) { return &p->slot[segno % WAL_POOL_SLOTS]; }

void wal_pool_init(struct wal *w, uint64_t first_future)
{
    struct wal_segpool *p = &w->pool;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->taken = p->next = first_future;
    p->recycle_max = w->opt.segments == CL_SEGMENTS_RECYCLE ? w->opt.recycle_max : 0;
    p->prealloc = w->opt.prealloc;
}

void wal_pool_destroy(struct wal *w)
{
    pthread_cond_destroy(&w->pool.cv);
    pthread_mutex_destroy(&w->pool.mu);
}

/* pool.mu held: reserves the next number for a preparer. */
static uint64_t reserve(struct wal_segpool *p)
{
    uint64_t s = p->next++;
    *slot_of(p, s) = WAL_SLOT_PREPARING;
    return s;
}

static void publish(struct wal_segpool *p, uint64_t segno, int ok, enum wal_slot ready)
{
    pthread_mutex_lock(&p->mu);
    *slot_of(p, segno) = ok ? ready : WAL_SLOT_FAILED;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int wal_pool_take(struct wal *w, uint64_t segno)
{
    struct wal_segpool *p = &w->pool;
    uint64_t t0 = 0;
    int prepare = 0, reused = 0, rc = 0;

    pthread_mutex_lock(&p->mu);
    assert(segno == p->taken); /* the writer takes segments in order */
    (void)segno;
    if (p->taken == p->next) {
        reserve(p); /* nothing ahead: the writer prepares it now */
        prepare = 1;
    } else {
        if (*slot_of(p, segno) == WAL_SLOT_PREPARING) {
            t0 = cl_now_ns();
            while (*slot_of(p, segno) == WAL_SLOT_PREPARING)
                pthread_cond_wait(&p->cv, &p->mu);
        }
        prepare = *slot_of(p, segno) == WAL_SLOT_FAILED;
        reused = *slot_of(p, segno) == WAL_SLOT_RECYCLED;
    }
    p->taken++;
    pthread_cond_broadcast(&p->cv); /* the prealloc thread refills */
    pthread_mutex_unlock(&p->mu);

    if (prepare) {
        if (!t0)
            t0 = cl_now_ns();
        rc = wal_segment_create(w, segno);
        if (rc == 0)
            wal_add64(&w->st.segments_created, 1);
    }
    if (reused)
        wal_add64(&w->st.segments_reused, 1);
    if (t0) {
        wal_add64(&w->st.segment_waits, 1);
        wal_add64(&w->st.segment_wait_ns, cl_now_ns() - t0);
    }
    return rc;
}

/* pool.mu held: 1 when old_segno is a spare already. */
static int is_spare(const struct wal_segpool *p, uint64_t segno)
{
    for (uint32_t i = 0; i < p->nspare; i++)
        if (p->spare[i] == segno)
            return 1;
    return 0;
}

/* Recycles retired segment old_segno into the next number of the pool,
 * or returns 1 when it cannot be recycled (too short, or no room). */
static int recycle_into_pool(struct wal *w, uint64_t old_segno, unsigned limit)
{
    struct wal_segpool *p = &w->pool;
    struct vfs_file *f = NULL;
    uint64_t segno = 0;
    int rc = wal_segment_recyclable(w, old_segno, &f);
    if (rc)
        return rc;
    pthread_mutex_lock(&p->mu);
    int room = p->next - p->taken < limit;
    if (room)
        segno = reserve(p);
    pthread_mutex_unlock(&p->mu);
    if (!room) {
        vfs_close(f);
        return 1;
    }
    rc = wal_segment_recycle(w, f, old_segno, segno);
    publish(p, segno, rc == 0, WAL_SLOT_RECYCLED);
    if (rc == 0)
        wal_add64(&w->st.segments_recycled, 1);
    return rc;
}

static int remove_segment(struct wal *w, uint64_t segno, int *removed)
{
    char *path;
    int rc = wal_segment_path(w, segno, &path);
    if (rc)
        return rc;
    rc = vfs_unlink(w->vfs, path);
    free(path);
    if (rc == -ENOENT)
        return 0;
    if (rc == 0) {
        *removed = 1;
        wal_add64(&w->st.segments_removed, 1);
    }
    return rc;
}

int wal_pool_retire(struct wal *w, uint64_t old_segno, int *removed)
{
    struct wal_segpool *p = &w->pool;
    struct vfs_file *f = NULL;
    uint64_t segno;
    int rc, room;

    *removed = 0;
    if (p->recycle_max && p->prealloc) {
        /* Kept for the prealloc thread (P4), or removed when it has enough. */
        pthread_mutex_lock(&p->mu);
        int keep = is_spare(p, old_segno) ? -1 : p->nspare < p->recycle_max;
        if (keep == 1) {
            p->spare[p->nspare++] = old_segno;
            pthread_cond_broadcast(&p->cv);
        }
        pthread_mutex_unlock(&p->mu);
        return keep ? 0 : remove_segment(w, old_segno, removed);
    }
    pthread_mutex_lock(&p->mu);
    room = p->next - p->taken < p->recycle_max;
    pthread_mutex_unlock(&p->mu);
    rc = room ? wal_segment_recyclable(w, old_segno, &f) : 1;
    if (rc < 0)
        return rc;
    if (rc == 0) {
        pthread_mutex_lock(&p->mu);
        room = p->next - p->taken < p->recycle_max; /* the prealloc thread may have filled it */
        segno = room ? reserve(p) : 0;
        pthread_mutex_unlock(&p->mu);
        if (!room)
            vfs_close(f);
    }
    if (rc == 0 && room) {
        rc = wal_segment_recycle(w, f, old_segno, segno);
        publish(p, segno, rc == 0, WAL_SLOT_RECYCLED);
        if (rc == 0)
            wal_add64(&w->st.segments_recycled, 1);
        return rc;
    }
    return remove_segment(w, old_segno, removed);
}

/* The prealloc thread: keeps `prealloc` segments reserved ahead of the
 * writer.  A failure stops it (recorded in the statistics); the segment
 * it was preparing is marked FAILED, and the writer prepares it itself. */
static void *prealloc_main(void *arg)
{
    struct wal *w = arg;
    struct wal_segpool *p = &w->pool;

    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        if (p->next - p->taken >= p->prealloc || wal_broken(w)) {
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        if (p->nspare) { /* a retired file first */
            uint64_t old = p->spare[--p->nspare];
            pthread_mutex_unlock(&p->mu);
            int rc = recycle_into_pool(w, old, p->prealloc);
            if (rc == 1) { /* not recyclable (short): gone instead */
                int gone = 0;
                rc = remove_segment(w, old, &gone);
            }
            if (rc == -ENOENT)
                rc = 0; /* retired twice: a checkpoint listed it while it was being renamed */
            pthread_mutex_lock(&p->mu);
            if (rc) {
                __atomic_store_n(&w->st.prealloc_error, rc, __ATOMIC_RELEASE);
                break;
            }
            continue;
        }
        uint64_t segno = reserve(p);
        pthread_mutex_unlock(&p->mu);
        int rc = wal_segment_create(w, segno);
        if (rc == 0)
            wal_add64(&w->st.segments_created, 1);
        publish(p, segno, rc == 0, WAL_SLOT_READY);
        pthread_mutex_lock(&p->mu);
        if (rc) {
            __atomic_store_n(&w->st.prealloc_error, rc, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int wal_pool_start(struct wal *w)
{
    struct wal_segpool *p = &w->pool;
    if (!p->prealloc)
        return 0;
    int rc = pthread_create(&p->thread, NULL, prealloc_main, w);
    if (rc)
        return -rc;
    p->thread_started = 1;
    return 0;
}

void wal_pool_stop(struct wal *w)
{
    struct wal_segpool *p = &w->pool;
    if (!p->thread_started)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    p->thread_started = 0;
}
