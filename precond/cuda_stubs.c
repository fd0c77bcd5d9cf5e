/* Linked instead of precond/'s .cu files in a build without CUDA (CUDA=0):
 * the batched GJE has no GPU table, so callers need no #ifdef. */
#include "core/error.h"
#include "precond/blocking_dev.h"
#include "precond/gje_batch.h"
#include "precond/jacobi_dev.h"

#include <string.h>

const kr_gje_batch_ops *kr_gje_batch_cuda_ops(void) { return NULL; }

kr_status kr_jacobi_dev_inverse(kr_ctx *ctx, const kr_csr_view *A, double *d,
                                int32_t *bad_row)
{
    (void)A, (void)d;
    *bad_row = -1;
    return kr_fail(ctx, KR_ERR_UNSUPPORTED, "built without CUDA");
}

kr_status kr_blocking_dev_batch(kr_ctx *ctx, const kr_gje_csr *A, int32_t max,
                                kr_gje_batch *bb)
{
    (void)A, (void)max;
    memset(bb, 0, sizeof *bb);
    return kr_fail(ctx, KR_ERR_UNSUPPORTED, "built without CUDA");
}
