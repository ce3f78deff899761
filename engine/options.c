/*
 * options.c -- struct cl_options, described once: each option's name,
 * place, the sync policy that reads it, accepted range, default and one
 * line of help, in one table.  cl_options_init fills the defaults from it
 * and cl_open checks every option against it, so an out-of-range value is
 * refused with CL_EINVAL and a detail naming the option and its range,
 * never clamped or replaced behind the caller's back.  (The enum options'
 * ranges are their enums', with their values' names.)  The public API
 * hands the rows out (cl_option_info), so a program offering the options
 * -- commitlab bench's flags -- takes them from here.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commitlab.h"
#include "engine_internal.h"
#include "wal.h"

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define TIB (1ull << 40)

#define ALL CL_OPTION_ALL_POLICIES

/* The names of the enums' values, NULL after the last. */
static const char *const policy_names[] = {
#define CL_SYNC_NAME_(e, n) #n,
    CL_SYNC_POLICIES(CL_SYNC_NAME_)
#undef CL_SYNC_NAME_
    NULL};
const char *const cl_method_names[] = {"fdatasync", "fsync", "dsync", "direct", "rwf-dsync", NULL};
static const char *const segments_names[] = {"fresh", "recycle", NULL};
static const char *const seginit_names[] = {"zero", "sparse", "fallocate", NULL};
static const char *const uring_sync_names[] = {"fsync", "rwf-dsync", NULL};
static const char *const wait_names[] = {"block", "spin", "adaptive", NULL};
static const char *const log_insert_names[] = {"mutex", "slots", NULL};

/* OPT(field, policy, type, min, max, default, unit, names, help): one row. */
#define OPT(field_, policy_, type_, lo, hi, dflt_, unit_, names_, help_)                                    \
    {.info = {.name = #field_, .type = CL_OPTION_##type_, .policy = policy_, .min = lo, .max = hi,          \
              .dflt = dflt_, .unit = unit_, .names = names_, .help = help_},                                \
     .offset = offsetof(struct cl_options, field_), .size = sizeof(((struct cl_options *)0)->field_)}

/* The segment size must also be a multiple of the segment header block,
 * and uring_sync rwf-dsync needs a method that links a sync (checked
 * beside the table, in cl_options_check). */
static const struct cl_option_desc table[] = {
    OPT(sync, ALL, ENUM, 0, CL_SYNC_NPOLICIES - 1, CL_SYNC_COMMIT, "policy", policy_names,
        "when and by whom the log is made durable"),
    OPT(method, ALL, ENUM, 0, CL_METHOD_RWF_DSYNC, CL_METHOD_FDATASYNC, "method", cl_method_names,
        "the call that makes bytes durable (rwf-dsync: pwritev2 with RWF_DSYNC, each write durable)"),
    OPT(elr, ALL, FLAG, 0, 1, 1, "flag", NULL,
        "early lock release: the writer lock is released before the commit is durable"),
    OPT(segments, ALL, ENUM, 0, CL_SEGMENTS_RECYCLE, CL_SEGMENTS_FRESH, "policy", segments_names,
        "new log segments, or retired ones renamed for reuse"),
    OPT(segment_init, ALL, ENUM, 0, CL_SEGINIT_FALLOCATE, CL_SEGINIT_ZERO, "mode", seginit_names,
        "how a fresh segment is made"),
    OPT(recycle_max, ALL, NUMBER, 1, WAL_POOL_MAX, 4, "segments", NULL,
        "segments recycle: retired segments kept at most"),
    OPT(prealloc, ALL, NUMBER, 0, WAL_POOL_MAX, 0, "segments", NULL, "segments a background thread keeps ready ahead"),
    OPT(segment_size, ALL, NUMBER, WAL_MIN_SEGMENT, CL_MAX_SEGMENT_SIZE, 16 * MIB, "bytes", NULL,
        "bytes of one log segment"),
    OPT(cache_size, ALL, NUMBER, 64 * KIB, 64 * GIB, 64 * MIB, "bytes", NULL, "page cache bytes"),
    OPT(checkpoint_bytes, ALL, NUMBER, 0, TIB, 64 * MIB, "bytes", NULL, "log bytes between checkpoints (0: at close)"),
    OPT(interval_ms, CL_SYNC_PERIODIC, NUMBER, 1, 60000, 200, "ms", NULL, "ms between syncs"),
    OPT(commit_delay_us, CL_SYNC_GROUP, NUMBER, 0, 100000, 0, "us", NULL,
        "us a leader waits for followers (PostgreSQL's commit_delay)"),
    OPT(commit_siblings, CL_SYNC_GROUP, NUMBER, 0, 1000, 5, "transactions", NULL,
        "transactions in flight before a leader waits (commit_siblings)"),
    OPT(uring_depth, CL_SYNC_URING, NUMBER, 1, CL_MAX_URING_DEPTH, 4, "chains", NULL, "chains in flight"),
    OPT(max_batch, CL_SYNC_GROUP, NUMBER, 0, MIB, 0, "bytes", NULL,
        "log bytes one leader writes at most (0: the buffer)"),
    OPT(flusher_spin_us, CL_SYNC_FLUSHER, NUMBER, 0, 100000, 0, "us", NULL, "us to spin before sleeping"),
    OPT(sync_latency_us, ALL, NUMBER, 0, 10000000, 0, "us", NULL, "us added after every sync: an emulated slow device"),
    OPT(create, ALL, FLAG, 0, 1, 1, "flag", NULL, "create the database if it is absent"),
    OPT(cold_recycle, ALL, FLAG, 0, 1, 0, "flag", NULL,
        "segments recycle: a retired segment leaves the page cache before its reuse, so a write of less "
        "than a page into it reads from the device first"),
    OPT(uring_sync, CL_SYNC_URING, ENUM, 0, CL_URING_SYNC_RWF_DSYNC, CL_URING_SYNC_FSYNC, "mode", uring_sync_names,
        "a linked fsync after each chain's write, or writes that carry RWF_DSYNC themselves"),
    OPT(no_final_checkpoint, ALL, FLAG, 0, 1, 0, "flag", NULL,
        "close without a checkpoint: the log is synced and left for the next open to recover, as after a crash"),
    OPT(wait, ALL, ENUM, 0, CL_WAIT_ADAPTIVE, CL_WAIT_BLOCK, "mode", wait_names,
        "group, uring, flusher: how a committer waits for durability (block: sleep; spin: never sleep; "
        "adaptive: spin, yield, then sleep)"),
    OPT(wait_spin_us, ALL, NUMBER, 0, 100000, 0, "us", NULL, "wait adaptive: us to spin before yielding and sleeping"),
    OPT(log_insert, ALL, ENUM, 0, CL_LOG_INSERT_SLOTS, CL_LOG_INSERT_MUTEX, "mode", log_insert_names,
        "how records enter the log buffer (mutex: one appender at a time; slots: appenders join a slot with one "
        "atomic add, its first member takes the log position once, each copies its own records)"),
};

#define NOPTIONS (sizeof table / sizeof *table)

const struct cl_option_desc *cl_option_table(size_t *n)
{
    *n = NOPTIONS;
    return table;
}

int cl_option_count(void) { return (int)NOPTIONS; }

const struct cl_option_info *cl_option_info(int i)
{
    return i >= 0 && (size_t)i < NOPTIONS ? &table[i].info : NULL;
}

static uint64_t get_field(const struct cl_options *o, const struct cl_option_desc *d)
{
    const char *p = (const char *)o + d->offset;
    switch (d->size) {
    case 8: { uint64_t v; memcpy(&v, p, 8); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; } /* ints and enums read as unsigned: -1 is out of range */
    default: return UINT64_MAX;
    }
}

static void set_field(struct cl_options *o, const struct cl_option_desc *d, uint64_t v)
{
    char *p = (char *)o + d->offset;
    if (d->size == 8) {
        memcpy(p, &v, 8);
    } else {
        uint32_t w = (uint32_t)v;
        memcpy(p, &w, 4);
    }
}

static void defaults(struct cl_options *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < NOPTIONS; i++)
        set_field(o, &table[i], table[i].info.dflt);
}

void cl_options_init_sized(struct cl_options *o, size_t size)
{
    struct cl_options d;
    defaults(&d);
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
    if (size > sizeof d)
        memset((char *)o + sizeof d, 0, size - sizeof d); /* what a newer header added: its zero */
}

void cl_options_init(struct cl_options *o) { cl_options_init_sized(o, CL_OPTIONS_SIZE_V0); }

int cl_options_import(const struct cl_options *in, size_t size, struct cl_options *out)
{
    defaults(out);
    if (!in)
        return 0;
    memcpy(out, in, size < sizeof *out ? size : sizeof *out);
    for (size_t i = sizeof *out; i < size; i++)
        if (((const unsigned char *)in)[i]) {
            cl_detail_set("options: byte %zu of the caller's %zu-byte struct cl_options is set, and this "
                          "libcommitlab knows only %zu bytes of options", i, size, sizeof *out);
            return CL_ENOTSUP;
        }
    return 0;
}

int cl_option_set(struct cl_options *o, size_t size, const char *name, uint64_t value)
{
    for (size_t i = 0; name && i < NOPTIONS; i++) {
        const struct cl_option_desc *d = &table[i];
        const struct cl_option_info *f = &d->info;
        if (strcmp(f->name, name) != 0)
            continue;
        if (d->offset + d->size > size) {
            cl_detail_set("option %s: beyond the caller's %zu-byte struct cl_options", name, size);
            return CL_ENOTSUP;
        }
        if (value < f->min || value > f->max) {
            cl_detail_set("option %s = %" PRIu64 " is out of range: %" PRIu64 "..%" PRIu64 " %s", name, value, f->min,
                          f->max, f->unit);
            return CL_EINVAL;
        }
        set_field(o, d, value);
        return 0;
    }
    cl_detail_set("option %s: libcommitlab has no option of that name", name ? name : "(null)");
    return CL_EINVAL;
}

int cl_options_check(const struct cl_options *o)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct cl_option_desc *d = &table[i];
        const struct cl_option_info *f = &d->info;
        uint64_t v = get_field(o, d);
        if (v < f->min || v > f->max) {
            cl_detail_set("option %s = %" PRIu64 " is out of range: %" PRIu64 "..%" PRIu64 " %s", f->name, v, f->min,
                          f->max, f->unit);
            return CL_EINVAL;
        }
    }
    if (o->segment_size % WAL_SEG_HEADER) {
        cl_detail_set("option segment_size = %" PRIu64 " is not a multiple of %u bytes", o->segment_size,
                      (unsigned)WAL_SEG_HEADER);
        return CL_EINVAL;
    }
    if (o->sync == CL_SYNC_URING && o->uring_sync == CL_URING_SYNC_RWF_DSYNC &&
        (o->method == CL_METHOD_DSYNC || o->method == CL_METHOD_DIRECT)) {
        cl_detail_set("option uring_sync = rwf-dsync with method %s: that method links no sync to replace",
                      cl_sync_method_name(o->method));
        return CL_EINVAL;
    }
    if (!wal_policy_for(o->sync)) {
        cl_detail_set("option sync = %s: the policy is not built into this libcommitlab",
                      cl_sync_policy_name(o->sync));
        return CL_ENOTSUP;
    }
    return 0;
}
