/*
 * fuzz_util.h -- shared by the libFuzzer targets in this directory.
 *
 * Each target defines LLVMFuzzerTestOneInput.  Built with clang and
 * -DCL_FUZZ=ON it links libFuzzer (`make fuzz`); in the normal build it
 * links standalone.c instead, which runs the target once on each file
 * named on its command line, so the corpus and every input that once
 * crashed a target are replayed by the test suite.
 *
 * Checksums defeat a fuzzer: almost no mutation of a page or a record
 * keeps its CRC-32C right, so a target that only fed bytes through would
 * test the checksum and little else.  The targets therefore take the first
 * input byte as a mode: with its low bit set they re-seal the checksums of
 * the bytes that follow (as a writer would) before parsing, so the parser
 * behind the checksum sees damaged-but-sealed structures too.
 */
#ifndef CL_FUZZ_UTIL_H
#define CL_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A directory for the target's files, made once per process and removed
 * at exit. */
const char *fuzz_dir(void);

/* Writes len bytes to dir/name (replacing it); aborts on failure, which
 * is the harness's fault, not the input's. */
void fuzz_write(const char *name, const uint8_t *buf, size_t len);

/* Removes dir/name if it exists. */
void fuzz_unlink(const char *name);

#endif
