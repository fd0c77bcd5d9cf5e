/* powerlaw:N,mean,shape: an N x N nonsymmetric matrix with strongly skewed
 * row lengths. Row i has length L_i = min(N, 1 + floor(s Y_i)), where Y_i =
 * X_i - 1 and X_i is Pareto with the given shape a (P(X > x) = x^-a for
 * x >= 1, density exponent a + 1; default 1.5; shifted so that rows of
 * length 1 occur; a smaller shape gives a heavier tail). The
 * scale s is the largest that keeps sum L_i <= floor(mean N), found by
 * bisection, so the mean is met closely and nnz is known before anything
 * big is allocated. Row i holds the diagonal and L_i - 1 distinct random
 * columns, off-diagonal values uniform in [-1, 1) and a_ii = 1 + sum |a_ij|
 * (strictly diagonally dominant). Every random number comes from a
 * splitmix64 stream keyed by a fixed seed and the row, so the matrix
 * depends on the spec only, not on the thread count. */
#include "core/error.h"
#include "data/gen.h"

#include <math.h>
#include <stdlib.h>

#define PL_SEED 0x6b72796c6f763031ull /* fixed: same spec, same matrix */
#define PL_BISECT 64

/* The start of row i's stream number `stream`. */
static uint64_t row_state(int32_t i, uint64_t stream)
{
    return kr_gen_mix64(PL_SEED ^
                        kr_gen_mix64(((uint64_t)(uint32_t)i << 2) | stream));
}

/* ------------------------------------------------------------ row lengths */

/* Y_i = X_i - 1 >= 0 */
static double shifted_pareto(int32_t i, double shape)
{
    uint64_t s = row_state(i, 0);
    double u = (double)((kr_gen_next64(&s) >> 11) + 1) * 0x1.0p-53; /* (0, 1] */
    return pow(u, -1.0 / shape) - 1.0;
}

static int32_t row_len(double scale, double y, int32_t N)
{
    double l = 1.0 + floor(scale * y);
    return l > N ? N : (int32_t)l;
}

static int64_t total_len(const double *x, int32_t N, double scale, int nt)
{
    int64_t sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum) num_threads(nt)
    for (int32_t i = 0; i < N; i++)
        sum += row_len(scale, x[i], N);
    return sum;
}

/* The largest scale whose total length is <= target (up to rounding);
 * the total is monotone in the scale and scale 0 gives N <= target. */
static double find_scale(const double *x, int32_t N, int64_t target, int nt)
{
    double lo = 0, hi = 1;
    for (; total_len(x, N, hi, nt) <= target; hi *= 2) {
        if (hi > 0x1p100) return hi; /* every row is already full */
        lo = hi;
    }
    for (int it = 0; it < PL_BISECT && hi - lo > 1e-12 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (total_len(x, N, mid, nt) <= target)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Row i: len - 1 off-diagonal columns from the N - 1 others, then the
 * diagonal inserted in order, values, and a_ii = 1 + sum |a_ij|. */
static void fill_row(int32_t i, int32_t N, int32_t len, int32_t *col,
                     double *val)
{
    uint64_t s = row_state(i, 1);
    int32_t p = kr_gen_sample_with(&s, len - 1, N, i, col);
    kr_gen_dominant_values(&s, len, p, val);
}

kr_status kr_gen_powerlaw(kr_ctx *ctx, int32_t N, double mean, double shape,
                          kr_csr *A)
{
    kr_status st = KR_OK;
    int nt = kr_gen_threads(ctx, N);
    if (mean > N) mean = N; /* the default 15 with N < 15 */
    double *x = malloc(sizeof *x * (size_t)N);
    if (!x)
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "powerlaw: out of host memory for %d row lengths", N);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int32_t i = 0; i < N; i++)
        x[i] = shifted_pareto(i, shape);
    double scale = find_scale(x, N, (int64_t)floor(mean * (double)N), nt);
    int64_t nnz = total_len(x, N, scale, nt);
    KR_CHECK(st, kr_csr_alloc(ctx, N, N, (int32_t)nnz, A), done);
    for (int32_t i = 0; i < N; i++)
        A->rowptr[i + 1] = A->rowptr[i] + row_len(scale, x[i], N);
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
    for (int32_t i = 0; i < N; i++)
        fill_row(i, N, A->rowptr[i + 1] - A->rowptr[i],
                 A->colind + A->rowptr[i], A->val + A->rowptr[i]);
done:
    free(x);
    return st;
}
