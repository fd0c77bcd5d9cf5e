/* The solver object (kr_ksp): many solves with no allocation after setup,
 * options by name equal to options by struct, user (matrix-free)
 * operators and preconditioners with every method, a monitor and an
 * interrupt flag that stop the solve, new values on one pattern, and an
 * option struct of the older size. Each test runs on the CPU and, when one
 * is usable, on the GPU (_i = 1). */
#include "precond/bjacobi.h"
#include "testutil.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-8
/* the true residual may exceed the recursive one by round-off */
#define SLACK 1.05

static const char *const methods[] = {"cg", "gmres", "idr", "bicgstab"};
#define NMETHODS 4

/* A problem on a context: A, its matrix, b (random, seeded) and x. */
typedef struct problem {
    kr_ctx *ctx;
    kr_csr A;
    kr_matrix *M;
    kr_vec *b, *x;
    double *hb, *hx;
} problem;

/* The context of loop index gpu (0: CPU, 1: GPU), NULL when skipped. */
static kr_ctx *context(int gpu, const char *test)
{
    return gpu ? kt_gpu_or_skip(test) : kt_cpu();
}

static void random_rhs(problem *p, uint64_t seed)
{
    uint64_t s = seed;
    for (int32_t i = 0; i < p->A.nrows; i++)
        p->hb[i] = kt_rand_uniform(&s);
    ck_assert_int_eq(kr_vec_upload(p->b, p->hb), KR_OK);
    ck_assert_int_eq(kr_vec_fill(p->x, 0.0), KR_OK);
}

/* spec: SPD for cg (poisson2d), nonsymmetric for the others */
static void problem_make(kr_ctx *ctx, const char *spec, problem *p)
{
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    ck_assert_int_eq(kr_generate(ctx, spec, &p->A), KR_OK);
    ck_assert_int_eq(kr_matrix_create(ctx, &p->A, NULL, &p->M), KR_OK);
    int32_t n = p->A.nrows;
    ck_assert_int_eq(kr_vec_create(ctx, n, &p->b), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, n, &p->x), KR_OK);
    p->hb = malloc((size_t)n * sizeof *p->hb);
    p->hx = malloc((size_t)n * sizeof *p->hx);
    ck_assert(p->hb && p->hx);
}

static void problem_free(problem *p)
{
    kr_vec_destroy(p->b);
    kr_vec_destroy(p->x);
    kr_matrix_destroy(p->M);
    kr_csr_free(&p->A);
    free(p->hb);
    free(p->hx);
}

static const char *spec_for(const char *method)
{
    return strcmp(method, "cg") ? "convdiff2d:24,3" : "poisson2d:24";
}

/* ||b - A x|| <= SLACK * rtol * ||b|| on the host, from x downloaded. */
static void assert_solved(problem *p, const kr_result *res, const char *what)
{
    ck_assert_msg(res->reason > 0, "%s: %s", what, kr_reason_name(res->reason));
    ck_assert_int_eq(kr_vec_download(p->x, p->hx), KR_OK);
    double r = kt_host_residual(&p->A, p->hb, p->hx);
    ck_assert_msg(r <= SLACK * RTOL * res->bnorm,
                  "%s: ||b - A x|| = %g > %g * ||b|| = %g", what, r, RTOL,
                  res->bnorm);
}

/* ----------------------------------------------- no allocation after setup */

/* Five right-hand sides on one object per method: after setup the
 * context's allocation count stays put, and every solve equals kr_solve's
 * (same iterations, residual checked on the host). */
START_TEST(many_solves_no_allocation)
{
    kr_ctx *ctx = context(_i, "many_solves_no_allocation (gpu)");
    if (!ctx) return;
    for (int m = 0; m < NMETHODS; m++) {
        problem p;
        problem_make(ctx, spec_for(methods[m]), &p);
        kr_precond *P;
        const char *pc = m % 2 ? "bjacobi" : "jacobi";
        ck_assert_int_eq(kr_precond_create(ctx, &p.A, pc, &P), KR_OK);
        kr_ksp *ksp;
        ck_assert_int_eq(kr_ksp_create(ctx, methods[m], &ksp), KR_OK);
        ck_assert_int_eq(kr_ksp_set_operator(ksp, p.M), KR_OK);
        ck_assert_int_eq(kr_ksp_set_precond(ksp, P), KR_OK);
        ck_assert_int_eq(kr_ksp_set_option(ksp, "rtol", "1e-8"), KR_OK);
        ck_assert_int_eq(kr_ksp_setup(ksp), KR_OK);
        int its[5];
        for (int k = 0; k < 5; k++) {
            size_t frees0, allocs0 = kr_ctx_alloc_count(ctx, &frees0), frees;
            kr_result res;
            random_rhs(&p, 100 + (uint64_t)k);
            ck_assert_int_eq(kr_ksp_solve(ksp, p.b, p.x, &res), KR_OK);
            ck_assert_uint_eq(kr_ctx_alloc_count(ctx, &frees), allocs0);
            ck_assert_uint_eq(frees, frees0);
            assert_solved(&p, &res, methods[m]);
            its[k] = res.iterations;
        }
        kr_solve_options o;
        kr_solve_options_default(&o);
        o.method = methods[m];
        for (int k = 0; k < 5; k++) { /* kr_solve: the same solves */
            kr_result res;
            random_rhs(&p, 100 + (uint64_t)k);
            ck_assert_int_eq(kr_solve(ctx, p.M, P, p.b, p.x, &o, &res), KR_OK);
            ck_assert_int_eq(res.iterations, its[k]);
        }
        kr_ksp_destroy(ksp);
        kr_precond_destroy(P);
        problem_free(&p);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* A problem on ctx from the host CSR A (copied) */
static void problem_from(kr_ctx *ctx, const kr_csr *A, problem *p)
{
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    int32_t n = A->nrows;
    ck_assert_int_eq(kr_csr_alloc(ctx, n, n, A->nnz, &p->A), KR_OK);
    memcpy(p->A.rowptr, A->rowptr, ((size_t)n + 1) * sizeof *A->rowptr);
    memcpy(p->A.colind, A->colind, (size_t)A->nnz * sizeof *A->colind);
    memcpy(p->A.val, A->val, (size_t)A->nnz * sizeof *A->val);
    ck_assert_int_eq(kr_matrix_create(ctx, &p->A, NULL, &p->M), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, n, &p->b), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, n, &p->x), KR_OK);
    p->hb = malloc((size_t)n * sizeof *p->hb);
    p->hx = malloc((size_t)n * sizeof *p->hx);
    ck_assert(p->hb && p->hx);
}

/* Three solves on one object per method, on the GPU and on the CPU
 * reference, on a fresh random diagonally dominant matrix (nonsymmetric;
 * CG takes poisson2d:40) and random right-hand sides (the seed is
 * printed): iterations agree within test_gpu's tolerance, both answers
 * meet the tolerance on the host, and the GPU solves allocate nothing. */
START_TEST(gpu_ksp_matches_cpu)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_ksp_matches_cpu");
    if (!gpu) return;
    kr_ctx *cpu = kt_cpu();
    uint64_t seed = (uint64_t)kr_wtime();
    printf("gpu_ksp_matches_cpu: seed %llu\n", (unsigned long long)seed);
    kr_csr A, spd;
    kt_random_csr(cpu, 3000, 3000, 9, 1, seed, &A);
    ck_assert_int_eq(kr_generate(cpu, "poisson2d:40", &spd), KR_OK);
    for (int m = 0; m < NMETHODS; m++) {
        problem pc, pg;
        problem_from(cpu, m ? &A : &spd, &pc);
        problem_from(gpu, m ? &A : &spd, &pg);
        kr_ksp *kc, *kg;
        ck_assert_int_eq(kr_ksp_create(cpu, methods[m], &kc), KR_OK);
        ck_assert_int_eq(kr_ksp_create(gpu, methods[m], &kg), KR_OK);
        ck_assert_int_eq(kr_ksp_set_operator(kc, pc.M), KR_OK);
        ck_assert_int_eq(kr_ksp_set_operator(kg, pg.M), KR_OK);
        ck_assert_int_eq(kr_ksp_setup(kg), KR_OK);
        size_t allocs = kr_ctx_alloc_count(gpu, NULL);
        for (int k = 0; k < 3; k++) {
            kr_result rc, rg;
            random_rhs(&pc, seed + 10 + (uint64_t)k);
            random_rhs(&pg, seed + 10 + (uint64_t)k);
            ck_assert_int_eq(kr_ksp_solve(kc, pc.b, pc.x, &rc), KR_OK);
            ck_assert_int_eq(kr_ksp_solve(kg, pg.b, pg.x, &rg), KR_OK);
            assert_solved(&pc, &rc, methods[m]);
            assert_solved(&pg, &rg, methods[m]);
            int tol = 3 + rc.iterations / (m == 0 ? 20 : 8);
            ck_assert_msg(abs(rc.iterations - rg.iterations) <= tol,
                          "%s: %d CPU vs %d GPU iterations (seed %llu)",
                          methods[m], rc.iterations, rg.iterations,
                          (unsigned long long)seed);
        }
        ck_assert_uint_eq(kr_ctx_alloc_count(gpu, NULL), allocs);
        kr_ksp_destroy(kc);
        kr_ksp_destroy(kg);
        problem_free(&pc);
        problem_free(&pg);
    }
    kr_csr_free(&A);
    kr_csr_free(&spd);
    kr_ctx_destroy(cpu);
    kr_ctx_destroy(gpu);
}
END_TEST

/* ------------------------------------------------------ options by name */

static void assert_same_options(const kr_solve_options *a,
                                const kr_solve_options *b)
{
    ck_assert_str_eq(a->method, b->method);
    ck_assert(a->rtol == b->rtol && a->atol == b->atol && a->dtol == b->dtol);
    ck_assert(a->maxit == b->maxit && a->restart == b->restart && a->s == b->s);
    ck_assert(a->kappa == b->kappa && a->seed == b->seed);
    ck_assert(a->gap_restarts == b->gap_restarts &&
              a->breakdown_restarts == b->breakdown_restarts);
    ck_assert(a->keep_history == b->keep_history);
}

/* krylov's names (with and without dashes) and PETSc's give the same
 * options, and the same solve, as the struct. */
START_TEST(options_by_name_equal_struct)
{
    kr_ctx *ctx = kt_cpu();
    kr_ksp *named, *typed;
    ck_assert_int_eq(kr_ksp_create(ctx, NULL, &named), KR_OK);
    ck_assert_int_eq(kr_ksp_create(ctx, NULL, &typed), KR_OK);
    static const char *const kv[][2] = {
        {"-ksp_type", "gmres"},
        {"--rtol", "1e-9"},
        {"ksp_atol", "1e-30"},
        {"-ksp_divtol", "1e4"},
        {"-ksp_max_it", "500"},
        {"-ksp_gmres_restart", "17"},
        {"s", "3"},
        {"kappa", "0.5"},
        {"seed", "12345"},
        {"--gap-restarts", "2"},
        {"breakdown_restarts", "1"},
        {"keep-history", "1"},
    };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        ck_assert_msg(kr_ksp_set_option(named, kv[i][0], kv[i][1]) == KR_OK,
                      "%s %s: %s", kv[i][0], kv[i][1], kr_ctx_error(ctx));
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "gmres", o.rtol = 1e-9, o.atol = 1e-30, o.dtol = 1e4;
    o.maxit = 500, o.restart = 17, o.s = 3, o.kappa = 0.5, o.seed = 12345;
    o.gap_restarts = 2, o.breakdown_restarts = 1, o.keep_history = 1;
    ck_assert_int_eq(kr_ksp_set_options(typed, &o), KR_OK);
    kr_solve_options a, b;
    kr_solve_options_default(&a);
    kr_solve_options_default(&b);
    ck_assert_int_eq(kr_ksp_get_options(named, &a), KR_OK);
    ck_assert_int_eq(kr_ksp_get_options(typed, &b), KR_OK);
    assert_same_options(&a, &b);

    problem p;
    problem_make(ctx, "convdiff2d:20,3", &p);
    kr_result ra, rb;
    double *xa = malloc((size_t)p.A.nrows * sizeof *xa);
    ck_assert_int_eq(kr_ksp_set_operator(named, p.M), KR_OK);
    ck_assert_int_eq(kr_ksp_set_operator(typed, p.M), KR_OK);
    random_rhs(&p, 5);
    ck_assert_int_eq(kr_ksp_solve(named, p.b, p.x, &ra), KR_OK);
    ck_assert_int_eq(kr_vec_download(p.x, xa), KR_OK);
    random_rhs(&p, 5);
    ck_assert_int_eq(kr_ksp_solve(typed, p.b, p.x, &rb), KR_OK);
    ck_assert_int_eq(kr_vec_download(p.x, p.hx), KR_OK);
    ck_assert_int_eq(ra.iterations, rb.iterations);
    ck_assert_int_eq(ra.history_len, ra.iterations + 1);
    ck_assert(memcmp(xa, p.hx, (size_t)p.A.nrows * sizeof *xa) == 0);

    /* PETSc's bcgs is bicgstab; refusals change nothing */
    ck_assert_int_eq(kr_ksp_set_option(named, "-ksp_type", "bcgs"), KR_OK);
    ck_assert_int_eq(kr_ksp_get_options(named, &a), KR_OK);
    ck_assert_str_eq(a.method, "bicgstab");
    ck_assert_int_eq(kr_ksp_set_option(named, "restart", "0"), KR_ERR_ARG);
    ck_assert_int_eq(kr_ksp_set_option(named, "restart", "12x"), KR_ERR_ARG);
    ck_assert_int_eq(kr_ksp_set_option(named, "-pc_type", "ilu"), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "-pc_type"));
    ck_assert_int_eq(kr_ksp_set_option(named, "method", "lsqr"), KR_ERR_ARG);
    ck_assert_int_eq(kr_ksp_get_options(named, &b), KR_OK);
    assert_same_options(&a, &b);
    kr_result_free(&ra);
    kr_result_free(&rb);
    free(xa);
    problem_free(&p);
    kr_ksp_destroy(named);
    kr_ksp_destroy(typed);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------ user operator, preconditioner */

/* y = A x through the library's own matrix, on the views it is handed:
 * works on every backend without kernels of the test's own. */
typedef struct wrapped {
    kr_matrix *M;
    kr_precond *P;
    int calls;
} wrapped;

static kr_status wrapped_apply(void *user, const kr_vec *x, kr_vec *y)
{
    wrapped *w = user;
    w->calls++;
    return kr_matrix_apply(w->M, 1.0, x, 0.0, y);
}

static kr_status wrapped_precond(void *user, const kr_vec *r, kr_vec *z)
{
    wrapped *w = user;
    w->calls++;
    return kr_precond_apply(w->P, r, z);
}

/* y = A x by the host reference loop on the raw arrays (CPU backend). */
static kr_status host_apply(void *user, const kr_vec *x, kr_vec *y)
{
    kr_csr_matvec(user, kr_vec_data(x), kr_vec_data(y));
    return KR_OK;
}

/* A solve of A x = b (b from the seed) on a fresh solver object. */
static int solve_with(problem *p, const char *method, kr_matrix *A,
                      kr_precond *P, uint64_t seed, kr_result *res)
{
    kr_ksp *ksp;
    ck_assert_int_eq(kr_ksp_create(p->ctx, method, &ksp), KR_OK);
    ck_assert_int_eq(kr_ksp_set_operator(ksp, A), KR_OK);
    ck_assert_int_eq(kr_ksp_set_precond(ksp, P), KR_OK);
    random_rhs(p, seed);
    ck_assert_int_eq(kr_ksp_solve(ksp, p->b, p->x, res), KR_OK);
    kr_ksp_destroy(ksp);
    return res->iterations;
}

/* Every method with a matrix-free operator and a user preconditioner
 * (both wrapping the library's matrix and Jacobi) takes the iterations of
 * the kr_matrix solve with the same preconditioner. CG fuses a diagonal
 * preconditioner into its update, which a user one cannot be: its sums
 * round differently, so its count may differ by one against jacobi, and
 * must equal that of the kr_matrix solve with the user preconditioner. */
START_TEST(matrix_free_every_method)
{
    kr_ctx *ctx = context(_i, "matrix_free_every_method (gpu)");
    if (!ctx) return;
    for (int m = 0; m < NMETHODS; m++) {
        problem p;
        problem_make(ctx, spec_for(methods[m]), &p);
        int32_t n = p.A.nrows;
        wrapped w = {.M = p.M};
        ck_assert_int_eq(kr_precond_create(ctx, &p.A, "jacobi", &w.P), KR_OK);
        kr_matrix *U;
        kr_precond *Q;
        ck_assert_int_eq(
            kr_matrix_create_user(ctx, n, n, wrapped_apply, &w, &U), KR_OK);
        ck_assert_int_eq(
            kr_precond_create_user(ctx, n, wrapped_precond, &w, &Q), KR_OK);
        ck_assert_str_eq(kr_matrix_format(U), "user");
        ck_assert_str_eq(kr_precond_name(Q), "user");
        kr_result ref, user, mixed;
        solve_with(&p, methods[m], p.M, w.P, 77, &ref);
        solve_with(&p, methods[m], U, Q, 77, &user);
        assert_solved(&p, &user, methods[m]);
        ck_assert_int_gt(w.calls, user.iterations);
        solve_with(&p, methods[m], p.M, Q, 77, &mixed);
        ck_assert_int_eq(user.iterations, mixed.iterations);
        if (m == 0)
            ck_assert_int_le(abs(user.iterations - ref.iterations), 1);
        else
            ck_assert_int_eq(user.iterations, ref.iterations);
        if (!_i) { /* raw host arrays: the reference loop as the operator */
            kr_matrix *H;
            kr_result hres;
            ck_assert_int_eq(
                kr_matrix_create_user(ctx, n, n, host_apply, &p.A, &H), KR_OK);
            solve_with(&p, methods[m], H, w.P, 77, &hres);
            assert_solved(&p, &hres, methods[m]);
            ck_assert_int_le(abs(hres.iterations - ref.iterations), 2);
            kr_matrix_destroy(H);
        }
        kr_matrix_destroy(U);
        kr_precond_destroy(Q);
        kr_precond_destroy(w.P);
        problem_free(&p);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

static kr_status failing_apply(void *user, const kr_vec *x, kr_vec *y)
{
    (void)user, (void)x, (void)y;
    return KR_ERR_DEVICE;
}

/* A status from the user's operator ends the solve with that status. */
START_TEST(user_operator_error_passes_on)
{
    kr_ctx *ctx = kt_cpu();
    problem p;
    problem_make(ctx, "poisson2d:8", &p);
    kr_matrix *U;
    kr_result res;
    ck_assert_int_eq(
        kr_matrix_create_user(ctx, 64, 64, failing_apply, NULL, &U), KR_OK);
    random_rhs(&p, 3);
    ck_assert_int_eq(kr_solve(ctx, U, NULL, p.b, p.x, NULL, &res),
                     KR_ERR_ARG); /* kr_solve needs a preconditioner */
    kr_ksp *ksp;
    ck_assert_int_eq(kr_ksp_create(ctx, "cg", &ksp), KR_OK);
    ck_assert_int_eq(kr_ksp_set_operator(ksp, U), KR_OK);
    ck_assert_int_eq(kr_ksp_solve(ksp, p.b, p.x, &res), KR_ERR_DEVICE);
    kr_ksp_destroy(ksp);
    kr_matrix_destroy(U);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------- stop on request */

typedef struct stopper {
    int stop_at; /* the monitor returns 1 at this iteration */
    int flag_at; /* ... or sets the flag at this one        */
    volatile int flag;
    int last;
} stopper;

static int stop_monitor(int it, double rnorm, void *user)
{
    (void)rnorm;
    stopper *s = user;
    s->last = it;
    if (it == s->flag_at) s->flag = 1;
    return it == s->stop_at;
}

/* The monitor's nonzero return, or the interrupt flag, stops every method
 * at that iteration with KR_INTERRUPTED, x its iterate (its true residual
 * is the one reported). */
START_TEST(monitor_and_flag_stop)
{
    kr_ctx *ctx = context(_i, "monitor_and_flag_stop (gpu)");
    if (!ctx) return;
    for (int m = 0; m < 2 * NMETHODS; m++) {
        const char *method = methods[m % NMETHODS];
        problem p;
        problem_make(ctx, spec_for(method), &p);
        stopper s = {.stop_at = m < NMETHODS ? 5 : -1,
                     .flag_at = m < NMETHODS ? -1 : 3};
        kr_solve_options o;
        kr_solve_options_default(&o);
        o.method = method;
        o.monitor = stop_monitor;
        o.monitor_user = &s;
        o.interrupt = &s.flag;
        kr_result res;
        random_rhs(&p, 11);
        kr_ksp *ksp;
        ck_assert_int_eq(kr_ksp_create(ctx, NULL, &ksp), KR_OK);
        ck_assert_int_eq(kr_ksp_set_options(ksp, &o), KR_OK);
        ck_assert_int_eq(kr_ksp_set_operator(ksp, p.M), KR_OK);
        ck_assert_int_eq(kr_ksp_solve(ksp, p.b, p.x, &res), KR_OK);
        ck_assert_int_eq(res.reason, KR_INTERRUPTED);
        ck_assert_int_eq(res.iterations, m < NMETHODS ? 5 : 3);
        ck_assert_int_eq(s.last, res.iterations);
        ck_assert_int_eq(kr_vec_download(p.x, p.hx), KR_OK);
        double r = kt_host_residual(&p.A, p.hb, p.hx);
        ck_assert_msg(fabs(r - res.true_rnorm) <= 1e-10 * res.bnorm,
                      "%s: %g vs %g", method, r, res.true_rnorm);
        ck_assert(r < res.bnorm); /* x moved from 0 */
        ck_assert_str_eq(kr_reason_name(KR_INTERRUPTED), "INTERRUPTED");
        kr_ksp_destroy(ksp);
        problem_free(&p);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* The operator of p->M through a callback that raises the interrupt flag
 * at its flag_at-th call: the flag comes mid-batch, with no monitor. */
typedef struct flagger {
    kr_matrix *M;
    int calls, flag_at;
    volatile int flag;
} flagger;

static kr_status flagging_apply(void *user, const kr_vec *x, kr_vec *y)
{
    flagger *f = user;
    if (++f->calls == f->flag_at) f->flag = 1;
    return kr_matrix_apply(f->M, 1.0, x, 0.0, y);
}

static void flag_solve(problem *p, const char *method, kr_matrix *U, flagger *f,
                       int maxit, kr_result *res)
{
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = method;
    o.maxit = maxit;
    o.keep_history = 1;
    o.interrupt = &f->flag;
    f->calls = 0;
    f->flag = 0;
    ck_assert_int_eq(kr_vec_fill(p->x, 0.0), KR_OK);
    kr_ksp *ksp;
    ck_assert_int_eq(kr_ksp_create(p->ctx, NULL, &ksp), KR_OK);
    ck_assert_int_eq(kr_ksp_set_options(ksp, &o), KR_OK);
    ck_assert_int_eq(kr_ksp_set_operator(ksp, U), KR_OK);
    ck_assert_int_eq(kr_ksp_solve(ksp, p->b, p->x, res), KR_OK);
    kr_ksp_destroy(ksp);
    ck_assert_int_eq(kr_vec_download(p->x, p->hx), KR_OK);
}

/* An interrupt raised while the device runs a batch of iterations stops
 * the solve at an iteration the host saw, with x that iteration's iterate:
 * the same x as a solve whose maxit is that iteration. */
START_TEST(flag_stops_batch)
{
    kr_ctx *ctx = context(_i, "flag_stops_batch (gpu)");
    if (!ctx) return;
    for (int m = 0; m < NMETHODS; m++) {
        problem p;
        problem_make(ctx, spec_for(methods[m]), &p);
        random_rhs(&p, 5);
        flagger f = {.M = p.M, .flag_at = 12};
        kr_matrix *U;
        int32_t n = p.A.nrows;
        ck_assert_int_eq(
            kr_matrix_create_user(ctx, n, n, flagging_apply, &f, &U), KR_OK);
        kr_result res, ref;
        flag_solve(&p, methods[m], U, &f, 10000, &res);
        ck_assert_msg(res.reason == KR_INTERRUPTED, "%s: %s", methods[m],
                      kr_reason_name(res.reason));
        ck_assert_int_ge(res.iterations, 1);
        ck_assert_int_eq(res.history_len, res.iterations + 1);
        double *x = malloc((size_t)n * sizeof *x);
        memcpy(x, p.hx, (size_t)n * sizeof *x);
        f.flag_at = -1;
        flag_solve(&p, methods[m], U, &f, res.iterations, &ref);
        ck_assert_int_eq(ref.reason, KR_DIVERGED_ITS);
        ck_assert_int_eq(ref.iterations, res.iterations);
        ck_assert_msg(!memcmp(x, p.hx, (size_t)n * sizeof *x),
                      "%s: x differs from the iterate of iteration %d",
                      methods[m], res.iterations);
        free(x);
        kr_result_free(&res);
        kr_result_free(&ref);
        kr_matrix_destroy(U);
        problem_free(&p);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------ new values */

/* A's values scaled row by row (1 + i mod 7 / 10), the pattern kept. */
static void rescale(const kr_csr *A, kr_csr *B, int round)
{
    *B = *A;
    B->val = malloc(((size_t)A->nnz + 1) * sizeof *B->val);
    ck_assert_ptr_nonnull(B->val);
    for (int32_t i = 0; i < A->nrows; i++)
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            B->val[k] = A->val[k] * (1.0 + (double)((i + round) % 7) / 10.0);
}

/* A sequence of matrices on one pattern: after kr_matrix_update_values
 * and kr_precond_update_values the solve is right for the new values
 * (host residual) and takes the iterations of a fresh build from them;
 * bjacobi keeps its blocks; csr and jacobi update without allocating;
 * another pattern is refused. */
START_TEST(update_values_then_solve)
{
    kr_ctx *ctx = context(_i, "update_values_then_solve (gpu)");
    if (!ctx) return;
    static const char *const formats[] = {NULL, "csr", "ellr"};
    for (int f = 0; f < 3; f++) {
        problem p;
        memset(&p, 0, sizeof p);
        problem_make(ctx, "convdiff2d:20,3", &p);
        kr_matrix_destroy(p.M);
        ck_assert_int_eq(kr_matrix_create(ctx, &p.A, formats[f], &p.M), KR_OK);
        kr_precond_options po;
        kr_precond_options_default(&po);
        po.block_size = 3;
        po.fixed = 1;
        kr_precond *P;
        ck_assert_int_eq(kr_precond_create_opts(ctx, &p.A, "bjacobi", &po, &P),
                         KR_OK);
        int32_t nb = kr_precond_block_count(P);
        kr_precond *J;
        ck_assert_int_eq(kr_precond_create(ctx, &p.A, "jacobi", &J), KR_OK);
        kr_ksp *ksp;
        ck_assert_int_eq(kr_ksp_create(ctx, "bicgstab", &ksp), KR_OK);
        ck_assert_int_eq(kr_ksp_set_operator(ksp, p.M), KR_OK);
        ck_assert_int_eq(kr_ksp_set_precond(ksp, P), KR_OK);
        kr_csr A0 = p.A;
        for (int round = 1; round <= 3; round++) {
            kr_csr B;
            rescale(&A0, &B, round);
            size_t allocs = kr_ctx_alloc_count(ctx, NULL);
            ck_assert_int_eq(kr_matrix_update_values(p.M, &B), KR_OK);
            ck_assert_int_eq(kr_precond_update_values(J, &B), KR_OK);
            /* csr and jacobi take new values in place */
            if (!strcmp(kr_matrix_format(p.M), "csr"))
                ck_assert_uint_eq(kr_ctx_alloc_count(ctx, NULL), allocs);
            ck_assert_int_eq(kr_precond_update_values(P, &B), KR_OK);
            ck_assert_int_eq(kr_precond_block_count(P), nb);
            p.A.val = B.val; /* the host residual against the new values */
            kr_result res, fresh;
            random_rhs(&p, 20 + (uint64_t)round);
            ck_assert_int_eq(kr_ksp_solve(ksp, p.b, p.x, &res), KR_OK);
            assert_solved(&p, &res, "after update_values");
            kr_matrix *M2;
            kr_precond *P2;
            ck_assert_int_eq(kr_matrix_create(ctx, &B, formats[f], &M2), KR_OK);
            ck_assert_int_eq(
                kr_precond_create_opts(ctx, &B, "bjacobi", &po, &P2), KR_OK);
            solve_with(&p, "bicgstab", M2, P2, 20 + (uint64_t)round, &fresh);
            ck_assert_int_eq(res.iterations, fresh.iterations);
            kr_matrix_destroy(M2);
            kr_precond_destroy(P2);
            p.A.val = A0.val;
            free(B.val);
        }
        kr_csr other; /* row 1's last entry a column further on */
        ck_assert_int_eq(kr_generate(ctx, "convdiff2d:20,3", &other), KR_OK);
        other.colind[other.rowptr[1] - 1]++;
        ck_assert_int_eq(kr_csr_check(ctx, &other), KR_OK);
        ck_assert_int_eq(kr_matrix_update_values(p.M, &other), KR_ERR_ARG);
        kr_csr_free(&other);
        kr_ksp_destroy(ksp);
        kr_precond_destroy(P);
        kr_precond_destroy(J);
        problem_free(&p);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* --------------------------------------------- preconditioner from M */

/* kr_precond_create_matrix gives the blocks and the iterations of
 * kr_precond_create; on the GPU, with M in csr (which has a CSR view),
 * block-Jacobi uploads nothing, and after new values on M and P it solves
 * the new system. On the CPU the csr has no plain view (its values are
 * regrouped) and nothing is uploaded either way. */
START_TEST(precond_from_matrix)
{
    kr_ctx *ctx = context(_i, "precond_from_matrix (gpu)");
    if (!ctx) return;
    static const char *const pcs[] = {"jacobi", "bjacobi"};
    for (int k = 0; k < 2; k++) {
        problem p;
        problem_make(ctx, "convdiff2d:30,3", &p);
        kr_matrix_destroy(p.M);
        ck_assert_int_eq(kr_matrix_create(ctx, &p.A, "csr", &p.M), KR_OK);
        kr_csr_view v;
        ck_assert_int_eq(kr_matrix_csr_view(p.M, &v),
                         _i ? KR_OK : KR_ERR_UNSUPPORTED);
        if (_i) ck_assert(v.nrows == p.A.nrows && v.nnz == p.A.nnz && v.val);
        kr_precond *P1, *P2;
        ck_assert_int_eq(kr_precond_create_opts(ctx, &p.A, pcs[k], NULL, &P1),
                         KR_OK);
        ck_assert_int_eq(
            kr_precond_create_matrix(ctx, p.M, &p.A, pcs[k], NULL, &P2), KR_OK);
        ck_assert_int_eq(kr_precond_block_count(P1),
                         kr_precond_block_count(P2));
        kr_precond_info info; /* read from the matrix: nothing uploaded */
        ck_assert_int_eq(kr_precond_get_info(P2, &info), KR_OK);
        for (int i = 0; i < info.stages; i++)
            if (!strcmp(info.stage[i].name, "upload"))
                ck_assert(info.stage[i].seconds == 0.0);
        kr_result r1, r2;
        solve_with(&p, "bicgstab", p.M, P1, 31, &r1);
        solve_with(&p, "bicgstab", p.M, P2, 31, &r2);
        assert_solved(&p, &r2, pcs[k]);
        ck_assert_int_eq(r1.iterations, r2.iterations);
        kr_csr B;
        rescale(&p.A, &B, 1);
        ck_assert_int_eq(kr_matrix_update_values(p.M, &B), KR_OK);
        ck_assert_int_eq(kr_precond_update_values(P2, &B), KR_OK);
        double *old = p.A.val;
        p.A.val = B.val;
        solve_with(&p, "bicgstab", p.M, P2, 32, &r2);
        assert_solved(&p, &r2, "from the matrix, new values");
        p.A.val = old;
        free(B.val);
        kr_csr small;
        ck_assert_int_eq(kr_generate(ctx, "poisson2d:5", &small), KR_OK);
        kr_precond *bad = NULL;
        ck_assert_int_eq(
            kr_precond_create_matrix(ctx, p.M, &small, pcs[k], NULL, &bad),
            KR_ERR_ARG);
        kr_csr_free(&small);
        /* a CSR whose rows the preconditioner reads is checked: a NaN is
         * refused (Jacobi from the GPU's CSR view reads M's values, not
         * A's, and takes them) */
        kr_csr C = p.A;
        C.val = malloc((size_t)C.nnz * sizeof *C.val);
        memcpy(C.val, p.A.val, (size_t)C.nnz * sizeof *C.val);
        C.val[C.nnz / 2] = NAN;
        int reads_m = _i && k == 0;
        ck_assert_int_eq(
            kr_precond_create_matrix(ctx, p.M, &C, pcs[k], NULL, &bad),
            reads_m ? KR_OK : KR_ERR_FORMAT);
        if (!reads_m)
            ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "not finite"));
        kr_precond_destroy(bad);
        free(C.val);
        kr_precond_destroy(P1);
        kr_precond_destroy(P2);
        problem_free(&p);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------- older option structs */

/* A struct whose size ends before `interrupt` (the first sized layout):
 * the library does not read the field (here a flag that would stop the
 * solve at once); the full size does; size 0 is refused. */
START_TEST(old_size_options)
{
    kr_ctx *ctx = kt_cpu();
    problem p;
    problem_make(ctx, "poisson2d:16", &p);
    kr_precond *P;
    ck_assert_int_eq(kr_precond_create(ctx, &p.A, "jacobi", &P), KR_OK);
    int stop = 1;
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "cg";
    o.interrupt = &stop;
    kr_result res;
    random_rhs(&p, 9);
    ck_assert_int_eq(kr_solve(ctx, p.M, P, p.b, p.x, &o, &res), KR_OK);
    ck_assert_int_eq(res.reason, KR_INTERRUPTED);
    ck_assert_int_eq(res.iterations, 0);
    o.size = offsetof(kr_solve_options, interrupt);
    random_rhs(&p, 9);
    ck_assert_int_eq(kr_solve(ctx, p.M, P, p.b, p.x, &o, &res), KR_OK);
    assert_solved(&p, &res, "old size");
    o.size = 0;
    ck_assert_int_eq(kr_solve(ctx, p.M, P, p.b, p.x, &o, &res), KR_ERR_ARG);
    ck_assert_ptr_nonnull(
        strstr(kr_ctx_error(ctx), "kr_solve_options_default"));
    kr_precond_options po;
    kr_precond_options_default(&po);
    po.size = 0;
    kr_precond *Q = NULL;
    ck_assert_int_eq(kr_precond_create_opts(ctx, &p.A, "bjacobi", &po, &Q),
                     KR_ERR_ARG);
    kr_precond_destroy(P);
    problem_free(&p);
    kr_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ksp");
    TCase *tc = tcase_create("ksp");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_loop_test(tc, many_solves_no_allocation, 0, 2);
    tcase_add_test(tc, gpu_ksp_matches_cpu);
    tcase_add_test(tc, options_by_name_equal_struct);
    tcase_add_loop_test(tc, matrix_free_every_method, 0, 2);
    tcase_add_test(tc, user_operator_error_passes_on);
    tcase_add_loop_test(tc, monitor_and_flag_stop, 0, 2);
    tcase_add_loop_test(tc, flag_stops_batch, 0, 2);
    tcase_add_loop_test(tc, update_values_then_solve, 0, 2);
    tcase_add_loop_test(tc, precond_from_matrix, 0, 2);
    tcase_add_test(tc, old_size_options);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
