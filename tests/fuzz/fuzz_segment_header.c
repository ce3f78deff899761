/*
 * fuzz_segment_header.c -- libFuzzer target: the WAL segment header
 * decoder (wal_segment_header_decode) on any bytes, with the header's
 * checksum resealed when the mode byte asks (fuzz_util.h).
 */
#include "crc32c.h"
#include "endian.h"
#include "fuzz_util.h"
#include "wal_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t buf[WAL_SEG_HEADER];
    struct wal_segment_header h;
    if (size < 1)
        return 0;
    size_t len = size - 1 < sizeof buf ? size - 1 : sizeof buf;
    memcpy(buf, data + 1, len);
    if ((data[0] & 1) && len >= WAL_SEG_HDR_LEN)
        put_le32(buf + 40, crc32c(buf, 40));
    if (wal_segment_header_decode(buf, len, &h) == 0 &&
        (h.segment_size < WAL_MIN_SEGMENT || h.segment_size % WAL_SEG_HEADER))
        abort(); /* a header the decoder accepts must describe a usable segment */
    return 0;
}
