/*
 * vfs_testing.c -- the helpers of vfs_testing.h: a batch of writes and
 * syncs run one after another, and a durable replace of a small file.
 * Both use only the table's own operations, so they run over any backend
 * (the fault layer's included).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "vfs_testing.h"

int vfs_submit_sequential(struct vfs *v, struct vfs_io *ios, int n)
{
    int first = 0;
    (void)v;
    for (int i = 0; i < n; i++) {
        struct vfs_io *io = &ios[i];
        if (first) {
            io->result = -ECANCELED;
            continue;
        }
        switch (io->op) {
        case VFS_IO_WRITE:
            io->result = vfs_pwrite(io->f, io->buf, io->len, io->off);
            break;
        case VFS_IO_FSYNC:
            io->result = vfs_fsync(io->f);
            break;
        case VFS_IO_FDATASYNC:
            io->result = vfs_fdatasync(io->f);
            break;
        default:
            io->result = -EINVAL;
            break;
        }
        first = io->result;
    }
    return first;
}

int vfs_write_file_durable(struct vfs *v, const char *dir, const char *name, const void *buf,
                           size_t len, enum vfs_class cls)
{
    char *tmp = NULL, *dst = NULL;
    struct vfs_file *f = NULL;
    int rc;

    if (!dir || !*dir)
        dir = ".";
    if (asprintf(&tmp, "%s/%s.tmp", dir, name) < 0) {
        tmp = NULL;
        rc = -ENOMEM;
        goto out;
    }
    if (asprintf(&dst, "%s/%s", dir, name) < 0) {
        dst = NULL;
        rc = -ENOMEM;
        goto out;
    }
    rc = vfs_open(v, tmp, VFS_O_CREATE | VFS_O_TRUNC, cls, &f);
    if (rc)
        goto out;
    rc = vfs_pwrite(f, buf, len, 0);
    if (!rc)
        rc = vfs_fsync(f);
    {
        int crc = vfs_close(f);
        if (!rc)
            rc = crc;
    }
    if (!rc)
        rc = vfs_rename(v, tmp, dst);
    if (rc) {
        vfs_unlink(v, tmp); /* best effort: the old file is still intact */
        goto out;
    }
    rc = vfs_sync_dir(v, dir);
out:
    free(tmp);
    free(dst);
    return rc;
}

