/* ELLR's layout built on the GPU from the device CSR: K from the row
 * statistics' maximum, then one thread per row writes its K column-major
 * cells (consecutive rows, consecutive addresses), padding included, with
 * the host build's padding values (value 0, column 0). */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/devbuild.h"
#include "spmv/ellr.h"

#include <string.h>

#define BLOCK 256

static __global__ void __launch_bounds__(BLOCK)
    k_ellr_fill(int32_t n, int32_t K, const int32_t *__restrict__ rowptr,
                const int32_t *__restrict__ colind,
                const double *__restrict__ aval, double *__restrict__ val,
                int32_t *__restrict__ col, int32_t *__restrict__ rl)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int32_t p = rowptr[i], len = rowptr[i + 1] - p;
        rl[i] = len;
        for (int32_t j = 0; j < K; j++) {
            const int64_t at = i + (int64_t)j * n;
            val[at] = j < len ? aval[p + j] : 0.0;
            col[at] = j < len ? colind[p + j] : 0;
        }
    }
}

static void ellr_dev_free(kr_ctx *ctx, kr_ellr_dev *E)
{
    kr_dev_free(ctx, E->val);
    kr_dev_free(ctx, E->col);
    kr_dev_free(ctx, E->rl);
    memset(E, 0, sizeof *E);
}

static kr_status ellr_dev_fill(kr_ctx *ctx, const kr_csr_view *A,
                               kr_ellr_dev *E)
{
    size_t cells = E->stored > 0 ? (size_t)E->stored : 1;
    size_t rows = A->nrows > 0 ? (size_t)A->nrows : 1;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&E->val, cells * 8));
    KR_TRY(ctx->ops->alloc(ctx, (void **)&E->col, cells * 4));
    KR_TRY(ctx->ops->alloc(ctx, (void **)&E->rl, rows * 4));
    if (A->nrows == 0) return KR_OK;
    k_ellr_fill<<<kr_grid(A->nrows, BLOCK), BLOCK, 0, kr_cuda(ctx)->stream>>>(
        A->nrows, E->width, A->rowptr, A->colind, A->val, E->val, E->col,
        E->rl);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

extern "C" kr_status kr_ellr_dev_build(kr_ctx *ctx, const kr_csr_view *A,
                                       kr_ellr_dev *E)
{
    memset(E, 0, sizeof *E);
    kr_row_stats rs;
    KR_TRY(kr_dev_row_stats(ctx, A, &rs));
    KR_TRY(kr_ellr_check_padding(ctx, A->nrows, rs.max, A->nnz));
    E->width = rs.max;
    E->stored = (int64_t)A->nrows * rs.max;
    kr_status st = ellr_dev_fill(ctx, A, E);
    if (st != KR_OK) ellr_dev_free(ctx, E);
    return st;
}
