/*
 * ut_args.h -- what every command's argument parsing shares: the one-line
 * usage error (exit 2), the size parser, and the one splitter of comma
 * lists.
 */
#ifndef CL_UT_ARGS_H
#define CL_UT_ARGS_H

#include <stddef.h>
#include <stdint.h>

#define UT_EXIT_USAGE 2

/* Prints "commitlab <cmd>: <message>" as one line on stderr and exits 2. */
void ut_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* A flag that takes a value, given twice (--clients 4 --clients 8): the
 * first use sets *prev to its value; a second is "commitlab <cmd>: FLAG:
 * given twice ('4', then '8'); give it once" -- with list, "..., with a
 * comma list for several values" -- and exit 2.  No value silently wins. */
void ut_once(const char *cmd, const char *flag, const char **prev, const char *v, int list);

/* Parses a size: decimal digits, then optionally k, M or G (KiB, MiB,
 * GiB; either case), nothing else -- 4096, 64k, 16M, 1G.  Returns 0 with
 * *out set; -EINVAL when s is not a size; -ERANGE when it is more bytes
 * than 64 bits hold (17179869184G is refused, not wrapped to 0). */
int ut_parse_size(const char *s, uint64_t *out);

/* The rule of every comma list a command takes (--engine, --sync,
 * --clients, crash's --model, matrix's --fs, probe's --only, and the
 * words of a set such as --lmdb-flags): items are separated by ',';
 * inside an item "\," is a comma and "\\" a backslash, so any file name
 * can be an item (--engine 'plugin:a\,b.so').  A backslash before
 * anything else, or at the end, is refused, and so is an empty item
 * (",a", "a,,b", "a,") or an empty list.
 *
 * ut_split_list splits arg by that rule: 0 with *items an array of *n
 * strings (each, and the array, to free with ut_list_free); -EINVAL with
 * why saying what is wrong, to follow the value in a message ("'a,,b'
 * has an empty item in its list"). */
#define UT_LIST_RULE "in a list item, \\, is a comma and \\\\ a backslash"
int ut_split_list(const char *arg, char ***items, size_t *n, char *why, size_t wlen);
void ut_list_free(char **items, size_t n);
/* item as a list writes it: ',' and '\' with a backslash before them.
 * A string to free, or NULL when out of memory. */
char *ut_list_escape(const char *item);

#endif
