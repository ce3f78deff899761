/*
 * hello.c -- embedding commitlab: open a database, commit a transaction,
 * read it back.  Built against an installed libcommitlab through
 * pkg-config:
 *     cc hello.c $(pkg-config --cflags --libs commitlab) -o hello
 */
#include <commitlab.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "hello.db";
    struct cl_options opts;
    struct cl_db *db;
    struct cl_txn *txn;
    char buf[64];
    size_t len;
    int rc;

    cl_options_init(&opts);
    opts.sync = CL_SYNC_COMMIT; /* durable when cl_commit returns */
    if ((rc = cl_open(dir, &opts, &db, NULL)) != 0) {
        fprintf(stderr, "open %s: %s\n", dir, cl_strerror(rc));
        return 1;
    }
    if ((rc = cl_txn_begin(db, 0, &txn)) || (rc = cl_put(txn, "greeting", 8, "hello, world", 12)) ||
        (rc = cl_commit(txn))) {
        fprintf(stderr, "commit: %s\n", cl_strerror(rc));
        cl_close(db);
        return 1;
    }
    if ((rc = cl_txn_begin(db, CL_TXN_RDONLY, &txn)) != 0 ||
        (rc = cl_get(txn, "greeting", 8, buf, sizeof buf - 1, &len)) != 0) {
        fprintf(stderr, "get: %s\n", cl_strerror(rc));
        cl_close(db);
        return 1;
    }
    cl_abort(txn);
    buf[len] = 0;
    printf("greeting = %s\n", buf);
    return cl_close(db) == 0 && strcmp(buf, "hello, world") == 0 ? 0 : 1;
}
