/* A matrix-free operator with a user preconditioner: the 2D
 * convection-diffusion operator -Laplace(u) + c u_x on an m x m grid
 * (5-point stencil, upwind), applied from the stencil without storing a
 * matrix, and its Jacobi preconditioner from the same formula, both as
 * callbacks on the context's vectors. Solved by every method; each answer
 * is checked with the same operator on the host.
 * This example runs on the CPU backend, where kr_vec_data is host memory;
 * on the GPU the callbacks would launch kernels on kr_ctx_cuda_stream.
 * Build: make (build/examples/matrix_free). Usage: matrix_free [m] */
#include "krylov.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define RTOL 1e-8

typedef struct grid {
    int32_t m; /* points per side; n = m * m unknowns */
    double c;  /* convection per cell (upwind, from the west) */
} grid;

/* y = A x on raw arrays */
static void stencil(const grid *g, const double *x, double *y)
{
    int32_t m = g->m;
    for (int32_t j = 0; j < m; j++)
        for (int32_t i = 0; i < m; i++) {
            int32_t k = j * m + i;
            double w = i > 0 ? x[k - 1] : 0.0, e = i < m - 1 ? x[k + 1] : 0.0;
            double s = j > 0 ? x[k - m] : 0.0, nn = j < m - 1 ? x[k + m] : 0.0;
            y[k] = (4.0 + g->c) * x[k] - (1.0 + g->c) * w - e - s - nn;
        }
}

static kr_status apply_op(void *user, const kr_vec *x, kr_vec *y)
{
    stencil(user, kr_vec_data(x), kr_vec_data(y));
    return KR_OK;
}

/* z = D^-1 r: the stencil's diagonal is the same in every row */
static kr_status apply_pc(void *user, const kr_vec *r, kr_vec *z)
{
    const grid *g = user;
    const double *rr = kr_vec_data(r);
    double *zz = kr_vec_data(z);
    for (int32_t k = 0; k < kr_vec_size(r); k++)
        zz[k] = rr[k] / (4.0 + g->c);
    return KR_OK;
}

static double norm(int32_t n, const double *v)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

/* Solves with `method` and checks ||b - A x|| / ||b|| on the host. */
static int solve_one(kr_ctx *ctx, kr_ksp *ksp, const char *method,
                     const grid *g, kr_vec *b, kr_vec *x, double *h)
{
    int32_t n = g->m * g->m;
    double *hb = h, *hx = h + n, *r = h + 2 * n;
    kr_result res;
    kr_status st = kr_ksp_set_option(ksp, "method", method);
    if (st == KR_OK) st = kr_vec_fill(x, 0.0);
    if (st == KR_OK) st = kr_ksp_solve(ksp, b, x, &res);
    if (st == KR_OK) st = kr_vec_download(x, hx);
    if (st != KR_OK) {
        fprintf(stderr, "error: %s\n", kr_ctx_error(ctx));
        return 1;
    }
    stencil(g, hx, r);
    for (int32_t i = 0; i < n; i++)
        r[i] = hb[i] - r[i];
    double rel = norm(n, r) / norm(n, hb);
    int ok = res.reason > 0 && rel <= 1.05 * RTOL;
    printf("%-8s %s after %d iterations, ||b-Ax||/||b|| = %.3e %s\n", method,
           kr_reason_name(res.reason), res.iterations, rel,
           ok ? "ok" : "FAILED");
    return !ok;
}

int main(int argc, char **argv)
{
    grid g = {.m = argc > 1 ? atoi(argv[1]) : 64, .c = 0.5};
    if (g.m < 2 || g.m > 4096) {
        fprintf(stderr, "usage: matrix_free [m], 2 <= m <= 4096\n");
        return 2;
    }
    int32_t n = g.m * g.m;
    kr_ctx *ctx;
    kr_matrix *A = NULL;
    kr_precond *P = NULL;
    kr_ksp *ksp = NULL;
    kr_vec *b = NULL, *x = NULL;
    double *h = malloc(3 * (size_t)n * sizeof *h);
    kr_status st = kr_ctx_create(&ctx, KR_DEVICE_CPU);
    if (st == KR_OK && !h) st = KR_ERR_NOMEM;
    if (st == KR_OK) st = kr_matrix_create_user(ctx, n, n, apply_op, &g, &A);
    if (st == KR_OK) st = kr_precond_create_user(ctx, n, apply_pc, &g, &P);
    if (st == KR_OK) st = kr_ksp_create(ctx, NULL, &ksp);
    if (st == KR_OK) st = kr_ksp_set_operator(ksp, A);
    if (st == KR_OK) st = kr_ksp_set_precond(ksp, P);
    if (st == KR_OK) st = kr_vec_create(ctx, n, &b);
    if (st == KR_OK) st = kr_vec_create(ctx, n, &x);
    for (int32_t i = 0; st == KR_OK && i < n; i++)
        h[i] = 1.0 + (double)(i % 5);
    if (st == KR_OK) st = kr_vec_upload(b, h);
    int failed = st != KR_OK;
    if (st != KR_OK) fprintf(stderr, "error: %s\n", kr_ctx_error(ctx));
    static const char *const methods[] = {"gmres", "idr", "bicgstab"};
    if (st == KR_OK)
        printf("matrix-free convection-diffusion, n = %d, user Jacobi\n", n);
    for (int i = 0; st == KR_OK && i < 3; i++)
        failed |= solve_one(ctx, ksp, methods[i], &g, b, x, h);
    kr_vec_destroy(b), kr_vec_destroy(x), kr_ksp_destroy(ksp);
    kr_precond_destroy(P), kr_matrix_destroy(A), kr_ctx_destroy(ctx);
    free(h);
    return st != KR_OK ? 2 : failed;
}
