/*
 * dirlock.h -- one owner per directory: an flock(2) on the directory
 * itself, held from open to close.
 *
 * A database directory (cl_open: exclusive; cl_inspect: shared) and the
 * working directory of a long CLI run (matrix, crash, a bench run
 * directory) are locked this way.  The lock belongs to the open file
 * description, so a second lock of the same directory conflicts even from
 * the same process, and the kernel drops it when its holder exits or is
 * killed: a crashed holder leaves nothing behind to clean up.  Locking
 * the directory rather than a file in it writes nothing, so a reader that
 * only inspects never changes what it reads.  (LMDB locks lock.mdb,
 * SQLite takes POSIX locks on the database file, RocksDB an fcntl lock
 * on its LOCK file; each refuses a second writer the same way.)
 *
 * A database's page file is locked the same way (DIR_LOCK_FILE), because
 * a lock on the directory follows its path, not its data: a copy made with
 * hard links (cp -al, rsnapshot) is a second directory whose files are the
 * same inodes, and only a lock on the file itself keeps a second opener of
 * the copy out while the first is open.  (SQLite locks the database file
 * for the same reason.)
 *
 * fork(2) shares the locked open file description with the child, so a
 * child that lives on would hold the lock after its parent closed or died.
 * A lock taken with DIR_LOCK_PROCESS is this process's alone: in every
 * child made by fork() the child's copy of its descriptor is closed (a
 * pthread_atfork handler), which leaves the parent's lock as it was, and
 * fork() returns in the parent only after the child has closed them.  A
 * child made by a raw clone(2) runs no handler and keeps the lock until it
 * exits or execs (the descriptor is close-on-exec).
 *
 * flock is advisory, and local: it keeps out the programs that take it
 * (libcommitlab and the commitlab command), not a process that writes the
 * files directly; and it is only as good as the filesystem's view of it.
 * Two views served by different kernels or servers -- a directory seen
 * through a FUSE passthrough mount beside the same directory seen
 * directly, or from two NFS clients whose server does not see flock --
 * are different files to the lock, and both openers get in.
 */
#ifndef CL_DIRLOCK_H
#define CL_DIRLOCK_H

#include <sys/types.h>

struct dir_lock;

#define DIR_LOCK_SHARED 1u  /* a shared lock (readers); default exclusive */
#define DIR_LOCK_FILE 2u    /* path is a regular file, not a directory: opened without following a
                             * symbolic link or blocking on a FIFO; anything else is CL_EFILETYPE */
#define DIR_LOCK_PROCESS 4u /* not inherited by fork(): closed in every child (above) */

/* Locks dir (a file, with DIR_LOCK_FILE) without waiting.  Returns 0 and *out; -EWOULDBLOCK when
 * another open file description holds a conflicting lock (*holder, when
 * not NULL, gets its process id as the kernel lists it in /proc/locks, or
 * 0 when it cannot be known); -ENOTDIR when dir is not a directory; or
 * another -errno (-ENOENT when it does not exist).  dir itself may be a symbolic link to a directory:
 * naming it is the caller's choice, unlike a link found inside it. */
int dir_lock(const char *dir, unsigned flags, struct dir_lock **out, pid_t *holder);

/* Releases the lock and frees; NULL is a no-op. */
void dir_unlock(struct dir_lock *l);

/* The process holding a flock on path, from /proc/locks: its pid, or 0
 * when none is listed or it cannot be read. */
pid_t dir_lock_holder(const char *path);

#endif /* CL_DIRLOCK_H */
