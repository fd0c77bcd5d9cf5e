/* Krylov methods as plug-ins, registered by name in solver/registry.c, and
 * the stopping test they share. */
#ifndef KR_SOLVER_SOLVER_H
#define KR_SOLVER_SOLVER_H

#include "core/vec.h"
#include "precond/precond.h"
#include "spmv/format.h"

/* What a method sees: the operator, the preconditioner, the options, and
 * the stopping test's thresholds, already computed from ||b||. */
typedef struct kr_solve_args {
    kr_ctx *ctx;
    kr_matrix *A;
    kr_precond *P;
    const double *b; /* backend memory, n entries */
    double *x;       /* backend memory, n entries; initial guess on entry */
    int32_t n;
    const kr_solve_options *opt;
    double bnorm;
    double r0norm;     /* ||r_0||, set by kr_solver_check at iteration 0 */
    double run_r0norm; /* ||b - A x|| this run started from (its first
                          residual, set by kr_solver_check at it = 0) */
    int it0;           /* iterations done before this run (a restart from x
                          after a residual gap or a breakdown): methods count
                          from 0, kr_solver_check numbers from it0 */
} kr_solve_args;

typedef struct kr_solver_ops {
    const char *name;
    const char *summary;
    /* Runs the iteration from the x in args (any x0: the method starts
     * from r = b - A x). Sets res->reason, iterations and rnorm; records
     * every residual through kr_solver_check. */
    kr_status (*solve)(kr_solve_args *args, kr_result *res);
} kr_solver_ops;

const kr_solver_ops *kr_solver_find(const char *name);

extern const kr_solver_ops kr_cg_ops;
extern const kr_solver_ops kr_gmres_ops;
extern const kr_solver_ops kr_idr_ops;
extern const kr_solver_ops kr_bicgstab_ops;

/* The stopping test for the method's iteration `it` (0 at its start), that
 * is iteration a->it0 + it of the solve, with residual norm rnorm: records
 * it (monitor, history[a->it0 + it]) and returns KR_ITERATING or the
 * reason to stop: rtol/atol met, NaN/Inf, divergence, or maxit reached. */
kr_reason kr_solver_check(kr_solve_args *a, kr_result *res, int it,
                          double rnorm);

/* 1 when the caller asked the solve to stop (kr_solve_options.interrupt);
 * kr_solver_check tests it at every iteration. */
int kr_solver_interrupted(const kr_solve_args *a);

/* 1 when rnorm meets the tolerance, max(rtol*||b||, atol). */
int kr_solver_converged(const kr_solve_args *a, double rnorm);

/* ||x||_2 through the backend's fused dots. */
kr_status kr_norm2(kr_ctx *ctx, int32_t n, const double *x, double *nrm);

/* Shorthands for the backend kernels on arrays of length n. */
kr_status kr_spmv(const kr_solve_args *a, double alpha, const double *x,
                  double beta, double *y);
kr_status kr_pc(const kr_solve_args *a, const double *r, double *z);
/* Allocates `count` work vectors of n doubles in one block (zeroed). */
kr_status kr_work_alloc(const kr_solve_args *a, int count, double **block);
#define KR_WORK(block, n, i) ((block) + (size_t)(i) * (size_t)(n))

#endif
