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
 *
 * The locks taken with DIR_LOCK_PROCESS are kept in one list, so that the
 * fork handler can close the child's copies of their descriptors, and
 * fork() returns in the parent only once the child has.  The list's mutex
 * is held across fork() (prepare to parent or child), so no child is made
 * while a lock is being added or removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "commitlab.h"
#include "dirlock.h"

struct dir_lock {
    int fd;                           /* -1 in a forked child (DIR_LOCK_PROCESS) */
    int in_list;
    struct dir_lock *prev, *next;     /* the DIR_LOCK_PROCESS list, under list_mu */
};

static pthread_mutex_t list_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dir_lock *list_head;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int atfork_rc;

/* The child closes its copies when it first runs, which may be after
 * fork() has returned in the parent: until then it still holds the locks.
 * So the parent waits for it: a pipe made in prepare, whose write end the
 * child closes once its copies are closed (or its exit closes), and whose
 * end of file the parent reads before fork() returns there.  A parent
 * that cannot make the pipe (out of descriptors) does not wait. */
static int fork_pipe[2] = {-1, -1};

static void fork_prepare(void)
{
    pthread_mutex_lock(&list_mu);
    if (!list_head || pipe2(fork_pipe, O_CLOEXEC) != 0)
        fork_pipe[0] = fork_pipe[1] = -1;
}

static void fork_parent(void)
{
    if (fork_pipe[0] >= 0) {
        char c;
        close(fork_pipe[1]);
        while (read(fork_pipe[0], &c, 1) < 0 && errno == EINTR)
            ;
        close(fork_pipe[0]);
        fork_pipe[0] = fork_pipe[1] = -1;
    }
    pthread_mutex_unlock(&list_mu);
}

/* In the child: its copies of the descriptors go, the parent's locks stay
 * (the open file description lives on in the parent).  close(2) is
 * async-signal-safe, as a fork handler's work must be. */
static void fork_child(void)
{
    for (struct dir_lock *l = list_head; l; l = l->next) {
        if (l->fd >= 0)
            close(l->fd);
        l->fd = -1;
    }
    if (fork_pipe[0] >= 0) {
        close(fork_pipe[0]);
        close(fork_pipe[1]); /* the parent's read returns: nothing here holds a lock */
        fork_pipe[0] = fork_pipe[1] = -1;
    }
    pthread_mutex_unlock(&list_mu);
}

static void atfork_register(void) { atfork_rc = pthread_atfork(fork_prepare, fork_parent, fork_child); }

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
    if (flags & DIR_LOCK_PROCESS) {
        pthread_once(&atfork_once, atfork_register);
        if (atfork_rc)
            return -atfork_rc;
    }
    /* A file: never through a link, never waiting on a FIFO's writer. */
    int how = (flags & DIR_LOCK_FILE) ? O_NOFOLLOW | O_NONBLOCK | O_NOCTTY : O_DIRECTORY;
    do
        fd = open(dir, O_RDONLY | O_CLOEXEC | how);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) /* with DIR_LOCK_FILE: a link (ELOOP), a socket (ENXIO) */
        return (flags & DIR_LOCK_FILE) && (errno == ELOOP || errno == ENXIO) ? CL_EFILETYPE : -errno;
    if (flags & DIR_LOCK_FILE) {
        struct stat st;
        rc = fstat(fd, &st) != 0 ? -errno : S_ISREG(st.st_mode) ? 0 : CL_EFILETYPE;
        if (rc) {
            close(fd);
            return rc;
        }
    }
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
    l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        return -ENOMEM;
    }
    l->fd = fd;
    if (flags & DIR_LOCK_PROCESS) {
        pthread_mutex_lock(&list_mu);
        l->next = list_head;
        if (list_head)
            list_head->prev = l;
        list_head = l;
        l->in_list = 1;
        pthread_mutex_unlock(&list_mu);
    }
    *out = l;
    return 0;
}

void dir_unlock(struct dir_lock *l)
{
    if (!l)
        return;
    if (l->in_list) {
        pthread_mutex_lock(&list_mu);
        if (l->prev)
            l->prev->next = l->next;
        else
            list_head = l->next;
        if (l->next)
            l->next->prev = l->prev;
        pthread_mutex_unlock(&list_mu);
    }
    if (l->fd >= 0)
        close(l->fd); /* closing the last descriptor of the description drops the lock */
    free(l);
}
