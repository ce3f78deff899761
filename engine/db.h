/*
 * db.h -- the engine's own view of a database handle and a transaction,
 * shared by its parts: open and recovery (open.c), transactions and the
 * commit protocol (txn.c), checkpoints (checkpoint.c) and statistics
 * (stats.c).  Not installed; the public API is commitlab.h.
 *
 * The commit protocol's invariants, C1-C6, are listed once, in
 * docs/design.md section 3 (serial log order, early lock release, elr off,
 * acknowledgement, sticky failure, segments durable before use); the code
 * names them where it keeps them, and CL_INVARIANT (util/invariant.h)
 * checks C4 at every acknowledgement (wal_commit).
 */
#ifndef CL_ENGINE_DB_H
#define CL_ENGINE_DB_H

#include <pthread.h>
#include <stdint.h>

#include "atomic.h"
#include "commitlab.h"
#include "wal.h"

struct dir_lock;
struct store;
struct vfs;

struct ws_entry {
    uint8_t *key;
    uint8_t *val;
    uint32_t klen, vlen;
    int del;
};

struct cl_txn {
    struct cl_db *db;
    unsigned flags;
    int locked;          /* holds the writer lock (a write transaction that has read) */
    struct ws_entry *ws; /* sorted by key */
    size_t n, cap;
};

struct cl_db {
    char *dir;
    struct dir_lock *lock;       /* the directory's, exclusive, from before anything is read until freed */
    struct dir_lock *data_lock;  /* the page file's, exclusive (not inherited by fork) */
    unsigned fork_gen;           /* db_fork_count when opened */
    struct cl_options opt;
    struct vfs *vfs;
    struct vfs *latency_vfs;     /* the emulated slow device wrapper, when asked for */
    struct store *store;
    struct wal *wal;
    uint64_t segment_size;

    pthread_mutex_t writer;      /* the writer lock */
    uintptr_t writer_owner;      /* the holding thread's tag, 0 when free (atomic) */
    int broken;                  /* sticky: the first failure (atomic) */
    uint64_t next_txn_id;        /* under writer */

    pthread_mutex_t ckpt_run;    /* one checkpoint at a time */
    pthread_mutex_t ckpt_mu;     /* guards the fields below */
    pthread_cond_t ckpt_cv;
    pthread_t ckpt_thread;
    int ckpt_thread_started, ckpt_requested, ckpt_stop;
    uint64_t last_ckpt_lsn;      /* atomic */

    uint64_t commits, checkpoints, pause_ns; /* atomic */
    uint64_t max_switch_commit_ns;          /* atomic */
};

/* The first failure, the handle's or its log's: a write or sync that
 * failed under an asynchronous commit breaks the log with nobody in
 * cl_commit to see it. */
static inline int db_broken(struct cl_db *db)
{
    int b = __atomic_load_n(&db->broken, __ATOMIC_ACQUIRE);
    return b || !db->wal ? b : wal_broken(db->wal);
}

/* Records the first failure; the handle stays broken until reopened. */
static inline void db_break(struct cl_db *db, int err)
{
    int expected = 0;
    if (err == 0)
        err = CL_EBROKEN;
    __atomic_compare_exchange_n(&db->broken, &expected, err, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* The forks this process has seen in children (open.c counts them in a
 * pthread_atfork handler): a handle opened at another count is in a child
 * of the process that opened it, and refuses every call with CL_EFORK. */
extern unsigned db_fork_count;
static inline int db_forked(const struct cl_db *db)
{
    return __atomic_load_n(&db_fork_count, __ATOMIC_RELAXED) != db->fork_gen;
}

/* open.c: the database's locks (cl_open, cl_inspect), CL_EBUSY naming the
 * holder; the page file's alone, once it exists. */
int db_lock(const char *dir, int shared, struct dir_lock **dir_l, struct dir_lock **data_l);
int db_lock_page_file(const char *dir, int shared, struct dir_lock **out);

/* checkpoint.c */
int db_checkpoint(struct cl_db *db);             /* under ckpt_run; breaks the handle on failure */
int db_sync_log(struct cl_db *db);               /* the log written and synced to its end, no checkpoint
                                                  * (cl_close with no_final_checkpoint); likewise */
int db_ckpt_start(struct cl_db *db);             /* the background checkpoint thread */
void db_ckpt_stop(struct cl_db *db);
void db_maybe_request_checkpoint(struct cl_db *db, uint64_t lsn);

/* txn.c: 1 when this thread holds db's writer lock through a transaction. */
int db_held_here(const struct cl_db *db);

#endif /* CL_ENGINE_DB_H */
