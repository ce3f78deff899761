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

/* One pause of a spinning wait: tells the processor the loop spins (x86
 * PAUSE, Arm YIELD), so it spends less power and yields the core's
 * resources to its sibling thread. */
static inline void cl_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif /* CL_ATOMIC_H */
