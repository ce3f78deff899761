/*
 * vfs.h -- the file I/O layer: every file operation the engine performs
 * goes through one table of functions, so that a fault-injecting backend
 * (storage/fault/vfs_fault.h) can sit under the engine and produce the on-disk
 * state a power failure could leave.
 *
 * Contract of every backend:
 *   - functions return 0 or -errno;
 *   - pwrite writes all len bytes or fails (EINTR and short writes are
 *     looped over); pread reads until len bytes or end of file and reports
 *     the count;
 *   - after fsync/fdatasync returns 0 the file's data written before the
 *     call is durable; a newly created, renamed or unlinked name is durable
 *     only after sync_dir on its directory (the POSIX rule, stricter than
 *     ext4's habit);
 *   - a file opened with VFS_O_DSYNC or VFS_O_WRITE_DSYNC is synced by
 *     every pwrite: each write makes its own bytes durable before it
 *     returns (vfs_write_is_sync);
 *   - open opens regular files only: a symbolic link (never followed), a
 *     FIFO, device, socket or directory is refused with CL_EFILETYPE,
 *     without blocking;
 *   - counters are kept per file class (wal, data, meta) and are safe to
 *     read from any thread.
 */
#ifndef CL_VFS_H
#define CL_VFS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

enum vfs_class { VFS_CLASS_WAL = 0, VFS_CLASS_DATA, VFS_CLASS_META, VFS_CLASS_OTHER, VFS_NCLASS };

/* open flags */
#define VFS_O_CREATE 0x01u  /* create if absent */
#define VFS_O_EXCL   0x02u  /* with CREATE: fail with -EEXIST if present */
#define VFS_O_RDONLY 0x04u
#define VFS_O_DSYNC  0x08u  /* O_DSYNC */
#define VFS_O_DIRECT 0x10u  /* O_DIRECT: buffers, offsets and lengths aligned to VFS_DIRECT_ALIGN */
#define VFS_O_TRUNC  0x20u
/* Every write carries RWF_DSYNC on an ordinary descriptor (pwritev2(2);
 * through a ring, the write's rw_flags): each write is durable when it
 * completes, as under O_DSYNC, without the descriptor being O_DSYNC.  A
 * kernel that refuses the flag fails the write with -EOPNOTSUPP (or
 * -EINVAL); the open itself does not check it. */
#define VFS_O_WRITE_DSYNC 0x40u

#define VFS_DIRECT_ALIGN 4096u

struct vfs_counters {
    uint64_t writes, write_bytes;
    uint64_t reads, read_bytes;
    uint64_t fsyncs, fdatasyncs, dsync_writes; /* syncs by kind */
    uint64_t sync_ns;                          /* time spent in fsync/fdatasync */
};

struct vfs;
struct vfs_file {
    struct vfs *vfs;     /* owner */
    enum vfs_class cls;
    unsigned flags;      /* VFS_O_* it was opened with */
};

/* 1 when every write to f is durable when it returns (VFS_O_DSYNC or
 * VFS_O_WRITE_DSYNC): such a write counts as a sync of its bytes. */
static inline int vfs_write_is_sync(const struct vfs_file *f)
{
    return (f->flags & (VFS_O_DSYNC | VFS_O_WRITE_DSYNC)) != 0;
}

/* One element of a chain (below). */
enum vfs_io_op { VFS_IO_WRITE = 0, VFS_IO_FSYNC, VFS_IO_FDATASYNC };
struct vfs_io {
    enum vfs_io_op op;
    struct vfs_file *f;
    const void *buf;     /* WRITE */
    size_t len;          /* WRITE */
    uint64_t off;        /* WRITE */
    int result;          /* out: 0 or -errno; ops after the first failure get -ECANCELED.
                          * Through a ring, a WRITE reports the bytes written (>= 0,
                          * possibly fewer than len) or -errno. */
};

/* ---- asynchronous chains (io_uring) ------------------------------------------
 * Optional: a backend without them leaves the ring_* members NULL, and
 * vfs_ring_open() returns -ENOSYS.  The POSIX backend maps them to io_uring
 * and fails ring_open with -ENOSYS or -EPERM where the kernel refuses it.
 *
 * A WRITE on a file opened with VFS_O_WRITE_DSYNC carries RWF_DSYNC, so a
 * chain [write] alone is durable when it completes, with no linked sync;
 * on an O_DSYNC file the descriptor makes it so.
 *
 * A ring runs up to depth chains at once.  A chain is ios[0..n-1] linked in
 * order (IOSQE_IO_LINK): each op starts only after the previous one
 * completed in full; after a failure or a short write the later links
 * complete with -ECANCELED.  Different chains are independent: they run,
 * and complete, in any order.
 *   ring_submit  queues one chain (1 <= n <= VFS_RING_MAX_LINKS) under the
 *                caller's tag and returns at once: 0, -EBUSY when depth
 *                chains are not yet reaped or the ring is momentarily full
 *                (try again), or -errno with nothing queued.
 *                ios and the buffers they name stay the caller's, untouched,
 *                until the chain is reaped.
 *   ring_reap    reports one finished chain: returns 1 with *tag and *ios
 *                (the array given to submit) set and every ios[i].result
 *                filled; 0 when nothing has finished (wait = 0) or when
 *                ring_wake was called (wait = 1); or -errno.  With wait = 1
 *                and nothing in flight it sleeps until ring_wake.
 *   ring_wake    makes a ring_reap sleeping in another thread return 0 (or
 *                the next one, if none sleeps).  Safe from any thread.
 *   ring_close   waits for the chains still in flight, then frees.
 * Submit, reap and close are called by one thread at a time (the caller
 * serialises them).  Counters count each op as its synchronous call would,
 * when the chain is reaped; sync_ns is approximated by the chain's time
 * from submit to reap (for chains with a sync).
 */
#define VFS_RING_MAX_LINKS 8
struct vfs_ring {
    struct vfs *vfs;     /* owner */
    unsigned depth;      /* chains in flight at most */
};

typedef int (*vfs_list_fn)(void *arg, const char *name);

struct vfs_ops {
    int (*open)(struct vfs *v, const char *path, unsigned flags, enum vfs_class cls,
                struct vfs_file **out);
    int (*close)(struct vfs_file *f);
    int (*pread)(struct vfs_file *f, void *buf, size_t len, uint64_t off, size_t *nread);
    int (*pwrite)(struct vfs_file *f, const void *buf, size_t len, uint64_t off);
    int (*fsync)(struct vfs_file *f);
    int (*fdatasync)(struct vfs_file *f);
    int (*fallocate)(struct vfs_file *f, uint64_t off, uint64_t len); /* allocates, extends size */
    int (*truncate)(struct vfs_file *f, uint64_t size);
    int (*size)(struct vfs_file *f, uint64_t *size);
    int (*rename)(struct vfs *v, const char *from, const char *to);
    int (*unlink)(struct vfs *v, const char *path);
    int (*mkdir)(struct vfs *v, const char *path);           /* -EEXIST if present */
    int (*rmdir)(struct vfs *v, const char *path);           /* an empty directory; may be NULL */
    int (*sync_dir)(struct vfs *v, const char *dir);
    int (*list)(struct vfs *v, const char *dir, vfs_list_fn fn, void *arg); /* names, no "." ".." */
    int (*exists)(struct vfs *v, const char *path);          /* 1, 0, or -errno */
    void (*destroy)(struct vfs *v);
    /* Asynchronous chains (above); NULL when the backend has none. */
    int (*ring_open)(struct vfs *v, unsigned depth, struct vfs_ring **out);
    int (*ring_submit)(struct vfs_ring *r, struct vfs_io *ios, int n, uint64_t tag);
    int (*ring_reap)(struct vfs_ring *r, int wait, uint64_t *tag, struct vfs_io **ios);
    int (*ring_wake)(struct vfs_ring *r);
    void (*ring_close)(struct vfs_ring *r);
    /* Drops the file's clean pages from the operating system's page cache
     * (posix_fadvise POSIX_FADV_DONTNEED): advice, content unchanged; a
     * later write of less than a page then reads the page from the
     * device first.  NULL when the backend has no cache to drop. */
    int (*drop_cache)(struct vfs_file *f);
    /* *n = the file's hard links (st_nlink): more than one means another
     * name, perhaps in another directory, reaches the same data.  NULL when
     * the backend cannot tell (its files then count as having one). */
    int (*links)(struct vfs_file *f, uint64_t *n);
};

struct vfs {
    const struct vfs_ops *ops;
    const char *name;                          /* "posix", "fault" */
    struct vfs_counters counters[VFS_NCLASS];  /* updated with atomic adds */
};

/* The POSIX backend (one shared instance; destroy is a no-op). */
struct vfs *vfs_posix(void);

/* Convenience wrappers, so callers read like system calls. */
static inline int vfs_open(struct vfs *v, const char *path, unsigned flags, enum vfs_class cls,
                           struct vfs_file **out) { return v->ops->open(v, path, flags, cls, out); }
static inline int vfs_close(struct vfs_file *f) { return f->vfs->ops->close(f); }
static inline int vfs_pread(struct vfs_file *f, void *buf, size_t len, uint64_t off, size_t *n)
{ return f->vfs->ops->pread(f, buf, len, off, n); }
static inline int vfs_pwrite(struct vfs_file *f, const void *buf, size_t len, uint64_t off)
{ return f->vfs->ops->pwrite(f, buf, len, off); }
static inline int vfs_fsync(struct vfs_file *f) { return f->vfs->ops->fsync(f); }
static inline int vfs_fdatasync(struct vfs_file *f) { return f->vfs->ops->fdatasync(f); }
static inline int vfs_fallocate(struct vfs_file *f, uint64_t off, uint64_t len)
{ return f->vfs->ops->fallocate(f, off, len); }
static inline int vfs_truncate(struct vfs_file *f, uint64_t size) { return f->vfs->ops->truncate(f, size); }
static inline int vfs_size(struct vfs_file *f, uint64_t *size) { return f->vfs->ops->size(f, size); }
static inline int vfs_rename(struct vfs *v, const char *a, const char *b) { return v->ops->rename(v, a, b); }
static inline int vfs_unlink(struct vfs *v, const char *p) { return v->ops->unlink(v, p); }
static inline int vfs_mkdir(struct vfs *v, const char *p) { return v->ops->mkdir(v, p); }
static inline int vfs_rmdir(struct vfs *v, const char *p) { return v->ops->rmdir ? v->ops->rmdir(v, p) : -ENOSYS; }
static inline int vfs_sync_dir(struct vfs *v, const char *d) { return v->ops->sync_dir(v, d); }
static inline int vfs_list(struct vfs *v, const char *d, vfs_list_fn fn, void *arg)
{ return v->ops->list(v, d, fn, arg); }
static inline int vfs_exists(struct vfs *v, const char *p) { return v->ops->exists(v, p); }
static inline void vfs_destroy(struct vfs *v) { if (v && v->ops->destroy) v->ops->destroy(v); }
static inline int vfs_ring_open(struct vfs *v, unsigned depth, struct vfs_ring **out)
{
    *out = NULL;
    return v->ops->ring_open ? v->ops->ring_open(v, depth, out) : -ENOSYS;
}
static inline int vfs_ring_submit(struct vfs_ring *r, struct vfs_io *ios, int n, uint64_t tag)
{ return r->vfs->ops->ring_submit(r, ios, n, tag); }
static inline int vfs_ring_reap(struct vfs_ring *r, int wait, uint64_t *tag, struct vfs_io **ios)
{ return r->vfs->ops->ring_reap(r, wait, tag, ios); }
static inline int vfs_ring_wake(struct vfs_ring *r) { return r->vfs->ops->ring_wake(r); }
static inline void vfs_ring_close(struct vfs_ring *r) { if (r) r->vfs->ops->ring_close(r); }
static inline int vfs_drop_cache(struct vfs_file *f)
{ return f->vfs->ops->drop_cache ? f->vfs->ops->drop_cache(f) : -ENOSYS; }

static inline int vfs_links(struct vfs_file *f, uint64_t *n)
{
    *n = 1;
    return f->vfs->ops->links ? f->vfs->ops->links(f, n) : 0;
}

/* Sums the counters of one class (or all classes with cls = VFS_NCLASS). */
void vfs_counters_get(struct vfs *v, enum vfs_class cls, struct vfs_counters *out);
/* Atomic add helper used by backends. */
void vfs_count(struct vfs *v, enum vfs_class cls, size_t field_offset, uint64_t n);
#define VFS_COUNT(v, cls, field, n) vfs_count((v), (cls), offsetof(struct vfs_counters, field), (n))


#endif /* CL_VFS_H */
