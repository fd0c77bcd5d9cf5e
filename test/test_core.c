/* The core on the CPU: backend kernels against plain loops, CSR checks and
 * SpMV, Jacobi, the context and registry messages, and CG end to end. */
#include "backend_check.h"
#include "core/ctx.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kr_ctx *cpu(void)
{
    kr_ctx *ctx;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
    return ctx;
}

START_TEST(backend_kernels)
{
    const int32_t sizes[] = {0, 1, 31, 33, 1000, 70001};
    kr_ctx *ctx = cpu();
    for (int t = 1; t <= 2; t++) {
        kr_ctx_set_threads(ctx, t);
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            kt_check_backend(ctx, sizes[i], 1000 + i, 1e-13);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Dots give the same bits on every call with the same thread count. */
START_TEST(dots_deterministic)
{
    kr_ctx *ctx = cpu();
    kr_ctx_set_threads(ctx, 2);
    int32_t n = 100000;
    double *x = malloc(n * sizeof *x), r1, r2;
    uint64_t s = 5;
    for (int32_t i = 0; i < n; i++)
        x[i] = kt_rand_uniform(&s);
    const double *xs[1] = {x};
    for (int rep = 0; rep < 5; rep++) {
        ck_assert_int_eq(ctx->ops->dots(ctx, n, 1, xs, xs, &r1), KR_OK);
        ck_assert_int_eq(ctx->ops->dots(ctx, n, 1, xs, xs, &r2), KR_OK);
        ck_assert(memcmp(&r1, &r2, sizeof r1) == 0);
    }
    free(x);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(csr_spmv_shapes)
{
    kr_ctx *ctx = cpu();
    kr_csr A;
    const int32_t shapes[][3] = {
        {1, 1, 1}, {5, 7, 3}, {33, 33, 4}, {200, 50, 9}, {1000, 1000, 12}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        kt_random_csr(ctx, shapes[i][0], shapes[i][1], shapes[i][2], 0, 7 + i,
                      &A);
        kt_check_spmv_all(ctx, &A, 11 + i, 1e-13);
        kr_csr_free(&A);
    }
    /* empty rows, nnz = 0, n = 0 */
    ck_assert_int_eq(kr_csr_alloc(ctx, 4, 4, 0, &A), KR_OK);
    kt_check_spmv_all(ctx, &A, 3, 0.0);
    kr_csr_free(&A);
    ck_assert_int_eq(kr_csr_alloc(ctx, 0, 0, 0, &A), KR_OK);
    kt_check_spmv_all(ctx, &A, 3, 0.0);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Every format on every real matrix, against the plain CSR loop. */
START_TEST(formats_real_matrices)
{
    const char *dir = kt_matrices_dir();
    if (!dir) {
        kt_skip("formats_real_matrices", "no matrix folder");
        return;
    }
    kr_ctx *ctx = cpu();
    ck_assert_int_gt(kt_check_spmv_files(ctx, dir, 99, 1e-12), 0);

    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(csr_check_names_row)
{
    kr_ctx *ctx = cpu();
    kr_csr A;
    kt_random_csr(ctx, 10, 10, 3, 1, 1, &A);
    ck_assert_int_eq(kr_csr_check(ctx, &A), KR_OK);
    int32_t k = A.rowptr[6];
    A.colind[k] = 10; /* out of range in row 6 */
    ck_assert_int_eq(kr_csr_check(ctx, &A), KR_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "row 6"));
    A.colind[k] = 0;
    A.val[k] = NAN;
    ck_assert_int_eq(kr_csr_check(ctx, &A), KR_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "not finite"));
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(jacobi_apply_and_zero_diagonal)
{
    kr_ctx *ctx = cpu();
    kr_csr A;
    kt_random_csr(ctx, 50, 50, 4, 1, 9, &A);
    kr_precond *P;
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_OK);
    kr_vec *r, *z;
    double rh[50], zh[50];
    for (int i = 0; i < 50; i++)
        rh[i] = i - 20.5;
    kr_vec_create(ctx, 50, &r);
    kr_vec_create(ctx, 50, &z);
    kr_vec_upload(r, rh);
    ck_assert_int_eq(kr_precond_apply(P, r, z), KR_OK);
    kr_vec_download(z, zh);
    for (int32_t i = 0; i < 50; i++)
        for (int32_t k = A.rowptr[i]; k < A.rowptr[i + 1]; k++)
            if (A.colind[k] == i)
                ck_assert_double_eq_tol(zh[i], rh[i] / A.val[k], 1e-14);
    kr_precond_destroy(P);
    /* zero the diagonal of row 17: setup names it */
    for (int32_t k = A.rowptr[17]; k < A.rowptr[18]; k++)
        if (A.colind[k] == 17) A.val[k] = 0.0;
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_ERR_SINGULAR);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "row 17"));
    ck_assert_ptr_null(P);
    kr_vec_destroy(r);
    kr_vec_destroy(z);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(unknown_names_list_choices)
{
    kr_ctx *ctx = cpu();
    kr_csr A;
    kt_random_csr(ctx, 5, 5, 2, 1, 2, &A);
    kr_matrix *M;
    kr_precond *P;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "nosuch", &M), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "csr"));
    ck_assert_int_eq(kr_precond_create(ctx, &A, "ilu", &P), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "jacobi"));
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "none", &P), KR_OK);
    kr_vec *b, *x;
    kr_vec_create(ctx, 5, &b);
    kr_vec_create(ctx, 5, &x);
    kr_vec_fill(b, 1.0);
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "minres";
    kr_result res;
    ck_assert_int_eq(kr_solve(ctx, M, P, b, x, &o, &res), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "bicgstab"));
    kr_vec_destroy(b);
    kr_vec_destroy(x);
    kr_matrix_destroy(M);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(context_devices)
{
    kr_ctx *ctx;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_AUTO), KR_OK);
    if (kr_ctx_device(ctx) == KR_DEVICE_CPU && kr_built_with_cuda())
        ck_assert_ptr_nonnull(strstr(kr_ctx_note(ctx), "using the CPU"));
    kr_ctx_destroy(ctx);
    kr_status st = kr_ctx_create(&ctx, KR_DEVICE_CUDA);
    if (!kr_built_with_cuda()) {
        ck_assert_int_eq(st, KR_ERR_NOT_COMPILED);
        ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "without CUDA"));
    } else if (st != KR_OK) {
        ck_assert_int_eq(st, KR_ERR_DEVICE);
    }
    kr_ctx_destroy(ctx);
    ck_assert_str_eq(kr_status_name(KR_ERR_FORMAT), "KR_ERR_FORMAT");
    ck_assert_str_eq(kr_reason_name(KR_DIVERGED_ITS), "DIVERGED_ITS");
}
END_TEST

/* SPD: B + B^T with a dominant diagonal; CG meets rtol by the true residual */
START_TEST(cg_random_spd)
{
    kr_ctx *ctx = cpu();
    int32_t n = 400;
    kr_csr B, A;
    kt_random_csr(ctx, n, n, 5, 0, 21, &B);
    double *dense = calloc((size_t)n * n, sizeof *dense);
    for (int32_t i = 0; i < n; i++)
        for (int32_t k = B.rowptr[i]; k < B.rowptr[i + 1]; k++) {
            dense[(size_t)i * n + B.colind[k]] += B.val[k];
            dense[(size_t)B.colind[k] * n + i] += B.val[k];
        }
    int32_t nnz = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        nnz += dense[i] != 0.0;
    ck_assert_int_eq(kr_csr_alloc(ctx, n, n, nnz + n, &A), KR_OK);
    nnz = 0;
    for (int32_t i = 0; i < n; i++) {
        double off = 0.0;
        for (int32_t j = 0; j < n; j++)
            if (j != i) off += fabs(dense[(size_t)i * n + j]);
        for (int32_t j = 0; j < n; j++) {
            double v = j == i ? off + 0.1 : dense[(size_t)i * n + j];
            if (v == 0.0) continue;
            A.colind[nnz] = j;
            A.val[nnz++] = v;
        }
        A.rowptr[i + 1] = nnz;
    }
    A.nnz = nnz;
    double *xt = malloc(n * sizeof *xt), *bh = malloc(n * sizeof *bh);
    uint64_t s = 3;
    for (int32_t i = 0; i < n; i++)
        xt[i] = kt_rand_uniform(&s);
    kr_csr_matvec(&A, xt, bh);
    kr_matrix *M;
    kr_precond *P;
    kr_vec *b, *x;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_OK);
    kr_vec_create(ctx, n, &b);
    kr_vec_create(ctx, n, &x);
    kr_vec_upload(b, bh);
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "cg";
    kr_result res;
    ck_assert_int_eq(kr_solve(ctx, M, P, b, x, &o, &res), KR_OK);
    ck_assert_int_eq(res.reason, KR_CONVERGED_RTOL);
    ck_assert(res.true_rnorm <= 1.01e-8 * res.bnorm);
    ck_assert(res.iterations > 1 && res.iterations < 200);
    kr_vec_download(x, bh);
    ck_assert(kt_rel_diff(n, bh, xt) < 1e-6);
    kr_vec_destroy(b);
    kr_vec_destroy(x);
    kr_matrix_destroy(M);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_csr_free(&B);
    free(dense);
    free(xt);
    free(bh);
    kr_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, backend_kernels);
    tcase_add_test(tc, dots_deterministic);
    tcase_add_test(tc, csr_spmv_shapes);
    tcase_add_test(tc, formats_real_matrices);
    tcase_add_test(tc, csr_check_names_row);
    tcase_add_test(tc, jacobi_apply_and_zero_diagonal);
    tcase_add_test(tc, unknown_names_list_choices);
    tcase_add_test(tc, context_devices);
    tcase_add_test(tc, cg_random_spd);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
