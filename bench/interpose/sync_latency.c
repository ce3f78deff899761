/*
 * sync_latency.c -- the program's definitions of the calls that write or
 * make data durable (fsync, fdatasync, msync, write, pwrite, pwrite64,
 * writev, pwritev, pwritev64, pwritev2, pwritev64v2), for the engines that
 * are not commitlab: `--sync-latency`, an emulated slow device paid at
 * every durability point an engine makes, and the hooks of `crash --mode
 * cut`'s undo journal (cut_journal.c, which defines the calls that change
 * names and sizes), and bench's count of the syncs, writes and bytes a
 * store makes on its own files (file_calls.c).
 *
 * commitlab emulates a slow device in its own file layer
 * (storage/vfs/vfs_latency.c), which also covers its io_uring syncs.  LMDB,
 * RocksDB and SQLite are shared libraries linked into this program: their
 * calls to fsync, fdatasync and msync, and their writes to files opened
 * with O_DSYNC or O_SYNC, bind to the definitions below before libc's
 * (ELF symbol interposition: the executable's definition wins).  Each
 * calls the real function and, when it succeeded and a latency is set,
 * sleeps that long after it -- as vfs_latency.c does -- so every engine in
 * a run pays the same emulated price for each durability point it makes:
 * LMDB two per commit (fdatasync of the data, an O_DSYNC write of the meta
 * page), RocksDB and SQLite one per synced commit.
 *
 * The latency is set only while a run of an engine without its own
 * emulation is open (bench_run.c), so commitlab, whose syncs also pass
 * through here, is never delayed twice.  With no latency set and no cut
 * journal armed, the cost is two atomic loads per call.
 *
 * There is one definition of each symbol in the program: both uses hook
 * into these, and nothing else may define them.  Each is named in
 * interposed.list, which the link exports, so a plugin loaded at run time
 * binds to these as the linked libraries do.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cut_journal.h"
#include "file_calls.h"
#include "sync_latency.h"

static _Atomic uint32_t latency_us;
static _Atomic uint64_t points;

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_msync)(void *, size_t, int);
static ssize_t (*real_pwritev2)(int, const struct iovec *, int, off_t, int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);

/* Resolved before main, while the process has one thread; and, should a
 * library's own constructor write before this one ran, on first use. */
__attribute__((constructor)) static void resolve(void)
{
    real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    real_msync = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "msync");
    real_pwritev2 = (ssize_t(*)(int, const struct iovec *, int, off_t, int))dlsym(RTLD_NEXT, "pwritev2");
    real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    real_pwrite = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    real_writev = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    real_pwritev = (ssize_t(*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "pwritev");
}

void bench_sync_latency_set(uint32_t us) { atomic_store(&latency_us, us); }

uint64_t bench_sync_latency_points(void) { return atomic_load(&points); }

/* After a durability point that succeeded: the emulated device's time. */
static void pay(void)
{
    uint32_t us = atomic_load_explicit(&latency_us, memory_order_relaxed);
    if (!us)
        return;
    atomic_fetch_add_explicit(&points, 1, memory_order_relaxed);
    struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

/* A write to fd is a durability point when fd was opened O_DSYNC/O_SYNC
 * or the write asked for RWF_DSYNC/RWF_SYNC; asked only while a latency
 * is set. */
static void pay_if_synchronous(int fd, ssize_t rc, int rwf)
{
    if (rc < 0 || !atomic_load_explicit(&latency_us, memory_order_relaxed))
        return;
    int saved = errno, fl = fcntl(fd, F_GETFL);
    errno = saved;
    if ((fl >= 0 && (fl & (O_DSYNC | O_SYNC))) || (rwf & (RWF_DSYNC | RWF_SYNC)))
        pay();
}

static int sync_call(int (*real)(int), int fd)
{
    struct bench_cut_op op;
    bench_cut_sync_begin(fd, &op);
    int rc = real(fd);
    int e = errno;
    bench_cut_sync_end(&op, rc);
    bench_file_synced(fd, rc);
    if (rc == 0)
        pay();
    errno = e;
    return rc;
}

int fsync(int fd)
{
    if (!real_fsync)
        resolve();
    return sync_call(real_fsync, fd);
}

int fdatasync(int fd)
{
    if (!real_fdatasync)
        resolve();
    return sync_call(real_fdatasync, fd);
}

int msync(void *addr, size_t len, int flags)
{
    if (!real_msync)
        resolve();
    bench_cut_msync(addr);
    int rc = real_msync(addr, len, flags);
    int e = errno;
    bench_file_msynced(addr, flags, rc);
    errno = e;
    if (rc == 0 && (flags & MS_SYNC))
        pay();
    return rc;
}

/* Every write: off < 0 writes at the file offset (write, writev). */
static ssize_t write_call(int fd, const struct iovec *iov, int cnt, int64_t off, int rwf)
{
    size_t n = 0;
    for (int i = 0; i < cnt; i++)
        n += iov[i].iov_len;
    struct bench_cut_op op;
    bench_cut_write_begin(fd, off, n, rwf, &op);
    ssize_t rc;
    if (rwf)
        rc = real_pwritev2(fd, iov, cnt, (off_t)off, rwf);
    else if (cnt == 1)
        rc = off < 0 ? real_write(fd, iov[0].iov_base, iov[0].iov_len)
                     : real_pwrite(fd, iov[0].iov_base, iov[0].iov_len, (off_t)off);
    else
        rc = off < 0 ? real_writev(fd, iov, cnt) : real_pwritev(fd, iov, cnt, (off_t)off);
    int e = errno;
    bench_cut_write_end(&op, rc, iov, cnt);
    bench_file_wrote(fd, rc, rwf);
    pay_if_synchronous(fd, rc, rwf);
    errno = e;
    return rc;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (!real_write)
        resolve();
    struct iovec v = {(void *)buf, n};
    return write_call(fd, &v, 1, -1, 0);
}

static ssize_t pwrite_any(int fd, const void *buf, size_t n, off_t off)
{
    if (!real_pwrite)
        resolve();
    if (off < 0) { /* the kernel's EINVAL, not a write at the file offset */
        errno = EINVAL;
        return -1;
    }
    struct iovec v = {(void *)buf, n};
    return write_call(fd, &v, 1, off, 0);
}
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) { return pwrite_any(fd, buf, n, off); }
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) { return pwrite_any(fd, buf, n, off); }

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (!real_writev)
        resolve();
    return write_call(fd, iov, cnt, -1, 0);
}

static ssize_t pwritev_any(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
    if (!real_pwritev)
        resolve();
    if (off < -1 || (off == -1 && !rwf)) {
        errno = EINVAL;
        return -1;
    }
    return write_call(fd, iov, cnt, off, rwf);
}
ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) { return pwritev_any(fd, iov, cnt, off, 0); }
ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off) { return pwritev_any(fd, iov, cnt, off, 0); }
/* pwritev2 with off -1 writes at the file offset, as write does. */
ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
    if (!rwf)
        return off == -1 ? writev(fd, iov, cnt) : pwritev_any(fd, iov, cnt, off, 0);
    return pwritev_any(fd, iov, cnt, off, rwf);
}
ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
    return pwritev2(fd, iov, cnt, off, rwf);
}
