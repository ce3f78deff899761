/*
 * mx_zfs.h -- ZFS for `commitlab matrix` (mx_zfs.c): one pool per phase,
 * made by matrix on a file vdev (an image in workdir/zfs, no loop device)
 * or on --device, and one dataset per combination of the --zfs-* knobs;
 * the kernel's OpenZFS when it is loaded (zfs in /proc/filesystems and
 * zpool installed), else zfs-fuse, whose daemon is started when none runs
 * and stopped again by whoever started it; the pool's own read and write
 * counters (zpool iostat) over a run's measured window; snapshots.
 *
 * Ownership is the contract: the pool's name is chosen here, it carries
 * the user property commitlab:owner with a token written first to
 * workdir/zfs/pool (the directory marked as matrix's, ut_scratch.h), and
 * a pool is destroyed only while that property still holds that token --
 * a pool matrix did not create is never imported, exported, destroyed or
 * changed.  Pools are created with cachefile=none, so no daemon or boot
 * imports one again.  The daemon is stopped only when it is the process
 * recorded in workdir/zfs/daemon (its pid and start time) and serves no
 * pool any more.  After a SIGKILL the next run in the same work directory
 * does the same from those two files (mx_zfs_clear_leftovers).
 */
#ifndef CL_MX_ZFS_H
#define CL_MX_ZFS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mx_fs.h"

#define MX_ZFS_OWNER_PROP "commitlab:owner"

/* Which ZFS runs the pools. */
struct mx_zfs_impl {
    int kernel;    /* 1: OpenZFS in the kernel; 0: zfs-fuse */
    char name[96]; /* "OpenZFS 2.2.3, kernel" / "zfs-fuse 0.7.0, userspace" */
};

/* The ZFS this machine would use, in *z: 0, or -1 with the one-line
 * reason (what is missing and the apt-get line) in err. */
int mx_zfs_detect(struct mx_zfs_impl *z, char *err, size_t errlen);
/* mx_zfs_detect for the preflight, which has no use for the result. */
int mx_zfs_preflight(char *err, size_t errlen);

/* A pool matrix created, and what it started for it. */
struct mx_zpool {
    char home[4096];       /* workdir/zfs, marked as matrix's; "" when not made */
    char image[4096];      /* the file vdev, "" on a device */
    char device[4096];     /* --device: the vdev */
    char name[64];         /* the pool's name, chosen here */
    char owner[64];        /* its commitlab:owner token */
    char create_cmd[1024]; /* the zpool create command line */
    int created;
    pid_t daemon;                    /* zfs-fuse started here (0: none, or one that was running) */
    unsigned long long daemon_start; /* its start time (/proc/PID/stat), to know it again */
    unsigned ndatasets;
    struct mx_zfs_impl impl;
};

/* Makes workdir/zfs, starts zfs-fuse when needed, and creates the pool
 * on an image of img->size (zero-filled when img->zero) or on
 * img->device.  0, or -1 with err filled; p records what was set up,
 * for mx_zfs_pool_down. */
int mx_zfs_pool_up(struct mx_zpool *p, const struct mx_image *img, const char *workdir, int (*stop)(void), char *err,
                   size_t errlen);
/* A new dataset of p with the properties props[0..n) ("recordsize=8192"),
 * mounted at p->home/mnt/cN with an empty directory bench in it; m gets
 * its mount point and name (snapshot: m->subvol).  0, or -1 with err. */
int mx_zfs_dataset_up(struct mx_zpool *p, struct mx_mount *m, const char *const *props, size_t n, int snapshot,
                      char *err, size_t errlen);
/* zfs set PROP=VALUE on a dataset: 0 or -1. */
int mx_zfs_set(const char *dataset, const char *prop, const char *value);
/* zfs snapshot DATASET@.commitlab-snap-SEQ, and the one before destroyed:
 * 0 or -EIO. */
int mx_zfs_snapshot(const char *dataset, unsigned seq);
/* Destroys every snapshot of the dataset that matrix took. */
void mx_zfs_snapshots_destroy(const char *dataset);
/* Destroys the pool (when it still carries its token), stops the daemon
 * started for it (when it serves no other pool), unmounts what is left
 * and removes workdir/zfs.  Idempotent. */
void mx_zfs_pool_down(struct mx_zpool *p);
/* What an earlier run in workdir left behind, after a SIGKILL: as
 * mx_zfs_pool_down, from the records in workdir/zfs. */
void mx_zfs_clear_leftovers(const char *workdir);

/* The pool's own counters over a window: `zpool iostat POOL 1` read in
 * the background, each line (reads and writes per second, operations
 * and bytes, over the second before it) timed as it comes; the sum over
 * [a, b] is each line's rates times the part of its interval inside. */
struct mx_zfs_sample {
    double t; /* ut_now() when the line came */
    double rops, wops, rbytes, wbytes;
};
struct mx_zfs_iostat {
    pid_t pid;
    int fd;
    int kernel; /* -Hp: exact integers; else zfs-fuse's rounded K/M/G */
    pthread_t th;
    pthread_mutex_t mu;
    struct mx_zfs_sample *s;
    size_t n, cap;
    int running;
};
/* 0, or -1 when zpool iostat could not be started. */
int mx_zfs_iostat_start(struct mx_zfs_iostat *io, const struct mx_zpool *p);
/* Waits (up to 3 s) for a line that covers time until, then ends it. */
void mx_zfs_iostat_stop(struct mx_zfs_iostat *io, double until);
/* Operations and bytes read and written in [a, b] (out: rops, wops,
 * rbytes, wbytes): 0, or -1 when the lines do not cover the window. */
int mx_zfs_iostat_sum(const struct mx_zfs_iostat *io, double a, double b, double out[4]);
void mx_zfs_iostat_free(struct mx_zfs_iostat *io);

#endif
