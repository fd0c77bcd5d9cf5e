/* SpMM, Y = A X for k columns (kr_matrix_apply_multi): every format
 * against k separate SpMVs of the same matrix and against a plain host
 * loop, for k from 1 to beyond 64, on stencils, power-law rows (long rows
 * crossing VSR chunks), rectangular matrices, empty rows and shared
 * matrices; then the argument checks. X is random from a seed printed on
 * failure. On the CPU the SpMM sums each entry in the order its SpMV does,
 * so the two agree bit for bit; on the GPU (skipped visibly without one)
 * each entry must lie within the rounding bound below. */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const FORMATS[] = {"csr", "ellr", "pellr",
                                      "vsr", "hyb",  "auto"};
#define NFORMATS (sizeof FORMATS / sizeof FORMATS[0])
static const int32_t KS[] = {1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64, 65, 100};
#define NKS (sizeof KS / sizeof KS[0])

/* One matrix under test: a generator spec, or NULL with a builder. */
typedef struct case_matrix {
    const char *name;
    void (*make)(kr_ctx *ctx, kr_csr *A);
} case_matrix;

static void gen(kr_ctx *ctx, const char *spec, kr_csr *A)
{
    ck_assert_msg(kr_generate(ctx, spec, A) == KR_OK, "%s: %s", spec,
                  kr_ctx_error(ctx));
}
static void make_poisson2d(kr_ctx *c, kr_csr *A) { gen(c, "poisson2d:23", A); }
static void make_poisson3d(kr_ctx *c, kr_csr *A) { gen(c, "poisson3d:9", A); }
static void make_elastic(kr_ctx *c, kr_csr *A) { gen(c, "elasticity3d:4", A); }
static void make_powerlaw(kr_ctx *c, kr_csr *A)
{
    gen(c, "powerlaw:3000,40", A);
}
static void make_wide(kr_ctx *c, kr_csr *A)
{
    kt_random_csr(c, 150, 700, 12, 0, 5, A);
}
static void make_tall(kr_ctx *c, kr_csr *A)
{
    kt_random_csr(c, 900, 120, 6, 0, 6, A);
}

/* Empty rows between a row of 2000 entries (many VSR chunks) and short
 * rows, 77 columns fewer than rows. */
static void make_ragged(kr_ctx *ctx, kr_csr *A)
{
    const int32_t n = 400, m = 2100;
    int32_t nnz = 0;
    for (int32_t i = 0; i < n; i++)
        nnz += i == 7 ? 2000 : (i % 5 == 0 ? 0 : 1 + i % 13);
    ck_assert_int_eq(kr_csr_alloc(ctx, n, m, nnz, A), KR_OK);
    uint64_t s = 3;
    int32_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t len = i == 7 ? 2000 : (i % 5 == 0 ? 0 : 1 + i % 13);
        for (int32_t j = 0; j < len; j++) {
            A->colind[at] = (int32_t)((int64_t)j * m / len + i % 3) % m;
            if (j > 0 && A->colind[at] <= A->colind[at - 1])
                A->colind[at] = A->colind[at - 1] + 1;
            A->val[at++] = kt_rand_uniform(&s);
        }
        A->rowptr[i + 1] = at;
    }
}

static const case_matrix CASES[] = {
    {"poisson2d:23", make_poisson2d},       {"poisson3d:9", make_poisson3d},
    {"elasticity3d:4", make_elastic},       {"powerlaw:3000,40", make_powerlaw},
    {"random 150 x 700", make_wide},        {"random 900 x 120", make_tall},
    {"ragged with empty rows", make_ragged}};
#define NCASES (sizeof CASES / sizeof CASES[0])

static const char *const SHARED[] = {"bcsstk08.mtx", "memplus.mtx",
                                     "west2021.mtx", "orani678.mtx"};
#define NSHARED (sizeof SHARED / sizeof SHARED[0])

/* Row-major X (ncols x k):
 * ref = A X by the plain loop, and bound = 4 len_i eps sum_j |a_ij x_jc|,
 * twice the classical bound gamma_len for one summation order, so any
 * two orders (and fused multiply-adds) of a correct kernel stay within. */
static void host_reference(const kr_csr *A, int32_t k, const double *X,
                           double *ref, double *bound)
{
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t len = A->rowptr[i + 1] - A->rowptr[i];
        for (int32_t c = 0; c < k; c++) {
            double s = 0.0, abs = 0.0;
            for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
                double t = A->val[p] * X[(size_t)A->colind[p] * k + c];
                s += t;
                abs += fabs(t);
            }
            ref[(size_t)i * k + c] = s;
            bound[(size_t)i * k + c] = 4.0 * len * DBL_EPSILON * abs;
        }
    }
}

typedef struct spmm_run {
    kr_ctx *ctx;
    const kr_csr *A;
    kr_matrix *M;
    const char *what; /* names the matrix, format and permutation */
    uint64_t seed;
} spmm_run;

/* Y by apply_multi, and Ycols by k SpMVs of X's columns. */
static void apply_both(const spmm_run *r, int32_t k, const double *X, double *Y,
                       double *Ycols)
{
    int32_t n = r->A->nrows, m = r->A->ncols;
    kr_vec *vX, *vY, *x, *y;
    ck_assert_int_eq(kr_vec_create(r->ctx, m * k, &vX), KR_OK);
    ck_assert_int_eq(kr_vec_create(r->ctx, n * k, &vY), KR_OK);
    ck_assert_int_eq(kr_vec_create(r->ctx, m, &x), KR_OK);
    ck_assert_int_eq(kr_vec_create(r->ctx, n, &y), KR_OK);
    ck_assert_int_eq(kr_vec_upload(vX, X), KR_OK);
    ck_assert_int_eq(kr_vec_fill(vY, NAN), KR_OK); /* Y is overwritten */
    ck_assert_msg(kr_matrix_apply_multi(r->M, k, vX, vY) == KR_OK,
                  "%s, k = %d: %s", r->what, (int)k, kr_ctx_error(r->ctx));
    ck_assert_int_eq(kr_vec_download(vY, Y), KR_OK);
    double *col = malloc(((size_t)(n > m ? n : m) + 1) * sizeof *col);
    for (int32_t c = 0; c < k; c++) {
        for (int32_t j = 0; j < m; j++)
            col[j] = X[(size_t)j * k + c];
        ck_assert_int_eq(kr_vec_upload(x, col), KR_OK);
        ck_assert_int_eq(kr_vec_fill(y, NAN), KR_OK);
        ck_assert_int_eq(kr_matrix_apply(r->M, 1.0, x, 0.0, y), KR_OK);
        ck_assert_int_eq(kr_vec_download(y, col), KR_OK);
        for (int32_t i = 0; i < n; i++)
            Ycols[(size_t)i * k + c] = col[i];
    }
    free(col);
    kr_vec_destroy(vX);
    kr_vec_destroy(vY);
    kr_vec_destroy(x);
    kr_vec_destroy(y);
}

/* Every k of KS: the SpMM equals the k SpMVs (bitwise on the CPU) and
 * the host loop within the bound. */
static void check_matrix(const spmm_run *r)
{
    int32_t n = r->A->nrows, m = r->A->ncols;
    int exact = kr_ctx_device(r->ctx) == KR_DEVICE_CPU;
    for (size_t t = 0; t < NKS; t++) {
        int32_t k = KS[t];
        size_t nk = (size_t)n * k + 1, mk = (size_t)m * k + 1;
        double *X = malloc(mk * 8), *Y = malloc(nk * 8), *Yc = malloc(nk * 8);
        double *ref = malloc(nk * 8), *bound = malloc(nk * 8);
        uint64_t s = r->seed + (uint64_t)k;
        for (size_t j = 0; j + 1 < mk; j++)
            X[j] = kt_rand_uniform(&s);
        host_reference(r->A, k, X, ref, bound);
        apply_both(r, k, X, Y, Yc);
        /* Check records every assertion, so scan first, assert once */
        size_t e = 0;
        while (e + 1 < nk && (!exact || memcmp(&Y[e], &Yc[e], 8) == 0) &&
               fabs(Y[e] - ref[e]) <= bound[e] &&
               fabs(Yc[e] - ref[e]) <= bound[e])
            e++;
        ck_assert_msg(e + 1 == nk,
                      "%s, seed %llu, k = %d: Y(%d,%d) = %.17g, its SpMV "
                      "%.17g, the host loop %.17g (bound %.3g%s)",
                      r->what, (unsigned long long)r->seed, (int)k,
                      (int)(e / (size_t)k) + 1, (int)(e % (size_t)k) + 1, Y[e],
                      Yc[e], ref[e], bound[e],
                      exact ? ", and SpMM = SpMV bit for bit" : "");
        free(X);
        free(Y);
        free(Yc);
        free(ref);
        free(bound);
    }
}

/* Each format of FORMATS on A; a format that refuses A (ellr's padding
 * limit) is skipped, any other failure fails. */
static void check_formats(kr_ctx *ctx, const kr_csr *A, const char *name)
{
    for (size_t f = 0; f < NFORMATS; f++) {
        kr_matrix *M;
        kr_status st = kr_matrix_create(ctx, A, FORMATS[f], &M);
        if (st == KR_ERR_UNSUPPORTED && strcmp(FORMATS[f], "ellr") == 0)
            continue;
        ck_assert_msg(st == KR_OK, "%s, %s: %s", name, FORMATS[f],
                      kr_ctx_error(ctx));
        char what[256];
        snprintf(what, sizeof what, "%s as %s", name, FORMATS[f]);
        spmm_run r = {ctx, A, M, what, 1000 + f};
        check_matrix(&r);
        kr_matrix_destroy(M);
    }
}

static void check_cases(kr_ctx *ctx)
{
    for (size_t i = 0; i < NCASES; i++) {
        kr_csr A;
        CASES[i].make(ctx, &A);
        check_formats(ctx, &A, CASES[i].name);
        kr_csr_free(&A);
    }
}

static void check_shared(kr_ctx *ctx, const char *test)
{
    const char *dir = kt_matrices_dir();
    if (!dir) {
        kt_skip(test, "no matrix folder");
        return;
    }
    for (size_t i = 0; i < NSHARED; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, SHARED[i]);
        kr_csr A;
        ck_assert_msg(kr_read_mtx(ctx, path, &A) == KR_OK, "%s",
                      kr_ctx_error(ctx));
        check_formats(ctx, &A, SHARED[i]);
        kr_csr_free(&A);
    }
}

START_TEST(cpu_generated)
{
    kr_ctx *ctx = kt_cpu();
    check_cases(ctx);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(cpu_shared)
{
    kr_ctx *ctx = kt_cpu();
    check_shared(ctx, "cpu_shared");
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(gpu_generated)
{
    kr_ctx *ctx = kt_gpu_or_skip("gpu_generated");
    if (!ctx) return;
    check_cases(ctx);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(gpu_shared)
{
    kr_ctx *ctx = kt_gpu_or_skip("gpu_shared");
    if (!ctx) return;
    check_shared(ctx, "gpu_shared");
    kr_ctx_destroy(ctx);
}
END_TEST

static kr_status identity_op(void *user, const kr_vec *x, kr_vec *y)
{
    (void)user;
    memcpy(kr_vec_data(y), kr_vec_data(x), 20 * sizeof(double));
    return KR_OK;
}

/* k < 1, wrong sizes, X == Y, NULL, another context, a user operator. */
START_TEST(argument_errors)
{
    kr_ctx *ctx = kt_cpu(), *other = kt_cpu();
    kr_csr A;
    kt_random_csr(ctx, 30, 20, 4, 0, 8, &A);
    kr_matrix *M, *U;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    kr_vec *X, *Y, *Xo, *Ybad;
    ck_assert_int_eq(kr_vec_create(ctx, 20 * 3, &X), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 30 * 3, &Y), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 30 * 2, &Ybad), KR_OK);
    ck_assert_int_eq(kr_vec_create(other, 20 * 3, &Xo), KR_OK);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 0, X, Y), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "k = 0"));
    ck_assert_int_eq(kr_matrix_apply_multi(M, -1, X, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, X, Ybad), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "X needs 60"));
    ck_assert_int_eq(kr_matrix_apply_multi(M, 2, X, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, X, X), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, NULL, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, X, NULL), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(NULL, 3, X, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, Xo, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, X, Y), KR_OK);
    ck_assert_int_eq(kr_matrix_create_user(ctx, 20, 20, identity_op, NULL, &U),
                     KR_OK);
    ck_assert_int_eq(kr_matrix_apply_multi(U, 3, X, Xo), KR_ERR_ARG);
    kr_vec *X2;
    ck_assert_int_eq(kr_vec_create(ctx, 20 * 3, &X2), KR_OK);
    ck_assert_int_eq(kr_matrix_apply_multi(U, 3, X, X2), KR_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "user"));
    kr_vec_destroy(X2);
    kr_matrix_destroy(U);
    kr_vec_destroy(X);
    kr_vec_destroy(Y);
    kr_vec_destroy(Xo);
    kr_vec_destroy(Ybad);
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    kr_ctx_destroy(other);
    kr_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("spmm");
    TCase *tc = tcase_create("spmm");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, cpu_generated);
    tcase_add_test(tc, cpu_shared);
    tcase_add_test(tc, gpu_generated);
    tcase_add_test(tc, gpu_shared);
    tcase_add_test(tc, argument_errors);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
