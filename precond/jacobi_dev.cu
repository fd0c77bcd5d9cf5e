/* Scalar Jacobi's inverse diagonal formed on the GPU from a matrix's
 * device CSR (KR_BUILD_DEVICE), so its setup uploads nothing: one thread
 * per row, the row's last entry in column i taken as a_ii as the host's
 * loop does; a zero or missing diagonal records the smallest such row,
 * the one download. */
#include "core/cuda.h"
#include "core/vec.h"
#include "precond/jacobi_dev.h"

#include <limits.h>

#define BLOCK 256

static __global__ void k_jacobi_inverse(int32_t n,
                                        const int32_t *__restrict__ rowptr,
                                        const int32_t *__restrict__ colind,
                                        const double *__restrict__ val,
                                        double *__restrict__ d, int *bad_row)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double aii = 0.0;
        for (int32_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            if (colind[k] == i) aii = val[k];
        if (aii == 0.0)
            atomicMin(bad_row, (int)i);
        else
            d[i] = 1.0 / aii;
    }
}

static __global__ void k_set_int(int *p, int v) { *p = v; }

extern "C" kr_status kr_jacobi_dev_inverse(kr_ctx *ctx, const kr_csr_view *A,
                                           double *d, int32_t *bad_row)
{
    *bad_row = -1;
    if (A->nrows == 0) return KR_OK;
    int *bad = NULL, h = INT_MAX;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&bad, sizeof *bad));
    cudaStream_t stream = kr_cuda(ctx)->stream;
    k_set_int<<<1, 1, 0, stream>>>(bad, INT_MAX);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) {
        k_jacobi_inverse<<<kr_grid(A->nrows, BLOCK), BLOCK, 0, stream>>>(
            A->nrows, A->rowptr, A->colind, A->val, d, bad);
        e = cudaGetLastError();
    }
    kr_status st = e == cudaSuccess ? ctx->ops->download(ctx, &h, bad, sizeof h)
                                    : kr_cuda_fail(ctx, "k_jacobi_inverse",
                                                   cudaGetErrorString(e),
                                                   __FILE__, __LINE__);
    kr_dev_free(ctx, bad);
    if (st == KR_OK && h != INT_MAX) *bad_row = h;
    return st;
}
