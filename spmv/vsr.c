/* VSR on the host: the plan build shared with the GPU and HYB, and the CPU
 * kernel. The CPU kernel uses the GPU's chunking (threads over chunks,
 * sequential sums inside a chunk), the same partial-sum slots and the same
 * fix-up, so both give close results and neither depends on the thread
 * count. See spmv/vsr.h for the layout. */
#include "spmv/vsr.h"

#include "core/error.h"
#include "spmv/format.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* calloc that never asks for 0 bytes, so NULL always means failure. */
static void *alloc_n(size_t n, size_t size) { return calloc(n ? n : 1, size); }

void kr_vsr_plan_free(kr_vsr_plan *p)
{
    if (!p) return;
    free(p->colind);
    free(p->val);
    free(p->rowptr);
    free(p->chunk_row);
    free(p->heads);
    free(p->chunk_ord);
    free(p->nzrow);
    free(p->span_row);
    free(p->span_lo);
    free(p->span_hi);
    free(p->empty);
    free(p->part);
    free(p->mpart);
    memset(p, 0, sizeof *p);
}

/* Counts empty rows and rows whose entries lie in more than one chunk. */
static void count_rows(int32_t nrows, const int32_t *rp, kr_vsr_plan *p)
{
    for (int32_t r = 0; r < nrows; r++) {
        if (rp[r] == rp[r + 1])
            p->nempty++;
        else if (rp[r] / KR_VSR_CHUNK != (rp[r + 1] - 1) / KR_VSR_CHUNK) {
            int32_t slots =
                2 * ((rp[r + 1] - 1) / KR_VSR_CHUNK - rp[r] / KR_VSR_CHUNK);
            p->nspans++;
            p->nlong += slots > KR_VSR_LONG_SPAN;
        }
    }
}

static int alloc_arrays(kr_vsr_plan *p, int for_device)
{
    size_t nnz = (size_t)p->nnz, nc = (size_t)p->nchunks;
    size_t ns = (size_t)p->nspans;
    p->colind = alloc_n(nnz, sizeof *p->colind);
    p->val = alloc_n(nnz, sizeof *p->val);
    p->chunk_row = alloc_n(nc, sizeof *p->chunk_row);
    p->span_row = alloc_n(ns, sizeof *p->span_row);
    p->span_lo = alloc_n(ns, sizeof *p->span_lo);
    p->span_hi = alloc_n(ns, sizeof *p->span_hi);
    p->empty = alloc_n((size_t)p->nempty, sizeof *p->empty);
    int ok = p->colind && p->val && p->chunk_row && p->span_row && p->span_lo &&
             p->span_hi && p->empty;
    if (for_device) {
        p->heads = alloc_n((nnz + 31) / 32, sizeof *p->heads);
        p->chunk_ord = alloc_n(nc, sizeof *p->chunk_ord);
        if (p->nempty > 0)
            p->nzrow =
                alloc_n((size_t)(p->nrows - p->nempty), sizeof *p->nzrow);
        ok = ok && p->heads && p->chunk_ord && (p->nempty == 0 || p->nzrow);
    } else {
        p->rowptr = alloc_n((size_t)p->nrows + 1, sizeof *p->rowptr);
        p->part = alloc_n(2 * nc, sizeof *p->part);
        ok = ok && p->rowptr && p->part;
    }
    return ok;
}

/* Row r (nonempty, ordinal o among nonempty rows): its head bit, the chunks
 * that start inside it, and its span if it crosses a chunk boundary (ns[0]
 * counts long spans placed, ns[1] short ones). */
static void place_row(kr_vsr_plan *p, int32_t r, int32_t o, int32_t beg,
                      int32_t end, int32_t ns[2])
{
    int32_t a = beg / KR_VSR_CHUNK, b = (end - 1) / KR_VSR_CHUNK;
    if (p->heads) {
        p->heads[beg / 32] |= 1u << (beg % 32);
        if (p->nzrow) p->nzrow[o] = r;
    }
    for (int32_t c = (beg + KR_VSR_CHUNK - 1) / KR_VSR_CHUNK; c <= b; c++) {
        p->chunk_row[c] = r;
        if (p->chunk_ord) p->chunk_ord[c] = o - (c * KR_VSR_CHUNK == beg);
    }
    if (a != b) {
        int32_t s =
            2 * (b - a) > KR_VSR_LONG_SPAN ? ns[0]++ : p->nlong + ns[1]++;
        p->span_row[s] = r;
        p->span_lo[s] = 2 * a + 1;
        p->span_hi[s] = 2 * b;
    }
}

kr_status kr_vsr_plan_build(kr_ctx *ctx, int32_t nrows, const int32_t *rowptr,
                            const int32_t *colind, const double *val,
                            int for_device, kr_vsr_plan *p)
{
    int32_t nnz = nrows > 0 ? rowptr[nrows] : 0;
    memset(p, 0, sizeof *p);
    p->nrows = nrows;
    p->nnz = nnz;
    p->nchunks = (int32_t)(((int64_t)p->nnz + KR_VSR_CHUNK - 1) / KR_VSR_CHUNK);
    count_rows(nrows, rowptr, p);
    if (!alloc_arrays(p, for_device)) {
        kr_vsr_plan_free(p);
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "out of host memory building VSR (%d rows, %d nonzeros)",
                       nrows, nnz);
    }
    memcpy(p->colind, colind, (size_t)p->nnz * sizeof *colind);
    memcpy(p->val, val, (size_t)p->nnz * sizeof *val);
    if (p->rowptr)
        memcpy(p->rowptr, rowptr, ((size_t)nrows + 1) * sizeof *rowptr);
    int32_t o = 0, ne = 0, ns[2] = {0, 0};
    for (int32_t r = 0; r < nrows; r++) {
        if (rowptr[r] == rowptr[r + 1])
            p->empty[ne++] = r;
        else
            place_row(p, r, o++, rowptr[r], rowptr[r + 1], ns);
    }
    return KR_OK;
}

size_t kr_vsr_plan_bytes(const kr_vsr_plan *p)
{
    size_t b = (size_t)p->nnz * 12 + (size_t)p->nchunks * 4 +
               ((size_t)p->nspans * 3 + (size_t)p->nempty) * 4;
    if (p->rowptr) b += ((size_t)p->nrows + 1) * 4 + (size_t)p->nchunks * 16;
    if (p->heads) b += ((size_t)p->nnz + 31) / 32 * 4 + (size_t)p->nchunks * 4;
    if (p->nzrow) b += (size_t)(p->nrows - p->nempty) * 4;
    return b;
}

static inline double scale(double alpha, double s, double beta, double y)
{
    return beta == 0.0 ? alpha * s : alpha * s + beta * y;
}

/* One chunk: rows that start and end in it are written; the first segment
 * of a row begun earlier goes to part[2c], the last segment of a row that
 * goes on goes to part[2c+1]. */
static void cpu_chunk(kr_vsr_plan *p, int32_t c, double alpha, const double *x,
                      double beta, double *y)
{
    const int32_t *rp = p->rowptr, *ci = p->colind;
    const double *v = p->val;
    int32_t b = c * KR_VSR_CHUNK;
    int32_t e = p->nnz - b < KR_VSR_CHUNK ? p->nnz : b + KR_VSR_CHUNK;
    double head = 0.0, tail = 0.0;
    for (int32_t k = b, r = p->chunk_row[c]; k < e; r++) {
        if (rp[r + 1] <= k) continue; /* an empty row */
        int32_t end = rp[r + 1] < e ? rp[r + 1] : e;
        double s = 0.0;
        for (; k < end; k++)
            s += v[k] * x[ci[k]];
        if (rp[r] < b)
            head = s;
        else if (rp[r + 1] > e)
            tail = s;
        else
            y[r] = scale(alpha, s, beta, y[r]);
    }
    p->part[2 * c] = head;
    p->part[2 * c + 1] = tail;
}

void kr_vsr_plan_apply(kr_ctx *ctx, kr_vsr_plan *p, double alpha,
                       const double *x, double beta, double *y, int empty_rows)
{
    int threads = p->nnz < 50000 ? 1 : kr_ctx_threads(ctx);
    int32_t nempty = empty_rows ? p->nempty : 0;
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
        for (int32_t c = 0; c < p->nchunks; c++)
            cpu_chunk(p, c, alpha, x, beta, y);
            /* the barrier above orders the partial sums before the fix-up */
#pragma omp for schedule(static) nowait
        for (int32_t s = 0; s < p->nspans; s++) {
            double sum = 0.0;
            for (int32_t k = p->span_lo[s]; k <= p->span_hi[s]; k++)
                sum += p->part[k];
            int32_t r = p->span_row[s];
            y[r] = scale(alpha, sum, beta, y[r]);
        }
#pragma omp for schedule(static)
        for (int32_t i = 0; i < nempty; i++) {
            int32_t r = p->empty[i];
            y[r] = beta == 0.0 ? 0.0 : beta * y[r];
        }
    }
}

/* dst = sum over entries [k0, k1) of val * X's rows, k columns */
static void segment_multi(const kr_vsr_plan *p, int32_t k0, int32_t k1,
                          int32_t k, const double *X, double *dst)
{
    for (int32_t q = 0; q < k; q++)
        dst[q] = 0.0;
    for (int32_t e = k0; e < k1; e++) {
        double v = p->val[e];
        const double *x = X + (size_t)p->colind[e] * k;
        for (int32_t q = 0; q < k; q++)
            dst[q] += v * x[q];
    }
}

/* y = s (add = 0) or s + y, as scale() with alpha = beta = 1 */
static void store_row(int32_t k, const double *s, double *y, int add)
{
    for (int32_t q = 0; q < k; q++)
        y[q] = add ? s[q] + y[q] : s[q];
}

/* cpu_chunk for k columns: part holds 2 slots of k per chunk, acc k. */
static void cpu_chunk_multi(const kr_vsr_plan *p, int32_t c, int32_t k,
                            const double *X, double *Y, int add, double *part,
                            double *acc)
{
    const int32_t *rp = p->rowptr;
    int32_t b = c * KR_VSR_CHUNK;
    int32_t e = p->nnz - b < KR_VSR_CHUNK ? p->nnz : b + KR_VSR_CHUNK;
    double *head = part + (size_t)2 * c * k, *tail = head + k;
    for (int32_t q = 0; q < 2 * k; q++)
        head[q] = 0.0;
    for (int32_t at = b, r = p->chunk_row[c]; at < e; r++) {
        if (rp[r + 1] <= at) continue; /* an empty row */
        int32_t end = rp[r + 1] < e ? rp[r + 1] : e;
        double *dst = rp[r] < b ? head : (rp[r + 1] > e ? tail : acc);
        segment_multi(p, at, end, k, X, dst);
        if (dst == acc) store_row(k, acc, Y + (size_t)r * k, add);
        at = end;
    }
}

/* The spans' slots summed in order into acc, then stored. */
static void fixup_multi(const kr_vsr_plan *p, int32_t s, int32_t k,
                        const double *part, double *Y, int add, double *acc)
{
    for (int32_t q = 0; q < k; q++)
        acc[q] = 0.0;
    for (int32_t slot = p->span_lo[s]; slot <= p->span_hi[s]; slot++)
        for (int32_t q = 0; q < k; q++)
            acc[q] += part[(size_t)slot * k + q];
    store_row(k, acc, Y + (size_t)p->span_row[s] * k, add);
}

static kr_status grow_scratch(kr_ctx *ctx, kr_vsr_plan *p, size_t need)
{
    if (need <= p->mpart_cap) return KR_OK;
    double *fresh = malloc(need * sizeof *fresh);
    if (!fresh)
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "vsr: out of host memory for the SpMM's %zu partial "
                       "sums",
                       need);
    free(p->mpart);
    p->mpart = fresh;
    p->mpart_cap = need;
    return KR_OK;
}

kr_status kr_vsr_plan_apply_multi(kr_ctx *ctx, kr_vsr_plan *p, int32_t k,
                                  const double *X, double *Y, int add)
{
    int threads = (int64_t)p->nnz * k < 50000 ? 1 : kr_ctx_threads(ctx);
    size_t slots = (size_t)2 * p->nchunks * k;
    KR_TRY(grow_scratch(ctx, p, slots + (size_t)threads * k));
    double *part = p->mpart;
    int32_t nempty = add ? 0 : p->nempty;
#pragma omp parallel num_threads(threads)
    {
        double *acc = part + slots + (size_t)omp_get_thread_num() * k;
#pragma omp for schedule(static)
        for (int32_t c = 0; c < p->nchunks; c++)
            cpu_chunk_multi(p, c, k, X, Y, add, part, acc);
#pragma omp for schedule(static) nowait
        for (int32_t s = 0; s < p->nspans; s++)
            fixup_multi(p, s, k, part, Y, add, acc);
#pragma omp for schedule(static)
        for (int32_t i = 0; i < nempty; i++)
            for (int32_t q = 0; q < k; q++)
                Y[(size_t)p->empty[i] * k + q] = 0.0;
    }
    return KR_OK;
}

/* ------------------------------------------------- the CPU format table */

static kr_status vsr_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    kr_vsr_plan *p = calloc(1, sizeof *p);
    if (!p) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st =
        kr_vsr_plan_build(ctx, A->nrows, A->rowptr, A->colind, A->val, 0, p);
    if (st != KR_OK) {
        free(p);
        return st;
    }
    *out = p;
    return KR_OK;
}

static kr_status vsr_apply(kr_ctx *ctx, void *impl, double alpha,
                           const double *x, double beta, double *y)
{
    kr_vsr_plan_apply(ctx, impl, alpha, x, beta, y, 1);
    return KR_OK;
}

static kr_status vsr_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                 const double *X, double *Y)
{
    return kr_vsr_plan_apply_multi(ctx, impl, k, X, Y, 0);
}

static size_t vsr_bytes(const void *impl) { return kr_vsr_plan_bytes(impl); }

static int64_t vsr_stored(const void *impl)
{
    return ((const kr_vsr_plan *)impl)->nnz;
}

static void vsr_destroy(kr_ctx *ctx, void *impl)
{
    (void)ctx;
    kr_vsr_plan_free(impl);
    free(impl);
}

const kr_format_ops kr_vsr_cpu_ops = {
    .name = "vsr",
    .build = vsr_build,
    .apply = vsr_apply,
    .bytes = vsr_bytes,
    .destroy = vsr_destroy,
    .stored = vsr_stored,
    .apply_multi = vsr_apply_multi,
};
