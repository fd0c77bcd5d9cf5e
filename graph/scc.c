/* Strongly connected components by Tarjan's algorithm with an explicit
 * stack (matrix graphs hold chains of millions of vertices, deeper than
 * any call stack), and weak components by union-find. */
#include "core/error.h"
#include "graph/graph.h"

#include <stdlib.h>

typedef struct tarjan {
    const kr_graph *G;
    int32_t *index, *low, *comp; /* comp = -1 while on the SCC stack */
    int64_t *next;               /* the next out-edge of v to look at */
    int32_t *scc_stack, *call_stack;
    int32_t nscc, ncall, counter, ncomp;
} tarjan;

static void visit(tarjan *t, int32_t v)
{
    t->index[v] = t->low[v] = t->counter++;
    t->next[v] = t->G->off[v];
    t->scc_stack[t->nscc++] = v;
    t->call_stack[t->ncall++] = v;
}

/* v is finished: it closes an SCC when no edge led below its index. */
static void finish(tarjan *t, int32_t v)
{
    t->ncall--;
    if (t->low[v] == t->index[v]) {
        int32_t w;
        do {
            w = t->scc_stack[--t->nscc];
            t->comp[w] = t->ncomp;
        } while (w != v);
        t->ncomp++;
    }
    if (t->ncall) {
        int32_t u = t->call_stack[t->ncall - 1];
        if (t->low[v] < t->low[u]) t->low[u] = t->low[v];
    }
}

static void search(tarjan *t, int32_t root)
{
    const kr_graph *G = t->G;
    visit(t, root);
    while (t->ncall) {
        int32_t v = t->call_stack[t->ncall - 1];
        if (t->next[v] == G->off[v + 1]) {
            finish(t, v);
            continue;
        }
        int32_t w = G->adj[t->next[v]++];
        if (t->index[w] < 0)
            visit(t, w);
        else if (t->comp[w] < 0 && t->index[w] < t->low[v])
            t->low[v] = t->index[w];
    }
}

kr_status kr_graph_scc(kr_ctx *ctx, const kr_graph *G, int32_t *comp,
                       int32_t *ncomp)
{
    size_t n = (size_t)G->n + 1;
    tarjan t = {G,
                malloc(n * sizeof(int32_t)),
                malloc(n * sizeof(int32_t)),
                comp,
                malloc(n * sizeof(int64_t)),
                malloc(n * sizeof(int32_t)),
                malloc(n * sizeof(int32_t)),
                0,
                0,
                0,
                0};
    kr_status st = KR_OK;
    if (!t.index || !t.low || !t.next || !t.scc_stack || !t.call_stack) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
        goto done;
    }
    for (int32_t v = 0; v < G->n; v++) {
        t.index[v] = -1;
        comp[v] = -1;
    }
    for (int32_t v = 0; v < G->n; v++)
        if (t.index[v] < 0) search(&t, v);
    /* Tarjan closes sinks first: reversed, the ids are a topological
     * order of the condensation. */
    for (int32_t v = 0; v < G->n; v++)
        comp[v] = t.ncomp - 1 - comp[v];
    *ncomp = t.ncomp;
done:
    free(t.index);
    free(t.low);
    free(t.next);
    free(t.scc_stack);
    free(t.call_stack);
    return st;
}

static int32_t find_root(int32_t *parent, int32_t v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]]; /* path halving */
        v = parent[v];
    }
    return v;
}

kr_status kr_graph_weak_components(kr_ctx *ctx, const kr_graph *G,
                                   int32_t *count)
{
    int32_t *parent = malloc(((size_t)G->n + 1) * sizeof *parent);
    if (!parent) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    for (int32_t v = 0; v < G->n; v++)
        parent[v] = v;
    int32_t roots = G->n;
    for (int32_t v = 0; v < G->n; v++)
        for (int64_t e = G->off[v]; e < G->off[v + 1]; e++) {
            int32_t a = find_root(parent, v), b = find_root(parent, G->adj[e]);
            if (a == b) continue;
            parent[a < b ? b : a] = a < b ? a : b;
            roots--;
        }
    free(parent);
    *count = roots;
    return KR_OK;
}
