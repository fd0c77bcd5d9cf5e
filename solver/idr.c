/* IDR(s) with bi-orthogonalisation (van Gijzen & Sonneveld, ACM TOMS 38(1)
 * 2011, Algorithm 913), right-preconditioned, so r is the unpreconditioned
 * b - A x. A cycle makes s steps that keep r orthogonal to a growing part of
 * the shadow space P (G = A U, M = P^T G lower triangular, f = P^T r), then
 * one dimension-reduction step with omega chosen by "maintaining the
 * convergence" (kappa). Every mat-vec is one iteration and every update of
 * r is tested. P: s seeded normal random vectors, orthonormalised. */
#include "core/error.h"
#include "solver/multi.h"
#include "solver/solver.h"

#include <math.h>
#include <stdlib.h>

/* The small dense work, on the host, allocated at setup. */
typedef struct idr_host {
    int s;
    double *M; /* s x s column-major, P^T G; lower triangular */
    double *f; /* s: P^T r */
    double *c; /* s: solution of the small system */
    double *h; /* s: projections P^T g */
} idr_host;

/* Device work: r, v, v^ = M^-1 v, then the blocks P, G, U of s columns. */
enum { R, V, VH, NVEC };

typedef struct idr_dev {
    double *r, *v, *vh, *P, *G, *U;
} idr_dev;

static double *column(double *B, int32_t n, int j) { return KR_WORK(B, n, j); }

/* P = s seeded random columns (uniform in [-1, 1), generated where they
 * live, the same numbers on every backend), orthonormalised by modified
 * Gram-Schmidt. Generating them on the host cost more than the whole solve
 * on a GPU. */
kr_status kr_idr_shadow_space(kr_ctx *ctx, int32_t n, int s, uint64_t seed0,
                              double *P)
{
    for (int j = 0; j < s; j++) {
        double *pj = column(P, n, j), d, nrm;
        uint64_t seed = seed0 + 0x632be59bd9b4e019ull * (uint64_t)j;
        KR_TRY(ctx->ops->fill_random(ctx, n, seed, pj));
        for (int i = 0; i < j; i++) {
            const double *xs[1] = {column(P, n, i)}, *ys[1] = {pj};
            KR_TRY(ctx->ops->dots(ctx, n, 1, xs, ys, &d));
            KR_TRY(ctx->ops->axpby(ctx, n, -d, xs[0], 1.0, pj));
        }
        KR_TRY(kr_norm2(ctx, n, pj, &nrm));
        if (!(nrm > 0))
            return kr_fail(ctx, KR_ERR_BREAKDOWN,
                           "idr: shadow vector %d is dependent on the others",
                           j);
        KR_TRY(ctx->ops->axpby(ctx, n, 1.0 / nrm, pj, 0.0, pj));
    }
    return KR_OK;
}

/* c = M(k:s,k:s) \ f(k:s), M lower triangular (s x s column-major) */
void kr_idr_solve_small(int s, const double *M, const double *f, double *c,
                        int k)
{
    for (int i = k; i < s; i++) {
        double t = f[i];
        for (int j = k; j < i; j++)
            t -= M[i + j * s] * c[j - k];
        c[i - k] = t / M[i + i * s];
    }
}

/* h = M(0:k,0:k) \ h: the bi-orthogonalisation coefficients */
void kr_idr_lower_solve(int s, const double *M, double *h, int k)
{
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < i; j++)
            h[i] -= M[i + j * s] * h[j];
        h[i] /= M[i + i * s];
    }
}

/* u_k = U(:,k:s) c + om M^-1 (r - G(:,k:s) c), g_k = A u_k: a vector of
 * the next space G_j, before bi-orthogonalisation. */
static kr_status new_direction(kr_solve_args *a, idr_dev *d, idr_host *w, int k,
                               double om)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    int rest = w->s - k;
    double *uk = column(d->U, n, k);
    KR_TRY(op->copy(ctx, d->v, d->r, (size_t)n * sizeof(double)));
    KR_TRY(op->gemv_n(ctx, n, rest, column(d->G, n, k), n, w->c, -1.0, d->v));
    KR_TRY(kr_pc(a, d->v, d->vh));
    KR_TRY(op->axpby(ctx, n, om, d->vh, w->c[0], uk));
    if (rest > 1)
        KR_TRY(op->gemv_n(ctx, n, rest - 1, column(d->U, n, k + 1), n, w->c + 1,
                          1.0, uk));
    return kr_spmv(a, 1.0, uk, 0.0, column(d->G, n, k));
}

/* Makes g_k orthogonal to p_0..p_{k-1} (u_k alongside, so g_k = A u_k
 * stays true) and fills column k of M. The coefficients solve the lower
 * triangular system M(0:k,0:k) alpha = P(:,0:k)^T g_k, which is what the
 * paper's one-at-a-time loop computes, with one reduction instead of k. */
static kr_status biorthogonalise(kr_ctx *ctx, int32_t n, idr_dev *d,
                                 idr_host *w, int k)
{
    const kr_backend_ops *op = ctx->ops;
    int s = w->s;
    double *gk = column(d->G, n, k), *uk = column(d->U, n, k);
    if (k > 0) {
        KR_TRY(op->gemv_t(ctx, n, k, d->P, n, gk, w->h));
        kr_idr_lower_solve(s, w->M, w->h, k);
        KR_TRY(op->gemv_n(ctx, n, k, d->G, n, w->h, -1.0, gk));
        KR_TRY(op->gemv_n(ctx, n, k, d->U, n, w->h, -1.0, uk));
    }
    for (int i = 0; i < k; i++)
        w->M[i + k * s] = 0.0;
    return op->gemv_t(ctx, n, s - k, column(d->P, n, k), n, gk,
                      w->M + k + k * s);
}

/* omega minimising ||r - omega t||, enlarged when t and r are nearly
 * orthogonal (|cos| < kappa) so that the step keeps reducing r. */
double kr_idr_omega(double tr, double tt, double rnorm, double kappa)
{
    double rho = fabs(tr) / (sqrt(tt) * rnorm), om = tr / tt;
    return rho < kappa ? om * kappa / rho : om;
}

/* One IDR cycle: s bi-orthogonal steps, then the dimension reduction.
 * *om carries omega from cycle to cycle. */
static kr_status cycle(kr_solve_args *a, kr_result *res, idr_dev *d,
                       idr_host *w, int *it, double *om)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    int s = w->s;
    double rnorm = 0.0, tr_tt[2];
    KR_TRY(op->gemv_t(ctx, n, s, d->P, n, d->r, w->f));
    for (int k = 0; k < s; k++) {
        kr_idr_solve_small(s, w->M, w->f, w->c, k);
        KR_TRY(new_direction(a, d, w, k, *om));
        KR_TRY(biorthogonalise(ctx, n, d, w, k));
        double mkk = w->M[k + k * s];
        if (mkk == 0.0) { /* g_k orthogonal to p_k: no step possible */
            res->reason = KR_DIVERGED_BREAKDOWN;
            return KR_OK;
        }
        double beta = w->f[k] / mkk;
        double rr[2]; /* x += beta u_k; r -= beta g_k; with r.r */
        KR_TRY(op->xr_update(ctx, n, beta, column(d->U, n, k),
                             column(d->G, n, k), a->x, d->r, NULL, NULL, rr));
        rnorm = sqrt(rr[1]);
        res->reason = kr_solver_check(a, res, ++*it, rnorm);
        if (res->reason != KR_ITERATING) return KR_OK;
        for (int i = k + 1; i < s; i++)
            w->f[i] -= beta * w->M[i + k * s];
    }
    const double *xs[2] = {d->v, d->v}, *ys[2] = {d->r, d->v};
    KR_TRY(kr_pc(a, d->r, d->vh));
    KR_TRY(kr_spmv(a, 1.0, d->vh, 0.0, d->v));
    KR_TRY(op->dots(ctx, n, 2, xs, ys, tr_tt));
    if (tr_tt[0] == 0.0 || tr_tt[1] == 0.0) { /* omega would be 0 */
        res->reason = KR_DIVERGED_BREAKDOWN;
        return KR_OK;
    }
    *om = kr_idr_omega(tr_tt[0], tr_tt[1], rnorm, a->opt->kappa);
    double rr[2]; /* x += om vh; r -= om v; with r.r */
    KR_TRY(op->xr_update(ctx, n, *om, d->vh, d->v, a->x, d->r, NULL, NULL, rr));
    rnorm = sqrt(rr[1]);
    res->reason = kr_solver_check(a, res, ++*it, rnorm);
    return KR_OK;
}

static kr_status iterate(kr_solve_args *a, kr_result *res, idr_dev *d,
                         idr_host *w)
{
    kr_ctx *ctx = a->ctx;
    int32_t n = a->n;
    int it = 0, s = w->s;
    double rnorm, om = 1.0;
    KR_TRY(ctx->ops->copy(ctx, d->r, a->b, (size_t)n * sizeof(double)));
    KR_TRY(kr_spmv(a, -1.0, a->x, 1.0, d->r));
    KR_TRY(kr_norm2(ctx, n, d->r, &rnorm));
    res->reason = kr_solver_check(a, res, 0, rnorm);
    if (res->reason != KR_ITERATING) return KR_OK;
    KR_TRY(kr_idr_shadow_space(ctx, n, s, a->opt->seed, d->P));
    /* the first cycle reads columns of U and G it has not written yet:
     * they start at 0 on every run, whatever the last solve left there */
    for (int j = 0; j < s; j++) {
        KR_TRY(ctx->ops->fill(ctx, n, 0.0, column(d->U, n, j)));
        KR_TRY(ctx->ops->fill(ctx, n, 0.0, column(d->G, n, j)));
    }
    for (int i = 0; i < s * s; i++)
        w->M[i] = i % (s + 1) == 0; /* M = I */
    while (res->reason == KR_ITERATING)
        KR_TRY(cycle(a, res, d, w, &it, &om));
    return KR_OK;
}

/* P cannot hold more than n independent vectors */
int kr_idr_shadow_dim(const kr_solve_options *o, int32_t n)
{
    return o->s < n ? o->s : (int)n;
}

static kr_status idr_solve(kr_solve_args *a, kr_result *res)
{
    int s = kr_idr_shadow_dim(a->opt, a->n);
    size_t ss = (size_t)s;
    idr_host w = {.s = s, .M = a->hwork};
    double *work = a->work;
    w.f = w.M + ss * ss;
    w.c = w.f + ss;
    w.h = w.c + ss;
    idr_dev d = {.r = column(work, a->n, R),
                 .v = column(work, a->n, V),
                 .vh = column(work, a->n, VH),
                 .P = column(work, a->n, NVEC),
                 .G = column(work, a->n, NVEC + s),
                 .U = column(work, a->n, NVEC + 2 * s)};
    return iterate(a, res, &d, &w);
}

/* r, v, v^, then P, G and U (s columns each); host: M (s x s), f, c, h */
static void idr_workspace(const kr_solve_options *o, int32_t n, int *nvec,
                          size_t *nhost)
{
    size_t ss = (size_t)kr_idr_shadow_dim(o, n);
    *nvec = NVEC + 3 * (int)ss;
    *nhost = ss * ss + 3 * ss + 1;
}

const kr_solver_ops kr_idr_ops = {
    .name = "idr",
    .summary = "IDR(s) with bi-orthogonalisation, right-preconditioned",
    .solve = idr_solve,
    .workspace = idr_workspace,
    .solve_multi = kr_idr_solve_multi,
    .workspace_multi = kr_idr_workspace_multi,
};
