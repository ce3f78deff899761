/*
 * cut_journal.c -- the committing side of `commitlab crash --mode cut`: an
 * undo journal of every file call a process makes in its database
 * directory, from which the parent rolls the directory back to its last
 * synced state after killing it (the format: cut_journal.h; the rollback:
 * bench/crash/crash_cut.c).
 *
 * The engines are shared libraries linked into this program (commitlab is
 * linked in whole), so the program's definitions of the file calls bind
 * first (ELF interposition), as sync_latency.c's do for the writes and
 * syncs, whose hooks are here.  This file defines the calls that change
 * names and sizes, and the ones a cut cannot model, which it refuses:
 *   open, open64, openat, openat64, __open_2, __open64_2, __openat_2,
 *   __openat64_2, creat, creat64 (with O_CREAT or O_TRUNC), fopen, fopen64,
 *   fdopen, ftruncate, ftruncate64, fallocate, fallocate64,
 *   posix_fallocate, posix_fallocate64, rename, renameat, renameat2,
 *   unlink, unlinkat, link, linkat, mkdir, mkdirat, rmdir, mmap, mmap64
 *   (shared and writable), copy_file_range, sendfile, sendfile64, splice.
 * Each is named in interposed.list, which the link exports, so a plugin
 * loaded at run time binds to these too.  Until bench_cut_arm, each is
 * the real call behind one atomic load (an open and a mapping also tell
 * bench's count of the store's file calls about the descriptor,
 * file_calls.c).
 *
 * The model (POSIX's rule, stricter than ext4's): a file's bytes and size
 * are durable once an fsync or fdatasync of it returns, and a range once
 * an O_DSYNC/O_SYNC or RWF_DSYNC write of it returns; a name (created,
 * renamed, unlinked, a directory made or removed) once its directory's
 * fsync returns.  So before a call changes bytes that are durable, their
 * old contents go into an undo record (each byte once per sync: the
 * ranges already recorded since the file's last sync are "covered"); a
 * write beyond the synced size is recorded as a hole without its bytes;
 * and every change of a name is recorded before it is made.
 *
 * What the journal does not see it cannot undo: a store into a shared
 * writable mapping, a write by syscall(2) or io_uring passes none of
 * these calls.  So the journal also says what every file holds, for the
 * parent's check of unseen writes at the kill (crash_cut.c): when a file
 * is tracked, the hash of each of its CUT_BLOCK blocks (cut_block_hash)
 * and its size; before each call that changes bytes or the size (a
 * write, a truncation, an fallocate, an open with O_TRUNC) a CUT_CHANGING
 * record of the range and size it may leave; and after it returned, still
 * under the file's lock, the hashes of the blocks it touched, with the
 * size it left (CUT_HASHES): a block a write wrote whole is hashed from
 * the write's own buffers, and its size is its end or the size recorded
 * before, whichever is larger; every other block is read back, and the
 * size of a call that is not a write is the file's.  The parent holds
 * each file to the last hash of each block and the last size, but for the
 * range of a call the kill fell inside.  What this guarantees: a change
 * to a block that no journaled call touched afterwards, or to the size
 * that no journaled call set afterwards, is found, whenever the kill
 * falls -- so an engine that writes a file only by means the journal
 * does not see fails at the first crash after it wrote.  What it does
 * not: a write no call saw, to a block that a journaled call then read
 * back (a block a write covered in part, or one a truncation or a
 * punched hole touched), is taken into that read-back -- as is one that
 * raced the call, between the call and its read-back -- and passes as if
 * the call had written it (one that a journaled write then wrote over
 * whole is gone, and does not matter); and a file whose name matches the
 * engine's shared memory (bench_cut_arm's patterns: LMDB's lock.mdb,
 * SQLite's -shm) is neither hashed nor checked -- what its mapping writes
 * is not data.  A file written by an appending stdio stream (CUT_STREAM)
 * is held only below the size the calls left it.  A 64-bit hash may
 * collide; it is no defence against an engine that means to deceive.
 *
 * Several processes, one journal (a server's: bench_cut_prepare, CUT_ENV;
 * the library libcommitlab-cut.so, preloaded, is these three files): the
 * journal's state lives in a shared mapping of JOURNAL_DIR/state -- the
 * sequence, the bound, the tracked files and directories by (dev, ino),
 * each file's synced size, last recorded size and count of syncs, and
 * the locks, process-shared and robust (a kill may fall with one held).
 * Every process appends to the one journal file (O_APPEND) under the
 * journal's lock, which hands out the sequence, so the records of all of
 * them have one order.  What stays a process's own: its descriptors (of
 * the journal, of each file's hard link, opened on first use) and the
 * ranges it knows are recorded since a file's last sync, which a sync by
 * any process voids (the file's count of syncs).
 *
 * Invariants: a file's undo records and its write are made under its own
 * lock, and a sync takes its snapshot under that lock, so no write to the
 * file is half done when the snapshot is taken, whichever processes write
 * and sync it; every change of a name is made under one lock, which a
 * directory's sync takes its snapshot under.
 * Locks nest names -> file -> journal.  A record is whole in the journal
 * before the call it describes runs, and a file's first hashes are in it
 * before any other thread can find the file.  Anything this file cannot journal
 * (a call it does not model, the journal's bound, a failing journal)
 * ends the process with SIGKILL after a record saying why, so a run that
 * could not be journaled is never checked as if it had been.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cut_journal.h"
#include "file_calls.h"

#define CUT_MAX_FILES 4096
#define CUT_MAX_DIRS 256
#define CUT_SLOTS 8192 /* a power of two, at least twice CUT_MAX_FILES */
#define CUT_CHUNK (1u << 20)

struct cut_iv {
    uint64_t a, b;
};

/* A tracked file, in the shared state: every process that journals sees
 * the same one for an inode. */
struct cut_file {
    uint32_t id;
    uint64_t dev, ino;
    pthread_mutex_t mu;  /* process-shared and robust: a kill may fall with it held */
    uint64_t synced;     /* the size a cut returns the file to */
    uint64_t gen;        /* counts the syncs of the file: a process's covered ranges of an older one are void */
    int mapped;          /* mapped shared and writable */
    int shared;          /* the engine's shared memory (CUT_F_SHARED): neither hashed nor checked */
    uint64_t size;       /* the size its last CUT_HASHES recorded */
    int stream;          /* opened by an appending stdio stream (CUT_STREAM recorded) */
};

/* What one process keeps of a tracked file.  Its covered ranges are
 * ranges whose synced bytes some record since the file's last sync
 * already holds (a fact about the journal, whoever wrote the record), so
 * a process forked with its parent's keeps them; a sync by any process
 * voids them (gen). */
struct cut_local {
    uint64_t gen;
    struct cut_iv *cov; /* ranges recorded since the last sync, sorted, disjoint */
    size_t ncov, capcov;
    int rfd; /* reads the old bytes (never O_DIRECT); open when have_rfd */
    int have_rfd;
};

#define CUT_REL_MAX 1024

struct cut_dir {
    uint32_t id;
    uint64_t dev, ino;
    char rel[CUT_REL_MAX]; /* below the database directory; "" for itself */
};

enum { CUT_OFF, CUT_ARMING, CUT_ON };

/* The journal's state, in a shared mapping of JOURNAL_DIR/state: one for
 * all the processes that journal (a server's, which attach to it at their
 * start, CUT_ENV), so their records have one sequence, each inode one
 * file, and each file one lock. */
struct cut_shm {
    uint32_t magic;
    int server;        /* a server's processes journal, not the one that armed it */
    _Atomic int armed; /* CUT_OFF, CUT_ARMING (calls wait), CUT_ON */
    pthread_mutex_t names_mu, jmu, table_mu;
    uint64_t next_seq, jbytes, jmax;
    _Atomic uint32_t nfiles, ndirs;
    _Atomic uint32_t slots[CUT_SLOTS]; /* file ids by (dev, ino) */
    struct cut_file files[CUT_MAX_FILES + 1];
    struct cut_dir dirs[CUT_MAX_DIRS + 1];
};
#define CUT_SHM_MAGIC 0x4d485343u /* "CSHM" */

static struct cut_shm *_Atomic shm;
static int jfd = -1, jdirfd = -1;
static struct cut_local local[CUT_MAX_FILES + 1];
static const char *const *shared_names; /* the engine's shared memory: fnmatch patterns of a file's name */
static __thread int arming;             /* this thread arms: its own calls never wait for it */

/* ---- the real calls --------------------------------------------------------- */

static int (*real_openat)(int, const char *, int, ...);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fdopen)(int, const char *);
static int (*real_ftruncate)(int, off_t);
static int (*real_fallocate)(int, int, off_t, off_t);
static int (*real_posix_fallocate)(int, off_t, off_t);
static int (*real_renameat2)(int, const char *, int, const char *, unsigned);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_linkat)(int, const char *, int, const char *, int);
static int (*real_mkdirat)(int, const char *, mode_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static ssize_t (*real_copy_file_range)(int, off_t *, int, off_t *, size_t, unsigned);
static ssize_t (*real_sendfile)(int, int, off_t *, size_t);
static ssize_t (*real_splice)(int, off_t *, int, off_t *, size_t, unsigned);
static ssize_t (*real_writev)(int, const struct iovec *, int);

static void cut_attach(void);

__attribute__((constructor)) static void cut_resolve(void)
{
    real_openat = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
    real_fopen = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    real_fdopen = (FILE * (*)(int, const char *)) dlsym(RTLD_NEXT, "fdopen");
    real_ftruncate = (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");
    real_fallocate = (int (*)(int, int, off_t, off_t))dlsym(RTLD_NEXT, "fallocate");
    real_posix_fallocate = (int (*)(int, off_t, off_t))dlsym(RTLD_NEXT, "posix_fallocate");
    real_renameat2 = (int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
    real_unlinkat = (int (*)(int, const char *, int))dlsym(RTLD_NEXT, "unlinkat");
    real_linkat = (int (*)(int, const char *, int, const char *, int))dlsym(RTLD_NEXT, "linkat");
    real_mkdirat = (int (*)(int, const char *, mode_t))dlsym(RTLD_NEXT, "mkdirat");
    real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    real_copy_file_range =
        (ssize_t(*)(int, off_t *, int, off_t *, size_t, unsigned))dlsym(RTLD_NEXT, "copy_file_range");
    real_sendfile = (ssize_t(*)(int, int, off_t *, size_t))dlsym(RTLD_NEXT, "sendfile");
    real_splice = (ssize_t(*)(int, off_t *, int, off_t *, size_t, unsigned))dlsym(RTLD_NEXT, "splice");
    real_writev = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    cut_attach();
}
#define RESOLVED(p) ((p) ? (void)0 : cut_resolve())

/* Nonzero once armed.  While another process arms the journal (a
 * server's, CUT_ARMING) a call waits until it is armed, so that no call
 * runs half before and half after the files are tracked. */
int bench_cut_armed(void)
{
    struct cut_shm *S = atomic_load_explicit(&shm, memory_order_acquire);
    if (!S)
        return 0;
    int a = atomic_load_explicit(&S->armed, memory_order_acquire);
    while (a == CUT_ARMING && !arming) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        a = atomic_load_explicit(&S->armed, memory_order_acquire);
    }
    return a == CUT_ON;
}

#define S (atomic_load_explicit(&shm, memory_order_relaxed))

/* The shared state's locks are robust: a process killed holding one (the
 * kill of a server's processes, or a process that could not journal and
 * ended itself) leaves it to the next, which goes on (what the dead one
 * was doing is the parent's to find: its record is the journal's last,
 * or the record saying why it ended). */
static void lock(pthread_mutex_t *m)
{
    if (pthread_mutex_lock(m) == EOWNERDEAD)
        pthread_mutex_consistent(m);
}
#define unlock(m) pthread_mutex_unlock(m)

static int mutex_init_shared(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);
    if (!rc)
        rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (!rc)
        rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (!rc)
        rc = pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
    return rc;
}

/* ---- the journal ------------------------------------------------------------ */

static __attribute__((noreturn)) void die(void)
{
    raise(SIGKILL);
    for (;;)
        pause();
}

static int write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = real_writev(fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* Appends one record (payload p1 then p2); its sequence number.  Past the
 * bound: an overflow record, and the process ends.  bounded 0: the record
 * is written whatever the bound (what says why the process ends). */
static uint64_t jappend_b(int bounded, uint16_t type, uint16_t flags, uint32_t id, uint32_t id2, uint64_t a,
                          uint64_t b, uint64_t c, const void *p1, size_t n1, const void *p2, size_t n2)
{
    struct cut_rec r = {
        .magic = CUT_MAGIC, .type = type, .flags = flags, .id = id, .id2 = id2, .n1 = (uint32_t)n1, .a = a, .b = b, .c = c};
    r.len = (uint32_t)(sizeof r + n1 + n2);
    uint64_t h = cut_hash(p1, n1, CUT_HASH_SEED); /* the payload outside the lock: the header has the seq */
    h = cut_hash(p2, n2, h);
    lock(&S->jmu);
    if (bounded && S->jbytes + r.len > S->jmax) {
        uint64_t need = S->jbytes + r.len;
        unlock(&S->jmu);
        jappend_b(0, CUT_OVERFLOW, 0, 0, 0, S->jmax, need, 0, NULL, 0, NULL, 0);
        die();
    }
    r.seq = S->next_seq++;
    r.hash = cut_hash(&r, sizeof r, h);
    struct iovec iov[3] = {{&r, sizeof r}, {(void *)p1, n1}, {(void *)p2, n2}};
    if (write_all(jfd, iov, 1 + (n1 > 0) + (n2 > 0)))
        die(); /* nothing can be recorded any more: the parent sees a process that died by itself */
    S->jbytes += r.len;
    unlock(&S->jmu);
    return r.seq;
}
#define jappend(...) jappend_b(1, __VA_ARGS__)

static uint64_t snapshot(void)
{
    lock(&S->jmu);
    uint64_t s = S->next_seq;
    unlock(&S->jmu);
    return s;
}

static __attribute__((format(printf, 1, 2), noreturn)) void unsupported(const char *fmt, ...)
{
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof text)
        n = sizeof text - 1;
    jappend_b(0, CUT_UNSUPPORTED, 0, 0, 0, 0, 0, 0, text, (size_t)n, NULL, 0);
    die();
}

/* ---- what is tracked ------------------------------------------------------------ */

static size_t slot_of(dev_t dev, ino_t ino)
{
    uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ino * 0xc2b2ae3d27d4eb4full);
    return (size_t)(h >> 20) & (CUT_SLOTS - 1);
}

static struct cut_file *file_find(dev_t dev, ino_t ino)
{
    for (size_t i = slot_of(dev, ino);; i = (i + 1) & (CUT_SLOTS - 1)) {
        uint32_t id = atomic_load_explicit(&S->slots[i], memory_order_acquire);
        if (!id)
            return NULL;
        struct cut_file *f = &S->files[id];
        if (f->dev == (uint64_t)dev && f->ino == (uint64_t)ino)
            return f;
    }
}

static struct cut_file *fd_file(int fd, struct stat *st)
{
    struct stat s;
    if (!st)
        st = &s;
    if (fd < 0 || fstat(fd, st) || !S_ISREG(st->st_mode))
        return NULL;
    return file_find(st->st_dev, st->st_ino);
}

static struct cut_dir *dir_find(dev_t dev, ino_t ino)
{
    uint32_t n = atomic_load_explicit(&S->ndirs, memory_order_acquire);
    for (uint32_t i = 1; i <= n; i++)
        if (S->dirs[i].dev == (uint64_t)dev && S->dirs[i].ino == (uint64_t)ino)
            return &S->dirs[i];
    return NULL;
}

struct written;
static void record_hashes(struct cut_file *f, uint64_t lo, uint64_t hi, const struct written *w);

/* 1 when name is one of the engine's shared memory files. */
static int is_shared(const char *name)
{
    for (const char *const *p = shared_names; p && *p; p++)
        if (fnmatch(*p, name, 0) == 0)
            return 1;
    return 0;
}

/* Tracks the regular file st, which the name src (relative to srcfd, or
 * "" with srcfd an open descriptor of it) reaches, and whose own name in
 * its directory is name: a hard link to it in the journal's directory, a
 * descriptor to read its old bytes, a record, and the hashes of all its
 * blocks -- published to the other threads only then, so no journaled
 * call on it comes before them. */
static struct cut_file *track_file(int srcfd, const char *src, const struct stat *st, uint64_t synced,
                                   const char *name_in_dir)
{
    char name[32], proc[64];
    lock(&S->table_mu);
    struct cut_file *f = file_find(st->st_dev, st->st_ino);
    if (f) {
        unlock(&S->table_mu);
        return f;
    }
    uint32_t id = atomic_load(&S->nfiles) + 1;
    if (id > CUT_MAX_FILES)
        unsupported("more than %d files in the database directory", CUT_MAX_FILES);
    snprintf(name, sizeof name, "f%u", id);
    int rc;
    if (!*src) {
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", srcfd);
        rc = real_linkat(AT_FDCWD, proc, jdirfd, name, AT_SYMLINK_FOLLOW);
    } else {
        rc = real_linkat(srcfd, src, jdirfd, name, 0);
    }
    if (rc)
        unsupported("link: a file of the database directory into the journal's directory: %s", strerror(errno));
    f = &S->files[id];
    memset(f, 0, sizeof *f);
    f->id = id;
    f->dev = (uint64_t)st->st_dev;
    f->ino = (uint64_t)st->st_ino;
    f->synced = synced;
    if (mutex_init_shared(&f->mu))
        unsupported("a process-shared mutex: %s", strerror(errno));
    struct cut_local *l = &local[id];
    l->ncov = 0;
    l->gen = 0;
    l->rfd = real_openat(jdirfd, name, O_RDONLY | O_CLOEXEC);
    if (l->rfd < 0)
        unsupported("open %s in the journal's directory: %s", name, strerror(errno));
    l->have_rfd = 1;
    f->shared = is_shared(name_in_dir);
    jappend(CUT_FILE, f->shared ? CUT_F_SHARED : 0, id, 0, (uint64_t)st->st_dev, (uint64_t)st->st_ino, synced, NULL,
            0, NULL, 0);
    if (!f->shared)
        record_hashes(f, 0, UINT64_MAX, NULL);
    size_t i = slot_of(st->st_dev, st->st_ino);
    while (atomic_load(&S->slots[i]))
        i = (i + 1) & (CUT_SLOTS - 1);
    atomic_store_explicit(&S->slots[i], id, memory_order_release);
    atomic_store(&S->nfiles, id);
    unlock(&S->table_mu);
    return f;
}

/* This process's part of f, under f's lock: its descriptor to read the
 * old bytes (opened on first use: a file another process tracked), and
 * its covered ranges, void once any process synced the file since. */
static struct cut_local *loc(struct cut_file *f)
{
    struct cut_local *l = &local[f->id];
    if (!l->have_rfd) {
        char name[32];
        snprintf(name, sizeof name, "f%u", f->id);
        l->rfd = real_openat(jdirfd, name, O_RDONLY | O_CLOEXEC);
        if (l->rfd < 0)
            unsupported("open %s in the journal's directory: %s", name, strerror(errno));
        l->have_rfd = 1;
    }
    if (l->gen != f->gen) {
        l->ncov = 0;
        l->gen = f->gen;
    }
    return l;
}

static void file_lock(struct cut_file *f)
{
    lock(&f->mu);
    loc(f);
}

static struct cut_dir *track_dir(const struct stat *st, const char *rel)
{
    lock(&S->table_mu);
    struct cut_dir *d = dir_find(st->st_dev, st->st_ino);
    if (!d) {
        uint32_t id = atomic_load(&S->ndirs) + 1;
        if (id > CUT_MAX_DIRS)
            unsupported("more than %d directories in the database directory", CUT_MAX_DIRS);
        if (strlen(rel) >= CUT_REL_MAX)
            unsupported("a directory's path in the database directory longer than %d bytes", CUT_REL_MAX - 1);
        d = &S->dirs[id];
        d->id = id;
        d->dev = (uint64_t)st->st_dev;
        d->ino = (uint64_t)st->st_ino;
        snprintf(d->rel, sizeof d->rel, "%s", rel);
        jappend(CUT_DIR, 0, id, 0, (uint64_t)st->st_dev, (uint64_t)st->st_ino, 0, rel, strlen(rel), NULL, 0);
        atomic_store_explicit(&S->ndirs, id, memory_order_release);
    }
    unlock(&S->table_mu);
    return d;
}

/* ---- covered ranges ------------------------------------------------------------ */

static void cov_reserve(struct cut_file *f, size_t n)
{
    if (n <= local[f->id].capcov)
        return;
    size_t cap = local[f->id].capcov ? local[f->id].capcov * 2 : 16;
    while (cap < n)
        cap *= 2;
    struct cut_iv *v = realloc(local[f->id].cov, cap * sizeof *v);
    if (!v)
        unsupported("out of memory");
    local[f->id].cov = v;
    local[f->id].capcov = cap;
}

/* Removes [a, b) from the covered ranges. */
static void cov_remove(struct cut_file *f, uint64_t a, uint64_t b)
{
    struct cut_iv *v = local[f->id].cov;
    size_t n = local[f->id].ncov, i = 0;
    while (i < n && v[i].b <= a)
        i++;
    if (i == n || v[i].a >= b)
        return;
    if (v[i].a < a && v[i].b > b) { /* [a, b) inside one range: split it */
        cov_reserve(f, n + 1);
        v = local[f->id].cov;
        memmove(&v[i + 2], &v[i + 1], (n - i - 1) * sizeof *v);
        v[i + 1] = (struct cut_iv){b, v[i].b};
        v[i].b = a;
        local[f->id].ncov = n + 1;
        return;
    }
    if (v[i].a < a)
        v[i++].b = a;
    size_t j = i;
    while (j < n && v[j].b <= b)
        j++;
    if (j < n && v[j].a < b)
        v[j].a = b;
    memmove(&v[i], &v[j], (n - j) * sizeof *v);
    local[f->id].ncov = n - (j - i);
}

/* Adds [a, b), merging. */
static void cov_add(struct cut_file *f, uint64_t a, uint64_t b)
{
    cov_remove(f, a, b);
    cov_reserve(f, local[f->id].ncov + 1);
    struct cut_iv *v = local[f->id].cov;
    size_t i = 0;
    while (i < local[f->id].ncov && v[i].b <= a)
        i++;
    memmove(&v[i + 1], &v[i], (local[f->id].ncov - i) * sizeof *v);
    v[i] = (struct cut_iv){a, b};
    local[f->id].ncov++;
    if (i + 1 < local[f->id].ncov && v[i + 1].a == b) { /* merge with the touching neighbours */
        v[i].b = v[i + 1].b;
        memmove(&v[i + 1], &v[i + 2], (local[f->id].ncov - i - 2) * sizeof *v);
        local[f->id].ncov--;
    }
    if (i > 0 && v[i - 1].b == a) {
        v[i - 1].b = v[i].b;
        memmove(&v[i], &v[i + 1], (local[f->id].ncov - i - 1) * sizeof *v);
        local[f->id].ncov--;
    }
}

/* Records what the synced state had in [x, y), none of it covered. */
static void record_gap(struct cut_file *f, uint64_t x, uint64_t y)
{
    if (x < f->synced) {
        uint64_t e = y < f->synced ? y : f->synced;
        size_t cap = e - x < CUT_CHUNK ? (size_t)(e - x) : CUT_CHUNK;
        unsigned char *buf = malloc(cap);
        if (!buf)
            unsupported("out of memory");
        for (uint64_t p = x; p < e;) {
            size_t n = e - p < cap ? (size_t)(e - p) : cap, got = 0;
            while (got < n) {
                ssize_t r = pread(local[f->id].rfd, buf + got, n - got, (off_t)(p + got));
                if (r < 0 && errno == EINTR)
                    continue;
                if (r < 0)
                    unsupported("pread of the old bytes of a file of the database directory: %s", strerror(errno));
                if (r == 0)
                    break;
                got += (size_t)r;
            }
            memset(buf + got, 0, n - got); /* beyond the end: what a cut-back file reads */
            jappend(CUT_UNDO, 0, f->id, 0, p, n, f->synced, buf, n, NULL, 0);
            p += n;
        }
        free(buf);
        x = e;
    }
    if (y > x)
        jappend(CUT_UNDO, CUT_F_ZERO, f->id, 0, x, y - x, f->synced, NULL, 0, NULL, 0);
}

/* Before [a, b) of f changes: its synced contents, where not yet recorded. */
static void record_change(struct cut_file *f, uint64_t a, uint64_t b)
{
    if (a >= b)
        return;
    uint64_t x = a;
    for (size_t i = 0; i < local[f->id].ncov && x < b; i++) {
        struct cut_iv c = local[f->id].cov[i];
        if (c.b <= x)
            continue;
        if (c.a >= b)
            break;
        if (c.a > x)
            record_gap(f, x, c.a);
        x = c.b;
    }
    if (x < b)
        record_gap(f, x, b);
    cov_add(f, a, b);
}

/* ---- what each file holds -------------------------------------------------------- */

/* Before a call that may change [off, off + len) of f and leave it size
 * bytes long (CUT_CHANGING), under f's lock: a kill inside the call is
 * then told from a write no call made. */
static void record_changing(struct cut_file *f, uint64_t off, uint64_t len, uint64_t size)
{
    if (!f->shared)
        jappend(CUT_CHANGING, 0, f->id, 0, off, len, size, NULL, 0, NULL, 0);
}

/* What a write wrote: n bytes from its buffers, at off. */
struct written {
    const struct iovec *iov;
    int cnt;
    uint64_t off, n;
};

/* Whether w wrote all of block b. */
static int wrote_whole(const struct written *w, uint64_t b)
{
    return w && b * CUT_BLOCK >= w->off && (b + 1) * CUT_BLOCK <= w->off + w->n;
}

/* Block b of the file, if w wrote all of it: a pointer to its bytes (in
 * w's buffers, or gathered into tmp); else NULL. */
static const unsigned char *written_block(const struct written *w, uint64_t b, unsigned char *tmp)
{
    if (!wrote_whole(w, b))
        return NULL;
    uint64_t skip = b * CUT_BLOCK - w->off;
    size_t got = 0;
    for (int i = 0; i < w->cnt && got < CUT_BLOCK; i++) {
        size_t len = w->iov[i].iov_len;
        const unsigned char *base = w->iov[i].iov_base;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        size_t k = len - skip < CUT_BLOCK - got ? (size_t)(len - skip) : CUT_BLOCK - got;
        if (!got && k == CUT_BLOCK)
            return base + skip; /* whole in one buffer */
        memcpy(tmp + got, base + skip, k);
        got += k;
        skip = 0;
    }
    return got == CUT_BLOCK ? tmp : NULL;
}

/* After the call, under f's lock (or as f is tracked): the blocks that
 * [lo, hi) touches that start below f's size now (a file cut shorter to
 * lo: the block it now ends in), hashed, with that size (CUT_HASHES).
 * w: what a write wrote, whose blocks it wrote whole are hashed from its
 * buffers -- what the file holds there once it returned -- and the size
 * is the larger of the one last recorded and the write's end; without
 * it, the size is the file's and every block is read back.  Only the
 * blocks the call touched are hashed: what anything else changed in the
 * others stays unexplained -- but in a file a stdio stream appends to,
 * whose writes no call sees, every block is read back.  A record
 * whatever the range, so the file's CUT_CHANGING is closed. */
static void record_hashes(struct cut_file *f, uint64_t lo, uint64_t hi, const struct written *w)
{
    struct stat st;
    uint64_t size;
    if (f->shared)
        return;
    if (f->stream) { /* what the stream wrote no call saw: all of it, as it is now (a log: small) */
        lo = 0;
        hi = UINT64_MAX;
        w = NULL;
    }
    if (w) {
        size = w->off + w->n > f->size ? w->off + w->n : f->size;
    } else {
        if (fstat(local[f->id].rfd, &st))
            unsupported("fstat of a file of the database directory: %s", strerror(errno));
        size = (uint64_t)st.st_size;
    }
    uint64_t end = hi < size ? hi : size;
    uint64_t first = lo / CUT_BLOCK, last = hi > lo && end > first * CUT_BLOCK ? (end - 1) / CUT_BLOCK + 1 : first;
    size_t n = (size_t)(last - first);
    uint64_t one, *h = n <= 1 ? &one : malloc(n * sizeof *h);
    unsigned char buf[4 * CUT_BLOCK];
    if (!h)
        unsupported("out of memory");
    for (uint64_t b = first; b < last;) {
        const unsigned char *mine = written_block(w, b, buf);
        if (mine) {
            h[b++ - first] = cut_block_hash(mine);
            continue;
        }
        size_t k = 1, got = 0; /* a run of blocks to read back, up to buf's */
        while (b + k < last && k < sizeof buf / CUT_BLOCK && !wrote_whole(w, b + k))
            k++;
        while (got < k * CUT_BLOCK) {
            ssize_t r = pread(local[f->id].rfd, buf + got, k * CUT_BLOCK - got, (off_t)(b * CUT_BLOCK + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                unsupported("pread of a file of the database directory: %s", strerror(errno));
            if (r == 0)
                break;
            got += (size_t)r;
        }
        memset(buf + got, 0, k * CUT_BLOCK - got); /* past the end: zeros, as the parent reads them */
        for (size_t i = 0; i < k; i++)
            h[b - first + i] = cut_block_hash(buf + i * CUT_BLOCK);
        b += k;
    }
    jappend(CUT_HASHES, 0, f->id, 0, first, n, size, h, n * sizeof *h, NULL, 0);
    f->size = size;
    if (h != &one)
        free(h);
}

/* A file written by an appending stdio stream from here on (CUT_STREAM). */
static void mark_stream(struct cut_file *f)
{
    file_lock(f);
    if (!f->stream && !f->shared) {
        f->stream = 1;
        jappend(CUT_STREAM, 0, f->id, 0, 0, 0, 0, NULL, 0, NULL, 0);
    }
    unlock(&f->mu);
}

/* ---- the hooks of sync_latency.c's writes and syncs ------------------------------------ */

void bench_cut_write_begin(int fd, int64_t off, size_t n, int rwf, struct bench_cut_op *op)
{
    struct stat st;
    memset(op, 0, sizeof *op);
    if (!bench_cut_armed() || n == 0)
        return;
    struct cut_file *f = fd_file(fd, &st);
    if (!f)
        return;
    file_lock(f);
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0)
        fl = 0;
    if ((fl & O_APPEND) || (rwf & RWF_APPEND)) {
        if (fstat(fd, &st) == 0)
            off = st.st_size;
    } else if (off < 0) {
        off = lseek(fd, 0, SEEK_CUR);
    }
    if (off < 0)
        unsupported("write: the offset of a file of the database directory: %s", strerror(errno));
    op->dsync = (fl & O_DSYNC) || (rwf & (RWF_DSYNC | RWF_SYNC));
    if (op->dsync && f->mapped)
        unsupported("an O_DSYNC write to a file that is mapped shared and writable (file %u)", f->id);
    record_change(f, (uint64_t)off, (uint64_t)off + n);
    record_changing(f, (uint64_t)off, n, (uint64_t)off + n);
    op->file = f;
    op->off = (uint64_t)off;
    op->n = n;
}

void bench_cut_write_end(struct bench_cut_op *op, ssize_t rc, const struct iovec *iov, int cnt)
{
    struct cut_file *f = op->file;
    if (!f)
        return;
    struct written w = {iov, cnt, op->off, rc > 0 ? (uint64_t)rc : 0};
    record_hashes(f, op->off, op->off + op->n, &w);
    if (rc > 0 && op->dsync) {
        jappend(CUT_DSYNC, 0, f->id, 0, op->off, (uint64_t)rc, 0, NULL, 0, NULL, 0);
        cov_remove(f, op->off, op->off + (uint64_t)rc);
        if (op->off + (uint64_t)rc > f->synced)
            f->synced = op->off + (uint64_t)rc;
        local[f->id].gen = ++f->gen; /* the other processes' covered ranges may hold this range: void them */
    }
    unlock(&f->mu);
}

void bench_cut_sync_begin(int fd, struct bench_cut_op *op)
{
    struct stat st;
    memset(op, 0, sizeof *op);
    if (!bench_cut_armed() || fd < 0 || fstat(fd, &st))
        return;
    if (S_ISDIR(st.st_mode)) {
        struct cut_dir *d = dir_find(st.st_dev, st.st_ino);
        if (!d)
            return;
        lock(&S->names_mu);
        op->snap = snapshot();
        unlock(&S->names_mu);
        op->dir = d;
        return;
    }
    struct cut_file *f = S_ISREG(st.st_mode) ? file_find(st.st_dev, st.st_ino) : NULL;
    if (!f)
        return;
    file_lock(f);
    if (f->mapped)
        unsupported("fsync of a file written through a shared writable mapping (file %u): the cut cannot see what "
                    "the mapping wrote",
                    f->id);
    if (fstat(fd, &st) == 0) {
        op->snap = snapshot();
        op->size = (uint64_t)st.st_size;
        op->file = f;
        /* From here the file's writes are recorded afresh: if the sync
         * succeeds what it covers is durable; if it fails, the records
         * before it still lead back to the older synced state. */
        f->synced = op->size;
        local[f->id].gen = ++f->gen; /* every process's covered ranges void */
        local[f->id].ncov = 0;
    }
    unlock(&f->mu);
}

void bench_cut_sync_end(struct bench_cut_op *op, int rc)
{
    if (rc != 0)
        return;
    if (op->dir)
        jappend(CUT_DIRSYNC, 0, ((struct cut_dir *)op->dir)->id, 0, op->snap, 0, 0, NULL, 0, NULL, 0);
    else if (op->file)
        jappend(CUT_SYNC, 0, ((struct cut_file *)op->file)->id, 0, op->snap, op->size, 0, NULL, 0, NULL, 0);
}

/* The mapping of this process that holds addr, from /proc/self/maps. */
static int mapping_of(const void *addr, dev_t *dev, ino_t *ino, int *shared_writable)
{
    int fd = real_openat(AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    FILE *m = real_fdopen(fd, "r");
    if (!m) {
        close(fd);
        return -1;
    }
    char line[4400];
    int found = -1;
    uintptr_t p = (uintptr_t)addr;
    while (found < 0 && fgets(line, sizeof line, m)) {
        unsigned long lo, hi, off, ma, mi, in;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s %lx %lx:%lx %lu", &lo, &hi, perms, &off, &ma, &mi, &in) == 7 && p >= lo &&
            p < hi) {
            *dev = makedev(ma, mi);
            *ino = (ino_t)in;
            *shared_writable = perms[1] == 'w' && perms[3] == 's';
            found = 0;
        }
    }
    fclose(m);
    return found;
}

void bench_cut_msync(void *addr)
{
    dev_t dev;
    ino_t ino;
    int sw;
    if (!bench_cut_armed() || mapping_of(addr, &dev, &ino, &sw))
        return;
    struct cut_file *f = file_find(dev, ino);
    if (f && (sw || f->mapped))
        unsupported("msync of a file written through a shared writable mapping (file %u): the cut cannot see what "
                    "the mapping wrote",
                    f->id);
}

/* ---- arming ------------------------------------------------------------ */

static int scan(int dfd, const char *rel)
{
    int dup_fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d)
        return -errno;
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
            continue;
        if (S_ISREG(st.st_mode)) {
            track_file(dfd, e->d_name, &st, (uint64_t)st.st_size, e->d_name);
        } else if (S_ISDIR(st.st_mode)) {
            char sub[4096];
            snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
            int sfd = real_openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sfd < 0) {
                rc = -errno;
                break;
            }
            track_dir(&st, sub);
            rc = scan(sfd, sub);
            close(sfd);
        }
    }
    closedir(d);
    return rc;
}

/* Shared writable mappings made before arming, of files now tracked, in
 * the process whose maps is path ("/proc/self/maps", or another's).  In
 * this process each is CUT_MAPPED, as a mapping made afterwards; in a
 * server's process (pid) a CUT_UNSUPPORTED record, as a mapping made
 * there afterwards is (cut_mmap), which fails the run at the kill. */
static void scan_maps(const char *path, long pid)
{
    int fd = real_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    FILE *m = fd >= 0 ? real_fdopen(fd, "r") : NULL;
    if (!m) {
        if (fd >= 0)
            close(fd);
        return;
    }
    char line[4400];
    while (fgets(line, sizeof line, m)) {
        unsigned long lo, hi, off, ma, mi, in;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s %lx %lx:%lx %lu", &lo, &hi, perms, &off, &ma, &mi, &in) != 7 ||
            perms[1] != 'w' || perms[3] != 's')
            continue;
        struct cut_file *f = file_find(makedev(ma, mi), (ino_t)in);
        if (f && pid) {
            char text[200];
            int n = snprintf(text, sizeof text,
                             "a shared writable mapping of a file of the database directory (file %u) in process %ld: "
                             "the cut cannot see what the mapping writes",
                             f->id, pid);
            jappend_b(0, CUT_UNSUPPORTED, 0, 0, 0, 0, 0, 0, text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0,
                      NULL, 0);
        } else if (f && !f->mapped) {
            f->mapped = 1;
            jappend(CUT_MAPPED, 0, f->id, 0, 0, 0, 0, NULL, 0, NULL, 0);
        }
    }
    fclose(m);
}

/* A server's processes are not this one: every process's mappings (the
 * server's are among them; /proc shows them to root, or to their own
 * account). */
static void scan_all_maps(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        char path[64];
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        long pid = atol(e->d_name);
        if (pid == (long)getpid())
            continue;
        snprintf(path, sizeof path, "/proc/%ld/maps", pid);
        scan_maps(path, pid);
    }
    closedir(d);
}

int bench_cut_prepare(const char *jdir, uint64_t max, int server, uid_t uid, gid_t gid, char *err, size_t len)
{
    RESOLVED(real_openat);
    if (S) {
        snprintf(err, len, "the cut's journal is already made in this process");
        return -EBUSY;
    }
    int sfd = -1;
    void *p = MAP_FAILED;
    const char *what = CUT_JOURNAL_NAME;
    jdirfd = real_openat(AT_FDCWD, jdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (jdirfd < 0 ||
        (jfd = real_openat(jdirfd, CUT_JOURNAL_NAME, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600)) < 0)
        goto fail;
    what = CUT_STATE_NAME;
    if ((sfd = real_openat(jdirfd, CUT_STATE_NAME, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0 ||
        real_ftruncate(sfd, (off_t)sizeof(struct cut_shm)) ||
        (p = real_mmap(NULL, sizeof(struct cut_shm), PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0)) == MAP_FAILED)
        goto fail;
    /* a server's processes run as its own account: theirs to write */
    if (uid != (uid_t)-1 && (fchown(jdirfd, uid, gid) || fchown(jfd, uid, gid) || fchown(sfd, uid, gid)))
        goto fail;
    struct cut_shm *m = p;
    m->magic = CUT_SHM_MAGIC;
    m->server = server;
    m->next_seq = 1;
    m->jmax = max;
    errno = mutex_init_shared(&m->names_mu);
    if (!errno)
        errno = mutex_init_shared(&m->jmu);
    if (!errno)
        errno = mutex_init_shared(&m->table_mu);
    if (errno)
        goto fail;
    close(sfd);
    atomic_store_explicit(&shm, m, memory_order_release);
    return 0;
fail:;
    int e = errno;
    snprintf(err, len, "%.200s/%s: %s", jdir, what, strerror(e));
    if (p != MAP_FAILED)
        munmap(p, sizeof(struct cut_shm));
    if (sfd >= 0)
        close(sfd);
    if (jfd >= 0)
        close(jfd);
    if (jdirfd >= 0)
        close(jdirfd);
    jfd = jdirfd = -1;
    return -e;
}

/* A process started with CUT_ENV in its environment (a server's, the
 * library preloaded) joins the journal that names: at its start, before
 * it could make a call the journal must see, so the processes it forks
 * have it too.  What cannot join says so on stderr (the server's log);
 * its calls then go unjournaled, which the check of unseen writes finds. */
static void cut_attach(void)
{
    const char *jdir = getenv(CUT_ENV);
    if (!jdir || !*jdir || S)
        return;
    int dfd = real_openat(AT_FDCWD, jdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int sfd = dfd >= 0 ? real_openat(dfd, CUT_STATE_NAME, O_RDWR | O_CLOEXEC) : -1;
    int j = dfd >= 0 ? real_openat(dfd, CUT_JOURNAL_NAME, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
    void *p = sfd >= 0 && j >= 0 ? real_mmap(NULL, sizeof(struct cut_shm), PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0)
                                 : MAP_FAILED;
    int e = errno;
    if (sfd >= 0)
        close(sfd);
    if (p == MAP_FAILED || ((struct cut_shm *)p)->magic != CUT_SHM_MAGIC) {
        fprintf(stderr, "commitlab cut: cannot join the undo journal in %s: %s\n", jdir,
                p == MAP_FAILED ? strerror(e) : "not a journal's state");
        if (p != MAP_FAILED)
            munmap(p, sizeof(struct cut_shm));
        if (j >= 0)
            close(j);
        if (dfd >= 0)
            close(dfd);
        return;
    }
    jdirfd = dfd;
    jfd = j;
    atomic_store_explicit(&shm, (struct cut_shm *)p, memory_order_release);
}

int bench_cut_arm(const char *dbdir, const char *jdir, uint64_t max, const char *const *shared, char *err,
                  size_t len)
{
    struct stat st;
    RESOLVED(real_openat);
    if (!S) {
        int rc = bench_cut_prepare(jdir, max, 0, (uid_t)-1, (gid_t)-1, err, len);
        if (rc)
            return rc;
    } else if (atomic_load(&S->armed) != CUT_OFF) {
        snprintf(err, len, "the cut's journal is already armed in this process");
        return -EBUSY;
    }
    shared_names = shared;
    arming = 1;
    atomic_store_explicit(&S->armed, CUT_ARMING, memory_order_release);
    if (S->server) {
        /* A call of a server's process that found the journal off just
         * before runs on unjournaled: let it end before the files are
         * tracked (what it wrote is then in the state synced below; one
         * that ran on past that is a change the check of unseen writes
         * finds).  Every later call waits until the journal is on. */
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    int rc = 0;
    int dfd = real_openat(AT_FDCWD, dbdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fstat(dfd, &st)) {
        rc = -errno;
        snprintf(err, len, "%.200s: %s", dbdir, strerror(-rc));
        goto out;
    }
    /* What is there now is the durable state a cut goes back to: make it so. */
    if (syncfs(dfd)) {
        rc = -errno;
        snprintf(err, len, "syncfs %.200s: %s", dbdir, strerror(-rc));
        goto out;
    }
    track_dir(&st, "");
    rc = scan(dfd, "");
    if (rc) {
        snprintf(err, len, "%.200s: %s", dbdir, strerror(-rc));
        goto out;
    }
    scan_maps("/proc/self/maps", 0);
    if (S->server)
        scan_all_maps();
out:
    if (dfd >= 0)
        close(dfd);
    atomic_store_explicit(&S->armed, rc ? CUT_OFF : CUT_ON, memory_order_release);
    arming = 0;
    return rc;
}

/* ---- names ------------------------------------------------------------ */

/* The tracked directory that holds path's last component (relative to
 * dirfd), or NULL; *name points at that component inside buf. */
static struct cut_dir *parent_of(int dirfd, const char *path, char *buf, size_t len, const char **name)
{
    struct stat st;
    if (!path || snprintf(buf, len, "%s", path) >= (int)len)
        return NULL;
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = 0;
    char *slash = strrchr(buf, '/');
    int rc;
    if (!slash) {
        *name = buf;
        rc = dirfd == AT_FDCWD ? stat(".", &st) : fstat(dirfd, &st);
    } else {
        *name = slash + 1;
        if (slash == buf) {
            rc = stat("/", &st);
        } else {
            *slash = 0;
            rc = fstatat(dirfd, buf, &st, 0);
            *slash = '/';
        }
    }
    if (rc || !S_ISDIR(st.st_mode) || !**name || !strcmp(*name, ".") || !strcmp(*name, ".."))
        return NULL;
    return dir_find(st.st_dev, st.st_ino);
}

static struct cut_file *existing(int dirfd, const char *path, struct stat *st, int *exists)
{
    *exists = fstatat(dirfd, path, st, AT_SYMLINK_NOFOLLOW) == 0;
    return *exists && S_ISREG(st->st_mode) ? file_find(st->st_dev, st->st_ino) : NULL;
}

/* The journaled part of opening path with flags: before the real open
 * (which runs under the lock this takes), and after it with its fd. */
struct open_op {
    struct cut_dir *d;
    struct cut_file *trunc;
    int created;
    char name[256];
};

static void open_begin(int dirfd, const char *path, int flags, struct open_op *op)
{
    char buf[4096];
    const char *name;
    struct stat st;
    int exists;
    memset(op, 0, sizeof *op);
    if (!bench_cut_armed())
        return;
    if ((flags & O_TMPFILE) == O_TMPFILE && fstatat(dirfd, path, &st, 0) == 0 && dir_find(st.st_dev, st.st_ino))
        unsupported("open(O_TMPFILE) in the database directory: a file with no name the cut could track");
    if (!(op->d = parent_of(dirfd, path, buf, sizeof buf, &name)))
        return;
    lock(&S->names_mu);
    struct cut_file *f = existing(dirfd, path, &st, &exists);
    if (!exists && (flags & O_CREAT)) {
        jappend(CUT_CREATE, 0, op->d->id, 0, 0, 0, 0, name, strlen(name), NULL, 0);
        op->created = 1;
        snprintf(op->name, sizeof op->name, "%s", name);
    } else if (exists && S_ISREG(st.st_mode) && !f) {
        unsupported("open: %s in the database directory was made by a call the cut does not see", name);
    } else if (f && (flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY) {
        file_lock(f);
        record_change(f, 0, f->synced);
        record_changing(f, 0, (uint64_t)st.st_size, 0);
        op->trunc = f;
    }
}

static void open_end(struct open_op *op, int fd)
{
    if (!op->d)
        return;
    if (op->trunc) {
        record_hashes(op->trunc, 0, 0, NULL); /* the size it left */
        unlock(&op->trunc->mu);
    }
    struct stat st;
    if (fd >= 0 && op->created && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        track_file(fd, "", &st, 0, op->name);
    unlock(&S->names_mu);
}

static int cut_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    RESOLVED(real_openat);
    if (!bench_cut_armed()) {
        int fd = real_openat(dirfd, path, flags, mode);
        bench_file_opened(fd, flags); /* keeps errno */
        return fd;
    }
    struct open_op op;
    open_begin(dirfd, path, flags, &op);
    int fd = real_openat(dirfd, path, flags, mode);
    int e = errno;
    open_end(&op, fd);
    bench_file_opened(fd, flags);
    errno = e;
    return fd;
}

#define NEEDS_MODE(fl) (((fl) & O_CREAT) || ((fl) & O_TMPFILE) == O_TMPFILE)
#define MODE_ARG(fl, mode)                                                                                             \
    do {                                                                                                               \
        if (NEEDS_MODE(fl)) {                                                                                          \
            va_list ap;                                                                                                \
            va_start(ap, fl);                                                                                          \
            mode = (mode_t)va_arg(ap, int);                                                                            \
            va_end(ap);                                                                                                \
        }                                                                                                              \
    } while (0)

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    return cut_openat(AT_FDCWD, path, flags, mode);
}
int open64(const char *path, int flags, ...)
{
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    return cut_openat(AT_FDCWD, path, flags | O_LARGEFILE, mode);
}
int openat(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    return cut_openat(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    return cut_openat(dirfd, path, flags | O_LARGEFILE, mode);
}
/* _FORTIFY_SOURCE's forms: open without a mode. */
int __open_2(const char *path, int flags) { return cut_openat(AT_FDCWD, path, flags, 0); }
int __open64_2(const char *path, int flags) { return cut_openat(AT_FDCWD, path, flags | O_LARGEFILE, 0); }
int __openat_2(int dirfd, const char *path, int flags) { return cut_openat(dirfd, path, flags, 0); }
int __openat64_2(int dirfd, const char *path, int flags) { return cut_openat(dirfd, path, flags | O_LARGEFILE, 0); }
int creat(const char *path, mode_t mode) { return cut_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode); }
int creat64(const char *path, mode_t mode)
{
    return cut_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE, mode);
}

/* stdio: a stream's writes are glibc's own calls, which no definition here
 * sees.  A stream that only appends ("w", "a") never changes bytes that
 * are durable: a cut cuts what it wrote back with the file's size.  One
 * that may overwrite ("r+", "w+", "a+") is refused. */
static int stdio_flags(const char *mode)
{
    if (!mode)
        return 0;
    int fl = mode[0] == 'w' ? O_CREAT | O_TRUNC | O_WRONLY : mode[0] == 'a' ? O_CREAT | O_APPEND | O_WRONLY : 0;
    return strchr(mode, '+') ? -1 : fl;
}

static FILE *cut_fopen(const char *path, const char *mode)
{
    RESOLVED(real_fopen);
    if (!bench_cut_armed())
        return real_fopen(path, mode);
    char buf[4096];
    const char *name;
    int fl = stdio_flags(mode);
    if (parent_of(AT_FDCWD, path, buf, sizeof buf, &name) && fl < 0)
        unsupported("fopen(\"%s\") of %s in the database directory: a stream that may overwrite", mode, name);
    struct open_op op;
    open_begin(AT_FDCWD, path, fl < 0 ? 0 : fl, &op);
    FILE *f = real_fopen(path, mode);
    int e = errno;
    open_end(&op, f ? fileno(f) : -1);
    struct cut_file *cf;
    if (f && fl > 0 && (cf = fd_file(fileno(f), NULL)))
        mark_stream(cf);
    errno = e;
    return f;
}
FILE *fopen(const char *path, const char *mode) { return cut_fopen(path, mode); }
FILE *fopen64(const char *path, const char *mode) { return cut_fopen(path, mode); }

FILE *fdopen(int fd, const char *mode)
{
    RESOLVED(real_fdopen);
    struct cut_file *f;
    if (bench_cut_armed() && (f = fd_file(fd, NULL))) {
        int fl = stdio_flags(mode);
        if (fl < 0)
            unsupported("fdopen(\"%s\") of a file of the database directory: a stream that may overwrite", mode);
        if (fl > 0)
            mark_stream(f);
    }
    return real_fdopen(fd, mode);
}

static int cut_unlink(int dirfd, const char *path, int flags)
{
    RESOLVED(real_unlinkat);
    char buf[4096];
    const char *name;
    struct cut_dir *d;
    if (!bench_cut_armed() || !(d = parent_of(dirfd, path, buf, sizeof buf, &name)))
        return real_unlinkat(dirfd, path, flags);
    struct stat st;
    int exists;
    lock(&S->names_mu);
    struct cut_file *f = existing(dirfd, path, &st, &exists);
    if (exists && (flags & AT_REMOVEDIR) && S_ISDIR(st.st_mode))
        jappend(CUT_RMDIR, 0, d->id, 0, 0, 0, 0, name, strlen(name), NULL, 0);
    else if (exists && !(flags & AT_REMOVEDIR) && f)
        jappend(CUT_UNLINK, 0, d->id, f->id, 0, 0, 0, name, strlen(name), NULL, 0);
    else if (exists && !(flags & AT_REMOVEDIR))
        unsupported("unlink of %s in the database directory, which the cut does not track", name);
    int rc = real_unlinkat(dirfd, path, flags);
    int e = errno;
    unlock(&S->names_mu);
    errno = e;
    return rc;
}
int unlink(const char *path) { return cut_unlink(AT_FDCWD, path, 0); }
int unlinkat(int dirfd, const char *path, int flags) { return cut_unlink(dirfd, path, flags); }
int rmdir(const char *path) { return cut_unlink(AT_FDCWD, path, AT_REMOVEDIR); }

static int cut_rename(int od, const char *op, int nd, const char *np, unsigned flags)
{
    RESOLVED(real_renameat2);
    char b1[4096], b2[4096];
    const char *on, *nn;
    struct cut_dir *d1, *d2;
    if (!bench_cut_armed())
        return real_renameat2(od, op, nd, np, flags);
    d1 = parent_of(od, op, b1, sizeof b1, &on);
    d2 = parent_of(nd, np, b2, sizeof b2, &nn);
    if (!d1 && !d2)
        return real_renameat2(od, op, nd, np, flags);
    if (d1 != d2)
        unsupported("rename across directories (%s to %s): durable only once both are synced, which the cut does not "
                    "model",
                    on, nn);
    if (flags & RENAME_EXCHANGE)
        unsupported("renameat2(RENAME_EXCHANGE) in the database directory");
    struct stat s1, s2;
    int e1, e2;
    lock(&S->names_mu);
    struct cut_file *moved = existing(od, op, &s1, &e1), *replaced = existing(nd, np, &s2, &e2);
    if (e1 && !moved)
        unsupported("rename of %s in the database directory: a directory, or a file the cut does not track", on);
    if (e2 && !replaced && !(flags & RENAME_NOREPLACE))
        unsupported("rename over %s in the database directory, which the cut does not track", nn);
    if (moved && moved != replaced)
        jappend(CUT_RENAME, 0, d1->id, 0, moved->id, replaced && !(flags & RENAME_NOREPLACE) ? replaced->id : 0, 0, on,
                strlen(on) + 1, nn, strlen(nn));
    int rc = real_renameat2(od, op, nd, np, flags);
    int e = errno;
    unlock(&S->names_mu);
    errno = e;
    return rc;
}
int rename(const char *o, const char *n) { return cut_rename(AT_FDCWD, o, AT_FDCWD, n, 0); }
int renameat(int od, const char *o, int nd, const char *n) { return cut_rename(od, o, nd, n, 0); }
int renameat2(int od, const char *o, int nd, const char *n, unsigned flags) { return cut_rename(od, o, nd, n, flags); }

static int cut_link(int od, const char *op, int nd, const char *np, int flags)
{
    RESOLVED(real_linkat);
    char buf[4096];
    const char *name;
    struct cut_dir *d;
    if (!bench_cut_armed() || !(d = parent_of(nd, np, buf, sizeof buf, &name)))
        return real_linkat(od, op, nd, np, flags);
    struct stat st;
    int exists;
    lock(&S->names_mu);
    if (!existing(od, op, &st, &exists) && exists)
        unsupported("link of a file the cut does not track into the database directory (%s)", name);
    existing(nd, np, &st, &exists);
    if (!exists)
        jappend(CUT_CREATE, 0, d->id, 0, 0, 0, 0, name, strlen(name), NULL, 0);
    int rc = real_linkat(od, op, nd, np, flags);
    int e = errno;
    unlock(&S->names_mu);
    errno = e;
    return rc;
}
int link(const char *o, const char *n) { return cut_link(AT_FDCWD, o, AT_FDCWD, n, 0); }
int linkat(int od, const char *o, int nd, const char *n, int flags) { return cut_link(od, o, nd, n, flags); }

static int cut_mkdir(int dirfd, const char *path, mode_t mode)
{
    RESOLVED(real_mkdirat);
    char buf[4096];
    const char *name;
    struct cut_dir *d;
    if (!bench_cut_armed() || !(d = parent_of(dirfd, path, buf, sizeof buf, &name)))
        return real_mkdirat(dirfd, path, mode);
    struct stat st;
    int exists;
    lock(&S->names_mu);
    existing(dirfd, path, &st, &exists);
    if (!exists)
        jappend(CUT_MKDIR, 0, d->id, 0, 0, 0, 0, name, strlen(name), NULL, 0);
    int rc = real_mkdirat(dirfd, path, mode);
    int e = errno;
    if (rc == 0 && fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        char rel[4096];
        snprintf(rel, sizeof rel, "%s%s%s", d->rel, *d->rel ? "/" : "", name);
        track_dir(&st, rel);
    }
    unlock(&S->names_mu);
    errno = e;
    return rc;
}
int mkdir(const char *path, mode_t mode) { return cut_mkdir(AT_FDCWD, path, mode); }
int mkdirat(int dirfd, const char *path, mode_t mode) { return cut_mkdir(dirfd, path, mode); }

/* ---- sizes ------------------------------------------------------------ */

static int cut_ftruncate(int fd, off_t size)
{
    RESOLVED(real_ftruncate);
    struct cut_file *f;
    if (!bench_cut_armed() || size < 0 || !(f = fd_file(fd, NULL)))
        return real_ftruncate(fd, size);
    file_lock(f);
    struct stat st;
    uint64_t old = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : f->synced, to = (uint64_t)size;
    if (to < f->synced)
        record_change(f, to, f->synced);
    record_changing(f, to < old ? to : old, to < old ? old - to : to - old, to);
    int rc = real_ftruncate(fd, size);
    int e = errno;
    record_hashes(f, to, old, NULL); /* cut shorter: the block it now ends in */
    unlock(&f->mu);
    errno = e;
    return rc;
}
int ftruncate(int fd, off_t size) { return cut_ftruncate(fd, size); }
int ftruncate64(int fd, off_t size) { return cut_ftruncate(fd, size); }

static int cut_fallocate(int fd, int mode, off_t off, off_t len)
{
    RESOLVED(real_fallocate);
    struct stat st;
    struct cut_file *f;
    if (!bench_cut_armed() || off < 0 || len <= 0 || !(f = fd_file(fd, &st)))
        return real_fallocate(fd, mode, off, len);
    if (mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE))
        unsupported("fallocate(%s) on a file of the database directory: it moves bytes",
                    mode & FALLOC_FL_COLLAPSE_RANGE ? "FALLOC_FL_COLLAPSE_RANGE" : "FALLOC_FL_INSERT_RANGE");
    /* Without PUNCH_HOLE or ZERO_RANGE it only allocates: no byte changes,
     * and the size a cut cuts back; the size it leaves is recorded. */
    int zeroes = (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) != 0;
    uint64_t a = (uint64_t)off, end = a + (uint64_t)len;
    file_lock(f);
    uint64_t old = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : f->synced;
    if (zeroes)
        record_change(f, a, end < old ? end : old); /* beyond the end nothing is seen to change */
    record_changing(f, a, zeroes ? end - a : 0, (mode & FALLOC_FL_KEEP_SIZE) || end < old ? old : end);
    int rc = real_fallocate(fd, mode, off, len);
    int e = errno;
    record_hashes(f, zeroes ? a : 0, zeroes ? end : 0, NULL);
    unlock(&f->mu);
    errno = e;
    return rc;
}
int fallocate(int fd, int mode, off_t off, off_t len) { return cut_fallocate(fd, mode, off, len); }
int fallocate64(int fd, int mode, off_t off, off_t len) { return cut_fallocate(fd, mode, off, len); }

/* glibc's posix_fallocate calls the system call (or, where the filesystem
 * has no fallocate, writes zeros where a block reads zero) inside itself,
 * past the definitions here: it changes no byte, and the size it leaves
 * is recorded. */
static int cut_posix_fallocate(int fd, off_t off, off_t len)
{
    RESOLVED(real_posix_fallocate);
    struct stat st;
    struct cut_file *f;
    if (!bench_cut_armed() || off < 0 || len <= 0 || !(f = fd_file(fd, &st)))
        return real_posix_fallocate(fd, off, len);
    file_lock(f);
    uint64_t end = (uint64_t)off + (uint64_t)len, old = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : f->synced;
    record_changing(f, (uint64_t)off, 0, end < old ? old : end);
    int rc = real_posix_fallocate(fd, off, len);
    record_hashes(f, 0, 0, NULL);
    unlock(&f->mu);
    return rc; /* an error number, not errno */
}
int posix_fallocate(int fd, off_t off, off_t len) { return cut_posix_fallocate(fd, off, len); }
int posix_fallocate64(int fd, off_t off, off_t len) { return cut_posix_fallocate(fd, off, len); }

/* ---- what a cut cannot model ------------------------------------------------------------ */

static void *cut_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    /* Before this file's constructor ran, a sanitizer's runtime maps its
     * own memory through here while it starts: the system call itself,
     * since dlsym is not safe to call yet (nothing of the database is open
     * that early). */
    if (!real_mmap)
        return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    struct cut_file *f;
    if (bench_cut_armed() && fd >= 0 && (prot & PROT_WRITE) && (flags & MAP_SHARED) && (f = fd_file(fd, NULL))) {
        /* Shared memory in a file (LMDB's lock.mdb, SQLite's -shm) is
         * written through the mapping and never synced; the engines rebuild
         * it at their next open.  A mapped file that is then synced is
         * refused (bench_cut_sync_begin, bench_cut_msync). */
        file_lock(f);
        if (!f->mapped) {
            f->mapped = 1;
            jappend(CUT_MAPPED, 0, f->id, 0, 0, 0, 0, NULL, 0, NULL, 0);
        }
        unlock(&f->mu);
    }
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    int e = errno;
    bench_file_mapped(p, len, prot, flags, fd);
    errno = e;
    return p;
}
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return cut_mmap(addr, len, prot, flags, fd, off);
}
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return cut_mmap(addr, len, prot, flags, fd, off);
}

ssize_t copy_file_range(int in, off_t *oin, int out, off_t *oout, size_t n, unsigned flags)
{
    RESOLVED(real_copy_file_range);
    if (bench_cut_armed() && fd_file(out, NULL))
        unsupported("copy_file_range into a file of the database directory");
    return real_copy_file_range(in, oin, out, oout, n, flags);
}

static ssize_t cut_sendfile(int out, int in, off_t *off, size_t n)
{
    RESOLVED(real_sendfile);
    if (bench_cut_armed() && fd_file(out, NULL))
        unsupported("sendfile into a file of the database directory");
    return real_sendfile(out, in, off, n);
}
ssize_t sendfile(int out, int in, off_t *off, size_t n) { return cut_sendfile(out, in, off, n); }
ssize_t sendfile64(int out, int in, off_t *off, size_t n) { return cut_sendfile(out, in, off, n); }

ssize_t splice(int in, off_t *oin, int out, off_t *oout, size_t n, unsigned flags)
{
    RESOLVED(real_splice);
    if (bench_cut_armed() && fd_file(out, NULL))
        unsupported("splice into a file of the database directory");
    return real_splice(in, oin, out, oout, n, flags);
}
