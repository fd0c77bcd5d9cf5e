/* krylov-petsc, the program behind `krylov compare-petsc`: one problem
 * loaded as `krylov solve` loads it, solved by krylov and by PETSc KSP with
 * the same settings, compared in one table. Built only where PETSc is
 * installed, so that neither libkrylov nor the krylov command needs it. */
#ifndef KR_DRIVERS_PETSC_COMPARE_H
#define KR_DRIVERS_PETSC_COMPARE_H

#include "drivers/block_summary.h"
#include "drivers/solve.h"

#include <stdio.h>

/* What one side (krylov or PETSc) reports. */
typedef struct cmp_side {
    const char *reason; /* in its own words: CONVERGED_RTOL, ...        */
    int claims;         /* its reason is a converged one                 */
    int converged;      /* it claims so and its true residual bears it
                           out: ||b - A x|| <= max(rtol ||b||, atol)     */
    int iterations;
    double true_rel; /* ||b - A x|| / ||b|| on the host, from its x  */
    double setup_s;  /* matrix (and preconditioner) build            */
    double solve_s;  /* the solve alone                              */
    char ksp[32];    /* its method: "cg", "KSPCG"                    */
    char pc[32];     /* its preconditioner                           */
    /* PETSc: its PCFailedReason name when the PC setup failed (a zero
     * pivot in a block), else NULL; always NULL for krylov */
    const char *pc_failed;
} cmp_side;

/* The whole comparison. */
typedef struct cmp_result {
    cmp_side k, p;    /* krylov, PETSc                                 */
    double xdiff;     /* ||x_krylov - x_petsc|| / ||x_petsc||          */
    const char *note; /* a caveat for this method, or NULL             */
    char petsc_version[64];
    /* krylov's diagonal blocks (bjacobi; count 0 otherwise), the partition
     * PETSc's PCVPBJACOBI is given, and how many krylov replaced */
    cli_blocks blocks;
} cmp_result;

/* 0 when the method and preconditioner have PETSc counterparts, else a
 * usage error (printed). */
int cmp_check(const solve_opts *o);

/* Solves r's problem with PETSc (PetscInitialize already done) from the
 * initial guess x0 into x, filling c->p and c->note (a caveat or NULL);
 * with bjacobi, PETSc's PCVPBJACOBI gets the blocks of krylov's built
 * preconditioner r->P. Returns 0, or an exit code after printing an
 * error. */
int cmp_petsc_solve(const solve_run *r, const double *x0, double *x,
                    cmp_result *c);

/* 1 when both sides apply the same preconditioner: always, except that
 * with bjacobi krylov may have replaced singular blocks and PETSc's LU may
 * have met a zero pivot. */
int cmp_same_precond(const cmp_result *c);

/* ||b - A x|| / ||b|| (||b - A x|| when b = 0). */
double cmp_true_rel(const kr_csr *A, const double *b, const double *x);
/* Judges a side by its true residual: sets s->converged from s->claims
 * and s->true_rel against max(rtol ||b||, atol). */
void cmp_judge(const solve_run *r, cmp_side *s);

/* ||x - y|| / ||y|| (||x - y|| when y = 0). */
double cmp_rel_diff(const double *x, const double *y, int32_t n);

void cmp_print_table(FILE *f, const solve_run *r, const cmp_result *c);
void cmp_print_json(FILE *f, const solve_run *r, const cmp_result *c);

#endif
