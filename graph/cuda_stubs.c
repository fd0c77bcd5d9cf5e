/* Linked instead of graph/'s .cu files in a build without CUDA (CUDA=0):
 * the GPU reachability index says it was not compiled, so callers need no
 * #ifdef. */
#include "core/error.h"
#include "graph/grail.h"

kr_status kr_grail_cuda_label(kr_ctx *ctx, kr_reach *R)
{
    (void)R;
    return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                   "the GPU reachability index needs a build with CUDA");
}

kr_status kr_grail_cuda_query(kr_ctx *ctx, kr_reach *R, int64_t q,
                              const int32_t *dag_pairs, unsigned char *answer)
{
    (void)R, (void)q, (void)dag_pairs, (void)answer;
    return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                   "the GPU reachability index needs a build with CUDA");
}

void kr_grail_cuda_free(kr_reach *R) { (void)R; }
