/*
 * crash.c -- `commitlab crash`: power-failure campaigns in one command.
 *
 * Each crash (mode sim): a fresh database on the fault-injecting file
 * layer, several clients committing, a power failure armed at a random
 * file operation under a crash model (drop, torn, reorder), then the
 * directory as the crash left it is opened with the real file layer
 * (recovery) and checked against a witness kept outside the simulated
 * disk: what each client was told was acknowledged, and what it attempted.
 *
 * Each transaction of client c, its n-th, writes a<c> = n and b<c> = n and
 * one payload row p<c>-<n mod 8> whose value is a pure function of (c, n).
 * After recovery, for every client:
 *   - a<c> == b<c>, and the payload rows are those of transactions up to
 *     a<c> and no other: no transaction is partly visible, and no value is
 *     one that no commit wrote;
 *   - a<c> >= the last acknowledged n: for a durable policy anything less
 *     is an acknowledged commit lost; for none and periodic it is counted,
 *     as what those policies may lose;
 *   - a<c> <= the last attempted n;
 *   - the database opens at all (a failed recovery is counted).
 * A client's surviving transactions are a prefix of what it committed,
 * because a<c> is a single counter checked against every row.
 *
 * Replays: every crash is named by its seed; --replay SEED reruns that one
 * and keeps its directory for `commitlab inspect`.  With one client a
 * replay is exact; with several, the threads' interleaving is not
 * replayed, only the crash point and model.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "commitlab.h"
#include "engine_internal.h"
#include "vfs.h"
#include "vfs_fault.h"

#define MAX_CLIENTS 64
#define PAYLOAD_ROWS 8
#define MAX_PAYLOAD 1500

/* ---- options ---------------------------------------------------------- */

struct list {
    char **v;
    size_t n;
};

struct crash_opts {
    struct list sync, method, segments, init, prealloc, elr, model, clients;
    uint64_t iterations, seed, replay;
    int have_replay, lying, quiet;
    unsigned txns;
    const char *dir, *out;
};

static void list_split(struct list *l, const char *flag, const char *arg, int (*ok)(const char *))
{
    char *copy = strdup(arg), *save = NULL;
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    l->n = 0;
    if (!copy || !*arg || arg[strlen(arg) - 1] == ',' || arg[0] == ',' || strstr(arg, ",,"))
        cli_usage_error("crash", "%s: '%s' has an empty item in its list", flag, arg);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!ok(t))
            return (void)cli_usage_error("crash", "%s: '%s' is not accepted", flag, t);
        char **nv = realloc(l->v, (l->n + 1) * sizeof *nv);
        if (!nv || !(nv[l->n] = strdup(t)))
            cli_usage_error("crash", "out of memory");
        l->v = nv;
        l->n++;
    }
    free(copy);
}

static void list_free(struct list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static int ok_sync(const char *s)
{
    enum cl_sync_policy p;
    return cl_sync_policy_parse(s, &p) == 0;
}
static int ok_method(const char *s)
{
    enum cl_sync_method m;
    return cl_sync_method_parse(s, &m) == 0;
}
static int ok_segments(const char *s) { return !strcmp(s, "fresh") || !strcmp(s, "recycle"); }
static int ok_init(const char *s) { return !strcmp(s, "zero") || !strcmp(s, "sparse") || !strcmp(s, "fallocate"); }
static int ok_onoff(const char *s) { return !strcmp(s, "on") || !strcmp(s, "off"); }
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
static int ok_clients(const char *s) { return ok_uint(s) && strtoul(s, NULL, 10) >= 1; }

/* ---- one crash ----------------------------------------------------------- */

struct config {
    enum cl_sync_policy sync;
    enum cl_sync_method method;
    enum cl_segment_policy segments;
    enum cl_segment_init init;
    uint32_t prealloc;
    int elr;
    enum vfs_crash_model model;
    unsigned clients;
    const char *names[8]; /* the values as given, for rows and replay lines */
};

struct client {
    struct cl_db *db;
    unsigned id, txns;
    uint64_t acked, attempted; /* atomic: the witness */
    pthread_t th;
};

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The payload row of client c's n-th transaction. */
static size_t payload(unsigned c, uint64_t n, uint8_t *buf)
{
    uint64_t h = mix(((uint64_t)c << 40) ^ n);
    size_t len = 16 + (size_t)(h % (MAX_PAYLOAD - 16));
    memcpy(buf, &n, 8);
    memcpy(buf + 8, &c, sizeof c);
    for (size_t i = 12; i < len; i++)
        buf[i] = (uint8_t)(h >> ((i % 8) * 8)) ^ (uint8_t)i;
    return len;
}

static void *client_main(void *arg)
{
    struct client *cl = arg;
    char ka[16], kb[16], kp[24];
    uint8_t v[MAX_PAYLOAD];
    snprintf(ka, sizeof ka, "a%u", cl->id);
    snprintf(kb, sizeof kb, "b%u", cl->id);
    for (uint64_t n = 1; n <= cl->txns; n++) {
        struct cl_txn *t;
        __atomic_store_n(&cl->attempted, n, __ATOMIC_RELEASE);
        if (cl_txn_begin(cl->db, 0, &t))
            break;
        snprintf(kp, sizeof kp, "p%u-%u", cl->id, (unsigned)(n % PAYLOAD_ROWS));
        size_t len = payload(cl->id, n, v);
        if (cl_put(t, ka, strlen(ka), &n, sizeof n) || cl_put(t, kb, strlen(kb), &n, sizeof n) ||
            cl_put(t, kp, strlen(kp), v, len)) {
            cl_abort(t);
            break;
        }
        if (cl_commit(t))
            break;
        __atomic_store_n(&cl->acked, n, __ATOMIC_RELEASE); /* told: acknowledged */
    }
    return NULL;
}

struct outcome {
    int na;               /* the configuration cannot run here */
    char na_why[160];
    uint64_t lost;        /* acknowledged transactions missing */
    uint64_t survived;    /* unacknowledged transactions that survived */
    unsigned atomicity;   /* partly visible transactions */
    unsigned garbage;     /* values no commit wrote */
    unsigned phantom;     /* more than was attempted */
    int recovery_failed;  /* the database did not open */
    int mid_run;          /* the power failed while clients were committing */
    int recovery_err;
    double recovery_ms;
    char why[200];        /* the first problem */
};

static uint64_t get_u64(struct cl_txn *t, const char *k, int *err)
{
    uint64_t v = 0;
    size_t vl = 0;
    int rc = cl_get(t, k, strlen(k), &v, sizeof v, &vl);
    if (rc && rc != CL_ENOTFOUND)
        *err = rc;
    return rc ? 0 : v;
}

static void note(struct outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct outcome *o, const char *fmt, ...)
{
    if (o->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->why, sizeof o->why, fmt, ap);
    va_end(ap);
}

static void options_for(const struct config *c, struct cl_options *o)
{
    cl_options_init(o);
    o->sync = c->sync;
    o->method = c->method;
    o->elr = c->elr;
    o->segments = c->segments;
    o->segment_init = c->init;
    o->prealloc = c->prealloc;
    o->recycle_max = 2;
    o->segment_size = 64 * 1024;      /* several switches per crash */
    o->cache_size = 32 * 4096;        /* evictions during commits */
    o->checkpoint_bytes = 128 * 1024; /* background checkpoints, crashed too */
    o->interval_ms = 2;
}

static void verify(const char *dir, const struct config *c, struct client *cls, struct outcome *o)
{
    struct cl_options opt;
    struct cl_db *db;
    struct cl_txn *t;
    options_for(c, &opt);
    opt.create = 0;
    double t0 = bench_now();
    struct cl_recovery_info info;
    int rc = cl_open(dir, &opt, &db, &info);
    o->recovery_ms = (bench_now() - t0) * 1e3;
    if (rc) {
        o->recovery_failed = 1;
        o->recovery_err = rc;
        note(o, "recovery failed: %s%s%s", info.bad_file, info.bad_file[0] ? ": " : "", cl_strerror(rc));
        return;
    }
    if (cl_txn_begin(db, CL_TXN_RDONLY, &t)) {
        o->recovery_failed = 1;
        cl_close(db);
        return;
    }
    for (unsigned i = 0; i < c->clients; i++) {
        char ka[16], kb[16], kp[24];
        uint8_t got[MAX_PAYLOAD + 8], want[MAX_PAYLOAD];
        int err = 0;
        snprintf(ka, sizeof ka, "a%u", i);
        snprintf(kb, sizeof kb, "b%u", i);
        uint64_t a = get_u64(t, ka, &err), b = get_u64(t, kb, &err);
        uint64_t acked = cls[i].acked, attempted = cls[i].attempted;
        if (err) {
            o->recovery_failed = 1;
            note(o, "client %u: read: %s", i, cl_strerror(err));
            continue;
        }
        if (a != b) {
            o->atomicity++;
            note(o, "client %u: a transaction partly visible (a=%" PRIu64 ", b=%" PRIu64 ")", i, a, b);
        }
        if (a < acked) {
            o->lost += acked - a;
            note(o, "client %u: acknowledged transaction %" PRIu64 " lost (recovered %" PRIu64 ")", i, acked, a);
        } else {
            o->survived += a - acked;
        }
        if (a > attempted) {
            o->phantom++;
            note(o, "client %u: transaction %" PRIu64 " recovered, only %" PRIu64 " attempted", i, a, attempted);
        }
        /* the payload rows: each the last write at or before a, or absent */
        for (unsigned k = 0; k < PAYLOAD_ROWS; k++) {
            size_t vl = 0;
            uint64_t n = a >= k ? a - ((a - k) % PAYLOAD_ROWS) : 0; /* largest n <= a with n % 8 == k */
            snprintf(kp, sizeof kp, "p%u-%u", i, k);
            rc = cl_get(t, kp, strlen(kp), got, sizeof got, &vl);
            if (n == 0) { /* no recovered transaction wrote this row */
                if (rc == 0) {
                    o->garbage++;
                    note(o, "client %u: row %s holds a value no recovered commit wrote", i, kp);
                }
                continue;
            }
            size_t wl = payload(i, n, want);
            if (rc != 0 || vl != wl || memcmp(got, want, wl) != 0) {
                o->garbage++;
                note(o, "client %u: row %s is not what transaction %" PRIu64 " wrote", i, kp, n);
            }
        }
    }
    cl_abort(t);
    cl_close(db);
}

/* One crash; returns 0, or 1 when the configuration cannot run here. */
static int one_crash(const struct crash_opts *co, const struct config *c, uint64_t seed, uint64_t span,
                     const char *dir, struct outcome *o, uint64_t *ops)
{
    struct vfs *fault = vfs_fault_new(vfs_posix());
    struct cl_options opt;
    struct cl_db *db;
    struct client cls[MAX_CLIENTS];
    uint64_t rs = seed;

    memset(o, 0, sizeof *o);
    bench_rm_tree(dir);
    if (mkdir(dir, 0755) && errno != EEXIST) {
        snprintf(o->na_why, sizeof o->na_why, "mkdir %.100s: %s", dir, strerror(errno));
        o->recovery_failed = 1;
        vfs_destroy(fault);
        return 0;
    }
    vfs_fault_ring_seed(fault, seed);
    options_for(c, &opt);
    int rc = cl_open_vfs(dir, &opt, fault, &db, NULL);
    if (rc) {
        o->na = 1;
        snprintf(o->na_why, sizeof o->na_why, "cl_open: %s", cl_strerror(rc));
        vfs_destroy(fault);
        return 1;
    }
    if (co->lying)
        vfs_fault_lie(fault, 1); /* the database's creation was durable; from here on the device lies */
    uint64_t ops0 = vfs_fault_ops(fault);
    if (span)
        vfs_fault_crash_at(fault, 1 + mix(rs) % span, c->model, seed);
    for (unsigned i = 0; i < c->clients; i++) {
        cls[i] = (struct client){.db = db, .id = i, .txns = co->txns};
        pthread_create(&cls[i].th, NULL, client_main, &cls[i]);
    }
    for (unsigned i = 0; i < c->clients; i++)
        pthread_join(cls[i].th, NULL);
    o->mid_run = vfs_fault_crashed(fault);
    if (ops)
        *ops = vfs_fault_ops(fault) - ops0;
    if (!o->mid_run)
        vfs_fault_crash(fault, c->model, seed); /* after the last commit */
    cl_close(db); /* writes nothing: the file layer is dead */
    vfs_destroy(fault);
    verify(dir, c, cls, o);
    return 0;
}

/* ---- the campaign ----------------------------------------------------------- */

struct totals {
    uint64_t crashes, mid_run, lost, lost_max, survived;
    unsigned atomicity, garbage, phantom, recovery_failed;
    double rec_sum, rec_max;
    int na;
    char na_why[160];
    uint64_t first_bad_seed;
    char first_why[200];
    int have_bad;
};

static int durable(const struct config *c) { return cl_sync_policy_is_durable(c->sync) == 1; }

static int bad(const struct config *c, const struct totals *t)
{
    return (durable(c) && t->lost) || t->atomicity || t->garbage || t->phantom || t->recovery_failed;
}

static void replay_line(FILE *f, const struct crash_opts *co, const struct config *c, uint64_t seed)
{
    fprintf(f, "  replay: commitlab crash --replay %" PRIu64 " --sync %s --sync-method %s --segments %s "
               "--segment-init %s --prealloc %s --elr %s --model %s --clients %u --txns %u%s\n",
            seed, c->names[0], c->names[1], c->names[2], c->names[3], c->names[4], c->names[5], c->names[6],
            c->clients, co->txns, co->lying ? " --lying-device" : "");
}

static void row_header(void)
{
    printf("%-8s %-9s %-8s %-9s %4s %4s %-7s %3s %7s %7s %9s %6s %9s %6s %6s %6s %8s %8s  %s\n", "sync", "method",
           "segments", "init", "pre", "elr", "model", "cli", "crashes", "mid-run", "acks lost", "worst", "unacked+",
           "atomic", "garbg", "recov", "rec ms", "max ms", "verdict");
}

static void row(const struct config *c, const struct totals *t)
{
    if (t->na) {
        printf("%-8s %-9s %-8s %-9s %4u %4s %-7s %3u %7s  (%s)\n", c->names[0], c->names[1], c->names[2],
               c->names[3], c->prealloc, c->names[5], c->names[6], c->clients, "n/a", t->na_why);
        return;
    }
    const char *verdict = bad(c, t) ? "FAILED" : !durable(c) && t->lost ? "ok (may lose: not durable)" : "ok";
    printf("%-8s %-9s %-8s %-9s %4u %4s %-7s %3u %7" PRIu64 " %7" PRIu64 " %9" PRIu64 " %6" PRIu64 " %9" PRIu64
           " %6u %6u %6u %8.1f %8.1f  %s\n",
           c->names[0], c->names[1], c->names[2], c->names[3], c->prealloc, c->names[5], c->names[6], c->clients,
           t->crashes, t->mid_run, t->lost, t->lost_max, t->survived, t->atomicity, t->garbage, t->recovery_failed,
           t->crashes ? t->rec_sum / (double)t->crashes : 0, t->rec_max, verdict);
}

static json_t *row_json(const struct crash_opts *co, const struct config *c, const struct totals *t)
{
    json_t *j = json_object();
    json_object_set_new(j, "schema", json_string("commitlab-crash/1"));
    json_object_set_new(j, "mode", json_string("sim"));
    json_object_set_new(j, "sync", json_string(c->names[0]));
    json_object_set_new(j, "sync_durable", json_boolean(durable(c)));
    json_object_set_new(j, "sync_method", json_string(c->names[1]));
    json_object_set_new(j, "segments", json_string(c->names[2]));
    json_object_set_new(j, "segment_init", json_string(c->names[3]));
    json_object_set_new(j, "prealloc", json_integer(c->prealloc));
    json_object_set_new(j, "elr", json_boolean(c->elr));
    json_object_set_new(j, "model", json_string(c->names[6]));
    json_object_set_new(j, "clients", json_integer(c->clients));
    json_object_set_new(j, "txns_per_client", json_integer(co->txns));
    json_object_set_new(j, "lying_device", json_boolean(co->lying));
    json_object_set_new(j, "status", json_string(t->na ? "n/a" : bad(c, t) ? "failed" : "ok"));
    json_object_set_new(j, "reason", t->na ? json_string(t->na_why) : json_null());
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
    return j;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: commitlab crash [options]     (comma lists run every combination)\n"
            "\n"
            "Simulated power failures: clients commit on the fault-injecting file layer, the\n"
            "power fails at a random file operation, recovery runs, and every acknowledged\n"
            "commit, every transaction's atomicity and every value is checked.\n"
            "\n"
            "  --sync LIST          sync policies (default commit,group,uring)\n"
            "  --sync-method LIST   fdatasync (default), fsync, dsync, direct\n"
            "  --segments LIST      fresh (default), recycle\n"
            "  --segment-init LIST  zero (default), sparse, fallocate\n"
            "  --prealloc LIST      segments prepared ahead (default 0)\n"
            "  --elr LIST           on (default), off\n"
            "  --model LIST         drop, torn, reorder (default all three)\n"
            "  --clients LIST       committing threads (default 4)\n"
            "  --iterations N       crashes per combination (default 200)\n"
            "  --txns N             transactions per client before the power fails at the latest (default 40)\n"
            "  --seed S             first seed (default 1); crash i of a combination uses S + i\n"
            "  --replay SEED        one crash, that seed, each list one value; the directory is kept\n"
            "  --dir D              where the crashes run (default: commitlab-crash.d here)\n"
            "  --out FILE.jsonl     append one JSON object per combination\n"
            "  --lying-device       syncs succeed and make nothing durable: shows the check can fail\n"
            "  --mode sim           (the only mode built; kill is not built yet)\n"
            "  --quiet              no progress line\n"
            "\n"
            "Exit 1 when a durable policy lost an acknowledged commit, or any combination\n"
            "showed a partly visible transaction, a value no commit wrote, or a failed recovery.\n");
}

static void free_opts(struct crash_opts *o)
{
    struct list *ls[] = {&o->sync, &o->method, &o->segments, &o->init, &o->prealloc, &o->elr, &o->model, &o->clients};
    for (size_t i = 0; i < sizeof ls / sizeof *ls; i++)
        list_free(ls[i]);
}

int cmd_crash(int argc, char **argv)
{
    struct crash_opts co;
    memset(&co, 0, sizeof co);
    co.iterations = 200;
    co.seed = 1;
    co.txns = 40;
    co.dir = "commitlab-crash.d";
    list_split(&co.sync, "--sync", "commit,group,uring", ok_sync);
    list_split(&co.method, "--sync-method", "fdatasync", ok_method);
    list_split(&co.segments, "--segments", "fresh", ok_segments);
    list_split(&co.init, "--segment-init", "zero", ok_init);
    list_split(&co.prealloc, "--prealloc", "0", ok_uint);
    list_split(&co.elr, "--elr", "on", ok_onoff);
    list_split(&co.model, "--model", "drop,torn,reorder", ok_model);
    list_split(&co.clients, "--clients", "4", ok_clients);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        struct { const char *flag; struct list *l; int (*ok)(const char *); } lists[] = {
            {"--sync", &co.sync, ok_sync}, {"--sync-method", &co.method, ok_method},
            {"--segments", &co.segments, ok_segments}, {"--segment-init", &co.init, ok_init},
            {"--prealloc", &co.prealloc, ok_uint}, {"--elr", &co.elr, ok_onoff},
            {"--model", &co.model, ok_model}, {"--clients", &co.clients, ok_clients}};
        int done = 0;
        for (size_t k = 0; k < sizeof lists / sizeof *lists && !done; k++)
            if (!strcmp(a, lists[k].flag)) {
                if (!v)
                    cli_usage_error("crash", "%s needs a value", a);
                list_split(lists[k].l, a, v, lists[k].ok);
                i++;
                done = 1;
            }
        if (done)
            continue;
        char *end;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            free_opts(&co);
            return 0;
        } else if (!strcmp(a, "--iterations") && v) {
            co.iterations = strtoull(v, &end, 10);
            if (*end || !*v || co.iterations < 1 || co.iterations > 10000000)
                cli_usage_error("crash", "--iterations: '%s' is not accepted; expected a positive integer", v);
            i++;
        } else if (!strcmp(a, "--txns") && v) {
            unsigned long t = strtoul(v, &end, 10);
            if (*end || !*v || t < 1 || t > 100000)
                cli_usage_error("crash", "--txns: '%s' is not accepted; expected an integer in [1, 100000]", v);
            co.txns = (unsigned)t;
            i++;
        } else if (!strcmp(a, "--seed") && v) {
            co.seed = strtoull(v, &end, 10);
            if (*end || !*v || *v == '-')
                cli_usage_error("crash", "--seed: '%s' is not accepted; expected a non-negative integer", v);
            i++;
        } else if (!strcmp(a, "--replay") && v) {
            co.replay = strtoull(v, &end, 10);
            if (*end || !*v || *v == '-')
                cli_usage_error("crash", "--replay: '%s' is not accepted; expected a seed", v);
            co.have_replay = 1;
            i++;
        } else if (!strcmp(a, "--dir") && v) {
            co.dir = v;
            i++;
        } else if (!strcmp(a, "--out") && v) {
            co.out = v;
            i++;
        } else if (!strcmp(a, "--mode") && v) {
            if (strcmp(v, "sim"))
                cli_usage_error("crash", "--mode: '%s' is not built yet; accepted: sim", v);
            i++;
        } else if (!strcmp(a, "--lying-device")) {
            co.lying = 1;
        } else if (!strcmp(a, "--quiet")) {
            co.quiet = 1;
        } else {
            cli_usage_error("crash", "unknown option '%s' (see commitlab crash --help)", a);
        }
    }
    if (co.have_replay && (co.sync.n > 1 || co.method.n > 1 || co.segments.n > 1 || co.init.n > 1 ||
                           co.prealloc.n > 1 || co.elr.n > 1 || co.model.n > 1 || co.clients.n > 1))
        cli_usage_error("crash", "--replay: give one value for each of --sync, --sync-method, --segments, "
                                 "--segment-init, --prealloc, --elr, --model, --clients");
    if (mkdir(co.dir, 0755) && errno != EEXIST) {
        fprintf(stderr, "commitlab crash: --dir %s: %s\n", co.dir, strerror(errno));
        free_opts(&co);
        return 1;
    }
    FILE *jf = co.out ? fopen(co.out, "a") : NULL;
    if (co.out && !jf) {
        fprintf(stderr, "commitlab crash: --out %s: %s\n", co.out, strerror(errno));
        free_opts(&co);
        return 1;
    }

    size_t total = co.sync.n * co.method.n * co.segments.n * co.init.n * co.prealloc.n * co.elr.n * co.model.n *
                   co.clients.n;
    int tty = !co.quiet && isatty(STDERR_FILENO);
    int failed = 0;
    uint64_t crashes_all = 0;
    double t_start = bench_now();
    char dir[4200];
    snprintf(dir, sizeof dir, "%.4000s/crash", co.dir);

    printf("commitlab crash: simulated power failures%s; %s\n",
           co.lying ? " on a LYING device (syncs make nothing durable)" : "",
           co.have_replay ? "one replayed crash" : "each row is one combination");
    row_header();
    fflush(stdout);
    for (size_t idx = 0; idx < total; idx++) {
        size_t r = idx;
        struct config c;
        const struct list *ls[] = {&co.sync, &co.method, &co.segments, &co.init, &co.prealloc, &co.elr, &co.model};
        size_t pick[8];
        for (int k = 7; k >= 0; k--) {
            const struct list *l = k == 7 ? &co.clients : ls[k];
            pick[k] = r % l->n;
            r /= l->n;
        }
        for (int k = 0; k < 7; k++)
            c.names[k] = ls[k]->v[pick[k]];
        c.names[7] = co.clients.v[pick[7]];
        cl_sync_policy_parse(c.names[0], &c.sync);
        cl_sync_method_parse(c.names[1], &c.method);
        c.segments = strcmp(c.names[2], "recycle") ? CL_SEGMENTS_FRESH : CL_SEGMENTS_RECYCLE;
        c.init = !strcmp(c.names[3], "sparse") ? CL_SEGINIT_SPARSE
                 : !strcmp(c.names[3], "fallocate") ? CL_SEGINIT_FALLOCATE : CL_SEGINIT_ZERO;
        c.prealloc = (uint32_t)strtoul(c.names[4], NULL, 10);
        c.elr = !strcmp(c.names[5], "on");
        vfs_crash_model_parse(c.names[6], &c.model);
        c.clients = (unsigned)strtoul(c.names[7], NULL, 10);

        struct totals t;
        memset(&t, 0, sizeof t);
        /* Calibration: the file operations a crash-free run of this
         * combination performs.  Crash points are drawn uniformly over
         * them and a twentieth more, so most crashes hit while clients
         * commit and some after the last commit. */
        struct outcome cal;
        uint64_t span = 0;
        if (one_crash(&co, &c, co.seed, 0, dir, &cal, &span)) {
            t.na = 1;
            snprintf(t.na_why, sizeof t.na_why, "%s", cal.na_why);
        }
        span += span / 20 + 1;
        uint64_t n = co.have_replay ? 1 : co.iterations;
        for (uint64_t it = 0; it < n && !t.na; it++) {
            uint64_t seed = co.have_replay ? co.replay : co.seed + it;
            struct outcome o;
            if (tty && it % 10 == 0) {
                double el = bench_now() - t_start;
                fprintf(stderr, "\r\033[K[combination %zu of %zu] %s/%s %s crash %" PRIu64 " of %" PRIu64
                                "  %.0f crashes/s", idx + 1, total, c.names[0], c.names[1], c.names[6], it + 1, n,
                        el > 0 ? (double)crashes_all / el : 0);
                fflush(stderr);
            }
            if (one_crash(&co, &c, seed, span, dir, &o, NULL)) {
                t.na = 1;
                snprintf(t.na_why, sizeof t.na_why, "%s", o.na_why);
                break;
            }
            t.crashes++;
            t.mid_run += (uint64_t)o.mid_run;
            crashes_all++;
            t.lost += o.lost;
            t.lost_max = o.lost > t.lost_max ? o.lost : t.lost_max;
            t.survived += o.survived;
            t.atomicity += o.atomicity;
            t.garbage += o.garbage;
            t.phantom += o.phantom;
            t.recovery_failed += (unsigned)o.recovery_failed;
            t.rec_sum += o.recovery_ms;
            t.rec_max = o.recovery_ms > t.rec_max ? o.recovery_ms : t.rec_max;
            int this_bad = (durable(&c) && o.lost) || o.atomicity || o.garbage || o.phantom || o.recovery_failed;
            if (this_bad && !t.have_bad) {
                t.have_bad = 1;
                t.first_bad_seed = seed;
                snprintf(t.first_why, sizeof t.first_why, "%s", o.why);
            }
        }
        if (tty)
            fprintf(stderr, "\r\033[K");
        row(&c, &t);
        if (t.have_bad) {
            printf("  first failure: seed %" PRIu64 ": %s\n", t.first_bad_seed, t.first_why);
            replay_line(stdout, &co, &c, t.first_bad_seed);
        }
        if (bad(&c, &t) && !t.na)
            failed = 1;
        if (jf) {
            json_t *j = row_json(&co, &c, &t);
            bench_json_write(jf, j);
            json_decref(j);
        }
        fflush(stdout);
    }
    double el = bench_now() - t_start;
    printf("\n%" PRIu64 " crashes in %.1f s: %.0f crashes per second\n", crashes_all, el,
           el > 0 ? (double)crashes_all / el : 0);
    if (co.have_replay)
        printf("the directory after the crash and recovery: %s (commitlab inspect %s)\n", dir, dir);
    else {
        bench_rm_tree(dir);
        rmdir(co.dir);
    }
    if (jf)
        fclose(jf);
    free_opts(&co);
    return failed;
}
