/* krylov bench spmm end to end on the CPU: one row per matrix, k, format
 * and row order, the csr baseline in A's order always there and equal to
 * 1 over itself, numbers that agree with their definitions (GFLOP/s =
 * 2 nnz k / median, the byte model), results checked against the host
 * loop, a refusal as a row, the summary per k, and usage errors. */
#include "testjson.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAST "--device cpu --threads 1 --reps 2 --warmup 1 --copy-mb 4"

static void check_row(const char *o, const char *e)
{
    char format[32], order[32], status[32];
    kt_json_str(o, e, "format", format, sizeof format);
    kt_json_str(o, e, "permutation", order, sizeof order);
    kt_json_str(o, e, "status", status, sizeof status);
    if (!strcmp(status, "refused")) {
        ck_assert_str_eq(format, "ellr"); /* powerlaw's padding */
        return;
    }
    ck_assert_str_eq(status, "ok");
    double nnz = kt_json_num(o, e, "nnz"), k = kt_json_num(o, e, "k");
    double nr = kt_json_num(o, e, "nrows"), nc = kt_json_num(o, e, "ncols");
    double med = kt_json_num(o, e, "median_s");
    double bytes = 12 * nnz + 4 * (nr + 1) + 8 * k * (nc + nr);
    ck_assert(med > 0 && kt_json_num(o, e, "min_s") <= med);
    ck_assert_double_eq(kt_json_num(o, e, "min_bytes"), bytes);
    ck_assert_double_eq_tol(kt_json_num(o, e, "gflops"),
                            2 * nnz * k / med * 1e-9,
                            1e-12 * kt_json_num(o, e, "gflops"));
    ck_assert_double_eq_tol(kt_json_num(o, e, "gbytes_per_s"),
                            bytes / med * 1e-9, 1e-12 * bytes / med * 1e-9);
    ck_assert_double_le(kt_json_num(o, e, "max_rel_diff_from_reference"),
                        1e-12);
    ck_assert(kt_json_num(o, e, "permute_s") >= 0);
    ck_assert(kt_json_num(o, e, "build_s") >= kt_json_num(o, e, "permute_s"));
    ck_assert(kt_json_num(o, e, "speedup_vs_csr") > 0);
    if (!strcmp(format, "csr") && !strcmp(order, "none"))
        ck_assert_double_eq(kt_json_num(o, e, "speedup_vs_csr"), 1.0);
    if (!strcmp(order, "none"))
        ck_assert_double_eq(kt_json_num(o, e, "permute_s"), 0.0);
}

START_TEST(rows_and_summary)
{
    const char *dir = kt_tmpdir();
    kt_output r = kt_command(NULL, kt_krylov_bin(), dir,
                             "bench spmm --gen poisson2d:40 --gen "
                             "powerlaw:3000,20 --k 3,8 --formats ellr,vsr "
                             "--permute none,lpt " FAST " --json %s/s.json",
                             dir);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "# krylov bench spmm"));
    ck_assert_ptr_nonnull(strstr(r.out, "| best krylov choice per matrix |"));
    char path[512];
    snprintf(path, sizeof path, "%s/s.json", dir);
    char *json = kt_slurp(path);
    ck_assert_ptr_nonnull(json);
    const char *start[64], *stop[64];
    /* per matrix and k: csr/none + 2 formats x 2 orders */
    int n = kt_json_objects(json, "rows", start, stop, 64);
    ck_assert_int_eq(n, 2 * 2 * 5);
    for (int i = 0; i < n; i++)
        check_row(start[i], stop[i]);
    /* per k: 2 formats x 2 orders + the best krylov choice */
    n = kt_json_objects(json, "summary", start, stop, 64);
    ck_assert_int_eq(n, 2 * 5);
    /* each matrix's features, as the library computes them */
    n = kt_json_objects(json, "matrices", start, stop, 64);
    ck_assert_int_eq(n, 2);
    ck_assert_double_eq(kt_json_num(start[0], stop[0], "nnz"),
                        1600 * 5 - 4 * 40);
    ck_assert_ptr_nonnull(strstr(start[1], "\"features\": {"));
    ck_assert_ptr_nonnull(strstr(json, "\"copy_bytes_per_s\""));
    ck_assert_ptr_nonnull(strstr(json, "\"date_utc\""));
    free(json);
    kt_output_free(&r);
}
END_TEST

START_TEST(usage_errors)
{
    static const char *const bad[] = {"--k 0",
                                      "--k 4,x",
                                      "--k 2000",
                                      "--formats csr,dia",
                                      "--permute lpt,lpt",
                                      "--permute auto"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kt_output r =
            kt_command(NULL, kt_krylov_bin(), NULL,
                       "bench spmm --gen poisson2d:8 %s " FAST, bad[i]);
        ck_assert_msg(r.rc == 2, "%s: rc %d", bad[i], r.rc);
        kt_output_free(&r);
    }
    kt_output r = kt_command(NULL, kt_krylov_bin(), NULL, "bench spmm --help");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "lpt-warp"));
    kt_output_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench_spmm");
    TCase *tc = tcase_create("bench_spmm");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, rows_and_summary);
    tcase_add_test(tc, usage_errors);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
