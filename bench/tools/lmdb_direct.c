/*
 * lmdb_direct.c -- LMDB driven directly, without the benchmark harness:
 * the cross-check for `commitlab bench --engine lmdb` (docs/lab/results.md).
 *
 *   lmdb_direct DIR SECONDS THREADS [nosync]
 *
 * Same workload as bench's kv: 100,000 keys of 16 bytes preloaded with
 * 100-byte values, then THREADS threads each running single-put write
 * transactions (mdb_txn_begin, mdb_put, mdb_txn_commit) on uniformly
 * random keys for SECONDS, after one unmeasured second.  Prints the
 * transactions per second.  DIR is created and must be empty or absent.
 */
#include <inttypes.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NKEYS 100000
#define KLEN 16
#define VLEN 100

static MDB_env *env;
static MDB_dbi dbi;
static volatile int phase; /* 0 warm-up, 1 measure, 2 stop */
static uint64_t counted;   /* atomic */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "lmdb_direct: %s: %s\n", what, mdb_strerror(rc));
    exit(1);
}

static void *client(void *arg)
{
    uint64_t rs = (uint64_t)(uintptr_t)arg * 7919 + 1;
    char key[KLEN + 1], val[VLEN];
    memset(val, 'v', sizeof val);
    for (;;) {
        int ph = __atomic_load_n(&phase, __ATOMIC_ACQUIRE);
        if (ph == 2)
            break;
        MDB_txn *t;
        int rc;
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        snprintf(key, sizeof key, "k%015" PRIu64, (rs >> 17) % NKEYS);
        MDB_val k = {KLEN, key}, v = {VLEN, val};
        if ((rc = mdb_txn_begin(env, NULL, 0, &t)))
            die("mdb_txn_begin", rc);
        if ((rc = mdb_put(t, dbi, &k, &v, 0)))
            die("mdb_put", rc);
        if ((rc = mdb_txn_commit(t)))
            die("mdb_txn_commit", rc);
        if (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) == 1)
            __atomic_fetch_add(&counted, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: lmdb_direct DIR SECONDS THREADS [nosync]\n");
        return 2;
    }
    const char *dir = argv[1];
    double secs = atof(argv[2]);
    int threads = atoi(argv[3]), nosync = argc > 4 && strcmp(argv[4], "nosync") == 0;
    if (secs <= 0 || threads < 1 || threads > 1024) {
        fprintf(stderr, "lmdb_direct: SECONDS > 0 and THREADS in [1, 1024]\n");
        return 2;
    }
    MDB_txn *t;
    int rc;
    mkdir(dir, 0755);
    if ((rc = mdb_env_create(&env)) || (rc = mdb_env_set_mapsize(env, 16ull << 30)) ||
        (rc = mdb_env_set_maxreaders(env, (unsigned)threads + 16)) ||
        (rc = mdb_env_open(env, dir, nosync ? MDB_NOSYNC : 0, 0644)))
        die("mdb_env_open", rc);
    /* preload, 1000 keys per transaction */
    for (int i = 0; i < NKEYS;) {
        char key[KLEN + 1], val[VLEN];
        memset(val, 'v', sizeof val);
        if ((rc = mdb_txn_begin(env, NULL, 0, &t)))
            die("mdb_txn_begin", rc);
        if (i == 0 && (rc = mdb_dbi_open(t, NULL, 0, &dbi)))
            die("mdb_dbi_open", rc);
        for (int end = i + 1000; i < end && i < NKEYS; i++) {
            snprintf(key, sizeof key, "k%015d", i);
            MDB_val k = {KLEN, key}, v = {VLEN, val};
            if ((rc = mdb_put(t, dbi, &k, &v, 0)))
                die("mdb_put", rc);
        }
        if ((rc = mdb_txn_commit(t)))
            die("mdb_txn_commit", rc);
    }
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, client, (void *)(uintptr_t)(i + 1));
    sleep(1);
    double t0 = now();
    __atomic_store_n(&phase, 1, __ATOMIC_RELEASE);
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
    __atomic_store_n(&phase, 2, __ATOMIC_RELEASE);
    double t1 = now();
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    free(th);
    mdb_env_close(env);
    printf("lmdb_direct: %s, %d threads, %.1f s: %.3f txn/sec\n", nosync ? "MDB_NOSYNC" : "durable", threads,
           t1 - t0, (double)counted / (t1 - t0));
    return 0;
}
