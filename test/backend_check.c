/* Backend kernels against plain host loops (see backend_check.h). */
#include "backend_check.h"

#include "core/vec.h"
#include "spmv/format.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bufs {
    kr_ctx *ctx;
    int32_t n;
    double *h[4]; /* host inputs                    */
    double *d[4]; /* device copies of the inputs    */
    double *out;  /* host result                    */
    double *ref;  /* host reference                 */
} bufs;

static void fill_random(double *x, int32_t n, uint64_t *s)
{
    for (int32_t i = 0; i < n; i++)
        x[i] = kt_rand_uniform(s);
}

static void bufs_init(bufs *b, kr_ctx *ctx, int32_t n, uint64_t seed)
{
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->n = n;
    uint64_t s = seed;
    size_t bytes = ((size_t)n + 1) * sizeof(double);
    for (int k = 0; k < 4; k++) {
        b->h[k] = malloc(bytes);
        fill_random(b->h[k], n, &s);
        ck_assert_int_eq(
            kr_dev_upload_new(ctx, b->h[k], (size_t)n * 8, (void **)&b->d[k]),
            KR_OK);
    }
    b->out = malloc(bytes);
    b->ref = malloc(bytes);
}

static void bufs_free(bufs *b)
{
    for (int k = 0; k < 4; k++) {
        free(b->h[k]);
        kr_dev_free(b->ctx, b->d[k]);
    }
    free(b->out);
    free(b->ref);
}

/* Sets device array k back to its host values, or to NaN when poisoned. */
static void reset(bufs *b, int k, int poison)
{
    if (poison) {
        ck_assert_int_eq(b->ctx->ops->fill(b->ctx, b->n, NAN, b->d[k]), KR_OK);
    } else {
        ck_assert_int_eq(
            b->ctx->ops->upload(b->ctx, b->d[k], b->h[k], (size_t)b->n * 8),
            KR_OK);
    }
}

static void expect(bufs *b, int k, double tol, const char *what)
{
    ck_assert_int_eq(
        b->ctx->ops->download(b->ctx, b->out, b->d[k], (size_t)b->n * 8),
        KR_OK);
    double d = kt_rel_diff(b->n, b->out, b->ref);
    ck_assert_msg(d <= tol, "%s, n = %d: relative difference %g > %g", what,
                  b->n, d, tol);
}

static int close_to(double got, double want, double tol)
{
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

static void check_elementwise(bufs *b, double tol)
{
    const kr_backend_ops *op = b->ctx->ops;
    int32_t n = b->n;
    double **h = b->h;
    /* axpby with beta = 0 must overwrite a poisoned y */
    reset(b, 3, 1);
    ck_assert_int_eq(op->axpby(b->ctx, n, 2.5, b->d[0], 0.0, b->d[3]), KR_OK);
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = 2.5 * h[0][i];
    expect(b, 3, tol, "axpby beta=0");
    reset(b, 3, 0);
    ck_assert_int_eq(op->axpby(b->ctx, n, -0.5, b->d[0], 1.5, b->d[3]), KR_OK);
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = -0.5 * h[0][i] + 1.5 * h[3][i];
    expect(b, 3, tol, "axpby");
    reset(b, 3, 1);
    ck_assert_int_eq(
        op->axpbypcz(b->ctx, n, 1.0, b->d[0], -2.0, b->d[1], 0.0, b->d[3]),
        KR_OK);
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = h[0][i] - 2.0 * h[1][i];
    expect(b, 3, tol, "axpbypcz c=0");
    reset(b, 3, 0);
    ck_assert_int_eq(
        op->axpbypcz(b->ctx, n, 1.0, b->d[0], -2.0, b->d[1], 0.25, b->d[3]),
        KR_OK);
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = h[0][i] - 2.0 * h[1][i] + 0.25 * h[3][i];
    expect(b, 3, tol, "axpbypcz");
    reset(b, 1, 1);
    ck_assert_int_eq(op->pointwise_mult(b->ctx, n, b->d[0], b->d[2], b->d[1]),
                     KR_OK);
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = h[0][i] * h[2][i];
    expect(b, 1, tol, "pointwise_mult");
    reset(b, 1, 1);
    ck_assert_int_eq(op->fill(b->ctx, n, 3.0, b->d[1]), KR_OK);
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = 3.0;
    expect(b, 1, 0.0, "fill");
    reset(b, 1, 0);
}

static void check_axpy2(bufs *b, double tol)
{
    int32_t n = b->n;
    double **h = b->h;
    reset(b, 1, 0);
    reset(b, 3, 0);
    ck_assert_int_eq(b->ctx->ops->axpy2(b->ctx, n, 0.75, b->d[0], b->d[1],
                                        -0.75, b->d[2], b->d[3]),
                     KR_OK);
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = h[1][i] + 0.75 * h[0][i];
    expect(b, 1, tol, "axpy2 x");
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = h[3][i] - 0.75 * h[2][i];
    expect(b, 3, tol, "axpy2 r");
    reset(b, 1, 0);
    reset(b, 3, 0);
}

static void check_dots(bufs *b, double tol)
{
    for (int k = 1; k <= KR_MAX_DOTS; k++) {
        const double *x[KR_MAX_DOTS], *y[KR_MAX_DOTS];
        double out[KR_MAX_DOTS], ref[KR_MAX_DOTS], scale[KR_MAX_DOTS];
        for (int j = 0; j < k; j++) {
            x[j] = b->d[j];
            y[j] = b->d[(j + 1) % 4];
            ref[j] = scale[j] = 0.0;
            for (int32_t i = 0; i < b->n; i++) {
                ref[j] += b->h[j][i] * b->h[(j + 1) % 4][i];
                scale[j] += fabs(b->h[j][i] * b->h[(j + 1) % 4][i]);
            }
        }
        ck_assert_int_eq(b->ctx->ops->dots(b->ctx, b->n, k, x, y, out), KR_OK);
        for (int j = 0; j < k; j++)
            ck_assert_msg(fabs(out[j] - ref[j]) <= tol * (1.0 + scale[j]),
                          "dots k=%d j=%d n=%d: %.17g vs %.17g", k, j, b->n,
                          out[j], ref[j]);
    }
}

/* V = the four input arrays as one n x 4 block */
static void check_gemv(bufs *b, double tol)
{
    kr_ctx *ctx = b->ctx;
    int32_t n = b->n, k = 3;
    double *V, h[3], href[3] = {0, 0, 0}, hin[3] = {0.5, -1.0, 2.0};
    ck_assert_int_eq(kr_dev_zeros(ctx, (size_t)n * k, &V), KR_OK);
    for (int j = 0; j < k; j++)
        ck_assert_int_eq(
            ctx->ops->copy(ctx, V + (size_t)j * n, b->d[j], (size_t)n * 8),
            KR_OK);
    ck_assert_int_eq(ctx->ops->gemv_t(ctx, n, k, V, n, b->d[3], h), KR_OK);
    double scale = 1.0;
    for (int j = 0; j < k; j++)
        for (int32_t i = 0; i < n; i++) {
            href[j] += b->h[j][i] * b->h[3][i];
            scale += fabs(b->h[j][i] * b->h[3][i]);
        }
    for (int j = 0; j < k; j++)
        ck_assert_msg(fabs(h[j] - href[j]) <= tol * scale,
                      "gemv_t column %d, n = %d", j, n);
    reset(b, 3, 0);
    ck_assert_int_eq(ctx->ops->gemv_n(ctx, n, k, V, n, hin, -2.0, b->d[3]),
                     KR_OK);
    for (int32_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < k; j++)
            s += b->h[j][i] * hin[j];
        b->ref[i] = b->h[3][i] - 2.0 * s;
    }
    expect(b, 3, tol, "gemv_n");
    /* the _dev forms, h in backend memory */
    double *dh, hdev[3], *out = malloc(((size_t)n + 1) * 8);
    ck_assert_int_eq(kr_dev_zeros(ctx, 3, &dh), KR_OK);
    ck_assert_int_eq(ctx->ops->download(ctx, out, b->d[3], (size_t)n * 8),
                     KR_OK); /* gemv_n's result */
    reset(b, 3, 0);
    ck_assert_int_eq(ctx->ops->gemv_t_dev(ctx, n, k, V, n, b->d[3], dh), KR_OK);
    ck_assert_int_eq(ctx->ops->download(ctx, hdev, dh, sizeof hdev), KR_OK);
    for (int j = 0; j < k; j++) /* summed in another order on the GPU */
        ck_assert(fabs(hdev[j] - h[j]) <= tol * scale);
    /* gemv_nt_dev = gemv_n_dev then gemv_t_dev */
    double h2[3], h2ref[3], *dh2;
    ck_assert_int_eq(kr_dev_zeros(ctx, 3, &dh2), KR_OK);
    ck_assert_int_eq(ctx->ops->upload(ctx, dh, hin, sizeof hin), KR_OK);
    ck_assert_int_eq(
        ctx->ops->gemv_nt_dev(ctx, n, k, V, n, dh, -2.0, b->d[3], dh2), KR_OK);
    ck_assert_int_eq(ctx->ops->download(ctx, h2, dh2, sizeof h2), KR_OK);
    memcpy(b->ref, out, (size_t)n * 8);
    expect(b, 3, tol, "gemv_nt_dev w");
    ck_assert_int_eq(ctx->ops->gemv_t(ctx, n, k, V, n, b->d[3], h2ref), KR_OK);
    for (int j = 0; j < k; j++)
        ck_assert(fabs(h2[j] - h2ref[j]) <= tol * (scale + fabs(h2ref[j])));
    kr_dev_free(ctx, dh2);
    reset(b, 3, 0);
    ck_assert_int_eq(ctx->ops->upload(ctx, dh, hin, sizeof hin), KR_OK);
    ck_assert_int_eq(ctx->ops->gemv_n_dev(ctx, n, k, V, n, dh, -2.0, b->d[3]),
                     KR_OK);
    memcpy(b->ref, out, (size_t)n * 8);
    expect(b, 3, 0.0, "gemv_n_dev");
    free(out);
    kr_dev_free(ctx, dh);
    reset(b, 3, 0);
    kr_dev_free(ctx, V);
}

/* gm_step against kr_gm_dev_step on the host with v.v from dots, and
 * gm_scale: m = 3, step j = 1, H's column 1 and h2 from the random data. */
static void check_gm_ops(bufs *b)
{
    kr_ctx *ctx = b->ctx;
    int32_t n = b->n;
    int m = 3;
    size_t bytes = kr_gm_dev_bytes(m);
    kr_gm_dev *hs = calloc(1, bytes), *got = calloc(1, bytes), *ds;
    hs->m = m, hs->j = 1, hs->h.div = INFINITY;
    double *H = kr_gm_dev_H(hs), *cs = H + (m + 1) * m, *sn = cs + m;
    double *g = sn + m, *h2 = g + m + 1;
    for (int i = 0; i < 4; i++)
        H[(m + 1) + i] = 1.0 + 0.1 * i, h2[i] = 0.25 * i;
    cs[0] = 0.6, sn[0] = 0.8, g[0] = 0.3, g[1] = -0.4;
    ck_assert_int_eq(kr_dev_zeros(ctx, bytes / 8 + 1, (double **)&ds), KR_OK);
    ck_assert_int_eq(ctx->ops->upload(ctx, ds, hs, bytes), KR_OK);
    ck_assert_int_eq(ctx->ops->gm_step(ctx, n, b->d[0], ds), KR_OK);
    ck_assert_int_eq(ctx->ops->download(ctx, got, ds, bytes), KR_OK);
    const double *vs[1] = {b->d[0]};
    double vv;
    ck_assert_int_eq(ctx->ops->dots(ctx, n, 1, vs, vs, &vv), KR_OK);
    kr_gm_dev_step(hs, vv);
    /* hypot may round differently on the device: compare to a few ulps */
    const double *e = (const double *)hs, *gd = (const double *)got;
    for (size_t i = offsetof(kr_gm_dev, inv) / 8; i < bytes / 8; i++)
        ck_assert_msg(
            close_to(gd[i], e[i], 1e-14) || (isinf(e[i]) && gd[i] == e[i]),
            "gm_step n=%d: double %zu: %.17g vs %.17g", n, i, gd[i], e[i]);
    ck_assert(got->h.stop == hs->h.stop && got->h.done == hs->h.done &&
              got->happy == hs->happy);
    ck_assert(close_to(got->h.rnorm[0], hs->h.rnorm[0], 1e-14));
    ck_assert_int_eq(got->j, 2);
    ck_assert_int_eq(ctx->ops->gm_scale(ctx, n, b->d[1], ds), KR_OK);
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = got->inv * b->h[1][i];
    expect(b, 1, 0.0, "gm_scale");
    reset(b, 1, 0);
    kr_dev_free(ctx, ds);
    free(hs);
    free(got);
}

/* d[0] as the diagonal (or the identity), then the same with axpy2 + dots */
static void check_xr_update(bufs *b, double tol, int identity)
{
    kr_ctx *ctx = b->ctx;
    int32_t n = b->n;
    double **h = b->h, out[2], rz = 0, rr = 0, scale = 1.0;
    double *z = malloc(((size_t)n + 1) * 8), *dz;
    ck_assert_int_eq(kr_dev_zeros(ctx, (size_t)n, &dz), KR_OK);
    ck_assert_int_eq(ctx->ops->fill(ctx, n, NAN, dz), KR_OK);
    reset(b, 2, 0);
    reset(b, 3, 0);
    ck_assert_int_eq(ctx->ops->xr_update(ctx, n, 0.5, b->d[1], b->d[0], b->d[2],
                                         b->d[3], identity ? NULL : b->d[0], dz,
                                         out),
                     KR_OK);
    for (int32_t i = 0; i < n; i++) {
        double ri = h[3][i] - 0.5 * h[0][i];
        double zi = identity ? ri : h[0][i] * ri;
        z[i] = zi, rz += ri * zi, rr += ri * ri;
        scale += fabs(ri * zi) + ri * ri;
        b->ref[i] = h[2][i] + 0.5 * h[1][i];
    }
    expect(b, 2, tol, "xr_update x");
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = h[3][i] - 0.5 * h[0][i];
    expect(b, 3, tol, "xr_update r");
    if (!identity) {
        ck_assert_int_eq(ctx->ops->download(ctx, b->out, dz, (size_t)n * 8),
                         KR_OK);
        ck_assert(kt_rel_diff(n, b->out, z) <= tol);
    }
    ck_assert_msg(
        fabs(out[0] - rz) <= tol * scale && fabs(out[1] - rr) <= tol * scale,
        "xr_update sums n=%d: %g %g vs %g %g", n, out[0], out[1], rz, rr);
    reset(b, 2, 0);
    reset(b, 3, 0);
    kr_dev_free(ctx, dz);
    free(z);
}

/* y += a x with y.y and (optionally) w.y */
static void check_axpy_dots(bufs *b, double tol, int with_w)
{
    int32_t n = b->n;
    double **h = b->h, out[2], yy = 0, wy = 0, scale = 1.0;
    reset(b, 1, 0);
    ck_assert_int_eq(b->ctx->ops->axpy_dots(b->ctx, n, -0.75, b->d[0], b->d[1],
                                            with_w ? b->d[2] : NULL, out),
                     KR_OK);
    for (int32_t i = 0; i < n; i++) {
        double yi = h[1][i] - 0.75 * h[0][i];
        b->ref[i] = yi;
        yy += yi * yi, wy += h[2][i] * yi;
        scale += yi * yi + fabs(h[2][i] * yi);
    }
    expect(b, 1, tol, "axpy_dots y");
    ck_assert_msg(fabs(out[0] - yy) <= tol * scale, "axpy_dots y.y n=%d", n);
    if (with_w)
        ck_assert_msg(fabs(out[1] - wy) <= tol * scale, "axpy_dots w.y n=%d",
                      n);
    reset(b, 1, 0);
}

static void cg_state_get(bufs *b, kr_cg_dev *ds, kr_cg_dev *hs)
{
    ck_assert_int_eq(b->ctx->ops->download(b->ctx, hs, ds, sizeof *hs), KR_OK);
}

static void cg_state_put(bufs *b, kr_cg_dev *ds, const kr_cg_dev *hs)
{
    ck_assert_int_eq(b->ctx->ops->upload(b->ctx, ds, hs, sizeof *hs), KR_OK);
}

/* cg_alpha, cg_update and cg_direction with their scalars in backend
 * memory, against the host loops: p = d[1], q = d[0] (p.q > 0 with p = q),
 * x = d[2], r = d[3], the diagonal d[0]; then with the stop set, nothing
 * moves. The iteration slot wraps (done = KR_BATCH_MAX - 1). */
static void check_cg_ops(bufs *b, double tol, int identity)
{
    kr_ctx *ctx = b->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = b->n;
    double **h = b->h, *dz, rho = 0.7;
    kr_cg_dev *ds, hs = {0}, got;
    ck_assert_int_eq(kr_dev_zeros(ctx, (size_t)n, &dz), KR_OK);
    ck_assert_int_eq(kr_dev_zeros(ctx, sizeof hs / 8 + 1, (double **)&ds),
                     KR_OK);
    hs.rho = rho, hs.h.div = INFINITY, hs.h.done = KR_BATCH_MAX - 1;
    cg_state_put(b, ds, &hs);
    for (int k = 1; k < 4; k++)
        reset(b, k, 0);
    ck_assert_int_eq(op->cg_alpha(ctx, n, b->d[0], b->d[0], ds), KR_OK);
    cg_state_get(b, ds, &got);
    double pq = 0.0;
    for (int32_t i = 0; i < n; i++)
        pq += h[0][i] * h[0][i];
    ck_assert_msg(close_to(got.pq, pq, tol), "cg_alpha n=%d: %g vs %g", n,
                  got.pq, pq);
    if (n == 0) { /* p.q = 0: no alpha */
        ck_assert_int_eq(got.h.stop, KR_DEV_STOP_PQ);
        kr_dev_free(ctx, ds);
        kr_dev_free(ctx, dz);
        return;
    }
    ck_assert_int_eq(got.h.stop, KR_DEV_RUNNING);
    double alpha = got.alpha, rz = 0.0, rr = 0.0;
    ck_assert(close_to(alpha, rho / pq, tol));
    ck_assert_int_eq(op->cg_update(ctx, n, b->d[1], b->d[0], b->d[2], b->d[3],
                                   identity ? NULL : b->d[0], dz, ds),
                     KR_OK);
    for (int32_t i = 0; i < n; i++) {
        double ri = h[3][i] - alpha * h[0][i];
        double zi = identity ? ri : h[0][i] * ri;
        rz += ri * zi, rr += ri * ri;
        b->ref[i] = h[2][i] + alpha * h[1][i];
    }
    expect(b, 2, tol, "cg_update x");
    cg_state_get(b, ds, &got);
    ck_assert_int_eq(got.h.done, KR_BATCH_MAX);
    ck_assert(close_to(got.h.rnorm[KR_BATCH_MAX - 1], sqrt(rr), tol));
    ck_assert_int_eq(got.h.stop, rz < 0 ? KR_DEV_STOP_RHO : KR_DEV_RUNNING);
    ck_assert_msg(close_to(got.rho, rz, tol * n) &&
                      close_to(got.beta, rz / rho, tol * n),
                  "cg_update n=%d: rho %g vs %g", n, got.rho, rz);
    got.h.stop = KR_DEV_RUNNING;
    cg_state_put(b, ds, &got);
    ck_assert_int_eq(
        op->cg_direction(ctx, n, identity ? b->d[3] : dz, b->d[1], ds), KR_OK);
    for (int32_t i = 0; i < n; i++) {
        double ri = h[3][i] - alpha * h[0][i];
        b->ref[i] = (identity ? ri : h[0][i] * ri) + got.beta * h[1][i];
    }
    expect(b, 1, tol, "cg_direction p");
    /* a threshold met: the test fires, beta and rho stay */
    got.h.rtol_b = 1e300;
    cg_state_put(b, ds, &got);
    ck_assert_int_eq(op->cg_alpha(ctx, n, b->d[0], b->d[0], ds), KR_OK);
    ck_assert_int_eq(
        op->cg_update(ctx, n, b->d[1], b->d[0], b->d[2], b->d[3], NULL, dz, ds),
        KR_OK);
    cg_state_get(b, ds, &hs);
    ck_assert_int_eq(hs.h.stop, KR_DEV_STOP_CHECK);
    ck_assert_int_eq(hs.h.done, KR_BATCH_MAX + 1);
    ck_assert(hs.beta == got.beta && hs.rho == got.rho);
    /* stopped: every op leaves its outputs alone */
    for (int k = 1; k < 4; k++)
        reset(b, k, 0);
    ck_assert_int_eq(op->cg_alpha(ctx, n, b->d[0], b->d[0], ds), KR_OK);
    ck_assert_int_eq(
        op->cg_update(ctx, n, b->d[1], b->d[0], b->d[2], b->d[3], NULL, dz, ds),
        KR_OK);
    ck_assert_int_eq(op->cg_direction(ctx, n, b->d[3], b->d[1], ds), KR_OK);
    for (int k = 1; k < 4; k++) {
        memcpy(b->ref, h[k], (size_t)n * 8);
        expect(b, k, 0.0, "a stopped cg op");
    }
    cg_state_get(b, ds, &got);
    ck_assert(!memcmp(&got, &hs, sizeof got));
    kr_dev_free(ctx, ds);
    kr_dev_free(ctx, dz);
}

/* cg_step equals cg_alpha, cg_update and cg_direction in turn, bit for
 * bit: p = a copy of d[0] (so p.q > 0), q = d[0], x = d[2], r = d[3], no
 * preconditioner (so r.z > 0). */
static void cg_step_run(bufs *b, kr_cg_dev *ds, double *dz, int fused,
                        double *out, kr_cg_dev *st)
{
    kr_ctx *ctx = b->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = b->n;
    kr_cg_dev hs = {0};
    hs.rho = 0.7, hs.h.div = INFINITY;
    ck_assert_int_eq(op->upload(ctx, ds, &hs, sizeof hs), KR_OK);
    for (int k = 0; k < 4; k++)
        reset(b, k, 0);
    ck_assert_int_eq(op->upload(ctx, b->d[1], b->h[0], (size_t)n * 8), KR_OK);
    double *p = b->d[1], *q = b->d[0], *x = b->d[2], *r = b->d[3];
    if (fused) {
        ck_assert_int_eq(op->cg_step(ctx, n, p, q, x, r, NULL, dz, r, ds),
                         KR_OK);
    } else {
        ck_assert_int_eq(op->cg_alpha(ctx, n, p, q, ds), KR_OK);
        ck_assert_int_eq(op->cg_update(ctx, n, p, q, x, r, NULL, dz, ds),
                         KR_OK);
        ck_assert_int_eq(op->cg_direction(ctx, n, r, p, ds), KR_OK);
    }
    ck_assert_int_eq(op->download(ctx, out, p, (size_t)n * 8), KR_OK);
    ck_assert_int_eq(op->download(ctx, out + n, x, (size_t)n * 8), KR_OK);
    ck_assert_int_eq(op->download(ctx, st, ds, sizeof *st), KR_OK);
}

static void check_cg_step(bufs *b)
{
    int32_t n = b->n;
    double *dz, *o1 = malloc((2 * (size_t)n + 1) * 8);
    double *o2 = malloc((2 * (size_t)n + 1) * 8);
    kr_cg_dev *ds, s1, s2;
    ck_assert_int_eq(kr_dev_zeros(b->ctx, (size_t)n, &dz), KR_OK);
    ck_assert_int_eq(kr_dev_zeros(b->ctx, sizeof s1 / 8 + 1, (double **)&ds),
                     KR_OK);
    cg_step_run(b, ds, dz, 0, o1, &s1);
    cg_step_run(b, ds, dz, 1, o2, &s2);
    ck_assert_msg(!memcmp(o1, o2, 2 * (size_t)n * 8), "cg_step n=%d", n);
    ck_assert(s1.h.stop == s2.h.stop && s1.h.done == s2.h.done);
    ck_assert(s1.rho == s2.rho && s1.beta == s2.beta && s1.pq == s2.pq);
    ck_assert(s1.h.rnorm[0] == s2.h.rnorm[0]);
    ck_assert_int_eq(s1.h.stop, n ? KR_DEV_RUNNING : KR_DEV_STOP_PQ);
    ck_assert(n < 2 || s1.beta > 0); /* the p update ran */
    for (int k = 0; k < 4; k++)
        reset(b, k, 0);
    kr_dev_free(b->ctx, ds);
    kr_dev_free(b->ctx, dz);
    free(o1);
    free(o2);
}

/* BiCGSTAB's ops against the host loops, one iteration: r = d[3],
 * rh = d[2], v = d[0], p^ = d[1], s^ = d[2], t = d[0], x = d[1]'s copy;
 * then the s test firing and its pending x update. */
static void check_bcgs_ops(bufs *b, double tol)
{
    kr_ctx *ctx = b->ctx;
    const kr_backend_ops *op = ctx->ops;
    int32_t n = b->n;
    double **h = b->h, *x, rho = 0.3;
    kr_bcgs_dev *ds, hs = {0}, got;
    size_t bytes = sizeof hs;
    ck_assert_int_eq(kr_dev_zeros(ctx, (size_t)n, &x), KR_OK);
    ck_assert_int_eq(kr_dev_zeros(ctx, bytes / 8 + 1, (double **)&ds), KR_OK);
    hs.rho = rho, hs.h.div = INFINITY;
    ck_assert_int_eq(op->upload(ctx, ds, &hs, bytes), KR_OK);
    for (int k = 0; k < 4; k++)
        reset(b, k, 0);
    ck_assert_int_eq(op->bcgs_alpha(ctx, n, b->d[2], b->d[0], ds), KR_OK);
    ck_assert_int_eq(op->bcgs_s(ctx, n, b->d[0], b->d[3], ds), KR_OK);
    ck_assert_int_eq(op->bcgs_omega(ctx, n, b->d[0], b->d[3], ds), KR_OK);
    ck_assert_int_eq(op->download(ctx, &got, ds, bytes), KR_OK);
    if (n == 0) { /* r0^.v = 0: breakdown */
        ck_assert_int_eq(got.h.stop, KR_DEV_STOP_BREAKDOWN);
        kr_dev_free(ctx, ds);
        kr_dev_free(ctx, x);
        return;
    }
    double rv = 0, ss = 0, ts = 0, tt = 0, rr = 0, rho2 = 0;
    for (int32_t i = 0; i < n; i++)
        rv += h[2][i] * h[0][i];
    double alpha = rho / rv, *sv = malloc((size_t)n * 8);
    for (int32_t i = 0; i < n; i++) {
        sv[i] = h[3][i] - alpha * h[0][i];
        ss += sv[i] * sv[i], ts += h[0][i] * sv[i], tt += h[0][i] * h[0][i];
    }
    ck_assert_int_eq(got.h.stop, KR_DEV_RUNNING);
    ck_assert_msg(close_to(got.alpha, alpha, tol * n) &&
                      close_to(got.omega, ts / tt, tol * n),
                  "bcgs alpha/omega n=%d", n);
    double omega = got.omega;
    ck_assert_int_eq(op->bcgs_update(ctx, n, b->d[1], b->d[2], b->d[0], b->d[2],
                                     x, b->d[3], ds),
                     KR_OK);
    for (int32_t i = 0; i < n; i++) {
        b->ref[i] = got.alpha * h[1][i] + omega * h[2][i];
        double ri = sv[i] - omega * h[0][i];
        rr += ri * ri, rho2 += h[2][i] * ri;
    }
    ck_assert_int_eq(op->download(ctx, b->out, x, (size_t)n * 8), KR_OK);
    ck_assert(kt_rel_diff(n, b->out, b->ref) <= tol);
    ck_assert_int_eq(op->download(ctx, &hs, ds, bytes), KR_OK);
    ck_assert_int_eq(hs.h.done, 1);
    ck_assert(close_to(hs.h.rnorm[0], sqrt(rr), tol * n));
    if (n == 1) { /* omega makes r 0 up to rounding: skip the rest */
        free(sv);
        kr_dev_free(ctx, ds);
        kr_dev_free(ctx, x);
        for (int k = 0; k < 4; k++)
            reset(b, k, 0);
        return;
    }
    ck_assert(close_to(hs.rho, rho2, tol * n));
    ck_assert(close_to(hs.beta, (rho2 / rho) * (got.alpha / omega), tol * n));
    ck_assert_int_eq(op->bcgs_direction(ctx, n, b->d[3], b->d[0], b->d[1], ds),
                     KR_OK);
    for (int32_t i = 0; i < n; i++) {
        double ri = sv[i] - omega * h[0][i];
        b->ref[i] = ri - hs.beta * omega * h[0][i] + hs.beta * h[1][i];
    }
    expect(b, 1, tol, "bcgs_direction p");
    /* the s test fires: x += alpha p^ once, then nothing moves */
    hs.h.rtol_b = 1e300;
    ck_assert_int_eq(op->upload(ctx, ds, &hs, bytes), KR_OK);
    for (int k = 0; k < 4; k++)
        reset(b, k, 0);
    ck_assert_int_eq(op->fill(ctx, n, 0.0, x), KR_OK);
    ck_assert_int_eq(op->bcgs_alpha(ctx, n, b->d[2], b->d[0], ds), KR_OK);
    ck_assert_int_eq(op->bcgs_s(ctx, n, b->d[0], b->d[3], ds), KR_OK);
    ck_assert_int_eq(op->download(ctx, &got, ds, bytes), KR_OK);
    ck_assert_int_eq(got.h.stop, KR_DEV_STOP_S_PENDING);
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(op->bcgs_update(ctx, n, b->d[1], b->d[2], b->d[0],
                                         b->d[2], x, b->d[3], ds),
                         KR_OK);
    ck_assert_int_eq(op->download(ctx, &got, ds, bytes), KR_OK);
    ck_assert_int_eq(got.h.stop, KR_DEV_STOP_CHECK);
    ck_assert_int_eq(got.h.done, 2);
    for (int32_t i = 0; i < n; i++)
        b->ref[i] = got.alpha * h[1][i];
    ck_assert_int_eq(op->download(ctx, b->out, x, (size_t)n * 8), KR_OK);
    ck_assert(kt_rel_diff(n, b->out, b->ref) <= tol);
    for (int k = 0; k < 4; k++)
        reset(b, k, 0);
    free(sv);
    kr_dev_free(ctx, ds);
    kr_dev_free(ctx, x);
}

/* the same numbers as the host hash, bit for bit, on every backend */
static void check_fill_random(bufs *b)
{
    reset(b, 1, 1);
    ck_assert_int_eq(b->ctx->ops->fill_random(b->ctx, b->n, 12345, b->d[1]),
                     KR_OK);
    for (int32_t i = 0; i < b->n; i++) {
        b->ref[i] = kr_hash_uniform(12345, i);
        ck_assert(b->ref[i] >= -1.0 && b->ref[i] < 1.0);
    }
    expect(b, 1, 0.0, "fill_random");
    reset(b, 1, 0);
}

void kt_check_backend(kr_ctx *ctx, int32_t n, uint64_t seed, double tol)
{
    bufs b;
    bufs_init(&b, ctx, n, seed);
    check_elementwise(&b, tol);
    check_axpy2(&b, tol);
    check_dots(&b, tol);
    check_gemv(&b, tol);
    check_xr_update(&b, tol, 0);
    check_xr_update(&b, tol, 1);
    check_fill_random(&b);
    check_axpy_dots(&b, tol, 0);
    check_axpy_dots(&b, tol, 1);
    check_cg_ops(&b, tol, 0);
    check_cg_ops(&b, tol, 1);
    check_cg_step(&b);
    check_gm_ops(&b);
    check_bcgs_ops(&b, tol);
    bufs_free(&b);
}

int kt_is_automatic(const char *format)
{
    const kr_format_entry *e = kr_format_find(format);
    ck_assert_msg(e != NULL, "unknown format %s", format);
    return e->cpu->chosen != NULL;
}

void kt_check_choice(const kr_matrix *M, const char *format)
{
    const char *chosen = kr_matrix_format(M);
    const char *why = kr_matrix_format_reason(M);
    ck_assert_str_eq(kr_matrix_format_requested(M), format);
    if (!kt_is_automatic(format)) {
        ck_assert_str_eq(chosen, format);
        ck_assert_str_eq(why, "");
        return;
    }
    /* a concrete format, named first in the reason: "auto: pellr (...)" */
    ck_assert_msg(!kt_is_automatic(chosen), "%s chose %s", format, chosen);
    char head[96];
    snprintf(head, sizeof head, "%s: %s (", format, chosen);
    ck_assert_msg(!strncmp(why, head, strlen(head)), "%s: reason '%s'", format,
                  why);
    ck_assert(why[strlen(why) - 1] == ')');
}

int kt_check_spmv(kr_ctx *ctx, const kr_csr *A, const char *format,
                  uint64_t seed, double tol)
{
    uint64_t s = seed;
    double *x = malloc(((size_t)A->ncols + 1) * 8);
    double *y0 = malloc(((size_t)A->nrows + 1) * 8);
    double *y = malloc(((size_t)A->nrows + 1) * 8);
    double *ref = malloc(((size_t)A->nrows + 1) * 8);
    fill_random(x, A->ncols, &s);
    fill_random(y0, A->nrows, &s);
    kr_matrix *M;
    kr_vec *vx, *vy;
    kr_status built = kr_matrix_create(ctx, A, format, &M);
    if (built == KR_ERR_UNSUPPORTED) {
        free(x), free(y0), free(y), free(ref);
        return 0;
    }
    ck_assert_msg(built == KR_OK, "%s: %s", format, kr_ctx_error(ctx));
    kt_check_choice(M, format);
    ck_assert_int_eq(kr_vec_create(ctx, A->ncols, &vx), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, A->nrows, &vy), KR_OK);
    ck_assert_int_eq(kr_vec_upload(vx, x), KR_OK);
    const double coef[3][2] = {{1.0, 0.0}, {-2.0, 0.5}, {0.0, 3.0}};
    for (int c = 0; c < 3; c++) {
        double al = coef[c][0], be = coef[c][1];
        if (be == 0.0) {
            ck_assert_int_eq(kr_vec_fill(vy, NAN), KR_OK);
        } else {
            ck_assert_int_eq(kr_vec_upload(vy, y0), KR_OK);
        }
        ck_assert_int_eq(kr_matrix_apply(M, al, vx, be, vy), KR_OK);
        ck_assert_int_eq(kr_vec_download(vy, y), KR_OK);
        kr_csr_matvec(A, x, ref);
        for (int32_t i = 0; i < A->nrows; i++)
            ref[i] = al * ref[i] + (be == 0.0 ? 0.0 : be * y0[i]);
        double d = kt_rel_diff(A->nrows, y, ref);
        ck_assert_msg(d <= tol,
                      "%s spmv %d x %d (alpha %g, beta %g): "
                      "difference %g",
                      format, A->nrows, A->ncols, al, be, d);
    }
    kr_vec_destroy(vx);
    kr_vec_destroy(vy);
    kr_matrix_destroy(M);
    free(x);
    free(y0);
    free(y);
    free(ref);
    return 1;
}

void kt_check_spmv_all(kr_ctx *ctx, const kr_csr *A, uint64_t seed, double tol)
{
    for (const char *const *f = kr_format_names(); *f; f++) {
        int checked = kt_check_spmv(ctx, A, *f, seed, tol);
        ck_assert_msg(checked || (strcmp(*f, "csr") && !kt_is_automatic(*f)),
                      "%s refused a %d x %d matrix", *f, A->nrows, A->ncols);
    }
}

int kt_check_spmv_files(kr_ctx *ctx, const char *dir, uint64_t seed, double tol)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        int mtx = len > 4 && strcmp(e->d_name + len - 4, ".mtx") == 0;
        int gz = len > 7 && strcmp(e->d_name + len - 7, ".mtx.gz") == 0;
        if (!mtx && !gz) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        kr_csr A;
        ck_assert_msg(kr_read_mtx(ctx, path, &A) == KR_OK, "%s",
                      kr_ctx_error(ctx));
        kt_check_spmv_all(ctx, &A, seed + (uint64_t)count, tol);
        kr_csr_free(&A);
        count++;
    }
    closedir(d);
    return count;
}
