/* A sequence of matrices on one pattern, as in time stepping or Newton's
 * method: A_t = L + t D (L a 2D convection-diffusion matrix, D its
 * diagonal), new values each step through kr_matrix_update_values and
 * kr_precond_update_values (block-Jacobi keeps its blocks), one solver
 * object throughout, each solve starting from the last step's x. Each
 * solve is checked on the host against A_t.
 * Build: make (build/examples/update_values). Usage: update_values [spec] */
#include "krylov.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-8
#define STEPS 4

/* vals = L's values with the diagonal scaled by (1 + t) */
static void step_values(const kr_csr *L, double t, double *vals)
{
    for (int32_t i = 0; i < L->nrows; i++)
        for (int32_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++)
            vals[k] = L->val[k] * (L->colind[k] == i ? 1.0 + t : 1.0);
}

static double rel_residual(const kr_csr *A, const double *b, const double *x,
                           double *r)
{
    double rr = 0.0, bb = 0.0;
    kr_csr_matvec(A, x, r);
    for (int32_t i = 0; i < A->nrows; i++) {
        rr += (b[i] - r[i]) * (b[i] - r[i]);
        bb += b[i] * b[i];
    }
    return sqrt(rr / bb);
}

/* Steps t = 0, 1, ... with At sharing L's pattern (its own values). */
static int run_steps(kr_ctx *ctx, const kr_csr *L, kr_csr *At, kr_matrix *M,
                     kr_precond *P, kr_ksp *ksp, kr_vec *b, kr_vec *x,
                     double *h)
{
    int32_t n = L->nrows;
    double *hb = h, *hx = h + n, *r = h + 2 * n;
    int failed = 0;
    for (int32_t i = 0; i < n; i++)
        hb[i] = 1.0;
    for (int s = 0; s < STEPS; s++) {
        kr_result res;
        step_values(L, (double)s, At->val);
        kr_status st = kr_matrix_update_values(M, At);
        if (st == KR_OK) st = kr_precond_update_values(P, At);
        if (st == KR_OK) st = kr_vec_upload(b, hb);
        if (st == KR_OK) st = kr_ksp_solve(ksp, b, x, &res);
        if (st == KR_OK) st = kr_vec_download(x, hx);
        if (st != KR_OK) {
            fprintf(stderr, "error: %s\n", kr_ctx_error(ctx));
            return 1;
        }
        double rel = rel_residual(At, hb, hx, r);
        int ok = res.reason > 0 && rel <= 1.05 * RTOL;
        printf("t = %d: %s after %d iterations, ||b-Ax||/||b|| = %.3e %s\n", s,
               kr_reason_name(res.reason), res.iterations, rel,
               ok ? "ok" : "FAILED");
        failed |= !ok;
    }
    return failed;
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "convdiff2d:80,2";
    kr_ctx *ctx;
    kr_csr L = {0}, At;
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_ksp *ksp = NULL;
    kr_vec *b = NULL, *x = NULL;
    double *h = NULL, *vals = NULL;
    kr_status st = kr_ctx_create(&ctx, KR_DEVICE_AUTO);
    if (st == KR_OK) st = kr_generate(ctx, spec, &L);
    if (st == KR_OK) {
        h = malloc(3 * ((size_t)L.nrows + 1) * sizeof *h);
        vals = malloc(((size_t)L.nnz + 1) * sizeof *vals);
        if (!h || !vals) st = KR_ERR_NOMEM;
    }
    At = L;
    At.val = vals; /* L's pattern, the step's values */
    if (st == KR_OK) st = kr_matrix_create(ctx, &L, NULL, &M);
    if (st == KR_OK) st = kr_precond_create(ctx, &L, "bjacobi", &P);
    if (st == KR_OK) st = kr_ksp_create(ctx, "gmres", &ksp);
    if (st == KR_OK) st = kr_ksp_set_operator(ksp, M);
    if (st == KR_OK) st = kr_ksp_set_precond(ksp, P);
    if (st == KR_OK) st = kr_vec_create(ctx, L.nrows, &b);
    if (st == KR_OK) st = kr_vec_create(ctx, L.nrows, &x);
    int failed = 1;
    if (st == KR_OK) {
        printf("%s on %s: n = %d, gmres + bjacobi (%d blocks)\n", spec,
               kr_ctx_device_name(ctx), L.nrows, kr_precond_block_count(P));
        failed = run_steps(ctx, &L, &At, M, P, ksp, b, x, h);
    } else {
        fprintf(stderr, "error: %s\n", kr_ctx_error(ctx));
    }
    kr_vec_destroy(b), kr_vec_destroy(x), kr_ksp_destroy(ksp);
    kr_precond_destroy(P), kr_matrix_destroy(M), kr_csr_free(&L);
    kr_ctx_destroy(ctx);
    free(h), free(vals);
    return st != KR_OK ? 2 : failed;
}
