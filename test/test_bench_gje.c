/* krylov bench gje end to end on the CPU ($KRYLOV_BIN, else build/krylov):
 * small dense batches and small generated matrices give one row each in
 * the Markdown and the JSON, with numbers that agree with their
 * definitions (GFLOP/s = 2 k^3 blocks / median, the memory floor, the
 * apply bytes), checks that pass, cuBLAS marked "n/a: CPU"; bad options
 * are usage errors naming the option; --help lists every option and its
 * stated defaults are what a run without options uses. */
#include "testjson.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FAST "--device cpu --threads 1 --reps 2 --warmup 1 --copy-mb 4"

static kt_output krylov(const char *dir, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kt_output r = kt_vcommand("", kt_krylov_bin(), dir, fmt, ap);
    va_end(ap);
    return r;
}

static char *slurp_in(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return kt_slurp(path);
}

static void assert_close(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-12 * fabs(want), "%s: %.17g vs %.17g",
                  what, got, want);
}

/* ------------------------------------------------------------ dense */

/* One dense batch of `blocks` blocks, every size k (lo == hi) or mixed. */
static void check_batch(const char *o, const char *e, int lo, int hi,
                        int blocks, double copy_bps)
{
    char s[64];
    ck_assert_int_eq((int)kt_json_num(o, e, "min_size"), lo);
    ck_assert_int_eq((int)kt_json_num(o, e, "max_size"), hi);
    ck_assert_int_eq((int)kt_json_num(o, e, "blocks"), blocks);
    double med = kt_json_num(o, e, "median_s");
    double flops = kt_json_num(o, e, "flops");
    double bytes = kt_json_num(o, e, "floor_bytes");
    ck_assert(isfinite(med) && med > 0);
    if (lo == hi) {
        assert_close(flops, 2.0 * lo * lo * lo * blocks, "flops");
        assert_close(bytes, 16.0 * lo * lo * blocks, "floor bytes");
    }
    assert_close(kt_json_num(o, e, "gflops"), flops / med * 1e-9, "GFLOP/s");
    assert_close(kt_json_num(o, e, "floor_s"), bytes / copy_bps, "floor");
    assert_close(kt_json_num(o, e, "over_floor"), med / (bytes / copy_bps),
                 "over floor");
    ck_assert_int_eq((int)kt_json_num(o, e, "singular_blocks"), 0);
    ck_assert_double_le(kt_json_num(o, e, "max_residual"), 1e-12);
    ck_assert(isnan(kt_json_num(o, e, "getrf_getri_s")));
    ck_assert(isnan(kt_json_num(o, e, "matinv_s")));
    kt_json_str(o, e, "cublas_note", s, sizeof s);
    ck_assert_str_eq(s, "n/a: CPU");
    kt_json_str(o, e, "status", s, sizeof s);
    ck_assert_str_eq(s, "ok");
}

/* ---------------------------------------------------------- matrices */

static void check_matrix(const char *o, const char *e, const char *name,
                         double copy_bps)
{
    char s[256];
    kt_json_str(o, e, "matrix", s, sizeof s);
    ck_assert_str_eq(s, name);
    kt_json_str(o, e, "status", s, sizeof s);
    ck_assert_msg(!strcmp(s, "ok"), "%s: status %s", name, s);
    double n = kt_json_num(o, e, "n"), nb = kt_json_num(o, e, "blocks");
    double k = kt_json_num(o, e, "mean_block_size");
    ck_assert(nb >= 1 && nb <= n);
    assert_close(k, n / nb, "mean block size");
    ck_assert_double_eq(kt_json_num(o, e, "precond_blocks"), nb);
    ck_assert_double_eq(kt_json_num(o, e, "precond_singular_blocks"),
                        kt_json_num(o, e, "singular_blocks"));
    static const char *const positive[] = {
        "blocking_s", "pattern_flags_s", "extract_invert_s",
        "apply_s",    "spmv_csr_s",      "precond_setup_s"};
    for (size_t i = 0; i < sizeof positive / sizeof *positive; i++) {
        double v = kt_json_num(o, e, positive[i]);
        ck_assert_msg(isfinite(v) && v > 0, "%s: %s = %g", name, positive[i],
                      v);
    }
    /* 8 B per inverse entry: between n k_min^2 = n and n k_max */
    double bytes = kt_json_num(o, e, "apply_bytes");
    double fixed = 16 * n + 12 * (nb + 1);
    double kmax = kt_json_num(o, e, "max_block_size");
    ck_assert(bytes >= fixed + 8 * n && bytes <= fixed + 8 * n * kmax);
    double gbps = bytes / kt_json_num(o, e, "apply_s") * 1e-9;
    assert_close(kt_json_num(o, e, "apply_gbytes_per_s"), gbps, "GB/s");
    assert_close(kt_json_num(o, e, "apply_percent_of_copy"),
                 100 * gbps * 1e9 / copy_bps, "% copy");
    ck_assert_int_eq((int)kt_json_num(o, e, "pattern_flag_mismatches"), 0);
    ck_assert_double_le(kt_json_num(o, e, "max_residual"), 1e-12);
    ck_assert_double_le(kt_json_num(o, e, "apply_max_rel_diff"), 1e-12);
}

START_TEST(cpu_run_writes_markdown_and_json)
{
    const char *d = kt_tmpdir();
    kt_output r = krylov(d,
                         "bench gje --sizes 1,5,17 --mixes 2-9 --batch 300 "
                         "--check 40 --gen poisson2d:12 --gen elasticity3d:3 "
                         "" FAST " --json %s/g.json --markdown %s/g.md",
                         d, d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char *json = slurp_in(d, "g.json"), *md = slurp_in(d, "g.md");
    ck_assert(json && md);
    ck_assert_str_eq(md, r.out);
    const char *end = json + strlen(json);
    const char *keys[] = {"command", "device",  "date_utc", "settings",
                          "models",  "batches", "matrices", "copy_bytes_per_s"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        ck_assert_msg(kt_json_member(json, end, keys[i]), "no %s", keys[i]);
    double bps = kt_json_num(json, end, "copy_bytes_per_s");
    const char *o[8], *e[8];
    ck_assert_int_eq(kt_json_objects(json, "batches", o, e, 8), 4);
    check_batch(o[0], e[0], 1, 1, 300, bps);
    check_batch(o[1], e[1], 5, 5, 300, bps);
    check_batch(o[2], e[2], 17, 17, 120, bps); /* 2N/5 above 16 rows */
    check_batch(o[3], e[3], 2, 9, 300, bps);
    ck_assert_int_eq(kt_json_objects(json, "matrices", o, e, 8), 2);
    check_matrix(o[0], e[0], "poisson2d:12", bps);
    check_matrix(o[1], e[1], "elasticity3d:3", bps);
    const char *lines[] = {"| k = 1 | 300 |",        "| k = 17 | 120 |",
                           "| mix 2..9 | 300 |",     "n/a: CPU |",
                           "| poisson2d:12 | 144 |", "| elasticity3d:3 | 81 |"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        ck_assert_msg(strstr(md, lines[i]), "no '%s' in\n%s", lines[i], md);
    ck_assert(kt_no_tmp_files(d));
    free(json);
    free(md);
    kt_output_free(&r);
}
END_TEST

/* A non-square matrix is a row, not an error. */
START_TEST(non_square_matrix_refused_in_its_row)
{
    const char *d = kt_tmpdir();
    kt_write_file(d, "rect.mtx",
                  "%%MatrixMarket matrix coordinate real general\n"
                  "2 3 2\n1 1 1.0\n2 3 2.0\n");
    kt_output r = krylov(d, "bench gje --part matrices %s/rect.mtx " FAST, d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "refused: not square"));
    kt_output_free(&r);
}
END_TEST

/* ------------------------------------------------------------ usage */

static void usage_error(const char *dir, const char *args, const char *named)
{
    kt_output r =
        krylov(dir, "bench gje %s --device cpu --json %s/u.json", args, dir);
    ck_assert_msg(r.rc == 2, "'%s': exit %d", args, r.rc);
    ck_assert_msg(strstr(r.err, named), "'%s': '%s' not named in: %s", args,
                  named, r.err);
    ck_assert_str_eq(r.out, "");
    char *json = slurp_in(dir, "u.json");
    ck_assert_ptr_null(json);
    kt_output_free(&r);
}

START_TEST(bad_options_are_usage_errors)
{
    const char *d = kt_tmpdir();
    usage_error(d, "--sizes 0", "--sizes");
    usage_error(d, "--sizes 33", "--sizes");
    usage_error(d, "--sizes 4,2-5", "--sizes");
    usage_error(d, "--sizes 4x", "--sizes");
    usage_error(d, "--mixes 5-5", "--mixes");
    usage_error(d, "--mixes 1-40", "--mixes");
    usage_error(d, "--batch 0", "--batch");
    usage_error(d, "--batch 200000000", "--batch");
    usage_error(d, "--part nosuch", "--part");
    usage_error(d, "--reps 0", "--reps");
    usage_error(d, "--warmup -1", "--warmup");
    usage_error(d, "--check 0", "--check");
    usage_error(d, "--seed x", "--seed");
    usage_error(d, "--block-size 33", "--block-size");
    usage_error(d, "--nosuch", "--nosuch");
    usage_error(d, "--part dense m.mtx", "--part dense");
    usage_error(d, "--part matrices --gen nosuch:3", "nosuch");
    kt_output r = krylov(d, "bench nosuch");
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "gje"));
    kt_output_free(&r);
}
END_TEST

/* --help names every option the command takes, and the defaults it states
 * are the ones a run uses. */
START_TEST(help_is_complete_and_true)
{
    static const char *const opts[] = {
        "--part",       "--sizes",    "--mixes",   "--batch",
        "--reps",       "--warmup",   "--check",   "--seed",
        "--block-size", "--gen",      "--device",  "--threads",
        "--json",       "--markdown", "--copy-mb", "-h, --help"};
    const char *d = kt_tmpdir();
    kt_output r = krylov(d, "bench gje --help");
    ck_assert_int_eq(r.rc, 0);
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        char line[64];
        snprintf(line, sizeof line, "\n  %s", opts[i]);
        ck_assert_msg(strstr(r.out, line), "%s not in --help", opts[i]);
    }
    const char *stated[] = {"default 1,2,3,4,8,12,16,24,32",
                            "default 1-32,1-8,17-32", "default 500000",
                            "elasticity3d:60", "2N/5"};
    for (size_t i = 0; i < sizeof stated / sizeof *stated; i++)
        ck_assert_msg(strstr(r.out, stated[i]), "'%s' not in --help",
                      stated[i]);
    kt_output_free(&r);
}
END_TEST

START_TEST(default_sizes_and_mixes_as_stated)
{
    static const int lo[] = {1, 2, 3, 4, 8, 12, 16, 24, 32, 1, 1, 17};
    static const int hi[] = {1, 2, 3, 4, 8, 12, 16, 24, 32, 32, 8, 32};
    const char *d = kt_tmpdir();
    kt_output r = krylov(d,
                         "bench gje --part dense --batch 5 --check 2 " FAST
                         " --json %s/g.json",
                         d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char *json = slurp_in(d, "g.json");
    const char *o[16], *e[16];
    ck_assert_int_eq(kt_json_objects(json, "batches", o, e, 16), 12);
    for (int i = 0; i < 12; i++) {
        ck_assert_int_eq((int)kt_json_num(o[i], e[i], "min_size"), lo[i]);
        ck_assert_int_eq((int)kt_json_num(o[i], e[i], "max_size"), hi[i]);
        ck_assert_int_eq((int)kt_json_num(o[i], e[i], "blocks"),
                         hi[i] > 16 ? 2 : 5);
    }
    free(json);
    kt_output_free(&r);
}
END_TEST

/* Every option accepted with a value, and echoed in the settings. */
START_TEST(every_option_runs)
{
    const char *d = kt_tmpdir();
    kt_output r = krylov(d,
                         "bench gje --part dense --sizes all --mixes none "
                         "--batch 3 --reps 1 --warmup 0 --check 2 --seed 7 "
                         "--block-size 8 --device cpu --threads 1 --copy-mb 1 "
                         "--json %s/g.json --markdown %s/g.md",
                         d, d);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char *json = slurp_in(d, "g.json");
    const char *s = strstr(json, "\"settings\": {"), *end = json + strlen(json);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq((int)kt_json_num(s, end, "seed"), 7);
    ck_assert_int_eq((int)kt_json_num(s, end, "block_size"), 8);
    ck_assert_int_eq((int)kt_json_num(s, end, "check"), 2);
    ck_assert_int_eq((int)kt_json_num(s, end, "threads"), 1);
    ck_assert_int_eq((int)kt_json_num(s, end, "copy_bytes"), 1 << 20);
    const char *o[40], *e[40];
    ck_assert_int_eq(kt_json_objects(json, "batches", o, e, 40), 32);
    ck_assert_int_eq(kt_json_objects(json, "matrices", o, e, 40), 0);
    free(json);
    kt_output_free(&r);
}
END_TEST

/* The one file the script wrote into dir/res. */
static char *result_file(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/res", dir);
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    char *text = NULL;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "bjacobi-vs-jacobi-cpu-", 22)) continue;
        ck_assert_ptr_null(text);
        snprintf(path, sizeof path, "%s/res/%s", dir, e->d_name);
        text = kt_slurp(path);
    }
    closedir(d);
    ck_assert_ptr_nonnull(text);
    return text;
}

/* On the CPU every row's floor and setup / floor (columns 12 and 13: from
 * the row's 12th bar on) are "-", and the summary says there is no floor. */
static void check_no_floor_on_cpu(const char *md)
{
    int rows = 0;
    for (const char *p = md; (p = strstr(p, "\n| ")); p++) {
        if (strncmp(p, "\n| swap.mtx", 11) && strncmp(p, "\n| diag.mtx", 11))
            continue;
        const char *col = p + 1;
        for (int k = 0; k < 11; k++)
            col = strchr(col + 1, '|');
        ck_assert_msg(!strncmp(col, "| - | - |", 9), "%.60s", col);
        rows++;
    }
    ck_assert_int_eq(rows, 6);
    ck_assert_ptr_nonnull(strstr(md, "; no setup floor in the JSON (none on "
                                     "the CPU, which launches nothing)."));
}

/* bench/bjacobi_table.sh on two tiny matrices: one Jacobi refuses (a zero
 * diagonal, but invertible 2 x 2 blocks), one both solve. */
START_TEST(bjacobi_table_script)
{
    if (!kt_file_exists("bench/bjacobi_table.sh")) {
        kt_skip("bjacobi_table_script", "not run from the repository root");
        return;
    }
    const char *d = kt_tmpdir();
    char mats[512], build[512];
    snprintf(mats, sizeof mats, "%s/mats", d);
    ck_assert_int_eq(mkdir(mats, 0755), 0);
    kt_write_file(mats, "swap.mtx",
                  "%%MatrixMarket matrix coordinate real general\n"
                  "4 4 4\n1 2 1.0\n2 1 1.0\n3 4 2.0\n4 3 2.0\n");
    kt_write_file(mats, "diag.mtx",
                  "%%MatrixMarket matrix coordinate real general\n"
                  "3 3 4\n1 1 4.0\n2 2 5.0\n3 3 6.0\n1 3 1.0\n");
    snprintf(build, sizeof build, "%s", kt_krylov_bin());
    *strrchr(build, '/') = '\0';
    char env[1200];
    snprintf(env, sizeof env,
             "KRYLOV_MATRICES='%s' RESULTS='%s/res' THREADS=1 COPY_MB=1 "
             "SHORT_REPS=2 ",
             mats, d);
    kt_output r =
        kt_command(env, "sh", d, "bench/bjacobi_table.sh '%s' cpu", build);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    char *md = result_file(d);
    ck_assert_str_eq(md, r.out);
    ck_assert_ptr_nonnull(strstr(md, "| diag.mtx | 3 | idr | "));
    ck_assert_ptr_nonnull(
        strstr(md, "| jacobi: refused: zero diagonal |\n| swap.mtx | 4 | "
                   "gmres | - | - | no | 1 | "));
    ck_assert_ptr_nonnull(strstr(
        md, "| all (matrix, method) pairs | 6 | 3 | 6 | 3 | 0 | 3 | 0 |"));
    ck_assert_ptr_nonnull(strstr(md, "jacobi 1, bjacobi 2, of 2."));
    ck_assert_ptr_nonnull(strstr(md, "| setup share | floor | setup / floor "
                                     "| upload share |"));
    check_no_floor_on_cpu(md);
    free(md);
    kt_output_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench gje");
    TCase *tc = tcase_create("bench gje");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, cpu_run_writes_markdown_and_json);
    tcase_add_test(tc, non_square_matrix_refused_in_its_row);
    tcase_add_test(tc, bad_options_are_usage_errors);
    tcase_add_test(tc, help_is_complete_and_true);
    tcase_add_test(tc, default_sizes_and_mixes_as_stated);
    tcase_add_test(tc, every_option_runs);
    tcase_add_test(tc, bjacobi_table_script);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
