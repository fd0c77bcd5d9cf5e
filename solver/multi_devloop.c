/* The host side of a multi-column method whose per-column scalars stay in
 * backend memory: solver/devloop.c's batches (1, 2, 4, ... up to
 * KR_BATCH_DEFAULT iterations, full batches after the first two replayed
 * from one captured graph unless the operator or the preconditioner is
 * the user's) with one state per column. After each batch the k states
 * come back in one read; each running column's recorded norms go through
 * its stopping test (kr_multi_check), so its iterations and reason are
 * those of the host-scalar loop. The enqueued work is the same every
 * batch (a graph replays it), so a column stops on the device through its
 * own state: the device's test stops it there, and where the host stops
 * it first (maxit, an interrupt) the host marks its state stopped and
 * writes the states back before the next batch. */
#include "core/error.h"
#include "solver/multi.h"

#include <stdlib.h>
#include <string.h>

int kr_multi_device_on(const kr_multi *m)
{
    return m->dstate && !kr_env_off("KRYLOV_MULTI_DEVICE");
}

static kr_dev_head *head_of(const kr_multi_dev_loop *L, int j)
{
    return (kr_dev_head *)((char *)L->host + (size_t)j * L->size);
}

/* Iterations the next batch may run: none of the running columns passes
 * maxit inside it (a column's it0 counts its earlier runs). */
static int batch_len(const kr_multi *m, int it, int batch)
{
    int nb = batch;
    KR_FOR_COLS(j, m->run, m->k)
    {
        int left = m->opt->maxit - (m->col[j].it0 + it);
        if (left < nb) nb = left;
    }
    return nb < 1 ? 1 : nb;
}

/* Column j's norms recorded since *done through its stopping test; *halt
 * set when the host stopped a column its state still runs. */
static kr_status account(kr_multi *m, kr_multi_dev_loop *L, int j, int *done,
                         int *halt)
{
    kr_dev_head *h = head_of(L, j);
    kr_solve_args *a = &m->col[j];
    int got = h->done - *done;
    kr_reason r = KR_ITERATING;
    for (int i = 0; i < got && r == KR_ITERATING; i++) {
        a->defer_interrupt = i + 1 < got;
        r = kr_multi_check(m, j, *done + i + 1,
                           h->rnorm[(*done + i) % KR_BATCH_MAX]);
        a->defer_interrupt = 0;
        if (r != KR_ITERATING && i + 1 < got)
            return kr_fail(m->ctx, KR_ERR_DEVICE,
                           "%s: column %d: the host stopped at iteration %d, "
                           "the device ran on (internal error)",
                           L->name, j + 1, a->it0 + *done + i + 1);
    }
    *done = h->done;
    if (r != KR_ITERATING) {
        if (h->stop == KR_DEV_RUNNING) {
            h->stop = KR_DEV_STOP_CHECK;
            *halt = 1;
        }
        return KR_OK;
    }
    if (h->stop == KR_DEV_RUNNING) return KR_OK;
    kr_reason why;
    if (h->stop != KR_DEV_STOP_CHECK && L->reason(h, &why)) {
        kr_multi_stop(m, j, why);
        return KR_OK;
    }
    return kr_fail(m->ctx, KR_ERR_DEVICE,
                   "%s: column %d: the device stopped (%d) at iteration %d, "
                   "the host test did not (internal error)",
                   L->name, j + 1, h->stop, a->it0 + *done);
}

/* Reads the states back and tests every column that ran the batch. */
static kr_status account_all(kr_multi *m, kr_multi_dev_loop *L, int *done)
{
    kr_ctx *ctx = m->ctx;
    size_t bytes = L->size * (size_t)m->k;
    int halt = 0;
    KR_TRY(ctx->ops->download(ctx, L->host, m->dstate, bytes));
    KR_FOR_COLS(j, m->run, m->k) KR_TRY(account(m, L, j, &done[j], &halt));
    return halt ? ctx->ops->upload(ctx, m->dstate, L->host, bytes) : KR_OK;
}

kr_status kr_multi_dev_loop_run(kr_multi *m, kr_multi_dev_loop *L)
{
    kr_ctx *ctx = m->ctx;
    const kr_backend_ops *op = ctx->ops;
    if (L->size > KR_DSTATE_BYTES)
        return kr_fail(ctx, KR_ERR_ARG,
                       "%s: %zu bytes of state per column, above %d "
                       "(internal)",
                       L->name, L->size, KR_DSTATE_BYTES);
    KR_TRY(op->upload(ctx, m->dstate, L->host, L->size * (size_t)m->k));
    int graph = !kr_matrix_is_user(m->A) && !kr_precond_is_user(m->P);
    int done[KR_MULTI_MAX] = {0}, it = 0, batch = 1, full = 0;
    const int cap = kr_dev_batch_cap(KR_BATCH_DEFAULT);
    void *slot = NULL;
    kr_status st = KR_OK;
    while (st == KR_OK && m->run) {
        *L->nb = batch_len(m, it, batch);
        if (graph && *L->nb == cap && ++full > 2)
            st = op->replay(ctx, &slot, L->enqueue, L->arg);
        else
            st = L->enqueue(L->arg);
        it += *L->nb;
        if (st == KR_OK) st = account_all(m, L, done);
        if (batch < cap) batch = 2 * batch < cap ? 2 * batch : cap;
    }
    op->replay_free(ctx, slot);
    return st;
}
