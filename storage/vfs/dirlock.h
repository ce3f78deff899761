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
 * flock is advisory: it keeps out the programs that take it (libcommitlab
 * and the commitlab command), not a process that writes the files
 * directly.
 */
#ifndef CL_DIRLOCK_H
#define CL_DIRLOCK_H

#include <sys/types.h>

struct dir_lock;

#define DIR_LOCK_SHARED 1u /* a shared lock (readers); default exclusive */

/* Locks dir without waiting.  Returns 0 and *out; -EWOULDBLOCK when
 * another open file description holds a conflicting lock (*holder, when
 * not NULL, gets its process id as the kernel lists it in /proc/locks, or
 * 0 when it cannot be known); -ENOTDIR when dir is not a directory; or
 * another -errno.  dir itself may be a symbolic link to a directory:
 * naming it is the caller's choice, unlike a link found inside it. */
int dir_lock(const char *dir, unsigned flags, struct dir_lock **out, pid_t *holder);

/* Releases the lock and frees; NULL is a no-op. */
void dir_unlock(struct dir_lock *l);

/* The process holding a flock on path, from /proc/locks: its pid, or 0
 * when none is listed or it cannot be read. */
pid_t dir_lock_holder(const char *path);

#endif /* CL_DIRLOCK_H */
