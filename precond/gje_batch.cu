/* Batched Gauss-Jordan elimination on the GPU (Anzt, Dongarra, Flegar,
 * Quintana-Orti 2018): one block per sub-warp of p lanes, p = the next
 * power of two >= k, so a warp works on 32/p blocks at once. Lane i holds
 * row i of the block in registers for the whole elimination.
 *
 * Step c: the pivot row is the not-yet-pivoted row with the largest |t_ic|
 * (the lowest lane on ties, as the CPU reference picks the first row): a
 * shuffle max over the sub-warp, then a ballot for the lowest lane holding
 * it. The pivot lane scales its row and broadcasts it through shared memory
 * (same-address loads, no shuffles per entry); the other lanes update their
 * rows with one FMA per entry. Rows never move: the pivot order is kept in
 * shared memory and undone by the write-back, which for column-major
 * output is coalesced (the rows of one column are a permutation of
 * consecutive addresses).
 *
 * Blocks of more than 16 rows go to a blocked form of the same
 * elimination instead, one block per warp, whose updates run on the FP64
 * tensor cores (below, "blocked elimination on FP64 MMA").
 *
 * Blocks are grouped by size class (kr_gje_batch.order) so that each
 * launch's p fits its blocks; the apply runs in natural block order with
 * one p for the batch, so that r and z stream contiguously. */
#include "core/cuda.h"
#include "core/cuda_mma.cuh"
#include "precond/gje_batch.h"

#include <float.h>
#include <utility>

#define GJE_THREADS 128
/* Resident thread blocks per multiprocessor asked of the compiler, by
 * lanes per matrix block p. Measured on the H200 (scratch timings of 500k
 * blocks): p = 16 at 64 registers (8 resident) ran 9% faster than at 90
 * (5 resident); p = 32 at 128 registers (4 resident) ran 7% faster than at
 * the 148 it takes uncapped, and capping it lower spilled and ran 20-300%
 * slower; smaller p stay under 64 registers anyway. */
#define GJE_MINB(P) ((P) == 16 ? 8 : (P) == 32 ? 4 : 1)
#define FULL 0xffffffffu

/* This sub-warp's bits of a warp-wide ballot. */
template <int P>
__device__ __forceinline__ unsigned sub_bits(unsigned b, int sw)
{
    return P == 32 ? b : (b >> (sw * P)) & ((1u << P) - 1u);
}

struct block_ref {
    int32_t s, k; /* first row and size; k = 0 past the end of the range */
    int32_t b;    /* block number                                         */
    int64_t off;  /* first entry                                          */
};

/* The block of this thread's sub-warp: entry lo + t/P of order (or of the
 * natural order when order is NULL), if below hi. */
template <int P>
__device__ __forceinline__ block_ref my_block(const int32_t *starts,
                                              const int64_t *offs,
                                              const int32_t *order, int32_t lo,
                                              int32_t hi)
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t idx = lo + t / P;
    block_ref r = {0, 0, -1, 0};
    if (idx < hi) {
        r.b = order ? order[idx] : (int32_t)idx;
        r.s = starts[r.b];
        r.k = starts[r.b + 1] - r.s;
        r.off = offs[r.b];
    }
    return r;
}

/* The singularity threshold of kr_gje_threshold for a row with largest
 * entry magnitude rmax. */
__device__ __forceinline__ double threshold(int k, double rmax)
{
    return (double)k * DBL_EPSILON * rmax;
}

/* The lowest lane of the sub-warp, among the eligible ones, with the
 * largest |t| (t = t_ic; -1 if none is eligible), exactly. A non-negative
 * double orders as its bits, so 32-bit max-reductions find it: the high
 * word with the sign bit cleared (|t| without a floating-point
 * instruction), then the low word among the high word's winners.
 * Warp-wide for p = 32. For p = 16 each word takes one warp-wide reduction
 * per half (reductions masked to sub-warps serialise), and the low word's
 * two are skipped when no half has two eligible lanes sharing the largest
 * high word (a tie in exponent and 20 mantissa bits): k = 12 ran 2.26x ->
 * 2.13x the memory floor on the H200 (2026-11-23). The same skip made the
 * p = 32 MMA kernel slower (k = 24 2.65x -> 2.93x), so p = 32 always
 * reduces both words. Smaller sub-warps use a shuffle tree. */
template <int P>
__device__ __forceinline__ int pick_pivot(bool eligible, double t, int sw)
{
    const unsigned hi =
        eligible ? (unsigned)__double2hiint(t) & 0x7fffffffu : 0u;
    const unsigned lo = eligible ? (unsigned)__double2loint(t) : 0u;
    unsigned hits;
    if constexpr (P == 32) {
        const unsigned mhi = __reduce_max_sync(FULL, hi);
        const unsigned mlo = __reduce_max_sync(FULL, hi == mhi ? lo : 0u);
        hits = __ballot_sync(FULL, eligible && hi == mhi && lo == mlo);
    } else if constexpr (P == 16) {
        const unsigned h0 = __reduce_max_sync(FULL, sw ? 0u : hi);
        const unsigned h1 = __reduce_max_sync(FULL, sw ? hi : 0u);
        const bool top = eligible && hi == (sw ? h1 : h0);
        hits = __ballot_sync(FULL, top);
        if (__popc(hits & 0xffffu) > 1 || __popc(hits >> 16) > 1) {
            /* a tie in the high word; warp-uniform, as hits is */
            const unsigned l = top ? lo : 0u;
            const unsigned l0 = __reduce_max_sync(FULL, sw ? 0u : l);
            const unsigned l1 = __reduce_max_sync(FULL, sw ? l : 0u);
            hits = __ballot_sync(FULL, top && lo == (sw ? l1 : l0));
        }
    } else {
        const double v = eligible ? fabs(t) : -1.0;
        double m = v;
#pragma unroll
        for (int o = P / 2; o > 0; o >>= 1)
            m = fmax(m, __shfl_xor_sync(FULL, m, o));
        hits = __ballot_sync(FULL, v >= 0.0 && v == m);
    }
    return __ffs(sub_bits<P>(hits, sw)) - 1; /* -1 for none */
}

/* pb = the pivot row, with 1/d in column c, in 16-byte stores. */
template <int K>
__device__ __forceinline__ void put_row(double *pb, const double (&row)[K],
                                        int c, double dinv)
{
    if constexpr (K == 1) {
        pb[0] = dinv;
    } else {
#pragma unroll
        for (int j = 0; j < K; j += 2)
            *(double2 *)(pb + j) = make_double2(j == c ? dinv : row[j],
                                                j + 1 == c ? dinv : row[j + 1]);
    }
}

/* row_j -= g * pb_j for j != c, pb read in 16-byte loads (broadcast). */
template <int K>
__device__ __forceinline__ void update_row(double (&row)[K], const double *pb,
                                           int c, double g)
{
    if constexpr (K > 1) {
#pragma unroll
        for (int j = 0; j < K; j += 2) {
            const double2 q = *(const double2 *)(pb + j);
            if (j != c) row[j] = fma(-g, q.x, row[j]);
            if (j + 1 != c) row[j + 1] = fma(-g, q.y, row[j + 1]);
        }
    }
}

/* The elimination on row[] (lane li's row of a k x k block; kwarp = the
 * largest k in the warp, so every lane runs the same steps and the
 * warp-wide ballots stay converged). Rows are kept unscaled: a pivot row
 * is logically its stored values times `scale` (1/d), and since the other
 * rows' updates read the pivot row before it is scaled, every stored row
 * takes the same updates as in the plain exchange step (gje.c); the
 * scale is applied once, at the write-back. So the pivot lane does no
 * arithmetic per entry. buf holds 2 x (P + 2) doubles (two buffers, so one
 * barrier per step) and perm K ints of shared memory for this sub-warp
 * (K = the row registers, >= k; P = the lanes).
 * Returns 1 in the lane whose pivot failed the threshold (or lane 0 when
 * a column had no eligible pivot); my_step = the step at which this
 * lane's row was pivot. */
template <int P, int K>
__device__ __forceinline__ bool
eliminate(double (&row)[K], double &scale, double tiny, int k, int kwarp,
          int li, int sw, double *buf, int *perm, int &my_step)
{
    bool pivoted = li >= k, bad = false;
    scale = 1.0;
    /* lanes that skip a step still read the buffer (times 0): keep it
     * finite */
    for (int e = li; e < 2 * (K + 2); e += P)
        buf[e] = 0.0;
    __syncwarp();
#pragma unroll
    for (int c = 0; c < K; c++) {
        if (c >= kwarp) break;
        const bool active = c < k;
        double *pb = buf + (c & 1) * (K + 2);
        const int piv = pick_pivot<P>(active && !pivoted, fabs(row[c]), sw);
        if (active && li == piv) {
            const double d = row[c];
            bad |= !(fabs(d) > tiny) || !isfinite(d);
            scale = 1.0 / d;
            put_row<K>(pb, row, c, scale);
            row[c] = 1.0; /* times scale: 1/d */
            perm[c] = li;
            my_step = c;
            pivoted = true;
        }
        if (active && piv < 0 && li == 0) bad = true; /* a column of NaN */
        __syncwarp();
        /* t_ij -= t_ic * t_pj / d, t_ic = -t_ic / d (pb[c] = 1/d). Every
         * lane runs the FMAs, with g = 0 where nothing changes, so that
         * the update is straight-line code the compiler can overlap with
         * the next step's pivot search. */
        const bool upd = active && piv >= 0 && li != piv && li < k;
        const double g = upd ? row[c] * pb[c] : 0.0;
        update_row<K>(row, pb, c, g);
        if (upd) row[c] = -g;
    }
    return bad;
}

/* info[b] for the sub-warp, and the inverse written column-major:
 * (B^{-1})(my_step, perm[c]) = scale * row[c]. Every lane of the warp
 * calls it. */
template <int P, int K>
__device__ __forceinline__ void
finish(const double (&row)[K], double scale, bool bad, const block_ref &r,
       int li, int sw, int my_step, const int *perm, double *out, int32_t *info)
{
    const bool singular = sub_bits<P>(__ballot_sync(FULL, bad), sw) != 0;
    if (r.k == 0) return;
    if (li == 0) info[r.b] = singular;
    if (singular || li >= r.k) return;
    double *o = out + r.off + my_step;
#pragma unroll
    for (int c = 0; c < K; c++)
        if (c < r.k) o[(int64_t)perm[c] * r.k] = scale * row[c];
}

/* Dense column-major block: lane li reads row li, one coalesced load per
 * column. Returns the row's threshold. */
template <int K>
__device__ __forceinline__ double load_dense(double (&row)[K],
                                             const double *blk, int k, int li)
{
    double rmax = 0.0;
#pragma unroll
    for (int j = 0; j < K; j++) {
        row[j] = li < k && j < k ? blk[li + (int64_t)j * k] : 0.0;
        rmax = fmax(rmax, fabs(row[j]));
    }
    return threshold(k, rmax);
}

/* One block per sub-warp from the size class's range lo..hi of order:
 * load(row, r, li, sub) fills lane li's row and returns its singularity
 * threshold; then the elimination and the write-back. */
template <int P, int K, typename Load>
__device__ __forceinline__ void
invert_blocks(const int32_t *starts, const int64_t *offs, const int32_t *order,
              int32_t lo, int32_t hi, double *out, int32_t *info, Load load)
{
    __shared__ __align__(16) double buf_all[GJE_THREADS / P][2 * (K + 2)];
    __shared__ int perm_all[GJE_THREADS / P][K];
    const int lane = threadIdx.x & 31, li = lane & (P - 1), sw = lane / P;
    const int sub = threadIdx.x / P;
    const block_ref r = my_block<P>(starts, offs, order, lo, hi);
    const int kwarp = __reduce_max_sync(FULL, r.k);
    if (kwarp == 0) return; /* the whole warp is past the end */
    double row[K];
    const double tiny = load(row, r, li, sub);
    int my_step = 0;
    double scale;
    const bool bad = eliminate<P, K>(row, scale, tiny, r.k, kwarp, li, sw,
                                     buf_all[sub], perm_all[sub], my_step);
    finish<P, K>(row, scale, bad, r, li, sw, my_step, perm_all[sub], out, info);
}

template <int P, int K>
__global__ void __launch_bounds__(GJE_THREADS, GJE_MINB(P))
    k_gje_dense(const int32_t *starts, const int64_t *offs,
                const int32_t *order, int32_t lo, int32_t hi,
                const double *__restrict__ in, double *__restrict__ out,
                int32_t *info)
{
    invert_blocks<P, K>(starts, offs, order, lo, hi, out, info,
                        [&](double(&row)[K], const block_ref &r, int li, int) {
                            return load_dense<K>(row, in + r.off, r.k, li);
                        });
}

/* Entries a lane loads before it places any: a small batch runs about one
 * warp per multiprocessor, so the extraction's time is the number of load
 * latencies in a row, not bandwidth. */
#define FILL_BATCH 8

/* Shared extraction: the sub-warp walks the entries of the block's rows as
 * one stream (lane li takes entries li, li + P, ...: coalesced, every lane
 * busy whatever the row lengths) and drops the entries outside the block
 * into a zeroed K x K tile. Each lane loads FILL_BATCH column indices and
 * values at once, none waiting for another, before placing them. rp holds
 * the block's k + 1 row pointers. */
template <int P, int K>
__device__ __forceinline__ void
fill_tile(double (*tile)[K + 1], int32_t *rp, const block_ref &r, int li,
          const int32_t *__restrict__ rowptr,
          const int32_t *__restrict__ colind, const double *__restrict__ val)
{
    for (int e = li; e < K * (K + 1); e += P)
        (&tile[0][0])[e] = 0.0;
    for (int i = li; i <= r.k; i += P)
        rp[i] = rowptr[r.s + i];
    __syncwarp();
    const int32_t base = rp[0], len = rp[r.k] - base;
    int i = 0; /* this lane's row: rp[i] <= q < rp[i + 1] */
    for (int32_t e0 = li; e0 < len; e0 += FILL_BATCH * P) {
        int32_t col[FILL_BATCH];
        double v[FILL_BATCH];
#pragma unroll
        for (int u = 0; u < FILL_BATCH; u++) {
            const int32_t e = e0 + u * P;
            col[u] = e < len ? colind[base + e] : -1;
            v[u] = e < len ? val[base + e] : 0.0;
        }
#pragma unroll
        for (int u = 0; u < FILL_BATCH; u++) {
            const int32_t q = base + e0 + u * P;
            const int32_t j = col[u] - r.s;
            if (col[u] < 0) break; /* past the block's entries */
            while (rp[i + 1] <= q)
                i++;
            if (j >= 0 && j < r.k) tile[i][j] = v[u];
        }
    }
    __syncwarp();
}

/* The extracted tile's row li in lane li. */
template <int P, int K>
__device__ __forceinline__ double
load_csr(double (&row)[K], double (*tile)[K + 1], int32_t *rp,
         const block_ref &r, int li, const int32_t *__restrict__ rowptr,
         const int32_t *__restrict__ colind, const double *__restrict__ val)
{
    fill_tile<P, K>(tile, rp, r, li, rowptr, colind, val);
    double rmax = 0.0;
#pragma unroll
    for (int j = 0; j < K; j++) {
        row[j] = li < K ? tile[li][j] : 0.0; /* lanes past K: no row */
        rmax = fmax(rmax, fabs(row[j]));
    }
    return threshold(r.k, rmax);
}

template <int P, int K>
__global__ void __launch_bounds__(GJE_THREADS, GJE_MINB(P))
    k_gje_csr(const int32_t *starts, const int64_t *offs, const int32_t *order,
              int32_t lo, int32_t hi, const int32_t *__restrict__ rowptr,
              const int32_t *__restrict__ colind,
              const double *__restrict__ val, double *__restrict__ out,
              int32_t *info)
{
    __shared__ __align__(16) double tile_all[GJE_THREADS / P][K][K + 1];
    __shared__ int32_t rp_all[GJE_THREADS / P][K + 1];
    invert_blocks<P, K>(
        starts, offs, order, lo, hi, out, info,
        [&](double(&row)[K], const block_ref &r, int li, int sub) {
            return load_csr<P, K>(row, tile_all[sub], rp_all[sub], r, li,
                                  rowptr, colind, val);
        });
}

/* ------------------------------------- blocked elimination on FP64 MMA */
/* Blocks of more than GJE_MMA_ABOVE rows take a blocked form of the same
 * elimination: the row kernel above spends its time moving the pivot row
 * (32 values per lane per step through shared memory), not in its FMAs.
 * One block per warp, padded with zeros to KT = 8T rows and columns, kept
 * in the accumulator layout of the 8x8x4 double MMA: lane l holds entries
 * (l/4 + 8ti, 8tj + 2(l%4) + {0, 1}) of tile (ti, tj).
 *
 * The steps go in panels of PW columns. After a panel's steps, each row is
 * its value at the panel's start plus a combination of the panel's pivot
 * rows G (as they were at the start), and the combination's coefficients
 * are the row's final entries in the panel's columns (the steps write
 * -m/d into column c of a row they update by -m/d times the pivot row).
 * The pivot rows themselves are that combination without their start
 * value. So a panel is:
 *  1. its steps on its own 32 x PW columns, a row per lane, with the row
 *     kernel's pivot search, giving the panel's final columns P;
 *  2. A += P G on the tensor cores, over the rows that are not the
 *     panel's pivots (a pivot row's P row is 0 there);
 *  3. the pivot rows set to P_piv G (P_piv: their P rows): taking A + (P_p
 *     - e_s) G for them instead would compute a row scaled by 1/d as
 *     x - (1 - 1/d) x and lose all its digits for large d;
 *  4. the panel's columns overwritten with P.
 * In exact arithmetic this is the row kernel's elimination; the rounding
 * differs only in the order of the sums. */
constexpr int PW = 4;      /* panel width: a k-chunk of the MMA */
constexpr int PS = PW + 2; /* row stride of pan: 16-byte loads by row
                              without bank conflicts */

/* One warp's shared memory: the panel's buffers, and in the same place at
 * the end the inverse on its way out (column-major, stride KT + 4: the
 * scattered stores of the accumulator layout take two wavefronts). G's
 * rows are KT + 4 apart too, for the B operand's loads. */
template <int T> struct mma_smem {
    static constexpr int KT = 8 * T, GS = KT + 4;
    struct panel {
        double pan[32][PS]; /* the panel's columns, a row per lane       */
        double g[PW][GS];   /* the pivot rows at the panel's start       */
        double f[PW][GS];   /* the pivot rows' final values              */
    };
    union {
        panel p;
        double inv[KT][GS];
    };
    int perm[KT], sigma[KT]; /* step -> pivot row, row -> its step      */
};

/* The lane's entries of the block: entry(i, j) for i, j < k, else 0. */
template <int T, typename Entry>
__device__ __forceinline__ void mma_load(double2 (&a)[T][T], int k, int lane,
                                         Entry entry)
{
#pragma unroll
    for (int ti = 0; ti < T; ti++)
#pragma unroll
        for (int tj = 0; tj < T; tj++) {
            const int i = lane / 4 + 8 * ti, j = 8 * tj + 2 * (lane & 3);
            a[ti][tj].x = i < k && j < k ? entry(i, j) : 0.0;
            a[ti][tj].y = i < k && j + 1 < k ? entry(i, j + 1) : 0.0;
        }
}

/* The singularity threshold of row `lane` (the panel layout's row). */
template <int T>
__device__ __forceinline__ double mma_row_tiny(const double2 (&a)[T][T], int k,
                                               int lane)
{
    double mine = 0.0;
#pragma unroll
    for (int ti = 0; ti < T; ti++) {
        double m = 0.0;
#pragma unroll
        for (int tj = 0; tj < T; tj++)
            m = fmax(m, fmax(fabs(a[ti][tj].x), fabs(a[ti][tj].y)));
        m = fmax(m, __shfl_xor_sync(FULL, m, 1));
        m = fmax(m, __shfl_xor_sync(FULL, m, 2)); /* row lane/4 + 8ti */
        const double t = __shfl_sync(FULL, m, 4 * (lane & 7));
        if (lane >> 3 == ti) mine = t;
    }
    return threshold(k, mine);
}

/* The panel's pivot rows between the block and rows[step]: row i is
 * pivot of step[ti] >= 0 for the lane's rows i = lane/4 + 8ti. A row's
 * tile row is known only at run time, so the lanes address shared memory
 * by step and the registers stay statically indexed (an indexed a[]
 * would live in local memory). */
template <int T, bool In>
__device__ __forceinline__ void
mma_pivot_rows(double2 (&a)[T][T], const int (&step)[T],
               double (*rows)[8 * T + 4], int lane)
{
#pragma unroll
    for (int ti = 0; ti < T; ti++) {
        if (step[ti] < 0) continue;
#pragma unroll
        for (int tj = 0; tj < T; tj++) {
            double2 *q = (double2 *)&rows[step[ti]][8 * tj + 2 * (lane & 3)];
            if (In)
                a[ti][tj] = *q;
            else
                *q = a[ti][tj];
        }
    }
}

/* Panel Q's PW columns between the block and pan (a row per lane): the
 * lanes with 2(lane%4) in the panel's columns of tile column Q*PW/8. */
template <int T, int Q, bool In>
__device__ __forceinline__ void mma_panel_cols(double2 (&a)[T][T],
                                               double (*pan)[PS], int lane)
{
    constexpr int tj = Q * PW / 8, c0 = Q * PW % 8;
    const int c = 2 * (lane & 3) - c0;
    if (c < 0 || c >= PW) return;
#pragma unroll
    for (int ti = 0; ti < T; ti++) {
        double2 *q = (double2 *)&pan[lane / 4 + 8 * ti][c];
        if (In)
            a[ti][tj] = *q;
        else
            *q = a[ti][tj];
    }
}

/* Row `lane`'s state through the elimination (the panel layout's row),
 * and the current panel's pivot rows (the same in every lane). */
struct mma_state {
    bool pivoted; /* the row was a pivot (or is past the block)        */
    int step;     /* the step at which it was                          */
    double d;     /* its pivot entry, checked against tiny at the end  */
    int pp[PW];   /* pivot row of each step of the current panel       */
};

/* Step 1 on pv (row `lane`'s PW panel entries). A pivot row is kept
 * unscaled until the panel's end (its true values are scale times pv; the
 * later steps' updates are linear in the row, so they act the same on
 * it), which spares the pivot lane a branch per entry. Leaves the panel's
 * final columns in pan, each row's step in sigma, and zeroes the G rows
 * of steps past k. A step is only what its successors wait for: the pivot
 * search, the pivot row's broadcast, 1/d and the updates; the threshold
 * check, the step numbers and the pivot order wait in registers. The
 * kernel is bound by issuing instructions (16 warps per multiprocessor,
 * each issuing once every 9 cycles): this took a step from about 72
 * instructions to 51 and k = 32 from 4,611 per block to 3,903, 2.63x ->
 * 2.42x the memory floor on the H200 (k = 24 2.65x -> 2.51x, 2026-11-23).
 * p >= 0: the column has k - c > 0 eligible rows, and the search orders
 * by bit pattern, NaN included, so it always finds one. */
template <int T, int Q>
__device__ __forceinline__ void mma_panel_steps(double (&pv)[PW], int k,
                                                int lane, mma_state &st,
                                                mma_smem<T> &sm)
{
    double scale = 1.0;
#pragma unroll
    for (int s = 0; s < PW; s++) {
        const int c = PW * Q + s;
        if (c >= k) { /* past the block: a step that changes nothing */
            if (lane < mma_smem<T>::KT) sm.p.g[s][lane] = 0.0;
            st.pp[s] = 0;
            continue;
        }
        const int p = pick_pivot<32>(!st.pivoted, pv[s], 0);
        double pr[PW];
#pragma unroll
        for (int j = 0; j < PW; j++)
            pr[j] = __shfl_sync(FULL, pv[j], p);
        const double di = 1.0 / pr[s];
        const bool me = lane == p;
        st.d = me ? pv[s] : st.d;
        const double ng = me ? 0.0 : pv[s] * -di; /* -t_ic / d */
#pragma unroll
        for (int j = 0; j < PW; j++)
            if (j != s) pv[j] = fma(ng, pr[j], pv[j]);
        pv[s] = me ? 1.0 : ng;
        scale = me ? di : scale;
        st.step = me ? c : st.step;
        st.pivoted |= me;
        st.pp[s] = p;
    }
#pragma unroll
    for (int j = 0; j < PW; j += 2)
        *(double2 *)&sm.p.pan[lane][j] =
            make_double2(pv[j] * scale, pv[j + 1] * scale);
    if (lane < mma_smem<T>::KT) sm.sigma[lane] = st.step;
}

/* Steps 2 and 3 (step 3 into f). piv_row bit ti: row lane/4 + 8ti (also
 * the row of the lane's A operand in tile row ti) is a pivot of this
 * panel. */
template <int T, int Q>
__device__ __forceinline__ void
mma_panel_update(double2 (&a)[T][T], unsigned piv_row, int k, int lane,
                 const int (&pp)[PW], mma_smem<T> &sm)
{
    double bop[T];
#pragma unroll
    for (int tj = 0; tj < T; tj++)
        bop[tj] = sm.p.g[lane & 3][8 * tj + lane / 4];
#pragma unroll
    for (int ti = 0; ti < T; ti++) {
        const double aop =
            (piv_row >> ti) & 1u ? 0.0 : sm.p.pan[8 * ti + lane / 4][lane & 3];
#pragma unroll
        for (int tj = 0; tj < T; tj++)
            a[ti][tj] = mma884(aop, bop[tj], a[ti][tj]);
    }
    /* F = P_piv G in rows 0..PW-1 of an 8-row tile */
    const int s = lane / 4, c = PW * Q + s;
    int prow = pp[0];
#pragma unroll
    for (int q = 1; q < PW; q++)
        prow = s == q ? pp[q] : prow;
    const double wop = s < PW && c < k ? sm.p.pan[prow][lane & 3] : 0.0;
#pragma unroll
    for (int tj = 0; tj < T; tj++) {
        const double2 f = mma884(wop, bop[tj], make_double2(0.0, 0.0));
        if (s < PW) *(double2 *)&sm.p.f[s][8 * tj + 2 * (lane & 3)] = f;
    }
}

/* Panel Q and the ones after it. */
template <int T, int Q>
__device__ __forceinline__ void mma_panels(double2 (&a)[T][T], int k, int lane,
                                           mma_state &st, mma_smem<T> &sm)
{
    if constexpr (Q * PW < 8 * T) {
        if (PW * Q >= k) return;
        mma_panel_cols<T, Q, false>(a, sm.p.pan, lane);
        __syncwarp();
        double pv[PW];
#pragma unroll
        for (int j = 0; j < PW; j += 2) {
            const double2 v = *(const double2 *)&sm.p.pan[lane][j];
            pv[j] = v.x, pv[j + 1] = v.y;
        }
        if (lane >= mma_smem<T>::KT) /* no row: pan has none for it */
#pragma unroll
            for (int j = 0; j < PW; j++)
                pv[j] = 0.0;
        const bool before = st.pivoted;
        mma_panel_steps<T, Q>(pv, k, lane, st, sm);
        __syncwarp();
        /* the lane's rows that are this panel's pivots, and their steps */
        const unsigned fresh = __ballot_sync(FULL, st.pivoted && !before);
        int step[T];
        unsigned piv_row = 0;
#pragma unroll
        for (int ti = 0; ti < T; ti++) {
            const int i = lane / 4 + 8 * ti;
            const bool is = (fresh >> i) & 1u;
            step[ti] = is ? sm.sigma[i] - PW * Q : -1;
            piv_row |= (unsigned)is << ti;
        }
        mma_pivot_rows<T, false>(a, step, sm.p.g, lane);
        __syncwarp();
        mma_panel_update<T, Q>(a, piv_row, k, lane, st.pp, sm);
        __syncwarp();
        mma_pivot_rows<T, true>(a, step, sm.p.f, lane);
        mma_panel_cols<T, Q, true>(a, sm.p.pan, lane);
        __syncwarp();
        mma_panels<T, Q + 1>(a, k, lane, st, sm);
    }
}

/* The inverse, column-major, rows and columns back in order: entry
 * (i, j) of the eliminated block is entry (sigma[i], perm[j]) of the
 * inverse. Through shared memory, so that the global stores are whole
 * columns. */
template <int T>
__device__ __forceinline__ void mma_write(const double2 (&a)[T][T], int k,
                                          int lane, mma_smem<T> &sm,
                                          double *out)
{
    int si[T], pj[T][2];
#pragma unroll
    for (int ti = 0; ti < T; ti++)
        si[ti] = sm.sigma[min(lane / 4 + 8 * ti, k - 1)];
#pragma unroll
    for (int tj = 0; tj < T; tj++)
#pragma unroll
        for (int c = 0; c < 2; c++)
            pj[tj][c] = sm.perm[min(8 * tj + 2 * (lane & 3) + c, k - 1)];
    __syncwarp(); /* the panel buffers are done with */
#pragma unroll
    for (int ti = 0; ti < T; ti++)
#pragma unroll
        for (int tj = 0; tj < T; tj++) {
            const int i = lane / 4 + 8 * ti, j = 8 * tj + 2 * (lane & 3);
            if (i < k && j < k) sm.inv[pj[tj][0]][si[ti]] = a[ti][tj].x;
            if (i < k && j + 1 < k) sm.inv[pj[tj][1]][si[ti]] = a[ti][tj].y;
        }
    __syncwarp();
    if (lane >= k) return;
    /* a running pointer: per column one add, not a 64-bit multiply
     * (k = 32 2.42x -> 2.37x the memory floor, H200, 2026-11-23) */
    double *o = out + lane;
#pragma unroll
    for (int j = 0; j < mma_smem<T>::KT; j++, o += k)
        if (j < k) *o = sm.inv[j][lane];
}

/* The warp's block: eliminate and write the inverse unless singular. */
template <int T>
__device__ __forceinline__ void
mma_invert(double2 (&a)[T][T], const block_ref &r, int lane, mma_smem<T> &sm,
           double *out, int32_t *info)
{
    /* k is the warp's; the reduction tells the compiler so (uniform
     * branches, no divergence handling around the shuffles) */
    const int k = __reduce_max_sync(FULL, r.k);
    const double tiny = mma_row_tiny<T>(a, k, lane);
    mma_state st = {lane >= k, 0, 1.0, {0}};
    mma_panels<T, 0>(a, k, lane, st, sm);
    /* every row < k was a pivot once: its entry then decides */
    const bool bad = lane < k && (!(fabs(st.d) > tiny) || !isfinite(st.d));
    const bool singular = __ballot_sync(FULL, bad) != 0;
    if (lane < k) sm.perm[st.step] = lane;
    __syncwarp();
    if (lane == 0) info[r.b] = singular;
    if (!singular) mma_write<T>(a, k, lane, sm, out + r.off);
}

#define MMA_WARPS (GJE_THREADS / 32)

template <int T>
__global__ void __launch_bounds__(GJE_THREADS, 4)
    k_gje_mma_dense(const int32_t *starts, const int64_t *offs,
                    const int32_t *order, int32_t lo, int32_t hi,
                    const double *__restrict__ in, double *__restrict__ out,
                    int32_t *info)
{
    __shared__ __align__(16) mma_smem<T> sm_all[MMA_WARPS];
    const int lane = threadIdx.x & 31;
    const block_ref r = my_block<32>(starts, offs, order, lo, hi);
    if (r.k == 0) return; /* the whole warp is past the end */
    double2 a[T][T];
    const double *blk = in + r.off;
    mma_load<T>(a, r.k, lane,
                [&](int i, int j) { return blk[i + (int64_t)j * r.k]; });
    mma_invert<T>(a, r, lane, sm_all[threadIdx.x / 32], out, info);
}

/* The extraction tile and the elimination's buffers share memory. */
template <int T> union mma_csr_smem {
    double tile[8 * T][8 * T + 1];
    mma_smem<T> m;
};

template <int T>
__global__ void __launch_bounds__(GJE_THREADS, 4)
    k_gje_mma_csr(const int32_t *starts, const int64_t *offs,
                  const int32_t *order, int32_t lo, int32_t hi,
                  const int32_t *__restrict__ rowptr,
                  const int32_t *__restrict__ colind,
                  const double *__restrict__ val, double *__restrict__ out,
                  int32_t *info)
{
    constexpr int KT = 8 * T;
    __shared__ __align__(16) mma_csr_smem<T> sm_all[MMA_WARPS];
    __shared__ int32_t rp_all[MMA_WARPS][KT + 1];
    const int lane = threadIdx.x & 31, w = threadIdx.x / 32;
    const block_ref r = my_block<32>(starts, offs, order, lo, hi);
    if (r.k == 0) return;
    fill_tile<32, KT>(sm_all[w].tile, rp_all[w], r, lane, rowptr, colind, val);
    double2 a[T][T];
    mma_load<T>(a, r.k, lane,
                [&](int i, int j) { return sm_all[w].tile[i][j]; });
    __syncwarp(); /* the tile is read before its memory is reused */
    mma_invert<T>(a, r, lane, sm_all[w].m, out, info);
}

/* z_b = inv_b r_b: lane i keeps r_i in a register and sums
 * inv(i, j) * r_j over j, r_j broadcast by a shuffle from lane j; the
 * lanes read column j of the inverse at consecutive addresses. Entries
 * past k are 0 (r_j of an idle lane is 0 too), so the sum matches the
 * CPU's in column order. */
template <int P>
__global__ void __launch_bounds__(GJE_THREADS)
    k_gje_apply(const int32_t *starts, const int64_t *offs, int32_t nb,
                const double *__restrict__ inv, const double *__restrict__ r,
                double *__restrict__ z)
{
    const int li = threadIdx.x & (P - 1);
    const block_ref b = my_block<P>(starts, offs, nullptr, 0, nb);
    const int kwarp = __reduce_max_sync(FULL, b.k);
    if (kwarp == 0) return;
    const bool on = li < b.k;
    const double rv = on ? r[b.s + li] : 0.0;
    const double *col = inv + b.off + li;
    /* every column's load issued before the sums: P loads in flight per
     * lane rather than one */
    double v[P];
#pragma unroll
    for (int j = 0; j < P; j++)
        v[j] = on && j < b.k ? col[(int64_t)j * b.k] : 0.0;
    double acc = 0.0;
#pragma unroll
    for (int j = 0; j < P; j++) {
        if (j >= kwarp) break;
        acc = fma(v[j], __shfl_sync(FULL, rv, j, P), acc);
    }
    if (on) z[b.s + li] = acc;
}

/* flags[i] = 1 unless row i has row i-1's column pattern; one thread per
 * row, consecutive threads on consecutive (contiguous) rows. */
__global__ void k_pattern_flags(int32_t n, const int32_t *__restrict__ rowptr,
                                const int32_t *__restrict__ colind,
                                unsigned char *__restrict__ flags)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        unsigned char f = 1;
        if (i > 0) {
            const int32_t a = rowptr[i - 1], b = rowptr[i];
            const int32_t len = b - a;
            if (rowptr[i + 1] - b == len) {
                f = 0;
                /* four pairs of loads in flight, not one */
                for (int32_t q = 0; q < len && !f; q += 4)
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        if (q + u < len)
                            f |= colind[a + q + u] != colind[b + q + u];
            }
        }
        flags[i] = f;
    }
}

/* ------------------------------------------------------------- launches */

static unsigned grid_for(int64_t blocks, int P)
{
    return (unsigned)((blocks * P + GJE_THREADS - 1) / GJE_THREADS);
}

/* Blocks of more rows than this take the blocked MMA kernel. Measured on
 * the H200 (2026-11-23, x the memory floor, row kernel -> MMA): k = 20
 * 3.79 -> 3.09, 24 3.41 -> 2.65, 32 2.88 -> 2.63; at 16 rows and below
 * the row kernel is faster (k = 12 2.25 vs 3.82, 16 1.98 vs 2.88). A
 * compile-time switch, for such comparisons. */
#ifndef GJE_MMA_ABOVE
#define GJE_MMA_ABOVE 16
#endif

/* Size class C's row registers K and lanes P (a power of two >= K), and
 * the MMA kernel's tiles T per side (0: the row kernel). */
template <int C> struct gje_class {
    static constexpr int K = KR_GJE_CLASS_ROWS(C);
    static constexpr int P = K <= 8 ? K : K <= 16 ? 16 : 32;
    static constexpr int T = K > GJE_MMA_ABOVE ? (K + 7) / 8 : 0;
};

template <typename F, int... C>
static void launch_classes(const kr_gje_batch *bb, F launch,
                           std::integer_sequence<int, C...>)
{
    /* one launch per non-empty class, in class order */
    ((bb->class_start[C + 1] > bb->class_start[C]
          ? launch(gje_class<C>(), bb->class_start[C], bb->class_start[C + 1])
          : void()),
     ...);
}

/* Calls launch(gje_class<C>, lo, hi) for each non-empty size class of the
 * batch, then checks the launches. */
template <typename F>
static kr_status each_class(kr_ctx *ctx, const kr_gje_batch *bb, F launch)
{
    launch_classes(bb, launch,
                   std::make_integer_sequence<int, KR_GJE_CLASSES>());
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

static kr_status cu_invert(kr_ctx *ctx, const kr_gje_batch *bb,
                           const double *in, double *out, int32_t *info)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    return each_class(ctx, bb, [&](auto cls, int32_t lo, int32_t hi) {
        constexpr int P = decltype(cls)::P, K = decltype(cls)::K;
        constexpr int T = decltype(cls)::T;
        if constexpr (T > 0)
            k_gje_mma_dense<T><<<grid_for(hi - lo, 32), GJE_THREADS, 0, s>>>(
                bb->starts, bb->offs, bb->order, lo, hi, in, out, info);
        else
            k_gje_dense<P, K><<<grid_for(hi - lo, P), GJE_THREADS, 0, s>>>(
                bb->starts, bb->offs, bb->order, lo, hi, in, out, info);
    });
}

static kr_status cu_extract_invert(kr_ctx *ctx, const kr_gje_batch *bb,
                                   const kr_gje_csr *A, double *out,
                                   int32_t *info)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    return each_class(ctx, bb, [&](auto cls, int32_t lo, int32_t hi) {
        constexpr int P = decltype(cls)::P, K = decltype(cls)::K;
        constexpr int T = decltype(cls)::T;
        if constexpr (T > 0)
            k_gje_mma_csr<T><<<grid_for(hi - lo, 32), GJE_THREADS, 0, s>>>(
                bb->starts, bb->offs, bb->order, lo, hi, A->rowptr, A->colind,
                A->val, out, info);
        else
            k_gje_csr<P, K><<<grid_for(hi - lo, P), GJE_THREADS, 0, s>>>(
                bb->starts, bb->offs, bb->order, lo, hi, A->rowptr, A->colind,
                A->val, out, info);
    });
}

template <int P>
static void launch_apply(cudaStream_t s, const kr_gje_batch *bb,
                         const double *inv, const double *r, double *z)
{
    k_gje_apply<P><<<grid_for(bb->nb, P), GJE_THREADS, 0, s>>>(
        bb->starts, bb->offs, bb->nb, inv, r, z);
}

static kr_status cu_apply(kr_ctx *ctx, const kr_gje_batch *bb,
                          const double *inv, const double *r, double *z)
{
    if (bb->nb == 0) return KR_OK;
    cudaStream_t s = kr_cuda(ctx)->stream;
    switch (kr_gje_lanes(bb->max_k)) {
    case 1: launch_apply<1>(s, bb, inv, r, z); break;
    case 2: launch_apply<2>(s, bb, inv, r, z); break;
    case 4: launch_apply<4>(s, bb, inv, r, z); break;
    case 8: launch_apply<8>(s, bb, inv, r, z); break;
    case 16: launch_apply<16>(s, bb, inv, r, z); break;
    default: launch_apply<32>(s, bb, inv, r, z); break;
    }
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

static kr_status cu_pattern_flags(kr_ctx *ctx, const kr_gje_csr *A,
                                  unsigned char *flags)
{
    if (A->nrows == 0) return KR_OK;
    k_pattern_flags<<<kr_grid(A->nrows, 256), 256, 0, kr_cuda(ctx)->stream>>>(
        A->nrows, A->rowptr, A->colind, flags);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* ---- several right-hand sides (issue 19) ----
 * Z = blockdiag(inv) R over k columns, R and Z row-major (nrows x k): one
 * warp per block, which takes the block's columns KC at a time. Lane
 * h KC + c keeps in registers column c0 + c of the rows h, h + G, h + 2G,
 * ... (G = 32 / KC row groups: at most KC rows a lane, since kb <= 32).
 * For each j the warp makes one coalesced load of the inverse's column j
 * (lane l holds inv_b(l, j)) and one of R's row j, and each lane takes its
 * rows' inv_b(r, j) by shuffle: z(s + r, c) = sum_j inv_b(r, j) r(s + j, c)
 * in column order, as the CPU's apply sums one column. Every entry of the
 * inverse and of R is read from memory once per chunk of KC columns. The
 * last version (lanes over the kb x k entries, a row's sum each) re-read
 * the inverse's column and R's row for every entry: on an H100 (16
 * columns, elasticity3d:48) it took 271 us a call, 52% of the DRAM
 * bandwidth and three times the bytes the apply needs. */
template <int KC>
__global__ void k_gje_apply_multi(const int32_t *__restrict__ starts,
                                  const int64_t *__restrict__ offs, int32_t nb,
                                  int k, const double *__restrict__ inv,
                                  const double *__restrict__ R, double *Z)
{
    constexpr int G = 32 / KC;
    const int lane = threadIdx.x % 32, c = lane % KC, h = lane / KC;
    const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    for (int64_t b = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
         b < nb; b += warps) {
        const int32_t s = starts[b], kb = starts[b + 1] - s;
        const double *D = inv + offs[b];
        const double *Rs = R + (int64_t)s * k;
        double *Zs = Z + (int64_t)s * k;
        for (int c0 = 0; c0 < k; c0 += KC) {
            const bool col = c0 + c < k;
            double acc[KC];
#pragma unroll
            for (int t = 0; t < KC; t++)
                acc[t] = 0.0;
#pragma unroll 2
            for (int32_t j = 0; j < kb; j++) {
                const double dj =
                    lane < kb ? __ldg(D + (int64_t)j * kb + lane) : 0.0;
                const double rj =
                    col ? __ldg(Rs + (int64_t)j * k + c0 + c) : 0.0;
#pragma unroll
                for (int t = 0; t < KC; t++)
                    acc[t] += __shfl_sync(~0u, dj, h + G * t) * rj;
            }
#pragma unroll
            for (int t = 0; t < KC; t++)
                if (h + G * t < kb && col)
                    Zs[(int64_t)(h + G * t) * k + c0 + c] = acc[t];
        }
    }
}

/* k_gje_apply_multi for KC columns at a time: k itself where it is a
 * power of two up to 32, else the next one (lanes past k idle). */
template <int KC>
static void launch_apply_multi(cudaStream_t st, const kr_gje_batch *bb,
                               const double *inv, int k, const double *R,
                               double *Z)
{
    const int threads = 256;
    k_gje_apply_multi<KC>
        <<<kr_grid((int64_t)bb->nb * 32, threads), threads, 0, st>>>(
            bb->starts, bb->offs, bb->nb, k, inv, R, Z);
}

static kr_status cu_apply_multi(kr_ctx *ctx, const kr_gje_batch *bb,
                                const double *inv, int k, const double *R,
                                double *Z)
{
    if (bb->nb == 0) return KR_OK;
    cudaStream_t st = kr_cuda(ctx)->stream;
    if (k > 16)
        launch_apply_multi<32>(st, bb, inv, k, R, Z);
    else if (k > 8)
        launch_apply_multi<16>(st, bb, inv, k, R, Z);
    else if (k > 4)
        launch_apply_multi<8>(st, bb, inv, k, R, Z);
    else if (k > 2)
        launch_apply_multi<4>(st, bb, inv, k, R, Z);
    else if (k > 1)
        launch_apply_multi<2>(st, bb, inv, k, R, Z);
    else
        launch_apply_multi<1>(st, bb, inv, k, R, Z);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}
/* ---- end of the several-right-hand-sides apply ---- */

static kr_gje_batch_ops make_ops(void)
{
    kr_gje_batch_ops o;
    o.name = "cuda";
    o.pattern_flags = cu_pattern_flags;
    o.invert = cu_invert;
    o.extract_invert = cu_extract_invert;
    o.apply = cu_apply;
    o.apply_multi = cu_apply_multi;
    return o;
}

static const kr_gje_batch_ops cuda_ops = make_ops();

const kr_gje_batch_ops *kr_gje_batch_cuda_ops(void) { return &cuda_ops; }
