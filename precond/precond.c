/* The public preconditioner handle and the registry of preconditioners. */
#include "precond/precond.h"

#include "core/error.h"
#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

static const kr_precond_ops *const preconds[] = {
    &kr_precond_none_ops,
    &kr_precond_jacobi_ops,
    &kr_precond_bjacobi_ops,
};

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

kr_status kr_precond_create_opts(kr_ctx *ctx, const kr_csr *A, const char *name,
                                 const kr_precond_options *o, kr_precond **out)
{
    if (!ctx) return KR_ERR_ARG;
    if (!A) return kr_null_arg(ctx, "kr_precond_create", "the CSR matrix A");
    if (!out) return kr_null_arg(ctx, "kr_precond_create", "the output P");
    *out = NULL;
    /* The builders index by rowptr and colind: an invalid CSR would read
     * out of bounds, so it is refused here with its row named. */
    KR_TRY(kr_csr_check(ctx, A));
    if (A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_precond_create: a preconditioner needs a square "
                       "matrix; A is %d x %d",
                       A->nrows, A->ncols);
    const kr_precond_ops *ops = kr_precond_find(name);
    if (!ops) return unknown(ctx, name);
    kr_precond_options defaults;
    kr_precond_options_default(&defaults);
    kr_precond *P = calloc(1, sizeof *P);
    if (!P) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = ops->build_opts
                       ? ops->build_opts(ctx, A, o ? o : &defaults, &P->impl)
                       : ops->build(ctx, A, &P->impl);
    if (st != KR_OK) {
        free(P);
        return st;
    }
    P->ctx = ctx;
    P->ops = ops;
    P->n = A->nrows;
    *out = P;
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

int32_t kr_precond_singular_blocks(const kr_precond *P)
{
    if (!P || !P->ops->singular_blocks) return 0;
    return P->ops->singular_blocks(P->impl);
}

int32_t kr_precond_block_count(const kr_precond *P)
{
    if (!P || !P->ops->block_count) return 0;
    return P->ops->block_count(P->impl);
}

kr_status kr_precond_block_sizes(const kr_precond *P, int32_t *sizes)
{
    if (!P || !sizes) return KR_ERR_ARG;
    if (!P->ops->block_sizes)
        return kr_fail(P->ctx, KR_ERR_UNSUPPORTED,
                       "preconditioner '%s' has no diagonal blocks",
                       P->ops->name);
    P->ops->block_sizes(P->impl, sizes);
    return KR_OK;
}
