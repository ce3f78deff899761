/*
 * fuzz_wal_reader.c -- libFuzzer target: the log reader (wal_reader_*),
 * the record payload decoders and the end-of-log explanation, on a log of
 * one or two 64 KiB segments made of the input.
 *
 * Mode byte (fuzz_util.h): bit 0 reseals the segment headers' and every
 * plausible record's checksum (a record whose LSN field names its place
 * and whose length fits); bit 1 makes the bytes after the first 64 KiB a
 * second segment.  The database id and first segment number come from
 * the first segment's header, so a real segment file (the corpus) reads
 * as the log it was.
 */
#include "crc32c.h"
#include "endian.h"
#include "fuzz_util.h"
#include "wal_internal.h"

#define SEG (64u * 1024u)

static void reseal(uint8_t *seg, size_t len, uint64_t segno)
{
    if (len >= WAL_SEG_HDR_LEN)
        put_le32(seg + 40, crc32c(seg, 40));
    for (uint64_t off = WAL_SEG_HEADER; off + WAL_REC_HEADER <= len; off += WAL_ALIGN) {
        uint8_t *p = seg + off;
        uint32_t rl = get_le32(p + 4);
        if (get_le64(p + 8) == segno * SEG + off && (uint64_t)rl <= len - off - WAL_REC_HEADER)
            put_le32(p, crc32c(p + 4, WAL_REC_HEADER - 4 + (size_t)rl));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t seg[2][SEG];
    size_t len[2] = {0, 0};
    if (size < 1)
        return 0;
    int mode = data[0];
    data++;
    size--;
    len[0] = size < SEG ? size : SEG;
    memcpy(seg[0], data, len[0]);
    if ((mode & 2) && size > SEG) {
        len[1] = size - SEG < SEG ? size - SEG : SEG;
        memcpy(seg[1], data + SEG, len[1]);
    }
    uint64_t db_id = len[0] >= 24 ? get_le64(seg[0] + 16) : 0;
    uint64_t first = len[0] >= 32 ? get_le64(seg[0] + 24) : 1;
    if (first == 0 || first > (1u << 20))
        first = 1;
    for (int i = 0; i < 2; i++) {
        char name[32];
        wal_segment_name(name, sizeof name, first + (uint64_t)i);
        if (mode & 1)
            reseal(seg[i], len[i], first + (uint64_t)i);
        if (i == 0 || len[1])
            fuzz_write(name, seg[i], len[i]);
        else
            fuzz_unlink(name);
    }

    struct wal_reader *rd;
    struct wal_record rec;
    char why[512];
    if (wal_reader_open(vfs_posix(), fuzz_dir(), SEG, db_id, wal_segment_start_lsn(first, SEG), &rd))
        abort(); /* the arguments are valid: opening must not fail */
    wal_reader_with_switch(rd, 1);
    uint64_t last = 0;
    int rc;
    while ((rc = wal_reader_next(rd, &rec)) == 1) {
        const void *k, *v;
        uint32_t kl, vl, nops;
        if (rec.lsn < last || rec.next_lsn <= rec.lsn)
            abort(); /* records come in LSN order */
        last = rec.lsn;
        if (rec.type == WAL_REC_PUT && wal_decode_put(&rec, &k, &kl, &v, &vl) == 0 &&
            (size_t)kl + vl + WAL_PUT_HDR > rec.len)
            abort();
        if (rec.type == WAL_REC_DEL && wal_decode_del(&rec, &k, &kl) == 0 && (size_t)kl + WAL_DEL_HDR > rec.len)
            abort();
        if (rec.type == WAL_REC_COMMIT)
            wal_decode_commit(&rec, &nops);
    }
    if (rc == 0 && wal_reader_end_lsn(rd) < wal_segment_start_lsn(first, SEG))
        abort();
    wal_reader_explain(rd, why, sizeof why);
    if (!why[0])
        abort();
    wal_reader_close(rd);
    return 0;
}
