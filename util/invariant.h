/*
 * invariant.h -- CL_INVARIANT(name, cond): checks one of the numbered
 * invariants that a file's design comment lists (writer.c's W1-W5,
 * waitq.c's L1-L5, policy_uring.c's U1-U5, pager_internal.h's PG1-PG5,
 * docs/design.md's commit protocol C1-C6).
 *
 * Built with CL_INVARIANTS (CMake option, on by default in every build type
 * but Release), a violated invariant prints its name, the condition and
 * where, and aborts: a broken invariant means memory or the files may
 * already be wrong, and a core dump at the first wrong step is worth more
 * than an error code further on.  Without it the check compiles to nothing
 * and the condition is not evaluated, so a condition must have no side
 * effects.
 *
 * A path the invariants say cannot be taken still returns an error in
 * every build: CL_EINTERNAL, never CL_EINVAL (the caller's argument was
 * not at fault).
 */
#ifndef CL_INVARIANT_H
#define CL_INVARIANT_H

#ifdef CL_INVARIANTS
#include <stdio.h>
#include <stdlib.h>

__attribute__((noreturn, cold)) static inline void cl_invariant_failed(const char *name, const char *cond,
                                                                       const char *file, int line)
{
    fprintf(stderr, "commitlab: invariant %s violated at %s:%d: %s\n", name, file, line, cond);
    abort();
}
#define CL_INVARIANT(name, cond) \
    ((cond) ? (void)0 : cl_invariant_failed((name), #cond, __FILE__, __LINE__))
#else
#define CL_INVARIANT(name, cond) ((void)0)
#endif

#endif /* CL_INVARIANT_H */
