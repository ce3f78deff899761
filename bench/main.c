/*
 * main.c -- the commitlab command: dispatches to the subcommands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commitlab.h"
#include "ut_args.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: commitlab <command> [options]\n"
            "\n"
            "commands:\n"
            "  tour                 a short guided comparison of commit paths (the default job)\n"
            "  inspect DIR [--verify]\n"
            "                       print a database's meta, checkpoint and log; --verify checks\n"
            "                       every page and record checksum\n"
            "  bench [options]      run a transaction workload on commitlab, LMDB, RocksDB, SQLite\n"
            "                       (comma lists sweep; --list-engines; --help for every option)\n"
            "  probe [--dir D] [--seconds N] [--json FILE] [--only SECTION]\n"
            "                       pg_test_fsync's tests and more: what a sync costs here, and\n"
            "                       whether it can be trusted\n"
            "  matrix --fs LIST [options] [bench options]\n"
            "                       the bench configurations on ext4, xfs, btrfs, btrfs-nodatacow,\n"
            "                       tmpfs, each loop-mounted fresh (root); does WAL recycling help?\n"
            "  crash [options]      simulated power failures under every sync policy, method and\n"
            "                       crash model; checks every acknowledged commit (--help)\n"
            "  report FILE.jsonl... [-o FILE] [--format html|md] [--title T]\n"
            "                       the JSON lines of bench, tour, matrix and crash as one\n"
            "                       self-contained HTML page (inline SVG charts) or markdown\n");
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
        printf("commitlab %d.%d\n", CL_VERSION_MAJOR, CL_VERSION_MINOR);
        return 0;
    }
    if (strcmp(cmd, "inspect") == 0)
        return cmd_inspect(argc - 1, argv + 1);
    if (strcmp(cmd, "tour") == 0)
        return cmd_tour(argc - 1, argv + 1);
    if (strcmp(cmd, "probe") == 0)
        return cmd_probe(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "matrix") == 0)
        return cmd_matrix(argc - 1, argv + 1);
    if (strcmp(cmd, "crash") == 0)
        return cmd_crash(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    fprintf(stderr, "commitlab: unknown command '%s' (accepted: tour, inspect, probe, bench, crash, matrix, report)\n", cmd);
    return UT_EXIT_USAGE;
}
