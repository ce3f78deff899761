/*
 * crash_cut.c -- the power failure of `commitlab crash --mode cut`, made
 * after the kill: the database directory rolled back to the state its
 * files and names had at their last syncs, from the undo journal the
 * committing child kept (bench/interpose/cut_journal.c; the format:
 * cut_journal.h).  crash_kill.c runs the child, kills it, calls this, and
 * then recovers and checks as it does for a kill.
 *
 * The journal is read from its start to its first record that is not
 * whole (the kill may cut the last one off: the call an undo record
 * describes never ran; the one whose read-back it was may have).
 * Forward, per file: the undo records since the file's last sync
 * are kept, less the ranges an O_DSYNC/RWF_DSYNC write made durable
 * afterwards, and its synced size; per directory, the snapshot of its
 * last sync.  Then every file is cut back to its synced size and its
 * undo records are written back, newest first, so each byte ends as the
 * last sync left it (LazyFS's clear-cache: everything unsynced is
 * dropped); then every change of a name its directory's sync did not
 * cover is undone, newest first: a file created is removed, an unlinked
 * one linked back from the journal's hard link, a rename reverted, a
 * directory made removed with what is in it.
 *
 * Before anything is rolled back, the check of unseen writes: the undo
 * records can only undo what the journal saw, so a write it did not see
 * (a store into a shared writable mapping, a raw system call, io_uring)
 * would survive the cut and pass for durable.  Per file, forward: the
 * hash of each block and the size as the last journaled call left them
 * (CUT_HASHES: as tracked, then after each call that changed bytes or
 * the size), and the call under way, if the kill fell inside one
 * (CUT_CHANGING without its CUT_HASHES after it).  Every tracked file but
 * the engine's shared memory (CUT_F_SHARED) is read through its hard
 * link in the journal's directory and held to them: its size must be the
 * last one recorded (or between it and the one the call under way may
 * leave; no less for a file an appending stdio stream writes, whose
 * blocks are held only below it), and each block's hash the last one
 * recorded (past the end of what was recorded, a block of zeros), but
 * for the blocks of the call under way.  And every file and directory
 * below the database directory must be one the journal tracks, or the
 * one whose creation the kill fell inside (the last change of a name).
 * The first difference fails the run, naming the file and what differs
 * (CRASH_CUT_UNSEEN): the check depends on nothing but the journal and
 * the files, not on when the kill fell.  What it guarantees and what it
 * does not: cut_journal.c.
 *
 * What the journal says the child met and the cut cannot model (a call,
 * the journal's bound) is returned as the failure, before the check, and
 * nothing is rolled back: such a run is never checked as if it had been
 * cut.  Nor is one the check fails, nor one whose child held an io_uring
 * instance when it was killed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash.h"
#include "cut_journal.h"
#include "ut_file.h"

struct extent {
    uint64_t seq, off, len;
    const unsigned char *bytes; /* NULL: a hole (zeros) */
};

struct file_state {
    int known;
    uint64_t dev, ino, synced;
    uint64_t sync_snap; /* the snapshot of the sync whose size synced is (racing syncs: the latest) */
    struct extent *ext;
    size_t n, cap;
    /* What it holds at the kill, as the journaled calls left it. */
    int shared;               /* the engine's shared memory: not checked */
    int stream;               /* an appending stdio stream writes past size */
    int mapped;               /* mapped shared and writable (for the message) */
    int hashed;               /* its hashes as tracked are in the journal */
    uint64_t size;            /* the size the last journaled call left */
    uint64_t *hash;           /* each block's; past nhash, the zero block's */
    size_t nhash, caphash;
    int changing;             /* a call was under way at the kill: */
    uint64_t ch_off, ch_len, ch_size; /* what it may have changed, the size it may have left */
};

struct dir_state {
    int known;
    uint64_t dev, ino;
    const char *rel;
    size_t rel_len;
    uint64_t durable; /* the snapshot of its last sync: names changed before it are durable */
};

struct name_op {
    struct cut_rec r; /* a copy: records are not aligned in the journal */
    const char *p;
    size_t plen;
};

struct cut_state {
    struct file_state *files;
    size_t nfiles;
    struct dir_state *dirs;
    size_t ndirs;
    struct name_op *ops;
    size_t nops, capops;
};

static int grow(void **v, size_t *n, size_t want, size_t size)
{
    if (want <= *n)
        return 0;
    void *nv = realloc(*v, want * size);
    if (!nv)
        return -1;
    memset((char *)nv + *n * size, 0, (want - *n) * size);
    *v = nv;
    *n = want;
    return 0;
}

static int push_extent(struct file_state *f, struct extent e)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        struct extent *v = realloc(f->ext, cap * sizeof *v);
        if (!v)
            return -1;
        f->ext = v;
        f->cap = cap;
    }
    f->ext[f->n++] = e;
    return 0;
}

/* [off, off + len) made durable by the record seq: no earlier undo of it. */
static int subtract(struct file_state *f, uint64_t seq, uint64_t off, uint64_t len)
{
    uint64_t end = off + len;
    size_t n = f->n;
    for (size_t i = 0; i < n; i++) {
        struct extent *e = &f->ext[i];
        uint64_t ee = e->off + e->len;
        if (e->seq >= seq || ee <= off || e->off >= end)
            continue;
        if (e->off < off && ee > end) { /* split: the tail becomes an extent of its own */
            struct extent tail = {e->seq, end, ee - end, e->bytes ? e->bytes + (end - e->off) : NULL};
            e->len = off - e->off;
            if (push_extent(f, tail))
                return -1;
        } else if (e->off < off) {
            e->len = off - e->off;
        } else if (ee > end) {
            if (e->bytes)
                e->bytes += end - e->off;
            e->len = ee - end;
            e->off = end;
        } else {
            e->len = 0; /* all of it durable */
        }
    }
    return 0;
}

static int by_seq_desc(const void *a, const void *b)
{
    const struct extent *x = a, *y = b;
    return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

static void state_free(struct cut_state *s)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        free(s->files[i].ext);
        free(s->files[i].hash);
    }
    free(s->files);
    free(s->dirs);
    free(s->ops);
}

static uint64_t zero_block_hash(void)
{
    static const unsigned char zeros[CUT_BLOCK];
    return cut_block_hash(zeros);
}

/* A CUT_HASHES record: the blocks it names as a call left them, and the
 * size; a file cut shorter forgets the blocks past its end (zeros, should
 * it grow again).  -1 when the record is not one the child could write. */
static int apply_hashes(struct file_state *f, const struct cut_rec *r, const unsigned char *p, size_t plen)
{
    uint64_t keep = r->c / CUT_BLOCK + (r->c % CUT_BLOCK != 0);
    if (plen / sizeof(uint64_t) != r->b || plen % sizeof(uint64_t) || (r->b && (r->a > keep || r->b > keep - r->a)))
        return -1;
    if (f->nhash > keep)
        f->nhash = (size_t)keep;
    if (r->b) {
        size_t end = (size_t)(r->a + r->b);
        if (end > f->caphash) {
            size_t cap = f->caphash ? f->caphash : 64;
            while (cap < end)
                cap *= 2;
            uint64_t *v = realloc(f->hash, cap * sizeof *v);
            if (!v)
                return -1;
            f->hash = v;
            f->caphash = cap;
        }
        uint64_t z = zero_block_hash();
        while (f->nhash < (size_t)r->a)
            f->hash[f->nhash++] = z;
        memcpy(f->hash + r->a, p, plen);
        if (end > f->nhash)
            f->nhash = end;
    }
    f->size = r->c;
    f->hashed = 1;
    f->changing = 0;
    return 0;
}

/* Reads the journal's records into s; what the child met that the cut
 * cannot model becomes why (return 1). */
static int parse(const unsigned char *buf, size_t size, struct cut_state *s, struct crash_cut_stats *st, char *why,
                 size_t wlen)
{
    size_t off = 0;
    while (size - off >= sizeof(struct cut_rec)) {
        struct cut_rec r;
        memcpy(&r, buf + off, sizeof r);
        if (r.magic != CUT_MAGIC || r.len < sizeof r || r.len > size - off || r.n1 > r.len - sizeof r)
            break;
        const unsigned char *p = buf + off + sizeof r;
        size_t plen = r.len - sizeof r;
        uint64_t h = r.hash;
        r.hash = 0;
        uint64_t want = cut_hash(p, r.n1, CUT_HASH_SEED);
        want = cut_hash(p + r.n1, plen - r.n1, want);
        if (cut_hash(&r, sizeof r, want) != h)
            break;
        off += r.len;
        st->records++;
        switch (r.type) {
        case CUT_FILE:
            if (grow((void **)&s->files, &s->nfiles, (size_t)r.id + 1, sizeof *s->files))
                return -ENOMEM;
            s->files[r.id] = (struct file_state){
                .known = 1, .dev = r.a, .ino = r.b, .synced = r.c, .shared = (r.flags & CUT_F_SHARED) != 0};
            break;
        case CUT_DIR:
            if (grow((void **)&s->dirs, &s->ndirs, (size_t)r.id + 1, sizeof *s->dirs))
                return -ENOMEM;
            s->dirs[r.id] =
                (struct dir_state){.known = 1, .dev = r.a, .ino = r.b, .rel = (const char *)p, .rel_len = plen};
            break;
        case CUT_HASHES:
        case CUT_CHANGING:
        case CUT_STREAM:
        case CUT_MAPPED:
            if (r.id >= s->nfiles || !s->files[r.id].known)
                return -EINVAL;
            if (r.type == CUT_HASHES) {
                if (apply_hashes(&s->files[r.id], &r, p, plen))
                    return -EINVAL;
            } else if (r.type == CUT_CHANGING) {
                struct file_state *f = &s->files[r.id];
                f->changing = 1;
                f->ch_off = r.a;
                f->ch_len = r.b;
                f->ch_size = r.c;
            } else if (r.type == CUT_STREAM) {
                s->files[r.id].stream = 1;
            } else {
                s->files[r.id].mapped = 1;
            }
            break;
        case CUT_UNDO:
        case CUT_SYNC:
        case CUT_DSYNC: {
            if (r.id >= s->nfiles || !s->files[r.id].known)
                return -EINVAL;
            struct file_state *f = &s->files[r.id];
            if (r.type == CUT_UNDO) {
                if (!(r.flags & CUT_F_ZERO) && plen != r.b)
                    return -EINVAL;
                if (push_extent(f, (struct extent){r.seq, r.a, r.b, (r.flags & CUT_F_ZERO) ? NULL : p}))
                    return -ENOMEM;
            } else if (r.type == CUT_SYNC) {
                size_t o = 0;
                for (size_t i = 0; i < f->n; i++)
                    if (f->ext[i].seq >= r.a)
                        f->ext[o++] = f->ext[i];
                f->n = o;
                /* Two syncs that raced (two processes', two threads') are
                 * journaled as they returned, which need not be the order
                 * they took their snapshots in: the size is the latest
                 * snapshot's. */
                if (r.a >= f->sync_snap) {
                    f->synced = r.b;
                    f->sync_snap = r.a;
                }
                st->syncs++;
            } else {
                if (subtract(f, r.seq, r.a, r.b))
                    return -ENOMEM;
                if (r.a + r.b > f->synced)
                    f->synced = r.a + r.b;
                st->syncs++;
            }
            break;
        }
        case CUT_DIRSYNC:
            if (r.id >= s->ndirs || !s->dirs[r.id].known)
                return -EINVAL;
            if (r.a > s->dirs[r.id].durable)
                s->dirs[r.id].durable = r.a;
            st->syncs++;
            break;
        case CUT_CREATE:
        case CUT_UNLINK:
        case CUT_RENAME:
        case CUT_MKDIR:
        case CUT_RMDIR:
            if (r.id >= s->ndirs || !s->dirs[r.id].known)
                return -EINVAL;
            if (s->nops == s->capops) {
                size_t cap = s->capops ? s->capops * 2 : 64;
                struct name_op *v = realloc(s->ops, cap * sizeof *v);
                if (!v)
                    return -ENOMEM;
                s->ops = v;
                s->capops = cap;
            }
            s->ops[s->nops++] = (struct name_op){r, (const char *)p, plen};
            break;
        case CUT_UNSUPPORTED:
            snprintf(why, wlen, "the engine made a call the cut cannot model: %.*s", (int)(plen < 300 ? plen : 300),
                     (const char *)p);
            return 1;
        case CUT_OVERFLOW: {
            char bound[32];
            crash_size_name(r.a, bound, sizeof bound);
            snprintf(why, wlen,
                     "the undo journal reached its bound of %s (--cut-journal-max): the run needed at least %" PRIu64
                     " bytes of it",
                     bound, r.b);
            return 1;
        }
        default:
            return -EINVAL;
        }
    }
    st->journal_bytes = off;
    st->torn = off < size;
    return 0;
}

static void dir_path(const char *dir, const struct dir_state *d, const char *name, size_t nlen, char *out,
                     size_t len)
{
    snprintf(out, len, "%s%s%.*s/%.*s", dir, d->rel_len ? "/" : "", (int)d->rel_len, d->rel, (int)nlen, name);
}

static int restore_files(const char *jdir, struct cut_state *s, struct crash_cut_stats *st)
{
    for (size_t id = 1; id < s->nfiles; id++) {
        struct file_state *f = &s->files[id];
        if (!f->known)
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/f%zu", jdir, id);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        int rc = ftruncate(fd, (off_t)f->synced) ? -errno : 0;
        if (f->n)
            qsort(f->ext, f->n, sizeof *f->ext, by_seq_desc);
        static const unsigned char zeros[65536];
        for (size_t i = 0; i < f->n && !rc; i++) {
            struct extent e = f->ext[i];
            if (e.off >= f->synced || !e.len)
                continue;
            if (e.off + e.len > f->synced)
                e.len = f->synced - e.off;
            for (uint64_t done = 0; done < e.len && !rc;) {
                size_t n = e.len - done;
                if (!e.bytes && n > sizeof zeros)
                    n = sizeof zeros;
                ssize_t w = pwrite(fd, e.bytes ? e.bytes + done : zeros, n, (off_t)(e.off + done));
                if (w <= 0)
                    rc = w < 0 ? -errno : -EIO;
                else
                    done += (uint64_t)w;
            }
            st->bytes_restored += e.len;
        }
        close(fd);
        if (rc)
            return rc;
        st->files++;
    }
    return 0;
}

static int undo_names(const char *dir, const char *jdir, struct cut_state *s, struct crash_cut_stats *st)
{
    for (size_t k = s->nops; k-- > 0;) {
        const struct name_op *op = &s->ops[k];
        const struct dir_state *d = &s->dirs[op->r.id];
        if (op->r.seq < d->durable)
            continue; /* its directory's sync made it durable */
        char path[4400], other[4400];
        struct stat sb;
        int rc = 0;
        switch (op->r.type) {
        case CUT_CREATE:
        case CUT_MKDIR:
            dir_path(dir, d, op->p, op->plen, path, sizeof path);
            if (lstat(path, &sb) == 0)
                rc = S_ISDIR(sb.st_mode) ? ut_rm_tree(path) : unlink(path) ? -errno : 0;
            break;
        case CUT_RMDIR:
            dir_path(dir, d, op->p, op->plen, path, sizeof path);
            if (lstat(path, &sb) != 0)
                rc = mkdir(path, 0755) ? -errno : 0;
            break;
        case CUT_UNLINK:
            dir_path(dir, d, op->p, op->plen, path, sizeof path);
            snprintf(other, sizeof other, "%s/f%u", jdir, op->r.id2);
            if (lstat(path, &sb) != 0)
                rc = link(other, path) ? -errno : 0;
            break;
        case CUT_RENAME: {
            size_t ol = strnlen(op->p, op->plen);
            if (ol >= op->plen)
                return -EINVAL;
            uint64_t moved = op->r.a, replaced = op->r.b;
            if (moved >= s->nfiles || !s->files[moved].known)
                return -EINVAL;
            dir_path(dir, d, op->p + ol + 1, op->plen - ol - 1, path, sizeof path); /* the new name */
            dir_path(dir, d, op->p, ol, other, sizeof other);
            if (lstat(path, &sb) == 0 && (uint64_t)sb.st_ino == s->files[moved].ino &&
                (uint64_t)sb.st_dev == s->files[moved].dev)
                rc = rename(path, other) ? -errno : 0;
            if (!rc && replaced && lstat(path, &sb) != 0) {
                snprintf(other, sizeof other, "%s/f%" PRIu64, jdir, replaced);
                rc = link(other, path) ? -errno : 0;
            }
            break;
        }
        }
        if (rc)
            return rc;
        st->names_undone++;
    }
    return 0;
}

/* ---- the check of unseen writes ---------------------------------------------------- */

/* The name below dir of the regular file (dev, ino), into out; 0, or -1
 * when no name reaches it (unlinked). */
static int name_of(const char *dir, const char *rel, uint64_t dev, uint64_t ino, char *out, size_t len, int depth)
{
    char path[4400];
    snprintf(path, sizeof path, "%.2000s%s%.2000s", dir, *rel ? "/" : "", rel);
    DIR *d = depth < 32 ? opendir(path) : NULL;
    if (!d)
        return -1;
    int found = -1;
    for (struct dirent *e; found && (e = readdir(d));) {
        char sub[4400], full[4600];
        struct stat sb;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(sub, sizeof sub, "%.2000s%s%.255s", rel, *rel ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%.4300s/%.255s", path, e->d_name);
        if (lstat(full, &sb))
            continue;
        if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_dev == dev && (uint64_t)sb.st_ino == ino) {
            snprintf(out, len, "%.2000s", sub);
            found = 0;
        } else if (S_ISDIR(sb.st_mode)) {
            found = name_of(dir, sub, dev, ino, out, len, depth + 1);
        }
    }
    closedir(d);
    return found;
}

/* Block b of [off, off + len)? */
static int block_in(uint64_t b, uint64_t off, uint64_t len)
{
    return len && b * CUT_BLOCK < off + len && (b + 1) * CUT_BLOCK > off;
}

/* File id as the journal leaves it, held to what it says: its size and
 * each block's hash.  0; 1 with what differs in what (the file's name
 * not yet in it); -errno when it cannot be read. */
static int check_file(const char *jdir, size_t id, struct file_state *f, unsigned char *buf, size_t cap,
                      struct crash_cut_stats *st, char *what, size_t wlen)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/f%zu", jdir, id);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return -e;
    }
    uint64_t size = (uint64_t)sb.st_size, lo = f->size, hi = f->size;
    if (f->changing) { /* killed inside a call: any size between the two */
        lo = f->ch_size < lo ? f->ch_size : lo;
        hi = f->ch_size > hi ? f->ch_size : hi;
    }
    if (f->stream)
        hi = UINT64_MAX;
    int bad = 0;
    if (size < lo || size > hi) {
        snprintf(what, wlen, "%" PRIu64 " bytes, where the journaled calls left %" PRIu64, size, f->size);
        bad = 1;
    }
    /* A stream writes past the size the calls left: only the blocks wholly
     * below it are theirs. */
    uint64_t nb = size / CUT_BLOCK + (size % CUT_BLOCK != 0), z = zero_block_hash();
    if (f->stream && nb > f->size / CUT_BLOCK)
        nb = f->size / CUT_BLOCK;
    for (uint64_t b = 0; b < nb && !bad;) {
        size_t k = nb - b < cap / CUT_BLOCK ? (size_t)(nb - b) : cap / CUT_BLOCK;
        size_t got = ut_read_full(fd, buf, k * CUT_BLOCK); /* the blocks in order, from 0 */
        memset(buf + got, 0, k * CUT_BLOCK - got);
        for (size_t i = 0; i < k && !bad; i++, b++) {
            if (f->changing && block_in(b, f->ch_off, f->ch_len))
                continue;
            uint64_t want = b < f->nhash ? f->hash[b] : z;
            st->blocks_checked++;
            if (cut_block_hash(buf + i * CUT_BLOCK) != want) {
                snprintf(what, wlen,
                         "bytes %" PRIu64 "-%" PRIu64 " are not what the journaled calls left there (the file "
                         "is %" PRIu64 " bytes)",
                         b * CUT_BLOCK, (b + 1) * CUT_BLOCK - 1, size);
                bad = 1;
            }
        }
    }
    close(fd);
    return bad;
}

/* Everything below dir is a file or directory the journal tracks, or the
 * one whose creation the kill cut off (the last change of a name, made
 * before the file could be tracked).  0; 1 with why filled. */
static int check_names(const char *dir, const char *rel, const struct cut_state *s, char *why, size_t wlen,
                       int depth)
{
    char path[4400];
    struct stat sb;
    snprintf(path, sizeof path, "%.2000s%s%.2000s", dir, *rel ? "/" : "", rel);
    if (depth > 32 || stat(path, &sb))
        return 0;
    size_t did = 0;
    for (size_t i = 1; i < s->ndirs && !did; i++)
        if (s->dirs[i].known && s->dirs[i].dev == (uint64_t)sb.st_dev && s->dirs[i].ino == (uint64_t)sb.st_ino)
            did = i;
    const struct name_op *last = s->nops ? &s->ops[s->nops - 1] : NULL;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int bad = 0;
    for (struct dirent *e; !bad && (e = readdir(d));) {
        char sub[4400], full[4600];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(sub, sizeof sub, "%.2000s%s%.255s", rel, *rel ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%.4300s/%.255s", path, e->d_name);
        if (lstat(full, &sb) || !(S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode)))
            continue;
        int known = 0;
        if (S_ISDIR(sb.st_mode)) {
            for (size_t i = 1; i < s->ndirs && !known; i++)
                known = s->dirs[i].known && s->dirs[i].dev == (uint64_t)sb.st_dev &&
                        s->dirs[i].ino == (uint64_t)sb.st_ino;
        } else {
            for (size_t i = 1; i < s->nfiles && !known; i++)
                known = s->files[i].known && s->files[i].dev == (uint64_t)sb.st_dev &&
                        s->files[i].ino == (uint64_t)sb.st_ino;
        }
        if (!known && last && did && last->r.id == did &&
            last->r.type == (S_ISDIR(sb.st_mode) ? CUT_MKDIR : CUT_CREATE) && last->plen == strlen(e->d_name) &&
            !memcmp(last->p, e->d_name, last->plen))
            known = 1;
        if (!known) {
            snprintf(why, wlen, CRASH_CUT_UNSEEN ": %.120s: a %s that no journaled call made", sub,
                     S_ISDIR(sb.st_mode) ? "directory" : "file");
            bad = 1;
        } else if (S_ISDIR(sb.st_mode)) {
            bad = check_names(dir, sub, s, why, wlen, depth + 1);
        }
    }
    closedir(d);
    return bad;
}

/* The check of unseen writes, at the kill, before anything is rolled
 * back: every tracked file but the engine's shared memory holds what the
 * journaled calls left in it, and nothing below dir is unknown to the
 * journal.  0; 1 with why filled; -errno. */
static int check_unseen(const char *dir, const char *jdir, struct cut_state *s, struct crash_cut_stats *st,
                        char *why, size_t wlen)
{
    size_t cap = 256 * CUT_BLOCK;
    unsigned char *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    int rc = 0;
    for (size_t id = 1; id < s->nfiles && !rc; id++) {
        struct file_state *f = &s->files[id];
        char what[200], name[4200];
        if (!f->known || f->shared || !f->hashed)
            continue;
        rc = check_file(jdir, id, f, buf, cap, st, what, sizeof what);
        if (rc != 1)
            continue;
        if (name_of(dir, "", f->dev, f->ino, name, sizeof name, 0))
            snprintf(name, sizeof name, "a file since unlinked (f%zu of the journal)", id);
        snprintf(why, wlen, CRASH_CUT_UNSEEN ": %.120s%s: %s", name,
                 f->mapped ? " (mapped shared and writable)" : "", what);
    }
    free(buf);
    if (!rc)
        rc = check_names(dir, "", s, why, wlen, 0);
    st->unseen = rc == 1;
    return rc;
}

int crash_cut_rollback(const char *dir, const char *jdir, int uring, struct crash_cut_stats *st, char *why,
                       size_t wlen)
{
    char path[4400];
    memset(st, 0, sizeof *st);
    snprintf(path, sizeof path, "%s/%s", jdir, CUT_JOURNAL_NAME);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb)) {
        snprintf(why, wlen, "the undo journal %.200s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t size = (size_t)sb.st_size;
    unsigned char *buf = malloc(size ? size : 1);
    size_t got = buf ? ut_read_full(fd, buf, size) : 0;
    close(fd);
    if (!buf || got != size) {
        snprintf(why, wlen, "the undo journal %.200s: %s", path, buf ? "short read" : "out of memory");
        free(buf);
        return -1;
    }
    struct cut_state s;
    memset(&s, 0, sizeof s);
    int rc = parse(buf, size, &s, st, why, wlen);
    if (rc < 0)
        snprintf(why, wlen, "the undo journal %.200s is not what the committing process wrote: %s", path,
                 strerror(-rc));
    if (!rc && (rc = check_unseen(dir, jdir, &s, st, why, wlen)) < 0)
        snprintf(why, wlen, "the cut could not read a file to check it: %s", strerror(-rc));
    if (!rc && uring) {
        snprintf(why, wlen, "the engine made a call the cut cannot model: io_uring (its writes pass no "
                            "interposed call)");
        rc = 1;
    }
    if (!rc && (rc = restore_files(jdir, &s, st)) != 0)
        snprintf(why, wlen, "the cut could not restore a file's synced state: %s", strerror(-rc));
    if (!rc && (rc = undo_names(dir, jdir, &s, st)) != 0)
        snprintf(why, wlen, "the cut could not undo a change of a name: %s", strerror(-rc));
    state_free(&s);
    free(buf);
    return rc ? -1 : 0;
}

int crash_cut_uses_uring(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        char link_path[320], target[64];
        snprintf(link_path, sizeof link_path, "%s/%s", path, e->d_name);
        ssize_t n = readlink(link_path, target, sizeof target - 1);
        if (n > 0) {
            target[n] = 0;
            found = strcmp(target, "anon_inode:[io_uring]") == 0;
        }
    }
    closedir(d);
    return found;
}

int crash_cut_check(const struct crash_config *c, char *why, size_t len)
{
    if (c->drv == &bench_driver_commitlab && c->run.sync == CL_SYNC_URING) {
        snprintf(why, len, "--sync uring under --mode cut: commitlab's uring policy writes its log through io_uring, "
                           "which the cut's interposed calls cannot see");
        return 1;
    }
    if (!strcmp(c->drv->name, "lmdb") && c->knobs && c->knobs->given[K_LMDB_FLAGS] &&
        (c->knobs->lmdb_flags & LMDB_F_WRITEMAP)) {
        snprintf(why, len, "--lmdb-flags writemap under --mode cut: MDB_WRITEMAP writes the data through a shared "
                           "writable mapping, which the cut cannot see");
        return 1;
    }
    return 0;
}
