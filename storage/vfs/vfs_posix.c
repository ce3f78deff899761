/*
 * vfs_posix.c -- the POSIX backend of the file layer, and the helpers that
 * every backend shares (counters, sequential submit, durable replace).
 *
 * Owns: one static struct vfs named "posix", shared by the whole process
 * (destroy is a no-op), and one struct posix_file per open handle.
 *
 * Invariants:
 *   - pwrite writes every byte or returns -errno: EINTR and short writes
 *     are looped over, so a caller never sees a partial count;
 *   - pread stops only at len bytes or at end of file and reports the count;
 *   - every descriptor is opened O_CLOEXEC; VFS_O_DSYNC maps to O_DSYNC and
 *     VFS_O_DIRECT to O_DIRECT (alignment is the caller's business);
 *     VFS_O_WRITE_DSYNC leaves the descriptor ordinary and makes every
 *     write pwritev2(..., RWF_DSYNC), and every ring write an
 *     IORING_OP_WRITE with rw_flags RWF_DSYNC;
 *   - counters are bumped with relaxed atomic adds after the system call, so
 *     any thread may read them while others do I/O.  A pwrite on a
 *     VFS_O_DSYNC or VFS_O_WRITE_DSYNC file counts as one write and one
 *     dsync_write; sync_ns is
 *     the CLOCK_MONOTONIC time spent inside fsync/fdatasync (sync_dir counts
 *     as an fsync of class VFS_CLASS_OTHER).
 *   - rings (vfs.h, "asynchronous chains") are io_uring instances: a chain
 *     becomes n SQEs linked with IOSQE_IO_LINK, each tagged with its slot
 *     and index; a chain is reported once all its CQEs have arrived.  The
 *     SQ is guarded by a mutex only because ring_wake (a NOP SQE) may come
 *     from any thread; the CQ and the slots belong to the one reaper.
 *
 * Callers: the WAL, the page store and the engine through vfs.h; the fault
 * layer (vfs_fault.c) wraps this backend and reuses the shared helpers.
 */
#include "clock.h"
#include "commitlab.h"
#include "vfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

struct posix_file {
    struct vfs_file base;
    int fd;
};

/* ---- shared helpers ---------------------------------------------------- */

void vfs_count(struct vfs *v, enum vfs_class cls, size_t field_offset, uint64_t n)
{
    if ((unsigned)cls >= VFS_NCLASS)
        cls = VFS_CLASS_OTHER;
    uint64_t *p = (uint64_t *)((char *)&v->counters[cls] + field_offset);
    __atomic_fetch_add(p, n, __ATOMIC_RELAXED);
}

void vfs_counters_get(struct vfs *v, enum vfs_class cls, struct vfs_counters *out)
{
    unsigned lo = (unsigned)cls, hi = (unsigned)cls + 1;
    memset(out, 0, sizeof *out);
    if ((unsigned)cls >= VFS_NCLASS) {
        lo = 0;
        hi = VFS_NCLASS;
    }
    for (unsigned c = lo; c < hi; c++) {
        const struct vfs_counters *k = &v->counters[c];
        out->writes += __atomic_load_n(&k->writes, __ATOMIC_RELAXED);
        out->write_bytes += __atomic_load_n(&k->write_bytes, __ATOMIC_RELAXED);
        out->reads += __atomic_load_n(&k->reads, __ATOMIC_RELAXED);
        out->read_bytes += __atomic_load_n(&k->read_bytes, __ATOMIC_RELAXED);
        out->fsyncs += __atomic_load_n(&k->fsyncs, __ATOMIC_RELAXED);
        out->fdatasyncs += __atomic_load_n(&k->fdatasyncs, __ATOMIC_RELAXED);
        out->dsync_writes += __atomic_load_n(&k->dsync_writes, __ATOMIC_RELAXED);
        out->sync_ns += __atomic_load_n(&k->sync_ns, __ATOMIC_RELAXED);
    }
}

/* ---- the POSIX table --------------------------------------------------- */

static int px_open(struct vfs *v, const char *path, unsigned flags, enum vfs_class cls,
                      struct vfs_file **out)
{
    int oflags = O_CLOEXEC;
    struct posix_file *pf;
    int fd;

    *out = NULL;
    oflags |= (flags & VFS_O_RDONLY) ? O_RDONLY : O_RDWR;
    if (flags & VFS_O_CREATE)
        oflags |= O_CREAT;
    if ((flags & VFS_O_CREATE) && (flags & VFS_O_EXCL))
        oflags |= O_EXCL;
    if (flags & VFS_O_TRUNC)
        oflags |= O_TRUNC;
    if (flags & VFS_O_DSYNC)
        oflags |= O_DSYNC;
    if (flags & VFS_O_DIRECT)
        oflags |= O_DIRECT;
    /* Only regular files, never through a link, never waited on: a
     * symbolic link fails O_NOFOLLOW; a FIFO opened O_NONBLOCK returns at
     * once and fstat names it, as it names a device, socket or directory. */
    oflags |= O_NOFOLLOW | O_NONBLOCK;
    pf = calloc(1, sizeof *pf);
    if (!pf)
        return -ENOMEM;
    do
        fd = open(path, oflags, 0644);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        struct stat lst;
        free(pf);
        if ((e == ELOOP && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) || e == EISDIR || e == ENXIO)
            return CL_EFILETYPE; /* a link; a directory opened to write; a socket or an unopened FIFO */
        return -e;
    }
    struct stat st;
    int frc = fstat(fd, &st) != 0 ? -errno : S_ISREG(st.st_mode) ? 0 : CL_EFILETYPE;
    if (frc) {
        close(fd);
        free(pf);
        return frc;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); /* no meaning for a regular file; off, as before */
    pf->base.vfs = v;
    pf->base.cls = cls;
    pf->base.flags = flags;
    pf->fd = fd;
    *out = &pf->base;
    return 0;
}

static int px_close(struct vfs_file *f)
{
    struct posix_file *pf = (struct posix_file *)f;
    int rc = close(pf->fd) ? -errno : 0;
    if (rc == -EINTR) /* Linux closes the fd even then */
        rc = 0;
    free(pf);
    return rc;
}

static int px_pread(struct vfs_file *f, void *buf, size_t len, uint64_t off, size_t *nread)
{
    struct posix_file *pf = (struct posix_file *)f;
    size_t done = 0;
    int rc = 0;

    while (done < len) {
        ssize_t n = pread(pf->fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    if (nread)
        *nread = done;
    VFS_COUNT(f->vfs, f->cls, reads, 1);
    VFS_COUNT(f->vfs, f->cls, read_bytes, done);
    return rc;
}

static int px_pwrite(struct vfs_file *f, const void *buf, size_t len, uint64_t off)
{
    struct posix_file *pf = (struct posix_file *)f;
    size_t done = 0;

    while (done < len) {
        ssize_t n;
        if (f->flags & VFS_O_WRITE_DSYNC) {
            /* a short write made its own bytes durable; the rest goes again */
            struct iovec iov = {(char *)buf + done, len - done};
            n = pwritev2(pf->fd, &iov, 1, (off_t)(off + done), RWF_DSYNC);
        } else {
            n = pwrite(pf->fd, (const char *)buf + done, len - done, (off_t)(off + done));
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO; /* no progress and no error: do not spin */
        done += (size_t)n;
    }
    VFS_COUNT(f->vfs, f->cls, writes, 1);
    VFS_COUNT(f->vfs, f->cls, write_bytes, len);
    if (vfs_write_is_sync(f))
        VFS_COUNT(f->vfs, f->cls, dsync_writes, 1);
    return 0;
}

static int px_fsync(struct vfs_file *f)
{
    struct posix_file *pf = (struct posix_file *)f;
    uint64_t t0 = cl_now_ns();
    int rc = fsync(pf->fd) ? -errno : 0;
    VFS_COUNT(f->vfs, f->cls, sync_ns, cl_now_ns() - t0);
    VFS_COUNT(f->vfs, f->cls, fsyncs, 1);
    return rc;
}

static int px_fdatasync(struct vfs_file *f)
{
    struct posix_file *pf = (struct posix_file *)f;
    uint64_t t0 = cl_now_ns();
    int rc = fdatasync(pf->fd) ? -errno : 0;
    VFS_COUNT(f->vfs, f->cls, sync_ns, cl_now_ns() - t0);
    VFS_COUNT(f->vfs, f->cls, fdatasyncs, 1);
    return rc;
}

static int px_fallocate(struct vfs_file *f, uint64_t off, uint64_t len)
{
    struct posix_file *pf = (struct posix_file *)f;
    int rc;

    if (len == 0)
        return 0;
    do
        rc = fallocate(pf->fd, 0, (off_t)off, (off_t)len) ? errno : 0;
    while (rc == EINTR);
    if (rc == EOPNOTSUPP || rc == ENOSYS) /* e.g. tmpfs of old kernels: emulate */
        rc = posix_fallocate(pf->fd, (off_t)off, (off_t)len);
    return -rc;
}

/* Clean pages only: the caller syncs first. */
static int px_drop_cache(struct vfs_file *f)
{
    struct posix_file *pf = (struct posix_file *)f;
    return -posix_fadvise(pf->fd, 0, 0, POSIX_FADV_DONTNEED);
}

static int px_links(struct vfs_file *f, uint64_t *n)
{
    struct posix_file *pf = (struct posix_file *)f;
    struct stat st;
    if (fstat(pf->fd, &st) != 0)
        return -errno;
    *n = (uint64_t)st.st_nlink;
    return 0;
}

static int px_truncate(struct vfs_file *f, uint64_t size)
{
    struct posix_file *pf = (struct posix_file *)f;
    int rc;
    do
        rc = ftruncate(pf->fd, (off_t)size) ? errno : 0;
    while (rc == EINTR);
    return -rc;
}

static int px_size(struct vfs_file *f, uint64_t *size)
{
    struct posix_file *pf = (struct posix_file *)f;
    struct stat st;
    if (fstat(pf->fd, &st))
        return -errno;
    *size = (uint64_t)st.st_size;
    return 0;
}

static int px_rename(struct vfs *v, const char *from, const char *to)
{
    (void)v;
    return rename(from, to) ? -errno : 0;
}

static int px_unlink(struct vfs *v, const char *path)
{
    (void)v;
    return unlink(path) ? -errno : 0;
}

static int px_mkdir(struct vfs *v, const char *path)
{
    (void)v;
    return mkdir(path, 0755) ? -errno : 0;
}

static int px_rmdir(struct vfs *v, const char *path)
{
    (void)v;
    return rmdir(path) ? -errno : 0;
}

static int px_sync_dir(struct vfs *v, const char *dir)
{
    int fd, rc;
    uint64_t t0;

    do
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -errno;
    t0 = cl_now_ns();
    rc = fsync(fd) ? -errno : 0;
    VFS_COUNT(v, VFS_CLASS_OTHER, sync_ns, cl_now_ns() - t0);
    VFS_COUNT(v, VFS_CLASS_OTHER, fsyncs, 1);
    close(fd);
    return rc;
}

/* Calls fn for every name but "." and ".."; a nonzero return from fn stops
 * the listing and is returned. */
static int px_list(struct vfs *v, const char *dir, vfs_list_fn fn, void *arg)
{
    DIR *d;
    struct dirent *de;
    int rc = 0;

    (void)v;
    d = opendir(dir);
    if (!d)
        return -errno;
    for (;;) {
        errno = 0;
        de = readdir(d);
        if (!de) {
            rc = errno ? -errno : 0;
            break;
        }
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        rc = fn(arg, de->d_name);
        if (rc)
            break;
    }
    closedir(d);
    return rc;
}

static int px_exists(struct vfs *v, const char *path)
{
    struct stat st;
    (void)v;
    if (stat(path, &st) == 0)
        return 1;
    if (errno == ENOENT || errno == ENOTDIR)
        return 0;
    return -errno;
}

static void px_destroy(struct vfs *v)
{
    (void)v; /* the shared instance lives as long as the process */
}

/* ---- io_uring chains ---------------------------------------------------- */

#define RING_WAKE_DATA UINT64_MAX

struct px_chain {
    int used;              /* submitted and not yet reaped */
    int left;              /* CQEs still to come */
    int n;
    uint64_t tag, t0;
    struct vfs_io *ios;
};

struct px_ring {
    struct vfs_ring base;
    struct io_uring ring;
    pthread_mutex_t sq_mu; /* the submission queue (submit and wake) */
    struct px_chain *chains; /* depth slots */
};

static int px_ring_open(struct vfs *v, unsigned depth, struct vfs_ring **out)
{
    struct px_ring *pr;
    struct io_uring_probe *probe;
    unsigned entries = 8;
    int rc;

    *out = NULL;
    if (depth == 0 || depth > 4096)
        return -EINVAL;
    while (entries < depth * 2 + 2)
        entries *= 2;
    pr = calloc(1, sizeof *pr);
    if (!pr)
        return -ENOMEM;
    pr->chains = calloc(depth, sizeof *pr->chains);
    if (!pr->chains) {
        free(pr);
        return -ENOMEM;
    }
    rc = io_uring_queue_init(entries, &pr->ring, 0);
    if (rc < 0) {
        free(pr->chains);
        free(pr);
        return rc; /* -ENOSYS: no io_uring; -EPERM: disabled by policy */
    }
    probe = io_uring_get_probe_ring(&pr->ring);
    if (!probe || !io_uring_opcode_supported(probe, IORING_OP_WRITE) ||
        !io_uring_opcode_supported(probe, IORING_OP_FSYNC) ||
        !io_uring_opcode_supported(probe, IORING_OP_NOP)) {
        if (probe)
            io_uring_free_probe(probe);
        io_uring_queue_exit(&pr->ring);
        free(pr->chains);
        free(pr);
        return -ENOSYS;
    }
    io_uring_free_probe(probe);
    pthread_mutex_init(&pr->sq_mu, NULL);
    pr->base.vfs = v;
    pr->base.depth = depth;
    *out = &pr->base;
    return 0;
}

/* Hands the queued SQEs to the kernel (sq_mu held). */
static int ring_enter(struct px_ring *pr)
{
    int rc;
    do
        rc = io_uring_submit(&pr->ring);
    while (rc == -EINTR);
    return rc;
}

static int px_ring_submit(struct vfs_ring *r, struct vfs_io *ios, int n, uint64_t tag)
{
    struct px_ring *pr = (struct px_ring *)r;
    struct px_chain *c = NULL;
    unsigned slot;
    int rc;

    if (n < 1 || n > VFS_RING_MAX_LINKS)
        return -EINVAL;
    for (slot = 0; slot < r->depth; slot++) {
        if (!pr->chains[slot].used) {
            c = &pr->chains[slot];
            break;
        }
    }
    if (!c)
        return -EBUSY;
    pthread_mutex_lock(&pr->sq_mu);
    if (io_uring_sq_space_left(&pr->ring) < (unsigned)n && io_uring_sq_ready(&pr->ring))
        ring_enter(pr); /* SQEs an earlier enter left behind take the room: hand them over */
    if (io_uring_sq_space_left(&pr->ring) < (unsigned)n) {
        pthread_mutex_unlock(&pr->sq_mu);
        return -EBUSY; /* the kernel is refusing them: the caller may retry */
    }
    for (int i = 0; i < n; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&pr->ring);
        int fd = ((struct posix_file *)ios[i].f)->fd;
        switch (ios[i].op) {
        case VFS_IO_WRITE:
            io_uring_prep_write(sqe, fd, ios[i].buf, (unsigned)ios[i].len, ios[i].off);
            if (ios[i].f->flags & VFS_O_WRITE_DSYNC)
                sqe->rw_flags = RWF_DSYNC; /* durable when it completes: no linked sync */
            break;
        case VFS_IO_FSYNC:
            io_uring_prep_fsync(sqe, fd, 0);
            break;
        default:
            io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
            break;
        }
        if (i < n - 1)
            io_uring_sqe_set_flags(sqe, IOSQE_IO_LINK);
        io_uring_sqe_set_data64(sqe, ((uint64_t)slot << 8) | (uint64_t)i);
        ios[i].result = -EINPROGRESS;
    }
    c->used = 1;
    c->left = n;
    c->n = n;
    c->tag = tag;
    c->ios = ios;
    c->t0 = cl_now_ns();
    /* The SQEs are in the ring now.  If the kernel refuses the enter for
     * the moment (-EAGAIN, -EBUSY), they stay queued: the chain counts as
     * submitted, and the next submit or reap hands them over (a reap never
     * sleeps while any are queued). */
    rc = ring_enter(pr);
    pthread_mutex_unlock(&pr->sq_mu);
    return rc < 0 && rc != -EAGAIN && rc != -EBUSY ? rc : 0;
}

/* Counts one finished op as its synchronous call would. */
static void px_ring_count(const struct vfs_io *io)
{
    struct vfs_file *f = io->f;
    if (io->result == -ECANCELED)
        return;
    switch (io->op) {
    case VFS_IO_WRITE:
        if (io->result > 0) {
            VFS_COUNT(f->vfs, f->cls, writes, 1);
            VFS_COUNT(f->vfs, f->cls, write_bytes, (uint64_t)io->result);
            if (vfs_write_is_sync(f))
                VFS_COUNT(f->vfs, f->cls, dsync_writes, 1);
        }
        break;
    case VFS_IO_FSYNC:
        VFS_COUNT(f->vfs, f->cls, fsyncs, 1);
        break;
    default:
        VFS_COUNT(f->vfs, f->cls, fdatasyncs, 1);
        break;
    }
}

#define REAP_STALL_MS 5000 /* how long queued SQEs may stay refused by the kernel */

static int px_ring_reap(struct vfs_ring *r, int wait, uint64_t *tag, struct vfs_io **ios)
{
    struct px_ring *pr = (struct px_ring *)r;
    unsigned stalled = 0;
    for (;;) {
        struct io_uring_cqe *cqe;
        int queued = 0, rc;
        /* SQEs a busy kernel refused earlier: hand them over first.  While
         * any stay queued, nothing may be in the kernel to complete, so
         * poll rather than sleep in wait_cqe. */
        pthread_mutex_lock(&pr->sq_mu);
        if (io_uring_sq_ready(&pr->ring)) {
            rc = ring_enter(pr);
            if (rc < 0 && rc != -EAGAIN && rc != -EBUSY) {
                pthread_mutex_unlock(&pr->sq_mu);
                return rc;
            }
            queued = io_uring_sq_ready(&pr->ring) > 0;
        }
        pthread_mutex_unlock(&pr->sq_mu);
        if (wait && !queued) {
            rc = io_uring_wait_cqe(&pr->ring, &cqe);
            if (rc == -EINTR)
                continue;
        } else {
            rc = io_uring_peek_cqe(&pr->ring, &cqe);
            if (rc == -EAGAIN) {
                if (!wait)
                    return 0;
                if (++stalled > REAP_STALL_MS * 10)
                    return -EAGAIN; /* the kernel keeps refusing: the caller breaks */
                struct timespec ts = {0, 100000}; /* 100 us */
                nanosleep(&ts, NULL);
                continue;
            }
        }
        if (rc < 0)
            return rc;
        uint64_t data = io_uring_cqe_get_data64(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&pr->ring, cqe);
        if (data == RING_WAKE_DATA)
            return 0;
        unsigned slot = (unsigned)(data >> 8), i = (unsigned)(data & 0xff);
        if (slot >= r->depth || !pr->chains[slot].used || i >= (unsigned)pr->chains[slot].n)
            return -EIO; /* not ours: cannot happen */
        struct px_chain *c = &pr->chains[slot];
        c->ios[i].result = res;
        px_ring_count(&c->ios[i]);
        if (--c->left > 0)
            continue;
        int has_sync = 0;
        for (int k = 0; k < c->n; k++)
            has_sync |= c->ios[k].op != VFS_IO_WRITE || vfs_write_is_sync(c->ios[k].f);
        if (has_sync)
            VFS_COUNT(c->ios[0].f->vfs, c->ios[0].f->cls, sync_ns, cl_now_ns() - c->t0);
        c->used = 0;
        *tag = c->tag;
        *ios = c->ios;
        return 1;
    }
}

static int px_ring_wake(struct vfs_ring *r)
{
    struct px_ring *pr = (struct px_ring *)r;
    struct io_uring_sqe *sqe;
    int rc;

    pthread_mutex_lock(&pr->sq_mu);
    sqe = io_uring_get_sqe(&pr->ring);
    if (!sqe) { /* full of SQEs not yet entered: hand them over first */
        ring_enter(pr);
        sqe = io_uring_get_sqe(&pr->ring);
    }
    if (sqe) {
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, RING_WAKE_DATA);
        rc = ring_enter(pr);
        rc = rc < 0 && rc != -EAGAIN && rc != -EBUSY ? rc : 0; /* queued: the next reap enters it */
    } else {
        rc = -EBUSY;
    }
    pthread_mutex_unlock(&pr->sq_mu);
    return rc;
}

static void px_ring_close(struct vfs_ring *r)
{
    struct px_ring *pr = (struct px_ring *)r;
    uint64_t tag;
    struct vfs_io *ios;
    for (;;) { /* the kernel may still read the callers' buffers: wait */
        int busy = 0;
        for (unsigned s = 0; s < r->depth; s++)
            busy |= pr->chains[s].used;
        if (!busy)
            break;
        if (px_ring_reap(r, 1, &tag, &ios) < 0)
            break;
    }
    io_uring_queue_exit(&pr->ring);
    pthread_mutex_destroy(&pr->sq_mu);
    free(pr->chains);
    free(pr);
}

static const struct vfs_ops posix_ops = {
    .open = px_open,
    .close = px_close,
    .pread = px_pread,
    .pwrite = px_pwrite,
    .fsync = px_fsync,
    .fdatasync = px_fdatasync,
    .fallocate = px_fallocate,
    .truncate = px_truncate,
    .size = px_size,
    .rename = px_rename,
    .unlink = px_unlink,
    .mkdir = px_mkdir,
    .rmdir = px_rmdir,
    .sync_dir = px_sync_dir,
    .list = px_list,
    .exists = px_exists,
    .destroy = px_destroy,
    .ring_open = px_ring_open,
    .ring_submit = px_ring_submit,
    .ring_reap = px_ring_reap,
    .ring_wake = px_ring_wake,
    .ring_close = px_ring_close,
    .drop_cache = px_drop_cache,
    .links = px_links,
};

static struct vfs posix_vfs = {
    .ops = &posix_ops,
    .name = "posix",
};

struct vfs *vfs_posix(void)
{
    return &posix_vfs;
}
