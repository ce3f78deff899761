/*
 * probe_verdict.c -- what filesystem and device the probe ran on, and what
 * its numbers mean, in plain words.
 *
 * The filesystem comes from statfs(2) (its magic number tells tmpfs and
 * ramfs apart from the rest) and from /proc/self/mountinfo (the line whose
 * device number is the directory's st_dev, preferring the longest mount
 * point that contains it): type, source and mount options.  A source that
 * is a block device is looked up in /sys/dev/block for its class
 * (rotational or not, loop and its backing file), its write-cache mode
 * and whether it takes FUA (Force Unit Access) writes -- a partition's
 * from its disk's queue -- and a loop device is followed to the device
 * under its backing file's filesystem, and so on down (the chain), so
 * that the cache a durable write must get through is named.
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
#include "ut_file.h"

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

/* Fills d from /sys/class/block/NAME: 0, or -1 when there is no such
 * device. */
static int dev_info(const char *name, struct probe_dev *d)
{
    char sys[PATH_MAX], real[PATH_MAX], q[PATH_MAX + 64], v[64];
    memset(d, 0, sizeof *d);
    snprintf(sys, sizeof sys, "/sys/class/block/%s", name);
    if (!realpath(sys, real))
        return -1;
    scopy(d->name, sizeof d->name, name);
    scopy(d->disk, sizeof d->disk, name);
    /* a partition's queue is its disk's */
    snprintf(q, sizeof q, "%s/partition", real);
    int part = access(q, F_OK) == 0;
    if (part) {
        char *slash = strrchr(real, '/');
        if (slash) {
            *slash = '\0';
            const char *disk = strrchr(real, '/');
            scopy(d->disk, sizeof d->disk, disk ? disk + 1 : real);
            *slash = '/';
        }
    }
    const char *qdir = part ? "/../queue" : "/queue";
    snprintf(q, sizeof q, "%s%s/rotational", real, qdir);
    if (read_line(q, v, sizeof v) == 0)
        snprintf(d->device_class, sizeof d->device_class, "%s", strcmp(v, "1") == 0 ? "rotational" : "non-rotational");
    snprintf(q, sizeof q, "%s%s/write_cache", real, qdir);
    if (read_line(q, v, sizeof v) == 0)
        scopy(d->write_cache, sizeof d->write_cache, v);
    snprintf(q, sizeof q, "%s%s/fua", real, qdir);
    if (read_line(q, v, sizeof v) == 0)
        scopy(d->fua, sizeof d->fua, v);
    if (strncmp(name, "loop", 4) == 0) {
        snprintf(d->device_class, sizeof d->device_class, "loop");
        snprintf(q, sizeof q, "%s/loop/backing_file", real);
        read_line(q, d->backing, sizeof d->backing);
    }
    return 0;
}

/* The sysfs name of the block device a file's filesystem is on: by its
 * st_dev, else (btrfs reports an anonymous one) by the mount source of
 * the mountinfo line with that device number.  0 or -1. */
static int dev_name_of_file(const char *path, char *name, size_t n)
{
    struct stat st;
    char sys[128], real[PATH_MAX], line[4096];
    if (stat(path, &st) != 0)
        return -1;
    snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
    if (realpath(sys, real)) {
        const char *base = strrchr(real, '/');
        scopy(name, n, base ? base + 1 : real);
        return 0;
    }
    FILE *f = fopen("/proc/self/mountinfo", "r");
    int rc = -1;
    while (f && rc && fgets(line, sizeof line, f)) {
        unsigned maj, min;
        char src[256];
        struct stat ss;
        const char *sep = strstr(line, " - ");
        if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || maj != major(st.st_dev) || min != minor(st.st_dev) ||
            !sep || sscanf(sep + 3, "%*s %255s", src) != 1)
            continue;
        ut_mountinfo_unescape(src);
        if (stat(src, &ss) == 0 && S_ISBLK(ss.st_mode)) {
            snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u", major(ss.st_rdev), minor(ss.st_rdev));
            if (realpath(sys, real)) {
                const char *base = strrchr(real, '/');
                scopy(name, n, base ? base + 1 : real);
                rc = 0;
            }
        }
    }
    if (f)
        fclose(f);
    return rc;
}

static void block_device(struct probe_fsinfo *fs)
{
    struct stat st;
    char sys[128], real[PATH_MAX];

    if (strncmp(fs->source, "/dev/", 5) != 0 || stat(fs->source, &st) != 0 || !S_ISBLK(st.st_mode))
        return;
    snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
    if (!realpath(sys, real))
        return;
    const char *base = strrchr(real, '/');
    char name[64];
    scopy(name, sizeof name, base ? base + 1 : real);
    /* down the chain: a loop device's backing file is on another device */
    for (fs->nchain = 0; fs->nchain < PROBE_CHAIN && dev_info(name, &fs->chain[fs->nchain]) == 0;) {
        const struct probe_dev *d = &fs->chain[fs->nchain++];
        if (!d->backing[0] || dev_name_of_file(d->backing, name, sizeof name) != 0)
            break;
    }
    if (!fs->nchain)
        return;
    const struct probe_dev *d = &fs->chain[0];
    scopy(fs->device, sizeof fs->device, d->name);
    scopy(fs->device_class, sizeof fs->device_class, d->device_class);
    scopy(fs->write_cache, sizeof fs->write_cache, d->write_cache);
    scopy(fs->fua, sizeof fs->fua, d->fua);
    scopy(fs->backing, sizeof fs->backing, d->backing);
}

/* The chain as one line: "loop0 (backed by /x.img) on vda: write back, no FUA". */
static void chain_text(const struct probe_fsinfo *fs, char *out, size_t n)
{
    size_t l = 0;
    out[0] = '\0';
    for (int i = 0; i < fs->nchain && l < n; i++) {
        const struct probe_dev *d = &fs->chain[i];
        char where[96] = "";
        if (strcmp(d->disk, d->name) != 0)
            snprintf(where, sizeof where, " (a partition of %s)", d->disk);
        if (d->backing[0])
            l += (size_t)snprintf(out + l, n - l, "%s%s%s, backed by the file %s", i ? " on " : "", d->name, where,
                                  d->backing);
        else
            l += (size_t)snprintf(out + l, n - l, "%s%s%s: write cache \"%s\", FUA %s", i ? " on " : "", d->name,
                                  where, d->write_cache[0] ? d->write_cache : "unknown",
                                  !strcmp(d->fua, "1") ? "yes" : !strcmp(d->fua, "0") ? "no" : "unknown");
    }
}

/* What the bottom of the chain does with a durable write, in words. */
static void cache_words(const struct probe_fsinfo *fs, char *out, size_t n)
{
    const struct probe_dev *d = fs->nchain ? &fs->chain[fs->nchain - 1] : NULL;
    out[0] = '\0';
    if (!d || d->backing[0])
        return;
    if (!strcmp(d->write_cache, "write through"))
        snprintf(out, n, " %s reports no volatile write cache (write through): a write is durable when it "
                 "completes, and the kernel sends no cache flush.", d->name);
    else if (!strcmp(d->write_cache, "write back") && !strcmp(d->fua, "1"))
        snprintf(out, n, " %s has a volatile write cache and takes FUA writes: a durable write that needs no "
                 "metadata (an O_DSYNC overwrite) can go as one FUA write; a sync that commits a journal adds a "
                 "cache flush.", d->name);
    else if (!strcmp(d->write_cache, "write back"))
        snprintf(out, n, " %s has a volatile write cache and no FUA: every durable write ends in a flush of the "
                 "whole cache, whatever the filesystem writes for it.", d->name);
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
        ut_mountinfo_unescape(mnt);
        ut_mountinfo_unescape(src);
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
    if (fs->nchain) {
        chain_text(fs, info, sizeof info);
        fprintf(c->out, "        %-20s%s\n", "write cache", info);
    }
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
    if (!fs->in_memory && l < sizeof text) {
        char words[512];
        cache_words(fs, words, sizeof words);
        l += (size_t)snprintf(text + l, sizeof text - l, "%s", words);
    }
    if (!c->odirect_ok && l < sizeof text)
        l += (size_t)snprintf(text + l, sizeof text - l,
                              " O_DIRECT does not work here: open_datasync and open_sync print n/a*, and a log "
                              "cannot bypass the page cache.");
    snprintf(c->verdict, sizeof c->verdict, "%s", text);
    fprintf(c->out, "\n");
    print_wrapped(c->out, c->verdict);
    fflush(c->out);
}
