/*
 * bench_schema.c -- a commitlab-bench/1 line's statuses, the phases a
 * signal can stop a run in, its commit phases, and the order of engines
 * and policies a reader compares them in (bench_schema.h); the output
 * writes the names, the report reads them.
 */
#include <string.h>

#include "bench_schema.h"
#include "commitlab.h"
#include "drivers/driver.h"

const char *const bench_status_names[BENCH_STATUSES] = {"ok", "n/a", "error", "interrupted"};
const char *const bench_stop_names[BENCH_STOPS] = {"setup", "warm-up", "measured phase"};

int bench_status_parse(const char *name)
{
    for (int i = 0; i < BENCH_STATUSES; i++)
        if (name && strcmp(name, bench_status_names[i]) == 0)
            return i;
    return -1;
}

const char *const bench_phase_names[BENCH_PHASES] = {"lock", "append", "apply", "queue", "write", "sync", "wakeup"};

int bench_schema_engine_rank(const char *engine)
{
    size_t i;
    for (i = 0; i < bench_ndrivers; i++)
        if (strcmp(bench_drivers[i]->name, engine) == 0)
            break;
    return (int)i;
}

int bench_schema_sync_rank(const char *sync)
{
    enum cl_sync_policy p;
    return cl_sync_policy_parse(sync, &p) == 0 ? (int)p : CL_SYNC_NPOLICIES;
}
