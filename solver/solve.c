/* kr_solve: checks the arguments, handles b = 0, runs the method chosen by
 * name, recomputes the true residual at the end and restarts the method
 * from x when that residual does not confirm its convergence or when the
 * method broke down. Also the stopping test every method shares. */
#include "core/error.h"
#include "solver/solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const kr_solver_ops *const solvers[] = {
    &kr_cg_ops,
    &kr_gmres_ops,
    &kr_idr_ops,
    &kr_bicgstab_ops,
};

#define NSOLVERS (sizeof solvers / sizeof solvers[0])

const kr_solver_ops *kr_solver_find(const char *name)
{
    for (size_t i = 0; name && i < NSOLVERS; i++)
        if (strcmp(solvers[i]->name, name) == 0) return solvers[i];
    return NULL;
}

const char *const *kr_method_names(void)
{
    static const char *names[NSOLVERS + 1];
    for (size_t i = 0; i < NSOLVERS; i++)
        names[i] = solvers[i]->name;
    names[NSOLVERS] = NULL;
    return names;
}

void kr_solve_options_default(kr_solve_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->method = "idr";
    opt->rtol = 1e-8;
    opt->atol = 0.0;
    opt->dtol = 1e5;
    opt->maxit = 10000;
    opt->restart = 30;
    opt->s = 4;
    opt->kappa = 0.7;
    opt->seed = 1;
    opt->gap_restarts = 3;
    opt->breakdown_restarts = 3;
}

static kr_status check_options(kr_ctx *ctx, const kr_solve_options *o)
{
    if (!(o->rtol >= 0) || !(o->atol >= 0) || !(o->dtol >= 0))
        return kr_fail(ctx, KR_ERR_ARG,
                       "rtol, atol and dtol must be >= 0 (got %g, %g, %g)",
                       o->rtol, o->atol, o->dtol);
    if (o->maxit < 0)
        return kr_fail(ctx, KR_ERR_ARG, "maxit must be >= 0 (got %d)",
                       o->maxit);
    if (o->restart < 1 || o->restart > 1000)
        return kr_fail(ctx, KR_ERR_ARG, "restart must be in 1..1000 (got %d)",
                       o->restart);
    if (o->s < 1 || o->s > 64)
        return kr_fail(ctx, KR_ERR_ARG, "IDR s must be in 1..64 (got %d)",
                       o->s);
    if (!(o->kappa >= 0 && o->kappa < 1))
        return kr_fail(ctx, KR_ERR_ARG, "IDR kappa must be in [0, 1) (got %g)",
                       o->kappa);
    if (o->gap_restarts < 0 || o->gap_restarts > 100)
        return kr_fail(ctx, KR_ERR_ARG,
                       "gap_restarts must be in 0..100 (got %d)",
                       o->gap_restarts);
    if (o->breakdown_restarts < 0 || o->breakdown_restarts > 100)
        return kr_fail(ctx, KR_ERR_ARG,
                       "breakdown_restarts must be in 0..100 (got %d)",
                       o->breakdown_restarts);
    return KR_OK;
}

static kr_status check_args(kr_ctx *ctx, kr_matrix *A, kr_precond *P,
                            const kr_vec *b, kr_vec *x)
{
    if (!A || !P || !b || !x)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_solve: NULL matrix, "
                       "preconditioner or vector");
    if (A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG,
                       "cannot solve with a %d x %d matrix: "
                       "it is not square",
                       A->nrows, A->ncols);
    if (b->n != A->nrows || x->n != A->nrows || P->n != A->nrows)
        return kr_fail(ctx, KR_ERR_ARG,
                       "size mismatch: matrix n = %d, b has %d, x has %d, "
                       "preconditioner is for %d",
                       A->nrows, b->n, x->n, P->n);
    if (A->ctx != ctx || P->ctx != ctx || b->ctx != ctx || x->ctx != ctx)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_solve: objects from another "
                       "context");
    return KR_OK;
}

kr_status kr_norm2(kr_ctx *ctx, int32_t n, const double *x, double *nrm)
{
    double d;
    const double *xs[1] = {x};
    KR_TRY(ctx->ops->dots(ctx, n, 1, xs, xs, &d));
    *nrm = sqrt(d);
    return KR_OK;
}

/* ||b - A x||, in a temporary vector allocated outside the iteration. */
static kr_status true_residual(kr_solve_args *a, double *out)
{
    double *r;
    KR_TRY(kr_dev_zeros(a->ctx, (size_t)a->n, &r));
    kr_status st = a->ctx->ops->copy(a->ctx, r, a->b, (size_t)a->n * 8);
    if (st == KR_OK) st = kr_spmv(a, -1.0, a->x, 1.0, r);
    if (st == KR_OK) st = kr_norm2(a->ctx, a->n, r, out);
    kr_dev_free(a->ctx, r);
    return st;
}

/* 1 when the reason claims a convergence the true residual must confirm
 * (b = 0 needs no check: x = 0 is exact). */
static int claims_convergence(kr_reason r)
{
    return r > 0 && r != KR_CONVERGED_ZERO_RHS;
}

/* 1 when a breakdown is worth a restart from x, the usual remedy for the
 * Bi-CG family's breakdowns (BiCGSTAB's start-up takes r = b - A x as its
 * new shadow vector r0^): restarts are left, and this run made iterations
 * that brought ||b - A x|| (finite) below the residual it started from.
 * Otherwise a restart would start where this run started, or from a worse
 * x: a run that broke down before its first iteration (or made only null
 * steps) would break down again in the same way. */
static int breakdown_restart(const kr_solve_args *a, const kr_result *res)
{
    return res->reason == KR_DIVERGED_BREAKDOWN &&
           res->breakdown_restarts < a->opt->breakdown_restarts &&
           res->iterations > a->it0 && isfinite(res->true_rnorm) &&
           res->true_rnorm < a->run_r0norm;
}

/* After a run: 1 to restart the method from x (the restart counted), 0 to
 * stop with res->reason. A claim of convergence must be confirmed by the
 * true residual: round-off can make the recursive residual drift away
 * from b - A x (a residual gap). A claim it does not bear out restarts the
 * method, whose start-up recomputes r = b - A x (a residual replacement,
 * after van der Vorst & Ye), up to gap_restarts times; then the reason is
 * KR_DIVERGED_RESIDUAL_GAP. A breakdown restarts up to breakdown_restarts
 * times, when breakdown_restart says it can help. After a stop request
 * (kr_solve_options.interrupt) no restart begins: KR_INTERRUPTED. */
static int restart_due(const kr_solve_args *a, kr_result *res)
{
    int breakdown = breakdown_restart(a, res);
    int gap = !breakdown && claims_convergence(res->reason) &&
              !kr_solver_converged(a, res->true_rnorm);
    if (gap && res->true_residual_restarts >= a->opt->gap_restarts) {
        res->reason = KR_DIVERGED_RESIDUAL_GAP;
        return 0;
    }
    if (!breakdown && !gap) return 0;
    if (kr_solver_interrupted(a)) { /* no new run after a stop request */
        res->reason = KR_INTERRUPTED;
        return 0;
    }
    if (breakdown)
        res->breakdown_restarts++;
    else
        res->true_residual_restarts++;
    return 1;
}

/* Runs the method, then again from x while restart_due says so, with the
 * iterations left: the numbering continues from a->it0, so maxit, the
 * history and the monitor count the solve's iterations. */
static kr_status run_checked(kr_solve_args *a, const kr_solver_ops *method,
                             kr_result *res)
{
    for (;;) {
        KR_TRY(method->solve(a, res));
        KR_TRY(true_residual(a, &res->true_rnorm));
        if (!restart_due(a, res)) return KR_OK;
        a->it0 = res->iterations;
    }
}

static kr_status run(kr_solve_args *a, const kr_solver_ops *method,
                     kr_result *res)
{
    KR_TRY(kr_norm2(a->ctx, a->n, a->b, &a->bnorm));
    res->bnorm = a->bnorm;
    if (a->bnorm == 0.0) { /* the solution is x = 0, whatever x0 was */
        KR_TRY(a->ctx->ops->fill(a->ctx, a->n, 0.0, a->x));
        res->reason = KR_CONVERGED_ZERO_RHS;
        kr_solver_check(a, res, 0, 0.0);
        res->reason = KR_CONVERGED_ZERO_RHS;
        return KR_OK;
    }
    if (!isfinite(a->bnorm))
        return kr_fail(a->ctx, KR_ERR_FORMAT,
                       "right-hand side contains NaN "
                       "or Inf");
    return run_checked(a, method, res);
}

kr_status kr_solve(kr_ctx *ctx, kr_matrix *A, kr_precond *P, const kr_vec *b,
                   kr_vec *x, const kr_solve_options *opt, kr_result *res)
{
    if (!ctx || !res) return kr_fail(ctx, KR_ERR_ARG, "kr_solve: NULL");
    memset(res, 0, sizeof *res);
    kr_solve_options defaults;
    if (!opt) {
        kr_solve_options_default(&defaults);
        opt = &defaults;
    }
    KR_TRY(check_args(ctx, A, P, b, x));
    KR_TRY(check_options(ctx, opt));
    const kr_solver_ops *method = kr_solver_find(opt->method);
    if (!method) {
        char list[128];
        kr_join_names(kr_method_names(), list, sizeof list);
        return kr_fail(ctx, KR_ERR_ARG, "unknown method '%s' (valid: %s)",
                       opt->method ? opt->method : "(null)", list);
    }
    if (opt->keep_history) {
        res->history = malloc(((size_t)opt->maxit + 2) * sizeof(double));
        if (!res->history)
            return kr_fail(ctx, KR_ERR_NOMEM,
                           "out of memory "
                           "for the history");
    }
    kr_solve_args a = {.ctx = ctx,
                       .A = A,
                       .P = P,
                       .b = b->data,
                       .x = x->data,
                       .n = A->nrows,
                       .opt = opt};
    double t0 = kr_wtime();
    kr_status st = run(&a, method, res);
    res->solve_seconds = kr_wtime() - t0;
    return st;
}

void kr_result_free(kr_result *res)
{
    if (!res) return;
    free(res->history);
    res->history = NULL;
    res->history_len = 0;
}

kr_reason kr_solver_check(kr_solve_args *a, kr_result *res, int it,
                          double rnorm)
{
    const kr_solve_options *o = a->opt;
    int k = a->it0 + it; /* the solve's iteration number */
    res->iterations = k;
    res->rnorm = rnorm;
    if (k == 0) a->r0norm = rnorm;
    if (it == 0) a->run_r0norm = rnorm;
    /* indexed by k, so a restart's first residual replaces the entry of
     * the iteration it starts from and history_len stays iterations + 1 */
    if (res->history && k < o->maxit + 2) {
        res->history[k] = rnorm;
        res->history_len = k + 1;
    }
    if (o->monitor) o->monitor(k, rnorm, o->monitor_user);
    if (!isfinite(rnorm)) return KR_DIVERGED_NANORINF;
    if (kr_solver_converged(a, rnorm))
        return rnorm <= o->atol ? KR_CONVERGED_ATOL : KR_CONVERGED_RTOL;
    double ref = a->bnorm > a->r0norm ? a->bnorm : a->r0norm;
    if (o->dtol > 0 && rnorm > o->dtol * ref) return KR_DIVERGED_DTOL;
    if (kr_solver_interrupted(a)) return KR_INTERRUPTED;
    if (k >= o->maxit) return KR_DIVERGED_ITS;
    return KR_ITERATING;
}

kr_status kr_spmv(const kr_solve_args *a, double alpha, const double *x,
                  double beta, double *y)
{
    return a->A->ops->apply(a->ctx, a->A->impl, alpha, x, beta, y);
}

kr_status kr_pc(const kr_solve_args *a, const double *r, double *z)
{
    return a->P->ops->apply(a->ctx, a->P->impl, a->n, r, z);
}

kr_status kr_work_alloc(const kr_solve_args *a, int count, double **block)
{
    return kr_dev_zeros(a->ctx, (size_t)count * (size_t)a->n, block);
}

int kr_solver_interrupted(const kr_solve_args *a)
{
    return a->opt->interrupt && *a->opt->interrupt != 0;
}

int kr_solver_converged(const kr_solve_args *a, double rnorm)
{
    return rnorm <= a->opt->atol || rnorm <= a->opt->rtol * a->bnorm;
}
