/* The Krylov methods (cg, gmres, idr, bicgstab): convergence to the true
 * residual and to a known solution on generated and real matrices, every
 * stopping reason provoked on purpose by a matrix that genuinely causes it,
 * and the corner cases (b = 0, exact x0, n = 1, history and monitor,
 * determinism). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-8
/* The methods test a recursive residual (GMRES: an estimate); the true one
 * recomputed at the end may exceed it by round-off, up to this factor. */
#define SLACK 1.05

static const char *const methods[] = {"cg", "gmres", "idr", "bicgstab"};
#define NMETHODS 4

/* ------------------------------------------------------------ matrices */

static void put(kr_csr *A, int32_t *k, int32_t j, double v)
{
    A->colind[*k] = j;
    A->val[*k] = v;
    (*k)++;
}

/* 5-point stencil on an m x m grid; c = centre, west, east, south, north */
static void stencil(kr_ctx *ctx, int32_t m, const double c[5], kr_csr *A)
{
    int32_t n = m * m, k = 0;
    ck_assert_int_eq(kr_csr_alloc(ctx, n, n, 5 * n, A), KR_OK);
    for (int32_t row = 0; row < n; row++) {
        int32_t i = row % m, j = row / m;
        if (j > 0) put(A, &k, row - m, c[3]);
        if (i > 0) put(A, &k, row - 1, c[1]);
        put(A, &k, row, c[0]);
        if (i < m - 1) put(A, &k, row + 1, c[2]);
        if (j < m - 1) put(A, &k, row + m, c[4]);
        A->rowptr[row + 1] = k;
    }
    A->nnz = k;
}

/* -Laplace(u), SPD */
static void laplace2d(kr_ctx *ctx, int32_t m, kr_csr *A)
{
    static const double c[5] = {4, -1, -1, -1, -1};
    stencil(ctx, m, c, A);
}

/* -Laplace(u) + (v, w).grad(u) by central differences, cell Peclet
 * numbers 0.5 and 0.25: nonsymmetric */
static void convdiff2d(kr_ctx *ctx, int32_t m, kr_csr *A)
{
    static const double c[5] = {4, -1.5, -0.5, -1.25, -0.75};
    stencil(ctx, m, c, A);
}

static void diag_csr(kr_ctx *ctx, int32_t n, const double *d, kr_csr *A)
{
    ck_assert_int_eq(kr_csr_alloc(ctx, n, n, n, A), KR_OK);
    for (int32_t i = 0; i < n; i++) {
        A->colind[i] = i;
        A->val[i] = d[i];
        A->rowptr[i + 1] = i + 1;
    }
}

/* Tridiagonal eps*I + S with S skew-symmetric: r.Ar = eps ||r||^2 is
 * tiny, the hard case for methods that take a step along A r. */
static void nearly_skew(kr_ctx *ctx, int32_t n, double eps, kr_csr *A)
{
    int32_t k = 0;
    ck_assert_int_eq(kr_csr_alloc(ctx, n, n, 3 * n, A), KR_OK);
    for (int32_t i = 0; i < n; i++) {
        if (i > 0) put(A, &k, i - 1, -1.0 - 0.01 * (i % 3));
        put(A, &k, i, eps);
        if (i < n - 1) put(A, &k, i + 1, 1.0 + 0.01 * ((i + 1) % 3));
        A->rowptr[i + 1] = k;
    }
    A->nnz = k;
}

/* ------------------------------------------------------------- helpers */

/* A system with a known solution: b = A xt. */
typedef struct problem {
    kr_csr A;
    double *xt, *b, *x; /* x receives the solution */
} problem;

static kr_ctx *new_ctx(void)
{
    kr_ctx *ctx = NULL;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
    return ctx;
}

/* Fills xt (random, or the given values), b = A xt, and x = 0. */
static void problem_rhs(problem *p, uint64_t seed)
{
    int32_t n = p->A.nrows;
    p->xt = malloc(sizeof(double) * (size_t)n);
    p->b = malloc(sizeof(double) * (size_t)n);
    p->x = calloc((size_t)n, sizeof(double));
    ck_assert(p->xt && p->b && p->x);
    for (int32_t i = 0; i < n; i++)
        p->xt[i] = 1.0 + kt_rand_uniform(&seed);
    kr_csr_matvec(&p->A, p->xt, p->b);
}

static void problem_free(problem *p)
{
    kr_csr_free(&p->A);
    free(p->xt);
    free(p->b);
    free(p->x);
}

/* Solves A x = b with x0 (NULL: zero) into x; returns kr_solve's status. */
static kr_status solve(kr_ctx *ctx, const kr_csr *A, const char *pc,
                       const double *b, const double *x0,
                       const kr_solve_options *opt, kr_result *res, double *x)
{
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_vec *vb = NULL, *vx = NULL;
    int32_t n = A->nrows;
    kr_status st = kr_matrix_create(ctx, A, "csr", &M);
    if (st == KR_OK) st = kr_precond_create(ctx, A, pc, &P);
    if (st == KR_OK) st = kr_vec_create(ctx, n, &vb);
    if (st == KR_OK) st = kr_vec_create(ctx, n, &vx);
    if (st == KR_OK) st = kr_vec_upload(vb, b);
    if (st == KR_OK && x0) st = kr_vec_upload(vx, x0);
    if (st == KR_OK) st = kr_solve(ctx, M, P, vb, vx, opt, res);
    if (st == KR_OK) st = kr_vec_download(vx, x);
    kr_vec_destroy(vb);
    kr_vec_destroy(vx);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    return st;
}

/* solve() that must succeed (the reason is checked by the caller). */
static void run(kr_ctx *ctx, problem *p, const char *pc, const double *x0,
                const kr_solve_options *opt, kr_result *res)
{
    kr_status st = solve(ctx, &p->A, pc, p->b, x0, opt, res, p->x);
    ck_assert_msg(st == KR_OK, "%s/%s: kr_solve failed: %s: %s", opt->method,
                  pc, kr_status_name(st), kr_ctx_error(ctx));
}

static double norm(int32_t n, const double *v)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

static double rel_error(int32_t n, const double *x, const double *xt)
{
    double d = 0.0;
    for (int32_t i = 0; i < n; i++)
        d += (x[i] - xt[i]) * (x[i] - xt[i]);
    return sqrt(d) / norm(n, xt);
}

/* Converged: the reason, the reported true residual (which must agree with
 * one recomputed here) below rtol ||b||, and, when errtol > 0, the error
 * against the known solution. */
static void assert_solved(const problem *p, const kr_result *res, double rtol,
                          double errtol, const char *what)
{
    int32_t n = p->A.nrows;
    double bn = norm(n, p->b), r = kt_host_residual(&p->A, p->b, p->x);
    ck_assert_msg(res->reason > 0, "%s: %s after %d iterations (rnorm %g)",
                  what, kr_reason_name(res->reason), res->iterations,
                  res->rnorm);
    ck_assert_msg(fabs(res->bnorm - bn) <= 1e-12 * bn, "%s: bnorm %g vs %g",
                  what, res->bnorm, bn);
    ck_assert_msg(res->true_rnorm <= rtol * SLACK * res->bnorm,
                  "%s: true residual %g > rtol ||b|| = %g (recursive %g)", what,
                  res->true_rnorm, rtol * res->bnorm, res->rnorm);
    ck_assert_msg(fabs(r - res->true_rnorm) <= 1e-6 * r + 1e-14 * bn,
                  "%s: reported true residual %g, recomputed %g", what,
                  res->true_rnorm, r);
    if (errtol > 0) {
        double e = rel_error(n, p->x, p->xt);
        ck_assert_msg(e <= errtol, "%s: relative error %g > %g", what, e,
                      errtol);
    }
}

static kr_solve_options options(const char *method)
{
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = method;
    o.rtol = RTOL;
    return o;
}

/* --------------------------------------------- convergence, generated */

enum { LAPLACE, RANDOM, CONVDIFF, NPROBLEMS };
static const char *const problem_names[] = {"laplace2d", "random dominant",
                                            "convdiff2d"};

static void make_problem(kr_ctx *ctx, int kind, problem *p)
{
    memset(p, 0, sizeof *p);
    if (kind == LAPLACE)
        laplace2d(ctx, 20, &p->A);
    else if (kind == RANDOM)
        kt_random_csr(ctx, 500, 500, 7, 1, 42, &p->A);
    else
        convdiff2d(ctx, 20, &p->A);
    problem_rhs(p, 7 + (uint64_t)kind);
}

/* Case i: CG on the Laplacian (SPD), the others on all three problems,
 * each with preconditioner none and jacobi. */
#define NGENERATED (2 + 3 * NPROBLEMS * 2)
START_TEST(converges_generated)
{
    int method = _i < 2 ? 0 : 1 + (_i - 2) / (NPROBLEMS * 2);
    int kind = _i < 2 ? LAPLACE : (_i - 2) / 2 % NPROBLEMS;
    const char *pc = _i % 2 ? "jacobi" : "none";
    char what[128];
    snprintf(what, sizeof what, "%s/%s on %s", methods[method], pc,
             problem_names[kind]);
    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result res;
    kr_solve_options o = options(methods[method]);
    make_problem(ctx, kind, &p);
    run(ctx, &p, pc, NULL, &o, &res);
    assert_solved(&p, &res, RTOL, 1e-5, what);
    ck_assert_msg(res.iterations > 1, "%s: %d iterations", what,
                  res.iterations);
    kr_result_free(&res);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The library's own generators, through kr_generate. */
static const char *const gen_specs[] = {"poisson2d:20", "poisson3d:8",
                                        "convdiff2d:20", "powerlaw:400"};
START_TEST(converges_kr_generate)
{
    const char *spec = gen_specs[_i / NMETHODS];
    const char *method = methods[_i % NMETHODS];
    if (strcmp(method, "cg") == 0 && strncmp(spec, "poisson", 7) != 0)
        return; /* CG only on the SPD ones */
    char what[128];
    snprintf(what, sizeof what, "%s/jacobi on %s", method, spec);
    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result res;
    kr_solve_options o = options(method);
    memset(&p, 0, sizeof p);
    ck_assert_msg(kr_generate(ctx, spec, &p.A) == KR_OK, "%s: %s", spec,
                  kr_ctx_error(ctx));
    problem_rhs(&p, 11);
    run(ctx, &p, "jacobi", NULL, &o, &res);
    assert_solved(&p, &res, RTOL, 1e-4, what);
    kr_result_free(&res);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* IDR(s) for s = 1, 2, 4, 8, with none and jacobi. */
START_TEST(idr_shadow_dimensions)
{
    static const int s_values[] = {1, 2, 4, 8};
    const char *pc = _i % 2 ? "jacobi" : "none";
    char what[64];
    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result res;
    kr_solve_options o = options("idr");
    o.s = s_values[_i / 2];
    snprintf(what, sizeof what, "idr(%d)/%s", o.s, pc);
    make_problem(ctx, CONVDIFF, &p);
    run(ctx, &p, pc, NULL, &o, &res);
    assert_solved(&p, &res, RTOL, 1e-5, what);
    kr_result_free(&res);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* GMRES(5), GMRES(30) and unrestarted GMRES (restart 200) converge.
 * Every GMRES(m) iterate lies in x0 + K_k(A M^-1, r0), over which full
 * GMRES minimises the residual, so full GMRES needs no more iterations
 * than GMRES(5) (GMRES(30) may beat or lose to GMRES(5)). The residual
 * estimate is the true residual up to round-off. */
START_TEST(gmres_restart_lengths)
{
    static const int restarts[3] = {5, 30, 200};
    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result res;
    int its[3];
    char what[32];
    make_problem(ctx, CONVDIFF, &p);
    for (int k = 0; k < 3; k++) {
        kr_solve_options o = options("gmres");
        o.restart = restarts[k];
        snprintf(what, sizeof what, "gmres(%d)", o.restart);
        run(ctx, &p, "jacobi", NULL, &o, &res);
        assert_solved(&p, &res, RTOL, 1e-5, what);
        ck_assert_msg(fabs(res.rnorm - res.true_rnorm) <= 1e-3 * res.rnorm,
                      "%s: estimate %g vs true %g", what, res.rnorm,
                      res.true_rnorm);
        its[k] = res.iterations;
        kr_result_free(&res);
    }
    ck_assert_msg(its[2] <= its[0], "full gmres %d > gmres(5) %d iterations",
                  its[2], its[0]);
    ck_assert_msg(its[0] > 30, "gmres(5) restarted only %d times", its[0] / 5);
    ck_assert_msg(its[2] < 200, "full gmres restarted (%d iterations)", its[2]);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* A matrix with 3 distinct eigenvalues: the Krylov space is invariant
 * after 3 steps (a happy breakdown), so GMRES solves exactly in 3; with
 * Jacobi, A M^-1 = I and it takes 1. */
START_TEST(gmres_happy_breakdown_exact)
{
    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result res;
    double d[30];
    for (int i = 0; i < 30; i++)
        d[i] = 1.0 + i % 3;
    memset(&p, 0, sizeof p);
    diag_csr(ctx, 30, d, &p.A);
    problem_rhs(&p, 5);
    kr_solve_options o = options("gmres");
    o.rtol = 1e-13;
    run(ctx, &p, "none", NULL, &o, &res);
    assert_solved(&p, &res, 1e-13, 1e-12, "gmres happy");
    ck_assert_int_eq(res.iterations, 3);
    run(ctx, &p, "jacobi", NULL, &o, &res);
    assert_solved(&p, &res, 1e-13, 1e-12, "gmres happy, jacobi");
    ck_assert_int_eq(res.iterations, 1);
    kr_result_free(&res);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* A = 3 I with rtol = atol = 0: every step is a happy breakdown whose
 * estimate is round-off. Each solve must end converged with x = b/3; when
 * only the recomputed true residual (exactly 0) meets the test, the reason
 * is CONVERGED_HAPPY_BREAKDOWN, which some of these sizes produce. */
START_TEST(gmres_happy_breakdown_reason)
{
    kr_ctx *ctx = new_ctx();
    int happy = 0;
    for (int32_t n = 2; n <= 12; n++) {
        problem p;
        kr_result res;
        double d[12];
        for (int i = 0; i < n; i++)
            d[i] = 3.0;
        memset(&p, 0, sizeof p);
        diag_csr(ctx, n, d, &p.A);
        problem_rhs(&p, 100 + (uint64_t)n);
        kr_solve_options o = options("gmres");
        o.rtol = 0.0;
        o.maxit = 20;
        run(ctx, &p, "none", NULL, &o, &res);
        ck_assert_msg(res.reason > 0, "n = %d: %s", n,
                      kr_reason_name(res.reason));
        ck_assert_msg(rel_error(n, p.x, p.xt) <= 1e-15, "n = %d", n);
        happy += res.reason == KR_CONVERGED_HAPPY_BREAKDOWN;
        kr_result_free(&res);
        problem_free(&p);
    }
    ck_assert_msg(happy > 0, "no size reported a happy breakdown");
    kr_ctx_destroy(ctx);
}
END_TEST

/* -------------------------------------------------- stopping reasons */

/* Runs `method` on the small system a (dense n x n) x = b from x0 = 0 and
 * returns the result; the caller frees it. */
static kr_result run_small(int32_t n, const double *a, const double *b,
                           const char *method, const char *pc,
                           const kr_solve_options *base, double *x)
{
    kr_ctx *ctx = new_ctx();
    kr_csr A;
    kr_result res;
    kr_solve_options o = base ? *base : options(method);
    o.method = method;
    kt_dense_csr(ctx, n, a, &A);
    kr_status st = solve(ctx, &A, pc, b, NULL, &o, &res, x);
    ck_assert_msg(st == KR_OK, "%s: %s", method, kr_ctx_error(ctx));
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
    return res;
}

static void assert_reason(const kr_result *res, kr_reason want, int its,
                          const char *what)
{
    ck_assert_msg(res->reason == want, "%s: %s, expected %s (%d its)", what,
                  kr_reason_name(res->reason), kr_reason_name(want),
                  res->iterations);
    if (its >= 0)
        ck_assert_msg(res->iterations == its, "%s: %d iterations, expected %d",
                      what, res->iterations, its);
}

/* maxit = 5 stops every method after exactly 5 iterations, with 6
 * residuals in the history and a residual that went down. */
START_TEST(diverged_its)
{
    const char *method = methods[_i];
    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result res;
    kr_solve_options o = options(method);
    o.maxit = 5;
    o.keep_history = 1;
    make_problem(ctx, _i == 0 ? LAPLACE : CONVDIFF, &p);
    run(ctx, &p, "jacobi", NULL, &o, &res);
    assert_reason(&res, KR_DIVERGED_ITS, 5, method);
    ck_assert_int_eq(res.history_len, 6);
    ck_assert_msg(res.true_rnorm < res.bnorm, "%s: %g >= %g", method,
                  res.true_rnorm, res.bnorm);
    ck_assert(fabs(res.true_rnorm - kt_host_residual(&p.A, p.b, p.x)) <=
              1e-10 * res.bnorm);
    kr_result_free(&res);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Genuine breakdowns of the nonsymmetric methods.
 * N = [[0,1],[0,0]], b = e1: A b = 0, so K(A, b) = span{b} holds no
 * solution (x = e2): GMRES's least-squares matrix is singular, IDR's
 * first g = A u is 0 (M(1,1) = 0), BiCGSTAB's r0^.v = 0.
 * S = [[0,1],[1,0]], b = e1: BiCGSTAB's r0^.A r0 = 0 (the brief's case).
 * K = [[0,1],[-1,0]], b = (1,2): skew, so t.r = 0 exactly for every r and
 * IDR(1)'s omega step breaks down after its first step; BiCGSTAB again
 * at r0^.A r0 = 0. */
START_TEST(diverged_breakdown)
{
    static const double N[4] = {0, 1, 0, 0}, S[4] = {0, 1, 1, 0},
                        K[4] = {0, 1, -1, 0};
    static const double e1[2] = {1, 0}, b12[2] = {1, 2};
    double x[2];
    kr_solve_options o = options("idr");
    o.s = 1;
    static const char *const nonsym[] = {"gmres", "idr", "bicgstab"};
    for (int m = 0; m < 3; m++) {
        kr_result res = run_small(2, N, e1, nonsym[m], "none", &o, x);
        assert_reason(&res, KR_DIVERGED_BREAKDOWN, 0, nonsym[m]);
        ck_assert(x[0] == 0 && x[1] == 0 && res.true_rnorm == 1.0);
    }
    kr_result res = run_small(2, S, e1, "bicgstab", "none", &o, x);
    assert_reason(&res, KR_DIVERGED_BREAKDOWN, 0, "bicgstab, swap");
    res = run_small(2, K, b12, "idr", "none", &o, x);
    assert_reason(&res, KR_DIVERGED_BREAKDOWN, 1, "idr(1), skew");
    ck_assert(isfinite(res.true_rnorm) && isfinite(x[0]) && isfinite(x[1]));
    res = run_small(2, K, b12, "bicgstab", "none", &o, x);
    assert_reason(&res, KR_DIVERGED_BREAKDOWN, 0, "bicgstab, skew");
}
END_TEST

/* CG's breakdown: Jacobi on diag(1,-1) with b = (1,1) makes rho = r.z = 0
 * and then p.Ap = 0 at once. */
START_TEST(cg_breakdown)
{
    static const double a[4] = {1, 0, 0, -1}, b[2] = {1, 1};
    double x[2];
    kr_result res = run_small(2, a, b, "cg", "jacobi", NULL, x);
    assert_reason(&res, KR_DIVERGED_BREAKDOWN, 0, "cg");
}
END_TEST

/* Entries near DBL_MAX make A p overflow in the first inner product. */
START_TEST(diverged_nanorinf)
{
    static const double a[4] = {1e308, 1e308, 1e308, 5e307}, b[2] = {1, 1};
    double x[2];
    kr_result res = run_small(2, a, b, methods[_i], "none", NULL, x);
    assert_reason(&res, KR_DIVERGED_NANORINF, -1, methods[_i]);
    ck_assert_int_le(res.iterations, 1);
    ck_assert(!isfinite(res.rnorm));
}
END_TEST

/* Residuals that grow past dtol * max(||b||, ||r0||):
 * CG on diag(1, 1000) with b = (1, 0.03): the first step multiplies the
 * residual by 15 (dtol = 10).
 * BiCGSTAB on [[e,1],[-1,e]], e = 1e-6, b = e1: alpha = 1/e, so the first
 * step's residual is about 1/e = 1e6 (default dtol 1e5).
 * IDR(4) on a nearly skew tridiagonal matrix (n = 2000, e = 1e-2):
 * |cos(t, r)| ~ e < kappa in every cycle, so omega is enlarged to
 * kappa ||r|| / ||t|| and each omega step multiplies ||r|| by about
 * sqrt(1 + kappa^2), long before IDR's finite termination (n + n/s
 * mat-vecs) could help; r reaches dtol = 1e5 within a few hundred.
 * GMRES minimises the residual, which therefore never grows: only
 * dtol < 1 stops it, at iteration 0 already. */
START_TEST(diverged_dtol)
{
    static const double d[4] = {1, 0, 0, 1000}, bd[2] = {1, 0.03};
    static const double k[4] = {1e-6, 1, -1, 1e-6}, e1[2] = {1, 0};
    double x[2];
    kr_solve_options o = options("cg");
    o.dtol = 10;
    kr_result res = run_small(2, d, bd, "cg", "none", &o, x);
    assert_reason(&res, KR_DIVERGED_DTOL, 1, "cg");
    ck_assert(res.rnorm > 10 * res.bnorm);
    res = run_small(2, k, e1, "bicgstab", "none", NULL, x);
    assert_reason(&res, KR_DIVERGED_DTOL, 1, "bicgstab");
    ck_assert(res.rnorm > 1e5 * res.bnorm);

    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result r2;
    memset(&p, 0, sizeof p);
    nearly_skew(ctx, 2000, 1e-2, &p.A);
    problem_rhs(&p, 3);
    o = options("idr");
    o.maxit = 2000;
    run(ctx, &p, "none", NULL, &o, &r2);
    assert_reason(&r2, KR_DIVERGED_DTOL, -1, "idr");
    ck_assert(r2.rnorm > 1e5 * r2.bnorm);
    o = options("gmres");
    o.maxit = 200;
    o.keep_history = 1;
    run(ctx, &p, "none", NULL, &o, &r2);
    assert_reason(&r2, KR_DIVERGED_ITS, 200, "gmres");
    for (int i = 1; i < r2.history_len; i++)
        ck_assert(r2.history[i] <= r2.history[i - 1]);
    kr_result_free(&r2);
    o.dtol = 0.5;
    run(ctx, &p, "none", NULL, &o, &r2);
    assert_reason(&r2, KR_DIVERGED_DTOL, 0, "gmres, dtol 0.5");
    kr_result_free(&r2);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* CG on diag(1,-2,1,-2): p.Ap = -2 < 0 at the first step. */
START_TEST(cg_indefinite_matrix)
{
    static const double a[16] = {1, 0, 0, 0, 0, -2, 0, 0,
                                 0, 0, 1, 0, 0, 0,  0, -2};
    static const double b[4] = {1, 1, 1, 1};
    double x[4];
    kr_result res = run_small(4, a, b, "cg", "none", NULL, x);
    assert_reason(&res, KR_DIVERGED_INDEFINITE_MAT, 0, "cg");
}
END_TEST

/* diag(-1,4,4,4): Jacobi's M = diag(A) is indefinite and r.M^-1 r =
 * -1 + 3/4 < 0 for b = ones. */
START_TEST(cg_indefinite_pc)
{
    static const double a[16] = {-1, 0, 0, 0, 0, 4, 0, 0,
                                 0,  0, 4, 0, 0, 0, 0, 4};
    static const double b[4] = {1, 1, 1, 1};
    double x[4];
    kr_result res = run_small(4, a, b, "cg", "jacobi", NULL, x);
    assert_reason(&res, KR_DIVERGED_INDEFINITE_PC, 0, "cg");
}
END_TEST

/* -------------------------------------------------------- corner cases */

/* b = 0: x = 0 whatever x0 was, at iteration 0. */
START_TEST(zero_rhs)
{
    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result res;
    make_problem(ctx, LAPLACE, &p);
    int32_t n = p.A.nrows;
    double *x0 = malloc(sizeof(double) * (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        p.b[i] = 0.0;
        x0[i] = 1.0;
    }
    kr_solve_options o = options(methods[_i]);
    o.keep_history = 1;
    run(ctx, &p, "jacobi", x0, &o, &res);
    assert_reason(&res, KR_CONVERGED_ZERO_RHS, 0, methods[_i]);
    ck_assert_int_eq(res.history_len, 1);
    for (int32_t i = 0; i < n; i++)
        ck_assert(p.x[i] == 0.0);
    kr_result_free(&res);
    free(x0);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Right-hand sides whose squares under- or overflow: b = A xt with every
 * entry near 1e-170 or 1e200 (a zero-looking sum of squares; an infinite
 * one). The norms are scaled, so the solve is the one of the scale-1
 * system, scaled: converged with x = xt, ||b|| right, and never
 * CONVERGED_ZERO_RHS or "NaN or Inf". */
START_TEST(extreme_scales)
{
    static const double scales[] = {1e-170, 1e200, 1e-300, 1e300};
    kr_ctx *ctx = new_ctx();
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        problem p;
        kr_result res;
        make_problem(ctx, LAPLACE, &p);
        int32_t n = p.A.nrows;
        double bn1 = norm(n, p.b), s = scales[k];
        for (int32_t i = 0; i < n; i++) {
            p.xt[i] *= s;
            p.b[i] *= s;
        }
        kr_solve_options o = options(methods[_i]);
        o.keep_history = 1;
        run(ctx, &p, "jacobi", NULL, &o, &res);
        ck_assert_msg(res.reason == KR_CONVERGED_RTOL, "%s, scale %g: %s",
                      methods[_i], s, kr_reason_name(res.reason));
        ck_assert_msg(fabs(res.bnorm / s - bn1) <= 1e-12 * bn1,
                      "%s, scale %g: bnorm %g, expected %g", methods[_i], s,
                      res.bnorm, bn1 * s);
        ck_assert(res.true_rnorm <= RTOL * SLACK * res.bnorm);
        ck_assert(res.history[0] / s >= 0.99 * bn1 &&
                  res.history[0] / s <= 1.01 * bn1);
        for (int32_t i = 0; i < n; i++)
            ck_assert_msg(fabs(p.x[i] / s - p.xt[i] / s) <= 1e-6,
                          "%s, scale %g: x[%d] = %g, expected %g", methods[_i],
                          s, i, p.x[i], p.xt[i]);
        kr_result_free(&res);
        problem_free(&p);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* The case: 1000 entries of 1e-170, all nonzero, is not b = 0. */
START_TEST(tiny_rhs_is_not_zero)
{
    kr_ctx *ctx = new_ctx();
    double d[1000], b[1000], x[1000];
    for (int i = 0; i < 1000; i++) {
        d[i] = 2.0 + i % 3;
        b[i] = 1e-170;
    }
    kr_csr A;
    diag_csr(ctx, 1000, d, &A);
    kr_solve_options o = options(methods[_i]);
    kr_result res;
    ck_assert_int_eq(solve(ctx, &A, "none", b, NULL, &o, &res, x), KR_OK);
    ck_assert_msg(res.reason > 0 && res.reason != KR_CONVERGED_ZERO_RHS,
                  "%s: %s", methods[_i], kr_reason_name(res.reason));
    ck_assert(fabs(res.bnorm - sqrt(1000.0) * 1e-170) <= 1e-182);
    for (int i = 0; i < 1000; i++)
        ck_assert(fabs(x[i] * d[i] / 1e-170 - 1.0) <= 1e-7);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* x0 = the solution: converged at iteration 0, nothing NaN, x unchanged.
 * Integer data make r0 exactly 0 (the case that divides 0 by 0 if a
 * method normalises r0 first); random data leave round-off in r0. */
START_TEST(exact_initial_guess)
{
    kr_ctx *ctx = new_ctx();
    for (int integer = 0; integer < 2; integer++) {
        problem p;
        kr_result res;
        make_problem(ctx, integer ? LAPLACE : RANDOM, &p);
        int32_t n = p.A.nrows;
        if (integer) {
            for (int32_t i = 0; i < n; i++)
                p.xt[i] = (double)(i % 5) - 2;
            kr_csr_matvec(&p.A, p.xt, p.b);
        }
        kr_solve_options o = options(methods[_i]);
        run(ctx, &p, "jacobi", p.xt, &o, &res);
        ck_assert_msg(res.reason > 0 && res.iterations == 0, "%s: %s, %d its",
                      methods[_i], kr_reason_name(res.reason), res.iterations);
        ck_assert(isfinite(res.rnorm) && isfinite(res.true_rnorm));
        ck_assert(res.true_rnorm <= 1e-14 * res.bnorm);
        ck_assert(memcmp(p.x, p.xt, sizeof(double) * (size_t)n) == 0);
        if (integer) ck_assert(res.rnorm == 0.0);
        problem_free(&p);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* n = 1: 4 x = 2. */
START_TEST(one_unknown)
{
    static const double a[1] = {4}, b[1] = {2};
    for (int pc = 0; pc < 2; pc++) {
        double x[1];
        kr_result res =
            run_small(1, a, b, methods[_i], pc ? "jacobi" : "none", NULL, x);
        ck_assert_msg(res.reason > 0, "%s: %s", methods[_i],
                      kr_reason_name(res.reason));
        ck_assert_int_ge(res.iterations, 1);
        ck_assert(fabs(x[0] - 0.5) <= 1e-15);
    }
}
END_TEST

/* The monitor sees it = 0, 1, 2, ... once each; the history holds the
 * same norms, iterations + 1 of them, the last being the final rnorm. */
START_TEST(history_and_monitor)
{
    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result res;
    static kt_monitor_log log;
    log.count = 0;
    kr_solve_options o = options(methods[_i]);
    o.keep_history = 1;
    o.monitor = kt_monitor_record;
    o.monitor_user = &log;
    o.restart = 10; /* GMRES: cross a few restarts */
    make_problem(ctx, _i == 0 ? LAPLACE : CONVDIFF, &p);
    run(ctx, &p, "jacobi", NULL, &o, &res);
    assert_solved(&p, &res, RTOL, 1e-5, methods[_i]);
    ck_assert_int_eq(res.history_len, res.iterations + 1);
    ck_assert_int_eq(log.count, res.iterations + 1);
    for (int i = 0; i < log.count; i++) {
        ck_assert_int_eq(log.it[i], i);
        ck_assert(log.rnorm[i] == res.history[i]);
    }
    ck_assert(res.history[0] == res.bnorm); /* x0 = 0 */
    ck_assert(res.history[res.history_len - 1] == res.rnorm);
    kr_result_free(&res);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Two solves give bitwise the same x, on a size where the CPU kernels run
 * on several threads. */
START_TEST(deterministic)
{
    kr_ctx *ctx = new_ctx();
    problem p;
    kr_result res;
    memset(&p, 0, sizeof p);
    if (_i == 0)
        laplace2d(ctx, 130, &p.A);
    else
        convdiff2d(ctx, 130, &p.A);
    problem_rhs(&p, 9);
    int32_t n = p.A.nrows;
    double *first = malloc(sizeof(double) * (size_t)n);
    kr_solve_options o = options(methods[_i]);
    o.rtol = 1e-6;
    o.maxit = 300;
    run(ctx, &p, "jacobi", NULL, &o, &res);
    int its = res.iterations;
    memcpy(first, p.x, sizeof(double) * (size_t)n);
    run(ctx, &p, "jacobi", NULL, &o, &res);
    ck_assert_int_eq(res.iterations, its);
    ck_assert_msg(memcmp(first, p.x, sizeof(double) * (size_t)n) == 0,
                  "%s: two solves differ", methods[_i]);
    free(first);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------ real matrices */

/* Reads dir/name.mtx into p with a known solution; 0 if skipped. */
static int load_real(kr_ctx *ctx, const char *test, const char *name,
                     problem *p)
{
    const char *dir = kt_matrices_dir();
    char path[4096];
    memset(p, 0, sizeof *p);
    if (!dir) {
        kt_skip(test, "no matrices folder (../shared/matrices or "
                      "$KRYLOV_MATRICES)");
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s.mtx", dir, name);
    ck_assert_msg(kr_read_mtx(ctx, path, &p->A) == KR_OK, "%s: %s", path,
                  kr_ctx_error(ctx));
    problem_rhs(p, 1234);
    return 1;
}

static void solve_real(kr_ctx *ctx, problem *p, const char *name,
                       const char *method, int s)
{
    char what[128];
    kr_result res;
    kr_solve_options o = options(method);
    o.maxit = 20000;
    o.s = s;
    snprintf(what, sizeof what, "%s/jacobi on %s", method, name);
    memset(p->x, 0, sizeof(double) * (size_t)p->A.nrows);
    run(ctx, p, "jacobi", NULL, &o, &res);
    assert_solved(p, &res, RTOL, 0.0, what);
    kr_result_free(&res);
}

/* The SPD matrices of SOURCES.md: CG and IDR(4), both with Jacobi.
 * IDR(4) is left out on nasa4704: its residual oscillates without
 * progress and finally passes dtol, for every s tried (1, 2, 4, 8); a
 * plain transcription of the paper's algorithm shows the same erratic
 * residuals. */
static const char *const spd[] = {
    "bcsstk08", "bcsstk14", "bcsstk16", "bcsstk18", "bcsstk38",
    "mhd4800b", "crystm01", "nasa4704", "1138_bus", "nos5"};
START_TEST(real_spd)
{
    kr_ctx *ctx = new_ctx();
    problem p;
    if (load_real(ctx, "real_spd", spd[_i], &p)) {
        solve_real(ctx, &p, spd[_i], "cg", 4);
        if (strcmp(spd[_i], "nasa4704") != 0)
            solve_real(ctx, &p, spd[_i], "idr", 4);
    }
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Nonsymmetric (and sherman1, symmetric negative definite) matrices on
 * which the method converges with Jacobi. Left out: GMRES(30) on
 * sherman3 and pores_2 and BiCGSTAB on pores_2 (not converged after 3000
 * iterations), BiCGSTAB on memplus (r0^.r hits exactly 0 at iteration
 * 200, where PETSc's rounding happens to miss it). */
static const struct {
    const char *name;
    const char *methods[3];
} nonsym_cases[] = {
    {"orsirr_1", {"gmres", "idr", "bicgstab"}},
    {"sherman5", {"gmres", "idr", "bicgstab"}},
    {"add32", {"gmres", "idr", "bicgstab"}},
    {"cage9", {"gmres", "idr", "bicgstab"}},
    {"fs_541_1", {"gmres", "idr", "bicgstab"}},
    {"sherman1", {"gmres", "idr", "bicgstab"}},
    {"sherman3", {"idr", "bicgstab", NULL}},
    {"pores_2", {"idr", NULL, NULL}},
};
START_TEST(real_nonsymmetric)
{
    kr_ctx *ctx = new_ctx();
    problem p;
    const char *name = nonsym_cases[_i].name;
    if (load_real(ctx, "real_nonsymmetric", name, &p))
        for (int m = 0; m < 3 && nonsym_cases[_i].methods[m]; m++)
            solve_real(ctx, &p, name, nonsym_cases[_i].methods[m], 4);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("solvers");
    TCase *tc = tcase_create("generated");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_loop_test(tc, converges_generated, 0, NGENERATED);
    tcase_add_loop_test(tc, converges_kr_generate, 0, 4 * NMETHODS);
    tcase_add_loop_test(tc, idr_shadow_dimensions, 0, 8);
    tcase_add_test(tc, gmres_restart_lengths);
    tcase_add_test(tc, gmres_happy_breakdown_exact);
    tcase_add_test(tc, gmres_happy_breakdown_reason);
    suite_add_tcase(s, tc);

    TCase *tr = tcase_create("reasons");
    tcase_set_timeout(tr, KT_HANG_GUARD_S);
    tcase_add_loop_test(tr, diverged_its, 0, NMETHODS);
    tcase_add_test(tr, diverged_breakdown);
    tcase_add_test(tr, cg_breakdown);
    tcase_add_loop_test(tr, diverged_nanorinf, 0, NMETHODS);
    tcase_add_test(tr, diverged_dtol);
    tcase_add_test(tr, cg_indefinite_matrix);
    tcase_add_test(tr, cg_indefinite_pc);
    suite_add_tcase(s, tr);

    TCase *tk = tcase_create("corners");
    tcase_set_timeout(tk, KT_HANG_GUARD_S);
    tcase_add_loop_test(tk, zero_rhs, 0, NMETHODS);
    tcase_add_loop_test(tk, extreme_scales, 0, NMETHODS);
    tcase_add_loop_test(tk, tiny_rhs_is_not_zero, 0, NMETHODS);
    tcase_add_loop_test(tk, exact_initial_guess, 0, NMETHODS);
    tcase_add_loop_test(tk, one_unknown, 0, NMETHODS);
    tcase_add_loop_test(tk, history_and_monitor, 0, NMETHODS);
    tcase_add_loop_test(tk, deterministic, 0, NMETHODS);
    suite_add_tcase(s, tk);

    TCase *tm = tcase_create("real");
    tcase_set_timeout(tm, KT_HANG_GUARD_S);
    tcase_add_loop_test(tm, real_spd, 0, sizeof spd / sizeof spd[0]);
    tcase_add_loop_test(tm, real_nonsymmetric, 0,
                        sizeof nonsym_cases / sizeof nonsym_cases[0]);
    suite_add_tcase(s, tm);
    return kt_run(s);
}
