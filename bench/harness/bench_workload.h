/*
 * bench_workload.h -- the workloads of the benchmark harness (kv, and
 * tpcb, pgbench's TPC-B-like transaction; bench_workload.c): how a store
 * is preloaded, what one transaction does, how a run is verified, and the
 * per-client state they draw keys from.  A workload reaches an engine only
 * through drivers/driver.h.
 */
#ifndef CL_BENCH_WORKLOAD_H
#define CL_BENCH_WORKLOAD_H

#include <stdint.h>

#include "bench_config.h"
#include "drivers/driver.h"

struct bench_worker; /* per-client state of the runner */

/* What the verification after a run knows about the run. */
struct bench_verify_in {
    const uint8_t *written;       /* kv: bitmap of the keys the run wrote */
    const uint64_t *committed;    /* per client: transactions committed in every phase */
    unsigned clients;
};

struct bench_workload {
    const char *name;
    /* Untimed: fills the store (one connection). */
    int (*preload)(struct bench_conn *c, const struct bench_config *cfg);
    /* One transaction, begin to commit.  ops gets the operations done. */
    int (*txn)(struct bench_conn *c, const struct bench_config *cfg, struct bench_worker *w, unsigned *ops);
    /* After a reopen: reads everything back; 0 or BENCH_ERR with c->err.
     * written is a bitmap of the keys written by the timed phase (kv). */
    int (*verify)(struct bench_conn *c, const struct bench_config *cfg, const struct bench_verify_in *in,
                  uint64_t *checked);
};

extern const struct bench_workload bench_workload_kv, bench_workload_tpcb;
const struct bench_workload *bench_workload_find(const char *name);
/* 1 when a reused store already holds the workload's preload. */
int bench_workload_loaded(struct bench_conn *c, const struct bench_config *cfg);

/* Per-client state the workloads use: PRNG, zipf generator, written-key
 * bitmap (shared, only with --verify), scratch buffers. */
struct bench_zipf {
    uint64_t n;
    double theta, alpha, zetan, eta, zeta2;
};

struct bench_worker {
    unsigned id;
    uint64_t rng;
    const struct bench_zipf *zipf;
    uint8_t *written;             /* shared bitmap or NULL */
    uint64_t seq;                 /* per-client sequence (tpcb history keys): commits so far */
    uint8_t buf[8192];
};

uint64_t bench_rand(uint64_t *s);
void bench_zipf_init(struct bench_zipf *z, uint64_t n, double theta);
uint64_t bench_zipf_next(const struct bench_zipf *z, uint64_t *rng);

#endif
