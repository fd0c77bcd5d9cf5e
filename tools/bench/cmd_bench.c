/* krylov bench: dispatches to `bench spmv` (SpMV time per format),
 * `bench spmm` (SpMM time per k, format and row order),
 * `bench solve` (time to solution against the bytes an iteration moves)
 * and `bench gje` (batched block inversion and block-Jacobi stages), and
 * prints the overview of them. */
#include "drivers/commands.h"
#include "drivers/options.h"
#include "tools/bench/bench.h"

#include <stdio.h>
#include <string.h>

static void print_help(FILE *f)
{
    fputs("usage: krylov bench spmv  [A.mtx ...] [--gen SPEC ...] [options]\n"
          "       krylov bench spmm  [A.mtx ...] [--gen SPEC ...] [options]\n"
          "       krylov bench solve [A.mtx ...] [--gen SPEC ...] [options]\n"
          "       krylov bench gje   [A.mtx ...] [--gen SPEC ...] [options]\n"
          "\n"
          "  spmv   time y = A x in every format: GFLOP/s, effective GB/s "
          "against the\n         measured copy bandwidth, speedup over csr\n"
          "  spmm   time Y = A X (k columns) in every format and row order "
          "against\n         csr (cusparseSpMM on the GPU), same measures\n"
          "  solve  time to solution (setup + iterations), time per "
          "iteration against\n         the bytes an iteration must move\n"
          "  gje    batched Gauss-Jordan inversion of random blocks against "
          "cuBLAS and\n         the memory floor; block-Jacobi setup and "
          "apply stages per matrix\n"
          "\nWith no matrix given, each runs its default set (see 'krylov "
          "bench spmv --help'\nand 'krylov bench gje --help'). Each prints a "
          "Markdown report; --json FILE and\n--markdown FILE write files.\n\n",
          f);
    cli_print_exit_codes(f);
}

int cli_cmd_bench(int argc, char **argv)
{
    if (argc < 1) {
        print_help(stderr);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
        print_help(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(argv[0], "spmv")) return cli_bench_spmv(argc - 1, argv + 1);
    if (!strcmp(argv[0], "spmm")) return cli_bench_spmm(argc - 1, argv + 1);
    if (!strcmp(argv[0], "solve")) return cli_bench_solve(argc - 1, argv + 1);
    if (!strcmp(argv[0], "gje")) return cli_bench_gje(argc - 1, argv + 1);
    return cli_usage_error(
        "bench", "unknown benchmark '%s' (valid: spmv, solve, gje, spmm)",
        argv[0]);
}
