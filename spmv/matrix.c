/* The public matrix handle: picks the format's table for the context's
 * backend once, then every apply goes straight to it. */
#include "core/csr.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/vec.h"
#include "spmv/devbuild.h"
#include "spmv/format.h"
#include "spmv/permuted.h"
#include "spmv/predict.h"
#include "spmv/row_order.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kr_status unknown_format(kr_ctx *ctx, const char *format)
{
    char list[256];
    kr_join_names(kr_format_names(), list, sizeof list);
    return kr_fail(ctx, KR_ERR_ARG, "unknown format '%s' (valid: %s)",
                   format ? format : "(null)", list);
}

static kr_status pick_ops(kr_ctx *ctx, const char *format,
                          const kr_format_ops **ops)
{
    if (!kr_format_find(format)) return unknown_format(ctx, format);
    *ops = kr_format_backend_ops(ctx, format);
    if (!*ops)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "format '%s' has no implementation on %s", format,
                       ctx->device_name);
    return KR_OK;
}

/* KR_BUILD_DEVICE (or KR_BUILD_AUTO from KR_BUILD_AUTO_MIN_NNZ nonzeros)
 * on a GPU context, for a format with a device build. */
static int builds_on_device(const kr_matrix *M, const kr_csr *A)
{
    kr_build b = M->ctx->build;
    int device = b == KR_BUILD_DEVICE ||
                 (b == KR_BUILD_AUTO && A->nnz >= KR_BUILD_AUTO_MIN_NNZ);
    return M->ctx->device == KR_DEVICE_CUDA && device && M->ops->build_device;
}

/* kr_csr_check's row checks on the uploaded copy (a kernel, where the
 * host's pass over 28M nonzeros took about 5 ms of a 25 ms setup); a
 * failing row is checked again on the host for the same message. */
static kr_status check_on_device(kr_ctx *ctx, const kr_csr *A,
                                 const kr_csr_view *dev)
{
    int32_t bad;
    KR_TRY(kr_dev_csr_first_bad(ctx, dev, &bad));
    if (bad >= A->nrows) return KR_OK;
    KR_TRY(kr_csr_check_row(ctx, A, bad));
    return kr_fail(ctx, KR_ERR_DEVICE,
                   "CSR row %d failed the device's check but not the host's "
                   "(internal error)",
                   bad + 1);
}

/* A's CSR uploaded once and kept in M->dev, its rows checked there unless
 * the host checked them; the format built from it. */
static kr_status build_on_device(kr_matrix *M, const kr_csr *A)
{
    kr_ctx *ctx = M->ctx;
    double t0 = kr_wtime();
    KR_TRY(kr_dev_csr_upload(ctx, A, &M->dev));
    M->upload_seconds = kr_wtime() - t0;
    kr_status st = M->host_checked ? KR_OK : check_on_device(ctx, A, &M->dev);
    if (st == KR_OK) st = M->ops->build_device(ctx, &M->dev, &M->impl);
    if (st == KR_OK) st = kr_dev_sync(ctx); /* a build stage that ended */
    if (st != KR_OK) {
        if (M->impl) M->ops->destroy(ctx, M->impl);
        M->impl = NULL;
        kr_dev_csr_free(ctx, &M->dev);
    }
    return st;
}

void kr_matrix_options_default(kr_matrix_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

/* The caller's options, only the fields its size covers, over defaults. */
static kr_status read_options(kr_ctx *ctx, const kr_matrix_options *o,
                              kr_matrix_options *out)
{
    kr_matrix_options_default(out);
    if (!o) return KR_OK;
    if (o->size < offsetof(kr_matrix_options, format) || o->size > sizeof *o)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_matrix_create_opts: options size %zu is not one "
                       "this library knows (set it with "
                       "kr_matrix_options_default)",
                       o->size);
    memcpy(out, o, o->size);
    out->size = sizeof *out;
    return KR_OK;
}

static kr_status check_permute(kr_ctx *ctx, const char *name)
{
    if (!name || kr_row_order_known(name)) return KR_OK;
    char list[256];
    kr_join_names(kr_permute_names(), list, sizeof list);
    return kr_fail(ctx, KR_ERR_ARG, "unknown row order '%s' (valid: %s)", name,
                   list);
}

static int plain_order(const char *permute)
{
    return !permute || strcmp(permute, "none") == 0;
}

static kr_status build_impl(kr_ctx *ctx, const kr_csr *A,
                            const kr_format_ops *ops, const char *permute,
                            kr_matrix *M)
{
    if (plain_order(permute)) {
        M->ops = ops; /* a row order builds on the host (kr_permuted_ops) */
        return builds_on_device(M, A) ? build_on_device(M, A)
                                      : ops->build(ctx, A, &M->impl);
    }
    M->ops = &kr_permuted_ops;
    return kr_permuted_build(ctx, A, ops, permute, &M->impl);
}

/* permute "auto": the model's order (and format, when not given) for A. */
static kr_status resolve_auto(kr_ctx *ctx, const kr_csr *A,
                              kr_matrix_options *o, kr_prediction *pick)
{
    pick->reason[0] = '\0';
    if (!o->permute || strcmp(o->permute, "auto") != 0) return KR_OK;
    KR_TRY(kr_predict_check(ctx, &kr_row_order_model));
    KR_TRY(kr_predict_choice(ctx, &kr_row_order_model, A,
                             o->columns > 0 ? o->columns : 1, o->format, pick));
    o->format = pick->format;
    o->permute = pick->order;
    return KR_OK;
}

int kr_row_order_model_trained(void) { return kr_row_order_model.nnodes > 0; }

/* Format "auto" for SpMMs (columns > 1) on the GPU, in A's order: the
 * trained model (GPU SpMM timings) picks the format; the SpMV heuristics
 * of spmv/auto.c stay for one column and for the CPU. */
static int model_picks_format(const kr_ctx *ctx, const kr_matrix_options *o)
{
    const char *f = o->format ? o->format : KR_FORMAT_DEFAULT;
    return !strcmp(f, "auto") && o->columns > 1 &&
           ctx->device == KR_DEVICE_CUDA && kr_row_order_model_trained() &&
           (!o->permute || !strcmp(o->permute, "none"));
}

static kr_status resolve_format(kr_ctx *ctx, const kr_csr *A,
                                kr_matrix_options *o, char *why, size_t len)
{
    why[0] = '\0';
    if (!model_picks_format(ctx, o)) return KR_OK;
    kr_prediction pick;
    KR_TRY(kr_predict_choice(ctx, &kr_row_order_model, A, o->columns, NULL,
                             &pick));
    o->format = pick.format;
    snprintf(why, len, "%s%s", pick.reason,
             strcmp(pick.order, "none") ? "; built in A's order (--permute "
                                          "auto applies the model's order)"
                                        : "");
    return KR_OK;
}

kr_status kr_matrix_create_opts(kr_ctx *ctx, const kr_csr *A,
                                const kr_matrix_options *opt, kr_matrix **out)
{
    if (!ctx) return KR_ERR_ARG;
    if (!A) return kr_null_arg(ctx, "kr_matrix_create", "the CSR matrix A");
    if (!out) return kr_null_arg(ctx, "kr_matrix_create", "the output M");
    *out = NULL;
    kr_matrix_options o;
    KR_TRY(read_options(ctx, opt, &o));
    kr_prediction pick;
    char format_why[600];
    const char *asked = o.format ? o.format : KR_FORMAT_DEFAULT;
    /* once, before the model's features read every index; a device build
     * that no model reads first checks the rows on the GPU */
    int early = (o.permute && !strcmp(o.permute, "auto")) ||
                model_picks_format(ctx, &o);
    KR_TRY(early ? kr_csr_check(ctx, A) : kr_csr_check_head(ctx, A));
    KR_TRY(resolve_auto(ctx, A, &o, &pick));
    KR_TRY(resolve_format(ctx, A, &o, format_why, sizeof format_why));
    const char *format = o.format ? o.format : KR_FORMAT_DEFAULT;
    const kr_format_ops *ops;
    KR_TRY(pick_ops(ctx, format, &ops));
    KR_TRY(check_permute(ctx, o.permute));
    char what[128];
    snprintf(what, sizeof what, "building the matrix in format %s", format);
    KR_TRY(kr_host_mem_check(ctx, kr_csr_bytes(A->nrows, A->nnz), what));
    kr_matrix *M = calloc(1, sizeof *M);
    if (!M) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    M->ctx = ctx;
    M->ops = ops;
    M->host_checked = early;
    kr_status st = KR_OK;
    if (!early && !(plain_order(o.permute) && builds_on_device(M, A))) {
        st = kr_csr_check(ctx, A);
        M->host_checked = 1;
    }
    double t0 = kr_wtime();
    if (st == KR_OK) st = build_impl(ctx, A, ops, o.permute, M);
    if (st != KR_OK) {
        free(M);
        return st;
    }
    M->build_seconds = kr_wtime() - t0;
    M->requested = format_why[0] ? asked : ops->name;
    snprintf(M->permute_reason, sizeof M->permute_reason, "%s", pick.reason);
    snprintf(M->format_reason, sizeof M->format_reason, "%s", format_why);
    M->nrows = A->nrows;
    M->ncols = A->ncols;
    M->nnz = A->nnz;
    /* host passes: only where the persistent ops may run */
    M->longest_row = M->long_rows = -1;
    if (A->nrows <= KR_PERSIST_MAX_ROWS) {
        kr_row_stats rows;
        kr_csr_row_stats(A, &rows);
        M->longest_row = rows.max;
        M->long_rows = kr_csr_rows_longer(A, KR_PERSIST_MAX_SKEW * rows.mean);
    }
    /* a host pass over the pattern costs a device build more than its
     * kernels: its fingerprint waits for kr_matrix_update_values */
    M->pattern_later = M->dev.rowptr != NULL;
    if (!M->pattern_later) M->pattern = kr_csr_pattern_hash(A);
    *out = M;
    return KR_OK;
}

kr_status kr_matrix_create(kr_ctx *ctx, const kr_csr *A, const char *format,
                           kr_matrix **out)
{
    kr_matrix_options o;
    kr_matrix_options_default(&o);
    o.format = format;
    return kr_matrix_create_opts(ctx, A, &o, out);
}

const char *kr_matrix_permutation(const kr_matrix *M)
{
    return M && M->ops == &kr_permuted_ops ? kr_permuted_order_name(M->impl)
                                           : "none";
}

const char *kr_matrix_permutation_reason(const kr_matrix *M)
{
    return M ? M->permute_reason : "";
}

double kr_matrix_permute_seconds(const kr_matrix *M)
{
    return M && M->ops == &kr_permuted_ops ? kr_permuted_order_seconds(M->impl)
                                           : 0.0;
}

uint64_t kr_csr_pattern_hash(const kr_csr *A)
{
    /* FNV-1a over the sizes and the index arrays, 32-bit words */
    uint64_t h = 0xcbf29ce484222325ull;
    uint32_t head[3] = {(uint32_t)A->nrows, (uint32_t)A->ncols,
                        (uint32_t)A->nnz};
    for (int i = 0; i < 3; i++)
        h = (h ^ head[i]) * 0x100000001b3ull;
    for (int32_t i = 0; i <= A->nrows; i++)
        h = (h ^ (uint32_t)A->rowptr[i]) * 0x100000001b3ull;
    for (int32_t k = 0; k < A->nnz; k++)
        h = (h ^ (uint32_t)A->colind[k]) * 0x100000001b3ull;
    return h;
}

kr_status kr_format_update_values(kr_ctx *ctx, const kr_format_ops *ops,
                                  void **impl, const kr_csr *A)
{
    if (ops->update_values) return ops->update_values(ctx, *impl, A);
    void *fresh;
    KR_TRY(ops->build(ctx, A, &fresh));
    ops->destroy(ctx, *impl);
    *impl = fresh;
    return KR_OK;
}

/* The format's own CSR arrays, if it holds its data as CSR. */
static int format_view(const kr_matrix *M, kr_csr_view *v)
{
    return M->ops->csr_view && M->ops->csr_view(M->impl, v);
}

int kr_matrix_backend_csr(const kr_matrix *M, kr_csr_view *v)
{
    if (format_view(M, v)) return 1;
    if (!M->dev.rowptr) return 0;
    *v = M->dev; /* a device build: the CSR it was built from */
    return 1;
}

kr_status kr_matrix_csr_view(const kr_matrix *M, kr_csr_view *v)
{
    if (!M || !v) return KR_ERR_ARG;
    if (kr_matrix_backend_csr(M, v)) return KR_OK;
    return kr_fail(M->ctx, KR_ERR_UNSUPPORTED,
                   "format '%s' on %s holds no plain CSR arrays",
                   kr_matrix_format(M), M->ctx->device_name);
}

/* A device build: the new values over the kept CSR, then the format built
 * from it again (the kept CSR, and so the csr view, stay where they are). */
static kr_status update_on_device(kr_matrix *M, const kr_csr *A)
{
    kr_ctx *ctx = M->ctx;
    KR_TRY(kr_dev_csr_upload_values(ctx, A, &M->dev));
    kr_csr_view v;
    if (format_view(M, &v) && v.val == M->dev.val)
        return kr_dev_sync(ctx); /* it reads the kept CSR: nothing to build */
    void *fresh = NULL;
    KR_TRY(M->ops->build_device(ctx, &M->dev, &fresh));
    M->ops->destroy(ctx, M->impl);
    M->impl = fresh;
    return kr_dev_sync(ctx);
}

/* M's pattern fingerprint; a device build's is taken from the CSR it
 * kept (its pattern never changes) the first time it is needed. */
static kr_status matrix_pattern(kr_matrix *M, uint64_t *h)
{
    kr_ctx *ctx = M->ctx;
    if (M->pattern_later) {
        kr_csr P;
        KR_TRY(kr_csr_alloc(ctx, M->nrows, M->ncols, M->nnz, &P));
        kr_status st = ctx->ops->download(ctx, P.rowptr, M->dev.rowptr,
                                          ((size_t)M->nrows + 1) * 4);
        if (st == KR_OK && M->nnz > 0)
            st = ctx->ops->download(ctx, P.colind, M->dev.colind,
                                    (size_t)M->nnz * 4);
        if (st == KR_OK) M->pattern = kr_csr_pattern_hash(&P);
        kr_csr_free(&P);
        KR_TRY(st);
        M->pattern_later = 0;
    }
    *h = M->pattern;
    return KR_OK;
}

kr_status kr_matrix_update_values(kr_matrix *M, const kr_csr *A)
{
    if (!M || !A)
        return kr_fail(M ? M->ctx : NULL, KR_ERR_ARG,
                       "kr_matrix_update_values: NULL argument");
    kr_ctx *ctx = M->ctx;
    if (kr_matrix_is_user(M))
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "kr_matrix_update_values: a user operator has no "
                       "values to update");
    KR_TRY(kr_csr_check(ctx, A));
    uint64_t pattern = 0;
    if (A->nrows == M->nrows && A->ncols == M->ncols && A->nnz == M->nnz)
        KR_TRY(matrix_pattern(M, &pattern));
    if (A->nrows != M->nrows || A->ncols != M->ncols || A->nnz != M->nnz ||
        kr_csr_pattern_hash(A) != pattern)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_matrix_update_values: the pattern (%d x %d, %d "
                       "nonzeros) differs from the matrix's (%d x %d, %d "
                       "nonzeros, or other positions)",
                       A->nrows, A->ncols, A->nnz, M->nrows, M->ncols, M->nnz);
    double t0 = kr_wtime();
    if (M->dev.rowptr)
        KR_TRY(update_on_device(M, A));
    else
        KR_TRY(kr_format_update_values(ctx, M->ops, &M->impl, A));
    M->build_seconds = kr_wtime() - t0;
    return KR_OK;
}

void kr_matrix_destroy(kr_matrix *M)
{
    if (!M) return;
    M->ops->destroy(M->ctx, M->impl);
    if (M->dev.rowptr) kr_dev_csr_free(M->ctx, &M->dev);
    free(M);
}

kr_status kr_matrix_apply(kr_matrix *M, double alpha, const kr_vec *x,
                          double beta, kr_vec *y)
{
    if (!M) return KR_ERR_ARG;
    if (!x) return kr_null_arg(M->ctx, "kr_matrix_apply", "x");
    if (!y) return kr_null_arg(M->ctx, "kr_matrix_apply", "y");
    if (x == y || x->data == y->data)
        return kr_fail(M->ctx, KR_ERR_ARG,
                       "kr_matrix_apply: x and y are the same vector; y = "
                       "alpha A x + beta y needs distinct vectors");
    if (x->n != M->ncols || y->n != M->nrows)
        return kr_fail(M->ctx, KR_ERR_ARG,
                       "matrix is %d x %d but x has %d and y %d entries",
                       M->nrows, M->ncols, x->n, y->n);
    if (x->ctx != M->ctx || y->ctx != M->ctx)
        return kr_fail(M->ctx, KR_ERR_ARG,
                       "vectors belong to another context than the matrix");
    return M->ops->apply(M->ctx, M->impl, alpha, x->data, beta, y->data);
}

kr_status kr_matrix_apply_multi(kr_matrix *M, int32_t k, const kr_vec *X,
                                kr_vec *Y)
{
    if (!M) return KR_ERR_ARG;
    if (!X) return kr_null_arg(M->ctx, "kr_matrix_apply_multi", "X");
    if (!Y) return kr_null_arg(M->ctx, "kr_matrix_apply_multi", "Y");
    if (k < 1)
        return kr_fail(M->ctx, KR_ERR_ARG,
                       "kr_matrix_apply_multi: k = %d columns; it must be at "
                       "least 1",
                       (int)k);
    if (X == Y || X->data == Y->data)
        return kr_fail(M->ctx, KR_ERR_ARG,
                       "kr_matrix_apply_multi: X and Y are the same vector; "
                       "Y = A X needs distinct vectors");
    if ((int64_t)X->n != (int64_t)M->ncols * k ||
        (int64_t)Y->n != (int64_t)M->nrows * k)
        return kr_fail(M->ctx, KR_ERR_ARG,
                       "matrix is %d x %d and k = %d, so X needs %lld and Y "
                       "%lld entries, but they have %d and %d",
                       M->nrows, M->ncols, (int)k, (long long)M->ncols * k,
                       (long long)M->nrows * k, X->n, Y->n);
    if (X->ctx != M->ctx || Y->ctx != M->ctx)
        return kr_fail(M->ctx, KR_ERR_ARG,
                       "vectors belong to another context than the matrix");
    if (!M->ops->apply_multi)
        return kr_fail(M->ctx, KR_ERR_UNSUPPORTED,
                       "format %s has no multi-column kernel on this backend",
                       kr_matrix_format(M));
    return M->ops->apply_multi(M->ctx, M->impl, k, X->data, Y->data);
}

const char *kr_matrix_format(const kr_matrix *M)
{
    return M->ops->chosen ? M->ops->chosen(M->impl) : M->ops->name;
}

const char *kr_matrix_format_requested(const kr_matrix *M)
{
    return M->requested ? M->requested : M->ops->name;
}

const char *kr_matrix_format_reason(const kr_matrix *M)
{
    if (M->format_reason[0]) return M->format_reason;
    return M->ops->reason ? M->ops->reason(M->impl) : "";
}

int32_t kr_matrix_rows(const kr_matrix *M) { return M ? M->nrows : 0; }
int32_t kr_matrix_cols(const kr_matrix *M) { return M ? M->ncols : 0; }
/* The kept device CSR counts unless the format itself is that CSR. */
size_t kr_matrix_bytes(const kr_matrix *M)
{
    if (!M) return 0;
    kr_csr_view own;
    size_t kept =
        M->dev.rowptr && !format_view(M, &own) ? kr_dev_csr_bytes(&M->dev) : 0;
    return M->ops->bytes(M->impl) + kept;
}
double kr_matrix_build_seconds(const kr_matrix *M) { return M->build_seconds; }

void kr_matrix_build_stages(const kr_matrix *M, double *upload_s,
                            double *format_s)
{
    if (upload_s) *upload_s = M ? M->upload_seconds : 0.0;
    if (format_s) *format_s = M ? M->build_seconds - M->upload_seconds : 0.0;
}

double kr_matrix_padding_ratio(const kr_matrix *M)
{
    return M->nnz ? (double)M->ops->stored(M->impl) / M->nnz : 1.0;
}
