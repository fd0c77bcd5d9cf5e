/* The GRAIL index (internal): SCC map, condensation DAG in a topological
 * numbering, d min-post interval labels per DAG vertex, and the hooks of
 * the GPU labeling and batched queries (grail.cu; stubs without CUDA). */
#ifndef KR_GRAPH_GRAIL_H
#define KR_GRAPH_GRAIL_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A traversal's marks and stack: one per thread of queries. */
typedef struct kr_grail_ws {
    uint32_t *mark, stamp;
    int32_t *stack;
} kr_grail_ws;

struct kr_reach {
    int32_t n;             /* vertices of the graph                      */
    int32_t *comp;         /* vertex -> DAG vertex (topologically numbered) */
    kr_graph *dag;         /* the condensation                           */
    int d;                 /* labels per DAG vertex                      */
    unsigned gpu_variants; /* KR_REACH_GPU_* of the options        */
    uint64_t seed;
    int32_t *lab;   /* [v][i] = (lo, hi): 2 * d * dag->n entries   */
    int32_t *tree;  /* [v][i] = (first, post): v's subtree in the spanning
                       tree of traversal i was numbered first..post, v
                       itself post; same layout. NULL when the labels
                      were built on the GPU: it stays there, for the
                      GPU queries' positive cut                     */
    kr_grail_ws ws; /* for kr_reach_query                          */
    void *gpu;      /* the device copy (grail.cu), or NULL         */
    kr_reach_info info;
    /* The last GPU batch searched by warps: queries a warp
     * searched, and those it handed to the bit-parallel search (a stack
     * too small, or no memory for the warps' space: all of them). */
    int64_t warp_searched, warp_fallbacks;
};

/* Does DAG vertex a reach b: topological order, labels, then a DFS pruned
 * by both. *by_labels is set to 1 when no DFS was needed. */
int kr_grail_dag_query(const kr_reach *R, kr_grail_ws *ws, int32_t a, int32_t b,
                       int *by_labels);
/* 0 when the labels (or the order) say "no" at once, 1 when a == b, -1
 * when a traversal must decide. */
int kr_grail_prefilter(const kr_reach *R, int32_t a, int32_t b);

/* Whether the GPU searches a warp per query (KR_REACH_GPU_* flags). */
static inline int kr_reach_warp_queries(unsigned gpu_variants)
{
    return (gpu_variants & KR_REACH_GPU_WARP_QUERIES) ||
           !(gpu_variants & KR_REACH_GPU_BIT_QUERIES);
}

kr_status kr_grail_ws_init(kr_ctx *ctx, int32_t n, kr_grail_ws *ws);
void kr_grail_ws_free(kr_grail_ws *ws);

/* GPU: builds R->lab on the device (and copies it to the host), keeping
 * the DAG and labels there in R->gpu. */
kr_status kr_grail_cuda_label(kr_ctx *ctx, kr_reach *R);
/* Answers the undecided queries dag_pairs[2k], [2k+1] (DAG vertices) into
 * answer[k], k < q, on the GPU. */
kr_status kr_grail_cuda_query(kr_ctx *ctx, kr_reach *R, int64_t q,
                              const int32_t *dag_pairs, unsigned char *answer);
void kr_grail_cuda_free(kr_reach *R);

#ifdef __cplusplus
}
#endif

#endif
