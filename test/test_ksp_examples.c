/* The solver-object examples (examples/ksp_rhs.c, matrix_free.c,
 * update_values.c, multi_rhs.c) run, exit 0, and print a host-checked residual
 * within the tolerance for every solve. */
#include "testutil.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define LABEL "||b-Ax||/||b|| = "

/* build/examples/NAME beside build/krylov */
static const char *example_path(const char *name)
{
    static char path[4096];
    const char *bin = getenv("KRYLOV_BIN");
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", bin ? bin : "build/krylov");
    snprintf(path, sizeof path, "%s/examples/%s", dirname(copy), name);
    return path;
}

/* Runs the example with `arg`, output into `out`; returns the exit status. */
static int run_example(const char *name, const char *arg, char *out, size_t len)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", example_path(name), arg);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t got = fread(out, 1, len - 1, p);
    out[got] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every residual the output reports is <= 1.05e-8; returns how many. */
static int residuals_ok(const char *out)
{
    int count = 0;
    for (const char *p = strstr(out, LABEL); p; p = strstr(p + 1, LABEL)) {
        double rel = strtod(p + strlen(LABEL), NULL);
        ck_assert_msg(rel <= 1.05e-8, "%s", out);
        count++;
    }
    return count;
}

static const struct {
    const char *name, *arg;
    int solves;
} examples[] = {
    {"ksp_rhs", "poisson2d:40", 3},
    {"matrix_free", "40", 3},
    {"update_values", "convdiff2d:40,2", 4},
    {"multi_rhs", "poisson2d:40", 4},
};

START_TEST(example_runs)
{
    char out[8192];
    int rc = run_example(examples[_i].name, examples[_i].arg, out, sizeof out);
    ck_assert_msg(rc == 0, "%s exited %d:\n%s", examples[_i].name, rc, out);
    ck_assert_int_eq(residuals_ok(out), examples[_i].solves);
    ck_assert_ptr_null(strstr(out, "FAILED"));
    if (_i == 0)
        ck_assert_ptr_nonnull(
            strstr(out, "allocations during the three solves: 0"));
}
END_TEST

/* A spec the generator refuses: exit 2 and the library's message. */
START_TEST(example_reports_errors)
{
    char out[8192];
    ck_assert_int_eq(run_example("ksp_rhs", "nosuch:3", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "nosuch"));
    ck_assert_int_eq(run_example("matrix_free", "1", out, sizeof out), 2);
    ck_assert_int_eq(run_example("update_values", "nosuch:3", out, sizeof out),
                     2);
    ck_assert_int_eq(run_example("multi_rhs", "nosuch:3", out, sizeof out), 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ksp_examples");
    TCase *tc = tcase_create("ksp_examples");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_loop_test(tc, example_runs, 0, 4);
    tcase_add_test(tc, example_reports_errors);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
