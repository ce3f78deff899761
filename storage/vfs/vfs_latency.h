/*
 * vfs_latency.h -- an emulated slow device: wraps a file layer and adds
 * sync_latency_us after every successful sync (fsync, fdatasync, directory
 * sync, O_DSYNC write).  For teaching slow-disk behaviour; always labelled
 * "emulated" in output.
 */
#ifndef CL_VFS_LATENCY_H
#define CL_VFS_LATENCY_H

#include "vfs.h"

/* Wraps base (not owned); vfs_destroy frees the wrapper only. */
struct vfs *vfs_latency_new(struct vfs *base, uint32_t sync_latency_us);

#endif
