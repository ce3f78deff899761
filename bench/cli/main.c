/*
 * main.c -- the commitlab command: the table of its subcommands, from
 * which both the usage text and the dispatch come, so a command added to
 * the table is listed, accepted and named in the unknown-command message
 * at once.  This is the top of bench/: it calls every command's entry
 * point, and nothing calls it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commitlab.h"
#include "crash.h"
#include "inspect.h"
#include "matrix.h"
#include "probe.h"
#include "report.h"
#include "ut_args.h"
#include "ut_build.h"

struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
    const char *synopsis;              /* its arguments, after the name */
    const char *summary;               /* lines separated by '\n' */
};

static const struct cli_command commands[] = {
    {"tour", cmd_tour, NULL, "a short guided comparison of commit paths (the default job)"},
    {"inspect", cmd_inspect, "DIR [--verify] [--records]",
     "print a database's meta, checkpoint and log; --verify checks\n"
     "every page and record checksum; --records lists every log record"},
    {"bench", cmd_bench, "[options]",
     "run a transaction workload on commitlab, LMDB, RocksDB, SQLite\n"
     "(comma lists sweep; --list-engines; --help for every option)"},
    {"probe", cmd_probe, "[--dir D] [--seconds N] [--json FILE] [--only SECTION]",
     "pg_test_fsync's tests and more: what a sync costs here, and\n"
     "whether it can be trusted"},
    {"matrix", cmd_matrix, "--fs LIST [options] [bench options]",
     "the bench configurations on ext4, xfs, btrfs, btrfs-nodatacow,\n"
     "tmpfs, each loop-mounted fresh (root); does WAL recycling help?"},
    {"crash", cmd_crash, "[options]",
     "simulated power failures under every sync policy, method and\n"
     "crash model; checks every acknowledged commit (--help)"},
    {"report", cmd_report, "FILE.jsonl... [-o FILE] [--format html|md] [--title T]",
     "the JSON lines of bench, tour, matrix and crash as one\n"
     "self-contained HTML page (inline SVG charts) or markdown"},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

/* The summary starts in this column; a longer name and synopsis gets a
 * line of its own. */
#define SUMMARY_COL 23

static void usage(FILE *f)
{
    fprintf(f, "usage: commitlab <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const struct cli_command *c = &commands[i];
        char head[128];
        snprintf(head, sizeof head, "%s%s%s", c->name, c->synopsis ? " " : "", c->synopsis ? c->synopsis : "");
        int w = fprintf(f, "  %s", head);
        if (w + 1 > SUMMARY_COL) {
            fputc('\n', f);
            w = 0;
        }
        for (const char *p = c->summary; *p;) {
            size_t n = strcspn(p, "\n");
            fprintf(f, "%*s%.*s\n", SUMMARY_COL - w, "", (int)n, p);
            w = 0;
            p += n + (p[n] == '\n');
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return UT_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("commitlab %s (commit %s)\n", ut_version(), ut_source_commit());
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    char names[256];
    size_t j = 0;
    for (size_t i = 0; i < NCOMMANDS && j < sizeof names; i++)
        j += (size_t)snprintf(names + j, sizeof names - j, "%s%s", i ? ", " : "", commands[i].name);
    fprintf(stderr, "commitlab: unknown command '%s' (accepted: %s)\n", cmd, names);
    return UT_EXIT_USAGE;
}
