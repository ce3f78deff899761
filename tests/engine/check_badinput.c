/*
 * check_badinput.c -- cl_open on directories that are not (wholly) a
 * commitlab database: it refuses with a clear code, names the file it
 * refused (cl_recovery_info.bad_file), and leaves every byte of every file
 * as it found it.
 *
 *   - a directory of other files, opened without create;
 *   - a page file of random bytes (not ours: CL_EFORMAT), and one cut to
 *     100 or 0 bytes, or removed, beside a log (damaged: CL_ECORRUPT), even
 *     with create set: an existing database is never taken over;
 *   - a page file or a log segment of a newer format version (CL_EFORMAT);
 *   - a log segment copied in from another database (its header names
 *     the other db_id): refused before any of its records is replayed;
 *   - a meta page that claims more pages than the file holds: opens and
 *     verifies, the missing pages being free.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commitlab.h"
#include "crc32c.h"
#include "endian.h"
#include "pager_internal.h"
#include "engine_internal.h"
#include "testutil.h"
#include "vfs.h"
#include "vfs_fault.h"
#include "wal_format.h"

/* A fingerprint of every file in dir: names, sizes and a CRC of the bytes. */
static uint32_t dir_fingerprint(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    uint32_t fp = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ck_assert_int_eq(stat(path, &st), 0);
        uint8_t *buf;
        size_t n;
        ck_assert_int_eq(tu_read_file(path, &buf, &n), 0);
        uint32_t h = crc32c_extend(crc32c(e->d_name, strlen(e->d_name)) ^ (uint32_t)st.st_size, buf, n);
        free(buf);
        fp ^= h * 2654435761u + (uint32_t)st.st_size; /* order-free */
    }
    closedir(d);
    return fp;
}

static void write_file(const char *dir, const char *name, const void *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(tu_write_file(path, buf, len), 0);
}

static void copy_file(const char *from, const char *to)
{
    uint8_t *buf;
    size_t n;
    ck_assert_int_eq(tu_read_file(from, &buf, &n), 0);
    ck_assert_int_eq(tu_write_file(to, buf, n), 0);
    free(buf);
}

static void small_opts(struct cl_options *o)
{
    cl_options_init(o);
    o->segment_size = 64 * 1024;
    o->checkpoint_bytes = 0;
}

/* Opens dir expecting want, and checks bad_file and that no byte moved. */
static void expect_refused(const char *dir, int create, int want, const char *bad_file)
{
    struct cl_options o;
    struct cl_recovery_info info;
    struct cl_db *db = NULL;
    uint32_t before = dir_fingerprint(dir);
    small_opts(&o);
    o.create = create;
    int rc = cl_open(dir, &o, &db, &info);
    ck_assert_msg(rc == want, "%s: cl_open returned %d (%s), want %d (%s)", dir, rc, cl_strerror(rc), want,
                  cl_strerror(want));
    ck_assert_ptr_null(db);
    if (bad_file)
        ck_assert_str_eq(info.bad_file, bad_file);
    ck_assert_msg(dir_fingerprint(dir) == before, "%s: cl_open changed the files it refused", dir);
}

START_TEST(test_not_a_database)
{
    char *dir = tu_mkdtemp("bad");
    write_file(dir, "notes.txt", "not a database\n", 15);
    expect_refused(dir, 0, -ENOENT, NULL);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_page_file_of_random_bytes)
{
    char *dir = tu_mkdtemp("bad");
    uint8_t junk[8192];
    uint64_t s = tu_seed(4242);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)tu_rand(&s);
    write_file(dir, "data.clp", junk, sizeof junk);
    /* neither meta page has the magic: not a commitlab file (format), not a damaged one */
    expect_refused(dir, 1, CL_EFORMAT, "data.clp"); /* create set: still never taken over */
    expect_refused(dir, 0, CL_EFORMAT, "data.clp");
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A database with committed transactions in its log after the checkpoint:
 * the fault layer's power failure keeps the handle from checkpointing at
 * close (every transaction was synced, so all survive). */
static void make_db_with_log(const char *dir, const char *tag, int n)
{
    struct vfs *fault = vfs_fault_new(vfs_posix());
    struct cl_options o;
    struct cl_db *db;
    small_opts(&o);
    ck_assert_int_eq(cl_open_vfs(dir, &o, fault, &db, NULL), 0);
    for (int i = 0; i < n; i++) {
        struct cl_txn *t;
        char k[32], v[32];
        snprintf(k, sizeof k, "%s-%04d", tag, i);
        snprintf(v, sizeof v, "value of %s %d", tag, i);
        ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
        ck_assert_int_eq(cl_put(t, k, strlen(k), v, strlen(v)), 0);
        ck_assert_int_eq(cl_commit(t), 0);
    }
    ck_assert_int_eq(vfs_fault_crash(fault, VFS_CRASH_DROP, 1), 0);
    cl_close(db);
    vfs_destroy(fault);
}

START_TEST(test_truncated_page_file)
{
    char *dir = tu_mkdtemp("bad");
    char path[4096];
    make_db_with_log(dir, "a", 10);
    snprintf(path, sizeof path, "%s/data.clp", dir);
    ck_assert_int_eq(truncate(path, 100), 0);
    expect_refused(dir, 1, CL_ECORRUPT, "data.clp");
    /* zero-length, with the log still there: not a fresh database to
     * create over, since the log says one was here */
    ck_assert_int_eq(truncate(path, 0), 0);
    expect_refused(dir, 1, CL_ECORRUPT, "data.clp");
    /* and removed: not a directory to make a new database in */
    ck_assert_int_eq(unlink(path), 0);
    expect_refused(dir, 1, CL_ECORRUPT, "data.clp");
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Every segment of database b copied over database a's: each names b's
 * db_id in its header.  Before the check, a's recovery replayed b's
 * records (the records do not name their database). */
START_TEST(test_segment_of_another_database)
{
    char *a = tu_mkdtemp("bad-a"), *b = tu_mkdtemp("bad-b");
    make_db_with_log(a, "a", 40);
    make_db_with_log(b, "b", 40);
    DIR *d = opendir(b);
    struct dirent *e;
    char first[256] = "";
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "wal-", 4) != 0)
            continue;
        char from[4096], to[4096];
        snprintf(from, sizeof from, "%s/%s", b, e->d_name);
        snprintf(to, sizeof to, "%s/%s", a, e->d_name);
        copy_file(from, to);
        if (!first[0] || strcmp(e->d_name, first) < 0)
            snprintf(first, sizeof first, "%s", e->d_name);
    }
    closedir(d);
    ck_assert(first[0]);
    expect_refused(a, 1, CL_EFORMAT, first);
    tu_rmdir(a);
    tu_rmdir(b);
    free(a);
    free(b);
}
END_TEST

/* A database written by a newer format version -- both meta pages, or a
 * log segment's header, name version 2 with their checksums intact -- is
 * refused with CL_EFORMAT naming the file, and nothing is written. */
START_TEST(test_newer_format_version)
{
    char *dir = tu_mkdtemp("bad");
    char path[4096];
    uint8_t *buf;
    size_t n;
    make_db_with_log(dir, "a", 10);
    snprintf(path, sizeof path, "%s/data.clp", dir);
    ck_assert_int_eq(tu_read_file(path, &buf, &n), 0);
    uint8_t *saved = malloc(n);
    memcpy(saved, buf, n);
    for (int slot = 0; slot < 2; slot++) {
        put_le32(buf + slot * PG_SIZE + META_OFF_VERSION, STORE_VERSION + 1);
        pg_seal(buf + slot * PG_SIZE);
    }
    ck_assert_int_eq(tu_write_file(path, buf, n), 0);
    expect_refused(dir, 1, CL_EFORMAT, "data.clp");
    ck_assert_int_eq(tu_write_file(path, saved, n), 0);
    free(buf);
    free(saved);

    /* the page file back as it was; now the log's first segment */
    DIR *d = opendir(dir);
    struct dirent *e;
    char seg[256] = "";
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "wal-", 4) == 0 && (!seg[0] || strcmp(e->d_name, seg) < 0))
            snprintf(seg, sizeof seg, "%s", e->d_name);
    closedir(d);
    ck_assert(seg[0]);
    snprintf(path, sizeof path, "%s/%s", dir, seg);
    ck_assert_int_eq(tu_read_file(path, &buf, &n), 0);
    put_le32(buf + 8, WAL_VERSION + 1);
    put_le32(buf + 40, crc32c(buf, 40));
    ck_assert_int_eq(tu_write_file(path, buf, n), 0);
    free(buf);
    expect_refused(dir, 1, CL_EFORMAT, seg);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A current meta page whose npages says 2^40 (damage that kept, or was
 * given, a good checksum): the pages past the file's end were never
 * written and are free, so the database opens and verifies as before,
 * instead of sizing a bitmap and a free list by 2^40 pages (which failed
 * with CL_ENOMEM, or ran out of memory). */
START_TEST(test_meta_claims_pages_the_file_lacks)
{
    char *dir = tu_mkdtemp("bad");
    struct cl_options o;
    struct cl_db *db;
    struct cl_inspect in;
    struct cl_txn *t;
    small_opts(&o);
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    for (int i = 0; i < 300; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%05d", i);
        ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
        ck_assert_int_eq(cl_put(t, k, strlen(k), "value", 5), 0);
        ck_assert_int_eq(cl_commit(t), 0);
    }
    ck_assert_int_eq(cl_close(db), 0);
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), 0);

    char path[4096];
    uint8_t *buf;
    size_t n;
    snprintf(path, sizeof path, "%s/data.clp", dir);
    ck_assert_int_eq(tu_read_file(path, &buf, &n), 0);
    uint8_t *meta = buf + (in.generation % 2) * PG_SIZE;
    put_le64(meta + META_OFF_NPAGES, 1ull << 40);
    pg_seal(meta);
    ck_assert_int_eq(tu_write_file(path, buf, n), 0);
    free(buf);

    int rc = cl_inspect(dir, 1, &in, NULL);
    ck_assert_msg(rc == 0, "inspect --verify: %s", cl_strerror(rc));
    ck_assert_uint_eq(in.nentries, 300);
    ck_assert_int_eq(cl_open(dir, &o, &db, NULL), 0);
    ck_assert_int_eq(cl_txn_begin(db, 0, &t), 0);
    ck_assert_int_eq(cl_put(t, "more", 4, "x", 1), 0);
    ck_assert_int_eq(cl_commit(t), 0);
    ck_assert_int_eq(cl_close(db), 0);
    ck_assert_int_eq(cl_inspect(dir, 1, &in, NULL), 0);
    ck_assert_uint_eq(in.nentries, 301);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("badinput");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_not_a_database);
    tcase_add_test(tc, test_page_file_of_random_bytes);
    tcase_add_test(tc, test_truncated_page_file);
    tcase_add_test(tc, test_segment_of_another_database);
    tcase_add_test(tc, test_meta_claims_pages_the_file_lacks);
    tcase_add_test(tc, test_newer_format_version);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
