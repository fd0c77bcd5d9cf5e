/* PELLR's layout built on the GPU from the device CSR, as spmv/pellr.c
 * lays it out on the host: the rows sorted by length, longest first, equal
 * lengths in row order (CUB's stable radix sort, spmv/devbuild.cu), the
 * sorted lengths padded to whole slices, each slice's width (its first
 * row's length) and offset (a prefix sum of 32*width), then one thread per
 * sorted row copies its entries into its slice, column-major, writing the
 * padding too (value 0, column 0). One download: the stored size. */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/devbuild.h"
#include "spmv/pellr.h"

#include <string.h>

#define BLOCK 256
#define S KR_PELLR_SLICE

#define GRID_STRIDE(i, n)                                                      \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);  \
         i += (int64_t)gridDim.x * blockDim.x)

/* rl[k] for the padded sorted rows; each slice's width and its size in
 * size[s] (size[nslices] = 0, so that an exclusive sum gives off). */
static __global__ void k_pellr_shape(int32_t n, int32_t nslices,
                                     const int32_t *__restrict__ sorted_len,
                                     int32_t *__restrict__ rl,
                                     int32_t *__restrict__ width,
                                     int64_t *__restrict__ size)
{
    GRID_STRIDE(k, (int64_t)nslices * S)
    {
        const int32_t len = k < n ? sorted_len[k] : 0;
        rl[k] = len;
        if (k % S == 0) {
            width[k / S] = len;
            size[k / S] = (int64_t)S * len;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) size[nslices] = 0;
}

static __global__ void
k_pellr_fill(int32_t n, int32_t nslices, const int32_t *__restrict__ rowptr,
             const int32_t *__restrict__ colind,
             const double *__restrict__ aval, const int32_t *__restrict__ perm,
             const int32_t *__restrict__ rl, const int32_t *__restrict__ width,
             const int64_t *__restrict__ off, double *__restrict__ val,
             int32_t *__restrict__ col)
{
    GRID_STRIDE(k, (int64_t)nslices * S)
    {
        const int64_t s = k / S, lane = k % S;
        const int32_t len = rl[k], w = width[s];
        const int32_t p = k < n ? rowptr[perm[k]] : 0;
        double *v = val + off[s] + lane;
        int32_t *c = col + off[s] + lane;
        for (int32_t j = 0; j < w; j++) {
            v[(int64_t)j * S] = j < len ? aval[p + j] : 0.0;
            c[(int64_t)j * S] = j < len ? colind[p + j] : 0;
        }
    }
}

static __global__ void k_count_wide(int32_t nslices,
                                    const int32_t *__restrict__ width,
                                    int32_t min_width, double min_wide,
                                    int *count)
{
    GRID_STRIDE(s, nslices)
    {
        const int32_t w = width[s];
        if (w >= min_width && (double)w >= min_wide) atomicAdd(count, 1);
    }
}

extern "C" void kr_pellr_dev_free(kr_ctx *ctx, kr_pellr_dev *P)
{
    kr_dev_free(ctx, P->perm);
    kr_dev_free(ctx, P->rl);
    kr_dev_free(ctx, P->width);
    kr_dev_free(ctx, P->off);
    kr_dev_free(ctx, P->val);
    kr_dev_free(ctx, P->col);
    memset(P, 0, sizeof *P);
}

/* perm, rl, width, off and the stored size. */
static kr_status pellr_dev_shape(kr_ctx *ctx, const kr_csr_view *A,
                                 int32_t maxlen, kr_pellr_dev *P)
{
    const int32_t n = A->nrows;
    const size_t ns = (size_t)P->nslices, rows = n > 0 ? (size_t)n : 1;
    int32_t *len = NULL, *sorted = NULL;
    int64_t *size = NULL;
    kr_status st = ctx->ops->alloc(ctx, (void **)&P->perm, rows * 4);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&P->rl, ns * S * 4 + 4);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&P->width, ns * 4 + 4);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&P->off, (ns + 1) * 8);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&len, rows * 4);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&sorted, rows * 4);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&size, (ns + 1) * 8);
    if (st == KR_OK) st = kr_dev_row_lengths(ctx, A, len);
    if (st == KR_OK)
        st = kr_dev_sort_rows(ctx, len, n, maxlen, P->perm, sorted);
    if (st == KR_OK) {
        k_pellr_shape<<<kr_grid((int64_t)ns * S, BLOCK), BLOCK, 0,
                        kr_cuda(ctx)->stream>>>(n, P->nslices, sorted, P->rl,
                                                P->width, size);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = kr_cuda_fail(ctx, "k_pellr_shape", cudaGetErrorString(e),
                              __FILE__, __LINE__);
    }
    if (st == KR_OK)
        st = kr_dev_exclusive_sum_i64(ctx, size, P->off, P->nslices + 1);
    if (st == KR_OK)
        st = ctx->ops->download(ctx, &P->stored, P->off + ns, sizeof(int64_t));
    kr_dev_free(ctx, len);
    kr_dev_free(ctx, sorted);
    kr_dev_free(ctx, size);
    return st;
}

static kr_status pellr_dev_fill(kr_ctx *ctx, const kr_csr_view *A,
                                kr_pellr_dev *P)
{
    size_t cells = P->stored > 0 ? (size_t)P->stored : 1;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&P->val, cells * 8));
    KR_TRY(ctx->ops->alloc(ctx, (void **)&P->col, cells * 4));
    if (P->nslices == 0) return KR_OK;
    k_pellr_fill<<<kr_grid((int64_t)P->nslices * S, BLOCK), BLOCK, 0,
                   kr_cuda(ctx)->stream>>>(A->nrows, P->nslices, A->rowptr,
                                           A->colind, A->val, P->perm, P->rl,
                                           P->width, P->off, P->val, P->col);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

extern "C" kr_status kr_pellr_dev_build(kr_ctx *ctx, const kr_csr_view *A,
                                        kr_pellr_dev *P)
{
    memset(P, 0, sizeof *P);
    P->nslices = (int32_t)(((int64_t)A->nrows + S - 1) / S);
    kr_row_stats rs;
    kr_status st = kr_dev_row_stats(ctx, A, &rs);
    if (st == KR_OK) st = pellr_dev_shape(ctx, A, rs.max, P);
    if (st == KR_OK) st = pellr_dev_fill(ctx, A, P);
    if (st != KR_OK) kr_pellr_dev_free(ctx, P);
    return st;
}

extern "C" kr_status kr_pellr_dev_count_wide(kr_ctx *ctx, const int32_t *width,
                                             int32_t nslices, int32_t min_width,
                                             double min_wide, int32_t *count)
{
    *count = 0;
    if (nslices == 0) return KR_OK;
    int *d = NULL;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&d, sizeof *d));
    cudaStream_t stream = kr_cuda(ctx)->stream;
    kr_status st = KR_OK;
    cudaError_t e = cudaMemsetAsync(d, 0, sizeof *d, stream);
    if (e == cudaSuccess) {
        k_count_wide<<<kr_grid(nslices, BLOCK), BLOCK, 0, stream>>>(
            nslices, width, min_width, min_wide, d);
        e = cudaGetLastError();
    }
    if (e != cudaSuccess)
        st = kr_cuda_fail(ctx, "k_count_wide", cudaGetErrorString(e), __FILE__,
                          __LINE__);
    if (st == KR_OK) st = ctx->ops->download(ctx, count, d, sizeof *d);
    kr_dev_free(ctx, d);
    return st;
}
