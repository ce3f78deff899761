/*
 * matrix.h -- `commitlab matrix --fs LIST [matrix options] [bench
 * options]` (matrix.c): bench's configurations on each filesystem, made
 * fresh (mx_fs.h).  0 when every run ran, 1 when one failed or a
 * filesystem could not be set up, 2 for bad arguments or a missing tool,
 * 128 + the signal when interrupted.
 */
#ifndef CL_MATRIX_H
#define CL_MATRIX_H

int cmd_matrix(int argc, char **argv);

#endif
