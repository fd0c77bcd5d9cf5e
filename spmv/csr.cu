/* CSR on the GPU through cuSPARSE's generic SpMV: the baseline every other
 * format is measured against. Descriptors and the work buffer are made in
 * build; apply only points the vector descriptors at x and y. */
#include "core/cuda.h"
#include "core/vec.h"
#include "spmv/format.h"

#include <stdlib.h>

typedef struct csr_gpu {
    int32_t nrows, ncols, nnz;
    int32_t *rowptr, *colind;
    double *val;
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t x, y;
    void *buffer;
    size_t buffer_bytes;
    int borrowed; /* the arrays are the kr_matrix's device CSR (devbuild) */
    /* cusparseSpMM's dense descriptors for spmm_k columns (0: none yet)
     * and its work buffer */
    cusparseDnMatDescr_t X, Y;
    int32_t spmm_k;
    void *spmm_buffer;
    size_t spmm_buffer_bytes;
} csr_gpu;

/* ALG1 ran faster than ALG2 on every matrix of the default benchmark set
 * on the H200 (ALG2 took 1.30x as long, geometric mean over the large
 * ones; bench/results/cusparse-alg-h200-2026-11-22.md). Its sums are not
 * the same bit for bit from run to run (GMRES over csr on poisson2d:40,
 * whose restarts use it, ended in different last bits of x on an H100,
 * 2026-11-27), where ALG2's are documented to be; csr is the cuSPARSE
 * baseline, so it runs cuSPARSE's fastest. */
static const cusparseSpMVAlg_t SPMV_ALG = CUSPARSE_SPMV_CSR_ALG1;
/* cuSPARSE's documentation recommends ALG2 for row-major dense matrices
 * (ALG1 is written for column-major ones); both are deterministic. */
static const cusparseSpMMAlg_t SPMM_ALG = CUSPARSE_SPMM_CSR_ALG2;

static void csr_gpu_destroy(kr_ctx *ctx, void *impl)
{
    csr_gpu *m = (csr_gpu *)impl;
    if (!m) return;
    if (m->mat) cusparseDestroySpMat(m->mat);
    if (m->x) cusparseDestroyDnVec(m->x);
    if (m->y) cusparseDestroyDnVec(m->y);
    if (m->X) cusparseDestroyDnMat(m->X);
    if (m->Y) cusparseDestroyDnMat(m->Y);
    kr_dev_free(ctx, m->spmm_buffer);
    if (!m->borrowed) {
        kr_dev_free(ctx, m->rowptr);
        kr_dev_free(ctx, m->colind);
        kr_dev_free(ctx, m->val);
    }
    kr_dev_free(ctx, m->buffer);
    free(m);
}

static kr_status upload(kr_ctx *ctx, csr_gpu *m, const kr_csr *A)
{
    KR_TRY(kr_dev_upload_new(ctx, A->rowptr, ((size_t)A->nrows + 1) * 4,
                             (void **)&m->rowptr));
    KR_TRY(kr_dev_upload_new(ctx, A->colind, (size_t)A->nnz * 4,
                             (void **)&m->colind));
    KR_TRY(
        kr_dev_upload_new(ctx, A->val, (size_t)A->nnz * 8, (void **)&m->val));
    return KR_OK;
}

static kr_status describe(kr_ctx *ctx, csr_gpu *m)
{
    KR_CUSPARSE_TRY(ctx,
                    cusparseCreateCsr(&m->mat, m->nrows, m->ncols, m->nnz,
                                      m->rowptr, m->colind, m->val,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    /* x and y point at the scratch until apply names the real vectors. */
    double *any = kr_cuda(ctx)->d_scratch;
    KR_CUSPARSE_TRY(ctx, cusparseCreateDnVec(&m->x, m->ncols, any, CUDA_R_64F));
    KR_CUSPARSE_TRY(ctx, cusparseCreateDnVec(&m->y, m->nrows, any, CUDA_R_64F));
    const double one = 1.0, zero = 0.0;
    KR_CUSPARSE_TRY(
        ctx, cusparseSpMV_bufferSize(kr_cuda(ctx)->cusparse,
                                     CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                     m->mat, m->x, &zero, m->y, CUDA_R_64F,
                                     SPMV_ALG, &m->buffer_bytes));
    return ctx->ops->alloc(ctx, &m->buffer, m->buffer_bytes);
}

static kr_status csr_gpu_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    csr_gpu *m = (csr_gpu *)calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    m->nrows = A->nrows;
    m->ncols = A->ncols;
    m->nnz = A->nnz;
    kr_status st = upload(ctx, m, A);
    if (st == KR_OK && A->nrows > 0 && A->ncols > 0) st = describe(ctx, m);
    if (st != KR_OK) {
        csr_gpu_destroy(ctx, m);
        return st;
    }
    *out = m;
    return KR_OK;
}

static kr_status csr_gpu_apply(kr_ctx *ctx, void *impl, double alpha,
                               const double *x, double beta, double *y)
{
    csr_gpu *m = (csr_gpu *)impl;
    if (m->nrows == 0) return KR_OK;
    if (m->ncols == 0 || m->nnz == 0) /* y = beta*y; beta = 0 overwrites */
        return beta == 0.0 ? ctx->ops->fill(ctx, m->nrows, 0.0, y)
                           : ctx->ops->axpby(ctx, m->nrows, beta, y, 0.0, y);
    KR_CUSPARSE_TRY(ctx, cusparseDnVecSetValues(m->x, (void *)x));
    KR_CUSPARSE_TRY(ctx, cusparseDnVecSetValues(m->y, y));
    KR_CUSPARSE_TRY(ctx, cusparseSpMV(kr_cuda(ctx)->cusparse,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                      m->mat, m->x, &beta, m->y, CUDA_R_64F,
                                      SPMV_ALG, m->buffer));
    return KR_OK;
}

/* Row-major descriptors of X (ncols x k) and Y (nrows x k) on the
 * scratch, and a work buffer large enough for k columns. */
static kr_status describe_multi(kr_ctx *ctx, csr_gpu *m, int32_t k)
{
    if (m->spmm_k == k) return KR_OK;
    if (m->X) cusparseDestroyDnMat(m->X);
    if (m->Y) cusparseDestroyDnMat(m->Y);
    m->X = m->Y = NULL;
    m->spmm_k = 0;
    double *any = kr_cuda(ctx)->d_scratch;
    KR_CUSPARSE_TRY(ctx, cusparseCreateDnMat(&m->X, m->ncols, k, k, any,
                                             CUDA_R_64F, CUSPARSE_ORDER_ROW));
    KR_CUSPARSE_TRY(ctx, cusparseCreateDnMat(&m->Y, m->nrows, k, k, any,
                                             CUDA_R_64F, CUSPARSE_ORDER_ROW));
    const double one = 1.0, zero = 0.0;
    size_t need = 0;
    KR_CUSPARSE_TRY(ctx, cusparseSpMM_bufferSize(
                             kr_cuda(ctx)->cusparse,
                             CUSPARSE_OPERATION_NON_TRANSPOSE,
                             CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->mat,
                             m->X, &zero, m->Y, CUDA_R_64F, SPMM_ALG, &need));
    if (need > m->spmm_buffer_bytes) {
        kr_dev_free(ctx, m->spmm_buffer);
        m->spmm_buffer = NULL;
        m->spmm_buffer_bytes = 0;
        KR_TRY(ctx->ops->alloc(ctx, &m->spmm_buffer, need));
        m->spmm_buffer_bytes = need;
    }
    m->spmm_k = k;
    return KR_OK;
}

/* Y = A X by cusparseSpMM: the baseline of the formats' own SpMMs. */
static kr_status csr_gpu_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                     const double *X, double *Y)
{
    csr_gpu *m = (csr_gpu *)impl;
    if (m->nrows == 0) return KR_OK;
    if (m->ncols == 0 || m->nnz == 0)
        return ctx->ops->fill(ctx, m->nrows * k, 0.0, Y);
    KR_TRY(describe_multi(ctx, m, k));
    KR_CUSPARSE_TRY(ctx, cusparseDnMatSetValues(m->X, (void *)X));
    KR_CUSPARSE_TRY(ctx, cusparseDnMatSetValues(m->Y, Y));
    const double one = 1.0, zero = 0.0;
    KR_CUSPARSE_TRY(ctx, cusparseSpMM(kr_cuda(ctx)->cusparse,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                      m->mat, m->X, &zero, m->Y, CUDA_R_64F,
                                      SPMM_ALG, m->spmm_buffer));
    return KR_OK;
}

static size_t csr_gpu_bytes(const void *impl)
{
    const csr_gpu *m = (const csr_gpu *)impl;
    return ((size_t)m->nrows + 1) * 4 + (size_t)m->nnz * 12 + m->buffer_bytes;
}

static int64_t csr_gpu_stored(const void *impl)
{
    return ((const csr_gpu *)impl)->nnz;
}

/* the values lie in A's order: one upload over the old ones */
static kr_status csr_gpu_update_values(kr_ctx *ctx, void *impl, const kr_csr *A)
{
    csr_gpu *m = (csr_gpu *)impl;
    if (m->nnz == 0) return KR_OK;
    return ctx->ops->upload(ctx, m->val, A->val, (size_t)m->nnz * 8);
}

static int csr_gpu_view(const void *impl, kr_csr_view *v)
{
    const csr_gpu *m = (const csr_gpu *)impl;
    *v = kr_csr_view{m->nrows, m->ncols, m->nnz, m->rowptr, m->colind, m->val};
    return 1;
}

/* KR_BUILD_DEVICE: A is already CSR in device memory, owned by the
 * kr_matrix for as long as this format lives, so it is used in place (A
 * is held once). */
static kr_status csr_gpu_build_device(kr_ctx *ctx, const kr_csr_view *A,
                                      void **out)
{
    csr_gpu *m = (csr_gpu *)calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    m->nrows = A->nrows;
    m->ncols = A->ncols;
    m->nnz = A->nnz;
    m->rowptr = (int32_t *)A->rowptr;
    m->colind = (int32_t *)A->colind;
    m->val = (double *)A->val;
    m->borrowed = 1;
    kr_status st = A->nrows > 0 && A->ncols > 0 ? describe(ctx, m) : KR_OK;
    if (st != KR_OK) {
        csr_gpu_destroy(ctx, m);
        return st;
    }
    *out = m;
    return KR_OK;
}

static int csr_gpu_arrays(const void *impl, kr_dev_array *a, int max)
{
    const csr_gpu *m = (const csr_gpu *)impl;
    const kr_dev_array all[] = {
        {"rowptr", m->rowptr, ((size_t)m->nrows + 1) * 4},
        {"colind", m->colind, (size_t)m->nnz * 4},
        {"val", m->val, (size_t)m->nnz * 8}};
    return kr_dev_arrays_put(all, 3, a, max);
}

static kr_format_ops make_ops(void)
{
    kr_format_ops o = {}; /* optional members NULL */
    o.csr_view = csr_gpu_view;
    o.stored = csr_gpu_stored;
    o.update_values = csr_gpu_update_values;
    o.name = "csr";
    o.build = csr_gpu_build;
    o.apply = csr_gpu_apply;
    o.bytes = csr_gpu_bytes;
    o.destroy = csr_gpu_destroy;
    o.build_device = csr_gpu_build_device;
    o.arrays = csr_gpu_arrays;
    o.apply_multi = csr_gpu_apply_multi;
    return o;
}

static const kr_format_ops csr_gpu_ops = make_ops();

const kr_format_ops *kr_csr_cuda_ops(void) { return &csr_gpu_ops; }
