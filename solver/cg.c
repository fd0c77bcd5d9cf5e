/* Preconditioned conjugate gradients (Hestenes & Stiefel) for SPD systems.
 * One iteration: q = A p; alpha = rho / (p.q); x += alpha p, r -= alpha q,
 * z = M^-1 r, rho' = r.z and ||r||^2 (one pass when M is diagonal, else
 * three); p = z + (rho'/rho) p. The residual tested is the unpreconditioned
 * r.
 *
 * With a diagonal M (Jacobi, or none) the scalars stay in backend memory
 * (kr_cg_dev, core/backend.h; the batches in solver/devloop.c): an
 * iteration is the SpMV and cg_step (p.q and alpha, the fused update with
 * its norms and the stopping test, the p update: three launches on the
 * GPU), and no host round trip. Where the matrix's format has a fused
 * step (cg_dir_apply: PELLR without long slices) an iteration is two
 * launches: the direction p' = z + beta p with the SpMV q = A p' and
 * p'.q, then the update, which also keeps p' for the next iteration
 * (KRYLOV_CG_FUSED=0 turns this off, for the tests that compare). On a
 * small system (kr_dev_persists: up to KR_PERSIST_MAX_ROWS rows of
 * similar lengths, A's CSR in backend memory) the backend's cg_persist runs
 * that fused iteration for a whole batch in one launch, with grid-wide barriers
 * in place of the launches. Other preconditioners take the per-iteration path,
 * scalars on the host. */
#include "core/error.h"
#include "solver/multi.h"
#include "solver/solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { R, Z, P, Q, PN, NWORK };

/* x += alpha p; r -= alpha q; z = M^-1 r; {r.z, r.r}. *zp is the array that
 * holds z afterwards (r itself when M is the identity). */
static kr_status cg_update(kr_solve_args *a, double alpha, const double *p,
                           const double *q, double *r, double *z,
                           const double **zp, double *rz_rr)
{
    kr_ctx *ctx = a->ctx;
    const double *d;
    if (a->P->ops->diagonal && a->P->ops->diagonal(a->P->impl, &d)) {
        *zp = d ? z : r;
        return ctx->ops->xr_update(ctx, a->n, alpha, p, q, a->x, r, d, z,
                                   rz_rr);
    }
    const double *xs[2] = {r, r}, *ys[2] = {z, r};
    *zp = z;
    KR_TRY(ctx->ops->axpy2(ctx, a->n, alpha, p, a->x, -alpha, q, r));
    KR_TRY(kr_pc(a, r, z));
    return ctx->ops->dots(ctx, a->n, 2, xs, ys, rz_rr);
}

_Static_assert(sizeof(kr_cg_dev) <= KR_DSTATE_BYTES, "kr_cg_dev fits dstate");

static kr_status cg_device_loop(kr_solve_args *a, kr_result *res, double *w,
                                double *r, const double *d, double rho,
                                int start);

/* 1 when the persistent batches will run (cg_persist, a diagonal or no
 * preconditioner, a small system); *d the diagonal (NULL: none). */
static int cg_persists(const kr_solve_args *a, const double **d)
{
    kr_csr_view csr;
    const kr_precond_ops *pc = a->P->ops;
    return a->ctx->ops->cg_persist && a->ctx->ops->cg_alpha && a->dstate &&
           pc->diagonal && pc->diagonal(a->P->impl, d) &&
           kr_dev_persists(a, &csr);
}

static kr_status cg_iterate(kr_solve_args *a, kr_result *res, double *w)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    double *r = KR_WORK(w, n, R), *z = KR_WORK(w, n, Z);
    double *p = KR_WORK(w, n, P), *q = KR_WORK(w, n, Q);
    double rz_rr[2];
    const double *xs[2] = {r, r}, *ys[2] = {z, r};

    /* r = b - A x; where r.r came with it and the batches persist, the
     * first launch makes z, p and rho (cg_start): no round trip here, and
     * r stays in the true residual's vector, where the solve's first
     * round trip left it: no copy either */
    int known = a->check_ready;
    const double *d;
    if (known && cg_persists(a, &d)) {
        KR_TRY(kr_start_residual(a, a->check, rz_rr + 1));
        res->reason = kr_solver_check(a, res, 0, sqrt(rz_rr[1]));
        if (res->reason != KR_ITERATING) return KR_OK;
        return cg_device_loop(a, res, w, a->check, d, NAN, 1);
    }
    KR_TRY(kr_start_residual(a, r, known ? rz_rr + 1 : NULL));
    KR_TRY(kr_pc(a, r, z));
    KR_TRY(op->dots(ctx, n, 2, xs, ys, rz_rr));
    res->reason = kr_solver_check(a, res, 0, sqrt(rz_rr[1]));
    KR_TRY(op->copy(ctx, p, z, (size_t)n * 8));
    double rho = rz_rr[0];
    if (res->reason == KR_ITERATING && op->cg_alpha && a->dstate &&
        !(rho < 0 || !isfinite(rho)) && a->P->ops->diagonal &&
        a->P->ops->diagonal(a->P->impl, &d))
        return cg_device_loop(a, res, w, r, d, rho, 0);
    for (int it = 1; res->reason == KR_ITERATING; it++) {
        if (rho < 0 || !isfinite(rho)) {
            res->reason = isfinite(rho) ? KR_DIVERGED_INDEFINITE_PC
                                        : KR_DIVERGED_NANORINF;
            break;
        }
        double pq;
        const double *pp[1] = {p}, *qq[1] = {q};
        KR_TRY(kr_spmv(a, 1.0, p, 0.0, q));
        KR_TRY(op->dots(ctx, n, 1, pp, qq, &pq));
        if (!(pq > 0)) {
            res->reason = !isfinite(pq) ? KR_DIVERGED_NANORINF
                          : rho == 0    ? KR_DIVERGED_BREAKDOWN
                                        : KR_DIVERGED_INDEFINITE_MAT;
            break;
        }
        const double *zk;
        KR_TRY(cg_update(a, rho / pq, p, q, r, z, &zk, rz_rr));
        res->reason = kr_solver_check(a, res, it, sqrt(rz_rr[1]));
        if (res->reason != KR_ITERATING) break;
        double beta = rz_rr[0] / rho;
        rho = rz_rr[0];
        KR_TRY(op->axpby(ctx, n, 1.0, zk, beta, p));
    }
    return KR_OK;
}

/* One batch of device iterations: what the backend enqueues or replays. */
typedef struct cg_batch {
    kr_solve_args *a;
    double *r, *z, *p, *q;
    double *pn;      /* the fused step's new direction, or NULL: not fused */
    kr_csr_view csr; /* persistent batches (cg_persist): A; else nrows 0 */
    const double *d, *zk; /* the diagonal (NULL: identity), z or r */
    kr_cg_dev *s;         /* backend memory */
    int nb;
    int start; /* the next persistent batch makes z, p and rho first */
} cg_batch;

static kr_status cg_enqueue(void *arg)
{
    cg_batch *c = arg;
    kr_solve_args *a = c->a;
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    const kr_format_ops *f = a->A->ops;
    if (c->csr.nrows) {
        int start = c->start;
        c->start = 0;
        return op->cg_persist(ctx, &c->csr, c->nb, start, c->d, a->x, c->r,
                              c->z, c->p, c->pn, c->q, c->s);
    }
    for (int i = 0; i < c->nb; i++) {
        if (c->pn) { /* the fused step: two launches */
            KR_TRY(f->cg_dir_apply(ctx, a->A->impl, c->zk, c->p, c->pn, c->q,
                                   c->s));
            KR_TRY(op->cg_update_keep(ctx, a->n, c->pn, c->q, a->x, c->r, c->d,
                                      c->z, c->p, c->s));
            continue;
        }
        KR_TRY(kr_spmv(a, 1.0, c->p, 0.0, c->q));
        KR_TRY(op->cg_step(ctx, a->n, c->p, c->q, a->x, c->r, c->d, c->z, c->zk,
                           c->s));
    }
    return KR_OK;
}

int kr_cg_dev_reason(const void *host, kr_reason *why)
{
    const kr_cg_dev *s = host;
    switch (s->h.stop) {
    case KR_DEV_STOP_RHO:
        *why =
            isfinite(s->rho) ? KR_DIVERGED_INDEFINITE_PC : KR_DIVERGED_NANORINF;
        return 1;
    case KR_DEV_STOP_PQ:
        *why = !isfinite(s->pq) ? KR_DIVERGED_NANORINF
               : s->rho == 0    ? KR_DIVERGED_BREAKDOWN
                                : KR_DIVERGED_INDEFINITE_MAT;
        return 1;
    default: return 0;
    }
}

/* Whether the matrix's format fuses CG's direction into its SpMV. */
static int cg_fusable(const kr_solve_args *a)
{
    const kr_format_ops *f = a->A->ops;
    return !kr_env_off("KRYLOV_CG_FUSED") && a->ctx->ops->cg_update_keep &&
           f->cg_dir_ok && f->cg_dir_apply && f->cg_dir_ok(a->A->impl);
}

/* The iterations after the start-up, with the scalars on the device; p
 * holds z, and beta starts at 0, so the fused step's first p' is z. With
 * `start` (persistent batches only) the first launch makes z, p and rho
 * itself. r is the residual's vector: the R work vector, or the true
 * residual's. */
static kr_status cg_device_loop(kr_solve_args *a, kr_result *res, double *w,
                                double *r, const double *d, double rho,
                                int start)
{
    int32_t n = a->n;
    cg_batch c = {.a = a,
                  .r = r,
                  .z = KR_WORK(w, n, Z),
                  .p = KR_WORK(w, n, P),
                  .q = KR_WORK(w, n, Q),
                  .d = d,
                  .s = a->dstate};
    c.zk = d ? c.z : c.r;
    int whole = a->ctx->ops->cg_persist && kr_dev_persists(a, &c.csr);
    if (!whole) c.csr.nrows = 0;
    if (start && !whole)
        return kr_fail(a->ctx, KR_ERR_DEVICE,
                       "cg: start-up on the device without its persistent "
                       "batches (internal error)");
    c.start = start;
    c.pn = whole || cg_fusable(a) ? KR_WORK(w, n, PN) : NULL;
    kr_cg_dev hs;
    memset(&hs, 0, sizeof hs);
    kr_dev_head_init(a, &hs.h);
    hs.rho = rho;
    kr_dev_loop L = {.name = "cg",
                     .enqueue = cg_enqueue,
                     .arg = &c,
                     .nb = &c.nb,
                     .host = &hs,
                     .bytes = sizeof hs,
                     .reason = kr_cg_dev_reason,
                     .whole = whole};
    return kr_dev_loop_run(a, res, &L);
}

static kr_status cg_solve(kr_solve_args *a, kr_result *res)
{
    return cg_iterate(a, res, a->work);
}

static void cg_workspace(const kr_solve_options *o, int32_t n, int *nvec,
                         size_t *nhost)
{
    (void)o, (void)n;
    *nvec = NWORK;
    *nhost = 0;
}

/* With a diagonal preconditioner x, r, z and both inner products are one
 * fused pass (cg_update), counted here in full; otherwise axpy2, the
 * preconditioner and the dots are separate. The format's fused step
 * (cg_dir_apply) moves two passes less, which this model, blind to the
 * format, does not subtract: its SpMV gathers z and p and writes p' and q
 * (2 passes beyond the SpMV's), the update also writes p (+1), and p.q
 * and the p update go (-2, -3). The floor it gives is then 2 passes high. */
static void cg_iter_model(const kr_solve_options *o, int32_t n, kr_pc_kind pc,
                          int iterations, kr_iter_model *m)
{
    (void)o, (void)n, (void)iterations;
    m->spmvs = 1;
    if (pc != KR_PC_GENERAL) {
        int jac = pc == KR_PC_DIAGONAL;
        m->pcs = 0;
        m->vectors = 2 + (jac ? 8 : 6) + 3;
        snprintf(m->text, sizeof m->text,
                 "cg: 1 SpMV (q = A p), %d vector passes: dot p.q 2, fused "
                 "update %s, axpby p = z + b p 3 (the fused step, PELLR's "
                 "or the persistent batches' on the GPU, moves 2 fewer)",
                 (int)m->vectors,
                 jac ? "x += a p, r -= a q, z = d .* r with r.z and r.r 8"
                     : "x += a p, r -= a q with r.r 6");
        return;
    }
    m->pcs = 1;
    m->vectors = 2 + 6 + 2 + 3;
    snprintf(m->text, sizeof m->text,
             "cg: 1 SpMV (q = A p), 1 preconditioner, 13 vector passes: "
             "dot p.q 2, axpy2 x += a p, r -= a q 6, dots r.z and r.r 2, "
             "axpby p = z + b p 3");
}

const kr_solver_ops kr_cg_ops = {
    .name = "cg",
    .summary = "conjugate gradients, for symmetric positive definite A",
    .solve = cg_solve,
    .workspace = cg_workspace,
    .iter_model = cg_iter_model,
    .solve_multi = kr_cg_solve_multi,
    .workspace_multi = kr_cg_workspace_multi,
};
