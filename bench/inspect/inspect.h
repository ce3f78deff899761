/*
 * inspect.h -- `commitlab inspect DIR [--verify] [--records]` (inspect.c):
 * 0 when the database is readable (and, with --verify, every checksum
 * good), 1 otherwise, 2 for bad arguments.
 */
#ifndef CL_INSPECT_H
#define CL_INSPECT_H

int cmd_inspect(int argc, char **argv);

#endif
