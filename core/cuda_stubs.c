/* Linked instead of the .cu files in a build without CUDA (CUDA=0): every
 * CUDA entry point exists and says it was not compiled, so callers never
 * need #ifdef. */
#include "core/error.h"
#include "spmv/format.h"

int kr_built_with_cuda(void) { return 0; }

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

#include "precond/gje_batch.h"
const kr_gje_batch_ops *kr_gje_batch_cuda_ops(void) { return NULL; }
