/* Supervariable blocking on the GPU: the blocks of precond/blocking.c's
 * host greedy, found without the host's pass over n flags.
 *
 * The greedy in terms of rows: a supervariable opens at row i when
 * i - run(i) is a multiple of max, run(i) the last row <= i whose pattern
 * differs from its predecessor's (a max-scan of the pattern flags). A block
 * opening at row i absorbs supervariables while it stays <= max rows, so
 * it ends at the last supervariable boundary <= i + max (n when i + max >=
 * n): next(i), a function of run alone. The block starts are the chain 0,
 * next(0), next(next(0)), ... To follow it in parallel the rows are cut
 * into chunks; the chain's first row in a chunk lies within max - 1 <= 31
 * rows of the chunk's first row (next advances at most max rows), so a
 * chunk acts as a map from its entry offset (0..31) to the next chunk's.
 * One warp per chunk computes that map (lane = entry), an inclusive scan
 * composes the maps (composition is associative), and one thread per
 * chunk then marks the chain's rows from its true entry; a compaction of
 * the marks gives the starts. The batch's offsets and size-class order
 * follow by a scan and a stable radix sort, over n slots (the host does
 * not know nb yet), and the host downloads one header. */
#include "core/cuda.h"
#include "core/vec.h"
#include "precond/blocking.h"
#include "precond/blocking_dev.h"
#include "spmv/devbuild.h"

#include <cub/cub.cuh>
#include <string.h>

#define BLOCK 256
#define CHUNK 128 /* rows per chunk of the chain's scan */
/* Sort key of the slots past the last block: after every size class. */
#define NO_CLASS 15
#define CLASS_BITS 4

#define GRID_STRIDE(i, n)                                                      \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);  \
         i += (int64_t)gridDim.x * blockDim.x)

/* A chunk's effect on the chain: entry offset e -> the next chunk's. */
typedef struct chain_map {
    unsigned char to[KR_BLOCK_MAX];
} chain_map;

/* a, then b: the maps of two consecutive row ranges as one. */
struct compose_maps {
    __host__ __device__ chain_map operator()(const chain_map &a,
                                             const chain_map &b) const
    {
        chain_map r;
        for (int e = 0; e < KR_BLOCK_MAX; e++)
            r.to[e] = b.to[a.to[e]];
        return r;
    }
};

struct max_i32 {
    __host__ __device__ int32_t operator()(int32_t a, int32_t b) const
    {
        return a > b ? a : b;
    }
};

/* What the host downloads: kr_gje_batch's sizes. */
typedef struct batch_header {
    int32_t nb, max_k;
    int64_t total;
    int32_t class_start[KR_GJE_CLASSES + 1];
} batch_header;

/* The setup's device memory, one allocation. */
typedef struct dev_scratch {
    unsigned char *flags;     /* n + 1: pattern flags, then the chain marks */
    int32_t *run_in, *run;    /* n: i where row i opens a run, else 0; run */
    int32_t *ids;             /* n + 1: 0, 1, ..., n                     */
    chain_map *maps, *prefix; /* nchunks: each chunk's map; their scan   */
    int32_t *starts;          /* n + 1: the block starts, then n         */
    int32_t *count;           /* nb + 1, the starts selected             */
    unsigned char *key, *key_sorted; /* n: size class by block        */
    int32_t *order;                  /* n: blocks by size class       */
    int64_t *sq, *offs;              /* n + 1: k_b^2, its exclusive sum */
    batch_header *head;
    void *base;
} dev_scratch;

/* ------------------------------------------------------------ kernels */

__global__ void k_run_starts(int32_t n, const unsigned char *__restrict__ flags,
                             int32_t *__restrict__ run_in,
                             int32_t *__restrict__ ids)
{
    GRID_STRIDE(i, (int64_t)n + 1)
    {
        if (i < n) run_in[i] = flags[i] ? (int32_t)i : 0;
        ids[i] = (int32_t)i;
    }
}

/* Where the block opening at row i ends and the next opens. */
__device__ int32_t next_start(int32_t i, int32_t n, int32_t max,
                              const int32_t *__restrict__ run)
{
    if (i >= n - max) return n; /* i + max >= n, without overflow */
    int32_t j = i + max, r = run[j];
    return r + (j - r) / max * max;
}

/* maps[c].to[e]: the chain entering chunk c at its row e leaves it at the
 * returned offset from the next chunk's first row (0..max-1; clamped in
 * the last chunk, whose map is never used). A warp per chunk. */
__global__ void k_chain_maps(int32_t n, int32_t max,
                             const int32_t *__restrict__ run, int32_t nchunks,
                             chain_map *__restrict__ maps)
{
    GRID_STRIDE(t, (int64_t)nchunks * KR_BLOCK_MAX)
    {
        int64_t c = t / KR_BLOCK_MAX, first = c * CHUNK;
        int64_t end = first + CHUNK < n ? first + CHUNK : n;
        int64_t row = first + t % KR_BLOCK_MAX;
        while (row < end)
            row = next_start((int32_t)row, n, max, run);
        int64_t off = row - (first + CHUNK);
        maps[c].to[t % KR_BLOCK_MAX] =
            (unsigned char)(off < 0               ? 0
                            : off >= KR_BLOCK_MAX ? 0
                                                  : off);
    }
}

/* marks[row] = 1 for the chain's rows (marks zeroed before), a thread per
 * chunk from its entry; marks[n] = 1 closes the last block. */
__global__ void k_mark_chain(int32_t n, int32_t max,
                             const int32_t *__restrict__ run, int32_t nchunks,
                             const chain_map *__restrict__ prefix,
                             unsigned char *__restrict__ marks)
{
    GRID_STRIDE(c, nchunks)
    {
        int64_t first = c * CHUNK;
        int64_t end = first + CHUNK < n ? first + CHUNK : n;
        int64_t row = first + (c > 0 ? prefix[c - 1].to[0] : 0);
        while (row < end) {
            marks[row] = 1;
            row = next_start((int32_t)row, n, max, run);
        }
        if (c == 0) marks[n] = 1;
    }
}

__device__ int size_class(int32_t k)
{
    int c = 0;
    while (KR_GJE_CLASS_ROWS(c) < k)
        c++;
    return c;
}

/* Per slot b <= n: block b's size class (NO_CLASS past the last block),
 * k_b^2 (0 there) and the largest k into head->max_k (zeroed before). The
 * block is a multiple of the warp, as the shuffles need. */
__global__ void k_block_keys(int32_t n, const int32_t *__restrict__ starts,
                             const int32_t *__restrict__ count,
                             unsigned char *__restrict__ key,
                             int64_t *__restrict__ sq, batch_header *head)
{
    int32_t nb = *count - 1, kmax = 0;
    GRID_STRIDE(b, (int64_t)n + 1)
    {
        int32_t k = b < nb ? starts[b + 1] - starts[b] : 0;
        if (b < n) key[b] = (unsigned char)(k ? size_class(k) : NO_CLASS);
        sq[b] = (int64_t)k * k;
        kmax = k > kmax ? k : kmax;
    }
    for (int o = 16; o > 0; o /= 2) {
        int32_t other = __shfl_xor_sync(0xffffffffu, kmax, o);
        kmax = other > kmax ? other : kmax;
    }
    if ((threadIdx.x & 31) == 0 && kmax > 0) atomicMax(&head->max_k, kmax);
}

/* class_start[c] = the blocks of classes < c (the keys sorted), a thread
 * per class boundary; nb and total. */
__global__ void k_header(const unsigned char *__restrict__ key_sorted,
                         const int32_t *__restrict__ count,
                         const int64_t *__restrict__ offs, batch_header *head)
{
    int c = (int)threadIdx.x;
    int32_t nb = *count - 1;
    if (c <= KR_GJE_CLASSES) {
        int32_t lo = 0, hi = nb; /* the first slot with key >= c */
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (key_sorted[mid] < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        head->class_start[c] = lo;
    }
    if (c == 0) {
        head->nb = nb;
        head->total = offs[nb];
    }
}

/* --------------------------------------------------------------- host */

/* Lays s's pieces out from base (or only sizes them when base is NULL):
 * the bytes of the whole, each piece 16-byte aligned. */
static size_t layout(char *base, int32_t n, int32_t nchunks, dev_scratch *s)
{
    size_t n1 = (size_t)n + 1, maps = (size_t)nchunks * sizeof(chain_map);
    size_t at = 0;
#define PIECE(field, bytes)                                                    \
    do {                                                                       \
        s->field = base ? (decltype(s->field))(base + at) : NULL;              \
        at += ((bytes) + 15) / 16 * 16;                                        \
    } while (0)
    PIECE(flags, n1);
    PIECE(run_in, n1 * 4);
    PIECE(run, n1 * 4);
    PIECE(ids, n1 * 4);
    PIECE(maps, maps);
    PIECE(prefix, maps);
    PIECE(starts, n1 * 4);
    PIECE(count, 4);
    PIECE(key, n1);
    PIECE(key_sorted, n1);
    PIECE(order, n1 * 4);
    PIECE(sq, n1 * 8);
    PIECE(offs, n1 * 8);
    PIECE(head, sizeof(batch_header));
#undef PIECE
    return at;
}

static kr_status scratch_alloc(kr_ctx *ctx, int32_t n, int32_t nchunks,
                               dev_scratch *s)
{
    memset(s, 0, sizeof *s);
    KR_TRY(ctx->ops->alloc(ctx, &s->base, layout(NULL, n, nchunks, s)));
    layout((char *)s->base, n, nchunks, s);
    return KR_OK;
}

/* A CUB call's two phases: size the temporary storage, take it from the
 * context's pool, run. call(temp, bytes) is the CUB function's call. */
template <typename Call>
static kr_status cub_run(kr_ctx *ctx, const char *what, Call call)
{
    size_t bytes = 0;
    cudaError_t e = call(NULL, bytes);
    void *temp = NULL;
    if (e == cudaSuccess)
        KR_TRY(ctx->ops->alloc(ctx, &temp, bytes ? bytes : 1));
    if (e == cudaSuccess) e = call(temp, bytes);
    kr_dev_free(ctx, temp);
    if (e == cudaSuccess) return KR_OK;
    return kr_cuda_fail(ctx, what, cudaGetErrorString(e), __FILE__, __LINE__);
}

static kr_status run_scan(kr_ctx *ctx, const dev_scratch *s, int32_t n)
{
    cudaStream_t stream = kr_cuda(ctx)->stream;
    return cub_run(ctx, "cub::DeviceScan::InclusiveScan (max)",
                   [&](void *temp, size_t &bytes) {
                       return cub::DeviceScan::InclusiveScan(
                           temp, bytes, s->run_in, s->run, max_i32(), n,
                           stream);
                   });
}

static kr_status map_scan(kr_ctx *ctx, const dev_scratch *s, int32_t nchunks)
{
    cudaStream_t stream = kr_cuda(ctx)->stream;
    return cub_run(ctx, "cub::DeviceScan::InclusiveScan (maps)",
                   [&](void *temp, size_t &bytes) {
                       return cub::DeviceScan::InclusiveScan(
                           temp, bytes, s->maps, s->prefix, compose_maps(),
                           nchunks, stream);
                   });
}

/* starts = the marked rows among 0..n, count = how many (nb + 1). */
static kr_status select_starts(kr_ctx *ctx, const dev_scratch *s, int32_t n)
{
    cudaStream_t stream = kr_cuda(ctx)->stream;
    return cub_run(
        ctx, "cub::DeviceSelect::Flagged", [&](void *temp, size_t &bytes) {
            return cub::DeviceSelect::Flagged(temp, bytes, s->ids, s->flags,
                                              s->starts, s->count, n + 1,
                                              stream);
        });
}

/* order = the block numbers by size class, stable (the host's counting
 * sort), the unused slots last. */
static kr_status sort_classes(kr_ctx *ctx, const dev_scratch *s, int32_t n)
{
    cudaStream_t stream = kr_cuda(ctx)->stream;
    return cub_run(ctx, "cub::DeviceRadixSort::SortPairs",
                   [&](void *temp, size_t &bytes) {
                       return cub::DeviceRadixSort::SortPairs(
                           temp, bytes, s->key, s->key_sorted, s->ids, s->order,
                           n, 0, CLASS_BITS, stream);
                   });
}

/* The chain of block starts into s->starts and s->count. */
static kr_status find_starts(kr_ctx *ctx, const kr_gje_csr *A, int32_t max,
                             int32_t nchunks, const dev_scratch *s)
{
    cudaStream_t stream = kr_cuda(ctx)->stream;
    int32_t n = A->nrows;
    KR_TRY(kr_gje_batch_cuda_ops()->pattern_flags(ctx, A, s->flags));
    k_run_starts<<<kr_grid((int64_t)n + 1, BLOCK), BLOCK, 0, stream>>>(
        n, s->flags, s->run_in, s->ids);
    KR_LAUNCH_CHECK(ctx);
    KR_TRY(run_scan(ctx, s, n));
    k_chain_maps<<<kr_grid((int64_t)nchunks * KR_BLOCK_MAX, BLOCK), BLOCK, 0,
                   stream>>>(n, max, s->run, nchunks, s->maps);
    KR_LAUNCH_CHECK(ctx);
    KR_TRY(map_scan(ctx, s, nchunks));
    KR_CUDA_TRY(ctx, cudaMemsetAsync(s->flags, 0, (size_t)n + 1, stream));
    k_mark_chain<<<kr_grid(nchunks, BLOCK), BLOCK, 0, stream>>>(
        n, max, s->run, nchunks, s->prefix, s->flags);
    KR_LAUNCH_CHECK(ctx);
    return select_starts(ctx, s, n);
}

/* The batch's arrays (over n slots) and the header. */
static kr_status batch_arrays(kr_ctx *ctx, int32_t n, const dev_scratch *s)
{
    cudaStream_t stream = kr_cuda(ctx)->stream;
    KR_CUDA_TRY(ctx, cudaMemsetAsync(s->head, 0, sizeof *s->head, stream));
    k_block_keys<<<kr_grid((int64_t)n + 1, BLOCK), BLOCK, 0, stream>>>(
        n, s->starts, s->count, s->key, s->sq, s->head);
    KR_LAUNCH_CHECK(ctx);
    KR_TRY(sort_classes(ctx, s, n));
    KR_TRY(kr_dev_exclusive_sum_i64(ctx, s->sq, s->offs, n + 1));
    k_header<<<1, 32, 0, stream>>>(s->key_sorted, s->count, s->offs, s->head);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* bb's own allocation, laid out as kr_gje_batch_create's: offs, starts,
 * order; filled from the scratch on the device. */
static kr_status keep_batch(kr_ctx *ctx, const dev_scratch *s,
                            const batch_header *h, int32_t n, kr_gje_batch *bb)
{
    size_t nb1 = (size_t)h->nb + 1;
    KR_TRY(ctx->ops->alloc(ctx, &bb->dev, nb1 * 16));
    bb->nb = h->nb;
    bb->max_k = h->max_k;
    bb->nrows = n;
    bb->total = h->total;
    memcpy(bb->class_start, h->class_start, sizeof bb->class_start);
    bb->offs = (int64_t *)bb->dev;
    bb->starts = (int32_t *)((char *)bb->dev + nb1 * 8);
    bb->order = (int32_t *)((char *)bb->dev + nb1 * 12);
    KR_TRY(ctx->ops->copy(ctx, bb->offs, s->offs, nb1 * 8));
    KR_TRY(ctx->ops->copy(ctx, bb->starts, s->starts, nb1 * 4));
    return ctx->ops->copy(ctx, bb->order, s->order, (nb1 - 1) * 4);
}

static kr_status build(kr_ctx *ctx, const kr_gje_csr *A, int32_t max,
                       int32_t nchunks, const dev_scratch *s, kr_gje_batch *bb)
{
    KR_TRY(find_starts(ctx, A, max, nchunks, s));
    KR_TRY(batch_arrays(ctx, A->nrows, s));
    batch_header h;
    KR_TRY(ctx->ops->download(ctx, &h, s->head, sizeof h));
    if (h.nb < 1 || h.nb > A->nrows || h.max_k < 1 || h.max_k > max)
        return kr_fail(ctx, KR_ERR_DEVICE,
                       "bjacobi: the device blocking found %d blocks of up "
                       "to %d rows for %d rows (blocks of 1..%d expected)",
                       (int)h.nb, (int)h.max_k, (int)A->nrows, (int)max);
    return keep_batch(ctx, s, &h, A->nrows, bb);
}

extern "C" kr_status kr_blocking_dev_batch(kr_ctx *ctx, const kr_gje_csr *A,
                                           int32_t max, kr_gje_batch *bb)
{
    memset(bb, 0, sizeof *bb);
    if (max < 1 || max > KR_BLOCK_MAX)
        return kr_fail(ctx, KR_ERR_ARG,
                       "bjacobi: block size %d is not in 1..%d", (int)max,
                       KR_BLOCK_MAX);
    if (A->nrows == 0) return KR_OK; /* no blocks */
    int32_t nchunks = (int32_t)(((int64_t)A->nrows + CHUNK - 1) / CHUNK);
    dev_scratch s;
    KR_TRY(scratch_alloc(ctx, A->nrows, nchunks, &s));
    kr_status st = build(ctx, A, max, nchunks, &s, bb);
    kr_dev_free(ctx, s.base);
    if (st != KR_OK) kr_gje_batch_free(ctx, bb);
    return st;
}
