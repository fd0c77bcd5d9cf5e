/* GMRES(m) (Saad & Schultz 1986), restarted and right-preconditioned: it
 * solves A M^-1 u = b with x = M^-1 u, so the residual it minimises is the
 * unpreconditioned b - A x. Arnoldi by classical Gram-Schmidt with one
 * re-orthogonalisation (two gemv_t/gemv_n pairs per step, which suits the
 * GPU), Givens rotations on the host; |g_{j+1}| is the residual estimate
 * tested at each step. Only V is stored: M^-1 is applied once to V y at the
 * end of a cycle. Every cycle starts from the true residual b - A x. */
#include "core/error.h"
#include "solver/solver.h"

#include <math.h>
#include <stdlib.h>

/* H(j+1,j) below this times the column's norm: A M^-1 v_j lies in the
 * space already built (round-off level after two orthogonalisations). */
#define GM_HAPPY_TOL 1e-14

/* The small dense work, on the host, allocated at setup. */
typedef struct gm_host {
    int m;
    double *H;  /* (m+1) x m column-major; upper triangle becomes R */
    double *cs; /* m rotation cosines */
    double *sn; /* m rotation sines */
    double *g;  /* m+1: the rotated right-hand side beta e_1 */
    double *y;  /* m: coefficients of the update */
    double *h2; /* m+1: second Gram-Schmidt pass */
} gm_host;

static double *col(const gm_host *w, int j)
{
    return w->H + (size_t)j * (size_t)(w->m + 1);
}

/* r = b - A x into r, and ||r|| */
static kr_status residual(kr_solve_args *a, double *r, double *beta)
{
    kr_ctx *ctx = a->ctx;
    const double *rs[1] = {r};
    double rr;
    KR_TRY(ctx->ops->copy(ctx, r, a->b, (size_t)a->n * sizeof(double)));
    KR_TRY(kr_spmv(a, -1.0, a->x, 1.0, r));
    KR_TRY(ctx->ops->dots(ctx, a->n, 1, rs, rs, &rr));
    *beta = sqrt(rr);
    return KR_OK;
}

/* v_{j+1} = A M^-1 v_j orthogonalised against v_0..v_j (not yet
 * normalised); column j of H gets the coefficients and the norm. */
static kr_status arnoldi(kr_solve_args *a, gm_host *w, double *V, int j,
                         double *z)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    int64_t ld = n;
    double *v = KR_WORK(V, n, j + 1), *h = col(w, j), vv;
    const double *vs[1] = {v};
    KR_TRY(kr_pc(a, KR_WORK(V, n, j), z));
    KR_TRY(kr_spmv(a, 1.0, z, 0.0, v));
    KR_TRY(op->gemv_t(ctx, n, j + 1, V, ld, v, h));
    KR_TRY(op->gemv_n(ctx, n, j + 1, V, ld, h, -1.0, v));
    KR_TRY(op->gemv_t(ctx, n, j + 1, V, ld, v, w->h2));
    KR_TRY(op->gemv_n(ctx, n, j + 1, V, ld, w->h2, -1.0, v));
    for (int i = 0; i <= j; i++)
        h[i] += w->h2[i];
    KR_TRY(op->dots(ctx, n, 1, vs, vs, &vv));
    h[j + 1] = sqrt(vv);
    return KR_OK;
}

/* 1 if H(j+1,j) is negligible against column j: a happy breakdown. */
static int is_happy(const gm_host *w, int j)
{
    const double *h = col(w, j);
    double s = 0.0;
    for (int i = 0; i <= j + 1; i++)
        s += h[i] * h[i];
    return h[j + 1] <= GM_HAPPY_TOL * sqrt(s);
}

/* Rotates column j by the previous rotations, makes the one that zeroes
 * H(j+1,j) and applies it to g. Returns 0 if R(j,j) would be 0. */
static int givens(gm_host *w, int j)
{
    double *h = col(w, j);
    for (int i = 0; i < j; i++) {
        double t = w->cs[i] * h[i] + w->sn[i] * h[i + 1];
        h[i + 1] = -w->sn[i] * h[i] + w->cs[i] * h[i + 1];
        h[i] = t;
    }
    double d = hypot(h[j], h[j + 1]);
    if (d == 0.0) return 0;
    w->cs[j] = h[j] / d;
    w->sn[j] = h[j + 1] / d;
    h[j] = d;
    h[j + 1] = 0.0;
    w->g[j + 1] = -w->sn[j] * w->g[j];
    w->g[j] = w->cs[j] * w->g[j];
    return 1;
}

/* x += M^-1 V_k y with R y = g (k columns); t and z are work vectors. */
static kr_status update_x(kr_solve_args *a, gm_host *w, const double *V, int k,
                          double *t, double *z)
{
    kr_ctx *ctx = a->ctx;
    int32_t n = a->n;
    for (int i = k - 1; i >= 0; i--) {
        double s = w->g[i];
        for (int l = i + 1; l < k; l++)
            s -= col(w, l)[i] * w->y[l];
        w->y[i] = s / col(w, i)[i];
    }
    KR_TRY(ctx->ops->axpby(ctx, n, w->y[0], V, 0.0, t));
    if (k > 1)
        KR_TRY(ctx->ops->gemv_n(ctx, n, k - 1, KR_WORK(V, n, 1), n, w->y + 1,
                                1.0, t));
    KR_TRY(kr_pc(a, t, z));
    return ctx->ops->axpby(ctx, n, 1.0, z, 1.0, a->x);
}

/* One cycle of at most m steps from v_0 = r / beta (r in V's column 0).
 * Updates x unless a norm became NaN/Inf; *happy says how it ended. */
static kr_status cycle(kr_solve_args *a, kr_result *res, gm_host *w, double *V,
                       int *it, double beta, int *happy)
{
    kr_ctx *ctx = a->ctx;
    int32_t n = a->n;
    double *t = KR_WORK(V, n, w->m + 1), *z = KR_WORK(V, n, w->m + 2);
    int k = 0;
    KR_TRY(ctx->ops->axpby(ctx, n, 1.0 / beta, V, 0.0, V));
    w->g[0] = beta;
    *happy = 0;
    for (int j = 0; j < w->m; j++) {
        KR_TRY(arnoldi(a, w, V, j, z));
        double hn = col(w, j)[j + 1];
        *happy = is_happy(w, j);
        if (!givens(w, j)) { /* singular H: no better iterate here */
            res->reason = KR_DIVERGED_BREAKDOWN;
            break;
        }
        k = j + 1;
        res->reason = kr_solver_check(a, res, ++*it, fabs(w->g[j + 1]));
        if (res->reason != KR_ITERATING || *happy || k == w->m) break;
        double *v = KR_WORK(V, n, j + 1);
        KR_TRY(ctx->ops->axpby(ctx, n, 1.0 / hn, v, 0.0, v));
    }
    if (k == 0 || res->reason == KR_DIVERGED_NANORINF) return KR_OK;
    return update_x(a, w, V, k, t, z);
}

/* Restarts until the stopping test ends it. After a cycle the true
 * residual decides: below the tolerance it ends the solve (as a happy
 * breakdown if the cycle ended in one), otherwise the next cycle starts
 * from it. res->rnorm stays the last estimate tested, as in the history;
 * the true residual is reported as res->true_rnorm. */
static kr_status iterate(kr_solve_args *a, kr_result *res, gm_host *w,
                         double *V)
{
    int it = 0, happy;
    double beta;
    KR_TRY(residual(a, V, &beta));
    res->reason = kr_solver_check(a, res, 0, beta);
    while (res->reason == KR_ITERATING) {
        KR_TRY(cycle(a, res, w, V, &it, beta, &happy));
        if (res->reason != KR_ITERATING) break;
        KR_TRY(residual(a, V, &beta));
        if (!isfinite(beta))
            res->reason = KR_DIVERGED_NANORINF;
        else if (kr_solver_converged(a, beta))
            res->reason = happy                  ? KR_CONVERGED_HAPPY_BREAKDOWN
                          : beta <= a->opt->atol ? KR_CONVERGED_ATOL
                                                 : KR_CONVERGED_RTOL;
    }
    return KR_OK;
}

static kr_status gmres_solve(kr_solve_args *a, kr_result *res)
{
    int m = a->opt->restart;
    size_t mm = (size_t)m;
    gm_host w = {.m = m, .H = a->hwork};
    w.cs = w.H + (mm + 1) * mm;
    w.sn = w.cs + mm;
    w.g = w.sn + mm;
    w.y = w.g + mm + 1;
    w.h2 = w.y + mm;
    return iterate(a, res, &w, a->work);
}

/* V's m+1 columns, then t and z; H, cs, sn, g, y and h2 on the host */
static void gmres_workspace(const kr_solve_options *o, int32_t n, int *nvec,
                            size_t *nhost)
{
    (void)n;
    size_t mm = (size_t)o->restart;
    *nvec = o->restart + 3;
    *nhost = (mm + 1) * mm + 5 * mm + 2;
}

const kr_solver_ops kr_gmres_ops = {
    .name = "gmres",
    .summary = "restarted GMRES(m), right-preconditioned, for any A",
    .solve = gmres_solve,
    .workspace = gmres_workspace,
};
