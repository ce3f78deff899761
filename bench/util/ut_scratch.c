/*
 * ut_scratch.c -- scratch directories that carry their owner's mark, and
 * output files checked before the work (ut_scratch.h).  bench's run
 * directories, crash's working directories and every command's --out go
 * through here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ut_file.h"
#include "ut_scratch.h"

int ut_scratch_make(const char *path, const char *owner)
{
    if (mkdir(path, 0755))
        return -errno; /* EEXIST for anything at all, a dangling link included */
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    int fd = openat(dfd, UT_SCRATCH_MARK, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -errno : 0;
    if (fd >= 0) {
        char line[128];
        int n = snprintf(line, sizeof line, "made by commitlab %s, process %ld; removed when it is done\n", owner,
                         (long)getpid());
        if (write(fd, line, (size_t)n) != n)
            rc = -EIO;
        close(fd);
    }
    close(dfd);
    return rc;
}

int ut_scratch_ours(const char *path)
{
    struct stat st;
    if (lstat(path, &st) || !S_ISDIR(st.st_mode))
        return 0;
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return 0;
    int ours = fstatat(dfd, UT_SCRATCH_MARK, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    close(dfd);
    return ours;
}

int ut_scratch_remove(const char *path)
{
    struct stat st;
    if (lstat(path, &st))
        return errno == ENOENT ? 0 : -errno;
    if (!ut_scratch_ours(path))
        return -EPERM;
    return ut_rm_tree(path);
}

int ut_scratch_reset(const char *path, const char *owner)
{
    int rc = ut_scratch_remove(path);
    return rc ? rc : ut_scratch_make(path, owner);
}

int ut_output_check(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        close(fd);
        return 0;
    }
    if (errno != ENOENT)
        return -errno;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    close(fd);
    unlink(path);
    return 0;
}

FILE *ut_output_open(const char *path, int *created)
{
    struct stat st;
    *created = stat(path, &st) != 0 && errno == ENOENT;
    return fopen(path, "a");
}

int ut_output_close(FILE *f, const char *path, int created)
{
    if (!f)
        return 0;
    long size = ftell(f);
    int rc = fclose(f) ? -errno : 0;
    if (created && size == 0)
        unlink(path);
    return rc;
}
