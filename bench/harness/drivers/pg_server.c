/*
 * pg_server.c -- a private PostgreSQL server for one benchmark run
 * (pg_server.h): the binaries, the account it runs as, the templates,
 * starting and stopping, the leftover of a killed command, and the
 * checks before a command's first run (bench_postgres_preflight).
 *
 * Invariants: a server is started only in a cluster directory this file
 * copied and marked (PG_MARK); it is stopped by the run that started it
 * (pg_server_stop from the driver's close, which the run's every exit
 * path reaches, a signal's included), by this process's exit (atexit), or
 * by the next command in the same --dir (bench_postgres_reap), which
 * signals a postmaster only when its postmaster.pid is in a marked
 * directory and names that directory.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "pg_server.h"
#include "ut_scratch.h"

#define PG_CONF_INCLUDE "include = 'commitlab.conf'"

/* ---- small things ----------------------------------------------------------------------- */

static int is_file(const char *dir, const char *name)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, X_OK) == 0;
}

static int has_server(const char *dir)
{
    return is_file(dir, "postgres") && is_file(dir, "initdb") && is_file(dir, "pg_ctl");
}

/* The last lines of a log, on one line ("...; ...; ..."). */
static void log_tail(const char *path, char *out, size_t len)
{
    char buf[4096];
    FILE *f = fopen(path, "r");
    out[0] = 0;
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long end = ftell(f);
    fseek(f, end > (long)sizeof buf - 1 ? end - (long)sizeof buf + 1 : 0, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* the last three non-empty lines */
    const char *lines[3] = {0};
    size_t lens[3] = {0};
    for (char *p = buf; *p;) {
        size_t l = strcspn(p, "\n");
        if (l) {
            memmove(lines, lines + 1, 2 * sizeof *lines);
            memmove(lens, lens + 1, 2 * sizeof *lens);
            lines[2] = p;
            lens[2] = l;
        }
        p += l + (p[l] == '\n');
    }
    size_t o = 0;
    for (int i = 0; i < 3; i++) {
        if (!lines[i] || o >= len)
            continue;
        /* without the log line's prefix ("2026-01-01 00:00:00.000 UTC [123] ") */
        const char *b = lines[i], *e = memchr(b, ']', lens[i]);
        size_t l = lens[i];
        if (isdigit((unsigned char)b[0]) && e && (size_t)(e - b) + 2 <= l && e[1] == ' ') {
            l -= (size_t)(e + 2 - b);
            b = e + 2;
        }
        o += (size_t)snprintf(out + o, len - o, "%s%.*s", o ? "; " : "", (int)l, b);
    }
}

/* ---- the binaries and the account --------------------------------------------------------- */

struct pg_who {
    char bindir[PATH_MAX];
    int drop; /* root: run the tools as uid/gid */
    uid_t uid;
    gid_t gid;
    char user[64];
};

/* pg_config --bindir, without its newline; "" when there is none. */
static void pg_config_bindir(char *out, size_t len)
{
    out[0] = 0;
    FILE *p = popen("pg_config --bindir 2>/dev/null", "r");
    if (!p)
        return;
    if (fgets(out, (int)len, p))
        out[strcspn(out, "\n")] = 0;
    pclose(p);
}

/* The highest /usr/lib/postgresql/N/bin holding the server. */
static void debian_bindir(char *out, size_t len)
{
    glob_t g;
    int best = -1;
    out[0] = 0;
    if (glob("/usr/lib/postgresql/*/bin", 0, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        int v = atoi(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"));
        if (v > best && has_server(g.gl_pathv[i])) {
            best = v;
            snprintf(out, len, "%s", g.gl_pathv[i]);
        }
    }
    globfree(&g);
}

#define PG_INSTALL "apt-get install postgresql libpq-dev"

/* The binaries and the account for --pg-bindir and --pg-user (NULL or
 * "": the defaults).  0, or -1 with one line in err. */
static int who_for(const char *bindir, const char *user, struct pg_who *w, char *err, size_t len)
{
    memset(w, 0, sizeof *w);
    if (bindir && *bindir) {
        if (!has_server(bindir)) {
            snprintf(err, len, "--pg-bindir %s: no postgres, initdb and pg_ctl there", bindir);
            return -1;
        }
        snprintf(w->bindir, sizeof w->bindir, "%s", bindir);
    } else {
        pg_config_bindir(w->bindir, sizeof w->bindir);
        if (!w->bindir[0] || !has_server(w->bindir))
            debian_bindir(w->bindir, sizeof w->bindir);
        if (!w->bindir[0]) {
            snprintf(err, len,
                     "no PostgreSQL server binaries (postgres, initdb, pg_ctl) found in pg_config --bindir "
                     "or /usr/lib/postgresql/*/bin (%s, or give --pg-bindir DIR)",
                     PG_INSTALL);
            return -1;
        }
    }
    if (geteuid() != 0) {
        if (user && *user) {
            snprintf(err, len, "--pg-user %s: only root runs the server as another account", user);
            return -1;
        }
        return 0;
    }
    const char *name = user && *user ? user : "postgres";
    struct passwd *pw = getpwnam(name);
    if (!pw || pw->pw_uid == 0) {
        snprintf(err, len, "%s%s: %s; PostgreSQL refuses to run as root, so as root the server runs as that account",
                 user && *user ? "--pg-user " : "the account ", name, pw ? "is root" : "no such account");
        return -1;
    }
    w->drop = 1;
    w->uid = pw->pw_uid;
    w->gid = pw->pw_gid;
    snprintf(w->user, sizeof w->user, "%s", name);
    return 0;
}

/* Runs argv (argv[0] a path) as w's account, its output to outfd (or
 * /dev/null), in a child with no descriptor of ours but those.  Its exit
 * status, or -1. */
static int run_as(const struct pg_who *w, char *const argv[], int outfd)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(outfd >= 0 ? outfd : null, 1);
        dup2(outfd >= 0 ? outfd : null, 2);
        /* the --dir lock and every other descriptor stay ours */
#ifdef SYS_close_range
        if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
            for (int fd = 3; fd < 65536; fd++)
                close(fd);
        /* a session of its own: a terminal's ^C reaches commitlab, which
         * stops what it started, and not pg_ctl half-way through a start
         * (the postmaster it forks would live on, unnamed) */
        setsid();
        if (w->drop && (setgroups(0, NULL) || setgid(w->gid) || setuid(w->uid)))
            _exit(126);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* 0 when w's account can enter every directory above and at path; else
 * -1 with one line in err naming the first it cannot. */
static int reachable(const struct pg_who *w, const char *path, char *err, size_t len)
{
    char real[PATH_MAX], part[PATH_MAX];
    if (!w->drop)
        return 0;
    if (!realpath(path, real)) {
        snprintf(err, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    gid_t groups[64];
    int ng = 64;
    if (getgrouplist(w->user, w->gid, groups, &ng) < 0)
        ng = 0;
    for (size_t i = 1; i <= strlen(real); i++) {
        if (real[i] != '/' && real[i] != 0)
            continue;
        snprintf(part, sizeof part, "%.*s", (int)(i ? i : 1), real);
        struct stat st;
        if (stat(part, &st) != 0)
            continue;
        int in_group = st.st_gid == w->gid;
        for (int g = 0; g < ng && !in_group; g++)
            in_group = groups[g] == st.st_gid;
        int ok = st.st_uid == w->uid ? (st.st_mode & S_IXUSR) != 0
                 : in_group          ? (st.st_mode & S_IXGRP) != 0
                                     : (st.st_mode & S_IXOTH) != 0;
        if (!ok) {
            snprintf(err, len,
                     "the server runs as %s, which cannot enter %s (mode %04o): make it searchable "
                     "(chmod o+x) or choose another --dir",
                     w->user, part, (unsigned)(st.st_mode & 07777));
            return -1;
        }
    }
    return 0;
}

static char server_version[512];

void pg_server_version_init(void)
{
    struct pg_who w;
    char err[400], line[200] = "";
    if (who_for(NULL, NULL, &w, err, sizeof err)) {
        snprintf(server_version, sizeof server_version, "%s", err);
        return;
    }
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "'%.4000s/postgres' --version 2>/dev/null", w.bindir);
    FILE *p = popen(cmd, "r");
    if (p) {
        if (!fgets(line, sizeof line, p))
            line[0] = 0;
        pclose(p);
    }
    line[strcspn(line, "\n")] = 0;
    snprintf(server_version, sizeof server_version, "%.190s in %.300s", line[0] ? line : "postgres", w.bindir);
}

const char *pg_server_version(void)
{
    return server_version;
}

/* ---- the templates -------------------------------------------------------------------- */

uint64_t pg_segment_size(const struct cl_engine_config *cfg)
{
    return cl_engine_given(cfg, "segment-size") ? cl_engine_u64(cfg, "segment-size") : 16u << 20;
}

unsigned pg_segment_mb(uint64_t b)
{
    uint64_t mb = b >> 20;
    if (b & ((1u << 20) - 1) || mb < 1 || mb > 1024 || (mb & (mb - 1)))
        return 0;
    return (unsigned)mb;
}

/* The templates this command made, removed when it releases its --dir
 * (bench_dirs_release) and, failing that, at its exit. */
static pthread_mutex_t tmpl_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char dir[4200];
    unsigned mb;
} tmpls[16];
static size_t ntmpls;

void bench_postgres_remove_templates(void)
{
    for (size_t i = 0; i < ntmpls; i++)
        ut_scratch_remove(tmpls[i].dir);
    ntmpls = 0;
}

/* The template cluster for mb under dir (made now when this command has
 * none): its data directory in out. */
static int template_for(const struct pg_who *w, const char *dir, unsigned mb, char *out, size_t olen, char *err,
                        size_t len)
{
    int rc = -1;
    pthread_mutex_lock(&tmpl_mu);
    for (size_t i = 0; i < ntmpls; i++)
        if (tmpls[i].mb == mb) {
            snprintf(out, olen, "%s/data", tmpls[i].dir);
            pthread_mutex_unlock(&tmpl_mu);
            return 0;
        }
    if (ntmpls == sizeof tmpls / sizeof *tmpls) {
        snprintf(err, len, "more than %zu WAL segment sizes in one command", ntmpls);
        goto out;
    }
    char t[4200], data[4300], log[4300], seg[32], user[64];
    snprintf(t, sizeof t, "%s/postgres.template-%uM", dir, mb);
    if (ut_scratch_ours(t))
        ut_scratch_remove(t); /* a killed command's: ours, and --dir is locked by this one */
    int mrc = ut_scratch_make(t, "bench");
    if (mrc) {
        snprintf(err, len, "%s: %s", t, mrc == -EEXIST ? "exists and was not made by commitlab bench" : strerror(-mrc));
        goto out;
    }
    if (!ntmpls)
        atexit(bench_postgres_remove_templates);
    snprintf(tmpls[ntmpls].dir, sizeof tmpls[ntmpls].dir, "%s", t);
    tmpls[ntmpls].mb = mb;
    ntmpls++;
    snprintf(data, sizeof data, "%s/data", t);
    snprintf(log, sizeof log, "%s/initdb.log", t);
    if (mkdir(data, 0700) || (w->drop && chown(data, w->uid, w->gid))) {
        snprintf(err, len, "%s: %s", data, strerror(errno));
        goto out;
    }
    if (reachable(w, data, err, len))
        goto out;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char initdb[PATH_MAX + 16];
    snprintf(initdb, sizeof initdb, "%s/initdb", w->bindir);
    snprintf(seg, sizeof seg, "--wal-segsize=%u", mb);
    snprintf(user, sizeof user, "--username=%s", PG_SUPERUSER);
    char *argv[] = {initdb, "-D", data, user, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", seg, NULL};
    int st = run_as(w, argv, fd);
    if (fd >= 0)
        close(fd);
    if (st != 0) {
        char tail[600];
        log_tail(log, tail, sizeof tail);
        snprintf(err, len, "initdb failed (exit %d): %s", st, tail[0] ? tail : "no output");
        goto out;
    }
    snprintf(out, olen, "%s", data);
    rc = 0;
out:
    pthread_mutex_unlock(&tmpl_mu);
    return rc;
}

/* ---- the servers running ---------------------------------------------------------------- */

static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pg_server *live[8];
static struct pg_who live_who[8];

static void stop_all_at_exit(void)
{
    for (size_t i = 0; i < sizeof live / sizeof *live; i++)
        if (live[i])
            pg_server_stop(live[i]);
}

static void track(struct pg_server *s, const struct pg_who *w, int on)
{
    static int registered;
    pthread_mutex_lock(&live_mu);
    if (!registered) {
        atexit(stop_all_at_exit);
        registered = 1;
    }
    for (size_t i = 0; i < sizeof live / sizeof *live; i++)
        if (on ? !live[i] : live[i] == s) {
            live[i] = on ? s : NULL;
            if (on)
                live_who[i] = *w;
            break;
        }
    pthread_mutex_unlock(&live_mu);
}

static int who_of(const struct pg_server *s, struct pg_who *w)
{
    int found = 0;
    pthread_mutex_lock(&live_mu);
    for (size_t i = 0; i < sizeof live / sizeof *live; i++)
        if (live[i] == s) {
            *w = live_who[i];
            found = 1;
        }
    pthread_mutex_unlock(&live_mu);
    return found;
}

static int alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Whether pid is the postmaster of the cluster in data: a live postgres
 * process whose working directory is data (a postmaster runs in its data
 * directory).  A postmaster.pid left by a server that died can name a
 * pid the system gave to another process since: that one is never
 * signalled. */
static int our_postmaster(pid_t pid, const char *data)
{
    char p[64], comm[64] = "", cwd[PATH_MAX], real[PATH_MAX];
    if (!alive(pid))
        return 0;
    snprintf(p, sizeof p, "/proc/%ld/comm", (long)pid);
    FILE *f = fopen(p, "re");
    if (f) {
        if (!fgets(comm, sizeof comm, f))
            comm[0] = 0;
        fclose(f);
    }
    snprintf(p, sizeof p, "/proc/%ld/cwd", (long)pid);
    ssize_t n = readlink(p, cwd, sizeof cwd - 1);
    if (n <= 0 || !realpath(data, real))
        return 0;
    cwd[n] = 0;
    return strncmp(comm, "postgres", 8) == 0 && strcmp(cwd, real) == 0;
}

/* This process made the reaper of the server's processes.  pg_ctl
 * starts the postmaster as a daemon, so when it dies it is reparented to
 * init; where init does not reap (a container's first process often
 * does not), a killed postmaster stays a zombie, which kill(pid, 0) finds
 * alive and which postmaster.pid's own check takes for a running server:
 * every kill then waits out its timeout, and the restart after it fails.
 * As their subreaper this process inherits them and wait_gone reaps them. */
void bench_postgres_adopt(void)
{
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* Waits up to secs for pid to go, reaping it when it is this process's
 * child (see bench_postgres_adopt); 1 when it went. */
static int wait_gone(pid_t pid, double secs)
{
    for (int i = 0; i < (int)(secs * 100); i++) {
        waitpid(pid, NULL, WNOHANG);
        if (!alive(pid))
            return 1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    waitpid(pid, NULL, WNOHANG);
    return !alive(pid);
}

/* The pid and data directory of dir/postmaster.pid; 0 when there is none. */
static pid_t postmaster_of(const char *dir, char *data, size_t len)
{
    char p[4200], line[4200];
    snprintf(p, sizeof p, "%.4000s/postmaster.pid", dir);
    FILE *f = fopen(p, "r");
    pid_t pid = 0;
    if (!f)
        return 0;
    if (fgets(line, sizeof line, f))
        pid = (pid_t)atol(line);
    if (data && fgets(data, (int)len, f))
        data[strcspn(data, "\n")] = 0;
    fclose(f);
    return pid;
}

/* Removes a socket directory of our own under /tmp (its lock files). */
static void remove_sockdir(const char *d)
{
    if (strncmp(d, "/tmp/commitlab-pg-", 18) != 0)
        return;
    DIR *dh = opendir(d);
    struct dirent *e;
    while (dh && (e = readdir(dh)))
        if (strncmp(e->d_name, ".s.PGSQL.", 9) == 0) {
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", d, e->d_name);
            unlink(p);
        }
    if (dh)
        closedir(dh);
    rmdir(d);
}

/* ---- start and stop ---------------------------------------------------------------------- */

/* 'value' as postgresql.conf quotes it. */
static void conf_quote(FILE *f, const char *v)
{
    fputc('\'', f);
    for (; *v; v++) {
        if (*v == '\'' || *v == '\\')
            fputc(*v, f);
        fputc(*v, f);
    }
    fputc('\'', f);
}

/* The run's settings, in commitlab.conf beside postgresql.conf, which
 * includes it (the include added once): rewritten whole at every start,
 * so a cluster started again (--reuse, --verify) runs with this run's
 * settings and none of an earlier run's -- fsync=off of a --sync none run
 * must not outlive it. */
static int write_conf(const struct pg_server *s, const struct cl_engine_config *cfg, const char *settings)
{
    char p[4200], line[4200];
    int included = 0;
    snprintf(p, sizeof p, "%s/postgresql.conf", s->data);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        included |= strcmp(line, PG_CONF_INCLUDE "\n") == 0;
    fclose(f);
    if (!included) {
        if (!(f = fopen(p, "a")))
            return -1;
        fprintf(f, "\n# the settings of commitlab's run, rewritten at each start\n" PG_CONF_INCLUDE "\n");
        if (fclose(f))
            return -1;
    }
    snprintf(p, sizeof p, "%s/commitlab.conf", s->data);
    if (!(f = fopen(p, "w")))
        return -1;
    fchmod(fileno(f), 0644); /* the server's account reads it, whoever wrote it, whatever the umask */
    fprintf(f,
            "\n# commitlab bench: a private server on a Unix socket only\nlisten_addresses = ''\nport = %d\n"
            "unix_socket_directories = ",
            s->port);
    conf_quote(f, s->sockdir);
    uint64_t clients = cl_engine_u64(cfg, "clients");
    fprintf(f, "\nmax_connections = %llu\n# the run's settings (a later one wins)\n",
            (unsigned long long)(clients + 10 > 100 ? clients + 10 : 100));
    for (const char *q = settings; *q;) {
        size_t n = strcspn(q, "\n"), e = strcspn(q, "=");
        if (e < n) {
            fprintf(f, "%.*s = ", (int)e, q);
            char v[1024];
            snprintf(v, sizeof v, "%.*s", (int)(n - e - 1), q + e + 1);
            conf_quote(f, v);
            fputc('\n', f);
        }
        q += n + (q[n] == '\n');
    }
    /* the checkpoints' lines on the server's stderr, which pg_ctl -l
     * writes to commitlab-server.log: the driver counts the segments
     * they recycled and removed (--pg-set may not change these) */
    fprintf(f, "# what commitlab reads from the server's log\nlog_checkpoints = on\nlogging_collector = off\n"
               "log_destination = 'stderr'\n");
    return fclose(f) ? -1 : 0;
}

/* Copies the template to s->data (cp -a keeps its owner and modes) and
 * marks it. */
static int copy_template(const struct pg_who *w, const char *tmpl, struct pg_server *s, char *err, size_t len)
{
    struct pg_who self = *w;
    self.drop = 0;
    char cp[] = "/bin/cp", a[] = "-a";
    char *argv[] = {cp, a, (char *)tmpl, s->data, NULL};
    int st = run_as(&self, argv, -1);
    if (st != 0) {
        snprintf(err, len, "cp -a %s %s: exit %d", tmpl, s->data, st);
        return -1;
    }
    char p[4300];
    snprintf(p, sizeof p, "%s/" PG_MARK, s->data);
    FILE *f = fopen(p, "w");
    if (!f || fprintf(f, "%s\n", s->sockdir) < 0 || fclose(f)) {
        snprintf(err, len, "%s: %s", p, strerror(errno));
        return -1;
    }
    int fd = open(s->data, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) { /* the copy on disk before the run measures anything */
        syncfs(fd);
        close(fd);
    }
    return 0;
}

/* The preflight's trial server is thrown away with its directory: no
 * shutdown checkpoint for it (-m immediate). */
static int discarding;

static int pg_ctl(const struct pg_who *w, const struct pg_server *s, const char *what, int outfd)
{
    char bin[PATH_MAX + 16], log[4300];
    snprintf(bin, sizeof bin, "%s/pg_ctl", w->bindir);
    snprintf(log, sizeof log, "%s/commitlab-server.log", s->data);
    char D[] = "-D", l[] = "-l", m[] = "-m", fast[] = "fast", immediate[] = "immediate", wait[] = "-w", t[] = "-t",
         secs[] = "60", q[] = "-s";
    if (strcmp(what, "start") == 0) {
        char *argv[] = {bin, wait, t, secs, q, D, (char *)s->data, l, log, (char *)what, NULL};
        return run_as(w, argv, outfd);
    }
    char *argv[] = {bin, wait, t, secs, q, D, (char *)s->data, m, discarding ? immediate : fast, (char *)what, NULL};
    return run_as(w, argv, outfd);
}

int pg_server_start(struct pg_server *s, const struct cl_engine_config *cfg, const char *run_dir, const char *settings,
                    char *err, size_t len)
{
    struct pg_who w;
    char tmpl[4400], real[PATH_MAX];
    memset(s, 0, sizeof *s);
    bench_postgres_adopt();
    if (who_for(cl_engine_str(cfg, "pg-bindir"), cl_engine_str(cfg, "pg-user"), &w, err, len))
        return -1;
    unsigned mb = pg_segment_mb(pg_segment_size(cfg));
    if (!mb) {
        snprintf(err, len, "--segment-size: initdb --wal-segsize takes whole MiB, a power of two from 1M to 1G");
        return -1;
    }
    if (template_for(&w, cl_engine_str(cfg, "dir"), mb, tmpl, sizeof tmpl, err, len))
        return -1;
    if (!realpath(run_dir, real)) {
        snprintf(err, len, "%s: %s", run_dir, strerror(errno));
        return -1;
    }
    snprintf(s->data, sizeof s->data, "%.4000s/cluster", real);
    s->port = 20000 + (int)(getpid() % 20000);
    /* sun_path holds 107 bytes and a NUL: "DIR/.s.PGSQL.PORT" */
    if (strlen(s->data) + strlen("/.s.PGSQL.65535") > 107) {
        snprintf(s->sockdir, sizeof s->sockdir, "/tmp/commitlab-pg-XXXXXX");
        if (!mkdtemp(s->sockdir) || (w.drop && chown(s->sockdir, w.uid, w.gid))) {
            snprintf(err, len, "mkdtemp %s: %s", s->sockdir, strerror(errno));
            return -1;
        }
        s->tmp_sockdir = 1;
    } else {
        snprintf(s->sockdir, sizeof s->sockdir, "%s", s->data);
    }
    char mark[4200];
    snprintf(mark, sizeof mark, "%.4000s/" PG_MARK, s->data);
    if (access(mark, F_OK) == 0) {
        /* a cluster this command or an earlier one made here (--verify's
         * reopening, --reuse): that one again, its server stopped first if a
         * killed command left it running */
        bench_postgres_reap(run_dir);
        FILE *f = fopen(mark, "w");
        if (!f || fprintf(f, "%s\n", s->sockdir) < 0 || fclose(f)) {
            snprintf(err, len, "%s: %s", mark, strerror(errno));
            goto fail;
        }
    } else if (copy_template(&w, tmpl, s, err, len)) {
        goto fail;
    }
    if (reachable(&w, s->data, err, len))
        goto fail;
    char ctl_log[4400], srv_log[4400];
    snprintf(ctl_log, sizeof ctl_log, "%s/pg_ctl.log", run_dir);
    snprintf(srv_log, sizeof srv_log, "%s/commitlab-server.log", s->data);
    for (int attempt = 0;; attempt++) {
        if (write_conf(s, cfg, settings)) {
            snprintf(err, len, "%s/postgresql.conf: %s", s->data, strerror(errno));
            goto fail;
        }
        int fd = open(ctl_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        track(s, &w, 1); /* from here, a signal's exit path stops it */
        int st = pg_ctl(&w, s, "start", fd);
        if (fd >= 0)
            close(fd);
        s->postmaster = postmaster_of(s->data, NULL, 0);
        if (s->postmaster > 0 && !our_postmaster(s->postmaster, s->data))
            s->postmaster = 0; /* a stale postmaster.pid: not ours to signal */
        if (st == 0 && s->postmaster > 0)
            return 0;
        char tail[700];
        log_tail(srv_log, tail, sizeof tail);
        if (!tail[0])
            log_tail(ctl_log, tail, sizeof tail);
        int tmp = s->tmp_sockdir;
        s->tmp_sockdir = 0; /* the retry uses it again: removed at fail */
        pg_server_stop(s);
        s->tmp_sockdir = tmp;
        if (attempt < 3 && strstr(tail, "lock file")) { /* the port's socket taken: another */
            s->port = 20000 + (s->port - 20000 + 7919) % 20000;
            continue;
        }
        snprintf(err, len, "the server did not start (pg_ctl exit %d): %s", st, tail[0] ? tail : "no log");
        goto fail;
    }
fail:
    if (s->tmp_sockdir)
        remove_sockdir(s->sockdir);
    s->tmp_sockdir = 0;
    return -1;
}

void pg_server_stop(struct pg_server *s)
{
    struct pg_who w;
    if (!who_of(s, &w))
        return;
    if (s->postmaster <= 0)
        s->postmaster = postmaster_of(s->data, NULL, 0);
    if (s->postmaster > 0 && our_postmaster(s->postmaster, s->data)) {
        if (pg_ctl(&w, s, "stop", -1) != 0 || !wait_gone(s->postmaster, 10)) {
            kill(s->postmaster, SIGQUIT); /* immediate shutdown */
            if (!wait_gone(s->postmaster, 10))
                kill(s->postmaster, SIGKILL);
            wait_gone(s->postmaster, 10);
        }
    }
    s->postmaster = 0;
    if (s->tmp_sockdir)
        remove_sockdir(s->sockdir);
    s->tmp_sockdir = 0;
    track(s, NULL, 0);
}

/* One process's usage from /proc/PID/stat (utime, stime and, with
 * children, cutime and cstime, in ticks) and /proc/PID/status (its
 * context switches); its parent in *ppid.  0, or -1 when it cannot be
 * read (gone). */
static int proc_usage(pid_t pid, int children, pid_t *ppid, int64_t *ticks_user, int64_t *ticks_sys, struct pg_usage *u)
{
    char p[64], buf[2048];
    snprintf(p, sizeof p, "/proc/%ld/stat", (long)pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *e = strrchr(buf, ')');
    if (!e)
        return -1;
    /* after the comm: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17) */
    long long f[18] = {0};
    char st;
    if (sscanf(e + 2, "%c %lld %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld %lld %lld", &st, &f[4], &f[14], &f[15],
               &f[16], &f[17]) != 6)
        return -1;
    *ppid = (pid_t)f[4];
    *ticks_user = f[14] + (children ? f[16] : 0);
    *ticks_sys = f[15] + (children ? f[17] : 0);
    snprintf(p, sizeof p, "/proc/%ld/status", (long)pid);
    FILE *sf = fopen(p, "re");
    if (!sf)
        return -1;
    long long v;
    while (fgets(buf, sizeof buf, sf)) {
        if (sscanf(buf, "voluntary_ctxt_switches: %lld", &v) == 1)
            u->nvcsw += v;
        else if (sscanf(buf, "nonvoluntary_ctxt_switches: %lld", &v) == 1)
            u->nivcsw += v;
    }
    fclose(sf);
    return 0;
}

int pg_server_usage(const struct pg_server *s, struct pg_usage *u)
{
    *u = (struct pg_usage){0};
    if (s->postmaster <= 0)
        return -1;
    pid_t pp;
    int64_t user, sys, tu = 0, ts = 0;
    if (proc_usage(s->postmaster, 1, &pp, &tu, &ts, u) != 0) /* with the backends it has reaped */
        return -1;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t pid = (pid_t)atol(e->d_name);
        struct pg_usage c = {0};
        if (pid != s->postmaster && proc_usage(pid, 0, &pp, &user, &sys, &c) == 0 && pp == s->postmaster) {
            tu += user;
            ts += sys;
            u->nvcsw += c.nvcsw;
            u->nivcsw += c.nivcsw;
        }
    }
    if (d)
        closedir(d);
    long hz = sysconf(_SC_CLK_TCK);
    u->user_us = tu * 1000000 / hz;
    u->sys_us = ts * 1000000 / hz;
    return 0;
}

/* ---- the command's side (driver.h) ------------------------------------------------------- */

void bench_postgres_reap(const char *run_dir)
{
    char data[4200], mark[4300], real[PATH_MAX], named[4200] = "", sockdir[4200] = "";
    snprintf(data, sizeof data, "%.4100s/cluster", run_dir);
    snprintf(mark, sizeof mark, "%s/" PG_MARK, data);
    FILE *f = fopen(mark, "r");
    if (!f)
        return; /* not a cluster commitlab made: never touched */
    if (fgets(sockdir, sizeof sockdir, f))
        sockdir[strcspn(sockdir, "\n")] = 0;
    fclose(f);
    if (!realpath(data, real))
        return;
    pid_t pid = postmaster_of(data, named, sizeof named);
    if (pid > 0 && strcmp(named, real) == 0 && our_postmaster(pid, real)) {
        kill(pid, SIGINT); /* fast shutdown */
        if (!wait_gone(pid, 30)) {
            kill(pid, SIGQUIT);
            if (!wait_gone(pid, 10))
                kill(pid, SIGKILL);
            wait_gone(pid, 10);
        }
    }
    remove_sockdir(sockdir);
}

/* The processes of the server of the cluster in data (real: its real
 * path): the postmaster, and every postgres process whose parent it is
 * or whose working directory is the cluster (a backend or auxiliary
 * process runs in the data directory, also once its postmaster is gone).
 * At most max pids in out; their count. */
static size_t server_processes(pid_t postmaster, const char *real, pid_t *out, size_t max)
{
    size_t n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) && n < max) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t pid = (pid_t)atol(e->d_name), ppid = 0;
        char p[64], comm[64] = "", cwd[PATH_MAX], buf[512];
        snprintf(p, sizeof p, "/proc/%ld/stat", (long)pid);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (r <= 0)
            continue;
        buf[r] = 0;
        char *b = strchr(buf, '('), *c = strrchr(buf, ')');
        if (!b || !c || c < b)
            continue;
        snprintf(comm, sizeof comm, "%.*s", (int)(c - b - 1), b + 1);
        long pp = 0;
        if (sscanf(c + 2, "%*c %ld", &pp) == 1)
            ppid = (pid_t)pp;
        if (strncmp(comm, "postgres", 8) != 0)
            continue;
        snprintf(p, sizeof p, "/proc/%ld/cwd", (long)pid);
        ssize_t l = readlink(p, cwd, sizeof cwd - 1);
        int here = l > 0 && (cwd[l] = 0, strcmp(cwd, real) == 0);
        if (pid == postmaster || (postmaster > 0 && ppid == postmaster) || here)
            out[n++] = pid;
    }
    if (d)
        closedir(d);
    return n;
}

int bench_postgres_kill(const char *run_dir)
{
    char data[4200], mark[4300], real[PATH_MAX];
    snprintf(data, sizeof data, "%.4100s/cluster", run_dir);
    snprintf(mark, sizeof mark, "%s/" PG_MARK, data);
    if (access(mark, F_OK) != 0 || !realpath(data, real))
        return 0; /* not a cluster commitlab made: never touched */
    pid_t pm = postmaster_of(data, NULL, 0);
    if (pm > 0 && !our_postmaster(pm, real))
        pm = 0; /* a stale postmaster.pid: its children, if any, are still found by their directory */
    if (pm > 0)
        kill(pm, SIGSTOP); /* it forks no process while the others are found */
    pid_t pids[1024];
    size_t n = server_processes(pm, real, pids, sizeof pids / sizeof *pids);
    for (size_t i = 0; i < n; i++)
        kill(pids[i], SIGKILL);
    int gone = 1;
    for (size_t i = 0; i < n; i++)
        gone &= wait_gone(pids[i], 10);
    /* a process forked as the others were found: none once the postmaster is gone */
    n = server_processes(0, real, pids, sizeof pids / sizeof *pids);
    for (size_t i = 0; i < n; i++)
        kill(pids[i], SIGKILL);
    for (size_t i = 0; i < n; i++)
        gone &= wait_gone(pids[i], 10);
    return gone ? 0 : -1;
}

/* Settings --pg-set may not name: they would make the server listen on
 * the network, or read or write outside its directory. */
static int forbidden(const char *name)
{
    static const char *const names[] = {"listen_addresses",
                                        "port",
                                        "data_directory",
                                        "log_directory",
                                        "archive_command",
                                        "archive_library",
                                        "archive_mode",
                                        "restore_command",
                                        "archive_cleanup_command",
                                        "recovery_end_command",
                                        "primary_conninfo",
                                        "shared_preload_libraries",
                                        "local_preload_libraries",
                                        "session_preload_libraries",
                                        "dynamic_library_path",
                                        "ssl",
                                        "krb_server_keyfile",
                                        "bonjour",
                                        "bonjour_name",
                                        "stats_temp_directory",
                                        NULL};
    for (const char *const *n = names; *n; n++)
        if (strcmp(*n, name) == 0)
            return 1;
    size_t l = strlen(name);
    return strncmp(name, "unix_socket_", 12) == 0 || (l > 5 && strcmp(name + l - 5, "_file") == 0);
}

/* The server's setting names, one a line (postgres --describe-config). */
static char *describe_config(const struct pg_who *w)
{
    char path[] = "/tmp/commitlab-pg-config-XXXXXX", bin[PATH_MAX + 16], dc[] = "--describe-config";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    if (w->drop && fchown(fd, w->uid, w->gid)) {
        close(fd);
        unlink(path);
        return NULL;
    }
    snprintf(bin, sizeof bin, "%s/postgres", w->bindir);
    char *argv[] = {bin, dc, NULL};
    int st = run_as(w, argv, fd);
    off_t size = lseek(fd, 0, SEEK_END);
    char *text = st == 0 && size > 0 ? calloc(1, (size_t)size + 1) : NULL;
    if (text && pread(fd, text, (size_t)size, 0) != size) {
        free(text);
        text = NULL;
    }
    close(fd);
    unlink(path);
    return text;
}

/* 1 when name is the first field of a line of the description. */
static int known(const char *desc, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = desc; p && *p;) {
        if (strncmp(p, name, n) == 0 && p[n] == '\t')
            return 1;
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return 0;
}

/* Each --pg-set item: NAME=VALUE, a setting of this server, not forbidden. */
static int check_pg_set(const char *cmd, const struct pg_who *w, const char *set)
{
    char *desc = NULL;
    int rc = 0;
    for (const char *p = set; *p && !rc;) {
        size_t n = strcspn(p, ";"), e = strcspn(p, "=");
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(e < n ? e : n), p);
        for (char *c = name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        int ctl = 0;
        for (size_t i = 0; i < n; i++)
            ctl |= iscntrl((unsigned char)p[i]);
        if (e >= n || !name[0] || ctl) {
            char shown[256]; /* on one line: a control character as '?' */
            snprintf(shown, sizeof shown, "%.*s", (int)n, p);
            for (char *c = shown; *c; c++)
                if (iscntrl((unsigned char)*c))
                    *c = '?';
            fprintf(stderr, "commitlab %s: --pg-set: '%s' is not accepted; expected NAME=VALUE%s\n", cmd, shown,
                    ctl ? " on one line" : "");
            rc = 2;
        } else if (!strcmp(name, "log_checkpoints") || !strcmp(name, "logging_collector") ||
                   !strcmp(name, "log_destination")) {
            fprintf(stderr,
                    "commitlab %s: --pg-set %s: refused: commitlab counts the WAL segments the checkpoints "
                    "recycle and remove from their lines in the server's log (log_checkpoints on, to stderr)\n",
                    cmd, name);
            rc = 2;
        } else if (forbidden(name)) {
            fprintf(stderr,
                    "commitlab %s: --pg-set %s: refused: the private server listens on no address and "
                    "reads and writes only its own directory\n",
                    cmd, name);
            rc = 2;
        } else if (!desc && !(desc = describe_config(w))) {
            fprintf(stderr,
                    "commitlab %s: --pg-set %s: the server's settings could not be listed "
                    "(postgres --describe-config failed): nothing to check it against\n",
                    cmd, name);
            rc = 2;
        } else if (!known(desc, name)) {
            fprintf(stderr, "commitlab %s: --pg-set %s: no such PostgreSQL setting (postgres --describe-config)\n", cmd,
                    name);
            rc = 2;
        }
        p += n + (p[n] == ';');
    }
    free(desc);
    return rc;
}

int bench_postgres_account(const struct bench_config *cfg, uid_t *uid, gid_t *gid, char *err, size_t len)
{
    struct pg_who w;
    if (who_for(cfg->pg_bindir, cfg->pg_user, &w, err, len))
        return -1;
    *uid = w.drop ? w.uid : (uid_t)-1;
    *gid = w.drop ? w.gid : (gid_t)-1;
    return 0;
}

int bench_postgres_preflight(const char *cmd, const struct bench_config *cfgs, size_t n)
{
    const struct bench_driver *d = bench_driver_find("postgres");
    int tried = 0;
    for (size_t i = 0; i < n; i++) {
        const struct bench_config *cfg = &cfgs[i];
        char why[BENCH_ERRLEN + 400];
        struct pg_who w;
        if (strcmp(cfg->engine, "postgres") != 0)
            continue;
        if (!d || !d->built) {
            fprintf(stderr,
                    "commitlab %s: --engine postgres: not built into this binary (libpq was not found); %s, "
                    "and rebuild\n",
                    cmd, PG_INSTALL);
            return 2;
        }
        if (who_for(cfg->pg_bindir, cfg->pg_user, &w, why, sizeof why)) {
            fprintf(stderr, "commitlab %s: --engine postgres: %s\n", cmd, why);
            return 2;
        }
        int rc = cfg->pg_set && *cfg->pg_set ? check_pg_set(cmd, &w, cfg->pg_set) : 0;
        if (rc)
            return rc;
        if (tried || bench_engine_check(d, cfg, why, sizeof why))
            continue;
        /* the first configuration it can run, once: its server started and
         * stopped in D/postgres.open, so a setting the server refuses, or an
         * initdb that fails, stops the command before it runs anything */
        tried = 1;
        struct bench_db db = {.drv = d, .cfg = cfg};
        snprintf(db.path, sizeof db.path, "%.4000s/postgres.open", cfg->dir);
        if (ut_scratch_ours(db.path)) {
            bench_postgres_reap(db.path);
            ut_scratch_remove(db.path);
        }
        int mrc = ut_scratch_make(db.path, "bench");
        if (mrc) {
            fprintf(stderr, "commitlab %s: %s: %s\n", cmd, db.path,
                    mrc == -EEXIST ? "exists and was not made by commitlab" : strerror(-mrc));
            return 2;
        }
        rc = d->open(&db);
        discarding = 1;
        if (rc == BENCH_OK)
            d->close(&db);
        discarding = 0;
        ut_scratch_remove(db.path);
        if (rc == BENCH_ERR) {
            fprintf(stderr, "commitlab %s: --engine postgres: %s\n", cmd, db.err);
            return 2;
        }
    }
    return 0;
}
