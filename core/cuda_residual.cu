/* r = b - A x with b.b and r.r in one launch (kr_backend_ops.
 * residual_norms), for the two residuals every solve computes: at its
 * start, with ||b||, and after its last iteration. Over the CSR view of a
 * small matrix the copy, the SpMV and the two-stage dots took four
 * launches before the download; the round trip is most of a short
 * solve's fixed cost (solver/solve.c). */
#include "core/cuda_persist.cuh"
#include "core/cuda_persist.h"

#define RES_BLOCK 256

/* Rows by sub-warps of V lanes, a warp's 32 / V rows at a time (the loop
 * bounds are the warp's, for its shuffles); lane 0 of a row's sub-warp
 * writes r_i and adds b_i^2 and r_i^2 to its sums. */
template <int V>
static __device__ void residual_rows(const kr_csr_view A, const double *b,
                                     const double *x, double *r, double *bb,
                                     double *rr)
{
    const int lane = threadIdx.x % V, per_warp = 32 / V;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    const int sub = (threadIdx.x % 32) / V;
    for (int64_t base = warp * per_warp; base < A.nrows;
         base += warps * per_warp) {
        const int64_t i = base + sub;
        double acc = 0.0;
        if (i < A.nrows) {
            const int32_t hi = __ldg(A.rowptr + i + 1);
            for (int32_t k = __ldg(A.rowptr + i) + lane; k < hi; k += V)
                acc += __ldg(A.val + k) * __ldg(x + __ldg(A.colind + k));
        }
        for (int off = V / 2; off > 0; off /= 2)
            acc += __shfl_down_sync(~0u, acc, off, V);
        if (lane == 0 && i < A.nrows) {
            const double bi = __ldg(b + i), ri = bi - acc;
            r[i] = ri;
            *bb += bi * bi;
            *rr += ri * ri;
        }
    }
}

/* The rows, then each block's two sums into part, and the last block to
 * finish adds them up (in one fixed order) into out[0..1]. */
template <int V>
__global__ void __launch_bounds__(RES_BLOCK)
    k_residual_norms(const kr_csr_view A, const double *b, const double *x,
                     double *r, double *part, uint32_t *ticket, double *out)
{
    __shared__ double sh[RES_BLOCK / 32];
    double bb = 0.0, rr = 0.0;
    residual_rows<V>(A, b, x, r, &bb, &rr);
    bb = block_sum(bb, sh);
    rr = block_sum(rr, sh);
    if (threadIdx.x == 0) {
        part[blockIdx.x] = bb;
        part[gridDim.x + blockIdx.x] = rr;
    }
    if (!last_block(ticket)) return;
    bb = final_sum(gridDim.x, part, sh);
    rr = final_sum(gridDim.x, part + gridDim.x, sh);
    if (threadIdx.x == 0) {
        out[0] = bb;
        out[1] = rr;
    }
}

extern "C" kr_status kr_cuda_residual_norms(kr_ctx *ctx, const kr_csr_view *A,
                                            const double *b, const double *x,
                                            double *r, double *out)
{
    kr_cuda_state *st = kr_cuda(ctx);
    if (A->nrows < 1) {
        out[0] = out[1] = 0.0;
        return KR_OK;
    }
    const int v = lanes_per_row(ctx, A);
    int64_t nb = ((int64_t)A->nrows * v + RES_BLOCK - 1) / RES_BLOCK;
    if (nb > 8LL * st->sm_count) nb = 8LL * st->sm_count;
    if (nb > KR_CUDA_PARTIALS / 2) nb = KR_CUDA_PARTIALS / 2;
    double *part = persist_parts(ctx);
    /* the scratch's tail ends in a ticket left at 0 by every last_block */
    uint32_t *ticket = (uint32_t *)(st->d_scratch + KR_CUDA_SCRATCH - 1);
    double *sums = st->d_scratch; /* KR_MAX_DOTS >= 2 doubles */
    const void *kernel = PERSIST_KERNEL(k_residual_norms, v);
    void *args[] = {(void *)A, &b, &x, &r, &part, &ticket, &sums};
    KR_CUDA_TRY(ctx, cudaLaunchKernel(kernel, (unsigned)nb, RES_BLOCK, args, 0,
                                      st->stream));
    KR_CUDA_TRY(ctx, cudaMemcpyAsync(st->h_scratch, sums, 2 * sizeof(double),
                                     cudaMemcpyDeviceToHost, st->stream));
    KR_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    out[0] = st->h_scratch[0];
    out[1] = st->h_scratch[1];
    return KR_OK;
}
