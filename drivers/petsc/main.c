/* krylov-petsc: `krylov compare-petsc` execs it with the arguments of
 * `krylov solve`. It parses and loads the problem with the solve command's
 * own code (drivers/solve.h), solves it with krylov, then with PETSc KSP on
 * the same A, b and x0 with the same tolerances, and prints one table.
 * PETSc is initialised without our argv, so it never parses our options.
 * Two file modes for the tests, petsc-write and petsc-read, are in
 * drivers/petsc/binio.h. */
#include "drivers/options.h"
#include "drivers/petsc/binio.h"
#include "drivers/petsc/compare.h"
#include "drivers/petsc_style.h"
#include "drivers/solve.h"
#include "krylov.h"

#include <petscksp.h>
#include <stdlib.h>
#include <string.h>

static void print_help(void)
{
    printf("usage: krylov compare-petsc A.mtx [options]\n"
           "       krylov compare-petsc --gen SPEC [options]\n\n"
           "Loads the problem as 'krylov solve' does, solves it with krylov "
           "and then with\nPETSc KSP (SeqAIJ, one process) from the same b "
           "and x0 with the same rtol,\natol, dtol and maxit, both stopping "
           "on ||b - A x|| <= max(rtol*||b||, atol),\nand prints one table: "
           "iterations, reason, true relative residual\n||b - A x||/||b|| "
           "(computed on the host for both), setup, solve and per-\niteration "
           "times, and ||x_krylov - x_petsc|| / ||x_petsc||.\n\n"
           "Methods: cg = KSPCG, gmres = KSPGMRES (same restart, right "
           "preconditioning),\n"
           "bicgstab = KSPBCGS (right), idr = KSPBCGSL with l = s (PETSc 3.18 "
           "has no\n"
           "IDR(s)). Preconditioners: none = PCNONE, jacobi = PCJACOBI, "
           "bjacobi =\n"
           "PCVPBJACOBI on exactly the diagonal blocks krylov built (whatever "
           "--block-size\n"
           "or --blocks chose them), passed by MatSetVariableBlockSizes; the "
           "table gives\n"
           "their count and sizes. PETSc inverts each block by LU with partial "
           "pivoting\n"
           "and fails only on an exactly zero pivot; when krylov replaced "
           "singular blocks\n"
           "(--bjacobi-singular), the table says the preconditioners differ.\n"
           "krylov restarts from x after a breakdown (--breakdown-restarts) "
           "or a residual\n"
           "gap (--gap-restarts); PETSc does not (KSPBCGS stops with "
           "DIVERGED_BREAKDOWN):\n"
           "the table says when krylov restarted; with --breakdown-restarts "
           "0 --gap-restarts 0\n"
           "it makes no restarts.\n"
           "PETSc runs on one core: compare timings with --threads 1. -o and "
           "--history\n"
           "write krylov's solution and history. Both sides are judged by "
           "their true\n"
           "residual, ||b - A x|| <= max(rtol*||b||, atol), recomputed here "
           "from their x:\n"
           "a side whose reason claims convergence that this misses is "
           "flagged\n"
           "(DISAGREEMENT) and counted as not converged. Exit 0 when both "
           "converged, 1\n"
           "when either did not.\n"
           "\n"
           "options (those of krylov solve):\n");
    cli_solve_print_options(stdout);
    printf("\nexamples:\n  krylov compare-petsc --gen poisson2d:100 -ksp_type "
           "cg -pc_type jacobi --threads 1\n  krylov compare-petsc --gen "
           "elasticity3d:10 --method cg --precond bjacobi --threads 1\n");
}

/* A copy of x0 (the krylov solve overwrites r->x) and room for PETSc's x. */
static int keep_x0(const solve_run *r, double **x0, double **xp)
{
    size_t n = (size_t)r->A.nrows + 1;
    *x0 = malloc(n * sizeof **x0);
    *xp = calloc(n, sizeof **xp);
    if (!*x0 || !*xp) {
        cli_error("out of host memory for vectors of %zu entries", n - 1);
        return CLI_EXIT_DEVICE;
    }
    memcpy(*x0, r->x, n * sizeof **x0);
    return 0;
}

static int run_krylov(solve_run *r, cmp_side *k)
{
    int rc = cli_solve_setup(r);
    FILE *f = r->o->json ? stderr : stdout;
    if (!rc && r->o->monitor) fputs("krylov:\n", f);
    if (!rc) rc = cli_solve_solve(r);
    if (rc) return rc;
    const solve_opts *o = r->o;
    k->reason = kr_reason_name(r->res.reason);
    k->claims = r->res.reason > 0;
    k->iterations = r->res.iterations;
    k->true_rel = cmp_true_rel(&r->A, r->b, r->x);
    cmp_judge(r, k);
    k->setup_s = r->setup_seconds;
    k->solve_s = r->res.solve_seconds;
    if (!strcmp(o->method, "gmres") || !strcmp(o->method, "idr"))
        snprintf(k->ksp, sizeof k->ksp, "%s(%d)", o->method,
                 !strcmp(o->method, "gmres") ? o->restart : o->s);
    else
        snprintf(k->ksp, sizeof k->ksp, "%s", o->method);
    snprintf(k->pc, sizeof k->pc, "%s", o->precond);
    if (o->view) cli_print_view(f, r);
    return 0;
}

static int run_petsc(const solve_run *r, const double *x0, double *xp,
                     cmp_result *c)
{
    PetscInt major = 0, minor = 0, sub = 0;
    if (PetscInitializeNoArguments()) {
        cli_error("PETSc failed to initialise (its message is above)");
        return CLI_EXIT_DEVICE;
    }
    PetscGetVersionNumber(&major, &minor, &sub, NULL);
    snprintf(c->petsc_version, sizeof c->petsc_version, "%d.%d.%d", (int)major,
             (int)minor, (int)sub);
    int rc = cmp_petsc_solve(r, x0, xp, c);
    if (!rc) {
        c->p.true_rel = cmp_true_rel(&r->A, r->b, xp);
        cmp_judge(r, &c->p);
    }
    PetscFinalize();
    return rc;
}

static void report(const solve_run *r, cmp_result *c, const double *xp)
{
    FILE *f = r->o->json ? stderr : stdout;
    c->xdiff = cmp_rel_diff(r->x, xp, r->A.nrows);
    if (r->o->converged_reason) {
        fputs("krylov: ", f);
        cli_print_converged_reason(f, r->res.reason, c->k.iterations);
        fprintf(f, "PETSc:  Linear solve %s due to %s iterations %d\n",
                c->p.claims ? "converged" : "did not converge", c->p.reason,
                c->p.iterations);
    }
    fflush(f);
    if (r->o->json)
        cmp_print_json(stdout, r, c);
    else
        cmp_print_table(stdout, r, c);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "petsc-write"))
        return pbin_write(argc - 2, argv + 2);
    if (argc > 1 && !strcmp(argv[1], "petsc-read"))
        return pbin_read(argc - 2, argv + 2);
    solve_opts o;
    const char *matrix = NULL;
    int rc = cli_solve_parse("compare-petsc", argc - 1, argv + 1, &o, &matrix);
    if (rc == CLI_EXIT_HELP) print_help();
    if (rc) return rc == CLI_EXIT_HELP ? CLI_EXIT_OK : rc;
    if ((rc = cmp_check(&o))) return rc;
    solve_run r = {.o = &o, .name = matrix ? matrix : o.gen};
    cmp_result c = {0};
    double *x0 = NULL, *xp = NULL;
    rc = cli_solve_load(&r);
    if (!rc) rc = keep_x0(&r, &x0, &xp);
    if (!rc) rc = run_krylov(&r, &c.k);
    if (!rc && cli_blocks_of(r.P, &c.blocks)) {
        cli_error("out of host memory for the block sizes");
        rc = CLI_EXIT_DEVICE;
    }
    if (!rc) rc = run_petsc(&r, x0, xp, &c);
    if (!rc) report(&r, &c, xp);
    if (!rc) rc = cli_solve_write(&r);
    if (!rc)
        rc = c.k.converged && c.p.converged ? CLI_EXIT_OK : CLI_EXIT_NOCONV;
    free(x0);
    free(xp);
    cli_solve_free(&r);
    return rc;
}
