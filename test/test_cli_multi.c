/* krylov solve with several right-hand sides, end to end: -b with an
 * n x k array file and --nrhs k are solved together, each column taking
 * the iterations of its own single solve (CPU), reported per column in
 * text and JSON ("columns"); -o writes n x k; k = 1 keeps the single
 * report; malformed or mis-sized B exits 3 naming the file and line;
 * options that report one solve, -b with --nrhs, and a PETSc binary -o
 * are usage errors (exit 2); --help tells of --nrhs. */
#include "testjson.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kt_output run_out;

/* krylov ARGS (printf-style), output captured in files of dir */
#define krylov(dir, ...) kt_command("", kt_krylov_bin(), dir, __VA_ARGS__)

/* A fresh folder into buf (kt_tmpdir reuses its buffer) */
#define FRESH_DIR(buf) snprintf(buf, sizeof buf, "%s", kt_tmpdir())

/* An n x k array file of seeded values into dir/name; its columns also
 * as n x 1 files name.1, name.2, ... */
static const char *write_block(const char *dir, const char *name, int n, int k,
                               uint64_t seed)
{
    static char path[512];
    size_t cap = (size_t)(n * k + 4) * 32 + 128;
    char *all = malloc(cap), *one = malloc((size_t)(n + 4) * 32 + 128);
    ck_assert(all && one);
    int len = snprintf(all, cap,
                       "%%%%MatrixMarket matrix array real "
                       "general\n%% k columns\n%d %d\n",
                       n, k);
    double *v = malloc((size_t)n * k * sizeof *v);
    uint64_t s = seed;
    for (int e = 0; e < n * k; e++) {
        v[e] = kt_rand_uniform(&s);
        len += snprintf(all + len, cap - (size_t)len, "%.17g\n", v[e]);
    }
    for (int j = 0; j < k; j++) {
        int l =
            snprintf(one, (size_t)(n + 4) * 32 + 128,
                     "%%%%MatrixMarket matrix array real general\n%d 1\n", n);
        for (int i = 0; i < n; i++)
            l += snprintf(one + l, (size_t)(n + 4) * 32 + 128 - (size_t)l,
                          "%.17g\n", v[(size_t)j * n + i]);
        char col[64];
        snprintf(col, sizeof col, "%s.%d", name, j + 1);
        kt_write_file(dir, col, one);
    }
    free(v);
    free(one);
    snprintf(path, sizeof path, "%s", kt_write_file(dir, name, all));
    free(all);
    return path;
}

/* The iterations in a single solve's text report. */
static int report_iterations(const char *text)
{
    const char *p = strstr(text, "\niterations:");
    ck_assert_msg(p != NULL, "no iterations line:\n%s", text);
    return atoi(p + strlen("\niterations:"));
}

/* -b with 4 columns: exit 0, the JSON lists 4 columns whose iterations
 * equal the single solves of each column, -o holds 4 columns. */
START_TEST(rhs_block_equals_single_solves)
{
    static const char *const methods[] = {"cg", "gmres", "idr", "bicgstab"};
    char dir[128];
    FRESH_DIR(dir);
    char B[512], x[512];
    snprintf(B, sizeof B, "%s", write_block(dir, "B.mtx", 144, 4, 3));
    snprintf(x, sizeof x, "%s/X.mtx", dir);
    for (int m = 0; m < 4; m++) {
        const char *gen = m ? "convdiff2d:12,3" : "poisson2d:12";
        run_out r = krylov(dir,
                           "solve --gen %s -b %s --method %s --precond "
                           "bjacobi --device cpu --json -o %s",
                           gen, B, methods[m], x);
        ck_assert_msg(r.rc == 0, "%s rc %d: %s", methods[m], r.rc, r.err);
        const char *st[8], *en[8];
        ck_assert_int_eq(kt_json_objects(r.out, "columns", st, en, 8), 4);
        ck_assert(kt_json_num(r.out, r.out + strlen(r.out), "nrhs") == 4);
        for (int j = 0; j < 4; j++) {
            run_out one = krylov(dir,
                                 "solve --gen %s -b %s.%d --method %s "
                                 "--precond bjacobi --device cpu",
                                 gen, B, j + 1, methods[m]);
            ck_assert_msg(one.rc == 0, "rc %d: %s", one.rc, one.err);
            ck_assert_int_eq((int)kt_json_num(st[j], en[j], "iterations"),
                             report_iterations(one.out));
            ck_assert(kt_json_num(st[j], en[j], "true_relative_residual") <=
                      1e-8);
            kt_output_free(&one);
        }
        kt_output_free(&r);
        char *sol = kt_slurp(x);
        ck_assert_ptr_nonnull(sol);
        ck_assert_ptr_nonnull(strstr(sol, "\n144 4\n"));
        free(sol);
    }
}
END_TEST

/* --nrhs: generated right-hand sides with known solutions; the seed is
 * reported and each column's forward error is small; the text report has
 * a line per column. */
START_TEST(nrhs_reports_forward_errors)
{
    char dir[128];
    FRESH_DIR(dir);
    run_out r = krylov(dir, "solve --gen poisson2d:16 --method cg --nrhs 5 "
                            "--rhs-seed 42 --device cpu --json");
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    const char *end = r.out + strlen(r.out);
    ck_assert(kt_json_num(r.out, end, "rhs_seed") == 42);
    ck_assert(kt_json_num(r.out, end, "columns_converged") == 5);
    const char *st[8], *en[8];
    ck_assert_int_eq(kt_json_objects(r.out, "columns", st, en, 8), 5);
    for (int j = 0; j < 5; j++) {
        ck_assert(kt_json_num(st[j], en[j], "column") == j + 1);
        ck_assert(kt_json_num(st[j], en[j], "forward_error_rel2") < 1e-5);
    }
    kt_output_free(&r);
    run_out t = krylov(dir, "solve --gen poisson2d:16 --method cg --nrhs 5 "
                            "--rhs-seed 42 --device cpu");
    ck_assert_msg(t.rc == 0, "rc %d: %s", t.rc, t.err);
    ck_assert_ptr_nonnull(strstr(t.out, "seed 42"));
    ck_assert_ptr_nonnull(strstr(t.out, "5 of 5"));
    ck_assert_ptr_nonnull(strstr(t.out, "\n     5 "));
    kt_output_free(&t);
}
END_TEST

/* -b n x 1 keeps the single solve's report (no "columns"). */
START_TEST(one_column_keeps_single_report)
{
    char dir[128];
    FRESH_DIR(dir);
    const char *b = write_block(dir, "b.mtx", 144, 1, 5);
    run_out r = krylov(dir, "solve --gen poisson2d:12 -b %s --json", b);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_null(strstr(r.out, "\"columns\""));
    ck_assert_ptr_null(strstr(r.out, "\"nrhs\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"forward_error_inf\": null"));
    kt_output_free(&r);
}
END_TEST

/* A malformed or mis-sized B, or a mis-sized --x0: exit 3, the message
 * names the file and the line, no output file. */
START_TEST(bad_rhs_block_exit_3)
{
    char dir[128];
    FRESH_DIR(dir);
    char x[512];
    snprintf(x, sizeof x, "%s/X.mtx", dir);
    const char *wrong = kt_write_file(dir, "wrong.mtx",
                                      "%%MatrixMarket matrix array real "
                                      "general\n%% a comment\n24 2\n");
    run_out r = krylov(dir, "solve --gen poisson2d:5 -b %s -o %s", wrong, x);
    ck_assert_int_eq(r.rc, 3);
    ck_assert_msg(strstr(r.err, "wrong.mtx:3") != NULL, "%s", r.err);
    kt_output_free(&r);
    const char *bad = kt_write_file(dir, "bad.mtx",
                                    "%%MatrixMarket matrix array real "
                                    "general\n25 2\n1\n2\nthree\n");
    r = krylov(dir, "solve --gen poisson2d:5 -b %s -o %s", bad, x);
    ck_assert_int_eq(r.rc, 3);
    ck_assert_msg(strstr(r.err, "bad.mtx:") != NULL, "%s", r.err);
    kt_output_free(&r);
    const char *B = write_block(dir, "B.mtx", 25, 2, 1);
    const char *x0 = kt_write_file(dir, "x0.mtx",
                                   "%%MatrixMarket matrix array real "
                                   "general\n25 1\n" /* needs 25 x 2 */);
    r = krylov(dir, "solve --gen poisson2d:5 -b %s --x0 %s -o %s", B, x0, x);
    ck_assert_int_eq(r.rc, 3);
    kt_output_free(&r);
    ck_assert(!kt_file_exists(x));
}
END_TEST

/* Usage errors (exit 2): -b with --nrhs, --history or --monitor with k
 * columns, -o .bin with k columns, --nrhs out of range. */
START_TEST(multi_usage_errors_exit_2)
{
    char dir[128];
    FRESH_DIR(dir);
    const char *B = write_block(dir, "B.mtx", 25, 2, 1);
    static const char *const args[] = {
        "-b %s --nrhs 2", "-b %s --history h.csv", "-b %s --monitor",
        "-b %s -o x.bin", "--nrhs 65 %s",          "--nrhs 0 %s"};
    for (int i = 0; i < 6; i++) {
        char fmt[128];
        snprintf(fmt, sizeof fmt, "solve --gen poisson2d:5 %s", args[i]);
        run_out r = krylov(dir, fmt, i < 4 ? B : "");
        ck_assert_msg(r.rc == 2, "'%s': rc %d: %s", args[i], r.rc, r.err);
        kt_output_free(&r);
    }
}
END_TEST

/* bench solve --nrhs on the CPU: the JSON row has the comparison, every
 * column took its single solve's iterations, both times are positive. */
START_TEST(bench_solve_nrhs)
{
    char dir[128];
    FRESH_DIR(dir);
    char json[512];
    snprintf(json, sizeof json, "%s/b.json", dir);
    run_out r = krylov(dir,
                       "bench solve --gen poisson2d:16 --method cg --nrhs 3 "
                       "--reps 1 --warmup 0 --device cpu --json %s",
                       json);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    kt_output_free(&r);
    char *j = kt_slurp(json);
    ck_assert_ptr_nonnull(j);
    const char *end = j + strlen(j);
    const char *m = kt_json_member(j, end, "multi_rhs");
    ck_assert_ptr_nonnull(m);
    ck_assert(kt_json_num(m, end, "k") == 3);
    ck_assert_ptr_nonnull(strstr(m, "\"each_column_equal_iterations\": true"));
    ck_assert(kt_json_num(m, end, "multi_solve_s") > 0);
    ck_assert(kt_json_num(m, end, "single_solves_s") > 0);
    ck_assert(kt_json_num(m, end, "multi_columns_converged") == 3);
    free(j);
}
END_TEST

START_TEST(help_tells_of_nrhs)
{
    run_out r = krylov(NULL, "solve --help");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "--nrhs K"));
    ck_assert_ptr_nonnull(strstr(r.out, "--rhs-seed S"));
    ck_assert_ptr_nonnull(strstr(r.out, "n x k"));
    kt_output_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_multi");
    TCase *tc = tcase_create("cli_multi");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, rhs_block_equals_single_solves);
    tcase_add_test(tc, nrhs_reports_forward_errors);
    tcase_add_test(tc, one_column_keeps_single_report);
    tcase_add_test(tc, bad_rhs_block_exit_3);
    tcase_add_test(tc, multi_usage_errors_exit_2);
    tcase_add_test(tc, bench_solve_nrhs);
    tcase_add_test(tc, help_tells_of_nrhs);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
