/*
 * segment.c -- segment files: names, listing, the header block, and durable
 * creation.
 *
 * Owns the segment header encoding (docs/wal-format.md, "Segment header").
 * Creation is the one place a segment comes into existence, and it makes
 * the file durable before returning: the space is initialised (zeros,
 * sparse or fallocate), the header block is written, the file is fsynced
 * and its directory synced.  Only then may the writer put a record in it,
 * or a SWITCH record pointing at it in the previous segment.
 *
 * Called by writer.c (under io_mu) and, for the read-only helpers, by the
 * reader and the engine.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "endian.h"
#include "wal_internal.h"

void wal_segment_name(char *buf, size_t cap, uint64_t segno)
{
    snprintf(buf, cap, "wal-%016llx.log", (unsigned long long)segno);
}

int wal_segment_parse_name(const char *name, uint64_t *segno)
{
    uint64_t v = 0;
    if (strlen(name) != 24 || memcmp(name, "wal-", 4) != 0 || strcmp(name + 20, ".log") != 0)
        return 0;
    for (int i = 4; i < 20; i++) {
        char c = name[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else
            return 0;
        v = (v << 4) | d;
    }
    *segno = v;
    return 1;
}

struct seg_list {
    uint64_t *v;
    size_t n, cap;
    int err;
};

static int list_one(void *arg, const char *name)
{
    struct seg_list *l = arg;
    uint64_t segno;
    if (!wal_segment_parse_name(name, &segno))
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        uint64_t *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->err = CL_ENOMEM;
            return 1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = segno;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int wal_list_segments(struct vfs *v, const char *dir, uint64_t **segnos, size_t *n)
{
    struct seg_list l = { 0 };
    int rc = vfs_list(v, dir, list_one, &l);
    if (l.err)
        rc = l.err;
    if (rc < 0) {
        free(l.v);
        return rc;
    }
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, cmp_u64);
    *segnos = l.v;
    *n = l.n;
    return 0;
}

void wal_segment_header_encode(uint8_t *hdr, uint64_t db_id, uint64_t segno, uint64_t seg_size)
{
    memcpy(hdr, WAL_MAGIC, 8);
    put_le32(hdr + 8, WAL_VERSION);
    put_le32(hdr + 12, WAL_SEG_HEADER);
    put_le64(hdr + 16, db_id);
    put_le64(hdr + 24, segno);
    put_le64(hdr + 32, seg_size);
    put_le32(hdr + 40, crc32c(hdr, 40));
}

int wal_segment_header_decode(const uint8_t *hdr, size_t len, struct wal_segment_header *out)
{
    if (len < WAL_SEG_HDR_LEN || memcmp(hdr, WAL_MAGIC, 8) != 0)
        return CL_EFORMAT;
    if (get_le32(hdr + 40) != crc32c(hdr, 40))
        return CL_ECORRUPT;
    if (get_le32(hdr + 8) != WAL_VERSION || get_le32(hdr + 12) != WAL_SEG_HEADER)
        return CL_EFORMAT;
    /* a size no log can have: not a header this code wrote */
    if (get_le64(hdr + 32) < WAL_MIN_SEGMENT || get_le64(hdr + 32) % WAL_SEG_HEADER)
        return CL_EFORMAT;
    out->version = get_le32(hdr + 8);
    out->db_id = get_le64(hdr + 16);
    out->segno = get_le64(hdr + 24);
    out->segment_size = get_le64(hdr + 32);
    return 0;
}

static int path_of(const char *dir, uint64_t segno, char **out)
{
    char name[32];
    wal_segment_name(name, sizeof name, segno);
    if (asprintf(out, "%s/%s", dir, name) < 0)
        return CL_ENOMEM;
    return 0;
}

int wal_segment_path(const struct wal *w, uint64_t segno, char **out)
{
    return path_of(w->dir, segno, out);
}

int wal_read_segment_header(struct vfs *v, const char *dir, uint64_t segno,
                            struct wal_segment_header *out)
{
    uint8_t hdr[WAL_SEG_HDR_LEN];
    struct vfs_file *f;
    size_t got = 0;
    char *path;
    int rc = path_of(dir, segno, &path);
    if (rc)
        return rc;
    rc = vfs_open(v, path, VFS_O_RDONLY, VFS_CLASS_WAL, &f);
    free(path);
    if (rc)
        return rc;
    rc = vfs_pread(f, hdr, sizeof hdr, 0, &got);
    vfs_close(f);
    if (rc)
        return rc;
    rc = wal_segment_header_decode(hdr, got, out);
    if (rc == 0 && out->segno != segno)
        rc = CL_ECORRUPT; /* a file under another segment's name */
    return rc;
}

/* Initialises the file's space as segment_init says.  Every byte of the
 * segment reads as zero afterwards (the file was truncated on open). */
static int init_space(struct wal *w, struct vfs_file *f)
{
    if (w->opt.segment_init == CL_SEGINIT_SPARSE)
        return vfs_truncate(f, w->seg_size);
    if (w->opt.segment_init == CL_SEGINIT_FALLOCATE)
        return vfs_fallocate(f, 0, w->seg_size);
    /* ZERO: real zeros, so later writes overwrite allocated blocks and the
     * sync after a record write does not have to update block maps. */
    /* The buffer is no larger than the segment: a zeroed megabyte per
     * 64 KiB segment was most of the time of a crash campaign (a fresh
     * mapping, faulted in page by page, for every segment made). */
    size_t chunk = w->seg_size < WAL_ZERO_CHUNK ? (size_t)w->seg_size : WAL_ZERO_CHUNK;
    void *zeros;
    if (posix_memalign(&zeros, VFS_DIRECT_ALIGN, chunk))
        return CL_ENOMEM;
    memset(zeros, 0, chunk);
    int rc = 0;
    for (uint64_t off = 0; off < w->seg_size && rc == 0; off += chunk) {
        uint64_t n = w->seg_size - off < chunk ? w->seg_size - off : chunk;
        rc = vfs_pwrite(f, zeros, (size_t)n, off);
    }
    free(zeros);
    return rc;
}

int wal_segment_create(struct wal *w, uint64_t segno)
{
    struct vfs_file *f = NULL;
    uint8_t *block = NULL;
    char *path = NULL;
    int rc = wal_segment_path(w, segno, &path);
    if (rc)
        return rc;
    rc = vfs_open(w->vfs, path, VFS_O_CREATE | VFS_O_TRUNC, VFS_CLASS_WAL, &f);
    if (rc)
        goto out;
    rc = init_space(w, f);
    if (rc)
        goto out;
    block = calloc(1, WAL_SEG_HEADER);
    if (!block) {
        rc = CL_ENOMEM;
        goto out;
    }
    wal_segment_header_encode(block, w->db_id, segno, w->seg_size);
    rc = vfs_pwrite(f, block, WAL_SEG_HEADER, 0);
    if (rc)
        goto out;
    /* fsync, not fdatasync: the size and allocation changed too. */
    rc = vfs_fsync(f);
    if (rc)
        goto out;
    rc = vfs_close(f);
    f = NULL;
    if (rc)
        goto out;
    rc = vfs_sync_dir(w->vfs, w->dir);
out:
    if (f)
        vfs_close(f);
    free(block);
    free(path);
    return rc;
}

int wal_segment_recyclable(struct wal *w, uint64_t old_segno, struct vfs_file **out)
{
    struct vfs_file *f;
    uint64_t size = 0;
    char *path;
    int rc = wal_segment_path(w, old_segno, &path);
    *out = NULL;
    if (rc)
        return rc;
    rc = vfs_open(w->vfs, path, 0, VFS_CLASS_WAL, &f);
    free(path);
    if (rc)
        return rc;
    rc = vfs_size(f, &size);
    if (rc == 0 && size != w->seg_size)
        rc = 1; /* reusing it would extend it: every later sync would pay for metadata */
    if (rc) {
        vfs_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

int wal_segment_recycle(struct wal *w, struct vfs_file *f, uint64_t old_segno, uint64_t new_segno)
{
    char *from = NULL, *to = NULL;
    uint8_t *block = calloc(1, WAL_SEG_HEADER);
    int rc = block ? 0 : CL_ENOMEM;

    /* The header first, durably, under the old name: the file is renamed
     * only once it names its new segment, so a crash leaves either a
     * retired file below the checkpoint (deleted or recycled again by the
     * next checkpoint) or a ready future segment.  The records of its
     * previous life stay; their LSNs reject them.  Same size, overwritten
     * in place: fdatasync is enough. */
    if (rc == 0) {
        wal_segment_header_encode(block, w->db_id, new_segno, w->seg_size);
        rc = vfs_pwrite(f, block, WAL_SEG_HEADER, 0);
    }
    if (rc == 0)
        rc = vfs_fdatasync(f);
    /* Cold: every page of the file is clean now (its records were synced
     * in its first life, its header just now); dropping them makes the
     * next life's first write of each page read it from the device, as a
     * segment retired long ago and evicted would.  Advice: a backend
     * without a cache to drop is not an error. */
    if (rc == 0 && w->opt.cold_recycle)
        (void)vfs_drop_cache(f);
    int crc = vfs_close(f);
    if (rc == 0)
        rc = crc;
    if (rc == 0)
        rc = wal_segment_path(w, old_segno, &from);
    if (rc == 0)
        rc = wal_segment_path(w, new_segno, &to);
    if (rc == 0)
        rc = vfs_rename(w->vfs, from, to);
    if (rc == 0)
        rc = vfs_sync_dir(w->vfs, w->dir);
    free(block);
    free(from);
    free(to);
    return rc;
}
