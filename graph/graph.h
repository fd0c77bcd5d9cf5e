/* Directed graphs for the reachability module: adjacency lists of
 * out-edges (CSR-like, 64-bit offsets so 10^8-edge generated DAGs fit),
 * strongly connected components and the condensation DAG. Internal. */
#ifndef KR_GRAPH_GRAPH_H
#define KR_GRAPH_GRAPH_H

#include "core/ctx.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kr_graph {
    int32_t n;
    int64_t m;
    int64_t *off; /* n + 1 entries                               */
    int32_t *adj; /* m entries: out-neighbours of v at off[v..v+1) */
};

/* An empty graph of n vertices with room for m edges (off zeroed). */
kr_status kr_graph_alloc(kr_ctx *ctx, int32_t n, int64_t m, kr_graph **G);

/* The reverse graph (every edge turned around). */
kr_status kr_graph_transpose(kr_ctx *ctx, const kr_graph *G, kr_graph **T);

/* The condensation of G under comp (ids 0..ncomp-1, each edge of G going
 * from a lower id to a higher or equal one): edge a -> b for a != b when
 * some edge of G joins them, each once. */
kr_status kr_graph_condense(kr_ctx *ctx, const kr_graph *G, const int32_t *comp,
                            int32_t ncomp, kr_graph **D);

/* splitmix64 step: the generators' and labels' random numbers. */
static inline uint64_t kr_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#ifdef __cplusplus
}
#endif

#endif
