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
 *   - counters are bumped with relaxed atomic adds after the system call, so
 *     any thread may read them while others do I/O.  A pwrite on a
 *     VFS_O_DSYNC file counts as one write and one dsync_write; sync_ns is
 *     the CLOCK_MONOTONIC time spent inside fsync/fdatasync (sync_dir counts
 *     as an fsync of class VFS_CLASS_OTHER).
 *
 * Callers: the WAL, the page store and the engine through vfs.h; the fault
 * layer (vfs_fault.c) wraps this backend and reuses the shared helpers.
 */
#include "vfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct posix_file {
    struct vfs_file base;
    int fd;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

int vfs_submit_sequential(struct vfs *v, struct vfs_io *ios, int n)
{
    int first = 0;
    (void)v;
    for (int i = 0; i < n; i++) {
        struct vfs_io *io = &ios[i];
        if (first) {
            io->result = -ECANCELED;
            continue;
        }
        switch (io->op) {
        case VFS_IO_WRITE:
            io->result = vfs_pwrite(io->f, io->buf, io->len, io->off);
            break;
        case VFS_IO_FSYNC:
            io->result = vfs_fsync(io->f);
            break;
        case VFS_IO_FDATASYNC:
            io->result = vfs_fdatasync(io->f);
            break;
        default:
            io->result = -EINVAL;
            break;
        }
        first = io->result;
    }
    return first;
}

int vfs_write_file_durable(struct vfs *v, const char *dir, const char *name, const void *buf,
                           size_t len, enum vfs_class cls)
{
    char *tmp = NULL, *dst = NULL;
    struct vfs_file *f = NULL;
    int rc;

    if (!dir || !*dir)
        dir = ".";
    if (asprintf(&tmp, "%s/%s.tmp", dir, name) < 0) {
        tmp = NULL;
        rc = -ENOMEM;
        goto out;
    }
    if (asprintf(&dst, "%s/%s", dir, name) < 0) {
        dst = NULL;
        rc = -ENOMEM;
        goto out;
    }
    rc = vfs_open(v, tmp, VFS_O_CREATE | VFS_O_TRUNC, cls, &f);
    if (rc)
        goto out;
    rc = vfs_pwrite(f, buf, len, 0);
    if (!rc)
        rc = vfs_fsync(f);
    {
        int crc = vfs_close(f);
        if (!rc)
            rc = crc;
    }
    if (!rc)
        rc = vfs_rename(v, tmp, dst);
    if (rc) {
        vfs_unlink(v, tmp); /* best effort: the old file is still intact */
        goto out;
    }
    rc = vfs_sync_dir(v, dir);
out:
    free(tmp);
    free(dst);
    return rc;
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
    pf = calloc(1, sizeof *pf);
    if (!pf)
        return -ENOMEM;
    do
        fd = open(path, oflags, 0644);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        free(pf);
        return -e;
    }
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
        ssize_t n = pwrite(pf->fd, (const char *)buf + done, len - done, (off_t)(off + done));
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
    if (f->flags & VFS_O_DSYNC)
        VFS_COUNT(f->vfs, f->cls, dsync_writes, 1);
    return 0;
}

static int px_fsync(struct vfs_file *f)
{
    struct posix_file *pf = (struct posix_file *)f;
    uint64_t t0 = now_ns();
    int rc = fsync(pf->fd) ? -errno : 0;
    VFS_COUNT(f->vfs, f->cls, sync_ns, now_ns() - t0);
    VFS_COUNT(f->vfs, f->cls, fsyncs, 1);
    return rc;
}

static int px_fdatasync(struct vfs_file *f)
{
    struct posix_file *pf = (struct posix_file *)f;
    uint64_t t0 = now_ns();
    int rc = fdatasync(pf->fd) ? -errno : 0;
    VFS_COUNT(f->vfs, f->cls, sync_ns, now_ns() - t0);
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

static int px_sync_dir(struct vfs *v, const char *dir)
{
    int fd, rc;
    uint64_t t0;

    do
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -errno;
    t0 = now_ns();
    rc = fsync(fd) ? -errno : 0;
    VFS_COUNT(v, VFS_CLASS_OTHER, sync_ns, now_ns() - t0);
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
    .sync_dir = px_sync_dir,
    .list = px_list,
    .exists = px_exists,
    .submit = vfs_submit_sequential,
    .destroy = px_destroy,
};

static struct vfs posix_vfs = {
    .ops = &posix_ops,
    .name = "posix",
};

struct vfs *vfs_posix(void)
{
    return &posix_vfs;
}
