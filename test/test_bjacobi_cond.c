/* Block condition numbers of block-Jacobi (precond/block_cond.c):
 * cond_1 = ||B||_1 ||B^-1||_1 against a dense reference that reads the
 * blocks from the CSR and inverts them by Gauss-Jordan with row swaps (not
 * the library's implicit pivoting), on generated problems; blocks of known
 * condition (diagonal scalings, a shear, a singular block the policy
 * replaces); the summary; bad arguments; and the GPU against the CPU. */
#include "krylov.h"
#include "precond/bjacobi.h"
#include "precond/gje.h"
#include "precond/precond.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KMAX 32

/* ------------------------------------------------ the dense reference */

/* B = A(s:s+k, s:s+k), row-major, read entry by entry from the CSR. */
static void ref_block(const kr_csr *A, int32_t s, int32_t k, double *B)
{
    memset(B, 0, sizeof(double) * (size_t)(k * k));
    for (int32_t i = 0; i < k; i++)
        for (int32_t q = A->rowptr[s + i]; q < A->rowptr[s + i + 1]; q++) {
            int32_t j = A->colind[q] - s;
            if (j >= 0 && j < k) B[i * k + j] = A->val[q];
        }
}

/* X = B^-1 (row-major) by Gauss-Jordan on [B | I] with row swaps
 * (partial pivoting); B is overwritten. */
static void ref_inverse(int32_t k, double *B, double *X)
{
    for (int32_t i = 0; i < k * k; i++)
        X[i] = i % (k + 1) == 0 ? 1.0 : 0.0;
    for (int32_t c = 0; c < k; c++) {
        int32_t p = c;
        for (int32_t i = c + 1; i < k; i++)
            if (fabs(B[i * k + c]) > fabs(B[p * k + c])) p = i;
        for (int32_t j = 0; j < k; j++) {
            double t = B[c * k + j];
            B[c * k + j] = B[p * k + j], B[p * k + j] = t;
            t = X[c * k + j];
            X[c * k + j] = X[p * k + j], X[p * k + j] = t;
        }
        double d = B[c * k + c];
        for (int32_t j = 0; j < k; j++)
            B[c * k + j] /= d, X[c * k + j] /= d;
        for (int32_t i = 0; i < k; i++) {
            double f = B[i * k + c];
            if (i == c || f == 0.0) continue;
            for (int32_t j = 0; j < k; j++)
                B[i * k + j] -= f * B[c * k + j],
                    X[i * k + j] -= f * X[c * k + j];
        }
    }
}

/* the largest column sum of |M|, row-major k x k */
static double ref_norm1(int32_t k, const double *M)
{
    double m = 0.0;
    for (int32_t j = 0; j < k; j++) {
        double s = 0.0;
        for (int32_t i = 0; i < k; i++)
            s += fabs(M[i * k + j]);
        m = fmax(m, s);
    }
    return m;
}

static double ref_cond(const kr_csr *A, int32_t s, int32_t k)
{
    double B[KMAX * KMAX], X[KMAX * KMAX];
    ref_block(A, s, k, B);
    double nb = ref_norm1(k, B);
    ref_inverse(k, B, X);
    return nb * ref_norm1(k, X);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------- helpers */

static kr_precond *bjacobi(kr_ctx *ctx, const kr_csr *A,
                           const kr_precond_options *o)
{
    kr_precond *P = NULL;
    ck_assert_int_eq(kr_precond_create_opts(ctx, A, "bjacobi", o, &P), KR_OK);
    return P;
}

/* Every block of P against the reference; the summary against the
 * reference values sorted. Returns the number of blocks. */
static int32_t check_against_reference(kr_ctx *ctx, const kr_precond *P,
                                       const kr_csr *A)
{
    kr_block_cond c;
    ck_assert_int_eq(kr_precond_block_cond(ctx, P, A, &c), KR_OK);
    ck_assert_int_eq(c.nb, kr_precond_block_count(P));
    ck_assert_int_eq(c.starts[0], 0);
    ck_assert_int_eq(c.starts[c.nb], A->nrows);
    double *ref = malloc(sizeof(double) * (size_t)c.nb);
    for (int32_t b = 0; b < c.nb; b++) {
        int32_t s = c.starts[b], k = c.starts[b + 1] - s;
        ck_assert(k >= 1 && k <= KMAX && !c.replaced[b]);
        ref[b] = ref_cond(A, s, k);
        /* the two inverses differ by rounding amplified by cond */
        ck_assert_msg(fabs(c.cond[b] - ref[b]) <=
                          64.0 * k * DBL_EPSILON * ref[b] * ref[b],
                      "block %d: %.17g, reference %.17g", (int)b, c.cond[b],
                      ref[b]);
        ck_assert_double_ge(c.cond[b], 1.0 - 1e-12); /* cond >= 1 */
    }
    kr_block_cond_stats st;
    ck_assert_int_eq(kr_block_cond_summarize(ctx, &c, &st), KR_OK);
    qsort(ref, (size_t)c.nb, sizeof *ref, cmp_double);
    int32_t m = c.nb;
    double med = m % 2 ? ref[m / 2] : (ref[m / 2 - 1] + ref[m / 2]) / 2;
    ck_assert_int_eq(st.blocks, m);
    ck_assert_int_eq(st.replaced, 0);
    ck_assert_double_eq_tol(st.min, ref[0], 1e-10 * ref[0]);
    ck_assert_double_eq_tol(st.median, med, 1e-10 * med);
    ck_assert_double_eq_tol(st.max, ref[m - 1], 1e-10 * ref[m - 1]);
    ck_assert_double_eq(c.cond[st.max_block], st.max);
    free(ref);
    kr_block_cond_free(&c);
    return m;
}

/* ---------------------------------------------------------------- tests */

/* elasticity3d's 3 x 3 node blocks (--block-size 3), its default
 * 30-row blocks, poisson2d's 32-row blocks, and convdiff2d's (not
 * symmetric, so a 1-norm mistaken for the inf-norm shows). */
START_TEST(cond_matches_dense_reference)
{
    kr_ctx *ctx = kt_cpu();
    kr_precond_options o;
    kr_precond_options_default(&o);
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "elasticity3d:4", &A), KR_OK);
    o.block_size = 3;
    kr_precond *P = bjacobi(ctx, &A, &o);
    ck_assert_int_eq(check_against_reference(ctx, P, &A), 64);
    kr_precond_destroy(P);
    o.block_size = 32;
    P = bjacobi(ctx, &A, &o);
    ck_assert_int_eq(check_against_reference(ctx, P, &A), 7); /* 6x30+12 */
    kr_precond_destroy(P);
    kr_csr_free(&A);
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:12", &A), KR_OK);
    P = bjacobi(ctx, &A, &o);
    ck_assert_int_eq(check_against_reference(ctx, P, &A), 5); /* 4x32+16 */
    kr_precond_destroy(P);
    kr_csr_free(&A);
    ck_assert_int_eq(kr_generate(ctx, "convdiff2d:12", &A), KR_OK);
    P = bjacobi(ctx, &A, &o);
    ck_assert_int_eq(check_against_reference(ctx, P, &A), 5);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Blocks 2, 2, 2, 2, 3, 3 on the diagonal of a 14 x 14 matrix with
 * entries outside the blocks (which must not count):
 *   0: 3 diag(1, 1e-6)   cond 1e6
 *   1: [1 1; 0 1]        ||B||_1 = ||B^-1||_1 = 2 ([1 -1; 0 1]): cond 4
 *   2: diag(1, 1e-9)     cond 1e9  (above 1e8)
 *   3: diag(1, 1e-13)    cond 1e13 (above 1e12; each row's pivot passes
 *                        the row-relative test, so it is inverted)
 *   4: [1 0 0; 1 1 0; 1 0 1], inverse [1 0 0; -1 1 0; -1 0 1]: column
 *      sums 3 in both, cond_1 = 9 (in the inf-norm it would be 2 * 2)
 *   5: rows 0 and 1 equal: singular, replaced by the policy. */
static void known_matrix(kr_ctx *ctx, kr_csr *A)
{
    enum { N = 14 };
    double a[N * N] = {0};
    a[0 * N + 0] = 3.0, a[1 * N + 1] = 3e-6;
    a[2 * N + 2] = 1.0, a[2 * N + 3] = 1.0, a[3 * N + 3] = 1.0;
    a[4 * N + 4] = 1.0, a[5 * N + 5] = 1e-9;
    a[6 * N + 6] = 1.0, a[7 * N + 7] = 1e-13;
    for (int i = 8; i < 11; i++)
        a[i * N + 8] = 1.0, a[i * N + i] = 1.0;
    a[11 * N + 11] = 1.0, a[11 * N + 12] = 2.0;
    a[12 * N + 11] = 1.0, a[12 * N + 12] = 2.0, a[13 * N + 13] = 5.0;
    a[0 * N + 13] = 7.0, a[5 * N + 0] = -4.0, a[9 * N + 3] = 1e3; /* outside */
    kt_dense_csr(ctx, N, a, A);
}

START_TEST(cond_of_known_blocks)
{
    static const int32_t sizes[] = {2, 2, 2, 2, 3, 3};
    static const double want[] = {1e6, 4.0, 1e9, 1e13, 9.0};
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    known_matrix(ctx, &A);
    kr_precond_options o;
    kr_precond_options_default(&o);
    o.block_sizes = sizes;
    o.nblocks = 6;
    for (int pol = KR_SINGULAR_JACOBI; pol <= KR_SINGULAR_IDENTITY; pol++) {
        o.singular = (kr_singular_policy)pol;
        kr_precond *P = bjacobi(ctx, &A, &o);
        ck_assert_int_eq(kr_precond_singular_blocks(P), 1);
        kr_block_cond c;
        ck_assert_int_eq(kr_precond_block_cond(ctx, P, &A, &c), KR_OK);
        ck_assert_int_eq(c.nb, 6);
        for (int32_t b = 0; b < 5; b++) {
            ck_assert_int_eq(c.replaced[b], 0);
            ck_assert_double_eq_tol(c.cond[b], want[b],
                                    4 * DBL_EPSILON * want[b]);
        }
        ck_assert_int_eq(c.replaced[5], 1);
        ck_assert(isinf(c.cond[5]));
        kr_block_cond_stats st;
        ck_assert_int_eq(kr_block_cond_summarize(ctx, &c, &st), KR_OK);
        ck_assert(st.blocks == 6 && st.replaced == 1);
        ck_assert_double_eq(st.min, c.cond[1]);
        ck_assert_double_eq(st.max, c.cond[3]);
        ck_assert_int_eq(st.max_block, 3);
        ck_assert_double_eq(st.median, c.cond[0]); /* 4, 9, 1e6, 1e9, 1e13 */
        ck_assert_int_eq(st.high, 2);              /* 1e9 and 1e13 */
        ck_assert_int_eq(st.extreme, 1);           /* 1e13 */
        kr_block_cond_free(&c);
        kr_precond_destroy(P);
    }
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The replaced flags are the blocks kr_gje_invert calls singular (the
 * preconditioner's own rule), here a random matrix with empty rows. */
START_TEST(replaced_flags_follow_pivot_rule)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    kt_random_csr(ctx, 600, 600, 12, 1, 9, &A);
    for (int32_t i = 5; i < A.nrows; i += 97) /* empty rows: singular */
        for (int32_t q = A.rowptr[i]; q < A.rowptr[i + 1]; q++)
            A.val[q] = 0.0;
    kr_precond_options o;
    kr_precond_options_default(&o);
    o.block_size = 8;
    o.fixed = 1;
    kr_precond *P = bjacobi(ctx, &A, &o);
    kr_block_cond c;
    ck_assert_int_eq(kr_precond_block_cond(ctx, P, &A, &c), KR_OK);
    int32_t replaced = 0;
    for (int32_t b = 0; b < c.nb; b++) {
        double D[KMAX * KMAX];
        int32_t s = c.starts[b], k = c.starts[b + 1] - s;
        ref_block(&A, s, k, D);
        int singular = kr_gje_invert(k, D, KR_GJE_ROW_MAJOR) == KR_ERR_SINGULAR;
        ck_assert_int_eq(c.replaced[b], singular);
        ck_assert(singular ? isinf(c.cond[b]) : isfinite(c.cond[b]));
        replaced += singular;
    }
    ck_assert_int_eq(replaced, kr_precond_singular_blocks(P));
    ck_assert_int_ge(replaced, 5);
    kr_block_cond_free(&c);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The summary of given numbers: an even count (the median is the mean of
 * the two middle values), a replaced block left out of everything, and
 * non-finite values (an inverse that overflowed) above both thresholds. */
START_TEST(summary_of_given_values)
{
    kr_ctx *ctx = kt_cpu();
    double cond[] = {3, 1, 4, 1e13, INFINITY, 2, 10};
    unsigned char replaced[] = {0, 0, 0, 0, 1, 0, 0};
    kr_block_cond c = {.nb = 7, .cond = cond, .replaced = replaced};
    kr_block_cond_stats st;
    ck_assert_int_eq(kr_block_cond_summarize(ctx, &c, &st), KR_OK);
    ck_assert(st.blocks == 7 && st.replaced == 1);
    ck_assert(st.min == 1 && st.median == 3.5 && st.max == 1e13);
    ck_assert(st.max_block == 3 && st.high == 1 && st.extreme == 1);
    /* an overflowed inverse and a NaN (sorted last): 2 3 4 10 1e13 inf NaN */
    replaced[4] = 0;
    cond[1] = NAN;
    ck_assert_int_eq(kr_block_cond_summarize(ctx, &c, &st), KR_OK);
    ck_assert(st.replaced == 0 && st.min == 2 && st.median == 10);
    ck_assert(isnan(st.max) && st.max_block == 1);
    ck_assert(st.high == 3 && st.extreme == 3); /* 1e13, inf, NaN */
    kr_ctx_destroy(ctx);
}
END_TEST

/* Every block replaced: no statistics, no largest block. */
START_TEST(all_blocks_replaced)
{
    kr_ctx *ctx = kt_cpu();
    const double a[4] = {1, 1, 1, 1};
    kr_csr A;
    kt_dense_csr(ctx, 2, a, &A);
    kr_precond *P = bjacobi(ctx, &A, NULL);
    kr_block_cond c;
    kr_block_cond_stats st;
    ck_assert_int_eq(kr_precond_block_cond(ctx, P, &A, &c), KR_OK);
    ck_assert_int_eq(kr_block_cond_summarize(ctx, &c, &st), KR_OK);
    ck_assert(c.nb == 1 && c.replaced[0]);
    ck_assert(st.replaced == 1 && st.max_block == -1);
    ck_assert(isnan(st.min) && isnan(st.median) && isnan(st.max));
    ck_assert(st.high == 0 && st.extreme == 0);
    kr_block_cond_free(&c);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(bad_arguments)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A, B;
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:6", &A), KR_OK);
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:5", &B), KR_OK);
    kr_precond *J, *P = bjacobi(ctx, &A, NULL);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &J), KR_OK);
    kr_block_cond c;
    ck_assert_int_eq(kr_precond_block_cond(ctx, J, &A, &c), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "'jacobi'"));
    ck_assert_ptr_null(c.cond);
    ck_assert_int_eq(kr_precond_block_cond(ctx, P, &B, &c), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "25 x 25"));
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "36 x 36"));
    ck_assert_int_eq(kr_precond_block_cond(ctx, NULL, &A, &c), KR_ERR_ARG);
    ck_assert_int_eq(kr_precond_block_cond(ctx, P, &A, NULL), KR_ERR_ARG);
    ck_assert_int_eq(kr_block_cond_summarize(ctx, NULL, NULL), KR_ERR_ARG);
    kr_block_cond_free(&c); /* zeroed by the failed call: nothing held */
    kr_block_cond_free(NULL);
    kr_precond_destroy(J);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_csr_free(&B);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The GPU's inverses and singular flags give the CPU's numbers. */
START_TEST(gpu_cond_matches_cpu)
{
    kr_ctx *g = kt_gpu_or_skip("gpu_cond_matches_cpu");
    if (!g) return;
    kr_ctx *c = kt_cpu();
    kr_csr A;
    kt_random_csr(c, 3000, 3000, 30, 1, 21, &A);
    for (int32_t i = 7; i < A.nrows; i += 101) /* some singular blocks */
        for (int32_t q = A.rowptr[i]; q < A.rowptr[i + 1]; q++)
            A.val[q] = 0.0;
    kr_precond_options o;
    kr_precond_options_default(&o);
    o.block_size = 24;
    o.fixed = 1;
    kr_precond *Pg = bjacobi(g, &A, &o), *Pc = bjacobi(c, &A, &o);
    kr_block_cond cg, cc;
    ck_assert_int_eq(kr_precond_block_cond(g, Pg, &A, &cg), KR_OK);
    ck_assert_int_eq(kr_precond_block_cond(c, Pc, &A, &cc), KR_OK);
    ck_assert_int_eq(cg.nb, cc.nb);
    for (int32_t b = 0; b < cc.nb; b++) {
        ck_assert_int_eq(cg.replaced[b], cc.replaced[b]);
        if (cc.replaced[b]) continue;
        ck_assert_double_eq_tol(cg.cond[b], cc.cond[b],
                                1e3 * DBL_EPSILON * cc.cond[b] * cc.cond[b]);
    }
    kr_block_cond_free(&cg);
    kr_block_cond_free(&cc);
    kr_precond_destroy(Pg);
    kr_precond_destroy(Pc);
    kr_csr_free(&A);
    kr_ctx_destroy(c);
    kr_ctx_destroy(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bjacobi_cond");
    TCase *t = tcase_create("bjacobi_cond");
    tcase_set_timeout(t, KT_HANG_GUARD_S);
    tcase_add_test(t, cond_matches_dense_reference);
    tcase_add_test(t, cond_of_known_blocks);
    tcase_add_test(t, replaced_flags_follow_pivot_rule);
    tcase_add_test(t, summary_of_given_values);
    tcase_add_test(t, all_blocks_replaced);
    tcase_add_test(t, bad_arguments);
    tcase_add_test(t, gpu_cond_matches_cpu);
    suite_add_tcase(s, t);
    return kt_run(s);
}
