/*
 * engine_internal.h -- what commitlab's own tests and CLI use beyond the
 * public API.  Not installed and not exported from the shared library
 * (hidden visibility): the file I/O layer (storage/vfs/vfs.h) is internal, so
 * only code built with the static library can put its own -- the
 * fault-injecting one of storage/fault/vfs_fault.h -- under a database.
 */
#ifndef CL_ENGINE_INTERNAL_H
#define CL_ENGINE_INTERNAL_H

#include "commitlab.h"

struct vfs;

/* cl_open over the file layer vfs (NULL: the POSIX one), which must
 * outlive the handle. */
int cl_open_vfs(const char *dir, const struct cl_options *opts, struct vfs *vfs, struct cl_db **out,
                struct cl_recovery_info *info);

/* The sizes of the caller-allocated structs as libcommitlab 0.1 laid
 * them out: what the plain cl_options_init, cl_open and cl_stats take. */
#include <stddef.h>
#define CL_OPTIONS_SIZE_V0 (offsetof(struct cl_options, create) + sizeof(int))
#define CL_RECOVERY_INFO_SIZE_V0 (offsetof(struct cl_recovery_info, bad_file) + 64)
#define CL_STATS_SIZE_V0 (offsetof(struct cl_stats, batch_hist) + CL_BATCH_HIST * sizeof(uint64_t))

/* *out = the options the caller passed in size bytes (NULL: defaults),
 * every field beyond them at its default.  CL_ENOTSUP when the caller's
 * struct is larger than this library's and the bytes beyond are not zero. */
int cl_options_import(const struct cl_options *in, size_t size, struct cl_options *out);

/* One option of struct cl_options (engine/options.c): what the public API
 * says of it (cl_option_info), and where it lives in the struct. */
struct cl_option_desc {
    struct cl_option_info info;
    size_t offset, size;
};
/* The table, in struct order; *n gets its length. */
const struct cl_option_desc *cl_option_table(size_t *n);
/* The sync methods' names, in enum order, NULL after the last (the
 * method option's names). */
extern const char *const cl_method_names[];
/* 0, or CL_EINVAL naming the first option out of range in
 * cl_error_detail() (CL_ENOTSUP for a policy not built). */
int cl_options_check(const struct cl_options *o);

/* cl_error_detail()'s text for this thread: cleared at the start of
 * cl_open and cl_inspect, set (printf-style) where they refuse. */
void cl_detail_clear(void);
void cl_detail_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* CL_ENGINE_INTERNAL_H */
