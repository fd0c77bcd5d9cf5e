/* CG's persistent batches (kr_backend_ops.cg_persist): the fused
 * iteration of cg_dir_apply and cg_update_keep, two grid-wide barriers an
 * iteration; the shared pieces are core/cuda_persist.cuh's. */
#include "core/cuda_persist.cuh"
#include "core/cuda_persist.h"

namespace cg = cooperative_groups;

/* ---------------------------------------------------------------- CG */

struct cg_persist_args {
    kr_csr_view A;
    const double *d; /* Jacobi's inverse diagonal, or NULL */
    double *x, *r, *z, *p, *pn, *q;
    kr_cg_dev *s;
    double *part; /* 3 * gridDim.x partial sums */
    int iters;
    int start; /* CG's start-up first (cg_start) */
};

/* CG's start-up, where the host has r and r.r already (solver/cg.c):
 * z = d .* r, p = zk and rho = r.zk, one barrier, the host's pc, dots and
 * copy (a round trip) saved. The sum goes to the slots of the
 * iteration's r.z, written again only after its first barrier. */
static __device__ void cg_start(const cg_persist_args &a, kr_cg_dev *s,
                                double *sh)
{
    const int64_t n = a.A.nrows;
    double rz = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const double ri = a.r[i];
        double zi = ri;
        if (a.d) {
            zi = __ldg(a.d + i) * ri;
            a.z[i] = zi;
        }
        a.p[i] = zi;
        rz += ri * zi;
    }
    rz = block_total(rz, sh);
    double *part = a.part + gridDim.x;
    if (threadIdx.x == 0) part[blockIdx.x] = rz;
    cg::this_grid().sync();
    rz = grid_total(part, sh);
    if (threadIdx.x == 0) {
        s->rho = rz;
        if (rz < 0 || !isfinite(rz)) s->h.stop = KR_DEV_STOP_RHO;
    }
    __syncthreads();
}

/* Phase 1: pn = zk + beta p and q = A pn, gathering zk and p (no barrier
 * between the direction and the SpMV), and this block's part of pn.q. */
template <int V>
static __device__ double cg_dir_spmv(const cg_persist_args &a,
                                     const held_entries &h, const double *zk,
                                     double beta)
{
    double pq = 0.0;
    csr_rows<V>(
        a.A, h,
        [&](int32_t c) { return fma(beta, __ldcg(a.p + c), __ldcg(zk + c)); },
        [&](int64_t i, double qi) {
            const double pni = fma(beta, __ldcg(a.p + i), __ldcg(zk + i));
            a.pn[i] = pni;
            a.q[i] = qi;
            pq += pni * qi;
        });
    return pq;
}

/* Phase 2: x += alpha pn, r -= alpha q, z = d .* r, p = pn; r.z and r.r
 * (r.r twice without d, where z is r). */
static __device__ void cg_update_rows(const cg_persist_args &a, double alpha,
                                      double *rz, double *rr)
{
    const int64_t n = a.A.nrows;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const double pi = __ldcg(a.pn + i), qi = __ldcg(a.q + i);
        const double xi = __ldcg(a.x + i), r0 = __ldcg(a.r + i);
        const double di = a.d ? __ldg(a.d + i) : 0.0;
        a.x[i] = xi + alpha * pi;
        a.p[i] = pi;
        const double ri = r0 - alpha * qi;
        a.r[i] = ri;
        double zi = ri;
        if (a.d) {
            zi = di * ri;
            a.z[i] = zi;
        }
        *rz += ri * zi;
        *rr += ri * ri;
    }
}

template <int V>
__global__ void __launch_bounds__(PERSIST_BLOCK)
    k_cg_persist(const cg_persist_args a)
{
    __shared__ double sh[PERSIST_BLOCK / 32];
    __shared__ shared_state<kr_cg_dev> st;
    cg::grid_group grid = cg::this_grid();
    kr_cg_dev *s = st.get();
    const held_entries &h = hold_rows<V>(a.A);
    state_load(&st, a.s);
    if (a.start) cg_start(a, s, sh);
    const double *zk = a.d ? a.z : a.r;
    double *part = a.part;
    const unsigned nb = gridDim.x;
    for (int it = 0; it < a.iters && !s->h.stop; it++) {
        double pq = block_total(cg_dir_spmv<V>(a, h, zk, s->beta), sh);
        if (threadIdx.x == 0) part[blockIdx.x] = pq;
        grid.sync();
        pq = grid_total(part, sh);
        if (threadIdx.x == 0) kr_cg_dev_alpha(s, pq);
        __syncthreads();
        if (s->h.stop) break;
        double rz = 0.0, rr = 0.0;
        cg_update_rows(a, s->alpha, &rz, &rr);
        rz = block_total(rz, sh);
        rr = block_total(rr, sh);
        if (threadIdx.x == 0) {
            part[nb + blockIdx.x] = rz;
            part[2 * nb + blockIdx.x] = rr;
        }
        grid.sync();
        double zr[2];
        grid_totals_k<2>(part + nb, zr);
        rz = zr[0];
        rr = zr[1];
        if (threadIdx.x == 0) kr_cg_dev_update(s, rz, rr);
        __syncthreads();
    }
    state_store(&st, a.s);
}

static const void *cg_kernel(int lanes)
{
    return PERSIST_KERNEL(k_cg_persist, lanes);
}

extern "C" kr_status kr_cuda_cg_persist(kr_ctx *ctx, const kr_csr_view *A,
                                        int iters, int start, const double *d,
                                        double *x, double *r, double *z,
                                        double *p, double *pn, double *q,
                                        kr_cg_dev *s)
{
    cg_persist_args a = {*A,    d,    x, r, z, p, pn, q, s, persist_parts(ctx),
                         iters, start};
    return persist_launch(ctx, "cg_persist", cg_kernel, A, iters, 3, &a);
}

extern "C" int kr_cuda_persist_kernels(const void **out, int max)
{
    /* each method's kernel for every width of sub-warp */
    const void *(*const each[])(int) = {cg_kernel, kr_cuda_gm_persist_kernel,
                                        kr_cuda_idr_persist_kernel,
                                        kr_cuda_bcgs_persist_kernel};
    int n = 0;
    for (size_t m = 0; m < sizeof each / sizeof *each; m++)
        for (int lanes = 2; lanes <= 32 && n < max; lanes *= 2)
            out[n++] = each[m](lanes);
    return n;
}
