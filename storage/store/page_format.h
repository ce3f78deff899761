/*
 * page_format.h -- the bytes of a page of data.clp (see store.h for what the
 * pages mean).  Every integer is little-endian (endian.h).  A page is
 * STORE_PAGE_SIZE = 4096 bytes; page n lives at file offset n * 4096.
 *
 * Common header, every page:
 *
 *   off  size  field
 *     0     4  crc       CRC-32C of bytes [4, 4096) of the page
 *     4     2  type      PG_META, PG_BRANCH, PG_LEAF or PG_OVERFLOW
 *     6     2  nkeys     cells in a branch/leaf page; 0 otherwise
 *     8     8  pgno      the page's own number (catches misdirected writes)
 *    16     8  lsn       commit LSN of the last change (meta: checkpoint LSN)
 *    24     8  epoch     the epoch the page was written in (meta: generation)
 *    32        content
 *
 * A page is valid when crc matches, pgno equals its position and type is
 * one of the four.  Anything else read from the file is CL_ECORRUPT.
 *
 * Meta page (pages 0 and 1), content:
 *
 *    32     8  magic             STORE_MAGIC "CLDATA01" (not NUL-terminated)
 *    40     4  version           STORE_VERSION
 *    44     4  page_size         4096
 *    48     8  db_id
 *    56     8  generation        checkpoints made; meta of generation g lives
 *                                in page g % 2 (creation writes g = 0 to both)
 *    64     8  root              B+tree root page, 0 for an empty tree
 *    72     8  npages            pages of the file the snapshot may use
 *    80     8  nentries          keys in the tree
 *    88     8  checkpoint_lsn
 *    96     8  wal_segment_size
 *   104     8  wal_segno
 *   112        zero
 * The page checksum (offset 0) is the meta's checksum.  The valid meta with
 * the higher generation is current; a meta whose crc fails is ignored (a
 * torn meta write), one whose crc holds but whose magic, version or page
 * size differ is CL_EFORMAT.  Every page of the snapshot of generation g
 * has epoch <= g.
 *
 * Branch and leaf pages ("nodes"), content:
 *
 *    32     8  link      branch: child 0 (keys below the first separator);
 *                        leaf: 0
 *    40  2*n   slots     u16 offset of each cell, in key order
 *     ...      gap       free, up to the lowest cell
 *     ...      cells     towards the end of the page, in any order, with
 *                        possibly holes (free bytes) between them
 *
 *   leaf cell:   u16 klen | u16 flags | u32 vlen | key[klen] |
 *                  flags == 0:            value[vlen]   (vlen <= PG_INLINE_MAX)
 *                  flags == LEAF_F_OVFL:  u64 first overflow page
 *   branch cell: u16 klen | u64 child | key[klen]
 *                  child holds the keys >= key (and < the next separator)
 *
 * A slotted page, changed in place (storage/store/btree.c): a lookup is a binary
 * search of the slots on the page itself; an insert takes its cell from the
 * top of the gap and moves the later slots by 2 bytes; a replace writes
 * over the old cell when the new one is no longer, else takes the gap; a
 * delete drops the slot.  Space given up becomes a hole, reclaimed when the
 * page is next written whole (split, merge, or a change the gap cannot
 * hold), which packs the cells against the end again.  The bytes of the gap
 * and of holes are unspecified, not necessarily zero; the page checksum
 * covers them as it covers everything.  Every cell lies after the slot
 * array and within the page, and cells do not overlap.  STORE_VERSION
 * stays 1: no reader of version 1 ever depended on packed cells or zeroed
 * free space, so pages with holes read the same with every version-1 reader.
 *
 * Keys are 1..CL_MAX_KEY bytes, compared with memcmp over the common
 * length, the shorter first on a tie.  Keys within a page strictly ascend.
 * A node's used space is the sum over its cells of 2 (slot) + cell size
 * (holes not counted); it is at most NODE_CAP.  A non-root node under NODE_MIN_FILL is merged
 * with or borrows from a sibling.  Values longer than PG_INLINE_MAX live
 * in overflow pages, so a leaf cell is at most 2 + 8 + 512 + 1024 = 1546
 * bytes (a leaf holds at least 2) and a branch cell at most 2 + 10 + 512 =
 * 524 bytes (a branch holds at least 7).
 *
 * Overflow page, content:
 *
 *    32     8  next      next page of the value, 0 for the last
 *    40     4  len       value bytes in this page (1..OVFL_CAP)
 *    44   len  data
 * A 4096-byte value takes two pages.  Overflow pages are written once and
 * never modified: a new value gets new pages.
 */
#ifndef CL_PAGE_FORMAT_H
#define CL_PAGE_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "endian.h"
#include "store.h"

#define PG_SIZE STORE_PAGE_SIZE

#define PG_OFF_CRC   0
#define PG_OFF_TYPE  4
#define PG_OFF_NKEYS 6
#define PG_OFF_PGNO  8
#define PG_OFF_LSN   16
#define PG_OFF_EPOCH 24
#define PG_HDR       32

enum pg_type { PG_META = 1, PG_BRANCH = 2, PG_LEAF = 3, PG_OVERFLOW = 4 };

#define META_OFF_MAGIC      32
#define META_OFF_VERSION    40
#define META_OFF_PAGE_SIZE  44
#define META_OFF_DB_ID      48
#define META_OFF_GENERATION 56
#define META_OFF_ROOT       64
#define META_OFF_NPAGES     72
#define META_OFF_NENTRIES   80
#define META_OFF_CKPT_LSN   88
#define META_OFF_WAL_SEGSZ  96
#define META_OFF_WAL_SEGNO  104
#define META_PAGES          2   /* pages 0 and 1 */

#define NODE_OFF_LINK  32
#define NODE_OFF_SLOTS 40
#define NODE_CAP       (PG_SIZE - NODE_OFF_SLOTS)
#define NODE_MIN_FILL  (NODE_CAP / 4)

#define LEAF_CELL_HDR   8
#define LEAF_F_OVFL     1u
#define BRANCH_CELL_HDR 10
#define PG_INLINE_MAX   1024u

#define OVFL_OFF_NEXT 32
#define OVFL_OFF_LEN  40
#define OVFL_OFF_DATA 44
#define OVFL_CAP      (PG_SIZE - OVFL_OFF_DATA)

static inline uint16_t pg_type(const uint8_t *p) { return get_le16(p + PG_OFF_TYPE); }
static inline uint16_t pg_nkeys(const uint8_t *p) { return get_le16(p + PG_OFF_NKEYS); }
static inline uint64_t pg_epoch(const uint8_t *p) { return get_le64(p + PG_OFF_EPOCH); }
static inline uint16_t pg_slot(const uint8_t *p, unsigned i) { return get_le16(p + NODE_OFF_SLOTS + 2 * i); }


#endif /* CL_PAGE_FORMAT_H */
