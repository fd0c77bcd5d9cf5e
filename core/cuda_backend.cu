/* The CUDA backend: device selection, handles, and the vector kernels of
 * core/backend.h on the GPU. Reductions are two-stage with a block count
 * that depends only on n, and the final sums run in a fixed order, so a
 * result is the same on every run for the same n. Only the reduced scalars
 * cross to the host. */
#include "core/cuda.h"
#include "core/cuda_idr.cuh"
#include "core/cuda_mma.cuh"
#include "core/cuda_persist.h"
#include "core/cuda_reduce.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 256
#define MAX_RED_BLOCKS 1024

int kr_built_with_cuda(void) { return 1; }

void *kr_ctx_cuda_stream(const kr_ctx *ctx)
{
    if (!ctx || ctx->device != KR_DEVICE_CUDA || !ctx->backend) return NULL;
    return (void *)((const kr_cuda_state *)ctx->backend)->stream;
}

kr_status kr_cuda_fail(kr_ctx *ctx, const char *call, const char *what,
                       const char *file, int line)
{
    return kr_fail(ctx, KR_ERR_DEVICE, "%s failed (%s:%d): %s", call, file,
                   line, what);
}

/* ------------------------------------------------------------- memory */

/* Adds p to the allocation record; frees p and fails when the record
 * itself cannot grow. */
static kr_status record_alloc(kr_ctx *ctx, void *p, size_t bytes)
{
    kr_cuda_state *st = kr_cuda(ctx);
    if (st->nallocs == st->cap_allocs) {
        size_t cap = st->cap_allocs ? 2 * st->cap_allocs : 64;
        void *grown = realloc(st->allocs, cap * sizeof *st->allocs);
        if (!grown) {
            cudaFreeAsync(p, st->stream);
            return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
        }
        st->allocs = (kr_cuda_alloc *)grown;
        st->cap_allocs = cap;
    }
    st->allocs[st->nallocs].p = p;
    st->allocs[st->nallocs++].bytes = bytes;
    ctx->device_bytes += bytes;
    if (ctx->device_bytes > ctx->device_bytes_peak)
        ctx->device_bytes_peak = ctx->device_bytes;
    return KR_OK;
}

static kr_status cu_alloc(kr_ctx *ctx, void **p, size_t bytes)
{
    *p = NULL;
    kr_cuda_state *st = kr_cuda(ctx);
    size_t n = bytes ? bytes : 8;
    cudaError_t e = cudaMallocFromPoolAsync(p, n, st->pool, st->stream);
    if (e == cudaErrorMemoryAllocation) {
        /* memory the pool keeps may be what is missing: give it back to
         * the device and try once more */
        cudaGetLastError();
        cudaStreamSynchronize(st->stream);
        cudaMemPoolTrimTo(st->pool, 0);
        e = cudaMallocFromPoolAsync(p, n, st->pool, st->stream);
    }
    if (e == cudaSuccess) {
        ctx->alloc_count++;
        kr_status rs = record_alloc(ctx, *p, n);
        if (rs != KR_OK) *p = NULL;
        return rs;
    }
    cudaGetLastError(); /* clear the error state */
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    return kr_fail(ctx, KR_ERR_NOMEM,
                   "not enough GPU memory: %zu bytes needed, %zu free of %zu "
                   "(%s)",
                   bytes, free_b, total_b, cudaGetErrorString(e));
}

static void cu_release(kr_ctx *ctx, void *p)
{
    if (!p) return;
    kr_cuda_state *st = kr_cuda(ctx);
    ctx->free_count++;
    for (size_t i = st->nallocs; i-- > 0;) /* recent ones go first */
        if (st->allocs[i].p == p) {
            ctx->device_bytes -= st->allocs[i].bytes;
            st->allocs[i] = st->allocs[--st->nallocs];
            break;
        }
    cudaFreeAsync(p, st->stream);
}

static kr_status cu_upload(kr_ctx *ctx, void *dst, const void *src,
                           size_t bytes)
{
    /* From pageable memory the call returns once src was staged, so the
     * caller may reuse src at once. */
    KR_CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                                     kr_cuda(ctx)->stream));
    return KR_OK;
}

/* A small download goes through the pinned scratch: on the H200
 * (2026-11-23) 4 bytes took 6.7 us that way and 8.4 us from pageable
 * memory, and a preconditioner's setup waits for two. */
static kr_status cu_download(kr_ctx *ctx, void *dst, const void *src,
                             size_t bytes)
{
    kr_cuda_state *st = kr_cuda(ctx);
    int staged = bytes <= KR_CUDA_SCRATCH * sizeof(double);
    void *to = staged ? (void *)st->h_scratch : dst;
    KR_CUDA_TRY(ctx, cudaMemcpyAsync(to, src, bytes, cudaMemcpyDeviceToHost,
                                     st->stream));
    KR_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    if (staged) memcpy(dst, st->h_scratch, bytes);
    return KR_OK;
}

static kr_status cu_copy(kr_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) return KR_OK;
    KR_CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                     kr_cuda(ctx)->stream));
    return KR_OK;
}

/* ------------------------------------------------------ element-wise */

#define GRID_STRIDE(i, n)                                                      \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);  \
         i += (int64_t)gridDim.x * blockDim.x)

__global__ void k_fill(int32_t n, double a, double *x)
{
    GRID_STRIDE(i, n) x[i] = a;
}

__global__ void k_axpby(int32_t n, double a, const double *x, double b,
                        double *y)
{
    if (b == 0.0) {
        GRID_STRIDE(i, n) y[i] = a * x[i];
    } else {
        GRID_STRIDE(i, n) y[i] = a * x[i] + b * y[i];
    }
}

__global__ void k_axpbypcz(int32_t n, double a, const double *x, double b,
                           const double *y, double c, double *z)
{
    if (c == 0.0) {
        GRID_STRIDE(i, n) z[i] = a * x[i] + b * y[i];
    } else {
        GRID_STRIDE(i, n) z[i] = a * x[i] + b * y[i] + c * z[i];
    }
}

__global__ void k_axpy2(int32_t n, double a, const double *p, double *x,
                        double b, const double *q, double *r)
{
    GRID_STRIDE(i, n)
    {
        x[i] += a * p[i];
        r[i] += b * q[i];
    }
}

__global__ void k_pointwise(int32_t n, const double *d, const double *x,
                            double *y)
{
    kr_pdl_begin();
    GRID_STRIDE(i, n) y[i] = d[i] * x[i];
}

__global__ void k_fill_random(int32_t n, uint64_t seed, double *x)
{
    GRID_STRIDE(i, n) x[i] = kr_hash_uniform(seed, i);
}

#define LAUNCH(ctx, n, kernel, ...)                                            \
    do {                                                                       \
        if ((n) > 0)                                                           \
            kernel<<<kr_grid(n, BLOCK), BLOCK, 0, kr_cuda(ctx)->stream>>>(     \
                __VA_ARGS__);                                                  \
        KR_LAUNCH_CHECK(ctx);                                                  \
    } while (0)

/* LAUNCH with programmatic dependence (kernels that start with
 * kr_pdl_begin: core/cuda.h) */
#define LAUNCH_PDL(ctx, n, kernel, ...)                                        \
    do {                                                                       \
        if ((n) > 0)                                                           \
            KR_LAUNCH_PDL(ctx, kr_grid(n, BLOCK), BLOCK, kernel, __VA_ARGS__); \
    } while (0)

static kr_status cu_fill(kr_ctx *ctx, int32_t n, double a, double *x)
{
    LAUNCH(ctx, n, k_fill, n, a, x);
    return KR_OK;
}

static kr_status cu_fill_random(kr_ctx *ctx, int32_t n, uint64_t seed,
                                double *x)
{
    LAUNCH(ctx, n, k_fill_random, n, seed, x);
    return KR_OK;
}

static kr_status cu_axpby(kr_ctx *ctx, int32_t n, double a, const double *x,
                          double b, double *y)
{
    LAUNCH(ctx, n, k_axpby, n, a, x, b, y);
    return KR_OK;
}

static kr_status cu_axpbypcz(kr_ctx *ctx, int32_t n, double a, const double *x,
                             double b, const double *y, double c, double *z)
{
    LAUNCH(ctx, n, k_axpbypcz, n, a, x, b, y, c, z);
    return KR_OK;
}

static kr_status cu_axpy2(kr_ctx *ctx, int32_t n, double a, const double *p,
                          double *x, double b, const double *q, double *r)
{
    LAUNCH(ctx, n, k_axpy2, n, a, p, x, b, q, r);
    return KR_OK;
}

static kr_status cu_pointwise(kr_ctx *ctx, int32_t n, const double *d,
                              const double *x, double *y)
{
    LAUNCH_PDL(ctx, n, k_pointwise, n, d, x, y);
    return KR_OK;
}

/* -------------------------------------------------------- reductions */

struct dot_args {
    const double *x[KR_MAX_DOTS];
    const double *y[KR_MAX_DOTS];
};

/* Writes the block's sums of u and v (v only when two) to partial[block]
 * and partial[nblocks + block], for a final pass to add. */
__device__ void block_partials(double u, double v, int two, double *partial,
                               double *sh)
{
    u = block_sum(u, sh);
    if (two) v = block_sum(v, sh);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = u;
        if (two) partial[gridDim.x + blockIdx.x] = v;
    }
}

/* x += a p; r -= a q; z = d .* r (d NULL: z = r, unwritten); keep = p
 * when keep is not NULL; returns this thread's share of r.z and r.r: the
 * CG update, one pass. */
__device__ void xr_pass(int32_t n, double a, const double *__restrict__ p,
                        const double *__restrict__ q, double *x, double *r,
                        const double *__restrict__ d, double *z, double *rz,
                        double *rr, double *__restrict__ keep)
{
    GRID_STRIDE(i, n)
    {
        /* every load before the first store: x, r and z may alias as far
         * as the compiler knows, so a store would hold the next load back
         * a memory round trip */
        const double pi = p[i], qi = q[i], xi = x[i], r0 = r[i];
        const double di = d ? d[i] : 0.0;
        x[i] = xi + a * pi;
        if (keep) keep[i] = pi;
        double ri = r0 - a * qi;
        r[i] = ri;
        double zi = ri;
        if (d) {
            zi = di * ri;
            z[i] = zi;
        }
        *rz += ri * zi;
        *rr += ri * ri;
    }
}

template <int K>
__global__ void k_dots_partial(int32_t n, dot_args a, double *partial)
{
    __shared__ double sh[BLOCK / 32];
    double s[K];
    for (int j = 0; j < K; j++)
        s[j] = 0.0;
    GRID_STRIDE(i, n)
    {
        for (int j = 0; j < K; j++)
            s[j] += a.x[j][i] * a.y[j][i];
    }
    for (int j = 0; j < K; j++) {
        double t = block_sum(s[j], sh);
        if (threadIdx.x == 0) partial[j * gridDim.x + blockIdx.x] = t;
    }
}

/* out[j] = sum of partial[j*nb .. j*nb+nb), one block per j. */
__global__ void k_dots_final(int nb, const double *partial, double *out)
{
    __shared__ double sh[BLOCK / 32];
    double s = 0.0;
    for (int i = threadIdx.x; i < nb; i += blockDim.x)
        s += partial[blockIdx.x * nb + i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}

static kr_status cu_dots(kr_ctx *ctx, int32_t n, int k, const double *const *x,
                         const double *const *y, double *out)
{
    if (k < 1 || k > KR_MAX_DOTS)
        return kr_fail(ctx, KR_ERR_ARG, "dots: k = %d outside 1..%d", k,
                       KR_MAX_DOTS);
    kr_cuda_state *st = kr_cuda(ctx);
    dot_args a;
    for (int j = 0; j < k; j++) {
        a.x[j] = x[j];
        a.y[j] = y[j];
    }
    int nb = kr_grid(n, BLOCK);
    if (nb > MAX_RED_BLOCKS) nb = MAX_RED_BLOCKS;
    double *partial = st->d_scratch + KR_MAX_DOTS;
    switch (k) {
    case 1:
        k_dots_partial<1><<<nb, BLOCK, 0, st->stream>>>(n, a, partial);
        break;
    case 2:
        k_dots_partial<2><<<nb, BLOCK, 0, st->stream>>>(n, a, partial);
        break;
    case 3:
        k_dots_partial<3><<<nb, BLOCK, 0, st->stream>>>(n, a, partial);
        break;
    default:
        k_dots_partial<4><<<nb, BLOCK, 0, st->stream>>>(n, a, partial);
        break;
    }
    KR_LAUNCH_CHECK(ctx);
    k_dots_final<<<k, BLOCK, 0, st->stream>>>(nb, partial, st->d_scratch);
    KR_LAUNCH_CHECK(ctx);
    return cu_download(ctx, out, st->d_scratch, (size_t)k * sizeof(double));
}

/* The CG update (see backend.h); partial sums of {r.z, r.r} per block. */
__global__ void k_xr_update(int32_t n, double a, const double *__restrict__ p,
                            const double *__restrict__ q, double *x, double *r,
                            const double *__restrict__ d, double *z,
                            double *partial)
{
    __shared__ double sh[BLOCK / 32];
    double rz = 0.0, rr = 0.0;
    xr_pass(n, a, p, q, x, r, d, z, &rz, &rr, NULL);
    block_partials(rz, rr, 1, partial, sh);
}

static kr_status cu_xr_update(kr_ctx *ctx, int32_t n, double a, const double *p,
                              const double *q, double *x, double *r,
                              const double *d, double *z, double *out)
{
    kr_cuda_state *st = kr_cuda(ctx);
    int nb = kr_grid(n, BLOCK);
    if (nb > MAX_RED_BLOCKS) nb = MAX_RED_BLOCKS;
    double *partial = st->d_scratch + KR_MAX_DOTS;
    k_xr_update<<<nb, BLOCK, 0, st->stream>>>(n, a, p, q, x, r, d, z, partial);
    KR_LAUNCH_CHECK(ctx);
    k_dots_final<<<2, BLOCK, 0, st->stream>>>(nb, partial, st->d_scratch);
    KR_LAUNCH_CHECK(ctx);
    return cu_download(ctx, out, st->d_scratch, 2 * sizeof(double));
}

__global__ void k_axpy_dots(int32_t n, double a, const double *__restrict__ x,
                            double *y, const double *__restrict__ w,
                            double *partial)
{
    __shared__ double sh[BLOCK / 32];
    double yy = 0.0, wy = 0.0;
    GRID_STRIDE(i, n)
    {
        double yi = y[i] + a * x[i];
        y[i] = yi;
        yy += yi * yi;
        if (w) wy += w[i] * yi;
    }
    block_partials(yy, wy, 1, partial, sh);
}

static kr_status cu_axpy_dots(kr_ctx *ctx, int32_t n, double a, const double *x,
                              double *y, const double *w, double *out)
{
    kr_cuda_state *st = kr_cuda(ctx);
    int nb = kr_grid(n, BLOCK);
    if (nb > MAX_RED_BLOCKS) nb = MAX_RED_BLOCKS;
    double *partial = st->d_scratch + KR_MAX_DOTS;
    k_axpy_dots<<<nb, BLOCK, 0, st->stream>>>(n, a, x, y, w, partial);
    KR_LAUNCH_CHECK(ctx);
    int k = w ? 2 : 1;
    k_dots_final<<<k, BLOCK, 0, st->stream>>>(nb, partial, st->d_scratch);
    KR_LAUNCH_CHECK(ctx);
    return cu_download(ctx, out, st->d_scratch, (size_t)k * sizeof(double));
}

/* ---------------------------------------- CG with device scalars */

/* block_partials, then in the last block to finish the grid's totals into
 * *u (and *v when two), valid in thread 0; returns 1 in that block only. */
__device__ int grid_totals(double *u, double *v, int two, double *partial,
                           uint32_t *ticket, double *sh)
{
    block_partials(*u, two ? *v : 0.0, two, partial, sh);
    if (!last_block(ticket)) return 0;
    *u = final_sum(gridDim.x, partial, sh);
    if (two) *v = final_sum(gridDim.x, partial + gridDim.x, sh);
    return 1;
}

__global__ void k_cg_alpha(int32_t n, const double *__restrict__ p,
                           const double *__restrict__ q, kr_cg_dev *s,
                           double *partial)
{
    __shared__ double sh[BLOCK / 32];
    kr_pdl_begin();
    if (s->h.stop) return;
    double v = 0.0;
    GRID_STRIDE(i, n) v += p[i] * q[i];
    if (grid_totals(&v, NULL, 0, partial, &s->h.ticket, sh))
        step_in_shared(s, [=](kr_cg_dev *c) { kr_cg_dev_alpha(c, v); });
}

__global__ void k_cg_update(int32_t n, const double *__restrict__ p,
                            const double *__restrict__ q, double *x, double *r,
                            const double *__restrict__ d, double *z,
                            double *keep, kr_cg_dev *s, double *partial)
{
    __shared__ double sh[BLOCK / 32];
    kr_pdl_begin();
    if (s->h.stop) return;
    double rz = 0.0, rr = 0.0;
    xr_pass(n, s->alpha, p, q, x, r, d, z, &rz, &rr, keep);
    if (grid_totals(&rz, &rr, 1, partial, &s->h.ticket, sh))
        step_in_shared(s, [=](kr_cg_dev *c) { kr_cg_dev_update(c, rz, rr); });
}

/* one = 1.0 comes as an argument, so that the expressions here compile
 * as k_axpby's and k_axpbypcz's do (the same contractions into FMAs):
 * iterates then equal those of the per-iteration path bit for bit */
__global__ void k_cg_direction(int32_t n, double one,
                               const double *__restrict__ z, double *p,
                               const kr_cg_dev *s)
{
    kr_pdl_begin();
    if (s->h.stop) return;
    double b = s->beta;
    GRID_STRIDE(i, n) p[i] = one * z[i] + b * p[i];
}

static int red_blocks(int32_t n)
{
    int nb = kr_grid(n, BLOCK);
    return nb > MAX_RED_BLOCKS ? MAX_RED_BLOCKS : nb;
}

static kr_status cu_cg_alpha(kr_ctx *ctx, int32_t n, const double *p,
                             const double *q, kr_cg_dev *s)
{
    kr_cuda_state *st = kr_cuda(ctx);
    KR_LAUNCH_PDL(ctx, red_blocks(n), BLOCK, k_cg_alpha, n, p, q, s,
                  st->d_scratch + KR_MAX_DOTS);
    return KR_OK;
}

static kr_status cu_cg_update(kr_ctx *ctx, int32_t n, const double *p,
                              const double *q, double *x, double *r,
                              const double *d, double *z, kr_cg_dev *s)
{
    kr_cuda_state *st = kr_cuda(ctx);
    KR_LAUNCH_PDL(ctx, red_blocks(n), BLOCK, k_cg_update, n, p, q, x, r, d, z,
                  (double *)NULL, s, st->d_scratch + KR_MAX_DOTS);
    return KR_OK;
}

static kr_status cu_cg_update_keep(kr_ctx *ctx, int32_t n, const double *p,
                                   const double *q, double *x, double *r,
                                   const double *d, double *z, double *keep,
                                   kr_cg_dev *s)
{
    kr_cuda_state *st = kr_cuda(ctx);
    KR_LAUNCH_PDL(ctx, red_blocks(n), BLOCK, k_cg_update, n, p, q, x, r, d, z,
                  keep, s, st->d_scratch + KR_MAX_DOTS);
    return KR_OK;
}

static kr_status cu_cg_direction(kr_ctx *ctx, int32_t n, const double *z,
                                 double *p, kr_cg_dev *s)
{
    LAUNCH_PDL(ctx, n, k_cg_direction, n, 1.0, z, p, s);
    return KR_OK;
}

/* The three CG ops in turn. A one-launch version with grid-wide barriers
 * saved about 5% on bcsstk18 but needs every block resident at once,
 * which a plain launch does not guarantee (another stream's kernels could
 * leave a spinning block waiting for one that never starts). */
static kr_status cu_cg_step(kr_ctx *ctx, int32_t n, double *p, const double *q,
                            double *x, double *r, const double *d, double *z,
                            const double *zk, kr_cg_dev *s)
{
    KR_TRY(cu_cg_alpha(ctx, n, p, q, s));
    KR_TRY(cu_cg_update(ctx, n, p, q, x, r, d, z, s));
    return cu_cg_direction(ctx, n, zk, p, s);
}

/* ---------------------------------- BiCGSTAB with device scalars */

__global__ void k_bcgs_alpha(int32_t n, const double *__restrict__ rh,
                             const double *__restrict__ v, kr_bcgs_dev *s,
                             double *partial)
{
    __shared__ double sh[BLOCK / 32];
    kr_pdl_begin();
    if (s->h.stop) return;
    double acc = 0.0;
    GRID_STRIDE(i, n) acc += rh[i] * v[i];
    if (grid_totals(&acc, NULL, 0, partial, &s->h.ticket, sh))
        step_in_shared(s, [=](kr_bcgs_dev *c) { kr_bcgs_dev_alpha(c, acc); });
}

__global__ void k_bcgs_s(int32_t n, const double *__restrict__ v, double *r,
                         kr_bcgs_dev *s, double *partial)
{
    __shared__ double sh[BLOCK / 32];
    kr_pdl_begin();
    if (s->h.stop) return;
    double a = -s->alpha, ss = 0.0;
    GRID_STRIDE(i, n)
    {
        double ri = r[i] + a * v[i];
        r[i] = ri;
        ss += ri * ri;
    }
    if (grid_totals(&ss, NULL, 0, partial, &s->h.ticket, sh))
        step_in_shared(s, [=](kr_bcgs_dev *c) { kr_bcgs_dev_s(c, ss); });
}

/* t.r and t.t over the grid (cu_dots' order), valid in thread 0 of the
 * last block, where it returns 1: BiCGSTAB's and IDR's omega */
__device__ int grid_omega_dots(int32_t n, const double *__restrict__ t,
                               const double *__restrict__ r, double *ts,
                               double *tt, uint32_t *ticket, double *partial,
                               double *sh)
{
    *ts = 0.0, *tt = 0.0;
    GRID_STRIDE(i, n)
    {
        double ti = t[i];
        *ts += ti * r[i];
        *tt += ti * ti;
    }
    return grid_totals(ts, tt, 1, partial, ticket, sh);
}

__global__ void k_bcgs_omega(int32_t n, const double *__restrict__ t,
                             const double *__restrict__ r, kr_bcgs_dev *s,
                             double *partial)
{
    __shared__ double sh[BLOCK / 32];
    kr_pdl_begin();
    if (s->h.stop) return;
    double ts, tt;
    if (grid_omega_dots(n, t, r, &ts, &tt, &s->h.ticket, partial, sh))
        step_in_shared(s,
                       [=](kr_bcgs_dev *c) { kr_bcgs_dev_omega(c, ts, tt); });
}

__global__ void k_bcgs_update(int32_t n, double one,
                              const double *__restrict__ ph,
                              const double *__restrict__ shat,
                              const double *__restrict__ t,
                              const double *__restrict__ rh, double *x,
                              double *r, kr_bcgs_dev *s, double *partial)
{
    __shared__ double sh[BLOCK / 32];
    kr_pdl_begin();
    int stop = s->h.stop;
    double alpha = s->alpha, omega = s->omega, momega = -omega;
    if (stop == KR_DEV_STOP_S_PENDING) {
        GRID_STRIDE(i, n) x[i] = alpha * ph[i] + one * x[i];
        if (last_block(&s->h.ticket) && threadIdx.x == 0)
            s->h.stop = KR_DEV_STOP_CHECK;
        return;
    }
    if (stop) return;
    double rr = 0.0, rho = 0.0;
    GRID_STRIDE(i, n)
    {
        x[i] = alpha * ph[i] + omega * shat[i] + one * x[i];
        double ri = r[i] + momega * t[i];
        r[i] = ri;
        rr += ri * ri;
        rho += rh[i] * ri;
    }
    if (grid_totals(&rr, &rho, 1, partial, &s->h.ticket, sh))
        step_in_shared(s,
                       [=](kr_bcgs_dev *c) { kr_bcgs_dev_update(c, rr, rho); });
}

__global__ void k_bcgs_direction(int32_t n, double one,
                                 const double *__restrict__ r,
                                 const double *__restrict__ v, double *p,
                                 const kr_bcgs_dev *s)
{
    kr_pdl_begin();
    if (s->h.stop) return;
    double b = s->beta, c = -s->beta * s->omega;
    GRID_STRIDE(i, n) p[i] = one * r[i] + c * v[i] + b * p[i];
}

#define RED_LAUNCH(ctx, kernel, ...)                                           \
    do {                                                                       \
        kr_cuda_state *st_ = kr_cuda(ctx);                                     \
        KR_LAUNCH_PDL(ctx, red_blocks(n), BLOCK, kernel, __VA_ARGS__,          \
                      st_->d_scratch + KR_MAX_DOTS);                           \
    } while (0)

static kr_status cu_bcgs_alpha(kr_ctx *ctx, int32_t n, const double *rh,
                               const double *v, kr_bcgs_dev *s)
{
    RED_LAUNCH(ctx, k_bcgs_alpha, n, rh, v, s);
    return KR_OK;
}

static kr_status cu_bcgs_s(kr_ctx *ctx, int32_t n, const double *v, double *r,
                           kr_bcgs_dev *s)
{
    RED_LAUNCH(ctx, k_bcgs_s, n, v, r, s);
    return KR_OK;
}

static kr_status cu_bcgs_omega(kr_ctx *ctx, int32_t n, const double *t,
                               const double *r, kr_bcgs_dev *s)
{
    RED_LAUNCH(ctx, k_bcgs_omega, n, t, r, s);
    return KR_OK;
}

static kr_status cu_bcgs_update(kr_ctx *ctx, int32_t n, const double *ph,
                                const double *sh, const double *t,
                                const double *rh, double *x, double *r,
                                kr_bcgs_dev *s)
{
    RED_LAUNCH(ctx, k_bcgs_update, n, 1.0, ph, sh, t, rh, x, r, s);
    return KR_OK;
}

static kr_status cu_bcgs_direction(kr_ctx *ctx, int32_t n, const double *r,
                                   const double *v, double *p, kr_bcgs_dev *s)
{
    LAUNCH_PDL(ctx, n, k_bcgs_direction, n, 1.0, r, v, p, s);
    return KR_OK;
}

/* ---------------------------------------------------------------------
 * IDR(s) with device scalars (kr_idr_dev, core/backend.h). Each kernel
 * computes what the host path's kernels compute, in their expressions
 * (so the same FMA contractions) and their reduction order (the grid of
 * red_blocks, each column's partial sums added by final_sum in
 * k_dots_final's order), so that the GPU's iterates can equal those of
 * its host path. Ends at "end of IDR(s)".
 * --------------------------------------------------------------------- */
#define IDR_S KR_IDR_DEV_MAX_S
/* BODY, with c the IDR state, on a copy in shared memory (step_in_shared_n:
 * core/cuda_reduce.cuh); every thread of the last block calls it */
static_assert(sizeof(kr_idr_dev) % sizeof(double) == 0,
              "IDR_STEP copies kr_idr_dev a double at a time");
#define IDR_STEP(st, BODY)                                                     \
    step_in_shared_n<KR_IDR_DEV_MAX_DOUBLES>(                                  \
        st, kr_idr_dev_bytes((st)->s), [&](kr_idr_dev * c) BODY)

/* The grid's totals of acc[0..m) into tot[0..m) (shared; valid in the
 * last block, the only one that returns 1): each column's block sum,
 * then final_sum over the blocks, as k_dots_final adds them. */
template <int N>
__device__ __forceinline__ int idr_totals(const double (&acc)[N], int m,
                                          double *partial, uint32_t *ticket,
                                          double *sh, double *tot)
{
#pragma unroll
    for (int j = 0; j < N; j++) {
        if (j >= m) break;
        double t = block_sum(acc[j], sh);
        if (threadIdx.x == 0) partial[j * gridDim.x + blockIdx.x] = t;
    }
    if (!last_block(ticket)) return 0;
    for (int j = 0; j < m; j++) {
        double t = final_sum(gridDim.x, partial + j * gridDim.x, sh);
        if (threadIdx.x == 0) tot[j] = t;
    }
    return 1;
}

__global__ void k_idr_v(int32_t n, int k, const double *__restrict__ r,
                        const double *__restrict__ G, double *v, kr_idr_dev *st)
{
    __shared__ double cg[IDR_S];
    if (st->h.stop) return;
    int rest = st->s - k;
    idr_coeffs(cg, kr_idr_dev_c(st), rest, -1.0);
    const double *Gk = G + (int64_t)k * n;
    GRID_STRIDE(i, n) v[i] = r[i] + idr_rowsum(Gk, n, i, cg, rest);
}

__global__ void k_idr_u(int32_t n, int k, const double *__restrict__ vh,
                        double *U, kr_idr_dev *st)
{
    __shared__ double cu[IDR_S];
    if (st->h.stop) return;
    int rest = st->s - k;
    const double *c = kr_idr_dev_c(st);
    double om = st->om, c0 = c[0];
    idr_coeffs(cu, c + 1, rest - 1, 1.0);
    double *uk = U + (int64_t)k * n;
    GRID_STRIDE(i, n)
    uk[i] = idr_u_entry(om, vh[i], c0, uk[i], uk + n, n, i, cu, rest - 1);
}

/* k_idr_v, vh = d .* v (k_pointwise; d NULL: vh = v) and k_idr_u for
 * each row, with v and vh kept in registers */
__global__ void k_idr_vu(int32_t n, int k, const double *__restrict__ r,
                         const double *__restrict__ G, double *U,
                         const double *__restrict__ d, kr_idr_dev *st)
{
    __shared__ double cg[IDR_S], cu[IDR_S];
    if (st->h.stop) return;
    int rest = st->s - k;
    const double *c = kr_idr_dev_c(st);
    double om = st->om, c0 = c[0];
    idr_coeffs(cg, c, rest, -1.0);
    idr_coeffs(cu, c + 1, rest - 1, 1.0);
    const double *Gk = G + (int64_t)k * n;
    double *uk = U + (int64_t)k * n;
    GRID_STRIDE(i, n)
    {
        double vi = r[i] + idr_rowsum(Gk, n, i, cg, rest);
        double vhi = d ? d[i] * vi : vi;
        uk[i] = idr_u_entry(om, vhi, c0, uk[i], uk + n, n, i, cu, rest - 1);
    }
}

/* h = P(:,0:k)^T g_k (k_gemv_t_partial's sums), then its triangular
 * solve */
__global__ void k_idr_h(int32_t n, int k, const double *__restrict__ P,
                        const double *__restrict__ G, kr_idr_dev *st,
                        double *partial)
{
    __shared__ double sh[BLOCK / 32], tot[IDR_S];
    kr_pdl_begin();
    if (st->h.stop) return;
    const double *g = G + (int64_t)k * n;
    double acc[IDR_S];
#pragma unroll
    for (int j = 0; j < IDR_S; j++)
        acc[j] = 0.0;
    GRID_STRIDE(i, n)
    {
        double gi = g[i];
#pragma unroll
        for (int j = 0; j < IDR_S; j++)
            if (j < k) acc[j] += P[i + (int64_t)j * n] * gi;
    }
    if (!idr_totals(acc, k, partial, &st->h.ticket, sh, tot)) return;
    IDR_STEP(st, {
        double *h = kr_idr_dev_hv(c);
        for (int j = 0; j < k; j++)
            h[j] = tot[j];
        kr_idr_dev_h(c, k);
    });
}

/* g_k -= G(:,0:k) h and u_k -= U(:,0:k) h (k_gemv_n's), then M(k:s,k) =
 * P(:,k:s)^T g_k with the new g_k, in one pass */
__global__ void k_idr_orth(int32_t n, int k, const double *__restrict__ P,
                           double *G, double *U, kr_idr_dev *st,
                           double *partial)
{
    __shared__ double sh[BLOCK / 32], ch[IDR_S], tot[IDR_S];
    kr_pdl_begin();
    if (st->h.stop) return;
    int s = st->s, m = s - k;
    if (k > 0) idr_coeffs(ch, kr_idr_dev_hv(st), k, -1.0);
    double *g = G + (int64_t)k * n, *u = U + (int64_t)k * n;
    const double *Pk = P + (int64_t)k * n;
    double acc[IDR_S];
#pragma unroll
    for (int j = 0; j < IDR_S; j++)
        acc[j] = 0.0;
    GRID_STRIDE(i, n)
    {
        double gi = g[i];
        if (k > 0) {
            gi += idr_rowsum(G, n, i, ch, k);
            g[i] = gi;
            u[i] += idr_rowsum(U, n, i, ch, k);
        }
#pragma unroll
        for (int j = 0; j < IDR_S; j++)
            if (j < m) acc[j] += Pk[i + (int64_t)j * n] * gi;
    }
    if (!idr_totals(acc, m, partial, &st->h.ticket, sh, tot)) return;
    IDR_STEP(st, {
        double *Mk = kr_idr_dev_M(c) + k + (size_t)k * (size_t)s;
        for (int j = 0; j < m; j++)
            Mk[j] = tot[j];
        kr_idr_dev_orth(c, k);
    });
}

/* v.r and v.v as cu_dots' k_dots_partial<2> sums them */
__global__ void k_idr_omega(int32_t n, const double *__restrict__ v,
                            const double *__restrict__ r, kr_idr_dev *st,
                            double *partial)
{
    __shared__ double sh[BLOCK / 32];
    kr_pdl_begin();
    if (st->h.stop) return;
    double tr, tt;
    if (grid_omega_dots(n, v, r, &tr, &tt, &st->h.ticket, partial, sh))
        IDR_STEP(st, { kr_idr_dev_omega(c, tr, tt); });
}

/* xr_pass's update and r.r (without d), z = d .* r when z is given, and
 * for k = s the next f = P^T r (k_gemv_t_partial's sums), in one pass */
__global__ void k_idr_update(int32_t n, int k, const double *__restrict__ p,
                             const double *__restrict__ q, double *x, double *r,
                             const double *__restrict__ d, double *z,
                             const double *__restrict__ P, kr_idr_dev *st,
                             double *partial)
{
    __shared__ double sh[BLOCK / 32], tot[IDR_S + 1];
    kr_pdl_begin();
    if (st->h.stop) return;
    int s = st->s, nf = k == s ? s : 0;
    double a = k < s ? st->beta : st->om, acc[IDR_S + 1];
#pragma unroll
    for (int j = 0; j < IDR_S + 1; j++)
        acc[j] = 0.0;
    GRID_STRIDE(i, n)
    {
        x[i] += a * p[i];
        double ri = r[i] - a * q[i];
        r[i] = ri;
        acc[0] += ri * ri;
        if (z) z[i] = d ? d[i] * ri : ri;
#pragma unroll
        for (int j = 0; j < IDR_S; j++)
            if (j < nf) acc[1 + j] += P[i + (int64_t)j * n] * ri;
    }
    if (!idr_totals(acc, 1 + nf, partial, &st->h.ticket, sh, tot)) return;
    IDR_STEP(st, {
        double *f = kr_idr_dev_f(c);
        for (int j = 0; j < nf; j++)
            f[j] = tot[1 + j];
        kr_idr_dev_update(c, k, tot[0]);
    });
}

/* k_idr_update of step k (without z) and k_idr_vu of step k + 1 for each
 * row, in one pass: u_{k+1} needs r only in its own row, and its c is
 * known from the last launch (kr_idr_dev_orth). The expressions are
 * those of the two kernels, so the iterates are theirs. */
__global__ void k_idr_update_vu(int32_t n, int k, const double *__restrict__ p,
                                const double *__restrict__ q, double *x,
                                double *r, const double *__restrict__ G,
                                double *U, const double *__restrict__ d,
                                kr_idr_dev *st, double *partial)
{
    __shared__ double sh[BLOCK / 32], tot[1], cg[IDR_S], cu[IDR_S];
    kr_pdl_begin();
    if (st->h.stop) return;
    int rest = st->s - (k + 1);
    const double *c = kr_idr_dev_c(st);
    double a = st->beta, om = st->om, c0 = c[0], rr = 0.0;
    idr_coeffs(cg, c, rest, -1.0);
    idr_coeffs(cu, c + 1, rest - 1, 1.0);
    const double *Gn = G + (int64_t)(k + 1) * n;
    double *un = U + (int64_t)(k + 1) * n;
    GRID_STRIDE(i, n)
    {
        x[i] += a * p[i];
        double ri = r[i] - a * q[i];
        r[i] = ri;
        rr += ri * ri;
        double vi = ri + idr_rowsum(Gn, n, i, cg, rest);
        double vhi = d ? d[i] * vi : vi;
        un[i] = idr_u_entry(om, vhi, c0, un[i], un + n, n, i, cu, rest - 1);
    }
    double acc[1] = {rr};
    if (!idr_totals(acc, 1, partial, &st->h.ticket, sh, tot)) return;
    IDR_STEP(st, { kr_idr_dev_update(c, k, tot[0]); });
}

static kr_status cu_idr_v(kr_ctx *ctx, int32_t n, int k, const double *r,
                          const double *G, double *v, kr_idr_dev *st)
{
    LAUNCH(ctx, n, k_idr_v, n, k, r, G, v, st);
    return KR_OK;
}

static kr_status cu_idr_u(kr_ctx *ctx, int32_t n, int k, const double *vh,
                          double *U, kr_idr_dev *st)
{
    LAUNCH(ctx, n, k_idr_u, n, k, vh, U, st);
    return KR_OK;
}

/* v and vh stay unwritten: the fused kernel keeps them in registers */
static kr_status cu_idr_vu(kr_ctx *ctx, int32_t n, int k, const double *r,
                           const double *G, double *U, const double *d,
                           double *v, double *vh, kr_idr_dev *st)
{
    (void)v, (void)vh;
    LAUNCH(ctx, n, k_idr_vu, n, k, r, G, U, d, st);
    return KR_OK;
}

static kr_status cu_idr_h(kr_ctx *ctx, int32_t n, int k, const double *P,
                          const double *G, kr_idr_dev *st)
{
    if (k == 0) return KR_OK;
    RED_LAUNCH(ctx, k_idr_h, n, k, P, G, st);
    return KR_OK;
}

static kr_status cu_idr_orth(kr_ctx *ctx, int32_t n, int k, const double *P,
                             double *G, double *U, kr_idr_dev *st)
{
    RED_LAUNCH(ctx, k_idr_orth, n, k, P, G, U, st);
    return KR_OK;
}

static kr_status cu_idr_omega(kr_ctx *ctx, int32_t n, const double *v,
                              const double *r, kr_idr_dev *st)
{
    RED_LAUNCH(ctx, k_idr_omega, n, v, r, st);
    return KR_OK;
}

static kr_status cu_idr_update(kr_ctx *ctx, int32_t n, int k, const double *p,
                               const double *q, double *x, double *r,
                               const double *d, double *z, const double *P,
                               kr_idr_dev *st)
{
    RED_LAUNCH(ctx, k_idr_update, n, k, p, q, x, r, d, z, P, st);
    return KR_OK;
}

/* v and vh stay unwritten, as in cu_idr_vu */
static kr_status cu_idr_update_vu(kr_ctx *ctx, int32_t n, int k,
                                  const double *p, const double *q, double *x,
                                  double *r, const double *G, double *U,
                                  const double *d, double *v, double *vh,
                                  kr_idr_dev *st)
{
    (void)v, (void)vh;
    RED_LAUNCH(ctx, k_idr_update_vu, n, k, p, q, x, r, G, U, d, st);
    return KR_OK;
}

/* ------------------------------------------------ end of IDR(s) ---- */

/* ------------------------------------------------------ graph replay */

/* A slot holds the instantiated graph, or NO_GRAPH once capture failed. */
typedef struct replay_graph {
    cudaGraphExec_t exec;
} replay_graph;

static char no_graph_mark;
#define NO_GRAPH ((void *)&no_graph_mark)

/* Captures fn's work on the stream; NULL when it cannot be captured (the
 * work is then not run: the caller runs fn directly). */
static replay_graph *capture(kr_ctx *ctx, kr_status (*fn)(void *), void *arg)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) !=
        cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    kr_status fs = fn(arg);
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(s, &g);
    replay_graph *rg = NULL;
    if (fs == KR_OK && e == cudaSuccess && g) {
        rg = (replay_graph *)calloc(1, sizeof *rg);
        if (rg && cudaGraphInstantiate(&rg->exec, g, 0) != cudaSuccess) {
            free(rg);
            rg = NULL;
        }
    }
    if (g) cudaGraphDestroy(g);
    cudaGetLastError(); /* a failed capture leaves its error behind */
    return rg;
}

static kr_status cu_replay(kr_ctx *ctx, void **slot, kr_status (*fn)(void *arg),
                           void *arg)
{
    if (!*slot) {
        replay_graph *rg = capture(ctx, fn, arg);
        *slot = rg ? (void *)rg : NO_GRAPH;
    }
    if (*slot == NO_GRAPH) return fn(arg);
    replay_graph *rg = (replay_graph *)*slot;
    KR_CUDA_TRY(ctx, cudaGraphLaunch(rg->exec, kr_cuda(ctx)->stream));
    return KR_OK;
}

static void cu_replay_free(kr_ctx *ctx, void *slot)
{
    (void)ctx;
    if (!slot || slot == NO_GRAPH) return;
    replay_graph *rg = (replay_graph *)slot;
    cudaGraphExecDestroy(rg->exec);
    free(rg);
}

/* h = V^T w for a tall, thin V: cuBLAS's transposed gemv gives such a
 * shape too few blocks, so this is the two-stage reduction of `dots`,
 * GEMV_T_COLS columns per pass over w. */
#define GEMV_T_COLS 8
__global__ void k_gemv_t_partial(int32_t n, int k, const double *__restrict__ V,
                                 int64_t ld, const double *__restrict__ w,
                                 double *partial)
{
    __shared__ double sh[BLOCK / 32];
    double s[GEMV_T_COLS];
    for (int j = 0; j < GEMV_T_COLS; j++)
        s[j] = 0.0;
    GRID_STRIDE(i, n)
    {
        double wi = w[i];
        for (int j = 0; j < GEMV_T_COLS; j++)
            if (j < k) s[j] += V[i + j * ld] * wi;
    }
    for (int j = 0; j < GEMV_T_COLS; j++) {
        if (j >= k) break;
        double t = block_sum(s[j], sh);
        if (threadIdx.x == 0) partial[j * gridDim.x + blockIdx.x] = t;
    }
}

static kr_status cu_gemv_t(kr_ctx *ctx, int32_t n, int k, const double *V,
                           int64_t ld, const double *w, double *h)
{
    kr_cuda_state *st = kr_cuda(ctx);
    double *out = st->d_scratch + KR_CUDA_SCRATCH / 2;
    if (k > KR_CUDA_SCRATCH / 2 - KR_CUDA_SCRATCH_TAIL) /* gm_ticket's */
        return kr_fail(ctx, KR_ERR_ARG, "gemv_t: %d columns is too many", k);
    if (n == 0 || k == 0) {
        memset(h, 0, (size_t)k * sizeof *h);
        return KR_OK;
    }
    int nb = kr_grid(n, BLOCK);
    if (nb > MAX_RED_BLOCKS) nb = MAX_RED_BLOCKS;
    double *partial = st->d_scratch + KR_MAX_DOTS;
    for (int j0 = 0; j0 < k; j0 += GEMV_T_COLS) {
        int kk = k - j0 < GEMV_T_COLS ? k - j0 : GEMV_T_COLS;
        k_gemv_t_partial<<<nb, BLOCK, 0, st->stream>>>(n, kk, V + j0 * ld, ld,
                                                       w, partial);
        KR_LAUNCH_CHECK(ctx);
        k_dots_final<<<kk, BLOCK, 0, st->stream>>>(nb, partial, out + j0);
        KR_LAUNCH_CHECK(ctx);
    }
    return cu_download(ctx, h, out, (size_t)k * sizeof(double));
}

/* Coefficients travel as a kernel argument: copying them from host memory
 * with cudaMemcpyAsync would synchronise the stream (pageable memory). */
#define GEMV_N_COLS 32
struct gemv_coeffs {
    double h[GEMV_N_COLS];
};

/* w += sum_j c.h[j] * V(:, j), j < k <= GEMV_N_COLS (c already scaled) */
__global__ void k_gemv_n(int32_t n, int k, const double *__restrict__ V,
                         int64_t ld, gemv_coeffs c, double *w)
{
    GRID_STRIDE(i, n)
    {
        double s = 0.0;
        for (int j = 0; j < k; j++)
            s += V[i + j * ld] * c.h[j];
        w[i] += s;
    }
}

static kr_status cu_gemv_n(kr_ctx *ctx, int32_t n, int k, const double *V,
                           int64_t ld, const double *h, double alpha, double *w)
{
    for (int j0 = 0; j0 < k; j0 += GEMV_N_COLS) {
        int kk = k - j0 < GEMV_N_COLS ? k - j0 : GEMV_N_COLS;
        gemv_coeffs c;
        for (int j = 0; j < kk; j++)
            c.h[j] = alpha * h[j0 + j];
        LAUNCH(ctx, n, k_gemv_n, n, kk, V + j0 * ld, ld, c, w);
    }
    return KR_OK;
}

/* ------------------------------------------ GMRES with device scalars */

/* k_gemv_t_partial for up to GEMV_T_DEV_COLS columns in one launch, in
 * chunks of GEMV_T_COLS: each column's sum runs in the same order as in
 * k_gemv_t_partial, so h is the same bit for bit */
#define GEMV_T_DEV_COLS 32
__global__ void k_gemv_t_dev(int32_t n, int k, const double *__restrict__ V,
                             int64_t ld, const double *__restrict__ w,
                             double *partial)
{
    __shared__ double sh[BLOCK / 32];
    for (int j0 = 0; j0 < k; j0 += GEMV_T_COLS) {
        double s[GEMV_T_COLS];
        for (int j = 0; j < GEMV_T_COLS; j++)
            s[j] = 0.0;
        const double *Vc = V + j0 * ld;
        int kk = k - j0;
        GRID_STRIDE(i, n)
        {
            double wi = w[i];
            for (int j = 0; j < GEMV_T_COLS; j++)
                if (j < kk) s[j] += Vc[i + j * ld] * wi;
        }
        for (int j = 0; j < GEMV_T_COLS; j++) {
            if (j >= kk) break;
            double t = block_sum(s[j], sh);
            if (threadIdx.x == 0)
                partial[(j0 + j) * gridDim.x + blockIdx.x] = t;
        }
    }
}

/* gemv_t with h in device memory: two launches per 32 columns */
static kr_status cu_gemv_t_dev(kr_ctx *ctx, int32_t n, int k, const double *V,
                               int64_t ld, const double *w, double *h)
{
    kr_cuda_state *st = kr_cuda(ctx);
    if (k == 0) return KR_OK;
    if (n == 0) {
        KR_CUDA_TRY(ctx,
                    cudaMemsetAsync(h, 0, (size_t)k * sizeof *h, st->stream));
        return KR_OK;
    }
    int nb = red_blocks(n);
    double *partial = st->d_scratch + KR_MAX_DOTS;
    for (int j0 = 0; j0 < k; j0 += GEMV_T_DEV_COLS) {
        int kk = k - j0 < GEMV_T_DEV_COLS ? k - j0 : GEMV_T_DEV_COLS;
        k_gemv_t_dev<<<nb, BLOCK, 0, st->stream>>>(n, kk, V + j0 * ld, ld, w,
                                                   partial);
        KR_LAUNCH_CHECK(ctx);
        k_dots_final<<<kk, BLOCK, 0, st->stream>>>(nb, partial, h + j0);
        KR_LAUNCH_CHECK(ctx);
    }
    return KR_OK;
}

/* k_gemv_n with the coefficients alpha * h[j] made on the device (the
 * same products as cu_gemv_n's host loop) */
__global__ void k_gemv_n_dev(int32_t n, int k, const double *__restrict__ V,
                             int64_t ld, const double *__restrict__ h,
                             double alpha, double *w)
{
    __shared__ double c[GEMV_N_COLS];
    if (threadIdx.x < k) c[threadIdx.x] = alpha * h[threadIdx.x];
    __syncthreads();
    GRID_STRIDE(i, n)
    {
        double s = 0.0;
        for (int j = 0; j < k; j++)
            s += V[i + j * ld] * c[j];
        w[i] += s;
    }
}

static kr_status cu_gemv_n_dev(kr_ctx *ctx, int32_t n, int k, const double *V,
                               int64_t ld, const double *h, double alpha,
                               double *w)
{
    for (int j0 = 0; j0 < k; j0 += GEMV_N_COLS) {
        int kk = k - j0 < GEMV_N_COLS ? k - j0 : GEMV_N_COLS;
        LAUNCH(ctx, n, k_gemv_n_dev, n, kk, V + j0 * ld, ld, h + j0, alpha, w);
    }
    return KR_OK;
}

static_assert(sizeof(kr_gm_dev) % sizeof(double) == 0,
              "gm_step_in_shared copies kr_gm_dev a double at a time");

/* to[off, off + len) = from[off, off + len), by the whole block */
static __device__ __forceinline__ void gm_copy(double *to, const double *from,
                                               size_t off, int len)
{
    for (int i = threadIdx.x; i < len; i += blockDim.x)
        to[off + i] = __ldcg(from + off + i);
}

/* kr_gm_dev_step(s, vv) in thread 0 on a copy in shared memory of what it
 * reads and writes (the struct, then column j of H, cs, sn, g and h2 up
 * to row j + 1, at their offsets), moved in and out by the block: in
 * global memory the rotations were a chain of loads, each a round trip
 * behind the stores before it. Every thread of the last block calls it. */
static __device__ void gm_step_in_shared(kr_gm_dev *s, double vv)
{
    __shared__ double copy[KR_GM_DEV_MAX_DOUBLES];
    const size_t head = sizeof(kr_gm_dev) / sizeof(double);
    double *g = (double *)s;
    __syncthreads(); /* the ticket's reset by thread 0 is seen */
    gm_copy(copy, g, 0, (int)head);
    __syncthreads();
    const int m = ((const kr_gm_dev *)copy)->m;
    const int j = ((const kr_gm_dev *)copy)->j;
    const size_t H = head, cs = H + (size_t)(m + 1) * m, sn = cs + m,
                 gv = sn + m, h2 = gv + m + 1;
    const size_t off[5] = {H + (size_t)j * (m + 1), cs, sn, gv, h2};
    const int len[5] = {j + 2, j + 1, j + 1, j + 2, j + 1};
    for (int r = 0; r < 5; r++)
        gm_copy(copy, g, off[r], len[r]);
    __syncthreads();
    if (threadIdx.x == 0) kr_gm_dev_step((kr_gm_dev *)copy, vv);
    __syncthreads();
    for (int r = -1; r < 4; r++) { /* h2 is only read */
        const size_t o = r < 0 ? 0 : off[r];
        const int l = r < 0 ? (int)head : len[r];
        for (int i = threadIdx.x; i < l; i += blockDim.x)
            g[o + i] = copy[o + i];
    }
}

__global__ void k_gm_step(int32_t n, const double *__restrict__ v, kr_gm_dev *s,
                          double *partial)
{
    __shared__ double sh[BLOCK / 32];
    kr_pdl_begin();
    if (s->h.stop) return;
    double acc = 0.0;
    GRID_STRIDE(i, n) acc += v[i] * v[i];
    acc = block_sum(acc, sh);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
    if (!last_block(&s->h.ticket)) return;
    acc = final_sum(gridDim.x, partial, sh);
    gm_step_in_shared(s, acc); /* acc valid in thread 0, which steps */
}

static kr_status cu_gm_step(kr_ctx *ctx, int32_t n, const double *v,
                            kr_gm_dev *s)
{
    RED_LAUNCH(ctx, k_gm_step, n, v, s);
    return KR_OK;
}

__global__ void k_gm_scale(int32_t n, double *v, const kr_gm_dev *s)
{
    kr_pdl_begin();
    if (s->h.stop) return;
    double a = s->inv;
    GRID_STRIDE(i, n) v[i] = a * v[i];
}

/* One pass over the first k <= 32 columns of V for each row i: with UPD,
 * w_i += sum_j V_ij c_j first (c = alpha h, gemv_n's sum), then either
 * each column's V_ij w_i (GM_COLS) or w_i^2 (GM_NORM) into per-thread sums;
 * the last block (s->h.ticket) finishes: one warp per column adds the
 * blocks' partials in order (GM_COLS, into hout), or gm_step (GM_NORM). */
enum { GM_COLS, GM_NORM };
#define GM_FUSED_COLS 32

template <int UPD, int OUT>
__global__ void k_gm_pass(int32_t n, int k, const double *__restrict__ V,
                          int64_t ld, const double *__restrict__ h,
                          double alpha, double *w, double *hout, kr_gm_dev *s,
                          double *partial)
{
    __shared__ double c[GM_FUSED_COLS];
    __shared__ double sh[BLOCK / 32];
    kr_pdl_begin();
    if (OUT == GM_NORM && s->h.stop) return;
    if (UPD && threadIdx.x < k) c[threadIdx.x] = alpha * h[threadIdx.x];
    __syncthreads();
    const int nacc = OUT == GM_COLS ? GM_FUSED_COLS : 1;
    double acc[nacc];
#pragma unroll
    for (int j = 0; j < nacc; j++)
        acc[j] = 0.0;
    GRID_STRIDE(i, n)
    {
        double wi = w[i];
        if (UPD) {
            double t = 0.0;
            for (int j = 0; j < k; j++)
                t += V[i + j * ld] * c[j];
            wi += t;
            w[i] = wi;
        }
        if (OUT == GM_NORM) {
            acc[0] += wi * wi;
        } else {
#pragma unroll
            for (int j = 0; j < GM_FUSED_COLS; j++)
                if (j < k) acc[j] += V[i + j * ld] * wi;
        }
    }
    int ncol = OUT == GM_COLS ? k : 1;
#pragma unroll
    for (int j = 0; j < nacc; j++) {
        if (j >= ncol) break;
        double t = block_sum(acc[j], sh);
        if (threadIdx.x == 0) partial[j * gridDim.x + blockIdx.x] = t;
    }
    if (!last_block(&s->h.ticket)) return;
    if (OUT == GM_NORM) {
        double vv = final_sum(gridDim.x, partial, sh);
        gm_step_in_shared(s, vv); /* vv valid in thread 0, which steps */
        return;
    }
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int j = warp; j < k; j += BLOCK / 32) {
        double t = 0.0;
        for (int b = lane; b < (int)gridDim.x; b += 32)
            t += __ldcg(partial + j * gridDim.x + b);
        for (int off = 16; off > 0; off /= 2)
            t += __shfl_down_sync(~0u, t, off);
        if (lane == 0) hout[j] = t;
    }
}

/* A head whose only use is the ticket of the column passes, at the end of
 * the scratch (zeroed at set-up; last_block leaves it zero). */
static_assert(sizeof(kr_gm_dev) / sizeof(double) + 1 <= KR_CUDA_SCRATCH_TAIL,
              "gm_ticket's head fits the scratch's tail");

static kr_gm_dev *gm_ticket(kr_cuda_state *st)
{
    return (kr_gm_dev *)(st->d_scratch + KR_CUDA_SCRATCH -
                         sizeof(kr_gm_dev) / sizeof(double) - 1);
}

/* h = V^T w for k <= 32 columns in one launch (else cu_gemv_t_dev) */
static kr_status cu_gemv_t_dev1(kr_ctx *ctx, int32_t n, int k, const double *V,
                                int64_t ld, const double *w, double *h)
{
    kr_cuda_state *st = kr_cuda(ctx);
    if (k > GM_FUSED_COLS || n == 0 || k == 0)
        return cu_gemv_t_dev(ctx, n, k, V, ld, w, h);
    KR_LAUNCH_PDL(ctx, red_blocks(n), BLOCK, k_gm_pass<0, GM_COLS>, n, k, V, ld,
                  (const double *)NULL, 0.0, (double *)w, h, gm_ticket(st),
                  st->d_scratch + KR_MAX_DOTS);
    return KR_OK;
}

static kr_status cu_gemv_nt_dev(kr_ctx *ctx, int32_t n, int k, const double *V,
                                int64_t ld, const double *h, double alpha,
                                double *w, double *h2)
{
    kr_cuda_state *st = kr_cuda(ctx);
    if (k > GM_FUSED_COLS || n == 0) {
        KR_TRY(cu_gemv_n_dev(ctx, n, k, V, ld, h, alpha, w));
        return cu_gemv_t_dev(ctx, n, k, V, ld, w, h2);
    }
    KR_LAUNCH_PDL(ctx, red_blocks(n), BLOCK, k_gm_pass<1, GM_COLS>, n, k, V, ld,
                  h, alpha, w, h2, gm_ticket(st), st->d_scratch + KR_MAX_DOTS);
    return KR_OK;
}

static kr_status cu_gm_update_step(kr_ctx *ctx, int32_t n, int k,
                                   const double *V, int64_t ld, const double *h,
                                   double *w, kr_gm_dev *s)
{
    kr_cuda_state *st = kr_cuda(ctx);
    if (k > GM_FUSED_COLS) {
        KR_TRY(cu_gemv_n_dev(ctx, n, k, V, ld, h, -1.0, w));
        return cu_gm_step(ctx, n, w, s);
    }
    KR_LAUNCH_PDL(ctx, red_blocks(n), BLOCK, k_gm_pass<1, GM_NORM>, n, k, V, ld,
                  h, -1.0, w, (double *)NULL, s, st->d_scratch + KR_MAX_DOTS);
    return KR_OK;
}

static kr_status cu_gm_scale(kr_ctx *ctx, int32_t n, double *v,
                             const kr_gm_dev *s)
{
    LAUNCH_PDL(ctx, n, k_gm_scale, n, v, s);
    return KR_OK;
}

/* Events around each run; they are created here, outside any iteration. */
static kr_status cu_time_runs(kr_ctx *ctx, kr_status (*fn)(void *arg),
                              void *arg, int reps, double *times)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    cudaEvent_t *ev = (cudaEvent_t *)calloc(2 * (size_t)reps, sizeof *ev);
    if (!ev) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = KR_OK;
    int made = 0;
    for (int i = 0; i < 2 * reps && st == KR_OK; i++) {
        if (cudaEventCreate(&ev[i]) == cudaSuccess)
            made++;
        else
            st = kr_fail(ctx, KR_ERR_DEVICE, "cudaEventCreate failed");
    }
    for (int i = 0; i < reps && st == KR_OK; i++) {
        cudaEventRecord(ev[2 * i], s);
        st = fn(arg);
        cudaEventRecord(ev[2 * i + 1], s);
    }
    if (st == KR_OK && cudaStreamSynchronize(s) != cudaSuccess)
        st = kr_fail(ctx, KR_ERR_DEVICE, "timed runs failed: %s",
                     cudaGetErrorString(cudaGetLastError()));
    for (int i = 0; i < reps && st == KR_OK; i++) {
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
        times[i] = 1e-3 * ms;
    }
    for (int i = 0; i < made; i++)
        cudaEventDestroy(ev[i]);
    free(ev);
    return st;
}

/* ==== several right-hand sides (issue 19): the multi-column ops ====
 * Element-wise kernels with one thread per block entry e (row e / k,
 * column e % k) skipping the columns outside the mask; reductions read
 * the entries in order too (k_mdots_partial), each block summing a
 * grid-stride share per (pair, column) in a fixed order, then
 * k_dots_final adding the blocks' sums per result.
 * Per-column scalars travel as kernel arguments (mcoef, 1.5 KB). */

struct mcoef {
    double a[KR_MULTI_MAX], b[KR_MULTI_MAX], c[KR_MULTI_MAX];
};

static mcoef make_coef(int k, const double *a, const double *b, const double *c)
{
    mcoef m;
    memset(&m, 0, sizeof m);
    for (int j = 0; j < k; j++) {
        m.a[j] = a ? a[j] : 0.0;
        m.b[j] = b ? b[j] : 0.0;
        m.c[j] = c ? c[j] : 0.0;
    }
    return m;
}

#define MCOL_SKIP(e, k, mask)                                                  \
    int j = (int)((e) % (k));                                                  \
    if (!((mask) >> j & 1)) continue

/* Y = a X + b Y per column; b == 0 overwrites */
__global__ void k_maxpby(int64_t nk, int k, mcoef m, const double *X, double *Y,
                         uint64_t mask)
{
    GRID_STRIDE(e, nk)
    {
        MCOL_SKIP(e, k, mask);
        Y[e] = m.b[j] == 0.0 ? m.a[j] * X[e] : m.a[j] * X[e] + m.b[j] * Y[e];
    }
}

/* Z = a X + b Y + c Z per column; c == 0 overwrites */
__global__ void k_maxpbypcz(int64_t nk, int k, mcoef m, const double *X,
                            const double *Y, double *Z, uint64_t mask)
{
    GRID_STRIDE(e, nk)
    {
        MCOL_SKIP(e, k, mask);
        double t = m.a[j] * X[e] + m.b[j] * Y[e];
        Z[e] = m.c[j] == 0.0 ? t : t + m.c[j] * Z[e];
    }
}

/* X += a P; R -= a Q; Z = d .* R (d NULL: no Z) per column */
__global__ void k_mxr(int64_t nk, int k, mcoef m, const double *P,
                      const double *Q, double *X, double *R, const double *d,
                      double *Z, uint64_t mask)
{
    GRID_STRIDE(e, nk)
    {
        MCOL_SKIP(e, k, mask);
        X[e] += m.a[j] * P[e];
        double ri = R[e] - m.a[j] * Q[e];
        R[e] = ri;
        if (d) Z[e] = d[e / k] * ri;
    }
}

/* W += sum_l V_l h[l*k + j] (h in device memory, scaled by alpha) */
__global__ void k_mgemv_n(int64_t nk, int k, int nb, const double *V,
                          int64_t ldv, const double *h, double *W,
                          uint64_t mask)
{
    GRID_STRIDE(e, nk)
    {
        MCOL_SKIP(e, k, mask);
        double s = 0.0;
        for (int l = 0; l < nb; l++)
            s += V[l * ldv + e] * h[l * k + j];
        W[e] += s;
    }
}

__global__ void k_mpointwise(int64_t nk, int k, const double *d,
                             const double *X, double *Y)
{
    GRID_STRIDE(e, nk) Y[e] = d[e / k] * X[e];
}

__global__ void k_mcolumn(int32_t n, int k, int j, double *X, double *x,
                          int to_block)
{
    GRID_STRIDE(i, n)
    {
        if (to_block)
            X[i * k + j] = x[i];
        else
            x[i] = X[i * k + j];
    }
}

/* Up to MPAIRS products per launch: pair p's x(i, j) is x[p][i*xrow +
 * j*xcol] (xrow = k, xcol = 1 for a block; 1, 0 for a shared vector), its
 * y(i, j) y[p][i*k + j]. */
#define MPAIRS 8
struct mpairs {
    const double *x[MPAIRS];
    const double *y[MPAIRS];
};

/* partial[r*gridDim.x + blockIdx.x], r = p*k + j: the block's share of
 * pair p's column-j product (0 for a column outside the mask). The
 * threads walk the n x k entries in order (coalesced: a column per
 * thread would read each row's cache line k times); blockDim.x is a
 * multiple of k, so a thread keeps one column. The block then adds its
 * threads' sums column by column in a fixed order. */
__global__ void k_mdots_partial(int32_t n, int k, int np, mpairs pr, int shared,
                                uint64_t mask, double *partial)
{
    __shared__ double sh[MPAIRS][BLOCK];
    int t = threadIdx.x, j = t % k;
    double s[MPAIRS];
#pragma unroll
    for (int p = 0; p < MPAIRS; p++)
        s[p] = 0.0;
    int64_t nk = (int64_t)n * k;
    if (mask >> j & 1) {
        GRID_STRIDE(e, nk)
        {
            int64_t xi = shared ? e / k : e;
#pragma unroll
            for (int p = 0; p < MPAIRS; p++)
                if (p < np) s[p] += pr.x[p][xi] * pr.y[p][e];
        }
    }
#pragma unroll
    for (int p = 0; p < MPAIRS; p++)
        if (p < np) sh[p][t] = s[p];
    __syncthreads();
    if (t < np * k) {
        int p = t / k, c = t % k;
        double sum = 0.0;
        for (int i = c; i < (int)blockDim.x; i += k)
            sum += sh[p][i];
        partial[(size_t)t * gridDim.x + blockIdx.x] = sum;
    }
}

/* Scratch layout for the multi ops: results, partial sums, coefficients */
#define MSCR_PARTIAL 1024
#define MSCR_COEF 40960
#define MSCR_COEF_LEN 16384

/* out[p*k + j] for the np <= MPAIRS pairs of pr and the columns of mask */
static kr_status mreduce(kr_ctx *ctx, int32_t n, int k, int np,
                         const mpairs *pr, int shared, uint64_t mask,
                         double *out)
{
    kr_cuda_state *st = kr_cuda(ctx);
    /* enough blocks to fill the GPU, within the partial sums' scratch */
    int bs = BLOCK / k * k, nb = kr_grid((int64_t)n * k, bs), nr = np * k;
    int cap = 4 * st->sm_count, room = (MSCR_COEF - MSCR_PARTIAL) / nr;
    if (cap > room) cap = room;
    if (nb > cap) nb = cap;
    double *partial = st->d_scratch + MSCR_PARTIAL, res[MPAIRS * KR_MULTI_MAX];
    k_mdots_partial<<<nb, bs, 0, st->stream>>>(n, k, np, *pr, shared, mask,
                                               partial);
    KR_LAUNCH_CHECK(ctx);
    k_dots_final<<<nr, BLOCK, 0, st->stream>>>(nb, partial, st->d_scratch);
    KR_LAUNCH_CHECK(ctx);
    KR_TRY(cu_download(ctx, res, st->d_scratch, (size_t)nr * sizeof(double)));
    for (int p = 0; p < np; p++)
        for (int j = 0; j < k; j++)
            if (mask >> j & 1) out[p * k + j] = res[p * k + j];
    return KR_OK;
}

static kr_status cu_mdots(kr_ctx *ctx, int32_t n, int k, int m,
                          const double *const *X, const double *const *Y,
                          uint64_t mask, double *out)
{
    if (m < 1 || m > KR_MAX_DOTS)
        return kr_fail(ctx, KR_ERR_ARG, "mdots: m = %d outside 1..%d", m,
                       KR_MAX_DOTS);
    mpairs pr;
    memset(&pr, 0, sizeof pr);
    for (int p = 0; p < m; p++) {
        pr.x[p] = X[p];
        pr.y[p] = Y[p];
    }
    return mreduce(ctx, n, k, m, &pr, 0, mask, out);
}

static kr_status cu_mgemv_t(kr_ctx *ctx, int32_t n, int k, int nb,
                            const double *V, int64_t ldv, int shared,
                            const double *W, uint64_t mask, double *h)
{
    for (int l0 = 0; l0 < nb; l0 += MPAIRS) {
        int np = nb - l0 < MPAIRS ? nb - l0 : MPAIRS;
        mpairs pr;
        memset(&pr, 0, sizeof pr);
        for (int p = 0; p < np; p++) {
            pr.x[p] = V + (int64_t)(l0 + p) * ldv;
            pr.y[p] = W;
        }
        KR_TRY(mreduce(ctx, n, k, np, &pr, shared, mask, h + (size_t)l0 * k));
    }
    return KR_OK;
}

#define MLAUNCH(ctx, nk, kernel, ...)                                          \
    do {                                                                       \
        if ((nk) > 0)                                                          \
            kernel<<<kr_grid(nk, BLOCK), BLOCK, 0, kr_cuda(ctx)->stream>>>(    \
                __VA_ARGS__);                                                  \
        KR_LAUNCH_CHECK(ctx);                                                  \
    } while (0)

static kr_status cu_mgemv_n(kr_ctx *ctx, int32_t n, int k, int nb,
                            const double *V, int64_t ldv, const double *h,
                            double alpha, double *W, uint64_t mask)
{
    kr_cuda_state *st = kr_cuda(ctx);
    int64_t nk = (int64_t)n * k;
    int per = MSCR_COEF_LEN / k; /* blocks whose coefficients fit */
    double hs[MSCR_COEF_LEN];
    for (int l0 = 0; l0 < nb; l0 += per) {
        int cnt = nb - l0 < per ? nb - l0 : per;
        for (int e = 0; e < cnt * k; e++)
            hs[e] = alpha * h[(size_t)l0 * k + e];
        double *dh = st->d_scratch + MSCR_COEF;
        KR_TRY(cu_upload(ctx, dh, hs, (size_t)cnt * k * sizeof(double)));
        MLAUNCH(ctx, nk, k_mgemv_n, nk, k, cnt, V + l0 * ldv, ldv, dh, W, mask);
    }
    return KR_OK;
}

static kr_status cu_maxpby(kr_ctx *ctx, int32_t n, int k, const double *a,
                           const double *X, const double *b, double *Y,
                           uint64_t mask)
{
    int64_t nk = (int64_t)n * k;
    MLAUNCH(ctx, nk, k_maxpby, nk, k, make_coef(k, a, b, NULL), X, Y, mask);
    return KR_OK;
}

static kr_status cu_maxpbypcz(kr_ctx *ctx, int32_t n, int k, const double *a,
                              const double *X, const double *b, const double *Y,
                              const double *c, double *Z, uint64_t mask)
{
    int64_t nk = (int64_t)n * k;
    MLAUNCH(ctx, nk, k_maxpbypcz, nk, k, make_coef(k, a, b, c), X, Y, Z, mask);
    return KR_OK;
}

/* the update, then {r.z, r.r} by a second pass */
static kr_status cu_mxr_update(kr_ctx *ctx, int32_t n, int k, const double *a,
                               const double *P, const double *Q, double *X,
                               double *R, const double *d, double *Z,
                               uint64_t mask, double *out)
{
    int64_t nk = (int64_t)n * k;
    MLAUNCH(ctx, nk, k_mxr, nk, k, make_coef(k, a, NULL, NULL), P, Q, X, R, d,
            Z, mask);
    const double *xs[2] = {R, R}, *ys[2] = {d ? Z : R, R};
    return cu_mdots(ctx, n, k, 2, xs, ys, mask, out);
}

/* Y += a X, then y.y (and w.y) by a second pass */
static kr_status cu_maxpy_dots(kr_ctx *ctx, int32_t n, int k, const double *a,
                               const double *X, double *Y, const double *W,
                               uint64_t mask, double *out)
{
    double one[KR_MULTI_MAX];
    for (int j = 0; j < k; j++)
        one[j] = 1.0;
    KR_TRY(cu_maxpby(ctx, n, k, a, X, one, Y, mask));
    const double *xs[2] = {Y, W}, *ys[2] = {Y, Y};
    return cu_mdots(ctx, n, k, W ? 2 : 1, xs, ys, mask, out);
}

static kr_status cu_mpointwise(kr_ctx *ctx, int32_t n, int k, const double *d,
                               const double *X, double *Y)
{
    int64_t nk = (int64_t)n * k;
    MLAUNCH(ctx, nk, k_mpointwise, nk, k, d, X, Y);
    return KR_OK;
}

static kr_status cu_mcolumn(kr_ctx *ctx, int32_t n, int k, int j, double *X,
                            double *x, int to_block)
{
    MLAUNCH(ctx, n, k_mcolumn, n, k, j, X, x, to_block);
    return KR_OK;
}
/* ==== end of the several-right-hand-sides ops ==== */

/* ==== several right-hand sides, CG's scalars in backend memory ====
 * mcg_step over n x k row-major blocks with one kr_cg_dev per column.
 * A block has a multiple of k threads, so through the grid-stride loop a
 * thread keeps one column and reads its scalars once. A column outside
 * the mask or stopped is neither read nor written. Per-column sums go
 * through partial sums in the multi ops' scratch; the last block to
 * finish (counted in S[0].h.ticket) adds them, a warp per sum in a fixed
 * order, and runs the columns' scalar steps: no host round trip. */

static int mdev_block(int k) { return BLOCK / k * k; }

/* Blocks for a reduction of nsums sums per column, within the scratch:
 * up to 8 a multiprocessor (2048 threads), enough loads in flight for
 * these streaming passes. */
static int mdev_grid(kr_ctx *ctx, int64_t nk, int k, int nsums)
{
    int nb = kr_grid(nk, mdev_block(k));
    int cap = 8 * kr_cuda(ctx)->sm_count;
    int room = (MSCR_COEF - MSCR_PARTIAL) / (nsums * k);
    if (cap > room) cap = room;
    return nb > cap ? cap : nb;
}

__device__ __forceinline__ int mcg_live(const kr_cg_dev *S, uint64_t mask,
                                        int j)
{
    return (mask >> j & 1) && !S[j].h.stop;
}

/* The block's per-column sums of u (and of v when two) into
 * partial[(w*k + j)*gridDim.x + blockIdx.x], w = 0 for u, 1 for v. */
__device__ void mcol_partials(double u, double v, int two, int k,
                              double *partial)
{
    __shared__ double sh[2][BLOCK];
    int t = threadIdx.x;
    sh[0][t] = u;
    sh[1][t] = v;
    __syncthreads();
    if (t < (two ? 2 : 1) * k) {
        int w = t / k, c = t % k;
        double s = 0.0;
        for (int i = c; i < (int)blockDim.x; i += k)
            s += sh[w][i];
        partial[(size_t)t * gridDim.x + blockIdx.x] = s;
    }
}

/* In the last block: tot[r] = the sum of partial sum r over the blocks,
 * r < nr, a full warp per sum (the block may end in a partial warp). */
__device__ void mcol_totals(int nr, const double *partial, double *tot)
{
    int lane = threadIdx.x % 32, w = threadIdx.x / 32, nw = blockDim.x / 32;
    for (int r = w; w < nw && r < nr; r += nw) {
        double s = 0.0;
        for (int i = lane; i < (int)gridDim.x; i += 32)
            s += __ldcg(partial + (size_t)r * gridDim.x + i);
        for (int off = 16; off > 0; off /= 2)
            s += __shfl_down_sync(~0u, s, off);
        if (lane == 0) tot[r] = s;
    }
    __syncthreads();
}

/* X(:,j) . Y(:,j) for the live columns: the block's partial sums, then
 * in the last block to finish tot[j] = the totals and true returned (the
 * other blocks get false). Every thread of the block calls it. */
__device__ bool mcol_dot_last(int64_t nk, int k, const double *__restrict__ X,
                              const double *__restrict__ Y, kr_cg_dev *S,
                              uint64_t mask, double *partial, double *tot)
{
    double v = 0.0;
    if (mcg_live(S, mask, threadIdx.x % k)) GRID_STRIDE(e, nk) v += X[e] * Y[e];
    mcol_partials(v, 0.0, 0, k, partial);
    if (!last_block(&S[0].h.ticket)) return false;
    mcol_totals(k, partial, tot);
    return true;
}

__global__ void k_mcg_alpha(int64_t nk, int k, const double *__restrict__ P,
                            const double *__restrict__ Q, kr_cg_dev *S,
                            uint64_t mask, double *partial)
{
    __shared__ double tot[KR_MULTI_MAX];
    if (!mcol_dot_last(nk, k, P, Q, S, mask, partial, tot)) return;
    int c = threadIdx.x;
    if (c >= k || !(mask >> c & 1)) return;
    if (!S[c].h.stop) kr_cg_dev_alpha(&S[c], tot[c]);
    S[c].xa = S[c].h.stop ? 0.0 : S[c].alpha; /* for k_mcg_direction_x */
}

/* x += a p (X NULL: x waits for k_mcg_direction_x); r -= a q; z = d .* r
 * (d NULL: z = r, unwritten) over the thread's entries of its column; the
 * row index steps with the entry */
__device__ void mcg_xr(int64_t nk, int k, double a,
                       const double *__restrict__ P,
                       const double *__restrict__ Q, double *X, double *R,
                       const double *__restrict__ d, double *Z, double *rz,
                       double *rr)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t e0 = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    for (int64_t e = e0, i = e0 / k; e < nk; e += step, i += step / k) {
        if (X) X[e] += a * P[e];
        double ri = R[e] - a * Q[e], zi = ri;
        R[e] = ri;
        if (d) {
            zi = d[i] * ri;
            Z[e] = zi;
        }
        *rz += ri * zi;
        *rr += ri * ri;
    }
}

/* With `keep` (mcg_step_a: the preconditioner comes next) r.r is kept in
 * S[j].rr for k_mcg_rz; else the column's update. */
__global__ void k_mcg_update(int64_t nk, int k, const double *__restrict__ P,
                             const double *__restrict__ Q, double *X, double *R,
                             const double *__restrict__ d, double *Z,
                             kr_cg_dev *S, uint64_t mask, double *partial,
                             int keep)
{
    __shared__ double tot[2 * KR_MULTI_MAX];
    int j = threadIdx.x % k;
    double rz = 0.0, rr = 0.0;
    if (mcg_live(S, mask, j))
        mcg_xr(nk, k, S[j].alpha, P, Q, X, R, d, Z, &rz, &rr);
    mcol_partials(rz, rr, 1, k, partial);
    if (!last_block(&S[0].h.ticket)) return;
    mcol_totals(2 * k, partial, tot);
    int c = threadIdx.x;
    if (c >= k || !mcg_live(S, mask, c)) return;
    if (keep)
        S[c].rr = tot[k + c];
    else
        kr_cg_dev_update(&S[c], tot[c], tot[k + c]);
}

/* r.z per column, then kr_cg_dev_update with the kept r.r */
__global__ void k_mcg_rz(int64_t nk, int k, const double *__restrict__ R,
                         const double *__restrict__ Z, kr_cg_dev *S,
                         uint64_t mask, double *partial)
{
    __shared__ double tot[KR_MULTI_MAX];
    if (!mcol_dot_last(nk, k, R, Z, S, mask, partial, tot)) return;
    int c = threadIdx.x;
    if (c < k && mcg_live(S, mask, c)) kr_cg_dev_update(&S[c], tot[c], S[c].rr);
}

/* P = one Zk + beta P, one = 1.0 as in k_cg_direction */
__global__ void k_mcg_direction(int64_t nk, int k, double one,
                                const double *__restrict__ Zk, double *P,
                                const kr_cg_dev *S, uint64_t mask)
{
    int j = threadIdx.x % k;
    if (!mcg_live(S, mask, j)) return;
    double b = S[j].beta;
    GRID_STRIDE(e, nk) P[e] = one * Zk[e] + b * P[e];
}

/* X += xa P (the iteration's alpha, k_mcg_alpha's; 0 for none), then
 * P = Z + beta P for the columns the update left running: x's update
 * rides on the pass that reads P anyway (mcg_step_bd). */
__global__ void k_mcg_direction_x(int64_t nk, int k,
                                  const double *__restrict__ Z,
                                  double *__restrict__ P,
                                  double *__restrict__ X, const kr_cg_dev *S,
                                  uint64_t mask)
{
    int j = threadIdx.x % k;
    if (!(mask >> j & 1)) return;
    const double xa = S[j].xa, b = S[j].beta;
    const bool live = !S[j].h.stop;
    if (xa == 0.0 && !live) return;
    GRID_STRIDE(e, nk)
    {
        const double p = P[e];
        if (xa != 0.0) X[e] += xa * p;
        if (live) P[e] = 1.0 * Z[e] + b * p;
    }
}

/* Row stride of a warp's r tile in k_mcg_update_bd: even, for the 16-byte
 * stores of the MMA's results, and not a multiple of 16 (fewer bank
 * conflicts between rows). */
#define BD_LD 18

/* A warp's shared memory in k_mcg_update_bd: M's block (kb^2 entries,
 * column-major), where z's tile goes after the product, and r's tile. */
typedef struct bd_tiles {
    double m[32 * 32];
    double r[32][BD_LD];
} bd_tiles;

/* R -= a Q, Z = M R over one block of M's rows (kb <= 32) for the live
 * columns, and their r.z and r.r added to *rz, *rr: one warp,
 * lane h KC + c on column c and rows h, h + G, ... (G = 32 / KC).
 * Z = M R is a 32 x 32 by 32 x KC product on the FP64 tensor cores, M and
 * R padded with zeros (tiles past kb skipped), from the warp's tiles in
 * shared memory. Every load of the block is issued before the first store
 * (restrict pointers), so the warp waits for memory about twice a block.
 * Done with shuffles (lane i holding M(i, j), 2 shuffles a multiply-add)
 * and loads that waited row by row, the same pass took 213 to 259 us a
 * call on an H200 for 16 columns of elasticity3d:48 (blocks of about 30
 * rows). */
template <int KC>
__device__ __forceinline__ void
mcg_block_bd(int kb, const double *__restrict__ D, bd_tiles *__restrict__ sh,
             int64_t base, int k, double a, bool live,
             const double *__restrict__ Q, double *__restrict__ R,
             double *__restrict__ Z, double *rz, double *rr)
{
    constexpr int G = 32 / KC, NT = KC / 8;
    const int lane = threadIdx.x % 32, h = lane / KC, c = lane % KC;
    double v[32], r[KC];
#pragma unroll
    for (int q = 0; q < 32; q++)
        v[q] = q * 32 + lane < kb * kb ? __ldg(D + q * 32 + lane) : 0.0;
#pragma unroll
    for (int u = 0; u < KC; u++) {
        const int64_t e = base + (int64_t)(h + G * u) * k;
        const bool on = live && h + G * u < kb;
        r[u] = on ? R[e] - a * Q[e] : 0.0;
    }
#pragma unroll
    for (int q = 0; q < 32; q++)
        sh->m[q * 32 + lane] = v[q];
#pragma unroll
    for (int u = 0; u < KC; u++) {
        const int64_t e = base + (int64_t)(h + G * u) * k;
        sh->r[h + G * u][c] = r[u];
        if (live && h + G * u < kb) {
            R[e] = r[u];
            *rr += r[u] * r[u];
        }
    }
    __syncwarp();
    const int ar = lane / 4, ac = lane % 4; /* a(ar, ac), b(ac, ar) */
    double2 acc[4][NT];
#pragma unroll
    for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
            acc[mt][nt] = make_double2(0.0, 0.0);
#pragma unroll
    for (int ks = 0; ks < 8; ks++) {
        if (ks * 4 >= kb) break;
        const int j = ks * 4 + ac;
        double b[NT];
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
            b[nt] = sh->r[j][nt * 8 + ar];
#pragma unroll
        for (int mt = 0; mt < 4; mt++) {
            if (mt * 8 >= kb) break;
            const int i = mt * 8 + ar;
            const double am = i < kb && j < kb ? sh->m[i + j * kb] : 0.0;
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
                acc[mt][nt] = mma884(am, b[nt], acc[mt][nt]);
        }
    }
    __syncwarp(); /* m is read: z's tile goes there */
    double(*sz)[BD_LD] = (double(*)[BD_LD])sh->m;
#pragma unroll
    for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
            *(double2 *)&sz[mt * 8 + ar][nt * 8 + 2 * ac] = acc[mt][nt];
    __syncwarp();
#pragma unroll
    for (int u = 0; u < KC; u++) {
        const int i = h + G * u;
        if (!live || i >= kb) continue;
        const double z = sz[i][c];
        Z[base + (int64_t)i * k] = z;
        *rz += r[u] * z;
    }
    __syncwarp(); /* the tiles are read */
}

/* Threads a block of k_mcg_update_bd: 2 warps, about 25 KB of shared
 * memory. */
#define BD_THREADS 64

/* mcg_block_bd over M's blocks, a warp per block; then the columns'
 * sums, and kr_cg_dev_update in the last block to finish. */
template <int KC>
__global__ void __launch_bounds__(BD_THREADS, 6)
    k_mcg_update_bd(kr_blockdiag M, int k, const double *__restrict__ Q,
                    double *__restrict__ R, double *__restrict__ Z,
                    kr_cg_dev *S, uint64_t mask, double *partial)
{
    __shared__ double sums[2][BD_THREADS];
    __shared__ double tot[2 * KR_MULTI_MAX];
    __shared__ __align__(16) bd_tiles tiles[BD_THREADS / 32];
    const int c = threadIdx.x % KC;
    const bool live = c < k && mcg_live(S, mask, c);
    const double a = live ? S[c].alpha : 0.0;
    double rz = 0.0, rr = 0.0;
    const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    for (int64_t b = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
         b < M.nb; b += warps) {
        const int32_t s = M.starts[b];
        mcg_block_bd<KC>(M.starts[b + 1] - s, M.inv + M.offs[b],
                         &tiles[threadIdx.x / 32], (int64_t)s * k + c, k, a,
                         live, Q, R, Z, &rz, &rr);
    }
    sums[0][threadIdx.x] = rz;
    sums[1][threadIdx.x] = rr;
    __syncthreads();
    const int t = threadIdx.x;
    if (t < 2 * k) {
        double sum = 0.0;
        for (int i = t % k; i < (int)blockDim.x; i += KC)
            sum += sums[t / k][i];
        partial[(size_t)t * gridDim.x + blockIdx.x] = sum;
    }
    if (!last_block(&S[0].h.ticket)) return;
    mcol_totals(2 * k, partial, tot);
    if (t < k && mcg_live(S, mask, t))
        kr_cg_dev_update(&S[t], tot[t], tot[k + t]);
}

static kr_status mcg_k_ok(kr_ctx *ctx, int k, const char *op)
{
    if (k >= 1 && k <= KR_MULTI_MAX) return KR_OK;
    return kr_fail(ctx, KR_ERR_ARG, "%s: k = %d outside 1..%d", op, k,
                   KR_MULTI_MAX);
}

static kr_status launch_mcg_alpha(kr_ctx *ctx, int64_t nk, int k,
                                  const double *P, const double *Q,
                                  kr_cg_dev *S, uint64_t mask)
{
    kr_cuda_state *st = kr_cuda(ctx);
    k_mcg_alpha<<<mdev_grid(ctx, nk, k, 1), mdev_block(k), 0, st->stream>>>(
        nk, k, P, Q, S, mask, st->d_scratch + MSCR_PARTIAL);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* k_mcg_update; keep: r.r kept for k_mcg_rz (d NULL: z not written) */
static kr_status launch_mcg_update(kr_ctx *ctx, int64_t nk, int k,
                                   const double *P, const double *Q, double *X,
                                   double *R, const double *d, double *Z,
                                   kr_cg_dev *S, uint64_t mask, int keep)
{
    kr_cuda_state *st = kr_cuda(ctx);
    k_mcg_update<<<mdev_grid(ctx, nk, k, 2), mdev_block(k), 0, st->stream>>>(
        nk, k, P, Q, X, R, d, Z, S, mask, st->d_scratch + MSCR_PARTIAL, keep);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

static kr_status launch_mcg_direction(kr_ctx *ctx, int64_t nk, int k,
                                      const double *Zk, double *P,
                                      const kr_cg_dev *S, uint64_t mask)
{
    int bs = mdev_block(k);
    k_mcg_direction<<<kr_grid(nk, bs), bs, 0, kr_cuda(ctx)->stream>>>(
        nk, k, 1.0, Zk, P, S, mask);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* P = Zk + beta P, X += xa P in one pass (k_mcg_direction_x) */
static kr_status launch_mcg_direction_x(kr_ctx *ctx, int64_t nk, int k,
                                        const double *Zk, double *P, double *X,
                                        const kr_cg_dev *S, uint64_t mask)
{
    int bs = mdev_block(k);
    k_mcg_direction_x<<<kr_grid(nk, bs), bs, 0, kr_cuda(ctx)->stream>>>(
        nk, k, Zk, P, X, S, mask);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* Three launches, as cu_cg_step's, with x's update in the direction's
 * pass (it reads p anyway). */
static kr_status cu_mcg_step(kr_ctx *ctx, int32_t n, int k, double *P,
                             const double *Q, double *X, double *R,
                             const double *d, double *Z, const double *Zk,
                             kr_cg_dev *S, uint64_t mask)
{
    KR_TRY(mcg_k_ok(ctx, k, "mcg_step"));
    int64_t nk = (int64_t)n * k;
    KR_TRY(launch_mcg_alpha(ctx, nk, k, P, Q, S, mask));
    KR_TRY(launch_mcg_update(ctx, nk, k, P, Q, NULL, R, d, Z, S, mask, 0));
    return launch_mcg_direction_x(ctx, nk, k, Zk, P, X, S, mask);
}

/* mcg_step's first two launches, r.r kept */
static kr_status cu_mcg_step_a(kr_ctx *ctx, int32_t n, int k, const double *P,
                               const double *Q, double *X, double *R,
                               kr_cg_dev *S, uint64_t mask)
{
    KR_TRY(mcg_k_ok(ctx, k, "mcg_step_a"));
    int64_t nk = (int64_t)n * k;
    KR_TRY(launch_mcg_alpha(ctx, nk, k, P, Q, S, mask));
    return launch_mcg_update(ctx, nk, k, P, Q, X, R, NULL, NULL, S, mask, 1);
}

/* r.z and the columns' update, then the direction */
static kr_status cu_mcg_step_b(kr_ctx *ctx, int32_t n, int k, double *P,
                               const double *R, const double *Z, kr_cg_dev *S,
                               uint64_t mask)
{
    KR_TRY(mcg_k_ok(ctx, k, "mcg_step_b"));
    kr_cuda_state *st = kr_cuda(ctx);
    int64_t nk = (int64_t)n * k;
    k_mcg_rz<<<mdev_grid(ctx, nk, k, 1), mdev_block(k), 0, st->stream>>>(
        nk, k, R, Z, S, mask, st->d_scratch + MSCR_PARTIAL);
    KR_LAUNCH_CHECK(ctx);
    return launch_mcg_direction(ctx, nk, k, Z, P, S, mask);
}

/* k_mcg_update_bd for KC >= k columns: as many blocks as are resident at
 * once (one more wave of a few blocks had the time at 205 us, not 158),
 * within the scratch's room for 2k sums a block. */
template <int KC>
static void launch_mcg_update_bd(kr_ctx *ctx, const kr_blockdiag *M, int k,
                                 const double *Q, double *R, double *Z,
                                 kr_cg_dev *S, uint64_t mask)
{
    kr_cuda_state *st = kr_cuda(ctx);
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, k_mcg_update_bd<KC>, BD_THREADS, 0) != cudaSuccess ||
        per_sm < 1)
        per_sm = 1;
    int64_t nb = kr_grid((int64_t)M->nb * 32, BD_THREADS);
    int64_t cap = (int64_t)per_sm * st->sm_count,
            room = (MSCR_COEF - MSCR_PARTIAL) / (2 * k);
    if (nb > cap) nb = cap;
    if (nb > room) nb = room;
    k_mcg_update_bd<KC><<<(int)nb, BD_THREADS, 0, st->stream>>>(
        *M, k, Q, R, Z, S, mask, st->d_scratch + MSCR_PARTIAL);
}

static kr_status cu_mcg_step_bd(kr_ctx *ctx, int32_t n, int k, double *P,
                                const double *Q, double *X, double *R,
                                const kr_blockdiag *M, double *Z, kr_cg_dev *S,
                                uint64_t mask)
{
    if (k < 1 || k > KR_MCG_BD_MAX || M->max_k > 32 || M->nb < 1)
        return kr_fail(ctx, KR_ERR_ARG,
                       "mcg_step_bd: k = %d (1..%d), blocks %d of up to %d "
                       "rows (1..32)",
                       k, KR_MCG_BD_MAX, M->nb, M->max_k);
    int64_t nk = (int64_t)n * k;
    KR_TRY(launch_mcg_alpha(ctx, nk, k, P, Q, S, mask));
    if (k > 8)
        launch_mcg_update_bd<16>(ctx, M, k, Q, R, Z, S, mask);
    else
        launch_mcg_update_bd<8>(ctx, M, k, Q, R, Z, S, mask);
    KR_LAUNCH_CHECK(ctx);
    return launch_mcg_direction_x(ctx, nk, k, Z, P, X, S, mask);
}
/* ==== end of the several-right-hand-sides device-scalar ops ==== */

static kr_backend_ops make_ops(void)
{
    kr_backend_ops o;
    memset(&o, 0, sizeof o);
    o.name = "cuda";
    o.alloc = cu_alloc;
    o.release = cu_release;
    o.upload = cu_upload;
    o.download = cu_download;
    o.copy = cu_copy;
    o.fill = cu_fill;
    o.axpby = cu_axpby;
    o.axpbypcz = cu_axpbypcz;
    o.axpy2 = cu_axpy2;
    o.pointwise_mult = cu_pointwise;
    o.dots = cu_dots;
    o.gemv_t = cu_gemv_t;
    o.gemv_n = cu_gemv_n;
    o.xr_update = cu_xr_update;
    o.axpy_dots = cu_axpy_dots;
    o.cg_alpha = cu_cg_alpha;
    o.cg_update = cu_cg_update;
    o.cg_direction = cu_cg_direction;
    o.cg_update_keep = cu_cg_update_keep;
    o.cg_persist = kr_cuda_cg_persist;
    o.gm_persist = kr_cuda_gm_persist;
    o.residual_norms = kr_cuda_residual_norms;
    o.idr_persist = kr_cuda_idr_persist;
    o.cg_step = cu_cg_step;
    o.gemv_t_dev = cu_gemv_t_dev1;
    o.gemv_n_dev = cu_gemv_n_dev;
    o.gm_step = cu_gm_step;
    o.gemv_nt_dev = cu_gemv_nt_dev;
    o.gm_update_step = cu_gm_update_step;
    o.gm_scale = cu_gm_scale;
    o.bcgs_alpha = cu_bcgs_alpha;
    o.bcgs_s = cu_bcgs_s;
    o.bcgs_omega = cu_bcgs_omega;
    o.bcgs_update = cu_bcgs_update;
    o.bcgs_direction = cu_bcgs_direction;
    o.bcgs_persist = kr_cuda_bcgs_persist;
    /* IDR(s) */
    o.idr_v = cu_idr_v;
    o.idr_u = cu_idr_u;
    o.idr_vu = cu_idr_vu;
    o.idr_h = cu_idr_h;
    o.idr_orth = cu_idr_orth;
    o.idr_omega = cu_idr_omega;
    o.idr_update = cu_idr_update;
    o.idr_update_vu = cu_idr_update_vu;
    o.replay = cu_replay;
    o.replay_free = cu_replay_free;
    o.fill_random = cu_fill_random;
    o.time_runs = cu_time_runs;
    /* several right-hand sides (issue 19) */
    o.mdots = cu_mdots;
    o.maxpby = cu_maxpby;
    o.maxpbypcz = cu_maxpbypcz;
    o.mxr_update = cu_mxr_update;
    o.maxpy_dots = cu_maxpy_dots;
    o.mgemv_t = cu_mgemv_t;
    o.mgemv_n = cu_mgemv_n;
    o.mpointwise = cu_mpointwise;
    o.mcolumn = cu_mcolumn;
    o.mcg_step = cu_mcg_step;
    o.mcg_step_a = cu_mcg_step_a;
    o.mcg_step_b = cu_mcg_step_b;
    o.mcg_step_bd = cu_mcg_step_bd;
    return o;
}

static const kr_backend_ops cuda_ops = make_ops();

/* ------------------------------------------------------------ set-up */

static kr_status probe_device(kr_ctx *ctx, cudaDeviceProp *prop)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        /* without a driver CUDA says "insufficient driver": say it plainly */
        const char *why =
            e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice
                ? "no NVIDIA GPU or driver found"
                : "CUDA cannot use the GPU";
        return kr_fail(ctx, KR_ERR_DEVICE, "%s (%s)", why,
                       cudaGetErrorString(e));
    }
    if (count == 0) return kr_fail(ctx, KR_ERR_DEVICE, "CUDA found no GPU");
    KR_CUDA_TRY(ctx, cudaGetDeviceProperties(prop, 0));
    if (prop->major < 9)
        return kr_fail(ctx, KR_ERR_DEVICE,
                       "GPU %s has compute capability %d.%d; this build "
                       "targets 9.0 and newer",
                       prop->name, prop->major, prop->minor);
    KR_CUDA_TRY(ctx, cudaSetDevice(0));
    KR_CUDA_TRY(ctx, cudaFree(0)); /* creates the CUDA context now */
    return KR_OK;
}

/* The context's memory pool. Allocations are stream-ordered on the one
 * stream and freed memory stays reserved up to KR_CUDA_POOL_KEEP bytes, so
 * that a setup or a solve that allocates and frees (a preconditioner
 * build, say) costs about a microsecond per allocation after the first
 * time, instead of a cudaMalloc and a synchronising cudaFree. */
#define KR_CUDA_POOL_KEEP ((uint64_t)1 << 30)

static kr_status create_pool(kr_ctx *ctx, kr_cuda_state *st)
{
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = st->device;
    KR_CUDA_TRY(ctx, cudaMemPoolCreate(&st->pool, &props));
    uint64_t keep = KR_CUDA_POOL_KEEP;
    KR_CUDA_TRY(ctx, cudaMemPoolSetAttribute(
                         st->pool, cudaMemPoolAttrReleaseThreshold, &keep));
    return KR_OK;
}

static kr_status create_handles(kr_ctx *ctx, kr_cuda_state *st)
{
    KR_CUDA_TRY(ctx,
                cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
    KR_CUSPARSE_TRY(ctx, cusparseCreate(&st->cusparse));
    KR_CUSPARSE_TRY(ctx, cusparseSetStream(st->cusparse, st->stream));
    KR_TRY(create_pool(ctx, st));
    KR_TRY(cu_alloc(ctx, (void **)&st->d_scratch,
                    KR_CUDA_SCRATCH * sizeof(double)));
    /* the tail holds the ticket of k_gm_pass's column passes: zero */
    KR_CUDA_TRY(ctx,
                cudaMemsetAsync(st->d_scratch, 0,
                                KR_CUDA_SCRATCH * sizeof(double), st->stream));
    KR_CUDA_TRY(ctx, cudaMallocHost((void **)&st->h_scratch,
                                    KR_CUDA_SCRATCH * sizeof(double)));
    return KR_OK;
}

/* CUDA loads a kernel at its first launch (lazy loading: about 0.4 ms a
 * kernel in a fresh process, H100). Asking for each kernel's attributes
 * loads it, so the context pays that once at its creation instead of a
 * solve's setup or first iterations; KRYLOV_WARMUP=0 skips it. A kernel
 * that fails to load here is no error: it loads at its first launch (and
 * fails there, with a status). The list is this file's kernels; the
 * formats' and preconditioners' still load at their first use. */
static void warm_one(const void *kernel)
{
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess)
        cudaGetLastError(); /* clear it: the launch will tell */
}

static void warm_kernels(kr_ctx *ctx)
{
    if (kr_env_off("KRYLOV_WARMUP")) return;
    const void *const kernels[] = {
        (const void *)k_fill,
        (const void *)k_axpby,
        (const void *)k_axpbypcz,
        (const void *)k_axpy2,
        (const void *)k_pointwise,
        (const void *)k_fill_random,
        (const void *)k_dots_partial<1>,
        (const void *)k_dots_partial<2>,
        (const void *)k_dots_partial<3>,
        (const void *)k_dots_partial<4>,
        (const void *)k_dots_final,
        (const void *)k_xr_update,
        (const void *)k_axpy_dots,
        (const void *)k_cg_alpha,
        (const void *)k_cg_update,
        (const void *)k_cg_direction,
        (const void *)k_bcgs_alpha,
        (const void *)k_bcgs_s,
        (const void *)k_bcgs_omega,
        (const void *)k_bcgs_update,
        (const void *)k_bcgs_direction,
        (const void *)k_idr_v,
        (const void *)k_idr_u,
        (const void *)k_idr_vu,
        (const void *)k_idr_h,
        (const void *)k_idr_orth,
        (const void *)k_idr_omega,
        (const void *)k_idr_update,
        (const void *)k_idr_update_vu,
        (const void *)k_gemv_t_partial,
        (const void *)k_gemv_n,
        (const void *)k_gemv_t_dev,
        (const void *)k_gemv_n_dev,
        (const void *)k_gm_step,
        (const void *)k_gm_scale,
        (const void *)k_gm_pass<0, GM_COLS>,
        (const void *)k_gm_pass<1, GM_COLS>,
        (const void *)k_gm_pass<1, GM_NORM>,
    };
    const void *persist[32];
    int npersist = kr_cuda_persist_kernels(persist, 32);
    double t0 = kr_wtime();
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        warm_one(kernels[i]);
    for (int i = 0; i < npersist; i++)
        warm_one(persist[i]);
    ctx->warmup_s = kr_wtime() - t0;
}

void kr_cuda_backend_fini(kr_ctx *ctx)
{
    kr_cuda_state *st = kr_cuda(ctx);
    if (!st) return;
    if (st->stream) cudaStreamSynchronize(st->stream);
    if (st->cusparse) cusparseDestroy(st->cusparse);
    if (st->d_scratch) cudaFreeAsync(st->d_scratch, st->stream);
    if (st->h_scratch) cudaFreeHost(st->h_scratch);
    if (st->stream) cudaStreamSynchronize(st->stream);
    for (int b = 0; b < 2; b++) {
        if (st->stage_done[b]) cudaEventDestroy(st->stage_done[b]);
        if (st->stage[b]) cudaFreeHost(st->stage[b]);
    }
    /* a pool with live allocations goes once they are freed */
    if (st->pool) cudaMemPoolDestroy(st->pool);
    if (st->stream) cudaStreamDestroy(st->stream);
    free(st->allocs);
    free(st);
    ctx->backend = NULL;
    ctx->device_bytes = 0;
}

kr_status kr_cuda_backend_init(kr_ctx *ctx)
{
    cudaDeviceProp prop;
    KR_TRY(probe_device(ctx, &prop));
    kr_cuda_state *st = (kr_cuda_state *)calloc(1, sizeof *st);
    if (!st) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    ctx->backend = st;
    st->sm_count = prop.multiProcessorCount;
    st->pdl = prop.major >= 9 && !kr_env_off("KRYLOV_PDL");
    kr_status s = create_handles(ctx, st);
    if (s != KR_OK) {
        kr_cuda_backend_fini(ctx);
        return s;
    }
    ctx->device = KR_DEVICE_CUDA;
    ctx->ops = &cuda_ops;
    warm_kernels(ctx);
    int driver = 0;
    cudaDriverGetVersion(&driver);
    snprintf(ctx->device_name, sizeof ctx->device_name,
             "%s (sm_%d%d, CUDA driver %d.%d)", prop.name, prop.major,
             prop.minor, driver / 1000, driver % 1000 / 10);
    return KR_OK;
}
