/*
 * file_calls.h -- the writes and syncs a bench run's store makes on its
 * own files, counted where the program's definitions of the file calls
 * see them (file_calls.c, hooked into sync_latency.c's writes and syncs
 * and cut_journal.c's opens and mappings).
 *
 * bench_file_calls_watch(dir) before the store opens: from then on every
 * descriptor an interposed open returns for dir or a file below it is
 * watched, until it is closed, and every successful call on it is
 * counted -- fsync, fdatasync, sync_file_range, msync(MS_SYNC) of a
 * mapping of it, and a write to it opened O_DSYNC/O_SYNC or asking
 * RWF_DSYNC/RWF_SYNC as syncs; write, pwrite, writev, pwritev(2) as
 * writes and the bytes they wrote.  The counts only grow: a run samples
 * them at its measured phase's two ends, as its other counters.
 *
 * What passes none of these calls is not counted: io_uring submissions,
 * syscall(2), stores into a shared mapping that the kernel writes back by
 * itself, stdio streams' writes, a descriptor made by dup or inherited.
 *
 * file_calls.c is an object of the program, as sync_latency.c is (its
 * hooks run inside the definitions that bind before libc's); the harness
 * calls the functions below.
 */
#ifndef CL_BENCH_FILE_CALLS_H
#define CL_BENCH_FILE_CALLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bench_file_counts {
    uint64_t syncs;  /* fsync, fdatasync, sync_file_range, msync(MS_SYNC), O_DSYNC/RWF_DSYNC writes */
    uint64_t writes; /* write calls that wrote */
    uint64_t bytes;  /* what they wrote */
};

/* Watches dir (which exists) and everything below it from now on: 0, or
 * -errno when its path cannot be resolved (nothing is watched then). */
int bench_file_calls_watch(const char *dir);
/* Stops watching: no descriptor is watched any more. */
void bench_file_calls_unwatch(void);
/* The counts so far (since the program started). */
void bench_file_calls_sample(struct bench_file_counts *c);

/* ---- the hooks of the interposed calls ---------------------------------------- */

void bench_file_opened(int fd, int flags);          /* open, openat, creat returned fd */
void bench_file_closed(int fd);                     /* before close(fd) */
void bench_file_wrote(int fd, ssize_t rc, int rwf); /* a write returned rc */
void bench_file_synced(int fd, int rc);             /* fsync, fdatasync, sync_file_range returned rc */
void bench_file_mapped(void *addr, size_t len, int prot, int flags, int fd); /* mmap returned addr */
void bench_file_msynced(void *addr, int flags, int rc);                      /* msync returned rc */

#endif
