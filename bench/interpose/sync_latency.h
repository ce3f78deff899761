/*
 * sync_latency.h -- --sync-latency for the engines without their own
 * emulation (sync_latency.c): from bench_sync_latency_set(us) until it is
 * set to 0, every successful fsync, fdatasync, msync(MS_SYNC) and write
 * to an O_DSYNC/O_SYNC file in this process sleeps us afterwards;
 * bench_sync_latency_points counts them.
 *
 * sync_latency.c is not in the harness's library: it defines fsync and
 * the rest for the whole process, so it is linked into the program itself,
 * whose definitions bind before the shared libraries' (bench/CMakeLists.txt).
 */
#ifndef CL_BENCH_SYNC_LATENCY_H
#define CL_BENCH_SYNC_LATENCY_H

#include <stdint.h>

void bench_sync_latency_set(uint32_t us);
uint64_t bench_sync_latency_points(void);

#endif
