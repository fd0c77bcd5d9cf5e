/* Strongly connected components by Tarjan's algorithm with an explicit
 * stack (matrix graphs hold chains of millions of vertices, deeper than
 * any call stack), their canonical numbering (shared with the
 * forward-backward algorithm, scc_fwbw.c), the choice between the two,
 * and weak components by union-find. */
#include "graph/scc.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

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

/* name[v]: the least vertex of v's component (seen: n of scratch). */
static void least_names(const kr_graph *G, const int32_t *label, int32_t *seen,
                        int32_t *name)
{
    for (int32_t v = 0; v < G->n; v++)
        seen[v] = -1;
    for (int32_t v = 0; v < G->n; v++) {
        int32_t l = label[v];
        if (seen[l] < 0) seen[l] = v;
        name[v] = seen[l];
    }
}

static void cross_indegrees(const kr_graph *G, const int32_t *name,
                            int32_t *indeg)
{
    memset(indeg, 0, (size_t)G->n * sizeof *indeg);
    for (int32_t u = 0; u < G->n; u++)
        for (int64_t e = G->off[u]; e < G->off[u + 1]; e++)
            if (name[G->adj[e]] != name[u]) indeg[name[G->adj[e]]]++;
}

/* Kahn's algorithm, first-in first-out from the components at level
 * `from`: a component is queued when its last predecessor is, which has
 * the greatest level. */
static int32_t kahn(const kr_graph *G, const int32_t *name,
                    const int64_t *first, const int32_t *order, int32_t *level,
                    int32_t *indeg, int32_t *queue, int32_t from)
{
    int32_t head = 0, tail = 0;
    for (int32_t c = 0; c < G->n; c++)
        if (name[c] == c && level[c] == from) queue[tail++] = c;
    while (head < tail) {
        int32_t c = queue[head++];
        for (int64_t i = first[c]; i < first[c + 1]; i++) {
            int32_t u = order[i];
            for (int64_t e = G->off[u]; e < G->off[u + 1]; e++) {
                int32_t d = name[G->adj[e]];
                if (d == c || --indeg[d]) continue;
                level[d] = level[c] + 1;
                queue[tail++] = d;
            }
        }
    }
    return tail;
}

kr_status kr_scc_levels(kr_ctx *ctx, const kr_graph *G, const int32_t *name,
                        int32_t *level, int32_t *indeg, int32_t from)
{
    size_t n = (size_t)G->n + 1;
    int64_t *first = calloc(n + 1, sizeof *first);
    int32_t *order = malloc(n * sizeof *order);
    int32_t *queue = malloc(n * sizeof *queue);
    kr_status st = KR_OK;
    if (!first || !order || !queue) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
        goto done;
    }
    for (int32_t v = 0; v < G->n; v++) /* members grouped by name */
        first[name[v] + 1]++;
    for (int32_t c = 0; c < G->n; c++)
        first[c + 1] += first[c];
    for (int32_t v = 0; v < G->n; v++)
        order[first[name[v]]++] = v;
    for (int32_t c = G->n; c > 0; c--)
        first[c] = first[c - 1];
    first[0] = 0;
    kahn(G, name, first, order, level, indeg, queue, from);
    for (int32_t c = 0; c < G->n; c++)
        if (name[c] == c && level[c] < 0) {
            st = kr_fail(ctx, KR_ERR_ARG,
                         "scc: the component map leaves a cycle between "
                         "components (vertex %d)",
                         (int)c + 1);
            break;
        }
done:
    free(first);
    free(order);
    free(queue);
    return st;
}

kr_status kr_scc_rank(kr_ctx *ctx, int32_t n, const int32_t *name,
                      int32_t *level, int32_t *comp, int32_t *ncomp)
{
    int32_t *count = calloc((size_t)n + 1, sizeof *count), k = 0;
    if (!count) return kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
    for (int32_t v = 0; v < n; v++)
        if (name[v] == v) count[level[v]]++, k++;
    int32_t sum = 0;
    for (int32_t l = 0; l < n; l++) {
        int32_t here = count[l];
        count[l] = sum;
        sum += here;
    }
    for (int32_t v = 0; v < n; v++) /* each name's level read once */
        if (name[v] == v) level[v] = count[level[v]]++;
    for (int32_t v = 0; v < n; v++)
        comp[v] = level[name[v]];
    *ncomp = k;
    free(count);
    return KR_OK;
}

kr_status kr_scc_number(kr_ctx *ctx, const kr_graph *G, const int32_t *label,
                        int32_t *comp, int32_t *ncomp)
{
    size_t n = (size_t)G->n + 1;
    int32_t *name = malloc(n * 4), *level = malloc(n * 4);
    int32_t *indeg = malloc(n * 4);
    kr_status st = KR_OK;
    if (!name || !level || !indeg) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
        goto done;
    }
    least_names(G, label, level, name);
    cross_indegrees(G, name, indeg);
    for (int32_t v = 0; v < G->n; v++)
        level[v] = name[v] == v && !indeg[v] ? 0 : -1;
    KR_CHECK(st, kr_scc_levels(ctx, G, name, level, indeg, 0), done);
    st = kr_scc_rank(ctx, G->n, name, level, comp, ncomp);
done:
    free(name);
    free(level);
    free(indeg);
    return st;
}

/* --------------------------------------------------------- the choice */

static int use_gpu_fwbw(kr_ctx *ctx, const kr_graph *G, kr_scc_method method)
{
    if (ctx->device != KR_DEVICE_CUDA) return 0;
    if (method == KR_SCC_FWBW) return 1;
    return method == KR_SCC_AUTO && G->m >= KR_SCC_GPU_MIN_EDGES;
}

/* Tarjan's ids close sinks first, so in decreasing id every edge between
 * components goes forward: one relaxation pass in that order gives the
 * levels kr_scc_number's Kahn pass would (no in-degrees, no queue), then
 * the same ranks. */
typedef struct closing_order {
    int64_t *first; /* k + 1: members of c at order[first[c]..first[c+1]) */
    int32_t *order, *level, *count;
} closing_order;

static void relax_levels(const kr_graph *G, const int32_t *raw, int32_t k,
                         closing_order *x)
{
    for (int32_t v = 0; v < G->n; v++)
        x->first[raw[v] + 1]++;
    for (int32_t c = 0; c < k; c++)
        x->first[c + 1] += x->first[c];
    for (int32_t v = 0; v < G->n; v++) /* members in increasing order */
        x->order[x->first[raw[v]]++] = v;
    for (int32_t c = k; c > 0; c--)
        x->first[c] = x->first[c - 1];
    x->first[0] = 0;
    for (int32_t c = k - 1; c >= 0; c--)
        for (int64_t i = x->first[c]; i < x->first[c + 1]; i++) {
            int32_t u = x->order[i];
            for (int64_t e = G->off[u]; e < G->off[u + 1]; e++) {
                int32_t d = raw[G->adj[e]];
                if (d != c && x->level[d] <= x->level[c])
                    x->level[d] = x->level[c] + 1;
            }
        }
}

/* comp[v]: the rank of v's component by (level, least vertex); a
 * component's least vertex is its first member in order[]. */
static void rank_closing(const kr_graph *G, const int32_t *raw, int32_t k,
                         closing_order *x, int32_t *comp)
{
    for (int32_t c = 0; c < k; c++)
        x->count[x->level[c]]++;
    int32_t sum = 0;
    for (int32_t l = 0; l < k; l++) {
        int32_t here = x->count[l];
        x->count[l] = sum;
        sum += here;
    }
    for (int32_t v = 0; v < G->n; v++) {
        int32_t c = raw[v];
        if (x->order[x->first[c]] == v) x->level[c] = x->count[x->level[c]]++;
    }
    for (int32_t v = 0; v < G->n; v++)
        comp[v] = x->level[raw[v]];
}

static kr_status tarjan_numbered(kr_ctx *ctx, const kr_graph *G, int32_t *comp,
                                 int32_t *ncomp)
{
    size_t n = (size_t)G->n + 1;
    int32_t *raw = malloc(n * sizeof *raw);
    closing_order x = {calloc(n + 1, sizeof(int64_t)), malloc(n * 4),
                       calloc(n, 4), calloc(n, 4)};
    kr_status st = KR_OK;
    if (!raw || !x.first || !x.order || !x.level || !x.count)
        st = kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
    if (st == KR_OK) st = kr_scc_tarjan(ctx, G, raw, ncomp);
    if (st == KR_OK) {
        relax_levels(G, raw, *ncomp, &x);
        rank_closing(G, raw, *ncomp, &x, comp);
    }
    free(raw);
    free(x.first);
    free(x.order);
    free(x.level);
    free(x.count);
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
        if (st == KR_OK && steps == &kr_fwbw_cuda_steps)
            st = kr_scc_cuda_number(ctx, G, comp, comp, ncomp);
        else if (st == KR_OK)
            st = kr_scc_number(ctx, G, comp, comp, ncomp);
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
