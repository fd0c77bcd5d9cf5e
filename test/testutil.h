/* Helpers shared by the Check test programs. */
#ifndef KR_TEST_TESTUTIL_H
#define KR_TEST_TESTUTIL_H

#include "krylov.h"

#if defined(__GNUC__)
#define KT_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define KT_PRINTF_LIKE(f, a)
#endif

#include <check.h>
#include <stdarg.h>
#include <stdint.h>

/* Every test case's Check timeout: a guard against hangs, never a speed
 * limit (CI machines are small and sometimes loaded, so a test's time says
 * nothing about the code). */
#define KT_HANG_GUARD_S 1200

/* The folder of real test matrices: $KRYLOV_MATRICES, else
 * ../shared/matrices from the repository root; NULL if neither exists. */
const char *kt_matrices_dir(void);

/* Marks the running test as skipped with a reason: prints a SKIP line and
 * records it for the summary of test/run_tests.sh. The caller then returns. */
void kt_skip(const char *test, const char *reason);

/* A fresh temporary folder (removed by the OS's tmp cleaning, or by tests). */
const char *kt_tmpdir(void);

/* Writes `text` to dir/name and returns the path (static buffer, reused). */
const char *kt_write_file(const char *dir, const char *name, const char *text);

/* A CPU context (the test fails if none can be made). */
kr_ctx *kt_cpu(void);
/* A CUDA context, or NULL after marking the test skipped with the reason
 * (kt_skip) when no GPU is usable. */
kr_ctx *kt_gpu_or_skip(const char *test);

/* Deterministic pseudo-random numbers (splitmix64). */
uint64_t kt_rand_u64(uint64_t *state);
double kt_rand_uniform(uint64_t *state); /* in [-1, 1) */
/* n values of kt_rand_uniform in a new array (free()); the test fails if
 * there is no memory. */
double *kt_rand_vector(int32_t n, uint64_t *state);

/* A random n x m sparse matrix with about `per_row` entries per row, the
 * diagonal included and made dominant when `dominant` (so it is solvable). */
void kt_random_csr(kr_ctx *ctx, int32_t n, int32_t m, int per_row, int dominant,
                   uint64_t seed, kr_csr *A);

/* max_i |a_i - b_i| / max(1, max_i |b_i|) */
double kt_rel_diff(int32_t n, const double *a, const double *b);

/* The krylov command under test: $KRYLOV_BIN, else build/krylov. */
const char *kt_krylov_bin(void);

/* The whole file as a string (free()), or NULL if it cannot be read. */
char *kt_slurp(const char *path);

int kt_file_exists(const char *path);

/* 1 when no name in dir contains ".tmp" (a temporary output left behind). */
int kt_no_tmp_files(const char *dir);

/* What a command printed, and its exit status (-1 if killed). */
typedef struct kt_output {
    int rc;
    char *out, *err;
} kt_output;

/* Runs "ENV 'bin' ARGS" (ARGS printf-style) through the shell with stdout
 * and stderr captured in files of io_dir (a fresh folder when NULL). */
kt_output kt_command(const char *env, const char *bin, const char *io_dir,
                     const char *fmt, ...) KT_PRINTF_LIKE(4, 5);
kt_output kt_vcommand(const char *env, const char *bin, const char *io_dir,
                      const char *fmt, va_list ap);
void kt_output_free(kt_output *r);

/* Runs the suite (fork mode) and returns the exit status for main. */
int kt_run(Suite *s);

/* A monitor's calls, for kr_solve_options.monitor = kt_monitor_record with
 * monitor_user a kt_monitor_log (zeroed count); more than KT_MONLOG calls
 * fail the test. */
#define KT_MONLOG 8192
typedef struct kt_monitor_log {
    int count;
    int it[KT_MONLOG];
    double rnorm[KT_MONLOG];
} kt_monitor_log;
int kt_monitor_record(int it, double rnorm, void *user);

/* A as CSR from the dense row-major n x n array a, zeros dropped. */
void kt_dense_csr(kr_ctx *ctx, int32_t n, const double *a, kr_csr *A);

/* ||b - A x||_2 by the plain host loop. */
double kt_host_residual(const kr_csr *A, const double *b, const double *x);

/* The number after key in text (a JSON key with its quotes, or a report's
 * label), skipping spaces, colons and quotes; fails the test if none. */
double kt_num_after(const char *text, const char *key);

#endif
