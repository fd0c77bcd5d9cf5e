/* The subcommands of the krylov command. Each takes the arguments after its
 * name and returns the process exit code (see drivers/options.h). */
#ifndef KR_DRIVERS_COMMANDS_H
#define KR_DRIVERS_COMMANDS_H

int cli_cmd_solve(int argc, char **argv);
int cli_cmd_gen(int argc, char **argv);
/* Runs krylov-petsc next to the binary (drivers/petsc/). */
int cli_cmd_compare_petsc(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_reach(int argc, char **argv);
int cli_cmd_analyze(int argc, char **argv);

#endif
