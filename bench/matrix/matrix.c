/*
 * matrix.c -- `commitlab matrix`: the same benchmark configurations on
 * several filesystems, each made fresh for the purpose: an image file
 * (sparse) in --workdir, mkfs, a loop device, a mount; then the runs, with
 * the loop device's written sectors (/sys/block/loopN/stat) before and
 * after each one, so that the device bytes per commit say what the
 * filesystem adds to the log's own bytes; then unmount and detach.
 *
 * What it is for: the WAL recycling question (PostgreSQL's wal_recycle,
 * RocksDB's recycle_log_file_num) is a question about the filesystem --
 * on ext4 and XFS an overwrite of written blocks needs no allocation, on
 * btrfs every overwrite allocates anyway -- so it can only be answered by
 * running the same commits on each.
 *
 * Cleanup is part of the contract: whatever happens (a failed mkfs or
 * mount, a failed run, SIGINT, SIGTERM), what this command mounted is
 * unmounted and what it attached is detached before it exits, and what an
 * earlier run that was killed outright left in the same --workdir is
 * removed when the next one starts.  The filesystems themselves -- images,
 * mkfs, loop devices, mounts, and taking them down -- are mx_fs.c; this
 * file is the command: its options, the runs on each filesystem, their
 * medians, the table and the verdict on recycling.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "bench_dirs.h"
#include "drivers/driver.h"
#include "matrix.h"
#include "mx_fs.h"
#include "ut_args.h"
#include "ut_progress.h"
#include "ut_scratch.h"
#include "ut_stats.h"

/* What this command mounted and attached now, for the cleanup: at
 * SIGINT, SIGTERM or SIGHUP (bench_stop_on_signals) the run stops, the
 * sweep skips the rest, and the command takes this down before it exits. */
static struct mx_mount cur = MX_MOUNT_INIT;

/* ---- options -------------------------------------------------------------- */

#define MAX_FS 8

struct fs_opt {
    const char *fs;
    const char *opts;
};

struct matrix_opts {
    const struct mx_fs_kind *fs[MAX_FS];
    size_t nfs;
    const char *workdir;
    uint64_t image_size;
    int image_zero;      /* --image-init zero: write the whole image first */
    unsigned repeat;
    struct fs_opt mount_opts[MAX_FS], mkfs_opts[MAX_FS];
    size_t nmount, nmkfs;
};

static const char *opt_for(const struct fs_opt *o, size_t n, const char *fs)
{
    const char *v = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(o[i].fs, fs) == 0)
            v = o[i].opts;
    return v;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: commitlab matrix --fs LIST [matrix options] [bench options]\n"
            "\n"
            "Runs the bench configurations on each filesystem, made fresh in a loop-mounted\n"
            "image, and says per filesystem whether WAL recycling helps.  Needs root.\n"
            "\n"
            "  --fs LIST            " MX_FS_LIST "\n"
            "  --workdir D          where the images and mount points go (default ./commitlab-matrix.d)\n"
            "  --image-size SIZE    each image file (default 4G); tmpfs: its size limit\n"
            "  --image-init MODE    sparse (default): blocks of the image are allocated on the host\n"
            "                       filesystem as the guest first writes them, at the cost of host\n"
            "                       metadata in the guest's syncs; zero: the image is written whole\n"
            "                       and synced first, like a real device (slower to set up)\n"
            "  --repeat N           runs of each configuration, round by round, each round in a\n"
            "                       shuffled order; the median is reported (default 1; 3 or more\n"
            "                       to judge a difference)\n"
            "  --mount-opts FS:OPTS extra mount options, e.g. ext4:barrier=0 or xfs:logbsize=256k\n"
            "  --mkfs-opts FS:OPTS  extra mkfs options, e.g. \"xfs:-l size=64m\"\n"
            "\n"
            "Every option of commitlab bench is accepted (see commitlab bench --help) except\n"
            "--dir and --reuse.  Unless given, --segment-size is 1M and --checkpoint-bytes 4M\n"
            "here (RocksDB: write_buffer_size 4M), so that even one client crosses several\n"
            "segment switches and checkpoints (and so reuses recycled segments) in a 10 s run.\n");
}

static void parse_fs_opt(const char *flag, const char *v, struct fs_opt *o, size_t *n)
{
    const char *colon = strchr(v, ':');
    if (!colon || colon == v || !colon[1])
        ut_usage_error("matrix", "%s: '%s' is not accepted; expected FS:OPTIONS with FS one of %s", flag, v,
                        MX_FS_LIST);
    char fs[64];
    snprintf(fs, sizeof fs, "%.*s", (int)(colon - v), v);
    const struct mx_fs_kind *k = mx_fs_find(fs);
    if (!k)
        ut_usage_error("matrix", "%s: unknown filesystem '%s'; expected one of %s", flag, fs, MX_FS_LIST);
    if (*n == MAX_FS)
        ut_usage_error("matrix", "%s: at most %d of them", flag, MAX_FS);
    o[*n].fs = k->name;
    o[*n].opts = colon + 1;
    (*n)++;
}

/* Takes matrix's own options out of argv; the rest go to bench's parser. */
static int parse_matrix_args(int argc, char **argv, struct matrix_opts *m, char **rest)
{
    int nrest = 0;
    memset(m, 0, sizeof *m);
    m->workdir = "commitlab-matrix.d";
    m->image_size = 4ull << 30;
    m->repeat = 1;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--fs")) {
            if (!v)
                ut_usage_error("matrix", "--fs needs a value: a list of %s", MX_FS_LIST);
            char *copy = strdup(v);
            for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                const struct mx_fs_kind *k = mx_fs_find(t);
                if (!k)
                    ut_usage_error("matrix", "--fs: '%s' is not accepted; expected a list of %s", t, MX_FS_LIST);
                if (m->nfs == MAX_FS)
                    ut_usage_error("matrix", "--fs: at most %d filesystems", MAX_FS);
                m->fs[m->nfs++] = k;
            }
            free(copy);
        } else if (!strcmp(a, "--workdir")) {
            if (!v || !*v)
                ut_usage_error("matrix", "--workdir needs a directory");
            m->workdir = v;
        } else if (!strcmp(a, "--image-size")) {
            if (!v || ut_parse_size(v, &m->image_size) || m->image_size < (256ull << 20))
                ut_usage_error("matrix", "--image-size: '%s' is not accepted; expected a size of at least 256M",
                                v ? v : "");
        } else if (!strcmp(a, "--image-init")) {
            if (!v || (strcmp(v, "sparse") && strcmp(v, "zero")))
                ut_usage_error("matrix", "--image-init: '%s' is not accepted; expected sparse or zero", v ? v : "");
            m->image_zero = !strcmp(v, "zero");
        } else if (!strcmp(a, "--repeat")) {
            char *end;
            unsigned long r = v ? strtoul(v, &end, 10) : 0;
            if (!v || *end || !*v || r < 1 || r > 100)
                ut_usage_error("matrix", "--repeat: '%s' is not accepted; expected an integer in [1, 100]",
                                v ? v : "");
            m->repeat = (unsigned)r;
        } else if (!strcmp(a, "--mount-opts")) {
            if (!v)
                ut_usage_error("matrix", "--mount-opts needs FS:OPTIONS");
            parse_fs_opt(a, v, m->mount_opts, &m->nmount);
        } else if (!strcmp(a, "--mkfs-opts")) {
            if (!v)
                ut_usage_error("matrix", "--mkfs-opts needs FS:OPTIONS");
            parse_fs_opt(a, v, m->mkfs_opts, &m->nmkfs);
        } else {
            takes = 0;
            rest[nrest++] = argv[i];
        }
        i += takes;
    }
    rest[nrest] = NULL;
    return nrest;
}

/* ---- medians, and the verdict ---------------------------------------------- */

struct cell {
    double tps[100];
    double p99[100], maxms[100], devb[100], waits[100], waitms[100], reused[100], swmax[100];
    unsigned n, errors, unexercised;
    char err[BENCH_ERRLEN];
    int na;
};

/* The median of a cell's samples, which stay in their order; -1 (shown
 * as "-") when there are none. */
static double median(const double *v, unsigned n)
{
    double s[100];
    if (!n)
        return -1;
    memcpy(s, v, n * sizeof *v);
    return ut_median(s, n);
}

/* Half the range over the repeats, relative to the median. */
static double spread(const double *v, unsigned n)
{
    double lo = v[0], hi = v[0], m = median(v, n);
    for (unsigned i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    return m > 0 ? (hi - lo) / 2 / m : 0;
}

/* The label of cfg without its segments= item: recycle and fresh runs
 * with the same label are compared. */
static void pair_key(const struct bench_config *cfg, char *buf, size_t len)
{
    char v[sizeof cfg->varying];
    size_t j = 0;
    for (const char *p = cfg->varying; *p;) {
        const char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (strncmp(p, "segments=", 9) != 0) {
            j += (size_t)snprintf(v + j, sizeof v - j, "%s%.*s", j ? " " : "", (int)n, p);
            if (j >= sizeof v)
                j = sizeof v - 1;
        }
        p += n;
        while (*p == ' ')
            p++;
    }
    v[j] = 0;
    snprintf(buf, len, "%s %s %s %s %u %s %u %s", cfg->engine, cfg->workload, cfg->sync, cfg->segment_init,
             cfg->prealloc, cfg->sync_method, cfg->clients, v);
}

struct verdict {
    unsigned pairs, helps, hurts, unexercised, nwait;
    double log_sum, lo, hi, noise, dev_fresh, dev_recycle, wait_fresh, wait_recycle;
    char text[512];
};

static void judge(const struct mx_fs_kind *k, const char *engine, const struct bench_config *cfgs,
                  const struct cell *cells, size_t n, unsigned repeat, struct verdict *v)
{
    memset(v, 0, sizeof *v);
    v->lo = INFINITY;
    v->hi = -INFINITY;
    unsigned ndev = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(cfgs[i].segments, "recycle") || !cells[i].n || strcmp(cfgs[i].engine, engine))
            continue;
        char ki[512], kj[512];
        pair_key(&cfgs[i], ki, sizeof ki);
        for (size_t j = 0; j < n; j++) {
            if (strcmp(cfgs[j].segments, "fresh") || !cells[j].n)
                continue;
            pair_key(&cfgs[j], kj, sizeof kj);
            if (strcmp(ki, kj))
                continue;
            if (cells[i].unexercised) {
                v->unexercised++;
                continue;
            }
            double r = median(cells[i].tps, cells[i].n), f = median(cells[j].tps, cells[j].n);
            if (r <= 0 || f <= 0)
                continue;
            double ratio = r / f;
            double noise = fmax(spread(cells[i].tps, cells[i].n), spread(cells[j].tps, cells[j].n));
            double thr = fmax(0.03, noise);
            v->pairs++;
            v->log_sum += log(ratio);
            v->lo = fmin(v->lo, ratio - 1);
            v->hi = fmax(v->hi, ratio - 1);
            v->noise = fmax(v->noise, noise);
            if (ratio - 1 > thr)
                v->helps++;
            else if (1 - ratio > thr)
                v->hurts++;
            if (median(cells[i].waitms, cells[i].n) >= 0 && median(cells[j].waitms, cells[j].n) >= 0) {
                v->wait_recycle += median(cells[i].waitms, cells[i].n);
                v->wait_fresh += median(cells[j].waitms, cells[j].n);
                v->nwait++;
            }
            double dr = median(cells[i].devb, cells[i].n), df = median(cells[j].devb, cells[j].n);
            if (dr >= 0 && df >= 0) {
                v->dev_recycle += dr;
                v->dev_fresh += df;
                ndev++;
            }
        }
    }
    if (!v->pairs) {
        if (v->unexercised)
            snprintf(v->text, sizeof v->text, "%s, %s: no verdict: the recycle runs never reused a recycled segment "
                     "(run longer, or lower --checkpoint-bytes / --segment-size)", k->name, engine);
        else
            snprintf(v->text, sizeof v->text, "%s, %s: no verdict: no recycle run has a fresh run to compare with "
                     "(give --segments fresh,recycle)", k->name, engine);
        return;
    }
    double g = exp(v->log_sum / v->pairs) - 1;
    /* A direction is claimed only when most pairs show it beyond their
     * own noise and none shows the opposite. */
    const char *what = !v->helps && !v->hurts                   ? "does not matter (within the noise)"
                       : !v->hurts && 2 * v->helps > v->pairs ? "helps"
                       : !v->helps && 2 * v->hurts > v->pairs ? "hurts"
                                                               : "has a small or mixed effect";
    char dev[256] = "";
    int dn = 0;
    if (v->nwait)
        dn = snprintf(dev, sizeof dev, "; commits waited for segments %.1f ms per run fresh vs %.1f recycled",
                      v->wait_fresh / v->nwait, v->wait_recycle / v->nwait);
    if (ndev && dn > 0 && (size_t)dn < sizeof dev)
        snprintf(dev + dn, sizeof dev - (size_t)dn, "; device bytes/commit %.0f fresh vs %.0f recycled",
                 v->dev_fresh / ndev, v->dev_recycle / ndev);
    char rep[96];
    if (repeat > 1)
        snprintf(rep, sizeof rep, "spread over %u repeats up to +-%.0f%%", repeat, v->noise * 100);
    else
        snprintf(rep, sizeof rep, "one run each: differences under 3%% are treated as noise; use --repeat 3");
    snprintf(v->text, sizeof v->text,
             "%s, %s: recycling %s here: %+.1f%% tps (geometric mean of %u recycle/fresh pairs, from %+.1f%% to "
             "%+.1f%%; helps in %u, hurts in %u; %s)%s",
             k->name, engine, what, g * 100, v->pairs, v->lo * 100, v->hi * 100, v->helps, v->hurts, rep, dev);
}

/* The verdicts of every filesystem, for the summary at the end. */
struct verdict_list {
    char **text;
    size_t n;
};

static void verdict_keep(struct verdict_list *vl, const char *text)
{
    char **t = realloc(vl->text, (vl->n + 1) * sizeof *t);
    if (!t)
        return;
    vl->text = t;
    if ((t[vl->n] = strdup(text)))
        vl->n++;
}

/* ---- the table ---------------------------------------------------------------- */

static void table_header(FILE *f)
{
    fprintf(f, "%-16s %-9s %-7s %-8s %-9s %-8s %4s %4s %12s %7s %8s %8s %10s %6s %9s %6s %9s\n", "filesystem",
            "engine", "sync", "segments", "init", "prealloc", "cli", "runs", "tps(median)", "spread", "p99 us",
            "max ms", "dev B/txn", "waits", "wait ms", "reused", "max@sw ms");
}

/* A median cell, "-" where the engine cannot say. */
static void num(char *buf, size_t len, const double *v, unsigned n, const char *fmt)
{
    double m = median(v, n);
    if (m < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, m);
}

/* The knobs that vary in the sweep, without those the table has columns for. */
static void other_knobs(const struct bench_config *c, char *buf, size_t len)
{
    static const char *const shown[] = {"segments=", "segment-init=", "prealloc="};
    size_t j = 0;
    buf[0] = 0;
    for (const char *p = c->varying; *p;) {
        const char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int skip = 0;
        for (size_t i = 0; i < sizeof shown / sizeof *shown; i++)
            skip |= strncmp(p, shown[i], strlen(shown[i])) == 0;
        if (!skip && j + n + 2 < len) {
            j += (size_t)snprintf(buf + j, len - j, "%s%.*s", j ? " " : "", (int)n, p);
        }
        p += n;
        while (*p == ' ')
            p++;
    }
}

static void table_row(FILE *f, const struct mx_fs_kind *k, const struct bench_config *c, const struct cell *x)
{
    char other[sizeof c->varying];
    other_knobs(c, other, sizeof other);
    if (!x->n) {
        fprintf(f, "%-16s %-9s %-7s %-8s %-9s %-8u %4u %4s (%s)\n", k->name, c->engine, c->sync, c->segments,
                c->segment_init, c->prealloc, c->clients, x->na ? "n/a" : "error", x->err);
        return;
    }
    char sp[16], p99[24], mx[24], devb[24], waits[24], waitms[24], reused[24], swmax[24];
    snprintf(sp, sizeof sp, "+-%.1f%%", spread(x->tps, x->n) * 100);
    num(p99, sizeof p99, x->p99, x->n, "%.0f");
    num(mx, sizeof mx, x->maxms, x->n, "%.2f");
    num(devb, sizeof devb, x->devb, x->n, "%.0f");
    num(waits, sizeof waits, x->waits, x->n, "%.0f");
    num(waitms, sizeof waitms, x->waitms, x->n, "%.1f");
    num(reused, sizeof reused, x->reused, x->n, "%.0f");
    num(swmax, sizeof swmax, x->swmax, x->n, "%.2f");
    fprintf(f, "%-16s %-9s %-7s %-8s %-9s %-8u %4u %4u %12.1f %7s %8s %8s %10s %6s %9s %6s %9s%s%s%s\n", k->name,
            c->engine, c->sync, c->segments, c->segment_init, c->prealloc, c->clients, x->n, median(x->tps, x->n),
            sp, p99, mx, devb, waits, waitms, reused, swmax, other[0] ? "  " : "", other,
            x->unexercised ? "  NOTE: recycling not exercised" : "");
}

static void cell_add(struct cell *x, const struct bench_config *cfg, const struct bench_result *r)
{
    if (r->status != RUN_OK) {
        if (r->status == RUN_NA)
            x->na = 1;
        else
            x->errors++;
        snprintf(x->err, sizeof x->err, "%s", r->reason);
        return;
    }
    unsigned i = x->n++;
    double n = r->txns ? (double)r->txns : 1;
    x->tps[i] = r->tps;
    x->p99[i] = r->p99_us;
    x->maxms[i] = r->max_us / 1e3;
    x->devb[i] = r->dev_write_bytes >= 0 ? (double)r->dev_write_bytes / n : -1;
    x->waits[i] = (double)r->segment_waits;
    x->waitms[i] = r->segment_wait_us >= 0 ? (double)r->segment_wait_us / 1e3 : -1;
    x->reused[i] = (double)r->segments_reused;
    x->swmax[i] = r->max_switch_commit_us >= 0 ? (double)r->max_switch_commit_us / 1e3 : -1;
    if (bench_recycle_unexercised(cfg, r))
        x->unexercised = 1;
}

/* ---- one filesystem ------------------------------------------------------------ */

static json_t *fs_json(const struct mx_fs_kind *k, const char *mkfs_cmd, const char *mount_opts,
                       const struct matrix_opts *m, unsigned rep)
{
    json_t *j = json_object();
    json_object_set_new(j, "fs", json_string(k->name));
    json_object_set_new(j, "fs_type", json_string(k->fstype));
    json_object_set_new(j, "nodatacow", json_boolean(k->nocow));
    json_object_set_new(j, "mkfs", mkfs_cmd[0] ? json_string(mkfs_cmd) : json_null());
    json_object_set_new(j, "mount_options_asked", mount_opts ? json_string(mount_opts) : json_null());
    json_object_set_new(j, "image_size", k->mkfs ? json_integer((json_int_t)m->image_size) : json_null());
    json_object_set_new(j, "image_init", k->mkfs ? json_string(m->image_zero ? "zero" : "sparse") : json_null());
    json_object_set_new(j, "loop_device", cur.loopdev[0] ? json_string(cur.loopdev) : json_null());
    json_object_set_new(j, "repeat", json_integer(rep + 1));
    json_object_set_new(j, "repeats", json_integer(m->repeat));
    return j;
}

/* One filesystem's runs, as a sweep. */
struct fs_runs {
    const struct mx_fs_kind *k;
    const struct matrix_opts *m;
    struct bench_cli *c;
    struct cell *cells;
    struct bench_result *r;
    const char *dir, *mkfs_cmd, *mopts;
    int failed;
};

static void fs_label(struct bench_sweep *s, size_t i, char *buf, size_t len)
{
    const struct fs_runs *f = s->ctx;
    bench_label(&f->c->cfgs[i], buf, len);
}

/* Configuration i in round rep: its run, its cell, its JSON line. */
static int fs_run_one(struct bench_sweep *s, size_t i, unsigned rep)
{
    struct fs_runs *f = s->ctx;
    struct bench_config cfg = f->c->cfgs[i];
    cfg.dir = f->dir;
    sync();
    bench_run(&cfg, f->r, bench_sweep_tick, s);
    if (bench_interrupted()) {
        bench_result_free(f->r);
        return -1;
    }
    cell_add(&f->cells[i], &cfg, f->r);
    if (f->r->status == RUN_ERROR)
        f->failed++;
    if (f->c->so.jsonl) {
        json_t *extra = fs_json(f->k, f->mkfs_cmd, f->mopts, f->m, rep);
        if (bench_json_append_extra(f->c->so.jsonl, &cfg, f->r, (unsigned)s->pos + 1, (unsigned)s->total, "matrix",
                                    extra))
            f->failed++;
        json_decref(extra);
    }
    bench_result_free(f->r);
    return 0;
}

/* Runs every configuration, repeat times, on one filesystem; prints its
 * table and verdict.  Returns the number of failed runs, or -1 when the
 * filesystem could not be set up. */
static int run_fs(const struct mx_fs_kind *k, const struct matrix_opts *m, const char *workdir,
                  struct bench_cli *c, struct ut_progress *pr, struct verdict_list *vl)
{
    char err[1024], mkfs_cmd[1024];
    struct cell *cells = calloc(c->n, sizeof *cells);
    struct bench_result *r = malloc(sizeof *r);
    int failed = 0;

    if (!cells || !r) {
        free(cells);
        free(r);
        return -1;
    }
    struct mx_image img = {m->image_size, m->image_zero, opt_for(m->mkfs_opts, m->nmkfs, k->name),
                           opt_for(m->mount_opts, m->nmount, k->name)};
    if (mx_fs_up(&cur, k, &img, workdir, bench_interrupted, mkfs_cmd, sizeof mkfs_cmd, err, sizeof err)) {
        ut_progress_clear(pr);
        fprintf(stderr, "commitlab matrix: %s: %s\n", k->name, err);
        mx_fs_down(&cur);
        free(cells);
        free(r);
        return -1;
    }
    char dir[4200], what[64];
    snprintf(dir, sizeof dir, "%.4000s/bench", cur.mnt);
    snprintf(what, sizeof what, "%s: run", k->name);
    /* every configuration, --repeat rounds, each round in its own order */
    struct fs_runs f = {k, m, c, cells, r, dir, mkfs_cmd, opt_for(m->mount_opts, m->nmount, k->name), 0};
    struct bench_sweep sw = {.n = c->n, .rounds = m->repeat, .shuffle = m->repeat > 1, .seed = c->base.seed,
                             .run = fs_run_one, .ctx = &f, .progress = pr, .what = what, .label = fs_label};
    bench_sweep_run(&sw);
    failed = f.failed;
    ut_progress_clear(pr);
    mx_fs_down(&cur);
    if (!bench_interrupted()) {
        for (size_t i = 0; i < c->n; i++)
            table_row(stdout, k, &c->cfgs[i], &cells[i]);
        /* one verdict per engine that has recycle runs, in sweep order */
        for (size_t i = 0; i < c->n; i++) {
            int first = 1;
            for (size_t j = 0; j < i; j++)
                first &= strcmp(c->cfgs[j].engine, c->cfgs[i].engine) != 0;
            if (!first)
                continue;
            struct verdict v;
            judge(k, c->cfgs[i].engine, c->cfgs, cells, c->n, m->repeat, &v);
            if (!v.pairs && !v.unexercised && !strstr(c->cfgs[i].engine, "commitlab"))
                continue; /* nothing to say about an engine without recycle runs */
            printf("  verdict: %s\n", v.text);
            verdict_keep(vl, v.text);
            if (c->so.jsonl) {
                json_t *j = json_object();
                json_object_set_new(j, "schema", json_string("commitlab-matrix-verdict/1"));
                json_object_set_new(j, "fs", json_string(k->name));
                json_object_set_new(j, "engine", json_string(c->cfgs[i].engine));
                json_object_set_new(j, "pairs", json_integer(v.pairs));
                json_object_set_new(j, "helps", json_integer(v.helps));
                json_object_set_new(j, "hurts", json_integer(v.hurts));
                json_object_set_new(j, "tps_change", v.pairs ? json_real(exp(v.log_sum / v.pairs) - 1) : json_null());
                json_object_set_new(j, "repeats", json_integer(m->repeat));
                json_object_set_new(j, "text", json_string(v.text));
                if (bench_json_write(c->so.jsonl, j))
                    failed++;
                json_decref(j);
            }
        }
        fflush(stdout);
    }
    free(cells);
    free(r);
    return failed;
}

/* ---- the command -------------------------------------------------------------- */

int cmd_matrix(int argc, char **argv)
{
    struct matrix_opts m;
    struct bench_cli c;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    char workdir[4096];

    if (!rest)
        return 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            free(rest);
            return 0;
        }
    int nrest = parse_matrix_args(argc, argv, &m, rest);
    bench_cli_parse("matrix", nrest, rest, &c);
    free(rest);
    if (!m.nfs)
        ut_usage_error("matrix", "--fs is required: a list of %s", MX_FS_LIST);
    if (c.dir_given || c.base.reuse)
        ut_usage_error("matrix", "%s: the runs go to each filesystem's own mount (use --workdir for where the "
                        "images go)", c.dir_given ? "--dir" : "--reuse");
    if (c.list_engines)
        ut_usage_error("matrix", "--list-engines: see commitlab bench --list-engines");
    /* Small segments and frequent checkpoints, so that segments are
     * retired and reused within a short run: commitlab's segment size,
     * and the checkpoint distance (RocksDB: its memtable size). */
    for (size_t i = 0; i < c.n; i++) {
        struct bench_config *cfg = &c.cfgs[i];
        int cl = !strcmp(cfg->engine, "commitlab");
        if (cl && !c.vals[K_SEGMENT_SIZE].n) {
            cfg->segment_size = 1u << 20;
            cfg->given[K_SEGMENT_SIZE] = 1;
        }
        if ((cl || !strcmp(cfg->engine, "rocksdb")) && !c.vals[K_CHECKPOINT].n) {
            cfg->checkpoint_bytes = 4u << 20;
            cfg->given[K_CHECKPOINT] = 1;
        }
    }
    if (c.n * m.repeat > 100000)
        ut_usage_error("matrix", "%zu runs per filesystem is too many", c.n * m.repeat);
    if (mx_preflight(m.fs, m.nfs)) {
        bench_cli_free(&c);
        return UT_EXIT_USAGE;
    }
    /* Before any work: --out writable, and --workdir claimed for the whole
     * run, so a second run there is refused instead of unmounting and
     * detaching this one's filesystems as a dead run's leftovers. */
    int orc, out_created = 0;
    if (c.out_path && (orc = ut_output_check(c.out_path)) != 0) {
        fprintf(stderr, "commitlab matrix: --out %s: %s\n", c.out_path, strerror(-orc));
        bench_cli_free(&c);
        return UT_EXIT_USAGE;
    }
    struct bench_dirs dirs;
    if ((orc = bench_dirs_claim(&dirs, "matrix", "--workdir", m.workdir)) != 0) {
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return orc;
    }
    if (!realpath(m.workdir, workdir)) {
        fprintf(stderr, "commitlab matrix: --workdir %s: %s\n", m.workdir, strerror(errno));
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return 1;
    }
    if (c.out_path && !(c.so.jsonl = ut_output_open(c.out_path, &out_created))) {
        fprintf(stderr, "commitlab matrix: --out %s: %s\n", c.out_path, strerror(errno));
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return 1;
    }

    bench_stop_on_signals();

    mx_clear_leftovers(workdir); /* a dead run's: this run holds the lock */
    printf("commitlab matrix: %zu configuration%s x %u repeat%s on %zu filesystem%s (images in %s)\n", c.n,
           c.n == 1 ? "" : "s", m.repeat, m.repeat == 1 ? "" : "s", m.nfs, m.nfs == 1 ? "" : "s", workdir);
    printf("tps is the median over the repeats, spread half their range; dev B/txn is what the loop device\n"
           "wrote per transaction; waits/wait ms: commits that waited for a segment to be ready, and how long;\n"
           "reused: recycled segments written again; max@sw: the longest commit across a segment switch.\n\n");
    table_header(stdout);
    fflush(stdout);

    struct ut_progress pr;
    ut_progress_init(&pr, c.so.quiet, c.n * m.repeat * m.nfs, c.base.warmup + c.base.duration + 1);
    int failed = 0, setup_failed = 0;
    struct verdict_list vl = {0};
    for (size_t f = 0; f < m.nfs && !bench_interrupted(); f++) {
        int rc = run_fs(m.fs[f], &m, workdir, &c, &pr, &vl);
        if (rc < 0) {
            setup_failed++;
            pr.total -= c.n * m.repeat;
        } else {
            failed += rc;
        }
    }
    mx_fs_down(&cur);
    if (c.so.jsonl)
        ut_output_close(c.so.jsonl, c.out_path, out_created);
    bench_dirs_release(&dirs); /* --workdir itself only when this run made it and left it empty */
    if (!bench_interrupted() && vl.n > 1) {
        printf("\nverdicts:\n");
        for (size_t i = 0; i < vl.n; i++)
            printf("  %s\n", vl.text[i]);
    }
    for (size_t i = 0; i < vl.n; i++)
        free(vl.text[i]);
    free(vl.text);
    bench_cli_free(&c);
    if (bench_interrupted()) {
        fprintf(stderr, "commitlab matrix: interrupted (signal %d); everything it mounted is unmounted and "
                        "detached\n", bench_stop_signal());
        return 128 + bench_stop_signal();
    }
    return setup_failed || failed ? 1 : 0;
}
