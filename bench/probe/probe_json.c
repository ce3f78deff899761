/*
 * probe_json.c -- the probe's machine-readable record: one JSON object on
 * one line (so a file of several runs is JSON Lines), with the
 * configuration, the environment, every row and the verdict.
 *
 * This is the only place that knows the JSON layout, written with careful
 * fprintf and one string escaper; when the project takes a JSON library
 * for the benchmark, only this file changes.
 *
 *   {"tool":"commitlab probe","version":"0.1","time":"...Z",
 *    "config":{"dir":..,"seconds":..,"beyond_seconds":..,"files":..,"repeat":..,"sections":[..],
 *              "block_size":8192,"file_size":16777216},
 *    "environment":{"kernel":..,"machine":..,"fs_type":..,"fs_magic":..,"mount_source":..,
 *                   "mount_point":..,"mount_options":..,"device":..,"device_class":..,
 *                   "write_cache":..,"loop_backing_file":..,"fua":"1"|"0"|null,
 *                   "device_chain":[{"device":..,"disk":..,"device_class":..,"write_cache":..,
 *                                    "fua":bool|null,"backing_file":..}, ...],"in_memory":bool},
 *    "rows":[{"section":..,"label":..,"op":..,"status":"ok"|"n/a"|"n/a*"|"failed"|"interrupted",
 *             "reason":..,"ops":..,"seconds":..,"ops_per_sec":..,"usecs_per_op":..,
 *             "p50_usecs":..,"p99_usecs":..,"max_usecs":..,
 *             "concurrency":null | {"streams":..,"unit":"thread"|"chain","usecs_per_op":..},
 *             "ops_per_sec_min":..,"ops_per_sec_median":..,"ops_per_sec_max":..,
 *             "rounds":[{"status":..,"reason":..,"ops":..,"seconds":..,"ops_per_sec":..,
 *                        "p50_usecs":..,"p99_usecs":..,"max_usecs":..}, ...]}, ...],
 *    "interrupted":null | {"signal":"SIGINT"|"SIGTERM"|"SIGHUP","round":..},
 *    "verdict":null | {"durability":"none"|"suspect"|"plausible"|"unknown","text":..,
 *               "fdatasync_usecs":..,"write_usecs":..,"o_direct":bool,"o_direct_reason":..}}
 *
 * Absent numbers are null; a row that was not measured has no ops fields.
 * ops and seconds are summed over the rounds (--repeat), ops_per_sec is
 * their median (with one round, ops / seconds), and the table shows it.
 * usecs_per_op is a serial row's mean time per op; a concurrent row's is
 * null, its time per op per stream being concurrency.usecs_per_op.
 * A signal stops the probe with the record written all the same: the rows
 * that ran, each with its rounds so far, the one in progress "interrupted"
 * (its round in progress "interrupted" with what it measured until then:
 * ops fields when an operation completed), and "verdict" null;
 * "interrupted" names the signal and, with --repeat above 1, the round in
 * progress ("round", from 1).  An interrupted row's numbers are those of
 * its rounds that ran to the end, or, with none, those of the interrupted
 * round.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "commitlab.h"
#include "probe.h"
#include "ut_build.h"

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.10g", v);
    else
        fputs("null", f);
}

static void json_key(FILE *f, int *first, const char *k)
{
    if (!*first)
        fputc(',', f);
    *first = 0;
    json_str(f, k);
    fputc(':', f);
}

static void kv_str(FILE *f, int *first, const char *k, const char *v)
{
    json_key(f, first, k);
    if (v)
        json_str(f, v);
    else
        fputs("null", f);
}

static void kv_num(FILE *f, int *first, const char *k, double v)
{
    json_key(f, first, k);
    json_num(f, v);
}

static void kv_bool(FILE *f, int *first, const char *k, int v)
{
    json_key(f, first, k);
    fputs(v ? "true" : "false", f);
}

/* v < 0: null */
static void kv_bool_or_null(FILE *f, int *first, const char *k, int v)
{
    json_key(f, first, k);
    fputs(v < 0 ? "null" : v ? "true" : "false", f);
}

static const char *status_name(enum probe_status s)
{
    switch (s) {
    case ROW_OK: return "ok";
    case ROW_NA: return "n/a";
    case ROW_NA_FS: return "n/a*";
    case ROW_FAILED: return "failed";
    case ROW_INTERRUPTED: return "interrupted";
    }
    return "failed";
}

int probe_json_write(FILE *f, const struct probe_ctx *c, const char *const *section_names)
{
    struct utsname u;
    char when[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    int first = 1, sub;

    if (uname(&u) != 0)
        memset(&u, 0, sizeof u);
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);

    fputc('{', f);
    kv_str(f, &first, "tool", "commitlab probe");
    kv_str(f, &first, "version", ut_version());
    kv_str(f, &first, "commit", ut_source_commit());
    kv_str(f, &first, "time", when);

    json_key(f, &first, "config");
    fputc('{', f);
    sub = 1;
    kv_str(f, &sub, "dir", c->dir);
    kv_num(f, &sub, "seconds", c->secs);
    kv_num(f, &sub, "beyond_seconds", probe_beyond_secs(c));
    kv_num(f, &sub, "files", c->files);
    kv_num(f, &sub, "repeat", c->repeat);
    json_key(f, &sub, "sections");
    fputc('[', f);
    for (int i = 0, n = 0; i < SEC_COUNT; i++)
        if (c->only & (1u << i)) {
            if (n++)
                fputc(',', f);
            json_str(f, section_names[i]);
        }
    fputc(']', f);
    kv_num(f, &sub, "block_size", PROBE_BLCKSZ);
    kv_num(f, &sub, "file_size", PROBE_FILE_SIZE);
    fputc('}', f);

    const struct probe_fsinfo *fs = &c->fs;
    char magic[24];
    snprintf(magic, sizeof magic, "0x%lx", fs->magic);
    json_key(f, &first, "environment");
    fputc('{', f);
    sub = 1;
    kv_str(f, &sub, "hostname", u.nodename);
    kv_str(f, &sub, "kernel", u.release);
    kv_str(f, &sub, "machine", u.machine);
    kv_str(f, &sub, "fs_type", fs->fstype);
    kv_str(f, &sub, "fs_magic", magic);
    kv_str(f, &sub, "mount_source", fs->source[0] ? fs->source : NULL);
    kv_str(f, &sub, "mount_point", fs->mountpoint[0] ? fs->mountpoint : NULL);
    kv_str(f, &sub, "mount_options", fs->options[0] ? fs->options : NULL);
    kv_str(f, &sub, "device", fs->device[0] ? fs->device : NULL);
    kv_str(f, &sub, "device_class", fs->device_class[0] ? fs->device_class : NULL);
    kv_str(f, &sub, "write_cache", fs->write_cache[0] ? fs->write_cache : NULL);
    kv_str(f, &sub, "loop_backing_file", fs->backing[0] ? fs->backing : NULL);
    kv_str(f, &sub, "fua", fs->fua[0] ? fs->fua : NULL);
    json_key(f, &sub, "device_chain");
    fputc('[', f);
    for (int i = 0; i < fs->nchain; i++) {
        const struct probe_dev *d = &fs->chain[i];
        int dsub = 1;
        fputs(i ? ",{" : "{", f);
        kv_str(f, &dsub, "device", d->name);
        kv_str(f, &dsub, "disk", d->disk);
        kv_str(f, &dsub, "device_class", d->device_class[0] ? d->device_class : NULL);
        kv_str(f, &dsub, "write_cache", d->write_cache[0] ? d->write_cache : NULL);
        kv_bool_or_null(f, &dsub, "fua", d->fua[0] ? (strcmp(d->fua, "1") == 0) : -1);
        kv_str(f, &dsub, "backing_file", d->backing[0] ? d->backing : NULL);
        fputc('}', f);
    }
    fputc(']', f);
    kv_bool(f, &sub, "in_memory", fs->in_memory);
    fputc('}', f);

    json_key(f, &first, "rows");
    fputc('[', f);
    for (size_t i = 0; i < c->nrows; i++) {
        const struct probe_row *r = &c->rows[i];
        if (i)
            fputc(',', f);
        fputc('{', f);
        sub = 1;
        kv_str(f, &sub, "section", section_names[r->section]);
        kv_str(f, &sub, "label", r->label);
        kv_str(f, &sub, "op", r->op);
        kv_str(f, &sub, "status", status_name(r->status));
        kv_str(f, &sub, "reason", r->reason[0] ? r->reason : NULL);
        if (r->status == ROW_OK || (r->status == ROW_INTERRUPTED && r->ops && r->secs > 0)) {
            kv_num(f, &sub, "ops", (double)r->ops);
            kv_num(f, &sub, "seconds", r->secs);
            kv_num(f, &sub, "ops_per_sec", r->ops_per_sec);
            kv_num(f, &sub, "usecs_per_op", r->stream ? NAN : r->usecs_per_op);
            kv_num(f, &sub, "p50_usecs", r->has_latency ? r->p50_us : NAN);
            kv_num(f, &sub, "p99_usecs", r->has_latency ? r->p99_us : NAN);
            kv_num(f, &sub, "max_usecs", r->has_latency ? r->max_us : NAN);
            json_key(f, &sub, "concurrency");
            if (r->stream) {
                int csub = 1;
                fputc('{', f);
                kv_num(f, &csub, "streams", r->streams);
                kv_str(f, &csub, "unit", r->stream);
                kv_num(f, &csub, "usecs_per_op", r->usecs_per_op * r->streams);
                fputc('}', f);
            } else {
                fputs("null", f);
            }
            kv_num(f, &sub, "ops_per_sec_min", r->ops_per_sec_min);
            kv_num(f, &sub, "ops_per_sec_median", r->ops_per_sec);
            kv_num(f, &sub, "ops_per_sec_max", r->ops_per_sec_max);
        }
        json_key(f, &sub, "rounds");
        fputc('[', f);
        for (unsigned k = 0; k < r->nrounds; k++) {
            const struct probe_round *x = &r->rounds[k];
            int rsub = 1;
            fputs(k ? ",{" : "{", f);
            kv_str(f, &rsub, "status", status_name(x->status));
            kv_str(f, &rsub, "reason", x->reason[0] ? x->reason : NULL);
            if (x->status == ROW_OK || (x->status == ROW_INTERRUPTED && x->ops && x->secs > 0)) {
                kv_num(f, &rsub, "ops", (double)x->ops);
                kv_num(f, &rsub, "seconds", x->secs);
                kv_num(f, &rsub, "ops_per_sec", (double)x->ops / x->secs);
                kv_num(f, &rsub, "p50_usecs", x->has_latency ? x->p50_us : NAN);
                kv_num(f, &rsub, "p99_usecs", x->has_latency ? x->p99_us : NAN);
                kv_num(f, &rsub, "max_usecs", x->has_latency ? x->max_us : NAN);
            }
            fputc('}', f);
        }
        fputc(']', f);
        fputc('}', f);
    }
    fputc(']', f);

    json_key(f, &first, "interrupted");
    if (c->stopped_by) {
        fputc('{', f);
        sub = 1;
        kv_str(f, &sub, "signal", c->stopped_by);
        if (c->repeat > 1)
            kv_num(f, &sub, "round", c->round + 1);
        fputc('}', f);
    } else {
        fputs("null", f);
    }

    json_key(f, &first, "verdict");
    if (c->durability) {
        fputc('{', f);
        sub = 1;
        kv_str(f, &sub, "durability", c->durability);
        kv_str(f, &sub, "text", c->verdict);
        kv_num(f, &sub, "fdatasync_usecs", c->fdatasync_us >= 0 ? c->fdatasync_us : NAN);
        kv_num(f, &sub, "write_usecs", c->write_us >= 0 ? c->write_us : NAN);
        kv_bool(f, &sub, "o_direct", c->odirect_ok == 1);
        kv_str(f, &sub, "o_direct_reason", c->odirect_why[0] ? c->odirect_why : NULL);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs("}\n", f);
    return ferror(f) ? -1 : 0;
}
