/* CSR on the CPU: the row loop every other format is checked against.
 * Rows are split statically over threads; each y[i] is one sequential sum,
 * so the result does not depend on the thread count. */
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

/* y[lo..hi) = alpha*A*x + beta*y; one running sum per row, in column order,
 * as PETSc and the reference loop add, so iteration counts match theirs */
static void csr_rows(int32_t lo, int32_t hi, const int32_t *restrict rp,
                     const int32_t *restrict ci, const double *restrict v,
                     double alpha, const double *restrict x, double beta,
                     double *restrict y)
{
    int32_t k = rp[lo];
    for (int32_t i = lo; i < hi; i++) {
        int32_t end = rp[i + 1];
        double s = 0.0;
        for (; k < end; k++)
            s += v[k] * x[ci[k]];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
}

static kr_status csr_apply(kr_ctx *ctx, void *impl, double alpha,
                           const double *x, double beta, double *y)
{
    const kr_csr *A = &((csr_impl *)impl)->A;
    int threads = A->nnz < 50000 ? 1 : kr_ctx_threads(ctx);
    int32_t n = A->nrows;
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
