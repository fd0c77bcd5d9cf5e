/* A user's preconditioner as a kr_precond (kr_precond_create_user): apply
 * calls the user's z = P^-1 r on vector views of the arrays it is given,
 * so every method takes it unchanged. */
#include "core/error.h"
#include "core/vec.h"
#include "precond/precond.h"

#include <stdlib.h>

typedef struct user_pc {
    kr_precond_fn fn;
    void *user;
    kr_vec r, z; /* views handed to fn, pointed at each apply's arrays */
} user_pc;

static kr_status user_apply(kr_ctx *ctx, void *impl, int32_t n, const double *r,
                            double *z)
{
    (void)ctx, (void)n;
    user_pc *u = impl;
    u->r.data = (double *)r;
    u->z.data = z;
    return u->fn(u->user, &u->r, &u->z);
}

static void user_destroy(kr_ctx *ctx, void *impl)
{
    (void)ctx;
    free(impl);
}

static const kr_precond_ops user_ops = {
    .name = "user",
    .summary = "the caller's z = P^-1 r (kr_precond_create_user)",
    .apply = user_apply,
    .destroy = user_destroy,
};

int kr_precond_is_user(const kr_precond *P) { return P->ops == &user_ops; }

kr_status kr_precond_create_user(kr_ctx *ctx, int32_t n, kr_precond_fn fn,
                                 void *user, kr_precond **out)
{
    if (!ctx || !fn || !out)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_precond_create_user: NULL argument");
    *out = NULL;
    if (n < 0)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_precond_create_user: negative size %d", n);
    kr_precond *P = calloc(1, sizeof *P);
    user_pc *u = calloc(1, sizeof *u);
    if (!P || !u) {
        free(P);
        free(u);
        return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    *u = (user_pc){.fn = fn,
                   .user = user,
                   .r = {.ctx = ctx, .n = n},
                   .z = {.ctx = ctx, .n = n}};
    *P = (kr_precond){.ctx = ctx, .ops = &user_ops, .impl = u, .n = n};
    kr_precond_options_default(&P->opt);
    *out = P;
    return KR_OK;
}
