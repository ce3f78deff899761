/*
 * fuzz_page_file.c -- libFuzzer target: the page file, opened read-only
 * as `commitlab inspect` opens it, then verified (every reachable page),
 * scanned in full and searched, on a data.clp made of the input.  Mode
 * byte (fuzz_util.h): bit 0 reseals every whole page's checksum, so the
 * meta page and B+tree code sees damaged-but-sealed pages.
 */
#include "fuzz_util.h"
#include "pager_internal.h"
#include "store.h"

static int count(void *arg, const void *k, size_t kl, const void *v, size_t vl)
{
    (void)k;
    (void)kl;
    (void)v;
    (void)vl;
    (*(uint64_t *)arg)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len = size - 1;
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return 0;
    memcpy(buf, data + 1, len);
    if (data[0] & 1)
        for (size_t off = 0; off + PG_SIZE <= len; off += PG_SIZE)
            pg_seal(buf + off);
    fuzz_write(STORE_FILE, buf, len);
    free(buf);

    struct store_config cfg = {.vfs = vfs_posix(), .dir = fuzz_dir(), .cache_size = 64 * PG_SIZE, .readonly = 1};
    struct store *s;
    int created = 0;
    if (store_open(&cfg, &s, &created))
        return 0;
    uint64_t pages = 0, n = 0;
    if (store_verify(s, &pages) == 0) {
        char val[64];
        size_t vl;
        store_scan(s, NULL, 0, NULL, 0, count, &n);
        store_get(s, "a0", 2, val, sizeof val, &vl);
        store_get(s, "key000100", 9, val, sizeof val, &vl);
    }
    store_close(s);
    return 0;
}
