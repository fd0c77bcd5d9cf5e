/* The persistent ops of the CUDA backend (core/cuda_persist_*.cu), which
 * core/cuda_backend.cu puts in its ops table. */
#ifndef KR_CORE_CUDA_PERSIST_H
#define KR_CORE_CUDA_PERSIST_H

#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kr_backend_ops.cg_persist */
kr_status kr_cuda_cg_persist(kr_ctx *ctx, const kr_csr_view *A, int iters,
                             int start, const double *d, double *x, double *r,
                             double *z, double *p, double *pn, double *q,
                             kr_cg_dev *s);
/* kr_backend_ops.gm_persist (core/cuda_persist_gmres.cu) */
kr_status kr_cuda_gm_persist(kr_ctx *ctx, const kr_gm_launch *g);
/* GMRES's persistent kernel for sub-warps of v lanes (2, 4, ..., 32) */
const void *kr_cuda_gm_persist_kernel(int v);
/* kr_backend_ops.idr_persist (core/cuda_persist_idr.cu) */
kr_status kr_cuda_idr_persist(kr_ctx *ctx, const kr_csr_view *A, int iters,
                              int phase, int s, const kr_idr_vectors *w,
                              kr_idr_dev *st);
/* Its kernel for sub-warps of `lanes` lanes a row (2..32) */
const void *kr_cuda_idr_persist_kernel(int lanes);
/* kr_backend_ops.bcgs_persist */
kr_status kr_cuda_bcgs_persist(kr_ctx *ctx, const kr_csr_view *A, int iters,
                               const double *d, const double *rh, double *x,
                               double *r, double *p, double *v, double *pn,
                               double *vn, double *t, kr_bcgs_dev *s);
/* BiCGSTAB's persistent kernel for sub-warps of `lanes` (2..32) lanes a
 * row, for kr_cuda_persist_kernels' list. */
const void *kr_cuda_bcgs_persist_kernel(int lanes);
/* kr_backend_ops.residual_norms (core/cuda_residual.cu) */
kr_status kr_cuda_residual_norms(kr_ctx *ctx, const kr_csr_view *A,
                                 const double *b, const double *x, double *r,
                                 double *out);
/* The persistent kernels, for the context's warm-up: up to max into out;
 * returns how many. */
int kr_cuda_persist_kernels(const void **out, int max);

#ifdef __cplusplus
}
#endif

#endif
