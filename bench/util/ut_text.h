/*
 * ut_text.h -- text for a terminal: a paragraph wrapped at a width, for
 * the generated --help and --list-engines.
 */
#ifndef CL_UT_TEXT_H
#define CL_UT_TEXT_H

#include <stdio.h>

/* Writes text's words from column col (where the cursor is) up to width,
 * each further line indented to column indent; ends the line.  A word
 * longer than a line stands alone on its own.  0, or -EIO when f fails. */
int ut_wrap(FILE *f, int col, int indent, int width, const char *text);

#endif
