/*
 * crash_workload.c -- what every crash of `commitlab crash` runs, and the
 * check after it, written once for every engine (through the benchmark
 * driver interface) and both modes.
 *
 * kv (blind writes).  Client c's n-th transaction writes a<c> = n and
 * b<c> = n and one payload row p<c>-<n mod 8> whose value is a pure
 * function of (c, n).  After the crash and recovery, for every client:
 *   - a<c> == b<c>, and the payload rows are those of transactions up to
 *     a<c> and no other: no transaction is partly visible, and no value is
 *     one that no commit wrote;
 *   - a<c> >= the last acknowledged n: anything less is an acknowledged
 *     commit lost (a failure for a durable policy; for none and periodic
 *     under a power failure it is counted, as what those policies may lose);
 *   - a<c> <= the last attempted n;
 *   - the database opens at all (a failed recovery is counted).
 * A client's surviving transactions are a prefix of what it committed,
 * because a<c> is a single counter checked against every row.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "crash.h"
#include "ut_file.h"
#include "ut_scratch.h"

#define PAYLOAD_ROWS 8
#define MAX_PAYLOAD 1500

/* The payload row of client c's n-th transaction. */
static size_t payload(unsigned c, uint64_t n, uint8_t *buf)
{
    uint64_t h = crash_mix(((uint64_t)c << 40) ^ n);
    size_t len = 16 + (size_t)(h % (MAX_PAYLOAD - 16));
    memcpy(buf, &n, 8);
    memcpy(buf + 8, &c, sizeof c);
    for (size_t i = 12; i < len; i++)
        buf[i] = (uint8_t)(h >> ((i % 8) * 8)) ^ (uint8_t)i;
    return len;
}

static int kv_txn(struct bench_conn *conn, unsigned c, uint64_t n)
{
    const struct bench_driver *d = conn->db->drv;
    char ka[16], kb[16], kp[24];
    uint8_t v[MAX_PAYLOAD];
    snprintf(ka, sizeof ka, "a%u", c);
    snprintf(kb, sizeof kb, "b%u", c);
    snprintf(kp, sizeof kp, "p%u-%u", c, (unsigned)(n % PAYLOAD_ROWS));
    size_t len = payload(c, n, v);
    int rc = d->begin(conn, 0);
    if (rc)
        return rc;
    if ((rc = d->put(conn, ka, strlen(ka), &n, sizeof n)) || (rc = d->put(conn, kb, strlen(kb), &n, sizeof n)) ||
        (rc = d->put(conn, kp, strlen(kp), v, len))) {
        d->abort(conn);
        return rc;
    }
    return d->commit(conn);
}

static void note(struct crash_outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct crash_outcome *o, const char *fmt, ...)
{
    if (o->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->why, sizeof o->why, fmt, ap);
    va_end(ap);
}

/* The counter k, 0 when absent; BENCH_ERR (with the message in o) when it
 * cannot be read or is not a counter. */
static int get_u64(struct bench_conn *conn, const char *k, uint64_t *v, struct crash_outcome *o)
{
    size_t vl = 0;
    *v = 0;
    int rc = conn->db->drv->get(conn, k, strlen(k), v, sizeof *v, &vl);
    if (rc == BENCH_NOTFOUND)
        return 0;
    if (rc == BENCH_OK && vl != sizeof *v) {
        o->garbage++;
        note(o, "%s holds %zu bytes, not a counter", k, vl);
        return BENCH_ERR;
    }
    if (rc) {
        o->recovery_failed = 1;
        note(o, "read %s: %s", k, conn->err);
    }
    return rc;
}

static void check_client(struct bench_conn *conn, unsigned i, const struct crash_witness *w,
                         struct crash_outcome *o)
{
    char ka[16], kb[16], kp[24];
    uint8_t got[MAX_PAYLOAD + 8], want[MAX_PAYLOAD];
    uint64_t a, b, acked = w->acked[i], attempted = w->attempted[i];
    snprintf(ka, sizeof ka, "a%u", i);
    snprintf(kb, sizeof kb, "b%u", i);
    if (get_u64(conn, ka, &a, o) || get_u64(conn, kb, &b, o))
        return;
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
        int rc = conn->db->drv->get(conn, kp, strlen(kp), got, sizeof got, &vl);
        if (rc != BENCH_OK && rc != BENCH_NOTFOUND) {
            o->recovery_failed = 1;
            note(o, "client %u: read %s: %s", i, kp, conn->err);
            continue;
        }
        if (n == 0) { /* no recovered transaction wrote this row */
            if (rc == BENCH_OK) {
                o->garbage++;
                note(o, "client %u: row %s holds a value no recovered commit wrote", i, kp);
            }
            continue;
        }
        size_t wl = payload(i, n, want);
        if (rc != BENCH_OK || vl != wl || memcmp(got, want, wl) != 0) {
            o->garbage++;
            note(o, "client %u: row %s is not what transaction %" PRIu64 " wrote", i, kp, n);
        }
    }
}

/* ---- tpcb ------------------------------------------------------------------
 *
 * Read-modify-write transactions, TPC-B's shape on a small bank (one
 * branch, 10 tellers, 100 accounts, every balance 0 until first written):
 * client c's n-th transaction reads and adds a delta to one account, one
 * teller and the branch, and inserts the history row h<c>-<n> naming the
 * account, the teller and the delta, all a pure function of (c, n).  Every
 * transaction updates the branch, so they all conflict: an engine must
 * serialise them (commitlab's write transactions take the writer lock at
 * their first read; RocksDB's lock the rows and may abort, and the
 * transaction is run again).  After recovery, for every client, its
 * history rows are exactly h<c>-1 .. h<c>-k for some k (a prefix: no
 * gap), each as written, with acknowledged <= k <= attempted; and every
 * balance equals the sum of the deltas of the recovered history rows that
 * name it.  A transaction partly visible, a lost update, or a value no
 * commit wrote breaks one of these sums. */

#define TPCB_TELLERS 10u
#define TPCB_ACCOUNTS 100u

struct tpcb_row {
    uint32_t client, account, teller, pad;
    uint64_t n;
    int64_t delta;
};

static struct tpcb_row tpcb_row(unsigned c, uint64_t n)
{
    uint64_t h = crash_mix(((uint64_t)c << 40) ^ n ^ 0x5450434200000000ull);
    return (struct tpcb_row){.client = c,
                             .account = (uint32_t)(h % TPCB_ACCOUNTS),
                             .teller = (uint32_t)((h >> 12) % TPCB_TELLERS),
                             .n = n,
                             .delta = (int64_t)((h >> 24) % 1999999) - 999999};
}

/* Reads the balance k (0 when absent) and writes it plus delta. */
static int add_balance(struct bench_conn *conn, const char *k, int64_t delta)
{
    const struct bench_driver *d = conn->db->drv;
    int64_t v = 0;
    size_t vl = 0;
    int rc = d->get(conn, k, strlen(k), &v, sizeof v, &vl);
    if (rc == BENCH_NOTFOUND)
        v = 0;
    else if (rc)
        return rc;
    v += delta;
    return d->put(conn, k, strlen(k), &v, sizeof v);
}

static int tpcb_txn(struct bench_conn *conn, unsigned c, uint64_t n)
{
    const struct bench_driver *d = conn->db->drv;
    struct tpcb_row r = tpcb_row(c, n);
    char ka[24], kt[24], kh[40];
    snprintf(ka, sizeof ka, "acct%03u", r.account);
    snprintf(kt, sizeof kt, "teller%02u", r.teller);
    snprintf(kh, sizeof kh, "h%u-%" PRIu64, c, n);
    int rc = d->begin(conn, 0);
    if (rc)
        return rc;
    if ((rc = add_balance(conn, ka, r.delta)) || (rc = add_balance(conn, kt, r.delta)) ||
        (rc = add_balance(conn, "branch0", r.delta)) || (rc = d->put(conn, kh, strlen(kh), &r, sizeof r))) {
        d->abort(conn);
        return rc;
    }
    return d->commit(conn);
}

struct tpcb_sums {
    int64_t account[TPCB_ACCOUNTS], teller[TPCB_TELLERS], branch;
};

static void tpcb_check_client(struct bench_conn *conn, unsigned i, unsigned txns, const struct crash_witness *w,
                              struct tpcb_sums *sums, struct crash_outcome *o)
{
    uint64_t k = 0, count = 0;
    for (uint64_t n = 1; n <= txns; n++) {
        char kh[40];
        struct tpcb_row got, want = tpcb_row(i, n);
        size_t vl = 0;
        snprintf(kh, sizeof kh, "h%u-%" PRIu64, i, n);
        int rc = conn->db->drv->get(conn, kh, strlen(kh), &got, sizeof got, &vl);
        if (rc == BENCH_NOTFOUND)
            continue;
        if (rc) {
            o->recovery_failed = 1;
            note(o, "client %u: read %s: %s", i, kh, conn->err);
            return;
        }
        if (vl != sizeof got || memcmp(&got, &want, sizeof got) != 0) {
            o->garbage++;
            note(o, "client %u: history row %s is not what transaction %" PRIu64 " wrote", i, kh, n);
            continue;
        }
        k = n;
        count++;
        sums->account[want.account] += want.delta;
        sums->teller[want.teller] += want.delta;
        sums->branch += want.delta;
    }
    if (count != k) {
        o->atomicity++;
        note(o, "client %u: its history has gaps (%" PRIu64 " rows, the last h%u-%" PRIu64 ")", i, count, i, k);
    }
    if (k < w->acked[i]) {
        o->lost += w->acked[i] - k;
        note(o, "client %u: acknowledged transaction %" PRIu64 " lost (recovered %" PRIu64 ")", i, w->acked[i], k);
    } else {
        o->survived += k - w->acked[i];
    }
    if (k > w->attempted[i]) {
        o->phantom++;
        note(o, "client %u: transaction %" PRIu64 " recovered, only %" PRIu64 " attempted", i, k, w->attempted[i]);
    }
}

static void tpcb_check_balance(struct bench_conn *conn, const char *k, int64_t want, struct crash_outcome *o)
{
    int64_t v = 0;
    size_t vl = 0;
    int rc = conn->db->drv->get(conn, k, strlen(k), &v, sizeof v, &vl);
    if (rc == BENCH_NOTFOUND)
        v = 0;
    else if (rc) {
        o->recovery_failed = 1;
        note(o, "read %s: %s", k, conn->err);
        return;
    } else if (vl != sizeof v) {
        o->garbage++;
        note(o, "%s holds %zu bytes, not a balance", k, vl);
        return;
    }
    if (v != want) {
        o->atomicity++;
        note(o, "%s holds %" PRId64 "; the recovered history says %" PRId64, k, v, want);
    }
}

static void tpcb_check(struct bench_conn *conn, const struct crash_config *c, const struct crash_witness *w,
                       struct crash_outcome *o)
{
    struct tpcb_sums sums;
    char k[24];
    memset(&sums, 0, sizeof sums);
    for (unsigned i = 0; i < c->clients; i++)
        tpcb_check_client(conn, i, c->txns, w, &sums, o);
    for (unsigned a = 0; a < TPCB_ACCOUNTS; a++) {
        snprintf(k, sizeof k, "acct%03u", a);
        tpcb_check_balance(conn, k, sums.account[a], o);
    }
    for (unsigned t = 0; t < TPCB_TELLERS; t++) {
        snprintf(k, sizeof k, "teller%02u", t);
        tpcb_check_balance(conn, k, sums.teller[t], o);
    }
    tpcb_check_balance(conn, "branch0", sums.branch, o);
}

/* ---- both ------------------------------------------------------------------ */

/* ---- pipelined clients ---------------------------------------------------------- */

static void pipe_ticket_done(struct bench_ticket *t, int rc)
{
    struct crash_ticket *tk = (struct crash_ticket *)t;
    struct crash_pipe *p = tk->p;
    if (rc == 0)
        p->ack(p->arg, tk->n); /* in the client's order: the engine acknowledges in log order */
    pthread_mutex_lock(&p->mu);
    p->done++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int crash_pipe_init(struct crash_pipe *p, unsigned depth, void (*ack)(void *arg, uint64_t n), void *arg)
{
    memset(p, 0, sizeof *p);
    p->ring = calloc(depth, sizeof *p->ring);
    if (!p->ring)
        return -1;
    p->depth = depth;
    p->ack = ack;
    p->arg = arg;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return 0;
}

void crash_pipe_free(struct crash_pipe *p)
{
    free(p->ring);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

int crash_pipe_txn(struct crash_pipe *p, struct bench_conn *conn, enum crash_workload wl, unsigned c, uint64_t n)
{
    pthread_mutex_lock(&p->mu);
    int full = p->issued - p->done >= p->depth;
    pthread_mutex_unlock(&p->mu);
    /* an engine whose acknowledgements this thread reads (driver.h): read now */
    if (full && conn->db->drv->ack_wait)
        (void)conn->db->drv->ack_wait(conn, p->depth - 1); /* an error: the callbacks carry it */
    pthread_mutex_lock(&p->mu);
    while (p->issued - p->done >= p->depth)
        pthread_cond_wait(&p->cv, &p->mu);
    struct crash_ticket *tk = &p->ring[p->issued % p->depth];
    *tk = (struct crash_ticket){{pipe_ticket_done}, p, n};
    p->issued++;
    pthread_mutex_unlock(&p->mu);
    conn->ticket = &tk->base;
    int rc = crash_txn(conn, wl, c, n);
    if (conn->ticket) { /* never handed over (refused, or retried): done here */
        conn->ticket = NULL;
        pipe_ticket_done(&tk->base, rc == BENCH_OK ? 0 : -1);
    }
    return rc;
}

void crash_pipe_drain(struct crash_pipe *p, struct bench_conn *conn)
{
    if (conn->db->drv->sync_wait)
        (void)conn->db->drv->sync_wait(conn); /* an error: the callbacks carry it */
    pthread_mutex_lock(&p->mu);
    while (p->done != p->issued)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

int crash_txn(struct bench_conn *conn, enum crash_workload wl, unsigned c, uint64_t n)
{
    return wl == CRASH_TPCB ? tpcb_txn(conn, c, n) : kv_txn(conn, c, n);
}

void crash_check(struct bench_db *db, const struct crash_config *c, const struct crash_witness *w,
                 struct crash_outcome *o)
{
    struct bench_conn conn = {.db = db, .id = 0};
    if (db->drv->conn_open(&conn) || db->drv->begin(&conn, 1)) {
        o->recovery_failed = 1;
        note(o, "a read transaction after recovery: %s", conn.err);
        db->drv->conn_close(&conn);
        return;
    }
    if (c->workload == CRASH_TPCB)
        tpcb_check(&conn, c, w, o);
    else
        for (unsigned i = 0; i < c->clients; i++)
            check_client(&conn, i, w, o);
    db->drv->abort(&conn);
    db->drv->conn_close(&conn);
}

/* The knobs a campaign sweeps (its lists), which config_at sets. */
static int swept(enum bench_knob k)
{
    static const enum bench_knob lists[] = {K_ENGINE, K_WORKLOAD, K_CLIENTS, K_DIR,      K_SYNC,
                                            K_SYNC_METHOD, K_SEGMENTS, K_SEGMENT_INIT, K_PREALLOC, K_ELR};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        if (lists[i] == k)
            return 1;
    return 0;
}

void crash_bench_config(const struct crash_config *c, const char *dir, struct bench_config *bc)
{
    *bc = c->run;
    bc->dir = dir;
}

void crash_config_run(struct crash_config *c)
{
    /* The swept knobs in names' order, each word checked when the command
     * line was read (bench_cli_parse_knob) and read into its value here. */
    static const enum bench_knob named[] = {K_SYNC, K_SYNC_METHOD, K_SEGMENTS, K_SEGMENT_INIT, K_PREALLOC, K_ELR};
    struct bench_config *bc = &c->run;
    bench_config_defaults(bc);
    bc->engine = c->names[8];
    bc->workload = c->names[9]; /* tpcb: the engines' transactional modes (RocksDB's TransactionDB) */
    bc->clients = c->clients;
    bc->dir = "";
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        bench_knob_set(bc, named[i], c->names[i], 0);
    for (size_t i = 0; i < bench_crash_ndefaults; i++)
        bench_knob_set(bc, bench_crash_defaults[i].knob, bench_crash_defaults[i].value, 0);
    bc->given[K_SEGMENT_SIZE] = bc->given[K_CACHE] = c->drv == &bench_driver_commitlab;
    bc->given[K_SYNC] = 1;
    /* Every knob the user gave one value of, as bench applies it; another
     * engine's own knob (--lmdb-flags on a SQLite row) is that engine's. */
    for (int i = 0; c->knobs && i < bench_knob_count(); i++) {
        enum bench_knob k = (enum bench_knob)i;
        const char *owner = bench_knob(k)->owner;
        if (!c->knobs->given[k] || swept(k) ||
            (owner && strcmp(owner, "commitlab") != 0 && strcmp(owner, c->drv->name) != 0))
            continue;
        bench_knob_copy(bc, c->knobs, k);
    }
    /* The campaign's swept commit-path knobs away from their defaults
     * count as given, so that an engine that cannot express one runs n/a
     * rather than as something else (bench_engine_check). */
    static const enum bench_knob carried[] = {K_SYNC_METHOD, K_ELR, K_SEGMENTS, K_SEGMENT_INIT, K_PREALLOC};
    struct bench_config d;
    bench_config_defaults(&d);
    for (size_t i = 0; i < sizeof carried / sizeof *carried; i++) {
        char a[64], b[64];
        bench_knob_format(bc, carried[i], a, sizeof a);
        bench_knob_format(&d, carried[i], b, sizeof b);
        if (strcmp(a, b) != 0)
            bc->given[carried[i]] = 1;
    }
}

int crash_keep_copy(const char *dir, char *kept, size_t len)
{
    snprintf(kept, len, "%s.crashed", dir);
    int mrc = ut_scratch_reset(kept, "crash");
    if (mrc)
        return -mrc;
    DIR *d = opendir(dir);
    if (!d)
        return errno;
    int err = 0;
    for (struct dirent *e; !err && (e = readdir(d));) {
        char src[4400], dst[4400];
        struct stat st;
        snprintf(src, sizeof src, "%s/%s", dir, e->d_name);
        snprintf(dst, sizeof dst, "%s/%s", kept, e->d_name);
        if (stat(src, &st) == 0 && S_ISREG(st.st_mode))
            err = -ut_copy_file(src, dst);
    }
    closedir(d);
    return err;
}
