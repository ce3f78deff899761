/*
 * wt_direct.c -- WiredTiger driven directly, without the benchmark
 * harness: the cross-check for `commitlab bench --engine wiredtiger`
 * (docs/lab/results.md).
 *
 *   wt_direct DIR SECONDS THREADS [nosync]
 *
 * Same workload as bench's kv and the same settings as bench's WiredTiger
 * driver: 100,000 keys of 16 bytes preloaded with 100-byte values into
 * table:kv (raw bytes, key_format=u,value_format=u), then THREADS threads,
 * each with its own WT_SESSION and cursor, running single-put write
 * transactions (begin_transaction(isolation=snapshot), an overwriting
 * insert, commit_transaction) on uniformly random keys for SECONDS, after
 * one unmeasured second; a transaction WiredTiger rolls back (WT_ROLLBACK)
 * is run again.  The log is on, commits sync it
 * (transaction_sync=(enabled=true,method=fsync)), or with nosync are
 * written to it without a sync (method=none).  Prints the transactions
 * per second.  DIR is created and must be empty or absent.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wiredtiger.h>

#define NKEYS 100000
#define KLEN 16
#define VLEN 100

static WT_CONNECTION *conn;
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
    fprintf(stderr, "wt_direct: %s: %s\n", what, wiredtiger_strerror(rc));
    exit(1);
}

static void *client(void *arg)
{
    uint64_t rs = (uint64_t)(uintptr_t)arg * 7919 + 1;
    char key[KLEN + 1], val[VLEN];
    WT_SESSION *s;
    WT_CURSOR *c;
    int rc;
    memset(val, 'v', sizeof val);
    if ((rc = conn->open_session(conn, NULL, NULL, &s)) || (rc = s->open_cursor(s, "table:kv", NULL, NULL, &c)))
        die("open_session", rc);
    for (;;) {
        int ph = __atomic_load_n(&phase, __ATOMIC_ACQUIRE);
        if (ph == 2)
            break;
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        snprintf(key, sizeof key, "k%015" PRIu64, (rs >> 17) % NKEYS);
        WT_ITEM k = {.data = key, .size = KLEN}, v = {.data = val, .size = VLEN};
        do {
            if ((rc = s->begin_transaction(s, "isolation=snapshot")))
                die("begin_transaction", rc);
            c->set_key(c, &k);
            c->set_value(c, &v);
            if ((rc = c->insert(c)) == 0)
                rc = s->commit_transaction(s, NULL);
            else
                s->rollback_transaction(s, NULL);
        } while (rc == WT_ROLLBACK);
        if (rc)
            die("insert/commit_transaction", rc);
        if (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) == 1)
            __atomic_fetch_add(&counted, 1, __ATOMIC_RELAXED);
    }
    s->close(s, NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: wt_direct DIR SECONDS THREADS [nosync]\n");
        return 2;
    }
    const char *dir = argv[1];
    double secs = atof(argv[2]);
    int threads = atoi(argv[3]), nosync = argc > 4 && strcmp(argv[4], "nosync") == 0;
    if (secs <= 0 || threads < 1 || threads > 1024) {
        fprintf(stderr, "wt_direct: SECONDS > 0 and THREADS in [1, 1024]\n");
        return 2;
    }
    char config[512];
    WT_SESSION *s;
    WT_CURSOR *c;
    int rc;
    mkdir(dir, 0755);
    snprintf(config, sizeof config,
             "create,session_max=%d,log=(enabled=true,archive=true,prealloc=false),"
             "transaction_sync=(enabled=true,method=%s)",
             threads + 64, nosync ? "none" : "fsync");
    if ((rc = wiredtiger_open(dir, NULL, config, &conn)))
        die("wiredtiger_open", rc);
    if ((rc = conn->open_session(conn, NULL, NULL, &s)) ||
        (rc = s->create(s, "table:kv", "key_format=u,value_format=u")) ||
        (rc = s->open_cursor(s, "table:kv", NULL, NULL, &c)))
        die("create", rc);
    /* preload, 1000 keys per transaction */
    for (int i = 0; i < NKEYS;) {
        char key[KLEN + 1], val[VLEN];
        memset(val, 'v', sizeof val);
        if ((rc = s->begin_transaction(s, NULL)))
            die("begin_transaction", rc);
        for (int end = i + 1000; i < end && i < NKEYS; i++) {
            snprintf(key, sizeof key, "k%015d", i);
            WT_ITEM k = {.data = key, .size = KLEN}, v = {.data = val, .size = VLEN};
            c->set_key(c, &k);
            c->set_value(c, &v);
            if ((rc = c->insert(c)))
                die("insert", rc);
        }
        if ((rc = s->commit_transaction(s, NULL)))
            die("commit_transaction", rc);
    }
    s->close(s, NULL);
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
    conn->close(conn, NULL);
    printf("wt_direct: %s, %d threads, %.1f s: %.3f txn/sec\n", nosync ? "method=none" : "durable", threads, t1 - t0,
           (double)counted / (t1 - t0));
    return 0;
}
