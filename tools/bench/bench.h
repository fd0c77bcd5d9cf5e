/* The benchmarks of `krylov bench` (tools/bench/cmd_bench.c dispatches):
 * each takes the arguments after its name and returns the exit code. */
#ifndef KR_TOOLS_BENCH_BENCH_H
#define KR_TOOLS_BENCH_BENCH_H

int cli_bench_spmv(int argc, char **argv);
int cli_bench_spmm(int argc, char **argv);
int cli_bench_solve(int argc, char **argv);
int cli_bench_gje(int argc, char **argv);

#endif
