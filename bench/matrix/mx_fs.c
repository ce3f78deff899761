/*
 * mx_fs.c -- the filesystems of `commitlab matrix`, made fresh for each
 * run of the configurations (mx_fs.h): an image file in the work
 * directory, mkfs, a loop device (attached with LO_FLAGS_AUTOCLEAR, and
 * LO_FLAGS_DIRECT_IO when asked), a mount -- or mkfs and a mount on a
 * device the user gave up, after the checks that neither it nor any other
 * device over the same bytes (a partition's disk, a loop device's file or
 * device, a loop device stacked on it) is in use, and that it carries
 * nothing unless --destroy-data said so; the btrfs run directory
 * as a subvolume and its snapshots; and taking all of it down again, now
 * or after an earlier run that was killed before it could.  matrix.c
 * calls it; it knows nothing of benchmarks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_fs.h"
#include "mx_zfs.h"
#include "ut_file.h"
#include "ut_scratch.h"

/* ---- the filesystems ----------------------------------------------------- */

/* ext4 initialises its inode tables and journal lazily, in the background,
 * after mount: that would write during the runs.  Done at mkfs instead. */
const struct mx_fs_kind mx_fs_kinds[] = {
    {"ext4", "ext4", "mkfs.ext4", "-F -q -E lazy_itable_init=0,lazy_journal_init=0", "e2fsprogs", 0, 0},
    {"xfs", "xfs", "mkfs.xfs", "-f -q", "xfsprogs", 0, 0},
    {"btrfs", "btrfs", "mkfs.btrfs", "-f -q", "btrfs-progs", 0, 0},
    {"btrfs-nodatacow", "btrfs", "mkfs.btrfs", "-f -q", "btrfs-progs", 1, 0},
    {"tmpfs", "tmpfs", NULL, NULL, NULL, 0, 0},
    {"zfs", "zfs", NULL, NULL, "zfs-fuse", 0, 1},
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

/* PATH with /usr/sbin and /sbin after it, where mkfs, losetup and zpool
 * are when a user's PATH leaves them out. */
static void tool_path(char *buf, size_t len)
{
    const char *path = getenv("PATH");
    snprintf(buf, len, "%s:/usr/sbin:/sbin", path ? path : "/usr/bin:/bin");
}

void mx_tool_path_set(void)
{
    char np[8192];
    tool_path(np, sizeof np);
    setenv("PATH", np, 1);
}

/* Runs argv (PATH plus /sbin and /usr/sbin), output captured into out;
 * returns the exit status, or -1 when it could not be started. */
int mx_run_tool(char *const argv[], char *out, size_t outlen)
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
        mx_tool_path_set();
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
int mx_have_tool(const char *name)
{
    char buf[8192], full[8400];
    tool_path(buf, sizeof buf);
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

int mx_is_mounted(const char *mnt)
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

int mx_umount(const char *mnt)
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

void mx_umount_below(const char *dir)
{
    /* mountinfo lists parents before children: unmount from the end */
    char mps[64][4096];
    int n = 0;
    size_t len = strlen(dir);
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[8192];
    while (f && n < 64 && fgets(line, sizeof line, f)) {
        char mp[4096];
        if (sscanf(line, "%*u %*u %*u:%*u %*s %4095s", mp) != 1)
            continue;
        ut_mountinfo_unescape(mp);
        if (strncmp(mp, dir, len) == 0 && (mp[len] == '/' || mp[len] == 0))
            snprintf(mps[n++], sizeof mps[0], "%s", mp);
    }
    if (f)
        fclose(f);
    while (n-- > 0) {
        fprintf(stderr, "commitlab matrix: unmounting %s\n", mps[n]);
        mx_umount(mps[n]);
    }
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

/* ---- btrfs snapshots ------------------------------------------------------ */

#define SNAP_PREFIX ".commitlab-snap-"
#define BTRFS_MAGIC_NUMBER 0x9123683EL

/* Deletes the snapshots (SNAP_PREFIX*) in the btrfs mounted at mnt, but
 * keep (when not NULL); the number deleted. */
static int delete_snapshots(const char *mnt, const char *keep)
{
    struct statfs sf;
    int n = 0;
    if (statfs(mnt, &sf) != 0 || sf.f_type != BTRFS_MAGIC_NUMBER)
        return 0;
    int dfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, SNAP_PREFIX, strlen(SNAP_PREFIX)) != 0 || (keep && strcmp(e->d_name, keep) == 0))
            continue;
        struct btrfs_ioctl_vol_args va;
        memset(&va, 0, sizeof va);
        snprintf(va.name, sizeof va.name, "%s", e->d_name);
        if (ioctl(dfd, BTRFS_IOC_SNAP_DESTROY, &va) == 0)
            n++;
        else
            fprintf(stderr, "commitlab matrix: deleting the snapshot %s/%s: %s\n", mnt, e->d_name, strerror(errno));
    }
    closedir(d);
    return n;
}

int mx_snapshot(struct mx_mount *m)
{
    char run[4200], name[64];
    if (!m->subvol || !m->mnt[0])
        return -EINVAL;
    if (m->dataset[0]) {
        int rc = mx_zfs_snapshot(m->dataset, m->snap_seq + 1);
        if (rc == 0)
            m->snap_seq++;
        return rc;
    }
    snprintf(run, sizeof run, "%.4000s/bench", m->mnt);
    snprintf(name, sizeof name, SNAP_PREFIX "%06u", m->snap_seq + 1);
    int src = open(run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int dst = open(m->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = 0;
    if (src < 0 || dst < 0) {
        rc = -errno;
    } else {
        struct btrfs_ioctl_vol_args_v2 va;
        memset(&va, 0, sizeof va);
        va.fd = src;
        va.flags = BTRFS_SUBVOL_RDONLY;
        snprintf(va.name, sizeof va.name, "%s", name);
        if (ioctl(dst, BTRFS_IOC_SNAP_CREATE_V2, &va) != 0)
            rc = -errno;
    }
    if (src >= 0)
        close(src);
    if (dst >= 0)
        close(dst);
    if (rc == 0) {
        m->snap_seq++;
        delete_snapshots(m->mnt, name); /* only the newest is kept: it shares every extent */
    }
    return rc;
}

void mx_snapshots_delete(struct mx_mount *m)
{
    if (m->dataset[0] && m->subvol)
        mx_zfs_snapshots_destroy(m->dataset);
    else if (m->mnt[0] && m->subvol && mx_is_mounted(m->mnt))
        delete_snapshots(m->mnt, NULL);
}

/* btrfs: makes dir (in an existing directory) a new subvolume. */
static int make_subvolume(const char *mnt, const char *name, char *err, size_t errlen)
{
    int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct btrfs_ioctl_vol_args va;
    memset(&va, 0, sizeof va);
    snprintf(va.name, sizeof va.name, "%s", name);
    if (fd < 0 || ioctl(fd, BTRFS_IOC_SUBVOL_CREATE, &va) != 0) {
        snprintf(err, errlen, "btrfs subvolume create %.900s/%s: %s", mnt, name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

void mx_fs_home(char *buf, size_t len, const char *workdir, const struct mx_fs_kind *k)
{
    snprintf(buf, len, "%.3000s/%s", workdir, k->name);
}

void mx_fs_down(struct mx_mount *cur)
{
    int still_mounted = 0;
    if (cur->dataset[0]) { /* the pool's: mx_zfs_pool_down destroys it with its snapshots */
        cur->dataset[0] = 0;
        cur->mnt[0] = 0;
        cur->subvol = 0;
    }
    if (cur->mnt[0]) {
        mx_snapshots_delete(cur);
        cur->subvol = 0;
        if (mx_is_mounted(cur->mnt))
            mx_umount(cur->mnt);
        still_mounted = mx_is_mounted(cur->mnt);
        cur->mnt[0] = 0;
    }
    if (cur->loop_fd >= 0) {
        ioctl(cur->loop_fd, LOOP_CLR_FD, 0); /* ENXIO when autoclear already did it */
        close(cur->loop_fd);
        cur->loop_fd = -1;
    }
    cur->loopdev[0] = 0;
    cur->device[0] = 0; /* the user's device: unmounted, never touched otherwise */
    if (cur->image[0]) {
        detach_loops_of(cur->image);
        cur->image[0] = 0;
    }
    /* the mount point and the image go with the marked directory; never
     * while something is still mounted in it (the removal would descend) */
    if (cur->home[0] && !still_mounted)
        ut_scratch_remove(cur->home);
    cur->home[0] = 0;
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
/* 1 when /sys/block/loopN/loop/dio says the device does direct I/O. */
static int loop_dio_on(const char *dev)
{
    char p[160], v[8] = "";
    snprintf(p, sizeof p, "/sys/block/%s/loop/dio", strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    int ok = fgets(v, sizeof v, f) != NULL;
    fclose(f);
    return ok && v[0] == '1';
}

static int loop_attach(struct mx_mount *cur, const char *image, int direct, char *err, size_t errlen)
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
        lc.info.lo_flags = LO_FLAGS_AUTOCLEAR | (direct ? LO_FLAGS_DIRECT_IO : 0);
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
            /* the kernel may attach without direct I/O (a backing file it
             * cannot align to): then say so instead of measuring buffered */
            if (direct && !loop_dio_on(dev)) {
                int e = ioctl(lfd, LOOP_SET_DIRECT_IO, 1UL) ? errno : 0;
                if (!loop_dio_on(dev)) {
                    snprintf(err, errlen, "--loop direct: %s would not do direct I/O on %.900s (%s)", dev, image,
                             strerror(e ? e : EINVAL));
                    rc = -1;
                    break; /* attached: mx_fs_down detaches it */
                }
            }
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
int mx_zero_fill(int fd, uint64_t size, int (*stop)(void))
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
    mx_fs_home(cur->home, sizeof cur->home, workdir, k);
    int rc = ut_scratch_make(cur->home, "matrix");
    if (rc) {
        snprintf(err, errlen, "%.900s: %s", cur->home,
                 rc == -EEXIST ? "already exists and is not this run's (nothing there was touched)" : strerror(-rc));
        cur->home[0] = 0;
        return -1;
    }
    snprintf(cur->mnt, sizeof cur->mnt, "%.3000s/mnt", cur->home);
    if (mkdir(cur->mnt, 0755)) {
        snprintf(err, errlen, "mkdir %.900s: %s", cur->mnt, strerror(errno));
        cur->mnt[0] = 0;
        return -1;
    }
    if (k->mkfs && img->device) {
        /* the device passed mx_device_check before anything was written */
        snprintf(cur->device, sizeof cur->device, "%s", img->device);
    } else if (k->mkfs) {
        snprintf(cur->image, sizeof cur->image, "%.3000s/%s.img", cur->home, k->name);
        int fd = open(cur->image, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || ftruncate(fd, (off_t)img->size) < 0 || (img->zero && mx_zero_fill(fd, img->size, stop))) {
            snprintf(err, errlen, "image %.900s: %s", cur->image, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
    }
    if (k->mkfs) {
        const char *target = cur->device[0] ? cur->device : cur->image;
        char args[512], extra[512] = "";
        snprintf(args, sizeof args, "%s", k->mkfs_args);
        const char *xo = img->mkfs_opts;
        if (xo)
            snprintf(extra, sizeof extra, "%s", xo);
        argv[argc++] = (char *)k->mkfs;
        argc = split_words(args, argv, argc, 60);
        argc = split_words(extra, argv, argc, 60);
        argv[argc++] = (char *)target;
        argv[argc] = NULL;
        size_t j = 0;
        for (int i = 0; i < argc && j < mkfs_len; i++)
            j += (size_t)snprintf(mkfs_cmd + j, mkfs_len - j, "%s%s", i ? " " : "", argv[i]);
        int st = mx_run_tool(argv, out, sizeof out);
        if (st != 0) {
            snprintf(err, errlen, "%s failed (exit %d): %.300s", mkfs_cmd, st, out);
            return -1;
        }
        if (!cur->device[0] && loop_attach(cur, cur->image, img->loop_direct, err, errlen))
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
        argv[argc++] = cur->device[0] ? cur->device : cur->loopdev;
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
    int st = mx_run_tool(argv, out, sizeof out);
    if (st != 0) {
        snprintf(err, errlen, "mount -t %s%s%s failed (exit %d): %.300s", k->fstype, mopts ? " -o " : "",
                 mopts ? mopts : "", st, out);
        return -1;
    }
    /* The mount holds the loop device now; our descriptor is kept only
     * for an explicit detach at the end. */
    char run[4200];
    snprintf(run, sizeof run, "%.4000s/bench", cur->mnt);
    if (img->subvol) {
        if (make_subvolume(cur->mnt, "bench", err, errlen))
            return -1;
        cur->subvol = 1;
        cur->snap_seq = 0;
    } else if (mkdir(run, 0755)) {
        snprintf(err, errlen, "mkdir %.900s: %s", run, strerror(errno));
        return -1;
    }
    if (k->nocow && set_nocow(run, err, errlen))
        return -1;
    return 0;
}

/* ---- a device given up for formatting -------------------------------------- */

/* The sysfs directory of block device d (/sys/devices/.../block/sdb or
 * .../sdb/sdb1), or -1. */
static int sys_dir(dev_t d, char *out, size_t len)
{
    char p[64], real[4096];
    snprintf(p, sizeof p, "/sys/dev/block/%u:%u", major(d), minor(d));
    if (!realpath(p, real))
        return -1;
    snprintf(out, len, "%s", real);
    return 0;
}

/* 1 when other is dev itself or one of its partitions. */
static int is_dev_or_part(dev_t dev, dev_t other)
{
    char a[4096], b[4096], q[4200];
    if (other == dev)
        return 1;
    if (sys_dir(dev, a, sizeof a) || sys_dir(other, b, sizeof b))
        return 0;
    snprintf(q, sizeof q, "%s/partition", b);
    char *slash = strrchr(b, '/');
    if (access(q, F_OK) != 0 || !slash)
        return 0;
    *slash = 0;
    return strcmp(a, b) == 0;
}

/* The block device a path names (resolving links), or 0. */
static dev_t blockdev_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISBLK(st.st_mode) ? st.st_rdev : 0;
}

/* A mount of dev (with_parts: or of one of its partitions): its mount
 * point in mp and its source (a device path, or "") in src. */
static int find_mount(dev_t dev, int with_parts, char *mp, size_t mplen, char *src, size_t srclen)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[8192];
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned maj, min;
        char m[4096], s[4096] = "";
        if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, m) != 3)
            continue;
        const char *sep = strstr(line, " - ");
        if (sep)
            sscanf(sep + 3, "%*s %4095s", s);
        ut_mountinfo_unescape(m);
        ut_mountinfo_unescape(s);
        dev_t md = makedev(maj, min), sd = s[0] == '/' ? blockdev_of(s) : 0;
        if (with_parts ? is_dev_or_part(dev, md) || (sd && is_dev_or_part(dev, sd)) : md == dev || sd == dev) {
            snprintf(mp, mplen, "%s", m);
            snprintf(src, srclen, "%s", s);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* A swap area on dev (with_parts: or one of its partitions; or a swap
 * file on a filesystem there). */
static int find_swap(dev_t dev, int with_parts, char *what, size_t len)
{
    FILE *f = fopen("/proc/swaps", "r");
    char line[4096], name[4096];
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f)) {
        struct stat st;
        if (sscanf(line, "%4095s", name) != 1 || name[0] != '/' || stat(name, &st) != 0)
            continue;
        dev_t d = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
        if (with_parts ? is_dev_or_part(dev, d) : d == dev) {
            snprintf(what, len, "%s", name);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* The first entry of sys/holders: a device-mapper or md device built on
 * this one. */
static int first_holder(const char *sys, char *what, size_t len)
{
    char p[4600];
    if ((size_t)snprintf(p, sizeof p, "%s/holders", sys) >= sizeof p)
        return 0; /* no such sysfs path */
    DIR *d = opendir(p);
    struct dirent *e;
    int found = 0;
    while (d && !found && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(what, len, "%s", e->d_name);
            found = 1;
        }
    if (d)
        closedir(d);
    return found;
}

/* The first holder of the device at sys, or of one of its partitions. */
static int find_holder(const char *sys, char *what, size_t len)
{
    if (first_holder(sys, what, len))
        return 1;
    /* the partitions': subdirectories with a "partition" file */
    DIR *d = opendir(sys);
    struct dirent *e;
    int found = 0;
    while (d && !found && (e = readdir(d))) {
        char q[4400];
        snprintf(q, sizeof q, "%s/%s/partition", sys, e->d_name);
        if (e->d_name[0] == '.' || access(q, F_OK) != 0)
            continue;
        snprintf(q, sizeof q, "%s/%s", sys, e->d_name);
        found = first_holder(q, what, len);
    }
    if (d)
        closedir(d);
    return found;
}

/* The partitions the kernel knows on the device, as "sdb1 sdb2". */
static void list_partitions(const char *sys, char *out, size_t len)
{
    DIR *d = opendir(sys);
    struct dirent *e;
    size_t n = 0;
    out[0] = 0;
    while (d && (e = readdir(d))) {
        char q[4400];
        snprintf(q, sizeof q, "%s/%s/partition", sys, e->d_name);
        if (e->d_name[0] != '.' && access(q, F_OK) == 0 && n + strlen(e->d_name) + 2 < len)
            n += (size_t)snprintf(out + n, len - n, "%s%s", n ? " " : "", e->d_name);
    }
    if (d)
        closedir(d);
}

/* What the first bytes of the device say it carries, read here (so that
 * the check does not depend on blkid): "" when none of these. */
static void own_signature(int fd, char *what, size_t len)
{
    static const struct { off_t off; const char *magic; size_t n; const char *name; } sigs[] = {
        {1080, "\x53\xef", 2, "an ext2/3/4 filesystem"},
        {0, "XFSB", 4, "an XFS filesystem"},
        {65536 + 64, "_BHRfS_M", 8, "a btrfs filesystem"},
        {512, "EFI PART", 8, "a GPT partition table"},
        {4096, "EFI PART", 8, "a GPT partition table"},
        {4096 - 10, "SWAPSPACE2", 10, "a swap area"},
        {0, "LUKS\xba\xbe", 6, "a LUKS header"},
        {3, "NTFS    ", 8, "an NTFS filesystem"},
        {0x8001, "CD001", 5, "an ISO 9660 filesystem"},
    };
    unsigned char b[16];
    what[0] = 0;
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs && !what[0]; i++)
        if (pread(fd, b, sigs[i].n, sigs[i].off) == (ssize_t)sigs[i].n && memcmp(b, sigs[i].magic, sigs[i].n) == 0)
            snprintf(what, len, "%s", sigs[i].name);
    /* a ZFS label's uberblock ring, 128 KiB into label 0: slots of 1 KiB
     * (or the vdev's sector size) starting with the magic 0x00bab10c in
     * the pool's byte order */
    for (off_t off = 128 << 10; off < 256 << 10 && !what[0]; off += 1024) {
        static const unsigned char le[8] = {0x0c, 0xb1, 0xba, 0, 0, 0, 0, 0}, be[8] = {0, 0, 0, 0, 0, 0xba, 0xb1, 0x0c};
        if (pread(fd, b, 8, off) == 8 && (memcmp(b, le, 8) == 0 || memcmp(b, be, 8) == 0))
            snprintf(what, len, "a ZFS pool label");
    }
    if (!what[0] && pread(fd, b, 2, 510) == 2 && b[0] == 0x55 && b[1] == 0xaa)
        snprintf(what, len, "a DOS partition table or boot sector");
}

/* ---- aliases: other devices over the same bytes ---------------------------- */

/* "maj:min" read from a sysfs dev file, or 0. */
static dev_t read_devnum(const char *path)
{
    unsigned maj, min;
    FILE *f = fopen(path, "r");
    int ok = f && fscanf(f, "%u:%u", &maj, &min) == 2;
    if (f)
        fclose(f);
    return ok ? makedev(maj, min) : 0;
}

/* The device's name, "/dev/loop3" (as the kernel names it), or "7:3". */
static void dev_name(dev_t d, char *out, size_t len)
{
    char sys[4096];
    const char *slash;
    if (sys_dir(d, sys, sizeof sys) == 0 && (slash = strrchr(sys, '/')))
        snprintf(out, len, "/dev/%.200s", slash + 1);
    else
        snprintf(out, len, "%u:%u", major(d), minor(d));
}

/* An attached loop device, and what it reads and writes. */
struct mx_loop {
    dev_t rdev;
    dev_t file_dev;               /* its backing inode (LOOP_GET_STATUS64: lo_device, lo_inode), the same */
    uint64_t file_ino;            /* for every loop device on one file, renamed or deleted; 0, 0: unknown */
    dev_t below;                  /* the backing inode is a block device (lo_rdevice): its number; else 0 */
};

/* lo_device and lo_rdevice are the kernel's huge_encode_dev()
 * (include/linux/kdev_t.h): minor's low byte, major, minor's rest. */
static dev_t decode_kernel_dev(uint64_t v)
{
    return makedev((unsigned)((v & 0xfff00) >> 8), (unsigned)((v & 0xff) | ((v >> 12) & 0xfff00)));
}

/* Fills l for /sys/block/NAME: 0, or -1 when it is not attached. */
static int loop_read(const char *name, struct mx_loop *l)
{
    char p[320];
    struct stat st;
    memset(l, 0, sizeof *l);
    snprintf(p, sizeof p, "/sys/block/%s/dev", name);
    if (!(l->rdev = read_devnum(p)))
        return -1;
    snprintf(p, sizeof p, "/sys/block/%s/loop", name);
    if (access(p, F_OK) != 0)
        return -1; /* no loop/ directory: not attached */
    /* the backing inode by its numbers, which outlive a rename or unlink */
    snprintf(p, sizeof p, "/dev/%s", name);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    struct loop_info64 info;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == l->rdev) {
        int rc = ioctl(fd, LOOP_GET_STATUS64, &info), e = errno;
        close(fd);
        if (rc == 0) {
            l->file_dev = decode_kernel_dev(info.lo_device);
            l->file_ino = info.lo_inode;
            l->below = info.lo_rdevice ? decode_kernel_dev(info.lo_rdevice) : 0;
            return 0;
        }
        if (e == ENXIO)
            return -1; /* detached meanwhile */
    } else if (fd >= 0) {
        close(fd);
    }
    /* no node of its own in /dev: the path sysfs gives, while it names
     * the file (" (deleted)" once it does not) */
    char back[4200] = "";
    snprintf(p, sizeof p, "/sys/block/%s/loop/backing_file", name);
    FILE *f = fopen(p, "r");
    if (f && fgets(back, sizeof back, f))
        back[strcspn(back, "\n")] = 0;
    if (f)
        fclose(f);
    if (back[0] && stat(back, &st) == 0) {
        l->file_dev = st.st_dev;
        l->file_ino = (uint64_t)st.st_ino;
        l->below = S_ISBLK(st.st_mode) ? st.st_rdev : 0;
    }
    return 0;
}

/* The attached loop devices, in *out (freed by the caller): their number. */
static size_t loops_attached(struct mx_loop **out)
{
    DIR *d = opendir("/sys/block");
    struct dirent *e;
    size_t n = 0, cap = 0;
    *out = NULL;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "loop", 4) != 0)
            continue;
        if (n == cap) {
            struct mx_loop *g = realloc(*out, (cap = cap ? 2 * cap : 16) * sizeof *g);
            if (!g)
                break;
            *out = g;
        }
        if (loop_read(e->d_name, &(*out)[n]) == 0)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* How one alias is reached from the one before it, as the refusal says it. */
enum alias_rel { AL_DEVICE, AL_PARTITION, AL_WHOLE, AL_PEER, AL_BELOW, AL_ABOVE };
static const char *const alias_says[] = {
    [AL_DEVICE] = "",
    [AL_PARTITION] = "holds the partition",
    [AL_WHOLE] = "is a partition of",
    [AL_PEER] = "shares its backing file with",
    [AL_BELOW] = "is stacked on",
    [AL_ABOVE] = "is the backing device of",
};

/* A device that reads or writes some of the same bytes as the one given
 * up (alias 0, the device itself). */
struct alias {
    dev_t rdev;
    int from;                     /* the alias it was reached from (-1: the device itself) */
    enum alias_rel rel;           /* and how */
    int depth;                    /* steps from the device */
    int whole_only;               /* a whole disk reached from its partition: its other partitions
                                     are not aliases, and its exclusive claim may be theirs */
    int under;                    /* the device, or what it is built on (a loop's backing device, a
                                     partition's disk), which may be attached and idle */
};
#define MX_ALIAS_MAX 64
#define MX_ALIAS_DEPTH 16

static const struct mx_loop *loop_of(const struct mx_loop *loops, size_t n, dev_t rdev)
{
    for (size_t i = 0; i < n; i++)
        if (loops[i].rdev == rdev)
            return &loops[i];
    return NULL;
}

/* Appends rdev as reached from a[from], unless it is there already:
 * 0, or -1 when there would be more than MX_ALIAS_MAX or the chain would
 * be deeper than MX_ALIAS_DEPTH. */
static int alias_add(struct alias *a, int *n, dev_t rdev, int from, enum alias_rel rel, int whole_only, int under)
{
    for (int i = 0; i < *n; i++)
        if (a[i].rdev == rdev)
            return 0;
    if (*n == MX_ALIAS_MAX || a[from].depth == MX_ALIAS_DEPTH)
        return -1;
    a[*n] = (struct alias){rdev, from, rel, a[from].depth + 1, whole_only, under};
    (*n)++;
    return 0;
}

/* Every alias of a[0], breadth first (the nearest first): a device's
 * partitions, a partition's whole disk (but not its siblings), the other
 * loop devices on a loop device's backing file, the device a loop device
 * is stacked on, the loop devices stacked on a device, and theirs in
 * turn.  The number of aliases, a[0] included; or -1 with the reason in
 * err when the chain cannot be followed to its end. */
static int alias_walk(struct alias *a, const char *dev, const struct mx_loop *loops, size_t nloops, char *err,
                      size_t errlen)
{
    int n = 1;
    for (int i = 0; i < n; i++) {
        char sys[4096], q[4400];
        int bad = 0;
        if (sys_dir(a[i].rdev, sys, sizeof sys) == 0) {
            DIR *d = a[i].whole_only ? NULL : opendir(sys);
            struct dirent *e;
            while (d && !bad && (e = readdir(d))) {
                snprintf(q, sizeof q, "%s/%s/partition", sys, e->d_name);
                if (e->d_name[0] == '.' || access(q, F_OK) != 0)
                    continue;
                snprintf(q, sizeof q, "%s/%s/dev", sys, e->d_name);
                dev_t p = read_devnum(q);
                bad = p && alias_add(a, &n, p, i, AL_PARTITION, 0, 0);
            }
            if (d)
                closedir(d);
            snprintf(q, sizeof q, "%s/partition", sys);
            char *slash = strrchr(sys, '/');
            if (!bad && access(q, F_OK) == 0 && slash) {
                snprintf(q, sizeof q, "%.*s/dev", (int)(slash - sys), sys);
                dev_t w = read_devnum(q);
                bad = w && alias_add(a, &n, w, i, AL_WHOLE, 1, a[i].under);
            }
        }
        const struct mx_loop *l = loop_of(loops, nloops, a[i].rdev);
        for (size_t k = 0; !bad && l && k < nloops; k++) {
            const struct mx_loop *o = &loops[k];
            if (o != l && (o->file_dev || o->file_ino) && o->file_dev == l->file_dev && o->file_ino == l->file_ino)
                bad = alias_add(a, &n, o->rdev, i, AL_PEER, 0, 0);
        }
        if (!bad && l && l->below)
            bad = alias_add(a, &n, l->below, i, AL_BELOW, 0, a[i].under);
        for (size_t k = 0; !bad && k < nloops; k++)
            if (loops[k].below == a[i].rdev)
                bad = alias_add(a, &n, loops[k].rdev, i, AL_ABOVE, 0, 0);
        if (bad) {
            snprintf(err, errlen, "%.900s: more than %d devices over the same data, or a chain deeper than %d: "
                                  "not checked", dev, MX_ALIAS_MAX, MX_ALIAS_DEPTH);
            return -1;
        }
    }
    return n;
}

/* The refusal for alias i: the way from the device to it, then use --
 * "/dev/loop9 is stacked on /dev/loop8, which is stacked on /dev/loop3,
 * mounted on /mnt/x". */
static void alias_say(const struct alias *a, int i, const char *dev, const char *use, char *err, size_t errlen)
{
    int way[MX_ALIAS_DEPTH + 1], n = 0;
    for (int j = i; j > 0 && n <= MX_ALIAS_DEPTH; j = a[j].from)
        way[n++] = j;
    size_t at = (size_t)snprintf(err, errlen, "%.900s", dev);
    for (int k = n - 1; k >= 0 && at < errlen; k--) {
        char name[300];
        dev_name(a[way[k]].rdev, name, sizeof name);
        at += (size_t)snprintf(err + at, errlen - at, "%s%s %s", k == n - 1 ? " " : ", which ",
                               alias_says[a[way[k]].rel], name);
    }
    if (at < errlen)
        snprintf(err + at, errlen - at, ", %s", use);
}

/* 1 when an exclusive open of the device fails with EBUSY: something (a
 * mount, swap, a holder, a program) has claimed it. */
static int claimed(dev_t d)
{
    char name[300];
    dev_name(d, name, sizeof name);
    int fd = open(name, O_RDONLY | O_EXCL | O_CLOEXEC);
    struct stat st;
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    /* (a node of that name that is not this device says nothing) */
    return errno == EBUSY && stat(name, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == d;
}

/* Refuses a device one of whose aliases is in use, naming it: first any
 * mounted, swap or held (what the user will recognise), then any claimed
 * exclusively, then any other loop device on the same data -- a second
 * loop device on the backing file, or one stacked on the device -- even
 * idle, since it is someone's way to the same bytes.  What the device is
 * built on may be attached and idle: a loop device stacked on an unused
 * one, a partition of an unused disk.  A sibling partition is not an
 * alias.  0, or -1 with the one-line reason in err. */
static int check_aliases(const char *dev, dev_t rdev, char *err, size_t errlen)
{
    struct mx_loop *loops;
    size_t nloops = loops_attached(&loops);
    struct alias a[MX_ALIAS_MAX] = {{rdev, -1, AL_DEVICE, 0, 0, 1}};
    int n = alias_walk(a, dev, loops, nloops, err, errlen), rc = n < 0 ? -1 : 0;
    char use[4400], mp[4096], src[4096], sys[4096];
    /* (the device's own mounts, swap and holders were checked before) */
    for (int i = 1; i < n && !rc; i++) {
        use[0] = 0;
        if (find_mount(a[i].rdev, 0, mp, sizeof mp, src, sizeof src))
            snprintf(use, sizeof use, "mounted on %.4000s%s", mp, strcmp(mp, "/") ? "" : " (the root filesystem)");
        else if (find_swap(a[i].rdev, 0, src, sizeof src))
            snprintf(use, sizeof use, "an active swap area");
        else if (sys_dir(a[i].rdev, sys, sizeof sys) == 0 && first_holder(sys, src, 256))
            snprintf(use, sizeof use, "held by %s (a device built on it, e.g. device-mapper or md)", src);
        if (use[0]) {
            alias_say(a, i, dev, use, err, errlen);
            rc = -1;
        }
    }
    for (int i = 1; i < n && !rc; i++)
        if (!a[i].whole_only && claimed(a[i].rdev)) {
            alias_say(a, i, dev, "in use (claimed exclusively: mounted, swap, or held)", err, errlen);
            rc = -1;
        }
    for (int i = 1; i < n && !rc; i++)
        if (!a[i].under && loop_of(loops, nloops, a[i].rdev)) {
            alias_say(a, i, dev, "attached, though not mounted", err, errlen);
            rc = -1;
        }
    free(loops);
    return rc;
}

int mx_device_check(const char *dev, const char *destroy, char *err, size_t errlen)
{
    struct stat st, ds;
    char sys[4096], what[4200], out[4096];

    if (stat(dev, &st) != 0) {
        snprintf(err, errlen, "%.900s: %s", dev, strerror(errno));
        return -1;
    }
    if (!S_ISBLK(st.st_mode)) {
        snprintf(err, errlen, "%.900s is not a block device", dev);
        return -1;
    }
    if (destroy && (stat(destroy, &ds) != 0 || !S_ISBLK(ds.st_mode) || ds.st_rdev != st.st_rdev)) {
        snprintf(err, errlen, "%.900s: --destroy-data names %.900s, not this device", dev, destroy);
        return -1;
    }
    if (sys_dir(st.st_rdev, sys, sizeof sys)) {
        snprintf(err, errlen, "%.900s: the kernel does not list it in /sys/dev/block", dev);
        return -1;
    }
    char mp[4096], src[4096];
    if (find_mount(st.st_rdev, 1, mp, sizeof mp, src, sizeof src)) {
        snprintf(err, errlen, "%.900s is mounted, or holds a mounted partition: %.900s%s%.900s%s", dev, mp,
                 src[0] ? " from " : "", src, strcmp(mp, "/") ? "" : " (the root filesystem)");
        return -1;
    }
    if (find_swap(st.st_rdev, 1, what, sizeof what)) {
        snprintf(err, errlen, "%.900s holds an active swap area: %.900s", dev, what);
        return -1;
    }
    if (find_holder(sys, what, sizeof what)) {
        snprintf(err, errlen, "%.900s is held by %.200s (a device built on it, e.g. device-mapper or md)", dev, what);
        return -1;
    }
    /* its aliases: a partition's disk, loop devices on the same file,
     * stacked on it or under it */
    if (check_aliases(dev, st.st_rdev, err, errlen))
        return -1;
    /* the kernel's own answer: an exclusive open fails while anything
     * (a mount, swap, a holder) has claimed the device */
    int fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%.900s is in use (%s)", dev,
                 errno == EBUSY ? "claimed exclusively: mounted, swap, or held" : strerror(errno));
        return -1;
    }
    own_signature(fd, what, sizeof what);
    close(fd);
    list_partitions(sys, out, sizeof out);
    if (!what[0] && out[0])
        snprintf(what, sizeof what, "partitions (%.2000s)", out);
    if (!what[0] && mx_have_tool("blkid")) {
        /* blkid -p: the superblocks it knows, read from the device itself
         * (exit 2: nothing found) */
        char *argv[] = {"blkid", "-p", "-o", "export", (char *)dev, NULL};
        int rc = mx_run_tool(argv, out, sizeof out);
        if (rc == 0) {
            char type[64] = "unknown";
            for (char *save = NULL, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                if (strncmp(l, "TYPE=", 5) == 0 || strncmp(l, "PTTYPE=", 7) == 0)
                    snprintf(type, sizeof type, "%s", l);
            snprintf(what, sizeof what, "a signature blkid -p reports (%s)", type);
        }
    }
    if (what[0] && !destroy) {
        snprintf(err, errlen, "%.900s carries %.1000s; formatting it destroys that: give --destroy-data %.900s",
                 dev, what, dev);
        return -1;
    }
    return 0;
}

/* ---- before the first ---------------------------------------------------- */

int mx_preflight(const struct mx_fs_kind *const *fs, size_t n, int images)
{
    int needs_loop = 0;
    if (geteuid() != 0) {
        fprintf(stderr, "commitlab matrix: needs root (it runs mkfs, attaches loop devices and mounts); "
                        "run it as root\n");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct mx_fs_kind *k = fs[i];
        char why[512];
        if (k->zfs && mx_zfs_preflight(why, sizeof why)) {
            fprintf(stderr, "commitlab matrix: --fs zfs: %s\n", why);
            return -1;
        }
        if (k->mkfs && !mx_have_tool(k->mkfs)) {
            fprintf(stderr, "commitlab matrix: --fs %s needs %s, which is not installed (Debian: apt-get install "
                            "%s)\n", k->name, k->mkfs, k->package);
            return -1;
        }
        needs_loop |= k->mkfs != NULL && images;
    }
    if (!mx_have_tool("mount")) {
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
        char home[4096], p[4200];
        if (mx_fs_kinds[i].zfs) {
            mx_zfs_clear_leftovers(workdir);
            continue;
        }
        mx_fs_home(home, sizeof home, workdir, &mx_fs_kinds[i]);
        if (!ut_scratch_ours(home))
            continue; /* absent, or the user's: never touched */
        snprintf(p, sizeof p, "%.3000s/mnt", home);
        if (mx_is_mounted(p)) {
            int n = delete_snapshots(p, NULL);
            if (n)
                fprintf(stderr, "commitlab matrix: deleted %d snapshot%s in %s, left by an earlier run\n", n,
                        n == 1 ? "" : "s", p);
            fprintf(stderr, "commitlab matrix: unmounting %s, left by an earlier run\n", p);
            mx_umount(p);
        }
        int still_mounted = mx_is_mounted(p);
        if (mx_fs_kinds[i].mkfs) {
            snprintf(p, sizeof p, "%.3000s/%s.img", home, mx_fs_kinds[i].name);
            detach_loops_of(p);
        }
        if (!still_mounted)
            ut_scratch_remove(home);
    }
}
