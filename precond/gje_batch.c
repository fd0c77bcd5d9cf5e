/* TEMPORARY (branch gjebench): a minimal CPU implementation of the batched
 * Gauss-Jordan interface (precond/gje_batch.h) so that `krylov bench gje`
 * runs and is tested before the lead's precond/gje_batch.c lands; that
 * version replaces this file at merge. Each block goes through the
 * single-block reference (precond/gje.c), OpenMP over blocks. There is no
 * GPU table yet: kr_gje_batch_cuda_ops below is a weak NULL that
 * core/cuda_stubs.c (CUDA=0) or a future precond/gje_batch.cu overrides. */
#include "precond/gje_batch.h"

#include "core/error.h"
#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

static kr_status check_starts(kr_ctx *ctx, int32_t nb, const int32_t *starts)
{
    if (nb < 0 || !starts || starts[0] != 0)
        return kr_fail(ctx, KR_ERR_ARG, "kr_gje_batch_create: bad starts");
    for (int32_t b = 0; b < nb; b++) {
        int32_t k = starts[b + 1] - starts[b];
        if (k < 1 || k > KR_GJE_MAX)
            return kr_fail(ctx, KR_ERR_ARG,
                           "kr_gje_batch_create: block %d has %d rows (1..%d)",
                           (int)b, (int)k, KR_GJE_MAX);
    }
    return KR_OK;
}

/* Host offsets and the class order (a counting sort by size class). */
static void host_layout(kr_gje_batch *bb)
{
    int32_t count[KR_GJE_CLASSES + 1] = {0};
    bb->h_offs[0] = 0;
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t k = bb->h_starts[b + 1] - bb->h_starts[b];
        bb->h_offs[b + 1] = bb->h_offs[b] + (int64_t)k * k;
        bb->max_k = k > bb->max_k ? k : bb->max_k;
        count[kr_gje_class(k) + 1]++;
    }
    bb->class_start[0] = 0;
    for (int c = 0; c < KR_GJE_CLASSES; c++)
        bb->class_start[c + 1] = bb->class_start[c] + count[c + 1];
    int32_t next[KR_GJE_CLASSES];
    memcpy(next, bb->class_start, sizeof next);
    for (int32_t b = 0; b < bb->nb; b++)
        bb->h_order[next[kr_gje_class(bb->h_starts[b + 1] -
                                      bb->h_starts[b])]++] = b;
    bb->nrows = bb->h_starts[bb->nb];
    bb->total = bb->h_offs[bb->nb];
}

static kr_status upload_layout(kr_ctx *ctx, kr_gje_batch *bb)
{
    size_t n1 = (size_t)bb->nb + 1;
    KR_TRY(kr_dev_upload_new(ctx, bb->h_starts, n1 * sizeof(int32_t),
                             (void **)&bb->starts));
    KR_TRY(kr_dev_upload_new(ctx, bb->h_offs, n1 * sizeof(int64_t),
                             (void **)&bb->offs));
    return kr_dev_upload_new(ctx, bb->h_order, n1 * sizeof(int32_t),
                             (void **)&bb->order);
}

kr_status kr_gje_batch_create(kr_ctx *ctx, int32_t nb, const int32_t *starts,
                              kr_gje_batch *bb)
{
    memset(bb, 0, sizeof *bb);
    KR_TRY(check_starts(ctx, nb, starts));
    size_t n1 = (size_t)nb + 1;
    bb->nb = nb;
    bb->h_starts = malloc(n1 * sizeof *bb->h_starts);
    bb->h_order = malloc(n1 * sizeof *bb->h_order);
    bb->h_offs = malloc(n1 * sizeof *bb->h_offs);
    kr_status st = KR_OK;
    if (!bb->h_starts || !bb->h_order || !bb->h_offs)
        st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    if (st == KR_OK) {
        memcpy(bb->h_starts, starts, n1 * sizeof *starts);
        host_layout(bb);
        st = upload_layout(ctx, bb);
    }
    if (st != KR_OK) kr_gje_batch_free(ctx, bb);
    return st;
}

void kr_gje_batch_free(kr_ctx *ctx, kr_gje_batch *bb)
{
    if (!bb) return;
    kr_dev_free(ctx, bb->starts);
    kr_dev_free(ctx, bb->offs);
    kr_dev_free(ctx, bb->order);
    free(bb->h_starts);
    free(bb->h_order);
    free(bb->h_offs);
    memset(bb, 0, sizeof *bb);
}

/* ------------------------------------------------------------ CPU ops */

static int rows_differ(const kr_gje_csr *A, int32_t i)
{
    int32_t a = A->rowptr[i - 1], la = A->rowptr[i] - a;
    int32_t b = A->rowptr[i], lb = A->rowptr[i + 1] - b;
    return la != lb || memcmp(A->colind + a, A->colind + b,
                              (size_t)la * sizeof *A->colind) != 0;
}

static kr_status cpu_pattern_flags(kr_ctx *ctx, const kr_gje_csr *A,
                                   unsigned char *flags)
{
    (void)ctx;
    for (int32_t i = 0; i < A->nrows; i++)
        flags[i] = i == 0 || rows_differ(A, i);
    return KR_OK;
}

static kr_status cpu_invert(kr_ctx *ctx, const kr_gje_batch *bb,
                            const double *in, double *out, int32_t *info)
{
#pragma omp parallel for num_threads(kr_ctx_threads(ctx)) schedule(dynamic, 64)
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t k = bb->h_starts[b + 1] - bb->h_starts[b];
        int64_t o = bb->h_offs[b];
        memcpy(out + o, in + o, (size_t)k * k * sizeof *out);
        info[b] = kr_gje_invert(k, out + o, KR_GJE_COL_MAJOR) != KR_OK;
    }
    return KR_OK;
}

static kr_status cpu_extract_invert(kr_ctx *ctx, const kr_gje_batch *bb,
                                    const kr_gje_csr *A, double *out,
                                    int32_t *info)
{
    /* kr_gje_extract reads through a kr_csr; it does not write. */
    kr_csr view = {A->nrows,
                   A->nrows,
                   A->nnz,
                   (int32_t *)A->rowptr,
                   (int32_t *)A->colind,
                   (double *)A->val};
#pragma omp parallel for num_threads(kr_ctx_threads(ctx)) schedule(dynamic, 64)
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t s = bb->h_starts[b], k = bb->h_starts[b + 1] - s;
        double *D = out + bb->h_offs[b];
        kr_gje_extract(&view, s, k, D, KR_GJE_COL_MAJOR);
        info[b] = kr_gje_invert(k, D, KR_GJE_COL_MAJOR) != KR_OK;
    }
    return KR_OK;
}

static kr_status cpu_apply(kr_ctx *ctx, const kr_gje_batch *bb,
                           const double *inv, const double *r, double *z)
{
#pragma omp parallel for num_threads(kr_ctx_threads(ctx)) schedule(static)
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t s = bb->h_starts[b], k = bb->h_starts[b + 1] - s;
        const double *D = inv + bb->h_offs[b];
        for (int32_t i = 0; i < k; i++) {
            double sum = 0.0;
            for (int32_t j = 0; j < k; j++)
                sum += D[i + (size_t)j * k] * r[s + j];
            z[s + i] = sum;
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
};

const kr_gje_batch_ops *kr_gje_batch_cpu_ops(void) { return &cpu_ops; }

/* Temporary: no GPU table on this branch (see the top of the file). */
__attribute__((weak)) const kr_gje_batch_ops *kr_gje_batch_cuda_ops(void)
{
    return NULL;
}

const kr_gje_batch_ops *kr_gje_batch_ops_for(kr_ctx *ctx)
{
    return ctx->device == KR_DEVICE_CUDA ? kr_gje_batch_cuda_ops()
                                         : kr_gje_batch_cpu_ops();
}
