/* Setup on the device: the pinned, chunked upload of A's CSR and the
 * kernels and CUB calls the formats' device builds share (see
 * spmv/devbuild.h). Everything runs on the context's stream; results that
 * the host needs (sizes, statistics) come back by small downloads. */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/devbuild.h"

#include <cub/cub.cuh>
#include <limits.h>
#include <math.h>
#include <string.h>

#define BLOCK 256
/* Pinned staging: two buffers of this many bytes take turns ... */
#define STAGE_BYTES ((size_t)16 << 20)
/* ... for CSR arrays of at least this many bytes; smaller ones go as one
 * pageable copy each, which is as fast as the staging costs to set up. */
#define STAGE_MIN ((size_t)4 << 20)

/* ------------------------------------------------------ pinned upload */

/* The context's two pinned buffers (kr_cuda_state.stage), made on first
 * use; `next` is the one to fill next. */
typedef struct stager {
    kr_cuda_state *st;
    int next;
} stager;

static kr_status stage_open(kr_ctx *ctx, stager *s)
{
    s->st = kr_cuda(ctx);
    s->next = 0;
    for (int b = 0; b < 2; b++) {
        cudaError_t e = cudaSuccess;
        if (!s->st->stage[b])
            e = cudaHostAlloc(&s->st->stage[b], STAGE_BYTES,
                              cudaHostAllocDefault);
        if (e != cudaSuccess) {
            s->st->stage[b] = NULL;
            cudaGetLastError(); /* not left for the next launch check */
            return kr_cuda_fail(ctx, "cudaHostAlloc", cudaGetErrorString(e),
                                __FILE__, __LINE__);
        }
        if (!s->st->stage_done[b])
            KR_CUDA_TRY(ctx, cudaEventCreateWithFlags(&s->st->stage_done[b],
                                                      cudaEventDisableTiming));
    }
    return KR_OK;
}

/* Waits for the last DMA: the buffers stay with the context. */
static kr_status stage_close(kr_ctx *ctx, stager *s)
{
    (void)s;
    KR_CUDA_TRY(ctx, cudaStreamSynchronize(kr_cuda(ctx)->stream));
    return KR_OK;
}

/* dst[0..bytes) = src: the host threads fill one buffer while the other's
 * DMA runs. */
static kr_status stage_copy(kr_ctx *ctx, stager *s, void *dst, const void *src,
                            size_t bytes)
{
    cudaStream_t stream = s->st->stream;
    for (size_t at = 0; at < bytes; at += STAGE_BYTES) {
        size_t len = bytes - at < STAGE_BYTES ? bytes - at : STAGE_BYTES;
        int b = s->next;
        s->next ^= 1;
        KR_CUDA_TRY(ctx, cudaEventSynchronize(s->st->stage_done[b]));
        kr_host_copy_parallel(ctx, s->st->stage[b], (const char *)src + at,
                              len);
        KR_CUDA_TRY(ctx, cudaMemcpyAsync((char *)dst + at, s->st->stage[b], len,
                                         cudaMemcpyHostToDevice, stream));
        KR_CUDA_TRY(ctx, cudaEventRecord(s->st->stage_done[b], stream));
    }
    return KR_OK;
}

typedef struct copy_job {
    void *dst;
    const void *src;
    size_t bytes;
} copy_job;

/* The copies of jobs[0..n), staged when they are large together. */
static kr_status upload_jobs(kr_ctx *ctx, const copy_job *jobs, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += jobs[i].bytes;
    if (total < STAGE_MIN) {
        for (int i = 0; i < n; i++)
            if (jobs[i].bytes)
                KR_TRY(ctx->ops->upload(ctx, jobs[i].dst, jobs[i].src,
                                        jobs[i].bytes));
        return KR_OK;
    }
    stager s;
    kr_status st = stage_open(ctx, &s);
    for (int i = 0; st == KR_OK && i < n; i++)
        st = stage_copy(ctx, &s, jobs[i].dst, jobs[i].src, jobs[i].bytes);
    kr_status closed = stage_close(ctx, &s);
    return st != KR_OK ? st : closed;
}

extern "C" size_t kr_dev_csr_bytes(const kr_csr_view *dev)
{
    if (!dev->rowptr) return 0;
    return ((size_t)dev->nrows + 1) * 4 + (size_t)dev->nnz * 12;
}

extern "C" void kr_dev_csr_free(kr_ctx *ctx, kr_csr_view *dev)
{
    kr_dev_free(ctx, (void *)dev->rowptr);
    kr_dev_free(ctx, (void *)dev->colind);
    kr_dev_free(ctx, (void *)dev->val);
    memset(dev, 0, sizeof *dev);
}

extern "C" kr_status kr_dev_csr_upload(kr_ctx *ctx, const kr_csr *A,
                                       kr_csr_view *dev)
{
    memset(dev, 0, sizeof *dev);
    void *rp = NULL, *ci = NULL, *v = NULL;
    size_t rp_bytes = ((size_t)A->nrows + 1) * 4;
    kr_status st = ctx->ops->alloc(ctx, &rp, rp_bytes);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, &ci, (size_t)A->nnz * 4);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, &v, (size_t)A->nnz * 8);
    *dev = kr_csr_view{A->nrows,
                       A->ncols,
                       A->nnz,
                       (const int32_t *)rp,
                       (const int32_t *)ci,
                       (const double *)v};
    if (st == KR_OK) {
        const copy_job jobs[3] = {{rp, A->rowptr, rp_bytes},
                                  {ci, A->colind, (size_t)A->nnz * 4},
                                  {v, A->val, (size_t)A->nnz * 8}};
        st = upload_jobs(ctx, jobs, 3);
    }
    if (st != KR_OK) kr_dev_csr_free(ctx, dev);
    return st;
}

extern "C" kr_status kr_dev_csr_upload_values(kr_ctx *ctx, const kr_csr *A,
                                              kr_csr_view *dev)
{
    const copy_job job = {(void *)dev->val, A->val, (size_t)A->nnz * 8};
    return upload_jobs(ctx, &job, 1);
}

extern "C" kr_status kr_dev_sync(kr_ctx *ctx)
{
    KR_CUDA_TRY(ctx, cudaStreamSynchronize(kr_cuda(ctx)->stream));
    return KR_OK;
}

extern "C" kr_status kr_dev_read_i32(kr_ctx *ctx, const int32_t *src,
                                     int32_t *dst, size_t count)
{
    if (count == 0) return KR_OK;
    return ctx->ops->download(ctx, dst, src, count * 4);
}

/* --------------------------------------------------------- row lengths */

#define GRID_STRIDE(i, n)                                                      \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);  \
         i += (int64_t)gridDim.x * blockDim.x)

/* --------------------------------------------------------- the check */

/* kr_csr_check's row checks, a thread per row; *first takes the smallest
 * failing row (atomicMin), as the host's ordered check would name it. */
__global__ void k_csr_first_bad(kr_csr_view A, int32_t *first)
{
    GRID_STRIDE(i, A.nrows)
    {
        const int32_t lo = A.rowptr[i], hi = A.rowptr[i + 1];
        bool bad = lo < 0 || hi < lo || hi > A.nnz;
        for (int32_t k = lo; !bad && k < hi; k++) {
            const int32_t j = A.colind[k];
            bad = j < 0 || j >= A.ncols || (k > lo && j <= A.colind[k - 1]) ||
                  !isfinite(A.val[k]);
        }
        if (bad) atomicMin(first, (int32_t)i);
    }
}

extern "C" kr_status kr_dev_csr_first_bad(kr_ctx *ctx, const kr_csr_view *A,
                                          int32_t *first)
{
    *first = A->nrows;
    if (A->nrows == 0) return KR_OK;
    kr_cuda_state *st = kr_cuda(ctx);
    int32_t *d = (int32_t *)(st->d_scratch + KR_MAX_DOTS);
    KR_TRY(ctx->ops->upload(ctx, d, first, sizeof *first));
    k_csr_first_bad<<<kr_grid(A->nrows, 256), 256, 0, st->stream>>>(*A, d);
    KR_LAUNCH_CHECK(ctx);
    return ctx->ops->download(ctx, first, d, sizeof *first);
}

static __global__ void k_row_lengths(int32_t n,
                                     const int32_t *__restrict__ rowptr,
                                     int32_t *__restrict__ len)
{
    GRID_STRIDE(i, n) len[i] = rowptr[i + 1] - rowptr[i];
}

extern "C" kr_status kr_dev_row_lengths(kr_ctx *ctx, const kr_csr_view *A,
                                        int32_t *len)
{
    if (A->nrows == 0) return KR_OK;
    k_row_lengths<<<kr_grid(A->nrows, BLOCK), BLOCK, 0, kr_cuda(ctx)->stream>>>(
        A->nrows, A->rowptr, len);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* ------------------------------------------------- row statistics (auto) */

typedef struct row_sums {
    unsigned long long sum, sum2;
    int min, max, empty;
} row_sums;

static __global__ void k_row_sums_init(row_sums *s)
{
    s->sum = 0;
    s->sum2 = 0;
    s->min = INT_MAX;
    s->max = 0;
    s->empty = 0;
}

/* Integer sums: exact, so the order of the atomics does not matter. */
static __global__ void __launch_bounds__(BLOCK)
    k_row_sums(int32_t n, const int32_t *__restrict__ rowptr, row_sums *s)
{
    unsigned long long sum = 0, sum2 = 0;
    int lo = INT_MAX, hi = 0, empty = 0;
    GRID_STRIDE(i, n)
    {
        int len = rowptr[i + 1] - rowptr[i];
        sum += (unsigned long long)len;
        sum2 += (unsigned long long)len * (unsigned long long)len;
        lo = min(lo, len);
        hi = max(hi, len);
        empty += len == 0;
    }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
        sum2 += __shfl_xor_sync(0xffffffffu, sum2, o);
        lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
        hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
        empty += __shfl_xor_sync(0xffffffffu, empty, o);
    }
    if ((threadIdx.x & 31) != 0) return;
    atomicAdd(&s->sum, sum);
    atomicAdd(&s->sum2, sum2);
    atomicMin(&s->min, lo);
    atomicMax(&s->max, hi);
    atomicAdd(&s->empty, empty);
}

extern "C" kr_status kr_dev_row_stats(kr_ctx *ctx, const kr_csr_view *A,
                                      kr_row_stats *st)
{
    memset(st, 0, sizeof *st);
    if (A->nrows == 0) return KR_OK;
    row_sums *d = NULL, h;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&d, sizeof *d));
    cudaStream_t stream = kr_cuda(ctx)->stream;
    k_row_sums_init<<<1, 1, 0, stream>>>(d);
    kr_status rs = cudaGetLastError() == cudaSuccess
                       ? KR_OK
                       : kr_fail(ctx, KR_ERR_DEVICE, "k_row_sums_init failed");
    if (rs == KR_OK) {
        /* the grid is a multiple of the warp, as the shuffles need */
        k_row_sums<<<kr_grid(A->nrows, BLOCK), BLOCK, 0, stream>>>(
            A->nrows, A->rowptr, d);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            rs = kr_cuda_fail(ctx, "k_row_sums", cudaGetErrorString(e),
                              __FILE__, __LINE__);
    }
    if (rs == KR_OK) rs = ctx->ops->download(ctx, &h, d, sizeof h);
    kr_dev_free(ctx, d);
    KR_TRY(rs);
    /* kr_csr_row_stats' formulas on the same (exact) sums */
    st->min = h.min;
    st->max = h.max;
    st->empty_rows = h.empty;
    st->mean = (double)h.sum / A->nrows;
    double var = (double)h.sum2 / A->nrows - st->mean * st->mean;
    st->stddev = var > 0 ? sqrt(var) : 0.0;
    return KR_OK;
}

/* --------------------------------------------------------------- scans */

/* CUB's two-phase calls: size the temporary storage, allocate it from
 * the context's pool, run. */
template <typename T>
static kr_status exclusive_sum(kr_ctx *ctx, const T *in, T *out, int32_t n)
{
    if (n <= 0) return KR_OK;
    cudaStream_t stream = kr_cuda(ctx)->stream;
    size_t temp_bytes = 0;
    KR_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(NULL, temp_bytes, in, out, n,
                                                   stream));
    void *temp = NULL;
    KR_TRY(ctx->ops->alloc(ctx, &temp, temp_bytes));
    cudaError_t e =
        cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, n, stream);
    kr_dev_free(ctx, temp);
    KR_CUDA_TRY(ctx, e);
    return KR_OK;
}

extern "C" kr_status kr_dev_exclusive_sum_i32(kr_ctx *ctx, const int32_t *in,
                                              int32_t *out, int32_t n)
{
    return exclusive_sum(ctx, in, out, n);
}

extern "C" kr_status kr_dev_exclusive_sum_i64(kr_ctx *ctx, const int64_t *in,
                                              int64_t *out, int32_t n)
{
    return exclusive_sum(ctx, in, out, n);
}

/* ------------------------------------------------- the sort by length */

/* key = maxlen - len: an ascending, stable radix sort then puts long rows
 * first and keeps equal lengths in row order (the host's counting sort). */
static __global__ void k_sort_keys(int32_t n, int32_t maxlen,
                                   const int32_t *__restrict__ len,
                                   int32_t *__restrict__ key,
                                   int32_t *__restrict__ row)
{
    GRID_STRIDE(i, n)
    {
        key[i] = maxlen - len[i];
        row[i] = (int32_t)i;
    }
}

static __global__ void k_unkey(int32_t n, int32_t maxlen,
                               int32_t *__restrict__ key)
{
    GRID_STRIDE(i, n) key[i] = maxlen - key[i];
}

static int bits_for(int32_t v)
{
    int b = 1;
    while (b < 31 && (v >> b) != 0)
        b++;
    return b;
}

static kr_status radix_sort(kr_ctx *ctx, const int32_t *key_in,
                            int32_t *key_out, const int32_t *row_in,
                            int32_t *row_out, int32_t n, int end_bit)
{
    cudaStream_t stream = kr_cuda(ctx)->stream;
    size_t temp_bytes = 0;
    KR_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, key_in,
                                                     key_out, row_in, row_out,
                                                     n, 0, end_bit, stream));
    void *temp = NULL;
    KR_TRY(ctx->ops->alloc(ctx, &temp, temp_bytes));
    cudaError_t e =
        cub::DeviceRadixSort::SortPairs(temp, temp_bytes, key_in, key_out,
                                        row_in, row_out, n, 0, end_bit, stream);
    kr_dev_free(ctx, temp);
    KR_CUDA_TRY(ctx, e);
    return KR_OK;
}

extern "C" kr_status kr_dev_sort_rows(kr_ctx *ctx, const int32_t *len,
                                      int32_t n, int32_t maxlen, int32_t *perm,
                                      int32_t *sorted_len)
{
    if (n <= 0) return KR_OK;
    int32_t *key = NULL, *row = NULL;
    kr_status st = ctx->ops->alloc(ctx, (void **)&key, (size_t)n * 4);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&row, (size_t)n * 4);
    cudaStream_t stream = kr_cuda(ctx)->stream;
    int grid = kr_grid(n, BLOCK);
    if (st == KR_OK) {
        k_sort_keys<<<grid, BLOCK, 0, stream>>>(n, maxlen, len, key, row);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = kr_cuda_fail(ctx, "k_sort_keys", cudaGetErrorString(e),
                              __FILE__, __LINE__);
    }
    if (st == KR_OK)
        st = radix_sort(ctx, key, sorted_len, row, perm, n, bits_for(maxlen));
    if (st == KR_OK) {
        k_unkey<<<grid, BLOCK, 0, stream>>>(n, maxlen, sorted_len);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = kr_cuda_fail(ctx, "k_unkey", cudaGetErrorString(e), __FILE__,
                              __LINE__);
    }
    kr_dev_free(ctx, key);
    kr_dev_free(ctx, row);
    return st;
}

/* ------------------------------------------------------- HYB's width */

/* The ceil(n/3)-th longest row is the largest w that a third of the rows
 * reach (spmv/hyb.h); a sort of the lengths finds it. */
extern "C" kr_status kr_dev_hyb_width(kr_ctx *ctx, const kr_csr_view *A,
                                      int32_t *K)
{
    *K = 0;
    const int32_t n = A->nrows;
    if (n == 0) return KR_OK;
    int32_t *len = NULL, *perm = NULL, *sorted = NULL;
    kr_row_stats rs;
    kr_status st = kr_dev_row_stats(ctx, A, &rs);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&len, (size_t)n * 4);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&perm, (size_t)n * 4);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&sorted, (size_t)n * 4);
    if (st == KR_OK) st = kr_dev_row_lengths(ctx, A, len);
    if (st == KR_OK) st = kr_dev_sort_rows(ctx, len, n, rs.max, perm, sorted);
    if (st == KR_OK) st = kr_dev_read_i32(ctx, sorted + (n + 2) / 3 - 1, K, 1);
    kr_dev_free(ctx, len);
    kr_dev_free(ctx, perm);
    kr_dev_free(ctx, sorted);
    KR_TRY(st);
    if (*K == 0) *K = (int32_t)(((int64_t)2 * A->nnz + n) / (2 * (int64_t)n));
    return KR_OK;
}
