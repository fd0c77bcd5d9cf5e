/* The public preconditioner handle and the registry of preconditioners. */
#include "precond/precond.h"

#include "core/csr.h"
#include "core/error.h"
#include "core/vec.h"
#include "spmv/format.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define KR_PRECOND_ENTRY(name) &kr_precond_##name##_ops,
static const kr_precond_ops *const preconds[] = {
    KR_PRECOND_LIST(KR_PRECOND_ENTRY)};
#undef KR_PRECOND_ENTRY

#define NPRECONDS (sizeof preconds / sizeof preconds[0])

const kr_precond_ops *kr_precond_find(const char *name)
{
    for (size_t i = 0; name && i < NPRECONDS; i++)
        if (strcmp(preconds[i]->name, name) == 0) return preconds[i];
    return NULL;
}

const char *const *kr_precond_names(void)
{
    static const char *names[NPRECONDS + 1];
    for (size_t i = 0; i < NPRECONDS; i++)
        names[i] = preconds[i]->name;
    names[NPRECONDS] = NULL;
    return names;
}

void kr_precond_options_default(kr_precond_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->block_size = 32;
    o->singular = KR_SINGULAR_JACOBI;
}

kr_status kr_precond_create(kr_ctx *ctx, const kr_csr *A, const char *name,
                            kr_precond **out)
{
    return kr_precond_create_opts(ctx, A, name, NULL, out);
}

static kr_status unknown(kr_ctx *ctx, const char *name)
{
    char list[256];
    kr_join_names(kr_precond_names(), list, sizeof list);
    return kr_fail(ctx, KR_ERR_ARG, "unknown preconditioner '%s' (valid: %s)",
                   name ? name : "(null)", list);
}

/* The first layout with a size field ends with `singular`. */
#define KR_PRECOND_OPTIONS_MIN_SIZE                                            \
    (offsetof(kr_precond_options, singular) + sizeof(kr_singular_policy))

/* The options as this library reads them: the defaults, overwritten by
 * the fields within in->size. */
static kr_status read_options(kr_ctx *ctx, const kr_precond_options *in,
                              kr_precond_options *out)
{
    kr_precond_options_default(out);
    if (!in) return KR_OK;
    if (in->size < KR_PRECOND_OPTIONS_MIN_SIZE || in->size > sizeof *out)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_precond_options.size is %zu, not %zu..%zu: set it "
                       "with kr_precond_options_default (a program built "
                       "against a newer krylov.h needs a newer library)",
                       in->size, (size_t)KR_PRECOND_OPTIONS_MIN_SIZE,
                       sizeof *out);
    memcpy(out, in, in->size);
    out->size = sizeof *out;
    return KR_OK;
}

/* Builds from M's CSR in backend memory when M (not NULL) has one and the
 * preconditioner can use it, else from the host A. */
static kr_status build(kr_ctx *ctx, const kr_precond_ops *ops, kr_matrix *M,
                       const kr_csr *A, const kr_precond_options *o,
                       void **impl)
{
    kr_csr_view view;
    int have_view = M && kr_matrix_backend_csr(M, &view);
    return ops->setup(ctx, A, have_view ? &view : NULL, o, impl);
}

static kr_status create(kr_ctx *ctx, kr_matrix *M, const kr_csr *A,
                        const char *name, const kr_precond_options *o,
                        kr_precond **out)
{
    *out = NULL;
    /* The builders index by rowptr and colind: an invalid CSR would read
     * out of bounds, so it is refused here with its row named; with M's
     * CSR in backend memory only A's sizes and ends here, and its rows
     * where a setup reads them (Jacobi from the device CSR reads none: a
     * pass over 28M nonzeros cost a device setup of 12 ms another 5). */
    kr_csr_view view;
    int have_view = M && kr_matrix_backend_csr(M, &view);
    KR_TRY(have_view ? kr_csr_check_head(ctx, A) : kr_csr_check(ctx, A));
    if (A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_precond_create: a preconditioner needs a square "
                       "matrix; A is %d x %d",
                       A->nrows, A->ncols);
    const kr_precond_ops *ops = kr_precond_find(name);
    if (!ops) return unknown(ctx, name);
    kr_precond_options opt;
    KR_TRY(read_options(ctx, o, &opt));
    kr_precond *P = calloc(1, sizeof *P);
    if (!P) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = build(ctx, ops, M, A, &opt, &P->impl);
    if (st != KR_OK) {
        free(P);
        return st;
    }
    P->ctx = ctx;
    P->ops = ops;
    P->n = A->nrows;
    P->M = M;
    P->opt = opt;
    P->opt.block_sizes = NULL; /* the caller's array may not outlive P */
    P->opt.nblocks = 0;
    *out = P;
    return KR_OK;
}

kr_status kr_precond_create_opts(kr_ctx *ctx, const kr_csr *A, const char *name,
                                 const kr_precond_options *o, kr_precond **out)
{
    if (!ctx) return KR_ERR_ARG;
    if (!A) return kr_null_arg(ctx, "kr_precond_create", "the CSR matrix A");
    if (!out) return kr_null_arg(ctx, "kr_precond_create", "the output P");
    return create(ctx, NULL, A, name, o, out);
}

kr_status kr_precond_create_matrix(kr_ctx *ctx, kr_matrix *M, const kr_csr *A,
                                   const char *name,
                                   const kr_precond_options *o,
                                   kr_precond **out)
{
    const char *f = "kr_precond_create_matrix";
    if (!ctx) return KR_ERR_ARG;
    if (!M) return kr_null_arg(ctx, f, "the matrix M");
    if (!A) return kr_null_arg(ctx, f, "the CSR matrix A");
    if (!out) return kr_null_arg(ctx, f, "the output P");
    *out = NULL;
    if (M->ctx != ctx)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_precond_create_matrix: the matrix belongs to "
                       "another context");
    if (M->nrows != A->nrows || M->ncols != A->ncols || M->nnz != A->nnz)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_precond_create_matrix: the matrix is %d x %d with "
                       "%d nonzeros, the CSR given %d x %d with %d",
                       M->nrows, M->ncols, M->nnz, A->nrows, A->ncols, A->nnz);
    return create(ctx, M, A, name, o, out);
}

/* P's blocks as options, so that a rebuild keeps them: *sizes is NULL
 * for preconditioners without blocks, else an array to free. */
static kr_status current_blocks(kr_precond *P, kr_precond_options *o,
                                int32_t **sizes)
{
    *sizes = NULL;
    int32_t nb = kr_precond_block_count(P);
    if (nb <= 0) return KR_OK;
    *sizes = malloc((size_t)nb * sizeof **sizes);
    if (!*sizes) return kr_fail(P->ctx, KR_ERR_NOMEM, "out of host memory");
    KR_TRY(kr_precond_block_sizes(P, *sizes));
    o->block_sizes = *sizes;
    o->nblocks = nb;
    o->fixed = 0;
    return KR_OK;
}

kr_status kr_precond_update_values(kr_precond *P, const kr_csr *A)
{
    if (!P || !A)
        return kr_fail(P ? P->ctx : NULL, KR_ERR_ARG,
                       "kr_precond_update_values: NULL argument");
    if (kr_precond_is_user(P))
        return kr_fail(P->ctx, KR_ERR_UNSUPPORTED,
                       "kr_precond_update_values: a user preconditioner "
                       "updates itself");
    if (A->nrows != P->n || A->ncols != P->n)
        return kr_fail(P->ctx, KR_ERR_ARG,
                       "kr_precond_update_values: the preconditioner is for "
                       "n = %d, the matrix is %d x %d",
                       P->n, A->nrows, A->ncols);
    if (P->ops->update_values) return P->ops->update_values(P->ctx, P->impl, A);
    kr_precond_options o = P->opt;
    int32_t *sizes;
    KR_TRY(current_blocks(P, &o, &sizes));
    void *fresh;
    kr_status st = build(P->ctx, P->ops, P->M, A, &o, &fresh);
    free(sizes);
    if (st != KR_OK) return st;
    P->ops->destroy(P->ctx, P->impl);
    P->impl = fresh;
    return KR_OK;
}

void kr_precond_destroy(kr_precond *P)
{
    if (!P) return;
    P->ops->destroy(P->ctx, P->impl);
    free(P);
}

kr_status kr_precond_apply(kr_precond *P, const kr_vec *r, kr_vec *z)
{
    if (!P) return KR_ERR_ARG;
    if (!r) return kr_null_arg(P->ctx, "kr_precond_apply", "r");
    if (!z) return kr_null_arg(P->ctx, "kr_precond_apply", "z");
    if (r == z || r->data == z->data)
        return kr_fail(P->ctx, KR_ERR_ARG,
                       "kr_precond_apply: r and z are the same vector; z = "
                       "P^-1 r needs distinct vectors");
    if (r->ctx != P->ctx || z->ctx != P->ctx)
        return kr_fail(P->ctx, KR_ERR_ARG,
                       "kr_precond_apply: vectors belong to another context "
                       "than the preconditioner");
    if (r->n != P->n || z->n != P->n)
        return kr_fail(P->ctx, KR_ERR_ARG,
                       "preconditioner is for n = %d but r has %d and z %d "
                       "entries",
                       P->n, r->n, z->n);
    return P->ops->apply(P->ctx, P->impl, P->n, r->data, z->data);
}

const char *kr_precond_name(const kr_precond *P)
{
    return P ? P->ops->name : "";
}

kr_pc_kind kr_precond_kind(const kr_precond *P)
{
    const double *d;
    if (!P || !P->ops->diagonal || !P->ops->diagonal(P->impl, &d))
        return KR_PC_GENERAL;
    return d ? KR_PC_DIAGONAL : KR_PC_IDENTITY;
}

void kr_precond_view_of(const kr_precond *P, kr_precond_view *v)
{
    memset(v, 0, sizeof *v);
    if (P && P->ops->view) P->ops->view(P->impl, v);
}

kr_status kr_precond_get_info(const kr_precond *P, kr_precond_info *info)
{
    if (!P || !info) return KR_ERR_ARG;
    kr_precond_view v;
    kr_precond_view_of(P, &v);
    *info = v.info;
    return KR_OK;
}

int32_t kr_precond_singular_blocks(const kr_precond *P)
{
    kr_precond_view v;
    kr_precond_view_of(P, &v);
    return v.info.singular_blocks;
}

int32_t kr_precond_block_count(const kr_precond *P)
{
    kr_precond_view v;
    kr_precond_view_of(P, &v);
    return v.info.blocks;
}

kr_status kr_precond_block_sizes(const kr_precond *P, int32_t *sizes)
{
    if (!P || !sizes) return KR_ERR_ARG;
    kr_precond_view v;
    kr_precond_view_of(P, &v);
    if (!v.starts)
        return kr_fail(P->ctx, KR_ERR_UNSUPPORTED,
                       "preconditioner '%s' has no diagonal blocks",
                       P->ops->name);
    for (int32_t b = 0; b < v.info.blocks; b++)
        sizes[b] = v.starts[b + 1] - v.starts[b];
    return KR_OK;
}

int kr_precond_has_option(const char *name, const char *key)
{
    const kr_precond_ops *ops = kr_precond_find(name);
    return ops && key && ops->set_option &&
           ops->set_option(NULL, NULL, key, NULL) == KR_OK;
}

kr_status kr_precond_options_set(kr_ctx *ctx, const char *name,
                                 kr_precond_options *o, const char *key,
                                 const char *value)
{
    const char *f = "kr_precond_options_set";
    if (!o) return kr_null_arg(ctx, f, "the options o");
    if (!key) return kr_null_arg(ctx, f, "the key");
    if (!value) return kr_null_arg(ctx, f, "the value");
    const kr_precond_ops *ops = kr_precond_find(name);
    if (!ops) return unknown(ctx, name);
    if (!ops->set_option)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "preconditioner '%s' takes no options (not '%s')",
                       ops->name, key);
    kr_precond_options copy;
    KR_TRY(read_options(ctx, o, &copy));
    KR_TRY(ops->set_option(ctx, &copy, key, value));
    size_t size = o->size; /* the caller's layout, maybe older */
    memcpy(o, &copy, size);
    o->size = size;
    return KR_OK;
}
