/* SpMM over ELLPACK-like rows (spmv/spmm_rows.h), output-stationary after
 * Mehrabi et al. and Huang et al.: each row's results stay in registers
 * until written once.
 *   k <= 32 (64 when k is even): a sub-warp of G lanes per task, G the
 *     power of two covering k (or k/2, k/4), each lane one column of Y,
 *     or two or four with 16-byte loads of X's row (double2) when k is
 *     even (a multiple of 4) and X and Y are 16-byte aligned; G rows'
 *     loads of A are broadcasts within the sub-warp, X's row is read
 *     contiguously.
 *   larger k: a warp per task; the row's entries are staged 32 at a time
 *     in shared memory (one coalesced load per lane) and reused for every
 *     32*TILE columns, TILE accumulators per lane.
 * A task is an ordinary position's whole row, written to Y, or one piece
 * of a split (long) row, written to its row of the work array; the pieces
 * come first in the grid, and k_rows_finish adds them per row in piece
 * order. Every sum runs over j = j0, j0 + 1, ... like the CPU kernels. */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/spmm_rows.h"

#include <stdlib.h>
#include <string.h>

#define SPMM_BLOCK 256
#define SPMM_WARPS (SPMM_BLOCK / 32)
#define TILE 4 /* accumulators per lane in the staged kernel */

/* The kernels' view: the layout, and the split when this SpMM uses it. */
struct spmm_args {
    kr_ell_rows L;
    int64_t ntasks;       /* npieces + rows - nsplit                        */
    int32_t nsplit;       /* 0 when unsplit                                 */
    int32_t npieces;      /* 0 when unsplit                                 */
    const int32_t *piece; /* 3 per piece: (position, first j, end j) */
    const int32_t *piece_start;
    double *part; /* npieces x k */
};

/* One task: entries j0 <= j < j1 of a position, summed into row y. */
struct row_task {
    int64_t base, stride;
    int32_t j0, j1;
    double *y;
};

__device__ __forceinline__ int32_t len_of(const kr_ell_rows &L, int64_t p)
{
    return L.len ? __ldg(L.len + p) : L.width;
}

__device__ __forceinline__ int32_t out_of(const kr_ell_rows &L, int64_t p)
{
    return L.out ? __ldg(L.out + p) : (int32_t)p;
}

__device__ __forceinline__ row_task task_of(const spmm_args &a, int64_t q,
                                            int32_t k, double *Y)
{
    row_task t;
    int64_t p;
    const bool piece = q < a.npieces;
    if (piece) {
        p = __ldg(a.piece + 3 * q);
        t.j0 = __ldg(a.piece + 3 * q + 1);
        t.j1 = __ldg(a.piece + 3 * q + 2);
        t.y = a.part + q * k;
    } else {
        p = a.nsplit + (q - a.npieces);
        t.j0 = 0;
        t.j1 = len_of(a.L, p);
        t.y = Y + (int64_t)out_of(a.L, p) * k;
    }
    t.base = a.L.off ? __ldg(a.L.off + (p >> 5)) + (p & 31) : p;
    t.stride = a.L.off ? 32 : a.L.rows;
    return t;
}

/* G lanes per task, V (1 or 2) columns per lane: G*V >= k. */
template <int G, int V>
__global__ void __launch_bounds__(SPMM_BLOCK)
    k_rows_sub(spmm_args a, int32_t k, const double *__restrict__ X,
               double *__restrict__ Y)
{
    const int64_t t = (int64_t)blockIdx.x * SPMM_BLOCK + threadIdx.x;
    const int64_t q = t / G;
    const int32_t c = (int32_t)(t % G) * V;
    if (q >= a.ntasks || c >= k) return; /* no shuffles: lanes may leave */
    const row_task r = task_of(a, q, k, Y);
    double a0 = 0.0, a1 = 0.0;
    for (int32_t j = r.j0; j < r.j1; j++) {
        const int64_t e = r.base + j * r.stride;
        const double v = __ldg(a.L.val + e);
        const double *x = X + (int64_t)__ldg(a.L.col + e) * k + c;
        if (V == 2) {
            const double2 xv = __ldg((const double2 *)x);
            a0 += v * xv.x;
            a1 += v * xv.y;
        } else {
            a0 += v * __ldg(x);
        }
    }
    double *y = r.y + c;
    if (V == 2)
        *(double2 *)y = make_double2(a0, a1);
    else
        *y = a0;
}

/* 4 columns per lane (G lanes per task, 4G >= k, k a multiple of 4): two
 * 16-byte loads of X's row per entry, and the loop over the row's entries
 * unrolled, so that several entries' loads of A and of X's rows are in
 * flight together. (k_rows_sub unrolled by 4 was slower on the
 * elasticity3d:48 SpMM, 152 us against 130, and by 1 up to 1.9x slower on
 * the small shared matrices; H200.) */
template <int G>
__global__ void __launch_bounds__(SPMM_BLOCK)
    k_rows_quad(spmm_args a, int32_t k, const double *__restrict__ X,
                double *__restrict__ Y)
{
    const int64_t t = (int64_t)blockIdx.x * SPMM_BLOCK + threadIdx.x;
    const int64_t q = t / G;
    const int32_t c = (int32_t)(t % G) * 4;
    if (q >= a.ntasks || c >= k) return; /* no shuffles: lanes may leave */
    const row_task r = task_of(a, q, k, Y);
    double acc[4];
#pragma unroll
    for (int v = 0; v < 4; v++)
        acc[v] = 0.0;
#pragma unroll 4
    for (int32_t j = r.j0; j < r.j1; j++) {
        const int64_t e = r.base + j * r.stride;
        const double v = __ldg(a.L.val + e);
        const double *x = X + (int64_t)__ldg(a.L.col + e) * k + c;
#pragma unroll
        for (int h = 0; h < 4; h += 2) {
            const double2 xv = __ldg((const double2 *)x + h / 2);
            acc[h] += v * xv.x;
            acc[h + 1] += v * xv.y;
        }
    }
    double *y = r.y + c;
#pragma unroll
    for (int h = 0; h < 4; h += 2)
        ((double2 *)y)[h / 2] = make_double2(acc[h], acc[h + 1]);
}

/* A warp per task, entries staged in shared memory 32 at a time. */
__global__ void __launch_bounds__(SPMM_BLOCK)
    k_rows_staged(spmm_args a, int32_t k, const double *__restrict__ X,
                  double *__restrict__ Y)
{
    __shared__ double sval[SPMM_WARPS][32];
    __shared__ int32_t scol[SPMM_WARPS][32];
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t q = ((int64_t)blockIdx.x * SPMM_BLOCK + threadIdx.x) >> 5;
    if (q >= a.ntasks) return; /* whole warps leave together */
    const row_task r = task_of(a, q, k, Y);
    for (int32_t c0 = 0; c0 < k; c0 += 32 * TILE) {
        double acc[TILE];
#pragma unroll
        for (int i = 0; i < TILE; i++)
            acc[i] = 0.0;
        for (int32_t j0 = r.j0; j0 < r.j1; j0 += 32) {
            const int32_t m = min(32, r.j1 - j0);
            if (lane < m) {
                const int64_t e = r.base + (int64_t)(j0 + lane) * r.stride;
                sval[w][lane] = __ldg(a.L.val + e);
                scol[w][lane] = __ldg(a.L.col + e);
            }
            __syncwarp();
            for (int32_t jj = 0; jj < m; jj++) {
                const double v = sval[w][jj];
                const double *x = X + (int64_t)scol[w][jj] * k;
#pragma unroll
                for (int i = 0; i < TILE; i++) {
                    const int32_t c = c0 + i * 32 + lane;
                    if (c < k) acc[i] += v * __ldg(x + c);
                }
            }
            __syncwarp(); /* the stage is read before it is refilled */
        }
#pragma unroll
        for (int i = 0; i < TILE; i++) {
            const int32_t c = c0 + i * 32 + lane;
            if (c < k) r.y[c] = acc[i];
        }
    }
}

/* Y's rows of the split positions: each entry the sum of its pieces'
 * partial entries in piece order. A thread per (position, column). */
__global__ void __launch_bounds__(SPMM_BLOCK)
    k_rows_finish(spmm_args a, int32_t k, double *__restrict__ Y)
{
    const int64_t t = (int64_t)blockIdx.x * SPMM_BLOCK + threadIdx.x;
    if (t >= (int64_t)a.nsplit * k) return;
    const int64_t p = t / k;
    const int32_t c = (int32_t)(t % k);
    double s = 0.0;
    for (int32_t q = a.piece_start[p]; q < a.piece_start[p + 1]; q++)
        s += a.part[(int64_t)q * k + c];
    Y[(int64_t)out_of(a.L, p) * k + c] = s;
}

template <int G, int V>
static kr_status launch_sub(kr_ctx *ctx, const spmm_args *a, int32_t k,
                            const double *X, double *Y)
{
    const int64_t threads = a->ntasks * G;
    const int64_t blocks = (threads + SPMM_BLOCK - 1) / SPMM_BLOCK;
    cudaStream_t st = kr_cuda(ctx)->stream;
    if constexpr (V == 4)
        k_rows_quad<G><<<(unsigned)blocks, SPMM_BLOCK, 0, st>>>(*a, k, X, Y);
    else
        k_rows_sub<G, V><<<(unsigned)blocks, SPMM_BLOCK, 0, st>>>(*a, k, X, Y);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

template <int V>
static kr_status launch_lanes(kr_ctx *ctx, const spmm_args *a, int32_t k,
                              const double *X, double *Y)
{
    const int32_t need = (k + V - 1) / V; /* lanes per task */
    if (need <= 1) return launch_sub<1, V>(ctx, a, k, X, Y);
    if (need <= 2) return launch_sub<2, V>(ctx, a, k, X, Y);
    if (need <= 4) return launch_sub<4, V>(ctx, a, k, X, Y);
    if (need <= 8) return launch_sub<8, V>(ctx, a, k, X, Y);
    if (need <= 16) return launch_sub<16, V>(ctx, a, k, X, Y);
    return launch_sub<32, V>(ctx, a, k, X, Y);
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* 4 columns a lane (k a multiple of 4): twice the rows a warp, whose
 * shared columns then come in one load, but half the threads. Where those
 * still fill the GPU (2048 threads a multiprocessor) that won, 1.1x to
 * 1.65x on the large generated matrices; below it lost, 0.75x to 0.9x on
 * the shared ones of 5,000 to 18,000 rows (H200, k = 4..32).
 * KRYLOV_SPMM_QUADS=1 always, =0 never (2 columns a lane), to compare and
 * to test. */
static bool quads(kr_ctx *ctx, int64_t ntasks, int32_t k)
{
    const char *env = getenv("KRYLOV_SPMM_QUADS");
    if (env && !strcmp(env, "1")) return true;
    if (env && !strcmp(env, "0")) return false;
    return ntasks * (k / 4) >= (int64_t)kr_cuda(ctx)->sm_count * 2048;
}

/* Every task of a: pieces (when split) and ordinary positions. */
static kr_status launch_tasks(kr_ctx *ctx, const spmm_args *a, int32_t k,
                              const double *X, double *Y)
{
    const bool pairs = k % 2 == 0 && aligned16(X) && aligned16(Y) &&
                       aligned16(a->part); /* part is NULL or pool-aligned */
    if (pairs && k % 4 == 0 && k <= 64 && quads(ctx, a->ntasks, k))
        return launch_lanes<4>(ctx, a, k, X, Y);
    if (pairs && k <= 64) return launch_lanes<2>(ctx, a, k, X, Y);
    if (k <= 32) return launch_lanes<1>(ctx, a, k, X, Y);
    const int64_t blocks = (a->ntasks + SPMM_WARPS - 1) / SPMM_WARPS;
    k_rows_staged<<<(unsigned)blocks, SPMM_BLOCK, 0, kr_cuda(ctx)->stream>>>(
        *a, k, X, Y);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* Room in S's work array for k columns; it only grows. */
static kr_status reserve_part(kr_ctx *ctx, kr_ell_split *S, int32_t k)
{
    if (S->part_k >= k) return KR_OK;
    kr_dev_free(ctx, S->part); /* stream-ordered: earlier SpMMs finish */
    S->part = NULL;
    S->part_k = 0;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&S->part,
                           (size_t)S->npieces * (size_t)k * sizeof(double)));
    S->part_k = k;
    return KR_OK;
}

extern "C" kr_status kr_ell_rows_spmm(kr_ctx *ctx, const kr_ell_rows *L,
                                      int32_t k, const double *X, double *Y)
{
    if (L->rows == 0 || k < 1) return KR_OK;
    spmm_args a = {*L, L->rows, 0, 0, NULL, NULL, NULL};
    kr_ell_split *S = L->split;
    const bool split =
        S && S->npieces > 0 && k <= KR_MULTI_MAX_COLUMNS; /* part's bound */
    if (split) {
        KR_TRY(reserve_part(ctx, S, k));
        a.nsplit = S->nsplit;
        a.npieces = S->npieces;
        a.piece = S->piece;
        a.piece_start = S->piece_start;
        a.part = S->part;
        a.ntasks = (int64_t)S->npieces + L->rows - S->nsplit;
    }
    KR_TRY(launch_tasks(ctx, &a, k, X, Y));
    if (!split) return KR_OK;
    const int64_t blocks =
        ((int64_t)a.nsplit * k + SPMM_BLOCK - 1) / SPMM_BLOCK;
    k_rows_finish<<<(unsigned)blocks, SPMM_BLOCK, 0, kr_cuda(ctx)->stream>>>(
        a, k, Y);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

extern "C" void kr_ell_split_free(kr_ctx *ctx, kr_ell_split *S)
{
    kr_dev_free(ctx, S->piece);
    kr_dev_free(ctx, S->piece_start);
    kr_dev_free(ctx, S->part);
    memset(S, 0, sizeof *S);
}

extern "C" kr_status kr_ell_split_build(kr_ctx *ctx, const int32_t *len,
                                        int32_t nsplit, kr_ell_split *S)
{
    memset(S, 0, sizeof *S);
    if (nsplit == 0) return KR_OK;
    int32_t *start = NULL, *piece = NULL, count = 0;
    kr_status st = kr_ell_split_lists(ctx, len, nsplit, &start, &piece, &count);
    if (st == KR_OK)
        st = kr_dev_upload_new(ctx, piece, (size_t)count * 3 * sizeof *piece,
                               (void **)&S->piece);
    if (st == KR_OK)
        st = kr_dev_upload_new(ctx, start, ((size_t)nsplit + 1) * sizeof *start,
                               (void **)&S->piece_start);
    free(start);
    free(piece);
    if (st != KR_OK) {
        kr_ell_split_free(ctx, S);
        return st;
    }
    S->nsplit = nsplit;
    S->npieces = count;
    return KR_OK;
}
