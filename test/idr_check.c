/* IDR(s)'s device-scalar ops against plain host loops (idr_check.h). */
#include "idr_check.h"

#include "core/ctx.h"
#include "core/vec.h"
#include "spmv/format.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The vectors of one check: n entries each, P, G and U s columns. */
enum { R, X, V, VH, D, Z, P, G, U, NV };

typedef struct idr_data {
    kr_ctx *ctx;
    int32_t n;
    int s;
    double *h[NV];      /* host values                          */
    double *dv[NV];     /* backend copies                       */
    double *out;        /* a downloaded block                   */
    unsigned char *img; /* host image of the state: kr_idr_dev, M, f, c, h */
    kr_idr_dev *ds;     /* the state in backend memory          */
    size_t bytes;
} idr_data;

static size_t count(const idr_data *t, int k)
{
    return (size_t)t->n * (k >= P ? (size_t)t->s : 1);
}

static kr_idr_dev *image(idr_data *t) { return (kr_idr_dev *)t->img; }

static double *col(idr_data *t, int k, int j)
{
    return t->h[k] + (size_t)j * (size_t)t->n;
}

/* Fresh random values everywhere; the state: M with a dominant
 * diagonal, f, c, h random, the iteration slot about to wrap. */
static void data_init(idr_data *t, kr_ctx *ctx, int32_t n, int s, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    t->ctx = ctx, t->n = n, t->s = s;
    uint64_t r = seed;
    for (int k = 0; k < NV; k++) {
        t->h[k] = malloc((count(t, k) + 1) * sizeof(double));
        ck_assert_ptr_nonnull(t->h[k]);
        for (size_t i = 0; i < count(t, k); i++)
            t->h[k][i] = kt_rand_uniform(&r);
        ck_assert_int_eq(kr_dev_zeros(ctx, count(t, k) + 1, &t->dv[k]), KR_OK);
    }
    for (int32_t i = 0; i < n; i++)
        t->h[D][i] = 1.5 + t->h[D][i]; /* a positive diagonal */
    t->out = malloc((count(t, P) + 1) * sizeof(double));
    t->bytes = kr_idr_dev_bytes(s);
    t->img = calloc(1, t->bytes);
    ck_assert(t->out && t->img);
    kr_idr_dev *st = image(t);
    st->s = s, st->om = 0.75, st->beta = 0.3, st->rnorm = 2.0, st->kappa = 0.7;
    st->h.div = INFINITY, st->h.done = KR_BATCH_MAX - 1;
    double *M = kr_idr_dev_M(st);
    for (size_t i = 0; i < (size_t)s * (size_t)s + 3 * (size_t)s; i++)
        M[i] = kt_rand_uniform(&r);
    for (int i = 0; i < s; i++)
        M[i + i * s] = 3.0 + M[i + i * s];
    ck_assert_int_eq(kr_dev_zeros(ctx, t->bytes / 8 + 1, (double **)&t->ds),
                     KR_OK);
}

static void data_free(idr_data *t)
{
    for (int k = 0; k < NV; k++) {
        free(t->h[k]);
        kr_dev_free(t->ctx, t->dv[k]);
    }
    kr_dev_free(t->ctx, t->ds);
    free(t->out);
    free(t->img);
}

/* Backend arrays and state set to the host's. */
static void put(idr_data *t)
{
    const kr_backend_ops *op = t->ctx->ops;
    for (int k = 0; k < NV; k++)
        ck_assert_int_eq(
            op->upload(t->ctx, t->dv[k], t->h[k], count(t, k) * sizeof(double)),
            KR_OK);
    ck_assert_int_eq(op->upload(t->ctx, t->ds, t->img, t->bytes), KR_OK);
}

static double *get(idr_data *t, int k)
{
    ck_assert_int_eq(t->ctx->ops->download(t->ctx, t->out, t->dv[k],
                                           count(t, k) * sizeof(double)),
                     KR_OK);
    return t->out;
}

static void get_state(idr_data *t, unsigned char *img)
{
    ck_assert_int_eq(t->ctx->ops->download(t->ctx, img, t->ds, t->bytes),
                     KR_OK);
}

static void expect_vec(idr_data *t, int k, int j, const double *ref, double tol,
                       const char *what)
{
    const double *got = get(t, k) + (size_t)j * (size_t)t->n;
    double d = kt_rel_diff(t->n, got, ref);
    ck_assert_msg(d <= tol, "%s, n %d, s %d: difference %g", what, t->n, t->s,
                  d);
}

/* |got - want| within tol of scale (the sum of the magnitudes added) */
static void expect_sum(double got, double want, double scale, double tol,
                       const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol * (scale + 1e-300), "%s: %g vs %g",
                  what, got, want);
}

/* The rows lo..hi-1 of L y = rhs (L lower triangular, s x s) hold for y
 * up to rounding: the triangular solves of the scalar steps. */
static void expect_solved(int s, const double *L, const double *y,
                          const double *rhs, int lo, int hi, const char *what)
{
    for (int i = lo; i < hi; i++) {
        double acc = 0.0, mag = fabs(rhs[i - lo]);
        for (int j = lo; j <= i; j++) {
            acc += L[i + j * s] * y[j - lo];
            mag += fabs(L[i + j * s] * y[j - lo]);
        }
        ck_assert_msg(fabs(acc - rhs[i - lo]) <= 1e-13 * mag, "%s: row %d",
                      what, i);
    }
}

/* u_k of step k on the host from r (v = r - G(:,k:s) c; vh = d .* v,
 * v, or the given vh when vh_in is not NULL); v too */
static void host_u(idr_data *t, int k, const double *r, const double *d,
                   const double *vh_in, double *v, double *u)
{
    kr_idr_dev *st = image(t);
    const double *c = kr_idr_dev_c(st);
    int s = t->s;
    for (int32_t i = 0; i < t->n; i++) {
        double vi = r[i];
        for (int j = 0; j < s - k; j++)
            vi -= col(t, G, k + j)[i] * c[j];
        v[i] = vi;
        double vh = vh_in ? vh_in[i] : d ? d[i] * vi : vi;
        double y = st->om * vh + c[0] * col(t, U, k)[i];
        for (int j = 1; j < s - k; j++)
            y += col(t, U, k + j)[i] * c[j];
        u[i] = y;
    }
}

/* idr_v, idr_u and idr_vu (with d and without) at step k */
static void check_directions(idr_data *t, int k, double tol)
{
    const kr_backend_ops *op = t->ctx->ops;
    int32_t n = t->n;
    int s = t->s;
    double *ref = malloc((size_t)n * sizeof(double) + 8);
    double *v = malloc((size_t)n * sizeof(double) + 8);
    for (int pass = 0; pass < 3; pass++) {
        put(t);
        const double *d = pass == 1 ? t->dv[D] : NULL;
        host_u(t, k, t->h[R], pass == 1 ? t->h[D] : NULL,
               pass == 0 ? t->h[VH] : NULL, v, ref);
        if (pass == 0) {
            ck_assert_int_eq(
                op->idr_v(t->ctx, n, k, t->dv[R], t->dv[G], t->dv[V], t->ds),
                KR_OK);
            expect_vec(t, V, 0, v, tol, "idr_v");
            ck_assert_int_eq(
                op->idr_u(t->ctx, n, k, t->dv[VH], t->dv[U], t->ds), KR_OK);
        } else {
            ck_assert_int_eq(op->idr_vu(t->ctx, n, k, t->dv[R], t->dv[G],
                                        t->dv[U], d, t->dv[V], t->dv[VH],
                                        t->ds),
                             KR_OK);
        }
        expect_vec(t, U, k, ref, tol, pass ? "idr_vu" : "idr_u");
        for (int j = 0; j < s; j++) /* the other columns stay */
            if (j != k) expect_vec(t, U, j, col(t, U, j), 0.0, "U");
    }
    free(ref);
    free(v);
}

/* idr_u with c_0 = 0 overwrites a NaN in u_k, as axpby does */
static void check_u_nan(idr_data *t, int k, double tol)
{
    int32_t n = t->n;
    kr_idr_dev *st = image(t);
    double *c = kr_idr_dev_c(st), c0 = c[0];
    c[0] = 0.0;
    put(t);
    ck_assert_int_eq(
        t->ctx->ops->fill(t->ctx, n, NAN, t->dv[U] + (size_t)k * n), KR_OK);
    ck_assert_int_eq(
        t->ctx->ops->idr_u(t->ctx, n, k, t->dv[VH], t->dv[U], t->ds), KR_OK);
    double *ref = malloc((size_t)n * sizeof(double) + 8);
    for (int32_t i = 0; i < n; i++) {
        ref[i] = st->om * t->h[VH][i];
        for (int j = 1; j < t->s - k; j++)
            ref[i] += col(t, U, k + j)[i] * c[j];
    }
    expect_vec(t, U, k, ref, tol, "idr_u, c_0 = 0");
    c[0] = c0;
    free(ref);
}

/* P(:,j0:j0+m)^T w on the host, with each sum's magnitude */
static void host_ptw(idr_data *t, int j0, int m, const double *w, double *out,
                     double *mag)
{
    for (int j = 0; j < m; j++) {
        out[j] = mag[j] = 0.0;
        for (int32_t i = 0; i < t->n; i++) {
            out[j] += col(t, P, j0 + j)[i] * w[i];
            mag[j] += fabs(col(t, P, j0 + j)[i] * w[i]);
        }
    }
}

/* idr_h and idr_orth at step k */
static void check_orth(idr_data *t, int k, double tol)
{
    const kr_backend_ops *op = t->ctx->ops;
    int32_t n = t->n;
    int s = t->s;
    unsigned char *got = malloc(t->bytes);
    kr_idr_dev *gs = (kr_idr_dev *)got;
    double sums[KR_IDR_DEV_MAX_S], mag[KR_IDR_DEV_MAX_S];
    put(t);
    if (k > 0) {
        ck_assert_int_eq(op->idr_h(t->ctx, n, k, t->dv[P], t->dv[G], t->ds),
                         KR_OK);
        get_state(t, got);
        host_ptw(t, 0, k, col(t, G, k), sums, mag);
        /* M(0:k,0:k) h = P^T g_k, up to the sums' rounding */
        double *h = kr_idr_dev_hv(gs), *Lh = malloc(sizeof(double) * (size_t)k);
        for (int i = 0; i < k; i++) {
            Lh[i] = 0.0;
            for (int j = 0; j <= i; j++)
                Lh[i] += kr_idr_dev_M(gs)[i + j * s] * h[j];
            expect_sum(Lh[i], sums[i], mag[i] + fabs(Lh[i]), tol * 10, "idr_h");
        }
        free(Lh);
        /* orthogonalise with the h it made */
        memcpy(kr_idr_dev_hv(image(t)), h, sizeof(double) * (size_t)k);
        put(t);
    }
    const double *h = kr_idr_dev_hv(image(t));
    double *g = malloc((size_t)n * sizeof(double) + 8);
    double *u = malloc((size_t)n * sizeof(double) + 8);
    for (int32_t i = 0; i < n; i++) {
        g[i] = col(t, G, k)[i], u[i] = col(t, U, k)[i];
        for (int j = 0; j < k; j++) {
            g[i] -= col(t, G, j)[i] * h[j];
            u[i] -= col(t, U, j)[i] * h[j];
        }
    }
    ck_assert_int_eq(
        op->idr_orth(t->ctx, n, k, t->dv[P], t->dv[G], t->dv[U], t->ds), KR_OK);
    expect_vec(t, G, k, g, tol, "idr_orth g_k");
    expect_vec(t, U, k, u, tol, "idr_orth u_k");
    get_state(t, got);
    host_ptw(t, k, s - k, g, sums, mag);
    const double *Mk = kr_idr_dev_M(gs) + (size_t)k * (size_t)s;
    for (int i = 0; i < k; i++)
        ck_assert(Mk[i] == 0.0);
    for (int j = 0; j < s - k; j++)
        expect_sum(Mk[k + j], sums[j], mag[j], tol, "idr_orth M");
    ck_assert_int_eq(gs->h.stop, KR_DEV_RUNNING);
    const double *f0 = kr_idr_dev_f(image(t)), *f = kr_idr_dev_f(gs);
    ck_assert(gs->beta == f0[k] / Mk[k]);
    for (int i = k + 1; i < s; i++) /* f(k+1:s) -= beta M(k+1:s,k) */
        ck_assert(f[i] == f0[i] - gs->beta * Mk[i]);
    if (k + 1 < s) /* the next step's c */
        expect_solved(s, kr_idr_dev_M(gs), kr_idr_dev_c(gs), f + k + 1, k + 1,
                      s, "next c");
    free(g);
    free(u);
    free(got);
}

/* The state after an update: one norm recorded, ||r||^2 = rr up to
 * rounding, the run going on. Returns the state (the caller frees it). */
static unsigned char *expect_recorded(idr_data *t, double rr, double tol,
                                      const char *what)
{
    unsigned char *got = malloc(t->bytes);
    ck_assert_ptr_nonnull(got);
    kr_idr_dev *gs = (kr_idr_dev *)got;
    get_state(t, got);
    ck_assert_int_eq(gs->h.done, KR_BATCH_MAX);
    ck_assert_int_eq(gs->h.stop, KR_DEV_RUNNING);
    double rn = gs->h.rnorm[KR_BATCH_MAX - 1];
    /* r within tol norm-wise (expect_vec) puts r.r within about 2 tol,
     * and the square root and its square add a few ulps: a run on an H100
     * met r at 1e-13 and missed r.r by that factor */
    expect_sum(rn * rn, rr, rr, 3 * tol, what);
    return got;
}

/* idr_update at step k (k = s: with z = d .* r and the new f) */
static void check_update(idr_data *t, int k, double tol)
{
    int32_t n = t->n;
    int s = t->s;
    kr_idr_dev *st = image(t);
    double a = k < s ? st->beta : st->om, rr = 0.0;
    double *x = malloc((size_t)n * sizeof(double) + 8);
    double *r = malloc((size_t)n * sizeof(double) + 8);
    double *z = malloc((size_t)n * sizeof(double) + 8);
    const double *p = k < s ? col(t, U, k) : t->h[VH];
    const double *q = k < s ? col(t, G, k) : t->h[V];
    for (int32_t i = 0; i < n; i++) {
        x[i] = t->h[X][i] + a * p[i];
        r[i] = t->h[R][i] - a * q[i];
        z[i] = t->h[D][i] * r[i];
        rr += r[i] * r[i];
    }
    put(t);
    double *dp = k < s ? t->dv[U] + (size_t)k * n : t->dv[VH];
    double *dq = k < s ? t->dv[G] + (size_t)k * n : t->dv[V];
    ck_assert_int_eq(t->ctx->ops->idr_update(
                         t->ctx, n, k, dp, dq, t->dv[X], t->dv[R], t->dv[D],
                         k == s ? t->dv[Z] : NULL, t->dv[P], t->ds),
                     KR_OK);
    expect_vec(t, X, 0, x, tol, "idr_update x");
    expect_vec(t, R, 0, r, tol, "idr_update r");
    if (k == s) expect_vec(t, Z, 0, z, tol, "idr_update z");
    unsigned char *got = expect_recorded(t, rr, tol, "idr_update r.r");
    kr_idr_dev *gs = (kr_idr_dev *)got;
    double rn = gs->h.rnorm[KR_BATCH_MAX - 1];
    double *f = kr_idr_dev_f(gs), *M = kr_idr_dev_M(gs);
    if (k < s) { /* f and c as they were: idr_orth made them */
        ck_assert(gs->rnorm == rn);
        ck_assert(!memcmp(f, kr_idr_dev_f(st), 2 * (size_t)s * sizeof *f));
    } else {
        double sums[KR_IDR_DEV_MAX_S], mag[KR_IDR_DEV_MAX_S];
        host_ptw(t, 0, s, r, sums, mag);
        for (int j = 0; j < s; j++)
            expect_sum(f[j], sums[j], mag[j], tol, "idr_update f");
        /* the next cycle's first c */
        expect_solved(s, M, kr_idr_dev_c(gs), f, 0, s, "next c");
    }
    free(got);
    free(x);
    free(r);
    free(z);
}

/* idr_update_vu at step k (k + 1 < s), with d and without: x and r as
 * idr_update's, u_{k+1} as idr_vu's from the new r */
static void check_update_vu(idr_data *t, int k, double tol)
{
    int32_t n = t->n;
    double a = image(t)->beta, rr = 0.0;
    double *x = malloc((size_t)n * sizeof(double) + 8);
    double *r = malloc((size_t)n * sizeof(double) + 8);
    double *v = malloc((size_t)n * sizeof(double) + 8);
    double *u = malloc((size_t)n * sizeof(double) + 8);
    for (int32_t i = 0; i < n; i++) {
        x[i] = t->h[X][i] + a * col(t, U, k)[i];
        r[i] = t->h[R][i] - a * col(t, G, k)[i];
        rr += r[i] * r[i];
    }
    for (int pass = 0; pass < 2; pass++) {
        put(t);
        host_u(t, k + 1, r, pass ? t->h[D] : NULL, NULL, v, u);
        ck_assert_int_eq(t->ctx->ops->idr_update_vu(
                             t->ctx, n, k, t->dv[U] + (size_t)k * n,
                             t->dv[G] + (size_t)k * n, t->dv[X], t->dv[R],
                             t->dv[G], t->dv[U], pass ? t->dv[D] : NULL,
                             t->dv[V], t->dv[VH], t->ds),
                         KR_OK);
        expect_vec(t, X, 0, x, tol, "idr_update_vu x");
        expect_vec(t, R, 0, r, tol, "idr_update_vu r");
        expect_vec(t, U, k + 1, u, tol, "idr_update_vu u_{k+1}");
        for (int j = 0; j < t->s; j++) /* the other columns stay */
            if (j != k + 1) expect_vec(t, U, j, col(t, U, j), 0.0, "U");
        unsigned char *got = expect_recorded(t, rr, tol, "idr_update_vu r.r");
        kr_idr_dev *gs = (kr_idr_dev *)got;
        ck_assert(gs->rnorm == gs->h.rnorm[KR_BATCH_MAX - 1]);
        free(got);
    }
    free(x);
    free(r);
    free(v);
    free(u);
}

/* idr_omega with v = r + x/2 (so v.r is far from 0) */
static void check_omega(idr_data *t, double tol)
{
    int32_t n = t->n;
    kr_idr_dev *st = image(t);
    double tr = 0, tt = 0, mtr = 0;
    for (int32_t i = 0; i < n; i++) {
        t->h[V][i] = t->h[R][i] + 0.5 * t->h[X][i];
        tr += t->h[V][i] * t->h[R][i];
        mtr += fabs(t->h[V][i] * t->h[R][i]);
        tt += t->h[V][i] * t->h[V][i];
    }
    put(t);
    ck_assert_int_eq(
        t->ctx->ops->idr_omega(t->ctx, n, t->dv[V], t->dv[R], t->ds), KR_OK);
    unsigned char *got = malloc(t->bytes);
    get_state(t, got);
    kr_idr_dev *gs = (kr_idr_dev *)got;
    ck_assert_int_eq(gs->h.stop, KR_DEV_RUNNING);
    double om = kr_idr_omega(tr, tt, st->rnorm, st->kappa);
    /* tr and tt carry relative errors of about tol * mtr / |tr| */
    ck_assert_msg(fabs(gs->om - om) <= 4 * tol * (mtr / fabs(tr)) * fabs(om),
                  "idr_omega n %d: %g vs %g", n, gs->om, om);
    free(got);
}

/* With the stop set, no op moves anything. */
static void check_stopped(idr_data *t)
{
    const kr_backend_ops *op = t->ctx->ops;
    kr_ctx *ctx = t->ctx;
    int32_t n = t->n;
    int s = t->s, k = s > 1 ? 1 : 0;
    double **d = t->dv;
    image(t)->h.stop = KR_DEV_STOP_CHECK;
    put(t);
    ck_assert_int_eq(op->idr_v(ctx, n, k, d[R], d[G], d[V], t->ds), KR_OK);
    ck_assert_int_eq(op->idr_u(ctx, n, k, d[VH], d[U], t->ds), KR_OK);
    ck_assert_int_eq(
        op->idr_vu(ctx, n, k, d[R], d[G], d[U], d[D], d[V], d[VH], t->ds),
        KR_OK);
    ck_assert_int_eq(op->idr_h(ctx, n, k, d[P], d[G], t->ds), KR_OK);
    ck_assert_int_eq(op->idr_orth(ctx, n, k, d[P], d[G], d[U], t->ds), KR_OK);
    ck_assert_int_eq(op->idr_omega(ctx, n, d[V], d[R], t->ds), KR_OK);
    if (k + 1 < s)
        ck_assert_int_eq(op->idr_update_vu(ctx, n, k, d[U], d[G], d[X], d[R],
                                           d[G], d[U], d[D], d[V], d[VH],
                                           t->ds),
                         KR_OK);
    for (int kk = k; kk <= s; kk += s - k)
        ck_assert_int_eq(op->idr_update(ctx, n, kk, d[VH], d[V], d[X], d[R],
                                        d[D], d[Z], d[P], t->ds),
                         KR_OK);
    for (int v = 0; v < NV; v++)
        for (int j = 0; j < (v >= P ? s : 1); j++)
            expect_vec(t, v, j, col(t, v, j), 0.0, "a stopped idr op");
    unsigned char *got = malloc(t->bytes);
    get_state(t, got);
    ck_assert(!memcmp(got, t->img, t->bytes));
    free(got);
    image(t)->h.stop = KR_DEV_RUNNING;
}

/* M_kk = 0 (p_k = 0), v = 0 and a met threshold stop the device. */
static void check_stops(idr_data *t)
{
    const kr_backend_ops *op = t->ctx->ops;
    int32_t n = t->n;
    int s = t->s, k = s - 1;
    kr_idr_dev *st = image(t);
    unsigned char *got = malloc(t->bytes);
    kr_idr_dev *gs = (kr_idr_dev *)got;
    double *pk = malloc((size_t)n * sizeof(double) + 8);
    memcpy(pk, col(t, P, k), (size_t)n * sizeof(double));
    memset(col(t, P, k), 0, (size_t)n * sizeof(double));
    put(t);
    ck_assert_int_eq(
        op->idr_orth(t->ctx, n, k, t->dv[P], t->dv[G], t->dv[U], t->ds), KR_OK);
    get_state(t, got);
    ck_assert_int_eq(gs->h.stop, KR_DEV_STOP_BREAKDOWN);
    ck_assert(gs->beta == st->beta);
    memcpy(col(t, P, k), pk, (size_t)n * sizeof(double));
    free(pk);
    put(t);
    ck_assert_int_eq(t->ctx->ops->fill(t->ctx, n, 0.0, t->dv[V]), KR_OK);
    ck_assert_int_eq(op->idr_omega(t->ctx, n, t->dv[V], t->dv[R], t->ds),
                     KR_OK);
    get_state(t, got);
    ck_assert_int_eq(gs->h.stop, KR_DEV_STOP_BREAKDOWN);
    ck_assert(gs->om == st->om);
    /* the test fires: the norm recorded, f and c as they were */
    st->h.rtol_b = 1e300;
    put(t);
    ck_assert_int_eq(op->idr_update(t->ctx, n, 0, t->dv[U], t->dv[G], t->dv[X],
                                    t->dv[R], NULL, NULL, t->dv[P], t->ds),
                     KR_OK);
    get_state(t, got);
    ck_assert_int_eq(gs->h.stop, KR_DEV_STOP_CHECK);
    ck_assert_int_eq(gs->h.done, KR_BATCH_MAX);
    size_t arrays = t->bytes - sizeof(kr_idr_dev);
    ck_assert(!memcmp(gs + 1, st + 1, arrays));
    st->h.rtol_b = 0.0;
    free(got);
}

/* n = 0: every sum is 0, so M_kk = 0 and v.v = 0 break down, and ||r||
 * = 0 meets the test. */
static void check_empty(idr_data *t)
{
    const kr_backend_ops *op = t->ctx->ops;
    unsigned char *got = malloc(t->bytes);
    kr_idr_dev *gs = (kr_idr_dev *)got;
    double **d = t->dv;
    put(t);
    ck_assert_int_eq(op->idr_orth(t->ctx, 0, 0, d[P], d[G], d[U], t->ds),
                     KR_OK);
    get_state(t, got);
    ck_assert_int_eq(gs->h.stop, KR_DEV_STOP_BREAKDOWN);
    put(t);
    ck_assert_int_eq(op->idr_omega(t->ctx, 0, d[V], d[R], t->ds), KR_OK);
    get_state(t, got);
    ck_assert_int_eq(gs->h.stop, KR_DEV_STOP_BREAKDOWN);
    put(t);
    ck_assert_int_eq(op->idr_update(t->ctx, 0, t->s, d[VH], d[V], d[X], d[R],
                                    NULL, NULL, d[P], t->ds),
                     KR_OK);
    get_state(t, got);
    ck_assert_int_eq(gs->h.stop, KR_DEV_STOP_CHECK);
    ck_assert(gs->h.rnorm[KR_BATCH_MAX - 1] == 0.0);
    free(got);
}

void kt_check_idr_ops(kr_ctx *ctx, int32_t n, int s, uint64_t seed, double tol)
{
    ck_assert(s >= 1 && s <= KR_IDR_DEV_MAX_S);
    idr_data t;
    data_init(&t, ctx, n, s, seed);
    if (n == 0) {
        check_empty(&t);
        data_free(&t);
        return;
    }
    for (int k = 0; k < s; k++) {
        check_directions(&t, k, tol);
        check_u_nan(&t, k, tol);
        check_orth(&t, k, tol);
        check_update(&t, k, tol);
        if (k + 1 < s) check_update_vu(&t, k, tol);
    }
    check_omega(&t, tol);
    check_update(&t, s, tol);
    check_stopped(&t);
    check_stops(&t);
    data_free(&t);
}

/* h from the format's op: M(0:k,0:k) h = P(:,0:k)^T y up to rounding */
static void expect_h(idr_data *t, int k, const double *y, unsigned char *got,
                     double tol)
{
    double sums[KR_IDR_DEV_MAX_S], mag[KR_IDR_DEV_MAX_S];
    host_ptw(t, 0, k, y, sums, mag);
    const double *M = kr_idr_dev_M(image(t)),
                 *h = kr_idr_dev_hv((kr_idr_dev *)got);
    for (int i = 0; i < k; i++) {
        double Lh = 0.0;
        for (int j = 0; j <= i; j++)
            Lh += M[i + j * t->s] * h[j];
        expect_sum(Lh, sums[i], mag[i] + fabs(Lh), tol * 10, "idr_dots h");
    }
}

/* step 0's M column and beta from the format's op, as check_orth judges
 * them */
static void expect_m0(idr_data *t, const double *y, unsigned char *got,
                      double tol)
{
    double sums[KR_IDR_DEV_MAX_S], mag[KR_IDR_DEV_MAX_S];
    kr_idr_dev *gs = (kr_idr_dev *)got;
    host_ptw(t, 0, t->s, y, sums, mag);
    const double *M0 = kr_idr_dev_M(gs);
    for (int j = 0; j < t->s; j++)
        expect_sum(M0[j], sums[j], mag[j], tol, "idr_dots M(:,0)");
    ck_assert_int_eq(gs->h.stop, KR_DEV_RUNNING);
    ck_assert(gs->beta == kr_idr_dev_f(image(t))[0] / M0[0]);
}

/* omega from the format's op, as check_omega judges it */
static void expect_omega(idr_data *t, const double *y, const kr_idr_dev *gs,
                         double tol)
{
    const kr_idr_dev *st = image(t);
    double tr = 0, tt = 0, mtr = 0;
    for (int32_t i = 0; i < t->n; i++) {
        tr += y[i] * t->h[R][i];
        mtr += fabs(y[i] * t->h[R][i]);
        tt += y[i] * y[i];
    }
    double om = kr_idr_omega(tr, tt, st->rnorm, st->kappa);
    ck_assert_int_eq(gs->h.stop, KR_DEV_RUNNING);
    ck_assert_msg(fabs(gs->om - om) <= 4 * tol * (mtr / fabs(tr)) * fabs(om),
                  "idr_dots omega: %g vs %g", gs->om, om);
}

void kt_check_idr_dots(kr_ctx *ctx, const kr_csr *A, const char *format, int s,
                       uint64_t seed, double tol)
{
    kr_matrix *Am = NULL;
    ck_assert_int_eq(kr_matrix_create(ctx, A, format, &Am), KR_OK);
    const kr_format_ops *f = Am->ops;
    ck_assert(f->idr_dots_ok && f->idr_dots_apply && f->idr_dots_ok(Am->impl));
    idr_data t;
    data_init(&t, ctx, A->nrows, s, seed);
    double *y = malloc((size_t)t.n * sizeof(double) + 8);
    unsigned char *got = malloc(t.bytes);
    ck_assert(y && got);
    kr_csr_matvec(A, t.h[X], y);
    for (int k = 0; k <= s; k++) {
        put(&t);
        ck_assert_int_eq(f->idr_dots_apply(ctx, Am->impl, k, t.dv[X], t.dv[V],
                                           t.dv[P], t.dv[R], t.ds),
                         KR_OK);
        expect_vec(&t, V, 0, y, tol, "idr_dots y");
        get_state(&t, got);
        if (k == 0)
            expect_m0(&t, y, got, tol);
        else if (k < s)
            expect_h(&t, k, y, got, tol);
        else
            expect_omega(&t, y, (kr_idr_dev *)got, tol);
    }
    image(&t)->h.stop = KR_DEV_STOP_CHECK; /* then nothing moves */
    put(&t);
    for (int k = 0; k <= s; k++)
        ck_assert_int_eq(f->idr_dots_apply(ctx, Am->impl, k, t.dv[X], t.dv[V],
                                           t.dv[P], t.dv[R], t.ds),
                         KR_OK);
    expect_vec(&t, V, 0, t.h[V], 0.0, "a stopped idr_dots y");
    get_state(&t, got);
    ck_assert(!memcmp(got, t.img, t.bytes));
    free(y);
    free(got);
    data_free(&t);
    kr_matrix_destroy(Am);
}
