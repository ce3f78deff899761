/*
 * bench_dirs.h -- the directory a command runs in: claimed for the whole
 * run, and what it holds respected.
 *
 * bench, tour and crash run in a directory the user names (--dir D).
 * The command makes D when it is absent (and removes it afterwards only
 * then, and only when empty), and holds an exclusive lock on D for the
 * whole run, so a second run in the same D is refused with the first
 * one's pid instead of deleting or corrupting its files.  The run
 * directories inside D are scratch directories (ut_scratch.h): made
 * fresh and marked, removed only when marked; a marked one left behind by
 * a killed run is removed once D's lock is held, and anything else where
 * one would go is refused before the first run starts.
 *
 * A command that claims a directory stops at SIGINT, SIGTERM and SIGHUP
 * (bench_stop_on_signals), cleans up, and exits 128 + the signal's number.
 */
#ifndef CL_BENCH_DIRS_H
#define CL_BENCH_DIRS_H

#include <stddef.h>

struct dir_lock;

struct bench_dirs {
    const char *cmd;              /* "bench", "tour", "crash", "matrix": messages and marks */
    const char *flag;             /* the flag that named D: "--dir", "--workdir" */
    char *dir;                    /* D as given */
    int made;                     /* the command made D */
    struct dir_lock *lock;
};

/* Makes D when absent and locks it.  0; or prints one line ("commitlab
 * CMD: FLAG D is in use by another run (process N)") and returns 2, the
 * exit code. */
int bench_dirs_claim(struct bench_dirs *d, const char *cmd, const char *flag, const char *dir);

/* Before the first run: each path in paths[0..n) (run directories inside
 * D) is absent, or a marked leftover of this command (removed now), or
 * else refused -- one line naming it, nothing removed -- and 2 returned.
 * With reuse, existing run directories are the user's choice: kept. */
int bench_dirs_check(struct bench_dirs *d, const char *const *paths, size_t n, int reuse);

/* Unlocks; removes D when the command made it and it is empty. */
void bench_dirs_release(struct bench_dirs *d);

#endif
