/* The scatter that undoes a row order on the GPU (spmv/permuted.c): one
 * thread per value of the permuted result, so a row's k values are read
 * and written contiguously. */
#include "core/cuda.h"
#include "spmv/permuted.h"

#define SCATTER_BLOCK 256

__global__ void __launch_bounds__(SCATTER_BLOCK)
    permuted_scatter(int64_t total, int32_t k,
                     const int32_t *__restrict__ order,
                     const double *__restrict__ src, double beta,
                     double *__restrict__ dst)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t p = e / k, c = e - p * k;
        double *d = dst + (int64_t)order[p] * k + c;
        *d = beta == 0.0 ? src[e] : src[e] + beta * *d;
    }
}

kr_status kr_permuted_scatter_cuda(kr_ctx *ctx, int32_t nrows, int32_t k,
                                   const int32_t *order, const double *src,
                                   double beta, double *dst)
{
    int64_t total = (int64_t)nrows * k;
    if (total == 0) return KR_OK;
    permuted_scatter<<<kr_grid(total, SCATTER_BLOCK), SCATTER_BLOCK, 0,
                       kr_cuda(ctx)->stream>>>(total, k, order, src, beta, dst);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}
