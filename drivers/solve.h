/* The steps of `krylov solve`, shared with `krylov-petsc` (the program
 * behind `krylov compare-petsc`) so that both parse the same options and
 * load the same problem with one implementation: parse, load (context,
 * A, b, x0), set up, solve, write, free. Each step returns an exit code
 * (drivers/options.h) after printing its error. */
#ifndef KR_DRIVERS_SOLVE_H
#define KR_DRIVERS_SOLVE_H

#include "krylov.h"

#include <stdio.h>

typedef struct solve_opts {
    const char *rhs, *x0, *out, *history, *gen;
    const char *method, *precond, *format, *device, *build;
    const char *permute; /* --permute: a row order, "none" by default */
    int s, restart, maxit, threads, monitor, json, help;
    int gap_restarts;       /* restarts allowed when the true residual misses */
    int breakdown_restarts; /* restarts allowed after a breakdown             */
    int converged_reason, view; /* PETSc-style reports after the solve */
    int verbose;                /* bjacobi's block condition numbers    */
    int save_on_interrupt;      /* -o also after an interrupt (the iterate)   */
    double rtol, atol, dtol;
    /* block-Jacobi: max block size, block sizes file, singular policy */
    int block_size;
    const char *blocks, *bjacobi_singular;
    const char *blocking; /* supervariable | scc */
    int nrhs;             /* --nrhs: generated right-hand sides (0: none) */
    int rhs_seed;         /* their seed                                   */
} solve_opts;

/* Everything one solve holds; freed by cli_solve_free. */
typedef struct solve_run {
    const solve_opts *o;
    const char *name; /* the matrix file or the generator spec */
    kr_ctx *ctx;
    kr_csr A;
    double *b, *x; /* host; x holds x0 until the solve, then the solution */
    kr_matrix *M;
    kr_precond *P;
    double setup_seconds;   /* matrix_seconds + precond_seconds        */
    double matrix_seconds;  /* kr_matrix_create in the --format        */
    double precond_seconds; /* kr_precond_create_opts                  */
    int have_cond;          /* --verbose with bjacobi: cond is set     */
    kr_block_cond_stats cond;
    kr_result res;
    /* Several right-hand sides (-b with k > 1 columns, or --nrhs k):
     * host n x k blocks, row-major; Xtrue holds --nrhs's known solutions
     * (NULL for -b). allow_multi: the command takes them (krylov solve,
     * not krylov-petsc). */
    int allow_multi;
    int k;
    double *B, *X, *Xtrue;
    kr_result *mres;
} solve_run;

/* Parses the options of `krylov solve` for command ("solve",
 * "compare-petsc": named in the messages); *matrix is the matrix file or
 * NULL with --gen. Returns CLI_EXIT_HELP for --help (the caller prints). */
int cli_solve_parse(const char *command, int argc, char **argv, solve_opts *o,
                    const char **matrix);
/* The option list, PETSc aliases, generators and exit codes of --help. */
void cli_solve_print_options(FILE *f);
/* Opens the context and reads or generates A, b and x0. */
int cli_solve_load(solve_run *r);
/* Builds the matrix format and the preconditioner (timed); with --verbose
 * then reports bjacobi's block condition numbers (drivers/block_cond.h). */
int cli_solve_setup(solve_run *r);
/* Solves into r->x and r->res, with the monitor when asked. */
int cli_solve_solve(solve_run *r);
/* Writes -o and --history when given. */
int cli_solve_write(solve_run *r);
void cli_solve_free(solve_run *r);

/* Several right-hand sides (drivers/solve_multi.c). cli_multi_take: the k
 * columns of -b (column-major, taken over) as r->B; cli_multi_generate:
 * --nrhs's b_j = A x_j for seeded random x_j; cli_multi_x0: --x0 (n x k)
 * or zeros into r->X; cli_multi_options: refuses the options that take
 * one right-hand side; cli_multi_run: solve, report, -o, exit code. */
/* The report's problem fields (matrix, method, preconditioner, format,
 * device, setup times) of r (drivers/report.h). */
struct cli_report;
void cli_solve_report_problem(const solve_run *r, struct cli_report *rep);
/* The solver options of the command line (no monitor). */
void cli_solve_options(const solve_run *r, kr_solve_options *opt);
int cli_multi_take(solve_run *r, double *cols, int k);
/* k right-hand sides b_j = A x_j, x_j uniform in [-1, 1) from seed: B and
 * Xtrue n x k row-major; col is scratch of 2n doubles. */
void cli_multi_rhs(const kr_csr *A, int k, uint64_t seed, double *B,
                   double *Xtrue, double *col);
int cli_multi_generate(solve_run *r);
int cli_multi_x0(solve_run *r);
int cli_multi_options(const solve_run *r);
int cli_multi_run(solve_run *r);
void cli_multi_free(solve_run *r);

#endif
