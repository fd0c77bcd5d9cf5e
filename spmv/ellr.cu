/* ELLPACK-R on the GPU: the host build of spmv/ellr.c uploaded as is, and
 * one thread per row. Row i's entries sit at val[i + j*n], so the threads of
 * a warp read consecutive addresses at every step j: each load is coalesced.
 * The loop stops at the row's own length rl[i], so padding is never read. */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/ellr.h"
#include "spmv/format.h"
#include "spmv/spmm_rows.h"

#include <stdlib.h>

#define ELLR_BLOCK 256

typedef struct ellr_gpu {
    int32_t nrows, width;
    int64_t stored;
    double *val;  /* nrows*width, column-major */
    int32_t *col; /* nrows*width, column-major */
    int32_t *rl;  /* nrows                      */
} ellr_gpu;

/* y = alpha*A*x + beta*y; beta == 0 overwrites y. Exact grid. */
__global__ void __launch_bounds__(ELLR_BLOCK)
    ellr_spmv(int32_t n, const int32_t *__restrict__ rl,
              const double *__restrict__ val, const int32_t *__restrict__ col,
              const double *__restrict__ x, double alpha, double beta,
              double *__restrict__ y)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (unsigned)n) return;
    const int32_t len = rl[i];
    const double *v = val + i;
    const int32_t *c = col + i;
    double s = 0.0;
#pragma unroll 4
    for (int32_t j = 0; j < len; j++) {
        s += v[0] * __ldg(x + c[0]);
        v += n;
        c += n;
    }
    y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
}

static void ellr_gpu_destroy(kr_ctx *ctx, void *impl)
{
    ellr_gpu *m = (ellr_gpu *)impl;
    if (!m) return;
    kr_dev_free(ctx, m->val);
    kr_dev_free(ctx, m->col);
    kr_dev_free(ctx, m->rl);
    free(m);
}

static kr_status upload(kr_ctx *ctx, ellr_gpu *m, const kr_ellr_host *E)
{
    KR_TRY(kr_dev_upload_new(ctx, E->val, (size_t)m->stored * 8,
                             (void **)&m->val));
    KR_TRY(kr_dev_upload_new(ctx, E->col, (size_t)m->stored * 4,
                             (void **)&m->col));
    KR_TRY(
        kr_dev_upload_new(ctx, E->rl, (size_t)E->nrows * 4, (void **)&m->rl));
    return KR_OK;
}

static kr_status ellr_gpu_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    kr_ellr_host E;
    KR_TRY(kr_ellr_host_build(ctx, A, &E));
    ellr_gpu *m = (ellr_gpu *)calloc(1, sizeof *m);
    kr_status st = KR_OK;
    if (!m) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    } else {
        m->nrows = E.nrows;
        m->width = E.width;
        m->stored = kr_ellr_host_stored(&E);
        st = upload(ctx, m, &E);
    }
    kr_ellr_host_free(&E);
    if (st != KR_OK) {
        ellr_gpu_destroy(ctx, m);
        return st;
    }
    *out = m;
    return KR_OK;
}

static kr_status ellr_gpu_apply(kr_ctx *ctx, void *impl, double alpha,
                                const double *x, double beta, double *y)
{
    const ellr_gpu *m = (const ellr_gpu *)impl;
    if (m->nrows == 0) return KR_OK;
    unsigned blocks =
        (unsigned)((m->nrows + (int64_t)ELLR_BLOCK - 1) / ELLR_BLOCK);
    ellr_spmv<<<blocks, ELLR_BLOCK, 0, kr_cuda(ctx)->stream>>>(
        m->nrows, m->rl, m->val, m->col, x, alpha, beta, y);
    KR_LAUNCH_CHECK(ctx);
    return KR_OK;
}

/* Y = A X: the shared ELLPACK-like SpMM (spmv/spmm_rows.cu), row i's
 * entries at i + j*n, rl[i] of them. */
static kr_status ellr_gpu_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                      const double *X, double *Y)
{
    const ellr_gpu *m = (const ellr_gpu *)impl;
    /* no split: ELLR's rows are in A's order, and none is much longer
     * than the mean (the build refuses more than 3x padding) */
    kr_ell_rows L = {m->nrows, m->width, m->rl,  NULL,
                     NULL,     m->val,   m->col, NULL};
    return kr_ell_rows_spmm(ctx, &L, k, X, Y);
}

static size_t ellr_gpu_bytes(const void *impl)
{
    const ellr_gpu *m = (const ellr_gpu *)impl;
    return (size_t)m->stored * 12 + (size_t)m->nrows * 4;
}

static int64_t ellr_gpu_stored(const void *impl)
{
    return ((const ellr_gpu *)impl)->stored;
}

/* KR_BUILD_DEVICE: the same arrays, built by spmv/ellr_devbuild.cu. */
static kr_status ellr_gpu_build_device(kr_ctx *ctx, const kr_csr_view *A,
                                       void **out)
{
    ellr_gpu *m = (ellr_gpu *)calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_ellr_dev E;
    kr_status st = kr_ellr_dev_build(ctx, A, &E);
    if (st != KR_OK) {
        free(m);
        return st;
    }
    *m = ellr_gpu{A->nrows, E.width, E.stored, E.val, E.col, E.rl};
    *out = m;
    return KR_OK;
}

static int ellr_gpu_arrays(const void *impl, kr_dev_array *a, int max)
{
    const ellr_gpu *m = (const ellr_gpu *)impl;
    const kr_dev_array all[] = {{"val", m->val, (size_t)m->stored * 8},
                                {"col", m->col, (size_t)m->stored * 4},
                                {"rl", m->rl, (size_t)m->nrows * 4}};
    return kr_dev_arrays_put(all, 3, a, max);
}

static kr_format_ops make_ops(void)
{
    kr_format_ops o = {}; /* optional members NULL */
    o.name = "ellr";
    o.build = ellr_gpu_build;
    o.apply = ellr_gpu_apply;
    o.bytes = ellr_gpu_bytes;
    o.destroy = ellr_gpu_destroy;
    o.stored = ellr_gpu_stored;
    o.build_device = ellr_gpu_build_device;
    o.arrays = ellr_gpu_arrays;
    o.apply_multi = ellr_gpu_apply_multi;
    return o;
}

static const kr_format_ops ellr_gpu_ops = make_ops();

const kr_format_ops *kr_ellr_cuda_ops(void) { return &ellr_gpu_ops; }
