/* BiCGSTAB over k columns (kr_solve_multi): bicgstab.c's iteration with a
 * scalar per column; each half step makes one preconditioner application
 * and one SpMM over the k columns. */
#include "core/error.h"
#include "solver/multi.h"

#include <math.h>

enum { R, RH, P, V, PH, SH, T, NWORK };

typedef struct bcgs_cols {
    double rho[KR_MULTI_MAX], alpha[KR_MULTI_MAX], omega[KR_MULTI_MAX];
    double one[KR_MULTI_MAX], zero[KR_MULTI_MAX], na[KR_MULTI_MAX];
    double s1[2 * KR_MULTI_MAX], s2[2 * KR_MULTI_MAX];
} bcgs_cols;

/* v = A M^-1 p, alpha = rho / (r0^.v); a zero r0^.v stops the column */
static kr_status alpha_step(kr_multi *m, bcgs_cols *c)
{
    double *v = kr_multi_block(m, V), *ph = kr_multi_block(m, PH);
    const double *xs[1] = {kr_multi_block(m, RH)}, *ys[1] = {v};
    double rv[KR_MULTI_MAX];
    KR_TRY(kr_multi_pc(m, m->run, kr_multi_block(m, P), ph));
    KR_TRY(kr_multi_spmm(m, m->run, ph, v));
    KR_TRY(m->ctx->ops->mdots(m->ctx, m->n, m->k, 1, xs, ys, m->run, rv));
    KR_FOR_COLS(j, m->run, m->k)
    {
        if (rv[j] == 0.0)
            kr_multi_stop(m, j, KR_DIVERGED_BREAKDOWN);
        else
            c->alpha[j] = c->rho[j] / rv[j];
    }
    return KR_OK;
}

/* s = r - alpha v (in r) with s.s; a column whose s meets the test (or is
 * not finite) takes x += alpha p^ when finite and stops */
static kr_status s_step(kr_multi *m, bcgs_cols *c, int it)
{
    kr_ctx *ctx = m->ctx;
    int k = m->k;
    uint64_t done = 0;
    for (int j = 0; j < k; j++)
        c->na[j] = -c->alpha[j];
    KR_TRY(ctx->ops->maxpy_dots(ctx, m->n, k, c->na, kr_multi_block(m, V),
                                kr_multi_block(m, R), NULL, m->run, c->s1));
    KR_FOR_COLS(j, m->run, k)
    if (!isfinite(c->s1[j]) || kr_solver_converged(&m->col[j], sqrt(c->s1[j])))
        done |= KR_COL(j);
    uint64_t fin = 0;
    KR_FOR_COLS(j, done, k) if (isfinite(c->s1[j])) fin |= KR_COL(j);
    if (fin)
        KR_TRY(ctx->ops->maxpby(ctx, m->n, k, c->alpha, kr_multi_block(m, PH),
                                c->one, m->X, fin));
    KR_FOR_COLS(j, done, k) kr_multi_check(m, j, it, sqrt(c->s1[j]));
    m->run &= ~done;
    return KR_OK;
}

/* t = A M^-1 s, omega = t.s / t.t; x += alpha p^ + omega s^; r = s -
 * omega t with r.r and r0^.r; the test; rho and p for the next step */
static kr_status omega_step(kr_multi *m, bcgs_cols *c, int it)
{
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k;
    double *r = kr_multi_block(m, R), *sh = kr_multi_block(m, SH);
    double *t = kr_multi_block(m, T), beta[KR_MULTI_MAX], bw[KR_MULTI_MAX];
    const double *xs[2] = {t, t}, *ys[2] = {r, t};
    KR_TRY(kr_multi_pc(m, m->run, r, sh));
    KR_TRY(kr_multi_spmm(m, m->run, sh, t));
    KR_TRY(ctx->ops->mdots(ctx, n, k, 2, xs, ys, m->run, c->s2));
    KR_FOR_COLS(j, m->run, k)
    {
        c->omega[j] = c->s2[k + j] == 0.0 ? 0.0 : c->s2[j] / c->s2[k + j];
        c->na[j] = -c->omega[j];
    }
    KR_TRY(ctx->ops->maxpbypcz(ctx, n, k, c->alpha, kr_multi_block(m, PH),
                               c->omega, sh, c->one, m->X, m->run));
    KR_TRY(ctx->ops->maxpy_dots(ctx, n, k, c->na, t, r, kr_multi_block(m, RH),
                                m->run, c->s1)); /* s1: r.r, then r0^.r */
    KR_FOR_COLS(j, m->run, k)
    {
        if (kr_multi_check(m, j, it, sqrt(c->s1[j])) != KR_ITERATING) continue;
        if (c->omega[j] == 0.0) { /* the method stagnates */
            kr_multi_stop(m, j, KR_DIVERGED_BREAKDOWN);
            continue;
        }
        beta[j] = (c->s1[k + j] / c->rho[j]) * (c->alpha[j] / c->omega[j]);
        bw[j] = -beta[j] * c->omega[j];
        c->rho[j] = c->s1[k + j];
    }
    return ctx->ops->maxpbypcz(ctx, n, k, c->one, r, bw, kr_multi_block(m, V),
                               beta, kr_multi_block(m, P), m->run);
}

kr_status kr_bicgstab_solve_multi(kr_multi *m)
{
    kr_ctx *ctx = m->ctx;
    int k = m->k;
    size_t bytes = (size_t)m->n * (size_t)k * sizeof(double);
    double *r = kr_multi_block(m, R);
    const double *rs[1] = {r};
    bcgs_cols c;
    kr_multi_fill(c.one, k, 1.0);
    kr_multi_fill(c.zero, k, 0.0);
    KR_TRY(kr_multi_residual(m, m->run, r));
    KR_TRY(ctx->ops->mdots(ctx, m->n, k, 1, rs, rs, m->run, c.s1));
    KR_FOR_COLS(j, m->run, k)
    {
        c.rho[j] = c.s1[j];
        kr_multi_check(m, j, 0, sqrt(c.s1[j]));
    }
    KR_TRY(ctx->ops->copy(ctx, kr_multi_block(m, RH), r, bytes));
    KR_TRY(ctx->ops->copy(ctx, kr_multi_block(m, P), r, bytes));
    for (int it = 1; m->run; it++) {
        KR_FOR_COLS(j, m->run, k) /* r0^ orthogonal to r: no BiCG step */
        if (c.rho[j] == 0.0) kr_multi_stop(m, j, KR_DIVERGED_BREAKDOWN);
        if (m->run) KR_TRY(alpha_step(m, &c));
        if (m->run) KR_TRY(s_step(m, &c, it));
        if (m->run) KR_TRY(omega_step(m, &c, it));
    }
    return KR_OK;
}

void kr_bicgstab_workspace_multi(const kr_solve_options *o, int32_t n, int k,
                                 int *nblk, int *nvec, size_t *nhost)
{
    (void)o, (void)n, (void)k;
    *nblk = NWORK;
    *nvec = 0;
    *nhost = 0;
}
