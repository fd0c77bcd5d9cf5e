/* The solver object (kr_ksp): the method, operator, preconditioner and
 * options of a solve, and the method's work, allocated by setup and kept
 * across solves, so that a solve allocates nothing on the backend. */
#include "solver/ksp.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

void kr_ksp_init(kr_ksp *k, kr_ctx *ctx)
{
    memset(k, 0, sizeof *k);
    k->ctx = ctx;
    kr_solve_options_default(&k->opt);
    k->method = kr_solver_find(k->opt.method);
    k->identity = (kr_precond){.ctx = ctx, .ops = &kr_precond_none_ops};
}

static void free_work(kr_ksp *k)
{
    kr_dev_free(k->ctx, k->work);
    kr_dev_free(k->ctx, k->dstate);
    free(k->hwork);
    k->work = k->hwork = NULL;
    k->dstate = NULL;
    k->dstate_bytes = 0;
    k->nvec = 0;
    k->n = 0;
    k->nhost = 0;
}

void kr_ksp_release(kr_ksp *k)
{
    free_work(k);
    kr_dev_free(k->ctx, k->mwork);
    free(k->mhwork);
    k->mwork = k->mhwork = NULL;
    k->mwork_len = k->mhwork_len = 0;
}

kr_status kr_ksp_create(kr_ctx *ctx, const char *method, kr_ksp **out)
{
    if (!ctx || !out)
        return kr_fail(ctx, KR_ERR_ARG, "kr_ksp_create: NULL argument");
    *out = NULL;
    const kr_solver_ops *m = NULL;
    if (method) KR_TRY(kr_solve_find_method(ctx, method, &m));
    kr_ksp *k = malloc(sizeof *k);
    if (!k) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_ksp_init(k, ctx);
    if (m) {
        k->method = m;
        k->opt.method = m->name;
    }
    *out = k;
    return KR_OK;
}

void kr_ksp_destroy(kr_ksp *k)
{
    if (!k) return;
    kr_ksp_release(k);
    free(k);
}

static kr_precond *precond_of(kr_ksp *k) { return k->P ? k->P : &k->identity; }

kr_status kr_ksp_set_operator(kr_ksp *k, kr_matrix *A)
{
    if (!k || !A)
        return kr_fail(k ? k->ctx : NULL, KR_ERR_ARG,
                       "kr_ksp_set_operator: NULL argument");
    if (A->ctx != k->ctx)
        return kr_fail(k->ctx, KR_ERR_ARG,
                       "kr_ksp_set_operator: the matrix belongs to another "
                       "context");
    k->A = A;
    return KR_OK;
}

kr_status kr_ksp_set_precond(kr_ksp *k, kr_precond *P)
{
    if (!k) return KR_ERR_ARG;
    if (P && P->ctx != k->ctx)
        return kr_fail(k->ctx, KR_ERR_ARG,
                       "kr_ksp_set_precond: the preconditioner belongs to "
                       "another context");
    k->P = P;
    return KR_OK;
}

/* Makes o the object's options once they pass kr_solve's checks; the
 * method is kept as the registry's name, not the caller's string. */
static kr_status commit(kr_ksp *k, const kr_solve_options *o)
{
    const kr_solver_ops *m;
    KR_TRY(kr_solve_check_options(k->ctx, o));
    KR_TRY(kr_solve_find_method(k->ctx, o->method, &m));
    k->opt = *o;
    k->opt.method = m->name;
    k->method = m;
    return KR_OK;
}

kr_status kr_ksp_set_options(kr_ksp *k, const kr_solve_options *opt)
{
    if (!k || !opt)
        return kr_fail(k ? k->ctx : NULL, KR_ERR_ARG,
                       "kr_ksp_set_options: NULL argument");
    kr_solve_options o;
    KR_TRY(kr_solve_options_read(k->ctx, opt, &o));
    return commit(k, &o);
}

kr_status kr_ksp_set_option(kr_ksp *k, const char *key, const char *value)
{
    if (!k || !key || !value)
        return kr_fail(k ? k->ctx : NULL, KR_ERR_ARG,
                       "kr_ksp_set_option: NULL argument");
    kr_solve_options o = k->opt;
    KR_TRY(kr_ksp_parse_option(k->ctx, &o, key, value));
    return commit(k, &o);
}

kr_status kr_ksp_get_options(const kr_ksp *k, kr_solve_options *opt)
{
    if (!k || !opt) return KR_ERR_ARG;
    /* an older program's struct is shorter: write only what it has */
    kr_solve_options check;
    KR_TRY(kr_solve_options_read(k->ctx, opt, &check));
    size_t size = opt->size;
    memcpy(opt, &k->opt, size);
    opt->size = size;
    return KR_OK;
}

/* The operator and preconditioner fit together and with the object. */
kr_status kr_ksp_check_operators(kr_ksp *k)
{
    kr_ctx *ctx = k->ctx;
    if (!k->A)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_ksp: no operator (call kr_ksp_set_operator)");
    if (k->A->nrows != k->A->ncols)
        return kr_fail(ctx, KR_ERR_ARG,
                       "cannot solve with a %d x %d matrix: it is not square",
                       k->A->nrows, k->A->ncols);
    k->identity.n = k->A->nrows;
    if (precond_of(k)->n != k->A->nrows)
        return kr_fail(ctx, KR_ERR_ARG,
                       "size mismatch: matrix n = %d, preconditioner is for "
                       "%d",
                       k->A->nrows, precond_of(k)->n);
    return KR_OK;
}

kr_status kr_ksp_setup(kr_ksp *k)
{
    if (!k) return KR_ERR_ARG;
    KR_TRY(kr_ksp_check_operators(k));
    int32_t n = k->A->nrows;
    int nvec;
    size_t nhost;
    k->method->workspace(&k->opt, n, &nvec, &nhost);
    nvec++; /* the true residual's vector */
    size_t dbytes = KR_DSTATE_BYTES;
    if (k->method->dstate_bytes && k->method->dstate_bytes(&k->opt) > dbytes)
        dbytes = k->method->dstate_bytes(&k->opt);
    if (k->work && nvec == k->nvec && n == k->n && nhost == k->nhost &&
        dbytes == k->dstate_bytes)
        return KR_OK;
    free_work(k);
    KR_TRY(kr_dev_zeros(k->ctx, (size_t)nvec * (size_t)n, &k->work));
    double *ds = NULL;
    kr_status st = kr_dev_zeros(k->ctx, dbytes / sizeof(double) + 1, &ds);
    k->dstate = ds;
    k->dstate_bytes = dbytes;
    if (st == KR_OK) {
        k->hwork = calloc(nhost + 1, sizeof *k->hwork);
        if (!k->hwork) st = kr_fail(k->ctx, KR_ERR_NOMEM, "out of host memory");
    }
    if (st != KR_OK) {
        free_work(k);
        return st;
    }
    k->nvec = nvec;
    k->n = n;
    k->nhost = nhost;
    return KR_OK;
}

kr_status kr_ksp_run(kr_ksp *k, const kr_vec *b, kr_vec *x, kr_result *res)
{
    const kr_solve_options *opt = &k->opt;
    if (opt->keep_history) {
        res->history = malloc(((size_t)opt->maxit + 2) * sizeof(double));
        if (!res->history)
            return kr_fail(k->ctx, KR_ERR_NOMEM,
                           "out of memory for the history");
    }
    kr_solve_args a = {.ctx = k->ctx,
                       .A = k->A,
                       .P = precond_of(k),
                       .b = b->data,
                       .x = x->data,
                       .n = k->n,
                       .opt = opt,
                       .work = k->work,
                       .hwork = k->hwork,
                       .check = KR_WORK(k->work, k->n, k->nvec - 1),
                       .dstate = k->dstate,
                       .scale = 1.0};
    double t0 = kr_wtime();
    kr_status st = kr_solver_run(&a, k->method, res);
    res->solve_seconds = kr_wtime() - t0;
    return st;
}

kr_status kr_ksp_solve(kr_ksp *k, const kr_vec *b, kr_vec *x, kr_result *res)
{
    if (!k || !res)
        return kr_fail(k ? k->ctx : NULL, KR_ERR_ARG, "kr_ksp_solve: NULL");
    memset(res, 0, sizeof *res);
    KR_TRY(kr_ksp_check_operators(k));
    KR_TRY(kr_solve_check_args(k->ctx, k->A, precond_of(k), b, x));
    KR_TRY(kr_ksp_setup(k));
    return kr_ksp_run(k, b, x, res);
}
