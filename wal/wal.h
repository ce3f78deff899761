/*
 * wal.h -- the write-ahead log: log buffer and writer, segments, sync
 * policies, and the reader.  The log's bytes are in wal_format.h.
 *
 * Layering: wal uses only storage's file I/O layer (storage/vfs/vfs.h) and
 * crc32c; the engine calls it.
 *
 * Writer protocol (docs/design.md, "commit protocol"):
 *   1. wal_append_txn() copies a transaction's records and its COMMIT record
 *      into the log buffer and returns the LSN just past the COMMIT record
 *      (the commit LSN).  Appends are serialised by the caller's writer lock
 *      (and by an internal mutex); the log buffer may be written out at any
 *      time, but nothing is acknowledged by an append.
 *   2. wal_commit() hands the commit LSN to the sync policy, which returns
 *      when the transaction is as durable as the policy promises.
 *   3. A failed write or sync marks the log broken (sticky): that call and
 *      every later wal_append_txn/wal_commit/wal_flush return CL_EBROKEN or
 *      the original error; nothing is retried.
 *
 * Segments: the writer starts in a fresh segment (wal_open's start_segno).
 * Every segment is ready -- its header names it, its bytes and its
 * directory entry are durable -- before any record in it is written, so its
 * name is durable before anything in it is acknowledged.  When a record
 * does not fit, a SWITCH record is written and the log continues in the
 * next segment; the previous segment is synced first.
 *
 * Where the next segment comes from (segpool.c): a segment the writer
 * needs is either already ready (recycled by a checkpoint, or prepared by
 * the prealloc thread) or prepared by the writer on the spot, while the
 * commits behind it wait (counted as segment waits).
 *   fresh    a new file: created, initialised as segment_init says,
 *            header written, fsynced, directory synced.
 *   recycle  wal_retire_below renames a retired segment to the next future
 *            segment's name: header rewritten in place and fdatasynced,
 *            renamed, directory synced; never truncated or extended.  At
 *            most recycle_max future segments are kept; the rest are
 *            deleted.  Its old records stay in the file and are rejected
 *            by their LSN (docs/wal-format.md, section 6).
 *   prealloc a background thread keeps prealloc segments ready ahead of
 *            the writer (fresh ones; with recycle it tops up what the
 *            checkpoints recycled).  If it fails it stops and says why in
 *            the statistics; the writer then prepares segments itself.
 */
#ifndef CL_WAL_H
#define CL_WAL_H

#include <stddef.h>
#include <stdint.h>

#include "../include/commitlab.h" /* CL_E* codes and the policy enums only */
#include "../storage/vfs/vfs.h"
#include "wal_format.h"

struct wal;

/* ---- sync policies --------------------------------------------------------
 * Each policy is a small table of functions.  Its comment says what is
 * durable when wal_commit() returns 0, and what happens when a sync fails.
 */
struct wal_policy {
    const char *name;
    int durable;                               /* 1: commit returns only once durable */
    int (*start)(struct wal *w);               /* after the log is open; may start threads; may be NULL */
    /* Returns when commit_lsn is durable as the policy promises (see each
     * policy's comment), or an error: then the transaction is not
     * acknowledged and the log is broken. */
    int (*commit)(struct wal *w, uint64_t commit_lsn);
    void (*stop)(struct wal *w);               /* before close; joins threads; may be NULL */
    /* An asynchronous commit (wal_commit_async): sees to it that
     * commit_lsn becomes durable as the policy makes commits durable,
     * waiting for that only where nobody else would do the I/O (each
     * policy's comment says); NULL: commit, whose error the callback
     * reports. */
    void (*commit_async)(struct wal *w, uint64_t commit_lsn);
    /* Called after every durable advance and when the log breaks (with
     * io_mu held or not; never mu); may be NULL. */
    void (*advanced)(struct wal *w);
    int ack_written;                           /* 1: an asynchronous commit is due once written (none) */
};

/* none:   wal_commit writes the buffered bytes up to commit_lsn with
 *         write(2) and returns.  Durable on return: nothing (the record is in
 *         the OS page cache; it survives a process crash, not a power
 *         failure).  A failed write breaks the log.
 * commit: one sync per commit.  Committers take turns in log order; each
 *         writes the bytes up to its own commit_lsn (not beyond) and syncs
 *         them with the sync method.  Durable on return: this transaction
 *         and every one before it in log order, by a sync this committer
 *         issued (unless a predecessor it waited 10 ms for never came).  A
 *         failed write or sync breaks the log; the committer gets the error
 *         and is not acknowledged; the sync is never retried. */

/* group:  leader/follower group commit.  A committer whose LSN is not yet
 *         durable either finds a flush in progress and sleeps on its own
 *         condition variable, or becomes the leader: it (after commit_delay
 *         us, only if at least commit_siblings other write transactions are
 *         active -- PostgreSQL's rule) writes everything in the log buffer,
 *         syncs once, and wakes exactly the waiters it covered, plus the
 *         first uncovered one to lead the next batch.  A batch is bounded by
 *         the log buffer (buffer_size, default 1 MiB) and by max_batch bytes
 *         of whole transactions (at least one) when set.  Durable on return:
 *         as commit.  A failed write or sync breaks the log and wakes every
 *         waiter with the error: no member of the batch is acknowledged.
 * periodic: wal_commit writes the bytes (as none) and returns; a background
 *         thread syncs every interval_ms.  Durable on return: nothing; a
 *         commit is durable once wal_durable_lsn() passes its LSN, at most
 *         interval_ms plus one sync's duration after it returned (the loss
 *         window).  A failed background sync breaks the log: every later
 *         commit fails.
 * uring:  io_uring: each batch is a write linked (IOSQE_IO_LINK) to an
 *         fsync/fdatasync (with uring_sync=rwf-dsync, or a method whose
 *         writes are durable, the write alone, carrying RWF_DSYNC or on an
 *         O_DSYNC descriptor), up to uring_depth chains in flight (while some
 *         are, a new one goes once as full as the last); the durable
 *         LSN advances only over a contiguous prefix of completed chains, so
 *         commits are acknowledged strictly in log order.  A short write or
 *         a cancelled link acknowledges nothing; the remainder is resubmitted
 *         with a fresh sync after it.  Durable on return: as commit.  An I/O
 *         error breaks the log and fails every waiter.  Where io_uring is
 *         unavailable (ENOSYS, EPERM, or a file layer without rings),
 *         wal_open fails with CL_ENOTSUP: there is no silent fallback.
 * flusher: a dedicated thread writes everything buffered and syncs, back to
 *         back while commits wait; a committer only asks and waits for the
 *         durable LSN (spinning flusher_spin_us, then sleeping).  Durable on
 *         return: as commit.  A failed write or sync breaks the log and
 *         fails every waiter; the thread stops. */

/* Asynchronous commits, by policy -- who makes an asynchronous commit
 * durable and who calls its callback (wal_async_*, below):
 *   none      the committer writes it (commit_async = commit) and calls the
 *             callbacks due, its own included, before it returns;
 *   periodic  the committer writes it; the background thread calls the
 *             callbacks after the sync that covers it;
 *   commit    the committer writes and syncs it in its turn, as a commit
 *             does (the policy's point: one sync per commit, issued by its
 *             committer), then calls the callbacks due;
 *   group     a committer that finds a leader returns at once: the leader,
 *             before it steps down, leads again while an asynchronous
 *             commit is not durable and no waiter is there to lead next
 *             (so a lone asynchronous commit is never left behind); one
 *             that finds no leader leads and returns; a leader that has
 *             led a few batches for others has the next asynchronous
 *             committer wait to take over from it; the leader calls the
 *             callbacks after each batch;
 *   uring     as group, the leader taking the asynchronous commits into its
 *             chains (an arriving one wakes it in the ring); it calls the
 *             callbacks when it would wait for a completion and after its
 *             tenure;
 *   flusher   the committer raises the requested LSN and returns; the
 *             flusher thread calls the callbacks after each sync.
 * A callback gets 0 only once its LSN is durable (written, under none);
 * when the log breaks first, every pending callback gets the sticky error. */

/* wal_policy_<name> for every policy of CL_SYNC_POLICIES (commitlab.h),
 * each defined in wal/policy_<name>.c. */
#define WAL_DECLARE_POLICY_(e, n) extern const struct wal_policy wal_policy_##n;
CL_SYNC_POLICIES(WAL_DECLARE_POLICY_)
#undef WAL_DECLARE_POLICY_

/* The table for a policy (policy.c's registry), or NULL for no such
 * policy. */
const struct wal_policy *wal_policy_for(enum cl_sync_policy p);

/* ---- the writer ----------------------------------------------------------- */

/* Where the log lives, and the database's options as they are.  opt is
 * struct cl_options as cl_open checked it (cl_options_check): wal_open
 * keeps a copy and the policies read their options there (w->opt), with
 * no defaults or ranges of their own -- the table of options
 * (engine/options.c) is the one place of both. */
struct wal_config {
    struct vfs *vfs;
    const char *dir;                 /* database directory */
    uint64_t db_id;
    uint64_t segment_size;           /* the database's, fixed when it was created (opt.segment_size is
                                      * only what a new database is created with): >= WAL_MIN_SEGMENT,
                                      * a multiple of WAL_SEG_HEADER */
    size_t buffer_size;              /* log buffer bytes; 0 = WAL_DEFAULT_BUFFER (1 MiB); the engine
                                      * leaves it 0, the tests set a small one to wrap the ring */
    char *why;                       /* when wal_open returns CL_ENOTSUP, it says here what was refused
                                      * and why (why_len bytes; NULL: not said) */
    size_t why_len;
    struct cl_options opt; /* checked: every field in its range */
};

/* One operation of a transaction, as the engine hands it to the log. */
struct wal_op {
    int del;                         /* 1: delete key; 0: put key=value */
    const void *key;
    uint32_t klen;
    const void *val;
    uint32_t vlen;
};

/* Opens the log for writing at the start of segment start_segno, which must
 * not exist yet or is overwritten (created fresh and made durable, with its
 * directory, before wal_open returns). */
int wal_open(const struct wal_config *cfg, uint64_t start_segno, struct wal **out);

/* Appends ops and a COMMIT record for txn_id; *commit_lsn is the LSN just
 * past the COMMIT record.  Errors: CL_EBROKEN, CL_ETOOBIG, -errno. */
int wal_append_txn(struct wal *w, uint64_t txn_id, const struct wal_op *ops, size_t n,
                   uint64_t *commit_lsn);

/* The engine reports write transactions beginning (+1) and ending (-1), so
 * that the group policy can apply commit_siblings. */
void wal_txn_active(struct wal *w, int delta);

/* The policy's commit (see the policy comments). */
int wal_commit(struct wal *w, uint64_t commit_lsn);
/* As wal_commit; on success splits its time into queue, write, sync and
 * wakeup (cl_commit_times) from the record of the durable advance that
 * covered commit_lsn. */
struct wal_commit_times {
    uint64_t queue_ns, write_ns, sync_ns, wakeup_ns;
};
int wal_commit_timed(struct wal *w, uint64_t commit_lsn, struct wal_commit_times *out);

/* Writes everything buffered up to lsn (UINT64_MAX = all) and, when sync,
 * makes it durable.  Used by checkpoints and close.  Calls the
 * asynchronous commits' callbacks that became due. */
int wal_flush(struct wal *w, uint64_t lsn, int sync);

/* ---- asynchronous commits --------------------------------------------------
 * The log calls fn(arg, rc) once for each registered commit LSN: rc 0 once
 * the LSN is durable as the policy promises (written, under none); the
 * sticky error if the log broke first (no member of a failed batch gets
 * 0); CL_EBROKEN if the log is closed first.  Callbacks run one at a time,
 * in the order they were added -- LSN order: the caller adds them in log
 * order, under its writer lock -- on whichever thread calls
 * wal_async_deliver once they are due (see the policies above), never with
 * mu held and with io_mu held only on the uring leader.  A callback must
 * not call into the same log except to read its LSNs and statistics. */
typedef void (*wal_durable_fn)(void *arg, int rc);
struct wal_async_entry;

/* A callback's entry, allocated before the commit so that adding it
 * cannot fail; NULL when out of memory.  An entry never added is freed
 * with wal_async_entry_free. */
struct wal_async_entry *wal_async_entry_new(wal_durable_fn fn, void *arg);
void wal_async_entry_free(struct wal_async_entry *e);
/* Registers e for commit_lsn, which is at or above every LSN added
 * before; 0 for a commit with no log position (nothing written): it is
 * due with the entry before it.  Returns e's place in the order of
 * callbacks (1, 2, ...), for wal_async_deliver_through. */
uint64_t wal_async_add(struct wal *w, struct wal_async_entry *e, uint64_t commit_lsn);
/* Before wal_async_add: times e's commit.  When its callback is called
 * with 0, *out (which must stay valid until then) holds the time from
 * wal_async_add to the call, split as wal_commit_timed splits a wait: by
 * the durable advance that covered commit_lsn (the I/O of the periodic
 * thread's sync included), all of it write under a policy that answers
 * at the write (none).  Untimed entries cost nothing of this. */
void wal_async_time(struct wal_async_entry *e, struct wal_commit_times *out);
/* The policy's commit_async (see above): starts making commit_lsn durable;
 * a failure breaks the log, and the callback reports it. */
void wal_commit_async(struct wal *w, uint64_t commit_lsn);
/* The policy's commit for lsn, not counted as an acknowledgement: 0 once
 * durable as the policy promises, or the error that broke the log.  The
 * timed form splits its wait into *out as wal_commit_timed does (out may
 * be NULL). */
int wal_make_durable(struct wal *w, uint64_t lsn);
int wal_make_durable_timed(struct wal *w, uint64_t lsn, struct wal_commit_times *out);
/* Calls the callbacks that are due, unless another thread is calling them
 * (it calls these too).  Cheap when none is due. */
void wal_async_deliver(struct wal *w);
/* As wal_async_deliver, for an entry added already due (durable, or the
 * log broken): returns once the callbacks up to the seq-th added have
 * returned, on this thread or on the one calling callbacks now -- so a
 * commit that waited for durability returns after its callback, as its
 * contract says.  From inside a callback, of this log or another: as
 * wal_async_deliver (it would wait for itself, or for a deliverer that
 * waits for it). */
void wal_async_deliver_through(struct wal *w, uint64_t seq);
/* Returns once every callback added before the call has returned, the log
 * having been made durable for them (and, for a policy that acknowledges
 * before durability, everything appended before the call made durable
 * too), or once one of them got an error: that error.  CL_EBUSY from
 * inside a callback of this log. */
int wal_sync_wait(struct wal *w);
/* 1 when the calling thread is inside a callback of w. */
int wal_in_callback(const struct wal *w);

uint64_t wal_end_lsn(struct wal *w);      /* LSN of the next record to be appended */
uint64_t wal_durable_lsn(struct wal *w);  /* everything below is known durable */
int wal_broken(struct wal *w);            /* 0 or the sticky error */
uint64_t wal_segment_switches(struct wal *w); /* wal_stats.segment_switches, cheaply */

/* Retires the segment files whose numbers are below segno: recycles them
 * into future segments (recycle policy, while the pool has room) or
 * deletes them, and syncs the directory.  The caller guarantees nothing
 * below is needed. */
int wal_retire_below(struct wal *w, uint64_t segno);

struct wal_stats {
    uint64_t appends;          /* transactions appended */
    uint64_t commits;          /* transactions acknowledged by the policy */
    uint64_t syncs;            /* syncs made by the log (any method) */
    uint64_t writes, bytes;    /* write calls and bytes written to segments */
    uint64_t max_commits_per_sync;
    uint64_t batch_hist[CL_BATCH_HIST]; /* durable advances by commits they covered */
    uint64_t sync_ns;          /* time spent in sync calls */
    uint64_t wait_ns;          /* time committers spent in wal_commit */
    uint64_t segments_created;  /* fresh segment files made (wal_open's first included) */
    uint64_t segments_recycled; /* retired segments renamed for reuse */
    uint64_t segments_reused;   /* recycled segments the writer went on to write */
    uint64_t segments_removed;  /* retired segments deleted */
    uint64_t segment_switches;  /* the writer left a segment for the next */
    uint64_t segment_waits;     /* the writer's next segment was not ready */
    uint64_t segment_wait_ns;   /* time the writer spent waiting for (or preparing) one */
    int prealloc_error;         /* 0, or what stopped the prealloc thread */
    uint64_t async_commits;     /* asynchronous commits acknowledged (their callback got 0; in commits too) */
    uint64_t waiter_sleeps;     /* flusher: committers that slept waiting for durability */
    uint64_t waiter_wakeups;    /* flusher: sleepers woken (each once, when its LSN was covered) */
    uint64_t waiter_spurious;   /* flusher: sleepers woken whose LSN was not durable (0 by design) */
    uint64_t partial_wakeups;   /* flusher: advances that woke some sleepers and left later ones asleep */
    uint64_t leader_handoffs;   /* group, uring: a leader that had led for others' asynchronous commits
                                 * handed the lead to one of their committers (L5 in waitq.c) */
    uint64_t slots;             /* log_insert slots: slots positioned (each took the log position once) */
    uint64_t slot_joins;        /* log_insert slots: appends that joined a slot another appender led */
};
void wal_get_stats(struct wal *w, struct wal_stats *out);
void wal_reset_max(struct wal *w); /* max_commits_per_sync starts afresh */

/* Writes nothing more; frees.  Call wal_flush first for a clean close. */
void wal_close(struct wal *w);

/* ---- segments ------------------------------------------------------------- */

#define WAL_POOL_MAX 64u /* bound of recycle_max and prealloc */

struct wal_segment_header {
    uint32_t version;
    uint64_t db_id, segno, segment_size;
};

void wal_segment_name(char *buf, size_t cap, uint64_t segno); /* "wal-%016llx.log" */
int wal_segment_parse_name(const char *name, uint64_t *segno); /* 1 if it is a segment name */

/* Lists the segment numbers present in dir, ascending; *segnos is malloc'd. */
int wal_list_segments(struct vfs *v, const char *dir, uint64_t **segnos, size_t *n);

/* Reads and checks a segment's header: 0, CL_EFORMAT or CL_ECORRUPT. */
int wal_read_segment_header(struct vfs *v, const char *dir, uint64_t segno,
                            struct wal_segment_header *out);

/* ---- the reader ----------------------------------------------------------- */

struct wal_record {
    enum wal_rec_type type;
    uint64_t lsn;              /* position of the record */
    uint64_t next_lsn;         /* position just past it (aligned) */
    uint64_t txn_id;
    uint64_t sync_lsn;
    const uint8_t *payload;    /* valid until the next wal_reader_next */
    uint32_t len;
};

struct wal_reader;

/* Reads the log of database db_id in dir from start_lsn.  A missing first
 * segment is an empty log -- unless a later segment exists: then the log
 * has a hole, and the first wal_reader_next returns CL_ECORRUPT
 * (wal_reader_missing).  A segment whose header names another database,
 * segment number or size makes wal_reader_next return CL_EFORMAT, with
 * wal_reader_bad_lsn at that segment's start. */
int wal_reader_open(struct vfs *v, const char *dir, uint64_t segment_size, uint64_t db_id, uint64_t start_lsn,
                    struct wal_reader **out);

/* 1: *rec filled (SWITCH records are followed internally and not returned);
 * 0: end of the valid log; CL_ECORRUPT: a damaged record that had been made
 * durable (wal_reader_bad_lsn names it); -errno: an I/O error. */
int wal_reader_next(struct wal_reader *r, struct wal_record *rec);

uint64_t wal_reader_end_lsn(struct wal_reader *r); /* after 0: first LSN past the valid log */
int wal_reader_torn(struct wal_reader *r);         /* after 0: the log ended in a damaged record */
uint64_t wal_reader_bad_lsn(struct wal_reader *r); /* after CL_ECORRUPT */
/* After CL_ECORRUPT: 1 when the segment holding bad_lsn is missing: a
 * later one exists, a SWITCH record points into it, or the checkpoint's
 * log begins there (the log was read into a file that is not there). */
int wal_reader_missing(struct wal_reader *r);
void wal_reader_close(struct wal_reader *r);

/* For inspection: return SWITCH records from wal_reader_next too (they
 * are followed either way). */
void wal_reader_with_switch(struct wal_reader *r, int on);
/* With on, the segment reading starts in must exist (a checkpoint's, which
 * was durable before the checkpoint was recorded): missing, it is
 * CL_ECORRUPT with wal_reader_missing, not an empty log.  A segment a
 * SWITCH record points into must exist either way, and every segment read
 * must be whole (segment_size bytes). */
void wal_reader_require_start(struct wal_reader *r, int on);

/* One sentence: where the log ends and why the reader judged it so (which
 * check the bytes failed, and for corruption the record proving they had
 * been durable). */
void wal_reader_explain(struct wal_reader *r, char *buf, size_t len);

/* Payload decoding; return CL_ECORRUPT when the payload is malformed. */
int wal_decode_put(const struct wal_record *rec, const void **key, uint32_t *klen,
                   const void **val, uint32_t *vlen);
int wal_decode_del(const struct wal_record *rec, const void **key, uint32_t *klen);
int wal_decode_commit(const struct wal_record *rec, uint32_t *nops);

#endif /* CL_WAL_H */
