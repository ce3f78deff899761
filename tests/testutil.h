/*
 * testutil.h -- small helpers shared by the Check suites: scratch
 * directories, seeds that can be replayed, and a deterministic PRNG.
 */
#ifndef CL_TESTUTIL_H
#define CL_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Makes a fresh scratch directory under $TMPDIR (or /tmp); returns a
 * malloc'd path.  tu_rmdir removes it and everything in it. */
char *tu_mkdtemp(const char *tag);
void tu_rmdir(const char *path);

/* The base seed of a loop: $CL_SEED when set (to replay a failure), else
 * the given default. */
uint64_t tu_seed(uint64_t dflt);
/* Iteration count: $CL_ITERATIONS when set, else dflt times
 * $CL_TEST_SCALE (default 1: the short campaigns of `make test`; `make
 * test-long` runs them 8 times longer). */
uint64_t tu_iterations(uint64_t dflt);
/* The log_insert option (0 mutex, 1 slots) of a loop's turn-th round:
 * $CL_LOG_INSERT ("mutex" or "slots") when set, to run a whole campaign
 * with one, else the two in turn. */
int tu_log_insert(uint64_t turn);

/* splitmix64: a tiny deterministic PRNG. */
static inline uint64_t tu_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline uint64_t tu_range(uint64_t *s, uint64_t n) { return n ? tu_rand(s) % n : 0; }

/* Runs a Check suite (and frees it); returns the process exit status:
 * 0 when every test passed, 1 otherwise. */
struct Suite;
int tu_run_suite(struct Suite *s);

/* Reads or writes a whole file (for corrupting bytes in tests). */
int tu_read_file(const char *path, uint8_t **buf, size_t *len);
int tu_write_file(const char *path, const uint8_t *buf, size_t len);
/* Flips one byte of a file at off (xor 0xff). */
int tu_flip_byte(const char *path, uint64_t off);

#endif
