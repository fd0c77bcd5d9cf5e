/* VSR and HYB on the shapes that break segment reductions: a row spanning
 * many chunks, many empty rows, rows ending exactly at chunk boundaries, a
 * chunk larger than the matrix; HYB's width rule on known answers, an empty
 * COO part and an empty ELL part; alpha/beta combinations, beta = 0 over
 * NaN, and bitwise determinism. Every check runs on the CPU, and again on
 * the GPU when one is usable (skipped visibly otherwise). */
#include "spmv/hyb.h"
#include "spmv/vsr.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const FORMATS[] = {"vsr", "hyb"};
static const double COEF[][2] = {{1.0, 0.0},  {-2.0, 0.5}, {0.0, 3.0},
                                 {0.0, 0.0},  {1.0, 1.0},  {0.5, -1.0},
                                 {-1.0, 0.0}, {3.0, -0.25}};
#define NCOEF (sizeof COEF / sizeof COEF[0])

/* n x m CSR whose row i has len[i] entries at spread-out columns. */
static void csr_from_lengths(kr_ctx *ctx, int32_t n, int32_t m,
                             const int32_t *len, uint64_t seed, kr_csr *A)
{
    int64_t nnz = 0;
    for (int32_t i = 0; i < n; i++)
        nnz += len[i];
    ck_assert_int_eq(kr_csr_alloc(ctx, n, m, (int32_t)nnz, A), KR_OK);
    uint64_t s = seed;
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        ck_assert_int_le(len[i], m);
        for (int32_t j = 0; j < len[i]; j++) {
            A->colind[k] = (int32_t)((int64_t)j * m / len[i]);
            A->val[k++] = kt_rand_uniform(&s);
        }
        A->rowptr[i + 1] = k;
    }
}

/* y = alpha*A*x + beta*y0 through `format`, y poisoned with NaN when
 * beta == 0; out gets the result. */
static void run_format(kr_ctx *ctx, const kr_csr *A, const char *format,
                       const double *x, double alpha, double beta,
                       const double *y0, double *out)
{
    kr_matrix *M;
    kr_vec *vx, *vy;
    ck_assert_msg(kr_matrix_create(ctx, A, format, &M) == KR_OK, "%s: %s",
                  format, kr_ctx_error(ctx));
    ck_assert_int_eq(kr_vec_create(ctx, A->ncols, &vx), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, A->nrows, &vy), KR_OK);
    ck_assert_int_eq(kr_vec_upload(vx, x), KR_OK);
    if (beta == 0.0)
        ck_assert_int_eq(kr_vec_fill(vy, NAN), KR_OK);
    else
        ck_assert_int_eq(kr_vec_upload(vy, y0), KR_OK);
    ck_assert_int_eq(kr_matrix_apply(M, alpha, vx, beta, vy), KR_OK);
    ck_assert_int_eq(kr_vec_download(vy, out), KR_OK);
    kr_vec_destroy(vx);
    kr_vec_destroy(vy);
    kr_matrix_destroy(M);
}

/* Both formats, every alpha/beta pair, against the plain CSR loop. */
static void check_all(kr_ctx *ctx, const kr_csr *A, double tol)
{
    size_t n = (size_t)A->nrows + 1, m = (size_t)A->ncols + 1;
    double *x = malloc(m * 8), *y0 = malloc(n * 8), *ax = malloc(n * 8);
    double *y = malloc(n * 8), *ref = malloc(n * 8);
    uint64_t s = 99;
    for (int32_t j = 0; j < A->ncols; j++)
        x[j] = kt_rand_uniform(&s);
    for (int32_t i = 0; i < A->nrows; i++)
        y0[i] = kt_rand_uniform(&s);
    kr_csr_matvec(A, x, ax);
    for (size_t f = 0; f < 2; f++)
        for (size_t c = 0; c < NCOEF; c++) {
            double al = COEF[c][0], be = COEF[c][1];
            for (int32_t i = 0; i < A->nrows; i++)
                ref[i] = al * ax[i] + (be == 0.0 ? 0.0 : be * y0[i]);
            run_format(ctx, A, FORMATS[f], x, al, be, y0, y);
            double d = kt_rel_diff(A->nrows, y, ref);
            ck_assert_msg(d <= tol, "%s %d x %d nnz %d (alpha %g beta %g): %g",
                          FORMATS[f], A->nrows, A->ncols, A->nnz, al, be, d);
        }
    free(x), free(y0), free(ax), free(y), free(ref);
}

/* One row holding all n columns among rows of 1..3 entries. */
static void long_row(kr_ctx *ctx)
{
    const int32_t sizes[] = {KR_VSR_CHUNK * 3, 5000, 20011};
    for (size_t t = 0; t < 3; t++) {
        int32_t n = sizes[t];
        int32_t *len = malloc((size_t)n * sizeof *len);
        for (int32_t i = 0; i < n; i++)
            len[i] = i == n / 3 ? n : 1 + i % 3;
        kr_csr A;
        csr_from_lengths(ctx, n, n, len, 7 + t, &A);
        check_all(ctx, &A, 1e-12);
        kr_csr_free(&A);
        free(len);
    }
}

/* Nine in ten rows empty, runs of empty rows at both ends and across chunk
 * boundaries, and rows long enough to span chunks between them. */
static void empty_rows(kr_ctx *ctx)
{
    int32_t n = 7000;
    int32_t *len = calloc((size_t)n, sizeof *len);
    uint64_t s = 3;
    for (int32_t i = 100; i < n - 100; i++)
        if (kt_rand_u64(&s) % 10 == 0) len[i] = 1 + kt_rand_u64(&s) % 600;
    kr_csr A;
    csr_from_lengths(ctx, n, 900, len, 5, &A);
    check_all(ctx, &A, 1e-12);
    kr_csr_free(&A);
    free(len);
}

/* Rows of 32*j entries, so row ends fall on step and chunk boundaries, a
 * row exactly one chunk long, and neighbours one shorter or longer. */
static void chunk_boundaries(kr_ctx *ctx)
{
    const int32_t pattern[] = {KR_VSR_CHUNK,
                               32,
                               64,
                               96,
                               KR_VSR_CHUNK,
                               2 * KR_VSR_CHUNK,
                               KR_VSR_CHUNK - 1,
                               1,
                               KR_VSR_CHUNK + 1,
                               0,
                               31,
                               33,
                               KR_VSR_CHUNK};
    int32_t np = sizeof pattern / sizeof *pattern, n = 6 * np;
    int32_t len[6 * 13];
    for (int32_t i = 0; i < n; i++)
        len[i] = pattern[i % np];
    kr_csr A;
    csr_from_lengths(ctx, n, 2 * KR_VSR_CHUNK, len, 11, &A);
    check_all(ctx, &A, 1e-13);
    kr_csr_free(&A);
    /* every row exactly one chunk: no row crosses a boundary */
    for (int32_t i = 0; i < 10; i++)
        len[i] = KR_VSR_CHUNK;
    csr_from_lengths(ctx, 10, KR_VSR_CHUNK, len, 12, &A);
    check_all(ctx, &A, 1e-13);
    kr_csr_free(&A);
}

/* Fewer nonzeros than one chunk, n = 1, nnz = 0, n = 0. */
static void tiny(kr_ctx *ctx)
{
    kr_csr A;
    kt_random_csr(ctx, 20, 30, 4, 0, 1, &A); /* nnz < KR_VSR_CHUNK */
    ck_assert_int_lt(A.nnz, KR_VSR_CHUNK);
    check_all(ctx, &A, 1e-14);
    kr_csr_free(&A);
    const int32_t one[][2] = {{1, 1}, {1, 0}, {1, 1000}};
    for (int t = 0; t < 3; t++) {
        int32_t l = one[t][1];
        csr_from_lengths(ctx, 1, one[t][0] * (l ? l : 1), &l, 2, &A);
        check_all(ctx, &A, 1e-13);
        kr_csr_free(&A);
    }
    ck_assert_int_eq(kr_csr_alloc(ctx, 300, 40, 0, &A), KR_OK);
    check_all(ctx, &A, 0.0);
    kr_csr_free(&A);
    ck_assert_int_eq(kr_csr_alloc(ctx, 0, 0, 0, &A), KR_OK);
    check_all(ctx, &A, 0.0);
    kr_csr_free(&A);
}

/* Power-law row lengths (the matrices VSR is for), shuffled. */
static void power_law(kr_ctx *ctx, int32_t n, kr_csr *A)
{
    int32_t *len = malloc((size_t)n * sizeof *len);
    uint64_t s = 21;
    for (int32_t i = 0; i < n; i++) {
        double u = (kt_rand_uniform(&s) + 1.0001) / 2.0001;
        double l = pow(u, -1.4);
        len[i] = l > n ? n : (int32_t)l;
    }
    csr_from_lengths(ctx, n, n, len, 4, A);
    free(len);
}

static void skewed(kr_ctx *ctx)
{
    kr_csr A;
    power_law(ctx, 30000, &A);
    check_all(ctx, &A, 1e-12);
    kr_csr_free(&A);
}

/* Two applies give the same bits (and on the CPU, any thread count). */
static void deterministic(kr_ctx *ctx)
{
    kr_csr A;
    power_law(ctx, 40000, &A);
    ck_assert_int_gt(A.nnz, 50000); /* large enough for OpenMP */
    size_t n = (size_t)A.nrows;
    double *x = malloc(n * 8), *y1 = malloc(n * 8), *y2 = malloc(n * 8);
    uint64_t s = 8;
    for (size_t j = 0; j < n; j++)
        x[j] = kt_rand_uniform(&s);
    for (size_t f = 0; f < 2; f++) {
        if (kr_ctx_device(ctx) == KR_DEVICE_CPU) kr_ctx_set_threads(ctx, 1);
        run_format(ctx, &A, FORMATS[f], x, 1.5, 0.0, NULL, y1);
        if (kr_ctx_device(ctx) == KR_DEVICE_CPU) kr_ctx_set_threads(ctx, 3);
        for (int rep = 0; rep < 3; rep++) {
            run_format(ctx, &A, FORMATS[f], x, 1.5, 0.0, NULL, y2);
            ck_assert_msg(memcmp(y1, y2, n * 8) == 0, "%s not deterministic",
                          FORMATS[f]);
        }
    }
    free(x), free(y1), free(y2);
    kr_csr_free(&A);
}

/* Padding ratio of `format` on A. */
static double padding(kr_ctx *ctx, const kr_csr *A, const char *format)
{
    kr_matrix *M;
    ck_assert_int_eq(kr_matrix_create(ctx, A, format, &M), KR_OK);
    ck_assert_uint_gt(kr_matrix_bytes(M), 0);
    double r = kr_matrix_padding_ratio(M);
    kr_matrix_destroy(M);
    return r;
}

/* K by the one-third rule on known answers; an empty COO part; an empty
 * ELL part (K = 0); padding ratio = (n*K + remainder) / nnz. */
static void hyb_width(kr_ctx *ctx)
{
    kr_csr A;
    int32_t K;
    /* >= 5 entries: 3 rows of 9 = a third; >= 6: only 2 */
    const int32_t a[] = {0, 0, 1, 2, 3, 3, 5, 8, 10};
    csr_from_lengths(ctx, 9, 10, a, 1, &A);
    ck_assert_int_eq(kr_hyb_width(ctx, &A, &K), KR_OK);
    ck_assert_int_eq(K, 5);
    ck_assert_double_eq_tol(padding(ctx, &A, "hyb"), (45.0 + 8.0) / 32.0,
                            1e-15);
    ck_assert_double_eq(padding(ctx, &A, "vsr"), 1.0);
    check_all(ctx, &A, 1e-14);
    kr_csr_free(&A);
    /* 3 of 10 rows nonempty: no width reaches a third; mean 6 -> K = 6 */
    const int32_t b[] = {0, 0, 0, 20, 0, 0, 20, 0, 20, 0};
    csr_from_lengths(ctx, 10, 20, b, 2, &A);
    ck_assert_int_eq(kr_hyb_width(ctx, &A, &K), KR_OK);
    ck_assert_int_eq(K, 6);
    ck_assert_double_eq_tol(padding(ctx, &A, "hyb"), (60.0 + 42.0) / 60.0,
                            1e-15);
    check_all(ctx, &A, 1e-14);
    kr_csr_free(&A);
    /* all rows of length 3: K = 3, COO part empty, no padding */
    int32_t c[50];
    for (int i = 0; i < 50; i++)
        c[i] = 3;
    csr_from_lengths(ctx, 50, 7, c, 3, &A);
    ck_assert_int_eq(kr_hyb_width(ctx, &A, &K), KR_OK);
    ck_assert_int_eq(K, 3);
    ck_assert_double_eq(padding(ctx, &A, "hyb"), 1.0);
    check_all(ctx, &A, 1e-14);
    kr_csr_free(&A);
    /* one row of 4 among 9 empty: mean 0.4 rounds to K = 0, all COO */
    const int32_t d[] = {0, 0, 0, 0, 4, 0, 0, 0, 0, 0};
    csr_from_lengths(ctx, 10, 5, d, 4, &A);
    ck_assert_int_eq(kr_hyb_width(ctx, &A, &K), KR_OK);
    ck_assert_int_eq(K, 0);
    ck_assert_double_eq(padding(ctx, &A, "hyb"), 1.0);
    check_all(ctx, &A, 1e-14);
    kr_csr_free(&A);
}

/* The VSR plan itself: spans and empty rows where the layout says. */
static void plan_layout(kr_ctx *ctx)
{
    const int32_t len[] = {
        0, KR_VSR_CHUNK + 5, 0, 0, KR_VSR_CHUNK - 5, 3 * KR_VSR_CHUNK, 0};
    kr_csr A;
    csr_from_lengths(ctx, 7, 3 * KR_VSR_CHUNK, len, 1, &A);
    for (int dev = 0; dev < 2; dev++) {
        kr_vsr_plan p;
        ck_assert_int_eq(
            kr_vsr_plan_build(ctx, A.nrows, A.rowptr, A.colind, A.val, dev, &p),
            KR_OK);
        ck_assert_int_eq(p.nchunks, 5);
        ck_assert_int_eq(p.nempty, 4);
        /* row 1 = chunks 0..1, row 4 ends exactly at chunk 2's end, row 5
         * fills chunks 2..4 */
        ck_assert_int_eq(p.nspans, 2);
        ck_assert_int_eq(p.nlong, 0);
        ck_assert_int_eq(p.span_row[0], 1);
        ck_assert_int_eq(p.span_lo[0], 1);
        ck_assert_int_eq(p.span_hi[0], 2);
        ck_assert_int_eq(p.span_row[1], 5);
        ck_assert_int_eq(p.span_lo[1], 2 * 2 + 1);
        ck_assert_int_eq(p.span_hi[1], 2 * 4);
        if (dev) {
            ck_assert_int_eq(p.nzrow[2], 5);
            ck_assert_int_eq(p.chunk_ord[0], -1);
            ck_assert_int_eq(p.chunk_ord[1], 0);
            ck_assert_int_eq(p.chunk_ord[2], 1);
            ck_assert_int_eq(p.chunk_ord[3], 2);
            ck_assert_uint_eq(p.heads[0], 1u);
        } else {
            ck_assert_int_eq(p.chunk_row[1], 1);
            ck_assert_int_eq(p.chunk_row[2], 5);
        }
        kr_vsr_plan_free(&p);
    }
    kr_csr_free(&A);
}

typedef void (*body_fn)(kr_ctx *ctx);
static const struct {
    const char *name;
    body_fn fn;
} BODIES[] = {{"long_row", long_row},
              {"empty_rows", empty_rows},
              {"chunk_boundaries", chunk_boundaries},
              {"tiny", tiny},
              {"skewed", skewed},
              {"deterministic", deterministic},
              {"hyb_width", hyb_width}};
#define NBODIES (sizeof BODIES / sizeof BODIES[0])

static void run_on(kr_device dev, int i)
{
    kr_ctx *ctx;
    if (kr_ctx_create(&ctx, dev) != KR_OK) {
        char what[64], why[600];
        snprintf(what, sizeof what, "gpu_%s", BODIES[i].name);
        snprintf(why, sizeof why, "no usable GPU: %s", kr_ctx_error(ctx));
        kt_skip(what, why);
        kr_ctx_destroy(ctx);
        return;
    }
    BODIES[i].fn(ctx);
    kr_ctx_destroy(ctx);
}

START_TEST(cpu_checks) { run_on(KR_DEVICE_CPU, _i); }
END_TEST

START_TEST(gpu_checks) { run_on(KR_DEVICE_CUDA, _i); }
END_TEST

START_TEST(vsr_plan_layout)
{
    kr_ctx *ctx;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
    plan_layout(ctx);
    kr_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("vsr");
    TCase *tc = tcase_create("vsr");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_loop_test(tc, cpu_checks, 0, (int)NBODIES);
    tcase_add_loop_test(tc, gpu_checks, 0, (int)NBODIES);
    tcase_add_test(tc, vsr_plan_layout);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
