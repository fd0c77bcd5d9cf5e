/* Forward-backward SCCs with trimming (Fleischer, Hendrickson, Pinar
 * 2000; McLendon et al. 2005), every subproblem at once: the host driver
 * and the steps' CPU implementation (the GPU's are in scc.cu).
 *
 * A round trims (repeatedly, while a pass still removes a useful share),
 * elects a pivot per subproblem, searches forward and backward from the
 * pivots level by level inside their subproblems, and splits: FW and BW
 * is the pivot's SCC; FW only, BW only and neither become subproblems (no
 * edge leads from FW back into the rest, nor from the rest into BW, so
 * none of them cuts an SCC). A long chain costs one pass a vertex, so
 * after the steps' pass budget what is still active goes to Tarjan on the
 * host, restricted to the active vertices. */
#include "core/error.h"
#include "graph/scc.h"

#include <stdlib.h>
#include <string.h>

/* Trimming goes on while a pass removes at least this share of the active
 * vertices; below that, pivots make faster progress. */
#define TRIM_SHARE 64

/* ---------------------------------------------------------- the driver */

typedef struct fwbw_run {
    kr_ctx *ctx;
    const kr_fwbw_steps *steps;
    void *state;
    int64_t active;
    kr_fwbw_stats *stats;
} fwbw_run;

static int budget_left(const fwbw_run *r)
{
    return r->stats->passes < r->steps->max_passes;
}

static kr_status trim_passes(fwbw_run *r)
{
    int64_t removed;
    do {
        int64_t before = r->active;
        KR_TRY(r->steps->trim(r->ctx, r->state, &removed));
        r->stats->passes++;
        r->active -= removed;
        if (removed * TRIM_SHARE < before) break;
    } while (removed && r->active && budget_left(r));
    return KR_OK;
}

/* One round after trimming; *complete is 0 when the budget ran out
 * before the searches ended (nothing is split then). */
static kr_status pivot_round(fwbw_run *r, int *complete)
{
    KR_TRY(r->steps->elect(r->ctx, r->state));
    int grew = 1;
    for (int32_t level = 1; grew && budget_left(r); level++) {
        KR_TRY(r->steps->reach(r->ctx, r->state, level, &grew));
        r->stats->passes++;
    }
    *complete = !grew;
    if (grew) return KR_OK;
    int64_t placed;
    KR_TRY(r->steps->split(r->ctx, r->state, &placed));
    r->active -= placed;
    r->stats->rounds++;
    return KR_OK;
}

static kr_status run_steps(fwbw_run *r)
{
    int complete = 1;
    while (r->active && budget_left(r) && complete) {
        KR_TRY(trim_passes(r));
        if (r->active && budget_left(r)) KR_TRY(pivot_round(r, &complete));
    }
    return KR_OK;
}

/* The active vertices' graph: the edges inside one subproblem. */
static kr_status rest_graph(kr_ctx *ctx, const kr_graph *G, const int32_t *sub,
                            const int32_t *local, int32_t k, kr_graph **H)
{
    int64_t m = 0;
    for (int32_t v = 0; v < G->n; v++)
        if (sub[v] >= 0)
            for (int64_t e = G->off[v]; e < G->off[v + 1]; e++)
                m += sub[G->adj[e]] == sub[v];
    KR_TRY(kr_graph_alloc(ctx, k, m, H));
    kr_graph *h = *H;
    m = 0;
    for (int32_t v = 0; v < G->n; v++) {
        if (sub[v] < 0) continue;
        h->off[local[v]] = m;
        for (int64_t e = G->off[v]; e < G->off[v + 1]; e++)
            if (sub[G->adj[e]] == sub[v]) h->adj[m++] = local[G->adj[e]];
    }
    h->off[k] = m;
    return KR_OK;
}

/* Tarjan on what the budget left: each SCC named by its least vertex. */
static kr_status finish_on_host(kr_ctx *ctx, const kr_graph *G,
                                const int32_t *sub, int32_t *label)
{
    size_t n = (size_t)G->n + 1;
    int32_t *local = malloc(n * sizeof *local), *global = malloc(n * 4);
    int32_t *comp = malloc(n * 4), *name = malloc(n * 4), k = 0, nc;
    kr_graph *H = NULL;
    kr_status st = KR_OK;
    if (!local || !global || !comp || !name) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
        goto done;
    }
    for (int32_t v = 0; v < G->n; v++)
        if (sub[v] >= 0) {
            global[k] = v;
            local[v] = k++;
        }
    KR_CHECK(st, rest_graph(ctx, G, sub, local, k, &H), done);
    KR_CHECK(st, kr_scc_tarjan(ctx, H, comp, &nc), done);
    for (int32_t c = 0; c < nc; c++)
        name[c] = -1;
    for (int32_t i = 0; i < k; i++) {
        if (name[comp[i]] < 0) name[comp[i]] = global[i];
        label[global[i]] = name[comp[i]];
    }
done:
    kr_graph_destroy(H);
    free(local);
    free(global);
    free(comp);
    free(name);
    return st;
}

kr_status kr_scc_fwbw(kr_ctx *ctx, const kr_graph *G,
                      const kr_fwbw_steps *steps, int32_t *label,
                      kr_fwbw_stats *stats)
{
    *stats = (kr_fwbw_stats){0, 0, 0};
    if (!G->n) return KR_OK;
    kr_graph *T = NULL;
    int32_t *sub = malloc(((size_t)G->n + 1) * sizeof *sub);
    fwbw_run r = {ctx, steps, NULL, G->n, stats};
    kr_status st = KR_OK;
    if (!sub) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
        goto done;
    }
    KR_CHECK(st, kr_graph_transpose(ctx, G, &T), done);
    KR_CHECK(st, steps->create(ctx, G, T, &r.state), done);
    KR_CHECK(st, run_steps(&r), done);
    KR_CHECK(st, steps->result(ctx, r.state, sub, label), done);
    stats->host_rest = (int32_t)r.active;
    if (r.active) st = finish_on_host(ctx, G, sub, label);
done:
    if (r.state) steps->destroy(ctx, r.state);
    kr_graph_destroy(T);
    free(sub);
    return st;
}

/* ------------------------------------------------------ the CPU steps */

typedef struct cpu_state {
    kr_fwbw_arrays a;
    int threads;
} cpu_state;

static void cpu_destroy(kr_ctx *ctx, void *state)
{
    (void)ctx;
    cpu_state *s = state;
    if (!s) return;
    free(s->a.sub);
    free(s->a.label);
    free(s->a.fw);
    free(s->a.bw);
    free(s->a.elect);
    free(s);
}

/* A pass over a small graph takes microseconds, less than waking a team
 * (tens of milliseconds on a loaded machine): the default thread count
 * uses one thread below this many vertices; one the user set is kept. */
#define PARALLEL_MIN_VERTICES 65536

static int team_size(const kr_ctx *ctx, int32_t n)
{
    if (ctx->threads) return ctx->threads;
    return n >= PARALLEL_MIN_VERTICES ? kr_ctx_threads(ctx) : 1;
}

static kr_status cpu_create(kr_ctx *ctx, const kr_graph *G, const kr_graph *T,
                            void **state)
{
    size_t n = (size_t)G->n + 1;
    cpu_state *s = calloc(1, sizeof *s);
    if (s) {
        s->a = (kr_fwbw_arrays){G->n,          G->off,       T->off,
                                G->adj,        T->adj,       calloc(n, 4),
                                malloc(n * 4), calloc(n, 4), calloc(n, 4),
                                malloc(n * 4)};
        s->threads = team_size(ctx, G->n);
    }
    if (!s || !s->a.sub || !s->a.label || !s->a.fw || !s->a.bw || !s->a.elect) {
        cpu_destroy(ctx, s);
        return kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
    }
    for (int32_t v = 0; v < G->n; v++)
        s->a.label[v] = -1;
    *state = s;
    return KR_OK;
}

/* Marking first and removing after keeps the pass's view of the
 * subproblems fixed (the GPU's kernels see the same). */
static kr_status cpu_trim(kr_ctx *ctx, void *state, int64_t *removed)
{
    (void)ctx;
    const kr_fwbw_arrays *a = &((cpu_state *)state)->a;
    int64_t count = 0;
#pragma omp parallel for num_threads(((cpu_state *)state)->threads)            \
    schedule(dynamic, 1024)
    for (int32_t v = 0; v < a->n; v++)
        if (a->sub[v] >= 0 && kr_fwbw_trimmable(a, v)) a->label[v] = v;
#pragma omp parallel for num_threads(((cpu_state *)state)->threads)            \
    reduction(+ : count)
    for (int32_t v = 0; v < a->n; v++)
        if (a->sub[v] >= 0 && a->label[v] >= 0) {
            a->sub[v] = -1;
            count++;
        }
    *removed = count;
    return KR_OK;
}

/* The least vertex of each id: the first one met in vertex order. */
static kr_status cpu_elect(kr_ctx *ctx, void *state)
{
    (void)ctx;
    const kr_fwbw_arrays *a = &((cpu_state *)state)->a;
    for (int32_t v = 0; v < a->n; v++)
        if (a->sub[v] >= 0) a->elect[a->sub[v]] = -1;
    for (int32_t v = 0; v < a->n; v++)
        if (a->sub[v] >= 0 && a->elect[a->sub[v]] < 0) a->elect[a->sub[v]] = v;
#pragma omp parallel for num_threads(((cpu_state *)state)->threads)
    for (int32_t v = 0; v < a->n; v++) {
        if (a->sub[v] < 0) continue;
        a->sub[v] = a->elect[a->sub[v]];
        a->fw[v] = a->bw[v] = a->sub[v] == v;
    }
    return KR_OK;
}

/* Marks w (in subproblem s) with level + 1 unless reached: other threads
 * may mark it too, with the same value, hence the atomic accesses. */
static int mark_next(int32_t *stamp, const int64_t *off, const int32_t *adj,
                     const int32_t *sub, int32_t v, int32_t level)
{
    int grew = 0;
    for (int64_t e = off[v]; e < off[v + 1]; e++) {
        int32_t w = adj[e], seen;
        if (sub[w] != sub[v]) continue;
#pragma omp atomic read
        seen = stamp[w];
        if (seen) continue;
#pragma omp atomic write
        stamp[w] = level + 1;
        grew = 1;
    }
    return grew;
}

static kr_status cpu_reach(kr_ctx *ctx, void *state, int32_t level, int *grew)
{
    (void)ctx;
    const kr_fwbw_arrays *a = &((cpu_state *)state)->a;
    int any = 0;
#pragma omp parallel for num_threads(((cpu_state *)state)->threads)            \
    schedule(dynamic, 1024) reduction(|                                        \
                                      : any)
    for (int32_t v = 0; v < a->n; v++) {
        if (a->sub[v] < 0) continue;
        int32_t f, b;
#pragma omp atomic read
        f = a->fw[v];
#pragma omp atomic read
        b = a->bw[v];
        if (f == level)
            any |= mark_next(a->fw, a->off, a->adj, a->sub, v, level);
        if (b == level)
            any |= mark_next(a->bw, a->toff, a->tadj, a->sub, v, level);
    }
    *grew = any;
    return KR_OK;
}

static kr_status cpu_split(kr_ctx *ctx, void *state, int64_t *placed)
{
    (void)ctx;
    const kr_fwbw_arrays *a = &((cpu_state *)state)->a;
    int64_t count = 0;
#pragma omp parallel for num_threads(((cpu_state *)state)->threads)            \
    reduction(+ : count)
    for (int32_t v = 0; v < a->n; v++)
        if (a->sub[v] >= 0) count += kr_fwbw_split_vertex(a, v);
    *placed = count;
    return KR_OK;
}

static kr_status cpu_result(kr_ctx *ctx, void *state, int32_t *sub,
                            int32_t *label)
{
    (void)ctx;
    const kr_fwbw_arrays *a = &((cpu_state *)state)->a;
    memcpy(sub, a->sub, (size_t)a->n * sizeof *sub);
    memcpy(label, a->label, (size_t)a->n * sizeof *label);
    return KR_OK;
}

/* Each CPU pass scans every vertex: 64 passes bound the work on a chain
 * to about that many sweeps before Tarjan finishes it. */
const kr_fwbw_steps kr_fwbw_cpu_steps = {"fwbw-cpu", 64,         cpu_create,
                                         cpu_trim,   cpu_elect,  cpu_reach,
                                         cpu_split,  cpu_result, cpu_destroy};
