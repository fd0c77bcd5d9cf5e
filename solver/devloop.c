/* The host side of a method whose scalars stay in backend memory
 * (kr_dev_head, core/backend.h): enqueue a batch of iterations, read the
 * state back once, and run the stopping test, the monitor and the history
 * on each norm the batch recorded, as a per-iteration loop would. Batches
 * grow 1, 2, 4, ... up to KR_BATCH_DEFAULT iterations (one at a
 * time when a monitor is set, since a monitor may stop the solve; an interrupt
 * is honoured at the last iteration of a batch). Iterations after the device's
 * own test fired do nothing, so x, the reason and the count are those of the
 * per-iteration loop; the extra launches cost a few microseconds each. Full
 * batches after the first two are replayed from a CUDA graph captured once per
 * run (ops->replay; one per phase for a method whose iterations differ along a
 * period, as IDR(s)'s cycle), unless the operator or the preconditioner is the
 * user's: a callback may do what a capture cannot. A persistent op's batch
 * (kr_dev_loop.whole) is one launch that stops with the device's test, so
 * its batches are long from the first. */
#include "core/error.h"
#include "solver/solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int kr_dev_batch_cap(int usual)
{
    const char *env = getenv("KRYLOV_BATCH");
    int cap = env ? atoi(env) : usual;
    return cap >= 1 && cap <= KR_BATCH_MAX ? cap : usual;
}

int kr_dev_persists(const kr_solve_args *a, kr_csr_view *csr)
{
    const kr_matrix *A = a->A;
    if (kr_env_off("KRYLOV_PERSIST") || a->n > KR_PERSIST_MAX_ROWS ||
        kr_matrix_is_user(A) || A->longest_row < 0 || A->nrows < 1)
        return 0;
    double mean = (double)A->nnz / A->nrows;
    int even = A->longest_row <= KR_PERSIST_MAX_SKEW * mean;
    int few_long = A->long_rows <= KR_PERSIST_LONG_ROWS &&
                   A->longest_row <= KR_PERSIST_LONGEST;
    return (even || few_long) && kr_matrix_backend_csr(A, csr);
}

void kr_dev_head_init(const kr_solve_args *a, kr_dev_head *h)
{
    const kr_solve_options *o = a->opt;
    memset(h, 0, sizeof *h);
    h->atol = o->atol;
    h->rtol_b = o->rtol * a->bnorm; /* kr_solver_converged's product */
    double ref = a->bnorm > a->r0norm ? a->bnorm : a->r0norm;
    h->div = o->dtol > 0 ? o->dtol * ref : INFINITY;
}

/* The host's test on the norms recorded since *done; *it counts the
 * run's iterations. */
static kr_status account(kr_solve_args *a, kr_result *res, kr_dev_loop *L,
                         int *done, int *it)
{
    const kr_dev_head *h = L->host;
    int got = h->done - *done;
    for (int i = 0; i < got && res->reason == KR_ITERATING; i++) {
        a->defer_interrupt = i + 1 < got;
        double rn = h->rnorm[(*done + i) % KR_BATCH_MAX];
        res->reason = kr_solver_check(a, res, ++*it, rn);
        a->defer_interrupt = 0;
        if (res->reason != KR_ITERATING && i + 1 < got)
            return kr_fail(a->ctx, KR_ERR_DEVICE,
                           "%s: the host stopped at iteration %d, the device "
                           "ran on (internal error)",
                           L->name, a->it0 + *it);
    }
    *done = h->done;
    if (res->reason != KR_ITERATING || h->stop == KR_DEV_RUNNING) return KR_OK;
    kr_reason why;
    if (h->stop != KR_DEV_STOP_CHECK && L->reason(L->host, &why)) {
        res->reason = why;
        return KR_OK;
    }
    return kr_fail(a->ctx, KR_ERR_DEVICE,
                   "%s: the device stopped (%d) at iteration %d, the host "
                   "test did not (internal error)",
                   L->name, h->stop, a->it0 + *it);
}

kr_status kr_dev_loop_run(kr_solve_args *a, kr_result *res, kr_dev_loop *L)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    KR_TRY(op->upload(ctx, a->dstate, L->host, L->bytes));
    int graph =
        !L->whole && !kr_matrix_is_user(a->A) && !kr_precond_is_user(a->P);
    int period = L->period > 1 ? L->period : 1;
    if (period > KR_DEV_MAX_PERIOD)
        return kr_fail(ctx, KR_ERR_ARG, "%s: period %d above %d (internal)",
                       L->name, period, KR_DEV_MAX_PERIOD);
    void *slot[KR_DEV_MAX_PERIOD] = {NULL};
    const int cap =
        kr_dev_batch_cap(L->whole ? KR_BATCH_MAX : KR_BATCH_DEFAULT);
    int it = 0, done = 0, full = 0, sent = 0;
    int batch = L->whole && !a->opt->monitor ? cap : 1;
    kr_status st = KR_OK;
    while (st == KR_OK && res->reason == KR_ITERATING) {
        int left = a->opt->maxit - (a->it0 + it), ph = sent % period;
        *L->nb = batch < left ? batch : left;
        if (L->phase) *L->phase = ph;
        if (graph && *L->nb == cap && ++full > 2)
            st = op->replay(ctx, &slot[ph], L->enqueue, L->arg);
        else
            st = L->enqueue(L->arg);
        sent += *L->nb;
        if (st == KR_OK) st = op->download(ctx, L->host, a->dstate, L->bytes);
        if (st == KR_OK) st = account(a, res, L, &done, &it);
        if (!a->opt->monitor && batch < cap)
            batch = 2 * batch < cap ? 2 * batch : cap;
    }
    for (int i = 0; i < period; i++)
        op->replay_free(ctx, slot[i]);
    return st;
}
