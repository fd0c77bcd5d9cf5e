/* The public entry points validate what they are given: an invalid CSR,
 * aliased vectors and NULL arguments are refused with KR_ERR_ARG or
 * KR_ERR_FORMAT and a message naming the argument or the row, never a
 * crash or a wrong answer with KR_OK (issue 16, item 9). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static const char *const preconds[] = {"none", "jacobi", "bjacobi"};
#define NPRECONDS 3

/* tridiag(-1, 4, -1), n x n */
static void tridiag(kr_ctx *ctx, int32_t n, kr_csr *A)
{
    ck_assert_int_eq(kr_csr_alloc(ctx, n, n, 3 * n - 2, A), KR_OK);
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = i - 1; j <= i + 1; j++) {
            if (j < 0 || j >= n) continue;
            A->colind[k] = j;
            A->val[k++] = i == j ? 4.0 : -1.0;
        }
        A->rowptr[i + 1] = k;
    }
}

static void assert_refused(kr_ctx *ctx, kr_status st, kr_status want,
                           const char *words)
{
    ck_assert_msg(st == want, "status %s, expected %s (%s)", kr_status_name(st),
                  kr_status_name(want), kr_ctx_error(ctx));
    ck_assert_msg(strstr(kr_ctx_error(ctx), words), "message '%s' lacks '%s'",
                  kr_ctx_error(ctx), words);
}

/* rowptr[n] > nnz read past colind in jacobi (a heap overflow under
 * ASan); a column out of range gave KR_OK under bjacobi. */
START_TEST(precond_refuses_invalid_csr)
{
    kr_ctx *ctx = kt_cpu();
    kr_precond *P = NULL;
    kr_csr A;
    tridiag(ctx, 10, &A);
    A.rowptr[10] = A.nnz + 5;
    assert_refused(ctx, kr_precond_create(ctx, &A, preconds[_i], &P),
                   KR_ERR_FORMAT, "row pointers");
    ck_assert_ptr_null(P);
    A.rowptr[10] = A.nnz;
    A.colind[4] = 10; /* row 2 (1-based), column past the last */
    kr_status st = kr_precond_create(ctx, &A, preconds[_i], &P);
    ck_assert_msg(st == KR_ERR_FORMAT, "%s: %s", preconds[_i],
                  kr_status_name(st));
    ck_assert_ptr_null(P);
    kr_csr_free(&A);
    kr_csr A2;
    ck_assert_int_eq(kr_csr_alloc(ctx, 2, 3, 0, &A2), KR_OK);
    assert_refused(ctx, kr_precond_create(ctx, &A2, preconds[_i], &P),
                   KR_ERR_ARG, "square");
    kr_csr_free(&A2);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(aliased_vectors_refused)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    tridiag(ctx, 20, &A);
    kr_matrix *M;
    kr_precond *P;
    kr_vec *v, *w;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 20, &v), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 20, &w), KR_OK);
    ck_assert_int_eq(kr_vec_fill(v, 1.0), KR_OK);
    assert_refused(ctx, kr_matrix_apply(M, 1.0, v, 0.0, v), KR_ERR_ARG,
                   "same vector");
    assert_refused(ctx, kr_precond_apply(P, v, v), KR_ERR_ARG, "same vector");
    kr_result res;
    assert_refused(ctx, kr_solve(ctx, M, P, v, v, NULL, &res), KR_ERR_ARG,
                   "same vector");
    /* distinct vectors still work */
    ck_assert_int_eq(kr_matrix_apply(M, 1.0, v, 0.0, w), KR_OK);
    ck_assert_int_eq(kr_solve(ctx, M, P, w, v, NULL, &res), KR_OK);
    ck_assert_int_gt(res.reason, 0);
    kr_vec_destroy(v);
    kr_vec_destroy(w);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(null_arguments_named)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    tridiag(ctx, 5, &A);
    kr_matrix *M;
    kr_precond *P;
    kr_vec *b, *x;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 5, &b), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 5, &x), KR_OK);
    kr_result res;
    assert_refused(ctx, kr_solve(ctx, M, P, b, x, NULL, NULL), KR_ERR_ARG,
                   "res is NULL");
    assert_refused(ctx, kr_solve(ctx, NULL, P, b, x, NULL, &res), KR_ERR_ARG,
                   "matrix A is NULL");
    assert_refused(ctx, kr_solve(ctx, M, NULL, b, x, NULL, &res), KR_ERR_ARG,
                   "preconditioner P is NULL");
    assert_refused(ctx, kr_solve(ctx, M, P, NULL, x, NULL, &res), KR_ERR_ARG,
                   "b is NULL");
    assert_refused(ctx, kr_solve(ctx, M, P, b, NULL, NULL, &res), KR_ERR_ARG,
                   "x is NULL");
    ck_assert_int_eq(kr_solve(NULL, M, P, b, x, NULL, &res), KR_ERR_ARG);
    assert_refused(ctx, kr_matrix_apply(M, 1.0, NULL, 0.0, x), KR_ERR_ARG,
                   "x is NULL");
    assert_refused(ctx, kr_matrix_apply(M, 1.0, b, 0.0, NULL), KR_ERR_ARG,
                   "y is NULL");
    assert_refused(ctx, kr_precond_apply(P, NULL, x), KR_ERR_ARG, "r is NULL");
    assert_refused(ctx, kr_precond_create(ctx, NULL, "jacobi", &P), KR_ERR_ARG,
                   "CSR matrix A is NULL");
    assert_refused(ctx, kr_matrix_create(ctx, &A, "csr", NULL), KR_ERR_ARG,
                   "output M is NULL");
    assert_refused(ctx, kr_vec_upload(x, NULL), KR_ERR_ARG, "host array");
    ck_assert_int_eq(kr_matrix_apply(NULL, 1.0, b, 0.0, x), KR_ERR_ARG);
    /* getters take NULL (a failed create leaves NULL) */
    ck_assert_int_eq(kr_matrix_rows(NULL), 0);
    ck_assert_str_eq(kr_precond_name(NULL), "");
    ck_assert_str_eq(kr_ctx_device_name(NULL), "");
    kr_vec_destroy(b);
    kr_vec_destroy(x);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("validation");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_loop_test(tc, precond_refuses_invalid_csr, 0, NPRECONDS);
    tcase_add_test(tc, aliased_vectors_refused);
    tcase_add_test(tc, null_arguments_named);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
