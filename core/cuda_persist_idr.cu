/* IDR(s)'s persistent batches (kr_backend_ops.idr_persist): the device
 * loop's iterations with a diagonal preconditioner (solver/idr.c: idr_vu,
 * the SpMV with step 0's M column, h or omega, idr_orth, idr_update_vu or
 * idr_update), each op a phase of one cooperative launch, its expressions
 * those of the per-op kernels (core/cuda_idr.cuh) and its scalar steps the
 * same kr_idr_dev_* functions. Grid-wide barriers, each where a later
 * phase needs every row of an earlier one (a gathered vector, or a sum's
 * total): step 0 three (u_0, then the SpMV with M(:,0) and beta, then the
 * update with u_1), step k > 0 three (the SpMV with h, the
 * orthogonalisation with M(k:s,k) and beta, the update with u_{k+1}), the
 * dimension reduction two (the SpMV with omega, the update with P^T r and
 * the next c): 3s + 2 a cycle of s + 1 mat-vecs. The shared pieces are
 * core/cuda_persist.cuh's. */
#include "core/cuda_idr.cuh"
#include "core/cuda_persist.cuh"
#include "core/cuda_persist.h"

namespace cg = cooperative_groups;

#define IDR_S KR_IDR_DEV_MAX_S
#define IDR_SUMS (IDR_S + 1) /* most sums a phase reduces: r.r and P^T r */

struct idr_persist_args {
    kr_csr_view A;
    kr_idr_vectors w;
    kr_idr_dev *st;
    double *part; /* two regions of IDR_SUMS * gridDim.x partial sums */
    int iters, phase, s;
};

/* A block's shared memory: the state's copy (kr_idr_dev with M, f, c and
 * h), the warps' sums, the phase's totals and coefficients. */
struct idr_shared {
    double st[KR_IDR_DEV_MAX_DOUBLES];
    double ws[IDR_SUMS * (PERSIST_BLOCK / 32)];
    double tot[IDR_SUMS];
    double ca[IDR_S], cb[IDR_S];
};

/* One block's view of the run: the state, and which of the two regions of
 * partial sums the next reduction writes (a region's totals are read
 * after one barrier, and it is written again only after the next, which
 * every block reaches after reading them). */
struct idr_run {
    const idr_persist_args &a;
    idr_shared &sm;
    cg::grid_group grid;
    kr_idr_dev *c;
    const held_entries &held; /* hold_rows's, for csr_rows */
    int region;
    int64_t first, stride; /* grid-stride rows of the vector phases */

    __device__ double *part() const
    {
        return a.part + (size_t)region * IDR_SUMS * gridDim.x;
    }
    /* The block's m sums, the barrier, their totals in sm.tot */
    template <int N> __device__ void reduce(const double (&acc)[N], int m)
    {
        block_parts(acc, m, sm.ws, part());
        grid.sync();
        grid_totals_n(part(), m, sm.tot);
        region ^= 1;
    }
    /* After thread 0's scalar step: the block sees the new state */
    __device__ bool stopped()
    {
        __syncthreads();
        return c->h.stop != KR_DEV_RUNNING;
    }
};

template <int N> static __device__ void zero(double (&acc)[N])
{
#pragma unroll
    for (int j = 0; j < N; j++)
        acc[j] = 0.0;
}

/* acc[j] += P(i, j) y for j < m (P: the first column wanted) */
template <int N>
static __device__ void add_projections(double (&acc)[N], const double *P,
                                       int32_t n, int64_t i, int m, double y)
{
#pragma unroll
    for (int j = 0; j < N; j++)
        if (j < m) acc[j] += __ldg(P + i + (int64_t)j * n) * y;
}

/* idr_vu of step 0 (k_idr_vu's rows): u_0 from r, G, U and c; the
 * barrier, since the SpMV gathers all of u_0. */
static __device__ void u0_phase(idr_run &R)
{
    const idr_persist_args &a = R.a;
    const int32_t n = a.A.nrows;
    const int s = a.s;
    const double *c = kr_idr_dev_c(R.c);
    const double om = R.c->om, c0 = c[0];
    idr_coeffs(R.sm.ca, c, s, -1.0);
    idr_coeffs(R.sm.cb, c + 1, s - 1, 1.0);
    double *u0 = a.w.U;
    for (int64_t i = R.first; i < n; i += R.stride) {
        double vi =
            __ldcg(a.w.r + i) + idr_rowsum<true>(a.w.G, n, i, R.sm.ca, s);
        double vhi = a.w.d ? __ldg(a.w.d + i) * vi : vi;
        u0[i] = idr_u_entry<true>(om, vhi, c0, __ldcg(u0 + i), u0 + n, n, i,
                                  R.sm.cb, s - 1);
    }
    R.grid.sync();
}

/* g_k = A u_k with P(:,0:m)^T g_k (m = s for k = 0, else k: the sums of
 * pellr_idr_dots), then kr_idr_dev_orth (k = 0) or kr_idr_dev_h. */
template <int V> static __device__ void spmv_phase(idr_run &R, int k)
{
    const idr_persist_args &a = R.a;
    const int32_t n = a.A.nrows;
    const int m = k == 0 ? a.s : k;
    const double *uk = a.w.U + (int64_t)k * n;
    double *gk = a.w.G + (int64_t)k * n;
    double acc[IDR_SUMS];
    zero(acc);
    csr_rows<V>(
        a.A, R.held, [&](int32_t col) { return __ldcg(uk + col); },
        [&](int64_t i, double y) {
            gk[i] = y;
            add_projections(acc, a.w.P, n, i, m, y);
        });
    R.reduce(acc, m);
    if (threadIdx.x == 0) {
        double *out = k == 0 ? kr_idr_dev_M(R.c) : kr_idr_dev_hv(R.c);
        for (int j = 0; j < m; j++)
            out[j] = R.sm.tot[j];
        if (k == 0)
            kr_idr_dev_orth(R.c, 0);
        else
            kr_idr_dev_h(R.c, k);
    }
}

/* idr_orth of step k > 0 (k_idr_orth's rows): g_k -= G(:,0:k) h, u_k -=
 * U(:,0:k) h, M(k:s,k) = P(:,k:s)^T g_k; then kr_idr_dev_orth. */
static __device__ void orth_phase(idr_run &R, int k)
{
    const idr_persist_args &a = R.a;
    const int32_t n = a.A.nrows;
    const int m = a.s - k;
    idr_coeffs(R.sm.ca, kr_idr_dev_hv(R.c), k, -1.0);
    double *g = a.w.G + (int64_t)k * n, *u = a.w.U + (int64_t)k * n;
    const double *Pk = a.w.P + (int64_t)k * n;
    double acc[IDR_SUMS];
    zero(acc);
    for (int64_t i = R.first; i < n; i += R.stride) {
        double gi = __ldcg(g + i);
        gi += idr_rowsum<true>(a.w.G, n, i, R.sm.ca, k);
        g[i] = gi;
        u[i] = __ldcg(u + i) + idr_rowsum<true>(a.w.U, n, i, R.sm.ca, k);
        add_projections(acc, Pk, n, i, m, gi);
    }
    R.reduce(acc, m);
    if (threadIdx.x == 0) {
        double *Mk = kr_idr_dev_M(R.c) + k + (size_t)k * (size_t)a.s;
        for (int j = 0; j < m; j++)
            Mk[j] = R.sm.tot[j];
        kr_idr_dev_orth(R.c, k);
    }
}

/* The update of step k (k_idr_update_vu's rows for k + 1 < s: also
 * u_{k+1}; k_idr_update's with vh = d .* r for the last), then
 * kr_idr_dev_update. */
static __device__ void update_phase(idr_run &R, int k)
{
    const idr_persist_args &a = R.a;
    const int32_t n = a.A.nrows;
    const int s = a.s, rest = s - (k + 1);
    const double *c = kr_idr_dev_c(R.c);
    const double be = R.c->beta, om = R.c->om, c0 = c[0];
    idr_coeffs(R.sm.ca, c, rest, -1.0);
    idr_coeffs(R.sm.cb, c + 1, rest - 1, 1.0);
    const double *p = a.w.U + (int64_t)k * n, *q = a.w.G + (int64_t)k * n;
    const double *Gn = q + n;
    double *un = a.w.U + (int64_t)(k + 1) * n;
    double rr[1] = {0.0};
    for (int64_t i = R.first; i < n; i += R.stride) {
        a.w.x[i] = __ldcg(a.w.x + i) + be * __ldcg(p + i);
        double ri = __ldcg(a.w.r + i) - be * __ldcg(q + i);
        a.w.r[i] = ri;
        rr[0] += ri * ri;
        const double di = a.w.d ? __ldg(a.w.d + i) : 1.0;
        if (rest == 0) { /* the last step: vh = M^-1 r for the reduction */
            a.w.vh[i] = a.w.d ? di * ri : ri;
            continue;
        }
        double vi = ri + idr_rowsum<true>(Gn, n, i, R.sm.ca, rest);
        double vhi = a.w.d ? di * vi : vi;
        un[i] = idr_u_entry<true>(om, vhi, c0, __ldcg(un + i), un + n, n, i,
                                  R.sm.cb, rest - 1);
    }
    R.reduce(rr, 1);
    if (threadIdx.x == 0) kr_idr_dev_update(R.c, k, R.sm.tot[0]);
}

/* The dimension reduction's SpMV v = A vh with v.r and v.v, then
 * kr_idr_dev_omega */
template <int V> static __device__ void omega_phase(idr_run &R)
{
    const idr_persist_args &a = R.a;
    double acc[2] = {0.0, 0.0};
    csr_rows<V>(
        a.A, R.held, [&](int32_t col) { return __ldcg(a.w.vh + col); },
        [&](int64_t i, double y) {
            a.w.v[i] = y;
            acc[0] += y * __ldcg(a.w.r + i);
            acc[1] += y * y;
        });
    R.reduce(acc, 2);
    if (threadIdx.x == 0) kr_idr_dev_omega(R.c, R.sm.tot[0], R.sm.tot[1]);
}

/* Its update (k_idr_update's rows for k = s): x += om vh, r -= om v with
 * r.r and f = P^T r; then kr_idr_dev_update, which makes the next c. */
static __device__ void reduce_update_phase(idr_run &R)
{
    const idr_persist_args &a = R.a;
    const int32_t n = a.A.nrows;
    const int s = a.s;
    const double om = R.c->om;
    double acc[IDR_SUMS];
    zero(acc);
    for (int64_t i = R.first; i < n; i += R.stride) {
        a.w.x[i] = __ldcg(a.w.x + i) + om * __ldcg(a.w.vh + i);
        double ri = __ldcg(a.w.r + i) - om * __ldcg(a.w.v + i);
        a.w.r[i] = ri;
        acc[0] += ri * ri;
#pragma unroll
        for (int j = 0; j < IDR_S; j++)
            if (j < s) acc[1 + j] += __ldg(a.w.P + i + (int64_t)j * n) * ri;
    }
    R.reduce(acc, 1 + s);
    if (threadIdx.x == 0) {
        double *f = kr_idr_dev_f(R.c);
        for (int j = 0; j < s; j++)
            f[j] = R.sm.tot[1 + j];
        kr_idr_dev_update(R.c, s, R.sm.tot[0]);
    }
}

/* Step k < s of the cycle; false once the state says stop. */
template <int V> static __device__ bool step(idr_run &R, int k)
{
    if (k == 0) u0_phase(R);
    spmv_phase<V>(R, k);
    if (R.stopped()) return false;
    if (k > 0) {
        orth_phase(R, k);
        if (R.stopped()) return false;
    }
    update_phase(R, k);
    return !R.stopped();
}

template <int V> static __device__ bool dimension_reduction(idr_run &R)
{
    omega_phase<V>(R);
    if (R.stopped()) return false;
    reduce_update_phase(R);
    return !R.stopped();
}

template <int V>
__global__ void __launch_bounds__(PERSIST_BLOCK)
    k_idr_persist(const idr_persist_args a)
{
    __shared__ idr_shared sm;
    const unsigned nd = kr_idr_dev_bytes(a.s) / sizeof(double);
    state_load_n(sm.st, a.st, nd);
    idr_run R = {a,
                 sm,
                 cg::this_grid(),
                 (kr_idr_dev *)sm.st,
                 hold_rows<V>(a.A),
                 0,
                 (int64_t)blockIdx.x * blockDim.x + threadIdx.x,
                 (int64_t)gridDim.x * blockDim.x};
    bool going = R.c->h.stop == KR_DEV_RUNNING;
    for (int it = 0; it < a.iters && going; it++) {
        const int k = (a.phase + it) % (a.s + 1);
        going = k < a.s ? step<V>(R, k) : dimension_reduction<V>(R);
    }
    state_store_n(sm.st, a.st, nd);
}

static const void *idr_kernel(int lanes)
{
    return PERSIST_KERNEL(k_idr_persist, lanes);
}

extern "C" kr_status kr_cuda_idr_persist(kr_ctx *ctx, const kr_csr_view *A,
                                         int iters, int phase, int s,
                                         const kr_idr_vectors *w,
                                         kr_idr_dev *st)
{
    if (s < 1 || s > IDR_S || phase < 0 || phase > s)
        return kr_fail(ctx, KR_ERR_ARG,
                       "idr_persist: phase %d of IDR(%d) outside 0..s, 1..%d",
                       phase, s, IDR_S);
    idr_persist_args a = {*A, *w, st, persist_parts(ctx), iters, phase, s};
    return persist_launch(ctx, "idr_persist", idr_kernel, A, iters,
                          2 * IDR_SUMS, &a);
}

extern "C" const void *kr_cuda_idr_persist_kernel(int lanes)
{
    return idr_kernel(lanes);
}
