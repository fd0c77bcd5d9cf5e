/* HYB's layout built on the GPU from the device CSR, as spmv/hyb.c splits
 * it on the host: the width K by the same rule (spmv/devbuild.cu), one
 * thread per row filling its K column-major ELL cells (padding: value 0,
 * the row's last column, 0 for an empty row), the remainder's row
 * pointers by a prefix sum of max(len - K, 0), one thread per row copying
 * its remainder, and VSR's device plan of that (spmv/vsr_devbuild.cu).
 * Downloads: K and the remainder's size. */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/devbuild.h"
#include "spmv/hyb.h"

#include <string.h>

#define BLOCK 256

#define GRID_STRIDE(i, n)                                                      \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);  \
         i += (int64_t)gridDim.x * blockDim.x)

static __global__ void k_hyb_ell_fill(int32_t n, int32_t K,
                                      const int32_t *__restrict__ rowptr,
                                      const int32_t *__restrict__ colind,
                                      const double *__restrict__ aval,
                                      double *__restrict__ val,
                                      int32_t *__restrict__ col)
{
    GRID_STRIDE(i, n)
    {
        const int32_t beg = rowptr[i], len = rowptr[i + 1] - beg;
        const int32_t pad = len > 0 ? colind[beg + len - 1] : 0;
        for (int32_t j = 0; j < K; j++) {
            const int64_t at = i + (int64_t)j * n;
            val[at] = j < len ? aval[beg + j] : 0.0;
            col[at] = j < len ? colind[beg + j] : pad;
        }
    }
}

/* cnt[i] = entries of row i beyond K; cnt[n] = 0 for the prefix sum. */
static __global__ void k_hyb_rest_count(int32_t n, int32_t K,
                                        const int32_t *__restrict__ rowptr,
                                        int32_t *__restrict__ cnt)
{
    GRID_STRIDE(i, (int64_t)n + 1)
    {
        const int32_t len = i < n ? rowptr[i + 1] - rowptr[i] : 0;
        cnt[i] = len > K ? len - K : 0;
    }
}

static __global__ void
k_hyb_rest_copy(int32_t n, int32_t K, const int32_t *__restrict__ rowptr,
                const int32_t *__restrict__ colind,
                const double *__restrict__ aval, const int32_t *__restrict__ rp,
                int32_t *__restrict__ ci, double *__restrict__ v)
{
    GRID_STRIDE(i, n)
    {
        const int32_t beg = rowptr[i] + K, m = rp[i + 1] - rp[i];
        for (int32_t j = 0; j < m; j++) {
            ci[rp[i] + j] = colind[beg + j];
            v[rp[i] + j] = aval[beg + j];
        }
    }
}

static kr_status hyb_dev_ell(kr_ctx *ctx, const kr_csr_view *A, kr_hyb_dev *h)
{
    size_t cells = (size_t)A->nrows * (size_t)h->width;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&h->ell_col, (cells ? cells : 1) * 4));
    KR_TRY(ctx->ops->alloc(ctx, (void **)&h->ell_val, (cells ? cells : 1) * 8));
    if (A->nrows == 0) return KR_OK;
    k_hyb_ell_fill<<<kr_grid(A->nrows, BLOCK), BLOCK, 0,
                     kr_cuda(ctx)->stream>>>(A->nrows, h->width, A->rowptr,
                                             A->colind, A->val, h->ell_val,
                                             h->ell_col);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* The remainder as a CSR (rp, ci, v) in device memory, then its plan. */
static kr_status hyb_dev_rest(kr_ctx *ctx, const kr_csr_view *A, kr_hyb_dev *h)
{
    const int32_t n = A->nrows, K = h->width;
    cudaStream_t stream = kr_cuda(ctx)->stream;
    int32_t *cnt = NULL, *rp = NULL, *ci = NULL, nnz = 0;
    double *v = NULL;
    kr_status st = ctx->ops->alloc(ctx, (void **)&cnt, ((size_t)n + 1) * 4);
    if (st == KR_OK)
        st = ctx->ops->alloc(ctx, (void **)&rp, ((size_t)n + 1) * 4);
    if (st == KR_OK) {
        k_hyb_rest_count<<<kr_grid((int64_t)n + 1, BLOCK), BLOCK, 0, stream>>>(
            n, K, A->rowptr, cnt);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = kr_cuda_fail(ctx, "k_hyb_rest_count", cudaGetErrorString(e),
                              __FILE__, __LINE__);
    }
    if (st == KR_OK) st = kr_dev_exclusive_sum_i32(ctx, cnt, rp, n + 1);
    if (st == KR_OK) st = kr_dev_read_i32(ctx, rp + n, &nnz, 1);
    if (st == KR_OK)
        st = ctx->ops->alloc(ctx, (void **)&ci, ((size_t)nnz + 1) * 4);
    if (st == KR_OK)
        st = ctx->ops->alloc(ctx, (void **)&v, ((size_t)nnz + 1) * 8);
    if (st == KR_OK && n > 0) {
        k_hyb_rest_copy<<<kr_grid(n, BLOCK), BLOCK, 0, stream>>>(
            n, K, A->rowptr, A->colind, A->val, rp, ci, v);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = kr_cuda_fail(ctx, "k_hyb_rest_copy", cudaGetErrorString(e),
                              __FILE__, __LINE__);
    }
    if (st == KR_OK) st = kr_vsr_dev_build(ctx, n, nnz, rp, ci, v, &h->coo);
    kr_dev_free(ctx, cnt);
    kr_dev_free(ctx, rp);
    kr_dev_free(ctx, ci);
    kr_dev_free(ctx, v);
    return st;
}

extern "C" kr_status kr_hyb_dev_build(kr_ctx *ctx, const kr_csr_view *A,
                                      kr_hyb_dev *h)
{
    memset(h, 0, sizeof *h);
    kr_status st = kr_dev_hyb_width(ctx, A, &h->width);
    if (st == KR_OK) st = hyb_dev_ell(ctx, A, h);
    if (st == KR_OK) st = hyb_dev_rest(ctx, A, h);
    if (st != KR_OK) {
        kr_dev_free(ctx, h->ell_col);
        kr_dev_free(ctx, h->ell_val);
        kr_vsr_dev_destroy(ctx, h->coo);
        memset(h, 0, sizeof *h);
    }
    return st;
}
