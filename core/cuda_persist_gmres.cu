/* GMRES(m)'s persistent batches (kr_backend_ops.gm_persist): the Arnoldi
 * steps of the fused device path (solver/gmres.c), a batch of them in one
 * cooperative launch; the shared pieces are core/cuda_persist.cuh's.
 *
 * A step has three grid-wide barriers, one per reduction the classical
 * Gram-Schmidt with re-orthogonalisation needs:
 *   1. v_j = inv u and w = A (d .* v_j), the scaling and the Jacobi
 *      folded into the gather; the block's share of h = V^T w;
 *   2. h; w -= V h; the block's share of h2 = V^T w;
 *   3. h2; w -= V h2; the block's share of w.w;
 * then w.w and kr_gm_dev_step on each block's copy of the state, and the
 * next step's SpMV starts without a barrier (it gathers w, complete since
 * barrier 3). Every block totals all k columns itself (a warp a column,
 * the blocks in one order): with at most two blocks an SM that is a few
 * loads a lane, less than the barrier a split of the totals over the
 * blocks would add.
 *
 * The rows of w and of V's columns are each one block's: the chunks of
 * PERSIST_BLOCK / V rows csr_rows gives a block (chunk c to block
 * c mod gridDim.x), in every phase; only u, gathered in phase 1, is read
 * across blocks, and it is written in phase 3 of the step before. The
 * partial sums of the three phases have slots of their own (m, m and 1
 * per block), each rewritten only a step later, after two barriers. */
#include "core/cuda_persist.cuh"
#include "core/cuda_persist.h"

namespace cg = cooperative_groups;

struct gm_persist_args {
    kr_csr_view A;
    const double *d; /* Jacobi's inverse diagonal, or NULL */
    double *V, *t, *z;
    kr_gm_dev *s;
    double *part; /* (2 m + 1) * gridDim.x partial sums */
    int m, steps;
};

/* f(i) for each of this block's rows i, a thread a row: its chunks
 * (numbers blockIdx.x + q gridDim.x) blockDim.x / chunk at a time. */
template <typename F>
static __device__ void block_rows(int64_t n, int chunk, F f)
{
    const int at_once = blockDim.x / chunk;
    const int64_t step = (int64_t)at_once * gridDim.x * chunk;
    const int64_t q = blockIdx.x + (int64_t)(threadIdx.x / chunk) * gridDim.x;
    for (int64_t i = q * chunk + threadIdx.x % chunk; i < n; i += step)
        f(i);
}

/* The block's share of V(:, 0:k)^T w over its rows: warp l takes columns
 * l, l + 16, ..., its lanes the rows in order, into part[l][blockIdx.x]. */
static __device__ void block_cols(const double *V, int64_t n, int k,
                                  const double *w, int chunk, double *part)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int l = warp; l < k; l += PERSIST_BLOCK / 32) {
        const double *vl = V + (int64_t)l * n;
        double acc = 0.0;
        for (int64_t c0 = (int64_t)blockIdx.x * chunk; c0 < n;
             c0 += (int64_t)gridDim.x * chunk)
            for (int r = lane; r < chunk && c0 + r < n; r += 32)
                acc += __ldcg(vl + c0 + r) * __ldcg(w + c0 + r);
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_down_sync(~0u, acc, off);
        if (lane == 0) part[(int64_t)l * gridDim.x + blockIdx.x] = acc;
    }
    __syncthreads();
}

/* out[l] = the blocks' shares part[l][0..gridDim.x) added in one order,
 * l < k, a warp a column; the same in every block. */
static __device__ void col_totals(const double *part, int k, double *out)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int l = warp; l < k; l += PERSIST_BLOCK / 32) {
        double t = 0.0;
        for (unsigned b = lane; b < gridDim.x; b += 32)
            t += __ldcg(part + (int64_t)l * gridDim.x + b);
        for (int off = 16; off > 0; off /= 2)
            t += __shfl_down_sync(~0u, t, off);
        if (lane == 0) out[l] = t;
    }
    __syncthreads();
}

/* Columns of V a row's update loads before it sums them: each round is a
 * trip to L2. 16 took the kernel to 63 registers, at the edge of the 64
 * a thread that two blocks of PERSIST_BLOCK an SM allow; 8 keeps 58. */
#define GM_LOADS 8

/* w_i -= sum_l V_il h_l for the block's rows, added as k_gm_pass adds
 * them (the coefficients -h_l, then w_i plus the sum); returns the
 * thread's share of w.w. */
static __device__ double subtract_cols(const double *V, int64_t n, int k,
                                       const double *h, double *w, int chunk)
{
    double ww = 0.0;
    block_rows(n, chunk, [&](int64_t i) {
        double acc = 0.0;
        for (int l0 = 0; l0 < k; l0 += GM_LOADS) {
            double vl[GM_LOADS];
#pragma unroll
            for (int u = 0; u < GM_LOADS; u++)
                vl[u] = l0 + u < k ? __ldcg(V + (int64_t)(l0 + u) * n + i) : 0;
#pragma unroll
            for (int u = 0; u < GM_LOADS; u++)
                if (l0 + u < k) acc += vl[u] * -h[l0 + u];
        }
        const double wi = __ldcg(w + i) + acc;
        w[i] = wi;
        ww += wi * wi;
    });
    __syncthreads();
    return ww;
}

/* Phase 1 of step j: v_j = c u into V's column j and w = A (d .* v_j),
 * each product rounded as gm_scale and the Jacobi round them. */
template <int V>
static __device__ void dir_spmv(const gm_persist_args &a, const double *u,
                                double *v, double *w, double c)
{
    const double *d = a.d;
    csr_rows<V>(
        a.A,
        [&](int32_t col) {
            const double vc = __dmul_rn(c, __ldcg(u + col));
            return d ? __dmul_rn(__ldg(d + col), vc) : vc;
        },
        [&](int64_t i, double wi) {
            v[i] = __dmul_rn(c, __ldcg(u + i));
            w[i] = wi;
        });
    __syncthreads(); /* the block's rows of v and w are written */
}

/* The state (struct, H, cs, sn, g, h2), a copy per block in shared
 * memory, as shared_state keeps CG's. */
struct gm_state {
    double d[KR_GM_DEV_MAX_DOUBLES];
    __device__ kr_gm_dev *get() { return (kr_gm_dev *)d; }
};

template <int V>
__global__ void __launch_bounds__(PERSIST_BLOCK)
    k_gm_persist(const gm_persist_args a)
{
    __shared__ double sh[PERSIST_BLOCK / 32];
    __shared__ gm_state st;
    cg::grid_group grid = cg::this_grid();
    const int m = a.m, chunk = PERSIST_BLOCK / V;
    const unsigned nd = (unsigned)(kr_gm_dev_bytes(m) / sizeof(double));
    for (unsigned i = threadIdx.x; i < nd; i += blockDim.x)
        st.d[i] = __ldcg((const double *)a.s + i);
    __syncthreads();
    kr_gm_dev *s = st.get();
    double *H = kr_gm_dev_H(s), *h2 = H + (m + 1) * m + 3 * m + 1;
    const int64_t n = a.A.nrows;
    const unsigned nb = gridDim.x;
    double *ph = a.part, *ph2 = ph + (int64_t)m * nb, *pww = ph2 + m * nb;
    for (int it = 0; it < a.steps && !s->h.stop && s->j < m; it++) {
        const int j = s->j, k = j + 1;
        const double *u = j % 2 ? a.z : a.t;
        double *w = j % 2 ? a.t : a.z, *vj = a.V + (int64_t)j * n;
        double *h = H + j * (m + 1);
        dir_spmv<V>(a, u, vj, w, s->inv);
        block_cols(a.V, n, k, w, chunk, ph);
        grid.sync();
        col_totals(ph, k, h);
        subtract_cols(a.V, n, k, h, w, chunk);
        block_cols(a.V, n, k, w, chunk, ph2);
        grid.sync();
        col_totals(ph2, k, h2);
        double ww = block_total(subtract_cols(a.V, n, k, h2, w, chunk), sh);
        if (threadIdx.x == 0) pww[blockIdx.x] = ww;
        grid.sync();
        ww = grid_total(pww, sh);
        if (threadIdx.x == 0) kr_gm_dev_step(s, ww);
        __syncthreads();
    }
    if (blockIdx.x != 0) return;
    for (unsigned i = threadIdx.x; i < nd; i += blockDim.x)
        ((double *)a.s)[i] = st.d[i];
}

extern "C" const void *kr_cuda_gm_persist_kernel(int v)
{
    switch (v) {
    case 2: return (const void *)k_gm_persist<2>;
    case 4: return (const void *)k_gm_persist<4>;
    case 8: return (const void *)k_gm_persist<8>;
    case 16: return (const void *)k_gm_persist<16>;
    default: return (const void *)k_gm_persist<32>;
    }
}

extern "C" kr_status kr_cuda_gm_persist(kr_ctx *ctx, const kr_csr_view *A,
                                        int m, int steps, const double *d,
                                        double *V, double *t, double *z,
                                        kr_gm_dev *s)
{
    kr_cuda_state *st = kr_cuda(ctx);
    if (m < 1 || m > KR_GM_DEV_MAX_M || steps < 1 || steps > KR_BATCH_MAX)
        return kr_fail(ctx, KR_ERR_ARG,
                       "gm_persist: restart %d outside 1..%d or %d steps "
                       "outside 1..%d",
                       m, KR_GM_DEV_MAX_M, steps, KR_BATCH_MAX);
    const int v = lanes_per_row(A);
    const void *kernel = kr_cuda_gm_persist_kernel(v);
    int nb = 1;
    KR_TRY(persist_blocks(ctx, "gm_persist", kernel, 2 * m + 1,
                          (int64_t)A->nrows * v, &nb));
    gm_persist_args a = {*A, d,    V, t, z, s, st->d_scratch + KR_MAX_DOTS,
                         m,  steps};
    void *args[] = {&a};
    KR_CUDA_TRY(ctx, cudaLaunchCooperativeKernel(kernel, nb, PERSIST_BLOCK,
                                                 args, 0, st->stream));
    return KR_OK;
}
