/*
 * ut_text.c -- wrapping a paragraph (ut_text.h): bench's --help lines and
 * --list-engines' mappings are generated, so their lengths are not known
 * when they are written.
 */
#include <errno.h>
#include <string.h>

#include "ut_text.h"

int ut_wrap(FILE *f, int col, int indent, int width, const char *text)
{
    int start = col;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, " ");
        if (col > start && col + 1 + (int)n > width) {
            fprintf(f, "\n%*s", indent, "");
            col = start = indent;
        } else if (col > start) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)n, p);
        col += (int)n;
        p += n;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
    return ferror(f) ? -EIO : 0;
}
