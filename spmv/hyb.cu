/* HYB on the GPU: one thread per row over the column-major ELL part (loads
 * coalesced across the rows of a warp) writes y = alpha*ELL*x + beta*y,
 * then VSR's kernels (spmv/vsr.cu) add alpha*COO*x for the remainder. */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/format.h"
#include "spmv/hyb.h"
#include "spmv/spmm_rows.h"

#include <stdlib.h>

#define BLOCK 256

typedef struct hyb_gpu {
    int32_t nrows, width, coo_nnz;
    int32_t *ell_col;
    double *ell_val;
    kr_vsr_dev *coo;
} hyb_gpu;

__global__ void __launch_bounds__(BLOCK)
    k_hyb_ell(int32_t n, int32_t K, const double *__restrict__ val,
              const int32_t *__restrict__ col, const double *__restrict__ x,
              double alpha, double beta, double *__restrict__ y)
{
    const int32_t i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    double s = 0.0;
    for (int32_t j = 0; j < K; j++) {
        const int64_t k = i + (int64_t)j * n;
        s += __ldg(val + k) * __ldg(x + __ldg(col + k));
    }
    y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
}

static void hyb_gpu_destroy(kr_ctx *ctx, void *impl)
{
    hyb_gpu *m = (hyb_gpu *)impl;
    if (!m) return;
    kr_dev_free(ctx, m->ell_col);
    kr_dev_free(ctx, m->ell_val);
    kr_vsr_dev_destroy(ctx, m->coo);
    free(m);
}

static kr_status upload(kr_ctx *ctx, const kr_hyb_host *h, hyb_gpu *m)
{
    size_t cells = (size_t)h->nrows * (size_t)h->width;
    KR_TRY(kr_dev_upload_new(ctx, h->ell_col, cells * 4, (void **)&m->ell_col));
    KR_TRY(kr_dev_upload_new(ctx, h->ell_val, cells * 8, (void **)&m->ell_val));
    return kr_vsr_dev_create(ctx, &h->coo, &m->coo);
}

static kr_status hyb_gpu_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    hyb_gpu *m = (hyb_gpu *)calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_hyb_host h;
    kr_status st = kr_hyb_host_build(ctx, A, 1, &h);
    if (st == KR_OK) {
        m->nrows = h.nrows;
        m->width = h.width;
        m->coo_nnz = h.coo.nnz;
        st = upload(ctx, &h, m);
        kr_hyb_host_free(&h);
    }
    if (st != KR_OK) {
        hyb_gpu_destroy(ctx, m);
        return st;
    }
    *out = m;
    return KR_OK;
}

static kr_status hyb_gpu_apply(kr_ctx *ctx, void *impl, double alpha,
                               const double *x, double beta, double *y)
{
    hyb_gpu *m = (hyb_gpu *)impl;
    if (m->nrows == 0) return KR_OK;
    int blocks = (m->nrows + BLOCK - 1) / BLOCK;
    k_hyb_ell<<<blocks, BLOCK, 0, kr_cuda(ctx)->stream>>>(
        m->nrows, m->width, m->ell_val, m->ell_col, x, alpha, beta, y);
    KR_LAUNCH_CHECK(ctx);
    if (m->coo_nnz == 0) return KR_OK;
    return kr_vsr_dev_apply(ctx, m->coo, alpha, x, 1.0, y, 0);
}

/* Y = A X: the ELL part by the shared ELLPACK-like SpMM (every row K
 * entries, padding zeros), then VSR's SpMM adds the remainder per row. */
static kr_status hyb_gpu_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                     const double *X, double *Y)
{
    hyb_gpu *m = (hyb_gpu *)impl;
    /* no split: the ELL part's rows are at most width long */
    kr_ell_rows L = {m->nrows, m->width,   NULL,       NULL,
                     NULL,     m->ell_val, m->ell_col, NULL};
    KR_TRY(kr_ell_rows_spmm(ctx, &L, k, X, Y));
    if (m->coo_nnz == 0) return KR_OK;
    return kr_vsr_dev_apply_multi(ctx, m->coo, k, X, Y, 1);
}

static size_t hyb_gpu_bytes(const void *impl)
{
    const hyb_gpu *m = (const hyb_gpu *)impl;
    return (size_t)m->nrows * (size_t)m->width * 12 + kr_vsr_dev_bytes(m->coo);
}

static int64_t hyb_gpu_stored(const void *impl)
{
    const hyb_gpu *m = (const hyb_gpu *)impl;
    return (int64_t)m->nrows * m->width + m->coo_nnz;
}

/* KR_BUILD_DEVICE: the same split, built by spmv/hyb_devbuild.cu. */
static kr_status hyb_gpu_build_device(kr_ctx *ctx, const kr_csr_view *A,
                                      void **out)
{
    hyb_gpu *m = (hyb_gpu *)calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_hyb_dev h;
    kr_status st = kr_hyb_dev_build(ctx, A, &h);
    if (st != KR_OK) {
        free(m);
        return st;
    }
    *m = hyb_gpu{A->nrows, h.width, h.coo->nnz, h.ell_col, h.ell_val, h.coo};
    *out = m;
    return KR_OK;
}

static int hyb_gpu_arrays(const void *impl, kr_dev_array *a, int max)
{
    const hyb_gpu *m = (const hyb_gpu *)impl;
    size_t cells = (size_t)m->nrows * (size_t)m->width;
    const kr_dev_array ell[] = {{"ell_col", m->ell_col, cells * 4},
                                {"ell_val", m->ell_val, cells * 8}};
    int n = kr_dev_arrays_put(ell, 2, a, max);
    return n + kr_vsr_dev_arrays(m->coo, a + n, max - n);
}

static kr_format_ops make_ops(void)
{
    kr_format_ops o = {}; /* optional members NULL */
    o.name = "hyb";
    o.build = hyb_gpu_build;
    o.apply = hyb_gpu_apply;
    o.bytes = hyb_gpu_bytes;
    o.destroy = hyb_gpu_destroy;
    o.stored = hyb_gpu_stored;
    o.build_device = hyb_gpu_build_device;
    o.arrays = hyb_gpu_arrays;
    o.apply_multi = hyb_gpu_apply_multi;
    return o;
}

static const kr_format_ops hyb_gpu_ops = make_ops();

extern "C" const kr_format_ops *kr_hyb_cuda_ops(void) { return &hyb_gpu_ops; }
