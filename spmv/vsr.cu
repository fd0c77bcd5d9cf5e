/* VSR on the GPU: one warp per chunk of KR_VSR_CHUNK nonzeros, read in
 * KR_VSR_STEPS coalesced steps of 32. Each step's products are combined by
 * a shuffle-based segmented scan keyed by the head bits (a set bit starts a
 * row); segment ends write y or a partial-sum slot, and a fix-up kernel adds
 * the slots of rows that cross chunks in a fixed order (see spmv/vsr.h).
 * No atomics: every y entry is written by exactly one thread. */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/format.h"
#include "spmv/vsr.h"

#include <stdlib.h>

#define BLOCK 256
#define WARPS_PER_BLOCK (BLOCK / 32)
#define FULL 0xffffffffu
#define STEPS KR_VSR_STEPS
#define CHUNK KR_VSR_CHUNK

typedef struct chunk_args {
    const double *val;
    const int32_t *col;
    const uint32_t *heads;
    const int32_t *chunk_ord, *nzrow;
    double *part;
    int32_t nnz, nchunks;
} chunk_args;

typedef struct fix_args {
    const int32_t *span_row, *span_lo, *span_hi, *empty;
    const double *part;
    int32_t nlong, nshort, nempty;
} fix_args;

/* y = alpha*s + beta*y; beta == 0 overwrites */
__device__ __forceinline__ void put_y(double *y, int32_t r, double alpha,
                                      double s, double beta)
{
    y[r] = beta == 0.0 ? alpha * s : alpha * s + beta * y[r];
}

__device__ __forceinline__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(FULL, v, o);
    return v;
}

/* Inclusive scan of v over lanes lim..lane (lim = the segment's first lane;
 * lanes of one segment share lim, so each partial stays in its segment). */
__device__ __forceinline__ double seg_scan(double v, int lane, int lim)
{
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        double t = __shfl_up_sync(FULL, v, d);
        if (lane - d >= lim) v += t;
    }
    return v;
}

__global__ void __launch_bounds__(BLOCK)
    k_vsr_chunks(chunk_args a, const double *__restrict__ x, double alpha,
                 double beta, double *__restrict__ y)
{
    const int lane = threadIdx.x & 31;
    const int64_t c = ((int64_t)blockIdx.x * BLOCK + threadIdx.x) >> 5;
    if (c >= a.nchunks) return; /* whole warps leave together */
    const int64_t base = c * CHUNK;
    const int nsteps = (int)min((int64_t)STEPS, (a.nnz - base + 31) >> 5);
    double p[STEPS];
    uint32_t w[STEPS], any = 0;
#pragma unroll
    for (int s = 0; s < STEPS; s++) {
        const int64_t k = base + s * 32 + lane;
        w[s] = s < nsteps ? __ldg(a.heads + c * STEPS + s) : 0u;
        p[s] = k < a.nnz ? __ldg(a.val + k) * __ldg(x + __ldg(a.col + k)) : 0.0;
        any |= w[s];
    }
    if (any == 0) { /* the chunk lies inside one row begun earlier */
        double v = 0.0;
#pragma unroll
        for (int s = 0; s < STEPS; s++)
            v += p[s];
        v = warp_sum(v);
        if (lane == 0) {
            a.part[2 * c] = v;
            a.part[2 * c + 1] = 0.0;
        }
        return;
    }
    /* does the last row go on into the next chunk? */
    const bool cont =
        c + 1 < a.nchunks && !(__ldg(a.heads + (c + 1) * STEPS) & 1u);
    int32_t ord = __ldg(a.chunk_ord + c);
    double carry = 0.0; /* the open segment's sum from earlier steps */
    bool seen = false;  /* a row started in an earlier step of the chunk */
    if (lane == 0 && (w[0] & 1u)) a.part[2 * c] = 0.0;
#pragma unroll
    for (int s = 0; s < STEPS; s++) {
        if (s >= nsteps) break;
        const uint32_t ws = w[s];
        const uint32_t le = ws & (FULL >> (31 - lane)); /* heads <= lane */
        const int ss = le ? 31 - __clz(le) : -1;
        double v = seg_scan(p[s], lane, ss < 0 ? 0 : ss);
        if (ss < 0) v += carry;
        const bool last = s + 1 == nsteps;
        const bool end = lane < 31
                             ? ((ws >> (lane + 1)) & 1u) != 0
                             : last || (w[s + 1 < STEPS ? s + 1 : s] & 1u) != 0;
        if (end) {
            const bool from_prev = ss < 0 && !seen;
            const bool chunk_end = lane == 31 && last;
            if (from_prev) {
                a.part[2 * c] = v;
            } else if (chunk_end && cont) {
                a.part[2 * c + 1] = v;
            } else {
                const int32_t o = ord + __popc(le);
                put_y(y, a.nzrow ? __ldg(a.nzrow + o) : o, alpha, v, beta);
            }
            if (chunk_end && (from_prev || !cont)) a.part[2 * c + 1] = 0.0;
        }
        carry = __shfl_sync(FULL, v, 31);
        seen = seen || ws != 0;
        ord += __popc(ws);
    }
}

/* Warps below nlong: one long span each, its slots summed by the lanes in
 * a fixed order. The threads after: one short span each (a sequential sum),
 * then one empty row each (y = beta*y). */
__global__ void __launch_bounds__(BLOCK)
    k_vsr_fixup(fix_args f, double alpha, double beta, double *__restrict__ y)
{
    const int lane = threadIdx.x & 31;
    const int64_t t = (int64_t)blockIdx.x * BLOCK + threadIdx.x;
    if ((t >> 5) < f.nlong) {
        const int64_t w = t >> 5;
        const int32_t lo = __ldg(f.span_lo + w), hi = __ldg(f.span_hi + w);
        double s = 0.0;
        for (int32_t k = lo + lane; k <= hi; k += 32)
            s += f.part[k];
        s = warp_sum(s);
        if (lane == 0) put_y(y, __ldg(f.span_row + w), alpha, s, beta);
        return;
    }
    int64_t i = t - (int64_t)f.nlong * 32;
    if (i < f.nshort) {
        i += f.nlong;
        const int32_t hi = __ldg(f.span_hi + i);
        double s = 0.0;
        for (int32_t k = __ldg(f.span_lo + i); k <= hi; k++)
            s += f.part[k];
        put_y(y, __ldg(f.span_row + i), alpha, s, beta);
        return;
    }
    i -= f.nshort;
    if (i < f.nempty) {
        const int32_t r = __ldg(f.empty + i);
        y[r] = beta == 0.0 ? 0.0 : beta * y[r];
    }
}

extern "C" kr_status kr_vsr_dev_apply(kr_ctx *ctx, const kr_vsr_dev *d,
                                      double alpha, const double *x,
                                      double beta, double *y, int empty_rows)
{
    if (d->nrows == 0) return KR_OK;
    cudaStream_t st = kr_cuda(ctx)->stream;
    if (d->nchunks > 0) {
        chunk_args a = {d->val,   d->col,  d->heads, d->chunk_ord,
                        d->nzrow, d->part, d->nnz,   d->nchunks};
        int blocks = (d->nchunks + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
        k_vsr_chunks<<<blocks, BLOCK, 0, st>>>(a, x, alpha, beta, y);
        KR_LAUNCH_CHECK(ctx);
    }
    fix_args f;
    f.span_row = d->span_row;
    f.span_lo = d->span_lo;
    f.span_hi = d->span_hi;
    f.empty = d->empty;
    f.part = d->part;
    f.nlong = d->nlong;
    f.nshort = d->nspans - d->nlong;
    f.nempty = empty_rows ? d->nempty : 0;
    int64_t threads = (int64_t)f.nlong * 32 + f.nshort + f.nempty;
    if (threads > 0) {
        int blocks = (int)((threads + BLOCK - 1) / BLOCK);
        k_vsr_fixup<<<blocks, BLOCK, 0, st>>>(f, alpha, beta, y);
        KR_LAUNCH_CHECK(ctx);
    }
    return KR_OK;
}

/* ------------------------------------------------------------- SpMM */

typedef struct multi_args {
    const double *val;
    const int32_t *col;
    const uint32_t *heads;
    const int32_t *chunk_ord, *nzrow;
    double *part; /* 2 slots of k per chunk */
    int32_t nnz, nchunks, k;
    int add; /* 1: Y += A X, rows without entries untouched */
} multi_args;

__device__ __forceinline__ bool head_at(const uint32_t *heads, int64_t e)
{
    return (__ldg(heads + (e >> 5)) >> (e & 31)) & 1u;
}

/* A segment's sum to its place, as cpu_chunk_multi (spmv/vsr.c) does: a
 * row begun before the chunk to the head slot, one going on past it to the
 * tail slot, else Y's row (added to it when a.add). */
__device__ __forceinline__ void put_segment(const multi_args &a, double *Y,
                                            double *slot, int32_t ord,
                                            int32_t c, double s)
{
    if (slot) {
        slot[c] = s;
        return;
    }
    const int32_t r = a.nzrow ? __ldg(a.nzrow + ord) : ord;
    double *y = Y + (int64_t)r * a.k + c;
    *y = a.add ? s + *y : s;
}

/* A warp per chunk, a lane per column (32 columns per pass): the warp
 * walks the chunk's entries in order, a head bit closing the segment
 * before it. The same sums in the same order as the CPU's kernel. */
__global__ void __launch_bounds__(BLOCK)
    k_vsr_multi_chunks(multi_args a, const double *__restrict__ X,
                       double *__restrict__ Y)
{
    const int lane = threadIdx.x & 31;
    const int64_t ch = ((int64_t)blockIdx.x * BLOCK + threadIdx.x) >> 5;
    if (ch >= a.nchunks) return;
    const int64_t b = ch * CHUNK, e = min((int64_t)a.nnz, b + CHUNK);
    const bool begun = !head_at(a.heads, b);                /* first row */
    const bool goes_on = e < a.nnz && !head_at(a.heads, e); /* last row */
    double *head = a.part + 2 * ch * a.k, *tail = head + a.k;
    for (int32_t c = lane; c < a.k; c += 32) {
        head[c] = 0.0;
        tail[c] = 0.0;
        int32_t ord = __ldg(a.chunk_ord + ch);
        bool first = true; /* the open segment is the chunk's first */
        double s = 0.0;
        for (int64_t q = b; q < e; q++) {
            if (head_at(a.heads, q)) {
                if (q > b)
                    put_segment(a, Y, first && begun ? head : NULL, ord, c, s);
                first = q == b;
                ord++;
                s = 0.0;
            }
            s += __ldg(a.val + q) *
                 __ldg(X + (int64_t)__ldg(a.col + q) * a.k + c);
        }
        double *slot = first && begun ? head : (goes_on ? tail : NULL);
        put_segment(a, Y, slot, ord, c, s);
    }
}

/* A thread per (span, column): the span's slots in order; then a thread
 * per (empty row, column) writing 0 unless adding. */
__global__ void __launch_bounds__(BLOCK)
    k_vsr_multi_fixup(fix_args f, int32_t k, int add, double *__restrict__ Y)
{
    const int64_t t = (int64_t)blockIdx.x * BLOCK + threadIdx.x;
    const int64_t nspans = (int64_t)f.nlong + f.nshort;
    const int64_t i = t / k;
    const int32_t c = (int32_t)(t % k);
    if (i < nspans) {
        double s = 0.0;
        for (int32_t slot = __ldg(f.span_lo + i); slot <= __ldg(f.span_hi + i);
             slot++)
            s += f.part[(int64_t)slot * k + c];
        double *y = Y + (int64_t)__ldg(f.span_row + i) * k + c;
        *y = add ? s + *y : s;
    } else if (i - nspans < f.nempty) {
        Y[(int64_t)__ldg(f.empty + (i - nspans)) * k + c] = 0.0;
    }
}

static kr_status grow_mpart(kr_ctx *ctx, kr_vsr_dev *d, size_t doubles)
{
    if (doubles <= d->mpart_cap) return KR_OK;
    kr_dev_free(ctx, d->mpart);
    d->mpart = NULL;
    d->mpart_cap = 0;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&d->mpart, doubles * 8));
    d->mpart_cap = doubles;
    return KR_OK;
}

extern "C" kr_status kr_vsr_dev_apply_multi(kr_ctx *ctx, kr_vsr_dev *d,
                                            int32_t k, const double *X,
                                            double *Y, int add)
{
    if (d->nrows == 0 || k < 1) return KR_OK;
    cudaStream_t st = kr_cuda(ctx)->stream;
    KR_TRY(grow_mpart(ctx, d, (size_t)2 * d->nchunks * k + 1));
    if (d->nchunks > 0) {
        multi_args a = {d->val,   d->col,   d->heads, d->chunk_ord,
                        d->nzrow, d->mpart, d->nnz,   d->nchunks,
                        k,        add};
        int blocks = (d->nchunks + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
        k_vsr_multi_chunks<<<blocks, BLOCK, 0, st>>>(a, X, Y);
        KR_LAUNCH_CHECK(ctx);
    }
    fix_args f = {
        d->span_row, d->span_lo, d->span_hi,           d->empty,
        d->mpart,    d->nlong,   d->nspans - d->nlong, add ? 0 : d->nempty};
    int64_t threads = ((int64_t)d->nspans + f.nempty) * k;
    if (threads > 0) {
        int64_t blocks = (threads + BLOCK - 1) / BLOCK;
        k_vsr_multi_fixup<<<(unsigned)blocks, BLOCK, 0, st>>>(f, k, add, Y);
        KR_LAUNCH_CHECK(ctx);
    }
    return KR_OK;
}

extern "C" void kr_vsr_dev_destroy(kr_ctx *ctx, kr_vsr_dev *d)
{
    if (!d) return;
    kr_dev_free(ctx, d->val);
    kr_dev_free(ctx, d->col);
    kr_dev_free(ctx, d->heads);
    kr_dev_free(ctx, d->chunk_ord);
    kr_dev_free(ctx, d->nzrow);
    kr_dev_free(ctx, d->span_row);
    kr_dev_free(ctx, d->span_lo);
    kr_dev_free(ctx, d->span_hi);
    kr_dev_free(ctx, d->empty);
    kr_dev_free(ctx, d->part);
    kr_dev_free(ctx, d->mpart);
    free(d);
}

/* Copies `count` items of `size` bytes to new device memory, counting them. */
static kr_status up(kr_ctx *ctx, kr_vsr_dev *d, const void *h, size_t count,
                    size_t size, void **out)
{
    d->bytes += count * size;
    return kr_dev_upload_new(ctx, h, count * size, out);
}

static kr_status upload(kr_ctx *ctx, const kr_vsr_plan *p, kr_vsr_dev *d)
{
    size_t nnz = (size_t)p->nnz, nc = (size_t)p->nchunks;
    size_t ns = (size_t)p->nspans;
    KR_TRY(up(ctx, d, p->val, nnz, 8, (void **)&d->val));
    KR_TRY(up(ctx, d, p->colind, nnz, 4, (void **)&d->col));
    KR_TRY(up(ctx, d, p->heads, (nnz + 31) / 32, 4, (void **)&d->heads));
    KR_TRY(up(ctx, d, p->chunk_ord, nc, 4, (void **)&d->chunk_ord));
    if (p->nzrow)
        KR_TRY(up(ctx, d, p->nzrow, (size_t)(p->nrows - p->nempty), 4,
                  (void **)&d->nzrow));
    KR_TRY(up(ctx, d, p->span_row, ns, 4, (void **)&d->span_row));
    KR_TRY(up(ctx, d, p->span_lo, ns, 4, (void **)&d->span_lo));
    KR_TRY(up(ctx, d, p->span_hi, ns, 4, (void **)&d->span_hi));
    KR_TRY(up(ctx, d, p->empty, (size_t)p->nempty, 4, (void **)&d->empty));
    d->bytes += 2 * nc * 8;
    return kr_dev_zeros(ctx, 2 * nc, &d->part);
}

extern "C" kr_status kr_vsr_dev_create(kr_ctx *ctx, const kr_vsr_plan *p,
                                       kr_vsr_dev **out)
{
    kr_vsr_dev *d = (kr_vsr_dev *)calloc(1, sizeof *d);
    if (!d) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    d->nrows = p->nrows;
    d->nnz = p->nnz;
    d->nchunks = p->nchunks;
    d->nspans = p->nspans;
    d->nlong = p->nlong;
    d->nempty = p->nempty;
    kr_status st = upload(ctx, p, d);
    if (st != KR_OK) {
        kr_vsr_dev_destroy(ctx, d);
        return st;
    }
    /* the host plan may be freed once the uploads have left pageable memory */
    KR_CUDA_TRY(ctx, cudaStreamSynchronize(kr_cuda(ctx)->stream));
    *out = d;
    return KR_OK;
}

extern "C" size_t kr_vsr_dev_bytes(const kr_vsr_dev *d) { return d->bytes; }

/* ------------------------------------------------- the CUDA format table */

static kr_status vsr_gpu_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    kr_vsr_plan p;
    KR_TRY(
        kr_vsr_plan_build(ctx, A->nrows, A->rowptr, A->colind, A->val, 1, &p));
    kr_vsr_dev *d = NULL;
    kr_status st = kr_vsr_dev_create(ctx, &p, &d);
    kr_vsr_plan_free(&p);
    if (st == KR_OK) *out = d;
    return st;
}

static kr_status vsr_gpu_apply(kr_ctx *ctx, void *impl, double alpha,
                               const double *x, double beta, double *y)
{
    return kr_vsr_dev_apply(ctx, (const kr_vsr_dev *)impl, alpha, x, beta, y,
                            1);
}

static kr_status vsr_gpu_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                     const double *X, double *Y)
{
    return kr_vsr_dev_apply_multi(ctx, (kr_vsr_dev *)impl, k, X, Y, 0);
}

static size_t vsr_gpu_bytes(const void *impl)
{
    return kr_vsr_dev_bytes((const kr_vsr_dev *)impl);
}

static int64_t vsr_gpu_stored(const void *impl)
{
    return ((const kr_vsr_dev *)impl)->nnz;
}

static void vsr_gpu_destroy(kr_ctx *ctx, void *impl)
{
    kr_vsr_dev_destroy(ctx, (kr_vsr_dev *)impl);
}

/* KR_BUILD_DEVICE: the same plan, built by spmv/vsr_devbuild.cu. */
static kr_status vsr_gpu_build_device(kr_ctx *ctx, const kr_csr_view *A,
                                      void **out)
{
    kr_vsr_dev *d = NULL;
    KR_TRY(kr_vsr_dev_build(ctx, A->nrows, A->nnz, A->rowptr, A->colind, A->val,
                            &d));
    *out = d;
    return KR_OK;
}

static int vsr_gpu_arrays(const void *impl, kr_dev_array *a, int max)
{
    return kr_vsr_dev_arrays((const kr_vsr_dev *)impl, a, max);
}

static kr_format_ops make_ops(void)
{
    kr_format_ops o = {}; /* optional members NULL */
    o.name = "vsr";
    o.build = vsr_gpu_build;
    o.apply = vsr_gpu_apply;
    o.bytes = vsr_gpu_bytes;
    o.destroy = vsr_gpu_destroy;
    o.stored = vsr_gpu_stored;
    o.build_device = vsr_gpu_build_device;
    o.arrays = vsr_gpu_arrays;
    o.apply_multi = vsr_gpu_apply_multi;
    return o;
}

static const kr_format_ops vsr_gpu_ops = make_ops();

extern "C" const kr_format_ops *kr_vsr_cuda_ops(void) { return &vsr_gpu_ops; }
