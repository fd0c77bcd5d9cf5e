/* The krylov command end to end: runs the built binary ($KRYLOV_BIN, else
 * build/krylov) with its output captured, and checks exit codes, the help,
 * the text and JSON reports against independently computed residuals, the
 * output and history files, and that bad input leaves no file behind. */
#include "testjson.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

typedef kt_output run_out;

/* Runs "krylov ARGS" (printf-style) with stdout and stderr in files of the
 * folder io_dir, which the caller keeps apart from the folder it checks. */
static run_out krylov(const char *io_dir, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    run_out r = kt_vcommand("", kt_krylov_bin(), io_dir, fmt, ap);
    va_end(ap);
    return r;
}

/* A fresh folder (kt_tmpdir's buffer is reused, so keep a copy); removed
 * with its files when the test process exits. */
static const char *scratch_dir(void)
{
    static char dirs[64][64];
    static int n;
    ck_assert(n < 64);
    snprintf(dirs[n], sizeof dirs[0], "%s", kt_tmpdir());
    return dirs[n++];
}
/* The number after "key" at the start of a line of the text report. */
static double report_num(const char *text, const char *key)
{
    size_t len = strlen(key);
    for (const char *p = text; p; p = strchr(p, '\n')) {
        if (*p == '\n') p++;
        if (strncmp(p, key, len) == 0) {
            char *end;
            double v = strtod(p + len, &end);
            ck_assert_msg(end != p + len, "no number after '%s'", key);
            return v;
        }
    }
    ck_abort_msg("the report has no line '%s':\n%s", key, text);
    return NAN;
}

/* Text occurs as a whole option name: not followed by [a-z0-9-]. */
static int mentions_option(const char *text, const char *opt)
{
    size_t len = strlen(opt);
    for (const char *p = strstr(text, opt); p; p = strstr(p + 1, opt)) {
        char c = p[len];
        int before_ok = p == text || p[-1] == ' ' || p[-1] == '\n' ||
                        p[-1] == '[' || p[-1] == ',';
        if (before_ok &&
            !(c == '-' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return 1;
    }
    return 0;
}

static int mentions_exit_codes(const char *text)
{
    for (int code = 0; code <= 5; code++) {
        char line[16];
        snprintf(line, sizeof line, "\n  %d  ", code);
        if (!strstr(text, line)) return 0;
    }
    return 1;
}

static void assert_all_names(const char *text, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        ck_assert_msg(strstr(text, names[i]), "'%s' missing from:\n%s",
                      names[i], text);
}

START_TEST(help_top_level)
{
    const char *dir = scratch_dir();
    run_out r = krylov(dir, "--help");
    ck_assert_int_eq(r.rc, 0);
    ck_assert(mentions_option(r.out, "solve") && mentions_option(r.out, "gen"));
    ck_assert_msg(mentions_exit_codes(r.out), "exit codes:\n%s", r.out);
    kt_output_free(&r);
    r = krylov(dir, "--version");
    ck_assert_int_eq(r.rc, 0);
    ck_assert(strstr(r.out, KR_VERSION_STRING));
    kt_output_free(&r);
    r = krylov(dir, "gen --help");
    ck_assert_int_eq(r.rc, 0);
    ck_assert(mentions_option(r.out, "-o") && mentions_exit_codes(r.out));
    ck_assert(strstr(r.out, kr_generator_help()));
    kt_output_free(&r);
}
END_TEST

/* --threads beyond the cores is capped with a note (1000 threads on 2
 * cores took 20 s for a 0.2 s solve), and OpenMP threads spin a bounded
 * time before sleeping unless the user chose a policy (issue 16, item 10:
 * libgomp's default spinning made a loaded 2-core machine 12x slower). */
START_TEST(threads_capped_and_spinning_bounded)
{
    const char *dir = scratch_dir();
    run_out r =
        krylov(dir, "solve --gen poisson2d:8 --device cpu --threads 1000");
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    const char *cap = strstr(r.err, "capped at the ");
    ck_assert_msg(cap, "no note:\n%s", r.err);
    int cores = atoi(cap + strlen("capped at the "));
    ck_assert_int_ge(cores, 1);
    char dev[64];
    snprintf(dev, sizeof dev, "cpu (%d thread", cores);
    ck_assert_msg(strstr(r.out, dev), "expected '%s' in:\n%s", dev, r.out);
    kt_output_free(&r);
    r = kt_command("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT ", kt_krylov_bin(),
                   dir, "--version");
    ck_assert(strstr(r.out, "OMP_WAIT_POLICY=(unset) GOMP_SPINCOUNT=1000"));
    kt_output_free(&r);
    r = kt_command("env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active ",
                   kt_krylov_bin(), dir, "--version");
    ck_assert(strstr(r.out, "OMP_WAIT_POLICY=active GOMP_SPINCOUNT=(unset)"));
    kt_output_free(&r);
}
END_TEST

/* A generated problem larger than the memory is refused with the bytes
 * needed and available and exit 4, not killed by the kernel (exit 137). */
START_TEST(too_big_for_memory_exit_4)
{
    const char *dir = scratch_dir();
    run_out r = kt_command("KRYLOV_MEMORY_LIMIT=1G ", kt_krylov_bin(), dir,
                           "solve --gen poisson3d:600 --device cpu");
    ck_assert_int_eq(r.rc, 4);
    ck_assert_msg(strstr(r.err, "needs 20.71 GB of memory, but only 1.07 GB "
                                "is available"),
                  "%s", r.err);
    kt_output_free(&r);
}
END_TEST

START_TEST(help_solve_tells_everything)
{
    static const char *const opts[] = {
        "-b",        "--x0",      "-o",
        "--gen",     "--method",  "--s",
        "--restart", "--precond", "--format",
        "--rtol",    "--atol",    "--dtol",
        "--maxit",   "--monitor", "--history",
        "--device",  "--json",    "--threads",
        "--help",    "--verbose", "--gap-restarts",
        NULL};
    run_out r = krylov(scratch_dir(), "solve --help");
    ck_assert_int_eq(r.rc, 0);
    for (int i = 0; opts[i]; i++)
        ck_assert_msg(mentions_option(r.out, opts[i]), "%s not in help:\n%s",
                      opts[i], r.out);
    ck_assert(mentions_option(r.out, "--breakdown-restarts"));
    ck_assert_msg(mentions_exit_codes(r.out), "exit codes:\n%s", r.out);
    assert_all_names(r.out, kr_method_names());
    assert_all_names(r.out, kr_precond_names());
    assert_all_names(r.out, kr_format_names());
    ck_assert(strstr(r.out, kr_generator_help()));
    ck_assert(strstr(r.out, "default idr") && strstr(r.out, "default 1e-08") &&
              strstr(r.out, "default 10000") && strstr(r.out, "example"));
    kt_output_free(&r);
}
END_TEST

START_TEST(solve_converges)
{
    run_out r = krylov(scratch_dir(), "solve --gen poisson2d:20");
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert(strstr(r.out, "CONVERGED_"));
    double rel = report_num(r.out, "true rel. residual:");
    ck_assert_msg(rel <= 1e-8 && rel > 0, "true residual %g", rel);
    ck_assert(report_num(r.out, "forward error (inf):") < 1e-5);
    ck_assert_int_eq((int)report_num(r.out, "rows (n):"), 400);
    ck_assert_int_eq((int)report_num(r.out, "nonzeros:"), 5 * 400 - 4 * 20);
    kt_output_free(&r);
}
END_TEST

/* Quotes and escapes pair up, braces and brackets balance, and the text is
 * exactly one object. */
static int json_balanced(const char *s)
{
    int depth = 0, in_str = 0, objects = 0;
    for (; *s; s++) {
        if (in_str) {
            if (*s == '\\' && s[1])
                s++;
            else if (*s == '"')
                in_str = 0;
            else if ((unsigned char)*s < 0x20)
                return 0;
            continue;
        }
        if (*s == '"')
            in_str = 1;
        else if (*s == '{' || *s == '[')
            objects += depth++ == 0;
        else if (*s == '}' || *s == ']') {
            if (--depth < 0) return 0;
        } else if (depth == 0 && *s != ' ' && *s != '\n')
            return 0;
    }
    return depth == 0 && !in_str && objects == 1;
}

/* The numeric value of "key": in the object, or NAN if absent or not a
 * number (null included). */
static double json_num(const char *json, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    if (!p) return NAN;
    char *end;
    double v = strtod(p + strlen(pat), &end);
    return end == p + strlen(pat) ? NAN : v;
}

START_TEST(json_matches_text)
{
    const char *dir = scratch_dir();
    run_out t = krylov(dir, "solve --gen poisson2d:20 --method bicgstab");
    ck_assert_int_eq(t.rc, 0);
    run_out j = krylov(dir, "solve --gen poisson2d:20 --method bicgstab "
                            "--json --monitor");
    ck_assert_int_eq(j.rc, 0);
    ck_assert_msg(json_balanced(j.out), "not one JSON object:\n%s", j.out);
    static const char *const keys[] = {"n",
                                       "nnz",
                                       "iterations",
                                       "threads",
                                       "row_length_mean",
                                       "recursive_relative_residual",
                                       "true_relative_residual",
                                       "forward_error_inf",
                                       "setup_seconds",
                                       "matrix_build_seconds",
                                       "precond_build_seconds",
                                       "solve_seconds",
                                       NULL};
    for (int i = 0; keys[i]; i++)
        ck_assert_msg(isfinite(json_num(j.out, keys[i])), "key %s:\n%s",
                      keys[i], j.out);
    ck_assert_int_eq((int)json_num(j.out, "iterations"),
                     (int)report_num(t.out, "iterations:"));
    ck_assert(strstr(j.out, "\"method\": \"bicgstab\""));
    ck_assert(strstr(j.err, "||r||/||b||")); /* the monitor moved to stderr */
    kt_output_free(&t);
    kt_output_free(&j);
}
END_TEST

/* The setup time splits into the matrix build and the preconditioner
 * build; block preconditioners report their blocks and bjacobi its
 * setup's stages, others do not. */
START_TEST(json_setup_parts_and_blocks)
{
    const char *dir = scratch_dir();
    run_out j = krylov(dir, "solve --gen elasticity3d:4 --precond bjacobi "
                            "--device cpu --json");
    ck_assert_int_eq(j.rc, 0);
    double setup = json_num(j.out, "setup_seconds");
    double parts = json_num(j.out, "matrix_build_seconds") +
                   json_num(j.out, "precond_build_seconds");
    ck_assert_double_eq_tol(setup, parts, 1e-12 + 1e-9 * setup);
    double nb = json_num(j.out, "precond_blocks"); /* n = 192, blocks <= 32 */
    ck_assert(nb >= 6 && nb <= 192);
    ck_assert_double_eq(json_num(j.out, "precond_singular_blocks"), 0.0);
    /* bjacobi's stages: nothing uploaded on the CPU, and within the build */
    double up = json_num(j.out, "precond_upload_seconds");
    double blocking = json_num(j.out, "precond_blocking_seconds");
    double inv = json_num(j.out, "precond_invert_seconds");
    double build = json_num(j.out, "precond_build_seconds");
    ck_assert_double_eq(up, 0.0);
    ck_assert(blocking > 0.0 && inv > 0.0);
    ck_assert_double_le(blocking + inv, build);
    kt_output_free(&j);
    j = krylov(dir, "solve --gen elasticity3d:4 --precond bjacobi "
                    "--device cpu");
    ck_assert_int_eq(j.rc, 0);
    ck_assert_ptr_nonnull(strstr(j.out, "    extract+invert:"));
    ck_assert_ptr_null(strstr(j.out, "upload of A:"));
    kt_output_free(&j);
    j = krylov(dir, "solve --gen elasticity3d:4 --precond jacobi --json");
    ck_assert_int_eq(j.rc, 0);
    ck_assert_ptr_null(strstr(j.out, "precond_blocks"));
    ck_assert_ptr_null(strstr(j.out, "precond_invert_seconds"));
    kt_output_free(&j);
}
END_TEST

/* The library's block condition numbers for elasticity3d:3 with 3 x 3
 * node blocks (27 blocks), as `--block-size 3` builds them. */
static void elasticity_conds(kr_block_cond *c, kr_block_cond_stats *st)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "elasticity3d:3", &A), KR_OK);
    kr_precond_options o;
    kr_precond_options_default(&o);
    o.block_size = 3;
    kr_precond *P;
    ck_assert_int_eq(kr_precond_create_opts(ctx, &A, "bjacobi", &o, &P), KR_OK);
    ck_assert_int_eq(kr_precond_block_cond(ctx, P, &A, c), KR_OK);
    ck_assert_int_eq(kr_block_cond_summarize(ctx, c, st), KR_OK);
    ck_assert_int_eq(c->nb, 27);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}

/* Lines of text that start with "  block " */
static int block_lines(const char *text)
{
    int n = 0;
    for (const char *p = strstr(text, "\n  block "); p;
         p = strstr(p + 1, "\n  block "))
        n++;
    return n;
}

/* Each block's line, in the words of bjacobi's singular-block error, with
 * the library's number (printed to 4 digits). */
static void check_block_lines(const char *text, const kr_block_cond *c)
{
    ck_assert_int_eq(block_lines(text), c->nb);
    for (int32_t b = 0; b < c->nb; b++) {
        int s = (int)c->starts[b], e = (int)c->starts[b + 1] - 1;
        char want[128];
        snprintf(want, sizeof want,
                 "\n  block %d (rows %d..%d, 1-based %d..%d): size %d, cond ",
                 (int)b, s, e, s + 1, e + 1, e - s + 1);
        const char *p = strstr(text, want);
        ck_assert_msg(p, "no line '%s' in:\n%s", want + 1, text);
        double v = strtod(p + strlen(want), NULL);
        ck_assert_double_eq_tol(v, c->cond[b], 5e-4 * c->cond[b]);
    }
}

START_TEST(verbose_block_conditions)
{
    const char *dir = scratch_dir();
    const char *args = "solve --gen elasticity3d:3 --precond bjacobi "
                       "--block-size 3 --device cpu --verbose";
    kr_block_cond c;
    kr_block_cond_stats st;
    elasticity_conds(&c, &st);
    run_out r = krylov(dir, "%s", args);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    check_block_lines(r.out, &c);
    ck_assert(strstr(r.out, "blocks:  27 (27 inverted, 0 replaced)"));
    ck_assert(strstr(r.out, "> 1e8:   0 of 27 inverted blocks"));
    ck_assert(strstr(r.out, "CONVERGED_")); /* the report follows */
    kt_output_free(&r);
    /* with --json: the lines on stderr, the summary in the object */
    r = krylov(dir, "%s --json", args);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    check_block_lines(r.err, &c);
    ck_assert_ptr_null(strstr(r.out, "block 0 ("));
    ck_assert_msg(json_balanced(r.out), "not one JSON object:\n%s", r.out);
    ck_assert_double_eq(json_num(r.out, "precond_blocks"), 27);
    const char *o =
        kt_json_member(r.out, r.out + strlen(r.out), "block_conditions");
    ck_assert_msg(o && *o == '{', "no block_conditions in:\n%s", r.out);
    const char *e = kt_json_value(o);
    ck_assert_ptr_nonnull(e);
    ck_assert_double_eq(kt_json_num(o, e, "blocks"), 27);
    ck_assert_double_eq(kt_json_num(o, e, "replaced"), 0);
    ck_assert_double_eq(kt_json_num(o, e, "min"), st.min);
    ck_assert_double_eq(kt_json_num(o, e, "median"), st.median);
    ck_assert_double_eq(kt_json_num(o, e, "max"), st.max);
    ck_assert_double_eq(kt_json_num(o, e, "max_block"), st.max_block);
    ck_assert_double_eq(kt_json_num(o, e, "over_1e8"), st.high);
    ck_assert_double_eq(kt_json_num(o, e, "over_1e12"), st.extreme);
    kt_output_free(&r);
    kr_block_cond_free(&c);
    /* without --verbose the JSON is as before */
    r = krylov(dir, "solve --gen elasticity3d:3 --precond bjacobi --json");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_null(strstr(r.out, "block_conditions"));
    kt_output_free(&r);
}
END_TEST

/* A singular block is marked replaced; a preconditioner without blocks
 * says so, and its JSON gains nothing. */
START_TEST(verbose_replaced_and_no_blocks)
{
    const char *dir = scratch_dir();
    /* 4 x 4, nonsingular; its first 2 x 2 block repeats a row */
    const char *a =
        kt_write_file(dir, "s.mtx",
                      "%%MatrixMarket matrix coordinate real "
                      "general\n4 4 10\n1 1 1\n1 2 1\n1 3 1\n2 1 1\n"
                      "2 2 1\n2 4 1\n3 1 1\n3 3 2\n4 2 1\n"
                      "4 4 2\n");
    run_out r = krylov(dir,
                       "solve %s --precond bjacobi --block-size 2 --method "
                       "gmres --device cpu --verbose --json",
                       a);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_msg(strstr(r.err, "\n  block 0 (rows 0..1, 1-based 1..2): size "
                                "2, replaced (singular: scalar Jacobi"),
                  "%s", r.err);
    ck_assert(strstr(r.err, "\n  block 1 (rows 2..3, 1-based 3..4): size 2, "
                            "cond 1.000e+00\n"));
    ck_assert_double_eq(json_num(r.out, "replaced"), 1);
    ck_assert_double_eq(json_num(r.out, "max_block"), 1);
    kt_output_free(&r);
    r = krylov(dir, "solve --gen poisson2d:8 --precond jacobi --verbose");
    ck_assert_int_eq(r.rc, 0);
    ck_assert(strstr(r.out, "preconditioner jacobi has no diagonal blocks"));
    ck_assert_int_eq(block_lines(r.out), 0);
    kt_output_free(&r);
    r = krylov(dir, "solve --gen poisson2d:8 --precond none --verbose --json");
    ck_assert_int_eq(r.rc, 0);
    ck_assert(strstr(r.err, "preconditioner none has no diagonal blocks"));
    ck_assert(json_balanced(r.out) && !strstr(r.out, "block_conditions"));
    kt_output_free(&r);
}
END_TEST

/* ||b - A x|| / ||b|| for the x in path, b = A*ones. */
static double residual_of_file(const kr_csr *A, const char *path)
{
    kr_ctx *ctx;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
    int32_t rows, cols;
    double *x;
    ck_assert_int_eq(kr_read_dense_mtx(ctx, path, &rows, &cols, &x), KR_OK);
    ck_assert(rows == A->nrows && cols == 1);
    double *ones = malloc(sizeof(double) * rows), *b = malloc(sizeof *b * rows);
    double *ax = malloc(sizeof(double) * rows), rr = 0, bb = 0;
    for (int32_t i = 0; i < rows; i++)
        ones[i] = 1.0;
    kr_csr_matvec(A, ones, b);
    kr_csr_matvec(A, x, ax);
    for (int32_t i = 0; i < rows; i++) {
        rr += (b[i] - ax[i]) * (b[i] - ax[i]);
        bb += b[i] * b[i];
    }
    free(ones), free(b), free(ax), free(x);
    kr_ctx_destroy(ctx);
    return sqrt(rr / bb);
}

START_TEST(output_file_has_reported_residual)
{
    const char *dir = scratch_dir();
    char x[512];
    snprintf(x, sizeof x, "%s/x.mtx", dir);
    run_out r =
        krylov(dir, "solve --gen convdiff2d:20 --method gmres -o %s", x);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    double reported = report_num(r.out, "true rel. residual:");
    kr_ctx *ctx;
    kr_csr A;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
    ck_assert_int_eq(kr_generate(ctx, "convdiff2d:20", &A), KR_OK);
    double mine = residual_of_file(&A, x);
    ck_assert_msg(fabs(mine - reported) <= 5e-4 * reported,
                  "reported %.6e, recomputed %.6e", reported, mine);
    ck_assert(kt_no_tmp_files(dir));
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
    kt_output_free(&r);
}
END_TEST

START_TEST(history_has_every_iteration)
{
    const char *dir = scratch_dir();
    char h[512];
    snprintf(h, sizeof h, "%s/h.csv", dir);
    run_out r = krylov(dir,
                       "solve --gen poisson2d:16 --method cg "
                       "--history %s",
                       h);
    ck_assert_int_eq(r.rc, 0);
    int its = (int)report_num(r.out, "iterations:");
    char *csv = kt_slurp(h);
    ck_assert(strncmp(csv, "iteration,residual_norm,relative_residual\n", 42) ==
              0);
    int lines = 0, k;
    double norm, rel = NAN;
    for (const char *p = strchr(csv, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
        ck_assert_int_eq(sscanf(p, "%d,%lf,%lf", &k, &norm, &rel), 3);
        ck_assert_int_eq(k, lines++);
    }
    ck_assert_int_eq(lines, its + 1);
    double last = report_num(r.out, "recursive rel. residual:");
    ck_assert(fabs(rel - last) <= 1e-4 * last);
    ck_assert(kt_no_tmp_files(dir));
    free(csv);
    kt_output_free(&r);
}
END_TEST

START_TEST(maxit_not_converged)
{
    const char *dir = scratch_dir();
    char x[512];
    snprintf(x, sizeof x, "%s/x.mtx", dir);
    run_out r = krylov(dir, "solve --gen poisson2d:20 --maxit 2 -o %s", x);
    ck_assert_int_eq(r.rc, 1);
    ck_assert(strstr(r.out, "DIVERGED_ITS") && strstr(r.err, "DIVERGED_ITS"));
    ck_assert_int_eq((int)report_num(r.out, "iterations:"), 2);
    ck_assert(kt_file_exists(x)); /* the last iterate, as --help says */
    kt_output_free(&r);
}
END_TEST

START_TEST(equals_syntax_and_options_reach_solver)
{
    run_out r = krylov(scratch_dir(), "solve --gen poisson2d:12 --method=gmres "
                                      "--restart=5 --precond=none --rtol=1e-10 "
                                      "--threads=1 --device=cpu");
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert(strstr(r.out, "gmres (restart = 5)"));
    ck_assert(strstr(r.out, "preconditioner:") && strstr(r.out, "none"));
    ck_assert(report_num(r.out, "recursive rel. residual:") <= 1e-10);
    ck_assert_int_eq((int)report_num(r.out, "threads:"), 1);
    kt_output_free(&r);
}
END_TEST

typedef struct usage_case {
    const char *args;
    const char *must; /* in stderr; "" for none */
} usage_case;

/* Options the chosen method or preconditioner does not read are ignored
 * with a warning naming them, never silently (issue 16, item 13). */
START_TEST(unused_options_warned)
{
    static const usage_case cases[] = {
        {"--method idr --restart 50", "--restart applies to --method gmres "
                                      "only; ignored with idr"},
        {"--method cg -ksp_gmres_restart 50", "--restart applies to"},
        {"--method gmres --s 8", "--s applies to --method idr only"},
        {"--precond jacobi --block-size 4",
         "--block-size applies to --precond bjacobi only; ignored with "
         "jacobi"},
        {"--precond none --bjacobi-singular=error", "--bjacobi-singular"},
    };
    const char *dir = scratch_dir();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run_out r = krylov(dir, "solve --gen poisson2d:5 --device cpu %s",
                           cases[i].args);
        ck_assert_msg(r.rc == 0, "'%s' exited %d", cases[i].args, r.rc);
        ck_assert_msg(strstr(r.err, cases[i].must), "'%s': %s", cases[i].args,
                      r.err);
        kt_output_free(&r);
    }
    run_out r =
        krylov(dir, "solve --gen poisson2d:5 --device cpu --method "
                    "gmres --restart 5 --precond bjacobi --block-size 4");
    ck_assert_msg(!strstr(r.err, "warning"), "%s", r.err);
    kt_output_free(&r);
}
END_TEST

START_TEST(usage_errors_exit_2)
{
    static const usage_case cases[] = {
        {"solve --gen poisson2d:5 --bogus", "--bogus"},
        {"solve --gen poisson2d:5 --rtol abc", "abc"},
        {"solve --gen poisson2d:5 --rtol=-1", ">= 0"},
        {"solve --gen poisson2d:5 --rtol nan", "nan"},
        {"solve --gen poisson2d:5 --atol 1e999", "1e999"},
        {"solve --gen poisson2d:5 --rtol 0x10", "0x10"},
        {"solve --gen poisson2d:5 --rtol 1e-400", "1e-400"},
        {"solve --gen poisson2d:5 --rtol inf", "inf"},
        {"solve --gen poisson2d:5 --s 0", "1..64"},
        {"solve --gen poisson2d:5 --s 65", "1..64"},
        {"solve --gen poisson2d:5 --s 4x", "4x"},
        {"solve --gen poisson2d:5 --restart 0", "1..1000"},
        {"solve --gen poisson2d:5 --maxit 1.5", "1.5"},
        {"solve --gen poisson2d:5 --threads -1", "-1"},
        {"solve --gen poisson2d:5 --rtol", "--rtol"},
        {"solve --gen poisson2d:5 --json=yes", "--json"},
        {"solve --gen poisson2d:5 --device gpu", "auto, cpu, cuda"},
        {"solve --gen nosuch:5", "poisson2d"},
        {"solve", "--gen"},
        {"frob", "solve, gen"},
        {"gen poisson2d:5", "-o"},
    };
    const char *dir = scratch_dir();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run_out r = krylov(dir, "%s", cases[i].args);
        ck_assert_msg(r.rc == 2, "'%s' exited %d", cases[i].args, r.rc);
        ck_assert_msg(strstr(r.err, cases[i].must), "'%s': %s", cases[i].args,
                      r.err);
        kt_output_free(&r);
    }
}
END_TEST

START_TEST(unknown_names_list_choices)
{
    const char *dir = scratch_dir();
    run_out r = krylov(dir, "solve --gen poisson2d:5 --method foo");
    ck_assert_int_eq(r.rc, 2);
    assert_all_names(r.err, kr_method_names());
    kt_output_free(&r);
    r = krylov(dir, "solve --gen poisson2d:5 --precond foo");
    ck_assert_int_eq(r.rc, 2);
    assert_all_names(r.err, kr_precond_names());
    kt_output_free(&r);
    r = krylov(dir, "solve --gen poisson2d:5 --format foo");
    ck_assert_int_eq(r.rc, 2);
    assert_all_names(r.err, kr_format_names());
    kt_output_free(&r);
    r = krylov(dir, "solve --gen poisson2d:5 --nope");
    ck_assert_int_eq(r.rc, 2);
    ck_assert(mentions_option(r.err, "--method") &&
              mentions_option(r.err, "--maxit"));
    kt_output_free(&r);
}
END_TEST

typedef struct bad_file {
    const char *name, *text;
    const char *where; /* in stderr after "<path>", e.g. ":4" */
} bad_file;

#define MM "%%MatrixMarket matrix coordinate real general\n"

static const bad_file bad_files[] = {
    {"banner.mtx",
     "%%MatrixMarket matrix coordinat real general\n2 2 2\n"
     "1 1 1\n2 2 1\n",
     ":1"},
    {"range.mtx", MM "2 2 2\n1 1 1\n3 2 1\n", ":4"},
    {"few.mtx", MM "2 2 3\n1 1 1\n2 2 1\n", ":"},
    {"nan.mtx", MM "2 2 2\n1 1 nan\n2 2 1\n", ":3"},
    {"word.mtx", MM "2 2 2\n1 1 1\n2 2 x\n", ":4"},
    {"size.mtx", MM "2 2\n1 1 1\n", ":2"},
    {"nonsquare.mtx", MM "2 3 2\n1 1 1\n2 2 1\n", ":2: the matrix is 2 x 3"},
    {"fields.mtx", MM "2 2 2\n1 1 1 5\n2 2 1\n", ":3"},
    {"fields2.mtx", MM "2 2 2\n1 1\n2 2 1\n", ":3"},
    {"zero.mtx", MM "2 2 2\n0 1 1\n2 2 1\n", ":3"},
    {"negative.mtx", MM "2 2 2\n-1 1 1\n2 2 1\n", ":3"},
    {"extra.mtx", MM "2 2 2\n1 1 1\n2 2 1\n1 2 1\n", ":5"},
    {"emptyrow.mtx", MM "2000000000 2000000000 3\n1 1 1\n2 2 1\n3 3 1\n", ":2"},
    {"zerobyzero.mtx", MM "0 0 0\n", ":2"},
    {"upper.mtx",
     "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n1 2 1\n",
     ":4"},
    {"inf.mtx", MM "2 2 2\n1 1 inf\n2 2 1\n", ":3"},
    {"index.mtx", MM "2 2 2\n1 a 1\n2 2 1\n", ":3"},
    {"overflow.mtx", MM "3000000000 3000000000 1\n1 1 1\n", ":2"},
    {"absurd.mtx", MM "10 10 1000000000\n1 1 1\n", ":2"},
    {"nosize.mtx", MM "% only a comment\n", ":"},
    {"complex.mtx",
     "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n",
     ":1"},
    {"skewdiag.mtx",
     "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
     ":3"},
};

/* Bad input: exit 3, the message names file and line, no output left. */
static void check_bad_file(const char *dir, const char *io, const bad_file *bf)
{
    char x[512], h[512], want[1024];
    const char *path = kt_write_file(dir, bf->name, bf->text);
    snprintf(want, sizeof want, "%s%s", path, bf->where);
    snprintf(x, sizeof x, "%s/x.mtx", dir);
    snprintf(h, sizeof h, "%s/h.csv", dir);
    run_out r =
        krylov(io, "solve %s -o %s --history %s --method cg", path, x, h);
    ck_assert_msg(r.rc == 3, "%s: exit %d", bf->name, r.rc);
    ck_assert_msg(strstr(r.err, want), "%s: want '%s' in: %s", bf->name, want,
                  r.err);
    if (bf->where[1] == '\0') { /* some line number after the colon */
        const char *p = strstr(r.err, want) + strlen(want);
        ck_assert_msg(*p >= '1' && *p <= '9', "%s: no line in %s", bf->name,
                      r.err);
    }
    ck_assert(!kt_file_exists(x) && !kt_file_exists(h));
    ck_assert(kt_no_tmp_files(dir));
    kt_output_free(&r);
}

START_TEST(malformed_files_exit_3)
{
    /* the files checked, and apart from them stdout and stderr */
    const char *dir = scratch_dir(), *io = scratch_dir();
    for (size_t i = 0; i < sizeof bad_files / sizeof *bad_files; i++)
        check_bad_file(dir, io, &bad_files[i]);
}
END_TEST

/* issue 16, item 8: input read once, so pipes, /dev/stdin, "-" and
 * process substitution work; the format comes from the first bytes, for
 * the matrix and for -b; item 13: a little-endian PETSc file is named. */
START_TEST(input_from_pipes)
{
    const char *dir = scratch_dir();
    char a[512], b[512], bin[512], vbin[512];
    snprintf(a, sizeof a, "%s/a.mtx", dir);
    snprintf(b, sizeof b, "%s/b.mtx", dir);
    snprintf(bin, sizeof bin, "%s/a.bin", dir);
    snprintf(vbin, sizeof vbin, "%s/b.bin", dir);
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:12", &A), KR_OK);
    ck_assert_int_eq(kr_write_mtx(ctx, a, &A), KR_OK);
    ck_assert_int_eq(kr_write_petsc_mat(ctx, bin, &A), KR_OK);
    double ones[144];
    for (int i = 0; i < 144; i++)
        ones[i] = 1.0;
    ck_assert_int_eq(kr_write_dense_mtx(ctx, b, 144, 1, ones), KR_OK);
    ck_assert_int_eq(kr_write_petsc_vec(ctx, vbin, 144, ones), KR_OK);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
    const char *forms[] = {
        "cat '%1$s' | '%2$s' solve /dev/stdin --method cg",
        "cat '%1$s' | '%2$s' solve - --method cg",
        "'%2$s' solve <(cat '%1$s') --method cg",
        "gzip -c '%1$s' | '%2$s' solve - --method cg",
        "cat '%3$s' | '%2$s' solve - --method cg",
        "gzip -c '%3$s' | '%2$s' solve /dev/stdin --method cg",
        "cat '%4$s' | '%2$s' solve '%1$s' -b - --method cg",
        "cat '%5$s' | '%2$s' solve '%3$s' -b /dev/stdin --method cg",
    };
    for (size_t k = 0; k < sizeof forms / sizeof *forms; k++) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, forms[k], a, kt_krylov_bin(), bin, b, vbin);
        run_out r = kt_command("", "bash", dir, "-c \"%s\"", cmd);
        ck_assert_msg(r.rc == 0, "%s: rc %d: %s", cmd, r.rc, r.err);
        ck_assert_msg(strstr(r.out, "CONVERGED_"), "%s: %s", cmd, r.out);
        ck_assert_int_eq((int)report_num(r.out, "rows (n):"), 144);
        kt_output_free(&r);
    }
    /* A PETSc matrix written little-endian is named as such. */
    unsigned char le[32] = {0};
    int32_t h[4] = {1211216, 1, 1, 1};
    memcpy(le, h, 16);
    FILE *f = fopen(bin, "wb");
    ck_assert(f && fwrite(le, 1, 32, f) == 32 && fclose(f) == 0);
    run_out r = krylov(dir, "solve %s", bin);
    ck_assert_int_eq(r.rc, 3);
    ck_assert_msg(strstr(r.err, "little-endian"), "%s", r.err);
    kt_output_free(&r);
}
END_TEST

START_TEST(wrong_rhs_length_exit_3)
{
    const char *dir = scratch_dir();
    char x[512];
    const char *b = kt_write_file(dir, "b.mtx",
                                  "%%MatrixMarket matrix array "
                                  "real general\n3 1\n1\n2\n3\n");
    snprintf(x, sizeof x, "%s/x.mtx", dir);
    run_out r = krylov(dir, "solve --gen poisson2d:5 -b %s -o %s", b, x);
    ck_assert_int_eq(r.rc, 3);
    ck_assert_msg(strstr(r.err, "b.mtx") && strstr(r.err, "3 x 1") &&
                      strstr(r.err, "25"),
                  "%s", r.err);
    ck_assert(!kt_file_exists(x));
    kt_output_free(&r);
}
END_TEST

START_TEST(zero_diagonal_jacobi_exit_3)
{
    const char *dir = scratch_dir();
    /* [2 1 0; 1 0 1; 0 0 2]: nonsingular, but a_22 = 0 */
    const char *a = kt_write_file(dir, "zd.mtx",
                                  MM "3 3 5\n1 1 2\n1 2 1\n"
                                     "2 1 1\n2 3 1\n3 3 2\n");
    run_out r = krylov(dir, "solve %s --precond jacobi", a);
    ck_assert_int_eq(r.rc, 3);
    ck_assert_msg(strstr(r.err, "row 2") && strstr(r.err, "zd.mtx"), "%s",
                  r.err);
    kt_output_free(&r);
    r = krylov(dir, "solve %s --precond none --method gmres", a);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert(report_num(r.out, "forward error (inf):") < 1e-8);
    kt_output_free(&r);
}
END_TEST

START_TEST(cuda_not_built_exit_4)
{
    if (kr_built_with_cuda()) {
        kt_skip("cuda_not_built_exit_4", "this build has CUDA");
        return;
    }
    run_out r = krylov(scratch_dir(), "solve --gen poisson2d:5 --device cuda");
    ck_assert_int_eq(r.rc, 4);
    ck_assert(strstr(r.err, "krylov: error: ") && strstr(r.err, "CUDA"));
    kt_output_free(&r);
}
END_TEST

/* Writes an n x 1 array file of `value` and returns its path. */
static const char *constant_vector(const char *dir, const char *name, int32_t n,
                                   double value)
{
    size_t cap = 64 + 24 * (size_t)n, len;
    char *text = malloc(cap);
    len = (size_t)snprintf(text, cap,
                           "%%%%MatrixMarket matrix array real "
                           "general\n%d 1\n",
                           (int)n);
    for (int32_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%.17g\n", value);
    const char *path = kt_write_file(dir, name, text);
    free(text);
    return path;
}

START_TEST(exact_x0_converges_at_0)
{
    const char *dir = scratch_dir();
    const char *x0 = constant_vector(dir, "ones.mtx", 100, 1.0);
    run_out r = krylov(dir, "solve --gen poisson2d:10 --x0 %s", x0);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_int_eq((int)report_num(r.out, "iterations:"), 0);
    ck_assert(report_num(r.out, "forward error (inf):") == 0.0);
    kt_output_free(&r);
}
END_TEST

START_TEST(rhs_file_has_no_forward_error)
{
    const char *dir = scratch_dir();
    const char *b = constant_vector(dir, "b.mtx", 144, 1.0);
    run_out r = krylov(dir, "solve --gen poisson2d:12 -b %s --json", b);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert(json_balanced(r.out));
    ck_assert(strstr(r.out, "\"forward_error_inf\": null"));
    ck_assert(json_num(r.out, "true_relative_residual") <= 1e-8);
    kt_output_free(&r);
}
END_TEST

START_TEST(gen_writes_readable_file)
{
    const char *dir = scratch_dir();
    char f[512];
    snprintf(f, sizeof f, "%s/f.mtx", dir);
    run_out r = krylov(dir, "gen poisson2d:5 -o %s", f);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    kt_output_free(&r);
    kr_ctx *ctx;
    kr_csr A;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
    ck_assert_int_eq(kr_read_mtx(ctx, f, &A), KR_OK);
    ck_assert(A.nrows == 25 && A.ncols == 25 && A.nnz == 105);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
    /* the file and the generator give the same solve */
    run_out a = krylov(dir, "solve %s --method cg", f);
    run_out b = krylov(dir, "solve --gen poisson2d:5 --method cg");
    ck_assert(a.rc == 0 && b.rc == 0);
    ck_assert_int_eq((int)report_num(a.out, "iterations:"),
                     (int)report_num(b.out, "iterations:"));
    kt_output_free(&a);
    kt_output_free(&b);
}
END_TEST

/* Iterations the --monitor lines of out repeat (one per restart), and
 * how many lines there are. */
static int monitor_repeats(const char *out, int *lines)
{
    int it, prev = -1, repeats = 0;
    double rel;
    *lines = 0;
    for (const char *p = out; p; p = strchr(p, '\n')) {
        if (*p == '\n') p++;
        if (sscanf(p, "%d %lf", &it, &rel) != 2) continue;
        repeats += it == prev;
        prev = it;
        (*lines)++;
    }
    return repeats;
}

/* rtol 1e-16 is below what ||b - A x|| can reach on poisson2d:20, while
 * IDR's recursive residual passes it: --gap-restarts 2 restarts twice,
 * then reports DIVERGED_RESIDUAL_GAP with exit 1. The monitor repeats the
 * two iterations the restarts begin at; the history has one line per
 * iteration; the JSON gives the count and the limit. */
START_TEST(residual_gap_reported)
{
    const char *dir = scratch_dir();
    const char *args = "solve --gen poisson2d:20 --method idr --rtol 1e-16 "
                       "--gap-restarts 2 --device cpu --threads 1";
    char h[512];
    snprintf(h, sizeof h, "%s/h.csv", dir);
    run_out r = krylov(dir, "%s --monitor --history %s", args, h);
    ck_assert_msg(r.rc == 1, "rc %d: %s", r.rc, r.err);
    ck_assert(strstr(r.out, "reason:                  DIVERGED_RESIDUAL_GAP"));
    ck_assert(strstr(r.err, "not converged: DIVERGED_RESIDUAL_GAP"));
    ck_assert_int_eq((int)report_num(r.out, "true-residual restarts:"), 2);
    ck_assert(strstr(r.out, "2 (at most 2)"));
    int its = (int)report_num(r.out, "iterations:"), lines;
    ck_assert_int_eq(monitor_repeats(r.out, &lines), 2);
    ck_assert_int_eq(lines, its + 1 + 2);
    char *csv = kt_slurp(h);
    int rows = 0, k;
    double norm, rel;
    for (const char *p = strchr(csv, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
        ck_assert_int_eq(sscanf(p, "%d,%lf,%lf", &k, &norm, &rel), 3);
        ck_assert_int_eq(k, rows++);
    }
    ck_assert_int_eq(rows, its + 1);
    free(csv);
    kt_output_free(&r);

    r = krylov(dir, "%s --json", args);
    ck_assert_int_eq(r.rc, 1);
    ck_assert(json_balanced(r.out));
    ck_assert(strstr(r.out, "\"reason\": \"DIVERGED_RESIDUAL_GAP\""));
    ck_assert(strstr(r.out, "\"converged\": false"));
    ck_assert(json_num(r.out, "true_residual_restarts") == 2);
    ck_assert(json_num(r.out, "gap_restarts") == 2);
    ck_assert(json_num(r.out, "true_relative_residual") > 1e-16);
    ck_assert((int)json_num(r.out, "iterations") == its);
    kt_output_free(&r);
}
END_TEST

/* rtol 1e-14, within reach: IDR's first claim of convergence on
 * poisson2d:20 is not borne out by ||b - A x||, one restart fixes it. */
START_TEST(residual_gap_restart_converges)
{
    run_out r = krylov(scratch_dir(),
                       "solve --gen poisson2d:20 --method idr --rtol 1e-14 "
                       "--device cpu --threads 1 --json");
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert(strstr(r.out, "\"reason\": \"CONVERGED_RTOL\""));
    ck_assert(json_num(r.out, "true_residual_restarts") >= 1);
    ck_assert(json_num(r.out, "gap_restarts") == 3); /* the default */
    ck_assert(json_num(r.out, "true_relative_residual") <= 1e-14);
    kt_output_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, help_top_level);
    tcase_add_test(tc, help_solve_tells_everything);
    tcase_add_test(tc, solve_converges);
    tcase_add_test(tc, residual_gap_reported);
    tcase_add_test(tc, residual_gap_restart_converges);
    tcase_add_test(tc, json_matches_text);
    tcase_add_test(tc, json_setup_parts_and_blocks);
    tcase_add_test(tc, verbose_block_conditions);
    tcase_add_test(tc, verbose_replaced_and_no_blocks);
    tcase_add_test(tc, output_file_has_reported_residual);
    tcase_add_test(tc, history_has_every_iteration);
    tcase_add_test(tc, maxit_not_converged);
    tcase_add_test(tc, equals_syntax_and_options_reach_solver);
    tcase_add_test(tc, usage_errors_exit_2);
    tcase_add_test(tc, unknown_names_list_choices);
    tcase_add_test(tc, malformed_files_exit_3);
    tcase_add_test(tc, input_from_pipes);
    tcase_add_test(tc, wrong_rhs_length_exit_3);
    tcase_add_test(tc, zero_diagonal_jacobi_exit_3);
    tcase_add_test(tc, cuda_not_built_exit_4);
    tcase_add_test(tc, exact_x0_converges_at_0);
    tcase_add_test(tc, rhs_file_has_no_forward_error);
    tcase_add_test(tc, gen_writes_readable_file);
    tcase_add_test(tc, threads_capped_and_spinning_bounded);
    tcase_add_test(tc, too_big_for_memory_exit_4);
    tcase_add_test(tc, unused_options_warned);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
