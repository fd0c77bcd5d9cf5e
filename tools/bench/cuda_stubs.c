/* Linked instead of tools/bench/gje_cublas.cu in a build without CUDA
 * (CUDA=0): the cuBLAS baseline says it was not compiled, so `bench gje`
 * needs no #ifdef. */
#include "core/error.h"
#include "tools/bench/gje_cublas.h"

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
