/* CSR on the CPU: the row loop every other format is checked against.
 * Rows are split statically over threads; each y[i] is one sequential sum,
 * so the result does not depend on the thread count. */
#include "core/error.h"
#include "core/vec.h"
#include "spmv/format.h"

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

static kr_status csr_apply(kr_ctx *ctx, void *impl, double alpha,
                           const double *x, double beta, double *y)
{
    const kr_csr *A = &((csr_impl *)impl)->A;
    const int32_t *rp = A->rowptr, *ci = A->colind;
    const double *v = A->val;
    int threads = A->nnz < 50000 ? 1 : kr_ctx_threads(ctx);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int32_t i = 0; i < A->nrows; i++) {
        /* one running sum per row, in column order, as PETSc and the
         * reference loop add: iteration counts then match theirs */
        double s = 0.0;
        for (int32_t k = rp[i]; k < rp[i + 1]; k++) s += v[k] * x[ci[k]];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
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
