/* Solves A x = A*ones with IDR(4) + Jacobi and prints what happened.
 * Build: cc solve.c -Iinclude build/libkrylov.a -lz -lm -fopenmp (see README)
 * Usage: solve A.mtx */
#include "krylov.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    kr_ctx *ctx;
    kr_csr A = {0};
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_vec *b = NULL, *x = NULL;
    kr_result res = {0};
    kr_status st = kr_ctx_create(&ctx, KR_DEVICE_AUTO);
    if (st == KR_OK && argc != 2) st = KR_ERR_ARG;
    if (st == KR_OK) st = kr_read_mtx(ctx, argv[1], &A);
    if (st == KR_OK) st = kr_matrix_create(ctx, &A, "csr", &M);
    if (st == KR_OK) st = kr_precond_create(ctx, &A, "jacobi", &P);
    if (st == KR_OK) st = kr_vec_create(ctx, A.nrows, &x);
    if (st == KR_OK) st = kr_vec_create(ctx, A.nrows, &b);
    if (st == KR_OK) st = kr_vec_fill(x, 1.0);
    if (st == KR_OK) st = kr_matrix_apply(M, 1.0, x, 0.0, b); /* b = A*1 */
    if (st == KR_OK) st = kr_vec_fill(x, 0.0);
    if (st == KR_OK) st = kr_solve(ctx, M, P, b, x, NULL, &res);
    if (st == KR_OK)
        printf("%s: %s after %d iterations, ||b-Ax||/||b|| = %.3e on %s\n",
               argv[1], kr_reason_name(res.reason), res.iterations,
               res.true_rnorm / res.bnorm, kr_ctx_device_name(ctx));
    else
        fprintf(stderr, "error: %s\n",
                argc != 2 ? "usage: solve A.mtx" : kr_ctx_error(ctx));
    kr_vec_destroy(b), kr_vec_destroy(x), kr_precond_destroy(P);
    kr_matrix_destroy(M), kr_csr_free(&A), kr_ctx_destroy(ctx);
    return st != KR_OK ? 2 : res.reason > 0 ? 0 : 1;
}
