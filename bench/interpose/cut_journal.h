/*
 * cut_journal.h -- the undo journal of `commitlab crash --mode cut`: what
 * a committing process records of its database directory's file calls
 * (cut_journal.c, through the interposed calls of sync_latency.c and
 * cut_calls.c), and the record format the parent reads after the kill to
 * roll the directory back to its last synced state (bench/crash/crash_cut.c).
 *
 * The journal is one append-only file, JOURNAL_DIR/journal, beside a hard
 * link JOURNAL_DIR/f<id> to every file of the database directory it
 * tracks, so the parent finds each file whatever its names became, and a
 * file the engine unlinked can be linked back, and JOURNAL_DIR/state, the
 * journal's state shared by every process that journals (a server's
 * processes, which join it: CUT_ENV).  Every record is written
 * whole (one writev) before the call it describes proceeds, so a record
 * cut off by the kill is the last one, and the call it describes never
 * ran; its hash does not match, and the reader stops there.
 *
 * Sequence numbers order the records.  A sync snapshots the next number
 * when it starts: what the records before it describe was done before
 * the sync began, so the sync made it durable; what comes after may
 * have raced the sync and counts as not durable.
 *
 * Besides what a cut undoes, the journal says what each file should hold
 * when the kill falls, so that the parent can tell writes it never saw
 * (a shared writable mapping, a raw system call, io_uring) from the ones
 * it did: a CUT_HASHES record of every block of a file when it is
 * tracked, and after every journaled call that changes bytes or the size
 * one of the blocks the call touched as it left them (from a write's own
 * buffers where it wrote a block whole, else read back), with the size it
 * left; before such a call, a CUT_CHANGING record of what it
 * may change, so that a kill inside the call is told from a write the
 * journal did not see.  A block's hash is cut_block_hash of its CUT_BLOCK
 * bytes, those at or past the file's size read as zeros.
 */
#ifndef CL_BENCH_CUT_JOURNAL_H
#define CL_BENCH_CUT_JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define CUT_MAGIC 0x31545543u /* "CUT1" */
#define CUT_JOURNAL_NAME "journal"
#define CUT_STATE_NAME "state"                 /* the shared state of the processes that journal (cut_journal.c) */
#define CUT_ENV "COMMITLAB_CUT_JOURNAL"        /* a process started with it set to JOURNAL_DIR joins that journal */
#define CUT_PRELOAD_NAME "libcommitlab-cut.so" /* the interposer as a library, for a server's processes */
#define CUT_MAX_DEFAULT (256ull << 20)

enum cut_type {
    CUT_FILE = 1,    /* id: a tracked file; a = dev, b = ino, c = its synced size */
    CUT_DIR,         /* id: a tracked directory; a = dev, b = ino; payload: its path below the database directory */
    CUT_UNDO,        /* id: file; a = offset, b = length, c = synced size; payload: the bytes
                      * (none with CUT_F_ZERO: the range was beyond the synced size: a hole) */
    CUT_SYNC,        /* id: file; a = snapshot, b = the size it made durable */
    CUT_DSYNC,       /* id: file; a = offset, b = length: an O_DSYNC or RWF_DSYNC write that returned */
    CUT_DIRSYNC,     /* id: directory; a = snapshot */
    CUT_CREATE,      /* id: directory; payload: the name (a file created or a link made) */
    CUT_UNLINK,      /* id: directory, id2: the file; payload: the name */
    CUT_RENAME,      /* id: directory; a = the file moved, b = the file replaced (0: none);
                      * payload: old name, NUL, new name */
    CUT_MKDIR,       /* id: parent directory; payload: the name */
    CUT_RMDIR,       /* id: parent directory; payload: the name */
    CUT_MAPPED,      /* id: file: mapped shared and writable */
    CUT_UNSUPPORTED, /* payload: the call and what it met: the campaign fails with it */
    CUT_OVERFLOW,    /* a = the bound, b = the bytes the journal would have needed */
    CUT_HASHES,      /* id: file; a = first block, b = blocks, c = the file's size; payload: b hashes
                      * (uint64_t, host order): the blocks as a call left them (or as tracked) */
    CUT_CHANGING,    /* id: file; a = offset, b = length, c = the size the call may leave: a call that may
                      * change [a, a + b) and the size is about to run; the next CUT_HASHES of the file
                      * says what it left */
    CUT_STREAM,      /* id: file: opened by a stdio stream that only appends, whose writes no call here sees */
};

#define CUT_F_ZERO 1u   /* CUT_UNDO: a hole */
#define CUT_F_SHARED 2u /* CUT_FILE: memory shared between the engine's processes, which it rebuilds at open
                         * (struct cl_engine_plugin.shared_memory): never data, not hashed */

#define CUT_BLOCK 4096u

struct cut_rec {
    uint32_t magic;
    uint16_t type;
    uint16_t flags;
    uint32_t len;     /* the whole record, this header included */
    uint32_t id, id2;
    uint32_t n1;      /* the payload's first part (the rest is its second): hashed apart */
    uint64_t seq;
    uint64_t a, b, c;
    uint64_t hash;    /* cut_hash of the payload's two parts, then of this header with hash = 0 */
};

/* 64 bits over 8-byte words, then the bytes left, each step (h ^ w) * odd
 * then h ^= h >> 29, a bijection of h: a record that differs from what was
 * written in one word never checks.  Enough to tell a record cut off by a
 * kill, and several times faster than FNV-1a's byte at a time over the
 * undo records' old bytes. */
static inline uint64_t cut_hash(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    for (; n; s++, n--)
        h = (h ^ *s) * 0x100000001b3ull;
    return h;
}
#define CUT_HASH_SEED 0xcbf29ce484222325ull

/* A block's contents, 64 bits: four lanes of 8-byte words, each step
 * (h ^ w) * odd, rotated -- a bijection of h for each w, so a block that
 * differs from another in one word never hashes alike -- then mixed
 * (MurmurHash3's finaliser).  Fast enough to hash every block the
 * journaled calls touch; not a defence against an adversary. */
static inline uint64_t cut_mix64(uint64_t h)
{
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
    h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}
static inline uint64_t cut_lane(uint64_t h, const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return (h << 31) | (h >> 33);
}
static inline uint64_t cut_block_hash(const unsigned char *p)
{
    uint64_t h0 = CUT_HASH_SEED, h1 = 0x9e3779b97f4a7c15ull, h2 = 0xbf58476d1ce4e5b9ull, h3 = 0x94d049bb133111ebull;
    for (size_t i = 0; i < CUT_BLOCK; i += 32) {
        h0 = cut_lane(h0, p + i);
        h1 = cut_lane(h1, p + i + 8);
        h2 = cut_lane(h2, p + i + 16);
        h3 = cut_lane(h3, p + i + 24);
    }
    return cut_mix64(h0) ^ cut_mix64(h1 + 1) * 3 ^ cut_mix64(h2 + 2) * 5 ^ cut_mix64(h3 + 3) * 7;
}

/* ---- the committing process (cut_journal.c) ----------------------------- */

/* Starts the journal in jdir (a fresh, empty directory on dbdir's
 * filesystem) for the files of dbdir: syncs the filesystem, so what is
 * there now is the durable state a cut returns to, and tracks every file
 * and directory below dbdir.  From here on every interposed call on them is
 * journaled, up to max bytes of journal.  shared: NULL, or the engine's
 * shared memory (fnmatch patterns of a file's name, NULL-terminated;
 * struct cl_engine_plugin.shared_memory).  0, or -errno with err filled.
 * Once per process: a child of `crash --mode cut`, never the campaign. */
int bench_cut_arm(const char *dbdir, const char *jdir, uint64_t max, const char *const *shared, char *err,
                  size_t len);

/* Makes the journal in jdir (a fresh, empty directory): the file
 * journal, and the state every process that journals shares (a mapping
 * of jdir/state: the sequence, the tracked files and their locks), owned
 * by uid and gid when not -1.  server: the files are a server's, whose
 * processes join the journal at their start (CUT_ENV, with the interposer
 * preloaded) and journal their calls once another process arms it; a
 * shared writable mapping of one of its files then fails the run.
 * bench_cut_arm makes the journal itself when this was not called.  0, or
 * -errno with err filled.  Once per process. */
int bench_cut_prepare(const char *jdir, uint64_t max, int server, uid_t uid, gid_t gid, char *err, size_t len);

/* Nonzero once armed. */
int bench_cut_armed(void);

/* The hooks of the interposed calls: begin before the real call, end
 * after it with its result.  A hook that cannot journal what the call
 * would do (an unsupported call, the bound, a failing journal) records why
 * and kills the process. */
struct bench_cut_op {
    void *file, *dir;
    uint64_t off, n, snap, size;
    int dsync;
};
void bench_cut_write_begin(int fd, int64_t off, size_t n, int rwf, struct bench_cut_op *op); /* off < 0: the file offset */
struct iovec;
void bench_cut_write_end(struct bench_cut_op *op, ssize_t rc, const struct iovec *iov, int cnt); /* what it wrote */
void bench_cut_sync_begin(int fd, struct bench_cut_op *op);
void bench_cut_sync_end(struct bench_cut_op *op, int rc);
void bench_cut_msync(void *addr);


#endif
