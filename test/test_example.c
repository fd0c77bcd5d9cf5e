/* The library example (examples/solve.c) builds and solves a real problem:
 * run it on a generated matrix and on a missing file. */
#include "testutil.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* build/examples/solve beside build/krylov */
static const char *example_path(void)
{
    static char path[4096];
    const char *bin = getenv("KRYLOV_BIN");
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", bin ? bin : "build/krylov");
    snprintf(path, sizeof path, "%s/examples/solve", dirname(copy));
    return path;
}

/* Runs the example on `arg`, output into `out`; returns the exit status. */
static int run_example(const char *arg, char *out, size_t len)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", example_path(), arg);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t got = fread(out, 1, len - 1, p);
    out[got] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(example_solves)
{
    kr_ctx *ctx;
    kr_csr A;
    kr_ctx_create(&ctx, KR_DEVICE_CPU);
    ck_assert_int_eq(kr_generate(ctx, "convdiff2d:40,5", &A), KR_OK);
    char path[4096];
    snprintf(path, sizeof path, "%s/cd.mtx", kt_tmpdir());
    ck_assert_int_eq(kr_write_mtx(ctx, path, &A), KR_OK);
    char out[4096];
    ck_assert_int_eq(run_example(path, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "CONVERGED_RTOL") != NULL, "%s", out);
    double rel = 1.0;
    const char *eq = strstr(out, "||b-Ax||/||b|| = ");
    ck_assert_ptr_nonnull(eq);
    rel = strtod(eq + strlen("||b-Ax||/||b|| = "), NULL);
    ck_assert(rel <= 1e-8);
    remove(path);
    ck_assert_int_eq(run_example("/nonexistent/A.mtx", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "/nonexistent/A.mtx"));
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("example");
    TCase *tc = tcase_create("example");
    tcase_add_test(tc, example_solves);
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
