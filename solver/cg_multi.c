/* CG over k columns (kr_solve_multi): cg.c's iteration with a scalar per
 * column, one SpMM per iteration, the fused update (diagonal
 * preconditioner) or the preconditioner over the k columns at once.
 * The columns' scalars stay in backend memory (kr_cg_dev per column;
 * batches in solver/multi_devloop.c) as cg.c's device loop keeps one
 * system's: with a diagonal preconditioner (or none) an iteration is the
 * SpMM and the three launches of mcg_step, with block-Jacobi those of
 * mcg_step_bd (its update applies the blocks), with another the SpMM,
 * mcg_step_a, the preconditioner over the columns and mcg_step_b; no
 * host round trip.
 * KRYLOV_MULTI_DEVICE=0 keeps them on the host (the loop below), to
 * compare. */
#include "core/error.h"
#include "solver/multi.h"

#include <math.h>
#include <stdlib.h>

enum { R, Z, P, Q, NWORK };

typedef struct cg_cols {
    double rho[KR_MULTI_MAX], alpha[KR_MULTI_MAX], beta[KR_MULTI_MAX];
    double one[KR_MULTI_MAX], minus[KR_MULTI_MAX];
    double rz[2 * KR_MULTI_MAX]; /* r.z of column j at j, r.r at k + j */
} cg_cols;

/* x += alpha p; r -= alpha q; z = M^-1 r; {r.z, r.r}: cg_update per
 * column; *zk is the block that holds z afterwards */
static kr_status update(kr_multi *m, cg_cols *c, const double **zk)
{
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k;
    double *r = kr_multi_block(m, R), *z = kr_multi_block(m, Z);
    double *p = kr_multi_block(m, P), *q = kr_multi_block(m, Q);
    const double *d;
    if (m->P->ops->diagonal && m->P->ops->diagonal(m->P->impl, &d)) {
        *zk = d ? z : r;
        return ctx->ops->mxr_update(ctx, n, k, c->alpha, p, q, m->X, r, d, z,
                                    m->run, c->rz);
    }
    const double *xs[2] = {r, r}, *ys[2] = {z, r};
    double na[KR_MULTI_MAX];
    for (int j = 0; j < k; j++)
        na[j] = -c->alpha[j];
    *zk = z;
    KR_TRY(ctx->ops->maxpby(ctx, n, k, c->alpha, p, c->one, m->X, m->run));
    KR_TRY(ctx->ops->maxpby(ctx, n, k, na, q, c->one, r, m->run));
    KR_TRY(kr_multi_pc(m, m->run, r, z));
    return ctx->ops->mdots(ctx, n, k, 2, xs, ys, m->run, c->rz);
}

/* p.q and alpha per column; the columns without one stop */
static kr_status alpha_step(kr_multi *m, cg_cols *c)
{
    double *p = kr_multi_block(m, P), *q = kr_multi_block(m, Q);
    const double *ps[1] = {p}, *qs[1] = {q};
    double pq[KR_MULTI_MAX];
    KR_TRY(kr_multi_spmm(m, m->run, p, q));
    KR_TRY(m->ctx->ops->mdots(m->ctx, m->n, m->k, 1, ps, qs, m->run, pq));
    KR_FOR_COLS(j, m->run, m->k)
    {
        if (pq[j] > 0)
            c->alpha[j] = c->rho[j] / pq[j];
        else
            kr_multi_stop(m, j,
                          !isfinite(pq[j]) ? KR_DIVERGED_NANORINF
                          : c->rho[j] == 0 ? KR_DIVERGED_BREAKDOWN
                                           : KR_DIVERGED_INDEFINITE_MAT);
    }
    return KR_OK;
}

/* How the device loop applies M: fused into mcg_step (diagonal or none),
 * into mcg_step_bd (block-diagonal), or between mcg_step's halves. */
typedef enum mcg_pc { MCG_DIAGONAL, MCG_BLOCKDIAG, MCG_SPLIT } mcg_pc;

/* One batch of device iterations: what the backend enqueues or replays. */
typedef struct mcg_batch {
    kr_multi *m;
    uint64_t mask; /* the run's columns at its start: fixed, for a graph */
    mcg_pc pc;
    kr_blockdiag bd;      /* M's blocks with MCG_BLOCKDIAG */
    const double *d, *zk; /* the diagonal (NULL: identity), z or r */
    kr_cg_dev *s;         /* k states, backend memory */
    int nb;
} mcg_batch;

/* Another preconditioner goes between mcg_step's halves; it runs over
 * every column of the batch's mask, a column stopped inside the batch
 * included (its z is not read again). */
static kr_status mcg_iteration(mcg_batch *c)
{
    kr_multi *m = c->m;
    kr_ctx *ctx = m->ctx;
    double *r = kr_multi_block(m, R), *z = kr_multi_block(m, Z);
    double *p = kr_multi_block(m, P), *q = kr_multi_block(m, Q);
    KR_TRY(kr_multi_spmm(m, c->mask, p, q));
    if (c->pc == MCG_DIAGONAL)
        return ctx->ops->mcg_step(ctx, m->n, m->k, p, q, m->X, r, c->d, z,
                                  c->zk, c->s, c->mask);
    if (c->pc == MCG_BLOCKDIAG)
        return ctx->ops->mcg_step_bd(ctx, m->n, m->k, p, q, m->X, r, &c->bd, z,
                                     c->s, c->mask);
    KR_TRY(ctx->ops->mcg_step_a(ctx, m->n, m->k, p, q, m->X, r, c->s, c->mask));
    KR_TRY(kr_multi_pc(m, c->mask, r, z));
    return ctx->ops->mcg_step_b(ctx, m->n, m->k, p, r, z, c->s, c->mask);
}

static kr_status mcg_enqueue(void *arg)
{
    mcg_batch *c = arg;
    for (int i = 0; i < c->nb; i++)
        KR_TRY(mcg_iteration(c));
    return KR_OK;
}

/* The iterations after the start-up with the columns' scalars in backend
 * memory (mcg_step, or its halves around M); a column outside m->run
 * starts stopped. */
static kr_status device_loop(kr_multi *m, const cg_cols *c, mcg_batch *b)
{
    kr_cg_dev *hs = calloc((size_t)m->k, sizeof *hs);
    if (!hs) return kr_fail(m->ctx, KR_ERR_NOMEM, "out of host memory");
    for (int j = 0; j < m->k; j++) {
        if (!(m->run >> j & 1)) {
            hs[j].h.stop = KR_DEV_STOP_CHECK;
            continue;
        }
        kr_dev_head_init(&m->col[j], &hs[j].h);
        hs[j].rho = c->rho[j];
    }
    b->m = m;
    b->mask = m->run;
    b->s = m->dstate;
    b->zk = b->d || b->pc != MCG_DIAGONAL ? kr_multi_block(m, Z)
                                          : kr_multi_block(m, R);
    kr_multi_dev_loop L = {.name = "cg",
                           .enqueue = mcg_enqueue,
                           .arg = b,
                           .nb = &b->nb,
                           .host = hs,
                           .size = sizeof *hs,
                           .reason = kr_cg_dev_reason};
    kr_status st = kr_multi_dev_loop_run(m, &L);
    free(hs);
    return st;
}

/* The device loop, unless KRYLOV_MULTI_DEVICE=0: on a backend with
 * mcg_step for a diagonal preconditioner (or none), with mcg_step_bd for
 * a block-diagonal one of up to KR_MCG_BD_MAX columns (unless
 * KRYLOV_MCG_BLOCKDIAG=0, to compare), with mcg_step's halves for another;
 * b->pc and b->d say which. */
static int device_ok(const kr_multi *m, mcg_batch *b)
{
    const kr_backend_ops *op = m->ctx->ops;
    const kr_precond_ops *po = m->P->ops;
    b->d = NULL;
    b->pc = po->diagonal && po->diagonal(m->P->impl, &b->d) ? MCG_DIAGONAL
                                                            : MCG_SPLIT;
    if (!kr_multi_device_on(m)) return 0;
    if (b->pc == MCG_DIAGONAL) return op->mcg_step != NULL;
    if (op->mcg_step_bd && m->k <= KR_MCG_BD_MAX && po->blockdiag &&
        !kr_env_off("KRYLOV_MCG_BLOCKDIAG") &&
        po->blockdiag(m->P->impl, &b->bd))
        b->pc = MCG_BLOCKDIAG;
    return b->pc == MCG_BLOCKDIAG || (op->mcg_step_a && op->mcg_step_b);
}

/* The columns whose rho allows no step stop (the top of an iteration). */
static void check_rho(kr_multi *m, const cg_cols *c)
{
    KR_FOR_COLS(j, m->run, m->k)
    if (c->rho[j] < 0 || !isfinite(c->rho[j]))
        kr_multi_stop(m, j,
                      isfinite(c->rho[j]) ? KR_DIVERGED_INDEFINITE_PC
                                          : KR_DIVERGED_NANORINF);
}

kr_status kr_cg_solve_multi(kr_multi *m)
{
    kr_ctx *ctx = m->ctx;
    int32_t n = m->n;
    int k = m->k;
    double *r = kr_multi_block(m, R), *z = kr_multi_block(m, Z);
    double *p = kr_multi_block(m, P);
    const double *xs[2] = {r, r}, *ys[2] = {z, r}, *zk;
    cg_cols c;
    kr_multi_fill(c.one, k, 1.0);
    kr_multi_fill(c.minus, k, -1.0);
    KR_TRY(kr_multi_residual(m, m->run, r));
    KR_TRY(kr_multi_pc(m, m->run, r, z));
    KR_TRY(ctx->ops->mdots(ctx, n, k, 2, xs, ys, m->run, c.rz));
    KR_FOR_COLS(j, m->run, k)
    {
        c.rho[j] = c.rz[j];
        kr_multi_check(m, j, 0, sqrt(c.rz[k + j]));
    }
    KR_TRY(ctx->ops->copy(ctx, p, z, (size_t)n * (size_t)k * sizeof(double)));
    mcg_batch b = {0};
    if (device_ok(m, &b)) {
        check_rho(m, &c);
        return m->run ? device_loop(m, &c, &b) : KR_OK;
    }
    for (int it = 1; m->run; it++) {
        check_rho(m, &c);
        if (!m->run) break;
        KR_TRY(alpha_step(m, &c));
        if (!m->run) break;
        KR_TRY(update(m, &c, &zk));
        KR_FOR_COLS(j, m->run, k)
        if (kr_multi_check(m, j, it, sqrt(c.rz[k + j])) == KR_ITERATING) {
            c.beta[j] = c.rz[j] / c.rho[j];
            c.rho[j] = c.rz[j];
        }
        KR_TRY(ctx->ops->maxpby(ctx, n, k, c.one, zk, c.beta, p, m->run));
    }
    return KR_OK;
}

void kr_cg_workspace_multi(const kr_solve_options *o, int32_t n, int k,
                           int *nblk, int *nvec, size_t *nhost)
{
    (void)o, (void)n, (void)k;
    *nblk = NWORK;
    *nvec = 0;
    *nhost = 0;
}
