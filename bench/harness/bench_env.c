/*
 * bench_env.c -- what a result needs to be trusted later: the kernel, the
 * filesystem under the run directory (type from statfs and from
 * /proc/self/mountinfo, mount and superblock options), its block device
 * (for /sys/block/DEV/stat), whether an ext4 there runs a journal, the
 * CPU; and the process's I/O counters
 * (/proc/self/io).  The runner probes every run's directory; bench and
 * tour warn before they start when it is on tmpfs.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench_env.h"

/* Copies src into dst[size], truncating. */
static void copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

static const struct { uint64_t magic; const char *name; } fs_magics[] = {
    {0xEF53, "ext2/3/4"}, {0x58465342, "xfs"}, {0x9123683E, "btrfs"}, {0x01021994, "tmpfs"},
    {0x858458f6, "ramfs"}, {0x2fc12fc1, "zfs"}, {0x794c7630, "overlayfs"}, {0xF2F52010, "f2fs"},
    {0x6969, "nfs"}, {0x65735546, "fuse"}, {0x5346544e, "ntfs"}, {0x4d44, "vfat"},
};

/* The length of mount point mnt when it contains path (a prefix ending at
 * a '/'), else 0. */
static size_t mount_covers(const char *mnt, const char *path)
{
    size_t n = strlen(mnt);
    if (strcmp(mnt, "/") == 0)
        return 1;
    return strncmp(mnt, path, n) == 0 && (path[n] == '/' || path[n] == 0) ? n : 0;
}

/* Finds the mountinfo line of the mount holding dir: by st_dev (the last
 * match wins: later mounts shadow earlier ones), or, where the filesystem
 * reports another st_dev than its mount's (btrfs: one anonymous device
 * per subvolume), the last mount whose point is the longest prefix of
 * dir's real path. */
static void probe_mount(const char *dir, dev_t dev, struct bench_env *e)
{
    char real[4096];
    int by_path = 0;
    size_t best = 0;
    if (!realpath(dir, real))
        real[0] = 0;
again:;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[4096];
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        unsigned maj, min;
        char root[1024], mnt[1024], opts[512];
        int n = 0;
        if (sscanf(line, "%*u %*u %u:%u %1023s %1023s %511s%n", &maj, &min, root, mnt, opts, &n) < 5)
            continue;
        if (!by_path && makedev(maj, min) != dev)
            continue;
        if (by_path) {
            size_t len = mount_covers(mnt, real);
            if (!len || len < best)
                continue;
            best = len;
        }
        const char *sep = strstr(line, " - ");
        if (!sep)
            continue;
        char fstype[64], source[256], sopts[512];
        sopts[0] = 0;
        if (sscanf(sep + 3, "%63s %255s %511s", fstype, source, sopts) < 2)
            continue;
        copy_str(e->fs_type, sizeof e->fs_type, fstype);
        copy_str(e->mount_point, sizeof e->mount_point, mnt);
        copy_str(e->mount_source, sizeof e->mount_source, source);
        copy_str(e->mount_options, sizeof e->mount_options, opts);
        copy_str(e->super_options, sizeof e->super_options, sopts);
    }
    fclose(f);
    if (!e->mount_point[0] && !by_path && real[0]) {
        by_path = 1;
        goto again;
    }
}

/* The device whose /sys/block/.../stat counts this directory's writes:
 * the st_dev's own entry when it is a block device (a partition has its
 * own stat too), else the mount source (btrfs reports an anonymous
 * st_dev). */
static void probe_device(dev_t dev, struct bench_env *e)
{
    char p[640], link[512];
    snprintf(p, sizeof p, "/sys/dev/block/%u:%u", major(dev), minor(dev));
    ssize_t n = readlink(p, link, sizeof link - 1);
    if (n > 0) {
        link[n] = 0;
        const char *base = strrchr(link, '/');
        copy_str(e->device, sizeof e->device, base ? base + 1 : link);
        return;
    }
    if (strncmp(e->mount_source, "/dev/", 5) == 0) {
        char rp[512];
        const char *name = e->mount_source + 5;
        if (realpath(e->mount_source, rp) && strncmp(rp, "/dev/", 5) == 0)
            name = rp + 5;
        snprintf(p, sizeof p, "/sys/class/block/%s/stat", name);
        if (access(p, R_OK) == 0)
            copy_str(e->device, sizeof e->device, name);
    }
}

/* ext3/ext4 with a journal: jbd2 lists each journal it runs in
 * /proc/fs/jbd2 as DEVICE-INODE (vda-8, loop0-8).  An ext4 made with
 * -O ^has_journal has no entry, and its fdatasync commits no journal: a
 * different filesystem to compare against. */
static int probe_journal(const struct bench_env *e)
{
    if (strcmp(e->fs_type, "ext4") != 0 && strcmp(e->fs_type, "ext3") != 0)
        return -1;
    if (!e->device[0])
        return -1;
    DIR *d = opendir("/proc/fs/jbd2");
    if (!d)
        return access("/proc/fs", F_OK) == 0 ? 0 : -1; /* no jbd2 at all: no journal runs */
    size_t n = strlen(e->device);
    int found = 0;
    struct dirent *de;
    while (!found && (de = readdir(d)) != NULL) {
        const char *p = de->d_name + n;
        if (strncmp(de->d_name, e->device, n) != 0 || *p != '-' || !isdigit((unsigned char)p[1]))
            continue;
        for (p++; isdigit((unsigned char)*p); p++)
            ;
        found = *p == 0;
    }
    closedir(d);
    return found;
}

void bench_env_probe(const char *dir, struct bench_env *e)
{
    struct utsname u;
    struct statfs sf;
    struct stat st;

    memset(e, 0, sizeof *e);
    if (uname(&u) == 0) {
        copy_str(e->kernel, sizeof e->kernel, u.release);
        copy_str(e->os, sizeof e->os, u.sysname);
        copy_str(e->machine, sizeof e->machine, u.machine);
        copy_str(e->hostname, sizeof e->hostname, u.nodename);
    }
    e->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                const char *v = strchr(line, ':');
                if (v) {
                    v++;
                    while (*v == ' ')
                        v++;
                    copy_str(e->cpu_model, sizeof e->cpu_model, v);
                    e->cpu_model[strcspn(e->cpu_model, "\n")] = 0;
                }
                break;
            }
        fclose(f);
    }
    if (statfs(dir, &sf) == 0) {
        e->fs_magic = (uint64_t)sf.f_type;
        snprintf(e->fs_magic_name, sizeof e->fs_magic_name, "0x%llx", (unsigned long long)e->fs_magic);
        for (size_t i = 0; i < sizeof fs_magics / sizeof *fs_magics; i++)
            if (fs_magics[i].magic == e->fs_magic)
                copy_str(e->fs_magic_name, sizeof e->fs_magic_name, fs_magics[i].name);
        e->volatile_fs = e->fs_magic == 0x01021994 || e->fs_magic == 0x858458f6;
    }
    if (stat(dir, &st) == 0) {
        snprintf(e->dev_id, sizeof e->dev_id, "%u:%u", major(st.st_dev), minor(st.st_dev));
        probe_mount(dir, st.st_dev, e);
        probe_device(st.st_dev, e);
    }
    if (!e->fs_type[0])
        copy_str(e->fs_type, sizeof e->fs_type, e->fs_magic_name);
    e->fs_journal = probe_journal(e);
}

void bench_proc_io(int64_t *write_bytes, int64_t *wchar)
{
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    *write_bytes = *wchar = -1;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        long long v;
        if (sscanf(line, "write_bytes: %lld", &v) == 1)
            *write_bytes = v;
        else if (sscanf(line, "wchar: %lld", &v) == 1)
            *wchar = v;
    }
    fclose(f);
}

/* Field i (0-based) of /sys/class/block/DEV/stat, in sectors, as bytes. */
static int64_t device_sectors(const char *device, int i)
{
    char p[160];
    unsigned long long f[7];
    if (!device || !device[0])
        return -1;
    snprintf(p, sizeof p, "/sys/class/block/%s/stat", device);
    FILE *fp = fopen(p, "r");
    if (!fp)
        return -1;
    /* reads, merged, sectors, ticks, writes, merged, sectors written, ... */
    int n = fscanf(fp, "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6]);
    fclose(fp);
    return n == 7 ? (int64_t)(f[i] * 512ull) : -1;
}

int64_t bench_device_written(const char *device) { return device_sectors(device, 6); }

int64_t bench_device_read(const char *device) { return device_sectors(device, 2); }

void bench_warn_volatile(const char *dir)
{
    struct bench_env e;
    mkdir(dir, 0755);
    bench_env_probe(dir, &e);
    if (e.volatile_fs)
        fprintf(stderr, "commitlab bench: warning: %s is on %s: nothing is durable there, and a sync "
                        "returns at memory speed\n", dir, e.fs_type);
}
