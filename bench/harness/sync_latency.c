/*
 * sync_latency.c -- `--sync-latency` for the engines that are not
 * commitlab: an emulated slow device, paid at every durability point an
 * engine makes, by interposing the calls that make data durable.
 *
 * commitlab emulates a slow device in its own file layer
 * (storage/vfs_latency.c), which also covers its io_uring syncs.  LMDB,
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
 * through here, is never delayed twice.  With no latency set, the cost is
 * one atomic load per call.
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

#include "sync_latency.h"

static _Atomic uint32_t latency_us;
static _Atomic uint64_t points;

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_msync)(void *, size_t, int);
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

/* A write to fd is a durability point when fd was opened O_DSYNC/O_SYNC;
 * asked only while a latency is set. */
static void pay_if_synchronous(int fd, ssize_t rc)
{
    if (rc < 0 || !atomic_load_explicit(&latency_us, memory_order_relaxed))
        return;
    int saved = errno, fl = fcntl(fd, F_GETFL);
    errno = saved;
    if (fl >= 0 && (fl & (O_DSYNC | O_SYNC)))
        pay();
}

int fsync(int fd)
{
    if (!real_fsync)
        resolve();
    int rc = real_fsync(fd);
    if (rc == 0)
        pay();
    return rc;
}

int fdatasync(int fd)
{
    if (!real_fdatasync)
        resolve();
    int rc = real_fdatasync(fd);
    if (rc == 0)
        pay();
    return rc;
}

int msync(void *addr, size_t len, int flags)
{
    if (!real_msync)
        resolve();
    int rc = real_msync(addr, len, flags);
    if (rc == 0 && (flags & MS_SYNC))
        pay();
    return rc;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (!real_write)
        resolve();
    ssize_t rc = real_write(fd, buf, n);
    pay_if_synchronous(fd, rc);
    return rc;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (!real_pwrite)
        resolve();
    ssize_t rc = real_pwrite(fd, buf, n, off);
    pay_if_synchronous(fd, rc);
    return rc;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (!real_writev)
        resolve();
    ssize_t rc = real_writev(fd, iov, cnt);
    pay_if_synchronous(fd, rc);
    return rc;
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    if (!real_pwritev)
        resolve();
    ssize_t rc = real_pwritev(fd, iov, cnt, off);
    pay_if_synchronous(fd, rc);
    return rc;
}
