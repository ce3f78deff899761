/*
 * report_svg.c -- the report's charts, as hand-written SVG: one <svg>
 * element each, with axes, ticks, units and a legend, drawn with
 * presentation attributes only, so that the same element reads the same
 * inline in the HTML page and as a file of its own beside the markdown.
 *
 * Every string from the input goes through rp_esc.  A series' look is a
 * pair, a colour of a ten-colour palette and a marker of six shapes (filled,
 * then hollow past 60 series), and no two of the first 120 series share
 * one, so series stay apart on a grey printout too; every chart that
 * shows series shows both halves of the pair in its key.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "ut_stats.h"

const struct rp_chart_info rp_charts[RP_NCHARTS] = {
    [RP_CHART_TPS] = {"chart-tps", "tps", "Throughput"},
    [RP_CHART_P99] = {"chart-p99", "p99", "Latency"},
    [RP_CHART_PCT] = {"chart-percentiles", "percentiles", "Latency by percentile"},
    [RP_CHART_PHASES] = {"chart-phases", "phases", "Where a commit's time goes"},
    [RP_CHART_BATCHES] = {"chart-batches", "batches", "Commits per sync"},
    [RP_CHART_TIMELINE] = {"chart-timeline", "timeline", "Second by second"},
    [RP_CHART_DURABILITY] = {"chart-durability", "durability", "Acknowledged commits lost under crashes"},
};


static const char *const palette[10] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                        "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#79706e"};
static const char *const phase_colours[BENCH_PHASES] = {"#bab0ac", "#76b7b2", "#59a14f", "#edc948",
                                                      "#f28e2b", "#e15759", "#b07aa1"};

#define WIDTH 880.0
#define LEFT 80.0     /* room for the y tick labels and title */
#define LEGEND_ROW 18.0

#define NCOLOURS 10
#define NSHAPES 6

static const char *colour(size_t i)
{
    return palette[i % NCOLOURS];
}

/* Series i's marker shape: i and i + 10k share a colour, and their shapes
 * differ by 11k mod 6, which is 0 only for k a multiple of 6; past 60 the
 * markers are hollow.  So the (colour, shape, fill) of the first 120
 * series are all distinct, and neighbours differ in shape as well. */
static int shape_of(size_t i)
{
    return (int)((i + i / NCOLOURS) % NSHAPES);
}

static int hollow_of(size_t i)
{
    return (int)(i / (NCOLOURS * NSHAPES) % 2);
}

/* ---- axes -------------------------------------------------------------------------- */

/* NINES: a percentile axis, each "nine" one step (50%, 90%, 99%, 99.9%),
 * the maximum one step further; values are -log10(1 - q), max = 4. */
enum scale { LIN, LOG2, LOG10, NINES };

struct axis {
    enum scale scale;
    double lo, hi, step;          /* step: LIN only */
    const char *title;
};

struct plot {
    FILE *f;
    double x, y, w, h;            /* the plotting area, px */
    double pad;                   /* px kept free inside the frame on the x ends */
    struct axis ax, ay;
};

static double frac(const struct axis *a, double v)
{
    if (a->scale == LIN || a->scale == NINES)
        return (v - a->lo) / (a->hi - a->lo);
    return (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo));
}

static double px(const struct plot *p, double v)
{
    return p->x + p->pad + frac(&p->ax, v) * (p->w - 2 * p->pad);
}

static double py(const struct plot *p, double v)
{
    return p->y + p->h - frac(&p->ay, v) * p->h;
}

/* The 1, 2, 2.5 or 5 times a power of ten at or above raw. */
static double nice_step(double raw)
{
    double m = pow(10, floor(log10(raw))), f = raw / m;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * m;
}

static void axis_lin(struct axis *a, double lo, double hi, const char *title)
{
    if (!(hi > lo))
        hi = lo + 1;
    a->scale = LIN;
    a->step = nice_step((hi - lo) / 6);
    a->lo = floor(lo / a->step) * a->step;
    a->hi = ceil(hi / a->step) * a->step;
    a->title = title;
}

/* The 1-2-5 value at or below v (down), or at or above it. */
static double round125(double v, int up)
{
    double m = pow(10, floor(log10(v)));
    static const double s[4] = {1, 2, 5, 10};
    if (up) {
        for (int i = 0; i < 4; i++)
            if (s[i] * m >= v * 0.9999)
                return s[i] * m;
        return 10 * m;
    }
    for (int i = 3; i >= 0; i--)
        if (s[i] * m <= v * 1.0001)
            return s[i] * m;
    return m;
}

static void axis_log10(struct axis *a, double lo, double hi, const char *title)
{
    a->scale = LOG10;
    a->lo = round125(lo, 0);
    a->hi = round125(hi, 1);
    if (a->hi <= a->lo)
        a->hi = a->lo * 10;
    a->title = title;
}

static void axis_log2(struct axis *a, double lo, double hi, const char *title)
{
    a->scale = LOG2;
    a->lo = pow(2, floor(log2(lo)));
    a->hi = pow(2, ceil(log2(hi)));
    if (a->hi <= a->lo) {
        a->lo /= 2;
        a->hi *= 2;
    }
    a->title = title;
}

#define MAX_TICKS 64

static size_t ticks(const struct axis *a, double *t)
{
    size_t n = 0;
    if (a->scale == NINES) {
        static const double at[] = {0.30103, 1, 2, 3, 4}; /* 50%, 90%, 99%, 99.9%, max */
        for (size_t i = 0; i < sizeof at / sizeof *at; i++)
            t[n++] = at[i];
    } else if (a->scale == LIN) {
        for (double v = a->lo; v <= a->hi + a->step / 2 && n < MAX_TICKS; v += a->step)
            t[n++] = fabs(v) < a->step / 1e6 ? 0 : v;
    } else if (a->scale == LOG2) {
        for (double v = a->lo; v <= a->hi * 1.0001 && n < MAX_TICKS; v *= 2)
            t[n++] = v;
    } else {
        /* decades, and 2 and 5 between them while that stays readable */
        int fine = a->hi / a->lo <= 200;
        for (double d = pow(10, floor(log10(a->lo))); d <= a->hi * 1.0001 && n < MAX_TICKS; d *= 10)
            for (int k = 0; k < 3; k++) {
                double v = d * (k == 0 ? 1 : k == 1 ? 2 : 5);
                if ((k == 0 || fine) && v >= a->lo * 0.9999 && v <= a->hi * 1.0001 && n < MAX_TICKS)
                    t[n++] = v;
            }
    }
    return n;
}

static void tick_label(const struct axis *a, double v, char *buf, size_t len)
{
    if (a->scale == NINES)
        snprintf(buf, len, "%s", v < 0.5 ? "p50" : v < 1.5 ? "p90" : v < 2.5 ? "p99" : v < 3.5 ? "p99.9" : "max");
    else if (a->scale == LOG2)
        snprintf(buf, len, "%.0f", v);
    else
        rp_fmt_short(buf, len, v);
}

static void text(FILE *f, double x, double y, const char *anchor, const char *attrs, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s>", x, y, anchor, attrs ? " " : "",
            attrs ? attrs : "");
    rp_esc(f, s);
    fputs("</text>\n", f);
}

/* Characters of 12px sans-serif that fit in w px, about. */
static size_t chars_in(double w)
{
    return (size_t)(w / 6.8);
}

/* Draws s from (x, y) down in lines of at most max characters, broken at
 * spaces (a longer word stands alone), LEGEND_ROW apart, each a <text>
 * with attrs (or none); with f NULL only counts them.  Returns the number
 * of lines. */
static size_t wrapped_attrs(FILE *f, double x, double y, const char *s, size_t max, const char *attrs)
{
    size_t lines = 0;
    while (*s) {
        size_t len = strlen(s), cut = len;
        if (len > max) {
            cut = max;
            while (cut > 0 && s[cut] != ' ')
                cut--;
            if (!cut) {
                cut = strcspn(s, " ");
            }
        }
        if (f) {
            char *line = rp_xrealloc(NULL, cut + 1);
            memcpy(line, s, cut);
            line[cut] = 0;
            text(f, x, y + (double)lines * LEGEND_ROW, "start", attrs, line);
            free(line);
        }
        lines++;
        s += cut;
        while (*s == ' ')
            s++;
    }
    return lines ? lines : 1;
}

static size_t wrapped(FILE *f, double x, double y, const char *s, size_t max)
{
    return wrapped_attrs(f, x, y, s, max, NULL);
}

static void x_ticks(const struct plot *p)
{
    double t[MAX_TICKS];
    char lab[32];
    size_t n = ticks(&p->ax, t);
    for (size_t i = 0; i < n; i++) {
        double x = px(p, t[i]);
        fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", x, p->y, x,
                p->y + p->h);
        fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", x, p->y + p->h, x,
                p->y + p->h + 5);
        tick_label(&p->ax, t[i], lab, sizeof lab);
        text(p->f, x, p->y + p->h + 18, "middle", NULL, lab);
    }
}

static void y_ticks(const struct plot *p)
{
    double t[MAX_TICKS];
    char lab[32];
    size_t n = ticks(&p->ay, t);
    for (size_t i = 0; i < n; i++) {
        double y = py(p, t[i]);
        fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", p->x, y,
                p->x + p->w, y);
        fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", p->x - 5, y, p->x,
                y);
        tick_label(&p->ay, t[i], lab, sizeof lab);
        text(p->f, p->x - 8, y + 4, "end", NULL, lab);
    }
}

/* Grid, ticks with their labels, the frame and both axis titles. */
static void draw_axes(const struct plot *p)
{
    x_ticks(p);
    y_ticks(p);
    fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n",
            p->x, p->y, p->w, p->h);
    text(p->f, p->x + p->w / 2, p->y + p->h + 36, "middle", NULL, p->ax.title);
    char attrs[96];
    double tx = p->x - 58, ty = p->y + p->h / 2;
    snprintf(attrs, sizeof attrs, "transform=\"rotate(-90 %.1f %.1f)\"", tx, ty);
    text(p->f, tx, ty, "middle", attrs, p->ay.title);
}

/* ---- marks and legends --------------------------------------------------------------- */

/* Series i's marker at (x, y): its colour, its shape (shape_of), filled
 * or hollow (hollow_of). */
static void marker(FILE *f, size_t i, double x, double y)
{
    const char *c = colour(i);
    char paint[96];
    if (hollow_of(i))
        snprintf(paint, sizeof paint, "fill=\"#ffffff\" stroke=\"%s\" stroke-width=\"1.5\"", c);
    else
        snprintf(paint, sizeof paint, "fill=\"%s\"", c);
    switch (shape_of(i)) {
    case 0: /* circle */
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" %s/>\n", x, y, paint);
        break;
    case 1: /* square */
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" %s/>\n", x - 3.5, y - 3.5, paint);
        break;
    case 2: /* diamond */
        fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" %s/>\n", x, y - 4.5, x + 4.5, y, x, y + 4.5,
                x - 4.5, y, paint);
        break;
    case 3: /* triangle, point up */
        fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" %s/>\n", x, y - 4.5, x + 4.5, y + 3.5, x - 4.5,
                y + 3.5, paint);
        break;
    case 4: /* triangle, point down */
        fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" %s/>\n", x, y + 4.5, x + 4.5, y - 3.5, x - 4.5,
                y - 3.5, paint);
        break;
    default: /* cross, a plus turned 45 degrees */
        fprintf(f, "<path d=\"M%.1f %.1fl2 2l2 -2l1.5 1.5l-2 2l2 2l-1.5 1.5l-2 -2l-2 2l-1.5 -1.5l2 -2l-2 -2Z\" %s/>\n",
                x - 2, y - 3.5, paint);
        break;
    }
}

#define LEGEND_TEXT_W (WIDTH - LEFT - 40)

/* A series' line and marker, and its label; returns the rows it took. */
static size_t legend_line(FILE *f, double x, double y, size_t i, const char *label)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n", x,
            y - 4, x + 24, y - 4, colour(i));
    marker(f, i, x + 12, y - 4);
    return wrapped(f, x + 32, y, label, chars_in(LEGEND_TEXT_W));
}

static size_t legend_box(FILE *f, double x, double y, const char *fill, const char *label, double w)
{
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, y - 10, fill);
    return wrapped(f, x + 18, y, label, chars_in(w));
}

static void svg_begin(FILE *f, enum rp_chart c, double h, const char *caption, int standalone)
{
    const char *id = rp_charts[c].id;
    if (standalone)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\" "
            "aria-labelledby=\"%s-title\">\n<title id=\"%s-title\">",
            id, WIDTH, h, WIDTH, h, id, id);
    rp_esc(f, caption);
    fprintf(f, "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", WIDTH, h);
}

/* ---- what the charts need -------------------------------------------------------------- */

static int point_has_p99(const struct rp_point *p)
{
    return isfinite(p->lat[1]) && p->lat[1] > 0;
}

double rp_phase_mean(const struct report *r, const struct rp_point *p, int phase)
{
    double *v = rp_xrealloc(NULL, p->nruns * sizeof *v);
    for (size_t i = 0; i < p->nruns; i++)
        v[i] = rp_num(rp_get(rp_get(r->runs[p->runs[i]].metrics, "commit_phases_us"), bench_phase_names[phase]), "mean");
    double m = ut_median(v, p->nruns);
    free(v);
    return m;
}

static int has_phases(const struct report *r, const struct rp_series *s)
{
    const struct rp_point *p = rp_last_point(s);
    for (int k = 0; p && k < BENCH_PHASES; k++)
        if (isfinite(rp_phase_mean(r, p, k)))
            return 1;
    return 0;
}

/* Bars whose totals span more than this are drawn on a log axis. */
#define PHASES_LOG_SPAN 10.0

/* The sum of a series' phase means at its largest client count, µs. */
static double phase_total(const struct report *r, size_t s)
{
    double sum = 0;
    for (int k = 0; k < BENCH_PHASES; k++) {
        double v = rp_phase_mean(r, rp_last_point(&r->series[s]), k);
        sum += isfinite(v) && v > 0 ? v : 0;
    }
    return sum;
}

/* The smallest and largest nonzero bar of the phases chart (lo INFINITY
 * when none), and whether they span more than PHASES_LOG_SPAN. */
static int phases_log(const struct report *r, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0;
    for (size_t s = 0; s < r->nseries; s++) {
        if (!has_phases(r, &r->series[s]))
            continue;
        double t = phase_total(r, s);
        if (t > 0) {
            *lo = fmin(*lo, t);
            *hi = fmax(*hi, t);
        }
    }
    return isfinite(*lo) && *hi / *lo > PHASES_LOG_SPAN;
}

/* A count as the chart writes it: "7", "1,518". */
static void fmt_count(char *buf, size_t len, long long n)
{
    if (n < 1000)
        snprintf(buf, len, "%lld", n);
    else
        rp_fmt_num(buf, len, (double)n);
}

/* A commits_per_sync_dist.hist key: "7" is 7, "257+" is 257. */
static int batch_of_key(const char *k)
{
    char *end;
    long v = strtol(k, &end, 10);
    return end != k && v > 0 && v < 1000000 ? (int)v : 0;
}

/* The syncs of batch size n, summed over the runs at point p. */
static double batch_count(const struct report *r, const struct rp_point *p, int lo, int hi)
{
    double sum = 0;
    for (size_t i = 0; i < p->nruns; i++) {
        json_t *h = rp_get(rp_get(r->runs[p->runs[i]].metrics, "commits_per_sync_dist"), "hist");
        const char *k;
        json_t *v;
        json_object_foreach(h, k, v) {
            int b = batch_of_key(k);
            if (b >= lo && b <= hi && json_is_number(v) && json_number_value(v) > 0)
                sum += json_number_value(v);
        }
    }
    return sum;
}

/* Commits per sync at point p, from the exact counts: each run's commits
 * (engine_commits when known, else txns) over its syncs, as the run's own
 * metrics.commits_per_sync counts them, pooled over the repeats.  Never
 * from the histogram, whose last entry "257+" holds batches of any size
 * above 256 (a run without durability makes tens of thousands of commits
 * durable per sync).  When a run lacks the counts, the median of the runs'
 * own commits_per_sync; NAN when none has it. */
static double batch_mean(const struct report *r, const struct rp_point *p, double *syncs_out)
{
    double commits = 0, syncs = 0, *own = rp_xrealloc(NULL, (p->nruns ? p->nruns : 1) * sizeof *own), m = NAN;
    size_t nown = 0;
    int pooled = p->nruns > 0;
    for (size_t i = 0; i < p->nruns; i++) {
        json_t *mt = r->runs[p->runs[i]].metrics;
        double ec = rp_num(mt, "engine_commits"), c = isfinite(ec) && ec > 0 ? ec : rp_num(mt, "txns");
        double s = rp_num(mt, "syncs"), cps = rp_num(mt, "commits_per_sync");
        if (isfinite(c) && isfinite(s) && s > 0) {
            commits += c;
            syncs += s;
        } else {
            pooled = 0;
        }
        if (isfinite(cps) && cps >= 0)
            own[nown++] = cps;
    }
    if (pooled)
        m = commits / syncs;
    else if (nown)
        m = ut_median(own, nown);
    *syncs_out = pooled ? syncs : NAN;
    free(own);
    return m;
}

static int has_batches(const struct report *r, const struct rp_series *s)
{
    const struct rp_point *p = rp_last_point(s);
    return p && batch_count(r, p, 1, 1 << 30) > 0;
}

static int max_clients(const struct report *r)
{
    int m = 0;
    for (size_t s = 0; s < r->nseries; s++)
        if (r->series[s].npts && rp_last_point(&r->series[s])->clients > m)
            m = rp_last_point(&r->series[s])->clients;
    return m;
}

/* The per-second timeline of the point's median run, or NULL. */
static json_t *timeline_of(const struct report *r, const struct rp_point *p)
{
    json_t *t = p ? rp_get(r->runs[p->rep].metrics, "timeline") : NULL;
    return json_is_array(t) && json_array_size(t) ? t : NULL;
}

int rp_chart_present(const struct report *r, enum rp_chart c, const char **why)
{
    int any = 0;
    if (c == RP_CHART_DURABILITY) {
        *why = "no crash runs in the input (commitlab-crash/1 lines, from commitlab crash --out)";
        return r->ncrashes > 0;
    }
    *why = "no commitlab-bench/1 run with status ok in the input";
    if (!r->nseries)
        return 0;
    for (size_t s = 0; s < r->nseries && !any; s++) {
        const struct rp_series *se = &r->series[s];
        switch (c) {
        case RP_CHART_TPS: any = 1; break;
        case RP_CHART_P99:
            for (size_t i = 0; i < se->npts; i++)
                any |= point_has_p99(&se->pts[i]);
            *why = "no run reports a p99 latency";
            break;
        case RP_CHART_PCT:
            any = se->npts && isfinite(rp_last_point(se)->pct[0]) && rp_last_point(se)->pct[0] > 0;
            *why = "no run reports latency percentiles";
            break;
        case RP_CHART_PHASES:
            any = has_phases(r, se);
            *why = "no run reports metrics.commit_phases_us (only commitlab times the phases of a commit)";
            break;
        case RP_CHART_BATCHES:
            any = has_batches(r, se);
            *why = "no run reports metrics.commits_per_sync_dist (only commitlab counts commits per sync)";
            break;
        case RP_CHART_TIMELINE:
            any = timeline_of(r, rp_point_at(se, max_clients(r))) != NULL;
            *why = "no run at the largest client count has a per-second timeline (a run shorter than half a "
                   "second has none)";
            break;
        case RP_CHART_DURABILITY:
        case RP_NCHARTS: break;
        }
    }
    return any;
}

static int any_repeats(const struct report *r)
{
    for (size_t s = 0; s < r->nseries; s++)
        for (size_t i = 0; i < r->series[s].npts; i++)
            if (r->series[s].pts[i].nruns > 1)
                return 1;
    return 0;
}

char *rp_chart_caption(const struct report *r, enum rp_chart c)
{
    const char *which = r->nenvs > 1 ? "configuration and filesystem" : "configuration";
    switch (c) {
    case RP_CHART_TPS:
        return rp_printf("Throughput against client count, one line per %s%s.", which,
                         any_repeats(r) ? "; the median of the repeats, bars from min to max" : "");
    case RP_CHART_P99:
        return rp_printf("p99 transaction latency against client count, log scales, one line per %s%s.", which,
                         any_repeats(r) ? " (median of the repeats)" : "");
    case RP_CHART_PCT:
        return rp_printf("Latency by percentile (p50 to the maximum, log scale), one line per %s at its "
                         "largest client count%s.", which, any_repeats(r) ? " (median of the repeats)" : "");
    case RP_CHART_PHASES:
        return rp_printf("Where a commit's time goes: the mean microseconds of each phase, per configuration "
                         "at its largest client count%s.",
                         phases_log(r, &(double){0}, &(double){0})
                             ? "; on a log scale, as the totals span more than 10x: each bar ends at its "
                               "total and is divided among the phases by their shares"
                             : "");
    case RP_CHART_BATCHES:
        return rp_strdup("Commits made durable per sync: the share of syncs by batch size, per configuration "
                         "at its largest client count.");
    case RP_CHART_TIMELINE:
        return rp_printf("Throughput and p99 latency second by second at %d clients (the median run of each "
                         "%s); ticks for segment switches and checkpoints.", max_clients(r), which);
    case RP_CHART_DURABILITY:
        return rp_strdup("Acknowledged commits lost under crashes, one bar per crash combination, coloured by its "
                         "verdict; a combination that ran no crash is marked not checked, not as a zero.");
    case RP_NCHARTS: break;
    }
    return rp_strdup("");
}

/* ---- 1 and 2: against clients ----------------------------------------------------------- */

/* The legend rows of the given series (their labels wrapped). */
/* A series' legend entry starts with its number, the tag its line carries
 * at its end (end_tags), so a chart printed without colour still reads. */
static char *numbered(const struct report *r, size_t s, int clients)
{
    const struct rp_point *pt = rp_last_point(&r->series[s]);
    if (clients && pt)
        return rp_printf("[%zu] %s, %d client%s", s + 1, r->series[s].label, pt->clients, pt->clients == 1 ? "" : "s");
    return rp_printf("[%zu] %s", s + 1, r->series[s].label);
}

static double series_legend_rows(const struct report *r, const size_t *which, size_t n, int clients)
{
    size_t rows = 0;
    for (size_t i = 0; i < n; i++) {
        char *l = numbered(r, which[i], clients);
        rows += wrapped(NULL, 0, 0, l, chars_in(LEGEND_TEXT_W));
        free(l);
    }
    return (double)rows;
}

/* Draws the legend from y down; returns the y below it. */
static double series_legend(FILE *f, const struct report *r, const size_t *which, size_t n, double y, int clients)
{
    for (size_t i = 0; i < n; i++) {
        char *l = numbered(r, which[i], clients);
        y += (double)legend_line(f, LEFT, y, which[i], l) * LEGEND_ROW;
        free(l);
    }
    return y;
}

/* Where a line ends, for its tag; at is where end_tags puts the tag's
 * middle, led whether a leader joins them. */
struct end_tag {
    double x, y;
    size_t s;
    double at;
    int led;
};

#define TAG_ROW 11.0      /* px between two tags' middles: 10px bold digits */
#define TAG_DX 9.0        /* from a line's last point to its tag's left edge */

static double tag_width(size_t s)
{
    char num[24];
    return 6.2 * (double)snprintf(num, sizeof num, "[%zu]", s + 1);
}

static int cmp_tag_x(const void *a, const void *b)
{
    const struct end_tag *x = a, *y = b;
    return x->x < y->x ? -1 : x->x > y->x;
}

static int cmp_tag_y(const void *a, const void *b)
{
    const struct end_tag *x = a, *y = b;
    return x->y < y->y ? -1 : x->y > y->y ? 1 : x->s < y->s ? -1 : x->s > y->s;
}

/* Places the tags t[0..n), sorted by y, whose boxes share some x: each
 * wants its middle at its own point's y; where two would overlap, the run
 * of them is spread TAG_ROW apart around the mean of the points it stands
 * for (so each moves as little as it can, up as well as down), and kept
 * between top and bottom.  Runs that come to overlap merge, until none
 * does.  Every tag keeps its order by y, so none crosses another. */
static void spread_tags(struct end_tag *t, size_t n, double top, double bottom)
{
    size_t *first = rp_xrealloc(NULL, (n ? n : 1) * sizeof *first), nb = 0;
    double *at = rp_xrealloc(NULL, (n ? n : 1) * sizeof *at);
    for (size_t i = 0; i < n; i++) {
        /* a new run for tag i, then merged down while it overlaps the one before */
        first[nb] = i;
        nb++;
        for (;;) {
            size_t b = nb - 1, lo = first[b], hi = i + 1;
            double sum = 0;
            for (size_t k = lo; k < hi; k++)
                sum += t[k].y - (double)(k - lo) * TAG_ROW;
            double start = sum / (double)(hi - lo), span = (double)(hi - lo - 1) * TAG_ROW;
            if (start + span > bottom)
                start = bottom - span;
            if (start < top)
                start = top;
            at[b] = start;
            if (b == 0) {
                break;
            }
            size_t plo = first[b - 1];
            if (at[b - 1] + (double)(lo - plo - 1) * TAG_ROW + TAG_ROW <= start)
                break;
            nb--; /* overlaps the run before: one run */
        }
    }
    for (size_t b = 0; b < nb; b++) {
        size_t hi = b + 1 < nb ? first[b + 1] : n;
        for (size_t k = first[b]; k < hi; k++) {
            t[k].at = at[b] + (double)(k - first[b]) * TAG_ROW;
            t[k].led = hi - first[b] > 1 || fabs(t[k].at - t[k].y) > 2;
        }
    }
    free(first);
    free(at);
}

/* Each line's number at its last point ("[3]"), in the line's colour.
 * Tags whose boxes would share some x are placed together (spread_tags);
 * a tag that had to move off its point's height, or stands in a run of
 * tags spread apart (where lines end too close together for a tag to be
 * nearer its own point than another's), is joined to its point by a thin
 * leader in the same colour, so that it reads as its own line's and never
 * as the neighbour's.  top and bottom: the plot's. */
static void end_tags(FILE *f, struct end_tag *t, size_t n, double top, double bottom)
{
    qsort(t, n, sizeof *t, cmp_tag_x);
    for (size_t i = 0; i < n;) {
        /* a column: tags whose boxes overlap in x, one after the other */
        size_t j = i + 1;
        double right = t[i].x + TAG_DX + tag_width(t[i].s);
        while (j < n && t[j].x + TAG_DX < right) {
            right = fmax(right, t[j].x + TAG_DX + tag_width(t[j].s));
            j++;
        }
        qsort(t + i, j - i, sizeof *t, cmp_tag_y);
        spread_tags(t + i, j - i, top + TAG_ROW / 2, bottom - TAG_ROW / 2);
        i = j;
    }
    for (size_t i = 0; i < n; i++) {
        char num[24];
        snprintf(num, sizeof num, "[%zu]", t[i].s + 1);
        if (t[i].led)
            fprintf(f, "<line class=\"end-tag-leader\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"%s\" stroke-width=\"1\"/>\n",
                    t[i].x, t[i].y, t[i].x + TAG_DX - 1, t[i].at, colour(t[i].s));
        fprintf(f, "<text class=\"end-tag\" x=\"%.1f\" y=\"%.1f\" font-size=\"10\" font-weight=\"bold\" "
                   "fill=\"%s\">%s</text>\n",
                t[i].x + TAG_DX, t[i].at + 3.5, colour(t[i].s), num);
    }
}

static void clients_axis(const struct report *r, struct axis *a)
{
    double lo = INFINITY, hi = 0;
    for (size_t s = 0; s < r->nseries; s++)
        for (size_t i = 0; i < r->series[s].npts; i++) {
            lo = fmin(lo, r->series[s].pts[i].clients);
            hi = fmax(hi, r->series[s].pts[i].clients);
        }
    axis_log2(a, lo, hi, "clients (threads, log scale)");
}

/* Linear from zero, unless the values span more than 30x: then the low
 * series would sit flat on the axis, and the scale is logarithmic. */
static void tps_axis(struct axis *a, double lo, double hi)
{
    if (lo > 0 && hi / lo > 30)
        axis_log10(a, lo, hi, "transactions per second (log scale)");
    else
        axis_lin(a, 0, hi, "transactions per second");
}

static void polyline(FILE *f, size_t colour_i, const double *x, const double *y, size_t n)
{
    if (n < 2)
        return;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", colour(colour_i));
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", x[i], y[i]);
    fputs("\"/>\n", f);
}

static void error_bar(FILE *f, size_t colour_i, double x, double y0, double y1)
{
    fprintf(f,
            "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"%s\" stroke-width=\"1.2\" "
            "fill=\"none\"/>\n",
            x, y0, y1, x - 4, y0, x + 4, x - 4, y1, x + 4, colour(colour_i));
}

/* One series against clients: tps (which 0) or p99 (which 1); *tag gets
 * where it ends (tag->s stays SIZE_MAX when nothing was drawn). */
static void clients_series(const struct plot *p, const struct rp_series *se, size_t s, int which, struct end_tag *tag)
{
    double *xs = rp_xrealloc(NULL, se->npts * sizeof *xs), *ys = rp_xrealloc(NULL, se->npts * sizeof *ys);
    size_t n = 0;
    for (size_t i = 0; i < se->npts; i++) {
        const struct rp_point *pt = &se->pts[i];
        double v = which ? pt->lat[1] : pt->tps_med;
        if (!isfinite(v) || (p->ay.scale != LIN && v <= 0))
            continue;
        xs[n] = px(p, pt->clients);
        ys[n++] = py(p, v);
        if (!which && pt->nruns > 1 && (p->ay.scale == LIN || pt->tps_min > 0))
            error_bar(p->f, s, xs[n - 1], py(p, pt->tps_min), py(p, pt->tps_max));
    }
    polyline(p->f, s, xs, ys, n);
    for (size_t i = 0; i < n; i++)
        marker(p->f, s, xs[i], ys[i]);
    if (n)
        *tag = (struct end_tag){xs[n - 1], ys[n - 1], s, 0, 0};
    free(xs);
    free(ys);
}

static void chart_clients(FILE *f, const struct report *r, int which, const char *caption, int standalone)
{
    struct plot p = {f, LEFT, 20, WIDTH - LEFT - 30, 300, 16, {0}, {0}};
    double lo = INFINITY, hi = 0;
    for (size_t s = 0; s < r->nseries; s++)
        for (size_t i = 0; i < r->series[s].npts; i++) {
            const struct rp_point *pt = &r->series[s].pts[i];
            double a = which ? pt->lat[1] : pt->tps_min, b = which ? pt->lat[1] : pt->tps_max;
            if (isfinite(a) && a > 0)
                lo = fmin(lo, a);
            if (isfinite(b))
                hi = fmax(hi, b);
        }
    clients_axis(r, &p.ax);
    if (which)
        axis_log10(&p.ay, lo, hi, "p99 latency (µs, log scale)");
    else
        tps_axis(&p.ay, lo, hi);
    int bars = !which && any_repeats(r);
    size_t *all = rp_xrealloc(NULL, r->nseries * sizeof *all);
    for (size_t s = 0; s < r->nseries; s++)
        all[s] = s;
    double ly = p.y + p.h + 62;
    double h = ly + (series_legend_rows(r, all, r->nseries, 0) + bars) * LEGEND_ROW + 10;
    svg_begin(f, which ? RP_CHART_P99 : RP_CHART_TPS, h, caption, standalone);
    draw_axes(&p);
    struct end_tag *tags = rp_xrealloc(NULL, (r->nseries ? r->nseries : 1) * sizeof *tags);
    size_t ntags = 0;
    for (size_t s = 0; s < r->nseries; s++) {
        tags[ntags].s = SIZE_MAX;
        clients_series(&p, &r->series[s], s, which, &tags[ntags]);
        ntags += tags[ntags].s != SIZE_MAX;
    }
    end_tags(f, tags, ntags, p.y, p.y + p.h);
    free(tags);
    double y = series_legend(f, r, all, r->nseries, ly, 0);
    if (bars) {
        error_bar(f, 9, LEFT + 12, y - 9, y + 1);
        text(f, LEFT + 32, y, "start", NULL, "min to max of the repeats");
    }
    free(all);
    fputs("</svg>\n", f);
}

/* ---- 2b: latency by percentile ------------------------------------------------------------ */

/* The latency distribution as far as the runs report it: p50, p90, p99,
 * p99.9 and the maximum, each "nine" one step to the right, so the tail
 * that a mean hides spreads out (HdrHistogram's percentile plot, drawn
 * from the five percentiles the JSON keeps). */
static void chart_percentiles(FILE *f, const struct report *r, const char *caption, int standalone)
{
    static const double at[RP_NPCT] = {0.30103, 1, 2, 3, 4};
    struct plot p = {f, LEFT, 20, WIDTH - LEFT - 30, 300, 16, {0}, {0}};
    double lo = INFINITY, hi = 0;
    size_t *rows = rp_xrealloc(NULL, r->nseries * sizeof *rows), n = 0;
    for (size_t s = 0; s < r->nseries; s++) {
        const struct rp_point *pt = rp_last_point(&r->series[s]);
        if (!pt || !(pt->pct[0] > 0))
            continue;
        rows[n++] = s;
        for (int k = 0; k < RP_NPCT; k++)
            if (isfinite(pt->pct[k]) && pt->pct[k] > 0) {
                lo = fmin(lo, pt->pct[k]);
                hi = fmax(hi, pt->pct[k]);
            }
    }
    p.ax = (struct axis){NINES, 0.30103, 4, 1, "percentile (each step one more nine; the maximum last)"};
    axis_log10(&p.ay, lo, hi, "latency (µs, log scale)");
    double ly = p.y + p.h + 62;
    double h = ly + series_legend_rows(r, rows, n, 1) * LEGEND_ROW + 10;
    svg_begin(f, RP_CHART_PCT, h, caption, standalone);
    draw_axes(&p);
    struct end_tag *tags = rp_xrealloc(NULL, (n ? n : 1) * sizeof *tags);
    size_t ntags = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rp_point *pt = rp_last_point(&r->series[rows[i]]);
        double xs[RP_NPCT], ys[RP_NPCT];
        size_t m = 0;
        for (int k = 0; k < RP_NPCT; k++)
            if (isfinite(pt->pct[k]) && pt->pct[k] > 0) {
                xs[m] = px(&p, at[k]);
                ys[m++] = py(&p, pt->pct[k]);
            }
        polyline(f, rows[i], xs, ys, m);
        for (size_t k = 0; k < m; k++)
            marker(f, rows[i], xs[k], ys[k]);
        if (m)
            tags[ntags++] = (struct end_tag){xs[m - 1], ys[m - 1], rows[i], 0, 0};
    }
    end_tags(f, tags, ntags, p.y, p.y + p.h);
    free(tags);
    series_legend(f, r, rows, n, ly, 1);
    free(rows);
    fputs("</svg>\n", f);
}

/* ---- 3: phases ------------------------------------------------------------------------------ */

#define BAR_H 18.0
static char *phase_label(const struct report *r, size_t s)
{
    const struct rp_point *pt = rp_last_point(&r->series[s]);
    return rp_printf("[%zu] %s, %d client%s", s + 1, r->series[s].label, pt->clients, pt->clients == 1 ? "" : "s");
}

/* One configuration's bar, its label above it; returns the height used.
 * The bar ends at its total on the axis; its phases divide it in
 * proportion to their shares of that total -- on a linear axis exactly
 * their lengths, on a log axis the only reading that does not swell the
 * first phases (where a phase would start and end on a log scale depends
 * on the phases before it). */
static double phase_bar(const struct plot *p, const struct report *r, size_t s, double y)
{
    const struct rp_point *pt = rp_last_point(&r->series[s]);
    char *label = phase_label(r, s);
    double top = y + (double)wrapped(p->f, p->x, y + 12, label, chars_in(WIDTH - LEFT - 20)) * LEGEND_ROW;
    double total = phase_total(r, s), x0 = px(p, p->ax.scale == LIN ? 0 : p->ax.lo);
    double x1 = total > 0 ? px(p, total) : x0, at = x0; /* a log axis has no 0 */
    char lab[64], num[32];
    free(label);
    for (int k = 0; k < BENCH_PHASES && total > 0; k++) {
        double v = rp_phase_mean(r, pt, k);
        if (!isfinite(v) || v <= 0)
            continue;
        double w = (x1 - x0) * v / total;
        rp_fmt_num(num, sizeof num, v);
        fprintf(p->f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"><title>%s: %s µs, "
                      "%.1f%% of the total</title></rect>\n",
                at, top - 4, w, BAR_H, phase_colours[k], bench_phase_names[k], num, 100 * v / total);
        at += w;
    }
    rp_fmt_num(num, sizeof num, total);
    snprintf(lab, sizeof lab, "%s µs", num);
    text(p->f, x1 + 6, top + 9, "start", NULL, lab);
    return top - y + BAR_H + 10;
}

static double phase_rows_height(const struct report *r, const size_t *rows, size_t n)
{
    double h = 0;
    for (size_t i = 0; i < n; i++) {
        char *label = phase_label(r, rows[i]);
        h += (double)wrapped(NULL, 0, 0, label, chars_in(WIDTH - LEFT - 20)) * LEGEND_ROW + BAR_H + 10;
        free(label);
    }
    return h;
}

static void chart_phases(FILE *f, const struct report *r, const char *caption, int standalone)
{
    size_t *rows = rp_xrealloc(NULL, r->nseries * sizeof *rows), n = 0;
    double lo, hi;
    int log_axis = phases_log(r, &lo, &hi);
    for (size_t s = 0; s < r->nseries; s++)
        if (has_phases(r, &r->series[s]))
            rows[n++] = s;
    /* room on the right for the total written after the longest bar */
    struct plot p = {f, LEFT, 20, WIDTH - LEFT - 110, phase_rows_height(r, rows, n) + 6, 0, {0}, {0}};
    if (log_axis) {
        /* from a power of ten at least twice below the smallest bar, so
         * that the smallest bar still has a length */
        p.ax.scale = LOG10;
        p.ax.lo = pow(10, floor(log10(lo)));
        if (lo / p.ax.lo < 2)
            p.ax.lo /= 10;
        p.ax.hi = round125(hi, 1);
        p.ax.title = "mean time of a commit (µs, log scale), divided among its phases by their shares";
    } else {
        axis_lin(&p.ax, 0, hi, "mean time in each phase of a commit (µs)");
    }
    p.ay = (struct axis){LIN, 0, 1, 1, ""};
    double h = p.y + p.h + 50 + (log_axis ? 3 : 2) * LEGEND_ROW + 10;
    svg_begin(f, RP_CHART_PHASES, h, caption, standalone);
    x_ticks(&p);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", p.x, p.y + p.h,
            p.x + p.w, p.y + p.h);
    text(f, p.x + p.w / 2, p.y + p.h + 36, "middle", NULL, p.ax.title);
    double y = p.y;
    for (size_t i = 0; i < n; i++)
        y += phase_bar(&p, r, rows[i], y);
    double ly = p.y + p.h + 62;
    for (int k = 0; k < BENCH_PHASES; k++)
        legend_box(f, LEFT + (double)k * 100, ly, phase_colours[k], bench_phase_names[k], 80);
    if (log_axis)
        text(f, LEFT, ly + LEGEND_ROW + 4, "start", NULL,
             "Log scale (the bars span more than 10x): a bar ends at its total; its colours are each phase's "
             "share of it.");
    free(rows);
    fputs("</svg>\n", f);
}

/* ---- 4: batch sizes --------------------------------------------------------------------------- */

#define MAX_BINS 24

struct bins {
    int lo[MAX_BINS], hi[MAX_BINS];
    size_t n;
};

/* The largest batch size with a sync at point p (257 for "257+"). */
static int max_batch(const struct report *r, const struct rp_point *p)
{
    int top = 0;
    for (size_t i = 0; i < p->nruns; i++) {
        json_t *h = rp_get(rp_get(r->runs[p->runs[i]].metrics, "commits_per_sync_dist"), "hist");
        const char *k;
        json_t *v;
        json_object_foreach(h, k, v) {
            int b = batch_of_key(k);
            if (b > top && json_is_number(v) && json_number_value(v) > 0)
                top = b;
        }
    }
    return top;
}

/* One bar per batch size up to 16; beyond, powers of two (3-4, 5-8, ...)
 * and 257+ for the histogram's last entry.  The same bars in every panel,
 * so that panels compare. */
static void make_bins(const struct report *r, const size_t *rows, size_t n, struct bins *b)
{
    int top = 1;
    for (size_t i = 0; i < n; i++) {
        int m = max_batch(r, rp_last_point(&r->series[rows[i]]));
        top = m > top ? m : top;
    }
    b->n = 0;
    if (top <= 16) {
        for (int v = 1; v <= top; v++, b->n++)
            b->lo[b->n] = b->hi[b->n] = v;
        return;
    }
    b->lo[0] = b->hi[0] = 1;
    b->lo[1] = b->hi[1] = 2;
    b->n = 2;
    for (int lo = 3; lo <= 256 && lo <= top; lo = b->hi[b->n - 1] + 1) {
        b->lo[b->n] = lo;
        b->hi[b->n] = (lo - 1) * 2;
        b->n++;
    }
    if (top > 256) {
        b->lo[b->n] = 257;
        b->hi[b->n++] = 1 << 30;
    }
}

static void bin_label(const struct bins *b, size_t i, char *buf, size_t len)
{
    if (b->hi[i] >= 1 << 30)
        snprintf(buf, len, "%d+", b->lo[i]);
    else if (b->lo[i] == b->hi[i])
        snprintf(buf, len, "%d", b->lo[i]);
    else
        snprintf(buf, len, "%d-%d", b->lo[i], b->hi[i]);
}

#define PANEL_W 270.0
#define PANEL_PLOT_H 114.0
#define PANEL_FOOT 60.0          /* below the plot: bar labels and the axis title */
#define PANEL_TITLE_CHARS 31     /* of 12px bold in a panel's width, less its marker */

/* A panel's title: what is fixed in it, the series' number and label (its
 * configuration, and its env when there are several); a string to free. */
static char *panel_title(const struct report *r, size_t s)
{
    return rp_printf("[%zu] %s", s + 1, r->series[s].label);
}

/* One series' panel at (x0, y0): its title in head px, then its bars. */
static void batch_panel(FILE *f, const struct report *r, size_t s, const struct bins *b, double x0, double y0,
                        double head)
{
    const struct rp_point *pt = rp_last_point(&r->series[s]);
    struct plot p = {f, x0 + 46, y0 + head + 8, PANEL_W - 60, PANEL_PLOT_H, 0, {0}, {0}};
    double total = batch_count(r, pt, 1, 1 << 30);
    char lab[160], num[32];
    axis_lin(&p.ay, 0, 100, "% of syncs");
    p.ay.step = 25;
    p.ax = (struct axis){LIN, 0, (double)b->n, 1, ""};
    y_ticks(&p);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", p.x,
            p.y, p.w, p.h);
    double bw = p.w / (double)b->n;
    for (size_t i = 0; i < b->n; i++) {
        double c = batch_count(r, pt, b->lo[i], b->hi[i]), pct = 100 * c / total;
        bin_label(b, i, lab, sizeof lab);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s commits: "
                   "%.1f%% of syncs</title></rect>\n",
                p.x + (double)i * bw + 1, py(&p, pct), bw - 2, p.y + p.h - py(&p, pct), colour(s), lab, pct);
        double lx = p.x + ((double)i + 0.5) * bw, ly = p.y + p.h + 12;
        char attrs[96];
        /* ranges ("17-32") side by side would overlap: slanted */
        snprintf(attrs, sizeof attrs, "font-size=\"10\" transform=\"rotate(-35 %.1f %.1f)\"", lx + 3, ly);
        text(f, b->n > 6 ? lx + 3 : lx, ly + 2, b->n > 6 ? "end" : "middle", b->n > 6 ? attrs : "font-size=\"10\"",
             lab);
    }
    text(f, p.x + p.w / 2, p.y + p.h + (b->n > 6 ? 46 : 30), "middle", "font-size=\"11\"", "commits per sync");
    /* the title: the series' marker, its number and label, then the
     * client count it is at and its syncs */
    char *title = panel_title(r, s), mean[32];
    marker(f, s, x0 + 14, y0 + 10);
    size_t lines = wrapped_attrs(f, x0 + 24, y0 + 14, title, PANEL_TITLE_CHARS, "font-weight=\"bold\"");
    free(title);
    double syncs, m = batch_mean(r, pt, &syncs);
    fmt_count(num, sizeof num, (long long)llround(isfinite(syncs) ? syncs : total));
    rp_fmt_num(mean, sizeof mean, m);
    snprintf(lab, sizeof lab, "%d client%s, %s syncs, mean %s", pt->clients, pt->clients == 1 ? "" : "s", num, mean);
    text(f, x0 + 24, y0 + 14 + (double)lines * LEGEND_ROW, "start", "font-size=\"11\"", lab);
    char attrs[96];
    snprintf(attrs, sizeof attrs, "font-size=\"11\" transform=\"rotate(-90 %.1f %.1f)\"", x0 + 12, p.y + p.h / 2);
    text(f, x0 + 12, p.y + p.h / 2, "middle", attrs, "% of syncs");
}

static void chart_batches(FILE *f, const struct report *r, const char *caption, int standalone)
{
    size_t *rows = rp_xrealloc(NULL, r->nseries * sizeof *rows), n = 0;
    size_t *lines = rp_xrealloc(NULL, (r->nseries ? r->nseries : 1) * sizeof *lines);
    for (size_t s = 0; s < r->nseries; s++)
        if (has_batches(r, &r->series[s])) {
            char *title = panel_title(r, s);
            lines[n] = wrapped(NULL, 0, 0, title, PANEL_TITLE_CHARS);
            free(title);
            rows[n++] = s;
        }
    struct bins b;
    make_bins(r, rows, n, &b);
    /* a row of panels has room for its longest title, so that its plots line up */
    size_t per_row = 3, grid_rows = (n + per_row - 1) / per_row;
    double *head = rp_xrealloc(NULL, (grid_rows ? grid_rows : 1) * sizeof *head), top = 10, legend_y = top + 30;
    for (size_t g = 0; g < grid_rows; g++) {
        size_t most = 1;
        for (size_t i = g * per_row; i < n && i < (g + 1) * per_row; i++)
            most = lines[i] > most ? lines[i] : most;
        head[g] = (double)(most + 1) * LEGEND_ROW;
        legend_y += head[g] + 8 + PANEL_PLOT_H + PANEL_FOOT;
    }
    svg_begin(f, RP_CHART_BATCHES, legend_y + series_legend_rows(r, rows, n, 1) * LEGEND_ROW + 10, caption, standalone);
    double y = top;
    for (size_t g = 0; g < grid_rows; g++) {
        for (size_t i = g * per_row; i < n && i < (g + 1) * per_row; i++)
            batch_panel(f, r, rows[i], &b, 20 + (double)(i % per_row) * (PANEL_W + 10), y, head[g]);
        y += head[g] + 8 + PANEL_PLOT_H + PANEL_FOOT;
    }
    series_legend(f, r, rows, n, legend_y, 1);
    free(head);
    free(lines);
    free(rows);
    fputs("</svg>\n", f);
}

/* ---- 5: timeline ---------------------------------------------------------------------------------- */

struct timeline_set {
    size_t *series;
    json_t **tl;
    size_t n;
    double tmax, tps_lo, tps_hi, p99_lo, p99_hi;
};

static void timeline_collect(const struct report *r, struct timeline_set *ts)
{
    int c = max_clients(r);
    memset(ts, 0, sizeof *ts);
    ts->series = rp_xrealloc(NULL, r->nseries * sizeof *ts->series);
    ts->tl = rp_xrealloc(NULL, r->nseries * sizeof *ts->tl);
    ts->tps_lo = ts->p99_lo = INFINITY;
    for (size_t s = 0; s < r->nseries; s++) {
        json_t *tl = timeline_of(r, rp_point_at(&r->series[s], c)), *e;
        size_t i;
        if (!tl)
            continue;
        ts->series[ts->n] = s;
        ts->tl[ts->n++] = tl;
        json_array_foreach(tl, i, e) {
            double t = rp_num(e, "t"), v = rp_num(e, "tps"), q = rp_num(e, "p99_us");
            ts->tmax = isfinite(t) ? fmax(ts->tmax, t) : ts->tmax;
            if (isfinite(v) && v > 0)
                ts->tps_lo = fmin(ts->tps_lo, v), ts->tps_hi = fmax(ts->tps_hi, v);
            if (isfinite(q) && q > 0)
                ts->p99_lo = fmin(ts->p99_lo, q), ts->p99_hi = fmax(ts->p99_hi, q);
        }
    }
}

/* Small ticks in the series' colour on the tps panel's edges: up from the
 * bottom for a segment switch in that second, down from the top for a
 * checkpoint; the k-th series one row further in, so that ticks of the
 * same second do not hide each other.  Ticks, not the series' markers,
 * so that they never read as data. */
static void timeline_marks(const struct plot *p, size_t s, size_t k, json_t *tl)
{
    size_t i;
    json_t *e;
    json_array_foreach(tl, i, e) {
        double t = rp_num(e, "t"), sw = rp_num(e, "segment_switches"), cp = rp_num(e, "checkpoints");
        if (!isfinite(t))
            continue;
        double x = px(p, t - 0.5), yb = p->y + p->h - 9.0 * (double)k, yt = p->y + 9.0 * (double)k;
        if (isfinite(sw) && sw > 0)
            fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\">"
                          "<title>%.0f segment switches in second %.0f</title></line>\n",
                    x, yb, x, yb - 8, colour(s), sw, t);
        if (isfinite(cp) && cp > 0)
            fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\">"
                          "<title>%.0f checkpoints in second %.0f</title></line>\n",
                    x, yt, x, yt + 8, colour(s), cp, t);
    }
}

static void timeline_line(const struct plot *p, size_t s, json_t *tl, const char *field)
{
    size_t n = json_array_size(tl), m = 0, i;
    double *xs = rp_xrealloc(NULL, n * sizeof *xs), *ys = rp_xrealloc(NULL, n * sizeof *ys);
    json_t *e;
    json_array_foreach(tl, i, e) {
        double t = rp_num(e, "t"), v = rp_num(e, field);
        if (!isfinite(t) || !isfinite(v) || (p->ay.scale != LIN && v <= 0))
            continue;
        xs[m] = px(p, t - 0.5);
        ys[m++] = py(p, v);
    }
    polyline(p->f, s, xs, ys, m);
    for (i = 0; i < m; i++)
        marker(p->f, s, xs[i], ys[i]);
    free(xs);
    free(ys);
}

static void chart_timeline(FILE *f, const struct report *r, const char *caption, int standalone)
{
    struct timeline_set ts;
    timeline_collect(r, &ts);
    /* each panel titled with what is fixed in it: the client count */
    struct plot up = {f, LEFT, 40, WIDTH - LEFT - 30, 220, 0, {0}, {0}};
    axis_lin(&up.ax, 0, fmax(ts.tmax, 1), "seconds into the measured phase");
    /* headroom above the highest second: the checkpoint ticks hang there */
    tps_axis(&up.ay, isfinite(ts.tps_lo) ? ts.tps_lo : 1, fmax(ts.tps_hi * 1.12, 1));
    struct plot down = up;
    down.y = up.y + up.h + 76;
    down.h = 160;
    axis_log10(&down.ay, isfinite(ts.p99_lo) ? ts.p99_lo : 1, fmax(ts.p99_hi, 10), "p99 latency (µs, log scale)");
    double ly = down.y + down.h + 62, h = ly + (series_legend_rows(r, ts.series, ts.n, 0) + 2) * LEGEND_ROW + 10;
    svg_begin(f, RP_CHART_TIMELINE, h, caption, standalone);
    int c = max_clients(r);
    char title[160];
    snprintf(title, sizeof title, "Transactions per second, each second, at %d client%s", c, c == 1 ? "" : "s");
    text(f, up.x, up.y - 12, "start", "font-weight=\"bold\"", title);
    snprintf(title, sizeof title, "p99 latency, each second, at %d client%s", c, c == 1 ? "" : "s");
    text(f, down.x, down.y - 12, "start", "font-weight=\"bold\"", title);
    draw_axes(&up);
    draw_axes(&down);
    for (size_t i = 0; i < ts.n; i++) {
        timeline_line(&up, ts.series[i], ts.tl[i], "tps");
        timeline_marks(&up, ts.series[i], i, ts.tl[i]);
        timeline_line(&down, ts.series[i], ts.tl[i], "p99_us");
    }
    double y = series_legend(f, r, ts.series, ts.n, ly, 0);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-width=\"3\"/>\n",
            LEFT + 12, y, LEFT + 12, y - 8);
    text(f, LEFT + 32, y, "start", NULL, "tick up from the upper panel's bottom edge: segment switches in that second");
    y += LEGEND_ROW;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-width=\"3\"/>\n",
            LEFT + 12, y - 10, LEFT + 12, y - 2);
    text(f, LEFT + 32, y, "start", NULL, "tick down from its top edge: checkpoints in that second");
    free(ts.series);
    free(ts.tl);
    fputs("</svg>\n", f);
}

/* ---- 6: durability under crashes ------------------------------------------------------------- */

/* How a combination reads in the chart: a colour, the verdict's short
 * word, and the durability table's words for it. */
struct crash_look {
    const char *fill, *word, *verdict;
    int checked;                  /* a crash ran: the bar is a count */
};

/* The table's verdict, except that a combination without a single crash
 * (and without a failure) checked nothing: not checked, never "none
 * lost". */
static struct crash_look crash_look(const struct rp_crash *c)
{
    const char *cls, *v = rp_crash_verdict(c, &cls);
    if (c->na)
        return (struct crash_look){"#bab0ac", "n/a", v, 0};
    if (!c->failed && c->crashes == 0)
        return (struct crash_look){"#bab0ac", "not checked: no crash ran", "not checked: no crash ran", 0};
    if (strcmp(cls, "bad") == 0)
        return (struct crash_look){"#e15759", "FAILED", v, 1};
    if (strcmp(cls, "warn") == 0)
        return (struct crash_look){"#e8a33d", "as promised", v, 1};
    return (struct crash_look){"#59a14f", "ok", v, 1};
}

/* The knobs of a crash row a label names, as the label words them, when
 * two rows give them different values (engine, workload, sync, mode and
 * model are always named; a knob a mode does not have is null there). */
static const struct {
    const char *key, *name;
} crash_varying[] = {{"sync_method", "method"}, {"segments", "segments"}, {"segment_init", "init"},
                     {"prealloc", "prealloc"}, {"elr", "elr"}, {"clients", "clients"},
                     {"txns_per_client", "txns per client"}};

static int crash_field_varies(const struct report *r, const char *key)
{
    json_t *first = NULL;
    for (size_t i = 0; i < r->ncrashes; i++) {
        json_t *v = rp_get(r->crashes[i].row, key);
        if (!v || json_is_null(v))
            continue;
        if (first && !json_equal(v, first))
            return 1;
        first = first ? first : v;
    }
    return 0;
}


/* "commitlab kv --sync none, sim crashes, model torn, lying device" (a
 * string to free). */
static char *crash_label(const struct report *r, size_t i)
{
    json_t *row = r->crashes[i].row;
    char *l = rp_printf("%s %s --sync %s, %s crashes, model %s", rp_str(row, "engine", "?"),
                        rp_str(row, "workload", "?"), rp_str(row, "sync", "?"), rp_str(row, "mode", "?"),
                        rp_str(row, "model", "?"));
    for (size_t k = 0; k < sizeof crash_varying / sizeof *crash_varying; k++) {
        json_t *v = rp_get(row, crash_varying[k].key);
        if (!v || json_is_null(v) || !crash_field_varies(r, crash_varying[k].key))
            continue;
        char *val = json_is_string(v) ? rp_strdup(json_string_value(v))
                    : json_is_boolean(v) ? rp_strdup(json_is_true(v) ? "on" : "off")
                    : json_is_integer(v) ? rp_printf("%lld", (long long)json_integer_value(v))
                                         : rp_strdup("?");
        char *next = rp_printf("%s, %s %s", l, crash_varying[k].name, val);
        free(val);
        free(l);
        l = next;
    }
    if (json_is_true(rp_get(row, "lying_device"))) {
        char *next = rp_printf("%s, lying device", l);
        free(l);
        l = next;
    }
    return l;
}

#define CRASH_BAR_H 16.0

static void chart_durability(FILE *f, const struct report *r, const char *caption, int standalone)
{
    double hi = 0, rows_h = 0;
    size_t label_chars = chars_in(WIDTH - LEFT - 20);
    for (size_t i = 0; i < r->ncrashes; i++) {
        if (crash_look(&r->crashes[i]).checked)
            hi = fmax(hi, (double)r->crashes[i].lost);
        char *l = crash_label(r, i);
        rows_h += (double)wrapped(NULL, 0, 0, l, label_chars) * LEGEND_ROW + CRASH_BAR_H + 10;
        free(l);
    }
    /* room on the right for the count and the verdict after the longest bar */
    struct plot p = {f, LEFT, 20, WIDTH - LEFT - 260, rows_h + 6, 0, {0}, {0}};
    axis_lin(&p.ax, 0, fmax(hi, 1), "acknowledged commits lost, all crashes of a combination added up");
    if (p.ax.step < 1) { /* counts: whole ticks */
        p.ax.step = 1;
        p.ax.hi = ceil(p.ax.hi);
    }
    p.ay = (struct axis){LIN, 0, 1, 1, ""};
    double ly = p.y + p.h + 62, h = ly + 2 * LEGEND_ROW + 10;
    svg_begin(f, RP_CHART_DURABILITY, h, caption, standalone);
    x_ticks(&p);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", p.x, p.y, p.x,
            p.y + p.h);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", p.x, p.y + p.h,
            p.x + p.w, p.y + p.h);
    text(f, p.x + p.w / 2, p.y + p.h + 36, "middle", NULL, p.ax.title);
    double y = p.y;
    for (size_t i = 0; i < r->ncrashes; i++) {
        const struct rp_crash *c = &r->crashes[i];
        struct crash_look look = crash_look(c);
        char *l = crash_label(r, i), lost[32], crashes[32], lab[128];
        double top = y + (double)wrapped(f, p.x + 4, y + 12, l, label_chars) * LEGEND_ROW;
        free(l);
        fmt_count(lost, sizeof lost, c->lost);
        fmt_count(crashes, sizeof crashes, c->crashes);
        /* a count is at least a sliver, so that none lost is seen as a
         * bar at zero; not checked and n/a are an outline, no bar */
        double w = look.checked ? fmax(px(&p, (double)c->lost) - p.x, 3) : 10;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" ", p.x, top - 4, w, CRASH_BAR_H);
        if (look.checked) {
            fprintf(f, "fill=\"%s\"><title>%s acknowledged commit%s lost in %s crash%s (worst crash %lld): ", look.fill,
                    lost, c->lost == 1 ? "" : "s", crashes, c->crashes == 1 ? "" : "es", c->worst);
            snprintf(lab, sizeof lab, "%s lost in %s crash%s: %s, %s", c->lost ? lost : "none", crashes,
                     c->crashes == 1 ? "" : "es", c->durable ? "durable" : "not durable", look.word);
        } else {
            fprintf(f, "fill=\"#ffffff\" stroke=\"%s\" stroke-dasharray=\"3 2\"><title>", look.fill);
            snprintf(lab, sizeof lab, "%s", look.word);
        }
        rp_esc(f, look.verdict);
        if (c->na) {
            fputs(": ", f);
            rp_esc(f, rp_str(c->row, "reason", "no reason given"));
        }
        fputs("</title></rect>\n", f);
        text(f, p.x + w + 6, top + 8, "start", look.checked ? NULL : "fill=\"#555\"", lab);
        y = top + CRASH_BAR_H + 10;
    }
    static const struct {
        const char *fill, *label;
    } key[] = {{"#59a14f", "ok: 0 lost"}, {"#e8a33d", "lost, as a policy without durability may"},
               {"#e15759", "FAILED"}, {"#bab0ac", "not checked (no crash ran) or n/a"}};
    double kx = LEFT;
    for (size_t k = 0; k < sizeof key / sizeof *key; k++) {
        double w = 18 + 6.8 * (double)strlen(key[k].label);
        if (kx > LEFT && kx + w > WIDTH - 10) { /* the second row */
            kx = LEFT;
            ly += LEGEND_ROW;
        }
        legend_box(f, kx, ly, key[k].fill, key[k].label, WIDTH);
        kx += w + 24;
    }
    fputs("</svg>\n", f);
}

void rp_chart_svg(FILE *f, const struct report *r, enum rp_chart c, int standalone)
{
    char *caption = rp_chart_caption(r, c);
    switch (c) {
    case RP_CHART_TPS: chart_clients(f, r, 0, caption, standalone); break;
    case RP_CHART_P99: chart_clients(f, r, 1, caption, standalone); break;
    case RP_CHART_PCT: chart_percentiles(f, r, caption, standalone); break;
    case RP_CHART_PHASES: chart_phases(f, r, caption, standalone); break;
    case RP_CHART_BATCHES: chart_batches(f, r, caption, standalone); break;
    case RP_CHART_TIMELINE: chart_timeline(f, r, caption, standalone); break;
    case RP_CHART_DURABILITY: chart_durability(f, r, caption, standalone); break;
    case RP_NCHARTS: break;
    }
    free(caption);
}
