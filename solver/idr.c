/* IDR(s) with bi-orthogonalisation (van Gijzen & Sonneveld, ACM TOMS 38(1)
 * 2011, Algorithm 913), right-preconditioned, so r is the unpreconditioned
 * b - A x. A cycle makes s steps that keep r orthogonal to a growing part of
 * the shadow space P (G = A U, M = P^T G lower triangular, f = P^T r), then
 * one dimension-reduction step with omega chosen by "maintaining the
 * convergence" (kappa). Every mat-vec is one iteration and every update of
 * r is tested. P: s seeded uniform random vectors, orthonormalised.
 *
 * For s <= KR_IDR_DEV_MAX_S, on a backend with the idr_* ops, M, f, c, h,
 * omega and the norms stay in backend memory (kr_idr_dev, core/backend.h;
 * batches in solver/devloop.c): step k is the SpMV and four ops (u_k,
 * which a diagonal preconditioner joins, else v, the preconditioner and
 * u_k; for k > 0, h = P^T g_k with its triangular solve; g_k and u_k
 * orthogonalised with M's new column in the same pass, which also makes
 * beta and the next step's f and c; the x and r update with the stopping
 * test), the dimension reduction the SpMV and two (omega; the update,
 * with the next f = P^T r in the same pass), and no host round trip.
 * With a diagonal preconditioner step k's update also makes u_{k+1}
 * (idr_update_vu), and where the matrix's format has idr_dots_apply
 * (PELLR without long slices) its SpMV makes step 0's M column and beta,
 * h or omega too, so a cycle of s+1 mat-vecs is 4s+3 launches with its
 * SpMVs on the GPU, and 3s+2 with both, not 5s+2 (14 for s = 4, not 22;
 * KRYLOV_IDR_FUSED=0 keeps the separate launches, for the tests that
 * compare and for timings). On a small system with a diagonal
 * preconditioner (kr_dev_persists: up to KR_PERSIST_MAX_ROWS rows of
 * similar lengths, A's CSR in backend memory) the backend's idr_persist runs
 * those fused steps for a whole batch in one launch, with grid-wide barriers in
 * place of the launches (KRYLOV_PERSIST=0 turns it off). Larger s keep the host
 * path below. */
#include "core/error.h"
#include "solver/multi.h"
#include "solver/solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The small dense work, on the host, allocated at setup. */
typedef struct idr_host {
    int s;
    double *M; /* s x s column-major, P^T G; lower triangular */
    double *f; /* s: P^T r */
    double *c; /* s: solution of the small system */
    double *h; /* s: projections P^T g */
} idr_host;

/* Device work: r, v, v^ = M^-1 v, then the blocks P, G, U of s columns. */
enum { R, V, VH, NVEC };

typedef struct idr_dev {
    double *r, *v, *vh, *P, *G, *U;
} idr_dev;

static double *column(double *B, int32_t n, int j) { return KR_WORK(B, n, j); }

/* R (s x s, column-major, upper) with R^T R = Gram, Gram's upper
 * triangle read; 0 where Gram is not positive definite (a column
 * dependent on the ones before it, numbered from 0 in *col). */
static int cholesky_upper(int s, const double *gram, double *R, int *col)
{
    for (int j = 0; j < s; j++) {
        for (int i = 0; i <= j; i++) {
            double v = gram[(size_t)j * s + i];
            for (int k = 0; k < i; k++)
                v -= R[(size_t)i * s + k] * R[(size_t)j * s + k];
            if (i < j) {
                R[(size_t)j * s + i] = v / R[(size_t)i * s + i];
            } else if (v > 0.0) {
                R[(size_t)j * s + j] = sqrt(v);
            } else {
                *col = j;
                return 0;
            }
        }
    }
    return 1;
}

/* P = Q R in place (CholQR): the Gram matrix P^T P in one download, then
 * q_j = (p_j - sum_{i<j} R_ij q_i) / R_jj. Sets *spread to the largest
 * over the smallest R_jj, a lower bound on cond(P) (Q's error grows with
 * cond(P)^2), not a bound on that error. */
static kr_status cholqr(kr_ctx *ctx, int32_t n, int s, double *P,
                        double *scratch, double *host, double *spread)
{
    const kr_backend_ops *op = ctx->ops;
    double *gram = host, *R = host + (size_t)s * s;
    for (int j = 0; j < s; j++)
        KR_TRY(op->gemv_t_dev(ctx, n, j + 1, P, n, column(P, n, j),
                              scratch + (size_t)j * s));
    KR_TRY(op->download(ctx, gram, scratch, (size_t)s * s * sizeof(double)));
    int bad = 0;
    if (!cholesky_upper(s, gram, R, &bad))
        return kr_fail(ctx, KR_ERR_BREAKDOWN,
                       "idr: shadow vector %d is dependent on the others",
                       bad + 1);
    double lo = INFINITY, hi = 0.0;
    for (int j = 0; j < s; j++) {
        double *pj = column(P, n, j), rjj = R[(size_t)j * s + j];
        if (j > 0)
            KR_TRY(op->gemv_n(ctx, n, j, P, n, R + (size_t)j * s, -1.0, pj));
        KR_TRY(op->axpby(ctx, n, 1.0 / rjj, pj, 0.0, pj));
        lo = fmin(lo, rjj);
        hi = fmax(hi, rjj);
    }
    *spread = hi / lo;
    return KR_OK;
}

/* P = s seeded random columns (uniform in [-1, 1), generated where they
 * live, the same numbers on every backend), orthonormalised by CholQR:
 * one round trip where Gram-Schmidt took s (s + 1) / 2, which on a GPU
 * cost more than a short solve. Tall random columns are nearly orthogonal
 * already (cond(P) = 1 + O(sqrt(s / n))), so one pass leaves Q
 * orthonormal to rounding; Q's error grows with cond(P)^2, so a second
 * pass runs where P is not that tall (n < 64 s) or R's diagonal shows
 * more than a 1.5 spread. Generating the columns on the host cost more
 * than the whole solve on a GPU. scratch: s * s doubles of backend
 * memory, overwritten. */
kr_status kr_idr_shadow_space(kr_ctx *ctx, int32_t n, int s, uint64_t seed0,
                              double *P, double *scratch)
{
    for (int j = 0; j < s; j++) {
        uint64_t seed = seed0 + 0x632be59bd9b4e019ull * (uint64_t)j;
        KR_TRY(ctx->ops->fill_random(ctx, n, seed, column(P, n, j)));
    }
    double *host = malloc(2 * (size_t)s * (size_t)s * sizeof *host);
    if (!host) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    double spread = 0.0;
    kr_status st = cholqr(ctx, n, s, P, scratch, host, &spread);
    if (st == KR_OK && (n < 64 * (int64_t)s || spread > 1.5))
        st = cholqr(ctx, n, s, P, scratch, host, &spread);
    free(host);
    return st;
}

/* c = M(k:s,k:s) \ f(k:s), M lower triangular */
static void solve_small(idr_host *w, int k)
{
    kr_idr_solve_c(w->s, w->M, w->f, w->c, k);
}

/* u_k = U(:,k:s) c + om M^-1 (r - G(:,k:s) c), g_k = A u_k: a vector of
 * the next space G_j, before bi-orthogonalisation. */
static kr_status new_direction(kr_solve_args *a, idr_dev *d, idr_host *w, int k,
                               double om)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    int rest = w->s - k;
    double *uk = column(d->U, n, k);
    KR_TRY(op->copy(ctx, d->v, d->r, (size_t)n * sizeof(double)));
    KR_TRY(op->gemv_n(ctx, n, rest, column(d->G, n, k), n, w->c, -1.0, d->v));
    KR_TRY(kr_pc(a, d->v, d->vh));
    KR_TRY(op->axpby(ctx, n, om, d->vh, w->c[0], uk));
    if (rest > 1)
        KR_TRY(op->gemv_n(ctx, n, rest - 1, column(d->U, n, k + 1), n, w->c + 1,
                          1.0, uk));
    return kr_spmv(a, 1.0, uk, 0.0, column(d->G, n, k));
}

/* Makes g_k orthogonal to p_0..p_{k-1} (u_k alongside, so g_k = A u_k
 * stays true) and fills column k of M. The coefficients solve the lower
 * triangular system M(0:k,0:k) alpha = P(:,0:k)^T g_k, which is what the
 * paper's one-at-a-time loop computes, with one reduction instead of k. */
static kr_status biorthogonalise(kr_ctx *ctx, int32_t n, idr_dev *d,
                                 idr_host *w, int k)
{
    const kr_backend_ops *op = ctx->ops;
    int s = w->s;
    double *gk = column(d->G, n, k), *uk = column(d->U, n, k);
    if (k > 0) {
        KR_TRY(op->gemv_t(ctx, n, k, d->P, n, gk, w->h));
        kr_idr_solve_h(s, w->M, w->h, k);
        KR_TRY(op->gemv_n(ctx, n, k, d->G, n, w->h, -1.0, gk));
        KR_TRY(op->gemv_n(ctx, n, k, d->U, n, w->h, -1.0, uk));
    }
    for (int i = 0; i < k; i++)
        w->M[i + k * s] = 0.0;
    return op->gemv_t(ctx, n, s - k, column(d->P, n, k), n, gk,
                      w->M + k + k * s);
}

/* One IDR cycle: s bi-orthogonal steps, then the dimension reduction.
 * *om carries omega from cycle to cycle. */
static kr_status cycle(kr_solve_args *a, kr_result *res, idr_dev *d,
                       idr_host *w, int *it, double *om)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    int s = w->s;
    double rnorm = 0.0, tr_tt[2];
    KR_TRY(op->gemv_t(ctx, n, s, d->P, n, d->r, w->f));
    for (int k = 0; k < s; k++) {
        solve_small(w, k);
        KR_TRY(new_direction(a, d, w, k, *om));
        KR_TRY(biorthogonalise(ctx, n, d, w, k));
        double mkk = w->M[k + k * s];
        if (mkk == 0.0) { /* g_k orthogonal to p_k: no step possible */
            res->reason = KR_DIVERGED_BREAKDOWN;
            return KR_OK;
        }
        double beta = w->f[k] / mkk;
        double rr[2]; /* x += beta u_k; r -= beta g_k; with r.r */
        KR_TRY(op->xr_update(ctx, n, beta, column(d->U, n, k),
                             column(d->G, n, k), a->x, d->r, NULL, NULL, rr));
        rnorm = sqrt(rr[1]);
        res->reason = kr_solver_check(a, res, ++*it, rnorm);
        if (res->reason != KR_ITERATING) return KR_OK;
        kr_idr_update_f(s, w->M, w->f, beta, k);
    }
    const double *xs[2] = {d->v, d->v}, *ys[2] = {d->r, d->v};
    KR_TRY(kr_pc(a, d->r, d->vh));
    KR_TRY(kr_spmv(a, 1.0, d->vh, 0.0, d->v));
    KR_TRY(op->dots(ctx, n, 2, xs, ys, tr_tt));
    if (tr_tt[0] == 0.0 || tr_tt[1] == 0.0) { /* omega would be 0 */
        res->reason = KR_DIVERGED_BREAKDOWN;
        return KR_OK;
    }
    *om = kr_idr_omega(tr_tt[0], tr_tt[1], rnorm, a->opt->kappa);
    double rr[2]; /* x += om vh; r -= om v; with r.r */
    KR_TRY(op->xr_update(ctx, n, *om, d->vh, d->v, a->x, d->r, NULL, NULL, rr));
    rnorm = sqrt(rr[1]);
    res->reason = kr_solver_check(a, res, ++*it, rnorm);
    return KR_OK;
}

/* ---- The device path: the scalars in backend memory (kr_idr_dev,
 * core/backend.h), batches in solver/devloop.c. The host enqueues the
 * same ops in the same order as cycle() runs its kernels, so on the CPU
 * backend the iterates are those of the host path bit for bit. */

/* One batch of device iterations: what the backend enqueues or replays. */
typedef struct idr_batch {
    kr_solve_args *a;
    idr_dev *d;
    const double *diag; /* the preconditioner's diagonal (NULL: identity) */
    int fused;          /* the preconditioner is diagonal: fused into the
                           vector ops */
    int chain;          /* fused, and step k's update makes u_{k+1}
                           (idr_update_vu) */
    int dots;           /* the format's SpMV makes h or omega too
                           (idr_dots_apply) */
    kr_csr_view csr;    /* persistent batches (idr_persist): A; else
                           nrows 0 */
    kr_idr_dev *st;     /* backend memory */
    int s, nb, phase;   /* phase: the cycle's step of the first iteration */
} idr_batch;

/* y = A x and what follows it: for k = 0 M's first column and beta
 * (idr_orth), for 0 < k < s h (idr_h), for k = s omega (idr_omega); in
 * one launch where the format has idr_dots_apply. */
static kr_status mat_vec_dev(idr_batch *c, int k, const double *x, double *y)
{
    kr_solve_args *a = c->a;
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    idr_dev *d = c->d;
    if (c->dots)
        return a->A->ops->idr_dots_apply(ctx, a->A->impl, k, x, y, d->P, d->r,
                                         c->st);
    KR_TRY(kr_spmv(a, 1.0, x, 0.0, y));
    if (k == c->s) return op->idr_omega(ctx, a->n, y, d->r, c->st);
    if (k == 0) return op->idr_orth(ctx, a->n, 0, d->P, d->G, d->U, c->st);
    return op->idr_h(ctx, a->n, k, d->P, d->G, c->st);
}

/* Step k of a cycle on the device: one mat-vec, no host round trip. */
static kr_status step_dev(idr_batch *c, int k)
{
    kr_solve_args *a = c->a;
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    idr_dev *d = c->d;
    double *uk = column(d->U, n, k), *gk = column(d->G, n, k);
    if (c->fused) {
        if (!c->chain || k == 0) /* else the last step's update made u_k */
            KR_TRY(op->idr_vu(ctx, n, k, d->r, d->G, d->U, c->diag, d->v, d->vh,
                              c->st));
    } else {
        KR_TRY(op->idr_v(ctx, n, k, d->r, d->G, d->v, c->st));
        KR_TRY(kr_pc(a, d->v, d->vh));
        KR_TRY(op->idr_u(ctx, n, k, d->vh, d->U, c->st));
    }
    KR_TRY(mat_vec_dev(c, k, uk, gk));
    if (k > 0) KR_TRY(op->idr_orth(ctx, n, k, d->P, d->G, d->U, c->st));
    if (c->chain && k + 1 < c->s)
        return op->idr_update_vu(ctx, n, k, uk, gk, a->x, d->r, d->G, d->U,
                                 c->diag, d->v, d->vh, c->st);
    /* the last step also makes v^ = M^-1 r for the dimension reduction
     * when M is diagonal */
    int last = c->fused && k == c->s - 1;
    return op->idr_update(ctx, n, k, uk, gk, a->x, d->r, c->diag,
                          last ? d->vh : NULL, d->P, c->st);
}

/* The dimension reduction on the device; it also makes the next cycle's
 * f = P^T r and c. */
static kr_status reduce_dev(idr_batch *c)
{
    kr_solve_args *a = c->a;
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    idr_dev *d = c->d;
    if (!c->fused) KR_TRY(kr_pc(a, d->r, d->vh));
    KR_TRY(mat_vec_dev(c, c->s, d->vh, d->v));
    return op->idr_update(ctx, n, c->s, d->vh, d->v, a->x, d->r, NULL, NULL,
                          d->P, c->st);
}

/* A batch as one persistent launch (idr_persist) */
static kr_status persist_dev(idr_batch *c)
{
    kr_solve_args *a = c->a;
    idr_dev *d = c->d;
    kr_idr_vectors w = {.d = c->diag,
                        .P = d->P,
                        .x = a->x,
                        .r = d->r,
                        .v = d->v,
                        .vh = d->vh,
                        .G = d->G,
                        .U = d->U};
    return a->ctx->ops->idr_persist(a->ctx, &c->csr, c->nb, c->phase, c->s, &w,
                                    c->st);
}

static kr_status idr_enqueue(void *arg)
{
    idr_batch *c = arg;
    if (c->csr.nrows) return persist_dev(c);
    for (int i = 0; i < c->nb; i++) {
        int k = (c->phase + i) % (c->s + 1);
        KR_TRY(k < c->s ? step_dev(c, k) : reduce_dev(c));
    }
    return KR_OK;
}

static int idr_reason(const void *host, kr_reason *why)
{
    const kr_idr_dev *st = host;
    if (st->h.stop != KR_DEV_STOP_BREAKDOWN) return 0;
    *why = KR_DIVERGED_BREAKDOWN;
    return 1;
}

/* Whether the fewer-launch steps may be used (KRYLOV_IDR_FUSED=0 turns
 * them off, for the tests that compare and for timings). */
static int idr_fusing(void) { return !kr_env_off("KRYLOV_IDR_FUSED"); }

/* Whether the matrix's format makes h and omega with its SpMV. */
static int idr_format_dots(const kr_solve_args *a)
{
    const kr_format_ops *f = a->A->ops;
    return f->idr_dots_ok && f->idr_dots_apply && f->idr_dots_ok(a->A->impl);
}

/* The iterations after the start-up (r, P, U = G = 0, M = I), with the
 * scalars on the device: f = P^T r and c for the first step are made
 * here, as cycle() makes them, and go up with M. */
static kr_status device_loop(kr_solve_args *a, kr_result *res, idr_dev *d,
                             idr_host *w)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int s = w->s;
    size_t ss = (size_t)s;
    KR_TRY(op->gemv_t(ctx, a->n, s, d->P, a->n, d->r, w->f));
    solve_small(w, 0);
    KR_TRY(op->upload(ctx, (kr_idr_dev *)a->dstate + 1, w->M,
                      (ss * ss + 3 * ss) * sizeof(double)));
    idr_batch c = {.a = a, .d = d, .st = a->dstate, .s = s};
    c.fused = a->P->ops->diagonal && a->P->ops->diagonal(a->P->impl, &c.diag);
    c.chain = c.fused && idr_fusing() && ctx->ops->idr_update_vu;
    c.dots = idr_fusing() && idr_format_dots(a);
    int whole = c.fused && ctx->ops->idr_persist && kr_dev_persists(a, &c.csr);
    if (!whole) c.csr.nrows = 0;
    kr_idr_dev hs;
    memset(&hs, 0, sizeof hs);
    kr_dev_head_init(a, &hs.h);
    hs.s = s;
    hs.om = 1.0;
    hs.kappa = a->opt->kappa;
    kr_dev_loop L = {.name = "idr",
                     .enqueue = idr_enqueue,
                     .arg = &c,
                     .nb = &c.nb,
                     .host = &hs,
                     .bytes = sizeof hs,
                     .reason = idr_reason,
                     .period = s + 1,
                     .phase = &c.phase,
                     .whole = whole};
    return kr_dev_loop_run(a, res, &L);
}

/* The device path takes s up to KR_IDR_DEV_MAX_S (by the option, which
 * sized the solver object's dstate) on a backend with the idr_* ops. */
static int use_device(const kr_solve_args *a)
{
    return a->ctx->ops->idr_update && a->dstate &&
           a->opt->s <= KR_IDR_DEV_MAX_S;
}

static kr_status iterate(kr_solve_args *a, kr_result *res, idr_dev *d,
                         idr_host *w)
{
    kr_ctx *ctx = a->ctx;
    int32_t n = a->n;
    int it = 0, s = w->s;
    double rnorm, om = 1.0;
    KR_TRY(kr_start_residual_norm(a, d->r, &rnorm)); /* r = b - A x */
    res->reason = kr_solver_check(a, res, 0, rnorm);
    if (res->reason != KR_ITERATING) return KR_OK;
    KR_TRY(kr_idr_shadow_space(a->ctx, a->n, s, a->opt->seed, d->P, d->G));
    /* the first cycle reads columns of U and G it has not written yet:
     * they start at 0 on every run, whatever the last solve left there;
     * one fill where U follows G (idr_solve's layout), a launch less a
     * column on the GPU */
    if (d->U == column(d->G, n, s) && (int64_t)n * 2 * s <= INT32_MAX)
        KR_TRY(ctx->ops->fill(ctx, n * 2 * s, 0.0, d->G));
    else
        for (int j = 0; j < s; j++) {
            KR_TRY(ctx->ops->fill(ctx, n, 0.0, column(d->U, n, j)));
            KR_TRY(ctx->ops->fill(ctx, n, 0.0, column(d->G, n, j)));
        }
    for (int i = 0; i < s * s; i++)
        w->M[i] = i % (s + 1) == 0; /* M = I */
    if (use_device(a)) return device_loop(a, res, d, w);
    while (res->reason == KR_ITERATING)
        KR_TRY(cycle(a, res, d, w, &it, &om));
    return KR_OK;
}

/* P cannot hold more than n independent vectors */
int kr_idr_shadow_dim(const kr_solve_options *o, int32_t n)
{
    return o->s < n ? o->s : (int)n;
}

static kr_status idr_solve(kr_solve_args *a, kr_result *res)
{
    int s = kr_idr_shadow_dim(a->opt, a->n);
    size_t ss = (size_t)s;
    idr_host w = {.s = s, .M = a->hwork};
    double *work = a->work;
    w.f = w.M + ss * ss;
    w.c = w.f + ss;
    w.h = w.c + ss;
    idr_dev d = {.r = column(work, a->n, R),
                 .v = column(work, a->n, V),
                 .vh = column(work, a->n, VH),
                 .P = column(work, a->n, NVEC),
                 .G = column(work, a->n, NVEC + s),
                 .U = column(work, a->n, NVEC + 2 * s)};
    return iterate(a, res, &d, &w);
}

/* r, v, v^, then P, G and U (s columns each); host: M (s x s), f, c, h */
static void idr_workspace(const kr_solve_options *o, int32_t n, int *nvec,
                          size_t *nhost)
{
    size_t ss = (size_t)kr_idr_shadow_dim(o, n);
    *nvec = NVEC + 3 * (int)ss;
    *nhost = ss * ss + 3 * ss + 1;
}

/* Passes of step k of a cycle on the host path (rest = s - k columns
 * left). */
static double idr_step_passes(int s, int k)
{
    int rest = s - k;
    double p = 2 + (rest + 2) + 3 + (rest > 1 ? rest + 1 : 0); /* direction */
    if (k > 0) p += (k + 1) + 2.0 * (k + 2); /* bi-orthogonalisation */
    return p + (s - k + 1) + 6; /* column of M, x and r update with r.r */
}

static void idr_host_model(int s, kr_iter_model *m)
{
    double passes = s + 1 + 8; /* f = P^T r; reduction: dots 2, update 6 */
    for (int k = 0; k < s; k++)
        passes += idr_step_passes(s, k);
    m->spmvs = 1;
    m->pcs = 1;
    m->vectors = passes / (s + 1);
    snprintf(m->text, sizeof m->text,
             "idr(%d): per mat-vec (= iteration) 1 SpMV, 1 preconditioner; a "
             "cycle of s+1 mat-vecs moves %.0f vector passes (f = P^T r s+1; "
             "step k: copy 2, gemv_n (s-k)+2, axpby 3, gemv_n (s-k)+1, "
             "bi-orthogonalisation 3k+5 when k > 0, gemv_t (s-k)+1, x and r "
             "update with r.r 6; reduction: dots 2, update 6): %.2f per "
             "iteration",
             s, passes, m->vectors);
}

/* Step k on the device path: the u_k op (fused: r, G(:,k:s), U(:,k+1:s),
 * u_k read and written, d when jacobi; r not read again for k > 0 where
 * step k-1's update makes u_k (chain: idr_update_vu, unless
 * KRYLOV_IDR_FUSED=0); else idr_v rest + 2 and
 * idr_u rest + 2), idr_h k + 1, idr_orth 1 + rest (+ g_k written,
 * G(:,0:k), u_k twice, U(:,0:k) when k > 0), idr_update 6 (+ z = d .* r
 * on the last step when fused). */
static double idr_dev_step(int s, int k, int fused, int chain, int jac)
{
    int rest = s - k;
    double p = fused ? 2.0 * rest + 2 + jac - (chain && k > 0) : 2.0 * rest + 4;
    if (k > 0) p += (k + 1) + (3 + 2.0 * k);
    p += 1 + rest + 6;
    return p + (fused && k == s - 1 ? 1 + jac : 0);
}

/* idr_iter_model's words for the u_k op of a step */
static const char *idr_u_text(int fused, int chain, int jac)
{
    if (!fused) return "(v, then u_k) 2(s-k)+4";
    if (!chain) return jac ? "with d .* v 2(s-k)+3" : "2(s-k)+2";
    return jac ? "with d .* v 2(s-k)+3, 1 less for k > 0 (made in the last "
                 "step's update)"
               : "2(s-k)+2, 1 less for k > 0 (made in the last step's update)";
}

/* With a diagonal preconditioner (none, jacobi) the device path fuses it
 * into the u_k op and the last step's update, counted here in full. A
 * format's idr_dots_apply (PELLR without long slices) and the persistent
 * batches (idr_persist) move one pass less for step 0's M column, h and
 * omega (g_k or v is not read back), which this model, blind to the
 * format and the size, does not subtract. */
static void idr_iter_model(const kr_solve_options *o, int32_t n, kr_pc_kind pc,
                           int iterations, kr_iter_model *m)
{
    (void)iterations;
    int s = kr_idr_shadow_dim(o, n);
    if (s > KR_IDR_DEV_MAX_S) {
        idr_host_model(s, m);
        return;
    }
    int jac = pc == KR_PC_DIAGONAL, fused = pc != KR_PC_GENERAL;
    int chain = fused && idr_fusing();
    double passes = 2 + 6 + s; /* reduction: omega 2, update with P^T r */
    for (int k = 0; k < s; k++)
        passes += idr_dev_step(s, k, fused, chain, jac);
    m->spmvs = 1;
    m->pcs = fused ? 0 : 1;
    m->vectors = passes / (s + 1);
    snprintf(
        m->text, sizeof m->text,
        "idr(%d), scalars on the device: per mat-vec (= iteration) 1 "
        "SpMV%s; a cycle of s+1 mat-vecs moves %.0f vector passes (step "
        "k: u_k %s, h = P^T g_k k+1 when k > 0, g_k and u_k "
        "orthogonalised with M's column (s-k)+1 (+ 2k+3 when k > 0), x "
        "and r update 6%s; reduction: omega 2, update with f = P^T r "
        "6+s): %.2f per iteration (a fused SpMV, PELLR's or the persistent "
        "batches', makes step 0's M column, h and omega with it: 1 pass "
        "less each)",
        s, fused ? "" : ", 1 preconditioner", passes,
        idr_u_text(fused, chain, jac),
        fused ? (jac ? ", + d .* r 2 on the last" : ", + z = r 1 on the last")
              : "",
        m->vectors);
}

static size_t idr_dstate_bytes(const kr_solve_options *o)
{
    return o->s >= 1 && o->s <= KR_IDR_DEV_MAX_S ? kr_idr_dev_bytes(o->s) : 0;
}

const kr_solver_ops kr_idr_ops = {
    .name = "idr",
    .summary = "IDR(s) with bi-orthogonalisation, right-preconditioned",
    .solve = idr_solve,
    .workspace = idr_workspace,
    .iter_model = idr_iter_model,
    .dstate_bytes = idr_dstate_bytes,
    .solve_multi = kr_idr_solve_multi,
    .workspace_multi = kr_idr_workspace_multi,
};
