/*
 * inspect.c -- `commitlab inspect DIR [--verify]`: prints what a database
 * directory holds, like pg_waldump's summary and mdb_stat.  Exit status: 0
 * when readable (and, with --verify, every checksum good), 1 otherwise,
 * naming the first corrupt page or LSN; 2 for bad arguments.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commitlab.h"

static void print_segment(void *arg, const struct cl_inspect_segment *seg)
{
    (void)arg;
    printf("  wal-%016" PRIx64 ".log  first LSN %-14" PRIu64 " header %s\n", seg->segno, seg->first_lsn,
           seg->header_ok ? "ok" : "BAD");
}

int cmd_inspect(int argc, char **argv)
{
    const char *dir = NULL;
    int verify = 0;
    struct cl_inspect in;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: commitlab inspect DIR [--verify]\n\n"
                   "Prints a database's current meta page, its log segments and the log from the\n"
                   "checkpoint on (records by type, where it ends, whether torn), without writing.\n"
                   "--verify checks every reachable page's and every log record's checksum and\n"
                   "names the first bad one (exit 1).\n");
            return 0;
        }
        if (strcmp(argv[i], "--verify") == 0)
            verify = 1;
        else if (argv[i][0] == '-')
            cli_usage_error("inspect", "unknown flag '%s' (accepted: --verify)", argv[i]);
        else if (!dir)
            dir = argv[i];
        else
            cli_usage_error("inspect", "one directory expected, got '%s' too", argv[i]);
    }
    if (!dir)
        cli_usage_error("inspect", "missing DIR (usage: commitlab inspect DIR [--verify])");

    printf("database %s\nsegments:\n", dir);
    int rc = cl_inspect(dir, verify, &in, print_segment, NULL);
    if (rc && in.page_size == 0) {
        fprintf(stderr, "commitlab inspect: %s: %s\n", dir, cl_strerror(rc));
        return 1;
    }
    printf("meta:\n"
           "  format version     %u\n"
           "  page size          %u\n"
           "  database id        %016" PRIx64 "\n"
           "  generation         %" PRIu64 "\n"
           "  root page          %" PRIu64 "\n"
           "  pages              %" PRIu64 "\n"
           "  entries            %" PRIu64 "\n"
           "  checkpoint LSN     %" PRIu64 "\n"
           "  WAL segment size   %" PRIu64 "\n"
           "  log continues in   segment %" PRIu64 "\n",
           in.version, in.page_size, in.db_id, in.generation, in.root, in.npages, in.nentries,
           in.checkpoint_lsn, in.wal_segment_size, in.wal_segno);
    printf("log after the checkpoint:\n"
           "  put records        %" PRIu64 "\n"
           "  del records        %" PRIu64 "\n"
           "  commit records     %" PRIu64 "\n"
           "  switch records     %" PRIu64 "\n",
           in.put_records, in.del_records, in.commit_records, in.switch_records);
    if (in.corrupt == CL_CORRUPT_LOG) {
        printf("  CORRUPT record at LSN %" PRIu64 "\n", in.bad_lsn);
        fprintf(stderr, "commitlab inspect: %s: corrupt log record at LSN %" PRIu64 "\n", dir, in.bad_lsn);
        return 1;
    }
    printf("  end of log         LSN %" PRIu64 "%s\n", in.end_lsn, in.torn_tail ? " (torn tail)" : "");
    if (rc) {
        if (in.corrupt == CL_CORRUPT_PAGE) {
            printf("verify: CORRUPT page %" PRIu64 "\n", in.bad_page);
            fprintf(stderr, "commitlab inspect: %s: corrupt page %" PRIu64 "\n", dir, in.bad_page);
        } else {
            fprintf(stderr, "commitlab inspect: %s: %s\n", dir, cl_strerror(rc));
        }
        return 1;
    }
    if (verify)
        printf("verify: ok (%" PRIu64 " pages, every log record from the checkpoint on)\n", in.pages_checked);
    return 0;
}
