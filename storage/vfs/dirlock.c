/*
 * dirlock.c -- flock(2) on a directory, and who holds it (dirlock.h).
 *
 * The holder's pid is read from /proc/locks, where the kernel lists every
 * flock with the pid that took it and the locked inode
 * ("1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"), so nothing has to be
 * written into the directory to name its owner.  A blocked waiter's line
 * ("1: -> FLOCK ...") is not a holder.  The device field is the
 * superblock's, which on btrfs subvolumes differs from stat's st_dev, so an
 * entry is matched by inode and taken only when the device agrees or no
 * entry does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dirlock.h"

struct dir_lock {
    int fd;
};

pid_t dir_lock_holder(const char *path)
{
    struct stat st;
    char line[256];
    pid_t exact = 0, by_inode = 0;
    FILE *f;

    if (stat(path, &st) != 0)
        return 0;
    f = fopen("/proc/locks", "re");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        char type[16], mode[16];
        unsigned maj, min;
        unsigned long ino;
        long pid;
        int n = 0;
        if (strstr(line, "->"))
            continue;
        if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%lu%n", type, mode, &pid, &maj, &min, &ino, &n) < 6 || !n)
            continue;
        if (strcmp(type, "FLOCK") != 0 || ino != (unsigned long)st.st_ino || pid <= 0)
            continue;
        if (maj == major(st.st_dev) && min == minor(st.st_dev))
            exact = (pid_t)pid;
        else if (!by_inode)
            by_inode = (pid_t)pid;
    }
    fclose(f);
    return exact ? exact : by_inode;
}

int dir_lock(const char *dir, unsigned flags, struct dir_lock **out, pid_t *holder)
{
    struct dir_lock *l;
    int fd, rc;

    *out = NULL;
    if (holder)
        *holder = 0;
    do
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -errno;
    do
        rc = flock(fd, ((flags & DIR_LOCK_SHARED) ? LOCK_SH : LOCK_EX) | LOCK_NB);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int e = errno == EAGAIN ? EWOULDBLOCK : errno;
        close(fd);
        if (e == EWOULDBLOCK && holder)
            *holder = dir_lock_holder(dir);
        return -e;
    }
    l = malloc(sizeof *l);
    if (!l) {
        close(fd);
        return -ENOMEM;
    }
    l->fd = fd;
    *out = l;
    return 0;
}

void dir_unlock(struct dir_lock *l)
{
    if (!l)
        return;
    close(l->fd); /* closing the last descriptor of the description drops the lock */
    free(l);
}
