/* Linked instead of spmv/'s .cu files in a build without CUDA (CUDA=0):
 * every format's CUDA table is absent (NULL), so kr_matrix_create says the
 * format has no implementation there, and callers need no #ifdef. */
#include "core/error.h"
#include "spmv/devbuild.h"
#include "spmv/format.h"
#include "spmv/permuted.h"

#include <stddef.h>
#include <string.h>

#define KR_FORMAT_STUB(name, summary)                                          \
    const kr_format_ops *kr_##name##_cuda_ops(void) { return NULL; }
KR_FORMAT_LIST(KR_FORMAT_STUB)

/* Setup on the device (spmv/devbuild.cu): matrix.c and auto.c reach these
 * only on a CUDA context, which a build without CUDA never has. */
static kr_status no_cuda(kr_ctx *ctx)
{
    return kr_fail(ctx, KR_ERR_UNSUPPORTED, "built without CUDA");
}

kr_status kr_dev_csr_upload(kr_ctx *ctx, const kr_csr *A, kr_csr_view *dev)
{
    (void)A;
    memset(dev, 0, sizeof *dev);
    return no_cuda(ctx);
}

kr_status kr_dev_csr_upload_values(kr_ctx *ctx, const kr_csr *A,
                                   kr_csr_view *dev)
{
    (void)A, (void)dev;
    return no_cuda(ctx);
}

void kr_dev_csr_free(kr_ctx *ctx, kr_csr_view *dev)
{
    (void)ctx;
    memset(dev, 0, sizeof *dev);
}

size_t kr_dev_csr_bytes(const kr_csr_view *dev)
{
    (void)dev;
    return 0;
}

kr_status kr_dev_sync(kr_ctx *ctx) { return no_cuda(ctx); }

kr_status kr_dev_csr_first_bad(kr_ctx *ctx, const kr_csr_view *A,
                               int32_t *first)
{
    (void)A, (void)first;
    return no_cuda(ctx);
}

kr_status kr_dev_row_stats(kr_ctx *ctx, const kr_csr_view *A, kr_row_stats *st)
{
    (void)A;
    memset(st, 0, sizeof *st);
    return no_cuda(ctx);
}

kr_status kr_dev_hyb_width(kr_ctx *ctx, const kr_csr_view *A, int32_t *K)
{
    (void)A;
    *K = 0;
    return no_cuda(ctx);
}

kr_status kr_permuted_scatter_cuda(kr_ctx *ctx, int32_t nrows, int32_t k,
                                   const int32_t *order, const double *src,
                                   double beta, double *dst)
{
    (void)nrows, (void)k, (void)order, (void)src, (void)beta, (void)dst;
    return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                   "the row-order scatter needs a CUDA build");
}
