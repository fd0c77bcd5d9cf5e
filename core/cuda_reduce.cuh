/* Block and grid reductions shared by the CUDA kernels that reduce in
 * place of a separate dot-product launch (core/cuda_backend.cu, and the
 * formats' fused kernels): fixed orders, so results repeat run to run. */
#ifndef KR_CORE_CUDA_REDUCE_CUH
#define KR_CORE_CUDA_REDUCE_CUH

#include <stdint.h>

/* Sum of v over the block, in a fixed order; valid in thread 0. */
static __device__ __forceinline__ double block_sum(double v, double *shared)
{
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_down_sync(~0u, v, off);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = 0.0;
    if (warp == 0) {
        if (lane < blockDim.x / 32) v = shared[lane];
        for (int off = 16; off > 0; off /= 2)
            v += __shfl_down_sync(~0u, v, off);
    }
    __syncthreads();
    return v;
}

/* Grid-wide reductions in one launch: each block writes its partial sums,
 * and the last block to finish (counted in s->ticket) adds them up in the
 * order k_dots_final does, so results equal those of the two-launch
 * reduction bit for bit. Returns 1 in every thread of the last block. */
static __device__ __forceinline__ int last_block(uint32_t *ticket)
{
    __shared__ int last;
    __threadfence(); /* the partial sums are visible before the count */
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last && threadIdx.x == 0) *ticket = 0;
    return last;
}

/* sum of partial[0..nb) as k_dots_final's block does it (valid in thread
 * 0); __ldcg reads past L1, which may hold no other block's writes */
static __device__ __forceinline__ double
final_sum(int nb, const double *partial, double *sh)
{
    double v = 0.0;
    for (int i = threadIdx.x; i < nb; i += blockDim.x)
        v += __ldcg(partial + i);
    return block_sum(v, sh);
}

/* step(&copy) in thread 0 on a copy of *state in shared memory, then the
 * copy written back; called by every thread of one block (the last one).
 * A method's scalar step reads and writes its state a field at a time,
 * and in global memory each read waits a round trip behind the stores
 * before it (they may alias): about 0.5 us each on an H100, several per
 * step. The block moves the state (`bytes`, at most MAXD doubles, a
 * whole number of them) in and out in one round trip. */
template <int MAXD, typename T, typename Step>
static __device__ __forceinline__ void step_in_shared_n(T *state, size_t bytes,
                                                        Step step)
{
    __shared__ double copy[MAXD];
    const unsigned nd = (unsigned)(bytes / sizeof(double));
    double *g = (double *)state;
    __syncthreads(); /* the ticket's reset by thread 0 is seen */
    for (unsigned i = threadIdx.x; i < nd; i += blockDim.x)
        copy[i] = __ldcg(g + i);
    __syncthreads();
    if (threadIdx.x == 0) step((T *)copy);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < nd; i += blockDim.x)
        g[i] = copy[i];
}

/* The same for a state of sizeof(T) bytes. */
template <typename T, typename Step>
static __device__ __forceinline__ void step_in_shared(T *state, Step step)
{
    static_assert(sizeof(T) % sizeof(double) == 0, "T is doubles");
    step_in_shared_n<sizeof(T) / sizeof(double)>(state, sizeof(T), step);
}

#endif
