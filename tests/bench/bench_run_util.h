/*
 * bench_run_util.h -- runs the commitlab binary for the bench CLI suites:
 * the path comes from argv[1] (the add_test line) or $CL_COMMITLAB_BIN;
 * stdout and stderr are captured into strings; the JSON lines it writes
 * are read back whole.
 */
#ifndef CL_TESTS_BENCH_RUN_UTIL_H
#define CL_TESTS_BENCH_RUN_UTIL_H

#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static const char *cl_bin;

struct cl_run {
    int status;      /* exit code, or -1 when killed */
    char *out, *err; /* captured, NUL-terminated */
};

static char *slurp(const char *path)
{
    uint8_t *buf;
    size_t len;
    if (tu_read_file(path, &buf, &len))
        return strdup("");
    char *s = malloc(len + 1);
    memcpy(s, buf, len);
    s[len] = 0;
    free(buf);
    return s;
}

/* Runs cl_bin with args (NULL-terminated, without argv[0]) in cwd. */
static struct cl_run run_cl(const char *cwd, const char *const *args)
{
    struct cl_run r = {0};
    char out[4096], err[4096];
    snprintf(out, sizeof out, "%s/stdout.txt", cwd);
    snprintf(err, sizeof err, "%s/stderr.txt", cwd);
    pid_t pid = fork();
    if (pid == 0) {
        const char *argv[64];
        size_t n = 0;
        argv[n++] = cl_bin;
        for (size_t i = 0; args[i] && n < 63; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        if (chdir(cwd) || !freopen(out, "w", stdout) || !freopen(err, "w", stderr))
            _exit(127);
        execv(cl_bin, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

static void run_free(struct cl_run *r)
{
    free(r->out);
    free(r->err);
}

/* The JSON lines of dir/name, each parsed (a line that does not parse
 * fails the test, naming it), in one array; the caller json_decrefs it. */
static json_t *load_jsonl(const char *dir, const char *name)
{
    char path[4096], line[65536];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    json_t *rows = json_array();
    while (fgets(line, sizeof line, f)) {
        json_error_t e;
        json_t *o = json_loads(line, 0, &e);
        ck_assert_msg(o != NULL, "%s line %zu does not parse: %s", path, json_array_size(rows) + 1, e.text);
        json_array_append_new(rows, o);
    }
    fclose(f);
    return rows;
}

/* o's member at a dotted path ("metrics.latency_us.p50"), or NULL. */
static json_t *at(json_t *o, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = o;
    for (char *save = NULL, *t = strtok_r(buf, ".", &save); t && cur; t = strtok_r(NULL, ".", &save))
        cur = json_is_object(cur) ? json_object_get(cur, t) : NULL;
    return cur;
}

/* Sets cl_bin from argv[1] or $CL_COMMITLAB_BIN; 0 when neither. */
static int find_binary(int argc, char **argv)
{
    static char abs_path[4096];
    cl_bin = argc > 1 ? argv[1] : getenv("CL_COMMITLAB_BIN");
    if (cl_bin && realpath(cl_bin, abs_path))
        cl_bin = abs_path;
    if (!cl_bin || access(cl_bin, X_OK)) {
        fprintf(stderr, "usage: %s PATH-TO-commitlab (or set CL_COMMITLAB_BIN)\n", argv[0]);
        return 0;
    }
    return 1;
}

#endif
