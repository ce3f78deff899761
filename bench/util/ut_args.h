/*
 * ut_args.h -- what every command's argument parsing shares: the one-line
 * usage error (exit 2) and the size parser.
 */
#ifndef CL_UT_ARGS_H
#define CL_UT_ARGS_H

#include <stdint.h>

#define UT_EXIT_USAGE 2

/* Prints "commitlab <cmd>: <message>" as one line on stderr and exits 2. */
void ut_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Parses a size: decimal digits, then optionally k, M or G (KiB, MiB,
 * GiB; either case), nothing else -- 4096, 64k, 16M, 1G.  Returns 0 with
 * *out set; -EINVAL when s is not a size; -ERANGE when it is more bytes
 * than 64 bits hold (17179869184G is refused, not wrapped to 0). */
int ut_parse_size(const char *s, uint64_t *out);

#endif
