/* Tests of the test-problem generators: exact sizes and nonzero counts,
 * exact symmetry against an explicit transpose, row sums, diagonal
 * dominance, block structure, positivity, the power-law statistics, and
 * strict rejection of malformed specs. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kr_ctx *new_ctx(void)
{
    kr_ctx *ctx = NULL;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
    return ctx;
}

/* Generates spec, which must succeed and pass kr_csr_check. */
static void gen(kr_ctx *ctx, const char *spec, kr_csr *A)
{
    kr_status st = kr_generate(ctx, spec, A);
    ck_assert_msg(st == KR_OK, "%s: %s", spec, kr_ctx_error(ctx));
    st = kr_csr_check(ctx, A);
    ck_assert_msg(st == KR_OK, "%s: %s", spec, kr_ctx_error(ctx));
    ck_assert_int_eq(A->nrows, A->ncols);
}

/* T = A^T; rows of T come out sorted because A is scanned by rows. */
static void transpose(kr_ctx *ctx, const kr_csr *A, kr_csr *T)
{
    ck_assert_int_eq(kr_csr_alloc(ctx, A->ncols, A->nrows, A->nnz, T), KR_OK);
    for (int32_t k = 0; k < A->nnz; k++)
        T->rowptr[A->colind[k] + 1]++;
    for (int32_t j = 0; j < A->ncols; j++)
        T->rowptr[j + 1] += T->rowptr[j];
    int32_t *next = malloc(sizeof *next * ((size_t)A->ncols + 1));
    memcpy(next, T->rowptr, sizeof *next * ((size_t)A->ncols + 1));
    for (int32_t i = 0; i < A->nrows; i++)
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            int32_t t = next[A->colind[k]]++;
            T->colind[t] = i;
            T->val[t] = A->val[k];
        }
    free(next);
}

static int same_pattern(const kr_csr *A, const kr_csr *B)
{
    return A->nrows == B->nrows && A->ncols == B->ncols && A->nnz == B->nnz &&
           !memcmp(A->rowptr, B->rowptr, sizeof(int32_t) * (A->nrows + 1u)) &&
           !memcmp(A->colind, B->colind, sizeof(int32_t) * (size_t)A->nnz);
}

/* Bitwise equality of pattern and values. */
static int same_matrix(const kr_csr *A, const kr_csr *B)
{
    return same_pattern(A, B) &&
           !memcmp(A->val, B->val, sizeof(double) * (size_t)A->nnz);
}

static void assert_symmetric(kr_ctx *ctx, const kr_csr *A, const char *spec)
{
    kr_csr T;
    transpose(ctx, A, &T);
    ck_assert_msg(same_matrix(A, &T), "%s is not exactly symmetric", spec);
    kr_csr_free(&T);
}

static double entry(const kr_csr *A, int32_t i, int32_t j)
{
    for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
        if (A->colind[k] == j) return A->val[k];
    return 0.0;
}

static double row_sum(const kr_csr *A, int32_t i)
{
    double s = 0;
    for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
        s += A->val[k];
    return s;
}

/* Neighbours of coordinate c in {c-1, c, c+1} inside [0, N). */
static int span(int32_t c, int32_t N) { return 1 + (c > 0) + (c < N - 1); }

/* ------------------------------------------------------------- Poisson */

/* Checks diagonal `diag`, off-diagonals -1, and the row sums: diag minus
 * the number of in-grid neighbours, so 0 inside and > 0 on the boundary. */
static void check_laplacian(const kr_csr *A, int32_t N, int dims, int full,
                            double diag)
{
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t c[3] = {i % N, (i / N) % N, dims == 3 ? i / N / N : 0};
        int nb = 0, interior = 1;
        if (full) { /* 27-point: product of the spans, minus the centre */
            nb = span(c[0], N) * span(c[1], N) * span(c[2], N) - 1;
        } else {
            for (int d = 0; d < dims; d++)
                nb += span(c[d], N) - 1;
        }
        for (int d = 0; d < dims; d++)
            interior &= c[d] > 0 && c[d] < N - 1;
        ck_assert_int_eq(A->rowptr[i + 1] - A->rowptr[i], nb + 1);
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            ck_assert(A->val[k] == (A->colind[k] == i ? diag : -1.0));
        double s = row_sum(A, i);
        ck_assert(s == diag - nb);
        ck_assert(interior ? s == 0 : s > 0);
    }
}

START_TEST(test_poisson2d)
{
    kr_ctx *ctx = new_ctx();
    const int32_t sizes[] = {1, 2, 3, 7, 30};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int32_t N = sizes[t];
        char spec[64];
        kr_csr A;
        snprintf(spec, sizeof spec, "poisson2d:%d", N);
        gen(ctx, spec, &A);
        ck_assert_int_eq(A.nrows, N * N);
        ck_assert_int_eq(A.nnz, 5 * N * N - 4 * N);
        assert_symmetric(ctx, &A, spec);
        check_laplacian(&A, N, 2, 0, 4.0);
        if (N >= 3) { /* row (1,1): south, west, centre, east, north */
            int32_t i = 1 + N;
            const int32_t want[5] = {i - N, i - 1, i, i + 1, i + N};
            for (int k = 0; k < 5; k++)
                ck_assert_int_eq(A.colind[A.rowptr[i] + k], want[k]);
        }
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(test_poisson3d)
{
    kr_ctx *ctx = new_ctx();
    const int32_t sizes[] = {1, 2, 5, 12};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int32_t N = sizes[t];
        char spec[64];
        kr_csr A;
        snprintf(spec, sizeof spec, "poisson3d:%d", N);
        gen(ctx, spec, &A);
        ck_assert_int_eq(A.nrows, N * N * N);
        ck_assert_int_eq(A.nnz, 7 * N * N * N - 6 * N * N);
        assert_symmetric(ctx, &A, spec);
        check_laplacian(&A, N, 3, 0, 6.0);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Per dimension a node pairs with itself (N pairs) and with each of its two
 * neighbours (N - 1 pairs each): 3N - 2, so nnz = (3N - 2)^3. */
START_TEST(test_poisson3d27)
{
    kr_ctx *ctx = new_ctx();
    const int32_t sizes[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int32_t N = sizes[t], m = 3 * N - 2;
        char spec[64];
        kr_csr A;
        snprintf(spec, sizeof spec, "poisson3d27:%d", N);
        gen(ctx, spec, &A);
        ck_assert_int_eq(A.nrows, N * N * N);
        ck_assert_int_eq(A.nnz, m * m * m);
        assert_symmetric(ctx, &A, spec);
        check_laplacian(&A, N, 3, 1, 26.0);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* ---------------------------------------------------- convection-diffusion */

START_TEST(test_convdiff2d)
{
    kr_ctx *ctx = new_ctx();
    const int32_t N = 10;
    const double ph = 10.0 / (N + 1); /* peclet * h */
    kr_csr A, D, Z, P, T;
    gen(ctx, "convdiff2d:10,10", &A);
    ck_assert_int_eq(A.nrows, N * N);
    ck_assert_int_eq(A.nnz, 5 * N * N - 4 * N);
    transpose(ctx, &A, &T);
    ck_assert(same_pattern(&A, &T));
    ck_assert(!same_matrix(&A, &T));
    int strict = 0;
    for (int32_t i = 0; i < A.nrows; i++) {
        double d = entry(&A, i, i), off = 0;
        ck_assert_double_eq_tol(d, 4 + 2 * ph, 1e-14);
        for (int32_t k = A.rowptr[i]; k < A.rowptr[i + 1]; k++)
            if (A.colind[k] != i) {
                ck_assert(A.val[k] < 0); /* M-matrix sign pattern */
                off += fabs(A.val[k]);
            }
        ck_assert(d >= off - 1e-12);
        strict += d > off + 1e-12;
    }
    ck_assert_int_eq(strict, 4 * N - 4); /* the boundary rows */
    ck_assert_double_eq_tol(entry(&A, 15, 14), -1 - ph, 1e-14); /* west */
    ck_assert_double_eq_tol(entry(&A, 15, 5), -1 - ph, 1e-14);  /* south */
    ck_assert(entry(&A, 15, 16) == -1.0 && entry(&A, 15, 25) == -1.0);
    /* the default peclet is 10; peclet 0 is the Poisson matrix */
    gen(ctx, "convdiff2d:10", &D);
    ck_assert(same_matrix(&A, &D));
    gen(ctx, "convdiff2d:10,0", &Z);
    gen(ctx, "poisson2d:10", &P);
    ck_assert(same_matrix(&Z, &P));
    kr_csr_free(&A);
    kr_csr_free(&D);
    kr_csr_free(&Z);
    kr_csr_free(&P);
    kr_csr_free(&T);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------ elasticity */

/* Plain CG without preconditioner; asserts p'Ap > 0 at every step and
 * returns the final relative residual. */
static double cg_check(const kr_csr *A, const double *b, int maxit)
{
    int32_t n = A->nrows;
    double *x = calloc((size_t)n, sizeof *x), *r = malloc(sizeof *r * n);
    double *p = malloc(sizeof *p * n), *q = malloc(sizeof *q * n);
    double rr = 0, bb;
    for (int32_t i = 0; i < n; i++) {
        r[i] = p[i] = b[i];
        rr += b[i] * b[i];
    }
    bb = rr;
    for (int it = 0; it < maxit && rr > 1e-24 * bb; it++) {
        double pq = 0, rr2 = 0;
        kr_csr_matvec(A, p, q);
        for (int32_t i = 0; i < n; i++)
            pq += p[i] * q[i];
        ck_assert_msg(pq > 0, "p'Ap = %g at CG step %d", pq, it);
        for (int32_t i = 0; i < n; i++) {
            x[i] += rr / pq * p[i];
            r[i] -= rr / pq * q[i];
            rr2 += r[i] * r[i];
        }
        for (int32_t i = 0; i < n; i++)
            p[i] = r[i] + rr2 / rr * p[i];
        rr = rr2;
    }
    kr_csr_matvec(A, x, q); /* true residual */
    double res = 0;
    for (int32_t i = 0; i < n; i++)
        res += (b[i] - q[i]) * (b[i] - q[i]);
    free(x);
    free(r);
    free(p);
    free(q);
    return sqrt(res / bb);
}

/* x^T A x for nx random vectors, all must be > 0. */
static void assert_positive(const kr_csr *A, int nx, uint64_t seed)
{
    int32_t n = A->nrows;
    double *x = malloc(sizeof *x * n), *y = malloc(sizeof *y * n);
    for (int t = 0; t < nx; t++) {
        double xAx = 0, xx = 0;
        for (int32_t i = 0; i < n; i++)
            x[i] = kt_rand_uniform(&seed);
        kr_csr_matvec(A, x, y);
        for (int32_t i = 0; i < n; i++) {
            xAx += x[i] * y[i];
            xx += x[i] * x[i];
        }
        ck_assert_msg(xAx > 1e-3 * xx, "x'Ax = %g, x'x = %g", xAx, xx);
    }
    free(x);
    free(y);
}

/* The three rows of a node have one pattern, made of whole node blocks. */
static void assert_node_blocks(const kr_csr *A)
{
    for (int32_t p = 0; p < A->nrows / 3; p++) {
        int32_t r0 = 3 * p, len = A->rowptr[r0 + 1] - A->rowptr[r0];
        ck_assert_int_eq(len % 3, 0);
        for (int a = 1; a < 3; a++) {
            ck_assert_int_eq(A->rowptr[r0 + a + 1] - A->rowptr[r0 + a], len);
            ck_assert(!memcmp(A->colind + A->rowptr[r0],
                              A->colind + A->rowptr[r0 + a],
                              sizeof(int32_t) * (size_t)len));
        }
        const int32_t *c = A->colind + A->rowptr[r0];
        for (int32_t k = 0; k < len; k += 3)
            ck_assert(c[k] % 3 == 0 && c[k + 1] == c[k] + 1 &&
                      c[k + 2] == c[k] + 2);
    }
}

START_TEST(test_elasticity3d)
{
    kr_ctx *ctx = new_ctx();
    const int32_t sizes[] = {1, 2, 4, 7};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int32_t N = sizes[t];
        char spec[64];
        kr_csr A;
        snprintf(spec, sizeof spec, "elasticity3d:%d", N);
        gen(ctx, spec, &A);
        ck_assert_int_eq(A.nrows, 3 * N * N * N);
        ck_assert_int_eq(A.nnz, 9 * (7 * N * N * N - 6 * N * N));
        assert_symmetric(ctx, &A, spec);
        assert_node_blocks(&A);
        assert_positive(&A, 5, 42 + t);
        /* node 0's centre block couples all three components */
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++)
                ck_assert(entry(&A, a, c) != 0);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* CG converges on the SPD generators with p'Ap > 0 throughout. */
START_TEST(test_spd_cg)
{
    kr_ctx *ctx = new_ctx();
    const char *specs[] = {"elasticity3d:6", "poisson3d27:8", "poisson3d:9",
                           "poisson2d:20"};
    for (size_t t = 0; t < sizeof specs / sizeof *specs; t++) {
        kr_csr A;
        uint64_t seed = 7;
        gen(ctx, specs[t], &A);
        double *b = malloc(sizeof *b * (size_t)A.nrows);
        for (int32_t i = 0; i < A.nrows; i++)
            b[i] = kt_rand_uniform(&seed);
        double res = cg_check(&A, b, 2000);
        ck_assert_msg(res < 1e-9, "%s: CG residual %g", specs[t], res);
        free(b);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------ power law */

/* Each row: diagonal present, off-diagonals in [-1, 1), and
 * a_ii = 1 + sum |a_ij|. Counts failures and asserts once at the end
 * (an assertion per entry would dominate the run time under Check). */
static void assert_dominant(const kr_csr *A)
{
    int32_t bad = 0, first = -1;
    for (int32_t i = 0; i < A->nrows; i++) {
        double d = NAN, off = 0;
        int ok = 1;
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            if (A->colind[k] == i) {
                d = A->val[k];
            } else {
                ok &= A->val[k] >= -1.0 && A->val[k] < 1.0;
                off += fabs(A->val[k]);
            }
        }
        ok &= d > off && fabs(d - (1.0 + off)) <= 1e-9 * (1 + off);
        if (!ok && bad++ == 0) first = i;
    }
    ck_assert_msg(bad == 0, "%d rows not dominant, the first is row %d", bad,
                  first);
}

START_TEST(test_powerlaw_stats)
{
    kr_ctx *ctx = new_ctx();
    const double means[] = {15, 5, 40};
    const char *specs[] = {"powerlaw:100000", "powerlaw:100000,5",
                           "powerlaw:100000,40"};
    for (int t = 0; t < 3; t++) {
        kr_csr A, B, T;
        kr_row_stats st;
        gen(ctx, specs[t], &A);
        gen(ctx, specs[t], &B);
        ck_assert_msg(same_matrix(&A, &B), "%s not deterministic", specs[t]);
        ck_assert_int_eq(A.nrows, 100000);
        kr_csr_row_stats(&A, &st);
        ck_assert_msg(fabs(st.mean - means[t]) < 0.2 * means[t], "%s: mean %g",
                      specs[t], st.mean);
        ck_assert_msg(st.max > 20 * st.mean, "%s: max %d", specs[t], st.max);
        ck_assert_msg(st.stddev > st.mean, "%s: std %g", specs[t], st.stddev);
        ck_assert_int_ge(st.min, 1);
        assert_dominant(&A);
        transpose(ctx, &A, &T);
        ck_assert(!same_pattern(&A, &T)); /* nonsymmetric */
        kr_csr_free(&A);
        kr_csr_free(&B);
        kr_csr_free(&T);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Off-diagonal columns spread over the whole range: their mean is near
 * (N - 1) / 2, and every tenth of [0, N) gets about a tenth of them. */
START_TEST(test_powerlaw_columns)
{
    kr_ctx *ctx = new_ctx();
    kr_csr A;
    gen(ctx, "powerlaw:50000,20", &A);
    double bins[10] = {0}, sum = 0, cnt = 0;
    for (int32_t i = 0; i < A.nrows; i++)
        for (int32_t k = A.rowptr[i]; k < A.rowptr[i + 1]; k++) {
            int32_t j = A.colind[k];
            if (j == i) continue;
            bins[(int64_t)j * 10 / A.ncols]++;
            sum += j;
            cnt++;
        }
    ck_assert(fabs(sum / cnt / (A.ncols - 1) - 0.5) < 0.01);
    for (int b = 0; b < 10; b++)
        ck_assert_msg(fabs(bins[b] / cnt - 0.1) < 0.01, "bin %d: %g", b,
                      bins[b] / cnt);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Small and extreme cases: dense rows (selection sampling), all rows full,
 * diagonal only, and a default mean above N lowered to N. */
START_TEST(test_powerlaw_edges)
{
    kr_ctx *ctx = new_ctx();
    kr_csr A;
    kr_row_stats st;
    gen(ctx, "powerlaw:400", &A); /* some rows longer than N / 4 */
    kr_csr_row_stats(&A, &st);
    ck_assert_int_gt(st.max, 100);
    ck_assert(fabs(st.mean - 15) < 3);
    assert_dominant(&A);
    kr_csr_free(&A);
    gen(ctx, "powerlaw:60,60", &A);
    ck_assert_int_eq(A.nnz, 60 * 60);
    assert_dominant(&A);
    kr_csr_free(&A);
    gen(ctx, "powerlaw:1000,1", &A);
    ck_assert_int_eq(A.nnz, 1000);
    int diag_only = 1;
    for (int32_t i = 0; i < 1000; i++)
        diag_only &= A.colind[i] == i && A.val[i] == 1.0;
    ck_assert(diag_only);
    kr_csr_free(&A);
    gen(ctx, "powerlaw:1", &A);
    ck_assert(A.nrows == 1 && A.nnz == 1 && A.val[0] == 1.0);
    kr_csr_free(&A);
    gen(ctx, "powerlaw:8", &A); /* mean 15 > N: every row full */
    ck_assert_int_eq(A.nnz, 64);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------ SpMM training families */

/* spec generated with 1 and with 2 threads (the threaded loops start at
 * 32768 items of work) must give the same matrix. */
static void gen_any_threads(const char *spec, kr_csr *A)
{
    kr_ctx *one = new_ctx(), *two = new_ctx();
    kr_csr B;
    ck_assert_int_eq(kr_ctx_set_threads(one, 1), KR_OK);
    ck_assert_int_eq(kr_ctx_set_threads(two, 2), KR_OK);
    gen(one, spec, A);
    gen(two, spec, &B);
    ck_assert_msg(same_matrix(A, &B), "%s differs between thread counts", spec);
    kr_csr_free(&B);
    kr_ctx_destroy(one);
    kr_ctx_destroy(two);
}

/* Row i is the contiguous range [i - l, i + u], 0 <= l, u <= width, and
 * every l and u in 0..width occurs; a new seed gives a new pattern. */
START_TEST(test_banded)
{
    kr_csr A, B;
    gen_any_threads("banded:20000,6,7", &A);
    int seen_l[7] = {0}, seen_u[7] = {0};
    for (int32_t i = 0; i < A.nrows; i++) {
        int32_t lo = A.colind[A.rowptr[i]], hi = A.colind[A.rowptr[i + 1] - 1];
        ck_assert_int_eq(hi - lo + 1, A.rowptr[i + 1] - A.rowptr[i]);
        ck_assert(lo <= i && i <= hi && i - lo <= 6 && hi - i <= 6);
        if (lo > 0) seen_l[i - lo]++;
        if (hi < A.nrows - 1) seen_u[hi - i]++;
    }
    for (int w = 0; w <= 6; w++)
        ck_assert_msg(seen_l[w] > 2000 && seen_u[w] > 2000, "width %d", w);
    assert_dominant(&A);
    kr_ctx *ctx = new_ctx();
    gen(ctx, "banded:20000,6,8", &B);
    ck_assert(!same_pattern(&A, &B));
    kr_csr_free(&B);
    gen(ctx, "banded:5,0", &B); /* width 0: the diagonal */
    ck_assert(B.nnz == 5 && B.colind[4] == 4 && B.val[4] == 1.0);
    kr_csr_free(&B);
    gen(ctx, "banded:3", &B); /* default width lowered to N - 1 */
    ck_assert_int_le(B.nnz, 9);
    kr_csr_free(&B);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Every row of a block row has the same columns: whole blocks, the
 * diagonal one and per_row others; the last block row is cut at N. */
START_TEST(test_blocks)
{
    kr_csr A;
    const int32_t size = 5, per_row = 3, N = 20003; /* last block: 3 rows */
    gen_any_threads("blocks:20003,5,3,11", &A);
    int32_t nb = (N + size - 1) / size, cut = 0;
    for (int32_t i = 0; i < N; i++) {
        const int32_t *c = A.colind + A.rowptr[i];
        int32_t len = A.rowptr[i + 1] - A.rowptr[i], blocks = 0, diag = 0;
        for (int32_t t = 0; t < len; t++) {
            if (t == 0 || c[t] / size != c[t - 1] / size) {
                blocks++;
                ck_assert_int_eq(c[t] % size, 0); /* a block starts whole */
            }
            diag |= c[t] / size == i / size;
        }
        ck_assert_msg(blocks == per_row + 1 && diag, "row %d", i);
        ck_assert(len == (per_row + 1) * size ||
                  (len == per_row * size + N % size && ++cut));
        if (i % size) /* same columns as the row before */
            ck_assert(len == A.rowptr[i] - A.rowptr[i - 1] &&
                      !memcmp(c, A.colind + A.rowptr[i - 1],
                              sizeof *c * (size_t)len));
    }
    ck_assert_int_gt(cut, 0); /* some rows hold the short last block */
    ck_assert_int_lt(cut, N / 2);
    assert_dominant(&A);
    kr_csr_free(&A);
    kr_ctx *ctx = new_ctx();
    gen(ctx, "blocks:12,4,2", &A); /* every block row is full */
    ck_assert_int_eq(A.nnz, 144);
    kr_csr_free(&A);
    gen(ctx, "blocks:4", &A); /* defaults lowered: one 4 x 4 block */
    ck_assert_int_eq(A.nnz, 16);
    kr_csr_free(&A);
    (void)nb;
    kr_ctx_destroy(ctx);
}
END_TEST

/* The first width rows and columns full, the diagonal, exact symmetry,
 * nnz = width N + (N - width)(width + 1), and CG-friendly: SPD by strict
 * dominance with a positive diagonal. */
START_TEST(test_arrow)
{
    kr_csr A;
    gen_any_threads("arrow:40000,3", &A);
    ck_assert_int_eq(A.nnz, 3 * 40000 + (40000 - 3) * 4);
    for (int32_t i = 0; i < A.nrows; i++) {
        int32_t len = A.rowptr[i + 1] - A.rowptr[i];
        ck_assert_int_eq(len, i < 3 ? 40000 : 4);
        ck_assert(entry(&A, i, i) == len);
        ck_assert(row_sum(&A, i) == 1.0);
    }
    kr_ctx *ctx = new_ctx();
    assert_symmetric(ctx, &A, "arrow:40000,3");
    kr_csr_free(&A);
    gen(ctx, "arrow:6,6", &A); /* width N: dense */
    ck_assert_int_eq(A.nnz, 36);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* A smaller shape gives a heavier tail at the same mean. */
START_TEST(test_powerlaw_shape)
{
    kr_ctx *ctx = new_ctx();
    kr_csr A, B, C;
    kr_row_stats a, b;
    gen(ctx, "powerlaw:100000,10,1.2", &A);
    gen(ctx, "powerlaw:100000,10,3", &B);
    gen(ctx, "powerlaw:100000,10,1.5", &C);
    kr_csr_row_stats(&A, &a);
    kr_csr_row_stats(&B, &b);
    ck_assert(fabs(a.mean - 10) < 2 && fabs(b.mean - 10) < 2);
    ck_assert_msg(a.max > 4 * b.max && a.stddev > 2 * b.stddev,
                  "max %d vs %d, std %g vs %g", a.max, b.max, a.stddev,
                  b.stddev);
    kr_csr D;
    gen(ctx, "powerlaw:100000,10", &D); /* shape 1.5 is the default */
    ck_assert(same_matrix(&C, &D));
    assert_dominant(&A);
    assert_dominant(&B);
    kr_csr_free(&A);
    kr_csr_free(&B);
    kr_csr_free(&C);
    kr_csr_free(&D);
    kr_ctx_destroy(ctx);
}
END_TEST

/* -------------------------------------------------------------- parsing */

START_TEST(test_bad_specs)
{
    static const char *bad[] = {"",
                                "poisson3d",
                                "poisson3d:",
                                "poisson3d:0",
                                "poisson3d:-3",
                                "poisson3d:abc",
                                "poisson3d:10x",
                                "nosuch:5",
                                "convdiff2d:10,abc",
                                "poisson3d:2000",
                                "powerlaw:10,0",
                                "powerlaw:10,11",
                                "poisson3d:10,5",
                                "convdiff2d:10,1,2",
                                "convdiff2d:10,-1",
                                "convdiff2d:10,",
                                "convdiff2d:10,nan",
                                "convdiff2d:10,inf",
                                "convdiff2d:10, 1",
                                "poisson3d: 10",
                                "poisson3d:+10",
                                "poisson3d:10 ",
                                "poisson3d:1e3",
                                "poisson3d:0x10",
                                "poisson3d:99999999999",
                                "POISSON3D:10",
                                ":5",
                                "poisson3d:5:5",
                                "poisson3d27:600",
                                "poisson2d:50000",
                                "elasticity3d:500",
                                "powerlaw:200000000",
                                "poisson3d:675",
                                "powerlaw:10,",
                                "powerlaw:10,2x",
                                "poisson",
                                "poisson3d27x:4",
                                "powerlaw:10,5,1",
                                "powerlaw:10,5,9",
                                "powerlaw:10,5,2,1",
                                "banded:10,10",
                                "banded:10,2.5",
                                "banded:10,2,-1",
                                "banded:10,2,1.5",
                                "blocks:10,0",
                                "blocks:10,11",
                                "blocks:10,5,2",
                                "blocks:10,5,1,2,3",
                                "arrow:10,0",
                                "arrow:10,11",
                                "arrow:10,2,2"};
    kr_ctx *ctx = new_ctx();
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        kr_csr A;
        memset(&A, 0x5a, sizeof A);
        kr_status st = kr_generate(ctx, bad[t], &A);
        ck_assert_msg(st == KR_ERR_ARG, "\"%s\" gave %s", bad[t],
                      kr_status_name(st));
        ck_assert(A.nrows == 0 && A.rowptr == NULL && A.val == NULL);
        const char *msg = kr_ctx_error(ctx);
        ck_assert_msg(strstr(msg, bad[t]) != NULL, "message \"%s\"", msg);
        /* size errors state the limit, syntax errors list the forms */
        ck_assert_msg(strstr(msg, "2147483647") || strstr(msg, "poisson3d:N "),
                      "message \"%s\"", msg);
    }
    ck_assert_int_eq(kr_generate(ctx, NULL, &(kr_csr){0}), KR_ERR_ARG);
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:4", NULL), KR_ERR_ARG);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Sizes are computed exactly in 64 bits: poisson3d:674 has 2140548512
 * nonzeros (fits), 675 has 2150094375 (does not); elasticity3d:900 has
 * n = 3 * 900^3 = 2187000000 rows. */
START_TEST(test_size_limit)
{
    kr_ctx *ctx = new_ctx();
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "poisson3d:675", &A), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "2150094375 nonzeros"));
    ck_assert_int_eq(kr_generate(ctx, "elasticity3d:900", &A), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "n = 2187000000 rows"));
    ck_assert_int_eq(kr_generate(ctx, "powerlaw:2147483647,1.5", &A),
                     KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "3221225470 nonzeros"));
    kr_ctx_destroy(ctx);
}
END_TEST

/* Sizes from the user are checked against the memory available before
 * anything is allocated (issue 16, item 6: poisson3d:600 grew past the
 * machine and was killed). KRYLOV_MEMORY_LIMIT stands in for a small
 * machine, so the test does not depend on this one's memory. */
START_TEST(test_memory_refused_first)
{
    kr_ctx *ctx = new_ctx();
    setenv("KRYLOV_MEMORY_LIMIT", "200M", 1);
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "poisson3d:600", &A), KR_ERR_NOMEM);
    ck_assert_msg(strstr(kr_ctx_error(ctx), "needs 20.71 GB of memory, but "
                                            "only 0.21 GB is available"),
                  "%s", kr_ctx_error(ctx));
    ck_assert_ptr_null(A.rowptr);
    ck_assert_int_eq(kr_generate(ctx, "powerlaw:10000000,20", &A),
                     KR_ERR_NOMEM);
    ck_assert_int_eq(kr_csr_alloc(ctx, 1000, 1000, 100000000, &A),
                     KR_ERR_NOMEM);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "100000000 nonzeros"));
    kr_vec *v = NULL;
    ck_assert_int_eq(kr_vec_create(ctx, 50000000, &v), KR_ERR_NOMEM);
    ck_assert_ptr_null(v);
    gen(ctx, "poisson3d:20", &A); /* small sizes still pass */
    kr_csr_free(&A);
    unsetenv("KRYLOV_MEMORY_LIMIT");
    kr_ctx_destroy(ctx);
}
END_TEST

/* Every generator named in the help text generates at a small size. */
START_TEST(test_help_names)
{
    kr_ctx *ctx = new_ctx();
    const char *h = kr_generator_help();
    int found = 0;
    for (const char *line = h; *line; line = strchr(line, '\n') + 1) {
        const char *colon = strchr(line, ':'), *nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        if (strncmp(line, "  ", 2) || line[2] == ' ' || !colon || colon > nl)
            continue; /* a continuation line */
        char spec[64];
        snprintf(spec, sizeof spec, "%.*s:4", (int)(colon - line - 2),
                 line + 2);
        kr_csr A;
        gen(ctx, spec, &A);
        kr_csr_free(&A);
        found++;
    }
    ck_assert_int_eq(found, 9);
    kr_ctx_destroy(ctx);
}
END_TEST

/* --------------------------------------------------------------- large */

START_TEST(test_large)
{
    kr_ctx *ctx = new_ctx();
    kr_csr A;
    kr_row_stats st;
    double t = kr_wtime();
    gen(ctx, "poisson3d:160", &A);
    printf("poisson3d:160: %d rows, %d nonzeros in %.2f s\n", A.nrows, A.nnz,
           kr_wtime() - t);
    ck_assert_int_eq(A.nnz, 7 * 160 * 160 * 160 - 6 * 160 * 160);
    kr_csr_free(&A);
    t = kr_wtime();
    gen(ctx, "powerlaw:2000000,15", &A);
    kr_csr_row_stats(&A, &st);
    printf("powerlaw:2000000,15: %d nonzeros in %.2f s, row lengths %d..%d, "
           "mean %.2f, std %.1f\n",
           A.nnz, kr_wtime() - t, st.min, st.max, st.mean, st.stddev);
    ck_assert(fabs(st.mean - 15) < 3 && st.stddev > st.mean);
    ck_assert_int_gt(st.max, 1000);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

static Suite *gen_suite(void)
{
    Suite *s = suite_create("gen");
    TCase *tc = tcase_create("structured");
    tcase_add_test(tc, test_poisson2d);
    tcase_add_test(tc, test_poisson3d);
    tcase_add_test(tc, test_poisson3d27);
    tcase_add_test(tc, test_convdiff2d);
    tcase_add_test(tc, test_elasticity3d);
    tcase_add_test(tc, test_spd_cg);
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    suite_add_tcase(s, tc);
    tc = tcase_create("powerlaw");
    tcase_add_test(tc, test_powerlaw_stats);
    tcase_add_test(tc, test_powerlaw_columns);
    tcase_add_test(tc, test_powerlaw_edges);
    tcase_add_test(tc, test_powerlaw_shape);
    tcase_add_test(tc, test_banded);
    tcase_add_test(tc, test_blocks);
    tcase_add_test(tc, test_arrow);
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    suite_add_tcase(s, tc);
    tc = tcase_create("specs");
    tcase_add_test(tc, test_bad_specs);
    tcase_add_test(tc, test_size_limit);
    tcase_add_test(tc, test_memory_refused_first);
    tcase_add_test(tc, test_help_names);
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    suite_add_tcase(s, tc);
    tc = tcase_create("large");
    tcase_add_test(tc, test_large);
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return kt_run(gen_suite()); }
