/*
 * crc32c.h -- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of every log record and page.  Uses the SSE4.2 crc32 instruction
 * when the CPU has it, a slicing table otherwise; both give the same value.
 * Test vector: crc32c("123456789") == 0xE3069283.
 */
#ifndef CL_CRC32C_H
#define CL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extends crc (0 to start) over buf. */
uint32_t crc32c_extend(uint32_t crc, const void *buf, size_t len);
static inline uint32_t crc32c(const void *buf, size_t len) { return crc32c_extend(0, buf, len); }
/* 1 when the hardware path is in use. */
int crc32c_hw(void);
/* The portable path, exposed so tests can compare both. */
uint32_t crc32c_extend_sw(uint32_t crc, const void *buf, size_t len);

#endif
