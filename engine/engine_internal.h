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

/* One option of struct cl_options (engine/options.c): where it lives, its
 * accepted range [min, max] and default, and the unit the range is in. */
struct cl_option_desc {
    const char *name;   /* the field's name */
    size_t offset, size;
    uint64_t min, max, dflt;
    const char *unit;
};
/* The table, in struct order; *n gets its length. */
const struct cl_option_desc *cl_option_table(size_t *n);
/* 0, or CL_EINVAL naming the first option out of range in
 * cl_error_detail() (CL_ENOTSUP for a policy not built). */
int cl_options_check(const struct cl_options *o);

/* cl_error_detail()'s text for this thread: cleared at the start of
 * cl_open and cl_inspect, set (printf-style) where they refuse. */
void cl_detail_clear(void);
void cl_detail_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* CL_ENGINE_INTERNAL_H */
