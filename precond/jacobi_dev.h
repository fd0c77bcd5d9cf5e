/* Scalar Jacobi's setup on the GPU (precond/jacobi_dev.cu; a stub in
 * precond/cuda_stubs.c without CUDA). */
#ifndef KR_PRECOND_JACOBI_DEV_H
#define KR_PRECOND_JACOBI_DEV_H

#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* d[i] = 1 / a_ii for the CSR A in device memory (d: A->nrows device
 * doubles); *bad_row = the first row whose diagonal is zero or missing,
 * -1 when none is (d is then complete). */
kr_status kr_jacobi_dev_inverse(kr_ctx *ctx, const kr_csr_view *A, double *d,
                                int32_t *bad_row);

#ifdef __cplusplus
}
#endif

#endif
