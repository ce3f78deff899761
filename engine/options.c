/*
 * options.c -- struct cl_options, described once: each option's name,
 * place, accepted range and default, in one table.  cl_options_init fills
 * the defaults from it and cl_open checks every option against it, so an
 * out-of-range value is refused with CL_EINVAL and a detail naming the
 * option and its range, never clamped or replaced behind the caller's
 * back.  (The enum options' ranges are their enums'.)
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

#define OPT(field, lo, hi, dflt, unit)                                                                   \
    {#field, offsetof(struct cl_options, field), sizeof(((struct cl_options *)0)->field), lo, hi, dflt, \
     unit}

/* The segment size must also be a multiple of the segment header block
 * (checked beside the table). */
static const struct cl_option_desc table[] = {
    OPT(sync, 0, CL_SYNC_NPOLICIES - 1, CL_SYNC_COMMIT, "policy"),
    OPT(method, 0, CL_METHOD_RWF_DSYNC, CL_METHOD_FDATASYNC, "method"),
    OPT(elr, 0, 1, 1, "flag"),
    OPT(segments, 0, CL_SEGMENTS_RECYCLE, CL_SEGMENTS_FRESH, "policy"),
    OPT(segment_init, 0, CL_SEGINIT_FALLOCATE, CL_SEGINIT_ZERO, "mode"),
    OPT(recycle_max, 1, WAL_POOL_MAX, 4, "segments"),
    OPT(prealloc, 0, WAL_POOL_MAX, 0, "segments"),
    OPT(segment_size, WAL_MIN_SEGMENT, CL_MAX_SEGMENT_SIZE, 16 * MIB, "bytes"),
    OPT(cache_size, 64 * KIB, 64 * GIB, 64 * MIB, "bytes"),
    OPT(checkpoint_bytes, 0, UINT64_MAX, 64 * MIB, "bytes"),
    OPT(interval_ms, 1, 60000, 200, "ms"),
    OPT(commit_delay_us, 0, 100000, 0, "us"),
    OPT(commit_siblings, 0, 1000, 5, "transactions"),
    OPT(uring_depth, 1, CL_MAX_URING_DEPTH, 4, "chains"),
    OPT(max_batch, 0, MIB, 0, "bytes"),
    OPT(flusher_spin_us, 0, 100000, 0, "us"),
    OPT(sync_latency_us, 0, 10000000, 0, "us"),
    OPT(create, 0, 1, 1, "flag"),
    OPT(cold_recycle, 0, 1, 0, "flag"),
    OPT(uring_sync, 0, CL_URING_SYNC_RWF_DSYNC, CL_URING_SYNC_FSYNC, "mode"),
};

const struct cl_option_desc *cl_option_table(size_t *n)
{
    *n = sizeof table / sizeof *table;
    return table;
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
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        set_field(o, &table[i], table[i].dflt);
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

int cl_options_check(const struct cl_options *o)
{
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        const struct cl_option_desc *d = &table[i];
        uint64_t v = get_field(o, d);
        if (v < d->min || v > d->max) {
            cl_detail_set("option %s = %" PRIu64 " is out of range: %" PRIu64 "..%" PRIu64 " %s", d->name, v, d->min,
                          d->max, d->unit);
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
