/*
 * driver.h -- what an engine driver implements for the benchmark harness
 * (struct bench_driver), what it declares it can express of the knobs
 * (struct bench_accept), and the drivers built into this binary.
 *
 * Layering: the commitlab driver uses only include/commitlab.h; the
 * reference drivers use only their stores' own public APIs.  The runner
 * and every workload talk to an engine through this table alone, so each
 * workload runs unchanged on each engine.
 *
 * Two kinds of driver fill it.  commitlab's own is written to it
 * directly (it reports what the plugin ABI does not carry: the phases of
 * a commit, its segments, its batch sizes).  Every other engine -- LMDB,
 * RocksDB, SQLite, raw, and any plugin loaded with --engine plugin:... --
 * is a table of the public plugin ABI (include/commitlab_engine.h),
 * which one adapter, driver_plugin.c, checks and turns into this table:
 * the harness has one code path, and the built-in peers exercise the
 * same adapter a user's plugin runs through.
 */
#ifndef CL_BENCH_DRIVER_H
#define CL_BENCH_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bench_config.h"
#include "bench_schema.h"
#include "commitlab_engine.h"

/* The codes are the plugin ABI's (commitlab_engine.h). */
#define BENCH_OK CL_ENGINE_OK
#define BENCH_NOTFOUND CL_ENGINE_NOTFOUND /* get: no such key */
#define BENCH_NA CL_ENGINE_NA             /* open: the engine cannot express this configuration */
#define BENCH_ERR CL_ENGINE_ERR           /* failure; the message is in ->err */
#define BENCH_RETRY CL_ENGINE_RETRY       /* the engine aborted the transaction (a conflict, a lock
                                           * timeout): nothing of it happened; the runner counts it
                                           * and runs the transaction again */

#define BENCH_ERRLEN CL_ENGINE_ERRLEN

struct bench_db {
    const struct bench_driver *drv;
    const struct bench_config *cfg;
    char path[4096];
    void *impl;
    char err[BENCH_ERRLEN];
    /* set by open when an existing store keeps a setting of its own that
     * differs from the one asked for (commitlab's segment size, fixed at
     * creation): what the run really used, for its record; 0 otherwise */
    uint64_t stored_segment_size;
    /* set by open when the store writes or syncs through io_uring, whose
     * submissions the count of its file calls cannot see (file_calls.h):
     * the run reports those counts null rather than too few */
    int io_uring;
};

/* A pipelined commit's acknowledgement (bench_conn.ticket), embedded
 * first in the caller's own record of it.  A driver that times commits
 * (times_commits) fills phase_ns and sets timed before it calls done(t,
 * 0): the commit's phases, as bench_conn.phase_ns holds a blocking
 * commit's, the wait being the one until the acknowledgement.  A driver
 * that has the failure's message points err at it before it calls
 * done(t, rc != 0) (valid during the call); else err is NULL and rc is
 * commitlab's code (cl_strerror). */
struct bench_ticket {
    void (*done)(struct bench_ticket *t, int rc);
    uint64_t phase_ns[BENCH_PHASES];
    int timed;
    const char *err;
};

struct bench_conn {
    struct bench_db *db;
    unsigned id;
    void *impl;
    char err[BENCH_ERRLEN];
    /* set by a driver's commit that times its phases (see times_commits;
     * the phases: bench_schema.h) */
    uint64_t phase_ns[BENCH_PHASES];
    /* --pipeline N > 1: set by the caller before each transaction; the
     * driver's commit then hands the transaction to the engine and returns
     * at once, and ticket->done(ticket, rc) is called -- by whichever
     * thread the engine acknowledges on -- once it is durable (rc 0) or
     * failed.  The driver clears it when it has passed it on; one still
     * set after the transaction was never handed over. */
    struct bench_ticket *ticket;
};

/* Entries of a batch-size histogram: [n] = syncs that made n commits
 * durable at once (commitlab's CL_BATCH_HIST; the last entry is "more"). */
#define BENCH_BATCH_HIST 258

/* Counters an engine can report; -1 where it cannot. */
struct bench_engine_stats {
    int64_t commits;
    int64_t syncs;
    int64_t wal_bytes;
    int64_t data_bytes;
    int64_t checkpoints;
    int64_t checkpoint_pause_us;
    /* WAL segments (commitlab) */
    int64_t segment_switches, segments_created, segments_recycled, segments_reused, segments_removed;
    int64_t segment_waits, segment_wait_us;
    int64_t max_switch_commit_us; /* a peak since the last reset_max, not a counter */
    int64_t prealloc_error;
    int64_t batch_hist[BENCH_BATCH_HIST]; /* all -1 when the engine has none */
    /* a write group's members: writes a thread did itself (as the group's
     * leader) and writes a leader did for it (RocksDB's write thread) */
    int64_t writes_by_self, writes_by_leader;
    int64_t log_writes; /* write calls to the log; -1 unknown */
    /* the engine's processes outside this one (a server's backends), over
     * their life: CPU µs and context switches, which the run adds to this
     * process's own (getrusage); -1 when it has none, as commitlab's
     * in-process engines do (commitlab_engine.h, struct cl_engine_stats) */
    int64_t other_user_us, other_sys_us, other_nvcsw, other_nivcsw;
};

/* What a driver accepts of the knobs the engine maps (KF_ENGINE in
 * bench_knobs.h): one row per knob, or per value of it, and how the
 * engine expresses it -- the line --list-engines prints ("--sync commit ->
 * WriteOptions.sync=true").  value NULL: every value (a row naming the
 * value goes first).  maps NULL: not accepted, why says why.  A knob the
 * run sets (given, or --sync, which every run has) without an accepting
 * row makes the run n/a, with the reason in the table and the JSON; it is
 * never run as something else.  The rows end with {K_COUNT}. */
struct bench_accept {
    enum bench_knob knob;
    const char *value;
    const char *maps;
    const char *why;
    /* --sync rows of a plugin table: what an acknowledged commit survives
     * (CL_ENGINE_SURVIVES_*); see bench_engine_survives */
    unsigned survives;
};

struct bench_driver {
    const char *name;
    int built;                    /* compiled into this binary, or loaded */
    const struct bench_accept *accepts;
    const char *no_why;           /* why a knob without a row is n/a ("LMDB has no log") */
    const char *notes;            /* for --list-engines: what the rows do not say */
    int maps_options;             /* every knob that is an option of libcommitlab (.option) maps to
                                   * its cl_options field, "cl_options.NAME", where accepts has no
                                   * row of it: one a later libcommitlab adds too (commitlab's) */
    int own_sync_latency;         /* emulates --sync-latency itself; else the harness
                                   * interposes the engine's sync calls (sync_latency.c) */
    int times_commits;            /* commit fills conn->phase_ns */
    int keeps_no_data;            /* a floor, not a store: nothing to read back or recover */
    /* What the rows cannot say, between knobs (raw runs kv without reads
     * only): 0 when cfg is expressible; else BENCH_NA with the reason in
     * why.  NULL when there is nothing of the kind.  Callers use
     * bench_engine_check, which reads the rows first. */
    int (*check)(const struct bench_driver *d, const struct bench_config *cfg, char *why, size_t len);
    /* The engine's own settings for cfg, for the table and the JSON. */
    void (*describe)(const struct bench_driver *d, const struct bench_config *cfg, char *buf, size_t len);
    int (*open)(struct bench_db *db);          /* BENCH_OK, BENCH_NA or BENCH_ERR */
    void (*close)(struct bench_db *db);
    int (*conn_open)(struct bench_conn *c);
    void (*conn_close)(struct bench_conn *c);
    int (*begin)(struct bench_conn *c, int rdonly);
    int (*put)(struct bench_conn *c, const void *k, size_t kl, const void *v, size_t vl);
    int (*get)(struct bench_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl);
    int (*del)(struct bench_conn *c, const void *k, size_t kl); /* BENCH_NOTFOUND: no such key */
    int (*commit)(struct bench_conn *c);
    void (*abort)(struct bench_conn *c);
    void (*stats)(struct bench_db *db, struct bench_engine_stats *st);
    /* Starts the peak statistics afresh (at the start of the measured
     * phase); NULL when the engine has none. */
    void (*reset_max)(struct bench_db *db);
    /* Pipelining (--pipeline): returns once every commit handed over so
     * far is durable and acknowledged (bench_pipe_done called); NULL when
     * the engine commits only one way, and --pipeline beyond 1 is n/a.
     * Every client thread may call it at once; an error goes in the
     * calling connection's err, as a commit's does. */
    int (*sync_wait)(struct bench_conn *c);
    /* Pipelining with an engine that acknowledges only while the caller
     * drives it (a server's replies, read on the client's own thread:
     * PostgreSQL's pipeline mode through a plugin's sync_wait): returns
     * once at most `most` of this connection's commits handed over await
     * acknowledgement, each acknowledged (done called) on the way, failed
     * ones too.  The runner calls it when its ring of --pipeline tickets
     * is full.  NULL: the engine acknowledges on threads of its own
     * (commitlab's), and the runner just waits. */
    int (*ack_wait)(struct bench_conn *c, unsigned most);
    /* Library version, or NULL. */
    const char *(*version)(const struct bench_driver *d);

    /* An engine of the plugin ABI: the table this driver adapts
     * (driver_plugin.c), else NULL. */
    const struct cl_engine_plugin *plugin;
    /* A plugin loaded from a shared library: the file, and whether its runs
     * go in a child process (so that its crash is its run's failure, not
     * the command's). */
    const char *plugin_path;
    int isolate;
};


/* commitlab's own driver, written to this table directly. */
extern const struct bench_driver bench_driver_commitlab;
/* The built-in peers, tables of the plugin ABI (driver_lmdb.c and the
 * rest); a table whose open is NULL is an engine this binary was built
 * without (its notes say why). */
extern const struct cl_engine_plugin bench_plugin_lmdb, bench_plugin_rocksdb, bench_plugin_sqlite,
    bench_plugin_wiredtiger, bench_plugin_raw, bench_plugin_postgres;
/* NULL when no engine has that name: the built-in ones, then the plugins
 * loaded (bench_plugin_load).  May return a driver whose built == 0. */
const struct bench_driver *bench_driver_find(const char *name);
/* The built-in drivers, in the order of tables and reports: commitlab's,
 * then the peers of driver.c's one table (filled before main). */
extern const struct bench_driver *bench_drivers[];
extern const size_t bench_ndrivers;
/* "commitlab,lmdb,rocksdb,sqlite,wiredtiger,raw,postgres": the built-in engines' names, the
 * words --engine accepts beside plugin:..., from the same table. */
const char *bench_engine_words(void);
/* Every driver, built or not, then every plugin loaded, and its rows as
 * "--knob value -> mapping". */
void bench_list_engines(FILE *f);

/* ---- the private PostgreSQL server (pg_server.c) ------------------------------------ */

/* Before a command's first run: every configuration of --engine postgres
 * has the server's binaries, an account to run it as, and --pg-set
 * items the server knows and allows; and the first it can run starts
 * and stops a server once.  0; or 2 with one line on stderr (cmd:
 * "bench"), the command then runs nothing. */
int bench_postgres_preflight(const char *cmd, const struct bench_config *cfgs, size_t n);
/* run_dir is a killed run's leftover: a server still running in the
 * cluster commitlab made there (marked) is stopped, and its socket
 * directory removed.  Anything else is left alone. */
void bench_postgres_reap(const char *run_dir);
/* The template clusters this command made (initdb's, copied for each
 * run), removed: before its --dir is released, so that a --dir the
 * command made is left empty and removed. */
void bench_postgres_remove_templates(void);

/* A crash of the server in run_dir's cluster (commitlab crash --mode
 * kill): its postmaster stopped (SIGSTOP, so it forks nothing more), then
 * it and every process of the cluster (its children, and any postgres
 * process running in the cluster directory) SIGKILLed at once, as a
 * crash of the machine's processes leaves them: the WAL buffers and
 * everything else in the server's shared memory are gone, the page cache
 * is not.  Waits until they are gone: 0; -1 when one outlived 10 s.
 * Anything but a marked cluster is left alone. */
int bench_postgres_kill(const char *run_dir);
/* This process made the subreaper of its descendants (prctl
 * PR_SET_CHILD_SUBREAPER), so that a server's processes orphaned by their
 * parent's death, or by pg_ctl's exit, become its children and are reaped
 * as they are stopped or killed, whatever the system's init does with
 * orphans.  Called before forking a process that starts a server. */
void bench_postgres_adopt(void);
/* The account the server of cfg runs as (--pg-user; as root, postgres):
 * 0 with its uid and gid, each -1 when the server runs as this process's
 * own; -1 with one line in err. */
int bench_postgres_account(const struct bench_config *cfg, uid_t *uid, gid_t *gid, char *err, size_t len);

/* ---- plugins (driver_plugin.c) ----------------------------------------------- */

/* Checks plugin table p (its ABI version, its size, every member; plugin:
 * the rules for a loaded one: a name of its own) and fills d, the driver
 * that runs it.  0, or -1 with one line in err. */
int bench_plugin_adapt(const struct cl_engine_plugin *p, int loaded, struct bench_driver *d, char *err, size_t len);
/* Loads the plugin spec names ("plugin:PATH.so", or "plugin:NAME" found
 * in dir as NAME.so or libNAME.so), once per file, for command cmd
 * ("bench", "crash"): the driver, or NULL with one line in err.  The
 * table is read first in a child process, so a library that crashes or
 * exits as it loads fails here with its signal or its status.  One that
 * loads there and then calls exit() or quick_exit() while it loads into
 * this process ends the command here: one line on stderr naming it and
 * its status, exit 2.  Whatever the plugin prints while it loads goes to
 * stderr, never to stdout. */
const struct bench_driver *bench_plugin_load(const char *cmd, const char *spec, const char *dir, char *err,
                                             size_t len);
/* Before the first run of a command: opens plugin d's store once under
 * cfg, in a child process as its runs are, in path -- a scratch directory
 * made here for owner ("bench", "crash"; ut_scratch.h) and removed again
 * -- and closes it.  0 when it opened, or said n/a (the run says so);
 * -1 with one line in err: the plugin's message, or how its process
 * ended. */
int bench_plugin_try_open(const struct bench_driver *d, const struct bench_config *cfg, const char *path,
                          const char *owner, char *err, size_t len);
/* The plugins a command has tried before its first run, each once, at the
 * first configuration it can run (bench and crash). */
struct bench_plugin_trial {
    const struct bench_driver *tried[64];
    size_t n;
};
/* 1 when d is a plugin that t has not tried yet. */
int bench_plugin_untried(const struct bench_plugin_trial *t, const struct bench_driver *d);
/* Marks d tried and opens its store under cfg in path (bench_plugin_try_open,
 * for cmd: "bench", "crash"): 0 when it opened; 2, with one line on
 * stderr naming the plugin and its message, when it could not -- the
 * command then runs nothing and exits 2. */
int bench_plugin_try_first(struct bench_plugin_trial *t, const struct bench_driver *d,
                           const struct bench_config *cfg, const char *path, const char *cmd);
/* --list-engines --plugin-dir DIR: loads every .so file of DIR, each one that
 * cannot be loaded named on warn with its reason. */
void bench_plugin_load_dir(const char *cmd, const char *dir, FILE *warn);
/* After a command line is parsed (bench_cli_parse), before anything
 * runs: each --engine plugin:... loaded (bench_plugin_load, its table
 * checked) and named in c's runs by its own engine name -- two paths of
 * one file are one engine, named twice.  Exits 2 with one line (cmd:
 * "bench", "matrix") when one cannot be loaded. */
struct bench_cli;
void bench_cli_load_plugins(const char *cmd, struct bench_cli *c);
/* The plugins loaded so far, in the order they were loaded. */
size_t bench_plugins_loaded(const struct bench_driver *const **out);
/* What an acknowledged commit of d under --sync sync survives
 * (CL_ENGINE_SURVIVES_*): a plugin's claim from its --sync row; for
 * commitlab, a process kill always and a power failure when the policy is
 * durable. */
unsigned bench_engine_survives(const struct bench_driver *d, enum cl_sync_policy sync);
/* The same for a whole configuration: the claim of its --sync row,
 * weakened by every row of another knob cfg gives whose survives caps it
 * (LMDB's --lmdb-flags nometasync: the process kill only). */
unsigned bench_engine_claims(const struct bench_driver *d, const struct bench_config *cfg);

/* Whether engine d can run cfg: every knob cfg sets has an accepting row
 * (bench_accept), and d's check agrees.  0, or BENCH_NA with the reason
 * in why, naming the flag and its value. */
int bench_engine_check(const struct bench_driver *d, const struct bench_config *cfg, char *why, size_t len);
/* The row of d that decides knob k at value v (a row for the value, else
 * one for every value), or NULL: no row, not accepted. */
const struct bench_accept *bench_driver_accept(const struct bench_driver *d, enum bench_knob k, const char *v);

/* The libcommitlab options the commitlab driver opens cfg with; BENCH_NA
 * (why filled) when cfg names an unknown policy or method.  For callers
 * that open the database themselves, on another file layer. */
struct cl_options;
int bench_commitlab_options(const struct bench_config *cfg, struct cl_options *o, char *why, size_t len);

#endif
