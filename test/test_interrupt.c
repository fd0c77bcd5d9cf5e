/* Interrupts (issue 16, item 5): a stop request (kr_solve_options.
 * interrupt) ends every method with KR_INTERRUPTED at the iteration it was
 * made, x that iterate; SIGINT and SIGTERM during `krylov gen` leave no
 * temporary file and exit 130; during `krylov solve` they stop the solve,
 * the report is printed, nothing (or with --save-on-interrupt the iterate)
 * is written, exit 130. No result depends on timing: gen is stopped
 * (SIGSTOP) while its temporary is open before it is signalled, and the
 * solve signalled cannot end by itself. */
#include "io/outfile.h"
#include "testproc.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* What a signal handler calls: the temporary of an unfinished output goes,
 * the target is never created. */
START_TEST(pending_temporaries_unlinked)
{
    const char *dir = kt_scratch_dir();
    kr_ctx *ctx = kt_cpu();
    kr_outfile o;
    ck_assert_int_eq(kr_outfile_open(ctx, kt_in_dir(dir, "a.mtx"), 0, &o),
                     KR_OK);
    ck_assert(kr_outfile_printf(&o, "partial\n") > 0);
    ck_assert(!kt_no_tmp_files(dir));
    kr_outfile_unlink_pending();
    ck_assert(kt_no_tmp_files(dir));
    kr_outfile_abort(&o);
    ck_assert_int_eq(count_entries(dir), 0);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------- item 5: the library's stop request */

typedef struct stop_at {
    volatile int flag;
    int at;
} stop_at;

/* Raises the flag; returns 0, so the stop comes through the flag. */
static int raise_at(int it, double rnorm, void *user)
{
    (void)rnorm;
    stop_at *s = user;
    if (it >= s->at) s->flag = 1;
    return 0;
}

/* The request made at iteration `at` (by the monitor) stops every method
 * there with KR_INTERRUPTED; x is that iterate, the true residual is
 * its own. */
static void stops_at(const char *method, int at)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A = {0};
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:20", &A), KR_OK);
    int32_t n = A.nrows;
    double *hb = malloc((size_t)n * sizeof *hb),
           *hx = calloc((size_t)n, sizeof *hx);
    for (int32_t i = 0; i < n; i++)
        hx[i] = 1.0;
    kr_csr_matvec(&A, hx, hb);
    for (int32_t i = 0; i < n; i++)
        hx[i] = 0.0;
    kr_matrix *M;
    kr_precond *P;
    kr_vec *b, *x;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, n, &b), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, n, &x), KR_OK);
    ck_assert_int_eq(kr_vec_upload(b, hb), KR_OK);
    ck_assert_int_eq(kr_vec_upload(x, hx), KR_OK);
    kr_solve_options opt;
    kr_solve_options_default(&opt);
    ck_assert(opt.interrupt == NULL);
    stop_at s = {.flag = at < 0, .at = at < 0 ? 0 : at};
    opt.method = method;
    opt.interrupt = &s.flag;
    opt.monitor = raise_at;
    opt.monitor_user = &s;
    kr_result res;
    ck_assert_int_eq(kr_solve(ctx, M, P, b, x, &opt, &res), KR_OK);
    ck_assert_msg(res.reason == KR_INTERRUPTED, "%s: %s", method,
                  kr_reason_name(res.reason));
    ck_assert_int_eq(res.iterations, at < 0 ? 0 : at);
    ck_assert_int_eq(kr_vec_download(x, hx), KR_OK);
    double r = kt_host_residual(&A, hb, hx);
    ck_assert_msg(fabs(r - res.true_rnorm) <= 1e-10 * res.bnorm,
                  "%s: ||b - A x|| = %g, reported %g", method, r,
                  res.true_rnorm);
    if (at > 0) /* progress, so x is the iterate, not x0 */
        ck_assert_msg(r < 0.99 * res.bnorm, "%s: r %g", method, r);
    else
        ck_assert(r == res.bnorm);
    kr_result_free(&res);
    kr_vec_destroy(b);
    kr_vec_destroy(x);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    free(hb);
    free(hx);
    kr_ctx_destroy(ctx);
}

START_TEST(every_method_stops_on_request)
{
    const char *const *names = kr_method_names();
    for (int i = 0; names[i]; i++) {
        stops_at(names[i], 3);
        stops_at(names[i], 7);
        stops_at(names[i], -1); /* set before the solve: iteration 0 */
    }
    ck_assert_int_eq(KR_INTERRUPTED, -30);
    ck_assert_str_eq(kr_reason_name(KR_INTERRUPTED), "INTERRUPTED");
    ck_assert(strstr(kr_reason_text(KR_INTERRUPTED), "interrupt"));
}
END_TEST

/* ------------------------------------------------ item 5: interrupts */

/* Stops the child once a temporary exists in dir; returns 1 with the
 * child stopped and the temporary still there (the write is under way),
 * 0 when the child finished first (it is then reaped into *rc). */
static int stop_while_writing(const kt_child *c, const char *dir, int *rc)
{
    for (int polls = 0; polls < 120000; polls++) { /* 4 minutes at least */
        int status;
        pid_t w = waitpid(c->pid, &status, WNOHANG);
        if (w == c->pid) {
            *rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1000;
            return 0;
        }
        if (!kt_no_tmp_files(dir)) {
            ck_assert_int_eq(kill(c->pid, SIGSTOP), 0);
            ck_assert_int_eq(waitpid(c->pid, &status, WUNTRACED), c->pid);
            if (!WIFSTOPPED(status)) { /* it ended before the stop */
                *rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1000;
                return 0;
            }
            if (!kt_no_tmp_files(dir)) return 1;
            kill(c->pid, SIGCONT); /* renamed just before the stop */
            *rc = kt_wait(c);
            return 0;
        }
        kt_nap();
    }
    ck_abort_msg("no temporary file appeared in %s", dir);
    return 0;
}

/* gen is stopped in the middle of writing, sent sig, then continued: the
 * signal arrives while the temporary is open. A gzip output makes the
 * write long (about a second); should gen still finish before it is
 * stopped, the next try writes a larger matrix. */
static void gen_interrupted(int sig)
{
    static const char *const specs[] = {"poisson3d:48", "poisson3d:64",
                                        "poisson3d:96"};
    for (int t = 0; t < 3; t++) {
        const char *dir = kt_scratch_dir(), *io = kt_scratch_dir();
        const char *const args[] = {"gen", specs[t],     "--threads", "1",
                                    "-o",  "big.mtx.gz", NULL};
        kt_child c = kt_start(dir, io, 022, args);
        int rc;
        if (!stop_while_writing(&c, dir, &rc)) {
            ck_assert_int_eq(rc, 0);
            continue; /* finished first: try a larger one */
        }
        ck_assert_int_eq(kill(c.pid, sig), 0);
        ck_assert_int_eq(kill(c.pid, SIGCONT), 0);
        ck_assert_int_eq(kt_wait(&c), 130);
        ck_assert_msg(kt_no_tmp_files(dir), "a temporary was left behind");
        ck_assert_int_eq(count_entries(dir), 0);
        char *err = kt_slurp(c.err);
        ck_assert_msg(strstr(err, "interrupted"), "%s", err);
        free(err);
        return;
    }
    ck_abort_msg("gen finished every time before it could be stopped");
}

START_TEST(gen_sigint_leaves_no_temporary) { gen_interrupted(SIGINT); }
END_TEST

START_TEST(gen_sigterm_leaves_no_temporary) { gen_interrupted(SIGTERM); }
END_TEST

/* A solve that cannot end within the tests' time limit (GMRES(1) at
 * rtol = atol = 0, dtol off, 1e8 iterations of over 10 us each): once its
 * monitor has printed iteration 2 it is in the solve, and SIGINT stops it
 * at the next iteration. (maxit sizes the history: 800 MB reserved, only
 * the pages used are touched.) */
static char *interrupt_solve(const char *dir, const char *io, int save)
{
    const char *const args[] = {"solve",
                                "--gen",
                                "poisson2d:100",
                                "--method",
                                "gmres",
                                "--restart",
                                "1",
                                "--rtol",
                                "0",
                                "--atol",
                                "0",
                                "--dtol",
                                "0",
                                "--maxit",
                                "100000000",
                                "--device",
                                "cpu",
                                "--threads",
                                "1",
                                "--json",
                                "--monitor",
                                "--history",
                                "h.csv",
                                "-o",
                                "x.mtx",
                                save ? "--save-on-interrupt" : NULL,
                                NULL};
    kt_child c = kt_start(dir, io, 022, args);
    for (int polls = 0;; polls++) { /* the monitor goes to stderr */
        char *err = kt_slurp(c.err);
        int running = err && strstr(err, "\n   2    ");
        free(err);
        if (running) break;
        int ended = waitpid(c.pid, NULL, WNOHANG) != 0;
        if (ended || polls == 120000) {
            kill(c.pid, SIGKILL); /* never leave it running */
            waitpid(c.pid, NULL, 0);
            ck_abort_msg(ended ? "krylov ended" : "the solve did not start");
        }
        kt_nap();
    }
    ck_assert_int_eq(kill(c.pid, SIGINT), 0);
    ck_assert_int_eq(kt_wait(&c), 130);
    char *err = kt_slurp(c.err);
    ck_assert_msg(strstr(err, "interrupted after"), "%s", err);
    free(err);
    ck_assert(kt_no_tmp_files(dir));
    char *out = kt_slurp(c.out);
    ck_assert_msg(out && strstr(out, "\"reason\": \"INTERRUPTED\""), "%s", out);
    ck_assert(kt_num_after(out, "\"iterations\"") >= 2);
    return out;
}

START_TEST(solve_sigint_reports_and_writes_nothing)
{
    const char *dir = kt_scratch_dir(), *io = kt_scratch_dir();
    char *out = interrupt_solve(dir, io, 0);
    free(out);
    ck_assert_int_eq(count_entries(dir), 0);
}
END_TEST

/* --save-on-interrupt: x is the iterate whose true residual the report
 * gives. */
START_TEST(solve_save_on_interrupt_writes_the_iterate)
{
    const char *dir = kt_scratch_dir(), *io = kt_scratch_dir();
    char *out = interrupt_solve(dir, io, 1);
    kr_ctx *ctx = kt_cpu();
    kr_csr A = {0};
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:100", &A), KR_OK);
    int32_t n = 0, m = 0;
    double *x = NULL;
    ck_assert_int_eq(
        kr_read_dense_mtx(ctx, kt_in_dir(dir, "x.mtx"), &n, &m, &x), KR_OK);
    ck_assert_int_eq(n, A.nrows);
    double *ones = malloc((size_t)n * sizeof *ones),
           *b = malloc((size_t)n * sizeof *b);
    for (int32_t i = 0; i < n; i++)
        ones[i] = 1.0;
    kr_csr_matvec(&A, ones, b);
    double bnorm = 0;
    for (int32_t i = 0; i < n; i++)
        bnorm += b[i] * b[i];
    double rel = kt_host_residual(&A, b, x) / sqrt(bnorm);
    double reported = kt_num_after(out, "\"true_relative_residual\"");
    ck_assert_msg(fabs(rel - reported) <= 1e-9 * reported,
                  "x gives %.17g, the report %.17g", rel, reported);
    ck_assert(rel < 1.0); /* the iterations made progress */
    ck_assert(kt_file_exists(kt_in_dir(dir, "h.csv")));
    free(ones);
    free(b);
    free(x);
    free(out);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("interrupt");
    TCase *lib = tcase_create("library");
    tcase_add_test(lib, pending_temporaries_unlinked);
    tcase_add_test(lib, every_method_stops_on_request);
    suite_add_tcase(s, lib);
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, KT_HANG_GUARD_S);
    tcase_add_test(cli, gen_sigint_leaves_no_temporary);
    tcase_add_test(cli, gen_sigterm_leaves_no_temporary);
    tcase_add_test(cli, solve_sigint_reports_and_writes_nothing);
    tcase_add_test(cli, solve_save_on_interrupt_writes_the_iterate);
    suite_add_tcase(s, cli);
    return s;
}

int main(void) { return kt_run(suite()); }
