/*
 * bench_cmd.c -- `commitlab bench`: the options parsed and expanded into
 * the cross product of runs (knobs/bench_config.c, from the table of
 * knobs, which also makes --help), run one after another
 * (harness/bench_sweep.c) with a table (or CSV) on stdout, JSON lines
 * appended to --out, and a progress line on stderr.  The runner is
 * harness/bench_run.c; the engines are harness/drivers/driver_*.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_dirs.h"
#include "bench_env.h"
#include "cli.h"
#include "drivers/driver.h"
#include "ut_scratch.h"

/* The run directory of each engine in the sweep (D/ENGINE.db), checked
 * before the first run. */
static int bench_check_run_dirs(struct bench_dirs *d, const struct bench_cli *c)
{
    const char **paths = calloc(c->n ? c->n : 1, sizeof *paths);
    size_t np = 0;
    int rc = 0;
    if (!paths)
        return 1;
    for (size_t i = 0; i < c->n; i++) {
        char *p = NULL;
        if (asprintf(&p, "%s/%s.db", c->cfgs[i].dir, c->cfgs[i].engine) < 0) {
            rc = 1;
            break;
        }
        size_t k;
        for (k = 0; k < np && strcmp(paths[k], p) != 0; k++)
            ;
        if (k < np)
            free(p);
        else
            paths[np++] = p;
    }
    if (!rc)
        rc = bench_dirs_check(d, paths, np, c->base.reuse);
    for (size_t k = 0; k < np; k++)
        free((char *)paths[k]);
    free(paths);
    return rc;
}

/* Before the first run: each plugin of the sweep opens a fresh store once,
 * under the first configuration of the sweep it can run, in a child
 * process as its runs do, in D/NAME.open (made and removed again).  A
 * store that cannot open is one line naming it and its message, and exit
 * 2, with nothing run; an open that fails only under other knobs is still
 * that run's error row. */
static int bench_try_plugins(struct bench_dirs *dirs, const struct bench_cli *c)
{
    struct bench_plugin_trial trial = {0};
    for (size_t i = 0; i < c->n; i++) {
        const struct bench_config *cfg = &c->cfgs[i];
        const struct bench_driver *d = bench_driver_find(cfg->engine);
        char why[BENCH_ERRLEN + 400], path[4400];
        const char *pp = path;
        if (!bench_plugin_untried(&trial, d) || bench_engine_check(d, cfg, why, sizeof why))
            continue; /* not a plugin, tried, or n/a here: its next configuration */
        snprintf(path, sizeof path, "%.4000s/%.150s.open", cfg->dir, cfg->engine);
        int rc = bench_dirs_check(dirs, &pp, 1, 0);
        if (rc || (rc = bench_plugin_try_first(&trial, d, cfg, path, "bench")) != 0)
            return rc;
    }
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    struct bench_cli c;

    bench_cli_parse("bench", argc, argv, 0, &c);
    if (!c.help)
        bench_cli_load_plugins("bench", &c);
    c.repeat = c.repeat ? c.repeat : 1;
    if (!c.help && !c.list_engines)
        bench_warn_unread("bench", c.cfgs, c.n, stderr);
    if (c.help) {
        bench_cli_usage(stdout);
        bench_cli_free(&c);
        return 0;
    }
    if (c.list_engines) {
        /* every plugin of --plugin-dir, and those that cannot be loaded named */
        char *bad = NULL;
        size_t badlen = 0;
        FILE *warn = c.plugin_dir ? open_memstream(&bad, &badlen) : NULL;
        if (warn) {
            bench_plugin_load_dir("bench", c.plugin_dir, warn);
            fclose(warn);
        }
        bench_list_engines(stdout);
        if (bad && *bad)
            printf("not loaded from --plugin-dir %s:\n%s", c.plugin_dir, bad);
        free(bad);
        bench_cli_free(&c);
        return 0;
    }
    /* Before any work: --out writable, --dir claimed, and nothing of the
     * user's where a run directory would go. */
    int rc, out_created = 0;
    if (c.out_path && (rc = ut_output_check(c.out_path)) != 0) {
        fprintf(stderr, "commitlab bench: --out %s: %s\n", c.out_path, strerror(-rc));
        bench_cli_free(&c);
        return 2;
    }
    struct bench_dirs dirs;
    if ((rc = bench_dirs_claim(&dirs, "bench", "--dir", c.base.dir)) != 0 || (rc = bench_check_run_dirs(&dirs, &c)) != 0 ||
        (rc = bench_try_plugins(&dirs, &c)) != 0) {
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return rc;
    }
    if (c.out_path && !(c.so.jsonl = ut_output_open(c.out_path, &out_created))) {
        fprintf(stderr, "commitlab bench: --out %s: %s\n", c.out_path, strerror(errno));
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return 1;
    }
    bench_stop_on_signals();
    /* after the handlers: a signal during its trial server lets it stop the server */
    if ((rc = bench_postgres_preflight("bench", c.cfgs, c.n)) != 0) {
        if (c.so.jsonl)
            ut_output_close(c.so.jsonl, c.out_path, out_created);
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return rc;
    }
    bench_warn_volatile(c.base.dir);
    c.so.repeat = c.repeat;
    int failed = bench_sweep(c.cfgs, c.n, &c.so);
    if (failed < 0) {
        fprintf(stderr, "commitlab bench: out of memory\n");
        if (c.so.jsonl)
            ut_output_close(c.so.jsonl, c.out_path, out_created);
        bench_dirs_release(&dirs);
        bench_cli_free(&c);
        return 1;
    }
    if (c.so.jsonl && (rc = ut_output_close(c.so.jsonl, c.out_path, out_created)) != 0) {
        fprintf(stderr, "commitlab bench: --out %s: %s\n", c.out_path, strerror(-rc));
        failed++;
    }
    bench_dirs_release(&dirs); /* D itself only when this run made it and left it empty */
    int sig = bench_stop_signal();
    if (sig) /* after the cleanup: what it was doing, and how far it got */
        bench_stop_report("bench", NULL);
    bench_cli_free(&c);
    return sig ? 128 + sig : bench_interrupted() ? 130 : failed ? 1 : 0;
}
