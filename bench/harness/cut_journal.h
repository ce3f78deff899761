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
 * file the engine unlinked can be linked back.  Every record is written
 * whole (one writev) before the call it describes proceeds, so a record
 * cut off by the kill is the last one, and the call it describes never
 * ran; its hash does not match, and the reader stops there.
 *
 * Sequence numbers order the records.  A sync snapshots the next number
 * when it starts: what the records before it describe was done before
 * the sync began, so the sync made it durable; what comes after may
 * have raced the sync and counts as not durable.
 */
#ifndef CL_BENCH_CUT_JOURNAL_H
#define CL_BENCH_CUT_JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CUT_MAGIC 0x31545543u /* "CUT1" */
#define CUT_JOURNAL_NAME "journal"
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
};

#define CUT_F_ZERO 1u

struct cut_rec {
    uint32_t magic;
    uint16_t type;
    uint16_t flags;
    uint32_t len;     /* the whole record, this header included */
    uint32_t id, id2;
    uint32_t pad;
    uint64_t seq;
    uint64_t a, b, c;
    uint64_t hash;    /* cut_hash of the record with hash = 0 */
};

/* FNV-1a, 64 bits: enough to tell a record cut off by a kill. */
static inline uint64_t cut_hash(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}
#define CUT_HASH_SEED 0xcbf29ce484222325ull

/* ---- the committing process (cut_journal.c) ----------------------------- */

/* Starts the journal in jdir (a fresh, empty directory on dbdir's
 * filesystem) for the files of dbdir: syncs the filesystem, so what is
 * there now is the durable state a cut returns to, and tracks every file
 * and directory below dbdir.  From here on every interposed call on them is
 * journaled, up to max bytes of journal.  0, or -errno with err filled.
 * Once per process: a child of `crash --mode cut`, never the campaign. */
int bench_cut_arm(const char *dbdir, const char *jdir, uint64_t max, char *err, size_t len);

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
void bench_cut_write_end(struct bench_cut_op *op, ssize_t rc);
void bench_cut_sync_begin(int fd, struct bench_cut_op *op);
void bench_cut_sync_end(struct bench_cut_op *op, int rc);
void bench_cut_msync(void *addr);


#endif
