/*
 * cli.h -- the top of the commitlab command (bench/cli): main.c's table
 * of subcommands, and the two that live here because they drive other
 * parts together -- bench (the harness's options and sweep) and tour (the
 * harness, then the report of what it ran).  Every other command is a
 * part of its own below this one; nothing below calls up into cli.
 *
 * Bad arguments print one line naming the flag and what it accepts, and
 * exit 2 (ut_usage_error, util/ut_args.h).
 */
#ifndef CL_CLI_H
#define CL_CLI_H

/* `commitlab bench [options]` (bench_cmd.c). */
int cmd_bench(int argc, char **argv);
/* `commitlab tour [--seconds S] [--dir D] [--out FILE] [--quiet]` (tour.c). */
int cmd_tour(int argc, char **argv);

#endif
