/* CSR on the CPU: the row loop every other format is checked against.
 * Each y[i] is one running sum in column order, as PETSc and the reference
 * loop add, so the result does not depend on the thread count and iteration
 * counts match PETSc's; four rows advance together so that their add chains
 * overlap. */
#include "core/error.h"
#include "core/vec.h"
#include "spmv/format.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct csr_impl {
    kr_csr A; /* host copy (the CPU backend's memory is host memory) */
} csr_impl;

static kr_status csr_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    csr_impl *m = calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = kr_csr_alloc(ctx, A->nrows, A->ncols, A->nnz, &m->A);
    if (st != KR_OK) {
        free(m);
        return st;
    }
    memcpy(m->A.rowptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof(int32_t));
    memcpy(m->A.colind, A->colind, (size_t)A->nnz * sizeof(int32_t));
    memcpy(m->A.val, A->val, (size_t)A->nnz * sizeof(double));
    *out = m;
    return KR_OK;
}

/* sum of row i's products from its position k on, in column order */
static inline double row_tail(int32_t k, int32_t end, const int32_t *ci,
                              const double *v, const double *x, double s)
{
    for (; k < end; k++)
        s += v[k] * x[ci[k]];
    return s;
}

/* y[lo..hi) = alpha*A*x + beta*y. Each row is one running sum in column
 * order, as PETSc and the reference loop add, so iteration counts match
 * theirs; four rows advance together so that their add chains overlap
 * (the sums are the same as row by row). */
static void csr_rows(int32_t lo, int32_t hi, const int32_t *restrict rp,
                     const int32_t *restrict ci, const double *restrict v,
                     double alpha, const double *restrict x, double beta,
                     double *restrict y)
{
    int32_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        int32_t k0 = rp[i], k1 = rp[i + 1], k2 = rp[i + 2], k3 = rp[i + 3];
        int32_t len = rp[i + 4] - k3;
        if (k1 - k0 < len) len = k1 - k0;
        if (k2 - k1 < len) len = k2 - k1;
        if (k3 - k2 < len) len = k3 - k2;
        double s[4] = {0.0, 0.0, 0.0, 0.0};
        for (int32_t j = 0; j < len; j++) {
            s[0] += v[k0 + j] * x[ci[k0 + j]];
            s[1] += v[k1 + j] * x[ci[k1 + j]];
            s[2] += v[k2 + j] * x[ci[k2 + j]];
            s[3] += v[k3 + j] * x[ci[k3 + j]];
        }
        for (int u = 0; u < 4; u++) {
            double t = row_tail(rp[i + u] + len, rp[i + u + 1], ci, v, x, s[u]);
            y[i + u] = beta == 0.0 ? alpha * t : alpha * t + beta * y[i + u];
        }
    }
    for (; i < hi; i++) {
        double t = row_tail(rp[i], rp[i + 1], ci, v, x, 0.0);
        y[i] = beta == 0.0 ? alpha * t : alpha * t + beta * y[i];
    }
}

static kr_status csr_apply(kr_ctx *ctx, void *impl, double alpha,
                           const double *x, double beta, double *y)
{
    const kr_csr *A = &((csr_impl *)impl)->A;
    int threads = A->nnz < 50000 ? 1 : kr_ctx_threads(ctx);
    int32_t n = A->nrows;
    if (threads == 1) { /* no parallel region: its cost shows on small A */
        csr_rows(0, n, A->rowptr, A->colind, A->val, alpha, x, beta, y);
        return KR_OK;
    }
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        int32_t lo = (int32_t)((int64_t)n * t / T);
        int32_t hi = (int32_t)((int64_t)n * (t + 1) / T);
        csr_rows(lo, hi, A->rowptr, A->colind, A->val, alpha, x, beta, y);
    }
    return KR_OK;
}

static size_t csr_bytes(const void *impl)
{
    const kr_csr *A = &((const csr_impl *)impl)->A;
    return ((size_t)A->nrows + 1) * 4 + (size_t)A->nnz * 12;
}

static int64_t csr_stored(const void *impl)
{
    return ((const csr_impl *)impl)->A.nnz;
}

static void csr_destroy(kr_ctx *ctx, void *impl)
{
    (void)ctx;
    if (!impl) return;
    kr_csr_free(&((csr_impl *)impl)->A);
    free(impl);
}

const kr_format_ops kr_csr_cpu_ops = {
    .name = "csr",
    .build = csr_build,
    .apply = csr_apply,
    .bytes = csr_bytes,
    .destroy = csr_destroy,
    .stored = csr_stored,
};
