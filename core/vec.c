/* Public vector handles over backend memory. */
#include "core/vec.h"

#include "core/error.h"

#include <stdlib.h>

kr_status kr_dev_zeros(kr_ctx *ctx, size_t count, double **p)
{
    *p = NULL;
    KR_TRY(ctx->ops->alloc(ctx, (void **)p, count * sizeof(double)));
    kr_status st = KR_OK;
    /* fill takes int32 lengths: zero larger blocks in pieces */
    for (size_t off = 0; st == KR_OK && off < count; off += INT32_MAX) {
        size_t len = count - off < INT32_MAX ? count - off : INT32_MAX;
        st = ctx->ops->fill(ctx, (int32_t)len, 0.0, *p + off);
    }
    if (st != KR_OK) {
        ctx->ops->release(ctx, *p);
        *p = NULL;
    }
    return st;
}

void kr_dev_free(kr_ctx *ctx, void *p)
{
    if (ctx && p) ctx->ops->release(ctx, p);
}

kr_status kr_dev_upload_new(kr_ctx *ctx, const void *host, size_t bytes,
                            void **p)
{
    *p = NULL;
    KR_TRY(ctx->ops->alloc(ctx, p, bytes));
    kr_status st = bytes ? ctx->ops->upload(ctx, *p, host, bytes) : KR_OK;
    if (st != KR_OK) {
        ctx->ops->release(ctx, *p);
        *p = NULL;
    }
    return st;
}

kr_status kr_vec_create(kr_ctx *ctx, int32_t n, kr_vec **out)
{
    if (!ctx) return KR_ERR_ARG;
    if (!out) return kr_null_arg(ctx, "kr_vec_create", "the output v");
    *out = NULL;
    if (n < 0)
        return kr_fail(ctx, KR_ERR_ARG, "kr_vec_create: negative size %d", n);
    kr_vec *v = calloc(1, sizeof *v);
    if (!v) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    v->ctx = ctx;
    v->n = n;
    v->owned = 1;
    kr_status st = kr_dev_zeros(ctx, (size_t)n, &v->data);
    if (st != KR_OK) {
        free(v);
        return st;
    }
    *out = v;
    return KR_OK;
}

void kr_vec_destroy(kr_vec *v)
{
    if (!v) return;
    if (v->owned) kr_dev_free(v->ctx, v->data);
    free(v);
}

int32_t kr_vec_size(const kr_vec *v) { return v ? v->n : 0; }

kr_status kr_vec_upload(kr_vec *v, const double *host)
{
    if (!v) return KR_ERR_ARG;
    if (!host && v->n > 0)
        return kr_null_arg(v->ctx, "kr_vec_upload", "the host array");
    if (v->n == 0) return KR_OK;
    return v->ctx->ops->upload(v->ctx, v->data, host,
                               (size_t)v->n * sizeof(double));
}

kr_status kr_vec_download(const kr_vec *v, double *host)
{
    if (!v) return KR_ERR_ARG;
    if (!host && v->n > 0)
        return kr_null_arg(v->ctx, "kr_vec_download", "the host array");
    if (v->n == 0) return KR_OK;
    return v->ctx->ops->download(v->ctx, host, v->data,
                                 (size_t)v->n * sizeof(double));
}

kr_status kr_vec_fill(kr_vec *v, double value)
{
    if (!v) return KR_ERR_ARG;
    return v->ctx->ops->fill(v->ctx, v->n, value, v->data);
}

double *kr_vec_data(const kr_vec *v) { return v ? v->data : NULL; }
