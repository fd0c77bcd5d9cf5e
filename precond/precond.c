/* The public preconditioner handle and the registry of preconditioners. */
#include "precond/precond.h"

#include "core/error.h"
#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

static const kr_precond_ops *const preconds[] = {
    &kr_precond_none_ops,
    &kr_precond_jacobi_ops,
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

kr_status kr_precond_create(kr_ctx *ctx, const kr_csr *A, const char *name,
                            kr_precond **out)
{
    if (!ctx || !A || !out)
        return kr_fail(ctx, KR_ERR_ARG, "kr_precond_create: NULL argument");
    *out = NULL;
    const kr_precond_ops *ops = kr_precond_find(name);
    if (!ops) {
        char list[256];
        kr_join_names(kr_precond_names(), list, sizeof list);
        return kr_fail(ctx, KR_ERR_ARG,
                       "unknown preconditioner '%s' (valid: %s)",
                       name ? name : "(null)", list);
    }
    kr_precond *P = calloc(1, sizeof *P);
    if (!P) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = ops->build(ctx, A, &P->impl);
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
    if (!P || !r || !z) return KR_ERR_ARG;
    if (r->n != P->n || z->n != P->n)
        return kr_fail(P->ctx, KR_ERR_ARG,
                       "preconditioner is for n = %d but r has %d and z %d "
                       "entries",
                       P->n, r->n, z->n);
    return P->ops->apply(P->ctx, P->impl, P->n, r->data, z->data);
}

const char *kr_precond_name(const kr_precond *P) { return P->ops->name; }
