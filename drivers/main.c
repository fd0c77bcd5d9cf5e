/* The krylov command: dispatches to a subcommand, prints the overview help
 * and the version. */
#include "commands.h"
#include "krylov.h"
#include "options.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"solve", cli_cmd_solve,
     "solve A x = b for a Matrix Market or generated matrix"},
    {"gen", cli_cmd_gen,
     "write a generated test matrix to a Matrix Market "
     "file"},
    {"compare-petsc", cli_cmd_compare_petsc,
     "solve with krylov and with PETSc KSP, compare in one table"},
    {"bench", cli_cmd_bench,
     "benchmarks: SpMV per format (bench spmv), SpMM per k, format and row "
     "order (bench spmm), solves (bench solve), "
     "batched block inversion and block-Jacobi stages (bench gje)"},
    {"analyze", cli_cmd_analyze,
     "report a matrix's structure, its SCCs and block dependencies, and "
     "the format, preconditioner and method to use"},
    {"reach", cli_cmd_reach,
     "reachability queries on a matrix or graph (GRAIL index)"},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_help(FILE *f)
{
    fputs("krylov " KR_VERSION_STRING
          ": preconditioned Krylov solvers for sparse A x = b\n\n"
          "usage: krylov COMMAND [options]\n\ncommands:\n",
          f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].summary);
    fputs("\n  krylov COMMAND --help   the options of a command\n"
          "  krylov --version        the version, and whether CUDA is built "
          "in\n\n",
          f);
    cli_print_exit_codes(f);
    fputs("\nexample:\n  krylov solve --gen poisson2d:100 --method cg\n", f);
}

static int unknown_command(const char *name)
{
    char list[128] = "";
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (i) strcat(list, ", ");
        strcat(list, commands[i].name);
    }
    return cli_usage_error(NULL, "unknown command '%s' (valid: %s)", name,
                           list);
}

/* OpenMP threads that spin while they wait take the cores a busy machine's
 * other processes need: on 2 cores with one busy process, CG on
 * poisson3d:48 at 2 threads took 6-22 ms an iteration under libgomp's
 * default spinning against 0.8-2 ms spinning 1000 rounds before sleeping,
 * and 0.33 against 0.38-0.43 ms when idle (passive: 0.63). libgomp reads
 * its settings when it loads, before main, so the command sets the spin
 * count and runs itself again, once, unless the user chose a policy. */
static void set_omp_wait(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0 || setenv("GOMP_SPINCOUNT", "1000", 1) != 0) return;
    self[len] = '\0';
    execv(self, argv); /* returns only on failure: run on as we are */
}

int main(int argc, char **argv)
{
    set_omp_wait(argv);
    if (argc < 2) {
        print_help(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        print_help(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(name, "--version")) {
        printf("krylov %s (CUDA %s)\n", KR_VERSION_STRING,
               kr_built_with_cuda() ? "built in" : "not built in");
        const char *pol = getenv("OMP_WAIT_POLICY"),
                   *spin = getenv("GOMP_SPINCOUNT");
        printf("OpenMP waiting: OMP_WAIT_POLICY=%s GOMP_SPINCOUNT=%s\n",
               pol ? pol : "(unset)", spin ? spin : "(unset)");
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name))
            return commands[i].run(argc - 2, argv + 2);
    return unknown_command(name);
}
