/*
 * probe.c -- `commitlab probe`: what does a sync cost on this filesystem,
 * and can it be trusted?
 *
 * First the five tests of PostgreSQL's pg_test_fsync, with its headings,
 * labels, order, number format and methodology (a 16 MiB file written and
 * fsynced first so that earlier tests do not skew later ones; each test
 * loops until an alarm fires; open_* methods use O_DIRECT), so that the two
 * outputs can be set side by side.  Then what pg_test_fsync does not do:
 * latency distributions, io_uring chains, the experiments of public threads
 * (ZODB syncs per transaction, WAL segment preparation, many small
 * O_APPEND writes) and a verdict in plain words.
 *
 * This file owns the command line, the private work directory inside
 * --dir (removed at exit, and on SIGINT/SIGTERM/SIGHUP), the timer, and the
 * printing of rows; the sections live in probe_pg.c, probe_uring.c,
 * probe_exp.c and probe_verdict.c, the JSON record in probe_json.c.
 *
 * Interrupts are cooperative: the first signal sets probe_alarm (so every
 * timed loop ends at once) and probe_interrupted, and nothing else; the
 * main thread notices when the row in progress reports (probe_row_ok: the
 * row is kept, marked interrupted, with what it measured until then) or
 * the next row begins, finishes the line as pg_test_fsync does, removes
 * the work directory, writes --json with the rows so far, says on stderr
 * where it stopped, and exits 128+signal.  A second signal unlinks the
 * test file from the handler and exits at once.
 *
 * With --repeat N the table is printed in the last round only, so a signal
 * in an earlier round would leave nothing of it: the first round's text is
 * kept as a layout (headings and labels, each row's place for its
 * numbers), and the table is completed from it -- every row the first
 * round began, with the rounds it finished (the row in progress marked
 * with its round), from where the printed table stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "ut_args.h"
#include "ut_file.h"
#include "ut_scratch.h"
#include "ut_stats.h"

atomic_int probe_alarm;
atomic_int probe_interrupted;

static struct probe_ctx *g_ctx; /* for cleanup on the exit paths */
static int g_midline;           /* a row label is printed, its numbers are not */
static double g_timer_secs;     /* what the last timed test was to run */

static const char *const section_names[SEC_COUNT] = {
    [SEC_SYNC1] = "sync1",     [SEC_SYNC2] = "sync2",       [SEC_OPENSYNC] = "opensync",
    [SEC_FDSYNC] = "fdsync",   [SEC_NOSYNC] = "nosync",     [SEC_LATENCY] = "latency",
    [SEC_URING] = "uring",     [SEC_ZODB] = "zodb",         [SEC_SEGMENTS] = "segments",
    [SEC_APPENDS] = "appends", [SEC_OVERWRITE] = "overwrite", [SEC_VERDICT] = "verdict",
};
#define STR_(x) #x
#define STR(x) STR_(x)

#define SECTION_LIST                                                                                            \
    "pg, sync1, sync2, opensync, fdsync, nosync, latency, uring, zodb, segments, appends, overwrite, verdict"

/* ---- time ---------------------------------------------------------------- */

static void on_alarm(int sig)
{
    (void)sig;
    atomic_store(&probe_alarm, 1);
}

/* Like pg_test_fsync's alarm(secs_per_test), but to the microsecond. */
void probe_timer_start(double secs)
{
    struct itimerval it = {0};
    atomic_store(&probe_alarm, atomic_load(&probe_interrupted) ? 1 : 0);
    g_timer_secs = secs;
    it.it_value.tv_sec = (time_t)secs;
    it.it_value.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
        it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

void probe_timer_stop(void)
{
    struct itimerval it = {0};
    setitimer(ITIMER_REAL, &it, NULL);
}

/* Each row of the sections beyond pg_test_fsync runs a quarter of --seconds,
 * so that `--seconds 2` does all of them in well under a minute. */
double probe_beyond_secs(const struct probe_ctx *c)
{
    double s = c->secs / 4;
    return s < 0.01 ? 0.01 : s;
}

/* ---- cleanup and exits ---------------------------------------------------- */

static void cleanup(void)
{
    if (g_ctx && g_ctx->work[0]) {
        ut_rm_tree(g_ctx->work);
        g_ctx->work[0] = '\0';
    }
}

static void finish_line(void)
{
    if (g_midline && g_ctx) {
        fputc('\n', g_ctx->out);
        fflush(g_ctx->out);
        g_midline = 0;
    }
}

static int write_json(const struct probe_ctx *c, const char *json);

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

static void row_print(struct probe_ctx *c, struct probe_row *r);

/* --repeat, after a signal: the table from where it was printed to (the
 * header in the rounds before the last; the row in progress, or the
 * headings before the next row, in the last), every row the first round
 * began with what its rounds so far measured, between the headings and
 * labels of the first round's text. */
static void finish_table(struct probe_ctx *c)
{
    if (c->repeat < 2 || (!c->layout && !c->layout_f))
        return;
    if (c->layout_f)
        fflush(c->layout_f); /* the first round: c->layout is what it printed */
    size_t pos = c->out == c->table ? c->live_at : 0;
    c->out = c->table;
    for (size_t i = 0; i < c->nrows; i++) {
        struct probe_row *r = &c->rows[i];
        if (r->layout_at <= pos || r->layout_at > c->layout_len)
            continue;
        fwrite(c->layout + pos, 1, r->layout_at - pos, c->out);
        row_print(c, r);
        pos = r->layout_at;
    }
    if (pos < c->layout_len)
        fwrite(c->layout + pos, 1, c->layout_len - pos, c->out);
    fflush(c->out);
}

/* After a signal, in the main flow: the line finished (with --repeat, the
 * table too), the work directory removed, --json written with the rows so
 * far, and one line on stderr saying where the probe stopped -- the row in
 * progress, and with --repeat its round; exits 128 + the signal. */
static void exit_if_interrupted(void)
{
    int sig = atomic_load(&probe_interrupted);
    if (!sig)
        return;
    probe_timer_stop();
    finish_line(); /* pg_test_fsync: "Finish incomplete line on stdout" */
    struct probe_ctx *c = g_ctx;
    if (c)
        finish_table(c);
    cleanup();
    if (c)
        c->stopped_by = signal_name(sig);
    /* the last row begun in this round, and those done before it */
    const struct probe_row *r = c && c->round_row ? &c->rows[c->round_row - 1] : NULL;
    size_t done = c ? c->round_row : 0;
    int during = r && r->status == ROW_INTERRUPTED;
    done -= during;
    if (c && c->json)
        write_json(c, c->json);
    if (c && c->repeat > 1) {
        unsigned round = c->round + 1;
        if (during)
            fprintf(stderr, "commitlab probe: interrupted by %s during the row '%s' (%s) in round %u of %u after "
                            "%.1f s of %g s, %zu row%s of that round done before it\n", signal_name(sig), r->label,
                    r->op, round, c->repeat, r->rounds[c->round].secs, g_timer_secs, done, done == 1 ? "" : "s");
        else if (r)
            fprintf(stderr, "commitlab probe: interrupted by %s in round %u of %u after %zu row%s of it, the last '%s' "
                            "(%s)\n", signal_name(sig), round, c->repeat, done, done == 1 ? "" : "s", r->label, r->op);
        else
            fprintf(stderr, "commitlab probe: interrupted by %s in round %u of %u, before its first row\n",
                    signal_name(sig), round, c->repeat);
    } else if (during) {
        fprintf(stderr, "commitlab probe: interrupted by %s during the row '%s' (%s) after %.1f s of %g s, %zu "
                        "row%s done before it\n", signal_name(sig), r->label, r->op, r->rounds[0].secs, g_timer_secs,
                done, done == 1 ? "" : "s");
    } else if (r) {
        fprintf(stderr, "commitlab probe: interrupted by %s after %zu row%s, the last '%s' (%s)\n", signal_name(sig),
                done, done == 1 ? "" : "s", r->label, r->op);
    } else {
        fprintf(stderr, "commitlab probe: interrupted by %s before its first row\n", signal_name(sig));
    }
    exit(128 + sig);
}

static void on_interrupt(int sig)
{
    if (atomic_load(&probe_interrupted)) {
        /* second signal: do what is async-signal-safe and leave */
        if (g_ctx && g_ctx->work[0]) {
            unlink(g_ctx->path);
            rmdir(g_ctx->work);
        }
        _exit(128 + sig);
    }
    atomic_store(&probe_interrupted, sig);
    atomic_store(&probe_alarm, 1);
}

void probe_die(struct probe_ctx *c, const char *what)
{
    int e = errno;
    (void)c;
    probe_timer_stop();
    finish_line();
    fprintf(stderr, "commitlab probe: %s: %s\n", what, strerror(e));
    cleanup();
    exit(1);
}

/* ---- rows ------------------------------------------------------------------ */

static void print_label(struct probe_ctx *c, const char *label)
{
    fprintf(c->out, PROBE_LABEL_FORMAT, label);
    fflush(c->out);
    g_midline = 1;
}

void probe_label(struct probe_ctx *c, const char *label)
{
    exit_if_interrupted();
    print_label(c, label);
}

/* Row k of a round is row k of the first: every round runs the same
 * sections, and every section begins the same rows in the same order. */
struct probe_row *probe_row_new(struct probe_ctx *c, enum probe_section s, const char *label, const char *op)
{
    if (c->out == c->table && c->round > 0 && c->round_row < c->nrows)
        c->live_at = c->rows[c->round_row].layout_label; /* the last round has printed the text before it */
    exit_if_interrupted(); /* before the row: a row in the JSON is one that ran */
    struct probe_row *r;
    if (c->round == 0) {
        if (c->nrows == c->caprows) {
            size_t cap = c->caprows ? 2 * c->caprows : 64;
            struct probe_row *n = realloc(c->rows, cap * sizeof *n);
            if (!n)
                probe_die(c, "out of memory");
            c->rows = n;
            c->caprows = cap;
        }
        r = &c->rows[c->nrows++];
        memset(r, 0, sizeof *r);
        r->section = s;
        snprintf(r->label, sizeof r->label, "%s", label);
        r->op = op;
        r->streams = 1;
        r->rounds = calloc(c->repeat, sizeof *r->rounds);
        if (!r->rounds)
            probe_die(c, "out of memory");
        if (c->out == c->layout_f && fflush(c->layout_f) == 0)
            r->layout_label = c->layout_len;
    } else {
        if (c->round_row >= c->nrows || c->rows[c->round_row].section != s ||
            strncmp(c->rows[c->round_row].label, label, sizeof r->label - 1) != 0) {
            errno = EPROTO;
            probe_die(c, "a round began other rows than the first"); /* a bug of the sections */
        }
        r = &c->rows[c->round_row];
    }
    c->round_row++;
    print_label(c, label); /* no second look at a signal: the row is begun, it reports */
    return r;
}

void probe_row_concurrent(struct probe_row *r, unsigned streams, const char *stream)
{
    r->streams = streams;
    r->stream = streams > 1 ? stream : NULL;
}

/* The row over its rounds so far (struct probe_row), from r->rounds.  The
 * round a signal stopped (the row in progress) makes the row interrupted;
 * its numbers stay those of the rounds that ran to the end, and only a row
 * with none shows what the interrupted round measured. */
static void row_summarise(struct probe_ctx *c, struct probe_row *r)
{
    double v[PROBE_MAX_REPEAT], p50[PROBE_MAX_REPEAT], p99[PROBE_MAX_REPEAT], mx[PROBE_MAX_REPEAT];
    size_t nok = 0, nlat = 0;
    unsigned first_bad = 0;
    const struct probe_round *cut = NULL;

    r->nrounds = c->round + 1;
    r->nok = 0;
    r->status = ROW_OK;
    r->reason[0] = '\0';
    r->ops = 0;
    r->secs = 0;
    for (unsigned i = 0; i < r->nrounds; i++) {
        const struct probe_round *x = &r->rounds[i];
        if (x->status == ROW_INTERRUPTED) {
            cut = x;
            continue;
        }
        if (x->status != ROW_OK) {
            if (r->status == ROW_OK) {
                r->status = x->status;
                first_bad = i;
            }
            continue;
        }
        r->ops += x->ops;
        r->secs += x->secs;
        v[nok++] = (double)x->ops / x->secs;
        if (x->has_latency) {
            p50[nlat] = x->p50_us;
            p99[nlat] = x->p99_us;
            mx[nlat++] = x->max_us;
        }
    }
    r->nok = (unsigned)nok;
    if (r->status != ROW_OK) {
        const struct probe_round *x = &r->rounds[first_bad];
        if (nok || cut) /* ok in another round: say which one was not */
            snprintf(r->reason, sizeof r->reason, "round %u of %u: %.130s", first_bad + 1, c->repeat, x->reason);
        else
            snprintf(r->reason, sizeof r->reason, "%s", x->reason);
        if (!cut) {
            r->has_latency = 0;
            return;
        }
    }
    if (cut) {
        r->status = ROW_INTERRUPTED;
        if (nok == 0 && (cut->ops == 0 || cut->secs <= 0)) {
            r->secs = cut->secs; /* how far it got */
            r->has_latency = 0;
            return;
        }
        if (nok == 0) {
            r->ops = cut->ops;
            r->secs = cut->secs;
            v[nok++] = (double)cut->ops / cut->secs;
            if (cut->has_latency) {
                p50[nlat] = cut->p50_us;
                p99[nlat] = cut->p99_us;
                mx[nlat++] = cut->max_us;
            }
        }
    }
    if (nok == 1) {
        /* exactly as pg_test_fsync computes them */
        r->ops_per_sec = (double)r->ops / r->secs;
        r->usecs_per_op = r->secs / (double)r->ops * 1e6;
        r->ops_per_sec_min = r->ops_per_sec_max = r->ops_per_sec;
    } else {
        r->ops_per_sec = ut_median(v, nok); /* sorts v */
        r->ops_per_sec_min = v[0];
        r->ops_per_sec_max = v[nok - 1];
        r->usecs_per_op = 1e6 / r->ops_per_sec;
    }
    r->has_latency = nlat == nok;
    if (r->has_latency) {
        r->p50_us = ut_median(p50, nlat);
        r->p99_us = ut_median(p99, nlat);
        r->max_us = ut_median(mx, nlat);
    }
}

/* After an interrupted row's numbers, or its word: where the signal
 * stopped it.  With one round, as without --repeat. */
static void print_cut(struct probe_ctx *c, const struct probe_row *r, int numbers)
{
    double secs = r->rounds[c->round].secs;
    if (!numbers && c->repeat < 2)
        fprintf(c->out, " (after %.1f s, before any operation completed)", secs);
    else if (!numbers)
        fprintf(c->out, " (in round %u of %u after %.1f s, before any operation completed)", c->round + 1,
                c->repeat, secs);
    else if (c->repeat < 2)
        fprintf(c->out, "  (interrupted after %.1f s)", secs);
    else if (r->nok == 0) /* the numbers are the interrupted round's */
        fprintf(c->out, "  (interrupted in round %u of %u after %.1f s)", c->round + 1, c->repeat, secs);
    else
        fprintf(c->out, "  (over %u of %u rounds; round %u interrupted after %.1f s)", r->nok, c->repeat,
                c->round + 1, secs);
}

/* Prints the row's numbers, or why it has none, and ends its line.  In the
 * first round of several it prints nothing, and notes where in the layout
 * its numbers go. */
static void row_print(struct probe_ctx *c, struct probe_row *r)
{
    int stopped = r->status == ROW_INTERRUPTED;
    int numbers = r->status == ROW_OK || (stopped && r->ops && r->secs > 0);
    if (c->layout_f && c->out == c->layout_f) {
        if (fflush(c->layout_f) == 0)
            r->layout_at = c->layout_len;
        g_midline = 0;
        return;
    }
    if (numbers) {
        /* a concurrent row's time per operation is per stream: streams / throughput */
        double us = r->streams > 1 ? r->usecs_per_op * r->streams : r->usecs_per_op;
        fprintf(c->out, PROBE_OPS_FORMAT, r->ops_per_sec, us);
        if (r->stream)
            fprintf(c->out, "/%s", r->stream);
        if (c->repeat > 1)
            fprintf(c->out, PROBE_RANGE_FORMAT, r->ops_per_sec_min, r->ops_per_sec_max);
        if (r->has_latency)
            fprintf(c->out, "  p50 %6.0f  p99 %6.0f  max %6.0f", r->p50_us, r->p99_us, r->max_us);
        if (stopped)
            print_cut(c, r, 1);
        else if (r->nok < c->repeat) /* a signal stopped the probe before its later rounds */
            fprintf(c->out, "  (over %u of %u rounds)", r->nok, c->repeat);
    } else if (stopped) {
        fprintf(c->out, PROBE_NA_FORMAT, "interrupted");
        print_cut(c, r, 0);
    } else {
        const char *word = r->status == ROW_NA ? "n/a" : r->status == ROW_NA_FS ? "n/a*" : "failed";
        fprintf(c->out, PROBE_NA_FORMAT, word);
        /* pg_test_fsync's own rows print the bare word, as it does; the rest
         * say why, since there is no footnote for them */
        if (r->reason[0] && (r->section > SEC_NOSYNC || r->status == ROW_FAILED))
            fprintf(c->out, " (%s)", r->reason);
    }
    fputc('\n', c->out);
    fflush(c->out);
    g_midline = 0;
    if (c->out == c->table && c->repeat > 1)
        c->live_at = r->layout_at;
}

void probe_row_ok(struct probe_ctx *c, struct probe_row *r, uint64_t ops, double secs, const struct probe_lat *lat)
{
    int stopped = atomic_load(&probe_interrupted) != 0; /* what it measured until the signal: kept, marked */
    if (ops == 0 || secs <= 0) {
        if (stopped) {
            struct probe_round *x = &r->rounds[c->round];
            memset(x, 0, sizeof *x);
            x->status = ROW_INTERRUPTED;
            x->secs = secs > 0 ? secs : 0;
            row_summarise(c, r);
            row_print(c, r);
            exit_if_interrupted();
        }
        /* nothing finished inside the time: say so rather than divide by 0 */
        probe_row_na(c, r, ROW_FAILED, "no operation completed in %.3f s", secs);
        return;
    }
    struct probe_round *x = &r->rounds[c->round];
    memset(x, 0, sizeof *x);
    x->status = stopped ? ROW_INTERRUPTED : ROW_OK;
    x->ops = ops;
    x->secs = secs;
    if (lat && lat->n) {
        qsort(lat->v, lat->n, sizeof *lat->v, ut_cmp_double);
        x->has_latency = 1;
        x->p50_us = ut_percentile_sorted(lat->v, lat->n, 50);
        x->p99_us = ut_percentile_sorted(lat->v, lat->n, 99);
        x->max_us = lat->v[lat->n - 1];
    }
    row_summarise(c, r);
    row_print(c, r);
    exit_if_interrupted();
}

void probe_row_na(struct probe_ctx *c, struct probe_row *r, enum probe_status st, const char *fmt, ...)
{
    va_list ap;
    struct probe_round *x = &r->rounds[c->round];
    memset(x, 0, sizeof *x);
    x->status = st;
    if (fmt) {
        va_start(ap, fmt);
        vsnprintf(x->reason, sizeof x->reason, fmt, ap);
        va_end(ap);
    }
    row_summarise(c, r);
    row_print(c, r);
}

void probe_progress(const struct probe_ctx *c, const char *fmt, ...)
{
    va_list ap;
    if (!c->tty)
        return;
    fputs("commitlab probe: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void lat_add(struct probe_lat *l, double us)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        double *n = realloc(l->v, cap * sizeof *n);
        if (!n)
            return; /* keep what we have: the mean is counted elsewhere */
        l->v = n;
        l->cap = cap;
    }
    l->v[l->n++] = us;
}

void lat_free(struct probe_lat *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ---- files --------------------------------------------------------------- */

void probe_join(char *dst, size_t n, const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    if (a + 1 + b + 1 > n) {
        errno = ENAMETOOLONG;
        probe_die(g_ctx, dir);
    }
    memcpy(dst, dir, a);
    dst[a] = '/';
    memcpy(dst + a + 1, name, b + 1);
}

void probe_fill_random(char *p, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (char)(x >> 24);
    }
}

/* pg_test_fsync's open_direct(): O_DIRECT where the platform has it. */
int probe_open_direct(const char *path, int flags)
{
    return open(path, flags | O_DIRECT, 0);
}

/* pg_test_fsync's test_open(): write the whole 16 MiB file and fsync it
 * now, so that dirty buffers do not skew later tests. */
int probe_prepare_file(struct probe_ctx *c)
{
    if (c->file_ready)
        return 0;
    probe_progress(c, "preparing the 16MB test file");
    int fd = open(c->path, O_RDWR | O_CREAT, S_IRUSR | S_IWUSR);
    if (fd < 0)
        probe_die(c, "could not open output file");
    size_t done = 0;
    while (done < PROBE_FILE_SIZE) {
        ssize_t n = write(fd, c->buf + done, PROBE_FILE_SIZE - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            probe_die(c, "write failed");
        }
        done += (size_t)n;
    }
    if (fsync(fd) != 0)
        probe_die(c, "fsync failed");
    close(fd);
    c->file_ready = 1;
    return 0;
}

/* ---- command line ------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: commitlab probe [--dir D] [--seconds N] [--json FILE|-] [--only SECTION[,SECTION...]]\n"
            "                       [--files N] [--repeat N]\n"
            "\n"
            "  --dir D        directory on the filesystem to probe (default: .); the probe works in a\n"
            "                 private subdirectory and removes it at exit\n"
            "  --seconds N    seconds per pg_test_fsync test (default 5, fractions allowed); each row of\n"
            "                 the sections beyond it runs N/4\n"
            "  --json FILE    append one JSON line with every row (FILE '-' = stdout; the table then\n"
            "                 goes to stderr)\n"
            "  --only LIST    run only these sections: " SECTION_LIST "\n"
            "  --files N      files for the many-small-appends section (default 10000)\n"
            "  --repeat N     measure every row N times (1 to %d, default 1), in N rounds of every\n"
            "                 row once, and print the median ops/sec with the lowest and highest\n",
            PROBE_MAX_REPEAT);
}

static const char *flag_value(int argc, char **argv, int *i, const char *flag, const char *what)
{
    const char *a = argv[*i];
    size_t fl = strlen(flag);
    if (a[fl] == '=')
        return a + fl + 1;
    if (*i + 1 >= argc)
        ut_usage_error("probe", "%s needs a value: %s", flag, what);
    return argv[++*i];
}

static int flag_is(const char *a, const char *flag)
{
    size_t fl = strlen(flag);
    return strncmp(a, flag, fl) == 0 && (a[fl] == '\0' || a[fl] == '=');
}

static unsigned parse_only(const char *s)
{
    unsigned mask = 0;
    char **items, why[300];
    size_t n;
    if (ut_split_list(s, &items, &n, why, sizeof why)) /* the one rule of lists (ut_args.h) */
        ut_usage_error("probe", "--only: '%s' %s (accepted: %s)", s, why, SECTION_LIST);
    for (size_t k = 0; k < n; k++) {
        const char *t = items[k];
        int found = 0;
        if (strcmp(t, "pg") == 0) {
            mask |= (1u << SEC_SYNC1) | (1u << SEC_SYNC2) | (1u << SEC_OPENSYNC) | (1u << SEC_FDSYNC) |
                    (1u << SEC_NOSYNC);
            found = 1;
        }
        for (int i = 0; i < SEC_COUNT && !found; i++)
            if (strcmp(t, section_names[i]) == 0) {
                mask |= 1u << i;
                found = 1;
            }
        if (!found)
            ut_usage_error("probe", "--only: unknown section '%s' (accepted: %s)", t, SECTION_LIST);
    }
    ut_list_free(items, n);
    if (!mask)
        ut_usage_error("probe", "--only: no section given (accepted: %s)", SECTION_LIST);
    return mask;
}

/* The sections that use the 16 MiB file: it is prepared before them. */
static const unsigned sections_using_file = (1u << SEC_SYNC1) | (1u << SEC_SYNC2) | (1u << SEC_OPENSYNC) |
                                            (1u << SEC_FDSYNC) | (1u << SEC_NOSYNC) | (1u << SEC_LATENCY) |
                                            (1u << SEC_URING) | (1u << SEC_VERDICT);

static void probe_defaults(struct probe_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->dir = ".";
    c->secs = 5;
    c->files = 10000;
    c->repeat = 1;
    c->only = (1u << SEC_COUNT) - 1;
    c->odirect_ok = -1;
    c->fdatasync_us = -1;
    c->write_us = -1;
}

static double parse_seconds(const char *v)
{
    char *end;
    errno = 0;
    double s = strtod(v, &end);
    if (end == v || *end || errno || !(s > 0) || s > 86400)
        ut_usage_error("probe", "--seconds: '%s' is not a number of seconds in (0, 86400], e.g. 2 or 0.1", v);
    return s;
}

static unsigned parse_files(const char *v)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (end == v || *end || errno || n < 1 || n > 10000000 || v[0] == '-')
        ut_usage_error("probe", "--files: '%s' is not a number of files from 1 to 10000000", v);
    return (unsigned)n;
}

static unsigned parse_repeat(const char *v)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (end == v || *end || errno || n < 1 || n > PROBE_MAX_REPEAT || v[0] == '-' || v[0] == '+')
        ut_usage_error("probe", "--repeat: '%s' is not a number of rounds from 1 to %d", v, PROBE_MAX_REPEAT);
    return (unsigned)n;
}

/* Fills c and *json from the options, in order; exits 2 at the first bad
 * one.  Returns 1 when --help came first: the usage is printed. */
static int parse_probe_args(int argc, char **argv, struct probe_ctx *c, const char **json)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        } else if (flag_is(a, "--dir")) {
            c->dir = flag_value(argc, argv, &i, "--dir", "a directory");
        } else if (flag_is(a, "--seconds")) {
            c->secs = parse_seconds(flag_value(argc, argv, &i, "--seconds", "a number of seconds > 0, e.g. 2 or 0.1"));
        } else if (flag_is(a, "--json")) {
            *json = flag_value(argc, argv, &i, "--json", "a file name, or - for stdout");
            if (!**json)
                ut_usage_error("probe", "--json: expected a file name, or - for stdout");
            int orc = strcmp(*json, "-") ? ut_output_check(*json) : 0; /* before the probe, not after it */
            if (orc)
                ut_usage_error("probe", "--json %s: %s", *json, strerror(-orc));
        } else if (flag_is(a, "--only")) {
            c->only = parse_only(flag_value(argc, argv, &i, "--only", "a section: " SECTION_LIST));
        } else if (flag_is(a, "--files")) {
            c->files = parse_files(flag_value(argc, argv, &i, "--files", "a number of files, 1 to 10000000"));
        } else if (flag_is(a, "--repeat")) {
            c->repeat = parse_repeat(flag_value(argc, argv, &i, "--repeat", "a number of rounds, 1 to " STR(PROBE_MAX_REPEAT)));
        } else {
            ut_usage_error("probe", "unknown option '%s' (accepted: --dir, --seconds, --json, --only, --files, "
                           "--repeat)", a);
        }
    }
    struct stat st;
    if (stat(c->dir, &st) != 0)
        ut_usage_error("probe", "--dir: cannot use '%s': %s", c->dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        ut_usage_error("probe", "--dir: '%s' is not a directory", c->dir);
    return 0;
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* as pqsignal(): the timed loops must not see EINTR */
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* The private work directory inside --dir, and the random buffer every
 * write comes from; 0, or 1 with the message printed. */
static int make_workspace(struct probe_ctx *c)
{
    snprintf(c->work, sizeof c->work, "%s/commitlab_probe.%ld", c->dir, (long)getpid());
    if (mkdir(c->work, 0700) != 0) {
        int e = errno;
        c->work[0] = '\0';
        fprintf(stderr, "commitlab probe: cannot create a directory in '%s': %s\n", c->dir, strerror(e));
        return 1;
    }
    probe_join(c->path, sizeof c->path, c->work, "commitlab_probe.out");

    /* pg_test_fsync's prepare_buf(): random data, aligned for O_DIRECT */
    void *mem;
    if (posix_memalign(&mem, 4096, PROBE_FILE_SIZE) != 0) {
        cleanup();
        fprintf(stderr, "commitlab probe: out of memory\n");
        return 1;
    }
    c->buf = mem;
    probe_fill_random(c->buf, PROBE_FILE_SIZE, (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
    return 0;
}

static void print_header(struct probe_ctx *c)
{
    if (c->secs == (double)(unsigned)c->secs)
        fprintf(c->out, (unsigned)c->secs == 1 ? "%u second per test\n" : "%u seconds per test\n",
                (unsigned)c->secs);
    else
        fprintf(c->out, "%g seconds per test\n", c->secs);
    fprintf(c->out, "O_DIRECT supported on this platform for open_datasync and open_sync.\n");
    if (c->repeat > 1)
        fprintf(c->out, "%u rounds of every row, one after the other: each row shows the median ops/sec of\n"
                        "its rounds, the usecs/op of that median, then the lowest and highest ops/sec.\n",
                c->repeat);
    fflush(c->out);
}

static void probe_sync1(struct probe_ctx *c) { probe_sync(c, 1); }
static void probe_sync2(struct probe_ctx *c) { probe_sync(c, 2); }

/* What runs each section, indexed as section_names. */
static void (*const section_run[SEC_COUNT])(struct probe_ctx *c) = {
    [SEC_SYNC1] = probe_sync1,      [SEC_SYNC2] = probe_sync2,       [SEC_OPENSYNC] = probe_open_syncs,
    [SEC_FDSYNC] = probe_fd_sync,   [SEC_NOSYNC] = probe_non_sync,   [SEC_LATENCY] = probe_latency,
    [SEC_URING] = probe_uring,      [SEC_ZODB] = probe_zodb,         [SEC_SEGMENTS] = probe_segments,
    [SEC_APPENDS] = probe_appends,  [SEC_OVERWRITE] = probe_overwrite, [SEC_VERDICT] = probe_verdict,
};

/* Where the table goes in the rounds between the first and the last:
 * nowhere (the first's is the layout, finish_table). */
static ssize_t discard_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    (void)buf;
    return (ssize_t)n;
}

/* The header, then the sections --only asked for, in their order, in
 * --repeat rounds: each round runs every row once, so that whatever
 * drifts over the run (the disk's other work, its cache, writeback) falls
 * on every row alike, not on the rows measured last.  Only the last round
 * prints, each row with what all its rounds measured; the verdict, which
 * reads the rows, runs once, in it.  The first round's text, without the
 * rows' numbers, is kept for a signal before the end (finish_table). */
static void run_sections(struct probe_ctx *c)
{
    FILE *discard = NULL;
    print_header(c);
    probe_fsinfo(c);
    if (c->only & sections_using_file)
        probe_prepare_file(c);
    if (c->repeat > 1) {
        discard = fopencookie(NULL, "w", (cookie_io_functions_t){.write = discard_write});
        c->layout_f = open_memstream(&c->layout, &c->layout_len);
        if (!discard || !c->layout_f)
            probe_die(c, "out of memory");
    }
    for (c->round = 0; c->round < c->repeat; c->round++) {
        int last = c->round + 1 == c->repeat;
        c->round_row = 0;
        c->out = last ? c->table : c->round == 0 ? c->layout_f : discard;
        if (c->round == 1) { /* the layout is whole */
            if (fclose(c->layout_f) != 0)
                probe_die(c, "out of memory");
            c->layout_f = NULL;
        }
        c->fdatasync_us = c->write_us = -1; /* the verdict's, from the last round's rows */
        if (c->repeat > 1)
            probe_progress(c, "round %u of %u", c->round + 1, c->repeat);
        for (int s = 0; s < SEC_COUNT; s++)
            if ((c->only & (1u << s)) && (last || s != SEC_VERDICT))
                section_run[s](c);
    }
    c->round = c->repeat - 1;
    c->out = c->table;
    c->live_at = c->layout_len; /* all printed */
    if (discard)
        fclose(discard);
}

/* --json: appends the record to the file (or writes it to stdout); 0 or 1. */
static int write_json(const struct probe_ctx *c, const char *json)
{
    FILE *f = strcmp(json, "-") == 0 ? stdout : fopen(json, "a");
    if (!f) {
        fprintf(stderr, "commitlab probe: --json: cannot open '%s': %s\n", json, strerror(errno));
        return 1;
    }
    if (probe_json_write(f, c, section_names) != 0 || (f != stdout ? fclose(f) : fflush(f)) != 0) {
        fprintf(stderr, "commitlab probe: --json: writing '%s' failed\n", json);
        return 1;
    }
    return 0;
}

int cmd_probe(int argc, char **argv)
{
    struct probe_ctx ctx;
    struct probe_ctx *c = &ctx;
    const char *json = NULL;

    probe_defaults(c);
    if (parse_probe_args(argc, argv, c, &json))
        return 0;
    c->table = c->out = (json && strcmp(json, "-") == 0) ? stderr : stdout;
    c->json = json;
    c->tty = isatty(STDERR_FILENO);
    g_ctx = c;
    install_handlers();
    if (make_workspace(c))
        return 1;

    run_sections(c);
    exit_if_interrupted();
    probe_timer_stop();
    cleanup();

    int rc = json ? write_json(c, json) : 0;
    for (size_t i = 0; i < c->nrows; i++) {
        if (c->rows[i].status == ROW_FAILED)
            rc = rc ? rc : 1;
        free(c->rows[i].rounds);
    }
    free(c->rows);
    free(c->layout);
    free(c->buf);
    g_ctx = NULL;
    return rc;
}
