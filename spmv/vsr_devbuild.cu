/* VSR's device plan built on the GPU from a CSR in device memory, entry for
 * entry what spmv/vsr.c's kr_vsr_plan_build (for_device) and the upload
 * of spmv/vsr.cu make (layout in spmv/vsr.h):
 *   - per row: empty, or a span (its entries in more than one chunk),
 *     long or short; prefix sums of those flags give each row its ordinal
 *     among the nonempty rows, its place among the empty rows (row -
 *     ordinal) and its span slot (long spans first, each kind in row
 *     order), as the host's row loop numbers them;
 *   - per row: its head bit (atomicOr: several rows share a word), its
 *     nzrow and empty entries, its span;
 *   - per chunk: the row holding the chunk's first nonzero (a binary
 *     search in rowptr) gives chunk_ord.
 * One download: the three counts that size the arrays. */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/devbuild.h"
#include "spmv/vsr.h"

#include <stdlib.h>

#define BLOCK 256
#define CHUNK KR_VSR_CHUNK

#define GRID_STRIDE(i, n)                                                      \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);  \
         i += (int64_t)gridDim.x * blockDim.x)

/* The row flags: nonempty, long span, short span (0 or 1 each). */
typedef struct row_flags {
    int32_t *full, *lng, *shrt;
} row_flags;

static __global__ void
k_vsr_flags(int32_t n, const int32_t *__restrict__ rowptr, row_flags f)
{
    GRID_STRIDE(r, n)
    {
        const int32_t beg = rowptr[r], end = rowptr[r + 1];
        const int full = beg != end;
        const int32_t a = beg / CHUNK, b = full ? (end - 1) / CHUNK : a;
        const int span = full && a != b;
        const int lng = span && 2 * (b - a) > KR_VSR_LONG_SPAN;
        f.full[r] = full;
        f.lng[r] = lng;
        f.shrt[r] = span && !lng;
    }
}

/* counts = (nonempty rows, long spans, short spans): each flag's last
 * prefix sum plus its last flag. */
static __global__ void k_vsr_counts(int32_t n, row_flags f, row_flags pos,
                                    int32_t *counts)
{
    counts[0] = pos.full[n - 1] + f.full[n - 1];
    counts[1] = pos.lng[n - 1] + f.lng[n - 1];
    counts[2] = pos.shrt[n - 1] + f.shrt[n - 1];
}

static __global__ void k_vsr_rows(int32_t n, const int32_t *__restrict__ rowptr,
                                  row_flags f, row_flags pos, kr_vsr_dev d)
{
    GRID_STRIDE(r, n)
    {
        const int32_t beg = rowptr[r], end = rowptr[r + 1];
        const int32_t o = pos.full[r];
        if (!f.full[r]) {
            d.empty[r - o] = (int32_t)r;
            continue;
        }
        atomicOr(d.heads + beg / 32, 1u << (beg % 32));
        if (d.nzrow) d.nzrow[o] = (int32_t)r;
        if (!f.lng[r] && !f.shrt[r]) continue;
        const int32_t s = f.lng[r] ? pos.lng[r] : d.nlong + pos.shrt[r];
        d.span_row[s] = (int32_t)r;
        d.span_lo[s] = 2 * (beg / CHUNK) + 1;
        d.span_hi[s] = 2 * ((end - 1) / CHUNK);
    }
}

/* chunk_ord[c] = ordinal of the row holding nonzero c*CHUNK, less one when
 * the row starts there: the last row r with rowptr[r] <= c*CHUNK. */
static __global__ void k_vsr_chunk_ord(int32_t n, int32_t nchunks,
                                       const int32_t *__restrict__ rowptr,
                                       const int32_t *__restrict__ ord,
                                       int32_t *__restrict__ chunk_ord)
{
    GRID_STRIDE(c, nchunks)
    {
        const int32_t k = (int32_t)c * CHUNK;
        int32_t lo = 0, hi = n - 1; /* rowptr[lo] <= k holds throughout */
        while (lo < hi) {
            const int32_t mid = lo + (hi - lo + 1) / 2;
            if (rowptr[mid] <= k)
                lo = mid;
            else
                hi = mid - 1;
        }
        chunk_ord[c] = ord[lo] - (rowptr[lo] == k);
    }
}

static void flags_free(kr_ctx *ctx, row_flags *f)
{
    kr_dev_free(ctx, f->full);
    kr_dev_free(ctx, f->lng);
    kr_dev_free(ctx, f->shrt);
}

static kr_status flags_alloc(kr_ctx *ctx, int32_t n, row_flags *f)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * 4;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&f->full, bytes));
    KR_TRY(ctx->ops->alloc(ctx, (void **)&f->lng, bytes));
    return ctx->ops->alloc(ctx, (void **)&f->shrt, bytes);
}

/* The flags, their prefix sums and d's counts (one download). */
static kr_status vsr_dev_count(kr_ctx *ctx, const int32_t *rowptr, row_flags *f,
                               row_flags *pos, kr_vsr_dev *d)
{
    const int32_t n = d->nrows;
    KR_TRY(flags_alloc(ctx, n, f));
    KR_TRY(flags_alloc(ctx, n, pos));
    if (n == 0) return KR_OK;
    cudaStream_t stream = kr_cuda(ctx)->stream;
    k_vsr_flags<<<kr_grid(n, BLOCK), BLOCK, 0, stream>>>(n, rowptr, *f);
    KR_LAUNCH_CHECK(ctx);
    KR_TRY(kr_dev_exclusive_sum_i32(ctx, f->full, pos->full, n));
    KR_TRY(kr_dev_exclusive_sum_i32(ctx, f->lng, pos->lng, n));
    KR_TRY(kr_dev_exclusive_sum_i32(ctx, f->shrt, pos->shrt, n));
    int32_t *dcounts = NULL, counts[3];
    KR_TRY(ctx->ops->alloc(ctx, (void **)&dcounts, sizeof counts));
    k_vsr_counts<<<1, 1, 0, stream>>>(n, *f, *pos, dcounts);
    cudaError_t e = cudaGetLastError();
    kr_status st = e == cudaSuccess ? kr_dev_read_i32(ctx, dcounts, counts, 3)
                                    : kr_cuda_fail(ctx, "k_vsr_counts",
                                                   cudaGetErrorString(e),
                                                   __FILE__, __LINE__);
    kr_dev_free(ctx, dcounts);
    KR_TRY(st);
    d->nempty = n - counts[0];
    d->nlong = counts[1];
    d->nspans = counts[1] + counts[2];
    return KR_OK;
}

/* What kr_vsr_dev_create's uploads allocate, of the same sizes (and so
 * the same bytes count). */
static kr_status vsr_dev_alloc(kr_ctx *ctx, kr_vsr_dev *d)
{
    size_t nnz = (size_t)d->nnz, nc = (size_t)d->nchunks;
    size_t ns = (size_t)d->nspans, words = (nnz + 31) / 32;
    struct {
        void **p;
        size_t bytes;
    } arr[] = {{(void **)&d->val, nnz * 8},
               {(void **)&d->col, nnz * 4},
               {(void **)&d->heads, words * 4},
               {(void **)&d->chunk_ord, nc * 4},
               {(void **)&d->nzrow, (size_t)(d->nrows - d->nempty) * 4},
               {(void **)&d->span_row, ns * 4},
               {(void **)&d->span_lo, ns * 4},
               {(void **)&d->span_hi, ns * 4},
               {(void **)&d->empty, (size_t)d->nempty * 4}};
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) {
        if (arr[i].p == (void **)&d->nzrow && d->nempty == 0) continue;
        KR_TRY(ctx->ops->alloc(ctx, arr[i].p, arr[i].bytes));
        d->bytes += arr[i].bytes;
    }
    d->bytes += 2 * nc * 8;
    KR_TRY(kr_dev_zeros(ctx, 2 * nc, &d->part));
    KR_CUDA_TRY(ctx,
                cudaMemsetAsync(d->heads, 0, words * 4, kr_cuda(ctx)->stream));
    return KR_OK;
}

static kr_status vsr_dev_place(kr_ctx *ctx, const int32_t *rowptr,
                               const int32_t *colind, const double *val,
                               const row_flags *f, const row_flags *pos,
                               kr_vsr_dev *d)
{
    cudaStream_t stream = kr_cuda(ctx)->stream;
    KR_TRY(ctx->ops->copy(ctx, d->val, val, (size_t)d->nnz * 8));
    KR_TRY(ctx->ops->copy(ctx, d->col, colind, (size_t)d->nnz * 4));
    if (d->nrows == 0) return KR_OK;
    k_vsr_rows<<<kr_grid(d->nrows, BLOCK), BLOCK, 0, stream>>>(d->nrows, rowptr,
                                                               *f, *pos, *d);
    KR_LAUNCH_CHECK(ctx);
    if (d->nchunks == 0) return KR_OK;
    k_vsr_chunk_ord<<<kr_grid(d->nchunks, BLOCK), BLOCK, 0, stream>>>(
        d->nrows, d->nchunks, rowptr, pos->full, d->chunk_ord);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

static kr_status vsr_dev_fill(kr_ctx *ctx, const int32_t *rowptr,
                              const int32_t *colind, const double *val,
                              kr_vsr_dev *d)
{
    row_flags f = {NULL, NULL, NULL}, pos = {NULL, NULL, NULL};
    kr_status st = vsr_dev_count(ctx, rowptr, &f, &pos, d);
    if (st == KR_OK) st = vsr_dev_alloc(ctx, d);
    if (st == KR_OK) st = vsr_dev_place(ctx, rowptr, colind, val, &f, &pos, d);
    flags_free(ctx, &f);
    flags_free(ctx, &pos);
    return st;
}

extern "C" kr_status kr_vsr_dev_build(kr_ctx *ctx, int32_t nrows, int32_t nnz,
                                      const int32_t *rowptr,
                                      const int32_t *colind, const double *val,
                                      kr_vsr_dev **out)
{
    kr_vsr_dev *d = (kr_vsr_dev *)calloc(1, sizeof *d);
    if (!d) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    d->nrows = nrows;
    d->nnz = nnz;
    d->nchunks = (int32_t)(((int64_t)nnz + CHUNK - 1) / CHUNK);
    kr_status st = vsr_dev_fill(ctx, rowptr, colind, val, d);
    if (st != KR_OK) {
        kr_vsr_dev_destroy(ctx, d);
        return st;
    }
    *out = d;
    return KR_OK;
}

extern "C" int kr_vsr_dev_arrays(const kr_vsr_dev *d, kr_dev_array *a, int max)
{
    size_t nnz = (size_t)d->nnz, ns = (size_t)d->nspans;
    const kr_dev_array all[] = {
        {"val", d->val, nnz * 8},
        {"col", d->col, nnz * 4},
        {"heads", d->heads, (nnz + 31) / 32 * 4},
        {"chunk_ord", d->chunk_ord, (size_t)d->nchunks * 4},
        {"nzrow", d->nzrow, d->nzrow ? (size_t)(d->nrows - d->nempty) * 4 : 0},
        {"span_row", d->span_row, ns * 4},
        {"span_lo", d->span_lo, ns * 4},
        {"span_hi", d->span_hi, ns * 4},
        {"empty", d->empty, (size_t)d->nempty * 4}};
    return kr_dev_arrays_put(all, 9, a, max);
}
