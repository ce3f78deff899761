/*
 * file_calls.c -- counts the syncs, writes and bytes a bench run's store
 * makes on its own files (file_calls.h), for every engine alike:
 * commitlab's, LMDB, RocksDB, SQLite and the plugins all call the
 * program's definitions of open, write, fsync and the rest before libc's
 * (sync_latency.c, cut_journal.c), whose hooks land here.  It defines two
 * more of those calls itself: close, so a descriptor stops being watched
 * when it is closed and its number reused, and sync_file_range, which is
 * counted as a sync when it waits for the write-out
 * (SYNC_FILE_RANGE_WAIT_AFTER; with SYNC_FILE_RANGE_WRITE alone it only
 * starts one, as RocksDB's bytes_per_sync does).
 *
 * Which descriptors: the run names its directory before the store opens
 * (bench_file_calls_watch); each descriptor an interposed open returns is
 * resolved once, through /proc/self/fd, and is watched when it is that
 * directory or below it.  Its O_DSYNC/O_SYNC flag is kept with it then
 * (Linux's F_SETFL cannot change either), so a write asks nothing of the
 * kernel: the cost of a call on a descriptor is one relaxed atomic load,
 * and two atomic adds when it is watched.  A shared writable mapping of a
 * watched descriptor is remembered (up to MAX_MAPS of them) so that an
 * msync(MS_SYNC) inside it counts as a sync.
 *
 * Invariants: marks[fd] is nonzero only for a descriptor an interposed
 * open returned while watching, not closed since through close(); the
 * watched directory's path is written only while nothing is watched.
 * Descriptors at or above MAX_FD are not watched.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "file_calls.h"

#define MAX_FD 65536
#define MAX_MAPS 64

enum { MARK_WATCHED = 1, MARK_DSYNC = 2 };

static _Atomic unsigned char marks[MAX_FD];
static _Atomic int watching;
static char root[PATH_MAX];
static size_t rootlen;
static _Atomic uint64_t n_syncs, n_writes, n_bytes;

static pthread_mutex_t maps_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uintptr_t lo, hi;
} maps[MAX_MAPS];
static size_t nmaps;

static int (*real_close)(int);
static int (*real_sync_file_range)(int, off_t, off_t, unsigned);

__attribute__((constructor)) static void resolve(void)
{
    real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    real_sync_file_range = (int (*)(int, off_t, off_t, unsigned))dlsym(RTLD_NEXT, "sync_file_range");
}

static void clear_all(void)
{
    for (size_t i = 0; i < MAX_FD; i++)
        atomic_store_explicit(&marks[i], 0, memory_order_relaxed);
    pthread_mutex_lock(&maps_mu);
    nmaps = 0;
    pthread_mutex_unlock(&maps_mu);
}

int bench_file_calls_watch(const char *dir)
{
    char buf[PATH_MAX];
    atomic_store(&watching, 0);
    clear_all();
    if (!realpath(dir, buf))
        return -errno;
    snprintf(root, sizeof root, "%s", buf);
    rootlen = strlen(root);
    while (rootlen > 1 && root[rootlen - 1] == '/')
        root[--rootlen] = 0;
    atomic_store_explicit(&watching, 1, memory_order_release);
    return 0;
}

void bench_file_calls_unwatch(void)
{
    atomic_store(&watching, 0);
    clear_all();
}

void bench_file_calls_sample(struct bench_file_counts *c)
{
    c->syncs = atomic_load(&n_syncs);
    c->writes = atomic_load(&n_writes);
    c->bytes = atomic_load(&n_bytes);
}

static unsigned char mark_of(int fd)
{
    return fd >= 0 && fd < MAX_FD ? atomic_load_explicit(&marks[fd], memory_order_relaxed) : 0;
}

void bench_file_opened(int fd, int flags)
{
    if (fd < 0 || fd >= MAX_FD)
        return;
    unsigned char m = 0;
    if (atomic_load_explicit(&watching, memory_order_acquire)) {
        char link[32], path[PATH_MAX];
        int saved = errno;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof path - 1);
        errno = saved;
        if (n > 0) {
            path[n] = 0;
            if ((size_t)n >= rootlen && memcmp(path, root, rootlen) == 0 &&
                (path[rootlen] == 0 || path[rootlen] == '/' || rootlen == 1))
                m = MARK_WATCHED | ((flags & O_DSYNC) ? MARK_DSYNC : 0); /* O_SYNC includes O_DSYNC's bit */
        }
    }
    atomic_store_explicit(&marks[fd], m, memory_order_relaxed);
}

void bench_file_closed(int fd)
{
    if (fd >= 0 && fd < MAX_FD)
        atomic_store_explicit(&marks[fd], 0, memory_order_relaxed);
}

void bench_file_wrote(int fd, ssize_t rc, int rwf)
{
    unsigned char m = mark_of(fd);
    if (!m || rc < 0)
        return;
    atomic_fetch_add_explicit(&n_writes, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&n_bytes, (uint64_t)rc, memory_order_relaxed);
    if ((m & MARK_DSYNC) || (rwf & (RWF_DSYNC | RWF_SYNC)))
        atomic_fetch_add_explicit(&n_syncs, 1, memory_order_relaxed);
}

void bench_file_synced(int fd, int rc)
{
    if (rc == 0 && mark_of(fd))
        atomic_fetch_add_explicit(&n_syncs, 1, memory_order_relaxed);
}

void bench_file_mapped(void *addr, size_t len, int prot, int flags, int fd)
{
    if (addr == MAP_FAILED || !(prot & PROT_WRITE) || !(flags & MAP_SHARED) || !mark_of(fd))
        return;
    pthread_mutex_lock(&maps_mu);
    if (nmaps < MAX_MAPS) {
        maps[nmaps].lo = (uintptr_t)addr;
        maps[nmaps].hi = (uintptr_t)addr + len;
        nmaps++;
    }
    pthread_mutex_unlock(&maps_mu);
}

void bench_file_msynced(void *addr, int flags, int rc)
{
    if (rc != 0 || !(flags & MS_SYNC) || !atomic_load_explicit(&watching, memory_order_relaxed))
        return;
    uintptr_t a = (uintptr_t)addr;
    int hit = 0;
    pthread_mutex_lock(&maps_mu);
    for (size_t i = 0; i < nmaps && !hit; i++)
        hit = a >= maps[i].lo && a < maps[i].hi;
    pthread_mutex_unlock(&maps_mu);
    if (hit)
        atomic_fetch_add_explicit(&n_syncs, 1, memory_order_relaxed);
}

/* ---- the calls defined here ----------------------------------------------------------------- */

int close(int fd)
{
    bench_file_closed(fd);
    if (!real_close) /* before the constructor ran (a sanitizer's runtime starting) */
        return (int)syscall(SYS_close, fd);
    return real_close(fd);
}

int sync_file_range(int fd, off_t off, off_t n, unsigned flags)
{
    if (!real_sync_file_range)
        resolve();
    int rc = real_sync_file_range(fd, off, n, flags);
    int e = errno;
    if (flags & SYNC_FILE_RANGE_WAIT_AFTER) /* a write-out it waits for; SYNC_FILE_RANGE_WRITE alone only starts one */
        bench_file_synced(fd, rc);
    errno = e;
    return rc;
}
