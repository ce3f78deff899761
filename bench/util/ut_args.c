/*
 * ut_args.c -- the argument helpers every command uses (ut_args.h): the
 * usage error; the size parser, which refuses what does not fit in 64
 * bits instead of letting the shift wrap; the refusal of a flag given
 * twice; and the comma lists, split by
 * one rule (a backslash escapes ',' and itself) wherever a command takes
 * one, so that an item can be any file name and no option splits its
 * own way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void ut_once(const char *cmd, const char *flag, const char **prev, const char *v, int list)
{
    if (*prev)
        ut_usage_error(cmd, "%s: given twice ('%s', then '%s'); give it once%s", flag, *prev, v,
                       list ? ", with a comma list for several values" : "");
    *prev = v;
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

void ut_list_free(char **items, size_t n)
{
    for (size_t i = 0; items && i < n; i++)
        free(items[i]);
    free(items);
}

int ut_split_list(const char *arg, char ***items, size_t *n, char *why, size_t wlen)
{
    size_t len = strlen(arg), count = 0, cap = 0;
    char **v = NULL, *item = malloc(len + 1);
    int rc = 0;
    *items = NULL;
    *n = 0;
    if (!item) {
        snprintf(why, wlen, "out of memory");
        return -ENOMEM;
    }
    if (!len) {
        snprintf(why, wlen, "is an empty list");
        free(item);
        return -EINVAL;
    }
    for (size_t i = 0, j = 0;; i++) {
        if (arg[i] == '\\') {
            if (arg[i + 1] != ',' && arg[i + 1] != '\\') {
                snprintf(why, wlen, "has a backslash before %s; %s",
                         arg[i + 1] ? "something other than ',' or '\\'" : "nothing", UT_LIST_RULE);
                rc = -EINVAL;
                break;
            }
            item[j++] = arg[++i];
            continue;
        }
        if (arg[i] && arg[i] != ',') {
            item[j++] = arg[i];
            continue;
        }
        if (!j) { /* an empty item: at the start, between two commas, or at the end */
            snprintf(why, wlen, "has an empty item in its list");
            rc = -EINVAL;
            break;
        }
        item[j] = 0;
        if (count == cap) {
            char **nv = realloc(v, (cap = cap ? 2 * cap : 4) * sizeof *nv);
            if (!nv) {
                rc = -ENOMEM;
                break;
            }
            v = nv;
        }
        if (!(v[count] = strdup(item))) {
            rc = -ENOMEM;
            break;
        }
        count++;
        j = 0;
        if (!arg[i])
            break;
    }
    free(item);
    if (rc) {
        if (rc == -ENOMEM)
            snprintf(why, wlen, "out of memory");
        ut_list_free(v, count);
        return rc;
    }
    *items = v;
    *n = count;
    return 0;
}

char *ut_list_escape(const char *item)
{
    char *out = malloc(2 * strlen(item) + 1), *o = out;
    if (!out)
        return NULL;
    for (; *item; item++) {
        if (*item == ',' || *item == '\\')
            *o++ = '\\';
        *o++ = *item;
    }
    *o = 0;
    return out;
}
