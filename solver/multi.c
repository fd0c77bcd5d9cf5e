/* kr_solve_multi and kr_ksp_solve_multi: k systems with one operator,
 * solved together. Each column follows kr_solver_run's rules for one
 * system (b = 0, the true residual after a run, the gap and breakdown
 * restarts), so on the CPU a column takes the iterations its own kr_solve
 * takes; the methods' multi-column loops share each SpMM and each
 * preconditioner application and keep a scalar per column. */
#include "solver/multi.h"

#include "core/error.h"
#include "solver/ksp.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void kr_multi_fill(double *s, int k, double v)
{
    for (int j = 0; j < k; j++)
        s[j] = v;
}

double *kr_multi_block(const kr_multi *m, int i)
{
    return m->work + (size_t)i * (size_t)m->n * (size_t)m->k;
}

kr_reason kr_multi_check(kr_multi *m, int j, int it, double rnorm)
{
    kr_reason r = kr_solver_check(&m->col[j], &m->res[j], it, rnorm);
    m->res[j].reason = r;
    if (r != KR_ITERATING) m->run &= ~KR_COL(j);
    return r;
}

void kr_multi_stop(kr_multi *m, int j, kr_reason why)
{
    m->res[j].reason = why;
    m->run &= ~KR_COL(j);
}

/* y = A x on column j of X into column j of Y, through m->col1/col2. */
static kr_status spmv_column(kr_multi *m, int j, const double *X, double *Y)
{
    kr_ctx *ctx = m->ctx;
    KR_TRY(ctx->ops->mcolumn(ctx, m->n, m->k, j, (double *)X, m->col1, 0));
    KR_TRY(m->A->ops->apply(ctx, m->A->impl, 1.0, m->col1, 0.0, m->col2));
    return ctx->ops->mcolumn(ctx, m->n, m->k, j, Y, m->col2, 1);
}

kr_status kr_multi_spmm(kr_multi *m, uint64_t mask, const double *X, double *Y)
{
    if (m->A->ops->apply_multi)
        return m->A->ops->apply_multi(m->ctx, m->A->impl, m->k, X, Y);
    KR_FOR_COLS(j, mask, m->k) KR_TRY(spmv_column(m, j, X, Y));
    return KR_OK;
}

static kr_status pc_column(kr_multi *m, int j, const double *R, double *Z)
{
    kr_ctx *ctx = m->ctx;
    KR_TRY(ctx->ops->mcolumn(ctx, m->n, m->k, j, (double *)R, m->col1, 0));
    KR_TRY(m->P->ops->apply(ctx, m->P->impl, m->n, m->col1, m->col2));
    return ctx->ops->mcolumn(ctx, m->n, m->k, j, Z, m->col2, 1);
}

kr_status kr_multi_pc(kr_multi *m, uint64_t mask, const double *R, double *Z)
{
    if (m->P->ops->apply_multi)
        return m->P->ops->apply_multi(m->ctx, m->P->impl, m->n, m->k, R, Z);
    KR_FOR_COLS(j, mask, m->k) KR_TRY(pc_column(m, j, R, Z));
    return KR_OK;
}

/* b - s as kr_spmv(-1, x, 1, r) on r = b forms it: the same double */
kr_status kr_multi_residual(kr_multi *m, uint64_t mask, double *R)
{
    double one[KR_MULTI_MAX], minus[KR_MULTI_MAX];
    kr_multi_fill(one, m->k, 1.0);
    kr_multi_fill(minus, m->k, -1.0);
    KR_TRY(kr_multi_spmm(m, mask, m->X, R));
    return m->ctx->ops->maxpby(m->ctx, m->n, m->k, one, m->B, minus, R, mask);
}

/* kr_norm2_exp of column j (the slow path: its squares under- or
 * overflowed) */
static kr_status column_norm_exp(kr_multi *m, int j, const double *X,
                                 double *mant, int *e)
{
    kr_ctx *ctx = m->ctx;
    KR_TRY(ctx->ops->mcolumn(ctx, m->n, m->k, j, (double *)X, m->col1, 0));
    return kr_norm2_exp(ctx, m->n, m->col1, mant, e);
}

/* The sums of squares of kr_norm2_exp's first pass for every column at
 * once; a column outside its range takes the scaled path alone. */
static kr_status norms_exp(kr_multi *m, uint64_t mask, const double *X,
                           double *mant, int *e)
{
    double d[KR_MULTI_MAX];
    const double *xs[1] = {X};
    KR_TRY(m->ctx->ops->mdots(m->ctx, m->n, m->k, 1, xs, xs, mask, d));
    KR_FOR_COLS(j, mask, m->k)
    {
        e[j] = 0;
        mant[j] = sqrt(d[j]);
        if (!isnan(d[j]) && !(d[j] >= 0x1p-970 && d[j] <= DBL_MAX))
            KR_TRY(column_norm_exp(m, j, X, &mant[j], &e[j]));
    }
    return KR_OK;
}

kr_status kr_multi_norms(kr_multi *m, uint64_t mask, const double *X,
                         double *out)
{
    double mant[KR_MULTI_MAX];
    int e[KR_MULTI_MAX];
    KR_TRY(norms_exp(m, mask, X, mant, e));
    KR_FOR_COLS(j, mask, m->k) out[j] = ldexp(mant[j], e[j]);
    return KR_OK;
}

/* Column j on its own, through the single-system path (a ||b|| beyond
 * 2^+-500 runs scaled there, which the multi-column loops do not do). */
static kr_status solve_alone(kr_multi *m, const kr_solver_ops *method, int j)
{
    kr_ctx *ctx = m->ctx;
    kr_vec b = {.ctx = ctx, .n = m->n, .data = m->col1};
    kr_vec x = {.ctx = ctx, .n = m->n, .data = m->col2};
    KR_TRY(ctx->ops->mcolumn(ctx, m->n, m->k, j, (double *)m->B, b.data, 0));
    KR_TRY(ctx->ops->mcolumn(ctx, m->n, m->k, j, m->X, x.data, 0));
    kr_ksp one;
    kr_ksp_init(&one, ctx);
    one.opt = *m->opt;
    one.method = method;
    one.A = m->A;
    one.P = m->P;
    kr_status st = kr_ksp_setup(&one);
    if (st == KR_OK) st = kr_ksp_run(&one, &b, &x, &m->res[j]);
    kr_ksp_release(&one);
    KR_TRY(st);
    return ctx->ops->mcolumn(ctx, m->n, m->k, j, m->X, x.data, 1);
}

/* x_j = 0 for b_j = 0, converged at once (kr_solver_run's rule) */
static kr_status zero_column(kr_multi *m, int j)
{
    kr_ctx *ctx = m->ctx;
    KR_TRY(ctx->ops->fill(ctx, m->n, 0.0, m->col1));
    KR_TRY(ctx->ops->mcolumn(ctx, m->n, m->k, j, m->X, m->col1, 1));
    m->res[j].reason = KR_CONVERGED_ZERO_RHS;
    kr_solver_check(&m->col[j], &m->res[j], 0, 0.0);
    m->res[j].reason = KR_CONVERGED_ZERO_RHS;
    return KR_OK;
}

/* ||b_j|| for every column; the columns to iterate into m->run, the
 * others settled here (b = 0) or solved alone (||b|| beyond 2^+-500). */
static kr_status start_columns(kr_multi *m, const kr_solver_ops *method)
{
    uint64_t all = m->k == 64 ? ~(uint64_t)0 : KR_COL(m->k) - 1;
    double mant[KR_MULTI_MAX];
    int e[KR_MULTI_MAX];
    KR_TRY(norms_exp(m, all, m->B, mant, e));
    m->run = 0;
    for (int j = 0; j < m->k; j++) {
        kr_solve_args *a = &m->col[j];
        a->bnorm_m = mant[j];
        a->bnorm_e = e[j];
        a->bnorm = ldexp(mant[j], e[j]);
        m->res[j].bnorm = a->bnorm;
        if (!isfinite(mant[j]))
            return kr_fail(m->ctx, KR_ERR_FORMAT,
                           "right-hand side column %d contains NaN or Inf",
                           j + 1);
    }
    for (int j = 0; j < m->k; j++) {
        int be = mant[j] == 0.0 ? 0 : ilogb(mant[j]) + e[j];
        if (mant[j] == 0.0)
            KR_TRY(zero_column(m, j));
        else if (be < -500 || be > 500)
            KR_TRY(solve_alone(m, method, j));
        else
            m->run |= KR_COL(j);
    }
    return KR_OK;
}

kr_status kr_multi_run(kr_multi *m, const kr_solver_ops *method)
{
    for (int j = 0; j < m->k; j++) {
        memset(&m->res[j], 0, sizeof m->res[j]);
        m->col[j] = (kr_solve_args){.ctx = m->ctx,
                                    .A = m->A,
                                    .P = m->P,
                                    .n = m->n,
                                    .opt = m->opt,
                                    .scale = 1.0};
    }
    KR_TRY(start_columns(m, method));
    while (m->run) {
        uint64_t ran = m->run, again = 0;
        double tr[KR_MULTI_MAX];
        KR_TRY(method->solve_multi(m));
        KR_TRY(kr_multi_residual(m, ran, m->check));
        KR_TRY(kr_multi_norms(m, ran, m->check, tr));
        KR_FOR_COLS(j, ran, m->k)
        {
            m->res[j].true_rnorm = tr[j];
            if (!kr_solver_restart_due(&m->col[j], &m->res[j])) continue;
            m->col[j].it0 = m->res[j].iterations;
            again |= KR_COL(j);
        }
        m->run = again;
    }
    return KR_OK;
}

/* ------------------------------------------------------------ the API */

/* The multi-column work for the object's method, n and k: one backend
 * array (the method's blocks and vectors, the true residual's block, two
 * columns, the columns' device scalars) and one host array, kept by the object
 * while they fit. */
static kr_status multi_setup(kr_ksp *ks, int k, kr_multi *m)
{
    int32_t n = ks->A->nrows;
    int nblk, nvec;
    size_t nhost, nk = (size_t)n * (size_t)k;
    ks->method->workspace_multi(&ks->opt, n, k, &nblk, &nvec, &nhost);
    size_t dlen = (size_t)k * (KR_DSTATE_BYTES / sizeof(double));
    size_t len =
        ((size_t)nblk + 1) * nk + ((size_t)nvec + 2) * (size_t)n + dlen;
    if (len > ks->mwork_len) {
        kr_dev_free(ks->ctx, ks->mwork);
        ks->mwork = NULL;
        ks->mwork_len = 0;
        KR_TRY(kr_dev_zeros(ks->ctx, len, &ks->mwork));
        ks->mwork_len = len;
    }
    if (nhost + 1 > ks->mhwork_len) {
        free(ks->mhwork);
        ks->mhwork_len = 0;
        ks->mhwork = calloc(nhost + 1, sizeof *ks->mhwork);
        if (!ks->mhwork)
            return kr_fail(ks->ctx, KR_ERR_NOMEM, "out of host memory");
        ks->mhwork_len = nhost + 1;
    }
    m->work = ks->mwork;
    m->check = m->work + (size_t)nblk * nk;
    m->vecs = m->check + nk;
    m->col1 = m->vecs + (size_t)nvec * (size_t)n;
    m->col2 = m->col1 + n;
    m->dstate = m->col2 + n;
    m->hwork = ks->mhwork;
    return KR_OK;
}

static kr_status check_multi_args(kr_ctx *ctx, kr_matrix *A, int32_t k,
                                  const kr_vec *B, const kr_vec *X,
                                  const kr_result *res)
{
    if (!res) return kr_null_arg(ctx, "kr_solve_multi", "the results res");
    if (!B) return kr_null_arg(ctx, "kr_solve_multi", "B");
    if (!X) return kr_null_arg(ctx, "kr_solve_multi", "X");
    if (k < 1 || k > KR_MULTI_MAX)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_solve_multi: k = %d columns, not 1..%d", (int)k,
                       KR_MULTI_MAX);
    if (B == X || B->data == X->data)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_solve_multi: B and X are the same vector; they "
                       "must be distinct");
    if ((int64_t)B->n != (int64_t)A->nrows * k ||
        (int64_t)X->n != (int64_t)A->nrows * k)
        return kr_fail(ctx, KR_ERR_ARG,
                       "size mismatch: matrix n = %d and k = %d need B and X "
                       "of %lld entries, they have %d and %d",
                       A->nrows, (int)k, (long long)A->nrows * k, B->n, X->n);
    if (B->ctx != ctx || X->ctx != ctx)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_solve_multi: vectors from another context");
    return KR_OK;
}

kr_status kr_ksp_solve_multi(kr_ksp *ks, int32_t k, const kr_vec *B, kr_vec *X,
                             kr_result *res)
{
    if (!ks) return KR_ERR_ARG;
    kr_ctx *ctx = ks->ctx;
    KR_TRY(kr_ksp_check_operators(ks));
    KR_TRY(check_multi_args(ctx, ks->A, k, B, X, res));
    for (int j = 0; j < k; j++)
        memset(&res[j], 0, sizeof res[j]);
    kr_solve_options o = ks->opt;
    o.keep_history = 0; /* one history per column is not kept */
    o.monitor = NULL;
    kr_multi *m = calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    *m = (kr_multi){.ctx = ctx,
                    .A = ks->A,
                    .P = ks->P ? ks->P : &ks->identity,
                    .n = ks->A->nrows,
                    .k = k,
                    .B = B->data,
                    .X = X->data,
                    .opt = &o,
                    .res = res};
    double t0 = kr_wtime();
    kr_status st = multi_setup(ks, k, m);
    if (st == KR_OK) st = kr_multi_run(m, ks->method);
    double dt = kr_wtime() - t0;
    for (int j = 0; j < k; j++)
        res[j].solve_seconds = dt;
    free(m);
    return st;
}

kr_status kr_solve_multi(kr_ctx *ctx, kr_matrix *A, kr_precond *P, int32_t k,
                         const kr_vec *B, kr_vec *X,
                         const kr_solve_options *opt, kr_result *res)
{
    if (!ctx) return KR_ERR_ARG;
    if (!A) return kr_null_arg(ctx, "kr_solve_multi", "the matrix A");
    if (!P) return kr_null_arg(ctx, "kr_solve_multi", "the preconditioner P");
    if (A->ctx != ctx || P->ctx != ctx)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_solve_multi: objects from another context");
    kr_ksp ks;
    kr_ksp_init(&ks, ctx);
    KR_TRY(kr_solve_options_read(ctx, opt, &ks.opt));
    KR_TRY(kr_solve_check_options(ctx, &ks.opt));
    KR_TRY(kr_solve_find_method(ctx, ks.opt.method, &ks.method));
    ks.A = A;
    ks.P = P;
    kr_status st = kr_ksp_solve_multi(&ks, k, B, X, res);
    kr_ksp_release(&ks);
    return st;
}
