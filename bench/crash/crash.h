/*
 * crash.h -- `commitlab crash`: the parts of a campaign.
 *
 * crash.c parses the command line, walks the combinations and prints
 * rows; crash_workload.c is the workload every crash runs and the check
 * after it (engine-neutral: it talks to an engine through the benchmark
 * driver interface); crash_sim.c makes one simulated power failure on the
 * fault-injecting file layer; crash_kill.c one process crash (SIGKILL) on
 * the real file system, and with --mode cut the power failure after it:
 * crash_cut.c rolls the directory back to its last synced state from the
 * undo journal the child kept (bench/interpose/cut_journal.c).
 */
#ifndef CL_BENCH_CRASH_H
#define CL_BENCH_CRASH_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "bench_workload.h"
#include "commitlab.h"
#include "drivers/driver.h"
#include "vfs.h"
#include "vfs_fault.h"

#define CRASH_MAX_CLIENTS 64

/* `commitlab crash [options]` (crash.c): 0 when every combination held,
 * 1 when one failed, 2 for bad arguments. */
int cmd_crash(int argc, char **argv);

enum crash_mode { CRASH_SIM = 0, CRASH_KILL, CRASH_CUT };
enum crash_workload { CRASH_KV = 0, CRASH_TPCB };

/* One combination of the sweep. */
struct crash_config {
    enum crash_mode mode;
    const struct bench_driver *drv; /* the engine */
    enum vfs_crash_model model;     /* sim only */
    unsigned clients;
    unsigned txns;                  /* per client, at most */
    enum crash_workload workload;
    int lying;                      /* sim: syncs make nothing durable */
    int keep_crashed;               /* copy the directory as the crash left it, before recovery */
    uint64_t cut_max;               /* cut: the undo journal's bound, bytes */
    unsigned pipeline;              /* commits each client keeps awaiting durability (1: blocking) */
    /* The knobs of the table (bench_knobs.h) the user gave one value of
     * for the whole campaign (given[] says which): every engine's own
     * (--lmdb-flags, --sqlite-sync, --rocksdb-write, ...) and the commit
     * path's that the campaign does not sweep.  crash_bench_config applies
     * them; the row and its JSON line record them. */
    const struct bench_config *knobs;
    /* The values as given, for rows, JSON and replay lines: sync, method,
     * segments, init, prealloc, elr, model, clients, engine, workload. */
    const char *names[10];
    /* The run every crash of the combination is (crash_config_run): the
     * swept words above read by the harness's table of knobs -- an option
     * of libcommitlab's into its value, once (run.sync, run.segments, ...)
     * -- then bench_crash_defaults and the knobs given.  What
     * crash_bench_config hands each crash, with its directory. */
    struct bench_config run;
};

/* What one crash showed. */
struct crash_outcome {
    int na;               /* the configuration cannot run here */
    char na_why[200];
    uint64_t lost;        /* acknowledged transactions missing */
    uint64_t survived;    /* unacknowledged transactions that survived */
    unsigned atomicity;   /* partly visible transactions */
    unsigned garbage;     /* values no commit wrote */
    unsigned phantom;     /* more than was attempted */
    int recovery_failed;  /* the database did not open, or could not be read */
    int mid_run;          /* the crash hit while clients were committing */
    int cut_failed;       /* cut: the run could not be cut (a call it cannot model, the journal's bound) */
    double recovery_ms;
    char why[200];        /* the first problem */
};

/* The witness: what each client was told, kept outside the crashed
 * process or disk. */
struct crash_witness {
    uint64_t acked[CRASH_MAX_CLIENTS];     /* last acknowledged transaction */
    uint64_t attempted[CRASH_MAX_CLIENTS]; /* last one begun */
};

/* ---- the workload and its check (crash_workload.c) ------------------------ */

/* Client c's n-th transaction (n >= 1) of the workload on connection
 * conn (crash_workload.c says what each writes).  BENCH_OK once the
 * engine acknowledged the commit; BENCH_RETRY when it aborted it (run it
 * again). */
int crash_txn(struct bench_conn *conn, enum crash_workload wl, unsigned c, uint64_t n);

/* Opens nothing: reads db (open, after recovery) and checks it against the
 * witness of c's clients, adding to o. */
void crash_check(struct bench_db *db, const struct crash_config *c, const struct crash_witness *w,
                 struct crash_outcome *o);

/* A client of --pipeline N > 1: its commits handed to the engine
 * (bench_conn.ticket: commitlab's cl_commit_async, a plugin table's
 * commit_async), up to N awaiting durability, each
 * acknowledged -- ack(arg, n), in the client's order -- only once the
 * engine says it is durable.  crash_pipe_txn runs the n-th transaction
 * once there is room; crash_pipe_drain waits for every acknowledgement
 * (an error counts: a crashed file layer fails them). */
struct crash_ticket {
    struct bench_ticket base;
    struct crash_pipe *p;
    uint64_t n;
};
struct crash_pipe {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t issued, done;
    unsigned depth;
    struct crash_ticket *ring;
    void (*ack)(void *arg, uint64_t n);
    void *arg;
};
int crash_pipe_init(struct crash_pipe *p, unsigned depth, void (*ack)(void *arg, uint64_t n), void *arg);
void crash_pipe_free(struct crash_pipe *p);
int crash_pipe_txn(struct crash_pipe *p, struct bench_conn *conn, enum crash_workload wl, unsigned c, uint64_t n);
void crash_pipe_drain(struct crash_pipe *p, struct bench_conn *conn);

/* Fills c->run from c->names, c->drv, c->clients and c->knobs: the
 * campaign's swept values, bench_crash_defaults (bench_config.h), then
 * every knob the user gave (c->knobs) that applies to c's engine (not
 * another engine's own). */
void crash_config_run(struct crash_config *c);
/* The bench configuration combination c runs under, in dir: c->run. */
void crash_bench_config(const struct crash_config *c, const char *dir, struct bench_config *bc);

/* The flags of the knobs the user gave that apply to c's row (" --lmdb-flags
 * nometasync --pipeline 8"), as its replay line and terminal row say them;
 * "" when none. */
void crash_given_flags(const struct crash_config *c, char *buf, size_t len);

/* Copies the files of dir, as the crash left them, to <dir>.crashed (its
 * name in kept) before recovery changes them; 0 or an errno. */
int crash_keep_copy(const char *dir, char *kept, size_t len);

/* ---- the modes ------------------------------------------------------------------ */

/* One crash in the fresh directory dir.  span 0: no crash, a calibration
 * run; *cal then gets how much of the run there is to crash into (file
 * operations for sim, nanoseconds of committing for kill).  Otherwise the
 * crash falls uniformly in [0, span) of that measure, drawn from seed. */
int crash_sim_one(const struct crash_config *c, uint64_t seed, uint64_t span, const char *dir,
                  struct crash_outcome *o, uint64_t *cal);
int crash_kill_one(const struct crash_config *c, uint64_t seed, uint64_t span, const char *dir,
                   struct crash_outcome *o, uint64_t *cal);
/* --mode cut: crash_kill_one with the child's file calls journaled and the
 * power failure made after the kill; its journal in <dir>.cut. */
int crash_cut_one(const struct crash_config *c, uint64_t seed, uint64_t span, const char *dir,
                  struct crash_outcome *o, uint64_t *cal);

/* ---- the cut (crash_cut.c) -------------------------------------------------------- */

struct crash_cut_stats {
    uint64_t records, journal_bytes, syncs, files, bytes_restored, names_undone;
    uint64_t blocks_checked; /* blocks whose contents were held to the journal's hashes */
    int torn; /* the journal's last record was cut off */
    int unseen; /* the check found writes the journal does not explain */
};

/* The words every failure of the check of unseen writes starts with. */
#define CRASH_CUT_UNSEEN "writes the cut did not see (mmap, raw system calls, io_uring)"

/* Rolls dir back to its last synced state from the undo journal in jdir,
 * after checking that every file and name there is what the journal
 * explains (the check of unseen writes).  uring: the child held an
 * io_uring instance when it was killed, which fails the run once the
 * check has passed.  0; -1 with why filled: the journal says the child
 * made a call the cut cannot model or reached the bound, the check found
 * writes the journal does not explain (st->unseen, why starting with
 * CRASH_CUT_UNSEEN and naming the file), the child held a ring, or the
 * journal could not be read or applied.  Nothing is rolled back then. */
int crash_cut_rollback(const char *dir, const char *jdir, int uring, struct crash_cut_stats *st, char *why,
                       size_t len);
/* Whether process pid holds an io_uring instance, whose writes no
 * interposed call sees. */
int crash_cut_uses_uring(pid_t pid);
/* 1 with why filled when c cannot be cut at all (n/a). */
int crash_cut_check(const struct crash_config *c, char *why, size_t len);

/* A size as --cut-journal-max takes it: 256M, 16K, or bytes. */
static inline void crash_size_name(uint64_t b, char *buf, size_t len)
{
    if (b && b % (1u << 20) == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(b >> 20));
    else if (b && b % 1024 == 0)
        snprintf(buf, len, "%lluK", (unsigned long long)(b >> 10));
    else
        snprintf(buf, len, "%llu", (unsigned long long)b);
}

/* Whether c's engine is a server (PostgreSQL): its commits are made by
 * the server's processes, which a crash kills with the committing child
 * (bench_postgres_kill), and its directory holds the cluster. */
static inline int crash_server_engine(const struct crash_config *c)
{
    return strcmp(c->drv->name, "postgres") == 0;
}

/* A hash of x: the benchmark's generator (splitmix64) one step from x. */
static inline uint64_t crash_mix(uint64_t x) { return bench_rand(&x); }

#endif
