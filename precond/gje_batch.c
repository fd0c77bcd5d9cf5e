/* The batched Gauss-Jordan table on the CPU (the reference the GPU kernels
 * are tested against), the batch descriptor, and the choice of table by
 * device. Blocks are independent, so OpenMP runs over blocks; each block is
 * precond/gje.c's plain elimination. */
#include "precond/gje_batch.h"

#include "core/error.h"
#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

/* Below this many entries a batch runs on one thread. */
#define GJE_SERIAL_ENTRIES 50000

static int threads_for(kr_ctx *ctx, int64_t entries)
{
    return entries < GJE_SERIAL_ENTRIES ? 1 : kr_ctx_threads(ctx);
}

/* ------------------------------------------------------------ the batch */

static kr_status check_starts(kr_ctx *ctx, int32_t nb, const int32_t *starts)
{
    if (nb < 0 || !starts || starts[0] != 0)
        return kr_fail(ctx, KR_ERR_ARG, "gje batch: no block starts");
    for (int32_t b = 0; b < nb; b++) {
        int32_t k = starts[b + 1] - starts[b];
        if (k < 1 || k > KR_GJE_MAX)
            return kr_fail(ctx, KR_ERR_ARG,
                           "gje batch: block %d (rows from %d, numbered from "
                           "1) has %d rows, not 1..%d",
                           (int)b + 1, (int)starts[b] + 1, (int)k, KR_GJE_MAX);
    }
    return KR_OK;
}

/* h_offs and the counting sort of the blocks by size class. */
static kr_status fill_host(kr_ctx *ctx, kr_gje_batch *bb)
{
    size_t nb = (size_t)bb->nb;
    bb->h_offs = malloc((nb + 1) * sizeof *bb->h_offs);
    bb->h_order = malloc((nb + 1) * sizeof *bb->h_order);
    if (!bb->h_offs || !bb->h_order)
        return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    int32_t count[KR_GJE_CLASSES + 1] = {0};
    bb->h_offs[0] = 0;
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t k = bb->h_starts[b + 1] - bb->h_starts[b];
        bb->h_offs[b + 1] = bb->h_offs[b] + (int64_t)k * k;
        count[kr_gje_class(k) + 1]++;
        if (k > bb->max_k) bb->max_k = k;
    }
    for (int c = 0; c < KR_GJE_CLASSES; c++)
        count[c + 1] += count[c];
    memcpy(bb->class_start, count, sizeof count);
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t k = bb->h_starts[b + 1] - bb->h_starts[b];
        bb->h_order[count[kr_gje_class(k)]++] = b;
    }
    bb->nrows = bb->h_starts[bb->nb];
    bb->total = bb->h_offs[bb->nb];
    return KR_OK;
}

/* offs, starts and order in one allocation and one copy: a setup's fixed
 * cost on the GPU is mostly allocations and transfers, not bytes. */
static kr_status upload_batch(kr_ctx *ctx, kr_gje_batch *bb)
{
    size_t nb1 = (size_t)bb->nb + 1;
    size_t bytes = nb1 * 8 + 2 * nb1 * 4;
    char *h = malloc(bytes);
    if (!h) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    memcpy(h, bb->h_offs, nb1 * 8);
    memcpy(h + nb1 * 8, bb->h_starts, nb1 * 4);
    memcpy(h + nb1 * 12, bb->h_order, nb1 * 4);
    kr_status st = kr_dev_upload_new(ctx, h, bytes, &bb->dev);
    free(h);
    if (st != KR_OK) return st;
    bb->offs = (int64_t *)bb->dev;
    bb->starts = (int32_t *)((char *)bb->dev + nb1 * 8);
    bb->order = (int32_t *)((char *)bb->dev + nb1 * 12);
    return KR_OK;
}

kr_status kr_gje_batch_create(kr_ctx *ctx, int32_t nb, const int32_t *starts,
                              kr_gje_batch *bb)
{
    memset(bb, 0, sizeof *bb);
    KR_TRY(check_starts(ctx, nb, starts));
    bb->nb = nb;
    bb->h_starts = malloc(((size_t)nb + 1) * sizeof *bb->h_starts);
    kr_status st = KR_OK;
    if (!bb->h_starts) st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    if (st == KR_OK) {
        memcpy(bb->h_starts, starts, ((size_t)nb + 1) * sizeof *starts);
        st = fill_host(ctx, bb);
    }
    if (st == KR_OK) st = upload_batch(ctx, bb);
    if (st != KR_OK) kr_gje_batch_free(ctx, bb);
    return st;
}

/* KR_ERR_DEVICE naming the first size in which the batch h, made on the
 * host from the starts read back, differs from bb, the device's. */
static kr_status same_sizes(kr_ctx *ctx, const kr_gje_batch *h,
                            const kr_gje_batch *bb)
{
    const char *what = NULL;
    long long host = 0, dev = 0;
    if (h->nrows != bb->nrows)
        what = "rows", host = h->nrows, dev = bb->nrows;
    else if (h->max_k != bb->max_k)
        what = "largest block", host = h->max_k, dev = bb->max_k;
    else if (h->total != bb->total)
        what = "inverse entries", host = h->total, dev = bb->total;
    for (int c = 0; !what && c <= KR_GJE_CLASSES; c++)
        if (h->class_start[c] != bb->class_start[c])
            what = "blocks before a size class", host = h->class_start[c],
            dev = bb->class_start[c];
    if (!what) return KR_OK;
    return kr_fail(ctx, KR_ERR_DEVICE,
                   "gje batch: the %d block starts read back give %lld %s, "
                   "the device found %lld (internal error)",
                   (int)bb->nb, host, what, dev);
}

kr_status kr_gje_batch_set_host(kr_ctx *ctx, kr_gje_batch *bb,
                                const int32_t *starts)
{
    kr_gje_batch h;
    memset(&h, 0, sizeof h);
    h.nb = bb->nb;
    h.h_starts = malloc(((size_t)bb->nb + 1) * sizeof *h.h_starts);
    kr_status st = KR_OK;
    if (!h.h_starts) st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    if (st == KR_OK) st = check_starts(ctx, bb->nb, starts);
    if (st == KR_OK) {
        memcpy(h.h_starts, starts, ((size_t)bb->nb + 1) * sizeof *starts);
        st = fill_host(ctx, &h);
    }
    if (st == KR_OK) st = same_sizes(ctx, &h, bb);
    if (st != KR_OK) {
        kr_gje_batch_free(ctx, &h); /* host arrays only: h.dev is NULL */
        return st;
    }
    bb->h_starts = h.h_starts;
    bb->h_offs = h.h_offs;
    bb->h_order = h.h_order;
    return KR_OK;
}

void kr_gje_batch_free(kr_ctx *ctx, kr_gje_batch *bb)
{
    if (!bb) return;
    kr_dev_free(ctx, bb->dev);
    free(bb->h_starts);
    free(bb->h_offs);
    free(bb->h_order);
    memset(bb, 0, sizeof *bb);
}

/* ------------------------------------------------------- the CPU table */

/* 1 when rows i-1 and i have the same column pattern. */
static int same_pattern(const kr_gje_csr *A, int32_t i)
{
    int32_t a = A->rowptr[i - 1], b = A->rowptr[i];
    int32_t len = b - a;
    if (A->rowptr[i + 1] - b != len) return 0;
    return memcmp(A->colind + a, A->colind + b,
                  (size_t)len * sizeof *A->colind) == 0;
}

static kr_status cpu_pattern_flags(kr_ctx *ctx, const kr_gje_csr *A,
                                   unsigned char *flags)
{
    int nt = threads_for(ctx, A->nnz);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int32_t i = 0; i < A->nrows; i++)
        flags[i] = i == 0 || !same_pattern(A, i);
    return KR_OK;
}

static kr_status cpu_invert(kr_ctx *ctx, const kr_gje_batch *bb,
                            const double *in, double *out, int32_t *info)
{
    int nt = threads_for(ctx, bb->total);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 64)
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t k = bb->starts[b + 1] - bb->starts[b];
        int64_t o = bb->offs[b];
        memcpy(out + o, in + o, sizeof(double) * (size_t)k * (size_t)k);
        info[b] = kr_gje_invert(k, out + o, KR_GJE_COL_MAJOR) != KR_OK;
    }
    return KR_OK;
}

static kr_status cpu_extract_invert(kr_ctx *ctx, const kr_gje_batch *bb,
                                    const kr_gje_csr *A, double *out,
                                    int32_t *info)
{
    /* kr_gje_extract reads only rowptr, colind and val */
    kr_csr H = {A->nrows,
                A->nrows,
                A->nnz,
                (int32_t *)A->rowptr,
                (int32_t *)A->colind,
                (double *)A->val};
    int nt = threads_for(ctx, bb->total);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 64)
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t s = bb->starts[b], k = bb->starts[b + 1] - s;
        double *D = out + bb->offs[b];
        kr_gje_extract(&H, s, k, D, KR_GJE_COL_MAJOR);
        info[b] = kr_gje_invert(k, D, KR_GJE_COL_MAJOR) != KR_OK;
    }
    return KR_OK;
}

/* z_b = inv_b r_b; each z_i sums inv(i, j) r_j in column order. */
static kr_status cpu_apply(kr_ctx *ctx, const kr_gje_batch *bb,
                           const double *inv, const double *r, double *z)
{
    int nt = threads_for(ctx, bb->total);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t s = bb->starts[b], k = bb->starts[b + 1] - s;
        const double *D = inv + bb->offs[b];
        double acc[KR_GJE_MAX] = {0};
        for (int32_t j = 0; j < k; j++)
            for (int32_t i = 0; i < k; i++)
                acc[i] += D[(size_t)j * k + i] * r[s + j];
        memcpy(z + s, acc, sizeof(double) * (size_t)k);
    }
    return KR_OK;
}

/* cpu_apply on each of the k columns of R (row-major, nrows x k): the same
 * sums in the same order per column. */
static kr_status cpu_apply_multi(kr_ctx *ctx, const kr_gje_batch *bb,
                                 const double *inv, int k, const double *R,
                                 double *Z)
{
    int nt = threads_for(ctx, bb->total * k);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t s = bb->starts[b], kb = bb->starts[b + 1] - s;
        const double *D = inv + bb->offs[b];
        for (int c = 0; c < k; c++) {
            double acc[KR_GJE_MAX] = {0};
            for (int32_t j = 0; j < kb; j++)
                for (int32_t i = 0; i < kb; i++)
                    acc[i] += D[(size_t)j * kb + i] *
                              R[(size_t)(s + j) * (size_t)k + (size_t)c];
            for (int32_t i = 0; i < kb; i++)
                Z[(size_t)(s + i) * (size_t)k + (size_t)c] = acc[i];
        }
    }
    return KR_OK;
}

static const kr_gje_batch_ops cpu_ops = {
    .name = "cpu",
    .pattern_flags = cpu_pattern_flags,
    .invert = cpu_invert,
    .extract_invert = cpu_extract_invert,
    .apply = cpu_apply,
    .apply_multi = cpu_apply_multi,
};

const kr_gje_batch_ops *kr_gje_batch_cpu_ops(void) { return &cpu_ops; }

const kr_gje_batch_ops *kr_gje_batch_ops_for(kr_ctx *ctx)
{
    return ctx->device == KR_DEVICE_CUDA ? kr_gje_batch_cuda_ops()
                                         : kr_gje_batch_cpu_ops();
}
