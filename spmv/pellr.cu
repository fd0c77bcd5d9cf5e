/* Permuted ELLPACK-R on the GPU: the host build of spmv/pellr.c uploaded as
 * is. One warp per slice of 32 sorted rows, one thread per row: at step j
 * the warp reads val[off_s + lane + j*32], 32 consecutive entries, so every
 * load is coalesced, and the rows of a warp have similar lengths, so few
 * lanes idle.
 *
 * The first slices hold the longest rows. A slice much wider than the mean
 * would keep its one warp busy long after the others finished (a power-law
 * matrix has rows of 10^5 entries), so each "long" slice is cut into tiles
 * of 128 steps j; a tile is one block whose 8 warps take every 8th step and
 * add their sums in shared memory; the tile sums go to a work array made in
 * build, and a second small kernel adds them per row in tile order and
 * writes y. Both sums have a fixed order: results are deterministic.
 *
 * A small matrix has too few slices to hide the latency of its loads (a
 * warp walks its rows' entries one dependent load after another, and
 * bcsstk18's 374 warps leave most of an H100 idle), so there T = 2, 4 or
 * 8 warps share each ordinary slice, warp t taking steps j = t, t + T,
 * ...; the first adds the others' sums in t order (split_for's rule).
 *
 * The SpMM (spmv/spmm_rows.cu) splits long rows likewise, row by row: the
 * first sorted rows of at least KR_SPMM_LONG_MIN entries and
 * KR_SPMM_LONG_FACTOR times the mean row length are cut into pieces of
 * KR_SPMM_PIECE entries (a kr_ell_split made in build), whose partial rows
 * a finish kernel adds in piece order. */
#include "core/backend.h"
#include "core/cuda.h"
#include "core/cuda_reduce.cuh"
#include "core/vec.h"
#include "spmv/devbuild.h"
#include "spmv/format.h"
#include "spmv/pellr.h"
#include "spmv/spmm_rows.h"

#include <stdlib.h>

#define PELLR_BLOCK 256
#define PELLR_WARPS (PELLR_BLOCK / 32)
#ifndef PELLR_TILE_STEPS
#define PELLR_TILE_STEPS 16 /* steps j per warp in one tile */
#endif
/* Steps j of one tile; a long slice is at least this wide ... */
#define PELLR_TILE_J (PELLR_WARPS * PELLR_TILE_STEPS)
/* ... and this many times wider than the mean slice. */
#define PELLR_LONG_FACTOR 4
/* Ordinary slices are shared by T warps while slices * T stay below this
 * (enough warps in flight for an H100's 132 multiprocessors) ... */
#define PELLR_SPLIT_WARPS 4096
/* ... and each warp keeps at least this many steps of the mean slice, or
 * the widest ordinary slice would leave one warp more than
 * PELLR_SPLIT_LONGEST steps (the kernel waits for its slowest warp). */
#define PELLR_SPLIT_MIN_STEPS 2
#define PELLR_SPLIT_LONGEST 8
#define PELLR_SPLIT_MAX PELLR_WARPS
/* Columns of h = V^T w that pellr_gm_dir computes itself. */
#define PELLR_GM_COLS 32

typedef struct pellr_gpu {
    int32_t nrows, nslices;
    int32_t nlong;       /* long slices: the first nlong (widths do not grow) */
    int32_t ntiles;      /* tiles of the long slices                          */
    int32_t slice_warps; /* per ordinary slice: 1, 2, 4 or 8         */
    int64_t stored;
    size_t bytes;
    int32_t *perm;       /* nrows                                        */
    int32_t *rl;         /* nslices*32                                   */
    int64_t *off;        /* nslices + 1                                  */
    double *val;         /* stored                                       */
    int32_t *col;        /* stored                                       */
    int2 *tile;          /* ntiles: (slice, first step j)                */
    int32_t *tile_start; /* nlong + 1: the tiles of long slice s          */
    double *part;        /* ntiles*32: each tile's sum per row           */
    kr_ell_split split;  /* the SpMM's long rows, cut into pieces        */
} pellr_gpu;

typedef struct pellr_args {
    int32_t n, nslices, nlong, ntiles, slice_warps;
    const int32_t *__restrict__ perm;
    const int32_t *__restrict__ rl;
    const int64_t *__restrict__ off;
    const double *__restrict__ val;
    const int32_t *__restrict__ col;
    const int2 *__restrict__ tile;
    const int32_t *__restrict__ tile_start;
    double *__restrict__ part;
} pellr_args;

static __device__ __forceinline__ void put(const pellr_args &a, int64_t k,
                                           double s, double alpha, double beta,
                                           double *__restrict__ y)
{
    if (k >= a.n) return; /* padding row of the last slice */
    const int32_t r = a.perm[k];
    y[r] = beta == 0.0 ? alpha * s : alpha * s + beta * y[r];
}

/* One tile of a long slice: part[t][lane] = the row's sum over the tile. */
static __device__ __forceinline__ void long_tile(const pellr_args &a,
                                                 const double *__restrict__ x)
{
    __shared__ double sums[PELLR_WARPS][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int2 t = a.tile[blockIdx.x]; /* (slice, first step) */
    const int32_t len = a.rl[(int64_t)t.x * 32 + lane];
    const int32_t end = len < t.y + PELLR_TILE_J ? len : t.y + PELLR_TILE_J;
    const double *v = a.val + a.off[t.x] + lane;
    const int32_t *c = a.col + a.off[t.x] + lane;
    double s = 0.0;
#pragma unroll 4
    for (int32_t j = t.y + warp; j < end; j += PELLR_WARPS)
        s += v[(int64_t)j * 32] * __ldg(x + c[(int64_t)j * 32]);
    sums[warp][lane] = s;
    __syncthreads();
    if (warp != 0) return;
    for (int w = 1; w < PELLR_WARPS; w++)
        s += sums[w][lane];
    a.part[(int64_t)blockIdx.x * 32 + lane] = s;
}

/* Warp t's share of a row of ordinary slice s (lane the row's place in
 * it): steps t, t + T, ..., each val times x(col), x a functor. */
template <typename X>
static __device__ __forceinline__ double
slice_share_at(const pellr_args &a, int32_t len, int64_t base, int t, int T,
               X x)
{
    double sum = 0.0;
    const double *v = a.val + base;
    const int32_t *c = a.col + base;
#pragma unroll 4
    for (int32_t j = t; j < len; j += T)
        sum += v[(int64_t)j * 32] * x(c[(int64_t)j * 32]);
    return sum;
}

template <typename X>
static __device__ __forceinline__ double
slice_share(const pellr_args &a, int64_t s, int lane, int t, int T, X x)
{
    if (s >= a.nslices) return 0.0;
    return slice_share_at(a, a.rl[s * 32 + lane], a.off[s] + lane, t, T, x);
}

/* Row sums of a slice, T warps each (the whole block calls it; len and
 * base: the lane's row length and first entry): warp t sums steps t,
 * t + T, ... of its row (slice_share_at), and the slice's first warp adds
 * the T sums in t order; the total is valid in that warp. */
static __device__ __forceinline__ double
split_sum_at(const pellr_args &a, int32_t len, int64_t base,
             const double *__restrict__ x)
{
    __shared__ double sums[PELLR_WARPS][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int T = a.slice_warps, t = warp % T;
    double sum = slice_share_at(a, len, base, t, T,
                                [x](int32_t j) { return __ldg(x + j); });
    sums[warp][lane] = sum;
    __syncthreads();
    if (t != 0) return sum;
    for (int i = 1; i < T; i++)
        sum += sums[warp + i][lane];
    return sum;
}

/* 8 / T ordinary slices of block b (counted from the first after the
 * tiles), T warps each (split_sum_at), written through perm; the layout
 * is read before kr_pdl_begin. */
static __device__ __forceinline__ void
split_slices(const pellr_args &a, int64_t b, const double *__restrict__ x,
             double alpha, double beta, double *__restrict__ y)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int T = a.slice_warps;
    const int64_t s = a.nlong + b * (PELLR_WARPS / T) + warp / T;
    const bool in = s < a.nslices;
    const int32_t len = in ? a.rl[s * 32 + lane] : 0;
    const int64_t base = in ? a.off[s] + lane : 0;
    kr_pdl_begin();
    const double sum = split_sum_at(a, len, base, x);
    if (warp % T != 0 || s >= a.nslices) return;
    put(a, s * 32 + (threadIdx.x & 31), sum, alpha, beta, y);
}

/* Blocks [0, ntiles) are tiles of long slices; each later block runs 8 / T
 * ordinary slices (from nlong on), T warps each. Exact grid. */
__global__ void __launch_bounds__(PELLR_BLOCK)
    pellr_spmv(const pellr_args a, const double *__restrict__ x, double alpha,
               double beta, double *__restrict__ y)
{
    if ((int32_t)blockIdx.x < a.ntiles) { /* uniform over the block */
        kr_pdl_begin();
        long_tile(a, x);
        return;
    }
    if (a.slice_warps > 1) { /* uniform over the grid */
        split_slices(a, blockIdx.x - a.ntiles, x, alpha, beta, y);
        return;
    }
    const int64_t s = a.nlong + (int64_t)(blockIdx.x - a.ntiles) * PELLR_WARPS +
                      (threadIdx.x >> 5);
    /* a warp past the last slice reads and writes nothing of an earlier
     * kernel's, so it may leave before the wait */
    if (s >= a.nslices) return;
    const int lane = threadIdx.x & 31;
    const int64_t k = s * 32 + lane;
    const int32_t len = a.rl[k]; /* the layout: read before the wait */
    const double *v = a.val + a.off[s] + lane;
    const int32_t *c = a.col + a.off[s] + lane;
    kr_pdl_begin();
    double sum = 0.0;
#pragma unroll 4
    for (int32_t j = 0; j < len; j++) {
        sum += v[0] * __ldg(x + c[0]);
        v += 32;
        c += 32;
    }
    put(a, k, sum, alpha, beta, y);
}

/* CG's direction and mat-vec (the cg_dir_apply op) over a layout without
 * long slices, T warps per slice as split_slices: pn = z + beta p (one
 * rounding, the same in the gather and for the row's own entry, so q is
 * A pn exactly as a separate SpMV of pn would sum it), q = A pn, then the
 * block's share of pn.q, and in the last block to finish the grid's sum
 * in block order and kr_cg_dev_alpha. Replaces cg_direction's and
 * cg_alpha's launches. */
__global__ void __launch_bounds__(PELLR_BLOCK)
    pellr_cg_dir(const pellr_args a, const double *__restrict__ z,
                 const double *__restrict__ p, double *__restrict__ pn,
                 double *__restrict__ q, kr_cg_dev *s, double *partial)
{
    __shared__ double sums[PELLR_WARPS][32];
    __shared__ double sh[PELLR_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int T = a.slice_warps, t = warp % T;
    const int64_t sl = (int64_t)blockIdx.x * (PELLR_WARPS / T) + warp / T;
    const int64_t k = sl * 32 + lane;
    const bool own = t == 0 && sl < a.nslices && k < a.n; /* writes row r */
    /* the matrix is no earlier kernel's output: read before the wait */
    const int32_t len = sl < a.nslices ? a.rl[k] : 0;
    const int32_t r = own ? a.perm[k] : 0;
    const int64_t base = sl < a.nslices ? a.off[sl] + lane : 0;
    kr_pdl_begin();
    if (s->h.stop) return; /* set by an earlier launch: uniform */
    const double b = s->beta;
    double pr = 0.0, zr = 0.0;
    if (own) pr = p[r], zr = z[r]; /* issued before the row's gathers */
    double sum = 0.0, dot = 0.0;
    const double *v = a.val + base;
    const int32_t *c = a.col + base;
#pragma unroll 4
    for (int32_t j = t; j < len; j += T) {
        const int32_t cj = c[(int64_t)j * 32];
        sum += v[(int64_t)j * 32] * __fma_rn(b, __ldg(p + cj), __ldg(z + cj));
    }
    sums[warp][lane] = sum;
    __syncthreads();
    if (own) {
        for (int i = 1; i < T; i++)
            sum += sums[warp + i][lane];
        pr = __fma_rn(b, pr, zr);
        pn[r] = pr;
        q[r] = sum;
        dot = pr * sum;
    }
    dot = block_sum(dot, sh);
    if (threadIdx.x == 0) partial[blockIdx.x] = dot;
    if (!last_block(&s->h.ticket)) return;
    dot = final_sum(gridDim.x, partial, sh);
    step_in_shared(s, [=](kr_cg_dev *c) { kr_cg_dev_alpha(c, dot); });
}

/* IDR(s)'s mat-vec and the projection after it (the idr_dots_apply op)
 * over a layout without long slices, T warps per slice as split_slices:
 * y = A x, then the block's shares of m sums, each a product of y_r and
 * a vector's entry r (for k < s P(r,j)'s: M(:,0) = P^T y for k = 0, h =
 * P(:,0:k)^T y for k > 0; for k = s y.r and y.y), and in the last block
 * to finish the grid's sums in block order and the scalar step
 * (kr_idr_dev_orth, kr_idr_dev_h or kr_idr_dev_omega). Replaces step 0's
 * idr_orth, idr_h's or idr_omega's launch. */
__global__ void __launch_bounds__(PELLR_BLOCK)
    pellr_idr_dots(const pellr_args a, int step, const double *__restrict__ x,
                   double *__restrict__ y, const double *__restrict__ P,
                   const double *__restrict__ rv, kr_idr_dev *st,
                   double *partial)
{
    __shared__ double sh[PELLR_WARPS], tot[KR_IDR_DEV_MAX_S];
    const int warp = threadIdx.x >> 5, T = a.slice_warps;
    const int64_t sl = (int64_t)blockIdx.x * (PELLR_WARPS / T) + warp / T;
    const int64_t k = sl * 32 + (threadIdx.x & 31);
    const bool own = warp % T == 0 && sl < a.nslices && k < a.n;
    /* the matrix is no earlier kernel's output: read before the wait */
    const int32_t len = sl < a.nslices ? a.rl[k] : 0;
    const int64_t base = sl < a.nslices ? a.off[sl] + (threadIdx.x & 31) : 0;
    const int32_t r = own ? a.perm[k] : 0;
    kr_pdl_begin();
    if (st->h.stop) return; /* set by an earlier launch: uniform */
    const int s = st->s, m = step == 0 ? s : step < s ? step : 2;
    double acc[KR_IDR_DEV_MAX_S];
#pragma unroll
    for (int j = 0; j < KR_IDR_DEV_MAX_S; j++)
        acc[j] = 0.0;
    const double sum = split_sum_at(a, len, base, x);
    if (own) {
        y[r] = sum;
        if (step == s) {
            acc[0] = sum * rv[r];
            acc[1] = sum * sum;
        } else {
#pragma unroll
            for (int j = 0; j < KR_IDR_DEV_MAX_S; j++)
                if (j < m) acc[j] = P[r + (int64_t)j * a.n] * sum;
        }
    }
#pragma unroll
    for (int j = 0; j < KR_IDR_DEV_MAX_S; j++) {
        if (j >= m) break; /* m is uniform over the grid */
        const double b = block_sum(acc[j], sh);
        if (threadIdx.x == 0) partial[j * gridDim.x + blockIdx.x] = b;
    }
    if (!last_block(&st->h.ticket)) return;
    for (int j = 0; j < m; j++) {
        const double g = final_sum(gridDim.x, partial + j * gridDim.x, sh);
        if (threadIdx.x == 0) tot[j] = g;
    }
    /* on a copy in shared memory (step_in_shared_n) */
    step_in_shared_n<KR_IDR_DEV_MAX_DOUBLES>(
        st, kr_idr_dev_bytes(s), [&](kr_idr_dev *c) {
            if (step == s) {
                kr_idr_dev_omega(c, tot[0], tot[1]);
                return;
            }
            double *out = step == 0 ? kr_idr_dev_M(c) : kr_idr_dev_hv(c);
            for (int j = 0; j < m; j++)
                out[j] = tot[j];
            if (step == 0)
                kr_idr_dev_orth(c, 0);
            else
                kr_idr_dev_h(c, step);
        });
}

/* GMRES's basis entry j as the mat-vec gathers it: d_j (c u_j), the two
 * products rounded as gm_scale and the Jacobi product round them. */
static __device__ __forceinline__ double gm_entry(double c,
                                                  const double *__restrict__ u,
                                                  const double *__restrict__ d,
                                                  int32_t j)
{
    const double vj = __dmul_rn(c, __ldg(u + j));
    return d ? __dmul_rn(__ldg(d + j), vj) : vj;
}

/* The block's share of h = V^T w (pellr_gm_dir): warp c takes columns
 * c, c + 8, ..., each over the block's slices in order, then its 32 lanes
 * (rows) by shuffles, into partial[column][block]. Column k - 1 is v,
 * which this launch wrote: from shared memory, as w is. */
static __device__ __forceinline__ void
gm_proj_block(const double *__restrict__ V, int64_t ld, int k, int nsl,
              const double (*wsh)[32], const double (*vsh)[32],
              const int32_t (*rsh)[32], double *partial)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int i = warp; i < k; i += PELLR_WARPS) {
        double acc = 0.0;
        for (int q = 0; q < nsl; q++) {
            const int32_t r = rsh[q][lane];
            if (r < 0) continue; /* padding, or past the last slice */
            const double vi = i == k - 1 ? vsh[q][lane] : V[r + i * ld];
            acc += vi * wsh[q][lane];
        }
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_down_sync(~0u, acc, off);
        if (lane == 0) partial[(int64_t)i * gridDim.x + blockIdx.x] = acc;
    }
}

/* The last block: h[i] = the blocks' partial sums of column i, one warp a
 * column, in a fixed order (k_gm_pass's). */
static __device__ __forceinline__ void
gm_proj_final(int k, const double *partial, double *__restrict__ h)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int i = warp; i < k; i += PELLR_WARPS) {
        double t = 0.0;
        for (int b = lane; b < (int)gridDim.x; b += 32)
            t += __ldcg(partial + (int64_t)i * gridDim.x + b);
        for (int off = 16; off > 0; off /= 2)
            t += __shfl_down_sync(~0u, t, off);
        if (lane == 0) h[i] = t;
    }
}

/* GMRES's scaling, Jacobi and mat-vec (the gm_dir_apply op) over a layout
 * without long slices, T warps per slice as split_slices and in its order,
 * so w is A (d .* v) exactly as the separate SpMV sums it: v = c u and
 * w = A (d .* v) with c = s->inv. With V (k <= PELLR_GM_COLS columns, the
 * last being v) also h = V^T w: each block's share from its rows' w and v
 * in shared memory, and the grid's in the last block to finish. Replaces
 * gm_scale's, the Jacobi's and the first Gram-Schmidt pass's launches. */
__global__ void __launch_bounds__(PELLR_BLOCK)
    pellr_gm_dir(const pellr_args a, const double *__restrict__ u,
                 const double *__restrict__ d, double *__restrict__ v,
                 double *__restrict__ w, const double *__restrict__ V, int k,
                 double *__restrict__ h, kr_gm_dev *s, double *partial)
{
    __shared__ double sums[PELLR_WARPS][32];
    __shared__ double wsh[PELLR_WARPS][32], vsh[PELLR_WARPS][32];
    __shared__ int32_t rsh[PELLR_WARPS][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int T = a.slice_warps, t = warp % T, q = warp / T;
    const int64_t sl = (int64_t)blockIdx.x * (PELLR_WARPS / T) + q;
    const int64_t row = sl * 32 + lane; /* in the sorted order */
    const bool own = sl < a.nslices && row < a.n;
    /* the matrix is no earlier kernel's output: read before the wait */
    const int32_t len = sl < a.nslices ? a.rl[row] : 0;
    const int64_t base = sl < a.nslices ? a.off[sl] + lane : 0;
    const int32_t r0 = t == 0 && own ? a.perm[row] : -1;
    kr_pdl_begin();
    if (s->h.stop) return; /* set by an earlier launch: uniform */
    const double c = s->inv;
    const double ur = r0 >= 0 ? u[r0] : 0.0; /* before the row's gathers */
    double sum = slice_share_at(a, len, base, t, T, [c, u, d](int32_t j) {
        return gm_entry(c, u, d, j);
    });
    sums[warp][lane] = sum;
    __syncthreads();
    if (t == 0) { /* the slice's first warp finishes its rows */
        int32_t r = -1;
        if (own) {
            for (int i = 1; i < T; i++)
                sum += sums[warp + i][lane];
            r = r0;
            const double vr = __dmul_rn(c, ur);
            v[r] = vr;
            w[r] = sum;
            vsh[q][lane] = vr;
            wsh[q][lane] = sum;
        }
        rsh[q][lane] = r;
    }
    if (!V) return; /* uniform */
    __syncthreads();
    gm_proj_block(V, a.n, k, PELLR_WARPS / T, wsh, vsh, rsh, partial);
    if (!last_block(&s->h.ticket)) return;
    gm_proj_final(k, partial, h);
}

/* y = alpha*A*x + beta*y for the rows of the long slices: the tile sums of
 * each row, added in tile order. One thread per row. */
__global__ void __launch_bounds__(PELLR_BLOCK)
    pellr_long_finish(const pellr_args a, double alpha, double beta,
                      double *__restrict__ y)
{
    kr_pdl_begin();
    const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= (int64_t)a.nlong * 32) return;
    const int64_t s = k >> 5;
    const int lane = threadIdx.x & 31;
    double sum = 0.0;
    for (int32_t t = a.tile_start[s]; t < a.tile_start[s + 1]; t++)
        sum += a.part[(int64_t)t * 32 + lane];
    put(a, k, sum, alpha, beta, y);
}

static void pellr_gpu_destroy(kr_ctx *ctx, void *impl)
{
    pellr_gpu *m = (pellr_gpu *)impl;
    if (!m) return;
    kr_dev_free(ctx, m->perm);
    kr_dev_free(ctx, m->rl);
    kr_dev_free(ctx, m->off);
    kr_dev_free(ctx, m->val);
    kr_dev_free(ctx, m->col);
    kr_dev_free(ctx, m->tile);
    kr_dev_free(ctx, m->tile_start);
    kr_dev_free(ctx, m->part);
    kr_ell_split_free(ctx, &m->split);
    free(m);
}

/* The SpMM's piece lists (their work array comes with the first SpMM). */
static size_t split_bytes(const kr_ell_split *S)
{
    return S->nsplit ? (size_t)S->npieces * 12 + ((size_t)S->nsplit + 1) * 4
                     : 0;
}

/* kr_pellr_host_bytes, less the widths (they stay on the host), plus the
 * tiles and the SpMM's pieces. */
static size_t gpu_bytes(const pellr_gpu *m)
{
    size_t ns = (size_t)m->nslices;
    return (size_t)m->nrows * 4 + ns * 32 * 4 + (ns + 1) * 8 +
           (size_t)m->stored * 12 +
           (size_t)m->ntiles * (sizeof(int2) + 32 * sizeof(double)) +
           ((size_t)m->nlong + 1) * 4 + split_bytes(&m->split);
}

/* Warps per ordinary slice: doubled while the slices are too few to fill
 * the GPU and each warp keeps PELLR_SPLIT_MIN_STEPS of the mean width or
 * the widest ordinary slice is still longer than PELLR_SPLIT_LONGEST
 * steps a warp. $KRYLOV_PELLR_SPLIT (1, 2, 4 or 8) sets it instead, for
 * the benchmarks that chose these rules. */
static int32_t split_for(const pellr_gpu *m, int32_t widest)
{
    const char *env = getenv("KRYLOV_PELLR_SPLIT");
    int forced = env ? atoi(env) : 0;
    if (forced == 1 || forced == 2 || forced == 4 || forced == 8) return forced;
    int64_t ordinary = m->nslices - m->nlong;
    double mean = m->nslices ? (double)m->stored / 32.0 / m->nslices : 0.0;
    int32_t T = 1;
    while (T < PELLR_SPLIT_MAX && ordinary * T < PELLR_SPLIT_WARPS &&
           (mean >= (double)PELLR_SPLIT_MIN_STEPS * 2 * T ||
            widest > PELLR_SPLIT_LONGEST * T))
        T *= 2;
    return T;
}

/* The long slices form a prefix: widths do not grow along the slices. */
static int32_t count_long(const kr_pellr_host *P)
{
    if (P->nslices == 0) return 0;
    double mean = (double)kr_pellr_host_stored(P) / 32.0 / P->nslices;
    int32_t s = 0;
    while (s < P->nslices && P->width[s] >= PELLR_TILE_J &&
           P->width[s] >= PELLR_LONG_FACTOR * mean)
        s++;
    return s;
}

/* Cuts the long slices into tiles of PELLR_TILE_J steps; uploads the tile
 * list and each slice's first tile, and makes the tile sums' work array. */
static kr_status make_tiles(kr_ctx *ctx, pellr_gpu *m, const int32_t *width)
{
    int32_t *start = (int32_t *)malloc(((size_t)m->nlong + 1) * 4);
    if (!start) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    start[0] = 0;
    for (int32_t s = 0; s < m->nlong; s++)
        start[s + 1] = start[s] + (width[s] + PELLR_TILE_J - 1) / PELLR_TILE_J;
    m->ntiles = start[m->nlong];
    int2 *tile = (int2 *)malloc(((size_t)m->ntiles + 1) * sizeof *tile);
    kr_status st =
        tile ? KR_OK : kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    for (int32_t s = 0; st == KR_OK && s < m->nlong; s++)
        for (int32_t t = start[s]; t < start[s + 1]; t++)
            tile[t] = make_int2(s, (t - start[s]) * PELLR_TILE_J);
    if (st == KR_OK)
        st = kr_dev_upload_new(ctx, tile, (size_t)m->ntiles * sizeof *tile,
                               (void **)&m->tile);
    if (st == KR_OK)
        st = kr_dev_upload_new(ctx, start, ((size_t)m->nlong + 1) * 4,
                               (void **)&m->tile_start);
    if (st == KR_OK)
        st = ctx->ops->alloc(ctx, (void **)&m->part,
                             (size_t)m->ntiles * 32 * sizeof(double));
    free(tile);
    free(start);
    return st;
}

static kr_status upload(kr_ctx *ctx, pellr_gpu *m, const kr_pellr_host *P)
{
    size_t ns = (size_t)P->nslices;
    KR_TRY(kr_dev_upload_new(ctx, P->perm, (size_t)P->nrows * 4,
                             (void **)&m->perm));
    KR_TRY(kr_dev_upload_new(ctx, P->rl, ns * 32 * 4, (void **)&m->rl));
    KR_TRY(kr_dev_upload_new(ctx, P->off, (ns + 1) * 8, (void **)&m->off));
    KR_TRY(kr_dev_upload_new(ctx, P->val, (size_t)m->stored * 8,
                             (void **)&m->val));
    KR_TRY(kr_dev_upload_new(ctx, P->col, (size_t)m->stored * 4,
                             (void **)&m->col));
    KR_TRY(make_tiles(ctx, m, P->width));
    return kr_ell_split_build(
        ctx, P->rl, kr_ell_split_count(P->rl, P->nrows, P->nnz), &m->split);
}

/* The kernels' view of m. */
static pellr_args args_of(const pellr_gpu *m)
{
    const pellr_args a = {m->nrows,       m->nslices, m->nlong, m->ntiles,
                          m->slice_warps, m->perm,    m->rl,    m->off,
                          m->val,         m->col,     m->tile,  m->tile_start,
                          m->part};
    return a;
}

static kr_status pellr_gpu_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    kr_pellr_host P;
    KR_TRY(kr_pellr_host_build(ctx, A, &P));
    pellr_gpu *m = (pellr_gpu *)calloc(1, sizeof *m);
    kr_status st = KR_OK;
    if (!m) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    } else {
        m->nrows = P.nrows;
        m->nslices = P.nslices;
        m->nlong = count_long(&P);
        m->stored = kr_pellr_host_stored(&P);
        st = upload(ctx, m, &P);
        m->slice_warps =
            split_for(m, m->nlong < m->nslices ? P.width[m->nlong] : 0);
        m->bytes = gpu_bytes(m);
    }
    kr_pellr_host_free(&P);
    if (st != KR_OK) {
        pellr_gpu_destroy(ctx, m);
        return st;
    }
    *out = m;
    return KR_OK;
}

static kr_status pellr_gpu_apply(kr_ctx *ctx, void *impl, double alpha,
                                 const double *x, double beta, double *y)
{
    const pellr_gpu *m = (const pellr_gpu *)impl;
    if (m->nrows == 0) return KR_OK;
    const pellr_args a = args_of(m);
    int64_t per_block = PELLR_WARPS / m->slice_warps;
    int64_t ordinary = m->nslices - m->nlong;
    int64_t blocks = m->ntiles + (ordinary + per_block - 1) / per_block;
    KR_LAUNCH_PDL(ctx, blocks, PELLR_BLOCK, pellr_spmv, a, x, alpha, beta, y);
    if (m->nlong == 0) return KR_OK;
    blocks = ((int64_t)m->nlong * 32 + PELLR_BLOCK - 1) / PELLR_BLOCK;
    KR_LAUNCH_PDL(ctx, blocks, PELLR_BLOCK, pellr_long_finish, a, alpha, beta,
                  y);
    return KR_OK;
}

/* Y = A X: the shared ELLPACK-like SpMM over the sorted positions (slice
 * layout, rows written through perm), the long rows cut into pieces. */
static kr_status pellr_gpu_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                       const double *X, double *Y)
{
    pellr_gpu *m = (pellr_gpu *)impl;
    kr_ell_rows L = {m->nrows, 0,      m->rl,  m->perm,
                     m->off,   m->val, m->col, &m->split};
    return kr_ell_rows_spmm(ctx, &L, k, X, Y);
}

/* Blocks of the fused kernels, pellr_cg_dir and pellr_gm_dir: the
 * ordinary slices only (they need no long ones). */
static int64_t fused_blocks(const pellr_gpu *m)
{
    int64_t per_block = PELLR_WARPS / m->slice_warps;
    return (m->nslices + per_block - 1) / per_block;
}

static int pellr_gpu_cg_dir_ok(const void *impl)
{
    const pellr_gpu *m = (const pellr_gpu *)impl;
    /* pellr_cg_dir's partial sums, one per block, in the scratch */
    return m->nlong == 0 && m->nslices > 0 &&
           fused_blocks(m) <= KR_CUDA_PARTIALS;
}

static kr_status pellr_gpu_cg_dir_apply(kr_ctx *ctx, void *impl,
                                        const double *z, const double *p,
                                        double *pn, double *q, kr_cg_dev *s)
{
    const pellr_gpu *m = (const pellr_gpu *)impl;
    if (!pellr_gpu_cg_dir_ok(m))
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "pellr: no fused CG step over long slices (internal)");
    const pellr_args a = args_of(m);
    kr_cuda_state *st = kr_cuda(ctx);
    KR_LAUNCH_PDL(ctx, fused_blocks(m), PELLR_BLOCK, pellr_cg_dir, a, z, p, pn,
                  q, s, st->d_scratch + KR_MAX_DOTS);
    return KR_OK;
}

/* pellr_idr_dots needs what pellr_cg_dir needs, and room for
 * KR_IDR_DEV_MAX_S partial sums per block */
static int pellr_gpu_idr_dots_ok(const void *impl)
{
    const pellr_gpu *m = (const pellr_gpu *)impl;
    return pellr_gpu_cg_dir_ok(m) &&
           fused_blocks(m) * KR_IDR_DEV_MAX_S <= KR_CUDA_PARTIALS;
}

static kr_status pellr_gpu_idr_dots_apply(kr_ctx *ctx, void *impl, int k,
                                          const double *x, double *y,
                                          const double *P, const double *r,
                                          kr_idr_dev *st)
{
    const pellr_gpu *m = (const pellr_gpu *)impl;
    if (!pellr_gpu_idr_dots_ok(m))
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "pellr: no fused IDR mat-vec over long slices "
                       "(internal)");
    const pellr_args a = args_of(m);
    kr_cuda_state *cs = kr_cuda(ctx);
    KR_LAUNCH_PDL(ctx, fused_blocks(m), PELLR_BLOCK, pellr_idr_dots, a, k, x, y,
                  P, r, st, cs->d_scratch + KR_MAX_DOTS);
    return KR_OK;
}

/* pellr_gm_dir needs no long slices. */
static int pellr_gpu_gm_dir_ok(const void *impl)
{
    const pellr_gpu *m = (const pellr_gpu *)impl;
    return m->nlong == 0 && m->nslices > 0;
}

/* h = V^T w comes from pellr_gm_dir up to PELLR_GM_COLS columns while its
 * partial sums (one per column and block) fit in the scratch; else from
 * gemv_t_dev after it. */
static kr_status pellr_gpu_gm_dir_apply(kr_ctx *ctx, void *impl,
                                        const kr_gm_dir *g)
{
    const pellr_gpu *m = (const pellr_gpu *)impl;
    if (!pellr_gpu_gm_dir_ok(m))
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "pellr: no fused GMRES step over long slices "
                       "(internal)");
    kr_cuda_state *st = kr_cuda(ctx);
    const int64_t blocks = fused_blocks(m);
    const int here = g->V && g->k >= 1 && g->k <= PELLR_GM_COLS &&
                     blocks * g->k <= KR_CUDA_PARTIALS;
    KR_LAUNCH_PDL(ctx, blocks, PELLR_BLOCK, pellr_gm_dir, args_of(m), g->u,
                  g->d, g->v, g->w, here ? g->V : (const double *)NULL, g->k,
                  g->h, g->s, st->d_scratch + KR_MAX_DOTS);
    if (!g->V || here) return KR_OK;
    return ctx->ops->gemv_t_dev(ctx, m->nrows, g->k, g->V, m->nrows, g->w,
                                g->h);
}

static size_t pellr_gpu_bytes(const void *impl)
{
    return ((const pellr_gpu *)impl)->bytes;
}

static int64_t pellr_gpu_stored(const void *impl)
{
    return ((const pellr_gpu *)impl)->stored;
}

/* The long slices of a device-built layout: counted on the device by
 * count_long's rule, then only their widths come to the host for the
 * tiles. */
static kr_status tiles_from_device(kr_ctx *ctx, pellr_gpu *m,
                                   const int32_t *width)
{
    double mean = m->nslices ? (double)m->stored / 32.0 / m->nslices : 0.0;
    KR_TRY(kr_pellr_dev_count_wide(ctx, width, m->nslices, PELLR_TILE_J,
                                   PELLR_LONG_FACTOR * mean, &m->nlong));
    int32_t *wide = (int32_t *)malloc(((size_t)m->nlong + 1) * 4);
    if (!wide) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = kr_dev_read_i32(ctx, width, wide, (size_t)m->nlong);
    if (st == KR_OK) st = make_tiles(ctx, m, wide);
    free(wide);
    return st;
}

/* The SpMM's long rows of a device-built layout: counted on the device by
 * kr_ell_split_count's rule, then only their lengths come to the host. */
static kr_status split_from_device(kr_ctx *ctx, pellr_gpu *m, int64_t nnz)
{
    int32_t nsplit = 0;
    KR_TRY(kr_pellr_dev_count_wide(
        ctx, m->rl, m->nrows, 1, kr_ell_split_min_len(nnz, m->nrows), &nsplit));
    int32_t *len = (int32_t *)malloc(((size_t)nsplit + 1) * 4);
    if (!len) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = kr_dev_read_i32(ctx, m->rl, len, (size_t)nsplit);
    if (st == KR_OK) st = kr_ell_split_build(ctx, len, nsplit, &m->split);
    free(len);
    return st;
}

/* KR_BUILD_DEVICE: the same arrays, built by spmv/pellr_devbuild.cu. */
static kr_status pellr_gpu_build_device(kr_ctx *ctx, const kr_csr_view *A,
                                        void **out)
{
    pellr_gpu *m = (pellr_gpu *)calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_pellr_dev P;
    kr_status st = kr_pellr_dev_build(ctx, A, &P);
    if (st == KR_OK) {
        m->nrows = A->nrows;
        m->nslices = P.nslices;
        m->stored = P.stored;
        m->perm = P.perm;
        m->rl = P.rl;
        m->off = P.off;
        m->val = P.val;
        m->col = P.col;
        P.perm = P.rl = P.col = NULL; /* m owns them now */
        P.off = NULL;
        P.val = NULL;
        st = tiles_from_device(ctx, m, P.width);
        int32_t widest = 0; /* widths do not grow: the first ordinary one */
        if (st == KR_OK && m->nlong < m->nslices)
            st = kr_dev_read_i32(ctx, P.width + m->nlong, &widest, 1);
        m->slice_warps = split_for(m, widest);
        if (st == KR_OK) st = split_from_device(ctx, m, A->nnz);
        m->bytes = gpu_bytes(m);
        kr_pellr_dev_free(ctx, &P);
    }
    if (st != KR_OK) {
        pellr_gpu_destroy(ctx, m);
        return st;
    }
    *out = m;
    return KR_OK;
}

static int pellr_gpu_arrays(const void *impl, kr_dev_array *a, int max)
{
    const pellr_gpu *m = (const pellr_gpu *)impl;
    const size_t ns = (size_t)m->nslices;
    const kr_dev_array all[] = {
        {"perm", m->perm, (size_t)m->nrows * 4},
        {"rl", m->rl, ns * 32 * 4},
        {"off", m->off, (ns + 1) * 8},
        {"val", m->val, (size_t)m->stored * 8},
        {"col", m->col, (size_t)m->stored * 4},
        {"tile", m->tile, (size_t)m->ntiles * sizeof(int2)},
        {"tile_start", m->tile_start, ((size_t)m->nlong + 1) * 4},
        {"piece", m->split.piece, (size_t)m->split.npieces * 12},
        {"piece_start", m->split.piece_start,
         m->split.nsplit ? ((size_t)m->split.nsplit + 1) * 4 : 0}};
    return kr_dev_arrays_put(all, 9, a, max);
}

static kr_format_ops make_ops(void)
{
    kr_format_ops o = {}; /* optional members NULL */
    o.name = "pellr";
    o.build = pellr_gpu_build;
    o.apply = pellr_gpu_apply;
    o.bytes = pellr_gpu_bytes;
    o.destroy = pellr_gpu_destroy;
    o.stored = pellr_gpu_stored;
    o.build_device = pellr_gpu_build_device;
    o.arrays = pellr_gpu_arrays;
    o.apply_multi = pellr_gpu_apply_multi;
    o.cg_dir_ok = pellr_gpu_cg_dir_ok;
    o.cg_dir_apply = pellr_gpu_cg_dir_apply;
    o.idr_dots_ok = pellr_gpu_idr_dots_ok;
    o.idr_dots_apply = pellr_gpu_idr_dots_apply;
    o.gm_dir_ok = pellr_gpu_gm_dir_ok;
    o.gm_dir_apply = pellr_gpu_gm_dir_apply;
    return o;
}

static const kr_format_ops pellr_gpu_ops = make_ops();

const kr_format_ops *kr_pellr_cuda_ops(void) { return &pellr_gpu_ops; }
