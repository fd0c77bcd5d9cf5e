/* Three right-hand sides with one solver object: the work vectors are
 * allocated once by kr_ksp_setup, and the solves allocate nothing (the
 * context's allocation count says so). Each solve is checked on the host:
 * ||b - A x|| / ||b|| recomputed from the downloaded x.
 * Build: make (build/examples/ksp_rhs). Usage: ksp_rhs [generator spec] */
#include "krylov.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define RTOL 1e-8

static double norm(int32_t n, const double *v)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

/* ||b - A x|| / ||b|| by the host reference product */
static double rel_residual(const kr_csr *A, const double *b, const double *x,
                           double *r)
{
    kr_csr_matvec(A, x, r);
    for (int32_t i = 0; i < A->nrows; i++)
        r[i] = b[i] - r[i];
    return norm(A->nrows, r) / norm(A->nrows, b);
}

/* b number k: three different shapes */
static void make_rhs(int k, int32_t n, double *b)
{
    for (int32_t i = 0; i < n; i++)
        b[i] = k == 0 ? 1.0 : k == 1 ? (double)(i % 17) - 8.0 : sin(0.01 * i);
}

static int solve_three(kr_ctx *ctx, kr_ksp *ksp, const kr_csr *A, kr_vec *b,
                       kr_vec *x, double *hb, double *hx, double *r)
{
    int failed = 0;
    size_t before = kr_ctx_alloc_count(ctx, NULL);
    for (int k = 0; k < 3; k++) {
        kr_result res;
        make_rhs(k, A->nrows, hb);
        kr_status st = kr_vec_upload(b, hb);
        if (st == KR_OK) st = kr_vec_fill(x, 0.0);
        if (st == KR_OK) st = kr_ksp_solve(ksp, b, x, &res);
        if (st == KR_OK) st = kr_vec_download(x, hx);
        if (st != KR_OK) {
            fprintf(stderr, "error: %s\n", kr_ctx_error(ctx));
            return 1;
        }
        double rel = rel_residual(A, hb, hx, r);
        int ok = res.reason > 0 && rel <= 1.05 * RTOL;
        printf("rhs %d: %s after %d iterations, ||b-Ax||/||b|| = %.3e %s\n",
               k + 1, kr_reason_name(res.reason), res.iterations, rel,
               ok ? "ok" : "FAILED");
        failed |= !ok;
    }
    size_t made = kr_ctx_alloc_count(ctx, NULL) - before;
    printf("allocations during the three solves: %zu\n", made);
    return failed || made != 0;
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "poisson2d:100";
    kr_ctx *ctx;
    kr_csr A = {0};
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_ksp *ksp = NULL;
    kr_vec *b = NULL, *x = NULL;
    kr_status st = kr_ctx_create(&ctx, KR_DEVICE_AUTO);
    if (st == KR_OK) st = kr_generate(ctx, spec, &A);
    if (st == KR_OK) st = kr_matrix_create(ctx, &A, NULL, &M);
    if (st == KR_OK) st = kr_precond_create(ctx, &A, "jacobi", &P);
    if (st == KR_OK) st = kr_ksp_create(ctx, "cg", &ksp);
    if (st == KR_OK) st = kr_ksp_set_operator(ksp, M);
    if (st == KR_OK) st = kr_ksp_set_precond(ksp, P);
    if (st == KR_OK) st = kr_ksp_set_option(ksp, "rtol", "1e-8");
    if (st == KR_OK) st = kr_ksp_setup(ksp);
    if (st == KR_OK) st = kr_vec_create(ctx, A.nrows, &b);
    if (st == KR_OK) st = kr_vec_create(ctx, A.nrows, &x);
    int rc = 2;
    if (st == KR_OK) {
        size_t n = (size_t)A.nrows;
        double *h = malloc(3 * n * sizeof *h);
        printf("%s on %s: n = %d, cg + jacobi\n", spec, kr_ctx_device_name(ctx),
               A.nrows);
        rc = h ? solve_three(ctx, ksp, &A, b, x, h, h + n, h + 2 * n) : 2;
        free(h);
    } else {
        fprintf(stderr, "error: %s\n", kr_ctx_error(ctx));
    }
    kr_vec_destroy(b), kr_vec_destroy(x), kr_ksp_destroy(ksp);
    kr_precond_destroy(P), kr_matrix_destroy(M), kr_csr_free(&A);
    kr_ctx_destroy(ctx);
    return rc;
}
