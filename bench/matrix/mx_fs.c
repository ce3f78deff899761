/*
 * mx_fs.c -- the filesystems of `commitlab matrix`, made fresh for each
 * run of the configurations (mx_fs.h): an image file in the work
 * directory, mkfs, a loop device (attached with LO_FLAGS_AUTOCLEAR), a
 * mount; and taking all of it down again, now or after an earlier run
 * that was killed before it could.  matrix.c calls it; it knows nothing of
 * benchmarks.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_fs.h"

/* ---- the filesystems ----------------------------------------------------- */

/* ext4 initialises its inode tables and journal lazily, in the background,
 * after mount: that would write during the runs.  Done at mkfs instead. */
const struct mx_fs_kind mx_fs_kinds[] = {
    {"ext4", "ext4", "mkfs.ext4", "-F -q -E lazy_itable_init=0,lazy_journal_init=0", "e2fsprogs", 0},
    {"xfs", "xfs", "mkfs.xfs", "-f -q", "xfsprogs", 0},
    {"btrfs", "btrfs", "mkfs.btrfs", "-f -q", "btrfs-progs", 0},
    {"btrfs-nodatacow", "btrfs", "mkfs.btrfs", "-f -q", "btrfs-progs", 1},
    {"tmpfs", "tmpfs", NULL, NULL, NULL, 0},
};
const size_t mx_fs_nkinds = sizeof mx_fs_kinds / sizeof *mx_fs_kinds;

const struct mx_fs_kind *mx_fs_find(const char *name)
{
    for (size_t i = 0; i < mx_fs_nkinds; i++)
        if (strcmp(mx_fs_kinds[i].name, name) == 0)
            return &mx_fs_kinds[i];
    return NULL;
}

/* ---- running a tool ------------------------------------------------------ */

/* Runs argv (PATH plus /sbin and /usr/sbin), output captured into out;
 * returns the exit status, or -1 when it could not be started. */
static int run_tool(char *const argv[], char *out, size_t outlen)
{
    int pfd[2];
    if (pipe(pfd))
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        const char *path = getenv("PATH");
        char np[8192];
        snprintf(np, sizeof np, "%s:/usr/sbin:/sbin", path ? path : "/usr/bin:/bin");
        setenv("PATH", np, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(pfd[1]);
    size_t n = 0;
    ssize_t k;
    while ((k = read(pfd[0], out + n, n + 1 < outlen ? outlen - n - 1 : 0)) > 0)
        n += (size_t)k;
    if (outlen)
        out[n < outlen ? n : outlen - 1] = 0;
    char sink[256];
    while (read(pfd[0], sink, sizeof sink) > 0)
        ;
    close(pfd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* 1 when name is an executable in PATH, /usr/sbin or /sbin. */
static int have_tool(const char *name)
{
    const char *path = getenv("PATH");
    char buf[8192], full[8400];
    snprintf(buf, sizeof buf, "%s:/usr/sbin:/sbin", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(full, sizeof full, "%s/%s", d, name);
        if (access(full, X_OK) == 0)
            return 1;
    }
    return 0;
}

/* Splits s at spaces into argv[at..], returning the new count. */
static int split_words(char *s, char **argv, int at, int max)
{
    for (char *save = NULL, *t = strtok_r(s, " ", &save); t && at < max - 1; t = strtok_r(NULL, " ", &save))
        argv[at++] = t;
    argv[at] = NULL;
    return at;
}

/* ---- mounts and loop devices --------------------------------------------- */

static int is_mounted(const char *mnt)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[8192];
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f)) {
        char mp[4096];
        if (sscanf(line, "%*u %*u %*u:%*u %*s %4095s", mp) == 1 && strcmp(mp, mnt) == 0)
            found = 1;
    }
    fclose(f);
    return found;
}

static int do_umount(const char *mnt)
{
    for (int i = 0; i < 50; i++) {
        if (umount2(mnt, 0) == 0 || errno == EINVAL || errno == ENOENT)
            return 0;
        if (errno != EBUSY)
            break;
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "commitlab matrix: umount %s: %s; detaching it lazily\n", mnt, strerror(errno));
    return umount2(mnt, MNT_DETACH);
}

/* Detaches every loop device whose backing file is image. */
static void detach_loops_of(const char *image)
{
    char p[320], back[4096];
    for (int n = 0; n < 256; n++) {
        snprintf(p, sizeof p, "/sys/block/loop%d/loop/backing_file", n);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        int ok = fgets(back, sizeof back, f) != NULL;
        fclose(f);
        if (!ok)
            continue;
        back[strcspn(back, "\n")] = 0;
        if (strcmp(back, image) != 0)
            continue;
        snprintf(p, sizeof p, "/dev/loop%d", n);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (ioctl(fd, LOOP_CLR_FD, 0) == 0)
                fprintf(stderr, "commitlab matrix: detached %s (%s), left by an earlier run\n", p, image);
            close(fd);
        }
    }
}

void mx_fs_down(struct mx_mount *cur)
{
    if (cur->mnt[0]) {
        if (is_mounted(cur->mnt))
            do_umount(cur->mnt);
        rmdir(cur->mnt);
        cur->mnt[0] = 0;
    }
    if (cur->loop_fd >= 0) {
        ioctl(cur->loop_fd, LOOP_CLR_FD, 0); /* ENXIO when autoclear already did it */
        close(cur->loop_fd);
        cur->loop_fd = -1;
    }
    cur->loopdev[0] = 0;
    if (cur->image[0]) {
        detach_loops_of(cur->image);
        unlink(cur->image);
        cur->image[0] = 0;
    }
}

/* The loop device's name for its file (shown by losetup): the tail when
 * the path is too long for it. */
static void copy_name(uint8_t *dst, size_t cap, const char *path)
{
    size_t n = strlen(path), from = n >= cap ? n - (cap - 1) : 0;
    memcpy(dst, path + from, n - from);
    dst[n - from] = 0;
}

/* Attaches image to a free loop device (autoclear: it detaches itself
 * when the last user -- the mount, or our descriptor -- goes away). */
static int loop_attach(struct mx_mount *cur, const char *image, char *err, size_t errlen)
{
    int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (ctl < 0) {
        snprintf(err, errlen, "/dev/loop-control: %s (loop devices are needed: modprobe loop)", strerror(errno));
        return -1;
    }
    int ifd = open(image, O_RDWR | O_CLOEXEC);
    if (ifd < 0) {
        snprintf(err, errlen, "%.900s: %s", image, strerror(errno));
        close(ctl);
        return -1;
    }
    int rc = -1;
    for (int attempt = 0; attempt < 20 && rc < 0; attempt++) {
        int n = ioctl(ctl, LOOP_CTL_GET_FREE);
        if (n < 0) {
            snprintf(err, errlen, "LOOP_CTL_GET_FREE: %s", strerror(errno));
            break;
        }
        char dev[64];
        snprintf(dev, sizeof dev, "/dev/loop%d", n);
        int lfd = open(dev, O_RDWR | O_CLOEXEC);
        if (lfd < 0) {
            snprintf(err, errlen, "%s: %s", dev, strerror(errno));
            break;
        }
        struct loop_config lc;
        memset(&lc, 0, sizeof lc);
        lc.fd = (unsigned)ifd;
        lc.info.lo_flags = LO_FLAGS_AUTOCLEAR;
        copy_name(lc.info.lo_file_name, sizeof lc.info.lo_file_name, image);
        int r = ioctl(lfd, LOOP_CONFIGURE, &lc);
        if (r < 0 && errno == EINVAL) { /* kernels before 5.8 */
            r = ioctl(lfd, LOOP_SET_FD, ifd);
            if (r == 0) {
                struct loop_info64 li;
                memset(&li, 0, sizeof li);
                li.lo_flags = LO_FLAGS_AUTOCLEAR;
                copy_name(li.lo_file_name, sizeof li.lo_file_name, image);
                if (ioctl(lfd, LOOP_SET_STATUS64, &li) < 0) {
                    ioctl(lfd, LOOP_CLR_FD, 0);
                    r = -1;
                }
            }
        }
        if (r == 0) {
            cur->loop_fd = lfd;
            snprintf(cur->loopdev, sizeof cur->loopdev, "%s", dev);
            rc = 0;
        } else {
            int e = errno;
            close(lfd);
            snprintf(err, errlen, "attaching %.900s to %s: %s", image, dev, strerror(e));
            if (e != EBUSY) /* EBUSY: another process took it; try the next */
                break;
        }
    }
    close(ifd);
    close(ctl);
    return rc;
}

/* chattr +C: new files in dir are created without copy-on-write. */
static int set_nocow(const char *dir, char *err, size_t errlen)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int flags = 0;
    if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
        snprintf(err, errlen, "%.900s: FS_IOC_GETFLAGS: %s", dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    flags |= FS_NOCOW_FL;
    int rc = ioctl(fd, FS_IOC_SETFLAGS, &flags);
    if (rc < 0)
        snprintf(err, errlen, "%.900s: chattr +C: %s", dir, strerror(errno));
    else if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0 || !(flags & FS_NOCOW_FL)) {
        snprintf(err, errlen, "%.900s: chattr +C did not take", dir);
        rc = -1;
    }
    close(fd);
    return rc;
}

/* ---- one filesystem up --------------------------------------------------- */

/* Writes zeros over the whole image and syncs it: every block allocated
 * and written on the host, as on a real device. */
static int zero_fill(int fd, uint64_t size, int (*stop)(void))
{
    size_t chunk = 8u << 20;
    char *z = calloc(1, chunk);
    int rc = z ? 0 : -1;
    for (uint64_t off = 0; off < size && rc == 0 && !stop(); off += chunk) {
        size_t n = size - off < chunk ? (size_t)(size - off) : chunk;
        ssize_t w = pwrite(fd, z, n, (off_t)off);
        if (w != (ssize_t)n)
            rc = -1;
    }
    if (stop()) {
        errno = EINTR;
        rc = -1;
    }
    if (rc == 0)
        rc = fsync(fd);
    free(z);
    return rc;
}

int mx_fs_up(struct mx_mount *cur, const struct mx_fs_kind *k, const struct mx_image *img, const char *workdir,
             int (*stop)(void), char *mkfs_cmd, size_t mkfs_len, char *err, size_t errlen)
{
    char out[4096], sizebuf[64], optbuf[1024];
    const char *mopts = img->mount_opts;
    char *argv[64];
    int argc = 0;

    mkfs_cmd[0] = 0;
    snprintf(cur->mnt, sizeof cur->mnt, "%.3000s/mnt-%s", workdir, k->name);
    if (mkdir(cur->mnt, 0755) && errno != EEXIST) {
        snprintf(err, errlen, "mkdir %.900s: %s", cur->mnt, strerror(errno));
        cur->mnt[0] = 0;
        return -1;
    }
    if (k->mkfs) {
        snprintf(cur->image, sizeof cur->image, "%.3000s/%s.img", workdir, k->name);
        int fd = open(cur->image, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || ftruncate(fd, (off_t)img->size) < 0 || (img->zero && zero_fill(fd, img->size, stop))) {
            snprintf(err, errlen, "image %.900s: %s", cur->image, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
        char args[512], extra[512] = "";
        snprintf(args, sizeof args, "%s", k->mkfs_args);
        const char *xo = img->mkfs_opts;
        if (xo)
            snprintf(extra, sizeof extra, "%s", xo);
        argv[argc++] = (char *)k->mkfs;
        argc = split_words(args, argv, argc, 60);
        argc = split_words(extra, argv, argc, 60);
        argv[argc++] = cur->image;
        argv[argc] = NULL;
        size_t j = 0;
        for (int i = 0; i < argc && j < mkfs_len; i++)
            j += (size_t)snprintf(mkfs_cmd + j, mkfs_len - j, "%s%s", i ? " " : "", argv[i]);
        int st = run_tool(argv, out, sizeof out);
        if (st != 0) {
            snprintf(err, errlen, "%s failed (exit %d): %.300s", mkfs_cmd, st, out);
            return -1;
        }
        if (loop_attach(cur, cur->image, err, errlen))
            return -1;
        argc = 0;
        argv[argc++] = "mount";
        argv[argc++] = "-t";
        argv[argc++] = (char *)k->fstype;
        if (mopts) {
            snprintf(optbuf, sizeof optbuf, "%s", mopts);
            argv[argc++] = "-o";
            argv[argc++] = optbuf;
        }
        argv[argc++] = cur->loopdev;
        argv[argc++] = cur->mnt;
        argv[argc] = NULL;
    } else {
        snprintf(sizebuf, sizeof sizebuf, "size=%llu%s%s", (unsigned long long)img->size, mopts ? "," : "",
                 mopts ? mopts : "");
        argv[argc++] = "mount";
        argv[argc++] = "-t";
        argv[argc++] = "tmpfs";
        argv[argc++] = "-o";
        argv[argc++] = sizebuf;
        argv[argc++] = "commitlab-matrix";
        argv[argc++] = cur->mnt;
        argv[argc] = NULL;
    }
    int st = run_tool(argv, out, sizeof out);
    if (st != 0) {
        snprintf(err, errlen, "mount -t %s%s%s failed (exit %d): %.300s", k->fstype, mopts ? " -o " : "",
                 mopts ? mopts : "", st, out);
        return -1;
    }
    /* The mount holds the loop device now; our descriptor is kept only
     * for an explicit detach at the end. */
    char run[4200];
    snprintf(run, sizeof run, "%.4000s/bench", cur->mnt);
    if (mkdir(run, 0755)) {
        snprintf(err, errlen, "mkdir %.900s: %s", run, strerror(errno));
        return -1;
    }
    if (k->nocow && set_nocow(run, err, errlen))
        return -1;
    return 0;
}

/* ---- before the first ---------------------------------------------------- */

int mx_preflight(const struct mx_fs_kind *const *fs, size_t n)
{
    int needs_loop = 0;
    if (geteuid() != 0) {
        fprintf(stderr, "commitlab matrix: needs root (it runs mkfs, attaches loop devices and mounts); "
                        "run it as root\n");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct mx_fs_kind *k = fs[i];
        if (k->mkfs && !have_tool(k->mkfs)) {
            fprintf(stderr, "commitlab matrix: --fs %s needs %s, which is not installed (Debian: apt-get install "
                            "%s)\n", k->name, k->mkfs, k->package);
            return -1;
        }
        needs_loop |= k->mkfs != NULL;
    }
    if (!have_tool("mount")) {
        fprintf(stderr, "commitlab matrix: needs mount(8) (Debian: apt-get install mount)\n");
        return -1;
    }
    if (needs_loop && access("/dev/loop-control", R_OK | W_OK) != 0) {
        fprintf(stderr, "commitlab matrix: needs loop devices, and /dev/loop-control is not usable: %s "
                        "(modprobe loop)\n", strerror(errno));
        return -1;
    }
    return 0;
}

void mx_clear_leftovers(const char *workdir)
{
    for (size_t i = 0; i < mx_fs_nkinds; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%.3000s/mnt-%s", workdir, mx_fs_kinds[i].name);
        if (is_mounted(p)) {
            fprintf(stderr, "commitlab matrix: unmounting %s, left by an earlier run\n", p);
            do_umount(p);
        }
        rmdir(p);
        if (mx_fs_kinds[i].mkfs) {
            snprintf(p, sizeof p, "%.3000s/%s.img", workdir, mx_fs_kinds[i].name);
            detach_loops_of(p);
            unlink(p);
        }
    }
}
