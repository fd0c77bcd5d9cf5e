/* GMRES(m) over k columns (kr_solve_multi): gmres.c's host-scalar cycle
 * with H, the rotations and g per column. The columns of a cycle step
 * together; a column whose cycle ends early (a happy breakdown, or it
 * stopped) waits, its x already updated, until the others end theirs, so
 * every column makes its own solve's steps and cycles. */
#include "core/error.h"
#include "solver/multi.h"

#include <math.h>
#include <string.h>

/* One column's small dense work, as gmres.c's gm_host. */
typedef struct gm_col {
    double *H, *cs, *sn, *g, *y, *h2;
} gm_col;

typedef struct gm_multi {
    kr_multi *m;
    int mm; /* the restart length */
    gm_col c[KR_MULTI_MAX];
    double *hh, *hh2;        /* (mm+1) x k: coefficients as mgemv takes them */
    int it[KR_MULTI_MAX];    /* each column's iterations in this run */
    int steps[KR_MULTI_MAX]; /* steps made in the current cycle */
    int happy[KR_MULTI_MAX];
} gm_multi;

static double *hcol(const gm_multi *g, int j, int step)
{
    return g->c[j].H + (size_t)step * (size_t)(g->mm + 1);
}

static double *vblock(const gm_multi *g, int i)
{
    return kr_multi_block(g->m, i);
}

/* V_0 = B - A X for the columns of mask, and their norms (gmres.c's
 * residual: a plain dot) */
static kr_status residual(gm_multi *g, uint64_t mask, double *beta)
{
    kr_multi *m = g->m;
    double *v0 = vblock(g, 0);
    const double *vs[1] = {v0};
    KR_TRY(kr_multi_residual(m, mask, v0));
    KR_TRY(m->ctx->ops->mdots(m->ctx, m->n, m->k, 1, vs, vs, mask, beta));
    KR_FOR_COLS(j, mask, m->k) beta[j] = sqrt(beta[j]);
    return KR_OK;
}

/* Step `step` of the columns in mask: v = A M^-1 v_step orthogonalised
 * twice against v_0..v_step; column `step` of each H gets the
 * coefficients and the norm (gmres.c's arnoldi). */
static kr_status arnoldi(gm_multi *g, uint64_t mask, int step)
{
    kr_multi *m = g->m;
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k, nb = step + 1;
    int64_t ld = (int64_t)n * k;
    double *V = vblock(g, 0), *v = vblock(g, step + 1);
    double *z = vblock(g, g->mm + 2), vv[KR_MULTI_MAX];
    const double *vs[1] = {v};
    KR_TRY(kr_multi_pc(m, mask, vblock(g, step), z));
    KR_TRY(kr_multi_spmm(m, mask, z, v));
    KR_TRY(ctx->ops->mgemv_t(ctx, n, k, nb, V, ld, 0, v, mask, g->hh));
    KR_TRY(ctx->ops->mgemv_n(ctx, n, k, nb, V, ld, g->hh, -1.0, v, mask));
    KR_TRY(ctx->ops->mgemv_t(ctx, n, k, nb, V, ld, 0, v, mask, g->hh2));
    KR_TRY(ctx->ops->mgemv_n(ctx, n, k, nb, V, ld, g->hh2, -1.0, v, mask));
    KR_TRY(ctx->ops->mdots(ctx, n, k, 1, vs, vs, mask, vv));
    KR_FOR_COLS(j, mask, k)
    {
        double *h = hcol(g, j, step);
        for (int i = 0; i <= step; i++) {
            g->c[j].h2[i] = g->hh2[(size_t)i * (size_t)k + (size_t)j];
            h[i] = g->hh[(size_t)i * (size_t)k + (size_t)j] + g->c[j].h2[i];
        }
        h[step + 1] = sqrt(vv[j]);
    }
    return KR_OK;
}

/* R y = g for column j's first q steps (gmres.c's back substitution) */
static void solve_r(gm_multi *g, int j, int q)
{
    gm_col *c = &g->c[j];
    for (int i = q - 1; i >= 0; i--) {
        double s = c->g[i];
        for (int l = i + 1; l < q; l++)
            s -= hcol(g, j, l)[i] * c->y[l];
        c->y[i] = s / hcol(g, j, i)[i];
    }
}

/* x += M^-1 V_q y for the columns of mask, which all made q steps */
static kr_status update_x(gm_multi *g, uint64_t mask, int q)
{
    kr_multi *m = g->m;
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k;
    double *t = vblock(g, g->mm + 1), *z = vblock(g, g->mm + 2);
    double y0[KR_MULTI_MAX], one[KR_MULTI_MAX], zero[KR_MULTI_MAX];
    kr_multi_fill(one, k, 1.0);
    kr_multi_fill(zero, k, 0.0);
    KR_FOR_COLS(j, mask, k)
    {
        solve_r(g, j, q);
        y0[j] = g->c[j].y[0];
        for (int l = 1; l < q; l++)
            g->hh[(size_t)(l - 1) * (size_t)k + (size_t)j] = g->c[j].y[l];
    }
    KR_TRY(ctx->ops->maxpby(ctx, n, k, y0, vblock(g, 0), zero, t, mask));
    if (q > 1)
        KR_TRY(ctx->ops->mgemv_n(ctx, n, k, q - 1, vblock(g, 1), (int64_t)n * k,
                                 g->hh, 1.0, t, mask));
    KR_TRY(kr_multi_pc(m, mask, t, z));
    return ctx->ops->maxpby(ctx, n, k, one, z, one, m->X, mask);
}

/* The end of a cycle: x updated for every column of mask that made steps
 * (not after NaN/Inf), grouped by their number of steps. */
static kr_status end_cycle(gm_multi *g, uint64_t mask)
{
    uint64_t left = 0;
    KR_FOR_COLS(j, mask, g->m->k)
    if (g->steps[j] > 0 && g->m->res[j].reason != KR_DIVERGED_NANORINF)
        left |= KR_COL(j);
    while (left) {
        int q = g->steps[__builtin_ctzll(left)];
        uint64_t grp = 0;
        KR_FOR_COLS(j, left, g->m->k) if (g->steps[j] == q) grp |= KR_COL(j);
        KR_TRY(update_x(g, grp, q));
        left &= ~grp;
    }
    return KR_OK;
}

/* After step `step` of column j: rotations, the test; 1 if the column
 * goes on to the next step. */
static int after_step(gm_multi *g, int j, int step, double *inv)
{
    kr_multi *m = g->m;
    double *h = hcol(g, j, step), hn = h[step + 1];
    g->happy[j] = kr_gm_is_happy(h, step);
    if (!kr_gm_givens(h, g->c[j].cs, g->c[j].sn, g->c[j].g, step)) {
        kr_multi_stop(m, j, KR_DIVERGED_BREAKDOWN);
        return 0;
    }
    g->steps[j] = step + 1;
    kr_reason r = kr_multi_check(m, j, ++g->it[j], fabs(g->c[j].g[step + 1]));
    if (r != KR_ITERATING || g->happy[j] || step + 1 == g->mm) return 0;
    inv[j] = 1.0 / hn;
    return 1;
}

/* One cycle of at most mm steps for the columns of m->run, from v_0 =
 * r / beta. */
static kr_status cycle(gm_multi *g, const double *beta)
{
    kr_multi *m = g->m;
    kr_ctx *ctx = m->ctx;
    int k = m->k;
    uint64_t cyc = m->run, step_mask = cyc;
    double inv[KR_MULTI_MAX], zero[KR_MULTI_MAX];
    kr_multi_fill(zero, k, 0.0);
    KR_FOR_COLS(j, cyc, k)
    {
        inv[j] = 1.0 / beta[j];
        g->c[j].g[0] = beta[j];
        g->steps[j] = 0;
        g->happy[j] = 0;
    }
    KR_TRY(ctx->ops->maxpby(ctx, m->n, k, inv, vblock(g, 0), zero, vblock(g, 0),
                            cyc));
    for (int step = 0; step < g->mm && step_mask; step++) {
        KR_TRY(arnoldi(g, step_mask, step));
        KR_FOR_COLS(j, step_mask, k)
        if (!after_step(g, j, step, inv)) step_mask &= ~KR_COL(j);
        KR_TRY(ctx->ops->maxpby(ctx, m->n, k, inv, vblock(g, step + 1), zero,
                                vblock(g, step + 1), step_mask));
    }
    return end_cycle(g, cyc);
}

/* gmres.c's iterate: cycles until every column stops; after a cycle the
 * true residual decides for each column that goes on. */
static kr_status iterate(gm_multi *g)
{
    kr_multi *m = g->m;
    double beta[KR_MULTI_MAX];
    KR_TRY(residual(g, m->run, beta));
    KR_FOR_COLS(j, m->run, m->k) kr_multi_check(m, j, 0, beta[j]);
    while (m->run) {
        KR_TRY(cycle(g, beta));
        if (!m->run) break;
        KR_TRY(residual(g, m->run, beta));
        KR_FOR_COLS(j, m->run, m->k)
        {
            if (!isfinite(beta[j]))
                kr_multi_stop(m, j, KR_DIVERGED_NANORINF);
            else if (kr_solver_converged(&m->col[j], beta[j]))
                kr_multi_stop(m, j,
                              g->happy[j] ? KR_CONVERGED_HAPPY_BREAKDOWN
                              : beta[j] <= m->opt->atol ? KR_CONVERGED_ATOL
                                                        : KR_CONVERGED_RTOL);
        }
    }
    return KR_OK;
}

/* per column: H, cs, sn, g, y, h2 as gmres.c lays them out */
static size_t col_doubles(int mm)
{
    size_t m1 = (size_t)mm;
    return (m1 + 1) * m1 + 5 * m1 + 2;
}

kr_status kr_gmres_solve_multi(kr_multi *m)
{
    int mm = m->opt->restart;
    size_t per = col_doubles(mm), m1 = (size_t)mm;
    gm_multi *g = (gm_multi *)m->hwork;
    memset(g, 0, sizeof *g);
    g->m = m;
    g->mm = mm;
    double *h = (double *)(g + 1);
    for (int j = 0; j < m->k; j++) {
        gm_col *c = &g->c[j];
        c->H = h + (size_t)j * per;
        c->cs = c->H + (m1 + 1) * m1;
        c->sn = c->cs + m1;
        c->g = c->sn + m1;
        c->y = c->g + m1 + 1;
        c->h2 = c->y + m1;
    }
    g->hh = h + (size_t)m->k * per;
    g->hh2 = g->hh + (m1 + 1) * (size_t)m->k;
    return iterate(g);
}

/* V's mm+1 blocks, then t and z; host: the loop's state, then each
 * column's small matrices and two coefficient arrays */
void kr_gmres_workspace_multi(const kr_solve_options *o, int32_t n, int k,
                              int *nblk, int *nvec, size_t *nhost)
{
    (void)n;
    size_t m1 = (size_t)o->restart;
    *nblk = o->restart + 3;
    *nvec = 0;
    *nhost = (sizeof(gm_multi) + sizeof(double) - 1) / sizeof(double) +
             (size_t)k * col_doubles(o->restart) + 2 * (m1 + 1) * (size_t)k;
}
