/*
 * ut_args.c -- the argument helpers every command uses (ut_args.h): the
 * usage error, and the size parser, which refuses what does not fit in
 * 64 bits instead of letting the shift wrap.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ut_args.h"

void ut_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "commitlab %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(UT_EXIT_USAGE);
}

int ut_parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned shift = 0;

    if (*s < '0' || *s > '9') /* strtoull would take a sign or spaces */
        return -EINVAL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end)
        return -EINVAL;
    if (v > (UINT64_MAX >> shift))
        return -ERANGE;
    *out = (uint64_t)v << shift;
    return 0;
}
