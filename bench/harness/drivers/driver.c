/*
 * driver.c -- the drivers built into this binary (a driver whose store's
 * -dev package was missing is listed with built == 0), and what drivers
 * share: saying n/a for a knob the engine cannot express.
 */
#include <stdio.h>
#include <string.h>

#include "driver.h"

const struct bench_driver *const bench_drivers[] = {
    &bench_driver_commitlab, &bench_driver_lmdb, &bench_driver_rocksdb, &bench_driver_sqlite, &bench_driver_raw};
const size_t bench_ndrivers = sizeof bench_drivers / sizeof *bench_drivers;

const struct bench_driver *bench_driver_find(const char *name)
{
    for (size_t i = 0; i < bench_ndrivers; i++)
        if (strcmp(bench_drivers[i]->name, name) == 0)
            return bench_drivers[i];
    return NULL;
}

void bench_list_engines(FILE *f)
{
    fprintf(f, "engines in this build of commitlab bench:\n\n");
    for (size_t i = 0; i < bench_ndrivers; i++) {
        const struct bench_driver *d = bench_drivers[i];
        const char *v = d->built && d->version ? d->version() : NULL;
        fprintf(f, "%-10s %s%s%s%s\n  %s\n\n", d->name, d->built ? "built" : "not built", v ? " (" : "",
                v ? v : "", v ? ")" : "", d->maps);
    }
}

int bench_reject_given(const struct bench_config *cfg, const enum bench_knob *ks, size_t n, const char *engine_why,
                       char *why, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (cfg->given[ks[i]]) {
            snprintf(why, len, "%s: %s", bench_knob_flag(ks[i]), engine_why);
            return BENCH_NA;
        }
    return 0;
}
