/* The krylov command: dispatches to a subcommand, prints the overview help
 * and the version. */
#include "drivers/commands.h"
#include "drivers/options.h"
#include "krylov.h"

#include <stdio.h>
#include <string.h>

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
     "benchmarks: SpMV per format (bench spmv), solves (bench solve), "
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

int main(int argc, char **argv)
{
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
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name))
            return commands[i].run(argc - 2, argv + 2);
    return unknown_command(name);
}
