/*
 * check_knobs.c -- every knob of the table (bench_knobs.h) is recorded in
 * what a run writes, as the real binary writes it:
 *   - bench: each knob in turn set to a value other than its default
 *     (and other than crash's own default) appears with that value in the
 *     JSON line's config;
 *   - crash: each knob crash takes (the lists it sweeps and every knob an
 *     engine maps) the same, in the crash line's config;
 *   - the report's command line for a bench series and for a crash row,
 *     run again, writes a config equal to the row's (all but the
 *     directory): nothing that shaped a run is left out of its command.
 */
#include <check.h>
#include <jansson.h>
#include <sys/stat.h>

#include "bench.h"
#include "bench_config.h"
#include "bench_run_util.h"

static char *scratch;

static void setup(void)
{
    scratch = tu_mkdtemp("bench-knobs");
    chmod(scratch, 0755); /* as root, --engine postgres's server runs as postgres, which must enter it */
}

static void teardown(void)
{
    tu_rmdir(scratch);
    free(scratch);
}

/* Whether v is knob k's default for bench and for crash. */
static int is_default(enum bench_knob k, const char *v)
{
    const struct bench_knob_def *d = bench_knob(k);
    struct bench_config a, b;
    char x[200], y[200];
    bench_config_defaults(&a);
    bench_config_defaults(&b);
    bench_knob_set(&b, k, v, 1);
    bench_knob_format(&a, k, x, sizeof x);
    bench_knob_format(&b, k, y, sizeof y);
    if (!strcmp(x, y))
        return 1;
    for (size_t i = 0; i < bench_crash_ndefaults; i++)
        if (bench_crash_defaults[i].knob == k) {
            bench_knob_set(&a, k, bench_crash_defaults[i].value, 0);
            bench_knob_format(&a, k, x, sizeof x);
            if (!strcmp(x, y))
                return 1;
        }
    (void)d;
    return 0;
}

/* A value of knob k that neither bench nor crash takes by default, as the
 * flag takes it; "" for a flag without a value (--reuse). */
static void other_value(enum bench_knob k, char *buf, size_t len)
{
    const struct bench_knob_def *d = bench_knob(k);
    char accepted[400];
    buf[0] = 0;
    switch (d->type) {
    case KT_TRUE:
    case KT_FALSE:
        return;
    case KT_PATH: snprintf(buf, len, "%s", k == K_PG_SET ? "work_mem=8MB" : "elsewhere"); return;
    case KT_SEED:
        snprintf(buf, len, "42");
        return;
    case KT_COUNT:
        snprintf(buf, len, "7");
        return;
    case KT_RATIO:
        snprintf(buf, len, "0.5");
        return;
    case KT_SECS:
        snprintf(buf, len, "0.25");
        return;
    case KT_NUM:
        snprintf(buf, len, "%g", d->min + (d->max - d->min) / 2);
        return;
    case KT_SET: {
        const char *c = d->choices;
        snprintf(buf, len, "%.*s", (int)strcspn(c, ","), c);
        return;
    }
    case KT_WORD:
    case KT_ENUM:
    case KT_INDEX:
    case KT_ONOFF: {
        const char *words = d->type == KT_ONOFF ? "on,off" : d->choices;
        for (const char *p = words; *p;) {
            size_t n = strcspn(p, ",");
            snprintf(buf, len, "%.*s", (int)n, p);
            if (!is_default(k, buf) && strcmp(buf, "raw") && strcmp(buf, "uring"))
                return; /* not the floor engine, nor a policy the kernel may refuse */
            p += n + (p[n] == ',');
        }
        ck_abort_msg("%s: no value other than its default", d->flag);
        return;
    }
    case KT_UINT:
    case KT_SIZE: {
        /* from the bottom of the range up, in steps a segment size takes */
        uint64_t lo = (uint64_t)d->min + ((d->flags & KF_OPEN_MIN) ? 1 : 0);
        uint64_t step = d->type == KT_SIZE ? 4096 : 1;
        uint64_t v = d->type == KT_SIZE ? (lo + step - 1) / step * step : lo;
        if (v == 0)
            v = step; /* 0 often means "off" or "the whole": a real value reads better */
        for (int i = 0; i < 64; i++, v = v < 64 ? v + step : v * 2) {
            snprintf(buf, len, "%llu", (unsigned long long)v);
            if (bench_knob_check(k, buf) == 0 && !is_default(k, buf))
                return;
        }
        bench_knob_accepted(k, accepted, sizeof accepted);
        ck_abort_msg("%s: no value other than its default in %s", d->flag, accepted);
    }
    }
}

/* What config[key] must be after setting k to v on engine and workload. */
static json_t *expected(enum bench_knob k, const char *v, const char *engine, const char *workload)
{
    struct bench_config c;
    bench_config_defaults(&c);
    bench_knob_set(&c, K_ENGINE, engine, 1);
    bench_knob_set(&c, K_WORKLOAD, workload, 1);
    if (k == K_ZIPF_THETA)
        bench_knob_set(&c, K_DIST, "zipf", 1); /* recorded only with it */
    const struct bench_knob_def *d = bench_knob(k);
    bench_knob_set(&c, k, d->type == KT_TRUE ? "on" : d->type == KT_FALSE ? "off" : v, 1);
    json_t *all = bench_config_json(&c);
    json_t *one = json_incref(json_object_get(all, d->key));
    json_decref(all);
    return one;
}

/* The engine a knob is tried on: its owner's, else commitlab. */
static const char *engine_for(enum bench_knob k, const char *v)
{
    if (k == K_ENGINE)
        return v;
    return bench_knob(k)->owner ? bench_knob(k)->owner : "commitlab";
}

static int built(const char *engine)
{
    const struct bench_driver *d = bench_driver_find(engine);
    return d && d->built;
}

struct argv_buf {
    const char *v[64];
    int n;
};

static void add(struct argv_buf *a, const char *s)
{
    ck_assert_int_lt(a->n, 62);
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

/* The one JSON line of file, or fails naming what ran. */
static json_t *only_line(const char *file, const char *what, const struct cl_run *r)
{
    json_t *rows = load_jsonl(scratch, file);
    ck_assert_msg(json_array_size(rows) >= 1, "%s: no JSON line (exit %d): %s", what, r->status, r->err);
    json_t *o = json_incref(json_array_get(rows, 0));
    json_decref(rows);
    return o;
}

static void check_recorded(json_t *line, enum bench_knob k, const char *v, const char *engine, const char *workload,
                           const char *cmd)
{
    const char *key = bench_knob(k)->key;
    json_t *want = expected(k, v, engine, workload);
    char path[96];
    snprintf(path, sizeof path, "config.%s", key);
    json_t *got = at(line, path);
    char *ws = json_dumps(want, JSON_ENCODE_ANY), *gs = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL;
    ck_assert_msg(got && json_equal(got, want), "%s %s %s: config.%s is %s, want %s", cmd, bench_knob(k)->flag, v,
                  key, gs ? gs : "missing", ws);
    free(ws);
    free(gs);
    json_decref(want);
}

START_TEST(test_bench_records_every_knob)
{
    int tried = 0;
    for (int i = 0; i < bench_knob_count(); i++) {
        enum bench_knob k = (enum bench_knob)i;
        const struct bench_knob_def *d = bench_knob(k);
        char v[200], out[64], dir[64];
        struct argv_buf a = {0};
        other_value(k, v, sizeof v);
        const char *engine = engine_for(k, v);
        const char *workload = k == K_SCALE ? "tpcb" : k == K_WORKLOAD ? v : "kv";
        if (!built(engine))
            continue;
        if (k == K_PG_BINDIR || k == K_PG_USER)
            continue; /* this machine's directory and account: postgres_test.sh */
        snprintf(out, sizeof out, "k%d.jsonl", i);
        snprintf(dir, sizeof dir, "d%d", i);
        add(&a, "bench");
        add(&a, "--quiet");
        add(&a, "--out");
        add(&a, out);
        if (k != K_DIR) {
            add(&a, "--dir");
            add(&a, dir);
        }
        if (k != K_ENGINE) {
            add(&a, "--engine");
            add(&a, engine);
        }
        if (k != K_WORKLOAD && !strcmp(workload, "tpcb")) {
            add(&a, "--workload");
            add(&a, "tpcb");
        }
        if (k == K_ZIPF_THETA) {
            add(&a, "--dist");
            add(&a, "zipf");
        }
        if (k != K_DURATION && k != K_TXNS) {
            add(&a, "--txns");
            add(&a, "20");
        }
        if (k != K_WARMUP) {
            add(&a, "--warmup");
            add(&a, "0");
        }
        if (k != K_KEYS && k != K_PRELOAD && !strcmp(workload, "kv")) {
            add(&a, "--keys");
            add(&a, "200");
        }
        add(&a, d->flag);
        if (d->type != KT_TRUE && d->type != KT_FALSE)
            add(&a, v);
        struct cl_run r = run_cl(scratch, a.v);
        json_t *line = only_line(out, d->flag, &r);
        check_recorded(line, k, v, engine, workload, "bench");
        json_decref(line);
        run_free(&r);
        tried++;
    }
    ck_assert_int_ge(tried, bench_knob_count() - 3); /* all but the engines not built here */
}
END_TEST

/* The knobs crash takes: the lists it sweeps, and every knob an engine maps. */
static int crash_takes(enum bench_knob k)
{
    return (bench_knob(k)->flags & KF_ENGINE) || k == K_ENGINE || k == K_WORKLOAD || k == K_CLIENTS || k == K_DIR;
}

START_TEST(test_crash_records_every_knob)
{
    int tried = 0;
    for (int i = 0; i < bench_knob_count(); i++) {
        enum bench_knob k = (enum bench_knob)i;
        const struct bench_knob_def *d = bench_knob(k);
        char v[200], out[64], dir[64];
        struct argv_buf a = {0};
        if (!crash_takes(k))
            continue;
        other_value(k, v, sizeof v);
        if (k == K_SYNC)
            snprintf(v, sizeof v, "group"); /* crash runs the durable policies */
        const char *engine = engine_for(k, v);
        const char *workload = k == K_WORKLOAD ? v : "kv";
        if (!built(engine))
            continue;
        int sim = !strcmp(engine, "commitlab");
        snprintf(out, sizeof out, "c%d.jsonl", i);
        snprintf(dir, sizeof dir, "e%d", i);
        add(&a, "crash");
        add(&a, "--quiet");
        add(&a, "--iterations");
        add(&a, "1");
        add(&a, "--txns");
        add(&a, "3");
        add(&a, "--out");
        add(&a, out);
        add(&a, "--mode");
        add(&a, sim ? "sim" : "kill");
        if (sim) {
            add(&a, "--model");
            add(&a, "drop");
        }
        if (k != K_DIR) {
            add(&a, "--dir");
            add(&a, dir);
        }
        if (k != K_ENGINE) {
            add(&a, "--engine");
            add(&a, engine);
        }
        if (k != K_SYNC) {
            add(&a, "--sync");
            add(&a, "commit");
        }
        if (k != K_CLIENTS) {
            add(&a, "--clients");
            add(&a, "1");
        }
        add(&a, d->flag);
        if (d->type != KT_TRUE && d->type != KT_FALSE)
            add(&a, v);
        struct cl_run r = run_cl(scratch, a.v);
        json_t *line = only_line(out, d->flag, &r);
        if (k == K_DIR) /* the campaign runs in DIR/crash */
            snprintf(v, sizeof v, "elsewhere/crash");
        check_recorded(line, k, v, engine, workload, "crash");
        json_decref(line);
        run_free(&r);
        tried++;
    }
    ck_assert_int_ge(tried, 20);
}
END_TEST

/* ---- the report's command lines, run again ---------------------------------------- */

/* The command lines of the report's Markdown that start with prefix,
 * each split into words (single quotes removed), into cmds. */
static size_t report_commands(const char *md, const char *prefix, char cmds[][40][200], size_t max)
{
    char path[4096], line[8192];
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", scratch, md);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    while (n < max && fgets(line, sizeof line, f)) {
        char *p = strstr(line, prefix);
        if (!p)
            continue;
        p[strcspn(p, "`\n<")] = 0;
        size_t w = 0;
        for (char *save = NULL, *t = strtok_r(p, " ", &save); t && w < 38; t = strtok_r(NULL, " ", &save)) {
            size_t o = 0;
            for (const char *c = t; *c && o < 199; c++)
                if (*c != '\'')
                    cmds[n][w][o++] = *c;
            cmds[n][w][o] = 0;
            w++;
        }
        cmds[n][w][0] = 0;
        n++;
    }
    fclose(f);
    return n;
}

/* Runs the words of cmd (from its second, the command's name) with
 * --out file --dir dir --quiet; the first JSON line of file. */
static json_t *rerun(char words[40][200], const char *file, const char *dir)
{
    struct argv_buf a = {0};
    int has_dir = 0;
    for (int w = 1; w < 40 && words[w][0]; w++) {
        add(&a, words[w]);
        if (!strcmp(words[w], "--dir") && w + 1 < 40 && words[w + 1][0]) {
            add(&a, dir); /* the command's own --dir, moved: a flag is given once */
            w++;
            has_dir = 1;
        }
    }
    add(&a, "--out");
    add(&a, file);
    if (!has_dir) {
        add(&a, "--dir");
        add(&a, dir);
    }
    add(&a, "--quiet");
    struct cl_run r = run_cl(scratch, a.v);
    json_t *line = only_line(file, words[1], &r);
    run_free(&r);
    return line;
}

static void same_config(json_t *a, json_t *b, const char *what)
{
    json_t *ca = json_deep_copy(json_object_get(a, "config")), *cb = json_deep_copy(json_object_get(b, "config"));
    json_object_del(ca, "dir");
    json_object_del(cb, "dir");
    char *sa = json_dumps(ca, JSON_SORT_KEYS), *sb = json_dumps(cb, JSON_SORT_KEYS);
    ck_assert_msg(json_equal(ca, cb), "%s: the row's config\n%s\nand its command's\n%s", what, sa, sb);
    free(sa);
    free(sb);
    json_decref(ca);
    json_decref(cb);
}

START_TEST(test_report_commands_round_trip)
{
    static char cmds[8][40][200];
    const char *bench[] = {"bench", "--quiet", "--out", "b.jsonl", "--dir", "b", "--txns", "30", "--warmup", "0",
                           "--keys", "300", "--engine", "commitlab", "--sync", "group", "--commit-delay", "20",
                           "--segment-size", "128K", "--value-size", "64", "--elr", "off", NULL};
    const char *crash[] = {"crash", "--quiet", "--out", "c.jsonl", "--dir", "c", "--iterations", "2", "--txns", "3",
                           "--clients", "2", "--sync", "commit", "--model", "drop", "--pipeline", "4",
                           "--checkpoint-bytes", "256K", "--segments", "recycle", NULL};
    struct cl_run r = run_cl(scratch, bench);
    ck_assert_msg(r.status == 0, "bench: exit %d: %s", r.status, r.err);
    run_free(&r);
    r = run_cl(scratch, crash);
    ck_assert_msg(r.status == 0, "crash: exit %d: %s", r.status, r.err);
    run_free(&r);
    const char *report[] = {"report", "b.jsonl", "c.jsonl", "-o", "r.md", NULL};
    r = run_cl(scratch, report);
    ck_assert_msg(r.status == 0, "report: exit %d: %s", r.status, r.err);
    run_free(&r);

    json_t *b = only_line("b.jsonl", "bench", &r), *c = only_line("c.jsonl", "crash", &r);
    ck_assert_uint_eq(report_commands("r.md", "commitlab bench ", cmds, 8), 1);
    json_t *b2 = rerun(cmds[0], "b2.jsonl", "b2");
    same_config(b, b2, "bench");
    ck_assert_uint_eq(report_commands("r.md", "commitlab crash ", cmds, 8), 1);
    json_t *c2 = rerun(cmds[0], "c2.jsonl", "c2");
    same_config(c, c2, "crash");
    json_decref(b);
    json_decref(b2);
    json_decref(c);
    json_decref(c2);
}
END_TEST

int main(int argc, char **argv)
{
    if (!find_binary(argc, argv))
        return 2;
    Suite *s = suite_create("knobs");
    TCase *tc = tcase_create("knobs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_bench_records_every_knob);
    tcase_add_test(tc, test_crash_records_every_knob);
    tcase_add_test(tc, test_report_commands_round_trip);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
