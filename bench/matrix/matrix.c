/*
 * matrix.c -- `commitlab matrix`: the same benchmark configurations on
 * several filesystems, each made fresh for the purpose -- an image file
 * (sparse or zero-filled) in --workdir on a loop device (buffered or
 * direct I/O), or a real device given up with --device -- and, in every
 * run, the same configurations on the filesystem that holds --workdir
 * itself, without a loop device: the native baseline.  The runs of every
 * filesystem that is up at once are one sweep, rounds shuffled together,
 * so that the machine's drift is shared by the rows compared; each run
 * reads its device's sectors written and read (/sys/block/DEV/stat)
 * before and after, so that the device bytes per commit say what the
 * filesystem adds to the log's own bytes.
 *
 * What it is for: the WAL recycling question (PostgreSQL's wal_recycle,
 * RocksDB's recycle_log_file_num) is a question about the filesystem --
 * on ext4 and XFS an overwrite of written blocks needs no allocation, on
 * btrfs every overwrite allocates anyway -- so it can only be answered by
 * running the same commits on each; and a loop device over a host
 * filesystem adds the host's work to every sync, so where the loop
 * filesystem is of the native one's type the output sets the two side by
 * side and says when their verdicts on recycling disagree.  With
 * --snapshot-every a btrfs run directory is a subvolume snapshotted every
 * S seconds, so that copy-on-write happens to blocks that would otherwise
 * be overwritten in place (nodatacow, recycled segments).
 *
 * Cleanup is part of the contract: whatever happens (a failed mkfs or
 * mount, a failed run, SIGINT, SIGTERM), what this command snapshotted is
 * deleted, what it mounted is unmounted and what it attached is detached
 * before it exits, and what an earlier run that was killed outright left
 * in the same --workdir is removed when the next one starts -- only the
 * directories that carry a run's mark (ut_scratch.h), so nothing of the
 * user's in --workdir is ever mounted over, truncated or removed.  The
 * filesystems themselves -- images, devices and their checks, mkfs, loop
 * devices, mounts, snapshots, and taking them down -- are mx_fs.c; this
 * file is the command: its options, the runs, their medians, the tables
 * and the verdicts on recycling.
 *
 * Stopped by a signal, the command still takes everything down as above,
 * and keeps what it measured: every finished run's JSON line is written
 * as it finishes, the run in progress gets its line marked interrupted
 * (what it measured until then), and the table shows the medians of the
 * finished runs with the interrupted run in a row of its own -- no
 * verdicts, which need every pair of a sweep -- and the last line on
 * stderr says which run it was and how far it got.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_dirs.h"
#include "bench_env.h"
#include "drivers/driver.h"
#include "matrix.h"
#include "mx_fs.h"
#include "mx_zfs.h"
#include "ut_args.h"
#include "ut_clock.h"
#include "ut_progress.h"
#include "ut_scratch.h"
#include "ut_stats.h"

/* ---- options -------------------------------------------------------------- */

#define MAX_FS 8
#define MAX_ZVAL 8

/* A --zfs-* knob: a dataset property, its accepted values, and the list
 * given (each value as typed, for the labels; the property's value for
 * zfs create in zval). */
struct zfs_knob {
    const char *flag, *prop, *accepted, *def;
    const char *val[MAX_ZVAL]; /* as given (given), or the default */
    const char *as;            /* the list as given, so that a second use is refused */
    char given[MAX_ZVAL][32];
    char zval[MAX_ZVAL][32];
    size_t n;
};
enum { ZK_RECORDSIZE, ZK_PRIMARYCACHE, ZK_LOGBIAS, ZK_COMPRESSION, ZK_COUNT };
static const struct zfs_knob zfs_knob_defs[ZK_COUNT] = {
    [ZK_RECORDSIZE] = {.flag = "--zfs-recordsize",
                       .prop = "recordsize",
                       .accepted = "a list of powers of two from 512 to 128k (8k, 128k)",
                       .def = "128k"},
    [ZK_PRIMARYCACHE] = {.flag = "--zfs-primarycache",
                         .prop = "primarycache",
                         .accepted = "a list of all, metadata",
                         .def = "all"},
    [ZK_LOGBIAS] = {.flag = "--zfs-logbias",
                    .prop = "logbias",
                    .accepted = "a list of latency, throughput",
                    .def = "latency"},
    [ZK_COMPRESSION] = {.flag = "--zfs-compression",
                        .prop = "compression",
                        .accepted = "a list of off, lz4",
                        .def = "off"},
};

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
    int loop_direct;     /* --loop direct: LO_FLAGS_DIRECT_IO */
    int image_size_given, image_init_given, loop_given;
    const char *device;  /* --device: format it instead of images */
    const char *destroy; /* --destroy-data: the same device, given up */
    double snapshot_every; /* --snapshot-every: seconds, 0 = never */
    const char *preset;
    int npreset;         /* the preset's options, first of bench's */
    unsigned repeat;
    struct fs_opt mount_opts[MAX_FS], mkfs_opts[MAX_FS];
    size_t nmount, nmkfs;
    struct zfs_knob zk[ZK_COUNT]; /* --zfs-*: every combination is a dataset of its own */
    int zk_given;
    struct mx_zfs_impl zimpl; /* which ZFS runs the pools (after the preflight) */
};

/* The presets: bench options put before the user's own, which win. */
static const struct {
    const char *name;
    const char *const args[12];
    const char *what;
} presets[] = {
    {"data-io",
     {"--workload", "kv", "--keys", "10000000", "--cache", "64M", "--checkpoint-bytes", "16M", NULL},
     "kv over 10M keys with a 64 MiB cache and a checkpoint every 16 MiB of log: the tree far larger than the "
     "cache, so checkpoints write data pages while commits sync"},
};
#define PRESET_LIST "data-io"

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
    /* the help text is laid out as it prints */
    /* clang-format off */
    fprintf(f,
            "usage: commitlab matrix --fs LIST [matrix options] [bench options]\n"
            "  LIST: values separated by ','; " UT_LIST_RULE "\n"
            "\n"
            "Runs the bench configurations on each filesystem, made fresh in a loop-mounted\n"
            "image (or on --device), and on the filesystem holding --workdir itself (the native\n"
            "baseline, \"native TYPE\"), and says per filesystem whether WAL recycling helps.\n"
            "Needs root.\n"
            "\n"
            "  --fs LIST            " MX_FS_LIST "\n"
            "  --workdir D          where the images, mount points and native runs go, each in a\n"
            "                       directory the run makes and removes (D/ext4, D/native, ...); one\n"
            "                       that is already there and not a run's is refused (default\n"
            "                       ./commitlab-matrix.d)\n"
            "  --image-size SIZE    each image file (default 2G); tmpfs: its size limit.  Every\n"
            "                       filesystem's image exists at once: the sum must fit in D\n"
            "  --image-init MODE    zero (default): the image is written whole and synced first,\n"
            "                       like a real device (a few seconds per GiB to set up); sparse:\n"
            "                       blocks of the image are allocated on the host filesystem as the\n"
            "                       guest first writes them, at the cost of host metadata in the\n"
            "                       guest's syncs\n"
            "  --loop MODE          buffered (default): the loop device reads and writes its image\n"
            "                       through the host's page cache; direct: with direct I/O\n"
            "                       (LO_FLAGS_DIRECT_IO), as losetup --direct-io=on\n"
            "                       (the defaults are the pair that tracked a native ext4 best here:\n"
            "                       docs/lab/recycling.md, section 7)\n"
            "  --device DEV         format DEV (a disk or partition) for each filesystem in turn\n"
            "                       instead of images; refused when it is mounted, holds a mounted\n"
            "                       partition, swap or a holder, or reaches the bytes of a device\n"
            "                       in use (a partition of a mounted disk, a loop device on a\n"
            "                       mounted one's file or stacked on it), or carries a filesystem\n"
            "                       or partition table (unless --destroy-data)\n"
            "  --destroy-data DEV   the same DEV again: what it holds may be destroyed\n"
            "  --snapshot-every S   btrfs, btrfs-nodatacow: the run directory is a subvolume, and\n"
            "                       every S seconds of a run it is snapshotted and the older\n"
            "                       snapshot deleted, so the next write of each block is a copy;\n"
            "                       zfs: zfs snapshot of the dataset, the older one destroyed\n"
            "  --preset NAME        bench options for a study, before yours (yours win): " PRESET_LIST "\n"
            "                       (data-io: --keys 10000000 --cache 64M --checkpoint-bytes 16M)\n"
            "  --repeat N           runs of each configuration, round by round, each round in a\n"
            "                       shuffled order across every filesystem up at once; the median\n"
            "                       is reported (default 1; 3 or more to judge a difference)\n"
            "  --mount-opts FS:OPTS extra mount options, e.g. ext4:barrier=0 or xfs:logbsize=256k\n"
            "  --mkfs-opts FS:OPTS  extra mkfs options, e.g. \"xfs:-l size=64m\"\n"
            "\n"
            "zfs: one pool made by matrix on a file vdev in D/zfs (no loop device) or on\n"
            "--device, marked commitlab:owner, and a dataset per combination of these lists;\n"
            "OpenZFS when the kernel has it, else zfs-fuse (its daemon started and stopped\n"
            "by matrix when none runs).  Rows also show the pool's own reads and writes\n"
            "per commit (zpool iostat).  --cold-recycle drops a retired segment's pages above\n"
            "FUSE or in the kernel; in the ARC it is cold only with primarycache=metadata,\n"
            "which --cold-recycle makes the default (rows say \"ARC cold\" or \"ARC warm\").\n"
            "  --zfs-recordsize L   powers of two from 512 to 128k (default 128k)\n"
            "  --zfs-primarycache L all, metadata (default all; metadata with --cold-recycle)\n"
            "  --zfs-logbias L      latency, throughput (default latency)\n"
            "  --zfs-compression L  off, lz4 (default off; lz4 needs OpenZFS)\n"
            "\n"
            "Every option of commitlab bench is accepted (see commitlab bench --help) except\n"
            "--dir and --reuse.  Unless given, --segment-size is 1M and --checkpoint-bytes 4M\n"
            "here (RocksDB: write_buffer_size 4M; PostgreSQL: initdb --wal-segsize 1 and\n"
            "max_wal_size 4MB), so that even one client crosses several\n"
            "segment switches and checkpoints (and so reuses recycled segments) in a 10 s run.\n");
    /* clang-format on */
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
    for (size_t i = 0; i < *n; i++)
        if (o[i].fs == k->name)
            ut_usage_error("matrix", "%s: %s given twice ('%s:%s', then '%s'); give each filesystem's options once",
                           flag, k->name, o[i].fs, o[i].opts, v);
    o[*n].fs = k->name;
    o[*n].opts = colon + 1;
    (*n)++;
}

/* A --zfs-* list: each value checked, one line naming the flag and the
 * accepted values otherwise. */
static void parse_zfs_knob(struct zfs_knob *k, const char *v)
{
    char **items, why[300];
    size_t n;
    if (!v)
        ut_usage_error("matrix", "%s needs a value: %s", k->flag, k->accepted);
    ut_once("matrix", k->flag, &k->as, v, 1);
    if (ut_split_list(v, &items, &n, why, sizeof why))
        ut_usage_error("matrix", "%s: '%s' %s", k->flag, v, why);
    if (n > MAX_ZVAL)
        ut_usage_error("matrix", "%s: at most %d values", k->flag, MAX_ZVAL);
    for (size_t i = 0; i < n; i++) {
        const char *x = items[i];
        int ok;
        if (!strcmp(k->prop, "recordsize")) {
            uint64_t b = 0;
            ok = !ut_parse_size(x, &b) && b >= 512 && b <= (128u << 10) && !(b & (b - 1));
            snprintf(k->zval[i], sizeof k->zval[i], "%llu", (unsigned long long)b);
        } else {
            ok = !strcmp(k->prop, "primarycache") ? !strcmp(x, "all") || !strcmp(x, "metadata")
                 : !strcmp(k->prop, "logbias")    ? !strcmp(x, "latency") || !strcmp(x, "throughput")
                                                  : !strcmp(x, "off") || !strcmp(x, "lz4");
            snprintf(k->zval[i], sizeof k->zval[i], "%s", x);
        }
        if (!ok || strlen(x) >= sizeof k->given[i])
            ut_usage_error("matrix", "%s: '%s' is not accepted; expected %s", k->flag, x, k->accepted);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(k->zval[j], k->zval[i]))
                ut_usage_error("matrix", "%s: '%s' names one value twice", k->flag, v);
        snprintf(k->given[i], sizeof k->given[i], "%s", x);
        k->val[i] = k->given[i];
    }
    k->n = n;
    ut_list_free(items, n);
}

/* Takes matrix's own options out of argv; the rest go to bench's parser,
 * a preset's options first. */
static int parse_matrix_args(int argc, char **argv, struct matrix_opts *m, char **rest)
{
    /* the value each option was given, so that a second use is refused */
    const char *fs_as = NULL, *workdir_as = NULL, *size_as = NULL, *init_as = NULL, *loop_as = NULL,
               *device_as = NULL, *destroy_as = NULL, *snap_as = NULL, *repeat_as = NULL;
    int nrest = 0;
    memset(m, 0, sizeof *m);
    m->workdir = "commitlab-matrix.d";
    m->image_size = 2ull << 30;
    m->image_zero = 1;
    m->repeat = 1;
    for (size_t z = 0; z < ZK_COUNT; z++)
        m->zk[z] = zfs_knob_defs[z];
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--preset")) {
            const char *v = i + 1 < argc ? argv[i + 1] : "";
            size_t p = 0;
            while (p < sizeof presets / sizeof *presets && strcmp(presets[p].name, v))
                p++;
            if (p == sizeof presets / sizeof *presets)
                ut_usage_error("matrix", "--preset: '%s' is not accepted; expected %s", v, PRESET_LIST);
            if (m->preset)
                ut_usage_error("matrix", "--preset: one preset at a time");
            m->preset = presets[p].name;
            for (const char *const *a = presets[p].args; *a; a++, m->npreset++)
                rest[nrest++] = (char *)*a;
            i++;
        }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--fs")) {
            if (!v)
                ut_usage_error("matrix", "--fs needs a value: a list of %s", MX_FS_LIST);
            ut_once("matrix", a, &fs_as, v, 1);
            char **items, why[300];
            size_t n;
            if (ut_split_list(v, &items, &n, why, sizeof why)) /* the one rule of lists (ut_args.h) */
                ut_usage_error("matrix", "--fs: '%s' %s", v, why);
            for (size_t t = 0; t < n; t++) {
                const struct mx_fs_kind *k = mx_fs_find(items[t]);
                if (!k)
                    ut_usage_error("matrix", "--fs: '%s' is not accepted; expected a list of %s", items[t],
                                    MX_FS_LIST);
                if (m->nfs == MAX_FS)
                    ut_usage_error("matrix", "--fs: at most %d filesystems", MAX_FS);
                for (size_t j = 0; j < m->nfs; j++)
                    if (m->fs[j] == k)
                        ut_usage_error("matrix", "--fs: '%s' is named twice", items[t]);
                m->fs[m->nfs++] = k;
            }
            ut_list_free(items, n);
        } else if (!strcmp(a, "--workdir")) {
            if (!v || !*v)
                ut_usage_error("matrix", "--workdir needs a directory");
            ut_once("matrix", a, &workdir_as, v, 0);
            m->workdir = v;
        } else if (!strcmp(a, "--image-size")) {
            if (v)
                ut_once("matrix", a, &size_as, v, 0);
            if (!v || ut_parse_size(v, &m->image_size) || m->image_size < (256ull << 20))
                ut_usage_error("matrix", "--image-size: '%s' is not accepted; expected a size of at least 256M",
                                v ? v : "");
            m->image_size_given = 1;
        } else if (!strcmp(a, "--image-init")) {
            if (v)
                ut_once("matrix", a, &init_as, v, 0);
            if (!v || (strcmp(v, "sparse") && strcmp(v, "zero")))
                ut_usage_error("matrix", "--image-init: '%s' is not accepted; expected sparse or zero", v ? v : "");
            m->image_zero = !strcmp(v, "zero");
            m->image_init_given = 1;
        } else if (!strcmp(a, "--loop")) {
            if (v)
                ut_once("matrix", a, &loop_as, v, 0);
            if (!v || (strcmp(v, "buffered") && strcmp(v, "direct")))
                ut_usage_error("matrix", "--loop: '%s' is not accepted; expected buffered or direct", v ? v : "");
            m->loop_direct = !strcmp(v, "direct");
            m->loop_given = 1;
        } else if (!strcmp(a, "--device")) {
            if (!v || !*v)
                ut_usage_error("matrix", "--device needs a block device, e.g. /dev/sdb");
            ut_once("matrix", a, &device_as, v, 0);
            m->device = v;
        } else if (!strcmp(a, "--destroy-data")) {
            if (!v || !*v)
                ut_usage_error("matrix", "--destroy-data needs the block device that --device names");
            ut_once("matrix", a, &destroy_as, v, 0);
            m->destroy = v;
        } else if (!strcmp(a, "--snapshot-every")) {
            char *end = NULL;
            if (v)
                ut_once("matrix", a, &snap_as, v, 0);
            double sec = v ? strtod(v, &end) : 0;
            if (!v || !*v || *end || !(sec >= 0.1) || sec > 86400)
                ut_usage_error("matrix", "--snapshot-every: '%s' is not accepted; expected seconds in [0.1, 86400]",
                                v ? v : "");
            m->snapshot_every = sec;
        } else if (!strcmp(a, "--preset")) {
            /* taken above */
        } else if (!strcmp(a, "--repeat")) {
            char *end;
            if (v)
                ut_once("matrix", a, &repeat_as, v, 0);
            unsigned long r = v ? strtoul(v, &end, 10) : 0;
            if (!v || *end || !*v || r < 1 || r > 100)
                ut_usage_error("matrix", "--repeat: '%s' is not accepted; expected an integer in [1, 100]",
                                v ? v : "");
            m->repeat = (unsigned)r;
        } else if (!strncmp(a, "--zfs-", 6)) {
            size_t z = 0;
            while (z < ZK_COUNT && strcmp(zfs_knob_defs[z].flag, a))
                z++;
            if (z == ZK_COUNT)
                ut_usage_error("matrix",
                               "%s: unknown option; the zfs ones are --zfs-recordsize, --zfs-primarycache, "
                               "--zfs-logbias, --zfs-compression",
                               a);
            parse_zfs_knob(&m->zk[z], v);
            m->zk_given = 1;
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
    for (size_t z = 0; z < ZK_COUNT; z++)
        if (!m->zk[z].n) {
            struct zfs_knob *k = &m->zk[z];
            k->val[0] = k->def;
            snprintf(k->zval[0], sizeof k->zval[0], "%s", !strcmp(k->prop, "recordsize") ? "131072" : k->def);
            k->n = 1;
        }
    rest[nrest] = NULL;
    return nrest;
}

/* The combinations of matrix options that cannot be meant. */
static void check_matrix_args(const struct matrix_opts *m)
{
    if (m->destroy && !m->device)
        ut_usage_error("matrix", "--destroy-data: it gives up the device that --device names, and --device is not "
                        "given");
    if (m->device) {
        const char *flag = m->loop_given ? "--loop" : m->image_init_given ? "--image-init"
                           : m->image_size_given ? "--image-size" : NULL;
        if (flag)
            ut_usage_error("matrix", "%s: with --device there is no image and no loop device", flag);
        for (size_t i = 0; i < m->nfs; i++)
            if (!m->fs[i]->mkfs && !m->fs[i]->zfs)
                ut_usage_error("matrix", "--device: %s cannot be put on a device; leave it out of --fs",
                                m->fs[i]->name);
    }
    if (m->snapshot_every > 0) {
        int any = 0;
        for (size_t i = 0; i < m->nfs; i++)
            any |= !strcmp(m->fs[i]->fstype, "btrfs") || m->fs[i]->zfs;
        if (!any)
            ut_usage_error("matrix", "--snapshot-every: only btrfs, btrfs-nodatacow and zfs take snapshots, and "
                                     "--fs names none of them");
    }
    int zfs = 0;
    for (size_t i = 0; i < m->nfs; i++)
        zfs |= m->fs[i]->zfs;
    for (size_t z = 0; z < ZK_COUNT && !zfs; z++)
        if (m->zk[z].val[0] != m->zk[z].def || m->zk[z].n > 1)
            ut_usage_error("matrix", "%s: only --fs zfs takes it, and --fs does not name zfs", m->zk[z].flag);
}

/* ---- medians, and the verdict ---------------------------------------------- */

struct cell {
    double tps[100];
    double p99[100], maxms[100], devb[100], devrd[100], waits[100], waitms[100], reused[100], swmax[100];
    double snaps[100];
    double pool[4][100]; /* zfs: the pool's read and write operations and bytes per commit; -1 unknown */
    const char *arc;     /* zfs with --cold-recycle: "ARC cold" or "ARC warm"; NULL otherwise */
    unsigned n, errors, unexercised;
    char err[BENCH_ERRLEN];
    int na;
    char stopped[300];            /* a run a signal stopped: how far it got; its figures, if any, are its own */
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
    snprintf(buf, len, "%s %s %s %s %u %s %u %s", cfg->engine, cfg->workload, bench_knob_word(cfg, K_SYNC),
             bench_knob_word(cfg, K_SEGMENT_INIT), cfg->prealloc, bench_knob_word(cfg, K_SYNC_METHOD), cfg->clients, v);
}

struct verdict {
    unsigned pairs, helps, hurts, unexercised, nwait;
    double log_sum, lo, hi, noise, dev_fresh, dev_recycle, wait_fresh, wait_recycle;
    const char *what;             /* "helps", "hurts", ...; NULL: no verdict */
    char text[640];
};

static void judge(const char *name, const char *engine, const struct bench_config *cfgs,
                  const struct cell *cells, size_t n, unsigned repeat, struct verdict *v)
{
    memset(v, 0, sizeof *v);
    v->lo = INFINITY;
    v->hi = -INFINITY;
    unsigned ndev = 0;
    for (size_t i = 0; i < n; i++) {
        if (cfgs[i].segments != CL_SEGMENTS_RECYCLE || !cells[i].n || strcmp(cfgs[i].engine, engine))
            continue;
        char ki[512], kj[512];
        pair_key(&cfgs[i], ki, sizeof ki);
        for (size_t j = 0; j < n; j++) {
            if (cfgs[j].segments != CL_SEGMENTS_FRESH || !cells[j].n)
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
                     "(run longer, or lower --checkpoint-bytes / --segment-size)", name, engine);
        else
            snprintf(v->text, sizeof v->text, "%s, %s: no verdict: no recycle run has a fresh run to compare with "
                     "(give --segments fresh,recycle)", name, engine);
        return;
    }
    double g = exp(v->log_sum / v->pairs) - 1;
    /* A direction is claimed only when most pairs show it beyond their
     * own noise and none shows the opposite. */
    const char *what = !v->helps && !v->hurts                   ? "does not matter (within the noise)"
                       : !v->hurts && 2 * v->helps > v->pairs ? "helps"
                       : !v->helps && 2 * v->hurts > v->pairs ? "hurts"
                                                               : "has a small or mixed effect";
    v->what = what;
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
             name, engine, what, g * 100, v->pairs, v->lo * 100, v->hi * 100, v->helps, v->hurts, rep, dev);
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
    fprintf(f, "%-16s %-9s %-7s %-8s %-9s %-8s %4s %4s %12s %7s %8s %8s %10s %9s %6s %9s %6s %9s\n", "filesystem",
            "engine", "sync", "segments", "init", "prealloc", "cli", "runs", "tps(median)", "spread", "p99 us",
            "max ms", "dev B/txn", "rd B/txn", "waits", "wait ms", "reused", "max@sw ms");
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

static void table_row(FILE *f, const char *name, const struct bench_config *c, const struct cell *x)
{
    char other[sizeof c->varying];
    other_knobs(c, other, sizeof other);
    if (!x->n) {
        fprintf(f, "%-16s %-9s %-7s %-8s %-9s %-8u %4u %4s (%s)\n", name, c->engine, bench_knob_word(c, K_SYNC),
                bench_knob_word(c, K_SEGMENTS), bench_knob_word(c, K_SEGMENT_INIT), c->prealloc, c->clients,
                x->stopped[0] ? "-"
                : x->na       ? "n/a"
                              : "error",
                x->stopped[0] ? x->stopped : x->err);
        return;
    }
    char sp[16], p99[24], mx[24], devb[24], devrd[24], waits[24], waitms[24], reused[24], swmax[24], snaps[48] = "";
    snprintf(sp, sizeof sp, "+-%.1f%%", spread(x->tps, x->n) * 100);
    num(p99, sizeof p99, x->p99, x->n, "%.0f");
    num(mx, sizeof mx, x->maxms, x->n, "%.2f");
    num(devb, sizeof devb, x->devb, x->n, "%.0f");
    num(devrd, sizeof devrd, x->devrd, x->n, "%.0f");
    if (median(x->snaps, x->n) >= 0)
        snprintf(snaps, sizeof snaps, "  snapshots %.0f", median(x->snaps, x->n));
    char pool[160] = "";
    if (median(x->pool[3], x->n) >= 0)
        snprintf(pool, sizeof pool, "  pool rd/wr B/txn %.0f/%.0f ops/txn %.2f/%.2f%s%s", median(x->pool[2], x->n),
                 median(x->pool[3], x->n), median(x->pool[0], x->n), median(x->pool[1], x->n), x->arc ? "  " : "",
                 x->arc ? x->arc : "");
    num(waits, sizeof waits, x->waits, x->n, "%.0f");
    num(waitms, sizeof waitms, x->waitms, x->n, "%.1f");
    num(reused, sizeof reused, x->reused, x->n, "%.0f");
    num(swmax, sizeof swmax, x->swmax, x->n, "%.2f");
    char runs[8];
    snprintf(runs, sizeof runs, "%u", x->n);
    if (x->stopped[0]) /* one run, cut short: no median, no spread */
        snprintf(sp, sizeof sp, "-");
    fprintf(f, "%-16s %-9s %-7s %-8s %-9s %-8u %4u %4s %12.1f %7s %8s %8s %10s %9s %6s %9s %6s %9s%s%s%s%s%s%s%s\n",
            name, c->engine, bench_knob_word(c, K_SYNC), bench_knob_word(c, K_SEGMENTS),
            bench_knob_word(c, K_SEGMENT_INIT), c->prealloc, c->clients, x->stopped[0] ? "-" : runs,
            median(x->tps, x->n), sp, p99, mx, devb, devrd, waits, waitms, reused, swmax, other[0] ? "  " : "", other,
            snaps, pool, x->unexercised && !x->stopped[0] ? "  NOTE: recycling not exercised" : "",
            x->stopped[0] ? "  " : "", x->stopped);
}

static void cell_add(struct cell *x, const struct bench_config *cfg, const struct bench_result *r, double snaps,
                     const double *pool)
{
    if (!bench_measured(r)) {
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
    x->devrd[i] = r->dev_read_bytes >= 0 ? (double)r->dev_read_bytes / n : -1;
    x->snaps[i] = snaps;
    for (int k = 0; k < 4; k++)
        x->pool[k][i] = pool ? pool[k] / n : -1;
    x->waits[i] = (double)r->segment_waits;
    x->waitms[i] = r->segment_wait_us >= 0 ? (double)r->segment_wait_us / 1e3 : -1;
    x->reused[i] = (double)r->segments_reused;
    x->swmax[i] = r->max_switch_commit_us >= 0 ? (double)r->max_switch_commit_us / 1e3 : -1;
    if (bench_recycle_unexercised(cfg, r))
        x->unexercised = 1;
}

/* ---- the filesystems up at once: targets ----------------------------------------- */

/* One place the configurations run: the native filesystem, or one made
 * fresh (on a loop device or --device). */
struct target {
    const struct mx_fs_kind *k;   /* NULL: native */
    char name[200];               /* "ext4", "native ext4", "zfs (zfs-fuse 0.7.0, userspace)": the table's
                                     and the JSON's */
    char fstype[64];              /* ext4, xfs, btrfs, tmpfs */
    struct mx_mount mnt;
    char dir[4200];               /* where its runs go */
    char mkfs_cmd[1024];
    const char *mopts;
    int zfs;                      /* a dataset of the phase's pool */
    size_t zv[ZK_COUNT];          /* zfs: the value of each --zfs-* knob (its index) */
    char count_dev[64];           /* zfs: the device under the pool, for the device columns */
    int up;                       /* set up: its runs run */
    int journal;                  /* ext4: runs a jbd2 journal (1) or not (0); -1 not known */
    struct cell *cells;           /* one per configuration */
    struct verdict *v;            /* one per engine of the sweep, after the runs */
};

/* The phase's targets and what its sweep needs. */
struct phase {
    struct target *t;
    size_t nt;
    const struct matrix_opts *m;
    struct bench_cli *c;
    struct bench_result *r;
    int failed;
    struct mx_zpool *pool; /* zfs: the pool of the phase's datasets (NULL: none) */
    int pool_failed;
    char pool_err[1024];
    /* the run a signal stopped: its configuration, target and row */
    int has_stopped;
    size_t stopped_cfg, stopped_tgt;
    struct cell stopped;
};

/* Items are configuration-major: every target's run of a configuration
 * next to each other (in the unshuffled order), the fresh filesystems in
 * --fs order first, then the native one (t[0]). */
static void item_of(const struct phase *ph, size_t item, size_t *cfg, size_t *tgt)
{
    *cfg = item / ph->nt;
    *tgt = (item % ph->nt + 1) % ph->nt;
}

static void phase_label(struct bench_sweep *s, size_t i, char *buf, size_t len)
{
    const struct phase *ph = s->ctx;
    size_t ci, ti;
    char l[200];
    item_of(ph, i, &ci, &ti);
    bench_label(&ph->c->cfgs[ci], l, sizeof l);
    snprintf(buf, len, "%s: %s", ph->t[ti].name, l);
}

/* ---- snapshots during a run ---------------------------------------------------- */

struct snapper {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    double every;
    struct mx_mount *m;
    unsigned taken;
    int err;
};

static void *snapper_main(void *arg)
{
    struct snapper *sp = arg;
    pthread_mutex_lock(&sp->mu);
    while (!sp->stop) {
        struct timespec ts = ut_deadline(sp->every);
        while (!sp->stop && pthread_cond_timedwait(&sp->cv, &sp->mu, &ts) != ETIMEDOUT)
            ;
        if (sp->stop)
            break;
        pthread_mutex_unlock(&sp->mu);
        int rc = mx_snapshot(sp->m);
        pthread_mutex_lock(&sp->mu);
        if (rc && !sp->err)
            sp->err = rc;
        else if (!rc)
            sp->taken++;
    }
    pthread_mutex_unlock(&sp->mu);
    return NULL;
}

static int snapper_start(struct snapper *sp, struct mx_mount *m, double every)
{
    memset(sp, 0, sizeof *sp);
    sp->m = m;
    sp->every = every;
    pthread_mutex_init(&sp->mu, NULL);
    ut_cond_init(&sp->cv); /* deadlines on the command's clock */
    return pthread_create(&sp->th, NULL, snapper_main, sp) ? -1 : 0;
}

static void snapper_stop(struct snapper *sp)
{
    pthread_mutex_lock(&sp->mu);
    sp->stop = 1;
    pthread_cond_signal(&sp->cv);
    pthread_mutex_unlock(&sp->mu);
    pthread_join(sp->th, NULL);
    pthread_cond_destroy(&sp->cv);
    pthread_mutex_destroy(&sp->mu);
    mx_snapshots_delete(sp->m); /* the next run starts without one */
}

/* ---- one run ---------------------------------------------------------------------- */

/* The measured window's two ends, as bench_run reads its counters. */
struct window {
    double t[2];
};

static void window_mark(void *arg, int end)
{
    ((struct window *)arg)->t[end ? 1 : 0] = ut_now();
}

/* zfs: which dataset, its properties, and the pool's counters per commit
 * (NULL: not known). */
static json_t *zfs_json(const struct target *t, const struct phase *ph, const double *pool, double txns, int cold)
{
    const struct matrix_opts *m = ph->m;
    json_t *z = json_object();
    json_object_set_new(z, "implementation", json_string(ph->pool->impl.name));
    json_object_set_new(z, "kernel", json_boolean(ph->pool->impl.kernel));
    json_object_set_new(z, "pool", json_string(ph->pool->name[0] ? ph->pool->name : ""));
    json_object_set_new(z, "zpool_create", json_string(ph->pool->create_cmd));
    json_object_set_new(z, "vdev", json_string(ph->pool->device[0] ? ph->pool->device : ph->pool->image));
    json_object_set_new(z, "dataset", json_string(t->mnt.dataset));
    for (size_t k = 0; k < ZK_COUNT; k++) {
        const struct zfs_knob *zk = &m->zk[k];
        if (k == ZK_RECORDSIZE)
            json_object_set_new(z, zk->prop, json_integer(strtoll(zk->zval[t->zv[k]], NULL, 10)));
        else
            json_object_set_new(z, zk->prop, json_string(zk->zval[t->zv[k]]));
    }
    json_object_set_new(z, "cold_recycle",
                        !cold ? json_null()
                        : !strcmp(m->zk[ZK_PRIMARYCACHE].zval[t->zv[ZK_PRIMARYCACHE]], "metadata")
                            ? json_string("ARC cold: primarycache=metadata keeps no data block in the ARC")
                            : json_string("ARC warm: the kernel's pages are dropped, and primarycache=all keeps the "
                                          "retired segment's records in the ARC"));
    static const char *const names[4] = {"pool_read_ops_per_commit", "pool_write_ops_per_commit",
                                         "pool_read_bytes_per_commit", "pool_write_bytes_per_commit"};
    for (int k = 0; k < 4; k++)
        json_object_set_new(z, names[k], pool && txns > 0 ? json_real(pool[k] / txns) : json_null());
    json_object_set_new(z, "pool_counters",
                        json_string(ph->pool->impl.kernel ? "zpool iostat -Hp POOL 1, over the "
                                                            "measured window"
                                                          : "zpool iostat POOL 1 (rounded to 3 "
                                                            "digits), over the measured window"));
    return z;
}

static json_t *target_json(const struct target *t, const struct matrix_opts *m, unsigned rep, int snaps,
                           int snap_err)
{
    json_t *j = json_object();
    int image = t->k && t->k->mkfs && !m->device;
    json_object_set_new(j, "fs", json_string(t->name));
    json_object_set_new(j, "fs_type", json_string(t->fstype));
    json_object_set_new(j, "native", json_boolean(t->k == NULL));
    json_object_set_new(j, "nodatacow", json_boolean(t->k && t->k->nocow));
    json_object_set_new(j, "mkfs", t->mkfs_cmd[0] ? json_string(t->mkfs_cmd) : json_null());
    json_object_set_new(j, "mount_options_asked", t->mopts ? json_string(t->mopts) : json_null());
    image |= t->zfs && !m->device;
    json_object_set_new(j, "image_size", image ? json_integer((json_int_t)m->image_size) : json_null());
    json_object_set_new(j, "image_init", image ? json_string(m->image_zero ? "zero" : "sparse") : json_null());
    json_object_set_new(j, "loop",
                        image && !t->zfs ? json_string(m->loop_direct ? "direct" : "buffered") : json_null());
    json_object_set_new(j, "loop_device", t->mnt.loopdev[0] ? json_string(t->mnt.loopdev) : json_null());
    json_object_set_new(j, "device",
                        t->mnt.device[0]      ? json_string(t->mnt.device)
                        : t->zfs && m->device ? json_string(m->device)
                                              : json_null());
    json_object_set_new(j, "snapshot_every_s", t->mnt.subvol ? json_real(m->snapshot_every) : json_null());
    json_object_set_new(j, "snapshots", t->mnt.subvol ? json_integer(snaps) : json_null());
    json_object_set_new(j, "snapshot_error", snap_err ? json_string(strerror(-snap_err)) : json_null());
    json_object_set_new(j, "preset", m->preset ? json_string(m->preset) : json_null());
    json_object_set_new(j, "repeat", json_integer(rep + 1));
    json_object_set_new(j, "repeats", json_integer(m->repeat));
    return j;
}

/* Item i in round rep: its run, its cell, its JSON line. */
static int phase_run_one(struct bench_sweep *s, size_t item, unsigned rep)
{
    struct phase *ph = s->ctx;
    size_t i, ti;
    item_of(ph, item, &i, &ti);
    struct target *t = &ph->t[ti];
    if (!t->up)
        return 0;
    struct bench_config cfg = ph->c->cfgs[i];
    struct snapper sp;
    struct window win = {{0, 0}};
    struct mx_zfs_iostat io;
    int snapping = 0, sampling = 0, cold = 0;
    cfg.dir = t->dir;
    if (t->zfs) {
        /* the device columns: the disk under the image, or --device */
        cfg.count_device = t->count_dev[0] ? t->count_dev : NULL;
        cfg.window = window_mark;
        cfg.window_arg = &win;
        /* cold: the engine drops the kernel's pages of a retired segment;
         * the ARC keeps its records unless the dataset's primarycache is
         * metadata (the default with --cold-recycle) */
        cold = cfg.cold_recycle;
        sampling = mx_zfs_iostat_start(&io, ph->pool) == 0;
    }
    sync();
    if (t->mnt.subvol && ph->m->snapshot_every > 0) {
        if (snapper_start(&sp, &t->mnt, ph->m->snapshot_every) == 0)
            snapping = 1;
        else
            fprintf(stderr, "commitlab matrix: %s: cannot start the snapshot thread\n", t->name);
    }
    bench_run(&cfg, ph->r, bench_sweep_tick, s);
    if (snapping)
        snapper_stop(&sp);
    double pool[4], *poolp = NULL;
    if (sampling) {
        mx_zfs_iostat_stop(&io, win.t[1]);
        if (win.t[1] > 0 && mx_zfs_iostat_sum(&io, win.t[0], win.t[1], pool) == 0)
            poolp = pool;
        mx_zfs_iostat_free(&io);
    }
    int snaps = snapping ? (int)sp.taken : -1, snap_err = snapping ? sp.err : 0;
    int stopped = ph->r->status == RUN_INTERRUPTED;
    if (stopped) { /* a row of its own, never among the finished runs' medians */
        char label[256], how[200];
        struct cell *x = &ph->stopped;
        memset(x, 0, sizeof *x);
        cell_add(x, &cfg, ph->r, snaps, poolp);
        bench_stop_progress(&cfg, ph->r, how, sizeof how);
        snprintf(x->stopped, sizeof x->stopped, "INTERRUPTED by %s %s", bench_signal_name(ph->r->stop_signal), how);
        ph->has_stopped = 1;
        ph->stopped_cfg = i;
        ph->stopped_tgt = ti;
        bench_label(&cfg, label, sizeof label);
        bench_stop_note("during run %zu of %zu (%s: %s) %s", s->pos + 1, s->total, t->name, label, how);
    } else {
        cell_add(&t->cells[i], &cfg, ph->r, snaps, poolp);
        if (cold)
            t->cells[i].arc =
                strcmp(ph->m->zk[ZK_PRIMARYCACHE].zval[t->zv[ZK_PRIMARYCACHE]], "metadata") ? "ARC warm" : "ARC cold";
    }
    if (ph->r->status == RUN_ERROR)
        ph->failed++;
    if (snap_err) {
        ut_progress_clear(s->progress);
        fprintf(stderr, "commitlab matrix: %s: a snapshot failed: %s\n", t->name, strerror(-snap_err));
        ph->failed++;
    }
    if (ph->c->so.jsonl) {
        json_t *extra = target_json(t, ph->m, rep, snaps, snap_err);
        json_object_set_new(extra, "zfs", t->zfs ? zfs_json(t, ph, poolp, (double)ph->r->txns, cold) : json_null());
        if (bench_json_append_extra(ph->c->so.jsonl, &cfg, ph->r, (unsigned)s->pos + 1, (unsigned)s->total,
                                    "matrix", extra))
            ph->failed++;
        json_decref(extra);
    }
    bench_result_free(ph->r);
    return stopped ? -1 : 0;
}

/* ---- what a phase prints ------------------------------------------------------------ */

/* The engines of the sweep, in sweep order: their count, engine e's first
 * configuration in *first. */
static size_t engines_of(const struct bench_cli *c, size_t *first, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n && n < max; i++) {
        int seen = 0;
        for (size_t j = 0; j < n; j++)
            seen |= !strcmp(c->cfgs[first[j]].engine, c->cfgs[i].engine);
        if (!seen)
            first[n++] = i;
    }
    return n;
}

#define MAX_ENGINES 8

static int write_json(struct bench_cli *c, json_t *j)
{
    int rc = c->so.jsonl ? bench_json_write(c->so.jsonl, j) : 0;
    json_decref(j);
    return rc ? 1 : 0;
}

/* A target's rows and its verdicts (kept in t->v); the failures writing. */
static int print_target(struct target *t, const struct matrix_opts *m, struct bench_cli *c, struct verdict_list *vl)
{
    size_t first[MAX_ENGINES], ne = engines_of(c, first, MAX_ENGINES);
    int failed = 0;
    for (size_t i = 0; i < c->n; i++)
        table_row(stdout, t->name, &c->cfgs[i], &t->cells[i]);
    for (size_t e = 0; e < ne; e++) {
        struct verdict *v = &t->v[e];
        const char *engine = c->cfgs[first[e]].engine;
        judge(t->name, engine, c->cfgs, t->cells, c->n, m->repeat, v);
        if (!v->pairs && !v->unexercised && !strstr(engine, "commitlab"))
            continue; /* nothing to say about an engine without recycle runs */
        printf("  verdict: %s\n", v->text);
        verdict_keep(vl, v->text);
        json_t *j = json_object();
        json_object_set_new(j, "schema", json_string("commitlab-matrix-verdict/1"));
        json_object_set_new(j, "fs", json_string(t->name));
        json_object_set_new(j, "fs_type", json_string(t->fstype));
        json_object_set_new(j, "native", json_boolean(t->k == NULL));
        json_object_set_new(j, "engine", json_string(engine));
        json_object_set_new(j, "pairs", json_integer(v->pairs));
        json_object_set_new(j, "helps", json_integer(v->helps));
        json_object_set_new(j, "hurts", json_integer(v->hurts));
        json_object_set_new(j, "tps_change", v->pairs ? json_real(exp(v->log_sum / v->pairs) - 1) : json_null());
        json_object_set_new(j, "verdict", v->what ? json_string(v->what) : json_null());
        json_object_set_new(j, "repeats", json_integer(m->repeat));
        json_object_set_new(j, "text", json_string(v->text));
        failed += write_json(c, j);
    }
    return failed;
}

/* Where a filesystem of the native one's type was made on a loop device
 * (or --device): the layer's own cost -- native against layered tps,
 * configuration by configuration -- and the two verdicts on recycling,
 * with a note where they disagree. */
static int print_layer(const struct target *nat, const struct target *t, const struct matrix_opts *m,
                       struct bench_cli *c, struct verdict_list *vl)
{
    size_t first[MAX_ENGINES], ne = engines_of(c, first, MAX_ENGINES);
    char layer[4400];
    int failed = 0;
    if (m->device)
        snprintf(layer, sizeof layer, "the device %.4000s", t->mnt.device[0] ? t->mnt.device : m->device);
    else
        snprintf(layer, sizeof layer, "a loop device (%s, %s image)", m->loop_direct ? "direct I/O" : "buffered",
                 m->image_zero ? "zero-filled" : "sparse");
    printf("\n%s on %s against %s (the same configurations, in the same rounds):\n", t->name, layer, nat->name);
    /* An ext4 without a journal (a root filesystem made with -O
     * ^has_journal, as some virtual machines' are) syncs no journal
     * commit: set beside one that does, the difference is the journal's as
     * much as the layer's. */
    if (nat->journal >= 0 && t->journal >= 0 && nat->journal != t->journal) {
        char jnote[600];
        snprintf(jnote, sizeof jnote,
                 "NOTE: %s runs %s journal and %s %s: %s/native is the journal's cost as well as the %s's%s", nat->name,
                 nat->journal ? "a" : "no", t->name, t->journal ? "does" : "does not",
                 m->device ? "device" : "loop", m->device ? "device" : "loop layer",
                 nat->journal ? "" : " (--mkfs-opts \"ext4:-O ^has_journal\" makes them alike)");
        printf("  %s\n", jnote);
        verdict_keep(vl, jnote);
    }
    json_t *rows = json_array();
    for (size_t i = 0; i < c->n; i++) {
        const struct cell *a = &nat->cells[i], *b = &t->cells[i];
        char label[256];
        bench_label(&c->cfgs[i], label, sizeof label);
        double na = median(a->tps, a->n), lb = median(b->tps, b->n);
        if (na > 0 && lb > 0)
            printf("  %-60s native %10.1f tps  %s %10.1f tps  %s/native %.2f\n", label, na, m->device ? "device" : "loop",
                   lb, m->device ? "device" : "loop", lb / na);
        else
            printf("  %-60s native %s  %s %s\n", label, na > 0 ? "ok" : "-", m->device ? "device" : "loop",
                   lb > 0 ? "ok" : "-");
        json_array_append_new(rows, json_pack("{s:s, s:o, s:o, s:o}", "config", label, "native_tps",
                                              na > 0 ? json_real(na) : json_null(), "tps",
                                              lb > 0 ? json_real(lb) : json_null(), "ratio",
                                              na > 0 && lb > 0 ? json_real(lb / na) : json_null()));
    }
    for (size_t e = 0; e < ne; e++) {
        const struct verdict *vn = &nat->v[e], *vt = &t->v[e];
        const char *engine = c->cfgs[first[e]].engine;
        if (!vn->what && !vt->what && !strstr(engine, "commitlab"))
            continue;
        char note[600];
        int agree = vn->what && vt->what && !strcmp(vn->what, vt->what);
        if (!vn->what || !vt->what)
            snprintf(note, sizeof note, "%s: no comparison of verdicts: %s has none", engine,
                     !vn->what ? nat->name : t->name);
        else if (agree)
            snprintf(note, sizeof note, "%s: the verdicts agree: recycling %s on both", engine, vn->what);
        else
            snprintf(note, sizeof note, "NOTE: %s: the %s verdict disagrees with the native one: recycling %s on %s, "
                     "%s on %s -- the %s changes the answer", engine, m->device ? "device" : "loop", vt->what,
                     t->name, vn->what, nat->name, m->device ? "device" : "loop layer");
        printf("  %s\n", note);
        if (!agree && vn->what && vt->what)
            verdict_keep(vl, note);
        json_t *j = json_object();
        json_object_set_new(j, "schema", json_string("commitlab-matrix-layer/1"));
        json_object_set_new(j, "fs", json_string(t->name));
        json_object_set_new(j, "native_fs", json_string(nat->name));
        json_object_set_new(j, "layer", json_string(m->device ? "device" : "loop"));
        json_object_set_new(j, "loop", m->device ? json_null() : json_string(m->loop_direct ? "direct" : "buffered"));
        json_object_set_new(j, "image_init", m->device ? json_null() : json_string(m->image_zero ? "zero" : "sparse"));
        json_object_set_new(j, "device", m->device ? json_string(m->device) : json_null());
        json_object_set_new(j, "engine", json_string(engine));
        json_object_set_new(j, "native_journal", nat->journal < 0 ? json_null() : json_boolean(nat->journal));
        json_object_set_new(j, "journal", t->journal < 0 ? json_null() : json_boolean(t->journal));
        json_object_set_new(j, "configs", json_incref(rows));
        json_object_set_new(j, "native_verdict", vn->what ? json_string(vn->what) : json_null());
        json_object_set_new(j, "verdict", vt->what ? json_string(vt->what) : json_null());
        json_object_set_new(j, "agree", vn->what && vt->what ? json_boolean(agree) : json_null());
        json_object_set_new(j, "text", json_string(note));
        failed += write_json(c, j);
    }
    json_decref(rows);
    return failed;
}

/* A phase a signal stopped: the rows of the configurations that finished
 * a run on each target, then the interrupted run's own row; no verdict
 * (it compares every pair of the sweep, which did not all run). */
static void print_stopped(const struct phase *ph)
{
    for (size_t ti = 0; ti < ph->nt; ti++)
        for (size_t i = 0; i < ph->c->n; i++) {
            const struct cell *x = &ph->t[ti].cells[i];
            if (x->n || x->na || x->errors)
                table_row(stdout, ph->t[ti].name, &ph->c->cfgs[i], x);
        }
    if (ph->has_stopped)
        table_row(stdout, ph->t[ph->stopped_tgt].name, &ph->c->cfgs[ph->stopped_cfg], &ph->stopped);
    printf("  no verdicts: the sweep was interrupted\n");
    fflush(stdout);
}

/* ---- one phase: the filesystems up at once ------------------------------------------ */

/* A zfs target: the phase's pool first (once), then its dataset. */
static int zfs_target_up(struct phase *ph, struct target *t, const char *workdir, char *err, size_t errlen)
{
    const struct matrix_opts *m = ph->m;
    if (ph->pool_failed) {
        snprintf(err, errlen, "%s", ph->pool_err);
        return -1;
    }
    if (!ph->pool->created) {
        struct mx_image img = {m->image_size, m->image_zero, NULL, NULL, 0, m->device, 0};
        if (mx_zfs_pool_up(ph->pool, &img, workdir, bench_interrupted, ph->pool_err, sizeof ph->pool_err)) {
            ph->pool_failed = 1;
            snprintf(err, errlen, "%s", ph->pool_err);
            return -1;
        }
        struct bench_env e;
        char rp[4096];
        if (m->device && realpath(m->device, rp))
            snprintf(t->count_dev, sizeof t->count_dev, "%s", strrchr(rp, '/') + 1);
        bench_env_probe(ph->pool->home, &e);
        if (!m->device)
            snprintf(t->count_dev, sizeof t->count_dev, "%s", e.device);
        printf("zfs: %s, pool %s on %s%s%s\n", ph->pool->impl.name, ph->pool->name,
               ph->pool->device[0] ? ph->pool->device : ph->pool->image,
               ph->pool->daemon ? "; zfs-fuse started by "
                                  "matrix"
                                : "",
               ph->pool->impl.kernel ? "" : "; every call of the engine crosses FUSE to that daemon");
        if (ph->c->cfgs[0].cold_recycle)
            printf("zfs: --cold-recycle: the engine drops a retired segment's pages above FUSE (or in the kernel); "
                   "in the ARC it is cold only where primarycache=metadata (\"ARC cold\"), warm where all (\"ARC "
                   "warm\")\n");
        fflush(stdout);
    } else {
        for (size_t i = 0; i < ph->nt && !t->count_dev[0]; i++) /* the first dataset's (never itself) */
            if (&ph->t[i] != t && ph->t[i].zfs && ph->t[i].count_dev[0])
                snprintf(t->count_dev, sizeof t->count_dev, "%s", ph->t[i].count_dev);
    }
    char props[ZK_COUNT][80];
    const char *pp[ZK_COUNT];
    for (size_t k = 0; k < ZK_COUNT; k++) {
        snprintf(props[k], sizeof props[k], "%s=%s", m->zk[k].prop, m->zk[k].zval[t->zv[k]]);
        pp[k] = props[k];
    }
    if (mx_zfs_dataset_up(ph->pool, &t->mnt, pp, ZK_COUNT, m->snapshot_every > 0, err, errlen))
        return -1;
    snprintf(t->dir, sizeof t->dir, "%.4000s/bench", t->mnt.mnt);
    return 0;
}

/* Sets up the phase's targets (a failed one is reported and skipped). */
static void phase_up(struct phase *ph, const char *workdir, struct ut_progress *pr, int *setup_failed)
{
    const struct matrix_opts *m = ph->m;
    for (size_t i = 0; i < ph->nt && !bench_interrupted(); i++) {
        struct target *t = &ph->t[i];
        char err[1024];
        if (!t->k) {
            snprintf(t->dir, sizeof t->dir, "%.4000s/native", workdir);
            int rc = ut_scratch_make(t->dir, "matrix");
            t->up = rc == 0;
            if (rc)
                snprintf(err, sizeof err, "%.900s: %s", t->dir, strerror(-rc));
        } else if (t->k->zfs) {
            t->up = zfs_target_up(ph, t, workdir, err, sizeof err) == 0;
        } else {
            struct mx_image img = {m->image_size, m->image_zero, opt_for(m->mkfs_opts, m->nmkfs, t->k->name),
                                   t->mopts, m->loop_direct, m->device,
                                   m->snapshot_every > 0 && !strcmp(t->k->fstype, "btrfs")};
            t->up = mx_fs_up(&t->mnt, t->k, &img, workdir, bench_interrupted, t->mkfs_cmd, sizeof t->mkfs_cmd, err,
                             sizeof err) == 0;
            snprintf(t->dir, sizeof t->dir, "%.4000s/bench", t->mnt.mnt);
            if (!t->up)
                mx_fs_down(&t->mnt);
        }
        t->journal = -1;
        if (t->up) {
            struct bench_env e;
            bench_env_probe(t->k ? t->mnt.mnt : t->dir, &e);
            t->journal = e.fs_journal;
        }
        if (!t->up) {
            ut_progress_clear(pr);
            fprintf(stderr, "commitlab matrix: %s: %s\n", t->name, err);
            (*setup_failed)++;
            pr->total -= ph->c->n * m->repeat;
        }
    }
}

static void phase_down(struct phase *ph)
{
    for (size_t i = 0; i < ph->nt; i++) {
        struct target *t = &ph->t[i];
        if (t->k)
            mx_fs_down(&t->mnt);
        else if (t->up)
            ut_scratch_remove(t->dir);
        t->up = 0;
    }
    if (ph->pool)
        mx_zfs_pool_down(ph->pool); /* its datasets and snapshots with it */
}

/* The targets of phase p: the native baseline, then each filesystem of
 * the phase (all of them with images, one with --device), a zfs one once
 * per combination of the --zfs-* lists. */
static size_t zfs_combos(const struct matrix_opts *m)
{
    size_t n = 1;
    for (size_t k = 0; k < ZK_COUNT; k++)
        n *= m->zk[k].n;
    return n;
}

static size_t phase_ntargets(const struct matrix_opts *m, size_t p)
{
    size_t n = 1;
    for (size_t i = 0; i < m->nfs; i++)
        if (!m->device || i == p)
            n += m->fs[i]->zfs ? zfs_combos(m) : 1;
    return n;
}

static void phase_targets(struct target *t, const struct matrix_opts *m, size_t p)
{
    size_t j = 1;
    for (size_t i = 0; i < m->nfs; i++) {
        if (m->device && i != p)
            continue;
        const struct mx_fs_kind *k = m->fs[i];
        size_t nc = k->zfs ? zfs_combos(m) : 1;
        for (size_t c = 0; c < nc; c++, j++) {
            t[j].k = k;
            snprintf(t[j].fstype, sizeof t[j].fstype, "%s", k->fstype);
            t[j].mopts = opt_for(m->mount_opts, m->nmount, k->name);
            if (!k->zfs) {
                snprintf(t[j].name, sizeof t[j].name, "%s", k->name);
                continue;
            }
            t[j].zfs = 1;
            size_t at = (size_t)snprintf(t[j].name, sizeof t[j].name, "zfs (%s)", m->zimpl.name), rest = c;
            for (size_t z = ZK_COUNT; z-- > 0;) { /* recordsize outermost */
                t[j].zv[z] = rest % m->zk[z].n;
                rest /= m->zk[z].n;
            }
            for (size_t z = 0; z < ZK_COUNT && at < sizeof t[j].name; z++)
                if (m->zk[z].n > 1)
                    at += (size_t)snprintf(t[j].name + at, sizeof t[j].name - at, " %s=%s", m->zk[z].prop,
                                           m->zk[z].val[t[j].zv[z]]);
        }
    }
}

/* ---- the command -------------------------------------------------------------- */

/* The filesystem under the work directory, for the native baseline. */
static void native_type(const char *workdir, char *type, size_t len)
{
    struct bench_env e;
    bench_env_probe(workdir, &e);
    snprintf(type, len, "%s", e.fs_type[0] ? e.fs_type : "unknown");
}

/* The fresh filesystem that the native one can be compared with: made
 * of its type, not tmpfs, and not nodatacow (a mount option away). */
static int same_type(const struct target *nat, const struct target *t)
{
    return t->k && t->k->mkfs && !t->k->nocow && !strcmp(t->k->fstype, nat->fstype);
}

static struct target *targets_new(size_t n, size_t ncfg)
{
    struct target *t = calloc(n, sizeof *t);
    for (size_t i = 0; t && i < n; i++) {
        t[i].mnt = (struct mx_mount)MX_MOUNT_INIT;
        t[i].cells = calloc(ncfg ? ncfg : 1, sizeof *t[i].cells);
        t[i].v = calloc(MAX_ENGINES, sizeof *t[i].v);
        if (!t[i].cells || !t[i].v)
            return NULL; /* out of memory at start: the process exits */
    }
    return t;
}

static void targets_free(struct target *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) {
        free(t[i].cells);
        free(t[i].v);
    }
    free(t);
}

int cmd_matrix(int argc, char **argv)
{
    struct matrix_opts m;
    struct bench_cli c;
    char **rest = calloc((size_t)argc + 16, sizeof *rest);
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
    bench_cli_parse("matrix", nrest, rest, m.npreset, &c);
    bench_cli_load_plugins("matrix", &c);
    free(rest);
    if (!m.nfs)
        ut_usage_error("matrix", "--fs is required: a list of %s", MX_FS_LIST);
    if (c.dir_given || c.base.reuse)
        ut_usage_error("matrix", "%s: the runs go to each filesystem's own mount (use --workdir for where the "
                        "images go)", c.dir_given ? "--dir" : "--reuse");
    if (c.list_engines)
        ut_usage_error("matrix", "--list-engines: see commitlab bench --list-engines");
    bench_warn_unread("matrix", c.cfgs, c.n, stderr);
    check_matrix_args(&m);
    /* --cold-recycle on zfs: cold in the ARC too, unless the user lists
     * primarycache values of their own */
    if (c.n && c.cfgs[0].cold_recycle && m.zk[ZK_PRIMARYCACHE].val[0] == m.zk[ZK_PRIMARYCACHE].def &&
        m.zk[ZK_PRIMARYCACHE].n == 1) {
        m.zk[ZK_PRIMARYCACHE].val[0] = "metadata";
        snprintf(m.zk[ZK_PRIMARYCACHE].zval[0], sizeof m.zk[ZK_PRIMARYCACHE].zval[0], "metadata");
    }
    /* Small segments and frequent checkpoints, so that segments are
     * retired and reused within a short run: commitlab's and PostgreSQL's
     * segment size (initdb --wal-segsize 1), and the checkpoint distance
     * (RocksDB: its memtable size; PostgreSQL: max_wal_size). */
    for (size_t i = 0; i < c.n; i++) {
        struct bench_config *cfg = &c.cfgs[i];
        int cl = !strcmp(cfg->engine, "commitlab") || !strcmp(cfg->engine, "postgres");
        if (cl && !c.vals[K_SEGMENT_SIZE].n) {
            cfg->segment_size = 1u << 20;
            cfg->given[K_SEGMENT_SIZE] = 1;
        }
        if ((cl || !strcmp(cfg->engine, "rocksdb")) && !c.vals[K_CHECKPOINT].n) {
            cfg->checkpoint_bytes = 4u << 20;
            cfg->given[K_CHECKPOINT] = 1;
        }
    }
    if (c.n * m.repeat * (m.nfs + 1) > 100000)
        ut_usage_error("matrix", "%zu runs is too many", c.n * m.repeat * (m.nfs + 1));
    if (mx_preflight(m.fs, m.nfs, m.device == NULL)) {
        bench_cli_free(&c);
        return UT_EXIT_USAGE;
    }
    int any_zfs = 0;
    for (size_t i = 0; i < m.nfs; i++)
        any_zfs |= m.fs[i]->zfs;
    if (any_zfs) {
        char err[512];
        if (mx_zfs_detect(&m.zimpl, err, sizeof err))
            ut_usage_error("matrix", "--fs zfs: %s", err);
        for (size_t v = 0; v < m.zk[ZK_COMPRESSION].n && !m.zimpl.kernel; v++)
            if (!strcmp(m.zk[ZK_COMPRESSION].zval[v], "lz4"))
                ut_usage_error("matrix",
                               "--zfs-compression: lz4 needs OpenZFS; %s (pool version 23) compresses "
                               "with lzjb, gzip and zle only: expected off here",
                               m.zimpl.name);
    }
    /* The device is checked before anything is written anywhere. */
    if (m.device) {
        char err[2048];
        if (mx_device_check(m.device, m.destroy, err, sizeof err))
            ut_usage_error("matrix", "--device: %s", err);
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
    {
        char nat[4200];
        snprintf(nat, sizeof nat, "%.4000s/native", workdir);
        ut_scratch_remove(nat); /* only when marked as ours */
    }
    /* What is left where this run's directories go is the user's: refused
     * before any work, nothing touched. */
    for (size_t i = 0; i <= m.nfs; i++) {
        char home[4200];
        struct stat st;
        if (i == m.nfs)
            snprintf(home, sizeof home, "%.4000s/native", workdir);
        else
            mx_fs_home(home, sizeof home, workdir, m.fs[i]);
        if (lstat(home, &st) == 0) {
            if (ut_scratch_ours(home)) /* a dead run's, kept because its filesystem would not unmount */
                fprintf(stderr, "commitlab matrix: --workdir: %s is an earlier run's and something is still mounted "
                                "in it (umount it, then run again)\n", home);
            else
                fprintf(stderr, "commitlab matrix: --workdir: %s already exists and is not this command's; nothing "
                                "was touched (move it, or choose another --workdir)\n", home);
            if (c.so.jsonl)
                ut_output_close(c.so.jsonl, c.out_path, out_created);
            bench_dirs_release(&dirs);
            bench_cli_free(&c);
            return UT_EXIT_USAGE;
        }
    }
    /* --engine postgres: the server's checks before any filesystem is
     * made -- its binaries, its account, --pg-set refused as bench refuses
     * it (a setting that would listen on the network) -- with the trial
     * server in --workdir; each run sets its own directory later */
    for (size_t i = 0; i < c.n; i++)
        c.cfgs[i].dir = workdir;
    if ((orc = bench_postgres_preflight("matrix", c.cfgs, c.n)) != 0) {
        if (c.so.jsonl)
            ut_output_close(c.so.jsonl, c.out_path, out_created);
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return orc;
    }
    char ntype[64];
    native_type(workdir, ntype, sizeof ntype);
    /* Images: every filesystem up at once, one phase, one sweep with the
     * native runs.  A device: one filesystem at a time on it, each phase
     * with native runs of its own. */
    size_t nphase = m.device ? m.nfs : 1, ntargets = 0;
    for (size_t p = 0; p < nphase; p++)
        ntargets += phase_ntargets(&m, p);
    printf("commitlab matrix: %zu configuration%s x %u repeat%s on %zu filesystem%s and native %s (%s%s)\n", c.n,
           c.n == 1 ? "" : "s", m.repeat, m.repeat == 1 ? "" : "s", m.nfs, m.nfs == 1 ? "" : "s", ntype,
           m.device ? "on the device " : "images in ", m.device ? m.device : workdir);
    printf("tps is the median over the repeats, spread half their range; dev B/txn and rd B/txn are what the\n"
           "device under the filesystem (the loop device, --device, or the native disk, which other processes\n"
           "share) wrote and read per transaction; waits/wait ms: commits that waited for a segment to be\n"
           "ready, and how long; reused: recycled segments written again; max@sw: the longest commit across a\n"
           "segment switch.\n");
    for (size_t i = 0; i < c.n; i++)
        if (!strcmp(c.cfgs[i].engine, "postgres")) {
            printf("postgres: segments is PostgreSQL's own wal_recycle (recycle: on, fresh: off), its WAL\n"
                   "segments those of initdb --wal-segsize; the JSON lines count the segments its checkpoints\n"
                   "recycled and removed (metrics.segments), from its log.\n");
            break;
        }
    printf("\n");
    table_header(stdout);
    fflush(stdout);

    struct ut_progress pr;
    ut_progress_init(&pr, c.so.quiet, c.n * m.repeat * ntargets, c.base.warmup + c.base.duration + 1);
    int failed = 0, setup_failed = 0;
    struct verdict_list vl = {0};
    struct bench_result *r = malloc(sizeof *r);
    for (size_t p = 0; p < nphase && r && !bench_interrupted(); p++) {
        size_t per = phase_ntargets(&m, p);
        struct target *t = targets_new(per, c.n);
        if (!t) {
            failed++;
            break;
        }
        snprintf(t[0].name, sizeof t[0].name, "native %s", ntype);
        snprintf(t[0].fstype, sizeof t[0].fstype, "%s", ntype);
        phase_targets(t, &m, p);
        struct phase ph = {t, per, &m, &c, r, 0};
        struct mx_zpool *zpool = NULL;
        if (any_zfs && (!m.device || m.fs[p]->zfs) && !(ph.pool = zpool = calloc(1, sizeof *zpool))) {
            targets_free(t, per);
            failed++;
            break;
        }
        phase_up(&ph, workdir, &pr, &setup_failed);
        char what[160];
        snprintf(what, sizeof what, "%s", m.device ? m.fs[p]->name : "run");
        struct bench_sweep sw = {.n = c.n * per, .rounds = m.repeat, .shuffle = m.repeat > 1,
                                 .seed = c.base.seed + p, .run = phase_run_one, .ctx = &ph, .progress = &pr,
                                 .what = what, .label = phase_label};
        if (!bench_interrupted())
            bench_sweep_run(&sw);
        else
            bench_stop_note("while setting up the filesystems, before the runs of this phase");
        failed += ph.failed;
        ut_progress_clear(&pr);
        if (bench_interrupted())
            print_stopped(&ph);
        /* the layer's own cost needs each target's mount details: before
         * taking them down, after the rows */
        if (!bench_interrupted()) {
            for (size_t i = 0; i < per; i++)
                if (t[i].up)
                    failed += print_target(&t[i], &m, &c, &vl);
            for (size_t i = 1; i < per; i++)
                if (t[0].up && t[i].up && same_type(&t[0], &t[i]))
                    failed += print_layer(&t[0], &t[i], &m, &c, &vl);
            if (p + 1 < nphase)
                printf("\n");
            fflush(stdout);
        }
        phase_down(&ph);
        free(zpool);
        targets_free(t, per);
    }
    free(r);
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
        bench_stop_report("matrix", "everything it snapshotted, mounted and attached is deleted, unmounted and "
                                    "detached");
        return 128 + bench_stop_signal();
    }
    return setup_failed || failed ? 1 : 0;
}
