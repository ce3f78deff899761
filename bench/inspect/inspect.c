/*
 * inspect.c -- `commitlab inspect DIR [--verify] [--records]`: prints what a
 * database directory holds, like mdb_stat, and with --records every log
 * record from the checkpoint on, like pg_waldump.  Exit status: 0 when
 * readable (and, with --verify, every checksum good), 1 otherwise, naming
 * the first corrupt page or LSN; 2 for bad arguments; 3 when DIR is not
 * a commitlab database or does not exist; 4 when the database is in use
 * (cl_inspect takes the database's lock shared, so it never reads under a
 * live writer).
 *
 * A directory that is not a database but holds some directly inside it
 * (what `bench --dir D --reuse` leaves: D/commitlab.db) is refused naming
 * them, with the command to inspect the first; --records says when there
 * is no record after the checkpoint (a clean close checkpoints them away:
 * bench --no-final-checkpoint keeps them).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commitlab.h"
#include "inspect.h"
#include "ut_args.h"

#define EXIT_NOT_DATABASE 3
#define EXIT_IN_USE 4
#define MAX_NAMED 3 /* databases found inside a directory that is none, named at most */

/* What the visitors print into; the header comes with the first segment,
 * so a directory refused before any is read gets one line and no header. */
struct out {
    const char *dir;
    int header, records_header;
};

static void print_header(struct out *o)
{
    if (!o->header)
        printf("database %s\nsegments:\n", o->dir);
    o->header = 1;
}

static void print_segment(void *arg, const struct cl_inspect_segment *seg)
{
    print_header(arg);
    printf("  wal-%016" PRIx64 ".log  first LSN %-14" PRIu64 " header %s\n", seg->segno, seg->first_lsn,
           seg->header_ok ? "ok" : "BAD");
}

static const char *record_type_name(enum cl_record_type t)
{
    switch (t) {
    case CL_RECORD_PUT: return "PUT";
    case CL_RECORD_DEL: return "DEL";
    case CL_RECORD_COMMIT: return "COMMIT";
    case CL_RECORD_SWITCH: return "SWITCH";
    }
    return "?";
}

static void print_record(void *arg, const struct cl_inspect_record *r)
{
    struct out *o = arg;
    int *header = &o->records_header;
    print_header(o);
    if (!*header) {
        printf("records:\n  %14s %14s %-7s %10s %14s %7s  %s\n", "LSN", "next LSN", "type", "txn", "sync_lsn",
               "len", "desc");
        *header = 1;
    }
    printf("  %14" PRIu64 " %14" PRIu64 " %-7s %10" PRIu64 " %14" PRIu64 " %7" PRIu32 "  ", r->lsn, r->next_lsn,
           record_type_name(r->type), r->txn_id, r->sync_lsn, r->payload_len);
    if (r->malformed)
        printf("MALFORMED payload (its checksum holds)\n");
    else if (r->type == CL_RECORD_PUT)
        printf("key %" PRIu32 " B, value %" PRIu32 " B\n", r->key_len, r->value_len);
    else if (r->type == CL_RECORD_DEL)
        printf("key %" PRIu32 " B\n", r->key_len);
    else if (r->type == CL_RECORD_COMMIT)
        printf("%" PRIu32 " operation%s\n", r->nops, r->nops == 1 ? "" : "s");
    else
        printf("the log continues in the next segment\n");
}

/* dir/name, without a doubled slash; 0, or -1 when it does not fit. */
static int join(char *buf, size_t len, const char *dir, const char *name)
{
    size_t n = strlen(dir);
    int k = snprintf(buf, len, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
    return k < 0 || (size_t)k >= len ? -1 : 0;
}

/* 1 when dir holds a database: a regular file data.clp, as cl_inspect
 * wants one. */
static int is_database(const char *dir)
{
    char clp[4200];
    struct stat st;
    return join(clp, sizeof clp, dir, "data.clp") == 0 && lstat(clp, &st) == 0 && S_ISREG(st.st_mode);
}

/* s as one word of a shell command: itself, or single-quoted when it
 * holds anything but letters, digits and _./+-:=@%, */
static void shell_word(char *buf, size_t len, const char *s)
{
    size_t k = 0;
    if (s[0] && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-:=@%,") == strlen(s)) {
        snprintf(buf, len, "%s", s);
        return;
    }
    if (k + 1 < len)
        buf[k++] = '\'';
    for (; *s && k + 5 < len; s++) {
        if (*s == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else {
            buf[k++] = *s;
        }
    }
    if (k + 1 < len)
        buf[k++] = '\'';
    buf[k < len ? k : len - 1] = '\0';
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Fills hint with "; D/x is one: commitlab inspect D/x" when directories
 * directly inside dir are databases (the first MAX_NAMED by name, and how
 * many more), else "". */
static void databases_inside(const char *dir, char *hint, size_t len)
{
    char **found = NULL, path[4200];
    size_t n = 0, cap = 0;
    struct dirent *e;
    struct stat st;
    DIR *d = opendir(dir);

    hint[0] = '\0';
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (join(path, sizeof path, dir, e->d_name) != 0 || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
            !is_database(path))
            continue;
        if (n == cap) {
            size_t c = cap ? 2 * cap : 8;
            char **f = realloc(found, c * sizeof *f);
            if (!f)
                break;
            found = f;
            cap = c;
        }
        if (!(found[n] = strdup(path)))
            break;
        n++;
    }
    closedir(d);
    if (n) {
        qsort(found, n, sizeof *found, cmp_names);
        size_t k = 0, shown = n < MAX_NAMED ? n : MAX_NAMED;
        k += (size_t)snprintf(hint + k, len - k, "; ");
        for (size_t i = 0; i < shown && k < len; i++)
            k += (size_t)snprintf(hint + k, len - k, "%s%s", i == 0 ? "" : i + 1 == shown && n == shown ? " and " : ", ",
                                  found[i]);
        if (n > shown && k < len)
            k += (size_t)snprintf(hint + k, len - k, " and %zu more", n - shown);
        char word[600];
        shell_word(word, sizeof word, found[0]);
        if (k < len)
            snprintf(hint + k, len - k, " %s: commitlab inspect %s", n == 1 ? "is one" : "are databases", word);
    }
    for (size_t i = 0; i < n; i++)
        free(found[i]);
    free(found);
}

int cmd_inspect(int argc, char **argv)
{
    const char *dir = NULL;
    int verify = 0, records = 0;
    struct cl_inspect in;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: commitlab inspect DIR [--verify] [--records]\n\n"
                   "Prints a database's current meta page, its log segments and the log from the\n"
                   "checkpoint on (records by type, where it ends and why: a clean end, a torn\n"
                   "tail or corruption), without writing.\n"
                   "--verify checks every reachable page's and every log record's checksum and\n"
                   "names the first bad one (exit 1).\n"
                   "--records lists every log record from the checkpoint on, as pg_waldump does:\n"
                   "LSN, next LSN, type, transaction, sync_lsn, payload length, key/value sizes;\n"
                   "\"records: none after the checkpoint\" when there is none (a close checkpoints:\n"
                   "commitlab bench --no-final-checkpoint keeps a run's records in the log).\n"
                   "A database in use (open in a process) is refused, naming that process: inspect\n"
                   "takes the database's lock shared, so it never reads a live writer's half-done work,\n"
                   "and an open waits for no inspect (it is refused while one reads).\n"
                   "\n"
                   "exit status: 0 readable (and, with --verify, every checksum good); 1 corrupt or\n"
                   "unreadable, naming the first bad page or LSN; 2 bad arguments; 3 DIR is not a\n"
                   "commitlab database (no data.clp; the databases directly inside it are named) or\n"
                   "does not exist; 4 the database is in use.\n");
            return 0;
        }
        if (strcmp(argv[i], "--verify") == 0)
            verify = 1;
        else if (strcmp(argv[i], "--records") == 0)
            records = 1;
        else if (argv[i][0] == '-')
            ut_usage_error("inspect", "unknown flag '%s' (accepted: --verify, --records)", argv[i]);
        else if (!dir)
            dir = argv[i];
        else
            ut_usage_error("inspect", "one directory expected, got '%s' too", argv[i]);
    }
    if (!dir)
        ut_usage_error("inspect", "missing DIR (usage: commitlab inspect DIR [--verify] [--records])");

    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(stderr, "commitlab inspect: %s: %s\n", dir, strerror(errno));
        return EXIT_NOT_DATABASE;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "commitlab inspect: %s: not a directory\n", dir);
        return EXIT_NOT_DATABASE;
    }
    struct out o = {.dir = dir};
    struct cl_inspect_visitor visit = {.segment = print_segment, .record = records ? print_record : NULL,
                                       .arg = &o};
    int rc = cl_inspect(dir, verify, &in, &visit);
    if (rc && in.page_size == 0) {
        char clp[4200];
        snprintf(clp, sizeof clp, "%s/data.clp", dir);
        if (rc == CL_EBUSY) {
            fprintf(stderr, "commitlab inspect: %s\n", cl_error_detail());
            return EXIT_IN_USE;
        }
        if (rc == -ENOENT && lstat(clp, &st) != 0) {
            char hint[1024];
            databases_inside(dir, hint, sizeof hint);
            fprintf(stderr, "commitlab inspect: %s: not a commitlab database (no data.clp)%s\n", dir, hint);
            return EXIT_NOT_DATABASE;
        }
        if (rc == CL_EFORMAT) {
            fprintf(stderr, "commitlab inspect: %s: not a commitlab database (%s)\n", dir, cl_strerror(rc));
            return EXIT_NOT_DATABASE;
        }
        fprintf(stderr, "commitlab inspect: %s: %s\n", dir, cl_error_detail()[0] ? cl_error_detail() : cl_strerror(rc));
        return 1;
    }
    print_header(&o); /* a database without segment files */
    if (records && !o.records_header)
        printf("records: none after the checkpoint\n");
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
    printf("  why the log ends   %s\n", in.end_why);
    if (in.corrupt == CL_CORRUPT_LOG) {
        printf("  CORRUPT record at LSN %" PRIu64 "\n", in.bad_lsn);
        fprintf(stderr, "commitlab inspect: %s: %s\n", dir, in.end_why);
        return 1;
    }
    printf("  end of log         LSN %" PRIu64 "%s\n", in.end_lsn, in.torn_tail ? " (torn tail)" : "");
    if (rc) {
        if (in.corrupt == CL_CORRUPT_PAGE) {
            printf("verify: CORRUPT page %" PRIu64 "\n", in.bad_page);
            fprintf(stderr, "commitlab inspect: %s: corrupt page %" PRIu64 "\n", dir, in.bad_page);
        } else {
            fprintf(stderr, "commitlab inspect: %s: %s\n", dir,
                    cl_error_detail()[0] ? cl_error_detail() : cl_strerror(rc));
        }
        return 1;
    }
    if (verify)
        printf("verify: ok (%" PRIu64 " pages, every log record from the checkpoint on)\n", in.pages_checked);
    return 0;
}
