/* check_vfs_fault.c -- the fault layer keeps its promises: what each crash
 * model keeps and loses (files, directory entries, directories), torn
 * writes as any subset of sectors, a crash in the middle of an O_DSYNC
 * write, out-of-order ring chains, fsyncgate, injected errors on every kind
 * of call, kill (process crash), crash_at, determinism, threads. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vfs.h"
#include "vfs_testing.h"
#include "vfs_fault.h"

static char *scratch;

static void setup(void) { scratch = tu_mkdtemp("vfsfault"); }
static void teardown(void)
{
    tu_rmdir(scratch);
    free(scratch);
    scratch = NULL;
}

static char *path_in(const char *dir, const char *name)
{
    char *p;
    ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

/* Writes a file behind the fault layer's back (so it counts as durable). */
static void prepare(const char *p, const void *buf, size_t len)
{
    ck_assert_int_eq(tu_write_file(p, buf, len), 0);
}

static void prepare_str(const char *p, const char *s) { prepare(p, s, strlen(s)); }

static int file_exists(const char *p) { return vfs_exists(vfs_posix(), p); }

static void expect_file(const char *p, const void *want, size_t len)
{
    uint8_t *buf;
    size_t got;
    ck_assert_msg(tu_read_file(p, &buf, &got) == 0, "%s missing", p);
    ck_assert_uint_eq(got, len);
    if (len)
        ck_assert_mem_eq(buf, want, len);
    free(buf);
}

static void expect_str(const char *p, const char *s) { expect_file(p, s, strlen(s)); }

static struct vfs_file *xopen(struct vfs *v, const char *p, unsigned flags)
{
    struct vfs_file *f;
    ck_assert_int_eq(vfs_open(v, p, flags, VFS_CLASS_DATA, &f), 0);
    return f;
}

static void xwrite(struct vfs_file *f, const char *s, uint64_t off)
{
    ck_assert_int_eq(vfs_pwrite(f, s, strlen(s), off), 0);
}

START_TEST(test_model_names)
{
    enum vfs_crash_model m;
    ck_assert_int_eq(vfs_crash_model_parse("drop", &m), 0);
    ck_assert_int_eq(m, VFS_CRASH_DROP);
    ck_assert_int_eq(vfs_crash_model_parse("torn", &m), 0);
    ck_assert_int_eq(m, VFS_CRASH_TORN);
    ck_assert_int_eq(vfs_crash_model_parse("reorder", &m), 0);
    ck_assert_int_eq(m, VFS_CRASH_REORDER);
    ck_assert_int_eq(vfs_crash_model_parse("bogus", &m), -EINVAL);
    ck_assert_int_eq(vfs_crash_model_parse("", &m), -EINVAL);
    ck_assert_str_eq(vfs_crash_model_name(VFS_CRASH_DROP), "drop");
    ck_assert_str_eq(vfs_crash_model_name(VFS_CRASH_TORN), "torn");
    ck_assert_str_eq(vfs_crash_model_name(VFS_CRASH_REORDER), "reorder");
}
END_TEST

START_TEST(test_drop_loses_unsynced_keeps_synced)
{
    char *f = path_in(scratch, "f"), *u = path_in(scratch, "untouched");
    char *g = path_in(scratch, "g");
    uint8_t base[4096], want[4096];
    struct vfs *v = vfs_fault_new(vfs_posix());
    struct vfs_file *h, *h2, *hg;
    size_t n;

    memset(base, 'A', sizeof base);
    prepare(f, base, sizeof base);
    prepare(g, base, sizeof base);
    prepare_str(u, "never touched");
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(v->name, "fault");

    h = xopen(v, f, 0);
    h2 = xopen(v, f, 0); /* a second handle on the same path shares its state */
    xwrite(h, "synced-by-other-handle", 0);
    ck_assert_int_eq(vfs_fdatasync(h2), 0);
    xwrite(h, "lost", 1000);
    xwrite(h2, "lost-extension", 4096);
    ck_assert_int_eq(vfs_truncate(h, 10), 0);
    ck_assert_int_eq(vfs_fallocate(h2, 0, 100000), 0);
    ck_assert_int_eq(vfs_close(h2), 0);
    /* the writes are visible before the crash */
    char rb[4];
    ck_assert_int_eq(vfs_pread(h, rb, 4, 0, &n), 0);
    ck_assert_mem_eq(rb, "sync", 4);
    /* a file with pending writes that was closed, and one still open */
    hg = xopen(v, g, 0);
    xwrite(hg, "also lost", 5);
    ck_assert_int_eq(vfs_close(hg), 0);

    ck_assert_int_eq(vfs_fault_crashed(v), 0);
    ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, 1), 0);
    ck_assert_int_eq(vfs_fault_crashed(v), 1);

    memcpy(want, base, sizeof want);
    memcpy(want, "synced-by-other-handle", 22);
    expect_file(f, want, sizeof want);
    expect_file(g, base, sizeof base);
    expect_str(u, "never touched");

    /* dead: everything fails, close frees */
    ck_assert_int_eq(vfs_pwrite(h, "x", 1, 0), -EIO);
    ck_assert_int_eq(vfs_pread(h, rb, 1, 0, &n), -EIO);
    ck_assert_int_eq(vfs_fsync(h), -EIO);
    ck_assert_int_eq(vfs_open(v, u, 0, VFS_CLASS_DATA, &h2), -EIO);
    ck_assert_int_eq(vfs_exists(v, u), -EIO);
    ck_assert_int_eq(vfs_unlink(v, u), -EIO);
    ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, 1), -EIO);
    ck_assert_int_eq(vfs_close(h), -EIO);
    expect_file(f, want, sizeof want);
    expect_str(u, "never touched");
    vfs_destroy(v);
    free(f);
    free(g);
    free(u);
}
END_TEST

START_TEST(test_created_file_needs_sync_dir)
{
    for (int synced = 0; synced < 2; synced++) {
        char *sub, *p, *q;
        struct vfs *v = vfs_fault_new(vfs_posix());
        struct vfs_file *h;

        ck_assert_int_ge(asprintf(&sub, "%s/d%d", scratch, synced), 0);
        ck_assert_int_eq(vfs_mkdir(v, sub), 0);
        ck_assert_int_eq(vfs_sync_dir(v, scratch), 0); /* the directory itself is durable */
        p = path_in(sub, "new");
        q = path_in(sub, "excl");
        h = xopen(v, p, VFS_O_CREATE);
        xwrite(h, "fsynced content", 0);
        ck_assert_int_eq(vfs_fsync(h), 0);
        ck_assert_int_eq(vfs_close(h), 0);
        h = xopen(v, q, VFS_O_CREATE | VFS_O_EXCL | VFS_O_DSYNC);
        xwrite(h, "dsync content", 0);
        ck_assert_int_eq(vfs_close(h), 0);
        if (synced) {
            char *slash;
            ck_assert_int_ge(asprintf(&slash, "%s/", sub), 0); /* names normalise */
            ck_assert_int_eq(vfs_sync_dir(v, slash), 0);
            free(slash);
        }
        ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, 9), 0);
        if (synced) {
            expect_str(p, "fsynced content");
            expect_str(q, "dsync content");
        } else {
            ck_assert_int_eq(file_exists(p), 0);
            ck_assert_int_eq(file_exists(q), 0);
        }
        ck_assert_int_eq(file_exists(sub), 1);
        vfs_destroy(v);
        free(p);
        free(q);
        free(sub);
    }
}
END_TEST

START_TEST(test_unlink_rename_reverted)
{
    char *a = path_in(scratch, "a"), *b = path_in(scratch, "b"), *c = path_in(scratch, "c");
    char *x = path_in(scratch, "x"), *cur = path_in(scratch, "CURRENT");
    char *tmp = path_in(scratch, "CURRENT.tmp"), *moved = path_in(scratch, "moved");
    struct vfs *v = vfs_fault_new(vfs_posix());
    struct vfs_file *h;

    prepare_str(a, "alpha");
    prepare_str(b, "beta");
    prepare_str(c, "gamma");
    prepare_str(x, "x-synced");
    prepare_str(cur, "old-current");

    ck_assert_int_eq(vfs_unlink(v, a), 0);
    ck_assert_int_eq(vfs_unlink(v, a), -ENOENT);
    ck_assert_int_eq(vfs_rename(v, b, c), 0);
    ck_assert_int_eq(vfs_rename(v, a, moved), -ENOENT);
    /* unsynced writes to a file that is then unlinked: back as last synced */
    h = xopen(v, x, 0);
    xwrite(h, "X-UNSYNCED-LONGER", 0);
    ck_assert_int_eq(vfs_close(h), 0);
    ck_assert_int_eq(vfs_unlink(v, x), 0);
    /* durable replace without the directory sync */
    h = xopen(v, tmp, VFS_O_CREATE | VFS_O_TRUNC);
    xwrite(h, "new-current", 0);
    ck_assert_int_eq(vfs_fsync(h), 0);
    ck_assert_int_eq(vfs_close(h), 0);
    ck_assert_int_eq(vfs_rename(v, tmp, cur), 0);
    expect_str(cur, "new-current");
    ck_assert_int_eq(vfs_exists(v, a), 0);
    ck_assert_int_eq(vfs_exists(v, b), 0);

    ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, 3), 0);
    expect_str(a, "alpha");
    expect_str(b, "beta");
    expect_str(c, "gamma");
    expect_str(x, "x-synced");
    expect_str(cur, "old-current");
    ck_assert_int_eq(file_exists(tmp), 0);
    ck_assert_int_eq(file_exists(moved), 0);
    vfs_destroy(v);

    /* the same replace done durably survives; other unsynced changes do not */
    v = vfs_fault_new(vfs_posix());
    ck_assert_int_eq(vfs_unlink(v, a), 0);
    ck_assert_int_eq(vfs_write_file_durable(v, scratch, "CURRENT", "durable", 7, VFS_CLASS_META), 0);
    ck_assert_int_eq(vfs_rename(v, b, moved), 0);
    ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, 4), 0);
    expect_str(cur, "durable");
    ck_assert_int_eq(file_exists(tmp), 0);
    ck_assert_int_eq(file_exists(a), 0); /* synced with the directory */
    expect_str(b, "beta");
    ck_assert_int_eq(file_exists(moved), 0);
    vfs_destroy(v);
    free(a);
    free(b);
    free(c);
    free(x);
    free(cur);
    free(tmp);
    free(moved);
}
END_TEST

#define TORN_FILE 65536u
#define TORN_WRITES 6
#define TORN_LEN 3000u

START_TEST(test_torn_outcomes)
{
    char *p = path_in(scratch, "t");
    uint8_t *zero = calloc(1, TORN_FILE);
    uint64_t base = tu_seed(1000), iters = tu_iterations(300);
    unsigned whole = 0, none = 0, prefix = 0, holes = 0;
    uint8_t data[TORN_LEN];

    for (uint64_t it = 0; it < iters; it++) {
        uint64_t seed = base + it;
        struct vfs *v = vfs_fault_new(vfs_posix());
        struct vfs_file *h;
        uint8_t *got;
        size_t len;

        prepare(p, zero, TORN_FILE);
        h = xopen(v, p, 0);
        for (int i = 0; i < TORN_WRITES; i++) {
            memset(data, i + 1, sizeof data);
            ck_assert_int_eq(vfs_pwrite(h, data, TORN_LEN, 100 + (uint64_t)i * 10000 + (uint64_t)i * 7), 0);
        }
        ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_TORN, seed), 0);
        vfs_close(h);
        vfs_destroy(v);

        ck_assert_int_eq(tu_read_file(p, &got, &len), 0);
        ck_assert_msg(len == TORN_FILE, "seed %llu: size %zu", (unsigned long long)seed, len);
        for (int i = 0; i < TORN_WRITES; i++) {
            uint64_t off = 100 + (uint64_t)i * 10000 + (uint64_t)i * 7;
            /* every 512-byte sector piece is all new or all old, and a
             * change of state happens only at a sector boundary */
            size_t kept = 0, runs = 0;
            int prev = -1;
            for (size_t j = 0; j < TORN_LEN; j++) {
                int is_new = got[off + j] == i + 1;
                if (!is_new && got[off + j] != 0)
                    ck_abort_msg("seed %llu: write %d garbled at +%zu", (unsigned long long)seed, i, j);
                if (prev >= 0 && is_new != prev) {
                    if ((off + j) % 512 != 0)
                        ck_abort_msg("seed %llu: write %d changes at +%zu (not a sector)", (unsigned long long)seed,
                                     i, j);
                    runs++;
                }
                kept += (size_t)is_new;
                prev = is_new;
            }
            if (kept == TORN_LEN)
                whole++;
            else if (kept == 0)
                none++;
            else if (got[off] == i + 1 && runs == 1)
                prefix++;
            else
                holes++; /* a later sector kept, an earlier one lost */
        }
        free(got);
    }
    ck_assert_msg(whole > 0 && none > 0 && prefix > 0 && holes > 0, "whole %u none %u prefix %u holes %u", whole,
                  none, prefix, holes);
    free(zero);
    free(p);
}
END_TEST

/* A directory is an entry of its parent: lost with everything in it unless
 * the parent was synced, even when the directory itself was. */
START_TEST(test_mkdir_needs_parent_sync)
{
    for (int synced = 0; synced < 2; synced++) {
        struct vfs *v = vfs_fault_new(vfs_posix());
        char *sub, *p;
        ck_assert_int_ge(asprintf(&sub, "%s/m%d", scratch, synced), 0);
        ck_assert_int_eq(vfs_mkdir(v, sub), 0);
        p = path_in(sub, "f");
        struct vfs_file *h = xopen(v, p, VFS_O_CREATE);
        xwrite(h, "inside", 0);
        ck_assert_int_eq(vfs_fsync(h), 0);
        ck_assert_int_eq(vfs_close(h), 0);
        ck_assert_int_eq(vfs_sync_dir(v, sub), 0);
        if (synced)
            ck_assert_int_eq(vfs_sync_dir(v, scratch), 0);
        ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, 5), 0);
        ck_assert_int_eq(file_exists(sub), synced);
        if (synced)
            expect_str(p, "inside");
        vfs_destroy(v);
        free(p);
        free(sub);
    }
}
END_TEST

/* A crash armed at an O_DSYNC write comes while it is in flight: the write
 * may be lost, kept or torn (it never returned). */
START_TEST(test_crash_during_dsync_write)
{
    char *p = path_in(scratch, "ds");
    uint8_t *zero = calloc(1, 8192), data[4096];
    unsigned kept = 0, lost = 0, torn = 0;
    memset(data, 0x5a, sizeof data);
    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct vfs *v = vfs_fault_new(vfs_posix());
        prepare(p, zero, 8192);
        struct vfs_file *h = xopen(v, p, VFS_O_DSYNC);
        vfs_fault_crash_at(v, 1, VFS_CRASH_TORN, seed);
        ck_assert_int_eq(vfs_pwrite(h, data, sizeof data, 1024), -EIO);
        ck_assert_int_eq(vfs_fault_crashed(v), 1);
        vfs_close(h);
        vfs_destroy(v);
        uint8_t *got;
        size_t len, n = 0;
        ck_assert_int_eq(tu_read_file(p, &got, &len), 0);
        for (size_t j = 0; j < sizeof data; j++)
            n += got[1024 + j] == 0x5a;
        kept += n == sizeof data;
        lost += n == 0;
        torn += n > 0 && n < sizeof data;
        free(got);
    }
    ck_assert_msg(kept && lost && torn, "kept %u lost %u torn %u", kept, lost, torn);
    free(zero);
    free(p);
}
END_TEST

/* kill is a process crash: every later call fails, nothing is undone.
 * Stacked on a second fault layer (the machine), a power failure after it
 * still loses what was never synced. */
START_TEST(test_kill_then_power_failure)
{
    char *p = path_in(scratch, "k"), *q = path_in(scratch, "k2");
    prepare_str(p, "old old");
    prepare_str(q, "old old");
    struct vfs *machine = vfs_fault_new(vfs_posix());
    struct vfs *proc = vfs_fault_new(machine);
    struct vfs_file *h = xopen(proc, p, 0), *h2 = xopen(proc, q, 0);
    xwrite(h, "new", 0);
    xwrite(h2, "new", 0);
    ck_assert_int_eq(vfs_fdatasync(h2), 0);
    vfs_fault_kill(proc);
    ck_assert_int_eq(vfs_pwrite(h, "xyz", 3, 4), -EIO);
    ck_assert_int_eq(vfs_fdatasync(h), -EIO);
    expect_str(p, "new old"); /* the page cache keeps it */
    vfs_close(h);
    vfs_close(h2);
    vfs_destroy(proc);
    ck_assert_int_eq(vfs_fault_crash(machine, VFS_CRASH_DROP, 3), 0);
    expect_str(p, "old old"); /* never synced */
    expect_str(q, "new old"); /* synced before the kill */
    vfs_destroy(machine);

    /* kill_at: the n-th operation from now is the first to fail */
    struct vfs *v = vfs_fault_new(vfs_posix());
    h = xopen(v, p, 0);
    vfs_fault_kill_at(v, 2);
    xwrite(h, "abc", 0);
    ck_assert_int_eq(vfs_pwrite(h, "def", 3, 0), -EIO);
    expect_str(p, "abc old");
    vfs_close(h);
    vfs_destroy(v);
    free(p);
    free(q);
}
END_TEST

/* Every kind of call can be made to fail, and then does nothing. */
START_TEST(test_fail_every_kind_of_call)
{
    char *p = path_in(scratch, "e"), *q = path_in(scratch, "e2"), *d = path_in(scratch, "edir");
    struct vfs *v = vfs_fault_new(vfs_posix());
    struct vfs_file *h;
    char buf[16];
    size_t n;
    uint64_t size;

    prepare_str(p, "0123456789");
    vfs_fault_fail(v, VFS_FAULT_OPEN, 1, -EMFILE);
    ck_assert_int_eq(vfs_open(v, q, VFS_O_CREATE, VFS_CLASS_DATA, &h), -EMFILE);
    ck_assert_int_eq(file_exists(q), 0);
    h = xopen(v, p, 0);
    vfs_fault_fail(v, VFS_FAULT_READ, 1, -EIO);
    ck_assert_int_eq(vfs_pread(h, buf, 4, 0, &n), -EIO);
    ck_assert_int_eq(vfs_pread(h, buf, 4, 0, &n), 0);
    vfs_fault_fail(v, VFS_FAULT_FALLOCATE, 1, -ENOSPC);
    ck_assert_int_eq(vfs_fallocate(h, 0, 1 << 20), -ENOSPC);
    vfs_fault_fail(v, VFS_FAULT_TRUNCATE, 1, -EIO);
    ck_assert_int_eq(vfs_truncate(h, 2), -EIO);
    ck_assert_int_eq(vfs_size(h, &size), 0);
    ck_assert_uint_eq(size, 10);
    vfs_fault_fail(v, VFS_FAULT_SYNC, 1, -EIO);
    ck_assert_int_eq(vfs_fsync(h), -EIO);
    vfs_close(h);
    vfs_fault_fail(v, VFS_FAULT_RENAME, 1, -EXDEV);
    ck_assert_int_eq(vfs_rename(v, p, q), -EXDEV);
    ck_assert_int_eq(file_exists(p), 1);
    vfs_fault_fail(v, VFS_FAULT_UNLINK, 1, -EBUSY);
    ck_assert_int_eq(vfs_unlink(v, p), -EBUSY);
    ck_assert_int_eq(file_exists(p), 1);
    vfs_fault_fail(v, VFS_FAULT_MKDIR, 1, -ENOSPC);
    ck_assert_int_eq(vfs_mkdir(v, d), -ENOSPC);
    ck_assert_int_eq(file_exists(d), 0);
    /* a failed directory sync leaves the new name unsynced: a crash takes it */
    h = xopen(v, q, VFS_O_CREATE);
    ck_assert_int_eq(vfs_fsync(h), 0);
    vfs_close(h);
    vfs_fault_fail(v, VFS_FAULT_SYNC_DIR, 1, -EIO);
    ck_assert_int_eq(vfs_sync_dir(v, scratch), -EIO);
    ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, 1), 0);
    ck_assert_int_eq(file_exists(q), 0);
    vfs_destroy(v);
    free(p);
    free(q);
    free(d);
}
END_TEST

/* Ring chains are independent: a later chain may finish, its sync
 * included, before an earlier one has written anything; a crash then loses
 * the earlier write although a later sync completed. */
START_TEST(test_ring_chains_overtake)
{
    char *p = path_in(scratch, "ring");
    uint8_t *zero = calloc(1, 8192), a[4096], b[4096];
    unsigned overtaken = 0;
    memset(a, 'a', sizeof a);
    memset(b, 'b', sizeof b);
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct vfs *v = vfs_fault_new(vfs_posix());
        struct vfs_ring *r;
        prepare(p, zero, 8192);
        vfs_fault_ring_seed(v, seed);
        struct vfs_file *h = xopen(v, p, 0);
        ck_assert_int_eq(vfs_ring_open(v, 4, &r), 0);
        struct vfs_io ca[2] = {{.op = VFS_IO_WRITE, .f = h, .buf = a, .len = sizeof a, .off = 0},
                               {.op = VFS_IO_FDATASYNC, .f = h}};
        struct vfs_io cb[2] = {{.op = VFS_IO_WRITE, .f = h, .buf = b, .len = sizeof b, .off = 4096},
                               {.op = VFS_IO_FDATASYNC, .f = h}};
        ca[0].result = ca[1].result = cb[0].result = cb[1].result = 12345; /* not run yet */
        ck_assert_int_eq(vfs_ring_submit(r, ca, 2, 1), 0);
        ck_assert_int_eq(vfs_ring_submit(r, cb, 2, 2), 0);
        if (ca[0].result == 12345 && cb[1].result == 0) {
            /* b is durable, a has not happened: a power failure now */
            ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, seed), 0);
            uint8_t *got;
            size_t len;
            ck_assert_int_eq(tu_read_file(p, &got, &len), 0);
            ck_assert_mem_eq(got + 4096, b, sizeof b);
            ck_assert_mem_eq(got, zero, 4096);
            free(got);
            overtaken++;
        }
        uint64_t tag;
        struct vfs_io *ios;
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(vfs_ring_reap(r, 1, &tag, &ios), 1);
        vfs_ring_close(r);
        vfs_close(h);
        vfs_destroy(v);
    }
    ck_assert_msg(overtaken > 0, "no later chain ever finished before an earlier one");
    free(zero);
    free(p);
}
END_TEST

START_TEST(test_reorder_keeps_later_drops_earlier)
{
    char *p = path_in(scratch, "r");
    uint8_t zero[8192] = {0};
    uint64_t base = tu_seed(2000), iters = tu_iterations(64);
    int later_only = 0, both = 0, neither = 0;
    char w1[2048], w2[2048];

    memset(w1, '1', sizeof w1);
    memset(w2, '2', sizeof w2);
    for (uint64_t it = 0; it < iters; it++) {
        uint64_t seed = base + it;
        struct vfs *v = vfs_fault_new(vfs_posix());
        struct vfs_file *h;
        uint8_t *got;
        size_t len;

        prepare(p, zero, sizeof zero);
        h = xopen(v, p, 0);
        ck_assert_int_eq(vfs_pwrite(h, w1, sizeof w1, 100), 0);
        ck_assert_int_eq(vfs_pwrite(h, w2, sizeof w2, 4000), 0);
        ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_REORDER, seed), 0);
        vfs_close(h);
        vfs_destroy(v);

        ck_assert_int_eq(tu_read_file(p, &got, &len), 0);
        ck_assert_msg(len == sizeof zero, "seed %llu", (unsigned long long)seed);
        int k1 = !memcmp(got + 100, w1, sizeof w1), k2 = !memcmp(got + 4000, w2, sizeof w2);
        ck_assert_msg(k1 || !memcmp(got + 100, zero, sizeof w1), "seed %llu: w1 partial",
                      (unsigned long long)seed);
        ck_assert_msg(k2 || !memcmp(got + 4000, zero, sizeof w2), "seed %llu: w2 partial",
                      (unsigned long long)seed);
        later_only += k2 && !k1;
        both += k1 && k2;
        neither += !k1 && !k2;
        free(got);
    }
    ck_assert_msg(later_only > 0, "no seed kept the later write alone");
    ck_assert_int_gt(both, 0);
    ck_assert_int_gt(neither, 0);
    free(p);
}
END_TEST

/* A mixed workload with a crash at the end; used twice per seed. */
static void workload(const char *dir, uint64_t wseed, enum vfs_crash_model m, uint64_t cseed)
{
    char *pbase = path_in(dir, "base"), *pnew = path_in(dir, "new"), *pvic = path_in(dir, "victim");
    char *pmov = path_in(dir, "moved"), *pgone = path_in(dir, "gone");
    uint8_t buf[3000];
    struct vfs *v = vfs_fault_new(vfs_posix());
    struct vfs_file *fb, *fn;
    uint64_t rng = wseed;

    memset(buf, 'b', sizeof buf);
    prepare(pbase, buf, sizeof buf);
    prepare_str(pvic, "victim");
    prepare_str(pgone, "gone");
    fb = xopen(v, pbase, 0);
    fn = xopen(v, pnew, VFS_O_CREATE);
    for (int i = 0; i < 40; i++) {
        struct vfs_file *f = tu_range(&rng, 2) ? fb : fn;
        uint64_t off = tu_range(&rng, 16384);
        size_t len = 1 + (size_t)tu_range(&rng, sizeof buf);
        for (size_t j = 0; j < len; j++)
            buf[j] = (uint8_t)tu_rand(&rng);
        ck_assert_int_eq(vfs_pwrite(f, buf, len, off), 0);
        if (tu_range(&rng, 6) == 0)
            ck_assert_int_eq(vfs_fdatasync(f), 0);
        if (i == 10)
            ck_assert_int_eq(vfs_truncate(fb, tu_range(&rng, 8000)), 0);
        if (i == 20)
            ck_assert_int_eq(vfs_sync_dir(v, dir), 0);
        if (i == 25)
            ck_assert_int_eq(vfs_rename(v, pvic, pmov), 0);
        if (i == 30)
            ck_assert_int_eq(vfs_unlink(v, pgone), 0);
    }
    ck_assert_int_eq(vfs_fault_crash(v, m, cseed), 0);
    vfs_close(fb);
    vfs_close(fn);
    vfs_destroy(v);
    free(pbase);
    free(pnew);
    free(pvic);
    free(pmov);
    free(pgone);
}

START_TEST(test_deterministic_for_a_seed)
{
    static const char *names[] = {"base", "new", "victim", "moved", "gone"};
    uint64_t base = tu_seed(3000), iters = tu_iterations(30);

    for (uint64_t it = 0; it < iters; it++) {
        uint64_t seed = base + it;
        enum vfs_crash_model m = (enum vfs_crash_model)(it % 3);
        char *d1 = tu_mkdtemp("det1"), *d2 = tu_mkdtemp("det2");
        workload(d1, 77, m, seed);
        workload(d2, 77, m, seed);
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            char *p1 = path_in(d1, names[k]), *p2 = path_in(d2, names[k]);
            int e1 = file_exists(p1), e2 = file_exists(p2);
            ck_assert_msg(e1 == e2, "seed %llu model %s: %s exists %d vs %d", (unsigned long long)seed,
                          vfs_crash_model_name(m), names[k], e1, e2);
            if (e1 == 1) {
                uint8_t *b1, *b2;
                size_t l1, l2;
                ck_assert_int_eq(tu_read_file(p1, &b1, &l1), 0);
                ck_assert_int_eq(tu_read_file(p2, &b2, &l2), 0);
                ck_assert_msg(l1 == l2 && !memcmp(b1, b2, l1), "seed %llu model %s: %s differs",
                              (unsigned long long)seed, vfs_crash_model_name(m), names[k]);
                free(b1);
                free(b2);
            }
            free(p1);
            free(p2);
        }
        if (m == VFS_CRASH_DROP) { /* DROP: namespace back to the sync at i == 20 */
            char *pv = path_in(d1, "victim"), *pg = path_in(d1, "gone"), *pn = path_in(d1, "new");
            ck_assert_msg(file_exists(pv) == 1 && file_exists(pg) == 1 && file_exists(pn) == 1,
                          "seed %llu", (unsigned long long)seed);
            free(pv);
            free(pg);
            free(pn);
        }
        tu_rmdir(d1);
        tu_rmdir(d2);
        free(d1);
        free(d2);
    }
}
END_TEST

START_TEST(test_fail_sync_fsyncgate)
{
    char *p = path_in(scratch, "f"), *q = path_in(scratch, "d");
    struct vfs *v = vfs_fault_new(vfs_posix());
    struct vfs_file *h, *hd;
    char want[64];

    prepare_str(p, "0123456789abcdefghij");
    prepare_str(q, "dsync-old");
    h = xopen(v, p, 0);
    xwrite(h, "DOOM", 0);
    vfs_fault_fail_sync(v, 2, -EIO);
    ck_assert_int_eq(vfs_fdatasync(h), 0); /* the first sync from now succeeds */
    xwrite(h, "LOST", 4);
    ck_assert_int_eq(vfs_fsync(h), -EIO);  /* the second fails */
    ck_assert_int_eq(vfs_fsync(h), 0);     /* disarmed: a retry "succeeds" */
    xwrite(h, "KEPT", 12);
    ck_assert_int_eq(vfs_fdatasync(h), 0);
    xwrite(h, "gone", 16);

    /* an O_DSYNC write is a sync too */
    hd = xopen(v, q, VFS_O_DSYNC);
    vfs_fault_fail_sync(v, 1, -EIO);
    ck_assert_int_eq(vfs_pwrite(hd, "DSYNC", 5, 0), -EIO);
    ck_assert_int_eq(vfs_pwrite(hd, "ok", 2, 6), 0);

    ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, 5), 0);
    snprintf(want, sizeof want, "DOOM456789abKEPTghij");
    expect_str(p, want);
    expect_str(q, "dsync-okd"); /* the failed O_DSYNC write is lost, the next one kept */
    vfs_close(h);
    vfs_close(hd);
    vfs_destroy(v);

    /* doomed writes are lost under every model, over many seeds */
    uint64_t base = tu_seed(4000), iters = tu_iterations(40);
    for (uint64_t it = 0; it < iters; it++) {
        uint64_t seed = base + it;
        prepare_str(p, "0123456789abcdefghij");
        v = vfs_fault_new(vfs_posix());
        h = xopen(v, p, 0);
        xwrite(h, "DOOM", 0);
        vfs_fault_fail_sync(v, 1, -EIO);
        ck_assert_int_eq(vfs_fdatasync(h), -EIO);
        xwrite(h, "KEPT", 12);
        ck_assert_int_eq(vfs_fdatasync(h), 0);
        ck_assert_int_eq(vfs_fault_crash(v, (enum vfs_crash_model)(it % 3), seed), 0);
        vfs_close(h);
        vfs_destroy(v);
        uint8_t *got;
        size_t len;
        ck_assert_int_eq(tu_read_file(p, &got, &len), 0);
        ck_assert_msg(len == 20 && !memcmp(got, "0123456789abKEPTghij", 20), "seed %llu model %s",
                      (unsigned long long)seed, vfs_crash_model_name((enum vfs_crash_model)(it % 3)));
        free(got);
    }
    free(p);
    free(q);
}
END_TEST

START_TEST(test_fail_write_enospc)
{
    char *p = path_in(scratch, "f");
    struct vfs *v = vfs_fault_new(vfs_posix());
    struct vfs_file *h;
    struct vfs_counters c;
    uint64_t size;

    prepare_str(p, "abc");
    h = xopen(v, p, 0);
    vfs_fault_fail_write(v, 2, -ENOSPC);
    xwrite(h, "X", 0);
    ck_assert_int_eq(vfs_pwrite(h, "a much longer write", 19, 1), -ENOSPC);
    ck_assert_int_eq(vfs_size(h, &size), 0);
    ck_assert_uint_eq(size, 3);
    expect_str(p, "Xbc");
    xwrite(h, "YZ", 1); /* fired once, then disarmed */
    expect_str(p, "XYZ");
    vfs_fault_fail_write(v, 1, -ENOSPC);
    vfs_fault_fail_write(v, 0, 0); /* 0 disarms */
    xwrite(h, "!", 3);
    expect_str(p, "XYZ!");
    vfs_counters_get(v, VFS_CLASS_DATA, &c);
    ck_assert_uint_eq(c.writes, 3);
    ck_assert_uint_eq(c.write_bytes, 4);
    ck_assert_int_eq(vfs_close(h), 0);
    vfs_destroy(v);
    free(p);
}
END_TEST

/* A fixed sequence of 12 operations; returns the index (1-based) of the
 * first one that failed, 0 if none did. */
static int ops_script(struct vfs *v, const char *dir, const char *p)
{
    struct vfs_file *h = NULL;
    uint64_t size;
    size_t n;
    char buf[8];
    int rc[12], k = 0;

    rc[k++] = vfs_open(v, p, VFS_O_CREATE, VFS_CLASS_WAL, &h);
    if (rc[0]) /* no handle: the rest of the handle ops cannot be tried */
        return 1;
    rc[k++] = vfs_pwrite(h, "hello", 5, 0);
    rc[k++] = vfs_fsync(h);
    rc[k++] = vfs_sync_dir(v, dir);
    rc[k++] = vfs_pwrite(h, "world", 5, 5);
    rc[k++] = vfs_pread(h, buf, 5, 0, &n);
    rc[k++] = vfs_size(h, &size);
    rc[k++] = vfs_exists(v, p) == 1 ? 0 : -EIO;
    rc[k++] = vfs_fdatasync(h);
    rc[k++] = vfs_truncate(h, 3);
    rc[k++] = vfs_fallocate(h, 0, 4096);
    rc[k++] = vfs_close(h);
    for (int i = 0; i < k; i++) {
        if (rc[i]) {
            for (int j = i; j < k; j++)
                ck_assert_msg(rc[j] == -EIO, "op %d after crash returned %d", j + 1, rc[j]);
            return i + 1;
        }
    }
    return 0;
}

START_TEST(test_crash_at_exact_op)
{
    for (uint64_t n = 1; n <= 13; n++) {
        char *sub, *p;
        int crashes = n <= 12;
        ck_assert_int_ge(asprintf(&sub, "%s/s%llu", scratch, (unsigned long long)n), 0);
        ck_assert_int_eq(vfs_mkdir(vfs_posix(), sub), 0);
        p = path_in(sub, "wal");
        struct vfs *v = vfs_fault_new(vfs_posix());
        vfs_fault_crash_at(v, crashes ? n : 1000, VFS_CRASH_DROP, n);
        int first = ops_script(v, sub, p);
        ck_assert_msg(first == (crashes ? (int)n : 0), "crash_at %llu hit op %d",
                      (unsigned long long)n, first);
        ck_assert_int_eq(vfs_fault_crashed(v), crashes);
        ck_assert_uint_eq(vfs_fault_ops(v), n == 1 ? 1 : 12);
        ck_assert_int_eq(vfs_exists(v, p), crashes ? -EIO : 1);
        ck_assert_uint_eq(vfs_fault_ops(v), n == 1 ? 2 : 13);
        /* what the crash left: the name is durable after op 4 (sync_dir),
         * "hello" after op 3 (fsync), "world" after op 9 (fdatasync) */
        if (crashes) {
            if (n <= 4)
                ck_assert_msg(file_exists(p) == 0, "crash_at %llu", (unsigned long long)n);
            else if (n <= 9)
                expect_str(p, "hello");
            else
                expect_str(p, "helloworld");
        }
        vfs_destroy(v);
        free(p);
        free(sub);
    }
}
END_TEST

static int count_names(void *arg, const char *name)
{
    (void)name;
    ++*(int *)arg;
    return 0;
}

START_TEST(test_counters_and_list)
{
    char *p = path_in(scratch, "w"), *q = path_in(scratch, "m");
    struct vfs *v = vfs_fault_new(vfs_posix());
    struct vfs_file *h, *hm;
    struct vfs_counters c;
    struct vfs_io ios[3];
    int names = 0;
    char buf[16];
    size_t n;

    ck_assert_int_eq(vfs_open(v, p, VFS_O_CREATE, VFS_CLASS_WAL, &h), 0);
    ck_assert_int_eq(vfs_open(v, q, VFS_O_CREATE | VFS_O_DSYNC, VFS_CLASS_META, &hm), 0);
    memset(ios, 0, sizeof ios);
    ios[0] = (struct vfs_io){.op = VFS_IO_WRITE, .f = h, .buf = "abcdef", .len = 6, .off = 0};
    ios[1] = (struct vfs_io){.op = VFS_IO_FDATASYNC, .f = h};
    ios[2] = (struct vfs_io){.op = VFS_IO_FSYNC, .f = h};
    ck_assert_int_eq(vfs_submit_sequential(v, ios, 3), 0);
    ck_assert_int_eq(vfs_pread(h, buf, sizeof buf, 2, &n), 0);
    ck_assert_uint_eq(n, 4);
    xwrite(hm, "meta", 0);
    vfs_counters_get(v, VFS_CLASS_WAL, &c);
    ck_assert_uint_eq(c.writes, 1);
    ck_assert_uint_eq(c.write_bytes, 6);
    ck_assert_uint_eq(c.reads, 1);
    ck_assert_uint_eq(c.read_bytes, 4);
    ck_assert_uint_eq(c.fdatasyncs, 1);
    ck_assert_uint_eq(c.fsyncs, 1);
    vfs_counters_get(v, VFS_CLASS_META, &c);
    ck_assert_uint_eq(c.dsync_writes, 1);
    ck_assert_uint_eq(c.writes, 1);
    ck_assert_int_eq(vfs_list(v, scratch, count_names, &names), 0);
    ck_assert_int_eq(names, 2);
    ck_assert_int_eq(vfs_close(h), 0);
    ck_assert_int_eq(vfs_close(hm), 0);
    vfs_destroy(v);
    free(p);
    free(q);
}
END_TEST

/* ---- threads ------------------------------------------------------------ */

#define MT_THREADS 4
#define MT_BLOCKS 60
#define MT_BS 512

struct mt_arg {
    struct vfs *v;
    struct vfs_file *f;
    int id;
    int synced; /* blocks known durable */
};

static void *mt_main(void *argp)
{
    struct mt_arg *a = argp;
    uint8_t blk[MT_BS];
    for (int i = 0; i < MT_BLOCKS; i++) {
        memset(blk, (i + 1) ^ (a->id << 6), sizeof blk);
        if (vfs_pwrite(a->f, blk, sizeof blk, (uint64_t)i * MT_BS))
            return (void *)1;
        if (i % 3 == 2 && i < MT_BLOCKS - 2) {
            int rc = (a->id & 1) ? vfs_fsync(a->f) : vfs_fdatasync(a->f);
            if (rc)
                return (void *)1;
            a->synced = i + 1;
        }
        if (i % 10 == 0) {
            uint64_t size;
            if (vfs_size(a->f, &size) || vfs_exists(a->v, "/") != 1)
                return (void *)1;
        }
    }
    return NULL;
}

START_TEST(test_threads_smoke)
{
    struct vfs *v = vfs_fault_new(vfs_posix());
    pthread_t th[MT_THREADS];
    struct mt_arg args[MT_THREADS];
    char *paths[MT_THREADS];

    for (int t = 0; t < MT_THREADS; t++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", t);
        paths[t] = path_in(scratch, name);
        args[t] = (struct mt_arg){.v = v, .id = t};
        args[t].f = xopen(v, paths[t], VFS_O_CREATE);
    }
    ck_assert_int_eq(vfs_sync_dir(v, scratch), 0);
    for (int t = 0; t < MT_THREADS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, mt_main, &args[t]), 0);
    for (int t = 0; t < MT_THREADS; t++) {
        void *ret;
        ck_assert_int_eq(pthread_join(th[t], &ret), 0);
        ck_assert_ptr_null(ret);
    }
    ck_assert_int_eq(vfs_fault_crash(v, VFS_CRASH_DROP, 11), 0);
    for (int t = 0; t < MT_THREADS; t++) {
        uint8_t *got;
        size_t len;
        ck_assert_int_eq(tu_read_file(paths[t], &got, &len), 0);
        ck_assert_uint_eq(len, (size_t)args[t].synced * MT_BS);
        for (size_t i = 0; i < len; i++)
            ck_assert_uint_eq(got[i], (uint8_t)((i / MT_BS + 1) ^ ((unsigned)t << 6)));
        free(got);
        vfs_close(args[t].f);
        free(paths[t]);
    }
    vfs_destroy(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("vfs_fault");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_model_names);
    tcase_add_test(tc, test_drop_loses_unsynced_keeps_synced);
    tcase_add_test(tc, test_created_file_needs_sync_dir);
    tcase_add_test(tc, test_unlink_rename_reverted);
    tcase_add_test(tc, test_torn_outcomes);
    tcase_add_test(tc, test_mkdir_needs_parent_sync);
    tcase_add_test(tc, test_crash_during_dsync_write);
    tcase_add_test(tc, test_kill_then_power_failure);
    tcase_add_test(tc, test_fail_every_kind_of_call);
    tcase_add_test(tc, test_ring_chains_overtake);
    tcase_add_test(tc, test_reorder_keeps_later_drops_earlier);
    tcase_add_test(tc, test_deterministic_for_a_seed);
    tcase_add_test(tc, test_fail_sync_fsyncgate);
    tcase_add_test(tc, test_fail_write_enospc);
    tcase_add_test(tc, test_crash_at_exact_op);
    tcase_add_test(tc, test_counters_and_list);
    tcase_add_test(tc, test_threads_smoke);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
