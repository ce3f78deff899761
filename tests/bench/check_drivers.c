/*
 * check_drivers.c -- every engine driver of `commitlab bench` runs a small
 * kv workload from an empty store (durable and not, one and several
 * clients), and after a close and reopen every key the run wrote reads
 * back with its exact value, and no other key exists (--verify).  Also a
 * short tpcb run per engine with 8 clients, whose --verify checks TPC-B's
 * consistency, --sync-latency paid by every engine's durable commits, and
 * each of RocksDB's write paths (--rocksdb-write), and WiredTiger's
 * commit path by its own counters and settings.  commitlab's
 * pipelined commits (--pipeline) with their phases and batch sizes, and
 * its refusals to open in the library's words: a database another
 * process holds, an option refused, a kernel that refuses RWF_DSYNC.
 * Every engine's context switches and its store's own file calls
 * (syncs, writes, bytes per commit) in the table and the JSON.
 * Runs the real binary.
 */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>

#include "commitlab.h"

#include "bench_run_util.h"

static char *scratch;

/* A process holding a database open (test_open_refused): it lets go when
 * the pipe's write end closes, here or in teardown. */
static pid_t holder;
static int holder_fd = -1;

static void release_holder(void)
{
    if (holder_fd >= 0)
        close(holder_fd);
    holder_fd = -1;
    if (holder > 0)
        waitpid(holder, NULL, 0);
    holder = 0;
}

static void setup(void)
{
    scratch = tu_mkdtemp("bench-drv");
}

/* The environment test_rwf_dsync_refused gives the command, taken back
 * here too, so a failed assertion leaves no later run preloaded. */
static char *saved_asan;
static int env_changed;

static void restore_env(void)
{
    if (!env_changed)
        return;
    unsetenv("LD_PRELOAD");
    if (saved_asan)
        setenv("ASAN_OPTIONS", saved_asan, 1);
    else
        unsetenv("ASAN_OPTIONS");
    free(saved_asan);
    saved_asan = NULL;
    env_changed = 0;
}

static void teardown(void)
{
    restore_env();
    release_holder();
    tu_rmdir(scratch);
    free(scratch);
}

static int built(const char *engine)
{
#ifndef CL_HAVE_ROCKSDB
    if (strcmp(engine, "rocksdb") == 0)
        return 0;
#endif
#ifndef CL_HAVE_SQLITE
    if (strcmp(engine, "sqlite") == 0)
        return 0;
#endif
#ifndef CL_HAVE_WIREDTIGER
    if (strcmp(engine, "wiredtiger") == 0)
        return 0;
#endif
    (void)engine;
    return 1;
}

static void read_back(const char *engine)
{
    if (!built(engine))
        return;
    const char *args[] = {"bench", "--engine", engine, "--sync", "commit,none", "--clients", "1,4", "--txns",
                          "400", "--warmup", "0", "--keys", "3000", "--no-preload", "--verify", "--quiet",
                          "--dir", "d", "--out", "v.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "%s: exit %d: %s%s", engine, r.status, r.out, r.err);
    run_free(&r);

    json_t *rows = load_jsonl(scratch, "v.jsonl"), *o;
    size_t i;
    json_array_foreach(rows, i, o) {
        const char *status = json_string_value(at(o, "status"));
        ck_assert_msg(strcmp(status, "ok") == 0, "%s: %s: %s", engine, status, json_string_value(at(o, "reason")));
        ck_assert_msg(json_is_true(at(o, "metrics.verified")), "%s: not verified", engine);
        /* 400 one-put transactions over 3000 keys touch at least a few hundred */
        ck_assert_int_ge(json_integer_value(at(o, "metrics.verified_keys")), 300);
        ck_assert_int_eq(json_integer_value(at(o, "metrics.txns")), 400);
    }
    ck_assert_int_eq(json_array_size(rows), 4);
    json_decref(rows);
}

START_TEST(test_commitlab) { read_back("commitlab"); }
END_TEST
START_TEST(test_lmdb) { read_back("lmdb"); }
END_TEST
START_TEST(test_rocksdb) { read_back("rocksdb"); }
END_TEST
START_TEST(test_sqlite) { read_back("sqlite"); }
END_TEST
START_TEST(test_wiredtiger)
{
    read_back("wiredtiger");
}
END_TEST

/* tpcb with 8 clients on every engine: TPC-B's consistency condition
 * holds after the run (branch, teller and account balances and the history
 * deltas sum to the same; one history row per committed transaction) --
 * no engine loses a balance update. */
START_TEST(test_tpcb)
{
    const char *engines[] = {"commitlab", "lmdb", "rocksdb", "sqlite", "wiredtiger"};
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++) {
        if (!built(engines[i]))
            continue;
        const char *args[] = {"bench", "--engine", engines[i], "--workload", "tpcb", "--sync", "commit",
                              "--clients", "8", "--txns", "400", "--warmup", "0", "--verify", "--quiet",
                              "--dir", "d", NULL};
        struct cl_run r = run_cl(scratch, args);
        ck_assert_msg(r.status == 0, "%s tpcb: exit %d: %s%s", engines[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.out, "keys: ok"), "%s tpcb: %s", engines[i], r.out);
        run_free(&r);
    }
}
END_TEST

/* --sync-latency applies to every engine: a durable commit pays the
 * emulated 20 ms at least once (commitlab in its file layer, the others at
 * their interposed sync calls), an unsynced one never; the settings say
 * "emulated". */
START_TEST(test_sync_latency_every_engine)
{
    const char *engines[] = {"commitlab", "lmdb", "rocksdb", "sqlite", "wiredtiger", "raw"};
    const char *syncs[] = {"commit", "none"};
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++) {
        if (!built(engines[i]))
            continue;
        for (size_t k = 0; k < 2; k++) {
            const char *args[] = {"bench", "--engine", engines[i], "--sync", syncs[k], "--sync-latency", "20000",
                                  "--clients", "1", "--txns", "10", "--warmup", "0", "--keys", "100",
                                  "--no-preload", "--quiet", "--dir", "d", "--out", "lat.jsonl", NULL};
            struct cl_run r = run_cl(scratch, args);
            ck_assert_msg(r.status == 0, "%s: exit %d: %s%s", engines[i], r.status, r.out, r.err);
            run_free(&r);
        }
    }
    json_t *rows = load_jsonl(scratch, "lat.jsonl"), *o;
    size_t i;
    json_array_foreach(rows, i, o) {
        const char *engine = json_string_value(at(o, "engine"));
        const char *sync = json_string_value(at(o, "config.sync"));
        const char *settings = json_string_value(at(o, "engine_settings"));
        double mean = json_number_value(at(o, "metrics.latency_us.mean"));
        ck_assert_msg(settings && strstr(settings, "emulated"), "%s: settings '%s'", engine, settings);
        if (strcmp(sync, "commit") == 0)
            ck_assert_msg(mean >= 20000, "%s --sync commit: mean latency %.0f us, below the emulated 20 ms", engine,
                          mean);
        else
            ck_assert_msg(mean < 20000, "%s --sync none: mean latency %.0f us: a sync was delayed", engine, mean);
    }
    json_decref(rows);
}
END_TEST

/* The cell of the table's column head in row line (both lines of the
 * table, its columns right-aligned under their heads), trimmed, in buf. */
static const char *table_cell(const char *out, const char *head, const char *row_prefix, char *buf, size_t len)
{
    const char *hdr = strstr(out, "engine ");
    ck_assert_msg(hdr != NULL, "no table header: %s", out);
    const char *h = strstr(hdr, head);
    ck_assert_msg(h != NULL, "no column '%s' in the table: %.300s", head, hdr);
    size_t end = (size_t)(h - hdr) + strlen(head);
    const char *row = out;
    while ((row = strstr(row, "\n")) != NULL && strncmp(++row, row_prefix, strlen(row_prefix)) != 0)
        ;
    ck_assert_msg(row != NULL, "no row '%s' in the table: %s", row_prefix, out);
    size_t w = strlen(head), start = end - w;
    while (start > 0 && row[start - 1] != ' ')
        start--; /* a figure wider than its head */
    size_t n = end - start < len - 1 ? end - start : len - 1;
    memcpy(buf, row + start, n);
    buf[n] = 0;
    char *p = buf;
    while (*p == ' ')
        p++;
    memmove(buf, p, strlen(p) + 1);
    return buf;
}

/* A figure of a JSON line: a number, finite and >= 0. */
static double figure(json_t *o, const char *path, const char *what)
{
    json_t *v = at(o, path);
    ck_assert_msg(json_is_number(v), "%s: %s is not a number", what, path);
    double x = json_number_value(v);
    ck_assert_msg(isfinite(x) && x >= 0, "%s: %s is %g", what, path, x);
    return x;
}

/* Every engine's row has its context switches per transaction and the
 * syncs, writes and bytes of its store's own file calls, counted where
 * they pass the program's definitions of the calls (file_calls.c): LMDB
 * and SQLite, which count no syncs of their own, sync at every durable
 * commit (LMDB twice: the data's fdatasync, the meta page's O_DSYNC
 * write), with commits per sync a number in the table, not '-';
 * commitlab's count agrees with its own at --sync commit (one per
 * commit at one client), and --sync none syncs nothing; writes and bytes
 * are there for each. */
START_TEST(test_file_calls_every_engine)
{
    const char *args[] = {"bench",    "--engine", "commitlab,lmdb,rocksdb,sqlite,raw",
                          "--sync",   "commit",   "--clients",
                          "1",        "--txns",   "200",
                          "--warmup", "0",        "--keys",
                          "100",      "--quiet",  "--dir",
                          "d",        "--out",    "fc.jsonl",
                          NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    const char *table_engines[] = {"lmdb ", "sqlite "};
    for (size_t i = 0; i < 2; i++) {
        char cell[64];
        if (!built(table_engines[i][0] == 'l' ? "lmdb" : "sqlite"))
            continue;
        table_cell(r.out, "file commits/sync", table_engines[i], cell, sizeof cell);
        char *end;
        double v = strtod(cell, &end);
        ck_assert_msg(end != cell && *end == 0 && v > 0, "%s: file commits/sync is '%s'", table_engines[i], cell);
        table_cell(r.out, "vcs/txn", table_engines[i], cell, sizeof cell);
        ck_assert_msg(strcmp(cell, "-") != 0, "%s: vcs/txn is '-'", table_engines[i]);
    }
    run_free(&r);
    const char *none[] = {"bench",  "--engine", "commitlab,lmdb", "--sync",   "none",   "--clients", "1",
                          "--txns", "200",      "--warmup",       "0",        "--keys", "100",       "--quiet",
                          "--dir",  "d",        "--out",          "fc.jsonl", NULL};
    r = run_cl(scratch, none);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);

    json_t *rows = load_jsonl(scratch, "fc.jsonl"), *o;
    size_t i, seen = 0;
    json_array_foreach(rows, i, o)
    {
        const char *engine = json_string_value(at(o, "engine"));
        const char *sync = json_string_value(at(o, "config.sync"));
        if (!built(engine))
            continue;
        char what[64];
        snprintf(what, sizeof what, "%s --sync %s", engine, sync);
        ck_assert_msg(!strcmp(json_string_value(at(o, "status")), "ok"), "%s: not ok", what);
        seen++;
        figure(o, "metrics.vcsw_per_txn", what);
        figure(o, "metrics.ivcsw_per_txn", what);
        double spc = figure(o, "metrics.file_syncs_per_commit", what);
        double wpc = figure(o, "metrics.file_writes_per_commit", what);
        double bpc = figure(o, "metrics.file_write_bytes_per_commit", what);
        ck_assert_msg(wpc > 0 && bpc > 0, "%s: %g writes, %g bytes per commit", what, wpc, bpc);
        if (!strcmp(sync, "none")) {
            ck_assert_msg(spc == 0, "%s: %g syncs per commit", what, spc);
            ck_assert_msg(json_is_null(at(o, "metrics.file_commits_per_sync")), "%s: commits per sync not null", what);
            continue;
        }
        ck_assert_msg(spc > 0, "%s: no sync counted", what);
        double cps = figure(o, "metrics.file_commits_per_sync", what);
        ck_assert_msg(fabs(cps * spc - 1) < 1e-6, "%s: %g commits per sync, %g syncs per commit", what, cps, spc);
        if (!strcmp(engine, "lmdb"))
            ck_assert_msg(spc >= 2 - 1e-9, "%s: %g syncs per commit, not LMDB's two", what, spc);
        if (!strcmp(engine, "commitlab")) {
            double own = figure(o, "metrics.syncs_per_commit", what);
            ck_assert_msg(fabs(own - 1) < 1e-9 && spc >= own && spc <= 1.05,
                          "%s: %g syncs per commit at its file calls, %g by its own count", what, spc, own);
        }
    }
    ck_assert_uint_ge(seen, 4);
    json_decref(rows);
}
END_TEST

/* RocksDB's write group is reported: every transaction's write batch was
 * written either by its own thread, leading a group, or by a leader, and
 * with 8 clients some were written by a leader.  commitlab has none. */
/* The counters' window: quiet at both ends, so with clients committing
 * through the warm-up and past the end of the phase the engine still
 * counts exactly the measured commits -- one sync each under commit --
 * in --txns and in --duration mode. */
START_TEST(test_counter_window_exact)
{
    const char *args[] = {"bench", "--engine", "commitlab", "--sync", "commit", "--clients", "4", "--txns", "400",
                          "--warmup", "0.3", "--keys", "1000", "--quiet", "--dir", "d", "--out", "win.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    const char *dur[] = {"bench", "--engine", "commitlab", "--sync", "commit,group", "--clients", "4", "--duration",
                         "0.5", "--warmup", "0.3", "--keys", "1000", "--quiet", "--dir", "d", "--out", "win.jsonl",
                         NULL};
    r = run_cl(scratch, dur);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    json_t *rows = load_jsonl(scratch, "win.jsonl"), *o;
    size_t i;
    ck_assert_int_eq(json_array_size(rows), 3);
    json_array_foreach(rows, i, o) {
        json_int_t txns = json_integer_value(at(o, "metrics.txns"));
        json_int_t commits = json_integer_value(at(o, "metrics.engine_commits"));
        json_int_t syncs = json_integer_value(at(o, "metrics.syncs"));
        ck_assert_msg(txns > 0 && commits == txns, "run %zu: %lld commits counted for %lld measured", i + 1,
                      (long long)commits, (long long)txns);
        if (!strcmp(json_string_value(at(o, "config.sync")), "commit"))
            ck_assert_msg(syncs == txns, "run %zu: %lld syncs for %lld commits", i + 1, (long long)syncs,
                          (long long)txns);
    }
    ck_assert_int_eq(json_integer_value(at(json_array_get(rows, 0), "metrics.txns")), 400);
    json_decref(rows);
}
END_TEST

/* A commitlab run's commit phases: each present, its mean and p99 finite
 * and >= 0, and their means adding up to no more than the mean latency
 * (each commit's phases fall within its latency: they are counted over
 * the same commits; 1 us for the rounding of the means). */
static void check_phases(json_t *o, size_t run)
{
    static const char *const names[] = {"lock", "append", "apply", "queue", "write", "sync", "wakeup"};
    json_t *ph = at(o, "metrics.commit_phases_us");
    double sum = 0;
    ck_assert_msg(json_is_object(ph), "run %zu: no commit phases", run);
    ck_assert_uint_eq(json_object_size(ph), sizeof names / sizeof *names);
    for (size_t p = 0; p < sizeof names / sizeof *names; p++) {
        json_t *x = json_object_get(ph, names[p]);
        json_t *mean = json_object_get(x, "mean"), *p99 = json_object_get(x, "p99");
        ck_assert_msg(json_is_number(mean) && json_is_number(p99), "run %zu: phase %s missing", run, names[p]);
        double m = json_number_value(mean), q = json_number_value(p99);
        ck_assert_msg(isfinite(m) && m >= 0 && isfinite(q) && q >= 0, "run %zu: phase %s: mean %g, p99 %g", run,
                      names[p], m, q);
        sum += m;
    }
    double lat = json_number_value(at(o, "metrics.latency_us.mean"));
    ck_assert_msg(sum <= lat + 1.0, "run %zu: the phases add up to %.1f us, the mean latency is %.1f us", run, sum,
                  lat);
}

/* --pipeline: each client keeps commits awaiting durability through
 * cl_commit_async_timed; every measured one is acknowledged (engine
 * commits equal the measured transactions, in both modes), latency is
 * measured to the acknowledgement, the commit phases are there and fall
 * within it as a blocking commit's do, and another engine is n/a.  With
 * 2 clients x 16 in flight on a 2 ms sync (emulated), group commit and
 * the flusher put several commits on each sync, and the batch sizes
 * account for every commit, none above the 32 that can await at once. */
START_TEST(test_pipeline)
{
    const char *args[] = {"bench", "--engine", "commitlab,lmdb", "--sync", "group,flusher", "--clients", "2",
                          "--pipeline", "1,16", "--txns", "600", "--warmup", "0.2", "--keys", "1000", "--quiet",
                          "--dir", "d", "--out", "pipe.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    const char *dur[] = {"bench", "--engine", "commitlab", "--sync", "none,commit,uring", "--clients", "2",
                         "--pipeline", "8", "--duration", "0.5", "--warmup", "0.2", "--keys", "1000",
                         "--read-ratio", "0.3", "--quiet", "--dir", "d", "--out", "pipe.jsonl", NULL};
    r = run_cl(scratch, dur);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    json_t *rows = load_jsonl(scratch, "pipe.jsonl"), *o;
    size_t i, na = 0, piped = 0;
    json_array_foreach(rows, i, o) {
        const char *engine = json_string_value(at(o, "engine"));
        json_int_t pipeline = json_integer_value(at(o, "config.pipeline"));
        if (!strcmp(engine, "lmdb")) {
            if (pipeline > 1) {
                ck_assert_str_eq(json_string_value(at(o, "status")), "n/a");
                na++;
            }
            continue;
        }
        ck_assert_msg(!strcmp(json_string_value(at(o, "status")), "ok"), "run %zu: %s", i + 1,
                      json_string_value(at(o, "reason")));
        json_int_t txns = json_integer_value(at(o, "metrics.txns"));
        json_int_t commits = json_integer_value(at(o, "metrics.engine_commits"));
        ck_assert_msg(txns > 0 && commits <= txns && commits >= txns * 6 / 10,
                      "run %zu: %lld engine commits for %lld transactions", i + 1, (long long)commits, (long long)txns);
        check_phases(o, i + 1);
        if (pipeline > 1) {
            piped++;
            ck_assert_msg(strstr(json_string_value(at(o, "engine_settings")), "pipeline="), "run %zu: settings", i + 1);
            ck_assert(json_real_value(at(o, "metrics.latency_us.p50")) > 0);
        }
        if (!json_is_real(at(o, "config.read_ratio")) || json_real_value(at(o, "config.read_ratio")) == 0)
            ck_assert_msg(commits == txns, "run %zu: %lld engine commits for %lld transactions", i + 1,
                          (long long)commits, (long long)txns);
    }
    ck_assert_uint_eq(na, 2);
    ck_assert_uint_eq(piped, 5);
    json_decref(rows);

    const char *slow[] = {"bench", "--engine", "commitlab", "--sync", "group,flusher", "--clients", "2",
                          "--pipeline", "16", "--sync-latency", "2000", "--txns", "400", "--warmup", "0.1",
                          "--keys", "1000", "--quiet", "--dir", "d", "--out", "slow.jsonl", NULL};
    r = run_cl(scratch, slow);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    rows = load_jsonl(scratch, "slow.jsonl");
    ck_assert_int_eq(json_array_size(rows), 2);
    json_array_foreach(rows, i, o) {
        const char *sync = json_string_value(at(o, "config.sync"));
        ck_assert_msg(!strcmp(json_string_value(at(o, "status")), "ok"), "%s: %s", sync,
                      json_string_value(at(o, "reason")));
        check_phases(o, i + 1);
        json_int_t commits = json_integer_value(at(o, "metrics.engine_commits"));
        double per_sync = json_real_value(at(o, "metrics.commits_per_sync"));
        ck_assert_msg(per_sync > 1, "%s: %.2f commits per sync with 32 in flight on a 2 ms sync", sync, per_sync);
        ck_assert_msg(json_real_value(at(o, "metrics.commit_phases_us.sync.mean")) > 0, "%s: no sync time", sync);
        json_t *dist = at(o, "metrics.commits_per_sync_dist");
        ck_assert_msg(json_is_object(dist), "%s: no batch sizes", sync);
        json_int_t max = json_integer_value(json_object_get(dist, "max"));
        ck_assert_msg(json_integer_value(json_object_get(dist, "syncs")) > 0 &&
                          json_integer_value(json_object_get(dist, "p50")) >= 1 && max > 1 && max <= 32 &&
                          json_is_false(json_object_get(dist, "max_is_lower_bound")),
                      "%s: batch sizes p50 %lld, max %lld", sync,
                      (long long)json_integer_value(json_object_get(dist, "p50")), (long long)max);
        /* each commit in exactly one batch (a segment switch's sync counts
         * its commits with the next batch: none here, in 16 MiB segments) */
        json_t *hist = json_object_get(dist, "hist"), *v;
        const char *n;
        json_int_t covered = 0;
        json_object_foreach(hist, n, v) {
            ck_assert_msg(strcmp(n, "257+") != 0, "%s: a batch above 256", sync);
            covered += strtoll(n, NULL, 10) * json_integer_value(v);
        }
        ck_assert_int_eq(json_integer_value(at(o, "metrics.segments.switches")), 0);
        ck_assert_msg(covered == commits, "%s: batches cover %lld of %lld commits", sync, (long long)covered,
                      (long long)commits);
    }
    json_decref(rows);
}
END_TEST

/* Starts a process that opens the database in dir with libcommitlab and
 * holds it until released; returns once it is open. */
static void hold_database(const char *dir)
{
    int ready[2], hold[2];
    char c = 0;
    ck_assert_int_eq(pipe(ready), 0);
    ck_assert_int_eq(pipe(hold), 0);
    holder = fork();
    ck_assert_int_ge(holder, 0);
    if (holder == 0) {
        struct cl_db *db;
        close(ready[0]);
        close(hold[1]);
        int rc = cl_open(dir, NULL, &db, NULL);
        if (write(ready[1], rc ? "e" : "r", 1) != 1 || rc)
            _exit(1);
        while (read(hold[0], &c, 1) > 0) /* until the test lets go */
            ;
        _exit(cl_close(db) ? 1 : 0);
    }
    close(ready[1]);
    close(hold[0]);
    holder_fd = hold[1];
    ck_assert_msg(read(ready[0], &c, 1) == 1 && c == 'r', "the holder could not open %s", dir);
    close(ready[0]);
}

/* When cl_open refuses, the run says what the library said: a database
 * another process holds (bench --reuse on it) reads "database DIR is in
 * use (process PID)", and exits 1 as any engine that cannot open does; an
 * option the library refuses is named. */
START_TEST(test_open_refused)
{
    char db[4200], want[128];
    snprintf(db, sizeof db, "%s/d", scratch);
    ck_assert_int_eq(mkdir(db, 0755), 0);
    snprintf(db, sizeof db, "%s/d/commitlab.db", scratch);
    hold_database(db);
    const char *args[] = {"bench", "--engine", "commitlab", "--reuse", "--txns", "10", "--warmup", "0", "--keys",
                          "100", "--dir", "d", "--out", "busy.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    snprintf(want, sizeof want, "is in use (process %ld)", (long)holder);
    ck_assert_msg(r.status == 1, "exit %d: %s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.out, "d/commitlab.db") && strstr(r.out, want), "no '%s' in: %s%s", want, r.out, r.err);
    run_free(&r);
    json_t *rows = load_jsonl(scratch, "busy.jsonl");
    ck_assert_int_eq(json_array_size(rows), 1);
    ck_assert_str_eq(json_string_value(at(json_array_get(rows, 0), "status")), "error");
    ck_assert_msg(strstr(json_string_value(at(json_array_get(rows, 0), "reason")), want), "reason: %s",
                  json_string_value(at(json_array_get(rows, 0), "reason")));
    json_decref(rows);
    release_holder();

    /* let go of, it opens */
    r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d once released: %s%s", r.status, r.out, r.err);
    run_free(&r);

    const char *seg[] = {"bench", "--engine", "commitlab", "--segment-size", "100000", "--txns", "10",
                         "--warmup", "0", "--keys", "100", "--dir", "s", NULL};
    r = run_cl(scratch, seg);
    ck_assert_msg(r.status == 1 && strstr(r.out, "option segment_size = 100000"), "exit %d: %s%s", r.status, r.out,
                  r.err);
    run_free(&r);
}
END_TEST

/* Where the kernel refuses RWF_DSYNC (a preloaded library makes it so),
 * --sync-method rwf-dsync and --uring-sync rwf-dsync are n/a with the
 * library's reason -- the kernel refused the flag -- not as a libcommitlab
 * built without them. */
START_TEST(test_rwf_dsync_refused)
{
    const char *asan = getenv("ASAN_OPTIONS");
    char opts[1024];
    saved_asan = asan ? strdup(asan) : NULL;
    env_changed = 1;
    /* a preloaded library comes before the sanitizer's runtime */
    snprintf(opts, sizeof opts, "%s%sverify_asan_link_order=0", asan ? asan : "", asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
    setenv("LD_PRELOAD", CL_REFUSE_RWF_DSYNC, 1);
    const char *method[] = {"bench", "--engine", "commitlab", "--sync", "commit", "--sync-method", "rwf-dsync",
                            "--txns", "10", "--warmup", "0", "--keys", "100", "--dir", "d", "--out", "rwf.jsonl",
                            NULL};
    struct cl_run r = run_cl(scratch, method);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    const char *uring[] = {"bench", "--engine", "commitlab", "--sync", "uring", "--uring-sync", "rwf-dsync",
                           "--txns", "10", "--warmup", "0", "--keys", "100", "--dir", "d", "--out", "rwf.jsonl",
                           NULL};
    r = run_cl(scratch, uring);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    restore_env();

    json_t *rows = load_jsonl(scratch, "rwf.jsonl"), *o;
    size_t i;
    ck_assert_int_eq(json_array_size(rows), 2);
    json_array_foreach(rows, i, o) {
        const char *reason = json_string_value(at(o, "reason"));
        ck_assert_str_eq(json_string_value(at(o, "status")), "n/a");
        ck_assert_msg(reason, "run %zu: no reason", i + 1);
        if (i == 1 && strstr(reason, "io_uring")) { /* io_uring itself refused here: that reason first */
            fprintf(stderr, "uring is refused here: %s\n", reason);
            continue;
        }
        ck_assert_msg(strstr(reason, "the kernel refuses pwritev2(RWF_DSYNC)") && !strstr(reason, "not built"),
                      "run %zu: reason '%s'", i + 1, reason);
        ck_assert_msg(strstr(reason, i == 0 ? "--sync-method rwf-dsync" : "--uring-sync rwf-dsync"),
                      "run %zu: the knob is not named: '%s'", i + 1, reason);
    }
    json_decref(rows);
}
END_TEST

/* raw, the floor: one write of as many bytes as commitlab's log record
 * for the same transaction and one sync per commit; none never syncs;
 * what it cannot run is n/a. */
START_TEST(test_raw_floor)
{
    const char *args[] = {"bench", "--engine", "raw,commitlab", "--sync", "commit,none", "--value-size", "100,300",
                          "--txns", "300", "--warmup", "0", "--keys", "1000", "--quiet", "--dir", "d",
                          "--out", "raw.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    json_t *rows = load_jsonl(scratch, "raw.jsonl"), *o;
    double raw_b[2] = {0}, cl_b[2] = {0};
    size_t i;
    json_array_foreach(rows, i, o) {
        const char *engine = json_string_value(at(o, "engine"));
        int durable = strcmp(json_string_value(at(o, "config.sync")), "commit") == 0;
        int big = json_integer_value(at(o, "config.value_size")) == 300;
        ck_assert_str_eq(json_string_value(at(o, "status")), "ok");
        ck_assert_int_eq(json_integer_value(at(o, "metrics.txns")), 300);
        /* per commit the engine counted, in the same window as its bytes */
        double per = (double)json_integer_value(at(o, "metrics.log_bytes")) /
                     (double)json_integer_value(at(o, "metrics.engine_commits"));
        if (strcmp(engine, "raw"))
            cl_b[big] = per;
        else {
            raw_b[big] = per;
            /* the counters' window is quiet at both ends: exactly the
             * measured commits, and one sync each */
            json_int_t commits = json_integer_value(at(o, "metrics.engine_commits"));
            ck_assert_msg(commits == 300, "raw counted %lld commits", (long long)commits);
            ck_assert_int_eq(json_integer_value(at(o, "metrics.syncs")), durable ? commits : 0);
        }
    }
    ck_assert_int_eq(json_array_size(rows), 8);
    json_decref(rows);
    for (int b = 0; b < 2; b++)
        ck_assert_msg(raw_b[b] > 0 && raw_b[b] == cl_b[b], "bytes per commit: raw %.1f, commitlab %.1f", raw_b[b],
                      cl_b[b]);

    const char *na[][4] = {{"--workload", "tpcb", NULL}, {"--read-ratio", "0.5", NULL}, {"--verify", NULL},
                           {"--sync", "periodic", NULL}};
    for (size_t k = 0; k < 4; k++) {
        const char *a[16] = {"bench", "--engine", "raw", "--txns", "10", "--warmup", "0", "--keys", "100",
                             "--quiet", "--dir", "d"};
        size_t n = 12;
        for (size_t j = 0; na[k][j]; j++)
            a[n++] = na[k][j];
        r = run_cl(scratch, a);
        ck_assert_msg(r.status == 0 && strstr(r.out, "n/a"), "raw %s: exit %d: %s", na[k][0], r.status, r.out);
        run_free(&r);
    }
}
END_TEST

START_TEST(test_rocksdb_write_group)
{
    if (!built("rocksdb"))
        return;
    const char *args[] = {"bench", "--engine", "rocksdb,commitlab", "--sync", "commit", "--clients", "8",
                          "--txns", "2000", "--warmup", "0", "--keys", "1000", "--no-preload", "--quiet",
                          "--dir", "d", "--out", "wg.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    json_t *rows = load_jsonl(scratch, "wg.jsonl"), *o;
    size_t i;
    json_array_foreach(rows, i, o) {
        json_t *g = at(o, "metrics.write_group");
        if (strcmp(json_string_value(at(o, "engine")), "commitlab") == 0) {
            ck_assert(json_is_null(g));
        } else {
            json_int_t self = json_integer_value(json_object_get(g, "by_self"));
            json_int_t leader = json_integer_value(json_object_get(g, "by_leader"));
            ck_assert_msg(self > 0 && leader > 0, "rocksdb write group: by_self %lld, by_leader %lld",
                          (long long)self, (long long)leader);
            ck_assert_msg(self + leader >= 1900 && self + leader <= 2100, "%lld writes for 2000 transactions",
                          (long long)(self + leader));
        }
    }
    json_decref(rows);
}
END_TEST

/* The newest OPTIONS file RocksDB wrote in db (it writes one at each open,
 * from the options it opened with), read whole; NULL when there is none. */
static char *rocksdb_options_file(const char *db)
{
    DIR *d = opendir(db);
    ck_assert_msg(d != NULL, "%s: %s", db, strerror(errno));
    char newest[256] = "", path[4096 + sizeof newest];
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, "OPTIONS-", 8) == 0 && strlen(e->d_name) < sizeof newest &&
            strcmp(e->d_name, newest) > 0) /* fixed-width numbers: by name is by number */
            snprintf(newest, sizeof newest, "%s", e->d_name);
    closedir(d);
    if (!newest[0])
        return NULL;
    snprintf(path, sizeof path, "%s/%s", db, newest);
    return slurp(path);
}

/* --rocksdb-write: each of RocksDB's write paths runs and says so in the
 * JSON (config.rocksdb_write and the settings), RocksDB itself opened with
 * the option (its OPTIONS file), and every durable one synced the WAL:
 * sync=true writes, grouped, for the three that write synced, and
 * manual-flush's own FlushWAL(sync=true) after each commit -- one sync per
 * commit, which neither an ignored option (RocksDB's grouped syncs) nor a
 * write left unsynced (none) gives.  unordered on a TransactionDB (tpcb)
 * and the option on another engine are n/a. */
START_TEST(test_rocksdb_write_paths)
{
    if (!built("rocksdb"))
        return;
    static const struct {
        const char *mode, *setting;
        int pipelined, unordered, manual;
    } modes[] = {
        {"default", "sync=true", 0, 0, 0},
        {"pipelined", "sync=true enable_pipelined_write=1", 1, 0, 0},
        {"unordered", "sync=true unordered_write=1", 0, 1, 0},
        {"manual-flush", "sync=false manual_wal_flush=1 +FlushWAL(sync) after each commit", 0, 0, 1},
    };
    const char *args[] = {"bench", "--engine", "rocksdb", "--rocksdb-write", "default,pipelined,unordered,manual-flush",
                          "--sync", "commit", "--clients", "4", "--txns", "800", "--warmup", "0", "--keys", "1000",
                          "--no-preload", "--verify", "--quiet", "--dir", "d", "--out", "rw.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    json_t *rows = load_jsonl(scratch, "rw.jsonl"), *o;
    size_t i;
    ck_assert_int_eq(json_array_size(rows), 4);
    json_array_foreach(rows, i, o) {
        const char *status = json_string_value(at(o, "status"));
        const char *mode = json_string_value(at(o, "config.rocksdb_write"));
        const char *settings = json_string_value(at(o, "engine_settings"));
        ck_assert_msg(strcmp(status, "ok") == 0, "%s: %s: %s", modes[i].mode, status,
                      json_string_value(at(o, "reason")));
        ck_assert_msg(mode && strcmp(mode, modes[i].mode) == 0, "run %zu: config.rocksdb_write %s, want %s", i + 1,
                      mode ? mode : "null", modes[i].mode);
        ck_assert_msg(settings && strncmp(settings, modes[i].setting, strlen(modes[i].setting)) == 0,
                      "%s: settings '%s'", modes[i].mode, settings);
        ck_assert_int_eq(json_integer_value(at(o, "metrics.txns")), 800);
        ck_assert_msg(json_is_true(at(o, "metrics.verified")), "%s: not verified", modes[i].mode);
        json_int_t syncs = json_integer_value(at(o, "metrics.syncs"));
        ck_assert_msg(syncs > 0, "%s --sync commit: %lld WAL syncs", modes[i].mode, (long long)syncs);
        if (modes[i].manual) /* one FlushWAL(sync) per commit, counted in a quiet window */
            ck_assert_msg(syncs == 800, "manual-flush: %lld WAL syncs for 800 commits", (long long)syncs);
    }
    json_decref(rows);

    /* RocksDB's own record of the options it opened with */
    for (i = 0; i < sizeof modes / sizeof *modes; i++) {
        char dir[64], db[4096];
        snprintf(dir, sizeof dir, "d-%s", modes[i].mode);
        const char *one[] = {"bench", "--engine", "rocksdb", "--rocksdb-write", modes[i].mode, "--txns", "20",
                             "--warmup", "0", "--keys", "100", "--no-preload", "--reuse", "--quiet", "--dir", dir,
                             NULL};
        r = run_cl(scratch, one);
        ck_assert_msg(r.status == 0, "%s: exit %d: %s%s", modes[i].mode, r.status, r.out, r.err);
        run_free(&r);
        snprintf(db, sizeof db, "%s/%s/rocksdb.db", scratch, dir);
        char *opts = rocksdb_options_file(db);
        ck_assert_msg(opts != NULL, "%s: no OPTIONS file in %s", modes[i].mode, db);
        ck_assert_msg((strstr(opts, "enable_pipelined_write=true") != NULL) == modes[i].pipelined &&
                          (strstr(opts, "unordered_write=true") != NULL) == modes[i].unordered &&
                          (strstr(opts, "manual_wal_flush=true") != NULL) == modes[i].manual,
                      "%s: RocksDB did not open with the write path asked for", modes[i].mode);
        free(opts);
    }

    const char *refused[] = {"bench", "--engine", "rocksdb,commitlab,lmdb", "--workload", "tpcb",
                             "--rocksdb-write", "unordered", "--txns", "10", "--warmup", "0", "--quiet",
                             "--dir", "d", "--out", "na.jsonl", NULL};
    r = run_cl(scratch, refused);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    rows = load_jsonl(scratch, "na.jsonl");
    ck_assert_int_eq(json_array_size(rows), 3);
    json_array_foreach(rows, i, o) {
        const char *reason = json_string_value(at(o, "reason"));
        ck_assert_str_eq(json_string_value(at(o, "status")), "n/a");
        ck_assert_msg(reason && strstr(reason, "--rocksdb-write") && !strchr(reason, '\n'), "%s: reason '%s'",
                      json_string_value(at(o, "engine")), reason);
    }
    json_decref(rows);
}
END_TEST

/* WiredTiger's commit path as its own counters and its own record of its
 * settings (WiredTiger.basecfg) say: at one client each durable commit
 * is one log sync (an fdatasync, or with --sync-method dsync the O_DSYNC
 * write of its slot), counted by WiredTiger's statistics in a quiet
 * window and seen at the file calls too; --sync none syncs nothing but
 * writes each commit to the file before it returns (method=none), which
 * is what lets it claim to survive a kill; every commit's record is in a
 * write group (a slot).  What WiredTiger cannot express is n/a, naming
 * the flag. */
START_TEST(test_wiredtiger_commit_path)
{
    if (!built("wiredtiger"))
        return;
    const char *args[] = {"bench",         "--engine",        "wiredtiger", "--sync", "commit,none",
                          "--sync-method", "fdatasync,dsync", "--clients",  "1",      "--txns",
                          "300",           "--warmup",        "0",          "--keys", "1000",
                          "--no-preload",  "--verify",        "--quiet",    "--dir",  "d",
                          "--out",         "wt.jsonl",        NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    json_t *rows = load_jsonl(scratch, "wt.jsonl"), *o;
    size_t i;
    ck_assert_int_eq(json_array_size(rows), 4);
    json_array_foreach(rows, i, o)
    {
        const char *sync = json_string_value(at(o, "config.sync"));
        const char *method = json_string_value(at(o, "config.sync_method"));
        const char *settings = json_string_value(at(o, "engine_settings"));
        char what[64], want[64];
        snprintf(what, sizeof what, "--sync %s --sync-method %s", sync, method);
        ck_assert_msg(!strcmp(json_string_value(at(o, "status")), "ok"), "%s: %s", what,
                      json_string_value(at(o, "reason")));
        ck_assert_msg(json_is_true(at(o, "metrics.verified")), "%s: not verified", what);
        int durable = !strcmp(sync, "commit");
        snprintf(want, sizeof want, "method=%s", !durable ? "none" : !strcmp(method, "dsync") ? "dsync" : "fsync");
        ck_assert_msg(settings && strstr(settings, want), "%s: settings '%s', want %s", what, settings, want);
        json_int_t commits = json_integer_value(at(o, "metrics.engine_commits"));
        json_int_t syncs = json_integer_value(at(o, "metrics.syncs"));
        ck_assert_msg(commits == 300, "%s: %lld commits counted", what, (long long)commits);
        double file_syncs = figure(o, "metrics.file_syncs_per_commit", what);
        double file_writes = figure(o, "metrics.file_writes_per_commit", what);
        if (durable) {
            ck_assert_msg(syncs >= 300 && syncs <= 315, "%s: %lld log syncs for 300 commits at one client", what,
                          (long long)syncs);
            ck_assert_msg(file_syncs >= 1 - 1e-9, "%s: %g syncs per commit at its file calls", what, file_syncs);
        } else {
            ck_assert_msg(syncs == 0 && file_syncs == 0, "%s: %lld log syncs, %g at the file calls", what,
                          (long long)syncs, file_syncs);
        }
        ck_assert_msg(file_writes >= 0.99, "%s: %g writes per commit: a commit returned before its write", what,
                      file_writes);
        json_t *g = at(o, "metrics.write_group");
        json_int_t self = json_integer_value(json_object_get(g, "by_self"));
        json_int_t leader = json_integer_value(json_object_get(g, "by_leader"));
        ck_assert_msg(self > 0 && self + leader >= 300, "%s: write groups: %lld led, %lld by a leader", what,
                      (long long)self, (long long)leader);
    }
    json_decref(rows);

    /* WiredTiger's own record of what it was opened with */
    const char *dsync[] = {
        "bench",   "--engine", "wiredtiger", "--sync",   "commit", "--sync-method", "dsync", "--segment-size",
        "1M",      "--txns",   "20",         "--warmup", "0",      "--keys",        "100",   "--no-preload",
        "--reuse", "--quiet",  "--dir",      "b",        NULL};
    r = run_cl(scratch, dsync);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    run_free(&r);
    char path[4200];
    snprintf(path, sizeof path, "%s/b/wiredtiger.db/WiredTiger.basecfg", scratch);
    char *base = slurp(path);
    ck_assert_msg(base && strstr(base, "method=dsync") && strstr(base, "enabled=true") &&
                      strstr(base, "file_max=1048576") && strstr(base, "prealloc=false"),
                  "WiredTiger.basecfg: %s", base ? base : "(none)");
    free(base);

    static const char *const na[][2] = {{"--sync-method", "fsync"}, {"--segments", "recycle"}, {"--cache", "512K"},
                                        {"--segment-size", "64K"},  {"--prealloc", "2"},       {"--sync", "flusher"}};
    for (size_t k = 0; k < sizeof na / sizeof *na; k++) {
        const char *a[] = {"bench", "--engine", "wiredtiger", na[k][0],   na[k][1], "--txns",
                           "10",    "--warmup", "0",          "--keys",   "100",    "--quiet",
                           "--dir", "d",        "--out",      "na.jsonl", NULL};
        r = run_cl(scratch, a);
        ck_assert_msg(r.status == 0, "%s %s: exit %d: %s%s", na[k][0], na[k][1], r.status, r.out, r.err);
        run_free(&r);
    }
    rows = load_jsonl(scratch, "na.jsonl");
    ck_assert_int_eq(json_array_size(rows), sizeof na / sizeof *na);
    json_array_foreach(rows, i, o)
    {
        const char *reason = json_string_value(at(o, "reason"));
        ck_assert_msg(!strcmp(json_string_value(at(o, "status")), "n/a"), "%s %s ran", na[i][0], na[i][1]);
        ck_assert_msg(reason && strstr(reason, na[i][0]) && !strchr(reason, '\n'), "%s %s: reason '%s'", na[i][0],
                      na[i][1], reason);
    }
    json_decref(rows);
}
END_TEST

/* A policy an engine cannot run is n/a, in the table and the JSON, with
 * the reason: never the engine's nearest policy under this one's name
 * (RocksDB under --sync flusher ran as sync=true, labelled "flusher"). */
START_TEST(test_policy_not_substituted)
{
    const char *args[] = {"bench", "--engine", "rocksdb,lmdb,sqlite", "--sync", "flusher", "--txns", "5",
                          "--warmup", "0", "--keys", "100", "--quiet", "--dir", "d", "--out", "fl.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
    json_t *rows = load_jsonl(scratch, "fl.jsonl"), *o;
    size_t i;
    ck_assert_int_eq(json_array_size(rows), 3);
    json_array_foreach(rows, i, o) {
        const char *engine = json_string_value(at(o, "engine"));
        const char *reason = json_string_value(at(o, "reason"));
        ck_assert_msg(strcmp(json_string_value(at(o, "status")), "n/a") == 0, "%s --sync flusher ran", engine);
        if (built(engine))
            ck_assert_msg(reason && strstr(reason, "--sync flusher"), "%s: reason '%s'", engine, reason);
        char line[64];
        snprintf(line, sizeof line, "\n%-9s %-8s %7u %13s", engine, "flusher", 1u, "n/a");
        ck_assert_msg(strstr(r.out, line), "%s: no n/a row in the table: %s", engine, r.out);
    }
    json_decref(rows);
    run_free(&r);
}
END_TEST

int main(int argc, char **argv)
{
    if (!find_binary(argc, argv))
        return 77;
    Suite *s = suite_create("bench/drivers");
    TCase *tc = tcase_create("drivers");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_commitlab);
    tcase_add_test(tc, test_lmdb);
    tcase_add_test(tc, test_rocksdb);
    tcase_add_test(tc, test_sqlite);
    tcase_add_test(tc, test_wiredtiger);
    tcase_add_test(tc, test_tpcb);
    tcase_add_test(tc, test_sync_latency_every_engine);
    tcase_add_test(tc, test_file_calls_every_engine);
    tcase_add_test(tc, test_rocksdb_write_group);
    tcase_add_test(tc, test_raw_floor);
    tcase_add_test(tc, test_counter_window_exact);
    tcase_add_test(tc, test_pipeline);
    tcase_add_test(tc, test_open_refused);
    tcase_add_test(tc, test_rwf_dsync_refused);
    tcase_add_test(tc, test_rocksdb_write_paths);
    tcase_add_test(tc, test_policy_not_substituted);
    tcase_add_test(tc, test_wiredtiger_commit_path);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
