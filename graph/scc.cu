/* The forward-backward SCC steps on the GPU (see scc.h and scc_fwbw.c,
 * whose host driver calls them): one thread per vertex in grid-stride
 * loops over status arrays (no queues), the same rules as the CPU steps
 * (the per-vertex ones shared through scc.h), so a run on either takes
 * the same passes. The graph and its transpose are uploaded once (the
 * transpose is built on the host); each step reads back one counter.
 * test_scc compares it with the CPU steps and with Tarjan (passed on an
 * H200, 2026-11-27). */
#include "core/cuda.h"
#include "graph/scc.h"

#include <limits.h>
#include <stdlib.h>

namespace
{

constexpr int kBlock = 256;

struct gpu_state {
    kr_fwbw_arrays a; /* device pointers */
    int64_t *off, *toff;
    int32_t *adj, *tadj;
    unsigned long long *count; /* a step's counter */
};

__global__ void k_fwbw_init(kr_fwbw_arrays a)
{
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < a.n;
         v += gridDim.x * blockDim.x) {
        a.sub[v] = 0;
        a.label[v] = -1;
        a.fw[v] = a.bw[v] = 0;
    }
}

__global__ void k_fwbw_trim_mark(kr_fwbw_arrays a)
{
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < a.n;
         v += gridDim.x * blockDim.x)
        if (a.sub[v] >= 0 && kr_fwbw_trimmable(&a, v)) a.label[v] = v;
}

__global__ void k_fwbw_trim_apply(kr_fwbw_arrays a, unsigned long long *count)
{
    unsigned long long mine = 0;
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < a.n;
         v += gridDim.x * blockDim.x)
        if (a.sub[v] >= 0 && a.label[v] >= 0) {
            a.sub[v] = -1;
            mine++;
        }
    if (mine) atomicAdd(count, mine);
}

__global__ void k_fwbw_elect_reset(kr_fwbw_arrays a)
{
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < a.n;
         v += gridDim.x * blockDim.x)
        if (a.sub[v] >= 0) a.elect[a.sub[v]] = INT_MAX;
}

__global__ void k_fwbw_elect_min(kr_fwbw_arrays a)
{
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < a.n;
         v += gridDim.x * blockDim.x)
        if (a.sub[v] >= 0) atomicMin(&a.elect[a.sub[v]], v);
}

__global__ void k_fwbw_elect_assign(kr_fwbw_arrays a)
{
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < a.n;
         v += gridDim.x * blockDim.x) {
        if (a.sub[v] < 0) continue;
        int32_t s = a.elect[a.sub[v]];
        a.sub[v] = s;
        a.fw[v] = a.bw[v] = s == v;
    }
}

/* Several threads may mark w in one pass, always with level + 1. */
__device__ int mark_next(int32_t *stamp, const int64_t *off, const int32_t *adj,
                         const int32_t *sub, int32_t v, int32_t level)
{
    int grew = 0;
    for (int64_t e = off[v]; e < off[v + 1]; e++) {
        int32_t w = adj[e];
        if (sub[w] != sub[v] || stamp[w]) continue;
        stamp[w] = level + 1;
        grew = 1;
    }
    return grew;
}

__global__ void k_fwbw_reach(kr_fwbw_arrays a, int32_t level,
                             unsigned long long *grew)
{
    int any = 0;
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < a.n;
         v += gridDim.x * blockDim.x) {
        if (a.sub[v] < 0) continue;
        if (a.fw[v] == level)
            any |= mark_next(a.fw, a.off, a.adj, a.sub, v, level);
        if (a.bw[v] == level)
            any |= mark_next(a.bw, a.toff, a.tadj, a.sub, v, level);
    }
    if (any) *grew = 1;
}

__global__ void k_fwbw_split(kr_fwbw_arrays a, unsigned long long *count)
{
    unsigned long long mine = 0;
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < a.n;
         v += gridDim.x * blockDim.x)
        if (a.sub[v] >= 0) mine += kr_fwbw_split_vertex(&a, v);
    if (mine) atomicAdd(count, mine);
}

int grid(const gpu_state *g) { return kr_grid(g->a.n, kBlock); }

cudaStream_t stream(kr_ctx *ctx) { return kr_cuda(ctx)->stream; }

kr_status zero_count(kr_ctx *ctx, gpu_state *g)
{
    KR_CUDA_TRY(ctx,
                cudaMemsetAsync(g->count, 0, sizeof *g->count, stream(ctx)));
    return KR_OK;
}

/* After the step's kernels: launch errors, then the counter. */
kr_status read_count(kr_ctx *ctx, gpu_state *g, int64_t *value)
{
    unsigned long long c = 0;
    KR_LAUNCH_CHECK(ctx);
    KR_CUDA_TRY(ctx, cudaMemcpyAsync(&c, g->count, sizeof c,
                                     cudaMemcpyDeviceToHost, stream(ctx)));
    KR_CUDA_TRY(ctx, cudaStreamSynchronize(stream(ctx)));
    *value = (int64_t)c;
    return KR_OK;
}

void gpu_destroy(kr_ctx *ctx, void *state)
{
    gpu_state *g = (gpu_state *)state;
    if (!g) return;
    void *p[] = {g->off,     g->toff, g->adj,  g->tadj,    g->a.sub,
                 g->a.label, g->a.fw, g->a.bw, g->a.elect, g->count};
    for (void *x : p)
        ctx->ops->release(ctx, x);
    free(g);
}

kr_status alloc_all(kr_ctx *ctx, const kr_graph *G, gpu_state *g)
{
    size_t n = (size_t)G->n + 1, m = (size_t)G->m + 1;
    struct {
        void **p;
        size_t bytes;
    } want[] = {{(void **)&g->off, n * 8},     {(void **)&g->toff, n * 8},
                {(void **)&g->adj, m * 4},     {(void **)&g->tadj, m * 4},
                {(void **)&g->a.sub, n * 4},   {(void **)&g->a.label, n * 4},
                {(void **)&g->a.fw, n * 4},    {(void **)&g->a.bw, n * 4},
                {(void **)&g->a.elect, n * 4}, {(void **)&g->count, 8}};
    for (auto &w : want)
        KR_TRY(ctx->ops->alloc(ctx, w.p, w.bytes));
    return KR_OK;
}

kr_status upload_graphs(kr_ctx *ctx, const kr_graph *G, const kr_graph *T,
                        gpu_state *g)
{
    size_t n = (size_t)G->n + 1, m = (size_t)G->m;
    KR_TRY(ctx->ops->upload(ctx, g->off, G->off, n * 8));
    KR_TRY(ctx->ops->upload(ctx, g->toff, T->off, n * 8));
    if (m) KR_TRY(ctx->ops->upload(ctx, g->adj, G->adj, m * 4));
    if (m) KR_TRY(ctx->ops->upload(ctx, g->tadj, T->adj, m * 4));
    return KR_OK;
}

kr_status gpu_create(kr_ctx *ctx, const kr_graph *G, const kr_graph *T,
                     void **state)
{
    gpu_state *g = (gpu_state *)calloc(1, sizeof *g);
    if (!g) return kr_fail(ctx, KR_ERR_NOMEM, "scc: out of host memory");
    kr_status st = alloc_all(ctx, G, g);
    if (st == KR_OK) st = upload_graphs(ctx, G, T, g);
    if (st != KR_OK) {
        gpu_destroy(ctx, g);
        return st;
    }
    g->a.n = G->n;
    g->a.off = g->off;
    g->a.toff = g->toff;
    g->a.adj = g->adj;
    g->a.tadj = g->tadj;
    k_fwbw_init<<<grid(g), kBlock, 0, stream(ctx)>>>(g->a);
    *state = g;
    int64_t unused;
    return read_count(ctx, g, &unused);
}

kr_status gpu_trim(kr_ctx *ctx, void *state, int64_t *removed)
{
    gpu_state *g = (gpu_state *)state;
    KR_TRY(zero_count(ctx, g));
    k_fwbw_trim_mark<<<grid(g), kBlock, 0, stream(ctx)>>>(g->a);
    k_fwbw_trim_apply<<<grid(g), kBlock, 0, stream(ctx)>>>(g->a, g->count);
    return read_count(ctx, g, removed);
}

kr_status gpu_elect(kr_ctx *ctx, void *state)
{
    gpu_state *g = (gpu_state *)state;
    k_fwbw_elect_reset<<<grid(g), kBlock, 0, stream(ctx)>>>(g->a);
    k_fwbw_elect_min<<<grid(g), kBlock, 0, stream(ctx)>>>(g->a);
    k_fwbw_elect_assign<<<grid(g), kBlock, 0, stream(ctx)>>>(g->a);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

kr_status gpu_reach(kr_ctx *ctx, void *state, int32_t level, int *grew)
{
    gpu_state *g = (gpu_state *)state;
    int64_t any;
    KR_TRY(zero_count(ctx, g));
    k_fwbw_reach<<<grid(g), kBlock, 0, stream(ctx)>>>(g->a, level, g->count);
    KR_TRY(read_count(ctx, g, &any));
    *grew = any != 0;
    return KR_OK;
}

kr_status gpu_split(kr_ctx *ctx, void *state, int64_t *placed)
{
    gpu_state *g = (gpu_state *)state;
    KR_TRY(zero_count(ctx, g));
    k_fwbw_split<<<grid(g), kBlock, 0, stream(ctx)>>>(g->a, g->count);
    return read_count(ctx, g, placed);
}

kr_status gpu_result(kr_ctx *ctx, void *state, int32_t *sub, int32_t *label)
{
    gpu_state *g = (gpu_state *)state;
    size_t bytes = (size_t)g->a.n * 4;
    KR_TRY(ctx->ops->download(ctx, sub, g->a.sub, bytes));
    return ctx->ops->download(ctx, label, g->a.label, bytes);
}

} // namespace

/* A pass costs tens of microseconds on a large graph: a chain may take
 * thousands before Tarjan finishes it (provisional, to be measured). */
extern "C" const kr_fwbw_steps kr_fwbw_cuda_steps = {
    "fwbw-gpu", 4096,      gpu_create, gpu_trim,   gpu_elect,
    gpu_reach,  gpu_split, gpu_result, gpu_destroy};
