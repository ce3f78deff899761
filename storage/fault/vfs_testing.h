/*
 * vfs_testing.h -- helpers over the file I/O layer that only commitlab's
 * tests use, kept out of the library with the fault-injecting layer
 * (storage/fault).
 */
#ifndef CL_VFS_TESTING_H
#define CL_VFS_TESTING_H

#include "vfs.h"

/* Runs ios in order through the table's pwrite/fsync/fdatasync, stopping
 * at the first failure (the later ones get -ECANCELED).  Returns 0 when
 * all succeeded, else the first failure's code. */
int vfs_submit_sequential(struct vfs *v, struct vfs_io *ios, int n);

/* Durable replace (Redis style): write tmp, fsync, rename, sync dir. */
int vfs_write_file_durable(struct vfs *v, const char *dir, const char *name, const void *buf,
                           size_t len, enum vfs_class cls);

#endif /* CL_VFS_TESTING_H */
