/* Graphs as adjacency lists of out-edges: built from a matrix pattern or
 * an edge list, turned around, and condensed by a component map. */
#include "graph/graph.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

kr_status kr_graph_alloc(kr_ctx *ctx, int32_t n, int64_t m, kr_graph **G)
{
    *G = NULL;
    if (n < 0 || m < 0)
        return kr_fail(ctx, KR_ERR_ARG, "graph: %d vertices, %lld edges",
                       (int)n, (long long)m);
    kr_graph *g = calloc(1, sizeof *g);
    if (g) {
        g->off = calloc((size_t)n + 1, sizeof *g->off);
        g->adj = malloc(((size_t)m + 1) * sizeof *g->adj);
    }
    if (!g || !g->off || !g->adj) {
        kr_graph_destroy(g);
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "graph: out of host memory for %d "
                       "vertices and %lld edges",
                       (int)n, (long long)m);
    }
    g->n = n;
    g->m = m;
    *G = g;
    return KR_OK;
}

void kr_graph_destroy(kr_graph *G)
{
    if (!G) return;
    free(G->off);
    free(G->adj);
    free(G);
}

int32_t kr_graph_vertices(const kr_graph *G) { return G ? G->n : 0; }
int64_t kr_graph_edges(const kr_graph *G) { return G ? G->m : 0; }

void kr_graph_out(const kr_graph *G, int32_t v, const int32_t **out,
                  int64_t *count)
{
    *out = G->adj + G->off[v];
    *count = G->off[v + 1] - G->off[v];
}

/* off[v] holds v's out-degree on entry and v's first slot on return. */
static void degrees_to_offsets(int32_t n, int64_t *off)
{
    int64_t sum = 0;
    for (int32_t v = 0; v <= n; v++) {
        int64_t d = v < n ? off[v] : 0;
        off[v] = sum;
        sum += d;
    }
}

kr_status kr_graph_from_edges(kr_ctx *ctx, int32_t n, int64_t m,
                              const int32_t *src, const int32_t *dst,
                              kr_graph **G)
{
    *G = NULL;
    for (int64_t e = 0; e < m; e++)
        if (src[e] < 0 || src[e] >= n || dst[e] < 0 || dst[e] >= n)
            return kr_fail(
                ctx, KR_ERR_ARG, "graph: edge %lld (%d -> %d) leaves 0..%d",
                (long long)e + 1, (int)src[e], (int)dst[e], (int)n - 1);
    kr_graph *g;
    KR_TRY(kr_graph_alloc(ctx, n, m, &g));
    for (int64_t e = 0; e < m; e++)
        g->off[src[e]]++;
    degrees_to_offsets(n, g->off);
    for (int64_t e = 0; e < m; e++)
        g->adj[g->off[src[e]]++] = dst[e];
    for (int32_t v = n; v > 0; v--) /* each off[v] moved to off[v+1] */
        g->off[v] = g->off[v - 1];
    g->off[0] = 0;
    *G = g;
    return KR_OK;
}

kr_status kr_graph_transpose(kr_ctx *ctx, const kr_graph *G, kr_graph **T)
{
    kr_graph *t;
    KR_TRY(kr_graph_alloc(ctx, G->n, G->m, &t));
    for (int64_t e = 0; e < G->m; e++)
        t->off[G->adj[e]]++;
    degrees_to_offsets(G->n, t->off);
    for (int32_t v = 0; v < G->n; v++)
        for (int64_t e = G->off[v]; e < G->off[v + 1]; e++)
            t->adj[t->off[G->adj[e]]++] = v;
    for (int32_t v = G->n; v > 0; v--)
        t->off[v] = t->off[v - 1];
    t->off[0] = 0;
    *T = t;
    return KR_OK;
}

/* Row i's entries a_ij (j != i) are edges j -> i: the transpose of the
 * pattern without its diagonal; stored zeros are no edges. */
static int is_edge(const kr_csr *A, int32_t i, int32_t k)
{
    return A->colind[k] != i && (!A->val || A->val[k] != 0.0);
}

kr_status kr_graph_from_csr(kr_ctx *ctx, const kr_csr *A, kr_graph **G)
{
    *G = NULL;
    if (!A || A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG, "graph: the matrix is not square");
    int32_t n = A->nrows;
    kr_graph *g;
    KR_TRY(kr_graph_alloc(ctx, n, A->nnz, &g));
    for (int32_t i = 0; i < n; i++)
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (is_edge(A, i, k)) g->off[A->colind[k]]++;
    degrees_to_offsets(n, g->off);
    for (int32_t i = 0; i < n; i++)
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (is_edge(A, i, k)) g->adj[g->off[A->colind[k]]++] = i;
    for (int32_t v = n; v > 0; v--)
        g->off[v] = g->off[v - 1];
    g->off[0] = 0;
    g->m = g->off[n];
    *G = g;
    return KR_OK;
}

/* Vertices grouped by component (a counting sort), then each component's
 * distinct targets gathered with a last-seen mark: O(n + m). */
kr_status kr_graph_condense(kr_ctx *ctx, const kr_graph *G, const int32_t *comp,
                            int32_t ncomp, kr_graph **D)
{
    *D = NULL;
    int64_t *first = calloc((size_t)ncomp + 1, sizeof *first);
    int32_t *order = malloc(((size_t)G->n + 1) * sizeof *order);
    int32_t *seen = malloc(((size_t)ncomp + 1) * sizeof *seen);
    kr_graph *d = NULL;
    kr_status st = KR_OK;
    if (!first || !order || !seen) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "graph: out of host memory");
        goto done;
    }
    KR_CHECK(st, kr_graph_alloc(ctx, ncomp, G->m, &d), done);
    for (int32_t v = 0; v < G->n; v++)
        first[comp[v] + 1]++;
    for (int32_t c = 0; c < ncomp; c++)
        first[c + 1] += first[c];
    for (int32_t v = 0; v < G->n; v++)
        order[first[comp[v]]++] = v;
    for (int32_t c = ncomp; c > 0; c--)
        first[c] = first[c - 1];
    first[0] = 0;
    memset(seen, 0xff, ((size_t)ncomp + 1) * sizeof *seen);
    int64_t m = 0;
    for (int32_t c = 0; c < ncomp; c++) {
        d->off[c] = m;
        for (int64_t k = first[c]; k < first[c + 1]; k++) {
            int32_t v = order[k];
            for (int64_t e = G->off[v]; e < G->off[v + 1]; e++) {
                int32_t t = comp[G->adj[e]];
                if (t == c || seen[t] == c) continue;
                seen[t] = c;
                d->adj[m++] = t;
            }
        }
    }
    d->off[ncomp] = m;
    d->m = m;
    *D = d;
    d = NULL;
done:
    kr_graph_destroy(d);
    free(first);
    free(order);
    free(seen);
    return st;
}
