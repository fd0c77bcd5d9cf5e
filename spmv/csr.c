/* CSR on the CPU: the row loop every other format is checked against.
 * Each y[i] is one running sum in column order, as the reference loop and
 * PETSc's plain SeqAIJ loop add, so the result does not depend on the
 * thread count or on how rows are grouped, and iteration counts match
 * PETSc's. (PETSc's own I-node kernel adds the products of two columns
 * before the running sum: on bcsstk16 its y differs from this one in 4553
 * of 4884 rows, by up to 2.6e-11 relative; CG still takes the same 197
 * iterations.)
 *
 * I-nodes: consecutive rows with the same column pattern (the rows of one
 * mesh node in finite-element matrices) form a group of up to KR_INODE_MAX
 * rows, found once at build time. A group's values are stored column by
 * column (the g values of column j side by side), so that its rows advance
 * together: each column index and each x entry is loaded once for the
 * group, and the g running sums are the lanes of a short vector. The lanes
 * add in column order as the scalar loop does (no FMA is ever formed), so
 * y is bitwise the same as row by row. Rows in no group run through the
 * plain loop, two rows advancing together so that their add chains
 * overlap. */
#include "core/error.h"
#include "core/vec.h"
#include "spmv/format.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Software prefetch KR_PF_AHEAD bytes ahead in the value and index
 * streams, for matrices of KR_PF_MIN_BYTES or more: on the 2-core AMD EPYC
 * of bench/results it took the CG and BiCGSTAB iterations on poisson3d:64
 * (22 MB of CSR) from 2.3 and 4.8 ms to 1.75 and 3.6, while on matrices
 * that stay in cache it only costs instructions. The arrays extend
 * KR_PF_AHEAD bytes past their ends, so that every prefetched address is
 * inside them; the values' extension is zero (the AVX kernel of a group of
 * 3 rows loads 4 values a column, one past the group's last). */
#define KR_PF_AHEAD 4096
#define KR_PF_MIN_BYTES (8 << 20)

/* The AVX copy of the kernels: x86-64 with GCC or Clang, chosen at run time
 * when the CPU (and OS) support AVX. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define KR_CSR_AVX 1
#else
#define KR_CSR_AVX 0
#endif

/* A block of rows: either one I-node group (g >= 2 rows with the same
 * pattern, values column-major) or a run of rows in no group (g == 1,
 * values row by row as in CSR). */
typedef struct csr_impl {
    int32_t nrows, ncols, nnz;
    int32_t *rowptr;  /* nrows + 1 */
    int32_t *colind;  /* nnz, as in the input (+ KR_PF_AHEAD bytes)      */
    double *val;      /* nnz; a group's values column-major (+ the same) */
    int32_t nblocks;  /* blocks: rows [bstart[b], bstart[b + 1])        */
    int32_t *bstart;  /* nblocks + 1                                     */
    unsigned char *g; /* nblocks: group size, 1 for a run of single rows */
    int32_t groups;   /* I-node groups (blocks with g >= 2)              */
    int32_t grouped;  /* rows in them                                    */
    int prefetch;     /* the kernel prefetches (A is larger than caches) */
} csr_impl;

static int same_pattern(const int32_t *rp, const int32_t *ci, int32_t a,
                        int32_t b)
{
    int32_t len = rp[a + 1] - rp[a];
    return rp[b + 1] - rp[b] == len &&
           memcmp(ci + rp[a], ci + rp[b], (size_t)len * sizeof *ci) == 0;
}

/* Splits the rows into blocks (at most nrows of them). */
static void find_blocks(csr_impl *m)
{
    const int32_t *rp = m->rowptr, *ci = m->colind;
    int32_t n = m->nrows, nb = 0;
    m->groups = m->grouped = 0;
    for (int32_t i = 0; i < n;) {
        int32_t e = i + 1;
        while (e < n && e - i < KR_INODE_MAX && same_pattern(rp, ci, i, e))
            e++;
        if (e - i == 1) { /* join the previous run of single rows */
            if (nb > 0 && m->g[nb - 1] == 1) {
                i = e;
                continue;
            }
        } else {
            m->groups++;
            m->grouped += e - i;
        }
        m->bstart[nb] = i;
        m->g[nb++] = (unsigned char)(e - i);
        i = e;
    }
    m->bstart[nb] = n;
    m->nblocks = nb;
}

/* Stores each group's values column-major: value (row r0 + u, column j of
 * the pattern) at rowptr[r0] + j * g + u. */
static void interleave_groups(csr_impl *m, const double *val)
{
    memcpy(m->val, val, (size_t)m->nnz * sizeof *val);
    for (int32_t b = 0; b < m->nblocks; b++) {
        int32_t g = m->g[b], r0 = m->bstart[b];
        if (g == 1) continue;
        int32_t base = m->rowptr[r0], len = m->rowptr[r0 + 1] - base;
        for (int32_t u = 0; u < g; u++)
            for (int32_t j = 0; j < len; j++)
                m->val[base + j * g + u] = val[base + u * len + j];
    }
}

static void csr_free_impl(csr_impl *m)
{
    free(m->rowptr);
    free(m->colind);
    free(m->val);
    free(m->bstart);
    free(m->g);
    free(m);
}

static kr_status csr_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    csr_impl *m = calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    size_t n = (size_t)A->nrows, nnz = (size_t)A->nnz;
    m->nrows = A->nrows;
    m->ncols = A->ncols;
    m->nnz = A->nnz;
    m->rowptr = malloc((n + 1) * sizeof *m->rowptr);
    m->colind = malloc(nnz * sizeof *m->colind + KR_PF_AHEAD);
    m->val = malloc(nnz * sizeof *m->val + KR_PF_AHEAD);
    m->bstart = malloc((n + 1) * sizeof *m->bstart);
    m->g = malloc(n + 1);
    if (!m->rowptr || !m->colind || !m->val || !m->bstart || !m->g) {
        csr_free_impl(m);
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "out of host memory for a %d x %d CSR matrix with %d "
                       "nonzeros",
                       A->nrows, A->ncols, A->nnz);
    }
    memcpy(m->rowptr, A->rowptr, (n + 1) * sizeof *m->rowptr);
    memcpy(m->colind, A->colind, nnz * sizeof *m->colind);
    memset(m->val + nnz, 0, KR_PF_AHEAD);
    find_blocks(m);
    interleave_groups(m, A->val);
    m->prefetch = nnz * 12 >= KR_PF_MIN_BYTES;
    *out = m;
    return KR_OK;
}

/* the I-node groups depend on the pattern only: the values are laid out
 * in them again */
static kr_status csr_update_values(kr_ctx *ctx, void *impl, const kr_csr *A)
{
    (void)ctx;
    interleave_groups(impl, A->val);
    return KR_OK;
}

/* The kernels, written once and compiled twice (baseline and AVX), with
 * GCC's vector extensions (GCC and Clang). */
#define KR_INLINE static inline __attribute__((always_inline))

typedef double v2d __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));

/* unaligned vector loads, as macros: vector values never cross a function
 * boundary, whose convention for them depends on the target */
#define LD2(dst, p) memcpy(&(dst), (p), sizeof(v2d))
#define LD4(dst, p) memcpy(&(dst), (p), sizeof(v4d))

KR_INLINE void put_row(double alpha, double t, double beta, double *y)
{
    *y = beta == 0.0 ? alpha * t : alpha * t + beta * *y;
}

/* sum of row i's products from its position k on, in column order */
KR_INLINE double row_tail(int32_t k, int32_t end, const int32_t *ci,
                          const double *v, const double *x, double s)
{
    for (; k < end; k++)
        s += v[k] * x[ci[k]];
    return s;
}

/* Rows [lo, hi) in no group, two at a time over their common length so
 * that two add chains overlap (the sums are the same as row by row). Two
 * rows, not four: with four, the short or unequal rows of stencil and
 * irregular matrices spend more in the tails than the chains gain. */
KR_INLINE void single_rows(int pf, int32_t lo, int32_t hi,
                           const int32_t *restrict rp,
                           const int32_t *restrict ci, const double *restrict v,
                           double alpha, const double *restrict x, double beta,
                           double *restrict y)
{
    int32_t i = lo;
    for (; i + 2 <= hi; i += 2) {
        int32_t k0 = rp[i], k1 = rp[i + 1], len = rp[i + 2] - k1;
        if (pf) {
            __builtin_prefetch(v + k0 + KR_PF_AHEAD / sizeof *v);
            __builtin_prefetch(ci + k0 + KR_PF_AHEAD / sizeof *ci);
        }
        if (k1 - k0 < len) len = k1 - k0;
        double s0 = 0.0, s1 = 0.0;
        for (int32_t j = 0; j < len; j++) {
            s0 += v[k0 + j] * x[ci[k0 + j]];
            s1 += v[k1 + j] * x[ci[k1 + j]];
        }
        put_row(alpha, row_tail(k0 + len, k1, ci, v, x, s0), beta, y + i);
        put_row(alpha, row_tail(k1 + len, rp[i + 2], ci, v, x, s1), beta,
                y + i + 1);
    }
    if (i < hi)
        put_row(alpha, row_tail(rp[i], rp[i + 1], ci, v, x, 0.0), beta, y + i);
}

/* One group of g rows (2..KR_INODE_MAX) over len columns c[], values w[]
 * column-major: lane u of the accumulators is row u's running sum. wide:
 * 4-lane vectors (the AVX copy; a group of 3 rows loads 4 values a column
 * and drops the 4th lane); else 2-lane ones (SSE2, the baseline). pf:
 * prefetch the values ahead. */
#define B2(t) ((v2d){t, t})
#define B4(t) ((v4d){t, t, t, t})
#define Z2 ((v2d){0.0, 0.0})
#define Z4 ((v4d){0.0, 0.0, 0.0, 0.0})
/* the values KR_PF_AHEAD bytes on (prefetch) */
#define PFG(g)                                                                 \
    do {                                                                       \
        if (pf) __builtin_prefetch(w + (g)*j + KR_PF_AHEAD / sizeof *w);       \
    } while (0)
/* rows u, u + 1 (.. u + 3) of y from the lanes of accumulator a */
#define PUT2(a, u)                                                             \
    do {                                                                       \
        put_row(alpha, (a)[0], beta, y + (u));                                 \
        put_row(alpha, (a)[1], beta, y + (u) + 1);                             \
    } while (0)
#define PUT4(a, u)                                                             \
    do {                                                                       \
        PUT2(a, u);                                                            \
        put_row(alpha, (a)[2], beta, y + (u) + 2);                             \
        put_row(alpha, (a)[3], beta, y + (u) + 3);                             \
    } while (0)
KR_INLINE void group_rows(int wide, int pf, int g, int32_t len,
                          const int32_t *restrict c, const double *restrict w,
                          double alpha, const double *restrict x, double beta,
                          double *restrict y)
{
    if (g == 2) {
        v2d a = Z2, wa;
        for (int32_t j = 0; j < len; j++) {
            PFG(g);
            LD2(wa, w + 2 * j);
            a += wa * B2(x[c[j]]);
        }
        PUT2(a, 0);
    } else if (wide && g == 3) { /* the 4th lane reads one value on */
        v4d a = Z4, wa;
        for (int32_t j = 0; j < len; j++) {
            PFG(g);
            LD4(wa, w + 3 * j);
            a += wa * B4(x[c[j]]);
        }
        PUT2(a, 0);
        put_row(alpha, a[2], beta, y + 2);
    } else if (g == 3) {
        v2d a = Z2, wa;
        double d = 0.0;
        for (int32_t j = 0; j < len; j++) {
            PFG(g);
            double t = x[c[j]];
            LD2(wa, w + 3 * j);
            a += wa * B2(t);
            d += w[3 * j + 2] * t;
        }
        PUT2(a, 0);
        put_row(alpha, d, beta, y + 2);
    } else if (wide && g == 4) {
        v4d a = Z4, wa;
        for (int32_t j = 0; j < len; j++) {
            PFG(g);
            LD4(wa, w + 4 * j);
            a += wa * B4(x[c[j]]);
        }
        PUT4(a, 0);
    } else if (wide && g == 5) {
        v4d a = Z4, wa;
        double d = 0.0;
        for (int32_t j = 0; j < len; j++) {
            PFG(g);
            double t = x[c[j]];
            LD4(wa, w + 5 * j);
            a += wa * B4(t);
            d += w[5 * j + 4] * t;
        }
        PUT4(a, 0);
        put_row(alpha, d, beta, y + 4);
    } else if (wide) { /* 6 */
        v4d a = Z4, wa;
        v2d b = Z2, wb;
        for (int32_t j = 0; j < len; j++) {
            PFG(g);
            double t = x[c[j]];
            LD4(wa, w + 6 * j);
            LD2(wb, w + 6 * j + 4);
            a += wa * B4(t);
            b += wb * B2(t);
        }
        PUT4(a, 0);
        PUT2(b, 4);
    } else if (g == 4) {
        v2d a = Z2, b = Z2, wa, wb;
        for (int32_t j = 0; j < len; j++) {
            PFG(g);
            double t = x[c[j]];
            LD2(wa, w + 4 * j);
            LD2(wb, w + 4 * j + 2);
            a += wa * B2(t);
            b += wb * B2(t);
        }
        PUT2(a, 0);
        PUT2(b, 2);
    } else if (g == 5) {
        v2d a = Z2, b = Z2, wa, wb;
        double d = 0.0;
        for (int32_t j = 0; j < len; j++) {
            PFG(g);
            double t = x[c[j]];
            LD2(wa, w + 5 * j);
            LD2(wb, w + 5 * j + 2);
            a += wa * B2(t);
            b += wb * B2(t);
            d += w[5 * j + 4] * t;
        }
        PUT2(a, 0);
        PUT2(b, 2);
        put_row(alpha, d, beta, y + 4);
    } else { /* 6 */
        v2d a = Z2, b = Z2, e = Z2, wa, wb, we;
        for (int32_t j = 0; j < len; j++) {
            PFG(g);
            double t = x[c[j]];
            LD2(wa, w + 6 * j);
            LD2(wb, w + 6 * j + 2);
            LD2(we, w + 6 * j + 4);
            a += wa * B2(t);
            b += wb * B2(t);
            e += we * B2(t);
        }
        PUT2(a, 0);
        PUT2(b, 2);
        PUT2(e, 4);
    }
}

/* y[lo..hi) = alpha*A*x + beta*y; lo and hi are block boundaries or lie
 * inside runs of single rows, and b is the block that holds row lo. */
KR_INLINE void csr_range(int wide, int pf, const csr_impl *m, int32_t b,
                         int32_t lo, int32_t hi, double alpha,
                         const double *restrict x, double beta,
                         double *restrict y)
{
    const int32_t *restrict rp = m->rowptr, *restrict ci = m->colind;
    const double *restrict v = m->val;
    for (; lo < hi; b++) {
        int32_t e = m->bstart[b + 1] < hi ? m->bstart[b + 1] : hi;
        int g = m->g[b];
        if (g == 1)
            single_rows(pf, lo, e, rp, ci, v, alpha, x, beta, y);
        else
            group_rows(wide, pf, g, rp[lo + 1] - rp[lo], ci + rp[lo],
                       v + rp[lo], alpha, x, beta, y + lo);
        lo = e;
    }
}

#define KR_RANGE_FN(name, attr, wide, pf)                                      \
    attr static void name(const csr_impl *m, int32_t b, int32_t lo,            \
                          int32_t hi, double alpha, const double *x,           \
                          double beta, double *y)                              \
    {                                                                          \
        csr_range(wide, pf, m, b, lo, hi, alpha, x, beta, y);                  \
    }
KR_RANGE_FN(csr_range_base, , 0, 0)
KR_RANGE_FN(csr_range_base_pf, , 0, 1)
#if KR_CSR_AVX
KR_RANGE_FN(csr_range_avx, __attribute__((target("avx"))), 1, 0)
KR_RANGE_FN(csr_range_avx_pf, __attribute__((target("avx"))), 1, 1)
#endif

typedef void (*range_fn)(const csr_impl *, int32_t, int32_t, int32_t, double,
                         const double *, double, double *);

static int avx_off; /* kr_csr_cpu_use_avx(0) was called */

static int use_avx(void)
{
#if KR_CSR_AVX
    return !avx_off && __builtin_cpu_supports("avx");
#else
    return 0;
#endif
}

static int pf_mode = -1; /* kr_csr_cpu_prefetch */

static range_fn pick_range(const csr_impl *m)
{
    int pf = pf_mode < 0 ? m->prefetch : pf_mode;
#if KR_CSR_AVX
    if (use_avx()) return pf ? csr_range_avx_pf : csr_range_avx;
#endif
    return pf ? csr_range_base_pf : csr_range_base;
}

void kr_csr_cpu_prefetch(int mode) { pf_mode = mode; }

int kr_csr_cpu_use_avx(int on)
{
    if (on >= 0) avx_off = !on;
    return use_avx();
}

/* The block that holds row i (bstart[b] <= i < bstart[b + 1]). */
static int32_t block_of(const csr_impl *m, int32_t i)
{
    int32_t lo = 0, hi = m->nblocks - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (m->bstart[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Thread t's first row: its share of the rows, moved back to the start of
 * the group it falls in (a group is never split). */
static int32_t thread_start(const csr_impl *m, int t, int T)
{
    int32_t i = (int32_t)((int64_t)m->nrows * t / T);
    if (i == 0 || i == m->nrows) return i;
    int32_t b = block_of(m, i);
    return m->g[b] == 1 ? i : m->bstart[b];
}

static kr_status csr_apply(kr_ctx *ctx, void *impl, double alpha,
                           const double *x, double beta, double *y)
{
    const csr_impl *m = impl;
    int threads = m->nnz < 50000 ? 1 : kr_ctx_threads(ctx);
    range_fn range = pick_range(m);
    if (m->nrows == 0) return KR_OK;
    if (threads == 1) { /* no parallel region: its cost shows on small A */
        range(m, 0, 0, m->nrows, alpha, x, beta, y);
        return KR_OK;
    }
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        int32_t lo = thread_start(m, t, T), hi = thread_start(m, t + 1, T);
        if (lo < hi) range(m, block_of(m, lo), lo, hi, alpha, x, beta, y);
    }
    return KR_OK;
}

#define KR_MULTI_CHUNK 8

/* Columns [c0, c0 + w) of row i of Y: each entry summed in the row's
 * column order, as csr_apply sums one column. The value of the row's
 * entry j is v[j * step]. Inlined with a constant w, the w sums stay in
 * registers and the store is a few vector moves (a variable-size memcpy
 * per row was a library call, a tenth of the SpMM's time). */
KR_INLINE void multi_cols(const double *restrict v, int32_t step,
                          const int32_t *restrict ci, int32_t len, int32_t k,
                          int32_t c0, int w, const double *restrict X,
                          double *restrict y)
{
    double acc[KR_MULTI_CHUNK] = {0};
    for (int32_t j = 0; j < len; j++) {
        double a = v[(size_t)j * step];
        const double *x = X + (size_t)ci[j] * k + c0;
        for (int c = 0; c < w; c++)
            acc[c] += a * x[c];
    }
    for (int c = 0; c < w; c++)
        y[c0 + c] = acc[c];
}

/* The k columns of row i (in block b), 8 at a time, then 4, then the
 * rest. A group's values are column-major (interleave_groups), so value j
 * of row r0 + u is at base + j * g + u. */
KR_INLINE void csr_multi_row(const csr_impl *m, int32_t b, int32_t i, int32_t k,
                             const double *restrict X, double *restrict Y)
{
    int32_t g = m->g[b], r0 = m->bstart[b];
    int32_t base = g == 1 ? m->rowptr[i] : m->rowptr[r0];
    int32_t len = m->rowptr[i + 1] - m->rowptr[i];
    int32_t step = g == 1 ? 1 : g, off = g == 1 ? 0 : i - r0;
    const int32_t *ci = m->colind + m->rowptr[i];
    const double *v = m->val + base + off;
    double *y = Y + (size_t)i * k;
    int32_t c0 = 0;
    for (; c0 + KR_MULTI_CHUNK <= k; c0 += KR_MULTI_CHUNK)
        multi_cols(v, step, ci, len, k, c0, KR_MULTI_CHUNK, X, y);
    if (c0 + 4 <= k) {
        multi_cols(v, step, ci, len, k, c0, 4, X, y);
        c0 += 4;
    }
    if (c0 < k) multi_cols(v, step, ci, len, k, c0, k - c0, X, y);
}

/* Rows [lo, hi), the first in block b. */
KR_INLINE void csr_multi_range(const csr_impl *m, int32_t b, int32_t lo,
                               int32_t hi, int32_t k, const double *X,
                               double *Y)
{
    for (int32_t i = lo; i < hi; i++) {
        while (m->bstart[b + 1] <= i)
            b++;
        csr_multi_row(m, b, i, k, X, Y);
    }
}

typedef void (*multi_fn)(const csr_impl *, int32_t, int32_t, int32_t, int32_t,
                         const double *, double *);

static void csr_multi_base(const csr_impl *m, int32_t b, int32_t lo, int32_t hi,
                           int32_t k, const double *X, double *Y)
{
    csr_multi_range(m, b, lo, hi, k, X, Y);
}

#if KR_CSR_AVX
/* AVX: the eight sums of a chunk in two registers */
__attribute__((target("avx"))) static void
csr_multi_avx(const csr_impl *m, int32_t b, int32_t lo, int32_t hi, int32_t k,
              const double *X, double *Y)
{
    csr_multi_range(m, b, lo, hi, k, X, Y);
}
#endif

static multi_fn pick_multi(void)
{
#if KR_CSR_AVX
    if (use_avx()) return csr_multi_avx;
#endif
    return csr_multi_base;
}

/* Y = A X, row-major: each thread a contiguous share of the rows, cut at
 * group boundaries as csr_apply cuts them (a run of single rows is one
 * block however long, so blocks are no unit of work). */
static kr_status csr_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                 const double *X, double *Y)
{
    const csr_impl *m = impl;
    int threads = (int64_t)m->nnz * k < 50000 ? 1 : kr_ctx_threads(ctx);
    if (m->nrows == 0) return KR_OK;
    multi_fn rows = pick_multi();
    if (threads == 1) {
        rows(m, 0, 0, m->nrows, k, X, Y);
        return KR_OK;
    }
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        int32_t lo = thread_start(m, t, T), hi = thread_start(m, t + 1, T);
        if (lo < hi) rows(m, block_of(m, lo), lo, hi, k, X, Y);
    }
    return KR_OK;
}

void kr_csr_cpu_inodes(const void *impl, int32_t *groups, int32_t *rows)
{
    const csr_impl *m = impl;
    *groups = m->groups;
    *rows = m->grouped;
}

static size_t csr_bytes(const void *impl)
{
    const csr_impl *m = impl;
    return ((size_t)m->nrows + 1) * 4 + (size_t)m->nnz * 12 +
           ((size_t)m->nblocks + 1) * 4 + (size_t)m->nblocks;
}

static int64_t csr_stored(const void *impl)
{
    return ((const csr_impl *)impl)->nnz;
}

static void csr_destroy(kr_ctx *ctx, void *impl)
{
    (void)ctx;
    if (impl) csr_free_impl(impl);
}

const kr_format_ops kr_csr_cpu_ops = {
    .name = "csr",
    .build = csr_build,
    .apply = csr_apply,
    .bytes = csr_bytes,
    .destroy = csr_destroy,
    .stored = csr_stored,
    .update_values = csr_update_values,
    .apply_multi = csr_apply_multi,
};
