/*
 * vfs_fault.h -- a fault-injecting file layer that wraps another backend.
 *
 * It remembers every write (and truncate/fallocate) made to each file since
 * that file's last successful sync, with the bytes it replaced, and every
 * create/rename/unlink made in a directory since that directory's last
 * sync.  vfs_fault_crash() then rewrites the real files into a state that a
 * power failure at that instant could have left, after which the layer is
 * "dead": every operation fails with -EIO, so nothing the engine does after
 * the crash reaches the files.
 *
 * Crash models (after SQLite's test6.c and LevelDB's fault-injection env):
 *   DROP     every unsynced write is lost; every unsynced directory change
 *            is reverted (created files and directories vanish, unlinked
 *            files come back, renames are undone).
 *   TORN     each unsynced write independently kept, dropped, or torn: any
 *            subset of its 512-byte sectors survives (a multi-page write may
 *            keep later pages and lose earlier ones); directory changes
 *            survive as a prefix of their order (journaled metadata).
 *   REORDER  a random subset of unsynced writes is kept whole regardless of
 *            order; directory changes as in TORN.
 * Kept writes are applied in their original order at their original
 * positions.  A directory (mkdir) is, like a file name, durable only once
 * its parent directory is synced; undoing it removes what is inside.  A
 * crash armed at a write comes while the write is in flight: even an
 * O_DSYNC, RWF_DSYNC or O_DIRECT write may then be lost or torn.  A write
 * to a file opened with VFS_O_WRITE_DSYNC (RWF_DSYNC) is a sync of its own
 * bytes, as an O_DSYNC write is: it counts as a SYNC for injected errors,
 * a lying device makes it not durable, and through a ring it is durable
 * once it has run.
 *
 * fsyncgate: when an injected sync error fails a sync, the writes it should
 * have made durable are marked lost -- a later sync that succeeds does not
 * save them, as on Linux where the failed pages may be marked clean.
 *
 * Everything is deterministic for a seed.  All operations are serialised by
 * one mutex, so the layer may be used from many threads.
 */
#ifndef CL_VFS_FAULT_H
#define CL_VFS_FAULT_H

#include "vfs.h"

enum vfs_crash_model { VFS_CRASH_DROP = 0, VFS_CRASH_TORN, VFS_CRASH_REORDER };

/* Wraps base (not owned).  Returns NULL on out of memory. */
struct vfs *vfs_fault_new(struct vfs *base);

/* Produces the crash state now; then every operation fails with -EIO.
 * Returns 0 or -errno if restoring the files failed. */
int vfs_fault_crash(struct vfs *v, enum vfs_crash_model model, uint64_t seed);

/* Arms a crash that happens just before the n-th operation from now
 * (n >= 1; every vfs call counts as one operation); that operation and all
 * later ones fail with -EIO. */
void vfs_fault_crash_at(struct vfs *v, uint64_t n, enum vfs_crash_model model, uint64_t seed);

/* A process crash (kill -9): now, or just before the n-th operation from
 * now (n >= 1).  From then every operation fails with -EIO, but nothing is
 * undone: what was written stays as the page cache holds it.  Stack one
 * fault layer (the process, killed) on another (the machine, which may
 * crash later) to model a process crash followed by a power failure. */
void vfs_fault_kill(struct vfs *v);
void vfs_fault_kill_at(struct vfs *v, uint64_t n);

/* A device that lies: with on, fsync, fdatasync and O_DSYNC/RWF_DSYNC writes of
 * files return success and make nothing durable (a write cache that
 * ignores flushes; the case F_FULLFSYNC exists for).  Directory syncs stay
 * honest.  For checking that a crash campaign can fail. */
void vfs_fault_lie(struct vfs *v, int on);

/* Injected errors: the n-th call of kind op from now fails with err
 * (n >= 1; 0 disarms), having done nothing.  SYNC counts fsync, fdatasync
 * and O_DSYNC/RWF_DSYNC writes, and a failed sync dooms the writes it should have
 * saved (fsyncgate); SYNC_DIR leaves the directory's changes unsynced. */
enum vfs_fault_op {
    VFS_FAULT_OPEN = 0, VFS_FAULT_READ, VFS_FAULT_WRITE, VFS_FAULT_SYNC, VFS_FAULT_SYNC_DIR,
    VFS_FAULT_RENAME, VFS_FAULT_UNLINK, VFS_FAULT_MKDIR, VFS_FAULT_FALLOCATE, VFS_FAULT_TRUNCATE,
    VFS_FAULT_NOPS
};
void vfs_fault_fail(struct vfs *v, enum vfs_fault_op op, uint64_t n, int err);
/* Shorthands: the n-th sync fails with err (e.g. -EIO); the n-th pwrite
 * fails with err (e.g. -ENOSPC, with nothing written). */
void vfs_fault_fail_sync(struct vfs *v, uint64_t n, int err);
void vfs_fault_fail_write(struct vfs *v, uint64_t n, int err);

/* Rings (vfs.h, "asynchronous chains"): a chain is performed op by op
 * through this layer's own pwrite/fsync/fdatasync -- so it is tracked, each
 * op counts as an operation for crash_at, and injected faults hit it -- and
 * a failure or a short write turns the later links into -ECANCELED.  Drawn
 * from the ring seed, a chain either runs at submit or is held and runs at
 * a later reap (or at close), so a later chain may finish -- its sync
 * included -- while an earlier chain's write has not happened; a crash then
 * loses the earlier write though the later sync completed.  Finished
 * chains are reported in an order drawn from the seed, not in submission
 * order.  The seed applies to rings opened after the call (default 0). */
void vfs_fault_ring_seed(struct vfs *v, uint64_t seed);

/* The n-th write submitted through a ring from now writes only its first
 * half (rounded down to a 512-byte sector on an O_DIRECT file: the rest
 * then starts unaligned) and reports that count, as a short write; a write
 * too short to cut is written whole and the next one is cut instead.
 * n >= 1; 0 disarms.  An O_DIRECT write whose buffer, offset or length is
 * not VFS_DIRECT_ALIGN-aligned fails with -EINVAL, as O_DIRECT may. */
void vfs_fault_short_write(struct vfs *v, uint64_t n);

/* Operations performed so far; whether a crash has happened. */
uint64_t vfs_fault_ops(struct vfs *v);
int vfs_fault_crashed(struct vfs *v);

/* Parses "drop", "torn", "reorder"; returns 0 or -EINVAL. */
int vfs_crash_model_parse(const char *s, enum vfs_crash_model *out);
const char *vfs_crash_model_name(enum vfs_crash_model m);

#endif /* CL_VFS_FAULT_H */
