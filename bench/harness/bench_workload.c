/*
 * bench_workload.c -- the transaction workloads, written once against the
 * driver interface so that each runs unchanged on every engine.
 *
 * kv: each transaction does --ops-per-txn operations on 16-byte keys
 *   ("k" + 15 decimal digits) drawn uniformly or Zipf-distributed from
 *   --keys; each operation is a get with probability --read-ratio, else a
 *   put of a --value-size value.  A key's value is a pure function of the
 *   key, so a later read can check every byte whatever the commit order.
 * tpcb: pgbench's TPC-B-like transaction over key-value pairs: read and
 *   update an account's balance, read it again, update a teller's and a
 *   branch's balance, insert a history row.  --scale N means N branches,
 *   10 N tellers and 100,000 N accounts, as in pgbench.  Every engine runs
 *   it serialisably (commitlab's and LMDB's write transactions, SQLite's
 *   BEGIN IMMEDIATE, RocksDB's TransactionDB with GetForUpdate,
 *   PostgreSQL's SELECT ... FOR UPDATE), so no
 *   balance update is lost; --verify checks TPC-B's consistency condition.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_workload.h"

#define KEY_LEN 16

uint64_t bench_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rand01(uint64_t *s)
{
    return (double)(bench_rand(s) >> 11) / 9007199254740992.0;
}

/* Gray et al., "Quickly generating billion-record synthetic databases"
 * (the YCSB generator); ranks are then scattered over the key space so
 * that the hot keys are not neighbours. */
static double zeta(uint64_t n, double theta)
{
    double sum = 0;
    for (uint64_t i = 1; i <= n; i++)
        sum += 1.0 / pow((double)i, theta);
    return sum;
}

void bench_zipf_init(struct bench_zipf *z, uint64_t n, double theta)
{
    z->n = n;
    z->theta = theta;
    z->zeta2 = zeta(2, theta);
    z->zetan = zeta(n, theta);
    z->alpha = 1.0 / (1.0 - theta);
    z->eta = (1 - pow(2.0 / (double)n, 1 - theta)) / (1 - z->zeta2 / z->zetan);
}

uint64_t bench_zipf_next(const struct bench_zipf *z, uint64_t *rng)
{
    double u = rand01(rng), uz = u * z->zetan;
    uint64_t rank;
    if (uz < 1.0)
        rank = 0;
    else if (uz < 1.0 + pow(0.5, z->theta))
        rank = 1;
    else
        rank = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1, z->alpha));
    if (rank >= z->n)
        rank = z->n - 1;
    /* scatter: a fixed odd multiplier is a bijection mod 2^64; fold into n */
    uint64_t h = rank * 0x9E3779B97F4A7C15ull;
    return (h ^ (h >> 29)) % z->n;
}

static void make_key(char *k, char prefix, uint64_t i)
{
    char tmp[KEY_LEN + 1];
    snprintf(tmp, sizeof tmp, "%c%015" PRIu64, prefix, (uint64_t)(i % 1000000000000000ull));
    memcpy(k, tmp, KEY_LEN);
}

/* The value of key i: 8 bytes of i, then bytes derived from i. */
static void make_value(uint8_t *v, size_t len, uint64_t i)
{
    uint64_t s = i * 2654435761u + 1;
    for (size_t j = 0; j < len; j++) {
        if (j < 8)
            v[j] = (uint8_t)(i >> (8 * j));
        else
            v[j] = (uint8_t)('a' + (s = s * 6364136223846793005ull + 1442695040888963407ull) % 26);
    }
}

static uint64_t pick_key(const struct bench_config *cfg, struct bench_worker *w)
{
    if (w->zipf)
        return bench_zipf_next(w->zipf, &w->rng);
    return bench_rand(&w->rng) % cfg->keys;
}

/* Loads keys [0, n) with make_key/make_value, 1000 per transaction. */
static int load_range(struct bench_conn *c, char prefix, uint64_t n, size_t vlen,
                      void (*val)(uint8_t *, size_t, uint64_t))
{
    const struct bench_driver *d = c->db->drv;
    uint8_t v[8192];
    char k[KEY_LEN];
    for (uint64_t i = 0; i < n;) {
        int rc = d->begin(c, 0);
        if (rc)
            return rc;
        for (uint64_t end = i + 1000 < n ? i + 1000 : n; i < end; i++) {
            make_key(k, prefix, i);
            val(v, vlen, i);
            if ((rc = d->put(c, k, KEY_LEN, v, vlen))) {
                d->abort(c);
                return rc;
            }
        }
        if ((rc = d->commit(c)))
            return rc;
    }
    return BENCH_OK;
}

/* ---- kv ------------------------------------------------------------------ */

static int kv_preload(struct bench_conn *c, const struct bench_config *cfg)
{
    return load_range(c, 'k', cfg->keys, cfg->value_size, make_value);
}

static int kv_txn(struct bench_conn *c, const struct bench_config *cfg, struct bench_worker *w, unsigned *ops)
{
    const struct bench_driver *d = c->db->drv;
    int rdonly = cfg->read_ratio >= 1.0;
    char k[KEY_LEN];
    size_t vl;
    int rc = d->begin(c, rdonly);
    if (rc)
        return rc;
    for (unsigned o = 0; o < cfg->ops_per_txn; o++) {
        uint64_t i = pick_key(cfg, w);
        make_key(k, 'k', i);
        if (rdonly || (cfg->read_ratio > 0 && rand01(&w->rng) < cfg->read_ratio)) {
            rc = d->get(c, k, KEY_LEN, w->buf, sizeof w->buf, &vl);
            if (rc == BENCH_NOTFOUND)
                rc = BENCH_OK;
        } else {
            make_value(w->buf, cfg->value_size, i);
            rc = d->put(c, k, KEY_LEN, w->buf, cfg->value_size);
            if (rc == BENCH_OK && w->written)
                __atomic_fetch_or(&w->written[i / 8], (uint8_t)(1u << (i % 8)), __ATOMIC_RELAXED);
        }
        if (rc) {
            d->abort(c);
            return rc;
        }
    }
    *ops = cfg->ops_per_txn;
    return d->commit(c);
}

static int kv_verify(struct bench_conn *c, const struct bench_config *cfg, const struct bench_verify_in *in,
                     uint64_t *checked)
{
    const uint8_t *written = in->written;
    const struct bench_driver *d = c->db->drv;
    uint8_t want[8192], got[8192];
    char k[KEY_LEN];
    size_t vl;
    int rc = d->begin(c, 1);
    if (rc)
        return rc;
    *checked = 0;
    for (uint64_t i = 0; i < cfg->keys; i++) {
        int expect = cfg->preload || (written && (written[i / 8] >> (i % 8) & 1));
        make_key(k, 'k', i);
        rc = d->get(c, k, KEY_LEN, got, sizeof got, &vl);
        if (rc == BENCH_ERR)
            break;
        if (rc == BENCH_NOTFOUND) {
            if (expect) {
                snprintf(c->err, sizeof c->err, "verify: key %.16s was written but is missing", k);
                rc = BENCH_ERR;
                break;
            }
            rc = BENCH_OK;
            continue;
        }
        if (!expect) {
            snprintf(c->err, sizeof c->err, "verify: key %.16s was never written but is present", k);
            rc = BENCH_ERR;
            break;
        }
        make_value(want, cfg->value_size, i);
        if (vl != cfg->value_size || memcmp(want, got, vl)) {
            snprintf(c->err, sizeof c->err, "verify: key %.16s has a wrong value (%zu bytes)", k, vl);
            rc = BENCH_ERR;
            break;
        }
        (*checked)++;
    }
    d->abort(c);
    return rc;
}

const struct bench_workload bench_workload_kv = {
    .name = "kv",
    .preload = kv_preload,
    .txn = kv_txn,
    .verify = kv_verify,
};

/* ---- tpcb ---------------------------------------------------------------- */

#define TPCB_TELLERS 10u
#define TPCB_ACCOUNTS 100000u
#define TPCB_ROW 100  /* pgbench's rows are about 100 bytes (filler) */
#define TPCB_HISTORY 50

static void tpcb_row(uint8_t *v, size_t len, uint64_t i)
{
    (void)i;
    memset(v, ' ', len);
    memset(v, 0, 8); /* balance 0 */
}

static int tpcb_preload(struct bench_conn *c, const struct bench_config *cfg)
{
    int rc;
    if ((rc = load_range(c, 'b', cfg->scale, TPCB_ROW, tpcb_row)) ||
        (rc = load_range(c, 't', (uint64_t)cfg->scale * TPCB_TELLERS, TPCB_ROW, tpcb_row)) ||
        (rc = load_range(c, 'a', (uint64_t)cfg->scale * TPCB_ACCOUNTS, TPCB_ROW, tpcb_row)))
        return rc;
    return BENCH_OK;
}

/* Adds delta to the balance in the first 8 bytes of row k. */
static int add_balance(struct bench_conn *c, const char *k, int64_t delta, uint8_t *row)
{
    const struct bench_driver *d = c->db->drv;
    size_t vl;
    int64_t bal;
    int rc = d->get(c, k, KEY_LEN, row, TPCB_ROW, &vl);
    if (rc == BENCH_NOTFOUND) {
        snprintf(c->err, sizeof c->err, "tpcb: row %.16s missing (was the store preloaded?)", k);
        return BENCH_ERR;
    }
    if (rc)
        return rc;
    memcpy(&bal, row, 8);
    bal += delta;
    memcpy(row, &bal, 8);
    return d->put(c, k, KEY_LEN, row, TPCB_ROW);
}

/* History rows: client id and that client's commit sequence. */
static uint64_t history_id(unsigned client, uint64_t seq) { return (uint64_t)client * 10000000000ull + seq; }

static int tpcb_txn(struct bench_conn *c, const struct bench_config *cfg, struct bench_worker *w, unsigned *ops)
{
    const struct bench_driver *d = c->db->drv;
    uint64_t bid = bench_rand(&w->rng) % cfg->scale;
    uint64_t tid = bench_rand(&w->rng) % ((uint64_t)cfg->scale * TPCB_TELLERS);
    uint64_t aid = bench_rand(&w->rng) % ((uint64_t)cfg->scale * TPCB_ACCOUNTS);
    int64_t delta = (int64_t)(bench_rand(&w->rng) % 10001) - 5000;
    uint8_t row[TPCB_ROW];
    char k[KEY_LEN];
    size_t vl;
    int rc = d->begin(c, 0);
    if (rc)
        return rc;
    make_key(k, 'a', aid);
    if ((rc = add_balance(c, k, delta, row)))
        goto fail;
    if ((rc = d->get(c, k, KEY_LEN, row, sizeof row, &vl))) /* SELECT abalance */
        goto fail;
    make_key(k, 't', tid);
    if ((rc = add_balance(c, k, delta, row)))
        goto fail;
    make_key(k, 'b', bid);
    if ((rc = add_balance(c, k, delta, row)))
        goto fail;
    /* history: unique key per client and sequence */
    {
        uint8_t h[TPCB_HISTORY];
        memset(h, ' ', sizeof h);
        memcpy(h, &tid, 8);
        memcpy(h + 8, &bid, 8);
        memcpy(h + 16, &aid, 8);
        memcpy(h + 24, &delta, 8);
        make_key(k, 'h', history_id(w->id, w->seq));
        if ((rc = d->put(c, k, KEY_LEN, h, sizeof h)))
            goto fail;
    }
    *ops = 5;
    rc = d->commit(c);
    if (rc == BENCH_OK)
        w->seq++; /* the next history row; a retried transaction reuses this one */
    return rc;
fail:
    d->abort(c);
    return rc;
}

static int64_t row_balance(const uint8_t *row)
{
    int64_t bal;
    memcpy(&bal, row, 8);
    return bal;
}

/* TPC-B's consistency condition: every branch, teller and account row is
 * there and well formed; the sums of the branch, teller and account
 * balances and of the history deltas are equal; and the history has one
 * row per committed transaction -- client i's rows 0 .. committed[i]-1 and
 * no more.  A lost update breaks the sums. */
static int tpcb_verify(struct bench_conn *c, const struct bench_config *cfg, const struct bench_verify_in *in,
                       uint64_t *checked)
{
    const struct bench_driver *d = c->db->drv;
    static const struct { char prefix; uint64_t per_scale; } tables[] = {
        {'b', 1}, {'t', TPCB_TELLERS}, {'a', TPCB_ACCOUNTS}};
    uint8_t row[TPCB_ROW];
    char k[KEY_LEN];
    size_t vl;
    int64_t sum[4] = {0}; /* branches, tellers, accounts, history */
    uint64_t rows = 0, expected = 0;
    int rc;
    *checked = 0;
    if ((rc = d->begin(c, 1)))
        return rc;
    for (size_t t = 0; t < 3; t++)
        for (uint64_t i = 0; i < tables[t].per_scale * cfg->scale; i++) {
            make_key(k, tables[t].prefix, i);
            rc = d->get(c, k, KEY_LEN, row, sizeof row, &vl);
            if (rc == BENCH_NOTFOUND || (rc == BENCH_OK && vl != TPCB_ROW)) {
                snprintf(c->err, sizeof c->err, "verify: row %.16s missing or malformed", k);
                rc = BENCH_ERR;
            }
            if (rc)
                goto out;
            sum[t] += row_balance(row);
            (*checked)++;
        }
    for (unsigned cl = 0; in->committed && cl < in->clients; cl++) {
        expected += in->committed[cl];
        for (uint64_t s = 0; s <= in->committed[cl]; s++) {
            make_key(k, 'h', history_id(cl, s));
            rc = d->get(c, k, KEY_LEN, row, sizeof row, &vl);
            if (s == in->committed[cl]) { /* one past the last commit: must be absent */
                if (rc == BENCH_OK) {
                    snprintf(c->err, sizeof c->err, "verify: history row %.16s of a transaction that did not "
                             "commit", k);
                    rc = BENCH_ERR;
                    goto out;
                }
                if (rc != BENCH_NOTFOUND)
                    goto out;
                rc = BENCH_OK;
                break;
            }
            if (rc == BENCH_NOTFOUND || (rc == BENCH_OK && vl != TPCB_HISTORY)) {
                snprintf(c->err, sizeof c->err, "verify: history row %.16s of a committed transaction missing", k);
                rc = BENCH_ERR;
            }
            if (rc)
                goto out;
            int64_t delta;
            memcpy(&delta, row + 24, 8);
            sum[3] += delta;
            rows++;
            (*checked)++;
        }
    }
    if (in->committed && (sum[0] != sum[1] || sum[1] != sum[2] || sum[2] != sum[3] || rows != expected)) {
        snprintf(c->err, sizeof c->err, "verify: TPC-B consistency broken: branches %lld, tellers %lld, accounts "
                 "%lld, history %lld (%llu rows for %llu commits)", (long long)sum[0], (long long)sum[1],
                 (long long)sum[2], (long long)sum[3], (unsigned long long)rows, (unsigned long long)expected);
        rc = BENCH_ERR;
    }
out:
    d->abort(c);
    return rc;
}

const struct bench_workload bench_workload_tpcb = {
    .name = "tpcb",
    .preload = tpcb_preload,
    .txn = tpcb_txn,
    .verify = tpcb_verify,
};

int bench_workload_loaded(struct bench_conn *c, const struct bench_config *cfg)
{
    const struct bench_driver *d = c->db->drv;
    uint8_t v[TPCB_ROW > 8192 ? TPCB_ROW : 8192];
    char k[KEY_LEN];
    size_t vl;
    int tpcb = strcmp(cfg->workload, "tpcb") == 0;
    /* the last key the preload writes */
    make_key(k, tpcb ? 'a' : 'k', tpcb ? (uint64_t)cfg->scale * TPCB_ACCOUNTS - 1 : cfg->keys - 1);
    if (d->begin(c, 1))
        return 0;
    int rc = d->get(c, k, KEY_LEN, v, sizeof v, &vl);
    d->abort(c);
    return rc == BENCH_OK;
}

const struct bench_workload *bench_workload_find(const char *name)
{
    if (strcmp(name, "kv") == 0)
        return &bench_workload_kv;
    if (strcmp(name, "tpcb") == 0)
        return &bench_workload_tpcb;
    return NULL;
}
