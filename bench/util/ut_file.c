/*
 * ut_file.c -- the file helpers of ut_file.h: the run directories of
 * bench, probe and crash are removed with ut_rm_tree; crash's worker
 * processes report through pipes read with ut_read_full, and a replayed
 * crash keeps its files with ut_copy_file.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <unistd.h>

#include "ut_file.h"

static __thread int rm_first_err;

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    if (remove(p) && errno != ENOENT && !rm_first_err)
        rm_first_err = -errno;
    return 0; /* go on: remove whatever else can be */
}

int ut_rm_tree(const char *path)
{
    rm_first_err = 0;
    if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) && errno != ENOENT && !rm_first_err)
        rm_first_err = -errno;
    return rm_first_err;
}

size_t ut_read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

int ut_copy_file(const char *src, const char *dst)
{
    char buf[65536];
    int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, err = 0;
    if (in < 0)
        return -errno;
    out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0)
        err = -errno;
    for (ssize_t n; !err && (n = read(in, buf, sizeof buf)) != 0;) {
        if (n < 0 || write(out, buf, (size_t)n) != n)
            err = errno ? -errno : -EIO;
    }
    close(in);
    if (out >= 0)
        close(out);
    return err;
}

void ut_mountinfo_unescape(char *s)
{
    char *d = s;
    while (*s) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
            *d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 4;
        } else {
            *d++ = *s++;
        }
    }
    *d = 0;
}
