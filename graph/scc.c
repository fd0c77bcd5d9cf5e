/* Strongly connected components by Tarjan's algorithm with an explicit
 * stack (matrix graphs hold chains of millions of vertices, deeper than
 * any call stack), their canonical numbering (shared with the
 * forward-backward algorithm, scc_fwbw.c), the choice between the two,
 * and weak components by union-find. */
#include "graph/scc.h"

#include "core/error.h"

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

kr_status kr_scc_tarjan(kr_ctx *ctx, const kr_graph *G, int32_t *comp,
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
    *ncomp = t.ncomp;
done:
    free(t.index);
    free(t.low);
    free(t.next);
    free(t.scc_stack);
    free(t.call_stack);
    return st;
}

/* ------------------------------------------------ canonical numbering */

typedef struct numbering {
    const kr_graph *G;
    int32_t k;      /* components                                 */
    int32_t *tmp;   /* v -> component, by least vertex            */
    int64_t *first; /* k + 1: the members of c are order[first[c]..) */
    int32_t *order; /* vertices grouped by component              */
    int32_t *indeg; /* edges into c from other components         */
    int32_t *level; /* longest path from a source, then the rank  */
    int32_t *queue; /* k                                          */
} numbering;

/* Components numbered by their least vertex: the order labels first
 * appear in; dense[] maps a label to that number. */
static void first_appearance(numbering *x, const int32_t *label, int32_t *dense)
{
    const kr_graph *G = x->G;
    for (int32_t v = 0; v < G->n; v++)
        dense[v] = -1;
    x->k = 0;
    for (int32_t v = 0; v < G->n; v++) {
        int32_t l = label[v];
        if (dense[l] < 0) dense[l] = x->k++;
        x->tmp[v] = dense[l];
    }
}

static void group_members(numbering *x)
{
    const kr_graph *G = x->G;
    for (int32_t v = 0; v < G->n; v++)
        x->first[x->tmp[v] + 1]++;
    for (int32_t c = 0; c < x->k; c++)
        x->first[c + 1] += x->first[c];
    for (int32_t v = 0; v < G->n; v++)
        x->order[x->first[x->tmp[v]]++] = v;
    for (int32_t c = x->k; c > 0; c--)
        x->first[c] = x->first[c - 1];
    x->first[0] = 0;
}

/* Kahn's algorithm on the condensation, taken from G's edges: a component
 * is queued when its last predecessor is, which has the greatest level.
 * Returns the components placed (k unless the labels close a cycle). */
static int32_t kahn_levels(numbering *x)
{
    const kr_graph *G = x->G;
    for (int32_t u = 0; u < G->n; u++)
        for (int64_t e = G->off[u]; e < G->off[u + 1]; e++)
            if (x->tmp[G->adj[e]] != x->tmp[u]) x->indeg[x->tmp[G->adj[e]]]++;
    int32_t head = 0, tail = 0;
    for (int32_t c = 0; c < x->k; c++)
        if (!x->indeg[c]) {
            x->level[c] = 0;
            x->queue[tail++] = c;
        }
    while (head < tail) {
        int32_t c = x->queue[head++];
        for (int64_t i = x->first[c]; i < x->first[c + 1]; i++) {
            int32_t u = x->order[i];
            for (int64_t e = G->off[u]; e < G->off[u + 1]; e++) {
                int32_t d = x->tmp[G->adj[e]];
                if (d == c || --x->indeg[d]) continue;
                x->level[d] = x->level[c] + 1;
                x->queue[tail++] = d;
            }
        }
    }
    return tail;
}

/* level[c] becomes c's rank by (level, least vertex): a counting sort by
 * level, stable in c. indeg (all zero after Kahn) holds the counts. */
static void rank_by_level(numbering *x)
{
    int32_t *count = x->indeg;
    for (int32_t c = 0; c < x->k; c++)
        count[x->level[c]]++;
    int32_t sum = 0;
    for (int32_t l = 0; l < x->k; l++) {
        int32_t here = count[l];
        count[l] = sum;
        sum += here;
    }
    for (int32_t c = 0; c < x->k; c++)
        x->level[c] = count[x->level[c]]++;
}

kr_status kr_scc_number(kr_ctx *ctx, const kr_graph *G, const int32_t *label,
                        int32_t *comp, int32_t *ncomp)
{
    size_t n = (size_t)G->n + 1;
    numbering x = {G,
                   0,
                   malloc(n * sizeof(int32_t)),
                   calloc(n + 1, sizeof(int64_t)),
                   malloc(n * sizeof(int32_t)),
                   calloc(n, sizeof(int32_t)),
                   malloc(n * sizeof(int32_t)),
                   malloc(n * sizeof(int32_t))};
    kr_status st = KR_OK;
    if (!x.tmp || !x.first || !x.order || !x.indeg || !x.level || !x.queue) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
        goto done;
    }
    first_appearance(&x, label, x.queue);
    group_members(&x);
    if (kahn_levels(&x) != x.k) {
        st = kr_fail(ctx, KR_ERR_ARG,
                     "scc: the component map leaves a cycle between "
                     "components");
        goto done;
    }
    rank_by_level(&x);
    for (int32_t v = 0; v < G->n; v++)
        comp[v] = x.level[x.tmp[v]];
    *ncomp = x.k;
done:
    free(x.tmp);
    free(x.first);
    free(x.order);
    free(x.indeg);
    free(x.level);
    free(x.queue);
    return st;
}

/* --------------------------------------------------------- the choice */

static int use_gpu_fwbw(kr_ctx *ctx, const kr_graph *G, kr_scc_method method)
{
    if (ctx->device != KR_DEVICE_CUDA) return 0;
    if (method == KR_SCC_FWBW) return 1;
    return method == KR_SCC_AUTO && G->m >= KR_SCC_GPU_MIN_EDGES;
}

static kr_status tarjan_numbered(kr_ctx *ctx, const kr_graph *G, int32_t *comp,
                                 int32_t *ncomp)
{
    int32_t *raw = malloc(((size_t)G->n + 1) * sizeof *raw);
    if (!raw) return kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
    kr_status st = kr_scc_tarjan(ctx, G, raw, ncomp);
    if (st == KR_OK) st = kr_scc_number(ctx, G, raw, comp, ncomp);
    free(raw);
    return st;
}

kr_status kr_graph_scc_with(kr_ctx *ctx, const kr_graph *G,
                            kr_scc_method method, int32_t *comp, int32_t *ncomp,
                            kr_scc_info *info)
{
    if (method < KR_SCC_TARJAN || method > KR_SCC_AUTO)
        return kr_fail(ctx, KR_ERR_ARG, "scc: unknown method %d", (int)method);
    kr_scc_info local = {"tarjan", 0, 0, 0, 0.0};
    double t0 = kr_wtime();
    kr_status st;
    if (method == KR_SCC_TARJAN ||
        (method == KR_SCC_AUTO && !use_gpu_fwbw(ctx, G, method))) {
        st = tarjan_numbered(ctx, G, comp, ncomp);
    } else {
        const kr_fwbw_steps *steps = use_gpu_fwbw(ctx, G, method)
                                         ? &kr_fwbw_cuda_steps
                                         : &kr_fwbw_cpu_steps;
        kr_fwbw_stats fs = {0, 0, 0};
        local.method = steps->name;
        st = kr_scc_fwbw(ctx, G, steps, comp, &fs);
        if (st == KR_OK) st = kr_scc_number(ctx, G, comp, comp, ncomp);
        local.passes = fs.passes;
        local.rounds = fs.rounds;
        local.host_rest = fs.host_rest;
    }
    local.seconds = kr_wtime() - t0;
    if (info) *info = local;
    return st;
}

kr_status kr_graph_scc(kr_ctx *ctx, const kr_graph *G, int32_t *comp,
                       int32_t *ncomp)
{
    return kr_graph_scc_with(ctx, G, KR_SCC_TARJAN, comp, ncomp, NULL);
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
