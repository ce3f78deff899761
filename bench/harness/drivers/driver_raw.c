/*
 * driver_raw.c -- the floor under every log: no store at all, only the
 * I/O a write-ahead log must do.  Each commit writes as many bytes as
 * commitlab's log would for the same transaction (its records' framing,
 * docs/design.md section 2) with one pwrite into a preallocated, zeroed
 * file, and makes them durable with one fdatasync (fsync with
 * --sync-method fsync; the write itself under --sync-method dsync, an
 * O_DSYNC descriptor), one commit at a time.  That is pg_test_fsync's
 * "write, fdatasync" at the size of a real commit record, so that a
 * policy's one-client rate can be read against the device's in the same
 * run ("commit at one client within 10% of raw").
 *
 * The file is 16 MiB, written from its start and wrapped around: writes
 * overwrite allocated blocks, so a sync flushes data, never the file's
 * size or its block map (as in a zero-filled log segment).  Nothing is
 * indexed: gets find nothing, so raw runs the kv workload without reads
 * only, and cannot --verify.  --sync none writes without syncing; the
 * other durable policies are the same single writer here.
 *
 * Written against the engine plugin ABI (commitlab_engine.h) alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commitlab_engine.h"

#define RAW_FILE_SIZE (16u << 20)
/* commitlab's log framing: a 40-byte record header; a PUT's payload is a
 * 6-byte header, the key and the value; a DEL's a 2-byte header and the
 * key; the COMMIT's 4 bytes; records 8-byte aligned.  A drivers test
 * checks that raw's bytes per commit equal commitlab's log bytes. */
#define RAW_REC_HEADER 40u
#define RAW_PUT_HDR 6u
#define RAW_COMMIT_LEN 4u
#define RAW_ALIGN(x) (((x) + 7u) & ~(uint64_t)7u)

struct raw_db {
    int fd;
    int sync_kind;            /* 0 none, 1 fdatasync, 2 fsync, 3 the O_DSYNC write */
    pthread_mutex_t mu;       /* one commit at a time */
    uint64_t off;             /* mu: where the next record goes */
    uint8_t *rec;             /* mu: the record being written */
    size_t rec_cap;
    int64_t commits, syncs, bytes; /* mu */
};

/* A client's transaction: the bytes its log record would take. */
struct raw_conn {
    uint64_t len;
};

/* raw keeps nothing to recover: its rows claim no survival. */
static const struct cl_engine_accept raw_accepts[] = {
    {"sync", "none", "pwrite, no sync", NULL},
    {"sync", "commit", "pwrite, then one sync, one commit at a time", NULL},
    {"sync", "group", "the same single writer as --sync commit: one sync per commit", NULL},
    {"sync", "flusher", "the same single writer as --sync commit: one sync per commit", NULL},
    {"sync", NULL, NULL, "raw is one write and one sync per commit (commit), or no sync (none)"},
    {"sync-method", "fdatasync", "fdatasync", NULL},
    {"sync-method", "fsync", "fsync", NULL},
    {"sync-method", "dsync", "no sync call: the write through an O_DSYNC descriptor", NULL},
    {"sync-method", NULL, NULL, "raw writes unaligned records"},
    {"sync-latency", NULL, "emulated: paid after its syncs", NULL},
    {NULL, NULL, NULL, NULL},
};

/* What the rows cannot say: nothing is indexed, so nothing can be read. */
static int raw_check(const struct cl_engine_config *cfg, char *why, size_t len)
{
    if (!cl_engine_is(cfg, "workload", "kv") || strtod(cl_engine_str(cfg, "read-ratio"), NULL) > 0 ||
        cl_engine_is(cfg, "verify", "on")) {
        snprintf(why, len, "raw keeps no index: kv without reads or --verify only");
        return CL_ENGINE_NA;
    }
    return 0;
}

static int sync_kind(const struct cl_engine_config *cfg)
{
    if (!cfg->sync_durable)
        return 0;
    if (cl_engine_is(cfg, "sync-method", "dsync"))
        return 3;
    return cl_engine_is(cfg, "sync-method", "fsync") ? 2 : 1;
}

static void raw_describe(const struct cl_engine_config *cfg, char *buf, size_t len)
{
    static const char *const what[] = {"pwrite, no sync", "pwrite + fdatasync", "pwrite + fsync",
                                       "pwrite (O_DSYNC)"};
    snprintf(buf, len, "%s per commit, one at a time, 16 MiB zeroed file", what[sync_kind(cfg)]);
}

static int raw_open(struct cl_engine_db *db)
{
    struct raw_db *r = calloc(1, sizeof *r);
    char path[4200];
    if (!r) {
        CL_ENGINE_ERRF(db->err, "out of memory");
        return CL_ENGINE_ERR;
    }
    r->sync_kind = sync_kind(db->cfg);
    pthread_mutex_init(&r->mu, NULL);
    if (mkdir(db->path, 0755) && errno != EEXIST)
        goto fail;
    snprintf(path, sizeof path, "%s/raw.log", db->path);
    r->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | (r->sync_kind == 3 ? O_DSYNC : 0), 0644);
    if (r->fd < 0)
        goto fail;
    /* allocate and zero the whole file, durably, before the first commit */
    uint8_t *zero = calloc(1, 1u << 20);
    if (!zero)
        goto fail;
    for (uint64_t o = 0; o < RAW_FILE_SIZE; o += 1u << 20)
        if (pwrite(r->fd, zero, 1u << 20, (off_t)o) != 1 << 20) {
            free(zero);
            goto fail;
        }
    free(zero);
    if (fsync(r->fd))
        goto fail;
    db->impl = r;
    return CL_ENGINE_OK;
fail:
    CL_ENGINE_ERRF(db->err, "raw %.200s: %s", db->path, strerror(errno));
    if (r->fd > 0)
        close(r->fd);
    pthread_mutex_destroy(&r->mu);
    free(r);
    return CL_ENGINE_ERR;
}

static void raw_close(struct cl_engine_db *db)
{
    struct raw_db *r = db->impl;
    if (!r)
        return;
    close(r->fd);
    pthread_mutex_destroy(&r->mu);
    free(r->rec);
    free(r);
    db->impl = NULL;
}

static int raw_conn_open(struct cl_engine_conn *c)
{
    c->impl = calloc(1, sizeof(struct raw_conn));
    if (!c->impl) {
        CL_ENGINE_ERRF(c->err, "out of memory");
        return CL_ENGINE_ERR;
    }
    return CL_ENGINE_OK;
}

static void raw_conn_close(struct cl_engine_conn *c)
{
    free(c->impl);
    c->impl = NULL;
}

static int raw_begin(struct cl_engine_conn *c, int rdonly)
{
    (void)rdonly;
    ((struct raw_conn *)c->impl)->len = 0;
    return CL_ENGINE_OK;
}

static int raw_put(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    (void)k;
    (void)v;
    ((struct raw_conn *)c->impl)->len += RAW_ALIGN(RAW_REC_HEADER + RAW_PUT_HDR + kl + vl);
    return CL_ENGINE_OK;
}

static int raw_get(struct cl_engine_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    (void)c, (void)k, (void)kl, (void)buf, (void)cap, (void)vl;
    return CL_ENGINE_NOTFOUND;
}

static int raw_commit(struct cl_engine_conn *c)
{
    struct raw_db *r = c->db->impl;
    struct raw_conn *rc = c->impl;
    int err = 0;
    if (rc->len == 0)
        return CL_ENGINE_OK;
    uint64_t len = rc->len + RAW_ALIGN(RAW_REC_HEADER + RAW_COMMIT_LEN);
    if (len > RAW_FILE_SIZE) {
        CL_ENGINE_ERRF(c->err, "raw: a %llu-byte transaction is larger than the file",
                 (unsigned long long)len);
        return CL_ENGINE_ERR;
    }
    pthread_mutex_lock(&r->mu);
    if (r->rec_cap < len) {
        uint8_t *p = realloc(r->rec, len);
        if (!p) {
            pthread_mutex_unlock(&r->mu);
            CL_ENGINE_ERRF(c->err, "out of memory");
            return CL_ENGINE_ERR;
        }
        r->rec = p;
        r->rec_cap = len;
    }
    memset(r->rec, (int)(r->commits & 0xff) | 1, len);
    if (r->off + len > RAW_FILE_SIZE)
        r->off = 0;
    if (pwrite(r->fd, r->rec, len, (off_t)r->off) != (ssize_t)len)
        err = errno ? errno : EIO;
    else if (r->sync_kind == 1 && fdatasync(r->fd))
        err = errno;
    else if (r->sync_kind == 2 && fsync(r->fd))
        err = errno;
    if (!err) {
        r->off += len;
        r->commits++;
        r->bytes += (int64_t)len;
        r->syncs += r->sync_kind != 0;
    }
    pthread_mutex_unlock(&r->mu);
    rc->len = 0;
    if (err) {
        CL_ENGINE_ERRF(c->err, "raw write/sync: %s", strerror(err));
        return CL_ENGINE_ERR;
    }
    return CL_ENGINE_OK;
}

/* A delete's record: a 40-byte header, a 2-byte payload header and the key. */
static int raw_del(struct cl_engine_conn *c, const void *k, size_t kl)
{
    (void)k;
    ((struct raw_conn *)c->impl)->len += RAW_ALIGN(RAW_REC_HEADER + 2u + kl);
    return CL_ENGINE_OK;
}

static void raw_abort(struct cl_engine_conn *c)
{
    ((struct raw_conn *)c->impl)->len = 0;
}

static void raw_stats(struct cl_engine_db *db, struct cl_engine_stats *st)
{
    struct raw_db *r = db->impl;
    pthread_mutex_lock(&r->mu);
    st->commits = r->commits;
    st->syncs = r->syncs;
    st->log_bytes = r->bytes;
    pthread_mutex_unlock(&r->mu);
}

const struct cl_engine_plugin bench_plugin_raw = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
    .name = "raw",
    .flags = CL_ENGINE_KEEPS_NO_DATA,
    .accepts = raw_accepts,
    .no_why = "raw has no log knobs",
    .notes = "no store: each commit is one pwrite of the bytes commitlab's log would write for it,\n"
             "into a zeroed 16 MiB file, one at a time; kv without reads only",
    .check = raw_check,
    .describe = raw_describe,
    .open = raw_open,
    .close = raw_close,
    .conn_open = raw_conn_open,
    .conn_close = raw_conn_close,
    .begin = raw_begin,
    .put = raw_put,
    .get = raw_get,
    .del = raw_del,
    .commit = raw_commit,
    .abort = raw_abort,
    .stats = raw_stats,
};
