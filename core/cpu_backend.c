/* The CPU backend: the reference kernels, OpenMP over a static partition.
 * Reductions sum each thread's contiguous range in order and then the
 * partial sums in thread order, so a result depends only on n and the
 * thread count, never on scheduling. */
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/ctx.h"
#include "core/error.h"
#include "core/memory.h"

#define KR_MAX_THREADS 256 /* KR_SCRATCH = KR_MAX_THREADS * 64 */
/* Below this many entries one thread is faster than waking the others. */
#define KR_PAR_MIN 16384

static int nthreads(kr_ctx *ctx, int64_t work)
{
    if (work < KR_PAR_MIN) return 1;
    int t = kr_ctx_threads(ctx);
    return t < 1 ? 1 : (t > KR_MAX_THREADS ? KR_MAX_THREADS : t);
}

#ifdef _OPENMP
#define KR_TID() omp_get_thread_num()
#define KR_NT() omp_get_num_threads()
#else
#define KR_TID() 0
#define KR_NT() 1
#endif

/* [lo, hi) of thread t among T over n entries */
#define KR_RANGE(n, t, T, lo, hi)                                              \
    int32_t lo = (int32_t)((int64_t)(n) * (t) / (T));                          \
    int32_t hi = (int32_t)((int64_t)(n) * ((t) + 1) / (T))

/* Runs the statements (which see lo, hi, t and T) over [0, n): when the int
 * `nt` in scope is 1, on the calling thread with lo = 0, hi = n and no
 * parallel region (entering one costs about half a microsecond even when
 * it runs one thread, a few percent of an iteration on small systems);
 * else thread t of T takes KR_RANGE's share. */
#define KR_RANGES(n, ...)                                                      \
    do {                                                                       \
        if (nt == 1) {                                                         \
            const int t = 0, T = 1;                                            \
            const int32_t lo = 0, hi = (n);                                    \
            (void)t, (void)T, (void)lo, (void)hi;                              \
            __VA_ARGS__;                                                       \
        } else {                                                               \
            _Pragma("omp parallel num_threads(nt)")                            \
            {                                                                  \
                int t = KR_TID(), T = KR_NT();                                 \
                KR_RANGE(n, t, T, lo, hi);                                     \
                __VA_ARGS__;                                                   \
            }                                                                  \
        }                                                                      \
    } while (0)

static kr_status cpu_alloc(kr_ctx *ctx, void **p, size_t bytes)
{
    *p = NULL;
    KR_TRY(kr_host_mem_check(ctx, (double)bytes, "a vector or matrix array"));
    *p = malloc(bytes ? bytes : 1);
    if (!*p)
        return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory (%zu bytes)",
                       bytes);
    ctx->alloc_count++;
    return KR_OK;
}

static void cpu_release(kr_ctx *ctx, void *p)
{
    if (p) ctx->free_count++;
    free(p);
}

static kr_status cpu_copy(kr_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    if (bytes) memmove(dst, src, bytes);
    return KR_OK;
}

/* The element-wise kernels over [lo, hi), as SIMD loops (GCC's -O2 does
 * not vectorise a loop of unknown length). An output may be one of the
 * inputs (y = a*y): entry i depends on entries i only, so the lanes stay
 * independent, and each entry is the same expression as one at a time. */
static void fill_range(int32_t lo, int32_t hi, double a, double *x)
{
#pragma omp simd
    for (int32_t i = lo; i < hi; i++)
        x[i] = a;
}

static void axpby_range(int32_t lo, int32_t hi, double a, const double *x,
                        double b, double *y)
{
    if (b == 0.0) {
#pragma omp simd
        for (int32_t i = lo; i < hi; i++)
            y[i] = a * x[i];
    } else {
#pragma omp simd
        for (int32_t i = lo; i < hi; i++)
            y[i] = a * x[i] + b * y[i];
    }
}

static void axpbypcz_range(int32_t lo, int32_t hi, double a, const double *x,
                           double b, const double *y, double c, double *z)
{
    if (c == 0.0) {
#pragma omp simd
        for (int32_t i = lo; i < hi; i++)
            z[i] = a * x[i] + b * y[i];
    } else {
#pragma omp simd
        for (int32_t i = lo; i < hi; i++)
            z[i] = a * x[i] + b * y[i] + c * z[i];
    }
}

static void axpy2_range(int32_t lo, int32_t hi, double a, const double *p,
                        double *x, double b, const double *q, double *r)
{
#pragma omp simd
    for (int32_t i = lo; i < hi; i++) {
        x[i] += a * p[i];
        r[i] += b * q[i];
    }
}

static void pmult_range(int32_t lo, int32_t hi, const double *d,
                        const double *x, double *y)
{
#pragma omp simd
    for (int32_t i = lo; i < hi; i++)
        y[i] = d[i] * x[i];
}

static kr_status cpu_fill(kr_ctx *ctx, int32_t n, double a, double *x)
{
    int nt = nthreads(ctx, n);
    KR_RANGES(n, fill_range(lo, hi, a, x));
    return KR_OK;
}

static kr_status cpu_axpby(kr_ctx *ctx, int32_t n, double a, const double *x,
                           double b, double *y)
{
    int nt = nthreads(ctx, n);
    KR_RANGES(n, axpby_range(lo, hi, a, x, b, y));
    return KR_OK;
}

static kr_status cpu_axpbypcz(kr_ctx *ctx, int32_t n, double a, const double *x,
                              double b, const double *y, double c, double *z)
{
    int nt = nthreads(ctx, n);
    KR_RANGES(n, axpbypcz_range(lo, hi, a, x, b, y, c, z));
    return KR_OK;
}

static kr_status cpu_axpy2(kr_ctx *ctx, int32_t n, double a, const double *p,
                           double *x, double b, const double *q, double *r)
{
    int nt = nthreads(ctx, n);
    KR_RANGES(n, axpy2_range(lo, hi, a, p, x, b, q, r));
    return KR_OK;
}

static kr_status cpu_pointwise_mult(kr_ctx *ctx, int32_t n, const double *d,
                                    const double *x, double *y)
{
    int nt = nthreads(ctx, n);
    KR_RANGES(n, pmult_range(lo, hi, d, x, y));
    return KR_OK;
}

/* x . y over [lo, hi) with four interleaved partial sums: one running sum
 * is bound by the add latency; four keep the FPU busy and still add in a
 * fixed order. */
static double dot_range(int32_t lo, int32_t hi, const double *x,
                        const double *y)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int32_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        s0 += x[i] * y[i];
        s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2];
        s3 += x[i + 3] * y[i + 3];
    }
    for (; i < hi; i++)
        s0 += x[i] * y[i];
    return (s0 + s1) + (s2 + s3);
}

/* k dot products over [lo, hi), in cache-sized chunks so that a vector
 * shared by several products is read from memory once. */
static void dots_range(int32_t lo, int32_t hi, int k, const double *const *x,
                       const double *const *y, double *out)
{
    enum { CHUNK = 2048 };
    for (int j = 0; j < k; j++)
        out[j] = 0.0;
    for (int32_t c = lo; c < hi; c += CHUNK) {
        int32_t e = hi - c < CHUNK ? hi : c + CHUNK;
        for (int j = 0; j < k; j++)
            out[j] += dot_range(c, e, x[j], y[j]);
    }
}

static kr_status cpu_dots(kr_ctx *ctx, int32_t n, int k, const double *const *x,
                          const double *const *y, double *out)
{
    if (k < 1 || k > KR_MAX_DOTS)
        return kr_fail(ctx, KR_ERR_ARG, "dots: k = %d outside 1..%d", k,
                       KR_MAX_DOTS);
    double part[KR_MAX_THREADS][KR_MAX_DOTS];
    /* threads by n alone, here and in mdots: each product sums in one
     * order whatever others share the call (the solve's ||b|| rides with
     * r.r, a column's with the other columns') */
    int used = 1, nt = nthreads(ctx, n);
    KR_RANGES(n, {
        dots_range(lo, hi, k, x, y, part[t]);
        if (t == 0) used = T;
    });
    for (int j = 0; j < k; j++) {
        double s = 0.0;
        for (int t = 0; t < used; t++)
            s += part[t][j];
        out[j] = s;
    }
    return KR_OK;
}

static kr_status cpu_gemv_t(kr_ctx *ctx, int32_t n, int k, const double *V,
                            int64_t ld, const double *w, double *h)
{
    enum { MAXK = 64 };
    if (k > MAXK) { /* split wide blocks: each piece is still one pass */
        KR_TRY(cpu_gemv_t(ctx, n, MAXK, V, ld, w, h));
        return cpu_gemv_t(ctx, n, k - MAXK, V + MAXK * ld, ld, w, h + MAXK);
    }
    double(*part)[MAXK] = (double(*)[MAXK])ctx->scratch;
    int used = 1, nt = nthreads(ctx, (int64_t)n * k);
    KR_RANGES(n, {
        for (int j = 0; j < k; j++)
            part[t][j] = dot_range(lo, hi, V + j * ld, w);
        if (t == 0) used = T;
    });
    for (int j = 0; j < k; j++) {
        double s = 0.0;
        for (int t = 0; t < used; t++)
            s += part[t][j];
        h[j] = s;
    }
    return KR_OK;
}

/* w[lo..hi) += alpha * V h, row by row */
static void gemv_n_range(int32_t lo, int32_t hi, int k, const double *V,
                         int64_t ld, const double *h, double alpha, double *w)
{
    for (int32_t i = lo; i < hi; i++) {
        double s = 0.0;
        for (int j = 0; j < k; j++)
            s += V[i + j * ld] * h[j];
        w[i] += alpha * s;
    }
}

static kr_status cpu_gemv_n(kr_ctx *ctx, int32_t n, int k, const double *V,
                            int64_t ld, const double *h, double alpha,
                            double *w)
{
    int nt = nthreads(ctx, (int64_t)n * k);
    KR_RANGES(n, gemv_n_range(lo, hi, k, V, ld, h, alpha, w));
    return KR_OK;
}

/* The update over [lo, hi) and its sums {r.z, r.r}, four partial sums
 * each (restrict: the arrays are distinct, so the loop vectorises). */
static void xr_update_range(int32_t lo, int32_t hi, double a,
                            const double *restrict p, const double *restrict q,
                            double *restrict x, double *restrict r,
                            const double *restrict d, double *restrict z,
                            double *out)
{
    double rz[4] = {0, 0, 0, 0}, rr[4] = {0, 0, 0, 0};
    int32_t i = lo;
    for (; i + 4 <= hi; i += 4)
        for (int u = 0; u < 4; u++) {
            x[i + u] += a * p[i + u];
            double ri = r[i + u] - a * q[i + u], zi = d[i + u] * ri;
            r[i + u] = ri;
            z[i + u] = zi;
            rz[u] += ri * zi;
            rr[u] += ri * ri;
        }
    for (; i < hi; i++) {
        x[i] += a * p[i];
        double ri = r[i] - a * q[i], zi = d[i] * ri;
        r[i] = ri;
        z[i] = zi;
        rz[0] += ri * zi;
        rr[0] += ri * ri;
    }
    out[0] = (rz[0] + rz[1]) + (rz[2] + rz[3]);
    out[1] = (rr[0] + rr[1]) + (rr[2] + rr[3]);
}

/* The same without a preconditioner: z is r. */
static void xr_update_range_id(int32_t lo, int32_t hi, double a,
                               const double *restrict p,
                               const double *restrict q, double *restrict x,
                               double *restrict r, double *out)
{
    double rr[4] = {0, 0, 0, 0};
    int32_t i = lo;
    for (; i + 4 <= hi; i += 4)
        for (int u = 0; u < 4; u++) {
            x[i + u] += a * p[i + u];
            double ri = r[i + u] - a * q[i + u];
            r[i + u] = ri;
            rr[u] += ri * ri;
        }
    for (; i < hi; i++) {
        x[i] += a * p[i];
        double ri = r[i] - a * q[i];
        r[i] = ri;
        rr[0] += ri * ri;
    }
    out[0] = out[1] = (rr[0] + rr[1]) + (rr[2] + rr[3]);
}

static kr_status cpu_xr_update(kr_ctx *ctx, int32_t n, double a,
                               const double *p, const double *q, double *x,
                               double *r, const double *d, double *z,
                               double *out)
{
    double part[KR_MAX_THREADS][2];
    int used = 1, nt = nthreads(ctx, n);
    KR_RANGES(n, {
        if (d)
            xr_update_range(lo, hi, a, p, q, x, r, d, z, part[t]);
        else
            xr_update_range_id(lo, hi, a, p, q, x, r, part[t]);
        if (t == 0) used = T;
    });
    out[0] = out[1] = 0.0;
    for (int t = 0; t < used; t++)
        out[0] += part[t][0], out[1] += part[t][1];
    return KR_OK;
}

/* axpy_dots over [lo, hi), four partial sums each; out[1] = w.y */
static void axpy_dots_range(int32_t lo, int32_t hi, double a,
                            const double *restrict x, double *restrict y,
                            const double *restrict w, double *out)
{
    double yy[4] = {0, 0, 0, 0}, wy[4] = {0, 0, 0, 0};
    int32_t i = lo;
    for (; i + 4 <= hi; i += 4)
        for (int u = 0; u < 4; u++) {
            double yi = y[i + u] + a * x[i + u];
            y[i + u] = yi;
            yy[u] += yi * yi;
            wy[u] += w[i + u] * yi;
        }
    for (; i < hi; i++) {
        double yi = y[i] + a * x[i];
        y[i] = yi;
        yy[0] += yi * yi;
        wy[0] += w[i] * yi;
    }
    out[0] = (yy[0] + yy[1]) + (yy[2] + yy[3]);
    out[1] = (wy[0] + wy[1]) + (wy[2] + wy[3]);
}

/* the same without w */
static void axpy_norm_range(int32_t lo, int32_t hi, double a,
                            const double *restrict x, double *restrict y,
                            double *out)
{
    double yy[4] = {0, 0, 0, 0};
    int32_t i = lo;
    for (; i + 4 <= hi; i += 4)
        for (int u = 0; u < 4; u++) {
            double yi = y[i + u] + a * x[i + u];
            y[i + u] = yi;
            yy[u] += yi * yi;
        }
    for (; i < hi; i++) {
        double yi = y[i] + a * x[i];
        y[i] = yi;
        yy[0] += yi * yi;
    }
    out[0] = (yy[0] + yy[1]) + (yy[2] + yy[3]);
    out[1] = 0.0;
}

static kr_status cpu_axpy_dots(kr_ctx *ctx, int32_t n, double a,
                               const double *x, double *y, const double *w,
                               double *out)
{
    double part[KR_MAX_THREADS][2];
    int used = 1, nt = nthreads(ctx, n);
    KR_RANGES(n, {
        if (w)
            axpy_dots_range(lo, hi, a, x, y, w, part[t]);
        else
            axpy_norm_range(lo, hi, a, x, y, part[t]);
        if (t == 0) used = T;
    });
    double s0 = 0.0, s1 = 0.0;
    for (int t = 0; t < used; t++)
        s0 += part[t][0], s1 += part[t][1];
    out[0] = s0;
    if (w) out[1] = s1;
    return KR_OK;
}

static kr_status cpu_cg_alpha(kr_ctx *ctx, int32_t n, const double *p,
                              const double *q, kr_cg_dev *s)
{
    if (s->h.stop) return KR_OK;
    const double *ps[1] = {p}, *qs[1] = {q};
    double pq;
    KR_TRY(cpu_dots(ctx, n, 1, ps, qs, &pq));
    kr_cg_dev_alpha(s, pq);
    return KR_OK;
}

static kr_status cpu_cg_update(kr_ctx *ctx, int32_t n, const double *p,
                               const double *q, double *x, double *r,
                               const double *d, double *z, kr_cg_dev *s)
{
    if (s->h.stop) return KR_OK;
    double rz_rr[2];
    KR_TRY(cpu_xr_update(ctx, n, s->alpha, p, q, x, r, d, z, rz_rr));
    kr_cg_dev_update(s, rz_rr[0], rz_rr[1]);
    return KR_OK;
}

static kr_status cpu_cg_update_keep(kr_ctx *ctx, int32_t n, const double *p,
                                    const double *q, double *x, double *r,
                                    const double *d, double *z, double *keep,
                                    kr_cg_dev *s)
{
    if (s->h.stop) return KR_OK;
    KR_TRY(cpu_cg_update(ctx, n, p, q, x, r, d, z, s));
    memcpy(keep, p, (size_t)n * sizeof *keep);
    return KR_OK;
}

static kr_status cpu_cg_direction(kr_ctx *ctx, int32_t n, const double *z,
                                  double *p, kr_cg_dev *s)
{
    if (s->h.stop) return KR_OK;
    return cpu_axpby(ctx, n, 1.0, z, s->beta, p);
}

static kr_status cpu_cg_step(kr_ctx *ctx, int32_t n, double *p, const double *q,
                             double *x, double *r, const double *d, double *z,
                             const double *zk, kr_cg_dev *s)
{
    KR_TRY(cpu_cg_alpha(ctx, n, p, q, s));
    KR_TRY(cpu_cg_update(ctx, n, p, q, x, r, d, z, s));
    return cpu_cg_direction(ctx, n, zk, p, s);
}

static kr_status cpu_gm_step(kr_ctx *ctx, int32_t n, const double *v,
                             kr_gm_dev *s)
{
    if (s->h.stop) return KR_OK;
    const double *vs[1] = {v};
    double vv;
    KR_TRY(cpu_dots(ctx, n, 1, vs, vs, &vv));
    kr_gm_dev_step(s, vv);
    return KR_OK;
}

static kr_status cpu_gemv_nt_dev(kr_ctx *ctx, int32_t n, int k, const double *V,
                                 int64_t ld, const double *h, double alpha,
                                 double *w, double *h2)
{
    KR_TRY(cpu_gemv_n(ctx, n, k, V, ld, h, alpha, w));
    return cpu_gemv_t(ctx, n, k, V, ld, w, h2);
}

static kr_status cpu_gm_update_step(kr_ctx *ctx, int32_t n, int k,
                                    const double *V, int64_t ld,
                                    const double *h, double *w, kr_gm_dev *s)
{
    if (s->h.stop) return KR_OK;
    KR_TRY(cpu_gemv_n(ctx, n, k, V, ld, h, -1.0, w));
    return cpu_gm_step(ctx, n, w, s);
}

static kr_status cpu_gm_scale(kr_ctx *ctx, int32_t n, double *v,
                              const kr_gm_dev *s)
{
    if (s->h.stop) return KR_OK;
    return cpu_axpby(ctx, n, s->inv, v, 0.0, v);
}

static kr_status cpu_bcgs_alpha(kr_ctx *ctx, int32_t n, const double *rh,
                                const double *v, kr_bcgs_dev *s)
{
    if (s->h.stop) return KR_OK;
    const double *xs[1] = {rh}, *ys[1] = {v};
    double rv;
    KR_TRY(cpu_dots(ctx, n, 1, xs, ys, &rv));
    kr_bcgs_dev_alpha(s, rv);
    return KR_OK;
}

static kr_status cpu_bcgs_s(kr_ctx *ctx, int32_t n, const double *v, double *r,
                            kr_bcgs_dev *s)
{
    if (s->h.stop) return KR_OK;
    double ss;
    KR_TRY(cpu_axpy_dots(ctx, n, -s->alpha, v, r, NULL, &ss));
    kr_bcgs_dev_s(s, ss);
    return KR_OK;
}

/* t.r and t.t in one pass: the omega step of BiCGSTAB and IDR(s) */
static kr_status cpu_omega_dots(kr_ctx *ctx, int32_t n, const double *t,
                                const double *r, double tr_tt[2])
{
    const double *xs[2] = {t, t}, *ys[2] = {r, t};
    return cpu_dots(ctx, n, 2, xs, ys, tr_tt);
}

static kr_status cpu_bcgs_omega(kr_ctx *ctx, int32_t n, const double *t,
                                const double *r, kr_bcgs_dev *s)
{
    if (s->h.stop) return KR_OK;
    double ts_tt[2];
    KR_TRY(cpu_omega_dots(ctx, n, t, r, ts_tt));
    kr_bcgs_dev_omega(s, ts_tt[0], ts_tt[1]);
    return KR_OK;
}

static kr_status cpu_bcgs_update(kr_ctx *ctx, int32_t n, const double *ph,
                                 const double *sh, const double *t,
                                 const double *rh, double *x, double *r,
                                 kr_bcgs_dev *s)
{
    if (s->h.stop == KR_DEV_STOP_S_PENDING) {
        KR_TRY(cpu_axpby(ctx, n, s->alpha, ph, 1.0, x));
        s->h.stop = KR_DEV_STOP_CHECK;
        return KR_OK;
    }
    if (s->h.stop) return KR_OK;
    double rr_rho[2];
    KR_TRY(cpu_axpbypcz(ctx, n, s->alpha, ph, s->omega, sh, 1.0, x));
    KR_TRY(cpu_axpy_dots(ctx, n, -s->omega, t, r, rh, rr_rho));
    kr_bcgs_dev_update(s, rr_rho[0], rr_rho[1]);
    return KR_OK;
}

static kr_status cpu_bcgs_direction(kr_ctx *ctx, int32_t n, const double *r,
                                    const double *v, double *p, kr_bcgs_dev *s)
{
    if (s->h.stop) return KR_OK;
    return cpu_axpbypcz(ctx, n, 1.0, r, -s->beta * s->omega, v, s->beta, p);
}

/* ---------------------------------------------------------------------
 * IDR(s) with its scalars in backend memory: each op is the host path's
 * sequence of kernels (solver/idr.c), so the iterates are the same bit
 * for bit. Ends at "end of IDR(s)".
 * --------------------------------------------------------------------- */

static double *idr_col(const double *B, int32_t n, int j)
{
    return (double *)B + (size_t)j * (size_t)n;
}

static kr_status cpu_idr_v(kr_ctx *ctx, int32_t n, int k, const double *r,
                           const double *G, double *v, kr_idr_dev *st)
{
    if (st->h.stop) return KR_OK;
    KR_TRY(cpu_copy(ctx, v, r, (size_t)n * sizeof(double)));
    return cpu_gemv_n(ctx, n, st->s - k, idr_col(G, n, k), n, kr_idr_dev_c(st),
                      -1.0, v);
}

static kr_status cpu_idr_u(kr_ctx *ctx, int32_t n, int k, const double *vh,
                           double *U, kr_idr_dev *st)
{
    if (st->h.stop) return KR_OK;
    const double *c = kr_idr_dev_c(st);
    int rest = st->s - k;
    double *uk = idr_col(U, n, k);
    KR_TRY(cpu_axpby(ctx, n, st->om, vh, c[0], uk));
    if (rest < 2) return KR_OK;
    return cpu_gemv_n(ctx, n, rest - 1, idr_col(U, n, k + 1), n, c + 1, 1.0,
                      uk);
}

static kr_status cpu_idr_vu(kr_ctx *ctx, int32_t n, int k, const double *r,
                            const double *G, double *U, const double *d,
                            double *v, double *vh, kr_idr_dev *st)
{
    if (st->h.stop) return KR_OK;
    KR_TRY(cpu_idr_v(ctx, n, k, r, G, v, st));
    if (d)
        KR_TRY(cpu_pointwise_mult(ctx, n, d, v, vh));
    else
        KR_TRY(cpu_copy(ctx, vh, v, (size_t)n * sizeof(double)));
    return cpu_idr_u(ctx, n, k, vh, U, st);
}

static kr_status cpu_idr_h(kr_ctx *ctx, int32_t n, int k, const double *P,
                           const double *G, kr_idr_dev *st)
{
    if (st->h.stop || k == 0) return KR_OK;
    KR_TRY(cpu_gemv_t(ctx, n, k, P, n, idr_col(G, n, k), kr_idr_dev_hv(st)));
    kr_idr_dev_h(st, k);
    return KR_OK;
}

static kr_status cpu_idr_orth(kr_ctx *ctx, int32_t n, int k, const double *P,
                              double *G, double *U, kr_idr_dev *st)
{
    if (st->h.stop) return KR_OK;
    int s = st->s;
    double *gk = idr_col(G, n, k), *h = kr_idr_dev_hv(st);
    if (k > 0) {
        KR_TRY(cpu_gemv_n(ctx, n, k, G, n, h, -1.0, gk));
        KR_TRY(cpu_gemv_n(ctx, n, k, U, n, h, -1.0, idr_col(U, n, k)));
    }
    KR_TRY(cpu_gemv_t(ctx, n, s - k, idr_col(P, n, k), n, gk,
                      kr_idr_dev_M(st) + k + (size_t)k * (size_t)s));
    kr_idr_dev_orth(st, k);
    return KR_OK;
}

static kr_status cpu_idr_omega(kr_ctx *ctx, int32_t n, const double *v,
                               const double *r, kr_idr_dev *st)
{
    if (st->h.stop) return KR_OK;
    double tr_tt[2];
    KR_TRY(cpu_omega_dots(ctx, n, v, r, tr_tt));
    kr_idr_dev_omega(st, tr_tt[0], tr_tt[1]);
    return KR_OK;
}

static kr_status cpu_idr_update(kr_ctx *ctx, int32_t n, int k, const double *p,
                                const double *q, double *x, double *r,
                                const double *d, double *z, const double *P,
                                kr_idr_dev *st)
{
    if (st->h.stop) return KR_OK;
    int s = st->s;
    double a = k < s ? st->beta : st->om, rr[2];
    KR_TRY(cpu_xr_update(ctx, n, a, p, q, x, r, NULL, NULL, rr));
    if (z && d) KR_TRY(cpu_pointwise_mult(ctx, n, d, r, z));
    if (z && !d) KR_TRY(cpu_copy(ctx, z, r, (size_t)n * sizeof(double)));
    if (k == s) KR_TRY(cpu_gemv_t(ctx, n, s, P, n, r, kr_idr_dev_f(st)));
    kr_idr_dev_update(st, k, rr[1]);
    return KR_OK;
}

static kr_status cpu_idr_update_vu(kr_ctx *ctx, int32_t n, int k,
                                   const double *p, const double *q, double *x,
                                   double *r, const double *G, double *U,
                                   const double *d, double *v, double *vh,
                                   kr_idr_dev *st)
{
    KR_TRY(cpu_idr_update(ctx, n, k, p, q, x, r, NULL, NULL, NULL, st));
    return cpu_idr_vu(ctx, n, k + 1, r, G, U, d, v, vh, st);
}

/* ------------------------------------------------ end of IDR(s) ---- */

static kr_status cpu_replay(kr_ctx *ctx, void **slot,
                            kr_status (*fn)(void *arg), void *arg)
{
    (void)ctx, (void)slot;
    return fn(arg);
}

static void cpu_replay_free(kr_ctx *ctx, void *slot) { (void)ctx, (void)slot; }

static kr_status cpu_fill_random(kr_ctx *ctx, int32_t n, uint64_t seed,
                                 double *x)
{
    int nt = nthreads(ctx, n);
    KR_RANGES(n, {
        for (int32_t i = lo; i < hi; i++)
            x[i] = kr_hash_uniform(seed, i);
    });
    return KR_OK;
}

static kr_status cpu_time_runs(kr_ctx *ctx, kr_status (*fn)(void *arg),
                               void *arg, int reps, double *times)
{
    (void)ctx;
    for (int i = 0; i < reps; i++) {
        double t0 = kr_wtime();
        KR_TRY(fn(arg));
        times[i] = kr_wtime() - t0;
    }
    return KR_OK;
}

/* ==== several right-hand sides (issue 19): the multi-column ops ====
 * Each op's column j is what the single-vector op gives on column j: the
 * same thread count for the same n, each thread's range of rows summed
 * into four interleaved partial sums (row lo + 4q + u into sum u, the
 * rows after the last full group of four into sum 0), the sums combined
 * as ((s0 + s1) + (s2 + s3)), then the threads' sums in thread order. */

/* The columns set in mask (below k), in order. */
static int mask_cols(int k, uint64_t mask, int *cols)
{
    int nc = 0;
    for (int j = 0; j < k; j++)
        if (mask >> j & 1) cols[nc++] = j;
    return nc;
}

/* ((s0 + s1) + (s2 + s3)) of four partial sums `stride` apart */
static double sum4(const double *s, size_t stride)
{
    return (s[0] + s[stride]) + (s[2 * stride] + s[3 * stride]);
}

/* The loops below take cols == NULL for "every column" (j = c), which
 * they are compiled for separately (always inlined into a call with a
 * constant NULL) so that the common case runs without the indirection
 * and vectorises across the contiguous columns of a row. */
#define KR_INLINE static inline __attribute__((always_inline))
#define COL(cols, c) ((cols) ? (cols)[c] : (c))

/* The partial sum that row i of [lo, hi) adds into (dot_range's order). */
static int lane_of(int32_t i, int32_t lo, int32_t full)
{
    return i < full ? (int)((i - lo) & 3) : 0;
}

/* Rows per tile of the multi-column loops over several blocks: a tile of
 * one block (KR_TILE_ENTRIES entries, 16 KiB) stays in L1 while each
 * block's tile streams past it. Row by row over all blocks at once, each
 * row touched one line in each of up to 64 blocks (GMRES's basis, k times
 * a single solve's and beyond the L3 at k = 8), a stream per block that
 * the prefetchers could not follow. */
#define KR_TILE_ENTRIES 2048

/* acc[((p*4 + u)*nc + c] += X[p](i, j) Y[p](i, j) over rows [lo, hi),
 * for the columns j = COL(cols, c), row i into lane_of(i, base, full);
 * X[p] is one vector shared by every column when xshared. Product by
 * product: each accumulator still adds its rows in order. */
KR_INLINE void mdot4_impl(int32_t lo, int32_t hi, int32_t base, int32_t full,
                          int k, const int *cols, int nc, int m,
                          const double *const *X, int xshared,
                          const double *const *Y, double *acc)
{
    for (int p = 0; p < m; p++)
        for (int32_t i = lo; i < hi; i++) {
            int u = lane_of(i, base, full);
            size_t row = (size_t)i * (size_t)k;
            const double *y = Y[p] + row, *x = X[p] + row;
            double *a = acc + ((size_t)p * 4 + (size_t)u) * (size_t)nc;
            if (xshared) {
                double xv = X[p][i];
                for (int c = 0; c < nc; c++)
                    a[c] += xv * y[COL(cols, c)];
            } else {
                for (int c = 0; c < nc; c++)
                    a[c] += x[COL(cols, c)] * y[COL(cols, c)];
            }
        }
}

/* mdot4_impl over [lo, hi) (lanes from lo, as dot_range's), tile by tile */
static void mdot4(int32_t lo, int32_t hi, int k, const int *cols, int nc, int m,
                  const double *const *X, int xshared, const double *const *Y,
                  double *acc)
{
    int32_t full = lo + (hi - lo) / 4 * 4, tile = KR_TILE_ENTRIES / k;
    for (int32_t t0 = lo; t0 < hi; t0 += tile) {
        int32_t t1 = hi - t0 < tile ? hi : t0 + tile;
        if (nc == k)
            mdot4_impl(t0, t1, lo, full, k, NULL, nc, m, X, xshared, Y, acc);
        else
            mdot4_impl(t0, t1, lo, full, k, cols, nc, m, X, xshared, Y, acc);
    }
}

/* out[p*nc + c] (+)= the four sums of (p, c) in acc (mdot4's layout) */
static void fold4(const double *acc, int m, int nc, double *out, int add)
{
    for (int p = 0; p < m; p++)
        for (int c = 0; c < nc; c++) {
            double v =
                sum4(acc + (size_t)p * 4 * (size_t)nc + (size_t)c, (size_t)nc);
            double *o = out + (size_t)p * (size_t)nc + (size_t)c;
            *o = add ? *o + v : v;
        }
}

/* Per-thread sums in thread order into out[p*k + cols[c]]. */
static void thread_sums(const double *part, int used, size_t len, int m, int nc,
                        const int *cols, int k, double *out)
{
    for (int p = 0; p < m; p++)
        for (int c = 0; c < nc; c++) {
            double s = 0.0;
            for (int t = 0; t < used; t++)
                s += part[(size_t)t * len + (size_t)p * (size_t)nc + c];
            out[(size_t)p * (size_t)k + (size_t)cols[c]] = s;
        }
}

static kr_status part_alloc(kr_ctx *ctx, size_t count, double **part)
{
    *part = calloc(count + 1, sizeof **part);
    return *part ? KR_OK
                 : kr_fail(ctx, KR_ERR_NOMEM, "out of host memory (%zu sums)",
                           count);
}

/* The columns' sums of m products over rows [0, n), nt threads: each
 * thread's range in chunks of `chunk` rows, each chunk's four partial
 * sums combined and added to the thread's sum (dots_range's order), or
 * with chunk 0 the whole range at once (gemv_t's dot_range); then the
 * threads' sums in order. */
static kr_status mreduce(kr_ctx *ctx, int32_t n, int k, int m,
                         const double *const *X, int xshared,
                         const double *const *Y, const int *cols, int nc,
                         int nt, int32_t chunk, double *out)
{
    size_t len = (size_t)m * (size_t)nc;
    double *buf;
    int used = 1;
    KR_TRY(part_alloc(ctx, (size_t)nt * len * 5, &buf));
    double *part = buf + (size_t)nt * len * 4;
    KR_RANGES(n, {
        double *acc = buf + (size_t)t * len * 4;
        int32_t step = chunk ? chunk : (hi > lo ? hi - lo : 1);
        for (int32_t c = lo; c < hi; c += step) {
            int32_t e = hi - c < step ? hi : c + step;
            memset(acc, 0, len * 4 * sizeof *acc);
            mdot4(c, e, k, cols, nc, m, X, xshared, Y, acc);
            fold4(acc, m, nc, part + (size_t)t * len, 1);
        }
        if (t == 0) used = T;
    });
    thread_sums(part, used, len, m, nc, cols, k, out);
    free(buf);
    return KR_OK;
}

static kr_status cpu_mdots(kr_ctx *ctx, int32_t n, int k, int m,
                           const double *const *X, const double *const *Y,
                           uint64_t mask, double *out)
{
    if (m < 1 || m > KR_MAX_DOTS)
        return kr_fail(ctx, KR_ERR_ARG, "mdots: m = %d outside 1..%d", m,
                       KR_MAX_DOTS);
    int cols[KR_MULTI_MAX], nc = mask_cols(k, mask, cols);
    return mreduce(ctx, n, k, m, X, 0, Y, cols, nc, nthreads(ctx, n), 2048,
                   out);
}

/* gemv_t for up to 64 blocks (gemv_t's pieces) */
static kr_status mgemv_t_piece(kr_ctx *ctx, int32_t n, int k, int nb,
                               const double *V, int64_t ldv, int shared,
                               const double *W, const int *cols, int nc,
                               double *h)
{
    const double *Vs[64], *Ws[64];
    for (int l = 0; l < nb; l++) {
        Vs[l] = V + (size_t)l * (size_t)ldv;
        Ws[l] = W;
    }
    return mreduce(ctx, n, k, nb, Vs, shared, Ws, cols, nc,
                   nthreads(ctx, (int64_t)n * nb), 0, h);
}

static kr_status cpu_mgemv_t(kr_ctx *ctx, int32_t n, int k, int nb,
                             const double *V, int64_t ldv, int shared,
                             const double *W, uint64_t mask, double *h)
{
    int cols[KR_MULTI_MAX], nc = mask_cols(k, mask, cols);
    for (int l0 = 0; l0 < nb; l0 += 64) { /* gemv_t's pieces */
        int piece = nb - l0 < 64 ? nb - l0 : 64;
        KR_TRY(mgemv_t_piece(ctx, n, k, piece, V + (size_t)l0 * (size_t)ldv,
                             ldv, shared, W, cols, nc,
                             h + (size_t)l0 * (size_t)k));
    }
    return KR_OK;
}

/* W(i, j) += alpha * sum over l of V_l(i, j) h(l, j) for rows [lo, hi)
 * (at most KR_TILE_ENTRIES / k) and the columns j = COL(cols, c): each
 * row's sum in l order from 0.0, as gemv_n_range's, kept in s while
 * block by block streams past. */
KR_INLINE void mgemv_n_impl(int32_t lo, int32_t hi, int k, const int *cols,
                            int nc, int nb, const double *V, int64_t ldv,
                            const double *h, double alpha, double *W, double *s)
{
    size_t len = (size_t)(hi - lo) * (size_t)nc;
    for (size_t e = 0; e < len; e++)
        s[e] = 0.0;
    for (int l = 0; l < nb; l++) {
        const double *v = V + (size_t)l * (size_t)ldv, *hl = h + (size_t)l * k;
        for (int32_t i = lo; i < hi; i++) {
            double *si = s + (size_t)(i - lo) * (size_t)nc;
            const double *vi = v + (size_t)i * (size_t)k;
            for (int c = 0; c < nc; c++)
                si[c] += vi[COL(cols, c)] * hl[COL(cols, c)];
        }
    }
    for (int32_t i = lo; i < hi; i++)
        for (int c = 0; c < nc; c++)
            W[(size_t)i * (size_t)k + (size_t)COL(cols, c)] +=
                alpha * s[(size_t)(i - lo) * (size_t)nc + (size_t)c];
}

static void mgemv_n_tile(int32_t lo, int32_t hi, int k, const int *cols, int nc,
                         int nb, const double *V, int64_t ldv, const double *h,
                         double alpha, double *W, double *s)
{
    if (nc == k)
        mgemv_n_impl(lo, hi, k, NULL, nc, nb, V, ldv, h, alpha, W, s);
    else
        mgemv_n_impl(lo, hi, k, cols, nc, nb, V, ldv, h, alpha, W, s);
}

static kr_status cpu_mgemv_n(kr_ctx *ctx, int32_t n, int k, int nb,
                             const double *V, int64_t ldv, const double *h,
                             double alpha, double *W, uint64_t mask)
{
    int cols[KR_MULTI_MAX], nc = mask_cols(k, mask, cols);
    int nt = nthreads(ctx, (int64_t)n * nb * nc);
    int32_t tile = KR_TILE_ENTRIES / k;
    KR_RANGES(n, {
        double s[KR_TILE_ENTRIES];
        for (int32_t t0 = lo; t0 < hi; t0 += tile) {
            int32_t t1 = hi - t0 < tile ? hi : t0 + tile;
            mgemv_n_tile(t0, t1, k, cols, nc, nb, V, ldv, h, alpha, W, s);
        }
    });
    return KR_OK;
}

KR_INLINE void maxpby_rows(int32_t lo, int32_t hi, int k, const int *cols,
                           int nc, const double *restrict a,
                           const double *restrict X, const double *restrict b,
                           double *restrict Y)
{
    for (int32_t i = lo; i < hi; i++)
        for (int c = 0; c < nc; c++) {
            int j = COL(cols, c);
            size_t e = (size_t)i * (size_t)k + (size_t)j;
            Y[e] = b[j] == 0.0 ? a[j] * X[e] : a[j] * X[e] + b[j] * Y[e];
        }
}

static void maxpby_range(int32_t lo, int32_t hi, int k, const int *cols, int nc,
                         const double *a, const double *X, const double *b,
                         double *Y)
{
    if (nc == k && X != Y)
        maxpby_rows(lo, hi, k, NULL, nc, a, X, b, Y);
    else /* X == Y (scaling in place): no restrict */
        for (int32_t i = lo; i < hi; i++)
            for (int c = 0; c < nc; c++) {
                int j = cols[c];
                size_t e = (size_t)i * (size_t)k + (size_t)j;
                Y[e] = b[j] == 0.0 ? a[j] * X[e] : a[j] * X[e] + b[j] * Y[e];
            }
}

static kr_status cpu_maxpby(kr_ctx *ctx, int32_t n, int k, const double *a,
                            const double *X, const double *b, double *Y,
                            uint64_t mask)
{
    int cols[KR_MULTI_MAX], nc = mask_cols(k, mask, cols);
    int nt = nthreads(ctx, (int64_t)n * nc);
    KR_RANGES(n, maxpby_range(lo, hi, k, cols, nc, a, X, b, Y));
    return KR_OK;
}

static kr_status cpu_maxpbypcz(kr_ctx *ctx, int32_t n, int k, const double *a,
                               const double *X, const double *b,
                               const double *Y, const double *c, double *Z,
                               uint64_t mask)
{
    int cols[KR_MULTI_MAX], nc = mask_cols(k, mask, cols);
    int nt = nthreads(ctx, (int64_t)n * nc);
    KR_RANGES(n, {
        for (int32_t i = lo; i < hi; i++)
            for (int q = 0; q < nc; q++) {
                int j = cols[q];
                size_t e = (size_t)i * (size_t)k + (size_t)j;
                Z[e] = c[j] == 0.0 ? a[j] * X[e] + b[j] * Y[e]
                                   : a[j] * X[e] + b[j] * Y[e] + c[j] * Z[e];
            }
    });
    return KR_OK;
}

/* xr_update_range over the columns COL(cols, c); acc[u*nc + c] r.z,
 * acc[(4 + u)*nc + c] r.r (with d NULL, r.z is r.r) */
KR_INLINE void mxr_impl(int32_t lo, int32_t hi, int k, const int *cols, int nc,
                        const double *restrict a, const double *restrict P,
                        const double *restrict Q, double *restrict X,
                        double *restrict R, const double *restrict d,
                        double *restrict Z, double *restrict acc)
{
    int32_t full = lo + (hi - lo) / 4 * 4;
    for (int32_t i = lo; i < hi; i++) {
        int u = lane_of(i, lo, full);
        size_t row = (size_t)i * (size_t)k;
        double *rz = acc + (size_t)u * nc, *rr = acc + (size_t)(4 + u) * nc;
        double di = d ? d[i] : 1.0;
        for (int c = 0; c < nc; c++) {
            int j = COL(cols, c);
            size_t e = row + (size_t)j;
            X[e] += a[j] * P[e];
            double ri = R[e] - a[j] * Q[e], zi = ri;
            R[e] = ri;
            if (d) {
                zi = di * ri;
                Z[e] = zi;
            }
            rz[c] += ri * zi;
            rr[c] += ri * ri;
        }
    }
}

static void mxr_range(int32_t lo, int32_t hi, int k, const int *cols, int nc,
                      const double *a, const double *P, const double *Q,
                      double *X, double *R, const double *d, double *Z,
                      double *acc)
{
    if (nc == k && d)
        mxr_impl(lo, hi, k, NULL, nc, a, P, Q, X, R, d, Z, acc);
    else if (nc == k)
        mxr_impl(lo, hi, k, NULL, nc, a, P, Q, X, R, NULL, NULL, acc);
    else
        mxr_impl(lo, hi, k, cols, nc, a, P, Q, X, R, d, Z, acc);
}

/* axpy_dots_range over the listed columns; acc[u*nc + c] y.y,
 * acc[(4 + u)*nc + c] w.y */
static void maxpy_dots_range(int32_t lo, int32_t hi, int k, const int *cols,
                             int nc, const double *a, const double *X,
                             double *Y, const double *W, double *acc)
{
    int32_t full = lo + (hi - lo) / 4 * 4;
    for (int32_t i = lo; i < hi; i++) {
        int u = lane_of(i, lo, full);
        double *yy = acc + (size_t)u * nc, *wy = acc + (size_t)(4 + u) * nc;
        for (int c = 0; c < nc; c++) {
            size_t e = (size_t)i * (size_t)k + (size_t)cols[c];
            double yi = Y[e] + a[cols[c]] * X[e];
            Y[e] = yi;
            yy[c] += yi * yi;
            if (W) wy[c] += W[e] * yi;
        }
    }
}

/* The two sums per column of mxr_range / maxpy_dots_range, thread by
 * thread: out[cols[c]] and out[k + cols[c]]. */
static void two_sums(const double *part, int used, int nc, const int *cols,
                     int k, double *out)
{
    for (int c = 0; c < nc; c++) {
        double s0 = 0.0, s1 = 0.0;
        for (int t = 0; t < used; t++) {
            s0 += part[((size_t)t * (size_t)nc + (size_t)c) * 2];
            s1 += part[((size_t)t * (size_t)nc + (size_t)c) * 2 + 1];
        }
        out[cols[c]] = s0;
        out[k + cols[c]] = s1;
    }
}

/* the per-thread reduction of acc (two groups of four sums) into part */
static void fold_acc(const double *acc, int nc, double *part)
{
    for (int c = 0; c < nc; c++) {
        part[2 * c] = sum4(acc + c, (size_t)nc);
        part[2 * c + 1] = sum4(acc + 4 * (size_t)nc + c, (size_t)nc);
    }
}

/* The arrays of one mxr_update (axpy 0) or maxpy_dots (axpy 1: x in P,
 * y in R, w in W) */
typedef struct upd_args {
    int axpy;
    const double *a, *P, *Q, *d, *W;
    double *X, *R, *Z;
} upd_args;

/* The update over the columns, with its two sums per column and thread
 * (out[cols[c]], out[k + cols[c]]), the threads' sums in order. */
static kr_status update_sums(kr_ctx *ctx, int32_t n, int k, uint64_t mask,
                             const upd_args *u, double *out)
{
    int cols[KR_MULTI_MAX], nc = mask_cols(k, mask, cols);
    int used = 1, nt = nthreads(ctx, n);
    double *part;
    KR_TRY(part_alloc(ctx, (size_t)nt * (size_t)nc * 2, &part));
    KR_RANGES(n, {
        double acc[KR_MULTI_MAX * 8] = {0};
        if (u->axpy)
            maxpy_dots_range(lo, hi, k, cols, nc, u->a, u->P, u->R, u->W, acc);
        else
            mxr_range(lo, hi, k, cols, nc, u->a, u->P, u->Q, u->X, u->R, u->d,
                      u->Z, acc);
        fold_acc(acc, nc, part + (size_t)t * (size_t)nc * 2);
        if (t == 0) used = T;
    });
    two_sums(part, used, nc, cols, k, out);
    free(part);
    return KR_OK;
}

static kr_status cpu_mxr_update(kr_ctx *ctx, int32_t n, int k, const double *a,
                                const double *P, const double *Q, double *X,
                                double *R, const double *d, double *Z,
                                uint64_t mask, double *out)
{
    upd_args u = {.a = a, .P = P, .Q = Q, .X = X, .R = R, .d = d, .Z = Z};
    return update_sums(ctx, n, k, mask, &u, out);
}

static kr_status cpu_maxpy_dots(kr_ctx *ctx, int32_t n, int k, const double *a,
                                const double *X, double *Y, const double *W,
                                uint64_t mask, double *out)
{
    upd_args u = {.axpy = 1, .a = a, .P = X, .R = Y, .W = W};
    return update_sums(ctx, n, k, mask, &u, out);
}

static kr_status cpu_mpointwise(kr_ctx *ctx, int32_t n, int k, const double *d,
                                const double *X, double *Y)
{
    int nt = nthreads(ctx, (int64_t)n * k);
    KR_RANGES(n, {
        for (int32_t i = lo; i < hi; i++)
            for (int j = 0; j < k; j++)
                Y[(size_t)i * (size_t)k + (size_t)j] =
                    d[i] * X[(size_t)i * (size_t)k + (size_t)j];
    });
    return KR_OK;
}

static kr_status cpu_mcolumn(kr_ctx *ctx, int32_t n, int k, int j, double *X,
                             double *x, int to_block)
{
    (void)ctx;
    for (int32_t i = 0; i < n; i++) {
        double *e = X + (size_t)i * (size_t)k + (size_t)j;
        if (to_block)
            *e = x[i];
        else
            x[i] = *e;
    }
    return KR_OK;
}
/* The columns of mask whose device state still runs. */
static uint64_t live_cols(int k, const kr_cg_dev *S, uint64_t mask)
{
    uint64_t live = 0;
    for (int j = 0; j < k; j++)
        if ((mask >> j & 1) && !S[j].h.stop) live |= (uint64_t)1 << j;
    return live;
}

/* The three stages of mcg_step with the ops above, so that each column
 * repeats the host-scalar loop's (and its single solve's) doubles. */
static kr_status cpu_mcg_step(kr_ctx *ctx, int32_t n, int k, double *P,
                              const double *Q, double *X, double *R,
                              const double *d, double *Z, const double *Zk,
                              kr_cg_dev *S, uint64_t mask)
{
    double v[2 * KR_MULTI_MAX], a[KR_MULTI_MAX], one[KR_MULTI_MAX];
    const double *ps[1] = {P}, *qs[1] = {Q};
    uint64_t live = live_cols(k, S, mask);
    if (!live) return KR_OK;
    KR_TRY(cpu_mdots(ctx, n, k, 1, ps, qs, live, v));
    for (int j = 0; j < k; j++)
        if (live >> j & 1) kr_cg_dev_alpha(&S[j], v[j]);
    live = live_cols(k, S, mask);
    for (int j = 0; j < k; j++)
        a[j] = S[j].alpha;
    if (!live) return KR_OK;
    KR_TRY(cpu_mxr_update(ctx, n, k, a, P, Q, X, R, d, Z, live, v));
    for (int j = 0; j < k; j++) {
        if (live >> j & 1) kr_cg_dev_update(&S[j], v[j], v[k + j]);
        one[j] = 1.0;
        a[j] = S[j].beta;
    }
    live = live_cols(k, S, mask);
    return live ? cpu_maxpby(ctx, n, k, one, Zk, a, P, live) : KR_OK;
}
/* mcg_step split around the caller's preconditioner, with the host
 * loop's ops (solver/cg_multi.c): x and r as two maxpby, r.r and then r.z
 * each an mdots of its own, which sums each product in the order of the
 * single solve's dots. */
static kr_status cpu_mcg_step_a(kr_ctx *ctx, int32_t n, int k, const double *P,
                                const double *Q, double *X, double *R,
                                kr_cg_dev *S, uint64_t mask)
{
    double v[KR_MULTI_MAX], a[KR_MULTI_MAX], na[KR_MULTI_MAX],
        one[KR_MULTI_MAX];
    const double *ps[1] = {P}, *qs[1] = {Q}, *rs[1] = {R};
    uint64_t live = live_cols(k, S, mask);
    if (!live) return KR_OK;
    KR_TRY(cpu_mdots(ctx, n, k, 1, ps, qs, live, v));
    for (int j = 0; j < k; j++) {
        if (live >> j & 1) kr_cg_dev_alpha(&S[j], v[j]);
        a[j] = S[j].alpha;
        na[j] = -S[j].alpha;
        one[j] = 1.0;
    }
    live = live_cols(k, S, mask);
    if (!live) return KR_OK;
    KR_TRY(cpu_maxpby(ctx, n, k, a, P, one, X, live));
    KR_TRY(cpu_maxpby(ctx, n, k, na, Q, one, R, live));
    KR_TRY(cpu_mdots(ctx, n, k, 1, rs, rs, live, v));
    for (int j = 0; j < k; j++)
        if (live >> j & 1) S[j].rr = v[j];
    return KR_OK;
}

static kr_status cpu_mcg_step_b(kr_ctx *ctx, int32_t n, int k, double *P,
                                const double *R, const double *Z, kr_cg_dev *S,
                                uint64_t mask)
{
    double v[KR_MULTI_MAX], b[KR_MULTI_MAX], one[KR_MULTI_MAX];
    const double *rs[1] = {R}, *zs[1] = {Z};
    uint64_t live = live_cols(k, S, mask);
    if (!live) return KR_OK;
    KR_TRY(cpu_mdots(ctx, n, k, 1, rs, zs, live, v));
    for (int j = 0; j < k; j++) {
        if (live >> j & 1) kr_cg_dev_update(&S[j], v[j], S[j].rr);
        one[j] = 1.0;
        b[j] = S[j].beta;
    }
    live = live_cols(k, S, mask);
    return live ? cpu_maxpby(ctx, n, k, one, Z, b, P, live) : KR_OK;
}
/* ==== end of the several-right-hand-sides ops ==== */

static const kr_backend_ops cpu_ops = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_copy,
    .download = cpu_copy,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .axpby = cpu_axpby,
    .axpbypcz = cpu_axpbypcz,
    .axpy2 = cpu_axpy2,
    .pointwise_mult = cpu_pointwise_mult,
    .dots = cpu_dots,
    .gemv_t = cpu_gemv_t,
    .gemv_n = cpu_gemv_n,
    .xr_update = cpu_xr_update,
    .axpy_dots = cpu_axpy_dots,
    .cg_alpha = cpu_cg_alpha,
    .cg_update = cpu_cg_update,
    .cg_direction = cpu_cg_direction,
    .cg_update_keep = cpu_cg_update_keep,
    .cg_step = cpu_cg_step,
    .gemv_t_dev = cpu_gemv_t,
    .gemv_n_dev = cpu_gemv_n,
    .gm_step = cpu_gm_step,
    .gemv_nt_dev = cpu_gemv_nt_dev,
    .gm_update_step = cpu_gm_update_step,
    .gm_scale = cpu_gm_scale,
    .bcgs_alpha = cpu_bcgs_alpha,
    .bcgs_s = cpu_bcgs_s,
    .bcgs_omega = cpu_bcgs_omega,
    .bcgs_update = cpu_bcgs_update,
    .bcgs_direction = cpu_bcgs_direction,
    /* IDR(s) */
    .idr_v = cpu_idr_v,
    .idr_u = cpu_idr_u,
    .idr_vu = cpu_idr_vu,
    .idr_h = cpu_idr_h,
    .idr_orth = cpu_idr_orth,
    .idr_omega = cpu_idr_omega,
    .idr_update = cpu_idr_update,
    .idr_update_vu = cpu_idr_update_vu,
    .replay = cpu_replay,
    .replay_free = cpu_replay_free,
    .fill_random = cpu_fill_random,
    .time_runs = cpu_time_runs,
    /* several right-hand sides (issue 19) */
    .mdots = cpu_mdots,
    .maxpby = cpu_maxpby,
    .maxpbypcz = cpu_maxpbypcz,
    .mxr_update = cpu_mxr_update,
    .maxpy_dots = cpu_maxpy_dots,
    .mgemv_t = cpu_mgemv_t,
    .mgemv_n = cpu_mgemv_n,
    .mpointwise = cpu_mpointwise,
    .mcolumn = cpu_mcolumn,
    .mcg_step = cpu_mcg_step,
    .mcg_step_a = cpu_mcg_step_a,
    .mcg_step_b = cpu_mcg_step_b,
};

const kr_backend_ops *kr_cpu_backend(void) { return &cpu_ops; }
