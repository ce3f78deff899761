/*
 * mx_fs.h -- the filesystems `commitlab matrix` runs on (mx_fs.c), each
 * made fresh in an image file on a loop device (buffered or direct I/O)
 * or on a real device the user gives up (--device), and what is mounted
 * and attached now; btrfs snapshots of the run directory's subvolume.
 * ZFS is a pool of datasets instead (mx_zfs.h); its kind is listed here,
 * and a dataset's mount is an mx_mount like the others'.
 *
 * Cleanup is part of the contract: mx_fs_down takes down whatever
 * mx_fs_up got as far as setting up (a failed mkfs or mount included),
 * snapshots first, and mx_clear_leftovers what an earlier run in the same
 * work directory left when it was killed outright.  The loop device is
 * attached with LO_FLAGS_AUTOCLEAR, so even SIGKILL leaves at most a
 * mount, whose unmount detaches it.
 *
 * A device is formatted only after mx_device_check passed: a block device
 * that is not mounted, holds no mounted partition, no swap, no holder,
 * is not open exclusively elsewhere, has no alias in any of these uses,
 * and carries no filesystem or partition table unless the user said
 * --destroy-data for it.  Its aliases are the other devices over some of
 * the same bytes, followed from one to the next: a partition's whole
 * disk (not its sibling partitions), a loop device's backing device and
 * the other loop devices on its backing file (the same inode, by
 * LOOP_GET_STATUS64, even renamed or deleted), and the loop devices
 * stacked on a device.  Another loop device on the same data -- on the
 * same file, or stacked on the device -- is refused even when idle; what
 * the device is built on (the disk of a partition, the device under a
 * loop device) only when it is in use.
 */
#ifndef CL_MX_FS_H
#define CL_MX_FS_H

#include <stddef.h>
#include <stdint.h>

struct mx_fs_kind {
    const char *name;             /* as --fs names it */
    const char *fstype;           /* mount -t */
    const char *mkfs;             /* NULL: no image (tmpfs) */
    const char *mkfs_args;
    const char *package;          /* the Debian package with mkfs */
    int nocow;                    /* chattr +C on the run directory */
    int zfs;                      /* a dataset of a pool matrix creates (mx_zfs.h), not mkfs and mount */
};

extern const struct mx_fs_kind mx_fs_kinds[];
extern const size_t mx_fs_nkinds;
#define MX_FS_LIST "ext4, xfs, btrfs, btrfs-nodatacow, tmpfs, zfs"
/* The kind --fs calls name, or NULL. */
const struct mx_fs_kind *mx_fs_find(const char *name);

/* What is mounted and attached now. */
struct mx_mount {
    char home[4096];              /* workdir/NAME: made fresh and marked as matrix's (ut_scratch.h), holding
                                     the mount point and the image; "" when not made */
    char mnt[4096];               /* the mount point, home/mnt; "" when nothing is mounted */
    char loopdev[64];             /* "/dev/loopN", "" when none is attached */
    char image[4096];             /* the image file, "" when none */
    char device[4096];            /* --device: the formatted device (never detached), "" when none */
    int loop_fd;
    int subvol;                   /* btrfs: the run directory is a subvolume, snapshots are taken of it */
    unsigned snap_seq;            /* snapshots taken so far */
    char dataset[256];            /* zfs: POOL/cN mounted at mnt (mnt/bench is the run directory); its
                                     pool takes it down (mx_zfs_pool_down), mx_fs_down only forgets it */
};
#define MX_MOUNT_INIT {.loop_fd = -1}

/* How an image is made: its size (tmpfs: the size limit), written whole
 * first or left sparse, and the options added to mkfs and mount (NULL:
 * none). */
struct mx_image {
    uint64_t size;
    int zero;
    const char *mkfs_opts, *mount_opts;
    int loop_direct;              /* LO_FLAGS_DIRECT_IO: the loop device bypasses the host's page cache */
    const char *device;           /* format and mount this block device instead of an image; NULL: image */
    int subvol;                   /* btrfs: the run directory as a subvolume, for snapshots; zfs: the
                                     dataset is snapshotted */
};

/* Makes filesystem k in a new directory workdir/NAME marked as matrix's
 * (refused when anything is already there: nothing of the user's is ever
 * reused, mounted over or removed), and mounts it at m->mnt, with an empty
 * m->mnt/bench for the runs (chattr +C for nocow kinds); mkfs_cmd gets the
 * mkfs command line ("" for tmpfs).  Writing a zero image stops early
 * when stop() says so (a signal came).  0, or -1 with err filled; either way m records
 * what was set up, for mx_fs_down. */
int mx_fs_up(struct mx_mount *m, const struct mx_fs_kind *k, const struct mx_image *img, const char *workdir,
             int (*stop)(void), char *mkfs_cmd, size_t mkfs_len, char *err, size_t errlen);
/* btrfs, m->subvol: a read-only snapshot of the run directory's
 * subvolume, and the older ones deleted; zfs: zfs snapshot of the
 * dataset, the older one destroyed.  0 or -errno. */
int mx_snapshot(struct mx_mount *m);
/* Deletes every snapshot in m's mount.  Idempotent. */
void mx_snapshots_delete(struct mx_mount *m);
/* Checks that dev may be formatted (see above); destroy names the device
 * --destroy-data gave up, or NULL.  0, or -1 with the one-line reason in
 * err (without the flag, which the caller names). */
int mx_device_check(const char *dev, const char *destroy, char *err, size_t errlen);
/* Unmounts, detaches and removes what m records.  Idempotent. */
void mx_fs_down(struct mx_mount *m);
/* Removes what an earlier run in workdir left behind (it was killed
 * before it could clean up): only the directories workdir/NAME that carry
 * matrix's mark, after unmounting and detaching what is in them.  The
 * caller holds workdir's lock, so no live run is using them. */
void mx_clear_leftovers(const char *workdir);
/* Where filesystem k's directory goes in workdir. */
void mx_fs_home(char *buf, size_t len, const char *workdir, const struct mx_fs_kind *k);
/* Root, mkfs for each of fs[0..n), mount(8), and loop devices when an
 * image is needed (images: not with a device): 0, or -1 with the reason on
 * stderr. */
int mx_preflight(const struct mx_fs_kind *const *fs, size_t n, int images);

/* Shared with mx_zfs.c. */
/* Runs argv (PATH plus /sbin and /usr/sbin), its output in out: the exit
 * status, or -1 when it could not be started. */
int mx_run_tool(char *const argv[], char *out, size_t outlen);
/* In a child about to exec a tool: PATH as mx_run_tool searches it. */
void mx_tool_path_set(void);
/* 1 when name is an executable in PATH, /usr/sbin or /sbin. */
int mx_have_tool(const char *name);
int mx_is_mounted(const char *mnt);
/* Unmounts mnt (retrying while busy, then lazily): 0 or -1. */
int mx_umount(const char *mnt);
/* Unmounts every mount at or below dir, the deepest first. */
void mx_umount_below(const char *dir);
/* Writes zeros over the first size bytes of fd and syncs them (stops
 * early when stop() says so): 0 or -1 with errno. */
int mx_zero_fill(int fd, uint64_t size, int (*stop)(void));

#endif
