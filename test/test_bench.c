/* krylov bench end to end: runs the built binary ($KRYLOV_BIN, else
 * build/krylov) on small generated problems on the CPU and checks the
 * tables and the JSON: one row per format per matrix, positive finite
 * numbers that agree with their definitions (GFLOP/s = 2 nnz / median, the
 * byte models), csr over itself = 1, usage errors, and that bench solve
 * takes as many iterations as krylov solve with the same options. */
#include "testjson.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

typedef kt_output run_out;

/* Runs "krylov ARGS" with stdout and stderr captured in files of dir. */
static run_out krylov(const char *dir, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    run_out r = kt_vcommand("", kt_krylov_bin(), dir, fmt, ap);
    va_end(ap);
    return r;
}

static int rows_of(const char *json, const char **start, const char **stop,
                   int max)
{
    return kt_json_objects(json, "rows", start, stop, max);
}

/* The file `name` in the scratch folder d, read whole (NULL if absent). */
static char *slurp_in(const char *d, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", d, name);
    return kt_slurp(path);
}

static int nformats(void)
{
    int n = 0;
    while (kr_format_names()[n])
        n++;
    return n;
}

#define FAST "--device cpu --threads 1 --reps 3 --copy-mb 4"

/* ------------------------------------------------------------- spmv */

static void check_ok_row(const char *o, const char *e, const char *format)
{
    static const char *const positive[] = {
        "median_s",        "min_s",   "gflops",       "gbytes_per_s",
        "percent_of_copy", "build_s", "device_bytes", "padding_ratio",
        "speedup_vs_csr",  "nrows"};
    for (size_t i = 0; i < sizeof positive / sizeof *positive; i++) {
        double v = kt_json_num(o, e, positive[i]);
        ck_assert_msg(isfinite(v) && v > 0, "%s: %s = %g", format, positive[i],
                      v);
    }
    double nnz = kt_json_num(o, e, "nnz"), med = kt_json_num(o, e, "median_s");
    double nr = kt_json_num(o, e, "nrows"), nc = kt_json_num(o, e, "ncols");
    double bytes = 12 * nnz + 4 * (nr + 1) + 8 * nc + 8 * nr;
    ck_assert_double_le(kt_json_num(o, e, "min_s"), med);
    ck_assert_double_eq_tol(kt_json_num(o, e, "gflops"), 2 * nnz / med * 1e-9,
                            1e-12 * kt_json_num(o, e, "gflops"));
    ck_assert_double_eq(kt_json_num(o, e, "min_bytes"), bytes);
    ck_assert_double_eq_tol(kt_json_num(o, e, "gbytes_per_s"),
                            bytes / med * 1e-9, 1e-12 * bytes / med * 1e-9);
    ck_assert_double_le(kt_json_num(o, e, "max_rel_diff_from_reference"),
                        1e-12);
    if (!strcmp(format, "csr")) {
        ck_assert_double_eq(kt_json_num(o, e, "speedup_vs_csr"), 1.0);
        ck_assert_double_eq(kt_json_num(o, e, "padding_ratio"), 1.0);
    }
}

/* Exactly one table line "| matrix | rows | nnz | format |". */
static void check_md_line(const char *md, const char *matrix,
                          const char *format)
{
    char head[256];
    int count = 0;
    snprintf(head, sizeof head, "\n| %s | ", matrix);
    for (const char *p = strstr(md, head); p; p = strstr(p + 1, head)) {
        const char *cell = p + 1;
        for (int bars = 0; bars < 4; cell++)
            bars += *cell == '|';
        char want[80];
        snprintf(want, sizeof want, " %s |", format);
        count += !strncmp(cell, want, strlen(want));
    }
    ck_assert_msg(count == 1, "%d table lines for %s / %s", count, matrix,
                  format);
}

START_TEST(spmv_one_row_per_format_and_matrix)
{
    const char *d = kt_tmpdir();
    run_out r = krylov(d,
                       "bench spmv --gen poisson2d:40 --gen powerlaw:4000 " FAST
                       " --warmup 2 --json %s/b.json --markdown %s/b.md",
                       d, d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char format[64], matrix[64], status[16], note[512];
    char *json = slurp_in(d, "b.json");
    char *md = slurp_in(d, "b.md");
    ck_assert(json && md);
    ck_assert_str_eq(md, r.out); /* the file is the table printed */
    const char *keys[] = {"command",          "device",     "date_utc",
                          "settings",         "rows",       "summary",
                          "copy_bytes_per_s", "bytes_model"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        ck_assert_msg(kt_json_member(json, json + strlen(json), keys[i]),
                      "no %s", keys[i]);
    const char *o[64], *e[64];
    int n = rows_of(json, o, e, 64);
    ck_assert_int_eq(n, 2 * nformats());
    for (int i = 0; i < n; i++) {
        kt_json_str(o[i], e[i], "format", format, sizeof format);
        kt_json_str(o[i], e[i], "matrix", matrix, sizeof matrix);
        kt_json_str(o[i], e[i], "status", status, sizeof status);
        kt_json_str(o[i], e[i], "note", note, sizeof note);
        ck_assert_str_eq(format, kr_format_names()[i % nformats()]);
        check_md_line(md, matrix, format);
        if (!strcmp(status, "ok"))
            check_ok_row(o[i], e[i], format);
        else
            ck_assert_msg(!strncmp(note, "refused: ", 9), "%s", note);
    }
    ck_assert(kt_no_tmp_files(d));
    free(json);
    free(md);
    kt_output_free(&r);
}
END_TEST

START_TEST(spmv_small_marked_and_summarised)
{
    const char *d = kt_tmpdir();
    run_out r = krylov(d,
                       "bench spmv --gen poisson2d:20 --formats csr " FAST
                       " --json %s/b.json",
                       d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char *json = slurp_in(d, "b.json");
    const char *o[4], *e[4];
    ck_assert_int_eq(rows_of(json, o, e, 4), 1);
    ck_assert(strstr(o[0], "\"small\": true") < e[0]);
    const char *s = strstr(json, "\"summary\": [");
    ck_assert(s != NULL);
    const char *end = json + strlen(json);
    ck_assert_double_eq(kt_json_num(s, end, "geomean_speedup_small"), 1.0);
    ck_assert_int_eq((int)kt_json_num(s, end, "matrices_small"), 1);
    ck_assert_int_eq((int)kt_json_num(s, end, "matrices_large"), 0);
    ck_assert(isnan(kt_json_num(s, end, "geomean_speedup_large")));
    ck_assert_ptr_nonnull(strstr(r.out, "| small |"));
    free(json);
    kt_output_free(&r);
}
END_TEST

/* The rows of the two matrices, in order: each one's best speedup over csr
 * among ellr, pellr, vsr, hyb (the best krylov format) into best[], and
 * auto's row into autorow[]. Checks each auto row's choice. */
static int best_per_matrix(const char *json, double *best, double *auto_sp)
{
    const char *o[64], *e[64];
    int n = rows_of(json, o, e, 64), m = -1;
    char matrix[64], last[64] = "", format[64], chosen[64], why[512];
    for (int i = 0; i < n; i++) {
        kt_json_str(o[i], e[i], "matrix", matrix, sizeof matrix);
        kt_json_str(o[i], e[i], "format", format, sizeof format);
        if (strcmp(matrix, last)) m++, best[m] = NAN;
        snprintf(last, sizeof last, "%s", matrix);
        if (!kt_json_member(o[i], e[i], "speedup_vs_csr"))
            continue; /* refused */
        double sp = kt_json_num(o[i], e[i], "speedup_vs_csr");
        kt_json_str(o[i], e[i], "format_chosen", chosen, sizeof chosen);
        kt_json_str(o[i], e[i], "format_reason", why, sizeof why);
        if (!strcmp(format, "auto")) {
            auto_sp[m] = sp;
            ck_assert_str_eq(chosen, "csr"); /* on the CPU */
            ck_assert(!strncmp(why, "auto: csr (", 11));
        } else if (strcmp(format, "csr") && strncmp(format, "auto", 4)) {
            ck_assert_str_eq(chosen, format);
            ck_assert_str_eq(why, "");
            if (isnan(best[m]) || sp > best[m]) best[m] = sp;
        }
    }
    return m + 1;
}

/* The end of the object or array that follows "key": in json. */
static const char *section(const char *json, const char *key, const char **end)
{
    const char *p = kt_json_member(json, json + strlen(json), key);
    ck_assert_msg(p != NULL, "no %s", key);
    *end = kt_json_value(p);
    ck_assert(*end != NULL);
    return p;
}

START_TEST(spmv_auto_against_the_best)
{
    const char *d = kt_tmpdir();
    run_out r =
        krylov(d,
               "bench spmv --gen poisson3d:26 --gen powerlaw:20000 " FAST
               " --warmup 1 --json %s/b.json",
               d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char *json = slurp_in(d, "b.json");
    double best[2], auto_sp[2];
    ck_assert_int_eq(best_per_matrix(json, best, auto_sp), 2);
    const char *end, *b = section(json, "best_krylov_format", &end);
    ck_assert_int_eq((int)kt_json_num(b, end, "matrices_large"), 2);
    ck_assert_double_eq_tol(kt_json_num(b, end, "geomean_speedup_large"),
                            sqrt(best[0] * best[1]), 1e-12);
    const char *a = section(json, "automatic", &end);
    ck_assert_ptr_nonnull(strstr(a, "\"format\": \"auto\""));
    ck_assert_ptr_nonnull(strstr(a, "\"format\": \"auto-probe\""));
    int within = 0;
    for (int m = 0; m < 2; m++) /* the best counts csr too: speedup 1 */
        within += auto_sp[m] * 1.1 >= fmax(best[m], 1.0);
    ck_assert_int_eq((int)kt_json_num(a, end, "within_10pct_of_best_large"),
                     within);
    ck_assert_int_eq((int)kt_json_num(a, end, "matrices_large"), 2);
    ck_assert_ptr_nonnull(strstr(r.out, "## Automatic choice against the best "
                                        "format per matrix"));
    ck_assert_ptr_nonnull(strstr(r.out, "| auto: within 10% of the best | "));
    ck_assert_ptr_nonnull(strstr(r.out, "| auto: csr (CPU backend"));
    free(json);
    kt_output_free(&r);
}
END_TEST

START_TEST(spmv_unknown_format_exit_2)
{
    const char *d = kt_tmpdir();
    run_out r = krylov(d,
                       "bench spmv --gen poisson2d:10 --formats csr,nosuch "
                       "--json %s/b.json",
                       d);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "nosuch"));
    for (const char *const *f = kr_format_names(); *f; f++)
        ck_assert_msg(strstr(r.err, *f), "'%s' not listed: %s", *f, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_null(slurp_in(d, "b.json"));
    kt_output_free(&r);
    r = krylov(d, "bench spmv --gen poisson2d:10 --formats csr,csr");
    ck_assert_int_eq(r.rc, 2);
    kt_output_free(&r);
    r = krylov(d, "bench nosuch");
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "spmv, solve"));
    kt_output_free(&r);
}
END_TEST

START_TEST(help_states_models_and_defaults)
{
    const char *d = kt_tmpdir();
    run_out r = krylov(d, "bench spmv --help");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "poisson3d:160"));
    ck_assert_ptr_nonnull(strstr(r.out, "12 B per nonzero"));
    kt_output_free(&r);
    r = krylov(d, "bench solve --help");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "--restart"));
    kt_output_free(&r);
    r = krylov(d, "--help");
    ck_assert_ptr_nonnull(strstr(r.out, "bench"));
    kt_output_free(&r);
}
END_TEST

START_TEST(unwritable_output_exit_3)
{
    const char *d = kt_tmpdir();
    run_out r = krylov(d,
                       "bench spmv --gen poisson2d:10 " FAST
                       " --json %s/no/such/dir/b.json",
                       d);
    ck_assert_int_eq(r.rc, 3);
    ck_assert(kt_no_tmp_files(d));
    kt_output_free(&r);
}
END_TEST

/* ------------------------------------------------------------ solve */

/* bench solve's row for one method against krylov solve's iterations. */
static void solve_matches(const char *d, const char *opts)
{
    run_out r = krylov(d, "solve --gen poisson2d:30 %s --json", opts);
    ck_assert_msg(r.rc <= 1, "krylov solve %s: exit %d", opts, r.rc);
    const char *end = r.out + strlen(r.out);
    int its = (int)kt_json_num(r.out, end, "iterations");
    kt_output_free(&r);
    r = krylov(d, "bench solve --gen poisson2d:30 %s " FAST " --json %s/s.json",
               opts, d);
    ck_assert_msg(r.rc == 0, "bench solve %s: exit %d: %s", opts, r.rc, r.err);
    char *json = slurp_in(d, "s.json");
    const char *o[2], *e[2];
    ck_assert_int_eq(rows_of(json, o, e, 2), 1);
    ck_assert_int_eq((int)kt_json_num(o[0], e[0], "iterations"), its);
    const char *keys[] = {"setup_s",
                          "solve_s",
                          "seconds_per_iteration",
                          "bytes_per_iteration",
                          "floor_seconds_per_iteration",
                          "measured_over_floor"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        double v = kt_json_num(o[0], e[0], keys[i]);
        ck_assert_msg(isfinite(v) && v > 0, "%s: %s = %g", opts, keys[i], v);
    }
    double ratio = kt_json_num(o[0], e[0], "seconds_per_iteration") /
                   kt_json_num(o[0], e[0], "floor_seconds_per_iteration");
    ck_assert_double_eq_tol(kt_json_num(o[0], e[0], "measured_over_floor"),
                            ratio, 1e-12 * ratio);
    free(json);
    kt_output_free(&r);
}

START_TEST(solve_iterations_match_krylov_solve)
{
    const char *d = kt_tmpdir();
    solve_matches(d, "--method cg");
    solve_matches(d, "--method bicgstab --precond none");
    solve_matches(d, "--method gmres --restart 10 --rtol 1e-6");
    solve_matches(d, "--method idr --s 2 --maxit 40");
}
END_TEST

/* --nrhs: the multi solve's byte floor per column-iteration is the single
 * solve's less (k-1)/k of A's bytes (12 B per nonzero and the row
 * pointers, once per SpMV), by the model the row states. */
START_TEST(solve_nrhs_floors_follow_the_model)
{
    const char *d = kt_tmpdir();
    run_out r = krylov(d,
                       "bench solve --gen poisson2d:30 --method bicgstab "
                       "--nrhs 4 " FAST " --json %s/s.json",
                       d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char *json = slurp_in(d, "s.json");
    const char *o[2], *e[2];
    ck_assert_int_eq(rows_of(json, o, e, 2), 1);
    double n = kt_json_num(o[0], e[0], "n"),
           nnz = kt_json_num(o[0], e[0], "nnz");
    double spmvs = kt_json_num(o[0], e[0], "spmvs_per_iteration");
    double single = kt_json_num(o[0], e[0], "floor_seconds_per_iteration");
    double s1 = kt_json_num(o[0], e[0], "single_floor_s_per_column_iteration");
    double sk = kt_json_num(o[0], e[0], "multi_floor_s_per_column_iteration");
    ck_assert_double_eq_tol(s1, single, 1e-12 * single);
    double a_share = spmvs * (12 * nnz + 4 * (n + 1)) /
                     kt_json_num(o[0], e[0], "bytes_per_iteration");
    ck_assert_double_eq_tol(sk, single * (1 - a_share * 3.0 / 4.0),
                            1e-9 * single);
    ck_assert_double_lt(sk, s1);
    free(json);
    kt_output_free(&r);
}
END_TEST

/* bjacobi's rows say what of its build was the upload of A (nothing on
 * the CPU); the other preconditioners' rows have no such key. */
START_TEST(solve_bjacobi_reports_upload)
{
    const char *d = kt_tmpdir();
    const char *pcs[] = {"bjacobi", "jacobi"};
    for (int k = 0; k < 2; k++) {
        run_out r = krylov(d,
                           "bench solve --gen poisson2d:30 --precond %s " FAST
                           " --json %s/s.json",
                           pcs[k], d);
        ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
        char *json = slurp_in(d, "s.json");
        const char *o[2], *e[2];
        ck_assert_int_eq(rows_of(json, o, e, 2), 1);
        const char *up = kt_json_member(o[0], e[0], "precond_upload_s");
        if (k == 0) {
            ck_assert_ptr_nonnull(up);
            ck_assert_double_eq(kt_json_num(o[0], e[0], "precond_upload_s"),
                                0.0);
            ck_assert(kt_json_num(o[0], e[0], "precond_build_s") > 0.0);
        } else {
            ck_assert_ptr_null(up);
        }
        free(json);
        kt_output_free(&r);
    }
}
END_TEST

/* After 0 iterations there is no time per iteration: '-' in the table and
 * null in JSON, never "nan" (issue 16, item 13). */
START_TEST(solve_zero_iterations_no_nan)
{
    const char *d = kt_tmpdir();
    run_out r = krylov(
        d, "bench solve --gen poisson2d:5 --maxit 0 " FAST " --json %s/z.json",
        d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    ck_assert_msg(!strstr(r.out, "nan") && !strstr(r.out, "inf"), "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "| DIVERGED_ITS | "));
    char *json = slurp_in(d, "z.json");
    ck_assert_msg(!strstr(json, "nan"), "%s", json);
    ck_assert_ptr_nonnull(strstr(json, "\"seconds_per_iteration\": null"));
    free(json);
    kt_output_free(&r);
}
END_TEST

START_TEST(solve_cg_bytes_follow_the_model)
{
    const char *d = kt_tmpdir();
    run_out r = krylov(d,
                       "bench solve --gen poisson2d:30 --method cg " FAST
                       " --json %s/s.json",
                       d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char *json = slurp_in(d, "s.json");
    const char *o[2], *e[2], *end = json + strlen(json);
    ck_assert_int_eq(rows_of(json, o, e, 2), 1);
    double n = kt_json_num(o[0], e[0], "n"),
           nnz = kt_json_num(o[0], e[0], "nnz");
    double spmv = 12 * nnz + 4 * (n + 1) + 16 * n;
    /* cg + jacobi: 13 vector passes (Jacobi fused into the update), one
     * SpMV */
    ck_assert_double_eq(kt_json_num(o[0], e[0], "bytes_per_iteration"),
                        spmv + 8 * n * 13);
    double floor = kt_json_num(o[0], e[0], "bytes_per_iteration") /
                   kt_json_num(json, end, "copy_bytes_per_s");
    ck_assert_double_eq_tol(
        kt_json_num(o[0], e[0], "floor_seconds_per_iteration"), floor,
        1e-12 * floor);
    double t =
        kt_json_num(o[0], e[0], "setup_s") + kt_json_num(o[0], e[0], "solve_s");
    ck_assert_double_eq_tol(kt_json_num(o[0], e[0], "time_to_solution_s"), t,
                            1e-12 * t);
    free(json);
    kt_output_free(&r);
}
END_TEST

/* The setup floor (one launch + one download) of bench solve's run, a
 * top-level JSON key: null on the CPU, which launches nothing, and on a
 * GPU a positive time well under 0.1 s (a sanity bound, not a timing
 * target). The report's header line says which. */
static double setup_floor_of(const char *d, const char *device, char **md)
{
    run_out r = krylov(d,
                       "bench solve --gen poisson2d:10 --device %s --threads "
                       "1 --reps 1 --copy-mb 1 --json %s/f.json",
                       device, d);
    ck_assert_msg(r.rc == 0, "%s: exit %d: %s", device, r.rc, r.err);
    char *json = slurp_in(d, "f.json");
    const char *end = json + strlen(json);
    const char *key = kt_json_member(json, end, "setup_floor_s");
    ck_assert_ptr_nonnull(key);
    ck_assert(key < strstr(json, "\"rows\"")); /* once per run, not per row */
    double floor = kt_json_num(json, end, "setup_floor_s");
    free(json);
    *md = strdup(r.out);
    kt_output_free(&r);
    return floor;
}

START_TEST(solve_setup_floor_on_gpu_only)
{
    const char *d = kt_tmpdir();
    char *md;
    ck_assert(isnan(setup_floor_of(d, "cpu", &md)));
    ck_assert_ptr_nonnull(strstr(md, "\n- setup floor: none on the CPU"));
    free(md);
    kr_ctx *gpu = kt_gpu_or_skip("solve_setup_floor_on_gpu_only");
    if (!gpu) return;
    kr_ctx_destroy(gpu);
    double floor = setup_floor_of(d, "cuda", &md);
    ck_assert_msg(floor > 0 && floor < 0.1, "setup_floor_s = %g", floor);
    ck_assert_ptr_nonnull(strstr(md, " us, one kernel launch (a fill of one"));
    free(md);
}
END_TEST

START_TEST(solve_bad_matrices_are_rows_not_errors)
{
    const char *d = kt_tmpdir();
    /* 2 x 3, and a zero diagonal entry (jacobi cannot be built) */
    kt_write_file(d, "rect.mtx",
                  "%%MatrixMarket matrix coordinate real general\n"
                  "2 3 2\n1 1 1.0\n2 3 2.0\n");
    kt_write_file(d, "zdiag.mtx",
                  "%%MatrixMarket matrix coordinate real general\n"
                  "2 2 3\n1 1 1.0\n1 2 1.0\n2 1 1.0\n");
    run_out r = krylov(d, "bench solve %s/rect.mtx %s/zdiag.mtx " FAST, d, d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "not square"));
    ck_assert_ptr_nonnull(strstr(r.out, "failed: jacobi"));
    kt_output_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench");
    TCase *tc = tcase_create("bench");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, spmv_one_row_per_format_and_matrix);
    tcase_add_test(tc, spmv_small_marked_and_summarised);
    tcase_add_test(tc, spmv_auto_against_the_best);
    tcase_add_test(tc, spmv_unknown_format_exit_2);
    tcase_add_test(tc, help_states_models_and_defaults);
    tcase_add_test(tc, unwritable_output_exit_3);
    tcase_add_test(tc, solve_iterations_match_krylov_solve);
    tcase_add_test(tc, solve_nrhs_floors_follow_the_model);
    tcase_add_test(tc, solve_bjacobi_reports_upload);
    tcase_add_test(tc, solve_cg_bytes_follow_the_model);
    tcase_add_test(tc, solve_zero_iterations_no_nan);
    tcase_add_test(tc, solve_bad_matrices_are_rows_not_errors);
    tcase_add_test(tc, solve_setup_floor_on_gpu_only);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
