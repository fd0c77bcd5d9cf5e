/* A format on permuted rows, the order undone after each apply
 * (spmv/permuted.c). Internal to spmv/. */
#ifndef KR_SPMV_PERMUTED_H
#define KR_SPMV_PERMUTED_H

#include "spmv/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The wrapper's table (both backends); its impl comes from
 * kr_permuted_build, never from its build member (NULL). */
extern const kr_format_ops kr_permuted_ops;

/* Orders A's rows by the named order (kr_permute_names()), builds `ops`'s
 * format on the reordered rows and wraps it. */
kr_status kr_permuted_build(kr_ctx *ctx, const kr_csr *A,
                            const kr_format_ops *ops, const char *order_name,
                            void **impl);
const char *kr_permuted_order_name(const void *impl);
/* Seconds spent computing the order (part of the build). */
double kr_permuted_order_seconds(const void *impl);
/* order[p] = A's row at position p, on the host. */
const int32_t *kr_permuted_order(const void *impl);

/* dst[order[p]*k + c] = src[p*k + c] + beta*dst[order[p]*k + c] for p <
 * nrows, c < k (beta == 0 overwrites), on the context's stream; order,
 * src and dst in device memory (spmv/permuted.cu; KR_ERR_NOT_COMPILED in
 * a build without CUDA). */
kr_status kr_permuted_scatter_cuda(kr_ctx *ctx, int32_t nrows, int32_t k,
                                   const int32_t *order, const double *src,
                                   double beta, double *dst);

#ifdef __cplusplus
}
#endif

#endif
