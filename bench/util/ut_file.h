/*
 * ut_file.h -- file helpers the commands share: removing a directory
 * tree, reading a pipe's fixed-size records whole, copying a file.
 */
#ifndef CL_UT_FILE_H
#define CL_UT_FILE_H

#include <stddef.h>

/* Removes path and everything below it, as much of it as it can (it goes
 * on past a file it cannot remove).  0, or -errno of the first failure;
 * a path that does not exist is not one. */
int ut_rm_tree(const char *path);

/* Reads len bytes from fd, across short reads and EINTR; returns how many
 * it got before end of file or an error (len when whole). */
size_t ut_read_full(int fd, void *buf, size_t len);

/* Copies the regular file src to dst (created or truncated, 0644).
 * 0 or -errno. */
int ut_copy_file(const char *src, const char *dst);

/* Undoes /proc/self/mountinfo's escapes (space, tab, newline and
 * backslash written as \ooo) in place. */
void ut_mountinfo_unescape(char *s);

#endif
