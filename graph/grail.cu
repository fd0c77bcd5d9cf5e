/* GPU side of the GRAIL index: placeholder until the kernels land. */
#include "core/error.h"
#include "graph/grail.h"

kr_status kr_grail_cuda_label(kr_ctx *ctx, kr_reach *R)
{
    (void)R;
    return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                   "the GPU reachability index is not written yet");
}

kr_status kr_grail_cuda_query(kr_ctx *ctx, kr_reach *R, int64_t q,
                              const int32_t *dag_pairs, unsigned char *answer)
{
    (void)R, (void)q, (void)dag_pairs, (void)answer;
    return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                   "the GPU reachability index is not written yet");
}

void kr_grail_cuda_free(kr_reach *R) { (void)R; }
