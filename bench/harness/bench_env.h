/*
 * bench_env.h -- what a result needs to be trusted later (bench_env.c):
 * the kernel and CPU, the filesystem under the run directory and its
 * block device; and the process's and the device's write counters, which
 * the runner samples at both ends of the measured phase.
 */
#ifndef CL_BENCH_ENV_H
#define CL_BENCH_ENV_H

#include <stdint.h>

struct bench_env {
    char kernel[128], os[64], machine[64], hostname[128];
    char cpu_model[128];
    int cores;
    char fs_type[64];             /* from /proc/self/mountinfo */
    uint64_t fs_magic;            /* statfs f_type */
    char fs_magic_name[32];
    char mount_point[1024], mount_source[256], mount_options[512], super_options[512];
    char device[64];              /* block device name for /sys/block, or "" */
    char dev_id[32];              /* major:minor of the directory */
    int volatile_fs;              /* tmpfs or ramfs */
    int fs_journal;               /* ext3/ext4: 1 with a jbd2 journal running, 0 without; -1 another
                                     filesystem, or not known */
};

void bench_env_probe(const char *dir, struct bench_env *e);
/* /proc/self/io write_bytes and wchar; -1 when unreadable. */
void bench_proc_io(int64_t *write_bytes, int64_t *wchar);
/* Sectors written * 512 for the device, or -1. */
int64_t bench_device_written(const char *device);
/* Sectors read * 512 for the device, or -1. */
int64_t bench_device_read(const char *device);
/* Warns on stderr when dir (made if missing) is on tmpfs or ramfs. */
void bench_warn_volatile(const char *dir);

#endif
