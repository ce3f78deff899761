/*
 * probe.h -- internals of `commitlab probe`, shared by the files of bench/probe/.
 *
 * The probe is a program about the operating system, not about the engine:
 * it calls open/pwrite/fsync/fdatasync/io_uring directly, like PostgreSQL's
 * pg_test_fsync, so that what it measures is the filesystem and device and
 * nothing of ours.  Every measured or skipped line is one struct probe_row;
 * the human table is printed as rows arrive, and the JSON record is written
 * from the collected rows at the end by probe_json.c (the only place that
 * knows the JSON layout) -- or when a signal stops the probe, with the row
 * in progress marked interrupted.
 *
 * With --repeat N the sections run N times over (rounds), every row once
 * per round, so that a disk's drift falls on every row alike; a row keeps
 * each round's measurement (struct probe_round), and the table, printed
 * during the last round only, shows the median ops/sec of the rounds with
 * their minimum and maximum.  The first round's text is kept without the
 * rows' numbers (the layout: headings and labels, and where each row's
 * numbers go), so that a signal in any round can still print the table:
 * each row begun with what its rounds so far measured.
 *
 * A concurrent row (several threads, or several io_uring chains in
 * flight) measures throughput over all of them: its time per operation is
 * printed per thread (or chain), streams / throughput, and labelled so
 * ("usecs/op/thread"), never as the plain usecs/op of a serial row, which
 * readers take for one operation's latency.
 */
#ifndef CL_PROBE_H
#define CL_PROBE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PROBE_BLCKSZ (8 * 1024)            /* pg_test_fsync's XLOG_BLCKSZ */
#define PROBE_FILE_SIZE (16 * 1024 * 1024) /* its DEFAULT_XLOG_SEG_SIZE */

/* pg_test_fsync's column layout (PostgreSQL 9.5 and later). */
#define PROBE_LABEL_FORMAT "        %-30s"
#define PROBE_NA_FORMAT "%21s"
#define PROBE_OPS_FORMAT "%13.3f ops/sec  %6.0f usecs/op"
/* Beyond it: after PROBE_OPS_FORMAT, a concurrent row's "/thread" or
 * "/chain"; with --repeat N > 1, the lowest and highest ops/sec of the
 * rounds (PROBE_OPS_FORMAT then shows their median). */
#define PROBE_RANGE_FORMAT "  lowest %13.3f  highest %13.3f"
#define PROBE_MAX_REPEAT 100

/* The sections, in the order they run.  --only takes these names. */
enum probe_section {
    SEC_SYNC1,    /* one 8kB write per sync method */
    SEC_SYNC2,    /* two 8kB writes */
    SEC_OPENSYNC, /* open_sync with 16 x 1 .. 1 x 16 kB */
    SEC_FDSYNC,   /* fsync on a non-write descriptor */
    SEC_NOSYNC,   /* non-synced 8kB writes */
    SEC_LATENCY,  /* p50/p99/max per method */
    SEC_URING,    /* io_uring linked write->sync chains */
    SEC_ZODB,     /* 0, 1 or 2 syncs per transaction */
    SEC_SEGMENTS, /* WAL segment preparation */
    SEC_APPENDS,  /* many small O_APPEND writes */
    SEC_OVERWRITE,/* O_DSYNC overwrites of a written file against fdatasync after appends */
    SEC_VERDICT,  /* plain words */
    SEC_COUNT
};

enum probe_status {
    ROW_OK,     /* measured: ops over secs */
    ROW_NA,     /* this platform cannot do it ("n/a") */
    ROW_NA_FS,  /* this filesystem or its mount options refuse it ("n/a*") */
    ROW_FAILED, /* a system call failed while measuring */
    ROW_INTERRUPTED, /* a signal stopped it: ops over secs are what it measured until then */
};

/* One round's measurement of a row (--repeat: one per round); a round a
 * signal stopped is ROW_INTERRUPTED with what it measured until then. */
struct probe_round {
    enum probe_status status;
    char reason[160];
    uint64_t ops;
    double secs;
    int has_latency; /* p50/p99/max below are valid */
    double p50_us, p99_us, max_us;
};

/* A row, over the rounds measured so far: status and reason are the first
 * round's that was not ok (so one failed round fails the row), except that
 * the round a signal stopped makes it interrupted; the numbers are those of
 * the ok rounds or, with none, what the interrupted round measured. */
struct probe_row {
    enum probe_section section;
    char label[48];
    enum probe_status status;
    char reason[160];
    uint64_t ops;              /* summed over the ok rounds */
    double secs;               /* likewise */
    double ops_per_sec;        /* one round: ops / secs; several: the median of the rounds' */
    double ops_per_sec_min, ops_per_sec_max;
    double usecs_per_op;       /* 1e6 / ops_per_sec (one round: secs / ops * 1e6), over all streams */
    int has_latency;           /* p50/p99/max below are valid: the medians of the rounds' */
    double p50_us, p99_us, max_us;
    const char *op;            /* what one op is: "write+fdatasync", "transaction", ... */
    unsigned streams;          /* concurrent: threads, or chains in flight; 1 for a serial row */
    const char *stream;        /* what one stream is: "thread", "chain"; NULL for a serial row */
    unsigned nrounds;          /* rounds measured so far */
    unsigned nok;              /* of which ok: the rounds the numbers are over */
    struct probe_round *rounds; /* [repeat] */
    size_t layout_label;       /* --repeat: where its label begins in the layout */
    size_t layout_at;          /* --repeat: where its numbers go in the layout (after the label) */
};

/* Per-op latency samples, in microseconds. */
struct probe_lat {
    double *v;
    size_t n, cap;
};

/* One block device on the way down from the probe's directory: the
 * device its filesystem is on, then, for a loop device, the device under
 * its backing file's filesystem, and so on. */
#define PROBE_CHAIN 4
struct probe_dev {
    char name[64];        /* in /sys/class/block: vda1, loop0 */
    char disk[64];        /* whose queue it uses: a partition's disk, else name */
    char device_class[48];/* "rotational", "non-rotational", "loop" */
    char write_cache[32]; /* queue/write_cache: "write back", "write through", or "" */
    char fua[8];          /* queue/fua: "1" (Force Unit Access writes), "0", or "" */
    char backing[512];    /* a loop device: its backing file */
};

struct probe_fsinfo {
    char fstype[32];
    char source[256];
    char mountpoint[512];
    char options[512];    /* per-mount options, then the superblock's */
    char device[64];      /* block device name in /sys/block, or "" */
    char device_class[48];/* "rotational", "non-rotational", "loop", "" */
    char write_cache[32]; /* /sys/block/X/queue/write_cache */
    char backing[512];    /* loop devices: the backing file */
    char fua[8];          /* /sys/block/X/queue/fua */
    struct probe_dev chain[PROBE_CHAIN]; /* device, and what a loop device's file is on */
    int nchain;
    int in_memory;        /* tmpfs or ramfs */
    unsigned long magic;  /* statfs f_type */
};

struct probe_ctx {
    const char *dir;     /* --dir */
    char work[4096];     /* our private directory inside dir */
    char path[4200];     /* the 16 MiB test file (pg_test_fsync.out) */
    double secs;         /* --seconds: per pg_test_fsync test */
    unsigned files;      /* --files */
    unsigned only;       /* bit mask of sections to run */
    unsigned repeat;     /* --repeat: rounds */
    unsigned round;      /* the round running, from 0 */
    size_t round_row;    /* rows begun in this round */
    FILE *out;           /* where the table goes now: table in the last round, else layout or discarded */
    FILE *table;         /* the human table: stdout, or stderr with --json - */
    FILE *layout_f;      /* --repeat: the first round's table text, without the rows' numbers */
    char *layout;        /* its text (open_memstream) */
    size_t layout_len;
    size_t live_at;      /* --repeat: how far into the layout the table has been printed */
    const char *json;    /* --json FILE, or NULL: written at the end, or when a signal stops the probe */
    const char *stopped_by; /* "SIGINT", ...: the signal that stopped the probe, or NULL */
    int tty;             /* stderr is a terminal: progress may go there */
    char *buf;           /* PROBE_FILE_SIZE random bytes, 4 kB aligned */
    int file_ready;      /* path written and fsynced */

    struct probe_row *rows;
    size_t nrows, caprows;

    /* what the verdict needs, filled in by whichever section measured it */
    double fdatasync_us, write_us;
    int odirect_ok;           /* -1 unknown, 0 refused, 1 works */
    char odirect_why[160];
    struct probe_fsinfo fs;
    char verdict[1024];       /* the final plain-words sentence(s) */
    const char *durability;   /* short verdict class for JSON */
};

/* Set by SIGALRM (end of a timed test) and by SIGINT/SIGTERM/SIGHUP. */
extern atomic_int probe_alarm;
extern atomic_int probe_interrupted;

/* probe.c: `commitlab probe [--dir D] [--seconds N] [--json FILE] [--only
 * SECTION] [--files N] [--repeat N]`, and what the sections share */
int cmd_probe(int argc, char **argv);
void probe_timer_start(double secs);
void probe_timer_stop(void);
double probe_beyond_secs(const struct probe_ctx *c);
void probe_label(struct probe_ctx *c, const char *label);
struct probe_row *probe_row_new(struct probe_ctx *c, enum probe_section s, const char *label, const char *op);
/* Marks r concurrent: streams threads (or chains in flight, ...), each a
 * "thread" (or "chain"); before its numbers. */
void probe_row_concurrent(struct probe_row *r, unsigned streams, const char *stream);
void probe_row_ok(struct probe_ctx *c, struct probe_row *r, uint64_t ops, double secs, const struct probe_lat *lat);
void probe_row_na(struct probe_ctx *c, struct probe_row *r, enum probe_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void probe_progress(const struct probe_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void probe_die(struct probe_ctx *c, const char *what) __attribute__((noreturn));
int probe_prepare_file(struct probe_ctx *c);
int probe_open_direct(const char *path, int flags);
void probe_join(char *dst, size_t n, const char *dir, const char *name);
void probe_fill_random(char *p, size_t n, uint64_t seed);

void lat_add(struct probe_lat *l, double us);
void lat_free(struct probe_lat *l);

/* probe_pg.c: the five sections of pg_test_fsync, and the latency one */
void probe_sync(struct probe_ctx *c, int writes_per_op);
void probe_open_syncs(struct probe_ctx *c);
void probe_fd_sync(struct probe_ctx *c);
void probe_non_sync(struct probe_ctx *c);
void probe_latency(struct probe_ctx *c);
double probe_measure_us(struct probe_ctx *c, int datasync, double secs);

/* probe_uring.c */
void probe_uring(struct probe_ctx *c);

/* probe_exp.c: the experiments from public threads (ZODB, wal_recycle, XFS appends,
 * O_DSYNC overwrites) */
void probe_zodb(struct probe_ctx *c);
void probe_segments(struct probe_ctx *c);
void probe_appends(struct probe_ctx *c);
void probe_overwrite(struct probe_ctx *c);

/* probe_verdict.c */
void probe_fsinfo(struct probe_ctx *c);
void probe_verdict(struct probe_ctx *c);

/* probe_json.c: the one place that writes JSON */
int probe_json_write(FILE *f, const struct probe_ctx *c, const char *const *section_names);

#endif
