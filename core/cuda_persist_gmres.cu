/* GMRES(m)'s persistent batches (kr_backend_ops.gm_persist): the Arnoldi
 * steps of the fused device path (solver/gmres.c), a batch of them in one
 * cooperative launch; the shared pieces are core/cuda_persist.cuh's.
 *
 * A step has three grid-wide barriers, one per reduction the classical
 * Gram-Schmidt with re-orthogonalisation needs:
 *   1. v_j = inv u and w = A (d .* v_j), the scaling and the Jacobi
 *      folded into the gather; the block's share of h = V^T w;
 *   2. h; w -= V h and, from the same loads of V, the block's share of
 *      h2 = V^T w;
 *   3. h2; w -= V h2; the block's share of w.w;
 * then w.w and kr_gm_dev_rotate on each block's copy of the state, and
 * the next step's SpMV starts without a barrier (it gathers w, complete
 * since barrier 3). Every block totals all k columns itself (a warp a
 * column, the blocks in one order): with at most two blocks an SM that
 * is one trip to L2 a warp, less than the barrier a split of the totals
 * over the blocks would add.
 *
 * The rows of w and of V's columns are each one block's: the chunks of
 * PERSIST_BLOCK / V rows csr_rows gives a block (chunk c to block
 * c mod gridDim.x), in every phase; only u, gathered in phase 1, is read
 * across blocks, and it is written in phase 3 of the step before. In
 * phases 1-3 the block's threads are G column groups (gm_layout): a
 * block has a few dozen rows on a small matrix, so a thread a row, as
 * this kernel first had, left most threads idle and made a row's sum
 * over 31 columns four trips to L2, where it is now one. The partial
 * sums of the three phases have slots of their own (m, m and 1 per
 * block), each rewritten only a step later, after two barriers. */
#include "core/cuda_persist.cuh"
#include "core/cuda_persist.h"

#include <string.h>

namespace cg = cooperative_groups;

struct gm_persist_args {
    kr_csr_view A;
    const double *d; /* Jacobi's inverse diagonal, or NULL */
    double *V, *t, *z;
    kr_gm_dev *s;
    const double *b; /* NULL: the host ends the cycle */
    double *x;
    const double *r; /* step 0's input */
    double *part;    /* (2 m + 1) * gridDim.x partial sums */
    int m, steps;
    int group; /* column groups in phases 1-3: gm_group */
    int fresh; /* a new cycle: the state is head and beta, not *s */
    kr_gm_dev head;
    double beta;
};

/* Columns of V a thread holds in phases 1-3: G = 8 or 16 column groups
 * (gm_group) of PERSIST_BLOCK / G threads cover k <= 32 columns. */
#define GM_COLS 4

/* Row rho of this block's rows (its chunks blockIdx.x + q gridDim.x of
 * `chunk` rows, in order). */
static __device__ __forceinline__ int64_t block_row(int64_t rho, int chunk)
{
    return (blockIdx.x + rho / chunk * (int64_t)gridDim.x) * chunk +
           rho % chunk;
}

/* Phases 1-3 see the block as G column groups of R = PERSIST_BLOCK / G
 * threads (R >= 32: a warp is in one group): thread r of group q takes
 * row r of each pass of R rows and columns l = q + G u, so a warp's
 * loads of a column are R consecutive rows of a chunk. */
struct gm_layout {
    int G, R, q, r;
    __device__ gm_layout(int groups)
        : G(groups), R(PERSIST_BLOCK / groups), q(threadIdx.x / R),
          r(threadIdx.x % R)
    {
    }
};

/* Row i's entries of this thread's columns of V(:, 0:k), 0 past k or
 * where !ok */
static __device__ __forceinline__ void load_cols(const double *V, int64_t n,
                                                 int k, const gm_layout &L,
                                                 int64_t i, bool ok,
                                                 double (&v)[GM_COLS])
{
#pragma unroll
    for (int u = 0; u < GM_COLS; u++) {
        const int l = L.q + L.G * u;
        v[u] = ok && l < k ? __ldcg(V + (int64_t)l * n + i) : 0.0;
    }
}

/* part[l][blockIdx.x] = the block's sum of acc over its rows for column
 * l = q + G u (acc[u] of group q's threads): each warp's shuffles, then
 * thread l adds its group's R / 32 warps in order; ws holds 32 x 2. */
static __device__ void col_sums(const double (&acc)[GM_COLS], int k,
                                const gm_layout &L, double *ws, double *part)
{
    const int per_group = L.R / 32, lane = threadIdx.x % 32;
    const int wq = (threadIdx.x / 32) % per_group;
#pragma unroll
    for (int u = 0; u < GM_COLS; u++) {
        double v = acc[u];
        for (int off = 16; off > 0; off /= 2)
            v += __shfl_down_sync(~0u, v, off);
        const int l = L.q + L.G * u;
        if (lane == 0 && l < k) ws[l * per_group + wq] = v;
    }
    __syncthreads();
    if ((int)threadIdx.x < k) {
        double t = 0.0;
        for (int w = 0; w < per_group; w++)
            t += ws[threadIdx.x * per_group + w];
        part[(int64_t)threadIdx.x * gridDim.x + blockIdx.x] = t;
    }
}

/* Scratch of phases 1-3 in shared memory */
struct gm_scratch {
    double red[PERSIST_BLOCK];    /* [q][r]: a row's sums over a group */
    double wn[PERSIST_BLOCK / 8]; /* a pass's new w, by r */
    double ws[32 * 2];            /* col_sums' warp sums */
};

/* Phase 1: the block's share of h = V(:, 0:k)^T w into part. */
static __device__ void gm_dots(const double *V, int64_t n, int k,
                               const double *w, int chunk, const gm_layout &L,
                               gm_scratch &sc, double *part)
{
    double acc[GM_COLS] = {0.0};
    for (int64_t r0 = 0; block_row(r0, chunk) < n; r0 += L.R) {
        const int64_t i = block_row(r0 + L.r, chunk);
        const bool ok = i < n;
        double v[GM_COLS];
        load_cols(V, n, k, L, i, ok, v);
        const double wi = ok ? __ldcg(w + i) : 0.0;
#pragma unroll
        for (int u = 0; u < GM_COLS; u++)
            acc[u] += v[u] * wi;
    }
    col_sums(acc, k, L, sc.ws, part);
}

/* Phases 2 and 3: w -= V(:, 0:k) c over the block's rows (a row's
 * products summed by group in red, then over the groups in order), then,
 * with part, the block's share of V(:, 0:k)^T w from the same loads of
 * V; without, the thread's share of w.w is returned. */
static __device__ double gm_subtract(const double *V, int64_t n, int k,
                                     const double *c, double *w, int chunk,
                                     const gm_layout &L, gm_scratch &sc,
                                     double *part)
{
    double acc[GM_COLS] = {0.0}, ww = 0.0;
    for (int64_t r0 = 0; block_row(r0, chunk) < n; r0 += L.R) {
        const int64_t i = block_row(r0 + L.r, chunk);
        const bool ok = i < n;
        double v[GM_COLS];
        load_cols(V, n, k, L, i, ok, v);
        const double wi = ok && L.q == 0 ? __ldcg(w + i) : 0.0;
        double sum = 0.0;
#pragma unroll
        for (int u = 0; u < GM_COLS; u++)
            if (L.q + L.G * u < k) sum += v[u] * c[L.q + L.G * u];
        sc.red[L.q * L.R + L.r] = sum;
        __syncthreads();
        if (L.q == 0) {
            double t = 0.0;
            for (int g = 0; g < L.G; g++)
                t += sc.red[g * L.R + L.r];
            const double wn = wi - t;
            if (ok) {
                w[i] = wn;
                ww += wn * wn;
            }
            sc.wn[L.r] = wn;
        }
        __syncthreads();
        const double wn = sc.wn[L.r];
#pragma unroll
        for (int u = 0; u < GM_COLS; u++)
            acc[u] += v[u] * wn;
    }
    if (part) col_sums(acc, k, L, sc.ws, part);
    __syncthreads();
    return ww;
}

/* Phase 1 of step j: v_j = c u into V's column j and w = A (d .* v_j),
 * each product rounded as gm_scale and the Jacobi round them. */
template <int V>
static __device__ void dir_spmv(const gm_persist_args &a, const held_entries &h,
                                const double *u, double *v, double *w, double c)
{
    const double *d = a.d;
    csr_rows<V>(
        a.A, h,
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

/* 1 where the batch ended the cycle with columns to add to x: what
 * solver/gmres.c's cycle_dev would pass on to update_x (not after a
 * norm that is NaN or Inf, nor where no step was made). */
static __device__ bool gm_cycle_ended(const kr_gm_dev *s)
{
    const int stop = s->h.stop;
    if (stop == KR_DEV_RUNNING || s->j == 0) return false;
    return stop != KR_DEV_STOP_CHECK ||
           isfinite(s->h.rnorm[(s->h.done - 1) % KR_BATCH_MAX]);
}

/* y = R^-1 g over the k columns of the block's copy of the state, in
 * thread 0, as solver/gmres.c's update_x. */
static __device__ void gm_solve_y(kr_gm_dev *s, double *y)
{
    const int m = s->m, k = s->j;
    const double *H = kr_gm_dev_H(s);
    const double *g = H + (m + 1) * m + 2 * m;
    if (threadIdx.x == 0)
        for (int i = k - 1; i >= 0; i--) {
            double t = g[i];
            for (int l = i + 1; l < k; l++)
                t -= H[l * (m + 1) + i] * y[l];
            y[i] = t / H[i * (m + 1) + i];
        }
    __syncthreads();
}

/* The cycle's end in the launch, where gm_cycle_ended: x += d .* (V y),
 * then r = b - A x into t and r.r into s->rr (slot part, free since the
 * last step's barrier). Saves the host a download of H, four launches
 * and the residual's round trip: a short solve's fixed costs. */
template <int V>
static __device__ void gm_end_cycle(const gm_persist_args &a,
                                    const held_entries &hr, kr_gm_dev *s,
                                    double *part, double *sh)
{
    __shared__ double y[KR_GM_DEV_MAX_M];
    const int k = s->j;
    const int64_t n = a.A.nrows;
    gm_solve_y(s, y);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double t = 0.0;
        for (int l = 0; l < k; l++)
            t += __ldcg(a.V + (int64_t)l * n + i) * y[l];
        a.x[i] += a.d ? __ldg(a.d + i) * t : t;
    }
    cg::this_grid().sync();
    double rr = 0.0;
    csr_rows<V>(
        a.A, hr, [&](int32_t c) { return __ldcg(a.x + c); },
        [&](int64_t i, double yi) {
            const double ri = a.b[i] - yi;
            a.t[i] = ri;
            rr += ri * ri;
        });
    rr = block_total(rr, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = rr;
    cg::this_grid().sync();
    rr = grid_total(part, sh);
    if (threadIdx.x == 0) {
        s->rr = rr;
        s->ended = 1;
    }
    __syncthreads();
}

/* The block's copy of the state: *a.s, or for a new cycle (a.fresh) the
 * launch's head with g = (beta, 0, ...) and H, the rotations and h2 0. */
static __device__ void load_state(const gm_persist_args &a, double *d,
                                  unsigned nd)
{
    const unsigned nh = sizeof(kr_gm_dev) / sizeof(double);
    const unsigned g0 = nh + (a.m + 1) * a.m + 2 * a.m;
    const double *head = (const double *)&a.head;
    for (unsigned i = threadIdx.x; i < nd; i += blockDim.x)
        d[i] = !a.fresh  ? __ldcg((const double *)a.s + i)
               : i < nh  ? head[i]
               : i == g0 ? a.beta
                         : 0.0;
    __syncthreads();
}

template <int V>
__global__ void __launch_bounds__(PERSIST_BLOCK)
    k_gm_persist(const gm_persist_args a)
{
    __shared__ double sh[PERSIST_BLOCK / 32];
    __shared__ gm_scratch sc;
    __shared__ gm_state st;
    cg::grid_group grid = cg::this_grid();
    const held_entries &hr = hold_rows<V>(a.A);
    const int m = a.m, chunk = PERSIST_BLOCK / V;
    const gm_layout L(a.group);
    const unsigned nd = (unsigned)(kr_gm_dev_bytes(m) / sizeof(double));
    load_state(a, st.d, nd);
    kr_gm_dev *s = st.get();
    double *H = kr_gm_dev_H(s), *h2 = kr_gm_dev_h2(s);
    const int64_t n = a.A.nrows;
    const unsigned nb = gridDim.x;
    double *ph = a.part, *ph2 = ph + (int64_t)m * nb, *pww = ph2 + m * nb;
    for (int it = 0; it < a.steps && !s->h.stop && s->j < m; it++) {
        const int j = s->j, k = j + 1;
        const double *u = j % 2 ? a.z : j ? a.t : a.r;
        double *w = j % 2 ? a.t : a.z, *vj = a.V + (int64_t)j * n;
        double *h = H + j * (m + 1);
        dir_spmv<V>(a, hr, u, vj, w, s->inv);
        gm_dots(a.V, n, k, w, chunk, L, sc, ph);
        grid.sync();
        grid_totals_n(ph, k, h);
        gm_subtract(a.V, n, k, h, w, chunk, L, sc, ph2);
        grid.sync();
        grid_totals_n(ph2, k, h2);
        if ((int)threadIdx.x < k) h[threadIdx.x] += h2[threadIdx.x];
        double ww = gm_subtract(a.V, n, k, h2, w, chunk, L, sc, NULL);
        ww = block_total(ww, sh);
        if (threadIdx.x == 0) pww[blockIdx.x] = ww;
        grid.sync();
        ww = grid_total(pww, sh);
        if (threadIdx.x == 0) kr_gm_dev_rotate(s, ww);
        __syncthreads();
    }
    if (a.b && gm_cycle_ended(s)) gm_end_cycle<V>(a, hr, s, pww, sh);
    if (blockIdx.x != 0) return;
    for (unsigned i = threadIdx.x; i < nd; i += blockDim.x)
        ((double *)a.s)[i] = st.d[i];
}

/* Column groups in phases 1-3: 16 (passes of 32 rows) where every
 * block has at most 32 rows (chunk rows a chunk, nb blocks), else 8
 * (passes of 64); either holds the k <= 32 columns, GM_COLS a thread. */
static int gm_group(int64_t n, int chunk, int nb)
{
    const int64_t chunks = (n + chunk - 1) / chunk;
    return chunk * ((chunks + nb - 1) / nb) <= 32 ? 16 : 8;
}

extern "C" const void *kr_cuda_gm_persist_kernel(int lanes)
{
    return PERSIST_KERNEL(k_gm_persist, lanes);
}

extern "C" kr_status kr_cuda_gm_persist(kr_ctx *ctx, const kr_gm_launch *g)
{
    kr_cuda_state *st = kr_cuda(ctx);
    static_assert(KR_GM_DEV_MAX_M <= 8 * GM_COLS, "8 groups hold m columns");
    static_assert(sizeof(kr_gm_dev) % sizeof(double) == 0, "whole doubles");
    const int m = g->m, steps = g->steps;
    if (m < 1 || m > KR_GM_DEV_MAX_M || steps < 1 || steps > KR_BATCH_MAX)
        return kr_fail(ctx, KR_ERR_ARG,
                       "gm_persist: restart %d outside 1..%d or %d steps "
                       "outside 1..%d",
                       m, KR_GM_DEV_MAX_M, steps, KR_BATCH_MAX);
    const int v = lanes_per_row(ctx, g->A);
    const void *kernel = kr_cuda_gm_persist_kernel(v);
    int nb = 1;
    KR_TRY(persist_blocks(ctx, "gm_persist", kernel, 2 * m + 1,
                          (int64_t)g->A->nrows * v, &nb));
    gm_persist_args a;
    memset(&a, 0, sizeof a);
    a.A = *g->A;
    a.d = g->d;
    a.V = g->V;
    a.t = g->t;
    a.z = g->z;
    a.s = g->s;
    a.b = g->b;
    a.x = g->x;
    a.r = g->r ? g->r : g->t;
    a.part = persist_parts(ctx);
    a.m = m;
    a.steps = steps;
    a.group = gm_group(g->A->nrows, PERSIST_BLOCK / v, nb);
    a.fresh = g->head != NULL;
    if (g->head) a.head = *g->head;
    a.beta = g->beta;
    void *args[] = {&a};
    KR_CUDA_TRY(ctx, cudaLaunchCooperativeKernel(kernel, nb, PERSIST_BLOCK,
                                                 args, 0, st->stream));
    return KR_OK;
}
