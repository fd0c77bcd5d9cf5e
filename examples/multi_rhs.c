/* Four right-hand sides solved together (kr_solve_multi): B and X are n x 4
 * blocks, row-major (row i's four values side by side), in vectors of 4n
 * entries; each iteration makes one SpMM and one preconditioner
 * application for the four columns, and each column stops on its own.
 * Each column is checked on the host: ||b_j - A x_j|| / ||b_j|| from the
 * downloaded X. Build: make (build/examples/multi_rhs).
 * Usage: multi_rhs [generator spec] */
#include "krylov.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define K 4
#define RTOL 1e-8

/* b_j: four different shapes, stored in column j of the row-major B */
static void make_rhs(int32_t n, double *B)
{
    for (int32_t i = 0; i < n; i++) {
        B[(size_t)i * K + 0] = 1.0;
        B[(size_t)i * K + 1] = (double)(i % 17) - 8.0;
        B[(size_t)i * K + 2] = sin(0.01 * i);
        B[(size_t)i * K + 3] = i == 0 ? 1.0 : 0.0;
    }
}

/* ||b_j - A x_j|| / ||b_j|| on the host; x and r are n doubles */
static double rel_residual(const kr_csr *A, const double *B, const double *X,
                           int j, double *x, double *r)
{
    int32_t n = A->nrows;
    for (int32_t i = 0; i < n; i++)
        x[i] = X[(size_t)i * K + j];
    kr_csr_matvec(A, x, r);
    double rr = 0.0, bb = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double b = B[(size_t)i * K + j], d = b - r[i];
        rr += d * d;
        bb += b * b;
    }
    return sqrt(rr / bb);
}

static int solve(kr_ctx *ctx, const kr_csr *A, kr_matrix *M, kr_precond *P,
                 double *h)
{
    int32_t n = A->nrows;
    double *B = h, *X = h + (size_t)n * K, *x = X + (size_t)n * K, *r = x + n;
    kr_vec *Bv = NULL, *Xv = NULL;
    kr_result res[K];
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "cg";
    o.rtol = RTOL;
    make_rhs(n, B);
    kr_status st = kr_vec_create(ctx, n * K, &Bv);
    if (st == KR_OK) st = kr_vec_create(ctx, n * K, &Xv); /* x0 = 0 */
    if (st == KR_OK) st = kr_vec_upload(Bv, B);
    if (st == KR_OK) st = kr_solve_multi(ctx, M, P, K, Bv, Xv, &o, res);
    if (st == KR_OK) st = kr_vec_download(Xv, X);
    kr_vec_destroy(Bv);
    kr_vec_destroy(Xv);
    if (st != KR_OK) {
        fprintf(stderr, "error: %s\n", kr_ctx_error(ctx));
        return 2;
    }
    int failed = 0;
    for (int j = 0; j < K; j++) {
        double rel = rel_residual(A, B, X, j, x, r);
        int ok = res[j].reason > 0 && rel <= 1.05 * RTOL;
        printf("rhs %d: %s after %d iterations, ||b-Ax||/||b|| = %.3e %s\n",
               j + 1, kr_reason_name(res[j].reason), res[j].iterations, rel,
               ok ? "ok" : "FAILED");
        failed |= !ok;
    }
    printf("the four columns together: %.3f ms\n", res[0].solve_seconds * 1e3);
    return failed;
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "poisson2d:100";
    kr_ctx *ctx;
    kr_csr A = {0};
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_status st = kr_ctx_create(&ctx, KR_DEVICE_AUTO);
    if (st == KR_OK) st = kr_generate(ctx, spec, &A);
    if (st == KR_OK) st = kr_matrix_create(ctx, &A, NULL, &M);
    if (st == KR_OK) st = kr_precond_create(ctx, &A, "jacobi", &P);
    int rc = 2;
    if (st == KR_OK) {
        double *h = malloc(((size_t)2 * K + 2) * (size_t)A.nrows * sizeof *h);
        printf("%s on %s: n = %d, %d right-hand sides, cg + jacobi\n", spec,
               kr_ctx_device_name(ctx), A.nrows, K);
        rc = h ? solve(ctx, &A, M, P, h) : 2;
        free(h);
    } else {
        fprintf(stderr, "error: %s\n", kr_ctx_error(ctx));
    }
    kr_precond_destroy(P), kr_matrix_destroy(M), kr_csr_free(&A);
    kr_ctx_destroy(ctx);
    return rc;
}
