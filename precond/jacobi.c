/* Scalar Jacobi, z = D^{-1} r. The inverse diagonal is formed once, on the
 * host (or, for a device-built matrix, on the GPU from its CSR), and
 * applied by the backend's pointwise product, so it runs on every backend
 * unchanged. */
#include "core/error.h"
#include "core/vec.h"
#include "precond/jacobi_dev.h"
#include "precond/precond.h"

#include <math.h>
#include <stdlib.h>

static kr_status zero_diagonal(kr_ctx *ctx, int32_t i)
{
    return kr_fail(ctx, KR_ERR_SINGULAR,
                   "jacobi: the diagonal entry of row %d (1-based) is "
                   "zero or missing",
                   i + 1);
}

/* d[i] = 1 / a_ii, or the failing row's index in *bad_row. */
static kr_status invert_diagonal(kr_ctx *ctx, const kr_csr *A, double *d)
{
    for (int32_t i = 0; i < A->nrows; i++) {
        double aii = 0.0;
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (A->colind[k] == i) aii = A->val[k];
        if (aii == 0.0) return zero_diagonal(ctx, i);
        d[i] = 1.0 / aii;
    }
    return KR_OK;
}

/* The inverse diagonal into dev (allocated there when *dev is NULL). */
static kr_status upload_inverse(kr_ctx *ctx, const kr_csr *A, void **dev)
{
    if (A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG,
                       "jacobi: matrix is %d x %d, not "
                       "square",
                       A->nrows, A->ncols);
    size_t bytes = (size_t)A->nrows * sizeof(double);
    double *d = malloc(bytes + sizeof(double));
    if (!d) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = invert_diagonal(ctx, A, d);
    if (st == KR_OK && !*dev)
        st = kr_dev_upload_new(ctx, d, bytes, dev);
    else if (st == KR_OK && bytes)
        st = ctx->ops->upload(ctx, *dev, d, bytes);
    free(d);
    return st;
}

/* A device build (KR_BUILD_DEVICE) with the matrix's CSR on the GPU: the
 * inverse by a kernel there, nothing uploaded. */
static kr_status inverse_on_device(kr_ctx *ctx, const kr_csr_view *dev,
                                   void **impl)
{
    KR_TRY(ctx->ops->alloc(ctx, impl, (size_t)dev->nrows * sizeof(double)));
    int32_t bad = -1;
    kr_status st = kr_jacobi_dev_inverse(ctx, dev, *impl, &bad);
    if (st == KR_OK && bad >= 0) st = zero_diagonal(ctx, bad);
    if (st != KR_OK) {
        kr_dev_free(ctx, *impl);
        *impl = NULL;
    }
    return st;
}

/* The diagonal is read on the host, unless a device build left A's CSR on
 * the GPU. */
static kr_status jacobi_setup(kr_ctx *ctx, const kr_csr *A,
                              const kr_csr_view *dev,
                              const kr_precond_options *o, void **impl)
{
    (void)o;
    *impl = NULL;
    if (dev && ctx->device == KR_DEVICE_CUDA && ctx->build != KR_BUILD_HOST)
        return inverse_on_device(ctx, dev, impl); /* A is not read */
    if (dev) KR_TRY(kr_csr_check(ctx, A));        /* see kr_precond_ops.setup */
    return upload_inverse(ctx, A, impl);
}

/* same n (checked by the caller): the new inverse over the old one */
static kr_status jacobi_update_values(kr_ctx *ctx, void *impl, const kr_csr *A)
{
    return upload_inverse(ctx, A, &impl);
}

static kr_status jacobi_apply(kr_ctx *ctx, void *impl, int32_t n,
                              const double *r, double *z)
{
    return ctx->ops->pointwise_mult(ctx, n, impl, r, z);
}

static kr_status jacobi_apply_multi(kr_ctx *ctx, void *impl, int32_t n, int k,
                                    const double *R, double *Z)
{
    return ctx->ops->mpointwise(ctx, n, k, impl, R, Z);
}

static void jacobi_destroy(kr_ctx *ctx, void *impl) { kr_dev_free(ctx, impl); }

static int jacobi_diagonal(void *impl, const double **d)
{
    *d = impl;
    return 1;
}

const kr_precond_ops kr_precond_jacobi_ops = {
    .name = "jacobi",
    .summary = "scalar Jacobi, z = D^-1 r (a zero diagonal is an error)",
    .setup = jacobi_setup,
    .apply = jacobi_apply,
    .destroy = jacobi_destroy,
    .diagonal = jacobi_diagonal,
    .apply_multi = jacobi_apply_multi,
    .update_values = jacobi_update_values,
};
