/*
 * check_cli.c -- `commitlab bench` as a user meets it, run as the real
 * binary: bad arguments exit 2 with one line naming the flag -- among
 * them, in bench, crash and matrix, every flag that takes a value given
 * twice, and a list naming one value twice, however spelled; the JSON
 * line of a run parses (jansson) and carries every documented field
 * (docs/bench.md); --list-engines says exactly which engines are built.
 */
#include <check.h>
#include <jansson.h>

#include "bench_run_util.h"

static char *scratch;

static void setup(void)
{
    scratch = tu_mkdtemp("bench-cli");
}

static void teardown(void)
{
    tu_rmdir(scratch);
    free(scratch);
}

/* ---- bad arguments ------------------------------------------------------- */

static const struct {
    const char *args[6];
    const char *flag; /* must appear in the one-line message */
} bad[] = {
    {{"--sync", "sometimes"}, "--sync"},
    {{"--sync", "commit,,none"}, "--sync"},
    {{"--sync-method", "osync"}, "--sync-method"},
    {{"--engine", "mysql"}, "--engine"},
    {{"--engine", "lmdb,bdb"}, "--engine"},
    {{"--workload", "tpcc"}, "--workload"},
    {{"--clients", "0"}, "--clients"},
    {{"--clients", "1,x"}, "--clients"},
    {{"--clients"}, "--clients"},
    {{"--duration", "-3"}, "--duration"},
    {{"--duration", "soon"}, "--duration"},
    {{"--txns", "0"}, "--txns"},
    {{"--value-size", "100000"}, "--value-size"},
    {{"--read-ratio", "1.5"}, "--read-ratio"},
    {{"--dist", "pareto"}, "--dist"},
    {{"--segments", "reuse"}, "--segments"},
    {{"--segment-size", "12q"}, "--segment-size"},
    {{"--cache", "17179869185G"}, "--cache"},    /* 2^64 + 1 GiB: refused, not wrapped to 1 GiB */
    {{"--segment-size", "18446744073709551616"}, "--segment-size"},
    /* beyond the library's own ranges (engine/options.c), which the flags take */
    {{"--interval", "60001"}, "[1, 60000]"},
    {{"--max-batch", "2M"}, "[0, 1048576]"},
    {{"--cache", "32k"}, "--cache"},
    {{"--segment-size", "2G"}, "--segment-size"},
    {{"--commit-delay", "100001"}, "--commit-delay"},
    {{"--uring-depth", "0"}, "--uring-depth"},
    {{"--elr", "maybe"}, "--elr"},
    {{"--lmdb-flags", "nosync"}, "--lmdb-flags"},
    {{"--sqlite-sync", "extra"}, "--sqlite-sync"},
    {{"--rocksdb-write", "two-queues"}, "--rocksdb-write"},
    {{"--rocksdb-write", "pipelined,"}, "--rocksdb-write"},
    {{"--format", "xml"}, "--format"},
    /* the one rule of lists: a backslash escapes only ',' and itself */
    {{"--engine", "plugin:./a\\x.so"}, "--engine: 'plugin:./a\\x.so' has a backslash before something other"},
    {{"--clients", "1\\"}, "--clients: '1\\' has a backslash before nothing"},
    {{"--sync", "commit\\,none"}, "--sync: 'commit,none' is not accepted"},
    {{"--lmdb-flags", "writemap,\\"}, "--lmdb-flags"},
    {{"--no-such-flag"}, "--no-such-flag"},
};

START_TEST(test_bad_arguments)
{
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *args[8] = {"bench"};
        size_t n = 1;
        for (size_t j = 0; j < 6 && bad[i].args[j]; j++)
            args[n++] = bad[i].args[j];
        args[n] = NULL;
        struct cl_run r = run_cl(scratch, args);
        ck_assert_msg(r.status == 2, "%s %s: exit %d, want 2", bad[i].args[0], bad[i].args[1] ? bad[i].args[1] : "",
                      r.status);
        ck_assert_msg(strstr(r.err, bad[i].flag), "%s: message does not name the flag: %s", bad[i].flag, r.err);
        char *nl = strchr(r.err, '\n');
        ck_assert_msg(nl && nl[1] == 0, "%s: not one line: %s", bad[i].flag, r.err);
        ck_assert_msg(r.out[0] == 0, "%s: something was run: %s", bad[i].flag, r.out);
        run_free(&r);
    }
}
END_TEST

START_TEST(test_accepted_values_named)
{
    const char *args[] = {"bench", "--sync", "fast", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_int_eq(r.status, 2);
    const char *names[] = {"none", "periodic", "commit", "group", "uring", "flusher"};
    for (size_t i = 0; i < 6; i++)
        ck_assert_msg(strstr(r.err, names[i]), "accepted value %s not named: %s", names[i], r.err);
    run_free(&r);
}
END_TEST

/* ---- a flag given twice, a value named twice -------------------------------- */

/* Runs args (NULL-terminated) and checks: exit 2, one line on stderr that
 * holds want, nothing on stdout. */
static void refused(const char *const *args, const char *want)
{
    struct cl_run r = run_cl(scratch, args);
    char what[200] = "";
    for (size_t i = 0; args[i] && strlen(what) + strlen(args[i]) + 2 < sizeof what; i++)
        strcat(strcat(what, " "), args[i]);
    ck_assert_msg(r.status == 2, "%s: exit %d, want 2: %s", what, r.status, r.err);
    ck_assert_msg(strstr(r.err, want), "%s: the message does not say '%s': %s", what, want, r.err);
    char *nl = strchr(r.err, '\n');
    ck_assert_msg(nl && nl[1] == 0, "%s: not one line: %s", what, r.err);
    ck_assert_msg(r.out[0] == 0, "%s: something was run: %s", what, r.out);
    run_free(&r);
}

/* Every flag of bench, crash and matrix that takes a value, with one its
 * first use accepts; test_flags_covered holds this to each --help. */
/* clang-format off */
static const struct {
    const char *cmd, *flag, *value, *want; /* want: NULL for "FLAG: given twice" */
} once[] = {
    {"bench", "--engine", "commitlab"}, {"bench", "--workload", "kv"}, {"bench", "--clients", "1"},
    {"bench", "--duration", "1"}, {"bench", "--txns", "5"}, {"bench", "--warmup", "0"}, {"bench", "--dir", "d"},
    {"bench", "--seed", "1"}, {"bench", "--rate", "0"}, {"bench", "--value-size", "100"},
    {"bench", "--keys", "100"}, {"bench", "--dist", "zipf"}, {"bench", "--zipf-theta", "0.5"},
    {"bench", "--ops-per-txn", "1"}, {"bench", "--read-ratio", "0"}, {"bench", "--scale", "1"},
    {"bench", "--sync", "commit"}, {"bench", "--sync-method", "fdatasync"}, {"bench", "--elr", "on"},
    {"bench", "--segments", "fresh"}, {"bench", "--segment-init", "zero"}, {"bench", "--segment-size", "1M"},
    {"bench", "--prealloc", "0"}, {"bench", "--recycle-max", "4"}, {"bench", "--checkpoint-bytes", "4M"},
    {"bench", "--commit-delay", "0"}, {"bench", "--commit-siblings", "0"}, {"bench", "--interval", "200"},
    {"bench", "--uring-depth", "4"}, {"bench", "--uring-sync", "fsync"}, {"bench", "--pipeline", "1"},
    {"bench", "--max-batch", "0"}, {"bench", "--flusher-spin", "0"}, {"bench", "--wait", "block"},
    {"bench", "--wait-spin", "0"}, {"bench", "--sync-latency", "0"}, {"bench", "--log-insert", "mutex"},
    {"bench", "--cache", "64M"}, {"bench", "--lmdb-flags", "writemap"}, {"bench", "--sqlite-sync", "full"},
    {"bench", "--rocksdb-write", "default"}, {"bench", "--pg-bindir", "/usr/bin"}, {"bench", "--pg-user", "postgres"},
    /* --pg-set is repeatable: a value holding the ';' that joins them is what is refused */
    {"bench", "--pg-set", "a=1;b=2", "--pg-set: 'a=1;b=2' holds a ';'"}, {"bench", "--repeat", "2"}, {"bench", "--out", "o.jsonl"},
    {"bench", "--format", "csv"}, {"bench", "--plugin-dir", "plugins"},
    {"crash", "--mode", "kill"}, {"crash", "--engine", "commitlab"}, {"crash", "--plugin-dir", "plugins"},
    {"crash", "--pipeline", "1"}, {"crash", "--sync", "commit"}, {"crash", "--sync-method", "fdatasync"},
    {"crash", "--uring-sync", "fsync"}, {"crash", "--segments", "fresh"}, {"crash", "--segment-init", "zero"},
    {"crash", "--prealloc", "0"}, {"crash", "--elr", "on"}, {"crash", "--model", "drop"},
    {"crash", "--clients", "2"}, {"crash", "--workload", "kv"}, {"crash", "--iterations", "3"},
    {"crash", "--lmdb-flags", "writemap"}, {"crash", "--sqlite-sync", "full"}, {"crash", "--cut-journal-max", "1M"},
    {"crash", "--txns", "10"}, {"crash", "--jobs", "1"}, {"crash", "--seed", "1"}, {"crash", "--replay", "1"},
    {"crash", "--dir", "d"}, {"crash", "--out", "o.jsonl"},
    {"matrix", "--fs", "tmpfs"}, {"matrix", "--workdir", "w"}, {"matrix", "--image-size", "1G"},
    {"matrix", "--image-init", "zero"}, {"matrix", "--loop", "direct"}, {"matrix", "--device", "/dev/null"},
    {"matrix", "--destroy-data", "/dev/null"}, {"matrix", "--snapshot-every", "1"},
    {"matrix", "--preset", "data-io", "--preset: one preset at a time"}, {"matrix", "--repeat", "2"},
    {"matrix", "--mount-opts", "ext4:noatime", "--mount-opts: ext4 given twice"},
    {"matrix", "--mkfs-opts", "ext4:-m 0", "--mkfs-opts: ext4 given twice"},
    {"matrix", "--zfs-recordsize", "8k"}, {"matrix", "--zfs-primarycache", "all"},
    {"matrix", "--zfs-logbias", "latency"}, {"matrix", "--zfs-compression", "off"},
    {"matrix", "--clients", "1"}, /* and bench's options, by bench's parser */
};
/* clang-format on */

START_TEST(test_flag_given_twice)
{
    for (size_t i = 0; i < sizeof once / sizeof *once; i++) {
        char want[100];
        snprintf(want, sizeof want, "%s: given twice ('%s', then '%s')", once[i].flag, once[i].value, once[i].value);
        const char *args[] = {once[i].cmd, once[i].flag, once[i].value, once[i].flag, once[i].value, NULL};
        refused(args, once[i].want ? once[i].want : want);
    }
    /* --flag=value is the same flag */
    refused((const char *const[]){"bench", "--clients=4", "--clients", "8", NULL},
            "--clients: given twice ('4', then '8')");
    /* a preset's options come first, and the user's replace them: the
     * refusal here is the --dir that follows, not --keys or --cache */
    refused((const char *const[]){"matrix", "--preset", "data-io", "--keys", "1000", "--cache", "1M", "--fs", "tmpfs",
                                  "--dir", "x", NULL},
            "--dir: the runs go to each filesystem's own mount");
}
END_TEST

/* The table above holds every flag that takes a value ("  --flag ARG" in
 * each command's --help), so a flag added later is checked too. */
START_TEST(test_flags_covered)
{
    const char *cmds[] = {"bench", "crash", "matrix"};
    for (size_t c = 0; c < 3; c++) {
        struct cl_run r = run_cl(scratch, (const char *const[]){cmds[c], "--help", NULL});
        ck_assert_int_eq(r.status, 0);
        int flags = 0;
        for (char *line = r.out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            char flag[64], arg[64];
            if (strncmp(line, "  --", 4) != 0 || sscanf(line, "  %63[-a-z] %63[A-Za-z.:|]", flag, arg) != 2 ||
                line[2 + strlen(flag) + 1] == ' ')
                continue; /* not a flag, or one without a value */
            size_t i = 0;
            while (i < sizeof once / sizeof *once && (strcmp(once[i].cmd, cmds[c]) || strcmp(once[i].flag, flag)))
                i++;
            ck_assert_msg(i < sizeof once / sizeof *once, "%s %s %s: not in the table of flags given twice", cmds[c],
                          flag, arg);
            flags++;
        }
        ck_assert_int_ge(flags, 10);
        run_free(&r);
    }
}
END_TEST

/* A list naming one value twice, however it is spelled. */
static const struct {
    const char *cmd, *flag, *value;
} twice[] = {
    {"bench", "--clients", "1,1"},
    {"bench", "--clients", "01,1"},
    {"bench", "--sync", "commit,commit"},
    {"bench", "--engine", "commitlab,commitlab"},
    {"bench", "--segment-size", "64k,65536"},
    {"bench", "--cache", "1M,1024k"},
    {"bench", "--read-ratio", "0.5,.5"},
    {"bench", "--elr", "on,off,on"},
    {"bench", "--lmdb-flags", "writemap,writemap"},
    {"crash", "--model", "drop,drop"},
    {"crash", "--clients", "2,2"},
    {"crash", "--sync", "commit,group,commit"},
    {"matrix", "--keys", "10,10"},
    {"matrix", "--zfs-recordsize", "8k,8192"},
    {"matrix", "--zfs-primarycache", "all,metadata,all"},
};

START_TEST(test_value_named_twice)
{
    for (size_t i = 0; i < sizeof twice / sizeof *twice; i++) {
        char want[100];
        snprintf(want, sizeof want, "%s: '%s' names one value twice", twice[i].flag, twice[i].value);
        refused((const char *const[]){twice[i].cmd, twice[i].flag, twice[i].value, NULL}, want);
    }
}
END_TEST

/* ---- --list-engines --------------------------------------------------------- */

static int listed_as(const char *out, const char *engine, const char *what)
{
    char line[64];
    snprintf(line, sizeof line, "\n%-10s %s", engine, what);
    return strstr(out, line) != NULL;
}

START_TEST(test_list_engines)
{
    const char *args[] = {"bench", "--list-engines", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(listed_as(r.out, "commitlab", "built"), "%s", r.out);
    ck_assert_msg(listed_as(r.out, "lmdb", "built"), "%s", r.out);
#ifdef CL_HAVE_ROCKSDB
    ck_assert_msg(listed_as(r.out, "rocksdb", "built"), "%s", r.out);
#else
    ck_assert_msg(listed_as(r.out, "rocksdb", "not built"), "%s", r.out);
#endif
#ifdef CL_HAVE_SQLITE
    ck_assert_msg(listed_as(r.out, "sqlite", "built"), "%s", r.out);
#else
    ck_assert_msg(listed_as(r.out, "sqlite", "not built"), "%s", r.out);
#endif
    run_free(&r);
}
END_TEST

/* An engine listed as built runs; an unbuilt one is an n/a row, not an
 * error and not a substitute. */
START_TEST(test_listed_engines_run)
{
    const char *engines[] = {"commitlab", "lmdb", "rocksdb", "sqlite", "raw"};
    for (size_t i = 0; i < 5; i++) {
        const char *args[] = {"bench", "--engine", engines[i], "--txns", "20", "--warmup", "0", "--keys", "100",
                              "--quiet", "--dir", "d", NULL};
        struct cl_run r = run_cl(scratch, args);
        ck_assert_msg(r.status == 0, "%s: exit %d: %s", engines[i], r.status, r.err);
        int built = 1;
#ifndef CL_HAVE_ROCKSDB
        built &= strcmp(engines[i], "rocksdb") != 0;
#endif
#ifndef CL_HAVE_SQLITE
        built &= strcmp(engines[i], "sqlite") != 0;
#endif
        ck_assert_msg(built == (strstr(r.out, "n/a") == NULL), "%s: %s", engines[i], r.out);
        run_free(&r);
    }
}
END_TEST

/* ---- the JSON line ------------------------------------------------------------ */

/* Every field docs/bench.md documents (dotted paths). */
/* clang-format off */
static const char *const documented[] = {
    "schema", "time", "run", "runs", "engine", "workload", "status", "reason", "engine_settings",
    "config.engine", "config.workload", "config.clients", "config.duration_s", "config.txns", "config.warmup_s",
    "config.dir", "config.reuse", "config.preload", "config.verify", "config.seed", "config.value_size",
    "config.key_size", "config.keys", "config.dist", "config.zipf_theta", "config.ops_per_txn",
    "config.read_ratio", "config.scale", "config.sync", "config.sync_durable", "config.sync_method",
    "config.rate_tps", "config.elr", "config.segments", "config.segment_init", "config.segment_size",
    "config.prealloc", "config.recycle_max", "config.cold_recycle", "config.checkpoint_bytes",
    "config.commit_delay_us", "config.commit_siblings", "config.interval_ms", "config.uring_depth",
    "config.uring_sync", "config.pipeline", "config.max_batch", "config.flusher_spin_us",
    "config.sync_latency_us", "config.cache_bytes", "config.no_final_checkpoint", "config.wait", "config.wait_spin_us", "config.log_insert", "config.sync_latency_emulated", "config.lmdb_flags",
    "config.sqlite_sync", "config.rocksdb_write", "config.pg_set", "config.pg_bindir", "config.pg_user",
    "metrics.txns", "metrics.ops", "metrics.seconds", "metrics.tps", "metrics.latency_us.min",
    "metrics.latency_us.mean", "metrics.latency_us.p50", "metrics.latency_us.p90", "metrics.latency_us.p99",
    "metrics.latency_us.p999", "metrics.latency_us.max", "metrics.syncs", "metrics.syncs_per_commit",
    "metrics.commits_per_sync", "metrics.engine_commits", "metrics.log_bytes", "metrics.log_bytes_per_commit",
    "metrics.log_writes", "metrics.log_writes_per_commit",
    "metrics.data_bytes", "metrics.data_bytes_per_commit", "metrics.io_write_bytes_per_commit",
    "metrics.io_wchar_per_commit", "metrics.device_bytes_per_commit", "metrics.cpu_us_per_txn",
    "metrics.vcsw_per_txn", "metrics.ivcsw_per_txn", "metrics.file_syncs", "metrics.file_writes",
    "metrics.file_write_bytes", "metrics.file_syncs_per_commit", "metrics.file_commits_per_sync",
    "metrics.file_writes_per_commit", "metrics.file_write_bytes_per_commit",
    "metrics.checkpoints", "metrics.checkpoint_pause_us", "metrics.preload_s", "metrics.timeline",
    "metrics.verified", "metrics.verified_keys", "metrics.commit_phases_us",
    "env.kernel", "env.os", "env.machine", "env.hostname", "env.cpu_model", "env.cores", "env.fs_type",
    "env.fs_magic", "env.mount_point", "env.mount_source", "env.mount_options", "env.super_options",
    "env.device", "env.dev_id", "env.volatile_fs", "env.fs_journal", "env.engine_version", "env.engine_plugin", "env.commitlab_version",
};
/* clang-format on */

START_TEST(test_json_lines)
{
    const char *args[] = {"bench", "--engine", "commitlab,lmdb", "--sync", "commit,group", "--duration", "1.2",
                          "--warmup", "0.2", "--keys", "500", "--quiet", "--dir", "d", "--out", "runs.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    run_free(&r);

    json_t *rows = load_jsonl(scratch, "runs.jsonl"), *o;
    size_t n;
    int ok = 0, na = 0;
    json_array_foreach(rows, n, o) {
        for (size_t i = 0; i < sizeof documented / sizeof *documented; i++)
            ck_assert_msg(at(o, documented[i]) != NULL, "line %zu lacks %s", n + 1, documented[i]);
        /* and the other way: every field of config is one docs/bench.md documents */
        const char *key;
        json_t *v;
        json_object_foreach(at(o, "config"), key, v) {
            char path[96];
            size_t i = 0;
            snprintf(path, sizeof path, "config.%s", key);
            while (i < sizeof documented / sizeof *documented && strcmp(documented[i], path) != 0)
                i++;
            ck_assert_msg(i < sizeof documented / sizeof *documented, "line %zu: %s is not documented", n + 1, path);
        }
        ck_assert_str_eq(json_string_value(at(o, "schema")), "commitlab-bench/1");
        const char *status = json_string_value(at(o, "status"));
        if (strcmp(status, "ok") == 0) {
            ok++;
            ck_assert(json_is_number(at(o, "metrics.tps")) && json_number_value(at(o, "metrics.tps")) > 0);
            ck_assert(json_number_value(at(o, "metrics.latency_us.p50")) <=
                      json_number_value(at(o, "metrics.latency_us.p99")));
            ck_assert(json_number_value(at(o, "metrics.latency_us.p99")) <=
                      json_number_value(at(o, "metrics.latency_us.max")));
            ck_assert(json_array_size(at(o, "metrics.timeline")) >= 1);
            ck_assert(json_is_integer(at(o, "env.cores")));
            ck_assert(json_string_length(at(o, "env.fs_type")) > 0);
            if (strcmp(json_string_value(at(o, "engine")), "commitlab") == 0) {
                ck_assert(json_is_integer(at(o, "metrics.syncs")));
                /* where the commits' time went: every phase; a durable
                 * commit waited for a sync */
                for (const char *const *p = (const char *const[]){"lock", "append", "apply", "queue", "write",
                                                                   "sync", "wakeup", NULL};
                     *p; p++) {
                    char path[64], p99[64];
                    snprintf(path, sizeof path, "metrics.commit_phases_us.%s.mean", *p);
                    snprintf(p99, sizeof p99, "metrics.commit_phases_us.%s.p99", *p);
                    ck_assert_msg(json_is_number(at(o, path)) && json_is_number(at(o, p99)), "no %s", path);
                }
                ck_assert(json_number_value(at(o, "metrics.commit_phases_us.sync.mean")) > 0);
            } else { /* LMDB keeps no sync counter: null, not a made-up number */
                ck_assert(json_is_null(at(o, "metrics.syncs")));
                ck_assert(json_is_null(at(o, "metrics.commit_phases_us")));
            }
        } else {
            /* group is not built everywhere: n/a with a reason, no metrics */
            ck_assert_str_eq(status, "n/a");
            na++;
            ck_assert(json_string_length(at(o, "reason")) > 0);
            ck_assert(json_is_null(at(o, "metrics.tps")));
        }
    }
    ck_assert_int_eq(json_array_size(rows), 4);
    json_decref(rows);
    ck_assert_int_ge(ok, 2); /* commitlab and LMDB --sync commit */
    ck_assert_int_eq(ok + na, 4);
}
END_TEST

START_TEST(test_csv)
{
    const char *args[] = {"bench", "--engine", "lmdb", "--txns", "50", "--warmup", "0", "--keys", "100",
                          "--format", "csv", "--quiet", "--dir", "d", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strncmp(r.out, "time,engine,workload,clients,", 29) == 0, "%s", r.out);
    char *second = strchr(r.out, '\n');
    ck_assert(second && strstr(second, ",lmdb,kv,1,commit,"));
    /* the context switches and the store's file calls, a column each, and
     * as many cells in the row as the header has columns */
    ck_assert_msg(strstr(r.out, ",vcsw_per_txn,ivcsw_per_txn,file_syncs_per_commit,file_commits_per_sync,"
                                "file_writes_per_commit,file_write_bytes_per_commit\n") != NULL,
                  "%s", r.out);
    int commas[2] = {0, 0}, quoted = 0;
    for (const char *p = r.out, *nl = second; *p && p < nl + strlen(nl); p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (*p == ',' && !quoted)
            commas[p > second]++;
    }
    ck_assert_int_eq(commas[0], commas[1]);
    run_free(&r);
}
END_TEST

/* --repeat 3 over two configurations: six runs, round by round (each round
 * in its own order), each JSON line saying its round and configuration; then each configuration's median over its three
 * runs (between their min and max), one summary line each, and the best of
 * the two at that client count with its margin. */
START_TEST(test_repeat)
{
    const char *args[] = {"bench", "--engine", "commitlab", "--sync", "commit", "--commit-delay", "0,50",
                          "--txns", "60", "--warmup", "0", "--keys", "200", "--no-preload", "--repeat", "3",
                          "--quiet", "--dir", "d", "--out", "rep.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "summary of 3 rounds"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "best per engine, workload and client count"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "commitlab kv, 1 clients: --sync commit commit-delay="), "%s", r.out);
    run_free(&r);

    json_t *rows = load_jsonl(scratch, "rep.jsonl"), *o;
    size_t i;
    int runs = 0, summaries = 0, seen[3] = {0, 0, 0};
    double tps[2][3];
    json_array_foreach(rows, i, o) {
        const char *schema = json_string_value(at(o, "schema"));
        if (strcmp(schema, "commitlab-bench/1") == 0) {
            /* round by round, each round running both configurations */
            ck_assert_int_eq(json_integer_value(at(o, "repeat.round")), runs / 2 + 1);
            int ci = (int)json_integer_value(at(o, "repeat.config_index"));
            ck_assert(ci == 1 || ci == 2);
            ck_assert_int_eq(json_integer_value(at(o, "config.commit_delay_us")), ci == 1 ? 0 : 50);
            seen[runs / 2] |= 1 << (ci - 1);
            tps[ci - 1][runs / 2] = json_number_value(at(o, "metrics.tps"));
            runs++;
        } else {
            ck_assert_str_eq(schema, "commitlab-bench-summary/1");
            ck_assert_int_eq(json_integer_value(at(o, "runs_ok")), 3);
            double med = json_number_value(at(o, "tps_median")), lo = 1e18, hi = 0;
            for (int k = 0; k < 3; k++) {
                lo = tps[summaries][k] < lo ? tps[summaries][k] : lo;
                hi = tps[summaries][k] > hi ? tps[summaries][k] : hi;
            }
            ck_assert(lo <= med && med <= hi);
            ck_assert(json_number_value(at(o, "tps_min")) == lo && json_number_value(at(o, "tps_max")) == hi);
            summaries++;
        }
    }
    json_decref(rows);
    ck_assert_int_eq(runs, 6);
    ck_assert_int_eq(summaries, 2);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(seen[k], 3); /* every round ran both */
}
END_TEST

/* --rate: an open loop.  At 200 tps offered to an engine that keeps up,
 * about 200 complete per second; offered 100 tps where each commit takes
 * at least the emulated 20 ms (at most about 50 tps), the schedule falls
 * behind and latencies, measured from each scheduled start, grow far
 * beyond the 20 ms a closed loop reports: no coordinated omission. */
START_TEST(test_rate_open_loop)
{
    const char *args[] = {"bench", "--engine", "commitlab", "--sync", "none", "--rate", "200", "--clients", "2",
                          "--duration", "2", "--warmup", "0.5", "--keys", "500", "--quiet", "--dir", "d",
                          "--out", "rate.jsonl", NULL};
    struct cl_run r = run_cl(scratch, args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "open loop: 200 tps offered"), "%s", r.out);
    run_free(&r);
    const char *slow[] = {"bench", "--engine", "commitlab", "--sync", "commit", "--sync-latency", "20000",
                          "--rate", "0,100", "--clients", "1", "--duration", "2", "--warmup", "0.2", "--keys", "500",
                          "--quiet", "--dir", "d", "--out", "rate.jsonl", NULL};
    r = run_cl(scratch, slow);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    run_free(&r);

    json_t *rows = load_jsonl(scratch, "rate.jsonl");
    double mean[3] = {0, 0, 0};
    ck_assert_uint_ge(json_array_size(rows), 3);
    for (size_t n = 0; n < 3; n++) {
        json_t *o = json_array_get(rows, n), *rate = at(o, "config.rate_tps");
        if (n == 0) {
            ck_assert_int_eq(json_integer_value(rate), 200);
            double tps = json_number_value(at(o, "metrics.tps"));
            ck_assert_msg(tps > 140 && tps < 260, "offered 200 tps, %.1f completed", tps);
        } else if (n == 1) {
            ck_assert(json_is_null(rate)); /* closed loop */
        } else {
            ck_assert_int_eq(json_integer_value(rate), 100);
        }
        mean[n] = json_number_value(at(o, "metrics.latency_us.mean"));
    }
    json_decref(rows);
    ck_assert_msg(mean[1] < 100000, "closed loop: mean %.0f us", mean[1]);
    ck_assert_msg(mean[2] > 200000, "open loop beyond capacity: mean %.0f us; the backlog is not counted", mean[2]);
}
END_TEST

int main(int argc, char **argv)
{
    if (!find_binary(argc, argv))
        return 77;
    Suite *s = suite_create("bench/cli");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_accepted_values_named);
    tcase_add_test(tc, test_flag_given_twice);
    tcase_add_test(tc, test_flags_covered);
    tcase_add_test(tc, test_value_named_twice);
    tcase_add_test(tc, test_list_engines);
    tcase_add_test(tc, test_listed_engines_run);
    tcase_add_test(tc, test_json_lines);
    tcase_add_test(tc, test_csv);
    tcase_add_test(tc, test_repeat);
    tcase_add_test(tc, test_rate_open_loop);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
