/* CG over k columns (kr_solve_multi): cg.c's iteration with a scalar per
 * column, one SpMM per iteration, the fused update (diagonal
 * preconditioner) or the preconditioner over the k columns at once. */
#include "core/error.h"
#include "solver/multi.h"

#include <math.h>

enum { R, Z, P, Q, NWORK };

typedef struct cg_cols {
    double rho[KR_MULTI_MAX], alpha[KR_MULTI_MAX], beta[KR_MULTI_MAX];
    double one[KR_MULTI_MAX], minus[KR_MULTI_MAX];
    double rz[2 * KR_MULTI_MAX]; /* r.z of column j at j, r.r at k + j */
} cg_cols;

/* x += alpha p; r -= alpha q; z = M^-1 r; {r.z, r.r}: cg_update per
 * column; *zk is the block that holds z afterwards */
static kr_status update(kr_multi *m, cg_cols *c, const double **zk)
{
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k;
    double *r = kr_multi_block(m, R), *z = kr_multi_block(m, Z);
    double *p = kr_multi_block(m, P), *q = kr_multi_block(m, Q);
    const double *d;
    if (m->P->ops->diagonal && m->P->ops->diagonal(m->P->impl, &d)) {
        *zk = d ? z : r;
        return ctx->ops->mxr_update(ctx, n, k, c->alpha, p, q, m->X, r, d, z,
                                    m->run, c->rz);
    }
    const double *xs[2] = {r, r}, *ys[2] = {z, r};
    double na[KR_MULTI_MAX];
    for (int j = 0; j < k; j++)
        na[j] = -c->alpha[j];
    *zk = z;
    KR_TRY(ctx->ops->maxpby(ctx, n, k, c->alpha, p, c->one, m->X, m->run));
    KR_TRY(ctx->ops->maxpby(ctx, n, k, na, q, c->one, r, m->run));
    KR_TRY(kr_multi_pc(m, m->run, r, z));
    return ctx->ops->mdots(ctx, n, k, 2, xs, ys, m->run, c->rz);
}

/* p.q and alpha per column; the columns without one stop */
static kr_status alpha_step(kr_multi *m, cg_cols *c)
{
    double *p = kr_multi_block(m, P), *q = kr_multi_block(m, Q);
    const double *ps[1] = {p}, *qs[1] = {q};
    double pq[KR_MULTI_MAX];
    KR_TRY(kr_multi_spmm(m, m->run, p, q));
    KR_TRY(m->ctx->ops->mdots(m->ctx, m->n, m->k, 1, ps, qs, m->run, pq));
    KR_FOR_COLS(j, m->run, m->k)
    {
        if (pq[j] > 0)
            c->alpha[j] = c->rho[j] / pq[j];
        else
            kr_multi_stop(m, j,
                          !isfinite(pq[j]) ? KR_DIVERGED_NANORINF
                          : c->rho[j] == 0 ? KR_DIVERGED_BREAKDOWN
                                           : KR_DIVERGED_INDEFINITE_MAT);
    }
    return KR_OK;
}

kr_status kr_cg_solve_multi(kr_multi *m)
{
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k;
    double *r = kr_multi_block(m, R), *z = kr_multi_block(m, Z);
    double *p = kr_multi_block(m, P);
    const double *xs[2] = {r, r}, *ys[2] = {z, r}, *zk;
    cg_cols c;
    kr_multi_fill(c.one, k, 1.0);
    kr_multi_fill(c.minus, k, -1.0);
    KR_TRY(kr_multi_residual(m, m->run, r));
    KR_TRY(kr_multi_pc(m, m->run, r, z));
    KR_TRY(ctx->ops->mdots(ctx, n, k, 2, xs, ys, m->run, c.rz));
    KR_FOR_COLS(j, m->run, k)
    {
        c.rho[j] = c.rz[j];
        kr_multi_check(m, j, 0, sqrt(c.rz[k + j]));
    }
    KR_TRY(ctx->ops->copy(ctx, p, z, (size_t)n * (size_t)k * sizeof(double)));
    for (int it = 1; m->run; it++) {
        KR_FOR_COLS(j, m->run, k)
        if (c.rho[j] < 0 || !isfinite(c.rho[j]))
            kr_multi_stop(m, j,
                          isfinite(c.rho[j]) ? KR_DIVERGED_INDEFINITE_PC
                                             : KR_DIVERGED_NANORINF);
        if (!m->run) break;
        KR_TRY(alpha_step(m, &c));
        if (!m->run) break;
        KR_TRY(update(m, &c, &zk));
        KR_FOR_COLS(j, m->run, k)
        if (kr_multi_check(m, j, it, sqrt(c.rz[k + j])) == KR_ITERATING) {
            c.beta[j] = c.rz[j] / c.rho[j];
            c.rho[j] = c.rz[j];
        }
        KR_TRY(ctx->ops->maxpby(ctx, n, k, c.one, zk, c.beta, p, m->run));
    }
    return KR_OK;
}

void kr_cg_workspace_multi(const kr_solve_options *o, int32_t n, int k,
                           int *nblk, int *nvec, size_t *nhost)
{
    (void)o, (void)n, (void)k;
    *nblk = NWORK;
    *nvec = 0;
    *nhost = 0;
}
