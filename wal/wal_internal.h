/*
 * wal_internal.h -- the writer's state, shared by the wal/ sources.
 * Nothing here is part of the contract (wal.h is).
 *
 * Locks, in the order they are taken:
 *   append_mu  serialises appenders for a whole transaction, so one
 *              transaction's records are contiguous in the log (under
 *              log_insert slots: serialises the slots' leaders as each
 *              takes its slot's place in the log, log_slot.c);
 *   io_mu      serialises every write and sync of segment files (the
 *              "writer"): whoever holds it may read the buffer between
 *              written_lsn and the end it snapshotted, without mu;
 *   mu         guards the buffer's bookkeeping (end_lsn, written_lsn,
 *              the switch queue) and is held only for short stretches;
 *   async.mu   the asynchronous commits' callbacks (async.c), taken after
 *              io_mu when the uring leader delivers them, never with mu.
 * Committers waiting for durability wait in their policy's queue, each on
 * its own wake word (waitq.c: block, spin or adaptive, as the wait option
 * says); the policy's `advanced` hook hears
 * of every durable advance.
 *
 * LSNs, always written_lsn <= end_lsn and durable_lsn <= written_lsn:
 *   durable_lsn  everything below is durable (synced, or written with
 *                O_DSYNC or RWF_DSYNC); advanced only by the io_mu holder;
 *   written_lsn  everything below has been handed to pwrite;
 *   end_lsn      the next record goes here.
 * The buffer is a ring indexed by lsn % buf_cap holding [written_lsn,
 * end_lsn).  The LSN range between a SWITCH record's end and the next
 * segment's first record is a gap: it occupies ring positions but is never
 * copied or written; the switch queue tells the writer where each gap
 * starts.
 *
 * The policies beyond none/commit (group, periodic, uring, flusher) use:
 * wal_write_locked() and wal_sync_locked() under io_mu,
 * durable_lsn/written_lsn, their `advanced` hook (called by wal_sync_locked,
 * the O_DSYNC write path and wal_set_broken) to wake their waiters,
 * policy_state for their own data, wal_set_broken(), and
 * wal_async_deliver() after they made the log durable further.
 */
#ifndef CL_WAL_INTERNAL_H
#define CL_WAL_INTERNAL_H

#include <pthread.h>

#include "clock.h"
#include "wal.h"

#define WAL_DEFAULT_BUFFER (1u << 20)
#define WAL_SWITCH_QUEUE   64u        /* gaps the buffer may hold at once */
#define WAL_ZERO_CHUNK     (1u << 20) /* segment zero-fill write size */
#define WAL_STAGE_SIZE     (1u << 20) /* O_DIRECT staging buffer */
#define WAL_COMMIT_RING    4096u      /* commit LSNs remembered for bounded writes */
#define WAL_BATCH_RING     256u       /* durable advances remembered for the commit-time split */

/* One durable advance: the log became durable below lsn at at_ns, after
 * write_ns of writes and sync_ns of syncs since the previous one. */
struct wal_batch {
    uint64_t lsn, at_ns, write_ns, sync_ns;
};

/* The segments ready ahead of the writer (segpool.c).  Segment numbers
 * below `taken` belong to the writer; those in [taken, next) are reserved:
 * being prepared or ready; the first one not yet reserved is `next`.
 * Lock order: io_mu, then pool.mu (the writer takes a segment with io_mu
 * held; the checkpoint and prealloc threads take only pool.mu). */
#define WAL_POOL_SLOTS 128u /* > WAL_POOL_MAX + 1 */
enum wal_slot { WAL_SLOT_PREPARING = 1, WAL_SLOT_READY, WAL_SLOT_RECYCLED, WAL_SLOT_FAILED };
struct wal_segpool {
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* a slot changed state, a segment was taken, or stop */
    uint64_t taken, next;
    uint8_t slot[WAL_POOL_SLOTS]; /* enum wal_slot of segno % WAL_POOL_SLOTS, for [taken, next) */
    uint32_t recycle_max;        /* 0 unless the recycle policy */
    uint32_t prealloc;
    /* With prealloc and recycle: retired segments kept under their old
     * names (below the checkpoint, never read) for the prealloc thread to
     * recycle before it creates a fresh file. */
    uint64_t spare[WAL_POOL_MAX];
    uint32_t nspare;
    pthread_t thread;
    int thread_started, stop;
};

/* The callbacks of asynchronous commits, in LSN order (async.c). */
struct wal_async_entry {
    uint64_t lsn;
    int logged;                  /* a transaction of the log (counted when acknowledged) */
    wal_durable_fn fn;
    void *arg;
    struct wal_commit_times *times; /* wal_async_time: filled before a call with 0; NULL: untimed */
    uint64_t t0;                 /* timed: when it was added */
    struct wal_async_entry *next;
};
struct wal_async {
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* a callback returned or the deliverer stopped, while someone waits */
    struct wal_async_entry *head, *tail; /* mu */
    uint64_t head_lsn;           /* atomic, written under mu: head's LSN, UINT64_MAX when empty */
    uint64_t tail_lsn;           /* mu: the LSN of the last entry added */
    uint64_t added, done;        /* mu: entries added; callbacks returned */
    uint64_t fail_seq;           /* mu: the number of the first callback that got an error (0: none) */
    int fail_rc;                 /* mu: that error */
    int delivering;              /* mu: a thread is calling callbacks */
    uintptr_t deliverer;         /* atomic: that thread's tag while it is inside a callback, else 0 */
    int waiters;                 /* atomic, changed under mu: threads waiting on cv */
};
void wal_async_init(struct wal *w);
/* Calls every callback left (waiting for a deliverer at work first): those
 * not durable get the sticky error or CL_EBROKEN.  wal_close calls it. */
void wal_async_finish(struct wal *w);
void wal_async_destroy(struct wal *w);

/* log_insert slots (log_slot.c): a slot gathers the transactions appended
 * while its leader waits for append_mu.  state packs, for one atomic add
 * per joiner: WAL_SLOT_CLOSED, the members joined (from bit
 * WAL_SLOT_JOIN_SHIFT) and the bytes they reserved (below it). */
#define WAL_SLOTS 16u             /* slots open, being positioned or being copied at once */
#define WAL_SLOT_MEMBERS 64u      /* transactions one slot holds at most */
#define WAL_SLOT_MAX (256u << 10) /* bytes one slot holds at most (WiredTiger's slot buffer) */
#define WAL_SLOT_CLOSED (1ull << 63)
#define WAL_SLOT_JOIN_SHIFT 40
struct wal_log_slot {
    uint64_t state;        /* atomic: closed | joined << WAL_SLOT_JOIN_SHIFT | bytes */
    uint64_t seq;          /* its number, written while it is free, before it opens */
    uint64_t start;        /* the leader's: the LSN of its first byte (once positioned) */
    uint32_t nmembers;     /* the leader's: the members that joined in time (once positioned) */
    int err;               /* the leader's: nonzero when no place was taken (once positioned) */
    int positioned;        /* atomic: start, nmembers and err are set */
    uint32_t copied;       /* atomic: members done copying */
    int done;              /* mu: every member has copied */
    int over;              /* atomic: over_members and over_bytes are set */
    uint32_t over_members; /* the first joiner that did not fit: the members and bytes before it */
    uint64_t over_bytes;
    uint64_t member_end[WAL_SLOT_MEMBERS]; /* member i's: its commit end, as an offset in the slot */
};
struct wal_slots {
    struct wal_log_slot slot[WAL_SLOTS]; /* slot k is slot[k % WAL_SLOTS] */
    uint64_t cur;                        /* atomic: the number of the open slot */
    uint64_t head;                       /* atomic, written under mu: the oldest slot not yet retired */
    uint64_t positioned;                 /* mu: the slots below it have their place in the log */
    uint64_t cap;                        /* bytes a slot holds at most: WAL_SLOT_MAX, or less for a small
                                          * segment or buffer */
};
int wal_slots_init(struct wal *w);
/* The log_slot.c append; CL_ETOOBIG when the transaction is larger than
 * a slot holds (nothing done: the caller appends it alone). */
int wal_slot_append(struct wal *w, uint64_t txn_id, const struct wal_op *ops, size_t n, uint64_t *commit_lsn);
/* append_mu held, mu not: waits until every slot positioned has been
 * copied and retired, so that what is appended next is counted after them. */
void wal_slots_drain(struct wal *w);

struct wal_segfile {
    uint64_t segno;
    struct vfs_file *f;          /* NULL when not open */
};

struct wal {
    /* configuration (immutable after wal_open) */
    struct vfs *vfs;
    char *dir;
    uint64_t db_id, seg_size;
    struct cl_options opt;      /* the database's, as cl_open checked them (wal_config.opt): each
                                 * policy reads its own options here */
    enum cl_sync_method method; /* opt.method, or rwf-dsync for uring_sync rwf-dsync */
    const struct wal_policy *policy;
    unsigned open_flags;         /* VFS_O_DSYNC / VFS_O_DIRECT / VFS_O_WRITE_DSYNC for record writes */
    int write_is_sync;           /* DSYNC, DIRECT or RWF_DSYNC: every pwrite is durable */
    char *why;                   /* during wal_open only: where to say why it returned CL_ENOTSUP */
    size_t why_len;

    pthread_mutex_t append_mu, io_mu, mu;
    struct wal_slots *slots; /* log_insert slots; NULL under mutex */

    /* the ring (mu; bytes in [written_lsn, end_lsn) are read by the io_mu holder) */
    uint8_t *buf;
    uint64_t buf_cap;
    uint64_t end_lsn;            /* mu */
    uint64_t last_commit_lsn;    /* mu: end of the last complete transaction */
    uint64_t txns_appended;      /* mu: complete transactions appended */
    uint64_t commit_ring[WAL_COMMIT_RING]; /* mu: the commit LSNs of the last WAL_COMMIT_RING
                                            * transactions (wal_commit_lsn_of) */
    uint64_t swq[WAL_SWITCH_QUEUE]; /* mu: ends of SWITCH records not yet written */
    unsigned swq_head, swq_len;

    /* io_mu holder's state (read by others only through the atomics) */
    uint64_t written_lsn;        /* written under mu and io_mu; read under either */
    uint64_t durable_lsn;        /* atomic */
    uint64_t written_txns;       /* io_mu: complete transactions written */
    uint64_t durable_txns;       /* io_mu: complete transactions durable */
    uint64_t created_segno;      /* io_mu: highest segment created */
    struct wal_segfile cur;      /* io_mu: the segment being written */
    uint8_t *stage;              /* io_mu: O_DIRECT staging buffer (aligned) */
    uint8_t *tail_block;         /* io_mu: O_DIRECT copy of the partial last block */
    uint64_t tail_block_lsn;     /* io_mu: LSN of tail_block's first byte */

    int broken;                  /* atomic: 0 or the sticky error */
    uint64_t io_write_ns, io_sync_ns; /* io_mu: write and sync time since the last durable advance */
    struct wal_batch batches[WAL_BATCH_RING]; /* mu: the last durable advances, oldest overwritten */
    uint64_t nbatches;           /* mu: durable advances recorded */

    struct wal_segpool pool;
    struct wal_async async;      /* asynchronous commits' callbacks (async.c) */

    /* statistics (atomic) */
    struct wal_stats st;

    void *policy_state;          /* owned by the policy */
    int64_t active_txns;         /* atomic: open write transactions (wal_txn_active) */
};

/* atomics */
static inline uint64_t wal_load64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void wal_store64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void wal_add64(uint64_t *p, uint64_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

/* During wal_open (and a policy's start): says why it is about to return
 * CL_ENOTSUP, printf-style, if the caller asked (the first reason stays). */
void wal_say_why(struct wal *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Marks the log broken with err (the first error sticks); returns err. */
int wal_set_broken(struct wal *w, int err);

/* mu held: the end of the bytes the writer may take: end_lsn, or under
 * log_insert slots the start of the oldest slot whose members are still
 * copying.  The transactions counted in txns_appended all end below it. */
static inline uint64_t wal_ready_lsn_locked(const struct wal *w)
{
    const struct wal_slots *sl = w->slots;
    uint64_t head = sl ? __atomic_load_n(&sl->head, __ATOMIC_RELAXED) : 0;
    return sl && head < sl->positioned ? sl->slot[head % WAL_SLOTS].start : w->end_lsn;
}

/* One piece of a record's payload. */
struct wal_part {
    const void *p;
    size_t n;
};
/* Encodes one record at lsn into the ring.  The caller owns the ring's
 * range [lsn, lsn + its aligned size): under mu (mutex), or as a slot's
 * member copying into its reserved range (slots). */
void wal_put_record(struct wal *w, uint64_t lsn, enum wal_rec_type type, uint64_t txn_id, const struct wal_part *parts,
                    int nparts, uint32_t plen);
/* append_mu and mu held: the LSN where asz bytes of records go next, after
 * a SWITCH record when they would not leave room for one in the current
 * segment, with room made in the ring for them (may drop mu).  end_lsn is
 * left for the caller to advance. */
int wal_reserve_locked(struct wal *w, uint64_t asz, uint64_t *at);

/* io_mu held: writes every byte buffered when called (at least up to lsn),
 * creating segments durably before any byte that needs them and syncing a
 * segment before leaving it.  Never syncs the current segment. */
int wal_write_locked(struct wal *w, uint64_t lsn);
/* mu held: the commit LSN of transaction k (1 = the log's first), which the
 * ring remembers while txns_appended - k < WAL_COMMIT_RING. */
static inline uint64_t wal_commit_lsn_of(const struct wal *w, uint64_t k)
{
    return w->commit_ring[(k - 1) % WAL_COMMIT_RING];
}
/* mu held: sets *txns to how many transactions commit at or below lsn
 * (commit LSNs rise with the transactions); 0 when the ring no longer
 * remembers enough to tell. */
int wal_txns_upto_locked(const struct wal *w, uint64_t lsn, uint64_t *txns);
/* io_mu held: as wal_write_locked, but stops at the end of the last complete
 * transaction at or below max(lsn, limit), lsn being a commit LSN or 0, and
 * writes at least one whole transaction: exactly one's own (limit = lsn),
 * or a batch bounded in bytes (lsn = 0, limit = written + max_batch).
 * Writes everything buffered when that boundary is too far back to be
 * remembered. */
int wal_write_upto_locked(struct wal *w, uint64_t lsn, uint64_t limit);
/* io_mu held: makes everything written durable (a no-op under O_DSYNC or RWF_DSYNC,
 * where wal_write_locked already did), advances durable_lsn and tells the
 * policy (its `advanced` hook). */
int wal_sync_locked(struct wal *w);

/* The writer's pieces, for a policy that issues its own I/O (uring); all
 * with io_mu held.  wal_open_segment_locked makes segno the current segment
 * (cur); wal_create_segments_locked creates, durably, every segment up to
 * the one holding target - 1 (breaking the log on failure);
 * wal_ring_get copies buffered bytes; wal_stage_direct fills dst (aligned)
 * with the whole blocks covering [a, stop) for an O_DIRECT write at the
 * first block's offset -- the first block rebuilt from the saved partial
 * tail, the last zero-padded and saved as the new tail -- and returns the
 * padded length (0: the tail was not where it must be);
 * wal_mark_durable_locked publishes durable_lsn = lsn after the sync that
 * covered it (txns: complete transactions below lsn) and tells the policy. */
int wal_open_segment_locked(struct wal *w, uint64_t segno);
/* mu held (and io_mu): records a durable advance to lsn with the I/O time
 * gathered since the last one, for wal_commit_timed. */
void wal_note_batch_locked(struct wal *w, uint64_t lsn);
/* Neither mu nor async.mu held: splits the wait [t0, t1) of the commit
 * ending at lsn into *out by the first recorded durable advance that
 * covered it (wal_commit_timed's split); at_write: the commit was answered
 * at its write, which is then all of it. */
void wal_split_commit_time(struct wal *w, uint64_t lsn, uint64_t t0, uint64_t t1, int at_write,
                           struct wal_commit_times *out);
/* Its two halves: the first recorded durable advance at or after lsn into
 * *b (1; 0 when none is remembered), under mu; and the split by it (b NULL:
 * none).  A caller answering commits in LSN order finds the advance once
 * and splits every commit it covered by it (wal_async's delivery). */
int wal_find_batch(struct wal *w, uint64_t lsn, struct wal_batch *b);
void wal_split_by_batch(const struct wal_batch *b, uint64_t t0, uint64_t t1, int at_write,
                        struct wal_commit_times *out);
int wal_create_segments_locked(struct wal *w, uint64_t target);
void wal_ring_get(const struct wal *w, uint8_t *dst, uint64_t lsn, size_t len);
size_t wal_stage_direct(struct wal *w, uint8_t *dst, uint64_t a, uint64_t stop);
void wal_mark_durable_locked(struct wal *w, uint64_t lsn, uint64_t txns);

/* waitq.c: committers waiting for durability, each on its own wake word
 * (a futex): under a leader (group, uring) or for the flusher thread.  The
 * caller holds the mutex that guards the queue.  WAL_WAKE_SLEEPING is the
 * waiter's own mark, "asleep on the futex: wake me"; the others are set by
 * whoever wakes it. */
enum wal_wake { WAL_WAKE_NONE = 0, WAL_WAKE_DONE, WAL_WAKE_RECHECK, WAL_WAKE_SLEEPING };
struct wal_waiter {
    uint64_t lsn;
    int queued;
    uint32_t wake; /* atomic: enum wal_wake; the futex word */
    struct wal_waiter *next, *prev;
};
/* Waits, as how says (w->wait_spin_us for adaptive), until whoever wakes
 * me sets me->wake (neither NONE nor SLEEPING) and returns that; me->wake
 * is NONE on entry.  *slept (if not NULL) says whether it slept on the
 * futex. */
enum wal_wake wal_waiter_wait(struct wal *w, struct wal_waiter *me, enum cl_wait how, int *slept);
/* Spins, with a pause instruction, up to us microseconds until done(w, arg)
 * (for ever with us = UINT32_MAX); returns whether it is. */
int wal_spin_until(struct wal *w, uint32_t us, int (*done)(struct wal *, uint64_t), uint64_t arg);
/* Yields the processor at most WAL_WAIT_YIELDS times until done(w, arg). */
#define WAL_WAIT_YIELDS 16u
int wal_yield_until(struct wal *w, int (*done)(struct wal *, uint64_t), uint64_t arg);
struct wal_waitq {
    struct wal_waiter *head, *tail; /* sorted by lsn */
};
void wal_waitq_add(struct wal_waitq *q, struct wal_waiter *me);
void wal_waitq_remove(struct wal_waitq *q, struct wal_waiter *me);
/* Wakes and removes the waiters durable covers (all of them when broken):
 * they return without the leader's mutex; with next_leader, also wakes
 * the first remaining one to look again (and lead).  Returns how many it
 * woke as covered. */
unsigned wal_waitq_wake(struct wal_waitq *q, uint64_t durable, int broken, int next_leader);
/* A committer leaving while no leader is active signals the head: it may
 * itself have been the one signalled to lead. */
void wal_waitq_handoff(struct wal_waitq *q, int leader_active);

/* The leader/follower protocol (invariants in waitq.c).  A committer whose
 * LSN is not durable either becomes the leader and calls lead(w, target)
 * (without l->mu; target is its own LSN or a higher one an asynchronous
 * commit is waiting for; it must make at least one more transaction
 * durable, or fail and break the log; the leader wakes whom it covered,
 * calls the callbacks due and leads again until its own lsn is durable and
 * no asynchronous commit is left without a leader), or joins the queue --
 * joined() is then called once, with l->mu held -- and sleeps until a
 * leader covers it or hands it the lead.  With async, when a leader is
 * active the committer calls joined() and returns at once (that leader, or
 * the next, leads for it: L4) -- unless that leader has led long enough
 * for others and asks to be taken over: then it queues (L5). */
struct wal_leader {
    pthread_mutex_t mu;
    int active;
    struct wal_waitq q;
    uint64_t async_lsn;       /* mu: the highest LSN an asynchronous commit asked for */
    int handoff;              /* mu: the leader has led long enough for others: the next
                               * asynchronous committer queues to take over (L5) */
};
int wal_leader_commit(struct wal *w, struct wal_leader *l, uint64_t lsn,
                      int (*lead)(struct wal *w, uint64_t target),
                      void (*joined)(struct wal *w, uint64_t lsn), int async);

/* segment.c */
int wal_segment_path(const struct wal *w, uint64_t segno, char **out);
/* Creates segment segno durably (init, header, sync, directory sync). */
int wal_segment_create(struct wal *w, uint64_t segno);
/* Opens the retired segment old_segno for reuse: 0 with *f open when it is
 * a whole segment (exactly seg_size bytes), 1 when it is not (a file cut
 * short by a crash during its creation: delete it instead), or -errno. */
int wal_segment_recyclable(struct wal *w, uint64_t old_segno, struct vfs_file **f);
/* Makes the file f (retired segment old_segno) segment new_segno durably:
 * header block rewritten in place and fdatasynced, renamed, directory
 * synced.  Closes f. */
int wal_segment_recycle(struct wal *w, struct vfs_file *f, uint64_t old_segno, uint64_t new_segno);

/* segpool.c: the segments ready ahead of the writer (see wal.h) */
void wal_pool_init(struct wal *w, uint64_t first_future);
int wal_pool_start(struct wal *w);   /* starts the prealloc thread, if asked for */
void wal_pool_stop(struct wal *w);   /* joins it */
void wal_pool_destroy(struct wal *w);
/* io_mu held: makes segment segno (the next one the writer needs) ready:
 * takes it from the pool, waits for its preparer, or prepares it. */
int wal_pool_take(struct wal *w, uint64_t segno);
/* A retired segment: recycled into the pool while it has room, else
 * deleted (*removed = 1; the caller syncs the directory). */
int wal_pool_retire(struct wal *w, uint64_t old_segno, int *removed);
/* Encodes the header block fields into hdr (WAL_SEG_HDR_LEN bytes). */
void wal_segment_header_encode(uint8_t *hdr, uint64_t db_id, uint64_t segno, uint64_t seg_size);
/* Decodes and checks one header block: 0, CL_EFORMAT or CL_ECORRUPT. */
int wal_segment_header_decode(const uint8_t *hdr, size_t len, struct wal_segment_header *out);

/* record encoding (the writer's) */
void wal_record_header_encode(uint8_t *h, uint32_t len, uint64_t lsn, uint64_t txn_id,
                              uint64_t sync_lsn, uint32_t incarnation, enum wal_rec_type type);

#endif /* CL_WAL_INTERNAL_H */
