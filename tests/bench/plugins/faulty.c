/*
 * faulty.c -- engine plugins that are wrong on purpose, one per -DFAULT,
 * for the bad-input cases of tests/bench/plugin_test.sh: each must be
 * refused with one line and exit 2, or fail only its own run (or its
 * crash campaign's combination), and never crash commitlab.  The store
 * behind them keeps nothing (a get finds nothing), which the kv workload
 * without --verify does not notice.
 *
 *   1 ABI version 99          2 a table of 16 bytes
 *   3 no entry point          4 open fails with a message
 *   5 SIGSEGV at the 50th commit   6 SIGSEGV in the entry point
 *   7 no read-modify-write transactions (tpcb is n/a)
 *   8 a row for a knob commitlab does not have
 *   9 the example store (examples/applog.c), a store that keeps its
 *     commits, dying of SIGSEGV at the 20th commit of every process but
 *     the first three to commit in its parent directory -- in a kill or
 *     cut campaign, every crash but the three calibration runs' -- so
 *     that the campaign can show the crash is not taken for lost commits
 *  10 a commit that copies 16 bytes within a file of its directory with
 *     copy_file_range, a call crash --mode cut cannot model: the cut
 *     campaign must fail naming it, never report ok
 *  11 a library that ends the process where it is told to: with
 *     FAULTY_EXIT_LOAD=N its constructor calls exit(FAULTY_EXIT_STATUS)
 *     (quick_exit with FAULTY_QUICK_EXIT set) on its Nth load, counted in
 *     the file FAULTY_LOADS names -- the first load is the checking
 *     child's, the second commitlab's own; with FAULTY_EXIT_OPEN set its
 *     open calls exit(FAULTY_EXIT_STATUS)
 *  12 a library that writes to stdout in its constructor (printf, left in
 *     the stdio buffer), its entry point (write(2) on fd 1) and its open
 *     (printf and fflush): none of it may reach the result table
 *  13 a table with commit_async and no sync_wait: refused (pipelining
 *     needs both)
 */
#include <commitlab_engine.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#if FAULT == 9
#define commitlab_engine_plugin applog_table
#include "../../../examples/applog.c"
#undef commitlab_engine_plugin

static struct cl_engine_plugin wrapped;
static int (*applog_open)(struct cl_engine_db *);
static int (*applog_commit)(struct cl_engine_conn *);
static int segv_at, armed = -1;
static char mark[4200];

/* The mark in the parent directory counts the processes that committed. */
static int segv_open(struct cl_engine_db *db)
{
    snprintf(mark, sizeof mark, "%s/../applog_segv.mark", db->path);
    return applog_open(db);
}

/* A process's first commit adds one byte to the mark; the fourth process
 * to commit, and every later one, is armed. */
static int segv_commit(struct cl_engine_conn *c)
{
    if (armed < 0) {
        struct stat st;
        int fd = open(mark, O_WRONLY | O_CREAT | O_APPEND, 0644);
        armed = fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= 3;
        if (fd >= 0) {
            if (write(fd, "x", 1) != 1)
                armed = 0;
            close(fd);
        }
    }
    if (armed > 0 && __atomic_add_fetch(&segv_at, 1, __ATOMIC_RELAXED) == 20)
        raise(SIGSEGV);
    return applog_commit(c);
}

const struct cl_engine_plugin *commitlab_engine_plugin(void)
{
    wrapped = *applog_table();
    applog_open = wrapped.open;
    applog_commit = wrapped.commit;
    wrapped.open = segv_open;
    wrapped.commit = segv_commit;
    wrapped.name = "applog_segv";
    return &wrapped;
}
#else

static int commits;
#if FAULT == 10
static int data_fd = -1;
#endif

#if FAULT == 11
static int exit_status(void)
{
    const char *s = getenv("FAULTY_EXIT_STATUS");
    return s ? atoi(s) : 0;
}

__attribute__((constructor)) static void exit_on_load(void)
{
    const char *n = getenv("FAULTY_EXIT_LOAD"), *loads = getenv("FAULTY_LOADS");
    struct stat st;
    if (!n || !loads)
        return;
    int fd = open(loads, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || fstat(fd, &st) != 0 || write(fd, "x", 1) != 1)
        abort();
    close(fd);
    if (st.st_size + 1 != atoi(n))
        return;
    if (getenv("FAULTY_QUICK_EXIT"))
        quick_exit(exit_status());
    exit(exit_status());
}
#elif FAULT == 12
__attribute__((constructor)) static void chatter_on_load(void)
{
    printf("faulty12: hello from the constructor\n");
}
#endif

static int f_open(struct cl_engine_db *db)
{
#if FAULT == 11
    if (getenv("FAULTY_EXIT_OPEN"))
        exit(exit_status());
#elif FAULT == 12
    printf("faulty12: hello from open\n");
    fflush(stdout);
#endif
#if FAULT == 4
    CL_ENGINE_ERRF(db->err, "faulty: the disk at %s is on fire", db->path);
    return CL_ENGINE_ERR;
#elif FAULT == 10
    /* one file of the directory, a page of it written, that each commit
     * copies 16 bytes within */
    char path[4200], page[4096] = {0};
    snprintf(path, sizeof path, "%s/data", db->path);
    data_fd = open(path, O_RDWR | O_CREAT, 0644);
    if (data_fd < 0 || pwrite(data_fd, page, sizeof page, 0) != (ssize_t)sizeof page) {
        CL_ENGINE_ERRF(db->err, "faulty: %.200s: %s", path, strerror(errno));
        return CL_ENGINE_ERR;
    }
    return CL_ENGINE_OK;
#else
    (void)db;
    return CL_ENGINE_OK;
#endif
}
static void f_close(struct cl_engine_db *db)
{
    (void)db;
#if FAULT == 10
    close(data_fd);
    data_fd = -1;
#endif
}
static int f_conn_open(struct cl_engine_conn *c) { (void)c; return CL_ENGINE_OK; }
static void f_conn_close(struct cl_engine_conn *c) { (void)c; }
static int f_begin(struct cl_engine_conn *c, int rdonly) { (void)c, (void)rdonly; return CL_ENGINE_OK; }
static int f_put(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    (void)c, (void)k, (void)kl, (void)v, (void)vl;
    return CL_ENGINE_OK;
}
static int f_get(struct cl_engine_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    (void)c, (void)k, (void)kl, (void)buf, (void)cap, (void)vl;
    return CL_ENGINE_NOTFOUND;
}
static int f_del(struct cl_engine_conn *c, const void *k, size_t kl) { (void)c, (void)k, (void)kl; return CL_ENGINE_OK; }
static int f_commit(struct cl_engine_conn *c)
{
    (void)c;
#if FAULT == 5
    if (__atomic_add_fetch(&commits, 1, __ATOMIC_RELAXED) == 50)
        raise(SIGSEGV);
#elif FAULT == 10
    loff_t from = 0, to = 4096 + 16 * (loff_t)__atomic_fetch_add(&commits, 1, __ATOMIC_RELAXED);
    if (copy_file_range(data_fd, &from, data_fd, &to, 16, 0) < 0) {
        CL_ENGINE_ERRF(c->err, "faulty: copy_file_range: %s", strerror(errno));
        return CL_ENGINE_ERR;
    }
#else
    (void)commits;
#endif
    return CL_ENGINE_OK;
}
static void f_abort(struct cl_engine_conn *c) { (void)c; }

static const struct cl_engine_accept rows[] = {
    CL_ENGINE_MAPS("sync", "commit", "nothing at all", CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER),
#if FAULT == 8
    CL_ENGINE_MAPS("wal-compression", NULL, "a knob commitlab has not", 0),
#endif
    CL_ENGINE_END,
};

#if FAULT == 13
static int f_commit_async(struct cl_engine_conn *c, cl_engine_done_fn *done, void *arg)
{
    (void)c;
    done(arg, CL_ENGINE_OK, NULL);
    return CL_ENGINE_OK;
}
#endif

static const struct cl_engine_plugin table = {
    .abi_version = FAULT == 1 ? 99 : CL_ENGINE_ABI_VERSION,
    .size = FAULT == 2 ? 16 : sizeof(struct cl_engine_plugin),
    .name = "faulty",
    .flags = FAULT == 7 ? 0 : CL_ENGINE_RMW,
    .accepts = rows,
    .open = f_open,
    .close = f_close,
    .conn_open = f_conn_open,
    .conn_close = f_conn_close,
    .begin = f_begin,
    .put = f_put,
    .get = f_get,
    .del = f_del,
    .commit = f_commit,
    .abort = f_abort,
#if FAULT == 13
    .commit_async = f_commit_async,
#endif
};

#if FAULT == 3
const struct cl_engine_plugin *not_the_entry_point(void) { return &table; }
#else
const struct cl_engine_plugin *commitlab_engine_plugin(void)
{
#if FAULT == 6
    raise(SIGSEGV);
#elif FAULT == 12
    static const char hello[] = "faulty12: hello from the entry point\n";
    if (write(1, hello, sizeof hello - 1) < 0)
        return NULL;
#endif
    return &table;
}
#endif
#endif /* FAULT != 9 */
