/* Linked instead of the .cu files in a build without CUDA (CUDA=0): every
 * CUDA entry point exists and says it was not compiled, so callers never
 * need #ifdef. */
#include "core/error.h"
#include "precond/gje_batch.h"
#include "precond/gje_cublas.h"
#include "spmv/format.h"

int kr_built_with_cuda(void) { return 0; }

void *kr_ctx_cuda_stream(const kr_ctx *ctx)
{
    (void)ctx;
    return NULL;
}

kr_status kr_cuda_backend_init(kr_ctx *ctx)
{
    return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                   "krylov was built without CUDA (rebuild with CUDA=1 where "
                   "nvcc is installed)");
}

void kr_cuda_backend_fini(kr_ctx *ctx) { (void)ctx; }

const kr_format_ops *kr_csr_cuda_ops(void) { return NULL; }
const kr_format_ops *kr_ellr_cuda_ops(void) { return NULL; }
const kr_format_ops *kr_pellr_cuda_ops(void) { return NULL; }
const kr_format_ops *kr_vsr_cuda_ops(void) { return NULL; }
const kr_format_ops *kr_hyb_cuda_ops(void) { return NULL; }

const kr_gje_batch_ops *kr_gje_batch_cuda_ops(void) { return NULL; }

static kr_status no_cublas(kr_ctx *ctx)
{
    return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                   "the cuBLAS baseline needs a build with CUDA");
}

kr_status kr_gje_cublas_create(kr_ctx *ctx, const kr_gje_batch *bb,
                               const double *in, double *work, double *out,
                               kr_gje_cublas **h)
{
    (void)bb, (void)in, (void)work, (void)out;
    *h = NULL;
    return no_cublas(ctx);
}

void kr_gje_cublas_destroy(kr_ctx *ctx, kr_gje_cublas *h)
{
    (void)ctx, (void)h;
}

int kr_gje_cublas_groups(const kr_gje_cublas *h)
{
    (void)h;
    return 0;
}

kr_status kr_gje_cublas_reset(kr_ctx *ctx, kr_gje_cublas *h)
{
    (void)h;
    return no_cublas(ctx);
}

kr_status kr_gje_cublas_getrf_getri(kr_ctx *ctx, kr_gje_cublas *h)
{
    (void)h;
    return no_cublas(ctx);
}

kr_status kr_gje_cublas_matinv(kr_ctx *ctx, kr_gje_cublas *h)
{
    (void)h;
    return no_cublas(ctx);
}

kr_status kr_gje_cublas_singular(kr_ctx *ctx, kr_gje_cublas *h,
                                 int32_t *singular)
{
    (void)h;
    *singular = 0;
    return no_cublas(ctx);
}
