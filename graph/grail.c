/* GRAIL (Yildirim, Chaoji, Zaki, PVLDB 2010): the graph's SCCs condensed
 * into a DAG numbered in topological order, then d randomized DFS
 * traversals, each giving every vertex the interval [lo, hi] with hi its
 * post-order rank and lo the least rank below it. If u reaches v, v's
 * interval lies in u's for every traversal; so one label that does not
 * contain v's answers "no", and a DFS from u that enters only vertices
 * whose labels contain v's decides the rest. The topological numbering
 * gives a second free test: u reaches v only if comp(u) <= comp(v); and
 * each traversal's spanning tree a positive one (GRAIL's "positive cut"):
 * v is in u's tree subtree, so u reaches v, when v's post-order number
 * lies in the range that subtree was numbered with. */
#include "graph/grail.h"

#include "core/error.h"
#include "graph/scc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void kr_reach_options_default(kr_reach_options *o)
{
    o->labels = 5;
    o->seed = 1;
    o->scc = KR_SCC_TARJAN;
    o->gpu_variants = 0;
}

kr_status kr_grail_ws_init(kr_ctx *ctx, int32_t n, kr_grail_ws *ws)
{
    ws->stamp = 0;
    ws->mark = calloc((size_t)n + 1, sizeof *ws->mark);
    ws->stack = malloc(((size_t)n + 1) * sizeof *ws->stack);
    if (ws->mark && ws->stack) return KR_OK;
    kr_grail_ws_free(ws);
    return kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
}

void kr_grail_ws_free(kr_grail_ws *ws)
{
    free(ws->mark);
    free(ws->stack);
    ws->mark = NULL;
    ws->stack = NULL;
}

/* A fresh stamp: marks from earlier searches no longer count. */
static uint32_t next_stamp(kr_grail_ws *ws, int32_t n)
{
    if (++ws->stamp == 0) {
        memset(ws->mark, 0, (size_t)n * sizeof *ws->mark);
        ws->stamp = 1;
    }
    return ws->stamp;
}

static int contains(const int32_t *la, const int32_t *lb, int d)
{
    for (int i = 0; i < d; i++)
        if (lb[2 * i] < la[2 * i] || lb[2 * i + 1] > la[2 * i + 1]) return 0;
    return 1;
}

/* b's post-order number in a's tree range, for some traversal. */
static int in_subtree(const int32_t *ta, const int32_t *tb, int d)
{
    for (int i = 0; i < d; i++)
        if (tb[2 * i + 1] >= ta[2 * i] && tb[2 * i + 1] <= ta[2 * i + 1])
            return 1;
    return 0;
}

int kr_grail_prefilter(const kr_reach *R, int32_t a, int32_t b)
{
    if (a == b) return 1;
    if (a > b) return 0;
    size_t s = (size_t)2 * R->d;
    if (!contains(R->lab + s * a, R->lab + s * b, R->d)) return 0;
    if (!R->tree) return -1; /* kept on the GPU */
    return in_subtree(R->tree + s * a, R->tree + s * b, R->d) ? 1 : -1;
}

int kr_grail_dag_query(const kr_reach *R, kr_grail_ws *ws, int32_t a, int32_t b,
                       int *by_labels)
{
    int pre = kr_grail_prefilter(R, a, b);
    *by_labels = pre >= 0;
    if (pre >= 0) return pre;
    const kr_graph *D = R->dag;
    size_t s = (size_t)2 * R->d;
    const int32_t *lb = R->lab + s * b, *tb = R->tree ? R->tree + s * b : NULL;
    uint32_t stamp = next_stamp(ws, D->n);
    int32_t top = 0;
    ws->stack[top++] = a;
    ws->mark[a] = stamp;
    while (top) {
        int32_t x = ws->stack[--top];
        for (int64_t e = D->off[x]; e < D->off[x + 1]; e++) {
            int32_t c = D->adj[e];
            if (c == b) return 1;
            if (c > b || ws->mark[c] == stamp) continue;
            ws->mark[c] = stamp;
            if (!contains(R->lab + s * c, lb, R->d)) continue;
            if (tb && in_subtree(R->tree + s * c, tb, R->d)) return 1;
            ws->stack[top++] = c;
        }
    }
    return 0;
}

int kr_reach_query(kr_reach *R, int32_t u, int32_t v)
{
    if (u < 0 || v < 0 || u >= R->n || v >= R->n) return -1;
    int by_labels;
    return kr_grail_dag_query(R, &R->ws, R->comp[u], R->comp[v], &by_labels);
}

/* ------------------------------------------------------------- labeling */

/* One randomized traversal t: roots in a shuffled order, each vertex's
 * children from a random rotation; writes (lo, hi) into slot t. */
typedef struct label_pass {
    const kr_graph *D;
    const int32_t *roots;
    int32_t nroots;
    int d, t;
    uint64_t seed;
    int32_t *lab, *tree;
    int32_t *order, *stack, *next; /* work, D->n each */
} label_pass;

static uint64_t pass_hash(const label_pass *p, uint64_t x)
{
    return kr_mix64(p->seed * 0x2545f4914f6cdd1dull +
                    (uint64_t)p->t * 0x9e37ull + x);
}

static void shuffled_roots(const label_pass *p)
{
    memcpy(p->order, p->roots, (size_t)p->nroots * sizeof *p->order);
    uint64_t rng = pass_hash(p, UINT64_MAX);
    for (int32_t i = p->nroots - 1; i > 0; i--) {
        rng = kr_mix64(rng);
        int32_t j = (int32_t)(rng % (uint64_t)(i + 1));
        int32_t s = p->order[i];
        p->order[i] = p->order[j];
        p->order[j] = s;
    }
}

/* The child of v taken k-th, from v's random starting point. */
static int32_t child(const label_pass *p, int32_t v, int32_t k, int64_t deg)
{
    int64_t start = (int64_t)(pass_hash(p, (uint64_t)v) % (uint64_t)deg);
    int64_t at = start + k;
    if (at >= deg) at -= deg;
    return p->D->adj[p->D->off[v] + at];
}

static void dfs_from(const label_pass *p, int32_t root, int32_t *rank)
{
    const kr_graph *D = p->D;
    int32_t *lab = p->lab + 2 * p->t, *tree = p->tree + 2 * p->t;
    size_t stride = (size_t)2 * p->d;
    int32_t top = 0;
    p->stack[top] = root;
    p->next[top++] = 0;
    lab[stride * root] = INT_MAX; /* lo: visited, not finished */
    tree[stride * root] = *rank + 1;
    while (top) {
        int32_t v = p->stack[top - 1];
        int64_t deg = D->off[v + 1] - D->off[v];
        int32_t *lv = lab + stride * v;
        if (p->next[top - 1] < deg) {
            int32_t c = child(p, v, p->next[top - 1]++, deg);
            int32_t *lc = lab + stride * c;
            if (lc[1] == 0 && lc[0] != INT_MAX) {
                lc[0] = INT_MAX;
                tree[stride * c] = *rank + 1; /* its subtree's first number */
                p->stack[top] = c;
                p->next[top++] = 0;
            } else if (lc[0] < lv[0]) /* finished (a DAG has no back edge) */
                lv[0] = lc[0];
            continue;
        }
        lv[1] = tree[stride * v + 1] = ++*rank;
        if (lv[1] < lv[0]) lv[0] = lv[1];
        top--;
        if (top) {
            int32_t *lu = lab + stride * p->stack[top - 1];
            if (lv[0] < lu[0]) lu[0] = lv[0];
        }
    }
}

static void label_one(label_pass *p)
{
    size_t stride = (size_t)2 * p->d;
    for (int32_t v = 0; v < p->D->n; v++)
        p->lab[stride * v + 2 * p->t] = p->lab[stride * v + 2 * p->t + 1] = 0;
    shuffled_roots(p);
    int32_t rank = 0;
    for (int32_t i = 0; i < p->nroots; i++)
        dfs_from(p, p->order[i], &rank);
}

static kr_status find_roots(kr_ctx *ctx, const kr_graph *D, int32_t **roots,
                            int32_t *nroots)
{
    unsigned char *has_in = calloc((size_t)D->n + 1, 1);
    *roots = malloc(((size_t)D->n + 1) * sizeof **roots);
    if (!has_in || !*roots) {
        free(has_in);
        free(*roots);
        return kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    }
    for (int64_t e = 0; e < D->m; e++)
        has_in[D->adj[e]] = 1;
    *nroots = 0;
    for (int32_t v = 0; v < D->n; v++)
        if (!has_in[v]) (*roots)[(*nroots)++] = v;
    free(has_in);
    return KR_OK;
}

/* The d traversals are independent: one per thread. */
static kr_status label_cpu(kr_ctx *ctx, kr_reach *R)
{
    int32_t *roots, nroots;
    KR_TRY(find_roots(ctx, R->dag, &roots, &nroots));
    int nt = kr_ctx_threads(ctx);
    if (nt > R->d) nt = R->d;
    int failed = 0;
    size_t n = (size_t)R->dag->n + 1;
#pragma omp parallel num_threads(nt) reduction(| : failed)
    {
        label_pass p = {
            R->dag,       roots,  nroots,  R->d,          0,
            R->seed,      R->lab, R->tree, malloc(n * 4), malloc(n * 4),
            malloc(n * 4)};
        failed = !p.order || !p.stack || !p.next;
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < R->d; t++) {
            p.t = t;
            if (!failed) label_one(&p);
        }
        free(p.order);
        free(p.stack);
        free(p.next);
    }
    free(roots);
    if (failed) return kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    return KR_OK;
}

/* -------------------------------------------------------------- the index */

static kr_status condense(kr_ctx *ctx, const kr_graph *G, kr_scc_method method,
                          kr_reach *R)
{
    int32_t nc;
    KR_TRY(kr_graph_scc_with(ctx, G, method, R->comp, &nc, &R->info.scc));
    if (!strcmp(R->info.scc.method, "fwbw-gpu")) /* the GPU's, whole */
        KR_TRY(kr_graph_condense_cuda(ctx, G, R->comp, nc, &R->dag));
    else
        KR_TRY(kr_graph_condense(ctx, G, R->comp, nc, &R->dag));
    int32_t *size = calloc((size_t)nc + 1, sizeof *size);
    if (!size) return kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    int32_t largest = 0;
    for (int32_t v = 0; v < G->n; v++)
        if (++size[R->comp[v]] > largest) largest = size[R->comp[v]];
    free(size);
    R->info.components = nc;
    R->info.largest = largest;
    R->info.dag_edges = R->dag->m;
    return KR_OK;
}

static size_t index_bytes(const kr_reach *R)
{
    const kr_graph *D = R->dag;
    return (size_t)R->n * sizeof(int32_t) + ((size_t)D->n + 1) * 8 +
           (size_t)D->m * 4 + (size_t)4 * R->d * D->n * 4;
}

static kr_status build(kr_ctx *ctx, const kr_graph *G, kr_scc_method method,
                       kr_reach *R)
{
    double t0 = kr_wtime();
    KR_TRY(condense(ctx, G, method, R));
    double t1 = kr_wtime();
    size_t nlab = (size_t)2 * R->d * R->dag->n + 1;
    int gpu = ctx->device == KR_DEVICE_CUDA;
    R->lab = malloc(nlab * sizeof *R->lab);
    R->tree = gpu ? NULL : malloc(nlab * sizeof *R->tree);
    if (!R->lab || (!gpu && !R->tree))
        return kr_fail(ctx, KR_ERR_NOMEM, "reach: out of memory");
    if (gpu)
        KR_TRY(kr_grail_cuda_label(ctx, R));
    else
        KR_TRY(label_cpu(ctx, R));
    R->info.scc_seconds = t1 - t0;
    R->info.label_seconds = kr_wtime() - t1;
    R->info.bytes = index_bytes(R);
    return kr_grail_ws_init(ctx, R->dag->n, &R->ws);
}

kr_status kr_reach_create(kr_ctx *ctx, const kr_graph *G,
                          const kr_reach_options *o, kr_reach **out)
{
    *out = NULL;
    kr_reach_options def;
    kr_reach_options_default(&def);
    if (!o) o = &def;
    if (!G) return kr_fail(ctx, KR_ERR_ARG, "reach: no graph");
    if (o->labels < 1 || o->labels > 16)
        return kr_fail(ctx, KR_ERR_ARG, "reach: %d labels, not in 1..16",
                       o->labels);
    if (o->gpu_variants &
        ~(KR_REACH_GPU_STATUS_LEVELS | KR_REACH_GPU_DEGREE_BINS |
          KR_REACH_GPU_WARP_QUERIES | KR_REACH_GPU_BIT_QUERIES))
        return kr_fail(ctx, KR_ERR_ARG, "reach: unknown GPU variant flags %#x",
                       o->gpu_variants);
    kr_reach *R = calloc(1, sizeof *R);
    if (R) R->comp = malloc(((size_t)G->n + 1) * sizeof *R->comp);
    if (!R || !R->comp) {
        kr_reach_destroy(R);
        return kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    }
    R->n = G->n;
    R->d = o->labels;
    R->seed = o->seed;
    R->gpu_variants = o->gpu_variants;
    R->info.vertices = G->n;
    R->info.labels = o->labels;
    kr_status st = build(ctx, G, o->scc, R);
    if (st != KR_OK) {
        kr_reach_destroy(R);
        return st;
    }
    *out = R;
    return KR_OK;
}

void kr_reach_destroy(kr_reach *R)
{
    if (!R) return;
    kr_grail_cuda_free(R);
    kr_grail_ws_free(&R->ws);
    kr_graph_destroy(R->dag);
    free(R->comp);
    free(R->lab);
    free(R->tree);
    free(R);
}

void kr_reach_get_info(const kr_reach *R, kr_reach_info *info)
{
    *info = R->info;
}

int32_t kr_reach_component(const kr_reach *R, int32_t v) { return R->comp[v]; }

void kr_reach_labels(const kr_reach *R, int32_t v, int32_t *lo, int32_t *hi)
{
    const int32_t *l = R->lab + (size_t)2 * R->d * R->comp[v];
    for (int i = 0; i < R->d; i++) {
        lo[i] = l[2 * i];
        hi[i] = l[2 * i + 1];
    }
}

/* ---------------------------------------------------------------- batches */

static kr_status check_pairs(kr_ctx *ctx, const kr_reach *R, int64_t q,
                             const int32_t *pairs)
{
    for (int64_t k = 0; k < 2 * q; k++)
        if (pairs[k] < 0 || pairs[k] >= R->n)
            return kr_fail(ctx, KR_ERR_ARG,
                           "reach: query %lld names vertex %d, not in 0..%d",
                           (long long)k / 2 + 1, (int)pairs[k], (int)R->n - 1);
    return KR_OK;
}

static kr_status batch_cpu(kr_ctx *ctx, kr_reach *R, int64_t q,
                           const int32_t *pairs, unsigned char *answer,
                           int64_t *by_labels)
{
    int nt = kr_ctx_threads(ctx);
    int64_t decided = 0;
    int failed = 0;
#pragma omp parallel num_threads(nt) reduction(+ : decided) reduction(| : failed)
    {
        kr_grail_ws ws;
        failed = kr_grail_ws_init(NULL, R->dag->n, &ws) != KR_OK;
#pragma omp for schedule(dynamic, 256)
        for (int64_t k = 0; k < q; k++) {
            if (failed) continue;
            int lab;
            answer[k] = (unsigned char)kr_grail_dag_query(
                R, &ws, R->comp[pairs[2 * k]], R->comp[pairs[2 * k + 1]], &lab);
            decided += lab;
        }
        kr_grail_ws_free(&ws);
    }
    if (failed) return kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    if (by_labels) *by_labels = decided;
    return KR_OK;
}

/* The host answers what the labels decide (all threads), the GPU takes
 * the rest. */
static void prefilter_all(kr_ctx *ctx, const kr_reach *R, int64_t q,
                          const int32_t *pairs, unsigned char *answer,
                          signed char *pre)
{
    int nt = kr_ctx_threads(ctx);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t k = 0; k < q; k++) {
        int32_t a = R->comp[pairs[2 * k]], b = R->comp[pairs[2 * k + 1]];
        pre[k] = (signed char)kr_grail_prefilter(R, a, b);
        answer[k] = pre[k] > 0;
    }
}

static kr_status batch_gpu(kr_ctx *ctx, kr_reach *R, int64_t q,
                           const int32_t *pairs, unsigned char *answer,
                           int64_t *by_labels)
{
    int32_t *rest = malloc(((size_t)2 * q + 1) * sizeof *rest);
    int64_t *where = malloc(((size_t)q + 1) * sizeof *where);
    unsigned char *got = malloc((size_t)q + 1);
    signed char *pre = malloc((size_t)q + 1);
    kr_status st = KR_OK;
    if (!rest || !where || !got || !pre)
        st = kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    int64_t nrest = 0;
    if (st == KR_OK) prefilter_all(ctx, R, q, pairs, answer, pre);
    for (int64_t k = 0; st == KR_OK && k < q; k++) {
        if (pre[k] >= 0) continue;
        rest[2 * nrest] = R->comp[pairs[2 * k]];
        rest[2 * nrest + 1] = R->comp[pairs[2 * k + 1]];
        where[nrest++] = k;
    }
    if (st == KR_OK && nrest)
        st = kr_grail_cuda_query(ctx, R, nrest, rest, got);
    for (int64_t k = 0; st == KR_OK && k < nrest; k++)
        answer[where[k]] = got[k];
    if (by_labels) *by_labels = q - nrest;
    free(rest);
    free(where);
    free(got);
    free(pre);
    return st;
}

kr_status kr_reach_query_batch(kr_ctx *ctx, kr_reach *R, int64_t q,
                               const int32_t *pairs, unsigned char *answer,
                               int64_t *by_labels)
{
    if (!R || q < 0 || (q > 0 && (!pairs || !answer)))
        return kr_fail(ctx, KR_ERR_ARG, "reach: bad batch arguments");
    KR_TRY(check_pairs(ctx, R, q, pairs));
    if (ctx->device == KR_DEVICE_CUDA && R->gpu)
        return batch_gpu(ctx, R, q, pairs, answer, by_labels);
    return batch_cpu(ctx, R, q, pairs, answer, by_labels);
}
