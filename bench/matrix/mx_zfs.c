/*
 * mx_zfs.c -- ZFS for `commitlab matrix` (mx_zfs.h): which ZFS is here,
 * the zfs-fuse daemon when it is the one, a pool of matrix's own on a
 * file vdev or a device, its datasets and their snapshots, the pool's
 * counters, and taking all of it down -- now, or after a run that was
 * killed.  Everything goes through zpool(8) and zfs(8), as a user would
 * type it: the same commands drive OpenZFS and zfs-fuse.  matrix.c calls
 * it; it knows nothing of benchmarks.
 *
 * The invariant: nothing is destroyed, exported or stopped that this
 * command cannot prove is its own -- a pool by the commitlab:owner token
 * recorded before it was created, the daemon by the pid and start time
 * recorded when it was started.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_zfs.h"
#include "ut_clock.h"
#include "ut_scratch.h"

#define SNAP_NAME "commitlab-snap-"

/* ---- tools ------------------------------------------------------------------ */

/* Runs the NULL-terminated command, its output (trimmed) in out. */
static int zrun(char *out, size_t outlen, const char *arg0, ...)
{
    char *argv[32];
    int n = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && n < 31; a = va_arg(ap, const char *))
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    char sink[4096];
    if (!out) {
        out = sink;
        outlen = sizeof sink;
    }
    int rc = mx_run_tool(argv, out, outlen);
    size_t l = strlen(out);
    while (l && (out[l - 1] == '\n' || out[l - 1] == ' '))
        out[--l] = 0;
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- which ZFS ---------------------------------------------------------------- */

static int kernel_has_zfs(void)
{
    FILE *f = fopen("/proc/filesystems", "r");
    char line[256];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        char *t = strrchr(line, '\t');
        t = t ? t + 1 : line;
        t[strcspn(t, "\n")] = 0;
        found = strcmp(t, "zfs") == 0;
    }
    if (f)
        fclose(f);
    return found;
}

int mx_zfs_detect(struct mx_zfs_impl *z, char *err, size_t errlen)
{
    char v[256] = "";
    memset(z, 0, sizeof *z);
    if (kernel_has_zfs() && mx_have_tool("zpool") && mx_have_tool("zfs")) {
        FILE *f = fopen("/sys/module/zfs/version", "r");
        if (f && fgets(v, sizeof v, f))
            v[strcspn(v, "-\n")] = 0;
        if (f)
            fclose(f);
        z->kernel = 1;
        snprintf(z->name, sizeof z->name, "OpenZFS%s%.40s, kernel", v[0] ? " " : "", v);
        return 0;
    }
    const char *missing = !mx_have_tool("zfs-fuse") ? "zfs-fuse"
                          : !mx_have_tool("zpool")  ? "zpool"
                          : !mx_have_tool("zfs")    ? "zfs"
                                                    : NULL;
    if (missing) {
        snprintf(err, errlen,
                 "needs the kernel's ZFS (not loaded: no zfs in /proc/filesystems) or zfs-fuse, and "
                 "%s is not installed (Debian: apt-get install zfs-fuse)",
                 missing);
        return -1;
    }
    if (access("/dev/fuse", R_OK | W_OK) != 0) {
        snprintf(err, errlen,
                 "zfs-fuse needs FUSE, and /dev/fuse is not usable: %s (modprobe fuse; in a "
                 "container, give it /dev/fuse)",
                 strerror(errno));
        return -1;
    }
    if (zrun(v, sizeof v, "dpkg-query", "-W", "-f=${Version}", "zfs-fuse", NULL) == 0)
        v[strcspn(v, "-\n")] = 0;
    else
        v[0] = 0;
    snprintf(z->name, sizeof z->name, "zfs-fuse%s%.40s, userspace", v[0] ? " " : "", v);
    return 0;
}

int mx_zfs_preflight(char *err, size_t errlen)
{
    struct mx_zfs_impl z;
    return mx_zfs_detect(&z, err, errlen);
}

/* ---- the zfs-fuse daemon --------------------------------------------------------- */

/* /proc/PID/stat: the state letter and the start time (field 22); 0 when
 * there is no such process. */
static unsigned long long proc_start(pid_t pid, char *state)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    char *rp = strrchr(buf, ')');
    unsigned long long start = 0;
    char st = 0;
    if (!rp || sscanf(rp + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &st,
                      &start) != 2)
        return 0;
    if (state)
        *state = st;
    return start;
}

static int is_zfs_fuse(pid_t pid)
{
    char p[64], comm[64] = "";
    snprintf(p, sizeof p, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(p, "r");
    if (f && fgets(comm, sizeof comm, f))
        comm[strcspn(comm, "\n")] = 0;
    if (f)
        fclose(f);
    return strcmp(comm, "zfs-fuse") == 0;
}

/* A running zfs-fuse daemon, or 0. */
static pid_t find_daemon(void)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;
    while (d && !found && (e = readdir(d))) {
        char *end, st = 0;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (is_zfs_fuse((pid_t)pid) && proc_start((pid_t)pid, &st) && st != 'Z')
            found = (pid_t)pid;
    }
    if (d)
        closedir(d);
    return found;
}

/* Stops the daemon recorded as started by matrix (pid, start), unless it
 * is gone, is another process now, or still serves a pool. */
static void stop_daemon(pid_t pid, unsigned long long start, const char *whose)
{
    char st = 0, out[4096];
    if (pid <= 0 || proc_start(pid, &st) != start || !is_zfs_fuse(pid)) {
        if (pid > 0)
            waitpid(pid, NULL, WNOHANG);
        return;
    }
    if (st != 'Z') { /* a zombie leader is a daemon on its way out: its threads are still finishing */
        if (zrun(out, sizeof out, "zpool", "list", "-H", "-o", "name", NULL) == 0 && out[0]) {
            out[strcspn(out, "\n")] = 0;
            fprintf(stderr,
                    "commitlab matrix: zfs-fuse (pid %d, started by %s) still serves pools that are not "
                    "this command's (%s, ...): left running\n",
                    (int)pid, whose, out);
            return;
        }
        kill(pid, SIGTERM);
    }
    /* gone: reaped (our child) or its /proc entry gone (an earlier run's,
     * reaped by init) -- not merely a zombie leader */
    int i;
    for (i = 0; i < 300 && (waitpid(pid, NULL, WNOHANG), proc_start(pid, NULL) == start); i++)
        sleep_ms(100); /* it finishes its transaction groups first: seconds */
    if (i == 300) {
        fprintf(stderr, "commitlab matrix: zfs-fuse (pid %d) did not stop in 30 s: killed\n", (int)pid);
        kill(pid, SIGKILL);
        for (i = 0; i < 100 && (waitpid(pid, NULL, WNOHANG), proc_start(pid, NULL) == start); i++)
            sleep_ms(100);
    }
    if (strcmp(whose, "this run"))
        fprintf(stderr, "commitlab matrix: stopped zfs-fuse (pid %d), started by %s\n", (int)pid, whose);
}

/* Starts zfs-fuse (none runs), records it in home/daemon, and waits until
 * it answers. */
static int daemon_start(struct mx_zpool *p, char *err, size_t errlen)
{
    char log[4200], pidf[4200], rec[4200];
    if (find_daemon())
        return 0; /* someone's: used, never stopped */
    snprintf(log, sizeof log, "%.4000s/zfs-fuse.log", p->home);
    snprintf(pidf, sizeof pidf, "%.4000s/zfs-fuse.pid", p->home);
    snprintf(rec, sizeof rec, "%.4000s/daemon", p->home);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        setsid(); /* a terminal's ^C is for matrix, which then stops it in order */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), nul = open("/dev/null", O_RDONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (nul >= 0)
            dup2(nul, 0);
        mx_tool_path_set();
        execlp("zfs-fuse", "zfs-fuse", "-n", "--no-kstat-mount", "-p", pidf, (char *)NULL);
        _exit(127);
    }
    p->daemon = pid;
    for (int i = 0; i < 100 && !(p->daemon_start = proc_start(pid, NULL)); i++)
        sleep_ms(1);
    FILE *f = fopen(rec, "w");
    if (f) {
        fprintf(f, "%d %llu\n", (int)pid, p->daemon_start);
        fclose(f);
    }
    for (int i = 0; i < 200; i++) { /* up to 20 s */
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            char tail[512] = "";
            FILE *l = fopen(log, "r");
            size_t n = l ? fread(tail, 1, sizeof tail - 1, l) : 0;
            if (l)
                fclose(l);
            tail[n] = 0;
            for (char *c = tail; *c; c++)
                if (*c == '\n')
                    *c = ' ';
            snprintf(err, errlen, "zfs-fuse exited at start (status %d): %.300s", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                     tail);
            p->daemon = 0;
            return -1;
        }
        if (zrun(NULL, 0, "zpool", "list", "-H", NULL) == 0)
            return 0;
        sleep_ms(100);
    }
    snprintf(err, errlen, "zfs-fuse (pid %d) did not answer zpool list within 20 s", (int)pid);
    return -1;
}

/* ---- pools -------------------------------------------------------------------- */

static int pool_listed(const char *name)
{
    return zrun(NULL, 0, "zpool", "list", "-H", "-o", "name", name, NULL) == 0;
}

static int pool_owned(const char *name, const char *token)
{
    char out[512];
    return token[0] && zrun(out, sizeof out, "zfs", "get", "-H", "-o", "value", MX_ZFS_OWNER_PROP, name, NULL) == 0 &&
           strcmp(out, token) == 0;
}

/* Destroys the pool when it is imported and carries token: 0 when it is
 * gone (or was never there), -1 when it stays. */
static int destroy_owned(const char *name, const char *token, int leftover)
{
    if (!pool_listed(name))
        return 0;
    if (!pool_owned(name, token)) {
        fprintf(stderr,
                "commitlab matrix: the pool %s does not carry this command's %s=%s: not this command's, "
                "left as it is\n",
                name, MX_ZFS_OWNER_PROP, token);
        return -1;
    }
    char out[4096] = "";
    for (int i = 0; i < 10 && pool_listed(name); i++) {
        if (zrun(out, sizeof out, "zpool", "destroy", "-f", name, NULL) == 0)
            break;
        sleep_ms(500);
    }
    if (pool_listed(name)) {
        fprintf(stderr, "commitlab matrix: zpool destroy %s failed: %.300s\n", name, out);
        return -1;
    }
    if (leftover)
        fprintf(stderr, "commitlab matrix: destroyed the pool %s, left by an earlier run\n", name);
    return 0;
}

static void random_hex(char *buf, size_t len, unsigned bytes)
{
    unsigned char r[16] = {0};
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, r, bytes) != (ssize_t)bytes) {
        uint64_t x = ut_now_ns() ^ ((uint64_t)getpid() << 32);
        memcpy(r, &x, sizeof x);
    }
    if (fd >= 0)
        close(fd);
    size_t j = 0;
    for (unsigned i = 0; i < bytes && j + 3 <= len; i++)
        j += (size_t)snprintf(buf + j, len - j, "%02x", r[i]);
}

int mx_zfs_pool_up(struct mx_zpool *p, const struct mx_image *img, const char *workdir, int (*stop)(void), char *err,
                   size_t errlen)
{
    char path[4200], out[4096], hex[40];
    memset(p, 0, sizeof *p);
    if (mx_zfs_detect(&p->impl, err, errlen))
        return -1;
    snprintf(p->home, sizeof p->home, "%.3000s/zfs", workdir);
    int rc = ut_scratch_make(p->home, "matrix");
    if (rc) {
        snprintf(err, errlen, "%.900s: %s", p->home,
                 rc == -EEXIST ? "already exists and is not this run's (nothing there was touched)" : strerror(-rc));
        p->home[0] = 0;
        return -1;
    }
    snprintf(path, sizeof path, "%.4000s/mnt", p->home);
    if (mkdir(path, 0755)) {
        snprintf(err, errlen, "mkdir %.900s: %s", path, strerror(errno));
        return -1;
    }
    /* the name and the token, recorded before the pool exists, so that a
     * run killed during zpool create is still cleaned up after */
    random_hex(hex, sizeof hex, 4);
    snprintf(p->name, sizeof p->name, "commitlab-%d-%s", (int)getpid(), hex);
    random_hex(hex, sizeof hex, 12);
    snprintf(p->owner, sizeof p->owner, "matrix-%s", hex);
    snprintf(path, sizeof path, "%.4000s/pool", p->home);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%s %s\n", p->name, p->owner) < 0 || fclose(f)) {
        snprintf(err, errlen, "%.900s: %s", path, strerror(errno));
        p->name[0] = 0;
        return -1;
    }
    if (!p->impl.kernel && daemon_start(p, err, errlen))
        return -1;
    if (img->device) {
        snprintf(p->device, sizeof p->device, "%s", img->device);
    } else {
        snprintf(p->image, sizeof p->image, "%.4000s/zfs.img", p->home);
        int fd = open(p->image, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || ftruncate(fd, (off_t)img->size) < 0 || (img->zero && mx_zero_fill(fd, img->size, stop))) {
            snprintf(err, errlen, "image %.900s: %s", p->image, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
    }
    char owner_opt[128];
    snprintf(owner_opt, sizeof owner_opt, "%s=%s", MX_ZFS_OWNER_PROP, p->owner);
    const char *vdev = p->device[0] ? p->device : p->image;
    /* -f on a device: mx_device_check refused one that carries anything
     * unless --destroy-data gave it up; cachefile=none: never imported
     * again by itself */
    snprintf(p->create_cmd, sizeof p->create_cmd, "zpool create%s -o cachefile=none -O mountpoint=none -O %s %s %.700s",
             img->device ? " -f" : "", owner_opt, p->name, vdev);
    if (img->device)
        rc = zrun(out, sizeof out, "zpool", "create", "-f", "-o", "cachefile=none", "-O", "mountpoint=none", "-O",
                  owner_opt, p->name, vdev, NULL);
    else
        rc = zrun(out, sizeof out, "zpool", "create", "-o", "cachefile=none", "-O", "mountpoint=none", "-O", owner_opt,
                  p->name, vdev, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "%.300s failed (exit %d): %.300s", p->create_cmd, rc, out);
        return -1;
    }
    p->created = 1;
    return 0;
}

int mx_zfs_dataset_up(struct mx_zpool *p, struct mx_mount *m, const char *const *props, size_t n, int snapshot,
                      char *err, size_t errlen)
{
    char *argv[40], opts[16][160], mp[4200], out[4096], cmd[2048];
    int argc = 0;
    unsigned id = ++p->ndatasets;
    snprintf(m->dataset, sizeof m->dataset, "%s/c%u", p->name, id);
    snprintf(m->mnt, sizeof m->mnt, "%.3000s/mnt/c%u", p->home, id);
    snprintf(mp, sizeof mp, "mountpoint=%s", m->mnt);
    argv[argc++] = "zfs";
    argv[argc++] = "create";
    argv[argc++] = "-o";
    argv[argc++] = mp;
    for (size_t i = 0; i < n && i < 16; i++) {
        snprintf(opts[i], sizeof opts[i], "%s", props[i]);
        argv[argc++] = "-o";
        argv[argc++] = opts[i];
    }
    argv[argc++] = m->dataset;
    argv[argc] = NULL;
    int rc = mx_run_tool(argv, out, sizeof out);
    if (rc != 0) {
        size_t j = 0;
        for (int i = 0; i < argc && j < sizeof cmd; i++)
            j += (size_t)snprintf(cmd + j, sizeof cmd - j, "%s%s", i ? " " : "", argv[i]);
        out[strcspn(out, "\n")] = 0;
        snprintf(err, errlen, "%.600s failed (exit %d): %.300s", cmd, rc, out);
        return -1;
    }
    char run[4300];
    snprintf(run, sizeof run, "%.4000s/bench", m->mnt);
    if (mkdir(run, 0755)) {
        snprintf(err, errlen, "mkdir %.900s: %s", run, strerror(errno));
        return -1;
    }
    m->subvol = snapshot;
    m->snap_seq = 0;
    return 0;
}

int mx_zfs_set(const char *dataset, const char *prop, const char *value)
{
    char kv[256];
    snprintf(kv, sizeof kv, "%s=%s", prop, value);
    return zrun(NULL, 0, "zfs", "set", kv, dataset, NULL) == 0 ? 0 : -1;
}

int mx_zfs_snapshot(const char *dataset, unsigned seq)
{
    char name[400];
    snprintf(name, sizeof name, "%.300s@" SNAP_NAME "%06u", dataset, seq);
    if (zrun(NULL, 0, "zfs", "snapshot", name, NULL) != 0)
        return -EIO;
    if (seq > 1) { /* only the newest is kept: it holds every block the next write would overwrite */
        snprintf(name, sizeof name, "%.300s@" SNAP_NAME "%06u", dataset, seq - 1);
        zrun(NULL, 0, "zfs", "destroy", name, NULL);
    }
    return 0;
}

void mx_zfs_snapshots_destroy(const char *dataset)
{
    char out[16384];
    if (zrun(out, sizeof out, "zfs", "list", "-H", "-t", "snapshot", "-o", "name", "-r", dataset, NULL) != 0)
        return;
    for (char *save = NULL, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        const char *at = strchr(l, '@');
        if (at && strncmp(at + 1, SNAP_NAME, strlen(SNAP_NAME)) == 0 && !strncmp(l, dataset, strlen(dataset)))
            zrun(NULL, 0, "zfs", "destroy", l, NULL);
    }
}

/* After the pool: the daemon, stale mounts, the directory. */
static void home_down(const char *home, pid_t daemon, unsigned long long start, const char *whose)
{
    if (daemon)
        stop_daemon(daemon, start, whose);
    if (!home[0])
        return;
    mx_umount_below(home); /* a FUSE mount whose daemon died is still listed */
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[8192];
    int busy = 0;
    size_t len = strlen(home);
    while (f && !busy && fgets(line, sizeof line, f)) {
        char mp[4096];
        busy = sscanf(line, "%*u %*u %*u:%*u %*s %4095s", mp) == 1 && strncmp(mp, home, len) == 0 &&
               (mp[len] == '/' || !mp[len]);
    }
    if (f)
        fclose(f);
    if (!busy)
        ut_scratch_remove(home);
}

void mx_zfs_pool_down(struct mx_zpool *p)
{
    int kept = 0;
    if (p->name[0])
        kept = destroy_owned(p->name, p->owner, 0) != 0;
    p->name[0] = 0;
    p->created = 0;
    if (kept) { /* the pool is still imported from the image: keep both, and the daemon that serves it */
        fprintf(stderr, "commitlab matrix: %s is kept; the next run in this --workdir tries again\n", p->home);
        p->home[0] = 0;
        p->daemon = 0;
        return;
    }
    home_down(p->home, p->daemon, p->daemon_start, "this run");
    p->daemon = 0;
    p->home[0] = 0;
}

void mx_zfs_clear_leftovers(const char *workdir)
{
    char home[4096], path[4200], name[128] = "", token[128] = "";
    int pid = 0;
    unsigned long long start = 0;
    snprintf(home, sizeof home, "%.3000s/zfs", workdir);
    if (!ut_scratch_ours(home))
        return; /* absent, or the user's: never touched */
    snprintf(path, sizeof path, "%.4000s/pool", home);
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "%127s %127s", name, token) != 2)
        name[0] = token[0] = 0;
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "%.4000s/daemon", home);
    f = fopen(path, "r");
    if (f && fscanf(f, "%d %llu", &pid, &start) != 2)
        pid = 0;
    if (f)
        fclose(f);
    if (name[0] && destroy_owned(name, token, 1) != 0) {
        fprintf(stderr, "commitlab matrix: %s is kept\n", home);
        return;
    }
    home_down(home, pid, start, "an earlier run");
}

/* ---- the pool's counters -------------------------------------------------------- */

/* "3.73K", "677", "51.5M": zfs_nicenum's units are powers of 1024. */
static double nicenum(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    static const char units[] = "KMGTPE";
    const char *u = *end ? strchr(units, *end) : NULL;
    for (int i = u ? (int)(u - units) + 1 : 0; i > 0; i--)
        v *= 1024;
    return v;
}

static void *iostat_main(void *arg)
{
    struct mx_zfs_iostat *io = arg;
    char buf[8192];
    size_t have = 0;
    for (;;) {
        ssize_t k = read(io->fd, buf + have, sizeof buf - 1 - have);
        if (k <= 0)
            break;
        double now = ut_now();
        have += (size_t)k;
        buf[have] = 0;
        char *nl, *line = buf;
        while ((nl = strchr(line, '\n'))) {
            *nl = 0;
            char name[128], f[6][32];
            if (sscanf(line, "%127s %31s %31s %31s %31s %31s %31s", name, f[0], f[1], f[2], f[3], f[4], f[5]) == 7 &&
                (f[2][0] >= '0' && f[2][0] <= '9')) {
                struct mx_zfs_sample s = {now, nicenum(f[2]), nicenum(f[3]), nicenum(f[4]), nicenum(f[5])};
                pthread_mutex_lock(&io->mu);
                if (io->n == io->cap) {
                    size_t cap = io->cap ? 2 * io->cap : 64;
                    struct mx_zfs_sample *g = realloc(io->s, cap * sizeof *g);
                    if (g) {
                        io->s = g;
                        io->cap = cap;
                    }
                }
                if (io->n < io->cap)
                    io->s[io->n++] = s;
                pthread_mutex_unlock(&io->mu);
            }
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have + 1);
        if (have == sizeof buf - 1)
            have = 0;
    }
    return NULL;
}

int mx_zfs_iostat_start(struct mx_zfs_iostat *io, const struct mx_zpool *p)
{
    int pfd[2];
    memset(io, 0, sizeof *io);
    io->fd = -1;
    io->kernel = p->impl.kernel;
    if (pipe2(pfd, O_CLOEXEC))
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(pfd[1], 1);
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0)
            dup2(nul, 2);
        mx_tool_path_set();
        /* OpenZFS: exact integers (-p), no headers (-H); zfs-fuse 0.7.0
         * knows neither and prints rounded K/M/G */
        if (p->impl.kernel)
            execlp("zpool", "zpool", "iostat", "-Hp", p->name, "1", (char *)NULL);
        else
            execlp("zpool", "zpool", "iostat", p->name, "1", (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    io->pid = pid;
    io->fd = pfd[0];
    pthread_mutex_init(&io->mu, NULL);
    if (pthread_create(&io->th, NULL, iostat_main, io)) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(io->fd);
        io->fd = -1;
        pthread_mutex_destroy(&io->mu);
        return -1;
    }
    io->running = 1;
    return 0;
}

void mx_zfs_iostat_stop(struct mx_zfs_iostat *io, double until)
{
    if (!io->running)
        return;
    for (int i = 0; i < 60; i++) {
        pthread_mutex_lock(&io->mu);
        int done = io->n && io->s[io->n - 1].t >= until;
        pthread_mutex_unlock(&io->mu);
        if (done)
            break;
        sleep_ms(50);
    }
    kill(io->pid, SIGTERM);
    waitpid(io->pid, NULL, 0);
    pthread_join(io->th, NULL);
    close(io->fd);
    io->fd = -1;
    io->running = 0;
}

int mx_zfs_iostat_sum(const struct mx_zfs_iostat *io, double a, double b, double out[4])
{
    memset(out, 0, 4 * sizeof *out);
    /* the first line is the average since the pool was opened: only its time is used */
    if (io->n < 2 || io->s[0].t > a || io->s[io->n - 1].t < b)
        return -1;
    for (size_t k = 1; k < io->n; k++) {
        double lo = io->s[k - 1].t > a ? io->s[k - 1].t : a, hi = io->s[k].t < b ? io->s[k].t : b;
        if (hi <= lo)
            continue;
        out[0] += io->s[k].rops * (hi - lo);
        out[1] += io->s[k].wops * (hi - lo);
        out[2] += io->s[k].rbytes * (hi - lo);
        out[3] += io->s[k].wbytes * (hi - lo);
    }
    return 0;
}

void mx_zfs_iostat_free(struct mx_zfs_iostat *io)
{
    if (io->running)
        mx_zfs_iostat_stop(io, 0);
    if (io->pid)
        pthread_mutex_destroy(&io->mu);
    io->pid = 0;
    free(io->s);
    io->s = NULL;
    io->n = io->cap = 0;
}
