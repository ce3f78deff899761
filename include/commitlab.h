/*
 * commitlab.h -- the public API of libcommitlab, and its contract.
 *
 * commitlab is a small WAL + page-store key-value engine whose commit path
 * is pluggable.  A database is a directory holding one page file
 * ("data.clp", B+tree pages plus two alternating meta pages) and a write-ahead
 * log made of segment files ("wal-<segno>.log").  See docs/design.md for the
 * commit protocol and docs/wal-format.md for the log's bytes.
 *
 * Conventions (every function below):
 *   - returns 0 on success, -errno for an operating-system failure, or one
 *     of the CL_E* codes (a reserved negative range below -10000);
 *   - cl_strerror() names every code;
 *   - after a failed log write or sync the handle is broken: every later
 *     write call returns CL_EBROKEN.  Never retry fsync and trust it; close
 *     and reopen instead, and recovery brings back every acknowledged commit.
 *     If applying a transaction to the tree failed part way (a page write
 *     or read failing), reads return CL_EBROKEN too: no reader ever sees
 *     part of a transaction.
 *
 * One process per database: cl_open takes an exclusive lock on the
 * directory and on its page file (flock(2) on each) and holds them until
 * cl_close.  A second cl_open of the same database, from another process
 * or from the same one, returns CL_EBUSY at once, before it writes, syncs
 * or deletes anything there; cl_error_detail() then reads "database DIR
 * is in use (process PID)".  The page file's lock follows the data, not
 * the path: a second directory that reaches the same page file -- a copy
 * made with hard links (cp -al, rsnapshot), a bind mount, a symbolic link
 * to the directory -- is refused while the first is open.  cl_inspect
 * takes both locks shared: it refuses a database in use, and an open
 * refuses while it reads.  The kernel drops the locks when their holder
 * exits or is killed, so a crashed holder leaves none behind and the
 * next cl_open recovers.  The locks are advisory, and only as good as the
 * filesystem's view of them: a process that writes the files without
 * libcommitlab is not kept out, and two views of one directory that
 * different kernels serve (a FUSE passthrough mount beside the directory
 * itself, two NFS clients) are two files to flock, and both opens succeed.
 *
 * Hard-linked copies: a file of the database that has other links when
 * cl_open finds it (the page file, a log segment) is first replaced by a
 * private copy of itself (copied, synced, renamed over the name, the
 * directory synced), so that nothing this handle writes -- the page file
 * in place, a recycled segment -- reaches the other directory's files.
 * Either copy may then be opened, in either order, and neither damages
 * the other.  cl_recovery_info.files_unshared counts the files copied.
 *
 * Processes: a handle, and every transaction of it, belongs to the
 * process that opened it.  In a child made by fork() every call on an
 * inherited handle or transaction returns CL_EFORK and does nothing
 * (cl_close included: the child has none of the handle's threads, and
 * frees nothing; cl_abort frees the transaction's memory only), as LMDB
 * and SQLite forbid using a handle across fork().  The child does not
 * hold the database's locks: the parent may close and reopen, or die and
 * be recovered by the next opener, while the child lives.  Open the
 * database again in the child, after the parent has closed it, to use it
 * there.  (A child made by a raw clone(2) is not noticed; one that execs
 * inherits nothing.)
 *
 * Files: inside a database directory only regular files are opened, never
 * through a symbolic link; anything else where data.clp or a segment
 * should be is refused with CL_EFILETYPE, naming it, without blocking (a
 * FIFO is never waited on).
 *
 * Threads: one cl_db may be shared by any number of threads.  A cl_txn
 * belongs to the thread that began it (and must be committed or aborted
 * there).
 *
 * Isolation:
 *   - Write transactions are serialisable.  A write transaction takes the
 *     writer lock at its first read (cl_get, cl_scan, cl_del) and holds it
 *     until cl_commit has appended it to the log (with early lock release:
 *     before waiting for the sync, so group commit still batches; without:
 *     until durable) or until cl_abort, as LMDB's write transactions do.
 *     Read-modify-write transactions therefore run one at a time, in
 *     commit order: no lost update, no write skew.  One that only writes
 *     (cl_put) takes the lock at commit only.  While a thread holds the
 *     writer lock through one write transaction, a second one of the same
 *     thread that needs it (to read or commit), and cl_checkpoint, return
 *     CL_EBUSY rather than wait for itself.  This is per database: a
 *     thread may hold write transactions on any number of databases.
 *   - Read-only transactions are read committed: each read sees the latest
 *     committed transactions, with no snapshot across reads, and never
 *     waits for the writer lock or for a sync.  With early lock release
 *     (the default) a reader may see a commit that is not yet durable: it
 *     is acknowledged later, or, if its sync fails or the power fails
 *     first, it may be gone after reopening.  With elr off a reader sees
 *     only durable commits.
 */
#ifndef COMMITLAB_H
#define COMMITLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CL_VERSION_MAJOR 0
#define CL_VERSION_MINOR 2

/* The shared library exports only what this header declares with CL_API
 * (it is built with hidden visibility). */
#if defined(__GNUC__)
#define CL_API __attribute__((visibility("default")))
#else
#define CL_API
#endif

/* ---- error codes: the reserved range [-10099, -10001] ------------------ */
#define CL_ENOTFOUND  (-10001) /* key not present */
#define CL_ECORRUPT   (-10002) /* a checksum or structural check failed */
#define CL_EBROKEN    (-10003) /* an earlier log write or sync failed: handle is read-only until reopened */
#define CL_EINVAL     (-10004) /* invalid argument or option */
#define CL_ETOOBIG    (-10005) /* key longer than CL_MAX_KEY or value longer than CL_MAX_VALUE */
#define CL_EBUSY      (-10006) /* cl_open, cl_inspect: the database is in use (see "One process per
                                * database"); a transaction: this thread holds the writer lock through
                                * another write transaction */
#define CL_EFORMAT    (-10007) /* not a commitlab database, or an unsupported format version */
#define CL_ENOTSUP    (-10008) /* the option or policy is not built or not available here */
#define CL_EREADONLY  (-10009) /* write call on a read-only transaction */
#define CL_ENOMEM     (-10010) /* out of memory */
#define CL_ETXNDONE   (-10011) /* the transaction was already committed or aborted */
#define CL_EINTERNAL  (-10012) /* an internal consistency check failed: a bug in commitlab, not the caller's */
#define CL_EFILETYPE  (-10013) /* a database file is a symbolic link, FIFO, device, socket or directory */
#define CL_EFORK      (-10014) /* the handle belongs to the process that opened it, and this is a child
                                * made by fork() (see "Processes") */
#define CL_ERR_FIRST  (-10001)
#define CL_ERR_LAST   (-10014)

#define CL_MAX_KEY   512u
#define CL_MAX_VALUE 4096u
#define CL_MAX_URING_DEPTH 1024u /* uring_depth above it is CL_EINVAL */
#define CL_MAX_SEGMENT_SIZE (1ull << 30) /* segment_size above it is CL_EINVAL */

/* ---- options ----------------------------------------------------------- */

/* When and by whom the log is made durable: the sync policies, in one
 * list (X(ENUM_SUFFIX, name)).  Each is one file wal/policy_<name>.c whose
 * table, wal_policy_<name>, states what it promises when cl_commit returns
 * 0; adding a policy is adding that file and one line here (and a row in
 * the table of options for each option only it reads: cl_option_info).
 *   none      write(2) only: survives a process crash, not power loss
 *   periodic  write only; a background thread syncs every interval_ms
 *   commit    each commit writes and syncs its own record
 *   group     leader/follower group commit
 *   uring     io_uring linked write->fsync chains, several in flight
 *   flusher   one dedicated thread writes and syncs for every committer */
#define CL_SYNC_POLICIES(X) \
    X(NONE, none)           \
    X(PERIODIC, periodic)   \
    X(COMMIT, commit)       \
    X(GROUP, group)         \
    X(URING, uring)         \
    X(FLUSHER, flusher)

enum cl_sync_policy {
#define CL_SYNC_ENUM_(e, n) CL_SYNC_##e,
    CL_SYNC_POLICIES(CL_SYNC_ENUM_)
#undef CL_SYNC_ENUM_
    CL_SYNC_NPOLICIES
};

/* Which system call makes bytes durable. */
enum cl_sync_method {
    CL_METHOD_FDATASYNC = 0,
    CL_METHOD_FSYNC,
    CL_METHOD_DSYNC,    /* O_DSYNC on the segment descriptor */
    CL_METHOD_DIRECT,   /* O_DIRECT | O_DSYNC, aligned buffers */
    CL_METHOD_RWF_DSYNC /* "rwf-dsync": each write is pwritev2(2) with RWF_DSYNC on an ordinary
                         * descriptor, durable when it returns, as under O_DSYNC;
                         * cl_open probes it once and returns CL_ENOTSUP, cl_error_detail()
                         * saying why, where the kernel refuses the flag */
};

/* How the uring policy makes a chain's write durable.  fsync: the write is
 * linked to an fsync/fdatasync (as the method says).  rwf-dsync: the write
 * itself carries RWF_DSYNC (the SQE's rw_flags) and no sync is linked --
 * the log is then written as under the rwf-dsync method, which it needs
 * the kernel to accept as that method does.  Only with the fdatasync,
 * fsync and rwf-dsync methods (dsync and direct already make every write
 * durable: CL_EINVAL); the other policies ignore it. */
enum cl_uring_sync { CL_URING_SYNC_FSYNC = 0, CL_URING_SYNC_RWF_DSYNC };

/* Where the log's next segment file comes from.  fresh: a new file,
 * prepared as segment_init says; a retired segment is deleted.  recycle: a
 * segment the checkpoint retires is renamed to a future segment's name and
 * overwritten in place (PostgreSQL's wal_recycle), as long as fewer than
 * recycle_max future segments are ready; above that it is deleted. */
enum cl_segment_policy { CL_SEGMENTS_FRESH = 0, CL_SEGMENTS_RECYCLE };
enum cl_segment_init { CL_SEGINIT_ZERO = 0, CL_SEGINIT_SPARSE, CL_SEGINIT_FALLOCATE };

/* How a committer waits for its commit to become durable, under the
 * policies where it waits for another thread's sync (group and uring: for
 * the leader; flusher: for the flusher thread).  Whichever it is, the
 * syncer wakes only the committers its sync covered (per LSN, no
 * broadcast).  block: sleep at once (futex), woken by the syncer -- the
 * least CPU, a sleep and a wake-up per commit.  spin: never sleep; spin on
 * the durable LSN (or on the waiter's own flag, which the syncer sets once
 * the durable LSN covers it) with a pause instruction -- the quickest to
 * see the sync end while there are cores to spare, and a core burnt per
 * waiter (more waiters than cores slow the syncer down).  adaptive: spin
 * wait_spin_us, then yield the processor a bounded number of times, then
 * sleep as block does (MySQL 8.0's log_wait_for_flush, RocksDB's
 * AwaitState).  The commit policy's committers, waiting for their turn, and
 * cl_commit_async's callbacks are not concerned. */
enum cl_wait { CL_WAIT_BLOCK = 0, CL_WAIT_SPIN, CL_WAIT_ADAPTIVE };

/* How a commit's records enter the log buffer.  mutex: the appender takes
 * the log's append mutex for its whole transaction and copies its records
 * under it, one appender at a time.  slots: consolidated insertion, as
 * WiredTiger's log slots and Aether's consolidation array do it -- an
 * appender joins the open slot with one atomic add that reserves its bytes
 * in it, the first to join takes the log position for the whole slot under
 * the append mutex, and each member copies its own records into its range
 * outside any lock.  The records, their LSNs and what is durable are the
 * same either way.  The engine appends under its writer lock (C1), so
 * through cl_commit a slot has one member: slots pay only where the log is
 * appended to by several threads at once (docs/design.md, "The log
 * buffer"). */
enum cl_log_insert { CL_LOG_INSERT_MUTEX = 0, CL_LOG_INSERT_SLOTS };

/* Every option has a range; cl_open refuses a value outside it with
 * CL_EINVAL, and cl_error_detail() names the option and its range
 * ("option uring_depth = 0 is out of range: 1..1024 chains").  Nothing is
 * clamped or replaced by a default behind the caller's back. */
struct cl_options {
    enum cl_sync_policy sync;        /* default CL_SYNC_COMMIT */
    enum cl_sync_method method;      /* default CL_METHOD_FDATASYNC */
    int elr;                         /* early lock release, 0 or 1, default 1 */
    enum cl_segment_policy segments; /* default CL_SEGMENTS_FRESH */
    enum cl_segment_init segment_init; /* default CL_SEGINIT_ZERO */
    uint32_t recycle_max;            /* recycle: future segments kept ready at most, 1..64, default 4 */
    uint32_t prealloc;               /* segments a background thread keeps prepared ahead, 0..64, default 0 */
    uint64_t segment_size;           /* WAL segment bytes, 64 KiB..CL_MAX_SEGMENT_SIZE (1 GiB), a multiple of
                                      * 4096, default 16 MiB; fixed at creation (a later open uses the
                                      * stored size) */
    uint64_t cache_size;             /* page cache bytes, 64 KiB..64 GiB, default 64 MiB */
    uint64_t checkpoint_bytes;       /* WAL bytes between checkpoints, 0..1 TiB, default 64 MiB; 0 = only on
                                      * demand/close */
    uint32_t interval_ms;            /* periodic policy: 1..60000, default 200 */
    uint32_t commit_delay_us;        /* group policy: 0..100000 (PostgreSQL's range), default 0 */
    uint32_t commit_siblings;        /* group policy: 0..1000 (PostgreSQL's range), default 5 */
    uint32_t uring_depth;            /* uring policy: chains in flight, 1..CL_MAX_URING_DEPTH, default 4 */
    uint64_t max_batch;              /* group policy: log bytes one write may take, 0..1 MiB; 0 = the whole
                                      * log buffer (1 MiB), default 0 */
    uint32_t flusher_spin_us;        /* flusher policy: spin this long before sleeping, 0..100000, default 0 */
    uint32_t sync_latency_us;        /* emulated extra latency per sync, 0..10000000, default 0 */
    int create;                      /* create the database if absent, 0 or 1, default 1 */
    int cold_recycle;                /* recycle: drop a retired segment's pages from the operating system's
                                      * page cache before it is reused (posix_fadvise DONTNEED after its
                                      * last sync), so that its reuse meets the device, as a segment
                                      * retired long ago would; 0 or 1, default 0 (a benchmark's knob) */
    enum cl_uring_sync uring_sync;   /* uring policy: a linked sync or RWF_DSYNC writes, default fsync */
    int no_final_checkpoint;         /* cl_close takes no checkpoint: it writes and syncs the log, as a
                                      * durable commit would, and leaves it for the next cl_open to
                                      * recover, as after a crash -- so the log after the last
                                      * checkpoint can be read (`commitlab inspect --records`); 0 or 1,
                                      * default 0 (cl_close checkpoints) (since 0.2) */
    enum cl_wait wait;               /* group, uring, flusher: how a committer waits for durability (enum
                                      * cl_wait), default CL_WAIT_BLOCK (since 0.2) */
    uint32_t wait_spin_us;           /* wait adaptive: us a committer spins before it yields and then
                                      * sleeps, 0..100000, default 0: it yields at once (on a machine
                                      * with fewer cores than committers every us of spinning measured
                                      * cost throughput; see docs/design.md) (since 0.2) */
    enum cl_log_insert log_insert;   /* how records enter the log buffer (enum cl_log_insert), default
                                      * CL_LOG_INSERT_MUTEX (since 0.2) */
};

/* Fills *o with the defaults above. */
CL_API void cl_options_init(struct cl_options *o);

/* ---- the options, described by the library (since 0.2) ----------------------
 * Every field of struct cl_options is one row of the library's own table,
 * in the struct's order: its name, the sync policy it tunes, the range
 * cl_open accepts, the default cl_options_init fills and one line of help.
 * The table is what cl_options_init and cl_open use themselves, so a
 * program that offers the options to its users -- `commitlab bench` makes
 * its flags from it -- reads them here rather than copying them, and its
 * defaults, ranges and help follow the library it runs with:
 *
 *     for (int i = 0; i < cl_option_count(); i++) {
 *         const struct cl_option_info *o = cl_option_info(i);
 *         if (o->type == CL_OPTION_NUMBER)
 *             printf("%-16s %s (%llu..%llu %s, default %llu)\n", o->name, o->help,
 *                    (unsigned long long)o->min, (unsigned long long)o->max, o->unit,
 *                    (unsigned long long)o->dflt);
 *     }
 *
 * A range is not the whole check: cl_open also refuses a segment_size
 * that is not a multiple of 4096 and uring_sync rwf-dsync with the dsync
 * or direct method (the fields' comments above). */
enum cl_option_type {
    CL_OPTION_NUMBER = 0, /* an unsigned integer in [min, max], counted in unit */
    CL_OPTION_FLAG,       /* 0 or 1 */
    CL_OPTION_ENUM        /* an enum of this header, one of names[min..max] */
};

/* cl_option_info.policy of an option every policy reads. */
#define CL_OPTION_ALL_POLICIES (-1)

struct cl_option_info {
    const char *name;          /* the field of struct cl_options: "commit_delay_us" */
    enum cl_option_type type;
    int policy;                /* the enum cl_sync_policy that reads it (the others ignore it), or
                                * CL_OPTION_ALL_POLICIES */
    uint64_t min, max;         /* the range cl_open accepts, both ends included */
    uint64_t dflt;             /* the default (cl_options_init) */
    const char *unit;          /* what the range counts: "us", "bytes", "segments", ...; "flag" for a
                                * flag; for an enum, what its values are ("policy", "method", "mode") */
    const char *const *names;  /* CL_OPTION_ENUM: names[v] names value v, as the CLI and the _name
                                * functions spell it, NULL after the last; NULL for the other types */
    const char *help;          /* one line of English, without the option's name or policy */
};

/* The number of rows of the table: cl_option_info(0) .. cl_option_info(count - 1). */
CL_API int cl_option_count(void);

/* Row i of the table of options, or NULL when i is not in
 * [0, cl_option_count()).  The rows are the library's static memory,
 * valid for the life of the process; never free or write them.  The
 * struct may grow at its end in a later version: read it through the
 * pointer, and never copy it by value or step from one row to the next
 * with pointer arithmetic. */
CL_API const struct cl_option_info *cl_option_info(int i);

/* Sets the option called name (a row's name, "commit_delay_us") of *o to
 * value: a number as it counts, a flag 0 or 1, an enum the value whose
 * name its row's names[value] is.  size is sizeof *o as the caller was
 * built (struct cl_options grows: "structures that grow" below).  The
 * value is checked against the row's range as cl_open checks it: 0;
 * CL_EINVAL, cl_error_detail() saying why, when no option has that name
 * or value is out of range; CL_ENOTSUP for an option beyond size.  With
 * cl_option_info, a program hands its users every option -- one a later
 * libcommitlab adds included -- without code of its own per option, as
 * `commitlab bench` does.  (since 0.2) */
CL_API int cl_option_set(struct cl_options *o, size_t size, const char *name, uint64_t value);

/* ---- structures that grow ---------------------------------------------------
 * struct cl_options, cl_recovery_info and cl_stats are allocated by the
 * caller and grow only at their ends.  The calls that take them have a
 * form that is told the caller's size, and the usual names below are
 * macros for it, so a program passes the size it was built with:
 *   - a field beyond that size is never read or written: on input it
 *     takes its default, on output it is left alone;
 *   - a caller built against a newer header (larger than this library's
 *     struct) must leave the bytes this library does not know zero, or
 *     cl_open refuses with CL_ENOTSUP (an option this library lacks);
 *     outputs fill only what this library knows.
 * A program built before the sized forms existed calls the plain symbols,
 * which take the layouts of libcommitlab 0.1 (every field up to create,
 * bad_file and batch_hist).  Define CL_NO_SIZED_CALLS before including
 * this header to call the plain symbols. */
CL_API void cl_options_init_sized(struct cl_options *o, size_t size);

/* What cl_open found and did; filled when the caller passes one. */
struct cl_recovery_info {
    int created;                /* a new database was created */
    uint64_t checkpoint_lsn;    /* LSN of the checkpoint recovery started from */
    uint64_t end_lsn;           /* first LSN after the valid log */
    uint64_t txns_replayed;     /* committed transactions redone */
    uint64_t txns_discarded;    /* incomplete transactions at the log's end */
    uint64_t records_read;
    int torn_tail;              /* the log ended in a torn or partial record */
    uint64_t corrupt_lsn;       /* when cl_open returns CL_ECORRUPT for the log: the damaged record */
    int missing_segment;        /* ... and the segment holding corrupt_lsn is missing: later ones exist, a
                                 * SWITCH record points into it, or the checkpoint's log begins there */
    char bad_file[64];          /* when cl_open returns CL_EFORMAT or CL_ECORRUPT: the file of dir it refused
                                 * ("data.clp", or a segment "wal-<segno>.log" that is damaged or names another
                                 * database); empty otherwise.  The refused file is left as it was. */    uint32_t files_unshared;    /* files of dir that had other hard links, replaced by private copies before
                                 * anything was written (see "Hard-linked copies" above) */
};

struct cl_db;
struct cl_txn;

/* Opens (and, with opts->create, creates) the database in dir, recovering
 * from the log.  opts may be NULL for the defaults; info may be NULL.
 * CL_EBUSY when the database is open elsewhere (One process per database
 * above); on any failure cl_error_detail() may say more. */
CL_API int cl_open(const char *dir, const struct cl_options *opts,
            struct cl_db **out, struct cl_recovery_info *info);
CL_API int cl_open_sized(const char *dir, const struct cl_options *opts, size_t opts_size, struct cl_db **out,
                         struct cl_recovery_info *info, size_t info_size);

/* Checkpoints, syncs and frees.  Returns the final checkpoint's error if it
 * failed (-EIO, -ENOSPC, ...; the handle is freed all the same).  With
 * the option no_final_checkpoint it takes no checkpoint: it writes and
 * syncs the log to its end, returning that sync's error if it failed, and
 * leaves the records after the last checkpoint in the log, for the next
 * cl_open to recover as it does after a crash.  On a broken handle it
 * frees without writing and returns CL_EBROKEN.  Either way the directory
 * recovers on the next open.  Every callback of an asynchronous commit has
 * been called when it returns (0 for those the final checkpoint, or the
 * final sync, made durable; the error otherwise).  No other call on
 * db may run during or after it; from inside a callback it returns
 * CL_EBUSY and closes nothing. */
CL_API int cl_close(struct cl_db *db);

/* Writes dirty pages, records the checkpoint LSN durably, retires old
 * WAL segments. */
CL_API int cl_checkpoint(struct cl_db *db);

#define CL_TXN_RDONLY 1u

/* Begins a transaction.  A write transaction (flags 0) buffers its writes
 * privately (read-your-writes) and takes the writer lock at its first read,
 * or at commit if it never reads (see Isolation above). */
CL_API int cl_txn_begin(struct cl_db *db, unsigned flags, struct cl_txn **out);

CL_API int cl_put(struct cl_txn *t, const void *key, size_t klen, const void *val, size_t vlen);
CL_API int cl_del(struct cl_txn *t, const void *key, size_t klen); /* CL_ENOTFOUND if absent */

/* Copies the value into buf (up to cap bytes); *vlen gets its full length. */
CL_API int cl_get(struct cl_txn *t, const void *key, size_t klen, void *buf, size_t cap, size_t *vlen);

/* Calls fn for each key in [lo, hi) in key order (lo/hi NULL = unbounded),
 * including the transaction's own writes.  fn returning non-zero stops the
 * scan, and cl_scan returns that value.
 *
 * The scan visits a stable view: the committed keys and the transaction's
 * own writes as they were when cl_scan began.  fn may write through the
 * same transaction (cl_put, cl_del): each such write is applied once, to
 * the transaction, and is not visited by this scan -- neither a new value
 * of a key already visited or still to come, nor a key inserted inside
 * the range.  key and val are valid until fn returns. */
typedef int (*cl_scan_fn)(void *arg, const void *key, size_t klen, const void *val, size_t vlen);
CL_API int cl_scan(struct cl_txn *t, const void *lo, size_t lolen, const void *hi, size_t hilen,
            cl_scan_fn fn, void *arg);

/* Commits and frees t.  0 means acknowledged: durable as the sync policy
 * promises.  On failure nothing of t is acknowledged. */
CL_API int cl_commit(struct cl_txn *t);
CL_API void cl_abort(struct cl_txn *t);

/* Where one commit's time went, in nanoseconds.  The phases follow each
 * other; the rest of cl_commit's time is listing the write set for the
 * log and the tree (a few allocations):
 *   lock     waiting for the writer lock (0 when the transaction held it
 *            since its first read);
 *   append   copying the records into the log buffer;
 *   apply    applying the writes to the tree (before the wait with early
 *            lock release, after it without);
 *   queue    waiting before the I/O that made this commit durable began
 *            (for a leader, the flusher, one's turn, or a batch ahead);
 *   write    that I/O's write(s), as far as they fell within this commit's
 *            wait (under O_DSYNC the write is the sync: all of it is here);
 *   sync     that I/O's sync, likewise (an io_uring chain's linked write
 *            and sync are one, counted here);
 *   wakeup   from the log being durable to this committer running again.
 * A policy that does not sync (none, periodic) reports its write(2) as
 * write.  The I/O is the batch's: a follower reports the leader's. */
struct cl_commit_times {
    uint64_t lock_ns, append_ns, apply_ns, queue_ns, write_ns, sync_ns, wakeup_ns;
};
/* As cl_commit, and fills *tm (when not NULL) when it returns 0. */
CL_API int cl_commit_timed(struct cl_txn *t, struct cl_commit_times *tm);

/* ---- asynchronous commit (Aether's, Johnson et al., VLDB 2010) -----------
 *
 * cl_commit_async(t, fn, arg) commits t without waiting for its sync and
 * consumes the handle (also on error).  It returns 0 once the transaction
 * is in the log (and, with early lock release, applied: visible to later
 * transactions as a cl_commit'ed one is before its sync -- readers may see
 * it before it is durable, and a later writer that read it commits after
 * it in the log).  A nonzero return means the commit was refused (as
 * cl_commit refuses: CL_EBROKEN, CL_ETOOBIG, CL_EBUSY, CL_ENOMEM, an I/O
 * error appending) and fn is never called.  After a 0:
 *   - fn(arg, 0) is called exactly once, when the transaction is durable
 *     as the policy promises (the durability contract of cl_commit: with a
 *     durable policy it survives any later power failure);
 *   - or, if the write or sync of its batch failed, fn(arg, rc) with the
 *     error (rc < 0) instead, and the handle is broken (sticky), as when a
 *     cl_commit fails: no member of the failed batch gets 0, every later
 *     write call returns CL_EBROKEN, reopening recovers.  A callback still
 *     waiting when the handle closes broken gets CL_EBROKEN.
 * Callbacks of one database run one at a time, in commit (LSN) order, on
 * whichever thread made the log durable for them:
 *   none      the committing thread, in cl_commit_async itself (or right
 *             after, on a thread that was calling callbacks then): the
 *             callback comes at the write;
 *   periodic  the periodic thread, after the next periodic sync (the loss
 *             window stays interval_ms plus one sync; fn(arg, 0) means the
 *             transaction is durable);
 *   commit    the committing thread, after the sync it issues in its turn:
 *             cl_commit_async returns after its sync, as cl_commit does
 *             (one sync per commit, by its committer);
 *   group     the leader of its batch, after the sync.  A committer that
 *             finds a flush in progress returns at once; one that finds
 *             none leads (a write and a sync, or a few while others' keep
 *             arriving) before returning, as does one the leader asks to
 *             take over from it.  A lone asynchronous commit never waits
 *             for another committer: the leader of the batch it missed
 *             leads again for it;
 *   uring     the leader that reaps its chain (an io_uring completion),
 *             as group, with its write in a chain of its own or a later one;
 *   flusher   the flusher thread, after its sync; cl_commit_async only asks.
 * Callbacks also run inside other calls on the database that find them
 * due (cl_commit, cl_commit_async, cl_sync_wait, cl_checkpoint, cl_close)
 * and on its checkpoint thread, which may hold what a committer waits
 * for (a uring leader its ring, the flusher the next sync).  So a callback
 * must:
 *   - not block for long (it holds up the callbacks after it and, on a
 *     leader or the flusher, the next sync);
 *   - not take a lock that its program holds across calls on the database.
 * It may read: begin, read through and commit (cl_commit or
 * cl_commit_async) read-only transactions, and call cl_stats.  It never
 * waits for the writer lock or the log of the same database: a write
 * transaction it begins may cl_put into its own set, but its first read
 * (cl_get of a key it has not written, cl_del, cl_scan) and its commit
 * return CL_EBUSY at once, as do cl_sync_wait, cl_checkpoint and
 * cl_close (which closes nothing).  A callback may commit on another
 * database.
 *
 * With early lock release off the writer lock is held until the commit is
 * durable (C3), and a lock cannot be handed to the thread that makes the
 * log durable without one thread per waiter: cl_commit_async then holds
 * it and waits as cl_commit does -- for the sync under a durable policy,
 * for the write under none and periodic -- and fn comes before it
 * returns (on this thread, or on one calling callbacks then, which it
 * waits for), except under periodic, where it comes after the next
 * periodic sync as above, and from inside a callback (of any database),
 * where it may come just after, on the thread calling callbacks: a
 * callback never waits for another's.
 * Readers still see only what cl_commit would let them see; nothing is
 * pipelined.
 *
 * The batch histogram (cl_stats.batch_hist), commits and commits_per_sync
 * count asynchronous commits too (commits when acknowledged);
 * cl_commit_async_timed below times them as cl_commit_timed times a
 * synchronous one. */
typedef void (*cl_durable_fn)(void *arg, int rc);
CL_API int cl_commit_async(struct cl_txn *t, cl_durable_fn fn, void *arg);

/* As cl_commit_async, and fn gets where the commit's time went, as
 * cl_commit_timed's phases (tm, valid during the call; NULL when rc is
 * not 0):
 *   lock, append, apply   measured in cl_commit_async_timed, as in
 *                         cl_commit_timed;
 *   queue, write, sync    from the commit being handed to the log (after
 *                         apply) until the log was durable for it: the
 *                         I/O of the durable advance that covered it, as
 *                         far as it fell after the hand-over, and before
 *                         it the wait for that I/O (for the leader, the
 *                         flusher, the periodic thread, a batch ahead);
 *   wakeup                from the log being durable to fn being called.
 * Under none the callback comes at the write: all of the hand-over is
 * write, as cl_commit_timed reports it.  Under periodic the phases are
 * those of the periodic sync that covered the commit (cl_commit_timed's
 * are its write(2) alone: it returns before that sync).  With early lock
 * release off the commit waits in cl_commit_async_timed, and the phases
 * are cl_commit_timed's (apply after the wait; wakeup ends when the wait
 * does).  A transaction with nothing to log reports zeros.  The timing
 * costs a small allocation and a few clock reads per commit, which
 * cl_commit_async does not pay. */
typedef void (*cl_durable_timed_fn)(void *arg, int rc, const struct cl_commit_times *tm);
CL_API int cl_commit_async_timed(struct cl_txn *t, cl_durable_timed_fn fn, void *arg);

/* Returns once every transaction committed before the call (by cl_commit
 * or cl_commit_async) is durable as the policy promises and every callback
 * of those has returned -- making the log durable itself where the policy
 * has nobody else to (under periodic it waits for the next periodic sync)
 * -- or once one of them has failed: then it returns the error.  CL_EBUSY
 * from inside a callback of db. */
CL_API int cl_sync_wait(struct cl_db *db);

/* Batch sizes: cl_stats.batch_hist[n] counts the times the log became
 * durable further (a sync, an O_DSYNC write, an io_uring chain) and that
 * made n more commits durable at once, n = 1 .. CL_BATCH_HIST - 2; the
 * last entry counts the times it made more.  Entry 0 is unused. */
#define CL_BATCH_HIST 258

struct cl_stats {
    uint64_t commits;           /* acknowledged write transactions */
    uint64_t syncs;             /* log syncs (any method) */
    uint64_t wal_bytes;         /* bytes appended to the log */
    uint64_t wal_writes;        /* write calls on log segments */
    uint64_t data_writes;       /* page writes of this database (B+tree, overflow and meta pages) */
    uint64_t data_bytes;
    uint64_t checkpoints;
    uint64_t checkpoint_pause_us; /* total time commits were held by checkpoints */
    uint64_t max_commits_per_sync;
    double commits_per_sync;    /* commits / syncs (0 when no sync) */
    uint64_t durable_lsn;
    uint64_t end_lsn;
    uint64_t pages;             /* pages in the page file */
    uint64_t cache_hits, cache_misses, cache_evictions;
    /* segments */
    uint64_t segment_switches;  /* times the writer moved on to the next segment */
    uint64_t segments_created;  /* new segment files prepared (by the writer or the prealloc thread) */
    uint64_t segments_recycled; /* retired segments renamed to a future name for reuse */
    uint64_t segments_reused;   /* recycled segments the writer went on to write */
    uint64_t segments_removed;  /* retired segments deleted */
    uint64_t segment_waits;     /* times the writer found its next segment not ready */
    uint64_t segment_wait_us;   /* total time the writer (and the commits behind it) waited for one */
    uint64_t max_switch_commit_us; /* the longest cl_commit during which the writer switched segments
                                    * (since open or cl_stats_reset_max) */
    int prealloc_error;         /* 0, or the error that stopped the prealloc thread */
    int broken;                 /* the handle is broken (sticky failure) */
    uint64_t batch_hist[CL_BATCH_HIST]; /* commits made durable together (see CL_BATCH_HIST) */
    /* since 0.2 */
    uint64_t segment_size;      /* the log's segment size, fixed when the database was created (an open
                                 * of an existing database uses it, whatever cl_options says) */
};
CL_API int cl_stats(struct cl_db *db, struct cl_stats *out);
CL_API int cl_stats_sized(struct cl_db *db, struct cl_stats *out, size_t size);
/* Starts the peak values of cl_stats (max_commits_per_sync,
 * max_switch_commit_us) afresh, e.g. at the start of a measurement. */
CL_API void cl_stats_reset_max(struct cl_db *db);

/* ---- inspection (commitlab inspect, like pg_waldump / mdb_stat) ---------- */

struct cl_inspect_segment {
    uint64_t segno;
    uint64_t first_lsn;         /* LSN of its first record slot */
    int header_ok;              /* the segment header's magic, version and checksum are good */
    uint64_t header_db_id;
};

enum cl_inspect_corrupt {
    CL_CORRUPT_NONE = 0,
    CL_CORRUPT_PAGE,            /* a page of the tree: bad_page names it */
    CL_CORRUPT_LOG              /* a log record after the checkpoint: bad_lsn names it */
};

struct cl_inspect {
    /* the current meta page */
    uint32_t version, page_size;
    uint64_t db_id, generation, root, npages, nentries;
    uint64_t checkpoint_lsn, wal_segment_size, wal_segno;
    /* the log from the checkpoint LSN on */
    uint64_t nsegments;
    uint64_t put_records, del_records, commit_records, switch_records;
    uint64_t end_lsn;
    int torn_tail;
    char end_why[512];          /* where the log ends and why it was judged so, in words */
    /* verify */
    int verified;
    uint64_t pages_checked;
    enum cl_inspect_corrupt corrupt; /* what is corrupt, when cl_inspect returns CL_ECORRUPT */
    uint64_t bad_page, bad_lsn;
};

enum cl_record_type { CL_RECORD_PUT = 1, CL_RECORD_DEL, CL_RECORD_COMMIT, CL_RECORD_SWITCH };

/* One log record, as docs/wal-format.md lays it out. */
struct cl_inspect_record {
    uint64_t lsn, next_lsn;     /* its position, and the next record's */
    enum cl_record_type type;
    uint64_t txn_id;
    uint64_t sync_lsn;          /* the log was durable up to here when it was made */
    uint32_t payload_len;
    uint32_t key_len, value_len; /* put: both; del: key_len */
    uint32_t nops;              /* commit: the transaction's operations */
    int malformed;              /* the checksum holds but the payload does not decode */
};

/* What cl_inspect calls back with; any member may be NULL. */
struct cl_inspect_visitor {
    void (*segment)(void *arg, const struct cl_inspect_segment *seg); /* each segment file, in order */
    void (*record)(void *arg, const struct cl_inspect_record *rec);   /* each record from the checkpoint on */
    void *arg;
};

/* Reads dir without writing anything.  With verify, checks every reachable
 * page and every log record from the checkpoint on; returns CL_ECORRUPT
 * naming the first bad page (out->bad_page) or LSN (out->bad_lsn).  visit
 * (may be NULL) is called for each segment file and each log record. */
CL_API int cl_inspect(const char *dir, int verify, struct cl_inspect *out, const struct cl_inspect_visitor *visit);

CL_API const char *cl_strerror(int err);

/* What the last failed cl_open or cl_inspect of this thread refused, in
 * one sentence naming it -- the option and its accepted range, the file,
 * or the directory in use and the process holding it -- or "" when it
 * has nothing to add to cl_strerror.  Valid until this thread's next
 * cl_open or cl_inspect. */
CL_API const char *cl_error_detail(void);

/* Names of the enums, for CLIs and logs ("commit", "fdatasync", ...);
 * the parse functions return CL_EINVAL for an unknown name. */
CL_API const char *cl_sync_policy_name(enum cl_sync_policy p);
CL_API const char *cl_sync_method_name(enum cl_sync_method m);
/* 1 when the policy's cl_commit returns only once the commit is durable
 * (the durability contract applies), 0 when not, -1 for no such policy. */
CL_API int cl_sync_policy_is_durable(enum cl_sync_policy p);
CL_API int cl_sync_policy_parse(const char *s, enum cl_sync_policy *out);
CL_API int cl_sync_method_parse(const char *s, enum cl_sync_method *out);

/* The sized forms under the usual names (see "structures that grow"). */
#if !defined(CL_NO_SIZED_CALLS) && !defined(CL_BUILDING_LIBRARY)
#define cl_options_init(o) cl_options_init_sized((o), sizeof(struct cl_options))
#define cl_open(dir, opts, out, info) \
    cl_open_sized((dir), (opts), sizeof(struct cl_options), (out), (info), sizeof(struct cl_recovery_info))
#define cl_stats(db, out) cl_stats_sized((db), (out), sizeof(struct cl_stats))
#endif

#ifdef __cplusplus
}
#endif
#endif /* COMMITLAB_H */
