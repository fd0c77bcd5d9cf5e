/* A user's operator as a kr_matrix (kr_matrix_create_user): apply calls the
 * user's y = A x on vector views of the arrays it is given, so every
 * method, kr_solve and kr_ksp take a matrix-free operator unchanged. */
#include "core/error.h"
#include "core/vec.h"
#include "spmv/format.h"

#include <stdlib.h>

typedef struct user_op {
    kr_operator_fn fn;
    void *user;
    kr_vec x, y; /* views handed to fn, pointed at each apply's arrays */
    double *tmp; /* nrows doubles: A x when alpha != 1 or beta != 0 */
} user_op;

/* y = alpha*A*x + beta*y through fn's A x; beta == 0 overwrites y. */
static kr_status user_apply(kr_ctx *ctx, void *impl, double alpha,
                            const double *x, double beta, double *y)
{
    user_op *u = impl;
    int direct = alpha == 1.0 && beta == 0.0;
    u->x.data = (double *)x;
    u->y.data = direct ? y : u->tmp;
    KR_TRY(u->fn(u->user, &u->x, &u->y));
    if (direct) return KR_OK;
    return ctx->ops->axpby(ctx, u->y.n, alpha, u->tmp, beta, y);
}

static size_t user_bytes(const void *impl)
{
    const user_op *u = impl;
    return (size_t)u->y.n * sizeof(double);
}

static void user_destroy(kr_ctx *ctx, void *impl)
{
    user_op *u = impl;
    if (!u) return;
    kr_dev_free(ctx, u->tmp);
    free(u);
}

static int64_t user_stored(const void *impl)
{
    (void)impl;
    return 0;
}

static const kr_format_ops user_ops = {
    .name = "user",
    .apply = user_apply,
    .bytes = user_bytes,
    .destroy = user_destroy,
    .stored = user_stored,
};

int kr_matrix_is_user(const kr_matrix *M) { return M->ops == &user_ops; }

kr_status kr_matrix_create_user(kr_ctx *ctx, int32_t nrows, int32_t ncols,
                                kr_operator_fn fn, void *user, kr_matrix **out)
{
    if (!ctx || !fn || !out)
        return kr_fail(ctx, KR_ERR_ARG, "kr_matrix_create_user: NULL argument");
    *out = NULL;
    if (nrows < 0 || ncols < 0)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_matrix_create_user: negative size %d x %d", nrows,
                       ncols);
    kr_matrix *M = calloc(1, sizeof *M);
    user_op *u = calloc(1, sizeof *u);
    if (!M || !u) {
        free(M);
        free(u);
        return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    *u = (user_op){.fn = fn,
                   .user = user,
                   .x = {.ctx = ctx, .n = ncols},
                   .y = {.ctx = ctx, .n = nrows}};
    kr_status st = kr_dev_zeros(ctx, (size_t)nrows, &u->tmp);
    if (st != KR_OK) {
        free(M);
        free(u);
        return st;
    }
    *M = (kr_matrix){.ctx = ctx,
                     .ops = &user_ops,
                     .impl = u,
                     .nrows = nrows,
                     .ncols = ncols,
                     .longest_row = -1,
                     .long_rows = -1};
    *out = M;
    return KR_OK;
}
