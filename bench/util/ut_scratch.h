/*
 * ut_scratch.h -- the commands never delete what they did not make.
 *
 * A scratch directory (a bench run's D/ENGINE.db, crash's D/crash) is
 * made fresh by mkdir -- never reused if something is already there,
 * whatever it is, a symbolic link included -- and marked as the command's
 * with a file inside it, UT_SCRATCH_MARK.  It is removed only while it
 * carries that mark, so a database or a directory of the user's that
 * happens to sit where a scratch directory would go is refused, never
 * deleted.  A marked directory left by a killed run is the command's own
 * and may be removed, once the caller holds the lock of the directory
 * above it (so no live run is using it).
 *
 * An output file (--out, --json, -o) is checked before any work starts,
 * and one a command created and wrote nothing to is removed again.
 */
#ifndef CL_UT_SCRATCH_H
#define CL_UT_SCRATCH_H

#include <stdio.h>

#define UT_SCRATCH_MARK ".commitlab-scratch"

/* Makes path as a new directory marked as owner's ("bench", "crash").
 * 0; -EEXIST when anything already exists at path (nothing is touched);
 * or -errno. */
int ut_scratch_make(const char *path, const char *owner);

/* 1 when path is a directory (not a link to one) carrying the mark; 0
 * when it is anything else or absent. */
int ut_scratch_ours(const char *path);

/* Removes path and what is in it when it carries the mark: 0 (also when
 * it is absent); -EPERM when it exists without the mark (nothing
 * removed); or -errno. */
int ut_scratch_remove(const char *path);

/* ut_scratch_remove, then ut_scratch_make: a fresh marked directory. */
int ut_scratch_reset(const char *path, const char *owner);

/* 0 when a file can be written at path -- an existing regular file that
 * opens for appending, or a new one its directory accepts (made and
 * removed again to find out) -- else -errno (-EISDIR for a directory). */
int ut_output_check(const char *path);

/* Opens path for appending; *created says whether it did not exist. */
FILE *ut_output_open(const char *path, int *created);

/* Closes f (fclose's result: 0 or -errno); a file it created and left
 * empty is removed. */
int ut_output_close(FILE *f, const char *path, int created);

#endif
