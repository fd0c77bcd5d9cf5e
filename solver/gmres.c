/* GMRES(m) (Saad & Schultz 1986), restarted and right-preconditioned: it
 * solves A M^-1 u = b with x = M^-1 u, so the residual it minimises is the
 * unpreconditioned b - A x. Arnoldi by classical Gram-Schmidt with one
 * re-orthogonalisation (two gemv_t/gemv_n pairs per step, which suits the
 * GPU), Givens rotations; |g_{j+1}| is the residual estimate tested at
 * each step. Only V is stored: M^-1 is applied once to V y at the end of a
 * cycle. Every cycle starts from the true residual b - A x.
 *
 * With the backend's gm_* ops (restart <= KR_GM_DEV_MAX_M = 32) H, the
 * rotations and g live in backend memory (kr_gm_dev, core/backend.h): a
 * step enqueues its Gram-Schmidt passes with the coefficients left on the
 * device (h = V^T v; v -= V h with h2 = V^T v in the same pass; v -= V h2
 * with ||v||, the rotations and the test: three launches on the GPU up to
 * 32 columns), then gm_scale;
 * the host reads the state back once per batch of 1, 2, 4, ... 16 steps
 * and runs the stopping test on each estimate, and at the end of a cycle
 * takes H's first k columns and g back to solve R y = g and update x.
 * Where M is diagonal (Jacobi, or none) and the matrix's format has a
 * fused step (gm_dir_apply: PELLR without long slices), step j's SpMV
 * also scales: it reads step j-1's vector u unscaled (in t or z, in
 * turn), writes v_j = u / ||u|| into V and multiplies A (d .* v_j), the
 * same products as gm_scale, the preconditioner and the SpMV, and it
 * makes the first projection h = V^T w as its rows finish: three
 * launches a step instead of six. KRYLOV_GMRES_FUSED=1 leaves the
 * projection to gemv_t_dev (four launches, bit for bit the iterates of
 * the separate ops), 0 turns the fusion off; the tests compare them.
 * On a small system (kr_dev_persists: up to KR_PERSIST_MAX_ROWS rows of
 * similar lengths, A's CSR in backend memory, M diagonal) the backend's
 * gm_persist runs those fused steps for a whole batch in one launch, grid-wide
 * barriers in place of the launches, and every batch is a whole cycle
 * (KRYLOV_PERSIST=0 turns it off). */
#include "core/error.h"
#include "solver/multi.h"
#include "solver/solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The small dense work, on the host, allocated at setup. */
typedef struct gm_host {
    int m;
    double *H;     /* (m+1) x m column-major; upper triangle becomes R */
    double *cs;    /* m rotation cosines */
    double *sn;    /* m rotation sines */
    double *g;     /* m+1: the rotated right-hand side beta e_1 */
    double *y;     /* m: coefficients of the update */
    double *h2;    /* m+1: second Gram-Schmidt pass */
    double *state; /* the device path's copy of kr_gm_dev, H, cs, sn, g */
} gm_host;

static double *col(const gm_host *w, int j)
{
    return w->H + (size_t)j * (size_t)(w->m + 1);
}

/* r = b - A x into r, and ||r|| */
static kr_status residual(kr_solve_args *a, double *r, double *beta)
{
    double rr;
    KR_TRY(kr_start_residual(a, r, &rr));
    *beta = sqrt(rr);
    return KR_OK;
}

/* v_{j+1} = A M^-1 v_j orthogonalised against v_0..v_j (not yet
 * normalised); column j of H gets the coefficients and the norm. */
static kr_status arnoldi(kr_solve_args *a, gm_host *w, double *V, int j,
                         double *z)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    int64_t ld = n;
    double *v = KR_WORK(V, n, j + 1), *h = col(w, j), vv;
    const double *vs[1] = {v};
    KR_TRY(kr_pc(a, KR_WORK(V, n, j), z));
    KR_TRY(kr_spmv(a, 1.0, z, 0.0, v));
    KR_TRY(op->gemv_t(ctx, n, j + 1, V, ld, v, h));
    KR_TRY(op->gemv_n(ctx, n, j + 1, V, ld, h, -1.0, v));
    KR_TRY(op->gemv_t(ctx, n, j + 1, V, ld, v, w->h2));
    KR_TRY(op->gemv_n(ctx, n, j + 1, V, ld, w->h2, -1.0, v));
    for (int i = 0; i <= j; i++)
        h[i] += w->h2[i];
    KR_TRY(op->dots(ctx, n, 1, vs, vs, &vv));
    h[j + 1] = sqrt(vv);
    return KR_OK;
}

/* 1 if H(j+1,j) is negligible against column j: a happy breakdown. */
static int is_happy(const gm_host *w, int j)
{
    return kr_gm_is_happy(col(w, j), j);
}

/* The rotations of column j (kr_gm_givens). Returns 0 if R(j,j) would be
 * 0. */
static int givens(gm_host *w, int j)
{
    return kr_gm_givens(col(w, j), w->cs, w->sn, w->g, j);
}

/* x += M^-1 V_k y with R y = g (k columns); t and z are work vectors. */
static kr_status update_x(kr_solve_args *a, gm_host *w, const double *V, int k,
                          double *t, double *z)
{
    kr_ctx *ctx = a->ctx;
    int32_t n = a->n;
    for (int i = k - 1; i >= 0; i--) {
        double s = w->g[i];
        for (int l = i + 1; l < k; l++)
            s -= col(w, l)[i] * w->y[l];
        w->y[i] = s / col(w, i)[i];
    }
    KR_TRY(ctx->ops->axpby(ctx, n, w->y[0], V, 0.0, t));
    if (k > 1)
        KR_TRY(ctx->ops->gemv_n(ctx, n, k - 1, KR_WORK(V, n, 1), n, w->y + 1,
                                1.0, t));
    KR_TRY(kr_pc(a, t, z));
    return ctx->ops->axpby(ctx, n, 1.0, z, 1.0, a->x);
}

/* One cycle of at most m steps from v_0 = r / beta (r in V's column 0).
 * Updates x unless a norm became NaN/Inf; *happy says how it ended. */
static kr_status cycle(kr_solve_args *a, kr_result *res, gm_host *w, double *V,
                       int *it, double beta, int *happy)
{
    kr_ctx *ctx = a->ctx;
    int32_t n = a->n;
    double *t = KR_WORK(V, n, w->m + 1), *z = KR_WORK(V, n, w->m + 2);
    int k = 0;
    KR_TRY(ctx->ops->axpby(ctx, n, 1.0 / beta, V, 0.0, V));
    w->g[0] = beta;
    *happy = 0;
    for (int j = 0; j < w->m; j++) {
        KR_TRY(arnoldi(a, w, V, j, z));
        double hn = col(w, j)[j + 1];
        *happy = is_happy(w, j);
        if (!givens(w, j)) { /* singular H: no better iterate here */
            res->reason = KR_DIVERGED_BREAKDOWN;
            break;
        }
        k = j + 1;
        res->reason = kr_solver_check(a, res, ++*it, fabs(w->g[j + 1]));
        if (res->reason != KR_ITERATING || *happy || k == w->m) break;
        double *v = KR_WORK(V, n, j + 1);
        KR_TRY(ctx->ops->axpby(ctx, n, 1.0 / hn, v, 0.0, v));
    }
    if (k == 0 || res->reason == KR_DIVERGED_NANORINF) return KR_OK;
    return update_x(a, w, V, k, t, z);
}

/* The CUDA graphs of one run: every cycle enqueues the same batches of
 * steps (j0, nb), so batch i of a cycle is captured once, in the second
 * cycle (a solve of one cycle pays no capture), and replayed after. */
#define GM_GRAPHS 12
typedef struct gm_graphs {
    int on;    /* library operators, no monitor */
    int cycle; /* cycles begun in this run */
    void *slot[GM_GRAPHS];
    int j0[GM_GRAPHS], nb[GM_GRAPHS];
} gm_graphs;

/* How much of a device step the format's gm_dir_apply takes:
 * KRYLOV_GMRES_FUSED=0, 1 or 2 (the default) picks the level. */
enum gm_fusion {
    GM_SEPARATE,   /* preconditioner, SpMV, gemv_t_dev, ..., gm_scale */
    GM_FUSED,      /* gm_scale, a diagonal preconditioner and the SpMV */
    GM_FUSED_PROJ, /* those and the first projection, h = V^T w */
    GM_PERSIST,    /* the whole step, a batch a launch (gm_persist) */
};

/* The device path of a run: how far its steps fuse, the diagonal M (d;
 * NULL: none) of the fused ones, and A's CSR for the persistent ones. */
typedef struct gm_path {
    enum gm_fusion fused;
    const double *d;
    kr_csr_view csr;
} gm_path;

/* Steps j0 .. j0+nb-1 of a cycle on the device: what is enqueued at once. */
typedef struct gm_batch {
    kr_solve_args *a;
    gm_host *w;
    double *V, *t, *z;
    kr_gm_dev *s; /* backend memory, H etc. after it */
    int j0, nb;
    const gm_path *p;
    const double *r;       /* the cycle's r: a persistent step 0's input */
    const kr_gm_dev *head; /* a persistent cycle's state, not yet in s */
    double beta;           /* ||r||, g's first entry */
} gm_batch;

/* Step j's new vector A M^-1 v_j, not yet orthogonalised: V's column j+1,
 * or in the fused step t or z (step j + 1 scales it into V's column j + 1
 * as it multiplies; the Gram-Schmidt passes read only columns 0..j); the
 * full fusion also makes h = V^T of it. */
static kr_status gm_matvec(gm_batch *c, int j, double *h, double **out)
{
    kr_solve_args *a = c->a;
    int32_t n = a->n;
    double *vj = KR_WORK(c->V, n, j);
    if (!c->p->fused) {
        *out = KR_WORK(c->V, n, j + 1);
        KR_TRY(kr_pc(a, vj, c->z));
        return kr_spmv(a, 1.0, c->z, 0.0, *out);
    }
    *out = j % 2 ? c->t : c->z;
    kr_gm_dir g = {.u = j % 2 ? c->z : c->t, /* step j - 1's output */
                   .d = c->p->d,
                   .v = vj,
                   .w = *out,
                   .V = c->p->fused == GM_FUSED_PROJ ? c->V : NULL,
                   .k = j + 1,
                   .h = h,
                   .s = c->s};
    return a->A->ops->gm_dir_apply(a->ctx, a->A->impl, &g);
}

static kr_status gm_enqueue(void *arg)
{
    gm_batch *c = arg;
    kr_solve_args *a = c->a;
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n, m = c->w->m;
    double *H = kr_gm_dev_H(c->s), *V = c->V;
    double *h2 = H + (size_t)(m + 1) * (size_t)m + 3 * (size_t)m + 1;
    const gm_path *p = c->p;
    if (p->fused == GM_PERSIST) {
        kr_gm_launch g = {.A = &p->csr,
                          .m = m,
                          .steps = c->nb,
                          .d = p->d,
                          .V = V,
                          .t = c->t,
                          .z = c->z,
                          .b = a->b,
                          .x = a->x,
                          .s = c->s,
                          .r = c->r,
                          .head = c->head,
                          .beta = c->beta};
        c->head = NULL; /* the next batch reads the state from s */
        return op->gm_persist(ctx, &g);
    }
    for (int j = c->j0; j < c->j0 + c->nb; j++) {
        double *v, *h = H + (size_t)j * (size_t)(m + 1);
        KR_TRY(gm_matvec(c, j, h, &v));
        if (p->fused != GM_FUSED_PROJ)
            KR_TRY(op->gemv_t_dev(ctx, n, j + 1, V, n, v, h));
        KR_TRY(op->gemv_nt_dev(ctx, n, j + 1, V, n, h, -1.0, v, h2));
        KR_TRY(op->gm_update_step(ctx, n, j + 1, V, n, h2, v, c->s));
        if (!p->fused) KR_TRY(op->gm_scale(ctx, n, v, c->s));
    }
    return KR_OK;
}

/* The host's test on the norms the last batch recorded (from *done on);
 * ends the cycle (*end) as cycle() would. */
static kr_status gm_account(kr_solve_args *a, kr_result *res,
                            const kr_gm_dev *hs, int *done, int *it, int *end,
                            int *happy)
{
    int got = hs->h.done - *done;
    for (int i = 0; i < got && res->reason == KR_ITERATING; i++) {
        a->defer_interrupt = i + 1 < got;
        double rn = hs->h.rnorm[(*done + i) % KR_BATCH_MAX];
        res->reason = kr_solver_check(a, res, ++*it, rn);
        a->defer_interrupt = 0;
        if (res->reason != KR_ITERATING && i + 1 < got)
            return kr_fail(a->ctx, KR_ERR_DEVICE,
                           "gmres: the host stopped at iteration %d, the "
                           "device ran on (internal error)",
                           a->it0 + *it);
    }
    *done = hs->h.done;
    int stop = hs->h.stop;
    *end = res->reason != KR_ITERATING || stop != KR_DEV_RUNNING;
    if (res->reason != KR_ITERATING) return KR_OK;
    if (stop == KR_DEV_STOP_BREAKDOWN) res->reason = KR_DIVERGED_BREAKDOWN;
    if (stop == KR_DEV_STOP_HAPPY) *happy = 1;
    if (stop == KR_DEV_STOP_CHECK)
        return kr_fail(a->ctx, KR_ERR_DEVICE,
                       "gmres: the device stopped at iteration %d, the host "
                       "test did not (internal error)",
                       a->it0 + *it);
    return KR_OK;
}

/* Batch number bi of the cycle: replayed, captured or run directly. */
static kr_status gm_run_batch(kr_ctx *ctx, gm_graphs *gg, int bi, gm_batch *c)
{
    if (!gg->on || gg->cycle < 2 || bi >= GM_GRAPHS) return gm_enqueue(c);
    if (!gg->slot[bi]) {
        gg->j0[bi] = c->j0;
        gg->nb[bi] = c->nb;
    } else if (gg->j0[bi] != c->j0 || gg->nb[bi] != c->nb) {
        return gm_enqueue(c); /* cut short by maxit: another batch */
    }
    return ctx->ops->replay(ctx, &gg->slot[bi], gm_enqueue, c);
}

/* Bytes of the device state through g (its h2 left out) */
static size_t gm_state_bytes(int m)
{
    return kr_gm_dev_bytes(m) - (size_t)(m + 1) * sizeof(double);
}

/* cycle() with H, the rotations and g on the device: batches of steps,
 * one readback each, then H's first k columns and g come back for the
 * update of x on the host, unless the persistent batch ended the cycle
 * itself: then *rr_end is r.r of the new r = b - A x it left in t (else
 * -1). The fused steps (p->fused) take r in t (the persistent ones in r),
 * and step 0 scales it into V's column 0 with inv = 1 / beta. */
static kr_status cycle_dev(kr_solve_args *a, kr_result *res, gm_host *w,
                           double *V, const double *r, int *it, double beta,
                           int *happy, gm_graphs *gg, const gm_path *p,
                           double *rr_end)
{
    kr_ctx *ctx = a->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = a->n;
    int m = w->m;
    double *t = KR_WORK(V, n, m + 1), *z = KR_WORK(V, n, m + 2);
    kr_gm_dev hs;
    memset(&hs, 0, sizeof hs);
    kr_dev_head_init(a, &hs.h);
    hs.m = m;
    gm_batch c = {.a = a,
                  .w = w,
                  .V = V,
                  .t = t,
                  .z = z,
                  .s = a->dstate,
                  .p = p,
                  .r = r,
                  .beta = beta};
    double *dH = kr_gm_dev_H(c.s);
    double *dg = dH + (size_t)(m + 1) * (size_t)m + 2 * (size_t)m;
    if (p->fused) {
        hs.inv = 1.0 / beta;
    } else {
        KR_TRY(ctx->ops->axpby(ctx, n, 1.0 / beta, V, 0.0, V));
    }
    if (p->fused == GM_PERSIST) {
        c.head = &hs; /* comes with the launch */
    } else {
        KR_TRY(op->upload(ctx, c.s, &hs, sizeof hs));
        KR_TRY(op->upload(ctx, dg, &beta, sizeof beta));
    }
    *happy = 0;
    gg->cycle++;
    /* The first cycle's batches grow as kr_dev_loop_run's; later cycles
     * run whole (or as much as the cap allows), one readback a cycle:
     * at most m - 1 steps that do nothing at the end of the solve. A
     * persistent batch stops with the device's test, so it runs whole
     * from the first cycle. */
    const int cap = kr_dev_batch_cap(KR_BATCH_MAX);
    int done = 0, end = 0;
    int whole = gg->cycle > 1 || p->fused == GM_PERSIST;
    int batch = whole && !a->opt->monitor ? cap : 1;
    for (int bi = 0; !end; bi++) {
        int left = a->opt->maxit - (a->it0 + *it);
        c.nb = batch < left ? batch : left;
        if (c.nb > m - c.j0) c.nb = m - c.j0;
        KR_TRY(gm_run_batch(ctx, gg, bi, &c));
        /* the state through g in one round trip: the cycle's last batch
         * needs H and g, and which batch that is shows only in it */
        KR_TRY(op->download(ctx, w->state, c.s, gm_state_bytes(m)));
        memcpy(&hs, w->state, sizeof hs);
        KR_TRY(gm_account(a, res, &hs, &done, it, &end, happy));
        c.j0 += c.nb;
        if (!a->opt->monitor && batch < cap)
            batch = 2 * batch < cap ? 2 * batch : cap;
    }
    int k = hs.j;
    *rr_end = hs.ended ? hs.rr : -1.0;
    if (hs.ended || k == 0 || res->reason == KR_DIVERGED_NANORINF) return KR_OK;
    /* H, cs, sn, g lie in the same order on both sides */
    const double *sH = kr_gm_dev_H((kr_gm_dev *)w->state);
    memcpy(w->H, sH, (size_t)(m + 1) * (size_t)k * sizeof(double));
    memcpy(w->g, sH + (dg - dH), (size_t)k * sizeof(double));
    return update_x(a, w, V, k, t, z);
}

/* How far the device steps fuse: a diagonal preconditioner (p->d; NULL:
 * none) needed, then the persistent batches where kr_dev_persists allows, else
 * the format's SpMV (gm_dir_apply) where it has one. */
static void gm_fusable(const kr_solve_args *a, gm_path *p)
{
    const kr_format_ops *f = a->A->ops;
    const kr_precond_ops *pc = a->P->ops;
    const char *env = getenv("KRYLOV_GMRES_FUSED");
    memset(p, 0, sizeof *p);
    if (!(pc->diagonal && pc->diagonal(a->P->impl, &p->d))) {
        p->d = NULL;
        return;
    }
    if (a->ctx->ops->gm_persist && kr_dev_persists(a, &p->csr)) {
        p->fused = GM_PERSIST;
        return;
    }
    if (!(f->gm_dir_ok && f->gm_dir_apply && f->gm_dir_ok(a->A->impl)) ||
        kr_env_off("KRYLOV_GMRES_FUSED"))
        p->d = NULL;
    else
        p->fused = env && !strcmp(env, "1") ? GM_FUSED : GM_FUSED_PROJ;
}

/* Restarts until the stopping test ends it. After a cycle the true
 * residual decides: below the tolerance it ends the solve (as a happy
 * breakdown if the cycle ended in one), otherwise the next cycle starts
 * from it. res->rnorm stays the last estimate tested, as in the history;
 * the true residual is reported as res->true_rnorm. */
static kr_status iterate(kr_solve_args *a, kr_result *res, gm_host *w,
                         double *V)
{
    int it = 0, happy = 0;
    double beta;
    int dev = a->ctx->ops->gm_step && a->dstate && w->m <= KR_GM_DEV_MAX_M;
    gm_path p;
    memset(&p, 0, sizeof p);
    if (dev) gm_fusable(a, &p);
    /* the fused steps want r in t, outside V (cycle_dev); the persistent
     * ones take it where it is: the first cycle's in the true residual's
     * vector, from the solve's first round trip, with no copy */
    double *t = KR_WORK(V, a->n, w->m + 1);
    double *r = p.fused == GM_PERSIST ? a->check : p.fused ? t : V;
    gm_graphs gg;
    memset(&gg, 0, sizeof gg);
    /* a user's callback may do what a capture cannot; a monitor makes
     * every batch one step; a persistent batch is one launch already */
    gg.on = !kr_matrix_is_user(a->A) && !kr_precond_is_user(a->P) &&
            !a->opt->monitor && p.fused != GM_PERSIST;
    kr_status st = KR_OK;
    KR_TRY(residual(a, r, &beta));
    res->reason = kr_solver_check(a, res, 0, beta);
    while (res->reason == KR_ITERATING) {
        double rr = -1.0;
        if (dev)
            st = cycle_dev(a, res, w, V, r, &it, beta, &happy, &gg, &p, &rr);
        else
            st = cycle(a, res, w, V, &it, beta, &happy);
        if (st != KR_OK) break;
        if (res->reason != KR_ITERATING) {
            /* the device's residual of the new x is the solve's true one */
            kr_solver_end_residual(a, rr);
            break;
        }
        if (rr >= 0.0) {
            beta = sqrt(rr); /* r is in t already */
            r = t;
        } else {
            st = residual(a, r, &beta);
        }
        if (st != KR_OK) break;
        if (!isfinite(beta))
            res->reason = KR_DIVERGED_NANORINF;
        else if (kr_solver_converged(a, beta))
            res->reason = happy                  ? KR_CONVERGED_HAPPY_BREAKDOWN
                          : beta <= a->opt->atol ? KR_CONVERGED_ATOL
                                                 : KR_CONVERGED_RTOL;
    }
    for (int i = 0; i < GM_GRAPHS; i++)
        a->ctx->ops->replay_free(a->ctx, gg.slot[i]);
    return st;
}

static kr_status gmres_solve(kr_solve_args *a, kr_result *res)
{
    int m = a->opt->restart;
    size_t mm = (size_t)m;
    gm_host w = {.m = m, .H = a->hwork};
    w.cs = w.H + (mm + 1) * mm;
    w.sn = w.cs + mm;
    w.g = w.sn + mm;
    w.y = w.g + mm + 1;
    w.h2 = w.y + mm;
    w.state = w.h2 + mm + 1; /* gmres_workspace's room for it */
    return iterate(a, res, &w, a->work);
}

/* V's m+1 columns, then t and z; H, cs, sn, g, y and h2 on the host */
static void gmres_workspace(const kr_solve_options *o, int32_t n, int *nvec,
                            size_t *nhost)
{
    (void)n;
    size_t mm = (size_t)o->restart;
    *nvec = o->restart + 3;
    *nhost = (mm + 1) * mm + 5 * mm + 2;
    if (o->restart <= KR_GM_DEV_MAX_M)
        *nhost += kr_gm_dev_bytes(o->restart) / sizeof(double);
}

static size_t gmres_dstate_bytes(const kr_solve_options *o)
{
    return o->restart <= KR_GM_DEV_MAX_M ? kr_gm_dev_bytes(o->restart) : 0;
}

/* Passes of one cycle of k Arnoldi steps: step j does two classical
 * Gram-Schmidt passes (gemv_t j+2, gemv_n j+3), a norm 1 and a scaling 2;
 * the cycle adds its residual (copy 2, norm 1), v0 scaling 2 and the
 * update x += M^-1 V y (t = y0 v0 2, gemv_n k+1 when k > 1, x += z 3).
 * A format's fused step (gm_dir_apply) moves 4 passes a step less, which
 * this model, blind to the format, does not subtract: its SpMV gathers u
 * and d instead of z (+1) and writes v (+1), the scaling (-2) and the
 * diagonal preconditioner (z = d .* v, -3; none: the copy z = v, -2, and
 * no d) go, and the first projection reads w where the SpMV makes it
 * (-1; KRYLOV_GMRES_FUSED=1: 3 passes less). The persistent batches
 * (gm_persist) move those passes and read V's j + 1 columns and w once
 * more a step (w -= V h and h2 = V^T w after it are separate sweeps),
 * from L2 on the systems small enough to take them. */
static double gmres_cycle_passes(int k)
{
    return 2.0 * k * (k - 1) + 13.0 * k + 10 + (k > 1 ? k + 1 : 0);
}

static void gmres_iter_model(const kr_solve_options *o, int32_t n,
                             kr_pc_kind pc, int iterations, kr_iter_model *m)
{
    (void)n, (void)pc;
    int restart = o->restart, its = iterations < 1 ? restart : iterations;
    int full = its / restart, rest = its % restart;
    int cycles = full + (rest > 0);
    double passes = full * gmres_cycle_passes(restart) +
                    (rest ? gmres_cycle_passes(rest) : 0);
    m->spmvs = (double)(its + cycles) / its;
    m->pcs = m->spmvs;
    m->vectors = passes / its;
    snprintf(m->text, sizeof m->text,
             "gmres(%d): Arnoldi step j: 1 preconditioner, 1 SpMV, 4j + 13 "
             "vector passes (two Gram-Schmidt passes gemv_t j+2 and gemv_n "
             "j+3, norm 1, scaling 2); each cycle of k steps adds 1 SpMV and "
             "copy 2 + norm 1 (residual), scaling 2, 1 preconditioner and "
             "5 + (k+1) passes (update of x); a format's fused step, "
             "PELLR's, moves 4 passes a step fewer; averaged over the %d "
             "iterations of this solve: %.2f SpMVs, %.2f vector passes",
             restart, its, m->spmvs, m->vectors);
}

const kr_solver_ops kr_gmres_ops = {
    .name = "gmres",
    .summary = "restarted GMRES(m), right-preconditioned, for any A",
    .solve = gmres_solve,
    .workspace = gmres_workspace,
    .dstate_bytes = gmres_dstate_bytes,
    .iter_model = gmres_iter_model,
    .solve_multi = kr_gmres_solve_multi,
    .workspace_multi = kr_gmres_workspace_multi,
};
