/* The true-residual check at convergence (kr_solve_options.gap_restarts):
 * a real matrix whose recursive residual meets rtol while ||b - A x|| does
 * not ends with the true residual below rtol after a restart; the
 * iteration numbering, history and monitor continue across restarts;
 * restarts share maxit; exhausted restarts give DIVERGED_RESIDUAL_GAP;
 * and every method starts from a nonzero x0, which the restart relies on.
 * One CPU thread, so the reductions, and the iterations where the gap
 * shows, are the same on every machine. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const methods[] = {"cg", "gmres", "idr", "bicgstab"};
#define NMETHODS 4

/* A system on one CPU thread with b = A*ones, its operators built once. */
typedef struct sys {
    kr_ctx *ctx;
    kr_csr A;
    kr_matrix *M;
    kr_precond *P;
    double *b, *x;
    double bnorm;
} sys;

static double norm(int32_t n, const double *v)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

static void sys_build(sys *s, const char *pc)
{
    int32_t n = s->A.nrows;
    s->b = malloc(sizeof(double) * (size_t)n);
    s->x = calloc((size_t)n, sizeof(double));
    double *ones = malloc(sizeof(double) * (size_t)n);
    ck_assert(s->b && s->x && ones);
    for (int32_t i = 0; i < n; i++)
        ones[i] = 1.0;
    kr_csr_matvec(&s->A, ones, s->b);
    free(ones);
    s->bnorm = norm(n, s->b);
    ck_assert_int_eq(kr_matrix_create(s->ctx, &s->A, "csr", &s->M), KR_OK);
    ck_assert_msg(kr_precond_create(s->ctx, &s->A, pc, &s->P) == KR_OK, "%s",
                  kr_ctx_error(s->ctx));
}

static void sys_ctx(sys *s)
{
    memset(s, 0, sizeof *s);
    s->ctx = kt_cpu();
    ck_assert_int_eq(kr_ctx_set_threads(s->ctx, 1), KR_OK);
}

/* A generated matrix (kr_generate's spec) with preconditioner pc. */
static void sys_gen(sys *s, const char *spec, const char *pc)
{
    sys_ctx(s);
    ck_assert_int_eq(kr_generate(s->ctx, spec, &s->A), KR_OK);
    sys_build(s, pc);
}

/* name.mtx from the matrices folder; 0 (skipped, visibly) if absent. */
static int sys_real(sys *s, const char *test, const char *name, const char *pc)
{
    const char *dir = kt_matrices_dir();
    char path[4096];
    sys_ctx(s);
    if (!dir) {
        kt_skip(test, "no matrices folder (../shared/matrices or "
                      "$KRYLOV_MATRICES)");
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s.mtx", dir, name);
    if (!kt_file_exists(path)) {
        kt_skip(test, path); /* names the missing file */
        return 0;
    }
    ck_assert_msg(kr_read_mtx(s->ctx, path, &s->A) == KR_OK, "%s", path);
    sys_build(s, pc);
    return 1;
}

static void sys_free(sys *s)
{
    kr_precond_destroy(s->P);
    kr_matrix_destroy(s->M);
    kr_csr_free(&s->A);
    free(s->b);
    free(s->x);
    kr_ctx_destroy(s->ctx);
}

/* Solves from x0 (NULL: zero) into s->x. */
static void sys_solve(sys *s, const double *x0, const kr_solve_options *o,
                      kr_result *res)
{
    int32_t n = s->A.nrows;
    kr_vec *vb = NULL, *vx = NULL;
    kr_status st = kr_vec_create(s->ctx, n, &vb);
    if (st == KR_OK) st = kr_vec_create(s->ctx, n, &vx);
    if (st == KR_OK) st = kr_vec_upload(vb, s->b);
    if (st == KR_OK && x0) st = kr_vec_upload(vx, x0);
    if (st == KR_OK) st = kr_solve(s->ctx, s->M, s->P, vb, vx, o, res);
    if (st == KR_OK) st = kr_vec_download(vx, s->x);
    kr_vec_destroy(vb);
    kr_vec_destroy(vx);
    ck_assert_msg(st == KR_OK, "%s: %s", o->method, kr_ctx_error(s->ctx));
}

/* ||b - A x|| by the plain host loop */
static double host_residual(const sys *s, const double *x)
{
    return kt_host_residual(&s->A, s->b, x);
}

/* ------------------------------------------------------------ monitor */

static kr_solve_options options(const char *method, double rtol,
                                kt_monitor_log *l)
{
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = method;
    o.rtol = rtol;
    o.maxit = 20000;
    o.keep_history = 1;
    o.monitor = kt_monitor_record;
    o.monitor_user = l;
    l->count = 0;
    return o;
}

/* The bookkeeping of a solve with restarts: the monitor numbers 0, 1, 2,
 * ... and repeats exactly the iteration each restart begins at, where the
 * recursive residual had met tol and the true one it continues from had
 * not; the history, one entry per iteration, keeps the monitor's last
 * value of each. Returns the first restart's iteration, or -1. */
static int assert_bookkeeping(const kr_result *res, const kt_monitor_log *l,
                              double tol, const char *what)
{
    int first = -1, repeats = 0;
    ck_assert_int_eq(res->history_len, res->iterations + 1);
    ck_assert_int_eq(l->count,
                     res->iterations + 1 + res->true_residual_restarts);
    ck_assert_int_eq(l->it[0], 0);
    for (int i = 1; i < l->count; i++) {
        int k = l->it[i];
        if (k == l->it[i - 1]) { /* a restart at k */
            ck_assert_msg(l->rnorm[i - 1] <= tol && l->rnorm[i] > tol,
                          "%s: restart at %d: recursive %g, true %g, tol %g",
                          what, k, l->rnorm[i - 1], l->rnorm[i], tol);
            repeats++;
            if (first < 0) first = k;
        } else {
            ck_assert_msg(k == l->it[i - 1] + 1, "%s: %d after %d", what, k,
                          l->it[i - 1]);
        }
        if (i + 1 == l->count || l->it[i + 1] != k)
            ck_assert(res->history[k] == l->rnorm[i]);
    }
    ck_assert_int_eq(repeats, res->true_residual_restarts);
    ck_assert_int_eq(l->it[l->count - 1], res->iterations);
    return first;
}

/* -------------------------------------------------------------- tests */

/* rdb3200l, IDR(4) + block-Jacobi, rtol 1e-9, the case of the CPU
 * bjacobi table: without the check it stopped reporting convergence with
 * ||b - A x|| / ||b|| = 1.03e-9. With it the solve restarts there and
 * ends with the true residual below rtol; with no restarts allowed it
 * stops at the same iteration as DIVERGED_RESIDUAL_GAP. The gap depends
 * on the shadow space's rounding: seed 4 shows it with the CholQR one
 * (seeds 1-16 tried, 2026-11-27; the default seed 1 converges cleanly). */
START_TEST(real_gap_case)
{
    sys s;
    static kt_monitor_log l;
    kr_result res, res0;
    if (!sys_real(&s, "real_gap_case", "rdb3200l", "bjacobi")) {
        sys_free(&s);
        return;
    }
    double tol = 1e-9 * s.bnorm;
    kr_solve_options o = options("idr", 1e-9, &l);
    o.maxit = 50000;
    o.seed = 4;
    sys_solve(&s, NULL, &o, &res);
    ck_assert_msg(res.reason == KR_CONVERGED_RTOL, "%s",
                  kr_reason_name(res.reason));
    ck_assert_msg(res.true_rnorm <= tol, "true residual %g > %g",
                  res.true_rnorm, tol);
    double mine = host_residual(&s, s.x);
    ck_assert_msg(mine <= tol, "recomputed true residual %g > %g", mine, tol);
    ck_assert_msg(res.true_residual_restarts >= 1,
                  "no restart: the gap this test is about did not occur");
    int first = assert_bookkeeping(&res, &l, tol, "idr/bjacobi rdb3200l");

    o.gap_restarts = 0;
    sys_solve(&s, NULL, &o, &res0);
    ck_assert_msg(res0.reason == KR_DIVERGED_RESIDUAL_GAP, "%s",
                  kr_reason_name(res0.reason));
    ck_assert_int_eq(res0.iterations, first);
    ck_assert_int_eq(res0.true_residual_restarts, 0);
    ck_assert(res0.rnorm <= tol && res0.true_rnorm > tol);
    ck_assert(host_residual(&s, s.x) > tol);
    kr_result_free(&res);
    kr_result_free(&res0);
    sys_free(&s);
}
END_TEST

/* rtol 1e-16 on poisson2d:20 is below what ||b - A x|| can reach in
 * double precision, while every method's recursive residual (GMRES's
 * estimate) goes on falling past it: each restart finds the gap again,
 * and after gap_restarts of them the reason says so. x is still the
 * last iterate, as good as the arithmetic allows. */
START_TEST(restarts_exhausted)
{
    sys s;
    static kt_monitor_log l;
    kr_result res;
    sys_gen(&s, "poisson2d:20", "jacobi");
    kr_solve_options o = options(methods[_i], 1e-16, &l);
    o.gap_restarts = 2;
    sys_solve(&s, NULL, &o, &res);
    ck_assert_msg(res.reason == KR_DIVERGED_RESIDUAL_GAP, "%s: %s", methods[_i],
                  kr_reason_name(res.reason));
    ck_assert_int_eq(res.true_residual_restarts, 2);
    assert_bookkeeping(&res, &l, 1e-16 * s.bnorm, methods[_i]);
    ck_assert(res.rnorm <= 1e-16 * s.bnorm);
    ck_assert(res.true_rnorm > 1e-16 * s.bnorm &&
              res.true_rnorm < 1e-13 * s.bnorm);
    ck_assert(fabs(host_residual(&s, s.x) - res.true_rnorm) <= 1e-15 * s.bnorm);
    ck_assert_str_eq(kr_reason_name(res.reason), "DIVERGED_RESIDUAL_GAP");
    ck_assert(strstr(kr_reason_text(res.reason), "residual gap"));
    ck_assert(res.reason < 0);
    kr_result_free(&res);
    sys_free(&s);
}
END_TEST

/* Restarts take their iterations from maxit: with maxit at the first
 * restart's iteration none is left (DIVERGED_ITS there), and a few more
 * allow only those few. */
START_TEST(restarts_share_maxit)
{
    sys s;
    static kt_monitor_log l;
    kr_result res;
    sys_gen(&s, "poisson2d:20", "jacobi");
    kr_solve_options o = options("idr", 1e-16, &l);
    sys_solve(&s, NULL, &o, &res);
    int first = assert_bookkeeping(&res, &l, 1e-16 * s.bnorm, "idr");
    ck_assert_int_gt(first, 0);
    kr_result_free(&res);
    for (int extra = 0; extra <= 3; extra += 3) {
        o = options("idr", 1e-16, &l);
        o.maxit = first + extra;
        sys_solve(&s, NULL, &o, &res);
        ck_assert_msg(res.reason == KR_DIVERGED_ITS, "maxit %d: %s", o.maxit,
                      kr_reason_name(res.reason));
        ck_assert_int_eq(res.iterations, first + extra);
        ck_assert_int_eq(res.true_residual_restarts, 1);
        assert_bookkeeping(&res, &l, 1e-16 * s.bnorm, "idr, short maxit");
        kr_result_free(&res);
    }
    sys_free(&s);
}
END_TEST

/* Invalid gap_restarts is an argument error. */
START_TEST(gap_restarts_checked)
{
    sys s;
    static kt_monitor_log l;
    kr_result res;
    sys_gen(&s, "poisson2d:4", "none");
    kr_solve_options o = options("cg", 1e-8, &l);
    kr_vec *v = NULL, *w = NULL;
    ck_assert_int_eq(kr_vec_create(s.ctx, s.A.nrows, &v), KR_OK);
    ck_assert_int_eq(kr_vec_create(s.ctx, s.A.nrows, &w), KR_OK);
    for (int bad = -1; bad <= 101; bad += 102) {
        o.gap_restarts = bad;
        ck_assert_int_eq(kr_solve(s.ctx, s.M, s.P, v, w, &o, &res), KR_ERR_ARG);
        ck_assert(strstr(kr_ctx_error(s.ctx), "gap_restarts"));
        kr_result_free(&res);
    }
    kr_vec_destroy(v);
    kr_vec_destroy(w);
    sys_free(&s);
}
END_TEST

/* Every method starts from the x it is given (the restart depends on it):
 * from the result of a loose solve, the history starts at that x's true
 * residual and the solve reaches the tight tolerance. */
START_TEST(nonzero_initial_guess)
{
    sys s;
    static kt_monitor_log l;
    kr_result res;
    sys_gen(&s, _i == 0 ? "poisson2d:20" : "convdiff2d:20", "jacobi");
    int32_t n = s.A.nrows;
    kr_solve_options o = options(methods[_i], 1e-3, &l);
    sys_solve(&s, NULL, &o, &res);
    ck_assert(res.reason > 0);
    double r1 = res.true_rnorm;
    kr_result_free(&res);
    double *x1 = malloc(sizeof(double) * (size_t)n);
    ck_assert(x1 != NULL);
    memcpy(x1, s.x, sizeof(double) * (size_t)n);
    o = options(methods[_i], 1e-10, &l);
    sys_solve(&s, x1, &o, &res);
    ck_assert_msg(fabs(res.history[0] - r1) <= 1e-12 * s.bnorm,
                  "%s: history[0] %g, ||b - A x0|| %g", methods[_i],
                  res.history[0], r1);
    ck_assert(r1 <= 1e-3 * s.bnorm); /* so history[0] is not ||b|| */
    ck_assert_msg(res.reason > 0, "%s: %s", methods[_i],
                  kr_reason_name(res.reason));
    ck_assert(host_residual(&s, s.x) <= 1e-10 * s.bnorm);
    free(x1);
    kr_result_free(&res);
    sys_free(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gap");
    TCase *tc = tcase_create("restarts");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, real_gap_case);
    tcase_add_loop_test(tc, restarts_exhausted, 0, NMETHODS);
    tcase_add_test(tc, restarts_share_maxit);
    tcase_add_test(tc, gap_restarts_checked);
    tcase_add_loop_test(tc, nonzero_initial_guess, 0, NMETHODS);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
