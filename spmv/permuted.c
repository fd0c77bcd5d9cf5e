/* A format built on A's rows in another order (spmv/row_order.h), with
 * the order undone after every apply: the format writes a scratch vector
 * in the permuted order, and a scatter puts row p's result at row
 * order[p] of y (y = t + beta*y; the format already applied alpha), so a
 * caller never sees permuted vectors. One table for both backends; only
 * the scatter has a CUDA kernel (spmv/permuted.cu). */
#include "spmv/permuted.h"

#include "core/error.h"
#include "spmv/row_order.h"

#include <stdlib.h>
#include <string.h>

typedef struct permuted {
    const kr_format_ops *ops; /* the format, built on the permuted rows */
    void *impl;
    const char *order_name; /* a kr_permute_names() string */
    int32_t nrows;
    int32_t *order_host; /* order[p] = A's row at position p */
    int32_t *order;      /* the same in backend memory        */
    double *scratch;     /* backend memory, scratch_cap doubles */
    size_t scratch_cap;
    double order_seconds;
} permuted;

/* B = A's rows in the order of `order` (values and columns copied). */
static kr_status permute_rows(kr_ctx *ctx, const kr_csr *A,
                              const int32_t *order, kr_csr *B)
{
    KR_TRY(kr_csr_alloc(ctx, A->nrows, A->ncols, A->nnz, B));
    B->rowptr[0] = 0;
    for (int32_t p = 0; p < A->nrows; p++) {
        int32_t r = order[p], beg = A->rowptr[r];
        int32_t len = A->rowptr[r + 1] - beg, at = B->rowptr[p];
        memcpy(B->colind + at, A->colind + beg, (size_t)len * 4);
        memcpy(B->val + at, A->val + beg, (size_t)len * 8);
        B->rowptr[p + 1] = at + len;
    }
    return KR_OK;
}

static void permuted_destroy(kr_ctx *ctx, void *impl)
{
    permuted *m = impl;
    if (!m) return;
    if (m->impl) m->ops->destroy(ctx, m->impl);
    ctx->ops->release(ctx, m->order);
    ctx->ops->release(ctx, m->scratch);
    free(m->order_host);
    free(m);
}

static kr_status grow_scratch(kr_ctx *ctx, permuted *m, size_t doubles)
{
    if (doubles <= m->scratch_cap) return KR_OK;
    ctx->ops->release(ctx, m->scratch);
    m->scratch = NULL;
    m->scratch_cap = 0;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&m->scratch, doubles * 8));
    m->scratch_cap = doubles;
    return KR_OK;
}

/* The order, its copy in backend memory, and the SpMV's scratch. */
static kr_status make_order(kr_ctx *ctx, const kr_csr *A, permuted *m)
{
    size_t rows = (size_t)A->nrows + 1;
    m->order_host = malloc(rows * sizeof *m->order_host);
    if (!m->order_host) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    double t0 = kr_wtime();
    KR_TRY(kr_row_order(ctx, A, m->order_name, m->order_host));
    m->order_seconds = kr_wtime() - t0;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&m->order, rows * 4));
    KR_TRY(
        ctx->ops->upload(ctx, m->order, m->order_host, (size_t)A->nrows * 4));
    return grow_scratch(ctx, m, rows);
}

kr_status kr_permuted_build(kr_ctx *ctx, const kr_csr *A,
                            const kr_format_ops *ops, const char *order_name,
                            void **out)
{
    permuted *m = calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    m->ops = ops;
    m->order_name = order_name;
    m->nrows = A->nrows;
    kr_csr B = {0};
    kr_status st = make_order(ctx, A, m);
    if (st == KR_OK) st = permute_rows(ctx, A, m->order_host, &B);
    if (st == KR_OK) st = ops->build(ctx, &B, &m->impl);
    kr_csr_free(&B);
    if (st != KR_OK) {
        permuted_destroy(ctx, m);
        return st;
    }
    *out = m;
    return KR_OK;
}

/* dst[order[p]*k + c] = src[p*k + c] + beta*dst[...], beta 0 overwrites */
static kr_status scatter(kr_ctx *ctx, const permuted *m, int32_t k,
                         const double *src, double beta, double *dst)
{
    if (kr_ctx_device(ctx) == KR_DEVICE_CUDA)
        return kr_permuted_scatter_cuda(ctx, m->nrows, k, m->order, src, beta,
                                        dst);
    int threads = (int64_t)m->nrows * k < 50000 ? 1 : kr_ctx_threads(ctx);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int32_t p = 0; p < m->nrows; p++) {
        const double *s = src + (size_t)p * k;
        double *d = dst + (size_t)m->order[p] * k;
        for (int32_t c = 0; c < k; c++)
            d[c] = beta == 0.0 ? s[c] : s[c] + beta * d[c];
    }
    return KR_OK;
}

static kr_status permuted_apply(kr_ctx *ctx, void *impl, double alpha,
                                const double *x, double beta, double *y)
{
    permuted *m = impl;
    KR_TRY(m->ops->apply(ctx, m->impl, alpha, x, 0.0, m->scratch));
    return scatter(ctx, m, 1, m->scratch, beta, y);
}

static kr_status permuted_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                      const double *X, double *Y)
{
    permuted *m = impl;
    if (!m->ops->apply_multi)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "format %s has no multi-column kernel on this backend",
                       m->ops->name);
    KR_TRY(grow_scratch(ctx, m, (size_t)m->nrows * k + 1));
    KR_TRY(m->ops->apply_multi(ctx, m->impl, k, X, m->scratch));
    return scatter(ctx, m, k, m->scratch, 0.0, Y);
}

static kr_status permuted_update_values(kr_ctx *ctx, void *impl,
                                        const kr_csr *A)
{
    permuted *m = impl;
    kr_csr B = {0};
    kr_status st = permute_rows(ctx, A, m->order_host, &B);
    if (st == KR_OK) st = kr_format_update_values(ctx, m->ops, &m->impl, &B);
    kr_csr_free(&B);
    return st;
}

static size_t permuted_bytes(const void *impl)
{
    const permuted *m = impl;
    return m->ops->bytes(m->impl) + ((size_t)m->nrows + 1) * 4 +
           m->scratch_cap * 8;
}

static int64_t permuted_stored(const void *impl)
{
    const permuted *m = impl;
    return m->ops->stored(m->impl);
}

static const char *permuted_chosen(const void *impl)
{
    const permuted *m = impl;
    return m->ops->chosen ? m->ops->chosen(m->impl) : m->ops->name;
}

static const char *permuted_reason(const void *impl)
{
    const permuted *m = impl;
    return m->ops->reason ? m->ops->reason(m->impl) : "";
}

/* build is NULL: kr_permuted_build takes the order's name; update_values
 * is always set, so kr_format_update_values never calls build. csr_view
 * is NULL: the rows held are not A's. */
const kr_format_ops kr_permuted_ops = {
    .name = "permuted",
    .apply = permuted_apply,
    .bytes = permuted_bytes,
    .destroy = permuted_destroy,
    .stored = permuted_stored,
    .chosen = permuted_chosen,
    .reason = permuted_reason,
    .update_values = permuted_update_values,
    .apply_multi = permuted_apply_multi,
};

const char *kr_permuted_order_name(const void *impl)
{
    return ((const permuted *)impl)->order_name;
}

double kr_permuted_order_seconds(const void *impl)
{
    return ((const permuted *)impl)->order_seconds;
}

const int32_t *kr_permuted_order(const void *impl)
{
    return ((const permuted *)impl)->order_host;
}
