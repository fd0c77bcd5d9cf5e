/* Linked instead of graph/'s .cu files in a build without CUDA (CUDA=0):
 * the GPU reachability index and SCC steps say they were not compiled, so
 * callers need no #ifdef. */
#include "core/error.h"
#include "graph/grail.h"
#include "graph/scc.h"

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

static kr_status fwbw_not_compiled(kr_ctx *ctx, const kr_graph *G,
                                   const kr_graph *T, void **state)
{
    (void)G, (void)T, (void)state;
    return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                   "the GPU's SCC steps need a build with CUDA");
}

/* create fails, so the driver calls nothing else */
const kr_fwbw_steps kr_fwbw_cuda_steps = {
    "fwbw-gpu", 0, fwbw_not_compiled, NULL, NULL, NULL, NULL, NULL, NULL};

kr_status kr_scc_cuda_number(kr_ctx *ctx, const kr_graph *G,
                             const int32_t *label, int32_t *comp,
                             int32_t *ncomp)
{
    (void)G, (void)label, (void)comp, (void)ncomp;
    return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                   "the GPU's SCC numbering needs a build with CUDA");
}

kr_status kr_graph_condense_cuda(kr_ctx *ctx, const kr_graph *G,
                                 const int32_t *comp, int32_t ncomp,
                                 kr_graph **D)
{
    (void)G, (void)comp, (void)ncomp;
    *D = NULL;
    return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                   "the GPU's condensation needs a build with CUDA");
}
