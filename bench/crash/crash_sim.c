/*
 * crash_sim.c -- one simulated power failure (`commitlab crash --mode
 * sim`): a fresh database on the fault-injecting file layer, several
 * clients committing, the power failing at a random file operation under
 * a crash model (drop, torn, reorder), then the directory as the crash
 * left it opened with the real file layer (recovery) and checked against
 * the witness (crash_workload.c).
 *
 * With one client a replay of a seed is exact; with several, the threads'
 * interleaving is not replayed, only the crash point and model.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "crash.h"
#include "engine_internal.h"
#include "ut_clock.h"
#include "ut_file.h"
#include "ut_scratch.h"
#include "vfs_fault.h"

struct sim_client {
    struct bench_conn conn;
    const struct crash_config *c;
    struct crash_witness *w;
    pthread_t th;
};

/* A pipelined commit acknowledged durable: the witness learns it. */
static void sim_ack(void *arg, uint64_t n)
{
    struct sim_client *cl = arg;
    __atomic_store_n(&cl->w->acked[cl->conn.id], n, __ATOMIC_RELEASE); /* told: acknowledged */
}

static void *client_main(void *arg)
{
    struct sim_client *cl = arg;
    unsigned id = cl->conn.id;
    struct crash_pipe p;
    int piped = cl->c->pipeline > 1 && crash_pipe_init(&p, cl->c->pipeline, sim_ack, cl) == 0;
    for (uint64_t n = 1; n <= cl->c->txns; n++) {
        __atomic_store_n(&cl->w->attempted[id], n, __ATOMIC_RELEASE);
        if (piped) {
            if (crash_pipe_txn(&p, &cl->conn, cl->c->workload, id, n))
                break; /* the file layer died */
            continue;
        }
        if (crash_txn(&cl->conn, cl->c->workload, id, n))
            break; /* the file layer died */
        __atomic_store_n(&cl->w->acked[id], n, __ATOMIC_RELEASE); /* told: acknowledged */
    }
    if (piped) {
        crash_pipe_drain(&p, &cl->conn);
        crash_pipe_free(&p);
    }
    return NULL;
}

/* Recovery with the real file layer, timed, then the check. */
static void recover_and_check(const struct crash_config *c, const struct bench_config *bc, const char *dir,
                              const struct crash_witness *w, struct crash_outcome *o)
{
    struct cl_options opt;
    struct cl_recovery_info info;
    struct cl_db *h;
    bench_commitlab_options(bc, &opt, o->why, sizeof o->why);
    opt.create = 0;
    double t0 = ut_now();
    int rc = cl_open(dir, &opt, &h, &info);
    o->recovery_ms = (ut_now() - t0) * 1e3;
    if (rc) {
        o->recovery_failed = 1;
        snprintf(o->why, sizeof o->why, "recovery failed: %.100s%s%s", info.bad_file, info.bad_file[0] ? ": " : "",
                 cl_strerror(rc));
        return;
    }
    struct bench_db db = {.drv = &bench_driver_commitlab, .cfg = bc, .impl = h};
    crash_check(&db, c, w, o);
    cl_close(h);
}

int crash_sim_one(const struct crash_config *c, uint64_t seed, uint64_t span, const char *dir,
                  struct crash_outcome *o, uint64_t *cal)
{
    struct vfs *fault = vfs_fault_new(vfs_posix());
    struct bench_config bc;
    struct cl_options opt;
    struct cl_db *h;
    struct sim_client cls[CRASH_MAX_CLIENTS];
    struct crash_witness w;

    memset(o, 0, sizeof *o);
    memset(&w, 0, sizeof w);
    int mrc = ut_scratch_reset(dir, "crash"); /* only ever over a directory of its own */
    if (mrc) {
        snprintf(o->na_why, sizeof o->na_why, "%.100s: %s", dir,
                 mrc == -EPERM ? "exists and was not made by commitlab crash" : strerror(-mrc));
        o->na = 1;
        vfs_destroy(fault);
        return 1;
    }
    crash_bench_config(c, dir, &bc);
    vfs_fault_ring_seed(fault, seed);
    int rc = bench_commitlab_options(&bc, &opt, o->na_why, sizeof o->na_why);
    if (!rc && (rc = cl_open_vfs(dir, &opt, fault, &h, NULL)))
        snprintf(o->na_why, sizeof o->na_why, "cl_open: %s%s%s", cl_strerror(rc), *cl_error_detail() ? ": " : "",
                 cl_error_detail()); /* the library's reason: the option refused, the flag the kernel refused */
    if (rc) {
        o->na = 1;
        vfs_destroy(fault);
        return 1;
    }
    if (c->lying)
        vfs_fault_lie(fault, 1); /* the database's creation was durable; from here on the device lies */
    uint64_t ops0 = vfs_fault_ops(fault);
    if (span)
        vfs_fault_crash_at(fault, 1 + crash_mix(seed) % span, c->model, seed);
    struct bench_db db = {.drv = &bench_driver_commitlab, .cfg = &bc, .impl = h};
    for (unsigned i = 0; i < c->clients; i++) {
        cls[i] = (struct sim_client){.conn = {.db = &db, .id = i}, .c = c, .w = &w};
        pthread_create(&cls[i].th, NULL, client_main, &cls[i]);
    }
    for (unsigned i = 0; i < c->clients; i++)
        pthread_join(cls[i].th, NULL);
    o->mid_run = vfs_fault_crashed(fault);
    if (cal)
        *cal = vfs_fault_ops(fault) - ops0;
    if (!o->mid_run)
        vfs_fault_crash(fault, c->model, seed); /* after the last commit */
    cl_close(h); /* writes nothing: the file layer is dead */
    vfs_destroy(fault);
    char kept[4400];
    if (c->keep_crashed && crash_keep_copy(dir, kept, sizeof kept))
        fprintf(stderr, "commitlab crash: could not keep a copy of %s before recovery\n", dir);
    recover_and_check(c, &bc, dir, &w, o);
    return 0;
}
