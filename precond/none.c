/* The identity preconditioner, z = r. */
#include "core/error.h"
#include "precond/precond.h"

static kr_status none_setup(kr_ctx *ctx, const kr_csr *A,
                            const kr_csr_view *dev, const kr_precond_options *o,
                            void **impl)
{
    (void)ctx, (void)A, (void)dev, (void)o;
    *impl = NULL;
    return KR_OK;
}

static kr_status none_apply(kr_ctx *ctx, void *impl, int32_t n, const double *r,
                            double *z)
{
    (void)impl;
    return ctx->ops->copy(ctx, z, r, (size_t)n * sizeof(double));
}

static kr_status none_apply_multi(kr_ctx *ctx, void *impl, int32_t n, int k,
                                  const double *R, double *Z)
{
    (void)impl;
    return ctx->ops->copy(ctx, Z, R, (size_t)n * (size_t)k * sizeof(double));
}

static void none_destroy(kr_ctx *ctx, void *impl)
{
    (void)ctx;
    (void)impl;
}

static int none_diagonal(void *impl, const double **d)
{
    (void)impl;
    *d = NULL;
    return 1;
}

const kr_precond_ops kr_precond_none_ops = {
    .name = "none",
    .summary = "no preconditioner (identity)",
    .setup = none_setup,
    .apply = none_apply,
    .destroy = none_destroy,
    .diagonal = none_diagonal,
    .apply_multi = none_apply_multi,
};
