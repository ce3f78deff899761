/*
 * tour.c -- `commitlab tour`, the default job: a short, real comparison of
 * commit paths on the filesystem of the current directory.  Each row runs
 * single-put transactions (16-byte keys, 100-byte values) from one client
 * for a fixed time on a fresh directory, on commitlab with each built sync
 * policy and method, and on LMDB (durable, and MDB_NOSYNC) driven directly
 * through its own API.  The full benchmark harness (clients, workloads,
 * JSON) is `commitlab bench`.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commitlab.h"

#define KEY_LEN 16
#define VAL_LEN 100
#define NKEYS 100000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void make_key(uint64_t *rs, char *k)
{
    *rs = *rs * 6364136223846793005ull + 1442695040888963407ull;
    snprintf(k, KEY_LEN + 1, "k%015" PRIu64, (*rs >> 17) % NKEYS);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}

static void rm_tree(const char *p) { nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

struct row {
    const char *engine;
    char config[64];
    double tps, usecs, commits_per_sync;
    int na;
    char why[96];
};

static void run_commitlab(const char *dir, enum cl_sync_policy p, enum cl_sync_method m, double secs, struct row *r)
{
    struct cl_options o;
    struct cl_db *db;
    char key[KEY_LEN + 1], val[VAL_LEN];
    uint64_t rs = 1, n = 0;
    int rc;

    memset(val, 'v', sizeof val);
    cl_options_init(&o);
    o.sync = p;
    o.method = m;
    r->engine = "commitlab";
    snprintf(r->config, sizeof r->config, "--sync %s --sync-method %s", cl_sync_policy_name(p),
             cl_sync_method_name(m));
    rm_tree(dir);
    rc = cl_open(dir, &o, &db, NULL);
    if (rc) {
        r->na = 1;
        snprintf(r->why, sizeof r->why, "%s", cl_strerror(rc));
        return;
    }
    double t0 = now_s(), t;
    do {
        struct cl_txn *t1;
        make_key(&rs, key);
        if ((rc = cl_txn_begin(db, 0, &t1)) || (rc = cl_put(t1, key, KEY_LEN, val, VAL_LEN)) ||
            (rc = cl_commit(t1)))
            break;
        n++;
        t = now_s();
    } while (t - t0 < secs);
    t = now_s();
    struct cl_stats st;
    cl_stats(db, &st);
    cl_close(db);
    if (rc) {
        r->na = 1;
        snprintf(r->why, sizeof r->why, "%s", cl_strerror(rc));
        return;
    }
    r->tps = (double)n / (t - t0);
    r->usecs = 1e6 / r->tps;
    r->commits_per_sync = st.syncs ? (double)st.commits / (double)st.syncs : 0;
}

static void run_lmdb(const char *dir, int nosync, double secs, struct row *r)
{
    MDB_env *env = NULL;
    MDB_dbi dbi;
    MDB_txn *txn;
    char key[KEY_LEN + 1], val[VAL_LEN];
    uint64_t rs = 1, n = 0;
    int rc;

    memset(val, 'v', sizeof val);
    r->engine = "lmdb";
    snprintf(r->config, sizeof r->config, "%s", nosync ? "MDB_NOSYNC" : "default (durable)");
    rm_tree(dir);
    mkdir(dir, 0755);
    if ((rc = mdb_env_create(&env)) || (rc = mdb_env_set_mapsize(env, 1ull << 30)) ||
        (rc = mdb_env_open(env, dir, nosync ? MDB_NOSYNC : 0, 0644)))
        goto fail;
    double t0 = now_s(), t;
    do {
        MDB_val k = {KEY_LEN, key}, v = {VAL_LEN, val};
        make_key(&rs, key);
        if ((rc = mdb_txn_begin(env, NULL, 0, &txn)))
            goto fail;
        if ((rc = mdb_dbi_open(txn, NULL, 0, &dbi)) || (rc = mdb_put(txn, dbi, &k, &v, 0))) {
            mdb_txn_abort(txn);
            goto fail;
        }
        if ((rc = mdb_txn_commit(txn)))
            goto fail;
        n++;
        t = now_s();
    } while (t - t0 < secs);
    t = now_s();
    mdb_env_close(env);
    r->tps = (double)n / (t - t0);
    r->usecs = 1e6 / r->tps;
    return;
fail:
    if (env)
        mdb_env_close(env);
    r->na = 1;
    snprintf(r->why, sizeof r->why, "%s", mdb_strerror(rc));
}

int cmd_tour(int argc, char **argv)
{
    double secs = 2.0;
    const char *dir = "commitlab-tour.d";
    struct row rows[8];
    int nrows = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            char *end;
            secs = strtod(argv[++i], &end);
            if (*end || secs <= 0 || secs > 600)
                cli_usage_error("tour", "--seconds takes a number of seconds in (0, 600], got '%s'", argv[i]);
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else {
            cli_usage_error("tour", "unknown argument '%s' (accepted: --seconds N, --dir D)", argv[i]);
        }
    }

    printf("commitlab tour: single-put transactions (%d-byte keys, %d-byte values), 1 client,\n"
           "%.0f s per row, in %s (removed afterwards)\n\n", KEY_LEN, VAL_LEN, secs, dir);
    static const struct { enum cl_sync_policy p; enum cl_sync_method m; } cl_rows[] = {
        {CL_SYNC_NONE, CL_METHOD_FDATASYNC}, {CL_SYNC_COMMIT, CL_METHOD_FDATASYNC},
        {CL_SYNC_COMMIT, CL_METHOD_FSYNC},   {CL_SYNC_COMMIT, CL_METHOD_DSYNC},
        {CL_SYNC_COMMIT, CL_METHOD_DIRECT},
    };
    for (size_t i = 0; i < sizeof cl_rows / sizeof *cl_rows; i++) {
        struct row *r = &rows[nrows++];
        memset(r, 0, sizeof *r);
        run_commitlab(dir, cl_rows[i].p, cl_rows[i].m, secs, r);
    }
    for (int nosync = 0; nosync < 2; nosync++) {
        struct row *r = &rows[nrows++];
        memset(r, 0, sizeof *r);
        run_lmdb(dir, nosync, secs, r);
    }
    rm_tree(dir);

    for (int i = 0; i < nrows; i++) {
        char label[96];
        snprintf(label, sizeof label, "%s %s", rows[i].engine, rows[i].config);
        if (rows[i].na)
            printf("        %-50s %13s  (%s)\n", label, "n/a", rows[i].why);
        else
            printf("        %-50s %13.3f ops/sec  %6.0f usecs/op\n", label, rows[i].tps, rows[i].usecs);
    }
    /* What the table shows, in words. */
    const struct row *none = &rows[0], *commit = &rows[1], *lmdb = &rows[5], *lmdb_ns = &rows[6];
    printf("\n");
    if (!commit->na && !lmdb->na)
        printf("- commitlab --sync commit (one fdatasync per commit) runs at %.2fx LMDB durable\n"
               "  (LMDB makes two durability points per commit: data pages, then the meta page).\n",
               commit->tps / lmdb->tps);
    if (!none->na && !commit->na)
        printf("- not syncing at all is %.0fx faster than syncing every commit here: that gap is\n"
               "  what group commit tries to close without giving up durability.\n",
               none->tps / commit->tps);
    if (!none->na && !lmdb_ns->na)
        printf("- without syncs, commitlab runs at %.2fx LMDB MDB_NOSYNC.\n", none->tps / lmdb_ns->tps);
    return 0;
}
