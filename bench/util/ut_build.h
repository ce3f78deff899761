/*
 * ut_build.h -- what built this program: the library's version and the
 * commit its sources were at, so that a result can be traced to the code
 * that produced it (commitlab --version, every JSON line).
 */
#ifndef CL_UT_BUILD_H
#define CL_UT_BUILD_H

/* "0.1": the project's version (CMakeLists.txt's, which the library's
 * CL_VERSION_MAJOR and CL_VERSION_MINOR match). */
const char *ut_version(void);
/* The sources' commit as `git describe --always --dirty` named it at
 * build time ("d7afba9e5b21", "d7afba9e5b21-dirty"), or "unknown" for a
 * build outside a git checkout. */
const char *ut_source_commit(void);

#endif
