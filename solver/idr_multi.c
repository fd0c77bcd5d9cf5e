/* IDR(s) over k columns (kr_solve_multi): idr.c's cycle with M, f, c, h
 * and omega per column. The shadow space P depends only on n, s and the
 * seed, so the columns share one; U and G are s blocks of n x k. */
#include "core/error.h"
#include "solver/multi.h"

#include <math.h>
#include <string.h>

enum { R, V, VH, NBLK };

/* One column's small dense work, as idr.c's idr_host. */
typedef struct idr_col {
    double *M, *f, *c, *h;
    double om, rnorm;
} idr_col;

typedef struct idr_multi {
    kr_multi *m;
    int s, it;
    double *P; /* s shared vectors of n          */
    idr_col c[KR_MULTI_MAX];
    double *cc, *hh; /* s x k: coefficients for mgemv  */
} idr_multi;

static double *ublock(const idr_multi *d, int i)
{
    return kr_multi_block(d->m, NBLK + d->s + i);
}

static double *gblock(const idr_multi *d, int i)
{
    return kr_multi_block(d->m, NBLK + i);
}

/* column j's coefficients c(from..) into cc as mgemv_n takes them */
static void stage(idr_multi *d, uint64_t mask, const double *(*src)(idr_col *),
                  int count, double *dst)
{
    int k = d->m->k;
    KR_FOR_COLS(j, mask, k)
    {
        const double *v = src(&d->c[j]);
        for (int l = 0; l < count; l++)
            dst[(size_t)l * (size_t)k + (size_t)j] = v[l];
    }
}

static const double *c_of(idr_col *c) { return c->c; }
static const double *h_of(idr_col *c) { return c->h; }

/* u_k = U(:,k:s) c + om M^-1 (r - G(:,k:s) c), g_k = A u_k */
static kr_status new_direction(idr_multi *d, int q)
{
    kr_multi *m = d->m;
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k, rest = d->s - q;
    int64_t ld = (int64_t)n * k;
    double *v = kr_multi_block(m, V), *vh = kr_multi_block(m, VH);
    double *uk = ublock(d, q), om[KR_MULTI_MAX], c0[KR_MULTI_MAX];
    KR_FOR_COLS(j, m->run, k)
    {
        kr_idr_solve_c(d->s, d->c[j].M, d->c[j].f, d->c[j].c, q);
        om[j] = d->c[j].om;
        c0[j] = d->c[j].c[0];
    }
    stage(d, m->run, c_of, rest, d->cc);
    KR_TRY(ctx->ops->copy(ctx, v, kr_multi_block(m, R),
                          (size_t)ld * sizeof(double)));
    KR_TRY(ctx->ops->mgemv_n(ctx, n, k, rest, gblock(d, q), ld, d->cc, -1.0, v,
                             m->run));
    KR_TRY(kr_multi_pc(m, m->run, v, vh));
    KR_TRY(ctx->ops->maxpby(ctx, n, k, om, vh, c0, uk, m->run));
    if (rest > 1)
        KR_TRY(ctx->ops->mgemv_n(ctx, n, k, rest - 1, ublock(d, q + 1), ld,
                                 d->cc + k, 1.0, uk, m->run));
    return kr_multi_spmm(m, m->run, uk, gblock(d, q));
}

/* g_q orthogonal to p_0..p_{q-1} (u_q alongside); column q of each M */
static kr_status biorthogonalise(idr_multi *d, int q)
{
    kr_multi *m = d->m;
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k, s = d->s;
    int64_t ld = (int64_t)n * k;
    double *gk = gblock(d, q), *uk = ublock(d, q);
    if (q > 0) {
        KR_TRY(ctx->ops->mgemv_t(ctx, n, k, q, d->P, n, 1, gk, m->run, d->hh));
        KR_FOR_COLS(j, m->run, k)
        {
            for (int i = 0; i < q; i++)
                d->c[j].h[i] = d->hh[(size_t)i * (size_t)k + (size_t)j];
            kr_idr_solve_h(s, d->c[j].M, d->c[j].h, q);
        }
        stage(d, m->run, h_of, q, d->hh);
        KR_TRY(ctx->ops->mgemv_n(ctx, n, k, q, gblock(d, 0), ld, d->hh, -1.0,
                                 gk, m->run));
        KR_TRY(ctx->ops->mgemv_n(ctx, n, k, q, ublock(d, 0), ld, d->hh, -1.0,
                                 uk, m->run));
    }
    KR_TRY(ctx->ops->mgemv_t(ctx, n, k, s - q, d->P + (size_t)q * (size_t)n, n,
                             1, gk, m->run, d->hh));
    KR_FOR_COLS(j, m->run, k)
    {
        double *M = d->c[j].M;
        for (int i = 0; i < q; i++)
            M[i + q * s] = 0.0;
        for (int i = q; i < s; i++)
            M[i + q * s] = d->hh[(size_t)(i - q) * (size_t)k + (size_t)j];
    }
    return KR_OK;
}

/* x += beta u_q; r -= beta g_q with r.r; the test; f for the next step */
static kr_status step_update(idr_multi *d, int q)
{
    kr_multi *m = d->m;
    int k = m->k, s = d->s;
    double beta[KR_MULTI_MAX], rr[2 * KR_MULTI_MAX];
    KR_FOR_COLS(j, m->run, k)
    {
        double mqq = d->c[j].M[q + q * s];
        if (mqq == 0.0) /* g_q orthogonal to p_q: no step possible */
            kr_multi_stop(m, j, KR_DIVERGED_BREAKDOWN);
        else
            beta[j] = d->c[j].f[q] / mqq;
    }
    if (!m->run) return KR_OK;
    KR_TRY(m->ctx->ops->mxr_update(m->ctx, m->n, k, beta, ublock(d, q),
                                   gblock(d, q), m->X, kr_multi_block(m, R),
                                   NULL, NULL, m->run, rr));
    uint64_t ran = m->run;
    KR_FOR_COLS(j, ran, k)
    {
        d->c[j].rnorm = sqrt(rr[k + j]);
        if (kr_multi_check(m, j, d->it, d->c[j].rnorm) != KR_ITERATING)
            continue;
        for (int i = q + 1; i < s; i++)
            d->c[j].f[i] -= beta[j] * d->c[j].M[i + q * s];
    }
    return KR_OK;
}

/* The dimension reduction: t = A M^-1 r, omega, x += om M^-1 r, r -= om t */
static kr_status reduction(idr_multi *d)
{
    kr_multi *m = d->m;
    kr_ctx *ctx = m->ctx;
    int k = m->k;
    double *r = kr_multi_block(m, R), *v = kr_multi_block(m, V);
    double *vh = kr_multi_block(m, VH), trtt[2 * KR_MULTI_MAX];
    double om[KR_MULTI_MAX], rr[2 * KR_MULTI_MAX];
    const double *xs[2] = {v, v}, *ys[2] = {r, v};
    KR_TRY(kr_multi_pc(m, m->run, r, vh));
    KR_TRY(kr_multi_spmm(m, m->run, vh, v));
    KR_TRY(ctx->ops->mdots(ctx, m->n, k, 2, xs, ys, m->run, trtt));
    KR_FOR_COLS(j, m->run, k)
    {
        if (trtt[j] == 0.0 || trtt[k + j] == 0.0) { /* omega would be 0 */
            kr_multi_stop(m, j, KR_DIVERGED_BREAKDOWN);
            continue;
        }
        d->c[j].om =
            kr_idr_omega(trtt[j], trtt[k + j], d->c[j].rnorm, m->opt->kappa);
        om[j] = d->c[j].om;
    }
    if (!m->run) return KR_OK;
    KR_TRY(ctx->ops->mxr_update(ctx, m->n, k, om, vh, v, m->X, r, NULL, NULL,
                                m->run, rr));
    d->it++;
    KR_FOR_COLS(j, m->run, k) kr_multi_check(m, j, d->it, sqrt(rr[k + j]));
    return KR_OK;
}

static kr_status cycle(idr_multi *d)
{
    kr_multi *m = d->m;
    int k = m->k;
    KR_TRY(m->ctx->ops->mgemv_t(m->ctx, m->n, k, d->s, d->P, m->n, 1,
                                kr_multi_block(m, R), m->run, d->hh));
    KR_FOR_COLS(j, m->run, k)
    for (int i = 0; i < d->s; i++)
        d->c[j].f[i] = d->hh[(size_t)i * (size_t)k + (size_t)j];
    for (int q = 0; q < d->s && m->run; q++) {
        KR_TRY(new_direction(d, q));
        KR_TRY(biorthogonalise(d, q));
        d->it++;
        KR_TRY(step_update(d, q));
    }
    return m->run ? reduction(d) : KR_OK;
}

static kr_status iterate(idr_multi *d)
{
    kr_multi *m = d->m;
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k, s = d->s;
    double rn[KR_MULTI_MAX];
    KR_TRY(kr_multi_residual(m, m->run, kr_multi_block(m, R)));
    KR_TRY(kr_multi_norms(m, m->run, kr_multi_block(m, R), rn));
    KR_FOR_COLS(j, m->run, k)
    {
        d->c[j].rnorm = rn[j];
        kr_multi_check(m, j, 0, rn[j]);
    }
    if (!m->run) return KR_OK;
    /* scratch: G's and U's blocks, 2 s n k >= s s doubles, zeroed below */
    KR_TRY(kr_idr_shadow_space(ctx, n, s, m->opt->seed, d->P, gblock(d, 0)));
    /* the first cycle reads U and G before writing them (idr.c) */
    for (int i = 0; i < 2 * s; i++) /* kr_vec sizes: n*k fits int32 */
        KR_TRY(
            ctx->ops->fill(ctx, (int32_t)((int64_t)n * k), 0.0, gblock(d, i)));
    KR_FOR_COLS(j, m->run, k)
    {
        d->c[j].om = 1.0;
        for (int i = 0; i < s * s; i++)
            d->c[j].M[i] = i % (s + 1) == 0; /* M = I */
    }
    while (m->run)
        KR_TRY(cycle(d));
    return KR_OK;
}

static size_t col_doubles(int s)
{
    return (size_t)s * (size_t)s + 3 * (size_t)s;
}

kr_status kr_idr_solve_multi(kr_multi *m)
{
    int s = kr_idr_shadow_dim(m->opt, m->n);
    size_t per = col_doubles(s);
    idr_multi *d = (idr_multi *)m->hwork;
    memset(d, 0, sizeof *d);
    d->m = m;
    d->s = s;
    d->P = m->vecs;
    double *h = (double *)(d + 1);
    for (int j = 0; j < m->k; j++) {
        idr_col *c = &d->c[j];
        c->M = h + (size_t)j * per;
        c->f = c->M + (size_t)s * (size_t)s;
        c->c = c->f + s;
        c->h = c->c + s;
    }
    d->cc = h + (size_t)m->k * per;
    d->hh = d->cc + (size_t)s * (size_t)m->k;
    return iterate(d);
}

/* r, v, v^, then G and U (s blocks each); P (s vectors); host: the loop's
 * state, each column's M, f, c, h, and two coefficient arrays */
void kr_idr_workspace_multi(const kr_solve_options *o, int32_t n, int k,
                            int *nblk, int *nvec, size_t *nhost)
{
    int s = kr_idr_shadow_dim(o, n);
    *nblk = NBLK + 2 * s;
    *nvec = s;
    *nhost = (sizeof(idr_multi) + sizeof(double) - 1) / sizeof(double) +
             (size_t)k * col_doubles(s) + 2 * (size_t)s * (size_t)k;
}
