/*
 * log_slot.c -- consolidated insertion into the log buffer (log_insert
 * slots), in the manner of WiredTiger's log slots
 * (https://github.com/wiredtiger/wiredtiger/blob/develop/src/log/log_slot.c)
 * and Aether's consolidation array (Johnson et al., "Aether: A Scalable
 * Approach to Logging", VLDB 2010, https://infoscience.epfl.ch/record/149436).
 *
 * Under log_insert mutex every appender takes append_mu for its whole
 * transaction and copies its records under it.  Here:
 *
 *   join      An appender adds (1 member, its bytes) to the open slot's
 *             state word with ONE atomic fetch-add.  The value before the
 *             add is its place: member number and byte offset in the slot.
 *             The first member (number 0) is the slot's leader.
 *   position  The leader takes append_mu -- the time it waits for it is
 *             the window in which others join -- closes the slot (an
 *             atomic or of WAL_SLOT_CLOSED, which returns the final
 *             membership), opens the next slot, and takes the log position
 *             for the whole slot once, under mu: a SWITCH record first when
 *             the slot would not fit in the current segment
 *             (wal_reserve_locked, as a single record does it), room in the
 *             ring, then end_lsn moves past the slot.
 *   copy      Each member, the leader included, encodes and copies its
 *             own records into its range [start + offset, + bytes), with
 *             no lock held.  Members copy in parallel, and the CRC32C of
 *             each record is computed by its own thread.  (The alternative,
 *             the leader copying every member's records, keeps the other
 *             members idle and puts every CRC on one thread: WiredTiger
 *             has each thread copy its own record for the same reason.)
 *   retire    The member whose copy completes the slot marks it done, and,
 *             under mu, retires the done slots at the head of the
 *             positioned ones in order: each member's commit LSN enters
 *             the commit ring (txns_appended, last_commit_lsn) and the
 *             writer may now write the slot (wal_ready_lsn_locked).  Every
 *             member waits until its slot is retired before it returns, so
 *             that when wal_append_txn returns, as under mutex, its commit
 *             is counted and its bytes can be written.
 *
 * A slot holds at most WAL_SLOT_MEMBERS transactions and sl->cap bytes.  A
 * joiner whose add finds it full (or closed) has joined nothing: it waits
 * for the next slot to open and joins that.  The members that fit are
 * the joiners before the first one that did not (the counts only grow), so
 * that first one -- it can tell it is the first from the value it got --
 * says how many members and bytes fit (over_*), and the leader waits for
 * that when the final state shows an overflow.  A transaction larger than
 * a slot holds is appended alone under append_mu, as under mutex, after
 * the slots positioned before it are retired (wal_slots_drain).
 *
 * Invariants:
 *   S1 Slots take their places in the log in the order of their numbers,
 *      one at a time (under append_mu), and a slot fits whole in one
 *      segment, with room for a SWITCH record after it: W2 for each of its
 *      records.
 *   S2 Within a slot, members are laid out in the order of their joins,
 *      contiguously, each transaction's records contiguous and ending with
 *      its COMMIT: the log holds the same records as under mutex, in an
 *      order in which each wal_append_txn ran alone.
 *   S3 The writer never reads a byte of a slot before every member of it
 *      and of every earlier slot has copied: the ready LSN
 *      (wal_ready_lsn_locked) is the start of the oldest slot not retired.
 *      So a record's sync_lsn, read when it is copied, is durable before
 *      any of its bytes is written (W4).
 *   S4 A slot is reused (k + WAL_SLOTS) only after it is retired; a member
 *      reads the slot's fields before it counts itself copied, and after
 *      that touches only the head counter.
 *
 * Commit order and the engine: the engine appends under its writer lock
 * (C1 in docs/design.md), so through cl_commit a slot never has more than
 * one member; the lock must stay, since the tree is applied in log order
 * under it, a read-modify-write transaction holds it from its first read
 * (serialisability), and asynchronous callbacks are added in LSN order
 * under it.  Consolidation happens where several threads append to one
 * log at once (tests/wal/check_slots.c).
 *
 * Waits are short (another thread's memcpy, or the leader's positioning):
 * a spin with a pause instruction, then sched_yield.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "endian.h"
#include "invariant.h"
#include "wal_internal.h"

#define JOIN_ONE (1ull << WAL_SLOT_JOIN_SHIFT)
#define BYTES_MASK (JOIN_ONE - 1)
#define JOINED(s) (((s) & ~WAL_SLOT_CLOSED) >> WAL_SLOT_JOIN_SHIFT)
#define BYTES(s) ((s)&BYTES_MASK)
#define SPINS 64u

static inline void backoff(unsigned *i)
{
    if ((*i)++ < SPINS)
        cl_cpu_relax();
    else
        sched_yield();
}

/* Readies slot k (free: retired, or never used) and opens it. */
static void slot_open(struct wal_slots *sl, uint64_t k)
{
    struct wal_log_slot *s = &sl->slot[k % WAL_SLOTS];
    s->seq = k;
    s->start = 0;
    s->nmembers = 0;
    s->err = 0;
    s->done = 0;
    s->over_members = 0;
    s->over_bytes = 0;
    __atomic_store_n(&s->positioned, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->copied, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->over, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->state, 0, __ATOMIC_RELEASE); /* joins see the fields above */
    __atomic_store_n(&sl->cur, k, __ATOMIC_RELEASE);
}

int wal_slots_init(struct wal *w)
{
    struct wal_slots *sl = calloc(1, sizeof *sl);
    if (!sl)
        return CL_ENOMEM;
    for (unsigned i = 0; i < WAL_SLOTS; i++)
        sl->slot[i].state = WAL_SLOT_CLOSED; /* free: a stray add finds it closed */
    sl->cap = WAL_SLOT_MAX;
    /* S1: a whole slot, its segment's header and a SWITCH record fit in a
     * segment; and a slot takes at most half the ring. */
    if (sl->cap > w->seg_size - WAL_SEG_HEADER - WAL_REC_HEADER)
        sl->cap = w->seg_size - WAL_SEG_HEADER - WAL_REC_HEADER;
    if (sl->cap > w->buf_cap / 2)
        sl->cap = w->buf_cap / 2;
    sl->cap &= ~(uint64_t)7;
    slot_open(sl, 0);
    w->slots = sl;
    return 0;
}

/* The aligned bytes of a transaction's records: its PUTs and DELs and its
 * COMMIT. */
static uint64_t txn_bytes(const struct wal_op *ops, size_t n)
{
    uint64_t b = wal_align_up(WAL_REC_HEADER + (uint64_t)WAL_COMMIT_LEN);
    for (size_t i = 0; i < n; i++) {
        uint64_t plen =
            ops[i].del ? WAL_DEL_HDR + (uint64_t)ops[i].klen : WAL_PUT_HDR + (uint64_t)ops[i].klen + ops[i].vlen;
        b += wal_align_up(WAL_REC_HEADER + plen);
    }
    return b;
}

/* Encodes the transaction's records at lsn, contiguously (S2). */
static void copy_txn(struct wal *w, uint64_t lsn, uint64_t txn_id, const struct wal_op *ops, size_t n)
{
    uint8_t hdr[WAL_PUT_HDR], cbuf[WAL_COMMIT_LEN];
    for (size_t i = 0; i < n; i++) {
        const struct wal_op *op = &ops[i];
        struct wal_part parts[3];
        uint32_t plen;
        put_le16(hdr, (uint16_t)op->klen);
        parts[0].p = hdr;
        parts[1].p = op->key;
        parts[1].n = op->klen;
        if (op->del) {
            parts[0].n = WAL_DEL_HDR;
            plen = WAL_DEL_HDR + op->klen;
            wal_put_record(w, lsn, WAL_REC_DEL, txn_id, parts, 2, plen);
        } else {
            put_le32(hdr + 2, op->vlen);
            parts[0].n = WAL_PUT_HDR;
            parts[2].p = op->val;
            parts[2].n = op->vlen;
            plen = WAL_PUT_HDR + op->klen + op->vlen;
            wal_put_record(w, lsn, WAL_REC_PUT, txn_id, parts, 3, plen);
        }
        lsn += wal_align_up(WAL_REC_HEADER + (uint64_t)plen);
    }
    struct wal_part p = {cbuf, WAL_COMMIT_LEN};
    put_le32(cbuf, (uint32_t)n);
    wal_put_record(w, lsn, WAL_REC_COMMIT, txn_id, &p, 1, WAL_COMMIT_LEN);
}

/* The leader: closes slot s, opens the next and takes s's place in the
 * log (S1).  Publishes start, nmembers and err. */
static void slot_position(struct wal *w, struct wal_log_slot *s)
{
    struct wal_slots *sl = w->slots;
    uint64_t st, members, bytes, at = 0;
    unsigned i = 0;
    int rc;

    pthread_mutex_lock(&w->append_mu);
    st = __atomic_fetch_or(&s->state, WAL_SLOT_CLOSED, __ATOMIC_ACQ_REL);
    members = JOINED(st);
    bytes = BYTES(st);
    if (!(members <= WAL_SLOT_MEMBERS && (members == 1 || bytes <= sl->cap))) {
        /* someone found it full: it says where the members that fit end */
        while (!__atomic_load_n(&s->over, __ATOMIC_ACQUIRE))
            backoff(&i);
        members = s->over_members;
        bytes = s->over_bytes;
    }
    /* The next slot opens once its previous use is retired (S4); the
     * joiners waiting for it go on meanwhile. */
    i = 0;
    while (__atomic_load_n(&sl->head, __ATOMIC_ACQUIRE) + WAL_SLOTS <= s->seq + 1)
        backoff(&i);
    slot_open(sl, s->seq + 1);

    pthread_mutex_lock(&w->mu);
    rc = wal_broken(w);
    if (rc == 0)
        rc = wal_reserve_locked(w, bytes, &at);
    s->start = rc ? w->end_lsn : at;
    s->nmembers = (uint32_t)members;
    s->err = rc;
    if (rc == 0) {
        CL_INVARIANT("W1", w->written_lsn <= at && at + bytes <= w->written_lsn + w->buf_cap);
        w->end_lsn = at + bytes;
    }
    sl->positioned = s->seq + 1;
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_unlock(&w->append_mu);
    wal_add64(&w->st.slots, 1);
    __atomic_store_n(&s->positioned, 1, __ATOMIC_RELEASE);
}

/* The member that completed slot s: retires the done slots at the head,
 * in order, counting their transactions (S3). */
static void slot_retire(struct wal *w, struct wal_log_slot *s)
{
    struct wal_slots *sl = w->slots;
    pthread_mutex_lock(&w->mu);
    s->done = 1;
    for (;;) {
        uint64_t head = sl->head;
        struct wal_log_slot *h = &sl->slot[head % WAL_SLOTS];
        if (head >= sl->positioned || !h->done)
            break;
        for (uint32_t i = 0; !h->err && i < h->nmembers; i++) {
            uint64_t lsn = h->start + h->member_end[i];
            w->commit_ring[w->txns_appended % WAL_COMMIT_RING] = lsn;
            w->txns_appended++;
            w->last_commit_lsn = lsn;
        }
        __atomic_store_n(&sl->head, head + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&w->mu);
}

int wal_slot_append(struct wal *w, uint64_t txn_id, const struct wal_op *ops, size_t n, uint64_t *commit_lsn)
{
    struct wal_slots *sl = w->slots;
    uint64_t asz = txn_bytes(ops, n), st, members, off, seq, start;
    struct wal_log_slot *s;
    uint32_t nmembers;
    unsigned i = 0;
    int err;

    if (asz > sl->cap)
        return CL_ETOOBIG;
    for (;;) {
        uint64_t k = __atomic_load_n(&sl->cur, __ATOMIC_ACQUIRE);
        s = &sl->slot[k % WAL_SLOTS];
        st = __atomic_fetch_add(&s->state, JOIN_ONE + asz, __ATOMIC_ACQ_REL); /* the join */
        members = JOINED(st);
        off = BYTES(st);
        if (!(st & WAL_SLOT_CLOSED) && members < WAL_SLOT_MEMBERS && (members == 0 || off + asz <= sl->cap))
            break;
        /* Not in: the slot was closed, or full.  Open and full, it is slot k
         * or a later one (then cur has moved past k already); the leader
         * cannot close it before reading over_* from the first joiner that
         * did not fit, so that one writes them to this use of it. */
        if (!(st & WAL_SLOT_CLOSED)) {
            if (members <= WAL_SLOT_MEMBERS && (members == 1 || off <= sl->cap)) {
                /* the first that did not fit: the members before it did */
                s->over_members = (uint32_t)members;
                s->over_bytes = off;
                __atomic_store_n(&s->over, 1, __ATOMIC_RELEASE);
            }
        }
        while (__atomic_load_n(&sl->cur, __ATOMIC_ACQUIRE) == k)
            backoff(&i);
    }

    if (members == 0) {
        slot_position(w, s);
    } else {
        wal_add64(&w->st.slot_joins, 1);
        while (!__atomic_load_n(&s->positioned, __ATOMIC_ACQUIRE))
            backoff(&i);
    }
    err = s->err;
    start = s->start;
    seq = s->seq;
    nmembers = s->nmembers;
    if (!err)
        copy_txn(w, start + off, txn_id, ops, n);
    s->member_end[members] = off + asz;
    /* S4: nothing of s is read after this */
    if (__atomic_add_fetch(&s->copied, 1, __ATOMIC_ACQ_REL) == nmembers)
        slot_retire(w, s);
    if (err)
        return err; /* the log is broken: the caller's append failed */
    i = 0;
    while (__atomic_load_n(&sl->head, __ATOMIC_ACQUIRE) <= seq)
        backoff(&i);
    *commit_lsn = start + off + asz;
    wal_add64(&w->st.appends, 1);
    return 0;
}

void wal_slots_drain(struct wal *w)
{
    struct wal_slots *sl = w->slots;
    unsigned i = 0;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int idle = sl->head == sl->positioned;
        pthread_mutex_unlock(&w->mu);
        if (idle)
            return;
        backoff(&i);
    }
}
