/* BiCGSTAB's persistent batches (kr_backend_ops.bcgs_persist): the
 * device loop's iteration (bcgs_alpha, bcgs_s, bcgs_omega, bcgs_update,
 * bcgs_direction, with Jacobi or no preconditioner) with three grid-wide
 * barriers an iteration, one per reduction; the shared pieces are
 * core/cuda_persist.cuh's.
 *
 * An iteration's direction p' = r + beta (p - omega v) is made on the fly
 * in the gather of the next iteration's first SpMV, and s = r - alpha v in
 * the gather of the second, so neither waits for a barrier of its own:
 *   phase 1: pn = p', vn = A (d .* pn), r0^.vn        | alpha
 *   phase 2: t = A (d .* s), s.s, t.s, t.t            | the s test, omega
 *   phase 3: x += alpha d .* pn + omega d .* s, r = s - omega t,
 *            p = pn, v = vn; r.r, r0^.r               | the test, beta
 * A vector a phase gathers is written only in another phase: pn and vn
 * are the new p and v while the old ones are gathered, copied over in
 * phase 3, which recomputes s from r and vn instead of storing it. Each
 * phase writes its partial sums to slots of its own, so a block still
 * adding up one phase's sums never sees the next phase's. */
#include "core/cuda_persist.cuh"
#include "core/cuda_persist.h"

namespace cg = cooperative_groups;

struct bcgs_persist_args {
    kr_csr_view A;
    const double *d;  /* Jacobi's inverse diagonal, or NULL */
    const double *rh; /* r0^ */
    double *x, *r, *p, *v, *pn, *vn, *t;
    kr_bcgs_dev *s;
    double *part; /* 6 * gridDim.x partial sums */
    int iters;
};

/* Partial-sum slots, in units of gridDim.x: phase 1 has 1, phase 2 has 3,
 * phase 3 has 2. */
enum { SLOT_RV = 0, SLOT_SS = 1, SLOT_RR = 4, SLOTS = 6 };

/* bcgs_direction's p' = r + c v + b p (c = -beta omega, b = beta) */
static __device__ double bcgs_dir(const bcgs_persist_args &a, int64_t i,
                                  double c, double b)
{
    return fma(b, __ldcg(a.p + i), fma(c, __ldcg(a.v + i), __ldcg(a.r + i)));
}

/* bcgs_s's s = r - alpha v, from the new v */
static __device__ double bcgs_s_at(const bcgs_persist_args &a, int64_t i,
                                   double malpha)
{
    return fma(malpha, __ldcg(a.vn + i), __ldcg(a.r + i));
}

/* M^-1 y at row i: d .* y, or y */
static __device__ double bcgs_pc(const bcgs_persist_args &a, int64_t i,
                                 double y)
{
    return a.d ? __ldg(a.d + i) * y : y;
}

/* thread 0's sum over the block into slot k of this block */
static __device__ void bcgs_part(const bcgs_persist_args &a, int k, double v,
                                 double *sh)
{
    v = block_sum(v, sh);
    if (threadIdx.x == 0) a.part[(size_t)k * gridDim.x + blockIdx.x] = v;
}

/* Phase 1: pn = p', vn = A M^-1 pn, and this block's r0^.vn. */
template <int V>
static __device__ void bcgs_phase_v(const bcgs_persist_args &a,
                                    const held_entries &h, const kr_bcgs_dev *s,
                                    double *sh)
{
    const double b = s->beta, c = -s->beta * s->omega;
    double rv = 0.0;
    csr_rows<V>(
        a.A, h, [&](int32_t j) { return bcgs_pc(a, j, bcgs_dir(a, j, c, b)); },
        [&](int64_t i, double vi) {
            a.pn[i] = bcgs_dir(a, i, c, b);
            a.vn[i] = vi;
            rv += __ldg(a.rh + i) * vi;
        });
    bcgs_part(a, SLOT_RV, rv, sh);
}

/* Phase 2: t = A M^-1 s, and this block's s.s, t.s and t.t. */
template <int V>
static __device__ void bcgs_phase_t(const bcgs_persist_args &a,
                                    const held_entries &h, const kr_bcgs_dev *s,
                                    double *sh)
{
    const double malpha = -s->alpha;
    double ss = 0.0, ts = 0.0, tt = 0.0;
    csr_rows<V>(
        a.A, h,
        [&](int32_t j) { return bcgs_pc(a, j, bcgs_s_at(a, j, malpha)); },
        [&](int64_t i, double ti) {
            const double si = bcgs_s_at(a, i, malpha);
            a.t[i] = ti;
            ss += si * si;
            ts += ti * si;
            tt += ti * ti;
        });
    bcgs_part(a, SLOT_SS, ss, sh);
    bcgs_part(a, SLOT_SS + 1, ts, sh);
    bcgs_part(a, SLOT_SS + 2, tt, sh);
}

#define BCGS_ROWS(i, n)                                                        \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);  \
         i += (int64_t)gridDim.x * blockDim.x)

/* s met the test: x += alpha M^-1 pn, bcgs_update's first case. */
static __device__ void bcgs_x_at_s(const bcgs_persist_args &a, double alpha)
{
    BCGS_ROWS(i, a.A.nrows)
    {
        const double phi = bcgs_pc(a, i, __ldcg(a.pn + i));
        a.x[i] = alpha * phi + __ldcg(a.x + i);
    }
}

/* Phase 3: bcgs_update's x and r, p = pn and v = vn; r.r and r0^.r. */
static __device__ void bcgs_phase_update(const bcgs_persist_args &a,
                                         const kr_bcgs_dev *s, double *sh)
{
    const double alpha = s->alpha, omega = s->omega;
    double rr = 0.0, rho = 0.0;
    BCGS_ROWS(i, a.A.nrows)
    {
        const double si = bcgs_s_at(a, i, -alpha);
        const double pni = __ldcg(a.pn + i);
        const double phi = bcgs_pc(a, i, pni), shi = bcgs_pc(a, i, si);
        a.x[i] = alpha * phi + omega * shi + __ldcg(a.x + i);
        const double ri = fma(-omega, __ldcg(a.t + i), si);
        a.r[i] = ri;
        a.p[i] = pni;
        a.v[i] = __ldcg(a.vn + i);
        rr += ri * ri;
        rho += __ldg(a.rh + i) * ri;
    }
    bcgs_part(a, SLOT_RR, rr, sh);
    bcgs_part(a, SLOT_RR + 1, rho, sh);
}

template <int V>
__global__ void __launch_bounds__(PERSIST_BLOCK)
    k_bcgs_persist(const bcgs_persist_args a)
{
    __shared__ double sh[PERSIST_BLOCK / 32];
    __shared__ shared_state<kr_bcgs_dev> st;
    cg::grid_group grid = cg::this_grid();
    kr_bcgs_dev *s = st.get();
    const held_entries &h = hold_rows<V>(a.A);
    state_load(&st, a.s);
    double tot[3];
    for (int it = 0; it < a.iters && !s->h.stop; it++) {
        bcgs_phase_v<V>(a, h, s, sh);
        grid.sync();
        grid_totals_k<1>(a.part + (size_t)SLOT_RV * gridDim.x, tot);
        if (threadIdx.x == 0) kr_bcgs_dev_alpha(s, tot[0]);
        __syncthreads();
        if (s->h.stop) break;
        bcgs_phase_t<V>(a, h, s, sh);
        grid.sync();
        grid_totals_k<3>(a.part + (size_t)SLOT_SS * gridDim.x, tot);
        if (threadIdx.x == 0) {
            kr_bcgs_dev_s(s, tot[0]);
            if (!s->h.stop) kr_bcgs_dev_omega(s, tot[1], tot[2]);
        }
        __syncthreads();
        if (s->h.stop == KR_DEV_STOP_S_PENDING) {
            bcgs_x_at_s(a, s->alpha);
            __syncthreads(); /* every thread has read the stop code */
            if (threadIdx.x == 0) s->h.stop = KR_DEV_STOP_CHECK;
            break; /* state_store waits for thread 0's write */
        }
        if (s->h.stop) break;
        bcgs_phase_update(a, s, sh);
        grid.sync();
        grid_totals_k<2>(a.part + (size_t)SLOT_RR * gridDim.x, tot);
        if (threadIdx.x == 0) kr_bcgs_dev_update(s, tot[0], tot[1]);
        __syncthreads();
    }
    state_store(&st, a.s);
}

extern "C" const void *kr_cuda_bcgs_persist_kernel(int lanes)
{
    return PERSIST_KERNEL(k_bcgs_persist, lanes);
}

extern "C" kr_status kr_cuda_bcgs_persist(kr_ctx *ctx, const kr_csr_view *A,
                                          int iters, const double *d,
                                          const double *rh, double *x,
                                          double *r, double *p, double *v,
                                          double *pn, double *vn, double *t,
                                          kr_bcgs_dev *s)
{
    bcgs_persist_args a = {
        *A, d, rh, x, r, p, v, pn, vn, t, s, persist_parts(ctx), iters};
    return persist_launch(ctx, "bcgs_persist", kr_cuda_bcgs_persist_kernel, A,
                          iters, SLOTS, &a);
}
