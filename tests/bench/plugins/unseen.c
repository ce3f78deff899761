/*
 * unseen.c -- engine plugins that write their data by a means `commitlab
 * crash --mode cut` cannot see, one per -DUNSEEN, for
 * tests/bench/cut_unseen_test.sh.  Each is the example store
 * (examples/applog.c) whose log is sized to 1 MiB when it opens, and
 * whose records then go into that file by the one means below,
 * never synced, while its --sync commit row claims that an acknowledged
 * commit survives a power failure -- a claim no power failure would
 * honour.  The cut must fail each one by naming the file and the writes
 * it did not see, at the first crash, never report it ok:
 *
 *   1 unseen_mmap     a store into a shared writable mapping of the log
 *   2 unseen_syscall  syscall(SYS_pwrite64, ...), past the program's pwrite
 *   3 unseen_uring    an IORING_OP_WRITE on a ring set up for each record
 *                     and torn down after it (liburing)
 */
#include <commitlab_engine.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if UNSEEN == 3
#include <liburing.h>
#endif

#define LOG_SIZE (1u << 20)

/* The example's writes and syncs, redirected below: the macros are
 * defined after every system header, so they rename only its calls. */
static ssize_t unseen_pwrite(int fd, const void *buf, size_t n, off_t off);
static int no_sync(int fd)
{
    (void)fd;
    return 0;
}
#define pwrite unseen_pwrite
#define fdatasync no_sync
#define fsync no_sync
#define commitlab_engine_plugin applog_table
#include "../../../examples/applog.c"
#undef commitlab_engine_plugin
#undef pwrite
#undef fdatasync
#undef fsync

#if UNSEEN == 1
#define NAME "unseen_mmap"
#define MAPS "one memcpy of the record into a shared writable mapping of the log, never synced"
static unsigned char *map; /* the log, LOG_SIZE bytes, mapped shared and writable */
#elif UNSEEN == 2
#define NAME "unseen_syscall"
#define MAPS "one syscall(SYS_pwrite64) of the record, never synced"
#else
#define NAME "unseen_uring"
#define MAPS "one IORING_OP_WRITE of the record on a ring of its own, never synced"
#endif

static ssize_t unseen_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (off < 0 || (uint64_t)off + n > LOG_SIZE) {
        errno = ENOSPC;
        return -1;
    }
#if UNSEEN == 1
    (void)fd;
    memcpy(map + off, buf, n);
    return (ssize_t)n;
#elif UNSEEN == 2
    return syscall(SYS_pwrite64, fd, buf, n, off);
#else
    struct io_uring ring;
    int rc = io_uring_queue_init(2, &ring, 0);
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    struct io_uring_cqe *cqe = NULL;
    io_uring_prep_write(sqe, fd, buf, (unsigned)n, (uint64_t)off);
    rc = io_uring_submit_and_wait(&ring, 1);
    if (rc >= 0)
        rc = io_uring_wait_cqe(&ring, &cqe);
    ssize_t res = rc < 0 ? rc : cqe->res;
    io_uring_queue_exit(&ring);
    if (res < 0) {
        errno = (int)-res;
        return -1;
    }
    return res;
#endif
}

static struct cl_engine_plugin wrapped;
static int (*applog_open)(struct cl_engine_db *);
static void (*applog_close)(struct cl_engine_db *);

/* The example's open (its replay cuts the log back to its last whole
 * record), then the log sized to LOG_SIZE -- zeros, where the replay of
 * the next open stops.  The cut's journal starts after the open, with a
 * syncfs: every record then goes inside what the cut holds as synced. */
static int unseen_open(struct cl_engine_db *db)
{
    int rc = applog_open(db);
    if (rc != CL_ENGINE_OK)
        return rc;
    struct store *s = db->impl;
    if (ftruncate(s->fd, LOG_SIZE)) {
        CL_ENGINE_ERRF(db->err, NAME ": size the log: %s", strerror(errno));
        applog_close(db);
        return CL_ENGINE_ERR;
    }
#if UNSEEN == 1
    map = mmap(NULL, LOG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (map == MAP_FAILED) {
        map = NULL;
        CL_ENGINE_ERRF(db->err, NAME ": mmap the log: %s", strerror(errno));
        applog_close(db);
        return CL_ENGINE_ERR;
    }
#elif UNSEEN == 3
    struct io_uring ring;
    int e = io_uring_queue_init(2, &ring, 0);
    if (e < 0) { /* no io_uring here: the store cannot run (n/a), never a failure */
        CL_ENGINE_ERRF(db->err, NAME ": io_uring_setup: %s", strerror(-e));
        applog_close(db);
        return CL_ENGINE_NA;
    }
    io_uring_queue_exit(&ring);
#endif
    return CL_ENGINE_OK;
}

static void unseen_close(struct cl_engine_db *db)
{
#if UNSEEN == 1
    if (map)
        munmap(map, LOG_SIZE);
    map = NULL;
#endif
    applog_close(db);
}

static const struct cl_engine_accept rows[] = {
    CL_ENGINE_MAPS("sync", "commit", MAPS, CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER),
    CL_ENGINE_NOT("sync", NULL, "one policy: commit"),
    CL_ENGINE_END,
};

const struct cl_engine_plugin *commitlab_engine_plugin(void)
{
    wrapped = *applog_table();
    applog_open = wrapped.open;
    applog_close = wrapped.close;
    wrapped.open = unseen_open;
    wrapped.close = unseen_close;
    wrapped.name = NAME;
    wrapped.notes = "BROKEN on purpose: claims to survive a power failure and never syncs what it writes";
    wrapped.accepts = rows;
    return &wrapped;
}
