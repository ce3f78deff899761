/*
 * cli.h -- the commitlab command-line tool: one function per subcommand,
 * the shared argument helpers, and the clock.  Bad arguments print one
 * line naming the flag and what it accepts, and exit 2.
 */
#ifndef CL_CLI_H
#define CL_CLI_H

#include <stdint.h>

#define CLI_EXIT_USAGE 2

int cmd_inspect(int argc, char **argv);
int cmd_tour(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_crash(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Prints "commitlab <cmd>: <message>" to stderr and exits 2. */
void cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Parses a size such as 4096, 64k, 16M, 1G. Returns 0 or -1. */
int cli_parse_size(const char *s, uint64_t *out);

/* CLOCK_MONOTONIC in nanoseconds: the one clock every command times with. */
uint64_t bench_now_ns(void);

/* The same clock in seconds. */
static inline double bench_now(void)
{
    return (double)bench_now_ns() / 1e9;
}

#endif
