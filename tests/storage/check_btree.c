/* check_btree.c -- the page store's B+tree against a reference model: random operations with a small
 * cache and checkpoints, splits and merges, checkpoints beside writers, shadow-paging crash safety,
 * a damaged page found by verify and by reads, size limits, readers beside a writer, changes made in
 * place in a leaf. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page_format.h"
#include "store.h"
#include "testutil.h"
#include "vfs_fault.h"

/* ---- the reference model: a sorted array ------------------------------------ */

struct ent {
    uint8_t *k, *v;
    uint16_t kl;
    uint32_t vl;
};
struct model {
    struct ent *e;
    size_t n, cap;
};

static size_t model_lower(const struct model *m, const void *k, size_t kl, int *eq)
{
    size_t lo = 0, hi = m->n;
    *eq = 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = store_key_cmp(m->e[mid].k, m->e[mid].kl, k, kl);
        if (c < 0) {
            lo = mid + 1;
        } else {
            *eq |= c == 0;
            hi = mid;
        }
    }
    return lo;
}

static uint8_t *dup_bytes(const void *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(d);
    if (n)
        memcpy(d, p, n);
    return d;
}

static void model_put(struct model *m, const void *k, size_t kl, const void *v, size_t vl)
{
    int eq;
    size_t i = model_lower(m, k, kl, &eq);
    if (eq) {
        free(m->e[i].v);
        m->e[i].v = dup_bytes(v, vl);
        m->e[i].vl = (uint32_t)vl;
        return;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->e = realloc(m->e, m->cap * sizeof *m->e);
        ck_assert_ptr_nonnull(m->e);
    }
    memmove(&m->e[i + 1], &m->e[i], (m->n - i) * sizeof *m->e);
    m->e[i] = (struct ent){.k = dup_bytes(k, kl), .v = dup_bytes(v, vl), .kl = (uint16_t)kl, .vl = (uint32_t)vl};
    m->n++;
}

static void model_del(struct model *m, const void *k, size_t kl)
{
    int eq;
    size_t i = model_lower(m, k, kl, &eq);
    if (!eq)
        return;
    free(m->e[i].k);
    free(m->e[i].v);
    memmove(&m->e[i], &m->e[i + 1], (m->n - i - 1) * sizeof *m->e);
    m->n--;
}

static struct model model_clone(const struct model *m)
{
    struct model c = {.n = m->n, .cap = m->n ? m->n : 1};
    c.e = malloc(c.cap * sizeof *c.e);
    ck_assert_ptr_nonnull(c.e);
    for (size_t i = 0; i < m->n; i++)
        c.e[i] = (struct ent){.k = dup_bytes(m->e[i].k, m->e[i].kl), .v = dup_bytes(m->e[i].v, m->e[i].vl),
                              .kl = m->e[i].kl, .vl = m->e[i].vl};
    return c;
}

static void model_free(struct model *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->e[i].k);
        free(m->e[i].v);
    }
    free(m->e);
    memset(m, 0, sizeof *m);
}

/* ---- helpers ------------------------------------------------------------------------ */

static struct store *open_store(const char *dir, uint64_t cache_pages, int readonly, int *rcp)
{
    struct store_config c = {.vfs = vfs_posix(), .dir = dir, .cache_size = cache_pages * STORE_PAGE_SIZE,
                             .create = !readonly, .readonly = readonly, .db_id = 7,
                             .wal_segment_size = 1u << 20};
    struct store *s = NULL;
    int created = 0, rc = store_open(&c, &s, &created);
    if (rcp)
        *rcp = rc;
    else
        ck_assert_int_eq(rc, 0);
    return s;
}

static void checkpoint(struct store *s, uint64_t lsn)
{
    struct store_ckpt *c = NULL;
    ck_assert_int_eq(store_checkpoint_begin(s, lsn, lsn / 100, &c), 0);
    ck_assert_int_eq(store_checkpoint_finish(s, c), 0);
}

static int put1(struct store *s, const void *k, size_t kl, const void *v, size_t vl, uint64_t lsn)
{
    struct store_op op = {.key = k, .klen = (uint32_t)kl, .val = v, .vlen = (uint32_t)vl};
    return store_apply(s, &op, 1, lsn);
}

static int del1(struct store *s, const void *k, size_t kl, uint64_t lsn)
{
    struct store_op op = {.del = 1, .key = k, .klen = (uint32_t)kl};
    return store_apply(s, &op, 1, lsn);
}

/* Keys are derived from an id, so ids repeat keys; mostly short, a few up to 512 bytes, drawn from
 * a small alphabet at the front so that prefixes are shared (and some keys prefix others). */
static size_t gen_key(uint64_t id, uint8_t *k)
{
    uint64_t r = id * 0x9E3779B97F4A7C15ull + 12345, u = tu_range(&r, 100), len;
    if (u < 70)
        len = 1 + tu_range(&r, 16);
    else if (u < 92)
        len = 17 + tu_range(&r, 48);
    else if (u < 99)
        len = 65 + tu_range(&r, 448);
    else
        len = CL_MAX_KEY;
    for (uint64_t i = 0; i < len; i++) {
        uint64_t b = tu_rand(&r);
        k[i] = i < 8 ? (uint8_t)('a' + b % 4) : (uint8_t)b;
    }
    return (size_t)len;
}

/* Value lengths: small, medium, overflow, and the edges. */
static size_t gen_val(uint64_t *rng, uint8_t *v)
{
    static const size_t edges[] = {0, 1, PG_INLINE_MAX, PG_INLINE_MAX + 1, OVFL_CAP, OVFL_CAP + 1, CL_MAX_VALUE};
    uint64_t u = tu_range(rng, 100);
    size_t len;
    if (u < 45)
        len = tu_range(rng, 65);
    else if (u < 75)
        len = 65 + tu_range(rng, PG_INLINE_MAX - 64);
    else if (u < 95)
        len = PG_INLINE_MAX + 1 + tu_range(rng, CL_MAX_VALUE - PG_INLINE_MAX);
    else
        len = edges[tu_range(rng, sizeof edges / sizeof edges[0])];
    for (size_t i = 0; i < len; i += 8) {
        uint64_t b = tu_rand(rng);
        memcpy(v + i, &b, len - i < 8 ? len - i : 8);
    }
    return len;
}

struct scan_ctx {
    const struct model *m;
    size_t idx, end, limit, count;
    int err;
};

static int scan_cb(void *arg, const void *k, size_t kl, const void *v, size_t vl)
{
    struct scan_ctx *c = arg;
    if (c->idx >= c->end) {
        c->err = 1; /* more keys than the model */
        return -1;
    }
    const struct ent *e = &c->m->e[c->idx];
    if (e->kl != kl || memcmp(e->k, k, kl) || e->vl != vl || (vl && memcmp(e->v, v, vl))) {
        c->err = 2;
        return -1;
    }
    c->idx++;
    return ++c->count == c->limit ? 1 : 0;
}

/* Scans [lo, hi) (limit entries at most; 0 = all) and compares with the model. */
static void check_scan(struct store *s, const struct model *m, const uint8_t *lo, size_t lolen,
                       const uint8_t *hi, size_t hilen, size_t limit, uint64_t seed)
{
    int eq;
    struct scan_ctx c = {.m = m, .limit = limit};
    c.idx = lo ? model_lower(m, lo, lolen, &eq) : 0;
    c.end = hi ? model_lower(m, hi, hilen, &eq) : m->n;
    if (c.end < c.idx)
        c.end = c.idx;
    size_t start = c.idx;
    int rc = store_scan(s, lo, lolen, hi, hilen, scan_cb, &c);
    ck_assert_msg(c.err == 0, "seed %llu: scan mismatch %d at entry %zu", (unsigned long long)seed, c.err, c.idx);
    if (rc == 1)
        ck_assert_msg(c.count == limit, "seed %llu: scan stopped early", (unsigned long long)seed);
    else
        ck_assert_msg(rc == 0 && c.idx == c.end, "seed %llu: scan rc %d saw %zu of %zu", (unsigned long long)seed,
                      rc, c.idx - start, c.end - start);
}

static void check_get(struct store *s, const struct model *m, const uint8_t *k, size_t kl, uint64_t seed)
{
    static uint8_t buf[CL_MAX_VALUE];
    size_t vl = 0;
    int eq;
    size_t i = model_lower(m, k, kl, &eq);
    int rc = store_get(s, k, kl, buf, sizeof buf, &vl);
    if (!eq) {
        ck_assert_msg(rc == CL_ENOTFOUND, "seed %llu: get of an absent key: %d", (unsigned long long)seed, rc);
        return;
    }
    ck_assert_msg(rc == 0, "seed %llu: get: %d", (unsigned long long)seed, rc);
    ck_assert_msg(vl == m->e[i].vl && (vl == 0 || memcmp(buf, m->e[i].v, vl) == 0),
                  "seed %llu: get returned a wrong value (%zu bytes, want %u)", (unsigned long long)seed, vl,
                  m->e[i].vl);
}

/* Everything: a full scan, every key, the entry count. */
static void check_all(struct store *s, const struct model *m, uint64_t seed)
{
    struct store_stats st;
    check_scan(s, m, NULL, 0, NULL, 0, 0, seed);
    for (size_t i = 0; i < m->n; i++)
        check_get(s, m, m->e[i].k, m->e[i].kl, seed);
    store_get_stats(s, &st);
    ck_assert_msg(st.nentries == m->n, "seed %llu: %llu entries, model has %zu", (unsigned long long)seed,
                  (unsigned long long)st.nentries, m->n);
}

static void check_verify(struct store *s, uint64_t seed)
{
    uint64_t pages = 0;
    int rc = store_verify(s, &pages);
    ck_assert_msg(rc == 0, "seed %llu: verify %d, bad page %llu", (unsigned long long)seed, rc,
                  (unsigned long long)store_bad_page(s));
}

/* Applies n random puts/deletes over nkeys key ids to store and model, in batches of 1..4. */
static void random_writes(struct store *s, struct model *m, uint64_t *rng, uint64_t nkeys, size_t n,
                          uint64_t *lsn, uint64_t seed)
{
    static uint8_t keys[4][CL_MAX_KEY], vals[4][CL_MAX_VALUE];
    for (size_t done = 0; done < n;) {
        struct store_op ops[4];
        size_t b = 1 + tu_range(rng, 4);
        for (size_t j = 0; j < b; j++) {
            size_t kl = gen_key(tu_range(rng, nkeys), keys[j]);
            int del = tu_range(rng, 3) == 0;
            size_t vl = del ? 0 : gen_val(rng, vals[j]);
            ops[j] = (struct store_op){.del = del, .key = keys[j], .klen = (uint32_t)kl, .val = vals[j],
                                       .vlen = (uint32_t)vl};
        }
        int rc = store_apply(s, ops, b, ++*lsn);
        ck_assert_msg(rc == 0, "seed %llu: apply %d", (unsigned long long)seed, rc);
        for (size_t j = 0; j < b; j++) {
            if (ops[j].del)
                model_del(m, ops[j].key, ops[j].klen);
            else
                model_put(m, ops[j].key, ops[j].klen, ops[j].val, ops[j].vlen);
        }
        done += b;
    }
}

static void reopen(struct store **s, const char *dir, uint64_t cache_pages)
{
    store_close(*s);
    *s = open_store(dir, cache_pages, 0, NULL);
}

/* ---- (1) random operations against the model ----------------------------------------------- */

START_TEST(test_random_model)
{
    uint64_t seed = tu_seed(0xB7EE), rng = seed, lsn = 0, nkeys = 6000;
    uint64_t nops = tu_iterations(100000);
    static uint8_t k[CL_MAX_KEY], v[CL_MAX_VALUE], k2[CL_MAX_KEY];
    char *dir = tu_mkdtemp("btree-model");
    struct model m = {0};
    struct store *s = open_store(dir, 64, 0, NULL);
    struct store_stats st;
    size_t bytes = 0;

    for (uint64_t op = 0; op < nops; op++) {
        uint64_t u = tu_range(&rng, 100);
        if (u < 45) {
            size_t kl = gen_key(tu_range(&rng, nkeys), k), vl = gen_val(&rng, v);
            ck_assert_msg(put1(s, k, kl, v, vl, ++lsn) == 0, "seed %llu: put", (unsigned long long)seed);
            model_put(&m, k, kl, v, vl);
        } else if (u < 65) {
            size_t kl = gen_key(tu_range(&rng, nkeys), k);
            ck_assert_msg(del1(s, k, kl, ++lsn) == 0, "seed %llu: del", (unsigned long long)seed);
            model_del(&m, k, kl);
        } else if (u < 75) {
            random_writes(s, &m, &rng, nkeys, 4, &lsn, seed);
        } else if (u < 93) {
            size_t kl = gen_key(tu_range(&rng, nkeys), k);
            check_get(s, &m, k, kl, seed);
        } else {
            size_t kl = gen_key(tu_range(&rng, nkeys), k), kl2 = gen_key(tu_range(&rng, nkeys), k2);
            int unbounded = (int)tu_range(&rng, 8);
            check_scan(s, &m, unbounded == 0 ? NULL : k, kl, unbounded == 1 ? NULL : k2, kl2,
                       1 + tu_range(&rng, 60), seed);
        }
        if (op % 3000 == 2999) {
            checkpoint(s, lsn);
            if (op % 30000 == 29999)
                check_verify(s, seed);
        }
    }
    for (size_t i = 0; i < m.n; i++)
        bytes += m.e[i].kl + m.e[i].vl;
    store_get_stats(s, &st);
    ck_assert_uint_ge(st.evictions, 1);
    if (nops >= 100000)
        ck_assert_msg(bytes >= 4 * st.cache_pages * STORE_PAGE_SIZE, "data %zu bytes: too small", bytes);
    check_all(s, &m, seed);
    checkpoint(s, lsn);
    reopen(&s, dir, 64);
    check_verify(s, seed);
    check_all(s, &m, seed);
    store_get_stats(s, &st);
    fprintf(stderr, "random_model: %llu ops, %zu keys, %zu bytes, %llu pages, depth %u\n",
            (unsigned long long)nops, m.n, bytes, (unsigned long long)st.pages, st.depth);
    store_close(s);
    model_free(&m);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ---- (2) splits and merges; freed pages come back after a checkpoint ------------------------- */

static void seq_key(char *k, unsigned i) { snprintf(k, 16, "key%08u", i); }

START_TEST(test_split_merge)
{
    char *dir = tu_mkdtemp("btree-split");
    struct store *s = open_store(dir, 64, 0, NULL);
    struct store_stats st;
    struct model m = {0};
    uint8_t v[100];
    char k[16];
    uint64_t lsn = 0, pages_full;
    const unsigned n = 20000;

    for (unsigned i = 0; i < n; i++) {
        seq_key(k, i);
        memset(v, (int)(i & 0xff), sizeof v);
        ck_assert_int_eq(put1(s, k, strlen(k), v, sizeof v, ++lsn), 0);
        model_put(&m, k, strlen(k), v, sizeof v);
    }
    store_get_stats(s, &st);
    ck_assert_uint_ge(st.depth, 3);
    ck_assert_uint_eq(st.nentries, n);
    checkpoint(s, lsn);
    check_verify(s, 0);
    store_get_stats(s, &st);
    pages_full = st.pages;

    for (unsigned i = 0; i < n; i++) { /* keep one key in a hundred */
        if (i % 100 == 0)
            continue;
        seq_key(k, i);
        ck_assert_int_eq(del1(s, k, strlen(k), ++lsn), 0);
        model_del(&m, k, strlen(k));
    }
    store_get_stats(s, &st);
    ck_assert_uint_le(st.depth, 2);
    ck_assert_uint_eq(st.nentries, n / 100);
    check_all(s, &m, 0);
    checkpoint(s, lsn);
    store_get_stats(s, &st);
    ck_assert_uint_ge(st.free_pages, pages_full / 2);
    check_verify(s, 0);

    /* Filling again reuses the freed pages rather than growing the file. */
    for (unsigned i = 0; i < n; i++) {
        seq_key(k, i);
        memset(v, (int)(i & 0x7f), sizeof v);
        ck_assert_int_eq(put1(s, k, strlen(k), v, sizeof v, ++lsn), 0);
        model_put(&m, k, strlen(k), v, sizeof v);
    }
    store_get_stats(s, &st);
    ck_assert_uint_le(st.pages, pages_full + pages_full / 4);
    checkpoint(s, lsn);
    reopen(&s, dir, 64);
    check_verify(s, 0);
    check_all(s, &m, 0);

    /* Delete everything: the root collapses to an empty tree. */
    for (unsigned i = 0; i < n; i++) {
        seq_key(k, i);
        ck_assert_int_eq(del1(s, k, strlen(k), ++lsn), 0);
    }
    store_get_stats(s, &st);
    ck_assert_uint_eq(st.depth, 0);
    ck_assert_uint_eq(st.nentries, 0);
    checkpoint(s, lsn);
    reopen(&s, dir, 64);
    check_verify(s, 0);
    store_get_stats(s, &st);
    ck_assert_uint_eq(st.free_pages + 2, st.pages);
    store_close(s);
    model_free(&m);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ---- (3) a checkpoint beside a writer ---------------------------------------------------------- */

struct writer_arg {
    struct store *s;
    struct model *m;
    uint64_t rng, lsn, seed;
    size_t nops;
};

static void *writer_main(void *p)
{
    struct writer_arg *a = p;
    random_writes(a->s, a->m, &a->rng, 4000, a->nops, &a->lsn, a->seed);
    return NULL;
}

START_TEST(test_checkpoint_concurrent)
{
    uint64_t seed = tu_seed(0xC0C0), rng = seed, lsn = 0;
    char *dir = tu_mkdtemp("btree-ckpt");
    struct store *s = open_store(dir, 32, 0, NULL);
    struct model m = {0}, snap;
    struct store_meta meta;

    for (int round = 0; round < 4; round++) {
        random_writes(s, &m, &rng, 4000, 3000, &lsn, seed);
        checkpoint(s, lsn);
        random_writes(s, &m, &rng, 4000, 1000, &lsn, seed);

        struct store_ckpt *c = NULL;
        uint64_t ck_lsn = lsn;
        ck_assert_int_eq(store_checkpoint_begin(s, ck_lsn, 9, &c), 0);
        snap = model_clone(&m);
        struct writer_arg wa = {.s = s, .m = &m, .rng = rng, .lsn = lsn, .seed = seed, .nops = 3000};
        pthread_t t;
        ck_assert_int_eq(pthread_create(&t, NULL, writer_main, &wa), 0);
        ck_assert_int_eq(store_checkpoint_finish(s, c), 0);
        pthread_join(t, NULL);
        rng = wa.rng;
        lsn = wa.lsn;
        check_all(s, &m, seed);

        /* Reopen without another checkpoint: exactly the state at begin. */
        reopen(&s, dir, 32);
        store_get_meta(s, &meta);
        ck_assert_uint_eq(meta.checkpoint_lsn, ck_lsn);
        ck_assert_uint_eq(meta.wal_segno, 9);
        check_verify(s, seed);
        check_all(s, &snap, seed);
        model_free(&m);
        m = snap;
    }
    store_close(s);
    model_free(&m);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ---- (4) shadow paging: evicted pages never touch the durable snapshot ------------------------ */

START_TEST(test_crash_keeps_checkpoint)
{
    uint64_t seed = tu_seed(0x5AFE), lsn = 0;
    uint64_t iters = tu_iterations(6);
    char *dir = tu_mkdtemp("btree-crash");
    struct model m = {0};
    struct store_stats st0, st1;

    for (uint64_t it = 0; it < iters; it++) {
        uint64_t rng = seed + it;
        struct store *s = open_store(dir, 16, 0, NULL);
        check_all(s, &m, seed + it);
        random_writes(s, &m, &rng, 3000, 2000, &lsn, seed + it);
        checkpoint(s, lsn);
        struct model snap = model_clone(&m);

        /* More changes, written out by eviction but never checkpointed. */
        store_get_stats(s, &st0);
        random_writes(s, &m, &rng, 3000, 3000, &lsn, seed + it);
        if (it % 2) { /* and a checkpoint begun but never finished */
            struct store_ckpt *c = NULL;
            ck_assert_int_eq(store_checkpoint_begin(s, lsn, 0, &c), 0);
            random_writes(s, &m, &rng, 3000, 500, &lsn, seed + it);
            store_checkpoint_abandon(s, c);
        }
        store_get_stats(s, &st1);
        ck_assert_uint_gt(st1.page_writes, st0.page_writes);
        store_close(s);

        s = open_store(dir, 16, 0, NULL);
        check_verify(s, seed + it);
        check_all(s, &snap, seed + it);
        store_close(s);
        model_free(&m);
        m = snap;
    }
    model_free(&m);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* Power loss during a checkpoint (fault layer: each unsynced write kept, dropped or torn): the
 * reopened store is exactly the previous checkpoint or the new one, and verifies. */
START_TEST(test_power_loss_in_checkpoint)
{
    uint64_t seed = tu_seed(0xF417), iters = tu_iterations(40), lsn = 0, kept = 0, lost = 0;
    char *dir = tu_mkdtemp("btree-power");
    struct model m = {0};

    for (uint64_t it = 0; it < iters; it++) {
        uint64_t rng = seed + it;
        struct vfs *fv = vfs_fault_new(vfs_posix());
        struct store_config c = {.vfs = fv, .dir = dir, .cache_size = 16 * STORE_PAGE_SIZE, .create = 1,
                                 .wal_segment_size = 1u << 20};
        struct store *s = NULL;
        struct store_ckpt *ck = NULL;
        struct store_meta meta;
        int created;

        ck_assert_ptr_nonnull(fv);
        ck_assert_int_eq(store_open(&c, &s, &created), 0);
        store_get_meta(s, &meta);
        random_writes(s, &m, &rng, 2000, 400, &lsn, seed + it);
        ck_assert_int_eq(store_checkpoint_begin(s, lsn, 0, &ck), 0);
        struct model before = model_clone(&m);
        random_writes(s, &m, &rng, 2000, 400, &lsn, seed + it);
        ck_assert_int_eq(store_checkpoint_finish(s, ck), 0);
        store_get_meta(s, &meta);
        ck = NULL;
        ck_assert_int_eq(store_checkpoint_begin(s, lsn, 0, &ck), 0);
        struct model after = model_clone(&m);
        random_writes(s, &m, &rng, 2000, 200, &lsn, seed + it); /* beside it, never checkpointed */
        vfs_fault_crash_at(fv, 1 + tu_range(&rng, 30), (enum vfs_crash_model)(it % 3), seed + it);
        int rc = store_checkpoint_finish(s, ck);
        if (!vfs_fault_crashed(fv))
            ck_assert_int_eq(vfs_fault_crash(fv, (enum vfs_crash_model)(it % 3), seed + it), 0);
        if (rc)
            ck_assert_int_ne(store_broken(s), 0);
        store_close(s);
        vfs_destroy(fv);

        s = open_store(dir, 16, 0, NULL);
        check_verify(s, seed + it);
        struct store_meta now;
        store_get_meta(s, &now);
        ck_assert_msg(rc != 0 || now.generation == meta.generation + 1, "seed %llu: finished but lost",
                      (unsigned long long)(seed + it));
        ck_assert_uint_le(now.generation, meta.generation + 1);
        ck_assert_uint_ge(now.generation, meta.generation);
        model_free(&m);
        if (now.generation == meta.generation + 1) {
            kept++;
            m = after;
            model_free(&before);
        } else {
            lost++;
            m = before; /* the state of the previous checkpoint */
            model_free(&after);
        }
        check_all(s, &m, seed + it);
        checkpoint(s, lsn); /* a clean base for the next round */
        store_close(s);
    }
    if (iters >= 20) /* crashes came both before and after the meta page was durable */
        ck_assert_msg(kept && lost, "seed %llu: %llu kept, %llu lost", (unsigned long long)seed,
                      (unsigned long long)kept, (unsigned long long)lost);
    model_free(&m);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* A failed sync breaks the store for good. */
START_TEST(test_sync_failure_breaks)
{
    char *dir = tu_mkdtemp("btree-syncfail");
    struct vfs *fv = vfs_fault_new(vfs_posix());
    struct store_config c = {.vfs = fv, .dir = dir, .cache_size = 16 * STORE_PAGE_SIZE, .create = 1};
    struct store *s = NULL;
    struct store_ckpt *ck = NULL;
    int created;

    ck_assert_int_eq(store_open(&c, &s, &created), 0);
    ck_assert_int_eq(put1(s, "a", 1, "b", 1, 1), 0);
    vfs_fault_fail_sync(fv, 1, -EIO);
    ck_assert_int_eq(store_checkpoint_begin(s, 2, 0, &ck), 0);
    ck_assert_int_eq(store_checkpoint_finish(s, ck), -EIO);
    ck_assert_int_ne(store_broken(s), 0);
    ck_assert_int_eq(put1(s, "a", 1, "c", 1, 3), CL_EBROKEN);
    ck_assert_int_eq(store_checkpoint_begin(s, 3, 0, &ck), CL_EBROKEN);
    store_close(s);
    vfs_destroy(fv);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ---- (5) a damaged page ---------------------------------------------------------------------- */

/* Finds, by reading the file independently of the store, the leaf that holds key. */
static uint64_t leaf_of(const char *path, uint64_t root, const char *key)
{
    uint8_t *buf;
    size_t len;
    uint64_t pgno = root;
    ck_assert_int_eq(tu_read_file(path, &buf, &len), 0);
    for (;;) {
        ck_assert_uint_lt(pgno * PG_SIZE, len);
        const uint8_t *p = buf + pgno * PG_SIZE;
        if (pg_type(p) == PG_LEAF)
            break;
        ck_assert_uint_eq(pg_type(p), PG_BRANCH);
        unsigned i = 0, n = pg_nkeys(p);
        while (i < n) {
            const uint8_t *c = p + pg_slot(p, i);
            if (store_key_cmp(c + BRANCH_CELL_HDR, get_le16(c), key, strlen(key)) > 0)
                break;
            i++;
        }
        pgno = i == 0 ? get_le64(p + NODE_OFF_LINK) : get_le64(p + pg_slot(p, i - 1) + 2);
    }
    free(buf);
    return pgno;
}

START_TEST(test_corrupt_leaf)
{
    char *dir = tu_mkdtemp("btree-corrupt"), path[512];
    struct store *s = open_store(dir, 64, 0, NULL);
    struct store_meta meta;
    uint8_t v[64], buf[64];
    char k[16];
    size_t vl;
    uint64_t pages = 0;
    int rc;

    for (unsigned i = 0; i < 3000; i++) {
        seq_key(k, i);
        memset(v, 'v', sizeof v);
        ck_assert_int_eq(put1(s, k, strlen(k), v, sizeof v, i + 1), 0);
    }
    checkpoint(s, 3001);
    store_get_meta(s, &meta);
    store_close(s);
    snprintf(path, sizeof path, "%s/%s", dir, STORE_FILE);
    uint64_t leaf = leaf_of(path, meta.root, "key00001500");
    ck_assert_uint_ne(leaf, meta.root);
    ck_assert_int_eq(tu_flip_byte(path, leaf * PG_SIZE + 2000), 0);

    /* Read-only (inspect) and read-write opens both succeed; verify and reads name the page. */
    for (int ro = 1; ro >= 0; ro--) {
        s = open_store(dir, 64, ro, NULL);
        ck_assert_int_eq(store_verify(s, &pages), CL_ECORRUPT);
        ck_assert_uint_eq(store_bad_page(s), leaf);
        ck_assert_int_eq(store_get(s, "key00001500", 11, buf, sizeof buf, &vl), CL_ECORRUPT);
        ck_assert_uint_eq(store_bad_page(s), leaf);
        ck_assert_int_eq(store_get(s, "key00000001", 11, buf, sizeof buf, &vl), 0);
        ck_assert_int_eq(put1(s, "x", 1, "y", 1, 5000), ro ? CL_EREADONLY : CL_ECORRUPT);
        store_close(s);
    }

    /* A torn current meta: the older one takes over; both bad: the file is refused. */
    s = open_store(dir, 64, 0, &rc);
    ck_assert_ptr_nonnull(s);
    store_close(s);
    ck_assert_int_eq(tu_flip_byte(path, (meta.generation % 2) * PG_SIZE + 100), 0);
    s = open_store(dir, 64, 1, NULL);
    struct store_meta older;
    store_get_meta(s, &older);
    ck_assert_uint_eq(older.generation, meta.generation - 1);
    store_close(s);
    ck_assert_int_eq(tu_flip_byte(path, ((meta.generation + 1) % 2) * PG_SIZE + 100), 0);
    s = open_store(dir, 64, 1, &rc);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(rc, CL_ECORRUPT);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ---- (6) size limits --------------------------------------------------------------------------- */

START_TEST(test_too_big)
{
    char *dir = tu_mkdtemp("btree-big");
    struct store *s = open_store(dir, 16, 0, NULL);
    static uint8_t k[CL_MAX_KEY + 1], v[CL_MAX_VALUE + 1], buf[CL_MAX_VALUE];
    size_t vl = 0;

    memset(k, 'k', sizeof k);
    memset(v, 'v', sizeof v);
    ck_assert_int_eq(put1(s, k, CL_MAX_KEY + 1, v, 1, 1), CL_ETOOBIG);
    ck_assert_int_eq(put1(s, k, 1, v, CL_MAX_VALUE + 1, 1), CL_ETOOBIG);
    ck_assert_int_eq(put1(s, k, 0, v, 1, 1), CL_EINVAL);
    ck_assert_int_eq(store_get(s, k, CL_MAX_KEY + 1, buf, sizeof buf, &vl), CL_ETOOBIG);
    /* a batch with one bad op applies nothing */
    struct store_op ops[2] = {{.key = k, .klen = 3, .val = v, .vlen = 3},
                              {.key = k, .klen = 4, .val = v, .vlen = CL_MAX_VALUE + 1}};
    ck_assert_int_eq(store_apply(s, ops, 2, 1), CL_ETOOBIG);
    ck_assert_int_eq(store_get(s, k, 3, buf, sizeof buf, &vl), CL_ENOTFOUND);
    /* the limits themselves fit */
    ck_assert_int_eq(put1(s, k, CL_MAX_KEY, v, CL_MAX_VALUE, 2), 0);
    ck_assert_int_eq(store_get(s, k, CL_MAX_KEY, buf, sizeof buf, &vl), 0);
    ck_assert_uint_eq(vl, CL_MAX_VALUE);
    ck_assert_int_eq(memcmp(buf, v, vl), 0);
    ck_assert_int_eq(store_get(s, k, CL_MAX_KEY, buf, 10, &vl), 0); /* a short buffer: the length still */
    ck_assert_uint_eq(vl, CL_MAX_VALUE);
    ck_assert_int_eq(store_broken(s), 0);
    store_close(s);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ---- (7) readers beside a writer and a checkpointer -------------------------------------------- */

#define GROUP 16

struct rw_shared {
    struct store *s;
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct store_ckpt *ck; /* handed from the writer to the checkpointer */
    int done;
    uint64_t reads, bad;
};

struct group_ctx {
    uint64_t round;
    int n, bad;
};

static int group_cb(void *arg, const void *k, size_t kl, const void *v, size_t vl)
{
    struct group_ctx *g = arg;
    uint64_t r;
    (void)k;
    (void)kl;
    if (vl < 8) {
        g->bad = 1;
        return -1;
    }
    memcpy(&r, v, 8);
    if (g->n == 0)
        g->round = r;
    else if (r != g->round)
        g->bad = 1; /* a half-applied batch */
    g->n++;
    return 0;
}

static void *reader_main(void *p)
{
    struct rw_shared *sh = p;
    uint8_t buf[CL_MAX_VALUE];
    size_t vl;
    uint64_t reads = 0, bad = 0;
    while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
        struct group_ctx g = {0};
        int rc = store_scan(sh->s, "g", 1, "h", 1, group_cb, &g);
        if (rc || g.bad || (g.n != 0 && g.n != GROUP))
            bad++;
        rc = store_get(sh->s, "g07", 3, buf, sizeof buf, &vl);
        if (rc != 0 && rc != CL_ENOTFOUND)
            bad++;
        char k[16];
        snprintf(k, sizeof k, "z%05u", (unsigned)(reads % 3000));
        rc = store_get(sh->s, k, strlen(k), buf, sizeof buf, &vl);
        if (rc != 0 && rc != CL_ENOTFOUND)
            bad++;
        reads++;
    }
    __atomic_add_fetch(&sh->reads, reads, __ATOMIC_RELAXED);
    __atomic_add_fetch(&sh->bad, bad, __ATOMIC_RELAXED);
    return NULL;
}

static void *checkpointer_main(void *p)
{
    struct rw_shared *sh = p;
    pthread_mutex_lock(&sh->mu);
    for (;;) {
        while (!sh->ck && !sh->done)
            pthread_cond_wait(&sh->cond, &sh->mu);
        if (!sh->ck)
            break;
        struct store_ckpt *c = sh->ck;
        sh->ck = NULL;
        pthread_mutex_unlock(&sh->mu);
        if (store_checkpoint_finish(sh->s, c))
            __atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
        pthread_mutex_lock(&sh->mu);
    }
    pthread_mutex_unlock(&sh->mu);
    return NULL;
}

START_TEST(test_readers_writer)
{
    uint64_t seed = tu_seed(0x4EAD), rng = seed, rounds = tu_iterations(1500);
    char *dir = tu_mkdtemp("btree-rw");
    struct rw_shared sh = {.s = open_store(dir, 32, 0, NULL)};
    pthread_t readers[4], ckpt;
    static uint8_t v[GROUP][CL_MAX_VALUE], zv[4][CL_MAX_VALUE];
    char gk[GROUP][8], zk[4][16];

    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cond, NULL);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&readers[i], NULL, reader_main, &sh), 0);
    ck_assert_int_eq(pthread_create(&ckpt, NULL, checkpointer_main, &sh), 0);
    for (uint64_t r = 1; r <= rounds; r++) {
        struct store_op ops[GROUP + 4];
        for (int i = 0; i < GROUP; i++) { /* the group: all its keys carry the round */
            snprintf(gk[i], sizeof gk[i], "g%02d", i);
            size_t vl = 8 + tu_range(&rng, 3) * 1500;
            memset(v[i], (int)r, vl);
            memcpy(v[i], &r, 8);
            ops[i] = (struct store_op){.key = gk[i], .klen = 3, .val = v[i], .vlen = (uint32_t)vl};
        }
        for (int i = 0; i < 4; i++) { /* churn elsewhere in the tree */
            snprintf(zk[i], sizeof zk[i], "z%05u", (unsigned)tu_range(&rng, 3000));
            size_t vl = tu_range(&rng, 1200);
            memset(zv[i], 'z', vl);
            ops[GROUP + i] = (struct store_op){.del = tu_range(&rng, 4) == 0, .key = zk[i],
                                               .klen = (uint32_t)strlen(zk[i]), .val = zv[i],
                                               .vlen = (uint32_t)vl};
        }
        ck_assert_int_eq(store_apply(sh.s, ops, GROUP + 4, r), 0);
        if (r % 100 == 0) {
            struct store_ckpt *c = NULL;
            ck_assert_int_eq(store_checkpoint_begin(sh.s, r, 0, &c), 0);
            pthread_mutex_lock(&sh.mu);
            sh.ck = c;
            pthread_cond_signal(&sh.cond);
            pthread_mutex_unlock(&sh.mu);
        }
    }
    __atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 4; i++)
        pthread_join(readers[i], NULL);
    pthread_mutex_lock(&sh.mu);
    sh.done = 1;
    pthread_cond_signal(&sh.cond);
    pthread_mutex_unlock(&sh.mu);
    pthread_join(ckpt, NULL);
    ck_assert_msg(sh.bad == 0, "seed %llu: %llu bad reads of %llu", (unsigned long long)seed,
                  (unsigned long long)sh.bad, (unsigned long long)sh.reads);
    ck_assert_uint_gt(sh.reads, 0);
    checkpoint(sh.s, rounds + 1);
    check_verify(sh.s, seed);
    store_close(sh.s);
    pthread_mutex_destroy(&sh.mu);
    pthread_cond_destroy(&sh.cond);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

/* ---- (8) changes made in place in a leaf -------------------------------------------------------- */

/* A value of length vl for round r: its bytes say which round wrote it. */
static size_t fill_val(uint8_t *v, size_t vl, uint64_t r)
{
    for (size_t i = 0; i < vl; i++)
        v[i] = (uint8_t)(r * 31 + i);
    return vl;
}

/* Lengths that move a cell around its leaf: shorter, longer, the same, inline <-> overflow. */
static size_t pick_len(uint64_t *rng)
{
    uint64_t u = tu_range(rng, 10);
    if (u < 6)
        return tu_range(rng, 301);
    if (u < 8)
        return 100;
    return PG_INLINE_MAX + 1 + tu_range(rng, 3000);
}

static void put_model(struct store *s, struct model *m, const char *k, const uint8_t *v, size_t vl,
                      uint64_t *lsn, uint64_t seed)
{
    ck_assert_msg(put1(s, k, strlen(k), v, vl, ++*lsn) == 0, "seed %llu: put %s", (unsigned long long)seed, k);
    model_put(m, k, strlen(k), v, vl);
}

static void del_model(struct store *s, struct model *m, const char *k, uint64_t *lsn, uint64_t seed)
{
    ck_assert_msg(del1(s, k, strlen(k), ++*lsn) == 0, "seed %llu: del %s", (unsigned long long)seed, k);
    model_del(m, k, strlen(k));
}

/* Same-size and different-size replaces, inserts, overflow values in and out, deletes down to
 * merges and to an empty tree -- in a root leaf and in a deep tree, with checkpoints between (so
 * paths of older epochs are copied before a change) and a 16-page cache (so changed pages are
 * evicted and read back), checked against the model and verified after reopening. */
START_TEST(test_in_place)
{
    uint64_t seed = tu_seed(0x1A9C), rng = seed, lsn = 0, ops = tu_iterations(20000);
    char *dir = tu_mkdtemp("btree-inplace");
    struct store *s = open_store(dir, 16, 0, NULL);
    struct store_stats st, st2;
    struct model m = {0};
    static uint8_t v[CL_MAX_VALUE];
    char k[16];
    const unsigned n = 4000;

    /* A root leaf alone: fill it, rewrite every value at new lengths, empty it, twice. */
    for (int round = 0; round < 2; round++) {
        for (unsigned i = 0; i < 20; i++) {
            seq_key(k, i);
            put_model(s, &m, k, v, fill_val(v, 50, i), &lsn, seed);
        }
        store_get_stats(s, &st);
        ck_assert_uint_eq(st.depth, 1);
        for (unsigned r = 0; r < 400; r++) {
            seq_key(k, (unsigned)tu_range(&rng, 20));
            put_model(s, &m, k, v, fill_val(v, tu_range(&rng, 140), r), &lsn, seed);
        }
        check_all(s, &m, seed);
        if (round == 0)
            checkpoint(s, lsn); /* the second round starts from a frozen root */
        for (unsigned i = 0; i < 20; i++) {
            seq_key(k, i);
            del_model(s, &m, k, &lsn, seed);
        }
        store_get_stats(s, &st);
        ck_assert_uint_eq(st.depth, 0);
        ck_assert_uint_eq(st.nentries, 0);
        check_all(s, &m, seed);
    }

    /* A deep tree. */
    for (unsigned i = 0; i < n; i++) {
        seq_key(k, i);
        put_model(s, &m, k, v, fill_val(v, 100, i), &lsn, seed);
    }
    store_get_stats(s, &st);
    ck_assert_uint_ge(st.depth, 3);
    checkpoint(s, lsn);

    /* After the first change has copied the path, same-size replaces in that leaf allocate no page
     * and leave everything else as it was. */
    seq_key(k, n / 2);
    put_model(s, &m, k, v, fill_val(v, 100, 1), &lsn, seed);
    store_get_stats(s, &st);
    for (unsigned r = 2; r < 1000; r++) {
        seq_key(k, n / 2 + (r % 3)); /* neighbours: the same leaf, bar a rare boundary */
        put_model(s, &m, k, v, fill_val(v, 100, r), &lsn, seed);
    }
    store_get_stats(s, &st2);
    ck_assert_uint_le(st2.pages, st.pages + st.depth);
    ck_assert_uint_le(st2.pages - st2.free_pages, st.pages - st.free_pages + st.depth);
    check_all(s, &m, seed);

    /* Replaces at random lengths, a few inserts and deletes, checkpoints now and then. */
    for (uint64_t op = 0; op < ops; op++) {
        unsigned id = (unsigned)tu_range(&rng, n + n / 8);
        seq_key(k, id);
        if (tu_range(&rng, 10) == 0)
            del_model(s, &m, k, &lsn, seed);
        else
            put_model(s, &m, k, v, fill_val(v, pick_len(&rng), op), &lsn, seed);
        if (op % 16 == 0) {
            int eq;
            size_t i = model_lower(&m, k, strlen(k), &eq);
            if (i < m.n)
                check_get(s, &m, m.e[i].k, m.e[i].kl, seed);
            check_get(s, &m, (const uint8_t *)k, strlen(k), seed);
        }
        if (op % 2500 == 2499)
            checkpoint(s, lsn);
    }
    check_all(s, &m, seed);
    checkpoint(s, lsn);
    reopen(&s, dir, 16);
    check_verify(s, seed);
    check_all(s, &m, seed);

    /* Deletes in random order until leaves merge and the tree shrinks, then everything. */
    store_get_stats(s, &st);
    unsigned *order = malloc((n + n / 8) * sizeof *order);
    ck_assert_ptr_nonnull(order);
    for (unsigned i = 0; i < n + n / 8; i++)
        order[i] = i;
    for (unsigned i = n + n / 8; i > 1; i--) {
        unsigned j = (unsigned)tu_range(&rng, i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < n + n / 8; i++) {
        seq_key(k, order[i]);
        del_model(s, &m, k, &lsn, seed);
        if (i == n - n / 10) {
            store_get_stats(s, &st2);
            ck_assert_uint_lt(st2.depth, st.depth);
            check_all(s, &m, seed);
            checkpoint(s, lsn);
            reopen(&s, dir, 16);
            check_verify(s, seed);
            check_all(s, &m, seed);
        }
    }
    free(order);
    store_get_stats(s, &st);
    ck_assert_uint_eq(st.depth, 0);
    ck_assert_uint_eq(st.nentries, 0);
    ck_assert_uint_eq(m.n, 0);
    checkpoint(s, lsn);
    reopen(&s, dir, 16);
    check_verify(s, seed);
    store_get_stats(s, &st);
    ck_assert_uint_eq(st.free_pages + 2, st.pages);
    store_close(s);
    model_free(&m);
    tu_rmdir(dir);
    free(dir);
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *t)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, t);
    suite_add_tcase(s, tc);
}

int main(void)
{
    Suite *s = suite_create("btree");
    add_case(s, "too_big", test_too_big);
    add_case(s, "split_merge", test_split_merge);
    add_case(s, "corrupt_leaf", test_corrupt_leaf);
    add_case(s, "crash", test_crash_keeps_checkpoint);
    add_case(s, "power_loss", test_power_loss_in_checkpoint);
    add_case(s, "sync_failure", test_sync_failure_breaks);
    add_case(s, "checkpoint_concurrent", test_checkpoint_concurrent);
    add_case(s, "readers_writer", test_readers_writer);
    add_case(s, "random_model", test_random_model);
    add_case(s, "in_place", test_in_place);
    return tu_run_suite(s);
}
