/*
 * applog.c -- an engine plugin for `commitlab bench` and `commitlab crash`
 * (docs/plugins.md): an append-only log store.  Every transaction is one
 * record at the end of DIR/applog.log -- its puts and deletes, a length
 * and a CRC -- written with one pwrite and made durable with one
 * fdatasync (--sync commit; --sync none writes without it).  The index is
 * a hash table in memory, rebuilt at open by reading the log from the
 * start; a torn last record (short, or a bad CRC) is cut off there.
 * Write transactions hold the store's lock from begin to commit, so a
 * read-modify-write transaction loses no update (tpcb runs).
 *
 * Built against the installed header only:
 *     cc -shared -fPIC applog.c $(pkg-config --cflags commitlab) -o libapplog.so
 *     commitlab bench --engine plugin:./libapplog.so --txns 1000
 *
 * -DAPPLOG_EARLY_ACK builds a broken variant, applog_early: its commit
 * returns before its record is written (records wait in memory until 16
 * have gathered), so a killed process loses acknowledged commits, and
 * `commitlab crash --mode kill` reports it FAILED.
 */
#include <commitlab_engine.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

struct ent {
    struct ent *next;
    size_t kl, vl;
    unsigned char *k, *v; /* one allocation: the key, then the value */
};

struct store {
    int fd, sync;
    off_t end;                       /* where the next record goes */
    pthread_rwlock_t lock;           /* a write transaction holds it exclusively */
    struct ent **b;                  /* the index: a chained hash table */
    size_t nb, n;
    unsigned char *pending;          /* APPLOG_EARLY_ACK: records not yet written */
    size_t npending, kept;
    int64_t commits, syncs, bytes;   /* under lock */
};

struct txn {
    unsigned char *rec;              /* the record being built: 12-byte header, then ops */
    size_t len, cap;
    int rdonly;
};

static uint32_t crc32(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int i = 0; i < 8; i++)
            c = (c >> 1) ^ (0xedb88320u & -(c & 1));
    }
    return ~c;
}

static size_t hash(const void *k, size_t kl, size_t nb)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < kl; i++)
        h = (h ^ ((const unsigned char *)k)[i]) * 1099511628211ull;
    return (size_t)(h & (nb - 1));
}

static struct ent **slot(struct store *s, const void *k, size_t kl)
{
    struct ent **e = &s->b[hash(k, kl, s->nb)];
    while (*e && ((*e)->kl != kl || memcmp((*e)->k, k, kl)))
        e = &(*e)->next;
    return e;
}

/* Applies one op to the index: vl == SIZE_MAX deletes. */
static int apply(struct store *s, const unsigned char *k, size_t kl, const unsigned char *v, size_t vl)
{
    struct ent **e = slot(s, k, kl), *old = *e;
    if (old) {
        *e = old->next;
        free(old);
        s->n--;
    }
    if (vl == SIZE_MAX)
        return 0;
    if (s->n >= 2 * s->nb) { /* grow: rehash into twice the buckets */
        size_t nb = s->nb * 2;
        struct ent **b = calloc(nb, sizeof *b);
        if (!b)
            return -1;
        for (size_t i = 0; i < s->nb; i++)
            for (struct ent *x = s->b[i], *next; x; x = next) {
                next = x->next;
                x->next = b[hash(x->k, x->kl, nb)];
                b[hash(x->k, x->kl, nb)] = x;
            }
        free(s->b);
        s->b = b;
        s->nb = nb;
        e = slot(s, k, kl);
    }
    struct ent *n = malloc(sizeof *n + kl + vl);
    if (!n)
        return -1;
    n->k = (unsigned char *)(n + 1);
    n->v = n->k + kl;
    n->kl = kl;
    n->vl = vl;
    memcpy(n->k, k, kl);
    memcpy(n->v, v, vl);
    n->next = *e;
    *e = n;
    s->n++;
    return 0;
}

/* Applies a record's ops (after its 12-byte header); -1 when malformed. */
static int apply_record(struct store *s, const unsigned char *r, size_t len)
{
    for (size_t o = 12; o < len;) {
        uint32_t kl, vl;
        if (len - o < 9)
            return -1;
        memcpy(&kl, r + o + 1, 4);
        memcpy(&vl, r + o + 5, 4);
        size_t body = (size_t)kl + (r[o] == 1 ? vl : 0);
        if (len - o - 9 < body)
            return -1;
        if (apply(s, r + o + 9, kl, r + o + 9 + kl, r[o] == 1 ? vl : SIZE_MAX))
            return -1;
        o += 9 + body;
    }
    return 0;
}

/* Reads the log from the start into the index; cuts a torn tail off. */
static int replay(struct store *s, char *err)
{
    struct stat st;
    if (fstat(s->fd, &st))
        return CL_ENGINE_ERRF(err, "fstat: %s", strerror(errno)), -1;
    unsigned char *log = malloc((size_t)st.st_size + 1);
    if (!log || pread(s->fd, log, (size_t)st.st_size, 0) != st.st_size)
        return free(log), CL_ENGINE_ERRF(err, "read applog.log: %s", strerror(errno)), -1;
    off_t o = 0;
    while (st.st_size - o >= 12) {
        uint32_t magic, len, crc;
        memcpy(&magic, log + o, 4);
        memcpy(&len, log + o + 4, 4);
        memcpy(&crc, log + o + 8, 4);
        if (magic != 0x474f4c41u || len < 12 || len > st.st_size - o || crc != crc32(log + o + 12, len - 12))
            break; /* a record the crash tore: nothing after it was acknowledged */
        if (apply_record(s, log + o, len))
            return free(log), CL_ENGINE_ERRF(err, "applog.log: a malformed record at %lld", (long long)o), -1;
        o += len;
    }
    free(log);
    s->end = o;
    if (o < st.st_size && (ftruncate(s->fd, o) || fsync(s->fd)))
        return CL_ENGINE_ERRF(err, "cut applog.log at %lld: %s", (long long)o, strerror(errno)), -1;
    return 0;
}

static void store_close(struct cl_engine_db *db);

static int store_open(struct cl_engine_db *db)
{
    char path[4200];
    struct store *s = calloc(1, sizeof *s);
    if (!s)
        return CL_ENGINE_ERRF(db->err, "out of memory"), CL_ENGINE_ERR;
    s->sync = cl_engine_is(db->cfg, "sync", "commit");
    s->nb = 1024;
    s->b = calloc(s->nb, sizeof *s->b);
    pthread_rwlock_init(&s->lock, NULL);
    snprintf(path, sizeof path, "%s/applog.log", db->path);
    s->fd = open(path, O_RDWR | O_CREAT, 0644);
    if (s->fd < 0)
        CL_ENGINE_ERRF(db->err, "open %.200s: %s", path, strerror(errno));
    db->impl = s;
    if (!s->b || s->fd < 0 || replay(s, db->err)) {
        store_close(db); /* commitlab calls close only after an open that succeeded */
        db->impl = NULL;
        return CL_ENGINE_ERR;
    }
    return CL_ENGINE_OK;
}

/* Writes a record at the end of the log, synced under --sync commit. */
static int append(struct store *s, const unsigned char *rec, size_t len, char *err)
{
    if (pwrite(s->fd, rec, len, s->end) != (ssize_t)len)
        return CL_ENGINE_ERRF(err, "pwrite: %s", strerror(errno)), CL_ENGINE_ERR;
    if (s->sync && fdatasync(s->fd))
        return CL_ENGINE_ERRF(err, "fdatasync: %s", strerror(errno)), CL_ENGINE_ERR;
    s->end += (off_t)len;
    s->syncs += s->sync;
    s->bytes += (int64_t)len;
    return CL_ENGINE_OK;
}

static void store_close(struct cl_engine_db *db)
{
    struct store *s = db->impl;
    if (s->npending) /* the early variant's last records */
        append(s, s->pending, s->npending, db->err);
    for (size_t i = 0; s->b && i < s->nb; i++)
        for (struct ent *x = s->b[i], *next; x; x = next) {
            next = x->next;
            free(x);
        }
    if (s->fd >= 0)
        close(s->fd);
    pthread_rwlock_destroy(&s->lock);
    free(s->pending);
    free(s->b);
    free(s);
}

static int conn_open(struct cl_engine_conn *c)
{
    c->impl = calloc(1, sizeof(struct txn));
    return c->impl ? CL_ENGINE_OK : (CL_ENGINE_ERRF(c->err, "out of memory"), CL_ENGINE_ERR);
}

static void conn_close(struct cl_engine_conn *c)
{
    free(((struct txn *)c->impl)->rec);
    free(c->impl);
}

static int txn_begin(struct cl_engine_conn *c, int rdonly)
{
    struct store *s = c->db->impl;
    struct txn *t = c->impl;
    t->rdonly = rdonly;
    t->len = 12;
    return (rdonly ? pthread_rwlock_rdlock(&s->lock) : pthread_rwlock_wrlock(&s->lock)) ? CL_ENGINE_ERR : CL_ENGINE_OK;
}

static int add_op(struct cl_engine_conn *c, int op, const void *k, size_t kl, const void *v, size_t vl)
{
    struct txn *t = c->impl;
    size_t need = t->len + 9 + kl + vl;
    if (need > t->cap) {
        unsigned char *r = realloc(t->rec, need * 2);
        if (!r)
            return CL_ENGINE_ERRF(c->err, "out of memory"), CL_ENGINE_ERR;
        t->rec = r;
        t->cap = need * 2;
    }
    uint32_t k32 = (uint32_t)kl, v32 = (uint32_t)vl;
    t->rec[t->len] = (unsigned char)op;
    memcpy(t->rec + t->len + 1, &k32, 4);
    memcpy(t->rec + t->len + 5, &v32, 4);
    memcpy(t->rec + t->len + 9, k, kl);
    if (vl)
        memcpy(t->rec + t->len + 9 + kl, v, vl);
    t->len = need;
    return CL_ENGINE_OK;
}

static int txn_put(struct cl_engine_conn *c, const void *k, size_t kl, const void *v, size_t vl)
{
    return add_op(c, 1, k, kl, v, vl);
}

static int txn_del(struct cl_engine_conn *c, const void *k, size_t kl)
{
    return add_op(c, 2, k, kl, NULL, 0);
}

/* The transaction's own last write of k wins; then the index. */
static int txn_get(struct cl_engine_conn *c, const void *k, size_t kl, void *buf, size_t cap, size_t *vl)
{
    struct txn *t = c->impl;
    const unsigned char *found = NULL, *val = NULL;
    size_t len = 0;
    for (size_t o = 12; o < t->len;) {
        uint32_t k32, v32;
        memcpy(&k32, t->rec + o + 1, 4);
        memcpy(&v32, t->rec + o + 5, 4);
        if (k32 == kl && memcmp(t->rec + o + 9, k, kl) == 0) {
            found = t->rec + o;
            val = found[0] == 1 ? found + 9 + kl : NULL;
            len = v32;
        }
        o += 9 + k32 + (t->rec[o] == 1 ? v32 : 0);
    }
    if (!found) {
        struct ent *e = *slot(c->db->impl, k, kl);
        val = e ? e->v : NULL;
        len = e ? e->vl : 0;
    }
    if (!val)
        return CL_ENGINE_NOTFOUND;
    memcpy(buf, val, len < cap ? len : cap);
    *vl = len;
    return CL_ENGINE_OK;
}

static int txn_commit(struct cl_engine_conn *c)
{
    struct store *s = c->db->impl;
    struct txn *t = c->impl;
    int rc = CL_ENGINE_OK;
    if (!t->rdonly && t->len > 12) {
        uint32_t magic = 0x474f4c41u, len = (uint32_t)t->len, crc = crc32(t->rec + 12, t->len - 12);
        memcpy(t->rec, &magic, 4);
        memcpy(t->rec + 4, &len, 4);
        memcpy(t->rec + 8, &crc, 4);
#ifdef APPLOG_EARLY_ACK
        /* BROKEN: the record is kept in memory and acknowledged; the kept
         * records are written only once there are 16 of them */
        unsigned char *p = realloc(s->pending, s->npending + t->len);
        if (!p)
            rc = (CL_ENGINE_ERRF(c->err, "out of memory"), CL_ENGINE_ERR);
        else {
            memcpy(p + s->npending, t->rec, t->len);
            s->pending = p;
            s->npending += t->len;
            if (++s->kept == 16) {
                rc = append(s, s->pending, s->npending, c->err);
                s->npending = s->kept = 0;
            }
        }
#else
        rc = append(s, t->rec, t->len, c->err);
#endif
        if (rc == CL_ENGINE_OK && apply_record(s, t->rec, t->len))
            rc = (CL_ENGINE_ERRF(c->err, "out of memory"), CL_ENGINE_ERR);
        s->commits += rc == CL_ENGINE_OK;
    }
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

static void txn_abort(struct cl_engine_conn *c)
{
    pthread_rwlock_unlock(&((struct store *)c->db->impl)->lock);
}

static void store_stats(struct cl_engine_db *db, struct cl_engine_stats *st)
{
    struct store *s = db->impl;
    pthread_rwlock_rdlock(&s->lock);
    st->commits = s->commits;
    st->syncs = s->syncs;
    st->log_bytes = s->bytes;
    pthread_rwlock_unlock(&s->lock);
}

static const char *store_version(void) { return "1.0"; }

/* What each knob means here; a knob without a row makes a run n/a. */
static const struct cl_engine_accept accepts[] = {
    CL_ENGINE_MAPS("sync", "commit", "one pwrite of the transaction's record, then one fdatasync",
                   CL_ENGINE_SURVIVES_KILL | CL_ENGINE_SURVIVES_POWER),
#ifdef APPLOG_EARLY_ACK /* its --sync none claims nothing: losses there are allowed */
    CL_ENGINE_MAPS("sync", "none", "no sync; records kept in memory, 16 at a time", 0),
#else
    CL_ENGINE_MAPS("sync", "none", "one pwrite of the record, no sync", CL_ENGINE_SURVIVES_KILL),
#endif
    CL_ENGINE_NOT("sync", NULL, "one writer: each commit syncs (commit) or none does (none)"),
    CL_ENGINE_MAPS("sync-latency", NULL, "emulated: paid after its fdatasync", 0),
    CL_ENGINE_END,
};

static const struct cl_engine_plugin plugin = {
    .abi_version = CL_ENGINE_ABI_VERSION,
    .size = sizeof(struct cl_engine_plugin),
#ifdef APPLOG_EARLY_ACK
    .name = "applog_early",
    .notes = "BROKEN on purpose: a commit is acknowledged before its record is written",
#else
    .name = "applog",
    .notes = "an append-only log, one record per transaction; the index in memory, rebuilt at open",
#endif
    .version = store_version,
    .flags = CL_ENGINE_RMW,
    .accepts = accepts,
    .no_why = "applog has one log file and no settings",
    .open = store_open,
    .close = store_close,
    .conn_open = conn_open,
    .conn_close = conn_close,
    .begin = txn_begin,
    .put = txn_put,
    .get = txn_get,
    .del = txn_del,
    .commit = txn_commit,
    .abort = txn_abort,
    .stats = store_stats,
    /* no commit_async and sync_wait: each commit blocks, and --pipeline
     * beyond 1 is n/a (docs/plugins.md, "Pipelining") */
};

const struct cl_engine_plugin *commitlab_engine_plugin(void) { return &plugin; }
