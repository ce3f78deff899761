/* check_sharing.c -- a database whose files or handle another party shares:
 *   - a copy made with hard links (cp -al) is refused while the original
 *     is open, and the original while the copy is, naming the holder;
 *     opened after the original closed, in either order, each keeps its
 *     own commits and neither damages the other (the shared files are made
 *     private first, counted in files_unshared); a power failure at any
 *     point of the copy's first open (a loop over seeds and the fault
 *     layer's crash models) leaves the original whole and the copy
 *     recoverable, with every commit it acknowledged;
 *   - a symbolic link to the directory and a bind mount of it (as root)
 *     are refused while it is open;
 *   - a child made by fork() gets CL_EFORK from every call on the parent's
 *     handle and transactions, and writes nothing; it does not hold the
 *     locks: the parent closes and reopens while it lives, and a killed
 *     holder's forked helper does not keep the next opener out. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commitlab.h"
#include "engine_internal.h"
#include "testutil.h"
#include "vfs.h"
#include "vfs_fault.h"

#define SEG (64u * 1024u)

static void opts(struct cl_options *o, int recycle)
{
    cl_options_init(o);
    o->segment_size = SEG;
    o->cache_size = 1u << 20;
    o->checkpoint_bytes = 2 * SEG; /* checkpoints retire segments; recycling reuses them */
    if (recycle)
        o->segments = CL_SEGMENTS_RECYCLE;
}

static char *path2(const char *a, const char *b)
{
    char *p;
    ck_assert_int_ge(asprintf(&p, "%s/%s", a, b), 0);
    return p;
}

/* Commits key<from>..key<from+n-1>, each with a value that names its copy. */
static void put_n(struct cl_db *db, int from, int n, char tag)
{
    for (int i = from; i < from + n; i++) {
        struct cl_txn *t;
        char k[32], v[400];
        snprintf(k, sizeof k, "key%06d", i);
        memset(v, tag, sizeof v);
        ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
        ck_assert_int_eq(cl_put(t, k, strlen(k), v, sizeof v), 0);
        ck_assert_int_eq(cl_commit(t), 0);
    }
}

/* The keys key000000..key<upto-1> present; each value must be tag's. */
static int count_keys(struct cl_db *db, int upto, char tag)
{
    struct cl_txn *t;
    int n = 0;
    ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &t), 0);
    for (int i = 0; i < upto; i++) {
        char k[32], v[400];
        size_t vl;
        snprintf(k, sizeof k, "key%06d", i);
        if (cl_get(t, k, strlen(k), v, sizeof v, &vl) != 0)
            continue;
        ck_assert_uint_eq(vl, sizeof v);
        ck_assert_msg(v[0] == tag && v[vl - 1] == tag, "%s holds '%c', not '%c'", k, v[0], tag);
        n++;
    }
    cl_abort(t);
    return n;
}

/* cp -al SRC DST: a new directory whose every file is a hard link. */
static void link_copy(const char *src, const char *dst)
{
    DIR *d = opendir(src);
    struct dirent *e;
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(mkdir(dst, 0755), 0);
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *a = path2(src, e->d_name), *b = path2(dst, e->d_name);
        ck_assert_msg(link(a, b) == 0, "link %s %s: %s", a, b, strerror(errno));
        free(a);
        free(b);
    }
    closedir(d);
}

/* The number of files in dir with other hard links. */
static int linked_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d))) {
        struct stat st;
        char *p = path2(dir, e->d_name);
        if (e->d_name[0] != '.' && lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1)
            n++;
        free(p);
    }
    closedir(d);
    return n;
}

/* FNV-1a over the names, sizes and bytes of dir's files, in name order. */
static uint64_t dir_hash(const char *dir)
{
    struct dirent **names;
    uint64_t h = 0xcbf29ce484222325ull;
    int n = scandir(dir, &names, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    for (int i = 0; i < n; i++) {
        char *p = path2(dir, names[i]->d_name);
        uint8_t *buf = NULL;
        size_t len = 0;
        for (const char *c = names[i]->d_name; *c; c++)
            h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
        if (names[i]->d_name[0] != '.' && tu_read_file(p, &buf, &len) == 0) {
            for (size_t k = 0; k < len; k++)
                h = (h ^ buf[k]) * 0x100000001b3ull;
            h = (h ^ len) * 0x100000001b3ull;
        }
        free(buf);
        free(p);
        free(names[i]);
    }
    free(names);
    return h;
}

/* ---- hard-linked copies --------------------------------------------------------- */

START_TEST(test_linked_copy_refused_while_open)
{
    char *top = tu_mkdtemp("share-open");
    char *db_dir = path2(top, "db"), *snap = path2(top, "snap");
    struct cl_options o;
    struct cl_db *db, *other = NULL;
    struct cl_inspect in;
    char want[64];
    opts(&o, 1);
    ck_assert_int_eq(cl_open(db_dir, &o, &db, NULL), 0);
    put_n(db, 0, 200, 'a');
    link_copy(db_dir, snap);
    /* the copy, while the original is open: refused, naming the holder */
    ck_assert_int_eq(cl_open(snap, &o, &other, NULL), CL_EBUSY);
    ck_assert_ptr_null(other);
    snprintf(want, sizeof want, "(process %ld)", (long)getpid());
    ck_assert_msg(strstr(cl_error_detail(), "data.clp is open through another path") &&
                      strstr(cl_error_detail(), want),
                  "detail: %s", cl_error_detail());
    ck_assert_int_eq(cl_inspect(snap, 0, &in, NULL), CL_EBUSY);
    /* the holder lost nothing and goes on */
    put_n(db, 200, 200, 'a');
    ck_assert_int_eq(cl_close(db), 0);
    ck_assert_int_eq(cl_open(db_dir, &o, &db, NULL), 0);
    ck_assert_int_eq(count_keys(db, 400, 'a'), 400);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(top);
    free(db_dir);
    free(snap);
    free(top);
}
END_TEST

/* The copy made after the original closed, then the two opened one after
 * the other, in either order, each committing its own: neither sees the
 * other's commits, and both open again afterwards. */
START_TEST(test_linked_copy_opened_after_close)
{
    for (int first_copy = 0; first_copy <= 1; first_copy++)
        for (int recycle = 0; recycle <= 1; recycle++) {
            char *top = tu_mkdtemp("share-after");
            char *db_dir = path2(top, "db"), *snap = path2(top, "snap");
            const char *first = first_copy ? snap : db_dir, *second = first_copy ? db_dir : snap;
            char first_tag = first_copy ? 's' : 'd', second_tag = first_copy ? 'd' : 's';
            struct cl_options o;
            struct cl_recovery_info info;
            struct cl_db *db;
            opts(&o, recycle);
            ck_assert_int_eq(cl_open(db_dir, &o, &db, NULL), 0);
            put_n(db, 0, 300, 'a');
            ck_assert_int_eq(cl_close(db), 0);
            /* the copies' own commits overwrite the shared keys and add more */
            link_copy(db_dir, snap);
            ck_assert_int_gt(linked_files(db_dir), 1);

            ck_assert_int_eq(cl_open(first, &o, &db, &info), 0);
            ck_assert_msg(info.files_unshared >= 2, "%s: %u files unshared", first, info.files_unshared);
            ck_assert_int_eq(linked_files(first), 0);
            put_n(db, 0, 600, first_tag); /* segments switch, retire and (recycle) are reused */
            ck_assert_int_eq(cl_close(db), 0);

            ck_assert_msg(cl_open(second, &o, &db, &info) == 0, "%s after %s: %s", second, first,
                          cl_error_detail());
            ck_assert_int_eq(linked_files(second), 0);
            ck_assert_int_eq(count_keys(db, 300, 'a'), 300);
            ck_assert_int_eq(count_keys(db, 600, 'a'), 300);
            put_n(db, 0, 100, second_tag);
            ck_assert_int_eq(cl_close(db), 0);

            /* two databases now, open at once */
            struct cl_db *db2;
            ck_assert_int_eq(cl_open(first, &o, &db, &info), 0);
            ck_assert_uint_eq(info.files_unshared, 0);
            ck_assert_int_eq(cl_open(second, &o, &db2, NULL), 0);
            ck_assert_int_eq(count_keys(db, 600, first_tag), 600);
            ck_assert_int_eq(count_keys(db2, 100, second_tag), 100);
            ck_assert_int_eq(cl_close(db), 0);
            ck_assert_int_eq(cl_close(db2), 0);
            tu_rmdir(top);
            free(db_dir);
            free(snap);
            free(top);
        }
}
END_TEST

/* A power failure during the copy's first open -- while its files are
 * made private, or while it commits after -- at a point drawn from the
 * seed: the original opens whole, untouched; the copy opens, with all the
 * original had and every commit of its own it acknowledged. */
START_TEST(test_linked_copy_crash)
{
    uint64_t base = tu_seed(0x5eed0004), n = tu_iterations(36);
    uint64_t open_ops = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t seed = base + i, rs = seed;
        enum vfs_crash_model model = (enum vfs_crash_model)(i % 3);
        char *top = tu_mkdtemp("share-crash");
        char *db_dir = path2(top, "db"), *snap = path2(top, "snap");
        struct cl_options o;
        struct cl_db *db;
        int acked = 0, attempted = 0;
        opts(&o, (int)(i & 1));
        ck_assert_int_eq(cl_open(db_dir, &o, &db, NULL), 0);
        put_n(db, 0, 300, 'a');
        ck_assert_int_eq(cl_close(db), 0);
        uint64_t before = dir_hash(db_dir);
        link_copy(db_dir, snap);

        struct vfs *fault = vfs_fault_new(vfs_posix());
        ck_assert_ptr_nonnull(fault);
        if (open_ops) /* within the open (most seeds), or in the commits after it */
            vfs_fault_crash_at(fault, 1 + tu_range(&rs, open_ops + open_ops / 4), model, seed);
        if (cl_open_vfs(snap, &o, fault, &db, NULL) == 0) {
            if (!open_ops)
                open_ops = vfs_fault_ops(fault); /* the first seed: measured, then crashed after */
            for (int k = 300; k < 340 && !vfs_fault_crashed(fault); k++) {
                struct cl_txn *t;
                char key[32], v[400];
                snprintf(key, sizeof key, "key%06d", k);
                memset(v, 'a', sizeof v);
                attempted = k - 300 + 1;
                if (cl_txn_begin(db, 0, &t) == 0 && cl_put(t, key, strlen(key), v, sizeof v) == 0 &&
                    cl_commit(t) == 0)
                    acked = attempted;
                else
                    break;
            }
            if (!vfs_fault_crashed(fault))
                ck_assert_int_eq(vfs_fault_crash(fault, model, seed), 0);
            cl_close(db);
        } else if (!vfs_fault_crashed(fault)) {
            ck_assert_int_eq(vfs_fault_crash(fault, model, seed), 0);
        }
        vfs_destroy(fault);

        ck_assert_msg(dir_hash(db_dir) == before, "seed %" PRIu64 " (%s): the original's files changed", seed,
                      vfs_crash_model_name(model));
        ck_assert_int_eq(cl_open(db_dir, &o, &db, NULL), 0);
        ck_assert_int_eq(count_keys(db, 400, 'a'), 300);
        ck_assert_int_eq(cl_close(db), 0);
        int rc = cl_open(snap, &o, &db, NULL);
        ck_assert_msg(rc == 0, "seed %" PRIu64 " (%s): the copy after the crash: %s (%s)", seed,
                      vfs_crash_model_name(model), cl_strerror(rc), cl_error_detail());
        int got = count_keys(db, 400, 'a');
        ck_assert_msg(got >= 300 + acked && got <= 300 + attempted,
                      "seed %" PRIu64 " (%s): the copy holds %d keys; acknowledged %d, attempted %d beyond 300", seed,
                      vfs_crash_model_name(model), got, acked, attempted);
        ck_assert_int_eq(linked_files(snap), 0);
        ck_assert_int_eq(cl_close(db), 0);
        tu_rmdir(top);
        free(db_dir);
        free(snap);
        free(top);
    }
}
END_TEST

/* A private copy an open left behind (it stopped before the rename) is
 * removed by the next open; a file of the user's with a like name is not. */
START_TEST(test_stale_copy_removed)
{
    char *dir = tu_mkdtemp("share-stale");
    char *stale = path2(dir, "data.clp.unshare"), *mine = path2(dir, "notes.unshare");
    struct cl_options o;
    struct cl_db *db;
    struct stat st;
    opts(&o, 0);
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    put_n(db, 0, 10, 'a');
    ck_assert_int_eq(cl_close(db), 0);
    ck_assert_int_eq(tu_write_file(stale, (const uint8_t *)"half a copy", 11), 0);
    ck_assert_int_eq(tu_write_file(mine, (const uint8_t *)"the user's", 10), 0);
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(lstat(stale, &st), -1);
    ck_assert_int_eq(lstat(mine, &st), 0);
    ck_assert_int_eq(count_keys(db, 10, 'a'), 10);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(stale);
    free(mine);
    free(dir);
}
END_TEST

/* A symbolic link to the directory, and a bind mount of it (as root):
 * the same database, refused while it is open. */
START_TEST(test_other_paths_refused)
{
    char *top = tu_mkdtemp("share-paths");
    char *db_dir = path2(top, "db"), *link_path = path2(top, "link"), *bind = path2(top, "bind");
    struct cl_options o;
    struct cl_db *db, *other = NULL;
    opts(&o, 0);
    ck_assert_int_eq(cl_open(db_dir, &o, &db, NULL), 0);
    put_n(db, 0, 10, 'a');
    ck_assert_int_eq(symlink("db", link_path), 0);
    ck_assert_int_eq(cl_open(link_path, &o, &other, NULL), CL_EBUSY);
    ck_assert_int_eq(mkdir(bind, 0755), 0);
    if (geteuid() == 0 && mount(db_dir, bind, NULL, MS_BIND, NULL) == 0) {
        int rc = cl_open(bind, &o, &other, NULL);
        if (rc == 0)
            cl_close(other);
        ck_assert_int_eq(umount2(bind, MNT_DETACH), 0);
        ck_assert_int_eq(rc, CL_EBUSY);
    } else {
        fprintf(stderr, "check_sharing: the bind mount case needs root and mount(2); not run\n");
    }
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(top);
    free(db_dir);
    free(link_path);
    free(bind);
    free(top);
}
END_TEST

/* ---- fork ------------------------------------------------------------------------- */

static int durable_calls;
static void on_durable(void *arg, int rc)
{
    (void)arg, (void)rc;
    durable_calls++;
}

/* In the child: every call on the parent's handle and transactions, and
 * 300 commits, as a program that forked without exec would try them.
 * Returns 0 when each got CL_EFORK, else the number of the first that
 * did not. */
static int child_tries(struct cl_db *db, struct cl_txn *pre, struct cl_txn *pre_ro)
{
    struct cl_txn *t;
    struct cl_stats st;
    char v[8] = "child";
    size_t vl;
    if (cl_put(pre, "x", 1, v, sizeof v) != CL_EFORK)
        return 1;
    if (cl_get(pre, "key000000", 9, v, sizeof v, &vl) != CL_EFORK)
        return 2;
    if (cl_del(pre, "key000000", 9) != CL_EFORK)
        return 3;
    if (cl_get(pre_ro, "key000000", 9, v, sizeof v, &vl) != CL_EFORK)
        return 4;
    if (cl_commit(pre) != CL_EFORK) /* consumed: freed in the child */
        return 5;
    cl_abort(pre_ro);
    for (int i = 0; i < 300; i++) {
        char k[32];
        snprintf(k, sizeof k, "child%06d", i);
        if (cl_txn_begin(db, 0, &t) != CL_EFORK)
            return 6;
    }
    if (cl_txn_begin(db, CL_TXN_RDONLY, &t) != CL_EFORK)
        return 7;
    if (cl_stats(db, &st) != CL_EFORK)
        return 8;
    if (cl_checkpoint(db) != CL_EFORK)
        return 9;
    if (cl_sync_wait(db) != CL_EFORK)
        return 10;
    if (cl_close(db) != CL_EFORK)
        return 11;
    if (cl_close(db) != CL_EFORK) /* still refused: close freed nothing */
        return 12;
    cl_stats_reset_max(db);
    if (durable_calls != 0)
        return 13;
    return 0;
}

START_TEST(test_fork_child_refused)
{
    static const enum cl_sync_policy pols[] = {CL_SYNC_COMMIT, CL_SYNC_GROUP, CL_SYNC_FLUSHER, CL_SYNC_NONE};
    for (size_t p = 0; p < sizeof pols / sizeof *pols; p++) {
        char *dir = tu_mkdtemp("share-fork");
        struct cl_options o;
        struct cl_db *db;
        struct cl_txn *pre, *pre_ro, *t;
        opts(&o, 0);
        o.sync = pols[p];
        ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
        put_n(db, 0, 50, 'a');
        ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
        ck_assert_int_eq(cl_put(t, "async", 5, "v", 1), 0);
        ck_assert_int_eq(cl_commit_async(t, on_durable, NULL), 0);
        ck_assert_int_eq(cl_sync_wait(db), 0);
        durable_calls = 0;
        ck_assert_int_eq(cl_txn_begin(db, 0, &pre), 0);
        ck_assert_int_eq(cl_put(pre, "pre", 3, "v", 1), 0);
        ck_assert_int_eq(cl_txn_begin(db, CL_TXN_RDONLY, &pre_ro), 0);
        ck_assert_int_eq(cl_checkpoint(db), 0);
        uint64_t before = dir_hash(dir);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
            _exit(child_tries(db, pre, pre_ro));
        int st;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the child's call %d was not refused with CL_EFORK",
                      cl_sync_policy_name(pols[p]), WIFEXITED(st) ? WEXITSTATUS(st) : -st);
        ck_assert_msg(dir_hash(dir) == before, "%s: the child changed the database's files",
                      cl_sync_policy_name(pols[p]));
        /* the parent's handle and transactions are as they were */
        ck_assert_int_eq(cl_commit(pre), 0);
        cl_abort(pre_ro);
        put_n(db, 50, 50, 'a');
        ck_assert_int_eq(cl_close(db), 0);
        ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
        ck_assert_int_eq(count_keys(db, 100, 'a'), 100);
        ck_assert_int_eq(cl_close(db), 0);
        tu_rmdir(dir);
        free(dir);
    }
}
END_TEST

static void read_byte(int fd)
{
    char c;
    ssize_t n;
    do
        n = read(fd, &c, 1);
    while (n < 0 && errno == EINTR);
}

/* The parent closes and reopens while a child it forked with the handle
 * open lives on, never touching it. */
START_TEST(test_forked_child_holds_no_lock)
{
    char *dir = tu_mkdtemp("share-child");
    struct cl_options o;
    struct cl_db *db;
    int go[2];
    opts(&o, 0);
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    put_n(db, 0, 20, 'a');
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(go[1]);
        read_byte(go[0]); /* lives until told */
        _exit(0);
    }
    close(go[0]);
    ck_assert_int_eq(cl_close(db), 0);
    int rc = cl_open(dir, &o, &db, NULL);
    ck_assert_msg(rc == 0, "reopening while a forked child lives: %s (%s)", cl_strerror(rc), cl_error_detail());
    ck_assert_int_eq(count_keys(db, 20, 'a'), 20);
    ck_assert_int_eq(cl_close(db), 0);
    close(go[1]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A holder SIGKILLed while a helper it forked lives: the next opener gets
 * in and recovers every acknowledged commit. */
START_TEST(test_killed_holder_with_forked_helper)
{
    char *dir = tu_mkdtemp("share-helper");
    struct cl_options o;
    int ready[2];
    opts(&o, 0);
    ck_assert_int_eq(pipe(ready), 0);
    pid_t holder = fork();
    ck_assert_int_ge(holder, 0);
    if (holder == 0) {
        struct cl_db *db;
        close(ready[0]);
        if (cl_open(dir, &o, &db, NULL) != 0)
            _exit(3);
        for (int i = 0; i < 100; i++) {
            struct cl_txn *t;
            char k[32], v[400];
            snprintf(k, sizeof k, "key%06d", i);
            memset(v, 'a', sizeof v);
            if (cl_txn_begin(db, 0, &t) || cl_put(t, k, strlen(k), v, sizeof v) || cl_commit(t))
                _exit(4);
        }
        pid_t helper = fork();
        if (helper < 0)
            _exit(5);
        if (helper == 0) {
            close(ready[1]);
            for (;;)
                pause(); /* lives on after its parent is killed */
        }
        if (write(ready[1], &helper, sizeof helper) != sizeof helper)
            _exit(6);
        for (;;)
            pause(); /* killed here, holding the database */
    }
    close(ready[1]);
    pid_t helper = 0;
    ck_assert_int_eq(read(ready[0], &helper, sizeof helper), (ssize_t)sizeof helper);
    close(ready[0]);
    kill(holder, SIGKILL);
    int st;
    ck_assert_int_eq(waitpid(holder, &st, 0), holder);
    struct cl_db *db = NULL;
    struct cl_recovery_info info;
    int rc = cl_open(dir, &o, &db, &info);
    kill(helper, SIGKILL);
    ck_assert_msg(rc == 0, "opening after the holder was killed, its helper alive: %s (%s)", cl_strerror(rc),
                  cl_error_detail());
    ck_assert_uint_eq(info.txns_replayed, 100);
    ck_assert_int_eq(count_keys(db, 100, 'a'), 100);
    ck_assert_int_eq(cl_close(db), 0);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sharing");
    TCase *tc = tcase_create("sharing");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_linked_copy_refused_while_open);
    tcase_add_test(tc, test_linked_copy_opened_after_close);
    tcase_add_test(tc, test_linked_copy_crash);
    tcase_add_test(tc, test_stale_copy_removed);
    tcase_add_test(tc, test_other_paths_refused);
    tcase_add_test(tc, test_fork_child_refused);
    tcase_add_test(tc, test_forked_child_holds_no_lock);
    tcase_add_test(tc, test_killed_holder_with_forked_helper);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
