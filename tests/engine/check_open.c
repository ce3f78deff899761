/* check_open.c -- what cl_open refuses before it touches anything: a database open elsewhere (another process, the same process, a killed holder's leftovers), files that are not regular files (symbolic links, FIFOs, sockets, directories, devices), and a log whose own SWITCH records or checkpoint name a segment that is missing or short. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commitlab.h"
#include "testutil.h"
#include "wal.h"

#define SEG (64u * 1024u)

static void opts(struct cl_options *o)
{
    cl_options_init(o);
    o->segment_size = SEG;
    o->cache_size = 1u << 20;
}

static void put_n(struct cl_db *db, int from, int n)
{
    for (int i = from; i < from + n; i++) {
        struct cl_txn *t;
        char k[32], v[200];
        snprintf(k, sizeof k, "key%06d", i);
        memset(v, 'a' + i % 26, sizeof v);
        ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
        ck_assert_int_eq(cl_put(t, k, strlen(k), v, sizeof v), 0);
        ck_assert_int_eq(cl_commit(t), 0);
    }
}

/* The number of keys key000000.. present, in order, from 0. */
static int count_keys(struct cl_db *db, int upto)
{
    struct cl_txn *t;
    int n = 0;
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &t), 0);
    for (int i = 0; i < upto; i++) {
        char k[32];
        size_t vl;
        snprintf(k, sizeof k, "key%06d", i);
        if (cl_get(t, k, strlen(k), NULL, 0, &vl) == 0)
            n++;
    }
    cl_abort(t);
    return n;
}

/* A second cl_open of the same directory in the same process is refused,
 * and so is cl_inspect; after cl_close the directory opens again. */
START_TEST(test_second_open_same_process)
{
    char *dir = tu_mkdtemp("open-twice");
    struct cl_options o;
    struct cl_db *a, *b = NULL;
    struct cl_inspect in;
    opts(&o);
    ck_assert_int_eq(cl_open(dir, &o, &a, NULL), 0);
    put_n(a, 0, 20);
    ck_assert_int_eq(cl_open(dir, &o, &b, NULL), CL_EBUSY);
    ck_assert_ptr_null(b);
    char want[256];
    snprintf(want, sizeof want, "database %s is in use (process %ld)", dir, (long)getpid());
    ck_assert_str_eq(cl_error_detail(), want);
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), CL_EBUSY);
    ck_assert_str_eq(cl_error_detail(), want);
    put_n(a, 20, 5); /* the holder never noticed */
    ck_assert_int_eq(cl_close(a), 0);
    ck_assert_int_eq(cl_open(dir, &o, &b, NULL), 0);
    ck_assert_int_eq(count_keys(b, 25), 25);
    ck_assert_int_eq(cl_close(b), 0);
    /* inspect's lock is shared: two inspects at once are fine, and an open
     * while one reads is refused (exercised through the lock itself in the
     * fork test below). */
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

static void read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        ck_assert_msg(r > 0, "pipe read: %s", r < 0 ? strerror(errno) : "end of file");
        got += (size_t)r;
    }
}

/* Process A commits while process B tries to open the same directory
 * again and again: every one of B's opens is refused, naming A's pid, and
 * every commit A was told was durable is there once A has closed. */
START_TEST(test_second_open_other_process)
{
    char *dir = tu_mkdtemp("open-proc");
    struct cl_options o;
    int ready[2], stop[2];
    opts(&o);
    o.sync = CL_SYNC_COMMIT;
    ck_assert_int_eq(pipe(ready), 0);
    ck_assert_int_eq(pipe(stop), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct cl_db *db;
        int n = 0;
        close(ready[0]);
        close(stop[1]);
        if (cl_open(dir, &o, &db, NULL) != 0)
            _exit(3);
        fcntl(stop[0], F_SETFL, O_NONBLOCK);
        char c;
        for (;;) {
            struct cl_txn *t;
            char k[32], v[100];
            snprintf(k, sizeof k, "key%06d", n);
            memset(v, 'x', sizeof v);
            if (cl_txn_begin(db, 0, &t) || cl_put(t, k, strlen(k), v, sizeof v) || cl_commit(t))
                _exit(4);
            n++;
            if (n == 10 && write(ready[1], &n, sizeof n) != sizeof n)
                _exit(5);
            if (n >= 10 && read(stop[0], &c, 1) == 1)
                break;
        }
        if (cl_close(db) != 0)
            _exit(6);
        if (write(ready[1], &n, sizeof n) != sizeof n)
            _exit(5);
        _exit(0);
    }
    close(ready[1]);
    close(stop[0]);
    int n;
    read_full(ready[0], &n, sizeof n); /* A holds the database and has committed */
    char want[256];
    snprintf(want, sizeof want, "database %s is in use (process %ld)", dir, (long)pid);
    for (int i = 0; i < 10; i++) {
        struct cl_db *db = NULL;
        struct cl_inspect in;
        ck_assert_int_eq(cl_open(dir, &o, &db, NULL), CL_EBUSY);
        ck_assert_ptr_null(db);
        ck_assert_str_eq(cl_error_detail(), want);
        ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), CL_EBUSY);
    }
    ck_assert_int_eq(write(stop[1], "x", 1), 1);
    read_full(ready[0], &n, sizeof n); /* the acknowledged count, after A's close */
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "holder exited with status %d", st);
    struct cl_db *db;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(count_keys(db, n), n);
    ck_assert_int_eq(cl_close(db), 0);
    close(ready[0]);
    close(stop[1]);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A holder killed with SIGKILL leaves no lock behind: the next cl_open
 * succeeds and recovers every acknowledged commit. */
START_TEST(test_killed_holder)
{
    char *dir = tu_mkdtemp("open-killed");
    struct cl_options o;
    int ready[2];
    opts(&o);
    ck_assert_int_eq(pipe(ready), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct cl_db *db;
        close(ready[0]);
        if (cl_open(dir, &o, &db, NULL) != 0)
            _exit(3);
        for (int i = 0; i < 300; i++) {
            struct cl_txn *t;
            char k[32], v[100];
            snprintf(k, sizeof k, "key%06d", i);
            memset(v, 'y', sizeof v);
            if (cl_txn_begin(db, 0, &t) || cl_put(t, k, strlen(k), v, sizeof v) || cl_commit(t))
                _exit(4);
        }
        int n = 300;
        if (write(ready[1], &n, sizeof n) != sizeof n)
            _exit(5);
        pause(); /* killed here, holding the database */
        _exit(6);
    }
    close(ready[1]);
    int n;
    read_full(ready[0], &n, sizeof n);
    struct cl_db *db = NULL;
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), CL_EBUSY);
    kill(pid, SIGKILL);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFSIGNALED(st));
    struct cl_recovery_info info;
    ck_assert_int_eq(cl_open(dir, &o, &db, &info), 0);
    ck_assert_uint_eq(info.txns_replayed, 300);
    ck_assert_int_eq(count_keys(db, 300), 300);
    ck_assert_int_eq(cl_close(db), 0);
    close(ready[0]);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Commits n transactions into a new database in a child that then exits
 * without cl_close (a crash after the acknowledgements). */
static void crash_after_commits(const char *dir, const struct cl_options *o, int n)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct cl_db *db;
        if (cl_open(dir, o, &db, NULL) != 0)
            _exit(3);
        for (int i = 0; i < n; i++) {
            struct cl_txn *t;
            char k[32], v[200];
            snprintf(k, sizeof k, "key%06d", i);
            memset(v, 'a' + i % 26, sizeof v);
            if (cl_txn_begin(db, 0, &t) || cl_put(t, k, strlen(k), v, sizeof v) || cl_commit(t))
                _exit(4);
        }
        _exit(0);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}

static uint64_t newest_segment(const char *dir, size_t *nsegs)
{
    uint64_t *segs = NULL, last;
    size_t n = 0;
    ck_assert_int_eq(wal_list_segments(vfs_posix(), dir, &segs, &n), 0);
    ck_assert_uint_gt(n, 0);
    last = segs[n - 1];
    free(segs);
    if (nsegs)
        *nsegs = n;
    return last;
}

/* The newest segment deleted, or cut to 0 or 4096 bytes, after 500
 * acknowledged commits and a crash: the log's SWITCH record into it (or
 * the checkpoint starting in it) is evidence that it existed whole, so
 * cl_open and cl_inspect report CL_ECORRUPT naming it instead of quietly
 * losing the commits it held. */
START_TEST(test_newest_segment_lost)
{
    static const long cuts[] = {-1, 0, 4096};
    for (int multi = 0; multi < 2; multi++)
        for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
            char *dir = tu_mkdtemp("open-lostseg");
            struct cl_options o;
            opts(&o);
            /* multi: 500 commits over several segments (the newest reached
             * by a SWITCH); else a few in the checkpoint's own segment */
            crash_after_commits(dir, &o, multi ? 500 : 20);
            size_t nsegs;
            uint64_t segno = newest_segment(dir, &nsegs);
            ck_assert_msg(multi ? nsegs > 2 : nsegs == 1, "%zu segments", nsegs);
            char name[32], path[512];
            wal_segment_name(name, sizeof name, segno);
            snprintf(path, sizeof path, "%s/%s", dir, name);
            if (cuts[c] < 0)
                ck_assert_int_eq(unlink(path), 0);
            else
                ck_assert_int_eq(truncate(path, cuts[c]), 0);
            struct cl_db *db = NULL;
            struct cl_recovery_info info;
            int rc = cl_open(dir, &o, &db, &info);
            ck_assert_msg(rc == CL_ECORRUPT, "multi %d cut %ld: cl_open returned %d (%s)", multi, cuts[c], rc,
                          cl_strerror(rc));
            ck_assert_str_eq(info.bad_file, name);
            ck_assert_int_eq(info.missing_segment, cuts[c] < 0);
            ck_assert_ptr_nonnull(strstr(cl_error_detail(), name));
            struct cl_inspect in;
            ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), CL_ECORRUPT);
            ck_assert_int_eq(in.corrupt, CL_CORRUPT_LOG);
            ck_assert_ptr_nonnull(strstr(in.end_why, "CORRUPT"));
            ck_assert_msg(strstr(in.end_why, name) != NULL, "the reason names no file: %s", in.end_why);
            /* the refusal changed nothing: the same answer again */
            ck_assert_int_eq(cl_open(dir, &o, &db, &info), CL_ECORRUPT);
            tu_rmdir(dir);
            free(dir);
        }
}
END_TEST

/* A symbolic link where a segment or the page file should be: refused,
 * naming the file, and the link's target is untouched. */
START_TEST(test_symlink_refused)
{
    for (int which = 0; which < 2; which++) {
        char *dir = tu_mkdtemp("open-link");
        char *other = tu_mkdtemp("open-link-target");
        struct cl_options o;
        struct cl_db *db;
        opts(&o);
        ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
        put_n(db, 0, 10);
        ck_assert_int_eq(cl_close(db), 0);
        char name[64], path[512], target[512];
        if (which == 0)
            wal_segment_name(name, sizeof name, newest_segment(dir, NULL));
        else
            snprintf(name, sizeof name, "data.clp");
        snprintf(path, sizeof path, "%s/%s", dir, name);
        snprintf(target, sizeof target, "%s/%s", other, name);
        ck_assert_int_eq(rename(path, target), 0);
        ck_assert_int_eq(symlink(target, path), 0);
        uint8_t *before, *after;
        size_t blen, alen;
        ck_assert_int_eq(tu_read_file(target, &before, &blen), 0);
        struct stat st0, st1;
        ck_assert_int_eq(stat(target, &st0), 0);
        struct cl_recovery_info info;
        ck_assert_int_eq(cl_open(dir, &o, &db, &info), CL_EFILETYPE);
        ck_assert_str_eq(info.bad_file, name);
        ck_assert_ptr_nonnull(strstr(cl_error_detail(), name));
        struct cl_inspect in;
        ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), CL_EFILETYPE);
        ck_assert_int_eq(tu_read_file(target, &after, &alen), 0);
        ck_assert_int_eq(stat(target, &st1), 0);
        ck_assert_uint_eq(blen, alen);
        ck_assert_int_eq(memcmp(before, after, blen), 0);
        ck_assert(st0.st_mtim.tv_sec == st1.st_mtim.tv_sec && st0.st_mtim.tv_nsec == st1.st_mtim.tv_nsec);
        struct stat lst;
        ck_assert_int_eq(lstat(path, &lst), 0);
        ck_assert(S_ISLNK(lst.st_mode));
        free(before);
        free(after);
        tu_rmdir(dir);
        tu_rmdir(other);
        free(dir);
        free(other);
    }
}
END_TEST

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "check_open: cl_open blocked on a FIFO\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

/* A FIFO named like a segment (beyond the log, or in place of its newest
 * segment) or in place of data.clp: refused at once, never waited on. */
START_TEST(test_fifo_refused)
{
    signal(SIGALRM, on_alarm);
    for (int which = 0; which < 3; which++) {
        char *dir = tu_mkdtemp("open-fifo");
        struct cl_options o;
        struct cl_db *db;
        opts(&o);
        ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
        put_n(db, 0, 10);
        ck_assert_int_eq(cl_close(db), 0);
        char name[64], path[512];
        if (which == 0)
            wal_segment_name(name, sizeof name, 0x99);
        else if (which == 1)
            wal_segment_name(name, sizeof name, newest_segment(dir, NULL));
        else
            snprintf(name, sizeof name, "data.clp");
        snprintf(path, sizeof path, "%s/%s", dir, name);
        unlink(path);
        ck_assert_int_eq(mkfifo(path, 0644), 0);
        alarm(20);
        struct cl_recovery_info info;
        ck_assert_int_eq(cl_open(dir, &o, &db, &info), CL_EFILETYPE);
        ck_assert_str_eq(info.bad_file, name);
        struct cl_inspect in;
        ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), CL_EFILETYPE);
        ck_assert_ptr_nonnull(strstr(cl_error_detail(), name));
        alarm(0);
        tu_rmdir(dir);
        free(dir);
    }
    signal(SIGALRM, SIG_DFL);
}
END_TEST

/* Makes a file of the given kind at path: 's' a listening Unix socket (its
 * descriptor returned, to close later), 'd' a directory, 'c' a character
 * device (root only; returns -2 where it cannot be made). */
static int make_special(const char *path, char kind)
{
    if (kind == 'd')
        return mkdir(path, 0755);
    if (kind == 'c')
        return mknod(path, S_IFCHR | 0600, makedev(1, 3)) == 0 ? 0 : -2;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        return -2;
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0)
        return -1;
    return fd;
}

/* A socket, a directory or a device where the newest segment or data.clp
 * should be: refused at once with CL_EFILETYPE naming the file, by the open
 * and by inspect. */
START_TEST(test_special_files_refused)
{
    static const char kinds[] = "sdc";
    signal(SIGALRM, on_alarm);
    for (int k = 0; kinds[k]; k++)
        for (int which = 0; which < 2; which++) {
            char *dir = tu_mkdtemp("open-special");
            struct cl_options o;
            struct cl_db *db;
            opts(&o);
            ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
            put_n(db, 0, 10);
            ck_assert_int_eq(cl_close(db), 0);
            char name[64], path[512];
            if (which == 0)
                wal_segment_name(name, sizeof name, newest_segment(dir, NULL));
            else
                snprintf(name, sizeof name, "data.clp");
            snprintf(path, sizeof path, "%s/%s", dir, name);
            ck_assert_int_eq(unlink(path), 0);
            int fd = make_special(path, kinds[k]);
            if (fd == -2) { /* a device needs root; a socket a short path */
                tu_rmdir(dir);
                free(dir);
                continue;
            }
            ck_assert_msg(fd >= 0, "could not make a '%c' at %s: %s", kinds[k], path, strerror(errno));
            alarm(20);
            struct cl_recovery_info info;
            int rc = cl_open(dir, &o, &db, &info);
            ck_assert_msg(rc == CL_EFILETYPE, "'%c' in place of %s: cl_open returned %d (%s)", kinds[k], name, rc,
                          cl_strerror(rc));
            ck_assert_str_eq(info.bad_file, name);
            struct cl_inspect in;
            ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), CL_EFILETYPE);
            ck_assert_ptr_nonnull(strstr(cl_error_detail(), name));
            alarm(0);
            if (kinds[k] == 's')
                close(fd);
            tu_rmdir(dir);
            free(dir);
        }
    signal(SIGALRM, SIG_DFL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("open");
    TCase *tc = tcase_create("open");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_second_open_same_process);
    tcase_add_test(tc, test_second_open_other_process);
    tcase_add_test(tc, test_killed_holder);
    tcase_add_test(tc, test_newest_segment_lost);
    tcase_add_test(tc, test_symlink_refused);
    tcase_add_test(tc, test_fifo_refused);
    tcase_add_test(tc, test_special_files_refused);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
