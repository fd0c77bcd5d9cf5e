/* Permuted ELLPACK-R: the host build shared with the CUDA implementation,
 * and the CPU kernel. The build is O(nnz + nrows + max row length): a
 * stable counting sort of the rows by length, one pass for the slice widths
 * and offsets, one pass copying the entries. The CPU kernel walks a slice
 * column by column (sequential reads) and sums each row in its own order,
 * the same order as the plain CSR loop. */
#include "spmv/pellr.h"

#include "core/backend.h"
#include "core/error.h"
#include "spmv/format.h"
#include "spmv/row_order.h"

#include <stdlib.h>
#include <string.h>

#define S KR_PELLR_SLICE

static int32_t row_len(const kr_csr *A, int32_t i)
{
    return A->rowptr[i + 1] - A->rowptr[i];
}

/* rl in sorted order, slice widths and offsets; sorted rows make the first
 * row of a slice its longest. */
static void slice_shape(const kr_csr *A, kr_pellr_host *P)
{
    for (int64_t k = 0; k < (int64_t)P->nslices * S; k++)
        P->rl[k] = k < A->nrows ? row_len(A, P->perm[k]) : 0;
    P->off[0] = 0;
    for (int32_t s = 0; s < P->nslices; s++) {
        P->width[s] = P->rl[(size_t)s * S];
        P->off[s + 1] = P->off[s] + (int64_t)S * P->width[s];
    }
}

/* Copies each sorted row into its slice, column-major (padding stays 0). */
static void slice_fill(const kr_csr *A, kr_pellr_host *P, int threads)
{
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads)
    for (int32_t s = 0; s < P->nslices; s++) {
        double *v = P->val + P->off[s];
        int32_t *c = P->col + P->off[s];
        for (int32_t lane = 0; lane < S; lane++) {
            int64_t k = (int64_t)s * S + lane;
            if (k >= A->nrows) break;
            int32_t p = A->rowptr[P->perm[k]];
            for (int32_t j = 0; j < P->rl[k]; j++) {
                v[lane + (int64_t)j * S] = A->val[p + j];
                c[lane + (int64_t)j * S] = A->colind[p + j];
            }
        }
    }
}

static kr_status alloc_shape(kr_ctx *ctx, kr_pellr_host *P)
{
    size_t ns = (size_t)P->nslices;
    P->perm = malloc((P->nrows > 0 ? (size_t)P->nrows : 1) * sizeof *P->perm);
    P->rl = malloc((ns > 0 ? ns * S : 1) * sizeof *P->rl);
    P->width = malloc((ns > 0 ? ns : 1) * sizeof *P->width);
    P->off = malloc((ns + 1) * sizeof *P->off);
    if (!P->perm || !P->rl || !P->width || !P->off)
        return kr_fail(ctx, KR_ERR_NOMEM, "pellr: out of host memory");
    return KR_OK;
}

static kr_status alloc_entries(kr_ctx *ctx, kr_pellr_host *P)
{
    int64_t stored = P->off[P->nslices];
    size_t cells = stored > 0 ? (size_t)stored : 1;
    P->val = calloc(cells, sizeof *P->val);
    P->col = calloc(cells, sizeof *P->col);
    if (!P->val || !P->col)
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "pellr: out of host memory for %lld padded entries",
                       (long long)stored);
    return KR_OK;
}

kr_status kr_pellr_host_build(kr_ctx *ctx, const kr_csr *A, kr_pellr_host *P)
{
    memset(P, 0, sizeof *P);
    P->nrows = A->nrows;
    P->ncols = A->ncols;
    P->nnz = A->nnz;
    P->nslices = (int32_t)(((int64_t)A->nrows + S - 1) / S);
    kr_status st;
    KR_CHECK(st, alloc_shape(ctx, P), fail);
    /* longest first, equal lengths in A's order: regular matrices stay
     * (nearly) unpermuted and y writes stay contiguous */
    KR_CHECK(st, kr_row_order(ctx, A, "plain", P->perm), fail);
    slice_shape(A, P);
    KR_CHECK(st, alloc_entries(ctx, P), fail);
    int threads = P->off[P->nslices] < 200000 ? 1 : kr_ctx_threads(ctx);
    slice_fill(A, P, threads);
    return KR_OK;
fail:
    kr_pellr_host_free(P);
    return st;
}

void kr_pellr_host_free(kr_pellr_host *P)
{
    if (!P) return;
    free(P->perm);
    free(P->rl);
    free(P->width);
    free(P->off);
    free(P->val);
    free(P->col);
    memset(P, 0, sizeof *P);
}

int64_t kr_pellr_host_stored(const kr_pellr_host *P)
{
    return P->off ? P->off[P->nslices] : 0;
}

size_t kr_pellr_host_bytes(const kr_pellr_host *P)
{
    size_t ns = (size_t)P->nslices;
    return (size_t)P->nrows * 4 + ns * S * 4 + ns * 4 + (ns + 1) * 8 +
           (size_t)kr_pellr_host_stored(P) * 12;
}

/* y[perm[k]] = alpha*(A x)[perm[k]] + beta*y[perm[k]] for slice s's rows */
static void pellr_slice(const kr_pellr_host *P, int32_t s, double alpha,
                        const double *x, double beta, double *y)
{
    double acc[S] = {0};
    const double *v = P->val + P->off[s];
    const int32_t *c = P->col + P->off[s];
    const int32_t *rl = P->rl + (size_t)s * S;
    for (int32_t j = 0; j < P->width[s]; j++)
        for (int32_t lane = 0; lane < S; lane++)
            if (j < rl[lane])
                acc[lane] +=
                    v[lane + (int64_t)j * S] * x[c[lane + (int64_t)j * S]];
    int64_t first = (int64_t)s * S;
    int64_t rows = P->nrows - first < S ? P->nrows - first : S;
    for (int32_t lane = 0; lane < rows; lane++) {
        int32_t r = P->perm[first + lane];
        y[r] =
            beta == 0.0 ? alpha * acc[lane] : alpha * acc[lane] + beta * y[r];
    }
}

/* Y = A X for slice s's rows, k columns, row-major; each entry summed in
 * the row's order, as pellr_slice sums one column. */
static void pellr_multi_slice(const kr_pellr_host *P, int32_t s, int32_t k,
                              const double *restrict X, double *restrict Y)
{
    const double *v = P->val + P->off[s];
    const int32_t *c = P->col + P->off[s];
    int64_t first = (int64_t)s * S;
    int64_t rows = P->nrows - first < S ? P->nrows - first : S;
    for (int32_t lane = 0; lane < rows; lane++) {
        double *y = Y + (size_t)P->perm[first + lane] * k;
        for (int32_t q = 0; q < k; q++)
            y[q] = 0.0;
        for (int32_t j = 0; j < P->rl[first + lane]; j++) {
            double a = v[lane + (int64_t)j * S];
            const double *x = X + (size_t)c[lane + (int64_t)j * S] * k;
            for (int32_t q = 0; q < k; q++)
                y[q] += a * x[q];
        }
    }
}

typedef struct pellr_impl {
    kr_pellr_host P; /* host memory is the CPU backend's memory */
} pellr_impl;

static kr_status pellr_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    pellr_impl *m = calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = kr_pellr_host_build(ctx, A, &m->P);
    if (st != KR_OK) {
        free(m);
        return st;
    }
    *out = m;
    return KR_OK;
}

static kr_status pellr_apply(kr_ctx *ctx, void *impl, double alpha,
                             const double *x, double beta, double *y)
{
    const kr_pellr_host *P = &((pellr_impl *)impl)->P;
    int threads = P->nnz < 50000 ? 1 : kr_ctx_threads(ctx);
    /* slices are sorted longest first: dynamic chunks balance the load */
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
    for (int32_t s = 0; s < P->nslices; s++)
        pellr_slice(P, s, alpha, x, beta, y);
    return KR_OK;
}

static kr_status pellr_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                   const double *X, double *Y)
{
    const kr_pellr_host *P = &((pellr_impl *)impl)->P;
    int threads = (int64_t)P->nnz * k < 50000 ? 1 : kr_ctx_threads(ctx);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
    for (int32_t s = 0; s < P->nslices; s++)
        pellr_multi_slice(P, s, k, X, Y);
    return KR_OK;
}

/* The CPU's fused CG step is the separate ops in turn (the same
 * arithmetic as cg_direction, the SpMV and cg_alpha): nothing to gain
 * here, but the solver's fused iteration then runs on the CPU too. */
static int pellr_fused_ok(const void *impl)
{
    (void)impl;
    return 1;
}

static kr_status pellr_cg_dir_apply(kr_ctx *ctx, void *impl, const double *z,
                                    const double *p, double *pn, double *q,
                                    kr_cg_dev *s)
{
    if (s->h.stop) return KR_OK;
    int32_t n = ((pellr_impl *)impl)->P.nrows;
    memcpy(pn, p, (size_t)n * sizeof *pn);
    KR_TRY(ctx->ops->axpby(ctx, n, 1.0, z, s->beta, pn));
    KR_TRY(pellr_apply(ctx, impl, 1.0, pn, 0.0, q));
    const double *xs[1] = {pn}, *ys[1] = {q};
    double pq;
    KR_TRY(ctx->ops->dots(ctx, n, 1, xs, ys, &pq));
    kr_cg_dev_alpha(s, pq);
    return KR_OK;
}

/* IDR's mat-vec and projection, likewise the separate ops in turn */
static kr_status pellr_idr_dots_apply(kr_ctx *ctx, void *impl, int k,
                                      const double *x, double *y,
                                      const double *P, const double *r,
                                      kr_idr_dev *st)
{
    if (st->h.stop) return KR_OK;
    int32_t n = ((pellr_impl *)impl)->P.nrows;
    KR_TRY(pellr_apply(ctx, impl, 1.0, x, 0.0, y));
    if (k == st->s) return ctx->ops->idr_omega(ctx, n, y, r, st);
    if (k > 0) {
        KR_TRY(ctx->ops->gemv_t(ctx, n, k, P, n, y, kr_idr_dev_hv(st)));
        kr_idr_dev_h(st, k);
        return KR_OK;
    }
    KR_TRY(ctx->ops->gemv_t(ctx, n, st->s, P, n, y, kr_idr_dev_M(st)));
    kr_idr_dev_orth(st, 0);
    return KR_OK;
}

/* The CPU's fused GMRES step is likewise the separate ops in turn
 * (gm_scale, the Jacobi product into u, which the solver no longer needs,
 * the SpMV and gemv_t_dev). */
static kr_status pellr_gm_dir_apply(kr_ctx *ctx, void *impl, const kr_gm_dir *g)
{
    if (g->s->h.stop) return KR_OK;
    int32_t n = ((pellr_impl *)impl)->P.nrows;
    const double *x = g->v;
    KR_TRY(ctx->ops->axpby(ctx, n, g->s->inv, g->u, 0.0, g->v));
    if (g->d) {
        KR_TRY(ctx->ops->pointwise_mult(ctx, n, g->d, g->v, g->u));
        x = g->u;
    }
    KR_TRY(pellr_apply(ctx, impl, 1.0, x, 0.0, g->w));
    if (!g->V) return KR_OK;
    return ctx->ops->gemv_t_dev(ctx, n, g->k, g->V, n, g->w, g->h);
}

static size_t pellr_bytes(const void *impl)
{
    return kr_pellr_host_bytes(&((const pellr_impl *)impl)->P);
}

static int64_t pellr_stored(const void *impl)
{
    return kr_pellr_host_stored(&((const pellr_impl *)impl)->P);
}

static void pellr_destroy(kr_ctx *ctx, void *impl)
{
    (void)ctx;
    if (!impl) return;
    kr_pellr_host_free(&((pellr_impl *)impl)->P);
    free(impl);
}

const kr_format_ops kr_pellr_cpu_ops = {
    .name = "pellr",
    .build = pellr_build,
    .apply = pellr_apply,
    .bytes = pellr_bytes,
    .destroy = pellr_destroy,
    .stored = pellr_stored,
    .apply_multi = pellr_apply_multi,
    .cg_dir_ok = pellr_fused_ok,
    .cg_dir_apply = pellr_cg_dir_apply,
    .idr_dots_ok = pellr_fused_ok,
    .idr_dots_apply = pellr_idr_dots_apply,
    .gm_dir_ok = pellr_fused_ok,
    .gm_dir_apply = pellr_gm_dir_apply,
};
