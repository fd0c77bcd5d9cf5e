/* ELLR and PELLR: their host layouts (column-major padding, the stable sort
 * by row length, per-slice widths and offsets), ELLR's refusal of skewed
 * matrices, PELLR's padding on them, and SpMV against the plain CSR loop on
 * awkward sizes and every alpha/beta case, on the CPU and (when one is
 * usable) on the GPU. */
#include "backend_check.h"
#include "spmv/ellr.h"
#include "spmv/pellr.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An n x m matrix whose row i has len[i] entries (len[i] <= m), spread over
 * the columns: entry t lies in [t*m/L, (t+1)*m/L), so columns are sorted
 * and distinct. */
static void csr_from_lengths(kr_ctx *ctx, int32_t n, int32_t m,
                             const int32_t *len, uint64_t seed, kr_csr *A)
{
    int64_t nnz = 0;
    for (int32_t i = 0; i < n; i++)
        nnz += len[i];
    ck_assert_int_eq(kr_csr_alloc(ctx, n, m, (int32_t)nnz, A), KR_OK);
    uint64_t s = seed;
    int32_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t L = len[i];
        for (int64_t t = 0; t < L; t++) {
            int64_t lo = t * m / L, hi = (t + 1) * m / L;
            A->colind[at] =
                (int32_t)(lo + kt_rand_u64(&s) % (uint64_t)(hi - lo));
            A->val[at++] = kt_rand_uniform(&s);
        }
        A->rowptr[i + 1] = at;
    }
    ck_assert_int_eq(kr_csr_check(ctx, A), KR_OK);
}

/* Row lengths 1 + floor(maxlen * u^2): most rows short, a few long. */
static void skewed_csr(kr_ctx *ctx, int32_t n, int32_t maxlen, uint64_t seed,
                       kr_csr *A)
{
    int32_t *len = malloc(((size_t)n + 1) * sizeof *len);
    uint64_t s = seed;
    int32_t m = n > maxlen + 1 ? n : maxlen + 1;
    for (int32_t i = 0; i < n; i++) {
        double u = 0.5 * (kt_rand_uniform(&s) + 1.0);
        len[i] = 1 + (int32_t)(maxlen * u * u);
    }
    csr_from_lengths(ctx, n, m, len, seed + 1, A);
    free(len);
}

/* Rows of `band` entries and one row (n/2) holding every column. */
static void full_row_csr(kr_ctx *ctx, int32_t n, int32_t band, kr_csr *A)
{
    int32_t *len = malloc((size_t)n * sizeof *len);
    for (int32_t i = 0; i < n; i++)
        len[i] = i == n / 2 ? n : band;
    csr_from_lengths(ctx, n, n, len, 77, A);
    free(len);
}

typedef struct coef {
    double alpha, beta;
} coef;

static const coef COEFS[] = {{1.0, 0.0},  {0.0, 0.0},   {2.5, 0.0},
                             {0.0, 1.0},  {1.0, 1.0},   {-1.5, 0.25},
                             {0.0, -2.0}, {0.75, -1.0}, {1e-3, 4.0}};

/* Applies `format` with every alpha/beta of COEFS (y poisoned with NaN when
 * beta == 0) and compares with alpha*(plain CSR loop) + beta*y0. */
static void check_all_coefs(kr_ctx *ctx, const kr_csr *A, const char *format,
                            uint64_t seed, double tol)
{
    int32_t n = A->nrows, m = A->ncols;
    double *x = malloc(((size_t)m + 1) * 8), *y0 = malloc(((size_t)n + 1) * 8);
    double *y = malloc(((size_t)n + 1) * 8), *ax = malloc(((size_t)n + 1) * 8);
    uint64_t s = seed;
    for (int32_t j = 0; j < m; j++)
        x[j] = kt_rand_uniform(&s);
    for (int32_t i = 0; i < n; i++)
        y0[i] = kt_rand_uniform(&s);
    kr_csr_matvec(A, x, ax);
    kr_matrix *M;
    kr_vec *vx, *vy;
    ck_assert_msg(kr_matrix_create(ctx, A, format, &M) == KR_OK, "%s: %s",
                  format, kr_ctx_error(ctx));
    ck_assert_int_eq(kr_vec_create(ctx, m, &vx), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, n, &vy), KR_OK);
    ck_assert_int_eq(kr_vec_upload(vx, x), KR_OK);
    for (size_t c = 0; c < sizeof COEFS / sizeof *COEFS; c++) {
        double al = COEFS[c].alpha, be = COEFS[c].beta;
        if (be == 0.0)
            ck_assert_int_eq(kr_vec_fill(vy, NAN), KR_OK);
        else
            ck_assert_int_eq(kr_vec_upload(vy, y0), KR_OK);
        ck_assert_int_eq(kr_matrix_apply(M, al, vx, be, vy), KR_OK);
        ck_assert_int_eq(kr_vec_download(vy, y), KR_OK);
        for (int32_t i = 0; i < n; i++) {
            double ref = be == 0.0 ? al * ax[i] : al * ax[i] + be * y0[i];
            ck_assert_msg(isfinite(y[i]) &&
                              fabs(y[i] - ref) <= tol * (1.0 + fabs(ref)),
                          "%s %d x %d, alpha %g beta %g, row %d: %.17g vs "
                          "%.17g",
                          format, n, m, al, be, i, y[i], ref);
        }
    }
    kr_vec_destroy(vx);
    kr_vec_destroy(vy);
    kr_matrix_destroy(M);
    free(x), free(y0), free(y), free(ax);
}

static double padding_of(kr_ctx *ctx, const kr_csr *A, const char *format)
{
    kr_matrix *M;
    ck_assert_msg(kr_matrix_create(ctx, A, format, &M) == KR_OK, "%s: %s",
                  format, kr_ctx_error(ctx));
    double r = kr_matrix_padding_ratio(M);
    ck_assert_uint_ge(kr_matrix_bytes(M), (size_t)A->nnz * 12);
    kr_matrix_destroy(M);
    return r;
}

/* One entry per row plus one full row: padding every row to the full one
 * would store n*n entries. */
START_TEST(ellr_refuses_long_row)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    full_row_csr(ctx, 1000, 1, &A);
    kr_matrix *M = (kr_matrix *)&A; /* any non-NULL: create must clear it */
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "ellr", &M), KR_ERR_UNSUPPORTED);
    ck_assert_ptr_null(M);
    const char *msg = kr_ctx_error(ctx);
    ck_assert_msg(strstr(msg, "1000000") && strstr(msg, "1999") &&
                      strstr(msg, "pellr") && strstr(msg, "hyb"),
                  "message: %s", msg);
    /* PELLR takes it and is right, though the full row's slice is padded */
    check_all_coefs(ctx, &A, "pellr", 5, 1e-14);
    kr_csr_free(&A);
    /* a tiny matrix may pad more than 3x: 60*60 <= 4096 entries */
    full_row_csr(ctx, 60, 1, &A);
    check_all_coefs(ctx, &A, "ellr", 6, 1e-14);
    ck_assert_double_eq_tol(padding_of(ctx, &A, "ellr"), 3600.0 / A.nnz, 1e-12);
    kr_csr_free(&A);
    /* just above the limit: 65*65 > 4096 and > 3*129 */
    full_row_csr(ctx, 65, 1, &A);
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "ellr", &M), KR_ERR_UNSUPPORTED);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* One full row among rows of 96: ELLR would pad to 4096 per row; PELLR pads
 * only the full row's own slice. */
START_TEST(pellr_pads_one_slice)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    full_row_csr(ctx, 4096, 96, &A);
    kr_matrix *M;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "ellr", &M), KR_ERR_UNSUPPORTED);
    double r = padding_of(ctx, &A, "pellr");
    /* 32*4096 for the full row's slice + 127 slices of width 96 */
    double expect = (32.0 * 4096 + 127.0 * 32 * 96) / A.nnz;
    ck_assert_double_eq_tol(r, expect, 1e-12);
    ck_assert_double_lt(r, 1.5);
    check_all_coefs(ctx, &A, "pellr", 7, 1e-14);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(pellr_pads_less_on_skewed_rows)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    skewed_csr(ctx, 5000, 12, 3, &A);
    double re = padding_of(ctx, &A, "ellr"), rp = padding_of(ctx, &A, "pellr");
    ck_assert_msg(re > 2.0 && rp < 1.1 && rp < 0.5 * re,
                  "padding ellr %g pellr %g", re, rp);
    kr_row_stats st;
    kr_csr_row_stats(&A, &st);
    ck_assert_double_eq_tol(re, (double)st.max * A.nrows / A.nnz, 1e-12);
    check_all_coefs(ctx, &A, "ellr", 8, 1e-14);
    check_all_coefs(ctx, &A, "pellr", 9, 1e-14);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* perm is a permutation sorting rows longest first, stably; widths, offsets
 * and every stored entry match A; padding is 0 and in bounds. */
static void check_pellr_layout(const kr_csr *A, const kr_pellr_host *P)
{
    const int32_t n = A->nrows;
    char *seen = calloc((size_t)n + 1, 1);
    ck_assert_int_eq(P->nslices, (n + 31) / 32);
    for (int32_t k = 0; k < n; k++) {
        int32_t r = P->perm[k];
        ck_assert(r >= 0 && r < n && !seen[r]);
        seen[r] = 1;
        ck_assert_int_eq(P->rl[k], A->rowptr[r + 1] - A->rowptr[r]);
        if (k > 0) {
            ck_assert_int_le(P->rl[k], P->rl[k - 1]);
            if (P->rl[k] == P->rl[k - 1]) ck_assert_int_gt(r, P->perm[k - 1]);
        }
    }
    ck_assert_int_eq(P->off[0], 0);
    for (int32_t s = 0; s < P->nslices; s++) {
        ck_assert_int_eq(P->width[s], P->rl[32 * s]);
        ck_assert_int_eq(P->off[s + 1] - P->off[s], 32 * (int64_t)P->width[s]);
        for (int32_t lane = 0; lane < 32; lane++) {
            int64_t k = 32 * (int64_t)s + lane;
            if (k >= n) ck_assert_int_eq(P->rl[k], 0);
            int32_t r = k < n ? P->perm[k] : -1;
            for (int32_t j = 0; j < P->width[s]; j++) {
                int64_t at = P->off[s] + lane + 32 * (int64_t)j;
                if (j < P->rl[k]) {
                    int32_t p = A->rowptr[r] + j;
                    ck_assert(P->val[at] == A->val[p]);
                    ck_assert_int_eq(P->col[at], A->colind[p]);
                } else {
                    ck_assert(P->val[at] == 0.0);
                    ck_assert(P->col[at] >= 0 &&
                              (P->col[at] < A->ncols || P->col[at] == 0));
                }
            }
        }
    }
    ck_assert_int_eq(kr_pellr_host_stored(P), P->off[P->nslices]);
    free(seen);
}

START_TEST(pellr_layout)
{
    kr_ctx *ctx = kt_cpu();
    const int32_t sizes[] = {0, 1, 31, 32, 33, 1005};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        kr_csr A;
        skewed_csr(ctx, sizes[t], 9, 20 + t, &A);
        kr_pellr_host P;
        ck_assert_int_eq(kr_pellr_host_build(ctx, &A, &P), KR_OK);
        check_pellr_layout(&A, &P);
        kr_pellr_host_free(&P);
        kr_pellr_host_free(&P); /* freeing twice is harmless */
        kr_csr_free(&A);
    }
    kr_pellr_host_free(NULL);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(ellr_layout)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    skewed_csr(ctx, 300, 5, 31, &A);
    kr_ellr_host E;
    ck_assert_int_eq(kr_ellr_host_build(ctx, &A, &E), KR_OK);
    kr_row_stats st;
    kr_csr_row_stats(&A, &st);
    ck_assert_int_eq(E.width, st.max);
    ck_assert_int_eq(kr_ellr_host_stored(&E), (int64_t)A.nrows * st.max);
    for (int32_t i = 0; i < A.nrows; i++) {
        ck_assert_int_eq(E.rl[i], A.rowptr[i + 1] - A.rowptr[i]);
        for (int32_t j = 0; j < E.width; j++) {
            size_t at = (size_t)i + (size_t)j * A.nrows;
            if (j < E.rl[i]) {
                ck_assert(E.val[at] == A.val[A.rowptr[i] + j]);
                ck_assert_int_eq(E.col[at], A.colind[A.rowptr[i] + j]);
            } else {
                ck_assert(E.val[at] == 0.0);
                ck_assert(E.col[at] >= 0 && E.col[at] < A.ncols);
            }
        }
    }
    kr_ellr_host_free(&E);
    kr_ellr_host_free(NULL);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* n = 1, around a warp, 1000, and a size big enough for several threads:
 * alpha = 1, beta = 0 sums each row in the CSR loop's order, so the CPU
 * result is the reference bit for bit; all alpha/beta within 1e-14. */
START_TEST(sizes_agree_with_csr)
{
    kr_ctx *ctx = kt_cpu();
    const int32_t sizes[] = {1, 31, 32, 33, 1000, 40000};
    const char *formats[] = {"ellr", "pellr"};
    for (int threads = 1; threads <= 4; threads += 3) {
        kr_ctx_set_threads(ctx, threads);
        for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
            kr_csr A;
            skewed_csr(ctx, sizes[t], 8, 40 + t, &A);
            for (int f = 0; f < 2; f++) {
                ck_assert_int_eq(
                    kt_check_spmv(ctx, &A, formats[f], 50 + t, 0.0), 1);
                check_all_coefs(ctx, &A, formats[f], 60 + t, 1e-14);
            }
            kr_csr_free(&A);
        }
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Empty rows, nnz = 0, n = 0, rectangular both ways, no columns. */
START_TEST(awkward_shapes)
{
    kr_ctx *ctx = kt_cpu();
    const char *formats[] = {"ellr", "pellr"};
    kr_csr A;
    const int32_t shapes[][2] = {{0, 0}, {5, 0}, {40, 40}, {0, 7}};
    for (size_t t = 0; t < sizeof shapes / sizeof *shapes; t++) {
        ck_assert_int_eq(kr_csr_alloc(ctx, shapes[t][0], shapes[t][1], 0, &A),
                         KR_OK);
        for (int f = 0; f < 2; f++) {
            ck_assert_int_eq(kt_check_spmv(ctx, &A, formats[f], 1, 0.0), 1);
            ck_assert_double_eq(padding_of(ctx, &A, formats[f]), 1.0);
        }
        kr_csr_free(&A);
    }
    const int32_t rect[][3] = {{70, 3, 2}, {3, 70, 30}, {45, 200, 9}};
    for (size_t t = 0; t < sizeof rect / sizeof *rect; t++) {
        int32_t len[70];
        for (int32_t i = 0; i < rect[t][0]; i++)
            len[i] = i % 3 == 1 ? 0 : 1 + i % rect[t][2]; /* empty rows too */
        csr_from_lengths(ctx, rect[t][0], rect[t][1], len, 90 + t, &A);
        for (int f = 0; f < 2; f++)
            check_all_coefs(ctx, &A, formats[f], 91 + t, 1e-14);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Both CUDA kernels against the CPU loop: warp-sized edges, a partial last
 * slice, and PELLR's long slices (block per slice) next to ordinary ones. */
START_TEST(gpu_agrees_with_csr)
{
    kr_ctx *ctx = kt_gpu_or_skip("gpu_agrees_with_csr");
    if (!ctx) return;
    const int32_t sizes[] = {1, 31, 32, 33, 1000, 100003};
    const char *formats[] = {"ellr", "pellr"};
    kr_csr A;
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        skewed_csr(ctx, sizes[t], 8, 140 + t, &A);
        for (int f = 0; f < 2; f++)
            check_all_coefs(ctx, &A, formats[f], 150 + t, 1e-13);
        kr_csr_free(&A);
    }
    /* 1 row in 50 is 100..2000 long: about 6 long slices, ragged lengths */
    int32_t n = 10007, *len = malloc((size_t)n * sizeof *len);
    uint64_t s = 9;
    for (int32_t i = 0; i < n; i++)
        len[i] = i % 50 == 7 ? 100 + (int32_t)(kt_rand_u64(&s) % 1900)
                             : (int32_t)(kt_rand_u64(&s) % 6);
    csr_from_lengths(ctx, n, n, len, 10, &A);
    check_all_coefs(ctx, &A, "pellr", 11, 1e-13);
    kr_ctx *host = kt_cpu();
    ck_assert_double_eq(padding_of(ctx, &A, "pellr"),
                        padding_of(host, &A, "pellr"));
    kr_csr_free(&A);
    full_row_csr(ctx, 4096, 96, &A);
    check_all_coefs(ctx, &A, "pellr", 12, 1e-13);
    kr_csr_free(&A);
    free(len);
    kr_ctx_destroy(host);
    kr_ctx_destroy(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ellr");
    TCase *tc = tcase_create("ellr");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, ellr_refuses_long_row);
    tcase_add_test(tc, pellr_pads_one_slice);
    tcase_add_test(tc, pellr_pads_less_on_skewed_rows);
    tcase_add_test(tc, pellr_layout);
    tcase_add_test(tc, ellr_layout);
    tcase_add_test(tc, sizes_agree_with_csr);
    tcase_add_test(tc, awkward_shapes);
    tcase_add_test(tc, gpu_agrees_with_csr);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return kt_run(suite()); }
