/*
 * commitlab_engine.h -- the engine plugin ABI of `commitlab bench` and
 * `commitlab crash`: how a store that is not built into commitlab runs
 * beside commitlab, LMDB, RocksDB and SQLite, under the same workloads,
 * on the same emulated slow disk (--sync-latency), and under the same
 * crash campaigns (crash --mode kill, and --mode cut, the power cut that
 * drops what was never synced).  After fio's external ioengines
 * (https://fio.readthedocs.io/en/latest/fio_doc.html#i-o-engine) and
 * YCSB's database bindings (https://github.com/brianfrankcooper/YCSB).
 *
 * A plugin is a shared library that exports one function,
 *
 *     const struct cl_engine_plugin *commitlab_engine_plugin(void);
 *
 * returning a table that lives as long as the library.  commitlab loads
 * it with `--engine plugin:PATH.so` (or `--engine plugin:NAME
 * --plugin-dir DIR`), checks the table's ABI version and size, and
 * drives the store through it.  LMDB, RocksDB, SQLite and raw are
 * written against this same table inside commitlab (docs/design.md).
 * docs/plugins.md describes every member and what commitlab checks.
 *
 * The ABI grows without breaking plugins: the table, and every struct
 * commitlab hands a plugin, carries its size; members are only appended
 * (reserved ones first); a member a reader does not know must be zero.
 * A change that an older reader could not ignore raises
 * CL_ENGINE_ABI_VERSION, and a table of another version is refused.
 *
 * This header needs C99 and only the C standard library; a plugin links
 * nothing of commitlab (pkg-config --cflags commitlab-engine finds it).
 */
#ifndef COMMITLAB_ENGINE_H
#define COMMITLAB_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CL_ENGINE_ABI_VERSION 1u
/* The name of the entry point, for dlsym. */
#define CL_ENGINE_ENTRY_POINT "commitlab_engine_plugin"

/* ---- return codes ------------------------------------------------------- */

#define CL_ENGINE_OK 0
#define CL_ENGINE_NOTFOUND 1 /* get: no such key; del: nothing to delete */
#define CL_ENGINE_NA 2       /* open: the store cannot express this configuration */
#define CL_ENGINE_RETRY 3    /* the store aborted the transaction (a conflict, a lock
                              * timeout): nothing of it happened, it is run again */
#define CL_ENGINE_ERR (-1)   /* failure; the message is in ->err */

#define CL_ENGINE_ERRLEN 256

/* ---- what a run asks for ----------------------------------------------- */

/* One knob of the run: its flag without the dashes ("sync", "sync-method",
 * "clients", "workload"), its value as the flag takes it ("commit",
 * "fdatasync", "16M", "on"; "" when it has none), and whether it was
 * given (else it is commitlab's default). */
struct cl_engine_knob {
    const char *name;
    const char *value;
    int given;
};

/* The configuration of one open.  Every knob of `commitlab bench --help`
 * is in knobs[], the run's and the workload's too; the store need read
 * only those it maps.  commitlab calls open only when every knob the run
 * sets has an accepting row (struct cl_engine_accept) and check agreed. */
struct cl_engine_config {
    uint32_t size;                      /* sizeof as commitlab knows it */
    uint32_t nknobs;
    const struct cl_engine_knob *knobs;
    int sync_durable;                   /* --sync promises durability at commit
                                         * (commit, group, flusher, uring) */
    uint32_t reserved0;
    uint64_t reserved[6];
};

/* What --sync (or any knob) at one value means for the store: the line
 * `commitlab bench --list-engines` prints.  The rows end with one whose
 * knob is NULL. */
struct cl_engine_accept {
    const char *knob;    /* "sync", "sync-method", "sync-latency", ... */
    const char *value;   /* one value, or NULL: every other value */
    const char *maps;    /* how the store expresses it; NULL: not accepted */
    const char *why;     /* maps NULL: why not ("one writer, no group commit") */
    /* --sync rows that accept: what an acknowledged commit survives under
     * this policy, CL_ENGINE_SURVIVES_*; the crash campaigns hold the
     * store to it.  Another knob's row for one value may weaken that
     * claim: its survives, when not 0, is what a commit survives at most
     * with that value (LMDB's nometasync: the process kill only); the
     * value of a set knob counts when it is one of the set's words.  0:
     * the knob changes nothing of the claim. */
    uint32_t survives;
    uint32_t reserved;
};

/* Rows with every member written out (for -Wmissing-field-initializers). */
#define CL_ENGINE_MAPS(knob, value, maps, survives) {(knob), (value), (maps), NULL, (survives), 0}
#define CL_ENGINE_NOT(knob, value, why) {(knob), (value), NULL, (why), 0, 0}
#define CL_ENGINE_END {NULL, NULL, NULL, NULL, 0, 0}

#define CL_ENGINE_SURVIVES_KILL 1u  /* the process killed (SIGKILL): the page cache survives */
#define CL_ENGINE_SURVIVES_POWER 2u /* the machine's power cut: only synced bytes survive */

/* ---- the store's state, in commitlab's memory --------------------------- */

/* One open store.  commitlab fills size, cfg and path; the store keeps
 * what it needs in impl and writes a failure's message into err. */
struct cl_engine_db {
    uint32_t size;
    uint32_t reserved0;
    const struct cl_engine_config *cfg;
    const char *path;            /* the store's directory: exists; empty on a fresh run */
    void *impl;                  /* the store's */
    char err[CL_ENGINE_ERRLEN];
    uint64_t reserved[4];
};

/* One client's connection: clients are threads, each with its own
 * connection, all on one cl_engine_db; a connection is used by one
 * thread at a time. */
struct cl_engine_conn {
    uint32_t size;
    uint32_t id;                 /* the client, 0 .. clients-1 */
    struct cl_engine_db *db;
    void *impl;                  /* the store's */
    char err[CL_ENGINE_ERRLEN];
    uint64_t reserved[4];
};

/* Counters over the store's life, read at the two ends of the measured
 * phase (the run reports the difference).  commitlab sets every member
 * to -1 and size to what it knows before the call; a store sets what it
 * counts and leaves -1 where it cannot say (null in the JSON).  Members
 * at or beyond size must not be written (CL_ENGINE_STATS_HAS). */
struct cl_engine_stats {
    uint32_t size;
    uint32_t reserved0;
    int64_t commits;
    int64_t syncs;               /* durability points: fsync, fdatasync, O_DSYNC writes */
    int64_t log_bytes;           /* bytes written to its log */
    int64_t data_bytes;          /* bytes written to its data files */
    int64_t checkpoints;
    int64_t checkpoint_pause_us; /* time commits waited for them */
    int64_t writes_by_self;      /* a write group's leader's own writes */
    int64_t writes_by_leader;    /* writes a leader did for others */
    int64_t log_writes;          /* write calls to its log (a server's WAL writes); -1 unknown */
    /* A store that runs processes of its own outside commitlab's (a
     * server and its backends): their CPU time and context switches over
     * their life (getrusage RUSAGE_CHILDREN of a child it waited for, or
     * /proc/PID/stat and /proc/PID/status of the ones running), which
     * commitlab adds to its own process's for the run's CPU and context
     * switches per commit.  -1 (as set) for a store inside commitlab's
     * process, whose calls getrusage already sees.  Counts only grow: a
     * process that ended keeps its last counts in them. */
    int64_t other_user_us; /* user CPU, µs */
    int64_t other_sys_us;  /* system CPU, µs */
    int64_t other_nvcsw;   /* voluntary context switches */
    int64_t other_nivcsw;  /* involuntary context switches */
    /* Its log's segments over the store's life: retired ones renamed for
     * reuse (PostgreSQL's wal_recycle, RocksDB's recycle_log_file_num),
     * and retired ones deleted.  Were reserved, set -1 by commitlab: a
     * store built before them reports them unknown. */
    int64_t segments_recycled;
    int64_t segments_removed;
    int64_t reserved[1];
};

#define CL_ENGINE_STATS_HAS(st, member) \
    (offsetof(struct cl_engine_stats, member) + sizeof((st)->member) <= (st)->size)

/* ---- the table ---------------------------------------------------------- */

/* The end of a transaction handed over by commit_async: rc CL_ENGINE_OK
 * once it is as durable as the --sync row says; else CL_ENGINE_ERR, or
 * CL_ENGINE_RETRY (the store aborted it: nothing of it happened), with
 * its message in err (one line, valid during the call only; NULL when
 * rc is CL_ENGINE_OK).  arg is the one commit_async was given. */
typedef void cl_engine_done_fn(void *arg, int rc, const char *err);

#define CL_ENGINE_RMW 1u           /* transactions that read and then write are
                                    * serialisable: no update lost (tpcb) */
#define CL_ENGINE_KEEPS_NO_DATA 2u /* nothing to read back or recover (a floor) */

struct cl_engine_plugin {
    uint32_t abi_version;        /* CL_ENGINE_ABI_VERSION */
    uint32_t size;               /* sizeof(struct cl_engine_plugin) */
    const char *name;            /* 1-32 of [a-z0-9_-], not a built-in engine's */
    const char *(*version)(void); /* the store's version, or NULL */
    uint64_t flags;              /* CL_ENGINE_RMW, CL_ENGINE_KEEPS_NO_DATA */
    const struct cl_engine_accept *accepts;
    const char *no_why;          /* why a knob without a row is n/a ("no log") */
    const char *notes;           /* for --list-engines: what the rows do not say, one note a line */

    /* What the rows cannot say, between knobs: 0 when cfg can run, else
     * CL_ENGINE_NA with the reason in why.  NULL: nothing of the kind. */
    int (*check)(const struct cl_engine_config *cfg, char *why, size_t len);
    /* The store's own settings for cfg, for the table and the JSON; NULL: none. */
    void (*describe)(const struct cl_engine_config *cfg, char *buf, size_t len);

    int (*open)(struct cl_engine_db *db); /* CL_ENGINE_OK, _NA or _ERR */
    void (*close)(struct cl_engine_db *db);
    int (*conn_open)(struct cl_engine_conn *c);
    void (*conn_close)(struct cl_engine_conn *c);

    /* A transaction on a connection: begin, any puts, gets and dels, then
     * commit or abort.  A read-only one (rdonly) has only gets.  commit
     * returns once the commit is as durable as the policy says; an error
     * or CL_ENGINE_RETRY from put, get or del means commitlab calls abort
     * next.  Reads see the transaction's own writes.  A value longer than
     * cap is cut to cap with *vl its whole length. */
    int (*begin)(struct cl_engine_conn *c, int rdonly);
    int (*put)(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl);
    int (*get)(struct cl_engine_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl);
    int (*del)(struct cl_engine_conn *c, const void *k, size_t kl);
    int (*commit)(struct cl_engine_conn *c);
    void (*abort)(struct cl_engine_conn *c);

    /* The counters it keeps; NULL: none (every counter null). */
    void (*stats)(struct cl_engine_db *db, struct cl_engine_stats *st);

    /* The files the store maps shared and writable as memory its
     * processes share, and rebuilds when it opens a store no process
     * holds, so their contents are never data (LMDB's "lock.mdb",
     * SQLite's "*-shm"): fnmatch(3) patterns of a file's name in its
     * directory, NULL-terminated; NULL: none.  `crash --mode cut` leaves
     * them as the mapping left them; every other file of the store must
     * hold only what its calls wrote (docs/crash.md section 7). */
    const char *const *shared_memory;

    /* Pipelining (--pipeline N > 1): both, or neither (NULL: --pipeline
     * beyond 1 is n/a, each commit blocks).  Were reserved: a plugin
     * built before them has them NULL.
     *
     * commit_async ends a transaction begun with rdonly 0 as commit does,
     * but returns once it has handed the transaction over: CL_ENGINE_OK,
     * and done(arg, rc, err) is then called exactly once -- by any
     * thread: the store's own, or the caller's inside a later call on this
     * connection (begin, put, get, del, commit_async, sync_wait) -- once
     * the transaction is durable or has failed; any other code: it was
     * not handed over, as a failed commit (done is not called for it).  A
     * connection's transactions are acknowledged in the order they were
     * handed over.  commitlab begins the next transaction on the
     * connection before the last is acknowledged, up to N awaiting their
     * done, and never calls commit_async for a read-only one (that one
     * ends with commit).
     *
     * sync_wait(c, most) returns once at most `most` of the transactions
     * c handed over await their done: commitlab calls it with N - 1 when
     * N await, and with 0 when it needs them all (at the ends of the
     * measured phase, before conn_close).  A store whose acknowledgements
     * the caller's thread must read (a server's replies on the
     * connection's socket) reads them here; one that acknowledges on
     * threads of its own waits for them.  CL_ENGINE_OK; or CL_ENGINE_ERR
     * with c->err, having first called done with an error for each
     * transaction it can no longer acknowledge (a connection lost), so
     * that none is left waiting. */
    int (*commit_async)(struct cl_engine_conn *c, cl_engine_done_fn *done, void *arg);
    int (*sync_wait)(struct cl_engine_conn *c, uint32_t most);

    void *reserved[5]; /* NULL */
};

/* The entry point a plugin exports. */
typedef const struct cl_engine_plugin *cl_engine_plugin_fn(void);
const struct cl_engine_plugin *commitlab_engine_plugin(void);

/* ---- reading the configuration ------------------------------------------ */

/* Knob name of cfg, or NULL when cfg has no such knob. */
static inline const struct cl_engine_knob *cl_engine_knob_of(const struct cl_engine_config *cfg, const char *name)
{
    for (uint32_t i = 0; cfg && i < cfg->nknobs; i++)
        if (strcmp(cfg->knobs[i].name, name) == 0)
            return &cfg->knobs[i];
    return NULL;
}

/* Its value, or "" when it has none. */
static inline const char *cl_engine_str(const struct cl_engine_config *cfg, const char *name)
{
    const struct cl_engine_knob *k = cl_engine_knob_of(cfg, name);
    return k && k->value ? k->value : "";
}

/* 1 when knob name has the value v. */
static inline int cl_engine_is(const struct cl_engine_config *cfg, const char *name, const char *v)
{
    return strcmp(cl_engine_str(cfg, name), v) == 0;
}

/* 1 when knob name was given. */
static inline int cl_engine_given(const struct cl_engine_config *cfg, const char *name)
{
    const struct cl_engine_knob *k = cl_engine_knob_of(cfg, name);
    return k && k->given;
}

/* Its value as a number ("16M" is 16777216, "on" 1); 0 when it has none. */
static inline uint64_t cl_engine_u64(const struct cl_engine_config *cfg, const char *name)
{
    const char *s = cl_engine_str(cfg, name);
    char *end;
    if (strcmp(s, "on") == 0)
        return 1;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'k': case 'K': return (uint64_t)v << 10;
    case 'm': case 'M': return (uint64_t)v << 20;
    case 'g': case 'G': return (uint64_t)v << 30;
    default: return (uint64_t)v;
    }
}

/* Writes a message into err (db->err, c->err), as snprintf does. */
#define CL_ENGINE_ERRF(err, ...) snprintf((err), CL_ENGINE_ERRLEN, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
