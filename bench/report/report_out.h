/*
 * report_out.h -- the report's text in either format (report_out.c): the
 * same calls write HTML or markdown, so both carry the same numbers.
 */
#ifndef CL_BENCH_REPORT_OUT_H
#define CL_BENCH_REPORT_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"

struct ro {
    FILE *f;
    int md;                       /* markdown, else HTML */
};

/* Text from anywhere (input included), escaped for the format. */
void ro_text(const struct ro *o, const char *s);
void ro_textf(const struct ro *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ro_heading(const struct ro *o, int level, const char *s, const char *id);
void ro_para_begin(const struct ro *o);
void ro_para_end(const struct ro *o);
void ro_para(const struct ro *o, const char *s);
void ro_list_begin(const struct ro *o);
void ro_list_end(const struct ro *o);
void ro_item_begin(const struct ro *o);
void ro_item_end(const struct ro *o);
void ro_code_line(const struct ro *o, const char *s);

/* A table: tw_begin with the headings, then cells row by row. */
struct tw {
    const struct ro *o;
    size_t ncols, col;
};
void tw_begin(struct tw *t, const struct ro *o, const char *id, const char *const *heads, size_t n);
void tw_cell(struct tw *t, const char *cls, const char *style, const char *s);
void tw_num(struct tw *t, double v);
void tw_end(struct tw *t);

/* The sections' tables and lists. */
void ro_table_tps(const struct ro *o, const struct report *r);
void ro_table_latency(const struct ro *o, const struct report *r);
void ro_table_phases(const struct ro *o, const struct report *r);
/* What each commit cost (CPU, context switches, the store's file calls):
 * present when some run has the figures, which lines older than them
 * lack. */
int rp_costs_present(const struct report *r);
void ro_table_costs(const struct ro *o, const struct report *r);
/* Whether the runs cover more than one filesystem; *why says why not. */
int rp_matrix_present(const struct report *r, const char **why);
void ro_table_matrix(const struct ro *o, const struct report *r);
void ro_verdicts(const struct ro *o, const struct report *r);
void ro_table_durability(const struct ro *o, const struct report *r);
void ro_crash_commands(const struct ro *o, const struct report *r);
void ro_environment(const struct ro *o, const struct report *r);
size_t ro_crash_environment(const struct ro *o, const struct report *r);
void ro_commands(const struct ro *o, const struct report *r);
void ro_input(const struct ro *o, const struct report *r);
/* The interrupted bench runs, one row each (ro_input shows them). */
void ro_table_interrupted(const struct ro *o, const struct report *r);

#endif
