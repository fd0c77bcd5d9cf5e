/* kr_solve: checks the arguments, handles b = 0, runs the method chosen by
 * name, recomputes the true residual at the end and restarts the method
 * from x when that residual does not confirm its convergence or when the
 * method broke down. Also the stopping test every method shares. The run
 * itself works in memory a solver object (solver/ksp.c) allocated; kr_solve
 * makes one for the call. */
#include "core/error.h"
#include "solver/ksp.h"
#include "solver/solver.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define KR_METHOD_ENTRY(name) &kr_##name##_ops,
static const kr_solver_ops *const solvers[] = {KR_METHOD_LIST(KR_METHOD_ENTRY)};
#undef KR_METHOD_ENTRY

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
    opt->size = sizeof *opt;
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

/* The first layout with a size field ends before `interrupt`. */
#define KR_SOLVE_OPTIONS_MIN_SIZE offsetof(kr_solve_options, interrupt)

kr_status kr_solve_options_read(kr_ctx *ctx, const kr_solve_options *in,
                                kr_solve_options *out)
{
    kr_solve_options_default(out);
    if (!in) return KR_OK;
    if (in->size < KR_SOLVE_OPTIONS_MIN_SIZE || in->size > sizeof *out)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_solve_options.size is %zu, not %zu..%zu: set it "
                       "with kr_solve_options_default (a program built "
                       "against a newer krylov.h needs a newer library)",
                       in->size, (size_t)KR_SOLVE_OPTIONS_MIN_SIZE,
                       sizeof *out);
    memcpy(out, in, in->size);
    out->size = sizeof *out;
    return KR_OK;
}

kr_status kr_solve_check_options(kr_ctx *ctx, const kr_solve_options *o)
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

kr_status kr_solve_check_args(kr_ctx *ctx, kr_matrix *A, kr_precond *P,
                              const kr_vec *b, const kr_vec *x)
{
    if (!A) return kr_null_arg(ctx, "kr_solve", "the matrix A");
    if (!P) return kr_null_arg(ctx, "kr_solve", "the preconditioner P");
    if (!b) return kr_null_arg(ctx, "kr_solve", "b");
    if (!x) return kr_null_arg(ctx, "kr_solve", "x");
    if (b == x || b->data == x->data)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_solve: b and x are the same vector; x is "
                       "overwritten while b is still read, so they must be "
                       "distinct");
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

/* sum((s*x_i)^2) in a scratch vector: the slow path of kr_norm2, taken
 * only when the plain sum of squares under- or overflowed. */
static kr_status scaled_sumsq(kr_ctx *ctx, int32_t n, const double *x, double s,
                              double *out)
{
    double *t;
    KR_TRY(kr_dev_zeros(ctx, (size_t)n, &t));
    kr_status st = ctx->ops->axpby(ctx, n, s, x, 0.0, t);
    const double *ts[1] = {t};
    if (st == KR_OK) st = ctx->ops->dots(ctx, n, 1, ts, ts, out);
    kr_dev_free(ctx, t);
    return st;
}

/* Squares of entries below 2^-485 lose digits or vanish and squares above
 * 2^512 overflow, so a sum of squares outside [2^-970, DBL_MAX] is redone
 * on the vector scaled by 2^600 or 2^-600 (exact: powers of two), as BLAS
 * dnrm2 scales. The result is m * 2^e; a sum that is exactly 0 means every
 * entry is exactly 0 (the smallest subnormal scaled by 2^600 squares to a
 * normal number). */
kr_status kr_norm2_exp(kr_ctx *ctx, int32_t n, const double *x, double *m,
                       int *e)
{
    const double *xs[1] = {x};
    double d;
    *e = 0;
    KR_TRY(ctx->ops->dots(ctx, n, 1, xs, xs, &d));
    if (isnan(d) || (d >= 0x1p-970 && d <= DBL_MAX)) {
        *m = sqrt(d);
        return KR_OK;
    }
    int shift = d < 0x1p-970 ? 600 : -600;
    KR_TRY(scaled_sumsq(ctx, n, x, ldexp(1.0, shift), &d));
    *m = sqrt(d); /* inf here: x holds an Inf */
    *e = -shift;
    return KR_OK;
}

kr_status kr_norm2(kr_ctx *ctx, int32_t n, const double *x, double *nrm)
{
    double m;
    int e;
    KR_TRY(kr_norm2_exp(ctx, n, x, &m, &e));
    *nrm = ldexp(m, e);
    return KR_OK;
}

/* 1 when a sum of squares d is one whose square root is the norm as
 * kr_norm2_exp gives it (no scaling needed). */
static int plain_sumsq(double d)
{
    return isnan(d) || (d >= 0x1p-970 && d <= DBL_MAX);
}

/* r = b - A x into r, out[1] = r.r and, with want_bb, out[0] = b.b: one
 * launch over the CSR view of a small system on the GPU (residual_norms,
 * which makes both), else the copy, the SpMV and the dots. */
static kr_status residual_sums(kr_solve_args *a, double *r, int want_bb,
                               double *out)
{
    kr_ctx *ctx = a->ctx;
    kr_csr_view csr;
    const double *xs[2] = {a->b, r};
    if (ctx->ops->residual_norms && kr_dev_persists(a, &csr))
        return ctx->ops->residual_norms(ctx, &csr, a->b, a->x, r, out);
    KR_TRY(ctx->ops->copy(ctx, r, a->b, (size_t)a->n * 8));
    KR_TRY(kr_spmv(a, -1.0, a->x, 1.0, r));
    if (want_bb) return ctx->ops->dots(ctx, a->n, 2, xs, xs, out);
    return ctx->ops->dots(ctx, a->n, 1, xs + 1, xs + 1, out + 1);
}

void kr_solver_end_residual(kr_solve_args *a, double rr)
{
    a->true_ready = plain_sumsq(rr);
    a->true_rn = sqrt(rr);
}

/* ||b - A x||, in the vector set aside for it at setup; r and r.r stay
 * there for a restart's start (kr_start_residual). A method that ended
 * by computing it (args->true_ready) hands it over instead. */
static kr_status true_residual(kr_solve_args *a, double *out)
{
    double *r = a->check, d[2];
    a->check_ready = 0;
    if (a->true_ready) {
        a->true_ready = 0;
        *out = a->true_rn;
        return KR_OK;
    }
    KR_TRY(residual_sums(a, r, 0, d));
    double rr = d[1];
    if (!plain_sumsq(rr)) return kr_norm2(a->ctx, a->n, r, out);
    a->check_rr = rr;
    a->check_ready = 1;
    *out = sqrt(rr);
    return KR_OK;
}

kr_status kr_start_residual(kr_solve_args *a, double *r, double *rr)
{
    kr_ctx *ctx = a->ctx;
    size_t bytes = (size_t)a->n * sizeof(double);
    const double *rs[1] = {r};
    if (a->check_ready) {
        a->check_ready = 0;
        if (rr) *rr = a->check_rr;
        return r == a->check ? KR_OK : ctx->ops->copy(ctx, r, a->check, bytes);
    }
    KR_TRY(ctx->ops->copy(ctx, r, a->b, bytes));
    KR_TRY(kr_spmv(a, -1.0, a->x, 1.0, r));
    return rr ? ctx->ops->dots(ctx, a->n, 1, rs, rs, rr) : KR_OK;
}

kr_status kr_start_residual_norm(kr_solve_args *a, double *r, double *rnorm)
{
    double rr;
    KR_TRY(kr_start_residual(a, r, &rr));
    if (plain_sumsq(rr)) {
        *rnorm = sqrt(rr);
        return KR_OK;
    }
    return kr_norm2(a->ctx, a->n, r, rnorm);
}

/* ||b|| = m 2^e and, in the same round trip, r = b - A x into check with
 * its r.r for the first run's start: a short solve on the GPU pays one
 * host round trip for both instead of two. Where b.b needs scaling the
 * norm is redone as kr_norm2_exp does it, and the run computes r. */
static kr_status first_norms(kr_solve_args *a, double *m, int *e)
{
    kr_ctx *ctx = a->ctx;
    double d[2];
    KR_TRY(residual_sums(a, a->check, 1, d));
    *e = 0;
    *m = sqrt(d[0]);
    a->check_rr = d[1];
    a->check_ready = plain_sumsq(d[0]) && plain_sumsq(d[1]);
    return plain_sumsq(d[0]) ? KR_OK : kr_norm2_exp(ctx, a->n, a->b, m, e);
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
int kr_solver_restart_due(const kr_solve_args *a, kr_result *res)
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
        if (!kr_solver_restart_due(a, res)) return KR_OK;
        a->it0 = res->iterations;
    }
}

/* x = s*x in place (s a power of two: exact unless x under/overflows). */
static kr_status scale_in_place(kr_solve_args *a, double s, double *x)
{
    return a->ctx->ops->axpby(a->ctx, a->n, s, x, 0.0, x);
}

/* Runs the method on A (s x) = s b, s = 2^-e, when ||b|| = m 2^e lies
 * beyond 2^+-500: the methods' plain sums of squares would otherwise under-
 * or overflow. The tolerances scale with b, so the iterates are those of
 * the unscaled solve times s; x and the norms the user sees are scaled
 * back. Solves with ||b|| inside the range run unscaled, bit for bit. */
static kr_status run_scaled(kr_solve_args *a, const kr_solver_ops *method,
                            kr_result *res, int e)
{
    double s = ldexp(1.0, -e), *bs;
    kr_solve_options o = *a->opt;
    o.atol *= s;
    KR_TRY(kr_dev_zeros(a->ctx, (size_t)a->n, &bs));
    kr_status st = a->ctx->ops->axpby(a->ctx, a->n, s, a->b, 0.0, bs);
    if (st == KR_OK) st = scale_in_place(a, s, a->x);
    const double *b = a->b;
    const kr_solve_options *opt = a->opt;
    a->b = bs;
    a->opt = &o;
    a->bnorm = ldexp(a->bnorm_m, a->bnorm_e - e);
    a->scale = s;
    if (st == KR_OK) st = run_checked(a, method, res);
    if (st == KR_OK) st = scale_in_place(a, 1.0 / s, a->x);
    res->true_rnorm /= s;
    a->b = b;
    a->opt = opt;
    kr_dev_free(a->ctx, bs);
    return st;
}

kr_status kr_solver_run(kr_solve_args *a, const kr_solver_ops *method,
                        kr_result *res)
{
    int e;
    KR_TRY(first_norms(a, &a->bnorm_m, &e));
    a->bnorm_e = e;
    a->bnorm = ldexp(a->bnorm_m, e);
    res->bnorm = a->bnorm;
    if (a->bnorm_m == 0.0) { /* exactly 0: x = 0, whatever x0 was */
        KR_TRY(a->ctx->ops->fill(a->ctx, a->n, 0.0, a->x));
        res->reason = KR_CONVERGED_ZERO_RHS;
        kr_solver_check(a, res, 0, 0.0);
        res->reason = KR_CONVERGED_ZERO_RHS;
        return KR_OK;
    }
    if (!isfinite(a->bnorm_m))
        return kr_fail(a->ctx, KR_ERR_FORMAT,
                       "right-hand side contains NaN "
                       "or Inf");
    int be = ilogb(a->bnorm_m) + e; /* ||b|| in [2^be, 2^(be+1)) */
    if (be < -500 || be > 500) {
        a->check_ready = 0; /* the scaled run starts from s b - A s x */
        return run_scaled(a, method, res, be);
    }
    return run_checked(a, method, res);
}

kr_status kr_solve_find_method(kr_ctx *ctx, const char *name,
                               const kr_solver_ops **method)
{
    *method = kr_solver_find(name);
    if (*method) return KR_OK;
    char list[128];
    kr_join_names(kr_method_names(), list, sizeof list);
    return kr_fail(ctx, KR_ERR_ARG, "unknown method '%s' (valid: %s)",
                   name ? name : "(null)", list);
}

kr_status kr_solve(kr_ctx *ctx, kr_matrix *A, kr_precond *P, const kr_vec *b,
                   kr_vec *x, const kr_solve_options *opt, kr_result *res)
{
    if (!ctx) return KR_ERR_ARG;
    if (!res) return kr_null_arg(ctx, "kr_solve", "the result res");
    memset(res, 0, sizeof *res);
    kr_ksp k;
    kr_ksp_init(&k, ctx);
    KR_TRY(kr_solve_options_read(ctx, opt, &k.opt));
    KR_TRY(kr_solve_check_args(ctx, A, P, b, x));
    KR_TRY(kr_solve_check_options(ctx, &k.opt));
    KR_TRY(kr_solve_find_method(ctx, k.opt.method, &k.method));
    k.A = A;
    k.P = P;
    kr_status st = kr_ksp_setup(&k);
    if (st == KR_OK) st = kr_ksp_run(&k, b, x, res);
    kr_ksp_release(&k);
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
    int k = a->it0 + it;             /* the solve's iteration number */
    double shown = rnorm / a->scale; /* the norm of the unscaled problem */
    res->iterations = k;
    res->rnorm = shown;
    if (k == 0) a->r0norm = rnorm;
    if (it == 0) a->run_r0norm = rnorm;
    /* indexed by k, so a restart's first residual replaces the entry of
     * the iteration it starts from and history_len stays iterations + 1 */
    if (res->history && k < o->maxit + 2) {
        res->history[k] = shown;
        res->history_len = k + 1;
    }
    int stop = o->monitor ? o->monitor(k, shown, o->monitor_user) : 0;
    if (!isfinite(rnorm)) return KR_DIVERGED_NANORINF;
    if (kr_solver_converged(a, rnorm))
        return rnorm <= o->atol ? KR_CONVERGED_ATOL : KR_CONVERGED_RTOL;
    double ref = a->bnorm > a->r0norm ? a->bnorm : a->r0norm;
    if (o->dtol > 0 && rnorm > o->dtol * ref) return KR_DIVERGED_DTOL;
    if (stop || (kr_solver_interrupted(a) && !a->defer_interrupt))
        return KR_INTERRUPTED;
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

int kr_solver_interrupted(const kr_solve_args *a)
{
    return a->opt->interrupt && *a->opt->interrupt != 0;
}

int kr_solver_converged(const kr_solve_args *a, double rnorm)
{
    return rnorm <= a->opt->atol || rnorm <= a->opt->rtol * a->bnorm;
}
