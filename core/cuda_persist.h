/* The persistent ops of the CUDA backend (core/cuda_persist.cu), which
 * core/cuda_backend.cu puts in its ops table. */
#ifndef KR_CORE_CUDA_PERSIST_H
#define KR_CORE_CUDA_PERSIST_H

#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kr_backend_ops.cg_persist */
kr_status kr_cuda_cg_persist(kr_ctx *ctx, const kr_csr_view *A, int32_t longest,
                             int iters, const double *d, double *x, double *r,
                             double *z, double *p, double *pn, double *q,
                             kr_cg_dev *s);
/* kr_backend_ops.bcgs_persist */
kr_status kr_cuda_bcgs_persist(kr_ctx *ctx, const kr_csr_view *A,
                               int32_t longest, int iters, const double *d,
                               const double *rh, double *x, double *r,
                               double *p, double *v, double *pn, double *vn,
                               double *t, kr_bcgs_dev *s);
/* BiCGSTAB's persistent kernel for sub-warps of `lanes` (2..32) lanes a
 * row, for kr_cuda_persist_kernels' list. */
const void *kr_cuda_bcgs_persist_kernel(int lanes);
/* The persistent kernels, for the context's warm-up: up to max into out;
 * returns how many. */
int kr_cuda_persist_kernels(const void **out, int max);

#ifdef __cplusplus
}
#endif

#endif
