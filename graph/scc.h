/* Strongly connected components (internal).
 *
 * Two algorithms give the same result:
 *   - Tarjan's, iterative, on the host (scc.c);
 *   - the forward-backward family (Fleischer, Hendrickson, Pinar 2000;
 *     with trimming, McLendon et al. 2005), as a host driver (scc_fwbw.c)
 *     over a few data-parallel steps with two implementations: plain C
 *     with OpenMP (scc_fwbw.c) and CUDA kernels (scc.cu).
 * Either one only partitions the vertices; kr_scc_number then numbers the
 * components canonically, so callers cannot tell which one ran. */
#ifndef KR_GRAPH_SCC_H
#define KR_GRAPH_SCC_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define KR_FWBW_HD __host__ __device__
#else
#define KR_FWBW_HD
#endif

/* KR_SCC_AUTO takes the GPU's forward-backward steps from this many edges
 * on. Provisional: on an H200 (2026-11-27, bench/results/grail-h200-
 * 2026-11-27.md) the edge count did not predict the faster method (fwbw
 * won on poisson3d:100 and dag:1000000,50, lost on dag:1000000,100 and
 * convdiff2d:1000); a pass budget would track the cause better. */
#define KR_SCC_GPU_MIN_EDGES ((int64_t)1 << 22)

/* Tarjan's components, numbered as Tarjan closes them (sinks first). */
kr_status kr_scc_tarjan(kr_ctx *ctx, const kr_graph *G, int32_t *comp,
                        int32_t *ncomp);

/* label[v] in 0..n-1 names v's component (equal labels, same SCC).
 * comp[v] becomes the component's rank by (level, smallest vertex): the
 * level is the longest path from a source of the condensation, so every
 * edge u -> v has comp[u] <= comp[v]. KR_ERR_ARG when the labels do not
 * condense G into a DAG. */
kr_status kr_scc_number(kr_ctx *ctx, const kr_graph *G, const int32_t *label,
                        int32_t *comp, int32_t *ncomp);

/* kr_scc_number's parts, for the GPU's to finish on the host. name[v]
 * is the least vertex of v's component; level[] and indeg[] are indexed
 * by name. kr_scc_levels runs Kahn's algorithm from the components whose
 * level is `from` (those of lower level are done, the others -1; indeg
 * counts their edges from components not yet done); kr_scc_rank turns
 * the levels into comp[] (level[] is overwritten). */
kr_status kr_scc_levels(kr_ctx *ctx, const kr_graph *G, const int32_t *name,
                        int32_t *level, int32_t *indeg, int32_t from);
kr_status kr_scc_rank(kr_ctx *ctx, int32_t n, const int32_t *name,
                      int32_t *level, int32_t *comp, int32_t *ncomp);

/* kr_scc_number with the names, in-degrees and levels found on the GPU
 * (scc_number.cu): one pass per level of the condensation, then, after
 * KR_SCC_GPU_LEVEL_PASSES, the host finishes; the ranks are made on the
 * host. The same comp[]. */
#define KR_SCC_GPU_LEVEL_PASSES 4096
kr_status kr_scc_cuda_number(kr_ctx *ctx, const kr_graph *G,
                             const int32_t *label, int32_t *comp,
                             int32_t *ncomp);
/* kr_graph_condense on the GPU: the same edges, each vertex's sorted. */
kr_status kr_graph_condense_cuda(kr_ctx *ctx, const kr_graph *G,
                                 const int32_t *comp, int32_t ncomp,
                                 kr_graph **D);

/* ------------------------------------------------------ forward-backward */

/* The state of a run, in host or device memory. Every vertex is active
 * (sub[v] >= 0: the subproblem it belongs to) or done (sub[v] == -1,
 * label[v] its component's name). A subproblem is always a union of
 * SCCs; one whose id was reused by another only merges with it, which
 * keeps that true. fw and bw hold the pass at which the pivot's forward
 * and backward searches reached v (0: not reached). */
typedef struct kr_fwbw_arrays {
    int32_t n;
    const int64_t *off, *toff; /* G's out-edges and in-edges (transpose) */
    const int32_t *adj, *tadj;
    int32_t *sub, *label, *fw, *bw;
    int32_t *elect; /* n: the least vertex of each subproblem id */
} kr_fwbw_arrays;

/* The data-parallel steps of a run, each one pass over the vertices. */
typedef struct kr_fwbw_steps {
    const char *name;   /* "fwbw-cpu", "fwbw-gpu" */
    int32_t max_passes; /* trim and reach passes before the host's Tarjan
                           takes what is left (chains: one pass a vertex) */
    /* every vertex active in subproblem 0 */
    kr_status (*create)(kr_ctx *ctx, const kr_graph *G, const kr_graph *T,
                        void **state);
    /* marks, then removes, the active vertices with no in-edge or no
     * out-edge inside their subproblem, as of the start of the pass: each
     * is its own SCC */
    kr_status (*trim)(kr_ctx *ctx, void *state, int64_t *removed);
    /* each subproblem's id becomes its least vertex, its pivot; fw and bw
     * are 1 at the pivots and 0 elsewhere */
    kr_status (*elect)(kr_ctx *ctx, void *state);
    /* from the vertices reached at pass `level`, along out-edges (fw) and
     * in-edges (bw) inside their subproblem, marking level + 1 */
    kr_status (*reach)(kr_ctx *ctx, void *state, int32_t level, int *grew);
    /* FW and BW: the pivot's SCC, done; FW only, BW only, neither: three
     * new subproblems (kr_fwbw_slot) */
    kr_status (*split)(kr_ctx *ctx, void *state, int64_t *placed);
    /* sub and label to the host */
    kr_status (*result)(kr_ctx *ctx, void *state, int32_t *sub, int32_t *label);
    void (*destroy)(kr_ctx *ctx, void *state);
} kr_fwbw_steps;

extern const kr_fwbw_steps kr_fwbw_cpu_steps;
extern const kr_fwbw_steps kr_fwbw_cuda_steps; /* create: NOT_COMPILED
                                                  without CUDA */

typedef struct kr_fwbw_stats {
    int32_t passes, rounds;
    int32_t host_rest; /* vertices left to Tarjan after the pass budget */
} kr_fwbw_stats;

/* Partitions G into SCCs with the steps: label[v] names v's component
 * (see kr_scc_number). */
kr_status kr_scc_fwbw(kr_ctx *ctx, const kr_graph *G,
                      const kr_fwbw_steps *steps, int32_t *label,
                      kr_fwbw_stats *stats);

/* v has an edge to (or, on the transpose, from) another active vertex of
 * subproblem s. */
static inline KR_FWBW_HD int kr_fwbw_edge_within(const int64_t *off,
                                                 const int32_t *adj,
                                                 const int32_t *sub, int32_t v,
                                                 int32_t s)
{
    for (int64_t e = off[v]; e < off[v + 1]; e++)
        if (adj[e] != v && sub[adj[e]] == s) return 1;
    return 0;
}

/* Active v is its own SCC when nothing inside its subproblem leads in or
 * out of it. */
static inline KR_FWBW_HD int kr_fwbw_trimmable(const kr_fwbw_arrays *a,
                                               int32_t v)
{
    int32_t s = a->sub[v];
    return !kr_fwbw_edge_within(a->off, a->adj, a->sub, v, s) ||
           !kr_fwbw_edge_within(a->toff, a->tadj, a->sub, v, s);
}

/* The id of part cls (0: FW only, 1: BW only, 2: neither) of subproblem
 * s: a hash into 0..n-1, so ids stay vertex numbers (elect's slots). */
static inline KR_FWBW_HD int32_t kr_fwbw_slot(int32_t s, int cls, int32_t n)
{
    uint64_t x = (uint64_t)s * 4 + (uint64_t)cls + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return (int32_t)((x ^ (x >> 31)) % (uint64_t)n);
}

/* split's rule for active v; returns 1 when v joined its pivot's SCC. */
static inline KR_FWBW_HD int kr_fwbw_split_vertex(const kr_fwbw_arrays *a,
                                                  int32_t v)
{
    int f = a->fw[v] > 0, b = a->bw[v] > 0;
    if (f && b) {
        a->label[v] = a->sub[v]; /* the pivot names the SCC */
        a->sub[v] = -1;
        return 1;
    }
    a->sub[v] = kr_fwbw_slot(a->sub[v], f ? 0 : b ? 1 : 2, a->n);
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif
