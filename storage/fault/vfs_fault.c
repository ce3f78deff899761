/*
 * vfs_fault.c -- the fault-injecting file layer (contract in vfs_fault.h).
 *
 * Owns, under one mutex (every operation is serialised by it):
 *   - a "file state" per path that has open handles or unsynced mutations.
 *     Several handles on one path share it.  Its pending list holds every
 *     write, truncate and fallocate since the file's last successful sync,
 *     in order, each with its undo information (the bytes it replaced, read
 *     from the base file just before the mutation, and the size before) and,
 *     for writes, the new bytes so a kept write can be applied again;
 *   - one global, ordered list of namespace changes (create, rename, unlink)
 *     not yet made durable by sync_dir of their directory.  An unlink or an
 *     overwriting rename saves the victim's whole content and pending list,
 *     so the change can be undone;
 *   - the arming of injected faults and the operation counter.
 *
 * Invariants:
 *   I1. Undoing a file's pending list in reverse order yields exactly the
 *       content the file had at its last successful sync.
 *   I2. A successful fsync/fdatasync (or O_DSYNC / RWF_DSYNC write) marks pending
 *       entries durable; a list with only durable entries is freed.  Entries
 *       doomed by a failed sync are never freed by a later sync (fsyncgate):
 *       the list is kept, with the entries synced after them marked durable,
 *       so a crash can take out the doomed ones and keep the rest.
 *   I3. Undoing namespace changes in reverse order yields the namespace of
 *       the last directory syncs; file states follow their names.
 *   I4. After a crash every operation returns -EIO without touching disk;
 *       close still frees the handle.
 *
 * Crash (do_crash): first the namespace -- the changes a model discards
 * are undone newest first (so files come back with their saved content and
 * pending lists; a directory whose mkdir is undone goes with everything in
 * it) -- then the content: each surviving file state is rolled back to its
 * synced content (undo newest first) and the writes the model keeps are
 * applied again, oldest first, whole or as any subset of their 512-byte
 * sectors.  A crash armed to fire at a write fires during it: the write
 * lands unsynced (even an O_DSYNC or RWF_DSYNC write, which had not
 * returned) and the model decides its fate with the rest.  Random choices
 * come from a splitmix64 seeded by the caller, so a seed replays exactly.
 *
 * Not modelled: a rename across directories is durable once both
 * directories are synced; data written through a handle after its file was
 * unlinked or replaced is not tracked.
 *
 * Rings: each chain, when submitted, either runs at once through the table
 * above or is held back and runs later -- when a reap finds nothing else
 * finished, at random otherwise, or at close -- so a chain submitted later
 * can complete, sync included, before an earlier one has written anything
 * (io_uring does not order independent chains).  Completions are reported
 * in an order shuffled by a splitmix64 of the ring seed, under the ring's
 * own mutex (never held while the layer's mutex is taken).
 *
 * Callers: tests and the crash harness build it over vfs_posix(); the engine
 * sees only the struct vfs table.
 */
#include "clock.h"
#include "vfs_fault.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define SECTOR 512u

enum pend_kind { PEND_WRITE = 0, PEND_TRUNC, PEND_ALLOC };

struct pend {
    enum pend_kind kind;
    int doomed;        /* a sync that should have saved it failed: always lost */
    int durable;       /* synced, but kept in the list for undo order (I2) */
    uint64_t off, len; /* WRITE/ALLOC: the range; TRUNC: len is the new size */
    uint64_t old_size; /* file size before the mutation */
    uint8_t *old;      /* WRITE: bytes at [off, off+old_len); TRUNC: [len, old_size) */
    size_t old_len;
    uint8_t *data;     /* WRITE: the new bytes */
};

struct plist {
    struct pend *v;
    size_t n, cap;
};

struct fstate {
    char *path;            /* normalised; valid while attached */
    int attached;          /* names a live path; else orphaned by unlink/replace */
    int refs;              /* open handles */
    struct plist pl;
    struct vfs_file *aux;  /* plain base handle for undo reads and restores */
    struct fstate *next;
};

enum dc_kind { DC_CREATE = 0, DC_UNLINK, DC_RENAME, DC_MKDIR };

struct dchange {
    enum dc_kind kind;
    char *path;           /* CREATE/UNLINK: the name; RENAME: the target */
    char *from;           /* RENAME: the source */
    char *dir[2];         /* directories that must be synced (1 or 2) */
    int synced[2];
    int ndir;
    int had_victim;       /* UNLINK always; RENAME when it replaced a file */
    uint8_t *content;     /* the victim's content when the change was made */
    size_t content_len;
    struct plist saved;   /* the victim's pending list at that moment */
    int revert;           /* crash scratch */
};

struct fhandle {
    struct vfs_file base;
    struct vfs_file *lower;
    struct fstate *st;
    struct fhandle *prev, *next;
};

struct fault_vfs {
    struct vfs base;
    struct vfs *lower;
    pthread_mutex_t mu;
    uint64_t ops;
    int dead;
    uint64_t crash_left;  /* 0: not armed */
    enum vfs_crash_model crash_model;
    uint64_t crash_seed;
    uint64_t kill_left;   /* 0: not armed */
    int lying;            /* file syncs succeed without making anything durable */
    uint64_t fail_left[VFS_FAULT_NOPS]; /* per kind of call: 0 not armed */
    int fail_err[VFS_FAULT_NOPS];
    uint64_t short_left;  /* ring writes until the armed short write; 0: none */
    uint64_t ring_seed, rings_opened;
    struct fstate *files;
    struct dchange **dc;
    size_t ndc, capdc;
    struct fhandle *handles;
};

static const struct vfs_ops fault_ops;

static inline struct fault_vfs *FV(struct vfs *v) { return (struct fault_vfs *)v; }

static uint64_t sm64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- paths ------------------------------------------------------------- */

/* Collapses "//", drops "./" components and a trailing '/'. */
static char *norm_path(const char *in)
{
    size_t n = strlen(in);
    char *out = malloc(n + 2);
    size_t o = 0;
    const char *p = in;

    if (!out)
        return NULL;
    if (*p == '/')
        out[o++] = '/';
    while (*p) {
        while (*p == '/')
            p++;
        const char *e = p;
        while (*e && *e != '/')
            e++;
        size_t len = (size_t)(e - p);
        if (len == 0)
            break;
        if (!(len == 1 && p[0] == '.')) {
            if (o && out[o - 1] != '/')
                out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
        }
        p = e;
    }
    if (o == 0)
        out[o++] = '.';
    out[o] = 0;
    return out;
}

/* The directory of a normalised path. */
static char *dir_of(const char *path)
{
    const char *s = strrchr(path, '/');
    if (!s)
        return strdup(".");
    if (s == path)
        return strdup("/");
    return strndup(path, (size_t)(s - path));
}

/* ---- pending lists ----------------------------------------------------- */

static void pend_free(struct pend *p)
{
    free(p->old);
    free(p->data);
}

static void plist_clear(struct plist *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        pend_free(&pl->v[i]);
    free(pl->v);
    memset(pl, 0, sizeof *pl);
}

static struct pend *plist_add(struct plist *pl)
{
    if (pl->n == pl->cap) {
        size_t cap = pl->cap ? pl->cap * 2 : 8;
        struct pend *v = realloc(pl->v, cap * sizeof *v);
        if (!v)
            return NULL;
        pl->v = v;
        pl->cap = cap;
    }
    struct pend *p = &pl->v[pl->n++];
    memset(p, 0, sizeof *p);
    return p;
}

/* I2: frees the list once every entry is durable. */
static void plist_compact(struct plist *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        if (!pl->v[i].durable)
            return;
    plist_clear(pl);
}

static void plist_sync(struct plist *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        if (!pl->v[i].doomed)
            pl->v[i].durable = 1;
    plist_compact(pl);
}

static void plist_doom(struct plist *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        if (!pl->v[i].durable)
            pl->v[i].doomed = 1;
}

/* ---- file states ------------------------------------------------------- */

static struct fstate *fs_find(struct fault_vfs *fv, const char *path)
{
    for (struct fstate *s = fv->files; s; s = s->next)
        if (s->attached && !strcmp(s->path, path))
            return s;
    return NULL;
}

static struct fstate *fs_get(struct fault_vfs *fv, const char *path)
{
    struct fstate *s = fs_find(fv, path);
    if (s)
        return s;
    s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->path = strdup(path);
    if (!s->path) {
        free(s);
        return NULL;
    }
    s->attached = 1;
    s->next = fv->files;
    fv->files = s;
    return s;
}

static void fs_close_aux(struct fault_vfs *fv, struct fstate *s)
{
    if (s->aux) {
        fv->lower->ops->close(s->aux);
        s->aux = NULL;
    }
}

/* Frees s when nothing refers to it any more. */
static void fs_maybe_free(struct fault_vfs *fv, struct fstate *s)
{
    if (s->refs > 0 || (s->attached && s->pl.n > 0))
        return;
    for (struct fstate **pp = &fv->files; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    fs_close_aux(fv, s);
    plist_clear(&s->pl);
    free(s->path);
    free(s);
}

/* The file at s->path is gone (unlinked, replaced or never created): the
 * state stops tracking; its pending list moves to *keep if given. */
static void fs_detach(struct fault_vfs *fv, struct fstate *s, struct plist *keep)
{
    if (keep) {
        *keep = s->pl;
        memset(&s->pl, 0, sizeof s->pl);
    } else {
        plist_clear(&s->pl);
    }
    s->attached = 0;
    fs_close_aux(fv, s);
    fs_maybe_free(fv, s);
}

static int fs_aux(struct fault_vfs *fv, struct fstate *s)
{
    if (s->aux)
        return 0;
    return fv->lower->ops->open(fv->lower, s->path, 0, VFS_CLASS_OTHER, &s->aux);
}

static int read_range(struct vfs_file *f, uint64_t off, size_t len, uint8_t **out)
{
    size_t got = 0;
    int rc;
    *out = NULL;
    if (len == 0)
        return 0;
    *out = malloc(len);
    if (!*out)
        return -ENOMEM;
    rc = f->vfs->ops->pread(f, *out, len, off, &got);
    if (!rc && got != len)
        rc = -EIO;
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* Reads the whole file at path through base (for unlink/rename victims). */
static int read_whole(struct vfs *base, const char *path, uint8_t **buf, size_t *len)
{
    struct vfs_file *f;
    uint64_t size;
    int rc = base->ops->open(base, path, VFS_O_RDONLY, VFS_CLASS_OTHER, &f);
    *buf = NULL;
    *len = 0;
    if (rc)
        return rc;
    rc = base->ops->size(f, &size);
    if (!rc) {
        rc = read_range(f, 0, (size_t)size, buf);
        if (!rc)
            *len = (size_t)size;
    }
    base->ops->close(f);
    return rc;
}

static int write_whole(struct vfs *base, const char *path, const uint8_t *buf, size_t len)
{
    struct vfs_file *f;
    int rc = base->ops->open(base, path, VFS_O_CREATE | VFS_O_TRUNC, VFS_CLASS_OTHER, &f);
    if (rc)
        return rc;
    if (len)
        rc = base->ops->pwrite(f, buf, len, 0);
    int crc = base->ops->close(f);
    return rc ? rc : crc;
}

/* Records a mutation of s before it is made: size before and bytes that
 * [off, off+len) replaces (WRITE) or that a shrink cuts off (TRUNC). */
static struct pend *record(struct fault_vfs *fv, struct fstate *s, enum pend_kind kind,
                           const void *buf, uint64_t off, uint64_t len, int *rc)
{
    uint64_t size;
    struct pend *p;

    *rc = fs_aux(fv, s);
    if (*rc)
        return NULL;
    *rc = fv->lower->ops->size(s->aux, &size);
    if (*rc)
        return NULL;
    p = plist_add(&s->pl);
    if (!p) {
        *rc = -ENOMEM;
        return NULL;
    }
    p->kind = kind;
    p->off = off;
    p->len = len;
    p->old_size = size;
    if (kind == PEND_WRITE) {
        if (off < size) {
            uint64_t n = size - off < len ? size - off : len;
            *rc = read_range(s->aux, off, (size_t)n, &p->old);
            p->old_len = (size_t)n;
        }
        if (!*rc && len) {
            p->data = malloc((size_t)len);
            if (!p->data)
                *rc = -ENOMEM;
            else
                memcpy(p->data, buf, (size_t)len);
        }
    } else if (kind == PEND_TRUNC && len < size) {
        *rc = read_range(s->aux, len, (size_t)(size - len), &p->old);
        p->old_len = (size_t)(size - len);
    }
    if (*rc) {
        pend_free(p);
        s->pl.n--;
        return NULL;
    }
    return p;
}

/* ---- namespace changes ------------------------------------------------- */

static void dc_free(struct dchange *d)
{
    free(d->path);
    free(d->from);
    free(d->dir[0]);
    free(d->dir[1]);
    free(d->content);
    plist_clear(&d->saved);
    free(d);
}

static struct dchange *dc_add(struct fault_vfs *fv, enum dc_kind kind, const char *path,
                              const char *from)
{
    struct dchange *d;
    if (fv->ndc == fv->capdc) {
        size_t cap = fv->capdc ? fv->capdc * 2 : 16;
        struct dchange **v = realloc(fv->dc, cap * sizeof *v);
        if (!v)
            return NULL;
        fv->dc = v;
        fv->capdc = cap;
    }
    d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->kind = kind;
    d->path = strdup(path);
    d->dir[0] = dir_of(path);
    d->ndir = 1;
    if (from) {
        d->from = strdup(from);
        d->dir[1] = dir_of(from);
        if (d->dir[1] && d->dir[0] && strcmp(d->dir[0], d->dir[1]))
            d->ndir = 2;
        if (!d->from || !d->dir[1]) {
            dc_free(d);
            return NULL;
        }
    }
    if (!d->path || !d->dir[0]) {
        dc_free(d);
        return NULL;
    }
    fv->dc[fv->ndc++] = d;
    return d;
}

/* ---- crash ------------------------------------------------------------- */

static void keep_err(int *first, int rc)
{
    if (rc && !*first)
        *first = rc;
}

/* Attaches a pending list to path after the file came back. */
static void reattach(struct fault_vfs *fv, const char *path, struct plist *saved)
{
    struct fstate *s;
    if (saved->n == 0)
        return;
    s = fs_get(fv, path);
    if (!s) {
        plist_clear(saved);
        return;
    }
    plist_clear(&s->pl);
    s->pl = *saved;
    memset(saved, 0, sizeof *saved);
}

struct names {
    char **v;
    size_t n, cap;
};

static int collect(void *arg, const char *name)
{
    struct names *ns = arg;
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 32;
        char **v = realloc(ns->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        ns->v = v;
        ns->cap = cap;
    }
    if (!(ns->v[ns->n] = strdup(name)))
        return -ENOMEM;
    ns->n++;
    return 0;
}

/* Removes dir and everything in it (an mkdir a crash undoes). */
static int remove_tree(struct vfs *b, const char *dir)
{
    struct names ns = {0};
    int rc = b->ops->list(b, dir, collect, &ns);
    if (rc == -ENOENT)
        rc = 0;
    for (size_t i = 0; i < ns.n; i++) {
        char *p = NULL;
        if (asprintf(&p, "%s/%s", dir, ns.v[i]) < 0) {
            keep_err(&rc, -ENOMEM);
        } else {
            int r = b->ops->unlink(b, p);
            if (r == -EISDIR || r == -EPERM)
                r = remove_tree(b, p);
            keep_err(&rc, r);
        }
        free(p);
        free(ns.v[i]);
    }
    free(ns.v);
    int r = b->ops->rmdir ? b->ops->rmdir(b, dir) : -ENOSYS;
    if (r != -ENOENT)
        keep_err(&rc, r);
    return rc;
}

/* The files under dir vanish with it: their states stop tracking. */
static void detach_under(struct fault_vfs *fv, const char *dir)
{
    size_t n = strlen(dir);
    for (struct fstate *s = fv->files, *nx; s; s = nx) {
        nx = s->next;
        if (s->attached && !strncmp(s->path, dir, n) && s->path[n] == '/')
            fs_detach(fv, s, NULL);
    }
}

static int dc_undo(struct fault_vfs *fv, struct dchange *d)
{
    struct vfs *b = fv->lower;
    struct fstate *s;
    int rc = 0, r;

    switch (d->kind) {
    case DC_CREATE:
        if ((s = fs_find(fv, d->path)))
            fs_detach(fv, s, NULL);
        r = b->ops->unlink(b, d->path);
        if (r != -ENOENT)
            keep_err(&rc, r);
        break;
    case DC_UNLINK:
        if ((s = fs_find(fv, d->path)))
            fs_detach(fv, s, NULL);
        keep_err(&rc, write_whole(b, d->path, d->content, d->content_len));
        reattach(fv, d->path, &d->saved);
        break;
    case DC_MKDIR:
        detach_under(fv, d->path);
        keep_err(&rc, remove_tree(b, d->path));
        break;
    case DC_RENAME:
        if ((s = fs_find(fv, d->from)))
            fs_detach(fv, s, NULL);
        keep_err(&rc, b->ops->rename(b, d->path, d->from));
        if ((s = fs_find(fv, d->path))) {
            char *np = strdup(d->from);
            if (np) {
                free(s->path);
                s->path = np;
            } else {
                fs_detach(fv, s, NULL);
            }
        }
        if (d->had_victim) {
            keep_err(&rc, write_whole(b, d->path, d->content, d->content_len));
            reattach(fv, d->path, &d->saved);
        }
        break;
    }
    return rc;
}

static int pend_undo(struct fault_vfs *fv, struct vfs_file *f, const struct pend *p)
{
    const struct vfs_ops *o = fv->lower->ops;
    int rc = 0;
    switch (p->kind) {
    case PEND_WRITE:
        if (p->old_len)
            keep_err(&rc, o->pwrite(f, p->old, p->old_len, p->off));
        keep_err(&rc, o->truncate(f, p->old_size));
        break;
    case PEND_TRUNC:
        keep_err(&rc, o->truncate(f, p->old_size));
        if (p->old_len)
            keep_err(&rc, o->pwrite(f, p->old, p->old_len, p->len));
        break;
    case PEND_ALLOC:
        keep_err(&rc, o->truncate(f, p->old_size));
        break;
    }
    return rc;
}

/* What survives of a pending mutation: KEEP_NONE, KEEP_ALL, or (a write)
 * a subset of its sectors drawn from the returned seed. */
#define KEEP_NONE 0u
#define KEEP_ALL UINT64_MAX

static uint64_t pend_decide(enum vfs_crash_model m, const struct pend *p, uint64_t *rng)
{
    uint64_t whole = KEEP_ALL;
    if (p->doomed)
        return 0;
    if (p->durable)
        return whole;
    switch (m) {
    case VFS_CRASH_DROP:
        return 0;
    case VFS_CRASH_REORDER:
        return (sm64(rng) & 1) ? whole : 0;
    case VFS_CRASH_TORN: {
        uint64_t r = sm64(rng) % 3;
        if (r == 0)
            return whole;
        if (r == 1 || p->kind != PEND_WRITE)
            return KEEP_NONE;
        uint64_t seed = sm64(rng) | 1;
        return seed == KEEP_ALL ? seed - 2 : seed; /* any subset of the sectors */
    }
    }
    return KEEP_NONE;
}

/* Writes the sectors of p that a subset seed keeps: each piece of
 * [off, off+len) between 512-byte boundaries independently, so a write may
 * keep later sectors and lose earlier ones. */
static int write_subset(struct fault_vfs *fv, struct vfs_file *f, const struct pend *p, uint64_t seed)
{
    const struct vfs_ops *o = fv->lower->ops;
    uint64_t a = p->off, end = p->off + p->len;
    int rc = 0;
    while (a < end) {
        uint64_t b = (a / SECTOR + 1) * SECTOR;
        if (b > end)
            b = end;
        if (sm64(&seed) & 1)
            keep_err(&rc, o->pwrite(f, p->data + (a - p->off), (size_t)(b - a), a));
        a = b;
    }
    return rc;
}

static int pend_redo(struct fault_vfs *fv, struct vfs_file *f, const struct pend *p, uint64_t keep)
{
    const struct vfs_ops *o = fv->lower->ops;
    switch (p->kind) {
    case PEND_WRITE:
        if (keep == KEEP_ALL)
            return p->len ? o->pwrite(f, p->data, (size_t)p->len, p->off) : 0;
        return keep ? write_subset(fv, f, p, keep) : 0;
    case PEND_TRUNC:
        return o->truncate(f, p->len);
    case PEND_ALLOC:
        return o->fallocate(f, p->off, p->len);
    }
    return 0;
}

static int fs_crash(struct fault_vfs *fv, struct fstate *s, enum vfs_crash_model m, uint64_t *rng)
{
    int rc = 0;
    uint64_t *keep;

    if (s->pl.n == 0)
        return 0;
    keep = calloc(s->pl.n, sizeof *keep);
    if (!keep)
        return -ENOMEM;
    for (size_t i = 0; i < s->pl.n; i++)
        keep[i] = pend_decide(m, &s->pl.v[i], rng);
    rc = fs_aux(fv, s);
    if (!rc) {
        for (size_t i = s->pl.n; i-- > 0;)
            keep_err(&rc, pend_undo(fv, s->aux, &s->pl.v[i]));
        for (size_t i = 0; i < s->pl.n; i++)
            if (keep[i])
                keep_err(&rc, pend_redo(fv, s->aux, &s->pl.v[i], keep[i]));
    }
    free(keep);
    return rc;
}

static int do_crash(struct fault_vfs *fv, enum vfs_crash_model m, uint64_t seed)
{
    uint64_t rng = seed;
    int rc = 0;

    /* (1) namespace: choose which unsynced changes are undone */
    for (size_t i = 0; i < fv->ndc; i++)
        fv->dc[i]->revert = (m == VFS_CRASH_DROP);
    if (m != VFS_CRASH_DROP) {
        /* per directory (of the target name), a prefix survives */
        for (size_t i = 0; i < fv->ndc; i++) {
            const char *dir = fv->dc[i]->dir[0];
            size_t count = 0, seen = 0, keep;
            int first = 1;
            for (size_t j = 0; j < i && first; j++)
                if (!strcmp(fv->dc[j]->dir[0], dir))
                    first = 0;
            if (!first)
                continue;
            for (size_t j = i; j < fv->ndc; j++)
                count += !strcmp(fv->dc[j]->dir[0], dir);
            keep = (size_t)(sm64(&rng) % (count + 1));
            for (size_t j = i; j < fv->ndc; j++)
                if (!strcmp(fv->dc[j]->dir[0], dir))
                    fv->dc[j]->revert = seen++ >= keep;
        }
    }
    for (size_t i = fv->ndc; i-- > 0;)
        if (fv->dc[i]->revert)
            keep_err(&rc, dc_undo(fv, fv->dc[i]));

    /* (2) content, in a stable order: oldest state first */
    size_t nfs = 0;
    for (struct fstate *s = fv->files; s; s = s->next)
        nfs++;
    struct fstate **order = calloc(nfs ? nfs : 1, sizeof *order);
    if (!order) {
        keep_err(&rc, -ENOMEM);
    } else {
        size_t k = nfs;
        for (struct fstate *s = fv->files; s; s = s->next)
            order[--k] = s;
        for (size_t i = 0; i < nfs; i++)
            if (order[i]->attached)
                keep_err(&rc, fs_crash(fv, order[i], m, &rng));
        free(order);
    }

    /* (3) dead: drop everything the crash consumed */
    for (size_t i = 0; i < fv->ndc; i++)
        dc_free(fv->dc[i]);
    fv->ndc = 0;
    for (struct fstate *s = fv->files, *nx; s; s = nx) {
        nx = s->next;
        s->attached = 0;
        plist_clear(&s->pl);
        fs_close_aux(fv, s);
        fs_maybe_free(fv, s);
    }
    fv->dead = 1;
    fv->crash_left = 0;
    return rc;
}

/* ---- operation prologue ------------------------------------------------ */

#define OP_CRASH_DURING 1

/* Locks, counts the operation, fires an armed kill or crash.  Returns
 * -EIO when the layer is (now) dead.  For a write (writing = 1) a crash
 * that fires here returns OP_CRASH_DURING instead: the caller makes the
 * write, unsynced, and then crashes.  The caller unlocks in every case. */
static int op_begin_ex(struct fault_vfs *fv, int writing)
{
    pthread_mutex_lock(&fv->mu);
    fv->ops++;
    if (fv->dead)
        return -EIO;
    if (fv->kill_left && --fv->kill_left == 0) {
        fv->dead = 1; /* a process crash: nothing is undone */
        return -EIO;
    }
    if (fv->crash_left && --fv->crash_left == 0) {
        if (writing)
            return OP_CRASH_DURING;
        do_crash(fv, fv->crash_model, fv->crash_seed);
        return -EIO;
    }
    return 0;
}

static int op_begin(struct fault_vfs *fv) { return op_begin_ex(fv, 0); }

/* The injected error for this call of kind op, or 0. */
static int injected(struct fault_vfs *fv, enum vfs_fault_op op)
{
    if (fv->fail_left[op] && --fv->fail_left[op] == 0)
        return fv->fail_err[op];
    return 0;
}

/* 1 when this sync is the one armed to fail. */
static int sync_fails(struct fault_vfs *fv) { return injected(fv, VFS_FAULT_SYNC) != 0; }

/* ---- the table --------------------------------------------------------- */

static int f_open(struct vfs *v, const char *path, unsigned flags, enum vfs_class cls,
                  struct vfs_file **out)
{
    struct fault_vfs *fv = FV(v);
    struct fhandle *h = NULL;
    struct fstate *s = NULL;
    char *np = NULL;
    int rc, existed = 1;

    *out = NULL;
    rc = op_begin(fv);
    if (!rc)
        rc = injected(fv, VFS_FAULT_OPEN);
    if (rc)
        goto out;
    np = norm_path(path);
    h = calloc(1, sizeof *h);
    if (!np || !h) {
        rc = -ENOMEM;
        goto out;
    }
    if (flags & VFS_O_CREATE) {
        existed = fv->lower->ops->exists(fv->lower, np);
        if (existed < 0) {
            rc = existed;
            goto out;
        }
    }
    s = fs_get(fv, np);
    if (!s) {
        rc = -ENOMEM;
        goto out;
    }
    s->refs++;
    rc = fv->lower->ops->open(fv->lower, np, flags & ~VFS_O_TRUNC, cls, &h->lower);
    if (rc) {
        /* O_CREAT|O_DIRECT may create the name and then refuse the flag */
        if (!existed && fv->lower->ops->exists(fv->lower, np) == 1)
            dc_add(fv, DC_CREATE, np, NULL);
        goto out;
    }
    if (!existed && !dc_add(fv, DC_CREATE, np, NULL)) {
        rc = -ENOMEM;
        goto out;
    }
    if ((flags & VFS_O_TRUNC) && !(flags & VFS_O_RDONLY)) {
        uint64_t size = 0;
        rc = fv->lower->ops->size(h->lower, &size);
        if (!rc && size > 0) {
            if (!record(fv, s, PEND_TRUNC, NULL, 0, 0, &rc))
                goto out;
            rc = fv->lower->ops->truncate(h->lower, 0);
        }
        if (rc)
            goto out;
    }
    h->base.vfs = v;
    h->base.cls = cls;
    h->base.flags = flags;
    h->st = s;
    h->next = fv->handles;
    if (fv->handles)
        fv->handles->prev = h;
    fv->handles = h;
    *out = &h->base;
    h = NULL;
    s = NULL;
out:
    if (h) {
        if (h->lower)
            fv->lower->ops->close(h->lower);
        free(h);
    }
    if (s) {
        s->refs--;
        fs_maybe_free(fv, s);
    }
    free(np);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

static int f_close(struct vfs_file *f)
{
    struct fhandle *h = (struct fhandle *)f;
    struct fault_vfs *fv = FV(f->vfs);
    int rc = op_begin(fv);
    int crc = fv->lower->ops->close(h->lower); /* frees the fd; no data moves */

    if (!rc)
        rc = crc;
    if (h->prev)
        h->prev->next = h->next;
    else
        fv->handles = h->next;
    if (h->next)
        h->next->prev = h->prev;
    h->st->refs--;
    fs_maybe_free(fv, h->st);
    free(h);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

static int f_pread(struct vfs_file *f, void *buf, size_t len, uint64_t off, size_t *nread)
{
    struct fhandle *h = (struct fhandle *)f;
    struct fault_vfs *fv = FV(f->vfs);
    size_t n = 0;
    int rc = op_begin(fv);
    if (!rc)
        rc = injected(fv, VFS_FAULT_READ);
    if (!rc) {
        rc = fv->lower->ops->pread(h->lower, buf, len, off, &n);
        VFS_COUNT(f->vfs, f->cls, reads, 1);
        VFS_COUNT(f->vfs, f->cls, read_bytes, n);
    }
    if (nread)
        *nread = n;
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

/* A write of len bytes of a request for asked bytes (a ring's short write
 * writes less than it was asked; O_DIRECT's alignment applies to what was
 * asked). */
static int pwrite_part(struct vfs_file *f, const void *buf, size_t len, uint64_t off, size_t asked)
{
    struct fhandle *h = (struct fhandle *)f;
    struct fault_vfs *fv = FV(f->vfs);
    struct fstate *s = h->st;
    struct pend *p = NULL;
    int dsync = vfs_write_is_sync(f), fail = 0, during = 0; /* O_DSYNC or RWF_DSYNC: a sync of its bytes */
    int rc = op_begin_ex(fv, 1);

    if (rc == OP_CRASH_DURING) {
        during = 1; /* the crash comes while this write is in flight */
        rc = 0;
    }
    if (rc)
        goto out;
    if (!during && (rc = injected(fv, VFS_FAULT_WRITE)) != 0)
        goto out;
    /* O_DIRECT's rule, enforced here whatever the device would accept */
    if ((f->flags & VFS_O_DIRECT) && ((off | asked | (uintptr_t)buf) & (VFS_DIRECT_ALIGN - 1))) {
        rc = -EINVAL;
        goto out;
    }
    if (dsync && !during)
        fail = sync_fails(fv);
    if (s->attached && (!dsync || fail || during || fv->lying || s->pl.n > 0)) {
        /* An O_DSYNC write to a file with nothing pending needs no undo. */
        p = record(fv, s, PEND_WRITE, buf, off, len, &rc);
        if (!p)
            goto out;
    }
    rc = fv->lower->ops->pwrite(h->lower, buf, len, off);
    if (during) {
        do_crash(fv, fv->crash_model, fv->crash_seed); /* decides p's fate with the rest */
        rc = -EIO;
        goto out;
    }
    if (rc) {
        if (p)
            p->doomed = 1; /* possibly half written: never re-applied */
        goto out;
    }
    VFS_COUNT(f->vfs, f->cls, writes, 1);
    VFS_COUNT(f->vfs, f->cls, write_bytes, len);
    if (dsync) {
        if (fail) {
            plist_doom(&s->pl);
            rc = fv->fail_err[VFS_FAULT_SYNC];
        } else {
            VFS_COUNT(f->vfs, f->cls, dsync_writes, 1);
            if (p && !fv->lying) {
                p->durable = 1;
                plist_compact(&s->pl);
            }
        }
    }
out:
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

static int f_pwrite(struct vfs_file *f, const void *buf, size_t len, uint64_t off)
{
    return pwrite_part(f, buf, len, off, len);
}

static int f_sync(struct vfs_file *f, int data_only)
{
    struct fhandle *h = (struct fhandle *)f;
    struct fault_vfs *fv = FV(f->vfs);
    int rc = op_begin(fv);

    if (rc)
        goto out;
    if (sync_fails(fv)) {
        rc = fv->fail_err[VFS_FAULT_SYNC]; /* nothing reaches the disk */
    } else if (fv->lying) {
        goto out; /* success, and nothing is durable */
    } else {
        uint64_t t0 = cl_now_ns();
        rc = data_only ? fv->lower->ops->fdatasync(h->lower) : fv->lower->ops->fsync(h->lower);
        VFS_COUNT(f->vfs, f->cls, sync_ns, cl_now_ns() - t0);
        if (data_only)
            VFS_COUNT(f->vfs, f->cls, fdatasyncs, 1);
        else
            VFS_COUNT(f->vfs, f->cls, fsyncs, 1);
    }
    if (h->st->attached) {
        if (rc)
            plist_doom(&h->st->pl);
        else
            plist_sync(&h->st->pl);
    }
out:
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

static int f_fsync(struct vfs_file *f) { return f_sync(f, 0); }
static int f_fdatasync(struct vfs_file *f) { return f_sync(f, 1); }

static int f_fallocate(struct vfs_file *f, uint64_t off, uint64_t len)
{
    struct fhandle *h = (struct fhandle *)f;
    struct fault_vfs *fv = FV(f->vfs);
    int rc = op_begin(fv);
    if (!rc)
        rc = injected(fv, VFS_FAULT_FALLOCATE);
    if (!rc && h->st->attached && !record(fv, h->st, PEND_ALLOC, NULL, off, len, &rc))
        goto out;
    if (!rc)
        rc = fv->lower->ops->fallocate(h->lower, off, len);
out:
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

static int f_truncate(struct vfs_file *f, uint64_t size)
{
    struct fhandle *h = (struct fhandle *)f;
    struct fault_vfs *fv = FV(f->vfs);
    int rc = op_begin(fv);
    if (!rc)
        rc = injected(fv, VFS_FAULT_TRUNCATE);
    if (!rc && h->st->attached && !record(fv, h->st, PEND_TRUNC, NULL, 0, size, &rc))
        goto out;
    if (!rc)
        rc = fv->lower->ops->truncate(h->lower, size);
out:
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

static int f_size(struct vfs_file *f, uint64_t *size)
{
    struct fhandle *h = (struct fhandle *)f;
    struct fault_vfs *fv = FV(f->vfs);
    int rc = op_begin(fv);
    if (!rc)
        rc = fv->lower->ops->size(h->lower, size);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

/* The lower file's links: a question, not a change. */
static int f_links(struct vfs_file *f, uint64_t *n)
{
    struct fhandle *h = (struct fhandle *)f;
    struct fault_vfs *fv = FV(f->vfs);
    int rc = op_begin(fv);
    if (!rc)
        rc = vfs_links(h->lower, n);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

/* Advice about the page cache, not a change of content: nothing is
 * recorded, and the lower file is told. */
static int f_drop_cache(struct vfs_file *f)
{
    struct fhandle *h = (struct fhandle *)f;
    struct fault_vfs *fv = FV(f->vfs);
    int rc = op_begin(fv);
    if (!rc)
        rc = vfs_drop_cache(h->lower);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

/* Saves the file at path (content + pending list) into d as the victim. */
static int save_victim(struct fault_vfs *fv, struct dchange *d, const char *path)
{
    int rc = read_whole(fv->lower, path, &d->content, &d->content_len);
    if (rc)
        return rc;
    d->had_victim = 1;
    return 0;
}

static int f_rename(struct vfs *v, const char *from, const char *to)
{
    struct fault_vfs *fv = FV(v);
    char *nf = NULL, *nt = NULL;
    struct dchange *d = NULL;
    struct fstate *s;
    int rc = op_begin(fv), victim;

    if (!rc)
        rc = injected(fv, VFS_FAULT_RENAME);
    if (rc)
        goto out;
    nf = norm_path(from);
    nt = norm_path(to);
    if (!nf || !nt) {
        rc = -ENOMEM;
        goto out;
    }
    d = dc_add(fv, DC_RENAME, nt, nf);
    if (!d) {
        rc = -ENOMEM;
        goto out;
    }
    victim = fv->lower->ops->exists(fv->lower, nt);
    if (victim == 1 && strcmp(nf, nt)) {
        rc = save_victim(fv, d, nt);
        if (rc == -EISDIR)
            rc = 0; /* directories are not modelled */
        if (rc)
            goto undo;
    }
    rc = fv->lower->ops->rename(fv->lower, nf, nt);
    if (rc)
        goto undo;
    if (!strcmp(nf, nt)) {
        fv->ndc--;
        dc_free(d);
        goto out;
    }
    if ((s = fs_find(fv, nt)))
        fs_detach(fv, s, d->had_victim ? &d->saved : NULL);
    if ((s = fs_find(fv, nf))) {
        free(s->path);
        s->path = nt;
        nt = NULL;
    }
    goto out;
undo:
    fv->ndc--;
    dc_free(d);
out:
    free(nf);
    free(nt);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

static int f_unlink(struct vfs *v, const char *path)
{
    struct fault_vfs *fv = FV(v);
    char *np = NULL;
    struct dchange *d;
    struct fstate *s;
    int rc = op_begin(fv);

    if (!rc)
        rc = injected(fv, VFS_FAULT_UNLINK);
    if (rc)
        goto out;
    np = norm_path(path);
    if (!np) {
        rc = -ENOMEM;
        goto out;
    }
    d = dc_add(fv, DC_UNLINK, np, NULL);
    if (!d) {
        rc = -ENOMEM;
        goto out;
    }
    rc = save_victim(fv, d, np);
    if (!rc)
        rc = fv->lower->ops->unlink(fv->lower, np);
    if (rc) {
        fv->ndc--;
        dc_free(d);
        goto out;
    }
    if ((s = fs_find(fv, np)))
        fs_detach(fv, s, &d->saved);
out:
    free(np);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

/* A new directory is an entry of its parent: durable only once the parent
 * is synced; a crash may undo it, and with it everything inside. */
static int f_mkdir(struct vfs *v, const char *path)
{
    struct fault_vfs *fv = FV(v);
    char *np = NULL;
    int rc = op_begin(fv);
    if (!rc)
        rc = injected(fv, VFS_FAULT_MKDIR);
    if (!rc && !(np = norm_path(path)))
        rc = -ENOMEM;
    if (!rc)
        rc = fv->lower->ops->mkdir(fv->lower, np);
    if (!rc && !dc_add(fv, DC_MKDIR, np, NULL)) {
        fv->lower->ops->rmdir(fv->lower, np);
        rc = -ENOMEM;
    }
    free(np);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

static int f_rmdir(struct vfs *v, const char *path)
{
    struct fault_vfs *fv = FV(v);
    int rc = op_begin(fv);
    if (!rc)
        rc = fv->lower->ops->rmdir ? fv->lower->ops->rmdir(fv->lower, path) : -ENOSYS;
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

static int f_sync_dir(struct vfs *v, const char *dir)
{
    struct fault_vfs *fv = FV(v);
    char *nd = NULL;
    int rc = op_begin(fv);

    if (rc)
        goto out;
    nd = norm_path(dir);
    if (!nd) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = injected(fv, VFS_FAULT_SYNC_DIR)) != 0)
        goto out; /* nothing in the directory becomes durable */
    uint64_t t0 = cl_now_ns();
    rc = fv->lower->ops->sync_dir(fv->lower, nd);
    VFS_COUNT(v, VFS_CLASS_OTHER, sync_ns, cl_now_ns() - t0);
    VFS_COUNT(v, VFS_CLASS_OTHER, fsyncs, 1);
    if (rc)
        goto out;
    size_t o = 0;
    for (size_t i = 0; i < fv->ndc; i++) {
        struct dchange *d = fv->dc[i];
        int all = 1;
        for (int k = 0; k < d->ndir; k++) {
            if (!strcmp(d->dir[k], nd))
                d->synced[k] = 1;
            all &= d->synced[k];
        }
        if (all)
            dc_free(d);
        else
            fv->dc[o++] = d;
    }
    fv->ndc = o;
out:
    free(nd);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

/* Names are collected under the lock and handed to fn after it, so fn may
 * call back into this vfs. */
static int f_list(struct vfs *v, const char *dir, vfs_list_fn fn, void *arg)
{
    struct fault_vfs *fv = FV(v);
    struct names ns = {0};
    int rc = op_begin(fv);
    if (!rc)
        rc = fv->lower->ops->list(fv->lower, dir, collect, &ns);
    pthread_mutex_unlock(&fv->mu);
    for (size_t i = 0; i < ns.n; i++) {
        if (!rc)
            rc = fn(arg, ns.v[i]);
        free(ns.v[i]);
    }
    free(ns.v);
    return rc;
}

static int f_exists(struct vfs *v, const char *path)
{
    struct fault_vfs *fv = FV(v);
    int rc = op_begin(fv);
    if (!rc)
        rc = fv->lower->ops->exists(fv->lower, path);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

/* Each io counts as its own operation (so a crash may land mid-batch). */
/* ---- rings ------------------------------------------------------------- */

struct fring_done {
    uint64_t tag;
    struct vfs_io *ios;
    int n;
};

struct fault_ring {
    struct vfs_ring base;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t rng;
    struct fring_done *done; /* finished, not yet reported */
    unsigned ndone;
    struct fring_done *held; /* submitted, not yet run */
    unsigned nheld;
    unsigned running;        /* taken out of held, being run */
    int woken;
};

/* Bytes the write about to be submitted through a ring may write: len, or
 * a prefix when it is the armed short write -- cut at a 512-byte sector,
 * so on an O_DIRECT file the rest starts unaligned and the caller must
 * realign it. */
static size_t ring_write_len(struct fault_vfs *fv, const struct vfs_io *io)
{
    size_t len = io->len, cut = io->len / 2;
    if (io->f->flags & VFS_O_DIRECT)
        cut &= ~(size_t)(SECTOR - 1);
    pthread_mutex_lock(&fv->mu);
    if (fv->short_left > 1) {
        fv->short_left--;
    } else if (fv->short_left == 1 && cut > 0) {
        fv->short_left = 0;
        len = cut;
    } /* else too short to cut: the next write is */
    pthread_mutex_unlock(&fv->mu);
    return len;
}

static int fr_open(struct vfs *v, unsigned depth, struct vfs_ring **out)
{
    struct fault_vfs *fv = FV(v);
    struct fault_ring *fr;

    *out = NULL;
    if (depth == 0 || depth > 4096)
        return -EINVAL;
    fr = calloc(1, sizeof *fr);
    if (!fr || !(fr->done = calloc(depth, sizeof *fr->done)) || !(fr->held = calloc(depth, sizeof *fr->held))) {
        if (fr)
            free(fr->done);
        free(fr);
        return -ENOMEM;
    }
    pthread_mutex_init(&fr->mu, NULL);
    pthread_cond_init(&fr->cv, NULL);
    pthread_mutex_lock(&fv->mu);
    fr->rng = fv->ring_seed ^ (0x5851F42D4C957F2Dull * ++fv->rings_opened);
    pthread_mutex_unlock(&fv->mu);
    fr->base.vfs = v;
    fr->base.depth = depth;
    *out = &fr->base;
    return 0;
}

/* Runs one chain op by op through the layer (each op counts, faults hit
 * it); after a failure or a short write the rest is cancelled. */
static void run_chain(struct fault_vfs *fv, struct vfs_io *ios, int n)
{
    int failed = 0;
    for (int i = 0; i < n; i++) {
        struct vfs_io *io = &ios[i];
        if (failed) {
            io->result = -ECANCELED;
            continue;
        }
        switch (io->op) {
        case VFS_IO_WRITE: {
            size_t len = ring_write_len(fv, io);
            int rc = len ? pwrite_part(io->f, io->buf, len, io->off, io->len) : 0;
            io->result = rc ? rc : (int)len;
            failed = rc != 0 || len < io->len;
            break;
        }
        case VFS_IO_FSYNC:
            io->result = f_sync(io->f, 0);
            failed = io->result != 0;
            break;
        case VFS_IO_FDATASYNC:
            io->result = f_sync(io->f, 1);
            failed = io->result != 0;
            break;
        default:
            io->result = -EINVAL;
            failed = 1;
            break;
        }
    }
}

/* fr->mu held: runs held chain k (dropping the lock while it runs) and
 * moves it to done. */
static void run_held(struct fault_ring *fr, unsigned k)
{
    struct fring_done c = fr->held[k];
    fr->held[k] = fr->held[--fr->nheld];
    fr->running++;
    pthread_mutex_unlock(&fr->mu);
    run_chain(FV(fr->base.vfs), c.ios, c.n);
    pthread_mutex_lock(&fr->mu);
    fr->running--;
    fr->done[fr->ndone++] = c;
    pthread_cond_broadcast(&fr->cv);
}

static int fr_submit(struct vfs_ring *r, struct vfs_io *ios, int n, uint64_t tag)
{
    struct fault_ring *fr = (struct fault_ring *)r;
    struct fault_vfs *fv = FV(r->vfs);

    if (n < 1 || n > VFS_RING_MAX_LINKS)
        return -EINVAL;
    pthread_mutex_lock(&fr->mu);
    if (fr->ndone + fr->nheld + fr->running >= r->depth) {
        pthread_mutex_unlock(&fr->mu);
        return -EBUSY;
    }
    struct fring_done c = {tag, ios, n};
    if (sm64(&fr->rng) & 1) {
        fr->held[fr->nheld++] = c; /* runs later: chains after it may overtake it */
        pthread_cond_broadcast(&fr->cv);
        pthread_mutex_unlock(&fr->mu);
        return 0;
    }
    fr->running++;
    pthread_mutex_unlock(&fr->mu);
    run_chain(fv, ios, n);
    pthread_mutex_lock(&fr->mu);
    fr->running--;
    fr->done[fr->ndone++] = c;
    pthread_cond_broadcast(&fr->cv);
    pthread_mutex_unlock(&fr->mu);
    return 0;
}

static int fr_reap(struct vfs_ring *r, int wait, uint64_t *tag, struct vfs_io **ios)
{
    struct fault_ring *fr = (struct fault_ring *)r;
    int rc = 0;

    pthread_mutex_lock(&fr->mu);
    while (wait && fr->ndone == 0 && fr->nheld == 0 && !fr->woken)
        pthread_cond_wait(&fr->cv, &fr->mu);
    /* A held chain runs now when nothing else is finished, or by chance. */
    if (fr->nheld && (fr->ndone == 0 || (sm64(&fr->rng) & 1)))
        run_held(fr, (unsigned)(sm64(&fr->rng) % fr->nheld));
    if (fr->ndone) {
        unsigned k = (unsigned)(sm64(&fr->rng) % fr->ndone);
        *tag = fr->done[k].tag;
        *ios = fr->done[k].ios;
        fr->done[k] = fr->done[--fr->ndone];
        rc = 1;
    } else {
        fr->woken = 0;
    }
    pthread_mutex_unlock(&fr->mu);
    return rc;
}

static int fr_wake(struct vfs_ring *r)
{
    struct fault_ring *fr = (struct fault_ring *)r;
    pthread_mutex_lock(&fr->mu);
    fr->woken = 1;
    pthread_cond_broadcast(&fr->cv);
    pthread_mutex_unlock(&fr->mu);
    return 0;
}

/* Chains still held run now: io_uring completes what was submitted. */
static void fr_close(struct vfs_ring *r)
{
    struct fault_ring *fr = (struct fault_ring *)r;
    pthread_mutex_lock(&fr->mu);
    while (fr->nheld)
        run_held(fr, 0);
    pthread_mutex_unlock(&fr->mu);
    pthread_cond_destroy(&fr->cv);
    pthread_mutex_destroy(&fr->mu);
    free(fr->done);
    free(fr->held);
    free(fr);
}

static void f_destroy(struct vfs *v)
{
    struct fault_vfs *fv = FV(v);
    while (fv->handles) {
        struct fhandle *h = fv->handles;
        fv->handles = h->next;
        fv->lower->ops->close(h->lower);
        free(h);
    }
    for (size_t i = 0; i < fv->ndc; i++)
        dc_free(fv->dc[i]);
    free(fv->dc);
    while (fv->files) {
        struct fstate *s = fv->files;
        fv->files = s->next;
        fs_close_aux(fv, s);
        plist_clear(&s->pl);
        free(s->path);
        free(s);
    }
    pthread_mutex_destroy(&fv->mu);
    free(fv);
}

static const struct vfs_ops fault_ops = {
    .open = f_open,
    .close = f_close,
    .pread = f_pread,
    .pwrite = f_pwrite,
    .fsync = f_fsync,
    .fdatasync = f_fdatasync,
    .fallocate = f_fallocate,
    .truncate = f_truncate,
    .size = f_size,
    .rename = f_rename,
    .unlink = f_unlink,
    .mkdir = f_mkdir,
    .rmdir = f_rmdir,
    .sync_dir = f_sync_dir,
    .list = f_list,
    .exists = f_exists,
    .destroy = f_destroy,
    .ring_open = fr_open,
    .ring_submit = fr_submit,
    .ring_reap = fr_reap,
    .ring_wake = fr_wake,
    .ring_close = fr_close,
    .drop_cache = f_drop_cache,
    .links = f_links,
};

/* ---- public ------------------------------------------------------------ */

struct vfs *vfs_fault_new(struct vfs *base)
{
    struct fault_vfs *fv = calloc(1, sizeof *fv);
    if (!fv)
        return NULL;
    if (pthread_mutex_init(&fv->mu, NULL)) {
        free(fv);
        return NULL;
    }
    fv->base.ops = &fault_ops;
    fv->base.name = "fault";
    fv->lower = base;
    return &fv->base;
}

int vfs_fault_crash(struct vfs *v, enum vfs_crash_model model, uint64_t seed)
{
    struct fault_vfs *fv = FV(v);
    int rc;
    pthread_mutex_lock(&fv->mu);
    rc = fv->dead ? -EIO : do_crash(fv, model, seed);
    pthread_mutex_unlock(&fv->mu);
    return rc;
}

void vfs_fault_crash_at(struct vfs *v, uint64_t n, enum vfs_crash_model model, uint64_t seed)
{
    struct fault_vfs *fv = FV(v);
    pthread_mutex_lock(&fv->mu);
    fv->crash_left = n;
    fv->crash_model = model;
    fv->crash_seed = seed;
    pthread_mutex_unlock(&fv->mu);
}

void vfs_fault_fail(struct vfs *v, enum vfs_fault_op op, uint64_t n, int err)
{
    struct fault_vfs *fv = FV(v);
    if ((unsigned)op >= VFS_FAULT_NOPS)
        return;
    pthread_mutex_lock(&fv->mu);
    fv->fail_left[op] = n;
    fv->fail_err[op] = err ? err : -EIO;
    pthread_mutex_unlock(&fv->mu);
}

void vfs_fault_fail_sync(struct vfs *v, uint64_t n, int err) { vfs_fault_fail(v, VFS_FAULT_SYNC, n, err); }
void vfs_fault_fail_write(struct vfs *v, uint64_t n, int err) { vfs_fault_fail(v, VFS_FAULT_WRITE, n, err); }

void vfs_fault_lie(struct vfs *v, int on)
{
    struct fault_vfs *fv = FV(v);
    pthread_mutex_lock(&fv->mu);
    fv->lying = on;
    pthread_mutex_unlock(&fv->mu);
}

void vfs_fault_kill(struct vfs *v)
{
    struct fault_vfs *fv = FV(v);
    pthread_mutex_lock(&fv->mu);
    fv->dead = 1;
    pthread_mutex_unlock(&fv->mu);
}

void vfs_fault_kill_at(struct vfs *v, uint64_t n)
{
    struct fault_vfs *fv = FV(v);
    pthread_mutex_lock(&fv->mu);
    fv->kill_left = n;
    pthread_mutex_unlock(&fv->mu);
}

void vfs_fault_ring_seed(struct vfs *v, uint64_t seed)
{
    struct fault_vfs *fv = FV(v);
    pthread_mutex_lock(&fv->mu);
    fv->ring_seed = seed;
    pthread_mutex_unlock(&fv->mu);
}

void vfs_fault_short_write(struct vfs *v, uint64_t n)
{
    struct fault_vfs *fv = FV(v);
    pthread_mutex_lock(&fv->mu);
    fv->short_left = n;
    pthread_mutex_unlock(&fv->mu);
}

uint64_t vfs_fault_ops(struct vfs *v)
{
    struct fault_vfs *fv = FV(v);
    uint64_t n;
    pthread_mutex_lock(&fv->mu);
    n = fv->ops;
    pthread_mutex_unlock(&fv->mu);
    return n;
}

int vfs_fault_crashed(struct vfs *v)
{
    struct fault_vfs *fv = FV(v);
    int d;
    pthread_mutex_lock(&fv->mu);
    d = fv->dead;
    pthread_mutex_unlock(&fv->mu);
    return d;
}

static const char *const model_names[] = {"drop", "torn", "reorder"};

int vfs_crash_model_parse(const char *s, enum vfs_crash_model *out)
{
    for (unsigned i = 0; s && i < sizeof model_names / sizeof model_names[0]; i++) {
        if (!strcasecmp(s, model_names[i])) {
            *out = (enum vfs_crash_model)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *vfs_crash_model_name(enum vfs_crash_model m)
{
    if ((unsigned)m < sizeof model_names / sizeof model_names[0])
        return model_names[m];
    return "?";
}
