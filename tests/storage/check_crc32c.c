/* check_crc32c.c -- CRC-32C against the RFC 3720 test vectors, hardware and table paths alike. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "testutil.h"

START_TEST(test_vectors)
{
    uint8_t buf[48];
    ck_assert_uint_eq(crc32c("123456789", 9), 0xE3069283u);
    ck_assert_uint_eq(crc32c_extend_sw(0, "123456789", 9), 0xE3069283u);
    memset(buf, 0, 32);
    ck_assert_uint_eq(crc32c(buf, 32), 0x8A9136AAu);
    memset(buf, 0xff, 32);
    ck_assert_uint_eq(crc32c(buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    ck_assert_uint_eq(crc32c(buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    ck_assert_uint_eq(crc32c(buf, 32), 0x113FDB5Cu);
}
END_TEST

START_TEST(test_paths_agree_and_extend)
{
    uint64_t s = tu_seed(42);
    uint8_t *buf = malloc(4099);
    for (int i = 0; i < 4099; i++)
        buf[i] = (uint8_t)tu_rand(&s);
    for (size_t len = 0; len < 4099; len += 37) {
        uint32_t a = crc32c(buf, len), b = crc32c_extend_sw(0, buf, len);
        ck_assert_uint_eq(a, b);
        size_t half = len / 3;
        ck_assert_uint_eq(crc32c_extend(crc32c(buf, half), buf + half, len - half), a);
    }
    free(buf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crc32c");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_vectors);
    tcase_add_test(tc, test_paths_agree_and_extend);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
