/*
 * cli.h -- the commitlab command-line tool: one function per subcommand.
 * Bad arguments print one line naming the flag and what it accepts, and
 * exit 2 (ut_usage_error, util/ut_args.h).
 */
#ifndef CL_CLI_H
#define CL_CLI_H

int cmd_inspect(int argc, char **argv);
int cmd_tour(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_crash(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
