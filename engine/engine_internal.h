/*
 * engine_internal.h -- what commitlab's own tests and CLI use beyond the
 * public API.  Not installed and not exported from the shared library
 * (hidden visibility): the file I/O layer (storage/vfs.h) is internal, so
 * only code built with the static library can put its own -- the
 * fault-injecting one of storage/vfs_fault.h -- under a database.
 */
#ifndef CL_ENGINE_INTERNAL_H
#define CL_ENGINE_INTERNAL_H

#include "commitlab.h"

struct vfs;

/* cl_open over the file layer vfs (NULL: the POSIX one), which must
 * outlive the handle. */
int cl_open_vfs(const char *dir, const struct cl_options *opts, struct vfs *vfs, struct cl_db **out,
                struct cl_recovery_info *info);

#endif /* CL_ENGINE_INTERNAL_H */
