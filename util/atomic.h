/*
 * atomic.h -- the atomic helpers both the log and the engine use: one
 * copy, in util/, the layer below both.
 */
#ifndef CL_ATOMIC_H
#define CL_ATOMIC_H

#include <stdint.h>

/* *p = max(*p, v), atomically: a peak statistic that several threads
 * raise (relaxed: nothing else is ordered by it). */
static inline void cl_atomic_max64(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

#endif /* CL_ATOMIC_H */
