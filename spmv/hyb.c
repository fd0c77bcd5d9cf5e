/* HYB on the host: the width rule, the split into ELL + COO remainder
 * (shared with spmv/hyb.cu), and the CPU kernel: an OpenMP row loop over
 * the ELL part, then VSR's CPU kernel adding the remainder. */
#include "spmv/hyb.h"

#include "core/error.h"
#include "spmv/format.h"

#include <stdlib.h>
#include <string.h>

kr_status kr_hyb_width(kr_ctx *ctx, const kr_csr *A, int32_t *K)
{
    int32_t n = A->nrows, longest = 0;
    *K = 0;
    if (n == 0) return KR_OK;
    for (int32_t i = 0; i < n; i++)
        if (A->rowptr[i + 1] - A->rowptr[i] > longest)
            longest = A->rowptr[i + 1] - A->rowptr[i];
    int32_t *count = calloc((size_t)longest + 1, sizeof *count);
    if (!count) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    for (int32_t i = 0; i < n; i++)
        count[A->rowptr[i + 1] - A->rowptr[i]]++;
    int64_t reach = 0; /* rows with length >= w */
    for (int32_t w = longest; w >= 1 && *K == 0; w--) {
        reach += count[w];
        if (3 * reach >= n) *K = w;
    }
    free(count);
    if (*K == 0) *K = (int32_t)(((int64_t)2 * A->nnz + n) / (2 * (int64_t)n));
    return KR_OK;
}

void kr_hyb_host_free(kr_hyb_host *h)
{
    if (!h) return;
    free(h->ell_col);
    free(h->ell_val);
    kr_vsr_plan_free(&h->coo);
    memset(h, 0, sizeof *h);
}

/* Row i's first K entries into the column-major ELL arrays. */
static void fill_ell(const kr_csr *A, kr_hyb_host *h)
{
    int32_t n = A->nrows, K = h->width;
    for (int32_t i = 0; i < n; i++) {
        int32_t beg = A->rowptr[i], len = A->rowptr[i + 1] - beg;
        int32_t pad = len > 0 ? A->colind[beg + len - 1] : 0;
        for (int32_t j = 0; j < K; j++) {
            size_t k = (size_t)i + (size_t)j * (size_t)n;
            h->ell_val[k] = j < len ? A->val[beg + j] : 0.0;
            h->ell_col[k] = j < len ? A->colind[beg + j] : pad;
        }
    }
}

/* The entries beyond K as a CSR (rowptr, colind, val), then its plan. */
static kr_status build_coo(kr_ctx *ctx, const kr_csr *A, int for_device,
                           kr_hyb_host *h)
{
    int32_t n = A->nrows, K = h->width, nnz = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t len = A->rowptr[i + 1] - A->rowptr[i];
        nnz += len > K ? len - K : 0;
    }
    int32_t *rp = malloc(((size_t)n + 1) * sizeof *rp);
    int32_t *ci = malloc(((size_t)nnz + 1) * sizeof *ci);
    double *v = malloc(((size_t)nnz + 1) * sizeof *v);
    kr_status st = KR_OK;
    if (!rp || !ci || !v) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory building HYB");
        goto done;
    }
    rp[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t beg = A->rowptr[i] + K, end = A->rowptr[i + 1];
        int32_t m = end > beg ? end - beg : 0;
        if (m > 0) {
            memcpy(ci + rp[i], A->colind + beg, (size_t)m * sizeof *ci);
            memcpy(v + rp[i], A->val + beg, (size_t)m * sizeof *v);
        }
        rp[i + 1] = rp[i] + m;
    }
    st = kr_vsr_plan_build(ctx, n, rp, ci, v, for_device, &h->coo);
done:
    free(rp);
    free(ci);
    free(v);
    return st;
}

kr_status kr_hyb_host_build(kr_ctx *ctx, const kr_csr *A, int for_device,
                            kr_hyb_host *h)
{
    memset(h, 0, sizeof *h);
    h->nrows = A->nrows;
    KR_TRY(kr_hyb_width(ctx, A, &h->width));
    size_t cells = (size_t)A->nrows * (size_t)h->width;
    h->ell_col = malloc((cells ? cells : 1) * sizeof *h->ell_col);
    h->ell_val = malloc((cells ? cells : 1) * sizeof *h->ell_val);
    kr_status st = KR_OK;
    if (!h->ell_col || !h->ell_val)
        st = kr_fail(ctx, KR_ERR_NOMEM,
                     "out of host memory for HYB's ELL part (%d rows x %d)",
                     A->nrows, h->width);
    if (st == KR_OK) {
        fill_ell(A, h);
        st = build_coo(ctx, A, for_device, h);
    }
    if (st != KR_OK) kr_hyb_host_free(h);
    return st;
}

/* ------------------------------------------------- the CPU format table */

static kr_status hyb_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    kr_hyb_host *h = calloc(1, sizeof *h);
    if (!h) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = kr_hyb_host_build(ctx, A, 0, h);
    if (st != KR_OK) {
        free(h);
        return st;
    }
    *out = h;
    return KR_OK;
}

static kr_status hyb_apply(kr_ctx *ctx, void *impl, double alpha,
                           const double *x, double beta, double *y)
{
    kr_hyb_host *h = impl;
    int32_t n = h->nrows, K = h->width;
    const double *ev = h->ell_val;
    const int32_t *ec = h->ell_col;
    int threads = (int64_t)n * K < 50000 ? 1 : kr_ctx_threads(ctx);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int32_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int32_t j = 0; j < K; j++) {
            size_t k = (size_t)i + (size_t)j * (size_t)n;
            s += ev[k] * x[ec[k]];
        }
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
    /* the remainder, added once per row that has one */
    kr_vsr_plan_apply(ctx, &h->coo, alpha, x, 1.0, y, 0);
    return KR_OK;
}

/* Y = A X, k columns, row-major: the ELL part as hyb_apply sums it, then
 * the remainder added per row, so each column equals hyb_apply's y. */
static kr_status hyb_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                 const double *X, double *Y)
{
    kr_hyb_host *h = impl;
    int32_t n = h->nrows, K = h->width;
    int threads = (int64_t)n * K * k < 50000 ? 1 : kr_ctx_threads(ctx);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int32_t i = 0; i < n; i++) {
        double *y = Y + (size_t)i * k;
        for (int32_t q = 0; q < k; q++)
            y[q] = 0.0;
        for (int32_t j = 0; j < K; j++) {
            size_t at = (size_t)i + (size_t)j * (size_t)n;
            double v = h->ell_val[at];
            const double *x = X + (size_t)h->ell_col[at] * k;
            for (int32_t q = 0; q < k; q++)
                y[q] += v * x[q];
        }
    }
    return kr_vsr_plan_apply_multi(ctx, &h->coo, k, X, Y, 1);
}

static size_t hyb_bytes(const void *impl)
{
    const kr_hyb_host *h = impl;
    return (size_t)h->nrows * (size_t)h->width * 12 +
           kr_vsr_plan_bytes(&h->coo);
}

static int64_t hyb_stored(const void *impl)
{
    const kr_hyb_host *h = impl;
    return (int64_t)h->nrows * h->width + h->coo.nnz;
}

static void hyb_destroy(kr_ctx *ctx, void *impl)
{
    (void)ctx;
    kr_hyb_host_free(impl);
    free(impl);
}

const kr_format_ops kr_hyb_cpu_ops = {
    .name = "hyb",
    .build = hyb_build,
    .apply = hyb_apply,
    .bytes = hyb_bytes,
    .destroy = hyb_destroy,
    .stored = hyb_stored,
    .apply_multi = hyb_apply_multi,
};
