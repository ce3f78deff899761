/*
 * vfs_latency.c -- an emulated slow device: a file layer that wraps another
 * and adds a fixed delay to every sync (fsync, fdatasync, directory sync,
 * and every write on an O_DSYNC or RWF_DSYNC file), so that slow-disk behaviour
 * (a 7200 rpm disk at ~100 syncs/s) can be studied on a fast one.
 * The delay is added after the real sync, so durability is unchanged.
 * Output that uses it says "emulated".
 *
 * Counters are the wrapped layer's (the real I/O); the delay is added to
 * this layer's sync_ns only.
 *
 * io_uring chains: a chain that contains a sync becomes visible to
 * ring_reap `latency` after the real chain completed, independently of the
 * other chains in flight, so that several chains overlap their emulated
 * latencies as they would on a slow device with a deep queue (this is what
 * flush pipelining is for).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "vfs.h"
#include "vfs_latency.h"

struct lat_vfs {
    struct vfs v;
    struct vfs *base;
    uint32_t us;
};

struct lat_file {
    struct vfs_file f;
    struct vfs_file *base;
};

static struct lat_vfs *LV(struct vfs *v) { return (struct lat_vfs *)v; }
static struct vfs_file *BF(struct vfs_file *f) { return ((struct lat_file *)f)->base; }

static void delay(struct vfs *v, enum vfs_class cls)
{
    uint32_t us = LV(v)->us;
    struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
    VFS_COUNT(v, cls, sync_ns, (uint64_t)us * 1000u);
}

static int lat_open(struct vfs *v, const char *path, unsigned flags, enum vfs_class cls, struct vfs_file **out)
{
    struct lat_file *lf = calloc(1, sizeof *lf);
    int rc;
    if (!lf)
        return -ENOMEM;
    rc = vfs_open(LV(v)->base, path, flags, cls, &lf->base);
    if (rc) {
        free(lf);
        return rc;
    }
    lf->f.vfs = v;
    lf->f.cls = cls;
    lf->f.flags = flags;
    *out = &lf->f;
    return 0;
}

static int lat_close(struct vfs_file *f)
{
    int rc = vfs_close(BF(f));
    free(f);
    return rc;
}

static int lat_pread(struct vfs_file *f, void *buf, size_t len, uint64_t off, size_t *n)
{
    return vfs_pread(BF(f), buf, len, off, n);
}

static int lat_pwrite(struct vfs_file *f, const void *buf, size_t len, uint64_t off)
{
    int rc = vfs_pwrite(BF(f), buf, len, off);
    if (rc == 0 && vfs_write_is_sync(f))
        delay(f->vfs, f->cls);
    return rc;
}

static int lat_fsync(struct vfs_file *f)
{
    int rc = vfs_fsync(BF(f));
    if (rc == 0)
        delay(f->vfs, f->cls);
    return rc;
}

static int lat_fdatasync(struct vfs_file *f)
{
    int rc = vfs_fdatasync(BF(f));
    if (rc == 0)
        delay(f->vfs, f->cls);
    return rc;
}

static int lat_fallocate(struct vfs_file *f, uint64_t off, uint64_t len) { return vfs_fallocate(BF(f), off, len); }
static int lat_truncate(struct vfs_file *f, uint64_t size) { return vfs_truncate(BF(f), size); }
static int lat_size(struct vfs_file *f, uint64_t *size) { return vfs_size(BF(f), size); }
static int lat_drop_cache(struct vfs_file *f) { return vfs_drop_cache(BF(f)); }
static int lat_links(struct vfs_file *f, uint64_t *n) { return vfs_links(BF(f), n); }
static int lat_rename(struct vfs *v, const char *a, const char *b) { return vfs_rename(LV(v)->base, a, b); }
static int lat_unlink(struct vfs *v, const char *p) { return vfs_unlink(LV(v)->base, p); }
static int lat_mkdir(struct vfs *v, const char *p) { return vfs_mkdir(LV(v)->base, p); }
static int lat_rmdir(struct vfs *v, const char *p) { return vfs_rmdir(LV(v)->base, p); }
static int lat_list(struct vfs *v, const char *d, vfs_list_fn fn, void *arg) { return vfs_list(LV(v)->base, d, fn, arg); }
static int lat_exists(struct vfs *v, const char *p) { return vfs_exists(LV(v)->base, p); }

static int lat_sync_dir(struct vfs *v, const char *d)
{
    int rc = vfs_sync_dir(LV(v)->base, d);
    if (rc == 0)
        delay(v, VFS_CLASS_OTHER);
    return rc;
}

static void lat_destroy(struct vfs *v) { free(v); }

/* ---- rings ------------------------------------------------------------------ */

struct lat_chain {
    uint64_t tag;                 /* the caller's */
    struct vfs_io *user_ios;      /* the caller's array */
    struct vfs_io bios[VFS_RING_MAX_LINKS];
    int n, has_sync;
    uint64_t ready_ns;
    struct lat_chain *next;
};

struct lat_ring {
    struct vfs_ring r;
    struct vfs_ring *base;
    struct lat_chain *head, *tail; /* completed, in completion order (constant delay keeps it sorted) */
    unsigned inflight;             /* submitted to the base ring, not yet collected */
    pthread_mutex_t mu;            /* guards woken; cv ends a delay wait early */
    pthread_cond_t cv;
    int woken;
};

static int lat_ring_open(struct vfs *v, unsigned depth, struct vfs_ring **out)
{
    struct lat_ring *lr = calloc(1, sizeof *lr);
    int rc;
    if (!lr)
        return -ENOMEM;
    rc = vfs_ring_open(LV(v)->base, depth, &lr->base);
    if (rc) {
        free(lr);
        return rc;
    }
    lr->r.vfs = v;
    lr->r.depth = depth;
    pthread_mutex_init(&lr->mu, NULL);
    cl_cond_init(&lr->cv);
    *out = &lr->r;
    return 0;
}

static int lat_ring_submit(struct vfs_ring *r, struct vfs_io *ios, int n, uint64_t tag)
{
    struct lat_ring *lr = (struct lat_ring *)r;
    struct lat_chain *c;
    int rc;
    if (n < 1 || n > VFS_RING_MAX_LINKS)
        return -EINVAL;
    c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->tag = tag;
    c->user_ios = ios;
    c->n = n;
    for (int i = 0; i < n; i++) {
        c->bios[i] = ios[i];
        c->bios[i].f = BF(ios[i].f);
        c->has_sync |= ios[i].op != VFS_IO_WRITE || vfs_write_is_sync(ios[i].f);
    }
    rc = vfs_ring_submit(lr->base, c->bios, n, (uint64_t)(uintptr_t)c);
    if (rc)
        free(c);
    else
        lr->inflight++;
    return rc;
}

/* Moves one chain the base ring finished into the delay queue. */
static int lat_ring_collect(struct lat_ring *lr, int wait)
{
    uint64_t tag;
    struct vfs_io *bios;
    int rc = vfs_ring_reap(lr->base, wait, &tag, &bios);
    if (rc != 1)
        return rc;
    struct lat_chain *c = (struct lat_chain *)(uintptr_t)tag;
    lr->inflight--;
    for (int i = 0; i < c->n; i++)
        c->user_ios[i].result = c->bios[i].result;
    c->ready_ns = cl_now_ns() + (c->has_sync ? (uint64_t)LV(lr->r.vfs)->us * 1000u : 0);
    if (c->has_sync)
        VFS_COUNT(lr->r.vfs, c->user_ios[0].f->cls, sync_ns, (uint64_t)LV(lr->r.vfs)->us * 1000u);
    c->next = NULL;
    if (lr->tail)
        lr->tail->next = c;
    else
        lr->head = c;
    lr->tail = c;
    return 1;
}

static int lat_ring_reap(struct vfs_ring *r, int wait, uint64_t *tag, struct vfs_io **ios)
{
    struct lat_ring *lr = (struct lat_ring *)r;
    for (;;) {
        int rc;
        while ((rc = lat_ring_collect(lr, 0)) == 1)
            ;
        if (rc < 0)
            return rc;
        uint64_t now = cl_now_ns();
        if (lr->head && lr->head->ready_ns <= now) {
            struct lat_chain *c = lr->head;
            lr->head = c->next;
            if (!lr->head)
                lr->tail = NULL;
            *tag = c->tag;
            *ios = c->user_ios;
            free(c);
            return 1;
        }
        if (!wait)
            return 0;
        if (!lr->head) {
            rc = lat_ring_collect(lr, 1); /* sleeps in the base ring; ring_wake ends it */
            if (rc <= 0)
                return rc;
            continue;
        }
        /* Wait for the head's emulated latency; ring_wake ends the wait, so
         * the caller can submit more chains meanwhile (pipelining). */
        struct timespec ts = cl_timespec(lr->head->ready_ns);
        int woken;
        pthread_mutex_lock(&lr->mu);
        while (!lr->woken && pthread_cond_timedwait(&lr->cv, &lr->mu, &ts) != ETIMEDOUT)
            ;
        woken = lr->woken;
        lr->woken = 0;
        pthread_mutex_unlock(&lr->mu);
        if (woken)
            return 0;
    }
}

static int lat_ring_wake(struct vfs_ring *r)
{
    struct lat_ring *lr = (struct lat_ring *)r;
    pthread_mutex_lock(&lr->mu);
    lr->woken = 1;
    pthread_cond_signal(&lr->cv);
    pthread_mutex_unlock(&lr->mu);
    return vfs_ring_wake(lr->base);
}

static void lat_ring_close(struct vfs_ring *r)
{
    struct lat_ring *lr = (struct lat_ring *)r;
    while (lr->inflight && lat_ring_collect(lr, 1) >= 0) /* the kernel may still use the buffers */
        ;
    vfs_ring_close(lr->base);
    while (lr->head) {
        struct lat_chain *c = lr->head;
        lr->head = c->next;
        free(c);
    }
    pthread_cond_destroy(&lr->cv);
    pthread_mutex_destroy(&lr->mu);
    free(lr);
}

static const struct vfs_ops lat_ops = {
    .open = lat_open,
    .close = lat_close,
    .pread = lat_pread,
    .pwrite = lat_pwrite,
    .fsync = lat_fsync,
    .fdatasync = lat_fdatasync,
    .fallocate = lat_fallocate,
    .truncate = lat_truncate,
    .size = lat_size,
    .rename = lat_rename,
    .unlink = lat_unlink,
    .mkdir = lat_mkdir,
    .rmdir = lat_rmdir,
    .sync_dir = lat_sync_dir,
    .list = lat_list,
    .exists = lat_exists,
    .destroy = lat_destroy,
    .ring_open = lat_ring_open,
    .ring_submit = lat_ring_submit,
    .ring_reap = lat_ring_reap,
    .ring_wake = lat_ring_wake,
    .ring_close = lat_ring_close,
    .drop_cache = lat_drop_cache,
    .links = lat_links,
};

struct vfs *vfs_latency_new(struct vfs *base, uint32_t sync_latency_us)
{
    struct lat_vfs *lv = calloc(1, sizeof *lv);
    if (!lv)
        return NULL;
    lv->v.ops = &lat_ops;
    lv->v.name = "latency";
    lv->base = base;
    lv->us = sync_latency_us;
    return &lv->v;
}
