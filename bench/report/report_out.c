/*
 * report_out.c -- the report's words and tables, in HTML or markdown from
 * the same code: escaping, number formats, the command lines that run a
 * series or a crash combination again, and every table (throughput,
 * latency, phases, the filesystem matrix, durability, environment, input).
 *
 * A table is written through a small writer that knows both formats, so
 * the markdown for docs/ and the HTML page cannot disagree on a number.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_config.h"
#include "bench_schema.h"
#include "report.h"
#include "report_out.h"
#include "ut_stats.h"

/* ---- escaping -------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p that XML allows, or 0. */
static size_t utf8_char(const unsigned char *p)
{
    unsigned cp;
    size_t n;
    if (p[0] < 0x80)
        return p[0] >= 0x20 || p[0] == '\t' || p[0] == '\n' || p[0] == '\r' ? 1 : 0;
    if ((p[0] & 0xe0) == 0xc0)
        cp = p[0] & 0x1f, n = 2;
    else if ((p[0] & 0xf0) == 0xe0)
        cp = p[0] & 0x0f, n = 3;
    else if ((p[0] & 0xf8) == 0xf0)
        cp = p[0] & 0x07, n = 4;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    int overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    return n;
}

/* quotes: also " and ' (HTML attributes and SVG); markdown text needs
 * only the three that start markup. */
static void esc(FILE *f, const char *s, int quotes)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t n = utf8_char(p);
        int c = n ? *p : 0;
        if (!quotes && (c == '"' || c == '\''))
            c = 1;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        case 0: fputs("\xef\xbf\xbd", f); n = 1; break; /* U+FFFD for what XML cannot hold */
        default: fwrite(p, 1, n, f); break;
        }
        p += n;
    }
}

void rp_esc(FILE *f, const char *s)
{
    esc(f, s, 1);
}

/* A control character (0x00-0x1f, 0x7f) as markdown shows it: "\r",
 * "\n", "\t", else "\x1b"; 0 when c is none.  Written raw, a '\r' or '\n'
 * would end a table row or an indented code block and let the rest of the
 * string be read as markdown; an escape sequence would reach a terminal
 * that shows the file. */
static int md_control(unsigned char c, char out[5])
{
    if (c >= 0x20 && c != 0x7f)
        return 0;
    if (c == '\r' || c == '\n' || c == '\t')
        snprintf(out, 5, "\\%c", c == '\r' ? 'r' : c == '\n' ? 'n' : 't');
    else
        snprintf(out, 5, "\\x%02x", c);
    return 1;
}

/* Markdown: the HTML escapes (markdown passes HTML through), a backslash
 * before what markdown itself would read as structure, and every control
 * character as its escape (md_control). */
static void md_esc(FILE *f, const char *s)
{
    const char *in = s ? s : "";
    char *buf = rp_xrealloc(NULL, 4 * strlen(in) + 1), *o = buf, ctl[5];
    for (const char *p = in; *p; p++) {
        if (md_control((unsigned char)*p, ctl)) {
            o += sprintf(o, "%s", ctl);
            continue;
        }
        if (strchr("|*_`[]\\#", *p))
            *o++ = '\\';
        *o++ = *p;
    }
    *o = 0;
    esc(f, buf, 0);
    free(buf);
}

void ro_text(const struct ro *o, const char *s)
{
    if (o->md)
        md_esc(o->f, s);
    else
        rp_esc(o->f, s);
}

void ro_textf(const struct ro *o, const char *fmt, ...)
{
    va_list ap;
    char buf[2048];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ro_text(o, buf);
}

/* ---- numbers ---------------------------------------------------------------------------------- */

void rp_fmt_short(char *buf, size_t len, double v)
{
    double a = fabs(v);
    if (a >= 1e9)
        snprintf(buf, len, "%.3gG", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, len, "%.3gM", v / 1e6);
    else if (a >= 1e3)
        snprintf(buf, len, "%.3gk", v / 1e3);
    else
        snprintf(buf, len, "%.3g", v);
}

void rp_fmt_num(char *buf, size_t len, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "-");
    } else if (fabs(v) >= 100) {
        char digits[64];
        int n = snprintf(digits, sizeof digits, "%.0f", fabs(v)), j = 0;
        size_t o = 0;
        if (v < 0 && o + 1 < len)
            buf[o++] = '-';
        for (; digits[j] && o + 2 < len; j++) {
            buf[o++] = digits[j];
            if ((n - j - 1) % 3 == 0 && digits[j + 1])
                buf[o++] = ',';
        }
        buf[o] = 0;
    } else if (fabs(v) >= 10) {
        snprintf(buf, len, "%.1f", v);
    } else if (fabs(v) >= 1) {
        snprintf(buf, len, "%.2f", v);
    } else {
        snprintf(buf, len, "%.3g", v);
    }
}

/* ---- knobs and command lines ---------------------------------------------------------------- */

/* A value as the flag takes it: sizes with k/M/G, booleans on/off. */
static void knob_value(int size, json_t *v, char *buf, size_t len)
{
    if (json_is_boolean(v)) {
        snprintf(buf, len, "%s", json_is_true(v) ? "on" : "off");
    } else if (json_is_integer(v)) {
        long long n = (long long)json_integer_value(v);
        if (size && n > 0 && n % (1ll << 30) == 0)
            snprintf(buf, len, "%lldG", n >> 30);
        else if (size && n > 0 && n % (1ll << 20) == 0)
            snprintf(buf, len, "%lldM", n >> 20);
        else if (size && n > 0 && n % 1024 == 0)
            snprintf(buf, len, "%lldk", n >> 10);
        else
            snprintf(buf, len, "%lld", n);
    } else if (json_is_real(v)) {
        snprintf(buf, len, "%.10g", json_real_value(v));
    } else if (json_is_string(v)) {
        snprintf(buf, len, "%s", json_string_value(v));
    } else if (json_is_array(v)) {
        size_t i, o = 0;
        json_t *e;
        buf[0] = 0;
        json_array_foreach(v, i, e) {
            const char *item = json_is_string(e) ? json_string_value(e) : "?";
            if (o < len)
                o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "", item);
        }
    } else {
        char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(buf, len, "%s", d ? d : "?");
        free(d);
    }
}

/* The name labels give a knob: its flag's, or for --no-preload the
 * member's ("preload=off"). */
static const char *knob_name(const struct bench_knob_def *d)
{
    return d->type == KT_FALSE ? d->key : d->flag + 2;
}

void rp_knob_label(const char *key, json_t *v, char *buf, size_t len)
{
    if (strcmp(key, "sync_latency_us") == 0 && json_is_integer(v)) { /* what it is, not the flag */
        long long us = (long long)json_integer_value(v);
        if (us % 1000 == 0)
            snprintf(buf, len, "emulated %lld ms", us / 1000);
        else
            snprintf(buf, len, "emulated %lld us", us);
        return;
    }
    const struct bench_knob_def *d = bench_knob(bench_knob_by_key(key));
    char val[160];
    knob_value(d && d->type == KT_SIZE, v, val, sizeof val);
    snprintf(buf, len, "%s=%s", d ? knob_name(d) : key, val);
}

/* Quotes a word for a POSIX shell when it needs it. */
static void shell_word(FILE *f, const char *s)
{
    if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") == strlen(s)) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('\'', f);
}

static void flag(FILE *f, const char *name, const char *value)
{
    fprintf(f, " %s", name);
    if (value) {
        fputc(' ', f);
        shell_word(f, value);
    }
}

/* Knob k's flag as a command line says value v: a flag without a value
 * only when v is what it sets (--reuse, --no-preload). */
static void knob_flag(FILE *f, const struct bench_knob_def *k, json_t *v)
{
    char val[200];
    if (k->type == KT_TRUE || k->type == KT_FALSE) {
        if (json_is_true(v) == (k->type == KT_TRUE))
            flag(f, k->flag, NULL);
        return;
    }
    knob_value(k->type == KT_SIZE, v, val, sizeof val);
    flag(f, k->flag, val);
}

/* The knobs of config c that differ from what a line holds when the flag
 * is not given (the table of knobs, bench_knobs.h): what the command
 * line must say, and nothing it need not.  A member that is null was not
 * set for this engine or workload. */
static void knob_flags(FILE *f, json_t *c, int matrix)
{
    for (int i = 0; i < bench_knob_count(); i++) {
        const struct bench_knob_def *k = bench_knob((enum bench_knob)i);
        json_t *v = rp_get(c, k->key);
        if ((k->flags & KF_SERIES) || !v || json_is_null(v))
            continue; /* engine, workload, sync and clients name the series */
        json_t *def = bench_knob_default_json((enum bench_knob)i);
        int same = json_equal(v, def);
        json_decref(def);
        if (same)
            continue;
        if (matrix && i == K_DIR)
            continue; /* the matrix chooses its own mount points */
        knob_flag(f, k, v);
    }
}

/* "1,16,64": the client counts of series s, or of every series of its
 * configuration (a matrix command runs them all). */
static void clients_list(FILE *f, const struct report *r, size_t s0, int whole_config)
{
    int last = 0;
    for (;;) {
        int next = 0;
        for (size_t s = 0; s < r->nseries; s++) {
            if (whole_config ? r->series[s].cfg != r->series[s0].cfg : s != s0)
                continue;
            for (size_t i = 0; i < r->series[s].npts; i++)
                if (r->series[s].pts[i].clients > last && (!next || r->series[s].pts[i].clients < next))
                    next = r->series[s].pts[i].clients;
        }
        if (!next)
            return;
        fprintf(f, "%s%d", last ? "," : " --clients ", next);
        last = next;
    }
}

/* A zfs dataset's run: its matrix object names the ZFS that ran and the
 * dataset's properties (the --fs name is zfs). */
static json_t *zfs_of(const struct report *r, size_t s)
{
    json_t *m = r->envs[r->series[s].env].matrix, *z = m ? rp_get(m, "zfs") : NULL;
    return json_is_object(z) ? z : NULL;
}

static void matrix_fs_list(FILE *f, const struct report *r, size_t cfg)
{
    fputs(" --fs ", f);
    int first = 1, zfs = 0;
    for (size_t s = 0; s < r->nseries; s++)
        if (r->series[s].cfg == cfg) {
            json_t *m = r->envs[r->series[s].env].matrix;
            if (m && json_is_true(rp_get(m, "native")))
                continue; /* the native baseline: every matrix runs it, and "native ext4" is no --fs value */
            if (zfs_of(r, s) && zfs++)
                continue; /* one --fs zfs for every dataset */
            fprintf(f, "%s", first ? "" : ",");
            shell_word(f, zfs_of(r, s) ? "zfs" : r->envs[r->series[s].env].fs);
            first = 0;
        }
}

/* --zfs-KNOB: the values the datasets of the configuration had, in the
 * order first met. */
static void zfs_flag(FILE *f, const struct report *r, size_t cfg, const char *prop, const char *name)
{
    char list[256] = "";
    size_t n = 0;
    for (size_t s = 0; s < r->nseries; s++) {
        json_t *z = r->series[s].cfg == cfg ? zfs_of(r, s) : NULL, *v = z ? rp_get(z, prop) : NULL;
        char one[64];
        if (json_is_integer(v))
            snprintf(one, sizeof one, "%lld", (long long)json_integer_value(v));
        else if (json_is_string(v))
            snprintf(one, sizeof one, "%s", json_string_value(v));
        else
            continue;
        char padded[300];
        snprintf(padded, sizeof padded, ",%s,", list);
        char want[80];
        snprintf(want, sizeof want, ",%s,", one);
        if (strstr(padded, want))
            continue;
        n += (size_t)snprintf(list + n, n < sizeof list ? sizeof list - n : 0, "%s%s", n ? "," : "", one);
    }
    if (list[0])
        flag(f, name, list);
}

/* The matrix's own options, as its filesystems' "matrix" objects recorded
 * them: the image, and the mount options asked for each. */
static void matrix_options(FILE *f, const struct report *r, size_t cfg)
{
    int image = 0, zfs = 0;
    char val[200];
    for (size_t s = 0; s < r->nseries; s++) {
        json_t *m = r->series[s].cfg == cfg ? r->envs[r->series[s].env].matrix : NULL;
        if (!m)
            continue;
        if (!image && json_is_integer(rp_get(m, "image_size"))) {
            knob_value(1, rp_get(m, "image_size"), val, sizeof val);
            flag(f, "--image-size", val);
            flag(f, "--image-init", rp_str(m, "image_init", "sparse"));
            image = 1;
        }
        if (!zfs && zfs_of(r, s)) {
            zfs = 1;
            zfs_flag(f, r, cfg, "recordsize", "--zfs-recordsize");
            zfs_flag(f, r, cfg, "primarycache", "--zfs-primarycache");
            zfs_flag(f, r, cfg, "logbias", "--zfs-logbias");
            zfs_flag(f, r, cfg, "compression", "--zfs-compression");
        }
        const char *opts = rp_str(m, "mount_options_asked", NULL);
        if (opts) {
            snprintf(val, sizeof val, "%s:%s", r->envs[r->series[s].env].fs, opts);
            flag(f, "--mount-opts", val);
        }
    }
}

int rp_series_is_matrix(const struct report *r, size_t s)
{
    return rp_get(r->cfgs[r->series[s].cfg].line, "matrix") != NULL;
}

char *rp_series_command(const struct report *r, size_t s)
{
    const struct rp_series *se = &r->series[s];
    const struct rp_run *run = &r->runs[se->pts[0].runs[0]];
    json_t *matrix = rp_get(run->line, "matrix");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return rp_strdup("");
    fputs(matrix ? "commitlab matrix" : "commitlab bench", f);
    if (matrix)
        matrix_fs_list(f, r, se->cfg);
    flag(f, "--engine", rp_str(run->config, "engine", "?"));
    if (strcmp(rp_str(run->config, "workload", "kv"), "kv") != 0)
        flag(f, "--workload", rp_str(run->config, "workload", "?"));
    flag(f, "--sync", rp_str(run->config, "sync", "?"));
    clients_list(f, r, s, matrix != NULL);
    knob_flags(f, run->config, matrix != NULL);
    if (matrix)
        matrix_options(f, r, se->cfg);
    double rounds = matrix ? rp_num(matrix, "repeats") : rp_num(rp_get(run->line, "repeat"), "rounds");
    if (isfinite(rounds) && rounds > 1)
        fprintf(f, " --repeat %.0f", rounds);
    fclose(f);
    return buf;
}

/* The knobs a crash row names in its own columns or fields (the lists a
 * campaign sweeps), and its directory: not among its "other knobs". */
static int crash_shown(enum bench_knob k)
{
    return (bench_knob(k)->flags & KF_SERIES) || k == K_SYNC_METHOD || k == K_SEGMENTS || k == K_SEGMENT_INIT ||
           k == K_PREALLOC || k == K_ELR || k == K_DIR;
}

/* The config a crash row's engine and workload hold where no flag was
 * given: bench's defaults with crash's own (bench_crash_defaults). */
static json_t *crash_default_config(json_t *cfg)
{
    struct bench_config d;
    bench_config_defaults(&d);
    bench_knob_set(&d, K_ENGINE, rp_str(cfg, "engine", "commitlab"), 0);
    bench_knob_set(&d, K_WORKLOAD, rp_str(cfg, "workload", "kv"), 0);
    for (size_t i = 0; i < bench_crash_ndefaults; i++)
        bench_knob_set(&d, bench_crash_defaults[i].knob, bench_crash_defaults[i].value, 0);
    return bench_config_json(&d);
}

/* The flags of the knobs a crash row's config holds away from crash's
 * defaults, other than those its own fields say. */
static void crash_knob_flags(FILE *f, json_t *cfg)
{
    if (!json_is_object(cfg))
        return;
    json_t *def = crash_default_config(cfg);
    for (int i = 0; i < bench_knob_count(); i++) {
        const struct bench_knob_def *k = bench_knob((enum bench_knob)i);
        json_t *v = rp_get(cfg, k->key);
        if (crash_shown((enum bench_knob)i) || !v || json_is_null(v) || json_equal(v, rp_get(def, k->key)))
            continue;
        knob_flag(f, k, v);
    }
    json_decref(def);
}

/* The `commitlab crash` line of a combination; with a seed, the line
 * that replays that one crash. */
static char *crash_command(const struct rp_crash *c, long long replay)
{
    static const char *const fields[][2] = {
        {"mode", "--mode"}, {"engine", "--engine"}, {"workload", "--workload"}, {"sync", "--sync"},
        {"sync_method", "--sync-method"}, {"segments", "--segments"}, {"segment_init", "--segment-init"},
        {"prealloc", "--prealloc"}, {"elr", "--elr"}, {"model", "--model"}, {"clients", "--clients"},
        {"txns_per_client", "--txns"},
    };
    const char *mode = rp_str(c->row, "mode", "sim");
    int kill = strcmp(mode, "sim") != 0; /* kill and cut rows: their model is their mode's */
    char *buf = NULL, val[200];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return rp_strdup("");
    fputs("commitlab crash", f);
    if (replay >= 0)
        fprintf(f, " --replay %lld", replay);
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        json_t *v = rp_get(c->row, fields[i][0]);
        if (!v || json_is_null(v) || (kill && strcmp(fields[i][0], "model") == 0))
            continue; /* a kill or cut row's model is "kill" or "cut", which --model does not take */
        if (!strcmp(fields[i][0], "engine") && json_is_string(rp_get(c->row, "plugin")))
            snprintf(val, sizeof val, "plugin:%s", rp_str(c->row, "plugin", "")); /* the file, as it ran */
        else
            knob_value(0, v, val, sizeof val);
        flag(f, fields[i][1], val);
    }
    crash_knob_flags(f, rp_get(c->row, "config"));
    double n = rp_num(c->row, "crashes");
    if (replay < 0 && isfinite(n) && n > 0)
        fprintf(f, " --iterations %.0f", n);
    if (json_is_true(rp_get(c->row, "lying_device")))
        fputs(" --lying-device", f);
    fclose(f);
    return buf;
}

/* ---- the table writer ------------------------------------------------------------------------- */

void tw_begin(struct tw *t, const struct ro *o, const char *id, const char *const *heads, size_t n)
{
    t->o = o;
    t->ncols = n;
    t->col = 0;
    if (o->md) {
        for (size_t i = 0; i < n; i++) {
            fputs(i ? " | " : "| ", o->f);
            md_esc(o->f, heads[i]);
        }
        fputs(" |\n", o->f);
        for (size_t i = 0; i < n; i++)
            fputs(i ? "---|" : "|---|", o->f);
        fputc('\n', o->f);
        return;
    }
    fprintf(o->f, "<div class=\"wrap\"><table%s%s%s>\n<thead><tr>", id && *id ? " id=\"" : "", id && *id ? id : "",
            id && *id ? "\"" : "");
    for (size_t i = 0; i < n; i++) {
        fputs("<th>", o->f);
        rp_esc(o->f, heads[i]);
        fputs("</th>", o->f);
    }
    fputs("</tr></thead>\n<tbody>\n", o->f);
}

/* One cell: cls a CSS class ("num", "good", ...) or NULL, style an inline
 * style (the matrix's colours) or NULL. */
void tw_cell(struct tw *t, const char *cls, const char *style, const char *s)
{
    FILE *f = t->o->f;
    if (t->o->md) {
        fputs(t->col ? " " : "| ", f);
        md_esc(f, s);
        fputs(" |", f);
    } else {
        if (!t->col)
            fputs("<tr>", f);
        fputs("<td", f);
        if (cls)
            fprintf(f, " class=\"%s\"", cls);
        if (style)
            fprintf(f, " style=\"%s\"", style);
        fputc('>', f);
        rp_esc(f, s);
        fputs("</td>", f);
    }
    if (++t->col == t->ncols) {
        fputs(t->o->md ? "\n" : "</tr>\n", f);
        t->col = 0;
    }
}

void tw_num(struct tw *t, double v)
{
    char buf[64];
    rp_fmt_num(buf, sizeof buf, v);
    tw_cell(t, "num", NULL, buf);
}

void tw_end(struct tw *t)
{
    fputs(t->o->md ? "\n" : "</tbody></table></div>\n", t->o->f);
}

/* ---- throughput, latency, phases ------------------------------------------------------------- */

/* Every client count of the input, ascending; returns how many. */
static size_t all_clients(const struct report *r, int *out, size_t max)
{
    size_t n = 0;
    for (size_t s = 0; s < r->nseries; s++)
        for (size_t i = 0; i < r->series[s].npts; i++) {
            int c = r->series[s].pts[i].clients;
            size_t k = 0;
            while (k < n && out[k] < c)
                k++;
            if ((k < n && out[k] == c) || n == max)
                continue;
            memmove(out + k + 1, out + k, (n - k) * sizeof *out);
            out[k] = c;
            n++;
        }
    return n;
}

#define MAX_COLS 32

/* The first cells of a row that is one point of a series: its
 * configuration, clients and runs. */
static void point_cells(struct tw *t, const struct rp_series *sr, const struct rp_point *p)
{
    char buf[32];
    tw_cell(t, NULL, NULL, sr->label);
    snprintf(buf, sizeof buf, "%d", p->clients);
    tw_cell(t, "num", NULL, buf);
    snprintf(buf, sizeof buf, "%zu", p->nruns);
    tw_cell(t, "num", NULL, buf);
}

void ro_table_tps(const struct ro *o, const struct report *r)
{
    int cl[MAX_COLS];
    size_t nc = all_clients(r, cl, MAX_COLS);
    const char *heads[MAX_COLS + 1] = {"configuration"};
    char names[MAX_COLS][32];
    for (size_t i = 0; i < nc; i++) {
        snprintf(names[i], sizeof names[i], "%d client%s", cl[i], cl[i] == 1 ? "" : "s");
        heads[i + 1] = names[i];
    }
    struct tw t;
    tw_begin(&t, o, "table-tps", heads, nc + 1);
    for (size_t s = 0; s < r->nseries; s++) {
        tw_cell(&t, NULL, NULL, r->series[s].label);
        for (size_t i = 0; i < nc; i++) {
            const struct rp_point *p = rp_point_at(&r->series[s], cl[i]);
            char a[32], b[32], c[32], cell[160];
            if (!p) {
                tw_cell(&t, "num", NULL, "-");
                continue;
            }
            rp_fmt_num(a, sizeof a, p->tps_med);
            rp_fmt_num(b, sizeof b, p->tps_min);
            rp_fmt_num(c, sizeof c, p->tps_max);
            if (p->nruns > 1)
                snprintf(cell, sizeof cell, "%s (%s-%s, %zu runs)", a, b, c, p->nruns);
            else
                snprintf(cell, sizeof cell, "%s", a);
            tw_cell(&t, "num", NULL, cell);
        }
    }
    tw_end(&t);
}

void ro_table_latency(const struct ro *o, const struct report *r)
{
    static const char *const heads[] = {"configuration", "clients", "runs", "tps", "p50 µs", "p99 µs", "p99.9 µs",
                                        "max µs"};
    struct tw t;
    tw_begin(&t, o, "table-latency", heads, 8);
    for (size_t s = 0; s < r->nseries; s++)
        for (size_t i = 0; i < r->series[s].npts; i++) {
            const struct rp_point *p = &r->series[s].pts[i];
            point_cells(&t, &r->series[s], p);
            tw_num(&t, p->tps_med);
            for (int k = 0; k < 4; k++)
                tw_num(&t, p->lat[k]);
        }
    tw_end(&t);
}

void ro_table_phases(const struct ro *o, const struct report *r)
{
    const char *heads[BENCH_PHASES + 3] = {"configuration", "clients"};
    for (int k = 0; k < BENCH_PHASES; k++)
        heads[k + 2] = bench_phase_names[k];
    heads[BENCH_PHASES + 2] = "sum µs";
    struct tw t;
    tw_begin(&t, o, "table-phases", heads, BENCH_PHASES + 3);
    for (size_t s = 0; s < r->nseries; s++) {
        const struct rp_point *p = rp_last_point(&r->series[s]);
        double v[BENCH_PHASES], sum = 0;
        int any = 0;
        for (int k = 0; p && k < BENCH_PHASES; k++) {
            v[k] = rp_phase_mean(r, p, k);
            any |= isfinite(v[k]);
            sum += isfinite(v[k]) ? v[k] : 0;
        }
        if (!any)
            continue;
        char buf[32];
        tw_cell(&t, NULL, NULL, r->series[s].label);
        snprintf(buf, sizeof buf, "%d", p->clients);
        tw_cell(&t, "num", NULL, buf);
        for (int k = 0; k < BENCH_PHASES; k++)
            tw_num(&t, v[k]);
        tw_num(&t, sum);
    }
    tw_end(&t);
}

/* What a commit cost, beside its time: the per-commit figures of
 * metrics that every engine has (CPU, context switches, the store's file
 * calls), one column each, medians over the repeats.  A column no line of
 * the input has (lines older than the figure) is left out. */
static const struct {
    const char *key, *head;
} cost_cols[] = {
    {"cpu_us_per_txn", "CPU µs/txn"},
    {"vcsw_per_txn", "voluntary cs/txn"},
    {"ivcsw_per_txn", "involuntary cs/txn"},
    {"file_syncs_per_commit", "file syncs/commit"},
    {"file_commits_per_sync", "commits/file sync"},
    {"file_writes_per_commit", "file writes/commit"},
    {"file_write_bytes_per_commit", "file bytes/commit"},
    {"syncs_per_commit", "engine's syncs/commit"},
};
#define NCOST (sizeof cost_cols / sizeof *cost_cols)

/* The median over the point's runs of metrics.key, over the runs that
 * have it; NAN when none does. */
static double metric_median(const struct report *r, const struct rp_point *p, const char *key)
{
    double *v = rp_xrealloc(NULL, (p->nruns ? p->nruns : 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < p->nruns; i++) {
        double x = rp_num(r->runs[p->runs[i]].metrics, key);
        if (isfinite(x))
            v[n++] = x;
    }
    double m = n ? ut_median(v, n) : NAN;
    free(v);
    return m;
}

/* Whether some run has metrics.key. */
static int any_run_has(const struct report *r, const char *key)
{
    for (size_t i = 0; i < r->nruns; i++)
        if (isfinite(rp_num(r->runs[i].metrics, key)))
            return 1;
    return 0;
}

int rp_costs_present(const struct report *r)
{
    return any_run_has(r, "vcsw_per_txn");
}

void ro_table_costs(const struct ro *o, const struct report *r)
{
    const char *heads[NCOST + 3] = {"configuration", "clients", "runs"};
    size_t cols[NCOST], nc = 0;
    for (size_t k = 0; k < NCOST; k++)
        if (any_run_has(r, cost_cols[k].key)) {
            cols[nc] = k;
            heads[3 + nc++] = cost_cols[k].head;
        }
    struct tw t;
    tw_begin(&t, o, "table-costs", heads, nc + 3);
    for (size_t s = 0; s < r->nseries; s++)
        for (size_t i = 0; i < r->series[s].npts; i++) {
            const struct rp_point *p = &r->series[s].pts[i];
            point_cells(&t, &r->series[s], p);
            for (size_t k = 0; k < nc; k++)
                tw_num(&t, metric_median(r, p, cost_cols[cols[k]].key));
        }
    tw_end(&t);
}

/* ---- the filesystem matrix -------------------------------------------------------------------- */

int rp_matrix_present(const struct report *r, const char **why)
{
    *why = "no commitlab-bench/1 run with status ok in the input";
    for (size_t i = 1; i < r->nenvs; i++)
        if (strcmp(r->envs[i].fs, r->envs[0].fs) != 0)
            return 1;
    if (r->nenvs)
        *why = "every run is on one filesystem";
    return 0;
}

/* The series of configuration c on env e, or NULL. */
static const struct rp_series *series_of(const struct report *r, size_t c, size_t e)
{
    for (size_t s = 0; s < r->nseries; s++)
        if (r->series[s].cfg == c && r->series[s].env == e)
            return &r->series[s];
    return NULL;
}

/* One row: configuration c at n clients on every env, coloured by its
 * share of the row's best (red at none, green at the best). */
static void matrix_row(struct tw *t, const struct report *r, size_t c, int clients)
{
    double best = 0;
    for (size_t e = 0; e < r->nenvs; e++) {
        const struct rp_series *s = series_of(r, c, e);
        const struct rp_point *p = s ? rp_point_at(s, clients) : NULL;
        best = p ? fmax(best, p->tps_med) : best;
    }
    size_t cells = 0;
    for (size_t e = 0; e < r->nenvs; e++) {
        const struct rp_series *s = series_of(r, c, e);
        cells += s && rp_point_at(s, clients);
    }
    if (best <= 0)
        return;
    char buf[64], num[32], style[64];
    tw_cell(t, NULL, NULL, r->cfgs[c].label);
    snprintf(buf, sizeof buf, "%d", clients);
    tw_cell(t, "num", NULL, buf);
    for (size_t e = 0; e < r->nenvs; e++) {
        const struct rp_series *s = series_of(r, c, e);
        const struct rp_point *p = s ? rp_point_at(s, clients) : NULL;
        if (!p) {
            tw_cell(t, "num", NULL, "-");
            continue;
        }
        double share = p->tps_med / best;
        rp_fmt_num(num, sizeof num, p->tps_med);
        if (cells < 2) {
            tw_cell(t, "num", NULL, num); /* nothing to compare it with */
            continue;
        }
        snprintf(buf, sizeof buf, "%s (%.0f%%)", num, 100 * share);
        snprintf(style, sizeof style, "background:hsl(%.0f,65%%,80%%)", 120 * share);
        tw_cell(t, "num heat", style, buf);
    }
}

void ro_table_matrix(const struct ro *o, const struct report *r)
{
    const char **heads = rp_xrealloc(NULL, (r->nenvs + 2) * sizeof *heads);
    heads[0] = "configuration";
    heads[1] = "clients";
    for (size_t e = 0; e < r->nenvs; e++)
        heads[e + 2] = r->envs[e].label;
    struct tw t;
    tw_begin(&t, o, "table-matrix", heads, r->nenvs + 2);
    int cl[MAX_COLS];
    size_t nc = all_clients(r, cl, MAX_COLS);
    for (size_t c = 0; c < r->ncfgs; c++)
        for (size_t i = 0; i < nc; i++)
            matrix_row(&t, r, c, cl[i]);
    tw_end(&t);
    free(heads);
}

/* ---- durability ------------------------------------------------------------------------------------ */

/* The verdict of a combination and its class: an engine that lost an
 * acknowledged commit where it claims its commits survive the row's kind
 * of crash, with the row's knobs, FAILED (whatever the row's status
 * says); losses where it does not claim that are what it trades for
 * speed; and a combination of no crash at all checked nothing, so it
 * is never ok. */
static const char *crash_verdict_whole(const struct rp_crash *c, const char **cls)
{
    if (c->na) {
        *cls = "na";
        return "n/a";
    }
    if (c->failed || (c->held && c->lost > 0)) {
        *cls = "bad";
        return "FAILED";
    }
    if (c->crashes == 0) {
        *cls = "na";
        return "nothing checked: no crash ran";
    }
    if (c->lost > 0) {
        *cls = "warn";
        return "as promised: not durable, may lose";
    }
    *cls = "good";
    return c->durable ? "ok: durable, none lost" : "ok: none lost";
}

/* The verdict of a row; an interrupted row's is its verdict so far, in
 * buf, never green. */
static const char *crash_verdict(const struct rp_crash *c, const char **cls, char *buf, size_t len)
{
    const char *v = crash_verdict_whole(c, cls);
    if (!c->interrupted || c->na)
        return v;
    if (!strcmp(*cls, "good"))
        *cls = "warn";
    snprintf(buf, len, "interrupted after %lld of %.0f crashes: %s so far", c->crashes,
             rp_num(rp_get(c->row, "interrupted"), "crashes_asked"), v);
    return buf;
}

const char *rp_crash_verdict(const struct rp_crash *c, const char **cls)
{
    static char buf[600]; /* the report is written by one thread */
    return crash_verdict(c, cls, buf, sizeof buf);
}

static const char *int_or_dash(json_t *v, char *buf, size_t len)
{
    if (!json_is_integer(v))
        return "-";
    snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    return buf;
}

/* The knobs of the table whose values differ between the crash rows
 * (set in varies[]), and whether some row has no config (an older line):
 * what each row must show to be told apart. */
static int crash_varying(const struct report *r, unsigned char *varies)
{
    int unrecorded = 0;
    memset(varies, 0, K_COUNT);
    for (size_t i = 0; i < r->ncrashes; i++)
        unrecorded |= !json_is_object(rp_get(r->crashes[i].row, "config"));
    for (int k = 0; k < bench_knob_count(); k++) {
        const char *key = bench_knob((enum bench_knob)k)->key;
        for (size_t i = 1; i < r->ncrashes && !varies[k]; i++) {
            json_t *a = rp_get(rp_get(r->crashes[0].row, "config"), key), *b = rp_get(rp_get(r->crashes[i].row, "config"), key);
            varies[k] = !crash_shown((enum bench_knob)k) && !(a == b || (a && b && json_equal(a, b)));
        }
    }
    return unrecorded;
}

static void crash_row(struct tw *t, const struct rp_crash *c, const unsigned char *varies, int unrecorded)
{
    static const char *const cfg[] = {"mode", "engine", "workload", "sync", "sync_method", "model"};
    char buf[1200], pre[32], cl[32], vbuf[200];
    const char *cls, *v = crash_verdict(c, &cls, vbuf, sizeof vbuf);
    json_t *elr = rp_get(c->row, "elr");
    for (size_t i = 0; i < sizeof cfg / sizeof *cfg; i++)
        tw_cell(t, NULL, NULL, rp_str(c->row, cfg[i], "-"));
    snprintf(buf, sizeof buf, "segments %s, init %s, prealloc %s, elr %s, %s clients%s",
             rp_str(c->row, "segments", "-"), rp_str(c->row, "segment_init", "-"),
             int_or_dash(rp_get(c->row, "prealloc"), pre, sizeof pre),
             json_is_boolean(elr) ? (json_is_true(elr) ? "on" : "off") : "-",
             int_or_dash(rp_get(c->row, "clients"), cl, sizeof cl),
             json_is_true(rp_get(c->row, "lying_device")) ? ", lying device" : "");
    json_t *config = rp_get(c->row, "config");
    size_t o = strlen(buf);
    if (!json_is_object(config) && unrecorded) {
        snprintf(buf + o, sizeof buf - o, "; other knobs not recorded");
    } else {
        for (int k = 0; k < bench_knob_count() && o < sizeof buf; k++) {
            if (!varies[k])
                continue;
            char label[200];
            json_t *kv = rp_get(config, bench_knob((enum bench_knob)k)->key);
            if (kv && !json_is_null(kv))
                rp_knob_label(bench_knob((enum bench_knob)k)->key, kv, label, sizeof label);
            else
                snprintf(label, sizeof label, "%s=-", bench_knob((enum bench_knob)k)->flag + 2);
            o += (size_t)snprintf(buf + o, sizeof buf - o, ", %s", label);
        }
    }
    tw_cell(t, NULL, NULL, buf);
    snprintf(buf, sizeof buf, "%lld (%lld mid-run)", c->crashes, c->mid_run);
    tw_cell(t, "num", NULL, buf);
    snprintf(buf, sizeof buf, "%lld (worst %lld)", c->lost, c->worst);
    tw_cell(t, c->lost ? (c->held ? "num bad" : "num warn") : "num", NULL, buf);
    snprintf(buf, sizeof buf, "%lld / %lld / %lld / %lld", c->atomic, c->foreign, c->phantoms, c->recov);
    tw_cell(t, c->atomic + c->foreign + c->phantoms + c->recov ? "num bad" : "num", NULL, buf);
    if (c->first_failure)
        snprintf(buf, sizeof buf, "%.200s: %.500s", v, c->first_failure);
    else if (c->na)
        snprintf(buf, sizeof buf, "n/a: %.500s", rp_str(c->row, "reason", "no reason given"));
    else
        snprintf(buf, sizeof buf, "%s", v);
    tw_cell(t, cls, NULL, buf);
}

void ro_table_durability(const struct ro *o, const struct report *r)
{
    static const char *const heads[] = {"mode", "engine", "workload", "sync", "method", "model", "other knobs",
                                        "crashes", "acknowledged commits lost",
                                        "partial / foreign / phantom / failed recoveries", "verdict"};
    struct tw t;
    unsigned char varies[K_COUNT];
    int unrecorded = crash_varying(r, varies);
    tw_begin(&t, o, "table-durability", heads, sizeof heads / sizeof *heads);
    for (size_t i = 0; i < r->ncrashes; i++)
        crash_row(&t, &r->crashes[i], varies, unrecorded);
    tw_end(&t);
}

void ro_crash_commands(const struct ro *o, const struct report *r)
{
    for (size_t i = 0; i < r->ncrashes; i++) {
        const struct rp_crash *c = &r->crashes[i];
        char *cmd = crash_command(c, -1);
        ro_code_line(o, cmd);
        free(cmd);
        json_t *seed = rp_get(c->row, "first_failure_seed");
        if (c->failed && json_is_integer(seed)) {
            ro_para(o, "Its first failure again, keeping the directory for commitlab inspect:");
            cmd = crash_command(c, (long long)json_integer_value(seed));
            ro_code_line(o, cmd);
            free(cmd);
        }
    }
}

/* ---- environment --------------------------------------------------------------------------------------- */

static void kv_row(struct tw *t, const char *k, const char *v)
{
    if (!v || !*v)
        return;
    tw_cell(t, NULL, NULL, k);
    tw_cell(t, NULL, NULL, v);
}

/* "commitlab 0.1, lmdb 0.9.31": each engine that ran on env e. */
static void engine_versions(const struct report *r, size_t e, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (size_t c = 0; c < r->ncfgs; c++) {
        const struct rp_series *s = series_of(r, c, e);
        if (!s)
            continue;
        const struct rp_run *run = &r->runs[s->pts[0].runs[0]];
        const char *eng = rp_str(run->config, "engine", "?"), *ver = rp_str(run->env, "engine_version", "?");
        char item[160];
        snprintf(item, sizeof item, "%s %s", eng, ver);
        if (!strstr(buf, item) && o < len)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", item);
    }
}

static void env_table(const struct ro *o, const struct report *r, size_t e)
{
    static const char *const heads[] = {"field", "value"};
    static const char *const fields[][2] = {
        {"hostname", "host"}, {"kernel", "kernel"}, {"os", "os"}, {"machine", "machine"},
        {"cpu_model", "CPU"}, {"fs_type", "filesystem"}, {"fs_magic", "statfs type"},
        {"mount_point", "mount point"}, {"mount_source", "mount source"}, {"mount_options", "mount options"},
        {"super_options", "superblock options"}, {"device", "block device"}, {"dev_id", "device id"},
        {"commitlab_version", "commitlab version"}, {"commitlab_commit", "source commit"},
    };
    const struct rp_env *en = &r->envs[e];
    char buf[600];
    struct tw t;
    tw_begin(&t, o, "", heads, 2);
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        kv_row(&t, fields[i][1], rp_str(en->env, fields[i][0], NULL));
    snprintf(buf, sizeof buf, "%.0f", rp_num(en->env, "cores"));
    kv_row(&t, "cores", isfinite(rp_num(en->env, "cores")) ? buf : NULL);
    if (json_is_true(rp_get(en->env, "volatile_fs")))
        kv_row(&t, "warning", "volatile filesystem: nothing is durable there, a sync returns at memory speed");
    engine_versions(r, e, buf, sizeof buf);
    kv_row(&t, "engines", buf);
    if (en->matrix) {
        kv_row(&t, "matrix filesystem", rp_str(en->matrix, "fs", NULL));
        kv_row(&t, "mkfs", rp_str(en->matrix, "mkfs", NULL));
        kv_row(&t, "mount options asked", rp_str(en->matrix, "mount_options_asked", NULL));
        kv_row(&t, "image", rp_str(en->matrix, "image_init", NULL));
    }
    tw_end(&t);
}

/* The crash rows' environments, each once (host, filesystem, mount point
 * and build), as crash lines record them; 0 when none records one. */
size_t ro_crash_environment(const struct ro *o, const struct report *r)
{
    static const char *const heads[] = {"host", "kernel", "filesystem", "mount point", "device", "commitlab",
                                        "source commit", "crash combinations"};
    static const char *const fields[] = {"hostname", "kernel", "fs_type", "mount_point", "device",
                                         "commitlab_version", "commitlab_commit"};
    struct tw t;
    size_t shown = 0;
    for (size_t i = 0; i < r->ncrashes; i++) {
        json_t *e = rp_get(r->crashes[i].row, "env");
        size_t k, n = 0;
        if (!json_is_object(e))
            continue;
        for (k = 0; k < i; k++) { /* shown with an earlier row */
            json_t *p = rp_get(r->crashes[k].row, "env");
            size_t f = 0;
            while (p && f < sizeof fields / sizeof *fields &&
                   !strcmp(rp_str(p, fields[f], ""), rp_str(e, fields[f], "")))
                f++;
            if (p && f == sizeof fields / sizeof *fields)
                break;
        }
        if (k < i)
            continue;
        for (size_t j = i; j < r->ncrashes; j++) {
            json_t *p = rp_get(r->crashes[j].row, "env");
            size_t f = 0;
            while (p && f < sizeof fields / sizeof *fields &&
                   !strcmp(rp_str(p, fields[f], ""), rp_str(e, fields[f], "")))
                f++;
            n += p && f == sizeof fields / sizeof *fields;
        }
        if (!shown++)
            tw_begin(&t, o, "table-crash-env", heads, sizeof heads / sizeof *heads);
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
            tw_cell(&t, NULL, NULL, rp_str(e, fields[f], "-"));
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%zu", n);
        tw_cell(&t, "num", NULL, cnt);
    }
    if (shown)
        tw_end(&t);
    return shown;
}

void ro_environment(const struct ro *o, const struct report *r)
{
    for (size_t e = 0; e < r->nenvs; e++) {
        ro_heading(o, 3, r->envs[e].label, NULL);
        env_table(o, r, e);
    }
}

void ro_commands(const struct ro *o, const struct report *r)
{
    for (size_t s = 0; s < r->nseries; s++) {
        int matrix = rp_series_is_matrix(r, s);
        if (matrix && s > 0 && r->series[s - 1].cfg == r->series[s].cfg)
            continue; /* one matrix command covers every filesystem */
        char *cmd = rp_series_command(r, s);
        ro_para_begin(o);
        ro_text(o, matrix ? r->cfgs[r->series[s].cfg].label : r->series[s].label);
        ro_text(o, ":");
        ro_para_end(o);
        ro_code_line(o, cmd);
        free(cmd);
    }
}

/* ---- input ------------------------------------------------------------------------------------------------ */

static void note_list(const struct ro *o, const struct rp_note *v, size_t n)
{
    ro_list_begin(o);
    for (size_t i = 0; i < n; i++) {
        ro_item_begin(o);
        ro_textf(o, "%s: %s", v[i].where, v[i].why);
        ro_item_end(o);
    }
    ro_list_end(o);
}

void ro_input(const struct ro *o, const struct report *r)
{
    ro_para_begin(o);
    ro_textf(o, "%zu line%s read from %zu file%s: ", r->lines, r->lines == 1 ? "" : "s", r->nfiles,
             r->nfiles == 1 ? "" : "s");
    for (size_t i = 0; i < r->nfiles; i++)
        ro_textf(o, "%s%s", i ? ", " : "", r->files[i]);
    ro_textf(o, ". %zu bench runs measured, %zu did not (n/a or error), %zu summary lines (their medians are "
                "computed again from the runs), %zu crash combinations, %zu filesystem verdicts, %zu lines skipped.",
             r->nruns, r->nnotok, r->nsummaries, r->ncrashes, r->nverdicts, r->nskipped);
    if (r->nstopped)
        ro_textf(o, " %zu bench run%s interrupted, shown apart below.", r->nstopped,
                 r->nstopped == 1 ? " was" : "s were");
    if (r->time_first)
        ro_textf(o, " Runs from %s to %s.", r->time_first, r->time_last);
    ro_para_end(o);
    if (r->nskipped) {
        ro_heading(o, 3, "Lines skipped", NULL);
        note_list(o, r->skipped, r->nskipped);
    }
    if (r->nnotok) {
        ro_heading(o, 3, "Runs that did not measure", NULL);
        note_list(o, r->notok, r->nnotok);
    }
    if (r->nstopped) {
        ro_heading(o, 3, "Interrupted runs", NULL);
        ro_para(o, "Runs a signal stopped, each in a row of its own with what it measured until then (over the "
                   "seconds it measured): in no median, series or chart of this report.");
        ro_table_interrupted(o, r);
    }
}

void ro_table_interrupted(const struct ro *o, const struct report *r)
{
    static const char *const heads[] = {"line", "run", "status", "transactions", "seconds", "tps", "p99 us"};
    struct tw t;
    tw_begin(&t, o, "table-interrupted", heads, sizeof heads / sizeof *heads);
    for (size_t i = 0; i < r->nstopped; i++) {
        json_t *j = r->stopped[i].line, *c = rp_get(j, "config"), *m = rp_get(j, "metrics");
        json_t *mx = rp_get(j, "matrix");
        char run[400];
        snprintf(run, sizeof run, "%s %s --sync %s, %lld client%s%s%s", rp_str(c, "engine", "?"),
                 rp_str(c, "workload", "?"), rp_str(c, "sync", "?"), (long long)json_integer_value(rp_get(c, "clients")),
                 json_integer_value(rp_get(c, "clients")) == 1 ? "" : "s", mx ? " on " : "",
                 mx ? rp_str(mx, "fs", "?") : "");
        tw_cell(&t, NULL, NULL, r->stopped[i].where);
        tw_cell(&t, NULL, NULL, run);
        tw_cell(&t, "warn", NULL, rp_str(j, "reason", "interrupted"));
        tw_num(&t, rp_num(m, "txns"));
        tw_num(&t, rp_num(m, "seconds"));
        tw_num(&t, rp_num(m, "tps"));
        tw_num(&t, rp_num(rp_get(m, "latency_us"), "p99"));
    }
    tw_end(&t);
}

void ro_verdicts(const struct ro *o, const struct report *r)
{
    if (!r->nverdicts)
        return;
    ro_list_begin(o);
    for (size_t i = 0; i < r->nverdicts; i++) {
        ro_item_begin(o);
        ro_textf(o, "%s, %s: %s", rp_str(r->verdicts[i], "fs", "?"), rp_str(r->verdicts[i], "engine", "?"),
                 rp_str(r->verdicts[i], "text", ""));
        ro_item_end(o);
    }
    ro_list_end(o);
}

/* ---- block structure ---------------------------------------------------------------------------------------- */

void ro_heading(const struct ro *o, int level, const char *s, const char *id)
{
    if (o->md) {
        fprintf(o->f, "%.*s ", level, "######");
        md_esc(o->f, s);
        fputs("\n\n", o->f);
        return;
    }
    fprintf(o->f, "<h%d%s%s%s>", level, id ? " id=\"" : "", id ? id : "", id ? "\"" : "");
    rp_esc(o->f, s);
    fprintf(o->f, "</h%d>\n", level);
}

void ro_para_begin(const struct ro *o)
{
    if (!o->md)
        fputs("<p>", o->f);
}

void ro_para_end(const struct ro *o)
{
    fputs(o->md ? "\n\n" : "</p>\n", o->f);
}

void ro_para(const struct ro *o, const char *s)
{
    ro_para_begin(o);
    ro_text(o, s);
    ro_para_end(o);
}

void ro_list_begin(const struct ro *o)
{
    if (!o->md)
        fputs("<ul>\n", o->f);
}

void ro_list_end(const struct ro *o)
{
    fputs(o->md ? "\n" : "</ul>\n", o->f);
}

void ro_item_begin(const struct ro *o)
{
    fputs(o->md ? "- " : "<li>", o->f);
}

void ro_item_end(const struct ro *o)
{
    fputs(o->md ? "\n" : "</li>\n", o->f);
}

/* A command line: markdown indents it (a fence could be closed by the
 * input's own backticks), its control characters as escapes (a '\r' would
 * end the block); HTML escapes it inside <pre>. */
void ro_code_line(const struct ro *o, const char *s)
{
    if (o->md) {
        char ctl[5];
        fputs("    ", o->f);
        for (const char *p = s; *p; p++)
            if (md_control((unsigned char)*p, ctl))
                fputs(ctl, o->f);
            else
                fputc(*p, o->f);
        fputs("\n\n", o->f);
        return;
    }
    fputs("<pre><code>", o->f);
    rp_esc(o->f, s);
    fputs("</code></pre>\n", o->f);
}
