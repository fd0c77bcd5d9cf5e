/* Linked instead of spmv/'s .cu files in a build without CUDA (CUDA=0):
 * every format's CUDA table is absent (NULL), so kr_matrix_create says the
 * format has no implementation there, and callers need no #ifdef. */
#include "core/error.h"
#include "spmv/format.h"
#include "spmv/permuted.h"

#include <stddef.h>

#define KR_FORMAT_STUB(name, summary)                                          \
    const kr_format_ops *kr_##name##_cuda_ops(void) { return NULL; }
KR_FORMAT_LIST(KR_FORMAT_STUB)

kr_status kr_permuted_scatter_cuda(kr_ctx *ctx, int32_t nrows, int32_t k,
                                   const int32_t *order, const double *src,
                                   double beta, double *dst)
{
    (void)nrows, (void)k, (void)order, (void)src, (void)beta, (void)dst;
    return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                   "the row-order scatter needs a CUDA build");
}
