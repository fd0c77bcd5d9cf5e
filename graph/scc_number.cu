/* The SCC numbering's passes and the condensation on the GPU (see scc.h),
 * after the forward-backward steps of scc.cu:
 *   - names: each component named by its least vertex (atomicMin);
 *   - levels: the edges into each component from others counted, then
 *     Kahn's algorithm one level per pass over status arrays (a component
 *     whose count reaches zero takes the next level); after
 *     KR_SCC_GPU_LEVEL_PASSES the host goes on from there (kr_scc_levels);
 *     the ranks by (level, least vertex) are made on the host
 *     (kr_scc_rank), so comp[] is kr_scc_number's;
 *   - condensation: one 64-bit key (from, to) per edge between
 *     components, radix-sorted and made unique by CUB, rows counted and
 *     scanned into offsets.
 * test_scc compares both with the host's (passed on an H200, 2026-11-27). */
#include "core/cuda.h"
#include "graph/scc.h"

#include <cub/cub.cuh>
#include <limits.h>
#include <stdlib.h>

namespace
{

constexpr int kBlock = 256;

struct dev_graph {
    int32_t n;
    int64_t m;
    int64_t *off;
    int32_t *adj;
};

#define KR_VERTICES(v, n)                                                      \
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < (n);           \
         v += gridDim.x * blockDim.x)

__global__ void k_least_init(int32_t n, int32_t *least)
{
    KR_VERTICES(v, n) least[v] = INT_MAX;
}

__global__ void k_least(int32_t n, const int32_t *label, int32_t *least)
{
    KR_VERTICES(v, n) atomicMin(&least[label[v]], v);
}

__global__ void k_names(int32_t n, const int32_t *label, const int32_t *least,
                        int32_t *name)
{
    KR_VERTICES(v, n) name[v] = least[label[v]];
}

__global__ void k_cross_indegrees(dev_graph g, const int32_t *name,
                                  int32_t *indeg)
{
    KR_VERTICES(u, g.n)
    {
        for (int64_t e = g.off[u]; e < g.off[u + 1]; e++) {
            int32_t d = name[g.adj[e]];
            if (d != name[u]) atomicAdd(&indeg[d], 1);
        }
    }
}

__global__ void k_sources(int32_t n, const int32_t *name, const int32_t *indeg,
                          int32_t *level)
{
    KR_VERTICES(v, n) level[v] = name[v] == v && !indeg[v] ? 0 : -1;
}

/* Members of level-L components release their edges; a component whose
 * last incoming edge this was gets level L + 1 (never read as L here). */
__global__ void k_level_pass(dev_graph g, const int32_t *name, int32_t *level,
                             int32_t *indeg, int32_t L,
                             unsigned long long *grew)
{
    int any = 0;
    KR_VERTICES(u, g.n)
    {
        int32_t c = name[u];
        if (level[c] != L) continue;
        for (int64_t e = g.off[u]; e < g.off[u + 1]; e++) {
            int32_t d = name[g.adj[e]];
            if (d == c || atomicSub(&indeg[d], 1) != 1) continue;
            level[d] = L + 1;
            any = 1;
        }
    }
    if (any) *grew = 1;
}

__global__ void k_edge_keys(dev_graph g, const int32_t *comp,
                            unsigned long long *key)
{
    KR_VERTICES(u, g.n)
    {
        for (int64_t e = g.off[u]; e < g.off[u + 1]; e++) {
            int32_t d = comp[g.adj[e]];
            key[e] = d == comp[u]
                         ? ~0ull
                         : (unsigned long long)comp[u] << 32 | (uint32_t)d;
        }
    }
}

/* Sorted unique keys: row counts and the targets in place. */
__global__ void k_rows(int64_t k, const unsigned long long *key, int64_t *deg,
                       int32_t *adj)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < k;
         i += (int64_t)gridDim.x * blockDim.x) {
        atomicAdd((unsigned long long *)&deg[key[i] >> 32], 1ull);
        adj[i] = (int32_t)(key[i] & 0xffffffffu);
    }
}

cudaStream_t stream(kr_ctx *ctx) { return kr_cuda(ctx)->stream; }

int grid(int64_t n) { return kr_grid(n, kBlock); }

kr_status sync(kr_ctx *ctx)
{
    KR_LAUNCH_CHECK(ctx);
    KR_CUDA_TRY(ctx, cudaStreamSynchronize(stream(ctx)));
    return KR_OK;
}

/* The device buffers of one call, released together. */
struct buffers {
    kr_ctx *ctx;
    void *p[12];
    int count;
    ~buffers()
    {
        for (int i = 0; i < count; i++)
            ctx->ops->release(ctx, p[i]);
    }
    template <typename T> kr_status get(T **out, size_t items)
    {
        if (count == (int)(sizeof p / sizeof p[0]))
            return kr_fail(ctx, KR_ERR_ARG, "scc: too many GPU buffers");
        void *x = NULL;
        KR_TRY(ctx->ops->alloc(ctx, &x, items ? items * sizeof(T) : 8));
        p[count++] = x;
        *out = (T *)x;
        return KR_OK;
    }
};

kr_status upload_graph(kr_ctx *ctx, buffers &b, const kr_graph *G, dev_graph *g)
{
    g->n = G->n;
    g->m = G->m;
    KR_TRY(b.get(&g->off, (size_t)G->n + 1));
    KR_TRY(b.get(&g->adj, (size_t)G->m));
    KR_TRY(ctx->ops->upload(ctx, g->off, G->off, ((size_t)G->n + 1) * 8));
    if (G->m) KR_TRY(ctx->ops->upload(ctx, g->adj, G->adj, (size_t)G->m * 4));
    return KR_OK;
}

struct level_arrays {
    int32_t *label, *name, *indeg, *level;
    unsigned long long *grew;
};

kr_status names_and_sources(kr_ctx *ctx, const dev_graph &g,
                            const level_arrays &a)
{
    cudaStream_t s = stream(ctx);
    k_least_init<<<grid(g.n), kBlock, 0, s>>>(g.n, a.level);
    k_least<<<grid(g.n), kBlock, 0, s>>>(g.n, a.label, a.level);
    k_names<<<grid(g.n), kBlock, 0, s>>>(g.n, a.label, a.level, a.name);
    KR_LAUNCH_CHECK(ctx);
    KR_CUDA_TRY(ctx, cudaMemsetAsync(a.indeg, 0, (size_t)g.n * 4, s));
    k_cross_indegrees<<<grid(g.n), kBlock, 0, s>>>(g, a.name, a.indeg);
    k_sources<<<grid(g.n), kBlock, 0, s>>>(g.n, a.name, a.indeg, a.level);
    return sync(ctx);
}

/* Level passes until one frees nothing or the budget is spent; *next is
 * the level of the components not yet passed on. */
kr_status level_passes(kr_ctx *ctx, const dev_graph &g, const level_arrays &a,
                       int32_t *next)
{
    cudaStream_t s = stream(ctx);
    unsigned long long grew = 1;
    int32_t L = 0;
    while (grew && L < KR_SCC_GPU_LEVEL_PASSES) {
        KR_CUDA_TRY(ctx, cudaMemsetAsync(a.grew, 0, sizeof grew, s));
        k_level_pass<<<grid(g.n), kBlock, 0, s>>>(g, a.name, a.level, a.indeg,
                                                  L, a.grew);
        KR_LAUNCH_CHECK(ctx);
        KR_CUDA_TRY(ctx, cudaMemcpyAsync(&grew, a.grew, sizeof grew,
                                         cudaMemcpyDeviceToHost, s));
        KR_TRY(sync(ctx));
        L++;
    }
    *next = L;
    return KR_OK;
}

kr_status download_levels(kr_ctx *ctx, const level_arrays &a, int32_t n,
                          int32_t *name, int32_t *level, int32_t *indeg)
{
    size_t bytes = (size_t)n * 4;
    KR_TRY(ctx->ops->download(ctx, name, a.name, bytes));
    KR_TRY(ctx->ops->download(ctx, level, a.level, bytes));
    return ctx->ops->download(ctx, indeg, a.indeg, bytes);
}

kr_status number_on_device(kr_ctx *ctx, const kr_graph *G, const int32_t *label,
                           int32_t *name, int32_t *level, int32_t *indeg,
                           int32_t *next)
{
    buffers b = {ctx, {}, 0};
    dev_graph g = {0, 0, NULL, NULL};
    level_arrays a = {NULL, NULL, NULL, NULL, NULL};
    size_t n = (size_t)G->n;
    KR_TRY(upload_graph(ctx, b, G, &g));
    KR_TRY(b.get(&a.label, n));
    KR_TRY(b.get(&a.name, n));
    KR_TRY(b.get(&a.indeg, n));
    KR_TRY(b.get(&a.level, n));
    KR_TRY(b.get(&a.grew, 1));
    KR_TRY(ctx->ops->upload(ctx, a.label, label, n * 4));
    KR_TRY(names_and_sources(ctx, g, a));
    KR_TRY(level_passes(ctx, g, a, next));
    return download_levels(ctx, a, G->n, name, level, indeg);
}

/* ------------------------------------------------------- condensation */

struct edge_keys {
    unsigned long long *in, *out;
    int64_t *unique; /* count of unique keys */
    void *temp;
    size_t temp_bytes;
};

kr_status cub_temp(kr_ctx *ctx, buffers &b, edge_keys &k, int64_t m)
{
    size_t sort_bytes = 0, unique_bytes = 0;
    KR_CUDA_TRY(ctx, cub::DeviceRadixSort::SortKeys(
                         NULL, sort_bytes, k.in, k.out, m, 0, 64, stream(ctx)));
    KR_CUDA_TRY(ctx, cub::DeviceSelect::Unique(NULL, unique_bytes, k.out, k.in,
                                               k.unique, m, stream(ctx)));
    k.temp_bytes = sort_bytes > unique_bytes ? sort_bytes : unique_bytes;
    char *t = NULL;
    KR_TRY(b.get(&t, k.temp_bytes));
    k.temp = t;
    return KR_OK;
}

/* The sorted distinct keys into k.in; their count, less the key of the
 * edges inside components, into *count. */
kr_status sorted_unique(kr_ctx *ctx, buffers &b, const dev_graph &g,
                        const int32_t *comp, edge_keys &k, int64_t *count)
{
    KR_TRY(b.get(&k.in, (size_t)g.m));
    KR_TRY(b.get(&k.out, (size_t)g.m));
    KR_TRY(b.get(&k.unique, 1));
    KR_TRY(cub_temp(ctx, b, k, g.m));
    k_edge_keys<<<grid(g.n), kBlock, 0, stream(ctx)>>>(g, comp, k.in);
    KR_LAUNCH_CHECK(ctx);
    KR_CUDA_TRY(ctx,
                cub::DeviceRadixSort::SortKeys(k.temp, k.temp_bytes, k.in,
                                               k.out, g.m, 0, 64, stream(ctx)));
    KR_CUDA_TRY(ctx,
                cub::DeviceSelect::Unique(k.temp, k.temp_bytes, k.out, k.in,
                                          k.unique, g.m, stream(ctx)));
    unsigned long long last = 0;
    KR_CUDA_TRY(ctx, cudaMemcpyAsync(count, k.unique, 8, cudaMemcpyDeviceToHost,
                                     stream(ctx)));
    KR_TRY(sync(ctx));
    if (*count)
        KR_CUDA_TRY(ctx, cudaMemcpyAsync(&last, k.in + *count - 1, 8,
                                         cudaMemcpyDeviceToHost, stream(ctx)));
    KR_TRY(sync(ctx));
    if (*count && last == ~0ull) (*count)--;
    return KR_OK;
}

kr_status rows(kr_ctx *ctx, buffers &b, const edge_keys &k, int64_t count,
               kr_graph *D)
{
    int64_t *deg = NULL, *off = NULL;
    int32_t *adj = NULL;
    size_t nc = (size_t)D->n + 1, bytes = 0;
    KR_TRY(b.get(&deg, nc));
    KR_TRY(b.get(&off, nc));
    KR_TRY(b.get(&adj, (size_t)count));
    KR_CUDA_TRY(ctx, cudaMemsetAsync(deg, 0, nc * 8, stream(ctx)));
    k_rows<<<grid(count), kBlock, 0, stream(ctx)>>>(count, k.in, deg, adj);
    KR_LAUNCH_CHECK(ctx);
    KR_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(NULL, bytes, deg, off,
                                                   (int64_t)nc, stream(ctx)));
    if (bytes > k.temp_bytes) {
        char *t = NULL;
        KR_TRY(b.get(&t, bytes));
        KR_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(
                             t, bytes, deg, off, (int64_t)nc, stream(ctx)));
    } else {
        KR_CUDA_TRY(ctx,
                    cub::DeviceScan::ExclusiveSum(k.temp, bytes, deg, off,
                                                  (int64_t)nc, stream(ctx)));
    }
    KR_TRY(sync(ctx));
    KR_TRY(ctx->ops->download(ctx, D->off, off, nc * 8));
    if (count) KR_TRY(ctx->ops->download(ctx, D->adj, adj, (size_t)count * 4));
    return KR_OK;
}

kr_status condense_on_device(kr_ctx *ctx, const kr_graph *G,
                             const int32_t *comp, int32_t ncomp, kr_graph **D)
{
    buffers b = {ctx, {}, 0};
    dev_graph g = {0, 0, NULL, NULL};
    int32_t *dcomp = NULL;
    edge_keys k = {NULL, NULL, NULL, NULL, 0};
    int64_t count = 0;
    KR_TRY(upload_graph(ctx, b, G, &g));
    KR_TRY(b.get(&dcomp, (size_t)G->n));
    KR_TRY(ctx->ops->upload(ctx, dcomp, comp, (size_t)G->n * 4));
    if (G->m) KR_TRY(sorted_unique(ctx, b, g, dcomp, k, &count));
    KR_TRY(kr_graph_alloc(ctx, ncomp, count, D));
    if (count) return rows(ctx, b, k, count, *D);
    return KR_OK; /* no edges between components: off stays zero */
}

} // namespace

extern "C" kr_status kr_scc_cuda_number(kr_ctx *ctx, const kr_graph *G,
                                        const int32_t *label, int32_t *comp,
                                        int32_t *ncomp)
{
    size_t n = (size_t)G->n + 1;
    int32_t *name = (int32_t *)malloc(n * 4), *level = (int32_t *)malloc(n * 4);
    int32_t *indeg = (int32_t *)malloc(n * 4), next = 0;
    kr_status st = KR_OK;
    if (!name || !level || !indeg)
        st = kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
    if (st == KR_OK && G->n)
        st = number_on_device(ctx, G, label, name, level, indeg, &next);
    if (st == KR_OK) st = kr_scc_levels(ctx, G, name, level, indeg, next);
    if (st == KR_OK) st = kr_scc_rank(ctx, G->n, name, level, comp, ncomp);
    free(name);
    free(level);
    free(indeg);
    return st;
}

extern "C" kr_status kr_graph_condense_cuda(kr_ctx *ctx, const kr_graph *G,
                                            const int32_t *comp, int32_t ncomp,
                                            kr_graph **D)
{
    *D = NULL;
    kr_status st = condense_on_device(ctx, G, comp, ncomp, D);
    if (st != KR_OK) {
        kr_graph_destroy(*D);
        *D = NULL;
    }
    return st;
}
