/* Several right-hand sides solved together (kr_solve_multi,
 * kr_ksp_solve_multi): on the CPU every column takes exactly the
 * iterations, reason and iterate of its own kr_solve, for every method
 * with none, jacobi and bjacobi, generated and shared matrices, several
 * threads, blocks of 8 and 13 columns; b = 0 and converged-at-start columns;
 * the column-by-column paths (user operator and preconditioner, a format
 * without SpMM); the multi-column backend ops against the single ones; argument
 * errors. The GPU tests compare the GPU with the CPU (skipped without a GPU).
 */
#include "core/ctx.h"
#include "core/vec.h"
#include "precond/precond.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RTOL 1e-8
/* the true residual may exceed the tolerance by round-off only through
 * KR_DIVERGED_RESIDUAL_GAP, which is not a convergence */

static const char *const methods[] = {"cg", "gmres", "idr", "bicgstab"};
static const char *const preconds[] = {"none", "jacobi", "bjacobi"};

/* A system with k right-hand sides on ctx: host B and X0 row-major. */
typedef struct msys {
    kr_ctx *ctx;
    kr_csr A;
    kr_matrix *M;
    kr_precond *P;
    int k;
    double *B, *X0; /* n x k row-major */
} msys;

/* Column j of a row-major n x k block into x. */
static void get_col(int32_t n, int k, const double *X, int j, double *x)
{
    for (int32_t i = 0; i < n; i++)
        x[i] = X[(size_t)i * (size_t)k + (size_t)j];
}

/* Right-hand sides: random columns, column 1 zero (b = 0), column 2
 * b = A x0 with x0 its initial guess (converged at iteration 0), column
 * 3 random with a random initial guess; the others start from 0. */
static void fill_rhs_special(msys *s, uint64_t seed, int special)
{
    int32_t n = s->A.nrows;
    int k = s->k;
    uint64_t st = seed;
    double *x = malloc((size_t)n * sizeof *x),
           *b = malloc((size_t)n * sizeof *b);
    ck_assert(x && b);
    for (size_t e = 0; e < (size_t)n * (size_t)k; e++) {
        s->B[e] = kt_rand_uniform(&st);
        s->X0[e] = 0.0;
    }
    if (special && k > 2) {
        for (int32_t i = 0; i < n; i++)
            x[i] = kt_rand_uniform(&st);
        kr_csr_matvec(&s->A, x, b);
        for (int32_t i = 0; i < n; i++) {
            s->B[(size_t)i * k + 1] = 0.0;
            s->X0[(size_t)i * k + 1] = 1.0; /* b = 0 sets x = 0 anyway */
            s->B[(size_t)i * k + 2] = b[i];
            s->X0[(size_t)i * k + 2] = x[i];
        }
    }
    if (special && k > 3)
        for (int32_t i = 0; i < n; i++)
            s->X0[(size_t)i * k + 3] = kt_rand_uniform(&st);
    free(x);
    free(b);
}

static void fill_rhs(msys *s, uint64_t seed) { fill_rhs_special(s, seed, 1); }

static void msys_make(kr_ctx *ctx, const kr_csr *A, const char *format,
                      const char *pc, int k, msys *s)
{
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->k = k;
    s->A = *A;
    ck_assert_int_eq(kr_matrix_create(ctx, A, format, &s->M), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, A, pc, &s->P), KR_OK);
    s->B = malloc((size_t)A->nrows * (size_t)k * sizeof *s->B);
    s->X0 = malloc((size_t)A->nrows * (size_t)k * sizeof *s->X0);
    ck_assert(s->B && s->X0);
}

static void msys_free(msys *s)
{
    kr_matrix_destroy(s->M);
    kr_precond_destroy(s->P);
    free(s->B);
    free(s->X0);
}

static void options(kr_solve_options *o, const char *method)
{
    kr_solve_options_default(o);
    o->method = method;
    o->rtol = RTOL;
    o->maxit = 3000;
    o->restart = 20;
}

/* kr_solve_multi of s on M and P: results and the solution, host X */
static void solve_multi(msys *s, kr_matrix *M, kr_precond *P,
                        const kr_solve_options *o, kr_result *res, double *X)
{
    size_t nk = (size_t)s->A.nrows * (size_t)s->k;
    kr_vec *B, *Xv;
    ck_assert_int_eq(kr_vec_create(s->ctx, (int32_t)nk, &B), KR_OK);
    ck_assert_int_eq(kr_vec_create(s->ctx, (int32_t)nk, &Xv), KR_OK);
    ck_assert_int_eq(kr_vec_upload(B, s->B), KR_OK);
    ck_assert_int_eq(kr_vec_upload(Xv, s->X0), KR_OK);
    kr_status st = kr_solve_multi(s->ctx, M, P, s->k, B, Xv, o, res);
    ck_assert_msg(st == KR_OK, "kr_solve_multi: %s", kr_ctx_error(s->ctx));
    ck_assert_int_eq(kr_vec_download(Xv, X), KR_OK);
    kr_vec_destroy(B);
    kr_vec_destroy(Xv);
}

/* kr_solve of column j of s: result and solution x */
static void solve_single(msys *s, int j, const kr_solve_options *o,
                         kr_result *res, double *x)
{
    int32_t n = s->A.nrows;
    kr_vec *b, *xv;
    ck_assert_int_eq(kr_vec_create(s->ctx, n, &b), KR_OK);
    ck_assert_int_eq(kr_vec_create(s->ctx, n, &xv), KR_OK);
    get_col(n, s->k, s->B, j, x);
    ck_assert_int_eq(kr_vec_upload(b, x), KR_OK);
    get_col(n, s->k, s->X0, j, x);
    ck_assert_int_eq(kr_vec_upload(xv, x), KR_OK);
    ck_assert_int_eq(kr_solve(s->ctx, s->M, s->P, b, xv, o, res), KR_OK);
    ck_assert_int_eq(kr_vec_download(xv, x), KR_OK);
    kr_vec_destroy(b);
    kr_vec_destroy(xv);
}

/* ||b_j - A x_j|| on the host meets the tolerance for a converged column */
static void assert_column_solved(const msys *s, int j, const double *X,
                                 const kr_result *r, double rtol,
                                 const char *what)
{
    int32_t n = s->A.nrows;
    double *x = malloc((size_t)n * sizeof *x),
           *b = malloc((size_t)n * sizeof *b);
    ck_assert(x && b);
    get_col(n, s->k, X, j, x);
    get_col(n, s->k, s->B, j, b);
    double tr = kt_host_residual(&s->A, b, x);
    if (!isfinite(tr)) { /* ||b|| near DBL_MAX: the host loop overflows */
        free(x);
        free(b);
        return;
    }
    ck_assert_msg(fabs(tr - r->true_rnorm) <= 1e-6 * (tr + r->bnorm) + 1e-300,
                  "%s col %d: host ||b - A x|| %g, result %g", what, j + 1, tr,
                  r->true_rnorm);
    if (r->reason > 0)
        ck_assert_msg(tr <= rtol * r->bnorm * (1 + 1e-9) ||
                          r->reason == KR_CONVERGED_ZERO_RHS,
                      "%s col %d: %s with ||b - A x|| = %g > rtol ||b|| = %g",
                      what, j + 1, kr_reason_name(r->reason), tr,
                      rtol * r->bnorm);
    free(x);
    free(b);
}

/* Every column of the multi solve equals its own kr_solve bit for bit
 * (iterations, reason, norms, x) and, converged, meets the tolerance. */
static void check_columns(msys *s, const kr_solve_options *o, const char *what)
{
    int32_t n = s->A.nrows;
    int k = s->k;
    kr_result res[KR_MULTI_MAX_COLUMNS], one;
    double *X = malloc((size_t)n * (size_t)k * sizeof *X);
    double *x = malloc((size_t)n * sizeof *x),
           *xm = malloc((size_t)n * sizeof *xm);
    ck_assert(X && x && xm);
    solve_multi(s, s->M, s->P, o, res, X);
    for (int j = 0; j < k; j++) {
        solve_single(s, j, o, &one, x);
        get_col(n, k, X, j, xm);
        ck_assert_msg(res[j].iterations == one.iterations &&
                          res[j].reason == one.reason,
                      "%s col %d: multi %d its %s, alone %d its %s", what,
                      j + 1, res[j].iterations, kr_reason_name(res[j].reason),
                      one.iterations, kr_reason_name(one.reason));
        ck_assert_msg(memcmp(x, xm, (size_t)n * sizeof *x) == 0,
                      "%s col %d: x differs from kr_solve's", what, j + 1);
        ck_assert_msg(res[j].true_rnorm == one.true_rnorm &&
                          res[j].rnorm == one.rnorm &&
                          res[j].bnorm == one.bnorm,
                      "%s col %d: norms differ", what, j + 1);
        ck_assert_int_eq(res[j].true_residual_restarts,
                         one.true_residual_restarts);
        ck_assert_int_eq(res[j].breakdown_restarts, one.breakdown_restarts);
        assert_column_solved(s, j, X, &res[j], o->rtol, what);
    }
    if (k > 2) {
        ck_assert_int_eq(res[1].reason, KR_CONVERGED_ZERO_RHS);
        ck_assert_int_eq(res[1].iterations, 0);
        ck_assert_int_eq(res[2].iterations, 0);
        ck_assert_msg(res[2].reason > 0, "%s: x0 exact", what);
    }
    free(X);
    free(x);
    free(xm);
}

static const char *spec_for(const char *method)
{
    return strcmp(method, "cg") ? "convdiff2d:20,3" : "elasticity3d:6";
}

/* ---------------------------------------------- columns equal kr_solve */

/* One generated system (format NULL: auto) with k columns: every column
 * against its own kr_solve. */
static void check_generated(kr_ctx *ctx, const kr_csr *A, const char *method,
                            const char *format, const char *pc, int k)
{
    msys s;
    char what[96];
    snprintf(what, sizeof what, "%s+%s %s k=%d", method, pc,
             format ? format : "auto", k);
    msys_make(ctx, A, format, pc, k, &s);
    fill_rhs(&s, 7 + (uint64_t)k);
    kr_solve_options o;
    options(&o, method);
    check_columns(&s, &o, what);
    msys_free(&s);
}

/* Every method with none, jacobi and bjacobi on a generated matrix, k = 5
 * (random, b = 0, exact x0, random x0, random), and k = 1. */
START_TEST(columns_equal_single_generated)
{
    kr_ctx *ctx = kt_cpu();
    for (int mi = 0; mi < 4; mi++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(ctx, spec_for(methods[mi]), &A), KR_OK);
        for (int pi = 0; pi < 3; pi++)
            for (int k = 1; k <= 5; k += 4)
                check_generated(ctx, &A, methods[mi], NULL, preconds[pi], k);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Two threads on systems large enough that the reductions split over
 * them (n*m >= 16384): the multi-column sums keep each thread's order. */
START_TEST(columns_equal_single_threads)
{
    kr_ctx *ctx = kt_cpu();
    ck_assert_int_eq(kr_ctx_set_threads(ctx, 2), KR_OK);
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:100", &A), KR_OK);
    for (int mi = 0; mi < 4; mi++) {
        msys s;
        msys_make(ctx, &A, NULL, mi % 2 ? "bjacobi" : "jacobi", 4, &s);
        fill_rhs(&s, 11);
        kr_solve_options o;
        options(&o, methods[mi]);
        o.rtol = 1e-6;
        o.maxit = 400; /* some columns stop at maxit: a reason too */
        check_columns(&s, &o, methods[mi]);
        msys_free(&s);
    }
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Wide blocks through the CSR SpMM: k = 8 (one chunk of eight columns)
 * and k = 13 (chunks of eight, four and one), on a matrix with I-node
 * groups (elasticity3d) for CG and on one without for the others. */
START_TEST(columns_equal_single_wide)
{
    kr_ctx *ctx = kt_cpu();
    for (int mi = 0; mi < 4; mi++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(ctx, spec_for(methods[mi]), &A), KR_OK);
        for (int k = 8; k <= 13; k += 5)
            check_generated(ctx, &A, methods[mi], "csr", "jacobi", k);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Shared matrices: each method with jacobi and bjacobi, k = 4. */
START_TEST(columns_equal_single_shared)
{
    const char *dir = kt_matrices_dir();
    if (!dir) {
        kt_skip("columns_equal_single_shared", "no shared matrices");
        return;
    }
    static const char *const names[4] = {"nos5", "sherman1", "orsirr_1",
                                         "pores_2"};
    kr_ctx *ctx = kt_cpu();
    for (int mi = 0; mi < 4; mi++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.mtx", dir, names[mi]);
        kr_csr A;
        ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_OK);
        for (int pi = 1; pi < 3; pi++) {
            msys s;
            char what[96];
            snprintf(what, sizeof what, "%s %s+%s", names[mi], methods[mi],
                     preconds[pi]);
            msys_make(ctx, &A, NULL, preconds[pi], 4, &s);
            fill_rhs(&s, 5);
            kr_solve_options o;
            options(&o, methods[mi]);
            o.maxit = 2000;
            check_columns(&s, &o, what);
            msys_free(&s);
        }
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------ breakdowns */

/* test_breakdown's systems, where BiCGSTAB (no preconditioner) breaks down
 * exactly for b = e1: after one iteration with progress (a restart then
 * converges), after one iteration and again at the restart, and before
 * the first iteration. Columns e1, b = 0, an exact x0 and a random b
 * from a random x0 (k = 4): each
 * column's reason, restarts and iterates equal its own kr_solve's, every
 * method. */
START_TEST(breakdowns_per_column)
{
    static const double B4[16] = {1, 1, -2, 1, 1, -1, 0, 0,
                                  2, 0, -2, 0, 3, 0,  0, -3};
    static const double W3[9] = {1, 0, 0, 0.5, 0, 1, 0.5, -1, 0};
    static const double S2[4] = {0, 1, 1, 0};
    static const double *const mats[3] = {B4, W3, S2};
    static const int sizes[3] = {4, 3, 2};
    kr_ctx *ctx = kt_cpu();
    int broke = 0;
    for (int t = 0; t < 3; t++)
        for (int mi = 0; mi < 4; mi++) {
            int32_t n = sizes[t];
            kr_csr A;
            kt_dense_csr(ctx, n, mats[t], &A);
            msys s;
            msys_make(ctx, &A, "csr", "none", 4, &s);
            fill_rhs(&s, 17); /* then column 1 is b = e1 from x0 = 0 */
            for (int32_t i = 0; i < n; i++) {
                s.B[i * 4] = i == 0;
                s.X0[i * 4] = 0.0;
            }
            kr_solve_options o;
            options(&o, methods[mi]);
            o.rtol = 1e-10;
            o.maxit = 50;
            kr_result res[4];
            double X[32];
            solve_multi(&s, s.M, s.P, &o, res, X);
            broke += res[0].reason == KR_DIVERGED_BREAKDOWN ||
                     res[0].breakdown_restarts > 0;
            char what[64];
            snprintf(what, sizeof what, "breakdown system %d %s", t,
                     methods[mi]);
            check_columns(&s, &o, what);
            msys_free(&s);
            kr_csr_free(&A);
        }
    ck_assert_int_ge(broke, 3); /* BiCGSTAB's three cases at least */
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------- the column-by-column paths */

static kr_status host_apply(void *user, const kr_vec *x, kr_vec *y)
{
    kr_csr_matvec(user, kr_vec_data(x), kr_vec_data(y)); /* CPU memory */
    return KR_OK;
}

static kr_status host_jacobi(void *user, const kr_vec *r, kr_vec *z)
{
    const kr_csr *A = user;
    const double *rr = kr_vec_data(r);
    double *zz = kr_vec_data(z);
    for (int32_t i = 0; i < A->nrows; i++) {
        double d = 1.0;
        for (int32_t e = A->rowptr[i]; e < A->rowptr[i + 1]; e++)
            if (A->colind[e] == i) d = A->val[e];
        zz[i] = rr[i] / d;
    }
    return KR_OK;
}

/* A user operator and preconditioner (no SpMM, no batched apply) and a
 * format without apply_multi: the solve goes column by column there and
 * still equals kr_solve per column. */
START_TEST(column_paths_equal_single)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "convdiff2d:16,3", &A), KR_OK);
    int32_t n = A.nrows;
    for (int mi = 0; mi < 4; mi++) {
        const char *spec = methods[mi];
        msys s;
        msys_make(ctx, &A, "ellr", "jacobi", 4, &s);
        fill_rhs(&s, 3);
        kr_solve_options o;
        options(&o, spec);
        check_columns(&s, &o, "ellr"); /* ellr has no CPU SpMM here */
        kr_matrix *U;
        kr_precond *Q;
        ck_assert_int_eq(kr_matrix_create_user(ctx, n, n, host_apply, &A, &U),
                         KR_OK);
        ck_assert_int_eq(kr_precond_create_user(ctx, n, host_jacobi, &A, &Q),
                         KR_OK);
        kr_matrix_destroy(s.M);
        kr_precond_destroy(s.P);
        s.M = U;
        s.P = Q;
        check_columns(&s, &o, "user operator and preconditioner");
        msys_free(&s);
    }
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* A column with ||b|| near 1e200 runs alone (scaled, as kr_solve runs
 * it) and equals kr_solve; the others run together. */
START_TEST(huge_column_equals_single)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:16", &A), KR_OK);
    msys s;
    msys_make(ctx, &A, NULL, "jacobi", 3, &s);
    fill_rhs(&s, 21);
    for (int32_t i = 0; i < A.nrows; i++)
        s.B[(size_t)i * 3] *= 1e200;
    for (int mi = 0; mi < 4; mi++) {
        kr_solve_options o;
        options(&o, methods[mi]);
        check_columns(&s, &o, methods[mi]);
    }
    msys_free(&s);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* kr_ksp_solve_multi: equal to kr_solve_multi, and a second call of the
 * same size allocates nothing. */
START_TEST(ksp_multi_reuses_work)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "convdiff2d:12,3", &A), KR_OK);
    int32_t n = A.nrows;
    int k = 6;
    msys s;
    msys_make(ctx, &A, NULL, "bjacobi", k, &s);
    /* no b = 0 or exact x0: their zero norms take kr_norm2's scaled
     * path, which allocates (as kr_solve's does) */
    fill_rhs_special(&s, 4, 0);
    kr_solve_options o;
    options(&o, "idr");
    kr_result r1[6], r2[6];
    double *X1 = malloc((size_t)n * k * sizeof *X1);
    double *X2 = malloc((size_t)n * k * sizeof *X2);
    ck_assert(X1 && X2);
    solve_multi(&s, s.M, s.P, &o, r1, X1);
    kr_ksp *ksp;
    ck_assert_int_eq(kr_ksp_create(ctx, "idr", &ksp), KR_OK);
    ck_assert_int_eq(kr_ksp_set_operator(ksp, s.M), KR_OK);
    ck_assert_int_eq(kr_ksp_set_precond(ksp, s.P), KR_OK);
    ck_assert_int_eq(kr_ksp_set_options(ksp, &o), KR_OK);
    kr_vec *B, *X;
    ck_assert_int_eq(kr_vec_create(ctx, n * k, &B), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, n * k, &X), KR_OK);
    ck_assert_int_eq(kr_vec_upload(B, s.B), KR_OK);
    for (int rep = 0; rep < 2; rep++) {
        size_t a0 = kr_ctx_alloc_count(ctx, NULL);
        ck_assert_int_eq(kr_vec_upload(X, s.X0), KR_OK);
        ck_assert_int_eq(kr_ksp_solve_multi(ksp, k, B, X, r2), KR_OK);
        if (rep == 1) ck_assert_uint_eq(kr_ctx_alloc_count(ctx, NULL), a0);
        ck_assert_int_eq(kr_vec_download(X, X2), KR_OK);
        ck_assert(memcmp(X1, X2, (size_t)n * k * sizeof *X1) == 0);
        for (int j = 0; j < k; j++)
            ck_assert_int_eq(r1[j].iterations, r2[j].iterations);
    }
    kr_vec_destroy(B);
    kr_vec_destroy(X);
    kr_ksp_destroy(ksp);
    free(X1);
    free(X2);
    msys_free(&s);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------- argument errors */

START_TEST(api_errors)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A, R;
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:8", &A), KR_OK);
    kt_random_csr(ctx, 64, 32, 3, 0, 1, &R);
    kr_matrix *M, *MR;
    kr_precond *P;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, NULL, &M), KR_OK);
    ck_assert_int_eq(kr_matrix_create(ctx, &R, NULL, &MR), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_OK);
    kr_vec *B, *X, *S;
    ck_assert_int_eq(kr_vec_create(ctx, 64 * 3, &B), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 64 * 3, &X), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 64 * 2, &S), KR_OK);
    kr_result res[KR_MULTI_MAX_COLUMNS + 1];
    ck_assert_int_eq(kr_solve_multi(ctx, M, P, 3, B, X, NULL, res), KR_OK);
    ck_assert_int_eq(kr_solve_multi(ctx, M, P, 0, B, X, NULL, res), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "k = 0"));
    ck_assert_int_eq(
        kr_solve_multi(ctx, M, P, KR_MULTI_MAX_COLUMNS + 1, B, X, NULL, res),
        KR_ERR_ARG);
    ck_assert_int_eq(kr_solve_multi(ctx, M, P, 3, B, S, NULL, res), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "size mismatch"));
    ck_assert_int_eq(kr_solve_multi(ctx, M, P, 3, B, B, NULL, res), KR_ERR_ARG);
    ck_assert_int_eq(kr_solve_multi(ctx, M, P, 3, B, X, NULL, NULL),
                     KR_ERR_ARG);
    ck_assert_int_eq(kr_solve_multi(ctx, M, P, 3, NULL, X, NULL, res),
                     KR_ERR_ARG);
    ck_assert_int_eq(kr_solve_multi(ctx, NULL, P, 3, B, X, NULL, res),
                     KR_ERR_ARG);
    ck_assert_int_eq(kr_solve_multi(ctx, MR, P, 3, B, X, NULL, res),
                     KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "not square"));
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "nope";
    ck_assert_int_eq(kr_solve_multi(ctx, M, P, 3, B, X, &o, res), KR_ERR_ARG);
    double nan_b[64 * 3] = {0};
    nan_b[5] = NAN;
    ck_assert_int_eq(kr_vec_upload(B, nan_b), KR_OK);
    ck_assert_int_eq(kr_solve_multi(ctx, M, P, 3, B, X, NULL, res),
                     KR_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "column 3"));
    kr_ksp *ksp;
    ck_assert_int_eq(kr_ksp_create(ctx, "cg", &ksp), KR_OK);
    ck_assert_int_eq(kr_ksp_solve_multi(ksp, 3, B, X, res), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "no operator"));
    kr_ksp_destroy(ksp);
    kr_vec_destroy(B);
    kr_vec_destroy(X);
    kr_vec_destroy(S);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    kr_matrix_destroy(MR);
    kr_csr_free(&A);
    kr_csr_free(&R);
    kr_ctx_destroy(ctx);
}
END_TEST

/* -------------------------------------------- the multi-column backend ops */

/* Inputs and outputs of one run of every multi-column op (host). */
typedef struct ops_io {
    int32_t n;
    int k;
    uint64_t mask;
    double *in[4], *d, *V, *Vs, *hn; /* blocks, diagonal, 3 blocks, 3 vecs */
    double a[64], b[64], c[64];
    double *out[9]; /* result blocks */
    double s[6]
            [3 * 64]; /* scalars of mdots, mxr (2), maxpy_dots, mgemv_t (2) */
} ops_io;

static void io_make(ops_io *io, int32_t n, int k, uint64_t mask, uint64_t seed)
{
    memset(io, 0, sizeof *io);
    io->n = n;
    io->k = k;
    io->mask = mask;
    size_t nk = (size_t)n * (size_t)k;
    uint64_t st = seed;
    for (int i = 0; i < 4; i++) {
        io->in[i] = malloc(nk * sizeof(double));
        for (size_t e = 0; e < nk; e++)
            io->in[i][e] = kt_rand_uniform(&st);
    }
    io->d = malloc((size_t)n * sizeof(double));
    io->V = malloc(3 * nk * sizeof(double));
    io->Vs = malloc(3 * (size_t)n * sizeof(double));
    io->hn = malloc(3 * (size_t)k * sizeof(double));
    for (int32_t i = 0; i < n; i++)
        io->d[i] = kt_rand_uniform(&st);
    for (size_t e = 0; e < 3 * nk; e++)
        io->V[e] = kt_rand_uniform(&st);
    for (size_t e = 0; e < 3 * (size_t)n; e++)
        io->Vs[e] = kt_rand_uniform(&st);
    for (int j = 0; j < 3 * k; j++)
        io->hn[j] = kt_rand_uniform(&st);
    for (int j = 0; j < k; j++) {
        io->a[j] = kt_rand_uniform(&st);
        io->b[j] = j == 0 ? 0.0 : kt_rand_uniform(&st);
        io->c[j] = j == 1 ? 0.0 : kt_rand_uniform(&st);
    }
    for (int i = 0; i < 9; i++)
        io->out[i] = malloc(nk * sizeof(double));
}

static void io_free(ops_io *io)
{
    for (int i = 0; i < 4; i++)
        free(io->in[i]);
    for (int i = 0; i < 9; i++)
        free(io->out[i]);
    free(io->d);
    free(io->V);
    free(io->Vs);
    free(io->hn);
}

static double *up(kr_ctx *ctx, const double *h, size_t count)
{
    void *p;
    ck_assert_int_eq(kr_dev_upload_new(ctx, h, count * sizeof(double), &p),
                     KR_OK);
    return p;
}

static void down(kr_ctx *ctx, double *h, const double *d, size_t count)
{
    ck_assert_int_eq(ctx->ops->download(ctx, h, d, count * sizeof(double)),
                     KR_OK);
}

/* Runs every multi-column op on ctx with io's inputs; io->out and io->s
 * get the results. */
static void run_ops(kr_ctx *ctx, ops_io *io)
{
    const kr_backend_ops *op = ctx->ops;
    int32_t n = io->n;
    int k = io->k;
    uint64_t m = io->mask;
    size_t nk = (size_t)n * (size_t)k;
    double *in[4], *w[4];
    for (int i = 0; i < 4; i++) {
        in[i] = up(ctx, io->in[i], nk);
        w[i] = up(ctx, io->in[i], nk);
    }
    double *d = up(ctx, io->d, (size_t)n), *V = up(ctx, io->V, 3 * nk);
    double *Vs = up(ctx, io->Vs, 3 * (size_t)n);
    const double *xs[2] = {in[0], in[1]}, *ys[2] = {in[2], in[0]};
    ck_assert_int_eq(op->mdots(ctx, n, k, 2, xs, ys, m, io->s[0]), KR_OK);
    ck_assert_int_eq(op->maxpby(ctx, n, k, io->a, in[0], io->b, w[1], m),
                     KR_OK);
    down(ctx, io->out[0], w[1], nk);
    ck_assert_int_eq(
        op->maxpbypcz(ctx, n, k, io->a, in[0], io->b, in[1], io->c, w[2], m),
        KR_OK);
    down(ctx, io->out[1], w[2], nk);
    ck_assert_int_eq(op->mxr_update(ctx, n, k, io->a, in[0], in[1], w[2], w[3],
                                    d, w[0], m, io->s[1]),
                     KR_OK);
    down(ctx, io->out[2], w[2], nk);
    down(ctx, io->out[3], w[3], nk);
    down(ctx, io->out[4], w[0], nk);
    ck_assert_int_eq(op->mxr_update(ctx, n, k, io->a, in[0], in[1], w[2], w[3],
                                    NULL, NULL, m, io->s[2]),
                     KR_OK);
    ck_assert_int_eq(
        op->maxpy_dots(ctx, n, k, io->a, in[0], w[3], in[2], m, io->s[3]),
        KR_OK);
    down(ctx, io->out[5], w[3], nk);
    ck_assert_int_eq(
        op->mgemv_t(ctx, n, k, 3, V, (int64_t)nk, 0, in[3], m, io->s[4]),
        KR_OK);
    ck_assert_int_eq(op->mgemv_t(ctx, n, k, 3, Vs, n, 1, in[3], m, io->s[5]),
                     KR_OK);
    ck_assert_int_eq(
        op->mgemv_n(ctx, n, k, 3, V, (int64_t)nk, io->hn, -1.0, w[1], m),
        KR_OK);
    down(ctx, io->out[6], w[1], nk);
    ck_assert_int_eq(op->mpointwise(ctx, n, k, d, in[1], w[0]), KR_OK);
    down(ctx, io->out[7], w[0], nk);
    int j1 = k > 1 ? 1 : 0, j2 = k > 2 ? 2 : 0; /* columns that exist */
    ck_assert_int_eq(op->mcolumn(ctx, n, k, j1, w[0], d, 1), KR_OK);
    ck_assert_int_eq(op->mcolumn(ctx, n, k, j2, w[0], Vs, 0), KR_OK);
    down(ctx, io->out[8], w[0], nk);
    down(ctx, io->out[8], Vs, (size_t)n); /* column j2 over the first n */
    for (int i = 0; i < 4; i++) {
        kr_dev_free(ctx, in[i]);
        kr_dev_free(ctx, w[i]);
    }
    kr_dev_free(ctx, d);
    kr_dev_free(ctx, V);
    kr_dev_free(ctx, Vs);
}

/* The single-vector op's results on column j, from io's inputs (CPU):
 * every multi-column result must equal them bit for bit. */
static void check_column_ops(kr_ctx *ctx, const ops_io *io, int j)
{
    const kr_backend_ops *op = ctx->ops;
    int32_t n = io->n;
    int k = io->k;
    size_t nn = (size_t)n * sizeof(double);
    double *c[4], *w[4], *o = malloc(nn), s[4];
    for (int i = 0; i < 4; i++) {
        c[i] = malloc(nn);
        w[i] = malloc(nn);
        get_col(n, k, io->in[i], j, c[i]);
        memcpy(w[i], c[i], nn);
    }
    const double *xs[2] = {c[0], c[1]}, *ys[2] = {c[2], c[0]};
    ck_assert_int_eq(op->dots(ctx, n, 2, xs, ys, s), KR_OK);
    ck_assert(s[0] == io->s[0][j] && s[1] == io->s[0][k + j]);
    op->axpby(ctx, n, io->a[j], c[0], io->b[j], w[1]);
    get_col(n, k, io->out[0], j, o);
    ck_assert(memcmp(o, w[1], nn) == 0);
    op->axpbypcz(ctx, n, io->a[j], c[0], io->b[j], c[1], io->c[j], w[2]);
    get_col(n, k, io->out[1], j, o);
    ck_assert(memcmp(o, w[2], nn) == 0);
    op->xr_update(ctx, n, io->a[j], c[0], c[1], w[2], w[3], io->d, w[0], s);
    ck_assert(s[0] == io->s[1][j] && s[1] == io->s[1][k + j]);
    get_col(n, k, io->out[2], j, o);
    ck_assert(memcmp(o, w[2], nn) == 0);
    get_col(n, k, io->out[3], j, o);
    ck_assert(memcmp(o, w[3], nn) == 0);
    get_col(n, k, io->out[4], j, o);
    ck_assert(memcmp(o, w[0], nn) == 0);
    op->xr_update(ctx, n, io->a[j], c[0], c[1], w[2], w[3], NULL, NULL, s);
    ck_assert(s[0] == io->s[2][j] && s[1] == io->s[2][k + j]);
    op->axpy_dots(ctx, n, io->a[j], c[0], w[3], c[2], s);
    ck_assert(s[0] == io->s[3][j] && s[1] == io->s[3][k + j]);
    get_col(n, k, io->out[5], j, o);
    ck_assert(memcmp(o, w[3], nn) == 0);
    double *V = malloc(3 * nn), h[3];
    for (int l = 0; l < 3; l++)
        get_col(n, k, io->V + (size_t)l * n * k, j, V + (size_t)l * n);
    op->gemv_t(ctx, n, 3, V, n, c[3], h);
    for (int l = 0; l < 3; l++)
        ck_assert(h[l] == io->s[4][l * k + j]);
    op->gemv_t(ctx, n, 3, io->Vs, n, c[3], h);
    for (int l = 0; l < 3; l++)
        ck_assert(h[l] == io->s[5][l * k + j]);
    for (int l = 0; l < 3; l++)
        h[l] = io->hn[l * k + j];
    memcpy(w[1], c[1], nn);
    op->axpby(ctx, n, io->a[j], c[0], io->b[j], w[1]);
    op->gemv_n(ctx, n, 3, V, n, h, -1.0, w[1]);
    get_col(n, k, io->out[6], j, o);
    ck_assert(memcmp(o, w[1], nn) == 0);
    free(V);
    op->pointwise_mult(ctx, n, io->d, c[1], w[0]);
    get_col(n, k, io->out[7], j, o);
    ck_assert(memcmp(o, w[0], nn) == 0);
    for (int i = 0; i < 4; i++) {
        free(c[i]);
        free(w[i]);
    }
    free(o);
}

/* On the CPU each column of every multi-column op is the single op's
 * result on that column, bit for bit, with one thread and with two (n
 * large enough to split the reductions), for a mask that leaves columns
 * out; the columns left out are unchanged. */
START_TEST(cpu_ops_equal_single_ops)
{
    for (int run = 0; run < 4; run++) {
        int threads = 1 + run % 2;
        kr_ctx *ctx = kt_cpu();
        ck_assert_int_eq(kr_ctx_set_threads(ctx, threads), KR_OK);
        int32_t n = 20011;
        int k = run < 2 ? 5 : 1;
        uint64_t mask = k == 5 ? 0x1b : 1; /* k = 5: columns 1, 2, 4, 5 */
        ops_io io;
        io_make(&io, n, k, mask, 99);
        run_ops(ctx, &io);
        for (int j = 0; j < k; j++)
            if (mask >> j & 1) check_column_ops(ctx, &io, j);
        for (int32_t i = 0; k == 5 && i < n; i++) /* column 3 left alone */
            ck_assert(io.out[0][(size_t)i * k + 2] ==
                      io.in[1][(size_t)i * k + 2]);
        io_free(&io);
        kr_ctx_destroy(ctx);
    }
}
END_TEST

static void assert_close(const double *a, const double *b, size_t count,
                         const char *what, uint64_t seed)
{
    for (size_t e = 0; e < count; e++)
        ck_assert_msg(fabs(a[e] - b[e]) <= 1e-11 * (1 + fabs(b[e])),
                      "%s entry %zu: gpu %.17g cpu %.17g (seed %llu)", what, e,
                      a[e], b[e], (unsigned long long)seed);
}

/* The GPU's multi-column ops against the CPU reference on fresh random
 * data (the seed is printed), several k and masks. */
START_TEST(gpu_ops_match_cpu)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_ops_match_cpu");
    if (!gpu) return;
    kr_ctx *cpu = kt_cpu();
    uint64_t seed = (uint64_t)time(NULL);
    printf("gpu_ops_match_cpu: seed %llu\n", (unsigned long long)seed);
    static const int ks[] = {1, 3, 8, 33, 64};
    for (int t = 0; t < 5; t++) {
        int k = ks[t];
        uint64_t mask = k == 64 ? ~(uint64_t)0 >> 1 : ((uint64_t)1 << k) - 1;
        if (k > 2) mask &= ~(uint64_t)2;
        ops_io g, c;
        io_make(&g, 3001 + 7 * t, k, mask, seed + t);
        io_make(&c, 3001 + 7 * t, k, mask, seed + t);
        run_ops(gpu, &g);
        run_ops(cpu, &c);
        size_t nk = (size_t)g.n * (size_t)k;
        for (int i = 0; i < 9; i++)
            assert_close(g.out[i], c.out[i], nk, "block", seed + t);
        for (int i = 0; i < 6; i++) /* two sums, or gemv_t's three */
            for (int l = 0; l < (i < 4 ? 2 : 3); l++)
                for (int j = 0; j < k; j++)
                    if (mask >> j & 1)
                        assert_close(&g.s[i][l * k + j], &c.s[i][l * k + j], 1,
                                     "sum", seed + t);
        io_free(&g);
        io_free(&c);
    }
    kr_ctx_destroy(cpu);
    kr_ctx_destroy(gpu);
}
END_TEST

/* Z = M^-1 R for k columns by P's multi-column apply on ctx (R and Z
 * host, row-major n x k; Z starts as NaN, so every entry must be written). */
static void precond_multi(kr_ctx *ctx, kr_precond *P, int32_t n, int k,
                          const double *R, double *Z)
{
    kr_vec *vR, *vZ;
    ck_assert_int_eq(kr_vec_create(ctx, n * k, &vR), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, n * k, &vZ), KR_OK);
    ck_assert_int_eq(kr_vec_upload(vR, R), KR_OK);
    ck_assert_int_eq(kr_vec_fill(vZ, NAN), KR_OK);
    ck_assert_ptr_nonnull(P->ops->apply_multi);
    ck_assert_int_eq(
        P->ops->apply_multi(ctx, P->impl, n, k, vR->data, vZ->data), KR_OK);
    ck_assert_int_eq(kr_vec_download(vZ, Z), KR_OK);
    kr_vec_destroy(vR);
    kr_vec_destroy(vZ);
}

/* The preconditioners' multi-column applies on the GPU (jacobi's
 * mpointwise, bjacobi's k_gje_apply_multi) against the CPU's on fresh
 * random R (seed printed), nonsymmetric and symmetric matrices, several
 * k: the solves below would not notice, say, a transposed block. */
START_TEST(gpu_precond_multi_matches_cpu)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_precond_multi_matches_cpu");
    if (!gpu) return;
    kr_ctx *cpu = kt_cpu();
    uint64_t seed = (uint64_t)time(NULL);
    printf("gpu_precond_multi_matches_cpu: seed %llu\n",
           (unsigned long long)seed);
    static const int ks[] = {1, 3, 8, 33};
    for (int mi = 0; mi < 2; mi++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(cpu, spec_for(methods[mi]), &A), KR_OK);
        int32_t n = A.nrows;
        for (int pi = 1; pi < 3; pi++) {
            kr_precond *Pc, *Pg;
            ck_assert_int_eq(kr_precond_create(cpu, &A, preconds[pi], &Pc),
                             KR_OK);
            ck_assert_int_eq(kr_precond_create(gpu, &A, preconds[pi], &Pg),
                             KR_OK);
            for (int t = 0; t < 4; t++) {
                int k = ks[t];
                size_t nk = (size_t)n * (size_t)k;
                double *R = malloc(nk * 8), *Zc = malloc(nk * 8);
                double *Zg = malloc(nk * 8);
                ck_assert(R && Zc && Zg);
                uint64_t st = seed + (uint64_t)(mi * 16 + pi * 4 + t);
                for (size_t e = 0; e < nk; e++)
                    R[e] = 2.0 * kt_rand_uniform(&st) - 1.0;
                precond_multi(cpu, Pc, n, k, R, Zc);
                precond_multi(gpu, Pg, n, k, R, Zg);
                char what[96];
                snprintf(what, sizeof what, "%s on %s, k = %d", preconds[pi],
                         spec_for(methods[mi]), k);
                assert_close(Zg, Zc, nk, what,
                             seed + (uint64_t)(mi * 16 + pi * 4 + t));
                free(R);
                free(Zc);
                free(Zg);
            }
            kr_precond_destroy(Pc);
            kr_precond_destroy(Pg);
        }
        kr_csr_free(&A);
    }
    kr_ctx_destroy(cpu);
    kr_ctx_destroy(gpu);
}
END_TEST

/* ------------------------------------ CG's scalars in backend memory */

/* kr_solve_multi of s with KRYLOV_MULTI_DEVICE set to env (NULL: unset,
 * the default: the device-scalar loop where the backend has it) */
static void solve_multi_env(msys *s, const char *env, const kr_solve_options *o,
                            kr_result *res, double *X)
{
    if (env)
        ck_assert_int_eq(setenv("KRYLOV_MULTI_DEVICE", env, 1), 0);
    else
        unsetenv("KRYLOV_MULTI_DEVICE");
    solve_multi(s, s->M, s->P, o, res, X);
    unsetenv("KRYLOV_MULTI_DEVICE");
}

/* b = 0 (column 2) and x0 exact (column 3) end at iteration 0 */
static void assert_special_columns(const kr_result *res, int k,
                                   const char *what)
{
    if (k <= 2) return;
    ck_assert_msg(res[1].reason == KR_CONVERGED_ZERO_RHS &&
                      res[1].iterations == 0,
                  "%s: b = 0 gave %s at %d", what,
                  kr_reason_name(res[1].reason), res[1].iterations);
    ck_assert_msg(res[2].reason > 0 && res[2].iterations == 0,
                  "%s: exact x0 gave %s at %d", what,
                  kr_reason_name(res[2].reason), res[2].iterations);
}

/* One CG case on the CPU: the device-scalar loop equals the host-scalar
 * loop bit for bit, column by column. */
static void check_device_cpu(kr_ctx *ctx, const kr_csr *A, const char *pc,
                             int k, int maxit, uint64_t seed)
{
    int32_t n = A->nrows;
    size_t nk = (size_t)n * (size_t)k;
    char what[96];
    snprintf(what, sizeof what, "cg+%s k=%d maxit=%d seed %llu", pc, k, maxit,
             (unsigned long long)seed);
    msys s;
    msys_make(ctx, A, NULL, pc, k, &s);
    fill_rhs(&s, seed);
    kr_solve_options o;
    options(&o, "cg");
    o.maxit = maxit;
    kr_result rh[KR_MULTI_MAX_COLUMNS], rd[KR_MULTI_MAX_COLUMNS];
    double *Xh = malloc(nk * sizeof *Xh), *Xd = malloc(nk * sizeof *Xd);
    ck_assert(Xh && Xd);
    solve_multi_env(&s, "0", &o, rh, Xh);
    solve_multi_env(&s, NULL, &o, rd, Xd);
    for (int j = 0; j < k; j++) {
        ck_assert_msg(rd[j].iterations == rh[j].iterations &&
                          rd[j].reason == rh[j].reason &&
                          rd[j].rnorm == rh[j].rnorm &&
                          rd[j].true_rnorm == rh[j].true_rnorm,
                      "%s col %d: device %d its %s, host %d its %s", what,
                      j + 1, rd[j].iterations, kr_reason_name(rd[j].reason),
                      rh[j].iterations, kr_reason_name(rh[j].reason));
        if (maxit < 100 && j != 1 && j != 2)
            ck_assert_msg(rd[j].reason == KR_DIVERGED_ITS &&
                              rd[j].iterations == maxit,
                          "%s col %d: %s at %d", what, j + 1,
                          kr_reason_name(rd[j].reason), rd[j].iterations);
        assert_column_solved(&s, j, Xd, &rd[j], o.rtol, what);
    }
    ck_assert_msg(memcmp(Xh, Xd, nk * sizeof *Xh) == 0, "%s: X differs", what);
    assert_special_columns(rd, k, what);
    free(Xh);
    free(Xd);
    msys_free(&s);
}

/* CG's device-scalar loop (the default) against the host-scalar loop
 * (KRYLOV_MULTI_DEVICE=0) on the CPU with fresh random right-hand sides
 * (seed printed): none and jacobi, k = 5 and 16, run to convergence
 * (about 40 and 100 iterations: batches up to 16, replays) and stopped by maxit
 * on the host inside the device's run (9: batches 1, 2, 4 and a short 2). */
START_TEST(device_scalars_equal_host_scalars)
{
    kr_ctx *ctx = kt_cpu();
    uint64_t seed = (uint64_t)time(NULL);
    printf("device_scalars_equal_host_scalars: seed %llu\n",
           (unsigned long long)seed);
    static const char *const specs[2] = {"elasticity3d:6", "poisson2d:40"};
    static const int ks[2] = {5, 16}, maxits[2] = {3000, 9};
    for (int si = 0; si < 2; si++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(ctx, specs[si], &A), KR_OK);
        for (int pi = 0; pi < 2; pi++)
            for (int ki = 0; ki < 2; ki++)
                for (int mi = 0; mi < 2; mi++)
                    check_device_cpu(
                        ctx, &A, preconds[pi], ks[ki], maxits[mi],
                        seed + (uint64_t)(si * 8 + pi * 4 + ki * 2 + mi));
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------------ GPU */

/* Multi-column solves on the GPU against the CPU's on fresh random
 * right-hand sides (seed printed): every method with none, jacobi and
 * bjacobi; per column the iterations agree within test_gpu's tolerance
 * and a converged column meets the tolerance on the host. */
START_TEST(gpu_multi_matches_cpu)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_multi_matches_cpu");
    if (!gpu) return;
    kr_ctx *cpu = kt_cpu();
    uint64_t seed = (uint64_t)time(NULL);
    printf("gpu_multi_matches_cpu: seed %llu\n", (unsigned long long)seed);
    for (int mi = 0; mi < 4; mi++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(cpu, spec_for(methods[mi]), &A), KR_OK);
        for (int pi = 0; pi < 3; pi++) {
            int k = 6;
            msys c, g;
            msys_make(cpu, &A, NULL, preconds[pi], k, &c);
            msys_make(gpu, &A, NULL, preconds[pi], k, &g);
            fill_rhs(&c, seed + (uint64_t)pi);
            fill_rhs(&g, seed + (uint64_t)pi);
            kr_solve_options o;
            options(&o, methods[mi]);
            kr_result rc[6], rg[6];
            size_t nk = (size_t)A.nrows * (size_t)k;
            double *Xc = malloc(nk * sizeof *Xc), *Xg = malloc(nk * sizeof *Xg);
            ck_assert(Xc && Xg);
            solve_multi(&c, c.M, c.P, &o, rc, Xc);
            solve_multi(&g, g.M, g.P, &o, rg, Xg);
            int monotone = mi < 2;
            for (int j = 0; j < k; j++) {
                int tol = 3 + rc[j].iterations / (monotone ? 20 : 8);
                ck_assert_msg(abs(rc[j].iterations - rg[j].iterations) <= tol,
                              "%s+%s col %d: %d CPU vs %d GPU (seed %llu)",
                              methods[mi], preconds[pi], j + 1,
                              rc[j].iterations, rg[j].iterations,
                              (unsigned long long)seed);
                ck_assert_int_gt(rg[j].reason, 0);
                assert_column_solved(&g, j, Xg, &rg[j], o.rtol, "gpu");
            }
            free(Xc);
            free(Xg);
            msys_free(&c);
            msys_free(&g);
        }
        kr_csr_free(&A);
    }
    kr_ctx_destroy(cpu);
    kr_ctx_destroy(gpu);
}
END_TEST

/* Column j's iterations within test_gpu's tolerance of the reference */
static void assert_its_close(const kr_result *ref, const kr_result *got, int j,
                             const char *what, uint64_t seed)
{
    int tol = 3 + ref->iterations / 20;
    ck_assert_msg(abs(ref->iterations - got->iterations) <= tol,
                  "%s col %d: %d vs %d iterations (seed %llu)", what, j + 1,
                  ref->iterations, got->iterations, (unsigned long long)seed);
}

/* One GPU case: the device-scalar loop against the CPU, the host-scalar
 * loop and each column alone on the GPU. */
static void check_device_gpu(kr_ctx *cpu, kr_ctx *gpu, const kr_csr *A,
                             const char *pc, int k, uint64_t seed)
{
    int32_t n = A->nrows;
    size_t nk = (size_t)n * (size_t)k;
    msys c, g;
    msys_make(cpu, A, NULL, pc, k, &c);
    msys_make(gpu, A, NULL, pc, k, &g);
    fill_rhs(&c, seed);
    fill_rhs(&g, seed);
    kr_solve_options o;
    options(&o, "cg");
    kr_result rc[32], rh[32], rd[32], one;
    ck_assert_int_le(k, 32);
    double *Xc = malloc(nk * sizeof *Xc), *Xh = malloc(nk * sizeof *Xh);
    double *Xd = malloc(nk * sizeof *Xd), *x = malloc((size_t)n * sizeof *x);
    ck_assert(Xc && Xh && Xd && x);
    solve_multi_env(&c, NULL, &o, rc, Xc);
    solve_multi_env(&g, "0", &o, rh, Xh);
    solve_multi_env(&g, NULL, &o, rd, Xd);
    for (int j = 0; j < k; j++) {
        solve_single(&g, j, &o, &one, x);
        assert_its_close(&rc[j], &rd[j], j, "cpu vs gpu device", seed);
        assert_its_close(&rh[j], &rd[j], j, "gpu host vs device", seed);
        assert_its_close(&one, &rd[j], j, "gpu alone vs device", seed);
        ck_assert_int_gt(rd[j].reason, 0);
        assert_column_solved(&g, j, Xd, &rd[j], o.rtol, "gpu device");
    }
    assert_special_columns(rd, k, "gpu device");
    o.maxit = 9; /* the host stops the columns inside the device's run */
    solve_multi_env(&g, NULL, &o, rd, Xd);
    for (int j = 0; j < k; j++) {
        if (j != 1 && j != 2)
            ck_assert_msg(rd[j].reason == KR_DIVERGED_ITS &&
                              rd[j].iterations == 9,
                          "gpu maxit 9 col %d: %s at %d", j + 1,
                          kr_reason_name(rd[j].reason), rd[j].iterations);
        assert_column_solved(&g, j, Xd, &rd[j], o.rtol, "gpu maxit 9");
    }
    assert_special_columns(rd, k, "gpu maxit 9");
    free(Xc);
    free(Xh);
    free(Xd);
    free(x);
    msys_free(&c);
    msys_free(&g);
}

/* CG over 16 columns on the GPU with its scalars in backend memory,
 * fresh random right-hand sides (seed printed), none, jacobi and
 * bjacobi (applied inside the update, mcg_step_bd; 21 columns, between
 * mcg_step's halves): per
 * column the iterations agree within test_gpu's tolerance with the CPU,
 * the host-scalar loop (KRYLOV_MULTI_DEVICE=0) and the column solved
 * alone; a converged column meets the tolerance by its true residual;
 * b = 0 and an exact x0 end at iteration 0; maxit 9 stops the others at
 * 9. */
START_TEST(gpu_device_scalars_match)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_device_scalars_match");
    if (!gpu) return;
    kr_ctx *cpu = kt_cpu();
    uint64_t seed = (uint64_t)time(NULL);
    printf("gpu_device_scalars_match: seed %llu\n", (unsigned long long)seed);
    kr_csr A;
    ck_assert_int_eq(kr_generate(cpu, "elasticity3d:8", &A), KR_OK);
    for (int pi = 0; pi < 3; pi++)
        check_device_gpu(cpu, gpu, &A, preconds[pi], 16, seed + (uint64_t)pi);
    check_device_gpu(cpu, gpu, &A, "bjacobi", 21, seed + 3);
    kr_csr_free(&A);
    kr_ctx_destroy(cpu);
    kr_ctx_destroy(gpu);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("multi");
    TCase *tc = tcase_create("multi");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, columns_equal_single_generated);
    tcase_add_test(tc, columns_equal_single_threads);
    tcase_add_test(tc, columns_equal_single_wide);
    tcase_add_test(tc, columns_equal_single_shared);
    tcase_add_test(tc, breakdowns_per_column);
    tcase_add_test(tc, column_paths_equal_single);
    tcase_add_test(tc, huge_column_equals_single);
    tcase_add_test(tc, ksp_multi_reuses_work);
    tcase_add_test(tc, api_errors);
    tcase_add_test(tc, cpu_ops_equal_single_ops);
    tcase_add_test(tc, device_scalars_equal_host_scalars);
    tcase_add_test(tc, gpu_ops_match_cpu);
    tcase_add_test(tc, gpu_precond_multi_matches_cpu);
    tcase_add_test(tc, gpu_multi_matches_cpu);
    tcase_add_test(tc, gpu_device_scalars_match);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
