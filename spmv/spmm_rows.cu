/* SpMM over ELLPACK-like rows (spmv/spmm_rows.h), output-stationary after
 * Mehrabi et al. and Huang et al.: each row's results stay in registers
 * until written once.
 *   k <= 32 (64 when k is even): a sub-warp of G lanes per row, G the
 *     power of two covering k (or k/2), each lane one column of Y, or two
 *     with 16-byte loads of X's row (double2) when k is even and X and Y
 *     are 16-byte aligned; G rows' loads of A are broadcasts within the
 *     sub-warp, X's row is read contiguously.
 *   larger k: a warp per row; the row's entries are staged 32 at a time
 *     in shared memory (one coalesced load per lane) and reused for every
 *     32*TILE columns, TILE accumulators per lane.
 * Every sum runs over j = 0, 1, ... like the CPU kernels. */
#include "core/cuda.h"
#include "spmv/spmm_rows.h"

#define SPMM_BLOCK 256
#define SPMM_WARPS (SPMM_BLOCK / 32)
#define TILE 4 /* accumulators per lane in the staged kernel */

struct row_span {
    int64_t base, stride;
    int32_t len, out;
};

__device__ __forceinline__ row_span span_of(const kr_ell_rows &L, int64_t p)
{
    row_span s;
    s.base = L.off ? __ldg(L.off + (p >> 5)) + (p & 31) : p;
    s.stride = L.off ? 32 : L.rows;
    s.len = L.len ? __ldg(L.len + p) : L.width;
    s.out = L.out ? __ldg(L.out + p) : (int32_t)p;
    return s;
}

/* G lanes per row, V (1 or 2) columns per lane: G*V >= k. */
template <int G, int V>
__global__ void __launch_bounds__(SPMM_BLOCK)
    k_rows_sub(kr_ell_rows L, int32_t k, const double *__restrict__ X,
               double *__restrict__ Y)
{
    const int64_t t = (int64_t)blockIdx.x * SPMM_BLOCK + threadIdx.x;
    const int64_t p = t / G;
    const int32_t c = (int32_t)(t % G) * V;
    if (p >= L.rows || c >= k) return; /* no shuffles: lanes may leave */
    const row_span s = span_of(L, p);
    double a0 = 0.0, a1 = 0.0;
    for (int32_t j = 0; j < s.len; j++) {
        const int64_t e = s.base + j * s.stride;
        const double v = __ldg(L.val + e);
        const double *x = X + (int64_t)__ldg(L.col + e) * k + c;
        if (V == 2) {
            const double2 xv = __ldg((const double2 *)x);
            a0 += v * xv.x;
            a1 += v * xv.y;
        } else {
            a0 += v * __ldg(x);
        }
    }
    double *y = Y + (int64_t)s.out * k + c;
    if (V == 2)
        *(double2 *)y = make_double2(a0, a1);
    else
        *y = a0;
}

/* A warp per row, entries staged in shared memory 32 at a time. */
__global__ void __launch_bounds__(SPMM_BLOCK)
    k_rows_staged(kr_ell_rows L, int32_t k, const double *__restrict__ X,
                  double *__restrict__ Y)
{
    __shared__ double sval[SPMM_WARPS][32];
    __shared__ int32_t scol[SPMM_WARPS][32];
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t p = ((int64_t)blockIdx.x * SPMM_BLOCK + threadIdx.x) >> 5;
    if (p >= L.rows) return; /* whole warps leave together */
    const row_span s = span_of(L, p);
    for (int32_t c0 = 0; c0 < k; c0 += 32 * TILE) {
        double acc[TILE];
#pragma unroll
        for (int q = 0; q < TILE; q++)
            acc[q] = 0.0;
        for (int32_t j0 = 0; j0 < s.len; j0 += 32) {
            const int32_t m = min(32, s.len - j0);
            if (lane < m) {
                const int64_t e = s.base + (int64_t)(j0 + lane) * s.stride;
                sval[w][lane] = __ldg(L.val + e);
                scol[w][lane] = __ldg(L.col + e);
            }
            __syncwarp();
            for (int32_t jj = 0; jj < m; jj++) {
                const double v = sval[w][jj];
                const double *x = X + (int64_t)scol[w][jj] * k;
#pragma unroll
                for (int q = 0; q < TILE; q++) {
                    const int32_t c = c0 + q * 32 + lane;
                    if (c < k) acc[q] += v * __ldg(x + c);
                }
            }
            __syncwarp(); /* the stage is read before it is refilled */
        }
        double *y = Y + (int64_t)s.out * k;
#pragma unroll
        for (int q = 0; q < TILE; q++) {
            const int32_t c = c0 + q * 32 + lane;
            if (c < k) y[c] = acc[q];
        }
    }
}

template <int G, int V>
static kr_status launch_sub(kr_ctx *ctx, const kr_ell_rows *L, int32_t k,
                            const double *X, double *Y)
{
    const int64_t threads = (int64_t)L->rows * G;
    const int64_t blocks = (threads + SPMM_BLOCK - 1) / SPMM_BLOCK;
    k_rows_sub<G, V><<<(unsigned)blocks, SPMM_BLOCK, 0, kr_cuda(ctx)->stream>>>(
        *L, k, X, Y);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

template <int V>
static kr_status launch_lanes(kr_ctx *ctx, const kr_ell_rows *L, int32_t k,
                              const double *X, double *Y)
{
    const int32_t need = (k + V - 1) / V; /* lanes per row */
    if (need <= 1) return launch_sub<1, V>(ctx, L, k, X, Y);
    if (need <= 2) return launch_sub<2, V>(ctx, L, k, X, Y);
    if (need <= 4) return launch_sub<4, V>(ctx, L, k, X, Y);
    if (need <= 8) return launch_sub<8, V>(ctx, L, k, X, Y);
    if (need <= 16) return launch_sub<16, V>(ctx, L, k, X, Y);
    return launch_sub<32, V>(ctx, L, k, X, Y);
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

extern "C" kr_status kr_ell_rows_spmm(kr_ctx *ctx, const kr_ell_rows *L,
                                      int32_t k, const double *X, double *Y)
{
    if (L->rows == 0 || k < 1) return KR_OK;
    const bool pairs = k % 2 == 0 && aligned16(X) && aligned16(Y);
    if (pairs && k <= 64) return launch_lanes<2>(ctx, L, k, X, Y);
    if (k <= 32) return launch_lanes<1>(ctx, L, k, X, Y);
    const int64_t blocks = ((int64_t)L->rows + SPMM_WARPS - 1) / SPMM_WARPS;
    k_rows_staged<<<(unsigned)blocks, SPMM_BLOCK, 0, kr_cuda(ctx)->stream>>>(
        *L, k, X, Y);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}
