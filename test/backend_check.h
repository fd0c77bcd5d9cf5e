/* Compares every kernel of one backend against plain loops on the host, on
 * fresh random data with the outputs poisoned (NaN) before each call. Used
 * by test_core (the CPU backend) and test_gpu (the CUDA backend). */
#ifndef KR_TEST_BACKEND_CHECK_H
#define KR_TEST_BACKEND_CHECK_H

#include "krylov.h"

/* Runs all checks for vectors of length n on ctx's backend; fails the
 * current Check test on any mismatch beyond tol (relative). */
void kt_check_backend(kr_ctx *ctx, int32_t n, uint64_t seed, double tol);

/* y = alpha*A*x + beta*y through kr_matrix_apply in `format` on ctx, against
 * the host reference, for a random x and poisoned / random y. Returns 1 when
 * checked, 0 when the format refused the matrix (KR_ERR_UNSUPPORTED, e.g.
 * too much padding); any other failure fails the test. */
int kt_check_spmv(kr_ctx *ctx, const kr_csr *A, const char *format,
                  uint64_t seed, double tol);

/* kt_check_spmv_all on every .mtx / .mtx.gz file in dir (fresh random x
 * for each); returns how many matrices were checked. */
int kt_check_spmv_files(kr_ctx *ctx, const char *dir, uint64_t seed,
                        double tol);

/* 1 for a format that picks another one (auto, auto-probe). */
int kt_is_automatic(const char *format);

/* M was created as `format`: a concrete format names itself and gives no
 * reason; an automatic one names a concrete format, and its reason starts
 * "<format>: <concrete> (" and ends with ")". */
void kt_check_choice(const kr_matrix *M, const char *format);

/* kt_check_spmv for every registered format; CSR and the automatic formats
 * must never refuse. */
void kt_check_spmv_all(kr_ctx *ctx, const kr_csr *A, uint64_t seed, double tol);

#endif
