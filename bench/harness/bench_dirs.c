/*
 * bench_dirs.c -- claiming a command's directory, checking what is in it,
 * and the signals that stop a run (bench_dirs.h).  bench, tour and crash
 * call it before their first run and after their last.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "bench_dirs.h"
#include "dirlock.h"
#include "ut_scratch.h"

int bench_dirs_claim(struct bench_dirs *d, const char *cmd, const char *flag, const char *dir)
{
    memset(d, 0, sizeof *d);
    d->cmd = cmd;
    d->flag = flag;
    d->dir = strdup(dir);
    if (!d->dir) {
        fprintf(stderr, "commitlab %s: out of memory\n", cmd);
        return 2;
    }
    if (mkdir(dir, 0755) == 0)
        d->made = 1;
    else if (errno != EEXIST) {
        fprintf(stderr, "commitlab %s: %s %s: %s\n", cmd, flag, dir, strerror(errno));
        return 2;
    }
    pid_t holder = 0;
    int rc = dir_lock(dir, 0, &d->lock, &holder);
    if (rc == -EWOULDBLOCK) {
        if (holder)
            fprintf(stderr, "commitlab %s: %s %s is in use by another run (process %ld)\n", cmd, flag, dir,
                    (long)holder);
        else
            fprintf(stderr, "commitlab %s: %s %s is in use by another run\n", cmd, flag, dir);
        return 2;
    }
    if (rc) {
        fprintf(stderr, "commitlab %s: %s %s: %s\n", cmd, flag, dir,
                rc == -ENOTDIR ? "not a directory" : strerror(-rc));
        return 2;
    }
    return 0;
}

int bench_dirs_check(struct bench_dirs *d, const char *const *paths, size_t n, int reuse)
{
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (lstat(paths[i], &st) != 0)
            continue; /* absent: made fresh when its run starts */
        if (reuse && S_ISDIR(st.st_mode))
            continue;
        if (!reuse && ut_scratch_ours(paths[i])) {
            /* a killed run's leftover: ours, and no run holds D but this one;
             * a server it started is stopped first */
            bench_postgres_reap(paths[i]);
            int rc = ut_scratch_remove(paths[i]);
            if (rc == 0)
                continue;
            fprintf(stderr, "commitlab %s: %s: a leftover of an earlier run that cannot be removed: %s\n", d->cmd,
                    paths[i], strerror(-rc));
            return 2;
        }
        fprintf(stderr,
                "commitlab %s: %s %s: %s exists and was not made by commitlab %s; nothing was removed "
                "(%sor choose another %s)\n",
                d->cmd, d->flag, d->dir, paths[i], d->cmd,
                reuse ? "it is not a directory, " : S_ISDIR(st.st_mode) && !strcmp(d->cmd, "bench")
                                                        ? "run on it with --reuse, "
                                                        : "move it away, ",
                d->flag);
        return 2;
    }
    return 0;
}

void bench_dirs_release(struct bench_dirs *d)
{
    bench_postgres_remove_templates(); /* in --dir: gone before it is */
    dir_unlock(d->lock);
    d->lock = NULL;
    if (d->made && d->dir)
        rmdir(d->dir); /* only when empty */
    free(d->dir);
    d->dir = NULL;
}
