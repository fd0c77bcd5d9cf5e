/* IDR(s)'s device-scalar ops (idr_* in core/backend.h) of one backend
 * against plain loops on the host, on fresh random data. Used by
 * test_idr_device on the CPU and, where there is one, the GPU. */
#ifndef KR_TEST_IDR_CHECK_H
#define KR_TEST_IDR_CHECK_H

#include "krylov.h"

#include <stdint.h>

/* Every idr_* op for vectors of length n and shadow dimension s, each
 * step k = 0..s of a cycle, then the stop code, a breakdown and the
 * stopping test; fails the current Check test on a difference beyond tol
 * (relative to the sum of the magnitudes of what was added). */
void kt_check_idr_ops(kr_ctx *ctx, int32_t n, int s, uint64_t seed, double tol);

/* The format's idr_dots_apply (the SpMV with IDR's M(:,0), h or omega)
 * on A, shadow dimension s, each k = 0..s, then with the stop set, against
 * plain loops; A must be a layout where idr_dots_ok holds. */
void kt_check_idr_dots(kr_ctx *ctx, const kr_csr *A, const char *format, int s,
                       uint64_t seed, double tol);

#endif
