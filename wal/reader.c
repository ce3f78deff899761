/*
 * reader.c -- reads a log back: records in LSN order, following SWITCH
 * records from segment to segment, and decides where the valid log ends.
 *
 * Called by recovery (the engine) and by tests; independent of the writer
 * (wal_format.h and segment.c's header decoding only).
 *
 * Each segment is read whole into one buffer, so a returned record's
 * payload points into it and stays valid until the next call.
 *
 * The end of the log is the first invalid record (docs/wal-format.md,
 * "Validity").  Whether that is a torn tail or corruption is decided by
 * sync_lsn: the reader scans the rest of that segment and every following
 * segment file at each 8-byte aligned offset for a valid record whose
 * sync_lsn is greater than the invalid record's LSN.  Such a record proves
 * the invalid bytes had been made durable before it was written, so they
 * were damaged afterwards: CL_ECORRUPT.  Otherwise the invalid bytes are an
 * unsynced tail that a crash may legitimately have cut.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "endian.h"
#include "wal_internal.h"

enum { RD_READING = 0, RD_END, RD_CORRUPT, RD_ERROR };

/* How the log ended, once wal_reader_next returned anything but 1: what
 * wal_reader_explain says. */
enum wal_end_kind {
    WAL_END_NONE = 0,    /* not read to the end (or an I/O error) */
    WAL_END_NO_SEGMENT,  /* the next segment does not exist, nor any later one */
    WAL_END_ZEROS,       /* zeros where the next record would be */
    WAL_END_RECYCLED,    /* a recycled segment's earlier contents */
    WAL_END_TORN,        /* a record begun but not whole, never made durable */
    WAL_END_CORRUPT,     /* an invalid record that a later one proves was durable */
    WAL_END_HOLE,        /* a missing segment with later ones present */
    WAL_END_FOREIGN,     /* a segment whose header is another database's */
    WAL_END_SWITCH_MISSING, /* a SWITCH record (or the checkpoint) points into a missing segment */
    WAL_END_SHORT        /* a segment of the log is shorter than a segment */
};

struct wal_reader {
    struct vfs *vfs;
    char *dir;
    uint64_t seg_size;
    uint64_t db_id;          /* the database's: a segment with another is not ours */
    uint64_t pos;            /* LSN of the next record */
    uint64_t segno;          /* segment in seg, when have_seg */
    int have_seg;
    uint8_t *seg;            /* the current segment's bytes */
    uint8_t *scan;           /* a following segment, while scanning */
    int state, err, torn, missing;
    int with_switch;         /* return SWITCH records too (inspect) */
    int require_start;       /* the first segment must exist (a checkpoint's: recovery, inspect) */
    int started;             /* a segment was read */
    uint64_t switch_lsn;     /* the SWITCH record that sent the reader on, or 0 */
    uint64_t short_len;      /* WAL_END_SHORT: the segment file's length */
    uint64_t end_lsn, bad_lsn;
    /* Why the log ends where it does, for wal_reader_explain. */
    enum wal_end_kind end_kind;
    uint64_t end_segno;      /* the segment the end (or the problem) is in */
    uint64_t proof_lsn, proof_sync_lsn; /* WAL_END_CORRUPT: the record proving durability */
    char defect[120];        /* what is wrong with the invalid record */
};

/* Reads segment segno into buf (missing bytes read as zero).  *present = 0
 * when the file does not exist. */
static int load_segment(struct wal_reader *r, uint64_t segno, uint8_t *buf, int *present, uint64_t *len)
{
    struct wal_segment_header h;
    struct vfs_file *f;
    size_t got = 0;
    char name[32], *path;
    int rc;

    *present = 0;
    if (len)
        *len = 0;
    wal_segment_name(name, sizeof name, segno);
    if (asprintf(&path, "%s/%s", r->dir, name) < 0)
        return CL_ENOMEM;
    rc = vfs_open(r->vfs, path, VFS_O_RDONLY, VFS_CLASS_WAL, &f);
    free(path);
    if (rc == -ENOENT)
        return 0;
    if (rc == CL_EFILETYPE)
        r->bad_lsn = wal_segment_start_lsn(segno, r->seg_size); /* names the file */
    if (rc)
        return rc;
    rc = vfs_pread(f, buf, (size_t)r->seg_size, 0, &got);
    vfs_close(f);
    if (rc)
        return rc;
    memset(buf + got, 0, (size_t)(r->seg_size - got));
    if (len)
        *len = got;
    /* The records are self-identifying (LSN, incarnation, CRC) but do not
     * name their database: a readable header must, or the segment -- one
     * copied from another database, say -- is refused before any of its
     * records is replayed. */
    if (got >= WAL_SEG_HDR_LEN && memcmp(buf, WAL_MAGIC, 8) == 0 && get_le32(buf + 40) == crc32c(buf, 40) &&
        get_le32(buf + 8) != WAL_VERSION) {
        /* a whole header of another format version: not ours to read */
        r->bad_lsn = wal_segment_start_lsn(segno, r->seg_size);
        r->end_kind = WAL_END_FOREIGN;
        r->end_segno = segno;
        snprintf(r->defect, sizeof r->defect, "its header says format version %" PRIu32 ", this code reads %u",
                 get_le32(buf + 8), WAL_VERSION);
        return CL_EFORMAT;
    }
    if (wal_segment_header_decode(buf, got, &h) == 0 &&
        (h.segment_size != r->seg_size || h.segno != segno || h.db_id != r->db_id)) {
        r->bad_lsn = wal_segment_start_lsn(segno, r->seg_size);
        r->end_kind = WAL_END_FOREIGN;
        r->end_segno = segno;
        snprintf(r->defect, sizeof r->defect,
                 "its header names database %016" PRIx64 ", segment %" PRIu64 ", size %" PRIu64, h.db_id, h.segno,
                 h.segment_size);
        return CL_EFORMAT;
    }
    *present = 1;
    return 0;
}

/* 1 when a valid record starts at offset off of segment segno (in buf). */
static int parse_record(const uint8_t *buf, uint64_t seg_size, uint64_t segno, uint64_t off,
                        struct wal_record *rec)
{
    const uint8_t *p = buf + off;
    uint64_t lsn = segno * seg_size + off;
    if (off < WAL_SEG_HEADER || off % WAL_ALIGN || off + WAL_REC_HEADER > seg_size)
        return 0;
    if (get_le64(p + 8) != lsn) /* cheapest test first: the scan relies on it */
        return 0;
    uint32_t len = get_le32(p + 4);
    if ((uint64_t)len > seg_size - off - WAL_REC_HEADER)
        return 0;
    if (get_le32(p + 32) != (uint32_t)segno || p[36] < WAL_REC_PUT || p[36] > WAL_REC_SWITCH ||
        p[37] != 0 || get_le16(p + 38) != 0)
        return 0;
    if (crc32c(p + 4, WAL_REC_HEADER - 4 + (size_t)len) != get_le32(p))
        return 0;
    rec->type = (enum wal_rec_type)p[36];
    rec->lsn = lsn;
    rec->next_lsn = lsn + wal_align_up(WAL_REC_HEADER + (uint64_t)len);
    rec->txn_id = get_le64(p + 16);
    rec->sync_lsn = get_le64(p + 24);
    rec->payload = p + WAL_REC_HEADER;
    rec->len = len;
    return 1;
}

/* 1 when segment segno (in buf) holds, at or after offset from, a whole
 * record of an earlier life of the file: it is a recycled segment.  Such
 * a record sits where its own LSN says, in another segment number. */
static int recycled_after(const uint8_t *buf, uint64_t seg_size, uint64_t segno, uint64_t from)
{
    if (from < WAL_SEG_HEADER)
        from = WAL_SEG_HEADER;
    for (uint64_t off = from; off + WAL_REC_HEADER <= seg_size; off += WAL_ALIGN) {
        const uint8_t *p = buf + off;
        uint64_t lsn = get_le64(p + 8);
        if (lsn % seg_size != off || lsn / seg_size == segno)
            continue;
        uint32_t len = get_le32(p + 4);
        if ((uint64_t)len <= seg_size - off - WAL_REC_HEADER &&
            crc32c(p + 4, WAL_REC_HEADER - 4 + (size_t)len) == get_le32(p))
            return 1;
    }
    return 0;
}

/* 1 when some valid record of segment segno at offset >= from has a
 * sync_lsn above bad; *proof is that record. */
static int durable_after(const uint8_t *buf, uint64_t seg_size, uint64_t segno, uint64_t from,
                         uint64_t bad, struct wal_record *proof)
{
    if (from < WAL_SEG_HEADER)
        from = WAL_SEG_HEADER;
    for (uint64_t off = from; off + WAL_REC_HEADER <= seg_size; off += WAL_ALIGN)
        if (parse_record(buf, seg_size, segno, off, proof) && proof->sync_lsn > bad)
            return 1;
    return 0;
}

/* Which of the validity checks (wal_format.h) the bytes at offset off of
 * segment segno fail, in words; only for explaining, never on the
 * reading path. */
static void describe_defect(const uint8_t *buf, uint64_t seg_size, uint64_t segno, uint64_t off, char *d,
                            size_t n)
{
    const uint8_t *p = buf + off;
    uint64_t lsn = segno * seg_size + off;
    if (off + WAL_REC_HEADER > seg_size) {
        snprintf(d, n, "a record header would run past the segment's end");
        return;
    }
    uint32_t len = get_le32(p + 4);
    if (get_le64(p + 8) != lsn)
        snprintf(d, n, "its LSN field reads %" PRIu64 ", not %" PRIu64, get_le64(p + 8), lsn);
    else if ((uint64_t)len > seg_size - off - WAL_REC_HEADER)
        snprintf(d, n, "its length, %" PRIu32 " bytes, runs past the segment's end", len);
    else if (get_le32(p + 32) != (uint32_t)segno)
        snprintf(d, n, "its incarnation field reads %" PRIu32 ", not segment %" PRIu64, get_le32(p + 32), segno);
    else if (p[36] < WAL_REC_PUT || p[36] > WAL_REC_SWITCH)
        snprintf(d, n, "its type, %u, is unknown", p[36]);
    else if (p[37] != 0 || get_le16(p + 38) != 0)
        snprintf(d, n, "its flags or reserved bytes are not zero");
    else
        snprintf(d, n, "its checksum does not match: stored %08" PRIx32 ", computed %08" PRIx32 " over %" PRIu32
                       " payload bytes",
                 get_le32(p), crc32c(p + 4, WAL_REC_HEADER - 4 + (size_t)len), len);
}

static int finish(struct wal_reader *r, int state, int err)
{
    r->state = state;
    r->err = err;
    return err;
}

/* The record at r->pos is invalid: torn tail (0) or corruption. */
static int invalid_at(struct wal_reader *r)
{
    uint64_t bad = r->pos, off = wal_lsn_offset(bad, r->seg_size);
    uint64_t hend = off + WAL_REC_HEADER < r->seg_size ? off + WAL_REC_HEADER : r->seg_size;
    int rc;

    /* Torn: a record of this log was begun at X (its LSN field says X),
     * or -- in a segment that is not recycled, where everything past the
     * log reads as zero -- anything but zeros is there.  In a recycled
     * segment the bytes past the log are its earlier life's. */
    struct wal_record proof;
    r->torn = 0;
    r->end_kind = WAL_END_ZEROS;
    r->end_segno = r->segno;
    for (uint64_t i = off; i < hend; i++)
        if (r->seg[i]) {
            r->torn = off + 16 > r->seg_size || get_le64(r->seg + off + 8) == bad ||
                      !recycled_after(r->seg, r->seg_size, r->segno, off);
            r->end_kind = r->torn ? WAL_END_TORN : WAL_END_RECYCLED;
            break;
        }
    describe_defect(r->seg, r->seg_size, r->segno, off, r->defect, sizeof r->defect);
    if (durable_after(r->seg, r->seg_size, r->segno, off + WAL_ALIGN, bad, &proof))
        goto corrupt;
    for (uint64_t s = r->segno + 1;; s++) {
        int present;
        if (!r->scan && !(r->scan = malloc((size_t)r->seg_size)))
            return finish(r, RD_ERROR, CL_ENOMEM);
        rc = load_segment(r, s, r->scan, &present, NULL);
        if (rc)
            return finish(r, RD_ERROR, rc);
        if (!present)
            break;
        if (durable_after(r->scan, r->seg_size, s, WAL_SEG_HEADER, bad, &proof))
            goto corrupt;
    }
    r->end_lsn = bad;
    return finish(r, RD_END, 0);
corrupt:
    r->end_kind = WAL_END_CORRUPT;
    r->proof_lsn = proof.lsn;
    r->proof_sync_lsn = proof.sync_lsn;
    r->bad_lsn = bad;
    return finish(r, RD_CORRUPT, CL_ECORRUPT);
}

int wal_reader_open(struct vfs *v, const char *dir, uint64_t segment_size, uint64_t db_id, uint64_t start_lsn,
                    struct wal_reader **out)
{
    struct wal_reader *r;
    *out = NULL;
    if (!dir || segment_size < WAL_MIN_SEGMENT || segment_size % WAL_SEG_HEADER ||
        start_lsn % WAL_ALIGN)
        return CL_EINVAL;
    r = calloc(1, sizeof *r);
    if (!r)
        return CL_ENOMEM;
    r->vfs = v ? v : vfs_posix();
    r->dir = strdup(dir);
    r->seg = malloc((size_t)segment_size);
    if (!r->dir || !r->seg) {
        wal_reader_close(r);
        return CL_ENOMEM;
    }
    r->seg_size = segment_size;
    r->db_id = db_id;
    if (wal_lsn_offset(start_lsn, segment_size) < WAL_SEG_HEADER)
        start_lsn = wal_segment_start_lsn(wal_lsn_segno(start_lsn, segment_size), segment_size);
    r->pos = r->end_lsn = start_lsn;
    *out = r;
    return 0;
}

/* 1 when a segment above segno exists in the directory. */
static int later_segment_exists(struct wal_reader *r, uint64_t segno, int *err)
{
    uint64_t *segs = NULL;
    size_t n = 0;
    int found = 0;
    *err = wal_list_segments(r->vfs, r->dir, &segs, &n);
    for (size_t i = 0; !*err && i < n; i++)
        found |= segs[i] > segno;
    free(segs);
    return found;
}

int wal_reader_next(struct wal_reader *r, struct wal_record *rec)
{
    if (r->state != RD_READING)
        return r->err;
    for (;;) {
        uint64_t segno = wal_lsn_segno(r->pos, r->seg_size);
        if (!r->have_seg || r->segno != segno) {
            int present, rc;
            uint64_t len;
            /* Segments are created whole and durable before a SWITCH points
             * into one, or a checkpoint starts in one (docs/wal-format.md,
             * section 6): such a segment missing or short is damage. */
            int must_exist = r->switch_lsn || (r->require_start && !r->started);
            r->have_seg = 0;
            r->started = 1;
            rc = load_segment(r, segno, r->seg, &present, &len);
            if (rc)
                return finish(r, RD_ERROR, rc);
            if (!present && must_exist) {
                r->end_segno = segno;
                r->end_kind = WAL_END_SWITCH_MISSING;
                r->missing = 1;
                r->bad_lsn = r->pos;
                return finish(r, RD_CORRUPT, CL_ECORRUPT);
            }
            if (present && len < r->seg_size) {
                r->end_segno = segno;
                r->end_kind = WAL_END_SHORT;
                r->short_len = len;
                r->bad_lsn = r->pos;
                return finish(r, RD_CORRUPT, CL_ECORRUPT);
            }
            if (!present) {
                /* The log must go on in this segment: it is where reading
                 * starts (the checkpoint's), or a SWITCH record points to
                 * it, and segments are durable before either.  With later
                 * segments present, a missing one is a hole in the log,
                 * not its end. */
                int err;
                r->end_segno = segno;
                if (later_segment_exists(r, segno, &err)) {
                    r->end_kind = WAL_END_HOLE;
                    r->missing = 1;
                    r->bad_lsn = r->pos;
                    return finish(r, RD_CORRUPT, CL_ECORRUPT);
                }
                if (err)
                    return finish(r, RD_ERROR, err);
                r->end_lsn = r->pos; /* an empty log, or a SWITCH into nothing */
                r->end_kind = WAL_END_NO_SEGMENT;
                r->torn = 0;
                return finish(r, RD_END, 0);
            }
            r->segno = segno;
            r->have_seg = 1;
        }
        if (!parse_record(r->seg, r->seg_size, segno, wal_lsn_offset(r->pos, r->seg_size), rec))
            return invalid_at(r);
        if (rec->type == WAL_REC_SWITCH) {
            r->switch_lsn = rec->lsn;
            r->pos = wal_segment_start_lsn(segno + 1, r->seg_size);
            if (r->with_switch)
                return 1;
            continue;
        }
        r->pos = rec->next_lsn;
        r->end_lsn = r->pos;
        return 1;
    }
}

uint64_t wal_reader_end_lsn(struct wal_reader *r) { return r->end_lsn; }
int wal_reader_torn(struct wal_reader *r) { return r->torn; }
uint64_t wal_reader_bad_lsn(struct wal_reader *r) { return r->bad_lsn; }
int wal_reader_missing(struct wal_reader *r) { return r->missing; }
void wal_reader_with_switch(struct wal_reader *r, int on) { r->with_switch = on; }
void wal_reader_require_start(struct wal_reader *r, int on) { r->require_start = on; }

void wal_reader_explain(struct wal_reader *r, char *buf, size_t len)
{
    uint64_t at = r->state == RD_END ? r->end_lsn : r->bad_lsn;
    char file[32];
    wal_segment_name(file, sizeof file, r->end_segno);
    switch (r->state == RD_READING || r->state == RD_ERROR ? WAL_END_NONE : r->end_kind) {
    case WAL_END_NONE:
        snprintf(buf, len, "%s", r->state == RD_ERROR ? "the log could not be read to its end (an I/O error)"
                                                      : "the log was not read to its end");
        break;
    case WAL_END_NO_SEGMENT:
        snprintf(buf, len,
                 "segment %" PRIu64 " does not exist and no later one does: the log ends where that segment "
                 "would begin (an empty log, or a SWITCH into a segment not yet created)",
                 r->end_segno);
        break;
    case WAL_END_ZEROS:
        snprintf(buf, len, "zeros at LSN %" PRIu64 ": nothing was written past the last record", at);
        break;
    case WAL_END_RECYCLED:
        snprintf(buf, len,
                 "bytes left by the segment's earlier life follow at LSN %" PRIu64
                 " (%s; whole records of another segment number sit further on): a recycled segment's old "
                 "contents, not a record of this log",
                 at, r->defect);
        break;
    case WAL_END_TORN:
        snprintf(buf, len,
                 "torn tail at LSN %" PRIu64 ": a record begun there is not whole (%s), and no later record's "
                 "sync_lsn is above %" PRIu64 ", so it was never made durable: a crash may cut it",
                 at, r->defect, at);
        break;
    case WAL_END_CORRUPT:
        snprintf(buf, len,
                 "CORRUPT at LSN %" PRIu64 ": the record there is invalid (%s), but the record at LSN %" PRIu64
                 " has sync_lsn %" PRIu64 ", so the bytes at %" PRIu64
                 " had been made durable before it was written: they were damaged afterwards",
                 at, r->defect, r->proof_lsn, r->proof_sync_lsn, at);
        break;
    case WAL_END_HOLE:
        snprintf(buf, len,
                 "CORRUPT at LSN %" PRIu64 ": segment %" PRIu64
                 " (%s) is missing while later segment files exist: a hole in the log",
                 at, r->end_segno, file);
        break;
    case WAL_END_SWITCH_MISSING:
        if (r->switch_lsn)
            snprintf(buf, len,
                     "CORRUPT at LSN %" PRIu64 ": the SWITCH record at LSN %" PRIu64 " sends the log on into segment %" PRIu64
                     " (%s), which is missing; a segment is made durable before a SWITCH points into it, so it was "
                     "lost afterwards",
                     at, r->switch_lsn, r->end_segno, file);
        else
            snprintf(buf, len,
                     "CORRUPT at LSN %" PRIu64 ": segment %" PRIu64 " (%s), where the checkpoint's log begins, is "
                     "missing; it was durable before the checkpoint was recorded, so it was lost afterwards",
                     at, r->end_segno, file);
        break;
    case WAL_END_SHORT:
        snprintf(buf, len,
                 "CORRUPT at LSN %" PRIu64 ": segment %" PRIu64 " (%s) is %" PRIu64 " bytes, shorter than a segment (%" PRIu64
                 "); segments are made whole before the log enters them, so it was cut afterwards",
                 at, r->end_segno, file, r->short_len, r->seg_size);
        break;
    case WAL_END_FOREIGN:
        snprintf(buf, len, "segment %" PRIu64 " is not this log's: %s (this database is %016" PRIx64 ")",
                 r->end_segno, r->defect, r->db_id);
        break;
    }
}

void wal_reader_close(struct wal_reader *r)
{
    if (!r)
        return;
    free(r->scan);
    free(r->seg);
    free(r->dir);
    free(r);
}

/* ---- payload decoders ------------------------------------------------------ */

int wal_decode_put(const struct wal_record *rec, const void **key, uint32_t *klen,
                   const void **val, uint32_t *vlen)
{
    if (rec->type != WAL_REC_PUT || rec->len < WAL_PUT_HDR)
        return CL_ECORRUPT;
    uint32_t k = get_le16(rec->payload), v = get_le32(rec->payload + 2);
    if ((uint64_t)WAL_PUT_HDR + k + v != rec->len)
        return CL_ECORRUPT;
    *key = rec->payload + WAL_PUT_HDR;
    *klen = k;
    *val = rec->payload + WAL_PUT_HDR + k;
    *vlen = v;
    return 0;
}

int wal_decode_del(const struct wal_record *rec, const void **key, uint32_t *klen)
{
    if (rec->type != WAL_REC_DEL || rec->len < WAL_DEL_HDR)
        return CL_ECORRUPT;
    uint32_t k = get_le16(rec->payload);
    if ((uint64_t)WAL_DEL_HDR + k != rec->len)
        return CL_ECORRUPT;
    *key = rec->payload + WAL_DEL_HDR;
    *klen = k;
    return 0;
}

int wal_decode_commit(const struct wal_record *rec, uint32_t *nops)
{
    if (rec->type != WAL_REC_COMMIT || rec->len != WAL_COMMIT_LEN)
        return CL_ECORRUPT;
    *nops = get_le32(rec->payload);
    return 0;
}
