/* The pieces every persistent kernel of the CUDA backend shares
 * (core/cuda_persist*.cu): a batch of up to KR_BATCH_MAX iterations is one
 * cooperative launch whose blocks are all resident (cudaLaunchCooperativeKernel
 * guarantees it, or refuses the launch), so they can wait for each other at
 * grid-wide barriers instead of at kernel boundaries: measured on an H100, a
 * barrier with the sum of 132 partial sums costs 1.4 us, a dependent launch
 * with a last-block reduction 3-4 us. Each block sums the grid's partial
 * sums itself, in the same order as every other block, so all blocks hold
 * the same scalars and take the same branches without a further barrier;
 * block 0 alone writes the method's state back for the host's stopping
 * test.
 *
 * The matrix is read as CSR (the view the matrix keeps: kr_csr_view), a
 * sub-warp of V lanes per row. Vectors other blocks write within the
 * launch are read with __ldcg, past the SM's L1, which the barrier does
 * not clear. */
#ifndef KR_CORE_CUDA_PERSIST_CUH
#define KR_CORE_CUDA_PERSIST_CUH

#include "core/backend.h"
#include "core/cuda.h"
#include "core/cuda_reduce.cuh"

#include <cooperative_groups.h>
#include <stdlib.h>

#define PERSIST_BLOCK 512
#define UNROLL 4

/* The sum of v over the block, in every thread. */
static __device__ double block_total(double v, double *sh)
{
    __shared__ double total;
    v = block_sum(v, sh);
    if (threadIdx.x == 0) total = v;
    __syncthreads();
    v = total;
    __syncthreads(); /* total is free for the next call */
    return v;
}

/* Partial sums a lane loads before it adds them: a trip to L2 for the
 * lot, where a loop of dependent adds made one per load (measured on an
 * H100: 2,400 of CG's 24,000 cycles an iteration went to one total). 9
 * cover two blocks an SM on 132 SMs. */
#define TOTAL_LOADS 9

/* The sum of part[0..nb) in lane 0 of the calling warp (every lane
 * takes part), lane l adding part[l], part[l + 32], ... in that order,
 * then the warp's shuffles: one fixed order whatever the block. */
static __device__ __forceinline__ double warp_total(const double *part,
                                                    unsigned nb)
{
    const unsigned lane = threadIdx.x % 32;
    double v = 0.0;
    for (unsigned b0 = lane; b0 < nb; b0 += 32 * TOTAL_LOADS) {
        double t[TOTAL_LOADS];
#pragma unroll
        for (int u = 0; u < TOTAL_LOADS; u++)
            t[u] = b0 + 32 * u < nb ? __ldcg(part + b0 + 32 * u) : 0.0;
#pragma unroll
        for (int u = 0; u < TOTAL_LOADS; u++)
            v += t[u];
    }
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_down_sync(~0u, v, off);
    return v;
}

/* The sum of part[0..gridDim.x), in every thread of every block, in one
 * fixed order (after the barrier that follows the writes). */
static __device__ double grid_total(const double *part, double *sh)
{
    __shared__ double total;
    if (threadIdx.x < 32) {
        const double v = warp_total(part, gridDim.x);
        if (threadIdx.x == 0) total = v;
    }
    (void)sh;
    __syncthreads();
    double v = total;
    __syncthreads();
    return v;
}

/* K grid totals at once: out[k] = the sum of part[k nb .. (k + 1) nb),
 * nb = gridDim.x, in grid_total's order, warp k adding array k; in every
 * thread (after the barrier that follows the writes). */
template <int K>
static __device__ void grid_totals_k(const double *part, double *out)
{
    static_assert(K <= PERSIST_BLOCK / 32, "a warp per total");
    __shared__ double total[K];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (warp < K) {
        const double v = warp_total(part + (size_t)warp * gridDim.x, gridDim.x);
        if (lane == 0) total[warp] = v;
    }
    __syncthreads();
    for (int k = 0; k < K; k++)
        out[k] = total[k];
    __syncthreads();
}

/* The state, a copy per block in shared memory: loaded at the start,
 * changed by thread 0 of each block alike, written back by block 0. */
template <typename T> struct shared_state {
    static_assert(sizeof(T) % sizeof(double) == 0, "T is doubles");
    double d[sizeof(T) / sizeof(double)];
    __device__ T *get() { return (T *)d; }
};

/* nd doubles of a state from g into the block's copy c, every thread */
static __device__ void state_load_n(double *c, const void *g, unsigned nd)
{
    const double *src = (const double *)g;
    for (unsigned i = threadIdx.x; i < nd; i += blockDim.x)
        c[i] = __ldcg(src + i);
    __syncthreads();
}

/* ... and back, by block 0 (all blocks hold the same copy) */
static __device__ void state_store_n(const double *c, void *g, unsigned nd)
{
    __syncthreads();
    if (blockIdx.x != 0) return;
    double *dst = (double *)g;
    for (unsigned i = threadIdx.x; i < nd; i += blockDim.x)
        dst[i] = c[i];
}

template <typename T>
static __device__ void state_load(shared_state<T> *c, const T *g)
{
    state_load_n(c->d, g, sizeof(T) / sizeof(double));
}

template <typename T>
static __device__ void state_store(const shared_state<T> *c, T *g)
{
    state_store_n(c->d, g, sizeof(T) / sizeof(double));
}

/* Several sums at once (a method that reduces more than one or two
 * values a phase): acc[0..m) summed over the block into
 * part[j * gridDim.x + blockIdx.x], each warp's shuffles, then thread j
 * over the warps' sums in warp order; ws holds N x PERSIST_BLOCK / 32
 * doubles of shared memory, free until the next grid barrier. */
template <int N>
static __device__ void block_parts(const double (&acc)[N], int m, double *ws,
                                   double *part)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int warps = PERSIST_BLOCK / 32;
#pragma unroll
    for (int j = 0; j < N; j++) {
        if (j >= m) break; /* m is the same in every thread */
        double v = acc[j];
        for (int off = 16; off > 0; off /= 2)
            v += __shfl_down_sync(~0u, v, off);
        if (lane == 0) ws[j * warps + warp] = v;
    }
    __syncthreads();
    if ((int)threadIdx.x < m) {
        double t = 0.0;
        for (int w = 0; w < warps; w++)
            t += ws[threadIdx.x * warps + w];
        part[threadIdx.x * gridDim.x + blockIdx.x] = t;
    }
}

/* tot[j] = the sum of part[j * gridDim.x ..] over the blocks for j < m,
 * warp j % (PERSIST_BLOCK / 32) adding in one fixed order, after the
 * barrier that follows the writes; tot in shared memory, valid in every
 * thread on return. */
static __device__ void grid_totals_n(const double *part, int m, double *tot)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int j = warp; j < m; j += PERSIST_BLOCK / 32) {
        const double v = warp_total(part + (size_t)j * gridDim.x, gridDim.x);
        if (lane == 0) tot[j] = v;
    }
    __syncthreads();
}

/* Part of sum_k A_ik x(c_k) over entries k = first, first + STEP, ... <
 * hi of a row, x(c) = gather(c): UNROLL entries at a time, their loads
 * issued before the sums (which stay in the order k, k + STEP, ...), so a
 * long row waits for a quarter of the dependent loads. */
template <int STEP, typename Gather>
static __device__ __forceinline__ double
row_part(const kr_csr_view &A, int32_t first, int32_t hi, Gather gather,
         double acc = 0.0)
{
    for (int32_t k = first; k < hi; k += UNROLL * STEP) {
        int32_t c[UNROLL];
        double v[UNROLL], g[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int32_t ku = k + u * STEP;
            c[u] = ku < hi ? __ldg(A.colind + ku) : -1;
            v[u] = ku < hi ? __ldg(A.val + ku) : 0.0;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            g[u] = c[u] < 0 ? 0.0 : gather(c[u]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (c[u] >= 0) acc += v[u] * g[u];
    }
    return acc;
}

/* The first V x UNROLL entries of the row each sub-warp takes first (all
 * of them in most rows), held in shared memory for the whole launch (the
 * rows a sub-warp takes are the same every iteration), with where the
 * rest of the row begins and ends: an iteration's SpMV then waits for its
 * gathers, not for rowptr and then the entries, and a longer row for its
 * tail's entries and gathers alone. Thread t keeps its UNROLL entries in
 * slots [u][t] (no bank conflicts) and reads only its own, so no barrier
 * is needed. Measured on an H100 (bcsstk16, CG): the SpMV phase went from
 * 7,600 to 5,000 cycles.
 *
 * A row of more than LONG_ROW_ROUNDS rounds of its sub-warp (LONG_ROW_ROUNDS x
 * V x UNROLL entries) would keep every block waiting at the next barrier for
 * that one sub-warp: the block's first LONG_ROWS_MAX such rows are summed by
 * the block instead, after its other rows (long_rows), and their sub-warps
 * skip them (end = -1). The long rows of a matrix often come together:
 * memplus has 76 rows of up to 351 entries in its second chunk of 128
 * rows, which a list of 8 would leave mostly to sub-warps of 4 lanes (22
 * rounds of loads each). */
#define LONG_ROW_ROUNDS 4
#define LONG_ROWS_MAX 256
struct held_entries {
    int32_t c[UNROLL][PERSIST_BLOCK];
    double v[UNROLL][PERSIST_BLOCK];
    int32_t tail[PERSIST_BLOCK], end[PERSIST_BLOCK];
    int64_t long_row[LONG_ROWS_MAX];
    int32_t long_lo[LONG_ROWS_MAX], long_hi[LONG_ROWS_MAX];
    int nlong;
};

/* Lists this thread's row in h's long rows if it is long and, in thread
 * order, among the block's first LONG_ROWS_MAX; returns whether it was listed
 * (in every lane of the row's sub-warp). Every thread of the block calls
 * it. */
template <int V>
static __device__ bool list_long(held_entries &h, int64_t i, int32_t lo,
                                 int32_t hi, bool is_long)
{
    __shared__ int warp_count[PERSIST_BLOCK / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const bool vote = is_long && threadIdx.x % V == 0;
    const unsigned mask = __ballot_sync(~0u, vote);
    if (lane == 0) warp_count[warp] = __popc(mask);
    __syncthreads();
    int pos = __popc(mask & ((1u << lane) - 1)), total = 0;
    for (int w = 0; w < PERSIST_BLOCK / 32; w++) {
        if (w < warp) pos += warp_count[w];
        total += warp_count[w];
    }
    const bool listed = vote && pos < LONG_ROWS_MAX;
    if (listed) {
        h.long_row[pos] = i;
        h.long_lo[pos] = lo;
        h.long_hi[pos] = hi;
    }
    if (threadIdx.x == 0)
        h.nlong = total < LONG_ROWS_MAX ? total : LONG_ROWS_MAX;
    return __shfl_sync(~0u, listed, lane - lane % V);
}

/* Loads the held rows (csr_rows's first pass); every persistent kernel
 * calls it once, at its start, and hands the result to csr_rows. */
template <int V>
static __device__ const held_entries &hold_rows(const kr_csr_view &A)
{
    __shared__ held_entries h;
    const int lane = threadIdx.x % V, t = threadIdx.x;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int64_t i = warp * (32 / V) + (threadIdx.x % 32) / V;
    int32_t lo = 0, hi = 0;
    if (i < A.nrows) {
        lo = __ldg(A.rowptr + i);
        hi = __ldg(A.rowptr + i + 1);
    }
    if (list_long<V>(h, i, lo, hi, hi - lo > LONG_ROW_ROUNDS * V * UNROLL))
        hi = lo = -1; /* the block sums it */
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        const int32_t k = lo + lane + u * V;
        h.c[u][t] = k < hi ? __ldg(A.colind + k) : -1;
        h.v[u][t] = k < hi ? __ldg(A.val + k) : 0.0;
    }
    h.tail[t] = hi - lo > V * UNROLL ? lo + V * UNROLL : hi;
    h.end[t] = hi;
    __syncthreads(); /* nlong and the list, for every thread */
    return h;
}

/* The block's long rows (hold_rows), finish(i, y_i) each: up to
 * LONG_ROWS_BLOCK of them each summed by all the block's threads, UNROLL
 * entries a thread a round, then over the block in a fixed order; more,
 * row r by warp r mod the block's warps, then over the warp. Measured on
 * an H100, warps on bcsstk38's two rows of 614 entries made CG's
 * iteration 13% slower, and on memplus's chunk of 76 long rows they made
 * GMRES's step 1.6x faster than per launch. Every thread of the block
 * calls it. */
#define LONG_ROWS_BLOCK 8
template <typename Gather, typename Finish>
static __device__ void long_rows(const kr_csr_view &A, const held_entries &h,
                                 Gather gather, Finish finish)
{
    __shared__ double red[PERSIST_BLOCK / 32];
    const int lane = threadIdx.x % 32;
    if (h.nlong <= LONG_ROWS_BLOCK) {
        for (int r = 0; r < h.nlong; r++) {
            double y = row_part<PERSIST_BLOCK>(A, h.long_lo[r] + threadIdx.x,
                                               h.long_hi[r], gather);
            y = block_sum(y, red);
            if (threadIdx.x == 0) finish(h.long_row[r], y);
        }
        return;
    }
    for (int r = threadIdx.x / 32; r < h.nlong; r += PERSIST_BLOCK / 32) {
        double y = row_part<32>(A, h.long_lo[r] + lane, h.long_hi[r], gather);
        for (int off = 16; off > 0; off /= 2)
            y += __shfl_down_sync(~0u, y, off);
        if (lane == 0) finish(h.long_row[r], y);
    }
}

/* row_part's first round over a held row: the same products, added in
 * the same order */
template <typename Gather>
static __device__ __forceinline__ double held_part(const held_entries &h,
                                                   Gather gather)
{
    const int t = threadIdx.x;
    int32_t c[UNROLL];
    double g[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        c[u] = h.c[u][t];
        g[u] = c[u] < 0 ? 0.0 : gather(c[u]);
    }
    double acc = 0.0;
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
        if (c[u] >= 0) acc += h.v[u][t] * g[u];
    return acc;
}

/* y_i = sum_k A_ik x(c_k) for every row i, x(c) = gather(c), handed to
 * finish(i, y_i) in lane 0 of the row's sub-warp. Rows go to sub-warps of
 * V lanes, a warp's 32 / V rows at a time, so the loop's bounds are the
 * same for the whole warp (its shuffles need every lane): block b takes
 * the chunks of PERSIST_BLOCK / V rows numbered b, b + gridDim.x, ...,
 * which GMRES's kernel relies on to keep its rows' vector entries in one
 * block (core/cuda_persist_gmres.cu). The first pass reads the rows'
 * heads hold_rows holds from h, and the block's long rows come last. A
 * warp waits for its longest row, so the callers keep to matrices with
 * few rows much longer than the mean (kr_dev_persists). */
template <int V, typename Gather, typename Finish>
static __device__ void csr_rows(const kr_csr_view &A, const held_entries &h,
                                Gather gather, Finish finish)
{
    const int lane = threadIdx.x % V, rows_per_warp = 32 / V;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    const int sub = (threadIdx.x % 32) / V;
    const int64_t first = warp * rows_per_warp;
    for (int64_t base = first; base < A.nrows; base += warps * rows_per_warp) {
        const int64_t i = base + sub;
        double acc;
        if (base == first) {
            const int t = threadIdx.x;
            acc = held_part(h, gather);
            if (h.tail[t] < h.end[t])
                acc = row_part<V>(A, h.tail[t] + lane, h.end[t], gather, acc);
        } else {
            int32_t lo = 0, hi = 0;
            if (i < A.nrows) {
                lo = __ldg(A.rowptr + i);
                hi = __ldg(A.rowptr + i + 1);
            }
            acc = row_part<V>(A, lo + lane, hi, gather);
        }
        for (int off = V / 2; off > 0; off /= 2)
            acc += __shfl_down_sync(~0u, acc, off, V);
        const bool listed = base == first && h.end[threadIdx.x] < 0;
        if (lane == 0 && i < A.nrows && !listed) finish(i, acc);
    }
    long_rows(A, h, gather, finish);
}

/* Lanes per row: about the mean row length, 2 to 32; halved where the
 * rows would take a second pass of the sub-warps resident at once (two
 * blocks an SM) and half as many still hold a mean row (UNROLL entries a
 * lane): the second pass reads rowptr and then its rows from memory,
 * where a held row's tail is one trip (bcsstk16: 32 lanes and two
 * passes, or 16 and one). */
static inline int lanes_per_row(kr_ctx *ctx, const kr_csr_view *A)
{
    double mean = A->nrows ? (double)A->nnz / A->nrows : 0.0;
    int v = 2;
    while (v < 32 && 2 * v <= mean)
        v *= 2;
    const int64_t resident = 2LL * kr_cuda(ctx)->sm_count * PERSIST_BLOCK;
    if ((int64_t)A->nrows * v > resident && v > 2 && v / 2 * UNROLL >= mean)
        v /= 2;
    return v;
}

/* Blocks of PERSIST_BLOCK threads an SM can hold of kernel, asked once
 * a context per kernel (kr_cuda_state.occ_kernel). */
static inline kr_status blocks_per_sm(kr_ctx *ctx, const void *kernel,
                                      int *per_sm)
{
    kr_cuda_state *st = kr_cuda(ctx);
    int i = 0;
    while (i < KR_CUDA_OCC_SLOTS && st->occ_kernel[i] &&
           st->occ_kernel[i] != kernel)
        i++;
    if (i < KR_CUDA_OCC_SLOTS && st->occ_kernel[i]) {
        *per_sm = st->occ_blocks[i];
        return KR_OK;
    }
    KR_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                         per_sm, kernel, PERSIST_BLOCK, 0));
    if (i < KR_CUDA_OCC_SLOTS) {
        st->occ_kernel[i] = kernel;
        st->occ_blocks[i] = *per_sm;
    }
    return KR_OK;
}

/* Blocks: enough for one pass of the rows' sub-warps, at most what can be
 * resident at once and at most two per SM (a barrier over 264 blocks
 * costs 1.5-1.7 us on an H100 against 1.4 us over 132; more cost more).
 * KRYLOV_PERSIST_BLOCKS overrides it, within what can be resident. */
static inline kr_status persist_blocks(kr_ctx *ctx, const char *op,
                                       const void *kernel, int parts_per_block,
                                       int64_t threads_wanted, int *blocks)
{
    kr_cuda_state *st = kr_cuda(ctx);
    int per_sm = 0;
    KR_TRY(blocks_per_sm(ctx, kernel, &per_sm));
    int64_t most = (int64_t)per_sm * st->sm_count;
    if (most > 2 * st->sm_count) most = 2 * st->sm_count;
    int64_t nb = (threads_wanted + PERSIST_BLOCK - 1) / PERSIST_BLOCK;
    const char *env = getenv("KRYLOV_PERSIST_BLOCKS");
    if (env && atoi(env) > 0) nb = atoi(env);
    if (nb > most) nb = most;
    if (nb * parts_per_block > KR_CUDA_PARTIALS)
        nb = KR_CUDA_PARTIALS / parts_per_block;
    *blocks = nb < 1 ? 1 : (int)nb;
    return per_sm > 0 ? KR_OK
                      : kr_fail(ctx, KR_ERR_DEVICE,
                                "%s: no block of %d threads fits an SM", op,
                                PERSIST_BLOCK);
}

/* kernel<V> for V = lanes (2, 4, 8, 16; else 32), as a kernel pointer */
#define PERSIST_KERNEL(kernel, lanes)                                          \
    ((lanes) == 2    ? (const void *)kernel<2>                                 \
     : (lanes) == 4  ? (const void *)kernel<4>                                 \
     : (lanes) == 8  ? (const void *)kernel<8>                                 \
     : (lanes) == 16 ? (const void *)kernel<16>                                \
                     : (const void *)kernel<32>)

/* The partial sums' slots, KR_CUDA_PARTIALS doubles of scratch. */
static inline double *persist_parts(kr_ctx *ctx)
{
    return kr_cuda(ctx)->d_scratch + KR_MAX_DOTS;
}

/* One batch: `iters` (1..KR_BATCH_MAX) iterations of the persistent
 * kernel kernel_for(lanes), lanes_per_row's width, over the blocks
 * persist_blocks gives with `slots` partial sums a block; arg points to
 * the kernel's one argument. */
static inline kr_status persist_launch(kr_ctx *ctx, const char *op,
                                       const void *(*kernel_for)(int),
                                       const kr_csr_view *A, int iters,
                                       int slots, void *arg)
{
    if (iters < 1 || iters > KR_BATCH_MAX)
        return kr_fail(ctx, KR_ERR_ARG, "%s: %d iterations outside 1..%d", op,
                       iters, KR_BATCH_MAX);
    const int lanes = lanes_per_row(ctx, A);
    const void *kernel = kernel_for(lanes);
    int nb = 1;
    KR_TRY(
        persist_blocks(ctx, op, kernel, slots, (int64_t)A->nrows * lanes, &nb));
    void *args[] = {arg};
    KR_CUDA_TRY(ctx,
                cudaLaunchCooperativeKernel(kernel, nb, PERSIST_BLOCK, args, 0,
                                            kr_cuda(ctx)->stream));
    return KR_OK;
}

#endif
