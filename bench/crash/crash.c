/*
 * crash.c -- `commitlab crash`: crash campaigns in one command.  Walks
 * every combination of the swept knobs, runs --iterations crashes of each
 * (crash_sim.c: simulated power failures; crash_kill.c: SIGKILLed
 * processes, and with --mode cut their unsynced writes dropped after the
 * kill, crash_cut.c), and prints one row per combination with its totals.
 *
 * What each crash runs and what is checked after it: crash_workload.c.
 *
 * Replays: every crash is named by its seed; --replay SEED reruns that one
 * and keeps its directory for `commitlab inspect`.
 *
 * --jobs N runs a combination's crashes in N worker processes, each in
 * its own directory; a crash's outcome depends only on its seed, so the
 * totals are those of a serial run (up to thread timing).
 *
 * --engine plugin:... (with --plugin-dir) runs a plugin under --mode
 * kill and --mode cut, held to what its --sync row claims an acknowledged
 * commit survives (bench_engine_survives): under kill a claim of
 * surviving a kill (CL_ENGINE_SURVIVES_KILL), under cut a claim of
 * surviving a power failure (CL_ENGINE_SURVIVES_POWER), must lose
 * nothing; without the claim, losses are counted and allowed.  Before the
 * first crash each plugin opens a fresh store once (try_plugins): one
 * that cannot is refused, exit 2, nothing run.
 *
 * --engine postgres runs under --mode kill and --mode cut: each crash a
 * private server (pg_server.c) killed whole with the clients
 * (crash_kill.c), its template made once before the first crash
 * (preflight_postgres); under --mode cut every process of the server
 * runs with the interposer preloaded and journals into the child's one
 * undo journal (crash_kill.c's cut_server_prepare, cut_journal.c).
 *
 * SIGINT, SIGTERM or SIGHUP stops the campaign after the crash in
 * progress (each crash is whole: its children waited for, its directory
 * checked): the combination it was in gets its row and JSON line with the
 * crashes done, marked interrupted, the directories go as at the end, and
 * the last line on stderr says which combination and how far it got; the
 * exit status is 128 + the signal.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_dirs.h"
#include "bench_env.h"
#include "bench_output.h"
#include "commitlab.h"
#include "crash.h"
#include "cut_journal.h"
#include "ut_args.h"
#include "ut_clock.h"
#include "ut_file.h"
#include "ut_progress.h"
#include "ut_scratch.h"
#include "vfs_fault.h"

/* ---- options ---------------------------------------------------------- */

struct list {
    char **v;
    size_t n;
};

struct crash_opts {
    struct list sync, method, segments, init, prealloc, elr, model, clients, engine, workload;
    enum crash_mode mode;     /* the campaign running: one of modes (set_mode) */
    enum crash_mode modes[3]; /* --mode's list, in its order */
    size_t nmodes;
    const char *model_arg; /* --model's list (sim's crash models) */
    uint64_t iterations, seed, replay;
    int have_replay, lying, quiet, model_given, iterations_given;
    unsigned txns, jobs;
    const char *dir, *out, *plugin_dir;
    /* the value each of crash's own options was given, so that a second
     * use is refused (ut_once) */
    const char *iterations_as, *txns_as, *jobs_as, *seed_as, *replay_as, *mode_as, *cut_max_as, *model_as;
    uint64_t cut_max;
    int cut_max_given;
    struct bench_cli knobs;       /* the knobs shared with bench, as the harness parsed them: the
                                   * lists moved into the lists above, the rest in knobs.base */
};

static void list_free(struct list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* A comma list of flag's values, each checked by ok -- or, with ok NULL,
 * as bench checks the knob of the same flag (the table of knobs), and
 * refused naming what that knob accepts: the campaign's defaults, and
 * --model.  (What the user gives of the knobs shared with bench is parsed
 * by the harness: parse.) */
static void list_split(struct list *l, const char *flag, const char *arg, int (*ok)(const char *))
{
    enum bench_knob k = bench_knob_by_flag(flag);
    char **items, why[300];
    size_t n;
    if (ut_split_list(arg, &items, &n, why, sizeof why)) /* the one rule of lists (ut_args.h) */
        ut_usage_error("crash", "%s: '%s' %s", flag, arg, why);
    for (size_t i = 0; i < n; i++)
        if (ok ? !ok(items[i]) : bench_knob_check(k, items[i]) != 0) {
            char acc[300] = "";
            if (!ok)
                bench_knob_accepted(k, acc, sizeof acc);
            ut_usage_error("crash", "%s: '%s' is not accepted%s%s", flag, items[i], ok ? "" : "; expected ", acc);
        }
    for (size_t i = 0; i < n; i++) /* the words of a list, each once: bench's own rule */
        for (size_t j = 0; j < i; j++)
            if (strcmp(items[i], items[j]) == 0)
                ut_usage_error("crash", "%s: '%s' names one value twice ('%s' and '%s'); give each value once", flag,
                               arg, items[j], items[i]);
    list_free(l);
    l->v = items;
    l->n = n;
}

static int ok_model(const char *s)
{
    enum vfs_crash_model m;
    return vfs_crash_model_parse(s, &m) == 0;
}
static int ok_uint(const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    return *s >= '0' && *s <= '9' && !*end && v <= 64;
}
static int ok_any(const char *s) { return s != NULL; }
static int ok_clients(const char *s) { return ok_uint(s) && strtoul(s, NULL, 10) >= 1; }
static int ok_engine(const char *s)
{
    if (bench_engine_is_plugin(s)) /* loaded once the command line is read (load_plugins) */
        return s[7] != 0;
    const struct bench_driver *d = bench_driver_find(s);
    if (d && d->keeps_no_data)
        ut_usage_error("crash", "--engine %s keeps no data: there is nothing to recover after a crash", s);
    return d && d->built;
}

/* ---- the campaign ----------------------------------------------------------- */

struct totals {
    uint64_t crashes, mid_run, lost, lost_max, survived;
    unsigned atomicity, garbage, phantom, recovery_failed, cut_failed;
    double rec_sum, rec_max;
    int na;
    char na_why[200];
    uint64_t first_bad_seed;
    char first_why[200];
    int have_bad;
    /* a signal stopped the combination: the crashes asked for, and the
     * seconds it ran; its row counts the crashes done */
    int interrupted;
    uint64_t planned;
    double seconds;
};

static int durable(const struct crash_config *c)
{
    return cl_sync_policy_is_durable(c->run.sync) == 1;
}

/* What an acknowledged commit survives, as the engine claims it.
 * Pipelined, commitlab acknowledges a commit by its callback, which under
 * periodic comes only after the periodic sync that made it durable
 * (commitlab.h, cl_commit_async): that survives a power failure too, though
 * a blocking periodic commit does not. */
static unsigned claims(const struct crash_config *c)
{
    struct bench_config bc;
    crash_bench_config(c, "", &bc);
    unsigned s = bench_engine_claims(c->drv, &bc);
    if (c->drv == &bench_driver_commitlab && c->pipeline > 1 && c->run.sync == CL_SYNC_PERIODIC)
        s |= CL_ENGINE_SURVIVES_POWER;
    return s;
}

/* What counts as a failure: an acknowledged commit lost where the engine
 * promises it is not -- what its --sync row claims its commits survive
 * (claims, from bench_engine_survives; for commitlab a durable policy,
 * and periodic pipelined, survives a power failure, and every policy a
 * process crash, since the page cache survives that): a kill is held to the claim of surviving a process
 * crash, a simulated power failure and a cut to the claim of surviving a
 * power failure -- and anything partly visible, foreign or
 * unrecoverable. */
static int may_lose(const struct crash_config *c)
{
    return !(claims(c) & (c->mode == CRASH_KILL ? CL_ENGINE_SURVIVES_KILL : CL_ENGINE_SURVIVES_POWER));
}

static int outcome_bad(const struct crash_config *c, const struct crash_outcome *o)
{
    return (!may_lose(c) && o->lost) || o->atomicity || o->garbage || o->phantom || o->recovery_failed ||
           o->cut_failed;
}

static int bad(const struct crash_config *c, const struct totals *t)
{
    return (!may_lose(c) && t->lost) || t->atomicity || t->garbage || t->phantom || t->recovery_failed ||
           t->cut_failed;
}

static void add(struct totals *t, const struct crash_config *c, uint64_t seed, const struct crash_outcome *o)
{
    t->crashes++;
    t->mid_run += (uint64_t)o->mid_run;
    t->lost += o->lost;
    t->lost_max = o->lost > t->lost_max ? o->lost : t->lost_max;
    t->survived += o->survived;
    t->atomicity += o->atomicity;
    t->garbage += o->garbage;
    t->phantom += o->phantom;
    t->recovery_failed += (unsigned)o->recovery_failed;
    t->cut_failed += (unsigned)o->cut_failed;
    t->rec_sum += o->recovery_ms;
    t->rec_max = o->recovery_ms > t->rec_max ? o->recovery_ms : t->rec_max;
    if (outcome_bad(c, o) && (!t->have_bad || seed < t->first_bad_seed)) {
        t->have_bad = 1;
        t->first_bad_seed = seed;
        snprintf(t->first_why, sizeof t->first_why, "%s", o->why);
    }
}

static const char *mode_name(enum crash_mode m) { return m == CRASH_CUT ? "cut" : m == CRASH_KILL ? "kill" : "sim"; }

/* A knob commitlab has and the other engines do not: "-" in their rows. */
static const char *cl_only(const struct crash_config *c, const char *v)
{
    return c->drv == &bench_driver_commitlab ? v : "-";
}

/* Writes s as one word of a POSIX shell: quoted when it needs to be. */
static void shell_word(FILE *f, const char *s)
{
    if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") == strlen(s)) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    fputc('\'', f);
}

/* The --engine value that names c's engine again: a plugin by its file,
 * written as a list item (a ',' or '\' in its path escaped, ut_args.h)
 * and quoted for the shell. */
static void engine_word(FILE *f, const struct crash_config *c)
{
    if (!c->drv->plugin_path) {
        fputs(c->names[8], f);
        return;
    }
    char *item = ut_list_escape(c->drv->plugin_path), *word = NULL;
    if (item && asprintf(&word, "plugin:%s", item) >= 0)
        shell_word(f, word);
    else
        fprintf(f, "plugin:%s", c->drv->plugin_path);
    free(word);
    free(item);
}

static void replay_line(FILE *f, const struct crash_config *c, uint64_t seed)
{
    fprintf(f, "  replay: commitlab crash --replay %" PRIu64 " --mode %s --engine ", seed, mode_name(c->mode));
    engine_word(f, c);
    fprintf(f, " --sync %s", c->names[0]);
    if (c->drv == &bench_driver_commitlab)
        fprintf(f, " --sync-method %s --segments %s --segment-init %s --prealloc %s --elr %s", c->names[1],
                c->names[2], c->names[3], c->names[4], c->names[5]);
    if (c->mode == CRASH_SIM)
        fprintf(f, " --model %s", c->names[6]);
    char given[600];
    crash_given_flags(c, given, sizeof given);
    fputs(given, f);
    if (c->mode == CRASH_CUT && c->cut_max != CUT_MAX_DEFAULT) {
        char size[32];
        crash_size_name(c->cut_max, size, sizeof size);
        fprintf(f, " --cut-journal-max %s", size);
    }
    fprintf(f, " --clients %u --workload %s --txns %u%s\n", c->clients, c->names[9], c->txns,
            c->lying ? " --lying-device" : "");
}

static void row_header(void)
{
    printf("%-12s %-8s %-9s %-8s %-9s %4s %4s %-7s %3s %4s %-4s %7s %7s %9s %6s %9s %6s %6s %6s %8s %8s  %s\n",
           "engine", "sync", "method", "segments", "init", "pre", "elr", "model", "cli", "pipe", "load", "crashes", "mid-run",
           "acks lost", "worst", "unacked+", "atomic", "garbg", "recov", "rec ms", "max ms", "verdict");
}

/* "interrupted by SIGINT after 44 of 200 crashes (2.0 s)": how far an
 * interrupted combination got, led by word. */
static void stop_progress(const struct totals *t, const char *word, char *buf, size_t len)
{
    int sig = bench_stop_signal();
    snprintf(buf, len, "%s%s%s after %" PRIu64 " of %" PRIu64 " crashes (%.1f s)", word, sig ? " by " : "",
             sig ? bench_signal_name(sig) : "", t->crashes, t->planned, t->seconds);
}

static void row(const struct crash_config *c, const struct totals *t)
{
    printf("%-12s %-8s %-9s %-8s %-9s %4s %4s %-7s %3u %4u %-4s ", c->names[8], c->names[0], cl_only(c, c->names[1]),
           cl_only(c, c->names[2]), cl_only(c, c->names[3]), cl_only(c, c->names[4]), cl_only(c, c->names[5]),
           c->names[6], c->clients, c->pipeline, c->names[9]);
    char given[600];
    crash_given_flags(c, given, sizeof given);
    if (t->na) {
        printf("%7s  (%s)%s%s\n", "n/a", t->na_why, given[0] ? "  with" : "", given);
        return;
    }
    const char *verdict = bad(c, t) ? "FAILED" : t->lost ? "ok (may lose: not durable)" : "ok";
    if (!bad(c, t) && t->lost && c->drv->plugin) /* what the engine claims, not the policy's name */
        verdict = "ok (may lose: no survival claimed)";
    char stopped[400];
    if (t->interrupted) { /* the totals of the crashes done, never taken for the whole combination */
        char how[200];
        stop_progress(t, "INTERRUPTED", how, sizeof how);
        snprintf(stopped, sizeof stopped, "%s: %s so far", how, verdict);
        verdict = stopped;
    }
    printf("%7" PRIu64 " %7" PRIu64 " %9" PRIu64 " %6" PRIu64 " %9" PRIu64 " %6u %6u %6u %8.1f %8.1f  %s\n",
           t->crashes, t->mid_run, t->lost, t->lost_max, t->survived, t->atomicity, t->garbage, t->recovery_failed,
           t->crashes ? t->rec_sum / (double)t->crashes : 0, t->rec_max, verdict);
    if (given[0])
        printf("  with%s\n", given);
}

static json_t *opt_string(const struct crash_config *c, const char *v)
{
    return c->drv == &bench_driver_commitlab ? json_string(v) : json_null();
}

static json_t *row_json(const struct crash_config *c, const struct totals *t, const char *dir, const char *top)
{
    json_t *j = json_object();
    int cl = c->drv == &bench_driver_commitlab;
    json_object_set_new(j, "schema", json_string("commitlab-crash/1"));
    json_object_set_new(j, "mode", json_string(mode_name(c->mode)));
    json_object_set_new(j, "engine", json_string(c->names[8]));
    json_object_set_new(j, "sync", json_string(c->names[0]));
    json_object_set_new(j, "sync_durable", json_boolean(durable(c)));
    /* what the engine claims an acknowledged commit survives, the verdict's measure */
    unsigned sv = claims(c);
    json_object_set_new(j, "survives_claimed", json_pack("{s:b, s:b}", "kill", (sv & CL_ENGINE_SURVIVES_KILL) != 0,
                                                         "power", (sv & CL_ENGINE_SURVIVES_POWER) != 0));
    json_object_set_new(j, "plugin", c->drv->plugin_path ? json_string(c->drv->plugin_path) : json_null());
    json_object_set_new(j, "sync_method", opt_string(c, c->names[1]));
    json_object_set_new(j, "segments", opt_string(c, c->names[2]));
    json_object_set_new(j, "segment_init", opt_string(c, c->names[3]));
    json_object_set_new(j, "prealloc", cl ? json_integer(c->run.prealloc) : json_null());
    json_object_set_new(j, "elr", cl ? json_boolean(c->run.elr) : json_null());
    json_object_set_new(j, "model", json_string(c->names[6]));
    json_object_set_new(j, "clients", json_integer(c->clients));
    json_object_set_new(j, "pipeline", json_integer(c->pipeline));
    json_object_set_new(j, "workload", json_string(c->names[9]));
    json_object_set_new(j, "txns_per_client", json_integer(c->txns));
    json_object_set_new(j, "lying_device", json_boolean(c->lying));
    char stopped[200];
    if (t->interrupted)
        stop_progress(t, "interrupted", stopped, sizeof stopped);
    json_object_set_new(j, "status", json_string(t->na ? "n/a" : t->interrupted ? "interrupted" : bad(c, t) ? "failed" : "ok"));
    json_object_set_new(j, "reason", t->na            ? json_string(t->na_why)
                                     : t->cut_failed ? json_string(t->first_why)
                                     : t->interrupted ? json_string(stopped)
                                                     : json_null());
    if (t->interrupted && !t->na) {
        int sig = bench_stop_signal();
        json_object_set_new(j, "interrupted",
                            json_pack("{s:o, s:I, s:f, s:b}", "signal", sig ? json_string(bench_signal_name(sig)) : json_null(),
                                      "crashes_asked", (json_int_t)t->planned, "seconds", t->seconds, "failed",
                                      bad(c, t)));
    } else {
        json_object_set_new(j, "interrupted", json_null());
    }
    json_object_set_new(j, "crashes", json_integer((json_int_t)t->crashes));
    json_object_set_new(j, "crashes_mid_run", json_integer((json_int_t)t->mid_run));
    json_object_set_new(j, "acked_lost", json_integer((json_int_t)t->lost));
    json_object_set_new(j, "acked_lost_worst_crash", json_integer((json_int_t)t->lost_max));
    json_object_set_new(j, "unacked_survived", json_integer((json_int_t)t->survived));
    json_object_set_new(j, "atomicity_violations", json_integer(t->atomicity));
    json_object_set_new(j, "foreign_values", json_integer(t->garbage));
    json_object_set_new(j, "phantoms", json_integer(t->phantom));
    json_object_set_new(j, "recovery_failures", json_integer(t->recovery_failed));
    json_object_set_new(j, "recovery_ms_mean", json_real(t->crashes ? t->rec_sum / (double)t->crashes : 0));
    json_object_set_new(j, "recovery_ms_max", json_real(t->rec_max));
    json_object_set_new(j, "first_failure_seed", t->have_bad ? json_integer((json_int_t)t->first_bad_seed) : json_null());
    json_object_set_new(j, "first_failure", t->have_bad ? json_string(t->first_why) : json_null());
    /* every knob the row ran under, as a bench line's config records it */
    struct bench_config bc;
    crash_bench_config(c, dir, &bc);
    json_object_set_new(j, "config", bench_config_json(&bc));
    /* when, where and by what: as a bench line's (the directory's
     * filesystem is --dir's, which the campaign's directories are in) */
    struct bench_env e;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    bench_env_probe(top, &e);
    json_object_set_new(j, "time", json_string(when));
    json_object_set_new(j, "env", bench_env_json(&e, &bc));
    return j;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: commitlab crash [options]     (comma lists run every combination)\n"
            "  LIST: values separated by ','; " UT_LIST_RULE "\n"
            "\n"
            "Crash campaigns: clients commit, the power fails (--mode sim, --mode cut) or the\n"
            "process is killed (--mode kill) at a random moment, recovery runs, and every\n"
            "acknowledged commit, every transaction's atomicity and every value is checked.\n"
            "\n"
            "  --mode LIST          sim (default): simulated power failures on commitlab's\n"
            "                       fault-injecting file layer; kill: a child process commits\n"
            "                       on the real file system and is SIGKILLed (the page cache\n"
            "                       survives), for every engine; cut: the same kill, then every\n"
            "                       file and name rolled back to its last sync (a power failure),\n"
            "                       for every engine.  A list (kill,cut) runs one campaign per\n"
            "                       mode, in its order, each with its own table\n"
            "  --engine LIST        commitlab (default); with --mode kill or cut also lmdb,\n"
            "                       rocksdb, sqlite (their --sync: commit = durable, none = not),\n"
            "                       with --mode kill postgres (a private server, killed whole),\n"
            "                       and plugins: plugin:PATH.so, or plugin:NAME with --plugin-dir\n"
            "                       (held to what each claims its commits survive)\n"
            "  --plugin-dir DIR     where plugin:NAME is found: DIR/NAME.so, else DIR/commitlab-NAME.so,\n"
            "                       else DIR/libNAME.so\n"
            "  --pipeline N         each client keeps up to N commits awaiting durability, each\n"
            "                       acknowledged by its callback (default 1): commitlab's cl_commit_async,\n"
            "                       postgres's pipeline mode, a plugin's commit_async\n"
            "  --sync LIST          sync policies (default %s)\n"
            "  --sync-method LIST   fdatasync (default), fsync, dsync, direct, rwf-dsync\n"
            "  --uring-sync WORD    uring: fsync (default) or rwf-dsync, for the whole campaign\n"
            "  --segments LIST      fresh (default), recycle\n"
            "  --segment-init LIST  zero (default), sparse, fallocate\n"
            "  --prealloc LIST      segments prepared ahead (default 0)\n"
            "  --elr LIST           on (default), off\n"
            "  --model LIST         sim: drop, torn, reorder (default all three)\n"
            "  --clients LIST       committing threads (default 4)\n"
            "  --workload LIST      kv (default): blind writes; tpcb: read-modify-write\n"
            "                       transactions that all update one branch row\n"
            "  --iterations N       crashes per combination (default 200 sim, 50 kill and cut)\n"
            "  --lmdb-flags SET     LMDB's rows: nometasync, writemap, mapasync (one set)\n"
            "  --sqlite-sync WORD   SQLite's rows: full, normal, off (default from --sync)\n"
            "  --cut-journal-max S  cut: the undo journal's bound per crash (default 256M);\n"
            "                       a run that needs more fails, naming the figure\n"
            "  --txns N             transactions per client at most (default 40)\n"
            "  --jobs N             run each combination's crashes in N processes (default 1)\n"
            "  --seed S             first seed (default 1); crash i of a combination uses S + i\n"
            "  --replay SEED        one crash, that seed, each list one value; the directory is\n"
            "                       kept (sim: the same crash point; kill: the same moment)\n"
            "  --dir D              where the crashes run (default: commitlab-crash.d here)\n"
            "  --out FILE.jsonl     append one JSON object per combination\n"
            "  --lying-device       sim: syncs succeed and make nothing durable: shows the\n"
            "                       check can fail\n"
            "  --quiet              no progress line\n"
            "\n"
            "Exit 1 when an acknowledged commit was lost where the policy promises none is\n"
            "(a durable policy; any policy under --mode kill), or any combination showed a\n"
            "partly visible transaction, a value no commit wrote, or a failed recovery, or,\n"
            "under --mode cut, made a file call the cut cannot model or wrote by a means it\n"
            "did not see (a shared writable mapping, a raw system call, io_uring).\n",
            bench_sync_durable_choices());
}

static void free_opts(struct crash_opts *o)
{
    struct list *ls[] = {&o->sync, &o->method, &o->segments, &o->init,   &o->prealloc,
                         &o->elr,  &o->model,  &o->clients,  &o->engine, &o->workload};
    for (size_t i = 0; i < sizeof ls / sizeof *ls; i++)
        list_free(ls[i]);
    bench_cli_free(&o->knobs);
}

/* Each --engine plugin:... loaded (its table checked; a bad one is one
 * line and exit 2) and named by its engine name from here on. */
static void load_plugins(struct crash_opts *co)
{
    for (size_t i = 0; i < co->engine.n; i++) {
        char err[BENCH_ERRLEN + 800];
        if (!bench_engine_is_plugin(co->engine.v[i]))
            continue;
        const struct bench_driver *d = bench_plugin_load("crash", co->engine.v[i], co->plugin_dir, err, sizeof err);
        if (!d)
            ut_usage_error("crash", "%s", err);
        if (d->keeps_no_data)
            ut_usage_error("crash", "--engine %s keeps no data: there is nothing to recover after a crash",
                           co->engine.v[i]);
        for (size_t e = 0; e < i; e++) /* two paths of one file: one engine, named twice */
            if (strcmp(co->engine.v[e], d->name) == 0)
                ut_usage_error("crash", "--engine: '%s' names one engine twice ('%s' is the plugin %s, named before)",
                               co->knobs.given_as[K_ENGINE] ? co->knobs.given_as[K_ENGINE] : "", co->engine.v[i],
                               d->name);
        char *name = strdup(d->name);
        if (!name)
            ut_usage_error("crash", "out of memory");
        free(co->engine.v[i]);
        co->engine.v[i] = name;
    }
}

/* The knobs crash shares with bench, read by the harness's one parser
 * (bench_cli_parse_knob) as bench reads them: the lists the campaign
 * sweeps (--clients at most CRASH_MAX_CLIENTS, the witness's size), and
 * every other knob an engine maps (KF_ENGINE in the table: the commit
 * path's and each engine's own, one value for the whole campaign), so a
 * knob added to the table is a crash knob too.  Its --txns (transactions
 * per client at most) is its own, not bench's. */
static const struct bench_knob_take swept_knobs[] = {
    {K_SYNC, 0}, {K_SYNC_METHOD, 0}, {K_SEGMENTS, 0}, {K_SEGMENT_INIT, 0}, {K_PREALLOC, 0},
    {K_ELR, 0},  {K_CLIENTS, 0, CRASH_MAX_CLIENTS}, {K_ENGINE, 0}, {K_WORKLOAD, 0}, {K_DIR, 0},
};
static struct bench_knob_take shared_knobs[K_COUNT];
static size_t nshared_knobs;

static void shared_knobs_init(void)
{
    nshared_knobs = 0;
    for (size_t i = 0; i < sizeof swept_knobs / sizeof *swept_knobs; i++)
        shared_knobs[nshared_knobs++] = swept_knobs[i];
    for (int k = 0; k < bench_knob_count(); k++) {
        int listed = 0;
        for (size_t i = 0; i < sizeof swept_knobs / sizeof *swept_knobs; i++)
            listed |= swept_knobs[i].knob == (enum bench_knob)k;
        if (!listed && (bench_knob((enum bench_knob)k)->flags & KF_ENGINE))
            shared_knobs[nshared_knobs++] = (struct bench_knob_take){(enum bench_knob)k, 1, 0};
    }
}

void crash_given_flags(const struct crash_config *c, char *buf, size_t len)
{
    struct bench_config bc;
    size_t o = 0;
    buf[0] = 0;
    if (!c->knobs)
        return;
    crash_bench_config(c, "", &bc);
    for (int i = 0; i < bench_knob_count() && o < len; i++) {
        enum bench_knob k = (enum bench_knob)i;
        int take = 0;
        for (size_t j = 0; j < sizeof swept_knobs / sizeof *swept_knobs; j++)
            take |= swept_knobs[j].knob == k;
        if (take || !c->knobs->given[k] || !bc.given[k])
            continue; /* a list the row names, one not given, or another engine's own */
        const struct bench_knob_def *d = bench_knob(k);
        if (d->type == KT_TRUE || d->type == KT_FALSE) {
            o += (size_t)snprintf(buf + o, len - o, " %s", d->flag);
            continue;
        }
        char v[200];
        bench_knob_format(&bc, k, v, sizeof v);
        o += (size_t)snprintf(buf + o, len - o, " %s %s", d->flag, v);
    }
}

/* The shared knobs as the harness parsed them, into the campaign: a list
 * given replaces the campaign's default list; then what crash requires of
 * an engine beyond what bench checks (built, and keeping data). */
static void take_shared(struct crash_opts *co)
{
    struct bench_cli *kc = &co->knobs;
    const struct {
        enum bench_knob k;
        struct list *l;
    } lists[] = {{K_SYNC, &co->sync},       {K_SYNC_METHOD, &co->method}, {K_SEGMENTS, &co->segments},
                 {K_SEGMENT_INIT, &co->init}, {K_PREALLOC, &co->prealloc}, {K_ELR, &co->elr},
                 {K_CLIENTS, &co->clients}, {K_ENGINE, &co->engine},     {K_WORKLOAD, &co->workload}};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        struct knob_values *kv = &kc->vals[lists[i].k];
        if (!kv->n)
            continue;
        list_free(lists[i].l);
        lists[i].l->v = kv->v;
        lists[i].l->n = kv->n;
        kv->v = NULL;
        kv->n = 0;
    }
    for (size_t i = 0; i < co->engine.n; i++)
        if (!ok_engine(co->engine.v[i]))
            ut_usage_error("crash", "--engine: '%s' is not accepted: not built into this binary", co->engine.v[i]);
    if (kc->base.given[K_DIR])
        co->dir = kc->base.dir;
}

/* The campaign of mode next: its crash models (sim's --model list; kill
 * and cut are their own model) and, unless --iterations was given, its
 * default count of crashes per combination. */
static void set_mode(struct crash_opts *co, enum crash_mode mode)
{
    co->mode = mode;
    if (mode == CRASH_SIM)
        list_split(&co->model, "--model", co->model_arg, ok_model);
    else
        list_split(&co->model, "--model", mode_name(mode), ok_any);
    if (!co->iterations_given)
        co->iterations = mode == CRASH_SIM ? 200 : 50;
}

static void parse(struct crash_opts *co, int argc, char **argv)
{
    shared_knobs_init();
    bench_cli_init(&co->knobs);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (bench_cli_parse_knob("crash", argc, argv, &i, shared_knobs, nshared_knobs, &co->knobs) != K_COUNT)
            continue;
        if (!strcmp(a, "--model")) {
            if (!v)
                ut_usage_error("crash", "%s needs a value", a);
            ut_once("crash", a, &co->model_as, v, 1);
            list_split(&co->model, a, v, ok_model);
            co->model_arg = v;
            co->model_given = 1;
            i++;
            continue;
        }
        char *end;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            free_opts(co);
            exit(0);
        } else if (!strcmp(a, "--iterations") && v) {
            ut_once("crash", a, &co->iterations_as, v, 0);
            co->iterations = strtoull(v, &end, 10);
            if (*end || !*v || co->iterations < 1 || co->iterations > 10000000)
                ut_usage_error("crash", "--iterations: '%s' is not accepted; expected a positive integer", v);
            co->iterations_given = 1;
            i++;
        } else if (!strcmp(a, "--txns") && v) {
            ut_once("crash", a, &co->txns_as, v, 0);
            unsigned long t = strtoul(v, &end, 10);
            if (*end || !*v || t < 1 || t > 100000)
                ut_usage_error("crash", "--txns: '%s' is not accepted; expected an integer in [1, 100000]", v);
            co->txns = (unsigned)t;
            i++;
        } else if (!strcmp(a, "--jobs") && v) {
            ut_once("crash", a, &co->jobs_as, v, 0);
            unsigned long j = strtoul(v, &end, 10);
            if (*end || !*v || j < 1 || j > 64)
                ut_usage_error("crash", "--jobs: '%s' is not accepted; expected an integer in [1, 64]", v);
            co->jobs = (unsigned)j;
            i++;
        } else if (!strcmp(a, "--seed") && v) {
            ut_once("crash", a, &co->seed_as, v, 0);
            co->seed = strtoull(v, &end, 10);
            if (*end || !*v || *v == '-')
                ut_usage_error("crash", "--seed: '%s' is not accepted; expected a non-negative integer", v);
            i++;
        } else if (!strcmp(a, "--replay") && v) {
            ut_once("crash", a, &co->replay_as, v, 0);
            co->replay = strtoull(v, &end, 10);
            if (*end || !*v || *v == '-')
                ut_usage_error("crash", "--replay: '%s' is not accepted; expected a seed", v);
            co->have_replay = 1;
            i++;
        } else if (!strcmp(a, "--out") && v) {
            ut_once("crash", a, &co->out, v, 0);
            i++;
        } else if (!strcmp(a, "--plugin-dir") && v) {
            ut_once("crash", a, &co->plugin_dir, v, 0);
            i++;
        } else if (!strcmp(a, "--mode") && v) {
            struct list l = {0};
            ut_once("crash", a, &co->mode_as, v, 0);
            list_split(&l, a, v, ok_any); /* a list, each mode once: one campaign after another */
            co->nmodes = 0;
            for (size_t k = 0; k < l.n; k++) {
                if (!strcmp(l.v[k], "sim"))
                    co->modes[co->nmodes++] = CRASH_SIM;
                else if (!strcmp(l.v[k], "kill"))
                    co->modes[co->nmodes++] = CRASH_KILL;
                else if (!strcmp(l.v[k], "cut"))
                    co->modes[co->nmodes++] = CRASH_CUT;
                else
                    ut_usage_error("crash", "--mode: '%s' is not accepted; accepted: sim, kill, cut", l.v[k]);
            }
            list_free(&l);
            i++;
        } else if (!strcmp(a, "--cut-journal-max") && v) {
            ut_once("crash", a, &co->cut_max_as, v, 0);
            if (ut_parse_size(v, &co->cut_max) || co->cut_max < 4096)
                ut_usage_error("crash", "--cut-journal-max: '%s' is not accepted; expected a size of at least 4K "
                                        "(K, M, G)", v);
            co->cut_max_given = 1;
            i++;
        } else if (!strcmp(a, "--lying-device")) {
            co->lying = 1;
        } else if (!strcmp(a, "--quiet")) {
            co->quiet = 1;
        } else {
            ut_usage_error("crash", "unknown option '%s' (see commitlab crash --help)", a);
        }
    }
    take_shared(co);
    int cut = 0;
    for (size_t k = 0; k < co->nmodes; k++) {
        enum crash_mode mode = co->modes[k];
        cut |= mode == CRASH_CUT;
        if (mode == CRASH_SIM) {
            for (size_t i = 0; i < co->engine.n; i++)
                if (strcmp(co->engine.v[i], "commitlab"))
                    ut_usage_error("crash",
                                   "--engine %s: --mode sim runs on commitlab's fault-injecting file layer; "
                                   "other engines run under --mode kill or --mode cut",
                                   co->engine.v[i]);
        } else {
            const char *m = mode_name(mode);
            if (co->model_given)
                ut_usage_error("crash", "--model: crash models apply to --mode sim; --mode %s %s", m,
                               mode == CRASH_CUT ? "drops everything unsynced" : "kills the process");
            if (co->lying)
                ut_usage_error("crash", "--lying-device applies to --mode sim");
        }
    }
    if (co->have_replay && co->nmodes > 1)
        ut_usage_error("crash", "--replay: give one --mode (a replayed crash is one crash)");
    set_mode(co, co->modes[0]);
    if (co->have_replay && (co->sync.n > 1 || co->method.n > 1 || co->segments.n > 1 || co->init.n > 1 ||
                            co->prealloc.n > 1 || co->elr.n > 1 || co->model.n > 1 || co->clients.n > 1 ||
                            co->engine.n > 1 || co->workload.n > 1))
        ut_usage_error("crash", "--replay: give one value for each of --engine, --sync, --sync-method, --segments, "
                                 "--segment-init, --prealloc, --elr, --model, --clients, --workload");
    if (co->cut_max_given && !cut)
        ut_usage_error("crash", "--cut-journal-max applies to --mode cut");
    load_plugins(co);
}

/* The workload a --workload word names: one of crash's, or exit 2 (a
 * workload bench has and crash does not check). */
static enum crash_workload workload_of(const char *w)
{
    static const char *const names[] = {[CRASH_KV] = "kv", [CRASH_TPCB] = "tpcb"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(w, names[i]) == 0)
            return (enum crash_workload)i;
    ut_usage_error("crash", "--workload: '%s' is not accepted; expected kv or tpcb", w);
}

/* Combination idx of the sweep, or 0 when it repeats another (a knob only
 * commitlab has, on another engine). */
static int config_at(const struct crash_opts *co, size_t idx, struct crash_config *c)
{
    const struct list *ls[] = {&co->sync, &co->method, &co->segments, &co->init,   &co->prealloc,
                               &co->elr,  &co->model,  &co->clients,  &co->engine, &co->workload};
    size_t pick[10], counts[10];
    for (int k = 0; k < 10; k++)
        counts[k] = ls[k]->n;
    bench_cross_pick(counts, 10, idx, pick); /* the last list fastest */
    memset(c, 0, sizeof *c);
    for (int k = 0; k < 10; k++)
        c->names[k] = ls[k]->v[pick[k]];
    c->mode = co->mode;
    c->drv = bench_driver_find(c->names[8]);
    if (c->drv != &bench_driver_commitlab)
        for (int k = 1; k <= 5; k++)
            if (pick[k])
                return 0;
    if (c->mode == CRASH_SIM)
        vfs_crash_model_parse(c->names[6], &c->model);
    c->clients = (unsigned)strtoul(c->names[7], NULL, 10);
    c->txns = co->txns;
    c->workload = workload_of(c->names[9]);
    c->lying = co->lying;
    c->keep_crashed = co->have_replay;
    c->cut_max = co->cut_max;
    c->pipeline = co->knobs.base.pipeline;
    c->knobs = &co->knobs.base;
    crash_config_run(c); /* the swept words into their values, by the table of knobs */
    return 1;
}

/* Before the first crash: each plugin of the campaign opens a fresh store
 * once, under the first combination it can run, in a child process as
 * its crashes do, in dir (the campaign's directory, made and removed
 * again).  A store that cannot open is one line naming it and its
 * message, and exit 2, with nothing run. */
static int try_plugins(const struct crash_opts *co, size_t total, const char *dir)
{
    struct bench_plugin_trial trial = {0};
    for (size_t idx = 0; idx < total; idx++) {
        struct crash_config c;
        struct bench_config bc;
        char why[BENCH_ERRLEN + 400];
        if (!config_at(co, idx, &c) || !bench_plugin_untried(&trial, c.drv))
            continue;
        crash_bench_config(&c, dir, &bc);
        if (bench_engine_check(c.drv, &bc, why, sizeof why) ||
            (c.mode == CRASH_CUT && crash_cut_check(&c, why, sizeof why))) /* n/a: its next combination */
            continue;
        int rc = bench_plugin_try_first(&trial, c.drv, &bc, dir, "crash");
        if (rc)
            return rc;
    }
    return 0;
}

/* Before the first crash: every PostgreSQL row's configuration checked
 * as bench checks it (the server's binaries, the account, --pg-set), and
 * its template cluster made once in the campaign's --dir, where the
 * crashes' children find it (they are forked from this process): a crash
 * copies it, never runs initdb.  0, or 2 with one line on stderr. */
static int preflight_postgres(const struct crash_opts *co, size_t total)
{
    struct bench_config *cfgs = calloc(total ? total : 1, sizeof *cfgs);
    size_t n = 0;
    int rc = 0;
    if (!cfgs)
        return 2;
    for (size_t idx = 0; idx < total; idx++) {
        struct crash_config c;
        char why[300];
        if (config_at(co, idx, &c) && crash_server_engine(&c) &&
            !(c.mode == CRASH_CUT && crash_cut_check(&c, why, sizeof why))) /* n/a: runs no server */
            crash_bench_config(&c, co->dir, &cfgs[n++]);
    }
    if (n)
        rc = bench_postgres_preflight("crash", cfgs, n);
    free(cfgs);
    return rc;
}

typedef int (*crash_fn)(const struct crash_config *, uint64_t, uint64_t, const char *, struct crash_outcome *,
                        uint64_t *);

/* The progress line: which combination, how far into its crashes. */
struct progress {
    struct ut_progress up;
    size_t idx, total;
    uint64_t crashes_all;
};

static void progress(struct progress *p, const struct crash_config *c, uint64_t done, uint64_t n)
{
    double el = ut_now() - p->up.start;
    ut_progress_printf(&p->up, "[combination %zu of %zu] %s %s %s/%s %s crash %" PRIu64 " of %" PRIu64 "  %.0f crashes/s",
                       p->idx + 1, p->total, c->names[8], c->names[9], c->names[0], c->names[1], c->names[6], done, n,
                       el > 0 ? (double)p->crashes_all / el : 0);
}

/* One seed's crash, as a worker sends it back. */
struct worker_result {
    uint64_t seed;
    int na;
    struct crash_outcome o;
};

/* Runs the crashes of one combination, serially or in jobs workers. */
static void run_crashes(const struct crash_opts *co, const struct crash_config *c, crash_fn one, uint64_t span,
                        const char *dir, struct totals *t, struct progress *p)
{
    uint64_t n = co->have_replay ? 1 : co->iterations;
    unsigned jobs = co->jobs < n ? co->jobs : (unsigned)n;
    if (jobs <= 1) {
        for (uint64_t it = 0; it < n && !t->na && !bench_interrupted(); it++) {
            uint64_t seed = co->have_replay ? co->replay : co->seed + it;
            struct crash_outcome o;
            if (it % 10 == 0)
                progress(p, c, it + 1, n);
            if (one(c, seed, span, dir, &o, NULL)) {
                t->na = 1;
                snprintf(t->na_why, sizeof t->na_why, "%s", o.na_why);
                break;
            }
            p->crashes_all++;
            add(t, c, seed, &o);
            if (o.cut_failed)
                break; /* the next crash would meet the same call */
        }
        return;
    }
    int fds[2];
    if (pipe(fds)) {
        t->na = 1;
        snprintf(t->na_why, sizeof t->na_why, "pipe: %s", strerror(errno));
        return;
    }
    pid_t pids[64];
    unsigned started = 0;
    fflush(NULL);
    for (unsigned j = 0; j < jobs; j++) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid == 0) {
            char wdir[4300];
            close(fds[0]);
            snprintf(wdir, sizeof wdir, "%s-%u", dir, j);
            for (uint64_t it = j; it < n && !bench_interrupted(); it += jobs) {
                struct worker_result r = {.seed = co->seed + it};
                r.na = one(c, r.seed, span, wdir, &r.o, NULL);
                if (write(fds[1], &r, sizeof r) != (ssize_t)sizeof r || r.na)
                    break;
            }
            ut_scratch_remove(wdir);
            _exit(0);
        }
        pids[started++] = pid;
    }
    close(fds[1]);
    struct worker_result r;
    uint64_t done = 0;
    int stopped = 0;
    while (ut_read_full(fds[0], &r, sizeof r) == sizeof r) {
        if (bench_interrupted() && !stopped) { /* a signal to this process only: the workers stop too */
            for (unsigned j = 0; j < started; j++)
                kill(pids[j], SIGTERM);
            stopped = 1;
        }
        if (r.na) {
            t->na = 1;
            snprintf(t->na_why, sizeof t->na_why, "%s", r.o.na_why);
            continue;
        }
        add(t, c, r.seed, &r.o);
        p->crashes_all++;
        if (++done % 10 == 0)
            progress(p, c, done, n);
    }
    close(fds[0]);
    for (unsigned j = 0; j < started; j++)
        waitpid(pids[j], NULL, 0);
    if (!t->na && done < n && !bench_interrupted()) {
        t->na = 1;
        snprintf(t->na_why, sizeof t->na_why, "a worker process stopped: %" PRIu64 " of %" PRIu64 " crashes ran",
                 done, n);
    }
}

/* The campaign's directories inside --dir: DIR/crash, the workers'
 * DIR/crash-J, a replay's DIR/crash.crashed, and the cut's journals
 * DIR/crash.cut and DIR/crash-J.cut. */
static int check_work_dirs(struct bench_dirs *d, const struct crash_opts *co, const char *dir)
{
    char paths[132][4300];
    const char *pp[132];
    size_t n = 0;
    snprintf(paths[n++], sizeof paths[0], "%s", dir);
    snprintf(paths[n++], sizeof paths[0], "%s.crashed", dir);
    snprintf(paths[n++], sizeof paths[0], "%s.cut", dir);
    for (unsigned j = 0; j < co->jobs && n + 2 <= 132; j++) {
        snprintf(paths[n++], sizeof paths[0], "%s-%u", dir, j);
        snprintf(paths[n++], sizeof paths[0], "%s-%u.cut", dir, j);
    }
    for (size_t i = 0; i < n; i++)
        pp[i] = paths[i];
    return bench_dirs_check(d, pp, n, 0);
}

/* The campaign: one combination of the sweep after another. */
struct campaign {
    const struct crash_opts *co;
    crash_fn one;
    const char *dir;
    FILE *jf;
    struct progress *p;
    int failed;
};

/* One combination: its calibration, its crashes, its row and JSON line;
 * nothing for a combination that repeats another (config_at). */
static int run_combination(struct bench_sweep *s, size_t idx, unsigned round)
{
    struct campaign *cam = s->ctx;
    const struct crash_opts *co = cam->co;
    crash_fn one = cam->one;
    const char *dir = cam->dir;
    FILE *jf = cam->jf;
    struct progress *pp = cam->p;
    struct crash_config c;
    (void)round;
    pp->idx = idx;
    if (!config_at(co, idx, &c))
        return 0;
    struct totals t;
    memset(&t, 0, sizeof t);
    t.planned = co->have_replay ? 1 : co->iterations;
    double t0 = ut_now();
    /* Calibration: how much a crash-free run of this combination has
     * to crash into (file operations, or nanoseconds of committing).
     * Crash points are drawn uniformly over it and a twentieth more,
     * so most crashes hit while clients commit and some after.  A run
     * timed on the real file system (kill, cut) lasts a few milliseconds
     * and varies with whatever else the machine does: the median of
     * three runs is the span -- one for a server engine, whose run
     * lasts hundreds of milliseconds and starts a server twice. */
    struct crash_outcome cal;
    uint64_t span = 0, spans[3] = {0, 0, 0};
    memset(&cal, 0, sizeof cal);
    unsigned ncal = c.mode == CRASH_SIM || crash_server_engine(&c) ? 1 : 3;
    for (unsigned k = 0; k < ncal && !t.na && !cal.cut_failed; k++) {
        spans[k] = 0;
        if (one(&c, co->seed, 0, dir, &cal, &spans[k])) {
            t.na = 1;
            snprintf(t.na_why, sizeof t.na_why, "%s", cal.na_why);
        }
    }
    if (ncal == 3) {
        uint64_t lo = spans[0] < spans[1] ? spans[0] : spans[1], hi = spans[0] < spans[1] ? spans[1] : spans[0];
        span = spans[2] < lo ? lo : spans[2] > hi ? hi : spans[2];
    } else {
        span = spans[0];
    }
    span += span / 20 + 1;
    if (!t.na && cal.cut_failed)
        add(&t, &c, co->seed, &cal); /* the run could not be cut: no crash would be */
    else if (!t.na)
        run_crashes(co, &c, one, span, dir, &t, pp);
    ut_progress_clear(&pp->up);
    if (bench_interrupted() && t.crashes < t.planned && !t.na) { /* its row and line say so, with the crashes done */
        t.interrupted = 1;
        t.seconds = ut_now() - t0;
        bench_stop_note("during combination %zu of %zu (%s %s --sync %s --sync-method %s %s %s, %u clients) "
                        "after %" PRIu64 " of %" PRIu64 " crashes (%.1f s)",
                        idx + 1, s->n, c.names[8], c.names[9], c.names[0], c.names[1],
                        c.mode == CRASH_SIM ? "--model" : "--mode", c.names[6], c.clients, t.crashes, t.planned,
                        t.seconds);
    }
    row(&c, &t);
    if (t.have_bad) {
        printf("  first failure: seed %" PRIu64 ": %s\n", t.first_bad_seed, t.first_why);
        replay_line(stdout, &c, t.first_bad_seed);
    }
    if (bad(&c, &t) && !t.na)
        cam->failed = 1;
    if (jf) {
        json_t *j = row_json(&c, &t, dir, co->dir);
        bench_json_write(jf, j);
        json_decref(j);
    }
    fflush(stdout);
    return 0;
}

/* The combinations of the sweep of the campaign co->mode runs. */
static size_t combinations(const struct crash_opts *co)
{
    return co->sync.n * co->method.n * co->segments.n * co->init.n * co->prealloc.n * co->elr.n * co->model.n *
           co->clients.n * co->engine.n * co->workload.n;
}

/* The campaign of co->mode: its heading, its rows, the count of its
 * crashes, and where a replay left its directories; 1 when a row failed. */
static int run_campaign(const struct crash_opts *co, const char *dir, FILE *jf)
{
    struct progress p = {.total = combinations(co)};
    ut_progress_init(&p.up, co->quiet, p.total, 0);
    crash_fn one = co->mode == CRASH_CUT ? crash_cut_one : co->mode == CRASH_KILL ? crash_kill_one : crash_sim_one;
    if (co->mode == CRASH_CUT)
        printf("commitlab crash: processes killed (SIGKILL) while committing on the real file system, then every "
               "unsynced write and name dropped (a power failure); %s\n"
               "  not modelled: torn or reordered writes, writes through mmap or io_uring, the store's creation "
               "(the journal starts after its open); docs/crash.md section 7\n",
               co->have_replay ? "one replayed crash" : "each row is one combination");
    else if (co->mode == CRASH_KILL)
        printf("commitlab crash: processes killed (SIGKILL) while committing on the real file system; %s\n",
               co->have_replay ? "one replayed crash" : "each row is one combination");
    else
        printf("commitlab crash: simulated power failures%s; %s\n",
               co->lying ? " on a LYING device (syncs make nothing durable)" : "",
               co->have_replay ? "one replayed crash" : "each row is one combination");
    row_header();
    fflush(stdout);
    struct campaign cam = {co, one, dir, jf, &p, 0};
    struct bench_sweep sw = {.n = p.total, .run = run_combination, .ctx = &cam, .progress = &p.up};
    bench_sweep_run(&sw);
    double el = ut_now() - p.up.start;
    printf("\n%" PRIu64 " crashes in %.1f s: %.0f crashes per second\n", p.crashes_all, el,
           el > 0 ? (double)p.crashes_all / el : 0);
    if (co->have_replay && !bench_interrupted()) {
        printf("the directory as the crash left it: %s.crashed (commitlab inspect --records %s.crashed)\n"
               "the same after recovery:          %s\n",
               dir, dir, dir);
        if (co->mode == CRASH_CUT)
            printf("the cut's undo journal:            %s.cut\n", dir);
    } else {
        char kept[4300];
        snprintf(kept, sizeof kept, "%s.crashed", dir);
        ut_scratch_remove(dir);
        ut_scratch_remove(kept);
        snprintf(kept, sizeof kept, "%s.cut", dir);
        ut_scratch_remove(kept);
    }
    return cam.failed;
}

int cmd_crash(int argc, char **argv)
{
    struct crash_opts co;
    memset(&co, 0, sizeof co);
    co.iterations = 200;
    co.seed = 1;
    co.txns = 40;
    co.jobs = 1;
    co.dir = "commitlab-crash.d";
    co.cut_max = CUT_MAX_DEFAULT;
    list_split(&co.sync, "--sync", bench_sync_durable_choices(), NULL); /* every durable policy */
    list_split(&co.method, "--sync-method", "fdatasync", NULL);
    list_split(&co.segments, "--segments", "fresh", NULL);
    list_split(&co.init, "--segment-init", "zero", NULL);
    list_split(&co.prealloc, "--prealloc", "0", NULL);
    list_split(&co.elr, "--elr", "on", NULL);
    list_split(&co.clients, "--clients", "4", ok_clients);
    list_split(&co.engine, "--engine", "commitlab", ok_engine);
    list_split(&co.workload, "--workload", "kv", NULL);
    co.modes[0] = CRASH_SIM;
    co.nmodes = 1;
    co.model_arg = "drop,torn,reorder"; /* --mode sim's models unless --model is given (set_mode) */
    parse(&co, argc, argv);
    {
        struct bench_config *per_sync = calloc(co.sync.n, sizeof *per_sync);
        for (size_t i = 0; per_sync && i < co.sync.n; i++) {
            per_sync[i] = co.knobs.base;
            bench_knob_set(&per_sync[i], K_SYNC, co.sync.v[i], 0);
        }
        if (per_sync)
            bench_warn_unread("crash", per_sync, co.sync.n, stderr);
        free(per_sync);
    }

    /* Before any work: --out writable, --dir claimed for the whole run,
     * nothing of the user's where the campaign's directories go, and
     * every campaign's first plugin and server tried. */
    int rc, out_created = 0;
    if (co.out && (rc = ut_output_check(co.out)) != 0) {
        fprintf(stderr, "commitlab crash: --out %s: %s\n", co.out, strerror(-rc));
        free_opts(&co);
        return 2;
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%.4000s/crash", co.dir);
    struct bench_dirs dirs;
    rc = bench_dirs_claim(&dirs, "crash", "--dir", co.dir);
    if (!rc)
        rc = check_work_dirs(&dirs, &co, dir);
    for (size_t k = 0; !rc && k < co.nmodes; k++) {
        set_mode(&co, co.modes[k]);
        size_t total = combinations(&co);
        if ((rc = try_plugins(&co, total, dir)) == 0)
            rc = preflight_postgres(&co, total);
    }
    if (rc) {
        bench_dirs_release(&dirs);
        free_opts(&co);
        return rc;
    }
    FILE *jf = co.out ? ut_output_open(co.out, &out_created) : NULL;
    if (co.out && !jf) {
        fprintf(stderr, "commitlab crash: --out %s: %s\n", co.out, strerror(errno));
        bench_dirs_release(&dirs);
        free_opts(&co);
        return 1;
    }
    bench_stop_on_signals();
    int failed = 0;
    for (size_t k = 0; k < co.nmodes && !bench_interrupted(); k++) { /* one campaign per mode, in --mode's order */
        set_mode(&co, co.modes[k]);
        if (k)
            printf("\n");
        failed |= run_campaign(&co, dir, jf);
    }
    if (jf && (rc = ut_output_close(jf, co.out, out_created)) != 0) {
        fprintf(stderr, "commitlab crash: --out %s: %s\n", co.out, strerror(-rc));
        failed = 1;
    }
    bench_dirs_release(&dirs); /* --dir itself only when this run made it and left it empty */
    free_opts(&co);
    int sig = bench_stop_signal();
    if (sig) /* after the cleanup: what it was doing, and how far it got */
        bench_stop_report("crash", NULL);
    return sig ? 128 + sig : failed;
}
