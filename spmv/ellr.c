/* ELLPACK-R: the host build shared with the CUDA implementation, and the
 * CPU kernel. The CPU walks a block of rows column by column, so it reads
 * the column-major arrays sequentially; each row is still summed in its
 * own order (j = 0, 1, ...), the same order as the plain CSR loop. */
#include "spmv/ellr.h"

#include "core/error.h"
#include "spmv/format.h"

#include <stdlib.h>
#include <string.h>

/* Rows per CPU block: their partial sums stay in registers / L1. */
#define ELLR_CPU_ROWS 128

static int build_threads(const kr_ctx *ctx, int64_t work)
{
    return work < 200000 ? 1 : kr_ctx_threads(ctx);
}

/* Copies the rows into the column-major arrays (padding stays 0). */
static void ellr_fill(const kr_csr *A, kr_ellr_host *E, int threads)
{
    const int32_t n = A->nrows;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int32_t i = 0; i < n; i++) {
        int32_t p = A->rowptr[i], len = A->rowptr[i + 1] - p;
        E->rl[i] = len;
        for (int32_t j = 0; j < len; j++) {
            size_t at = (size_t)i + (size_t)j * (size_t)n;
            E->val[at] = A->val[p + j];
            E->col[at] = A->colind[p + j];
        }
    }
}

kr_status kr_ellr_check_padding(kr_ctx *ctx, int32_t nrows, int32_t K,
                                int32_t nnz)
{
    const int64_t padded = (int64_t)nrows * K;
    if (padded > 3 * (int64_t)nnz && padded > 4096)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "ellr: padding every row to the longest (%d entries) "
                       "stores %lld entries for %d nonzeros (more than 3x); "
                       "use format 'pellr' or 'hyb' for uneven rows",
                       K, (long long)padded, nnz);
    return KR_OK;
}

kr_status kr_ellr_host_build(kr_ctx *ctx, const kr_csr *A, kr_ellr_host *E)
{
    memset(E, 0, sizeof *E);
    kr_row_stats rows;
    kr_csr_row_stats(A, &rows);
    const int32_t K = rows.max;
    const int64_t padded = (int64_t)A->nrows * K;
    KR_TRY(kr_ellr_check_padding(ctx, A->nrows, K, A->nnz));
    E->nrows = A->nrows;
    E->ncols = A->ncols;
    E->nnz = A->nnz;
    E->width = K;
    size_t cells = padded > 0 ? (size_t)padded : 1;
    E->val = calloc(cells, sizeof *E->val);
    E->col = calloc(cells, sizeof *E->col);
    E->rl = malloc((A->nrows > 0 ? (size_t)A->nrows : 1) * sizeof *E->rl);
    if (!E->val || !E->col || !E->rl) {
        kr_ellr_host_free(E);
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "ellr: out of host memory for %lld padded entries",
                       (long long)padded);
    }
    ellr_fill(A, E, build_threads(ctx, padded));
    return KR_OK;
}

void kr_ellr_host_free(kr_ellr_host *E)
{
    if (!E) return;
    free(E->val);
    free(E->col);
    free(E->rl);
    memset(E, 0, sizeof *E);
}

int64_t kr_ellr_host_stored(const kr_ellr_host *E)
{
    return (int64_t)E->nrows * E->width;
}

/* y[i0..i1) = alpha*A*x + beta*y over one block of rows */
static void ellr_block(const kr_ellr_host *E, int32_t i0, int32_t i1,
                       double alpha, const double *x, double beta, double *y)
{
    double acc[ELLR_CPU_ROWS];
    int32_t kmax = 0;
    for (int32_t i = i0; i < i1; i++) {
        acc[i - i0] = 0.0;
        if (E->rl[i] > kmax) kmax = E->rl[i];
    }
    const size_t n = (size_t)E->nrows;
    for (int32_t j = 0; j < kmax; j++) {
        const double *v = E->val + (size_t)j * n;
        const int32_t *c = E->col + (size_t)j * n;
        for (int32_t i = i0; i < i1; i++)
            if (j < E->rl[i]) acc[i - i0] += v[i] * x[c[i]];
    }
    for (int32_t i = i0; i < i1; i++)
        y[i] = beta == 0.0 ? alpha * acc[i - i0]
                           : alpha * acc[i - i0] + beta * y[i];
}

typedef struct ellr_impl {
    kr_ellr_host E; /* host memory is the CPU backend's memory */
} ellr_impl;

static kr_status ellr_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    ellr_impl *m = calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = kr_ellr_host_build(ctx, A, &m->E);
    if (st != KR_OK) {
        free(m);
        return st;
    }
    *out = m;
    return KR_OK;
}

static kr_status ellr_apply(kr_ctx *ctx, void *impl, double alpha,
                            const double *x, double beta, double *y)
{
    const kr_ellr_host *E = &((ellr_impl *)impl)->E;
    const int32_t n = E->nrows;
    const int32_t blocks = (n + ELLR_CPU_ROWS - 1) / ELLR_CPU_ROWS;
    int threads = E->nnz < 50000 ? 1 : kr_ctx_threads(ctx);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int32_t b = 0; b < blocks; b++) {
        int32_t i0 = b * ELLR_CPU_ROWS;
        int32_t i1 = n - i0 < ELLR_CPU_ROWS ? n : i0 + ELLR_CPU_ROWS;
        ellr_block(E, i0, i1, alpha, x, beta, y);
    }
    return KR_OK;
}

/* Y = A X, k columns, row-major; each entry summed in the row's order, as
 * ellr_block sums one column, so the result equals k SpMVs exactly. */
static void ellr_multi_row(const kr_ellr_host *E, int32_t i, int32_t k,
                           const double *restrict X, double *restrict Y)
{
    const size_t n = (size_t)E->nrows;
    double *y = Y + (size_t)i * k;
    for (int32_t c = 0; c < k; c++)
        y[c] = 0.0;
    for (int32_t j = 0; j < E->rl[i]; j++) {
        size_t at = (size_t)i + (size_t)j * n;
        double v = E->val[at];
        const double *x = X + (size_t)E->col[at] * k;
        for (int32_t c = 0; c < k; c++)
            y[c] += v * x[c];
    }
}

static kr_status ellr_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                  const double *X, double *Y)
{
    const kr_ellr_host *E = &((ellr_impl *)impl)->E;
    int threads = (int64_t)E->nnz * k < 50000 ? 1 : kr_ctx_threads(ctx);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int32_t i = 0; i < E->nrows; i++)
        ellr_multi_row(E, i, k, X, Y);
    return KR_OK;
}

static size_t ellr_bytes(const void *impl)
{
    const kr_ellr_host *E = &((const ellr_impl *)impl)->E;
    return (size_t)kr_ellr_host_stored(E) * 12 + (size_t)E->nrows * 4;
}

static int64_t ellr_stored(const void *impl)
{
    return kr_ellr_host_stored(&((const ellr_impl *)impl)->E);
}

static void ellr_destroy(kr_ctx *ctx, void *impl)
{
    (void)ctx;
    if (!impl) return;
    kr_ellr_host_free(&((ellr_impl *)impl)->E);
    free(impl);
}

const kr_format_ops kr_ellr_cpu_ops = {
    .name = "ellr",
    .build = ellr_build,
    .apply = ellr_apply,
    .bytes = ellr_bytes,
    .destroy = ellr_destroy,
    .stored = ellr_stored,
    .apply_multi = ellr_apply_multi,
};
