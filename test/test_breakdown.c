/* Restarts after a breakdown (kr_solve_options.breakdown_restarts), on
 * small systems where BiCGSTAB (no preconditioner, x0 = 0) breaks down in
 * any floating-point arithmetic: the entries are integers or halves, so
 * the inner products that vanish are computed as exact zeros.
 *
 * B = [[1,1,-2,1],[1,-1,0,0],[2,0,-2,0],[3,0,0,-3]], b = A*ones = e1
 *   (nonsingular: rows 2-4 force x = x1*ones, row 1 then gives x1).
 *   r0^ = r0 = e1, v = A e1 = (1,1,2,3), alpha = 1, s = (0,-1,-2,-3),
 *   t = A s = (0,1,4,9) (t1 = 0 as row 1 . s = -1 + 4 - 3), so
 *   r1 = s - omega t has r1(1) = 0 and rho1 = r0^.r1 = 0 while
 *   ||r1|| = 0.88: a breakdown after one iteration that reduced ||r||
 *   from 1. A restart from x1 with r0^ = r1 converges (n = 4).
 * W = [[1,0,0],[1/2,0,1],[1/2,-1,0]], b = e1 (det 1): alpha = 1,
 *   s = (0,-1/2,-1/2), t = A s = (0,-1/2,1/2), t.s = 0, so omega = 0 after
 *   one iteration that reduced ||r|| to 0.71. The restart from x1 = e1
 *   has r = s and r0^.A r = t.s = 0: it breaks down before its first
 *   iteration, and that ends the solve.
 * S = [[0,1],[1,0]], b = e1: r0^.A r0 = 0 before the first iteration, so
 *   no restart (it would start from the same x0 and stop the same way).
 *
 * The library's bookkeeping across a restart (iteration numbers, monitor,
 * history, maxit), option checking, and the commands' reports. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double B[16] = {1, 1, -2, 1, 1, -1, 0, 0,
                             2, 0, -2, 0, 3, 0,  0, -3};
static const double W[9] = {1, 0, 0, 0.5, 0, 1, 0.5, -1, 0};
static const double S[4] = {0, 1, 1, 0};
static const double N[4] = {0, 1, 0, 0};  /* A e1 = 0 */
static const double K[4] = {0, 1, -1, 0}; /* skew */

/* ------------------------------------------------------------ monitor */

/* BiCGSTAB with the default options, rtol 1e-10, a monitor and history. */
static kr_solve_options options(kt_monitor_log *l)
{
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "bicgstab";
    o.rtol = 1e-10;
    o.keep_history = 1;
    o.monitor = kt_monitor_record;
    o.monitor_user = l;
    l->count = 0;
    return o;
}

/* ------------------------------------------------------------- solves */

/* Solves a x = e1 (a dense n x n, n <= 8) from x0 = 0 on ctx with no
 * preconditioner into x; returns ||e1 - A x|| computed on the host. */
static double solve_e1(kr_ctx *ctx, int32_t n, const double *a,
                       const kr_solve_options *o, kr_result *res, double *x)
{
    kr_csr A;
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_vec *vb = NULL, *vx = NULL;
    double b[8] = {1};
    kt_dense_csr(ctx, n, a, &A);
    kr_status st = kr_matrix_create(ctx, &A, "csr", &M);
    if (st == KR_OK) st = kr_precond_create(ctx, &A, "none", &P);
    if (st == KR_OK) st = kr_vec_create(ctx, n, &vb);
    if (st == KR_OK) st = kr_vec_create(ctx, n, &vx);
    if (st == KR_OK) st = kr_vec_upload(vb, b);
    if (st == KR_OK) st = kr_solve(ctx, M, P, vb, vx, o, res);
    if (st == KR_OK) st = kr_vec_download(vx, x);
    ck_assert_msg(st == KR_OK, "%s: %s", o->method, kr_ctx_error(ctx));
    double r = kt_host_residual(&A, b, x);
    kr_vec_destroy(vb);
    kr_vec_destroy(vx);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    return r;
}

/* The CPU (one thread) for _i = 0, the GPU for _i = 1 (or NULL: skipped). */
static kr_ctx *context(int i, const char *test)
{
    if (i == 1) return kt_gpu_or_skip(test);
    kr_ctx *ctx = kt_cpu();
    ck_assert_int_eq(kr_ctx_set_threads(ctx, 1), KR_OK);
    return ctx;
}

static void assert_reason(const kr_result *res, kr_reason want, int its,
                          int restarts, const char *what)
{
    ck_assert_msg(res->reason == want, "%s: %s after %d its, expected %s", what,
                  kr_reason_name(res->reason), res->iterations,
                  kr_reason_name(want));
    ck_assert_msg(res->iterations == its, "%s: %d iterations, expected %d",
                  what, res->iterations, its);
    ck_assert_msg(res->breakdown_restarts == restarts,
                  "%s: %d breakdown restarts, expected %d", what,
                  res->breakdown_restarts, restarts);
    ck_assert_int_eq(res->true_residual_restarts, 0);
}

/* The monitor saw 0, 1, ..., iterations with `at` twice (the restart's
 * true residual second), and nothing else twice; the history has one
 * entry per iteration, the restart's at `at`. */
static void assert_one_restart_at(const kr_result *res, const kt_monitor_log *l,
                                  int at)
{
    ck_assert_int_eq(l->count, res->iterations + 2);
    ck_assert_int_eq(res->history_len, res->iterations + 1);
    for (int i = 0, k = 0; i < l->count; i++) {
        ck_assert_msg(l->it[i] == k, "monitor entry %d: iteration %d, not %d",
                      i, l->it[i], k);
        if (i != at) k++;
    }
    ck_assert(res->history[at] == l->rnorm[at + 1]);
    ck_assert(res->history[res->iterations] == l->rnorm[l->count - 1]);
}

/* -------------------------------------------------------------- tests */

/* B: with no restarts allowed BiCGSTAB stops at the breakdown after one
 * iteration; with the default, it restarts there once and converges,
 * with the true residual below the tolerance. */
START_TEST(restart_gets_past_breakdown)
{
    static const char *const names[] = {"restart_gets_past_breakdown (cpu)",
                                        "restart_gets_past_breakdown (gpu)"};
    kr_ctx *ctx = context(_i, names[_i]);
    if (!ctx) return;
    static kt_monitor_log l;
    kr_result res;
    double x[4];
    kr_solve_options o = options(&l);
    o.breakdown_restarts = 0;
    double r = solve_e1(ctx, 4, B, &o, &res, x);
    assert_reason(&res, KR_DIVERGED_BREAKDOWN, 1, 0, names[_i]);
    ck_assert(fabs(r - res.true_rnorm) <= 1e-15 && r > 0.8 && r < 0.9);
    ck_assert_int_eq(l.count, 2);
    kr_result_free(&res);

    o = options(&l);
    ck_assert_int_eq(o.breakdown_restarts, 3); /* the default */
    r = solve_e1(ctx, 4, B, &o, &res, x);
    ck_assert_msg(res.reason == KR_CONVERGED_RTOL, "%s: %s", names[_i],
                  kr_reason_name(res.reason));
    ck_assert_int_ge(res.breakdown_restarts, 1);
    ck_assert_int_eq(res.breakdown_restarts, 1);
    ck_assert_int_eq(res.true_residual_restarts, 0);
    ck_assert_msg(res.true_rnorm <= 1e-10 && r <= 1e-10,
                  "true residual %g, on the host %g", res.true_rnorm, r);
    for (int i = 0; i < 4; i++)
        ck_assert(fabs(x[i] - 1.0) <= 1e-9);
    assert_one_restart_at(&res, &l, 1);
    ck_assert(fabs(l.rnorm[2] - l.rnorm[1]) <= 1e-15); /* r = b - A x1 */
    kr_result_free(&res);
    kr_ctx_destroy(ctx);
}
END_TEST

/* W: the restart from x1 breaks down before its first iteration, which
 * ends the solve at iteration 1 after that one restart, whatever the
 * limit; x is the iterate of the breakdown. */
START_TEST(restart_breaking_down_at_once_ends_it)
{
    kr_ctx *ctx = context(0, NULL);
    static kt_monitor_log l;
    kr_result res;
    double x[3];
    for (int limit = 1; limit <= 100; limit += 99) {
        kr_solve_options o = options(&l);
        o.breakdown_restarts = limit;
        double r = solve_e1(ctx, 3, W, &o, &res, x);
        assert_reason(&res, KR_DIVERGED_BREAKDOWN, 1, 1, "W");
        ck_assert(x[0] == 1.0 && x[1] == 0.0 && x[2] == 0.0);
        ck_assert(fabs(r - sqrt(0.5)) <= 1e-15);
        assert_one_restart_at(&res, &l, 1);
        kr_result_free(&res);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* No restart when the run made no progress: breakdowns before the first
 * iteration (S and N with BiCGSTAB, N with GMRES and IDR: A e1 = 0), and
 * IDR(1) on the skew K, b = (1,2), whose one step makes ||r|| 5 times
 * larger before omega = 0 stops it. */
START_TEST(no_restart_without_progress)
{
    static const double e1[2] = {1, 0}, b12[2] = {1, 2};
    static const struct {
        const double *a, *b;
        const char *method;
        int its;
    } cases[] = {{S, e1, "bicgstab", 0},
                 {N, e1, "bicgstab", 0},
                 {N, e1, "gmres", 0},
                 {N, e1, "idr", 0},
                 {K, b12, "idr", 1}};
    kr_ctx *ctx = context(0, NULL);
    static kt_monitor_log l;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kr_csr A;
        kr_matrix *M = NULL;
        kr_precond *P = NULL;
        kr_vec *vb = NULL, *vx = NULL;
        kr_result res;
        kr_solve_options o = options(&l);
        o.method = cases[c].method;
        o.s = 1;
        kt_dense_csr(ctx, 2, cases[c].a, &A);
        ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
        ck_assert_int_eq(kr_precond_create(ctx, &A, "none", &P), KR_OK);
        ck_assert_int_eq(kr_vec_create(ctx, 2, &vb), KR_OK);
        ck_assert_int_eq(kr_vec_create(ctx, 2, &vx), KR_OK);
        ck_assert_int_eq(kr_vec_upload(vb, cases[c].b), KR_OK);
        ck_assert_int_eq(kr_solve(ctx, M, P, vb, vx, &o, &res), KR_OK);
        assert_reason(&res, KR_DIVERGED_BREAKDOWN, cases[c].its, 0,
                      cases[c].method);
        ck_assert_int_eq(l.count, cases[c].its + 1);
        kr_result_free(&res);
        kr_vec_destroy(vb);
        kr_vec_destroy(vx);
        kr_precond_destroy(P);
        kr_matrix_destroy(M);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* The restart takes its iterations from maxit: maxit 1 stops at the
 * breakdown's iteration by the limit (DIVERGED_ITS, no restart); maxit 2
 * allows the restart one iteration. */
START_TEST(restarts_share_maxit)
{
    kr_ctx *ctx = context(0, NULL);
    static kt_monitor_log l;
    kr_result res;
    double x[4];
    kr_solve_options o = options(&l);
    o.maxit = 1;
    solve_e1(ctx, 4, B, &o, &res, x);
    assert_reason(&res, KR_DIVERGED_ITS, 1, 0, "maxit 1");
    kr_result_free(&res);
    o = options(&l);
    o.maxit = 2;
    solve_e1(ctx, 4, B, &o, &res, x);
    assert_reason(&res, KR_DIVERGED_ITS, 2, 1, "maxit 2");
    assert_one_restart_at(&res, &l, 1);
    kr_result_free(&res);
    kr_ctx_destroy(ctx);
}
END_TEST

/* breakdown_restarts outside 0..100 is an argument error naming it. */
START_TEST(breakdown_restarts_checked)
{
    kr_ctx *ctx = context(0, NULL);
    static kt_monitor_log l;
    kr_result res;
    double x[4];
    kr_solve_options o = options(&l);
    o.breakdown_restarts = 100;
    solve_e1(ctx, 4, B, &o, &res, x); /* the largest allowed */
    ck_assert_int_eq(res.reason, KR_CONVERGED_RTOL);
    kr_result_free(&res);
    kr_csr A;
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_vec *v = NULL, *w = NULL;
    kt_dense_csr(ctx, 4, B, &A);
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "none", &P), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 4, &v), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 4, &w), KR_OK);
    for (int bad = -1; bad <= 101; bad += 102) {
        o.breakdown_restarts = bad;
        ck_assert_int_eq(kr_solve(ctx, M, P, v, w, &o, &res), KR_ERR_ARG);
        ck_assert_msg(strstr(kr_ctx_error(ctx), "breakdown_restarts"), "%s",
                      kr_ctx_error(ctx));
        kr_result_free(&res);
    }
    kr_vec_destroy(v);
    kr_vec_destroy(w);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ----------------------------------------------------------- commands */

/* B as a Matrix Market file in a fresh folder; b = A*ones = e1 is the
 * commands' default right-hand side. */
static const char *b_matrix(void)
{
    static const char text[] =
        "%%MatrixMarket matrix coordinate real general\n4 4 10\n"
        "1 1 1\n1 2 1\n1 3 -2\n1 4 1\n2 1 1\n2 2 -1\n3 1 2\n3 3 -2\n"
        "4 1 3\n4 4 -3\n";
    return kt_write_file(kt_tmpdir(), "B.mtx", text);
}

static kt_output krylov(const char *fmt, const char *path, const char *more)
{
    return kt_command("", kt_krylov_bin(), NULL, fmt, path, more);
}

#define SOLVE                                                                  \
    "solve '%s' --method bicgstab --precond none --rtol 1e-10 "                \
    "--device cpu --threads 1 %s"

/* krylov solve: the count and the limit in the text and JSON reports,
 * exit 0 after the restart, exit 1 with DIVERGED_BREAKDOWN without it,
 * exit 2 for a limit out of range. */
START_TEST(solve_reports_restarts)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", b_matrix());
    kt_output r = krylov(SOLVE, path, "");
    ck_assert_msg(r.rc == 0, "rc %d: %s%s", r.rc, r.out, r.err);
    ck_assert_msg(strstr(r.out, "breakdown restarts:      1 (at most 3)"), "%s",
                  r.out);
    kt_output_free(&r);
    r = krylov(SOLVE, path, "--json");
    ck_assert_int_eq(r.rc, 0);
    ck_assert(kt_num_after(r.out, "\"breakdown_restarts\"") == 1);
    ck_assert(kt_num_after(r.out, "\"breakdown_restarts_max\"") == 3);
    ck_assert(kt_num_after(r.out, "\"true_relative_residual\"") <= 1e-10);
    kt_output_free(&r);
    r = krylov(SOLVE, path, "--breakdown-restarts 0 --json");
    ck_assert_int_eq(r.rc, 1);
    ck_assert(strstr(r.out, "\"reason\": \"DIVERGED_BREAKDOWN\""));
    ck_assert(kt_num_after(r.out, "\"breakdown_restarts\"") == 0);
    ck_assert(kt_num_after(r.out, "\"breakdown_restarts_max\"") == 0);
    ck_assert(kt_num_after(r.out, "\"iterations\"") == 1);
    kt_output_free(&r);
    r = krylov(SOLVE, path, "--breakdown-restarts 101");
    ck_assert_int_eq(r.rc, 2);
    ck_assert(strstr(r.err, "--breakdown-restarts"));
    kt_output_free(&r);
    r = kt_command("", kt_krylov_bin(), NULL, "solve --help");
    ck_assert(strstr(r.out, "--breakdown-restarts N"));
    kt_output_free(&r);
}
END_TEST

/* krylov bench solve: the JSON rows count the restarts, the Markdown note
 * says so, and --breakdown-restarts 0 turns them off. */
START_TEST(bench_reports_restarts)
{
    char path[1024], json[1100];
    snprintf(path, sizeof path, "%s", b_matrix());
    snprintf(json, sizeof json, "%s.json", path);
    for (int limit = 0; limit <= 3; limit += 3) {
        kt_output r = kt_command("", kt_krylov_bin(), NULL,
                                 "bench solve '%s' --method bicgstab "
                                 "--precond none --rtol 1e-10 --device cpu "
                                 "--reps 1 --warmup 0 --breakdown-restarts %d "
                                 "--json '%s'",
                                 path, limit, json);
        ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
        char *j = kt_slurp(json);
        ck_assert(j != NULL);
        ck_assert(kt_num_after(j, "\"breakdown_restarts\"") == (limit ? 1 : 0));
        ck_assert(kt_num_after(j, "\"breakdown_restarts_max\"") == limit);
        ck_assert(strstr(j, limit ? "CONVERGED_RTOL" : "DIVERGED_BREAKDOWN"));
        ck_assert(!limit == !strstr(r.out, "; 1 breakdown restart(s)"));
        free(j);
        kt_output_free(&r);
    }
}
END_TEST

/* krylov compare-petsc (where built): PETSc's KSPBCGS stops at the
 * breakdown, krylov restarts, and the table and JSON say so. */
START_TEST(compare_petsc_says_krylov_restarted)
{
    char bin[1024], path[1024];
    const char *k = kt_krylov_bin(), *slash = strrchr(k, '/');
    snprintf(bin, sizeof bin, "%.*s/krylov-petsc", slash ? (int)(slash - k) : 1,
             slash ? k : ".");
    if (access(bin, X_OK) != 0) {
        kt_skip("compare_petsc_says_krylov_restarted", "no krylov-petsc");
        return;
    }
    snprintf(path, sizeof path, "%s", b_matrix());
    kt_output r = kt_command("", k, NULL,
                             "compare-petsc '%s' --method bicgstab --precond "
                             "none --rtol 1e-10 --threads 1 --device cpu",
                             path);
    ck_assert_msg(r.rc == 1, "rc %d: %s%s", r.rc, r.out, r.err);
    ck_assert_msg(strstr(r.out, "note: krylov restarted from x after 1 "
                                "breakdown(s) (--breakdown-restarts 3); "
                                "PETSc's KSPBCGS has no such restart"),
                  "%s", r.out);
    kt_output_free(&r);
    r = kt_command("", k, NULL,
                   "compare-petsc '%s' --method bicgstab --precond none "
                   "--rtol 1e-10 --threads 1 --device cpu --json",
                   path);
    ck_assert(kt_num_after(r.out, "\"krylov_breakdown_restarts\"") == 1);
    ck_assert(strstr(r.out, "\"krylov_reason\": \"CONVERGED_RTOL\""));
    ck_assert(strstr(r.out, "\"petsc_reason\": \"DIVERGED_BREAKDOWN\""));
    kt_output_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("breakdown");
    TCase *tc = tcase_create("restarts");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_loop_test(tc, restart_gets_past_breakdown, 0, 2);
    tcase_add_test(tc, restart_breaking_down_at_once_ends_it);
    tcase_add_test(tc, no_restart_without_progress);
    tcase_add_test(tc, restarts_share_maxit);
    tcase_add_test(tc, breakdown_restarts_checked);
    suite_add_tcase(s, tc);
    TCase *tk = tcase_create("commands");
    tcase_set_timeout(tk, KT_HANG_GUARD_S);
    tcase_add_test(tk, solve_reports_restarts);
    tcase_add_test(tk, bench_reports_restarts);
    tcase_add_test(tk, compare_petsc_says_krylov_restarted);
    suite_add_tcase(s, tk);
    return kt_run(s);
}
