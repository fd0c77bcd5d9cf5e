/* Linked instead of core/cuda_backend.cu in a build without CUDA (CUDA=0):
 * the backend's entry points exist and say it was not compiled, so callers
 * never need #ifdef. Each module's own .cu files have their stubs in its
 * cuda_stubs.c. */
#include "core/backend.h"
#include "core/error.h"

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
