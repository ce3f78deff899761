/*
 * bench_config.h -- one run of the benchmark harness as the command line
 * describes it, and the table of knobs it is made from (bench_knobs.h).
 * The list knobs may be given as comma lists; `commitlab bench` runs the
 * cross product of every list, one struct bench_config per run.  Every
 * part of the harness reads a configuration; none changes it once the run
 * has started.
 */
#ifndef CL_BENCH_CONFIG_H
#define CL_BENCH_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_knobs.h"
#include "commitlab.h"

/* How a knob's value is read, checked and written. */
enum bench_knob_type {
    KT_WORD,  /* a string, one of choices */
    KT_ENUM,  /* an enum option of libcommitlab (.option): its value, read from
               * the word its names[value] is */
    KT_INDEX, /* an int: the index of a word of choices */
    KT_ONOFF, /* an int: on = 1, off = 0 */
    KT_UINT,  /* an integer in [min, max] */
    KT_SIZE,  /* bytes, with an optional k/M/G, in [min, max] */
    KT_RATIO, /* a fraction in [0, 1] */
    KT_SECS,  /* seconds in the range */
    KT_NUM,   /* a number in the range */
    KT_COUNT, /* a positive integer */
    KT_SEED,  /* a non-negative integer */
    KT_PATH,  /* a path, not empty */
    KT_TRUE,  /* a flag without a value: sets the int to 1 */
    KT_FALSE, /* a flag without a value: sets the int to 0 */
    KT_SET,   /* a comma set of choices: bit i for word i */
};

/* Flags of a knob. */
#define KF_LIST 0x0001u           /* takes a comma list: the cross product runs each value */
#define KF_LABEL 0x0002u          /* in the short label of a run, not among its varying knobs */
#define KF_SERIES 0x0004u         /* names a series (engine, workload, sync, clients), not a knob of it */
#define KF_CSV 0x0008u            /* a column of the CSV */
#define KF_ENGINE 0x0010u         /* the engine maps it: its driver must declare it, else n/a */
#define KF_KV 0x0020u             /* the kv workload's: null in the JSON of another */
#define KF_TPCB 0x0040u           /* the tpcb workload's */
#define KF_NULL_ZERO 0x0080u      /* null in the JSON when 0 */
#define KF_NULL_WITH_TXNS 0x0100u /* null in the JSON when --txns is set */
#define KF_IF_ZIPF 0x0200u        /* null in the JSON unless --dist zipf */
#define KF_CLEARS_TXNS 0x0400u    /* giving it clears --txns */
#define KF_OPEN_MIN 0x0800u       /* the range excludes min */
#define KF_OPEN_MAX 0x1000u       /* the range excludes max */
#define KF_DEFAULT_ANY 0x2000u    /* its default is what every engine does (--pipeline 1: one blocking
                                   * commit at a time): given at the default, no engine needs to map it */
#define KF_REPEAT 0x4000u         /* may be given again: the values joined by ';', none holding one */
#define KF_SPARE                                                                                                       \
    0x8000u /* a spare row (the last rows of bench_knobs.h): an option of                                              \
             * libcommitlab that no row names takes one, with its flag                                                 \
             * ("--commit-delay-us" for commit_delay_us), JSON member (its                                             \
             * name), type, list and the library's default, range and help;                                            \
             * a spare row no option took is no knob (bench_knob_count) */

/* The help sections, in the order --help prints them. */
enum bench_knob_group { KG_RUN, KG_KV, KG_TPCB, KG_COMMIT, KG_ENGINE, KG_COUNT };

enum bench_knob {
#define BENCH_KNOB_ENUM_(id, ...) K_##id,
    BENCH_KNOBS(BENCH_KNOB_ENUM_)
#undef BENCH_KNOB_ENUM_
    K_COUNT
};

/* A row of the table, as bench_config.c keeps it: the default, range,
 * words and help of a row with .option filled from the library when the
 * table is first read (bench_knob), and every row's place in the sweep. */
struct cl_option_info;
struct bench_knob_def {
    const char *flag;             /* "--segment-size" */
    const char *key;              /* the JSON config member: "segment_size" */
    enum bench_knob_type type;
    size_t off, size;             /* the field of struct bench_config */
    const char *dflt;             /* as the flag would take it, or NULL */
    const char *choices;          /* comma-separated words, or NULL */
    double min, max;
    unsigned flags;               /* KF_* */
    const char *owner;            /* the engine whose knob it is, or NULL */
    unsigned sweep;               /* place in the cross product, 1 outermost; 0: not a list (from
                                   * bench_config.c's sweep_order, not from the row) */
    enum bench_knob_group group;
    const char *help;
    const char *option;           /* an option of libcommitlab: its cl_options field, else NULL */
    const struct cl_option_info *lib; /* ... and the library's row of it, where the fields above come from */
};

/* LMDB's flags, as --lmdb-flags sets them (bit i: its i-th word). */
#define LMDB_F_NOMETASYNC 1u
#define LMDB_F_WRITEMAP 2u
#define LMDB_F_MAPASYNC 4u

struct bench_config {
    /* every knob of bench_knobs.h, by its field name */
#define BENCH_KNOB_FIELD_(id, field, ctype, ...) ctype field;
    BENCH_KNOBS(BENCH_KNOB_FIELD_)
#undef BENCH_KNOB_FIELD_

    /* which knobs the user gave explicitly (an engine that cannot express
     * an explicit knob runs n/a rather than ignoring it) */
    unsigned char given[K_COUNT];
    /* the list knobs other than engine, sync and clients that vary in
     * this sweep, with their values ("value-size=100"), for the table */
    char varying[160];

    /* Not knobs: set by a command that runs the configuration somewhere
     * of its own (commitlab matrix), NULL otherwise. */
    const char *count_device;           /* the block device (its /sys/block name) whose counters the run reads when
                                           the filesystem of dir names none (FUSE: a pool on a file or a device) */
    void (*window)(void *arg, int end); /* called as the measured phase starts (0) and ends (1), right
                                           after its counters are read */
    void *window_arg;
};

/* How many knobs there are: the rows of bench_knobs.h but the spare rows
 * no option of libcommitlab took, which come last.  A loop over the
 * knobs runs to it; K_COUNT, its bound, sizes arrays and says "none". */
int bench_knob_count(void);
/* The knobs that take a list, in the cross product's order (the
 * outermost first); *n gets how many. */
const enum bench_knob *bench_sweep_list(size_t *n);
/* The row of knob k. */
const struct bench_knob_def *bench_knob(enum bench_knob k);
/* The flag of a knob ("--sync-method"). */
const char *bench_knob_flag(enum bench_knob k);
/* The knob whose flag or whose JSON member this is, or K_COUNT. */
enum bench_knob bench_knob_by_flag(const char *flag);
enum bench_knob bench_knob_by_key(const char *key);
/* The accepted values of knob k, as its one-line error names them
 * ("an integer in [1, 64]"). */
void bench_knob_accepted(enum bench_knob k, char *buf, size_t len);
/* 0 when v is a value knob k accepts, else -EINVAL. */
int bench_knob_check(enum bench_knob k, const char *v);
/* Sets knob k of c to v (checked), marking it given when given is 1. */
void bench_knob_set(struct bench_config *c, enum bench_knob k, const char *v, int given);
/* Copies knob k's value from src to dst (a string stays src's: it must
 * outlive dst), marking it given in dst. */
void bench_knob_copy(struct bench_config *dst, const struct bench_config *src, enum bench_knob k);
/* The number knob k of c holds: an integer's, a flag's, an enum's value
 * (a knob of libcommitlab's table holds one of these). */
uint64_t bench_knob_int(const struct bench_config *c, enum bench_knob k);
/* The word knob k of c holds: an enum option's name ("group" for --sync),
 * a word's or a path's text; "" for a knob of another type. */
const char *bench_knob_word(const struct bench_config *c, enum bench_knob k);
/* Writes knob k of c as the flag would take it ("16M", "on", "zipf"). */
void bench_knob_format(const struct bench_config *c, enum bench_knob k, char *buf, size_t len);

/* Fills every knob's default: one client, 10 s, kv, commitlab --sync
 * commit, and the library's own defaults for its knobs. */
void bench_config_defaults(struct bench_config *c);

/* What `commitlab crash` runs an engine under where the user did not say
 * otherwise: small segments, a small cache and frequent checkpoints, so
 * that crashes meet switches, evictions and checkpoints.  Each value as
 * the flag takes it.  Here, beside the table, because the report reads
 * it too: a crash row's command line leaves these out. */
struct bench_knob_value {
    enum bench_knob knob;
    const char *value;
};
extern const struct bench_knob_value bench_crash_defaults[];
extern const size_t bench_crash_ndefaults;
/* "none,periodic,commit,...": every sync policy the library has, in its
 * order (a policy added to the library is accepted unchanged); and only
 * those that make a commit durable ("commit,group,..."). */
const char *bench_sync_choices(void);
/* 1 when an --engine value names a plugin ("plugin:..."), which the
 * command loads once the command line is read (drivers/driver.h,
 * bench_cli_load_plugins). */
int bench_engine_is_plugin(const char *engine);
/* The words --engine accepts beside plugin:...: the table of peers gives
 * them (drivers/driver.c) as the program starts. */
void bench_knob_engines(const char *words);
const char *bench_sync_durable_choices(void);

/* The "config" object of a JSON line (docs/bench.md): every knob its own
 * member, in the table's order, null where the knob does not apply to the
 * engine or the workload (unless given); and the JSON value a knob holds
 * at its default, which is what a line means when the flag was not given
 * (the report reads old lines by it). */
struct json_t;
struct json_t *bench_config_json(const struct bench_config *cfg);
struct json_t *bench_knob_default_json(enum bench_knob k);

#endif
