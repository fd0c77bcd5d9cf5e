/* The GRAIL index on the GPU.
 *
 * Labeling without recursion, after Quer and Calabrese (2020): the DAG is
 * cut into depth levels once (Kahn's algorithm from the roots with
 * in-degree counters; a vertex joins the next level when its last parent
 * is done), then all d labels are built together by level sweeps:
 *   1. DAG to spanning tree: every vertex takes a random parent among its
 *      in-neighbours (a 64-bit atomicMin of (hash, parent) per edge);
 *   2. subtree sizes, bottom-up; a child's place among its siblings comes
 *      from the atomicAdd that adds its size to its parent's;
 *   3. post-order numbers, top-down: a subtree occupies [start, start +
 *      size), its root last;
 *   4. labels, bottom-up: [lo, hi] = the least and the greatest post
 *      number of the vertex and its children's labels, over every DAG
 *      edge.
 * A DFS tree would make hi the vertex's own post number (GRAIL's min-post
 * label); the random tree is found in one pass instead of the paper's
 * path comparisons, so hi is the maximum below the vertex, which keeps the
 * containment property (u reaches v => v's label inside u's) the queries
 * rely on. The sibling order follows the atomics, so the labels (not the
 * answers) can differ from run to run.
 *
 * Each vertex also keeps its subtree's number range for every tree (first,
 * post): a target numbered inside a vertex's range is below it, a
 * positive answer without search. The host gets the labels, not the
 * ranges.
 *
 * Queries: the host answers what the labels decide; the rest go in chunks
 * of 64 * W, one bit per query in W 64-bit words per vertex: a frontier
 * of vertices, each level a kernel that, for every child of a frontier
 * vertex, keeps the bits of the queries whose target the child's labels
 * contain (atomicOr), marks a query found when a child is its target or
 * has the target in its subtree range. The bit arrays stay with the index
 * between batches; only the words of the vertices a chunk touched are
 * cleared after it. */
#include "core/cuda.h"
#include "graph/grail.h"

#include <stdlib.h>
#include <string.h>

namespace
{

constexpr int kBlock = 256;
constexpr int kWarp = 32;
constexpr int kMaxLabels = 16;

struct gpu_index {
    kr_ctx *ctx;
    int32_t n;
    int64_t m;
    int64_t *off;
    int32_t *adj;
    int32_t *lab, *tree;
    void *space; /* the query workspace (query_space) */
    size_t bytes;
};

__device__ __forceinline__ uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

kr_status dev_alloc(kr_ctx *ctx, void **p, size_t bytes)
{
    return ctx->ops->alloc(ctx, p, bytes ? bytes : 8);
}

kr_status sync(kr_ctx *ctx)
{
    KR_CUDA_TRY(ctx, cudaStreamSynchronize(kr_cuda(ctx)->stream));
    return KR_OK;
}

/* ------------------------------------------------------------ levels */

__global__ void k_indegree(int64_t m, const int32_t *adj, int32_t *indeg)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m;
         e += (int64_t)gridDim.x * blockDim.x)
        atomicAdd(&indeg[adj[e]], 1);
}

__global__ void k_roots(int32_t n, const int32_t *indeg, int32_t *order,
                        int32_t *count)
{
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += gridDim.x * blockDim.x)
        if (indeg[v] == 0) order[atomicAdd(count, 1)] = v;
}

/* A warp per vertex of the level: children whose last parent this is join
 * the next level. */
__global__ void k_next_level(int32_t lo, int32_t hi, const int64_t *off,
                             const int32_t *adj, int32_t *indeg, int32_t *order,
                             int32_t *count)
{
    int lane = threadIdx.x % kWarp;
    int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / kWarp;
    if (w >= hi - lo) return;
    int32_t v = order[lo + w];
    for (int64_t e = off[v] + lane; e < off[v + 1]; e += kWarp) {
        int32_t c = adj[e];
        if (atomicSub(&indeg[c], 1) == 1) order[atomicAdd(count, 1)] = c;
    }
}

/* ------------------------------------------------------------- labels */

struct label_work {
    int32_t n, d;
    uint64_t seed;
    unsigned long long *best; /* d * n: (hash << 32 | parent), or ~0  */
    int32_t *acc;             /* d * (n + 1): children's sizes so far */
    int32_t *size, *place;    /* d * n                                */
    int32_t *start;           /* d * (n + 1)                          */
};

__global__ void k_parents(label_work w, int32_t nv, const int64_t *off,
                          const int32_t *adj)
{
    int lane = threadIdx.x % kWarp;
    int64_t p = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / kWarp;
    if (p >= nv) return;
    for (int64_t e = off[p] + lane; e < off[p + 1]; e += kWarp) {
        int32_t c = adj[e];
        for (int t = 0; t < w.d; t++) {
            uint64_t h =
                mix64(w.seed ^ mix64(((uint64_t)t << 58) ^ ((uint64_t)p << 29) ^
                                     (uint64_t)c));
            unsigned long long key = (h << 32) | (uint32_t)p;
            atomicMin(&w.best[(size_t)t * w.n + c], key);
        }
    }
}

__device__ __forceinline__ int32_t parent_of(const label_work &w, int t,
                                             int32_t v)
{
    unsigned long long b = w.best[(size_t)t * w.n + v];
    return b == ~0ull ? w.n : (int32_t)(b & 0xffffffffu);
}

/* Bottom-up: the level's vertices know their children's sizes. */
__global__ void k_sizes(label_work w, const int32_t *order, int32_t lo,
                        int32_t hi)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= (int64_t)(hi - lo) * w.d) return;
    int t = (int)(i / (hi - lo));
    int32_t v = order[lo + i % (hi - lo)];
    size_t base = (size_t)t * (w.n + 1);
    int32_t s = 1 + w.acc[base + v];
    w.size[(size_t)t * w.n + v] = s;
    w.place[(size_t)t * w.n + v] =
        atomicAdd(&w.acc[base + parent_of(w, t, v)], s);
}

/* Top-down: a subtree starts where its parent's does, after its elder
 * siblings. */
__global__ void k_starts(label_work w, const int32_t *order, int32_t lo,
                         int32_t hi)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= (int64_t)(hi - lo) * w.d) return;
    int t = (int)(i / (hi - lo));
    int32_t v = order[lo + i % (hi - lo)];
    size_t base = (size_t)t * (w.n + 1);
    w.start[base + v] =
        w.start[base + parent_of(w, t, v)] + w.place[(size_t)t * w.n + v];
}

/* [min, max] over v's post number and the labels of its children
 * off[v] + first, + step, ...: one share of the children. */
__device__ __forceinline__ void
label_share(const label_work &w, int32_t v, int64_t first, int64_t step,
            const int64_t *off, const int32_t *adj, const int32_t *lab,
            int32_t *mn, int32_t *mx)
{
    for (int t = 0; t < w.d; t++)
        mn[t] = mx[t] =
            w.start[(size_t)t * (w.n + 1) + v] + w.size[(size_t)t * w.n + v];
    for (int64_t e = off[v] + first; e < off[v + 1]; e += step) {
        const int32_t *lc = lab + (size_t)2 * w.d * adj[e];
        for (int t = 0; t < w.d; t++) {
            mn[t] = min(mn[t], lc[2 * t]);
            mx[t] = max(mx[t], lc[2 * t + 1]);
        }
    }
}

__device__ __forceinline__ void warp_reduce(int d, int32_t *mn, int32_t *mx)
{
    for (int t = 0; t < d; t++)
        for (int s = kWarp / 2; s > 0; s /= 2) {
            mn[t] = min(mn[t], __shfl_xor_sync(0xffffffffu, mn[t], s));
            mx[t] = max(mx[t], __shfl_xor_sync(0xffffffffu, mx[t], s));
        }
}

__device__ __forceinline__ void store_label(const label_work &w, int32_t v,
                                            const int32_t *mn,
                                            const int32_t *mx, int32_t *lab,
                                            int32_t *tree)
{
    for (int t = 0; t < w.d; t++) {
        size_t at = (size_t)2 * w.d * v + 2 * t;
        int32_t first = w.start[(size_t)t * (w.n + 1) + v] + 1;
        lab[at] = mn[t];
        lab[at + 1] = mx[t];
        tree[at] = first;
        tree[at + 1] = first + w.size[(size_t)t * w.n + v] - 1;
    }
}

/* Bottom-up, a warp per vertex: [lo, hi] over the vertex's post number
 * and its children's labels, for every t. */
__global__ void k_labels(label_work w, const int32_t *order, int32_t lo,
                         int32_t hi, const int64_t *off, const int32_t *adj,
                         int32_t *lab, int32_t *tree)
{
    int lane = threadIdx.x % kWarp;
    int64_t k = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / kWarp;
    if (k >= hi - lo) return;
    int32_t v = order[lo + k];
    int32_t mn[kMaxLabels], mx[kMaxLabels];
    label_share(w, v, lane, kWarp, off, adj, lab, mn, mx);
    warp_reduce(w.d, mn, mx);
    if (lane == 0) store_label(w, v, mn, mx, lab, tree);
}

/* Blocks of kBlock threads for one thread per item (no grid-stride loop:
 * a level can hold millions of vertices). */
int blocks(int64_t threads)
{
    int64_t b = (threads + kBlock - 1) / kBlock;
    return b < 1 ? 1 : (int)b;
}

int warp_grid(int64_t items) { return blocks(items * kWarp); }

/* Depth levels: order[] holds the vertices level by level, level L is
 * order[bounds[L] .. bounds[L+1]). */
kr_status depth_levels(kr_ctx *ctx, const gpu_index *g, int32_t *indeg,
                       int32_t *order, int32_t *count, int32_t *bounds,
                       int32_t *nlevels)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    KR_CUDA_TRY(ctx, cudaMemsetAsync(indeg, 0, (size_t)g->n * 4, s));
    KR_CUDA_TRY(ctx, cudaMemsetAsync(count, 0, 4, s));
    k_indegree<<<kr_grid(g->m, kBlock), kBlock, 0, s>>>(g->m, g->adj, indeg);
    k_roots<<<kr_grid(g->n, kBlock), kBlock, 0, s>>>(g->n, indeg, order, count);
    KR_LAUNCH_CHECK(ctx);
    int32_t lo = 0, hi = 0, L = 0;
    KR_CUDA_TRY(ctx, cudaMemcpyAsync(&hi, count, 4, cudaMemcpyDeviceToHost, s));
    KR_TRY(sync(ctx));
    bounds[0] = 0;
    while (hi > lo) {
        bounds[++L] = hi;
        if (hi == g->n) break;
        k_next_level<<<warp_grid(hi - lo), kBlock, 0, s>>>(
            lo, hi, g->off, g->adj, indeg, order, count);
        KR_LAUNCH_CHECK(ctx);
        lo = hi;
        KR_CUDA_TRY(ctx,
                    cudaMemcpyAsync(&hi, count, 4, cudaMemcpyDeviceToHost, s));
        KR_TRY(sync(ctx));
    }
    if (bounds[L] != g->n)
        return kr_fail(ctx, KR_ERR_DEVICE,
                       "reach: the GPU level pass placed "
                       "%d of %d vertices",
                       (int)bounds[L], (int)g->n);
    *nlevels = L;
    return KR_OK;
}

/* ------------------------------------------ variants (gpu_variants) */

/* KR_REACH_GPU_STATUS_LEVELS: level[v] stays -1 until the pass of its
 * last parent's level; every pass scans all vertices, no queue. */
__global__ void k_status_roots(int32_t n, const int32_t *indeg, int32_t *level)
{
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += gridDim.x * blockDim.x)
        level[v] = indeg[v] ? -1 : 0;
}

__global__ void k_status_pass(int32_t n, const int64_t *off, const int32_t *adj,
                              int32_t *indeg, int32_t *level, int32_t L,
                              int32_t *grew)
{
    int any = 0;
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += gridDim.x * blockDim.x) {
        if (level[v] != L) continue;
        for (int64_t e = off[v]; e < off[v + 1]; e++)
            if (atomicSub(&indeg[adj[e]], 1) == 1) {
                level[adj[e]] = L + 1;
                any = 1;
            }
    }
    if (any) *grew = 1;
}

__global__ void k_level_counts(int32_t n, const int32_t *level, int32_t *cursor)
{
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += gridDim.x * blockDim.x)
        if (level[v] >= 0) atomicAdd(&cursor[level[v]], 1);
}

__global__ void k_level_scatter(int32_t n, const int32_t *level,
                                int32_t *cursor, int32_t *order)
{
    for (int32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += gridDim.x * blockDim.x)
        if (level[v] >= 0) order[atomicAdd(&cursor[level[v]], 1)] = v;
}

/* The passes; *nlevels is one more than the last level found. */
kr_status status_passes(kr_ctx *ctx, const gpu_index *g, int32_t *indeg,
                        int32_t *level, int32_t *grew, int32_t *nlevels)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    KR_CUDA_TRY(ctx, cudaMemsetAsync(indeg, 0, (size_t)g->n * 4, s));
    k_indegree<<<kr_grid(g->m, kBlock), kBlock, 0, s>>>(g->m, g->adj, indeg);
    k_status_roots<<<kr_grid(g->n, kBlock), kBlock, 0, s>>>(g->n, indeg, level);
    KR_LAUNCH_CHECK(ctx);
    int32_t L = 0, more = 1;
    while (more) {
        KR_CUDA_TRY(ctx, cudaMemsetAsync(grew, 0, 4, s));
        k_status_pass<<<kr_grid(g->n, kBlock), kBlock, 0, s>>>(
            g->n, g->off, g->adj, indeg, level, L++, grew);
        KR_LAUNCH_CHECK(ctx);
        KR_CUDA_TRY(ctx,
                    cudaMemcpyAsync(&more, grew, 4, cudaMemcpyDeviceToHost, s));
        KR_TRY(sync(ctx));
    }
    *nlevels = L;
    return KR_OK;
}

/* order[] grouped by level (a counting sort), bounds[] as depth_levels'. */
kr_status order_by_level(kr_ctx *ctx, const gpu_index *g, const int32_t *level,
                         int32_t *cursor, int32_t *order, int32_t *bounds,
                         int32_t L)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    KR_CUDA_TRY(ctx, cudaMemsetAsync(cursor, 0, (size_t)L * 4, s));
    k_level_counts<<<kr_grid(g->n, kBlock), kBlock, 0, s>>>(g->n, level,
                                                            cursor);
    KR_LAUNCH_CHECK(ctx);
    KR_TRY(ctx->ops->download(ctx, bounds + 1, cursor, (size_t)L * 4));
    bounds[0] = 0;
    for (int32_t l = 1; l <= L; l++)
        bounds[l] += bounds[l - 1];
    if (bounds[L] != g->n)
        return kr_fail(ctx, KR_ERR_DEVICE,
                       "reach: the GPU status levels placed %d of %d vertices",
                       (int)bounds[L], (int)g->n);
    KR_TRY(ctx->ops->upload(ctx, cursor, bounds, (size_t)L * 4));
    k_level_scatter<<<kr_grid(g->n, kBlock), kBlock, 0, s>>>(g->n, level,
                                                             cursor, order);
    KR_LAUNCH_CHECK(ctx);
    return sync(ctx);
}

kr_status depth_levels_status(kr_ctx *ctx, const gpu_index *g, int32_t *indeg,
                              int32_t *order, int32_t *grew, int32_t *bounds,
                              int32_t *nlevels)
{
    int32_t *level = NULL, *cursor = NULL;
    kr_status st = dev_alloc(ctx, (void **)&level, (size_t)g->n * 4);
    if (st == KR_OK)
        st = dev_alloc(ctx, (void **)&cursor, ((size_t)g->n + 1) * 4);
    if (st == KR_OK) st = status_passes(ctx, g, indeg, level, grew, nlevels);
    if (st == KR_OK)
        st = order_by_level(ctx, g, level, cursor, order, bounds, *nlevels);
    ctx->ops->release(ctx, level);
    ctx->ops->release(ctx, cursor);
    return st;
}

/* KR_REACH_GPU_DEGREE_BINS: a level's labels in three launches, each
 * taking the vertices of its out-degree class and skipping the rest: up
 * to kThreadDegree a thread each, up to kWarpDegree a warp, above a
 * block. */
constexpr int32_t kThreadDegree = 4, kWarpDegree = 512;

__global__ void k_labels_by_thread(label_work w, const int32_t *order,
                                   int32_t lo, int32_t hi, const int64_t *off,
                                   const int32_t *adj, int32_t *lab,
                                   int32_t *tree)
{
    int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (k >= hi - lo) return;
    int32_t v = order[lo + k];
    if (off[v + 1] - off[v] > kThreadDegree) return;
    int32_t mn[kMaxLabels], mx[kMaxLabels];
    label_share(w, v, 0, 1, off, adj, lab, mn, mx);
    store_label(w, v, mn, mx, lab, tree);
}

__global__ void k_labels_by_warp(label_work w, const int32_t *order, int32_t lo,
                                 int32_t hi, const int64_t *off,
                                 const int32_t *adj, int32_t *lab,
                                 int32_t *tree)
{
    int lane = threadIdx.x % kWarp;
    int64_t k = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / kWarp;
    if (k >= hi - lo) return; /* whole warps leave together */
    int32_t v = order[lo + k];
    int64_t deg = off[v + 1] - off[v];
    if (deg <= kThreadDegree || deg > kWarpDegree) return;
    int32_t mn[kMaxLabels], mx[kMaxLabels];
    label_share(w, v, lane, kWarp, off, adj, lab, mn, mx);
    warp_reduce(w.d, mn, mx);
    if (lane == 0) store_label(w, v, mn, mx, lab, tree);
}

/* Blocks of kBlock threads loop over the level; a vertex's degree is the
 * same for the whole block, so the skip and the barriers agree. */
__global__ void k_labels_by_block(label_work w, const int32_t *order,
                                  int32_t lo, int32_t hi, const int64_t *off,
                                  const int32_t *adj, int32_t *lab,
                                  int32_t *tree)
{
    __shared__ int32_t smn[kBlock / kWarp][kMaxLabels];
    __shared__ int32_t smx[kBlock / kWarp][kMaxLabels];
    int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (int32_t k = blockIdx.x; k < hi - lo; k += gridDim.x) {
        int32_t v = order[lo + k];
        if (off[v + 1] - off[v] <= kWarpDegree) continue;
        int32_t mn[kMaxLabels], mx[kMaxLabels];
        label_share(w, v, threadIdx.x, blockDim.x, off, adj, lab, mn, mx);
        warp_reduce(w.d, mn, mx);
        if (lane == 0)
            for (int t = 0; t < w.d; t++) {
                smn[warp][t] = mn[t];
                smx[warp][t] = mx[t];
            }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int i = 1; i < kBlock / kWarp; i++)
                for (int t = 0; t < w.d; t++) {
                    mn[t] = min(mn[t], smn[i][t]);
                    mx[t] = max(mx[t], smx[i][t]);
                }
            store_label(w, v, mn, mx, lab, tree);
        }
        __syncthreads();
    }
}

void labels_by_degree(cudaStream_t s, const gpu_index *g, const label_work &w,
                      const int32_t *order, int32_t lo, int32_t hi)
{
    int32_t items = hi - lo;
    k_labels_by_thread<<<blocks(items), kBlock, 0, s>>>(
        w, order, lo, hi, g->off, g->adj, g->lab, g->tree);
    k_labels_by_warp<<<warp_grid(items), kBlock, 0, s>>>(
        w, order, lo, hi, g->off, g->adj, g->lab, g->tree);
    int looping = items < 1 ? 1 : items < 4096 ? items : 4096;
    k_labels_by_block<<<looping, kBlock, 0, s>>>(w, order, lo, hi, g->off,
                                                 g->adj, g->lab, g->tree);
}

kr_status sweeps(kr_ctx *ctx, const gpu_index *g, label_work w,
                 const int32_t *order, const int32_t *bounds, int32_t L,
                 unsigned variants)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    KR_CUDA_TRY(ctx, cudaMemsetAsync(w.best, 0xff, (size_t)w.d * g->n * 8, s));
    KR_CUDA_TRY(ctx,
                cudaMemsetAsync(w.acc, 0, (size_t)w.d * (g->n + 1) * 4, s));
    KR_CUDA_TRY(ctx,
                cudaMemsetAsync(w.start, 0, (size_t)w.d * (g->n + 1) * 4, s));
    k_parents<<<warp_grid(g->n), kBlock, 0, s>>>(w, g->n, g->off, g->adj);
    for (int32_t l = L - 1; l >= 0; l--) {
        int64_t items = (int64_t)(bounds[l + 1] - bounds[l]) * w.d;
        k_sizes<<<blocks(items), kBlock, 0, s>>>(w, order, bounds[l],
                                                 bounds[l + 1]);
    }
    for (int32_t l = 0; l < L; l++) {
        int64_t items = (int64_t)(bounds[l + 1] - bounds[l]) * w.d;
        k_starts<<<blocks(items), kBlock, 0, s>>>(w, order, bounds[l],
                                                  bounds[l + 1]);
    }
    for (int32_t l = L - 1; l >= 0; l--) {
        if (variants & KR_REACH_GPU_DEGREE_BINS) {
            labels_by_degree(s, g, w, order, bounds[l], bounds[l + 1]);
            continue;
        }
        k_labels<<<warp_grid(bounds[l + 1] - bounds[l]), kBlock, 0, s>>>(
            w, order, bounds[l], bounds[l + 1], g->off, g->adj, g->lab,
            g->tree);
    }
    KR_LAUNCH_CHECK(ctx);
    return sync(ctx);
}

kr_status upload_dag(kr_ctx *ctx, const kr_graph *D, gpu_index *g)
{
    g->n = D->n;
    g->m = D->m;
    KR_TRY(dev_alloc(ctx, (void **)&g->off, ((size_t)D->n + 1) * 8));
    KR_TRY(dev_alloc(ctx, (void **)&g->adj, (size_t)D->m * 4));
    KR_TRY(ctx->ops->upload(ctx, g->off, D->off, ((size_t)D->n + 1) * 8));
    return ctx->ops->upload(ctx, g->adj, D->adj, (size_t)D->m * 4);
}

kr_status label(kr_ctx *ctx, kr_reach *R, gpu_index *g)
{
    int32_t n = g->n, d = R->d, L = 0;
    label_work w = {n, d, R->seed, NULL, NULL, NULL, NULL, NULL};
    int32_t *indeg = NULL, *order = NULL, *count = NULL;
    int32_t *bounds = (int32_t *)malloc(((size_t)n + 2) * sizeof *bounds);
    kr_status st = bounds ? KR_OK : KR_ERR_NOMEM;
    size_t dn = (size_t)d * n, dn1 = (size_t)d * (n + 1);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&indeg, (size_t)n * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&order, (size_t)n * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&count, 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&w.best, dn * 8);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&w.acc, dn1 * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&w.size, dn * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&w.place, dn * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&w.start, dn1 * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&g->lab, (size_t)2 * dn * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&g->tree, (size_t)2 * dn * 4);
    if (st == KR_OK && (R->gpu_variants & KR_REACH_GPU_STATUS_LEVELS))
        st = depth_levels_status(ctx, g, indeg, order, count, bounds, &L);
    else if (st == KR_OK)
        st = depth_levels(ctx, g, indeg, order, count, bounds, &L);
    if (st == KR_OK) st = sweeps(ctx, g, w, order, bounds, L, R->gpu_variants);
    if (st == KR_OK)
        st = ctx->ops->download(ctx, R->lab, g->lab, (size_t)2 * dn * 4);
    if (st == KR_ERR_NOMEM && !bounds)
        st = kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    void *work[] = {indeg, order,  count,   w.best,
                    w.acc, w.size, w.place, w.start};
    for (void *p : work)
        ctx->ops->release(ctx, p);
    free(bounds);
    return st;
}

/* ------------------------------------------------------------ queries */

struct query_work {
    int32_t d, W;
    const int64_t *off;
    const int32_t *adj, *lab, *tree;
    const int32_t *src, *dst; /* the chunk's queries                     */
    int32_t q;                /* in this chunk                            */
    unsigned long long *seen, *front, *next; /* n * W, front and next zero
                                                between levels' use      */
    int32_t *in_next, *touched;              /* n flags, zero between uses */
    int32_t *queue, *queue_next, *touched_list;
    const int32_t *nfront; /* the size of queue, on the device          */
    int32_t *count_next;   /* pushes to queue_next                      */
    int32_t *ntouched;     /* vertices on touched_list                  */
    unsigned char *found;
};

__device__ __forceinline__ bool contains(const int32_t *la, const int32_t *lb,
                                         int d)
{
    for (int i = 0; i < d; i++)
        if (lb[2 * i] < la[2 * i] || lb[2 * i + 1] > la[2 * i + 1])
            return false;
    return true;
}

/* b's post number inside a's tree range for some traversal: a reaches b. */
__device__ __forceinline__ bool in_subtree(const int32_t *ta, const int32_t *tb,
                                           int d)
{
    for (int i = 0; i < d; i++)
        if (tb[2 * i + 1] >= ta[2 * i] && tb[2 * i + 1] <= ta[2 * i + 1])
            return true;
    return false;
}

/* c gained bits: into the next frontier (once), and onto the list of
 * vertices whose seen words the chunk's end clears. */
__device__ void push_next(const query_work &w, int32_t c)
{
    if (atomicExch(&w.in_next[c], 1) == 0)
        w.queue_next[atomicAdd(w.count_next, 1)] = c;
    if (atomicExch(&w.touched[c], 1) == 0)
        w.touched_list[atomicAdd(w.ntouched, 1)] = c;
}

/* Each query's source: answered at once when the target lies in its tree
 * range (the host pre-filter, without the tree ranges, left it), else
 * the first frontier. */
__global__ void k_query_start(query_work w)
{
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= w.q) return;
    int32_t a = w.src[k];
    size_t sa = (size_t)2 * w.d * a, sb = (size_t)2 * w.d * w.dst[k];
    if (in_subtree(w.tree + sa, w.tree + sb, w.d)) {
        w.found[k] = 1;
        return;
    }
    unsigned long long bit = 1ull << (k % 64);
    size_t at = (size_t)a * w.W + k / 64;
    atomicOr(&w.seen[at], bit);
    atomicOr(&w.front[at], bit);
    push_next(w, a);
}

/* The level kernels loop over the frontier whose size they read on the
 * device, so the host queues several levels between synchronisations. */
#define FOR_FRONTIER(items, i)                                                 \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;           \
         i < (items); i += (int64_t)gridDim.x * blockDim.x)

/* An item per (frontier vertex, word): for every child, the bits of
 * queries not yet seen there whose target the child's labels contain. A
 * bit already seen at a child cannot be its target's (a target is never
 * marked seen), so only fresh bits are tested. */
__device__ void expand_one(const query_work &w, int64_t i)
{
    int32_t v = w.queue[i / w.W];
    int32_t word = (int32_t)(i % w.W);
    unsigned long long bits = w.front[(size_t)v * w.W + word];
    if (!bits) return;
    for (int64_t e = w.off[v]; e < w.off[v + 1]; e++) {
        int32_t c = w.adj[e];
        size_t at = (size_t)c * w.W + word;
        unsigned long long keep = 0, rest = bits & ~w.seen[at];
        size_t sc = (size_t)2 * w.d * c;
        while (rest) {
            int j = __ffsll((long long)rest) - 1;
            rest &= rest - 1;
            int32_t k = word * 64 + j;
            if (w.found[k]) continue;
            int32_t b = w.dst[k];
            size_t sb = (size_t)2 * w.d * b;
            if (c == b)
                w.found[k] = 1;
            else if (c < b && contains(w.lab + sc, w.lab + sb, w.d)) {
                if (in_subtree(w.tree + sc, w.tree + sb, w.d))
                    w.found[k] = 1;
                else
                    keep |= 1ull << j;
            }
        }
        if (!keep) continue;
        keep &= ~atomicOr(&w.seen[at], keep);
        if (!keep) continue;
        atomicOr(&w.next[at], keep);
        push_next(w, c);
    }
}

__global__ void k_query_expand(query_work w)
{
    FOR_FRONTIER((int64_t)*w.nfront * w.W, i) expand_one(w, i);
}

/* The frontier's words cleared, its vertices free to join the next one. */
__global__ void k_query_clear(query_work w)
{
    FOR_FRONTIER((int64_t)*w.nfront * w.W, i)
    w.front[(size_t)w.queue[i / w.W] * w.W + i % w.W] = 0;
}

__global__ void k_query_unmark(query_work w)
{
    FOR_FRONTIER(*w.nfront, i) w.in_next[w.queue[i]] = 0;
}

/* The chunk's end: the seen words of the vertices it touched, and their
 * flags, back to zero (cheaper than clearing n * W words). */
__global__ void k_query_forget(query_work w)
{
    FOR_FRONTIER((int64_t)*w.ntouched * w.W, i)
    {
        int32_t v = w.touched_list[i / w.W];
        w.seen[(size_t)v * w.W + i % w.W] = 0;
        if (i % w.W == 0) w.touched[v] = 0;
    }
}

kr_status read_count(kr_ctx *ctx, const int32_t *count, int32_t *h)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    KR_CUDA_TRY(ctx, cudaMemcpyAsync(h, count, 4, cudaMemcpyDeviceToHost, s));
    return sync(ctx);
}

/* Levels queued between two looks at the frontier's size: a level that
 * finds an empty frontier costs a few microseconds of launches. */
constexpr int kLevelsPerSync = 8;

/* One level: the frontier (queue, *nfront) expanded into (queue_next,
 * *count_next); then the roles of the queues, counts and bit arrays swap. */
kr_status enqueue_level(kr_ctx *ctx, query_work *w, int grid)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    KR_CUDA_TRY(ctx, cudaMemsetAsync(w->count_next, 0, 4, s));
    k_query_unmark<<<grid, kBlock, 0, s>>>(*w);
    k_query_expand<<<grid, kBlock, 0, s>>>(*w);
    k_query_clear<<<grid, kBlock, 0, s>>>(*w);
    KR_LAUNCH_CHECK(ctx);
    int32_t *q = w->queue;
    w->queue = w->queue_next;
    w->queue_next = q;
    int32_t *c = (int32_t *)w->nfront;
    w->nfront = w->count_next;
    w->count_next = c;
    unsigned long long *f = w->front;
    w->front = w->next;
    w->next = f;
    return KR_OK;
}

/* counts: [0] and [1] the two queues' sizes, [2] the touched vertices. */
kr_status run_chunk(kr_ctx *ctx, query_work w, int32_t *counts)
{
    cudaStream_t s = kr_cuda(ctx)->stream;
    int grid = kr_cuda(ctx)->sm_count * 8;
    KR_CUDA_TRY(ctx, cudaMemsetAsync(w.found, 0, (size_t)w.q, s));
    KR_CUDA_TRY(ctx, cudaMemsetAsync(counts, 0, 12, s));
    w.count_next = counts; /* the sources go to queue_next */
    w.nfront = counts + 1;
    w.ntouched = counts + 2;
    k_query_start<<<blocks(w.q), kBlock, 0, s>>>(w);
    KR_LAUNCH_CHECK(ctx);
    int32_t *q = w.queue; /* the sources' queue is the first frontier */
    w.queue = w.queue_next;
    w.queue_next = q;
    w.nfront = counts;
    w.count_next = counts + 1;
    for (int32_t left = 1; left > 0;) {
        for (int l = 0; l < kLevelsPerSync; l++)
            KR_TRY(enqueue_level(ctx, &w, grid));
        KR_TRY(read_count(ctx, w.nfront, &left));
    }
    k_query_forget<<<grid, kBlock, 0, s>>>(w);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* Words per vertex: enough for the batch, within about 6 GiB of bit
 * arrays. */
int32_t words_for(int64_t q, int32_t n)
{
    int64_t want = (q + 63) / 64, cap = (6ll << 30) / (24ll * (n + 1));
    if (want > 1024) want = 1024;
    if (cap < 1) cap = 1;
    return (int32_t)(want < cap ? want : cap);
}

/* The query workspace, kept with the index between batches (as the CPU
 * index keeps its marks) and grown when a batch wants more words. */
struct query_space {
    int32_t W;
    int32_t *src, *dst;
    unsigned long long *seen, *front, *next;
    int32_t *in_next, *touched, *queue, *queue_next, *touched_list, *count;
    unsigned char *found;
};

void release_space(kr_ctx *ctx, query_space *q)
{
    void *p[] = {q->src,        q->dst,          q->seen,    q->front,
                 q->next,       q->in_next,      q->touched, q->queue,
                 q->queue_next, q->touched_list, q->count,   q->found};
    for (void *x : p)
        ctx->ops->release(ctx, x);
    memset(q, 0, sizeof *q);
}

kr_status reserve_space(kr_ctx *ctx, int32_t n, int32_t W, query_space *q)
{
    if (q->W >= W) return KR_OK;
    release_space(ctx, q);
    size_t chunk = 64 * (size_t)W, words = (size_t)n * W * 8,
           ni = (size_t)n * 4;
    void **bufs[] = {
        (void **)&q->src,          (void **)&q->dst,   (void **)&q->seen,
        (void **)&q->front,        (void **)&q->next,  (void **)&q->in_next,
        (void **)&q->touched,      (void **)&q->queue, (void **)&q->queue_next,
        (void **)&q->touched_list, (void **)&q->count, (void **)&q->found};
    size_t sizes[] = {chunk * 4, chunk * 4, words, words, words, ni,
                      ni,        ni,        ni,    ni,    12,    chunk};
    for (int i = 0; i < 12; i++)
        if (dev_alloc(ctx, bufs[i], sizes[i]) != KR_OK) {
            release_space(ctx, q);
            return kr_fail(ctx, KR_ERR_NOMEM,
                           "reach: out of GPU memory "
                           "for the query bits (%d words per vertex)",
                           W);
        }
    cudaStream_t s = kr_cuda(ctx)->stream;
    KR_CUDA_TRY(ctx, cudaMemsetAsync(q->seen, 0, words, s));
    KR_CUDA_TRY(ctx, cudaMemsetAsync(q->front, 0, words, s));
    KR_CUDA_TRY(ctx, cudaMemsetAsync(q->next, 0, words, s));
    KR_CUDA_TRY(ctx, cudaMemsetAsync(q->in_next, 0, ni, s));
    KR_CUDA_TRY(ctx, cudaMemsetAsync(q->touched, 0, ni, s));
    q->W = W;
    return KR_OK;
}

query_work work_for(const kr_reach *R, const gpu_index *g, const query_space *q,
                    int32_t W)
{
    query_work w;
    memset(&w, 0, sizeof w);
    w.d = R->d;
    w.W = W;
    w.off = g->off;
    w.adj = g->adj;
    w.lab = g->lab;
    w.tree = g->tree;
    w.src = q->src;
    w.dst = q->dst;
    w.seen = q->seen;
    w.front = q->front;
    w.next = q->next;
    w.in_next = q->in_next;
    w.touched = q->touched;
    w.queue = q->queue;
    w.queue_next = q->queue_next;
    w.touched_list = q->touched_list;
    w.found = q->found;
    return w;
}

/* ------------------------------------------- a warp per query (opt-in)
 * The host index's search (kr_grail_dag_query) with a warp per query: the
 * warp scans each vertex's edges 32 at a time, marks a child visited in
 * its own bitset (atomicOr: two lanes may share a word), keeps the
 * children whose labels contain the target's and pushes them together
 * (ballot, prefix count) on its own stack. A stack of kWarpStack entries
 * is enough for most searches; one that would outgrow it answers 2, and
 * the host sends those queries to the bit-parallel search. Persistent
 * warps take queries from a counter; after each query the warp zeroes its
 * bitset (n / 8 bytes, little beside the search). */

constexpr int32_t kWarpStack = 16384;
constexpr int32_t kWarpSlotsMax = 4096;
constexpr size_t kWarpBudget = (size_t)1 << 30;  /* bitsets and stacks */
constexpr int64_t kWarpChunk = (int64_t)1 << 24; /* queries per launch */

struct warp_work {
    int32_t d, words4, cap; /* uint4 words of a bitset; stack entries */
    const int64_t *off;
    const int32_t *adj, *lab, *tree;
    const int32_t *src, *dst;
    int32_t q;
    int32_t *next;        /* the next query to take */
    uint4 *visited;       /* slots * words4 */
    int32_t *stack;       /* slots * cap */
    unsigned char *found; /* q: 1 reaches, 0 does not, 2 stack too small */
};

/* Answer of query a -> b for the calling warp (every lane returns the
 * same); the host filter has ruled out a == b, a > b and a's labels not
 * containing b's. */
__device__ unsigned char warp_search(const warp_work &w, unsigned *vis,
                                     int32_t *stack, int32_t a, int32_t b,
                                     int lane)
{
    size_t sb = (size_t)2 * w.d * b;
    const int32_t *lb = w.lab + sb, *tb = w.tree + sb;
    if (in_subtree(w.tree + (size_t)2 * w.d * a, tb, w.d)) return 1;
    if (lane == 0) {
        stack[0] = a;
        atomicOr(&vis[a >> 5], 1u << (a & 31));
    }
    int32_t top = 1;
    __syncwarp();
    while (top > 0) {
        int32_t x = stack[--top];
        __syncwarp(); /* every lane has x before a push reuses its slot */
        int64_t e1 = w.off[x + 1];
        for (int64_t e = w.off[x]; e < e1; e += kWarp) {
            int32_t c = -1;
            bool hit = false, push = false;
            if (e + lane < e1) {
                c = w.adj[e + lane];
                unsigned bit = 1u << (c & 31);
                if (c == b)
                    hit = true;
                else if (c < b && !(atomicOr(&vis[c >> 5], bit) & bit)) {
                    size_t sc = (size_t)2 * w.d * c;
                    if (contains(w.lab + sc, lb, w.d)) {
                        if (in_subtree(w.tree + sc, tb, w.d))
                            hit = true;
                        else
                            push = true;
                    }
                }
            }
            if (__any_sync(~0u, hit)) return 1;
            unsigned m = __ballot_sync(~0u, push);
            int32_t cnt = __popc(m);
            if (top + cnt > w.cap) return 2;
            if (push) stack[top + __popc(m & ((1u << lane) - 1))] = c;
            top += cnt;
            __syncwarp();
        }
    }
    return 0;
}

__global__ void k_warp_queries(warp_work w)
{
    int lane = threadIdx.x % kWarp;
    size_t slot = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / kWarp;
    uint4 *vis = w.visited + slot * w.words4;
    int32_t *stack = w.stack + slot * w.cap;
    for (;;) {
        int32_t k = 0;
        if (lane == 0) k = atomicAdd(w.next, 1);
        k = __shfl_sync(~0u, k, 0);
        if (k >= w.q) return;
        unsigned char got =
            warp_search(w, (unsigned *)vis, stack, w.src[k], w.dst[k], lane);
        if (lane == 0) w.found[k] = got;
        __syncwarp();
        for (int32_t i = lane; i < w.words4; i += kWarp)
            vis[i] = make_uint4(0, 0, 0, 0);
        __syncwarp();
    }
}

/* The stack's size: kWarpStack, or KRYLOV_REACH_WARP_STACK (a test knob,
 * so that a small graph can exercise the fallback), at most n. */
int32_t warp_stack_cap(int32_t n)
{
    int64_t cap = kWarpStack;
    const char *env = getenv("KRYLOV_REACH_WARP_STACK");
    long want = env ? atol(env) : 0;
    if (want > 0) cap = want;
    return (int32_t)(cap < n ? cap : (n > 0 ? n : 1));
}

struct warp_space {
    int32_t slots;
    uint4 *visited;
    int32_t *stack, *next, *src, *dst;
    unsigned char *found;
};

kr_status zero(kr_ctx *ctx, void *p, size_t bytes);

void warp_release(kr_ctx *ctx, warp_space *s)
{
    void *p[] = {s->visited, s->stack, s->next, s->src, s->dst, s->found};
    for (void *x : p)
        ctx->ops->release(ctx, x);
    memset(s, 0, sizeof *s);
}

kr_status warp_reserve(kr_ctx *ctx, const warp_work &w, int64_t q,
                       warp_space *s)
{
    memset(s, 0, sizeof *s);
    size_t per = (size_t)w.words4 * 16 + (size_t)w.cap * 4;
    int64_t slots = (int64_t)(kWarpBudget / per);
    if (slots > kWarpSlotsMax) slots = kWarpSlotsMax;
    if (slots > q) slots = q;
    slots = (slots + kBlock / kWarp - 1) / (kBlock / kWarp) * (kBlock / kWarp);
    if (slots < kBlock / kWarp) slots = kBlock / kWarp;
    s->slots = (int32_t)slots;
    kr_status st = dev_alloc(ctx, (void **)&s->visited, slots * w.words4 * 16);
    if (st == KR_OK)
        st = dev_alloc(ctx, (void **)&s->stack, (size_t)slots * w.cap * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&s->next, 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&s->src, (size_t)q * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&s->dst, (size_t)q * 4);
    if (st == KR_OK) st = dev_alloc(ctx, (void **)&s->found, (size_t)q);
    if (st == KR_OK) st = zero(ctx, s->visited, slots * w.words4 * 16);
    if (st != KR_OK) warp_release(ctx, s);
    return st;
}

kr_status zero(kr_ctx *ctx, void *p, size_t bytes)
{
    KR_CUDA_TRY(ctx, cudaMemsetAsync(p, 0, bytes, kr_cuda(ctx)->stream));
    return KR_OK;
}

kr_status launch_warp_queries(kr_ctx *ctx, const warp_work &w, int32_t slots)
{
    KR_TRY(zero(ctx, w.next, 4));
    k_warp_queries<<<slots * kWarp / kBlock, kBlock, 0, kr_cuda(ctx)->stream>>>(
        w);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* The q queries (DAG vertex pairs) a warp each; got[k] = 0, 1 or 2 (the
 * stack was too small). */
kr_status warp_queries(kr_ctx *ctx, const kr_reach *R, const gpu_index *g,
                       int64_t q, const int32_t *pairs, unsigned char *got)
{
    warp_work w;
    memset(&w, 0, sizeof w);
    w.d = R->d;
    w.words4 = (int32_t)(((int64_t)g->n + 127) / 128);
    w.cap = warp_stack_cap(g->n);
    w.off = g->off;
    w.adj = g->adj;
    w.lab = g->lab;
    w.tree = g->tree;
    w.q = (int32_t)q;
    warp_space s;
    KR_TRY(warp_reserve(ctx, w, q, &s));
    int32_t *h = (int32_t *)malloc(((size_t)2 * q + 1) * sizeof *h);
    kr_status st =
        h ? KR_OK : kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    for (int64_t k = 0; st == KR_OK && k < q; k++) {
        h[k] = pairs[2 * k];
        h[q + k] = pairs[2 * k + 1];
    }
    if (st == KR_OK) st = ctx->ops->upload(ctx, s.src, h, (size_t)q * 4);
    if (st == KR_OK) st = ctx->ops->upload(ctx, s.dst, h + q, (size_t)q * 4);
    w.src = s.src;
    w.dst = s.dst;
    w.next = s.next;
    w.visited = s.visited;
    w.stack = s.stack;
    w.found = s.found;
    if (st == KR_OK) st = launch_warp_queries(ctx, w, s.slots);
    if (st == KR_OK) st = ctx->ops->download(ctx, got, s.found, (size_t)q);
    free(h);
    warp_release(ctx, &s);
    return st;
}

} // namespace

extern "C" kr_status kr_grail_cuda_label(kr_ctx *ctx, kr_reach *R)
{
    if (R->d > kMaxLabels)
        return kr_fail(ctx, KR_ERR_ARG, "reach: at most %d labels on the GPU",
                       kMaxLabels);
    gpu_index *g = (gpu_index *)calloc(1, sizeof *g);
    if (g) g->space = calloc(1, sizeof(query_space));
    if (!g || !g->space) {
        free(g);
        return kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    }
    g->ctx = ctx;
    R->gpu = g;
    KR_TRY(upload_dag(ctx, R->dag, g));
    KR_TRY(label(ctx, R, g));
    g->bytes =
        ((size_t)g->n + 1) * 8 + (size_t)g->m * 4 + (size_t)4 * R->d * g->n * 4;
    R->info.device_bytes = g->bytes;
    return KR_OK;
}

/* The bit-parallel search: chunks of 64 * W queries. */
static kr_status bits_queries(kr_ctx *ctx, kr_reach *R, int64_t q,
                              const int32_t *dag_pairs, unsigned char *answer)
{
    gpu_index *g = (gpu_index *)R->gpu;
    query_space *space = (query_space *)g->space;
    int32_t W = words_for(q, g->n);
    KR_TRY(reserve_space(ctx, g->n, W, space));
    int64_t chunk = 64ll * W;
    query_work w = work_for(R, g, space, W);
    int32_t *h = (int32_t *)malloc((size_t)2 * chunk * sizeof *h);
    if (!h) return kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    kr_status st = KR_OK;
    for (int64_t base = 0; st == KR_OK && base < q; base += chunk) {
        w.q = (int32_t)(q - base < chunk ? q - base : chunk);
        for (int32_t k = 0; k < w.q; k++) {
            h[k] = dag_pairs[2 * (base + k)];
            h[chunk + k] = dag_pairs[2 * (base + k) + 1];
        }
        st = ctx->ops->upload(ctx, (void *)w.src, h, (size_t)w.q * 4);
        if (st == KR_OK)
            st = ctx->ops->upload(ctx, (void *)w.dst, h + chunk,
                                  (size_t)w.q * 4);
        if (st == KR_OK) st = run_chunk(ctx, w, space->count);
        if (st == KR_OK)
            st = ctx->ops->download(ctx, answer + base, w.found, (size_t)w.q);
    }
    free(h);
    return st;
}

/* A warp per query, and the queries whose search outgrew its stack then go
 * to the bit-parallel search; only that one with KR_REACH_GPU_BIT_QUERIES
 * alone. */
extern "C" kr_status kr_grail_cuda_query(kr_ctx *ctx, kr_reach *R, int64_t q,
                                         const int32_t *dag_pairs,
                                         unsigned char *answer)
{
    R->warp_searched = R->warp_fallbacks = 0;
    if (!kr_reach_warp_queries(R->gpu_variants) || q == 0)
        return bits_queries(ctx, R, q, dag_pairs, answer);
    for (int64_t base = 0; base < q; base += kWarpChunk) {
        int64_t len = q - base < kWarpChunk ? q - base : kWarpChunk;
        kr_status st = warp_queries(ctx, R, (const gpu_index *)R->gpu, len,
                                    dag_pairs + 2 * base, answer + base);
        if (st == KR_ERR_NOMEM) /* no room for the warps: all by bits */
            memset(answer + base, 2, (size_t)len);
        else if (st != KR_OK)
            return st;
    }
    int64_t left = 0;
    for (int64_t k = 0; k < q; k++)
        left += answer[k] == 2;
    R->warp_searched = q - left;
    R->warp_fallbacks = left;
    if (!left) return KR_OK;
    int32_t *pairs = (int32_t *)malloc((size_t)2 * left * sizeof *pairs);
    unsigned char *got = (unsigned char *)malloc((size_t)left);
    kr_status st =
        pairs && got ? KR_OK
                     : kr_fail(ctx, KR_ERR_NOMEM, "reach: out of host memory");
    for (int64_t k = 0, j = 0; st == KR_OK && k < q; k++)
        if (answer[k] == 2) {
            pairs[2 * j] = dag_pairs[2 * k];
            pairs[2 * j++ + 1] = dag_pairs[2 * k + 1];
        }
    if (st == KR_OK) st = bits_queries(ctx, R, left, pairs, got);
    for (int64_t k = 0, j = 0; st == KR_OK && k < q; k++)
        if (answer[k] == 2) answer[k] = got[j++];
    free(pairs);
    free(got);
    return st;
}

extern "C" void kr_grail_cuda_free(kr_reach *R)
{
    gpu_index *g = (gpu_index *)R->gpu;
    if (!g) return;
    if (g->space) release_space(g->ctx, (query_space *)g->space);
    free(g->space);
    g->ctx->ops->release(g->ctx, g->off);
    g->ctx->ops->release(g->ctx, g->adj);
    g->ctx->ops->release(g->ctx, g->lab);
    g->ctx->ops->release(g->ctx, g->tree);
    free(g);
    R->gpu = NULL;
}
