/* krylov side by side with PETSc. Without PETSc: the PETSc-style options of
 * `krylov solve` (same iterations as krylov's own spellings, unsupported
 * ones exit 2 naming themselves, listed in --help) and compare-petsc's
 * message when krylov-petsc is missing. With build/krylov-petsc: its JSON
 * against PETSc KSP on generated and real matrices (iteration counts,
 * true residuals, agreement of the solutions) and the table's rows. */
#include "testutil.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct run_out {
    int rc;    /* exit status, -1 if killed */
    char *out; /* stdout */
    char *err; /* stderr */
} run_out;

static const char *krylov_bin(void)
{
    const char *b = getenv("KRYLOV_BIN");
    return b && *b ? b : "build/krylov";
}

/* krylov-petsc next to the krylov binary. */
static const char *petsc_bin(void)
{
    static char path[1024];
    const char *k = krylov_bin();
    const char *slash = strrchr(k, '/');
    int dir = slash ? (int)(slash - k) : 1;
    snprintf(path, sizeof path, "%.*s/krylov-petsc", dir, slash ? k : ".");
    return path;
}

static int have_petsc(void) { return access(petsc_bin(), X_OK) == 0; }

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)len + 1);
    ck_assert(s && fread(s, 1, (size_t)len, f) == (size_t)len);
    s[len] = '\0';
    fclose(f);
    return s;
}

/* MPI and PETSc keep memory to the end (Open MPI's plug-ins): under
 * SANITIZE=1 krylov-petsc runs with AddressSanitizer and UBSan on but the
 * leak check off. krylov's own leaks are checked by the solve runs. */
#define PETSC_ENV "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "

/* Runs "ENV 'bin' ARGS" (printf-style), stdout and stderr captured. */
static run_out run(const char *env, const char *bin, const char *fmt, ...)
{
    char args[2048], cmd[4096], out[512], err[512];
    const char *dir = kt_tmpdir();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(out, sizeof out, "%s/stdout.txt", dir);
    snprintf(err, sizeof err, "%s/stderr.txt", dir);
    snprintf(cmd, sizeof cmd, "%s'%s' %s >'%s' 2>'%s'", env, bin, args, out,
             err);
    int status = system(cmd);
    run_out r = {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out),
                 slurp(err)};
    return r;
}

static void run_free(run_out *r)
{
    free(r->out);
    free(r->err);
}

/* The number after "key": in a JSON object, or after "key" in a text. */
static double num_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    ck_assert_msg(p != NULL, "no '%s' in:\n%s", key, text);
    p += strlen(key);
    while (*p == ' ' || *p == ':' || *p == '"')
        p++;
    char *end;
    double v = strtod(p, &end);
    ck_assert_msg(end != p, "no number after '%s'", key);
    return v;
}

/* ------------------------------------------- PETSc-style options (no PETSc) */

/* Iterations of `krylov solve --gen SPEC ARGS --json`. */
static int solve_iterations(const char *spec, const char *args, int want_rc)
{
    run_out r = run("", krylov_bin(), "solve --gen %s %s --json", spec, args);
    ck_assert_msg(r.rc == want_rc, "rc %d for %s: %s", r.rc, args, r.err);
    int its = (int)num_after(r.out, "\"iterations\"");
    run_free(&r);
    return its;
}

START_TEST(aliases_match_long_options)
{
    static const char *const pairs[][2] = {
        {"-ksp_type cg -pc_type jacobi -ksp_rtol 1e-10",
         "--method cg --precond jacobi --rtol 1e-10"},
        {"-ksp_type bcgs -pc_type none -ksp_atol 1e-6",
         "--method bicgstab --precond none --atol 1e-6"},
        {"-ksp_type gmres -ksp_gmres_restart 5 -ksp_divtol 1e8",
         "--method gmres --restart 5 --dtol 1e8"},
        {"-ksp_type idr -ksp_max_it 7", "--method idr --maxit 7"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        int want = strstr(pairs[i][0], "max_it") ? 1 : 0;
        int a = solve_iterations("poisson2d:10", pairs[i][0], want);
        int b = solve_iterations("poisson2d:10", pairs[i][1], want);
        ck_assert_msg(a == b && a > 0, "%s: %d, %s: %d", pairs[i][0], a,
                      pairs[i][1], b);
    }
    ck_assert_int_eq(solve_iterations("poisson2d:10", "-ksp_max_it 7", 1), 7);
}
END_TEST

START_TEST(converged_reason_line)
{
    int its = solve_iterations("poisson2d:10",
                               "--method cg --precond jacobi --rtol 1e-10", 0);
    char want[128];
    snprintf(want, sizeof want,
             "Linear solve converged due to CONVERGED_RTOL iterations %d\n",
             its);
    run_out r = run("", krylov_bin(),
                    "solve --gen poisson2d:10 -ksp_type cg -pc_type jacobi "
                    "-ksp_rtol 1e-10 -ksp_converged_reason");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_msg(strstr(r.out, want), "no '%s' in:\n%s", want, r.out);
    ck_assert_int_eq((int)num_after(r.out, "\niterations:"), its);
    run_free(&r);
    r = run("", krylov_bin(),
            "solve --gen poisson2d:10 -ksp_max_it 10 "
            "-ksp_converged_reason");
    ck_assert_int_eq(r.rc, 1);
    ck_assert_msg(strstr(r.out, "Linear solve did not converge due to "
                                "DIVERGED_ITS iterations 10\n"),
                  "%s", r.out);
    run_free(&r);
}
END_TEST

START_TEST(view_shows_configuration)
{
    run_out r = run("", krylov_bin(),
                    "solve --gen poisson2d:10 -ksp_type gmres "
                    "-ksp_gmres_restart 7 -ksp_rtol 1e-9 "
                    "-pc_type none -ksp_view --format csr --device cpu");
    ck_assert_int_eq(r.rc, 0);
    const char *want[] = {"type: gmres, restart=7", "relative=1e-09",
                          "type: none", "format: csr", "device: cpu"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.out, want[i]), "no '%s' in:\n%s", want[i],
                      r.out);
    run_free(&r);
}
END_TEST

START_TEST(unsupported_petsc_options_exit_2)
{
    static const char *const bad[][2] = {
        {"-ksp_type richardson", "-ksp_type richardson"},
        {"-pc_type ilu", "-pc_type ilu"},
        {"-ksp_norm_type preconditioned", "-ksp_norm_type"},
        {"-mat_type aij", "-mat_type"},
        {"-ksp_type bcgsl", "-ksp_type bcgsl"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_out r =
            run("", krylov_bin(), "solve --gen poisson2d:10 %s", bad[i][0]);
        ck_assert_msg(r.rc == 2, "%s: rc %d", bad[i][0], r.rc);
        ck_assert_msg(strstr(r.err, bad[i][1]), "%s not named: %s", bad[i][1],
                      r.err);
        ck_assert_msg(strstr(r.err, "-ksp_rtol") &&
                          strstr(r.err, "-ksp_converged_reason"),
                      "supported options not listed: %s", r.err);
        ck_assert_str_eq(r.out, "");
        run_free(&r);
    }
}
END_TEST

START_TEST(help_lists_aliases)
{
    static const char *const names[] = {
        "-ksp_type",    "-pc_type",           "-ksp_rtol",
        "-ksp_atol",    "-ksp_divtol",        "-ksp_max_it",
        "-ksp_monitor", "-ksp_gmres_restart", "-ksp_converged_reason",
        "-ksp_view"};
    run_out r = run("", krylov_bin(), "solve --help");
    ck_assert_int_eq(r.rc, 0);
    const char *sec = strstr(r.out, "PETSc-style aliases");
    ck_assert_msg(sec != NULL, "%s", r.out);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_msg(strstr(sec, names[i]), "%s not in help", names[i]);
    ck_assert(strstr(sec, "bcgs (= bicgstab)"));
    run_free(&r);
}
END_TEST

/* A copy of krylov alone in a folder: compare-petsc explains, exit 4. */
START_TEST(compare_without_petsc_explains)
{
    const char *dir = kt_tmpdir();
    char cmd[2048], bin[1024];
    snprintf(bin, sizeof bin, "%s/krylov", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", krylov_bin(), bin);
    ck_assert_int_eq(system(cmd), 0);
    run_out r = run("", bin, "compare-petsc --gen poisson2d:10");
    ck_assert_int_eq(r.rc, 4);
    ck_assert_msg(strstr(r.err, "compare-petsc needs PETSc") &&
                      strstr(r.err, "sudo apt-get install petsc-dev"),
                  "%s", r.err);
    run_free(&r);
}
END_TEST

/* ------------------------------------------------ krylov vs PETSc (PETSc) */

/* Runs krylov-petsc ARGS --json --threads 1 and checks the two sides agree:
 * both converged, true residuals <= 1.05 rtol, iterations within its_tol,
 * solutions within 1e-4. */
static void check_compare(const char *problem, const char *method, int its_tol)
{
    run_out r = run(PETSC_ENV, petsc_bin(),
                    "%s --method %s --precond jacobi --json "
                    "--threads 1",
                    problem, method);
    ck_assert_msg(r.rc == 0, "%s %s: rc %d\n%s%s", problem, method, r.rc, r.out,
                  r.err);
    int ki = (int)num_after(r.out, "\"krylov_iterations\"");
    int pi = (int)num_after(r.out, "\"petsc_iterations\"");
    double kr = num_after(r.out, "\"krylov_true_relative_residual\"");
    double pr = num_after(r.out, "\"petsc_true_relative_residual\"");
    double dx = num_after(r.out, "\"solution_difference\"");
    ck_assert_msg(abs(ki - pi) <= its_tol, "%s %s: krylov %d, PETSc %d its",
                  problem, method, ki, pi);
    ck_assert_msg(kr <= 1.05e-8 && pr <= 1.05e-8,
                  "%s %s: true residuals %g, %g", problem, method, kr, pr);
    ck_assert_msg(dx < 1e-4, "%s %s: ||xk - xp||/||xp|| = %g", problem, method,
                  dx);
    ck_assert_msg(strstr(r.out, "\"petsc_reason\": \"CONVERGED_"), "%s", r.out);
    run_free(&r);
}

START_TEST(compare_generated)
{
    if (!have_petsc()) {
        kt_skip("compare_generated", "no krylov-petsc (PETSc not installed)");
        return;
    }
    check_compare("--gen poisson2d:30", "cg", 1);
    check_compare("--gen poisson3d:12", "cg", 1);
    check_compare("--gen poisson2d:30", "gmres", 2);
    check_compare("--gen poisson3d:12", "gmres", 2);
    check_compare("--gen convdiff2d:30,20", "gmres", 2);
}
END_TEST

START_TEST(compare_real_spd)
{
    /* The bounds: CG within 1 iteration, GMRES(30) within 2. Both
     * depend on krylov's CSR loop adding each row in column order, as PETSc
     * does (bcsstk14, cond ~1e10, crosses rtol on a plateau). */
    static const char *const names[] = {"bcsstk14", "mhd4800b", "crystm01",
                                        "nos5", "1138_bus"};
    const char *dir = kt_matrices_dir();
    if (!have_petsc() || !dir) {
        kt_skip("compare_real_spd",
                !dir ? "no matrices folder" : "no krylov-petsc (no PETSc)");
        return;
    }
    char path[1024];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.mtx", dir, names[i]);
        if (access(path, R_OK) != 0) {
            kt_skip("compare_real_spd", path);
            return;
        }
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.mtx", dir, names[i]);
        check_compare(path, "cg", 1);
        if (strcmp(names[i], "1138_bus")) /* GMRES(30) stalls on it */
            check_compare(path, "gmres", 2);
    }
}
END_TEST

START_TEST(compare_prints_table)
{
    if (!have_petsc()) {
        kt_skip("compare_prints_table", "no krylov-petsc (no PETSc)");
        return;
    }
    run_out r =
        run(PETSC_ENV, krylov_bin(), "compare-petsc --gen poisson2d:10");
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    const char *rows[] = {"krylov",
                          "PETSc",
                          "iterations",
                          "reason",
                          "true rel. residual",
                          "setup time (s)",
                          "solve time (s)",
                          "time per iteration (s)",
                          "||x_krylov - x_petsc|| / ||x_petsc||"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        ck_assert_msg(strstr(r.out, rows[i]), "no '%s' in:\n%s", rows[i],
                      r.out);
    ck_assert_msg(strstr(r.out, "CONVERGED_RTOL"), "%s", r.out);
    ck_assert_msg(!strstr(r.out, "WARNING"), "PETSc noise: %s", r.out);
    run_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("petsc");
    TCase *cli = tcase_create("petsc_style_options");
    tcase_set_timeout(cli, 60);
    tcase_add_test(cli, aliases_match_long_options);
    tcase_add_test(cli, converged_reason_line);
    tcase_add_test(cli, view_shows_configuration);
    tcase_add_test(cli, unsupported_petsc_options_exit_2);
    tcase_add_test(cli, help_lists_aliases);
    tcase_add_test(cli, compare_without_petsc_explains);
    suite_add_tcase(s, cli);
    TCase *cmp = tcase_create("compare_petsc");
    tcase_set_timeout(cmp, 300);
    tcase_add_test(cmp, compare_generated);
    tcase_add_test(cmp, compare_real_spd);
    tcase_add_test(cmp, compare_prints_table);
    suite_add_tcase(s, cmp);
    return kt_run(s);
}
