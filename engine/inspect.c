/*
 * inspect.c -- read-only examination of a database directory for
 * `commitlab inspect`: the current meta page, the segment files, the log
 * from the checkpoint LSN on (records by type, where it ends), and with
 * verify every reachable page's and every record's checksum.  Nothing here
 * writes: the store is opened read-only and the log is only read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "commitlab.h"
#include "dirlock.h"
#include "engine_internal.h"
#include "store.h"
#include "vfs.h"
#include "wal.h"

#include "db.h"

static void count_record(struct cl_inspect *out, enum wal_rec_type type)
{
    switch (type) {
    case WAL_REC_PUT: out->put_records++; break;
    case WAL_REC_DEL: out->del_records++; break;
    case WAL_REC_COMMIT: out->commit_records++; break;
    case WAL_REC_SWITCH: out->switch_records++; break;
    }
}

static void visit_record(const struct cl_inspect_visitor *visit, const struct wal_record *rec)
{
    struct cl_inspect_record r = {.lsn = rec->lsn,
                                  .next_lsn = rec->next_lsn,
                                  .type = (enum cl_record_type)rec->type,
                                  .txn_id = rec->txn_id,
                                  .sync_lsn = rec->sync_lsn,
                                  .payload_len = rec->len};
    const void *k, *v;
    switch (rec->type) {
    case WAL_REC_PUT: r.malformed = wal_decode_put(rec, &k, &r.key_len, &v, &r.value_len) != 0; break;
    case WAL_REC_DEL: r.malformed = wal_decode_del(rec, &k, &r.key_len) != 0; break;
    case WAL_REC_COMMIT: r.malformed = wal_decode_commit(rec, &r.nops) != 0; break;
    case WAL_REC_SWITCH: r.malformed = rec->len != 0; break;
    }
    visit->record(visit->arg, &r);
}

int cl_inspect(const char *dir, int verify, struct cl_inspect *out, const struct cl_inspect_visitor *visit)
{
    struct vfs *v = vfs_posix();
    struct dir_lock *lock = NULL, *data_lock = NULL;
    struct store *s = NULL;
    struct store_meta m;
    struct wal_reader *rd = NULL;
    struct wal_record rec;
    uint64_t *segs = NULL;
    size_t nsegs = 0;
    int rc, created = 0;

    cl_detail_clear();
    if (!dir || !out)
        return CL_EINVAL;
    memset(out, 0, sizeof *out);
    /* Shared: other readers may look too, but no cl_open writes (or
     * recovers) while this reads, so what it reports, corruption above
     * all, is never a live writer's half-done work. */
    rc = db_lock(dir, 1, &lock, &data_lock);
    if (rc)
        return rc;
    struct store_config sc = {.vfs = v, .dir = dir, .cache_size = 4u << 20, .readonly = 1};
    rc = store_open(&sc, &s, &created);
    if (rc == CL_EFILETYPE)
        cl_detail_set("%s/%s: %s", dir, STORE_FILE, cl_strerror(rc));
    if (rc)
        goto out;
    store_get_meta(s, &m);
    out->version = m.version;
    out->page_size = m.page_size;
    out->db_id = m.db_id;
    out->generation = m.generation;
    out->root = m.root;
    out->npages = m.npages;
    out->nentries = m.nentries;
    out->checkpoint_lsn = m.checkpoint_lsn;
    out->wal_segment_size = m.wal_segment_size;
    out->wal_segno = m.wal_segno;

    rc = wal_list_segments(v, dir, &segs, &nsegs);
    if (rc)
        goto out;
    out->nsegments = nsegs;
    for (size_t i = 0; i < nsegs; i++) {
        struct wal_segment_header h;
        struct cl_inspect_segment seg = {.segno = segs[i],
                                         .first_lsn = wal_segment_start_lsn(segs[i], m.wal_segment_size)};
        int hrc = wal_read_segment_header(v, dir, segs[i], &h);
        if (hrc == CL_EFILETYPE) { /* as cl_open refuses it */
            char name[32];
            wal_segment_name(name, sizeof name, segs[i]);
            cl_detail_set("%s/%s: %s", dir, name, cl_strerror(hrc));
            rc = hrc;
            goto out;
        }
        seg.header_ok = hrc == 0;
        seg.header_db_id = seg.header_ok ? h.db_id : 0;
        if (visit && visit->segment)
            visit->segment(visit->arg, &seg);
    }

    rc = wal_reader_open(v, dir, m.wal_segment_size, m.db_id, m.checkpoint_lsn, &rd);
    if (rc)
        goto out;
    wal_reader_with_switch(rd, 1);
    wal_reader_require_start(rd, m.checkpoint_lsn != 0); /* as recovery reads it */
    while ((rc = wal_reader_next(rd, &rec)) == 1) {
        count_record(out, rec.type);
        if (visit && visit->record)
            visit_record(visit, &rec);
    }
    wal_reader_explain(rd, out->end_why, sizeof out->end_why);
    if (rc == CL_ECORRUPT) {
        out->corrupt = CL_CORRUPT_LOG;
        out->bad_lsn = wal_reader_bad_lsn(rd);
        goto out;
    }
    if (rc == CL_EFILETYPE) {
        char name[32];
        wal_segment_name(name, sizeof name, wal_lsn_segno(wal_reader_bad_lsn(rd), m.wal_segment_size));
        cl_detail_set("%s/%s: %s", dir, name, cl_strerror(rc));
    }
    if (rc < 0)
        goto out;
    out->end_lsn = wal_reader_end_lsn(rd);
    out->torn_tail = wal_reader_torn(rd);
    rc = 0;
    if (verify) {
        out->verified = 1;
        rc = store_verify(s, &out->pages_checked);
        if (rc == CL_ECORRUPT) {
            out->corrupt = CL_CORRUPT_PAGE;
            out->bad_page = store_bad_page(s);
        }
    }
out:
    wal_reader_close(rd);
    free(segs);
    if (s)
        store_close(s);
    dir_unlock(data_lock);
    dir_unlock(lock);
    return rc;
}
