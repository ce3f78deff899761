/*
 * crash_kill.c -- one process crash (`commitlab crash --mode kill`): a
 * child process opens a fresh database on the real file system and runs
 * the crash workload with several clients, sending every acknowledgement
 * to the parent through a pipe as soon as the engine gives it; the parent
 * SIGKILLs the child at a random moment, then a second child opens the
 * database (recovery) and checks it against the acknowledgements the
 * parent received.
 *
 * A process crash is not a power failure: the kernel's page cache
 * survives the process, so whatever an engine had handed to the kernel
 * (write, or a store to a shared mapping) is still there for the next
 * open.  Only what the engine still held in its own memory is lost.  So a
 * policy that acknowledges after write() but before any sync (commitlab's
 * none, LMDB's MDB_NOSYNC) loses nothing here and loses acknowledged
 * commits in a simulated power failure (--mode sim).
 *
 * Both the workload and the check run in children, so the parent never
 * loads an engine's state: a store that starts background threads (RocksDB)
 * is never forked with them.  An engine that crashes by itself (a signal
 * other than the campaign's SIGKILL, in the committing child or in
 * recovery) is a failure named with its signal, never counted as a loss.
 *
 * A server engine (PostgreSQL: crash_server_engine) commits in the
 * server's processes, not the child's: the kill is the child's and, at
 * once, every process of the server's cluster (bench_postgres_kill), so
 * what the server held in its shared memory (unwritten WAL under
 * synchronous_commit=off) is gone as the child's memory is; recovery
 * starts the server again in the cluster the crash left (crash
 * recovery), and the check reads it through it.  Having committed
 * everything, the child says so and waits, as under --mode cut: a crash
 * that does not fall while clients commit falls before the server's
 * orderly shutdown, never after it.
 *
 * --mode cut (crash_cut_one) adds the power failure: once the engine has
 * opened its database the child arms the undo journal
 * (bench/interpose/cut_journal.c) in <dir>.cut; having committed everything
 * it says so and waits, so the cut also falls before the engine's close;
 * after the kill crash_cut.c rolls the directory back to its last synced
 * state, and only then does the second child recover and check.  For a
 * server the child first makes the journal for the server's account and
 * starts the server with the interposer preloaded (cut_server_prepare),
 * so that every process of the server journals into it once the child
 * arms it; the recovery's server starts without it.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "crash.h"
#include "cut_journal.h"
#include "ut_clock.h"
#include "ut_file.h"
#include "ut_scratch.h"

/* One message on the pipe; smaller than PIPE_BUF, so each write is atomic
 * even with every client thread writing. */
enum { MSG_READY = 1, MSG_ACK, MSG_ERROR, MSG_DONE };
struct msg {
    uint32_t kind;
    uint32_t client;
    uint64_t n;
    char text[240];
};

static void send_msg(int fd, uint32_t kind, uint32_t client, uint64_t n, const char *text)
{
    struct msg m = {.kind = kind, .client = client, .n = n};
    if (text)
        snprintf(m.text, sizeof m.text, "%.*s", (int)sizeof m.text - 1, text);
    ssize_t w;
    do
        w = write(fd, &m, sizeof m);
    while (w < 0 && errno == EINTR);
}

struct kill_client {
    struct bench_conn conn;
    const struct crash_config *c;
    int fd;
    pthread_t th;
};

/* A pipelined commit acknowledged durable: the parent learns it. */
static void kill_ack(void *arg, uint64_t n)
{
    struct kill_client *cl = arg;
    send_msg(cl->fd, MSG_ACK, cl->conn.id, n, NULL); /* told: acknowledged */
}

static void *client_main(void *arg)
{
    struct kill_client *cl = arg;
    unsigned id = cl->conn.id;
    if (cl->conn.db->drv->conn_open(&cl->conn)) {
        send_msg(cl->fd, MSG_ERROR, id, 0, cl->conn.err);
        return NULL;
    }
    struct crash_pipe p;
    int piped = cl->c->pipeline > 1 && crash_pipe_init(&p, cl->c->pipeline, kill_ack, cl) == 0;
    for (uint64_t n = 1; n <= cl->c->txns; n++) {
        if (piped) {
            int rc = crash_pipe_txn(&p, &cl->conn, cl->c->workload, id, n);
            if (rc == BENCH_RETRY) {
                n--;
                continue;
            }
            if (rc) {
                send_msg(cl->fd, MSG_ERROR, id, n, cl->conn.err);
                break;
            }
            continue;
        }
        int rc = crash_txn(&cl->conn, cl->c->workload, id, n);
        if (rc == BENCH_RETRY) { /* nothing of it happened: run it again */
            n--;
            continue;
        }
        if (rc) {
            send_msg(cl->fd, MSG_ERROR, id, n, cl->conn.err);
            break;
        }
        send_msg(cl->fd, MSG_ACK, id, n, NULL); /* told: acknowledged */
    }
    if (piped) {
        crash_pipe_drain(&p, &cl->conn);
        crash_pipe_free(&p);
    }
    cl->conn.db->drv->conn_close(&cl->conn);
    return NULL;
}

/* The interposer as a library (CUT_PRELOAD_NAME): beside this program,
 * or where it is installed.  0 with its path in out, or -1. */
static int cut_preload_path(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(out, len, "%.4000s/" CUT_PRELOAD_NAME, exe);
            if (access(out, R_OK) == 0)
                return 0;
        }
    }
#ifdef CL_CUT_PRELOAD_INSTALLED
    snprintf(out, len, "%s", CL_CUT_PRELOAD_INSTALLED);
    if (access(out, R_OK) == 0)
        return 0;
#endif
    return -1;
}

/* A server's cut, before the server starts: the journal made for its
 * account, the interposer copied beside it (where that account can read
 * it), and both named in the environment the server starts with
 * (LD_PRELOAD, CUT_ENV), which its processes inherit.  0, or -1 with one
 * line in err. */
static int cut_server_prepare(const struct crash_config *c, const struct bench_config *bc, const char *jdir, char *err,
                              size_t len)
{
    char lib[PATH_MAX + 64], real[PATH_MAX], copy[PATH_MAX + 64], env[2 * PATH_MAX + 64];
    uid_t uid;
    gid_t gid;
    if (cut_preload_path(lib, sizeof lib)) {
        snprintf(err, len, "no " CUT_PRELOAD_NAME " beside this program to preload into the server's processes");
        return -1;
    }
    if (bench_postgres_account(bc, &uid, &gid, err, len))
        return -1;
    if (!realpath(jdir, real)) {
        snprintf(err, len, "%.100s: %s", jdir, strerror(errno));
        return -1;
    }
    if (bench_cut_prepare(real, c->cut_max, 1, uid, gid, err, len))
        return -1;
    snprintf(copy, sizeof copy, "%.4000s/" CUT_PRELOAD_NAME, real);
    int rc = ut_copy_file(lib, copy);
    if (rc || chmod(copy, 0644)) {
        snprintf(err, len, "%.100s: %s", copy, strerror(rc ? -rc : errno));
        return -1;
    }
    const char *old = getenv("LD_PRELOAD");
    snprintf(env, sizeof env, "%s%s%s", copy, old && *old ? ":" : "", old ? old : "");
    if (setenv("LD_PRELOAD", env, 1) || setenv(CUT_ENV, real, 1)) {
        snprintf(err, len, "setenv: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* The child that commits; never returns.  jdir: the cut's journal, or NULL. */
static void __attribute__((noreturn)) run_child(const struct crash_config *c, const struct bench_config *bc,
                                                int fd, const char *jdir)
{
    struct bench_db db = {.drv = c->drv, .cfg = bc};
    struct kill_client cls[CRASH_MAX_CLIENTS];
    snprintf(db.path, sizeof db.path, "%s", bc->dir);
    char err[200];
    if (jdir && crash_server_engine(c) && cut_server_prepare(c, bc, jdir, err, sizeof err)) {
        send_msg(fd, MSG_ERROR, 1, 0, err); /* cannot be cut here: n/a */
        _exit(3);
    }
    int rc = c->drv->open(&db);
    if (rc) {
        send_msg(fd, MSG_ERROR, rc == BENCH_NA ? 1 : 0, 0, db.err);
        _exit(3);
    }
    if (jdir && bench_cut_arm(bc->dir, jdir, c->cut_max, c->drv->plugin ? c->drv->plugin->shared_memory : NULL,
                              err, sizeof err)) {
        send_msg(fd, MSG_ERROR, 1, 0, err); /* cannot be cut here: n/a */
        _exit(3);
    }
    send_msg(fd, MSG_READY, 0, 0, NULL);
    for (unsigned i = 0; i < c->clients; i++) {
        cls[i] = (struct kill_client){.conn = {.db = &db, .id = i}, .c = c, .fd = fd};
        pthread_create(&cls[i].th, NULL, client_main, &cls[i]);
    }
    for (unsigned i = 0; i < c->clients; i++)
        pthread_join(cls[i].th, NULL);
    if (jdir ||
        crash_server_engine(c)) { /* the power fails, or the server dies, after the last commit, before the close */
        send_msg(fd, MSG_DONE, 0, 0, NULL);
        for (;;)
            pause();
    }
    c->drv->close(&db);
    _exit(0);
}

/* Recovery and the check, in a child; the outcome comes back on a pipe. */
static void recover_and_check(const struct crash_config *c, const struct bench_config *bc,
                              const struct crash_witness *w, struct crash_outcome *o)
{
    int fds[2];
    if (pipe(fds)) {
        o->recovery_failed = 1;
        snprintf(o->why, sizeof o->why, "pipe: %s", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        struct bench_db db = {.drv = c->drv, .cfg = bc};
        snprintf(db.path, sizeof db.path, "%s", bc->dir);
        double t0 = ut_now();
        int rc = c->drv->open(&db);
        o->recovery_ms = (ut_now() - t0) * 1e3;
        if (rc) {
            o->recovery_failed = 1;
            snprintf(o->why, sizeof o->why, "recovery failed: %.180s", db.err);
        } else {
            crash_check(&db, c, w, o);
            c->drv->close(&db);
        }
        ssize_t n = write(fds[1], o, sizeof *o);
        _exit(n == (ssize_t)sizeof *o ? 0 : 1);
    }
    close(fds[1]);
    struct crash_outcome r;
    size_t got = pid > 0 ? ut_read_full(fds[0], &r, sizeof r) : 0;
    close(fds[0]);
    int st = 0;
    if (pid > 0)
        waitpid(pid, &st, 0);
    if (got == sizeof r) {
        int mid_run = o->mid_run;
        *o = r;
        o->mid_run = mid_run;
        return;
    }
    o->recovery_failed = 1;
    if (pid < 0)
        snprintf(o->why, sizeof o->why, "fork: %s", strerror(errno));
    else if (WIFSIGNALED(st))
        snprintf(o->why, sizeof o->why, "the engine died of signal %d (%s) in recovery or the check after it",
                 WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(o->why, sizeof o->why, "recovery or the check exited %d without an outcome", WEXITSTATUS(st));
}

/* Reads one message, waiting until deadline_ns (0: forever).  1: a
 * message; 0: the deadline passed; -1: end of file (the child is gone). */
static int read_msg(int fd, struct msg *m, uint64_t deadline_ns)
{
    while (deadline_ns) { /* wait for the first byte, at most until the deadline */
        uint64_t now = ut_now_ns();
        if (now >= deadline_ns)
            return 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        uint64_t left = deadline_ns - now;
        struct timespec ts = {.tv_sec = (time_t)(left / 1000000000u), .tv_nsec = (long)(left % 1000000000u)};
        int r = ppoll(&p, 1, &ts, NULL);
        if (r == 0)
            return 0;
        if (r > 0)
            break;
        if (errno != EINTR)
            return -1;
    }
    return ut_read_full(fd, m, sizeof *m) == sizeof *m ? 1 : -1;
}

/* The power failure after the kill: the directory back to its synced
 * state; 0, or 1 with the outcome failed (o->cut_failed and why). */
static int cut_after_kill(const char *dir, const char *jdir, int uring, struct crash_outcome *o)
{
    struct crash_cut_stats st;
    char why[sizeof o->why];
    if (crash_cut_rollback(dir, jdir, uring, &st, why, sizeof why) == 0)
        return 0;
    o->cut_failed = 1;
    snprintf(o->why, sizeof o->why, "%s", why);
    return 1;
}

static int crash_one(const struct crash_config *c, uint64_t seed, uint64_t span, const char *dir,
                     struct crash_outcome *o, uint64_t *cal, int cut)
{
    struct bench_config bc;
    struct crash_witness w;
    char jdir[4400];
    int fds[2];

    memset(o, 0, sizeof *o);
    memset(&w, 0, sizeof w);
    crash_bench_config(c, dir, &bc);
    if (bench_engine_check(c->drv, &bc, o->na_why, sizeof o->na_why) ||
        (cut && crash_cut_check(c, o->na_why, sizeof o->na_why))) {
        o->na = 1;
        return 1;
    }
    snprintf(jdir, sizeof jdir, "%s.cut", dir);
    int mrc = ut_scratch_reset(dir, "crash"); /* only ever over a directory of its own */
    if (!mrc && cut)
        mrc = ut_scratch_reset(jdir, "crash");
    if (mrc) {
        snprintf(o->na_why, sizeof o->na_why, "%.100s: %s", mrc == -EPERM || !cut ? dir : jdir,
                 mrc == -EPERM ? "exists and was not made by commitlab crash" : strerror(-mrc));
        o->na = 1;
        return 1;
    }
    if (pipe(fds)) {
        snprintf(o->na_why, sizeof o->na_why, "pipe: %s", strerror(errno));
        o->na = 1;
        return 1;
    }
    if (crash_server_engine(c))
        bench_postgres_adopt(); /* the server outlives the child killed below: its processes are reaped here */
    fflush(NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        snprintf(o->na_why, sizeof o->na_why, "fork: %s", strerror(errno));
        o->na = 1;
        close(fds[0]);
        close(fds[1]);
        return 1;
    }
    if (pid == 0) {
        close(fds[0]);
        /* it waits for the kill after its last commit: never past the campaign's own end */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(3);
        run_child(c, &bc, fds[1], cut ? jdir : NULL);
    }
    close(fds[1]);

    struct msg m;
    int r, ready = 0, killed = 0, done = 0, uring = 0, server = crash_server_engine(c);
    uint64_t t_ready = 0, t_done = 0, deadline = 0;
    char err[240] = "";
    while ((r = read_msg(fds[0], &m, deadline)) != -1) {
        if (r == 0 || (m.kind == MSG_DONE && !killed)) { /* the moment drawn, or the end: the process dies here */
            if (r && m.kind == MSG_DONE) {
                done = 1;
                t_done = ut_now_ns();
            }
            if (cut)
                uring = crash_cut_uses_uring(pid);
            kill(pid, SIGKILL);
            if (server) /* the server's processes die with the clients */
                bench_postgres_kill(dir);
            killed = 1;
            deadline = 0;
            continue;
        }
        if (m.kind == MSG_READY) {
            ready = 1;
            t_ready = ut_now_ns();
            if (span)
                deadline = t_ready + crash_mix(seed) % span;
        } else if (m.kind == MSG_ACK && m.client < CRASH_MAX_CLIENTS) {
            if (m.n > w.acked[m.client])
                w.acked[m.client] = m.n;
        } else if (m.kind == MSG_ERROR && !err[0]) {
            snprintf(err, sizeof err, "%s", m.text);
            if (!ready && m.client == 1) /* BENCH_NA from open */
                o->na = 1;
        }
    }
    uint64_t t_end = done ? t_done : ut_now_ns();
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    if (server && bench_postgres_kill(dir)) { /* one the child left running: it died, or exited before its close */
        o->recovery_failed = 1;
        snprintf(o->why, sizeof o->why, "a process of the killed server outlived SIGKILL by 10 s");
        return 0;
    }
    if (!ready && (o->na || !(WIFSIGNALED(st) || err[0]))) { /* n/a from open, or nothing said */
        snprintf(o->na_why, sizeof o->na_why, "%s: %.160s", cut ? "open, or arming the cut" : "open",
                 err[0] ? err : "the child exited before opening");
        o->na = 1;
        if (cut)
            ut_scratch_remove(jdir);
        return 1;
    }
    if (!ready) { /* open failed, or the engine crashed in it: the engine's failure */
        o->recovery_failed = 1;
        if (WIFSIGNALED(st))
            snprintf(o->why, sizeof o->why, "the engine died of signal %d (%s) opening a fresh store, before any commit",
                     WTERMSIG(st), strsignal(WTERMSIG(st)));
        else
            snprintf(o->why, sizeof o->why, "open of a fresh store failed: %.150s", err);
        return 0;
    }
    if (cal)
        *cal = t_end - t_ready;
    /* A kill that landed after the child had exited (or, cut, after it
     * said it was done) is a crash after the last commit, as in sim mode. */
    o->mid_run = killed && !done && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) { /* its own crash, not the campaign's kill */
        o->recovery_failed = 1;
        snprintf(o->why, sizeof o->why, "the engine died of signal %d (%s) while committing, before the kill: a "
                 "crash of the engine, not counted as lost commits", WTERMSIG(st), strsignal(WTERMSIG(st)));
        if (cut)
            ut_scratch_remove(jdir);
        return 0;
    }
    if (cut) {
        int failed = cut_after_kill(dir, jdir, uring, o);
        if (!c->keep_crashed) /* a replay keeps the journal beside the directory */
            ut_scratch_remove(jdir);
        if (failed)
            return 0;
    }
    if (!killed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        o->recovery_failed = 1;
        snprintf(o->why, sizeof o->why, "the committing process failed before the kill: %.140s",
                 err[0] ? err : "no message");
        return 0;
    }
    char kept[4400];
    if (c->keep_crashed && crash_keep_copy(dir, kept, sizeof kept))
        fprintf(stderr, "commitlab crash: could not keep a copy of %s before recovery\n", dir);
    for (unsigned i = 0; i < c->clients; i++)
        /* begun: up to one (or, pipelined, pipeline) past the last acknowledged */
        w.attempted[i] = w.acked[i] + (c->pipeline > 1 ? c->pipeline : 1) < c->txns
                             ? w.acked[i] + (c->pipeline > 1 ? c->pipeline : 1)
                             : c->txns;
    recover_and_check(c, &bc, &w, o);
    return 0;
}

int crash_kill_one(const struct crash_config *c, uint64_t seed, uint64_t span, const char *dir,
                   struct crash_outcome *o, uint64_t *cal)
{
    return crash_one(c, seed, span, dir, o, cal, 0);
}

int crash_cut_one(const struct crash_config *c, uint64_t seed, uint64_t span, const char *dir,
                  struct crash_outcome *o, uint64_t *cal)
{
    return crash_one(c, seed, span, dir, o, cal, 1);
}
