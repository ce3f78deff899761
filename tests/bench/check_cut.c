/*
 * check_cut.c -- the power cut of `crash --mode cut`, its mechanism alone:
 * a child arms the undo journal (bench/interpose/cut_journal.c) over a
 * directory, makes file calls and is killed; the parent rolls the
 * directory back (bench/crash/crash_cut.c) and every file and name must be
 * as its last sync left it: unsynced writes (pwrite, write, writev,
 * pwritev), extensions and truncations undone, O_DSYNC, O_SYNC and
 * RWF_DSYNC writes kept, names created, renamed or unlinked since their
 * directory's last fsync undone, durable ones kept.
 * A journal whose last record is cut off is still applied; a call the cut
 * cannot model, and the journal's bound, fail with their names.  Writes
 * the journal did not see -- a raw system call's, a shared writable
 * mapping's, a file made past the interposed calls -- fail the cut,
 * naming the file, before anything is rolled back; the engine's declared
 * shared memory, stdio streams that append, allocations, and a kill
 * inside a journaled call do not.  Several processes that share the
 * journal (forked by the armed one, as a server's are) have one order: a
 * sync by any of them keeps every earlier write to the file, whoever made
 * it, and no later one; racing syncs keep the later snapshot's size.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crash.h"
#include "cut_journal.h"
#include "testutil.h"

static char *root;
static char db[4096], jdir[4096];
static const char *const *shared; /* the engine's shared memory, as bench_cut_arm takes it */

static void path(char *out, const char *name) { snprintf(out, 4200, "%s/%s", db, name); }

/* A file of n bytes of c, as the baseline (durable at arming). */
static void make_file(const char *name, char c, size_t n)
{
    char p[4200];
    path(p, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    char *buf = malloc(n + 1);
    memset(buf, c, n);
    ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
    free(buf);
    close(fd);
}

/* The file's contents; its size in *n; NULL when it does not exist. */
static char *slurp(const char *name, size_t *n)
{
    char p[4200];
    path(p, name);
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    char *buf = malloc((size_t)st.st_size + 1);
    ck_assert_int_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
    close(fd);
    *n = (size_t)st.st_size;
    return buf;
}

/* [a, b) of name is all c. */
static void expect_range(const char *name, size_t a, size_t b, char c)
{
    size_t n;
    char *buf = slurp(name, &n);
    ck_assert_msg(buf != NULL, "%s is missing", name);
    ck_assert_msg(b <= n, "%s: %zu bytes, want at least %zu", name, n, b);
    for (size_t i = a; i < b; i++)
        ck_assert_msg(buf[i] == c, "%s: byte %zu is 0x%02x, want 0x%02x", name, i, (unsigned char)buf[i],
                      (unsigned char)c);
    free(buf);
}

static void expect_size(const char *name, size_t want)
{
    size_t n;
    char *buf = slurp(name, &n);
    ck_assert_msg(buf != NULL, "%s is missing", name);
    ck_assert_msg(n == want, "%s: %zu bytes, want %zu", name, n, want);
    free(buf);
}

static void expect_absent(const char *name)
{
    char p[4200];
    path(p, name);
    ck_assert_msg(access(p, F_OK) != 0, "%s exists; the cut should have undone it", name);
}

static void fresh(void)
{
    shared = NULL;
    if (root) {
        tu_rmdir(root);
        free(root);
    }
    root = tu_mkdtemp("cut");
    snprintf(db, sizeof db, "%s/db", root);
    snprintf(jdir, sizeof jdir, "%s/journal", root);
    ck_assert_int_eq(mkdir(db, 0755), 0);
    ck_assert_int_eq(mkdir(jdir, 0755), 0);
}

/* Runs body in an armed child and kills it; the journal stays in jdir. */
static void run_killed(void (*body)(void), uint64_t max)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char err[200];
        if (bench_cut_arm(db, jdir, max, shared, err, sizeof err)) {
            fprintf(stderr, "arm: %s\n", err);
            _exit(3);
        }
        body();
        raise(SIGKILL);
        _exit(4);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child did not die of SIGKILL: %d", status);
}

/* Runs body in an armed child, kills it, rolls back; the rollback's result. */
static int cut(void (*body)(void), uint64_t max, struct crash_cut_stats *st, char *why, size_t wlen)
{
    run_killed(body, max);
    why[0] = 0;
    return crash_cut_rollback(db, jdir, 0, st, why, wlen);
}

static int openf(const char *name, int flags)
{
    char p[4200];
    path(p, name);
    int fd = open(p, flags, 0644);
    if (fd < 0)
        _exit(10);
    return fd;
}

static void fill(int fd, char c, size_t off, size_t n)
{
    char buf[65536];
    memset(buf, c, sizeof buf);
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof buf ? n - done : sizeof buf;
        if (pwrite(fd, buf, k, (off_t)(off + done)) != (ssize_t)k)
            _exit(11);
        done += k;
    }
}

static void dirsync(void)
{
    int fd = open(db, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || fsync(fd))
        _exit(12);
    close(fd);
}

/* ---- data ---------------------------------------------------------------- */

static void body_data(void)
{
    /* a: overwritten and extended, never synced */
    int fd = openf("a", O_WRONLY);
    fill(fd, 'b', 0, 100);
    fill(fd, 'c', 50, 100); /* over bytes already changed: the oldest undo wins */
    fill(fd, 'd', 8192, 1000);
    close(fd);
    /* s: a sync, then more */
    fd = openf("s", O_WRONLY);
    fill(fd, 'x', 100, 100);
    if (fdatasync(fd))
        _exit(13);
    fill(fd, 'y', 150, 100);
    fill(fd, 'y', 8192, 10);
    close(fd);
    /* w: write() and writev() at the file offset, O_APPEND */
    fd = openf("w", O_WRONLY);
    if (lseek(fd, 10, SEEK_SET) != 10 || write(fd, "zzzz", 4) != 4)
        _exit(14);
    struct iovec iov[2] = {{"qq", 2}, {"qq", 2}};
    if (writev(fd, iov, 2) != 4)
        _exit(15);
    close(fd);
    fd = openf("w", O_WRONLY | O_APPEND);
    if (write(fd, "appended", 8) != 8)
        _exit(16);
    close(fd);
}

START_TEST(test_data)
{
    fresh();
    make_file("a", 'A', 8192);
    make_file("s", 'S', 8192);
    make_file("w", 'W', 100);
    struct crash_cut_stats st;
    char why[300];
    ck_assert_msg(cut(body_data, CUT_MAX_DEFAULT, &st, why, sizeof why) == 0, "%s", why);
    expect_size("a", 8192);
    expect_range("a", 0, 8192, 'A');
    expect_size("s", 8192); /* the size synced, not the size at the kill */
    expect_range("s", 0, 100, 'S');
    expect_range("s", 100, 200, 'x');
    expect_range("s", 200, 8192, 'S');
    expect_size("w", 100);
    expect_range("w", 0, 100, 'W');
    ck_assert_int_eq(st.torn, 0);
    ck_assert_uint_gt(st.bytes_restored, 0);
}
END_TEST

/* ---- pwritev -------------------------------------------------------------------- */

/* Several buffers at an offset: undone unless synced, as a pwrite. */
static void body_pwritev(void)
{
    char one[50], two[70], three[30];
    memset(one, '1', sizeof one);
    memset(two, '2', sizeof two);
    memset(three, '3', sizeof three);
    int fd = openf("v", O_WRONLY);
    struct iovec v[2] = {{one, sizeof one}, {two, sizeof two}};
    if (pwritev(fd, v, 2, 100) != 120 || fdatasync(fd)) /* durable */
        _exit(17);
    struct iovec w[2] = {{three, sizeof three}, {two, sizeof two}};
    if (pwritev(fd, w, 2, 150) != 100) /* over the synced bytes: undone */
        _exit(18);
    if (pwritev(fd, v, 2, 8192) != 120) /* beyond the synced size: cut back */
        _exit(19);
    /* whole blocks across several buffers, hashed from them for the check */
    static char big[16384];
    memset(big, 'b', sizeof big);
    struct iovec b[3] = {{big, 1000}, {big + 1000, 5000}, {big + 6000, 2192 + 4096 + 100}};
    if (pwritev(fd, b, 3, 16384) != 12388)
        _exit(21);
    close(fd);
}

START_TEST(test_pwritev)
{
    fresh();
    make_file("v", 'V', 8192);
    struct crash_cut_stats st;
    char why[300];
    ck_assert_msg(cut(body_pwritev, CUT_MAX_DEFAULT, &st, why, sizeof why) == 0, "%s", why);
    expect_size("v", 8192);
    expect_range("v", 0, 100, 'V');
    expect_range("v", 100, 150, '1');
    expect_range("v", 150, 220, '2');
    expect_range("v", 220, 8192, 'V');
}
END_TEST

/* ---- O_DSYNC, O_SYNC, RWF_DSYNC -------------------------------------------------------------- */

static void body_dsync(void)
{
    int fd = openf("m", O_WRONLY | O_DSYNC), plain = openf("m", O_WRONLY);
    fill(plain, 'p', 0, 1024);  /* unsynced, then partly made durable by the next */
    fill(fd, 'd', 512, 512);    /* durable once it returned */
    fill(plain, 'p', 1024, 512); /* not durable */
    char buf[512];
    memset(buf, 'r', sizeof buf);
    struct iovec v = {buf, sizeof buf};
    if (pwritev2(plain, &v, 1, 2048, RWF_DSYNC) != (ssize_t)sizeof buf)
        _exit(20);
    fill(plain, 'h', 5000, 100); /* beyond the synced size, not synced: a hole */
    fill(fd, 'e', 8192, 512);    /* durable, and so is the size up to its end */
    close(fd);
    close(plain);
    /* O_SYNC (O_DSYNC and more): its writes durable too, a plain one beside them not */
    fd = openf("o", O_WRONLY | O_SYNC);
    plain = openf("o", O_WRONLY);
    fill(fd, 's', 100, 100);
    fill(plain, 'u', 300, 100);
    fill(fd, 't', 4096, 100); /* the size up to its end, durable */
    fill(plain, 'u', 4196, 100);
    close(fd);
    close(plain);
}

START_TEST(test_dsync)
{
    fresh();
    make_file("m", 'M', 4096);
    make_file("o", 'O', 4096);
    struct crash_cut_stats st;
    char why[300];
    ck_assert_msg(cut(body_dsync, CUT_MAX_DEFAULT, &st, why, sizeof why) == 0, "%s", why);
    expect_size("o", 4196);
    expect_range("o", 0, 100, 'O');
    expect_range("o", 100, 200, 's');
    expect_range("o", 200, 4096, 'O');
    expect_range("o", 4096, 4196, 't');
    expect_size("m", 8704);
    expect_range("m", 0, 512, 'M');
    expect_range("m", 512, 1024, 'd');
    expect_range("m", 1024, 2048, 'M');
    expect_range("m", 2048, 2560, 'r');
    expect_range("m", 2560, 4096, 'M');
    expect_range("m", 4096, 8192, 0);
    expect_range("m", 8192, 8704, 'e');
}
END_TEST

/* ---- sizes ------------------------------------------------------------------------- */

static void body_sizes(void)
{
    int fd = openf("t", O_WRONLY);
    if (ftruncate(fd, 100))
        _exit(30);
    fill(fd, 'n', 100, 100);
    close(fd);
    fd = openf("u", O_WRONLY | O_TRUNC);
    fill(fd, 'n', 0, 10);
    close(fd);
    fd = openf("h", O_WRONLY);
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 4096) && errno != EOPNOTSUPP)
        _exit(31);
    if (fallocate(fd, 0, 0, 1 << 20))
        _exit(32);
    if (posix_fallocate(fd, 0, 2 << 20))
        _exit(33);
    close(fd);
}

START_TEST(test_sizes)
{
    fresh();
    make_file("t", 'T', 8192);
    make_file("u", 'U', 8192);
    make_file("h", 'H', 16384);
    struct crash_cut_stats st;
    char why[300];
    ck_assert_msg(cut(body_sizes, CUT_MAX_DEFAULT, &st, why, sizeof why) == 0, "%s", why);
    expect_size("t", 8192);
    expect_range("t", 0, 8192, 'T');
    expect_size("u", 8192);
    expect_range("u", 0, 8192, 'U');
    expect_size("h", 16384);
    expect_range("h", 0, 16384, 'H');
}
END_TEST

/* ---- names ------------------------------------------------------------------------- */

static void body_names(void)
{
    char a[4200], b[4200];
    /* durable: created, written, the file synced, then the directory */
    int fd = openf("kept", O_WRONLY | O_CREAT | O_EXCL);
    fill(fd, 'k', 0, 300);
    if (fsync(fd))
        _exit(40);
    close(fd);
    path(a, "x");
    path(b, "x2");
    if (rename(a, b)) /* before the directory's sync: durable */
        _exit(41);
    dirsync();
    /* not durable: after the directory's last sync */
    fd = openf("lost", O_WRONLY | O_CREAT | O_EXCL);
    fill(fd, 'l', 0, 300);
    if (fsync(fd)) /* the file synced, its name not */
        _exit(42);
    close(fd);
    path(a, "y");
    path(b, "y2");
    if (rename(a, b))
        _exit(43);
    path(a, "p");
    path(b, "q");
    if (rename(a, b)) /* p over q */
        _exit(44);
    path(a, "gone");
    if (unlink(a))
        _exit(45);
    path(a, "sub");
    if (mkdir(a, 0755))
        _exit(46);
    fd = openf("sub/f", O_WRONLY | O_CREAT);
    close(fd);
}

START_TEST(test_names)
{
    fresh();
    make_file("x", 'X', 10);
    make_file("y", 'Y', 20);
    make_file("p", 'P', 30);
    make_file("q", 'Q', 40);
    make_file("gone", 'G', 50);
    struct crash_cut_stats st;
    char why[300];
    ck_assert_msg(cut(body_names, CUT_MAX_DEFAULT, &st, why, sizeof why) == 0, "%s", why);
    expect_size("kept", 300);
    expect_range("kept", 0, 300, 'k');
    expect_absent("x");
    expect_range("x2", 0, 10, 'X');
    expect_absent("lost");
    expect_absent("y2");
    expect_range("y", 0, 20, 'Y');
    expect_range("p", 0, 30, 'P');
    expect_range("q", 0, 40, 'Q');
    expect_size("gone", 50);
    expect_range("gone", 0, 50, 'G');
    expect_absent("sub");
    ck_assert_uint_eq(st.names_undone, 6); /* lost, y2, p->q, gone, sub, sub/f */
}
END_TEST

/* ---- a torn last record ------------------------------------------------------------ */

START_TEST(test_torn)
{
    fresh();
    make_file("a", 'A', 8192);
    make_file("s", 'S', 8192);
    make_file("w", 'W', 100);
    struct crash_cut_stats st;
    char why[300];
    ck_assert_msg(cut(body_data, CUT_MAX_DEFAULT, &st, why, sizeof why) == 0, "%s", why);
    uint64_t records = st.records;
    /* the same calls again, and the journal as a kill in the middle of a
     * record's write leaves it: the records, then part of one more (a copy
     * of the first's start) */
    fresh();
    make_file("a", 'A', 8192);
    make_file("s", 'S', 8192);
    make_file("w", 'W', 100);
    run_killed(body_data, CUT_MAX_DEFAULT);
    char p[4300];
    snprintf(p, sizeof p, "%s/%s", jdir, CUT_JOURNAL_NAME);
    int fd = open(p, O_RDWR | O_APPEND);
    ck_assert_int_ge(fd, 0);
    char head[40];
    ck_assert_int_eq(pread(fd, head, sizeof head, 0), (ssize_t)sizeof head);
    ck_assert_int_eq(write(fd, head, sizeof head), (ssize_t)sizeof head);
    close(fd);
    /* applied up to the torn tail, which it must see */
    ck_assert_msg(crash_cut_rollback(db, jdir, 0, &st, why, sizeof why) == 0, "%s", why);
    ck_assert_int_eq(st.torn, 1);
    ck_assert_uint_eq(st.records, records);
    expect_size("a", 8192);
    expect_range("a", 0, 8192, 'A');
}
END_TEST

/* ---- what cannot be cut ---------------------------------------------------------------- */

static void body_copy(void)
{
    int in = openf("a", O_RDONLY), out = openf("b", O_WRONLY);
    copy_file_range(in, NULL, out, NULL, 100, 0);
    _exit(50); /* not reached: the journal ends the process */
}

static void body_mapped(void)
{
    int fd = openf("a", O_RDWR);
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        _exit(51);
    m[0] = 'Z';
    fsync(fd);
    _exit(52);
}

static void body_big(void)
{
    int fd = openf("a", O_WRONLY);
    fill(fd, 'z', 0, 65536);
    _exit(53);
}

START_TEST(test_refused)
{
    struct crash_cut_stats st;
    char why[300];
    fresh();
    make_file("a", 'A', 8192);
    make_file("b", 'B', 8192);
    ck_assert_int_eq(cut(body_copy, CUT_MAX_DEFAULT, &st, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "copy_file_range"), "%s", why);
    fresh();
    make_file("a", 'A', 8192);
    ck_assert_int_eq(cut(body_mapped, CUT_MAX_DEFAULT, &st, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "shared writable mapping"), "%s", why);
    fresh();
    make_file("a", 'A', 65536);
    ck_assert_int_eq(cut(body_big, 16384, &st, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "bound"), "%s", why);
}
END_TEST

/* ---- writes the journal did not see ---------------------------------------------------- */

static void body_raw_write(void)
{
    int fd = openf("a", O_WRONLY);
    fill(fd, 'j', 0, 10);                          /* journaled: explained */
    if (syscall(SYS_pwrite64, fd, "zz", 2, 5000) != 2) /* past the interposed pwrite */
        _exit(60);
    close(fd);
}

static void body_raw_append(void)
{
    int fd = openf("a", O_WRONLY);
    if (syscall(SYS_pwrite64, fd, "zz", 2, 8192) != 2) /* the size grows by a call no one saw */
        _exit(61);
    close(fd);
}

/* A journaled write after the unseen one: the size it records is its
 * own end or the one recorded before, not what the file grew to. */
static void body_raw_then_journaled(void)
{
    int fd = openf("a", O_WRONLY);
    if (syscall(SYS_pwrite64, fd, "zz", 2, 8192) != 2)
        _exit(69);
    fill(fd, 'j', 0, 10);
    close(fd);
}

static void body_raw_truncate(void)
{
    int fd = openf("a", O_WRONLY);
    if (syscall(SYS_ftruncate, fd, 4096))
        _exit(62);
    close(fd);
}

static void body_raw_create(void)
{
    char p[4200];
    path(p, "made");
    int fd = (int)syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        _exit(63);
    close(fd);
}

static void body_map_write(void)
{
    int fd = openf("a", O_RDWR);
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        _exit(64);
    m[6000] = 'Z'; /* never synced: no call the journal sees */
    close(fd);
}

/* A file of the engine's shared memory (declared), and a database file
 * written through a stdio stream that appends: neither is held to it. */
static void body_not_held(void)
{
    int fd = openf("x-shm", O_RDWR);
    char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        _exit(65);
    memset(m, 'Z', 4096);
    char p[4200];
    path(p, "LOG");
    FILE *f = fopen(p, "a");
    if (!f || fputs("an appended line\n", f) < 0 || fflush(f))
        _exit(66);
    if (ftruncate(fileno(f), 8192)) /* a journaled call after what the stream wrote */
        _exit(68);
    path(p, "LOG2");
    f = fopen(p, "w");
    if (!f || fputs("a new log\n", f) < 0 || fflush(f))
        _exit(67);
}

/* The check's message names the unseen writes and the file. */
static void expect_unseen(void (*body)(void), const char *file, const char *detail)
{
    struct crash_cut_stats st;
    char why[300], want[64];
    ck_assert_int_eq(cut(body, CUT_MAX_DEFAULT, &st, why, sizeof why), -1);
    ck_assert_msg(st.unseen, "not an unseen write: %s", why);
    ck_assert_msg(strncmp(why, CRASH_CUT_UNSEEN ": ", strlen(CRASH_CUT_UNSEEN) + 2) == 0, "%s", why);
    snprintf(want, sizeof want, ": %s", file);
    ck_assert_msg(strstr(why, want), "%s does not name %s", why, file);
    ck_assert_msg(strstr(why, detail), "%s does not say '%s'", why, detail);
}

START_TEST(test_unseen)
{
    fresh();
    make_file("a", 'A', 8192);
    expect_unseen(body_raw_write, "a: ", "bytes 4096-8191 are not what the journaled calls left");
    expect_size("a", 8192); /* nothing rolled back: the run is failed as it stands */
    expect_range("a", 0, 10, 'j');
    fresh();
    make_file("a", 'A', 8192);
    expect_unseen(body_raw_append, "a: ", "8194 bytes, where the journaled calls left 8192");
    fresh();
    make_file("a", 'A', 8192);
    expect_unseen(body_raw_then_journaled, "a: ", "8194 bytes, where the journaled calls left 8192");
    fresh();
    make_file("a", 'A', 8192);
    expect_unseen(body_raw_truncate, "a: ", "4096 bytes, where the journaled calls left 8192");
    fresh();
    expect_unseen(body_raw_create, "made: ", "a file that no journaled call made");
    fresh();
    make_file("a", 'A', 8192);
    expect_unseen(body_map_write, "a (mapped shared and writable): ", "bytes 4096-8191");
}
END_TEST

START_TEST(test_not_held)
{
    static const char *const shm[] = {"*-shm", NULL};
    struct crash_cut_stats st;
    char why[300];
    fresh();
    shared = shm;
    make_file("x-shm", 0, 4096);
    make_file("LOG", 'L', 100);
    make_file("LOG2", 'M', 100);
    ck_assert_msg(cut(body_not_held, CUT_MAX_DEFAULT, &st, why, sizeof why) == 0, "%s", why);
    ck_assert_int_eq(st.unseen, 0);
    expect_range("x-shm", 0, 4096, 'Z'); /* left as the mapping left it */
    expect_size("LOG", 100);
    expect_range("LOG", 0, 100, 'L');
    expect_size("LOG2", 100);
    expect_range("LOG2", 0, 100, 'M');
    /* the same mapping of a file not declared: held, and failed */
    fresh();
    make_file("x-shm", 0, 4096);
    make_file("LOG", 'L', 100);
    make_file("LOG2", 'M', 100);
    ck_assert_int_eq(cut(body_not_held, CUT_MAX_DEFAULT, &st, why, sizeof why), -1);
    ck_assert_msg(strstr(why, CRASH_CUT_UNSEEN ": x-shm (mapped shared and writable)"), "%s", why);
}
END_TEST

/* ---- a kill inside a journaled call ------------------------------------------------ */

static void body_one_write(void)
{
    int fd = openf("a", O_WRONLY);
    fill(fd, 'z', 100, 100);
    fill(fd, 'z', 8192, 100); /* and the size */
    close(fd);
}

/* Cuts the journal back to before its last record of type. */
static void drop_last(uint16_t type)
{
    char p[4300];
    snprintf(p, sizeof p, "%s/%s", jdir, CUT_JOURNAL_NAME);
    int fd = open(p, O_RDWR);
    ck_assert_int_ge(fd, 0);
    struct stat sb;
    ck_assert_int_eq(fstat(fd, &sb), 0);
    off_t at = -1;
    for (off_t o = 0; o + (off_t)sizeof(struct cut_rec) <= sb.st_size;) {
        struct cut_rec r;
        ck_assert_int_eq(pread(fd, &r, sizeof r, o), (ssize_t)sizeof r);
        if (r.type == type)
            at = o;
        o += r.len;
    }
    ck_assert_int_ge(at, 0);
    ck_assert_int_eq(ftruncate(fd, at), 0);
    close(fd);
}

/* Writes n bytes of c at off of name, past the journal (it is not armed here). */
static void scribble(const char *name, char c, off_t off, size_t n)
{
    char p[4200], buf[256];
    path(p, name);
    memset(buf, c, sizeof buf);
    int fd = open(p, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, buf, n, off), (ssize_t)n);
    close(fd);
}

START_TEST(test_inside_a_call)
{
    struct crash_cut_stats st;
    char why[300];
    /* the journal ending inside the last write (its read-back not yet
     * recorded) and the write half done: its bytes and the size may be
     * anything between before and after */
    fresh();
    make_file("a", 'A', 8192);
    run_killed(body_one_write, CUT_MAX_DEFAULT);
    drop_last(CUT_HASHES);
    char p[4200];
    path(p, "a");
    ck_assert_int_eq(truncate(p, 8192 + 50), 0);
    ck_assert_msg(crash_cut_rollback(db, jdir, 0, &st, why, sizeof why) == 0, "%s", why);
    ck_assert_int_eq(st.unseen, 0);
    expect_size("a", 8192);
    expect_range("a", 0, 8192, 'A');
    /* rolled back, the file is no longer what the calls left: the same
     * journal applied again sees that as unseen writes */
    ck_assert_int_eq(crash_cut_rollback(db, jdir, 0, &st, why, sizeof why), -1);
    ck_assert_msg(st.unseen && strstr(why, "a: bytes 0-4095"), "%s", why);
    /* the call under way excuses only what it may change: a block outside
     * it is still held to the last read-back */
    fresh();
    make_file("a", 'A', 8192);
    run_killed(body_one_write, CUT_MAX_DEFAULT);
    drop_last(CUT_HASHES);
    scribble("a", 'Q', 5000, 1);
    ck_assert_int_eq(crash_cut_rollback(db, jdir, 0, &st, why, sizeof why), -1);
    ck_assert_msg(st.unseen && strstr(why, "a: bytes 4096-8191"), "%s", why);
    /* the whole journal, and the size the last write left changed */
    fresh();
    make_file("a", 'A', 8192);
    run_killed(body_one_write, CUT_MAX_DEFAULT);
    path(p, "a");
    ck_assert_int_eq(truncate(p, 8192 + 50), 0);
    ck_assert_int_eq(crash_cut_rollback(db, jdir, 0, &st, why, sizeof why), -1);
    ck_assert_msg(st.unseen && strstr(why, "a: 8242 bytes, where the journaled calls left 8292"), "%s", why);
}
END_TEST

/* ---- several processes, one journal --------------------------------------------- */

/* Runs fn in a child of the armed process (a server's processes share
 * the journal so, by its shared state) and waits for it. */
static void in_child(void (*fn)(void))
{
    pid_t pid = fork();
    if (pid < 0)
        _exit(20);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        _exit(21);
}

static void sync_a(void)
{
    int fd = openf("a", O_RDONLY);
    if (fsync(fd))
        _exit(13);
    close(fd);
}

static void write_a_tail(void)
{
    int fd = openf("a", O_WRONLY);
    fill(fd, 'd', 4096, 4096);
    close(fd);
}

static void write_b(void)
{
    int fd = openf("b", O_WRONLY);
    fill(fd, 'y', 0, 4096);
    close(fd);
}

static void body_processes(void)
{
    int fd = openf("a", O_WRONLY);
    fill(fd, 'b', 0, 4096); /* its synced bytes recorded by this process */
    in_child(sync_a);       /* another process's fsync: durable */
    fill(fd, 'c', 0, 4096); /* after it: undone, though this process recorded the range before */
    in_child(write_a_tail); /* another process's write, never synced: undone */
    close(fd);
    in_child(write_b); /* another process's write, then this one's fsync: durable */
    fd = openf("b", O_RDONLY);
    if (fsync(fd))
        _exit(13);
    close(fd);
}

/* A sync of a file by any process makes every process's earlier writes
 * to it durable, and only those. */
START_TEST(test_processes)
{
    fresh();
    make_file("a", 'A', 8192);
    make_file("b", 'B', 8192);
    struct crash_cut_stats st;
    char why[300];
    ck_assert_msg(cut(body_processes, CUT_MAX_DEFAULT, &st, why, sizeof why) == 0, "%s", why);
    expect_size("a", 8192);
    expect_range("a", 0, 4096, 'b');
    expect_range("a", 4096, 8192, 'A');
    expect_size("b", 8192);
    expect_range("b", 0, 4096, 'y');
    expect_range("b", 4096, 8192, 'B');
}
END_TEST

static void body_grow_twice(void)
{
    int fd = openf("a", O_WRONLY);
    fill(fd, 'b', 0, 8192);
    if (fsync(fd))
        _exit(13);
    fill(fd, 'c', 8192, 4096);
    if (fsync(fd))
        _exit(13);
    close(fd);
}

/* Appends a copy of the journal's first record of type at its end. */
static void repeat_first(uint16_t type)
{
    char p[4300];
    snprintf(p, sizeof p, "%s/%s", jdir, CUT_JOURNAL_NAME);
    int fd = open(p, O_RDWR | O_APPEND);
    ck_assert_int_ge(fd, 0);
    struct stat sb;
    ck_assert_int_eq(fstat(fd, &sb), 0);
    for (off_t o = 0; o + (off_t)sizeof(struct cut_rec) <= sb.st_size;) {
        struct cut_rec r;
        ck_assert_int_eq(pread(fd, &r, sizeof r, o), (ssize_t)sizeof r);
        if (r.type == type) {
            char *buf = malloc(r.len);
            ck_assert_ptr_nonnull(buf);
            ck_assert_int_eq(pread(fd, buf, r.len, o), (ssize_t)r.len);
            ck_assert_int_eq(write(fd, buf, r.len), (ssize_t)r.len);
            free(buf);
            close(fd);
            return;
        }
        o += r.len;
    }
    ck_abort_msg("no record of type %u in the journal", type);
}

/* Two syncs of a file racing (two processes', or two threads'): the one
 * that started first may return, and be journaled, last.  The size the
 * file keeps is the later snapshot's. */
START_TEST(test_sync_order)
{
    fresh();
    make_file("a", 'A', 4096);
    run_killed(body_grow_twice, CUT_MAX_DEFAULT);
    repeat_first(CUT_SYNC); /* the first sync's record, journaled after the second's */
    struct crash_cut_stats st;
    char why[300];
    ck_assert_msg(crash_cut_rollback(db, jdir, 0, &st, why, sizeof why) == 0, "%s", why);
    expect_size("a", 12288);
    expect_range("a", 0, 8192, 'b');
    expect_range("a", 8192, 12288, 'c');
}
END_TEST

/* A server's files: a process that maps one shared and writable before
 * the journal is armed (in another process) fails the run by name. */
START_TEST(test_server_mapping)
{
    fresh();
    make_file("a", 'A', 8192);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char err[200], c;
        int ready[2];
        if (bench_cut_prepare(jdir, CUT_MAX_DEFAULT, 1, (uid_t)-1, (gid_t)-1, err, sizeof err) || pipe(ready))
            _exit(3);
        pid_t mapper = fork();
        if (mapper == 0) {
            int fd = openf("a", O_RDWR);
            if (mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED ||
                write(ready[1], "x", 1) != 1)
                _exit(5);
            pause();
            _exit(0);
        }
        if (mapper < 0 || read(ready[0], &c, 1) != 1 || bench_cut_arm(db, jdir, CUT_MAX_DEFAULT, NULL, err, sizeof err))
            _exit(6);
        kill(mapper, SIGKILL);
        waitpid(mapper, NULL, 0);
        raise(SIGKILL);
        _exit(4);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child did not die of SIGKILL: %d", status);
    struct crash_cut_stats st;
    char why[300];
    ck_assert_int_eq(crash_cut_rollback(db, jdir, 0, &st, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "a shared writable mapping of a file of the database directory"), "%s", why);
}
END_TEST

/* io_uring held at the kill fails the run after the check passed. */
START_TEST(test_uring_held)
{
    struct crash_cut_stats st;
    char why[300];
    fresh();
    make_file("a", 'A', 8192);
    run_killed(body_one_write, CUT_MAX_DEFAULT);
    ck_assert_int_eq(crash_cut_rollback(db, jdir, 1, &st, why, sizeof why), -1);
    ck_assert_msg(!st.unseen && strstr(why, "io_uring"), "%s", why);
    expect_size("a", 8292); /* nothing rolled back */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench/cut");
    TCase *tc = tcase_create("cut");
    tcase_add_test(tc, test_data);
    tcase_add_test(tc, test_pwritev);
    tcase_add_test(tc, test_dsync);
    tcase_add_test(tc, test_sizes);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_torn);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_unseen);
    tcase_add_test(tc, test_not_held);
    tcase_add_test(tc, test_inside_a_call);
    tcase_add_test(tc, test_uring_held);
    tcase_add_test(tc, test_processes);
    tcase_add_test(tc, test_sync_order);
    tcase_add_test(tc, test_server_mapping);
    suite_add_tcase(s, tc);
    int rc = tu_run_suite(s);
    if (root) {
        tu_rmdir(root);
        free(root);
    }
    return rc;
}
