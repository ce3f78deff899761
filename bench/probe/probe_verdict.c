/*
 * probe_verdict.c -- what filesystem and device the probe ran on, and what
 * its numbers mean, in plain words.
 *
 * The filesystem comes from statfs(2) (its magic number tells tmpfs and
 * ramfs apart from the rest) and from /proc/self/mountinfo (the line whose
 * device number is the directory's st_dev, preferring the longest mount
 * point that contains it): type, source and mount options.  A source that
 * is a block device is looked up in /sys/dev/block for its class
 * (rotational or not, loop and its backing file) and write-cache mode.
 *
 * The verdict, in this order:
 *   1. tmpfs/ramfs: no durability, data lives in memory.
 *   2. fdatasync about as cheap as a write that is not synced (at most 3x):
 *      this sync may not reach stable storage.
 *   3. fdatasync faster than the device class can physically make a write
 *      durable (rotating: 1000 usecs; flash: 10 usecs): same words -- the
 *      HFS+ case of the pgsql-hackers pg_test_fsync thread, where only
 *      F_FULLFSYNC was real.
 *   4. otherwise: plausible, with the caveat that only a power cut proves it.
 * Whether O_DIRECT works is tested on its own (an aligned 4kB write).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "probe.h"

#define MAGIC_TMPFS 0x01021994UL
#define MAGIC_RAMFS 0x858458f6UL

#define FLOOR_ROTATIONAL_US 1000.0 /* a 15,000 rpm platter turns once in 4 ms */
#define FLOOR_FLASH_US 10.0        /* one write plus a cache flush on the fastest flash */
#define CHEAP_RATIO 3.0            /* "about as cheap as a write that is not synced" */

static const char *magic_name(unsigned long m)
{
    switch (m) {
    case 0xEF53UL: return "ext2/3/4";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case MAGIC_TMPFS: return "tmpfs";
    case MAGIC_RAMFS: return "ramfs";
    case 0x2FC12FC1UL: return "zfs";
    case 0xF2F52010UL: return "f2fs";
    case 0x6969UL: return "nfs";
    case 0x794c7630UL: return "overlayfs";
    case 0x65735546UL: return "fuse";
    default: return "unknown";
    }
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
    char *d = s;
    while (*s) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
            *d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 4;
        } else {
            *d++ = *s++;
        }
    }
    *d = '\0';
}

static int path_under(const char *path, const char *mnt)
{
    size_t n = strlen(mnt);
    if (strcmp(mnt, "/") == 0)
        return 1;
    return strncmp(path, mnt, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Appends the options of b that a does not have yet. */
static void merge_options(char *dst, size_t n, const char *a, const char *b)
{
    char tmp[512];
    snprintf(dst, n, "%s", a);
    snprintf(tmp, sizeof tmp, "%s", b);
    for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char probe[520];
        snprintf(probe, sizeof probe, ",%s,", t);
        char have[1040];
        snprintf(have, sizeof have, ",%s,", dst);
        if (!strstr(have, probe)) {
            size_t l = strlen(dst);
            snprintf(dst + l, n - l, "%s%s", l ? "," : "", t);
        }
    }
}

/* Copies as much of src as fits. */
static void scopy(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

static int read_line(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(out, (int)n, f)) {
        fclose(f);
        return -1;
    }
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

static void block_device(struct probe_fsinfo *fs)
{
    struct stat st;
    char sys[128], real[PATH_MAX], q[PATH_MAX + 64], v[64];

    if (strncmp(fs->source, "/dev/", 5) != 0 || stat(fs->source, &st) != 0 || !S_ISBLK(st.st_mode))
        return;
    snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
    if (!realpath(sys, real))
        return;
    const char *base = strrchr(real, '/');
    scopy(fs->device, sizeof fs->device, base ? base + 1 : real);
    /* a partition's queue is its disk's */
    snprintf(q, sizeof q, "%s/partition", real);
    const char *qdir = access(q, F_OK) == 0 ? "/../queue" : "/queue";
    snprintf(q, sizeof q, "%s%s/rotational", real, qdir);
    if (read_line(q, v, sizeof v) == 0)
        snprintf(fs->device_class, sizeof fs->device_class, "%s", strcmp(v, "1") == 0 ? "rotational" : "non-rotational");
    snprintf(q, sizeof q, "%s%s/write_cache", real, qdir);
    if (read_line(q, v, sizeof v) == 0)
        scopy(fs->write_cache, sizeof fs->write_cache, v);
    if (strncmp(fs->device, "loop", 4) == 0) {
        snprintf(fs->device_class, sizeof fs->device_class, "loop");
        snprintf(q, sizeof q, "%s/loop/backing_file", real);
        read_line(q, fs->backing, sizeof fs->backing);
    }
}

void probe_fsinfo(struct probe_ctx *c)
{
    struct probe_fsinfo *fs = &c->fs;
    struct statfs sfs;
    struct stat st;
    char real[PATH_MAX], line[4096];
    size_t best = 0;
    int best_devmatch = 0;

    memset(fs, 0, sizeof *fs);
    if (statfs(c->dir, &sfs) == 0) {
        fs->magic = (unsigned long)sfs.f_type;
        fs->in_memory = fs->magic == MAGIC_TMPFS || fs->magic == MAGIC_RAMFS;
        snprintf(fs->fstype, sizeof fs->fstype, "%s", magic_name(fs->magic));
    }
    if (stat(c->dir, &st) != 0 || !realpath(c->dir, real))
        return;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        /* id parent maj:min root mountpoint options [optional...] - type source superoptions */
        unsigned maj, min;
        char mnt[1024], opts[512];
        if (sscanf(line, "%*u %*u %u:%u %*s %1023s %511s", &maj, &min, mnt, opts) != 4)
            continue;
        char *sep = strstr(line, " - ");
        if (!sep)
            continue;
        char type[32], src[256], super[512] = "";
        if (sscanf(sep + 3, "%31s %255s %511s", type, src, super) < 2)
            continue;
        unescape(mnt);
        unescape(src);
        int devmatch = maj == major(st.st_dev) && min == minor(st.st_dev);
        if (!path_under(real, mnt))
            continue;
        size_t len = strlen(mnt);
        /* the directory's own device first, then the deepest mount point; a
         * later line of equal depth is a mount on top of an earlier one */
        if (devmatch < best_devmatch || (devmatch == best_devmatch && len < best))
            continue;
        best_devmatch = devmatch;
        best = len;
        scopy(fs->fstype, sizeof fs->fstype, type);
        scopy(fs->source, sizeof fs->source, src);
        scopy(fs->mountpoint, sizeof fs->mountpoint, mnt);
        merge_options(fs->options, sizeof fs->options, opts, super);
    }
    fclose(f);
    if (!fs->in_memory)
        fs->in_memory = strcmp(fs->fstype, "tmpfs") == 0 || strcmp(fs->fstype, "ramfs") == 0;
    block_device(fs);
}

/* Prints text as lines of at most 78 columns, each indented by 8. */
static void print_wrapped(FILE *out, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t width = 70, n = strlen(p);
        if (n > width) {
            n = width;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0)
                n = width;
        }
        fprintf(out, "        %.*s\n", (int)n, p);
        p += n;
        while (*p == ' ')
            p++;
    }
}

static void odirect_test(struct probe_ctx *c)
{
    int fd = probe_open_direct(c->path, O_RDWR);
    if (fd < 0) {
        c->odirect_ok = 0;
        snprintf(c->odirect_why, sizeof c->odirect_why, "open(O_DIRECT): %s", strerror(errno));
        return;
    }
    ssize_t n = pwrite(fd, c->buf, 4096, 0);
    int e = errno;
    close(fd);
    if (n != 4096) {
        c->odirect_ok = 0;
        snprintf(c->odirect_why, sizeof c->odirect_why, "aligned 4kB write with O_DIRECT: %s",
                 n < 0 ? strerror(e) : "short write");
        return;
    }
    c->odirect_ok = 1;
    c->odirect_why[0] = '\0';
}

void probe_verdict(struct probe_ctx *c)
{
    struct probe_fsinfo *fs = &c->fs;
    char text[1024], info[2048];
    size_t l = 0;

    probe_prepare_file(c);
    if (c->fdatasync_us < 0 || c->write_us < 0) {
        /* the sections that measure these did not run: measure briefly */
        probe_progress(c, "verdict: measuring fdatasync and non-synced writes");
        if (c->fdatasync_us < 0)
            c->fdatasync_us = probe_measure_us(c, 1, probe_beyond_secs(c));
        if (c->write_us < 0)
            c->write_us = probe_measure_us(c, 0, probe_beyond_secs(c));
    }
    odirect_test(c);
    if (atomic_load(&probe_interrupted))
        return;

    fprintf(c->out, "\nVerdict:\n");
    if (fs->mountpoint[0])
        snprintf(info, sizeof info, "%s on %s, mounted at %s (%s)", fs->fstype, fs->source, fs->mountpoint,
                 fs->options);
    else
        snprintf(info, sizeof info, "%s (statfs magic 0x%lx)", fs->fstype, fs->magic);
    fprintf(c->out, "        %-20s%s\n", "filesystem", info);
    if (fs->device[0]) {
        if (strcmp(fs->device_class, "loop") == 0)
            snprintf(info, sizeof info, "%s, a loop device backed by the file %s", fs->device,
                     fs->backing[0] ? fs->backing : "(unknown)");
        else
            snprintf(info, sizeof info, "%s, %s, write cache \"%s\"", fs->device,
                     fs->device_class[0] ? fs->device_class : "class unknown",
                     fs->write_cache[0] ? fs->write_cache : "unknown");
    } else {
        snprintf(info, sizeof info, "%s", fs->in_memory ? "none (memory)" : "not a block device");
    }
    fprintf(c->out, "        %-20s%s\n", "device", info);
    if (c->odirect_ok)
        snprintf(info, sizeof info, "works");
    else
        snprintf(info, sizeof info, "refused (%s)", c->odirect_why);
    fprintf(c->out, "        %-20s%s\n", "O_DIRECT", info);
    if (c->fdatasync_us >= 0 && c->write_us >= 0)
        snprintf(info, sizeof info, "%.0f usecs per 8kB write + fdatasync, %.1f per 8kB write alone",
                 c->fdatasync_us, c->write_us);
    else
        snprintf(info, sizeof info, "could not be measured");
    fprintf(c->out, "        %-20s%s\n", "sync cost", info);

    double sync = c->fdatasync_us, wr = c->write_us;
    int rot = strcmp(fs->device_class, "rotational") == 0, flash = strcmp(fs->device_class, "non-rotational") == 0;
    if (fs->in_memory) {
        c->durability = "none";
        l += (size_t)snprintf(text + l, sizeof text - l,
                              "no durability: data lives in memory (%s). Every sync returns without touching a "
                              "device, and a power failure or reboot loses everything written here.",
                              fs->fstype);
    } else if (sync < 0 || wr < 0) {
        c->durability = "unknown";
        l += (size_t)snprintf(text + l, sizeof text - l, "the cost of a sync could not be measured.");
    } else if (sync <= CHEAP_RATIO * wr) {
        c->durability = "suspect";
        l += (size_t)snprintf(text + l, sizeof text - l,
                              "this sync may not reach stable storage: fdatasync costs about as little as a write "
                              "that is not synced (%.0f vs %.0f usecs).",
                              sync, wr);
    } else if ((rot && sync < FLOOR_ROTATIONAL_US) || (flash && sync < FLOOR_FLASH_US)) {
        c->durability = "suspect";
        l += (size_t)snprintf(text + l, sizeof text - l,
                              "this sync may not reach stable storage: %.0f usecs per fdatasync is faster than a %s "
                              "device can make a write durable (about %.0f usecs at least).",
                              sync, rot ? "rotating" : "flash", rot ? FLOOR_ROTATIONAL_US : FLOOR_FLASH_US);
        if (rot && (strncmp(fs->device, "vd", 2) == 0 || strncmp(fs->device, "xvd", 3) == 0))
            l += (size_t)snprintf(text + l, sizeof text - l,
                                  " %s is a virtual disk: it calls itself rotational by default, and what a cache "
                                  "flush does is decided by the host.",
                                  fs->device);
    } else {
        c->durability = "plausible";
        l += (size_t)snprintf(text + l, sizeof text - l,
                              "syncs cost what reaching a device costs (%.0f usecs, %.0fx a write that is not "
                              "synced): nothing here suggests they are skipped. A probe cannot prove durability; "
                              "only cutting the power can.",
                              sync, sync / wr);
    }
    if (!fs->in_memory && strcmp(fs->device_class, "loop") == 0 && l < sizeof text)
        l += (size_t)snprintf(text + l, sizeof text - l,
                              " Syncs on a loop device end as syncs of its backing file, so they are as durable "
                              "as that file's filesystem makes them.");
    if (!c->odirect_ok && l < sizeof text)
        l += (size_t)snprintf(text + l, sizeof text - l,
                              " O_DIRECT does not work here: open_datasync and open_sync print n/a*, and a log "
                              "cannot bypass the page cache.");
    snprintf(c->verdict, sizeof c->verdict, "%s", text);
    fprintf(c->out, "\n");
    print_wrapped(c->out, c->verdict);
    fflush(c->out);
}
