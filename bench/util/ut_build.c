/*
 * ut_build.c -- the version and the source commit (ut_build.h); the
 * commit comes from a header the build writes (scripts/source_commit.cmake).
 */
#include "cl_source_commit.h"
#include "ut_build.h"

const char *ut_version(void) { return CL_BUILD_VERSION; }

const char *ut_source_commit(void) { return CL_SOURCE_COMMIT; }
