/*
 * crash_cut.c -- the power failure of `commitlab crash --mode cut`, made
 * after the kill: the database directory rolled back to the state its
 * files and names had at their last syncs, from the undo journal the
 * committing child kept (bench/harness/cut_journal.c; the format:
 * cut_journal.h).  crash_kill.c runs the child, kills it, calls this, and
 * then recovers and checks as it does for a kill.
 *
 * The journal is read from its start to its first record that is not
 * whole (the kill may cut the last one off; the call it describes never
 * ran).  Forward, per file: the undo records since the file's last sync
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
 * What the journal says the child met and the cut cannot model (a call,
 * the journal's bound) is returned as the failure, and nothing is rolled
 * back: such a run is never checked as if it had been cut.
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
    struct extent *ext;
    size_t n, cap;
};

struct dir_state {
    int known;
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
    for (size_t i = 0; i < s->nfiles; i++)
        free(s->files[i].ext);
    free(s->files);
    free(s->dirs);
    free(s->ops);
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
        if (r.magic != CUT_MAGIC || r.len < sizeof r || r.len > size - off)
            break;
        uint64_t h = r.hash;
        r.hash = 0;
        uint64_t want = cut_hash(&r, sizeof r, CUT_HASH_SEED);
        want = cut_hash(buf + off + sizeof r, r.len - sizeof r, want);
        if (want != h)
            break;
        const unsigned char *p = buf + off + sizeof r;
        size_t plen = r.len - sizeof r;
        off += r.len;
        st->records++;
        switch (r.type) {
        case CUT_FILE:
            if (grow((void **)&s->files, &s->nfiles, (size_t)r.id + 1, sizeof *s->files))
                return -ENOMEM;
            s->files[r.id] = (struct file_state){.known = 1, .dev = r.a, .ino = r.b, .synced = r.c};
            break;
        case CUT_DIR:
            if (grow((void **)&s->dirs, &s->ndirs, (size_t)r.id + 1, sizeof *s->dirs))
                return -ENOMEM;
            s->dirs[r.id] = (struct dir_state){.known = 1, .rel = (const char *)p, .rel_len = plen};
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
                f->synced = r.b;
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
        case CUT_MAPPED:
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

int crash_cut_rollback(const char *dir, const char *jdir, struct crash_cut_stats *st, char *why, size_t wlen)
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
    if (c->drv == &bench_driver_commitlab && c->sync == CL_SYNC_URING) {
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
