/*
 * wal_format.h -- the write-ahead log's bytes.  The specification is
 * docs/wal-format.md; this header mirrors it and nothing here may differ
 * from it.  All integers are little-endian.
 *
 * A log is a sequence of segment files "wal-%016llx.log" (segment number in
 * hex) of segment_size bytes each.  An LSN is a byte position in the log:
 *     LSN = segno * segment_size + offset_in_segment
 * so a record's LSN names its segment, and a record left in a recycled
 * file from its previous use can never be taken for a current one.
 *
 * Segment header (the first WAL_SEG_HEADER bytes; the rest of that block is
 * zero so that O_DIRECT writes start aligned):
 *   off len field
 *     0   8 magic "CLWALSEG"
 *     8   4 version (WAL_VERSION)
 *    12   4 header_size (WAL_SEG_HEADER)
 *    16   8 db_id
 *    24   8 segno
 *    32   8 segment_size
 *    40   4 crc32c of bytes 0..39
 *
 * Record (starts at an 8-byte aligned offset >= WAL_SEG_HEADER; the next
 * record starts at the next 8-byte boundary after its payload):
 *   off len field
 *     0   4 crc32c of bytes 4 .. 40+length-1 (header after this field, then payload)
 *     4   4 length   payload bytes
 *     8   8 lsn      this record's own LSN
 *    16   8 txn_id
 *    24   8 sync_lsn the log was known durable up to this LSN when the record was made
 *    32   4 incarnation  low 32 bits of the segment number
 *    36   1 type     WAL_REC_*
 *    37   1 flags    0
 *    38   2 reserved 0
 *    40   .. payload
 *
 * Validity: a record is valid when length fits in the segment, lsn equals
 * its position, incarnation matches the segment, the type is known and the
 * CRC matches.  The first invalid record ends the log (a torn tail) unless a
 * valid record follows whose sync_lsn is greater than the invalid record's
 * LSN: then bytes that had been made durable are damaged, and the reader
 * reports corruption at that LSN.
 */
#ifndef CL_WAL_FORMAT_H
#define CL_WAL_FORMAT_H

#include <stdint.h>

#define WAL_MAGIC        "CLWALSEG"
#define WAL_VERSION      1u
#define WAL_SEG_HEADER   4096u   /* one aligned block */
#define WAL_SEG_HDR_LEN  44u     /* bytes of the header that carry fields */
#define WAL_REC_HEADER   40u
#define WAL_ALIGN        8u
#define WAL_MIN_SEGMENT  (64u * 1024u)

enum wal_rec_type {
    WAL_REC_PUT    = 1, /* payload: u16 klen, u32 vlen, key, value */
    WAL_REC_DEL    = 2, /* payload: u16 klen, key */
    WAL_REC_COMMIT = 3, /* payload: u32 nops; the transaction's records precede it */
    WAL_REC_SWITCH = 4  /* payload: empty; the log continues in segment segno+1 */
};

#define WAL_PUT_HDR 6u
#define WAL_DEL_HDR 2u
#define WAL_COMMIT_LEN 4u

static inline uint64_t wal_align_up(uint64_t x) { return (x + WAL_ALIGN - 1) & ~(uint64_t)(WAL_ALIGN - 1); }
static inline uint64_t wal_lsn_segno(uint64_t lsn, uint64_t seg_size) { return lsn / seg_size; }
static inline uint64_t wal_lsn_offset(uint64_t lsn, uint64_t seg_size) { return lsn % seg_size; }
static inline uint64_t wal_segment_start_lsn(uint64_t segno, uint64_t seg_size)
{ return segno * seg_size + WAL_SEG_HEADER; }

#endif /* CL_WAL_FORMAT_H */
