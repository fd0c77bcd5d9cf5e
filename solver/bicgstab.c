/* BiCGSTAB (van der Vorst 1992), right-preconditioned, so the residual it
 * updates and tests is the unpreconditioned b - A x. One iteration, two
 * mat-vecs: p^ = M^-1 p, v = A p^, alpha = rho / (r0^.v), s = r - alpha v
 * (stop here if ||s|| is small enough), s^ = M^-1 s, t = A s^,
 * omega = (t.s)/(t.t), x += alpha p^ + omega s^, r = s - omega t,
 * rho' = r0^.r, p = r + beta (p - omega v). Shadow vector r0^ = r0.
 * The s and r updates each compute their inner products in the same pass
 * (axpy_dots).
 *
 * On a backend with the bcgs_* ops the scalars stay in backend memory
 * (kr_bcgs_dev, core/backend.h; batches in solver/devloop.c): an iteration
 * is two preconditioner applies, two SpMVs and five kernels of its own
 * (r0^.v with alpha; s with s.s and the early test; t.s, t.t with omega;
 * the x and r update with r.r, r0^.r and the test; the p update), and no
 * host round trip. On a small system (kr_dev_persists: up to
 * KR_PERSIST_MAX_ROWS rows of similar lengths, A's CSR in backend memory) with
 * Jacobi or no preconditioner, the backend's bcgs_persist runs a whole batch of
 * that iteration in one launch, with grid-wide barriers in place of the
 * launches; the direction then comes at the start of an iteration, made in the
 * first SpMV's gather. */
#include "core/error.h"
#include "solver/multi.h"
#include "solver/solver.h"

#include <math.h>
#include <string.h>

enum { R, RH, P, V, PH, SH, T, NWORK };

/* v = A M^-1 p and r0^.v */
static kr_status alpha_step(kr_solve_args *a, double *w, double *rv)
{
    kr_ctx *ctx = a->ctx;
    int32_t n = a->n;
    double *v = KR_WORK(w, n, V), *ph = KR_WORK(w, n, PH);
    const double *xs[1] = {KR_WORK(w, n, RH)}, *ys[1] = {v};
    KR_TRY(kr_pc(a, KR_WORK(w, n, P), ph));
    KR_TRY(kr_spmv(a, 1.0, ph, 0.0, v));
    return ctx->ops->dots(ctx, n, 1, xs, ys, rv);
}

/* omega step on s (held in r): t = A M^-1 s, omega = (t.s)/(t.t) */
static kr_status omega_step(kr_solve_args *a, double *w, double *omega)
{
    kr_ctx *ctx = a->ctx;
    int32_t n = a->n;
    double *r = KR_WORK(w, n, R), *sh = KR_WORK(w, n, SH);
    double *t = KR_WORK(w, n, T), ts_tt[2];
    const double *xs[2] = {t, t}, *ys[2] = {r, t};
    KR_TRY(kr_pc(a, r, sh));
    KR_TRY(kr_spmv(a, 1.0, sh, 0.0, t));
    KR_TRY(ctx->ops->dots(ctx, n, 2, xs, ys, ts_tt));
    *omega = ts_tt[1] == 0.0 ? 0.0 : ts_tt[0] / ts_tt[1];
    return KR_OK;
}

/* One batch of device iterations: what the backend enqueues or replays. */
typedef struct bcgs_batch {
    kr_solve_args *a;
    double *w;
    kr_bcgs_dev *s;  /* backend memory */
    kr_csr_view csr; /* persistent batches (bcgs_persist): A; else nrows 0 */
    const double *d; /* with csr: the diagonal (NULL: identity) */
    int nb;
} bcgs_batch;

static kr_status bcgs_enqueue(void *arg)
{
    bcgs_batch *c = arg;
    kr_solve_args *a = c->a;
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    double *w = c->w, *r = KR_WORK(w, n, R), *rh = KR_WORK(w, n, RH);
    double *p = KR_WORK(w, n, P), *v = KR_WORK(w, n, V);
    double *ph = KR_WORK(w, n, PH), *sh = KR_WORK(w, n, SH);
    double *t = KR_WORK(w, n, T);
    if (c->csr.nrows) /* PH and SH hold the new p and v */
        return op->bcgs_persist(ctx, &c->csr, c->nb, c->d, rh, a->x, r, p, v,
                                ph, sh, t, c->s);
    for (int i = 0; i < c->nb; i++) {
        KR_TRY(kr_pc(a, p, ph));
        KR_TRY(kr_spmv(a, 1.0, ph, 0.0, v));
        KR_TRY(op->bcgs_alpha(ctx, n, rh, v, c->s));
        KR_TRY(op->bcgs_s(ctx, n, v, r, c->s));
        KR_TRY(kr_pc(a, r, sh));
        KR_TRY(kr_spmv(a, 1.0, sh, 0.0, t));
        KR_TRY(op->bcgs_omega(ctx, n, t, r, c->s));
        KR_TRY(op->bcgs_update(ctx, n, ph, sh, t, rh, a->x, r, c->s));
        KR_TRY(op->bcgs_direction(ctx, n, r, v, p, c->s));
    }
    return KR_OK;
}

static int bcgs_reason(const void *host, kr_reason *why)
{
    const kr_bcgs_dev *s = host;
    if (s->h.stop != KR_DEV_STOP_BREAKDOWN) return 0;
    *why = KR_DIVERGED_BREAKDOWN;
    return 1;
}

/* Whether the batches run as one persistent launch each (bcgs_persist),
 * which takes a diagonal preconditioner only. */
static int bcgs_persists(const kr_solve_args *a, bcgs_batch *c)
{
    const kr_precond_ops *P = a->P->ops;
    return P->diagonal && P->diagonal(a->P->impl, &c->d) &&
           a->ctx->ops->bcgs_persist && kr_dev_persists(a, &c->csr);
}

/* The iterations after the start-up, with the scalars on the device. The
 * persistent op makes an iteration's direction at the start of the next
 * from beta and omega, which start at 0 as v does, so its first p' is p,
 * which holds r. */
static kr_status bcgs_device_loop(kr_solve_args *a, kr_result *res, double *w,
                                  double rho)
{
    bcgs_batch c = {.a = a, .w = w, .s = a->dstate};
    int whole = bcgs_persists(a, &c);
    if (whole)
        KR_TRY(a->ctx->ops->fill(a->ctx, a->n, 0.0, KR_WORK(w, a->n, V)));
    else
        c.csr.nrows = 0;
    kr_bcgs_dev hs;
    memset(&hs, 0, sizeof hs);
    kr_dev_head_init(a, &hs.h);
    hs.rho = rho;
    kr_dev_loop L = {.name = "bicgstab",
                     .enqueue = bcgs_enqueue,
                     .arg = &c,
                     .nb = &c.nb,
                     .host = &hs,
                     .bytes = sizeof hs,
                     .reason = bcgs_reason,
                     .whole = whole};
    return kr_dev_loop_run(a, res, &L);
}

_Static_assert(sizeof(kr_bcgs_dev) <= KR_DSTATE_BYTES,
               "kr_bcgs_dev fits dstate");

static kr_status bcgs_iterate(kr_solve_args *a, kr_result *res, double *w)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    size_t bytes = (size_t)n * sizeof(double);
    double *r = KR_WORK(w, n, R), *rh = KR_WORK(w, n, RH);
    double *p = KR_WORK(w, n, P), *v = KR_WORK(w, n, V);
    double *ph = KR_WORK(w, n, PH), *sh = KR_WORK(w, n, SH);
    double *t = KR_WORK(w, n, T), rho_rr[2];

    KR_TRY(kr_start_residual(a, r, rho_rr + 1)); /* r = b - A x */
    res->reason = kr_solver_check(a, res, 0, sqrt(rho_rr[1]));
    KR_TRY(op->copy(ctx, rh, r, bytes));
    KR_TRY(op->copy(ctx, p, r, bytes));
    double rho = rho_rr[1], rv, omega, ss;
    if (res->reason == KR_ITERATING && op->bcgs_alpha && a->dstate)
        return bcgs_device_loop(a, res, w, rho);
    for (int it = 1; res->reason == KR_ITERATING; it++) {
        if (rho == 0.0) { /* r0^ orthogonal to r: no BiCG step exists */
            res->reason = KR_DIVERGED_BREAKDOWN;
            break;
        }
        KR_TRY(alpha_step(a, w, &rv));
        if (rv == 0.0) { /* the BiCG step is undefined */
            res->reason = KR_DIVERGED_BREAKDOWN;
            break;
        }
        double alpha = rho / rv;
        KR_TRY(op->axpy_dots(ctx, n, -alpha, v, r, NULL, &ss));  /* r holds s */
        if (!isfinite(ss) || kr_solver_converged(a, sqrt(ss))) { /* done at s */
            if (isfinite(ss)) KR_TRY(op->axpby(ctx, n, alpha, ph, 1.0, a->x));
            res->reason = kr_solver_check(a, res, it, sqrt(ss));
            break;
        }
        KR_TRY(omega_step(a, w, &omega));
        KR_TRY(op->axpbypcz(ctx, n, alpha, ph, omega, sh, 1.0, a->x));
        double rr_rho[2]; /* r = s - omega t, with r.r and r0^.r */
        KR_TRY(op->axpy_dots(ctx, n, -omega, t, r, rh, rr_rho));
        rho_rr[0] = rr_rho[1];
        rho_rr[1] = rr_rho[0];
        res->reason = kr_solver_check(a, res, it, sqrt(rho_rr[1]));
        if (res->reason != KR_ITERATING) break;
        if (omega == 0.0) { /* t.s = 0 or t = 0: the method stagnates */
            res->reason = KR_DIVERGED_BREAKDOWN;
            break;
        }
        double beta = (rho_rr[0] / rho) * (alpha / omega);
        rho = rho_rr[0];
        KR_TRY(op->axpbypcz(ctx, n, 1.0, r, -beta * omega, v, beta, p));
    }
    return KR_OK;
}

static kr_status bcgs_solve(kr_solve_args *a, kr_result *res)
{
    return bcgs_iterate(a, res, a->work);
}

static void bcgs_workspace(const kr_solve_options *o, int32_t n, int *nvec,
                           size_t *nhost)
{
    (void)o, (void)n;
    *nvec = NWORK;
    *nhost = 0;
}

static void bcgs_iter_model(const kr_solve_options *o, int32_t n, kr_pc_kind pc,
                            int iterations, kr_iter_model *m)
{
    (void)o, (void)n, (void)pc, (void)iterations;
    m->spmvs = 2;
    m->pcs = 2;
    m->vectors = 2 + 3 + 1 + 2 + 4 + 3 + 2 + 4;
    snprintf(m->text, sizeof m->text,
             "bicgstab: 2 SpMVs, 2 preconditioners, 21 vector passes: dot "
             "r0.v 2, axpby s = r - a v 3, dot s.s 1, dots t.s and t.t 2, "
             "axpbypcz x += a p^ + w s^ 4, axpby r = s - w t 3, dots r0.r "
             "and r.r 2, axpbypcz p = r + b (p - w v) 4 (the GPU's "
             "persistent batches, up to 2^18 rows with Jacobi or none, "
             "move 18 with Jacobi's d and no preconditioner passes: the "
             "SpMVs gather p, v, r, d and r, v, d, 5 more, p' and r0.v 2, "
             "the update 11)");
}

const kr_solver_ops kr_bicgstab_ops = {
    .name = "bicgstab",
    .summary = "BiCGSTAB, right-preconditioned, for any A",
    .solve = bcgs_solve,
    .workspace = bcgs_workspace,
    .iter_model = bcgs_iter_model,
    .solve_multi = kr_bicgstab_solve_multi,
    .workspace_multi = kr_bicgstab_workspace_multi,
};
