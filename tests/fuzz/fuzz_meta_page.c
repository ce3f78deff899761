/*
 * fuzz_meta_page.c -- libFuzzer target: the meta page decoder
 * (pg_meta_decode), which is also where the checkpoint lives (its LSN and
 * the segment the log continues in; there is no separate checkpoint
 * record).  Mode byte (fuzz_util.h): bit 0 reseals the page's checksum,
 * bit 1 picks the slot (page 0 or 1).
 */
#include "fuzz_util.h"
#include "pager_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t page[PG_SIZE] = {0};
    struct store_meta m;
    if (size < 1)
        return 0;
    size_t len = size - 1 < sizeof page ? size - 1 : sizeof page;
    memcpy(page, data + 1, len);
    uint64_t slot = (data[0] >> 1) & 1;
    if (data[0] & 1)
        pg_seal(page);
    if (pg_meta_decode(page, slot, &m) == 0 &&
        (m.page_size != PG_SIZE || m.npages < 2 || m.root == 1 || (m.root && m.root >= m.npages)))
        abort(); /* an accepted meta page must be one the store can use */
    return 0;
}
