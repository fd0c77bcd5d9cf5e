/* Preconditioned conjugate gradients (Hestenes & Stiefel) for SPD systems.
 * One iteration: q = A p; alpha = rho / (p.q); x += alpha p, r -= alpha q,
 * z = M^-1 r, rho' = r.z and ||r||^2 (one pass when M is diagonal, else
 * three); p = z + (rho'/rho) p. The residual tested is the unpreconditioned
 * r. With a diagonal M an iteration is four kernels: SpMV, p.q, the fused
 * update and the p update. */
#include "core/error.h"
#include "solver/solver.h"

#include <math.h>

enum { R, Z, P, Q, NWORK };

/* x += alpha p; r -= alpha q; z = M^-1 r; {r.z, r.r}. *zp is the array that
 * holds z afterwards (r itself when M is the identity). */
static kr_status cg_update(kr_solve_args *a, double alpha, const double *p,
                           const double *q, double *r, double *z,
                           const double **zp, double *rz_rr)
{
    kr_ctx *ctx = a->ctx;
    const double *d;
    if (a->P->ops->diagonal && a->P->ops->diagonal(a->P->impl, &d)) {
        *zp = d ? z : r;
        return ctx->ops->xr_update(ctx, a->n, alpha, p, q, a->x, r, d, z,
                                   rz_rr);
    }
    const double *xs[2] = {r, r}, *ys[2] = {z, r};
    *zp = z;
    KR_TRY(ctx->ops->axpy2(ctx, a->n, alpha, p, a->x, -alpha, q, r));
    KR_TRY(kr_pc(a, r, z));
    return ctx->ops->dots(ctx, a->n, 2, xs, ys, rz_rr);
}

static kr_status cg_iterate(kr_solve_args *a, kr_result *res, double *w)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    double *r = KR_WORK(w, n, R), *z = KR_WORK(w, n, Z);
    double *p = KR_WORK(w, n, P), *q = KR_WORK(w, n, Q);
    double rz_rr[2];
    const double *xs[2] = {r, r}, *ys[2] = {z, r};

    KR_TRY(op->copy(ctx, r, a->b, (size_t)n * 8)); /* r = b - A x */
    KR_TRY(kr_spmv(a, -1.0, a->x, 1.0, r));
    KR_TRY(kr_pc(a, r, z));
    KR_TRY(op->dots(ctx, n, 2, xs, ys, rz_rr));
    res->reason = kr_solver_check(a, res, 0, sqrt(rz_rr[1]));
    KR_TRY(op->copy(ctx, p, z, (size_t)n * 8));
    double rho = rz_rr[0];
    for (int it = 1; res->reason == KR_ITERATING; it++) {
        if (rho < 0 || !isfinite(rho)) {
            res->reason = isfinite(rho) ? KR_DIVERGED_INDEFINITE_PC
                                        : KR_DIVERGED_NANORINF;
            break;
        }
        double pq;
        const double *pp[1] = {p}, *qq[1] = {q};
        KR_TRY(kr_spmv(a, 1.0, p, 0.0, q));
        KR_TRY(op->dots(ctx, n, 1, pp, qq, &pq));
        if (!(pq > 0)) {
            res->reason = !isfinite(pq) ? KR_DIVERGED_NANORINF
                          : rho == 0    ? KR_DIVERGED_BREAKDOWN
                                        : KR_DIVERGED_INDEFINITE_MAT;
            break;
        }
        const double *zk;
        KR_TRY(cg_update(a, rho / pq, p, q, r, z, &zk, rz_rr));
        res->reason = kr_solver_check(a, res, it, sqrt(rz_rr[1]));
        if (res->reason != KR_ITERATING) break;
        double beta = rz_rr[0] / rho;
        rho = rz_rr[0];
        KR_TRY(op->axpby(ctx, n, 1.0, zk, beta, p));
    }
    return KR_OK;
}

static kr_status cg_solve(kr_solve_args *a, kr_result *res)
{
    return cg_iterate(a, res, a->work);
}

static void cg_workspace(const kr_solve_options *o, int32_t n, int *nvec,
                         size_t *nhost)
{
    (void)o, (void)n;
    *nvec = NWORK;
    *nhost = 0;
}

const kr_solver_ops kr_cg_ops = {
    .name = "cg",
    .summary = "conjugate gradients, for symmetric positive definite A",
    .solve = cg_solve,
    .workspace = cg_workspace,
};
